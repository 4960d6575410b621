//! `git orchestrate get-task`: the state-aware briefing.

use clap::Args;
use serde_json::json;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Print what to do now: the briefing for the current state.
///
/// May act first, as the orchestrator's own steps require: create the
/// PR branch, record a checkpoint commit, drop a stale plan. Exits 10 while the workflow
/// waits for a human.
#[derive(Debug, Args)]
pub struct GetTaskArgs {}

pub fn run(session: &Session, _args: &GetTaskArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::get_task(session)?;
    if ui.json {
        ui.json_object(json!({
            "workflow": report.workflow,
            "state": report.state.status(),
            "branch": report.state.branch(),
            "step": report.briefing.step,
            "attempt": report.briefing.attempt,
            "pending": report.state.pending().as_ref().map(|p| p.kind()),
            "briefing": report.briefing.text,
        }))?;
    } else {
        ui.text(&report.briefing.text)?;
    }
    Ok(if report.halted {
        Exit::Halted
    } else {
        Exit::Success
    })
}
