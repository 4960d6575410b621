//! `git orchestrate repin`: a human moves the PR's gates to main's as they are now.

use clap::Args;

use super::error::require_human;
use super::signing::{SignArgs, print_payload};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session};

/// For humans: verify the rest of the PR under main's gates as they are now.
///
/// A PR is verified under main's .orchestrate.toml (and protected paths) as they were when
/// its branch was created, so that a change on main mid-PR cannot weaken the gates; every
/// briefing and `status` say when main's gates have changed since. `repin` takes them as they
/// are now. A pass recorded under the old gates no longer counts for a checkpoint.
///
/// It also accounts for main as it is now: commits on main that no workflow merged (a
/// rebase, a merge made by hand) block every merge until a human has looked at them and run
/// `repin`, with or without a PR active.
#[derive(Debug, Args)]
pub struct RepinArgs {
    #[command(flatten)]
    pub sign: SignArgs,
}

pub fn run(session: &Session, args: &RepinArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.sign.print_payload {
        return print_payload(session, ui, Answer::Repin, None);
    }
    let human = require_human("repin")?;
    let report = engine::repin(session, human, &args.sign.signing()?)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let short = |c: &str| crate::short_id(c).to_string();
    let text = match (report.changed, report.pr) {
        (true, true) => format!(
            "repinned: the PR is now verified under main at {}{}; main is accounted for up to it\n",
            short(&report.to),
            if report.config_changed {
                " (its .orchestrate.toml differs from the one pinned before)"
            } else {
                ""
            }
        ),
        (true, false) => format!(
            "main is accounted for up to {}: what moved it since the last merge or repin is a human's now\n",
            short(&report.to)
        ),
        (false, true) => format!(
            "the PR's gates are pinned at main's {} already; nothing changed\n",
            short(&report.to)
        ),
        (false, false) => format!(
            "main is accounted for at {} already; nothing changed\n",
            short(&report.to)
        ),
    };
    ui.text(&text)?;
    Ok(Exit::Success)
}
