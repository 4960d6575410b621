//! Per-test evidence (docs/integrity.md, "Per-test evidence"): a cheat corpus of Python
//! tests that exit 0 without their pinned test passing, and shell tests whose exit code the
//! TAP they print does not bear out, each driven through the real flow (RED, GREEN, the
//! final check, `attest` in a fresh clone) and refused, naming why; the honest twin of each
//! is accepted with the evidence it rests on named.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use crate::oracle::{MUL_PLAN, main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

pub(crate) const CALC: &str = "def add(a, b):\n    return a + b\n";
pub(crate) const CALC_MUL: &str =
    "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
pub(crate) const TEST_MUL: &str =
    "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n";
/// The pinned test, as pytest's JUnit report names it.
pub(crate) const PINNED: &str = "tests.test_mul::test_mul";

/// The venv's python running pytest on every test, as the RED and GREEN steps run it.
pub(crate) fn pytest_command(bin: &Path) -> String {
    format!(
        "{} -B -m pytest -q -p no:cacheprovider tests",
        bin.join("python").display()
    )
}

/// A Python calculator on main (`calc.add` and its test), its gate the same pytest run, and
/// the master plan's PR: multiply. `extra` is appended to the configuration.
pub(crate) fn pycalc(bin: &Path, extra: &str) -> TestRepo {
    pycalc_planned(bin, extra, MUL_PLAN)
}

/// [`pycalc`], its PR planned as `plan`.
pub(crate) fn pycalc_planned(bin: &Path, extra: &str, plan: &str) -> TestRepo {
    pycalc_with(bin, extra, plan, &[])
}

/// [`pycalc_planned`], with `files` on main too.
pub(crate) fn pycalc_with(bin: &Path, extra: &str, plan: &str, files: &[(&str, &str)]) -> TestRepo {
    pycalc_gated(&pytest_command(bin), extra, plan, files)
}

/// [`pycalc_with`], its gate the command `gate`.
pub(crate) fn pycalc_gated(
    gate: &str,
    extra: &str,
    plan: &str,
    files: &[(&str, &str)],
) -> TestRepo {
    let repo = TestRepo::empty();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.write("calc.py", CALC);
    repo.write(
        "tests/test_add.py",
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!(
            "main_branch = \"main\"\nmaster_plan = \"docs/plan.md\"\n\n[[preflight]]\nname = \"tests\"\n\
             command = \"{gate}\"\ntimeout = \"60s\"\n\n[test]\ntimeout = \"60s\"\noutput_tail = 40\n{extra}",
        ),
    );
    repo.commit_all("calculator");
    repo.submit_plan(plan).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

pub(crate) fn pytest() -> Option<PathBuf> {
    crate::managers::tool("pytest")
}

/// The RED step: the test of `mul`, failing by id in pytest's report; its id is recorded.
pub(crate) fn red_mul(repo: &TestRepo, command: &str) {
    repo.write("tests/test_mul.py", TEST_MUL);
    red(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!([PINNED])
    );
}

/// The final note on the squashed commit.
pub(crate) fn final_note(repo: &TestRepo, commit: &str) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", commit]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "final")
        .expect("a final record")
}

/// The files a cheating GREEN step writes.
type Cheat = Vec<(&'static str, String)>;

/// A GREEN step whose files are `files` (on top of the RED step's), refused: its RED test
/// passes only by exiting 0, and the refusal says why (`why` is how its reason begins).
#[track_caller]
pub(crate) fn green_refused(repo: &TestRepo, command: &str, why: &str) -> String {
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
    out.stdout
}

/// Exits 0 before the tests report, at GREEN: a code module that calls `os._exit(0)` when
/// imported, and one that writes a JUnit report saying the pinned test passed where a report
/// could be looked for (the tree, the temporary directory) and leaves: pytest wrote none
/// where it was asked, so there is no evidence. A `conftest.py` the GREEN step adds (one
/// that calls `sys.exit(0)`, one that skips every test) is not what the RED test runs with:
/// it fails as it did.
#[test]
fn a_python_test_that_exits_0_before_reporting_is_refused_at_green() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let no_report = "no per-test evidence: the runner wrote no junit report: the process ended \
                     before it reported, so the pinned test `tests.test_mul::test_mul` was not reported";
    // A `conftest.py` added at GREEN is taken out for the RED test's run (tests/cli/
    // evidence_hooks.rs): the test fails as it did at RED.
    const HOOK: &str = "hook";
    let fake = "<testsuites><testsuite name=\"pytest\" tests=\"2\"><testcase classname=\"tests.test_mul\" \
                name=\"test_mul\" /><testcase classname=\"tests.test_add\" name=\"test_add\" /></testsuite></testsuites>";
    let cases: Vec<(&str, Cheat, &str)> = vec![
        (
            "conftest sys.exit(0)",
            vec![("tests/conftest.py", "import sys\n\nsys.exit(0)\n".into())],
            HOOK,
        ),
        (
            "os._exit(0) at import",
            vec![("calc.py", format!("import os\n\nos._exit(0)\n{CALC}"))],
            no_report,
        ),
        (
            "a fake JUnit report",
            vec![(
                "calc.py",
                format!(
                    "import os, tempfile\n\nFAKE = '''{fake}'''\nfor path in ['report.xml', 'junit.xml', \
                     os.path.join(tempfile.gettempdir(), 'report.xml')]:\n    with open(path, 'w') as f:\n        \
                     f.write(FAKE)\nos._exit(0)\n"
                ),
            )],
            no_report,
        ),
        (
            "every test skipped",
            vec![(
                "tests/conftest.py",
                "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        \
                 item.add_marker(pytest.mark.skip(reason='later'))\n"
                    .into(),
            )],
            HOOK,
        ),
    ];
    for (name, files, why) in cases {
        let repo = pycalc(&bin, "");
        red_mul(&repo, &command);
        for (path, content) in &files {
            repo.write(path, content);
        }
        eprintln!("cheat: {name}");
        if why == HOOK {
            // The `conftest.py` the GREEN step added is not what its RED test runs with.
            let out = repo.submit_test(&command, None);
            out.expect(1);
            assert!(
                out.stdout.starts_with(&format!(
                    "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` \
                     (run with tests/conftest.py taken out, as the RED step's tree has none) still fails \
                     (exit 1)"
                )),
                "{}",
                out.stdout
            );
            continue;
        }
        let refusal = green_refused(&repo, &command, why);
        // Each names the pinned test, skipped or not reported.
        assert!(
            refusal.contains(&format!("the pinned test `{PINNED}`")),
            "{refusal}"
        );
    }
}

/// `mul` that marks its caller, the pinned test, xfail (pytest's imperative `xfail`). A
/// `conftest.py` that marked it would not be what the pinned test runs with (tests/cli/
/// evidence_hooks.rs).
const CALC_XFAILS: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    import pytest\n    \
                           pytest.xfail('later')\n";

/// What the final check and `attest` say of the pinned test marked xfail.
fn xfailed_refusal(command: &str) -> String {
    format!(
        "the final check of task 1's RED test (step 1.1, `{command}`, with tests/test_mul.py as the \
         RED step left them) failed: on the squashed commit its exit code is not borne out by what \
         the test runner reported: the pinned test `{PINNED}` xfailed, it did not pass"
    )
}

/// An honest GREEN, then the code taken back and the pinned test marked xfail, checkpointed:
/// the gates judge by exit code, and pytest exits 0.
fn xfailed_after_green(repo: &TestRepo, command: &str) {
    red_mul(repo, command);
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(command, None).expect(0);
    repo.write("calc.py", CALC_XFAILS);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// The pinned test marked xfail beside a test that passes: the GREEN step's run is refused
/// by the id its RED step recorded; marked after GREEN and checkpointed (the gates pass on
/// exit 0), the final check refuses the squash by the id that failed on the base, and where
/// the local final check was off and it merged, `attest` in a fresh clone refuses it.
#[test]
fn the_pinned_test_xfailed_is_refused_by_its_id() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = pycalc(&bin, "");
    red_mul(&repo, &command);
    repo.write("calc.py", CALC_XFAILS);
    green_refused(
        &repo,
        &command,
        &format!("the pinned test `{PINNED}` xfailed, it did not pass"),
    );

    let repo = pycalc(&bin, "");
    xfailed_after_green(&repo, &command);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&xfailed_refusal(&command)),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = pycalc(&bin, "\n[finalize]\nclean_check = false\n");
    xfailed_after_green(&repo, &command);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert!(
        out.stdout.contains(&xfailed_refusal(&command)),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "re-ran: RED test of step 1.1 `{command}`: exit 1 on the base, exit 0 on the final \
             tree; evidence: junit\n"
        )),
        "{}",
        out.stdout
    );
}

/// The honest twin: pinned by id at RED, passing by id at GREEN, and proven by id at the
/// end; the final note and `attest` in a fresh clone say the evidence is pytest's JUnit
/// report and name the test, and agree field by field: the RED proofs, and the existing
/// test the PR changed (`test_add` checks more now) with the gates' result with it put back.
#[test]
fn an_honest_python_pr_is_proven_by_test_id_locally_and_by_attest() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let repo = pycalc(&bin, "");
    red_mul(&repo, &command);
    repo.write("calc.py", CALC_MUL);
    repo.write(
        "tests/test_add.py",
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n    assert calc.add(0, 0) == 0\n",
    );
    crate::oracle::green(&repo, &command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["red_tests"],
        serde_json::json!([{"step": "1.1", "command": command, "paths": ["tests/test_mul.py"],
                            "base": {"code": 1}, "final": {"code": 0},
                            "evidence": "junit", "tests": [PINNED]}])
    );
    assert_eq!(
        note["changed_tests"],
        serde_json::json!({"paths": ["tests/test_add.py"], "mode": "report", "passed": true})
    );
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);

    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", "--json", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["red_tests"], note["red_tests"], "{verdict}");
    assert_eq!(verdict["changed_tests"], note["changed_tests"], "{verdict}");
    assert_eq!(verdict["changed_tests_verdict"], "reported");
    assert_eq!(
        verdict["warnings"],
        serde_json::json!([
            "the PR changes or removes tests that existed on its base (tests/test_add.py); the \
             gates pass with them as they were there; [gates] pinned_tests = \"report\" reports \
             this and does not refuse it"
        ])
    );
    assert_eq!(
        verdict["reran"][1],
        format!(
            "RED test of step 1.1 `{command}`: exit 1 on the base, exit 0 on the final tree; \
             evidence: junit ({PINNED})"
        )
    );
}

/// The RED test's exit code decides nothing that its TAP contradicts. A script that prints
/// `ok` whatever it finds and exits 1 did not fail as a test fails: no RED. A sourced file
/// whose `trap 'exit 0' EXIT` turns the test's failure into exit 0 is refused at GREEN by
/// its own `not ok`, naming the pinned test. The honest twin passes.
#[test]
fn tap_that_contradicts_the_exit_code_is_refused() {
    let repo = crate::oracle::calc();
    // Prints `ok` without running the code: exits 1 on the base, but claims a pass.
    repo.write(
        "tests/test_mul.sh",
        "echo 1..1\n. ./calc.sh\necho 'ok 1 - mul 2 3 is 6'\n[ \"$(mul 2 3)\" = 6 ]\n",
    );
    let out = repo.submit_test("sh tests/test_mul.sh", Some("FAIL"));
    out.expect(1);
    assert!(
        out.stdout.contains(
            "but it is no test that failed: the test did not fail as a test fails (its tap report \
             names no test that failed on the base: the run failed, but not as a test fails)"
        ),
        "{}",
        out.stdout
    );

    // The honest TAP test; GREEN sources a helper that traps the exit.
    let repo = crate::oracle::calc();
    let tap_test = "echo 1..1\n. ./calc.sh\nif [ \"$(mul 2 3)\" = 6 ]; then echo 'ok 1 - mul 2 3 is 6'; \
                    else echo 'not ok 1 - mul 2 3 is 6'; exit 1; fi\n";
    repo.write("tests/test_mul.sh", tap_test);
    red(&repo, "sh tests/test_mul.sh");
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["mul 2 3 is 6"])
    );
    repo.write(
        "calc.sh",
        "add() { echo $(($1 + $2)); }\ntrap 'exit 0' EXIT\n",
    );
    green_refused(
        &repo,
        "sh tests/test_mul.sh",
        "the pinned test `mul 2 3 is 6` failed, it did not pass",
    );
    repo.write(
        "calc.sh",
        &format!("add() {{ echo $(($1 + $2)); }}\n{}", crate::oracle::MUL),
    );
    crate::oracle::green(&repo, "sh tests/test_mul.sh");
}

/// A user's `CARGO_TARGET_DIR`, one build directory for every checkout, does not let the
/// squashed code's build stand in for the base's (cargo names both builds alike, and the
/// squashed one's artifacts are newer than the base's files): the honest Rust PR's final
/// check still finds its RED test failing on the base and passing on the squashed commit.
#[test]
fn a_shared_cargo_target_dir_does_not_blur_the_base_and_the_squash() {
    let Some(repo) = rust_calc() else { return };
    let command = "cargo test --offline";
    repo.write(
        "tests/mul.rs",
        "#[test]\nfn muls() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n",
    );
    red(&repo, command);
    let lib = std::fs::read_to_string(repo.path.join("src/lib.rs")).unwrap();
    repo.write(
        "src/lib.rs",
        &lib.replace(
            "pub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}",
            "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}",
        ),
    );
    crate::oracle::green(&repo, command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let shared = tempfile::tempdir().unwrap();
    let out = crate::support::Run::from(
        repo.command(crate::support::BIN, ["submit-work", "-s", "squashed"])
            .env("CARGO_TARGET_DIR", shared.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    );
    out.expect(0);
    let proof = &final_note(&repo, &squashed)["red_tests"][0];
    assert_eq!(proof["evidence"], "libtest", "{proof}");
    assert_eq!(proof["tests"], serde_json::json!(["muls"]), "{proof}");
}

/// The Rust calculator's manifest on main.
pub(crate) const RUST_MANIFEST: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

/// A Rust calculator whose `mul` adds (main's bug), its test in `tests/`, and the gate
/// `cargo test`; `None` without cargo.
pub(crate) fn rust_calc() -> Option<TestRepo> {
    rust_calc_with("", &[])
}

/// [`rust_calc`], `extra` appended to its configuration and `files` on main too.
pub(crate) fn rust_calc_with(extra: &str, files: &[(&str, &str)]) -> Option<TestRepo> {
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("\n*** SKIPPED: the Rust evidence test needs `cargo` ***\n");
        return None;
    }
    let repo = TestRepo::empty();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.write("Cargo.toml", RUST_MANIFEST);
    repo.write(".gitignore", "target/\nCargo.lock\n");
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 3), 5);\n    }\n}\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!(
            "main_branch = \"main\"\nmaster_plan = \"docs/plan.md\"\n\n[[preflight]]\nname = \"tests\"\n\
         command = \"cargo test --offline\"\ntimeout = \"300s\"\n\n[test]\ntimeout = \"300s\"\noutput_tail = 40\n{extra}",
        ),
    );
    repo.commit_all("calculator");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    Some(repo)
}

/// `std::process::exit(0)` in the code a Rust test calls ends the test binary before it
/// reports: the pinned test, recorded by id at RED from libtest's lines, is missing, and the
/// GREEN step is refused naming it. The honest twin passes and is proven by id at the end.
#[test]
fn a_rust_test_ended_by_process_exit_is_refused() {
    let Some(repo) = rust_calc() else { return };
    let command = "cargo test --offline";
    repo.write(
        "tests/mul.rs",
        "#[test]\nfn muls() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n",
    );
    red(&repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["muls"])
    );
    let lib = std::fs::read_to_string(repo.path.join("src/lib.rs")).unwrap();
    repo.write(
        "src/lib.rs",
        &lib.replace(
            "pub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}",
            "pub fn mul(a: i32, b: i32) -> i32 {\n    if a + b > 0 {\n        std::process::exit(0);\n    }\n    a * b\n}",
        ),
    );
    green_refused(
        &repo,
        command,
        "the pinned test `muls` is missing from the report",
    );
    repo.write(
        "src/lib.rs",
        &lib.replace(
            "pub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}",
            "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}",
        ),
    );
    crate::oracle::green(&repo, command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let proof = &final_note(&repo, &squashed)["red_tests"][0];
    assert_eq!(proof["evidence"], "libtest", "{proof}");
    assert_eq!(proof["tests"], serde_json::json!(["muls"]), "{proof}");
}

/// A fresh clone of `repo` with its orchestrator refs, and `attest --no-note` of main's tip.
pub(crate) fn attest_in_clone(repo: &TestRepo) -> Run {
    let merge = main_tip(repo);
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    ci.run(&["attest", "--no-note", &merge])
}

/// The TAP test of `mul`, failing on the base by its own `not ok`.
const TAP_MUL: &str = "echo 1..1\n. ./calc.sh\nif [ \"$(mul 2 3)\" = 6 ]; then echo 'ok 1 - mul 2 3 is 6'; \
                       else echo 'not ok 1 - mul 2 3 is 6'; exit 1; fi\n";

/// RED pins the TAP test `mul 2 3 is 6`; an honest GREEN; then `mul` taken back and the
/// sourced `calc.sh` made to silence the test and trap its exit, checkpointed (the gates
/// judge by exit code, and every test exits 0): the run prints its plan and nothing else.
fn tap_silenced_after_green(repo: &TestRepo) {
    repo.write("tests/test_mul.sh", TAP_MUL);
    red(repo, "sh tests/test_mul.sh");
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["mul 2 3 is 6"])
    );
    repo.write(
        "calc.sh",
        &format!("add() {{ echo $(($1 + $2)); }}\n{}", crate::oracle::MUL),
    );
    repo.submit_test("sh tests/test_mul.sh", None).expect(0);
    repo.write(
        "calc.sh",
        "add() { echo $(($1 + $2)); }\nexec >/dev/null\ntrap 'exit 0' EXIT\n",
    );
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// A test pinned by id is no pass on a run that reports nothing per test: the TAP test
/// silenced after GREEN exits 0 printing only `1..1`. The final check refuses the squash
/// naming the pinned test, and where the local check was off and it merged, `attest` in a
/// fresh clone refuses it alike.
#[test]
fn a_pinned_test_a_run_does_not_report_is_refused_at_the_end() {
    let refusal = "on the squashed commit its exit code is not borne out by what the test runner \
                   reported: the pinned test `mul 2 3 is 6` was not reported: the run reports \
                   nothing per test, and its exit code is no evidence of a test pinned by id";
    let repo = crate::oracle::calc();
    tap_silenced_after_green(&repo);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(refusal), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = crate::oracle::calc_with(
        &format!(
            "{}\n[finalize]\nclean_check = false\n",
            crate::oracle::CALC_CONFIG
        ),
        &[],
    );
    tap_silenced_after_green(&repo);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(out.stdout.contains(refusal), "{}", out.stdout);
}

/// A RED test that ends its process at import on the base (`os._exit(1)` when `calc` has no
/// `mul`), before pytest reports: nothing is pinned by id.
const TEST_MUL_EXITS: &str = "import os\nimport calc\nif not hasattr(calc, 'mul'):\n    os._exit(1)\n\n\n\
                              def test_mul():\n    assert calc.mul(2, 3) == 6\n";
/// `mul` that skips its test.
const CALC_SKIPS: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    import pytest\n    \
                          pytest.skip('later')\n";

/// RED with [`TEST_MUL_EXITS`], pinning no id; an honest GREEN; then `mul` made to skip,
/// checkpointed (pytest exits 0 with `test_add` passing).
fn skipped_after_unreported_red(repo: &TestRepo, command: &str) {
    repo.write("tests/test_mul.py", TEST_MUL_EXITS);
    red(repo, command);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::Value::Null
    );
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(command, None).expect(0);
    repo.write("calc.py", CALC_SKIPS);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// When the RED run on the base left no per-test report, the tests of the pinned file must
/// be reported passing on the final tree: its test skipped is refused at GREEN, by the final
/// check and by `attest` in a fresh clone, naming it; the honest twin is proven by the
/// pinned file's test, named in the final note.
#[test]
fn with_no_report_on_the_base_the_pinned_files_tests_must_pass() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let skipped = format!("the pinned test `{PINNED}` skipped, it did not pass");

    let repo = pycalc(&bin, "");
    repo.write("tests/test_mul.py", TEST_MUL_EXITS);
    red(&repo, &command);
    repo.write("calc.py", CALC_SKIPS);
    green_refused(&repo, &command, &skipped);

    let repo = pycalc(&bin, "");
    skipped_after_unreported_red(&repo, &command);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(&skipped), "{}", out.stdout);
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = pycalc(&bin, "\n[finalize]\nclean_check = false\n");
    skipped_after_unreported_red(&repo, &command);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(out.stdout.contains(&skipped), "{}", out.stdout);

    // The honest twin.
    let repo = pycalc(&bin, "");
    repo.write("tests/test_mul.py", TEST_MUL_EXITS);
    red(&repo, &command);
    repo.write("calc.py", CALC_MUL);
    crate::oracle::green(&repo, &command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let proof = &final_note(&repo, &squashed)["red_tests"][0];
    assert_eq!(proof["evidence"], "junit", "{proof}");
    assert_eq!(proof["tests"], serde_json::json!([PINNED]), "{proof}");
}

/// `calc.py`, imported by `tests/test_add.py` before pytest reads `tests/test_mul.py`,
/// rewrites the pinned test into one that passes, and the rewritten test, once imported,
/// puts the file's bytes back: the pinned test is reported passed, by its id and from its
/// own file, and the tree holds what it held. `mul` is gone.
const CALC_REWRITES_THE_TEST: &str = "import os\n\n_T = os.path.join(os.path.dirname(os.path.abspath(__file__)), \
     'tests', 'test_mul.py')\n_ORIG = open(_T).read()\nif 'RESTORE' not in _ORIG:\n    with open(_T, 'w') as f:\n        \
     f.write('with open(%r, \"w\") as f:\\n    f.write(%r)\\n\\n\\ndef test_mul():\\n    pass  # RESTORE\\n' % (_T, _ORIG))\n\n\n\
     def add(a, b):\n    return a + b\n";

/// RED pins `test_mul`; an honest GREEN; then `calc.py` made to rewrite the pinned test and
/// put it back ([`CALC_REWRITES_THE_TEST`]), checkpointed: the gates judge by exit code, and
/// pytest exits 0 with every test passed.
fn rewritten_after_green(repo: &TestRepo, command: &str) {
    red_mul(repo, command);
    repo.write("calc.py", CALC_MUL);
    repo.submit_test(command, None).expect(0);
    repo.write("calc.py", CALC_REWRITES_THE_TEST);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(
        std::fs::read_to_string(repo.path.join("tests/test_mul.py")).unwrap(),
        TEST_MUL,
        "the pinned test's bytes are back after each run"
    );
}

/// Code that rewrites the pinned test before its runner reads it and puts its bytes back
/// once it ran leaves a report that is pytest's own and a tree whose bytes are as they were;
/// but the file was written, and its change time says so. The final check refuses the
/// squash as a run that wrote into the final tree, naming the file, and where the local
/// final check was off and it merged, `attest` in a fresh clone refuses it alike.
#[test]
fn a_pinned_test_rewritten_and_put_back_by_the_code_it_loads_is_refused_at_the_end() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let refusal = format!(
        "the RED test of step 1.1 (`{command}`) changed files of the commit in the worktree the \
         checks run in (tests/test_mul.py): what ran after it, or what it judged, is not what \
         the commit holds."
    );
    let repo = pycalc(&bin, "");
    rewritten_after_green(&repo, &command);
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = pycalc(&bin, "\n[finalize]\nclean_check = false\n");
    rewritten_after_green(&repo, &command);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!("  - {refusal}")),
        "{}",
        out.stdout
    );
}

/// `calc.py`, imported by `tests/test_add.py` before pytest reads `tests/test_mul.py`, swaps
/// the test's directory: `tests` renamed away, a new `tests` holding a pinned test that
/// passes and links to the other files, and the fake test, once imported, puts the old
/// directory back. No file of the tree is written, nor its inode or change time moved.
const CALC_SWAPS_THE_TESTS: &str = "import os\nimport shutil\n\n_ROOT = os.path.dirname(os.path.abspath(__file__))\n\
_T = os.path.join(_ROOT, 'tests')\n_AWAY = os.path.join(_ROOT, 'tests.away')\n\
if not os.path.exists(_AWAY):\n    os.rename(_T, _AWAY)\n    os.mkdir(_T)\n    for name in os.listdir(_AWAY):\n        \
if name != 'test_mul.py':\n            os.symlink(os.path.join(_AWAY, name), os.path.join(_T, name))\n    \
with open(os.path.join(_T, 'test_mul.py'), 'w') as f:\n        f.write('import os, shutil\\nshutil.rmtree(%r)\\nos.rename(%r, %r)\\n\\n\\ndef test_mul():\\n    pass\\n' % (_T, _AWAY, _T))\n\n\n\
def add(a, b):\n    return a + b\n";

/// The directory swap of [`CALC_SWAPS_THE_TESTS`], written after an honest GREEN and
/// checkpointed (pytest exits 0, every test passed, the tree as it was): the final check
/// watches what the run moves above the test code, refuses the squash naming the directory,
/// and where the local check was off and it merged, `attest` in a fresh clone refuses it.
#[test]
fn a_test_directory_swapped_and_swapped_back_by_the_code_it_loads_is_refused_at_the_end() {
    let Some(bin) = pytest() else { return };
    let command = pytest_command(&bin);
    let refusal = format!(
        "the RED test of step 1.1 (`{command}`) changed files of the commit in the worktree the \
         checks run in (tests): what ran after it, or what it judged, is not what the commit \
         holds."
    );
    let swapped = |extra: &str| {
        let repo = pycalc(&bin, extra);
        red_mul(&repo, &command);
        repo.write("calc.py", CALC_MUL);
        repo.submit_test(&command, None).expect(0);
        repo.write("calc.py", CALC_SWAPS_THE_TESTS);
        repo.run(&["checkpoint"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "AWAITING_FINALIZATION");
        assert_eq!(
            std::fs::read_to_string(repo.path.join("tests/test_mul.py")).unwrap(),
            TEST_MUL,
            "the pinned test is back after each run"
        );
        assert!(!repo.path.join("tests.away").exists());
        squash(&repo);
        repo
    };
    let repo = swapped("");
    let main = main_tip(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main, "main did not move");

    let repo = swapped("\n[finalize]\nclean_check = false\n");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let out = attest_in_clone(&repo);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!("  - {refusal}")),
        "{}",
        out.stdout
    );
}
