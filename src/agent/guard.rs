//! The pre-tool-use guard (SPEC §11): decides whether an agent's shell command or file write
//! goes around the workflow, and names the legal route when it does. Best effort by design:
//! it reads the command line, it cannot see inside scripts or `make` targets, and the
//! orchestrator never relies on it alone (docs/agent-guide.md, "The guard's limits").

use std::path::{Component, Path, PathBuf};

use super::shell::{self, Simple, is_assignment};

/// What the guard knows about the repository, gathered by the engine.
#[derive(Clone, Debug, Default)]
pub struct GuardContext {
    /// The repository's top directory and the directory the command runs in.
    pub root: PathBuf,
    pub cwd: PathBuf,
    /// The git directory and the hooks directory, absolute.
    pub git_dir: PathBuf,
    pub hooks_dir: PathBuf,
    pub main_branch: String,
    /// The branch HEAD is on, if any.
    pub head_branch: Option<String>,
    /// The preflight gates' commands: running one directly is what submit-work is for.
    pub gate_commands: Vec<String>,
    /// Paths (relative to the root) an agent must not change: the config, the scripts the
    /// gates and reviewer run. `[gates] protected` globs are in `protected_globs`.
    pub protected_files: Vec<String>,
    pub protected_globs: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(String),
}

const USE_SUBMIT: &str = "the orchestrator runs the tests and gates: use `git orchestrate submit-work --test-command …` (MCP: submit_work)";
const USE_CHECKPOINT: &str = "make checkpoint commits with `git orchestrate checkpoint` (MCP: checkpoint), which runs preflight";
const HUMAN_ONLY: &str = "only a human answers the workflow; if you are stuck, use `git orchestrate escalate --report FILE` (MCP: escalate_for_external_help)";
const STATE_IS_THE_ORCHESTRATORS: &str = "the workflow's state belongs to the orchestrator; use `git orchestrate get-task` and `submit-work` to move it";

/// Programs that only read the files they are given.
const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "ls",
    "stat",
    "file",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "diff",
    "cmp",
    "test",
    "[",
    "echo",
    "printf",
    "realpath",
    "readlink",
    "sha1sum",
    "sha256sum",
    "md5sum",
    "xxd",
    "od",
    "hexdump",
    "tree",
    "du",
    "bat",
    "git",
    "git-orchestrate",
    "basename",
    "dirname",
    "pwd",
    "pushd",
    "popd",
    "true",
    "false",
    ":",
];

/// Programs that run the command named by their arguments.
const WRAPPERS: &[&str] = &[
    "env", "sudo", "doas", "command", "exec", "nohup", "time", "nice", "timeout", "stdbuf",
    "setsid", "xargs", "builtin", "unbuffer",
];

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "busybox"];

/// Shell keywords that may start a simple command and are not its program.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
];

/// Judges a shell command line.
pub fn check_shell(line: &str, ctx: &GuardContext) -> Decision {
    match check_line(line, ctx, 0) {
        Ok(()) => Decision::Allow,
        Err(reason) => Decision::Deny(reason),
    }
}

fn check_line(line: &str, ctx: &GuardContext, depth: usize) -> Result<(), String> {
    if depth > 8 {
        return Err("commands nested too deeply to check".into());
    }
    let commands = shell::parse(line).map_err(|e| {
        format!(
            "the command line cannot be read ({}); the shell would refuse it too",
            e.0
        )
    })?;
    // `cd DIR` moves where the commands after it write: the guard follows it.
    let mut here = ctx.clone();
    for simple in &commands {
        if let [cd, dir] = simple.words.as_slice()
            && matches!(cd.as_str(), "cd" | "pushd")
        {
            here.cwd = normalize(&here.cwd.join(dir));
            continue;
        }
        check_simple(simple, &here, depth)?;
    }
    Ok(())
}

fn check_simple(simple: &Simple, ctx: &GuardContext, depth: usize) -> Result<(), String> {
    for target in &simple.writes {
        check_written_path(target, ctx)?;
    }
    check_assignments(&simple.assignments)?;
    let mut words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
    // `export X=y`, `declare -x X=y`: assignments too.
    if let Some(first) = words.first()
        && matches!(
            *first,
            "export" | "declare" | "typeset" | "readonly" | "local"
        )
    {
        let assigned: Vec<String> = words[1..]
            .iter()
            .filter(|w| is_assignment(w))
            .map(|w| w.to_string())
            .collect();
        return check_assignments(&assigned);
    }
    while let Some(first) = words.first() {
        if KEYWORDS.contains(first) {
            words.remove(0);
            continue;
        }
        if matches!(*first, "for" | "case" | "select" | "function") {
            return Ok(());
        }
        break;
    }
    let words = unwrap(&words)?;
    let Some(program) = words.first() else {
        return Ok(());
    };
    let name = basename(program);
    if let Some(reason) = gate_command(&words, ctx) {
        return Err(reason);
    }
    match name {
        "git" => check_git(&words[1..], ctx)?,
        "git-orchestrate" => check_orchestrate(&words[1..])?,
        "eval" => check_line(&words[1..].join(" "), ctx, depth + 1)?,
        _ if SHELLS.contains(&name) => {
            if let Some(script) = shell_script(&words[1..]) {
                check_line(script, ctx, depth + 1)?;
            }
            if let Some(body) = &simple.heredoc {
                check_line(body, ctx, depth + 1)?;
            }
        }
        _ => {}
    }
    if !READERS.contains(&name) {
        check_writer(name, &words[1..], ctx)?;
    }
    Ok(())
}

/// The environment settings a command line makes: the human marker, a hooks path or a notes
/// ref slipped in through git's environment.
fn check_assignments(assignments: &[String]) -> Result<(), String> {
    for assignment in assignments {
        let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
        if name == "GIT_ORCHESTRATE_HUMAN" {
            return Err(format!(
                "setting {name} is for humans at their own terminal: {HUMAN_ONLY}"
            ));
        }
        if name.starts_with("GIT_CONFIG") && value.to_ascii_lowercase().contains("hookspath") {
            return Err(format!(
                "{name} would move core.hooksPath away from the installed hooks: {USE_CHECKPOINT}"
            ));
        }
        if name == "GIT_NOTES_REF" && value.contains("orchestrator") {
            return Err(format!(
                "the verification notes in refs/notes/orchestrator are written by the orchestrator only: {STATE_IS_THE_ORCHESTRATORS}"
            ));
        }
    }
    Ok(())
}

/// The command a wrapper (`env`, `sudo`, `timeout 5`, `xargs`…) runs, with the settings
/// `env` makes checked on the way.
fn unwrap<'w>(words: &[&'w str]) -> Result<Vec<&'w str>, String> {
    let mut rest: &[&str] = words;
    while let Some(first) = rest.first() {
        let name = basename(first);
        if !WRAPPERS.contains(&name) {
            break;
        }
        rest = &rest[1..];
        // Options, assignments (env) and a duration (timeout) or priority (nice) before the
        // command.
        let mut assigned = Vec::new();
        while let Some(next) = rest.first() {
            if next.starts_with('-') {
                let takes_value = matches!(
                    (name, *next),
                    ("nice", "-n")
                        | ("timeout", "-s" | "-k" | "--signal" | "--kill-after")
                        | ("env", "-u" | "-C" | "--unset" | "--chdir" | "-S")
                        | ("sudo", "-u" | "-g" | "-C" | "-D")
                        | (
                            "xargs",
                            "-I" | "-n" | "-P" | "-L" | "-d" | "-E" | "-s" | "-a"
                        )
                        | ("stdbuf", "-i" | "-o" | "-e")
                );
                rest = &rest[1..];
                if takes_value && !rest.is_empty() {
                    rest = &rest[1..];
                }
            } else if is_assignment(next) {
                assigned.push(next.to_string());
                rest = &rest[1..];
            } else if name == "timeout" && next.starts_with(|c: char| c.is_ascii_digit()) {
                rest = &rest[1..];
            } else {
                break;
            }
        }
        check_assignments(&assigned)?;
    }
    Ok(rest.to_vec())
}

/// The script of `sh -c SCRIPT` (also `-ec`, `-lc`, …).
fn shell_script<'w>(args: &[&'w str]) -> Option<&'w str> {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c') {
            return iter.next().copied();
        }
        if !arg.starts_with('-') && !arg.starts_with('+') {
            return None;
        }
    }
    None
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A preflight gate's command, run directly: its words, or its script through another
/// interpreter or path.
fn gate_command(words: &[&str], ctx: &GuardContext) -> Option<String> {
    for gate in &ctx.gate_commands {
        let Ok(gate_commands) = shell::parse(gate) else {
            continue;
        };
        for simple in gate_commands {
            let gate_words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
            let gate_words = unwrap(&gate_words).unwrap_or_default();
            // A gate of one builtin (`true`) is no test anyone could run by accident.
            if gate_words.is_empty()
                || (gate_words.len() == 1 && matches!(gate_words[0], "true" | "false" | ":"))
            {
                continue;
            }
            let same_words = words.len() >= gate_words.len()
                && words
                    .iter()
                    .zip(&gate_words)
                    .all(|(a, b)| a == b || (basename(a) == basename(b) && a.contains('/')));
            let same_script = script_of(words)
                .zip(script_of(&gate_words))
                .is_some_and(|(a, b)| a == b);
            if same_words || same_script {
                return Some(format!(
                    "`{}` is the preflight gate's command ({gate}); {USE_SUBMIT}",
                    words.join(" ")
                ));
            }
        }
    }
    None
}

/// The repository script a command runs: `./x.sh`, `sh x.sh`, `python3 tests/run.py`.
fn script_of(words: &[&str]) -> Option<String> {
    let program = words.first()?;
    let name = basename(program);
    let interpreters = [
        "python", "python3", "node", "ruby", "perl", "bash", "sh", "zsh",
    ];
    let script = if interpreters.contains(&name) {
        words[1..].iter().find(|w| !w.starts_with('-'))?
    } else if program.contains('/') {
        program
    } else {
        return None;
    };
    Some(script.trim_start_matches("./").to_string())
}

/// `git …`: the global options first (`-c core.hooksPath=…` among them), then the subcommand.
fn check_git(args: &[&str], ctx: &GuardContext) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        match arg {
            "-c" | "--config-env" => {
                let setting = args.get(i + 1).copied().unwrap_or_default();
                if setting.to_ascii_lowercase().starts_with("core.hookspath") {
                    return Err(format!(
                        "`git {arg} {setting}` bypasses the installed hooks: {USE_CHECKPOINT}"
                    ));
                }
                i += 2;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            _ if arg.starts_with("-c") && arg.to_ascii_lowercase().contains("core.hookspath") => {
                return Err(format!(
                    "`git {arg}` bypasses the installed hooks: {USE_CHECKPOINT}"
                ));
            }
            _ if arg.starts_with("--config-env=")
                && arg.to_ascii_lowercase().contains("core.hookspath") =>
            {
                return Err(format!(
                    "`git {arg}` bypasses the installed hooks: {USE_CHECKPOINT}"
                ));
            }
            _ if arg.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let rest = &args[i + 1..];
    let main = ctx.main_branch.as_str();
    let on_main = ctx.head_branch.as_deref() == Some(main);
    let names_main = |w: &&str| {
        let w = w.trim_start_matches('+');
        w == main
            || w == format!("refs/heads/{main}")
            || w.ends_with(&format!(":{main}"))
            || w.ends_with(&format!(":refs/heads/{main}"))
    };
    let orchestrator_ref =
        |w: &&str| w.contains("refs/orchestrator") || w.contains("refs/notes/orchestrator");
    match *sub {
        "commit" => {
            if commit_skips_hooks(rest) {
                return Err(format!(
                    "`git commit --no-verify`/`-n` skips the hooks that enforce preflight: {USE_CHECKPOINT}"
                ));
            }
            if on_main {
                return Err(format!(
                    "committing to the main branch ({main}) is the orchestrator's merge, after review; work on the PR branch (`git orchestrate get-task`)"
                ));
            }
        }
        "merge" | "cherry-pick" | "revert" | "am" | "rebase" | "pull" if on_main => {
            return Err(format!(
                "`git {sub}` on the main branch ({main}) changes it; the orchestrator merges PRs into {main} after review (`git orchestrate get-task`)"
            ));
        }
        "config" => {
            let reads = rest.iter().any(|w| {
                matches!(
                    *w,
                    "--get" | "--get-all" | "--get-regexp" | "-l" | "--list" | "get" | "list"
                )
            });
            if !reads
                && rest
                    .iter()
                    .any(|w| w.to_ascii_lowercase().contains("core.hookspath"))
            {
                return Err(format!(
                    "changing core.hooksPath would bypass the installed hooks: {USE_CHECKPOINT}"
                ));
            }
        }
        "update-ref" => {
            if rest.contains(&"--stdin") {
                return Err(format!(
                    "`git update-ref --stdin` may write the orchestrator's refs, which the guard cannot see: {STATE_IS_THE_ORCHESTRATORS}"
                ));
            }
            if let Some(r) = rest.iter().find(|w| orchestrator_ref(w) || names_main(w)) {
                return Err(format!(
                    "`git update-ref {r}` writes a ref the orchestrator keeps: {STATE_IS_THE_ORCHESTRATORS}"
                ));
            }
        }
        "symbolic-ref" | "replace" | "filter-branch" | "filter-repo" => {
            if let Some(r) = rest.iter().find(|w| orchestrator_ref(w)) {
                return Err(format!(
                    "`git {sub} {r}` writes a ref the orchestrator keeps: {STATE_IS_THE_ORCHESTRATORS}"
                ));
            }
        }
        "reflog"
            if rest
                .first()
                .is_some_and(|w| matches!(*w, "expire" | "delete")) =>
        {
            return Err(format!(
                "`git reflog {}` erases the history `git orchestrate audit` checks: {STATE_IS_THE_ORCHESTRATORS}",
                rest[0]
            ));
        }
        "notes" => check_git_notes(rest)?,
        "push" => {
            if let Some(r) = rest.iter().find(|w| orchestrator_ref(w)) {
                return Err(format!(
                    "`git push … {r}` moves the orchestrator's refs on the remote; `git orchestrate sync` pushes them"
                ));
            }
            if rest.contains(&"--mirror") {
                return Err(
                    "`git push --mirror` overwrites every ref on the remote, the orchestrator's among them; `git orchestrate sync` pushes the workflow"
                        .to_string(),
                );
            }
            let refspecs: Vec<&&str> = rest
                .iter()
                .filter(|w| !w.starts_with('-'))
                .skip(1)
                .collect();
            if refspecs.iter().any(|w| names_main(w))
                || rest.contains(&"--all")
                || (on_main && refspecs.is_empty())
                || (on_main && refspecs.iter().any(|w| **w == "HEAD"))
            {
                return Err(format!(
                    "pushing the main branch ({main}) is the orchestrator's merge, after review; `git orchestrate sync` pushes the PR branch and the workflow"
                ));
            }
        }
        "branch" => {
            let moves = rest.iter().any(|w| {
                matches!(
                    *w,
                    "-f" | "--force"
                        | "-D"
                        | "-d"
                        | "--delete"
                        | "-m"
                        | "-M"
                        | "--move"
                        | "-c"
                        | "-C"
                )
            });
            if moves && rest.iter().any(names_main) {
                return Err(format!(
                    "moving or deleting the main branch ({main}) is not the agent's to do; the orchestrator merges into it"
                ));
            }
        }
        "checkout" | "switch" => {
            let mut iter = rest.iter();
            while let Some(w) = iter.next() {
                if matches!(*w, "-B" | "-C" | "--force-create")
                    && iter.next().is_some_and(names_main)
                {
                    return Err(format!(
                        "`git {sub} {w} {main}` resets the main branch; the orchestrator merges into it"
                    ));
                }
            }
        }
        "reset" if on_main => {
            let moves = rest
                .iter()
                .any(|w| matches!(*w, "--hard" | "--soft" | "--mixed" | "--keep" | "--merge"))
                || rest
                    .iter()
                    .take_while(|w| **w != "--")
                    .find(|w| !w.starts_with('-'))
                    .is_some_and(|w| looks_like_revision(w));
            if moves {
                return Err(format!(
                    "`git reset` on the main branch ({main}) moves it; work on the PR branch (`git orchestrate get-task`)"
                ));
            }
        }
        "orchestrate" => check_orchestrate(rest)?,
        _ => {}
    }
    Ok(())
}

fn looks_like_revision(word: &str) -> bool {
    word.starts_with("HEAD")
        || word.starts_with("ORIG_HEAD")
        || word.starts_with("origin/")
        || word.contains('~')
        || word.contains('^')
        || word.contains('@')
        || (word.len() >= 7 && word.chars().all(|c| c.is_ascii_hexdigit()))
}

/// `git commit` options: `--no-verify`, or `-n` alone or in a cluster (`-an`), stopping at a
/// letter whose value follows (`-mn` is the message "n").
fn commit_skips_hooks(args: &[&str]) -> bool {
    for arg in args {
        if *arg == "--" {
            return false;
        }
        if *arg == "--no-verify"
            || *arg == "--no-ver"
            || *arg == "--no-veri"
            || *arg == "--no-verif"
        {
            return true;
        }
        if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            for letter in cluster.chars() {
                match letter {
                    'n' => return true,
                    'm' | 'F' | 'c' | 'C' | 't' | 'u' | 'S' => break,
                    _ => {}
                }
            }
        }
    }
    false
}

fn check_git_notes(args: &[&str]) -> Result<(), String> {
    let mut notes_ref = None;
    let mut sub = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if arg == "--ref" {
            notes_ref = args.get(i + 1).copied();
            i += 2;
            continue;
        }
        if let Some(r) = arg.strip_prefix("--ref=") {
            notes_ref = Some(r);
        } else if !arg.starts_with('-') && sub.is_none() {
            sub = Some(arg);
        }
        i += 1;
    }
    let ours = notes_ref.is_some_and(|r| {
        matches!(
            r,
            "orchestrator" | "notes/orchestrator" | "refs/notes/orchestrator"
        )
    });
    let writes = matches!(
        sub,
        Some("add" | "append" | "copy" | "edit" | "merge" | "remove" | "prune")
    );
    if ours && writes {
        return Err(format!(
            "the verification notes in refs/notes/orchestrator are written by the orchestrator only (a note is never proof anyway): {STATE_IS_THE_ORCHESTRATORS}"
        ));
    }
    Ok(())
}

/// `git orchestrate …` / `git-orchestrate …`: the human-only commands.
fn check_orchestrate(args: &[&str]) -> Result<(), String> {
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.peek() {
        if **arg == "--workflow" {
            iter.next();
            iter.next();
        } else if arg.starts_with('-') {
            iter.next();
        } else {
            break;
        }
    }
    let sub = iter.next().copied();
    let next = iter.next().copied();
    match (sub, next) {
        (Some(cmd @ ("resume" | "approve" | "reject" | "repin")), _) => Err(format!(
            "`git orchestrate {cmd}` is for humans: {HUMAN_ONLY}"
        )),
        (Some("hooks"), Some("uninstall")) => Err(format!(
            "`git orchestrate hooks uninstall` removes the hooks that enforce preflight; it is for humans: {HUMAN_ONLY}"
        )),
        _ => Ok(()),
    }
}

/// A command that may write its arguments: the git internals and protected files are off
/// limits. Programs that only read are not asked.
fn check_writer(name: &str, args: &[&str], ctx: &GuardContext) -> Result<(), String> {
    let targets: Vec<&str> = match name {
        "dd" => args.iter().filter_map(|a| a.strip_prefix("of=")).collect(),
        "sed" | "perl"
            if !args
                .iter()
                .any(|a| a.starts_with("-i") || *a == "--in-place") =>
        {
            Vec::new()
        }
        "find"
            if !args
                .iter()
                .any(|a| matches!(*a, "-delete" | "-exec" | "-execdir")) =>
        {
            Vec::new()
        }
        _ => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .copied()
            .collect(),
    };
    for target in targets {
        check_written_path(target, ctx)?;
    }
    // Anything else that names the git internals (a script, an interpreter's one-liner) is
    // refused too: there is no reason for an agent's command to touch them.
    for arg in args {
        if let Some(reason) = git_internal_mention(arg, ctx) {
            return Err(reason);
        }
    }
    Ok(())
}

/// The git directory's parts the orchestrator relies on, as they appear in a command line.
fn git_internal_mention(word: &str, ctx: &GuardContext) -> Option<String> {
    const INTERNAL: &[&str] = &[
        ".git/hooks",
        ".git/orchestrator",
        ".git/refs/orchestrator",
        ".git/refs/notes/orchestrator",
        ".git/logs/refs/orchestrator",
        ".git/packed-refs",
        ".git/config",
    ];
    let hooks = ctx.hooks_dir.to_string_lossy();
    let git_dir_parts = [
        ctx.git_dir.join("orchestrator"),
        ctx.git_dir.join("refs/orchestrator"),
        ctx.git_dir.join("logs/refs/orchestrator"),
        ctx.git_dir.join("config"),
    ];
    let named = INTERNAL
        .iter()
        .find(|p| word.contains(**p))
        .map(|p| p.to_string())
        .or_else(|| (!hooks.is_empty() && word.contains(hooks.as_ref())).then(|| hooks.to_string()))
        .or_else(|| {
            git_dir_parts
                .iter()
                .map(|p| p.to_string_lossy().to_string())
                .find(|p| word.contains(p.as_str()))
        })?;
    Some(format!(
        "writing, moving or deleting {named} changes the hooks or the orchestrator's state: {STATE_IS_THE_ORCHESTRATORS}"
    ))
}

/// Judges a write to `path` (a shell redirection target, an argument of a writing program, a
/// file tool's `file_path`).
pub fn check_file_write(path: &str, ctx: &GuardContext) -> Decision {
    match check_written_path(path, ctx) {
        Ok(()) => Decision::Allow,
        Err(reason) => Decision::Deny(reason),
    }
}

fn check_written_path(path: &str, ctx: &GuardContext) -> Result<(), String> {
    if path.is_empty() || path == "/dev/null" || path.starts_with("/dev/") {
        return Ok(());
    }
    if let Some(reason) = git_internal_mention(path, ctx) {
        return Err(reason);
    }
    let absolute = normalize(&ctx.cwd.join(path));
    // Judged as written and as the file system resolves it: a symbolic link (`ln -s .git g`,
    // then writing `g/hooks/commit-msg`; a link to a protected file) writes where it points.
    let candidates = std::iter::once(absolute.clone()).chain(resolved(&absolute));
    let roots: Vec<PathBuf> = std::iter::once(normalize(&ctx.root))
        .chain(std::fs::canonicalize(&ctx.root).ok())
        .collect();
    for candidate in candidates {
        for dir in [&ctx.git_dir, &ctx.hooks_dir] {
            if dir.as_os_str().is_empty() {
                continue;
            }
            let inside = std::iter::once(normalize(dir))
                .chain(std::fs::canonicalize(dir).ok())
                .any(|d| candidate.starts_with(d));
            if inside {
                return Err(format!(
                    "{path} is inside {}, which holds the hooks and the orchestrator's state: {STATE_IS_THE_ORCHESTRATORS}",
                    dir.display()
                ));
            }
        }
        let Some(relative) = roots.iter().find_map(|r| candidate.strip_prefix(r).ok()) else {
            continue;
        };
        let relative = relative.to_string_lossy();
        if ctx.protected_files.iter().any(|f| f == relative.as_ref())
            || ctx.protected_globs.iter().any(|g| glob_match(g, &relative))
        {
            return Err(format!(
                "{relative} is protected (docs/integrity.md): the gates that judge your work, and the files they run, change only on the main branch, by a human; if it must change, say why in `git orchestrate escalate --report FILE`"
            ));
        }
    }
    Ok(())
}

/// `path` as the file system resolves it: its longest existing ancestor (the whole path, when
/// it exists, so a final link is followed as a write follows it) made canonical, the rest
/// appended. `None` when nothing of it exists or it resolves to itself.
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            break real;
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    };
    let mut out = real;
    for part in rest.iter().rev() {
        out.push(part);
    }
    (out != path).then_some(out)
}

/// `.` and `..` resolved without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// git's `:(glob)` matching: `*` and `?` stay within a directory, `**` crosses them.
pub fn glob_match(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=s.len()).any(|i| (i == 0 || s[i - 1] == b'/') && go(rest, &s[i..]))
                    || (rest.is_empty())
            }
            Some(b'*') => (0..=s.len())
                .take_while(|&i| i == 0 || s[i - 1] != b'/')
                .any(|i| go(&p[1..], &s[i..])),
            Some(b'?') => s.first().is_some_and(|c| *c != b'/') && go(&p[1..], &s[1..]),
            Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

/// Judges a patch in Codex's `apply_patch` format: the files it adds, updates, deletes or
/// moves to.
pub fn check_patch(patch: &str, ctx: &GuardContext) -> Decision {
    for line in patch.lines() {
        let path = [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix));
        if let Some(path) = path
            && let Err(reason) = check_written_path(path.trim(), ctx)
        {
            return Decision::Deny(reason);
        }
    }
    Decision::Allow
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ctx() -> GuardContext {
        GuardContext {
            root: "/repo".into(),
            cwd: "/repo".into(),
            git_dir: "/repo/.git".into(),
            hooks_dir: "/repo/.git/hooks".into(),
            main_branch: "main".into(),
            head_branch: Some("feat/x".into()),
            gate_commands: vec![
                "sh run_tests.sh".into(),
                "cargo test --all".into(),
                "true".into(),
            ],
            protected_files: vec![".orchestrate.toml".into(), "run_tests.sh".into()],
            protected_globs: vec!["ci/**".into()],
        }
    }

    /// Each command, and the part of the reason that names why (empty: allowed).
    const TABLE: &[(&str, &str)] = &[
        // Allowed: ordinary work.
        ("ls -la && cat src/lib.rs", ""),
        ("cargo build", ""),
        ("git status; git diff HEAD~1", ""),
        ("git commit -m 'wip'", ""),
        ("git commit -am 'no verify mentioned: -n'", ""),
        ("git commit -mn", ""),
        ("git add -A && git orchestrate checkpoint", ""),
        (
            "git orchestrate submit-work -s x --test-command 'sh run_tests.sh' --expectation PASS",
            "",
        ),
        ("git notes --ref orchestrator show HEAD", ""),
        ("git notes --ref=orchestrator list", ""),
        ("git config --get core.hooksPath", ""),
        ("cat .git/hooks/commit-msg", ""),
        ("cd .git/hooks && ls -la", ""),
        ("cd .git/hooks && rm commit-msg", "orchestrator's state"),
        ("cd .git && echo x > hooks/pre-push", "orchestrator's state"),
        ("cd src && echo x > ../run_tests.sh", "protected"),
        ("echo ok > notes.txt", ""),
        ("git push origin feat/x", ""),
        ("git reset --hard HEAD", ""),
        ("true", ""),
        // A wrapper the guard cannot see into: allowed, and documented as such.
        ("make test", ""),
        ("npm test", ""),
        // The gates, directly.
        ("sh run_tests.sh", "preflight gate's command"),
        ("bash ./run_tests.sh", "preflight gate's command"),
        ("./run_tests.sh --verbose", "preflight gate's command"),
        (
            "cargo test --all -- --nocapture",
            "preflight gate's command",
        ),
        (
            "cd sub && timeout 60 cargo test --all",
            "preflight gate's command",
        ),
        // Skipping or moving the hooks.
        ("git commit -n -m x", "--no-verify"),
        ("git commit --no-verify -m x", "--no-verify"),
        ("git commit -anm x", "--no-verify"),
        ("bash -c \"git commit -n\"", "--no-verify"),
        ("sh -ec 'cd . && git commit --no-verify'", "--no-verify"),
        ("eval git commit -n", "--no-verify"),
        ("sh <<'EOF'\ngit commit -n -m x\nEOF", "--no-verify"),
        (
            "git -c core.hooksPath=/x commit -m y",
            "bypasses the installed hooks",
        ),
        (
            "git -c core.hookspath=/dev/null commit",
            "bypasses the installed hooks",
        ),
        ("git config core.hooksPath /tmp/none", "core.hooksPath"),
        ("git config --unset core.hooksPath", "core.hooksPath"),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/x git commit",
            "core.hooksPath",
        ),
        (
            "env GIT_CONFIG_PARAMETERS=\"'core.hooksPath'='/x'\" git commit",
            "core.hooksPath",
        ),
        // The orchestrator's refs and notes.
        (
            "git notes --ref orchestrator add -m '{}' HEAD",
            "refs/notes/orchestrator",
        ),
        (
            "git notes --ref=refs/notes/orchestrator remove HEAD",
            "refs/notes/orchestrator",
        ),
        (
            "GIT_NOTES_REF=refs/notes/orchestrator git notes add -m x",
            "refs/notes/orchestrator",
        ),
        (
            "git update-ref refs/orchestrator/workflows/main HEAD",
            "writes a ref the orchestrator keeps",
        ),
        (
            "echo $(git update-ref refs/orchestrator/workflows/main 1234567)",
            "writes a ref the orchestrator keeps",
        ),
        (
            "x=`git update-ref -d refs/notes/orchestrator`",
            "writes a ref the orchestrator keeps",
        ),
        ("git update-ref --stdin < refs.txt", "--stdin"),
        (
            "git push origin refs/orchestrator/workflows/main",
            "git orchestrate sync",
        ),
        ("git push --mirror origin", "--mirror"),
        ("git reflog expire --expire=now --all", "audit"),
        ("rm -rf .git/orchestrator", "orchestrator's state"),
        (
            "echo '#!/bin/sh' > .git/hooks/commit-msg",
            "orchestrator's state",
        ),
        ("cp /tmp/x .git/hooks/pre-push", "orchestrator's state"),
        (
            "python3 -c \"open('.git/hooks/commit-msg','w')\"",
            "orchestrator's state",
        ),
        (
            "chmod -x /repo/.git/hooks/commit-msg",
            "orchestrator's state",
        ),
        // The main branch.
        ("git push origin main", "pushing the main branch"),
        ("git push origin HEAD:main", "pushing the main branch"),
        ("git push --all origin", "pushing the main branch"),
        ("git branch -f main HEAD", "main branch"),
        ("git branch -D main", "main branch"),
        ("git update-ref refs/heads/main HEAD", "writes a ref"),
        ("git checkout -B main", "resets the main branch"),
        // Humans only.
        ("git orchestrate approve", "for humans"),
        (
            "GIT_ORCHESTRATE_HUMAN=1 git orchestrate approve",
            "for humans",
        ),
        ("export GIT_ORCHESTRATE_HUMAN=1", "for humans"),
        (
            "env GIT_ORCHESTRATE_HUMAN=1 git-orchestrate reject --comment no",
            "for humans",
        ),
        (
            "git orchestrate --workflow main resume --guidance go",
            "for humans",
        ),
        ("git-orchestrate hooks uninstall", "for humans"),
        // Protected files.
        ("echo 'exit 0' > run_tests.sh", "protected"),
        ("sed -i s/1/0/ .orchestrate.toml", "protected"),
        ("rm ci/check.sh", "protected"),
        ("tee -a ci/deep/x.yml < /dev/null", "protected"),
        ("mv run_tests.sh old.sh", "protected"),
        // Unreadable.
        ("echo 'unclosed", "cannot be read"),
    ];

    #[test]
    fn a_write_through_a_symbolic_link_is_judged_where_it_lands() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        std::fs::write(root.join("run_tests.sh"), "exit 0\n").expect("write");
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(root.join(target), root.join(name)).expect("symlink")
        };
        link(".git", "g");
        link("run_tests.sh", "tests-link.sh");
        link(".", "here");
        let ctx = GuardContext {
            root: root.clone(),
            cwd: root.clone(),
            git_dir: root.join(".git"),
            hooks_dir: root.join(".git/hooks"),
            ..ctx()
        };
        for (path, why) in [
            ("g/hooks/commit-msg", "holds the hooks"),
            ("g/orchestrator/new/deeper/file", "holds the hooks"),
            ("tests-link.sh", "protected"),
            ("here/run_tests.sh", "protected"),
            ("here/.orchestrate.toml", "protected"),
        ] {
            match check_file_write(path, &ctx) {
                Decision::Deny(reason) => assert!(reason.contains(why), "{path}: {reason}"),
                Decision::Allow => panic!("{path} was allowed"),
            }
            let shell = format!("echo x > {path}");
            assert!(
                matches!(check_shell(&shell, &ctx), Decision::Deny(_)),
                "{shell}"
            );
        }
        for path in ["notes.txt", "src/new/file.rs", "here/notes.txt"] {
            assert_eq!(check_file_write(path, &ctx), Decision::Allow, "{path}");
        }
    }

    #[test]
    fn the_guard_table() {
        let ctx = ctx();
        let mut wrong = Vec::new();
        for (command, expected) in TABLE {
            let decision = check_shell(command, &ctx);
            let ok = match (&decision, expected.is_empty()) {
                (Decision::Allow, true) => true,
                (Decision::Deny(reason), false) => reason.contains(expected),
                _ => false,
            };
            if !ok {
                wrong.push(format!(
                    "{command:?}: expected {expected:?}, got {decision:?}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn on_the_main_branch_committing_and_pushing_are_refused() {
        let ctx = GuardContext {
            head_branch: Some("main".into()),
            ..ctx()
        };
        for command in [
            "git commit -m x",
            "git push",
            "git push origin HEAD",
            "git merge feat/x",
            "git reset --hard HEAD~1",
            "git reset HEAD~2",
        ] {
            assert!(
                matches!(check_shell(command, &ctx), Decision::Deny(r) if r.contains("main")),
                "{command}"
            );
        }
        assert_eq!(
            check_shell("git reset -- src/lib.rs", &ctx),
            Decision::Allow
        );
        assert_eq!(check_shell("git status", &ctx), Decision::Allow);
    }

    #[test]
    fn file_tools_are_held_to_the_same_paths() {
        let ctx = ctx();
        assert_eq!(check_file_write("src/lib.rs", &ctx), Decision::Allow);
        assert_eq!(check_file_write("/repo/src/lib.rs", &ctx), Decision::Allow);
        assert_eq!(check_file_write("/tmp/plan.json", &ctx), Decision::Allow);
        for path in [
            "/repo/.git/hooks/commit-msg",
            "/repo/.git/HEAD",
            ".git/orchestrator/x",
            "/repo/run_tests.sh",
            "src/../run_tests.sh",
            "/repo/.orchestrate.toml",
            "/repo/ci/a/b.sh",
        ] {
            assert!(
                matches!(check_file_write(path, &ctx), Decision::Deny(_)),
                "{path}"
            );
        }
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Update File: run_tests.sh\n*** End Patch\n";
        assert!(
            matches!(check_patch(patch, &ctx), Decision::Deny(r) if r.contains("run_tests.sh"))
        );
        assert_eq!(
            check_patch(
                "*** Begin Patch\n*** Add File: src/new.rs\n+x\n*** End Patch",
                &ctx
            ),
            Decision::Allow
        );
    }

    /// Hostile input never panics and never takes long: random lines over the characters a
    /// shell treats specially.
    #[test]
    fn random_command_lines_are_judged_without_panicking() {
        let alphabet: Vec<char> = "ab gitcommit-n$()`'\"\\;&|<>\n#={}*.~/2".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let ctx = ctx();
        for _ in 0..20_000 {
            let len = (seed >> 59) as usize + 1;
            let mut line = String::new();
            for _ in 0..len * 3 {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                line.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            let _ = check_shell(&line, &ctx);
            let _ = check_patch(&line, &ctx);
            let _ = check_file_write(&line, &ctx);
        }
        let deep = format!("{}git commit -n{}", "$(".repeat(200), ")".repeat(200));
        assert!(matches!(check_shell(&deep, &ctx), Decision::Deny(_)));
        let wide = "sh -c \"".repeat(50) + "git commit -n" + &"\"".repeat(50);
        let _ = check_shell(&wide, &ctx);
    }

    #[test]
    fn globs_match_as_git_does() {
        assert!(glob_match("ci/**", "ci/a/b.sh"));
        assert!(glob_match("**/*.lock", "a/b/c.lock"));
        assert!(glob_match("**/*.lock", "c.lock"));
        assert!(glob_match("*.sh", "run.sh"));
        assert!(!glob_match("*.sh", "ci/run.sh"));
        assert!(glob_match("ci/?.sh", "ci/a.sh"));
        assert!(!glob_match("ci/?.sh", "ci/ab.sh"));
    }
}
