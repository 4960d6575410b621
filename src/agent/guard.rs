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
    "nl",
    "cut",
    "jq",
    "shellcheck",
    "tac",
    "strings",
    "column",
    "comm",
    "paste",
    "fold",
    "awk",
    "gawk",
    "mawk",
    "sort",
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

/// What in the git directory an agent's write would change the hooks, the workflow's state,
/// the branches or the objects they name.
const GIT_DIR_GUARDED: &[&str] = &[
    "hooks",
    "orchestrator",
    "refs",
    "logs",
    "packed-refs",
    "config",
    "HEAD",
    "objects",
];

/// The clients' settings that hold the hooks and the MCP server (`init --agent`), in the
/// project or the user's home: an agent that rewrites them switches its own guard off.
const AGENT_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".gemini/settings.json",
];

/// Programs that run the command named by their arguments.
const WRAPPERS: &[&str] = &[
    "env", "sudo", "doas", "command", "exec", "nohup", "time", "nice", "timeout", "stdbuf",
    "setsid", "xargs", "builtin", "unbuffer", "ionice", "flock", "watch", "coproc",
];

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "busybox"];

/// Shell keywords that may start a simple command and are not its program.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
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
    // A shell that reads its script on stdin (`echo "…" | sh`, `cat <<EOF | bash`): the text
    // the line prints is its script.
    if commands.iter().any(is_bare_shell) {
        for simple in &commands {
            // `sh < run_tests.sh`, `cat run_tests.sh | sh`: a script run as its stdin.
            let scripts = match simple.words.first().map(|w| basename(w)) {
                Some("cat") => simple.words[1..].to_vec(),
                _ if is_bare_shell(simple) => simple.reads.clone(),
                _ => Vec::new(),
            };
            for script in scripts.iter().filter(|s| !s.starts_with('-')) {
                if let Some(reason) = gate_command(&["sh", script], ctx) {
                    return Err(reason);
                }
            }
            let printed = match simple.words.first().map(|w| basename(w)) {
                Some("echo" | "printf") => Some(simple.words[1..].join(" ")),
                _ => simple.heredoc.clone(),
            };
            if let Some(text) = printed {
                check_line(&text, ctx, depth + 1)?;
            }
        }
    }
    // `cd DIR` moves where the commands after it write, `git checkout B` the branch they
    // commit to: the guard follows both. A `cd` may fail or be undone (`(cd x)`, `cd x ||
    // …`), so each command is judged from every directory it may run in.
    let mut here = ctx.clone();
    let mut cwds = vec![normalize(&ctx.cwd)];
    for simple in &commands {
        if let Some(dir) = cd_target(&simple.words) {
            let next: Vec<PathBuf> = match dir {
                Some(d) if !d.contains(['$', '`', '~']) && d != "-" => {
                    cwds.iter().map(|c| normalize(&c.join(d))).collect()
                }
                // Somewhere the guard cannot know: most often the top of the repository.
                _ => vec![normalize(&ctx.root)],
            };
            for cwd in next {
                if !cwds.contains(&cwd) && cwds.len() < 16 {
                    cwds.push(cwd);
                }
            }
            continue;
        }
        for cwd in &cwds {
            here.cwd = cwd.clone();
            check_simple(simple, &here, depth)?;
        }
        if let Some(branch) = switched_branch(&simple.words, &ctx.main_branch) {
            here.head_branch = Some(branch);
        }
    }
    Ok(())
}

/// The directory of `cd DIR` / `pushd DIR` / `builtin cd -P DIR` (`Some(None)`: `cd` alone,
/// home), `None` for any other command.
fn cd_target(words: &[String]) -> Option<Option<&str>> {
    let words = match words {
        [builtin, rest @ ..] if builtin == "builtin" || builtin == "command" => rest,
        _ => words,
    };
    let [cd, args @ ..] = words else { return None };
    if !matches!(cd.as_str(), "cd" | "pushd") {
        return None;
    }
    let mut operands = args
        .iter()
        .skip_while(|a| a.starts_with('-') && a.len() > 1);
    Some(
        operands
            .next()
            .map(|d| if d == "--" { "" } else { d.as_str() }),
    )
}

/// `sh`, `bash -s`, `sudo bash --norc`, `source /dev/stdin`, `xargs sh -c`…: a shell that
/// runs what arrives on its stdin.
fn is_bare_shell(simple: &Simple) -> bool {
    let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
    let words = unwrap(&words).unwrap_or_default();
    let Some(program) = words.first() else {
        return false;
    };
    let stdin = |w: &str| matches!(w, "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-");
    let name = basename(program);
    if matches!(name, "source" | ".") {
        return words.get(1).is_some_and(|w| stdin(w));
    }
    if !SHELLS.contains(&name) {
        return false;
    }
    let mut args = words[1..].iter();
    while let Some(w) = args.next() {
        let short = w.starts_with('-') && !w.starts_with("--") && w.len() > 1;
        if short && w.contains('s') {
            return true;
        }
        if short && w.contains('c') {
            // `sh -c` with its script still to come from elsewhere (`xargs sh -c`).
            return shell_script(&words[1..]).is_none();
        }
        if matches!(*w, "-o" | "+o" | "-O" | "+O") {
            args.next();
            continue;
        }
        if w.starts_with('-') || w.starts_with('+') {
            continue;
        }
        return stdin(w);
    }
    true
}

/// The branch `git checkout B` / `git switch B` (or `-b B`…) leaves HEAD on; the main
/// branch when it cannot be told (`git checkout -`, a name from an expansion), which is the
/// careful guess. `None` when HEAD stays (`git checkout -- FILE`, `git checkout REV -- FILE`).
fn switched_branch(words: &[String], main: &str) -> Option<String> {
    let [git, sub, rest @ ..] = words else {
        return None;
    };
    if basename(git) != "git" || !matches!(sub.as_str(), "checkout" | "switch") {
        return None;
    }
    if rest.iter().any(|w| w == "--") {
        return None;
    }
    let mut iter = rest.iter();
    while let Some(w) = iter.next() {
        if matches!(w.as_str(), "-b" | "-B" | "-c" | "-C" | "--orphan") {
            return iter.next().cloned();
        }
        if let Some(v) = w
            .strip_prefix("--create=")
            .or_else(|| w.strip_prefix("--force-create="))
            .or_else(|| w.strip_prefix("--orphan="))
        {
            return Some(v.to_string());
        }
        if !w.starts_with('-') {
            return Some(if w.contains(['$', '`']) {
                main.to_string()
            } else {
                w.clone()
            });
        }
        if w == "-" {
            return Some(main.to_string());
        }
    }
    None
}

fn check_simple(simple: &Simple, ctx: &GuardContext, depth: usize) -> Result<(), String> {
    for target in &simple.writes {
        check_written_path(target, ctx)?;
    }
    check_assignments(&simple.assignments)?;
    // `GIT_WORK_TREE=DIR git checkout …` writes under DIR, as `--work-tree` does.
    for assignment in &simple.assignments {
        if let Some(dir) = assignment.strip_prefix("GIT_WORK_TREE=") {
            check_written_path(&format!("{dir}/x"), ctx)?;
        }
    }
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
        if *first == "function" {
            // `function NAME { body…`: the body's first command follows on the same words.
            words.drain(..words.len().min(2));
            continue;
        }
        if matches!(*first, "for" | "case" | "select") {
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
        "git" => check_git(&words[1..], ctx, depth)?,
        "git-orchestrate" => check_orchestrate(&words[1..])?,
        "eval" => check_line(&words[1..].join(" "), ctx, depth + 1)?,
        "trap" => {
            if let Some(action) = words.get(1) {
                check_line(action, ctx, depth + 1)?;
            }
        }
        "script" => {
            if let Some(command) = shell_script(&words[1..]) {
                check_line(command, ctx, depth + 1)?;
            }
        }
        "find" => {
            // `-exec CMD… ;` / `-execdir`, `-ok`: each command find runs.
            let mut rest = &words[1..];
            while let Some(at) = rest
                .iter()
                .position(|w| matches!(*w, "-exec" | "-execdir" | "-ok" | "-okdir"))
            {
                let after = &rest[at + 1..];
                let end = after
                    .iter()
                    .position(|w| matches!(*w, ";" | "+"))
                    .unwrap_or(after.len());
                let run = Simple {
                    words: after[..end].iter().map(|w| w.to_string()).collect(),
                    ..Simple::default()
                };
                check_simple(&run, ctx, depth + 1)?;
                rest = &after[end..];
            }
        }
        "apply_patch" | "applypatch" => {
            let patch = words.get(1).copied().or(simple.heredoc.as_deref());
            if let Some(patch) = patch
                && let Decision::Deny(reason) = check_patch(patch, ctx)
            {
                return Err(reason);
            }
        }
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
    if !only_reads(name, &words[1..]) {
        check_writer(name, &words[1..], ctx)?;
    }
    Ok(())
}

/// A program that only reads the files it is given, with these arguments (`sort -o`,
/// `xxd -r`, `gawk -i inplace`, `tree -o` write).
fn only_reads(name: &str, args: &[&str]) -> bool {
    let writes = match name {
        "sort" => args.iter().any(|a| {
            a.starts_with("-o")
                || a.starts_with("--output")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }),
        // `xxd IN OUT` writes OUT.
        "xxd" => {
            args.iter().any(|a| a.starts_with("-r") || *a == "-revert")
                || args.iter().filter(|a| !a.starts_with('-')).count() > 1
        }
        "tree" => args.iter().any(|a| a.starts_with("-o")),
        // Its program can print into any file (`print > "f"`): the git internals it names
        // are looked for, the files it reads are not taken as written.
        "awk" | "gawk" | "mawk" => true,
        _ => false,
    };
    READERS.contains(&name) && !writes
}

/// The environment settings a command line makes: the human marker, a hooks path or a notes
/// ref slipped in through git's environment.
fn check_assignments(assignments: &[String]) -> Result<(), String> {
    for assignment in assignments {
        let (name, value) = assignment.split_once('=').unwrap_or((assignment, ""));
        let name = name.strip_suffix('+').unwrap_or(name);
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
        if matches!(
            name,
            "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM" | "GIT_CONFIG"
        ) {
            return Err(format!(
                "{name} swaps in a git configuration the guard cannot see (it may move core.hooksPath): {USE_CHECKPOINT}"
            ));
        }
        if (name.starts_with("GIT_CONFIG_KEY_") || name == "GIT_CONFIG_PARAMETERS")
            && let Some(reason) = risky_setting(value)
        {
            return Err(format!("{name}: {reason}"));
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
        let mut locked = false;
        while let Some(next) = rest.first() {
            if next.starts_with('-') {
                if name == "env" && (*next == "-S" || next.starts_with("--split-string")) {
                    return Err(
                        "`env -S` hides the command it runs from the guard; run the command itself"
                            .into(),
                    );
                }
                if name == "flock" && matches!(*next, "-c" | "--command") {
                    return Ok(rest[1..]
                        .first()
                        .map_or_else(Vec::new, |c| vec!["sh", "-c", c]));
                }
                let sudo_cluster = name == "sudo"
                    && !next.starts_with("--")
                    && next.ends_with(['u', 'g', 'C', 'D', 'h', 'p', 'U', 'r', 't', 'T']);
                let takes_value = sudo_cluster
                    || matches!(
                        (name, *next),
                        ("nice", "-n")
                            | ("timeout", "-s" | "-k" | "--signal" | "--kill-after")
                            | ("env", "-u" | "-C" | "--unset" | "--chdir")
                            | ("exec", "-a")
                            | ("ionice", "-c" | "-n" | "-p" | "-P" | "-u")
                            | ("flock", "-w" | "-E" | "--timeout" | "--conflict-exit-code")
                            | ("watch", "-n" | "-d" | "--interval")
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
            } else if name == "flock" && !locked {
                // `flock FILE CMD…`: the lock file first.
                locked = true;
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
    let mut command = false;
    while let Some(arg) = iter.next() {
        if *arg == "--" {
            continue;
        }
        if matches!(*arg, "-o" | "+o" | "-O" | "+O") {
            iter.next();
            continue;
        }
        if arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c') {
            command = true;
            continue;
        }
        if !arg.starts_with('-') && !arg.starts_with('+') {
            return command.then_some(*arg);
        }
    }
    None
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A preflight gate's command, run directly: its words, or its script through another
/// interpreter or path. `sh -n SCRIPT` only reads it.
fn gate_command(words: &[&str], ctx: &GuardContext) -> Option<String> {
    if words.first().is_some_and(|p| SHELLS.contains(&basename(p)))
        && words[1..]
            .iter()
            .take_while(|w| w.starts_with('-'))
            .any(|w| !w.starts_with("--") && w.contains('n'))
    {
        return None;
    }
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
            // A path is the same file named another way (`./run_tests.sh`, `/repo/x.sh`,
            // `../x.sh` from a subdirectory), never just another file of the same name.
            let same_path = |a: &str, b: &str| {
                (a.contains('/') || b.contains('/'))
                    && normalize(&ctx.cwd.join(a)) == normalize(&ctx.root.join(b))
            };
            let same_words = words.len() >= gate_words.len()
                && words
                    .iter()
                    .zip(&gate_words)
                    .all(|(a, b)| a == b || same_path(a, b));
            let same_script = script_of(words)
                .zip(script_of(&gate_words))
                .is_some_and(|(a, b)| {
                    normalize(&ctx.cwd.join(&a)) == normalize(&ctx.root.join(&b))
                });
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
fn check_git(args: &[&str], ctx: &GuardContext, depth: usize) -> Result<(), String> {
    let mut here = ctx.clone();
    let ctx = &mut here;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        let (option, attached) = match arg.split_once('=') {
            Some((o, v)) if arg.starts_with("--") => (o, Some(v)),
            _ => (arg, None),
        };
        let value = || {
            attached
                .or_else(|| args.get(i + 1).copied())
                .unwrap_or_default()
        };
        let step = if attached.is_some() { 1 } else { 2 };
        match option {
            "-c" | "--config-env" => {
                if let Some(reason) = risky_setting(value()) {
                    return Err(format!("`git {arg} {}`: {reason}", value()));
                }
                i += step;
            }
            _ if arg.starts_with("-c") => {
                if let Some(reason) = risky_setting(&arg[2..]) {
                    return Err(format!("`git {arg}`: {reason}"));
                }
                i += 1;
            }
            "-C" => {
                ctx.cwd = normalize(&ctx.cwd.join(value()));
                i += step;
            }
            "--work-tree" => {
                // Every file the command writes lands under it.
                check_written_path(&format!("{}/x", value()), ctx)?;
                i += step;
            }
            "--git-dir" | "--namespace" | "--exec-path" => i += step,
            _ if arg.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let ctx = &*ctx;
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
    // `git log --output=FILE`, `git diff --output FILE`, `git format-patch -o DIR`: git
    // writes the file.
    for (at, w) in rest.iter().enumerate() {
        let written = match *w {
            "--output" | "--output-directory" => rest.get(at + 1).copied(),
            "-o" if *sub == "format-patch" => rest.get(at + 1).copied(),
            _ => w
                .strip_prefix("--output=")
                .or_else(|| w.strip_prefix("--output-directory=")),
        };
        if let Some(path) = written {
            check_written_path(path, ctx)?;
            check_written_path(&format!("{path}/x"), ctx)?;
        }
    }
    if on_main
        && matches!(
            *sub,
            "merge" | "cherry-pick" | "revert" | "am" | "rebase" | "pull"
        )
    {
        return Err(format!(
            "`git {sub}` on the main branch ({main}) changes it; the orchestrator merges PRs into {main} after review (`git orchestrate get-task`)"
        ));
    }
    if matches!(*sub, "merge" | "pull" | "push" | "am") && rest.iter().any(|w| skips_verify(w)) {
        return Err(format!(
            "`git {sub} --no-verify` skips the hooks that enforce preflight: {USE_CHECKPOINT}"
        ));
    }
    match *sub {
        "commit-tree" => {
            return Err(format!(
                "`git commit-tree` makes a commit no hook sees: {USE_CHECKPOINT}"
            ));
        }
        "fetch" | "pull" => {
            // A refspec writes its destination: `git fetch . HEAD:refs/orchestrator/…`.
            if let Some(r) = rest.iter().filter(|w| w.contains(':')).find(|w| {
                let dst = w.rsplit(':').next().unwrap_or_default();
                orchestrator_ref(&dst) || names_main(w)
            }) {
                return Err(format!(
                    "`git {sub} … {r}` writes a ref the orchestrator keeps: {STATE_IS_THE_ORCHESTRATORS}"
                ));
            }
        }
        "rebase" => {
            let mut iter = rest.iter();
            while let Some(w) = iter.next() {
                let exec = match *w {
                    "-x" | "--exec" => iter.next().copied(),
                    _ => w.strip_prefix("--exec=").or_else(|| w.strip_prefix("-x")),
                };
                if let Some(command) = exec.filter(|c| !c.is_empty()) {
                    check_line(command, ctx, depth + 1)?;
                }
            }
        }
        "submodule" if rest.contains(&"foreach") => {
            let at = rest
                .iter()
                .position(|w| *w == "foreach")
                .unwrap_or_default();
            let command: Vec<&str> = rest[at + 1..]
                .iter()
                .filter(|w| !w.starts_with("--"))
                .copied()
                .collect();
            check_line(&command.join(" "), ctx, depth + 1)?;
        }
        // `git rm --cached` only unstages: the files stay.
        "rm" if rest.contains(&"--cached") => {}
        "mv" | "rm" | "restore" => {
            let paths: Vec<&&str> = rest.iter().filter(|w| !w.starts_with('-')).collect();
            for path in &paths {
                check_written_path(path, ctx)?;
            }
            // What a move or a removal takes away (a move's destination stays).
            let removed = match *sub {
                "rm" => &paths[..],
                "mv" => &paths[..paths.len().saturating_sub(1)],
                _ => &[],
            };
            for path in removed {
                holds_guarded(path, ctx)?;
            }
        }
        "checkout" if rest.contains(&"--") => {
            let at = rest.iter().position(|w| *w == "--").unwrap_or_default();
            for path in &rest[at + 1..] {
                check_written_path(path, ctx)?;
            }
        }
        "worktree" => {
            let mut iter = rest.iter();
            while let Some(w) = iter.next() {
                if matches!(*w, "-B" | "-b") && iter.next().is_some_and(names_main) {
                    return Err(format!(
                        "`git worktree {w} {main}` resets the main branch; the orchestrator merges into it"
                    ));
                }
            }
        }
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
        "config" => {
            let words: Vec<&&str> = rest.iter().filter(|w| !w.starts_with('-')).collect();
            let reads = rest.iter().any(|w| {
                matches!(
                    *w,
                    "--get" | "--get-all" | "--get-regexp" | "-l" | "--list" | "get" | "list"
                )
            }) || (words.len() == 1
                && !rest
                    .iter()
                    .any(|w| w.starts_with("--unset") || *w == "--add" || *w == "--replace-all"));
            if !reads
                && let Some((key, reason)) = rest
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .find_map(|w| risky_setting(w).map(|r| (w, r)))
            {
                return Err(format!("changing {key}: {reason}"));
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
            // A wildcard refspec (`refs/heads/*`, `+refs/*:refs/*`) names whatever matches it.
            let wildcard_main = |w: &&&str| {
                let dst = w
                    .rsplit(':')
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches('+');
                let prefix = dst.split('*').next().unwrap_or_default();
                dst.contains('*')
                    && (format!("refs/heads/{main}").starts_with(prefix)
                        || "refs/orchestrator/".starts_with(prefix)
                        || prefix.starts_with("refs/orchestrator"))
            };
            if refspecs.iter().any(|w| names_main(w))
                || refspecs.iter().any(wildcard_main)
                || rest.contains(&"--all")
                || rest.contains(&"--branches")
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
                matches!(*w, "--force" | "--delete" | "--move" | "--copy")
                    || (w.starts_with('-')
                        && !w.starts_with("--")
                        && w.contains(['f', 'D', 'd', 'm', 'M', 'c', 'C']))
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
                let cluster = w.starts_with('-') && !w.starts_with("--");
                // `-B main`, `-fB main`, `-Bmain`, `--force-create=main`.
                let resets = if let Some(v) = w.strip_prefix("--force-create=") {
                    names_main(&v)
                } else if *w == "--force-create" || (cluster && w.ends_with(['B', 'C'])) {
                    iter.clone().next().is_some_and(names_main)
                } else if cluster && let Some(at) = w.find(['B', 'C']) {
                    names_main(&&w[at + 1..])
                } else {
                    false
                };
                if resets {
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

/// `--no-verify` or an abbreviation git takes for it (`--no-ver`; shorter is ambiguous
/// with `--no-verbose`).
fn skips_verify(arg: &str) -> bool {
    arg.len() >= "--no-ver".len() && "--no-verify".starts_with(arg)
}

/// `git commit` options: `--no-verify`, or `-n` alone or in a cluster (`-an`), skipping the
/// values of the options that take one (`-mn` and `-m -n` are the message "n" and "-n").
fn commit_skips_hooks(args: &[&str]) -> bool {
    const TAKE_VALUE: &[&str] = &[
        "--message",
        "--file",
        "--author",
        "--date",
        "--template",
        "--reuse-message",
        "--reedit-message",
        "--fixup",
        "--squash",
        "--trailer",
        "--cleanup",
        "--pathspec-from-file",
    ];
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if *arg == "--" {
            return false;
        }
        if skips_verify(arg) {
            return true;
        }
        if TAKE_VALUE.contains(arg) {
            iter.next();
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            for (at, letter) in cluster.char_indices() {
                match letter {
                    'n' => return true,
                    'm' | 'F' | 'c' | 'C' | 't' => {
                        if at + 1 == cluster.len() {
                            iter.next();
                        }
                        break;
                    }
                    // Optional values, attached only.
                    'u' | 'S' => break,
                    _ => {}
                }
            }
        }
    }
    false
}

/// Why setting this git configuration (`key=value` or `key`) goes around the workflow:
/// moving the hooks, including a file the guard cannot read, an alias that hides the
/// command it runs, pointing `git notes` at the orchestrator's notes.
fn risky_setting(setting: &str) -> Option<String> {
    let key = setting
        .split_once('=')
        .map_or(setting, |(k, _)| k)
        .trim_matches(['\'', '"'])
        .to_ascii_lowercase();
    if key.starts_with("core.hookspath") {
        Some(format!("it bypasses the installed hooks: {USE_CHECKPOINT}"))
    } else if key.starts_with("include.") || key.starts_with("includeif.") {
        Some(format!(
            "it includes a configuration the guard cannot see (it may move core.hooksPath): {USE_CHECKPOINT}"
        ))
    } else if key.starts_with("alias.") {
        Some(
            "a git alias hides the command it runs from the guard; run the command itself"
                .to_string(),
        )
    } else if key == "push.default"
        || (key.starts_with("remote.")
            && (key.ends_with(".push") || key.ends_with(".fetch") || key.ends_with(".mirror")))
        || (key.starts_with("branch.") && (key.ends_with(".merge") || key.ends_with(".pushremote")))
    {
        Some(
            "it changes which refs a push or fetch moves (the main branch's and the orchestrator's among them); push the PR branch by name, and `git orchestrate sync` moves the workflow"
                .to_string(),
        )
    } else if key.starts_with("core.notesref") {
        Some(format!(
            "it points git notes at another notes ref, and refs/notes/orchestrator is the orchestrator's: {STATE_IS_THE_ORCHESTRATORS}"
        ))
    } else {
        None
    }
}

fn check_git_notes(args: &[&str]) -> Result<(), String> {
    let mut notes_ref = None;
    let mut sub = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        // git takes `--re` and `--r` for `--ref`.
        let is_ref = |o: &str| o.len() >= 3 && "--ref".starts_with(o);
        if is_ref(arg) {
            notes_ref = args.get(i + 1).copied();
            i += 2;
            continue;
        }
        if let Some((option, r)) = arg.split_once('=')
            && is_ref(option)
        {
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
    // The subcommand's own words, its options (`--json`, `--workflow W`) left out.
    let mut words = Vec::new();
    while let Some(arg) = iter.next() {
        if *arg == "--workflow" {
            iter.next();
        } else if !arg.starts_with('-') {
            words.push(*arg);
        }
    }
    match sub {
        Some(cmd @ ("resume" | "approve" | "reject" | "repin")) => Err(format!(
            "`git orchestrate {cmd}` is for humans: {HUMAN_ONLY}"
        )),
        Some("hooks") if words.first() == Some(&"uninstall") => Err(format!(
            "`git orchestrate hooks uninstall` removes the hooks that enforce preflight; it is for humans: {HUMAN_ONLY}"
        )),
        Some("hooks")
            if words.first() == Some(&"install")
                && args.iter().any(|a| a.starts_with("--manager")) =>
        {
            Err(format!(
                "`git orchestrate hooks install --manager …` moves the hooks into a hook manager's configuration, which takes ours out until the manager installs its own; it is for humans: {HUMAN_ONLY}"
            ))
        }
        Some("init") if args.contains(&"--remove") => Err(format!(
            "`git orchestrate init --agent … --remove` takes out the agent's guard and hooks; it is for humans: {HUMAN_ONLY}"
        )),
        _ => Ok(()),
    }
}

/// A command that may write its arguments: the git internals and protected files are off
/// limits. Programs that only read are not asked.
fn check_writer(name: &str, args: &[&str], ctx: &GuardContext) -> Result<(), String> {
    let operands: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .copied()
        .collect();
    let value_of = |options: &[&str]| -> Vec<&str> {
        let mut out = Vec::new();
        for (at, arg) in args.iter().enumerate() {
            for option in options {
                if arg == option {
                    out.extend(args.get(at + 1).copied());
                } else if let Some(v) = arg.strip_prefix(option).filter(|_| option.len() > 2)
                    && let Some(v) = v.strip_prefix('=')
                {
                    out.push(v);
                }
            }
        }
        out
    };
    // The files each known writer writes; a program not known to write is not taken to
    // write the files it names (an agent's checker reading the config is ordinary work).
    let mut mention_args: Vec<&str> = args.to_vec();
    let targets: Vec<&str> = match name {
        "rm" | "rmdir" | "unlink" | "shred" | "touch" | "truncate" | "chmod" | "chown"
        | "chgrp" | "mkdir" | "tee" | "ed" | "ex" | "patch" | "gzip" | "gunzip" | "bzip2"
        | "xz" | "zstd" | "split" => operands.clone(),
        "dd" => args.iter().filter_map(|a| a.strip_prefix("of=")).collect(),
        "sed" | "perl" | "ruby"
            if args.iter().any(|a| {
                a.starts_with("-i")
                    || a.starts_with("--in-place")
                    || (a.starts_with("-p") && a.contains('i'))
            }) =>
        {
            operands.clone()
        }
        "awk" | "gawk" | "mawk" if args.iter().any(|a| a.contains("inplace")) => operands.clone(),
        "sort" => value_of(&["-o", "--output"]),
        "tree" => value_of(&["-o"]),
        "curl" => value_of(&["-o", "--output"]),
        "wget" => value_of(&["-O", "--output-document"]),
        // `xxd IN OUT` writes OUT; `xxd -r IN OUT` too.
        "xxd" => operands.get(1).copied().into_iter().collect(),
        "tar" | "unzip" => value_of(&["-C", "--directory", "-d"]),
        "find" if args.contains(&"-delete") => {
            find_deletes(args, ctx)?;
            Vec::new()
        }
        // What find tests and prints is read; its -exec commands are judged apart.
        "find" => {
            mention_args.clear();
            Vec::new()
        }
        // The destination only (the sources are read), and the file a source becomes in a
        // destination directory.
        "cp" | "install" | "ln" | "rsync" | "scp" => {
            let mut targets: Vec<&str> = operands.last().copied().into_iter().collect();
            targets.extend(value_of(&["-t", "--target-directory"]));
            for target in targets.clone() {
                into_directory(target, &operands, ctx)?;
            }
            // `cp -a src/. .`, `rsync -a src/ ./`, `cp -rT src .`: the contents of the
            // source land in the destination directory itself, over whatever is there.
            let contents = operands[..operands.len().saturating_sub(1)]
                .iter()
                .any(|s| s.ends_with("/.") || (name == "rsync" && s.ends_with('/')))
                || args.iter().any(|a| {
                    *a == "--no-target-directory"
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('T'))
                });
            if contents && let Some(dest) = operands.last() {
                holds_guarded(dest, ctx)?;
            }
            mention_args = targets.clone();
            targets
        }
        "mv" => {
            if let Some(dest) = operands.last() {
                into_directory(dest, &operands, ctx)?;
            }
            operands.clone()
        }
        _ => Vec::new(),
    };
    for target in &targets {
        check_written_path(target, ctx)?;
    }
    // Deleting or moving a directory deletes what is in it (a move's destination stays).
    let removed = match name {
        "rm" | "rmdir" | "unlink" | "shred" => &targets[..],
        "mv" => &targets[..targets.len().saturating_sub(1)],
        _ => &[],
    };
    for target in removed {
        holds_guarded(target, ctx)?;
    }
    // Anything else that names the git internals (a script, an interpreter's one-liner) is
    // refused too: there is no reason for an agent's command to touch them.
    for arg in mention_args {
        if let Some(reason) = git_internal_mention(arg, ctx) {
            return Err(reason);
        }
    }
    Ok(())
}

/// `find … -delete`: refused when it would reach the hooks or a protected file — its start
/// holds them and its name tests (if any) match one of their names.
fn find_deletes(args: &[&str], ctx: &GuardContext) -> Result<(), String> {
    let starts: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(**a, "(" | "!"))
        .copied()
        .collect();
    let starts = if starts.is_empty() { vec!["."] } else { starts };
    let patterns: Vec<&str> = args
        .windows(2)
        .filter(|w| matches!(w[0], "-name" | "-iname" | "-path" | "-ipath" | "-wholename"))
        .map(|w| w[1])
        .collect();
    let guarded_names: Vec<String> = crate::hooks::NAMES
        .iter()
        .map(|n| n.to_string())
        .chain(
            ctx.protected_files
                .iter()
                .map(|f| f.rsplit('/').next().unwrap_or(f).to_string()),
        )
        .collect();
    let may_match = patterns.is_empty()
        || patterns.iter().any(|p| {
            let p = p.rsplit('/').next().unwrap_or(p);
            guarded_names
                .iter()
                .any(|n| glob_match(p, n) || glob_match(&p.to_lowercase(), &n.to_lowercase()))
        });
    let root = normalize(&ctx.root);
    for start in starts {
        if may_match {
            holds_guarded(start, ctx)?;
        }
        // Under a protected glob's directory (`ci/**`), any deletion may hit it.
        let target = normalize(&ctx.cwd.join(start));
        for glob in &ctx.protected_globs {
            let fixed = glob.split(['*', '?', '[']).next().unwrap_or_default();
            let Some(dir) = fixed
                .rsplit_once('/')
                .map(|(d, _)| d)
                .filter(|d| !d.is_empty())
            else {
                continue;
            };
            let prefix = normalize(&root.join(dir));
            // Inside it, or above it with nothing to narrow what goes (`find . -name '*.pyc'
            // -delete` is left to the gates' protected-path check).
            if target.starts_with(&prefix) || (patterns.is_empty() && prefix.starts_with(&target)) {
                return Err(format!(
                    "`find {start} … -delete` reaches {glob}, which is protected (docs/integrity.md): the gates that judge your work, and the files they run, change only on the main branch, by a human"
                ));
            }
        }
    }
    Ok(())
}

/// Writing into `dest` when it is a directory writes `dest/<name>` for each source.
fn into_directory(dest: &str, operands: &[&str], ctx: &GuardContext) -> Result<(), String> {
    if !ctx.cwd.join(dest).is_dir() {
        return Ok(());
    }
    for source in operands.iter().filter(|o| **o != dest) {
        if let Some(name) = Path::new(source).file_name() {
            check_written_path(&format!("{dest}/{}", name.to_string_lossy()), ctx)?;
        }
    }
    Ok(())
}

/// Refuses `path` when it is a directory that holds the git directory, the hooks or a
/// protected path (`rm -rf ci` with `ci/**` protected; `rm -rf .`).
fn holds_guarded(path: &str, ctx: &GuardContext) -> Result<(), String> {
    let target = normalize(&ctx.cwd.join(path));
    if target.as_os_str().is_empty() {
        return Ok(());
    }
    for dir in [&ctx.git_dir, &ctx.hooks_dir] {
        if !dir.as_os_str().is_empty() && normalize(dir).starts_with(&target) {
            return Err(format!(
                "{path} holds {}, the hooks and the orchestrator's state: {STATE_IS_THE_ORCHESTRATORS}",
                dir.display()
            ));
        }
    }
    let root = normalize(&ctx.root);
    let protected = ctx.protected_files.iter().map(String::as_str).chain(
        ctx.protected_globs
            .iter()
            .map(|g| g.split(['*', '?', '[']).next().unwrap_or_default()),
    );
    for inside in protected {
        if normalize(&root.join(inside.trim_end_matches('/'))).starts_with(&target) {
            return Err(format!(
                "{path} holds {inside}, which is protected (docs/integrity.md): the gates that judge your work, and the files they run, change only on the main branch, by a human"
            ));
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
    // The user's own git configuration can move core.hooksPath for every repository.
    let user_config = word.ends_with(".gitconfig") || word.contains(".config/git/config");
    let named = INTERNAL
        .iter()
        .find(|p| word.contains(**p))
        .map(|p| p.to_string())
        .or_else(|| user_config.then(|| word.to_string()))
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
    // `..` after a link goes up from where the link points, so the path is also resolved
    // as written, before `..` is taken away as text.
    let candidates = std::iter::once(absolute.clone())
        .chain(resolved(&absolute))
        .chain(resolved(&ctx.cwd.join(path)));
    let roots: Vec<PathBuf> = std::iter::once(normalize(&ctx.root))
        .chain(std::fs::canonicalize(&ctx.root).ok())
        .collect();
    for candidate in candidates {
        for (dir, whole) in [(&ctx.git_dir, false), (&ctx.hooks_dir, true)] {
            if dir.as_os_str().is_empty() {
                continue;
            }
            // In the git directory, the parts the workflow and the hooks live in; a lock
            // file, `info/exclude` or a rebase's scratch files are git's ordinary business.
            let inside = std::iter::once(normalize(dir))
                .chain(std::fs::canonicalize(dir).ok())
                .filter_map(|d| candidate.strip_prefix(d).ok().map(Path::to_path_buf))
                .any(|rest| {
                    whole
                        || rest.as_os_str().is_empty()
                        || rest.components().next().is_some_and(|first| {
                            GIT_DIR_GUARDED.contains(&first.as_os_str().to_string_lossy().as_ref())
                        })
                });
            if inside {
                return Err(format!(
                    "{path} is inside {}, which holds the hooks and the orchestrator's state: {STATE_IS_THE_ORCHESTRATORS}",
                    dir.display()
                ));
            }
        }
        if let Some(file) = AGENT_SETTINGS.iter().find(|f| candidate.ends_with(f)) {
            return Err(format!(
                "{path} is an agent's settings ({file}), where `git orchestrate init --agent` put this guard and the Stop hook; a human changes them"
            ));
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
        // Allowed: reading, and words that only look like flags.
        ("git commit -m -n", ""),
        ("git commit -m '-nothing' --author 'A <a@b>'", ""),
        ("git commit -F msg.txt -a", ""),
        ("diff <(sort a) <(sort b)", ""),
        ("awk '{print}' run_tests.sh", ""),
        ("sort .orchestrate.toml | nl", ""),
        ("jq . .orchestrate.toml; cut -d= -f1 .orchestrate.toml", ""),
        ("cp run_tests.sh /tmp/", ""),
        ("git fetch origin main:refs/remotes/origin/main", ""),
        ("git checkout feat/y && git commit -m x", ""),
        ("echo 'git commit -n' > notes.txt", ""),
        ("rm -rf target build", ""),
        ("mv /tmp/notes.txt . && mv a.txt b.txt", ""),
        ("time -p cargo build", ""),
        // Hooks skipped or moved another way.
        ("git merge --no-verify -m x feat/y", "--no-verify"),
        ("git push --no-verify origin feat/x", "--no-verify"),
        ("git commit --no-ver -m x", "--no-verify"),
        ("git commit $'\\x2dn' -m x", "--no-verify"),
        ("git commit $'\\055n' -m x", "--no-verify"),
        ("sh -c -- 'git commit -n'", "--no-verify"),
        ("bash -o errexit -c 'git commit -n'", "--no-verify"),
        ("bash <<< 'git commit -n -m x'", "--no-verify"),
        ("echo 'git commit -n -m x' | sh", "--no-verify"),
        ("function f { git commit -n -m x; }; f", "--no-verify"),
        ("time -p git commit -n -m x", "--no-verify"),
        ("coproc git commit -n -m x", "--no-verify"),
        ("exec -a foo git commit -n -m x", "--no-verify"),
        ("flock /tmp/l git commit -n -m x", "--no-verify"),
        ("flock /tmp/l -c 'git commit -n -m x'", "--no-verify"),
        ("ionice -c3 git commit -n -m x", "--no-verify"),
        ("sudo -iu root git commit -n -m x", "--no-verify"),
        ("env -S 'git commit -n -m x'", "env -S"),
        ("trap 'git commit -n -m x' EXIT", "--no-verify"),
        (
            "find . -maxdepth 0 -exec git commit -n -m x \\;",
            "--no-verify",
        ),
        ("script -qc 'git commit -n -m x' /dev/null", "--no-verify"),
        (
            "git rebase -x 'git commit -n --amend --no-edit' HEAD~1",
            "--no-verify",
        ),
        ("git submodule foreach 'git commit -n -m x'", "--no-verify"),
        ("git -c alias.ci='commit --no-verify' ci -m x", "alias"),
        ("git config alias.ci 'commit -n'", "alias"),
        ("git -c include.path=/tmp/h.cfg commit -m x", "includes"),
        ("git config include.path /tmp/h.cfg", "includes"),
        (
            "GIT_CONFIG_GLOBAL=/tmp/h.cfg git commit -m x",
            "GIT_CONFIG_GLOBAL",
        ),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=include.path GIT_CONFIG_VALUE_0=/tmp/h git commit",
            "includes",
        ),
        (
            "printf '[core]hooksPath=/x' >> ~/.gitconfig",
            "orchestrator's state",
        ),
        ("git commit-tree HEAD^{tree} -p HEAD -m x", "commit-tree"),
        // The orchestrator's refs and notes, another way.
        (
            "git fetch . +HEAD:refs/orchestrator/workflows/main",
            "writes a ref the orchestrator keeps",
        ),
        (
            "git fetch . feat/x:main",
            "writes a ref the orchestrator keeps",
        ),
        (
            "git notes --re orchestrator add -m x",
            "refs/notes/orchestrator",
        ),
        (
            "git -c core.notesRef=refs/notes/orchestrator notes add -m x",
            "notes ref",
        ),
        (
            "git config core.notesRef refs/notes/orchestrator",
            "notes ref",
        ),
        ("git push origin 'refs/heads/*'", "pushing the main branch"),
        (
            "git push origin '+refs/*:refs/*'",
            "pushing the main branch",
        ),
        // Writes into the hooks, the state or protected files, another way.
        (
            "git --work-tree=.git/hooks checkout HEAD -- commit-msg",
            "orchestrator's state",
        ),
        ("echo x >& .git/hooks/commit-msg", "orchestrator's state"),
        ("echo 'exit 0' >& run_tests.sh", "protected"),
        ("git mv run_tests.sh x.sh", "protected"),
        ("git rm -r ci", "protected"),
        ("git restore --source=HEAD~3 run_tests.sh", "protected"),
        ("rm -rf ci", "holds"),
        ("mv ci /tmp/old", "holds"),
        ("rm -rf ../repo", "holds"),
        ("xxd -r /tmp/hex run_tests.sh", "protected"),
        ("sort -o run_tests.sh x", "protected"),
        (
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: run_tests.sh\n*** End Patch\nEOF",
            "protected",
        ),
        ("sh < run_tests.sh", "preflight gate's command"),
        ("echo 'git commit -n -m x' | env sh", "--no-verify"),
        (
            "echo 'git commit -n -m x' | sudo bash --norc",
            "--no-verify",
        ),
        ("echo 'git commit -n -m x' | bash /dev/stdin", "--no-verify"),
        ("echo 'git commit -n -m x' | bash -s foo", "--no-verify"),
        (
            "echo 'git commit -n -m x' | source /dev/stdin",
            "--no-verify",
        ),
        ("echo 'git commit -n -m x' | xargs -0 sh -c", "--no-verify"),
        ("echo 'not a command (' ; bash scripts/setup.sh", ""),
        ("cat ./run_tests.sh | bash -s", "preflight gate's command"),
        ("cat run_tests.sh | wc -l", ""),
        (
            "cat <<EOF > notes.md\n$(git commit -n -m x)\nEOF",
            "--no-verify",
        ),
        ("echo '{}' > .claude/settings.json", "agent's settings"),
        ("rm ~/.claude/settings.json", "agent's settings"),
        ("sed -i s/x/y/ .codex/hooks.json", "agent's settings"),
        ("cat .claude/settings.json .mcp.json", ""),
        // Ordinary work that must stay allowed (a second review's false denials).
        (
            "git commit -m \"$(cat <<'EOF'\nfix: don't crash (\"x\")\nEOF\n)\"",
            "",
        ),
        (
            "find . -path ./.git -prune -o -name '*.rs' -exec grep -l foo {} +",
            "",
        ),
        ("find . -name .orchestrate.toml -exec cat {} \\;", ""),
        ("find . -type f -newer .git/config", ""),
        ("find . -name '*.pyc' -delete", ""),
        ("yq . .orchestrate.toml; taplo check .orchestrate.toml", ""),
        ("python3 scripts/check.py .orchestrate.toml", ""),
        ("bash -n run_tests.sh", ""),
        ("go test ./internal/foo/...; pytest src/", ""),
        ("./tools/lint.sh", ""),
        ("git rm -r --cached .", ""),
        ("rm -f .git/index.lock; rm -rf .git/rebase-merge", ""),
        ("echo x >> .git/info/exclude", ""),
        ("git config --local core.hooksPath", ""),
        ("cp ~/.gitconfig /tmp/bak", ""),
        (
            "git config user.name x; git config --global core.editor vim",
            "",
        ),
        ("cd sub && rm -rf build", ""),
        ("git checkout -b feat/y && git commit -m x", ""),
        // A second review's bypasses.
        (
            "x=\"$(cat <<'EOF'\n)\nEOF\ngit commit -n -m x\n)\"",
            "--no-verify",
        ),
        ("cd /nonexistent; echo 'exit 0' > run_tests.sh", "protected"),
        ("(cd sub); rm -f run_tests.sh", "protected"),
        ("cd $PWD && rm run_tests.sh", "protected"),
        ("cd -P sub && echo x > ../run_tests.sh", "protected"),
        ("builtin cd sub && echo x > ../run_tests.sh", "protected"),
        (
            "git checkout -q main && git commit --allow-empty -m x",
            "main branch",
        ),
        ("git switch --quiet main && git merge feat/x", "main branch"),
        ("git checkout - && git commit -m x", "main branch"),
        (
            "git log -1 --format='tformat:exit 0' --output=.git/hooks/commit-msg",
            "orchestrator's state",
        ),
        ("git diff --output=.orchestrate.toml", "protected"),
        (
            "git format-patch -o .git/hooks HEAD~1",
            "orchestrator's state",
        ),
        (
            "GIT_WORK_TREE=.git/hooks git checkout HEAD -- commit-msg",
            "orchestrator's state",
        ),
        ("git push origin --branches", "pushing the main branch"),
        (
            "git -c push.default=matching push origin",
            "which refs a push",
        ),
        (
            "git config remote.origin.push refs/heads/main:refs/heads/main",
            "which refs a push",
        ),
        ("find . -name commit-msg -delete", "holds"),
        ("find . -name 'run_test*' -delete", "holds"),
        ("find ci -name '*.sh' -delete", "protected"),
        ("cp -a /tmp/evil/. .", "holds"),
        ("rsync -a /tmp/evil/ ./", "holds"),
        ("cp -rT /tmp/evil .", "holds"),
        (
            "awk 'BEGIN{print \"exit 0\" > \".git/hooks/commit-msg\"}'",
            "orchestrator's state",
        ),
        ("xxd /tmp/x .git/hooks/commit-msg", "orchestrator's state"),
        // Humans only, another way.
        (
            "GIT_ORCHESTRATE_HUMAN+=1 git orchestrate approve",
            "for humans",
        ),
        ("git orchestrate hooks --json uninstall", "for humans"),
        (
            "git orchestrate hooks --workflow main uninstall",
            "for humans",
        ),
        ("git orchestrate init --agent claude --remove", "for humans"),
        (
            "git orchestrate hooks install --manager husky",
            "for humans",
        ),
        ("git orchestrate hooks install", ""),
        // The main branch, another way.
        ("git checkout main && git commit -m x", "main branch"),
        ("git switch main; git merge feat/x", "main branch"),
        ("git branch -Df main", "main branch"),
        ("git checkout -fB main", "resets the main branch"),
        ("git switch --force-create=main", "resets the main branch"),
        ("git worktree add -B main /tmp/w", "resets the main branch"),
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
        std::fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        link(".git/objects", "sub/o");
        let ctx = GuardContext {
            root: root.clone(),
            cwd: root.clone(),
            git_dir: root.join(".git"),
            hooks_dir: root.join(".git/hooks"),
            ..ctx()
        };
        for (path, why) in [
            ("g/hooks/commit-msg", "holds the hooks"),
            // `..` after a link: up from where it points.
            ("sub/o/../hooks/commit-msg", "holds the hooks"),
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
