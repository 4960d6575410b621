//! The CI job's signed verdicts (docs/ci.md, "A signed verdict from CI"): the server hook
//! takes a push to `refs/notes/orchestrator-attest-ci` only when it adds or replaces notes,
//! each a verdict about its own commit signed by a verifier main's
//! `.orchestrate/allowed_signers` lists for `git-orchestrate-attest`, and removes none. Every
//! other verdict notes ref stays the server's alone (docs/ci.md, "A signed verdict from CI").

use std::collections::BTreeMap;

use super::seal::split_note;
use super::verifier::Judged;
use crate::engine::EngineError;
use crate::exec::ssh::{self, Verified};

/// Why the hook refuses the move of the CI verdicts from `old` to `new`; `None` when every
/// note it adds or changes is signed by a listed verifier and none is removed.
pub fn refusal(
    judged: &Judged,
    old: Option<&str>,
    new: Option<&str>,
) -> Result<Option<String>, EngineError> {
    let Some(new) = new else {
        return Ok(Some(
            "deletes the CI job's verdicts: they are only ever added to".into(),
        ));
    };
    if let Some(old) = old
        && !judged.git.is_ancestor(old, new).unwrap_or(false)
    {
        return Ok(Some(
            "rewrites the CI job's verdicts: a push may only add notes on top of them".into(),
        ));
    }
    let allowed = main_allowed_signers(judged)?;
    if allowed.is_empty() {
        return Ok(Some(format!(
            "main's {} lists no verifier, so no CI verdict can be checked",
            crate::config::ALLOWED_SIGNERS
        )));
    }
    let before = match old {
        Some(old) => match notes_of(judged, old)? {
            Ok(notes) => notes,
            Err(why) => return Ok(Some(why)),
        },
        None => BTreeMap::new(),
    };
    let after = match notes_of(judged, new)? {
        Ok(notes) => notes,
        Err(why) => return Ok(Some(why)),
    };
    if let Some(gone) = before.keys().find(|object| !after.contains_key(*object)) {
        return Ok(Some(format!(
            "removes the CI verdict on {}: verdicts are only added or replaced",
            crate::short_id(gone)
        )));
    }
    let program = ssh::ssh_keygen(&[]).map_err(|e| EngineError::Io {
        what: "check a CI verdict's signature".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    for (object, blob) in &after {
        if before.get(object) == Some(blob) {
            continue;
        }
        // Read once: judged for what it replaces, then for its signature.
        let note = Note::read(judged, blob)?;
        // A tree that failed stays failed (docs/integrity.md, "A tree that failed stays
        // failed"): an older signed PASSED, or a later lucky one, does not go over a FAILED
        // verdict.
        if let Some(old_blob) = before.get(object)
            && Note::read(judged, old_blob)?.is_some_and(|old| old.result() == Some("FAILED"))
            && note.as_ref().and_then(Note::result) != Some("FAILED")
        {
            return Ok(Some(format!(
                "replaces the FAILED CI verdict on {} with one that is not: a commit that \
                 failed stays failed",
                crate::short_id(object)
            )));
        }
        if let Some(why) = unsigned(&program, &allowed, object, note.as_ref())? {
            return Ok(Some(format!(
                "the CI verdict on {} {why}: only verdicts signed by a verifier main's {} lists \
                 for {} are taken",
                crate::short_id(object),
                crate::config::ALLOWED_SIGNERS,
                ssh::ATTEST_NAMESPACE
            )));
        }
    }
    Ok(None)
}

/// The notes of the notes commit `commit`, by annotated object; `Err` names what is no note.
fn notes_of(
    judged: &Judged,
    commit: &str,
) -> Result<Result<BTreeMap<String, String>, String>, EngineError> {
    let Ok(entries) = judged.git.notes_tree(commit) else {
        return Ok(Err(format!(
            "{} is not a notes commit",
            crate::short_id(commit)
        )));
    };
    let mut notes = BTreeMap::new();
    for (path, kind, object) in entries {
        let id: String = path.chars().filter(|c| *c != '/').collect();
        if kind != "blob" || !crate::exec::git::is_full_object_id(&id) {
            return Ok(Err(format!("holds {path:?}, which is no note on a commit")));
        }
        notes.insert(id, object);
    }
    Ok(Ok(notes))
}

/// Main's `.orchestrate/allowed_signers` in the judged repository: the verifiers whose
/// verdicts count (empty when main has none; over the cap it lists nobody).
pub fn main_allowed_signers(judged: &Judged) -> Result<Vec<u8>, EngineError> {
    Ok(match judged.main_rev()? {
        Some((rev, _)) => judged
            .git
            .show(&rev, crate::config::ALLOWED_SIGNERS)?
            .filter(|bytes| bytes.len() as u64 <= crate::input::CAP)
            .unwrap_or_default(),
        None => Vec::new(),
    })
}

/// A verdict note's blob, read once: its statement line, the signature after it, and the
/// statement when the line is one.
struct Note {
    line: String,
    signature: Option<String>,
    statement: Option<serde_json::Value>,
}

impl Note {
    /// The note `blob`; `None` when it is over the cap.
    fn read(judged: &Judged, blob: &str) -> Result<Option<Note>, EngineError> {
        let Some(bytes) = judged.git.blob_within(blob, crate::input::CAP)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        let (line, signature) = split_note(&text);
        Ok(Some(Note {
            line: line.to_string(),
            signature: signature.map(str::to_string),
            statement: serde_json::from_str(line).ok(),
        }))
    }

    /// The statement's `verificationResult`, if it has one.
    fn result(&self) -> Option<&str> {
        self.statement.as_ref()?["predicate"]["verificationResult"].as_str()
    }
}

/// Why `note` on `object` is no verdict a listed verifier signed, if it is not.
fn unsigned(
    program: &std::path::Path,
    allowed: &[u8],
    object: &str,
    note: Option<&Note>,
) -> Result<Option<String>, EngineError> {
    let Some(note) = note else {
        return Ok(Some("is too large to be a verdict".into()));
    };
    let Some(statement) = &note.statement else {
        return Ok(Some("is not a statement".into()));
    };
    if super::seal::subject_commit(statement) != Some(object) {
        return Ok(Some("is a statement about another commit".into()));
    }
    let (line, signature) = (&note.line, note.signature.as_deref());
    let Some(signature) = signature else {
        return Ok(Some("is not signed".into()));
    };
    let checked = ssh::verify_in(
        program,
        allowed,
        ssh::ATTEST_NAMESPACE,
        signature,
        format!("{line}\n").as_bytes(),
    )
    .map_err(|e| EngineError::Io {
        what: "check a CI verdict's signature".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(match checked {
        Verified::Good { .. } => None,
        Verified::NotAllowed { .. } => Some("is signed by a key main does not list".into()),
        Verified::Bad { .. } => Some("has a signature that does not hold".into()),
    })
}
