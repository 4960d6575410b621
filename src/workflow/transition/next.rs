//! What one event's function decides, before [`super::transition`] names the event and
//! where it came from; and why an event does not apply.

use crate::workflow::plan::StepId;
use crate::workflow::rejection::Rejection;
use crate::workflow::state::Phase;
use crate::workflow::state::{State, Status};

use super::decide::GET_TASK_HINT;
use super::event::*;

/// What one event's function decides; [`transition`] adds the event's name and origin.
pub(super) struct Next {
    pub(super) state: State,
    pub(super) plan: PlanChange,
    pub(super) step: Option<StepId>,
    pub(super) summary: String,
    pub(super) effects: Vec<Effect>,
}

impl Next {
    pub(super) fn new(state: State, summary: String) -> Next {
        Next {
            state,
            plan: PlanChange::Keep,
            step: None,
            summary,
            effects: Vec::new(),
        }
    }

    pub(super) fn plan(mut self, plan: PlanChange) -> Next {
        self.plan = plan;
        self
    }

    pub(super) fn step(mut self, step: StepId) -> Next {
        self.step = Some(step);
        self
    }

    pub(super) fn effects(mut self, effects: Vec<Effect>) -> Next {
        self.effects = effects;
        self
    }
}

/// Why an event does not apply; turned into a [`Rejection`] naming the state.
pub(super) enum Refusal {
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
    pub(super) fn rejection(self, from: Status, event: &str) -> Rejection {
        let message = match self {
            Refusal::WrongState => format!("`{event}` does not apply in state {from}"),
            Refusal::NoPlan => format!("no PR plan is active in state {from}"),
            Refusal::Said(message) => message,
            Refusal::Rejected(rejection) => return rejection,
        };
        Rejection::wrong_state(from, message, GET_TASK_HINT)
    }
}

/// Refuses `id` unless it is a full object id, 40 (SHA-1) or 64 (SHA-256) lowercase hex
/// digits: what git prints, and every id a release recorded for `what`. The state keeps it,
/// and later commands, on this clone or another that replays the chain, hand it to git (a
/// diff against the verified tree, the merge's ancestry checks): a chain written by hand could
/// otherwise record one git reads as an option (`--output=FILE`) or a revision expression.
pub(super) fn object_id(what: &str, id: &str) -> Result<(), Refusal> {
    let full =
        matches!(id.len(), 40 | 64) && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if full {
        Ok(())
    } else {
        Err(Refusal::Said(format!(
            "the {what} {id:?} is no full object id"
        )))
    }
}

pub(super) fn with_phase(state: &State, phase: Phase) -> State {
    State {
        phase,
        ..state.clone()
    }
}

/// Planning: no PR branch exists yet, so a plan can be taken up or dropped.
pub(super) fn before_branch(state: &State) -> bool {
    match state.phase {
        Phase::Initializing | Phase::CreatingBranch { .. } => true,
        Phase::Pr { .. } | Phase::Halted { .. } => false,
    }
}
