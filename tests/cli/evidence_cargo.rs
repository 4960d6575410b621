//! What cargo reads around a pinned Rust test (docs/integrity.md, "Per-test evidence"), with
//! real cargo: the manifests' target declarations and its configuration are test code, which
//! RED steps write. A GREEN step that makes a binary print libtest's lines for the pinned
//! test (a `[[test]]` declared `harness = false` that prints a fake `Running tests/calc.rs`
//! and `test muls ... ok`, or a `.cargo/config.toml` runner, git-ignored or not, that prints
//! them for the pinned test's binary) is refused at GREEN, by the final check and by
//! `attest` in a fresh clone; one that adds a dependency to `Cargo.toml` is not.

use pretty_assertions::assert_eq;

use crate::evidence::{RUST_MANIFEST, attest_in_clone, final_note, rust_calc, rust_calc_with};
use crate::oracle::{main_tip, mark_done_and_merge, red, squash};
use crate::support::*;

const COMMAND: &str = "cargo test --offline";
/// The configuration that lets a refused squash merge, for `attest` to judge.
const NO_CLEAN_CHECK: &str = "\n[finalize]\nclean_check = false\n";
/// The pinned Rust test, in `tests/calc.rs`.
const MULS: &str = "#[test]\nfn muls() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n";
const MUL_ADDS: &str = "pub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}";
const MUL_MULTIPLIES: &str = "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}";

/// A `harness = false` binary's `main`: what libtest and cargo would print for the pinned
/// test passing in `tests/calc.rs`.
const FORGER: &str = "fn main() {\n    println!(\"     Running tests/calc.rs (target/debug/deps/calc-0)\");\n    \
                      println!();\n    println!(\"running 1 test\");\n    println!(\"test muls ... ok\");\n    \
                      println!();\n    println!(\"test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\");\n}\n";

/// A runner for every test binary that prints the pinned test passing for `calc`'s and
/// runs the others.
const RUNNER: &str = "case \"$1\" in\n  */calc-*)\n    echo 'running 1 test'\n    echo 'test muls ... ok'\n    \
                      echo 'test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out'\n    \
                      exit 0 ;;\nesac\nexec \"$@\"\n";

/// Files a step writes: each path and its content.
type Files = Vec<(&'static str, String)>;

/// The cheats: the files a GREEN step writes (main's `Cargo.toml` edited), and how
/// the refusal names the RED test's run.
fn cheats() -> Vec<(&'static str, Files, &'static str)> {
    let declared = |extra: &str| {
        RUST_MANIFEST.replace(
            "edition = \"2021\"\n",
            &format!("edition = \"2021\"\n{extra}"),
        )
    };
    vec![
        (
            "the pinned test's target moved to a harness = false file",
            vec![
                (
                    "Cargo.toml",
                    declared(
                        "autotests = false\n\n[[test]]\nname = \"calc\"\npath = \"tests/fake.rs\"\nharness = false\n",
                    ),
                ),
                ("tests/fake.rs", FORGER.to_string()),
            ],
            "Cargo.toml as the RED step left it",
        ),
        (
            "a new harness = false target, the automatic ones off",
            vec![
                (
                    "Cargo.toml",
                    declared(
                        "autotests = false\n\n[[test]]\nname = \"aaa\"\npath = \"tests/aaa.rs\"\nharness = false\n",
                    ),
                ),
                ("tests/aaa.rs", FORGER.to_string()),
            ],
            "Cargo.toml as the RED step left it",
        ),
        (
            "a runner in .cargo/config.toml",
            vec![
                (
                    ".cargo/config.toml",
                    "[target.'cfg(all())']\nrunner = \"sh runner.sh\"\n".to_string(),
                ),
                ("runner.sh", RUNNER.to_string()),
            ],
            ".cargo/config.toml taken out, as the RED step's tree has none",
        ),
        (
            "a runner in a .cargo/config.toml git ignores",
            vec![
                (".gitignore", "target/\nCargo.lock\n.cargo/\n".to_string()),
                (
                    ".cargo/config.toml",
                    "[target.'cfg(all())']\nrunner = \"sh runner.sh\"\n".to_string(),
                ),
                ("runner.sh", RUNNER.to_string()),
            ],
            ".cargo/config.toml taken out, as the RED step's tree has none",
        ),
    ]
}

/// RED pins `muls`, failing in `tests/calc.rs`, with the manifests on its way as hooks.
fn red_muls(repo: &TestRepo) {
    repo.write("tests/calc.rs", MULS);
    red(repo, COMMAND);
    assert_eq!(
        repo.state()["red_test"]["red_tests"],
        serde_json::json!(["muls"])
    );
    assert_eq!(
        repo.state()["red_test"]["red_hooks"],
        serde_json::json!(["Cargo.toml", "tests/Cargo.toml"])
    );
}

/// Each way a GREEN step makes a binary print the pinned test's libtest lines, with `mul`
/// still adding: its own run passes (`test muls ... ok`, after a `Running tests/calc.rs`
/// line), but the RED test's run has cargo's files as the RED tree has them, builds and runs
/// `tests/calc.rs`, and `muls` fails: refused, naming the file put back and why.
#[test]
fn a_binary_that_forges_the_pinned_tests_libtest_lines_is_refused_at_green() {
    for (name, files, with) in cheats() {
        let Some(repo) = rust_calc() else { return };
        red_muls(&repo);
        for (path, content) in &files {
            repo.write(path, content);
        }
        let out = repo.submit_test(COMMAND, None);
        assert_eq!(out.code, 1, "{name}: {}", out.stdout);
        assert_eq!(
            out.stdout.lines().next().unwrap_or_default(),
            format!(
                "FAILURE: `{COMMAND}` passed (exit 0), but the task's RED test `{COMMAND}` (run \
                 with {with}) still fails (exit 101): the GREEN step must make it pass. cargo's \
                 configuration is test code, which only a RED step may write: what the GREEN \
                 step changed there is not in the RED test's run. What the test needs from it (a \
                 fixture, say) belongs in the task's RED test file, written by its RED step; \
                 submit-work cannot undo the GREEN step, so a RED step that lacks it needs a new \
                 plan (`request-scope-reduction` once unlocked, or `submit-work \
                 --contradiction`); debugging attempt 1"
            ),
            "{name}"
        );
        assert!(
            out.stdout.contains("test muls ... FAILED"),
            "{name}: {}",
            out.stdout
        );
        assert_eq!(repo.status(), "DEBUGGING", "{name}");
    }
}

/// RED pins `muls`; an honest GREEN; then `mul` taken back and `files` written, checkpointed
/// (the gate, `cargo test` itself, passes with the forged lines).
fn forged_after_green(repo: &TestRepo, files: &[(&str, String)]) {
    red_muls(repo);
    let lib = std::fs::read_to_string(repo.path.join("src/lib.rs")).unwrap();
    repo.write("src/lib.rs", &lib.replace(MUL_ADDS, MUL_MULTIPLIES));
    repo.submit_test(COMMAND, None).expect(0);
    repo.write("src/lib.rs", &lib);
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// The forged lines after GREEN are no pass of the pinned test at the end: the final check
/// and `attest` in a fresh clone run it with `Cargo.toml` as RED steps left it, else as the
/// base has it (no `harness = false` target: `tests/calc.rs` built and run), and it fails.
#[test]
fn a_harness_false_target_written_after_red_is_refused_at_the_end_and_by_attest() {
    let (_, files, _) = cheats().swap_remove(0);
    let refusal = format!(
        "the final check of task 1's RED test (step 1.1, `{COMMAND}`, with tests/calc.rs as the \
         RED step left them, and Cargo.toml as RED steps left it, else as the base has it) \
         failed: it fails on the squashed commit (exit 101). Output:"
    );
    let failed = "test muls ... FAILED";

    let Some(repo) = rust_calc() else { return };
    forged_after_green(&repo, &files);
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

    let Some(repo) = rust_calc_with(NO_CLEAN_CHECK, &[]) else {
        return;
    };
    forged_after_green(&repo, &files);
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

/// A build script a GREEN step adds (code, not cargo's configuration) that rewrites the
/// pinned test's source before cargo compiles it, into a `muls` that passes and, once run,
/// writes the file's bytes back: libtest reports `muls` passed from `tests/calc.rs`, and the
/// tree holds what it held.
const BUILD_RS_REWRITES_THE_TEST: &str = "fn main() {\n    let dir = std::env::var(\"CARGO_MANIFEST_DIR\").unwrap();\n    \
     let path = format!(\"{dir}/tests/calc.rs\");\n    let orig = std::fs::read_to_string(&path).unwrap();\n    \
     if !orig.contains(\"RESTORE\") {\n        let fake = format!(\n            \
     \"#[test]\\nfn muls() {{\\n    std::fs::write({path:?}, {orig:?}).unwrap(); // RESTORE\\n}}\\n\"\n        );\n        \
     std::fs::write(&path, fake).unwrap();\n    }\n}\n";

/// The pinned test rewritten by a build script and put back when it ran, after GREEN and
/// checkpointed (the gate passes): the final check refuses the squash as a run that wrote
/// into the final tree, naming the file, and `attest` in a fresh clone refuses it alike.
#[test]
fn a_build_script_that_rewrites_the_pinned_test_and_puts_it_back_is_refused_at_the_end() {
    let files = vec![("build.rs", BUILD_RS_REWRITES_THE_TEST.to_string())];
    let refusal = format!(
        "the RED test of step 1.1 (`{COMMAND}`) changed files of the commit in the worktree the \
         checks run in (tests/calc.rs): what ran after it, or what it judged, is not what the \
         commit holds."
    );

    let Some(repo) = rust_calc() else { return };
    forged_after_green(&repo, &files);
    assert_eq!(
        std::fs::read_to_string(repo.path.join("tests/calc.rs")).unwrap(),
        MULS,
        "the pinned test's bytes are back after each run"
    );
    let main = main_tip(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!("FAILURE: {refusal}")),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main, "main did not move");

    let Some(repo) = rust_calc_with(NO_CLEAN_CHECK, &[]) else {
        return;
    };
    forged_after_green(&repo, &files);
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

/// The honest twin: a GREEN step that adds a dependency to `Cargo.toml` (a crate main has,
/// by path) and multiplies with it changes no target cargo builds: accepted at GREEN, proven
/// by id at the end and by `attest` in a fresh clone.
#[test]
fn a_dependency_a_green_step_adds_to_cargo_toml_passes() {
    let helper = [
        (
            "helper/Cargo.toml",
            "[package]\nname = \"helper\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "helper/src/lib.rs",
            "pub fn times(a: i32, b: i32) -> i32 {\n    a * b\n}\n",
        ),
    ];
    let Some(repo) = rust_calc_with("", &helper) else {
        return;
    };
    red_muls(&repo);
    let manifest = std::fs::read_to_string(repo.path.join("Cargo.toml")).unwrap();
    repo.write(
        "Cargo.toml",
        &format!("{manifest}\n[dependencies]\nhelper = {{ path = \"helper\" }}\n"),
    );
    let lib = std::fs::read_to_string(repo.path.join("src/lib.rs")).unwrap();
    repo.write(
        "src/lib.rs",
        &lib.replace(
            MUL_ADDS,
            "pub fn mul(a: i32, b: i32) -> i32 {\n    helper::times(a, b)\n}",
        ),
    );
    crate::oracle::green(&repo, COMMAND);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let proof = &final_note(&repo, &squashed)["red_tests"][0];
    assert_eq!(proof["evidence"], "libtest", "{proof}");
    assert_eq!(proof["tests"], serde_json::json!(["muls"]), "{proof}");
    mark_done_and_merge(&repo).expect(0);
    attest_in_clone(&repo).expect(0);
}
