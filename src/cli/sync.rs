//! `git orchestrate sync [REMOTE] [--take local|remote]`: share workflow state, notes and PR
//! branches through a git remote.

use clap::{Args, ValueEnum};

use super::{Exit, Failure, Ui};
use crate::engine::{self, Action, BranchSync, NotesSync, Session, Side, SyncReport, WorkflowSync};

/// Bring this clone and a remote level: workflows, notes and PR branches.
///
/// Fetches the remote's workflows, notes and PR branches; adopts what only the remote has,
/// fast-forwards what it has more of, pushes (atomically, with a lease) what only this clone
/// has, and merges the notes by their lines. A workflow that moved on both sides is reported
/// and left as it is (exit 4) until you choose a side with --take. Adds the fetch refspecs
/// on first use.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The remote (default: `remote` in .orchestrate.toml, else origin, else the only one).
    #[arg(value_name = "REMOTE")]
    pub remote: Option<String>,

    /// For a workflow (--workflow, default main) that diverged: keep this clone's history
    /// (`local`, pushed with a lease) or the remote's (`remote`). The other tip is kept
    /// under refs/orchestrator/backups/<workflow>/, never destroyed.
    #[arg(long, value_enum, value_name = "SIDE")]
    pub take: Option<TakeSide>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TakeSide {
    Local,
    Remote,
}

fn short(id: &Option<String>) -> &str {
    id.as_deref().map_or("-", |id| crate::short_id(id))
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

pub fn run(session: &Session, args: &SyncArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let take = args.take.map(|side| match side {
        TakeSide::Local => Side::Local,
        TakeSide::Remote => Side::Remote,
    });
    let report = engine::sync(session, args.remote.as_deref(), take)?;
    let code = Exit::NotAllowed.when(report.diverged());
    if ui.json_report(&report)? {
        return Ok(code);
    }
    for line in report_text(session, &report) {
        ui.line(line)?;
    }
    if !ui.quiet {
        for w in &report.warnings {
            ui.line(format!("WARNING: {w}"))?;
        }
    }
    Ok(code)
}

/// The report as people read it: each workflow, the notes, each PR branch.
fn report_text(session: &Session, report: &SyncReport) -> Vec<String> {
    let remote = &report.remote;
    let mut lines = vec![format!("sync with {remote}")];
    for spec in &report.refspecs_added {
        lines.push(format!(
            "  added fetch refspec  remote.{remote}.fetch {spec}"
        ));
    }
    if report.workflows.is_empty() {
        lines.push("  no workflows on either side".to_string());
    }
    for w in &report.workflows {
        lines.push(format!(
            "  workflow {}: {}",
            w.workflow,
            workflow_what(remote, w)
        ));
        if w.action == Action::Diverged {
            diverged_lines(session, remote, w, &mut lines);
        }
    }
    lines.push(format!("  notes: {}", notes_what(remote, &report.notes)));
    for b in &report.branches {
        lines.push(format!(
            "  branch {} (workflow {}): {}",
            b.branch,
            b.workflow,
            branch_what(remote, b)
        ));
    }
    for (what, prs) in [
        ("renewed", &report.claims.renewed),
        ("released", &report.claims.released),
        ("lost", &report.claims.lost),
        ("archived", &report.claims.archived),
    ] {
        if !prs.is_empty() {
            lines.push(format!("  claims {what}: {}", prs.join(", ")));
        }
    }
    if let Some(archived) = report.archived.as_ref().filter(|a| !a.archived.is_empty()) {
        lines.push(format!(
            "  [archive] auto: archived {} finished workflow{} (the archive holds {})",
            archived.archived.len(),
            if archived.archived.len() == 1 {
                ""
            } else {
                "s"
            },
            archived.total
        ));
    }
    if report.rounds > 1 {
        lines.push(format!(
            "  {remote} changed during the sync: done in {} rounds",
            report.rounds
        ));
    }
    lines
}

/// What the sync did with a workflow.
fn workflow_what(remote: &str, w: &WorkflowSync) -> String {
    let state = w.state.map(|s| format!(" ({s})")).unwrap_or_default();
    match w.action {
        Action::Nothing => format!("up to date{state}"),
        Action::Adopt => format!("adopted from {remote}{state}"),
        Action::FastForward => {
            format!("fast-forwarded {}{state}", plural(w.behind, "transition"))
        }
        Action::Push if w.remote_tip.is_none() => format!("pushed (new on {remote}){state}"),
        Action::Push => format!("pushed {}{state}", plural(w.ahead, "transition")),
        Action::TakeLocal => format!(
            "took this clone's history{state}; {remote}'s tip {} is kept as {}",
            short(&w.remote_tip),
            w.backup.as_deref().unwrap_or("-")
        ),
        Action::TakeRemote => format!(
            "took {remote}'s history{state}; this clone's tip is kept as {}",
            w.backup.as_deref().unwrap_or("-")
        ),
        Action::Diverged => format!(
            "DIVERGED: this clone {} ({} since the fork), {remote} {} ({} since the fork); nothing changed",
            short(&w.tip),
            plural(w.ahead, "transition"),
            short(&w.remote_tip),
            plural(w.behind, "transition")
        ),
    }
}

/// A diverged workflow: the transitions on each side since the fork, and how to choose.
fn diverged_lines(session: &Session, remote: &str, w: &WorkflowSync, lines: &mut Vec<String>) {
    if w.base.is_none() {
        lines.push(
            "    the two histories share no transition: one of them was started afresh".to_string(),
        );
    }
    for (side, entries) in [("here", &w.local_since), (remote, &w.remote_since)] {
        for e in entries {
            lines.push(format!(
                "    {side:>8}  {} {}",
                crate::short_id(&e.commit),
                e.subject
            ));
        }
    }
    let flag = if w.workflow == session.store.workflow() {
        String::new()
    } else {
        format!(" --workflow {}", w.workflow)
    };
    lines.push(format!(
        "    choose one: `git orchestrate{flag} sync {remote} --take local` (push this clone's) or \
         `--take remote` (adopt {remote}'s); the other tip is kept under refs/orchestrator/backups/"
    ));
}

/// What the sync did with the notes.
fn notes_what(remote: &str, notes: &NotesSync) -> String {
    match (notes.action, notes.merged) {
        (Action::Push, true) => format!("merged with {remote}'s (union of lines), pushed"),
        (Action::Push, false) => "pushed".to_string(),
        (Action::Adopt, _) => format!("adopted from {remote}"),
        (Action::FastForward, _) => "fast-forwarded".to_string(),
        _ => "up to date".to_string(),
    }
}

/// What the sync did with a PR branch, or why it did not move it.
fn branch_what(remote: &str, b: &BranchSync) -> String {
    if let Some(why) = &b.not_moved {
        return format!("NOT updated: {why}");
    }
    match b.action {
        Action::Nothing => "up to date".to_string(),
        Action::Adopt => format!("created from {remote}/{}", b.branch),
        Action::FastForward => "fast-forwarded".to_string(),
        Action::Push => "pushed".to_string(),
        Action::TakeLocal => format!(
            "pushed this clone's; {remote}'s tip is kept as {}",
            b.backup.as_deref().unwrap_or("-")
        ),
        Action::TakeRemote => format!(
            "moved to {remote}'s; this clone's tip is kept as {}",
            b.backup.as_deref().unwrap_or("-")
        ),
        Action::Diverged => format!(
            "DIVERGED from {remote}/{}; nothing changed (merge or rebase it, or sync --take)",
            b.branch
        ),
    }
}
