//! `doctor`: checks what the guarantees rest on — the config, the gates, hooks that are
//! installed *and reach the binary*, the refspecs that share state, the identity, the
//! workflow state — and says for each what to do about it.

use crate::workflow::briefing::Notice;
use std::path::Path;
use std::time::Duration;

use super::{EngineError, Session};
use crate::exec::git::{MIN_VERSION as MIN_GIT_VERSION, parse_version};
use crate::exec::{self, ShellOptions};
use crate::hooks::install::{self, HookState};
use crate::hooks::{PROBE_ENV, PROBE_FILE_ENV};
use crate::store;
use crate::workflow::briefing::shell_quote;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Warning,
    Error,
}

/// One line of the doctor's report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    #[serde(rename = "check")]
    pub name: String,
    pub level: Level,
    pub message: String,
    /// What to run or change, when something is wrong.
    pub fix: Option<String>,
}

fn check(name: &str, level: Level, message: impl Into<String>, fix: Option<String>) -> Check {
    Check {
        name: name.to_string(),
        level,
        message: message.into(),
        fix,
    }
}

/// How long one hook may take to answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What `doctor` found (docs/agent-guide.md, "Other commands").
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DoctorReport {
    pub checks: Vec<Check>,
    pub errors: usize,
    pub warnings: usize,
}

pub fn doctor(session: &Session) -> Result<DoctorReport, EngineError> {
    let checks = checks(session)?;
    let count = |level| checks.iter().filter(|c| c.level == level).count();
    Ok(DoctorReport {
        errors: count(Level::Error),
        warnings: count(Level::Warning),
        checks,
    })
}

fn checks(session: &Session) -> Result<Vec<Check>, EngineError> {
    let git = &session.git;
    let version = git.version()?;
    let mut checks = vec![
        check(
            "repository",
            Level::Ok,
            format!("{} (git {version})", session.store.workdir().display()),
            None,
        ),
        git_version(&version),
    ];

    let state = match session.store.read() {
        Ok(Some(snapshot)) => {
            checks.push(check(
                "state",
                Level::Ok,
                format!(
                    "workflow {}: {} ({})",
                    session.store.workflow(),
                    snapshot.state.status(),
                    session.store.ref_name()
                ),
                None,
            ));
            Some(snapshot.state)
        }
        Ok(None) => {
            checks.push(check(
                "state",
                Level::Ok,
                format!("workflow {} not created yet", session.store.workflow()),
                Some("`git orchestrate init`, or the agent's first `get-task`, creates it".into()),
            ));
            None
        }
        Err(e) => {
            checks.push(check(
                "state",
                Level::Error,
                e.to_string(),
                Some(format!(
                    "inspect it with `git log {}`; a bad last transition can be dropped with `git update-ref {} <an earlier commit>`",
                    session.store.ref_name(),
                    session.store.ref_name()
                )),
            ));
            None
        }
    };

    for lock in session.store.lock_sightings() {
        // Older than any writer holds one: a crash's. Younger: maybe a command at work.
        let level = if lock.age.as_secs() >= 2 {
            Level::Error
        } else {
            Level::Warning
        };
        checks.push(check(
            "lock",
            level,
            format!(
                "{} is locked by {} (left {}s ago): every write to it fails until it is gone",
                lock.reference,
                lock.path.display(),
                lock.age.as_secs()
            ),
            Some(format!(
                "if no git or git-orchestrate process is running, delete it: rm {}",
                crate::workflow::briefing::shell_quote(&lock.path.display().to_string())
            )),
        ));
    }

    match session.load_config(state.as_ref()) {
        Ok(loaded) => {
            checks.push(check(
                "config",
                Level::Ok,
                format!("read from {}", loaded.origin),
                None,
            ));
            // Missing gates get a check of their own, below.
            for warning in loaded
                .warnings
                .iter()
                .filter(|w| !matches!(w, Notice::NoPreflightGates { .. }))
            {
                checks.push(check("config", Level::Warning, warning.to_string(), None));
            }
            let gates = loaded.config.gate_names();
            checks.push(if gates.is_empty() {
                check(
                    "preflight",
                    Level::Warning,
                    "no gates configured: a PASS is verified by the agent's own test command alone",
                    Some("add a [[preflight]] gate to .orchestrate.toml, e.g. name = \"tests\", command = \"cargo test\"".into()),
                )
            } else {
                check("preflight", Level::Ok, gates.join(", "), None)
            });
            checks.push(review_command(
                loaded.config.review.policy().command.as_deref(),
                session.store.workdir(),
            ));
            checks.extend(master_plan(
                session,
                state.as_ref(),
                &loaded.config.master_plan,
            ));
        }
        Err(e) => checks.push(check(
            "config",
            Level::Error,
            e.to_string(),
            Some("fix .orchestrate.toml (docs/config.md describes every key)".into()),
        )),
    }

    let mut unsafe_settings = super::hermetic::problems(session)?;
    unsafe_settings.extend(super::hermetic::above_scratch(session));
    if unsafe_settings.is_empty() {
        checks.push(check(
            "verification",
            Level::Ok,
            "nothing makes git store or show other than what the gates see",
            None,
        ));
    }
    for problem in unsafe_settings {
        checks.push(check(
            "verification",
            Level::Error,
            format!("{problem}: nothing is verified while it is set"),
            Some(problem.fix),
        ));
    }
    hooks(session, &mut checks)?;
    agents(session, &mut checks);
    refspecs(session, &mut checks)?;
    history(session, &mut checks)?;

    checks.push(match session.store.identity() {
        Some((name, email)) => check("identity", Level::Ok, format!("{name} <{email}>"), None),
        None => check(
            "identity",
            Level::Warning,
            format!(
                "no user.name/user.email: workflow commits are made as {} <{}>",
                crate::FALLBACK_NAME,
                crate::FALLBACK_EMAIL
            ),
            Some(
                "git config user.name \"Your Name\" && git config user.email you@example.com"
                    .into(),
            ),
        ),
    });
    Ok(checks)
}

/// Per client that `init --agent` wired here: will it load our hooks and MCP server in
/// this folder? A client that drops them runs its agent unguarded.
fn agents(session: &Session, checks: &mut Vec<Check>) {
    use crate::agent::hook::Client;
    use crate::agent::trust::{self, Trust};
    let root = session.store.workdir();
    // A settings file of a client's own: small, and never a FIFO or a device.
    let read = |path: &Path| crate::agent::guard::read_capped(path, 1 << 20).ok();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    for client in [Client::Claude, Client::Codex, Client::Gemini] {
        let wired = crate::agent::setup::files(client).iter().any(|file| {
            read(&root.join(file.path))
                .is_some_and(|text| crate::agent::setup::has_ours(file.kind, &text))
        });
        if !wired {
            continue;
        }
        checks.push(match client {
            Client::Claude => check(
                "agent",
                Level::Ok,
                "claude: `claude -p` (and `git orchestrate run --agent claude`) loads .claude/settings.json and \
                 .mcp.json here; an interactive session asks once to trust the folder and to approve the server",
                None,
            ),
            Client::Codex => {
                let config = std::env::var_os("CODEX_HOME")
                    .map(std::path::PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".codex")))
                    .map(|dir| dir.join("config.toml"));
                let text = config.as_deref().and_then(read);
                let shown = config
                    .as_ref()
                    .map(|c| c.display().to_string())
                    .unwrap_or_else(|| "$CODEX_HOME/config.toml".into());
                match trust::codex(text.as_deref(), root) {
                    Trust::Trusted => check(
                        "agent",
                        Level::Ok,
                        format!("codex: the project is trusted ({shown}), so Codex loads .codex/ here"),
                        None,
                    ),
                    Trust::Untrusted => check(
                        "agent",
                        Level::Error,
                        format!(
                            "codex: {shown} marks this project untrusted, so Codex drops .codex/ here (no hooks, \
                             no MCP server), even under `git orchestrate run --agent codex`, which stops at its first turn"
                        ),
                        Some(format!(
                            "set trust_level = \"trusted\" under [projects.{}] in {shown}",
                            toml::Value::String(root.display().to_string())
                        )),
                    ),
                    Trust::Undecided => check(
                        "agent",
                        Level::Warning,
                        "codex: the project is not trusted yet, so a `codex` you start here drops .codex/ (no \
                         hooks, no MCP server); `git orchestrate run --agent codex` trusts it itself",
                        Some(
                            "say yes once in an interactive `codex` session here, or run `codex exec --trust \
                             --dangerously-bypass-hook-trust`"
                                .into(),
                        ),
                    ),
                }
            }
            Client::Gemini => {
                let by_env = std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true");
                let folders = home.as_ref().map(|h| h.join(".gemini/trustedFolders.json"));
                let text = folders.as_deref().and_then(read);
                match (by_env, trust::gemini(text.as_deref(), root)) {
                    (true, _) | (_, Trust::Trusted) => check(
                        "agent",
                        Level::Ok,
                        "gemini: the folder is trusted, so Gemini CLI loads .gemini/settings.json here",
                        None,
                    ),
                    (false, trust) => check(
                        "agent",
                        Level::Warning,
                        format!(
                            "gemini: the folder is {} in ~/.gemini/trustedFolders.json, so a `gemini` you start \
                             here drops .gemini/settings.json (no hooks, no MCP server); `git orchestrate run \
                             --agent gemini` trusts it for its turns (GEMINI_CLI_TRUST_WORKSPACE=true)",
                            if trust == Trust::Untrusted { "marked untrusted" } else { "not trusted" }
                        ),
                        Some(
                            "trust the folder when Gemini CLI asks (or `/permissions`), or set \
                             GEMINI_CLI_TRUST_WORKSPACE=true"
                                .into(),
                        ),
                    ),
                }
            }
        });
    }
}

/// The master plan every PR is planned from, on the main branch: a plan naming one that is
/// not there is refused.
fn master_plan(
    session: &Session,
    state: Option<&crate::workflow::State>,
    path: &str,
) -> Option<Check> {
    let main = session.main_branch(state).ok()?;
    Some(match session.master_plan_blob(&main, path).ok()? {
        Some(_) => check("master plan", Level::Ok, format!("{path} on {main}"), None),
        None => check(
            "master plan",
            Level::Error,
            format!(
                "{path} is not on the main branch {main}: agents are told to plan from it, and a plan \
                 naming it is refused"
            ),
            Some(format!(
                "create {path} with a `## PR 1: <title>` heading for each pull request, and commit it on {main}"
            )),
        ),
    })
}

/// The git on PATH is one git-orchestrate is tested with: an older one fails in the middle
/// of a command (`sync`, say) on an option it does not know.
fn git_version(version: &str) -> Check {
    let (major, minor) = MIN_GIT_VERSION;
    match parse_version(version) {
        Some(found) if found >= MIN_GIT_VERSION => check(
            "git",
            Level::Ok,
            format!("{version} ({major}.{minor} or newer is needed)"),
            None,
        ),
        Some(_) => check(
            "git",
            Level::Error,
            format!(
                "git {version} is older than {major}.{minor}, the oldest git-orchestrate works with"
            ),
            Some(format!(
                "install git {major}.{minor} or newer and put it first on PATH"
            )),
        ),
        None => check(
            "git",
            Level::Warning,
            format!(
                "cannot tell which git this is (`git version` said {version:?}); {major}.{minor} or newer is needed"
            ),
            None,
        ),
    }
}

/// The `[review] command`'s program and script are there: a missing one fails every review
/// round, which the agent cannot fix. Only what the command names plainly is checked.
fn review_command(command: Option<&str>, root: &Path) -> Check {
    let Some(command) = command else {
        return check(
            "review",
            Level::Ok,
            "no [review] command: no automated review",
            None,
        );
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let problems: Vec<String> = files_named(command)
        .iter()
        .filter_map(|needed| missing(needed, root, &path))
        .collect();
    if problems.is_empty() {
        return check("review", Level::Ok, format!("`{command}`"), None);
    }
    check(
        "review",
        Level::Error,
        format!(
            "[review] command `{command}`: {}, so every review would fail",
            problems.join("; ")
        ),
        Some("create it, or correct `command` under [review] in .orchestrate.toml".into()),
    )
}

/// Every workflow's history, replayed (docs/integrity.md).
fn history(session: &Session, checks: &mut Vec<Check>) -> Result<(), EngineError> {
    let report = super::audit::audit(session, true)?;
    if report.clean() {
        checks.push(check(
            "history",
            Level::Ok,
            format!(
                "{} transition{} replayed, none forged{}",
                report.replayed,
                if report.replayed == 1 { "" } else { "s" },
                if report.unrecorded > 0 {
                    format!(
                        " ({} written before events were recorded: read, not replayed)",
                        report.unrecorded
                    )
                } else {
                    String::new()
                }
            ),
            None,
        ));
    }
    for p in &report.problems {
        checks.push(check(
            "history",
            Level::Error,
            p.to_string(),
            Some("git orchestrate audit --all".into()),
        ));
    }
    Ok(())
}

/// A file a command runs: its program, or a script an interpreter reads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Needed {
    /// Run by the shell: a path (relative to the repository root) when it has a `/`,
    /// else looked up on PATH.
    Program(String),
    /// Read by an interpreter: a path relative to the repository root (a shell or `.`
    /// also looks on PATH for a bare name).
    Script(String),
}

/// Shells' own commands: nothing on disk to find.
const SHELL_BUILTINS: [&str; 44] = [
    ":", "[", "alias", "bg", "break", "case", "cd", "continue", "do", "done", "echo", "elif",
    "else", "esac", "eval", "exit", "export", "false", "fg", "fi", "for", "getopts", "hash", "if",
    "jobs", "kill", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "then",
    "times", "trap", "true", "type", "ulimit", "umask", "unset", "until", "while",
];

/// Interpreters whose first argument, when not an option, is a script file.
const INTERPRETERS: [&str; 12] = [
    "sh", "bash", "dash", "zsh", "ksh", "ash", "python", "python3", "node", "ruby", "perl", "php",
];

/// The files in the repository that `command` runs: a program named by a relative path, or
/// the script an interpreter reads. What the review command runs is protected
/// (docs/integrity.md).
pub(crate) fn repository_files(command: &str) -> Vec<String> {
    files_named(command)
        .into_iter()
        .filter_map(|needed| match needed {
            Needed::Program(p) if p.contains('/') => Some(p),
            Needed::Script(s) => Some(s),
            Needed::Program(_) => None,
        })
        .filter(|p| !p.starts_with('/') && !p.starts_with('~') && !p.contains('$'))
        .map(|p| p.trim_start_matches("./").to_string())
        .collect()
}

/// The files the first simple command of `command` needs, as far as they can be read off it
/// without running a shell: words with expansions, and anything after an option, are not
/// guessed at.
fn files_named(command: &str) -> Vec<Needed> {
    let words = first_simple_command(command);
    let mut words = words
        .iter()
        .map(Option::as_deref)
        .skip_while(|w| w.is_some_and(is_assignment))
        .peekable();
    let mut needed = Vec::new();
    // `exec` and `command` run the next word; `env` does too, after its settings.
    while let Some(Some("exec" | "command" | "env")) = words.peek() {
        let wrapper = words.next().flatten();
        if wrapper == Some("env") {
            needed.push(Needed::Program("env".to_string()));
            while words.peek().is_some_and(|w| w.is_some_and(is_assignment)) {
                words.next();
            }
        }
        if words
            .peek()
            .is_some_and(|w| w.is_some_and(|w| w.starts_with('-')))
        {
            return needed;
        }
    }
    let Some(Some(program)) = words.next() else {
        return needed;
    };
    if program == "." || program == "source" {
        if let Some(Some(script)) = words.next() {
            needed.push(Needed::Script(script.to_string()));
        }
        return needed;
    }
    if SHELL_BUILTINS.contains(&program) {
        return needed;
    }
    needed.push(Needed::Program(program.to_string()));
    let base = program.rsplit('/').next().unwrap_or(program);
    if INTERPRETERS.contains(&base)
        && let Some(Some(script)) = words.next()
        && !script.starts_with('-')
    {
        needed.push(Needed::Script(script.to_string()));
    }
    needed
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The words of `command` up to its first operator (`;`, `&`, `|`, a redirection, a
/// parenthesis, a newline) or comment, with quotes removed; `None` for a word the shell
/// would expand (`$`, a backquote, a glob, a leading `~`), which cannot be known here.
fn first_simple_command(command: &str) -> Vec<Option<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut started, mut unknown) = (false, false);
    let mut chars = command.chars();
    let mut finish = |word: &mut String, started: &mut bool, unknown: &mut bool| {
        if *started {
            words.push((!*unknown).then(|| std::mem::take(word)));
        }
        word.clear();
        (*started, *unknown) = (false, false);
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut started, &mut unknown),
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' => break,
            '#' if !started => break,
            '\\' => {
                started = true;
                match chars.next() {
                    Some(next) => word.push(next),
                    None => break,
                }
            }
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                started = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '$' | '`' => unknown = true,
                        // Inside double quotes a backslash escapes only these.
                        '\\' => match chars.next() {
                            Some(next @ ('$' | '`' | '"' | '\\' | '\n')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => {}
                        },
                        _ => word.push(q),
                    }
                }
            }
            '$' | '`' | '*' | '?' | '[' => {
                started = true;
                unknown = true;
            }
            '~' if !started => {
                started = true;
                unknown = true;
            }
            _ => {
                started = true;
                word.push(c);
            }
        }
    }
    finish(&mut word, &mut started, &mut unknown);
    words
}

/// Why `needed` is not there, or `None` when it is.
fn missing(needed: &Needed, root: &Path, path: &std::ffi::OsStr) -> Option<String> {
    let on_path = |name: &str| {
        std::env::split_paths(path)
            .any(|dir| !dir.as_os_str().is_empty() && is_executable(&dir.join(name)))
    };
    match needed {
        Needed::Program(name) if !name.contains('/') => {
            (!on_path(name)).then(|| format!("`{name}` is not on PATH"))
        }
        Needed::Program(name) => {
            let file = root.join(name);
            if !file.is_file() {
                Some(format!("{} does not exist", file.display()))
            } else if !is_executable(&file) {
                Some(format!(
                    "{} is not executable (chmod +x it, or run it with its interpreter)",
                    file.display()
                ))
            } else {
                None
            }
        }
        Needed::Script(name) => {
            let file = root.join(name);
            let found = file.is_file()
                || (!name.contains('/')
                    && std::env::split_paths(path).any(|dir| dir.join(name).is_file()));
            (!found).then(|| format!("{} does not exist", file.display()))
        }
    }
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Installed, current, executable, and proven to reach this binary by running each hook
/// with the probe variable set (the hook then does nothing else).
fn hooks(session: &Session, checks: &mut Vec<Check>) -> Result<(), EngineError> {
    let report = match install::status(&session.git) {
        Ok(report) => report,
        Err(e) => {
            checks.push(check("hooks", Level::Error, e.to_string(), None));
            return Ok(());
        }
    };
    let dir = report.dir.display().to_string();
    // Different each run, so an old answer cannot pass for this one.
    let nonce = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    // Through a hook manager: our entries in its configuration, proven by running its shims.
    if let Ok(Some((manager, found))) = crate::hooks::managed::detect(&session.git) {
        let configured = crate::hooks::managed::configured(&session.git, manager).unwrap_or(false);
        for name in crate::hooks::NAMES {
            let check_name = format!("hook {name}");
            if !configured {
                checks.push(check(
                    &check_name,
                    Level::Error,
                    format!("{} manages the hooks here ({found}), and our hooks are not in its configuration", manager.name()),
                    Some("git orchestrate hooks install".into()),
                ));
                continue;
            }
            let shim = match crate::hooks::managed::shim(&session.git, manager, name) {
                Ok(path) => path,
                Err(e) => {
                    checks.push(check(&check_name, Level::Error, e.to_string(), None));
                    continue;
                }
            };
            if !shim.exists() {
                checks.push(check(
                    &check_name,
                    Level::Error,
                    format!("our hook is in {}'s configuration, but {} is not there: git does not run it", manager.name(), shim.display()),
                    Some(match manager {
                        crate::hooks::install::Manager::PreCommit => "pre-commit install".to_string(),
                        crate::hooks::install::Manager::Lefthook => "lefthook install".to_string(),
                        crate::hooks::install::Manager::Husky => "npx husky".to_string(),
                    }),
                ));
                continue;
            }
            checks.push(match probe(session, name, &shim, &nonce)? {
                Ok(runs) if runs > 1 => runs_twice(name, runs, &shim),
                Ok(_) => check(
                    &check_name,
                    Level::Ok,
                    format!("installed through {} and firing ({})", manager.name(), shim.display()),
                    None,
                ),
                Err(said) => check(
                    &check_name,
                    Level::Error,
                    format!("in {}'s configuration, but running {} does not reach git-orchestrate: {said}", manager.name(), shim.display()),
                    Some(match manager {
                        // pre-commit runs nothing while its configuration has unstaged changes.
                        crate::hooks::install::Manager::PreCommit => "commit .pre-commit-config.yaml (pre-commit refuses to run while it has unstaged changes); else put git-orchestrate on the PATH git runs hooks with (cargo install puts it in ~/.cargo/bin)".to_string(),
                        _ => "put git-orchestrate on the PATH git runs hooks with (cargo install puts it in ~/.cargo/bin), and check that the manager's own install step ran".to_string(),
                    }),
                ),
            });
        }
        return Ok(());
    }
    for h in &report.hooks {
        let name = format!("hook {}", h.name);
        match &h.state {
            HookState::Missing | HookState::Foreign => checks.push(check(
                &name,
                Level::Error,
                format!("not installed in {dir}: checkpoint commits made with plain `git commit` are not verified"),
                Some("git orchestrate hooks install".into()),
            )),
            HookState::Managed(manager) => checks.push(check(
                &name,
                Level::Warning,
                format!("{} manages {dir}; our hook is not in it unless you added it", manager.name()),
                Some(manager.instructions()),
            )),
            HookState::Installed { .. } if !h.executable => checks.push(check(
                &name,
                Level::Error,
                format!("{} is not executable, so git does not run it", h.path.display()),
                Some(format!("chmod +x {}", shell_quote(&h.path.display().to_string()))),
            )),
            HookState::Installed { current, .. } => {
                let probe = probe(session, h.name, &h.path, &nonce)?;
                checks.push(match probe {
                    Ok(runs) if runs > 1 => runs_twice(h.name, runs, &h.path),
                    Ok(_) if *current => check(&name, Level::Ok, format!("installed and firing ({})", h.path.display()), None),
                    Ok(_) => check(
                        &name,
                        Level::Warning,
                        "installed and firing, but an older version",
                        Some("git orchestrate hooks install".into()),
                    ),
                    Err(said) => check(
                        &name,
                        Level::Error,
                        format!("installed, but running it does not reach git-orchestrate: {said}"),
                        Some("put git-orchestrate on the PATH git runs hooks with (cargo install puts it in ~/.cargo/bin)".into()),
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A hook of ours that reached git-orchestrate `runs` times for one commit.
fn runs_twice(name: &str, runs: usize, path: &std::path::Path) -> Check {
    // pre-commit runs the hook it kept aside before its own.
    let aside: Vec<String> = [path.with_file_name(format!("{name}.legacy"))]
        .into_iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    check(
        &format!("hook {name}"),
        Level::Error,
        format!(
            "git-orchestrate's {name} runs {runs} times for each commit when git runs {}{}: every gate \
             runs {runs} times",
            path.display(),
            if aside.is_empty() {
                String::new()
            } else {
                format!(" (it also runs {}, a copy a hook manager kept aside)", aside.join(", "))
            }
        ),
        Some(
            "git orchestrate hooks install (through the hook manager, it takes our hooks out of the \
             copies kept aside)"
                .into(),
        ),
    )
}

/// Runs the hook file as git would, with the probe set: how many times it reached
/// git-orchestrate (more than once: every gate runs that many times), or, as `Err`, what
/// came back instead.
fn probe(
    session: &Session,
    name: &str,
    path: &std::path::Path,
    nonce: &str,
) -> Result<Result<usize, String>, EngineError> {
    let dir = tempfile::tempdir().map_err(super::io_error("create a probe directory"))?;
    let message = dir.path().join("COMMIT_EDITMSG");
    std::fs::write(&message, "checkpoint: git orchestrate doctor probe\n")
        .map_err(super::io_error("write the probe message"))?;
    let args = match name {
        "commit-msg" => shell_quote(&message.display().to_string()),
        "pre-push" => "origin origin".to_string(),
        _ => String::new(),
    };
    let answer = dir.path().join("probe-answer");
    let command = format!(
        "{PROBE_ENV}={} {PROBE_FILE_ENV}={} {} {args}",
        shell_quote(nonce),
        shell_quote(&answer.display().to_string()),
        shell_quote(&path.display().to_string())
    );
    // A pushed ref, for a manager that runs no pre-push hook when nothing is pushed.
    let head = session
        .store
        .head_commit()?
        .map(|c| c.commit)
        .unwrap_or_else(|| "0".repeat(40));
    let pushed = format!(
        "refs/heads/git-orchestrate-probe {head} refs/heads/git-orchestrate-probe {}\n",
        "0".repeat(40)
    );
    let run = exec::run_shell_with(
        &command,
        session.store.workdir(),
        PROBE_TIMEOUT,
        session.command_env()?,
        ShellOptions {
            stdin: Some(if name == "pre-push" {
                pushed.as_bytes()
            } else {
                b""
            }),
            split_stderr: true,
        },
    )
    .map_err(super::io_error(format!("run {}", path.display())))?;
    let stdout = String::from_utf8_lossy(&run.output);
    let marker = format!("git-orchestrate hook probe {nonce}");
    // The file has one line for each run; stdout only when the file has none (a manager
    // may show a hook's output more than once).
    let in_file =
        std::fs::read_to_string(&answer).map_or(0, |a| a.lines().filter(|l| *l == marker).count());
    let runs = if in_file > 0 {
        in_file
    } else {
        usize::from(stdout.lines().any(|l| l.trim() == marker))
    };
    if run.exit.success() && runs > 0 {
        return Ok(Ok(runs));
    }
    let said = String::from_utf8_lossy(&run.stderr).trim().to_string();
    Ok(Err(format!(
        "{}{}",
        run.exit,
        if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        }
    )))
}

/// The fetch refspecs that bring workflow state and notes along (docs/refs.md, "Sharing through a remote").
fn refspecs(session: &Session, checks: &mut Vec<Check>) -> Result<(), EngineError> {
    let remotes = session.git.remotes()?;
    if remotes.is_empty() {
        checks.push(check(
            "refspecs",
            Level::Ok,
            "no remote: the workflow state stays in this clone",
            None,
        ));
        return Ok(());
    }
    for remote in remotes {
        let name = format!("refspecs {remote}");
        let fetch = session.git.config_all(&format!("remote.{remote}.fetch"))?;
        // A fetch straight onto local state silently replaces (with --prune: deletes) what
        // this clone has not pushed yet.
        let destructive: Vec<&String> = fetch
            .iter()
            .filter(|spec| store::writes_local_state(spec))
            .collect();
        if !destructive.is_empty() {
            checks.push(check(
                &name,
                Level::Error,
                format!(
                    "{} fetches straight onto this clone's workflow state: a fetch can overwrite or delete state \
                     not pushed yet",
                    destructive
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(
                    destructive
                        .iter()
                        .map(|spec| {
                            format!(
                                "git config --fixed-value --unset remote.{remote}.fetch {}",
                                shell_quote(spec)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" && "),
                ),
            ));
            continue;
        }
        let wanted = store::fetch_refspecs(&remote);
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|spec| !fetch.iter().any(|f| f == *spec))
            .collect();
        let exact = store::exact_notes_refspec(&remote);
        if fetch.contains(&exact) {
            checks.push(check(
                &name,
                Level::Warning,
                format!(
                    "{exact} makes `git fetch {remote}` fail while {remote} has no notes yet (\"couldn't find remote ref\")"
                ),
                Some(format!(
                    "git config --fixed-value --unset remote.{remote}.fetch {}; `git orchestrate sync {remote}` adds the pattern that replaces it",
                    shell_quote(&exact)
                )),
            ));
        }
        checks.push(if missing.is_empty() {
            check(
                &name,
                Level::Ok,
                format!(
                    "workflow state and notes are fetched into refs/orchestrator/remotes/{remote}/"
                ),
                None,
            )
        } else {
            check(
                &name,
                Level::Warning,
                format!("`git fetch {remote}` does not bring the workflow state and notes along"),
                Some(
                    missing
                        .iter()
                        .map(|spec| {
                            format!(
                                "git config --add remote.{remote}.fetch {}",
                                shell_quote(spec)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" && "),
                ),
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn program(name: &str) -> Needed {
        Needed::Program(name.to_string())
    }

    fn script(name: &str) -> Needed {
        Needed::Script(name.to_string())
    }

    #[test]
    fn a_review_command_names_its_program_and_script() {
        let cases: [(&str, Vec<Needed>); 16] = [
            ("./tools/review.sh", vec![program("./tools/review.sh")]),
            ("reviewer --strict", vec![program("reviewer")]),
            (
                "sh tools/review.sh",
                vec![program("sh"), script("tools/review.sh")],
            ),
            (
                "python3 'tools/my review.py' --dimension x",
                vec![program("python3"), script("tools/my review.py")],
            ),
            (
                "/usr/bin/python3 -m reviewer",
                vec![program("/usr/bin/python3")],
            ),
            ("sh -c 'anything at all'", vec![program("sh")]),
            ("MODEL=fast exec ./review", vec![program("./review")]),
            ("env -i PATH=/bin node review.js", vec![program("env")]),
            (
                "env MODEL=x node review.js",
                vec![program("env"), program("node"), script("review.js")],
            ),
            (". ./review.sh", vec![script("./review.sh")]),
            (
                "tools/review.sh | tee review.log",
                vec![program("tools/review.sh")],
            ),
            ("cd tools && ./review.sh", vec![]),
            ("$REVIEWER", vec![]),
            ("\"$HOME/bin/review\" --x", vec![]),
            ("sh ~/review.sh", vec![program("sh")]),
            ("# nothing", vec![]),
        ];
        for (command, expected) in cases {
            assert_eq!(files_named(command), expected, "{command}");
        }
    }

    #[test]
    fn a_missing_or_unrunnable_review_program_is_an_error_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/review.sh"), "#!/bin/sh\n").unwrap();
        let bin = tempfile::tempdir().unwrap();
        let reviewer = bin.path().join("reviewer");
        std::fs::write(&reviewer, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&reviewer, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = bin.path().as_os_str();

        assert_eq!(missing(&script("tools/review.sh"), root, path), None);
        assert_eq!(missing(&program("reviewer"), root, path), None);
        assert_eq!(
            missing(&program("no-such-reviewer"), root, path),
            Some("`no-such-reviewer` is not on PATH".to_string())
        );
        assert_eq!(
            missing(&script("tools/gone.sh"), root, path),
            Some(format!(
                "{} does not exist",
                root.join("tools/gone.sh").display()
            ))
        );
        let not_executable = missing(&program("./tools/review.sh"), root, path).unwrap();
        assert!(
            not_executable.contains("is not executable"),
            "{not_executable}"
        );
    }

    #[test]
    fn only_a_git_older_than_the_minimum_is_an_error() {
        assert_eq!(git_version("2.39.5").level, Level::Ok);
        assert_eq!(git_version("2.47.3").level, Level::Ok);
        let old = git_version("2.38.1");
        assert_eq!(old.level, Level::Error);
        assert_eq!(
            old.message,
            "git 2.38.1 is older than 2.39, the oldest git-orchestrate works with"
        );
        assert_eq!(git_version("weird").level, Level::Warning);
    }
}
