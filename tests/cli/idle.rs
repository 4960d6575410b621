//! The stop condition (docs/agent-guide.md, "Nothing left to do"): `submit-work
//! --no-pr-left`, idle while the master plan on the main branch is unchanged, and what ends it.

use crate::support::*;
use pretty_assertions::assert_eq;

#[test]
fn no_pr_left_makes_get_task_say_nothing_is_left_until_the_master_plan_changes() {
    let repo = TestRepo::new();
    repo.run(&["get-task"])
        .expect(0)
        .says("--no-pr-left")
        .says("until a commit\non main changes docs/plan.md");
    // The claim is checked against the master plan on main: PR 1 is not done.
    let tip = repo.tip();
    let refused = repo.run(&["submit-work", "-s", "all PRs are [DONE]", "--no-pr-left"]);
    refused.expect(4).warns(
        "error: submit-work --no-pr-left is refused: the master plan main:docs/plan.md still has 1 PR \
         neither marked [DONE] nor claimed by another workflow: \"PR 1: feat: Add numbers\"",
    );
    assert_eq!(repo.tip(), tip, "nothing was written");
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
    );
    repo.commit_all("plan: PR 1 done");
    let out = repo.run(&["submit-work", "-s", "all PRs are [DONE]", "--no-pr-left"]);
    out.expect(0)
        .says("SUCCESS: nothing left to do (master plan ");
    out.says("next: stop: nothing is left to do");

    let task = repo.run(&["get-task"]);
    task.expect(0);
    assert_eq!(
        task.stdout,
        "git-orchestrate · workflow main · INITIALIZING\n\nNOTHING LEFT TO DO: every PR of the master plan (docs/plan.md) is done, as recorded by\n`submit-work --no-pr-left`. Stop here; do not start work that is not in the master plan.\nThis holds until a commit on main changes docs/plan.md; then `git orchestrate get-task` briefs\nthe next PR.\n"
    );
    let json = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(json["idle"], true);
    assert_eq!(json["state"], "INITIALIZING");
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["idle"],
        true
    );
    repo.run(&["status"])
        .expect(0)
        .says("idle      nothing left to do");
    // Asking again is harmless, and nothing but the one transition was written.
    let tip = repo.tip();
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.tip(), tip);

    // A commit elsewhere does not end it; one that changes the master plan does.
    repo.write("README", "x\n");
    repo.commit_all("unrelated");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n## PR 2: feat: Sub\n",
    );
    repo.commit_all("plan: PR 2");
    let json = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(json["idle"], false);
    assert!(
        json["briefing"]
            .as_str()
            .unwrap()
            .contains("GOAL: plan the next pull request.")
    );
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["idle"],
        false
    );

    // A plan leaves INITIALIZING and idle behind for good.
    repo.submit_plan(&one_task_plan("feat: Sub", "sub.sh"))
        .expect(0);
    assert_eq!(repo.state().get("idle"), None);
    repo.run(&["audit"]).expect(0);
}

#[test]
fn no_pr_left_is_refused_while_a_pr_is_in_progress_and_changes_nothing() {
    let repo = TestRepo::at_first_step();
    let tip = repo.tip();
    let out = repo.run(&["submit-work", "-s", "done?", "--no-pr-left"]);
    out.expect(4);
    assert!(
        out.stderr
            .contains("--no-pr-left is only accepted in INITIALIZING, when no PR is active"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip);
    // It is a kind of work of its own: not together with a test run.
    repo.run(&[
        "submit-work",
        "-s",
        "x",
        "--no-pr-left",
        "--test-command",
        "true",
    ])
    .expect(2);
}

#[test]
fn idle_is_recorded_against_a_missing_master_plan_too() {
    let repo = TestRepo::with_config("master_plan = \"PLAN.md\"\n");
    repo.run(&["submit-work", "-s", "no plan at all", "--no-pr-left"])
        .expect(0)
        .says("nothing left to do (no master plan)");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
    repo.write("PLAN.md", "# Plan\n## PR 1\n");
    repo.commit_all("a master plan");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        false
    );
}

/// An idle agent polling `get-task` reads the remote at most once a minute: every other poll
/// answers from this clone alone. Counted on the remote side, by an upload-pack wrapper that
/// logs each read (ls-remote and fetch alike).
#[test]
fn an_idle_get_task_reads_the_remote_at_most_once_a_minute() {
    const T: i64 = 1_800_000_000;
    let repo = TestRepo::new();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
    );
    repo.commit_all("plan: PR 1 done");
    let (_remote, _bare) = repo.share();
    repo.run(&["submit-work", "-s", "all PRs are [DONE]", "--no-pr-left"])
        .expect(0);
    let tools = tempfile::tempdir().expect("tempdir");
    let log = tools.path().join("reads.log");
    let wrapper = tools.path().join("upload-pack");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho read >> '{}'\nexec git upload-pack \"$@\"\n",
            log.display()
        ),
    )
    .expect("write the wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    repo.git(&[
        "config",
        "remote.origin.uploadpack",
        &wrapper.display().to_string(),
    ]);
    let reads = || {
        std::fs::read_to_string(&log)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let poll = |now: i64| {
        let mut cmd = repo.command(BIN, ["get-task", "--json"]);
        cmd.env("GIT_ORCHESTRATE_NOW", now.to_string());
        let out = feed(cmd, "");
        out.expect(0);
        assert_eq!(out.json()["idle"], true, "{}", out.stdout);
    };
    poll(T);
    let first = reads();
    assert!(first > 0, "the first idle poll reads the remote");
    for second in 1..=20 {
        poll(T + second * 2);
    }
    assert_eq!(
        reads(),
        first,
        "20 polls within the minute read nothing more"
    );
    poll(T + 61);
    let again = reads();
    assert!(again > first, "a minute later the remote is read again");
    poll(T + 62);
    assert_eq!(reads(), again);
}
