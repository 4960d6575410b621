//! `git orchestrate request-scope-reduction`: give up on a task that keeps failing, and re-plan it.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Give up on a task that keeps failing, and re-plan it as smaller ones.
///
/// Reverts tracked changes to the last commit (untracked files stay, and are listed); the
/// briefing then asks for a re-plan of the task. Locked until `[debugging]
/// unlock_scope_reduction_at` failed attempts (default 6).
#[derive(Debug, Args)]
pub struct ScopeReductionArgs {}

pub fn run(session: &Session, _args: &ScopeReductionArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::request_scope_reduction(session)?;
    ui.report_or_text(&report, &report.briefing)?;
    Ok(Exit::Success)
}
