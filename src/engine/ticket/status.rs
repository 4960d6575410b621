//! `status` on a ticket workflow (docs/tickets.md): the ticket's title, state and whose
//! turn it is, its branch, every subtask's status and rejections, the current one, and the
//! report waiting for the manager with what contradicts it. Read-only, like the TDD status.

use std::path::PathBuf;

use serde::Serialize;

use super::super::status::{LockReport, Progress, RemoteReport, StatusReport, remote_reports};
use super::super::{EngineError, Session};
use crate::store::{TicketSnapshot, Workflow};
use crate::workflow::ticket::{
    self, Finished, GateVerdict, Role, SubtaskStatus, Ticket, TicketState,
};

/// What `status` reports on whichever kind of workflow is selected: `status --json` says
/// which in `kind` (docs/tickets.md).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum WorkflowStatus {
    Tdd(Box<StatusReport>),
    Ticket(Box<TicketStatus>),
}

/// `status`: the ticket's when the workflow holds a ticket, else the TDD workflow's.
pub fn workflow_status(session: &Session) -> Result<WorkflowStatus, EngineError> {
    // One read tells the kind: `status` is on the hot path (one call ≈ one `git
    // rev-parse`), and a TDD workflow pays nothing for tickets.
    match session.store.read_workflow()? {
        Some(Workflow::Ticket(snap)) => {
            Ok(WorkflowStatus::Ticket(Box::new(status(session, &snap)?)))
        }
        tdd => Ok(WorkflowStatus::Tdd(Box::new(
            super::super::status::status_of(session, tdd.and_then(Workflow::into_tdd))?,
        ))),
    }
}

/// What `status` reports on a ticket workflow (`status --json` with `"kind": "ticket"`).
#[derive(Clone, Debug, Serialize)]
pub struct TicketStatus {
    /// Always `ticket`: what tells this report from a TDD workflow's.
    pub kind: &'static str,
    pub workflow: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub tip: String,
    pub title: String,
    pub state: TicketState,
    /// The role whose turn it is; `None` when the ticket is done or halted.
    pub turn: Option<Role>,
    pub branch: String,
    /// The branch checked out here.
    pub head: Option<String>,
    /// Another worktree that has the ticket's branch checked out.
    pub branch_worktree: Option<PathBuf>,
    pub main_branch: String,
    pub pin: String,
    /// The branch's tip as verified: the pin, then each accepted subtask's commit.
    pub verified: String,
    /// The subtask assigned, or waiting for the manager's verification.
    pub current: Option<String>,
    pub progress: Progress,
    pub subtasks: Vec<SubtaskStatusLine>,
    /// The developer's report that waits for the manager, when one does.
    pub waiting: Option<WaitingReport>,
    /// How many contradictions the waiting report has (0 without one).
    pub contradictions: usize,
    /// The next legal action, as the briefing says it.
    pub next: String,
    pub halt: Option<String>,
    pub finished: Option<Finished>,
    pub remotes: Vec<RemoteReport>,
    pub locks: Vec<LockReport>,
}

/// One subtask as `status` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct SubtaskStatusLine {
    pub id: String,
    pub title: String,
    pub status: SubtaskStatus,
    pub rejections: u32,
    pub assignments: u32,
    pub awaiting_verification: bool,
    /// The contradictions of its last report.
    pub contradictions: usize,
    pub accepted: Option<String>,
}

/// A report the manager has not judged yet: what was claimed beside what was seen.
#[derive(Clone, Debug, Serialize)]
pub struct WaitingReport {
    pub subtask: String,
    pub status: String,
    pub build_status: String,
    pub commit: String,
    /// The pinned gates' verdict on the report's commit (`pass`, `fail`, `none`).
    pub observed: Option<GateVerdict>,
    pub contradictions: Vec<String>,
}

/// The ticket's status, read at the workflow's tip.
pub fn status(session: &Session, snap: &TicketSnapshot) -> Result<TicketStatus, EngineError> {
    let t = &snap.ticket;
    let head = session.store.head_branch()?;
    let branch_worktree = if session.store.branch_exists(&t.branch)? {
        session.branch_worktree(&t.branch)?
    } else {
        None
    };
    let waiting = waiting(t);
    Ok(TicketStatus {
        kind: "ticket",
        workflow: session.store.workflow().to_string(),
        reference: session.store.ref_name(),
        tip: snap.tip.to_string(),
        title: t.title.clone(),
        state: t.state,
        turn: t.state.role(),
        branch: t.branch.clone(),
        head,
        branch_worktree,
        main_branch: t.main_branch.clone(),
        pin: t.pin.clone(),
        verified: t.verified.clone(),
        current: t.current.clone(),
        progress: progress(t),
        subtasks: t
            .subtasks
            .iter()
            .map(|s| SubtaskStatusLine {
                id: s.id.clone(),
                title: s.title.clone(),
                status: s.status,
                rejections: s.rejections,
                assignments: s.assignments,
                awaiting_verification: s.awaiting_verification,
                contradictions: s.contradictions.len(),
                accepted: s.accepted.clone(),
            })
            .collect(),
        contradictions: waiting.as_ref().map_or(0, |w| w.contradictions.len()),
        waiting,
        next: ticket::legal_next(t, None),
        halt: t.halt.clone(),
        finished: t.finished.clone(),
        remotes: remote_reports(session, snap.tip)?,
        locks: session
            .store
            .lock_sightings()
            .iter()
            .map(|l| LockReport {
                reference: l.reference.clone(),
                path: l.path.clone(),
                age_s: l.age.as_secs(),
            })
            .collect(),
    })
}

/// Complete subtasks of all: the board's and the status's progress.
pub fn progress(t: &Ticket) -> Progress {
    Progress {
        done: t
            .subtasks
            .iter()
            .filter(|s| s.status == SubtaskStatus::Complete)
            .count(),
        total: t.subtasks.len(),
    }
}

fn waiting(t: &Ticket) -> Option<WaitingReport> {
    let subtask = t.current().filter(|s| s.awaiting_verification)?;
    let report = subtask.report.as_ref()?;
    Some(WaitingReport {
        subtask: subtask.id.clone(),
        status: report.status.as_str().to_string(),
        build_status: report.build_status.as_str().to_string(),
        commit: report.commit.clone(),
        observed: subtask.observed.as_ref().map(|o| o.gates.result),
        contradictions: subtask.contradictions.clone(),
    })
}
