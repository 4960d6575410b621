//! Nudge and Unlock end to end (docs/agent-guide.md, "The escape tools and their locks"): locked escape tools, scope reduction that
//! really reverts the tree, re-planning, escalation that halts, and a human's resume.

use pretty_assertions::assert_eq;

use crate::support::{CONFIG, PLAN, RED, REF, TestRepo};

/// Scope reduction unlocks at attempt 2, escalation at 3.
fn quick_unlock_repo() -> TestRepo {
    let config = format!(
        "{CONFIG}\n[debugging]\nhypothesize_max_attempts = 1\ninstrumentation_max_attempts = 1\n\
         unlock_scope_reduction_at = 2\nunlock_escalation_at = 3\n"
    );
    let repo = TestRepo::with_config(&config);
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo
}

fn fail(repo: &TestRepo, output: &str) {
    repo.submit_test(&format!("echo '{output}'; exit 1"), None)
        .expect(1);
}

#[test]
fn the_escape_tools_stay_locked_until_their_attempt_and_the_default_thresholds_apply() {
    let repo = TestRepo::at_green_step();
    fail(&repo, "first");
    let out = repo.run(&["request-scope-reduction"]);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: request-scope-reduction is locked: 5 more failed attempts needed (it unlocks at attempt 6; this is attempt 1, state DEBUGGING)\n\
         hint: Keep debugging: `git orchestrate get-task` shows the failing output and the guidance for this attempt.\n"
    );
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "# help\n");
    out.expect(4);
    assert!(
        out.stderr.starts_with(
            "error: escalate is locked: 9 more failed attempts needed (it unlocks at attempt 10"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(repo.status(), "DEBUGGING");
}

#[test]
fn a_custom_debugging_config_moves_the_unlock_points_and_the_guidance() {
    let repo = quick_unlock_repo();
    fail(&repo, "one");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Guidance: read the output below, form one hypothesis"),
        "{brief}"
    );
    assert!(repo.run(&["request-scope-reduction"]).code == 4);
    fail(&repo, "two");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Guidance: 2 attempts have failed."),
        "{brief}"
    );
    assert!(
        brief.contains("  git orchestrate request-scope-reduction\n"),
        "{brief}"
    );
    fail(&repo, "three");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Your new primary goal\nis to escalate for external help."),
        "{brief}"
    );
}

#[test]
fn thresholds_that_decrease_are_a_config_error() {
    let repo = TestRepo::with_config(&format!(
        "{CONFIG}\n[debugging]\nunlock_scope_reduction_at = 8\nunlock_escalation_at = 4\n"
    ));
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: invalid .orchestrate.toml (working tree): debugging.unlock_escalation_at = 4 comes before debugging.unlock_scope_reduction_at = 8; the thresholds must not decrease (hypothesize ≤ instrumentation ≤ scope reduction ≤ escalation)\n\
         hint: Fix .orchestrate.toml (every key is described in `git orchestrate init`'s file and docs/config.md).\n"
    );
    let repo = TestRepo::with_config(&format!(
        "{CONFIG}\n[debugging]\nhypothesize_max_attempts = 0\n"
    ));
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains("debugging.hypothesize_max_attempts: must be at least 1"),
        "{}",
        out.stderr
    );
}

#[test]
fn identical_failures_are_called_out() {
    let repo = TestRepo::at_green_step();
    fail(&repo, "assertion failed: left == right");
    fail(&repo, "assertion failed: left == right");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Your last two attempts failed identically: the same output came back"),
        "{brief}"
    );
    fail(&repo, "a different error");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(!brief.contains("failed identically"), "{brief}");
}

#[test]
fn scope_reduction_reverts_tracked_changes_to_the_last_checkpoint_and_keeps_untracked_files() {
    let repo = quick_unlock_repo();
    // A verified GREEN step and its checkpoint: the state to return to.
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let checkpoint = repo.git(&["rev-parse", "HEAD"]);
    // The REFACTOR goes wrong twice, with changes to a tracked file and a new file.
    repo.write("add.sh", "echo broken\n");
    repo.write("debug.log", "instrumentation\n");
    fail(&repo, "refactor broke add");
    fail(&repo, "refactor broke add again");
    let tip_before = repo.tip();

    let out = repo.run(&["request-scope-reduction"]);
    out.expect(0);
    assert!(
        out.stdout
            .starts_with("git-orchestrate · workflow main · REPLANNING\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("1. Analyze the original goal: task 1, 'add', and the final error:\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("refactor broke add again\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("The revert left these untracked files in place (delete them if they belong to the failed attempt):\n  debug.log\n"),
        "{}",
        out.stdout
    );
    // Tracked changes are gone, the untracked file is still there, HEAD did not move.
    assert_eq!(
        std::fs::read_to_string(repo.path.join("add.sh")).unwrap(),
        "echo 5\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path.join("debug.log")).unwrap(),
        "instrumentation\n"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), checkpoint);
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? debug.log\n");
    // And the state moved with a new transition on top of the old one.
    let state = repo.state();
    assert_eq!(state["status"], "REPLANNING");
    assert_eq!(state["replan_context"]["original_task"], "add");
    assert_eq!(state["replan_context"]["step"], "1.3");
    assert_eq!(
        state["replan_context"]["untracked"],
        serde_json::json!(["debug.log"])
    );
    assert_eq!(
        repo.git(&["rev-parse", &format!("{REF}^")]).trim(),
        tip_before.unwrap()
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", REF]),
        "scope-reduction: DEBUGGING -> REPLANNING\n"
    );
}

fn replan_with(repo: &TestRepo, edit: impl FnOnce(&mut serde_json::Value)) -> crate::support::Run {
    let mut plan: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    edit(&mut plan);
    repo.run_with_stdin(
        &["submit-work", "-s", "smaller tasks", "--plan", "-"],
        &plan.to_string(),
    )
}

fn new_task(name: &str, history: bool) -> serde_json::Value {
    let mut task = serde_json::json!({
        "taskName": name, "status": "TODO",
        "tdd_steps": [
            {"type": "RED", "description": format!("test {name}"), "status": "TODO"},
            {"type": "GREEN", "description": format!("do {name}"), "status": "TODO"}]
    });
    if history {
        task["breakdownHistory"] =
            serde_json::json!({"originalTaskName": "add", "justification": "too big"});
    }
    task
}

#[test]
fn a_replan_must_follow_the_rules_and_then_resets_the_counters() {
    let repo = quick_unlock_repo();
    fail(&repo, "one");
    fail(&repo, "two");
    repo.run(&["request-scope-reduction"]).expect(0);
    let tip = repo.tip();

    // Keeping the failed task and adding no verification task breaks two rules: both listed.
    let out = replan_with(&repo, |plan| {
        let tasks = plan["tasks"].as_array_mut().unwrap();
        tasks.insert(1, new_task("add 1b", false));
    });
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: the plan was not accepted (3 problems); nothing was written
  - tasks[0]: is a new task: it and all its steps must be TODO (nothing of it is verified yet)
  - tasks[0].breakdownHistory: missing: the first new task must record that it replaces \"add\" and why
  - tasks[1].taskName: the last new task must be the verification task (its name contains \"Verification\") that proves the new tasks together achieve \"add\"; found \"add 1b\"
hint: Fix every problem listed and submit the re-plan again; `git orchestrate get-task` repeats the rules.
"
    );
    assert_eq!(repo.tip(), tip);

    // A good one: the failed task replaced by two tasks, the later task untouched.
    let out = replan_with(&repo, |plan| {
        let tasks = plan["tasks"].as_array_mut().unwrap();
        tasks[0] = new_task("add 1a: parse numbers", true);
        tasks.insert(1, new_task("add 1b (Verification): add works", false));
    });
    out.expect(0);
    let state = repo.state();
    assert_eq!(state["status"], "EXECUTING_TDD");
    assert!(state.get("debug_attempt_counter").is_none(), "{state}");
    assert!(state.get("replan_context").is_none(), "{state}");
    let brief = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(brief["step"]["id"], "1.1");
    assert_eq!(brief["step"]["task"], "add 1a: parse numbers");
    let plan = repo.run(&["plan", "show"]).expect(0).stdout.clone();
    assert!(
        plan.contains("(broken down from \"add\": too big)"),
        "{plan}"
    );
}

/// A re-plan recorded by hand that breaks the re-plan rules (the honest re-plan's commit, its
/// recorded plan and `pr.json` given another PR's title): the audit replays the transition,
/// which holds a re-plan to the rules, and names it forged. (It passed: the rules were the
/// command's only, and the replay took any plan as a re-plan.)
#[test]
fn a_hand_written_replan_that_breaks_the_rules_is_found_by_the_audit() {
    let repo = quick_unlock_repo();
    fail(&repo, "one");
    fail(&repo, "two");
    repo.run(&["request-scope-reduction"]).expect(0);
    replan_with(&repo, |plan| {
        let tasks = plan["tasks"].as_array_mut().unwrap();
        tasks[0] = new_task("add 1a: parse numbers", true);
        tasks.insert(1, new_task("add 1b (Verification): add works", false));
    })
    .expect(0);
    repo.run(&["audit"]).expect(0);
    let honest = repo.tip().unwrap();
    let title: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    let title = title["prTitle"].as_str().unwrap().to_string();
    let other = "feat: Something else";
    // The same commit, retitled in its recorded event and in its pr.json.
    let pr = repo
        .git(&["show", &format!("{REF}:pr.json")])
        .replace(&title, other);
    let blob = repo.git_with_stdin(&["hash-object", "-w", "--stdin"], pr.as_bytes());
    let tree = repo.git(&["rev-parse", &format!("{honest}^{{tree}}")]);
    let spec: String = repo
        .git(&["ls-tree", tree.trim()])
        .lines()
        .map(|l| {
            if l.ends_with("\tpr.json") {
                format!("100644 blob {}\tpr.json\n", blob.trim())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let new_tree = repo.git_with_stdin(&["mktree"], spec.as_bytes());
    let raw = repo.git(&["cat-file", "commit", &honest]);
    assert!(raw.contains(&title), "the event records the plan:\n{raw}");
    let text = raw
        .replacen(
            &format!("tree {}", tree.trim()),
            &format!("tree {}", new_tree.trim()),
            1,
        )
        .replace(&title, other);
    let forged = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        text.as_bytes(),
    );
    let forged = forged.trim();
    repo.git(&["update-ref", REF, forged, &honest]);
    let out = repo.run(&["audit"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "FORGED: workflow main, commit {forged}: its recorded event is refused in state \
             REPLANNING: the re-plan breaks the re-plan rules: prTitle: must stay \"{title}\""
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn escalation_prints_exactly_the_report_halts_and_a_human_resumes_with_guidance_shown_once() {
    let repo = quick_unlock_repo();
    fail(&repo, "one");
    fail(&repo, "two");
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "# help\n");
    out.expect(4);
    assert!(
        out.stderr
            .contains("escalate is locked: 1 more failed attempt needed"),
        "{}",
        out.stderr
    );
    fail(&repo, "three");

    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "  \n");
    out.expect(2);
    assert!(
        out.stderr
            .starts_with("error: the escalation report is empty\n"),
        "{}",
        out.stderr
    );

    let report = "# add() never returns 5\n\nTried:\n- three fixes\n\nError: `three`\n";
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], report);
    out.expect(10);
    assert_eq!(
        out.stdout, report,
        "escalate prints the report verbatim, and nothing else"
    );
    assert_eq!(repo.git(&["show", &format!("{REF}:escalation.md")]), report);
    let state = repo.state();
    assert_eq!(state["status"], "HALTED");
    assert_eq!(state["halt"]["reason"], "escalated");
    assert_eq!(state["halt"]["resume_to"], "DEBUGGING");

    // While halted: get-task shows the halt and exits 10; the agent's tools are refused.
    let out = repo.run(&["get-task"]);
    out.expect(10);
    assert!(out.stdout.contains("The workflow is HALTED and waits for a human: the agent escalated for external help after 3 failed attempts."), "{}", out.stdout);
    assert!(out.stdout.contains(report), "{}", out.stdout);
    assert_eq!(repo.submit_test("true", None).code, 4);
    let status = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(status.contains("halted    the agent escalated for external help after 3 failed attempts · `git orchestrate resume` returns to DEBUGGING"), "{status}");

    let out = repo.human(&[
        "resume",
        "--guidance",
        "add() must return a number, not print it",
    ]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        "resumed: HALTED -> DEBUGGING (halted because the agent escalated for external help after 3 failed attempts)\n\
         the agent sees your guidance once, in its next `git orchestrate get-task`\n"
    );
    let body = repo.git(&["log", "-1", "--format=%B", REF]);
    assert!(
        body.contains("Guidance from a human:\nadd() must return a number, not print it\n"),
        "{body}"
    );
    let state = repo.state();
    assert_eq!(state["status"], "DEBUGGING");
    assert!(state.get("debug_attempt_counter").is_none());
    let (has_report, _) = repo.git_try(&["cat-file", "-e", &format!("{REF}:escalation.md")]);
    assert!(!has_report, "the report belongs to the halt");

    let first = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(first.contains("GUIDANCE FROM A HUMAN (shown once; follow it):\n  add() must return a number, not print it\n"), "{first}");
    assert!(
        first.contains("three\n"),
        "the failing output is still shown: {first}"
    );
    let second = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(!second.contains("GUIDANCE FROM A HUMAN"), "{second}");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", REF]),
        "guidance: DEBUGGING -> DEBUGGING\n"
    );

    // resume only answers a halt.
    let out = repo.human(&["resume"]);
    out.expect(4);
    assert!(
        out.stderr.starts_with(
            "error: resume is not accepted in state DEBUGGING: the workflow is not halted"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn escalation_from_replanning_resumes_to_replanning() {
    let repo = quick_unlock_repo();
    for n in ["one", "two", "three"] {
        fail(&repo, n);
    }
    repo.run(&["request-scope-reduction"]).expect(0);
    repo.run_with_stdin(&["escalate", "--report", "-"], "# cannot split this task\n")
        .expect(10);
    assert_eq!(repo.state()["halt"]["resume_to"], "REPLANNING");
    repo.human(&["resume"]).expect(0);
    assert_eq!(repo.status(), "REPLANNING");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Your new assignment is to\ncreate a more granular plan."),
        "{brief}"
    );
}

#[test]
fn a_plan_whose_tasks_end_with_a_red_step_is_refused_and_nothing_is_written() {
    let repo = TestRepo::new();
    let tip = repo.tip();
    let red_only = PLAN.replace(
        r#",
      {"type": "GREEN", "description": "implement sub", "status": "TODO"}"#,
        "",
    );
    let out = repo.submit_plan(&red_only);
    out.expect(2).warns(
        "  - tasks[1].tdd_steps: ends with a RED step (tdd_steps[0]); every task must end with a GREEN or \
         REFACTOR step: a RED step only proves a test fails, so nothing would verify the task's work (add the \
         GREEN step that makes the test pass)\n",
    );
    assert_eq!(repo.tip(), tip, "nothing was written");
}

#[test]
fn a_replan_whose_new_task_ends_with_a_red_step_is_refused() {
    let repo = quick_unlock_repo();
    fail(&repo, "one");
    fail(&repo, "two");
    repo.run(&["request-scope-reduction"]).expect(0);
    let tip = repo.tip();
    let out = replan_with(&repo, |plan| {
        let tasks = plan["tasks"].as_array_mut().unwrap();
        tasks[0] = new_task("add 1a: parse numbers", true);
        let mut verification = new_task("add 1b (Verification): add works", false);
        verification["tdd_steps"].as_array_mut().unwrap().pop();
        tasks.insert(1, verification);
    });
    out.expect(2)
        .warns("  - tasks[1].tdd_steps: ends with a RED step (tdd_steps[0]); every task must end with a GREEN");
    assert_eq!(repo.tip(), tip, "nothing was written");
    assert_eq!(repo.status(), "REPLANNING");
}

#[test]
fn escalate_refusals_give_the_hint_that_fits_the_state() {
    let repo = TestRepo::at_first_step();
    let out = repo.run_with_stdin(&["escalate", "--report", "-"], "# help\n");
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: escalate is locked: 10 more failed attempts needed (it unlocks at attempt 10; this is attempt 0, state EXECUTING_TDD)\n\
         hint: No attempt has failed yet: work on the current step (`git orchestrate get-task` shows it) and submit it with \
         `git orchestrate submit-work`.\n"
    );
    assert_eq!(repo.status(), "EXECUTING_TDD");
}

/// An honest way to stop (docs/integrity.md, "A way to stop honestly"): at the very first
/// step, with every escape tool still locked, `submit-work --contradiction` halts for a human
/// with the agent's account (exit 10); the human's briefing quotes it; `resume` returns to
/// the step. Refused with nothing written where no test holds the work, or when empty.
#[test]
fn a_contradiction_halts_for_a_human_with_the_agents_account_at_any_attempt() {
    let repo = TestRepo::at_first_step();
    assert_eq!(repo.status(), "EXECUTING_TDD");
    let before = repo.tip();
    let out = repo.run(&["submit-work", "-s", "x", "--contradiction", " \n"]);
    out.expect(2);
    assert!(
        out.stderr
            .starts_with("error: the contradiction's account is empty; nothing was written\n"),
        "{}",
        out.stderr
    );
    let out = repo.run(&[
        "submit-work",
        "-s",
        "x",
        "--contradiction",
        "a",
        "--test-command",
        "true",
    ]);
    out.expect(2);
    assert_eq!(repo.tip(), before, "nothing written");

    let account =
        "The task says add(2, 3) prints 5; tests/test_add.sh expects 6.\nBoth cannot hold.\n";
    let out = repo.run(&[
        "submit-work",
        "-s",
        "the test contradicts the task",
        "--contradiction",
        account,
    ]);
    out.expect(10);
    assert_eq!(
        repo.git(&["show", &format!("{REF}:escalation.md")]),
        account
    );
    let state = repo.state();
    assert_eq!(state["status"], "HALTED");
    assert_eq!(state["halt"]["reason"], "contradiction");
    assert_eq!(state["halt"]["resume_to"], "EXECUTING_TDD");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", REF]),
        "contradiction: EXECUTING_TDD -> HALTED\n"
    );
    repo.run(&["audit"]).expect(0);

    let out = repo.run(&["get-task"]);
    out.expect(10);
    assert!(
        out.stdout.contains(
            "The workflow is HALTED and waits for a human: the agent reports that the task contradicts its test (in state EXECUTING_TDD); its account is below."
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("read the agent's account below"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(account), "{}", out.stdout);
    // Halted: a second contradiction has no test to contradict.
    let out = repo.run(&["submit-work", "-s", "x", "--contradiction", "again"]);
    out.expect(4);

    repo.human(&["resume", "--guidance", "the test is right: 2 + 3 + 1"])
        .expect(0);
    assert_eq!(repo.status(), "EXECUTING_TDD");
}
