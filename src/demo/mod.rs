//! The demo's entry point: a throwaway repository with a tiny shell project and a master plan,
//! and a scripted agent (and human) that drive this very binary through the workflow,
//! narrating every briefing and transition. Nothing is simulated: real git, real processes.
//! `git orchestrate demo` (src/cli/demo.rs) runs it and renders the report; the scenario is a
//! table of steps (scenario.rs) over the project's files (files.rs), carried out by runner.rs.

mod error;
mod files;
mod runner;
mod scenario;
mod ticket;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use error::DemoError;
use error::io;
pub use runner::StepRecord;
use runner::{DEMO_WORKFLOW, Runner};

use crate::exec;

/// Where to build the demo repository.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A new or empty directory to build it in and keep; a temporary one otherwise.
    pub dir: Option<PathBuf>,
    /// Keep the temporary repository.
    pub keep: bool,
    /// Run the ticket-mode scenario (src/demo/ticket.rs) instead of the TDD one.
    pub ticket: bool,
}

/// What the demo did, as `demo --json` reports it.
#[derive(Debug, Serialize)]
pub struct DemoReport {
    pub repository: PathBuf,
    pub kept: bool,
    pub steps: Vec<StepRecord>,
    pub audit_log: Vec<String>,
}

/// Runs the whole demo with this very binary, narrating to `out` (none: silent), and
/// reports what it did.
pub fn run(options: &Options, out: Option<&mut dyn Write>) -> Result<DemoReport, DemoError> {
    let exe = std::env::current_exe().map_err(io("find this binary"))?;
    let (repo, mut temp) = repository(options)?;
    let keep = temp.is_none() || options.keep;
    // `git orchestrate` inside the demo must be this binary, whatever else is installed.
    let path_env = exec::path_with_first(exe.parent().unwrap_or(Path::new("/")))
        .map_err(|e| io("build PATH")(std::io::Error::other(e)))?;
    let mut runner = Runner::new(repo.clone(), exe, path_env, out);
    let (intro, steps) = if options.ticket {
        (ticket::intro(&repo), ticket::scenario())
    } else {
        (scenario::intro(&repo), scenario::scenario())
    };
    runner.say(&intro)?;
    for step in steps {
        runner.perform(step)?;
    }
    let audit_log = runner.git(&[
        "log",
        "--format=%h %s",
        &crate::store::workflow_ref(DEMO_WORKFLOW),
    ])?;
    if keep {
        let dir = repo.display().to_string();
        runner.say(&format!(
            "\nThe demo repository is kept at {dir}\n  cd {dir} && git orchestrate status"
        ))?;
        // A TempDir deletes its directory on drop unless it is kept.
        if let Some(temp) = temp.take() {
            let _ = temp.keep();
        }
    } else {
        runner.say("\n(The demo repository was temporary and is removed now; `git orchestrate demo --keep` keeps it.)")?;
    }
    Ok(DemoReport {
        repository: repo,
        kept: keep,
        steps: runner.into_steps(),
        audit_log: audit_log.lines().map(str::to_string).collect(),
    })
}

/// The directory to build the demo in: `--dir` (new or empty), else a temporary one, which
/// is returned too so that it lives as long as the demo.
fn repository(options: &Options) -> Result<(PathBuf, Option<tempfile::TempDir>), DemoError> {
    let Some(dir) = &options.dir else {
        let temp = tempfile::Builder::new()
            .prefix("git-orchestrate-demo-")
            .tempdir()
            .map_err(io("create a temporary directory"))?;
        return Ok((temp.path().to_path_buf(), Some(temp)));
    };
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(io(format!("read {}", dir.display())))?
            .next()
            .is_some()
    {
        return Err(DemoError::NotEmpty(dir.clone()));
    }
    std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    Ok((dir.clone(), None))
}
