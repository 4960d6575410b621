//! A submit's test run in the agent's own working tree, the executor's `StepTest`, `RedPin`,
//! `RedRerun` and `StepGates` obligations (src/workflow/proof.rs): the step's command, what a
//! failing RED run pins as its test, the GREEN step's run of its task's RED test with its
//! pinned files as the RED step left them, and the gates on the tree the test ran on.
//! `workflow/red.rs` and `workflow/proof.rs` judge; this module gathers and runs.

use std::path::Path;

use super::here::gates_here;
use super::outcome::{RedRun, Rerun, StepRun};
use super::pytest_hooks;
use crate::config::Config;
use crate::engine::evidence::{TestRun, run_test};
use crate::engine::scratch::Scratch;
use crate::engine::verify::{GateSource, TreeVerification};
use crate::engine::{EngineError, Session};
use crate::gates::Reusable;
use crate::store::EntryType;
use crate::workflow::proof::{Recheck, Reuse, passes_on};
use crate::workflow::red::{self, Changed, RerunPlan};
use crate::workflow::{Expectation, State};
use crate::workflow::{cargo_files, pytest_files};

/// Runs the step's `command` in the working tree, taking the tree first when `take_tree`
/// asks (what passed is that tree only if nothing changed it meanwhile).
pub(super) fn step_test(
    session: &Session,
    config: &Config,
    command: &str,
    expect: Expectation,
    take_tree: bool,
) -> Result<StepRun, EngineError> {
    let before = if take_tree {
        Some(session.worktree_tree()?)
    } else {
        None
    };
    let test = run_test(
        session,
        command,
        session.store.workdir(),
        config.test.timeout,
        session.command_env()?,
    )?;
    Ok(StepRun {
        expect,
        test,
        before,
    })
}

/// What the failing RED run `step` pins ([`red::failed_as_a_test`], [`red::pinned`]): the
/// tree it left and the paths its step changed since the task began at `start`, a file as
/// `main` has it aside (it came from main, merged into the branch since, not from the step).
pub(super) fn red_pin(
    session: &Session,
    config: &Config,
    step: &StepRun,
    (command, start, main): (&str, &str, &str),
) -> Result<RedRun, EngineError> {
    let run = &step.test.output;
    let syntax_error = red::syntax_error(&run.output);
    let not_a_test = |why: String| RedRun {
        outcome: Some(crate::workflow::state::RedOutcome::NotATest(why)),
        syntax_error: syntax_error.clone(),
    };
    let tests = match red::failed_as_a_test(command, run.exit, &run.output, &step.test.evidence) {
        Ok(tests) => tests,
        Err(why) => return Ok(not_a_test(why)),
    };
    let store = &session.store;
    let tree = session.worktree_tree()?;
    // In-process: a RED that fails as it should is on the write path.
    let start_tree = store.tree_of(start)?;
    let main_tree = store.tree_of(main).ok();
    let mut paths = Vec::new();
    for path in store.changed_paths(&start_tree, &tree)? {
        let from_main = match &main_tree {
            Some(main_tree) => {
                let here = store.tree_entry(&tree, &path)?;
                here.is_some() && store.tree_entry(main_tree, &path)? == here
            }
            None => false,
        };
        if !from_main {
            paths.push(path);
        }
    }
    if let Some(why) = red::too_many_paths(paths.len()) {
        return Ok(not_a_test(why));
    }
    let mut changed = Vec::new();
    for path in paths {
        let link_out = link_out(session, &tree, &path)?;
        // The first link out is the verdict: nothing after it is read.
        let out = link_out.is_some();
        let created = !out && store.tree_entry(&start_tree, &path)?.is_none();
        let is_test = config.is_test_path(&path);
        changed.push(Changed {
            path,
            link_out,
            created,
            is_test,
        });
        if out {
            break;
        }
    }
    let mut outcome = red::pinned(
        (start_tree.to_string(), tree.clone()),
        changed,
        (tests, &step.test.evidence),
    );
    // The configuration file a `-c` names and the plugin a `-p` loads are pytest's own files
    // around the test as much as a `conftest.py` is: pinned with it as hooks.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &mut outcome
        && step.test.evidence.kind == crate::workflow::evidence::Kind::Junit
    {
        for file in crate::workflow::pytest_files::named_by_command(command) {
            if !pin.paths.contains(&file) && !pin.hooks.contains(&file) {
                pin.hooks.push(file);
            }
        }
        pin.hooks.sort();
    }
    // The script of the tree the RED command runs (`sh run_tests.sh`) is the test's command
    // as much as the command is: pinned as a hook (rewritten to run another test, or print
    // another's lines, it decides what the run reports), and a pytest it runs is read for
    // the files its `-c` and `-p` name, as the command's are. Only where the run reported
    // per test: a command whose exit code is all there is may run the very code the task
    // writes (`sh calc.sh mul 4 3 | grep -q .`), which its GREEN step must change.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &mut outcome
        && step.test.evidence.kind != crate::workflow::evidence::Kind::ExitCodeOnly
    {
        let junit = step.test.evidence.kind == crate::workflow::evidence::Kind::Junit;
        for file in pytest_hooks::script_files(session, &tree, command, junit)? {
            if !pin.paths.contains(&file) && !pin.hooks.contains(&file) {
                pin.hooks.push(file);
            }
        }
        pin.hooks.sort();
    }
    // So are mocha's configuration and the modules it and the command require: loaded
    // before any test, one that wraps `it` reports the pinned test passed unrun.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &mut outcome
        && step.test.evidence.kind == crate::workflow::evidence::Kind::MochaJson
    {
        for file in pytest_hooks::mocha_files(session, &tree, command)? {
            if !pin.paths.contains(&file) && !pin.hooks.contains(&file) {
                pin.hooks.push(file);
            }
        }
        pin.hooks.sort();
    }
    // So is the configuration file a jest command names with `--config`.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &mut outcome
        && step.test.evidence.kind == crate::workflow::evidence::Kind::JestJson
    {
        for file in crate::workflow::jest_files::named_by_command(command) {
            if !pin.paths.contains(&file) && !pin.hooks.contains(&file) {
                pin.hooks.push(file);
            }
        }
        pin.hooks.sort();
    }
    // So are vitest's configuration files, present or not (one a GREEN step adds is taken
    // out): vitest runs each before any test, and one that mocks the module under test makes
    // the pinned test pass with the task's code never run.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &mut outcome {
        use crate::workflow::vitest_files;
        // The configurations the RED tree has, with their text.
        let named = vitest_files::named_by_command(command);
        let mut present = std::collections::HashMap::new();
        for file in &named {
            if let Some(entry) = store.tree_entry(&tree, file)? {
                let text = match store.blob_within(&entry.id.to_string(), crate::input::CAP)? {
                    Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    Err(_) => String::new(),
                };
                present.insert(file.clone(), text);
            }
        }
        let mut files = vitest_files::read_by_vitest(
            named,
            |p| present.contains_key(p),
            |p| present.get(p).is_some_and(|t| t.contains("vite.config")),
        );
        // And the setup modules each configuration names, as the RED tree has them.
        let roots = vitest_files::roots(command);
        for (config, text) in &present {
            files.extend(vitest_files::setup_files(config, text, &roots));
        }
        for file in files {
            // A name as written that is a directory is no file to put back: its `index` is
            // among the names.
            let dir = store
                .tree_entry(&tree, &file)?
                .is_some_and(|e| matches!(e.kind, EntryType::Directory | EntryType::Submodule));
            if !dir && !pin.paths.contains(&file) && !pin.hooks.contains(&file) {
                pin.hooks.push(file);
            }
        }
        pin.hooks.sort();
    }
    // The plugin modules `pytest_plugins` names are test code for the pinned test's runs,
    // each put back as RED steps left it: a value only running the module tells cannot be
    // pinned, and is refused here, where the step that can write it out is.
    if let crate::workflow::state::RedOutcome::Pinned(pin) = &outcome
        && red::loads_runner_files(&pin.paths, &pin.hooks)
    {
        let runners = red::runners(&pin.paths, &pin.hooks);
        let mut configs = pytest_hooks::runner_files(session, &[&tree], runners)?;
        configs.extend(pin.hooks.iter().cloned());
        let mut declaring: Vec<String> = Vec::new();
        if runners.pytest {
            // The modules that may set `pytest_plugins`: every conftest.py, the pinned test
            // modules, and the plugins a `-p` loads (the command's, the configuration's).
            declaring.extend(configs.iter().filter(|p| p.ends_with(".py")).cloned());
            declaring.extend(pin.paths.iter().cloned());
            declaring.extend(pytest_hooks::addopts_plugin_files(
                session,
                |_| &tree,
                &configs,
            )?);
        }
        if let Err(why) = pytest_hooks::plugin_files(session, &tree, &declaring)? {
            return Ok(not_a_test(format!(
                "its test cannot be pinned: {why}, and which plugin modules it names (test \
                 code, pinned with the test) only running it tells: write it as a string or a \
                 list of strings"
            )));
        }
        // The `--config` a jest command names; another runner's `-c` names its own.
        let jest_commands: Vec<&str> = if runners.jest {
            vec![command]
        } else {
            Vec::new()
        };
        if let Err(why) =
            pytest_hooks::jest_module_files(session, |_| &tree, &configs, &jest_commands)?
        {
            return Ok(not_a_test(format!(
                "its test cannot be pinned: {why}, and which modules it names (test code, \
                 pinned with the test) only running it tells: write them out (a string, or a \
                 list or an object of strings)"
            )));
        }
    }
    Ok(RedRun {
        outcome: Some(outcome),
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

/// The task's RED test as a `RedRerun` obligation names it.
pub(super) struct RedTest<'a> {
    pub command: &'a str,
    pub tree: Option<&'a str>,
    pub paths: &'a [String],
    pub tests: &'a [String],
    /// The file(s) the RED run reported each pinned test from.
    pub files: &'a std::collections::BTreeMap<String, Vec<String>>,
    /// The runner's hook files on the test's way, put back with `paths`.
    pub hooks: &'a [String],
    pub same_command: bool,
}

/// Runs the task's RED test again after its GREEN step's command passed (`step`), with its
/// pinned paths as the RED step left them ([`red::rerun_plan`]): the step's own run stands
/// when it is the RED command and the pinned paths are unchanged; in place when only they
/// are; else in a scratch worktree of the tree the step ran on (or the working tree's, taken
/// now) with them put back. Judged by [`passes_on`]. `None` when the own run stands and ran a
/// test.
pub(super) fn red_rerun(
    session: &Session,
    config: &Config,
    red_test: &RedTest<'_>,
    step: &StepRun,
) -> Result<Option<Box<Rerun>>, EngineError> {
    let workdir = session.store.workdir();
    let store = &session.store;
    // The tree the step ran on, when it is needed: taken with the run, else now.
    let mut green = step.before.clone();
    // The runner's hooks are put back with the test's files: a `conftest.py` the GREEN step
    // added or changed, on the test's way or beside it (pytest loads every one of the
    // directories it collects), decides what the run reports, not what the code does; so
    // does pytest's configuration (an `addopts = -p plugin`, a `-k`, a `python_files`) and a
    // plugin module `pytest_plugins` names. Every one the RED tree or the working tree has
    // (untracked too: the working tree's tree adds them; ignored ones where pytest collects)
    // is as the RED tree has it, absent where it has none. A shared configuration file
    // (`pyproject.toml`, `tox.ini`, `setup.cfg`) counts by its pytest section only: one whose
    // `[project]` alone the GREEN step changed is left as it is.
    let mut put_back: Vec<String> = red_test
        .paths
        .iter()
        .chain(red_test.hooks)
        .cloned()
        .collect();
    let mut runner: Vec<String> = Vec::new();
    if let Some(pinned) = red_test.tree
        && red::loads_runner_files(red_test.paths, red_test.hooks)
    {
        let runners = red::runners(red_test.paths, red_test.hooks);
        let tree = match &green {
            Some(tree) => tree.clone(),
            None => session.worktree_tree()?,
        };
        runner.extend(pytest_hooks::runner_files(
            session,
            &[pinned, &tree],
            runners,
        )?);
        runner.extend(ignored_runner_files(session, runners)?);
        // The modules that may set `pytest_plugins`: every conftest.py, the pinned test
        // modules, and the plugins a `-p` loads, the command's (its hooks) and those of the
        // `addopts` of each configuration as the RED tree has it, which are put back too.
        let mut declaring: Vec<String> = Vec::new();
        if runners.pytest {
            let configs: Vec<String> = runner.iter().chain(red_test.hooks).cloned().collect();
            let addopts = pytest_hooks::addopts_plugin_files(session, |_| pinned, &configs)?;
            declaring.extend(configs.into_iter().filter(|p| p.ends_with(".py")));
            declaring.extend(red_test.paths.iter().cloned());
            declaring.extend(addopts.iter().cloned());
            runner.extend(addopts);
        }
        match pytest_hooks::plugin_files(session, pinned, &declaring)? {
            Ok(plugins) => runner.extend(plugins),
            Err(why) => {
                return Err(EngineError::BadInput {
                    message: format!(
                        "the task's RED test cannot be run with the plugins its RED step pinned: \
                         {why}, and which modules it names only running it tells"
                    ),
                    hint: "write `pytest_plugins` as a string or a list of strings, in a RED step"
                        .into(),
                });
            }
        }
        runner.extend(red_test.hooks.iter().cloned());
        let jest_commands: Vec<&str> = if runners.jest {
            vec![red_test.command]
        } else {
            Vec::new()
        };
        match pytest_hooks::jest_module_files(session, |_| pinned, &runner, &jest_commands)? {
            Ok(modules) => runner.extend(modules),
            Err(why) => {
                return Err(EngineError::BadInput {
                    message: format!(
                        "the task's RED test cannot be run with the modules its RED step's jest \
                         configuration names: {why}, which only running it tells"
                    ),
                    hint: "write them out (a string, or a list or an object of strings), in a \
                           RED step"
                        .into(),
                });
            }
        }
        runner.retain(|p| !red_test.paths.contains(p));
        runner.sort();
        runner.dedup();
        put_back.extend(runner.iter().cloned());
        put_back.sort();
        put_back.dedup();
        green = Some(tree);
    }
    let (restored, taken_out) = match red_test.tree {
        Some(tree) => {
            let mut restored = store.differing_paths(tree, &put_back, workdir)?;
            let mut same = Vec::new();
            for path in &restored {
                if runner.contains(path)
                    && pytest_files::is_shared_config(path)
                    && pytest_hooks::same_for_pytest(session, tree, path, workdir)?
                {
                    same.push(path.clone());
                }
            }
            restored.retain(|p| !same.contains(p));
            put_back.retain(|p| !same.contains(p));
            let mut taken_out = Vec::new();
            for path in restored.iter().filter(|p| runner.contains(p)) {
                if store.tree_entry(tree, path)?.is_none() {
                    taken_out.push(path.clone());
                }
            }
            (restored, taken_out)
        }
        None => (Vec::new(), Vec::new()),
    };
    let hooks: Vec<String> = restored
        .iter()
        .filter(|p| runner.contains(p))
        .cloned()
        .collect();
    let run = |dir: &Path| {
        run_test(
            session,
            red_test.command,
            dir,
            config.test.timeout,
            session.command_env()?,
        )
    };
    let plan = red::rerun_plan(red_test.same_command, restored.is_empty());
    let test = match plan {
        RerunPlan::OwnRunStands => step.test.clone(),
        RerunPlan::InPlace => run(workdir)?,
        RerunPlan::Scratch => {
            let Some(pinned) = red_test.tree else {
                return Err(EngineError::Internal(
                    "paths to put back, but no tree they were pinned in".into(),
                ));
            };
            let green = match green {
                Some(tree) => tree,
                None => session.worktree_tree()?,
            };
            let scratch = Scratch::new(session, "HEAD", &green)?;
            scratch.put(pinned, &put_back)?;
            run(scratch.path())?
        }
    };
    let TestRun { output, evidence } = test;
    let failure = passes_on(
        red_test.command,
        output.exit,
        &output.output,
        &evidence,
        (red_test.tests, red_test.paths, red_test.files),
    );
    let not_run = failure
        .as_ref()
        .and_then(|f| f.no_pass())
        .map(str::to_string);
    if plan == RerunPlan::OwnRunStands && not_run.is_none() {
        return Ok(None);
    }
    Ok(Some(Box::new(Rerun {
        output,
        command: red_test.command.to_string(),
        restored,
        taken_out,
        hooks,
        not_run,
    })))
}

/// The `conftest.py` files and pytest configuration files the working tree has but git
/// ignores, where pytest would collect them (not under a directory it skips by default: a
/// hidden one, `node_modules`, `build`, `dist`, `venv`, `*.egg`, or a virtual environment):
/// the GREEN step's run of its RED test must not load one the commit lacks.
fn ignored_runner_files(
    session: &Session,
    runners: red::Runners,
) -> Result<Vec<String>, EngineError> {
    let names = pytest_hooks::runner_names(runners);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let workdir = session.store.workdir();
    let files = session.git.ignored_files_named(&names)?;
    Ok(files
        .into_iter()
        .filter(|path| pytest_hooks::named_as_read(path))
        // cargo's build directory holds copies of manifests (`cargo package`'s), no package.
        .filter(|path| {
            !(cargo_files::is_manifest(path) && path.split('/').any(|dir| dir == "target"))
        })
        .filter(|path| {
            let parts: Vec<&str> = path.split('/').collect();
            let dirs = &parts[..parts.len().saturating_sub(1)];
            !dirs.iter().enumerate().any(|(i, dir)| {
                // cargo reads its configuration from a `.cargo` directory, whatever git ignores.
                let cargo_config = *dir == ".cargo" && i + 1 == dirs.len();
                (dir.starts_with('.') && !cargo_config)
                    || dir.ends_with(".egg")
                    || matches!(
                        *dir,
                        "node_modules" | "build" | "dist" | "venv" | "CVS" | "_darcs" | "{arch}"
                    )
                    || workdir
                        .join(parts[..=i].join("/"))
                        .join("pyvenv.cfg")
                        .exists()
            })
        })
        .collect())
}

/// The gates after the step's passing run `step` (of `command`), on the tree it ran on:
/// what they are asked about must be what the test ran on, and a test that changes the tree,
/// and a gate that changes it back, verify nothing (docs/integrity.md). Not run when the test
/// changed the tree taken before it; else [`gates_here`], a gate with the test's command
/// taking its run.
pub(super) fn step_gates(
    session: &Session,
    (state, config): (Option<&State>, &Config),
    command: &str,
    step: &StepRun,
) -> Result<TreeVerification, EngineError> {
    // Without gates the tree is taken for the record only (where the next task begins):
    // nothing here holds it, as nothing did before.
    let before = step
        .before
        .as_deref()
        .filter(|_| !config.preflight.is_empty());
    let changed_by_test = match before {
        Some(before) => {
            let after_test = session.worktree_tree()?;
            if after_test == before {
                Vec::new()
            } else {
                session.git.changed_files(before, &after_test)?
            }
        }
        None => Vec::new(),
    };
    if changed_by_test.is_empty() {
        // Every passing run records the tree it verified: the squash is checked against
        // it (docs/states.md), and a checkpoint of that tree needs no new preflight.
        let reusable = Reusable {
            command,
            run: &step.test.output,
        };
        return gates_here(
            session,
            (state, config),
            (before, Reuse::TestRun, Recheck::WorktreeTree),
            Some(reusable),
        );
    }
    // The gates would verify a tree the test did not run on: they are not run.
    Ok(TreeVerification {
        tree: before.map(str::to_string),
        key: config.preflight_key(),
        gates: Vec::new(),
        source: GateSource::Ran,
        changed_during: changed_by_test,
        protected: Vec::new(),
        failed: None,
        run: None,
    })
}
