//! The pure checks the commands ask before anything runs: what `get-task` must do first,
//! whether a `submit-work` is accepted (with its plan and command carried through), and
//! whether a checkpoint, an escape tool or a human's answer is accepted now.

use crate::workflow::debugging::Thresholds;
use crate::workflow::plan::{PlanSummary, StepId, StepSummary, StepType};
use crate::workflow::rejection::{Rejection, RejectionKind};
use crate::workflow::state::TddPending;
use crate::workflow::state::{Pending, State, Status};
use crate::workflow::state::{Phase, Pr, PrStage};
use crate::workflow::state::{RedAnalysis, ReviewStage};
use crate::workflow::{Decision, Expectation};

use super::event::*;

pub(crate) const GET_TASK_HINT: &str =
    "Run `git orchestrate get-task` for the current instruction.";

/// What `get-task` has to do before it can brief the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GetTaskStep {
    /// Nothing to act on: brief from the stored state.
    Brief,
    /// A plan with no step left outside review/finalization is stale (docs/states.md).
    DropStalePlan,
    /// A plan sits in INITIALIZING: treat it as just submitted, which names its branch.
    AdoptPlan,
    /// Create (or, after an interrupted run, check out) the PR branch.
    PrepareBranch { branch: String },
    /// A checkpoint is owed: look for a checkpoint commit newer than `since`.
    LookForCheckpoint { since: Option<String> },
    /// Waiting for a human; get-task exits 10 without acting.
    Halted,
    /// A human's guidance waits to be shown, once.
    DeliverGuidance,
    /// Every step is DONE: start the code review (docs/states.md).
    StartReview,
    /// Run the review of this round (or record that there is nothing to run).
    RunReview { round: u32 },
    /// PLAN_UPDATED: move on to the merge.
    StartMerge,
    /// Merge the PR branch into main.
    Merge { branch: String },
}

pub fn get_task_step(state: &State, plan: Option<&PlanSummary>) -> GetTaskStep {
    let all_done = plan.is_some_and(PlanSummary::all_done);
    if state.guidance.is_some() && state.status() != Status::Halted {
        return GetTaskStep::DeliverGuidance;
    }
    let owed_checkpoint = |pr: &Pr, pending: &Option<TddPending>| match pending {
        Some(TddPending::Checkpoint { .. }) => Some(GetTaskStep::LookForCheckpoint {
            since: pr.last_checkpoint.clone(),
        }),
        Some(TddPending::Analysis(_)) | None => None,
    };
    match &state.phase {
        Phase::Initializing | Phase::CreatingBranch { .. } if all_done => {
            GetTaskStep::DropStalePlan
        }
        Phase::Initializing if plan.is_some() => GetTaskStep::AdoptPlan,
        Phase::Initializing => GetTaskStep::Brief,
        Phase::CreatingBranch { branch, .. } => match plan {
            None => GetTaskStep::DropStalePlan,
            Some(_) => GetTaskStep::PrepareBranch {
                branch: branch.clone(),
            },
        },
        Phase::Pr {
            pr,
            stage: PrStage::ExecutingTdd { pending },
        } => owed_checkpoint(pr, pending).unwrap_or(match pending {
            None if all_done => GetTaskStep::StartReview,
            _ => GetTaskStep::Brief,
        }),
        Phase::Pr {
            pr,
            stage: PrStage::Debugging { pending, .. },
        } => owed_checkpoint(pr, pending).unwrap_or(GetTaskStep::Brief),
        Phase::Pr {
            pr,
            stage: PrStage::CodeReview { review: stage },
        } => match stage {
            ReviewStage::Due { .. } => GetTaskStep::RunReview {
                round: pr.review.round.saturating_add(1),
            },
            // Waiting for a human, or for the agent's escalation: nothing to run.
            ReviewStage::AwaitingApproval { .. } | ReviewStage::MustEscalate { .. } => {
                GetTaskStep::Brief
            }
        },
        Phase::Pr {
            stage: PrStage::PlanUpdated { .. },
            ..
        } => GetTaskStep::StartMerge,
        Phase::Pr {
            pr,
            stage: PrStage::MergingBranch { .. },
        } => GetTaskStep::Merge {
            branch: pr.branch.clone(),
        },
        Phase::Halted { .. } => GetTaskStep::Halted,
        Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. },
            ..
        } => GetTaskStep::Brief,
    }
}

/// True when `get-task` reports after `event` instead of acting again: the workflow stays
/// where it is until something outside changes.
pub fn get_task_stops_after(event: &Event) -> bool {
    matches!(
        event,
        Event::BranchBlocked { .. }
            | Event::ReviewFailed { .. }
            | Event::MergeBlocked { .. }
            | Event::MergeConflicted { .. }
    )
}

/// True when `event` would record the problem the state already records: the same blocked
/// branch or merge is not written again at every `get-task`.
pub fn already_recorded(state: &State, event: &Event) -> bool {
    match event {
        Event::BranchBlocked { reason } | Event::MergeBlocked { reason } => {
            state.last_error() == Some(reason.as_str())
        }
        _ => false,
    }
}

/// A `submit-work` request: what the agent submits, with its plan (`P`) and test command
/// (`C`) carried through to the [`Accepted`] that uses them, so the engine matches on one
/// decision and nothing else. The core decides on `()` payloads as well as on real ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitRequest<P = (), C = ()> {
    Plan(P),
    Test {
        command: C,
        expectation: Option<Expectation>,
    },
    Analysis(Decision),
    /// No plan, test or analysis: "done", for the finalization steps.
    Confirm,
    /// `--squash`: the orchestrator makes the squash commit, then it is confirmed.
    Squash,
    /// `--mark-done`: the orchestrator marks the PR done in the master plan and commits it,
    /// then it is confirmed.
    MarkDone,
    /// `--no-pr-left`: nothing of the master plan is left to do.
    NoPrLeft,
    /// `--contradiction`: the task contradicts its test; halt for a human with the agent's
    /// account (carried as the agent's text, as a test command is).
    Contradiction(C),
}

impl<P, C> SubmitRequest<P, C> {
    pub fn as_ref(&self) -> SubmitRequest<&P, &C> {
        match self {
            SubmitRequest::Plan(plan) => SubmitRequest::Plan(plan),
            SubmitRequest::Test {
                command,
                expectation,
            } => SubmitRequest::Test {
                command,
                expectation: *expectation,
            },
            SubmitRequest::Analysis(decision) => SubmitRequest::Analysis(*decision),
            SubmitRequest::Confirm => SubmitRequest::Confirm,
            SubmitRequest::Squash => SubmitRequest::Squash,
            SubmitRequest::MarkDone => SubmitRequest::MarkDone,
            SubmitRequest::NoPrLeft => SubmitRequest::NoPrLeft,
            SubmitRequest::Contradiction(account) => SubmitRequest::Contradiction(account),
        }
    }
}

/// What the engine should do for an accepted submit, with the request's payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted<P = (), C = ()> {
    Plan(P),
    /// A plan in REPLANNING: it must follow the re-plan rules.
    Replan(P),
    Test {
        command: C,
        step: StepId,
        kind: StepType,
        description: String,
        expectation: Expectation,
    },
    Analysis(Decision),
    /// AWAITING_FINALIZATION: verify the squash; `make`: make it first (`--squash`).
    Squash {
        make: bool,
    },
    /// FINALIZE_COMPLETE: verify the master-plan commit; `make`: make it first
    /// (`--mark-done`).
    MasterPlanUpdate {
        make: bool,
    },
    /// INITIALIZING with no plan: record that nothing is left.
    NoPrLeft,
    /// A TDD state: halt for a human with the agent's account.
    Contradiction(C),
}

/// Decides whether `submit-work` is accepted in this state, before anything runs.
pub fn check_submit<P, C>(
    state: &State,
    plan: Option<&PlanSummary>,
    request: SubmitRequest<P, C>,
) -> Result<Accepted<P, C>, Rejection> {
    let status = state.status();
    let in_tdd = matches!(status, Status::ExecutingTdd | Status::Debugging);
    match request {
        SubmitRequest::Plan(plan) if status == Status::Initializing => Ok(Accepted::Plan(plan)),
        SubmitRequest::NoPrLeft => check_no_pr_left(status, plan),
        SubmitRequest::Contradiction(account) if CONTRADICTABLE.contains(&status) => {
            Ok(Accepted::Contradiction(account))
        }
        SubmitRequest::Contradiction(_) => Err(Rejection::wrong_state(
            status,
            format!(
                "submit-work --contradiction is accepted while a test holds the work (EXECUTING_TDD, \
                 DEBUGGING, REPLANNING); in state {status} there is no test to contradict"
            ),
            GET_TASK_HINT,
        )),
        SubmitRequest::Plan(plan) if status == Status::Replanning => Ok(Accepted::Replan(plan)),
        SubmitRequest::Confirm | SubmitRequest::Squash | SubmitRequest::MarkDone => {
            check_confirm(status, request.as_ref())
        }
        SubmitRequest::Plan(_) => Err(Rejection::wrong_state(
            status,
            match plan {
                Some(plan) => format!(
                    "submit-work --plan is not accepted in state {status}: the plan \"{}\" is active",
                    plan.title
                ),
                None => format!("submit-work --plan is not accepted in state {status}"),
            },
            GET_TASK_HINT,
        )),
        SubmitRequest::Test { .. } | SubmitRequest::Analysis(_) if !in_tdd => {
            Err(not_in_tdd(status, &request))
        }
        SubmitRequest::Test {
            command,
            expectation,
        } => check_test(state, plan, command, expectation),
        SubmitRequest::Analysis(decision) => match state.pending() {
            Some(Pending::Analysis(_)) => Ok(Accepted::Analysis(decision)),
            _ => Err(Rejection::wrong_state(
                status,
                format!(
                    "no analysis is pending in state {status}: --analysis-decision answers a NEEDS_ANALYSIS result"
                ),
                GET_TASK_HINT,
            )),
        },
    }
}

/// `--no-pr-left`: only in INITIALIZING, with no plan waiting to be taken up.
fn check_no_pr_left<P, C>(
    status: Status,
    plan: Option<&PlanSummary>,
) -> Result<Accepted<P, C>, Rejection> {
    match (status, plan) {
        (Status::Initializing, None) => Ok(Accepted::NoPrLeft),
        (Status::Initializing, Some(plan)) => Err(Rejection::wrong_state(
            status,
            format!(
                "submit-work --no-pr-left is not accepted while the plan \"{}\" waits to be taken up",
                plan.title
            ),
            GET_TASK_HINT,
        )),
        _ => Err(Rejection::wrong_state(
            status,
            format!(
                "submit-work --no-pr-left is only accepted in INITIALIZING, when no PR is active; \
             in state {status} there is work to finish"
            ),
            GET_TASK_HINT,
        )),
    }
}

/// A test command for the current step, in a TDD state: refused while an analysis or a
/// checkpoint is owed, or when `expectation` does not fit the step.
fn check_test<P, C>(
    state: &State,
    plan: Option<&PlanSummary>,
    command: C,
    expectation: Option<Expectation>,
) -> Result<Accepted<P, C>, Rejection> {
    let status = state.status();
    // The pending item comes first: after the last step passed, "checkpoint first"
    // is the answer, not "every step is DONE".
    match state.pending() {
        Some(Pending::Analysis(RedAnalysis { step, .. })) => {
            return Err(Rejection::wrong_state(
                status,
                format!(
                    "submit-work --test-command is not accepted now: step {step} is waiting for \
                     your analysis of the last run (state {status})"
                ),
                "Answer with `git orchestrate submit-work --summary \"<why>\" --analysis-decision SUCCESS` \
                 (it failed for the intended reason) or `git orchestrate submit-work --summary \
                 \"<why>\" --analysis-decision FAILURE` (the wrong reason).",
            ));
        }
        Some(Pending::Checkpoint { step, .. }) => {
            return Err(Rejection::wrong_state(
                status,
                format!(
                    "submit-work --test-command is not accepted now: step {step} passed and its \
                     checkpoint commit comes first (state {status})"
                ),
                "Run `git orchestrate checkpoint`, then `git orchestrate get-task`.",
            ));
        }
        // Approval and escalation only wait in CODE_REVIEW, refused above.
        Some(Pending::Approval { .. } | Pending::Escalation { .. }) | None => {}
    }
    let step = current_step(status, plan)?;
    let step_id = step.id;
    let wanted = Expectation::for_step(step.kind);
    match expectation {
        Some(given) if given != wanted => Err(Rejection {
            kind: RejectionKind::InvalidInput,
            state: status,
            message: format!(
                "step {step_id} is a {} step, so its test is expected to {}; --expectation {given} \
                 does not fit it",
                step.kind,
                if wanted == Expectation::Fail {
                    "fail"
                } else {
                    "pass"
                }
            ),
            hint: format!("Submit with --expectation {wanted}, or leave --expectation out."),
        }),
        _ => Ok(Accepted::Test {
            command,
            step: step_id,
            kind: step.kind,
            description: step.description.clone(),
            expectation: wanted,
        }),
    }
}

/// A finalization step confirmed, with or without the commit the orchestrator makes first:
/// `--squash` only where the squash is due, `--mark-done` only where the master-plan commit is.
fn check_confirm<P, C>(
    status: Status,
    request: SubmitRequest<&P, &C>,
) -> Result<Accepted<P, C>, Rejection> {
    let wrong_step = |given: &str, wanted: &str| {
        Rejection::wrong_state(
            status,
            format!("submit-work {given} is not this step's"),
            format!(
                "This step takes `git orchestrate submit-work --summary \"…\" {wanted}`; `git orchestrate get-task` says more."
            ),
        )
    };
    match (status, request) {
        (Status::AwaitingFinalization, SubmitRequest::MarkDone) => Err(wrong_step(
            "--mark-done",
            "--squash (or the squash by hand)",
        )),
        (Status::FinalizeComplete, SubmitRequest::Squash) => Err(wrong_step(
            "--squash",
            "--mark-done (or the master-plan commit by hand)",
        )),
        (Status::AwaitingFinalization, request) => Ok(Accepted::Squash {
            make: matches!(request, SubmitRequest::Squash),
        }),
        (Status::FinalizeComplete, request) => Ok(Accepted::MasterPlanUpdate {
            make: matches!(request, SubmitRequest::MarkDone),
        }),
        (
            Status::Initializing
            | Status::CreatingBranch
            | Status::ExecutingTdd
            | Status::Debugging
            | Status::Replanning
            | Status::CodeReview
            | Status::PlanUpdated
            | Status::MergingBranch
            | Status::Halted,
            _,
        ) => Err(Rejection::wrong_state(
            status,
            format!(
                "submit-work without --plan, --test-command or --analysis-decision confirms a finalization \
                 step; in state {status} there is none"
            ),
            GET_TASK_HINT,
        )),
    }
}

fn not_in_tdd<P, C>(status: Status, request: &SubmitRequest<P, C>) -> Rejection {
    let what = match request {
        SubmitRequest::Analysis(_) => "submit-work --analysis-decision",
        _ => "submit-work --test-command",
    };
    let (why, hint) = match status {
        Status::Initializing => (
            "no PR plan is active yet",
            "Submit a plan first: `git orchestrate submit-work --summary \"<one line>\" --plan FILE` \
             (`git orchestrate get-task` shows the schema).",
        ),
        Status::CreatingBranch => (
            "the PR branch has not been created yet",
            "Run `git orchestrate get-task`; it creates the branch and gives you the first step.",
        ),
        Status::Halted => (
            "the workflow is halted for a human",
            "A human has to answer it (`git orchestrate status` shows why).",
        ),
        _ => ("this state takes no test submissions", GET_TASK_HINT),
    };
    Rejection::wrong_state(
        status,
        format!("{what} is not accepted in state {status}: {why}"),
        hint,
    )
}

fn current_step(
    status: Status,
    plan: Option<&PlanSummary>,
) -> Result<&crate::workflow::plan::StepSummary, Rejection> {
    plan.and_then(|p| p.current.as_ref()).ok_or_else(|| {
        Rejection::wrong_state(
            status,
            format!("every step of the plan is DONE (state {status}); there is nothing to test"),
            GET_TASK_HINT,
        )
    })
}

/// True when `transition` needs the full plan for `event`: to append a review task to it,
/// or to hold a re-plan to the plan it replaces. Every other event is decided from the state and the event alone, so the engine can skip
/// parsing a large `pr.json`.
pub fn needs_full_plan(event: &Event) -> bool {
    match event {
        Event::ReviewCompleted { record, .. } => !record.blocking().is_empty(),
        Event::Rejected { .. } => true,
        // Held to the re-plan rules, which compare it with the plan it replaces.
        Event::Replanned { .. } => true,
        _ => false,
    }
}

/// States a checkpoint (and the preflight run for it) is taken in: the TDD loop, and
/// AWAITING_FINALIZATION for a late addition, verified before the squash.
pub const CHECKPOINT_STATES: &[Status] = &[
    Status::ExecutingTdd,
    Status::Debugging,
    Status::AwaitingFinalization,
];

/// A checkpoint the workflow owes: the step that passed and its description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwedCheckpoint {
    pub step: StepId,
    pub description: String,
}

/// Decides whether `checkpoint` is accepted: on the PR branch while its steps are worked on
/// or before the squash. Returns the checkpoint a passed step owes, if any (a checkpoint
/// nobody asked for is a human's, and is recorded too).
pub fn check_checkpoint(state: &State) -> Result<Option<OwedCheckpoint>, Rejection> {
    let refuse = |why: &str| {
        let status = state.status();
        Err(Rejection::wrong_state(
            status,
            format!("checkpoint is not accepted in state {status}: {why}"),
            GET_TASK_HINT,
        ))
    };
    let Phase::Pr { stage, .. } = &state.phase else {
        return refuse(match state.phase {
            Phase::Initializing | Phase::CreatingBranch { .. } => "there is no PR branch yet",
            Phase::Pr { .. } | Phase::Halted { .. } => {
                "checkpoints are commits on the PR branch while its steps are worked on"
            }
        });
    };
    match (stage.tdd(), stage) {
        (Some((_, pending)), _) => Ok(match pending {
            Some(TddPending::Checkpoint {
                step, description, ..
            }) => Some(OwedCheckpoint {
                step: *step,
                description: description.clone(),
            }),
            Some(TddPending::Analysis(_)) | None => None,
        }),
        (None, PrStage::AwaitingFinalization) => Ok(None),
        (None, _) => {
            refuse("checkpoints are commits on the PR branch while its steps are worked on")
        }
    }
}

/// States an agent may escalate from, once unlocked: every state in which it can be stuck
/// with no command of its own that leads out. PLAN_UPDATED is left by `get-task` itself, and
/// HALTED already waits for a human.
/// The states where the agent is held to a test and may say the task contradicts it
/// (`submit-work --contradiction`): the TDD loop, its debugging, and the re-plan after a
/// scope reduction.
pub(super) const CONTRADICTABLE: &[Status] =
    &[Status::ExecutingTdd, Status::Debugging, Status::Replanning];

pub(super) const ESCALATABLE: &[Status] = &[
    Status::Initializing,
    Status::CreatingBranch,
    Status::Debugging,
    Status::Replanning,
    Status::CodeReview,
    Status::AwaitingFinalization,
    Status::FinalizeComplete,
    Status::MergingBranch,
];

/// Decides whether `request-scope-reduction` is unlocked (docs/agent-guide.md, "The escape tools and their locks"); returns the step
/// whose task is to be re-planned.
pub fn check_scope_reduction(
    state: &State,
    plan: Option<&PlanSummary>,
    thresholds: &Thresholds,
) -> Result<StepSummary, Rejection> {
    let status = state.status();
    let at = thresholds.unlock_scope_reduction_at;
    let tdd = match &state.phase {
        Phase::Pr { stage, .. } => stage.tdd(),
        Phase::Initializing | Phase::CreatingBranch { .. } | Phase::Halted { .. } => None,
    };
    // Nothing has failed yet in EXECUTING_TDD: locked, and the message says how far from
    // unlocking.
    let attempts = match tdd {
        Some((attempts, _)) => attempts.map_or(0, |a| a.count),
        None => {
            return Err(Rejection::wrong_state(
                status,
                format!(
                    "request-scope-reduction is not accepted in state {status}: it replaces a task that keeps failing"
                ),
                GET_TASK_HINT,
            ));
        }
    };
    if attempts < at {
        return Err(locked("request-scope-reduction", status, attempts, at));
    }
    plan.and_then(|p| p.current.clone()).ok_or_else(|| {
        Rejection::wrong_state(
            status,
            format!("no step is in progress in state {status}"),
            GET_TASK_HINT,
        )
    })
}

/// Decides whether `escalate` is unlocked (docs/agent-guide.md, "The escape tools and their locks"). In the TDD loop it unlocks with the
/// failed attempts; in code review when the rounds are used up or the review cannot run;
/// in the other states where an agent can be stuck (planning, branch creation, finalization,
/// merge) it is always open, since no attempt counter measures being stuck there.
pub fn check_escalate(state: &State, thresholds: &Thresholds) -> Result<(), Rejection> {
    let status = state.status();
    let at = thresholds.unlock_escalation_at;
    let attempts = match &state.phase {
        Phase::Halted { .. } => {
            return Err(Rejection::wrong_state(
                status,
                "escalate is not accepted in state HALTED: the workflow already waits for a human",
                "A human answers with `git orchestrate resume --guidance \"<what to try>\"`; \
                 `git orchestrate status` shows why it halted.",
            ));
        }
        Phase::Pr {
            stage: PrStage::PlanUpdated { .. },
            ..
        } => {
            return Err(Rejection::wrong_state(
                status,
                "escalate is not accepted in state PLAN_UPDATED: the PR is finalized and only the merge is left",
                "Run `git orchestrate get-task`: it merges the PR branch.",
            ));
        }
        Phase::Pr {
            stage: PrStage::CodeReview { review: stage, .. },
            ..
        } => {
            return match stage {
                ReviewStage::MustEscalate { .. } => Ok(()),
                ReviewStage::AwaitingApproval { .. } => Err(Rejection::wrong_state(
                    status,
                    "escalate is not accepted in state CODE_REVIEW now: the PR already waits for a human's approval",
                    "A human answers with `git orchestrate approve` or `git orchestrate reject --comment TEXT`.",
                )),
                // The review command itself fails: nothing the agent does can fix it.
                ReviewStage::Due { error: Some(_) } => Ok(()),
                ReviewStage::Due { error: None } => Err(Rejection::wrong_state(
                    status,
                    "escalate is locked in state CODE_REVIEW: it unlocks when the review rounds (review.max_rounds) \
                     are used up or the review cannot run",
                    "Run `git orchestrate get-task`: it runs the review and briefs you on its findings.",
                )),
            };
        }
        // No attempt counter measures being stuck here: always open.
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::MergingBranch { .. },
            ..
        } => return Ok(()),
        Phase::Pr {
            stage: PrStage::ExecutingTdd { .. },
            ..
        } => 0,
        Phase::Pr {
            stage: PrStage::Debugging { attempts, .. },
            ..
        } => attempts.count,
    };
    if attempts < at {
        return Err(locked("escalate", status, attempts, at));
    }
    Ok(())
}

/// `resume` is for HALTED only.
pub fn check_resume(state: &State) -> Result<(), Rejection> {
    match (state.halt(), state.status()) {
        (Some(_), Status::Halted) => Ok(()),
        (_, status) => Err(Rejection::wrong_state(
            status,
            format!("resume is not accepted in state {status}: the workflow is not halted"),
            "Nothing waits for a human; `git orchestrate status` shows where the workflow stands.",
        )),
    }
}

fn locked(tool: &str, status: Status, attempts: u32, at: u32) -> Rejection {
    let more = at - attempts;
    // Only DEBUGGING has a failing output to look at; in EXECUTING_TDD nothing has failed yet.
    let hint = if status == Status::Debugging {
        "Keep debugging: `git orchestrate get-task` shows the failing output and the guidance for this attempt."
    } else {
        "No attempt has failed yet: work on the current step (`git orchestrate get-task` shows it) and \
         submit it with `git orchestrate submit-work`."
    };
    Rejection::wrong_state(
        status,
        format!(
            "{tool} is locked: {more} more failed attempt{} needed (it unlocks at attempt {at}; this is attempt \
             {attempts}, state {status})",
            if more == 1 { "" } else { "s" }
        ),
        hint,
    )
}
