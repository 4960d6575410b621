//! `git orchestrate resume`: a human's answer to a halt.

use clap::Args;

use super::error::require_human;
use super::signing::{SignArgs, print_payload};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session};

/// For humans: answer a halt, with guidance for the agent.
///
/// The workflow returns to where it stopped, with the attempt counter reset; the guidance
/// is shown to the agent once, in its next briefing.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// What the agent should try, or what you changed.
    #[arg(long, value_name = "TEXT")]
    pub guidance: Option<String>,
    #[command(flatten)]
    pub sign: SignArgs,
}

pub fn run(session: &Session, args: &ResumeArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.sign.print_payload {
        return print_payload(session, ui, Answer::Resume, args.guidance.as_deref());
    }
    let human = require_human("resume")?;
    if engine::ticket::is_ticket(session)? {
        return resume_ticket(session, args, ui);
    }
    let done = engine::resume(
        session,
        args.guidance.as_deref(),
        human,
        &args.sign.signing()?,
    )?;
    if ui.json_report(&done)? {
        return Ok(Exit::Success);
    }
    if let Some(branch) = &done.merged {
        let mut text = format!(
            "resumed: {branch} is merged and deleted; HALTED -> {}, and the agent's next \
             `git orchestrate get-task` plans the next PR\n",
            done.state
        );
        if args.guidance.is_some() {
            text.push_str("note: --guidance is not kept after a merge conflict: the PR is done, and the next one starts afresh\n");
        }
        ui.text(&text)?;
        return Ok(Exit::Success);
    }
    let mut text = format!(
        "resumed: HALTED -> {} (halted because {})\n",
        done.state, done.halt_message
    );
    if !ui.quiet {
        text.push_str(match done.guidance {
            Some(_) => "the agent sees your guidance once, in its next `git orchestrate get-task`\n",
            None => "no guidance given; the agent's next `git orchestrate get-task` continues where it stopped\n",
        });
    }
    ui.text(&text)?;
    Ok(Exit::Success)
}

/// `resume` on a halted ticket (docs/tickets.md): back to the state it halted from; the
/// guidance is kept in the ticket's activity log.
fn resume_ticket(session: &Session, args: &ResumeArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let done = engine::ticket::resume(session, args.guidance.as_deref())?;
    if !ui.json_report(&done)? {
        ui.line(format!("resumed: HALTED -> {}", done.state.as_str()))?;
    }
    Ok(Exit::Success)
}
