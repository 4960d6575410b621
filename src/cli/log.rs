//! `git orchestrate log`: the transition history, newest first.

use clap::Args;
use serde_json::json;

use super::{Failure, Ui};
use crate::engine::{EngineError, Session};

/// Show the workflow's transitions, newest first: one commit under
/// refs/orchestrator/workflows/<name> per transition (`git log` of that ref shows the same).
#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many transitions to show.
    #[arg(short = 'n', long = "max-count", default_value_t = 20)]
    pub max_count: usize,
}

pub fn run(session: &Session, args: &LogArgs, ui: &mut Ui) -> Result<u8, Failure> {
    let entries = session
        .store
        .history(args.max_count)
        .map_err(EngineError::from)?;
    if ui.json {
        ui.json_object(json!({ "workflow": session.store.workflow(), "entries": entries }))?;
        return Ok(0);
    }
    if entries.is_empty() {
        ui.line(format!(
            "workflow {} has no history yet",
            session.store.workflow()
        ))?;
    }
    for e in &entries {
        let step = e
            .step
            .as_deref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        let headline = e.body.lines().next().unwrap_or_default();
        ui.line(format!(
            "{}  {}  {}{step}",
            &e.commit[..12],
            e.time,
            e.subject
        ))?;
        if !headline.is_empty() {
            ui.line(format!("    {headline}"))?;
        }
    }
    Ok(0)
}
