//! The verification notes on a server (docs/refs.md, "refs/notes/orchestrator"): the server
//! hook takes a push to them only when it keeps what the commits on main carry (main as the
//! push leaves it) as it is: no deletion, no history rewritten, and the note the server holds
//! for a commit on main neither removed nor changed (a line taken out, added or reordered).
//! The product writes a commit's records before it is merged (the checkpoints as they are
//! made, the squash's final record before the merge) and pushes them before the merge or in
//! the merge's own atomic push (src/engine/get_task/landing.rs), so a first note on a commit
//! that was on main before the push is no flow of its own either: only a listed human, who
//! may move main as they like, adds one.

use std::collections::{BTreeMap, BTreeSet};

use super::verifier::Judged;
use crate::engine::EngineError;

/// Why the hook refuses the move of `refs/notes/orchestrator` from `old` to `new`; `None`
/// when it only adds notes on commits not on main or brought onto it by this push, or changes
/// those of commits not on main. The commits on main are those on it once the push lands:
/// `main_before`, the server's main as the hook found it when it started (read once: another
/// push may move the ref while this one is judged, and its commits are not this push's
/// business), and `main_after`, where the same push moves main (a merge brings its PR's
/// commits onto main with it, and their notes are then a merged commit's record too). A first
/// note is refused only on a commit of `main_before`, unless `human`: one pushed with the
/// merge that brings its commit is the landing's own.
pub fn refusal(
    judged: &Judged,
    (old, new): (Option<&str>, Option<&str>),
    (main_before, main_after): (Option<&str>, Option<&str>),
    human: bool,
) -> Result<Option<String>, EngineError> {
    let Some(new) = new else {
        return Ok(Some(format!(
            "deletes the verification notes ({}): the record of what was verified is only \
             added to",
            crate::store::NOTES_REF
        )));
    };
    // What the server has: read as leniently as it was taken before this guard (two entries
    // for one object keep the lines of both). None yet: every note pushed is a first one.
    let entries = match old {
        Some(old) => {
            if !judged.git.is_ancestor(old, new).unwrap_or(false) {
                return Ok(Some(
                    "rewrites the verification notes: a push may only add notes on top of them \
                     (sync merges two clones' notes by the union of their lines)"
                        .into(),
                ));
            }
            judged.git.notes_entries(old)?
        }
        None => Vec::new(),
    };
    let after = match notes_by_object(judged, new, &entries)? {
        Ok(notes) => notes,
        Err(why) => return Ok(Some(why)),
    };
    let mains: Vec<String> = main_before
        .into_iter()
        .chain(main_after)
        .map(str::to_string)
        .collect();
    if mains.is_empty() {
        return Ok(None);
    }
    let on_main = |object: &str| {
        mains
            .iter()
            .any(|main| judged.git.is_ancestor(object, main).unwrap_or(false))
    };
    let mut before: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, _, blob, path) in entries {
        let object: String = path.chars().filter(|c| *c != '/').collect();
        before.entry(object).or_default().push(blob);
    }
    if !human && let Some(main) = main_before {
        // A commit on main before this push that had no note: no landing writes its record
        // now, so one pushed for it is someone's word after the fact (a forged pass on a
        // human's commit or an old merge).
        for object in after.keys().filter(|object| !before.contains_key(*object)) {
            if judged.git.is_ancestor(object, main).unwrap_or(false) {
                return Ok(Some(format!(
                    "adds a first note on {}, a commit on main before this push that had none: \
                     a commit's record is written before it is merged and pushed with the merge \
                     at the latest",
                    crate::short_id(object)
                )));
            }
        }
    }
    for (object, blobs) in before {
        let now = after.get(&object);
        if now == Some(&blobs) {
            continue;
        }
        if !on_main(&object) {
            continue;
        }
        let Some(now) = now else {
            return Ok(Some(format!(
                "removes the note on {}, a commit on main: a merged commit's record is kept",
                crate::short_id(&object)
            )));
        };
        if let Some(line) = missing_line(judged, &blobs, now)? {
            return Ok(Some(format!(
                "takes a line out of the note on {}, a commit on main ({line:?}): a merged \
                 commit's record keeps every line it had",
                crate::short_id(&object)
            )));
        }
        if let Some(line) = missing_line(judged, now, &blobs)? {
            return Ok(Some(format!(
                "adds a line to the note on {}, a commit on main ({line:?}): a merged commit's \
                 record stays as it was merged",
                crate::short_id(&object)
            )));
        }
        return Ok(Some(format!(
            "rewrites the note on {}, a commit on main (its lines in another order or \
             spelling): a merged commit's record stays as it was merged",
            crate::short_id(&object)
        )));
    }
    Ok(None)
}

/// The notes of the notes commit `commit`, by annotated object; `Err` names an entry that is
/// no note (not a regular file, not named by a full object id) or a second note for one
/// object, which git and every clone's reader refuse. An entry the server already holds as it
/// is (`kept`, written before this guard) is not this push's doing: it is taken as it was.
fn notes_by_object(
    judged: &Judged,
    commit: &str,
    kept: &[(String, String, String, String)],
) -> Result<Result<BTreeMap<String, Vec<String>>, String>, EngineError> {
    let kept: BTreeSet<&(String, String, String, String)> = kept.iter().collect();
    // Per object: its blobs, and the path of an entry this push brought, if any.
    let mut notes: BTreeMap<String, (Vec<String>, Option<String>)> = BTreeMap::new();
    for entry in judged.git.notes_entries(commit)? {
        let unchanged = kept.contains(&entry);
        let (mode, kind, blob, path) = entry;
        let object: String = path.chars().filter(|c| *c != '/').collect();
        if !unchanged
            && (mode != "100644"
                || kind != "blob"
                || !crate::exec::git::is_full_object_id(&object)
                || !fanned_out_as_git_reads(&path))
        {
            return Ok(Err(format!(
                "holds {path:?} ({mode} {kind}), which is no note: a note is a regular file named \
                 by the object it is on"
            )));
        }
        let (blobs, brought) = notes.entry(object).or_default();
        blobs.push(blob);
        if !unchanged {
            *brought = Some(path);
        }
    }
    let mut out = BTreeMap::new();
    for (object, (blobs, brought)) in notes {
        if let (true, Some(path)) = (blobs.len() > 1, brought) {
            return Ok(Err(format!(
                "holds two notes for {} ({path:?} and another): git and every clone's reader \
                 refuse such a tree",
                crate::short_id(&object)
            )));
        }
        out.insert(object, blobs);
    }
    Ok(Ok(out))
}

/// The first line of the note blobs `these` that none of the blobs `others` holds; a blob
/// over the cap counts as holding nothing.
fn missing_line(
    judged: &Judged,
    these: &[String],
    others: &[String],
) -> Result<Option<String>, EngineError> {
    let read = |blob: &String| -> Result<String, EngineError> {
        Ok(judged
            .git
            .blob_within(blob, crate::input::CAP)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default())
    };
    let these = these.iter().map(read).collect::<Result<Vec<_>, _>>()?;
    let others = others.iter().map(read).collect::<Result<Vec<_>, _>>()?;
    let kept: BTreeSet<&str> = others.iter().flat_map(|text| text.lines()).collect();
    let mut missing = these
        .iter()
        .flat_map(|text| text.lines())
        .filter(|line| !kept.contains(line));
    // The line to name: one with something in it, where there is one (`git notes append`
    // puts a blank line before what it adds).
    let first = missing.next();
    Ok(first
        .filter(|line| !line.trim().is_empty())
        .or_else(|| missing.find(|line| !line.trim().is_empty()))
        .or(first)
        .map(|line| line.chars().take(80).collect()))
}

/// Whether git reads a note at `path`: every directory on the way two hex digits (git's
/// fan-out), the rest of the id the file's name. A note at `abcd/ef…` is no note to git, so
/// moving one there would hide it as well as removing it.
fn fanned_out_as_git_reads(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts
        .iter()
        .all(|dir| dir.len() == 2 && dir.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::fanned_out_as_git_reads;

    #[test]
    fn only_two_hex_digit_directories_are_a_fan_out_git_reads() {
        let id = "1b147cb8c042f1d50c3e702bf329d19beadefad4";
        for (path, read) in [
            (id.to_string(), true),
            (format!("{}/{}", &id[..2], &id[2..]), true),
            (format!("{}/{}/{}", &id[..2], &id[2..4], &id[4..]), true),
            (format!("{}/{}", &id[..4], &id[4..]), false),
            (format!("{}/{}", &id[..1], &id[1..]), false),
            (format!("zz/{}", &id[2..]), false),
        ] {
            assert_eq!(fanned_out_as_git_reads(&path), read, "{path}");
        }
    }
}
