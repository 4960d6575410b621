//! The mutants of adequacy by mutation (docs/integrity.md, "Adequacy by mutation"): the code a
//! task wrote, the mutants of it made by the project's own tool where it fits (mutmut or
//! cosmic-ray for Python, Stryker for JavaScript and TypeScript, cargo-mutants for Rust) or the built-in line mutator, and the task's worktree they are run
//! in, put back as it was after every run. The executor's obligation
//! (src/engine/proof/adequacy.rs) runs the task's test on each.

use std::time::{Duration, Instant};

use crate::config::{Config, MutationTool};
use crate::engine::evidence::{TestRun, run_test};
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session, io_error};
use crate::exec::orphans::Reaper;
use crate::exec::{self, CommandEnv, RunOutput, ShellOptions};
use crate::workflow::briefing::text::shell_quote;
use crate::workflow::proof::PinnedTest;
use crate::workflow::state::ExitRecord;
use crate::workflow::{cargo_mutants, cosmic_ray, mutate, mutmut, stryker};

/// One task's RED step and the trees its mutants are made between.
pub(crate) struct Task<'a> {
    pub red: &'a PinnedTest,
    pub red_tree: &'a str,
    pub base: &'a str,
    /// Where the code the task wrote is counted from: the PR's base for the first task, else
    /// the tree the task began at, before its RED step (which may write code too); in a chain
    /// that does not record it, the task's RED tree (src/engine/proof/adequacy.rs, `range`).
    pub start: &'a str,
    /// Where it is counted to, and the tree its mutants are run in: where the next task
    /// began (the last task's: the squash's tree); in a chain that does not record it, the
    /// next task's RED tree.
    pub end: &'a str,
    /// The next task's RED test, when `end` is its RED tree (an older chain's range), which
    /// holds that test, failing: its files are put back as they were at this task's RED tree,
    /// so that a RED command running the whole suite measures this task's code, not the next
    /// test. `None` when `end` is where the next task began, which holds no test of it.
    pub next: Option<&'a PinnedTest>,
    /// The squashed tree, and the test files `end` holds that it does not and no RED step
    /// pinned (src/engine/proof/adequacy.rs, `dropped_tests`): taken out for the runs.
    pub dropped: (&'a str, &'a [String]),
}

/// A code file the task changed: its path, its text at the task's end, and the lines of it
/// the task added or rewrote (1-based).
pub(crate) struct CodeFile {
    path: String,
    text: String,
    lines: Vec<usize>,
}

/// A mutant to run: the file it is in, how the note names it, and the file's text with it.
pub(crate) struct Planned {
    pub path: String,
    pub name: String,
    text: String,
}

/// The code files the task changed (not test paths), with their changed lines; and those of
/// them that are not text where the task ends, which no mutant reaches. A code file a RED
/// step pinned with its test (one it created) is code all the same: the test's files are
/// those `[gates] test_paths` names, and an implementation written beside the test would
/// otherwise never be mutated.
pub(crate) fn task_files(
    session: &Session,
    config: &Config,
    task: &Task,
) -> Result<(Vec<CodeFile>, Vec<String>), EngineError> {
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    // In-process: a `git diff` per task would cost the final check a process per task.
    for path in session.store.changed_paths(task.start, task.end)? {
        if config.is_test_path(&path) {
            continue;
        }
        let new = match session
            .store
            .tree_entry(task.end, &path)?
            .map(|_| text(session, task.end, &path))
            .transpose()?
        {
            Some(Some(new)) => new,
            // Removed by the task.
            None => continue,
            // Not text where it ends (or over the cap): no line of it can be mutated. A file
            // of a kind that is never code is left out; any other is code the task wrote
            // that nothing measures, which the caller names (one byte that is no UTF-8 in a
            // script's comment would otherwise hide the script).
            Some(None) => {
                if !is_binary_asset(&path) {
                    unreadable.push(path);
                }
                continue;
            }
        };
        // Not text where the task began (a byte that is no UTF-8 put in at a task's
        // boundary): every line of it is the task's, not none.
        let old = text(session, task.start, &path)?.unwrap_or_default();
        let lines = mutate::changed_lines(&old, &new);
        if !lines.is_empty() {
            out.push(CodeFile {
                path,
                text: new,
                lines,
            });
        }
    }
    Ok((out, unreadable))
}

/// Whether `path` names a kind of file that is never code (images, fonts, archives, media,
/// compiled objects): one that is not text is left out of the code a task wrote.
fn is_binary_asset(path: &str) -> bool {
    const ASSETS: &[&str] = &[
        "png", "jpg", "jpeg", "gif", "ico", "webp", "bmp", "tiff", "pdf", "zip", "gz", "tgz",
        "bz2", "xz", "zst", "7z", "jar", "class", "so", "dylib", "dll", "exe", "o", "a", "woff",
        "woff2", "ttf", "otf", "eot", "mp3", "mp4", "wav", "ogg", "webm", "bin", "db", "sqlite",
    ];
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ASSETS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The built-in mutator's mutants of `files`, in its deterministic order.
pub(crate) fn builtin_mutants(files: &[CodeFile]) -> Vec<Planned> {
    files
        .iter()
        .flat_map(|f| {
            mutate::mutants(&f.path, &f.text, &f.lines)
                .into_iter()
                .map(|m| Planned {
                    path: m.path.clone(),
                    name: m.name(),
                    text: m.apply(&f.text),
                })
        })
        .collect()
}

/// The built-in mutator's mutants of `files` within `budget` ([`mutate::within_budget`]:
/// the first of every changed line before the second of any), in its order, and the file of
/// each mutant past it (one entry each), not run.
pub(crate) fn builtin_within(files: &[CodeFile], budget: usize) -> (Vec<Planned>, Vec<String>) {
    let all: Vec<(&CodeFile, mutate::Mutant)> = files
        .iter()
        .flat_map(|f| {
            mutate::mutants(&f.path, &f.text, &f.lines)
                .into_iter()
                .map(move |m| (f, m))
        })
        .collect();
    let plain: Vec<mutate::Mutant> = all.iter().map(|(_, m)| m.clone()).collect();
    let keep = mutate::within_budget(&plain, budget);
    let (mut run, mut past) = (Vec::new(), Vec::new());
    for ((f, m), keep) in all.into_iter().zip(keep) {
        if keep {
            run.push(Planned {
                path: m.path.clone(),
                name: m.name(),
                text: m.apply(&f.text),
            });
        } else {
            past.push(m.path);
        }
    }
    (run, past)
}

/// A text file of `tree` within the input cap; `None` when absent, binary or too large.
fn text(session: &Session, tree: &str, path: &str) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let Some(entry) = store.tree_entry(tree, path)? else {
        return Ok(Some(String::new()));
    };
    Ok(
        match store.blob_within(&entry.id.to_string(), crate::input::CAP)? {
            Ok(bytes) => String::from_utf8(bytes).ok(),
            Err(_) => None,
        },
    )
}

/// The project's own mutation tool that makes a task's mutants instead of the built-in
/// mutator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tool {
    Mutmut,
    CosmicRay,
    Stryker,
    CargoMutants,
}

impl Tool {
    /// As the note names it (`tool`), and the program on the PATH.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Mutmut => "mutmut",
            Tool::CosmicRay => "cosmic-ray",
            Tool::Stryker => "stryker",
            Tool::CargoMutants => "cargo-mutants",
        }
    }

    /// Whether it mutates `path`, and the language it mutates.
    fn mutates(self, path: &str) -> (bool, &'static str) {
        match self {
            Tool::Mutmut | Tool::CosmicRay => (path.ends_with(".py"), "Python"),
            Tool::Stryker => (stryker::is_js(path), "JavaScript and TypeScript"),
            Tool::CargoMutants => (cargo_mutants::is_rust(path), "Rust"),
        }
    }

    /// The programs it is run as, all on the PATH where it is used: cosmic-ray's line filter
    /// is a program of its own, which older releases lack.
    fn programs(self) -> &'static [&'static str] {
        match self {
            Tool::Mutmut => &["mutmut"],
            Tool::CosmicRay => &["cosmic-ray", "cr-filter-lines"],
            // On the PATH, as mutmut's and cosmic-ray's: the environment's, not the PR's (a
            // `node_modules/.bin/stryker` the PR commits would be its own program choosing
            // its own mutants; an installed `node_modules` is not in the task's worktree).
            Tool::Stryker => &["stryker"],
            // Run as itself, not as `cargo mutants` (cargo would look in `~/.cargo/bin` too);
            // it runs `cargo metadata`.
            Tool::CargoMutants => &["cargo-mutants", "cargo"],
        }
    }

    /// The first of its programs the PATH lacks.
    fn missing(self, env: &CommandEnv) -> Option<&'static str> {
        self.programs().iter().copied().find(|p| !env.finds(p))
    }
}

/// Which tool makes the task's mutants: `Ok(Some(tool))` when one is to, `Ok(None)` when the
/// built-in mutator is the choice, `Err(why)` when a tool was asked for and cannot be.
pub(crate) fn choose_tool(
    config: &Config,
    env: &CommandEnv,
    files: &[CodeFile],
) -> Result<Option<Tool>, String> {
    let not_of = |tool: Tool| -> Vec<&str> {
        files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !tool.mutates(p).0)
            .collect()
    };
    let asked = match config.verify.mutation_tool {
        MutationTool::Builtin => return Ok(None),
        MutationTool::Auto => {
            return Ok([
                Tool::Mutmut,
                Tool::CosmicRay,
                Tool::Stryker,
                Tool::CargoMutants,
            ]
            .into_iter()
            .find(|t| not_of(*t).is_empty() && t.missing(env).is_none()));
        }
        MutationTool::Mutmut => Tool::Mutmut,
        MutationTool::CosmicRay => Tool::CosmicRay,
        MutationTool::Stryker => Tool::Stryker,
        MutationTool::CargoMutants => Tool::CargoMutants,
    };
    let other = not_of(asked);
    if !other.is_empty() {
        return Err(format!(
            "{} mutates {} only, and the task's code includes {}",
            asked.name(),
            asked.mutates("").1,
            other.join(", ")
        ));
    }
    if let Some(missing) = asked.missing(env) {
        return Err(format!("{missing} is not on the PATH the tests run with"));
    }
    Ok(Some(asked))
}

/// One task's worktree: the task's end tree with its pinned test files as its RED step left
/// them, put back as it was after every run (tracked, untracked and ignored files alike), and
/// what a run left running ended first, so nothing one run leaves is seen by the next
/// (docs/integrity.md, "Adequacy by mutation").
pub(crate) struct TaskWorktree<'a> {
    session: &'a Session,
    task: &'a Task<'a>,
    /// The code files mutated, which stay as the task ends, pinned or not.
    code: Vec<String>,
    scratch: Scratch<'a>,
    reaper: Option<&'a Reaper>,
}

impl<'a> TaskWorktree<'a> {
    pub(crate) fn new(
        session: &'a Session,
        task: &'a Task<'a>,
        files: &[CodeFile],
        reaper: Option<&'a Reaper>,
    ) -> Result<TaskWorktree<'a>, EngineError> {
        let code: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        Ok(TaskWorktree {
            session,
            task,
            scratch: Self::make(session, task, &code)?,
            code,
            reaper,
        })
    }

    /// The task's end tree with its pinned files as its RED step left them, but for the code
    /// files among them (`code`), whose mutants are of the text the task ends with, and
    /// without the tests the PR deleted later ([`Task::dropped`]).
    fn make(
        session: &'a Session,
        task: &Task,
        code: &[String],
    ) -> Result<Scratch<'a>, EngineError> {
        let mut scratch = Scratch::new(session, task.base, task.end)?;
        let mut paths: Vec<String> = task
            .red
            .paths
            .iter()
            .filter(|p| !code.contains(p))
            .cloned()
            .collect();
        if let Some(next) = task.next {
            paths.extend(
                next.paths
                    .iter()
                    .filter(|p| !paths.contains(p))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
        scratch.put(task.red_tree, &paths)?;
        let (squashed, dropped) = task.dropped;
        scratch.put(squashed, dropped)?;
        scratch.settle();
        Ok(scratch)
    }

    /// Runs `command` (with `mutant` written in first), then ends what it left running.
    fn run_only(
        &self,
        mutant: Option<&Planned>,
        command: &str,
        limit: Duration,
        options: ShellOptions,
    ) -> Result<RunOutput, EngineError> {
        if let Some(m) = mutant {
            std::fs::write(self.scratch.path().join(&m.path), &m.text)
                .map_err(io_error(format!("write a mutant of {}", m.path)))?;
        }
        let env = self.session.command_env()?;
        let ran = exec::run_shell_with(command, self.scratch.path(), limit, env, options)
            .map_err(io_error(format!("run `{command}`")));
        if let Some(reaper) = self.reaper {
            reaper
                .end_orphans()
                .map_err(io_error(format!("end what `{command}` left running")))?;
        }
        ran
    }

    /// Puts the worktree back as it was made; one a reset cannot put back is replaced.
    fn reset(&mut self) -> Result<(), EngineError> {
        if self.scratch.reset().is_err() {
            self.scratch = Self::make(self.session, self.task, &self.code)?;
        }
        Ok(())
    }

    /// The task's test `command` (with `mutant` written in first), run as the executor runs
    /// every pinned test ([`run_test`]: the session's command environment, confined where
    /// the verifier confines, its own build directory), then what it left running ended
    /// and the worktree put back ([`Self::reset`]): how the run ended.
    pub(crate) fn run(
        &mut self,
        mutant: Option<&Planned>,
        command: &str,
        limit: Duration,
    ) -> Result<ExitRecord, EngineError> {
        let ran = self.test(mutant, command, limit);
        self.reset()?;
        Ok(ran?.output.exit)
    }

    /// [`Self::run`] before the reset.
    fn test(
        &self,
        mutant: Option<&Planned>,
        command: &str,
        limit: Duration,
    ) -> Result<TestRun, EngineError> {
        if let Some(m) = mutant {
            std::fs::write(self.scratch.path().join(&m.path), &m.text)
                .map_err(io_error(format!("write a mutant of {}", m.path)))?;
        }
        let env = self.session.command_env()?;
        let ran = run_test(self.session, command, self.scratch.path(), limit, env);
        if let Some(reaper) = self.reaper {
            reaper
                .end_orphans()
                .map_err(io_error(format!("end what `{command}` left running")))?;
        }
        ran
    }
}

/// mutmut's mutants of `files`, made in the task's worktree: `mutmut run` restricted to the
/// changed lines by a patch file, with a runner that always passes (`true`), so it makes
/// every mutant and tests none (the task's test runs on each here, under the same budgets,
/// resets and orphan ending as the built-in mutator's), then its JUnit report, which gives
/// each mutant's diff. `Err(why)` when it fails: the caller falls back to the built-in
/// mutator and says why.
pub(crate) fn mutmut_mutants(
    worktree: &mut TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
) -> Result<Result<Vec<Planned>, String>, EngineError> {
    if let Some(odd) = files.iter().find(|f| f.path.contains([',', ':'])) {
        // mutmut splits --paths-to-mutate at commas and colons.
        return Ok(Err(format!(
            "mutmut cannot be given a path holding `,` or `:` ({})",
            odd.path
        )));
    }
    let files = neutral_for_mutmut(files);
    let report = mutmut_report(worktree, &files, limit);
    worktree.reset()?;
    let xml = match report? {
        Ok(xml) => xml,
        Err(why) => return Ok(Err(why)),
    };
    let reported = match mutmut::report(&xml) {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let mut out = Vec::new();
    for r in reported {
        let path = r.path.strip_prefix("./").unwrap_or(&r.path);
        let Some(text) = files
            .iter()
            .find(|f| f.path == path)
            .and_then(|f| r.apply(&f.text))
        else {
            return Ok(Err(format!(
                "mutmut's mutant {} does not fit the file the task wrote",
                r.name()
            )));
        };
        out.push(Planned {
            path: path.to_string(),
            name: r.name(),
            text,
        });
    }
    Ok(silent_tool(Tool::Mutmut, &files, out))
}

/// `files` as mutmut is given them: the pragma that would make it skip a changed line
/// neutralised, in the text mutmut mutates and the mutants are made from.
fn neutral_for_mutmut(files: &[CodeFile]) -> Vec<CodeFile> {
    files
        .iter()
        .map(|f| CodeFile {
            path: f.path.clone(),
            text: f.text.replace(MUTMUT_PRAGMA, "pragma: no-mutate (ignored)"),
            lines: f.lines.clone(),
        })
        .collect()
}

/// Runs mutmut in the task's worktree over `files` (already neutral): its JUnit report, or
/// why it failed. What the PR's own files could tell mutmut to skip is taken out first: the
/// neutral texts are written, and a committed `mutmut_config.py` (its `pre_mutation` can
/// skip every mutant) or `.mutmut-cache` is removed. The caller resets the worktree.
fn mutmut_report(
    worktree: &mut TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
) -> Result<Result<String, String>, EngineError> {
    let root = worktree.scratch.path().to_path_buf();
    for f in files {
        std::fs::write(root.join(&f.path), &f.text)
            .map_err(io_error("write the task's files for mutmut"))?;
    }
    for own in ["mutmut_config.py", ".mutmut-cache"] {
        match std::fs::remove_file(root.join(own)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(format!("remove {own} before mutmut runs"))(e));
            }
            _ => {}
        }
    }
    let patch = mutmut::patch(
        &files
            .iter()
            .map(|f| (f.path.as_str(), f.text.as_str(), f.lines.as_slice()))
            .collect::<Vec<_>>(),
    );
    let mut file = tempfile::NamedTempFile::new().map_err(io_error("make mutmut's patch file"))?;
    std::io::Write::write_all(&mut file, patch.as_bytes())
        .map_err(io_error("write mutmut's patch file"))?;
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let run = format!(
        "mutmut run --paths-to-mutate {} --paths-to-exclude '' --tests-dir . --runner true \
         --use-patch-file {} --CI --simple-output --no-progress",
        shell_quote(&paths.join(",")),
        shell_quote(&file.path().to_string_lossy())
    );
    let started = Instant::now();
    let out = worktree.run_only(None, &run, limit, ShellOptions::default())?;
    if !out.exit.success() {
        return Ok(Err(failed("mutmut run", &out)));
    }
    let left = limit.saturating_sub(started.elapsed());
    stdout_of(worktree, "mutmut junitxml --untested-policy skipped", left)
}

/// What `command` printed on stdout in the task's worktree, or why it failed.
fn stdout_of(
    worktree: &TaskWorktree,
    command: &str,
    limit: Duration,
) -> Result<Result<String, String>, EngineError> {
    let options = ShellOptions {
        split_stderr: true,
        ..ShellOptions::default()
    };
    let out = worktree.run_only(None, command, limit, options)?;
    Ok(if out.exit.success() {
        Ok(String::from_utf8_lossy(&out.output).into_owned())
    } else {
        let program = command.split(' ').take(2).collect::<Vec<_>>().join(" ");
        Err(failed(&program, &out))
    })
}

/// `made` by `tool`, unless it made no mutant of lines the built-in mutator finds mutable:
/// the tool was told to skip them somehow (a setting of the project's), and its silence
/// would read as adequacy.
fn silent_tool(tool: Tool, files: &[CodeFile], made: Vec<Planned>) -> Result<Vec<Planned>, String> {
    let builtin = builtin_mutants(files).len();
    if made.is_empty() && builtin > 0 {
        return Err(format!(
            "{} made no mutant of the changed lines, where the built-in mutator makes {builtin}",
            tool.name()
        ));
    }
    Ok(made)
}

/// cosmic-ray's mutants of `files`, at most `budget` of them, made in the task's worktree by
/// one session per file, not one process per mutant: `cosmic-ray init` with our
/// configuration (outside the worktree, as its session is), `cr-filter-lines` skipping all
/// but the changed lines, `cosmic-ray exec` (the local distributor, a test command that
/// passes) making every mutant and recording its diff, and `cosmic-ray dump` reading them
/// back. cosmic-ray reads no configuration of the PR's, and its pragma filter
/// (`cr-filter-pragma`) is never run, so nothing the PR commits tells it to skip a line. With
/// the files of the mutations past the budget, not run (one entry each); `Err(why)` when it
/// fails: the caller falls back to the built-in mutator and says why.
pub(crate) fn cosmic_ray_mutants(
    worktree: &mut TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
    budget: usize,
) -> Result<Result<MadeAndUnmade, String>, EngineError> {
    let made = cosmic_ray_session(worktree, files, limit, budget);
    worktree.reset()?;
    let listed = match made? {
        Ok(listed) => listed,
        Err(why) => return Ok(Err(why)),
    };
    let unmade: Vec<String> = listed
        .iter()
        .skip(budget)
        .map(|(f, _)| f.path.clone())
        .collect();
    let mut out = Vec::new();
    for (f, m) in listed.into_iter().take(budget) {
        let text = match m.mutant(&f.text) {
            Ok(text) => text,
            Err(why) => return Ok(Err(why)),
        };
        if let Some(name) = cosmic_ray::name(&f.path, &f.text, &text) {
            out.push(Planned {
                path: f.path.clone(),
                name,
                text,
            });
        }
    }
    Ok(silent_tool(Tool::CosmicRay, files, out).map(|made| (made, unmade)))
}

/// The mutants made, and the file of each mutation past the budget.
type MadeAndUnmade = (Vec<Planned>, Vec<String>);

/// A mutation cosmic-ray's session made, and the file it is of.
type Listed<'f> = (&'f CodeFile, cosmic_ray::Mutation);

/// The mutations cosmic-ray's sessions listed of the changed lines of `files`, each with its
/// file, file by file in [`cosmic_ray::mutations`]' order, those within `budget` made; before
/// the worktree is reset. Each session is listed before `exec` and its line filter given only
/// the lines of the mutations within the budget, so `exec`, ~20 ms CPU a mutant on a large
/// file, makes about `budget`, not every mutation of a large task's lines.
fn cosmic_ray_session<'f>(
    worktree: &mut TaskWorktree,
    files: &'f [CodeFile],
    limit: Duration,
    budget: usize,
) -> Result<Result<Vec<Listed<'f>>, String>, EngineError> {
    let started = Instant::now();
    let ours = tempfile::tempdir().map_err(io_error("make cosmic-ray's session directory"))?;
    let left = || limit.saturating_sub(started.elapsed());
    let mut listed = Vec::new();
    for (n, f) in files.iter().enumerate() {
        let config_path = ours.path().join(format!("{n}.toml"));
        let session = ours.path().join(format!("{n}.sqlite"));
        std::fs::write(&config_path, cosmic_ray::config(&f.path, &f.lines))
            .map_err(io_error("write cosmic-ray's configuration"))?;
        let (config, session) = (
            shell_quote(&config_path.to_string_lossy()),
            shell_quote(&session.to_string_lossy()),
        );
        let dump = format!("cosmic-ray dump {session}");
        if let Err(why) = stdout_of(
            worktree,
            &format!("cosmic-ray init {config} {session}"),
            left(),
        )? {
            return Ok(Err(why));
        }
        let all = match stdout_of(worktree, &dump, left())?
            .and_then(|d| cosmic_ray::mutations(&d, &f.path, &f.lines))
        {
            Ok(all) => all,
            Err(why) => return Ok(Err(why)),
        };
        let room = budget.saturating_sub(listed.len());
        if room == 0 || all.is_empty() {
            // Past the budget: counted, never made.
            listed.extend(all.into_iter().map(|m| (f, m)));
            continue;
        }
        let lines = cosmic_ray::lines_of_first(&all, room);
        std::fs::write(&config_path, cosmic_ray::config(&f.path, &lines))
            .map_err(io_error("write cosmic-ray's configuration"))?;
        for step in [
            format!("cr-filter-lines --config {config} {session}"),
            format!("cosmic-ray exec {config} {session}"),
        ] {
            if let Err(why) = stdout_of(worktree, &step, left())? {
                return Ok(Err(why));
            }
        }
        match stdout_of(worktree, &dump, left())?
            .and_then(|d| cosmic_ray::mutations(&d, &f.path, &f.lines))
        {
            Ok(found) if found.len() == all.len() => {
                listed.extend(found.into_iter().map(|m| (f, m)))
            }
            Ok(found) => {
                return Ok(Err(format!(
                    "cosmic-ray's session listed {} mutations of {}'s changed lines, then {}",
                    all.len(),
                    f.path,
                    found.len()
                )));
            }
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok(listed))
}

/// Stryker's mutants of `files`, made in the task's worktree by one `stryker run` with our
/// configuration (src/workflow/stryker.rs; it, the report and Stryker's sandbox in a
/// temporary directory outside the worktree, so no `stryker.conf.*` of the PR's is read),
/// restricted to the changed lines, its test runner the command `true`: it makes every mutant
/// and tests none (the task's test runs on each here). Each mutant of the report touching a
/// changed line is applied to the file the task wrote, whatever its status (one the PR's
/// `// Stryker disable` comment made `Ignored` included). `Err(why)` when it fails: the
/// caller falls back to the built-in mutator and says why.
pub(crate) fn stryker_mutants(
    worktree: &mut TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
) -> Result<Result<Vec<Planned>, String>, EngineError> {
    let ours = tempfile::tempdir().map_err(io_error("make Stryker's directory"))?;
    let (config, report) = (
        ours.path().join("stryker.json"),
        ours.path().join("report.json"),
    );
    let ranges: Vec<(&str, &[usize])> = files
        .iter()
        .map(|f| (f.path.as_str(), f.lines.as_slice()))
        .collect();
    let written = match stryker::config(
        &ranges,
        &report.to_string_lossy(),
        &ours.path().join("sandbox").to_string_lossy(),
    ) {
        Ok(text) => text,
        Err(why) => return Ok(Err(why)),
    };
    std::fs::write(&config, written).map_err(io_error("write Stryker's configuration"))?;
    let run = format!("stryker run {}", shell_quote(&config.to_string_lossy()));
    let ran = stdout_of(worktree, &run, limit);
    worktree.reset()?;
    if let Err(why) = ran? {
        return Ok(Err(why));
    }
    let Ok(json) = std::fs::read_to_string(&report) else {
        return Ok(Err("stryker run wrote no report".into()));
    };
    let texts: Vec<(&str, &str, &[usize])> = files
        .iter()
        .map(|f| (f.path.as_str(), f.text.as_str(), f.lines.as_slice()))
        .collect();
    let reported = match stryker::mutants(&json, &texts) {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let mut out = Vec::new();
    for m in reported {
        let Some(f) = files.iter().find(|f| f.path == m.path) else {
            continue;
        };
        let Some(text) = m.apply(&f.text) else {
            return Ok(Err(format!(
                "Stryker's mutant {} does not fit the file the task wrote",
                m.name(&f.text)
            )));
        };
        out.push(Planned {
            path: m.path.clone(),
            name: m.name(&f.text),
            text,
        });
    }
    Ok(silent_tool(Tool::Stryker, files, out))
}

/// cargo-mutants' mutants of `files`, listed without building in the task's worktree
/// (src/workflow/cargo_mutants.rs): no `.cargo/mutants.toml` of the PR's read, and the files
/// it reads written with the identifier `mutants` renamed, so no `#[mutants::skip]` of the
/// PR's makes it skip the lines the task wrote. It only lists: it builds nothing and runs no
/// test (the task's test runs on each mutant here). Each listed mutant whose span touches a
/// changed line is applied to the file the task wrote. `Err(why)` when it fails, or when it
/// does not read a changed file (one `include!` brings in, whose lines it never mutates: the
/// task's code there would go unmeasured beside a well-tested decoy): the caller falls back
/// to the built-in mutator and says why.
pub(crate) fn cargo_mutants_mutants(
    worktree: &mut TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
) -> Result<Result<Vec<Planned>, String>, EngineError> {
    let root = worktree.scratch.path().to_path_buf();
    for f in files {
        std::fs::write(root.join(&f.path), cargo_mutants::neutral(&f.text))
            .map_err(io_error("write the task's files for cargo-mutants"))?;
    }
    let listed = cargo_mutants_listing(worktree, files, limit);
    worktree.reset()?;
    let json = match listed? {
        Ok(json) => json,
        Err(why) => return Ok(Err(why)),
    };
    let texts: Vec<(&str, &str, &[usize])> = files
        .iter()
        .map(|f| (f.path.as_str(), f.text.as_str(), f.lines.as_slice()))
        .collect();
    let reported = match cargo_mutants::mutants(&json, &texts) {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let mut extra = Vec::new();
    // The changed lines one of cargo-mutants' mutants of that line alone changes, by file:
    // the rest (in a function it skips for an attribute, an `unsafe fn`, a `new`, a macro's
    // body, a constant; or only in a body its whole-body mutants replace, where a special
    // case goes untouched) get the built-in mutator's, and first, so that the budget does
    // not run out on its choices before them.
    let mut spanned: Vec<(&str, Vec<usize>)> = Vec::new();
    for m in &reported {
        if let Some(f) = files.iter().find(|f| f.path == m.path) {
            let lines = f
                .lines
                .iter()
                .filter(|l| m.start.0 == m.end.0 && m.start.0 == **l);
            match spanned.iter_mut().find(|(p, _)| *p == f.path) {
                Some((_, seen)) => seen.extend(lines),
                None => spanned.push((f.path.as_str(), lines.copied().collect())),
            }
        }
    }
    for f in files {
        let seen = spanned
            .iter()
            .find(|(p, _)| *p == f.path)
            .map(|(_, l)| l.as_slice())
            .unwrap_or_default();
        let left: Vec<usize> = f
            .lines
            .iter()
            .copied()
            .filter(|l| !seen.contains(l))
            .collect();
        extra.extend(
            mutate::mutants(&f.path, &f.text, &left)
                .into_iter()
                .map(|m| Planned {
                    path: m.path.clone(),
                    name: m.name(),
                    text: m.apply(&f.text),
                }),
        );
    }
    let mut out = Vec::new();
    for m in reported {
        let Some(f) = files.iter().find(|f| f.path == m.path) else {
            continue;
        };
        let Some(text) = m.apply(&f.text) else {
            return Ok(Err(format!(
                "cargo-mutants' mutant {} does not fit the file the task wrote",
                m.name(&f.text)
            )));
        };
        out.push(Planned {
            path: m.path.clone(),
            name: m.name(&f.text),
            text,
        });
    }
    Ok(silent_tool(Tool::CargoMutants, files, out).map(|made| {
        extra.extend(made);
        extra
    }))
}

/// cargo-mutants' listing of the mutants of `files`, before the worktree is reset. A changed
/// file it listed no mutant of must be among the files it reads (`--list-files`, run only
/// then: each listing parses the whole crate, ~1 s CPU on a crate of 94,000 lines).
fn cargo_mutants_listing(
    worktree: &TaskWorktree,
    files: &[CodeFile],
    limit: Duration,
) -> Result<Result<String, String>, EngineError> {
    let started = Instant::now();
    // What one listing printed, or why it failed.
    let list = |listing, paths: &[&str], limit| -> Result<Result<String, String>, EngineError> {
        match cargo_mutants::list_args(listing, paths) {
            Ok(args) => {
                let run = std::iter::once("cargo-mutants".to_string())
                    .chain(args.iter().map(|a| shell_quote(a)))
                    .collect::<Vec<_>>()
                    .join(" ");
                stdout_of(worktree, &run, limit)
            }
            Err(why) => Ok(Err(why)),
        }
    };
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let json = match list(cargo_mutants::Listing::Mutants, &paths, limit)? {
        Ok(json) => json,
        Err(why) => return Ok(Err(why)),
    };
    let unseen: Vec<&str> = match cargo_mutants::mutated_paths(&json) {
        Ok(mutated) => paths
            .into_iter()
            .filter(|p| !mutated.iter().any(|m| m == p))
            .collect(),
        Err(why) => return Ok(Err(why)),
    };
    if unseen.is_empty() {
        return Ok(Ok(json));
    }
    let left = limit.saturating_sub(started.elapsed());
    let read = list(cargo_mutants::Listing::Files, &unseen, left)?
        .and_then(|listed| cargo_mutants::files_read(&listed));
    Ok(match read {
        Ok(read) => match unseen.iter().find(|p| !read.iter().any(|r| r == *p)) {
            Some(unread) => Err(format!(
                "cargo-mutants does not read {unread} (no `mod` of the crate reaches it)"
            )),
            None => Ok(json),
        },
        Err(why) => Err(why),
    })
}

/// The comment mutmut skips a line for.
const MUTMUT_PRAGMA: &str = "pragma: no mutate";

/// `what failed (exit 1): ` and the last line it printed.
fn failed(what: &str, out: &RunOutput) -> String {
    let text = String::from_utf8_lossy(&out.output);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    format!("{what} failed ({}): {}", out.exit, last.trim())
}
