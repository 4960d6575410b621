//! One round of `sync`: every local ref compared with what was just fetched, the local
//! moves carried out, and what is left to push.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::plan::{Action, Push, Side, plan};
use super::report::{BranchSync, NotesSync, WorkflowSync};
use crate::engine::{EngineError, Session, WorkflowState};
use crate::store::{
    self, Backup, LocalRef, Relation, Standing, Store, StoreError, tracking_branch_ref,
    tracking_notes_ref, tracking_ref,
};
use crate::workflow::briefing::Notice;

/// `--take` decides against the remote tip the user was shown: when a retry finds another
/// tip there, the ref is reported as diverged again instead.
pub(super) struct Takes {
    pub(super) side: Option<Side>,
    /// The remote tip of each ref (by its remote-tracking name) when `--take` first met it.
    pub(super) first_seen: BTreeMap<String, Option<ObjectId>>,
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
pub(super) fn carry_over(before: &Reconciled, now: &mut Reconciled) {
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

pub(super) struct Reconciled {
    pub(super) workflows: Vec<WorkflowSync>,
    pub(super) notes: NotesSync,
    pub(super) branches: Vec<BranchSync>,
    pub(super) pushes: Vec<Push>,
    pub(super) warnings: Vec<String>,
}

impl Reconciled {
    /// One ref left alone, with why: the rest of the round goes on.
    fn skip(&mut self, what: String, why: String) {
        self.warnings
            .push(Notice::Skipped { what, why }.to_string());
    }
}

/// How far back a divergence report lists each side's transitions.
const DIVERGED_LISTED: usize = 20;

/// Compares every local ref with what was just fetched, carries out the local moves, and
/// returns what is left to push. A local compare-and-swap that loses a race is
/// [`EngineError::Conflict`]: the round is re-run.
pub(super) fn reconcile(
    session: &Session,
    remote: &str,
    takes: &mut Takes,
) -> Result<Reconciled, EngineError> {
    let store = &session.store;
    let mut pushes = Vec::new();
    let mut warnings = Vec::new();
    let mut local = store.local_workflows()?;
    let tracked = store.tracking_workflows(remote)?;
    let archived = super::archive::sync_archive(
        session,
        remote,
        &mut local,
        &tracked,
        &mut pushes,
        &mut warnings,
    )?;
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
        pushes,
        warnings,
    };
    let mut live = std::collections::BTreeSet::new();
    for name in names {
        // Archived (here, or by the remote's archive just taken in): no live ref of it is
        // adopted again, and the remote's is deleted with the archive that holds it.
        if super::archive::archived_away(name, &local, &tracked, &archived, remote, &mut out.pushes)
        {
            continue;
        }
        live.insert(name.clone());
        if !store::valid_workflow_name(name) {
            out.skip(
                format!(
                    "a workflow ref with an invalid name: {}",
                    tracking_ref(remote, name)
                ),
                String::new(),
            );
            continue;
        }
        let sides = Sides {
            ours: local.get(name).copied(),
            theirs: tracked.get(name).copied(),
        };
        reconcile_workflow(session, remote, name, sides, takes, &mut out)?;
    }
    super::archive::archive_claims(session, remote, &live, &archived, &mut out.pushes)?;
    out.notes = sync_notes(session, remote, &mut out.pushes)?;
    sync_runs(session, remote, &mut out)?;
    Ok(out)
}

/// The run records travel like the notes (docs/board.md, "The ledger"): adopted or moved
/// forward here when the remote has more, pushed with a lease when this clone has more.
/// Two records that diverged (two clones drove one workflow) are each kept where they are,
/// with a warning: a record is a log of turns, and a merge would hide one side's.
fn sync_runs(session: &Session, remote: &str, out: &mut Reconciled) -> Result<(), EngineError> {
    let store = &session.store;
    let local = store.local_runs()?;
    let tracked = store.tracking_runs(remote)?;
    let mut names: Vec<&String> = local.keys().chain(tracked.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        if !store::valid_workflow_name(name) {
            continue;
        }
        let (ours, theirs) = (local.get(name).copied(), tracked.get(name).copied());
        let standing = match (ours, theirs) {
            (Some(a), Some(b)) => Some(standing_by_ancestry(session, a, b)?),
            _ => None,
        };
        let message = format!("sync {remote}: run record of {name}");
        match (plan(ours.is_some(), theirs.is_some(), standing, None), theirs) {
            (Action::Adopt | Action::FastForward, Some(theirs)) => {
                store.move_runs(name, ours, theirs, &message)?;
            }
            (Action::Push, _) => {
                if let Some(ours) = ours {
                    out.pushes.push(Push {
                        source: Some(ours),
                        target: store::runs_ref(name),
                        tracking: format!("{}{name}", store::tracking_runs_prefix(remote)),
                        seen: theirs,
                        leased: true,
                    });
                }
            }
            (Action::Diverged, _) => out.skip(
                format!("the run record of workflow {name}"),
                format!(
                    "it differs here and on {remote} (two clones ran turns of it): each keeps its own"
                ),
            ),
            _ => {}
        }
    }
    Ok(())
}

/// A ref's tip here and on the remote (`None`: absent).
#[derive(Clone, Copy)]
struct Sides {
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
}

/// Plans and carries out one workflow's move, then its PR branch's.
fn reconcile_workflow(
    session: &Session,
    remote: &str,
    name: &str,
    sides: Sides,
    takes: &mut Takes,
    out: &mut Reconciled,
) -> Result<(), EngineError> {
    let store = &session.store;
    let Sides { ours, theirs } = sides;
    // One broken ref (a tip that is not a transition) is skipped, not fatal to the rest.
    let relation = match (ours, theirs) {
        (Some(a), Some(b)) => match store.relation(a, b) {
            Ok(relation) => Some(relation),
            Err(e) => {
                out.skip(format!("workflow {name}"), e.to_string());
                return Ok(());
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
    let backup = move_workflow(session, remote, name, action, sides, out)?;
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
        Some(tip) => match read_branch(store, tip, &LocalRef::Workflow(name).name()) {
            Ok(read) => Some(read),
            Err(e) => {
                out.warnings.push(e.to_string());
                None
            }
        },
        None => None,
    };
    if let Some((_, Some(branch), main)) = &state {
        branch_of(
            session,
            remote,
            name,
            branch,
            main.as_deref(),
            takes,
            this_one,
            out,
        )?;
    }
    let state = state.map(|(state, _, _)| state);
    out.workflows.push(WorkflowSync {
        workflow: name.to_string(),
        action,
        tip: tip.map(|t| t.to_string()),
        remote_tip: theirs.map(|t| t.to_string()),
        state,
        ahead: relation.map_or(0, |r| r.ahead),
        behind: relation.map_or(0, |r| r.behind),
        base: relation.and_then(|r| r.base).map(|b| b.to_string()),
        local_since,
        remote_since,
        backup,
    });
    Ok(())
}

/// Carries out `action` on the workflow's ref here, or queues its push; where `--take` kept
/// the tip it moved away from.
fn move_workflow(
    session: &Session,
    remote: &str,
    name: &str,
    action: Action,
    sides: Sides,
    out: &mut Reconciled,
) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let reference = LocalRef::Workflow(name);
    let mut backup = None;
    let message = |what: &str| format!("sync {remote}: {what} workflow {name}");
    match (action, sides.ours, sides.theirs) {
        (Action::Adopt, None, Some(theirs)) => {
            store.move_ref(reference, None, theirs, &message("adopt"))?
        }
        (Action::FastForward, Some(ours), Some(theirs)) => {
            store.move_ref(reference, Some(ours), theirs, &message("fast-forward"))?
        }
        (Action::TakeRemote, Some(ours), Some(theirs)) => {
            backup =
                Some(store.backup(name, Backup::State, ours, &message("keep the local tip of"))?);
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
    Ok(backup)
}

/// A workflow's state at `tip`, the branch it works on and its main branch: a TDD
/// workflow's PR branch, or a ticket's branch (docs/tickets.md), which travels the same way.
type BranchOf = (WorkflowState, Option<String>, Option<String>);

pub(super) fn read_branch(
    store: &Store,
    tip: ObjectId,
    reference: &str,
) -> Result<BranchOf, StoreError> {
    if let Some(snap) = store.ticket_at(tip, reference)? {
        let t = snap.ticket;
        return Ok((
            WorkflowState::Ticket(t.state),
            Some(t.branch),
            Some(t.main_branch),
        ));
    }
    let state = store.read_at(tip, reference)?.state;
    Ok((
        WorkflowState::Tdd(state.status()),
        state.branch().map(str::to_string),
        state.main_branch.clone(),
    ))
}

/// Syncs the branch a workflow names, once per branch, when it is one the workflow could
/// have created.
#[allow(clippy::too_many_arguments)]
fn branch_of(
    session: &Session,
    remote: &str,
    name: &str,
    branch: &str,
    main_branch: Option<&str>,
    takes: &mut Takes,
    this_one: bool,
    out: &mut Reconciled,
) -> Result<(), EngineError> {
    if out.branches.iter().any(|b| b.branch == *branch) {
        return Ok(());
    }
    // The name comes from state another clone wrote: it must be a branch the workflow
    // could have created, never an option to git and never the main branch.
    if !store::is_valid_branch_name(branch)
        || branch.starts_with('-')
        || main_branch == Some(branch)
    {
        out.warnings.push(
            Notice::BranchNotTouched {
                workflow: name.to_string(),
                branch: branch.to_string(),
            }
            .to_string(),
        );
        return Ok(());
    }
    sync_branch(session, remote, name, branch, takes, this_one, out)
}

fn state_push(remote: &str, name: &str, ours: ObjectId, theirs: Option<ObjectId>) -> Push {
    Push {
        source: Some(ours),
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
pub(super) fn sync_notes(
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
            source: Some(tip),
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
                out.skip(
                    format!("branch {branch} of workflow {workflow}"),
                    e.to_string(),
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
                source: Some(ours),
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
