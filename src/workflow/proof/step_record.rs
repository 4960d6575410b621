//! What a step's proof came to, as its transition records it (docs/refs.md, "Events"): the
//! plan `submit-work` ran ([`super::step`]) and what each of its obligations came to, so that
//! `log`, `audit` and `attest` can show what the step proved. Whether such a record agrees
//! with the rest of its event, which `audit` checks, is the event's to say
//! (src/workflow/transition/event.rs, `TestRun::proof_disagrees`).

use serde::{Deserialize, Serialize};

use super::ProofPlan;

/// A step's proof plan and what each of its obligations came to, in the plan's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepProof {
    pub plan: ProofPlan,
    pub outcomes: Vec<Came>,
}

/// What one obligation came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Came {
    Held,
    Failed,
    /// The plan stopped before it ([`super::Stop`]).
    NotRun,
}

impl StepProof {
    /// `plan` with `held`, whether each obligation that ran held, in order; those after the
    /// last that ran did not run.
    pub fn new(plan: ProofPlan, held: &[bool]) -> StepProof {
        let outcomes = (0..plan.obligations.len())
            .map(|i| match held.get(i) {
                Some(true) => Came::Held,
                Some(false) => Came::Failed,
                None => Came::NotRun,
            })
            .collect();
        StepProof { plan, outcomes }
    }
}

#[cfg(test)]
mod tests;
