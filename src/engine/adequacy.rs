//! The mutants of adequacy by mutation (docs/integrity.md, "Adequacy by mutation"): the code a
//! task wrote, the mutants of it made by the project's own tool where it fits (mutmut or
//! cosmic-ray for Python, Stryker for JavaScript and TypeScript, cargo-mutants for Rust) or the built-in line mutator, and the task's worktree they are run
//! in, put back as it was after every run. The executor's obligation
//! (src/engine/proof/adequacy.rs) runs the task's test on each.

use std::time::{Duration, Instant};

use crate::config::{Config, MutationTool};
use crate::engine::evidence::{TestRun, run_test};
use crate::engine::scratch::{Scratch, write_inside};
use crate::engine::{EngineError, Session, io_error};
use crate::exec::orphans::Reaper;
use crate::exec::{self, CommandEnv, RunOutput, ShellOptions};
use crate::workflow::briefing::text::shell_quote;
use crate::workflow::package_scripts::{self, NotJson};
use crate::workflow::proof::PinnedTest;
use crate::workflow::red::is_conftest;
use crate::workflow::shell_reach::{self, PackageScript};
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
    /// The squashed tree, and the test files `end` holds that it does not hold so and no RED
    /// step of the task pinned (src/engine/proof/adequacy.rs, `tests_as_squashed`): put in
    /// as it has them for the runs (taken out where it has none).
    pub as_squashed: (&'a str, &'a [String]),
    /// The files a pinned RED command runs as its program or script, which the end tree
    /// holds (src/engine/proof/adequacy.rs, `witnesses`): test code, never mutated, and
    /// among `as_squashed`'s, put in as the squash has them.
    pub witnesses: &'a [String],
    /// The `package.json` files whose scripts a pinned RED command runs, with those scripts
    /// as the squash has them ([`package_scripts`]).
    pub scripts: &'a [ScriptsPut],
}

/// A `package.json` the task's end tree holds whose scripts a pinned RED command runs
/// (`npm test`): the task's text, the scripts' names, and the text its runs use, the
/// squash's scripts put in (`None`: the task's own), and the one they use where those fail
/// on the task's own code ([`TaskWorktree::keep_later_lines`]).
pub(crate) struct ScriptsPut {
    path: String,
    own: String,
    names: Vec<String>,
    as_squashed: Option<String>,
    kept: Option<String>,
    /// The files the squash's rewritten scripts run that the task's end tree lacks (a
    /// `t/other.sh` a later task wrote for `"test": "sh t/other.sh"`): put in as the squash
    /// has them, as the test the PR ends with.
    files: Vec<String>,
}

impl ScriptsPut {
    /// The scripts put in, each as `<package.json's path>: <name>`: those either the task's
    /// file or the squash's holds (a `pretest` neither has is no script).
    pub(crate) fn named(&self) -> Vec<String> {
        let in_either = package_scripts::present(
            &self.own,
            self.as_squashed.as_deref().or(self.kept.as_deref()),
            &self.names,
        );
        in_either
            .into_iter()
            .map(|name| format!("{}: {name}", self.path))
            .collect()
    }
}

/// For each `package.json` among `reached`'s that `end` holds as text that reads, the
/// scripts the RED commands reach as `squashed` has them (docs/integrity.md, "Adequacy by
/// mutation"): the scripts are the test, and a later task that rewrites one (`"test":
/// "true"`) would otherwise go unseen by the earlier task's measure; the rest of the file
/// stays the task's. One the task's own text does not read is left as it is (its runs fail
/// as its own did). `Err(why)` where the squash's file is there but does not read as JSON:
/// the scripts the PR ends with cannot be known, so the task is not measured.
pub(crate) fn package_scripts(
    session: &Session,
    config: &Config,
    reached: &[PackageScript],
    (end, squashed): (&str, &str),
) -> Result<Result<Vec<ScriptsPut>, String>, EngineError> {
    let mut out = Vec::new();
    let mut packages: Vec<&str> = Vec::new();
    for s in reached {
        if !packages.contains(&s.package.as_str()) {
            packages.push(&s.package);
        }
    }
    for path in packages {
        let names = package_scripts::names_in(reached, path);
        let file = |tree: &str| -> Result<Option<String>, EngineError> {
            let entry = session.store.tree_entry(tree, path)?;
            if !entry.as_ref().is_some_and(|e| {
                matches!(
                    e.kind,
                    crate::store::EntryType::File | crate::store::EntryType::Executable
                )
            }) {
                return Ok(None);
            }
            text(session, tree, path)
        };
        let Some(own) = file(end)? else {
            continue;
        };
        let last = match session.store.tree_entry(squashed, path)? {
            None => None,
            Some(_) => match file(squashed)? {
                Some(text) => Some(text),
                None => return Ok(Err(unread_scripts(path))),
            },
        };
        let put = |kept| package_scripts::as_squashed(&own, last.as_deref(), &names, kept);
        let (as_squashed, kept) = match (put(false), put(true)) {
            (Ok(full), Ok(kept)) => (full, kept),
            (Err(NotJson::Own), _) | (_, Err(NotJson::Own)) => continue,
            (Err(NotJson::Squashed), _) | (_, Err(NotJson::Squashed)) => {
                return Ok(Err(unread_scripts(path)));
            }
        };
        let mut files = Vec::new();
        if as_squashed.is_some()
            && let Some(last) = &last
        {
            let dir = path.strip_suffix("package.json").unwrap_or("");
            let dir = dir.strip_suffix('/').unwrap_or(dir);
            for line in package_scripts::rewritten(&own, last, &names) {
                let command = match dir {
                    "" => line,
                    dir => format!("cd {} && {line}", shell_quote(dir)),
                };
                let run = shell_reach::files_run(&command, |file| {
                    script_text(session, config, squashed, file)
                })?;
                for file in run {
                    let added = session.store.tree_entry(end, &file)?.is_none()
                        && session.store.tree_entry(squashed, &file)?.is_some();
                    if added && !files.contains(&file) {
                        files.push(file);
                    }
                }
            }
        }
        out.push(ScriptsPut {
            path: path.to_string(),
            own,
            names,
            as_squashed,
            kept,
            files,
        });
    }
    Ok(Ok(out))
}

/// The text of `path` in `tree` as a script a command runs is read
/// (src/workflow/shell_reach.rs): a file within the script size cap, in UTF-8, not a test
/// path (the test itself, not read through).
pub(crate) fn script_text(
    session: &Session,
    config: &Config,
    tree: &str,
    path: &str,
) -> Result<Option<String>, EngineError> {
    if config.is_test_path(path) {
        return Ok(None);
    }
    let Some(entry) = session.store.tree_entry(tree, path)? else {
        return Ok(None);
    };
    if !matches!(
        entry.kind,
        crate::store::EntryType::File | crate::store::EntryType::Executable
    ) {
        return Ok(None);
    }
    Ok(session
        .store
        .blob_within(&entry.id.to_string(), shell_reach::MAX_SCRIPT)?
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok()))
}

/// Why a task is unmeasured whose RED command runs scripts of `path`, which the squash holds
/// but not as JSON text.
fn unread_scripts(path: &str) -> String {
    format!(
        "{path} as the squash has it does not read as JSON: the scripts the RED command runs \
         from it cannot be put in as the PR ends with them; make it valid JSON"
    )
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
    /// The line the built-in mutator changed; `None` for a tool's mutant: the budget spreads
    /// over lines only where they are known ([`mutate::budget_keeps`]).
    pub line: Option<usize>,
    text: String,
}

/// What a file the task's test may not notice is replaced with, where running it is how it
/// would be used: it ends a shell that sources or evaluates it (any line of it), and it is
/// no statement Python or JavaScript can import.
const NOT_CODE: &str = "exit 97\n";

impl Planned {
    /// Whether this mutant changes only scripts a RED command runs of a `package.json`
    /// (`puts`): test code, never mutated ([`package_scripts::only_scripts_differ`]).
    fn only_scripts(&self, puts: &[ScriptsPut]) -> bool {
        puts.iter().any(|p| {
            p.path == self.path
                && package_scripts::only_scripts_differ(&p.own, &self.text, &p.names)
        })
    }

    /// `path` taken from the task's test to see whether it notices: emptied, or, where
    /// `run` (the file may be run rather than read, [`runs_as_code`]), replaced by a line
    /// that fails wherever it is run.
    pub(crate) fn without(path: &str, run: bool) -> Planned {
        Planned {
            path: path.to_string(),
            name: format!("{path} taken out"),
            line: None,
            text: if run { NOT_CODE } else { "" }.to_string(),
        }
    }
}

/// Whether `path`, a file the task changed that is not code by its kind, is checked as code
/// that may be run: any such file not named as a test path (a `logo.png` whose line a script
/// evaluates), and one named as a test path that one of the task's `code` files names (a
/// `lib/test_mode.sh` a script sources). A test path no code names is emptied instead: it is
/// what the test runner runs as a test, and a test file that fails when run is no code the
/// tests depend on.
pub(crate) fn runs_as_code(config: &Config, code: &[CodeFile], path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !config.is_test_path(path) || code.iter().any(|c| c.text.contains(name))
}

impl CodeFile {
    pub(crate) fn path(&self) -> &str {
        &self.path
    }
}

/// The files a task changed, by how adequacy treats them (docs/integrity.md, "Adequacy by
/// mutation").
#[derive(Default)]
pub(crate) struct TaskFiles {
    /// Code by its kind (a source file's extension, a `#!` line): mutated.
    pub code: Vec<CodeFile>,
    /// Text that is not code by its kind or is named as a test path, but not the task's
    /// pinned test: code if the task's test notices it taken out ([`Planned::without`]).
    pub unsure: Vec<CodeFile>,
    /// Files that are not text where the task ends (or are over the size cap), not code by
    /// their name, but not the task's pinned test: no mutant of them can be made.
    pub binary: Vec<String>,
    /// Code by its name that is not text where the task ends: code the task wrote that no
    /// mutant reaches (one byte that is no UTF-8 in a script's comment would otherwise hide
    /// the script).
    pub unreadable: Vec<String>,
}

impl TaskFiles {
    pub(crate) fn is_empty(&self) -> bool {
        self.code.is_empty()
            && self.unsure.is_empty()
            && self.binary.is_empty()
            && self.unreadable.is_empty()
    }
}

/// The files the task changed, with their changed lines: code by its kind (a code file a RED
/// step pinned with its test, one it created outside `[gates] test_paths`, is code all the
/// same: an implementation written beside the test would otherwise never be mutated); text
/// whose name says it is not code, or is a test's, which is code if the test notices it (a
/// special case kept in `lib/test_mode.sh` or in a `logo.png` that a script sources); and
/// what is not text. The task's pinned test files, and the runners' own files (a
/// `conftest.py`, a `pytest.ini`), are none of these.
pub(crate) fn task_files(
    session: &Session,
    config: &Config,
    task: &Task,
) -> Result<TaskFiles, EngineError> {
    let mut out = TaskFiles::default();
    let pinned = |path: &String| {
        task.red.paths.contains(path)
            || task.red.hooks.contains(path)
            || task.next.is_some_and(|n| n.paths.contains(path))
    };
    // In-process: a `git diff` per task would cost the final check a process per task.
    for path in session.store.changed_paths(task.start, task.end)? {
        let test = config.is_test_path(&path);
        if (test && (pinned(&path) || is_harness(&path, task.red)))
            || task.witnesses.contains(&path)
        {
            continue;
        }
        // A `package.json` whose change is to the scripts a RED command runs alone: the
        // test, as a witness is (one created so is all test).
        if let Some(put) = task.scripts.iter().find(|p| p.path == path) {
            let before = match session.store.tree_entry(task.start, &path)? {
                Some(_) => text(session, task.start, &path)?,
                None => Some("{}".to_string()),
            };
            if before.is_some_and(|b| package_scripts::same_but_scripts(&b, &put.own, &put.names)) {
                continue;
            }
        }
        let entry = session.store.tree_entry(task.end, &path)?;
        // A link holds a name, not code, and a mutant written to it would be written where
        // it points, which may be outside the worktree: what it names is measured itself.
        if entry.as_ref().is_some_and(|e| {
            matches!(
                e.kind,
                crate::store::EntryType::Link | crate::store::EntryType::Submodule
            )
        }) {
            continue;
        }
        let new = match entry.map(|_| text(session, task.end, &path)).transpose()? {
            Some(Some(new)) => new,
            // Removed by the task.
            None => continue,
            // Not text where it ends (or over the cap): no line of it can be mutated.
            Some(None) => {
                if !test && is_code_kind(&path, "") {
                    out.unreadable.push(path);
                } else {
                    out.binary.push(path);
                }
                continue;
            }
        };
        // Not text where the task began (a byte that is no UTF-8 put in at a task's
        // boundary): every line of it is the task's, not none.
        let old = text(session, task.start, &path)?.unwrap_or_default();
        let lines = mutate::changed_lines(&old, &new);
        if lines.is_empty() {
            continue;
        }
        let code = !test && is_code_kind(&path, &new);
        let file = CodeFile {
            path,
            text: new,
            lines,
        };
        if code {
            out.code.push(file);
        } else {
            out.unsure.push(file);
        }
    }
    Ok(out)
}

/// Whether `text` at `path` is code by its kind: a `#!` line, or a name a language's
/// source, a build script or a shell script has. Any other text (a README, data, a file
/// named as an image) is code only where the task's test notices it.
fn is_code_kind(path: &str, text: &str) -> bool {
    const SOURCES: &[&str] = &[
        "sh", "bash", "zsh", "ksh", "fish", "py", "pyw", "pyx", "js", "mjs", "cjs", "ts", "mts",
        "cts", "jsx", "tsx", "vue", "svelte", "rs", "go", "c", "h", "cc", "cpp", "cxx", "hpp",
        "hh", "hxx", "m", "mm", "java", "kt", "kts", "scala", "groovy", "gradle", "rb", "pl", "pm",
        "php", "lua", "swift", "cs", "fs", "fsx", "vb", "r", "jl", "ex", "exs", "erl", "hrl", "hs",
        "ml", "mli", "clj", "cljs", "dart", "sql", "ps1", "psm1", "bat", "cmd", "awk", "sed",
        "tcl", "vim", "el", "lisp", "scm", "rkt", "zig", "nim", "cr", "v", "sv", "vhd", "mk",
        "cmake", "nix", "elm", "purs", "sol", "wat",
    ];
    const NAMES: &[&str] = &[
        "Makefile",
        "makefile",
        "GNUmakefile",
        "Dockerfile",
        "Containerfile",
        "Rakefile",
        "Justfile",
        "justfile",
        "Vagrantfile",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    text.starts_with("#!")
        || NAMES.contains(&name)
        || name.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && SOURCES.contains(&ext.to_ascii_lowercase().as_str())
        })
}

/// Whether `path` is one of the test runners' own files among the default `[gates]
/// test_paths` (src/config/sections.rs) that the pinned test `red` runs with as RED steps
/// left them (its `hooks`: pytest's and jest's, src/workflow/red.rs), or cargo's
/// configuration: how tests are found and run, not the code under test. For any other
/// runner such a file is not put back, and is judged as every other file is: a shell test
/// can source a `lib/jest.config.sh`, or run a `conftest.py`.
fn is_harness(path: &str, red: &PinnedTest) -> bool {
    const CONFIG_EXTENSIONS: [&str; 10] = [
        "js", "ts", "mjs", "cjs", "mts", "cts", "json", "jsonc", "yaml", "yml",
    ];
    let name = path.rsplit('/').next().unwrap_or(path);
    let runners = matches!(
        name,
        "conftest.py" | "pytest.ini" | ".pytest.ini" | "pyproject.toml" | "setup.cfg" | "tox.ini"
    ) || name == ".mocharc"
        || ["jest.config.", "vitest.config.", ".mocharc."]
            .iter()
            .any(|p| {
                name.strip_prefix(p)
                    .is_some_and(|ext| CONFIG_EXTENSIONS.contains(&ext))
            });
    let pinned_with_hooks = !red.hooks.is_empty() || red.paths.iter().any(|p| is_conftest(p));
    path == ".cargo/config.toml" || path == ".cargo/config" || (runners && pinned_with_hooks)
}

/// The files of `files` that [`mutate::written_otherwise`] can write otherwise, so written:
/// what [`TaskWorktree::run_all`] puts in for the control run of a task whose test killed
/// its mutants (docs/integrity.md, "Adequacy by mutation").
pub(crate) fn written_otherwise(files: &[CodeFile]) -> Vec<Planned> {
    files
        .iter()
        .filter_map(|f| {
            mutate::written_otherwise(&f.path, &f.text).map(|text| Planned {
                path: f.path.clone(),
                name: format!("{} written otherwise", f.path),
                line: None,
                text,
            })
        })
        .collect()
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
                    line: Some(m.line),
                    text: m.apply(&f.text),
                })
        })
        .collect()
}

/// The built-in mutator's mutants of `files` that are run, in its order: but for one that
/// leaves a JSON or TOML file unreadable ([`mutate::breaks_data_syntax`]), which any test
/// that reads the file kills, and which is left out rather than counted; and but for one
/// that changes only the scripts a RED command runs of a `package.json` (`scripts`), which is
/// a change to the test, not to the code, left out as a witness is never mutated (each one
/// that broke the test would "kill" itself), before the budget is spread.
pub(crate) fn builtin_readable(files: &[CodeFile], scripts: &[ScriptsPut]) -> Vec<Planned> {
    files
        .iter()
        .flat_map(|f| {
            mutate::mutants(&f.path, &f.text, &f.lines)
                .into_iter()
                .filter_map(|m| {
                    let text = m.apply(&f.text);
                    let planned = Planned {
                        path: m.path.clone(),
                        name: m.name(),
                        line: Some(m.line),
                        text,
                    };
                    (!mutate::breaks_data_syntax(&f.path, &f.text, &planned.text)
                        && !planned.only_scripts(scripts))
                    .then_some(planned)
                })
        })
        .collect()
}

/// The built-in mutator's mutants of `files` within `budget` ([`mutate::within_budget`]:
/// every file's first before any file's second, then the first of every changed line
/// before the second of any), in its order, and the file of each mutant past it (one entry
/// each), not run.
pub(crate) fn builtin_within(
    files: &[CodeFile],
    budget: usize,
    scripts: &[ScriptsPut],
) -> (Vec<Planned>, Vec<String>) {
    split_within(builtin_readable(files, scripts), budget)
}

/// `mutants` (in the order made) within `budget`, by [`mutate::budget_keeps`], and the file
/// of each past it (one entry each).
pub(crate) fn split_within(mutants: Vec<Planned>, budget: usize) -> (Vec<Planned>, Vec<String>) {
    let keys: Vec<(&str, Option<usize>)> =
        mutants.iter().map(|m| (m.path.as_str(), m.line)).collect();
    let keep = mutate::budget_keeps(&keys, budget);
    let (mut run, mut past) = (Vec::new(), Vec::new());
    for (m, keep) in mutants.into_iter().zip(keep) {
        if keep {
            run.push(m);
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

/// The tests the PR changed later ([`Task::as_squashed`]) that the squash still holds as
/// text: each path, its text where the task ends and the squash's. One deleted later, or
/// not text, stays as the squash has it.
fn later_texts(
    session: &Session,
    task: &Task,
) -> Result<Vec<(String, String, String)>, EngineError> {
    let (squashed, later) = task.as_squashed;
    let mut out = Vec::new();
    for path in later {
        if let (Some(_), Some(end), Some(last)) = (
            session.store.tree_entry(squashed, path)?,
            text(session, task.end, path)?,
            text(session, squashed, path)?,
        ) {
            out.push((path.clone(), end, last));
        }
    }
    Ok(out)
}

impl ScriptsPut {
    /// The text the task's runs hold, where it is not the task's own: with the squash's
    /// scripts, or, `kept`, those kept where the squash's fail on the task's own code.
    fn text(&self, kept: bool) -> Option<&str> {
        match kept {
            true => self.kept.as_deref(),
            false => self.as_squashed.as_deref(),
        }
    }
}

/// One task's worktree: the task's end tree with its pinned test files as its RED step left
/// them, put back as it was after every run (tracked, untracked and ignored files alike), and
/// what a run left running ended first, so nothing one run leaves is seen by the next
/// (docs/integrity.md, "Adequacy by mutation").
pub(crate) struct TaskWorktree<'a> {
    session: &'a Session,
    task: &'a Task<'a>,
    /// The files mutated or checked, which stay as the task ends, pinned or not.
    code: Vec<String>,
    /// Whether the tests the PR changed later hold only the lines of theirs the squash still
    /// holds ([`TaskWorktree::keep_later_lines`]) rather than the squash's text.
    kept_lines: bool,
    /// Where they do, the lines a later task added or rewrote in each that are put back
    /// ([`TaskWorktree::put_back_added_lines`]): 1-based lines of the squash's text.
    added: Vec<(String, Vec<usize>)>,
    scratch: Scratch<'a>,
    reaper: Option<&'a Reaper>,
}

/// At most this many runs of a task's test try the lines a later task added to the tests it
/// runs back in ([`TaskWorktree::put_back_added_lines`]): each is a run of the test, out of
/// the task's `mutation_timeout`.
const PUT_BACK_TRIES: usize = 16;

impl<'a> TaskWorktree<'a> {
    pub(crate) fn new(
        session: &'a Session,
        task: &'a Task<'a>,
        files: &TaskFiles,
        reaper: Option<&'a Reaper>,
    ) -> Result<TaskWorktree<'a>, EngineError> {
        let code: Vec<String> = (files.code.iter().chain(&files.unsure))
            .map(|f| f.path.clone())
            .chain(files.binary.iter().cloned())
            .collect();
        Ok(TaskWorktree {
            session,
            task,
            scratch: Self::make(session, task, &code, false, &[])?,
            code,
            kept_lines: false,
            added: Vec::new(),
            reaper,
        })
    }

    /// The task's end tree with its pinned files as its RED step left them, but for the code
    /// files among them (`code`), whose mutants are of the text the task ends with, and
    /// with the tests the PR deleted or changed later as it ends with them
    /// ([`Task::as_squashed`]); where `kept_lines`, those changed later as
    /// [`Self::keep_later_lines`] has them, with the lines of theirs at `added` put back.
    fn make(
        session: &'a Session,
        task: &Task,
        code: &[String],
        kept_lines: bool,
        added: &[(String, Vec<usize>)],
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
        let (squashed, later) = task.as_squashed;
        scratch.put(squashed, later)?;
        for put in task.scripts {
            scratch.put(squashed, &put.files)?;
            if let Some(text) = put.text(kept_lines) {
                write_inside(scratch.path(), &put.path, text.as_bytes()).map_err(io_error(
                    format!("write {} with the scripts as the squash has them", put.path),
                ))?;
            }
        }
        if kept_lines {
            for (path, end, last) in later_texts(session, task)? {
                let lines = added
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map_or(&[][..], |(_, lines)| lines);
                write_inside(
                    scratch.path(),
                    &path,
                    mutate::lines_kept_with(&end, &last, lines).as_bytes(),
                )
                .map_err(io_error(format!("write {path} as the squash keeps it")))?;
            }
        }
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
            self.write_mutant(m)?;
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

    /// Writes `mutant` into the worktree: a mutant of a `package.json` whose scripts a RED
    /// command runs with those scripts as the worktree holds them (the squash's), so that
    /// it runs the same test as every other mutant.
    fn write_mutant(&self, mutant: &Planned) -> Result<(), EngineError> {
        let scripts = self.task.scripts.iter().find_map(|p| {
            (p.path == mutant.path)
                .then(|| p.text(self.kept_lines))
                .flatten()
                .and_then(|from| package_scripts::with_scripts_of(&mutant.text, from, &p.names))
        });
        let text = scripts.as_deref().unwrap_or(&mutant.text);
        write_inside(self.scratch.path(), &mutant.path, text.as_bytes())
            .map_err(io_error(format!("write a mutant of {}", mutant.path)))
    }

    /// Puts the worktree back as it was made; one a reset cannot put back is replaced.
    fn reset(&mut self) -> Result<(), EngineError> {
        if self.scratch.reset().is_err() {
            self.scratch = Self::make(
                self.session,
                self.task,
                &self.code,
                self.kept_lines,
                &self.added,
            )?;
        }
        Ok(())
    }

    /// Makes the worktree again with each test the PR changed later (not deleted) holding
    /// only the lines of it the task's end and the squash both hold, where it held the
    /// squash's text: a later task's test added to a file this task's command runs fails on
    /// this task's code, while an assertion a later task took out or rewrote stays out.
    /// `false` when there is no such test, or it is so already.
    pub(crate) fn keep_later_lines(&mut self) -> Result<bool, EngineError> {
        let scripts_kept = self.task.scripts.iter().any(|p| p.as_squashed != p.kept);
        if self.kept_lines || (self.task.as_squashed.1.is_empty() && !scripts_kept) {
            return Ok(false);
        }
        self.kept_lines = true;
        self.scratch = Self::make(self.session, self.task, &self.code, true, &[])?;
        Ok(true)
    }

    /// Where the tests the PR changed later hold only the lines the squash kept
    /// ([`Self::keep_later_lines`]) and the task's test passes so on its own code, puts back
    /// the lines a later task added or rewrote in them that it still passes with
    /// ([`mutate::keep_passing`], in order, halves first, at most [`PUT_BACK_TRIES`] runs
    /// within `deadline`; a blank line is none): a later task's own check, which fails on
    /// this task's code, stays out, while a line that weakens the test (an `exit 0` on top of
    /// the earlier task's check, a check rewritten to check less) passes there and is put
    /// back, so the measure sees it (docs/integrity.md, "Adequacy by mutation").
    pub(crate) fn put_back_added_lines(
        &mut self,
        command: &str,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<(), EngineError> {
        if !self.kept_lines {
            return Ok(());
        }
        let texts = later_texts(self.session, self.task)?;
        let items: Vec<(usize, usize)> = texts
            .iter()
            .enumerate()
            .flat_map(|(f, (_, end, last))| {
                let lines: Vec<&str> = last.lines().collect();
                mutate::changed_lines(end, last)
                    .into_iter()
                    .filter(move |n| lines.get(n - 1).is_some_and(|l| !l.trim().is_empty()))
                    .map(move |n| (f, n))
            })
            .collect();
        let kept = mutate::keep_passing(&items, PUT_BACK_TRIES, |with| {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            for (f, (path, end, last)) in texts.iter().enumerate() {
                let lines: Vec<usize> = with.iter().filter(|i| i.0 == f).map(|i| i.1).collect();
                write_inside(
                    self.scratch.path(),
                    path,
                    mutate::lines_kept_with(end, last, &lines).as_bytes(),
                )
                .map_err(io_error(format!("write {path} with lines put back")))?;
            }
            Ok::<_, EngineError>(self.run(None, command, timeout.min(left))?.success())
        })?;
        if kept.is_empty() {
            return Ok(());
        }
        self.added = texts
            .iter()
            .enumerate()
            .map(|(f, (path, _, _))| {
                let lines = kept.iter().filter(|i| i.0 == f).map(|i| i.1).collect();
                (path.clone(), lines)
            })
            .collect();
        self.scratch = Self::make(self.session, self.task, &self.code, true, &self.added)?;
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

    /// [`Self::run`] with every file of `files` written in first.
    pub(crate) fn run_all(
        &mut self,
        files: &[Planned],
        command: &str,
        limit: Duration,
    ) -> Result<ExitRecord, EngineError> {
        let written = files.iter().try_for_each(|f| self.write_mutant(f));
        let ran = written.and_then(|()| self.test(None, command, limit));
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
            self.write_mutant(m)?;
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
            line: None,
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
        write_inside(&root, &f.path, f.text.as_bytes())
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
    let (listed, unmade) = match made? {
        Ok(listed) => listed,
        Err(why) => return Ok(Err(why)),
    };
    let mut out = Vec::new();
    for (f, m) in listed {
        let text = match m.mutant(&f.text) {
            Ok(text) => text,
            Err(why) => return Ok(Err(why)),
        };
        if let Some(name) = cosmic_ray::name(&f.path, &f.text, &text) {
            out.push(Planned {
                path: f.path.clone(),
                name,
                line: None,
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

/// The mutations cosmic-ray's sessions made of the changed lines of `files` within
/// `budget`, each with its file, file by file in [`cosmic_ray::mutations`]' order, and the
/// file of each listed past the budget; before the worktree is reset. Every file's session
/// is listed first, so that the budget takes every file's first mutation before any file's
/// second ([`mutate::budget_keeps`]); then each file's line filter is given only the lines
/// of its mutations within the budget, so `exec`, ~20 ms CPU a mutant on a large file, makes
/// about `budget`, not every mutation of a large task's lines.
fn cosmic_ray_session<'f>(
    worktree: &mut TaskWorktree,
    files: &'f [CodeFile],
    limit: Duration,
    budget: usize,
) -> Result<Result<ListedAndUnmade<'f>, String>, EngineError> {
    let started = Instant::now();
    let ours = tempfile::tempdir().map_err(io_error("make cosmic-ray's session directory"))?;
    let left = || limit.saturating_sub(started.elapsed());
    let paths = |n: usize| {
        (
            ours.path().join(format!("{n}.toml")),
            ours.path().join(format!("{n}.sqlite")),
        )
    };
    let quoted = |n: usize| {
        let (config, session) = paths(n);
        (
            shell_quote(&config.to_string_lossy()),
            shell_quote(&session.to_string_lossy()),
        )
    };
    // Every file's mutations, listed before any is made.
    let mut all: Vec<Vec<cosmic_ray::Mutation>> = Vec::new();
    for (n, f) in files.iter().enumerate() {
        std::fs::write(paths(n).0, cosmic_ray::config(&f.path, &f.lines))
            .map_err(io_error("write cosmic-ray's configuration"))?;
        let (config, session) = quoted(n);
        if let Err(why) = stdout_of(
            worktree,
            &format!("cosmic-ray init {config} {session}"),
            left(),
        )? {
            return Ok(Err(why));
        }
        match stdout_of(worktree, &format!("cosmic-ray dump {session}"), left())?
            .and_then(|d| cosmic_ray::mutations(&d, &f.path, &f.lines))
        {
            Ok(listed) => all.push(listed),
            Err(why) => return Ok(Err(why)),
        }
    }
    let keys: Vec<(&str, Option<usize>)> = files
        .iter()
        .zip(&all)
        // In cosmic-ray's order within a file, after every file's first.
        .flat_map(|(f, listed)| listed.iter().map(|_| (f.path.as_str(), None)))
        .collect();
    let mut keep = mutate::budget_keeps(&keys, budget).into_iter();
    let (mut made, mut unmade) = (Vec::new(), Vec::new());
    for (n, (f, listed)) in files.iter().zip(all).enumerate() {
        let kept: Vec<bool> = keep.by_ref().take(listed.len()).collect();
        if !kept.contains(&true) {
            // Past the budget: counted, never made.
            unmade.extend(listed.iter().map(|_| f.path.clone()));
            continue;
        }
        let within: Vec<cosmic_ray::Mutation> = listed
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(m, _)| m.clone())
            .collect();
        let lines = cosmic_ray::lines_of_first(&within, within.len());
        std::fs::write(paths(n).0, cosmic_ray::config(&f.path, &lines))
            .map_err(io_error("write cosmic-ray's configuration"))?;
        let (config, session) = quoted(n);
        for step in [
            format!("cr-filter-lines --config {config} {session}"),
            format!("cosmic-ray exec {config} {session}"),
        ] {
            if let Err(why) = stdout_of(worktree, &step, left())? {
                return Ok(Err(why));
            }
        }
        match stdout_of(worktree, &format!("cosmic-ray dump {session}"), left())?
            .and_then(|d| cosmic_ray::mutations(&d, &f.path, &f.lines))
        {
            Ok(found) if found.len() == listed.len() => {
                for (m, k) in found.into_iter().zip(&kept) {
                    match k {
                        true => made.push((f, m)),
                        false => unmade.push(f.path.clone()),
                    }
                }
            }
            Ok(found) => {
                return Ok(Err(format!(
                    "cosmic-ray's session listed {} mutations of {}'s changed lines, then {}",
                    listed.len(),
                    f.path,
                    found.len()
                )));
            }
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(Ok((made, unmade)))
}

/// The mutations made within the budget, each with its file, and the file of each past it.
type ListedAndUnmade<'f> = (Vec<Listed<'f>>, Vec<String>);

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
            line: None,
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
        write_inside(&root, &f.path, cargo_mutants::neutral(&f.text).as_bytes())
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
                    line: Some(m.line),
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
            line: None,
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
