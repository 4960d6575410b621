//! What a workflow waits for before it moves on: as `state.json` records it ([`Pending`]),
//! and as the phase that owns it holds it ([`TddPending`], [`ReviewStage`]).

use serde::{Deserialize, Serialize};

use super::records::ExitRecord;
use crate::workflow::plan::{StepId, StepType};

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
