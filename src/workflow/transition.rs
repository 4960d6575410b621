//! The transition table (docs/states.md): `transition(state, plan, event) -> (state,
//! effects)`, one function per event, plus the pure checks that decide what `get-task` must
//! do and whether a `submit-work` is accepted at all.

use super::debugging::{Thresholds, same_failure};
use super::plan::{Plan, PlanSummary, StepId, StepSummary, StepType};
pub use super::rejection::{Rejection, RejectionKind};
use super::review::{Finding, Priority, ReviewRecord, feedback_task};
use super::state::{Attempts, ExitRecord, LastRun, Pending, PreflightRecord, State, Status};
use super::state::{
    Finalized, Halt, HaltReason, Phase, Pin, Pr, PrStage, PreflightCache, ReplanContext,
};
use super::state::{Idle, RedAnalysis, RedOutcome, RedTest, ReviewStage, ReviewSummary};
use super::state::{TddPending, Verdict};
use super::{Decision, Expectation, Human};
use serde::{Deserialize, Serialize};

/// Something that happened, observed by the engine and fed to [`transition`]. Each
/// transition commit records the event it applied, so that `audit` can compute it again
/// (docs/integrity.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Event {
    /// A valid plan was submitted in INITIALIZING; `branch` is the free branch name for it.
    PlanSubmitted {
        plan: Plan,
        branch: String,
        summary: String,
    },
    /// The plan in INITIALIZING or CREATING_BRANCH had no step left to do.
    StalePlanDropped { title: Option<String> },
    /// The PR branch exists and is checked out; `base` is where it left the main branch,
    /// `pin` main's gates as they are now, which the whole PR is verified under.
    BranchReady {
        base: Option<String>,
        pin: Option<Pin>,
    },
    /// `repin`: a human moved the PR's gates to main's as they are now.
    Repinned { pin: Pin },
    /// Creating or checking out the PR branch failed; the reason is for the agent.
    BranchBlocked { reason: String },
    /// The agent's test command ran (and, after a passing PASS run, the preflight gates).
    TestRan(Box<TestRun>),
    /// The agent judged a NEEDS_ANALYSIS result.
    AnalysisDecided { decision: Decision, summary: String },
    /// A checkpoint commit was found on the PR branch (or just made by `checkpoint`); its
    /// tree passed preflight, and the squash is held to it.
    CheckpointRecorded {
        commit: String,
        subject: String,
        tree: String,
    },
    /// `checkpoint` ran preflight itself and it passed on `cache.tree`; recorded before the
    /// commit, so that the `commit-msg` hook finds it and does not run the gates again.
    PreflightPassed { cache: PreflightCache },
    /// `request-scope-reduction`: the working tree was reset to HEAD; `untracked` files stayed.
    ScopeReduced {
        step: StepId,
        original_task: String,
        untracked: Vec<String>,
    },
    /// A re-plan that follows the rules of [`super::replan::check_replan`]; `new_tasks`
    /// replace the failed one.
    Replanned {
        plan: Plan,
        new_tasks: usize,
        summary: String,
    },
    /// `escalate`: the agent's report for a human.
    Escalated { report: String },
    /// `resume`: a human answered the halt.
    Resumed { guidance: Option<String> },
    /// `get-task` showed the human's guidance; it is shown once.
    GuidanceDelivered,
    /// Every step is DONE: `get-task` starts the code review (docs/states.md), unless the
    /// rounds are used up.
    ReviewStarted { max_rounds: u32 },
    /// The review ran, or there was nothing to run (no review command).
    ReviewCompleted { record: ReviewRecord, human: bool },
    /// A reviewer crashed, timed out or printed something unreadable: never an approval.
    ReviewFailed { error: String },
    /// A human approved the reviewed PR.
    Approved,
    /// A human rejected it; the comment becomes a blocking finding.
    Rejected {
        comment: String,
        /// How the answer was authorised; `None` in events recorded before 0.3.
        #[serde(default)]
        by: Option<Human>,
    },
    /// The branch is one commit over main, with the verified tree.
    Squashed { commit: String },
    /// The final check refused the squashed `commit` (docs/integrity.md): nothing moves,
    /// but the refusal stays in the chain, and the final note counts them.
    FinalCheckRefused { commit: String, reason: String },
    /// The master plan marks the PR DONE, in a second commit.
    MasterPlanUpdated { commit: String },
    /// PLAN_UPDATED → MERGING_BRANCH.
    MergeStarted,
    /// The branch is merged into main (by get-task, or by a human after a conflict) and gone;
    /// `main` is main's tip after it, the commit the workflow accounts main to (`None` in
    /// events recorded before 0.4).
    Merged {
        branch: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        main: Option<String>,
    },
    /// The merge could not start: a dirty tree, a failed checkout or pull.
    MergeBlocked { reason: String },
    /// The merge conflicted and was aborted: a human has to merge.
    MergeConflicted { message: String },
    /// `run` gave up: `turns` turns of the agent in a row made no transition on one step;
    /// the report says what was tried.
    Stuck { report: String, turns: u32 },
    /// `submit-work --no-pr-left` in INITIALIZING: every PR of the master plan is done;
    /// `master_plan` is the blob judged.
    NoPrLeft {
        master_plan: Option<String>,
        summary: String,
    },
}

impl Event {
    /// The name used in the commit subject and the `Orchestrator-Event` trailer.
    pub fn name(&self) -> &'static str {
        match self {
            Event::PlanSubmitted { .. } => "plan",
            Event::StalePlanDropped { .. } => "drop-stale-plan",
            Event::BranchReady { .. } => "branch",
            Event::Repinned { .. } => "repin",
            Event::BranchBlocked { .. } => "branch-blocked",
            Event::TestRan(_) => "test",
            Event::AnalysisDecided { .. } => "analysis",
            Event::CheckpointRecorded { .. } => "checkpoint",
            Event::PreflightPassed { .. } => "preflight",
            Event::ScopeReduced { .. } => "scope-reduction",
            Event::Replanned { .. } => "replan",
            Event::Escalated { .. } => "escalate",
            Event::Resumed { .. } => "resume",
            Event::GuidanceDelivered => "guidance",
            Event::ReviewStarted { .. } => "review-start",
            Event::ReviewCompleted { .. } => "review",
            Event::ReviewFailed { .. } => "review-error",
            Event::Approved => "approve",
            Event::Rejected { .. } => "reject",
            Event::Squashed { .. } => "squash",
            Event::FinalCheckRefused { .. } => "final-check-refused",
            Event::MasterPlanUpdated { .. } => "plan-update",
            Event::MergeStarted => "merge-start",
            Event::Merged { .. } => "merge",
            Event::MergeBlocked { .. } => "merge-blocked",
            Event::MergeConflicted { .. } => "merge-conflict",
            Event::NoPrLeft { .. } => "no-pr-left",
            Event::Stuck { .. } => "stuck",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRun {
    pub step: StepId,
    pub kind: StepType,
    /// The step's description, for the checkpoint it may owe.
    pub description: String,
    pub command: String,
    pub expectation: Expectation,
    pub exit: ExitRecord,
    /// The last lines of the command's output, verbatim (lossy only where it was not UTF-8).
    pub output_tail: String,
    /// Present exactly when the command passed under a PASS expectation.
    pub preflight: Option<PreflightOutcome>,
    /// The task's RED test, run again after the command passed at the task's GREEN step
    /// ([`State::red_test_due`]); `None` when none was due, or it is the command itself and
    /// its pinned paths are as the RED step left them.
    pub red_rerun: Option<RedRerun>,
    pub summary: String,
    /// A failing RED run: the tree it left and the paths its step changed, pinned as its test
    /// when the analysis accepts it; or why it is no test that failed: it did not run (exit
    /// 126/127, a runner that says nothing ran), or its test cannot be pinned (a link out of
    /// the repository) (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<RedOutcome>,
    /// A line of a failing RED run's output that shows the test could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syntax_error: Option<String>,
}

/// A RED test run again at its task's GREEN step: it must pass now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedRerun {
    pub command: String,
    pub exit: ExitRecord,
    pub output_tail: String,
    /// Pinned paths the GREEN step had changed: the run had them as the RED step left them
    /// (in a scratch worktree), and the change is named to the reviewer (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// The run passed, but its runner says no test ran (all skipped, ignored or filtered
    /// out): that is no pass of the RED test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreflightOutcome {
    pub record: PreflightRecord,
    /// The failing gate's name and output tail, when one failed.
    pub failure: Option<(String, String)>,
    /// The tree the gates verified, recorded only when gates actually ran.
    pub verified_tree: Option<String>,
    pub key: Option<String>,
    /// Files that differ between the trees taken before the test, after it and after
    /// preflight: then the pass does not count (docs/integrity.md).
    pub changed: Vec<String>,
    /// Protected paths the tree changes against main at the PR's pin: then the gates did
    /// not run and the pass does not count (docs/integrity.md).
    pub protected: Vec<String>,
}

/// What the engine must carry out besides storing the new state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Store this output, verbatim, as `output.log` in the new state.
    SaveOutput(OutputSource),
    /// `submit-work` answers with this verdict (and its exit code).
    Reply(Verdict),
    /// Store the agent's escalation report as `escalation.md`.
    SaveEscalation(String),
    /// The halt is over: remove `escalation.md`.
    DropEscalation,
    /// Store the review's record as `review.json`.
    SaveReview(ReviewRecord),
    /// The PR is merged: its `review.json` and `output.log` go (`pr.json` goes with
    /// [`PlanChange::Drop`]).
    DropPrRecords,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputSource {
    /// The agent's test command.
    Test,
    /// The named preflight gate.
    Gate(String),
    /// The task's RED test, run again at its GREEN step.
    RedTest,
}

/// What happens to the PR plan. The accepted plan is stored once and never rewritten for
/// progress: a completed step is recorded beside it (docs/refs.md), so that success costs
/// no more than failure.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanChange {
    Keep,
    /// The step is DONE.
    CompleteStep(StepId),
    /// Store the plan as it now reads, progress included, as the plan: where someone is
    /// about to read or rewrite it (a re-plan, the review).
    Materialize,
    Replace(Plan),
    Drop,
}

/// The result of [`transition`]: the new state, what happens to the plan, and the effects.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub event: &'static str,
    /// The event applied, as each transition commit records it (docs/integrity.md).
    pub input: Event,
    pub from: Status,
    pub state: State,
    pub plan: PlanChange,
    pub step: Option<StepId>,
    /// The commit message body: what happened, then the agent's own summary.
    pub summary: String,
    pub effects: Vec<Effect>,
}

impl Transition {
    pub fn to(&self) -> Status {
        self.state.status()
    }

    pub fn verdict(&self) -> Option<Verdict> {
        self.effects.iter().find_map(|e| match e {
            Effect::Reply(v) => Some(*v),
            _ => None,
        })
    }
}

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
        SubmitRequest::NoPrLeft => match (status, plan) {
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
        },
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
        } => {
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
                         (it failed for the intended reason) or `--analysis-decision FAILURE`.",
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
                    hint: format!(
                        "Submit with --expectation {wanted}, or leave --expectation out."
                    ),
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
) -> Result<&super::plan::StepSummary, Rejection> {
    plan.and_then(|p| p.current.as_ref()).ok_or_else(|| {
        Rejection::wrong_state(
            status,
            format!("every step of the plan is DONE (state {status}); there is nothing to test"),
            GET_TASK_HINT,
        )
    })
}

/// True when `transition` needs the full plan for `event`: to append a review task to it.
/// Every other event is decided from the state and the event alone, so the engine can skip
/// parsing a large `pr.json`.
pub fn needs_full_plan(event: &Event) -> bool {
    match event {
        Event::ReviewCompleted { record, .. } => !record.blocking().is_empty(),
        Event::Rejected { .. } => true,
        _ => false,
    }
}

/// The transition table. Returns the new state and the effects, or a rejection when the
/// event does not apply to this state (the engine checks first, so this is the backstop
/// against a state that moved underneath it). `plan` is the full plan, progress included,
/// when [`needs_full_plan`] says the event needs it.
pub fn transition(
    state: &State,
    plan: Option<&Plan>,
    event: Event,
) -> Result<Transition, Rejection> {
    let from = state.status();
    let name = event.name();
    let input = event.clone();
    let next = match event {
        Event::PlanSubmitted {
            plan,
            branch,
            summary,
        } => plan_submitted(state, plan, branch, &summary),
        Event::StalePlanDropped { title } => stale_plan_dropped(state, title),
        Event::BranchReady { base, pin } => branch_ready(state, base, pin),
        Event::Repinned { pin } => repinned(state, pin),
        Event::BranchBlocked { reason } => branch_blocked(state, reason),
        Event::TestRan(run) => test_ran(state, *run),
        Event::AnalysisDecided { decision, summary } => analysis_decided(state, decision, &summary),
        Event::CheckpointRecorded {
            commit,
            subject,
            tree,
        } => checkpoint_recorded(state, commit, &subject, tree),
        Event::PreflightPassed { cache } => preflight_passed(state, cache),
        Event::ScopeReduced {
            step,
            original_task,
            untracked,
        } => scope_reduced(state, step, original_task, untracked),
        Event::Replanned {
            plan,
            new_tasks,
            summary,
        } => replanned(state, plan, new_tasks, &summary),
        Event::Escalated { report } => escalated(state, report),
        Event::Resumed { guidance } => resumed(state, guidance),
        Event::GuidanceDelivered => Ok(Next::new(
            State {
                guidance: None,
                ..state.clone()
            },
            "the human's guidance was shown to the agent".into(),
        )),
        Event::ReviewStarted { max_rounds } => review_started(state, max_rounds),
        Event::ReviewCompleted { record, human } => review_completed(state, plan, record, human),
        Event::ReviewFailed { error } => review_failed(state, error),
        Event::Approved => approved(state),
        Event::Rejected { comment, by } => rejected(state, plan, comment, by),
        Event::Squashed { commit } => squashed(state, commit),
        Event::FinalCheckRefused { reason, .. } => final_check_refused(state, reason),
        Event::MasterPlanUpdated { commit } => master_plan_updated(state, commit),
        Event::MergeStarted => merge_started(state),
        Event::Merged { branch, main } => merged(state, &branch, main),
        Event::MergeBlocked { reason } => merge_blocked(state, reason),
        Event::MergeConflicted { message } => merge_conflicted(state, message),
        Event::NoPrLeft {
            master_plan,
            summary,
        } => no_pr_left(state, master_plan, &summary),
        Event::Stuck { report, turns } => stuck(state, report, turns),
    }
    .map_err(|reason| reason.rejection(from, name))?;
    let mut next = next;
    // Idle holds until anything else happens: a plan, an escalation, a human's answer.
    if name != "no-pr-left" {
        next.state.idle = None;
    }
    Ok(Transition {
        event: name,
        input,
        from,
        state: next.state,
        plan: next.plan,
        step: next.step,
        summary: next.summary,
        effects: next.effects,
    })
}

/// What one event's function decides; [`transition`] adds the event's name and origin.
struct Next {
    state: State,
    plan: PlanChange,
    step: Option<StepId>,
    summary: String,
    effects: Vec<Effect>,
}

impl Next {
    fn new(state: State, summary: String) -> Next {
        Next {
            state,
            plan: PlanChange::Keep,
            step: None,
            summary,
            effects: Vec::new(),
        }
    }

    fn plan(mut self, plan: PlanChange) -> Next {
        self.plan = plan;
        self
    }

    fn step(mut self, step: StepId) -> Next {
        self.step = Some(step);
        self
    }

    fn effects(mut self, effects: Vec<Effect>) -> Next {
        self.effects = effects;
        self
    }
}

/// Why an event does not apply; turned into a [`Rejection`] naming the state.
enum Refusal {
    /// The event does not fit the state at all.
    WrongState,
    /// The event needs the plan, and none is active.
    NoPlan,
    /// Anything else, in its own words.
    Said(String),
    /// Refused as a command's own check refuses it.
    Rejected(Rejection),
}

impl Refusal {
    fn rejection(self, from: Status, event: &str) -> Rejection {
        let message = match self {
            Refusal::WrongState => format!("`{event}` does not apply in state {from}"),
            Refusal::NoPlan => format!("no PR plan is active in state {from}"),
            Refusal::Said(message) => message,
            Refusal::Rejected(rejection) => return rejection,
        };
        Rejection::wrong_state(from, message, GET_TASK_HINT)
    }
}

fn with_phase(state: &State, phase: Phase) -> State {
    State {
        phase,
        ..state.clone()
    }
}

/// Planning: no PR branch exists yet, so a plan can be taken up or dropped.
fn before_branch(state: &State) -> bool {
    match state.phase {
        Phase::Initializing | Phase::CreatingBranch { .. } => true,
        Phase::Pr { .. } | Phase::Halted { .. } => false,
    }
}

fn plan_submitted(
    state: &State,
    mut plan: Plan,
    branch: String,
    summary: &str,
) -> Result<Next, Refusal> {
    if !before_branch(state) {
        return Err(Refusal::Said(format!(
            "a plan is only accepted in INITIALIZING, not in {}",
            state.status()
        )));
    }
    // What the agent claims done is no record (docs/integrity.md): every step starts TODO.
    plan.reset_progress();
    let body = format!(
        "plan \"{}\" accepted; branch {branch}\n\n{summary}",
        plan.pr_title
    );
    let phase = Phase::CreatingBranch {
        branch,
        blocked: None,
    };
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Replace(plan))
        .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn no_pr_left(state: &State, master_plan: Option<String>, summary: &str) -> Result<Next, Refusal> {
    if state.status() != Status::Initializing {
        return Err(Refusal::WrongState);
    }
    let judged = master_plan
        .as_deref()
        .map_or("no master plan".to_string(), |b| {
            format!("master plan {}", crate::short_id(b))
        });
    Ok(Next::new(
        State {
            idle: Some(Idle { master_plan }),
            ..state.clone()
        },
        format!("nothing left to do ({judged})\n\n{summary}"),
    )
    .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn stale_plan_dropped(state: &State, title: Option<String>) -> Result<Next, Refusal> {
    if !before_branch(state) {
        return Err(Refusal::WrongState);
    }
    let body = match title {
        Some(title) => format!("dropped the stale plan \"{title}\": no step left to do"),
        None => "dropped an empty plan".to_string(),
    };
    Ok(Next::new(with_phase(state, Phase::Initializing), body).plan(PlanChange::Drop))
}

fn branch_ready(state: &State, base: Option<String>, pin: Option<Pin>) -> Result<Next, Refusal> {
    let Phase::CreatingBranch { branch, .. } = &state.phase else {
        return Err(Refusal::WrongState);
    };
    // The first pin is where this workflow starts to account for main.
    let main_tip = state
        .main_tip
        .clone()
        .or_else(|| pin.as_ref().map(|p| p.commit.clone()));
    let phase = Phase::Pr {
        pr: Pr {
            pin,
            ..Pr::new(branch.clone(), base)
        },
        stage: PrStage::ExecutingTdd { pending: None },
    };
    Ok(Next::new(
        State {
            main_tip,
            ..with_phase(state, phase)
        },
        format!("on branch {branch}"),
    ))
}

fn repinned(state: &State, pin: Pin) -> Result<Next, Refusal> {
    let mut next = state.clone();
    let short = crate::short_id(&pin.commit);
    // A human's repin accounts for main as it is now: what moved it since is theirs.
    next.main_tip = Some(pin.commit.clone());
    let body = match next.pr_mut() {
        Some(pr) => {
            pr.pin = Some(pin.clone());
            // A pass under the old gates proves nothing under the new ones.
            pr.preflight_cache = None;
            format!("a human repinned the PR's gates to main at {short}")
        }
        None => format!("a human accounted for main as it is at {short}"),
    };
    Ok(Next::new(next, body))
}

fn branch_blocked(state: &State, reason: String) -> Result<Next, Refusal> {
    let Phase::CreatingBranch { branch, .. } = &state.phase else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::CreatingBranch {
        branch: branch.clone(),
        blocked: Some(reason.clone()),
    };
    Ok(Next::new(with_phase(state, phase), reason))
}

/// The TDD loop's data, whichever of its two phases the workflow is in.
struct Tdd {
    pr: Pr,
    attempts: Option<Attempts>,
    pending: Option<TddPending>,
}

impl Tdd {
    fn of(state: &State) -> Option<Tdd> {
        match &state.phase {
            Phase::Pr {
                pr,
                stage: PrStage::ExecutingTdd { pending },
            } => Some(Tdd {
                pr: pr.clone(),
                attempts: None,
                pending: pending.clone(),
            }),
            Phase::Pr {
                pr,
                stage: PrStage::Debugging { attempts, pending },
            } => Some(Tdd {
                pr: pr.clone(),
                attempts: Some(attempts.clone()),
                pending: pending.clone(),
            }),
            Phase::Initializing
            | Phase::CreatingBranch { .. }
            | Phase::Pr {
                stage:
                    PrStage::Replanning { .. }
                    | PrStage::CodeReview { .. }
                    | PrStage::AwaitingFinalization
                    | PrStage::FinalizeComplete { .. }
                    | PrStage::PlanUpdated { .. }
                    | PrStage::MergingBranch { .. },
                ..
            }
            | Phase::Halted { .. } => None,
        }
    }

    /// The attempt failed: DEBUGGING starts, or counts one more attempt (docs/states.md).
    fn failed(self, error: String) -> Phase {
        let attempts = match self.attempts {
            // Agents loop on identical errors; the briefing says so when it happens.
            Some(old) => Attempts {
                count: old.count.saturating_add(1),
                identical_failures: if same_failure(&old.error, &error) {
                    old.identical_failures.saturating_add(1)
                } else {
                    0
                },
                error,
            },
            None => Attempts {
                count: 1,
                identical_failures: 0,
                error,
            },
        };
        Phase::Pr {
            pr: self.pr,
            stage: PrStage::Debugging {
                attempts,
                pending: self.pending,
            },
        }
    }

    /// The outcome matched the expectation: debugging is over.
    fn succeeded(self) -> Phase {
        Phase::Pr {
            pr: self.pr,
            stage: PrStage::ExecutingTdd {
                pending: self.pending,
            },
        }
    }

    /// The phase as it was, with the changes made to its data.
    fn unchanged(self) -> Phase {
        match self.attempts {
            Some(attempts) => Phase::Pr {
                pr: self.pr,
                stage: PrStage::Debugging {
                    attempts,
                    pending: self.pending,
                },
            },
            None => self.succeeded(),
        }
    }
}

/// A passing run whose tree does not count (docs/integrity.md): `what` happened to `files`,
/// and `why` that undoes the pass. The attempt fails like any other.
/// What a test run comes to: the phase, the plan's change, the commit body, the output to
/// keep and the verdict.
type Outcome = (Phase, PlanChange, String, OutputSource, Verdict);

/// A failed attempt: the workflow debugs it; `body` gets the attempt's number.
fn failure(
    tdd: Tdd,
    error: String,
    output: OutputSource,
    body: impl FnOnce(u32) -> String,
) -> Outcome {
    let phase = tdd.failed(error);
    let body = body(phase.attempts());
    (phase, PlanChange::Keep, body, output, Verdict::Failure)
}

fn pass_not_counted(tdd: Tdd, run: &TestRun, files: &[String], what: &str, why: &str) -> Outcome {
    let files = files.join(", ");
    let error = format!("{what}: {files}\n");
    failure(tdd, error, OutputSource::Test, |attempt| {
        format!(
            "FAILURE: `{}` passed ({}), but {what} ({files}): {why}; debugging attempt {attempt}",
            run.command, run.exit
        )
    })
}

/// A GREEN run passed, and the task's RED test, run again, still fails (or runs nothing).
fn red_still_fails(tdd: Tdd, run: &TestRun, red: &RedRerun) -> Outcome {
    let put_back = if red.restored.is_empty() {
        String::new()
    } else {
        format!(
            " (run with {} as the RED step left {})",
            red.restored.join(", "),
            if red.restored.len() == 1 {
                "it"
            } else {
                "them"
            }
        )
    };
    let how = match &red.not_run {
        Some(why) => format!("passes without running a test ({why})"),
        None => format!("still fails ({})", red.exit),
    };
    failure(
        tdd,
        red.output_tail.clone(),
        OutputSource::RedTest,
        |attempt| {
            format!(
                "FAILURE: `{}` passed ({}), but the task's RED test `{}`{put_back} {how}: \
             the GREEN step must make it pass; debugging attempt {attempt}",
                run.command, run.exit, red.command
            )
        },
    )
}

/// A passing run that was meant to pass, with passing gates: the step is DONE.
fn step_done(mut tdd: Tdd, run: &TestRun, pre: &PreflightOutcome, red_due: bool) -> Outcome {
    if red_due {
        tdd.pr.red_test = None;
    }
    if let (Some(tree), Some(key)) = (&pre.verified_tree, &pre.key) {
        tdd.pr.verified_tree = Some(tree.clone());
        tdd.pr.preflight_cache = Some(PreflightCache {
            tree: tree.clone(),
            key: key.clone(),
            gates: pre.record.gates.clone(),
        });
    }
    tdd.pending = run.kind.needs_checkpoint().then(|| TddPending::Checkpoint {
        step: run.step,
        step_type: run.kind,
        description: run.description.clone(),
    });
    let gates = match pre.record.gates.len() {
        0 => "preflight: none configured".to_string(),
        1 => "preflight passed (1 gate)".to_string(),
        n => format!("preflight passed ({n} gates)"),
    };
    (
        tdd.succeeded(),
        PlanChange::CompleteStep(run.step),
        format!(
            "SUCCESS: step {} DONE: `{}` passed ({}); {gates}",
            run.step, run.command, run.exit
        ),
        OutputSource::Test,
        Verdict::Success,
    )
}

/// A RED run failed as it should: the agent judges why, pinned to the test it left.
fn red_needs_analysis(mut tdd: Tdd, run: &TestRun) -> Outcome {
    let pin = match &run.red {
        Some(RedOutcome::Pinned(pin)) => Some(pin.clone()),
        Some(RedOutcome::NotATest(_)) | None => None,
    };
    tdd.pending = Some(TddPending::Analysis(RedAnalysis {
        step: run.step,
        command: run.command.clone(),
        exit: run.exit,
        output_tail: run.output_tail.clone(),
        red_tree: pin.as_ref().map(|p| p.tree.clone()),
        red_shared: pin.as_ref().map(|p| p.shared.clone()).unwrap_or_default(),
        red_paths: pin.map(|p| p.paths).unwrap_or_default(),
        syntax_error: run.syntax_error.clone(),
    }));
    (
        tdd.unchanged(),
        PlanChange::Keep,
        format!(
            "NEEDS_ANALYSIS: the RED test `{}` failed ({}), as it should; awaiting the analysis",
            run.command, run.exit
        ),
        OutputSource::Test,
        Verdict::NeedsAnalysis,
    )
}

fn test_ran(state: &State, run: TestRun) -> Result<Next, Refusal> {
    let tdd = Tdd::of(state).ok_or(Refusal::WrongState)?;
    let step = run.step;
    let (command, exit) = (&run.command, run.exit);
    let mut last_run = LastRun {
        step,
        command: run.command.clone(),
        expectation: run.expectation,
        exit: run.exit,
        verdict: Verdict::Failure,
        preflight: run.preflight.as_ref().map(|p| p.record.clone()),
    };
    let red_due = state.red_test_due(step, run.kind);
    let red_failed = run
        .red_rerun
        .as_ref()
        .filter(|red| !red.exit.success() || red.not_run.is_some());
    let (phase, plan, body, output, verdict) = match (
        run.expectation,
        exit.success(),
        &run.preflight,
        red_failed,
    ) {
        (Expectation::Pass, true, _, None)
            if red_due.is_some_and(|red| red.command != run.command) && run.red_rerun.is_none() =>
        {
            return Err(Refusal::Said(
                "a passing GREEN run needs its task's RED test run again before it can be recorded"
                    .into(),
            ));
        }
        (Expectation::Pass, true, _, Some(red)) => red_still_fails(tdd, &run, red),
        (Expectation::Pass, true, Some(pre), None) if !pre.changed.is_empty() => pass_not_counted(
            tdd,
            &run,
            &pre.changed,
            "files changed while the test and preflight ran",
            "a pass counts only for the tree it ran on",
        ),
        (Expectation::Pass, true, Some(pre), None) if !pre.protected.is_empty() => {
            pass_not_counted(
                tdd,
                &run,
                &pre.protected,
                "the working tree changes protected paths",
                "a human changes these on main",
            )
        }
        (Expectation::Pass, true, Some(pre), None) if pre.record.passed() => {
            step_done(tdd, &run, pre, red_due.is_some())
        }
        (
            Expectation::Pass,
            true,
            Some(PreflightOutcome {
                failure: Some((gate, tail)),
                ..
            }),
            None,
        ) => failure(
            tdd,
            tail.clone(),
            OutputSource::Gate(gate.clone()),
            |attempt| {
                format!(
                    "FAILURE: `{command}` passed ({exit}), but preflight gate `{gate}` failed; debugging attempt {attempt}"
                )
            },
        ),
        (Expectation::Pass, true, _, None) => {
            return Err(Refusal::Said(
                "a passing PASS run needs its preflight result before it can be recorded".into(),
            ));
        }
        (Expectation::Pass, false, _, _) => failure(
            tdd,
            run.output_tail.clone(),
            OutputSource::Test,
            |attempt| format!("FAILURE: `{command}` failed ({exit}); debugging attempt {attempt}"),
        ),
        (Expectation::Fail, false, _, _) if matches!(run.red, Some(RedOutcome::NotATest(_))) => {
            let why = match &run.red {
                Some(RedOutcome::NotATest(why)) => why.clone(),
                _ => String::new(),
            };
            let error = format!("{why}\n{}", run.output_tail);
            failure(tdd, error, OutputSource::Test, |attempt| {
                format!(
                    "FAILURE: the RED test `{command}` failed ({exit}), but it is no test that failed: {why}; \
                     debugging attempt {attempt}"
                )
            })
        }
        (Expectation::Fail, false, _, _) => red_needs_analysis(tdd, &run),
        (Expectation::Fail, true, _, _) => failure(
            tdd,
            run.output_tail.clone(),
            OutputSource::Test,
            |attempt| {
                format!(
                    "FAILURE: the RED test `{command}` passed ({exit}), but a RED test must fail; debugging attempt {attempt}"
                )
            },
        ),
    };
    last_run.verdict = verdict;
    let mut next = with_phase(state, phase);
    if let Some(pr) = next.pr_mut() {
        pr.last_run = Some(last_run);
    }
    Ok(Next::new(next, format!("{body}\n\n{}", run.summary))
        .plan(plan)
        .step(step)
        .effects(vec![Effect::SaveOutput(output), Effect::Reply(verdict)]))
}

fn analysis_decided(state: &State, decision: Decision, summary: &str) -> Result<Next, Refusal> {
    let no_analysis = || {
        Refusal::Said(format!(
            "no analysis is pending in state {}",
            state.status()
        ))
    };
    let mut tdd = Tdd::of(state).ok_or_else(no_analysis)?;
    let Some(TddPending::Analysis(RedAnalysis {
        step,
        output_tail,
        command,
        red_tree,
        red_paths,
        red_shared,
        ..
    })) = tdd.pending.take()
    else {
        return Err(no_analysis());
    };
    let (phase, plan, body, verdict) = match decision {
        Decision::Success => (
            {
                // The GREEN step must make exactly this test pass (docs/integrity.md).
                tdd.pr.red_test = Some(RedTest {
                    task: step.task,
                    command,
                    tree: red_tree,
                    paths: red_paths,
                    shared: red_shared,
                });
                tdd.succeeded()
            },
            PlanChange::CompleteStep(step),
            format!("step {step} DONE: the RED test failed for the intended reason\n\n{summary}"),
            Verdict::Success,
        ),
        Decision::Failure => {
            let phase = tdd.failed(output_tail);
            let body = format!(
                "step {step}: the RED test failed for the wrong reason; debugging attempt {}\n\n{summary}",
                phase.attempts()
            );
            (phase, PlanChange::Keep, body, Verdict::Failure)
        }
    };
    let mut next = with_phase(state, phase);
    if let Some(run) = next.pr_mut().and_then(|pr| pr.last_run.as_mut()) {
        run.verdict = verdict;
    }
    Ok(Next::new(next, body)
        .plan(plan)
        .step(step)
        .effects(vec![Effect::Reply(verdict)]))
}

fn checkpoint_recorded(
    state: &State,
    commit: String,
    subject: &str,
    tree: String,
) -> Result<Next, Refusal> {
    let mut phase = state.phase.clone();
    // A checkpoint nobody asked for (a human's) still moves the last checkpoint.
    let (pr, step) = match &mut phase {
        Phase::Pr {
            pr,
            stage: PrStage::ExecutingTdd { pending },
        }
        | Phase::Pr {
            pr,
            stage: PrStage::Debugging { pending, .. },
        } => {
            let step = match pending.take() {
                Some(TddPending::Checkpoint { step, .. }) => Some(step),
                other => {
                    *pending = other;
                    None
                }
            };
            (pr, step)
        }
        Phase::Pr {
            pr,
            stage: PrStage::AwaitingFinalization,
        } => (pr, None),
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. } => return Err(Refusal::WrongState),
    };
    pr.verified_tree = Some(tree);
    pr.last_checkpoint = Some(commit.clone());
    let body = match step {
        Some(step) => format!("checkpoint for step {step}: {commit} {subject}"),
        None => format!("checkpoint {commit} {subject}"),
    };
    let next = Next::new(with_phase(state, phase), body);
    Ok(match step {
        Some(step) => next.step(step),
        None => next,
    })
}

fn preflight_passed(state: &State, cache: PreflightCache) -> Result<Next, Refusal> {
    if !CHECKPOINT_STATES.contains(&state.status()) {
        return Err(Refusal::WrongState);
    }
    let body = format!("preflight passed on tree {} for a checkpoint", cache.tree);
    let mut next = state.clone();
    if let Some(pr) = next.pr_mut() {
        pr.preflight_cache = Some(cache);
    }
    Ok(Next::new(next, body))
}

fn scope_reduced(
    state: &State,
    step: StepId,
    original_task: String,
    untracked: Vec<String>,
) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::Debugging { attempts, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let body = format!(
        "scope reduction after {} failed attempts: the working tree was reset to HEAD; task \"{original_task}\" \
         is to be re-planned",
        attempts.count
    );
    // The task it was for is re-planned; its replacements have RED steps of their own.
    let pr = Pr {
        red_test: None,
        ..pr.clone()
    };
    let phase = Phase::Pr {
        pr,
        stage: PrStage::Replanning {
            attempts: attempts.count,
            context: ReplanContext {
                original_task,
                step,
                error: attempts.error.clone(),
                untracked,
            },
        },
    };
    // The re-plan starts from the stored plan, so it must read as it stands now.
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Materialize)
        .step(step))
}

fn replanned(state: &State, plan: Plan, new_tasks: usize, summary: &str) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::Replanning { context, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let body = format!(
        "re-plan accepted: \"{}\" is replaced by {new_tasks} tasks\n\n{summary}",
        context.original_task
    );
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::ExecutingTdd { pending: None },
    };
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Replace(plan))
        .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn escalated(state: &State, report: String) -> Result<Next, Refusal> {
    let from = state.status();
    if !ESCALATABLE.contains(&from) {
        return Err(Refusal::WrongState);
    }
    let message = match (&state.phase, state.pending()) {
        (_, Some(Pending::Escalation { reason })) => {
            format!("the agent escalated for external help: {reason}")
        }
        (
            Phase::Pr {
                stage: PrStage::Debugging { .. } | PrStage::Replanning { .. },
                ..
            },
            _,
        ) => format!(
            "the agent escalated for external help after {} failed attempts",
            state.attempts()
        ),
        _ => format!("the agent escalated for external help in state {from}"),
    };
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::Escalated,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message).effects(vec![Effect::SaveEscalation(report)]))
}

/// `run` found the agent stuck: halted for a human, the report kept as an escalation's is.
fn stuck(state: &State, report: String, turns: u32) -> Result<Next, Refusal> {
    if state.status() == Status::Halted {
        return Err(Refusal::WrongState);
    }
    let message = format!(
        "`git orchestrate run` stopped the agent as stuck: {turns} turns in a row without progress in state {}",
        state.status()
    );
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::Stuck,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message).effects(vec![Effect::SaveEscalation(report)]))
}

fn resumed(state: &State, guidance: Option<String>) -> Result<Next, Refusal> {
    let Phase::Halted { halt, resume } = &state.phase else {
        return Err(Refusal::Said(format!(
            "`resume` does not apply in state {}",
            state.status()
        )));
    };
    // A human answered: the attempts that unlocked the escape tools start again.
    let phase = match (**resume).clone() {
        Phase::Pr {
            pr,
            stage: PrStage::Debugging { attempts, pending },
        } => Phase::Pr {
            pr,
            stage: PrStage::Debugging {
                attempts: Attempts {
                    count: 0,
                    identical_failures: 0,
                    ..attempts
                },
                pending,
            },
        },
        Phase::Pr {
            pr,
            stage: PrStage::Replanning { context, .. },
        } => Phase::Pr {
            pr,
            stage: PrStage::Replanning {
                attempts: 0,
                context,
            },
        },
        // The human answered an exhausted review: the rounds start again (their numbers go
        // on, so feedback tasks keep distinct names).
        Phase::Pr {
            mut pr,
            stage: PrStage::CodeReview { review: stage },
        } => {
            pr.review.blocked_rounds = 0;
            let error = match stage {
                ReviewStage::Due { error } => error,
                ReviewStage::AwaitingApproval { .. } | ReviewStage::MustEscalate { .. } => None,
            };
            Phase::Pr {
                pr,
                stage: PrStage::CodeReview {
                    review: ReviewStage::Due { error },
                },
            }
        }
        other @ (Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::ExecutingTdd { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. }) => other,
    };
    let body = match &guidance {
        Some(g) => format!(
            "resumed after: {}\n\nGuidance from a human:\n{g}",
            halt.message
        ),
        None => format!("resumed after: {}", halt.message),
    };
    let next = State {
        phase,
        guidance,
        ..state.clone()
    };
    Ok(Next::new(next, body).effects(vec![Effect::DropEscalation]))
}

fn review_started(state: &State, max_rounds: u32) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::ExecutingTdd { .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let blocked = pr.review.blocked_rounds;
    let (stage, body) = if blocked >= max_rounds {
        let reason = format!(
            "{blocked} review round{} ended with blocking findings, the most review.max_rounds allows",
            if blocked == 1 { "" } else { "s" }
        );
        let body = format!("every step is DONE, but {reason}: the agent must escalate");
        (ReviewStage::MustEscalate { reason }, body)
    } else {
        let body = format!(
            "every step is DONE: code review round {}",
            pr.review.round.saturating_add(1)
        );
        (ReviewStage::Due { error: None }, body)
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::CodeReview { review: stage },
    };
    // The PR is read as a whole from here on: store the plan as it stands.
    Ok(Next::new(with_phase(state, phase), body).plan(PlanChange::Materialize))
}

fn review_completed(
    state: &State,
    plan: Option<&Plan>,
    record: ReviewRecord,
    human: bool,
) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::CodeReview { .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let blocking = record.blocking();
    let mut pr = pr.clone();
    pr.review.round = record.round;
    pr.review.last = Some(ReviewSummary {
        round: record.round,
        ran: record.ran,
        findings: record.findings.len(),
        blocking: blocking.len(),
    });
    let effects = vec![Effect::SaveReview(record.clone())];
    if !blocking.is_empty() {
        let mut new_plan = plan.ok_or(Refusal::NoPlan)?.clone();
        new_plan.tasks.push(feedback_task(record.round, &blocking));
        pr.review.blocked_rounds = pr.review.blocked_rounds.saturating_add(1);
        let body = format!(
            "review round {}: {} blocking finding{} sent back as a new task\n\n{}",
            record.round,
            blocking.len(),
            if blocking.len() == 1 { "" } else { "s" },
            blocking
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        let phase = Phase::Pr {
            pr,
            stage: PrStage::ExecutingTdd { pending: None },
        };
        return Ok(Next::new(with_phase(state, phase), body)
            .plan(PlanChange::Replace(new_plan))
            .effects(effects));
    }
    let what = if record.ran {
        format!(
            "review round {}: no blocking findings ({} noted)",
            record.round,
            record.findings.len()
        )
    } else {
        "no review command is configured: nothing was reviewed automatically".to_string()
    };
    let (phase, body) = if human {
        let stage = ReviewStage::AwaitingApproval {
            round: record.round,
        };
        let body = format!("{what}; waiting for a human's approval");
        (
            Phase::Pr {
                pr,
                stage: PrStage::CodeReview { review: stage },
            },
            body,
        )
    } else {
        (
            Phase::Pr {
                pr,
                stage: PrStage::AwaitingFinalization,
            },
            what,
        )
    };
    Ok(Next::new(with_phase(state, phase), body).effects(effects))
}

fn review_failed(state: &State, error: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::CodeReview {
            review: ReviewStage::Due { .. },
        },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::CodeReview {
            review: ReviewStage::Due {
                error: Some(error.clone()),
            },
        },
    };
    let body = format!("the review could not run: {error}");
    Ok(Next::new(with_phase(state, phase), body))
}

/// The PR of a review that waits for a human's approval.
fn awaiting_approval(state: &State) -> Result<&Pr, Rejection> {
    match &state.phase {
        Phase::Pr {
            pr,
            stage:
                PrStage::CodeReview {
                    review: ReviewStage::AwaitingApproval { .. },
                },
        } => Ok(pr),
        _ => {
            let status = state.status();
            Err(Rejection::wrong_state(
                status,
                format!("nothing waits for a human's approval in state {status}"),
                "`git orchestrate status` shows where the workflow stands.",
            ))
        }
    }
}

/// `approve` and `reject` are for a review that waits for a human.
pub fn check_approval(state: &State) -> Result<(), Rejection> {
    awaiting_approval(state).map(|_| ())
}

fn approved(state: &State) -> Result<Next, Refusal> {
    let pr = awaiting_approval(state).map_err(Refusal::Rejected)?;
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::AwaitingFinalization,
    };
    Ok(Next::new(
        with_phase(state, phase),
        "a human approved the PR".into(),
    ))
}

fn rejected(
    state: &State,
    plan: Option<&Plan>,
    comment: String,
    by: Option<Human>,
) -> Result<Next, Refusal> {
    let pr = awaiting_approval(state).map_err(Refusal::Rejected)?;
    let mut new_plan = plan.ok_or(Refusal::NoPlan)?.clone();
    let finding = Finding {
        priority: Priority::P1,
        file: None,
        line: None,
        issue: comment.clone(),
        suggestion: None,
        dimensions: Vec::new(),
        human: true,
        answered: by,
    };
    new_plan
        .tasks
        .push(feedback_task(pr.review.round, &[finding]));
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::ExecutingTdd { pending: None },
    };
    let body = format!("a human rejected the PR:\n{comment}");
    Ok(Next::new(with_phase(state, phase), body).plan(PlanChange::Replace(new_plan)))
}

fn squashed(state: &State, commit: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::AwaitingFinalization,
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let body = format!("squashed into {commit}");
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::FinalizeComplete {
            final_commit: commit,
        },
    };
    Ok(Next::new(with_phase(state, phase), body))
}

fn final_check_refused(state: &State, reason: String) -> Result<Next, Refusal> {
    if state.status() != Status::AwaitingFinalization {
        return Err(Refusal::WrongState);
    }
    Ok(Next::new(state.clone(), format!("FAILURE: {reason}"))
        .effects(vec![Effect::Reply(Verdict::Failure)]))
}

fn master_plan_updated(state: &State, commit: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::FinalizeComplete { final_commit },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let body = format!("the master plan marks the PR done, in {commit}");
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::PlanUpdated {
            finalized: Finalized {
                final_commit: final_commit.clone(),
                plan_commit: commit,
            },
        },
    };
    Ok(Next::new(with_phase(state, phase), body))
}

fn merge_started(state: &State) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::PlanUpdated { finalized },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::MergingBranch {
            finalized: finalized.clone(),
            blocked: None,
        },
    };
    Ok(Next::new(with_phase(state, phase), "merging".into()))
}

fn merged(state: &State, branch: &str, main: Option<String>) -> Result<Next, Refusal> {
    let after_conflict = match &state.phase {
        Phase::Pr {
            stage: PrStage::MergingBranch { .. },
            ..
        } => false,
        Phase::Halted { halt, .. } => match halt.reason {
            HaltReason::MergeConflict => true,
            HaltReason::Escalated | HaltReason::Stuck => return Err(Refusal::WrongState),
        },
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::ExecutingTdd { .. }
                | PrStage::Debugging { .. }
                | PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. },
            ..
        } => return Err(Refusal::WrongState),
    };
    let body = if after_conflict {
        format!("{branch} was merged by a human after a conflict; the branch is cleaned up")
    } else {
        format!("merged {branch} and deleted it")
    };
    let next = State {
        extra: state.extra.clone(),
        main_tip: main.or_else(|| state.main_tip.clone()),
        ..State::new(state.main_branch.clone())
    };
    Ok(Next::new(next, body)
        .plan(PlanChange::Drop)
        .effects(vec![Effect::DropPrRecords]))
}

fn merge_blocked(state: &State, reason: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::MergingBranch { finalized, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::MergingBranch {
            finalized: finalized.clone(),
            blocked: Some(reason.clone()),
        },
    };
    Ok(Next::new(with_phase(state, phase), reason))
}

fn merge_conflicted(state: &State, message: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        stage: PrStage::MergingBranch { .. },
        ..
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::MergeConflict,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message))
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
    match &state.phase {
        Phase::Pr {
            stage: PrStage::ExecutingTdd { pending, .. },
            ..
        }
        | Phase::Pr {
            stage: PrStage::Debugging { pending, .. },
            ..
        } => Ok(match pending {
            Some(TddPending::Checkpoint {
                step, description, ..
            }) => Some(OwedCheckpoint {
                step: *step,
                description: description.clone(),
            }),
            Some(TddPending::Analysis(_)) | None => None,
        }),
        Phase::Pr {
            stage: PrStage::AwaitingFinalization,
            ..
        } => Ok(None),
        Phase::Initializing | Phase::CreatingBranch { .. } => refuse("there is no PR branch yet"),
        Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. } => {
            refuse("checkpoints are commits on the PR branch while its steps are worked on")
        }
    }
}

/// States an agent may escalate from, once unlocked: every state in which it can be stuck
/// with no command of its own that leads out. PLAN_UPDATED is left by `get-task` itself, and
/// HALTED already waits for a human.
const ESCALATABLE: &[Status] = &[
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
    let attempts = match &state.phase {
        Phase::Pr {
            stage: PrStage::Debugging { attempts, .. },
            ..
        } => attempts.count,
        // Nothing has failed yet: locked, and the message says how far from unlocking.
        Phase::Pr {
            stage: PrStage::ExecutingTdd { .. },
            ..
        } => 0,
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. } => {
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

#[cfg(test)]
mod tests {
    use super::*;

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
                pin: Some(pin("m0")),
            },
        )
        .unwrap();
        assert_eq!(tip(&t.state), Some("m0".into()), "the first pin");
        let accounted = creating.edit(|w| w.main_tip = Some("m1".into()));
        let t = transition(
            &accounted,
            Some(&plan()),
            Event::BranchReady {
                base: None,
                pin: Some(pin("m2")),
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
        assert_eq!(tip(&merged(Some("m3"))), Some("m3".into()), "its own merge");
        assert_eq!(
            tip(&merged(None)),
            Some("m1".into()),
            "a merge that names no commit"
        );

        for status in [Initializing, ExecutingTdd] {
            let t = transition(
                &state(status).edit(|w| w.main_tip = Some("m1".into())),
                None,
                Event::Repinned { pin: pin("m4") },
            )
            .unwrap();
            assert_eq!(tip(&t.state), Some("m4".into()), "{status:?}: a repin");
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
                not_run: not_run.map(str::to_string),
            });
            let t = transition(&at_green, Some(&plan()), Event::TestRan(run)).unwrap();
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
            verified_tree: passed.then(|| "tree-oid".to_string()),
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
             Event::CheckpointRecorded { commit: "abc".into(), subject: "checkpoint: 1.2".into(), tree: "t".into(), },
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
                commit: "c0ffee".into(),
                subject: "checkpoint: 1.2".into(),
                tree: "tree-oid".into(),
            },
        )
        .unwrap();
        assert_eq!(
            t2.state.pr().and_then(|pr| pr.last_checkpoint.as_deref()),
            Some("c0ffee")
        );
        assert_eq!(t2.state.pending(), None);
        let cache = PreflightCache {
            tree: "tree-oid".into(),
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
            Some("tree-oid"),
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
        let creating_unnamed =
            State::from_json(br#"{"schema":1,"status":"CREATING_BRANCH"}"#).unwrap();
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
             Event::Replanned { plan: plan_done(1), new_tasks: 2, summary: "smaller".into() },
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

    #[test]
    fn what_the_escape_events_leave_in_the_state() {
        let t = transition(
            &debugging(6),
            None,
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
            None,
            Event::Replanned {
                plan: plan(),
                new_tasks: 2,
                summary: "s".into(),
            },
        )
        .unwrap();
        assert_eq!(
            (t.state.replan_context(), t.state.last_error()),
            (None, None)
        );
        assert_eq!(t.plan, PlanChange::Replace(plan()));

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
            ("squashed", state(AwaitingFinalization), Event::Squashed { commit: "c1".into() }, FinalizeComplete, None, 1),
            ("master plan updated", state(FinalizeComplete), Event::MasterPlanUpdated { commit: "c2".into() }, PlanUpdated, None, 1),
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
                commit: "c2".into(),
            },
        )
        .unwrap();
        assert_eq!(
            t.state.plan_commit(),
            Some("c2"),
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
}
