//! What a workflow waits for before it moves on: as `state.json` records it ([`Pending`]),
//! and as the phase that owns it holds it ([`TddPending`], [`ReviewStage`]).

use serde::{Deserialize, Serialize};

use super::records::ExitRecord;
use crate::workflow::plan::{StepId, StepType};

/// A RED run that failed as it should, waiting for the agent's analysis: what ran, how it
/// ended, and what would be pinned as the task's test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedAnalysis {
    pub step: StepId,
    pub command: String,
    pub exit: ExitRecord,
    /// The last lines of the output the agent has to judge (full text in `output.log`).
    pub output_tail: String,
    /// The tree the RED run left, and the paths the step changed from the task's start:
    /// what is pinned as its test when the analysis says SUCCESS (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_tree: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_paths: Vec<String>,
    /// Files the step changed that existed before it and are not tests (code beside an
    /// inline test): the RED test's lines are there, but the file is not pinned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_shared: Vec<String>,
    /// The tests, by id, the RED run's per-test report says failed (docs/integrity.md,
    /// "Per-test evidence"): the GREEN step must make each pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_tests: Vec<String>,
    /// Where the report named each of `red_tests`, and the runner's hook files on the test's
    /// way ([`super::RedPin`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub red_test_files: std::collections::BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_hooks: Vec<String>,
    /// A line of the output that shows the test itself could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syntax_error: Option<String>,
}

/// What the next submit or get-task must resolve before the workflow moves on, as recorded
/// in `state.json` and shown by `status`. In memory it lives in the phase it belongs to
/// ([`TddPending`], [`ReviewStage`]).
// One pending item per state, never in a collection: boxing the analysis would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    /// A RED test failed as expected; the agent must say whether it failed for the right reason.
    Analysis(RedAnalysis),
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
            Pending::Analysis(_) => "analysis",
            Pending::Checkpoint { .. } => "checkpoint",
            Pending::Approval { .. } => "approval",
            Pending::Escalation { .. } => "escalation",
        }
    }
}

/// What waits inside the TDD loop before the next step can be submitted.
// As [`Pending`]: one per state.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TddPending {
    Analysis(RedAnalysis),
    Checkpoint {
        step: StepId,
        step_type: StepType,
        description: String,
    },
}

impl From<TddPending> for Pending {
    fn from(p: TddPending) -> Pending {
        match p {
            TddPending::Analysis(analysis) => Pending::Analysis(analysis),
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

/// What a TDD state can wait for: an analysis or a checkpoint; anything else comes back.
impl TryFrom<Pending> for TddPending {
    type Error = Pending;

    fn try_from(p: Pending) -> Result<TddPending, Pending> {
        match p {
            Pending::Analysis(analysis) => Ok(TddPending::Analysis(analysis)),
            Pending::Checkpoint {
                step,
                step_type,
                description,
            } => Ok(TddPending::Checkpoint {
                step,
                step_type,
                description,
            }),
            other @ (Pending::Approval { .. } | Pending::Escalation { .. }) => Err(other),
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
