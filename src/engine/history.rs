//! The read-only views of what the workflow holds: `log` (its transitions) and `plan show`
//! (the active plan as it now reads, progress applied).

use serde::Serialize;

use super::{EngineError, Session};
use crate::store::HistoryEntry;
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
    let page = session.store.history_page_at(tip, limit)?;
    Ok(LogReport {
        workflow: session.store.workflow().to_string(),
        truncated: page.truncated(),
        entries: page.entries,
        total: page.total,
    })
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
