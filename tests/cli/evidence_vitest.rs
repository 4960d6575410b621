//! Per-test evidence from vitest (its `--reporter=json --outputFile` report, which has
//! jest's shape) through the whole flow, with a real vitest: the RED step pins the test by
//! id, and its configuration files are test code, pinned with it present or not. A GREEN
//! step that writes a configuration aliasing the module under test to a stub, so that the
//! pinned test passes with the task's code never run, is refused naming the file; written
//! after GREEN, the final check and `attest` in a fresh clone refuse it alike. The honest
//! twin is proven by id locally and by `attest`. npm is required: without it the tests fail.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use crate::evidence_go_jest::{
    project, proven_by_id, refused_at_the_end_and_by_attest, runner_files_refusal,
};
use crate::oracle::{red, squash};
use crate::support::*;

const PACKAGE_JSON: &str = "{\"name\": \"calc\", \"private\": true}\n";
/// vitest keeps its results cache in `node_modules/.vite`, as a project ignores it.
const GITIGNORE: &str = "node_modules/\n";
/// main's bug: `mul` adds.
const CALC: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n";
const CALC_MUL: &str = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n";
const TEST_ADD: &str = "import { test, expect } from 'vitest';\nimport calc from '../calc.js';\n\ntest('adds', () => {\n  expect(calc.add(2, 3)).toBe(5);\n});\n";
const TEST_MUL: &str = "import { test, expect } from 'vitest';\nimport calc from '../calc.js';\n\ntest('muls', () => {\n  expect(calc.mul(2, 3)).toBe(6);\n});\n";
/// The pinned test, as vitest's report names it (its file relative to the run's directory).
const PINNED: &str = "tests/mul.test.js::muls";
/// A stub of the module under test: `mul` answers what the test asks.
const STUB: &str = "module.exports = { add: (a, b) => a + b, mul: () => 6 };\n";
/// A configuration that has every import of `../calc.js` load the stub instead.
const ALIAS: &str = "import { fileURLToPath } from 'node:url';\n\nexport default {\n  resolve: { alias: { '../calc.js': fileURLToPath(new URL('./stub.js', import.meta.url)) } },\n};\n";

/// vitest, pinned, installed with npm into the CI cache; the test fails when it cannot be.
fn vitest() -> PathBuf {
    crate::managers::tool("vitest")
        .expect("the vitest evidence tests need `npm` to install vitest (is it installed?)")
        .join("vitest")
}

/// vitest run as the agent runs it: once, with no options of ours in the command.
fn command() -> String {
    format!("{} run", vitest().display())
}

/// A JavaScript calculator on main, its gate vitest, at the RED step of multiply, the test
/// of `mul` written and pinned by id.
fn at_green(command: &str) -> TestRepo {
    let repo = project(
        &[
            ("package.json", PACKAGE_JSON),
            (".gitignore", GITIGNORE),
            ("calc.js", CALC),
            ("tests/add.test.js", TEST_ADD),
        ],
        command,
        "",
    );
    repo.write("tests/mul.test.js", TEST_MUL);
    red(&repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([PINNED])
    );
    repo
}

/// The honest vitest PR, proven by id at GREEN, by the final check and by `attest` in a
/// fresh clone.
#[test]
fn an_honest_vitest_pr_is_proven_by_test_id_locally_and_by_attest() {
    let command = command();
    let repo = at_green(&command);
    repo.write("calc.js", CALC_MUL);
    proven_by_id(&repo, &command, 1, "jest-json", PINNED);
}

/// A GREEN step that writes a vitest configuration (any of the names vitest looks for)
/// aliasing the module under test to a stub: the RED test's run has the configuration taken
/// out, as the RED tree had none, fails, and the refusal names it.
#[test]
fn a_vitest_configuration_a_green_step_writes_is_refused() {
    let command = command();
    for config in ["vitest.config.mjs", "vite.config.js"] {
        eprintln!("cheat: {config}");
        let repo = at_green(&command);
        repo.write("stub.js", STUB);
        repo.write(config, ALIAS);
        let out = repo.submit_test(&command, None);
        out.expect(1);
        let first = out.stdout.lines().next().unwrap_or_default().to_string();
        assert_eq!(
            first,
            runner_files_refusal(
                &command,
                &format!("{config} taken out, as the RED step's tree has none"),
                "vitest's configuration is",
            ),
            "{}",
            out.stdout
        );
        assert_eq!(repo.status(), "DEBUGGING");
    }
}

/// The same configuration written after the GREEN step's pass, with `mul` broken again,
/// then checkpointed (the gate passes: every import of the module is the stub's): the final
/// check refuses the squash, and with the local check turned off, `attest` in a fresh clone
/// FAILS the workflow's own merge.
#[test]
fn a_vitest_configuration_written_after_green_is_refused_at_the_end_and_by_attest() {
    let command = command();
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/mul.test.js as \
         the RED step left them, and vitest.config.mjs as RED steps left it, else as the base \
         has it) failed: it fails on the squashed commit (exit 1). Output:"
    );
    let configured = |extra: &str| {
        let repo = project(
            &[
                ("package.json", PACKAGE_JSON),
                (".gitignore", GITIGNORE),
                ("calc.js", CALC),
                ("tests/add.test.js", TEST_ADD),
            ],
            &command,
            extra,
        );
        repo.write("tests/mul.test.js", TEST_MUL);
        red(&repo, &command);
        repo.write("calc.js", CALC_MUL);
        repo.submit_test(&command, None).expect(0);
        repo.write("calc.js", CALC);
        repo.write("stub.js", STUB);
        repo.write("vitest.config.mjs", ALIAS);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        squash(&repo);
        repo
    };
    refused_at_the_end_and_by_attest(configured, &refusal, "");
}

/// Where the project has a vitest configuration of its own, vite's (`vite.config.js`, the
/// application's build) is not what vitest reads: a GREEN step that changes it keeps its
/// change for the pinned test's run, and the honest PR is proven by id as before.
#[test]
fn vites_own_configuration_beside_vitests_stays_the_green_steps() {
    let command = command();
    let repo = project(
        &[
            ("package.json", PACKAGE_JSON),
            (".gitignore", GITIGNORE),
            ("calc.js", CALC),
            ("tests/add.test.js", TEST_ADD),
            ("vitest.config.mjs", "export default {};\n"),
            ("vite.config.js", "export default { base: '/' };\n"),
        ],
        &command,
        "",
    );
    repo.write("tests/mul.test.js", TEST_MUL);
    red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([PINNED])
    );
    let hooks = repo.state()["red_test"]["red_hooks"].clone();
    let hooks: Vec<&str> = hooks
        .as_array()
        .expect("hooks")
        .iter()
        .filter_map(|h| h.as_str())
        .collect();
    assert!(hooks.contains(&"vitest.config.mjs"), "{hooks:?}");
    assert!(!hooks.contains(&"vite.config.js"), "{hooks:?}");
    repo.write("vite.config.js", "export default { base: '/app/' };\n");
    repo.write("calc.js", CALC_MUL);
    proven_by_id(&repo, &command, 1, "jest-json", PINNED);
}

/// The setup module main's vitest configuration names (`setupFiles`), rewritten by a GREEN
/// step to mock the module under test: vitest runs it before every test file, and the pinned
/// test passes with `mul` still wrong. It is test code, pinned with the test as the RED tree
/// has it: the RED test's run has it back, fails, and the refusal names it.
#[test]
fn a_setup_module_vitests_configuration_names_rewritten_at_green_is_refused() {
    let command = command();
    let repo = project(
        &[
            ("package.json", PACKAGE_JSON),
            (".gitignore", GITIGNORE),
            ("calc.js", CALC),
            ("tests/add.test.js", TEST_ADD),
            (
                "vitest.config.mjs",
                "export default { test: { setupFiles: ['./vitest.setup.js'] } };\n",
            ),
            ("vitest.setup.js", "// what every test file starts with\n"),
        ],
        &command,
        "",
    );
    repo.write("tests/mul.test.js", TEST_MUL);
    red(&repo, &command);
    repo.write(
        "vitest.setup.js",
        "import { vi } from 'vitest';\nvi.mock('./calc.js', () => ({ default: { add: (a, b) => a + b, mul: () => 6 } }));\n",
    );
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap_or_default(),
        runner_files_refusal(
            &command,
            "vitest.setup.js as the RED step left it",
            "A module vitest loads is"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}
