//! The git server's hooks (docs/integrity.md, "The server hook"): `attest --pre-receive`
//! judges every ref a push updates before git accepts any of it, reading the pushed objects
//! from the push's quarantine; `attest --post-receive` writes the verdicts of the accepted
//! moves of main as notes, which only the server writes.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::Serialize;

use super::judge;
use super::verdict::Verdict;
use super::verifier::{Chain, Confine, Judged, Verifier};
use crate::engine::chain::audit_chain;
use crate::engine::{EngineError, io_error};
use crate::store::ATTEST_NOTES_REF;

/// One line of a receive hook's input: `<old> <new> <ref>`; all-zero ids are `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    pub old: Option<String>,
    pub new: Option<String>,
    pub reference: String,
}

/// The hook's input, each line checked: two full hex ids and a ref name.
pub fn parse_updates(text: &str) -> Result<Vec<Update>, String> {
    let id = |field: &str, n: usize| -> Result<Option<String>, String> {
        if !crate::exec::git::is_full_object_id(field) {
            return Err(format!("line {n}: {field:?} is not an object id"));
        }
        Ok(Some(field.to_string()).filter(|f| f.bytes().any(|b| b != b'0')))
    };
    let mut updates = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let n = i + 1;
        let mut fields = line.split(' ');
        let (Some(old), Some(new), Some(reference), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(format!(
                "line {n}: expected \"<old> <new> <ref>\", found {line:?}"
            ));
        };
        if !reference.starts_with("refs/") || reference.chars().any(char::is_control) {
            return Err(format!("line {n}: {reference:?} is not a ref name"));
        }
        updates.push(Update {
            old: id(old, n)?,
            new: id(new, n)?,
            reference: reference.to_string(),
        });
    }
    Ok(updates)
}

/// Who pushed, as the server tells it: the key of a signed push's certificate (only when
/// git found the signature good and the nonce fresh), and the server's `REMOTE_USER`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pusher {
    pub key: Option<String>,
    pub user: Option<String>,
}

/// A ref update the hook refuses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub reference: String,
    pub commit: Option<String>,
    pub reason: String,
}

/// What the pre-receive hook decided.
#[derive(Clone, Debug, Serialize)]
pub struct ReceiveReport {
    pub refusals: Vec<Refusal>,
    /// The `[attest] humans` entry the pusher matched, if any.
    pub human: Option<String>,
    /// The main branch the hook guards.
    pub main: String,
    /// The verdicts on main's new first-parent commits.
    pub verdicts: Vec<Verdict>,
}

/// What a ref is to the hook.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Guarded<'a> {
    AttestNotes,
    Workflow(&'a str),
    /// A clone's own bookkeeping (`refs/orchestrator/remotes/*`, `…/backups/*`): no client
    /// writes it on a server, where a copy of a chain could stand in for the guarded one.
    Bookkeeping,
    /// `refs/replace/*`: git would show other objects in place of the ones pushed.
    Replace,
    Main,
    Other,
}

fn guarded<'a>(reference: &'a str, main: &str) -> Guarded<'a> {
    use crate::store::{branch_of_ref, is_bookkeeping_ref, is_local_workflow_ref, is_replace_ref};
    if reference == ATTEST_NOTES_REF || reference.starts_with(&format!("{ATTEST_NOTES_REF}/")) {
        return Guarded::AttestNotes;
    }
    if is_local_workflow_ref(reference)
        && let Some(name) = crate::store::workflow_of_ref(reference)
    {
        return Guarded::Workflow(name);
    }
    if is_bookkeeping_ref(reference) {
        return Guarded::Bookkeeping;
    }
    if is_replace_ref(reference) {
        return Guarded::Replace;
    }
    if branch_of_ref(reference) == Some(main) {
        return Guarded::Main;
    }
    Guarded::Other
}

/// `attest --pre-receive` in the bare repository `dir`: every update judged, every refusal
/// named. The push is accepted only when nothing is refused.
pub fn pre_receive(
    dir: &Path,
    updates: &[Update],
    pusher: &Pusher,
) -> Result<ReceiveReport, EngineError> {
    let judged = Judged::open(dir)?;
    let (main, config) = judged.main_config()?;
    let human = config
        .attest
        .human(pusher.key.as_deref(), pusher.user.as_deref())
        .map(str::to_string);
    let mut report = ReceiveReport {
        refusals: Vec::new(),
        human: human.clone(),
        main: main.clone(),
        verdicts: Vec::new(),
    };
    if let Some(why) = unguardable(&judged, &main, updates)? {
        report.refusals = updates
            .iter()
            .map(|u| Refusal {
                reference: u.reference.clone(),
                commit: u.new.clone(),
                reason: why.clone(),
            })
            .collect();
        return Ok(report);
    }
    let verifier = Verifier::new(&judged, judged.confine(Confine::Namespace)?)?;
    if let Some(why) = before_judging(&judged, &verifier, &main, updates, human.is_some())? {
        report.refusals = updates
            .iter()
            .map(|u| Refusal {
                reference: u.reference.clone(),
                commit: u.new.clone(),
                reason: why.clone(),
            })
            .collect();
        return Ok(report);
    }
    let chains = pushed_then_guarded_chains(&judged, &main, updates)?;
    for u in updates {
        let refuse = |commit: Option<&String>, reason: String| Refusal {
            reference: u.reference.clone(),
            commit: commit.cloned(),
            reason,
        };
        match guarded(&u.reference, &main) {
            Guarded::AttestNotes => report.refusals.push(refuse(
                u.new.as_ref(),
                "only the server writes attestations; no client pushes to them".into(),
            )),
            Guarded::Bookkeeping => report.refusals.push(refuse(
                u.new.as_ref(),
                "a clone's own bookkeeping; push workflows to refs/orchestrator/workflows/".into(),
            )),
            Guarded::Replace => report.refusals.push(refuse(
                u.new.as_ref(),
                "a replace ref makes git show other objects than the ones stored; none is pushed here".into(),
            )),
            Guarded::Workflow(name) => {
                if let Some(why) = judge_chain(&judged, &verifier, name, u, human.is_some())? {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Main if human.is_some() => {}
            Guarded::Main => {
                let (refusals, verdicts) = judge_main_move(&judged, &verifier, &chains, &main, u)?;
                report.refusals.extend(refusals);
                report.verdicts.extend(verdicts);
            }
            Guarded::Other => {}
        }
    }
    if report.refusals.is_empty() {
        keep_verdicts(&judged, &report.verdicts)?;
    }
    Ok(report)
}

/// Why the push is refused before anything of it runs, if it is: it moves main, so the PR's
/// commands would run, and they would run as root, or could write what judges the next push
/// ([`super::harden`]).
fn before_judging(
    judged: &Judged,
    verifier: &Verifier,
    main: &str,
    updates: &[Update],
    human: bool,
) -> Result<Option<String>, EngineError> {
    let runs = !human
        && updates.iter().any(|u| {
            guarded(&u.reference, main) == Guarded::Main && u.old.is_some() && u.new.is_some()
        });
    if !runs {
        return Ok(None);
    }
    super::harden::refusal(judged, verifier)
}

/// The chains a merge on main may be recorded in: the pushed ones first (a merge is judged
/// by the chain pushed with it), then the server's own under `refs/orchestrator/workflows/`
/// (a remote-tracking copy is no one's word here).
fn pushed_then_guarded_chains(
    judged: &Judged,
    main: &str,
    updates: &[Update],
) -> Result<Vec<Chain>, EngineError> {
    let mut chains: Vec<Chain> = Vec::new();
    for u in updates {
        if let (Guarded::Workflow(name), Some(new)) = (guarded(&u.reference, main), &u.new)
            && let Ok(tip) = ObjectId::from_hex(new.as_bytes())
        {
            chains.push(Chain {
                workflow: name.to_string(),
                reference: u.reference.clone(),
                tip,
            });
        }
    }
    chains.extend(judged.chains()?.into_iter().filter(|c| {
        matches!(guarded(&c.reference, main), Guarded::Workflow(_))
            && !updates.iter().any(|u| u.reference == c.reference)
    }));
    Ok(chains)
}

/// A move of main judged: refused when it deletes or rewrites main, or when a new
/// first-parent commit is not a workflow merge that attests PASSED; with the verdicts.
fn judge_main_move(
    judged: &Judged,
    verifier: &Verifier,
    chains: &[Chain],
    main: &str,
    u: &Update,
) -> Result<(Vec<Refusal>, Vec<Verdict>), EngineError> {
    let refuse = |commit: Option<&String>, reason: String| Refusal {
        reference: u.reference.clone(),
        commit: commit.cloned(),
        reason,
    };
    let (Some(old), Some(new)) = (&u.old, &u.new) else {
        // The first push of main to an empty repository sets it up ([`unguardable`]).
        let refusals = match &u.new {
            None => vec![refuse(u.old.as_ref(), format!("deletes {main}"))],
            Some(_) => Vec::new(),
        };
        return Ok((refusals, Vec::new()));
    };
    if !judged.git.is_ancestor(old, new)? {
        let why = format!(
            "rewrites {main} (a rebase or a force push): it does not descend from {}",
            crate::short_id(old)
        );
        return Ok((vec![refuse(Some(new), why)], Vec::new()));
    }
    let mut commits = judged.git.first_parents(&format!("{old}..{new}"))?;
    commits.reverse();
    let (mut refusals, mut verdicts) = (Vec::new(), Vec::new());
    for commit in commits {
        let verdict = judge(verifier, chains, &commit)?;
        let merge = verdict.kind == Some("merge");
        if !verdict.passed || !merge {
            let why = if verdict.passed {
                "it is a PR's head, not the workflow's merge of it".to_string()
            } else {
                verdict.reasons.join("; ")
            };
            refusals.push(refuse(
                Some(&commit),
                format!("moves {main} to a commit that is not a workflow merge that attests PASSED: {why}"),
            ));
        }
        verdicts.push(verdict);
    }
    Ok((refusals, verdicts))
}

/// Why no update can be judged, if none can: main (HEAD's branch, or main's `main_branch`)
/// does not exist while other branches do, so the hook would guard a branch nobody pushes
/// to; or the repository is empty and the push does not create main.
fn unguardable(
    judged: &Judged,
    main: &str,
    updates: &[Update],
) -> Result<Option<String>, EngineError> {
    let main_ref = crate::store::branch_ref(main);
    if judged.git.ref_target(&main_ref)?.is_some() {
        return Ok(None);
    }
    if !judged.git.refs_under(&["refs/heads/"])?.is_empty() {
        return Ok(Some(format!(
            "the server's main branch {main} (its HEAD, or main_branch in main's config) does not exist \
             while other branches do: a human points HEAD at the main branch (git symbolic-ref HEAD refs/heads/BRANCH)"
        )));
    }
    let creates_main = updates
        .iter()
        .any(|u| u.reference == main_ref && u.new.is_some());
    Ok((!creates_main)
        .then(|| format!("an empty repository: the first push creates its main branch {main}")))
}

/// Why the update of workflow `name`'s chain is refused, if it is: a deletion or a move that
/// does not descend from the server's tip (unless a listed human pushes it), or a segment
/// whose replay finds a forged transition.
fn judge_chain(
    judged: &Judged,
    verifier: &Verifier,
    name: &str,
    u: &Update,
    human: bool,
) -> Result<Option<String>, EngineError> {
    let Some(new) = &u.new else {
        return Ok(
            (!human).then(|| format!("deletes workflow {name}'s chain: a chain is never rewound"))
        );
    };
    if let Some(old) = &u.old
        && !human
        && !judged.git.is_ancestor(old, new)?
    {
        return Ok(Some(format!(
            "rewinds or forks workflow {name}'s chain: it does not descend from {}",
            crate::short_id(old)
        )));
    }
    let id = |hex: &str| {
        ObjectId::from_hex(hex.as_bytes())
            .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))
    };
    let tip = id(new)?;
    let stop = match &u.old {
        Some(old) if judged.git.is_ancestor(old, new)? => Some(id(old)?),
        _ => None,
    };
    let session = verifier.session(&Chain {
        workflow: name.to_string(),
        reference: u.reference.clone(),
        tip,
    })?;
    let audit = audit_chain(&session.store, name, tip, stop)?;
    Ok(audit
        .forged
        .map(|problem| format!("forges workflow {name}'s chain: {problem}")))
}

/// Where the pre-receive hook leaves the verdicts of an accepted push for the post-receive
/// hook to write as notes (refs cannot move while a push is in quarantine).
fn pending_dir(judged: &Judged) -> Result<PathBuf, EngineError> {
    Ok(judged
        .git
        .common_dir()?
        .join("orchestrator")
        .join("attested"))
}

fn keep_verdicts(judged: &Judged, verdicts: &[Verdict]) -> Result<(), EngineError> {
    let key = judged.main_config()?.1.attest.signing_key;
    if verdicts.is_empty() {
        return Ok(());
    }
    let dir = pending_dir(judged)?;
    std::fs::create_dir_all(&dir).map_err(io_error(format!("create {}", dir.display())))?;
    for v in verdicts.iter().filter(|v| v.passed) {
        let file = dir.join(&v.commit);
        std::fs::write(&file, super::note_text(v, key.as_deref().map(Path::new))?)
            .map_err(io_error(format!("write {}", file.display())))?;
    }
    Ok(())
}

/// `attest --post-receive`, after git applied the push `updates`: the verdicts the
/// pre-receive hook kept for the commits this push brought onto main, written as notes under
/// `refs/notes/orchestrator-attest`. Another push's verdicts are left for its own hook; one
/// left over for a day (a push refused after its pre-receive passed) is dropped.
pub fn post_receive(dir: &Path, updates: &[Update]) -> Result<Vec<String>, EngineError> {
    let judged = Judged::open(dir)?;
    let (main, _) = judged.main_config()?;
    let pending = pending_dir(&judged)?;
    if !pending.is_dir() {
        return Ok(Vec::new());
    }
    let mut ours = Vec::new();
    for u in updates
        .iter()
        .filter(|u| guarded(&u.reference, &main) == Guarded::Main)
    {
        if let (Some(old), Some(new)) = (&u.old, &u.new) {
            ours.extend(judged.git.first_parents(&format!("{old}..{new}"))?);
        }
    }
    let store = crate::store::Store::open_for_notes(dir)?;
    let mut written = Vec::new();
    for commit in ours {
        let path = pending.join(&commit);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut tries = 0;
        loop {
            match store.set_attest_note(&commit, &text) {
                Ok(_) => break,
                Err(crate::store::WriteError::Conflict) if tries < 20 => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
        std::fs::remove_file(&path).map_err(io_error(format!("remove {}", path.display())))?;
        written.push(commit);
    }
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    for entry in std::fs::read_dir(&pending).into_iter().flatten().flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const A: &str = "1111111111111111111111111111111111111111";
    const Z: &str = "0000000000000000000000000000000000000000";

    #[test]
    fn updates_are_read_with_zero_ids_as_none() {
        let text = format!("{Z} {A} refs/heads/main\n{A} {Z} refs/heads/x\n");
        assert_eq!(
            parse_updates(&text),
            Ok(vec![
                Update {
                    old: None,
                    new: Some(A.into()),
                    reference: "refs/heads/main".into()
                },
                Update {
                    old: Some(A.into()),
                    new: None,
                    reference: "refs/heads/x".into()
                },
            ])
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        assert_eq!(
            parse_updates(&format!("{A} {A}\n")),
            Err(format!(
                "line 1: expected \"<old> <new> <ref>\", found \"{A} {A}\""
            ))
        );
        assert_eq!(
            parse_updates(&format!("{A} xyz refs/heads/main\n")),
            Err("line 1: \"xyz\" is not an object id".into())
        );
        assert_eq!(
            parse_updates(&format!("{A} {A} HEAD\n")),
            Err("line 1: \"HEAD\" is not a ref name".into())
        );
        assert!(parse_updates(&format!("{A} {A} refs/heads/a b\n")).is_err());
    }

    #[test]
    fn refs_are_classed() {
        assert_eq!(
            guarded("refs/notes/orchestrator-attest", "main"),
            Guarded::AttestNotes
        );
        assert_eq!(
            guarded("refs/notes/orchestrator-attest/x", "main"),
            Guarded::AttestNotes
        );
        assert_eq!(guarded("refs/notes/orchestrator", "main"), Guarded::Other);
        assert_eq!(
            guarded("refs/orchestrator/workflows/w", "main"),
            Guarded::Workflow("w")
        );
        assert_eq!(guarded("refs/heads/main", "main"), Guarded::Main);
        assert_eq!(guarded("refs/heads/main", "trunk"), Guarded::Other);
        assert_eq!(guarded("refs/heads/trunk", "trunk"), Guarded::Main);
        assert_eq!(guarded("refs/tags/main", "main"), Guarded::Other);
        assert_eq!(
            guarded("refs/orchestrator/workflows/a/b", "main"),
            Guarded::Bookkeeping
        );
        assert_eq!(
            guarded("refs/orchestrator/remotes/o/workflows/w", "main"),
            Guarded::Bookkeeping
        );
        assert_eq!(guarded("refs/replace/abc", "main"), Guarded::Replace);
    }

    proptest::proptest! {
        /// Whatever the input, the reader answers: the lines, or the first bad one named.
        #[test]
        fn any_input_is_read_or_refused(text in "\\PC{0,200}") {
            let _ = parse_updates(&text);
        }

        #[test]
        fn well_formed_lines_round_trip(
            refs in proptest::collection::vec("refs/[a-z]{1,8}/[a-z0-9._-]{1,12}", 1..5),
            zero in proptest::collection::vec(proptest::bool::ANY, 10),
        ) {
            let text: String = refs
                .iter()
                .enumerate()
                .map(|(i, r)| format!("{} {} {r}\n", if zero[i] { Z } else { A }, A))
                .collect();
            let parsed = parse_updates(&text).map_err(proptest::test_runner::TestCaseError::fail)?;
            proptest::prop_assert_eq!(parsed.len(), refs.len());
            for (i, u) in parsed.iter().enumerate() {
                proptest::prop_assert_eq!(&u.reference, &refs[i]);
                proptest::prop_assert_eq!(u.old.is_none(), zero[i]);
            }
        }
    }
}
