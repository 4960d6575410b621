//! What makes a RED run a RED (docs/integrity.md, "The oracle the agent cannot write"): a
//! command that ran no test did not fail as a test fails; a test that cannot be read failed
//! for the wrong reason; a test file that is a link out of the repository is not the
//! repository's to pin. Pure: the engine gives the output and the tree's entries.

use super::cargo_files;
use super::evidence::{self, Evidence};
use super::state::{ExitRecord, RedOutcome, RedPin};

/// A RED step pins at most this many paths: a test is a few files, and every later run of it
/// puts them back.
pub const MAX_RED_PATHS: usize = 1000;

/// Whether a failing RED run failed as a test fails: the ids its per-test report says failed
/// (empty when it reports nothing per test), or why it is no test that failed (it did not
/// run, [`did_not_run`]; its report names no failed test, docs/integrity.md, "Per-test
/// evidence": a script that prints `ok` and exits 1 did not fail as a test does).
pub fn failed_as_a_test(
    command: &str,
    exit: ExitRecord,
    output: &[u8],
    report: &Evidence,
) -> Result<Vec<String>, String> {
    if let Some(why) = did_not_run(command, exit, output) {
        return Err(format!("the test did not run ({why})"));
    }
    match evidence::pinned_on_base(report) {
        Ok(tests) => Ok(tests.unwrap_or_default()),
        Err(short) => Err(format!("the test did not fail as a test fails ({short})")),
    }
}

/// Why a RED step that changed `count` files since its task began pins no test, if it is too
/// many ([`MAX_RED_PATHS`]).
pub fn too_many_paths(count: usize) -> Option<String> {
    (count > MAX_RED_PATHS).then(|| {
        format!(
            "the RED step changed {count} files since the task began, and a RED test is pinned \
             whole (at most {MAX_RED_PATHS} files): leave what is not the test to the GREEN step"
        )
    })
}

/// A path a failing RED run's step changed since its task began, as the trees have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub path: String,
    /// Where it is a symbolic link out of the repository ([`link_out_of_repository`]).
    pub link_out: Option<String>,
    /// The step created it: it was not there when the task began.
    pub created: bool,
    /// It is a test file (`[gates] test_paths`).
    pub is_test: bool,
}

/// What a failing RED run that failed as a test pins, in the tree `tree` it left, from the
/// paths its step `changed` (in order) since the task began at the tree `start`, and the ids
/// that failed (`tests`) in its report (`base`): its test (test files and files the step
/// created), the files it shares with code (those that existed before it), the file its
/// report named for each id ([`evidence::files_of`]) and the runner's hook files on the
/// test's way ([`hooks`]); no test when one of them leads out of the repository.
pub fn pinned(
    (start, tree): (String, String),
    changed: Vec<Changed>,
    (tests, base): (Vec<String>, &Evidence),
) -> RedOutcome {
    let mut paths = Vec::new();
    let mut shared = Vec::new();
    for c in changed {
        if let Some(why) = c.link_out {
            return RedOutcome::NotATest(format!(
                "its test cannot be pinned: {why}, out of the repository (a test is a file of the \
                 repository, so that what it checks cannot change outside it)"
            ));
        }
        if c.created || c.is_test {
            paths.push(c.path);
        } else {
            shared.push(c.path);
        }
    }
    let test_files = evidence::files_of(base, &tests);
    let on_the_way: Vec<&str> = paths
        .iter()
        .chain(test_files.values().flatten())
        .map(String::as_str)
        .collect();
    let hooks = hooks(base.kind, &on_the_way, &paths);
    RedOutcome::Pinned(RedPin {
        tree,
        start: Some(start),
        paths,
        shared,
        tests,
        test_files,
        hooks,
    })
}

/// The runner's own hook files on the way to a test (docs/integrity.md, "Per-test
/// evidence"): for a run pytest was asked to report (`kind` junit), the `conftest.py` of
/// every directory from the repository's root down to each Python file among `files` (the
/// pinned paths, the files the report named), but those `pinned` already. pytest loads each
/// before it runs a test below it, and a hook there (`item.runtest = lambda: None`) decides
/// what the test's run reports: it is part of the test. For a run jest reported, the
/// `package.json` of each such directory (for any file): where jest reads its configuration.
/// For a run whose libtest lines were read (cargo), the `Cargo.toml` of each directory on
/// the way to each Rust file: where cargo reads which test binaries it builds and runs.
/// A file a runner names outside the repository (absolute, or through `..`) has none of its
/// hooks here.
pub fn hooks(kind: evidence::Kind, files: &[&str], pinned: &[String]) -> Vec<String> {
    // jest reads its configuration (a `package.json`'s `jest` key) from the directories it
    // runs in and above: the `package.json` files on the test's way stand for a pin whose
    // runs load the runner's files (src/workflow/pytest_files.rs).
    // cargo reads a package's test targets from its `Cargo.toml`: the manifests on the way
    // to a Rust file stand for a pin whose runs load cargo's files (a `[[test]]` declared
    // `harness = false` prints libtest's lines as it likes: src/workflow/cargo_files.rs).
    let (hook, language) = match kind {
        evidence::Kind::Junit => (CONFTEST, Some(".py")),
        evidence::Kind::JestJson => (PACKAGE_JSON, None),
        evidence::Kind::Libtest => (cargo_files::MANIFEST, Some(".rs")),
        _ => return Vec::new(),
    };
    let mut hooks = std::collections::BTreeSet::new();
    for file in files {
        let inside = !file.starts_with('/')
            && file
                .split('/')
                .all(|part| !part.is_empty() && part != ".." && part != ".");
        if !inside || language.is_some_and(|ext| !file.ends_with(ext)) {
            continue;
        }
        let parts: Vec<&str> = file.split('/').collect();
        for depth in 0..parts.len() {
            let dir = parts[..depth].join("/");
            hooks.insert(if dir.is_empty() {
                hook.to_string()
            } else {
                format!("{dir}/{hook}")
            });
        }
    }
    hooks.into_iter().filter(|h| !pinned.contains(h)).collect()
}

/// pytest's hook file, loaded from every directory it collects.
pub const CONFTEST: &str = "conftest.py";

/// Whether a pinned test's runs load the runner's files (docs/integrity.md, "Per-test
/// evidence"): its run was one pytest or jest reported, with a file of the repository, which
/// [`hooks`] gave the root's `conftest.py` (or `package.json`) at least, as a hook or (the
/// RED step wrote it) a pinned path. pytest loads every `conftest.py` of the directories it
/// collects, beside the test's way too, and reads its configuration and plugins, as jest
/// reads its configuration and the modules it names, and cargo its manifests' target
/// declarations and configuration: each is test code for such a test
/// (src/workflow/pytest_files.rs, src/workflow/cargo_files.rs).
pub fn loads_runner_files(paths: &[String], hooks: &[String]) -> bool {
    !hooks.is_empty()
        || paths
            .iter()
            .any(|p| p == CONFTEST || p == PACKAGE_JSON || p == cargo_files::MANIFEST)
}

/// Which runner's files a pin that [`loads_runner_files`] loads: pytest's (its hooks are
/// `conftest.py` files, or its RED step wrote the root's), jest's (`package.json` files),
/// cargo's (`Cargo.toml` files).
/// A mixed repository's pytest test is not held to a `jest.config.js` it never reads.
pub fn runners(paths: &[String], hooks: &[String]) -> Runners {
    let named = |name: &str| {
        hooks.iter().any(|h| h.rsplit('/').next() == Some(name)) || paths.iter().any(|p| p == name)
    };
    Runners {
        pytest: named(CONFTEST),
        jest: named(PACKAGE_JSON),
        cargo: named(cargo_files::MANIFEST),
    }
}

/// See [`runners`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Runners {
    pub pytest: bool,
    pub jest: bool,
    pub cargo: bool,
}

impl std::ops::BitOr for Runners {
    type Output = Runners;
    fn bitor(self, other: Runners) -> Runners {
        Runners {
            pytest: self.pytest || other.pytest,
            jest: self.jest || other.jest,
            cargo: self.cargo || other.cargo,
        }
    }
}

/// jest's configuration file whose `jest` key it reads, in the directories it runs in.
pub const PACKAGE_JSON: &str = "package.json";

/// Whether `path` is a `conftest.py`, in any directory.
pub fn is_conftest(path: &str) -> bool {
    path.rsplit('/').next() == Some(CONFTEST)
}

/// Why a failing RED run is not a test that failed: the command could not run, or its test
/// runner reports that no test ran. `None` when a test ran (as far as the output tells).
pub fn did_not_run(command: &str, exit: ExitRecord, output: &[u8]) -> Option<String> {
    match exit {
        ExitRecord::Code(126) => {
            return Some(
                "the command could not be executed (exit 126: a file that is not executable)"
                    .into(),
            );
        }
        ExitRecord::Code(127) => {
            return Some("a program it runs was not found (exit 127)".into());
        }
        _ => {}
    }
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let lower = text.to_lowercase();
    if lower.contains("no tests ran") {
        return Some("the test runner says no tests ran".into());
    }
    if let Some(line) = lines
        .iter()
        .find(|l| cannot_open_script(l).is_some_and(|file| names_file(command, &file)))
    {
        return Some(format!("the test script could not be opened: {line}"));
    }
    pytest_ran_none(command, exit, &lines, &lower)
        .or_else(|| cargo_ran_none(&lines))
        .or_else(|| unittest_ran_none(&lines))
        .or_else(|| go_ran_none(&lines, &lower))
        .or_else(|| mocha_ran_none(&lines))
}

/// pytest's ways of running nothing: exit 5, no item collected, every test deselected or
/// skipped.
fn pytest_ran_none(command: &str, exit: ExitRecord, lines: &[&str], lower: &str) -> Option<String> {
    let pytest = command.contains("pytest")
        || command.contains("py.test")
        || lower.contains("test session starts");
    if pytest && exit == ExitRecord::Code(5) {
        return Some("pytest collected no test to run (exit 5)".into());
    }
    if lines.iter().any(|l| l.starts_with("collected 0 items")) {
        return Some("pytest collected no test (collected 0 items)".into());
    }
    if let Some((summary, counts)) = lines.iter().rev().find_map(|l| pytest_summary(l))
        && !counts.iter().any(|(n, kind)| {
            *n > 0
                && ["failed", "error", "errors", "passed", "xfailed", "xpassed"]
                    .contains(&kind.as_str())
        })
        && counts
            .iter()
            .any(|(n, kind)| *n > 0 && (kind == "deselected" || kind == "skipped"))
    {
        return Some(format!(
            "every test was deselected or skipped, none ran: {summary}"
        ));
    }
    None
}

/// cargo test's: every test binary ignored or filtered out everything.
fn cargo_ran_none(lines: &[&str]) -> Option<String> {
    let results: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("test result: "))
        .collect();
    if !results.is_empty()
        && results
            .iter()
            .all(|l| l.contains(" 0 passed;") && l.contains(" 0 failed;"))
    {
        return Some(
            "every test binary ran no test: each was ignored or filtered out (0 passed; 0 failed)"
                .into(),
        );
    }
    None
}

/// unittest's: every test skipped, or none ran; then every test binary running 0 tests, and
/// a runner that found none.
fn unittest_ran_none(lines: &[&str]) -> Option<String> {
    if let (Some(ran), Some(skipped)) = (
        counts(lines, "Ran ", " test"),
        lines.iter().find_map(|l| {
            let n = l.strip_prefix("OK (skipped=")?.strip_suffix(')')?;
            n.parse::<u64>().ok()
        }),
    ) && ran.iter().sum::<u64>() == skipped
    {
        return Some(format!("unittest skipped every test it ran ({skipped})"));
    }
    if let Some(counts) = counts(lines, "Ran ", " test")
        && counts.iter().all(|n| *n == 0)
    {
        return Some("unittest ran 0 tests".into());
    }
    if let Some(counts) = counts(lines, "running ", " test")
        && counts.iter().all(|n| *n == 0)
    {
        return Some("every test binary ran 0 tests (running 0 tests)".into());
    }
    None
}

/// go test's: no test files, or no test to run in any package; before it, a runner that
/// found no tests.
fn go_ran_none(lines: &[&str], lower: &str) -> Option<String> {
    if lower.contains("no tests found") {
        return Some("the test runner found no tests (No tests found)".into());
    }
    let go_ran = lines.iter().any(|l| {
        l.starts_with("=== RUN")
            || l.starts_with("--- FAIL")
            || l.starts_with("--- PASS")
            || l.starts_with("FAIL\t")
            || l.starts_with("ok ")
            || l.starts_with("ok\t")
    });
    if lower.contains("no test files") && !go_ran {
        return Some("there are no test files (no test files)".into());
    }
    let go_ok: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("ok ") || l.starts_with("ok\t"))
        .collect();
    if !go_ok.is_empty()
        && go_ok.iter().all(|l| l.ends_with("[no tests to run]"))
        && !lines
            .iter()
            .any(|l| l.starts_with("--- FAIL") || l.starts_with("FAIL"))
    {
        return Some("go test ran no test ([no tests to run])".into());
    }
    None
}

/// mocha's: 0 passing and nothing failing.
fn mocha_ran_none(lines: &[&str]) -> Option<String> {
    if let Some(counts) = counts(lines, "", " passing")
        && counts.iter().all(|n| *n == 0)
        && !lines
            .iter()
            .any(|l| l.ends_with(" failing") || l.contains(" failing ("))
    {
        return Some("mocha ran no test (0 passing)".into());
    }
    None
}

/// The file in `sh: 0: cannot open x.sh: No such file` or `python3: can't open file '…'`:
/// an interpreter that could not read its script.
fn cannot_open_script(line: &str) -> Option<String> {
    let (program, rest) = line.split_once(": ")?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let shell = matches!(program, "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash");
    let python = program.starts_with("python");
    let number = |c: char| c.is_ascii_digit() || c == ':' || c == ' ';
    let mut rest = rest.trim_start_matches(number);
    // bash's `line 3: `, then the builtin that sourced it (`. ./t.sh`, `source t.sh`).
    if let Some(after) = rest.strip_prefix("line ") {
        rest = after.trim_start_matches(number);
    }
    for builtin in [".: ", "source: "] {
        rest = rest.strip_prefix(builtin).unwrap_or(rest);
    }
    let lower = rest.to_lowercase();
    if shell && (lower.starts_with("cannot open ") || lower.starts_with("can't open ")) {
        let file = rest.split_once("open ")?.1;
        return Some(file.split(':').next().unwrap_or(file).trim().to_string());
    }
    if shell && let Some(file) = rest.strip_suffix(": No such file or directory") {
        return Some(file.trim().to_string());
    }
    if python && lower.starts_with("can't open file ") {
        let quoted = rest.get("can't open file ".len()..)?.split('\'').nth(1)?;
        return Some(quoted.to_string());
    }
    None
}

/// True when `file` (as an interpreter named it) is one of the words of `command`: the test
/// the command runs, not a file that test reads.
fn names_file(command: &str, file: &str) -> bool {
    command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .filter(|w| !w.is_empty())
        .any(|word| {
            let word = word.trim_start_matches("./");
            file == word || file.ends_with(&format!("/{word}"))
        })
}

/// `==== 1 failed, 3 deselected in 0.01s ====` (or without the `=`, as `-q` prints it):
/// pytest's last line, and its counts by kind.
fn pytest_summary(line: &str) -> Option<(String, Vec<(u64, String)>)> {
    let summary = line.trim_matches('=').trim();
    let (counts, time) = summary.rsplit_once(" in ")?;
    let time = time.split_whitespace().next()?;
    if !time.ends_with('s') || !time.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let counts = counts
        .split(", ")
        .map(|part| {
            let (n, kind) = part.split_once(' ')?;
            Some((n.parse().ok()?, kind.to_string()))
        })
        .collect::<Option<Vec<(u64, String)>>>()?;
    Some((summary.to_string(), counts))
}

/// How the GREEN step's run of its RED test is had (docs/integrity.md, "The oracle the
/// agent cannot write").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RerunPlan {
    /// The step's own command is the RED command, run on the pinned files as they were.
    OwnRunStands,
    /// Another command passed; the working tree still has the pinned files as they were.
    InPlace,
    /// The GREEN step changed pinned files: a scratch worktree of its tree gets them back.
    Scratch,
}

/// The plan for running the RED test again, from whether the step's command is the RED
/// command and whether the working tree has the pinned files as the RED step left them.
pub fn rerun_plan(same_command: bool, unchanged: bool) -> RerunPlan {
    match (same_command, unchanged) {
        (true, true) => RerunPlan::OwnRunStands,
        (false, true) => RerunPlan::InPlace,
        (_, false) => RerunPlan::Scratch,
    }
}

/// The numbers `N` of every line that reads `{prefix}N{suffix}…`; `None` when no line does.
fn counts(lines: &[&str], prefix: &str, suffix: &str) -> Option<Vec<u64>> {
    let found: Vec<u64> = lines
        .iter()
        .filter_map(|l| {
            let rest = l.strip_prefix(prefix)?;
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            if digits == 0 || !rest[digits..].starts_with(suffix) {
                return None;
            }
            rest[..digits].parse().ok()
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// The line that shows the test itself could not be read (a shell's or Python's syntax
/// error), if one does: a RED that fails so proves nothing about the behaviour.
pub fn syntax_error(output: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    text.lines()
        .map(str::trim)
        .find(|line| {
            let lower = line.to_lowercase();
            lower.contains("syntax error:")
                || lower.contains("syntax error near unexpected token")
                || lower.contains("parse error near")
                || line.starts_with("SyntaxError:")
                || line.contains("Error: SyntaxError")
        })
        .map(|line| line.chars().take(200).collect())
}

/// The lines a RED step added to a shared file (in `red`, not in `base`: the test's lines
/// and what else the PR had added by then) that `now` no longer holds, as many times as
/// they were added; blank lines and indentation aside. A shared file's test lines are not
/// pinned, so this is how the final note tells that a later step changed them.
pub fn lines_dropped(base: &str, red: &str, now: &str) -> Vec<String> {
    use std::collections::HashMap;
    let count = |text: &str| {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            *counts.entry(line.to_string()).or_default() += 1;
        }
        counts
    };
    let (base, now) = (count(base), count(now));
    let mut dropped = Vec::new();
    for (line, in_red) in count(red) {
        let added = in_red.saturating_sub(base.get(&line).copied().unwrap_or(0));
        if added > 0 && now.get(&line).copied().unwrap_or(0) < added {
            dropped.push(line);
        }
    }
    dropped.sort();
    dropped
}

/// A tree entry's kind, as far as pinning a test is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A file or anything that is not a link.
    File,
    Directory,
    /// A symbolic link, with its target.
    Link(Vec<u8>),
}

/// Where the symbolic link at `path` (or one its resolution goes through) leads out of the
/// repository, given the tree's entries; `None` when it stays inside. Absolute targets are
/// outside: a clone elsewhere has nothing there.
pub fn link_out_of_repository(path: &str, entry: &dyn Fn(&str) -> Option<Entry>) -> Option<String> {
    let mut pending: Vec<String> = path.split('/').map(str::to_string).collect();
    pending.reverse();
    let mut resolved: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(part) = pending.pop() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if resolved.pop().is_none() {
                    return Some(format!("{path} leads above the repository's root"));
                }
                continue;
            }
            _ => {}
        }
        resolved.push(part);
        let here = resolved.join("/");
        if let Some(Entry::Link(target)) = entry(&here) {
            hops += 1;
            if hops > 40 {
                return Some(format!("{path} is a loop of symbolic links"));
            }
            let target = String::from_utf8_lossy(&target).into_owned();
            if target.starts_with('/') {
                return Some(format!("{here} is a symbolic link to {target}"));
            }
            resolved.pop();
            let mut parts: Vec<String> = target.split('/').map(str::to_string).collect();
            parts.reverse();
            pending.extend(parts);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn ran(command: &str, code: i32, output: &str) -> Option<String> {
        did_not_run(command, ExitRecord::code(code), output.as_bytes())
    }

    #[test]
    fn runners_that_say_nothing_ran_are_not_a_red() {
        let nothing = [
            ("sh t.sh", 127, "sh: 1: t.sh: not found\n"),
            ("./t.sh", 126, "sh: 1: ./t.sh: Permission denied\n"),
            (
                "pytest -k mul",
                5,
                "collected 3 items / 3 deselected / 0 selected\n\n=== 3 deselected in 0.01s ===\n",
            ),
            (
                "sh wrap.sh",
                1,
                "============ test session starts ============\ncollected 2 items / 2 deselected / 0 selected\n=========== 2 deselected in 0.02s ===========\n",
            ),
            (
                "python -m pytest tests/test_mul.py",
                4,
                "ERROR: file or directory not found: tests/test_mul.py\n\nno tests ran in 0.00s\n",
            ),
            (
                "python -m unittest discover -p nothing",
                5,
                "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n",
            ),
            ("python -m unittest", 1, "Ran 0 tests in 0.000s\n\nOK\n"),
            (
                "cargo test mul",
                101,
                "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 5 filtered out\n\n     Running tests/cli.rs\n\nrunning 0 tests\n\ntest result: ok. 0 passed\n",
            ),
            (
                "npx jest mul",
                1,
                "No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n",
            ),
            (
                "go test ./mul/...",
                1,
                "?   \texample.com/calc/mul\t[no test files]\n",
            ),
            (
                "sh tests/test_mul.sh",
                2,
                "sh: 0: cannot open tests/test_mul.sh: No such file\n",
            ),
            (
                "python3 tests/test_mul.py",
                2,
                "python3: can't open file '/r/tests/test_mul.py': [Errno 2] No such file or directory\n",
            ),
            ("npx mocha", 1, "\n\n  0 passing (1ms)\n\n"),
            // The script sourced, or its output hidden but for the shell's complaint.
            (
                ". ./tests/test_mul.sh",
                2,
                "sh: 1: .: cannot open ./tests/test_mul.sh: No such file\n",
            ),
            (
                "bash -c '. tests/test_mul.sh'",
                1,
                "bash: line 1: tests/test_mul.sh: No such file or directory\n",
            ),
            (
                "bash tests/test_mul.sh",
                1,
                "bash: tests/test_mul.sh: No such file or directory\n",
            ),
            (
                "go test -run TestMull ./...",
                0,
                "testing: warning: no tests to run\nPASS\nok  \texample.com/calc\t0.002s [no tests to run]\n",
            ),
            // `-q` prints the summary bare; skipped alone is no test run (a GREEN that passes so).
            ("pytest -q -k mul", 5, "3 deselected in 0.01s\n"),
            ("pytest -q", 0, "ss\n2 skipped in 0.01s\n"),
            (
                "pytest",
                0,
                "=== test session starts ===\n=== 1 skipped, 2 deselected in 0.02s ===\n",
            ),
            (
                "cargo test",
                0,
                "running 2 tests\ntest a ... ignored\ntest b ... ignored\n\ntest result: ok. 0 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out\n",
            ),
            (
                "python -m unittest",
                0,
                "ss\n----\nRan 2 tests in 0.000s\n\nOK (skipped=2)\n",
            ),
        ];
        for (command, code, output) in nothing {
            assert!(ran(command, code, output).is_some(), "{command}: {output}");
        }
    }

    #[test]
    fn a_test_that_ran_and_failed_is_a_red() {
        let failed = [
            ("sh tests/test_add.sh", 1, "add: expected 5, got \n"),
            (
                "pytest -k add",
                1,
                "=== test session starts ===\ncollected 3 items / 2 deselected / 1 selected\nFAILED tests/test_calc.py::test_add\n=== 1 failed, 2 deselected in 0.03s ===\n",
            ),
            (
                "python -m pytest",
                2,
                "=== test session starts ===\nE   ImportError: cannot import name 'mul' from 'calc'\n=== 1 error in 0.05s ===\n",
            ),
            (
                "python -m unittest tests.test_mul",
                1,
                "ERROR: test_mul (unittest.loader._FailedTest)\nImportError: Failed to import test module: test_mul\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n",
            ),
            (
                "cargo test",
                101,
                "running 0 tests\n\ntest result: ok.\n\nrunning 3 tests\ntest mul ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed\n",
            ),
            (
                "cargo test",
                101,
                "error[E0425]: cannot find function `mul` in this scope\n",
            ),
            (
                "go test ./...",
                1,
                "?   \texample.com/calc/cmd\t[no test files]\n--- FAIL: TestMul (0.00s)\nFAIL\texample.com/calc\t0.002s\n",
            ),
            ("npx mocha", 1, "  1 passing (2ms)\n  1 failing\n"),
            (
                "sh t.sh",
                2,
                "t.sh: 3: cannot open output.txt: No such file\n",
            ),
            // A file the test reads is missing, not the test: the command does not name it.
            (
                "bash tests/test_mul.sh",
                1,
                "tests/test_mul.sh: line 2: out.txt: No such file or directory\n",
            ),
            (
                "sh tests/test_mul.sh",
                1,
                "tests/test_mul.sh: 1: .: cannot open ./mul.sh: No such file\n",
            ),
            // The test ran; what it runs is missing (the behaviour under test).
            (
                "sh tests/test_add.sh",
                1,
                "sh: 0: cannot open add.sh: No such file\nadd: expected 5\n",
            ),
            (
                "cat out.txt",
                1,
                "cat: out.txt: No such file or directory\n",
            ),
            (
                "pytest -q",
                1,
                "F.s\n1 failed, 1 passed, 1 skipped in 0.03s\n",
            ),
            ("pytest -q", 0, ".s\n1 passed, 1 skipped in 0.01s\n"),
            (
                "go test ./...",
                0,
                "ok  \texample.com/calc\t0.002s\nok  \texample.com/calc/x\t0.001s [no tests to run]\n",
            ),
            (
                "cargo test",
                0,
                "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
            ),
            (
                "python -m unittest",
                0,
                ".s\n----\nRan 2 tests in 0.000s\n\nOK (skipped=1)\n",
            ),
            // Words that look like a summary but are the test's own output.
            ("sh t.sh", 1, "expected 3 items in 2s\n"),
        ];
        for (command, code, output) in failed {
            assert_eq!(ran(command, code, output), None, "{command}: {output}");
        }
        assert_eq!(
            did_not_run("pytest", ExitRecord::signal(9), b"no tests ran"),
            Some("the test runner says no tests ran".into())
        );
    }

    #[test]
    fn the_lines_a_red_step_added_to_a_shared_file_are_missed_when_dropped() {
        let base = "add() { echo $(($1 + $2)); }\n";
        let red = "add() { echo $(($1 + $2)); }\nt_mul() {\n  [ \"$(mul 2 3)\" = 6 ]\n}\n";
        let green = "add() { echo $(($1 + $2)); }\nmul() { echo $(($1 * $2)); }\n\nt_mul() {\n    [ \"$(mul 2 3)\" = 6 ]\n}\n";
        assert_eq!(lines_dropped(base, red, green), Vec::<String>::new());
        let gutted = "add() { echo $(($1 + $2)); }\nmul() { echo 0; }\nt_mul() {\n  true\n}\n";
        assert_eq!(
            lines_dropped(base, red, gutted),
            vec!["[ \"$(mul 2 3)\" = 6 ]".to_string()]
        );
        // A line the base had already is not the step's, and a repeated line counts twice.
        assert_eq!(lines_dropped(red, red, ""), Vec::<String>::new());
        assert_eq!(lines_dropped("", "x\nx\n", "x\n"), vec!["x".to_string()]);
    }

    #[test]
    fn a_red_run_fails_as_a_test_when_it_ran_and_its_report_names_a_failed_test() {
        use crate::workflow::evidence::{Kind, Outcome};
        let report = |tests: &[(&str, Outcome)]| Evidence {
            kind: Kind::Libtest,
            tests: tests.iter().map(|(id, o)| (id.to_string(), *o)).collect(),
            files: None,
            missing: None,
            unreported: Vec::new(),
        };
        let nothing_failed = report(&[("t::mul", Outcome::Passed)]);
        let short = evidence::pinned_on_base(&nothing_failed)
            .err()
            .map(|s| s.to_string())
            .unwrap_or_default();
        /// The command, its exit, its output, its per-test report, and the judgement.
        type Case<'a> = (&'a str, i32, &'a str, Evidence, Result<Vec<String>, String>);
        let cases: Vec<Case> = vec![
            (
                "sh t.sh",
                1,
                "mul: expected 6\n",
                Evidence::exit_code_only(),
                Ok(vec![]),
            ),
            (
                "cargo test",
                101,
                "test t::mul ... FAILED\n",
                report(&[("t::mul", Outcome::Failed), ("t::add", Outcome::Passed)]),
                Ok(vec!["t::mul".to_string()]),
            ),
            (
                "sh t.sh",
                127,
                "sh: 1: t.sh: not found\n",
                Evidence::exit_code_only(),
                Err("the test did not run (a program it runs was not found (exit 127))".into()),
            ),
            // Not running is said before what the report holds.
            (
                "sh t.sh",
                127,
                "",
                nothing_failed.clone(),
                Err("the test did not run (a program it runs was not found (exit 127))".into()),
            ),
            (
                "cargo test",
                101,
                "test t::mul ... ok\n",
                nothing_failed,
                Err(format!("the test did not fail as a test fails ({short})")),
            ),
        ];
        for (command, code, output, report, expected) in cases {
            assert_eq!(
                failed_as_a_test(command, ExitRecord::code(code), output.as_bytes(), &report),
                expected,
                "{command} {code} {output}"
            );
        }
    }

    #[test]
    fn a_red_pins_test_files_and_files_it_created_and_shares_the_rest_unless_one_leads_out() {
        let changed = |path: &str, link_out: Option<&str>, created: bool, is_test: bool| Changed {
            path: path.into(),
            link_out: link_out.map(str::to_string),
            created,
            is_test,
        };
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let pin = |paths: &[&str], shared: &[&str]| {
            RedOutcome::Pinned(RedPin {
                tree: "tree".into(),
                start: Some("start".into()),
                paths: strings(paths),
                shared: strings(shared),
                tests: strings(&["t::mul"]),
                test_files: Default::default(),
                hooks: Vec::new(),
            })
        };
        // (changed paths, outcome)
        let cases = vec![
            (vec![], pin(&[], &[])),
            (
                vec![
                    changed("tests/t.rs", None, false, true),
                    changed("src/new.rs", None, true, false),
                    changed("src/lib.rs", None, false, false),
                ],
                pin(&["tests/t.rs", "src/new.rs"], &["src/lib.rs"]),
            ),
            (
                vec![
                    changed("tests/t.rs", None, true, true),
                    changed(
                        "tests/out.sh",
                        Some("tests/out.sh is a symbolic link to /tmp/x"),
                        false,
                        true,
                    ),
                ],
                RedOutcome::NotATest(
                    "its test cannot be pinned: tests/out.sh is a symbolic link to /tmp/x, out of \
                     the repository (a test is a file of the repository, so that what it checks \
                     cannot change outside it)"
                        .into(),
                ),
            ),
        ];
        for (changed, expected) in cases {
            assert_eq!(
                pinned(
                    ("start".into(), "tree".into()),
                    changed.clone(),
                    (strings(&["t::mul"]), &Evidence::exit_code_only())
                ),
                expected,
                "{changed:?}"
            );
        }
        assert_eq!(too_many_paths(MAX_RED_PATHS), None);
        assert_eq!(
            too_many_paths(MAX_RED_PATHS + 1),
            Some(format!(
                "the RED step changed {} files since the task began, and a RED test is pinned \
                 whole (at most 1000 files): leave what is not the test to the GREEN step",
                MAX_RED_PATHS + 1
            ))
        );
    }

    /// A pin records the file its report named for each failing test (a libtest `muls` of
    /// `tests/calc.rs`, not of another target), and for a run pytest reported, the
    /// `conftest.py` of every directory from the root down to each test file, present or not
    /// (for cargo's, each `Cargo.toml`).
    #[test]
    fn a_red_pins_where_each_test_was_reported_and_the_conftest_files_on_its_way() {
        use std::collections::BTreeMap;
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let changed = |path: &str| Changed {
            path: path.into(),
            link_out: None,
            created: true,
            is_test: true,
        };
        let cargo = "     Running tests/calc.rs (target/debug/deps/calc-1)\n\nrunning 2 tests\n\
                     test muls ... FAILED\ntest adds ... ok\n\ntest result: FAILED. 1 passed; \
                     1 failed\n";
        let libtest = evidence::read(
            &evidence::request("cargo test"),
            &evidence::ReportFile::NotAsked,
            cargo.as_bytes(),
        );
        let RedOutcome::Pinned(pin) = pinned(
            ("start".into(), "tree".into()),
            vec![changed("tests/calc.rs")],
            (strings(&["muls"]), &libtest),
        ) else {
            panic!("pinned")
        };
        assert_eq!(
            (pin.test_files, pin.hooks),
            (
                BTreeMap::from([("muls".to_string(), strings(&["tests/calc.rs"]))]),
                strings(&["Cargo.toml", "tests/Cargo.toml"])
            )
        );
        let junit = r#"<testsuites><testsuite><testcase classname="tests.unit.test_mul" name="test_mul" file="tests/unit/test_mul.py"><failure message="x"/></testcase></testsuite></testsuites>"#;
        let pytest = evidence::read(
            &evidence::request("pytest -q"),
            &evidence::ReportFile::Written(junit.as_bytes().to_vec()),
            b"",
        );
        let RedOutcome::Pinned(pin) = pinned(
            ("start".into(), "tree".into()),
            vec![
                changed("tests/unit/test_mul.py"),
                changed("tests/conftest.py"),
            ],
            (strings(&["tests.unit.test_mul::test_mul"]), &pytest),
        ) else {
            panic!("pinned")
        };
        assert_eq!(
            (pin.test_files, pin.hooks),
            (
                BTreeMap::from([(
                    "tests.unit.test_mul::test_mul".to_string(),
                    strings(&["tests/unit/test_mul.py"])
                )]),
                // tests/conftest.py is pinned with the test already.
                strings(&["conftest.py", "tests/unit/conftest.py"])
            )
        );
        // Outside the repository, or not Python, a file has no conftest here.
        assert_eq!(
            hooks(
                evidence::Kind::Junit,
                &[
                    "/abs/test_x.py",
                    "../up/test_y.py",
                    "tests/t.sh",
                    "a/./test_z.py"
                ],
                &[]
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            hooks(evidence::Kind::Libtest, &["tests/test_x.py"], &[]),
            Vec::<String>::new()
        );
    }

    /// A pin pytest reported from a Python file of the repository loads `conftest.py` files:
    /// its hooks name the root's, or its RED step wrote that one itself. Any other does not.
    #[test]
    fn a_pytest_pin_loads_every_conftest() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        assert!(loads_runner_files(&[], &strings(&["conftest.py"])));
        assert!(loads_runner_files(
            &strings(&["conftest.py", "tests/conftest.py", "tests/test_x.py"]),
            &[]
        ));
        assert!(!loads_runner_files(&strings(&["tests/conftest.py"]), &[]));
        assert!(!loads_runner_files(&strings(&["tests/calc.rs"]), &[]));
        assert!(is_conftest("conftest.py") && is_conftest("tests/zz/conftest.py"));
        assert!(!is_conftest("tests/my_conftest.py") && !is_conftest("conftest.py/x"));
    }

    /// A pin jest reported has the `package.json` of each directory on its way as hooks, for
    /// any file; it loads jest's files, not pytest's, and a pytest pin the reverse.
    #[test]
    fn a_jest_pin_loads_jest_files_and_a_pytest_pin_pytest_files() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let jest = hooks(
            evidence::Kind::JestJson,
            &["web/tests/mul.test.js"],
            &strings(&["web/tests/mul.test.js"]),
        );
        assert_eq!(
            jest,
            strings(&["package.json", "web/package.json", "web/tests/package.json"])
        );
        assert_eq!(
            runners(&[], &jest),
            Runners {
                pytest: false,
                jest: true,
                cargo: false,
            }
        );
        assert_eq!(
            runners(&[], &strings(&["conftest.py"])),
            Runners {
                pytest: true,
                jest: false,
                cargo: false,
            }
        );
        // The RED step wrote the root's `package.json`: no hook, still jest's.
        assert!(loads_runner_files(&strings(&["package.json"]), &[]));
        assert!(runners(&strings(&["package.json"]), &[]).jest);
        assert_eq!(
            runners(&strings(&["tests/calc.rs"]), &[]),
            Runners::default()
        );
    }

    /// A pin whose libtest lines were read has the `Cargo.toml` of each directory on the way
    /// to its Rust files as hooks (cargo reads there which test binaries it runs, and how):
    /// it loads cargo's files, not pytest's or jest's.
    #[test]
    fn a_cargo_pin_loads_the_manifests_on_its_way() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let cargo = hooks(
            evidence::Kind::Libtest,
            &["crates/calc/tests/calc.rs", "tests/calc.rs", "notes.md"],
            &strings(&["crates/calc/tests/calc.rs"]),
        );
        assert_eq!(
            cargo,
            strings(&[
                "Cargo.toml",
                "crates/Cargo.toml",
                "crates/calc/Cargo.toml",
                "crates/calc/tests/Cargo.toml",
                "tests/Cargo.toml",
            ])
        );
        assert!(loads_runner_files(&[], &cargo));
        assert_eq!(
            runners(&[], &cargo),
            Runners {
                pytest: false,
                jest: false,
                cargo: true,
            }
        );
        // The RED step wrote the root's manifest (a new crate): no hook, still cargo's.
        assert!(loads_runner_files(&strings(&["Cargo.toml"]), &[]));
        assert!(runners(&strings(&["Cargo.toml"]), &[]).cargo);
    }

    #[test]
    fn the_red_test_runs_again_unless_its_own_run_is_it() {
        assert_eq!(rerun_plan(true, true), RerunPlan::OwnRunStands);
        assert_eq!(rerun_plan(false, true), RerunPlan::InPlace);
        assert_eq!(rerun_plan(true, false), RerunPlan::Scratch);
        assert_eq!(rerun_plan(false, false), RerunPlan::Scratch);
    }

    #[test]
    fn syntax_errors_of_shells_and_python_are_named() {
        for (output, line) in [
            (
                "t.sh: 3: Syntax error: \"fi\" unexpected\n",
                "t.sh: 3: Syntax error: \"fi\" unexpected",
            ),
            (
                "t.sh: line 4: syntax error near unexpected token `}'\n",
                "t.sh: line 4: syntax error near unexpected token `}'",
            ),
            (
                "t.sh: line 9: syntax error: unexpected end of file\n",
                "t.sh: line 9: syntax error: unexpected end of file",
            ),
            (
                "  File \"t.py\", line 1\n    def f(\n         ^\nSyntaxError: '(' was never closed\n",
                "SyntaxError: '(' was never closed",
            ),
        ] {
            assert_eq!(syntax_error(output.as_bytes()).as_deref(), Some(line));
        }
        assert_eq!(syntax_error(b"add: expected 5, got 4\n"), None);
    }

    fn tree(entries: &[(&str, Entry)]) -> impl Fn(&str) -> Option<Entry> + use<> {
        let entries: Vec<(String, Entry)> = entries
            .iter()
            .map(|(p, e)| (p.to_string(), e.clone()))
            .collect();
        move |path: &str| {
            entries
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, e)| e.clone())
        }
    }

    #[test]
    fn links_out_of_the_repository_are_found_through_other_links() {
        let link = |t: &str| Entry::Link(t.as_bytes().to_vec());
        let entries = tree(&[
            ("tests/test_add.sh", link("/tmp/test_add.sh")),
            ("tests/up.sh", link("../../outside.sh")),
            ("tests/ok.sh", link("../lib/real.sh")),
            ("lib/real.sh", Entry::File),
            ("tests/via.sh", link("../vendor/t.sh")),
            ("vendor", link("/opt/vendor")),
            ("tests/loop.sh", link("loop2.sh")),
            ("tests/loop2.sh", link("loop.sh")),
            ("tests/plain.sh", Entry::File),
        ]);
        let out = |p: &str| link_out_of_repository(p, &entries);
        assert_eq!(
            out("tests/test_add.sh").as_deref(),
            Some("tests/test_add.sh is a symbolic link to /tmp/test_add.sh")
        );
        assert_eq!(
            out("tests/up.sh").as_deref(),
            Some("tests/up.sh leads above the repository's root")
        );
        assert_eq!(out("tests/ok.sh"), None);
        assert_eq!(
            out("tests/via.sh").as_deref(),
            Some("vendor is a symbolic link to /opt/vendor")
        );
        assert_eq!(
            out("tests/loop.sh").as_deref(),
            Some("tests/loop.sh is a loop of symbolic links")
        );
        assert_eq!(out("tests/plain.sh"), None);
    }

    proptest! {
        /// Whatever a test prints, reading it neither panics nor takes long.
        #[test]
        fn any_output_is_read(command in ".{0,40}", code in -1i32..300, output in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = did_not_run(&command, ExitRecord::code(code), &output);
            let _ = syntax_error(&output);
        }

        /// Whatever a link says, the resolution ends and never panics.
        #[test]
        fn any_link_target_resolves(path in "[a-z./]{0,30}", target in "[a-z./]{0,30}") {
            let link = Entry::Link(target.into_bytes());
            let _ = link_out_of_repository(&path, &|p: &str| (p == "a" || p == "a/b").then(|| link.clone()));
        }
    }
}
