//! `doctor`: checks what the guarantees rest on — the config, the gates, hooks that are
//! installed *and reach the binary*, the refspecs that share state, the identity, the
//! workflow state — and says for each what to do about it.

use std::time::Duration;

use super::{EngineError, Session};
use crate::exec::{self, ShellOptions};
use crate::hooks::PROBE_ENV;
use crate::hooks::install::{self, HookState};
use crate::store;
use crate::workflow::briefing::shell_quote;

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warning,
    Error,
}

/// One line of the doctor's report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
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

pub fn doctor(session: &Session) -> Result<Vec<Check>, EngineError> {
    let git = &session.git;
    let mut checks = vec![check(
        "repository",
        Level::Ok,
        format!(
            "{} (git {})",
            session.store.workdir().display(),
            git.version()?
        ),
        None,
    )];

    let state = match session.store.read() {
        Ok(Some(snapshot)) => {
            checks.push(check(
                "state",
                Level::Ok,
                format!(
                    "workflow {}: {} ({})",
                    session.store.workflow(),
                    snapshot.state.status,
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

    match session.load_config(state.as_ref()) {
        Ok(loaded) => {
            checks.push(check(
                "config",
                Level::Ok,
                format!("read from {}", loaded.origin),
                None,
            ));
            for warning in loaded
                .warnings
                .iter()
                .filter(|w| !w.starts_with("no preflight"))
            {
                checks.push(check("config", Level::Warning, warning.clone(), None));
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
        }
        Err(e) => checks.push(check(
            "config",
            Level::Error,
            e.to_string(),
            Some("fix .orchestrate.toml (docs/config.md describes every key)".into()),
        )),
    }

    hooks(session, &mut checks)?;
    refspecs(session, &mut checks)?;

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
                    Ok(()) if *current => check(&name, Level::Ok, format!("installed and firing ({})", h.path.display()), None),
                    Ok(()) => check(
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

/// Runs the hook file as git would, with the probe set; `Err` says what came back instead.
fn probe(
    session: &Session,
    name: &str,
    path: &std::path::Path,
    nonce: &str,
) -> Result<Result<(), String>, EngineError> {
    let dir = tempfile::tempdir().map_err(super::io_error("create a probe directory"))?;
    let message = dir.path().join("COMMIT_EDITMSG");
    std::fs::write(&message, "checkpoint: git orchestrate doctor probe\n")
        .map_err(super::io_error("write the probe message"))?;
    let args = match name {
        "commit-msg" => shell_quote(&message.display().to_string()),
        "pre-push" => "origin origin".to_string(),
        _ => String::new(),
    };
    let command = format!(
        "{PROBE_ENV}={} {} {args}",
        shell_quote(nonce),
        shell_quote(&path.display().to_string())
    );
    let run = exec::run_shell_with(
        &command,
        session.store.workdir(),
        PROBE_TIMEOUT,
        ShellOptions {
            stdin: Some(b""),
            split_stderr: true,
        },
    )
    .map_err(super::io_error(format!("run {}", path.display())))?;
    let stdout = String::from_utf8_lossy(&run.output);
    if run.exit.success() && stdout.contains(&format!("git-orchestrate hook probe {nonce}")) {
        return Ok(Ok(()));
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

/// The fetch refspecs that bring workflow state and notes along (SPEC §9).
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
