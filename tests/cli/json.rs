//! The `--json` shapes of docs/agent-guide.md, "JSON" (the stable core; more fields may be added, none renamed),
//! and the `log` and `plan show` views.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{PLAN, TestRepo, redact_ids};

#[test]
fn get_task_json() {
    let repo = TestRepo::at_green_step();
    let text = repo.run(&["get-task"]).expect(0).stdout.clone();
    let j = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(
        j,
        json!({
            "schema": 1,
            "workflow": "main",
            "state": "EXECUTING_TDD",
            "branch": "feat/add-numbers",
            "step": {"id": "1.2", "task": "add", "type": "GREEN", "description": "implement add"},
            "attempt": 0,
            "pending": null,
            "idle": false,
            "briefing": text,
        })
    );
}

#[test]
fn submit_work_json_carries_the_full_output() {
    let repo = TestRepo::at_green_step();
    let many_lines: String = (1..=50).map(|i| format!("echo line {i};")).collect();
    let out = repo.run(&[
        "--json",
        "submit-work",
        "-s",
        "try",
        "--test-command",
        &format!("{many_lines} exit 3"),
    ]);
    out.expect(1);
    let j = out.json();
    let output: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    assert_eq!(j["schema"], 1);
    assert_eq!(j["status"], "FAILURE");
    assert_eq!(
        j["output"],
        output.as_str(),
        "the full output, not the 20-line tail"
    );
    assert_eq!(j["state"], "DEBUGGING");
    assert_eq!(j["step"], "1.2");
    assert_eq!(j["debug_attempt_counter"], 1);
    assert_eq!(j["test"]["exit"], json!({"code": 3}));
    assert_eq!(j["preflight"], serde_json::Value::Null);

    // The human output shows only the configured tail (20 lines).
    let out = repo.submit_test(&format!("{many_lines} exit 3"), None);
    out.expect(1);
    assert!(out.stdout.contains("----\nline 31\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("line 30\n"), "{}", out.stdout);

    let j = repo
        .run(&[
            "--json",
            "submit-work",
            "-s",
            "fixed",
            "--test-command",
            "echo fine",
        ])
        .expect(0)
        .json();
    assert_eq!(j["status"], "SUCCESS");
    assert_eq!(j["output"], "fine\n");
    assert_eq!(j["state"], "EXECUTING_TDD");
    assert_eq!(j["pending"], "checkpoint");
    assert_eq!(j["preflight"]["passed"], true);
    assert_eq!(j["preflight"]["gates"][0]["name"], "tests");
    assert_eq!(j["preflight"]["gates"][0]["exit"], json!({"code": 0}));

    let repo = TestRepo::at_first_step();
    let j = repo
        .run(&[
            "--json",
            "submit-work",
            "-s",
            "red",
            "--test-command",
            "echo nope; exit 1",
        ])
        .expect(3)
        .json();
    assert_eq!(j["status"], "NEEDS_ANALYSIS");
    assert_eq!(j["output"], "nope\n");
    assert_eq!(j["pending"], "analysis");
}

#[test]
fn status_json() {
    let repo = TestRepo::at_green_step();
    repo.submit_test("exit 1", None).expect(1);
    let j = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(j["schema"], 1);
    assert_eq!(j["workflow"], "main");
    assert_eq!(j["exists"], true);
    assert_eq!(j["state"], "DEBUGGING");
    assert_eq!(j["branch"], "feat/add-numbers");
    assert_eq!(j["head"], "feat/add-numbers");
    assert_eq!(
        j["step"],
        json!({"id": "1.2", "task": "add", "type": "GREEN", "description": "implement add"})
    );
    assert_eq!(j["debug_attempt_counter"], 1);
    assert_eq!(j["pending"], serde_json::Value::Null);
    assert_eq!(j["progress"], json!({"done": 1, "total": 5}));
    assert_eq!(j["tip"], repo.tip().unwrap().as_str());
    assert_eq!(j["last_run"]["verdict"], "FAILURE");
    let pin = repo.git(&["rev-parse", "main"]);
    assert_eq!(
        j["config"],
        json!({
            "origin": format!("main:.orchestrate.toml as pinned for this PR (at {})", &pin[..12]),
            "preflight": ["tests"]
        })
    );
}

#[test]
fn log_lists_transitions_newest_first() {
    let repo = TestRepo::at_first_step();
    let out = repo.run(&["log"]).expect(0).stdout.clone();
    assert_eq!(
        redact_ids(&out),
        "<id>  2026-01-01 00:00:00 +0000  branch: CREATING_BRANCH -> EXECUTING_TDD
    on branch feat/add-numbers
<id>  2026-01-01 00:00:00 +0000  plan: INITIALIZING -> CREATING_BRANCH
    plan \"feat: Add numbers\" accepted; branch feat/add-numbers
    the plan
<id>  2026-01-01 00:00:00 +0000  create: (none) -> INITIALIZING
    workflow created
"
    );
    let j = repo.run(&["log", "-n", "1", "--json"]).expect(0).json();
    let entries = j["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["event"], "branch");
    assert_eq!(entries[0]["from"], "CREATING_BRANCH");
    assert_eq!(entries[0]["to"], "EXECUTING_TDD");
    assert_eq!(entries[0]["commit"], repo.tip().unwrap().as_str());
}

#[test]
fn plan_show() {
    let repo = TestRepo::new();
    let out = repo.run(&["plan", "show"]).expect(0).stdout.clone();
    assert_eq!(
        out,
        "no active PR plan (state INITIALIZING (not created yet)); `git orchestrate get-task` says how to submit one\n"
    );
    let repo = TestRepo::at_green_step();
    let out = repo.run(&["plan", "show"]).expect(0).stdout.clone();
    assert_eq!(
        out,
        "feat: Add numbers
  master plan:  docs/plan.md
  summary:      add and sub
  verification: the tests pass
  progress:     1 of 5 steps done

Task 1 [IN_PROGRESS] add
  [x] 1.1 RED      test add
  [>] 1.2 GREEN    implement add
  [ ] 1.3 REFACTOR tidy add

Task 2 [TODO] sub
  [ ] 2.1 RED      test sub
  [ ] 2.2 GREEN    implement sub
"
    );
    let j = repo.run(&["plan", "show", "--json"]).expect(0).json();
    assert_eq!(j["current_step"], "1.2");
    let submitted: serde_json::Value = serde_json::from_str(PLAN).unwrap();
    assert_eq!(j["plan"]["prTitle"], submitted["prTitle"]);
    assert_eq!(j["plan"]["tasks"][0]["tdd_steps"][0]["status"], "DONE");
    assert_eq!(j["plan"]["tasks"][0]["status"], "IN_PROGRESS");
}

#[test]
fn log_says_when_older_transitions_are_left_out() {
    let repo = TestRepo::at_green_step();
    let total = repo.history_len();
    assert!(total > 2, "{total}");
    let out = repo.run(&["log", "-n", "2"]).expect(0).stdout.clone();
    let lines: Vec<&str> = out.lines().collect();
    // Each transition: its line, the orchestrator's headline, the agent's summary.
    assert_eq!(lines.len(), 7, "{out}");
    assert_eq!(lines[2], "    right reason", "{out}");
    assert_eq!(
        lines[6],
        format!(
            "(showing the newest 2 of {total} transitions; `git orchestrate log -n {total}` or `--all` shows them all)"
        )
    );
    let all = repo.run(&["log", "--all"]).expect(0).stdout.clone();
    assert!(!all.contains("showing the newest"), "{all}");
    assert!(all.contains("create: (none) -> INITIALIZING"), "{all}");
    assert_eq!(
        repo.run(&["log", "--limit", &total.to_string()])
            .expect(0)
            .stdout,
        all
    );

    let j = repo.run(&["log", "-n", "2", "--json"]).expect(0).json();
    assert_eq!(
        (
            j["entries"].as_array().unwrap().len(),
            &j["total"],
            &j["truncated"]
        ),
        (2, &json!(total), &json!(true))
    );
    let j = repo.run(&["log", "--all", "--json"]).expect(0).json();
    assert_eq!(
        (
            j["entries"].as_array().unwrap().len(),
            &j["total"],
            &j["truncated"]
        ),
        (total, &json!(total), &json!(false))
    );
    repo.run(&["log", "--all", "-n", "3"]).expect(2);
}

/// The keys of each report, in the order they are written: the typed reports the engine
/// builds are the documented shapes (docs/agent-guide.md, "JSON"), and MCP returns the same.
#[test]
fn reports_keep_their_documented_keys_in_order() {
    fn keys(v: &serde_json::Value) -> Vec<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }
    let repo = TestRepo::at_green_step();
    repo.write("impl.sh", "echo ok\n");
    let submit = repo
        .run(&[
            "--json",
            "submit-work",
            "-s",
            "green",
            "--test-command",
            "sh impl.sh",
        ])
        .expect(0)
        .json();
    assert_eq!(
        keys(&submit),
        [
            "schema",
            "status",
            "summary",
            "output",
            "state",
            "step",
            "debug_attempt_counter",
            "pending",
            "test",
            "preflight",
            "notes",
            "next"
        ]
    );
    let checkpoint = repo.run(&["--json", "checkpoint"]).expect(0).json();
    assert_eq!(
        keys(&checkpoint),
        [
            "schema",
            "commit",
            "subject",
            "step",
            "preflight",
            "cached",
            "state",
            "new_commit",
            "recorded_without_commit",
            "untracked_added",
            "gitignore_suggestions",
            "left_out"
        ]
    );
    assert_eq!(
        checkpoint["recorded_without_commit"],
        serde_json::Value::Null
    );
    let status = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(
        keys(&status),
        [
            "schema",
            "kind",
            "workflow",
            "exists",
            "state",
            "branch",
            "head",
            "branch_worktree",
            "main_branch",
            "step",
            "progress",
            "pr_title",
            "debug_attempt_counter",
            "pending",
            "checkpoint_made",
            "noted_findings",
            "last_run",
            "last_commit_hash",
            "identical_failures",
            "review_round",
            "blocked_rounds",
            "last_review",
            "verified_tree",
            "final_commit",
            "plan_commit",
            "halt",
            "replan",
            "guidance",
            "idle",
            "config",
            "warnings",
            "locks",
            "tip",
            "remotes",
            "run"
        ]
    );
    assert_eq!(
        keys(&repo.run(&["--json", "log"]).expect(0).json()),
        ["schema", "workflow", "entries", "total", "truncated"]
    );
    assert_eq!(
        keys(&repo.run(&["--json", "plan", "show"]).expect(0).json()),
        ["schema", "workflow", "plan", "current_step"]
    );
    assert_eq!(
        keys(&repo.run(&["--json", "doctor"]).json()),
        ["schema", "checks", "errors", "warnings"]
    );
}
