//! The TDD loop end to end with the real binary: plan → branch → RED → GREEN → checkpoint →
//! REFACTOR, session resume, stale plans, and what is (not) written to the working tree.

use pretty_assertions::assert_eq;

use crate::support::{BIN, PLAN, RED, RED_SUB, REF, Run, TestRepo, redact_ids};

const RULES: &str =
    "Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
";

#[test]
fn a_full_pass_from_plan_to_refactor() {
    let repo = TestRepo::new();

    // INITIALIZING: the briefing carries the schema and creates the workflow.
    let first = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(first.starts_with(
        "git-orchestrate · workflow main · INITIALIZING\n\nGOAL: plan the next pull request."
    ));
    assert!(first.contains("1. Read the master plan: docs/plan.md"));
    assert!(first.contains("\"tdd_steps\": ["));
    assert_eq!(repo.status(), "INITIALIZING");

    // The plan → CREATING_BRANCH; the branch is named from the title.
    let out = repo.submit_plan(PLAN).expect(0).stdout.clone();
    assert_eq!(
        out,
        "SUCCESS: plan \"feat: Add numbers\" accepted; branch feat/add-numbers\n\
         state: CREATING_BRANCH · next: run `git orchestrate get-task`; it creates the PR branch and gives you the first step\n"
    );
    assert_eq!(repo.status(), "CREATING_BRANCH");

    // get-task creates the branch and briefs step 1.1.
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert_eq!(
        brief,
        format!(
            "git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 0 of 5 steps done

Done for you: checked out main, and created branch feat/add-numbers from it.

STEP 1.1 (RED) of task 1/2 \"add\":
  test add

Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

The files this step changes are pinned as the test: every later run of it (at the GREEN
step, and at the end on the PR's base and on the squashed commit) has them exactly as they
are now. So change only the test here, inside the repository, and make it a test that runs: a
command that runs no test (exit 126 or 127, a runner that reports no tests) is not a RED.

  git orchestrate submit-work --summary \"<what you did>\" --test-command \"<command that runs the test>\" --expectation FAIL

Then run `git orchestrate get-task` for your next instruction.

{RULES}"
        )
    );
    assert_eq!(
        repo.git(&["branch", "--show-current"]).trim(),
        "feat/add-numbers"
    );

    // RED: a failing test needs analysis (exit 3), then SUCCESS marks it done.
    repo.write(
        "check_add.sh",
        "[ \"$(sh add.sh 2>/dev/null)\" = 5 ] || { echo 'add: not found'; exit 1; }\n",
    );
    let out = repo
        .submit_test("sh check_add.sh", Some("FAIL"))
        .expect(3)
        .stdout
        .clone();
    assert!(
        out.starts_with(
            "NEEDS_ANALYSIS: the RED test `sh check_add.sh` failed (exit 1), as it should"
        ),
        "{out}"
    );
    assert!(out.contains("add: not found\n"), "{out}");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("Your RED test failed as a RED test should (exit 1)."),
        "{brief}"
    );
    assert!(brief.contains("$ sh check_add.sh\n"), "{brief}");
    assert!(brief.contains("--analysis-decision SUCCESS"), "{brief}");
    repo.run(&[
        "submit-work",
        "-s",
        "add is missing: intended",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);

    // GREEN: passes, preflight runs, a checkpoint is owed.
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("STEP 1.2 (GREEN) of task 1/2 \"add\":\n  implement add\n"),
        "{brief}"
    );
    assert!(brief.contains("gates (tests)."), "{brief}");
    repo.write("add.sh", "echo 5\n");
    let out = repo
        .submit_test("sh check_add.sh", Some("PASS"))
        .expect(0)
        .stdout
        .clone();
    assert!(
        out.starts_with(
            "SUCCESS: step 1.2 DONE: `sh check_add.sh` passed (exit 0); preflight passed (1 gate)\n"
        ),
        "{out}"
    );
    assert!(out.contains("\npreflight: tests ok (exit 0, "), "{out}");
    assert!(
        out.contains("next: make the checkpoint commit with `git orchestrate checkpoint`"),
        "{out}"
    );

    // Until the checkpoint exists, get-task asks for it, and a test submit is refused.
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "STEP 1.2 (GREEN) passed verification: \"implement add\".\n\nMake a safety checkpoint"
        ),
        "{brief}"
    );
    let refused = repo.submit_test("true", None);
    refused.expect(4);
    assert!(
        refused
            .stderr
            .contains("checkpoint commit comes first (state EXECUTING_TDD)"),
        "{}",
        refused.stderr
    );

    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert_eq!(
        redact_ids(&out),
        "checkpoint <id>: checkpoint: 1.2 implement add\n\
         preflight: passed on exactly this tree with these gates before (at a submit-work or checkpoint); not run again\n\
         added 2 files that git did not track before: add.sh, check_add.sh\n\
         next: run `git orchestrate get-task`\n"
    );
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(repo.state()["last_commit_hash"], head.as_str());
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]),
        "checkpoint: 1.2 implement add\n\nOrchestrator-Checkpoint: 1.2\n\n"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the checkpoint committed everything"
    );

    // REFACTOR comes next, and passes.
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("STEP 1.3 (REFACTOR) of task 1/2 \"add\":\n  tidy add\n"),
        "{brief}"
    );
    repo.write("add.sh", "# tidied\necho 5\n");
    repo.submit_test("sh check_add.sh", None).expect(0);
    assert_eq!(repo.state()["pending"]["kind"], "checkpoint");

    // The audit log has one commit per transition, each with its trailers.
    let log = repo.git(&["log", "--format=%s", REF]);
    assert_eq!(
        log,
        "test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
branch: CREATING_BRANCH -> EXECUTING_TDD
plan: INITIALIZING -> CREATING_BRANCH
create: (none) -> INITIALIZING
"
    );
    let trailers = repo.git(&["log", "-1", "--format=%(trailers)", REF]);
    assert_eq!(
        trailers,
        "Orchestrator-Event: test\nOrchestrator-From: EXECUTING_TDD\nOrchestrator-To: EXECUTING_TDD\nOrchestrator-Step: 1.3\n\n"
    );
    // Every update is in the reflog, although git does not log custom refs by itself.
    let reflog = repo.git(&["reflog", "show", "--format=%gs", REF]);
    assert_eq!(reflog.lines().count(), 8, "{reflog}");
    assert!(
        reflog.starts_with("git-orchestrate: test: EXECUTING_TDD -> EXECUTING_TDD\n"),
        "{reflog}"
    );
}

#[test]
fn a_new_session_resumes_where_the_last_one_stopped() {
    let repo = TestRepo::at_green_step();
    let first = repo.run(&["get-task"]).expect(0).stdout.clone();
    // A fresh process (a new agent session) gets exactly the same briefing: the current step.
    let again = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(again["briefing"], first.as_str());
    assert_eq!(again["step"]["id"], "1.2");
    assert_eq!(again["step"]["type"], "GREEN");
    assert_eq!(again["step"]["task"], "add");

    // Interrupted while an analysis was pending: the next session is asked for it.
    let repo = TestRepo::at_first_step();
    repo.submit_test("echo missing; exit 1", None).expect(3);
    let json = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(json["pending"], "analysis");
    let briefing = json["briefing"].as_str().unwrap();
    assert!(briefing.contains("judge WHY it\nfailed"), "{briefing}");
    assert!(briefing.contains("missing\n"), "{briefing}");
}

#[test]
fn a_stale_all_done_plan_is_dropped() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    // A plan whose every step is DONE, left in INITIALIZING (as an interrupted older run or
    // a hand edit leaves it): written with git plumbing, as any tool could.
    let done_plan = PLAN.replace("\"TODO\"", "\"DONE\"");
    let state = r#"{"schema": 1, "status": "INITIALIZING", "main_branch": "main"}"#;
    repo.write_workflow_commit(&[
        ("pr.json", done_plan.as_bytes()),
        ("state.json", state.as_bytes()),
    ]);

    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.starts_with(
            "git-orchestrate · workflow main · INITIALIZING\n\n\
             Done for you: dropped the stale plan \"feat: Add numbers\": every step of it was DONE.\n\n\
             GOAL: plan the next pull request."
        ),
        "{out}"
    );
    let (has_plan, _) = repo.git_try(&["cat-file", "-e", &format!("{REF}:pr.json")]);
    assert!(!has_plan, "pr.json is gone from the workflow tree");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", REF]),
        "drop-stale-plan: INITIALIZING -> INITIALIZING\n"
    );
    // And a new plan is accepted again.
    repo.submit_plan(PLAN).expect(0);
}

#[test]
fn state_survives_reset_hard_and_clean_and_never_touches_the_working_tree() {
    let repo = TestRepo::at_green_step();
    repo.write("scratch.txt", "agent notes\n");
    let files_before = repo.worktree_files();
    let status_before = repo.run(&["status", "--json"]).expect(0).json();

    // Only the project's files, the agent's own files: no state files anywhere.
    assert_eq!(
        files_before,
        vec![
            ".orchestrate.toml",
            "add.sh",
            "docs/plan.md",
            "run_tests.sh",
            "scratch.txt",
            "test_add.sh",
            "test_sub.sh"
        ]
    );
    for name in [
        "ACTIVE_PR.json",
        "ORCHESTRATION_STATE.json",
        "state.json",
        "pr.json",
        "output.log",
    ] {
        assert!(
            !repo.path.join(name).exists(),
            "{name} was written to the working tree"
        );
    }

    repo.git(&["reset", "--hard", "--quiet"]);
    repo.git(&["clean", "-fdxq"]);
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json(),
        status_before
    );
    let brief = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(brief["state"], "EXECUTING_TDD");
    assert_eq!(brief["step"]["id"], "1.2");
}

#[test]
fn status_never_acts() {
    let repo = TestRepo::new();
    // No workflow yet: status says so and does not create one.
    let out = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(out.starts_with("workflow  main (not created yet"), "{out}");
    assert_eq!(repo.tip(), None);

    // CREATING_BRANCH: status does not create the branch (get-task would).
    repo.submit_plan(PLAN).expect(0);
    let tip = repo.tip();
    let json = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(json["state"], "CREATING_BRANCH");
    assert_eq!(json["tip"], tip.as_deref().unwrap());
    assert_eq!(repo.tip(), tip);
    assert_eq!(repo.git(&["branch", "--list", "feat/*"]), "");
}

#[test]
fn a_manual_checkpoint_commit_is_recognised_by_get_task() {
    let repo = TestRepo::at_green_step();
    repo.write("impl.sh", "echo ok\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    repo.commit_all("checkpoint: add implemented");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    // `status` (which never acts) says the owed commit is made and verified.
    let status = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        status.contains(&format!(
            "pending   a checkpoint commit: made ({} checkpoint: add implemented) and verified; the \
             next `git orchestrate get-task` records it\n",
            &head[..12]
        )),
        "{status}"
    );
    let json = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(json["checkpoint_made"]["verified"], true, "{json}");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(&format!(
            "Done for you: recorded checkpoint {} (checkpoint: add implemented).",
            &head[..12]
        )),
        "{brief}"
    );
    assert!(brief.contains("STEP 1.3 (REFACTOR)"), "{brief}");
    assert_eq!(repo.state()["last_commit_hash"], head.as_str());
    assert!(repo.state().get("pending").is_none());
}

#[test]
fn an_ordinary_commit_is_not_a_checkpoint() {
    let repo = TestRepo::at_green_step();
    repo.write("impl.sh", "echo ok\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    repo.commit_all("wip: not a checkpoint");
    let status = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(
        status["checkpoint_made"],
        serde_json::Value::Null,
        "{status}"
    );
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("Make a safety checkpoint commit"), "{brief}");
    assert_eq!(repo.state()["pending"]["kind"], "checkpoint");
}

#[test]
fn a_plan_edited_outside_the_orchestrator_is_read_afresh_not_from_a_stale_summary() {
    let repo = TestRepo::at_green_step();
    // Mark step 1.2 DONE in pr.json by hand, keeping state.json (and its plan summary) as is.
    let mut plan: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    plan["tasks"][0]["tdd_steps"][1]["status"] = "DONE".into();
    let state_json = repo.git(&["show", &format!("{REF}:state.json")]);
    repo.write_workflow_commit(&[
        (
            "pr.json",
            serde_json::to_string_pretty(&plan).unwrap().as_bytes(),
        ),
        ("state.json", state_json.as_bytes()),
    ]);

    let json = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(
        json["step"]["id"], "1.3",
        "the summary of the old pr.json must not be trusted"
    );
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["progress"]["done"],
        2
    );
    // The next write repairs the store's record: progress kept, the summary of this pr.json.
    repo.submit_test("true", None).expect(0);
    let state = repo.state();
    assert_eq!(
        state["plan_progress"]["plan"],
        repo.git(&["rev-parse", &format!("{REF}:pr.json")]).trim()
    );
    assert_eq!(state["plan_progress"]["summary"]["done"], 3);
}

#[test]
fn a_manual_checkpoint_with_unverified_changes_is_not_recorded() {
    let repo = TestRepo::at_green_step();
    repo.write("impl.sh", "echo ok\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    repo.write("sneaked-in.txt", "changed after verification\n");
    repo.commit_all("checkpoint: add implemented");
    let short = repo
        .git(&["rev-parse", "--short=12", "HEAD"])
        .trim()
        .to_string();
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("Make a safety checkpoint commit"), "{brief}");
    assert!(
        brief.contains(&format!(
            "WARNING: commit {short} (checkpoint: add implemented) is marked as a checkpoint, but it holds a tree that preflight has not verified (not at the last submit-work, nor in `checkpoint` or the commit-msg hook; a note is no proof); it was not recorded. Run `git orchestrate checkpoint`: it runs preflight on exactly what it commits."
        )),
        "{brief}"
    );
    assert_eq!(repo.state()["pending"]["kind"], "checkpoint");
    // `git orchestrate checkpoint` verifies what is there now and records its own commit.
    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert!(out.contains("preflight: tests ok"), "{out}");
    assert!(repo.state().get("pending").is_none());
}

/// A passing step is recorded beside the plan: pr.json keeps its object id (a large plan is
/// not rewritten for every step), while `plan show` and get-task see the step DONE; the plan
/// is written whole again when its last step is done.
#[test]
fn progress_is_recorded_beside_the_plan_until_the_last_step() {
    let repo = TestRepo::at_green_step();
    let blob = || {
        repo.git(&["rev-parse", &format!("{REF}:pr.json")])
            .trim()
            .to_string()
    };
    let accepted = blob();
    repo.write("impl.sh", "echo ok\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    assert_eq!(blob(), accepted, "the plan blob is the one accepted");
    assert_eq!(
        repo.state()["plan_progress"]["done"],
        serde_json::json!(["1.1", "1.2"])
    );
    let shown = repo.run(&["plan", "show", "--json"]).expect(0).json();
    assert_eq!(shown["plan"]["tasks"][0]["tdd_steps"][1]["status"], "DONE");
    assert_eq!(shown["plan"]["tasks"][0]["status"], "IN_PROGRESS");
    assert_eq!(shown["current_step"], "1.3");
    let stored: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    assert_eq!(stored["tasks"][0]["tdd_steps"][1]["status"], "TODO");

    // Task 1 ends (1.3), task 2 runs to its last step (2.2): the plan is stored as it now
    // reads, and the record starts afresh.
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("impl.sh", "echo tidy\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(blob(), accepted, "still the plan as accepted");
    repo.submit_test(RED_SUB, Some("FAIL")).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    assert_eq!(blob(), accepted);
    repo.write("sub.sh", "echo 1\n");
    repo.submit_test(RED_SUB, None).expect(0);
    assert_ne!(blob(), accepted);
    let stored: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:pr.json")])).unwrap();
    assert_eq!(stored["tasks"][0]["status"], "DONE");
    assert_eq!(stored["tasks"][1]["status"], "DONE");
    assert!(repo.state()["plan_progress"].get("done").is_none());
    assert_eq!(repo.state()["plan_progress"]["summary"]["done"], 5);
}

/// A workflow written by 0.2 (step statuses inside pr.json, the summary cache in
/// state.json's `plan_summary` and `plan_blob`) reads as it did and carries on.
#[test]
fn a_workflow_written_by_the_previous_version_carries_on() {
    let repo = TestRepo::at_green_step();
    let plan = repo.run(&["plan", "show", "--json"]).expect(0).json()["plan"].clone();
    let plan_json = serde_json::to_string_pretty(&plan).unwrap();
    let mut state = repo.state();
    let object = state.as_object_mut().unwrap();
    object.remove("plan_progress");
    object.insert(
        "plan_summary".into(),
        serde_json::json!({"title": "feat: Add numbers", "masterPlanPath": "docs/plan.md",
            "tasks": 2, "done": 1, "total": 5,
            "current": {"id": "1.2", "task": "add", "type": "GREEN", "description": "implement add", "after_red": true}}),
    );
    object.insert(
        "plan_blob".into(),
        "0000000000000000000000000000000000000000".into(),
    );
    repo.write_workflow_commit(&[
        ("pr.json", plan_json.as_bytes()),
        (
            "state.json",
            serde_json::to_string_pretty(&state).unwrap().as_bytes(),
        ),
    ]);

    let task = repo.run(&["get-task", "--json"]).expect(0).json();
    assert_eq!(task["step"]["id"], "1.2");
    repo.write("impl.sh", "echo ok\n");
    repo.submit_test("sh impl.sh", None).expect(0);
    let state = repo.state();
    assert!(state.get("plan_summary").is_none() && state.get("plan_blob").is_none());
    assert_eq!(state["plan_progress"]["done"], serde_json::json!(["1.2"]));
    assert_eq!(state["plan_progress"]["summary"]["done"], 2);
    assert_eq!(
        repo.run(&["plan", "show", "--json"]).expect(0).json()["current_step"],
        "1.3"
    );
}

/// At a GREEN step after its RED step, the briefing fills in the RED step's test command:
/// the command that must now pass.
#[test]
fn the_green_briefing_fills_in_the_red_steps_command() {
    let repo = TestRepo::at_green_step();
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("STEP 1.2 (GREEN)"), "{brief}");
    assert!(
        brief.contains(
            "  git orchestrate submit-work --summary \"<what you did>\" --test-command 'sh test_add.sh' --expectation PASS\n"
        ),
        "{brief}"
    );
    // A REFACTOR step has no RED test of its own: the command that last passed (the GREEN
    // step's) is filled in, the tests that must still pass.
    repo.submit_test(RED, Some("PASS")).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("STEP 1.3 (REFACTOR)"), "{brief}");
    assert!(
        brief.contains(
            "  git orchestrate submit-work --summary \"<what you did>\" --test-command 'sh test_add.sh' --expectation PASS\n"
        ),
        "{brief}"
    );
}

/// At a terminal, a submit that runs for a while shows a live line on stderr naming the
/// command, cleared when it ends; without a terminal (an agent, CI) nothing of it is printed.
#[test]
fn a_live_line_shows_what_runs_at_a_terminal_and_nothing_elsewhere() {
    let repo = TestRepo::at_green_step();
    let submit =
        format!("{BIN} submit-work -s green --test-command 'sleep 2; {RED}' --expectation PASS");
    let out = repo
        .command("script", ["-qec", submit.as_str(), "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux) runs the command at a pseudo-terminal");
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(
        seen.contains(&format!("\r\x1b[Krunning `sleep 2; {RED}` (1 s)")),
        "{seen:?}"
    );
    assert!(seen.contains("\r\x1b[KSUCCESS: step 1.2 DONE"), "{seen:?}");

    let repo = TestRepo::at_green_step();
    let out = repo.run(&[
        "submit-work",
        "-s",
        "green",
        "--test-command",
        &format!("sleep 2; {RED}"),
        "--expectation",
        "PASS",
    ]);
    out.expect(0);
    assert_eq!(out.stderr, "", "no live line without a terminal");
}

/// A gate whose command is exactly the test command that just passed on the same tree is not
/// run a second time: its record is the test's run, marked `reused` in the output, the
/// state and the checkpoint's note. A command that differs by a byte runs the gate again, and
/// so does a gate whose timeout the test's run would not have fitted in.
#[test]
fn a_gate_that_is_the_test_command_takes_its_run() {
    let repo = TestRepo::new();
    let counter = repo.path.with_extension("gate-runs");
    let runs = || {
        std::fs::read_to_string(&counter)
            .unwrap_or_default()
            .lines()
            .count()
    };
    // The gate's script counts its runs outside the repository.
    repo.write(
        "run_tests.sh",
        &format!(
            "echo run >> '{}'\nif [ -e fail ]; then echo 'tests: FAILED'; exit 1; fi\necho 'tests: ok'\n",
            counter.display()
        ),
    );
    repo.commit_all("chore: count the gate's runs");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write("add.sh", "echo 5\n");
    let gate = "sh run_tests.sh";
    let before = runs();

    let out = repo.submit_test(gate, Some("PASS"));
    out.expect(0).says("preflight: tests ok (exit 0, ");
    assert_eq!(
        runs() - before,
        1,
        "the test ran; the gate took its run\n{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("; reused: the test command is this gate's, and it just ran on this tree)"),
        "{}",
        out.stdout
    );
    let gates = &repo.state()["last_run"]["preflight"]["gates"];
    assert_eq!(gates[0]["reused"], true, "{gates}");
    repo.run(&["checkpoint"]).expect(0);
    let note = repo.git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    assert!(
        note.contains(r#""ms":"#) && note.contains(r#""reused":true"#),
        "{note}"
    );
    assert_eq!(runs() - before, 1, "the checkpoint took the recorded pass");
    repo.run(&["verify"])
        .expect(0)
        .says(", reused from the test run)");

    // Not the same command: the gate runs again.
    repo.write("add.sh", "echo 5\n# refactored\n");
    let out = repo.submit_test(&format!("{gate} "), Some("PASS"));
    out.expect(0);
    assert_eq!(runs() - before, 3, "{}", out.stdout);
    assert!(!out.stdout.contains("reused"), "{}", out.stdout);
}

/// An agent's file the orchestrator leaves out of the agent's work (`.mcp.json`) that the
/// project's `.gitignore` also names, there: every passing step failed (`git add` refuses a
/// literal pathspec naming an ignored path, even one that excludes it). The step passes and
/// the checkpoint commits the work, the file left out, whether the working tree's tree is
/// taken in-process or, with attributes (`.gitattributes`), by `git add`.
#[test]
fn a_passing_step_and_its_checkpoint_leave_out_an_ignored_agent_file() {
    for attributes in [false, true] {
        let repo = TestRepo::at_green_step();
        repo.write(".gitignore", ".mcp.json\n.codex/\n");
        repo.write(".mcp.json", "{\"mcpServers\": {}}\n");
        repo.write(".codex/config.toml", "x = 1\n");
        if attributes {
            repo.write(".gitattributes", "*.bin binary\n");
        }
        repo.submit_test(RED, None).expect(0);
        repo.run(&["checkpoint"]).expect(0);
        let committed = repo.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
        let files = ".gitignore\n.orchestrate.toml\nadd.sh\ndocs/plan.md\nrun_tests.sh\ntest_add.sh\ntest_sub.sh\n";
        let expected = if attributes {
            format!(".gitattributes\n{files}")
        } else {
            files.to_string()
        };
        assert_eq!(committed, expected, "attributes: {attributes}");
    }
}

/// The caller's git told to read pathspecs otherwise (`GIT_NOGLOB_PATHSPECS`,
/// `GIT_LITERAL_PATHSPECS`): the agents' files are still left out of a checkpoint.
#[test]
fn pathspec_settings_in_the_environment_do_not_let_an_agent_file_in() {
    for var in ["GIT_NOGLOB_PATHSPECS", "GIT_LITERAL_PATHSPECS"] {
        let repo = TestRepo::at_green_step();
        repo.write(".mcp.json", "{\"mcpServers\": {}}\n");
        repo.write(".gitattributes", "*.bin binary\n");
        let run =
            |args: &[&str]| Run::from(repo.command(BIN, args).env(var, "1").output().expect("run"));
        run(&["submit-work", "-s", "add", "--test-command", RED]).expect(0);
        run(&["checkpoint"]).expect(0);
        let committed = repo.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
        assert!(!committed.contains(".mcp.json"), "{var}: {committed}");
        assert!(committed.contains("add.sh"), "{var}: {committed}");
    }
}
