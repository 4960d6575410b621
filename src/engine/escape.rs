//! The escape hatches of Nudge and Unlock (SPEC §6.3, §6.4): `request-scope-reduction` and
//! `escalate`, each locked until enough attempts have failed.

use super::get_task::{self, TaskReport};
use super::{EngineError, Session};
use crate::workflow::{self, Event, Rejection, RejectionKind, State};

/// `request-scope-reduction`: when unlocked, reverts tracked changes to HEAD (untracked files
/// stay, and are listed), saves the re-plan context, and returns the REPLANNING briefing.
pub fn request_scope_reduction(session: &Session) -> Result<TaskReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_create()?;
        let config = session.load_config(Some(&snap.state))?.config;
        let step = workflow::check_scope_reduction(
            &snap.state,
            snap.summary.as_ref(),
            &config.debugging.thresholds(),
        )
        .map_err(EngineError::Rejected)?;
        require_pr_branch(session, &snap.state, "request-scope-reduction")?;
        // The revert happens before the state moves: a crash in between leaves DEBUGGING and
        // a clean tree, and running the command again is harmless.
        session.git.reset_hard()?;
        let untracked = session.git.untracked_files()?;
        session.apply(
            &snap,
            Event::ScopeReduced {
                step: step.id,
                original_task: step.task.clone(),
                untracked,
            },
        )?;
        Ok(())
    })?;
    get_task::get_task(session)
}

/// What `escalate` did: the report is printed verbatim, and the command exits 10.
pub struct EscalateReport {
    pub report: String,
    pub state: State,
}

/// `escalate --report`: when unlocked, stores the report and halts for a human.
pub fn escalate(session: &Session, report: &str) -> Result<EscalateReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_create()?;
        let config = session.load_config(Some(&snap.state))?.config;
        workflow::check_escalate(&snap.state, &config.debugging.thresholds()).map_err(EngineError::Rejected)?;
        if report.trim().is_empty() {
            return Err(EngineError::Rejected(Rejection {
                kind: RejectionKind::InvalidInput,
                state: snap.state.status,
                message: "the escalation report is empty".into(),
                hint: "Write a markdown report: the problem, what you tried, and the error messages; pass it \
                       with --report FILE or --report -."
                    .into(),
            }));
        }
                let t = session.apply(
            &snap,
            Event::Escalated {
                report: report.to_string(),
            },
        )?;
        Ok(EscalateReport {
            report: report.to_string(),
            state: t.state,
        })
    })
}

/// The orchestrator only touches the working tree on the PR branch it created.
pub(super) fn require_pr_branch(
    session: &Session,
    state: &State,
    command: &str,
) -> Result<(), EngineError> {
    let Some(branch) = &state.current_pr_branch else {
        return Ok(());
    };
    let head = session.store.head_branch()?;
    if head.as_deref() == Some(branch.as_str()) {
        return Ok(());
    }
    Err(EngineError::Rejected(Rejection {
        kind: RejectionKind::WrongState,
        state: state.status,
        message: format!(
            "HEAD is on {}, not on the PR branch {branch} (state {}); {command} resets the PR branch's working tree",
            head.as_deref().unwrap_or("a detached commit"),
            state.status
        ),
        hint: format!("Run `git checkout {branch}`, then `git orchestrate {command}` again."),
    }))
}
