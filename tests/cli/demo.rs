//! `git orchestrate demo`: the newcomer's first command must work, and show what it claims.

use pretty_assertions::assert_eq;

use crate::support::{BIN, TestRepo};

#[test]
fn the_demo_drives_a_pr_through_the_tdd_loop_and_the_escape_hatches() {
    let scratch = TestRepo::empty();
    let dir = scratch.dir().join("demo");
    let out = scratch.run(&["demo", "--json", "--dir", dir.to_str().unwrap()]);
    out.expect(0);
    let j = out.json();
    assert_eq!(j["kept"], true);
    let audit: Vec<String> = j["audit_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().split_once(' ').unwrap().1.to_string())
        .collect();
    let expected = "create: (none) -> INITIALIZING
plan: INITIALIZING -> CREATING_BRANCH
branch: CREATING_BRANCH -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> DEBUGGING
scope-reduction: DEBUGGING -> REPLANNING
replan: REPLANNING -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> DEBUGGING
test: DEBUGGING -> DEBUGGING
escalate: DEBUGGING -> HALTED
resume: HALTED -> DEBUGGING
guidance: DEBUGGING -> DEBUGGING
test: DEBUGGING -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
review-start: EXECUTING_TDD -> CODE_REVIEW
review: CODE_REVIEW -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
review-start: EXECUTING_TDD -> CODE_REVIEW
review: CODE_REVIEW -> AWAITING_FINALIZATION
squash: AWAITING_FINALIZATION -> FINALIZE_COMPLETE
plan-update: FINALIZE_COMPLETE -> PLAN_UPDATED
merge-start: PLAN_UPDATED -> MERGING_BRANCH
merge: MERGING_BRANCH -> INITIALIZING
plan: INITIALIZING -> CREATING_BRANCH
branch: CREATING_BRANCH -> EXECUTING_TDD";
    let oldest_first: Vec<String> = audit.into_iter().rev().collect();
    assert_eq!(oldest_first.join("\n"), expected);
    let steps = j["steps"].as_array().unwrap();
    let exits = |prefix: &str| -> Vec<i64> {
        steps
            .iter()
            .filter(|s| s["command"].as_str().is_some_and(|c| c.starts_with(prefix)))
            .map(|s| s["exit"].as_i64().unwrap())
            .collect()
    };
    // plan, RED, analysis, GREEN, broken REFACTOR, fix; sub: RED, analysis, two failures;
    // re-plan; neg: RED, analysis, GREEN; sub again: RED, analysis, three failures, the fix;
    // the review's fix, the squash, the master plan, PR 2's plan.
    assert_eq!(
        exits("git orchestrate submit-work"),
        vec![
            0, 3, 0, 0, 1, 0, 3, 0, 1, 1, 0, 3, 0, 0, 3, 0, 1, 1, 1, 0, 0, 0, 0, 0
        ]
    );
    // The review found something in round 1 and passed in round 2.
    let reviews: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["stdout"].as_str())
        .filter_map(|o| {
            o.lines()
                .find(|l| l.starts_with("Done for you: ran code review"))
        })
        .collect();
    assert_eq!(
        reviews,
        vec![
            "Done for you: ran code review round 1: 2 findings, 1 blocking.",
            "Done for you: ran code review round 2: 1 finding, 0 blocking.",
        ]
    );
    // The locked escape hatch, then the unlocked one; the escalation halts (10) until resumed.
    assert_eq!(exits("git orchestrate request-scope-reduction"), vec![4, 0]);
    assert_eq!(exits("git orchestrate escalate"), vec![10]);
    assert_eq!(exits("git orchestrate resume"), vec![0]);
    let guided: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|s| {
            s["stdout"]
                .as_str()
                .is_some_and(|o| o.contains("GUIDANCE FROM A HUMAN"))
        })
        .collect();
    assert_eq!(guided.len(), 1, "the guidance is shown exactly once");
    // The DEBUGGING briefing the agent read carried the verbatim failure.
    let debugging = steps
        .iter()
        .find(|s| {
            s["stdout"]
                .as_str()
                .is_some_and(|o| o.contains("· DEBUGGING"))
        })
        .expect("a DEBUGGING briefing");
    assert!(
        debugging["stdout"]
            .as_str()
            .unwrap()
            .contains("FAIL: add 2 3 printed '', expected 5")
    );
    // PR 1 is merged into main and marked DONE; PR 2 is under way on its own branch.
    let git = |args: &[&str]| {
        let mut full = vec!["-C", dir.to_str().unwrap()];
        full.extend_from_slice(args);
        scratch.git(&full)
    };
    assert_eq!(
        git(&["branch", "--show-current"]),
        "feat/multiply-numbers\n"
    );
    assert_eq!(
        git(&["log", "--first-parent", "--format=%s", "main"]),
        "Merge branch 'feat/add-and-subtract-numbers'\ncalc: project skeleton, master plan, orchestrator config\n"
    );
    let plan = std::fs::read_to_string(dir.join("docs/Plan_Doc/Active_Plan.md")).unwrap();
    assert!(
        plan.contains("## PR 1: feat: Add and subtract numbers [DONE] ("),
        "{plan}"
    );
    let calc = std::fs::read_to_string(dir.join("lib/calc.sh")).unwrap();
    assert!(
        calc.contains("sub() { add \"$1\" \"$(neg \"$2\")\"; }"),
        "{calc}"
    );
    // The hooks: every checkpoint verified and noted; a person's failing checkpoint refused.
    assert_eq!(exits("git orchestrate verify"), vec![0]);
    let verify = steps
        .iter()
        .find(|s| s["command"] == "git orchestrate verify")
        .unwrap();
    assert!(
        verify["stdout"]
            .as_str()
            .unwrap()
            .starts_with("5 checkpoint commits in refs/heads/main..HEAD"),
        "{verify}"
    );
    assert_eq!(exits("git commit"), vec![1]);
    let refused = steps
        .iter()
        .find(|s| {
            s["command"]
                .as_str()
                .is_some_and(|c| c.starts_with("git commit"))
        })
        .unwrap();
    assert!(
        refused["stderr"].as_str().unwrap().contains(
            "error: checkpoint commit refused: preflight gate `tests` failed (exit 1); nothing was committed."
        ),
        "{refused}"
    );
    assert_eq!(
        git(&["status", "--porcelain"]),
        "",
        "the demo leaves a clean tree"
    );
}

#[test]
fn the_demo_prints_for_people_and_cleans_up() {
    let scratch = TestRepo::empty();
    let out = scratch.run(&["demo"]);
    out.expect(0);
    assert!(
        out.stdout.contains("━━━━ agent: submit REFACTOR\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  transition "), "{}", out.stdout);
    assert!(out.stdout.contains("(The demo repository was temporary and is removed now; `git orchestrate demo --keep` keeps it.)\n"));
    // The README's install step ends with the demo: the manual page is where man finds it.
    let page = std::path::Path::new(BIN)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("share/man/man1/git-orchestrate.1");
    assert!(
        out.stdout.ends_with(&format!(
            "\nThe manual page is installed: {} (`git orchestrate --help` opens it).\n",
            page.display()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/git-orchestrate.1")
        )
        .unwrap()
    );
    let path = out
        .stdout
        .lines()
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    assert!(
        !std::path::Path::new(&path).exists(),
        "{path} was not removed"
    );
}

/// The plan the demo's agent submits is the one this test submits: a change to it that the
/// orchestrator would refuse fails here, with the problems named.
#[test]
fn the_demo_plan_is_accepted_as_it_stands() {
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\nmaster_plan = \"docs/Plan_Doc/Active_Plan.md\"\n",
    );
    repo.write(
        "docs/Plan_Doc/Active_Plan.md",
        "# Master plan\n## PR 1: feat: Add and subtract numbers\n",
    );
    repo.commit_all("master plan");
    repo.run(&["init"]).expect(0);
    repo.submit_plan(include_str!("../../src/demo/plan.json"))
        .expect(0);
    let task = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(task["step"]["id"], "1.1");
    assert_eq!(
        task["step"]["description"],
        "tests/test_add.sh: add 2 3 prints 5"
    );
    assert_eq!(task["branch"], "feat/add-and-subtract-numbers");
}

/// The demo shows the agent integration: the tool schemas, and a get_task round trip over MCP.
#[test]
fn the_demo_shows_the_schemas_and_an_mcp_round_trip() {
    let scratch = TestRepo::empty();
    let out = scratch.run(&["demo"]);
    out.expect(0)
        .says("$ git orchestrate schema --format anthropic\n[\n  {\n    \"name\": \"get_task\",")
        .says("\"input_schema\": {")
        .says("$ git orchestrate mcp\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"")
        .says("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"git-orchestrate · workflow main · EXECUTING_TDD");
}

#[test]
fn the_ticket_demo_rejects_contradicts_blocks_reassigns_and_merges() {
    let scratch = TestRepo::empty();
    let dir = scratch.dir().join("demo");
    let out = scratch.run(&["demo", "--ticket", "--dir", dir.to_str().unwrap()]);
    out.expect(0)
        .says("S1 is now rejected")
        .says(
            "what was observed contradicts the report, and the manager is shown: the developer \
             reported pass; the gates failed: `tests` ended with exit 1; changed `NOTES.md`, outside \
             the assignment",
        )
        .says("error: subtask S2 cannot be accepted: what was observed contradicts the report")
        .says("subtask   S2 blocked \"sub A B prints A - B\" · 3 rejection(s) · current")
        .says("error: subtask S2 is blocked (3 rejection(s)): it is reassigned only with new priorContext")
        .says("S2 is now complete")
        .says("ticket done: squashed as")
        .says("state     TICKET_DONE")
        .says("21 transitions replayed: clean");
    let j = scratch
        .run(&["demo", "--ticket", "--json"])
        .expect(0)
        .json();
    let audit: Vec<String> = j["audit_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().split_once(' ').unwrap().1.to_string())
        .collect();
    assert_eq!(
        audit.first().map(String::as_str),
        Some("complete-ticket: MANAGER -> TICKET_DONE")
    );
    assert_eq!(
        audit.last().map(String::as_str),
        Some("ticket-new: (none) -> MANAGER")
    );
    assert_eq!(audit.len(), 21);
}
