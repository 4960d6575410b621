//! Per-test evidence from mocha (its `--reporter json` report, which names each test's file)
//! through the whole flow: the RED step pins the test by its full title and its file, a GREEN
//! step that exits 0 without that test passing from that file is refused naming it (an exit
//! before the tests run, a skipped test, the title reused in another file, mocha's
//! configuration, `.mocharc.*` or `package.json`'s `mocha` key, rewritten to load a stub), and the honest twin is proven by id by the final
//! check and by `attest` in a fresh clone. npm is required: without it the tests fail, they
//! are not skipped.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use crate::evidence_go_jest::{
    Cheat, green_refused, project, proven_by_id, refused_at_the_end_and_by_attest,
    runner_files_refusal,
};
use crate::oracle::{red, squash};
use crate::support::*;

const CALC: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n";
const CALC_MUL: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n";
const TEST_ADD: &str = "const assert = require('assert');\nconst calc = require('../calc');\n\n\
describe('calc', () => {\n  it('adds', () => {\n    assert.strictEqual(calc.add(2, 3), 5);\n  });\n});\n";
const TEST_MUL: &str = "const assert = require('assert');\nconst calc = require('../calc');\n\n\
describe('calc', () => {\n  it('muls', () => {\n    assert.strictEqual(calc.mul(2, 3), 6);\n  });\n});\n";
/// The pinned test's title in another file, with no check in it.
const TEST_OTHER: &str = "describe('calc', () => {\n  it('muls', () => {});\n});\n";
const PACKAGE_JSON: &str = "{\"name\": \"calc\", \"private\": true}\n";
/// A `package.json` whose `mocha` key loads another file than the pinned one.
const PACKAGE_JSON_OTHER: &str = "{\"name\": \"calc\", \"private\": true, \"mocha\": {\"spec\": [\"test/add.js\", \"test/other.js\"]}}\n";
/// The pinned test, as mocha's report names it (its full title).
const PINNED: &str = "calc muls";

/// mocha, pinned, installed with npm into the CI cache; the test fails when it cannot be.
fn mocha() -> PathBuf {
    crate::managers::tool("mocha")
        .expect("the mocha evidence tests need `npm` to install mocha (is it installed?)")
        .join("mocha")
}

/// mocha run as the agent runs it: the program, its default spec (`./test`), no options of
/// ours in the command.
fn mocha_command() -> String {
    mocha().display().to_string()
}

/// A JavaScript calculator on main, its gate mocha, at the RED step of multiply.
fn calc(command: &str, extra: &str) -> TestRepo {
    project(
        &[
            ("package.json", PACKAGE_JSON),
            ("calc.js", CALC),
            ("test/add.js", TEST_ADD),
        ],
        command,
        extra,
    )
}

/// The RED step: `test/mul.js` fails, pinned by its title and its file.
fn mocha_red(repo: &TestRepo, command: &str) {
    repo.write("test/mul.js", TEST_MUL);
    red(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([PINNED])
    );
}

/// Code the test requires that ends mocha before it reports, or that makes the pinned test
/// a skipped one (`it` with no body, `describe.skip`: the module is taken out of require's
/// cache so that it runs again in each test file, after mocha set that file's globals): each
/// is refused naming why and the pinned test.
#[test]
fn a_mocha_run_that_exits_0_or_skips_is_refused() {
    let command = mocha_command();
    let again = "delete require.cache[__filename];\n";
    let cases: Vec<(&str, Cheat, String)> = vec![
        (
            "process.exit(0) in the code",
            vec![("calc.js", format!("{CALC_MUL}process.exit(0);\n"))],
            format!(
                "no per-test evidence: the runner wrote no mocha-json report: the process ended \
                 before it reported, so the pinned test `{PINNED}` was not reported"
            ),
        ),
        (
            "it.skip for every test, in the code",
            vec![(
                "calc.js",
                format!(
                    "{CALC}const real = global.it;\nglobal.it = (title) => real(title);\n{again}"
                ),
            )],
            format!("the pinned test `{PINNED}` skipped, it did not pass"),
        ),
        (
            "describe.skip for every suite, in the code",
            vec![(
                "calc.js",
                format!("{CALC}global.describe = global.describe.skip;\n{again}"),
            )],
            format!("the pinned test `{PINNED}` skipped, it did not pass"),
        ),
    ];
    for (name, files, why) in cases {
        eprintln!("cheat: {name}");
        let repo = calc(&command, "");
        mocha_red(&repo, &command);
        for (path, content) in &files {
            repo.write(path, content);
        }
        green_refused(&repo, &command, &why);
    }
}

/// The pinned test's title written in another file, the pinned file emptied and left out of
/// the files mocha loads through `package.json`'s `mocha` key: that key is mocha's
/// configuration, pinned with the test, so the RED test's run has the pinned file put back
/// and loaded, and it fails. (Where the pinned file is still not what mocha loads, the title
/// passing from another file is refused by the file mocha names for it: src/workflow/evidence
/// tests.)
#[test]
fn a_mocha_title_reused_in_another_file_is_refused_at_green() {
    let command = mocha_command();
    let repo = calc(&command, "");
    mocha_red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_test_files"],
        serde_json::json!({ PINNED: ["test/mul.js"] })
    );
    repo.write("test/mul.js", "");
    repo.write("test/other.js", TEST_OTHER);
    repo.write("package.json", PACKAGE_JSON_OTHER);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next(),
        Some(
            runner_files_refusal(
                &command,
                "test/mul.js as the RED step left it; package.json as the RED step left it",
                "mocha's configuration is"
            )
            .as_str()
        ),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}

/// A GREEN step that writes `.mocharc.yml` to `require` a module that stubs the code under
/// test (the pinned test passes, the code is still wrong): the RED test's run has it taken out
/// (the RED tree has none), still fails, and the refusal says mocha's configuration is test
/// code.
#[test]
fn a_mocharc_a_green_step_writes_to_require_a_stub_is_refused() {
    let command = mocha_command();
    let repo = calc(&command, "");
    mocha_red(&repo, &command);
    repo.write(".mocharc.yml", "require: ./stub.js\n");
    repo.write("stub.js", "require('./calc').mul = (a, b) => a * b;\n");
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
             .mocharc.yml taken out, as the RED step's tree has none) still fails (exit 1): the \
             GREEN step must make it pass. mocha's configuration is test code, which only a RED \
             step may write"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}

/// The same stub loaded through a `mocha` key the GREEN step adds to `package.json` (mocha
/// reads its options there too): the RED test's run has `package.json` as the RED step left
/// it, still fails, and the refusal says mocha's configuration is test code. A GREEN step that
/// changes `package.json` elsewhere (a dependency) keeps its change for the pinned test.
#[test]
fn a_mocha_key_a_green_step_writes_to_package_json_is_refused() {
    let command = mocha_command();
    let repo = calc(&command, "");
    mocha_red(&repo, &command);
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"private\": true, \"mocha\": {\"require\": [\"./stub.js\"]}}\n",
    );
    repo.write("stub.js", "require('./calc').mul = (a, b) => a * b;\n");
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next(),
        Some(
            runner_files_refusal(
                &command,
                "package.json as the RED step left it",
                "mocha's configuration is"
            )
            .as_str()
        ),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");

    // The honest twin: a dependency added, `mul` written.
    let repo = calc(&command, "");
    mocha_red(&repo, &command);
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"private\": true, \"dependencies\": {}}\n",
    );
    repo.write("calc.js", CALC_MUL);
    repo.submit_test(&command, None).expect(0);
}

/// The honest mocha PR, proven by id at GREEN, by the final check and by `attest` in a fresh
/// clone: mocha names the test by its full title, and its file relative to each run's
/// directory (the base's and the final tree's runs are in two worktrees).
#[test]
fn an_honest_mocha_pr_is_proven_by_test_id_locally_and_by_attest() {
    let command = mocha_command();
    let repo = calc(&command, "");
    mocha_red(&repo, &command);
    repo.write("calc.js", CALC_MUL);
    proven_by_id(&repo, &command, 1, "mocha-json", PINNED);
}

/// The pinned test's title in another file, the pinned file left out of what mocha loads
/// through `package.json`'s `mocha` key, written after GREEN and checkpointed (the gate
/// passes): the final check and `attest` in a fresh clone run the pinned test with
/// `package.json` as the RED step left it, mocha loads the pinned file, and it fails.
#[test]
fn a_mocha_title_moved_to_another_file_is_refused_at_the_end_and_by_attest() {
    let command = mocha_command();
    let moved = |extra: &str| {
        let repo = calc(&command, extra);
        mocha_red(&repo, &command);
        repo.write("calc.js", CALC_MUL);
        repo.submit_test(&command, None).expect(0);
        repo.write("calc.js", CALC);
        repo.write("test/mul.js", "");
        repo.write("test/other.js", TEST_OTHER);
        repo.write("package.json", PACKAGE_JSON_OTHER);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        squash(&repo);
        repo
    };
    // `package.json`'s `mocha` key is mocha's configuration: put back as the RED step left
    // it, mocha loads the pinned file again, and its test fails.
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with test/mul.js as the \
         RED step left them, and package.json as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 1). Output:"
    );
    refused_at_the_end_and_by_attest(moved, &refusal, "");
}

/// The common JavaScript RED whose test file does not load (it requires a module main does
/// not have): mocha ends before it reports, so nothing is pinned by id, and the tests of the
/// pinned file are tied to it by the file mocha names for each. The honest twin is proven so,
/// by the final check and by `attest`; the pinned file left out of what mocha loads through
/// `package.json`'s `mocha` key (its title passing from another file, `mul` still wrong) is
/// refused: the RED test's run has `package.json` as the RED step left it.
#[test]
fn a_mocha_file_that_did_not_load_on_the_base_is_held_by_its_tests() {
    let command = mocha_command();
    let test_mul = "const assert = require('assert');\nconst mul = require('../mul');\n\n\
describe('calc', () => {\n  it('muls', () => {\n    assert.strictEqual(mul(2, 3), 6);\n  });\n});\n";
    let red_unloaded = || {
        let repo = calc(&command, "");
        repo.write("test/mul.js", test_mul);
        red(&repo, &command);
        assert_eq!(
            repo.state()["red_test"]["red_tests"],
            serde_json::Value::Null,
            "{}",
            repo.state()["red_test"]
        );
        repo
    };
    let repo = red_unloaded();
    repo.write("mul.js", "module.exports = (a, b) => a * b;\n");
    proven_by_id(&repo, &command, 1, "mocha-json", PINNED);

    let repo = red_unloaded();
    repo.write("mul.js", "module.exports = (a, b) => a + b;\n");
    repo.write("test/other.js", TEST_OTHER);
    repo.write("package.json", PACKAGE_JSON_OTHER);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next(),
        Some(
            runner_files_refusal(
                &command,
                "package.json as the RED step left it",
                "mocha's configuration is"
            )
            .as_str()
        ),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}
