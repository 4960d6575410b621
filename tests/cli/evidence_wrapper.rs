//! A RED command that runs a script of the repository (`sh run_tests.sh`) whose pytest line
//! names a plugin (`-p myplugin`) and a configuration file (`-c ci.ini`), with real pytest
//! (docs/integrity.md, "Per-test evidence"): the script is the test's command, and what its
//! pytest line names is test code, as what the command itself names is. A GREEN step that
//! rewrites the plugin, the configuration or the script to neuter the pinned test is refused
//! at GREEN, by the final check and by `attest` in a fresh clone; the honest twin passes.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::evidence::{
    CALC, CALC_MUL, PINNED, attest_in_clone, final_note, pycalc_gated, pytest, pytest_command,
};
use crate::oracle::{MUL_PLAN, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// The RED and GREEN steps' command: the wrapper main has.
const COMMAND: &str = "sh run_tests.sh";

/// A plugin module that makes every collected test's run a no-op: pytest reports the pinned
/// test passed though its body never ran.
const EVIL: &str = "def pytest_collection_modifyitems(items):\n    for item in items:\n        \
                    item.runtest = lambda: None\n";

/// The wrapper: pytest with main's configuration `ci.ini` and plugin `myplugin`, and `more`.
fn wrapper(bin: &Path, more: &str) -> String {
    format!(
        "#!/bin/sh\nset -e\nexec {} -B -m pytest -q -p no:cacheprovider -c ci.ini \\\n  -p myplugin{more} tests\n",
        bin.join("python").display()
    )
}

/// A calculator on main with the wrapper, its configuration and its (harmless) plugin; its
/// gate runs main's own test only (a cheat that neuters the pinned test is the RED test's
/// run's to catch, not the gate's), and `extra` is appended to the configuration.
fn repo_with(bin: &Path, extra: &str) -> TestRepo {
    let script = wrapper(bin, "");
    let gate = pytest_command(bin).replace(" tests", " tests/test_add.py");
    pycalc_gated(
        &gate,
        extra,
        MUL_PLAN,
        &[
            ("run_tests.sh", script.as_str()),
            ("ci.ini", "[pytest]\n"),
            (
                "myplugin.py",
                "\"\"\"The calculator's test helpers.\"\"\"\n",
            ),
        ],
    )
}

/// The RED step: the test of `mul` through the wrapper, failing by id in pytest's report,
/// with the wrapper and what its pytest line names pinned as hooks.
fn red_mul(repo: &TestRepo) {
    repo.write("tests/test_mul.py", crate::evidence::TEST_MUL);
    red(repo, COMMAND);
    let state = repo.state();
    assert_eq!(state["red_test"]["red_tests"], serde_json::json!([PINNED]));
    let hooks = &state["red_test"]["red_hooks"];
    for hook in [
        "ci.ini",
        "myplugin.py",
        "myplugin/__init__.py",
        "run_tests.sh",
    ] {
        assert!(
            hooks
                .as_array()
                .is_some_and(|h| h.contains(&serde_json::json!(hook))),
            "{hook}: {hooks}"
        );
    }
}

/// The cheats: the files a GREEN step writes (with `evil.py`), and how the refusal names the
/// RED test's run and what the file put back is.
fn cheats(bin: &Path) -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "myplugin.py",
            EVIL.to_string(),
            "A plugin module pytest loads is",
        ),
        (
            "ci.ini",
            "[pytest]\naddopts = -p evil\n".to_string(),
            "pytest's configuration is",
        ),
        (
            "run_tests.sh",
            wrapper(bin, " -p evil"),
            "The script the RED command runs is",
        ),
    ]
}

/// Each file a GREEN step rewrites to neuter the pinned test, with `mul` still missing: the
/// RED test's run has it as the RED tree has it, fails, and the refusal names it and why.
#[test]
fn what_a_wrapper_scripts_pytest_loads_is_refused_at_green() {
    let Some(bin) = pytest() else { return };
    for (path, content, what) in cheats(&bin) {
        let repo = repo_with(&bin, "");
        red_mul(&repo);
        repo.write("evil.py", EVIL);
        repo.write(path, &content);
        let out = repo.submit_test(COMMAND, None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            format!(
                "FAILURE: `{COMMAND}` passed (exit 0), but the task's RED test `{COMMAND}` (run \
                 with {path} as the RED step left it) still fails (exit 1): the GREEN step must \
                 make it pass. {what} test code, which only a RED step may write: what the GREEN \
                 step changed there is not in the RED test's run. What the test needs from it (a \
                 fixture, say) belongs in the task's RED test file, written by its RED step; \
                 submit-work cannot undo the GREEN step, so a RED step that lacks it needs a new \
                 plan (`request-scope-reduction` once unlocked, or `submit-work \
                 --contradiction`); debugging attempt 1"
            ),
            "{path}"
        );
        assert!(
            out.stdout.contains("FAILED tests/test_mul.py::test_mul"),
            "{path}: {}",
            out.stdout
        );
        assert_eq!(repo.status(), "DEBUGGING", "{path}");
    }
}

/// RED pins `test_mul`; an honest GREEN; then `mul` taken out again and `path` rewritten as
/// `content` (with `evil.py`), checkpointed (the gate, main's test alone, passes).
fn rewritten_after_green(repo: &TestRepo, path: &str, content: &str) {
    red_mul(repo);
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(COMMAND, None).expect(0);
    repo.write("calc.py", CALC);
    repo.write("evil.py", EVIL);
    repo.write(path, content);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// The plugin the wrapper loads, rewritten after GREEN, is no pass of the pinned test at the
/// end: the final check and `attest` in a fresh clone run it with the plugin as RED steps
/// left it, else as the base has it, and it fails.
#[test]
fn a_plugin_a_wrapper_loads_rewritten_after_red_is_refused_at_the_end_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let path = "myplugin.py";
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{COMMAND}`, with tests/test_mul.py as \
         the RED step left them, and {path} as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 1). Output:"
    );
    let failed = "FAILED tests/test_mul.py::test_mul";

    let repo = repo_with(&bin, "");
    rewritten_after_green(&repo, path, EVIL);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")) && out.stdout.contains(failed),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = repo_with(&bin, "\n[finalize]\nclean_check = false\n");
    rewritten_after_green(&repo, path, EVIL);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!("  - {refusal}")) && out.stdout.contains(failed),
        "{}",
        out.stdout
    );
}

/// The honest twin: `mul` written, the wrapper and what it loads as main has them: accepted
/// at GREEN, proven by id at the end and by `attest` in a fresh clone.
#[test]
fn an_honest_pr_through_a_wrapper_passes() {
    let Some(bin) = pytest() else { return };
    let repo = repo_with(&bin, "");
    red_mul(&repo);
    repo.write("calc.py", CALC_MUL);
    crate::oracle::green(&repo, COMMAND);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let proof = &final_note(&repo, &squashed)["red_tests"][0];
    assert_eq!(proof["evidence"], "junit", "{proof}");
    assert_eq!(proof["tests"], serde_json::json!([PINNED]), "{proof}");
    mark_done_and_merge(&repo).expect(0);
    attest_in_clone(&repo).expect(0);
}
