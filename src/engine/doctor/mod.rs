//! `doctor`: checks what the guarantees rest on — the config, the gates, hooks that are
//! installed *and reach the binary*, the refspecs that share state, the identity, the
//! workflow state — and says for each what to do about it.

mod check;
mod commands;
mod hooks;

use self::check::check;
pub use self::check::{Check, Level};

use self::commands::review_command;
use self::hooks::hooks;
use super::{EngineError, Session};
use crate::exec::git::{MIN_VERSION as MIN_GIT_VERSION, parse_version};
use crate::store::{self, Workflow};
use crate::workflow::briefing::Notice;
use crate::workflow::briefing::shell_quote;

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
    let state = state_check(session, &mut checks);
    lock_checks(session, &mut checks);
    config_checks(session, state.as_ref(), &mut checks);
    verification_checks(session, &mut checks)?;
    hooks(session, &mut checks)?;
    checks.extend(self::hooks::login_shell(session)?);
    agents(session, &mut checks);
    refspecs(session, &mut checks)?;
    history(session, &mut checks)?;
    checks.push(identity_check(session));
    Ok(checks)
}

/// The workflow's state, as read; `None` when there is none, or it cannot be read.
fn state_check(session: &Session, checks: &mut Vec<Check>) -> Option<crate::workflow::State> {
    match session.store.read_workflow() {
        Ok(Some(Workflow::Tdd(snapshot))) => {
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
        Ok(Some(Workflow::Ticket(snap))) => {
            let state = snap.ticket.state.as_str();
            checks.push(check(
                "state",
                Level::Ok,
                format!(
                    "workflow {}: a ticket, {state} ({})",
                    session.store.workflow(),
                    session.store.ref_name()
                ),
                None,
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
    }
}

/// Ref locks left over: every write to the ref fails until they are gone.
fn lock_checks(session: &Session, checks: &mut Vec<Check>) {
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
}

/// The configuration in force, its gates, its review command and its master plan.
fn config_checks(
    session: &Session,
    state: Option<&crate::workflow::State>,
    checks: &mut Vec<Check>,
) {
    match session.load_config(state) {
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
            checks.extend(master_plan(session, state, &loaded.config.master_plan));
        }
        Err(e) => checks.push(check(
            "config",
            Level::Error,
            e.to_string(),
            Some("fix .orchestrate.toml (docs/config.md describes every key)".into()),
        )),
    }
}

/// Settings under which nothing is verified (docs/integrity.md, "Hermetic verification").
fn verification_checks(session: &Session, checks: &mut Vec<Check>) -> Result<(), EngineError> {
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
    Ok(())
}

/// Who workflow commits are made as.
fn identity_check(session: &Session) -> Check {
    match session.store.identity() {
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
    }
}

/// Per client that `init --agent` wired here: does every file it loads exist and name our
/// hooks and MCP server, and will it load them in this folder? A client that drops them runs
/// its agent unguarded.
fn agents(session: &Session, checks: &mut Vec<Check>) {
    use crate::agent::hook::Client;
    use crate::engine::agent_setup::{client_trust, file_gaps};
    let root = session.store.workdir();
    for client in [Client::Claude, Client::Codex, Client::Gemini] {
        let files = file_gaps(session, client);
        // Wired: some file of the client's is there and has something of ours.
        let wired = files
            .iter()
            .zip(crate::agent::setup::files(client))
            .any(|(f, file)| {
                !f.gaps.contains(&crate::agent::setup::Gap::Missing)
                    && crate::agent::guard::read_capped(&root.join(file.path), 1 << 20)
                        .is_ok_and(|text| crate::agent::setup::has_ours(file.kind, &text))
            });
        if !wired {
            continue;
        }
        let incomplete: Vec<String> = files
            .iter()
            .flat_map(|f| f.gaps.iter().map(move |g| format!("{} {g}", f.path)))
            .collect();
        let loaded: Vec<&str> = files.iter().map(|f| f.path).collect();
        // Its trust matters only once its files are whole.
        let trust = if incomplete.is_empty() {
            client_trust(client, root)
        } else {
            None
        };
        checks.push(agent_check(client, &incomplete, &loaded, trust, root));
    }
}

/// The check of one wired client: its files' gaps (`incomplete`), the files it loads, and
/// whether it trusts the folder (`None`: Claude Code, which keeps no such record here).
fn agent_check(
    client: crate::agent::hook::Client,
    incomplete: &[String],
    loaded: &[&str],
    trust: Option<crate::engine::agent_setup::ClientTrust>,
    root: &std::path::Path,
) -> Check {
    let name = crate::engine::agent_setup::client_name(client);
    if !incomplete.is_empty() {
        return check(
            "agent",
            Level::Error,
            format!(
                "{name}: {}: its agent would run without git-orchestrate's guard or tools, and \
                 `git orchestrate run --agent {name}` refuses to start",
                incomplete.join("; ")
            ),
            Some(format!("git orchestrate init --agent {name}")),
        );
    }
    let Some(trust) = trust else {
        return check(
            "agent",
            Level::Ok,
            format!(
                "claude: `claude -p` (and `git orchestrate run --agent claude`) loads {} here; an \
                 interactive session asks once to trust the folder and to approve the server",
                loaded.join(" and ")
            ),
            None,
        );
    };
    trust_check(client, trust, loaded, root)
}

/// The check of a client whose files are whole, by whether it trusts the folder.
fn trust_check(
    client: crate::agent::hook::Client,
    trust: crate::engine::agent_setup::ClientTrust,
    loaded: &[&str],
    root: &std::path::Path,
) -> Check {
    use crate::agent::hook::Client;
    use crate::agent::trust::Trust;
    let shown = &trust.record;
    match (client, trust.trust) {
        (Client::Codex, Trust::Trusted) => check(
            "agent",
            Level::Ok,
            format!(
                "codex: the project is trusted ({shown}), so Codex loads {} here",
                loaded.join(" and ")
            ),
            None,
        ),
        (Client::Codex, Trust::Untrusted) => check(
            "agent",
            Level::Error,
            format!(
                "codex: {shown} marks this project untrusted, so Codex drops .codex/ here (no hooks, \
                 no MCP server), and `git orchestrate run --agent codex` refuses to overrule it"
            ),
            Some(format!(
                "if you trust it, set trust_level = \"trusted\" under [projects.{}] in {shown}",
                toml::Value::String(trust.rule.unwrap_or_else(|| root.display().to_string()))
            )),
        ),
        (Client::Codex, Trust::Undecided) => check(
            "agent",
            Level::Warning,
            "codex: the project is not trusted yet, so a `codex` you start here drops .codex/ (no \
             hooks, no MCP server); `git orchestrate run --agent codex` trusts it itself and says so",
            Some(
                "say yes once in an interactive `codex` session here, or run `codex exec --trust \
                 --dangerously-bypass-hook-trust`"
                    .into(),
            ),
        ),
        (_, Trust::Trusted) => check(
            "agent",
            Level::Ok,
            "gemini: the folder is trusted, so Gemini CLI loads .gemini/settings.json here",
            None,
        ),
        (_, Trust::Untrusted) => check(
            "agent",
            Level::Error,
            format!(
                "gemini: {shown} marks this folder DO_NOT_TRUST, so Gemini CLI drops \
                 .gemini/settings.json here (no hooks, no MCP server), and `git orchestrate run \
                 --agent gemini` refuses to overrule it"
            ),
            Some(format!(
                "if you trust it, change the rule for {} in {shown} (or `/permissions` in Gemini CLI)",
                trust.rule.unwrap_or_else(|| root.display().to_string())
            )),
        ),
        (_, Trust::Undecided) => check(
            "agent",
            Level::Warning,
            "gemini: the folder is not trusted in ~/.gemini/trustedFolders.json, so a `gemini` you \
             start here drops .gemini/settings.json (no hooks, no MCP server); `git orchestrate run \
             --agent gemini` trusts it for its own turns (GEMINI_CLI_TRUST_WORKSPACE=true)",
            Some(
                "trust the folder when Gemini CLI asks (or `/permissions`), or set \
                 GEMINI_CLI_TRUST_WORKSPACE=true"
                    .into(),
            ),
        ),
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
            Some(
                p.fix
                    .clone()
                    .unwrap_or_else(|| "git orchestrate audit --all".into()),
            ),
        ));
    }
    Ok(())
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

    #[test]
    fn a_wired_client_is_judged_by_its_gaps_then_by_its_trust() {
        use crate::agent::hook::Client;
        use crate::agent::trust::Trust;
        use crate::engine::agent_setup::ClientTrust;
        let root = std::path::Path::new("/work/p");
        let trust = |trust: Trust, rule: Option<&str>| {
            Some(ClientTrust {
                record: "~/.codex/config.toml".into(),
                rule: rule.map(str::to_string),
                trust,
            })
        };
        let gap = vec![".codex/hooks.json missing".to_string()];
        let loaded = [".codex/config.toml", ".codex/hooks.json"];
        // Each row: the client, its gaps, its trust, the level, the fix.
        let table = [
            (
                "a gap: init again",
                Client::Codex,
                gap.clone(),
                trust(Trust::Trusted, None),
                Level::Error,
                Some("git orchestrate init --agent codex".to_string()),
            ),
            ("claude keeps no trust record", Client::Claude, vec![], None, Level::Ok, None),
            ("codex trusted", Client::Codex, vec![], trust(Trust::Trusted, None), Level::Ok, None),
            (
                "codex untrusted: the rule to change, else the folder",
                Client::Codex,
                vec![],
                trust(Trust::Untrusted, None),
                Level::Error,
                Some(
                    "if you trust it, set trust_level = \"trusted\" under [projects.\"/work/p\"] in \
                     ~/.codex/config.toml"
                        .to_string(),
                ),
            ),
            ("codex undecided", Client::Codex, vec![], trust(Trust::Undecided, None), Level::Warning, Some(
                "say yes once in an interactive `codex` session here, or run `codex exec --trust \
                 --dangerously-bypass-hook-trust`".to_string())),
            ("gemini trusted", Client::Gemini, vec![], trust(Trust::Trusted, None), Level::Ok, None),
            (
                "gemini untrusted: its rule",
                Client::Gemini,
                vec![],
                trust(Trust::Untrusted, Some("/work")),
                Level::Error,
                Some(
                    "if you trust it, change the rule for /work in ~/.codex/config.toml (or \
                     `/permissions` in Gemini CLI)"
                        .to_string(),
                ),
            ),
            ("gemini undecided", Client::Gemini, vec![], trust(Trust::Undecided, None), Level::Warning, Some(
                "trust the folder when Gemini CLI asks (or `/permissions`), or set \
                 GEMINI_CLI_TRUST_WORKSPACE=true".to_string())),
        ];
        for (case, client, gaps, trust, level, fix) in table {
            let found = agent_check(client, &gaps, &loaded, trust, root);
            assert_eq!((found.level, found.fix), (level, fix), "{case}");
        }
        assert_eq!(
            agent_check(Client::Claude, &[], &loaded, None, root).message,
            "claude: `claude -p` (and `git orchestrate run --agent claude`) loads .codex/config.toml \
             and .codex/hooks.json here; an interactive session asks once to trust the folder and \
             to approve the server"
        );
    }
}
