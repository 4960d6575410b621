//! The pure workflow core: state and plan types, the transition table, the decisions
//! `get-task` and `submit-work` make before they act, and the briefing text.
//!
//! Nothing here touches git, processes or the filesystem. The engine reads a snapshot,
//! asks this module what to do, carries it out, feeds back what happened as an [`Event`],
//! and stores the [`Transition`] that comes back.

pub mod archive;
pub mod branch_name;
pub mod briefing;
pub mod cargo_files;
pub mod cargo_mutants;
pub mod claims;
pub mod command_files;
pub mod cosmic_ray;
pub mod debugging;
#[cfg(test)]
mod diagram;
pub mod evidence;
pub mod fence;
pub mod fields;
pub mod jest_files;
pub mod ledger;
pub mod master_plan;
pub mod mocha_files;
pub mod mutate;
pub mod mutmut;
pub mod notes;
pub mod package_scripts;
pub mod plan;
pub mod problems;
pub mod proof;
pub mod pytest_files;
pub mod red;
mod rejection;
pub mod replan;
pub mod repo_path;
pub mod review;
pub mod shell_reach;
pub mod state;
mod status;
pub mod stryker;
pub mod ticket;
pub mod timeline;
mod transition;
pub mod vitest_files;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use debugging::{Thresholds, Tier};
pub use plan::{Plan, StepId, StepType};
pub use state::{Pending, Phase, Pr, PrStage, State, Status, Verdict};
pub use transition::{
    Accepted, CHECKPOINT_STATES, Effect, Event, GetTaskStep, OutputSource, OwedCheckpoint,
    PlanChange, PreflightOutcome, RedRerun, Rejection, RejectionKind, SubmitRequest, TestRun,
    Transition, already_recorded, check_approval, check_checkpoint, check_escalate, check_resume,
    check_scope_reduction, check_submit, get_task_step, get_task_stops_after, held_to_plan,
    needs_full_plan, transition,
};

/// How a human's answer (`resume`, `approve`, `reject`) was authorised (docs/integrity.md):
/// it is recorded with the transition, for `log`, the review and the final note.
/// The configuration file's name at the repository root (docs/config.md). The core names it
/// in briefings; `config` reads it.
pub const CONFIG_FILE: &str = ".orchestrate.toml";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Human {
    /// The command ran with a terminal on stdin.
    #[serde(rename = "terminal")]
    Terminal,
    /// `GIT_ORCHESTRATE_HUMAN=1` said so, without a terminal: a script acting for a person,
    /// or an agent that set it.
    #[serde(rename = "GIT_ORCHESTRATE_HUMAN")]
    Env,
}

impl Human {
    pub fn as_str(self) -> &'static str {
        match self {
            Human::Terminal => "terminal",
            Human::Env => "GIT_ORCHESTRATE_HUMAN",
        }
    }

    pub fn parse(text: &str) -> Option<Human> {
        match text {
            "terminal" => Some(Human::Terminal),
            "GIT_ORCHESTRATE_HUMAN" => Some(Human::Env),
            _ => None,
        }
    }
}

/// What the agent expects its test command to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Expectation {
    Pass,
    Fail,
}

impl Expectation {
    pub fn as_str(self) -> &'static str {
        match self {
            Expectation::Pass => "PASS",
            Expectation::Fail => "FAIL",
        }
    }

    /// RED steps prove a test fails; GREEN and REFACTOR steps prove it passes.
    pub fn for_step(kind: StepType) -> Self {
        match kind {
            StepType::Red => Expectation::Fail,
            StepType::Green | StepType::Refactor => Expectation::Pass,
        }
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The agent's judgement of a NEEDS_ANALYSIS result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    Success,
    Failure,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Success => "SUCCESS",
            Decision::Failure => "FAILURE",
        }
    }
}
