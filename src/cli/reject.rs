//! `git orchestrate reject`: a human's rejection at the review's human gate.

use clap::Args;

use super::error::require_human;
use super::signing::{SignArgs, print_payload};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session};

/// For humans: reject the PR at the review's human gate, with a comment.
///
/// The comment becomes a blocking finding: a new task for the agent, then another review
/// round.
#[derive(Debug, Args)]
pub struct RejectArgs {
    /// What must change.
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub comment: String,
    #[command(flatten)]
    pub sign: SignArgs,
}

pub fn run(session: &Session, args: &RejectArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.sign.print_payload {
        return print_payload(session, ui, Answer::Reject, Some(&args.comment));
    }
    let human = require_human("reject")?;
    let answer = engine::reject(session, &args.comment, human, &args.sign.signing()?)?;
    let text = format!(
        "rejected: CODE_REVIEW -> {}; your comment is the agent's next task, and another review follows it\n",
        answer.state
    );
    ui.report_or_text(&answer, &text)?;
    Ok(Exit::Success)
}
