//! `git orchestrate demo`: runs the demo's scenario (src/demo/) with its narration on stdout,
//! or reports its steps as JSON.

use std::path::PathBuf;

use clap::Args;

use super::error::{CommandError, ErrorKind};
use super::{Exit, Failure, Ui};
use crate::demo::{self, DemoError, Options};

/// Run a whole PR in a throwaway repository with a built-in scripted agent.
///
/// Plan, branch, RED with analysis, GREEN, checkpoints, debugging, a locked and then an
/// unlocked scope reduction with a re-plan, an escalation a human answers, a code review
/// round with a finding, the squash, the master plan, the merge, and the start of the next
/// PR. Shows each briefing and transition, then the audit log.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Build the demo repository here (a new or empty directory) and keep it.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Keep the temporary demo repository and print where it is.
    #[arg(long)]
    pub keep: bool,

    /// Run a ticket instead (ticket mode): a manager and a developer, a rejection, a report
    /// the gates contradict, a subtask blocked after three rejections and reassigned with new
    /// priorContext, then the squash and the merge.
    #[arg(long)]
    pub ticket: bool,
}

/// `cli` is the program's whole command line (for the manual page the demo installs).
pub fn run(args: &DemoArgs, cli: clap::Command, ui: &mut Ui) -> Result<Exit, Failure> {
    let options = Options {
        dir: args.dir.clone(),
        keep: args.keep,
        ticket: args.ticket,
    };
    let mut stdout = std::io::stdout().lock();
    let narration: Option<&mut dyn std::io::Write> = if ui.json { None } else { Some(&mut stdout) };
    let report = demo::run(&options, narration).map_err(failure)?;
    drop(stdout);
    // The demo is the README's first step after `cargo install`: it puts the manual page
    // where `man` (and so `git orchestrate --help`) finds it, and says where.
    let installed = super::man::default_dir()
        .ok_or_else(|| "cannot tell where this program is".to_string())
        .and_then(|dir| {
            super::man::install(&dir, cli).map_err(|e| format!("{}: {e}", dir.display()))
        });
    if ui.json {
        ui.report(&report)?;
    } else {
        ui.text(&match installed {
            Ok(path) => format!(
                "\nThe manual page is installed: {} (`git orchestrate --help` opens it).\n",
                path.display()
            ),
            Err(e) => format!(
                "\nThe manual page could not be installed ({e}); `git orchestrate man --install --dir DIR` \
                 puts it into DIR/man1.\n"
            ),
        })?;
    }
    Ok(Exit::Success)
}

/// Each way the demo can stop, with its own kind and exit code.
fn failure(e: DemoError) -> Failure {
    let message = e.to_string();
    match e {
        DemoError::Narration(e) => Failure::Output(e),
        DemoError::NotEmpty(_) => CommandError::invalid_input(message, "Pass a new or empty directory to --dir.").into(),
        DemoError::Io { .. } => CommandError::new(ErrorKind::Io, message).caused_by(&e).into(),
        DemoError::Git(_) => CommandError::new(ErrorKind::Git, message).into(),
        DemoError::Unexpected(_) => CommandError::new(ErrorKind::Internal, message)
            .hint("A step of the demo did not do what the script expects: please report this as a git-orchestrate bug.")
            .into(),
    }
}
