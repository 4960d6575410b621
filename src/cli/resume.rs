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
    if engine::ticket::kind(session)? == Some(crate::store::WorkflowKind::Ticket) {
        if args.sign.sign_key.is_some() || args.sign.signature.is_some() {
            return Err(Failure::from(super::CommandError::invalid_input(
                "a ticket's `resume` takes no signature in this version".to_string(),
                "Drop --sign-key/--signature: the answer is recorded with how it was authorised.",
            )));
        }
        // A ticket halts on a merge that conflicted (the human made the branch mergeable;
        // the manager's `complete-ticket` lands it), or when `run` found a role stuck (it
        // returns to that role) (docs/tickets.md).
        let outcome = engine::ticket::resume(session, args.guidance.as_deref(), human)?;
        if !ui.json_report(&outcome)? {
            ui.line(match outcome.state {
                crate::workflow::ticket::TicketState::Developer => {
                    "resumed: HALTED -> DEVELOPER; the developer goes on with its assignment"
                        .to_string()
                }
                state => format!(
                    "resumed: HALTED -> {}; the manager's next `git orchestrate complete-ticket` \
                     merges the branch",
                    state.as_str()
                ),
            })?;
        }
        return Ok(Exit::Success);
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
        if let Some(why) = &done.claim_not_released {
            text.push_str(&format!(
                "warning: the PR's claim was not released ({why}); it lapses at its expiry\n"
            ));
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
