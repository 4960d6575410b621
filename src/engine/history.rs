//! The read-only views of what the workflow holds: `log` (its transitions) and `plan show`
//! (the active plan as it now reads, progress applied).

use serde::Serialize;

use super::{EngineError, Session};
use crate::store::HistoryEntry;
use crate::workflow::proof::step_record::StepProof;
use crate::workflow::{Plan, Status, StepId};

/// What `log` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogReport {
    pub workflow: String,
    /// Newest first.
    pub entries: Vec<HistoryEntry>,
    /// How many transitions the history holds in all.
    pub total: usize,
    /// True when older transitions exist than the ones listed.
    pub truncated: bool,
}

/// The newest `limit` transitions (all of them with `None`).
pub fn log(session: &Session, limit: Option<usize>) -> Result<LogReport, EngineError> {
    // A finished workflow's history is in the archive once it leaves the live refs.
    let tip = super::archive::tip_or_archived(session)?;
    let mut page = session.store.history_page_at(tip, limit)?;
    for entry in page.entries.iter_mut().filter(|e| e.event == "test") {
        entry.proof = step_proof(session, &entry.commit)?;
    }
    Ok(LogReport {
        workflow: session.store.workflow().to_string(),
        truncated: page.truncated(),
        entries: page.entries,
        total: page.total,
    })
}

/// The proof a `test` transition's event records (src/workflow/proof/step_record.rs); `None`
/// when it records none, or its event does not read.
fn step_proof(session: &Session, commit: &str) -> Result<Option<StepProof>, EngineError> {
    /// The one field of the event `log` shows; the rest is the transition's own.
    #[derive(serde::Deserialize)]
    struct ProofOnly {
        #[serde(default)]
        proof: Option<StepProof>,
    }
    let id = gix::ObjectId::from_hex(commit.as_bytes())
        .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
    Ok(session
        .store
        .commit_record(id)?
        .event
        .and_then(|json| serde_json::from_str::<ProofOnly>(&json).ok())
        .and_then(|p| p.proof))
}

/// What `plan show` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    pub workflow: String,
    /// The active plan as it now reads, or `None`.
    pub plan: Option<Plan>,
    pub current_step: Option<StepId>,
    /// The state, when the workflow exists.
    #[serde(skip)]
    pub state: Option<Status>,
}

pub fn plan(session: &Session) -> Result<PlanReport, EngineError> {
    let snapshot = session.store.read()?;
    let plan = match &snapshot {
        Some(s) => session.store.plan(s)?,
        None => None,
    };
    Ok(PlanReport {
        workflow: session.store.workflow().to_string(),
        current_step: plan.as_ref().and_then(Plan::current_step),
        plan,
        state: snapshot.map(|s| s.state.status()),
    })
}
