//! Where main is checked out, and how `get-task`'s own steps move it: brought up to the
//! remote's main before a PR branch is made or merged, the merge landed on it (in this
//! worktree, in the other worktree that has main checked out, or on the ref alone) and
//! pushed with a lease, and taken back when the remote refuses it (docs/architecture.md,
//! "Finalization and merge").

use std::path::PathBuf;

use super::blocked::Blocked;
use crate::engine::{EngineError, Session};
use crate::store::branch_ref;

/// Where main is checked out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum MainAt {
    /// In this worktree: it moves with its files here.
    Here,
    /// In another worktree of this repository (git refuses to check it out here too): it
    /// moves with that worktree's files, and only when they are clean.
    Elsewhere(PathBuf),
    /// Nowhere: the ref alone moves.
    Nowhere,
}

pub(super) fn main_at(session: &Session, main: &str) -> Result<MainAt, EngineError> {
    if session.store.head_branch()?.as_deref() == Some(main) {
        return Ok(MainAt::Here);
    }
    Ok(match session.branch_worktree(main)? {
        Some(worktree) => MainAt::Elsewhere(worktree),
        None => MainAt::Nowhere,
    })
}

/// Why main, checked out in `worktree`, must not move: the changes to its tracked files.
pub(super) fn dirty_elsewhere(
    session: &Session,
    main: &str,
    worktree: &std::path::Path,
) -> Result<Option<Blocked>, EngineError> {
    let changes = session.git.at(worktree).tracked_changes()?;
    Ok(
        (!changes.trim().is_empty()).then(|| Blocked::MainDirtyElsewhere {
            main: main.to_string(),
            worktree: worktree.display().to_string(),
            changes,
        }),
    )
}

/// Moves main from `from` to `to` where it is checked out: forward as a fast-forward of its
/// files, back (a merge the remote refused) keeping any local change; the bare ref only by
/// compare-and-swap. A main that is no longer at `from` is not moved.
pub(super) fn move_main(
    session: &Session,
    main: &str,
    at: &MainAt,
    from: &str,
    to: &str,
) -> Result<Result<(), Blocked>, EngineError> {
    let git = &session.git;
    let forward = git.is_ancestor(from, to)?;
    let in_worktree = |worktree: crate::exec::Git| {
        if worktree.rev_parse(&branch_ref(main))? != from {
            return Err(crate::exec::GitError {
                command: format!("(to move {main} from {from})"),
                status: None,
                stderr: format!("{main} moved meanwhile; it is left where it is"),
            });
        }
        if forward {
            worktree.fast_forward_quietly(to)
        } else {
            worktree.reset_keep(to)
        }
    };
    let moved = match at {
        MainAt::Here => in_worktree(git.clone()),
        MainAt::Elsewhere(worktree) => {
            if let Some(why) = dirty_elsewhere(session, main, worktree)? {
                return Ok(Err(why));
            }
            in_worktree(git.at(worktree))
        }
        MainAt::Nowhere => git.update_ref_cas(&branch_ref(main), to, Some(from)),
    };
    Ok(moved.map_err(|e| Blocked::Git(e.to_string())))
}

/// Brings local main up to `theirs` (the remote's main as just fetched) when that is a
/// fast-forward; a local main ahead of it (a merge not pushed yet, a human's commits) stays.
pub(super) fn catch_up(
    session: &Session,
    main: &str,
    at: &MainAt,
    remote: &str,
    theirs: &str,
) -> Result<Result<(), Blocked>, EngineError> {
    let git = &session.git;
    let local = git.rev_parse(&branch_ref(main))?;
    if local == theirs || git.is_ancestor(theirs, &local)? {
        return Ok(Ok(()));
    }
    if git.is_ancestor(&local, theirs)? {
        return move_main(session, main, at, &local, theirs);
    }
    Ok(Err(Blocked::Diverged {
        main: main.to_string(),
        remote: remote.to_string(),
        local,
        theirs: theirs.to_string(),
    }))
}

/// Fetches main from the workflow's remote, if it has one, and brings local main up to it.
/// `Ok(None)` without a remote; the remote's main as fetched (the push's lease) otherwise.
pub(super) fn up_to_remote(
    session: &Session,
    main: &str,
    at: &MainAt,
    remote: &str,
) -> Result<Result<Option<String>, Blocked>, EngineError> {
    let theirs = match crate::engine::remote::fetch_main(session, remote, main) {
        Ok(theirs) => theirs,
        Err(e) => return Ok(Err(Blocked::Git(e.to_string()))),
    };
    if let Some(theirs) = &theirs
        && let Err(why) = catch_up(session, main, at, remote, theirs)?
    {
        return Ok(Err(why));
    }
    Ok(Ok(theirs))
}
