//! `git orchestrate checkpoint`: verify, commit and record a checkpoint in one go.

use clap::Args;
use serde_json::json;

use super::render::preflight_line;
use super::{Failure, Ui};
use crate::engine::{self, Session};

/// Stage everything and make the checkpoint commit on the PR branch. Preflight runs first,
/// unless it already passed for exactly this tree and these gates (right after a
/// successful submit-work); a failing gate refuses the commit.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// The message after "checkpoint: " (default: the step and its description).
    #[arg(short, long)]
    pub message: Option<String>,
}

pub fn run(session: &Session, args: &CheckpointArgs, ui: &mut Ui) -> Result<u8, Failure> {
    let report = engine::checkpoint(session, args.message.as_deref())?;
    if ui.json {
        ui.json_object(json!({
            "commit": report.commit,
            "subject": report.subject,
            "step": report.step.map(|s| s.to_string()),
            "preflight": report.preflight,
            "cached": report.cached,
            "state": report.state.status,
        }))?;
        return Ok(0);
    }
    let mut text = format!("checkpoint {}: {}\n", &report.commit[..12], report.subject);
    match &report.preflight {
        None => text.push_str(
            "preflight: passed on exactly this tree with these gates before (at a submit-work or checkpoint); not run again\n",
        ),
        Some(pre) => {
            text.push_str(&preflight_line(pre));
            text.push('\n');
        }
    }
    if !ui.quiet {
        text.push_str("next: run `git orchestrate get-task`\n");
    }
    ui.text(&text)?;
    Ok(0)
}
