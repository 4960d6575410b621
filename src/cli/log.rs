//! `git orchestrate log`: the transition history, newest first.

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};
use crate::workflow::Human;
use clap::Args;

/// Show the workflow's transitions, newest first.
///
/// One commit under
/// refs/orchestrator/workflows/<name> per transition (`git log` of that ref shows the same).
/// When older transitions are left out, the last line says how many there are in all.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many transitions to show.
    #[arg(
        short = 'n',
        long = "max-count",
        visible_alias = "limit",
        value_name = "N",
        default_value_t = 20
    )]
    pub max_count: usize,

    /// Show every transition.
    #[arg(long, conflicts_with = "max_count")]
    pub all: bool,
}

/// The lines of a transition's body `log` shows.
const BODY_LINES: usize = 6;

/// How an answer was authorised, in words.
fn human_word(recorded: &str) -> String {
    match Human::parse(recorded) {
        Some(Human::Terminal) => "at a terminal".to_string(),
        Some(Human::Env) => "GIT_ORCHESTRATE_HUMAN=1, without a terminal".to_string(),
        None => match recorded.strip_prefix("signed ") {
            Some(principal) => format!("signed by {principal} (SSH key)"),
            None => recorded.to_string(),
        },
    }
}

pub fn run(session: &Session, args: &LogArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let limit = (!args.all).then_some(args.max_count);
    let page = engine::log(session, limit)?;
    if ui.json_report(&page)? {
        return Ok(Exit::Success);
    }
    if page.total == 0 {
        ui.line(format!("workflow {} has no history yet", page.workflow))?;
    }
    for e in &page.entries {
        let step = e
            .step
            .as_deref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        ui.line(format!(
            "{}  {}  {}{step}",
            crate::short_id(&e.commit),
            e.time,
            e.subject
        ))?;
        // The body says why: a rejection's comment is on the lines after its first.
        let body: Vec<&str> = e.body.lines().filter(|l| !l.trim().is_empty()).collect();
        for line in body.iter().take(BODY_LINES) {
            ui.line(format!("    {}", line.trim_end()))?;
        }
        if body.len() > BODY_LINES {
            ui.line(format!(
                "    [{} more lines: git show {}]",
                body.len() - BODY_LINES,
                crate::short_id(&e.commit)
            ))?;
        }
        if let Some(human) = &e.human {
            ui.line(format!("    answered by a human: {}", human_word(human)))?;
        }
    }
    if page.truncated {
        // Newest first: the note sits where the listing stops, at the oldest shown.
        ui.line(format!(
            "(showing the newest {} of {} transitions; `git orchestrate log -n {}` or `--all` shows them all)",
            page.entries.len(),
            page.total,
            page.total
        ))?;
    }
    Ok(Exit::Success)
}
