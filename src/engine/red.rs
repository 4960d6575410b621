//! The RED test in the shell (docs/integrity.md, "The oracle the agent cannot write"): what a
//! failing RED run pins as its test, and the GREEN step's run of it again with its pinned
//! files as the RED step left them. `workflow/red.rs` decides; this module gathers and runs.

use std::path::Path;

use super::evidence::{TestRun, run_test};
use super::scratch::Scratch;
use super::{EngineError, Facts, Session};
use crate::config::Config;
use crate::exec::RunOutput;
use crate::store::EntryType;
use crate::workflow::red::{self, RerunPlan};
use crate::workflow::state::{RedOutcome, RedPin, RedTest};
use crate::workflow::{State, evidence};

/// A RED step pins at most this many paths: a test is a few files, and every later run of it
/// puts them back.
const MAX_RED_PATHS: usize = 1000;

/// What a failing RED run is, and the line showing its test could not be read, if any.
#[derive(Clone, Debug, Default)]
pub struct RedRun {
    pub outcome: Option<RedOutcome>,
    pub syntax_error: Option<String>,
}

/// A failing RED run: no test when it did not run or its test lies out of the repository;
/// else the tree it left and the paths its step changed since the task began: pinned as its
/// test once the analysis accepts it (test files and files the step created), or shared (code
/// files that existed before it, beside which the test's lines were written).
pub fn outcome(
    session: &Session,
    state: &State,
    facts: &Facts,
    command: &str,
    test: &TestRun,
) -> Result<RedRun, EngineError> {
    let config = facts.config();
    let run = &test.output;
    let syntax_error = red::syntax_error(&run.output);
    let not_a_test = |why: String| {
        Ok(RedRun {
            outcome: Some(RedOutcome::NotATest(why)),
            syntax_error: syntax_error.clone(),
        })
    };
    if let Some(why) = red::did_not_run(command, run.exit, &run.output) {
        return not_a_test(format!("the test did not run ({why})"));
    }
    // A runner that reports per test must name a test that failed (docs/integrity.md,
    // "Per-test evidence"): a script that prints `ok` and exits 1 did not fail as a test does.
    let tests = match evidence::pinned_on_base(&test.evidence) {
        Ok(tests) => tests.unwrap_or_default(),
        Err(short) => {
            return not_a_test(format!("the test did not fail as a test fails ({short})"));
        }
    };
    let git = &session.git;
    let store = &session.store;
    let tree = git.worktree_tree(&store.index_path())?;
    // Where the task began: its previous step's checkpoint, or where the branch left main.
    let start = state
        .pr()
        .and_then(|pr| pr.last_checkpoint.as_deref())
        .or(state.pr().and_then(|pr| pr.base.as_deref()))
        .unwrap_or("HEAD")
        .to_string();
    // In-process: a RED that fails as it should is on the write path.
    let start_tree = store.tree_of(&start)?;
    // A file as main has it came from main (merged into the branch since), not from the step.
    let main_tree = store.tree_of(&facts.main).ok();
    let mut changed = Vec::new();
    for path in store.changed_paths(&start_tree, &tree)? {
        let from_main = match &main_tree {
            Some(main_tree) => {
                let here = store.tree_entry(&tree, &path)?;
                here.is_some() && store.tree_entry(main_tree, &path)? == here
            }
            None => false,
        };
        if !from_main {
            changed.push(path);
        }
    }
    if changed.len() > MAX_RED_PATHS {
        return not_a_test(format!(
            "the RED step changed {} files since the task began, and a RED test is pinned whole \
             (at most {MAX_RED_PATHS} files): leave what is not the test to the GREEN step",
            changed.len()
        ));
    }
    let mut paths = Vec::new();
    let mut shared = Vec::new();
    for path in changed {
        if let Some(why) = link_out(session, &tree, &path)? {
            return not_a_test(format!(
                "its test cannot be pinned: {why}, out of the repository (a test is a file of the \
                 repository, so that what it checks cannot change outside it)"
            ));
        }
        let created = store.tree_entry(&start_tree, &path)?.is_none();
        if created || config.is_test_path(&path) {
            paths.push(path);
        } else {
            shared.push(path);
        }
    }
    Ok(RedRun {
        outcome: Some(RedOutcome::Pinned(RedPin {
            tree,
            paths,
            shared,
            tests,
        })),
        syntax_error,
    })
}

/// Where `path`, a symbolic link in `tree`, leads out of the repository; `None` for a path
/// that is no link or stays inside.
pub fn link_out(session: &Session, tree: &str, path: &str) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let is_link = store
        .tree_entry(tree, path)?
        .is_some_and(|e| e.kind == EntryType::Link);
    if !is_link {
        return Ok(None);
    }
    let entry = |p: &str| match store.tree_entry(tree, p) {
        Ok(Some(e)) if e.kind == EntryType::Link => store
            .link_target(tree, p)
            .ok()
            .flatten()
            .map(red::Entry::Link),
        Ok(Some(e)) if e.kind == EntryType::Directory => Some(red::Entry::Directory),
        Ok(Some(_)) => Some(red::Entry::File),
        _ => None,
    };
    Ok(red::link_out_of_repository(path, &entry))
}

/// The task's RED test, run again at its GREEN step.
#[derive(Clone, Debug)]
pub struct Rerun {
    pub output: RunOutput,
    pub command: String,
    /// Pinned paths the GREEN step had changed, put back for the run.
    pub restored: Vec<String>,
    /// The run passed without running a test.
    pub not_run: Option<String>,
}

/// Runs the task's RED test again after its GREEN step's command passed (`own`), with its
/// pinned paths as the RED step left them ([`red::rerun_plan`]): the command's own run stands
/// when it is the RED command and the pinned paths are unchanged; in place when only they
/// are; else in a scratch worktree of the GREEN tree (`before`, or taken now) with them put
/// back. A pass that ran no test is no pass, nor one whose per-test evidence falls short
/// ([`evidence::passes`]). `None` when the own run stands and ran a test.
pub fn rerun(
    session: &Session,
    config: &Config,
    red_test: &RedTest,
    command: &str,
    own: &TestRun,
    before: Option<&str>,
) -> Result<Option<Rerun>, EngineError> {
    let workdir = session.store.workdir();
    let restored = match &red_test.tree {
        Some(tree) => session
            .store
            .differing_paths(tree, &red_test.paths, workdir)?,
        None => Vec::new(),
    };
    let run = |dir: &Path| {
        run_test(
            session,
            &red_test.command,
            dir,
            config.test.timeout,
            session.command_env()?,
        )
    };
    let test = match red::rerun_plan(red_test.command == command, restored.is_empty()) {
        RerunPlan::OwnRunStands => own.clone(),
        RerunPlan::InPlace => run(workdir)?,
        RerunPlan::Scratch => {
            let Some(pinned) = &red_test.tree else {
                return Err(EngineError::Internal(
                    "paths to put back, but no tree they were pinned in".into(),
                ));
            };
            let green = match before {
                Some(tree) => tree.to_string(),
                None => session.git.worktree_tree(&session.store.index_path())?,
            };
            let scratch = Scratch::new(session, "HEAD", &green)?;
            scratch.put(pinned, &red_test.paths)?;
            run(scratch.path())?
        }
    };
    let output = test.output;
    let not_run = output
        .exit
        .success()
        .then(|| {
            red::did_not_run(&red_test.command, output.exit, &output.output).or_else(|| {
                evidence::passes(&test.evidence, Some(&red_test.tests))
                    .err()
                    .map(|short| short.to_string())
            })
        })
        .flatten();
    if red::rerun_plan(red_test.command == command, restored.is_empty()) == RerunPlan::OwnRunStands
        && not_run.is_none()
    {
        return Ok(None);
    }
    Ok(Some(Rerun {
        output,
        command: red_test.command.clone(),
        restored,
        not_run,
    }))
}
