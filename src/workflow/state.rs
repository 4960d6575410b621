//! `state.json`: the orchestration state of one workflow. In memory it is a typed [`Phase`]
//! that owns exactly the data valid in it; on disk it is the flat schema-1 object of
//! docs/refs.md (`StateWire`), which every version so far has written.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::plan::{StepId, StepType};
pub use super::status::Status;

/// The only `state.json` schema this version reads and writes.
pub const STATE_SCHEMA: u32 = 1;

/// What the next submit or get-task must resolve before the workflow moves on, as recorded
/// in `state.json` and shown by `status`. In memory it lives in the phase it belongs to
/// ([`TddPending`], [`ReviewStage`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    /// A RED test failed as expected; the agent must say whether it failed for the right reason.
    Analysis {
        step: StepId,
        command: String,
        exit: ExitRecord,
        /// The last lines of the output the agent has to judge (full text in `output.log`).
        output_tail: String,
        /// The tree the RED run left, and the paths the step changed from the task's start:
        /// what is pinned as its test when the analysis says SUCCESS (docs/integrity.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        red_tree: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        red_paths: Vec<String>,
        /// Files the step changed that existed before it and are not tests (code beside an
        /// inline test): the RED test's lines are there, but the file is not pinned.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        red_shared: Vec<String>,
        /// A line of the output that shows the test itself could not be read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        syntax_error: Option<String>,
    },
    /// A GREEN or REFACTOR step passed; a checkpoint commit must be made before the next step.
    Checkpoint {
        step: StepId,
        #[serde(rename = "type")]
        step_type: StepType,
        description: String,
    },
    /// The automated review passed; a human must `approve` or `reject`.
    Approval { round: u32 },
    /// The review rounds are used up; the agent must escalate (docs/states.md).
    Escalation { reason: String },
}

impl Pending {
    pub fn kind(&self) -> &'static str {
        match self {
            Pending::Analysis { .. } => "analysis",
            Pending::Checkpoint { .. } => "checkpoint",
            Pending::Approval { .. } => "approval",
            Pending::Escalation { .. } => "escalation",
        }
    }
}

/// What waits inside the TDD loop before the next step can be submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TddPending {
    Analysis {
        step: StepId,
        command: String,
        exit: ExitRecord,
        output_tail: String,
        red_tree: Option<String>,
        red_paths: Vec<String>,
        red_shared: Vec<String>,
        syntax_error: Option<String>,
    },
    Checkpoint {
        step: StepId,
        step_type: StepType,
        description: String,
    },
}

impl From<TddPending> for Pending {
    fn from(p: TddPending) -> Pending {
        match p {
            TddPending::Analysis {
                step,
                command,
                exit,
                output_tail,
                red_tree,
                red_paths,
                red_shared,
                syntax_error,
            } => Pending::Analysis {
                step,
                command,
                exit,
                output_tail,
                red_tree,
                red_paths,
                red_shared,
                syntax_error,
            },
            TddPending::Checkpoint {
                step,
                step_type,
                description,
            } => Pending::Checkpoint {
                step,
                step_type,
                description,
            },
        }
    }
}

/// Where the code review stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReviewStage {
    /// The next round is to run; `error` says why the last attempt could not.
    Due { error: Option<String> },
    /// The review passed; a human must `approve` or `reject`.
    AwaitingApproval { round: u32 },
    /// The rounds are used up; the agent must escalate.
    MustEscalate { reason: String },
}

/// The outcome of the last code review, for `status` and the briefings (the findings are in
/// `review.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSummary {
    pub round: u32,
    /// False when no review command is configured.
    pub ran: bool,
    pub findings: usize,
    pub blocking: usize,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ExitWire", try_from = "ExitWire")]
pub enum ExitRecord {
    Code(i32),
    Signal(i32),
    TimedOut { after_ms: u64 },
}

/// `{"code": 0}`, `{"signal": 9}` or `{"timeout_ms": 600000}`.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct ExitWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
}

impl From<ExitRecord> for ExitWire {
    fn from(e: ExitRecord) -> ExitWire {
        let mut wire = ExitWire {
            code: None,
            signal: None,
            timeout_ms: None,
        };
        match e {
            ExitRecord::Code(code) => wire.code = Some(code),
            ExitRecord::Signal(signal) => wire.signal = Some(signal),
            ExitRecord::TimedOut { after_ms } => wire.timeout_ms = Some(after_ms),
        }
        wire
    }
}

impl TryFrom<ExitWire> for ExitRecord {
    type Error = &'static str;

    fn try_from(w: ExitWire) -> Result<ExitRecord, Self::Error> {
        match (w.code, w.signal, w.timeout_ms) {
            (Some(code), None, None) => Ok(ExitRecord::Code(code)),
            (None, Some(signal), None) => Ok(ExitRecord::Signal(signal)),
            (None, None, Some(after_ms)) => Ok(ExitRecord::TimedOut { after_ms }),
            _ => Err("an exit record holds exactly one of `code`, `signal` and `timeout_ms`"),
        }
    }
}

impl ExitRecord {
    pub fn code(code: i32) -> Self {
        ExitRecord::Code(code)
    }

    pub fn signal(signal: i32) -> Self {
        ExitRecord::Signal(signal)
    }

    pub fn timed_out(after_ms: u64) -> Self {
        ExitRecord::TimedOut { after_ms }
    }

    pub fn success(&self) -> bool {
        *self == ExitRecord::Code(0)
    }

    /// The exit code, when the command exited on its own.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            ExitRecord::Code(code) => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for ExitRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitRecord::Code(code) => write!(f, "exit {code}"),
            ExitRecord::Signal(signal) => write!(f, "killed by signal {signal}"),
            ExitRecord::TimedOut { after_ms } => {
                write!(f, "killed after the {} timeout", format_ms(*after_ms))
            }
        }
    }
}

/// `1500` → `1.5s`, `600000` → `10m`: durations as a person reads them.
pub fn format_ms(ms: u64) -> String {
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// One preflight gate's result, as recorded in state and notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateRecord {
    pub name: String,
    pub exit: ExitRecord,
    pub ms: u64,
    /// The gate's command is the test command that had just passed on the same tree, in the
    /// same directory and environment, within the gate's timeout: that run is the gate's, and
    /// it was not run again (`exit` and `ms` are the test's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
}

/// The preflight run that followed a passing test: every gate that ran, in config order
/// (a run stops at the first failure, so it passed exactly when every recorded gate did).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "PreflightWire", from = "PreflightWire")]
pub struct PreflightRecord {
    /// Empty when no gates are configured: then the pass is vacuous and every report says so.
    pub gates: Vec<GateRecord>,
}

impl PreflightRecord {
    pub fn passed(&self) -> bool {
        self.gates.iter().all(|g| g.exit.success())
    }
}

/// `passed` is written for readers of `state.json`; it is recomputed, never trusted, on read.
#[derive(Clone, Serialize, Deserialize)]
struct PreflightWire {
    passed: bool,
    gates: Vec<GateRecord>,
}

impl From<PreflightRecord> for PreflightWire {
    fn from(r: PreflightRecord) -> PreflightWire {
        PreflightWire {
            passed: r.passed(),
            gates: r.gates,
        }
    }
}

impl From<PreflightWire> for PreflightRecord {
    fn from(w: PreflightWire) -> PreflightRecord {
        PreflightRecord { gates: w.gates }
    }
}

/// A passing preflight run, keyed by what it verified: the tree and the gate configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightCache {
    pub tree: String,
    /// [`crate::config::Config::preflight_key`] of the gates that ran.
    pub key: String,
    pub gates: Vec<GateRecord>,
}

impl PreflightCache {
    /// True when this run verified `tree` under the gates `key` identifies.
    pub fn covers(&self, tree: &str, key: &str) -> bool {
        self.tree == tree && self.key == key
    }
}

/// The verdict `submit-work` returns (the agent guide's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Success,
    Failure,
    NeedsAnalysis,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Success => "SUCCESS",
            Verdict::Failure => "FAILURE",
            Verdict::NeedsAnalysis => "NEEDS_ANALYSIS",
        }
    }
}

/// The last verification `submit-work` performed, for `status` and the briefings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    pub step: StepId,
    pub command: String,
    pub expectation: super::Expectation,
    pub exit: ExitRecord,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<PreflightRecord>,
}

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
}

/// What a failing RED run pins as its test: the tree it left and the paths its step changed
/// from the task's start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedPin {
    pub tree: String,
    /// The test: test files and files the step created; put back for every later run.
    pub paths: Vec<String>,
    /// Code files that existed before the step and gained the test's lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
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

    fn pr_mut(&mut self) -> Option<&mut Pr> {
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

    fn finalized(&self) -> (Option<&str>, Option<&str>) {
        self.stage().map_or((None, None), PrStage::finalized)
    }
}

/// One workflow's state: the phase, and what outlives every PR.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "StateWire", try_from = "StateWire")]
pub struct State {
    /// The branch PRs start from and merge into, fixed when the workflow is created so that
    /// an agent cannot redirect the protected config (docs/config.md) by editing its own copy.
    pub main_branch: Option<String>,
    pub phase: Phase,
    /// A human's guidance from `resume`, shown once in the next briefing.
    pub guidance: Option<String>,
    /// In INITIALIZING: the agent said no PR of the master plan is left.
    pub idle: Option<Idle>,
    /// The main branch's tip as this workflow accounts for it: where it pinned its first PR,
    /// its last merge, or a human's `repin`. First-parent commits on main after it that no
    /// workflow merged moved main outside the workflow (docs/integrity.md).
    pub main_tip: Option<String>,
    /// Fields written by a newer version are carried through unchanged, never dropped.
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// `submit-work --no-pr-left`: the master plan the agent judged. It holds only while the
/// main branch's master plan is still this blob; a commit that changes it ends it by itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Idle {
    /// The blob of `<main>:<master_plan>` then; none when there was no such file.
    pub master_plan: Option<String>,
}

impl State {
    pub fn new(main_branch: Option<String>) -> Self {
        State {
            main_branch,
            phase: Phase::Initializing,
            guidance: None,
            idle: None,
            main_tip: None,
            extra: BTreeMap::new(),
        }
    }

    pub fn status(&self) -> Status {
        self.phase.status()
    }

    pub fn pr(&self) -> Option<&Pr> {
        self.phase.pr()
    }

    pub fn pr_mut(&mut self) -> Option<&mut Pr> {
        self.phase.pr_mut()
    }

    /// The PR branch, once a plan named it.
    pub fn branch(&self) -> Option<&str> {
        match self.phase.resumed() {
            Phase::CreatingBranch { branch, .. }
            | Phase::Pr {
                pr: Pr { branch, .. },
                ..
            } => Some(branch),
            Phase::Initializing | Phase::Halted { .. } => None,
        }
    }

    pub fn pending(&self) -> Option<Pending> {
        self.phase.pending()
    }

    /// The step whose checkpoint the workflow waits for, when it waits for one (not while
    /// halted: a human answers first).
    pub fn owed_checkpoint(&self) -> Option<StepId> {
        let Phase::Pr { stage, .. } = &self.phase else {
            return None;
        };
        match stage {
            PrStage::ExecutingTdd { pending } | PrStage::Debugging { pending, .. } => match pending
            {
                Some(TddPending::Checkpoint { step, .. }) => Some(*step),
                Some(TddPending::Analysis { .. }) | None => None,
            },
            PrStage::Replanning { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization
            | PrStage::FinalizeComplete { .. }
            | PrStage::PlanUpdated { .. }
            | PrStage::MergingBranch { .. } => None,
        }
    }

    /// True when only a human can move the workflow on: halted, or a review waiting for
    /// approval. The agent then has nothing to do (`get-task` exits 10).
    pub fn waits_for_human(&self) -> bool {
        match &self.phase {
            Phase::Halted { .. } => true,
            Phase::Pr {
                stage: PrStage::CodeReview { review },
                ..
            } => match review {
                ReviewStage::AwaitingApproval { .. } => true,
                ReviewStage::Due { .. } | ReviewStage::MustEscalate { .. } => false,
            },
            Phase::Initializing | Phase::CreatingBranch { .. } | Phase::Pr { .. } => false,
        }
    }

    pub fn last_error(&self) -> Option<&str> {
        self.phase.last_error()
    }

    pub fn attempts(&self) -> u32 {
        self.phase.attempts()
    }

    pub fn identical_failures(&self) -> u32 {
        self.phase.identical_failures()
    }

    /// The halt, with the status `resume` returns to.
    pub fn halt(&self) -> Option<HaltRecord> {
        match &self.phase {
            Phase::Halted { halt, resume } => Some(HaltRecord {
                reason: halt.reason,
                message: halt.message.clone(),
                resume_to: resume.status(),
            }),
            _ => None,
        }
    }

    pub fn replan_context(&self) -> Option<&ReplanContext> {
        match self.phase.stage()? {
            PrStage::Replanning { context, .. } => Some(context),
            _ => None,
        }
    }

    /// The RED test still to be run again at `step`, when `step` is its task's GREEN step
    /// (docs/integrity.md).
    pub fn red_test_due(&self, step: StepId, kind: StepType) -> Option<&RedTest> {
        self.pr()
            .and_then(|pr| pr.red_test.as_ref())
            .filter(|red| kind == StepType::Green && red.task == step.task)
    }

    pub fn final_commit(&self) -> Option<&str> {
        self.phase.finalized().0
    }

    pub fn plan_commit(&self) -> Option<&str> {
        self.phase.finalized().1
    }

    /// Parses `state.json` as read from a workflow ref. An unknown schema or status is an
    /// error, never a guess (docs/refs.md).
    pub fn from_json(bytes: &[u8]) -> Result<State, String> {
        State::try_from(State::wire_from_json(bytes)?)
    }

    /// Parses `state.json` into its wire form, checking the schema first.
    pub fn wire_from_json(bytes: &[u8]) -> Result<StateWire, String> {
        #[derive(Deserialize)]
        struct SchemaOnly {
            schema: Option<serde_json::Value>,
        }
        let probe: SchemaOnly =
            serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
        match probe.schema {
            Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(STATE_SCHEMA)) => {}
            Some(other) => {
                return Err(format!(
                    "schema {other} is not understood by this git-orchestrate (it reads schema {STATE_SCHEMA}); \
                     upgrade git-orchestrate"
                ));
            }
            None => return Err("the `schema` field is missing".to_string()),
        }
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("state serializes: plain data");
        out.push(b'\n');
        out
    }

    /// The state with its wire form edited: how tests build a state in any phase. Fields the
    /// phase needs and the edit left out get placeholders, so a test names only what it is
    /// about.
    #[cfg(test)]
    pub fn edit(self, f: impl FnOnce(&mut StateWire)) -> State {
        let mut wire = StateWire::from(self);
        f(&mut wire);
        let status = wire.halt.as_ref().map_or(wire.status, |h| h.resume_to);
        if status != Status::Initializing {
            wire.current_pr_branch
                .get_or_insert_with(|| "feat/add-numbers".into());
        }
        if wire.status == Status::Halted && wire.halt.is_none() {
            wire.halt = Some(HaltRecord {
                reason: HaltReason::Escalated,
                message: "halted".into(),
                resume_to: Status::ExecutingTdd,
            });
        }
        let status = wire.halt.as_ref().map_or(wire.status, |h| h.resume_to);
        if matches!(
            status,
            Status::FinalizeComplete | Status::PlanUpdated | Status::MergingBranch
        ) {
            wire.final_commit.get_or_insert_with(|| "final".into());
            wire.plan_commit.get_or_insert_with(|| "plan".into());
        }
        if status == Status::Replanning && wire.replan_context.is_none() {
            wire.replan_context = Some(ReplanContext {
                original_task: "add".into(),
                step: StepId::new(0, 1),
                error: wire.last_error.clone().unwrap_or_default(),
                untracked: Vec::new(),
            });
        }
        State::try_from(wire).expect("the edited state is valid")
    }
}

/// `halt` in `state.json`: why the workflow waits for a human, and where `resume` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HaltRecord {
    pub reason: HaltReason,
    pub message: String,
    pub resume_to: Status,
}

/// `state.json` as schema 1 spells it: one flat object whose fields each phase uses a subset
/// of (docs/refs.md). Field names and order are the format; [`State`] is built from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateWire {
    pub schema: u32,
    pub status: Status,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debug_attempt_counter: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_commit_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_tree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_review: Option<ReviewSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_pr_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub identical_failures: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub review_round: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_rounds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replan_context: Option<ReplanContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halt: Option<HaltRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<Idle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight_cache: Option<PreflightCache>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_test: Option<RedTest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_tip: Option<String>,
    /// The store's own record of the plan (docs/refs.md): progress since `pr.json` was
    /// stored, and a summary of it. Never part of [`State`]; the store reads and writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_progress: Option<serde_json::Value>,
    /// The plan summary cache of versions up to 0.2: read and dropped, so it never rides
    /// along in `extra`.
    #[serde(default, skip_serializing)]
    pub plan_summary: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    pub plan_blob: Option<serde_json::Value>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl StateWire {
    fn empty(status: Status) -> StateWire {
        StateWire {
            schema: STATE_SCHEMA,
            status,
            debug_attempt_counter: 0,
            last_commit_hash: None,
            verified_tree: None,
            final_commit: None,
            plan_commit: None,
            branch_base: None,
            last_review: None,
            current_pr_branch: None,
            main_branch: None,
            last_error: None,
            pending: None,
            identical_failures: 0,
            review_round: 0,
            blocked_rounds: 0,
            replan_context: None,
            halt: None,
            guidance: None,
            idle: None,
            last_run: None,
            preflight_cache: None,
            red_test: None,
            pin: None,
            main_tip: None,
            plan_progress: None,
            plan_summary: None,
            plan_blob: None,
            extra: BTreeMap::new(),
        }
    }

    /// The phase these fields describe at `status` (the resume target, inside a halt).
    fn phase_at(&self, status: Status) -> Result<Phase, String> {
        Ok(match status {
            Status::Initializing => Phase::Initializing,
            // A branch name is what CREATING_BRANCH is about: without one, the plan is adopted
            // again, as in INITIALIZING.
            Status::CreatingBranch => match &self.current_pr_branch {
                Some(branch) => Phase::CreatingBranch {
                    branch: branch.clone(),
                    blocked: self.last_error.clone(),
                },
                None => Phase::Initializing,
            },
            Status::ExecutingTdd
            | Status::Debugging
            | Status::Replanning
            | Status::CodeReview
            | Status::AwaitingFinalization
            | Status::FinalizeComplete
            | Status::PlanUpdated
            | Status::MergingBranch => Phase::Pr {
                pr: self.pr_at(status)?,
                stage: self.stage_at(status)?,
            },
            Status::Halted => {
                let halt = self
                    .halt
                    .as_ref()
                    .ok_or_else(|| "state HALTED needs `halt`, which is missing".to_string())?;
                if halt.resume_to == Status::Halted {
                    return Err("`halt.resume_to` cannot be HALTED".to_string());
                }
                Phase::Halted {
                    halt: Halt {
                        reason: halt.reason,
                        message: halt.message.clone(),
                    },
                    resume: Box::new(self.phase_at(halt.resume_to)?),
                }
            }
        })
    }

    fn required(
        &self,
        status: Status,
        value: &Option<String>,
        field: &str,
    ) -> Result<String, String> {
        value
            .clone()
            .ok_or_else(|| format!("state {status} needs `{field}`, which is missing"))
    }

    /// The PR these fields describe, in a state that has one.
    fn pr_at(&self, status: Status) -> Result<Pr, String> {
        Ok(Pr {
            branch: self.required(status, &self.current_pr_branch, "current_pr_branch")?,
            base: self.branch_base.clone(),
            last_checkpoint: self.last_commit_hash.clone(),
            verified_tree: self.verified_tree.clone(),
            preflight_cache: self.preflight_cache.clone(),
            last_run: self.last_run.clone(),
            review: ReviewProgress {
                round: self.review_round,
                blocked_rounds: self.blocked_rounds,
                last: self.last_review.clone(),
            },
            red_test: self.red_test.clone(),
            pin: self.pin.clone(),
        })
    }

    /// Where the PR is at `status`, with the data valid there.
    fn stage_at(&self, status: Status) -> Result<PrStage, String> {
        let finalized = || -> Result<Finalized, String> {
            Ok(Finalized {
                final_commit: self.required(status, &self.final_commit, "final_commit")?,
                plan_commit: self.required(status, &self.plan_commit, "plan_commit")?,
            })
        };
        let cannot_wait = |other: &Pending| {
            format!(
                "state {status} cannot wait for {} (`pending`)",
                other.kind()
            )
        };
        Ok(match status {
            Status::ExecutingTdd => PrStage::ExecutingTdd {
                pending: self.tdd_pending(status)?,
            },
            Status::Debugging => PrStage::Debugging {
                attempts: Attempts {
                    count: self.debug_attempt_counter,
                    identical_failures: self.identical_failures,
                    error: self.last_error.clone().unwrap_or_default(),
                },
                pending: self.tdd_pending(status)?,
            },
            Status::Replanning => PrStage::Replanning {
                attempts: self.debug_attempt_counter,
                context: self.replan_context.clone().ok_or_else(|| {
                    "state REPLANNING needs `replan_context`, which is missing".to_string()
                })?,
            },
            Status::CodeReview => PrStage::CodeReview {
                review: match self.pending.clone() {
                    None => ReviewStage::Due {
                        error: self.last_error.clone(),
                    },
                    Some(Pending::Approval { round }) => ReviewStage::AwaitingApproval { round },
                    Some(Pending::Escalation { reason }) => ReviewStage::MustEscalate { reason },
                    Some(other) => return Err(cannot_wait(&other)),
                },
            },
            Status::AwaitingFinalization => PrStage::AwaitingFinalization,
            Status::FinalizeComplete => PrStage::FinalizeComplete {
                final_commit: self.required(status, &self.final_commit, "final_commit")?,
            },
            Status::PlanUpdated => PrStage::PlanUpdated {
                finalized: finalized()?,
            },
            Status::MergingBranch => PrStage::MergingBranch {
                finalized: finalized()?,
                blocked: self.last_error.clone(),
            },
            Status::Initializing | Status::CreatingBranch | Status::Halted => {
                return Err(format!("state {status} has no PR stage"));
            }
        })
    }

    /// What a TDD state waits for: an analysis or a checkpoint, nothing else.
    fn tdd_pending(&self, status: Status) -> Result<Option<TddPending>, String> {
        match self.pending.clone() {
            Some(Pending::Analysis {
                step,
                command,
                exit,
                output_tail,
                red_tree,
                red_paths,
                red_shared,
                syntax_error,
            }) => Ok(Some(TddPending::Analysis {
                step,
                command,
                exit,
                output_tail,
                red_tree,
                red_paths,
                red_shared,
                syntax_error,
            })),
            Some(Pending::Checkpoint {
                step,
                step_type,
                description,
            }) => Ok(Some(TddPending::Checkpoint {
                step,
                step_type,
                description,
            })),
            Some(other) => Err(format!(
                "state {status} cannot wait for {} (`pending`)",
                other.kind()
            )),
            None => Ok(None),
        }
    }

    /// Sets the fields that describe `phase` (not `status`: a halt records its own).
    fn describe(&mut self, phase: &Phase) {
        self.pending = phase.pending();
        self.last_error = phase.last_error().map(str::to_string);
        match phase {
            Phase::Initializing => {}
            Phase::CreatingBranch { branch, .. } => self.current_pr_branch = Some(branch.clone()),
            Phase::Pr { pr, stage } => {
                self.describe_pr(pr);
                self.describe_stage(stage);
            }
            Phase::Halted { halt, resume } => {
                self.describe(resume);
                self.halt = Some(HaltRecord {
                    reason: halt.reason,
                    message: halt.message.clone(),
                    resume_to: resume.status(),
                });
            }
        }
    }

    fn describe_pr(&mut self, pr: &Pr) {
        self.current_pr_branch = Some(pr.branch.clone());
        self.branch_base = pr.base.clone();
        self.last_commit_hash = pr.last_checkpoint.clone();
        self.verified_tree = pr.verified_tree.clone();
        self.preflight_cache = pr.preflight_cache.clone();
        self.last_run = pr.last_run.clone();
        self.review_round = pr.review.round;
        self.blocked_rounds = pr.review.blocked_rounds;
        self.last_review = pr.review.last.clone();
        self.red_test = pr.red_test.clone();
        self.pin = pr.pin.clone();
    }

    fn describe_stage(&mut self, stage: &PrStage) {
        match stage {
            PrStage::ExecutingTdd { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization => {}
            PrStage::Debugging { attempts, .. } => {
                self.debug_attempt_counter = attempts.count;
                self.identical_failures = attempts.identical_failures;
            }
            PrStage::Replanning { attempts, context } => {
                self.debug_attempt_counter = *attempts;
                self.replan_context = Some(context.clone());
            }
            PrStage::FinalizeComplete { final_commit } => {
                self.final_commit = Some(final_commit.clone());
            }
            PrStage::PlanUpdated { finalized } | PrStage::MergingBranch { finalized, .. } => {
                self.final_commit = Some(finalized.final_commit.clone());
                self.plan_commit = Some(finalized.plan_commit.clone());
            }
        }
    }
}

impl TryFrom<StateWire> for State {
    type Error = String;

    fn try_from(wire: StateWire) -> Result<State, String> {
        let phase = wire.phase_at(wire.status)?;
        Ok(State {
            main_branch: wire.main_branch,
            phase,
            guidance: wire.guidance,
            // Idle describes INITIALIZING only; anywhere else it would be stale.
            idle: wire.idle.filter(|_| wire.status == Status::Initializing),
            main_tip: wire.main_tip,
            extra: wire.extra,
        })
    }
}

impl From<State> for StateWire {
    fn from(state: State) -> StateWire {
        let mut wire = StateWire::empty(state.status());
        wire.describe(&state.phase);
        wire.main_branch = state.main_branch;
        wire.guidance = state.guidance;
        wire.idle = state.idle;
        wire.main_tip = state.main_tip;
        wire.extra = state.extra;
        wire
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn new_state_serializes_minimally() {
        let state = State::new(Some("main".into()));
        assert_eq!(
            String::from_utf8(state.to_json()).unwrap(),
            "{\n  \"schema\": 1,\n  \"status\": \"INITIALIZING\",\n  \"main_branch\": \"main\"\n}\n"
        );
    }

    #[test]
    fn unknown_status_is_an_error_naming_it() {
        let err = State::from_json(br#"{"schema":1,"status":"DANCING"}"#).unwrap_err();
        assert!(err.contains("unknown variant `DANCING`"), "{err}");
    }

    #[test]
    fn unknown_schema_is_an_error() {
        let err = State::from_json(br#"{"schema":2,"status":"INITIALIZING"}"#).unwrap_err();
        assert!(err.starts_with("schema 2 is not understood"), "{err}");
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let state = State::from_json(
            br#"{"schema":1,"status":"HALTED","future_field":{"a":1},
                 "halt":{"reason":"escalated","message":"m","resume_to":"INITIALIZING"}}"#,
        )
        .unwrap();
        let again = State::from_json(&state.to_json()).unwrap();
        assert_eq!(again.extra["future_field"], serde_json::json!({"a": 1}));
        assert_eq!(again.status(), Status::Halted);
    }

    #[test]
    fn the_old_plan_summary_cache_is_read_and_dropped() {
        let state = State::from_json(
            br#"{"schema":1,"status":"INITIALIZING","plan_summary":{"title":"t"},"plan_blob":"abc"}"#,
        )
        .unwrap();
        assert!(state.extra.is_empty(), "{:?}", state.extra);
        assert_eq!(
            String::from_utf8(state.to_json()).unwrap(),
            "{\n  \"schema\": 1,\n  \"status\": \"INITIALIZING\"\n}\n"
        );
    }

    /// Every phase, as version 0.2 wrote it: read into a phase and written back byte for byte.
    #[test]
    fn schema_1_states_round_trip_through_their_phase() {
        let pr = r#""current_pr_branch":"feat/x","branch_base":"b0","last_commit_hash":"c1","verified_tree":"t1","review_round":2,"blocked_rounds":1"#;
        let cases = [
            r#"{"schema":1,"status":"INITIALIZING","main_branch":"main"}"#.to_string(),
            r#"{"schema":1,"status":"CREATING_BRANCH","current_pr_branch":"feat/x","last_error":"dirty"}"#.into(),
            format!(r#"{{"schema":1,"status":"EXECUTING_TDD",{pr},"pending":{{"kind":"checkpoint","step":"1.2","type":"GREEN","description":"d"}}}}"#),
            format!(r#"{{"schema":1,"status":"DEBUGGING","debug_attempt_counter":3,{pr},"last_error":"boom","identical_failures":1,"pending":{{"kind":"analysis","step":"1.1","command":"false","exit":{{"code":1}},"output_tail":"x"}}}}"#),
            format!(r#"{{"schema":1,"status":"REPLANNING","debug_attempt_counter":5,{pr},"last_error":"boom","replan_context":{{"original_task":"a","step":"1.2","error":"boom"}}}}"#),
            format!(r#"{{"schema":1,"status":"CODE_REVIEW",{pr},"pending":{{"kind":"approval","round":2}}}}"#),
            format!(r#"{{"schema":1,"status":"CODE_REVIEW",{pr},"last_error":"reviewer crashed"}}"#),
            format!(r#"{{"schema":1,"status":"AWAITING_FINALIZATION",{pr}}}"#),
            format!(r#"{{"schema":1,"status":"FINALIZE_COMPLETE","final_commit":"f",{pr}}}"#),
            format!(r#"{{"schema":1,"status":"MERGING_BRANCH","final_commit":"f","plan_commit":"p",{pr},"last_error":"dirty"}}"#),
            format!(r#"{{"schema":1,"status":"HALTED","debug_attempt_counter":4,{pr},"last_error":"boom","halt":{{"reason":"escalated","message":"help","resume_to":"DEBUGGING"}},"guidance":"g"}}"#),
        ];
        for json in cases {
            let state = State::from_json(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
            let written: serde_json::Value = serde_json::from_slice(&state.to_json()).unwrap();
            let read: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(written, read, "{json}");
        }
    }

    #[test]
    fn a_halt_keeps_the_phase_it_resumes_to() {
        let state = State::from_json(
            br#"{"schema":1,"status":"HALTED","debug_attempt_counter":4,"current_pr_branch":"b","last_error":"boom",
                 "halt":{"reason":"escalated","message":"help","resume_to":"DEBUGGING"}}"#,
        )
        .unwrap();
        let Phase::Halted { halt, resume } = &state.phase else {
            panic!("{:?}", state.phase)
        };
        assert_eq!(halt.message, "help");
        assert_eq!(resume.status(), Status::Debugging);
        assert_eq!(state.attempts(), 4);
        assert_eq!(state.branch(), Some("b"));
    }

    #[test]
    fn states_that_cannot_be_are_errors_naming_the_field() {
        for (json, wanted) in [
            (
                r#"{"schema":1,"status":"EXECUTING_TDD"}"#,
                "state EXECUTING_TDD needs `current_pr_branch`",
            ),
            (
                r#"{"schema":1,"status":"HALTED"}"#,
                "state HALTED needs `halt`",
            ),
            (
                r#"{"schema":1,"status":"MERGING_BRANCH","current_pr_branch":"b","final_commit":"f"}"#,
                "state MERGING_BRANCH needs `plan_commit`",
            ),
            (
                r#"{"schema":1,"status":"EXECUTING_TDD","current_pr_branch":"b","pending":{"kind":"approval","round":1}}"#,
                "state EXECUTING_TDD cannot wait for approval",
            ),
            (
                r#"{"schema":1,"status":"DEBUGGING","current_pr_branch":"b","last_run":{"step":"1.1","command":"c","expectation":"PASS","exit":{"code":1,"signal":9},"verdict":"FAILURE"}}"#,
                "exactly one of `code`, `signal` and `timeout_ms`",
            ),
        ] {
            let err = State::from_json(json.as_bytes()).unwrap_err();
            assert!(err.contains(wanted), "{json}: {err}");
        }
    }

    #[test]
    fn a_preflight_record_passes_exactly_when_every_gate_did() {
        let gate = |code| GateRecord {
            name: "g".into(),
            exit: ExitRecord::code(code),
            ms: 1,
            reused: false,
        };
        assert!(PreflightRecord { gates: vec![] }.passed());
        assert!(
            PreflightRecord {
                gates: vec![gate(0)]
            }
            .passed()
        );
        assert!(
            !PreflightRecord {
                gates: vec![gate(0), gate(1)]
            }
            .passed()
        );
        // A stored `passed` is never believed over the gates it summarises.
        let forged: PreflightRecord = serde_json::from_str(
            r#"{"passed":true,"gates":[{"name":"g","exit":{"code":1},"ms":1}]}"#,
        )
        .unwrap();
        assert!(!forged.passed());
    }

    #[test]
    fn every_status_is_listed_once() {
        let names: std::collections::BTreeSet<_> = Status::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names.len(), Status::ALL.len());
        for status in Status::ALL {
            let json = serde_json::to_string(status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
        }
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_ms(600_000), "10m");
        assert_eq!(format_ms(1_000), "1s");
        assert_eq!(format_ms(1_500), "1.5s");
        assert_eq!(format_ms(250), "250ms");
        assert_eq!(format_ms(7_200_000), "2h");
    }
}
