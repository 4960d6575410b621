//! A pinned RED test's pair of runs for the executor (docs/integrity.md, "RED proves itself
//! at the end"): on the base with its files put in as its step left them, where it must
//! fail, and on the final tree with every pinned file as its latest pin left it, where it
//! must pass; in two worktrees that differ in their files only, made and run in orders drawn
//! at random, reset between tasks and between the `[verify] runs` repeats.

use super::outcome::{Outcome, RedPair};
use super::pytest_hooks;
use crate::config::Config;
use crate::engine::evidence::{TestRun, run_test};
use crate::engine::scratch::Scratch;
use crate::engine::scratch::TestCode;
use crate::engine::{EngineError, Session, io_error};
use crate::exec::CommandEnv;
use crate::exec::orphans::Reaper;
use crate::workflow::proof::{PinnedTest, judge_pair};
use crate::workflow::{evidence, pytest_files, red};

/// A fair coin, from the standard library's per-process random hash keys: which of the two
/// RED worktrees is made first, and which runs first, is not for a test to know.
fn coin() -> bool {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish() & 1 == 1
}

/// Ends what `what` left running, under a [`Reaper`] (unconfined verification).
pub fn end_orphans(reaper: Option<&Reaper>, what: &str) -> Result<(), EngineError> {
    match reaper {
        Some(reaper) => reaper
            .end_orphans()
            .map_err(io_error(format!("end what {what} left running"))),
        None => Ok(()),
    }
}

/// The commits and trees the RED tests are judged between.
struct Trees {
    /// The PR's base commit, and its tree.
    base: String,
    base_tree: String,
    /// The final tree.
    squashed: String,
}

/// The pinned pairs of one plan, run one after the other in the same two worktrees.
pub struct Pairs<'a> {
    session: &'a Session,
    config: &'a Config,
    reaper: Option<&'a Reaper>,
    trees: Trees,
    /// Every pinned test of the plan: the squashed worktree holds all their pins.
    reds: Vec<PinnedTest>,
    worktrees: Option<(Scratch<'a>, Scratch<'a>)>,
    /// The test whose runs came last: what a changed tree is blamed on.
    last: Option<PinnedTest>,
    /// The squashed worktree was reset by the tree check of the last pair, and nothing ran
    /// since ([`Pairs::unchanged`], [`Pairs::ran_elsewhere`]): the next pair's needs no other.
    squashed_reset: std::cell::Cell<bool>,
    /// The hooks [`put_hooks`] put into the squashed worktree otherwise than its commit has
    /// them, for a refusal to name.
    hooks_put: Vec<String>,
    /// The squashed worktree's test code ([`test_code_of`]): every pin's paths and hooks,
    /// and the hooks put, looked up once per file a check reads.
    test_code: std::collections::HashSet<std::path::PathBuf>,
}

impl<'a> Pairs<'a> {
    pub fn new(
        session: &'a Session,
        config: &'a Config,
        reaper: Option<&'a Reaper>,
        (base, squashed): (&str, &str),
        reds: Vec<PinnedTest>,
    ) -> Result<Pairs<'a>, EngineError> {
        let base_tree = session.store.tree_of(base)?;
        let test_code = test_code_of(&reds, &[]);
        Ok(Pairs {
            session,
            config,
            reaper,
            trees: Trees {
                base: base.to_string(),
                base_tree,
                squashed: squashed.to_string(),
            },
            reds,
            worktrees: None,
            last: None,
            squashed_reset: std::cell::Cell::new(false),
            hooks_put: Vec::new(),
            test_code,
        })
    }

    /// The pinned test `pinned`'s runs on the base and on the final tree, `[verify] runs`
    /// times: its pair's outcome, or that it is flaky, or that a repeat changed the tree.
    pub fn run(&mut self, pinned: &PinnedTest) -> Result<Outcome, EngineError> {
        let previous = self.worktrees.take();
        let squashed_reset = self.squashed_reset.replace(false);
        // The test's files and shared files as its step left them, on the base, for all its
        // repeats: each reset between them keeps them as put in.
        let on_base_paths: Vec<String> =
            pinned.paths.iter().chain(&pinned.shared).cloned().collect();
        let (mut before, squashed, hooks_put) = task_worktrees(
            self.session,
            (&self.trees, &self.reds),
            (previous, squashed_reset),
            &on_base_paths,
        )?;
        if let Some(hooks_put) = hooks_put {
            self.hooks_put = hooks_put;
            self.test_code = test_code_of(&self.reds, &self.hooks_put);
        }
        before.pin(&pinned.tree, &on_base_paths)?;
        let (before, squashed) = &*self.worktrees.insert((before, squashed));
        self.last = Some(pinned.clone());
        let code = &self.test_code;
        let test_code = |path: &std::path::Path| code.contains(path);
        let (on_base, on_tree) = match run_red_repeated(
            self.session,
            self.config,
            pinned,
            (before, squashed),
            (self.reaper, &test_code),
        )? {
            Ok(runs) => runs,
            Err(outcome) => return Ok(outcome),
        };
        let proven = evidence::red_proven(
            (&on_base.evidence, on_base.output.exit),
            (&on_tree.evidence, on_tree.output.exit),
            &pinned.paths,
        );
        let not_run = on_tree
            .output
            .exit
            .success()
            .then(|| red::did_not_run(&pinned.command, on_tree.output.exit, &on_tree.output.output))
            .flatten();
        let failure = judge_pair(
            on_base.output.exit,
            on_tree.output.exit,
            not_run.as_deref(),
            proven.as_ref().err(),
        );
        // Every `conftest.py` put is one such a test's run loaded.
        let hooks = if red::loads_runner_files(&pinned.paths, &pinned.hooks) {
            self.hooks_put.clone()
        } else {
            Vec::new()
        };
        Ok(Outcome::Red(Box::new(RedPair {
            hooks,
            test: pinned.clone(),
            on_base,
            on_tree,
            proven,
            failure,
        })))
    }

    /// Whether the last pair's runs left the squashed worktree's files as they were made: the
    /// final tree is where every task's test must pass, and a run that wrote into it (either
    /// run: unconfined, the base's can reach it) would hand a later task's test what the
    /// commit lacks. The base's worktree may only make later base runs fail.
    ///
    /// The compare is the squashed worktree's reset too, which the next pair's then skips
    /// (one walk of it, not two), unless something else runs between them.
    pub fn unchanged(&self) -> Result<Outcome, EngineError> {
        let changed = match &self.worktrees {
            Some((_, squashed)) => {
                let test_code = |path: &std::path::Path| self.test_code.contains(path);
                match squashed.reset_changed(&test_code) {
                    Ok(changed) => {
                        self.squashed_reset.set(true);
                        changed
                    }
                    // A reset that failed (a directory a test made unremovable) is the next
                    // pair's to meet again, which then makes new worktrees: what changed is
                    // compared as it is now, by the same rule, with what the watch saw.
                    Err(_) => squashed.changed_seeing(&test_code)?,
                }
            }
            None => Vec::new(),
        };
        Ok(Outcome::Tree {
            by: self.last.clone(),
            changed,
        })
    }
}

impl Pairs<'_> {
    /// Something other than a pair ran (another obligation of the plan): the next pair
    /// resets the squashed worktree again, whatever the last tree check did.
    pub fn ran_elsewhere(&self) {
        self.squashed_reset.set(false);
    }
}

/// The base's worktree and the squashed commit's, made in an order drawn at random. Both
/// runs see one history and one index: a test that tells the trees apart by HEAD, the log
/// or what is staged, not by the code, cannot pass one and fail the other.
fn red_worktrees<'a>(
    session: &'a Session,
    trees: &Trees,
) -> Result<(Scratch<'a>, Scratch<'a>), EngineError> {
    let (base, base_tree) = (trees.base.as_str(), trees.base_tree.as_str());
    Ok(if coin() {
        let before = Scratch::with_index(session, base, base_tree, base_tree)?;
        (
            before,
            Scratch::with_index(session, base, &trees.squashed, base_tree)?,
        )
    } else {
        let squashed = Scratch::with_index(session, base, &trees.squashed, base_tree)?;
        (
            Scratch::with_index(session, base, base_tree, base_tree)?,
            squashed,
        )
    })
}

/// The base's worktree and the squashed commit's for one task's RED test, the squashed one
/// with every pinned path as its latest pin left it: the previous task's two, reset to how
/// they were made (docs/integrity.md, "RED proves itself at the end"), else new ones, with
/// the hooks [`put_hooks`] put into the new squashed one.
/// Nothing an earlier task's test left there, tracked, untracked or ignored (an ignored
/// marker file), is seen by the next; a reset costs no git process, a new pair ten.
fn task_worktrees<'a>(
    session: &'a Session,
    (trees, reds): (&Trees, &[PinnedTest]),
    (previous, squashed_reset): (Option<(Scratch<'a>, Scratch<'a>)>, bool),
    next: &[String],
) -> Result<(Scratch<'a>, Scratch<'a>, Option<Vec<String>>), EngineError> {
    let reset = previous
        .map(|(mut before, squashed)| {
            // The previous task's pinned files are taken out by this reset; the directories
            // it added that this task's pin goes into stay, emptied.
            before.unpin_keeping(next);
            (before, squashed)
        })
        .filter(|(before, squashed)| {
            before.reset().is_ok() && (squashed_reset || squashed.reset().is_ok())
        });
    if let Some((before, squashed)) = reset {
        // Reset to what it was settled as: the pins are in, and the baseline taken then is
        // what it is compared with.
        return Ok((before, squashed, None));
    }
    let (mut before, mut squashed) = red_worktrees(session, trees)?;
    before.settle();
    // Only the paths whose latest pin differs from the squashed commit's: a pin the squash
    // kept as it was is there already, and writing it again costs the filesystem a removed
    // and a new inode per test (the bench's `attest` mode). Nothing has run in the new
    // worktree yet, and each red's paths are compared after the reds before it were put. A
    // path with a link above it is put, as before: the put refuses to write through it.
    for red in reds {
        let differ = session
            .store
            .differing_paths(&red.tree, &red.paths, squashed.path())?;
        let to_put: Vec<String> = red
            .paths
            .iter()
            .filter(|p| differ.contains(p) || link_above(squashed.path(), p))
            .cloned()
            .collect();
        squashed.put(&red.tree, &to_put)?;
    }
    let hooks_put = put_hooks(session, (trees, reds), &squashed)?;
    squashed.settle();
    squashed.baseline()?;
    Ok((before, squashed, Some(hooks_put)))
}

/// The runner's hook files into the squashed worktree as RED steps left them
/// (docs/integrity.md, "Per-test evidence"): a hook is test code, which RED steps write.
/// They are every red's [`PinnedTest::hooks`] (those on its test's way) and, when a pinned
/// test's runs load the runner's files ([`red::loads_runner_files`]), every `conftest.py`
/// and configuration file of its runner the squashed commit or the base has anywhere
/// (pytest loads each `conftest.py` of a directory it collects, beside the test's way too),
/// the plugin modules `pytest_plugins` names and those a configuration's `addopts` loads
/// with `-p`, and the modules jest's configuration names; a shared configuration file only
/// where its runner's section differs (src/workflow/pytest_files.rs). Each as the latest RED step that changed it left it (one among
/// its pinned or shared paths), else as the PR's base has it (absent where it has none): a
/// `conftest.py` a GREEN step, a checkpoint or a later commit added or changed, which makes
/// pytest report a test passed whose body never ran, is not what the pinned tests run with;
/// a fixture a later task's RED step added for its own test is. Only what differs from the
/// squashed commit's is written, and named.
fn put_hooks(
    session: &Session,
    (trees, reds): (&Trees, &[PinnedTest]),
    squashed: &Scratch,
) -> Result<Vec<String>, EngineError> {
    let mut put = Vec::new();
    let mut hooks: Vec<String> = reds.iter().flat_map(|r| r.hooks.clone()).collect();
    let from = |hook: &str| {
        reds.iter()
            .rev()
            .find(|r| r.paths.iter().chain(&r.shared).any(|p| p == hook))
            .map_or(trees.base_tree.as_str(), |r| r.tree.as_str())
    };
    let runners = reds
        .iter()
        .filter(|r| red::loads_runner_files(&r.paths, &r.hooks))
        .fold(red::Runners::default(), |all, r| {
            all | red::runners(&r.paths, &r.hooks)
        });
    if runners != red::Runners::default() {
        hooks.extend(pytest_hooks::runner_files(
            session,
            &[&trees.squashed, &trees.base_tree],
            runners,
        )?);
        // The plugin modules the pinned test modules and the `conftest.py` files name, as
        // each is put (its latest RED step's, else the base's).
        // So do the plugins a `-p` loads: the commands' (their hooks) and those of the
        // `addopts` of each configuration as it is put, which are put too.
        let mut declaring: Vec<String> = Vec::new();
        if runners.pytest {
            let addopts = pytest_hooks::addopts_plugin_files(session, from, &hooks)?;
            declaring.extend(reds.iter().flat_map(|r| r.paths.clone()));
            declaring.extend(hooks.iter().filter(|h| h.ends_with(".py")).cloned());
            declaring.extend(addopts.iter().cloned());
            hooks.extend(addopts);
        }
        declaring.sort();
        declaring.dedup();
        for module in &declaring {
            match pytest_hooks::plugin_files(session, from(module), std::slice::from_ref(module))? {
                Ok(plugins) => hooks.extend(plugins),
                Err(why) => {
                    return Err(EngineError::BadInput {
                        message: format!(
                            "the pinned tests cannot be run with the plugins RED steps pinned: \
                             {why}, and which modules it names only running it tells"
                        ),
                        hint: "write `pytest_plugins` as a string or a list of strings".into(),
                    });
                }
            }
        }
        // The modules jest's configuration names, as each configuration is put, and the
        // configuration a jest pin's command names with `--config` (another runner's `-c`
        // names its own).
        let commands: Vec<&str> = reds
            .iter()
            .filter(|r| red::runners(&r.paths, &r.hooks).jest)
            .map(|r| r.command.as_str())
            .collect();
        match pytest_hooks::jest_module_files(session, from, &hooks, &commands)? {
            Ok(modules) => hooks.extend(modules),
            Err(why) => {
                return Err(EngineError::BadInput {
                    message: format!(
                        "the pinned tests cannot be run with the modules jest's configuration \
                         names as RED steps pinned it: {why}, which only running it tells"
                    ),
                    hint: "write them out (a string, or a list or an object of strings)".into(),
                });
            }
        }
        // A pinned one is put with its test's paths.
        hooks.retain(|h| !reds.iter().any(|r| r.paths.contains(h)));
    }
    hooks.sort();
    hooks.dedup();
    for hook in &hooks {
        let from = from(hook);
        // A shared configuration file is put (whole) only where its pytest section differs.
        if pytest_files::is_shared_config(hook)
            && pytest_hooks::same_for_pytest(session, from, hook, squashed.path())?
        {
            continue;
        }
        let hook = std::slice::from_ref(hook);
        if !session
            .store
            .differing_paths(from, hook, squashed.path())?
            .is_empty()
        {
            squashed.put(from, hook)?;
            put.extend_from_slice(hook);
        }
    }
    Ok(put)
}

/// Whether a directory on the way to `path` in the worktree `dir` is anything but a real
/// directory (a link, say): a comparison there would read through it.
fn link_above(dir: &std::path::Path, path: &str) -> bool {
    std::path::Path::new(path)
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .any(|a| !std::fs::symlink_metadata(dir.join(a)).is_ok_and(|m| m.is_dir()))
}

/// The squashed worktree's test code, whose rewrite counts though its bytes were put back
/// ([`TestCode`]): each pinned test's files and runner's files, and the hooks put in.
fn test_code_of(
    reds: &[PinnedTest],
    hooks_put: &[String],
) -> std::collections::HashSet<std::path::PathBuf> {
    reds.iter()
        .flat_map(|r| r.paths.iter().chain(&r.hooks))
        .chain(hooks_put)
        .map(std::path::PathBuf::from)
        .collect()
}

/// The RED test's two runs, `[verify] runs` times over in the same worktrees, reset between
/// (docs/integrity.md, "Repeat"): the first pair when every run agrees on each tree, else the
/// outcome that names the test flaky (or the one of a run that wrote into the squashed tree).
fn run_red_repeated(
    session: &Session,
    config: &Config,
    pinned: &PinnedTest,
    (before, squashed): (&Scratch, &Scratch),
    (reaper, test_code): (Option<&Reaper>, TestCode),
) -> Result<Result<(TestRun, TestRun), Outcome>, EngineError> {
    // Made once for the task's repeats: each names every read-only path again.
    let env = session.command_env()?;
    let envs = (apart(env, squashed), apart(env, before));
    let envs = (&envs.0, &envs.1);
    let first = run_red(
        session,
        config,
        pinned,
        (before, squashed),
        (reaper, test_code),
        envs,
    )?;
    let mut on_base = vec![first.0.output.exit.success()];
    let mut on_squash = vec![first.1.output.exit.success()];
    for _ in 1..config.verify.runs {
        // Each repeat starts from the trees as they were made: what a run left (an ignored
        // marker, say) is not seen by the next, whose verdict is then its own. A write into
        // the squashed tree is refused before the reset could hide it.
        // One walk of the squashed worktree compares and resets it.
        let changed = squashed.reset_changed(test_code)?;
        if !changed.is_empty() {
            return Ok(Err(Outcome::Tree {
                by: Some(pinned.clone()),
                changed,
            }));
        }
        before.reset()?;
        let (b, s) = run_red(
            session,
            config,
            pinned,
            (before, squashed),
            (reaper, test_code),
            envs,
        )?;
        on_base.push(b.output.exit.success());
        on_squash.push(s.output.exit.success());
    }
    for (on, verdicts) in [
        ("the PR's base", &on_base),
        ("the squashed commit", &on_squash),
    ] {
        if verdicts.iter().any(|v| Some(v) != verdicts.first()) {
            return Ok(Err(Outcome::Flaky {
                test: pinned.clone(),
                on: on.to_string(),
                verdicts: verdicts
                    .iter()
                    .map(|&passed| if passed { "pass" } else { "fail" }.to_string())
                    .collect(),
            }));
        }
    }
    Ok(Ok(first))
}

/// The RED test's run on the base (its files and shared files pinned as its step left them:
/// [`Pairs::run`]) and on the squashed commit, in an order drawn at random.
fn run_red(
    session: &Session,
    config: &Config,
    pinned: &PinnedTest,
    (before, squashed): (&Scratch, &Scratch),
    (reaper, test_code): (Option<&Reaper>, TestCode),
    (base_env, squashed_env): (&Option<CommandEnv>, &Option<CommandEnv>),
) -> Result<(TestRun, TestRun), EngineError> {
    let env = session.command_env()?;
    let timeout = config.test.timeout;
    let run = |scratch: &Scratch,
               apart: &Option<CommandEnv>,
               command: &str|
     -> Result<TestRun, EngineError> {
        let ran = run_test(
            session,
            command,
            scratch.path(),
            timeout,
            apart.as_ref().unwrap_or(env),
        );
        // Whatever the run left running ends before anything else is read or run there.
        end_orphans(reaper, &format!("`{command}`"))?;
        ran
    };
    // What either run writes or moves of the final tree's test code is watched, from before
    // the first to after the second: unconfined, the base's run reaches the final tree too,
    // and a directory swapped and swapped back leaves no file for the compare to see.
    let watch = squashed.watch(test_code);
    let runs = if coin() {
        let on_base = run(before, base_env, &pinned.command)?;
        (on_base, run(squashed, squashed_env, &pinned.command)?)
    } else {
        let on_squash = run(squashed, squashed_env, &pinned.command)?;
        (run(before, base_env, &pinned.command)?, on_squash)
    };
    if let Some(watch) = watch {
        squashed.watched(watch);
    }
    Ok(runs)
}

/// Confined (attest on a server), a run in one worktree cannot write `other` either: the
/// base's run cannot put the code the squash lacks into it, nor the other way round. `None`
/// unconfined.
fn apart(env: &CommandEnv, other: &Scratch) -> Option<CommandEnv> {
    env.confinement().map(|c| {
        let apart = c
            .also_read_only(other.path())
            .also_read_only(&other.build_dir());
        env.clone().confined(apart)
    })
}
