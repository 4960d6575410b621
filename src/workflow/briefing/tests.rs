//! Whole-text tests of the briefings.

use super::*;
use crate::workflow::Expectation;
use crate::workflow::debugging::Thresholds;
use crate::workflow::plan::{PlanSummary, StepType};
use crate::workflow::plan::{Step, StepId, parse_plan};
use crate::workflow::state::{ExitRecord, GateRecord, PreflightRecord};
use crate::workflow::state::{HaltReason, LastRun, RedAnalysis, RedTest};
use pretty_assertions::assert_eq;

const PLAN: &str = r#"{
    "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
    "verificationPlan": "v",
    "tasks": [
      {"taskName": "add", "status": "TODO", "tdd_steps": [
        {"type": "RED", "description": "test that add(2, 3) is 5", "status": "TODO"},
        {"type": "GREEN", "description": "implement add", "status": "TODO"}]}
    ]}"#;

fn ctx<'a>(state: &'a State, plan: Option<&'a PlanSummary>, gates: &'a [String]) -> Context<'a> {
    Context {
        workflow: "main",
        state,
        plan,
        master_plan: "docs/plan.md",
        output_log_command: "git show refs/orchestrator/workflows/main:output.log",
        gates,
        done: &[],
        warnings: &[],
        thresholds: Thresholds::default(),
        guidance: None,
        escalation: None,
        plan_show_command: "git show refs/orchestrator/workflows/main:pr.json",
        review_show_command: "git show refs/orchestrator/workflows/main:review.json",
        noted_findings: &[],
        main_branch: "main",
        idle: false,
        taken: &[],
    }
}

fn tdd_state() -> State {
    let mut s = State::new(Some("main".into()));
    s = s.edit(|w| {
        w.status = Status::ExecutingTdd;
        w.current_pr_branch = Some("feat/add-numbers".into());
    });
    s
}

#[test]
fn red_step_briefing() {
    let plan = parse_plan(PLAN.as_bytes()).unwrap();
    let state = tdd_state();
    let summary = plan.summary();
    let b = brief(&ctx(&state, Some(&summary), &[]));
    assert_eq!(
        b.text,
        r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 0 of 2 steps done

STEP 1.1 (RED) of task 1/1 "add":
  test that add(2, 3) is 5

Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

The files this step changes are pinned as the test: every later run of it (at the GREEN
step, and at the end on the PR's base and on the squashed commit) has them exactly as they
are now. So change only the test here, inside the repository, and make it a test that runs: a
command that runs no test (exit 126 or 127, a runner that reports no tests) is not a RED.

  git orchestrate submit-work --summary "<what you did>" --test-command "<command that runs the test>" --expectation FAIL

Then run `git orchestrate get-task` for your next instruction.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
    );
    assert_eq!(
        b.step,
        Some(StepView {
            id: "1.1".into(),
            task: "add".into(),
            kind: StepType::Red,
            description: "test that add(2, 3) is 5".into()
        })
    );
}

#[test]
fn debugging_briefing_after_a_failing_gate() {
    let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
    plan.complete_step(StepId::new(0, 0));
    let mut state = tdd_state();
    state = state.edit(|w| {
        w.status = Status::Debugging;
        w.debug_attempt_counter = 2;
        w.last_error = Some("lint: line 3: unused variable\n".into());
        w.last_run = Some(LastRun {
            step: StepId::new(0, 1),
            command: "sh tests/add.sh".into(),
            expectation: Expectation::Pass,
            exit: ExitRecord::code(0),
            verdict: Verdict::Failure,
            preflight: Some(PreflightRecord {
                gates: vec![GateRecord {
                    name: "lint".into(),
                    exit: ExitRecord::code(3),
                    ms: 12,
                    reused: false,
                }],
            }),
        });
    });
    let gates = vec!["lint".to_string()];
    let warnings = vec!["a warning".to_string()];
    let summary = plan.summary();
    let mut c = ctx(&state, Some(&summary), &gates);
    c.warnings = &warnings;
    let b = brief(&c);
    assert_eq!(
        b.text,
        r#"git-orchestrate · workflow main · DEBUGGING
PR: feat: Add numbers · branch feat/add-numbers · 1 of 2 steps done

Your previous submission failed. Your new primary goal is to fix the bug.

STEP 1.2 (GREEN) of task 1/1 "add":
  implement add

Debugging attempt 2 on this step.
What failed: your test command `sh tests/add.sh` passed, but the preflight gate `lint` failed (exit 3).

Guidance: read the output below, form one hypothesis about the cause, make one focused fix,
and submit again:

  git orchestrate submit-work --summary "<hypothesis and fix>" --test-command 'sh tests/add.sh' --expectation PASS

If the task and its test cannot both hold (the test demands what the task rules out, or the
reverse), do not bend the test or special-case the code to get past it. Say so, and a human
decides:

  git orchestrate submit-work --summary "<one line>" --contradiction "<what the task asks, what the test holds, why both cannot be true>"

Output (the end of it; all of it, byte for byte: git show refs/orchestrator/workflows/main:output.log):
----- BEGIN OUTPUT 87da5efd4f53c9f8 (quoted; nothing before END OUTPUT 87da5efd4f53c9f8 is from git-orchestrate) -----
lint: line 3: unused variable
----- END OUTPUT 87da5efd4f53c9f8 -----

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.

WARNING: a warning
"#
    );
    assert_eq!(b.attempt, 2);
}

#[test]
fn checkpoint_briefing_names_the_step_that_passed_not_the_next_one() {
    let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
    plan.complete_step(StepId::new(0, 0));
    plan.complete_step(StepId::new(0, 1));
    plan.tasks[0].tdd_steps.push(Step {
        kind: StepType::Refactor,
        description: "tidy add".into(),
        status: crate::workflow::plan::StepStatus::Todo,
    });
    let mut state = tdd_state();
    state = state.edit(|w| {
        w.pending = Some(Pending::Checkpoint {
            step: StepId::new(0, 1),
            step_type: StepType::Green,
            description: "implement add".into(),
        });
    });
    let summary = plan.summary();
    let b = brief(&ctx(&state, Some(&summary), &[]));
    assert_eq!(
        b.text,
        r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 2 of 3 steps done

STEP 1.2 (GREEN) passed verification: "implement add".

Make a safety checkpoint commit before the next step:

  git orchestrate checkpoint

It stages all changes, commits them as "checkpoint: 1.2 …" and records the commit.
(A commit of your own whose message starts with "checkpoint:" counts too, if it holds
exactly what was verified.) Then run `git orchestrate get-task` for the next step.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
    );
}

#[test]
fn shell_quoting() {
    assert_eq!(shell_quote("make"), "make");
    assert_eq!(shell_quote("cargo test -p x"), "'cargo test -p x'");
    assert_eq!(shell_quote("echo 'hi'"), r"'echo '\''hi'\'''");
}

/// Compares `text` with `tests/snapshots/briefings/<name>.txt`; with UPDATE_SNAPSHOTS=1
/// writes it instead. A missing snapshot is a failure, never silently accepted.
fn assert_snapshot(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/briefings")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {}; run with UPDATE_SNAPSHOTS=1 and review it",
            path.display()
        )
    });
    assert_eq!(text, expected, "briefing {name} differs from its snapshot");
}

const TWO_TASKS: &str = r#"{
    "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
    "verificationPlan": "v",
    "tasks": [
      {"taskName": "add", "status": "TODO", "tdd_steps": [
        {"type": "RED", "description": "test that add(2, 3) is 5", "status": "TODO"},
        {"type": "GREEN", "description": "implement add", "status": "TODO"},
        {"type": "REFACTOR", "description": "tidy add", "status": "TODO"}]},
      {"taskName": "sub", "status": "TODO", "tdd_steps": [
        {"type": "RED", "description": "test that sub(5, 3) is 2", "status": "TODO"}]}
    ]}"#;

/// The two-task plan with its first `done` steps DONE, in plan order. Deserialized, not
/// validated: its second task stops at a RED step, which a submitted plan may no longer
/// do, but these briefings only need a second task, and the snapshots keep their counts.
fn plan_at(done: usize) -> crate::workflow::plan::Plan {
    let mut plan: crate::workflow::plan::Plan = serde_json::from_str(TWO_TASKS).unwrap();
    for _ in 0..done {
        if let Some(id) = plan.current_step() {
            plan.complete_step(id);
        }
    }
    plan
}

/// What a snapshot varies besides the state and the plan.
#[derive(Default)]
struct Extras<'a> {
    done: &'a [DoneAction],
    warnings: &'a [String],
    no_gates: bool,
    thresholds: Option<Thresholds>,
    guidance: Option<&'a str>,
    escalation: Option<(&'a str, &'a str)>,
}

fn render(state: &State, done: usize, extras: Extras) -> String {
    let summary = plan_at(done).summary();
    let gates = if extras.no_gates {
        vec![]
    } else {
        vec!["tests".to_string()]
    };
    let mut c = ctx(state, Some(&summary), &gates);
    c.done = extras.done;
    c.warnings = extras.warnings;
    c.thresholds = extras.thresholds.unwrap_or_default();
    c.guidance = extras.guidance;
    c.escalation = extras.escalation;
    brief(&c).text
}

fn failed_green(attempt: u32) -> State {
    let mut state = tdd_state();
    state = state.edit(|w| {
        w.status = Status::Debugging;
        w.debug_attempt_counter = attempt;
        w.last_error = Some("test add ... FAILED\nexpected 5, got -1\n".into());
        w.last_run = Some(LastRun {
            step: StepId::new(0, 1),
            command: "cargo test add".into(),
            expectation: Expectation::Pass,
            exit: ExitRecord::code(101),
            verdict: Verdict::Failure,
            preflight: None,
        });
    });
    state
}

#[test]
fn every_briefing_matches_its_snapshot() {
    let mut init = State::new(Some("main".into()));
    let initializing = {
        let c = ctx(&init, None, &[]);
        brief(&c).text
    };
    assert_snapshot("initializing", &initializing);
    let taken = [
        super::TakenPr {
            pr: "PR 1: feat: Add numbers [DONE] 1a2b3c4".into(),
            claimed_by: None,
        },
        super::TakenPr {
            pr: "PR 2: feat: Multiply".into(),
            claimed_by: Some("workflow b (alice@box) since 2026-11-26 07:00:00 +0000".into()),
        },
    ];
    let claimed = {
        let mut c = ctx(&init, None, &[]);
        c.taken = &taken;
        brief(&c).text
    };
    assert_snapshot("initializing_claimed", &claimed);
    let idle = {
        let mut c = ctx(&init, None, &[]);
        c.idle = true;
        brief(&c)
    };
    assert_eq!((idle.step, idle.attempt), (None, 0));
    assert_snapshot("idle", &idle.text);

    init = init.edit(|w| {
        w.status = Status::CreatingBranch;
        w.current_pr_branch = Some("feat/add-numbers".into());
        w.last_error = Some("the working tree has uncommitted changes to tracked files:\n M src/lib.rs\nCommit them, or put them aside with `git stash`.".into());
    });
    assert_snapshot(
        "creating_branch_blocked",
        &render(&init, 0, Extras::default()),
    );

    let tdd = tdd_state();
    assert_snapshot("red_step", &render(&tdd, 0, Extras::default()));
    let done = vec![DoneAction::Branch(BranchOutcome::Created {
        branch: "feat/add-numbers".into(),
        main: "main".into(),
        pulled_from: None,
    })];
    assert_snapshot(
        "red_step_after_branching",
        &render(
            &tdd,
            0,
            Extras {
                done: &done,
                ..Default::default()
            },
        ),
    );
    // A GREEN step after its RED step: the RED step's recorded command is filled in.
    let red_failed = tdd.clone().edit(|w| {
        w.red_test = Some(RedTest {
            task: 0,
            command: "cargo test add".into(),
            tree: None,
            paths: Vec::new(),
            shared: Vec::new(),
            tests: Vec::new(),
            test_files: Default::default(),
            hooks: Vec::new(),
        });
    });
    assert_snapshot("green_step", &render(&red_failed, 1, Extras::default()));
    // The GREEN step's passing run is the test a REFACTOR step submits again.
    let green_passed = tdd.clone().edit(|w| {
        w.last_run = Some(LastRun {
            step: StepId::new(0, 1),
            command: "cargo test add".into(),
            expectation: Expectation::Pass,
            exit: ExitRecord::code(0),
            verdict: Verdict::Success,
            preflight: None,
        });
    });
    assert_snapshot(
        "refactor_step",
        &render(&green_passed, 2, Extras::default()),
    );
    assert_snapshot(
        "refactor_step_no_gates",
        &render(
            &green_passed,
            2,
            Extras {
                no_gates: true,
                ..Default::default()
            },
        ),
    );

    let mut analysis = tdd_state();
    analysis = analysis.edit(|w| {
        w.pending = Some(Pending::Analysis(RedAnalysis {
            step: StepId::new(0, 0),
            command: "cargo test add".into(),
            exit: ExitRecord::code(101),
            output_tail: "error[E0425]: cannot find function `add` in this scope\n".into(),
            red_tree: None,
            red_paths: Vec::new(),
            red_shared: Vec::new(),
            red_tests: Vec::new(),
            red_test_files: Default::default(),
            red_hooks: Vec::new(),
            syntax_error: None,
        }));
    });
    assert_snapshot("analysis", &render(&analysis, 0, Extras::default()));

    let pinned = analysis.edit(|w| {
        if let Some(Pending::Analysis(RedAnalysis {
            red_tree,
            red_paths,
            syntax_error,
            ..
        })) = &mut w.pending
        {
            *red_tree = Some("a1b2c3".into());
            *red_paths = vec!["tests/test_add.sh".into(), "src/add.sh".into()];
            *syntax_error = Some("tests/test_add.sh: 3: Syntax error: \"fi\" unexpected".into());
        }
    });
    assert_snapshot("analysis_pinned", &render(&pinned, 0, Extras::default()));
    let nothing_pinned = pinned.edit(|w| {
        if let Some(Pending::Analysis(RedAnalysis {
            red_paths,
            syntax_error,
            ..
        })) = &mut w.pending
        {
            red_paths.clear();
            *syntax_error = None;
        }
    });
    assert_snapshot(
        "analysis_nothing_pinned",
        &render(&nothing_pinned, 0, Extras::default()),
    );
    let shared = nothing_pinned.edit(|w| {
        if let Some(Pending::Analysis(RedAnalysis { red_shared, .. })) = &mut w.pending {
            *red_shared = vec!["src/lib.rs".into()];
        }
    });
    assert_snapshot("analysis_shared", &render(&shared, 0, Extras::default()));

    for attempt in [1, 2, 3, 5, 6, 9, 10] {
        assert_snapshot(
            &format!("debugging_attempt_{attempt}"),
            &render(&failed_green(attempt), 1, Extras::default()),
        );
    }
    let custom = Thresholds {
        hypothesize_max_attempts: 1,
        instrumentation_max_attempts: 1,
        unlock_scope_reduction_at: 2,
        unlock_escalation_at: 3,
    };
    for attempt in [2, 3] {
        assert_snapshot(
            &format!("debugging_custom_attempt_{attempt}"),
            &render(
                &failed_green(attempt),
                1,
                Extras {
                    thresholds: Some(custom),
                    ..Default::default()
                },
            ),
        );
    }
    let mut identical = failed_green(4);
    identical = identical.edit(|w| {
        w.identical_failures = 2;
    });
    assert_snapshot(
        "debugging_identical",
        &render(&identical, 1, Extras::default()),
    );

    let mut red_passed = failed_green(1);
    red_passed = red_passed.edit(|w| {
        w.last_run = Some(LastRun {
            step: StepId::new(0, 0),
            command: "cargo test add".into(),
            expectation: Expectation::Fail,
            exit: ExitRecord::code(0),
            verdict: Verdict::Failure,
            preflight: None,
        });
    });
    assert_snapshot(
        "debugging_red_passed",
        &render(&red_passed, 0, Extras::default()),
    );

    let mut timed_out = failed_green(1);
    if let Some(run) = timed_out.pr_mut().and_then(|pr| pr.last_run.as_mut()) {
        run.exit = ExitRecord::timed_out(600_000);
    }
    assert_snapshot(
        "debugging_timed_out",
        &render(&timed_out, 1, Extras::default()),
    );

    let resumed = failed_green(0);
    let warnings = vec!["no preflight gates are configured".to_string()];
    assert_snapshot(
        "debugging_resumed_with_guidance",
        &render(
            &resumed,
            1,
            Extras {
                guidance: Some(
                    "The test uses the old signature; call add(a, b), not add(&[a, b]).",
                ),
                warnings: &warnings,
                ..Default::default()
            },
        ),
    );

    let mut replanning = failed_green(6);
    replanning = replanning.edit(|w| {
        w.status = Status::Replanning;
        w.replan_context = Some(crate::workflow::state::ReplanContext {
            original_task: "add".into(),
            step: StepId::new(0, 1),
            error: "test add ... FAILED\nexpected 5, got -1\n".into(),
            untracked: vec!["scratch/debug.log".into(), "notes.txt".into()],
        });
    });
    assert_snapshot("replanning", &render(&replanning, 1, Extras::default()));

    let mut halted = failed_green(10);
    halted = halted.edit(|w| {
        w.status = Status::Halted;
        w.halt = Some(crate::workflow::state::HaltRecord {
            reason: HaltReason::Escalated,
            message: "the agent escalated for external help after 10 failed attempts".into(),
            resume_to: Status::Debugging,
        });
    });
    let reviewed = |status: Status| {
        let mut s = tdd_state();
        s = s.edit(|w| {
            w.status = status;
            w.review_round = 1;
            w.last_review = Some(crate::workflow::state::ReviewSummary {
                round: 1,
                ran: true,
                findings: 2,
                blocking: 0,
            });
        });
        s
    };
    let mut approval = reviewed(Status::CodeReview);
    approval = approval.edit(|w| {
        w.pending = Some(Pending::Approval { round: 1 });
    });
    assert_snapshot(
        "code_review_approval",
        &render(&approval, 4, Extras::default()),
    );
    let mut exhausted = reviewed(Status::CodeReview);
    exhausted = exhausted.edit(|w| {
        w.pending = Some(Pending::Escalation {
            reason:
                "3 review rounds ended with blocking findings, the most review.max_rounds allows"
                    .into(),
        });
    });
    assert_snapshot(
        "code_review_escalation",
        &render(&exhausted, 4, Extras::default()),
    );
    let mut review_error = reviewed(Status::CodeReview);
    review_error = review_error.edit(|w| {
        w.last_error = Some(
            "the security review failed: `sh review.sh` ended with exit 2; it said:\nreview.sh: jq: not found"
                .into(),
        )
    });
    assert_snapshot(
        "code_review_error",
        &render(&review_error, 4, Extras::default()),
    );
    assert_snapshot(
        "awaiting_finalization",
        &render(
            &reviewed(Status::AwaitingFinalization),
            4,
            Extras::default(),
        ),
    );
    let mut squashed = reviewed(Status::FinalizeComplete);
    squashed = squashed.edit(|w| {
        w.final_commit = Some("5d88a7584537662d385f2fcc39fd439fe6c13aee".into());
    });
    assert_snapshot(
        "finalize_complete",
        &render(&squashed, 4, Extras::default()),
    );
    let mut merge_blocked = reviewed(Status::MergingBranch);
    merge_blocked = merge_blocked.edit(|w| {
        w.last_error = Some("`git checkout --quiet main` failed (exit 1):\nerror: Your local changes would be overwritten".into());
    });
    assert_snapshot(
        "merging_blocked",
        &render(&merge_blocked, 4, Extras::default()),
    );
    let mut conflict = reviewed(Status::Halted);
    conflict = conflict.edit(|w| {
        w.halt = Some(crate::workflow::state::HaltRecord {
            reason: HaltReason::MergeConflict,
            message: "ERROR: Automated merge failed due to a conflict. Please resolve the conflict in branch 'feat/add-numbers' and merge it to main manually. Then run `git orchestrate resume`: it checks that the branch is merged, deletes it, and continues with the next PR. Conflicting files: src/lib.rs.".into(),
            resume_to: Status::MergingBranch,
        });
    });
    assert_snapshot(
        "halted_merge_conflict",
        &render(&conflict, 4, Extras::default()),
    );
    let mut with_feedback = plan_at(3);
    with_feedback.tasks[1].status = crate::workflow::plan::TaskStatus::Done;
    with_feedback.tasks[1].tdd_steps[0].status = crate::workflow::plan::StepStatus::Done;
    with_feedback
        .tasks
        .push(crate::workflow::review::feedback_task(
            1,
            &[crate::workflow::review::Finding {
                priority: crate::workflow::review::Priority::P1,
                file: Some("src/lib.rs".into()),
                line: Some(12),
                issue: "add() panics on overflow".into(),
                suggestion: Some("use checked_add".into()),
                dimensions: vec!["correctness".into()],
                human: false,
                answered: None,
            }],
        ));
    let summary = with_feedback.summary();
    let gates = vec!["tests".to_string()];
    // The last passing run (the last task's REFACTOR) is the test the fix submits again.
    let refactored = tdd.clone().edit(|w| {
        w.last_run = Some(LastRun {
            step: StepId::new(1, 2),
            command: "cargo test".into(),
            expectation: Expectation::Pass,
            exit: ExitRecord::code(0),
            verdict: Verdict::Success,
            preflight: None,
        });
    });
    assert_snapshot(
        "green_step_review_fix",
        &brief(&ctx(&refactored, Some(&summary), &gates)).text,
    );

    assert_snapshot(
        "halted_escalated",
        &render(
            &halted,
            1,
            Extras {
                escalation: Some((
                    "git show refs/orchestrator/workflows/main:escalation.md",
                    "# add() returns -1\n\nTried: 10 fixes. The subtraction comes from the macro.\n",
                )),
                ..Default::default()
            },
        ),
    );
}

/// Every briefing excerpt of docs/agent-guide.md marked `<!-- from tests/snapshots/… -->`
/// is a run of consecutive lines of that snapshot, as the briefing prints it today: the guide
/// cannot drift from the briefings it quotes (as docs/states.md cannot from the table).
#[test]
fn every_agent_guide_excerpt_is_its_snapshot() {
    const MARK: &str = "<!-- from tests/snapshots/";
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(root.join("docs/agent-guide.md")).unwrap();
    let mut checked = 0;
    let mut rest = guide.as_str();
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let name = &after[..after.find(" -->").expect("a closed marker")];
        let block = after
            .split_once("```text\n")
            .and_then(|(between, block)| {
                between
                    .trim_start_matches(|c| c != '\n')
                    .trim()
                    .is_empty()
                    .then_some(block)
            })
            .unwrap_or_else(|| panic!("the marker for {name} stands right above a text block"));
        let block = &block[..block.find("```").expect("a closed block")];
        let excerpt: Vec<&str> = block.lines().map(str::trim_end).collect();
        let snapshot = std::fs::read_to_string(root.join("tests/snapshots").join(name))
            .unwrap_or_else(|_| panic!("docs/agent-guide.md quotes a missing snapshot {name}"));
        let lines: Vec<&str> = snapshot.lines().map(str::trim_end).collect();
        assert!(
            lines
                .windows(excerpt.len())
                .any(|w| w == excerpt.as_slice()),
            "docs/agent-guide.md's excerpt of {name} is no longer what the briefing prints:\n{}\n\
             copy the lines from tests/snapshots/{name}",
            excerpt.join("\n")
        );
        checked += 1;
        rest = after;
    }
    assert!(checked >= 16, "only {checked} excerpts are checked");
}

/// A passing test with every gate passing, refused all the same (a protected path, the RED
/// test run again, files changed meanwhile): the briefing does not call the test failed.
#[test]
fn a_refused_submission_whose_test_passed_does_not_say_it_failed() {
    let mut run = LastRun {
        step: StepId::new(0, 1),
        command: "sh tests/add.sh".into(),
        expectation: Expectation::Pass,
        exit: ExitRecord::code(0),
        verdict: Verdict::Failure,
        preflight: None,
    };
    let expected = "your test command `sh tests/add.sh` passed (exit 0), but the submission was \
                    refused for what its output named (the task's RED test failing when run \
                    again, a protected path changed, or files changed while the tests ran).";
    assert_eq!(super::states::what_failed(&run), expected);
    run.preflight = Some(PreflightRecord {
        gates: vec![GateRecord {
            name: "lint".into(),
            exit: ExitRecord::code(0),
            ms: 3,
            reused: true,
        }],
    });
    assert_eq!(super::states::what_failed(&run), expected);
    run.exit = ExitRecord::code(1);
    assert_eq!(
        super::states::what_failed(&run),
        "your test command `sh tests/add.sh` failed (exit 1)."
    );
}
