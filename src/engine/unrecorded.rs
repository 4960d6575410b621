//! A checkpoint commit the workflow has not recorded (one the hooks made, or one a crash
//! cut short after `git commit`): whether it counts, and the note it is missing.

use super::verify::recorded_verification;
use super::{EngineError, Session, notes};
use crate::store::FoundCheckpoint;
use crate::workflow::State;
use crate::workflow::briefing::Notice;

/// Why a checkpoint commit made outside `git orchestrate checkpoint` does not count. It
/// counts when the workflow's chain records a preflight pass on exactly its tree under the
/// gates in force (the preflight cache: written at a submit, by `checkpoint` or by the
/// `commit-msg` hook), and when no gates are configured, since there is nothing to verify.
/// A note never counts: anyone can write one (docs/integrity.md). `None` when it counts.
pub(super) fn unverified(
    session: &Session,
    state: &State,
    found: &FoundCheckpoint,
) -> Result<Option<Notice>, EngineError> {
    let config = session.load_config(Some(state))?.config;
    if recorded_verification(Some(state), &config, &found.tree).is_some() {
        return Ok(None);
    }
    Ok(Some(Notice::UnverifiedCheckpoint {
        commit: found.commit.clone(),
        subject: found.subject.clone(),
        gates_changed: state
            .pr()
            .and_then(|pr| pr.preflight_cache.as_ref())
            .is_some_and(|c| c.tree == found.tree),
    }))
}

/// Attaches the note a checkpoint commit should carry when the workflow's own record
/// verified its tree but the note is missing: a checkpoint killed between `git commit` and
/// its note. Nothing happens when a passing note for the tree is there. The note says
/// `cached`, since the gates ran before the commit.
pub(super) fn attach_missing_note(
    session: &Session,
    state: &State,
    commit: &str,
    tree: &str,
) -> Result<(), EngineError> {
    let existing = session.store.notes()?.get(commit)?.unwrap_or_default();
    if crate::workflow::notes::checkpoint_records(&existing)
        .iter()
        .any(|r| r.passes(tree))
    {
        return Ok(());
    }
    let config = session.load_config(Some(state))?.config;
    // With gates and no record of them on this tree, the commit is not the workflow's to
    // vouch for.
    let Some(verification) = recorded_verification(Some(state), &config, tree) else {
        return Ok(());
    };
    let step = state.owed_checkpoint().map(|s| s.to_string());
    match verification.note(session.store.workflow(), step) {
        Some(note) => notes::record_checkpoint(session, commit, &note),
        None => Ok(()),
    }
}
