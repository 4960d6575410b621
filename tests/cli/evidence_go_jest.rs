//! Per-test evidence from Go (`go test ./...`: its `-json` events, asked for through
//! `GOFLAGS`) and jest (its `--json --outputFile` report) through the whole flow: the RED
//! step pins the test by id, a GREEN step that exits 0 without that test passing is refused
//! naming it (an exit before the tests run, a skipped test, events the test prints itself),
//! and the honest twin is proven by id by the final check and by `attest` in a fresh clone.
//! go and npm are required: without them the tests fail, they are not skipped.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use crate::oracle::{MUL_PLAN, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// The configuration: one gate, `command`, and the test step's timeout.
fn config(command: &str, extra: &str) -> String {
    format!(
        "main_branch = \"main\"\nmaster_plan = \"docs/plan.md\"\n\n[[preflight]]\nname = \"tests\"\n\
         command = \"{command}\"\ntimeout = \"300s\"\n\n[test]\ntimeout = \"300s\"\noutput_tail = 40\n{extra}"
    )
}

/// `repo` with `files` and the configuration committed on main, the master plan's PR
/// (multiply) submitted and its first step taken.
pub(crate) fn project(files: &[(&str, &str)], command: &str, extra: &str) -> TestRepo {
    let repo = TestRepo::empty();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(".orchestrate.toml", &config(command, extra));
    repo.commit_all("calculator");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

/// The final note on the squashed commit.
pub(crate) fn final_note(repo: &TestRepo, commit: &str) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", commit]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "final")
        .expect("a final record")
}

/// A GREEN step refused: its RED test passes (exit 0) without its pinned test passing, and
/// the refusal says why (`why` is how its reason begins).
#[track_caller]
pub(crate) fn green_refused(repo: &TestRepo, command: &str, why: &str) {
    let out = repo.submit_test(command, None);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` passes \
             without running a test ({why}"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}

/// The honest twin through the end: GREEN, the squash proven by the final check with the
/// pinned test by id, the merge, and `attest` in a fresh clone saying the same (the run on
/// the base exited `base`).
pub(crate) fn proven_by_id(
    repo: &TestRepo,
    command: &str,
    base: i32,
    evidence: &str,
    pinned: &str,
) {
    crate::oracle::green(repo, command);
    squash(repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(repo, &squashed);
    assert_eq!(note["red_tests"][0]["evidence"], evidence, "{note}");
    assert_eq!(
        note["red_tests"][0]["tests"],
        serde_json::json!([pinned]),
        "{note}"
    );
    mark_done_and_merge(repo).expect(0);
    let merge = main_tip(repo);
    let ci = fresh_clone(repo);
    let out = ci.run(&["attest", "--no-note", "--json", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["red_tests"], note["red_tests"], "{verdict}");
    assert_eq!(
        verdict["reran"][1],
        format!(
            "RED test of step 1.1 `{command}`: exit {base} on the base, exit 0 on the final \
             tree; evidence: {evidence} ({pinned})"
        )
    );
}

/// A clone of `repo` with its workflow refs, as CI has it.
pub(crate) fn fresh_clone(repo: &TestRepo) -> TestRepo {
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    ci
}

/// The files a cheating GREEN step writes.
pub(crate) type Cheat = Vec<(&'static str, String)>;

// ---- Go ----

const GO_COMMAND: &str = "go test ./...";
const GO_MOD: &str = "module calc\n\ngo 1.19\n";
/// main's bug: `Mul` adds.
const GO_CALC: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a + b }\n";
const GO_CALC_MUL: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n";
const GO_TEST_ADD: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tcheck(t, Add(2, 3), 5)\n}\n";
const GO_TEST_MUL: &str = "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tcheck(t, Mul(2, 3), 6)\n}\n";
/// The tests' helper, on main.
const GO_CHECK: &str = "package calc\n\nimport \"testing\"\n\nfunc check(t *testing.T, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n";
/// The pinned test, as go's events name it.
const GO_PINNED: &str = "calc::TestMul";

/// Fails the test, loudly, when go is not installed: `.ci/run` installs it.
fn need_go() {
    let found = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "the Go evidence tests need `go` on PATH (`apt-get install golang-go`; .ci/run installs it)"
    );
}

/// A Go calculator on main, its gate `go test ./...`, at the RED step of multiply. go's build
/// cache is under the repository's temporary HOME, never in the clone.
fn gocalc(extra: &str) -> TestRepo {
    need_go();
    project(
        &[
            ("go.mod", GO_MOD),
            ("calc.go", GO_CALC),
            ("calc_test.go", GO_TEST_ADD),
            ("check_test.go", GO_CHECK),
        ],
        GO_COMMAND,
        extra,
    )
}

/// The RED step: `TestMul` fails on main, pinned by its id in go's events.
fn go_red(repo: &TestRepo, command: &str) {
    repo.write("mul_test.go", GO_TEST_MUL);
    red(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([GO_PINNED])
    );
}

/// The event lines a test that reads our source would print to pass `TestMul`.
const GO_FAKE_EVENTS: &str = r#"{"Action":"run","Package":"calc","Test":"TestMul"}
{"Action":"pass","Package":"calc","Test":"TestMul","Elapsed":0}
{"Action":"pass","Package":"calc","Elapsed":0}
"#;

/// Exits 0 before the tests run, at GREEN: `os.Exit(0)` in `TestMain` before `m.Run()`, and
/// from an `init()`; or prints go's events for `TestMul` itself first (go wraps what a test
/// prints as output, no event); or skips the pinned test (from the helper it calls: the
/// pinned test's own file is put back as the RED step left it before it is judged). Each
/// is refused naming it.
#[test]
fn a_go_test_that_exits_0_or_skips_is_refused_naming_the_pinned_test() {
    let missing = format!("the pinned test `{GO_PINNED}` is missing from the report");
    let cases: Vec<(&str, Cheat, String)> = vec![
        (
            "os.Exit(0) in TestMain",
            vec![(
                "main_test.go",
                "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n\tos.Exit(m.Run())\n}\n".into(),
            )],
            missing.clone(),
        ),
        (
            "os.Exit(0) from an init()",
            vec![(
                "exit.go",
                "package calc\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n".into(),
            )],
            missing.clone(),
        ),
        (
            "go's events printed by TestMain",
            vec![(
                "main_test.go",
                format!(
                    "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {{\n\t\
                     fmt.Print(`{GO_FAKE_EVENTS}`)\n\tos.Exit(0)\n}}\n"
                ),
            )],
            missing,
        ),
        (
            "t.Skip() in the tests' helper",
            vec![(
                "check_test.go",
                GO_CHECK.replace("\tt.Helper()\n", "\tt.Helper()\n\tt.Skip(\"later\")\n"),
            )],
            format!("the pinned test `{GO_PINNED}` skipped, it did not pass"),
        ),
    ];
    for (name, files, why) in cases {
        eprintln!("cheat: {name}");
        let repo = gocalc("");
        go_red(&repo, GO_COMMAND);
        for (path, content) in &files {
            repo.write(path, content);
        }
        green_refused(&repo, GO_COMMAND, &why);
    }
}

/// A RED command that prints event lines of its own after go's (`go test ./...; cat
/// events.json`: it fails on main, where the file is missing): at GREEN the file claims
/// `TestMul` passed after go ended its package, and is no evidence.
#[test]
fn go_events_the_command_prints_after_go_are_refused() {
    let command = "go test ./...; cat events.json";
    let repo = gocalc("");
    go_red(&repo, command);
    repo.write(
        "main_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n",
    );
    repo.write("events.json", GO_FAKE_EVENTS);
    green_refused(
        &repo,
        command,
        "no per-test evidence: its gotest-json report cannot be read: an event of package \
         `calc` comes after go ended that package: go did not write it",
    );
}

/// The honest Go PR: `TestMul` pinned by id at RED (go's events, asked for through
/// `GOFLAGS=-json`: the command is run as given), passing by id at GREEN, and proven by id
/// by the final check and by `attest` in a fresh clone.
#[test]
fn an_honest_go_pr_is_proven_by_test_id_locally_and_by_attest() {
    let repo = gocalc("");
    go_red(&repo, GO_COMMAND);
    repo.write("calc.go", GO_CALC_MUL);
    proven_by_id(&repo, GO_COMMAND, 1, "gotest-json", GO_PINNED);
}

/// `os.Exit(0)` in `TestMain` added after an honest GREEN and checkpointed (the gates judge
/// by exit code): the final check refuses the squash naming the pinned test, and where the
/// local final check is off and it merged, `attest` in a fresh clone refuses it.
#[test]
fn a_go_exit_after_green_is_refused_by_the_final_check_and_by_attest() {
    let exit = "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n";
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{GO_COMMAND}`, with mul_test.go as the \
         RED step left them) failed: on the squashed commit its exit code is not borne out by what \
         the test runner reported: the pinned test `{GO_PINNED}` is missing from the report"
    );
    let cheat_after_green = |repo: &TestRepo| {
        go_red(repo, GO_COMMAND);
        repo.write("calc.go", GO_CALC_MUL);
        repo.submit_test(GO_COMMAND, None).expect(0);
        repo.write("calc.go", GO_CALC);
        repo.write("main_test.go", exit);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    };

    let repo = gocalc("");
    cheat_after_green(&repo);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(&refusal), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = gocalc("\n[finalize]\nclean_check = false\n");
    cheat_after_green(&repo);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let out = fresh_clone(&repo).run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert!(out.stdout.contains(&refusal), "{}", out.stdout);
}

// ---- jest ----

const JS_CALC: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n";
const JS_CALC_MUL: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n";
const JS_TEST_ADD: &str = "const calc = require('../calc');\n\ntest('adds', () => {\n  expect(calc.add(2, 3)).toBe(5);\n});\n";
const JS_TEST_MUL: &str = "const calc = require('../calc');\n\ntest('muls', () => {\n  expect(calc.mul(2, 3)).toBe(6);\n});\n";
const PACKAGE_JSON: &str = "{\"name\": \"calc\", \"private\": true}\n";
/// The pinned test, as jest's report names it (its file relative to the run's directory).
const JS_PINNED: &str = "tests/mul.test.js::muls";

/// jest, pinned, installed with npm into the CI cache; the test fails when it cannot be.
fn jest() -> PathBuf {
    crate::managers::tool("jest")
        .expect("the jest evidence tests need `npm` to install jest (is it installed?)")
        .join("jest")
}

/// jest run as the agent runs it: the program, with no options of ours in the command.
fn jest_command() -> String {
    format!("{} --ci", jest().display())
}

/// A JavaScript calculator on main, its gate jest, at the RED step of multiply.
fn jscalc(command: &str) -> TestRepo {
    project(
        &[
            ("package.json", PACKAGE_JSON),
            ("calc.js", JS_CALC),
            ("tests/add.test.js", JS_TEST_ADD),
        ],
        command,
        "",
    )
}

fn jest_red(repo: &TestRepo, command: &str) {
    repo.write("tests/mul.test.js", JS_TEST_MUL);
    red(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([JS_PINNED])
    );
}

/// `process.exit(0)` in code the test requires ends jest before it writes its report; code
/// that makes every `test` a `test.skip` as the test requires it skips the pinned test. Each
/// is refused naming why. (In a setup file its configuration names, each is refused before:
/// jest's configuration is test code, [`jest_configuration_a_green_step_writes_is_refused`].)
#[test]
fn a_jest_run_that_exits_0_or_skips_is_refused() {
    let command = jest_command();
    let cases: Vec<(&str, Cheat, String)> = vec![
        (
            "process.exit(0) in the code",
            vec![("calc.js", format!("{JS_CALC}process.exit(0);\n"))],
            "no per-test evidence: the runner wrote no jest-json report: the process ended before it reported".into(),
        ),
        (
            "test.skip for every test, in the code",
            vec![("calc.js", format!("{JS_CALC}global.test = global.test.skip;\n"))],
            format!("the pinned test `{JS_PINNED}` skipped, it did not pass"),
        ),
    ];
    for (name, files, why) in cases {
        eprintln!("cheat: {name}");
        let repo = jscalc(&command);
        jest_red(&repo, &command);
        for (path, content) in &files {
            repo.write(path, content);
        }
        green_refused(&repo, &command, &why);
    }
}

/// A setup file that makes every `test` a `test.skip`.
const JS_SKIP: &str = "global.test = global.test.skip;\n";

/// The refusal's first line when the RED test's run had `with` (the runner's files put
/// back) and still failed: `what` is what those files are (jest's, mocha's, vitest's).
pub(crate) fn runner_files_refusal(command: &str, with: &str, what: &str) -> String {
    format!(
        "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
         {with}) still fails (exit 1): the GREEN step must make it pass. {what} test code, \
         which only a RED step may write: what the GREEN step changed there is not in the RED \
         test's run. What the test needs from it (a fixture, say) belongs in the task's RED \
         test file, written by its RED step; submit-work cannot undo the GREEN step, so a RED \
         step that lacks it needs a new plan (`request-scope-reduction` once unlocked, or \
         `submit-work --contradiction`); debugging attempt 1"
    )
}

/// jest's configuration a GREEN step writes to skip the pinned test through a setup file
/// (a `jest.config.js`, the `jest` key of `package.json`), and a setup file main's
/// configuration names that a GREEN step rewrites: the RED test's run has each as the RED
/// tree has it, fails, and the refusal names it and what to do.
#[test]
fn jest_configuration_a_green_step_writes_is_refused() {
    let command = jest_command();
    let with_setup = "{\"name\": \"calc\", \"private\": true, \"jest\": {\"setupFilesAfterEnv\": [\"<rootDir>/support/setup.js\"]}}\n";
    let cases: Vec<(&str, Cheat, String, &str)> = vec![
        (
            "jest.config.js",
            vec![
                (
                    "jest.config.js",
                    "module.exports = {\n  setupFilesAfterEnv: ['./skip.js'],\n};\n".into(),
                ),
                ("skip.js", JS_SKIP.into()),
            ],
            "jest.config.js taken out, as the RED step's tree has none".into(),
            "jest's configuration is",
        ),
        (
            "package.json",
            vec![
                (
                    "package.json",
                    "{\"name\": \"calc\", \"private\": true, \"jest\": {\"setupFilesAfterEnv\": [\"./skip.js\"]}}\n".into(),
                ),
                ("skip.js", JS_SKIP.into()),
            ],
            "package.json as the RED step left it".into(),
            "jest's configuration is",
        ),
    ];
    for (name, files, with, what) in cases {
        eprintln!("cheat: {name}");
        let repo = jscalc(&command);
        jest_red(&repo, &command);
        for (path, content) in &files {
            repo.write(path, content);
        }
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            runner_files_refusal(&command, &with, what),
            "{name}"
        );
        assert_eq!(repo.status(), "DEBUGGING");
    }
    // A setup file main's configuration names, rewritten.
    let repo = project(
        &[
            ("package.json", with_setup),
            ("support/setup.js", "// nothing to set up yet\n"),
            ("calc.js", JS_CALC),
            ("tests/add.test.js", JS_TEST_ADD),
        ],
        &command,
        "",
    );
    jest_red(&repo, &command);
    repo.write("support/setup.js", JS_SKIP);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap_or_default(),
        runner_files_refusal(
            &command,
            "support/setup.js as the RED step left it",
            "A module jest loads is"
        )
    );
}

/// A `jest.config.js` with a skipping setup file written after the RED step (then
/// checkpointed: every test is skipped, the gate passes) is not what the pinned test runs
/// with at the end: the final check and `attest` in a fresh clone refuse it.
#[test]
fn jest_configuration_written_after_red_is_refused_at_the_end_and_by_attest() {
    let command = jest_command();
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/mul.test.js as \
         the RED step left them, and jest.config.js as RED steps left it, else as the base has \
         it) failed: it fails on the squashed commit (exit 1). Output:"
    );
    let configured = |extra: &str| {
        let repo = project(
            &[
                ("package.json", PACKAGE_JSON),
                ("calc.js", JS_CALC),
                ("tests/add.test.js", JS_TEST_ADD),
            ],
            &command,
            extra,
        );
        jest_red(&repo, &command);
        repo.write("calc.js", JS_CALC_MUL);
        repo.submit_test(&command, None).expect(0);
        repo.write("calc.js", JS_CALC);
        repo.write(
            "jest.config.js",
            "module.exports = {\n  setupFilesAfterEnv: ['./skip.js'],\n};\n",
        );
        repo.write("skip.js", JS_SKIP);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        squash(&repo);
        repo
    };
    refused_at_the_end_and_by_attest(configured, &refusal, "");
}

/// The honest twin that needs the `jest`-key-only rule: the task's test checks the
/// project's version in `package.json`, and the GREEN step writes it there (no `jest` key
/// changed): the RED test's run has `package.json` as the working tree has it (put back as
/// the RED step left it, the test would fail), and so do the final check and `attest`.
#[test]
fn a_version_a_green_step_writes_to_package_json_stays_for_the_pinned_test() {
    let command = jest_command();
    let repo = jscalc(&command);
    repo.write(
        "tests/version.test.js",
        "test('version', () => {\n  expect(require('../package.json').version).toBe('1.0.0');\n});\n",
    );
    red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["tests/version.test.js::version"])
    );
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"version\": \"1.0.0\", \"private\": true}\n",
    );
    proven_by_id(
        &repo,
        &command,
        1,
        "jest-json",
        "tests/version.test.js::version",
    );
}

/// The honest twin: a GREEN step that adds a dependency to `package.json` (no `jest` key
/// changed) is proven by id at GREEN, at the end and by `attest`.
#[test]
fn a_dependency_a_green_step_adds_to_package_json_passes() {
    let command = jest_command();
    let repo = jscalc(&command);
    jest_red(&repo, &command);
    repo.write("calc.js", JS_CALC_MUL);
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"private\": true, \"dependencies\": {\"left-pad\": \"1.3.0\"}}\n",
    );
    proven_by_id(&repo, &command, 1, "jest-json", JS_PINNED);
}

/// The honest jest PR, proven by id at GREEN, by the final check and by `attest` in a fresh
/// clone: jest names the test by its file's path, relative to each run's directory.
#[test]
fn an_honest_jest_pr_is_proven_by_test_id_locally_and_by_attest() {
    let command = jest_command();
    let repo = jscalc(&command);
    jest_red(&repo, &command);
    repo.write("calc.js", JS_CALC_MUL);
    proven_by_id(&repo, &command, 1, "jest-json", JS_PINNED);
}

/// The common Go RED: the test calls a function main does not have, so the package does
/// not build and go reports no test. The package is pinned by its name (go prints `FAIL
/// calc [build failed]`), and every test of it must pass on the final tree; the honest
/// twin is proven so, and `os.Exit(0)` in `TestMain` leaves none of it reported.
#[test]
fn a_go_package_that_did_not_build_on_the_base_is_pinned_by_its_name() {
    let div_test = "package calc\n\nimport \"testing\"\n\nfunc TestDiv(t *testing.T) {\n\tcheck(t, Div(6, 3), 2)\n}\n";
    let div = format!("{GO_CALC}\nfunc Div(a, b int) int {{ return a / b }}\n");
    let red_div = |repo: &TestRepo| {
        repo.write("div_test.go", div_test);
        red(repo, GO_COMMAND);
        assert_eq!(
            repo.state()["red_test"]["red_tests"],
            serde_json::json!(["calc"])
        );
    };
    let repo = gocalc("");
    red_div(&repo);
    repo.write("calc.go", &div);
    repo.write(
        "main_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n",
    );
    green_refused(
        &repo,
        GO_COMMAND,
        "the pinned test `calc` is missing from the report",
    );

    let repo = gocalc("");
    red_div(&repo);
    repo.write("calc.go", &div);
    // go exits 2 when a package does not build.
    proven_by_id(&repo, GO_COMMAND, 2, "gotest-json", "calc");
}

/// A transform that hands jest each file as it is.
const JS_TX: &str = "module.exports = { process(src) { return { code: src }; } };\n";
/// A transform that turns the pinned test's assertion around (`mul` adds: 5 is not 6).
const JS_TX_CHEAT: &str = "module.exports = {\n  process(src, filename) {\n    return { code: filename.endsWith('mul.test.js') ? src.replace('.toBe(', '.not.toBe(') : src };\n  },\n};\n";
/// A global setup with nothing to set up.
const JS_GLOBAL: &str = "module.exports = async () => {};\n";
/// A global setup that writes jest's report itself, the pinned test passed, where jest's
/// arguments say it goes, and ends jest before any test runs.
const JS_GLOBAL_CHEAT: &str = "const fs = require('fs');\nconst path = require('path');\n\
module.exports = async () => {\n  const arg = process.argv.find((a) => a.startsWith('--outputFile='));\n  \
if (arg) {\n    fs.writeFileSync(arg.slice('--outputFile='.length), JSON.stringify({ success: true, \
testResults: [{ name: path.resolve('tests/mul.test.js'), status: 'passed', assertionResults: \
[{ fullName: 'muls', title: 'muls', status: 'passed' }] }] }));\n  }\n  process.exit(0);\n};\n";

/// The ways main's jest configuration names a module jest loads around every test: the
/// files main has, the module a cheating GREEN step rewrites, and what it writes there.
fn jest_modules() -> Vec<(&'static str, Cheat, &'static str, &'static str)> {
    let package =
        |jest: &str| format!("{{\"name\": \"calc\", \"private\": true, \"jest\": {jest}}}\n");
    vec![
        (
            "a transform of package.json",
            vec![
                (
                    "package.json",
                    package(r#"{"transform": {"\\.js$": "<rootDir>/tx.js"}}"#),
                ),
                ("tx.js", JS_TX.into()),
            ],
            "tx.js",
            JS_TX_CHEAT,
        ),
        (
            "a transform of jest.config.json, with its options, named without its extension",
            vec![
                ("package.json", PACKAGE_JSON.into()),
                (
                    "jest.config.json",
                    r#"{"transform": {"\\.js$": ["<rootDir>/tools/tx", {"strict": true}]}}"#.into(),
                ),
                ("tools/tx.js", JS_TX.into()),
            ],
            "tools/tx.js",
            JS_TX_CHEAT,
        ),
        (
            "a transform of a jest.config.js written out",
            vec![
                ("package.json", PACKAGE_JSON.into()),
                (
                    "jest.config.js",
                    "module.exports = {\n  transform: { '\\\\.js$': './tx.js' },\n};\n".into(),
                ),
                ("tx.js", JS_TX.into()),
            ],
            "tx.js",
            JS_TX_CHEAT,
        ),
        (
            "globalSetup of package.json",
            vec![
                (
                    "package.json",
                    package(r#"{"globalSetup": "<rootDir>/global.js"}"#),
                ),
                ("global.js", JS_GLOBAL.into()),
            ],
            "global.js",
            JS_GLOBAL_CHEAT,
        ),
        (
            "globalSetup of a preset",
            vec![
                (
                    "package.json",
                    package(r#"{"preset": "./presets/base.json"}"#),
                ),
                (
                    "presets/base.json",
                    r#"{"globalSetup": "<rootDir>/support/global.js"}"#.into(),
                ),
                ("support/global.js", JS_GLOBAL.into()),
            ],
            "support/global.js",
            JS_GLOBAL_CHEAT,
        ),
    ]
}

/// jest without its cache: a transform's output is cached by the file it transformed, not
/// by the transform's own code.
fn jest_uncached() -> String {
    format!("{} --no-cache", jest_command())
}

/// A module main's jest configuration names (a `transform`, `globalSetup`, one a preset
/// names), rewritten by a GREEN step to pass the pinned test without `mul` fixed: the RED
/// test's run has it as the RED step left it, fails, and the refusal names it.
#[test]
fn a_module_jest_configuration_names_is_test_code_at_green() {
    let command = jest_uncached();
    for (name, files, module, cheat) in jest_modules() {
        eprintln!("cheat: {name}");
        let mut all = files.clone();
        all.push(("calc.js", JS_CALC.into()));
        all.push(("tests/add.test.js", JS_TEST_ADD.into()));
        let all: Vec<(&str, &str)> = all.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let repo = project(&all, &command, "");
        jest_red(&repo, &command);
        repo.write(module, cheat);
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            runner_files_refusal(
                &command,
                &format!("{module} as the RED step left it"),
                "A module jest loads is"
            ),
            "{name}"
        );
        assert_eq!(repo.status(), "DEBUGGING", "{name}");
    }
}

/// The module rewritten after an honest GREEN and checkpointed (the gate, jest itself,
/// passes with it): the final check and `attest` in a fresh clone run the pinned test with
/// it as RED steps left it, else as the base has it, and refuse.
#[test]
fn a_module_jest_configuration_names_is_refused_at_the_end_and_by_attest() {
    let command = jest_uncached();
    for (name, files, module, cheat) in [0, 3].map(|i| jest_modules().swap_remove(i)) {
        eprintln!("cheat: {name}");
        let refusal = format!(
            "the final check of task 1's RED test (step 1.1, `{command}`, with tests/mul.test.js \
             as the RED step left them, and {module} as RED steps left it, else as the base has \
             it) failed: it fails on the squashed commit (exit 1). Output:"
        );
        let configured = |extra: &str| {
            let mut all = files.clone();
            all.push(("calc.js", JS_CALC.into()));
            all.push(("tests/add.test.js", JS_TEST_ADD.into()));
            let all: Vec<(&str, &str)> = all.iter().map(|(p, c)| (*p, c.as_str())).collect();
            let repo = project(&all, &command, extra);
            jest_red(&repo, &command);
            repo.write("calc.js", JS_CALC_MUL);
            repo.submit_test(&command, None).expect(0);
            repo.write("calc.js", JS_CALC);
            repo.write(module, cheat);
            repo.run(&["checkpoint"]).expect(0);
            repo.run(&["get-task"]).expect(0);
            assert_eq!(repo.status(), "AWAITING_FINALIZATION", "{name}");
            squash(&repo);
            repo
        };
        refused_at_the_end_and_by_attest(configured, &refusal, name);
    }
}

/// The honest twin: with each of those modules on main, a GREEN step that fixes the code is
/// proven by id at GREEN, at the end and by `attest` in a fresh clone.
#[test]
fn code_a_green_step_writes_beside_jest_modules_passes() {
    let command = jest_uncached();
    for (name, files, _, _) in jest_modules() {
        eprintln!("twin of: {name}");
        let mut all = files.clone();
        all.push(("calc.js", JS_CALC.into()));
        all.push(("tests/add.test.js", JS_TEST_ADD.into()));
        let all: Vec<(&str, &str)> = all.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let repo = project(&all, &command, "");
        jest_red(&repo, &command);
        repo.write("calc.js", JS_CALC_MUL);
        proven_by_id(&repo, &command, 1, "jest-json", JS_PINNED);
    }
}

/// A `jest.config.js` that names a module by what only running it tells (a call) cannot be
/// pinned: the RED step is refused, saying how to write it; written out, it is pinned.
#[test]
fn a_jest_module_named_by_code_is_refused_at_red() {
    let command = jest_uncached();
    let repo = project(
        &[
            ("package.json", PACKAGE_JSON),
            (
                "jest.config.js",
                "const path = require('path');\nmodule.exports = {\n  globalSetup: path.join(__dirname, 'global.js'),\n};\n",
            ),
            ("global.js", JS_GLOBAL),
            ("calc.js", JS_CALC),
            ("tests/add.test.js", JS_TEST_ADD),
        ],
        &command,
        "",
    );
    repo.write("tests/mul.test.js", JS_TEST_MUL);
    let out = repo.submit_test(&command, Some("FAIL"));
    out.expect(1);
    assert!(
        out.stdout.contains(
            "its test cannot be pinned: jest.config.js sets `globalSetup` to something other than \
             a value written out, and which modules it names (test code, pinned with the test) \
             only running it tells: write them out (a string, or a list or an object of strings)"
        ),
        "{}",
        out.stdout
    );
    repo.write(
        "jest.config.js",
        "module.exports = {\n  globalSetup: './global.js',\n};\n",
    );
    jest_red(&repo, &command);
}

/// The configuration file the RED command names with `--config` (jest reads it instead of
/// looking for one) is pinned with the test, and so is each module it names: a GREEN step
/// that rewrites it (to name a transform that turns the pinned test's assertion around) or
/// the transform it names is refused by the RED test's run, which has each as the RED step
/// left it.
#[test]
fn the_configuration_a_jest_command_names_and_its_modules_are_pinned() {
    let command = format!("{} --config ci/jest.ci.json", jest_uncached());
    let config = r#"{"rootDir": "..", "transform": {"\\.js$": "<rootDir>/tx.js"}}"#;
    let cheats: Vec<(&str, Cheat, &str)> = vec![
        (
            "the configuration",
            vec![
                (
                    "ci/jest.ci.json",
                    r#"{"rootDir": "..", "transform": {"\\.js$": "<rootDir>/tx2.js"}}"#.into(),
                ),
                ("tx2.js", JS_TX_CHEAT.into()),
            ],
            "ci/jest.ci.json",
        ),
        (
            "the transform it names",
            vec![("tx.js", JS_TX_CHEAT.into())],
            "tx.js",
        ),
    ];
    for (name, files, restored) in cheats {
        eprintln!("cheat: {name}");
        let repo = project(
            &[
                ("package.json", PACKAGE_JSON),
                ("ci/jest.ci.json", config),
                ("tx.js", JS_TX),
                ("calc.js", JS_CALC),
                ("tests/add.test.js", JS_TEST_ADD),
            ],
            &command,
            "",
        );
        jest_red(&repo, &command);
        for (path, content) in &files {
            repo.write(path, content);
        }
        let out = repo.submit_test(&command, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            runner_files_refusal(
                &command,
                &format!("{restored} as the RED step left it"),
                "A module jest loads is"
            ),
            "{name}"
        );
        assert_eq!(repo.status(), "DEBUGGING", "{name}");
    }
}

/// A squashed PR, made by `squashed` with the configuration it is given added, refused by
/// the final check (its output begins with `refusal`) and, with the clean check off so that
/// it merges, by `attest` in a fresh clone (`refusal` among its reasons); `case` names it in
/// a failure.
pub(crate) fn refused_at_the_end_and_by_attest(
    squashed: impl Fn(&str) -> TestRepo,
    refusal: &str,
    case: &str,
) {
    let repo = squashed("");
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")),
        "{case}: {}",
        out.stdout
    );

    let repo = squashed("\n[finalize]\nclean_check = false\n");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = fresh_clone(&repo).run(&["attest", "--no-note", &main_tip(&repo)]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!("  - {refusal}")),
        "{case}: {}",
        out.stdout
    );
}
