//! What a briefing is made from, gathered by the engine, and what it gives back.

use serde::Serialize;

use crate::workflow::debugging::Thresholds;
use crate::workflow::plan::{PlanSummary, StepSummary, StepType};
use crate::workflow::state::State;

use super::notices::DoneAction;

/// Everything a briefing is made from. The engine gathers it; nothing here reads git.
pub struct Context<'a> {
    pub workflow: &'a str,
    pub state: &'a State,
    pub plan: Option<&'a PlanSummary>,
    /// `master_plan` from the config.
    pub master_plan: &'a str,
    /// A command that prints the full `output.log` of the workflow.
    pub output_log_command: &'a str,
    /// Names of the preflight gates in force (empty: none configured).
    pub gates: &'a [String],
    /// What `get-task` did just now, in the order it did it.
    pub done: &'a [DoneAction],
    /// Problems the agent (and whoever reads along) must know about.
    pub warnings: &'a [String],
    pub thresholds: Thresholds,
    /// A human's guidance from `resume`, delivered with this briefing (once).
    pub guidance: Option<&'a str>,
    /// While halted by an escalation: the command that prints the report, and the report.
    pub escalation: Option<(&'a str, &'a str)>,
    /// A command that prints the active plan, for a re-plan to start from.
    pub plan_show_command: &'a str,
    /// A command that prints the last review's findings.
    pub review_show_command: &'a str,
    /// The last review's findings, at the human gate (none of them blocks: the human
    /// weighs them).
    pub noted_findings: &'a [crate::workflow::review::Finding],
    /// The branch PRs start from and merge into.
    pub main_branch: &'a str,
    /// INITIALIZING after `submit-work --no-pr-left`, and the master plan on the main branch
    /// is still the one judged: nothing is left to do.
    pub idle: bool,
    /// In INITIALIZING, when other workflows claim PRs: the master plan's PRs that are not
    /// free, so that the agent picks one that is (docs/refs.md, "Claims").
    pub taken: &'a [TakenPr],
}

/// A PR of the master plan that is not free to plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakenPr {
    /// Its heading (or its key, when no heading has that slug).
    pub pr: String,
    /// Who claims it, and since when; `None`: it is marked [DONE].
    pub claimed_by: Option<String>,
}

/// A briefing and the structured view of its step, for `--json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Briefing {
    pub text: String,
    pub step: Option<StepView>,
    pub attempt: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepView {
    pub id: String,
    pub task: String,
    #[serde(rename = "type")]
    pub kind: StepType,
    pub description: String,
}

impl From<&StepSummary> for StepView {
    fn from(s: &StepSummary) -> StepView {
        StepView {
            id: s.id.to_string(),
            task: s.task.clone(),
            kind: s.kind,
            description: s.description.clone(),
        }
    }
}
