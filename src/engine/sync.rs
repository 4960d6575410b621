//! `sync` (docs/refs.md, "What `sync` does"): brings this clone's workflows, notes and PR branches level with a
//! remote. Each ref is classified first (equal, adopt, fast-forward, push, diverged) as
//! plain data, then carried out: local moves are compare-and-swaps, the pushes go out in one
//! `git push --atomic` with a lease on every state ref. A push that loses a race is retried
//! from a fresh fetch; nothing that exists only in this clone is ever dropped.

use crate::workflow::briefing::Notice;
use serde::Serialize;

use std::collections::BTreeMap;

use gix::ObjectId;

use super::{EngineError, Session, backoff};
use crate::exec::GitError;
use crate::store::{
    self, Backup, HistoryEntry, LocalRef, Relation, Standing, tracking_branch_ref,
    tracking_notes_ref, tracking_ref,
};
use crate::workflow::Status;

/// How many fetch–reconcile–push rounds `sync` makes before giving up on a remote that
/// keeps changing under it.
const MAX_ROUNDS: u32 = 10;

/// Which side `sync --take` keeps when a workflow has diverged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Local,
    Remote,
}

/// What to do with one ref: the plan, before anything is carried out; in reports, what was
/// done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Action {
    #[serde(rename = "up_to_date")]
    Nothing,
    /// Only the remote has it: create it here.
    #[serde(rename = "adopted")]
    Adopt,
    #[serde(rename = "fast_forwarded")]
    FastForward,
    /// Only this clone has it, or has more of it: push.
    #[serde(rename = "pushed")]
    Push,
    /// Both moved on: change nothing, report.
    #[serde(rename = "diverged")]
    Diverged,
    /// Diverged, and `--take local`: keep the remote's tip under a backup ref, push ours.
    #[serde(rename = "took_local")]
    TakeLocal,
    /// Diverged, and `--take remote`: keep our tip under a backup ref, move to theirs.
    #[serde(rename = "took_remote")]
    TakeRemote,
}

/// The plan for one ref. `standing` is `None` when either side is missing.
pub fn plan(local: bool, remote: bool, standing: Option<Standing>, take: Option<Side>) -> Action {
    match (local, remote, standing) {
        (false, false, _) => Action::Nothing,
        (false, true, _) => Action::Adopt,
        (true, false, _) => Action::Push,
        (true, true, Some(Standing::Equal) | None) => Action::Nothing,
        (true, true, Some(Standing::Behind)) => Action::FastForward,
        (true, true, Some(Standing::Ahead)) => Action::Push,
        (true, true, Some(Standing::Diverged)) => match take {
            None => Action::Diverged,
            Some(Side::Local) => Action::TakeLocal,
            Some(Side::Remote) => Action::TakeRemote,
        },
    }
}

/// What `sync` did with one workflow.
#[derive(Clone, Debug, Serialize)]
pub struct WorkflowSync {
    pub workflow: String,
    pub action: Action,
    /// The local tip after the sync (`None`: still absent).
    pub tip: Option<String>,
    pub remote_tip: Option<String>,
    pub state: Option<Status>,
    /// Transitions this clone had that the remote had not, and the other way round.
    pub ahead: usize,
    pub behind: usize,
    /// For a divergence: the shared transition, and each side's transitions since.
    pub base: Option<String>,
    #[serde(serialize_with = "brief_history")]
    pub local_since: Vec<HistoryEntry>,
    #[serde(serialize_with = "brief_history")]
    pub remote_since: Vec<HistoryEntry>,
    /// Where `--take` kept the tip it moved away from.
    pub backup: Option<String>,
}

/// Each side's transitions since a divergence, as `sync --json` lists them.
fn brief_history<S: serde::Serializer>(entries: &[HistoryEntry], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Brief<'a> {
        commit: &'a str,
        subject: &'a str,
        time: &'a str,
    }
    s.collect_seq(entries.iter().map(|e| Brief {
        commit: &e.commit,
        subject: &e.subject,
        time: &e.time,
    }))
}

/// What `sync` did with the notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotesSync {
    /// `Nothing`, `Adopt`, `FastForward` or `Push`; a union merge is `Push` with `merged`.
    pub action: Action,
    pub merged: bool,
}

/// What `sync` did with a workflow's PR branch.
#[derive(Clone, Debug, Serialize)]
pub struct BranchSync {
    pub workflow: String,
    pub branch: String,
    pub action: Action,
    pub backup: Option<String>,
    /// Why the local branch could not be moved, when it could not.
    pub not_moved: Option<String>,
}

/// What `sync` did (docs/agent-guide.md, "Other commands").
#[derive(Clone, Debug)]
pub struct SyncReport {
    pub remote: String,
    pub refspecs_added: Vec<String>,
    pub workflows: Vec<WorkflowSync>,
    pub notes: NotesSync,
    pub branches: Vec<BranchSync>,
    /// The remote refs the push updated.
    pub pushed: Vec<String>,
    /// Fetch–reconcile–push rounds: more than one when a push lost a race.
    pub rounds: u32,
    pub warnings: Vec<String>,
}

impl Serialize for SyncReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct View<'a> {
            remote: &'a str,
            refspecs_added: &'a [String],
            workflows: &'a [WorkflowSync],
            notes: &'a NotesSync,
            branches: &'a [BranchSync],
            pushed: &'a [String],
            rounds: u32,
            diverged: bool,
            warnings: &'a [String],
        }
        View {
            remote: &self.remote,
            refspecs_added: &self.refspecs_added,
            workflows: &self.workflows,
            notes: &self.notes,
            branches: &self.branches,
            pushed: &self.pushed,
            rounds: self.rounds,
            diverged: self.diverged(),
            warnings: &self.warnings,
        }
        .serialize(serializer)
    }
}

impl SyncReport {
    /// True when a workflow or a branch diverged and was left as it was.
    pub fn diverged(&self) -> bool {
        self.workflows.iter().any(|w| w.action == Action::Diverged)
            || self.branches.iter().any(|b| b.action == Action::Diverged)
    }
}

/// One ref to push, with the lease that protects it.
#[derive(Clone, Debug)]
struct Push {
    /// What to push (a commit id).
    source: ObjectId,
    /// The ref on the remote.
    target: String,
    /// The remote-tracking ref that shows what we saw of `target`.
    tracking: String,
    /// The tip we saw on the remote (`None`: absent).
    seen: Option<ObjectId>,
    /// Pushed with `--force-with-lease=<target>:<seen>`; otherwise a plain, never forced,
    /// push.
    leased: bool,
}

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
    let state = session.store.read().ok().flatten().map(|s| s.state);
    let configured = session
        .load_config(state.as_ref())
        .ok()
        .and_then(|loaded| loaded.config.remote);
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
    let refspecs_added = ensure_refspecs(session, &remote)?;
    let mut warnings = Vec::new();
    let destructive = destructive_refspecs(session, &remote)?;
    if !destructive.is_empty() {
        warnings.push(
            Notice::DestructiveRefspecs {
                remote: remote.clone(),
                refspecs: destructive.iter().map(ToString::to_string).collect(),
            }
            .to_string(),
        );
    }
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
        let pushed = reconciled.pushes.iter().map(|p| p.target.clone()).collect();
        if !reconciled.pushes.is_empty() {
            match push(session, &remote, &reconciled.pushes) {
                // The pre-push hook's warnings, for one.
                Ok(said) if !said.is_empty() => {
                    warnings.push(Notice::PushSaid { said }.to_string())
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
        for before in &earlier {
            carry_over(before, &mut reconciled);
        }
        warnings.extend(reconciled.warnings);
        return Ok(SyncReport {
            remote,
            refspecs_added,
            workflows: reconciled.workflows,
            notes: reconciled.notes,
            branches: reconciled.branches,
            pushed,
            rounds: round,
            warnings,
        });
    }
    // The last round's push failed too: a refusal, unless the remote moved again.
    if let Some((pushes, error)) = refused {
        fetch(session, &remote)?;
        if !moved_since(session, &pushes)? {
            return Err(push_refused(&remote, &pushes, error));
        }
    }
    Err(EngineError::Remote {
        remote: remote.clone(),
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

/// `--take` decides against the remote tip the user was shown: when a retry finds another
/// tip there, the ref is reported as diverged again instead.
struct Takes {
    side: Option<Side>,
    /// The remote tip of each ref (by its remote-tracking name) when `--take` first met it.
    first_seen: BTreeMap<String, Option<ObjectId>>,
}

impl Takes {
    fn side_for(&mut self, applies: bool, tracking: &str, seen: Option<ObjectId>) -> Option<Side> {
        let side = self.side.filter(|_| applies)?;
        let first = *self.first_seen.entry(tracking.to_string()).or_insert(seen);
        (first == seen).then_some(side)
    }
}

/// A local move an earlier round made (its push then lost a race) is reported as what
/// happened, not as "up to date".
fn carry_over(before: &Reconciled, now: &mut Reconciled) {
    let local_move =
        |a: Action| matches!(a, Action::Adopt | Action::FastForward | Action::TakeRemote);
    for w in &mut now.workflows {
        if w.action == Action::Nothing
            && let Some(old) = before
                .workflows
                .iter()
                .find(|o| o.workflow == w.workflow && local_move(o.action))
        {
            w.action = old.action;
            w.behind = old.behind;
            w.backup = old.backup.clone();
        }
    }
    for b in &mut now.branches {
        if b.action == Action::Nothing
            && let Some(old) = before
                .branches
                .iter()
                .find(|o| o.branch == b.branch && local_move(o.action) && o.not_moved.is_none())
        {
            b.action = old.action;
            b.backup = old.backup.clone();
        }
    }
    if now.notes.action == Action::Nothing && local_move(before.notes.action) {
        now.notes = before.notes.clone();
    }
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
        .map(|p| format!("{}:{}", p.source, p.target))
        .collect();
    session.git.push_atomic(remote, &leases, &refspecs)
}

struct Reconciled {
    workflows: Vec<WorkflowSync>,
    notes: NotesSync,
    branches: Vec<BranchSync>,
    pushes: Vec<Push>,
    warnings: Vec<String>,
}

/// How far back a divergence report lists each side's transitions.
const DIVERGED_LISTED: usize = 20;

/// Compares every local ref with what was just fetched, carries out the local moves, and
/// returns what is left to push. A local compare-and-swap that loses a race is
/// [`EngineError::Conflict`]: the round is re-run.
fn reconcile(
    session: &Session,
    remote: &str,
    takes: &mut Takes,
) -> Result<Reconciled, EngineError> {
    let store = &session.store;
    let local = store.local_workflows()?;
    let tracked = store.tracking_workflows(remote)?;
    let mut names: Vec<&String> = local.keys().chain(tracked.keys()).collect();
    names.sort();
    names.dedup();
    let mut out = Reconciled {
        workflows: Vec::new(),
        notes: NotesSync {
            action: Action::Nothing,
            merged: false,
        },
        branches: Vec::new(),
        pushes: Vec::new(),
        warnings: Vec::new(),
    };
    for name in names {
        if !store::valid_workflow_name(name) {
            out.warnings.push(
                Notice::Skipped {
                    what: format!(
                        "a workflow ref with an invalid name: {}",
                        tracking_ref(remote, name)
                    ),
                    why: String::new(),
                }
                .to_string(),
            );
            continue;
        }
        let ours = local.get(name).copied();
        let theirs = tracked.get(name).copied();
        // One broken ref (a tip that is not a transition) is skipped, not fatal to the rest.
        let relation = match (ours, theirs) {
            (Some(a), Some(b)) => match store.relation(a, b) {
                Ok(relation) => Some(relation),
                Err(e) => {
                    out.warnings.push(
                        Notice::Skipped {
                            what: format!("workflow {name}"),
                            why: e.to_string(),
                        }
                        .to_string(),
                    );
                    continue;
                }
            },
            _ => None,
        };
        let this_one = name == store.workflow();
        let take = takes.side_for(this_one, &tracking_ref(remote, name), theirs);
        let action = plan(
            ours.is_some(),
            theirs.is_some(),
            relation.as_ref().map(Relation::standing),
            take,
        );
        let reference = LocalRef::Workflow(name);
        let mut backup = None;
        let message = |what: &str| format!("sync {remote}: {what} workflow {name}");
        match (action, ours, theirs) {
            (Action::Adopt, None, Some(theirs)) => {
                store.move_ref(reference, None, theirs, &message("adopt"))?
            }
            (Action::FastForward, Some(ours), Some(theirs)) => {
                store.move_ref(reference, Some(ours), theirs, &message("fast-forward"))?
            }
            (Action::TakeRemote, Some(ours), Some(theirs)) => {
                backup = Some(store.backup(
                    name,
                    Backup::State,
                    ours,
                    &message("keep the local tip of"),
                )?);
                store.move_ref(reference, Some(ours), theirs, &message("take the remote's"))?;
            }
            (Action::TakeLocal, Some(ours), Some(theirs)) => {
                backup = Some(store.backup(
                    name,
                    Backup::State,
                    theirs,
                    &message("keep the remote tip of"),
                )?);
                out.pushes
                    .push(state_push(remote, name, ours, Some(theirs)));
            }
            (Action::Push, Some(ours), theirs) => {
                out.pushes.push(state_push(remote, name, ours, theirs));
            }
            _ => {}
        }
        let tip = match action {
            Action::Adopt | Action::FastForward | Action::TakeRemote => theirs,
            _ => ours,
        };
        let (local_since, remote_since) = match (action, relation, ours, theirs) {
            (Action::Diverged, Some(relation), Some(ours), Some(theirs)) => (
                store.history_from(ours, relation.base, DIVERGED_LISTED)?,
                store.history_from(theirs, relation.base, DIVERGED_LISTED)?,
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let state = match tip {
            Some(tip) => match store.read_at(tip, &LocalRef::Workflow(name).name()) {
                Ok(snapshot) => Some(snapshot.state),
                Err(e) => {
                    out.warnings.push(e.to_string());
                    None
                }
            },
            None => None,
        };
        if let Some(state) = &state
            && let Some(branch) = state.branch()
            && !out.branches.iter().any(|b| b.branch == *branch)
        {
            // The name comes from state another clone wrote: it must be a branch the workflow
            // could have created, never an option to git and never the main branch.
            if !store::is_valid_branch_name(branch)
                || branch.starts_with('-')
                || state.main_branch.as_deref() == Some(branch)
            {
                out.warnings.push(
                    Notice::BranchNotTouched {
                        workflow: name.clone(),
                        branch: branch.to_string(),
                    }
                    .to_string(),
                );
            } else {
                sync_branch(session, remote, name, branch, takes, this_one, &mut out)?;
            }
        }
        out.workflows.push(WorkflowSync {
            workflow: name.clone(),
            action,
            tip: tip.map(|t| t.to_string()),
            remote_tip: theirs.map(|t| t.to_string()),
            state: state.map(|s| s.status()),
            ahead: relation.map_or(0, |r| r.ahead),
            behind: relation.map_or(0, |r| r.behind),
            base: relation.and_then(|r| r.base).map(|b| b.to_string()),
            local_since,
            remote_since,
            backup,
        });
    }
    out.notes = sync_notes(session, remote, &mut out.pushes)?;
    Ok(out)
}

fn state_push(remote: &str, name: &str, ours: ObjectId, theirs: Option<ObjectId>) -> Push {
    Push {
        source: ours,
        target: LocalRef::Workflow(name).name(),
        tracking: tracking_ref(remote, name),
        seen: theirs,
        leased: true,
    }
}

/// How a commit graph ref (notes, a branch) stands: by ancestry, as git sees it.
fn standing_by_ancestry(
    session: &Session,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Standing, EngineError> {
    let (a, b) = (ours.to_string(), theirs.to_string());
    Ok(if ours == theirs {
        Standing::Equal
    } else if session.git.is_ancestor(&a, &b)? {
        Standing::Behind
    } else if session.git.is_ancestor(&b, &a)? {
        Standing::Ahead
    } else {
        Standing::Diverged
    })
}

/// Notes never diverge for good: two histories are merged by the union of their lines.
fn sync_notes(
    session: &Session,
    remote: &str,
    pushes: &mut Vec<Push>,
) -> Result<NotesSync, EngineError> {
    let store = &session.store;
    let ours = store.local_tip(LocalRef::Notes)?;
    let theirs = store.tracking_notes(remote)?;
    let standing = match (ours, theirs) {
        (Some(a), Some(b)) => Some(standing_by_ancestry(session, a, b)?),
        _ => None,
    };
    let action = plan(ours.is_some(), theirs.is_some(), standing, None);
    let message = format!("sync {remote}: notes");
    let (action, merged, push_tip) = match (action, ours, theirs) {
        (Action::Adopt, None, Some(theirs)) => {
            store.move_ref(LocalRef::Notes, None, theirs, &message)?;
            (Action::Adopt, false, None)
        }
        (Action::FastForward, Some(ours), Some(theirs)) => {
            store.move_ref(LocalRef::Notes, Some(ours), theirs, &message)?;
            (Action::FastForward, false, None)
        }
        (Action::Push, Some(ours), _) => (Action::Push, false, Some(ours)),
        (Action::Diverged, Some(ours), Some(theirs)) => {
            let merged = store.merge_notes(ours, theirs)?;
            store.move_ref(
                LocalRef::Notes,
                Some(ours),
                merged,
                &format!("{message} merged"),
            )?;
            (Action::Push, true, Some(merged))
        }
        (action, _, _) => (action, false, None),
    };
    if let Some(tip) = push_tip {
        pushes.push(Push {
            source: tip,
            target: LocalRef::Notes.name(),
            tracking: tracking_notes_ref(remote),
            seen: theirs,
            leased: true,
        });
    }
    Ok(NotesSync { action, merged })
}

/// The PR branch travels with its workflow: pushed (never forced) when this clone has more
/// of it, moved forward here when the remote has more, and never moved under a working tree
/// with changes git would have to overwrite.
fn sync_branch(
    session: &Session,
    remote: &str,
    workflow: &str,
    branch: &str,
    takes: &mut Takes,
    selected: bool,
    out: &mut Reconciled,
) -> Result<(), EngineError> {
    let store = &session.store;
    let reference = LocalRef::Branch(branch);
    let ours = store.local_tip(reference)?;
    let theirs = store.tracking_branch(remote, branch)?;
    let standing = match (ours, theirs) {
        (Some(a), Some(b)) => match standing_by_ancestry(session, a, b) {
            Ok(standing) => Some(standing),
            Err(e) => {
                out.warnings.push(
                    Notice::Skipped {
                        what: format!("branch {branch} of workflow {workflow}"),
                        why: e.to_string(),
                    }
                    .to_string(),
                );
                return Ok(());
            }
        },
        _ => None,
    };
    let tracking = tracking_branch_ref(remote, branch);
    let take = takes.side_for(selected, &tracking, theirs);
    let action = plan(ours.is_some(), theirs.is_some(), standing, take);
    let mut synced = BranchSync {
        workflow: workflow.to_string(),
        branch: branch.to_string(),
        action,
        backup: None,
        not_moved: None,
    };
    let message = format!("sync {remote}: branch {branch} of workflow {workflow}");
    match (action, ours, theirs) {
        (Action::Adopt, None, Some(_)) => {
            if let Err(e) = session.git.create_tracking_branch(branch, &tracking) {
                synced.not_moved = Some(format!("git could not create it: {}", e.stderr.trim()));
            }
        }
        (Action::FastForward | Action::TakeRemote, Some(ours), Some(theirs)) => {
            if action == Action::TakeRemote {
                synced.backup = Some(store.backup(workflow, Backup::Branch, ours, &message)?);
            }
            synced.not_moved = move_branch(session, branch, ours, theirs, action, &message)?;
        }
        (Action::Push | Action::TakeLocal, Some(ours), theirs) => {
            if action == Action::TakeLocal
                && let Some(theirs) = theirs
            {
                synced.backup = Some(store.backup(workflow, Backup::Branch, theirs, &message)?);
            }
            out.pushes.push(Push {
                source: ours,
                target: reference.name(),
                tracking,
                seen: theirs,
                leased: action == Action::TakeLocal,
            });
        }
        _ => {}
    }
    out.branches.push(synced);
    Ok(())
}

/// Moves a local branch to `theirs`: by ref when no worktree has it checked out, by `git
/// merge --ff-only` (or `reset --keep` for `--take remote`) in this one. Returns why it was
/// not moved, when git refused.
fn move_branch(
    session: &Session,
    branch: &str,
    ours: ObjectId,
    theirs: ObjectId,
    action: Action,
    message: &str,
) -> Result<Option<String>, EngineError> {
    let checked_out = session.git.checked_out_branches()?;
    let here = session.store.head_branch()?;
    let Some((_, path)) = checked_out.iter().find(|(b, _)| b == branch) else {
        session
            .store
            .move_ref(LocalRef::Branch(branch), Some(ours), theirs, message)?;
        return Ok(None);
    };
    if here.as_deref() != Some(branch) {
        return Ok(Some(format!(
            "it is checked out in {}; update it there (`git merge --ff-only`) or run sync there",
            path.display()
        )));
    }
    // git moves a checked-out branch without a compare-and-swap: check just before.
    if session.store.local_tip(LocalRef::Branch(branch))? != Some(ours) {
        return Ok(Some(
            "it got a new commit while sync ran; run sync again".to_string(),
        ));
    }
    let target = theirs.to_string();
    let result = if action == Action::TakeRemote {
        session.git.reset_keep(&target)
    } else {
        session.git.merge_ff_only(&target)
    };
    let Err(e) = result else {
        return Ok(None);
    };
    // Advice to commit or stash fits only when there is something to commit or stash;
    // otherwise what git said is the whole story.
    let git = &session.git;
    let local_changes =
        !git.tracked_changes()?.trim().is_empty() || !git.untracked_files()?.is_empty();
    Ok(Some(if local_changes {
        format!(
            "git refused to move the checked-out branch: {}; commit or stash your changes and run sync again",
            e.stderr.trim()
        )
    } else {
        format!("git could not move the checked-out branch: {e}")
    }))
}

/// The state `init` adopts on a fresh clone.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Adoption {
    pub remote: String,
    pub tip: String,
    pub state: Status,
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
    let snapshot = session
        .store
        .read()?
        .ok_or_else(|| EngineError::Internal("an adopted workflow cannot be read".into()))?;
    let transitions = session.store.history_from(theirs, None, usize::MAX)?.len();
    Ok(Some(Adoption {
        remote: remote.to_string(),
        tip: theirs.to_string(),
        state: snapshot.state.status(),
        transitions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_combination_has_one_plan() {
        use Action::{Adopt, FastForward, Nothing, Push, TakeLocal, TakeRemote};
        use Standing::{Ahead, Behind, Equal};
        let cases = [
            (false, false, None, None, Nothing),
            (false, true, None, None, Adopt),
            (true, false, None, None, Push),
            (true, true, Some(Equal), None, Nothing),
            (true, true, Some(Behind), None, FastForward),
            (true, true, Some(Ahead), None, Push),
            (true, true, Some(Standing::Diverged), None, Action::Diverged),
            (
                true,
                true,
                Some(Standing::Diverged),
                Some(Side::Local),
                TakeLocal,
            ),
            (
                true,
                true,
                Some(Standing::Diverged),
                Some(Side::Remote),
                TakeRemote,
            ),
            // --take changes nothing that has not diverged.
            (true, true, Some(Behind), Some(Side::Local), FastForward),
            (true, true, Some(Ahead), Some(Side::Remote), Push),
            (false, true, None, Some(Side::Local), Adopt),
        ];
        for (local, remote, standing, take, expected) in cases {
            assert_eq!(
                plan(local, remote, standing, take),
                expected,
                "{local} {remote} {standing:?} {take:?}"
            );
        }
    }
}
