//! The escape hatches of Nudge and Unlock (docs/agent-guide.md, "The escape tools and their locks"): `request-scope-reduction` and
//! `escalate`, each locked until enough attempts have failed.

use serde::Serialize;

use super::get_task;
use super::{EngineError, Session};
use crate::workflow::state::ReplanContext;
use crate::workflow::{self, Event, Rejection, RejectionKind, Status, Thresholds};

/// What `request-scope-reduction` answers: the REPLANNING briefing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScopeReductionReport {
    pub workflow: String,
    pub state: Status,
    pub replan: Option<ReplanContext>,
    pub briefing: String,
}

/// `request-scope-reduction`: when unlocked, reverts tracked changes to HEAD (untracked files
/// stay, and are listed), saves the re-plan context, and returns the REPLANNING briefing.
pub fn request_scope_reduction(session: &Session) -> Result<ScopeReductionReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_refuse("request-scope-reduction", |s| {
            workflow::check_scope_reduction(s, None, &Thresholds::default()).err()
        })?;
        let config = session.load_config(Some(&snap.state))?.config;
        let step = workflow::check_scope_reduction(
            &snap.state,
            snap.summary.as_ref(),
            &config.debugging.thresholds(),
        )
        .map_err(EngineError::Rejected)?;
        session.require_pr_branch(
            &snap.state,
            "request-scope-reduction",
            "; request-scope-reduction resets the PR branch's working tree",
        )?;
        // The revert happens before the state moves: a crash in between leaves DEBUGGING and
        // a clean tree, and running the command again is harmless. It is destructive, so it
        // only happens while the state is still the one checked: a submit that landed
        // meanwhile makes this attempt start over (and the tool may no longer be unlocked).
        if session.store.tip()? != Some(snap.tip) {
            return Err(EngineError::Conflict);
        }
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
    let task = get_task::brief(session)?;
    Ok(ScopeReductionReport {
        workflow: session.store.workflow().to_string(),
        state: task.state.status(),
        replan: task.state.replan_context().cloned(),
        briefing: task.briefing.text,
    })
}

/// What `escalate` did: the report is printed verbatim, and the command exits 10.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EscalateReport {
    pub state: Status,
    pub report: String,
}

/// `escalate --report`: when unlocked, stores the report and halts for a human.
pub fn escalate(session: &Session, report: &str) -> Result<EscalateReport, EngineError> {
    if !report.trim().is_empty() {
        super::check_field(crate::workflow::fields::Field::Report, report)?;
    }
    session.with_retries(|| {
        let snap = session.read_or_refuse("escalate", |s| {
            workflow::check_escalate(s, &Thresholds::default()).err()
        })?;
        let config = session.load_config(Some(&snap.state))?.config;
        workflow::check_escalate(&snap.state, &config.debugging.thresholds()).map_err(EngineError::Rejected)?;
        if report.trim().is_empty() {
            return Err(EngineError::Rejected(Rejection {
                kind: RejectionKind::InvalidInput,
                state: snap.state.status(),
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
            state: t.to(),
            report: report.to_string(),
        })
    })
}
