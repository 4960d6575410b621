//! A test command's run with its per-test evidence (docs/integrity.md, "Per-test evidence"):
//! the report the runner is asked for goes to a fresh directory of random name outside the
//! tree, which no one could name before the run, so that a file there was written during it;
//! what the run reports is read by `workflow/evidence`.

use std::path::Path;
use std::time::Duration;

use super::{EngineError, Session, io_error};
use crate::exec::{self, CommandEnv, RunOutput, ShellOptions};
use crate::workflow::evidence::{self, Evidence, ReportAsk, ReportFile};

/// A test command's run and what it reports per test.
#[derive(Clone, Debug)]
pub struct TestRun {
    pub output: RunOutput,
    pub evidence: Evidence,
}

/// Runs `command` (as the agent gave it) in `dir` asking its runner for a per-test report
/// where it can ([`evidence::request`]), and reads what the run reports. The report's
/// directory ([`ReportDir`]) is a new one of this user's, beside the scratch worktrees and
/// never inside the repository, removed after the run. A report file that is not a plain
/// file is no report.
pub fn run_test(
    session: &Session,
    command: &str,
    dir: &Path,
    timeout: Duration,
    env: &CommandEnv,
) -> Result<TestRun, EngineError> {
    let request = evidence::request(command);
    let reports = match request.report {
        Some(ask) => Some(ReportDir::new(
            env.scratch_dir(session.store.common_dir()),
            ask,
        )?),
        None => None,
    };
    let path = reports.as_ref().map(|r| r.path().join("report"));
    let path_text = path.as_ref().map(|p| p.to_string_lossy().into_owned());
    let asked = path_text.as_deref().map(|p| request.command_with(p));
    let mut vars = request.env(path_text.as_deref().unwrap_or_default());
    vars.extend(super::scratch::build_dir_of(dir));
    let output = exec::run_shell_with(
        asked.as_deref().unwrap_or(&request.command),
        dir,
        timeout,
        env,
        ShellOptions {
            vars: &vars,
            ..ShellOptions::default()
        },
    )
    .map_err(io_error(format!("run the test command `{command}`")))?;
    let report = match &path {
        None => ReportFile::NotAsked,
        Some(path) => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() && meta.len() <= crate::input::CAP => {
                ReportFile::Written(std::fs::read(path).map_err(io_error("read the test report"))?)
            }
            _ => ReportFile::Absent,
        },
    };
    let evidence = evidence::read(&request, &report, &output.output).relative_to(&roots(dir));
    Ok(TestRun { output, evidence })
}

/// The directory a runner's report goes to, in `root` (the scratch worktrees' directory),
/// removed when dropped. Its name is random and new, so that a file in it was written during
/// the run. pytest makes the directories its `--junitxml` path names, so for it the directory
/// is only named: every test command is asked for a pytest report, and making and removing a
/// directory for each run that runs no pytest was a twentieth of a `submit-work`'s own
/// instructions (benches/orchestrate.rs). The other runners write into one made for them.
enum ReportDir {
    Made(tempfile::TempDir),
    Named(NamedDir),
}

/// A directory only named: removed on drop if the run made it.
struct NamedDir(std::path::PathBuf);

impl Drop for NamedDir {
    fn drop(&mut self) {
        // Not following a link the run may have left in its place (`remove_dir_all` removes
        // the link itself).
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl ReportDir {
    fn new(root: std::path::PathBuf, ask: ReportAsk) -> Result<ReportDir, EngineError> {
        std::fs::create_dir_all(&root).map_err(io_error("make the scratch directory"))?;
        if matches!(ask, ReportAsk::PytestJunit | ReportAsk::PytestIfRun) {
            return Ok(ReportDir::Named(NamedDir(root.join(random_name()))));
        }
        tempfile::Builder::new()
            .prefix("report-")
            .tempdir_in(&root)
            .map(ReportDir::Made)
            .map_err(io_error("make a directory for the test report"))
    }

    fn path(&self) -> &Path {
        match self {
            ReportDir::Made(dir) => dir.path(),
            ReportDir::Named(NamedDir(dir)) => dir,
        }
    }
}

/// `report-` and 128 bits no one can foresee: SipHash under this process's random keys
/// (`RandomState`), which each new state steps on.
fn random_name() -> String {
    use std::hash::{BuildHasher as _, RandomState};
    let state = RandomState::new();
    format!(
        "report-{:016x}{:016x}",
        state.hash_one(std::process::id()),
        state.hash_one(std::time::SystemTime::now())
    )
}

/// The spellings of `dir` a runner may name its test files by (jest names them by absolute
/// path): the base run and the final tree's run are in different directories, and a test
/// is pinned by the same id in both. `dir` is resolved once, at its first run, and
/// remembered: a verification runs each task's tests in the same two worktrees, and
/// resolving them again at every run was some 1,000 failed `readlink`s of an attest (the
/// bench's `attest` mode). Only the last few directories are remembered, so a long-lived
/// process (the MCP server) keeps no more.
fn roots(dir: &Path) -> Vec<String> {
    use std::sync::{Mutex, PoisonError};
    /// The worktrees a verification runs in at once, and then some.
    const KEPT: usize = 8;
    type Resolved = Vec<(std::path::PathBuf, Option<String>)>;
    static RESOLVED: Mutex<Resolved> = Mutex::new(Vec::new());
    let mut resolved = RESOLVED.lock().unwrap_or_else(PoisonError::into_inner);
    let real = match resolved.iter().find(|(d, _)| d == dir) {
        Some((_, real)) => real.clone(),
        None => {
            let real = dir
                .canonicalize()
                .ok()
                .map(|real| real.to_string_lossy().into_owned());
            if resolved.len() >= KEPT {
                resolved.remove(0);
            }
            resolved.push((dir.to_path_buf(), real.clone()));
            real
        }
    };
    std::iter::once(dir.to_string_lossy().into_owned())
        .chain(real)
        .collect()
}
