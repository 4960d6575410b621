//! Where a workflow is, with exactly the data valid there: the [`Phase`], a PR's
//! [`PrStage`], and what the PR carries from its first step to its merge.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::workflow::plan::StepId;
use crate::workflow::status::Status;

use super::pending::{Pending, ReviewStage, ReviewSummary, TddPending};
use super::records::{LastRun, PreflightCache};

/// What a scope reduction saved for the re-plan (docs/states.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplanContext {
    /// The task being replaced.
    pub original_task: String,
    /// The step that kept failing; its task is the one to replace.
    pub step: StepId,
    /// The last failure's output tail.
    pub error: String,
    /// Untracked files the revert left in place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HaltReason {
    /// The agent escalated for external help.
    Escalated,
    /// The automated merge hit a conflict.
    MergeConflict,
    /// `git orchestrate run` gave up on the agent: turns in a row without progress.
    Stuck,
    /// The agent reported that the task contradicts its test (`submit-work
    /// --contradiction`): its honest way to stop, instead of bending the test or the code.
    Contradiction,
}

/// Why the workflow waits for a human.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    pub reason: HaltReason,
    pub message: String,
}

/// The failed attempts of the DEBUGGING loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempts {
    /// Failed attempts since debugging started (or a human answered a halt).
    pub count: u32,
    /// How many failures in a row came back with the same output as the one before.
    pub identical_failures: u32,
    /// The last failure's output tail.
    pub error: String,
}

/// The review rounds of a PR.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewProgress {
    /// The last round that ran (0: none yet).
    pub round: u32,
    /// Rounds that sent work back with blocking findings, since the review started or a human
    /// resumed it: `review.max_rounds` limits these, not a human's rejections.
    pub blocked_rounds: u32,
    pub last: Option<ReviewSummary>,
}

/// What the workflow knows about the PR while its branch exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pr {
    pub branch: String,
    /// Where the PR branch left the main branch: the search for checkpoint commits stops here.
    pub base: Option<String>,
    /// The last checkpoint commit recorded.
    pub last_checkpoint: Option<String>,
    /// The tree of the working tree when it last passed verification (test and preflight):
    /// the squashed commit must have exactly this tree (docs/states.md).
    pub verified_tree: Option<String>,
    /// The last passing preflight run and the tree it verified: a checkpoint of exactly this
    /// tree under exactly these gates needs no second run, from the `checkpoint` command or
    /// the `commit-msg` hook.
    pub preflight_cache: Option<PreflightCache>,
    pub last_run: Option<LastRun>,
    pub review: ReviewProgress,
    /// The command that failed as intended at the current task's RED step: it must pass at
    /// the task's GREEN step (docs/integrity.md), and is dropped once it has.
    pub red_test: Option<RedTest>,
    /// The main-branch commit whose gates this PR is verified under (docs/integrity.md).
    pub pin: Option<Pin>,
}

/// Where a PR's gates come from: main as it was when the PR began, until a human repins.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The main-branch commit.
    pub commit: String,
    /// The blob of its `.orchestrate.toml`; `None` when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// A task's RED test, to be run again when the task's GREEN step passes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedTest {
    /// The task's index in the plan (0-based; step ids count from 1).
    pub task: usize,
    pub command: String,
    /// The tree the RED run was accepted on; `paths`, as it holds them, are the test: they
    /// are put back for every later run of it (docs/integrity.md, "The RED test is pinned").
    /// `None` for a RED accepted before tests were pinned.
    #[serde(rename = "red_tree", default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The paths the RED step changed from the task's start that are the test: test files
    /// (`[gates] test_paths`) and files the step created.
    #[serde(rename = "red_paths", default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The other files the step changed: code files that existed before it, holding the
    /// test's lines beside code (a Rust `#[cfg(test)]` module). Put in for the run on the
    /// PR's base only; the code around them is the later steps' to change.
    #[serde(rename = "red_shared", default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// The tests, by id, that failed in the RED run's per-test report; empty when its runner
    /// reports nothing per test (docs/integrity.md, "Per-test evidence").
    #[serde(rename = "red_tests", default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// The file (or files) the RED run's report named for each of `tests`: the GREEN step's
    /// run must report it passing from one of them. Empty where the runner names no file,
    /// or the chain did not record it.
    #[serde(
        rename = "red_test_files",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub test_files: BTreeMap<String, Vec<String>>,
    /// The runner's hook files on the test's way (pytest's `conftest.py` files, [`RedPin`]'s
    /// `hooks`): put back as `tree` has them, absent where it has none.
    #[serde(rename = "red_hooks", default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}

/// What a failing RED run pins as its test: the tree it left and the paths its step changed
/// from the task's start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedPin {
    pub tree: String,
    /// The tree the task began at, before this step (its previous step's checkpoint, or where
    /// the branch left main): what the RED step wrote is counted from it, and the code a
    /// task wrote runs from it to the next task's (docs/integrity.md, "Adequacy by
    /// mutation"). `None` in a pin recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The test: test files and files the step created; put back for every later run.
    pub paths: Vec<String>,
    /// Code files that existed before the step and gained the test's lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// The tests, by id, its per-test report says failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// The file (or files) its report named for each of `tests` (cargo's `Running
    /// tests/x.rs` line, pytest's `file=`, jest's file): a test of the same id from another
    /// file is another test. Empty where the runner names none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub test_files: BTreeMap<String, Vec<String>>,
    /// The runner's own hook files on the way to the test (pytest's `conftest.py` in each
    /// directory from the repository's root down to a pinned test file's), whether `tree`
    /// has them or not: code the runner loads around the test is part of it. The GREEN
    /// step's run has them as `tree` has them (absent where it has none); the final check's
    /// and `attest`'s, as the latest RED step that changed one left it, else as the PR's base
    /// has it (docs/integrity.md, "Per-test evidence").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}

/// What a failing RED run is: a test that failed, pinned; or no test that failed, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RedOutcome {
    Pinned(RedPin),
    NotATest(String),
}

impl Pr {
    pub fn new(branch: String, base: Option<String>) -> Pr {
        Pr {
            branch,
            base,
            last_checkpoint: None,
            verified_tree: None,
            preflight_cache: None,
            last_run: None,
            review: ReviewProgress::default(),
            red_test: None,
            pin: None,
        }
    }
}

/// The two commits finalization checked: the squash, and the master-plan update on top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finalized {
    /// The PR's single squashed commit.
    pub final_commit: String,
    /// The master-plan commit that was checked: the branch is only merged while its tip is
    /// still this commit, so nothing unchecked rides along.
    pub plan_commit: String,
}

/// Where the workflow is, with exactly the data valid there: no PR yet, a PR at a stage, or
/// halted on the way. A new state is a variant here or in [`PrStage`], and the compiler then
/// lists every match to update.
// One phase per state, never in a collection: boxing the PR would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No PR is active (a submitted plan may wait to be adopted).
    Initializing,
    /// A plan was accepted; its branch is to be created. `blocked`: why the last try failed.
    CreatingBranch {
        branch: String,
        blocked: Option<String>,
    },
    /// The PR's branch exists: what the workflow knows of the PR, and where it is.
    Pr { pr: Pr, stage: PrStage },
    /// Waiting for a human; `resume` returns to `resume`, as it was.
    Halted { halt: Halt, resume: Box<Phase> },
}

/// Where a PR is, from its first step to its merge, with the data valid there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrStage {
    ExecutingTdd {
        pending: Option<TddPending>,
    },
    Debugging {
        attempts: Attempts,
        pending: Option<TddPending>,
    },
    /// A scope reduction reverted the work; the agent re-plans the failed task.
    Replanning {
        /// The failed attempts that led here, for the escalation message.
        attempts: u32,
        context: ReplanContext,
    },
    CodeReview {
        review: ReviewStage,
    },
    AwaitingFinalization,
    FinalizeComplete {
        final_commit: String,
    },
    PlanUpdated {
        finalized: Finalized,
    },
    MergingBranch {
        finalized: Finalized,
        /// Why the last merge could not start.
        blocked: Option<String>,
    },
}

impl PrStage {
    pub fn status(&self) -> Status {
        match self {
            PrStage::ExecutingTdd { .. } => Status::ExecutingTdd,
            PrStage::Debugging { .. } => Status::Debugging,
            PrStage::Replanning { .. } => Status::Replanning,
            PrStage::CodeReview { .. } => Status::CodeReview,
            PrStage::AwaitingFinalization => Status::AwaitingFinalization,
            PrStage::FinalizeComplete { .. } => Status::FinalizeComplete,
            PrStage::PlanUpdated { .. } => Status::PlanUpdated,
            PrStage::MergingBranch { .. } => Status::MergingBranch,
        }
    }

    /// The TDD loop's data, in EXECUTING_TDD and DEBUGGING: the failed attempts (DEBUGGING
    /// only) and what waits before the next step. `None` in every other stage.
    pub fn tdd(&self) -> Option<(Option<&Attempts>, &Option<TddPending>)> {
        match self {
            PrStage::ExecutingTdd { pending } => Some((None, pending)),
            PrStage::Debugging { attempts, pending } => Some((Some(attempts), pending)),
            PrStage::Replanning { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization
            | PrStage::FinalizeComplete { .. }
            | PrStage::PlanUpdated { .. }
            | PrStage::MergingBranch { .. } => None,
        }
    }

    /// What waits to be resolved, in the wire's terms.
    fn pending(&self) -> Option<Pending> {
        match self {
            PrStage::ExecutingTdd { pending } | PrStage::Debugging { pending, .. } => {
                pending.clone().map(Pending::from)
            }
            PrStage::CodeReview { review } => match review {
                ReviewStage::Due { .. } => None,
                ReviewStage::AwaitingApproval { round } => {
                    Some(Pending::Approval { round: *round })
                }
                ReviewStage::MustEscalate { reason } => Some(Pending::Escalation {
                    reason: reason.clone(),
                }),
            },
            PrStage::Replanning { .. }
            | PrStage::AwaitingFinalization
            | PrStage::FinalizeComplete { .. }
            | PrStage::PlanUpdated { .. }
            | PrStage::MergingBranch { .. } => None,
        }
    }

    /// The last problem the stage recorded: a failing output, a blocked merge, a review that
    /// could not run.
    fn last_error(&self) -> Option<&str> {
        match self {
            PrStage::MergingBranch { blocked, .. } => blocked.as_deref(),
            PrStage::Debugging { attempts, .. } => Some(&attempts.error),
            PrStage::Replanning { context, .. } => Some(&context.error),
            PrStage::CodeReview {
                review: ReviewStage::Due { error },
            } => error.as_deref(),
            PrStage::ExecutingTdd { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization
            | PrStage::FinalizeComplete { .. }
            | PrStage::PlanUpdated { .. } => None,
        }
    }

    /// Failed attempts counted toward the escape tools (docs/states.md), and how many of the
    /// last failures were identical.
    fn attempts(&self) -> (u32, u32) {
        match self {
            PrStage::Debugging { attempts, .. } => (attempts.count, attempts.identical_failures),
            PrStage::Replanning { attempts, .. } => (*attempts, 0),
            PrStage::ExecutingTdd { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization
            | PrStage::FinalizeComplete { .. }
            | PrStage::PlanUpdated { .. }
            | PrStage::MergingBranch { .. } => (0, 0),
        }
    }

    /// The squashed commit and the checked master-plan commit, as far as finalization got.
    fn finalized(&self) -> (Option<&str>, Option<&str>) {
        match self {
            PrStage::FinalizeComplete { final_commit } => (Some(final_commit), None),
            PrStage::PlanUpdated { finalized } | PrStage::MergingBranch { finalized, .. } => {
                (Some(&finalized.final_commit), Some(&finalized.plan_commit))
            }
            PrStage::ExecutingTdd { .. }
            | PrStage::Debugging { .. }
            | PrStage::Replanning { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization => (None, None),
        }
    }
}

impl Phase {
    pub fn status(&self) -> Status {
        match self {
            Phase::Initializing => Status::Initializing,
            Phase::CreatingBranch { .. } => Status::CreatingBranch,
            Phase::Pr { stage, .. } => stage.status(),
            Phase::Halted { .. } => Status::Halted,
        }
    }

    /// The phase work goes on in: the one a halt returns to, or this one.
    pub fn resumed(&self) -> &Phase {
        match self {
            Phase::Halted { resume, .. } => resume.resumed(),
            other => other,
        }
    }

    /// The PR's data, also while halted.
    pub fn pr(&self) -> Option<&Pr> {
        match self.resumed() {
            Phase::Pr { pr, .. } => Some(pr),
            Phase::Initializing | Phase::CreatingBranch { .. } | Phase::Halted { .. } => None,
        }
    }

    pub(super) fn pr_mut(&mut self) -> Option<&mut Pr> {
        match self {
            Phase::Initializing | Phase::CreatingBranch { .. } => None,
            Phase::Pr { pr, .. } => Some(pr),
            Phase::Halted { resume, .. } => resume.pr_mut(),
        }
    }

    /// The PR's stage, also while halted.
    pub fn stage(&self) -> Option<&PrStage> {
        match self.resumed() {
            Phase::Pr { stage, .. } => Some(stage),
            Phase::Initializing | Phase::CreatingBranch { .. } | Phase::Halted { .. } => None,
        }
    }

    /// What waits to be resolved, in the wire's terms.
    pub fn pending(&self) -> Option<Pending> {
        self.stage().and_then(PrStage::pending)
    }

    /// The last problem the phase recorded: a failing output, a blocked branch or merge, a
    /// review that could not run.
    pub fn last_error(&self) -> Option<&str> {
        match self.resumed() {
            Phase::CreatingBranch { blocked, .. } => blocked.as_deref(),
            Phase::Pr { stage, .. } => stage.last_error(),
            Phase::Initializing | Phase::Halted { .. } => None,
        }
    }

    /// Failed attempts counted toward the escape tools (docs/states.md).
    pub fn attempts(&self) -> u32 {
        self.stage().map_or(0, |stage| stage.attempts().0)
    }

    pub fn identical_failures(&self) -> u32 {
        self.stage().map_or(0, |stage| stage.attempts().1)
    }

    pub(super) fn finalized(&self) -> (Option<&str>, Option<&str>) {
        self.stage().map_or((None, None), PrStage::finalized)
    }
}
