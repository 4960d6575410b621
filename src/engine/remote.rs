//! The remote the workflows coordinate through (docs/architecture.md, "Finalization and
//! merge"): which one it is, main as it stands there, and main pushed to it with a lease.

use super::{EngineError, Session};
use crate::config::Config;
use crate::exec::GitError;
use crate::store::{tracking_branch_ref, workflow_ref};
use crate::workflow::State;

/// The remote the workflow shares main (and its claims) through: the config's `remote`
/// (an error when there is no such remote), else `origin`, else the only remote there is.
/// `None` when there is no remote, or several and none is called origin: local only.
pub fn coordination_remote(
    session: &Session,
    state: &State,
) -> Result<Option<String>, EngineError> {
    // Read in-process: every briefing asks (main behind the remote's), and a `git remote`
    // per call would double get-task's cost.
    remote_under(session, &session.load_config(Some(state))?.config)
}

/// [`coordination_remote`] under `config`, the configuration in force read already.
pub fn remote_under(session: &Session, config: &Config) -> Result<Option<String>, EngineError> {
    let remotes = session.store.remote_names();
    Ok(choose_remote(config.remote.as_deref(), &remotes)?.map(str::to_string))
}

/// [`coordination_remote`]'s choice among `remotes`.
pub(super) fn choose_remote<'a>(
    configured: Option<&'a str>,
    remotes: &'a [String],
) -> Result<Option<&'a str>, EngineError> {
    if let Some(name) = configured {
        if remotes.iter().any(|r| r == name) {
            return Ok(Some(name));
        }
        return Err(EngineError::BadInput {
            message: format!(
                "`remote = \"{name}\"` in .orchestrate.toml names no remote of this repository"
            ),
            hint: format!(
                "Add it with `git remote add {name} <url>`, or change `remote` to one of: {}.",
                if remotes.is_empty() {
                    "(none)".to_string()
                } else {
                    remotes.join(", ")
                }
            ),
        });
    }
    if remotes.iter().any(|r| r == "origin") {
        return Ok(Some("origin"));
    }
    Ok(match remotes {
        [only] => Some(only.as_str()),
        _ => None,
    })
}

/// Fetches `main` from `remote` (and the workflows' refs into their remote-tracking
/// namespace, which tell a workflow's merge on main from a move outside the workflows), and
/// returns main's commit there as this fetch saw it: the value a push leases against, never
/// the remote-tracking ref read later, which a background fetch moves. `None` when the
/// remote has no such branch.
pub fn fetch_main(session: &Session, remote: &str, main: &str) -> Result<Option<String>, GitError> {
    let git = &session.git;
    let branch = crate::store::branch_ref(main);
    let tracking = tracking_branch_ref(remote, main);
    let there = git.ls_remote(remote, &[branch.as_str()])?;
    // The claims too: the briefing that follows lists the PRs others hold.
    let mut specs = vec![
        format!(
            "+refs/orchestrator/workflows/*:{}",
            crate::store::tracking_ref(remote, "*")
        ),
        format!(
            "+{}*:{}",
            crate::store::CLAIMS,
            crate::store::tracking_claim_ref(remote, "*")
        ),
        // The notes too: a merge pushes them with main, leased on what this fetch saw.
        format!(
            "+{}*:{}*",
            crate::store::NOTES_REF,
            crate::store::tracking_notes_ref(remote)
        ),
        // And the run records, which the landing pushes the same way (docs/board.md).
        format!(
            "+{}:{}*",
            crate::store::runs_ref("*"),
            crate::store::tracking_runs_prefix(remote)
        ),
    ];
    let hidden = crate::store::fetch_hidden_refs(remote);
    let Some((_, seen)) = there.into_iter().find(|(name, _)| *name == branch) else {
        git.fetch_hiding(remote, &specs, &hidden)?;
        return Ok(None);
    };
    specs.push(format!("+{branch}:{tracking}"));
    git.fetch_hiding(remote, &specs, &hidden)?;
    // What was fetched is at least as new as what ls-remote saw; the fetched tip is leased.
    Ok(Some(git.rev_parse(&tracking).unwrap_or(seen)))
}

/// Pushes `commit` to `main` on `remote` as a fast-forward, leasing main there at `seen`
/// (`None`: it must not exist yet).
pub fn push_main(
    session: &Session,
    remote: &str,
    main: &str,
    commit: &str,
    seen: Option<&str>,
) -> Result<(), GitError> {
    let branch = crate::store::branch_ref(main);
    session
        .git
        .push_atomic(
            remote,
            &[(branch.clone(), seen.map(str::to_string))],
            &[format!("{commit}:{branch}")],
        )
        .map(drop)
}

/// True when a push of main was refused because main on the remote is no longer what was
/// fetched: another clone pushed first, and a fresh fetch and merge may succeed.
pub fn lost_race(error: &GitError) -> bool {
    // Refused before the push (the lease, or a fast-forward, against what the remote
    // advertised), or by the remote's own compare-and-swap when main moved while the push was
    // under way ("cannot lock ref 'refs/heads/main': is at X but expected Y"). A hook's or
    // the host's refusal is no race: another try ends alike.
    [
        "(stale info)",
        "(fetch first)",
        "(non-fast-forward)",
        "but expected",
    ]
    .iter()
    .any(|said| error.stderr.contains(said))
}

/// Pushes the workflow's own state ref to `remote`, never forced: another clone learns of
/// its merge on main as soon as main itself. A remote copy that moved on is left for `sync`.
pub fn publish_workflow(session: &Session, remote: &str) -> Result<(), GitError> {
    let reference = workflow_ref(session.store.workflow());
    session
        .git
        .run([
            "push",
            "--quiet",
            remote,
            &format!("{reference}:{reference}"),
        ])
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_config_then_origin_then_the_only_remote() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let rows: [(Option<&str>, Vec<String>, Option<&str>); 6] = [
            (None, names(&[]), None),
            (None, names(&["upstream"]), Some("upstream")),
            (None, names(&["fork", "origin"]), Some("origin")),
            (None, names(&["fork", "upstream"]), None),
            (Some("fork"), names(&["fork", "origin"]), Some("fork")),
            (Some("up"), names(&["up"]), Some("up")),
        ];
        for (configured, remotes, expected) in rows {
            assert_eq!(
                choose_remote(configured, &remotes).ok().flatten(),
                expected,
                "{configured:?} {remotes:?}"
            );
        }
        assert!(choose_remote(Some("gone"), &names(&["origin"])).is_err());
    }

    #[test]
    fn a_refused_lease_or_fast_forward_is_a_lost_race_and_nothing_else_is() {
        let said = |stderr: &str| GitError {
            command: "git push".into(),
            status: Some(1),
            stderr: stderr.into(),
        };
        for (stderr, race) in [
            ("refs/heads/main: [rejected] (stale info)", true),
            ("refs/heads/main: [rejected] (fetch first)", true),
            ("refs/heads/main: [rejected] (non-fast-forward)", true),
            ("fatal: could not read from remote repository", false),
            ("remote: Permission denied", false),
            (
                "refs/heads/main: [remote rejected] (pre-receive hook declined)",
                false,
            ),
        ] {
            assert_eq!(lost_race(&said(stderr)), race, "{stderr}");
        }
    }
}

#[cfg(test)]
#[path = "remote_tests.rs"]
mod unit_tests;
