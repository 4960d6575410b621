//! `git orchestrate doctor`: is everything in place for the guarantees to hold?

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Level, Session};

/// Check the setup, and say how to fix what is wrong.
///
/// The config parses, preflight has gates, the hooks are installed and
/// actually reach git-orchestrate (each is run in a dry run), fetch refspecs share the state,
/// an identity is configured, and the workflow state is readable. Each line says ok, warning
/// or error, and how to fix it. Exit 1 when there is an error.
#[derive(Debug, Args)]
pub struct DoctorArgs {}

pub fn run(session: &Session, _args: &DoctorArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::doctor(session)?;
    let code = Exit::VerificationFailed.when(report.errors > 0);
    if ui.json_report(&report)? {
        return Ok(code);
    }
    let (checks, errors, warnings) = (&report.checks, report.errors, report.warnings);
    let mut text = String::new();
    for c in checks {
        let label = match c.level {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Error => "ERROR",
        };
        text.push_str(&format!("{label:<8} {:<20} {}\n", c.name, c.message));
        if let Some(fix) = c.fix.as_ref().filter(|_| c.level != Level::Ok) {
            text.push_str(&format!("{:<29} fix: {fix}\n", ""));
        }
    }
    text.push_str(&format!(
        "{errors} error{}, {warnings} warning{}\n",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    ));
    ui.text(&text)?;
    Ok(code)
}
