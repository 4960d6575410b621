//! cargo-mutants makes the mutants of a Rust task (docs/integrity.md, "Adequacy by
//! mutation"): cargo-mutants 27.1.0 from crates.io, installed once into the cache outside the
//! clone, on the PATH the tests run with; it only lists the mutants, and the task's test runs
//! on each. cargo is required: without it, or with the registry unreachable, the tests fail,
//! they are not skipped. Each mutant rebuilds the tiny crate, so the budget is four.

use pretty_assertions::assert_eq;

use crate::adequacy::{final_note, submit_with_path};
use crate::oracle::{MUL_PLAN, green, main_tip, red, squash};
use crate::support::*;

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

/// A test that checks almost nothing: that `mul` returns.
const WEAK_TEST: &str = "#[test]\nfn mul_returns() {\n    let _ = calc::mul(2, 3);\n}\n";

/// The honest test of the same code.
const HONEST_TEST: &str = "#[test]\nfn muls() {\n    assert_eq!(calc::mul(2, 3), 6);\n}\n";

const RED: &str = "cargo test --offline --test mul";

/// The task's `mul` in src/lib.rs, with `before` above it (an attribute of the PR's).
fn with_mul(before: &str) -> String {
    format!("{LIB}\n{before}pub fn mul(a: i32, b: i32) -> i32 {{\n    a * b\n}}\n")
}

/// A Rust calculator on main (no dependencies, built offline), `[verify]` set to `verify`
/// with four mutants a task (unless `verify` says how many), and the PR to add `mul` under way: RED with `test` (and
/// `pr_files` written beside it), GREEN with `code` written, squashed.
fn rust_task(
    verify: &str,
    test: &str,
    pr_files: &[(&str, &str)],
    code: &[(&str, &str)],
) -> TestRepo {
    let repo = TestRepo::empty();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write(".gitignore", "target/\nCargo.lock\n");
    repo.write("src/lib.rs", LIB);
    repo.write(
        "tests/add.rs",
        "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!(
            "main_branch = \"main\"\nmaster_plan = \"docs/plan.md\"\n\n[[preflight]]\n\
             name = \"tests\"\ncommand = \"cargo test --offline\"\ntimeout = \"300s\"\n\n\
             [test]\ntimeout = \"300s\"\noutput_tail = 40\n\n[verify]\n{}{verify}\n",
            if verify.contains("max_mutants") {
                ""
            } else {
                "max_mutants = 4\n"
            }
        ),
    );
    repo.commit_all("calculator");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    for (path, text) in pr_files {
        repo.write(path, text);
    }
    repo.write("tests/mul.rs", test);
    red(&repo, RED);
    for (path, text) in code {
        repo.write(path, text);
    }
    green(&repo, RED);
    squash(&repo);
    repo
}

/// `submit-work` with cargo-mutants on the PATH; fails, loudly, when cargo cannot install it.
fn submit_with_cargo_mutants(repo: &TestRepo) -> Run {
    let bin = crate::managers::tool("cargo-mutants")
        .expect("the cargo-mutants tests need `cargo` to install cargo-mutants (is it installed?)");
    submit_with_path(repo, bin)
}

#[test]
fn cargo_mutants_names_the_survivors_of_a_test_that_checks_almost_nothing_in_report() {
    let repo = rust_task(
        "adequacy = \"report\"",
        WEAK_TEST,
        &[],
        &[("src/lib.rs", &with_mul(""))],
    );
    submit_with_cargo_mutants(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "cargo-mutants", "mutants": 4,
            "killed": 0, "not_run": 1, "survived": [
                "src/lib.rs:6 `a * b` → `-1`", "src/lib.rs:6 `a * b` → `0`",
                "src/lib.rs:6 `a * b` → `1`", "src/lib.rs:6 `*` → `+`"],
            "files": [{"path": "src/lib.rs", "mutants": 4, "killed": 0, "not_run": 1}]}])
    );
}

/// What the PR could tell cargo-mutants to skip changes nothing: its `.cargo/mutants.toml`
/// (the file excluded, every mutant of `mul` excluded by name) is not read, and its
/// `#[cfg_attr(never, mutants::skip)]` on the function it wrote (which compiles without the
/// `mutants` crate, and which cargo-mutants reads as a skip whatever the condition) is
/// neutralised. The same mutants are made, and the squash is refused in `enforce`.
#[test]
fn cargo_mutants_is_not_told_by_the_prs_files_to_skip_its_lines_and_enforce_refuses() {
    let config = "exclude_globs = [\"src/lib.rs\"]\nexclude_re = [\"mul\"]\n";
    // A test path: a file a RED step writes elsewhere is code, mutated by the built-in
    // mutator (cargo-mutants mutates Rust only), and this test is of cargo-mutants' mutants.
    let repo = rust_task(
        "adequacy = \"enforce\"\nmin_killed = 0.5\n\n[gates]\n\
         test_paths = [\"tests/**\", \".cargo/mutants.toml\"]",
        WEAK_TEST,
        &[(".cargo/mutants.toml", config)],
        &[(
            "src/lib.rs",
            &with_mul("#[cfg_attr(never, mutants::skip)]\n"),
        )],
    );
    let main = main_tip(&repo);
    let out = submit_with_cargo_mutants(&repo);
    out.expect(1);
    assert_eq!(
        out.stdout,
        "FAILURE: task 1's RED test (step 1.1, `cargo test --offline --test mul`) killed 0 of 4 \
         mutants of the code the task wrote (made by cargo-mutants), below the 50% [verify] \
         min_killed: it does not check what the code does. Surviving mutants (the test still \
         passes with each):\n- src/lib.rs:7 `a * b` → `-1`\n- src/lib.rs:7 `a * b` → `0`\n\
         - src/lib.rs:7 `a * b` → `1`\n- src/lib.rs:7 `*` → `+`\nStrengthen the test so it \
         fails on them (a test in a new RED step), then squash again\nstate: \
         AWAITING_FINALIZATION · next: fix what the FAILURE line says and submit again (`git \
         orchestrate get-task` repeats the instructions); if it cannot be fixed, hand it to a \
         human with `git orchestrate escalate --report FILE`\n"
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(&repo), main);
}

/// The honest test of the same code, skip attribute and all, kills every mutant made and the
/// squash passes `enforce`.
#[test]
fn an_honest_rust_test_kills_cargo_mutants_mutants_and_passes_enforce() {
    let repo = rust_task(
        "adequacy = \"enforce\"\nmin_killed = 0.5",
        HONEST_TEST,
        &[],
        &[(
            "src/lib.rs",
            &with_mul("#[cfg_attr(never, mutants::skip)]\n"),
        )],
    );
    submit_with_cargo_mutants(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "cargo-mutants", "mutants": 4,
            "killed": 4, "not_run": 1,
            "files": [{"path": "src/lib.rs", "mutants": 4, "killed": 4, "not_run": 1}]}])
    );
}

/// Lines cargo-mutants makes no mutant of in a file it reads (an `unsafe fn`, which it skips
/// whole) get the built-in mutator's beside its own: the special case hidden there (`a == 1000`
/// answers 0) survives, and `enforce` at `min_killed = 1.0` refuses what cargo-mutants alone
/// (every mutant of the one-line `mul` killed) would have let through.
#[test]
fn lines_cargo_mutants_skips_get_the_builtin_mutators_mutants() {
    let lib = format!(
        "{LIB}\npub fn mul(a: i32, b: i32) -> i32 {{\n    unsafe {{ checked(a, b) }}\n}}\n\n\
         unsafe fn checked(a: i32, b: i32) -> i32 {{\n    if a == 1000 {{\n        return 0;\n    \
         }}\n    a * b\n}}\n"
    );
    let repo = rust_task(
        "adequacy = \"enforce\"\nmin_killed = 1.0\nmax_mutants = 12",
        HONEST_TEST,
        &[],
        &[("src/lib.rs", &lib)],
    );
    let out = submit_with_cargo_mutants(&repo);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: task 1's RED test (step 1.1, `cargo test --offline --test mul`) killed "
        ) && out.stdout.contains("(made by cargo-mutants)")
            && out.stdout.contains("- src/lib.rs:10 `1000` → "),
        "{}",
        out.stdout
    );
}

/// Code in a file cargo-mutants does not read (brought in by `include!`, never reached by a
/// `mod`) is not left unmeasured beside code it does mutate: the built-in mutator measures the
/// task, and the note says why.
#[test]
fn code_cargo_mutants_does_not_read_is_measured_by_the_builtin_mutator() {
    let lib = format!("{LIB}\npub fn one() -> i32 {{\n    1\n}}\n\ninclude!(\"mul.rs\");\n");
    let repo = rust_task(
        "adequacy = \"report\"",
        WEAK_TEST,
        &[],
        &[
            ("src/lib.rs", &lib),
            (
                "src/mul.rs",
                "pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n",
            ),
        ],
    );
    submit_with_cargo_mutants(&repo).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin",
            "tool_error": "cargo-mutants does not read src/mul.rs (no `mod` of the crate reaches it)",
            "mutants": 4, "killed": 2, "not_run": 1,
            "survived": ["src/lib.rs:6 `1` → `0`", "src/mul.rs:2 `*` → `/`"],
            "files": [{"path": "src/lib.rs", "mutants": 3, "killed": 2},
                {"path": "src/mul.rs", "mutants": 1, "killed": 0, "not_run": 1}]}])
    );
}

/// Off the machine the mutants are the verifier's own: the agent's machine has no
/// cargo-mutants, so the local check and the server hook measure with the built-in mutator
/// (whose `*` → `/` survives and whose removed line does not build: half killed, the pinned
/// `min_killed`), and the merge lands; `attest` in a CI clone whose PATH has cargo-mutants
/// runs it (confined where attest confines) and FAILS the merge, naming its survivors.
#[test]
fn attest_with_cargo_mutants_on_its_path_fails_what_the_builtin_mutator_let_through() {
    use crate::attest::{Server, push};
    // The PATH the tests run with stands for the agent's machine and the server's.
    assert!(
        !std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|dir| dir.join("cargo-mutants").exists()),
        "this test needs cargo-mutants off the PATH it is run with"
    );
    let repo = rust_task(
        "adequacy = \"enforce\"\nmin_killed = 0.5",
        WEAK_TEST,
        &[],
        &[("src/lib.rs", &with_mul(""))],
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo)["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "builtin", "mutants": 2,
            "killed": 1, "survived": ["src/lib.rs:6 `*` → `/`"],
            "files": [{"path": "src/lib.rs", "mutants": 2, "killed": 1}]}])
    );
    crate::oracle::mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let ci = crate::adequacy::ci_clone(&repo, &server);
    let bin = crate::managers::tool("cargo-mutants")
        .expect("the cargo-mutants tests need `cargo` to install cargo-mutants (is it installed?)");
    let path = std::env::join_paths(
        [
            std::path::Path::new(BIN).parent().unwrap().to_path_buf(),
            bin,
        ]
        .into_iter()
        .chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    let out = Run::from(
        ci.command(BIN, ["attest", "--no-note", "--json", &merge])
            .env("PATH", path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    );
    out.expect(1);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(
        verdict["adequacy"],
        serde_json::json!([{"task": 1, "step": "1.1", "tool": "cargo-mutants", "mutants": 4,
            "killed": 0, "not_run": 1, "survived": [
                "src/lib.rs:6 `a * b` → `-1`", "src/lib.rs:6 `a * b` → `0`",
                "src/lib.rs:6 `a * b` → `1`", "src/lib.rs:6 `*` → `+`"],
            "files": [{"path": "src/lib.rs", "mutants": 4, "killed": 0, "not_run": 1}]}])
    );
    assert_eq!(verdict["passed"], false);
    assert_eq!(
        verdict["reasons"],
        serde_json::json!([
            "task 1's RED test (step 1.1, `cargo test --offline --test mul`) killed 0 of 4 \
             mutants of the code the task wrote (made by cargo-mutants), below the 50% [verify] \
             min_killed: it does not check what the code does. Surviving mutants (the test \
             still passes with each):\n- src/lib.rs:6 `a * b` → `-1`\n- src/lib.rs:6 `a * b` \
             → `0`\n- src/lib.rs:6 `a * b` → `1`\n- src/lib.rs:6 `*` → `+`\nStrengthen the \
             test so it fails on them (a test in a new RED step), then squash again"
        ])
    );
}
