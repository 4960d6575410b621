//! `git orchestrate checkpoint`: verify, commit and record a checkpoint in one go.

use clap::Args;

use super::render::preflight_line;
use super::{Exit, Failure, Ui};
use crate::engine::{self, CheckpointReport, Session, WithoutCommit};

/// Stage everything and make the checkpoint commit on the PR branch.
///
/// Preflight runs first,
/// unless it already passed for exactly this tree and these gates (right after a
/// successful submit-work); a failing gate refuses the commit.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// The message after "checkpoint: " (default: the step and its description).
    #[arg(short, long)]
    pub message: Option<String>,
}

pub fn run(session: &Session, args: &CheckpointArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report =
        super::live::while_running(|| engine::checkpoint(session, args.message.as_deref()))?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    ui.text(&render_text(&report, ui.quiet))?;
    Ok(Exit::Success)
}

/// The report as people (and agents reading text) see it.
pub(super) fn render_text(report: &CheckpointReport, quiet: bool) -> String {
    let mut text = match report.without_commit {
        None => format!(
            "checkpoint {}: {}\n",
            crate::short_id(&report.commit),
            report.subject
        ),
        Some(WithoutCommit::Recovered) => format!(
            "checkpoint {}: {}\nrecorded the checkpoint commit an interrupted run had made (its note attached); no new \
             commit\n",
            crate::short_id(&report.commit),
            report.subject
        ),
        Some(WithoutCommit::Unchanged) => format!(
            "checkpoint {}: {}\nnothing changed since this checkpoint: the step is recorded on it; no new commit\n",
            crate::short_id(&report.commit),
            report.subject
        ),
    };
    match (&report.preflight, report.without_commit) {
        (_, Some(_)) => {}
        (None, None) => text.push_str(
            "preflight: passed on exactly this tree with these gates before (at a submit-work or checkpoint); not run again\n",
        ),
        (Some(pre), None) => {
            text.push_str(&preflight_line(pre));
            text.push('\n');
        }
    }
    if !report.untracked_added.is_empty() {
        text.push_str(&format!(
            "added {} file{} that git did not track before: {}\n",
            report.untracked_added.len(),
            if report.untracked_added.len() == 1 {
                ""
            } else {
                "s"
            },
            report.untracked_added.join(", ")
        ));
    }
    if !report.ignore_suggestions.is_empty() && !quiet {
        text.push_str(&format!(
            "warning: some of them look like build output, now committed; if they are, add to .gitignore: {} \
             (and `git rm -r --cached` them before the next checkpoint)\n",
            report.ignore_suggestions.join(" ")
        ));
    }
    if !report.left_out.is_empty() {
        text.push_str(&format!(
            "left out: {} (agent settings of `init --agent`: commit them on the main branch, not in a PR)\n",
            report.left_out.join(", ")
        ));
    }
    if !quiet {
        text.push_str("next: run `git orchestrate get-task`\n");
    }
    text
}
