//! Per-test evidence held to where the test is (docs/integrity.md, "Per-test evidence"): a
//! pinned test is the one of the file its RED run reported it from, at the GREEN step too
//! (an empty `#[test] fn muls() {}` of another cargo target is another test), and the
//! runner's own hooks (every `conftest.py` pytest loads, on the test's way or beside it) are
//! test code, which RED steps write: one a later step adds to turn every test's run into a
//! pass is refused at GREEN, by the final check and by `attest` in a fresh clone; a fixture a
//! later task's RED step adds for its own test is not.

use pretty_assertions::assert_eq;

use crate::evidence::{
    CALC_MUL, PINNED, attest_in_clone, final_note, pycalc, pycalc_planned, pytest, pytest_command,
    red_mul, rust_calc,
};
use crate::oracle::{main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

/// The pinned Rust test, in `tests/calc.rs`.
const MULS: &str = "#[test]\nfn muls() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n";
const MUL_ADDS: &str = "pub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}";
const MUL_MULTIPLIES: &str = "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}";

/// The pinned test `muls` failed in `tests/calc.rs` at RED, which the state records. A GREEN
/// step that leaves `mul` broken, stops building that target and adds an empty `muls` to
/// another (`tests/other.rs`) has `muls` reported passing, from the other file: refused. The
/// manifest that stops building the pinned test's target is cargo's configuration, which
/// the RED test's run has as the RED step left it (tests/cli/evidence_cargo.rs): `muls` runs
/// there from `tests/calc.rs`, and fails. The honest GREEN is accepted.
#[test]
fn a_pinned_rust_test_reported_only_from_another_target_is_refused_at_green() {
    let Some(repo) = rust_calc() else { return };
    let command = "cargo test --offline";
    repo.write("tests/calc.rs", MULS);
    red(&repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_test_files"],
        serde_json::json!({"muls": ["tests/calc.rs"]})
    );
    let manifest = std::fs::read_to_string(repo.path.join("Cargo.toml")).unwrap();
    repo.write(
        "Cargo.toml",
        &manifest.replace(
            "edition = \"2021\"\n",
            "edition = \"2021\"\nautotests = false\n\n[[test]]\nname = \"other\"\npath = \"tests/other.rs\"\n",
        ),
    );
    repo.write("tests/other.rs", "#[test]\nfn muls() {}\n");
    let out = repo.submit_test(command, None);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
             Cargo.toml as the RED step left it) still fails (exit 101): the GREEN step must \
             make it pass. cargo's configuration is test code"
        )) && out.stdout.contains("test muls ... FAILED"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
    // The honest twin.
    repo.write("Cargo.toml", &manifest);
    std::fs::remove_file(repo.path.join("tests/other.rs")).unwrap();
    let lib = std::fs::read_to_string(repo.path.join("src/lib.rs")).unwrap();
    repo.write("src/lib.rs", &lib.replace(MUL_ADDS, MUL_MULTIPLIES));
    crate::oracle::green(&repo, command);
}

/// A `conftest.py` that makes every collected test's run a no-op: pytest reports the
/// pinned test passed though its body never ran.
const NEUTER: &str = "def pytest_collection_modifyitems(items):\n    for item in items:\n        \
                      item.runtest = lambda: None\n";

/// RED pins `test_mul` with the `conftest.py` files on its way (none there yet); an honest
/// GREEN; then `mul` taken out again and a neutering `conftest.py` added at `hook`,
/// checkpointed (the gates, pytest itself, pass).
fn neutered_after_green(repo: &TestRepo, command: &str, hook: &str) {
    red_mul(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_hooks"],
        serde_json::json!(["conftest.py", "tests/conftest.py"])
    );
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(command, None).expect(0);
    repo.write("calc.py", crate::evidence::CALC);
    repo.write(hook, NEUTER);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// A `conftest.py` that neuters every test is no pass of the pinned test: at GREEN (its run
/// has the RED tree's hooks: none), at the final check and in `attest` in a fresh clone
/// (the hooks as RED steps left them: none), each naming the pinned test's failure.
#[test]
fn a_conftest_that_neuters_the_pinned_test_is_refused_at_green_at_the_end_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);

    let repo = pycalc(&bin, "");
    red_mul(&repo, &command);
    repo.write("conftest.py", NEUTER);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
             conftest.py taken out, as the RED step's tree has none) still fails (exit 1)"
        )),
        "{}",
        out.stdout
    );

    // The run on the squashed commit had no `conftest.py`: the pinned test ran, and failed.
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py as \
         the RED step left them, and conftest.py as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 1). Output:"
    );
    let failed = "FAILED tests/test_mul.py::test_mul";
    let repo = pycalc(&bin, "");
    neutered_after_green(&repo, &command, "conftest.py");
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

    let repo = pycalc(&bin, "\n[finalize]\nclean_check = false\n");
    neutered_after_green(&repo, &command, "conftest.py");
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

/// A `conftest.py` beside the pinned test's way (`tests/zz/`, while the test is
/// `tests/test_mul.py`) is loaded too when pytest collects `tests`, and neuters it the same:
/// every `conftest.py` anywhere is test code. Refused at GREEN (the run has it taken out, the
/// RED tree having none), which says why and what to do, at the final check and by `attest`
/// in a fresh clone (as RED steps left it: absent).
#[test]
fn a_conftest_beside_the_pinned_tests_way_is_refused_at_green_at_the_end_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let hook = "tests/zz/conftest.py";

    let repo = pycalc(&bin, "");
    red_mul(&repo, &command);
    repo.write(hook, NEUTER);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap_or_default(),
        format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
             tests/zz/conftest.py taken out, as the RED step's tree has none) still fails (exit \
             1): the GREEN step must make it pass. conftest.py is test code, which only a RED \
             step may write: what the GREEN step changed there is not in the RED test's run. \
             What the test needs from it (a fixture, say) belongs in the task's RED test file, \
             written by its RED step; submit-work cannot undo the GREEN step, so a RED step that \
             lacks it needs a new plan (`request-scope-reduction` once unlocked, or \
             `submit-work --contradiction`); debugging attempt 1"
        )
    );
    assert_eq!(repo.status(), "DEBUGGING");

    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py as \
         the RED step left them, and {hook} as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 1). Output:"
    );
    let failed = "FAILED tests/test_mul.py::test_mul";
    let repo = pycalc(&bin, "");
    neutered_after_green(&repo, &command, hook);
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

    let repo = pycalc(&bin, "\n[finalize]\nclean_check = false\n");
    neutered_after_green(&repo, &command, hook);
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

/// An honest GREEN step that puts the fixture its RED test needs into a `conftest.py`: the
/// RED test's run has the pinned root `conftest.py` put back as the RED step wrote it and the
/// new `tests/conftest.py` taken out, so the fixture is missing. The refusal names both, says
/// that conftest.py is test code only a RED step writes, and what to do.
#[test]
fn a_fixture_the_green_step_writes_in_a_conftest_is_named_with_what_to_do() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = pycalc(&bin, "");
    repo.write(
        "tests/test_mul.py",
        "import calc\n\n\ndef test_mul(pair):\n    assert calc.mul(*pair) == 6\n",
    );
    repo.write("conftest.py", "# fixtures come here\n");
    red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_hooks"],
        serde_json::json!(["tests/conftest.py"])
    );
    repo.write("calc.py", CALC_MUL);
    let fixture = "import pytest\n\n\n@pytest.fixture\ndef pair():\n    return (2, 3)\n";
    repo.write("conftest.py", fixture);
    repo.write("tests/conftest.py", fixture);
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap_or_default(),
        format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with \
             conftest.py as the RED step left it; tests/conftest.py taken out, as the RED step's \
             tree has none) still fails (exit 1): the GREEN step must make it pass. conftest.py \
             is test code, which only a RED step may write: what the GREEN step changed there is \
             not in the RED test's run. What the test needs from it (a fixture, say) belongs in \
             the task's RED test file, written by its RED step; submit-work cannot undo the \
             GREEN step, so a RED step that lacks it needs a new plan \
             (`request-scope-reduction` once unlocked, or `submit-work --contradiction`); \
             debugging attempt 1"
        )
    );
    assert!(
        out.stdout.contains("fixture 'pair' not found"),
        "{}",
        out.stdout
    );
}

/// Two tasks: multiply, then divide.
const TWO_TASKS: &str = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test mul", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]},
   {"taskName": "div", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test div", "status": "TODO"},
    {"type": "GREEN", "description": "implement div", "status": "TODO"}]}]}"#;

/// The honest twin: the second task's RED step adds `tests/conftest.py` with a fixture its
/// own test uses, on the first task's test's way too. Every run of either pinned test runs
/// the whole suite, so the first task's needs the fixture as the later RED step left it:
/// the PR is proven at the end and by `attest` in a fresh clone.
#[test]
fn a_fixture_a_later_task_adds_in_its_red_step_passes_every_pinned_test() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = pycalc_planned(&bin, "", TWO_TASKS);
    red_mul(&repo, &command);
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(&command, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write(
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.fixture\ndef pair():\n    return (6, 3)\n",
    );
    repo.write(
        "tests/test_div.py",
        "import calc\n\n\ndef test_div(pair):\n    assert calc.div(*pair) == 2\n",
    );
    red(&repo, &command);
    assert_eq!(
        repo.state()["red_test"]["red_hooks"],
        serde_json::json!(["conftest.py"])
    );
    repo.write(
        "calc.py",
        &format!("{CALC_MUL}\n\ndef div(a, b):\n    return a // b\n"),
    );
    crate::oracle::green(&repo, &command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["red_tests"][0]["tests"],
        serde_json::json!([PINNED]),
        "{note}"
    );
    assert_eq!(
        note["red_tests"][1]["tests"],
        serde_json::json!(["tests.test_div::test_div"]),
        "{note}"
    );
    mark_done_and_merge(&repo).expect(0);
    attest_in_clone(&repo).expect(0);
}
