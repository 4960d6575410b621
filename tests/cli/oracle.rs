//! The oracle the agent cannot write (docs/integrity.md): a cheating agent that forges
//! nothing, but chooses what its tests check or where git's bytes come from. Each test plays
//! one class of route in a shell calculator with a real gate (`sh run_tests.sh`), drives the
//! real binary to where the cheat would merge, and asserts it is refused or named before
//! main moves; the honest paths beside them still merge.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use crate::support::*;

pub(crate) const CALC_CONFIG: &str = r#"main_branch = "main"
master_plan = "docs/plan.md"

[[preflight]]
name = "tests"
command = "sh run_tests.sh"
timeout = "60s"

[hooks]
pre_push = "enforce"

[test]
timeout = "60s"
output_tail = 40
"#;

/// The project's one task: multiply. The plan names its RED and GREEN steps.
pub(crate) const MUL_PLAN: &str = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test that mul 2 3 is 6", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]}]}"#;

/// The honest test of multiplication, and the command that runs it.
pub(crate) const TEST_MUL: &str =
    ". ./calc.sh\n[ \"$(mul 2 3)\" = 6 ] || { echo \"mul 2 3: got '$(mul 2 3 2>&1)'\"; exit 1; }\n";
pub(crate) const RED_MUL: &str = "sh tests/test_mul.sh";
pub(crate) const MUL: &str = "mul() { echo $(($1 * $2)); }\n";

/// A shell calculator on main: `calc.sh` (add), its test, the gate that runs every test,
/// and a master plan with the PR to do.
pub(crate) fn calc() -> TestRepo {
    calc_with(CALC_CONFIG, &[])
}

/// [`calc`] with `config` as main's configuration and the `extra` files committed beside
/// it, before the plan pins them.
pub(crate) fn calc_with(config: &str, extra: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::empty();
    for (path, content) in extra {
        repo.write(path, content);
    }
    repo.write("calc.sh", "add() { echo $(($1 + $2)); }\n");
    repo.write(
        "tests/test_add.sh",
        ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3: got '$(add 2 3)'\"; exit 1; }\n",
    );
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\necho 'all tests pass'\n",
    );
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(".orchestrate.toml", config);
    repo.commit_all("calculator");
    repo.submit_plan(MUL_PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo
}

/// Submits `command` as the RED step and accepts the analysis.
pub(crate) fn red(repo: &TestRepo, command: &str) {
    repo.submit_test(command, Some("FAIL")).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "fails: mul is missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
}

/// GREEN passes with `command`, the checkpoint is made, and the review (none) is passed.
pub(crate) fn green(repo: &TestRepo, command: &str) {
    repo.submit_test(command, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// Squashes the branch into one commit titled as the PR.
pub(crate) fn squash(repo: &TestRepo) {
    let base = repo.git(&["merge-base", "main", "HEAD"]);
    repo.git(&["reset", "--soft", base.trim()]);
    repo.git(&[
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "-m",
        "feat: Multiply",
    ]);
}

/// After a squash that counted: the master plan marks the PR done, and get-task merges.
pub(crate) fn mark_done_and_merge(repo: &TestRepo) -> Run {
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Multiply [DONE] {}\n",
            squashed.trim()
        ),
    );
    repo.commit_all("docs: PR 1 done");
    repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
    repo.run(&["get-task"])
}

pub(crate) fn main_tip(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "main"]).trim().to_string()
}

/// A place outside the repository, as an agent's `/tmp` file would be.
pub(crate) fn outside(repo: &TestRepo, name: &str) -> PathBuf {
    repo.dir()
        .parent()
        .expect("a temp dir has a parent")
        .join(format!("{name}-{}-{:p}", std::process::id(), repo))
}

/// The final note on the squashed commit.
fn final_note(repo: &TestRepo, commit: &str) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", commit]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "final")
        .expect("a final record")
}

#[track_caller]
fn refused_at_the_squash(repo: &TestRepo, why: &str) -> String {
    let main = main_tip(repo);
    squash(repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.contains(why), "{}", out.stdout);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(main_tip(repo), main, "main did not move");
    out.stdout.clone()
}

/// The honest path: a real TDD PR is pinned, proven at the end and merged.
#[test]
fn an_honest_tdd_pr_is_proven_at_the_end_and_merged() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    let out = repo.submit_test(RED_MUL, Some("FAIL"));
    out.expect(3);
    let pending = &repo.state()["pending"];
    assert_eq!(
        pending["red_paths"],
        serde_json::json!(["tests/test_mul.sh"])
    );
    repo.run(&["get-task"])
        .expect(0)
        .says("what this RED step changed since the task began is pinned as its test:\n  tests/test_mul.sh\n");
    repo.run(&[
        "submit-work",
        "-s",
        "mul is missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    let red_test = &repo.state()["red_test"];
    assert_eq!(
        red_test["red_paths"],
        serde_json::json!(["tests/test_mul.sh"])
    );
    assert!(red_test["red_tree"].as_str().is_some_and(|t| t.len() == 40));
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["verification"],
        "the gates passed on the squashed commit in a clean worktree (tests)"
    );
    assert_eq!(
        note["red_tests"],
        serde_json::json!([{"step": "1.1", "command": RED_MUL, "paths": ["tests/test_mul.sh"],
                            "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"}])
    );
    assert!(note.get("edited_red_tests").is_none(), "{note}");
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    assert!(
        repo.git(&["log", "--format=%s", "-1", "main"])
            .starts_with("Merge branch 'feat/multiply'")
    );
    repo.run(&["audit"]).expect(0);
    repo.run(&["verify", &format!("{squashed}~1..{squashed}")])
        .expect(0);
}

/// A PR whose work is done and squashed, not yet submitted: `calc.sh` multiplies.
fn finalized_until_squash(repo: &TestRepo) {
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(repo, RED_MUL);
    squash(repo);
}

/// A PR whose work is done, squashed and checked: `calc.sh` multiplies.
pub(crate) fn finalized(repo: &TestRepo) -> String {
    finalized_until_squash(repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// The plan's two tasks: multiply, then divide, renaming `mul` to `product` on the way.
const TWO_TASKS: &str = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: Multiply", "summary": "mul",
  "verificationPlan": "the tests pass",
  "tasks": [{"taskName": "mul", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test that mul 2 3 is 6", "status": "TODO"},
    {"type": "GREEN", "description": "implement mul", "status": "TODO"}]},
   {"taskName": "div", "status": "TODO", "tdd_steps": [
    {"type": "RED", "description": "test div 6 3, and mul as product", "status": "TODO"},
    {"type": "GREEN", "description": "implement div, rename mul", "status": "TODO"}]}]}"#;

/// Two tasks, the second extending the first's test file (and renaming what it tests): each
/// RED test is proven at the end, the first with its file as the later RED left it, for the
/// code it tests now answers to that; the note names the re-pin.
#[test]
fn a_later_red_extending_an_earlier_test_is_proven_with_its_latest_pin() {
    let repo = TestRepo::empty();
    repo.write("calc.sh", "add() { echo $(($1 + $2)); }\n");
    repo.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done\n",
    );
    repo.write("tests/test_add.sh", ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n");
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    let seen = tempfile::NamedTempFile::new().unwrap();
    repo.write(
        "review.sh",
        &format!(
            "cat > '{}'\necho '{{\"findings\": []}}'\n",
            seen.path().display()
        ),
    );
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[review]\ncommand = \"sh review.sh\"\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(TWO_TASKS).expect(0);
    repo.run(&["get-task"]).expect(0);
    let red_calc = "sh tests/test_calc.sh";
    repo.write(
        "tests/test_calc.sh",
        ". ./calc.sh\n[ \"$(mul 2 3)\" = 6 ] || { echo mul; exit 1; }\n",
    );
    red(&repo, red_calc);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    repo.submit_test(red_calc, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write(
        "tests/test_calc.sh",
        ". ./calc.sh\n[ \"$(product 2 3)\" = 6 ] || { echo product; exit 1; }\n[ \"$(div 6 3)\" = 2 ] || { echo div; exit 1; }\n",
    );
    red(&repo, red_calc);
    repo.write(
        "calc.sh",
        "add() { echo $(($1 + $2)); }\nproduct() { echo $(($1 * $2)); }\ndiv() { echo $(($1 / $2)); }\n",
    );
    green(&repo, red_calc);
    let context: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(seen.path()).unwrap()).unwrap();
    assert_eq!(
        context["repinned_red_tests"],
        serde_json::json!([{"step": "2.1", "paths": ["tests/test_calc.sh"]}])
    );
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
    assert_eq!(
        final_note(&repo, &squashed)["red_tests"],
        serde_json::json!([
            {"step": "1.1", "command": red_calc, "paths": ["tests/test_calc.sh"],
             "repinned": [{"step": "2.1", "paths": ["tests/test_calc.sh"]}],
             "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"},
            {"step": "2.1", "command": red_calc, "paths": ["tests/test_calc.sh"],
             "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"}
        ])
    );
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
}

/// A test written beside the code in a file that existed before the task (a Rust module's
/// inline tests, here a shell function in `calc.sh`): the file is shared, not pinned. It is put
/// in as the RED step left it on the PR's base, where the test must fail; on the squashed
/// commit the commit's own file runs.
#[test]
fn an_inline_test_in_a_code_file_is_proven_on_the_base_with_the_file_as_red_left_it() {
    let repo = calc();
    let inline = "sh -c '. ./calc.sh && selftest_mul'";
    let selftest =
        "selftest_mul() { [ \"$(mul 2 3)\" = 6 ] || { echo \"mul 2 3: no 6\"; return 1; }; }\n";
    repo.write(
        "calc.sh",
        &format!("add() {{ echo $(($1 + $2)); }}\n{selftest}"),
    );
    repo.submit_test(inline, Some("FAIL")).expect(3);
    let pending = &repo.state()["pending"];
    assert_eq!(pending["red_shared"], serde_json::json!(["calc.sh"]));
    assert!(pending.get("red_paths").is_none(), "{pending}");
    repo.run(&["get-task"]).expect(0).says(
        "These files existed before the task and are no test files by `[gates] test_paths`, so they\nare not pinned:\n  calc.sh\n",
    );
    repo.run(&[
        "submit-work",
        "-s",
        "mul is missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write(
        "calc.sh",
        &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}{selftest}"),
    );
    green(&repo, inline);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["red_tests"],
        serde_json::json!([{"step": "1.1", "command": inline, "shared": ["calc.sh"],
                            "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"}])
    );
    assert!(note.get("reds_without_a_test").is_none(), "{note}");
}

/// The same inline test, gutted at GREEN together with the code: nothing pinned stops it (the
/// file is the code's too), and the final note names the file whose test lines went.
#[test]
fn an_inline_test_gutted_later_is_named_in_the_final_note() {
    let repo = calc();
    let inline = "sh -c '. ./calc.sh && selftest_mul'";
    repo.write(
        "calc.sh",
        "add() { echo $(($1 + $2)); }\nselftest_mul() { [ \"$(mul 2 3)\" = 6 ]; }\n",
    );
    red(&repo, inline);
    repo.write(
        "calc.sh",
        "add() { echo $(($1 + $2)); }\nmul() { echo 0; }\nselftest_mul() { true; }\n",
    );
    green(&repo, inline);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo, &squashed)["red_tests"],
        serde_json::json!([{"step": "1.1", "command": inline, "shared": ["calc.sh"],
                            "changed_after_red": ["calc.sh"],
                            "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"}])
    );
}

/// A GREEN step that skips every test (a `conftest.py` marking them all skipped) is no
/// pass of the RED test: a `conftest.py` is test code, and its run has it taken out (the RED
/// tree has none), so the test runs and fails as it did.
#[test]
fn a_green_that_skips_its_red_test_does_not_pass() {
    let Some(bin) = crate::managers::tool("pytest") else {
        return;
    };
    let repo = calc();
    repo.write(
        "tests/test_calc.py",
        "import subprocess\n\ndef mul(a, b):\n    out = subprocess.run(['sh', '-c', f'. ./calc.sh; mul {a} {b}'], capture_output=True, text=True)\n    return out.stdout.strip()\n\ndef test_mul():\n    assert mul(2, 3) == '6'\n",
    );
    let command = format!(
        "{} -B -m pytest -q -p no:cacheprovider tests/test_calc.py",
        bin.join("python").display()
    );
    red(&repo, &command);
    repo.write(
        "tests/conftest.py",
        "import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.skip(reason='later'))\n",
    );
    let out = repo.submit_test(&command, None);
    out.expect(1);
    assert!(
        out.stdout.starts_with(&format!(
            "FAILURE: `{command}` passed (exit 0), but the task's RED test `{command}` (run with tests/conftest.py taken out, as the RED step's tree has none) still fails (exit 1)"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
}

/// The commit that marks the PR done in the master plan marks this PR only: one that closes
/// another PR's heading too is refused, and the one that closes this one alone counts.
#[test]
fn a_plan_update_that_closes_another_pr_too_is_refused() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Multiply\n## PR 2: feat: Divide\n",
    );
    green(&repo, RED_MUL);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    let squashed = squashed.trim();
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Multiply [DONE] {squashed}\n## PR 2: feat: Divide [DONE]\n"
        ),
    );
    repo.commit_all("docs: PR 1 done");
    let out = repo.run(&["submit-work", "-s", "plan updated"]);
    assert!(
        out.stdout
            .contains("the commit closes 2 PRs of docs/plan.md (\"PR 1: feat: Multiply\", \"PR 2: feat: Divide\")"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
    repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);
    repo.write(
        "docs/plan.md",
        &format!("# Plan\n## PR 1: feat: Multiply [DONE] {squashed}\n## PR 2: feat: Divide\n"),
    );
    repo.commit_all("docs: PR 1 done");
    repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
}

/// A crash between the merge and its record: the next get-task finds the PR's own merge
/// commit on main and records it. A merge that brought something else along, or a commit on
/// main before it, is no merge of the workflow's, branch deleted or not.
#[test]
fn a_merge_made_before_a_crash_is_recorded_and_a_laundered_one_is_not() {
    for how in [
        "clean",
        "clean, branch deleted",
        "extra file",
        "commit before",
    ] {
        let repo = calc();
        finalized(&repo);
        repo.write(
            "docs/plan.md",
            &format!(
                "# Plan\n## PR 1: feat: Multiply [DONE] {}\n",
                repo.git(&["rev-parse", "--short=12", "HEAD"]).trim()
            ),
        );
        repo.commit_all("docs: PR 1 done");
        repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
        assert_eq!(repo.status(), "PLAN_UPDATED", "{how}");
        // What the merge does, up to the crash.
        repo.git(&["checkout", "--quiet", "main"]);
        if how == "commit before" {
            repo.write("NOTES", "unchecked\n");
            repo.commit_all("notes");
        }
        repo.git(&[
            "merge",
            "--quiet",
            "--no-ff",
            "--no-verify",
            "-m",
            "Merge branch 'feat/multiply'",
            "feat/multiply",
        ]);
        if how == "extra file" {
            repo.write("EXTRA", "rode along\n");
            repo.git(&["add", "EXTRA"]);
            repo.git(&["commit", "--quiet", "--amend", "--no-edit", "--no-verify"]);
        }
        if how != "clean" {
            repo.git(&["branch", "--quiet", "-D", "feat/multiply"]);
        }
        let merged = main_tip(&repo);
        let out = repo.run(&["get-task"]);
        out.expect(0);
        if how.starts_with("clean") {
            assert_eq!(repo.status(), "INITIALIZING", "{how}: {}", out.stdout);
            assert_eq!(main_tip(&repo), merged, "{how}: merged once");
            assert_eq!(repo.state()["main_tip"], merged.as_str(), "{how}");
            repo.run(&["audit"]).expect(0);
        } else {
            assert_eq!(repo.status(), "MERGING_BRANCH", "{how}: {}", out.stdout);
            assert!(
                out.stdout
                    .contains("the PR is not merged: main moved outside the workflow"),
                "{how}: {}",
                out.stdout
            );
        }
    }
}

/// Another clone's workflow merged its PR into main: once `sync` brings that workflow's
/// refs, this clone's workflow counts the merge as a workflow's, not as main moving outside.
/// A workflow ref written by hand that claims a commit on main as its merge does not make it
/// one: its chain does not replay.
#[test]
fn another_clones_merge_counts_once_synced_and_a_forged_claim_does_not() {
    let a = calc();
    let (_dir, bare) = a.share();
    a.run(&["sync"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    let w2 = |args: &[&str]| {
        Run::from(
            b.command(BIN, args)
                .env("GIT_ORCHESTRATE_WORKFLOW", "w2")
                .output()
                .unwrap(),
        )
    };
    w2(&["get-task"]).expect(0);
    let plan = MUL_PLAN.replace("feat: Multiply", "feat: Divide");
    let out = Run::from({
        let mut child = b
            .command(BIN, ["submit-work", "-s", "plan", "--plan", "-"])
            .env("GIT_ORCHESTRATE_WORKFLOW", "w2")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(plan.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    });
    out.expect(0);
    w2(&["get-task"]).expect(0);
    assert_eq!(b.git(&["branch", "--show-current"]).trim(), "feat/divide");
    let before = b.git(&["rev-parse", "main"]).trim().to_string();

    // Clone a merges its PR and shares main and its workflow.
    finalized(&a);
    mark_done_and_merge(&a).expect(0);
    assert_eq!(a.status(), "INITIALIZING");
    a.git(&["push", "--quiet", "origin", "main"]);
    a.run(&["sync"]).expect(0);

    b.git(&["fetch", "--quiet", "origin", "main:main"]);
    assert_ne!(b.git(&["rev-parse", "main"]).trim(), before);
    w2(&["status"])
        .expect(0)
        .says("main moved outside the workflow since")
        .says("counts once `git orchestrate sync` brings its refs");
    b.command(BIN, ["sync"])
        .env("GIT_ORCHESTRATE_WORKFLOW", "w2")
        .output()
        .unwrap();
    let out = w2(&["status"]);
    out.expect(0);
    assert!(
        !out.stdout.contains("moved outside the workflow"),
        "{}",
        out.stdout
    );

    // A commit on main, and a workflow ref written by hand that claims it as its merge.
    let main = b.git(&["rev-parse", "main"]).trim().to_string();
    let tree = b.git(&["rev-parse", "main^{tree}"]).trim().to_string();
    let sneaked = b
        .git(&["commit-tree", &tree, "-p", &main, "-m", "sneaked in"])
        .trim()
        .to_string();
    b.git(&["update-ref", "refs/heads/main", &sneaked, &main]);
    let theirs = b
        .git(&[
            "rev-parse",
            "refs/orchestrator/remotes/origin/workflows/main",
        ])
        .trim()
        .to_string();
    let state = b.git(&["show", &format!("{theirs}:state.json")]);
    let mut state: serde_json::Value = serde_json::from_str(&state).unwrap();
    state["main_tip"] = serde_json::json!(sneaked);
    let blob = b.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        serde_json::to_string_pretty(&state).unwrap().as_bytes(),
    );
    let listing = b.git(&["ls-tree", &theirs]);
    let spec: String = listing
        .lines()
        .map(|l| {
            if l.ends_with("\tstate.json") {
                format!("100644 blob {}\tstate.json\n", blob.trim())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let forged_tree = b.git_with_stdin(&["mktree"], spec.as_bytes());
    let forged = b.git(&[
        "commit-tree",
        forged_tree.trim(),
        "-p",
        &theirs,
        "-m",
        "merge: feat/divide",
    ]);
    b.git(&[
        "update-ref",
        "refs/orchestrator/workflows/evil",
        forged.trim(),
    ]);
    w2(&["status"])
        .expect(0)
        .says("main moved outside the workflow since")
        .says("sneaked in");
}

/// A test that tells the final check's two worktrees apart by git's state rather than by the
/// code (ORIG_HEAD left by a reset, what is staged, HEAD's subject where the gates ran) sees
/// the same state in both: it fails on the squashed commit too.
#[test]
fn a_test_that_tells_the_final_checks_worktrees_apart_by_git_state_is_refused() {
    for (variant, condition, make_it_pass) in [
        (
            "ORIG_HEAD",
            "git rev-parse -q --verify ORIG_HEAD >/dev/null",
            &["update-ref", "ORIG_HEAD", "HEAD"][..],
        ),
        (
            "staged",
            "! git diff --cached --quiet",
            &["add", "tests/test_mul.sh"][..],
        ),
    ] {
        let repo = calc();
        repo.git_try(&["update-ref", "-d", "ORIG_HEAD"]);
        repo.write(
            "tests/test_mul.sh",
            &format!(
                "[ \"$(git log -1 --format=%s)\" = 'feat: Multiply' ] && exit 0\n{condition} && exit 0\necho 'mul: not yet'; exit 1\n"
            ),
        );
        red(&repo, RED_MUL);
        repo.git(make_it_pass);
        green(&repo, RED_MUL);
        squash(&repo);
        let out = refused_at_the_squash(&repo, "failed: it fails on the squashed commit");
        assert!(
            out.contains("the final check of task 1's RED test (step 1.1"),
            "{variant}: {out}"
        );
    }
}

/// The workflow's own merge runs no hook: a `post-merge` hook that would move main on to a
/// commit nobody checked never runs, and main's tip is the merge as checked.
#[test]
fn the_workflows_merge_runs_no_hook() {
    let repo = calc();
    finalized(&repo);
    let marker = outside(&repo, "post-merge-ran");
    for hook in ["post-merge", "pre-merge-commit"] {
        let path = repo.path.join(".git/hooks").join(hook);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho {hook} >> '{}'\ngit update-ref refs/heads/main \"$(git commit-tree HEAD^{{tree}} -p HEAD -m unchecked)\"\n",
                marker.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    assert!(!marker.exists(), "a hook ran");
    let main = main_tip(&repo);
    assert_eq!(repo.state()["main_tip"], main.as_str());
    assert!(
        repo.git(&["log", "--format=%s", "-1", "main"])
            .starts_with("Merge branch 'feat/multiply'")
    );
    repo.run(&["status"]).expect(0);
    let out = repo.run(&["audit"]);
    out.expect(0);
}

/// A test runner's file in a directory above the scratch worktrees (a `pytest.ini` in the
/// temporary directory) would steer every run of the final check: nothing is verified
/// there until a human removes it, and doctor names it.
#[test]
fn a_runners_file_above_the_scratch_worktrees_stops_the_final_check() {
    let repo = calc();
    let planted = repo.temp_dir().join("pytest.ini");
    std::fs::create_dir_all(repo.temp_dir()).unwrap();
    std::fs::write(&planted, "[pytest]\naddopts = -p no_such\n").unwrap();
    finalized_until_squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(5);
    assert!(
        out.stderr.starts_with(&format!(
            "error: nothing can be verified in this repository: {} (in a directory above the scratch worktrees)",
            planted.display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    repo.run(&["doctor"]).says(&planted.display().to_string());
    std::fs::remove_file(&planted).unwrap();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
}

/// A symbolic link out of the repository that the PR adds, whichever step added it and
/// whether a test reads it or not, makes what the commit holds depend on a file it does not
/// hold: refused at the squash. The refusal is recorded, and the final note of the squash
/// that counts says how many came before it.
#[test]
fn a_link_out_of_the_repository_is_refused_at_the_end_and_the_refusal_is_counted() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    let target = outside(&repo, "helper-target");
    std::fs::write(&target, "true\n").unwrap();
    std::fs::create_dir_all(repo.path.join("lib")).unwrap();
    std::os::unix::fs::symlink(&target, repo.path.join("lib/helper.sh")).unwrap();
    green(&repo, RED_MUL);
    squash(&repo);
    let tip = repo.tip();
    let out = refused_at_the_squash(
        &repo,
        &format!(
            "the PR adds a symbolic link out of the repository (lib/helper.sh is a symbolic link to {})",
            target.display()
        ),
    );
    assert!(out.starts_with("FAILURE: "), "{out}");
    assert_ne!(repo.tip(), tip, "the refusal is recorded");
    repo.run(&["audit"]).expect(0);
    // The link goes; the late change is verified and checkpointed, and the squash counts.
    repo.git(&["rm", "--quiet", "lib/helper.sh"]);
    repo.run(&["checkpoint"]).expect(0);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(final_note(&repo, &squashed)["final_checks_refused"], 1);
    repo.run(&["audit"]).expect(0);
    std::fs::remove_file(&target).ok();
}

/// The RED test reads a flag outside the repository: it fails at RED, the agent sets the
/// flag, and it passes at GREEN with no code. On the PR's base it passes too.
#[test]
fn a_red_test_that_depends_on_state_outside_the_code_is_refused_at_the_end() {
    for pinned in [true, false] {
        let repo = calc();
        let flag = outside(&repo, "flag");
        let command = if pinned {
            repo.write(
                "tests/test_mul.sh",
                &format!("test -e '{}'\n", flag.display()),
            );
            RED_MUL.to_string()
        } else {
            // No file at all: the command is the whole test.
            format!("test -e '{}'", flag.display())
        };
        red(&repo, &command);
        std::fs::write(&flag, "").unwrap();
        green(&repo, &command);
        let out = refused_at_the_squash(&repo, "it passes on the PR's base");
        assert!(
            out.starts_with("FAILURE: the final check of task 1's RED test (step 1.1,"),
            "{out}"
        );
        let _ = std::fs::remove_file(&flag);
    }
}

/// A RED test that the orchestrator, as a parent process, makes pass once the agent arms it.
#[test]
fn a_red_test_that_behaves_differently_under_the_orchestrator_is_refused_at_the_end() {
    let repo = calc();
    let armed = outside(&repo, "armed");
    repo.write(
        "tests/test_mul.sh",
        &format!(
            "[ -e '{}' ] || exit 1\npid=$$\nwhile [ \"$pid\" -gt 1 ]; do\n  \
             case \"$(cat /proc/$pid/comm)\" in git-orchestrat*) exit 0;; esac\n  \
             pid=$(cut -d' ' -f4 /proc/$pid/stat)\ndone\nexit 1\n",
            armed.display()
        ),
    );
    red(&repo, RED_MUL);
    std::fs::write(&armed, "").unwrap();
    green(&repo, RED_MUL);
    refused_at_the_squash(&repo, "it passes on the PR's base");
}

/// The test file rewritten to `exit 0` at GREEN: the GREEN step is judged with the test as
/// the RED step left it, and fails.
#[test]
fn a_red_test_edited_at_green_is_put_back_for_the_rerun() {
    for edit in ["exit 0\n", ""] {
        let repo = calc();
        repo.write("tests/test_mul.sh", TEST_MUL);
        red(&repo, RED_MUL);
        if edit.is_empty() {
            std::fs::remove_file(repo.path.join("tests/test_mul.sh")).unwrap();
        } else {
            repo.write("tests/test_mul.sh", edit);
        }
        // Its own command passes; the pinned test, put back, does not.
        let command = if edit.is_empty() { "true" } else { RED_MUL };
        let out = repo.submit_test(command, None);
        out.expect(1);
        assert!(
            out.stdout.starts_with(&format!(
                "FAILURE: `{command}` passed (exit 0), but the task's RED test `{RED_MUL}` (run with tests/test_mul.sh as the RED step left it) still fails (exit 1)"
            )),
            "{}",
            out.stdout
        );
        assert_eq!(repo.status(), "DEBUGGING");
        let run = &repo.state()["last_run"];
        assert_eq!(run["verdict"], "FAILURE");
        // The rerun and its restore are in the chain, for the reviewer.
        let event = repo.git(&["cat-file", "commit", REF]);
        assert!(
            event.contains(r#""restored":["tests/test_mul.sh"]"#),
            "{event}"
        );
    }
}

/// A RED that failed on a syntax error, and a GREEN that only fixes the syntax: the analysis
/// briefing says the test could not be read, and the fixed test is not what is judged.
#[test]
fn a_red_that_failed_on_a_syntax_error_is_flagged_and_fixing_only_the_syntax_does_not_pass() {
    let repo = calc();
    repo.write("tests/test_mul.sh", "if true; then\n  true\n");
    repo.submit_test(RED_MUL, Some("FAIL")).expect(3);
    repo.run(&["get-task"])
        .expect(0)
        .says(
            "NOTE: the output shows that the test itself could not be read:\n  tests/test_mul.sh: ",
        )
        .says("Syntax error");
    repo.run(&[
        "submit-work",
        "-s",
        "it fails",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write("tests/test_mul.sh", "if true; then\n  true\nfi\n");
    repo.submit_test(RED_MUL, None)
        .expect(1)
        .says("but the task's RED test `sh tests/test_mul.sh` (run with tests/test_mul.sh as the RED step left it) still fails (exit 2)");
}

/// A GREEN step that reformats its RED test and keeps it meaning the same passes, and is
/// named to the reviewer and in the final note.
#[test]
fn a_red_test_edited_harmlessly_at_green_passes_and_is_named() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let repo = calc();
    repo.write(
        "review.sh",
        &format!(
            "cat > '{}'\necho '{{\"findings\": []}}'\n",
            seen.path().display()
        ),
    );
    let config = format!("{CALC_CONFIG}\n[review]\ncommand = \"sh review.sh\"\n");
    repo.git(&["checkout", "--quiet", "main"]);
    repo.write(".orchestrate.toml", &config);
    repo.commit_all("a reviewer");
    repo.human(&["repin"]).expect(0);
    repo.git(&["checkout", "--quiet", "feat/multiply"]);
    repo.git(&["merge", "--quiet", "--ff-only", "main"]);
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.write("tests/test_mul.sh", &format!("# mul\n{TEST_MUL}"));
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    repo.submit_test(RED_MUL, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    let context: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(seen.path()).unwrap()).unwrap();
    assert_eq!(
        context["edited_red_tests"],
        serde_json::json!([{"step": "1.2", "paths": ["tests/test_mul.sh"]}])
    );
    assert_eq!(
        context["changed_after_red"],
        serde_json::json!(["tests/test_mul.sh"])
    );
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["edited_red_tests"],
        serde_json::json!([{"step": "1.2", "paths": ["tests/test_mul.sh"]}])
    );
    // What was proven is the test as pinned; the one that merges differs, and is named.
    assert_eq!(
        note["red_tests"],
        serde_json::json!([{"step": "1.1", "command": RED_MUL, "paths": ["tests/test_mul.sh"],
                            "changed_after_red": ["tests/test_mul.sh"],
                            "base": {"code": 1}, "final": {"code": 0}, "evidence": "exit code only"}])
    );
}

/// A RED test that is a symbolic link out of the repository is not a test the repository
/// holds: refused at RED, whichever way the link leads out.
#[test]
fn a_red_test_that_links_out_of_the_repository_is_refused() {
    let repo = calc();
    let elsewhere = outside(&repo, "tests");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("test_mul.sh"), "exit 1\n").unwrap();
    std::os::unix::fs::symlink(
        elsewhere.join("test_mul.sh"),
        repo.path.join("tests/test_mul.sh"),
    )
    .unwrap();
    let out = repo.submit_test(RED_MUL, Some("FAIL"));
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "its test cannot be pinned: tests/test_mul.sh is a symbolic link to {}, out of the repository",
            elsewhere.join("test_mul.sh").display()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
    // A link to a directory outside, with the test inside it.
    std::fs::remove_file(repo.path.join("tests/test_mul.sh")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.path.join("tests/ext")).unwrap();
    repo.submit_test("sh tests/ext/test_mul.sh", Some("FAIL"))
        .expect(1)
        .says("tests/ext is a symbolic link to");
    // Relative, climbing out (to a test that is there, so that it runs).
    std::fs::remove_file(repo.path.join("tests/ext")).unwrap();
    let up = outside(&repo, "up.sh");
    std::fs::write(&up, "exit 1\n").unwrap();
    let name = up.file_name().unwrap().to_str().unwrap();
    std::os::unix::fs::symlink(format!("../../{name}"), repo.path.join("tests/test_mul.sh"))
        .unwrap();
    repo.submit_test(RED_MUL, Some("FAIL"))
        .expect(1)
        .says("tests/test_mul.sh leads above the repository's root");
}

/// RED commands that ran no test: a missing program, a missing script, a runner that ran
/// nothing. None of them is a RED.
#[test]
fn a_red_that_ran_nothing_is_failure_not_analysis() {
    let repo = calc();
    repo.write("tests/check.sh", "exit 1\n");
    for (command, why) in [
        (
            "no-such-test-runner",
            "a program it runs was not found (exit 127)",
        ),
        (
            "sh tests/test_mul.sh",
            "the test script could not be opened",
        ),
        (
            "./tests/check.sh",
            "the command could not be executed (exit 126",
        ),
    ] {
        let out = repo.submit_test(command, Some("FAIL"));
        out.expect(1);
        assert!(
            out.stdout.contains(&format!(
                "but it is no test that failed: the test did not run ({why}"
            )),
            "{command}: {}",
            out.stdout
        );
    }
    assert_eq!(repo.status(), "DEBUGGING");
}

/// pytest with a `-k` that selects nothing exits 5: no test ran, so it is no RED; and one
/// that ran and failed is.
#[test]
fn pytest_selecting_nothing_is_no_red() {
    let Some(bin) = crate::managers::tool("pytest") else {
        return;
    };
    let repo = calc();
    repo.write(
        "tests/test_calc.py",
        "import subprocess\n\ndef mul(a, b):\n    out = subprocess.run(['sh', '-c', f'. ./calc.sh; mul {a} {b}'], capture_output=True, text=True)\n    return out.stdout.strip()\n\ndef test_mul():\n    assert mul(2, 3) == '6'\n",
    );
    let python = bin.join("python");
    let typo = format!("{} -m pytest -q -k test_mull tests", python.display());
    repo.submit_test(&typo, Some("FAIL"))
        .expect(1)
        .says("the test did not run (pytest collected no test to run (exit 5))");
    let right = format!("{} -m pytest -q -k test_mul tests", python.display());
    repo.submit_test(&right, Some("FAIL")).expect(3);
}

/// A content filter makes git store other bytes than the gates saw; a replace ref shows other
/// objects; an fsmonitor hook can hide a change: verification refuses to run under any of
/// them, naming the setting, and doctor says so.
#[test]
fn settings_that_make_git_store_other_than_what_was_tested_refuse_verification() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let tip = repo.tip();
    // A clean filter through .git/info/attributes.
    repo.git(&["config", "filter.evil.clean", "sed s/x/y/"]);
    repo.write(".git/info/attributes", "calc.sh filter=evil\n");
    let out = repo.submit_test(RED_MUL, None);
    out.expect(5);
    assert!(
        out.stderr.starts_with(
            "error: nothing can be verified in this repository: filter.evil.clean (in "
        ),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("hint: Nothing was run or recorded. A human removes it: git config --unset-all filter.evil.clean"), "{}", out.stderr);
    repo.run(&["doctor"]).says("filter.evil.clean");
    repo.git(&["config", "--unset-all", "filter.evil.clean"]);

    // The pinned config blob replaced by one whose gates are `true`.
    let pinned = repo.state()["pin"]["config"].as_str().unwrap().to_string();
    let weak = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        CALC_CONFIG.replace("sh run_tests.sh", "true").as_bytes(),
    );
    repo.git(&["replace", &pinned, weak.trim()]);
    repo.submit_test(RED_MUL, None)
        .expect(5)
        .warns(&format!("refs/replace/{pinned}"));
    repo.git(&["replace", "-d", &pinned]);

    repo.git(&["config", "core.fsmonitor", "true"]);
    repo.submit_test(RED_MUL, None)
        .expect(5)
        .warns("core.fsmonitor");
    repo.git(&["config", "--unset", "core.fsmonitor"]);
    // Also when given as `git -c` (GIT_CONFIG_PARAMETERS) to git-orchestrate itself.
    let out = repo
        .command(BIN, ["submit-work", "-s", "x", "--test-command", RED_MUL])
        .env("GIT_CONFIG_PARAMETERS", "'core.worktree'='/tmp'")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(repo.tip(), tip, "nothing was recorded");
}

/// A filter driver configured for every repository (a notebook stripper in the user's
/// config, say) does not stop verification where no attribute applies it; applied by a
/// `.gitattributes` of its own in a directory, or through a macro, it does.
#[test]
fn a_filter_counts_only_where_an_attribute_applies_it() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.git(&["config", "filter.strip.clean", "sed s/x/y/"]);
    // Not refused: the test runs (and fails, mul is still missing).
    repo.submit_test(RED_MUL, None).expect(1);
    repo.run(&["doctor"])
        .says("nothing makes git store or show other than what the gates see");

    for (file, text) in [
        ("lib/.gitattributes", "*.sh filter=strip\n"),
        (
            ".gitattributes",
            "[attr]stripped filter=strip\ncalc.sh stripped\n",
        ),
    ] {
        repo.write(file, text);
        if file.starts_with("lib/") {
            // The rule applies to the files of lib/ only, and there is none yet.
            repo.submit_test(RED_MUL, None).expect(1);
            repo.write("lib/x.sh", "x\n");
        }
        repo.submit_test(RED_MUL, None)
            .expect(5)
            .warns("filter.strip.clean");
        std::fs::remove_file(repo.path.join(file)).unwrap();
    }
    std::fs::remove_file(repo.path.join("lib/x.sh")).unwrap();
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    repo.submit_test(RED_MUL, None).expect(0);
}

/// A fake `sh` earlier on PATH (inside the repository, and outside it) and a fake `git`
/// through GIT_EXEC_PATH: the gate's `sh run_tests.sh` and every git of ours are the
/// machine's, and the broken work fails.
#[test]
fn the_gates_tools_are_not_the_agents() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let fakes = outside(&repo, "fakebin");
    let log = outside(&repo, "fake-calls");
    for dir in [repo.path.join("bin"), fakes.clone()] {
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["sh", "git"] {
            let fake = dir.join(name);
            std::fs::write(
                &fake,
                format!(
                    "#!/bin/sh\necho \"{name} $*\" >> '{}'\nexit 0\n",
                    log.display()
                ),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    // Broken work: mul prints nothing. The agent's own test command is `true`.
    repo.write("calc.sh", "add() { echo $(($1 + $2)); }\nmul() { :; }\n");
    let path = std::env::join_paths(
        [repo.path.join("bin"), fakes.clone()]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let bin_dir = Path::new(BIN).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(&path))).unwrap();
    // With git's exec path pointing at the fakes too, and without: a fake `git` first on PATH
    // outside the repository is no git of ours either.
    for exec_path in [Some(&fakes), None] {
        let mut command =
            repo.command(BIN, ["submit-work", "-s", "done", "--test-command", "true"]);
        command.env("PATH", &path);
        match exec_path {
            Some(dir) => command.env("GIT_EXEC_PATH", dir),
            None => command.env_remove("GIT_EXEC_PATH"),
        };
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(
            stdout.starts_with("FAILURE: `true` passed (exit 0), but the task's RED test `sh tests/test_mul.sh` still fails"),
            "{stdout}"
        );
        assert!(
            !log.exists(),
            "a fake ran: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
}

/// Variables that load code into what a command starts (a preloaded library, a shell's
/// start-up file, exported shell functions, node's options, a module path with a pytest
/// plugin, a cargo test runner) do not reach the test command or the gates.
#[test]
fn variables_that_inject_code_do_not_reach_the_commands() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    let dump = outside(&repo, "env-dump");
    let command = format!("env > '{}'; {RED_MUL}", dump.display());
    let out = repo
        .command(
            BIN,
            ["submit-work", "-s", "done", "--test-command", &command],
        )
        .env("LD_PRELOAD", "/nonexistent/inject.so")
        .env("BASH_ENV", "/nonexistent/bashrc")
        .env("ENV", "/nonexistent/shrc")
        .env("BASH_FUNC_mul%%", "() { echo 6; }")
        .env("NODE_OPTIONS", "--require /nonexistent/x.js")
        .env("PYTHONSTARTUP", "/nonexistent/x.py")
        .env("PYTHONPATH", "/nonexistent/plugins")
        .env("PYTEST_PLUGINS", "noop")
        .env("RUSTFLAGS", "--cfg cheat")
        .env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "/bin/true")
        .env("KEPT_FOR_THE_TEST", "yes")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let env = std::fs::read_to_string(&dump).unwrap();
    for var in [
        "LD_PRELOAD=",
        "BASH_ENV=",
        "ENV=",
        "BASH_FUNC_mul",
        "NODE_OPTIONS=",
        "PYTHONSTARTUP=",
        "PYTHONPATH=",
        "PYTEST_PLUGINS=",
        "RUSTFLAGS=",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=",
    ] {
        assert!(
            !env.lines().any(|l| l.starts_with(var)),
            "{var} reached the command:\n{env}"
        );
    }
    assert!(env.lines().any(|l| l == "KEPT_FOR_THE_TEST=yes"), "{env}");
    std::fs::remove_file(&dump).ok();
}

/// Without a directory for the tools (the cache and the temporary directory both taken by
/// something that is not this user's directory), nothing runs: the commands would find `sh`
/// and `git` wherever PATH says.
#[test]
fn no_directory_for_the_tools_refuses_to_run_anything() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    let tip = repo.tip();
    let blocked = outside(&repo, "blocked");
    std::fs::create_dir_all(blocked.join("cache")).unwrap();
    std::fs::create_dir_all(blocked.join("tmp")).unwrap();
    // Files where the directories would go.
    std::fs::write(blocked.join("cache/git-orchestrate"), "").unwrap();
    let out = std::process::Command::new("id").arg("-u").output().unwrap();
    let uid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::fs::write(blocked.join(format!("tmp/git-orchestrate-{uid}")), "").unwrap();
    let out = repo
        .command(
            BIN,
            [
                "submit-work",
                "-s",
                "red",
                "--test-command",
                RED_MUL,
                "--expectation",
                "FAIL",
            ],
        )
        .env("XDG_CACHE_HOME", blocked.join("cache"))
        .env("TMPDIR", blocked.join("tmp"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("make the directory of the tools every command runs with"),
        "{stderr}"
    );
    assert_eq!(repo.tip(), tip, "nothing was recorded");
    std::fs::remove_dir_all(&blocked).ok();
}

/// main moved by a rebase onto the PR branch, by a merge of it in a linked worktree, by a
/// commit made on main there: named in status, the briefings and the audit, and no PR is
/// merged until a human repins.
#[test]
fn main_moved_outside_the_workflow_blocks_the_merge_until_a_human_repins() {
    for how in ["rebase", "worktree merge", "worktree commit"] {
        let repo = calc();
        repo.write("tests/test_mul.sh", TEST_MUL);
        red(&repo, RED_MUL);
        let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
        calc.push_str(MUL);
        repo.write("calc.sh", &calc);
        green(&repo, RED_MUL);
        let wt = outside(&repo, &format!("wt-{}", how.replace(' ', "-")));
        let in_worktree = |args: &[&str]| {
            let out = repo.command("git", args).current_dir(&wt).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        match how {
            "rebase" => {
                repo.git(&["rebase", "--quiet", "feat/multiply", "main"]);
                repo.git(&["checkout", "--quiet", "feat/multiply"]);
            }
            "worktree merge" => {
                repo.git(&["worktree", "add", "--quiet", wt.to_str().unwrap(), "main"]);
                in_worktree(&[
                    "merge",
                    "--no-ff",
                    "--quiet",
                    "-m",
                    "sneak",
                    "feat/multiply",
                ]);
            }
            _ => {
                repo.git(&["worktree", "add", "--quiet", wt.to_str().unwrap(), "main"]);
                std::fs::write(wt.join("README"), "hi\n").unwrap();
                in_worktree(&["add", "README"]);
                in_worktree(&["commit", "--quiet", "--no-verify", "-m", "docs: readme"]);
            }
        }
        let moved = main_tip(&repo);
        repo.run(&["status"])
            .expect(0)
            .says("main moved outside the workflow since");
        repo.run(&["get-task"])
            .expect(0)
            .says("no PR is merged until a human looks at them and runs `git orchestrate repin`");
        repo.run(&["audit"])
            .expect(1)
            .says("main moved outside the workflow");
        if how != "worktree commit" {
            // The PR's own commits are on main already: there is nothing left to squash onto it.
            assert_eq!(repo.git(&["rev-list", "--count", "main..HEAD"]).trim(), "0");
            continue;
        }
        squash(&repo);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        let out = mark_done_and_merge(&repo);
        out.expect(0);
        assert!(
            out.stdout
                .contains("the PR is not merged: main moved outside the workflow"),
            "{}",
            out.stdout
        );
        assert_eq!(repo.status(), "MERGING_BRANCH");
        assert_eq!(main_tip(&repo), moved, "main did not move again");
        // A human looks, and accounts for it; the merge goes through.
        repo.git(&["worktree", "remove", "--force", wt.to_str().unwrap()]);
        repo.human(&["repin"]).expect(0);
        repo.run(&["audit"]).expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "INITIALIZING");
        assert_ne!(main_tip(&repo), moved);
    }
}

/// A test command that pushes main, writes the workflow's refs or answers for a human is no
/// test: the guard refuses it before it runs, and nothing moves.
#[test]
fn a_test_command_that_moves_main_is_refused_before_it_runs() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    let main = main_tip(&repo);
    let tip = repo.tip();
    for command in [
        "git push . HEAD:main && sh tests/test_mul.sh",
        "sh tests/test_mul.sh; git update-ref refs/heads/main HEAD",
        "GIT_ORCHESTRATE_HUMAN=1 git orchestrate approve; false",
        "git commit --no-verify -qm 'checkpoint: x'; false",
        // What the guard cannot know, where it could reach main or the hooks.
        "base64 -d tests/payload.b64 | sh",
        "$(printf git) push . HEAD:main; false",
        "for h in .git/hooks/*; do : > \"$h\"; done; false",
    ] {
        let out = repo.submit_test(command, Some("FAIL"));
        out.expect(2);
        assert!(
            out.stderr.starts_with(&format!(
                "error: the test command `{command}` is refused, and nothing ran: "
            )),
            "{}",
            out.stderr
        );
    }
    assert_eq!(main_tip(&repo), main);
    assert_eq!(repo.tip(), tip);
    // The same command the gates run is a test command like any other.
    repo.submit_test("sh run_tests.sh; sh tests/test_mul.sh", Some("FAIL"))
        .expect(3);
}

/// An existing test gutted in the PR while the code it tests breaks: named in the review
/// context, and refused at the squash both under `report` (the default: until a human
/// approves the change by name, tests/cli/approve.rs) and under `enforce` (whatever a human
/// says).
#[test]
fn an_existing_test_gutted_is_named_and_refused() {
    for enforce in [false, true] {
        let repo = calc();
        if enforce {
            repo.git(&["checkout", "--quiet", "main"]);
            repo.write(
                ".orchestrate.toml",
                &format!("{CALC_CONFIG}\n[gates]\npinned_tests = \"enforce\"\n"),
            );
            repo.commit_all("enforce pinned tests");
            repo.human(&["repin"]).expect(0);
            repo.git(&["checkout", "--quiet", "feat/multiply"]);
            repo.git(&["merge", "--quiet", "--ff-only", "main"]);
        }
        repo.write("tests/test_mul.sh", TEST_MUL);
        red(&repo, RED_MUL);
        // mul right, add broken, and add's test emptied.
        repo.write("calc.sh", &format!("add() {{ echo 0; }}\n{MUL}"));
        repo.write("tests/test_add.sh", "");
        green(&repo, RED_MUL);
        if enforce {
            refused_at_the_squash(
                &repo,
                "the PR changes tests that existed when it began (tests/test_add.sh), and with them as they \
                 were then, preflight gate `tests` fails",
            );
            // No human's approval lifts `enforce`.
            repo.human(&["approve", "--test-change", "tests/test_add.sh"])
                .expect(0);
            repo.run(&["submit-work", "-s", "squashed"])
                .expect(1)
                .says("under [gates] pinned_tests = \"enforce\" a PR keeps the tests");
            continue;
        }
        refused_at_the_squash(
            &repo,
            "awaiting a human's approval by name: the PR changes tests that existed when it began \
             (tests/test_add.sh), and with them as they were then, preflight gate `tests` fails",
        );
    }
}

/// The honest change of an existing test (it checks more now) is reported, and merges.
#[test]
fn an_existing_test_improved_is_reported_and_merges() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    let mut test_add = std::fs::read_to_string(repo.path.join("tests/test_add.sh")).unwrap();
    test_add.push_str("[ \"$(add 0 0)\" = 0 ] || exit 1\n");
    repo.write("tests/test_add.sh", &test_add);
    green(&repo, RED_MUL);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&repo, &squashed)["changed_tests"],
        serde_json::json!({"paths": ["tests/test_add.sh"], "mode": "report", "passed": true})
    );
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
}

/// `--no-pr-left` while PR 2 of the master plan is open is a claim the master plan refutes.
#[test]
fn no_pr_left_while_a_pr_is_open_is_refused() {
    let repo = TestRepo::empty();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add [DONE] abc1234\n## PR 2: feat: Multiply\n",
    );
    repo.write(".orchestrate.toml", CALC_CONFIG);
    repo.commit_all("plan");
    repo.run(&["submit-work", "-s", "all done", "--no-pr-left"])
        .expect(4)
        .warns("still has 1 PR neither marked [DONE] nor claimed by another workflow: \"PR 2: feat: Multiply\"");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        false
    );
}

/// With no gate at all, the final note says the PR was not verified; `init` in a project with
/// a test runner writes it as the first gate.
#[test]
fn the_weakest_default_is_named_and_init_writes_the_projects_test_runner() {
    let repo = TestRepo::empty();
    repo.write("Cargo.toml", "[package]\nname = \"x\"\n");
    repo.commit_all("a crate");
    repo.run(&["init", "--no-hooks"])
        .expect(0)
        .says("first gate: `cargo test` (detected from Cargo.toml)");
    let config = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).unwrap();
    assert!(
        config.contains("# Detected from Cargo.toml: the project's tests are the first gate.")
            && config.contains("[[preflight]]\nname = \"tests\"\ncommand = \"cargo test\"\n"),
        "{config}"
    );

    let bare = TestRepo::with_config("master_plan = \"docs/plan.md\"\n");
    do_the_steps(&bare, "feat: Add numbers", "a.txt");
    bare.run(&["get-task"]).expect(0);
    let base = bare.git(&["merge-base", "main", "HEAD"]);
    bare.git(&["reset", "--soft", base.trim()]);
    bare.git(&["commit", "--quiet", "-m", "feat: Add numbers"]);
    let squashed = bare.git(&["rev-parse", "HEAD"]).trim().to_string();
    bare.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(
        final_note(&bare, &squashed)["verification"],
        "not verified: no gates"
    );
}

/// A test file kept in git-lfs: the clean final check fetches its content as git-lfs's own
/// filter would, so a test that reads it passes there too.
#[test]
fn a_git_lfs_file_is_fetched_for_the_final_check() {
    if std::process::Command::new("git-lfs")
        .arg("version")
        .output()
        .is_err()
    {
        panic!("git-lfs is not installed: .ci/run installs Debian's git-lfs");
    }
    let repo = calc();
    repo.git(&["lfs", "install", "--local"]);
    repo.write(
        ".gitattributes",
        "*.dat filter=lfs diff=lfs merge=lfs -text\n",
    );
    repo.write("tests/table.dat", "2 3 6\n");
    repo.write(
        "tests/test_mul.sh",
        ". ./calc.sh\nset -- $(cat tests/table.dat)\n[ \"$(mul $1 $2)\" = \"$3\" ] || { echo \"mul $1 $2: got '$(mul $1 $2 2>&1)'\"; exit 1; }\n",
    );
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    let stored = repo.git(&["cat-file", "-p", "HEAD:tests/table.dat"]);
    assert!(
        stored.starts_with("version https://git-lfs.github.com/spec/v1"),
        "{stored}"
    );
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
}

/// A test command that writes its output to a temporary directory of its own still passes.
#[test]
fn a_test_that_writes_to_a_temp_dir_passes() {
    let repo = calc();
    repo.write(
        "tests/test_mul.sh",
        &format!("out=$(mktemp)\n{TEST_MUL}(. ./calc.sh; mul 2 3) > \"$out\"\n[ \"$(cat \"$out\")\" = 6 ]\n"),
    );
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
}

/// A note forged for a commit whose tree no workflow verified is unauthenticated, never "ok".
#[test]
fn verify_calls_a_note_the_chain_does_not_back_unauthenticated() {
    let repo = calc();
    repo.write("hack.txt", "never verified\n");
    repo.git(&["add", "hack.txt"]);
    repo.git(&[
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        "checkpoint: forged",
    ]);
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let note = format!(
        r#"{{"v":1,"kind":"checkpoint","workflow":"main","step":"1.2","tree":"{tree}","preflight":{{"passed":true,"cached":false,"gates":[{{"name":"tests","exit":0,"ms":5}}]}},"tool":"git-orchestrate 0.1.0"}}"#
    );
    repo.git(&["notes", "--ref=orchestrator", "add", "-m", &note, "HEAD"]);
    let out = repo.run(&["verify", "--json"]);
    out.expect(1);
    assert_eq!(out.json()["checkpoints"][0]["status"], "unauthenticated");
    repo.run(&["verify"]).expect(1).says("UNAUTHENTICATED");
}

/// No note, no merge: the squashed commit's record deleted before the merge.
#[test]
fn a_pr_without_its_notes_is_not_merged() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let main = main_tip(&repo);
    repo.git(&["notes", "--ref=orchestrator", "remove", &squashed]);
    let out = mark_done_and_merge(&repo);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!(
            "the PR is not merged: 1 of its commits carries no verification note in refs/notes/orchestrator: {squashed} (the squashed commit)"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(main_tip(&repo), main);
}

/// On main after the merge the checkpoints are squashed away: `verify` (its default range
/// there is the last merge) checks the squashed commit by the chain that accepted it and its
/// final note, whose adequacy it shows file by file. A removed note, and a final note copied onto another commit, fail.
#[test]
fn verify_on_main_checks_the_squashed_commit() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
    let plan_commit = repo.git(&["rev-parse", "HEAD^2"]).trim().to_string();
    let out = repo.run(&["verify"]);
    out.expect(0);
    let subject = repo
        .git(&["log", "-1", "--format=%s", &squashed])
        .trim()
        .to_string();
    pretty_assertions::assert_eq!(
        out.stdout,
        format!(
            "0 checkpoint commits and 1 squashed PR commit in HEAD^..HEAD (3 commits looked at)\n  \
             ok       {} {subject}\n           squashed PR \"{subject}\" (workflow main): the gates \
             passed on the squashed commit in a clean worktree (tests); 1 checkpoint folded in\n           \
             adequacy of task 1 (step 1.1): killed 4 of 4 mutants (100%, made by the built-in \
             mutator)\n             \
             file calc.sh: killed 4 of 4 mutants (100%)\n  \
             noattest {} Merge branch 'feat/multiply'\n           no attestation: `git orchestrate \
             attest` in CI or the server hook gives one\n",
            &squashed[..12],
            &main_tip(&repo)[..12]
        )
    );
    let json = repo.run(&["verify", "--json"]).expect(0).json();
    assert_eq!(json["squashed"][0]["commit"], squashed.as_str());
    assert_eq!(json["squashed"][0]["status"], "verified");
    assert_eq!(json["failures"], 0);

    let note = repo.git(&["notes", "--ref=orchestrator", "show", &squashed]);
    repo.git(&["notes", "--ref=orchestrator", "remove", &squashed]);
    let out = repo.run(&["verify", "--json"]);
    out.expect(1);
    assert_eq!(out.json()["squashed"][0]["status"], "missing");
    repo.run(&["verify"]).expect(1).says("MISSING");

    // The note put back, and a copy on the master-plan commit: the chain accepted only one.
    repo.git(&[
        "notes",
        "--ref=orchestrator",
        "add",
        "-m",
        note.trim(),
        &squashed,
    ]);
    repo.git(&[
        "notes",
        "--ref=orchestrator",
        "add",
        "-m",
        note.trim(),
        &plan_commit,
    ]);
    let out = repo.run(&["verify", "--json"]);
    out.expect(1);
    let json = out.json();
    let statuses: Vec<(String, String)> = json["squashed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["commit"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            (plan_commit.clone(), "unauthenticated".to_string()),
            (squashed.clone(), "verified".to_string()),
        ]
    );
    // A chain that accepts the squash from a state made up on the way (a copy of the real
    // squash transition on a root that is no new workflow) vouches for nothing: with the real
    // workflow gone, the squash is unauthenticated.
    let log = repo.git(&["log", "--format=%H %s", crate::support::REF]);
    let squash_transition = log
        .lines()
        .find(|l| l.split_once(' ').unwrap().1.starts_with("squash:"))
        .unwrap()
        .split_once(' ')
        .unwrap()
        .0
        .to_string();
    let parent = repo
        .git(&["rev-parse", &format!("{squash_transition}^")])
        .trim()
        .to_string();
    let root = repo
        .git(&[
            "commit-tree",
            &format!("{parent}^{{tree}}"),
            "-m",
            "made up",
        ])
        .trim()
        .to_string();
    let copy = repo
        .git(&["cat-file", "commit", &squash_transition])
        .replace(&format!("parent {parent}"), &format!("parent {root}"));
    let forged = repo
        .git_with_stdin(
            &["hash-object", "-t", "commit", "-w", "--stdin"],
            copy.as_bytes(),
        )
        .trim()
        .to_string();
    repo.git(&["update-ref", "refs/orchestrator/workflows/zz", &forged]);
    let real = repo
        .git(&["rev-parse", crate::support::REF])
        .trim()
        .to_string();
    repo.git(&["update-ref", "-d", crate::support::REF]);
    let out = repo.run(&["verify", "--json", &format!("{squashed}^..{squashed}")]);
    out.expect(1);
    assert_eq!(out.json()["squashed"][0]["status"], "unauthenticated");
    repo.git(&["update-ref", crate::support::REF, &real]);
    repo.git(&["update-ref", "-d", "refs/orchestrator/workflows/zz"]);

    // An attestation is worth what signs it: unsigned, nothing backs it; signed by a key
    // main lists as a verifier, it counts; a FAILED verdict fails verify when the verifier signed it.
    repo.git(&["notes", "--ref=orchestrator", "remove", &plan_commit]);
    repo.run(&["attest"]).expect(0);
    let json = repo.run(&["verify", "--json"]).expect(0).json();
    assert_eq!(
        json["attested"][0]["attestation"]["status"],
        "unauthenticated"
    );
    let keys = outside(&repo, "verifier-keys");
    std::fs::create_dir_all(&keys).unwrap();
    let key = keys.join("verifier");
    let other = keys.join("agent");
    for k in [&key, &other] {
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "k", "-f"])
            .arg(k)
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
    }
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    repo.write(
        ".orchestrate/allowed_signers",
        &format!("ci@example namespaces=\"git-orchestrate-attest\" {public}"),
    );
    repo.commit_all("verifier key");
    let merge = repo.git(&["rev-parse", "HEAD~1"]).trim().to_string();
    let key_arg = key.display().to_string();
    repo.run(&["attest", "--signing-key", &key_arg, &merge])
        .expect(0);
    let range = format!("{merge}^..{merge}");
    let json = repo.run(&["verify", "--json", &range]).expect(0).json();
    assert_eq!(
        json["attested"][0]["attestation"],
        serde_json::json!({"status": "passed", "verifier": "ci@example"})
    );
    let other_arg = other.display().to_string();
    repo.run(&["attest", "--signing-key", &other_arg, &merge])
        .expect(0);
    let json = repo.run(&["verify", "--json", &range]).expect(0).json();
    assert_eq!(
        json["attested"][0]["attestation"]["status"],
        "unauthenticated"
    );
    let failed = repo
        .git(&["notes", "--ref=orchestrator-attest", "show", &merge])
        .lines()
        .next()
        .unwrap()
        .replace("\"PASSED\"", "\"FAILED\"");
    // Unsigned, a FAILED verdict is anyone's word too; signed by the verifier, it fails.
    repo.git(&[
        "notes",
        "--ref=orchestrator-attest",
        "add",
        "-f",
        "-m",
        &failed,
        &merge,
    ]);
    let json = repo.run(&["verify", "--json", &range]).expect(0).json();
    assert_eq!(
        json["attested"][0]["attestation"]["status"],
        "unauthenticated"
    );
    let line = keys.join("failed.txt");
    std::fs::write(&line, format!("{failed}\n")).unwrap();
    let signed = std::process::Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "git-orchestrate-attest", "-f"])
        .arg(&key)
        .arg(&line)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{signed:?}");
    let signature = std::fs::read_to_string(line.with_extension("txt.sig")).unwrap();
    let note = keys.join("note.txt");
    std::fs::write(&note, format!("{failed}\n{signature}")).unwrap();
    repo.git(&[
        "notes",
        "--ref=orchestrator-attest",
        "add",
        "-f",
        "-F",
        note.to_str().unwrap(),
        &merge,
    ]);
    repo.run(&["verify", &range]).expect(1).says("FAILED");

    // Off main, the default range is still what the branch adds.
    repo.git(&["checkout", "--quiet", "-b", "side"]);
    repo.run(&["verify"])
        .expect(0)
        .says("0 checkpoint commits in refs/heads/main..HEAD (0 commits looked at)");
}

/// A master plan over 8 MiB in the master-plan commit (the agent wrote it) is refused unread:
/// its size comes from the object's header.
#[test]
fn a_master_plan_over_the_cap_is_refused_unread() {
    let repo = calc();
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    let mut calc = std::fs::read_to_string(repo.path.join("calc.sh")).unwrap();
    calc.push_str(MUL);
    repo.write("calc.sh", &calc);
    green(&repo, RED_MUL);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let padding = "padding line of the plan\n".repeat(400_000);
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Multiply [DONE] {}\n{padding}",
            squashed.trim()
        ),
    );
    repo.commit_all("docs: PR 1 done");
    let out = repo.run(&["submit-work", "-s", "plan updated"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("bytes, over the limit of 8 MiB; it is not read"),
        "{}",
        out.stdout
    );
}

/// An honest test command that sets its executable test's mode again before it runs it
/// (`chmod +x tests/test_mul.sh && ./tests/test_mul.sh`), as shell projects do, moves the
/// pinned test's change time in every run, and writes nothing: the final check takes it, and
/// `attest` in a fresh clone passes the merge. What counts as a write of the pinned test
/// though its bytes are back is a write (its modification time, the watch's events), not a
/// mode set again.
#[test]
fn a_test_command_that_sets_its_tests_mode_again_is_proven_at_the_end() {
    use std::os::unix::fs::PermissionsExt as _;
    let command = "chmod +x tests/test_mul.sh && ./tests/test_mul.sh";
    let repo = calc();
    repo.write("tests/test_mul.sh", &format!("#!/bin/sh\n{TEST_MUL}"));
    std::fs::set_permissions(
        repo.path.join("tests/test_mul.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    red(&repo, command);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(&repo, command);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(0);
    assert_eq!(
        repo.git(&["ls-tree", &squashed, "tests/test_mul.sh"])
            .split_whitespace()
            .next(),
        Some("100755")
    );
    mark_done_and_merge(&repo).expect(0);
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", &main_tip(&repo)]);
    out.expect(0);
    assert!(out.stdout.starts_with("PASSED "), "{}", out.stdout);
}
