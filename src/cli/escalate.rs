//! `git orchestrate escalate`: hand the problem to a human, with a report.

use std::path::PathBuf;

use clap::Args;

use super::error::CommandError;
use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Hand the problem to a human: store a report, halt, exit 10.
///
/// Stores a markdown report, halts the workflow, prints the report, and exits 10. Locked
/// until `[debugging] unlock_escalation_at` failed attempts (default 10).
#[derive(Debug, Args)]
pub struct EscalateArgs {
    /// The markdown report: the goal, what was tried, the error messages, your analysis. A
    /// file, or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    pub report: PathBuf,
}

pub fn run(session: &Session, args: &EscalateArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let bytes = super::input::read_input(
        &args.report,
        "the report",
        "Pass a markdown file with --report FILE, or pipe it with --report -.",
    )?;
    let report = String::from_utf8(bytes).map_err(|_| {
        Failure::from(CommandError::invalid_input(
            "the report is not UTF-8 text",
            "Write the report as UTF-8 markdown.",
        ))
    })?;
    let done = engine::escalate(session, &report)?;
    if ui.json {
        ui.report(&done)?;
    } else {
        // The report, verbatim: the escalation tool prints exactly what it was given.
        ui.text(&done.report)?;
    }
    Ok(Exit::Halted)
}
