//! What an attestation note on a commit is worth to `verify` (docs/integrity.md, "attest"):
//! a verdict counts only when a verifier's key listed on main signed it; an unsigned note
//! is anyone's word, since whoever can write this clone's notes could have written it.

use serde::Serialize;

use crate::engine::{EngineError, Session};
use crate::exec::ssh::{self, Verified};

/// An attestation note, judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Attestation {
    /// PASSED, signed by a key main's `.orchestrate/allowed_signers` lists for the
    /// `git-orchestrate-attest` namespace.
    Passed { verifier: String },
    /// FAILED, signed by a listed verifier (an unsigned one is [`Attestation::Unauthenticated`]).
    Failed { reasons: Vec<String> },
    /// A verdict nothing backs: no signature, or one no listed verifier made.
    Unauthenticated { why: String },
    /// A merge on main with no attestation note.
    None,
}

impl Attestation {
    /// Whether `verify` counts it as a failure.
    pub fn fails(&self) -> bool {
        matches!(self, Attestation::Failed { .. })
    }
}

/// The statement line and the signature that follows it, as [`super::note_text`] writes them.
pub fn split_note(text: &str) -> (&str, Option<&str>) {
    match text.split_once('\n') {
        Some((line, rest)) if !rest.trim().is_empty() => (line, Some(rest)),
        Some((line, _)) => (line, None),
        None => (text, None),
    }
}

/// The commit a verdict's statement is about: its first subject's `gitCommit`. A note is a
/// verdict on the commit it is attached to only when this is that commit (a statement copied
/// onto another commit says nothing about it).
pub fn subject_commit(statement: &serde_json::Value) -> Option<&str> {
    statement["subject"]
        .as_array()
        .and_then(|s| s.first())
        .and_then(|s| s["digest"]["gitCommit"].as_str())
}

/// What the attestation notes on `commit` (this clone's, the remotes') say, judged: a FAILED
/// one that a listed verifier signed, else the first such PASSED one, else the first. A
/// commit that a verifier failed stays failed whatever another says (docs/integrity.md, "A tree that failed stays failed"): the
/// server's FAILED is not outvoted by a CI job's PASSED, nor the other way round.
/// `None` when it has none.
pub fn judge_note(
    session: &Session,
    main: &str,
    commit: &str,
) -> Result<Option<Attestation>, EngineError> {
    let mut judged = Vec::new();
    for text in session.store.attest_notes(commit)? {
        judged.push(judge_one(session, main, commit, &text)?);
    }
    let pick = |want: fn(&Attestation) -> bool| judged.iter().position(want);
    let best = pick(|a| matches!(a, Attestation::Failed { .. }))
        .or_else(|| pick(|a| matches!(a, Attestation::Passed { .. })))
        .or(if judged.is_empty() { None } else { Some(0) });
    Ok(best.map(|i| judged.swap_remove(i)))
}

/// Each attestation note on `commit`, judged, with the notes ref that holds it (this
/// clone's first, then the remotes' as last fetched): what the board's timeline lists.
pub fn judge_each(
    session: &Session,
    main: &str,
    commit: &str,
) -> Result<Vec<(String, Attestation)>, EngineError> {
    let mut out = Vec::new();
    for (notes_ref, text) in session.store.attest_notes_by_ref(commit)? {
        out.push((notes_ref, judge_one(session, main, commit, &text)?));
    }
    Ok(out)
}

fn judge_one(
    session: &Session,
    main: &str,
    commit: &str,
    text: &str,
) -> Result<Attestation, EngineError> {
    let (line, signature) = split_note(text);
    let statement: serde_json::Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return Ok(Attestation::Unauthenticated {
                why: format!("the note is not a statement: {e}"),
            });
        }
    };
    let predicate = &statement["predicate"];
    if subject_commit(&statement) != Some(commit) {
        return Ok(Attestation::Unauthenticated {
            why: "its statement is about another commit".into(),
        });
    }
    let passed = predicate["verificationResult"] == "PASSED";
    let Some(signature) = signature else {
        // A FAILED verdict nobody signed is anyone's word too: a note pushed under another
        // notes ref would otherwise turn an honest merge into a failure (docs/integrity.md).
        return Ok(Attestation::Unauthenticated {
            why: format!(
                "an unsigned {} verdict: whoever can write this clone's notes could have written it",
                if passed { "PASSED" } else { "FAILED" }
            ),
        });
    };
    let allowed = match session
        .store
        .file_id_at_branch(main, crate::config::ALLOWED_SIGNERS)?
        .and_then(|(_, blob)| blob)
    {
        // Over the cap it lists nobody.
        Some(blob) => session
            .store
            .blob_within(&blob, crate::input::CAP)?
            .unwrap_or_default(),
        None => Vec::new(),
    };
    if allowed.is_empty() {
        return Ok(Attestation::Unauthenticated {
            why: format!(
                "signed, but {main}:{} lists no verifier to check it against",
                crate::config::ALLOWED_SIGNERS
            ),
        });
    }
    let program = crate::engine::answers::ssh_keygen(session)?;
    let checked = ssh::verify_in(
        &program,
        &allowed,
        ssh::ATTEST_NAMESPACE,
        signature,
        format!("{line}\n").as_bytes(),
    )
    .map_err(|e| EngineError::Io {
        what: "check the attestation's signature".into(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(match checked {
        Verified::Good { principal } if passed => Attestation::Passed {
            verifier: principal,
        },
        Verified::Good { .. } => Attestation::Failed {
            reasons: predicate["gitOrchestrate"]["reasons"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        },
        Verified::NotAllowed { .. } => Attestation::Unauthenticated {
            why: "signed by a key main's allowed_signers does not list as a verifier".into(),
        },
        Verified::Bad { message } => Attestation::Unauthenticated {
            why: format!("its signature does not hold: {}", message.trim()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_its_statement_line_and_the_signature_after_it() {
        assert_eq!(split_note("{}\n"), ("{}", None));
        assert_eq!(split_note("{}"), ("{}", None));
        assert_eq!(
            split_note("{}\n-----BEGIN SSH SIGNATURE-----\nx\n"),
            ("{}", Some("-----BEGIN SSH SIGNATURE-----\nx\n"))
        );
    }
}
