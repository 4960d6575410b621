//! `sync` (docs/refs.md, "What `sync` does"): brings this clone's workflows, notes and PR branches level with a
//! remote. Each ref is classified first (equal, adopt, fast-forward, push, diverged) as
//! plain data, then carried out: local moves are compare-and-swaps, the pushes go out in one
//! `git push --atomic` with a lease on every state ref. A push that loses a race is retried
//! from a fresh fetch; nothing that exists only in this clone is ever dropped.

mod archive;
mod plan;
mod reconcile;
mod report;

use std::collections::BTreeMap;

use self::plan::Push;
pub use self::plan::{Action, Side};
use self::reconcile::{Reconciled, Takes, carry_over, reconcile, sync_notes};
pub use self::report::{BranchSync, NotesSync, SyncReport, WorkflowSync};
use super::WorkflowState;
use super::session::backoff;
use super::{EngineError, Session};
use crate::exec::GitError;
use crate::store::{self, LocalRef};
use crate::workflow::briefing::Notice;

/// How many fetch–reconcile–push rounds `sync` makes before giving up on a remote that
/// keeps changing under it.
const MAX_ROUNDS: u32 = 10;

/// The remote `sync` and `init` talk to: the one named, else the config's `remote`, else
/// `origin`, else the only remote there is.
pub fn resolve_remote(session: &Session, named: Option<&str>) -> Result<String, EngineError> {
    let remotes = session.git.remotes()?;
    if let Some(name) = named {
        if remotes.iter().any(|r| r == name) {
            return Ok(name.to_string());
        }
        return Err(EngineError::BadInput {
            message: format!("there is no remote named \"{name}\""),
            hint: format!(
                "The remotes are: {}. Add one with `git remote add {name} <url>`.",
                if remotes.is_empty() {
                    "(none)".to_string()
                } else {
                    remotes.join(", ")
                }
            ),
        });
    }
    let state = session
        .store
        .read_unless_ticket()
        .ok()
        .flatten()
        .map(|s| s.state);
    let configured = session
        .load_config(state.as_ref())
        .ok()
        .and_then(|loaded| loaded.config.remote.clone());
    for candidate in configured.into_iter().chain(["origin".to_string()]) {
        if remotes.contains(&candidate) {
            return Ok(candidate);
        }
    }
    match remotes.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(EngineError::BadInput {
            message: "this repository has no remote to sync with".into(),
            hint:
                "Add one with `git remote add origin <url>`, then run `git orchestrate sync` again."
                    .into(),
        }),
        many => Err(EngineError::BadInput {
            message: format!(
                "this repository has several remotes ({}) and none is called origin",
                many.join(", ")
            ),
            hint:
                "Name one: `git orchestrate sync <remote>`, or set `remote` in .orchestrate.toml."
                    .into(),
        }),
    }
}

/// Adds the (docs/refs.md, "Fetch refspecs") fetch refspecs for `remote` that are missing, and replaces the exact
/// notes refspec (which breaks `git fetch` while the remote has no notes) by its pattern.
/// Returns the refspecs added; running it again adds nothing.
pub fn ensure_refspecs(session: &Session, remote: &str) -> Result<Vec<String>, EngineError> {
    let key = format!("remote.{remote}.fetch");
    let present = session.git.config_all(&key)?;
    let exact = store::exact_notes_refspec(remote);
    if present.contains(&exact) {
        session.git.config_unset_value(&key, &exact)?;
    }
    let unforced = store::unforced_claims_refspec(remote);
    if present.contains(&unforced) {
        session.git.config_unset_value(&key, &unforced)?;
    }
    let mut added = Vec::new();
    for spec in store::fetch_refspecs(remote) {
        if !present.contains(&spec) {
            session.git.config_add(&key, &spec)?;
            added.push(spec);
        }
    }
    Ok(added)
}

/// A failure talking to the remote, with what the host answered.
fn remote_error(remote: &str, what: String, e: GitError, hint: String) -> EngineError {
    EngineError::Remote {
        remote: remote.to_string(),
        what,
        answer: e.stderr.trim().to_string(),
        hint,
    }
}

fn fetch(session: &Session, remote: &str) -> Result<(), EngineError> {
    session
        .git
        // The archive refs stay in the connectivity check here: this fetch brings the
        // remote's archive, whose tip, hidden, would be walked to its roots (every archived
        // history) where, visible, it is the boundary (store::fetch_hidden_refs).
        .fetch(remote, &store::sync_refspecs(remote))
        .map_err(|e| {
            remote_error(
                remote,
                format!("fetch the workflow state from {remote}"),
                e,
                format!(
                                        "Nothing was pushed. Check that `git fetch {remote}` works (network, credentials), then run `git orchestrate sync {remote}` again."

                ),
            )
        })
}

/// The fetch refspecs destructive of local state that `remote` has configured.
fn destructive_refspecs(session: &Session, remote: &str) -> Result<Vec<String>, EngineError> {
    Ok(session
        .git
        .config_all(&format!("remote.{remote}.fetch"))?
        .into_iter()
        .filter(|spec| store::writes_local_state(spec))
        .collect())
}

/// `git orchestrate sync [REMOTE] [--take local|remote]`. `--take` applies to this session's
/// workflow only; other diverged workflows are reported and left alone.
pub fn sync(
    session: &Session,
    remote: Option<&str>,
    take: Option<Side>,
) -> Result<SyncReport, EngineError> {
    let remote = resolve_remote(session, remote)?;
    let mut before = before_rounds(session, &remote)?;
    let mut refused: Option<(Vec<Push>, GitError)> = None;
    let mut takes = Takes {
        side: take,
        first_seen: BTreeMap::new(),
    };
    // What earlier rounds did here before their push lost a race: their local moves stand.
    let mut earlier: Vec<Reconciled> = Vec::new();
    for round in 1..=MAX_ROUNDS {
        fetch(session, &remote)?;
        if let Some((pushes, error)) = refused.take() {
            // Nothing moved on the remote since: the host refused the push itself.
            if !moved_since(session, &pushes)? {
                return Err(push_refused(&remote, &pushes, error));
            }
        }
        audit_incoming(session, &remote)?;
        let mut reconciled = match reconcile(session, &remote, &mut takes) {
            Err(EngineError::Conflict) => {
                std::thread::sleep(backoff(round));
                continue;
            }
            other => other?,
        };
        if !reconciled.pushes.is_empty() {
            match push(session, &remote, &reconciled.pushes) {
                // The pre-push hook's warnings, for one.
                Ok(said) if !said.is_empty() => {
                    before.warnings.push(Notice::PushSaid { said }.to_string())
                }
                Ok(_) => {}
                Err(e) => {
                    refused = Some((std::mem::take(&mut reconciled.pushes), e));
                    earlier.push(reconciled);
                    std::thread::sleep(backoff(round));
                    continue;
                }
            }
        }
        for done in &earlier {
            carry_over(done, &mut reconciled);
        }
        return Ok(finish(session, remote, before, reconciled, round));
    }
    Err(gave_up(session, &remote, refused)?)
}

/// What `sync` does and finds before its rounds: the refspecs it adds, the warnings about
/// refspecs that would overwrite local state, and the `[archive] auto` archiving.
struct BeforeRounds {
    refspecs_added: Vec<String>,
    warnings: Vec<String>,
    archived: Option<crate::engine::ArchiveReport>,
}

fn before_rounds(session: &Session, remote: &str) -> Result<BeforeRounds, EngineError> {
    let refspecs_added = ensure_refspecs(session, remote)?;
    let mut warnings = Vec::new();
    let destructive = destructive_refspecs(session, remote)?;
    if !destructive.is_empty() {
        warnings.push(
            Notice::DestructiveRefspecs {
                remote: remote.to_string(),
                refspecs: destructive.iter().map(ToString::to_string).collect(),
            }
            .to_string(),
        );
    }
    // `[archive] auto`: archived before the fetch, so that this sync carries it.
    let archived = match super::archive::auto_archive(session) {
        Ok(report) => report,
        Err(e) => {
            warnings.push(format!("[archive] auto did not archive: {e}"));
            None
        }
    };
    Ok(BeforeRounds {
        refspecs_added,
        warnings,
        archived,
    })
}

/// The report of the round whose push went through (or that had nothing to push), with the
/// claims of the workflows just synced renewed while they work on their PR.
fn finish(
    session: &Session,
    remote: String,
    before: BeforeRounds,
    reconciled: Reconciled,
    round: u32,
) -> SyncReport {
    let pushed: Vec<String> = reconciled.pushes.iter().map(|p| p.target.clone()).collect();
    let mut warnings = before.warnings;
    warnings.extend(reconciled.warnings);
    let mut claims = match super::claims::renew(session, &remote) {
        Ok(claims) => claims,
        Err(e) => {
            warnings.push(e.to_string());
            super::claims::Renewal::default()
        }
    };
    claims.archived = archived_claims(&pushed);
    SyncReport {
        remote,
        refspecs_added: before.refspecs_added,
        workflows: reconciled.workflows,
        notes: reconciled.notes,
        branches: reconciled.branches,
        pushed,
        rounds: round,
        claims,
        archived: before.archived,
        warnings,
    }
}

/// Why every round's push failed: a refusal when the last one's was the host's own (nothing
/// moved on the remote since), else the remote changing under each attempt.
fn gave_up(
    session: &Session,
    remote: &str,
    refused: Option<(Vec<Push>, GitError)>,
) -> Result<EngineError, EngineError> {
    if let Some((pushes, error)) = refused {
        fetch(session, remote)?;
        if !moved_since(session, &pushes)? {
            return Ok(push_refused(remote, &pushes, error));
        }
    }
    Ok(EngineError::Remote {
        remote: remote.to_string(),
        what: format!("push to {remote}"),
        answer: format!("{remote} changed under every one of {MAX_ROUNDS} attempts"),
        hint: format!(
            "Local moves made so far stand; nothing of this clone's was lost. Run `git orchestrate sync {remote}` \
             again when the other clones are done."
        ),
    })
}

/// Every transition the remote's workflows would bring in is replayed before anything here
/// moves (docs/integrity.md): a forged one refuses the whole sync, naming it.
fn audit_incoming(session: &Session, remote: &str) -> Result<(), EngineError> {
    let store = &session.store;
    let local = store.local_workflows()?;
    for (name, theirs) in store.tracking_workflows(remote)? {
        if !store::valid_workflow_name(&name) {
            continue;
        }
        let stop = match local.get(&name) {
            Some(&ours) => store.relation(ours, theirs)?.base,
            None => None,
        };
        if stop == Some(theirs) {
            continue;
        }
        let chain = super::chain::audit_chain(store, &name, theirs, stop)?;
        if let Some(problem) = chain.forged {
            return Err(EngineError::Forged {
                what: format!("sync refused what {remote} holds"),
                problem: Box::new(problem),
            });
        }
    }
    Ok(())
}

/// The PR keys of the claims among the refs `pushed` (deleted there: `sync` pushes no claim
/// of its own but with `claims::renew`).
fn archived_claims(pushed: &[String]) -> Vec<String> {
    pushed
        .iter()
        .filter_map(|target| target.strip_prefix(store::CLAIMS))
        .map(str::to_string)
        .collect()
}

/// True when a ref the push targeted is no longer where the push expected it.
fn moved_since(session: &Session, pushes: &[Push]) -> Result<bool, EngineError> {
    for p in pushes {
        if session.store.ref_tip(&p.tracking)? != p.seen {
            return Ok(true);
        }
    }
    Ok(false)
}

fn push_refused(remote: &str, pushes: &[Push], error: GitError) -> EngineError {
    let refs: Vec<&str> = pushes.iter().map(|p| p.target.as_str()).collect();
    // The host answered (a hook of its own, HTTP 403), rather than our own pre-push hook or
    // the network.
    // Only when the host refused a state ref itself (not the atomic push's other refs with
    // it), or refused the whole push with HTTP 403.
    let custom = error.stderr.lines().any(|line| {
        (store::is_state_ref(line) && !line.contains("atomic push failed")) || line.contains(" 403")
    });
    remote_error(
        remote,
        format!("push {} to {remote}", refs.join(", ")),
        error,
        if custom {
            format!(
                "The local state is kept; nothing was pushed (the push is atomic). Some hosts refuse refs outside \
                 refs/heads and refs/tags: allow refs/orchestrator/* and refs/notes/* on {remote}, or share state \
                 through a remote that accepts them. `git orchestrate sync {remote}` retries."
            )
        } else {
            format!(
                "The local state is kept; nothing was pushed (the push is atomic). Fix what git reports, then run \
                 `git orchestrate sync {remote}` again."
            )
        },
    )
}

fn push(session: &Session, remote: &str, pushes: &[Push]) -> Result<String, GitError> {
    let leases: Vec<(String, Option<String>)> = pushes
        .iter()
        .filter(|p| p.leased)
        .map(|p| (p.target.clone(), p.seen.map(|id| id.to_string())))
        .collect();
    let refspecs: Vec<String> = pushes
        .iter()
        .map(|p| match p.source {
            Some(source) => format!("{source}:{}", p.target),
            None => format!(":{}", p.target),
        })
        .collect();
    session.git.push_atomic(remote, &leases, &refspecs)
}

/// The state `init` adopts on a fresh clone.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Adoption {
    pub remote: String,
    pub tip: String,
    pub state: WorkflowState,
    pub transitions: usize,
}

/// On a clone where this workflow does not exist yet, looks for it on the remote
/// (`git ls-remote`) and, when it is there, fetches and adopts it with the notes, so that
/// `init` continues the shared history instead of starting a second one. Pushes nothing.
pub fn adopt_from_remote(session: &Session, remote: &str) -> Result<Option<Adoption>, EngineError> {
    let reference = session.store.ref_name();
    let listed = session
        .git
        .ls_remote(remote, &[&reference])
        .map_err(|e| {
            remote_error(
                remote,
                format!("look for workflow state on {remote}"),
                e,
                format!("Check that `git ls-remote {remote}` works, or run `git orchestrate sync {remote}` later."),
            )
        })?;
    if !listed.iter().any(|(name, _)| *name == reference) {
        return Ok(None);
    }
    fetch(session, remote)?;
    let workflow = session.store.workflow().to_string();
    let Some(theirs) = session
        .store
        .tracking_workflows(remote)?
        .get(&workflow)
        .copied()
    else {
        return Ok(None);
    };
    let chain = super::chain::audit_chain(&session.store, &workflow, theirs, None)?;
    if let Some(problem) = chain.forged {
        return Err(EngineError::Forged {
            what: format!("init refused to adopt workflow {workflow} from {remote}"),
            problem: Box::new(problem),
        });
    }
    session.store.move_ref(
        LocalRef::Workflow(&workflow),
        None,
        theirs,
        &format!("init: adopt workflow {workflow} from {remote}"),
    )?;
    // Not pushed: the notes are brought level here only, like `sync` does before its push.
    let mut unused = Vec::new();
    sync_notes(session, remote, &mut unused)?;
    // A ticket is adopted as a TDD workflow is (docs/tickets.md): same refs, same chain.
    let (state, _, _) = reconcile::read_branch(&session.store, theirs, &session.store.ref_name())?;
    let transitions = session.store.history_from(theirs, None, usize::MAX)?.len();
    Ok(Some(Adoption {
        remote: remote.to_string(),
        tip: theirs.to_string(),
        state,
        transitions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claims_a_sync_archived_are_the_claim_refs_among_its_pushes() {
        let refs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Each row: the refs pushed, the PR keys of the claims among them.
        let table: [(&str, &[&str], &[&str]); 3] = [
            ("nothing pushed", &[], &[]),
            (
                "workflows and notes only",
                &[
                    "refs/orchestrator/workflows/main",
                    "refs/notes/orchestrator",
                ],
                &[],
            ),
            (
                "claims among them",
                &[
                    "refs/orchestrator/claims/pr-1-add",
                    "refs/orchestrator/workflows/main",
                    "refs/orchestrator/claims/pr-2-sub",
                ],
                &["pr-1-add", "pr-2-sub"],
            ),
        ];
        for (case, pushed, expected) in table {
            assert_eq!(archived_claims(&refs(pushed)), refs(expected), "{case}");
        }
    }
}
