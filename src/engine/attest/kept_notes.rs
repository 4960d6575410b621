//! The verification notes on a server (docs/refs.md, "refs/notes/orchestrator"): the server
//! hook takes a push to them only when it keeps what the commits on main carry: no deletion,
//! no history rewritten, and no note of a commit on main removed or any of its lines taken
//! out (two clones' notes merge by the union of their lines, so lines are only ever added).

use std::collections::BTreeSet;

use super::verifier::Judged;
use crate::engine::EngineError;

/// Why the hook refuses the move of `refs/notes/orchestrator` from `old` to `new`; `None`
/// when it only adds.
pub fn refusal(
    judged: &Judged,
    old: Option<&str>,
    new: Option<&str>,
) -> Result<Option<String>, EngineError> {
    let Some(new) = new else {
        return Ok(Some(format!(
            "deletes the verification notes ({}): the record of what was verified is only \
             added to",
            crate::store::NOTES_REF
        )));
    };
    let Some(old) = old else {
        return Ok(None);
    };
    if !judged.git.is_ancestor(old, new).unwrap_or(false) {
        return Ok(Some(
            "rewrites the verification notes: a push may only add notes on top of them (sync \
             merges two clones' notes by the union of their lines)"
                .into(),
        ));
    }
    let Some((main, _)) = judged.main_rev()? else {
        return Ok(None);
    };
    for (object, before, after) in judged.git.notes_changed(old, new)? {
        let Some(before) = before else {
            continue;
        };
        if !judged.git.is_ancestor(&object, &main).unwrap_or(false) {
            continue;
        }
        let Some(after) = after else {
            return Ok(Some(format!(
                "removes the note on {}, a commit on main: a merged commit's record is kept",
                crate::short_id(&object)
            )));
        };
        if let Some(line) = dropped_line(judged, &before, &after)? {
            return Ok(Some(format!(
                "takes a line out of the note on {}, a commit on main ({line:?}): a merged \
                 commit's record keeps every line it had",
                crate::short_id(&object)
            )));
        }
    }
    Ok(None)
}

/// The first line of the note blob `before` that `after` does not hold; a blob over the cap
/// counts as holding nothing.
fn dropped_line(judged: &Judged, before: &str, after: &str) -> Result<Option<String>, EngineError> {
    let read = |blob: &str| -> Result<String, EngineError> {
        Ok(judged
            .git
            .blob_within(blob, crate::input::CAP)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default())
    };
    let (before, after) = (read(before)?, read(after)?);
    let kept: BTreeSet<&str> = after.lines().collect();
    Ok(before
        .lines()
        .find(|line| !kept.contains(line))
        .map(|line| line.chars().take(80).collect()))
}
