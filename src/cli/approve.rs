//! `git orchestrate approve`: a human's approval at the review's human gate.

use clap::Args;

use super::error::require_human;
use super::signing::{SignArgs, print_payload};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session};

/// For humans: approve the PR at the review's human gate (`[review] human = true`).
#[derive(Debug, Args)]
pub struct ApproveArgs {
    #[command(flatten)]
    pub sign: SignArgs,
}

pub fn run(session: &Session, args: &ApproveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.sign.print_payload {
        return print_payload(session, ui, Answer::Approve, None);
    }
    let human = require_human("approve")?;
    let answer = engine::approve(session, human, &args.sign.signing()?)?;
    let text = format!(
        "approved: CODE_REVIEW -> {}; the agent's next `git orchestrate get-task` finalizes the PR\n",
        answer.state
    );
    ui.report_or_text(&answer, &text)?;
    Ok(Exit::Success)
}
