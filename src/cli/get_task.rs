//! `git orchestrate get-task`: the state-aware briefing.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Print what to do now: the briefing for the current state.
///
/// May act first, as the orchestrator's own steps require: create the PR branch, record a
/// checkpoint commit, drop a stale plan. Exits 10 while the workflow waits for a human, and
/// 4 when the PR branch could not be created (the briefing says why).
#[derive(Debug, Args)]
pub struct GetTaskArgs {
    /// On a ticket workflow: the role whose briefing to print, manager or developer
    /// (default: GIT_ORCHESTRATE_ROLE, then `[agent] role`, then whoever's turn it is)
    #[arg(long, value_enum)]
    pub role: Option<crate::workflow::ticket::Role>,
}

pub fn run(session: &Session, args: &GetTaskArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.role.is_some() {
        if engine::ticket::kind(session)? == Some(crate::store::WorkflowKind::Ticket) {
            return super::ticket::get_task(session, args.role, ui);
        }
        return Err(Failure::from(super::CommandError::invalid_input(
            format!(
                "--role applies to ticket workflows; workflow \"{}\" is a TDD workflow",
                session.store.workflow()
            ),
            "Drop --role, or start a ticket with `git orchestrate ticket new --title TEXT`.",
        )));
    }
    // The kind is the first read's, which costs the hot path nothing (one `get-task` ≈ one
    // `git rev-parse`).
    let report = match engine::get_task::task(session)? {
        engine::get_task::Task::Ticket => return super::ticket::get_task(session, None, ui),
        engine::get_task::Task::Tdd(report) => *report,
    };
    ui.report_or_text(&report, &report.briefing)?;
    Ok(if report.halted {
        Exit::Halted
    } else if report.branch_blocked.is_some() {
        // The briefing says why and what to do; the exit says it did not get far.
        Exit::NotAllowed
    } else {
        Exit::Success
    })
}
