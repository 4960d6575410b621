//! `git orchestrate init`: configure a repository and create its workflow.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::config::FILE_NAME;
use crate::engine::{self, Session};

/// Set up git-orchestrate in this repository (safe to run again).
///
/// Writes .orchestrate.toml if there is none (an existing one is never overwritten), installs
/// the git hooks (see `hooks`), adds each remote's fetch refspecs for the workflow state and
/// notes, and creates the workflow in INITIALIZING, or, when the remote already has it (a
/// fresh clone), adopts the remote's.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The branch PRs start from and merge into (default: main, else master, else the
    /// current branch).
    #[arg(long, value_name = "BRANCH")]
    pub main_branch: Option<String>,

    /// The preflight command every PASS must also pass, e.g. "cargo test".
    #[arg(long, value_name = "COMMAND")]
    pub preflight: Option<String>,

    /// Do not install the git hooks (`git orchestrate hooks install` does it later).
    #[arg(long)]
    pub no_hooks: bool,

    /// Start the workflow over although it existed here and its ref was deleted (without it,
    /// commands refuse and say how to restore the ref). Takes nothing from a remote.
    #[arg(long)]
    pub new: bool,
}

pub fn run(session: &Session, args: &InitArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::init(
        session,
        args.main_branch.as_deref(),
        args.preflight.as_deref(),
        args.new,
        !args.no_hooks,
    )?;
    if ui.json {
        ui.report(&report)?;
        return Ok(Exit::Success);
    }
    let mut lines = vec![if report.config_written {
        format!(
            "wrote {} (main branch: {})",
            report.config_path.display(),
            report.main_branch
        )
    } else {
        format!("kept {}", report.config_path.display())
    }];
    if let Some(note) = &report.config_note {
        lines.push(format!("note: {note}"));
    }
    for added in &report.refspecs_added {
        lines.push(format!(
            "added fetch refspec remote.{}.fetch {}",
            added.remote, added.refspec
        ));
    }
    lines.push(if let Some(adopted) = &report.adopted {
        format!(
            "ADOPTED workflow {} from {}: {} transitions, state {} ({} @ {}); this clone continues that history",
            report.workflow,
            adopted.remote,
            adopted.transitions,
            adopted.state,
            report.reference,
            &adopted.tip[..12]
        )
    } else if report.created {
        format!(
            "created workflow {} in INITIALIZING ({})",
            report.workflow, report.reference
        )
    } else {
        format!(
            "workflow {} exists ({}, state {})",
            report.workflow, report.reference, report.state
        )
    });
    lines.extend(
        match &report.hooks {
            Some(report) => super::hooks::report_text(report),
            None => {
                "hooks not installed (--no-hooks): `git orchestrate hooks install` installs them\n"
                    .to_string()
            }
        }
        .lines()
        .map(str::to_string),
    );
    if !ui.quiet {
        if report.config_written {
            lines.push(format!(
                "next: commit {FILE_NAME} on {} (git add {FILE_NAME} && git commit -m \"chore: configure git-orchestrate\"), \
                 then have your agent run `git orchestrate get-task`",
                report.main_branch
            ));
        } else {
            lines.push("next: have your agent run `git orchestrate get-task`".to_string());
        }
        for w in &report.warnings {
            lines.push(format!("WARNING: {w}"));
        }
    }
    for line in lines {
        ui.line(line)?;
    }
    Ok(Exit::Success)
}
