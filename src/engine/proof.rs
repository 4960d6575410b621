//! The pieces every verification shares, each written once (docs/integrity.md): the configuration a
//! proof is judged by, read from the blob it pinned; the gates run in a scratch worktree;
//! a change's tests run on its base, where they must fail; and the tests that existed on a
//! PR's base that it changed or removed.

use crate::config::{Config, ConfigError, Origin, PinnedTests};
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session, io_error};
use crate::gates::{self, PreflightRun};
use crate::workflow::notes::ChangedTests;

/// The configuration in the config blob `blob`, pinned from branch `main` at its commit
/// `commit`, read from the object database within the input cap; the defaults when nothing
/// was pinned (main had no configuration then). The one reader of a pinned configuration:
/// the PR's `attest`, a ticket's checks and a human answer's requirement all go through it.
pub fn pinned_config(
    session: &Session,
    blob: Option<&str>,
    main: &str,
    commit: &str,
) -> Result<Config, EngineError> {
    let Some(blob) = blob else {
        return Ok(Config::default());
    };
    let origin = Origin::Pinned {
        main: main.to_string(),
        commit: commit.to_string(),
    };
    let bytes = session
        .store
        .blob_within(blob, crate::input::CAP)?
        .map_err(|size| ConfigError {
            origin: origin.to_string(),
            message: format!("{blob} is {size} bytes, over the limit, and is not read"),
        })?;
    let text = super::session::config_text(bytes, &origin)?;
    Ok(Config::parse(&text, &origin)?)
}

/// The gates in force, run once on the tree in `scratch`, and the files they changed there
/// (its baseline taken just before): what every verification's gate verdict is read from.
pub struct GatesRun {
    pub run: PreflightRun,
    pub changed: Vec<String>,
}

/// Runs the gates of `config` in `scratch` (none configured: an empty run), and names the
/// files they changed.
pub fn gates_in(
    session: &Session,
    config: &Config,
    scratch: &Scratch,
) -> Result<GatesRun, EngineError> {
    if config.preflight.is_empty() {
        return Ok(GatesRun {
            run: PreflightRun { gates: Vec::new() },
            changed: Vec::new(),
        });
    }
    let env = session.command_env()?;
    scratch.baseline()?;
    let run = gates::run_preflight(&config.preflight, scratch.path(), env)
        .map_err(io_error("run the gates in a scratch worktree"))?;
    let changed = scratch.changed()?;
    Ok(GatesRun { run, changed })
}

/// A change's `tests` (paths) on its base: the base's files (`base_tree`) with only the tests
/// put in as the change's `tree` has them, at its `commit`'s history with `tree` as the index, as the run on the change
/// had them, so that the two runs differ in the code alone (a test that tells them apart by
/// HEAD or the index passes both). The gates run there, and must fail, or the tests do not
/// test the change.
pub fn tests_on_base(
    session: &Session,
    config: &Config,
    (commit, tree): (&str, &str),
    base_tree: &str,
    tests: &[String],
) -> Result<GatesRun, EngineError> {
    let scratch = Scratch::with_index(session, commit, base_tree, tree)?;
    scratch.put(tree, tests)?;
    gates_in(session, config, &scratch)
}

/// Tests present on the PR's `base` that `head` (a commit or a tree) changes or removes: what
/// the reviewer is told, and what the final check and `attest` put back for the gates.
pub fn changed_test_paths(
    session: &Session,
    config: &Config,
    base: &str,
    head: &str,
) -> Result<Vec<String>, EngineError> {
    // From the PR's base, not the pin: after a rebase onto main as another workflow's merge
    // left it, what that merge changed is not this PR's.
    Ok(session
        .git
        .tree_changes(base, head)?
        .into_iter()
        .filter(|(how, path)| *how != "added" && config.is_test_path(path))
        .map(|(_, path)| path)
        .collect())
}

/// [`changed_test_paths`] as the final check and `attest` record them, under the policy in
/// force (`[gates] pinned_tests`); the gates' verdict with them put back is left for the
/// clean check to give. `None` when the PR changes no test that existed on its base.
pub fn changed_tests(
    session: &Session,
    config: &Config,
    base: &str,
    tree: &str,
) -> Result<Option<ChangedTests>, EngineError> {
    let paths = changed_test_paths(session, config, base, tree)?;
    if paths.is_empty() {
        return Ok(None);
    }
    let mode = match config.gates.pinned_tests {
        PinnedTests::Report => "report",
        PinnedTests::Enforce => "enforce",
    };
    Ok(Some(ChangedTests {
        paths,
        mode: mode.to_string(),
        passed: None,
        failed_gate: None,
        approvals: Vec::new(),
    }))
}
