//! `git orchestrate approve`: a human's approval at the review's human gate.

use clap::Args;

use super::error::require_human;
use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// For humans: approve the PR at the review's human gate (`[review] human = true`).
#[derive(Debug, Args)]
pub struct ApproveArgs {}

pub fn run(session: &Session, _args: &ApproveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let human = require_human("approve")?;
    let answer = engine::approve(session, human)?;
    let text = format!(
        "approved: CODE_REVIEW -> {}; the agent's next `git orchestrate get-task` finalizes the PR\n",
        answer.state
    );
    ui.report_or_text(&answer, &text)?;
    Ok(Exit::Success)
}
