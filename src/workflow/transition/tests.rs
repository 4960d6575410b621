//! The transition table's rows: `(state, event) -> (state, effects)`, and the checks'.

use super::tdd::Tdd;
use super::*;
use crate::workflow::debugging::Thresholds;
use crate::workflow::plan::{Plan, StepId, StepType};
use crate::workflow::review::{Finding, Priority, ReviewRecord};
use crate::workflow::state::Verdict;
use crate::workflow::state::{ExitRecord, Pending, PreflightRecord, State, Status};
use crate::workflow::state::{HaltReason, HaltRecord, Pin, PreflightCache, ReplanContext};
use crate::workflow::state::{RedAnalysis, RedTest, ReviewSummary};
use crate::workflow::{Decision, Expectation};

/// A request without payload: the decision is the same with any.
type Request = SubmitRequest<(), ()>;
use crate::workflow::plan::parse_plan;
use crate::workflow::state::GateRecord;
use pretty_assertions::assert_eq;

const PLAN: &str = r#"{
    "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
    "verificationPlan": "v",
    "tasks": [
      {"taskName": "add", "status": "TODO", "tdd_steps": [
        {"type": "RED", "description": "test add", "status": "TODO"},
        {"type": "GREEN", "description": "implement add", "status": "TODO"},
        {"type": "REFACTOR", "description": "tidy add", "status": "TODO"}]}
    ]}"#;

/// A tree and a commit id, full as git prints them: what every recorded id is.
const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const COMMIT: &str = "c0ffee0000000000000000000000000000000000";

fn plan() -> Plan {
    parse_plan(PLAN.as_bytes()).unwrap()
}

/// The plan with the first `n` steps DONE.
fn plan_done(n: usize) -> Plan {
    let mut p = plan();
    for s in 0..n {
        p.complete_step(StepId::new(0, s));
    }
    p
}

fn state(status: Status) -> State {
    let mut s = State::new(Some("main".into()));
    s = s.edit(|w| {
        w.status = status;
    });
    if !matches!(status, Status::Initializing) {
        s = s.edit(|w| {
            w.current_pr_branch = Some("feat/add-numbers".into());
        });
    }
    s
}

/// What the workflow accounts for on main (docs/integrity.md, "main moves only through a
/// workflow or a human"): set by the first pin, moved by its own merge and by a human's
/// repin, and nothing else.
#[test]
fn main_tip_moves_with_the_first_pin_the_workflows_merge_and_a_repin() {
    // main's commits, full ids as every recorded one is.
    const M0: &str = "0000000000000000000000000000000000000000";
    const M2: &str = "2222222222222222222222222222222222222222";
    const M3: &str = "3333333333333333333333333333333333333333";
    const M4: &str = "4444444444444444444444444444444444444444";
    let pin = |c: &str| Pin {
        commit: c.into(),
        config: None,
    };
    let tip = |s: &State| s.main_tip.clone();
    let creating = state(CreatingBranch);
    let t = transition(
        &creating,
        Some(&plan()),
        Event::BranchReady {
            base: None,
            pin: Some(pin(M0)),
        },
    )
    .unwrap();
    assert_eq!(tip(&t.state), Some(M0.into()), "the first pin");
    let accounted = creating.edit(|w| w.main_tip = Some("m1".into()));
    let t = transition(
        &accounted,
        Some(&plan()),
        Event::BranchReady {
            base: None,
            pin: Some(pin(M2)),
        },
    )
    .unwrap();
    assert_eq!(
        tip(&t.state),
        Some("m1".into()),
        "a later PR's pin moves nothing"
    );

    let merging = state(MergingBranch).edit(|w| w.main_tip = Some("m1".into()));
    let merged = |main: Option<&str>| {
        transition(
            &merging,
            None,
            Event::Merged {
                branch: "feat/add-numbers".into(),
                main: main.map(str::to_string),
            },
        )
        .unwrap()
        .state
    };
    assert_eq!(tip(&merged(Some(M3))), Some(M3.into()), "its own merge");
    assert_eq!(
        tip(&merged(None)),
        Some("m1".into()),
        "a merge that names no commit"
    );

    for status in [Initializing, ExecutingTdd] {
        let t = transition(
            &state(status).edit(|w| w.main_tip = Some("m1".into())),
            None,
            Event::Repinned { pin: pin(M4) },
        )
        .unwrap();
        assert_eq!(tip(&t.state), Some(M4.into()), "{status:?}: a repin");
    }
}

/// The GREEN step's run of its RED test: still failing, or passing without running a
/// test (all skipped), is a failure that names the files put back for it.
#[test]
fn a_red_rerun_that_fails_or_ran_nothing_fails_the_green_step() {
    let s12 = StepId::new(0, 1);
    let at_green = state(ExecutingTdd).edit(|w| {
        w.red_test = Some(RedTest {
            task: 0,
            command: "sh red.sh".into(),
            tree: Some("t0".into()),
            paths: vec!["red.sh".into()],
            shared: Vec::new(),
            tests: Vec::new(),
            test_files: Default::default(),
            hooks: Vec::new(),
        })
    });
    let green = |code: i32, not_run: Option<&str>, restored: &[&str]| {
        let Event::TestRan(mut run) = run(
            s12,
            Pass,
            0,
            (code == 0 && not_run.is_none()).then(|| gates(true)),
        ) else {
            unreachable!("run makes a TestRan")
        };
        run.red_rerun = Some(RedRerun {
            command: "sh red.sh".into(),
            exit: ExitRecord::code(code),
            output_tail: "1 skipped".into(),
            restored: restored.iter().map(|p| p.to_string()).collect(),
            taken_out: Vec::new(),
            hooks: Vec::new(),
            not_run: not_run.map(str::to_string),
        });
        let t = transition(&at_green, Some(&plan_done(1)), Event::TestRan(run)).unwrap();
        (
            t.state.status(),
            t.summary.lines().next().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(
        green(0, Some("every test was skipped"), &[]),
        (
            Debugging,
            "FAILURE: `sh t.sh` passed (exit 0), but the task's RED test `sh red.sh` passes without \
             running a test (every test was skipped): the GREEN step must make it pass; debugging \
             attempt 1"
                .to_string()
        )
    );
    assert_eq!(
        green(1, None, &["red.sh"]),
        (
            Debugging,
            "FAILURE: `sh t.sh` passed (exit 0), but the task's RED test `sh red.sh` (run with \
             red.sh as the RED step left it) still fails (exit 1): the GREEN step must make it \
             pass; debugging attempt 1"
                .to_string()
        )
    );
    assert_eq!(green(0, None, &["red.sh"]).0, ExecutingTdd);
}

fn debugging(counter: u32) -> State {
    let mut s = state(Status::Debugging);
    s = s.edit(|w| {
        w.debug_attempt_counter = counter;
        w.last_error = Some("old failure".into());
    });
    s
}

fn with_pending(mut s: State, pending: Pending) -> State {
    s = s.edit(|w| {
        w.pending = Some(pending);
    });
    s
}

fn analysis_pending(step: StepId) -> Pending {
    Pending::Analysis(RedAnalysis {
        step,
        command: "sh t.sh".into(),
        exit: ExitRecord::code(1),
        output_tail: "assertion failed: add missing".into(),
        red_tree: None,
        red_paths: Vec::new(),
        red_shared: Vec::new(),
        red_tests: Vec::new(),
        red_test_files: Default::default(),
        red_hooks: Vec::new(),
        syntax_error: None,
    })
}

fn checkpoint_pending(step: StepId) -> Pending {
    Pending::Checkpoint {
        step,
        step_type: StepType::Green,
        description: "implement add".into(),
    }
}

fn gates(passed: bool) -> PreflightOutcome {
    PreflightOutcome {
        record: PreflightRecord {
            gates: vec![GateRecord {
                name: "tests".into(),
                exit: ExitRecord::code(if passed { 0 } else { 1 }),
                ms: 5,
                reused: false,
            }],
        },
        failure: (!passed).then(|| ("tests".to_string(), "gate broke".to_string())),
        verified_tree: passed.then(|| TREE.to_string()),
        key: passed.then(|| "key".to_string()),
        changed: Vec::new(),
        protected: Vec::new(),
    }
}

fn run(
    step: StepId,
    expectation: Expectation,
    code: i32,
    preflight: Option<PreflightOutcome>,
) -> Event {
    Event::TestRan(Box::new(TestRun {
        step,
        kind: plan().step(step).unwrap().kind,
        description: plan().step(step).unwrap().description.clone(),
        command: "sh t.sh".into(),
        expectation,
        exit: ExitRecord::code(code),
        output_tail: format!("output of exit {code}"),
        preflight,
        red_rerun: None,
        summary: "did it".into(),
        red: None,
        syntax_error: None,
        proof: None,
        tested_tree: None,
    }))
}

/// What a table row checks: the resulting status, the fields that carry the protocol,
/// which steps are DONE afterwards, and the effects.
#[derive(Debug, PartialEq)]
struct Outcome {
    to: Status,
    counter: u32,
    last_error: Option<String>,
    pending: Option<&'static str>,
    branch: Option<String>,
    done_steps: Option<usize>,
    effects: Vec<Effect>,
}

fn outcome(t: &Transition, plan_before: Option<&Plan>) -> Outcome {
    let plan_after = match &t.plan {
        PlanChange::Keep | PlanChange::Materialize => plan_before.cloned(),
        PlanChange::CompleteStep(step) => plan_before.cloned().map(|mut p| {
            p.complete_step(*step);
            p
        }),
        PlanChange::Replace(p) => Some(p.clone()),
        PlanChange::Drop => None,
    };
    Outcome {
        to: t.to(),
        counter: t.state.attempts(),
        last_error: t.state.last_error().map(str::to_string),
        pending: t.state.pending().as_ref().map(Pending::kind),
        branch: t.state.branch().map(str::to_string),
        done_steps: plan_after.map(|p| p.progress().0),
        effects: t.effects.clone(),
    }
}

fn expect(
    to: Status,
    counter: u32,
    last_error: Option<&str>,
    pending: Option<&'static str>,
    done_steps: Option<usize>,
    effects: Vec<Effect>,
) -> Outcome {
    Outcome {
        to,
        counter,
        last_error: last_error.map(str::to_string),
        pending,
        branch: (to != Status::Initializing).then(|| "feat/add-numbers".to_string()),
        done_steps,
        effects,
    }
}

use Effect::{Reply, SaveOutput};
use Expectation::{Fail, Pass};
use OutputSource::{Gate, Test};
use Status::*;

#[test]
fn transition_table() {
    let s11 = StepId::new(0, 0);
    let s12 = StepId::new(0, 1);
    let s13 = StepId::new(0, 2);
    #[rustfmt::skip]
    let table: Vec<(&str, State, Option<Plan>, Event, Outcome)> = vec![
        ("plan accepted in INITIALIZING",
         state(Initializing), None,
         Event::PlanSubmitted { plan: plan(), branch: "feat/add-numbers".into(), summary: "p".into() },
         expect(CreatingBranch, 0, None, None, Some(0), vec![Reply(Verdict::Success)])),
        ("stale plan dropped in INITIALIZING",
         state(Initializing), Some(plan_done(3)), Event::StalePlanDropped { title: Some("feat: Add numbers".into()) },
         expect(Initializing, 0, None, None, None, vec![])),
        ("stale plan dropped in CREATING_BRANCH",
         state(CreatingBranch), Some(plan_done(3)), Event::StalePlanDropped { title: None },
         expect(Initializing, 0, None, None, None, vec![])),
        ("branch created",
         state(CreatingBranch), Some(plan()), Event::BranchReady { base: None, pin: None },
         expect(ExecutingTdd, 0, None, None, Some(0), vec![])),
        ("branch blocked keeps the state and says why",
         state(CreatingBranch), Some(plan()), Event::BranchBlocked { reason: "dirty".into() },
         expect(CreatingBranch, 0, Some("dirty"), None, Some(0), vec![])),
        ("RED fails as expected -> NEEDS_ANALYSIS",
         state(ExecutingTdd), Some(plan()), run(s11, Fail, 1, None),
         expect(ExecutingTdd, 0, None, Some("analysis"), Some(0), vec![SaveOutput(Test), Reply(Verdict::NeedsAnalysis)])),
        ("RED passes -> mismatch -> DEBUGGING 1",
         state(ExecutingTdd), Some(plan()), run(s11, Fail, 0, None),
         expect(Debugging, 1, Some("output of exit 0"), None, Some(0), vec![SaveOutput(Test), Reply(Verdict::Failure)])),
        ("analysis SUCCESS -> step DONE, no checkpoint after RED",
         with_pending(state(ExecutingTdd), analysis_pending(s11)), Some(plan()),
         Event::AnalysisDecided { decision: Decision::Success, summary: "right reason".into() },
         expect(ExecutingTdd, 0, None, None, Some(1), vec![Reply(Verdict::Success)])),
        ("analysis FAILURE -> DEBUGGING 1 with the analysed output",
         with_pending(state(ExecutingTdd), analysis_pending(s11)), Some(plan()),
         Event::AnalysisDecided { decision: Decision::Failure, summary: "typo".into() },
         expect(Debugging, 1, Some("assertion failed: add missing"), None, Some(0), vec![Reply(Verdict::Failure)])),
        ("GREEN passes with preflight -> DONE + checkpoint owed",
         state(ExecutingTdd), Some(plan_done(1)), run(s12, Pass, 0, Some(gates(true))),
         expect(ExecutingTdd, 0, None, Some("checkpoint"), Some(2), vec![SaveOutput(Test), Reply(Verdict::Success)])),
        ("GREEN fails -> DEBUGGING 1",
         state(ExecutingTdd), Some(plan_done(1)), run(s12, Pass, 1, None),
         expect(Debugging, 1, Some("output of exit 1"), None, Some(1), vec![SaveOutput(Test), Reply(Verdict::Failure)])),
        ("GREEN passes but a gate fails -> DEBUGGING 1 with the gate output",
         state(ExecutingTdd), Some(plan_done(1)), run(s12, Pass, 0, Some(gates(false))),
         expect(Debugging, 1, Some("gate broke"), None, Some(1), vec![SaveOutput(Gate("tests".into())), Reply(Verdict::Failure)])),
        ("REFACTOR passes -> checkpoint owed",
         state(ExecutingTdd), Some(plan_done(2)), run(s13, Pass, 0, Some(gates(true))),
         expect(ExecutingTdd, 0, None, Some("checkpoint"), Some(3), vec![SaveOutput(Test), Reply(Verdict::Success)])),
        ("DEBUGGING: another failure counts up",
         debugging(3), Some(plan_done(1)), run(s12, Pass, 2, None),
         expect(Debugging, 4, Some("output of exit 2"), None, Some(1), vec![SaveOutput(Test), Reply(Verdict::Failure)])),
        ("DEBUGGING: a matching PASS leaves debugging, clears counter and error",
         debugging(3), Some(plan_done(1)), run(s12, Pass, 0, Some(gates(true))),
         expect(ExecutingTdd, 0, None, Some("checkpoint"), Some(2), vec![SaveOutput(Test), Reply(Verdict::Success)])),
        ("DEBUGGING: a failing gate counts up",
         debugging(2), Some(plan_done(1)), run(s12, Pass, 0, Some(gates(false))),
         expect(Debugging, 3, Some("gate broke"), None, Some(1), vec![SaveOutput(Gate("tests".into())), Reply(Verdict::Failure)])),
        ("DEBUGGING on a RED step: failing as expected asks for analysis, still DEBUGGING",
         debugging(1), Some(plan()), run(s11, Fail, 1, None),
         expect(Debugging, 1, Some("old failure"), Some("analysis"), Some(0), vec![SaveOutput(Test), Reply(Verdict::NeedsAnalysis)])),
        ("DEBUGGING on a RED step: passing again counts up",
         debugging(1), Some(plan()), run(s11, Fail, 0, None),
         expect(Debugging, 2, Some("output of exit 0"), None, Some(0), vec![SaveOutput(Test), Reply(Verdict::Failure)])),
        ("DEBUGGING: analysis SUCCESS leaves debugging",
         with_pending(debugging(2), analysis_pending(s11)), Some(plan()),
         Event::AnalysisDecided { decision: Decision::Success, summary: "ok".into() },
         expect(ExecutingTdd, 0, None, None, Some(1), vec![Reply(Verdict::Success)])),
        ("DEBUGGING: analysis FAILURE counts up",
         with_pending(debugging(2), analysis_pending(s11)), Some(plan()),
         Event::AnalysisDecided { decision: Decision::Failure, summary: "no".into() },
         expect(Debugging, 3, Some("assertion failed: add missing"), None, Some(0), vec![Reply(Verdict::Failure)])),
        ("checkpoint recorded clears what was owed",
         with_pending(state(ExecutingTdd), checkpoint_pending(s12)), Some(plan_done(2)),
         Event::CheckpointRecorded { commit: COMMIT.into(), subject: "checkpoint: 1.2".into(), tree: TREE.into(), },
         expect(ExecutingTdd, 0, None, None, Some(2), vec![])),
    ];
    for (name, before, plan, event, expected) in table {
        let t = transition(&before, plan.as_ref(), event.clone())
            .unwrap_or_else(|r| panic!("{name}: rejected: {r:?}"));
        assert_eq!(outcome(&t, plan.as_ref()), expected, "{name}");
        // The engine parses pr.json only when needs_full_plan says so: every other event
        // must come out the same without it.
        if !needs_full_plan(&event) {
            assert_eq!(
                transition(&before, None, event),
                Ok(t),
                "{name}: without the full plan"
            );
        }
    }
}

#[test]
fn checkpoint_records_the_commit_and_keeps_the_verified_tree_until_then() {
    let t = transition(
        &state(ExecutingTdd),
        Some(&plan_done(1)),
        run(StepId::new(0, 1), Pass, 0, Some(gates(true))),
    )
    .unwrap();
    assert_eq!(
        t.state.pending(),
        Some(Pending::Checkpoint {
            step: StepId::new(0, 1),
            step_type: StepType::Green,
            description: "implement add".into(),
        })
    );
    let t2 = transition(
        &t.state,
        Some(&plan_done(2)),
        Event::CheckpointRecorded {
            commit: COMMIT.into(),
            subject: "checkpoint: 1.2".into(),
            tree: TREE.into(),
        },
    )
    .unwrap();
    assert_eq!(
        t2.state.pr().and_then(|pr| pr.last_checkpoint.as_deref()),
        Some(COMMIT)
    );
    assert_eq!(t2.state.pending(), None);
    let cache = PreflightCache {
        tree: TREE.into(),
        key: "key".into(),
        gates: gates(true).record.gates,
    };
    assert_eq!(
        t2.state.pr().and_then(|pr| pr.preflight_cache.as_ref()),
        Some(&cache),
        "the passing run is kept for the hook and the checkpoint command"
    );

    let newer = PreflightCache {
        tree: "tree-2".into(),
        ..cache
    };
    let t3 = transition(
        &t2.state,
        None,
        Event::PreflightPassed {
            cache: newer.clone(),
        },
    )
    .unwrap();
    assert_eq!(
        t3.state.pr().and_then(|pr| pr.preflight_cache.as_ref()),
        Some(&newer)
    );
    assert_eq!(
        t3.state.pr().and_then(|pr| pr.verified_tree.as_deref()),
        Some(TREE),
        "only a recorded checkpoint moves the tree the squash is held to"
    );
}

#[test]
fn events_that_do_not_fit_the_state_are_rejected() {
    #[rustfmt::skip]
    let table: Vec<(State, Option<Plan>, Event)> = vec![
        (state(ExecutingTdd), Some(plan()), Event::PlanSubmitted { plan: plan(), branch: "b".into(), summary: "s".into() }),
        (state(Initializing), None, Event::BranchReady { base: None, pin: None }),
        (state(ExecutingTdd), Some(plan()), Event::BranchBlocked { reason: "r".into() }),
        (state(Initializing), None, run(StepId::new(0, 0), Fail, 1, None)),
        (state(CreatingBranch), Some(plan()), run(StepId::new(0, 0), Fail, 1, None)),
        (state(ExecutingTdd), Some(plan()), Event::AnalysisDecided { decision: Decision::Success, summary: "s".into() }),
        (state(Initializing), None, Event::CheckpointRecorded { commit: "c".into(), subject: "s".into(), tree: "t".into(), }),
    ];
    for (before, plan, event) in table {
        let name = format!("{} in {}", event.name(), before.status());
        let r = transition(&before, plan.as_ref(), event).expect_err(&name);
        assert_eq!(r.kind, RejectionKind::WrongState, "{name}");
        assert_eq!(r.state, before.status(), "{name}");
    }
}

#[test]
fn get_task_decides_what_to_do() {
    let owed = with_pending(state(ExecutingTdd), checkpoint_pending(StepId::new(0, 1)));
    let mut owed_with_last = owed.clone();
    owed_with_last = owed_with_last.edit(|w| {
        w.last_commit_hash = Some("c1".into());
    });
    // As an older version could leave it: read from state.json, it is INITIALIZING again.
    let creating_unnamed = State::from_json(br#"{"schema":1,"status":"CREATING_BRANCH"}"#).unwrap();
    let mut halted = state(Halted);
    halted = halted.edit(|w| {
        w.current_pr_branch = None;
    });
    #[rustfmt::skip]
    let table: Vec<(&str, State, Option<Plan>, GetTaskStep)> = vec![
        ("fresh workflow", state(Initializing), None, GetTaskStep::Brief),
        ("stale plan in INITIALIZING", state(Initializing), Some(plan_done(3)), GetTaskStep::DropStalePlan),
        ("stale plan in CREATING_BRANCH", state(CreatingBranch), Some(plan_done(3)), GetTaskStep::DropStalePlan),
        ("CREATING_BRANCH without a plan", state(CreatingBranch), None, GetTaskStep::DropStalePlan),
        ("live plan in INITIALIZING", state(Initializing), Some(plan()), GetTaskStep::AdoptPlan),
        ("CREATING_BRANCH without a name", creating_unnamed, Some(plan()), GetTaskStep::AdoptPlan),
        ("CREATING_BRANCH", state(CreatingBranch), Some(plan()),
         GetTaskStep::PrepareBranch { branch: "feat/add-numbers".into() }),
        ("a step to do", state(ExecutingTdd), Some(plan()), GetTaskStep::Brief),
        ("debugging", debugging(1), Some(plan()), GetTaskStep::Brief),
        ("checkpoint owed", owed, Some(plan_done(2)), GetTaskStep::LookForCheckpoint { since: None }),
        ("checkpoint owed after an earlier one", owed_with_last, Some(plan_done(2)),
         GetTaskStep::LookForCheckpoint { since: Some("c1".into()) }),
        ("halted", halted, None, GetTaskStep::Halted),
    ];
    for (name, st, plan, expected) in table {
        let summary = plan.as_ref().map(Plan::summary);
        assert_eq!(get_task_step(&st, summary.as_ref()), expected, "{name}");
    }
}

type SubmitCase = (
    &'static str,
    State,
    Option<Plan>,
    SubmitRequest,
    Result<Accepted, (RejectionKind, &'static str)>,
);

#[test]
fn submit_is_checked_before_anything_runs() {
    let s11 = StepId::new(0, 0);
    let s12 = StepId::new(0, 1);
    let test = |e| Request::Test {
        command: (),
        expectation: e,
    };
    let accepted = |step: StepId, expectation| {
        let kind = plan().step(step).unwrap().kind;
        let description = plan().step(step).unwrap().description.clone();
        Ok(Accepted::Test {
            command: (),
            step,
            kind,
            description,
            expectation,
        })
    };
    #[rustfmt::skip]
    let table: Vec<SubmitCase> = vec![
        ("plan in INITIALIZING", state(Initializing), None, Request::Plan(()), Ok(Accepted::Plan(()))),
        ("plan while one is active", state(ExecutingTdd), Some(plan()), Request::Plan(()),
         Err((RejectionKind::WrongState, "submit-work --plan is not accepted in state EXECUTING_TDD: the plan \"feat: Add numbers\" is active"))),
        ("test in INITIALIZING", state(Initializing), None, test(None),
         Err((RejectionKind::WrongState, "submit-work --test-command is not accepted in state INITIALIZING: no PR plan is active yet"))),
        ("test in CREATING_BRANCH", state(CreatingBranch), Some(plan()), test(Some(Fail)),
         Err((RejectionKind::WrongState, "submit-work --test-command is not accepted in state CREATING_BRANCH: the PR branch has not been created yet"))),
        ("RED: expectation defaults to FAIL", state(ExecutingTdd), Some(plan()), test(None), accepted(s11, Fail)),
        ("RED with FAIL", state(ExecutingTdd), Some(plan()), test(Some(Fail)), accepted(s11, Fail)),
        ("RED with PASS is refused", state(ExecutingTdd), Some(plan()), test(Some(Pass)),
         Err((RejectionKind::InvalidInput, "step 1.1 is a RED step, so its test is expected to fail; --expectation PASS does not fit it"))),
        ("GREEN with FAIL is refused", state(ExecutingTdd), Some(plan_done(1)), test(Some(Fail)),
         Err((RejectionKind::InvalidInput, "step 1.2 is a GREEN step, so its test is expected to pass; --expectation FAIL does not fit it"))),
        ("GREEN defaults to PASS", debugging(2), Some(plan_done(1)), test(None), accepted(s12, Pass)),
        ("test while analysis pending", with_pending(state(ExecutingTdd), analysis_pending(s11)), Some(plan()), test(None),
         Err((RejectionKind::WrongState, "submit-work --test-command is not accepted now: step 1.1 is waiting for your analysis of the last run (state EXECUTING_TDD)"))),
        ("test while checkpoint owed", with_pending(state(ExecutingTdd), checkpoint_pending(s12)), Some(plan_done(2)), test(None),
         Err((RejectionKind::WrongState, "submit-work --test-command is not accepted now: step 1.2 passed and its checkpoint commit comes first (state EXECUTING_TDD)"))),
        ("last step passed, checkpoint owed", with_pending(state(ExecutingTdd), checkpoint_pending(StepId::new(0, 2))), Some(plan_done(3)), test(None),
         Err((RejectionKind::WrongState, "submit-work --test-command is not accepted now: step 1.3 passed and its checkpoint commit comes first (state EXECUTING_TDD)"))),
        ("test with everything DONE", state(ExecutingTdd), Some(plan_done(3)), test(None),
         Err((RejectionKind::WrongState, "every step of the plan is DONE (state EXECUTING_TDD); there is nothing to test"))),
        ("analysis when pending", with_pending(state(ExecutingTdd), analysis_pending(s11)), Some(plan()),
         Request::Analysis(Decision::Success), Ok(Accepted::Analysis(Decision::Success))),
        ("analysis when nothing is pending", state(ExecutingTdd), Some(plan()), Request::Analysis(Decision::Success),
         Err((RejectionKind::WrongState, "no analysis is pending in state EXECUTING_TDD: --analysis-decision answers a NEEDS_ANALYSIS result"))),
        ("analysis in INITIALIZING", state(Initializing), None, Request::Analysis(Decision::Failure),
         Err((RejectionKind::WrongState, "submit-work --analysis-decision is not accepted in state INITIALIZING: no PR plan is active yet"))),
    ];
    for (name, st, plan, request, expected) in table {
        let summary = plan.as_ref().map(Plan::summary);
        let got = check_submit(&st, summary.as_ref(), request).map_err(|r| {
            assert_eq!(r.state, st.status(), "{name}: names the state");
            assert!(!r.hint.is_empty(), "{name}: says what to do next");
            (r.kind, r.message)
        });
        let expected = expected.map_err(|(k, m)| (k, m.to_string()));
        assert_eq!(got, expected, "{name}");
    }
}

fn halted_from(resume_to: Status, counter: u32) -> State {
    let mut s = state(Halted);
    s = s.edit(|w| {
        w.debug_attempt_counter = counter;
        w.last_error = Some("old failure".into());
        w.halt = Some(crate::workflow::state::HaltRecord {
            reason: HaltReason::Escalated,
            message: "the agent escalated".into(),
            resume_to,
        });
    });
    s
}

/// A re-plan of [`PLAN`] that keeps the re-plan rules: its one task, "add", replaced by two
/// smaller ones, the last the verification task.
fn replan_of_add() -> Plan {
    let mut p = plan();
    let mut first = p.tasks[0].clone();
    first.name = "add 1a: the sum".into();
    first.breakdown_history = Some(crate::workflow::plan::BreakdownHistory {
        original_task_name: "add".into(),
        justification: "too big".into(),
    });
    let mut last = p.tasks[0].clone();
    last.name = "add 1b (Verification): add".into();
    p.tasks = vec![first, last];
    p
}

fn replanning() -> State {
    let mut s = debugging(7);
    s = s.edit(|w| {
        w.status = Replanning;
        w.replan_context = Some(ReplanContext {
            original_task: "add".into(),
            step: StepId::new(0, 1),
            error: "old failure".into(),
            untracked: vec![],
        });
    });
    s
}

type EscapeCase = (&'static str, State, Event, Status, u32, Vec<Effect>);
/// (attempt, what request-scope-reduction answers, what escalate answers)
type LockCase = (&'static str, Result<StepId, String>, Result<(), String>);

/// The escape hatches and halts: each event's resulting state, counter and effects.
#[test]
fn escape_transitions() {
    let s12 = StepId::new(0, 1);
    let mut with_guidance = debugging(0);
    with_guidance.guidance = Some("try X".into());
    #[rustfmt::skip]
    let table: Vec<EscapeCase> = vec![
        ("scope reduction", debugging(6),
         Event::ScopeReduced { step: s12, original_task: "add".into(), untracked: vec!["junk.txt".into()] },
         Replanning, 6, vec![]),
        ("re-plan accepted", replanning(),
         Event::Replanned { plan: replan_of_add(), new_tasks: 2, summary: "smaller".into() },
         ExecutingTdd, 0, vec![Reply(Verdict::Success)]),
        ("escalate from DEBUGGING", debugging(10),
         Event::Escalated { report: "# help".into() },
         Halted, 10, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from REPLANNING", replanning(),
         Event::Escalated { report: "# help".into() },
         Halted, 7, vec![Effect::SaveEscalation("# help".into())]),
        ("run finds the agent stuck", debugging(2),
         Event::Stuck { report: "# stuck".into(), turns: 3 },
         Halted, 2, vec![Effect::SaveEscalation("# stuck".into())]),
        ("resume to DEBUGGING", halted_from(Debugging, 10),
         Event::Resumed { guidance: Some("try X".into()) },
         Debugging, 0, vec![Effect::DropEscalation]),
        ("resume to REPLANNING", halted_from(Replanning, 7),
         Event::Resumed { guidance: None },
         Replanning, 0, vec![Effect::DropEscalation]),
        ("guidance delivered", with_guidance,
         Event::GuidanceDelivered,
         Debugging, 0, vec![]),
        ("escalate from INITIALIZING", state(Initializing),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from CREATING_BRANCH", state(CreatingBranch),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from CODE_REVIEW: the review cannot run", review_failing(),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from AWAITING_FINALIZATION", state(AwaitingFinalization),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from FINALIZE_COMPLETE", state(FinalizeComplete),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("escalate from MERGING_BRANCH", state(MergingBranch),
         Event::Escalated { report: "# help".into() },
         Halted, 0, vec![Effect::SaveEscalation("# help".into())]),
        ("resume to INITIALIZING", halted_from(Initializing, 0),
         Event::Resumed { guidance: None },
         Initializing, 0, vec![Effect::DropEscalation]),
        ("resume to CREATING_BRANCH", halted_from(CreatingBranch, 0),
         Event::Resumed { guidance: None },
         CreatingBranch, 0, vec![Effect::DropEscalation]),
        ("resume to AWAITING_FINALIZATION", halted_from(AwaitingFinalization, 0),
         Event::Resumed { guidance: Some("squash with X".into()) },
         AwaitingFinalization, 0, vec![Effect::DropEscalation]),
        ("resume to FINALIZE_COMPLETE", halted_from(FinalizeComplete, 0),
         Event::Resumed { guidance: None },
         FinalizeComplete, 0, vec![Effect::DropEscalation]),
        ("resume to MERGING_BRANCH", halted_from(MergingBranch, 0),
         Event::Resumed { guidance: None },
         MergingBranch, 0, vec![Effect::DropEscalation]),
        ("contradiction at the first step, nothing unlocked", state(ExecutingTdd),
         Event::Contradicted { account: "test wants 6".into() },
         Halted, 0, vec![Effect::SaveEscalation("test wants 6".into())]),
        ("contradiction while debugging", debugging(2),
         Event::Contradicted { account: "test wants 6".into() },
         Halted, 2, vec![Effect::SaveEscalation("test wants 6".into())]),
        ("contradiction in REPLANNING", replanning(),
         Event::Contradicted { account: "test wants 6".into() },
         Halted, 7, vec![Effect::SaveEscalation("test wants 6".into())]),
    ];
    for (name, before, event, to, counter, effects) in table {
        let t = transition(&before, Some(&plan_done(1)), event)
            .unwrap_or_else(|r| panic!("{name}: {r:?}"));
        assert_eq!(
            (t.to(), t.state.attempts(), t.effects.clone()),
            (to, counter, effects),
            "{name}"
        );
    }
}

/// A counter at its limit stays there: wrapping to 0 would unlock nothing and hide the
/// attempts (a state written by hand or by a long run can hold u32::MAX).
#[test]
fn counters_at_their_limit_saturate() {
    let mut s = debugging(u32::MAX);
    s = s.edit(|w| {
        w.identical_failures = u32::MAX;
        w.blocked_rounds = u32::MAX;
        w.review_round = u32::MAX;
    });
    let s = with_phase(
        &s,
        Tdd::of(&s).expect("debugging").failed("old failure".into()),
    );
    assert_eq!(s.attempts(), u32::MAX);
    assert_eq!(s.identical_failures(), u32::MAX);
    let mut review = state(CodeReview);
    review = review.edit(|w| {
        w.review_round = u32::MAX;
    });
    assert_eq!(
        get_task_step(&review, None),
        GetTaskStep::RunReview { round: u32::MAX }
    );
}

fn review_failing() -> State {
    let mut s = state(CodeReview);
    s = s.edit(|w| {
        w.last_error = Some("the reviewer crashed".into());
    });
    s
}

/// Every state answers `escalate`: open where an agent can be stuck, locked in the loops
/// that unlock it, refused where a human or `get-task` acts next; each refusal's hint fits
/// its state (never "keep debugging" outside DEBUGGING).
#[test]
fn escalate_is_open_wherever_an_agent_can_be_stuck() {
    let t = Thresholds::default();
    let mut approval = state(CodeReview);
    approval = approval.edit(|w| {
        w.pending = Some(Pending::Approval { round: 1 });
    });
    let mut exhausted = state(CodeReview);
    exhausted = exhausted.edit(|w| {
        w.pending = Some(Pending::Escalation { reason: "r".into() });
    });
    #[rustfmt::skip]
    let table: Vec<(&str, State, Result<(), &str>)> = vec![
        ("planning", state(Initializing), Ok(())),
        ("branch creation", state(CreatingBranch), Ok(())),
        ("a step to do", state(ExecutingTdd),
         Err("No attempt has failed yet: work on the current step (`git orchestrate get-task` shows it) and submit it with `git orchestrate submit-work`.")),
        ("debugging, locked", debugging(3),
         Err("Keep debugging: `git orchestrate get-task` shows the failing output and the guidance for this attempt.")),
        ("debugging, unlocked", debugging(10), Ok(())),
        ("re-planning", replanning(), Ok(())),
        ("review running", state(CodeReview),
         Err("Run `git orchestrate get-task`: it runs the review and briefs you on its findings.")),
        ("review cannot run", review_failing(), Ok(())),
        ("review rounds used up", exhausted, Ok(())),
        ("waiting for approval", approval,
         Err("A human answers with `git orchestrate approve` or `git orchestrate reject --comment TEXT`.")),
        ("finalization", state(AwaitingFinalization), Ok(())),
        ("master plan", state(FinalizeComplete), Ok(())),
        ("merge next", state(PlanUpdated), Err("Run `git orchestrate get-task`: it merges the PR branch.")),
        ("merging", state(MergingBranch), Ok(())),
        ("halted", halted_from(Debugging, 10),
         Err("A human answers with `git orchestrate resume --guidance \"<what to try>\"`; `git orchestrate status` shows why it halted.")),
    ];
    for (name, st, expected) in table {
        let got = check_escalate(&st, &t);
        assert_eq!(
            got.as_ref().map(|_| ()).map_err(|r| r.hint.as_str()),
            expected,
            "{name}"
        );
        // What the check lets through, the transition takes, back to where it came from.
        if got.is_ok() {
            let halted = transition(&st, None, Event::Escalated { report: "r".into() })
                .unwrap_or_else(|r| panic!("{name}: {r:?}"));
            assert_eq!(
                halted.state.halt().map(|h| h.resume_to),
                Some(st.status()),
                "{name}"
            );
        }
    }
    let t = transition(
        &state(AwaitingFinalization),
        None,
        Event::Escalated { report: "r".into() },
    )
    .unwrap();
    assert_eq!(
        t.summary,
        "the agent escalated for external help in state AWAITING_FINALIZATION"
    );
}

/// A recorded plan acceptance names a branch a PR title could make: one git would read as an
/// option or a path out of `refs/heads/` (a chain written by hand) is refused.
#[test]
fn a_plan_acceptance_naming_a_branch_no_title_makes_is_refused() {
    for branch in [
        "--orphan=x",
        "-f",
        "../../config",
        "a..b",
        "feat/.x",
        "",
        "HEAD",
        "main",
    ] {
        let refused = transition(
            &state(Initializing),
            None,
            Event::PlanSubmitted {
                plan: plan(),
                branch: branch.into(),
                summary: "s".into(),
            },
        )
        .expect_err(branch)
        .message;
        assert_eq!(
            refused,
            format!("the PR branch {branch:?} is no name a PR title makes")
        );
    }
}

/// A recorded re-plan is held to the re-plan rules by the transition itself, which an audit
/// replays: a chain written by hand cannot record a re-plan that marks its tasks DONE, takes
/// another PR's title or drops the replaced task's place, and the plan it replaces must be
/// there to compare with.
#[test]
fn a_replan_that_breaks_the_replan_rules_is_refused_by_the_transition() {
    let replan = |plan: Plan, new_tasks: usize| Event::Replanned {
        plan,
        new_tasks,
        summary: "s".into(),
    };
    let mut all_done = replan_of_add();
    for task in 0..all_done.tasks.len() {
        for step in 0..all_done.tasks[task].tdd_steps.len() {
            all_done.complete_step(StepId::new(task, step));
        }
    }
    let mut retitled = replan_of_add();
    retitled.pr_title = "feat: Subtract".into();
    let mut one_task = replan_of_add();
    one_task.tasks.pop();
    let mut no_steps = replan_of_add();
    for task in &mut no_steps.tasks {
        task.tdd_steps.clear();
    }
    let mut red_last = replan_of_add();
    red_last.tasks[1].tdd_steps.truncate(1);
    let old = plan_done(1);
    for (name, event, says) in [
        (
            "every task DONE",
            replan(all_done, 2),
            "is a new task: it and all its steps must be TODO",
        ),
        (
            "another PR's title",
            replan(retitled, 2),
            "prTitle: must stay \"feat: Add numbers\"",
        ),
        (
            "one task in the replaced one's place",
            replan(one_task, 1),
            "at least two new tasks",
        ),
        (
            "the count of new tasks misstated",
            replan(replan_of_add(), 5),
            "not 5",
        ),
        (
            "a count that overflows",
            replan(replan_of_add(), usize::MAX),
            "not 18446744073709551615",
        ),
        (
            "new tasks with no steps",
            replan(no_steps, 2),
            "tasks[0].tdd_steps: a new task needs its steps",
        ),
        (
            "a new task ending at its RED test",
            replan(red_last, 2),
            "tasks[1].tdd_steps: a new task ends with a GREEN",
        ),
    ] {
        let refused = transition(&replanning(), Some(&old), event)
            .expect_err(name)
            .message;
        assert!(refused.contains(says), "{name}: {refused}");
    }
    assert_eq!(
        transition(&replanning(), None, replan(replan_of_add(), 2))
            .expect_err("no plan to compare with")
            .message,
        "no PR plan is active in state REPLANNING"
    );
    assert!(transition(&replanning(), Some(&old), replan(replan_of_add(), 2)).is_ok());
    // The task the recorded context names must be the plan's, by its place and name, undone.
    let renamed = replanning().edit(|w| {
        if let Some(context) = w.replan_context.as_mut() {
            context.original_task = "sub".into();
        }
    });
    let mut done = plan_done(3);
    done.tasks[0].status = crate::workflow::plan::TaskStatus::Done;
    for (name, state, old) in [
        ("another name", renamed, plan_done(1)),
        ("a DONE task", replanning(), done),
    ] {
        let refused = transition(&state, Some(&old), replan(replan_of_add(), 2))
            .expect_err(name)
            .message;
        assert!(
            refused.starts_with("the re-plan replaces task 1 ("),
            "{name}: {refused}"
        );
    }
}

/// A recorded test run is held to the step `submit-work` runs a test for: the plan's current
/// step, its kind, the expectation that kind takes, with nothing owed first. A chain written
/// by hand cannot record a passing run of a RED step (its kind said GREEN, or its expectation
/// PASS), which would mark the step DONE with no failing test pinned, nor a run of another
/// step than the current one.
#[test]
fn a_test_run_that_is_not_of_the_plans_current_step_as_it_stands_is_refused() {
    let (s11, s12, s13) = (StepId::new(0, 0), StepId::new(0, 1), StepId::new(0, 2));
    let as_green = |mut event: Event| {
        if let Event::TestRan(run) = &mut event {
            run.kind = StepType::Green;
        }
        event
    };
    let executing = state(ExecutingTdd);
    #[rustfmt::skip]
    let cases: Vec<(&str, State, Option<Plan>, Event, &str)> = vec![
        ("a RED step's passing run recorded as GREEN",
         executing.clone(), Some(plan()), as_green(run(s11, Pass, 0, Some(gates(true)))),
         "the run records step 1.1 as a GREEN step; the plan's step 1.1 is a RED step"),
        ("a RED step's run expecting PASS",
         executing.clone(), Some(plan()), run(s11, Pass, 0, Some(gates(true))),
         "step 1.1 is a RED step, so its test is expected to FAIL; the run expected PASS"),
        ("a GREEN step's run expecting FAIL",
         executing.clone(), Some(plan_done(1)), run(s12, Fail, 1, None),
         "step 1.2 is a GREEN step, so its test is expected to PASS; the run expected FAIL"),
        ("a step after the current one",
         executing.clone(), Some(plan()), run(s12, Pass, 0, Some(gates(true))),
         "a test run of step 1.2 is no run to record: the current step is 1.1"),
        ("a step DONE already",
         debugging(1), Some(plan_done(1)), run(s11, Fail, 1, None),
         "a test run of step 1.1 is no run to record: the current step is 1.2"),
        ("every step DONE",
         executing.clone(), Some(plan_done(3)), run(s13, Pass, 0, Some(gates(true))),
         "a test run of step 1.3 is no run to record: every step of the plan is DONE"),
        ("an analysis owed",
         with_pending(executing.clone(), analysis_pending(s11)), Some(plan()), run(s11, Fail, 1, None),
         "a test run of step 1.1 is no run to record now: step 1.1 waits for its analysis"),
        ("a checkpoint owed",
         with_pending(executing.clone(), checkpoint_pending(s12)), Some(plan_done(2)),
         run(s13, Pass, 0, Some(gates(true))),
         "a test run of step 1.3 is no run to record now: step 1.2 waits for its checkpoint"),
    ];
    for (name, before, plan, event, says) in cases {
        assert!(held_to_plan(&event) && !needs_full_plan(&event), "{name}");
        let refused = transition(&before, plan.as_ref(), event.clone())
            .expect_err(name)
            .message;
        assert_eq!(refused, says, "{name}");
        // Without the plan (the command's own call: it took the step from the plan), what
        // the state and the event alone say is still held.
        let alone = transition(&before, None, event).map_err(|r| r.message);
        if says.contains("is expected to") || says.contains("waits for its") {
            assert_eq!(alone, Err(says.to_string()), "{name}");
        }
    }
    // The runs `submit-work` records for those steps are taken.
    for (before, plan, event) in [
        (executing.clone(), plan(), run(s11, Fail, 1, None)),
        (
            executing.clone(),
            plan_done(1),
            run(s12, Pass, 0, Some(gates(true))),
        ),
        (debugging(1), plan_done(2), run(s13, Pass, 1, None)),
    ] {
        assert!(transition(&before, Some(&plan), event).is_ok());
    }
}

/// The ids a recorded event hands on to git (the verified tree a squash is diffed against,
/// the commits the merge checks the ancestry of, the pin the protected paths are diffed
/// against) are full object ids, as git prints them: a
/// chain written by hand cannot record one git would read as an option or a revision
/// expression.
#[test]
fn an_id_that_is_no_full_object_id_is_refused() {
    let s12 = StepId::new(0, 1);
    let owed = with_pending(state(ExecutingTdd), checkpoint_pending(s12));
    let checkpoint = |commit: &str, tree: &str| Event::CheckpointRecorded {
        commit: commit.into(),
        subject: "checkpoint: 1.2".into(),
        tree: tree.into(),
    };
    let passing_with = |tree: &str| {
        let mut pre = gates(true);
        pre.verified_tree = Some(tree.into());
        run(s12, Pass, 0, Some(pre))
    };
    let sha256 = "a".repeat(64);
    #[rustfmt::skip]
    let cases: Vec<(State, Plan, Event, &str)> = vec![
        (owed.clone(), plan_done(2), checkpoint("--output=/tmp/x", TREE),
         "the checkpoint commit \"--output=/tmp/x\" is no full object id"),
        (owed.clone(), plan_done(2), checkpoint(COMMIT, "HEAD~1"),
         "the checkpoint's tree \"HEAD~1\" is no full object id"),
        (owed.clone(), plan_done(2), checkpoint(&COMMIT[..12], TREE),
         "the checkpoint commit \"c0ffee000000\" is no full object id"),
        (owed.clone(), plan_done(2), checkpoint(&COMMIT.to_uppercase(), TREE),
         "the checkpoint commit \"C0FFEE0000000000000000000000000000000000\" is no full object id"),
        (state(ExecutingTdd), plan_done(1), passing_with("--output=x"),
         "the verified tree \"--output=x\" is no full object id"),
        (state(AwaitingFinalization), plan_done(3), Event::Squashed { commit: "--all".into(), plans: Vec::new() },
         "the squashed commit \"--all\" is no full object id"),
        (state(FinalizeComplete), plan_done(3), Event::MasterPlanUpdated { commit: "main".into() },
         "the master-plan commit \"main\" is no full object id"),
        (state(CreatingBranch), plan(), Event::BranchReady { base: Some("main".into()), pin: None },
         "the PR branch's base \"main\" is no full object id"),
        (state(CreatingBranch), plan(),
         Event::BranchReady { base: None, pin: Some(Pin { commit: "--output=x".into(), config: None }) },
         "the pinned main commit \"--output=x\" is no full object id"),
        (state(ExecutingTdd), plan(),
         Event::Repinned { pin: Pin { commit: COMMIT.into(), config: Some("HEAD:.orchestrate.toml".into()) } },
         "the pinned configuration blob \"HEAD:.orchestrate.toml\" is no full object id"),
        (state(MergingBranch), plan_done(3),
         Event::Merged { branch: "feat/add-numbers".into(), main: Some("origin/main".into()) },
         "the main commit after the merge \"origin/main\" is no full object id"),
        (state(ExecutingTdd), plan(),
         Event::TreeApproved { tree: "HEAD^{tree}".into(), tests: vec!["tests/t.sh".into()], flaky: false },
         "the approved tree \"HEAD^{tree}\" is no full object id"),
        (state(Initializing), plan(),
         Event::NoPrLeft { master_plan: Some("main:PLAN.md".into()), summary: "done".into() },
         "the master plan blob \"main:PLAN.md\" is no full object id"),
    ];
    for (before, plan, event, says) in cases {
        let refused = transition(&before, Some(&plan), event)
            .expect_err(says)
            .message;
        assert_eq!(refused, says);
    }
    // SHA-1 and SHA-256 ids both are ids.
    for (before, plan, event) in [
        (owed.clone(), plan_done(2), checkpoint(COMMIT, &sha256)),
        (state(ExecutingTdd), plan_done(1), passing_with(&sha256)),
        (
            state(AwaitingFinalization),
            plan_done(3),
            Event::Squashed {
                commit: sha256.clone(),
                plans: Vec::new(),
            },
        ),
        (
            state(FinalizeComplete),
            plan_done(3),
            Event::MasterPlanUpdated {
                commit: COMMIT.into(),
            },
        ),
        (
            state(CreatingBranch),
            plan(),
            Event::BranchReady {
                base: Some(COMMIT.into()),
                pin: Some(Pin {
                    commit: COMMIT.into(),
                    config: Some(sha256.clone()),
                }),
            },
        ),
        (
            state(ExecutingTdd),
            plan(),
            Event::Repinned {
                pin: Pin {
                    commit: sha256.clone(),
                    config: None,
                },
            },
        ),
        (
            state(MergingBranch),
            plan_done(3),
            Event::Merged {
                branch: "feat/add-numbers".into(),
                main: Some(COMMIT.into()),
            },
        ),
        (
            state(ExecutingTdd),
            plan(),
            Event::TreeApproved {
                tree: sha256.clone(),
                tests: Vec::new(),
                flaky: true,
            },
        ),
        (
            state(Initializing),
            plan(),
            Event::NoPrLeft {
                master_plan: Some(TREE.into()),
                summary: "done".into(),
            },
        ),
        (
            state(Initializing),
            plan(),
            Event::NoPrLeft {
                master_plan: None,
                summary: "done".into(),
            },
        ),
    ] {
        assert!(transition(&before, Some(&plan), event).is_ok());
    }
}

/// The review starts where `get-task` starts it, every step DONE and nothing owed: a chain
/// written by hand cannot start it, and so reach the squash, with steps never run.
#[test]
fn a_review_started_before_every_step_is_done_is_refused() {
    let start = Event::ReviewStarted { max_rounds: 3 };
    assert!(needs_full_plan(&start));
    #[rustfmt::skip]
    let cases: Vec<(State, Option<Plan>, &str)> = vec![
        (state(ExecutingTdd), Some(plan()),
         "the review starts when every step is DONE; step 1.1 is not"),
        (state(ExecutingTdd), Some(plan_done(2)),
         "the review starts when every step is DONE; step 1.3 is not"),
        (with_pending(state(ExecutingTdd), checkpoint_pending(StepId::new(0, 2))), Some(plan_done(3)),
         "the review starts when nothing is owed; step 1.3 waits for its checkpoint"),
        (state(ExecutingTdd), None, "no PR plan is active in state EXECUTING_TDD"),
    ];
    for (before, plan, says) in cases {
        let refused = transition(&before, plan.as_ref(), start.clone())
            .expect_err(says)
            .message;
        assert_eq!(refused, says);
    }
    assert!(transition(&state(ExecutingTdd), Some(&plan_done(3)), start).is_ok());
}

/// A scope reduction is of the plan's current step and names its task, as
/// `request-scope-reduction` records it: a chain written by hand cannot name an earlier step,
/// which would drop the RED tests pinned from that task on from the PR's record while the
/// re-plan keeps their tasks DONE.
#[test]
fn a_scope_reduction_of_another_step_or_task_is_refused() {
    let reduce = |step: StepId, task: &str| Event::ScopeReduced {
        step,
        original_task: task.into(),
        untracked: Vec::new(),
    };
    #[rustfmt::skip]
    let cases: Vec<(Option<Plan>, Event, &str)> = vec![
        (Some(plan_done(1)), reduce(StepId::new(0, 0), "add"),
         "a scope reduction of step 1.1 is no scope reduction to record: the current step is 1.2"),
        (Some(plan_done(3)), reduce(StepId::new(0, 2), "add"),
         "a scope reduction of step 1.3 is no scope reduction to record: every step of the plan is DONE"),
        (Some(plan_done(1)), reduce(StepId::new(0, 1), "sub"),
         "the scope reduction names task \"sub\", but step 1.2 is of task \"add\""),
        (None, reduce(StepId::new(0, 1), "add"), "no PR plan is active in state DEBUGGING"),
    ];
    for (plan, event, says) in cases {
        assert!(needs_full_plan(&event), "{says}");
        let refused = transition(&debugging(6), plan.as_ref(), event)
            .expect_err(says)
            .message;
        assert_eq!(refused, says);
    }
    assert!(
        transition(
            &debugging(6),
            Some(&plan_done(1)),
            reduce(StepId::new(0, 1), "add")
        )
        .is_ok()
    );
}

#[test]
fn what_the_escape_events_leave_in_the_state() {
    let t = transition(
        &debugging(6),
        Some(&plan_done(1)),
        Event::ScopeReduced {
            step: StepId::new(0, 1),
            original_task: "add".into(),
            untracked: vec!["junk.txt".into()],
        },
    )
    .unwrap();
    assert_eq!(
        t.state.replan_context().cloned(),
        Some(ReplanContext {
            original_task: "add".into(),
            step: StepId::new(0, 1),
            error: "old failure".into(),
            untracked: vec!["junk.txt".into()],
        })
    );
    let t = transition(
        &replanning(),
        Some(&plan_done(1)),
        Event::Replanned {
            plan: replan_of_add(),
            new_tasks: 2,
            summary: "s".into(),
        },
    )
    .unwrap();
    assert_eq!(
        (t.state.replan_context(), t.state.last_error()),
        (None, None)
    );
    assert_eq!(t.plan, PlanChange::Replace(replan_of_add()));

    let t = transition(
        &debugging(10),
        None,
        Event::Escalated { report: "r".into() },
    )
    .unwrap();
    let halt = t.state.halt().clone().unwrap();
    assert_eq!(
        (halt.reason, halt.resume_to),
        (HaltReason::Escalated, Debugging)
    );
    assert_eq!(
        halt.message,
        "the agent escalated for external help after 10 failed attempts"
    );

    let t = transition(
        &halted_from(Debugging, 10),
        None,
        Event::Resumed {
            guidance: Some("look at X".into()),
        },
    )
    .unwrap();
    assert_eq!(
        (t.state.halt().clone(), t.state.guidance.clone()),
        (None, Some("look at X".into()))
    );
    assert_eq!(
        t.state.last_error(),
        Some("old failure"),
        "the failure stays in view"
    );
    assert!(
        t.summary.ends_with("Guidance from a human:\nlook at X"),
        "{}",
        t.summary
    );
    assert_eq!(
        get_task_step(&t.state, Some(&plan_done(1).summary())),
        GetTaskStep::DeliverGuidance
    );
    let t = transition(&t.state, None, Event::GuidanceDelivered).unwrap();
    assert_eq!(t.state.guidance, None);
    assert_eq!(
        get_task_step(&t.state, Some(&plan_done(1).summary())),
        GetTaskStep::Brief
    );
}

#[test]
fn identical_failures_are_counted() {
    let fail = |before: &State, output: &str| {
        let mut run = run(StepId::new(0, 1), Pass, 1, None);
        if let Event::TestRan(r) = &mut run {
            r.output_tail = output.into();
        }
        transition(before, None, run).unwrap().state
    };
    let first = fail(&state(ExecutingTdd), "assert failed in 0.51s");
    assert_eq!(first.identical_failures(), 0);
    let second = fail(&first, "assert failed in 0.73s");
    assert_eq!(
        second.identical_failures(),
        1,
        "same failure, different timing"
    );
    let third = fail(&second, "assert failed in 0.70s");
    assert_eq!(third.identical_failures(), 2);
    let different = fail(&third, "a new error");
    assert_eq!(different.identical_failures(), 0);
    let passed = transition(
        &different,
        Some(&plan_done(1)),
        run(StepId::new(0, 1), Pass, 0, Some(gates(true))),
    )
    .unwrap();
    assert_eq!(passed.state.identical_failures(), 0);
}

#[test]
fn the_escape_tools_are_locked_until_their_attempt() {
    let default = Thresholds::default();
    let custom = Thresholds {
        hypothesize_max_attempts: 1,
        instrumentation_max_attempts: 1,
        unlock_scope_reduction_at: 2,
        unlock_escalation_at: 3,
    };
    let summary = plan_done(1).summary();
    let scope = |st: &State, t: &Thresholds| {
        check_scope_reduction(st, Some(&summary), t)
            .map(|s| s.id)
            .map_err(|r| r.message)
    };
    let escalate = |st: &State, t: &Thresholds| check_escalate(st, t).map_err(|r| r.message);
    #[rustfmt::skip]
    let cases: Vec<LockCase> = vec![
        ("attempt 1", scope(&debugging(1), &default), escalate(&debugging(1), &default)),
        ("attempt 5", scope(&debugging(5), &default), escalate(&debugging(5), &default)),
        ("attempt 6", scope(&debugging(6), &default), escalate(&debugging(6), &default)),
        ("attempt 9", scope(&debugging(9), &default), escalate(&debugging(9), &default)),
        ("attempt 10", scope(&debugging(10), &default), escalate(&debugging(10), &default)),
        ("custom attempt 1", scope(&debugging(1), &custom), escalate(&debugging(1), &custom)),
        ("custom attempt 2", scope(&debugging(2), &custom), escalate(&debugging(2), &custom)),
        ("custom attempt 3", scope(&debugging(3), &custom), escalate(&debugging(3), &custom)),
        ("not debugging", scope(&state(ExecutingTdd), &custom), escalate(&state(ExecutingTdd), &custom)),
    ];
    let locked = |tool: &str, more: u32, at: u32, attempt: u32, state: &str| {
        format!(
            "{tool} is locked: {more} more failed attempt{} needed (it unlocks at attempt {at}; this is attempt {attempt}, state {state})",
            if more == 1 { "" } else { "s" }
        )
    };
    let s12 = StepId::new(0, 1);
    #[rustfmt::skip]
    let expected: Vec<LockCase> = vec![
        ("attempt 1", Err(locked("request-scope-reduction", 5, 6, 1, "DEBUGGING")), Err(locked("escalate", 9, 10, 1, "DEBUGGING"))),
        ("attempt 5", Err(locked("request-scope-reduction", 1, 6, 5, "DEBUGGING")), Err(locked("escalate", 5, 10, 5, "DEBUGGING"))),
        ("attempt 6", Ok(s12), Err(locked("escalate", 4, 10, 6, "DEBUGGING"))),
        ("attempt 9", Ok(s12), Err(locked("escalate", 1, 10, 9, "DEBUGGING"))),
        ("attempt 10", Ok(s12), Ok(())),
        ("custom attempt 1", Err(locked("request-scope-reduction", 1, 2, 1, "DEBUGGING")), Err(locked("escalate", 2, 3, 1, "DEBUGGING"))),
        ("custom attempt 2", Ok(s12), Err(locked("escalate", 1, 3, 2, "DEBUGGING"))),
        ("custom attempt 3", Ok(s12), Ok(())),
        ("not debugging", Err(locked("request-scope-reduction", 2, 2, 0, "EXECUTING_TDD")), Err(locked("escalate", 3, 3, 0, "EXECUTING_TDD"))),
    ];
    assert_eq!(cases, expected);

    // Outside the TDD loop they are not locked but out of place; REPLANNING may escalate.
    assert!(
        check_scope_reduction(&state(Initializing), None, &default)
            .unwrap_err()
            .message
            .starts_with("request-scope-reduction is not accepted in state INITIALIZING")
    );
    assert!(check_scope_reduction(&replanning(), None, &default).is_err());
    assert_eq!(check_escalate(&replanning(), &custom), Ok(()));
    assert!(check_escalate(&halted_from(Debugging, 10), &default).is_err());
}

#[test]
fn resume_only_answers_a_halt() {
    assert_eq!(check_resume(&halted_from(Debugging, 3)), Ok(()));
    for st in [state(ExecutingTdd), debugging(3), state(Initializing)] {
        let r = check_resume(&st).unwrap_err();
        assert_eq!(
            r.message,
            format!(
                "resume is not accepted in state {}: the workflow is not halted",
                st.status()
            )
        );
    }
}

#[test]
fn a_plan_in_replanning_is_a_replan() {
    assert_eq!(
        check_submit(
            &replanning(),
            Some(&plan_done(1).summary()),
            Request::Plan(())
        ),
        Ok(Accepted::Replan(()))
    );
    let r = check_submit(
        &replanning(),
        Some(&plan_done(1).summary()),
        Request::Test {
            command: (),
            expectation: None,
        },
    )
    .unwrap_err();
    assert_eq!(
        r.message,
        "submit-work --test-command is not accepted in state REPLANNING: this state takes no test submissions"
    );
}

fn record(round: u32, priorities: &[Priority]) -> ReviewRecord {
    ReviewRecord {
        round,
        ran: true,
        dimensions: vec!["correctness".into()],
        block_on: vec![Priority::P0, Priority::P1],
        findings: priorities
            .iter()
            .enumerate()
            .map(|(i, p)| Finding {
                priority: *p,
                file: Some("src/lib.rs".into()),
                line: Some(i as u64 + 1),
                issue: format!("problem {i}"),
                suggestion: None,
                dimensions: vec!["correctness".into()],
                human: false,
                answered: None,
            })
            .collect(),
    }
}

fn in_review(round: u32) -> State {
    let mut s = state(CodeReview);
    s = s.edit(|w| {
        w.review_round = round;
    });
    s
}

fn approval_pending() -> State {
    let mut s = in_review(1);
    s = s.edit(|w| {
        w.pending = Some(Pending::Approval { round: 1 });
    });
    s
}

type ReviewCase = (
    &'static str,
    State,
    Event,
    Status,
    Option<&'static str>,
    usize,
);

/// Review, finalization and merge: the resulting state, what is pending, and how many
/// tasks the plan has afterwards (it starts with 1; feedback appends one).
#[test]
fn review_finalize_merge_transitions() {
    let mut conflicted = state(Halted);
    conflicted = conflicted.edit(|w| {
        w.halt = Some(crate::workflow::state::HaltRecord {
            reason: HaltReason::MergeConflict,
            message: "ERROR: Automated merge failed".into(),
            resume_to: MergingBranch,
        });
    });
    #[rustfmt::skip]
    let table: Vec<ReviewCase> = vec![
        ("all DONE: the review starts", state(ExecutingTdd), Event::ReviewStarted { max_rounds: 3 }, CodeReview, None, 1),
        ("rounds used up: escalation owed", state(ExecutingTdd).edit(|w| { w.review_round = 3; w.blocked_rounds = 3; }),
         Event::ReviewStarted { max_rounds: 3 }, CodeReview, Some("escalation"), 1),
        ("a human's rejections use up no rounds", state(ExecutingTdd).edit(|w| { w.review_round = 3; w.blocked_rounds = 1; }),
         Event::ReviewStarted { max_rounds: 3 }, CodeReview, None, 1),
        ("blocking findings: a task is appended", in_review(0),
         Event::ReviewCompleted { record: record(1, &[Priority::P1, Priority::P3]), human: false }, ExecutingTdd, None, 2),
        ("no blocking findings", in_review(0),
         Event::ReviewCompleted { record: record(1, &[Priority::P2, Priority::P3]), human: false }, AwaitingFinalization, None, 1),
        ("no blocking findings, human gate", in_review(0),
         Event::ReviewCompleted { record: record(1, &[]), human: true }, CodeReview, Some("approval"), 1),
        ("review error: never an approval", in_review(0),
         Event::ReviewFailed { error: "crashed".into() }, CodeReview, None, 1),
        ("approved", approval_pending(), Event::Approved, AwaitingFinalization, None, 1),
        ("rejected: the comment is a task", approval_pending(),
         Event::Rejected { comment: "rename it".into(), by: None }, ExecutingTdd, None, 2),
        ("squashed", state(AwaitingFinalization), Event::Squashed { commit: COMMIT.into(), plans: Vec::new() }, FinalizeComplete, None, 1),
        ("master plan updated", state(FinalizeComplete), Event::MasterPlanUpdated { commit: COMMIT.into() }, PlanUpdated, None, 1),
        ("merge starts", state(PlanUpdated), Event::MergeStarted, MergingBranch, None, 1),
        ("merged", state(MergingBranch), Event::Merged { branch: "feat/x".into(), main: None }, Initializing, None, 0),
        ("merged by a human after a conflict", conflicted, Event::Merged { branch: "feat/x".into(), main: None }, Initializing, None, 0),
        ("merge blocked", state(MergingBranch), Event::MergeBlocked { reason: "dirty".into() }, MergingBranch, None, 1),
        ("merge conflict halts", state(MergingBranch), Event::MergeConflicted { message: "ERROR: …".into() }, Halted, None, 1),
    ];
    for (name, before, event, to, pending, tasks) in table {
        let all_done = plan_done(3);
        let t = transition(&before, Some(&all_done), event.clone())
            .unwrap_or_else(|r| panic!("{name}: {r:?}"));
        let tasks_after = match &t.plan {
            PlanChange::Keep | PlanChange::Materialize | PlanChange::CompleteStep(_) => 1,
            PlanChange::Replace(p) => p.tasks.len(),
            PlanChange::Drop => 0,
        };
        assert_eq!(
            (
                t.to(),
                t.state.pending().as_ref().map(Pending::kind),
                tasks_after
            ),
            (to, pending, tasks),
            "{name}"
        );
        if !needs_full_plan(&event) {
            assert_eq!(
                transition(&before, None, event),
                Ok(t),
                "{name}: without the full plan"
            );
        }
    }
}

#[test]
fn what_review_and_merge_leave_behind() {
    let t = transition(
        &in_review(0),
        Some(&plan_done(3)),
        Event::ReviewCompleted {
            record: record(1, &[Priority::P0, Priority::P2]),
            human: false,
        },
    )
    .unwrap();
    let PlanChange::Replace(plan) = &t.plan else {
        panic!("the plan grows")
    };
    assert_eq!(
        plan.tasks[0],
        plan_done(3).tasks[0],
        "the earlier tasks are kept as they were"
    );
    let task = &plan.tasks[1];
    assert_eq!(task.name, "Address code review feedback (round 1)");
    assert_eq!(
        task.tdd_steps.len(),
        1,
        "only the blocking finding becomes a step"
    );
    assert_eq!(
        task.tdd_steps[0].description,
        "Fix: [P0] src/lib.rs:1: problem 0"
    );
    assert_eq!(
        (
            t.state.pr().map_or(0, |pr| pr.review.round),
            t.state.pr().map_or(0, |pr| pr.review.blocked_rounds)
        ),
        (1, 1)
    );
    assert_eq!(
        t.state.pr().and_then(|pr| pr.review.last.as_ref()).cloned(),
        Some(ReviewSummary {
            round: 1,
            ran: true,
            findings: 2,
            blocking: 1
        })
    );
    assert!(matches!(t.effects.as_slice(), [Effect::SaveReview(r)] if r.round == 1));

    let t = transition(
        &approval_pending(),
        Some(&plan_done(3)),
        Event::Rejected {
            comment: "no".into(),
            by: None,
        },
    )
    .unwrap();
    let PlanChange::Replace(plan) = &t.plan else {
        panic!("the plan grows")
    };
    assert_eq!(
        plan.tasks[1].tdd_steps[0].description,
        "Fix: [P1] (from a human) no"
    );
    assert_eq!(
        t.state.pr().map_or(0, |pr| pr.review.blocked_rounds),
        0,
        "a rejection is not a blocked round"
    );

    let t = transition(
        &state(FinalizeComplete),
        None,
        Event::MasterPlanUpdated {
            commit: COMMIT.into(),
        },
    )
    .unwrap();
    assert_eq!(
        t.state.plan_commit(),
        Some(COMMIT),
        "the merge checks the tip against it"
    );

    let mut exhausted = state(Halted);
    exhausted = exhausted.edit(|w| {
        w.review_round = 3;
        w.blocked_rounds = 3;
        w.halt = Some(crate::workflow::state::HaltRecord {
            reason: HaltReason::Escalated,
            message: "rounds used up".into(),
            resume_to: CodeReview,
        });
    });
    let t = transition(&exhausted, None, Event::Resumed { guidance: None }).unwrap();
    assert_eq!(
        (
            t.to(),
            t.state.pr().map_or(0, |pr| pr.review.round),
            t.state.pr().map_or(0, |pr| pr.review.blocked_rounds)
        ),
        (CodeReview, 3, 0),
        "resumed review: the rounds start again, their numbers go on"
    );

    let mut merging = state(MergingBranch);
    merging = merging.edit(|w| {
        w.final_commit = Some("c1".into());
        w.verified_tree = Some("t1".into());
        w.review_round = 2;
        w.blocked_rounds = 1;
        w.plan_commit = Some("c2".into());
        w.branch_base = Some("b0".into());
    });
    merging.extra.insert("future".into(), serde_json::json!(1));
    let t = transition(
        &merging,
        None,
        Event::Merged {
            branch: "feat/add-numbers".into(),
            main: None,
        },
    )
    .unwrap();
    let mut fresh = State::new(Some("main".into()));
    fresh.extra.insert("future".into(), serde_json::json!(1));
    assert_eq!(t.state, fresh, "the next PR starts from a clean state");
    assert_eq!(t.plan, PlanChange::Drop);
    assert_eq!(t.effects, vec![Effect::DropPrRecords]);

    let t = transition(
        &state(MergingBranch),
        None,
        Event::MergeConflicted {
            message: "ERROR: x".into(),
        },
    )
    .unwrap();
    let halt = t.state.halt().unwrap();
    assert_eq!(
        (halt.reason, halt.resume_to, halt.message.as_str()),
        (HaltReason::MergeConflict, MergingBranch, "ERROR: x")
    );
}

#[test]
fn get_task_drives_review_and_merge() {
    let done = plan_done(3).summary();
    let mut exhausted = in_review(3);
    exhausted = exhausted.edit(|w| {
        w.pending = Some(Pending::Escalation { reason: "r".into() });
    });
    #[rustfmt::skip]
    let table: Vec<(&str, State, GetTaskStep)> = vec![
        ("every step DONE", state(ExecutingTdd), GetTaskStep::StartReview),
        ("in review", in_review(1), GetTaskStep::RunReview { round: 2 }),
        ("waiting for approval", approval_pending(), GetTaskStep::Brief),
        ("rounds used up", exhausted, GetTaskStep::Brief),
        ("finalization is the agent's", state(AwaitingFinalization), GetTaskStep::Brief),
        ("master plan is the agent's", state(FinalizeComplete), GetTaskStep::Brief),
        ("plan updated", state(PlanUpdated), GetTaskStep::StartMerge),
        ("merging", state(MergingBranch), GetTaskStep::Merge { branch: "feat/add-numbers".into() }),
    ];
    for (name, st, expected) in table {
        assert_eq!(get_task_step(&st, Some(&done)), expected, "{name}");
    }
}

/// `submit-work` at a finalization step: plain, with the commit made first (`--squash`,
/// `--mark-done`), and each where it does not belong.
#[test]
fn finalization_confirmations_are_decided_with_the_commit_to_make() {
    let wrong_step = |given: &str, wanted: &str| {
        Err(format!(
            "submit-work {given} is not this step's / This step takes `git orchestrate submit-work --summary \"…\" \
             {wanted}`; `git orchestrate get-task` says more."
        ))
    };
    let none = || {
        |status: &str| {
            Err(format!(
                "submit-work without --plan, --test-command or --analysis-decision confirms a finalization step; \
                 in state {status} there is none / {GET_TASK_HINT}"
            ))
        }
    };
    #[rustfmt::skip]
    let table: Vec<(Status, Request, Result<Accepted, String>)> = vec![
        (AwaitingFinalization, Request::Confirm, Ok(Accepted::Squash { make: false })),
        (AwaitingFinalization, Request::Squash, Ok(Accepted::Squash { make: true })),
        (AwaitingFinalization, Request::MarkDone, wrong_step("--mark-done", "--squash (or the squash by hand)")),
        (FinalizeComplete, Request::Confirm, Ok(Accepted::MasterPlanUpdate { make: false })),
        (FinalizeComplete, Request::MarkDone, Ok(Accepted::MasterPlanUpdate { make: true })),
        (FinalizeComplete, Request::Squash, wrong_step("--squash", "--mark-done (or the master-plan commit by hand)")),
        (ExecutingTdd, Request::Squash, none()("EXECUTING_TDD")),
        (PlanUpdated, Request::MarkDone, none()("PLAN_UPDATED")),
        (Initializing, Request::Confirm, none()("INITIALIZING")),
    ];
    for (status, request, expected) in table {
        let got = check_submit(&state(status), None, request)
            .map_err(|r| format!("{} / {}", r.message, r.hint));
        assert_eq!(got, expected, "{request:?} in {status}");
    }
}

/// `--contradiction` is accepted wherever a test holds the work, and only there; the table
/// refuses it everywhere else, halted included, with the states it is for.
#[test]
fn a_contradiction_is_accepted_where_a_test_holds_the_work() {
    for status in [ExecutingTdd, Debugging, Replanning] {
        assert_eq!(
            check_submit(&state(status), None, Request::Contradiction(())),
            Ok(Accepted::Contradiction(())),
            "{status}"
        );
    }
    for status in [
        Initializing,
        CreatingBranch,
        CodeReview,
        AwaitingFinalization,
        FinalizeComplete,
        PlanUpdated,
        MergingBranch,
        Halted,
    ] {
        let refused =
            check_submit(&state(status), None, Request::Contradiction(())).expect_err("refused");
        assert_eq!(
            refused.message,
            format!(
                "submit-work --contradiction is accepted while a test holds the work (EXECUTING_TDD, \
                 DEBUGGING, REPLANNING); in state {status} there is no test to contradict"
            )
        );
        assert!(
            transition(
                &state(status),
                Some(&plan_done(1)),
                Event::Contradicted {
                    account: "a".into()
                }
            )
            .is_err(),
            "{status}"
        );
    }
}

#[test]
fn finalization_submits_and_the_review_escape() {
    assert_eq!(
        check_submit(&state(AwaitingFinalization), None, Request::Confirm),
        Ok(Accepted::Squash { make: false })
    );
    assert_eq!(
        check_submit(&state(FinalizeComplete), None, Request::Confirm),
        Ok(Accepted::MasterPlanUpdate { make: false })
    );
    assert_eq!(
        check_submit(&state(ExecutingTdd), None, Request::Confirm)
            .unwrap_err()
            .message,
        "submit-work without --plan, --test-command or --analysis-decision confirms a finalization step; in state EXECUTING_TDD there is none"
    );
    let t = Thresholds::default();
    assert_eq!(
        check_escalate(&in_review(1), &t).unwrap_err().message,
        "escalate is locked in state CODE_REVIEW: it unlocks when the review rounds (review.max_rounds) are used up \
         or the review cannot run"
    );
    let mut exhausted = in_review(3);
    exhausted = exhausted.edit(|w| {
        w.pending = Some(Pending::Escalation { reason: "r".into() });
    });
    assert_eq!(check_escalate(&exhausted, &t), Ok(()));
    let halted = transition(
        &exhausted,
        None,
        Event::Escalated {
            report: "# r".into(),
        },
    )
    .unwrap();
    assert_eq!(
        halted.state.halt().as_ref().map(|h| h.resume_to),
        Some(CodeReview)
    );
    let resumed = transition(
        &halted.state,
        None,
        Event::Resumed {
            guidance: Some("ok".into()),
        },
    )
    .unwrap();
    assert_eq!(
        (
            resumed.to(),
            resumed.state.pr().map_or(0, |pr| pr.review.blocked_rounds),
            resumed.state.pending().clone()
        ),
        (CodeReview, 0, None)
    );
}

/// `approve` and `reject` are accepted only while a passed review waits for a human: in
/// every other state, halted included, they are refused naming the state.
#[test]
fn approval_is_accepted_only_where_a_review_waits_for_a_human() {
    let waiting = state(CodeReview).edit(|w| w.pending = Some(Pending::Approval { round: 1 }));
    assert_eq!(check_approval(&waiting), Ok(()));
    let halted = waiting.clone().edit(|w| {
        w.halt = Some(HaltRecord {
            reason: HaltReason::Escalated,
            message: "halted".into(),
            resume_to: Status::CodeReview,
        });
        w.status = Halted;
    });
    let due = state(CodeReview);
    for (name, st) in [
        ("a review still to run", due),
        ("halted over the waiting review", halted),
        ("the TDD loop", state(ExecutingTdd)),
        ("finalization", state(AwaitingFinalization)),
        ("no PR", state(Initializing)),
    ] {
        let status = st.status();
        let refused = check_approval(&st).expect_err(name);
        assert_eq!(
            (refused.kind, refused.message.as_str()),
            (
                RejectionKind::WrongState,
                format!("nothing waits for a human's approval in state {status}").as_str()
            ),
            "{name}"
        );
    }
}

/// `checkpoint` is accepted in the TDD loop (with the step it owes, when one is owed) and at
/// the squash; refused before a branch exists and wherever no step is worked on.
#[test]
fn checkpoints_are_accepted_where_steps_are_worked_on() {
    /// The step owed, or why it is refused.
    type Expected = Result<Option<OwedCheckpoint>, &'static str>;
    let owed = state(ExecutingTdd).edit(|w| {
        w.pending = Some(Pending::Checkpoint {
            step: StepId::new(0, 1),
            step_type: StepType::Green,
            description: "implement add".into(),
        })
    });
    let owed_in_debugging = owed.clone().edit(|w| w.status = Debugging);
    let expected_owed = Some(OwedCheckpoint {
        step: StepId::new(0, 1),
        description: "implement add".into(),
    });
    let no_branch = "there is no PR branch yet";
    let no_step = "checkpoints are commits on the PR branch while its steps are worked on";
    #[rustfmt::skip]
    let table: Vec<(&str, State, Expected)> = vec![
        ("a step owes one", owed, Ok(expected_owed.clone())),
        ("owed while debugging", owed_in_debugging, Ok(expected_owed)),
        ("in the TDD loop, none owed", state(ExecutingTdd), Ok(None)),
        ("at the squash", state(AwaitingFinalization), Ok(None)),
        ("no PR yet", state(Initializing), Err(no_branch)),
        ("the branch not made yet", state(CreatingBranch), Err(no_branch)),
        ("in review", state(CodeReview), Err(no_step)),
        ("after the squash", state(FinalizeComplete), Err(no_step)),
        ("halted", state(Halted), Err(no_step)),
    ];
    for (name, st, expected) in table {
        let status = st.status();
        let got = check_checkpoint(&st).map_err(|r| r.message);
        let expected =
            expected.map_err(|why| format!("checkpoint is not accepted in state {status}: {why}"));
        assert_eq!(got, expected, "{name}");
    }
}

/// A blocked branch or merge is recorded once: `get-task` asking again with the same reason
/// records nothing new; another reason, or another event, is recorded.
#[test]
fn a_blocked_branch_or_merge_is_recorded_once_per_reason() {
    let blocked = state(CreatingBranch).edit(|w| w.last_error = Some("dirty".into()));
    let merge_blocked = state(MergingBranch).edit(|w| w.last_error = Some("behind".into()));
    let table = [
        (
            "same branch reason",
            &blocked,
            Event::BranchBlocked {
                reason: "dirty".into(),
            },
            true,
        ),
        (
            "another branch reason",
            &blocked,
            Event::BranchBlocked {
                reason: "locked".into(),
            },
            false,
        ),
        (
            "same merge reason",
            &merge_blocked,
            Event::MergeBlocked {
                reason: "behind".into(),
            },
            true,
        ),
        ("another event", &blocked, Event::MergeStarted, false),
    ];
    for (name, st, event, expected) in table {
        assert_eq!(already_recorded(st, &event), expected, "{name}");
    }
}
