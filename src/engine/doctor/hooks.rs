//! `doctor`'s hook checks: the git hooks installed, and each one probed to answer as ours.

use std::time::Duration;

use super::check::{Check, Level, check};
use crate::engine::{EngineError, Session, io_error};
use crate::exec::{self, ShellOptions};
use crate::hooks::install::{self, HookState};
use crate::hooks::{PROBE_ENV, PROBE_FILE_ENV};
use crate::workflow::briefing::shell_quote;

/// How long one hook may take to answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Installed, current, executable, and proven to reach this binary by running each hook
/// with the probe variable set (the hook then does nothing else).
pub(super) fn hooks(session: &Session, checks: &mut Vec<Check>) -> Result<(), EngineError> {
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
        return managed_hooks(session, manager, &found, &nonce, checks);
    }
    if report
        .hooks
        .iter()
        .any(|h| matches!(h.state, HookState::Installed { .. }))
    {
        checks.push(recorded_binary(session));
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

/// The binary the shims run when `git-orchestrate` is not on the PATH git runs hooks with
/// (an agent's login shell, a GUI): recorded by `hooks install`, and this one.
fn recorded_binary(session: &Session) -> Check {
    let name = "hooks binary";
    let fix = Some("git orchestrate hooks install".to_string());
    let this = std::env::current_exe().ok();
    match install::recorded_binary(&session.git) {
        None => check(
            name,
            Level::Warning,
            "no path of git-orchestrate recorded: where it is not on PATH (an agent's login shell, \
             say), the hooks refuse checkpoint commits and pushes of them",
            fix,
        ),
        Some(path) if !is_executable(&path) => check(
            name,
            Level::Error,
            format!(
                "the recorded {} is gone: where git-orchestrate is not on PATH, the hooks refuse \
                 checkpoint commits and pushes of them",
                path.display()
            ),
            fix,
        ),
        Some(path) if this.as_ref().is_some_and(|t| *t != path) => check(
            name,
            Level::Warning,
            format!(
                "where git-orchestrate is not on PATH the hooks run {}, not this one ({})",
                path.display(),
                this.as_ref()
                    .map(|t| t.display().to_string())
                    .unwrap_or_default()
            ),
            fix,
        ),
        Some(path) => check(
            name,
            Level::Ok,
            format!(
                "the hooks run {} where git-orchestrate is not on PATH",
                path.display()
            ),
            None,
        ),
    }
}

/// How long the user's login shell may take to say where it finds git-orchestrate.
const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(10);

/// Does the user's login shell (`$SHELL -l`) find `git-orchestrate`? An agent's shell tool
/// may start one, with the PATH its profile sets rather than ours (Codex's does, and a
/// system /etc/profile may set PATH whole: docs/setup.md, "The login shell's PATH"); there
/// every `git orchestrate` command the briefings name fails. `None` when `SHELL` is not set.
pub(super) fn login_shell(session: &Session) -> Result<Option<Check>, EngineError> {
    let name = "login shell";
    let Some(shell) = std::env::var_os("SHELL").filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let shell = std::path::PathBuf::from(shell);
    let shown = shell.display().to_string();
    let command = format!("{} -lc 'command -v git-orchestrate'", shell_quote(&shown));
    let run = exec::run_shell_with(
        &command,
        session.store.workdir(),
        LOGIN_SHELL_TIMEOUT,
        session.command_env()?,
        ShellOptions {
            stdin: None,
            split_stderr: true,
            ..ShellOptions::default()
        },
    )
    .map_err(io_error(format!("run {shown} -l")))?;
    // A profile may print; the answer is the last line.
    let stdout = String::from_utf8_lossy(&run.output);
    let found = stdout
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string);
    let this = std::env::current_exe().ok();
    // The program an agent's shell should find: the one the hooks run, else this one.
    let program = install::recorded_binary(&session.git).or_else(|| this.clone());
    let profile = profile_line(&shell, program.as_deref());
    Ok(Some(match (run.exit.success(), found) {
        (true, Some(found))
            if this
                .as_ref()
                .is_some_and(|t| std::path::Path::new(&found) != t.as_path())
                && program
                    .as_ref()
                    .is_some_and(|p| std::path::Path::new(&found) != p.as_path()) =>
        {
            check(
                name,
                Level::Warning,
                format!(
                    "`{shown} -l` finds git-orchestrate at {found}, not this one ({}): an agent \
                     whose shell starts as a login shell runs that one",
                    this.as_ref()
                        .map(|t| t.display().to_string())
                        .unwrap_or_default()
                ),
                profile,
            )
        }
        (true, Some(found)) => check(
            name,
            Level::Ok,
            format!("`{shown} -l` finds git-orchestrate at {found}"),
            None,
        ),
        (_, _)
            if matches!(
                run.exit,
                crate::workflow::state::ExitRecord::TimedOut { .. }
            ) =>
        {
            check(
                name,
                Level::Warning,
                format!(
                    "`{shown} -lc 'command -v git-orchestrate'` did not answer in {} s",
                    LOGIN_SHELL_TIMEOUT.as_secs()
                ),
                None,
            )
        }
        (_, _) => check(
            name,
            Level::Warning,
            format!(
                "`{shown} -l` does not find git-orchestrate (its profile sets a PATH without it): an \
                 agent whose shell starts as a login shell (Codex's does) cannot run `git \
                 orchestrate`{}",
                match &program {
                    Some(p) => format!(
                        "; the git hooks run {} (recorded in .git/{})",
                        p.display(),
                        crate::hooks::BINARY_RECORD
                    ),
                    None => String::new(),
                }
            ),
            profile,
        ),
    }))
}

/// The line that puts `program`'s directory on the login shell's PATH, and the profile it
/// goes in.
fn profile_line(shell: &std::path::Path, program: Option<&std::path::Path>) -> Option<String> {
    let dir = program?.parent()?.display().to_string();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let kind = shell
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(match kind.as_str() {
        "fish" => format!(
            "add `fish_add_path {}` to ~/.config/fish/config.fish",
            shell_quote(&dir)
        ),
        "zsh" => format!(
            "add `export PATH={}:\"$PATH\"` to ~/.zprofile",
            shell_quote(&dir)
        ),
        // bash reads the first of these it finds, and then not ~/.profile.
        "bash" => {
            let file = [".bash_profile", ".bash_login"]
                .into_iter()
                .find(|f| home.as_ref().is_some_and(|h| h.join(f).exists()))
                .unwrap_or(".profile");
            format!(
                "add `export PATH={}:\"$PATH\"` to ~/{file}",
                shell_quote(&dir)
            )
        }
        _ => format!(
            "add `export PATH={}:\"$PATH\"` to ~/.profile",
            shell_quote(&dir)
        ),
    })
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Our hooks through a hook manager: our entries in its configuration, proven by running
/// its shims.
fn managed_hooks(
    session: &Session,
    manager: install::Manager,
    found: &str,
    nonce: &str,
    checks: &mut Vec<Check>,
) -> Result<(), EngineError> {
    let configured = crate::hooks::managed::configured(&session.git, manager).unwrap_or(false);
    // The manager's entries, like the shims, run the recorded binary off PATH.
    if configured {
        checks.push(recorded_binary(session));
    }
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
                format!(
                    "our hook is in {}'s configuration, but {} is not there: git does not run it",
                    manager.name(),
                    shim.display()
                ),
                Some(match manager {
                    crate::hooks::install::Manager::PreCommit => "pre-commit install".to_string(),
                    crate::hooks::install::Manager::Lefthook => "lefthook install".to_string(),
                    crate::hooks::install::Manager::Husky => "npx husky".to_string(),
                }),
            ));
            continue;
        }
        checks.push(match probe(session, name, &shim, nonce)? {
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
    let dir = tempfile::tempdir().map_err(io_error("create a probe directory"))?;
    let message = dir.path().join("COMMIT_EDITMSG");
    std::fs::write(&message, "checkpoint: git orchestrate doctor probe\n")
        .map_err(io_error("write the probe message"))?;
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
            ..ShellOptions::default()
        },
    )
    .map_err(io_error(format!("run {}", path.display())))?;
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
