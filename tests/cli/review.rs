//! Review, finalization and merge end to end (docs/architecture.md, "Code review", "Finalization and merge"), with real review scripts, real
//! squashes and real merge conflicts.

use pretty_assertions::assert_eq;

use crate::support::{CONFIG, RED, REF, TestRepo, do_the_steps, one_task_plan};

/// One task: RED then GREEN, with the PR title `title`.
/// A repository whose review runs `review.sh` (committed on main) with `review` settings.
fn repo_with_reviewer(script: &str, review: &str) -> TestRepo {
    let repo = TestRepo::with_config(&format!(
        "{CONFIG}\n[review]\ncommand = \"sh review.sh\"\n{review}"
    ));
    repo.write("review.sh", script);
    repo.commit_all("reviewer");
    repo
}

const FINDS_IN_ROUND_1: &str = r#"ctx=$(cat)
case "$ctx" in
  *'"round":1'*) echo '{"findings": [
      {"priority": "P1", "file": "add.txt", "line": 1, "issue": "the content is a placeholder", "suggestion": "write the real thing"},
      {"priority": "P3", "issue": "no changelog entry"}]}' ;;
  *) echo '{"findings": [{"priority": "P3", "issue": "no changelog entry"}]}' ;;
esac
"#;

#[test]
fn blocking_findings_become_a_task_the_plan_is_kept_and_the_next_round_approves() {
    let repo = repo_with_reviewer(FINDS_IN_ROUND_1, "");
    do_the_steps(&repo, "feat: Add", "add.txt");
    let plan_before = repo.git(&["show", &format!("{REF}:pr.json")]);

    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Done for you: ran code review round 1: 2 findings, 1 blocking.\n"),
        "{brief}"
    );
    assert!(
        brief.contains(
            "STEP 2.1 (GREEN) of task 2/2 \"Address code review feedback (round 1)\":\n  Fix: [P1] add.txt:1: the content is a placeholder (suggestion: write the real thing)\n"
        ),
        "{brief}"
    );
    // The fix has no RED step: the test command that last passed (the GREEN step's) is
    // filled in, the test that must still pass.
    assert!(
        brief.contains(
            "\n  git orchestrate submit-work --summary \"<what you did>\" --test-command 'test -e add.txt' --expectation PASS\n"
        ),
        "{brief}"
    );
    // The plan is kept: the first task untouched, one task appended.
    let before: serde_json::Value = serde_json::from_str(&plan_before).unwrap();
    let after: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    assert_eq!(after["tasks"][0], before["tasks"][0]);
    assert_eq!(after["tasks"].as_array().unwrap().len(), 2);
    let review: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:review.json")])).unwrap();
    assert_eq!(review["round"], 1);
    assert_eq!(review["findings"].as_array().unwrap().len(), 2);
    assert_eq!(
        review["findings"][0]["priority"], "P1",
        "sorted by priority"
    );
    assert_eq!(
        repo.git(&["log", "-2", "--format=%s", REF]),
        "review: CODE_REVIEW -> EXECUTING_TDD\nreview-start: EXECUTING_TDD -> CODE_REVIEW\n"
    );

    // The fix passes; the next get-task reviews again (round 2), which only notes a P3.
    repo.write("add.txt", "the real thing\n");
    repo.submit_test("test -e add.txt", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Done for you: ran code review round 2: 1 finding, 0 blocking.\n"),
        "{brief}"
    );
    assert!(
        brief.starts_with("git-orchestrate · workflow main · AWAITING_FINALIZATION\n"),
        "{brief}"
    );
    assert_eq!(
        repo.state()["last_review"],
        serde_json::json!({"round": 2, "ran": true, "findings": 1, "blocking": 0})
    );
}

#[test]
fn a_review_that_crashes_prints_garbage_or_hangs_is_an_error_never_an_approval() {
    for (script, review, expected) in [
        (
            "cat >/dev/null; echo 'reviewer exploded' >&2; exit 3\n",
            "",
            "the review command failed: `sh review.sh` ended with exit 3; it said:\nreviewer exploded",
        ),
        (
            "cat >/dev/null; echo 'LGTM, ship it'\n",
            "",
            "the review command printed something that is not a review: its output is not JSON",
        ),
        (
            "cat >/dev/null; echo '{\"findings\": [{\"priority\": \"urgent\", \"issue\": \"x\"}]}'\n",
            "",
            "findings[0].priority: expected \"P0\", \"P1\", \"P2\" or \"P3\"",
        ),
        (
            "cat >/dev/null; sleep 30; echo '{\"findings\": []}'\n",
            "timeout = \"1s\"\n",
            "the review command failed: `sh review.sh` ended with killed after the 1s timeout",
        ),
    ] {
        let repo = repo_with_reviewer(script, review);
        do_the_steps(&repo, "feat: Add", "add.txt");
        let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
        assert!(
            brief.contains("The automated code review could not run, so the PR is NOT approved:"),
            "{brief}"
        );
        let state = repo.state();
        let error = state["last_error"].as_str().unwrap_or_default();
        assert!(
            error.contains(expected),
            "expected {expected:?} in:\n{error}"
        );
        assert_eq!(state["status"], "CODE_REVIEW", "{script}");
        assert!(state.get("last_review").is_none(), "{state}");
        // The next get-task retries; the error stays until the review runs.
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.status(), "CODE_REVIEW");
        assert_eq!(repo.submit_test("true", None).code, 4);
    }
}

#[test]
fn dimensions_are_reviewed_in_parallel_and_their_findings_merged() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let script = format!(
        r#"ctx=$(cat)
dim=$(printf '%s' "$ctx" | sed -n 's/.*"dimension":"\([a-z]*\)".*/\1/p')
echo "start $dim" >> '{log}'
sleep 1
echo "end $dim" >> '{log}'
echo "{{\"findings\": [{{\"priority\": \"P2\", \"file\": \"add.txt\", \"issue\": \"seen by every dimension\"}}, {{\"priority\": \"P3\", \"issue\": \"only $dim\"}}]}}"
"#,
        log = log.path().display()
    );
    let repo = repo_with_reviewer(&script, "dimensions = [\"correctness\", \"security\"]\n");
    do_the_steps(&repo, "feat: Add", "add.txt");
    repo.run(&["get-task"]).expect(0);
    let lines: Vec<String> = std::fs::read_to_string(log.path())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    // Both started before either ended: they ran at the same time.
    assert!(
        lines[0].starts_with("start") && lines[1].starts_with("start"),
        "{lines:?}"
    );
    let review: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:review.json")])).unwrap();
    let findings = review["findings"].as_array().unwrap();
    assert_eq!(
        findings.len(),
        3,
        "the shared finding is merged: {findings:?}"
    );
    assert_eq!(findings[0]["issue"], "seen by every dimension");
    assert_eq!(
        findings[0]["dimensions"],
        serde_json::json!(["correctness", "security"])
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
}

/// The config file is protected (docs/integrity.md): a PR that changes it verifies nothing,
/// so no review sees one.
#[test]
fn a_pr_that_changes_the_config_does_not_verify() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let script = format!(
        "ctx=$(cat)\ncase \"$ctx\" in *'\"config_changed\":true'*) echo changed > '{0}' ;; *) echo unchanged > '{0}' ;; esac\necho '{{\"findings\": []}}'\n",
        seen.path().display()
    );
    let repo = repo_with_reviewer(&script, "");
    repo.submit_plan(&one_task_plan("feat: Add", "add.txt"))
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    let config = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).unwrap();
    repo.write(
        ".orchestrate.toml",
        &config.replace("output_tail = 20", "output_tail = 30"),
    );
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("true", None)
        .expect(1)
        .says("but the working tree changes protected paths (.orchestrate.toml)");
    repo.git(&["checkout", "HEAD", "--", ".orchestrate.toml"]);
    repo.submit_test("true", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(std::fs::read_to_string(seen.path()).unwrap(), "unchanged\n");
}

#[test]
fn used_up_review_rounds_lead_to_escalation() {
    let always = "cat >/dev/null; echo '{\"findings\": [{\"priority\": \"P0\", \"issue\": \"still wrong\"}]}'\n";
    let repo = repo_with_reviewer(always, "max_rounds = 1\n");
    do_the_steps(&repo, "feat: Add", "add.txt");
    repo.run(&["get-task"]).expect(0);
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "# help\n");
    out.expect(4);
    assert_eq!(repo.status(), "EXECUTING_TDD");
    repo.submit_test("true", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);

    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("The code review keeps finding blocking issues: 1 review round ended with blocking findings, the most review.max_rounds allows."),
        "{brief}"
    );
    assert!(
        brief.contains("Your new primary goal\nis to escalate for external help."),
        "{brief}"
    );
    assert_eq!(repo.state()["pending"]["kind"], "escalation");
    repo.run_with_stdin(
        &["escalate", "--report", "-"],
        "# the review never passes\n",
    )
    .expect(10);
    assert_eq!(repo.state()["halt"]["resume_to"], "CODE_REVIEW");
    repo.human(&[
        "resume",
        "--guidance",
        "the P0 is a false positive; I changed the reviewer",
    ])
    .expect(0);
    assert_eq!(repo.status(), "CODE_REVIEW");
    assert_eq!(
        (
            repo.state().get("blocked_rounds"),
            &repo.state()["review_round"]
        ),
        (None, &serde_json::json!(1)),
        "the rounds start again; their numbers go on"
    );
}

#[test]
fn the_human_gate_waits_for_approve_or_reject() {
    let clean = "cat >/dev/null; echo '{\"findings\": []}'\n";
    let repo = repo_with_reviewer(clean, "human = true\n");
    do_the_steps(&repo, "feat: Add", "add.txt");
    let out = repo.run(&["get-task"]);
    out.expect(10);
    assert!(
        out.stdout
            .contains("The PR now waits for a human's approval."),
        "{}",
        out.stdout
    );
    assert_eq!(repo.state()["pending"]["kind"], "approval");
    // The agent cannot approve its own work by submitting, nor by answering for the human:
    // it runs without a terminal.
    assert_eq!(repo.run(&["submit-work", "-s", "done"]).code, 4);
    let tip = repo.tip();
    for args in [&["approve"][..], &["reject", "--comment", "fine"]] {
        let out = repo.run(args);
        out.expect(4);
        assert_eq!(
            out.stderr,
            format!(
                "error: {0} is a human's answer, and stdin is not a terminal: an agent must not answer its own halt or review\n\
                 hint: Ask a human to run `git orchestrate {0}` in a terminal.\n",
                args[0]
            )
        );
    }
    assert_eq!(repo.tip(), tip, "nothing was written");

    let out = repo.human(&["reject", "--comment", "name the file after the feature"]);
    out.expect(0);
    // `log` shows the comment, not only that the PR was rejected.
    let log = repo.run(&["log", "-n", "1"]).expect(0).stdout.clone();
    assert!(
        log.contains("    a human rejected the PR:\n    name the file after the feature\n"),
        "{log}"
    );
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "Fix: [P1] (from a human, through GIT_ORCHESTRATE_HUMAN) name the file after the feature"
        ),
        "{brief}"
    );
    repo.submit_test("true", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(10);
    repo.human(&["approve"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    assert_eq!(
        repo.human(&["approve"]).code,
        4,
        "nothing waits for approval any more"
    );

    // Each answer is recorded with how it was authorised: in the log and the final note.
    let message = repo.git(&["log", "-1", "--format=%B", REF]);
    assert!(
        message
            .trim_end()
            .ends_with("Orchestrator-Human: GIT_ORCHESTRATE_HUMAN"),
        "{message}"
    );
    let log = repo.run(&["log", "-n", "1"]).expect(0).stdout.clone();
    assert!(
        log.contains("    answered by a human: GIT_ORCHESTRATE_HUMAN=1, without a terminal\n"),
        "{log}"
    );
    let entries = repo.run(&["log", "--json"]).expect(0).json();
    assert_eq!(entries["entries"][0]["human"], "GIT_ORCHESTRATE_HUMAN");
    assert_eq!(entries["entries"][1]["human"], serde_json::Value::Null);
    squash(&repo, "feat: Add");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let note = repo.git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    let note: serde_json::Value = serde_json::from_str(note.trim()).unwrap();
    let answers: Vec<(&str, &str)> = note["human_answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["event"].as_str().unwrap(), a["by"].as_str().unwrap()))
        .collect();
    assert_eq!(
        answers,
        vec![
            ("reject", "GIT_ORCHESTRATE_HUMAN"),
            ("approve", "GIT_ORCHESTRATE_HUMAN")
        ]
    );
}

/// At a terminal (a real pty, from `script`), the answer is recorded as given there.
#[test]
fn an_answer_at_a_terminal_is_recorded_as_such() {
    let clean = "cat >/dev/null; echo '{\"findings\": []}'\n";
    let repo = repo_with_reviewer(clean, "human = true\n");
    do_the_steps(&repo, "feat: Add", "add.txt");
    repo.run(&["get-task"]).expect(10);
    let out = repo
        .command(
            "script",
            [
                "-qec",
                &format!("{} approve", crate::support::BIN),
                "/dev/null",
            ],
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    let message = repo.git(&["log", "-1", "--format=%B", REF]);
    assert!(
        message.trim_end().ends_with("Orchestrator-Human: terminal"),
        "{message}"
    );
}

/// A repository at AWAITING_FINALIZATION, with no review command.
fn ready_to_squash() -> TestRepo {
    let repo = TestRepo::new();
    // The PR's heading names its plan's title: a PR marks only its own heading done.
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Add\n");
    repo.commit_all("docs: the plan names PR 1 as the plan does");
    do_the_steps(&repo, "feat: Add", "add.txt");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "Done for you: no review command is configured, so nothing was reviewed automatically."
        ),
        "{brief}"
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    repo
}

fn squash(repo: &TestRepo, title: &str) {
    let base = repo.git(&["merge-base", "main", "HEAD"]);
    repo.git(&["reset", "--soft", base.trim()]);
    repo.git(&["commit", "--quiet", "-m", title]);
}

#[test]
fn the_squash_check_wants_one_commit_the_title_and_the_verified_tree() {
    let repo = ready_to_squash();
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "one more"]);
    let tip = repo.tip();
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: the branch has 2 commits over main; it must have exactly one titled "
        ),
        "{}",
        out.stdout
    );
    // The way out it offers runs no `$(…)` (some clients refuse such a line).
    assert!(
        out.stdout.contains(
            "Let the orchestrator squash them and check the squash: `git orchestrate submit-work \
             --summary \"squashed\" --squash`"
        ) && !out.stdout.contains("$("),
        "{}",
        out.stdout
    );
    assert_eq!(repo.tip(), tip, "a failed check leaves the state unchanged");
    let json = repo
        .run(&["--json", "submit-work", "-s", "squashed"])
        .expect(1)
        .json();
    assert_eq!(json["status"], "FAILURE");
    assert_eq!(json["state"], "AWAITING_FINALIZATION");
    assert!(
        json["summary"]
            .as_str()
            .unwrap()
            .starts_with("the branch has 2 commits over main"),
        "the reason reaches JSON readers too: {json}"
    );

    squash(&repo, "wip");
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(out.stdout.starts_with("FAILURE: the squashed commit is titled \"wip\"; it must be titled with the PR title, \"feat: Add\""), "{}", out.stdout);

    // A squash that smuggles in an unverified change.
    repo.write("sneaky.txt", "not verified\n");
    repo.git(&["add", "sneaky.txt"]);
    repo.git(&["commit", "--quiet", "--amend", "-m", "feat: Add"]);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("is not the tree that last passed verification"),
        "{}",
        out.stdout
    );
    assert_eq!(repo.tip(), tip);

    repo.git(&["rm", "--quiet", "sneaky.txt"]);
    repo.git(&["commit", "--quiet", "--amend", "-m", "feat: Add"]);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(0);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(repo.state()["final_commit"], head.as_str());
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");

    // The squashed commit carries the final record, with the checkpoints folded in.
    let note = repo.git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    let note: serde_json::Value = serde_json::from_str(note.trim()).unwrap();
    assert_eq!(note["kind"], "final");
    assert_eq!(note["pr"], "feat: Add");
    assert_eq!(note["branch"], "feat/add");
    assert_eq!(note["steps"], 2);
    assert_eq!(note["config_changed"], false);
    assert_eq!(note["tree"], repo.git(&["rev-parse", "HEAD^{tree}"]).trim());
    assert_eq!(
        note["review"],
        serde_json::json!({"rounds": 1, "ran": false, "findings": []})
    );
    let checkpoints = note["checkpoints"].as_array().unwrap();
    assert_eq!(checkpoints.len(), 1, "{note}");
    assert_eq!(checkpoints[0]["subject"], "checkpoint: 1.2 create add.txt");
    assert_eq!(checkpoints[0]["note"]["preflight"]["passed"], true);
    assert_eq!(checkpoints[0]["note"]["step"], "1.2");
}

#[test]
fn the_master_plan_commit_must_change_only_the_plan_and_name_the_squash() {
    let repo = ready_to_squash();
    squash(&repo, "feat: Add");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(&format!(
            "and write the squashed commit's hash next to it:\n\n  {squashed}\n"
        )),
        "{brief}"
    );

    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Add [DONE]\n");
    repo.write("other.txt", "x\n");
    repo.commit_all("docs: plan");
    let out = repo.run(&["submit-work", "-s", "updated"]);
    out.expect(1);
    assert!(out.stdout.contains("FAILURE: the commit changes docs/plan.md, other.txt; it must change only the master plan, docs/plan.md"), "{}", out.stdout);

    repo.git(&["reset", "--quiet", "--hard", &squashed]);
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Add [DONE]\n");
    repo.commit_all("docs: plan");
    let out = repo.run(&["submit-work", "-s", "updated"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("docs/plan.md does not mention the squashed commit"),
        "{}",
        out.stdout
    );

    repo.write(
        "docs/plan.md",
        &format!("# Plan\n## PR 1: feat: Add [DONE] {}\n", &squashed[..7]),
    );
    repo.git(&["commit", "--quiet", "--amend", "-am", "docs: plan"]);
    repo.run(&["submit-work", "-s", "updated"]).expect(0);
    assert_eq!(repo.status(), "PLAN_UPDATED");
}

/// Finalizes and updates the master plan of the PR in progress, up to PLAN_UPDATED.
fn finalize(repo: &TestRepo, title: &str, pr: &str) {
    squash(repo, title);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    let plan = std::fs::read_to_string(repo.path.join("docs/plan.md")).unwrap();
    let marked = plan.replace(
        &format!("## {pr}\n"),
        &format!("## {pr} [DONE] {}\n", squashed.trim()),
    );
    assert_ne!(plan, marked, "{pr} is in the master plan");
    repo.write("docs/plan.md", &marked);
    repo.commit_all(&format!("docs: {pr} done"));
    repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
}

#[test]
fn only_the_checked_master_plan_commit_is_merged() {
    let repo = ready_to_squash();
    finalize(&repo, "feat: Add", "PR 1: feat: Add");
    let checked = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(repo.state()["plan_commit"], checked.as_str());
    // Work added after the checks would ride into main unverified.
    repo.write("sneaky.txt", "never verified\n");
    repo.commit_all("one more thing");
    let out = repo.run(&["get-task"]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!(
            "the branch feat/add moved after finalization was checked: its tip is {}, but the checked \
             master-plan commit is {checked}. Only checked work is merged: put the branch back with \
             `git branch -f feat/add {checked}` (check out main first), or ask a human",
            repo.git(&["rev-parse", "HEAD"]).trim()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "MERGING_BRANCH");
    assert!(
        !repo.git_try(&["cat-file", "-e", "main:sneaky.txt"]).0,
        "nothing reached main"
    );
    repo.git(&["reset", "--quiet", "--hard", &checked]);
    let out = repo.run(&["get-task"]);
    out.expect(0);
    assert!(
        out.stdout
            .contains("merged feat/add into main and deleted the branch."),
        "{}",
        out.stdout
    );
    assert_eq!(
        repo.git(&["rev-parse", "main^2"]).trim(),
        checked,
        "main merged exactly the checked commit"
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", "main"]).trim(),
        "Merge branch 'feat/add'"
    );
    assert_eq!(
        repo.git(&["ls-tree", "--name-only", REF]),
        "state.json\n",
        "the merged PR leaves no plan, review or output behind"
    );
}

#[test]
fn without_gates_the_squash_is_held_to_the_last_checkpoint_however_it_was_made() {
    let repo = TestRepo::with_config("master_plan = \"docs/plan.md\"\n");
    repo.submit_plan(&crate::support::PLAN.replace(
        r#",
    {"taskName": "sub", "status": "TODO", "tdd_steps": [
      {"type": "RED", "description": "test sub", "status": "TODO"},
      {"type": "GREEN", "description": "implement sub", "status": "TODO"}]}"#,
        "",
    ))
    .expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "why", "--analysis-decision", "SUCCESS"])
        .expect(0);
    // GREEN: checkpointed by the command.
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    // REFACTOR: checkpointed by hand, and recorded by get-task.
    repo.write("add.sh", "# add\necho 5\n");
    repo.write("notes.txt", "tidied\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.commit_all("checkpoint: tidy add");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("recorded checkpoint"), "{brief}");
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    squash(&repo, "feat: Add numbers");
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(0);
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
    assert_eq!(
        repo.git(&["show", "--format=", "--name-only", "HEAD"]),
        "add.sh\nnotes.txt\n",
        "the squash holds every step's work"
    );
}

#[test]
fn finalization_is_checked_on_the_pr_branch_only() {
    let repo = ready_to_squash();
    squash(&repo, "feat: Add");
    repo.git(&["checkout", "--quiet", "main"]);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: HEAD is on main, not on the PR branch feat/add (state AWAITING_FINALIZATION); \
         finalization checks the PR branch\n\
         hint: Run `git checkout feat/add`, then `git orchestrate submit-work` again.\n"
    );
}

#[test]
fn a_merge_conflict_halts_leaves_main_clean_and_resume_takes_over_after_a_manual_merge() {
    let repo = ready_to_squash();
    finalize(&repo, "feat: Add", "PR 1: feat: Add");
    // Meanwhile main changed the same file.
    let branch = repo.git(&["branch", "--show-current"]).trim().to_string();
    repo.git(&["checkout", "--quiet", "main"]);
    repo.write("add.txt", "main's own version\n");
    repo.commit_all("main: add.txt");
    repo.git(&["checkout", "--quiet", &branch]);
    // A commit on main that no workflow merged blocks the merge until a human accounts for it.
    repo.run(&["get-task"])
        .expect(0)
        .says("main moved outside the workflow since")
        .says("1 commit no workflow merged");
    repo.human(&["repin"]).expect(0);

    let out = repo.run(&["get-task"]);
    out.expect(10);
    assert!(
        out.stdout.contains(&format!(
            "ERROR: Automated merge failed due to a conflict. Please resolve the conflict in branch '{branch}' and merge it to main manually."
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.state()["halt"]["reason"], "merge_conflict");
    // main is clean: the merge was aborted.
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(!repo.path.join(".git/MERGE_HEAD").exists());

    let out = repo.human(&["resume"]);
    out.expect(4);
    assert!(
        out.stderr.starts_with(&format!(
            "error: {branch} is not merged into main yet (state HALTED)"
        )),
        "{}",
        out.stderr
    );

    // The human merges by hand.
    let (merged, _) = repo.git_try(&["merge", "--no-ff", "--no-edit", &branch]);
    assert!(!merged, "the merge conflicts");
    repo.write("add.txt", "both versions, reconciled\n");
    repo.git(&["add", "add.txt"]);
    repo.git(&["commit", "--quiet", "--no-edit"]);
    let out = repo.human(&["resume"]);
    out.expect(0);
    assert!(
        out.stdout.starts_with(&format!(
            "resumed: {branch} is merged and deleted; HALTED -> INITIALIZING"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "INITIALIZING");
    assert_eq!(repo.git(&["branch", "--list", &branch]), "");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("GOAL: plan the next pull request."),
        "{brief}"
    );
}

#[test]
fn two_prs_in_a_row_from_one_master_plan_are_both_merged_with_every_transition_in_the_log() {
    let repo = TestRepo::new();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add\n## PR 2: feat: Sub\n",
    );
    repo.commit_all("master plan");
    for (title, file, pr) in [
        ("feat: Add", "add.txt", "PR 1: feat: Add"),
        ("feat: Sub", "sub.txt", "PR 2: feat: Sub"),
    ] {
        do_the_steps(&repo, title, file);
        repo.run(&["get-task"]).expect(0);
        finalize(&repo, title, pr);
        let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
        assert!(
            brief.contains("GOAL: plan the next pull request."),
            "{brief}"
        );
    }
    assert_eq!(
        repo.git(&["log", "--first-parent", "--format=%s", "main"]),
        "Merge branch 'feat/sub'\nMerge branch 'feat/add'\nmaster plan\ninitial\n"
    );
    assert_eq!(
        repo.git(&["log", "--format=%s", "main^2", "-2"]),
        "docs: PR 2: feat: Sub done\nfeat: Sub\n"
    );
    assert_eq!(
        repo.git(&["log", "--format=%s", "main~1^2", "-2"]),
        "docs: PR 1: feat: Add done\nfeat: Add\n"
    );
    assert_eq!(repo.git(&["branch", "--format=%(refname:short)"]), "main\n");
    let plan = std::fs::read_to_string(repo.path.join("docs/plan.md")).unwrap();
    assert!(
        plan.contains("## PR 1: feat: Add [DONE]") && plan.contains("## PR 2: feat: Sub [DONE]"),
        "{plan}"
    );

    let one_pr = "plan: INITIALIZING -> CREATING_BRANCH
branch: CREATING_BRANCH -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
review-start: EXECUTING_TDD -> CODE_REVIEW
review: CODE_REVIEW -> AWAITING_FINALIZATION
squash: AWAITING_FINALIZATION -> FINALIZE_COMPLETE
plan-update: FINALIZE_COMPLETE -> PLAN_UPDATED
merge-start: PLAN_UPDATED -> MERGING_BRANCH
merge: MERGING_BRANCH -> INITIALIZING";
    let audit: Vec<String> = repo
        .git(&["log", "--reverse", "--format=%s", REF])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        audit.join("\n"),
        format!("create: (none) -> INITIALIZING\n{one_pr}\n{one_pr}")
    );
    // The next PR starts clean; main is accounted for up to the last merge.
    let main = repo.git(&["rev-parse", "main"]);
    assert_eq!(
        repo.state(),
        serde_json::json!({"schema": 1, "status": "INITIALIZING", "main_branch": "main", "main_tip": main.trim()})
    );
}

/// AWAITING_FINALIZATION can dead-end (a squash check the agent cannot satisfy): escalate is
/// open there, `resume` returns to it, and escalating again while halted says who answers.
#[test]
fn escalate_from_finalization_halts_and_resume_returns_to_it() {
    let repo = ready_to_squash();
    repo.run_with_stdin(
        &["escalate", "--report", "-"],
        "# the squash keeps failing\n",
    )
    .expect(10)
    .says("# the squash keeps failing\n");
    let state = repo.state();
    assert_eq!(state["status"], "HALTED");
    assert_eq!(state["halt"]["resume_to"], "AWAITING_FINALIZATION");
    assert_eq!(
        state["halt"]["message"],
        "the agent escalated for external help in state AWAITING_FINALIZATION"
    );
    repo.run(&["get-task"]).expect(10);

    let tip = repo.tip();
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "# again\n");
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: escalate is not accepted in state HALTED: the workflow already waits for a human\n\
         hint: A human answers with `git orchestrate resume --guidance \"<what to try>\"`; \
         `git orchestrate status` shows why it halted.\n"
    );
    assert_eq!(repo.tip(), tip, "nothing changed");

    repo.human(&["resume", "--guidance", "squash with git reset --soft"])
        .expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("squash with git reset --soft"), "{brief}");
}

/// A file added after the last verification: the squash check names it, and `checkpoint`
/// in AWAITING_FINALIZATION verifies it so the squash then holds.
#[test]
fn a_late_addition_is_named_by_the_squash_check_and_verified_by_a_checkpoint() {
    let repo = ready_to_squash();
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("add nothing by hand\nnow. If something is still missing, add it and run `git orchestrate checkpoint` first"),
        "{brief}"
    );
    repo.write("late.txt", "forgot this\n");
    repo.commit_all("late addition");
    squash(&repo, "feat: Add");
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout
            .contains("the squash holds changes that were never verified (added late.txt)"),
        "{}",
        out.stdout
    );
    // Undo the squash of the late file, verify it with a checkpoint, squash again.
    repo.git(&["reset", "--soft", "HEAD~1"]);
    repo.git(&["reset", "--quiet"]);
    let out = repo.run(&["checkpoint", "-m", "late addition"]);
    out.expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    squash(&repo, "feat: Add");
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
}

/// At the human gate, the findings that did not block are listed for the human, in the
/// briefing and in `status`.
#[test]
fn the_human_gate_lists_the_findings_that_did_not_block() {
    let noted = "cat >/dev/null; echo '{\"findings\": [{\"priority\": \"P3\", \"file\": \"add.txt\", \"line\": 1, \"issue\": \"a terse name\", \"suggestion\": \"say what it adds\"}]}'\n";
    let repo = repo_with_reviewer(noted, "human = true\n");
    do_the_steps(&repo, "feat: Add", "add.txt");
    let out = repo.run(&["get-task"]);
    out.expect(10);
    assert!(
        out.stdout.contains(
            "What the review noted (none of it blocks; the human weighs it):\n\n  - [P3] add.txt:1: a \
             terse name (suggestion: say what it adds)\n\nFor the human: look at the branch"
        ),
        "{}",
        out.stdout
    );
    let status = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        status
            .contains("\nnoted     [P3] add.txt:1: a terse name (suggestion: say what it adds)\n"),
        "{status}"
    );
    let json = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(json["noted_findings"][0]["issue"], "a terse name");
    // Elsewhere nothing is listed.
    repo.human(&["approve"]).expect(0);
    let json = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(json["noted_findings"], serde_json::json!([]));
}

/// Every step skipped: the honest RED run at step 1.1 replaced by a commit that starts the
/// review there, with the state, plan and message that event makes. It would reach the
/// review, then the squash, with no step run and no RED test pinned for `attest` to run
/// again; the transition starts the review only when every step is DONE, and `audit` names
/// it forged.
#[test]
fn audit_names_a_review_started_with_steps_left() {
    use crate::attest::{swap_chain_tip, write_commit};
    const HEADER: &str = "orchestrator-event ";
    let repo = TestRepo::at_first_step();
    let at_first = repo.tip().unwrap();
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&["audit"]).expect(0);
    let honest = repo.tip().unwrap();
    let mut state: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{at_first}:state.json")])).unwrap();
    assert_eq!(state["status"], "EXECUTING_TDD");
    state["status"] = "CODE_REVIEW".into();
    let blob = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        serde_json::to_string_pretty(&state).unwrap().as_bytes(),
    );
    let spec: String = repo
        .git(&["ls-tree", &at_first])
        .lines()
        .map(|l| match l.ends_with("\tstate.json") {
            true => format!("100644 blob {}\tstate.json\n", blob.trim()),
            false => format!("{l}\n"),
        })
        .collect();
    let tree = repo.git_with_stdin(&["mktree"], spec.as_bytes());
    let raw = repo.git(&["cat-file", "commit", &honest]);
    let (headers, _) = raw.split_once("\n\n").expect("a commit's headers");
    let headers: Vec<String> = headers
        .lines()
        .map(|l| match l {
            l if l.starts_with("tree ") => format!("tree {}", tree.trim()),
            l if l.starts_with(HEADER) => {
                format!(r#"{HEADER}{{"event":"review-started","max_rounds":3}}"#)
            }
            l => l.to_string(),
        })
        .collect();
    let text = format!(
        "{}\n\nreview-start: EXECUTING_TDD -> CODE_REVIEW\n\nevery step is DONE: code review \
         round 1\n\nOrchestrator-Event: review-start\nOrchestrator-From: EXECUTING_TDD\n\
         Orchestrator-To: CODE_REVIEW\n",
        headers.join("\n")
    );
    swap_chain_tip(&repo, &honest, &write_commit(&repo, &text));
    let out = repo.run(&["audit"]);
    assert_eq!(
        (out.code, crate::support::redact_ids(&out.stdout)),
        (
            1,
            "FORGED: workflow main, commit <id>: its recorded event is refused in state \
             EXECUTING_TDD: the review starts when every step is DONE; step 1.1 is not\n\
             audit of workflow main: 2 transitions replayed: FORGED\n"
                .to_string()
        )
    );
}
