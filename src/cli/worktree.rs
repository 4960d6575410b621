//! `git orchestrate worktree add|list|remove`: one workflow per linked worktree.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Exit, Failure, Ui};
use crate::engine::{
    self, Session, Unpushed, WorktreeAddReport, WorktreeEntry, WorktreeRemoveReport,
};

/// Give each agent a worktree of its own, with a workflow of its own
///
/// `worktree add NAME` makes a linked worktree beside the repository and workflow NAME, and
/// records NAME in that worktree's own git config (orchestrate.workflow, with
/// extensions.worktreeConfig), so that every command and hook run there acts on NAME with no
/// flag or variable. `--workflow` and GIT_ORCHESTRATE_WORKFLOW still win over it. `list`
/// shows each worktree's workflow, state, uncommitted and unpushed work; `remove` takes a
/// worktree away only when nothing in it would be lost, and keeps the workflow's history.
#[derive(Debug, Args)]
pub struct WorktreeArgs {
    #[command(subcommand)]
    pub action: WorktreeAction,
}

#[derive(Debug, Subcommand)]
pub enum WorktreeAction {
    /// Make a linked worktree, detached at the main branch's tip, for a new workflow NAME
    /// (created in INITIALIZING); `get-task` there starts its PR branch.
    Add {
        /// The workflow's name: letters, digits, '.', '_', '-'.
        #[arg(value_name = "NAME", allow_hyphen_values = true)]
        name: String,
        /// Where the worktree goes (default: beside the repository, `../<repo>-<NAME>`). It
        /// must not exist yet, or be an empty directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// Show every worktree: its branch, workflow and state, uncommitted and unpushed work.
    List,
    /// Remove the worktree whose own config records workflow NAME; refused while it has
    /// uncommitted or unpushed work. The workflow's refs stay.
    Remove {
        /// The workflow whose worktree goes.
        #[arg(value_name = "NAME", allow_hyphen_values = true)]
        name: String,
    },
}

pub fn run(session: &Session, args: &WorktreeArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    match &args.action {
        WorktreeAction::Add { name, path } => {
            let cwd = super::input::current_dir()?;
            let report = engine::worktree_add(session, name, path.as_deref(), &cwd)?;
            let text = add_text(&report, ui.quiet);
            ui.report_or_text(&report, &text)?;
        }
        WorktreeAction::List => {
            let report = engine::worktree_list(session)?;
            if !ui.json_report(&report)? {
                for entry in &report.worktrees {
                    for line in entry_lines(entry) {
                        ui.line(line)?;
                    }
                }
            }
        }
        WorktreeAction::Remove { name } => {
            let report = engine::worktree_remove(session, name)?;
            ui.report_or_text(&report, &remove_text(&report))?;
        }
    }
    Ok(Exit::Success)
}

fn quoted(path: &std::path::Path) -> String {
    crate::workflow::briefing::shell_quote(&path.display().to_string())
}

fn add_text(report: &WorktreeAddReport, quiet: bool) -> String {
    let mut text = format!("worktree  {}", quoted(&report.path));
    if report.default_path {
        text.push_str(" (the default: beside the repository, named after it and the workflow)");
    }
    text.push_str(&format!(
        "\nworkflow  {} ({}), recorded in that worktree's own config: orchestrate.workflow = {}\n\
         checkout  detached at {} ({}); get-task makes the PR branch there\n",
        report.workflow,
        report.state,
        report.workflow,
        report.main_branch,
        crate::short_id(&report.commit),
    ));
    if report.cleaned_half_made {
        text.push_str(
            "cleaned   the half-made worktree an interrupted `worktree add` left there (killed inside git's checkout)\n",
        );
    }
    if report.enabled_worktree_config && !quiet {
        text.push_str(
            "config    turned on extensions.worktreeConfig: each worktree has a config file of its own\n",
        );
    }
    text.push_str(&format!("next      {}\n", report.next));
    text
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// One worktree as people read it: its path, then a line per fact.
fn entry_lines(entry: &WorktreeEntry) -> Vec<String> {
    let marks: Vec<&str> = [(entry.primary, "primary"), (entry.current, "here")]
        .into_iter()
        .filter_map(|(on, mark)| on.then_some(mark))
        .collect();
    let mut lines = vec![if marks.is_empty() {
        entry.path.display().to_string()
    } else {
        format!("{} ({})", entry.path.display(), marks.join(", "))
    }];
    lines.push(format!(
        "  branch    {}",
        match (&entry.branch, &entry.head) {
            (Some(branch), _) => branch.clone(),
            (None, Some(head)) => format!("(detached at {})", crate::short_id(head)),
            (None, None) => "(none)".to_string(),
        }
    ));
    let from = match entry.workflow_from {
        "worktree" => "its own config",
        "config" => "shared git config",
        _ => "the default",
    };
    lines.push(format!(
        "  workflow  {} ({from}), {}",
        entry.workflow,
        entry
            .state
            .map_or("not created yet".to_string(), |s| s.to_string())
    ));
    lines.push(if entry.uncommitted.is_empty() {
        "  changes   none".to_string()
    } else {
        let shown: Vec<&str> = entry
            .uncommitted
            .iter()
            .take(10)
            .map(String::as_str)
            .collect();
        let more = entry.uncommitted.len().saturating_sub(shown.len());
        format!(
            "  changes   {} uncommitted: {}{}",
            plural(entry.uncommitted.len(), "file"),
            shown.join(", "),
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        )
    });
    lines.push(match &entry.unpushed_commits {
        Unpushed::NoRemote => "  unpushed  nothing (no remote)".to_string(),
        Unpushed::Commits { count: 0, .. } => "  unpushed  nothing".to_string(),
        Unpushed::Commits { count, upstream } => format!(
            "  unpushed  {}, not on {}",
            plural(*count, "commit"),
            match (upstream, &entry.branch) {
                (Some(upstream), _) => upstream.clone(),
                (None, Some(_)) => "any remote-tracking branch".to_string(),
                (None, None) => "any branch or remote-tracking branch".to_string(),
            }
        ),
    });
    lines
}

fn remove_text(report: &WorktreeRemoveReport) -> String {
    format!(
        "removed   worktree {} (workflow {})\nkept      {}: the workflow's history stays (`git orchestrate --workflow {} log`)\n",
        quoted(&report.path),
        report.workflow,
        report.kept_ref,
        report.workflow,
    )
}
