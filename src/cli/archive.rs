//! `git orchestrate archive [--dry-run]`: the finished workflows leave the live refs for the
//! archive ref.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Move the finished workflows out of the live refs into the archive ref.
///
/// A finished workflow is a TDD workflow idle in INITIALIZING (no PR of the master plan is
/// left, and the master plan has not changed since), or a ticket workflow whose ticket is
/// done. Its history moves into refs/orchestrator/archive, one ref whose commits keep every
/// archived history reachable and index each name to its tip, and its own ref is deleted:
/// the commands that list workflows (`board`, `sync`, `get-task`'s checks) read the live ones
/// only. `log --workflow NAME`, `audit --all` and `board --all` still read an archived
/// workflow, and its name stays taken. The claims of archived workflows, and the lapsed
/// claims of workflows with no live ref, are removed with them (the next `sync` removes the
/// remote's). See docs/refs.md, "The archive".
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// Say which workflows would be archived (or restored), and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Bring archived workflow NAME back: its live ref at the tip the archive holds, and an
    /// archive commit that no longer indexes it. Refused when a live ref of that name exists.
    #[arg(long, value_name = "NAME")]
    pub restore: Option<String>,
}

pub fn run(session: &Session, args: &ArchiveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if let Some(name) = &args.restore {
        let report = engine::restore(session, name, args.dry_run)?;
        if ui.json_report(&report)? {
            return Ok(Exit::Success);
        }
        ui.line(if report.dry_run {
            format!(
                "would restore workflow {} at {} from the archive",
                report.workflow, report.tip
            )
        } else {
            format!(
                "restored workflow {} at {}: its live ref is back, and the archive no longer holds it",
                report.workflow, report.tip
            )
        })?;
        return Ok(Exit::Success);
    }
    let report = engine::archive(session, args.dry_run)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let verb = if report.dry_run {
        "would archive"
    } else {
        "archived"
    };
    if report.archived.is_empty() {
        ui.line("no finished workflow to archive")?;
    } else {
        ui.line(format!(
            "{verb} {} finished workflow{}: {}",
            report.archived.len(),
            if report.archived.len() == 1 { "" } else { "s" },
            names_shown(&report.archived)
        ))?;
    }
    if !report.claims.is_empty() {
        ui.line(format!(
            "{} {} claim{} no live workflow holds (archived or lapsed): {}",
            if report.dry_run {
                "would remove"
            } else {
                "removed"
            },
            report.claims.len(),
            if report.claims.len() == 1 { "" } else { "s" },
            names_shown(&report.claims)
        ))?;
    }
    for name in &report.moved_on {
        ui.line(format!(
            "workflow {name} moved on while it was archived: its ref stays, and the next `archive` looks again"
        ))?;
    }
    ui.line(format!(
        "the archive holds {} workflow{}",
        report.total,
        if report.total == 1 { "" } else { "s" }
    ))?;
    Ok(Exit::Success)
}

/// How many archived names the text lists; `--json` lists them all.
const NAMES_SHOWN: usize = 10;

/// The first [`NAMES_SHOWN`] of `names`, and how many more there are.
fn names_shown(names: &[String]) -> String {
    let shown = names[..names.len().min(NAMES_SHOWN)].join(", ");
    match names.len().saturating_sub(NAMES_SHOWN) {
        0 => shown,
        more => format!("{shown} and {more} more (--json lists them all)"),
    }
}
