//! The git server's hooks (docs/integrity.md, "The server hook"): `attest --pre-receive`
//! judges every ref a push updates before git accepts any of it, reading the pushed objects
//! from the push's quarantine; `attest --post-receive` writes the verdicts of the accepted
//! moves of main as notes, which only the server writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::Serialize;

use super::judge;
use super::verdict::Verdict;
use super::verifier::{Chain, Confine, Judged, Verifier};
use crate::engine::answers::AnswerCheck;
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
    /// `refs/notes/orchestrator-attest-ci`: the CI job's verdicts, taken signed only.
    CiNotes,
    /// `refs/notes/orchestrator`: the verification notes, only ever added to.
    Notes,
    Workflow(&'a str),
    /// A clone's own bookkeeping (`refs/orchestrator/remotes/*`, `…/backups/*`): no client
    /// writes it on a server, where a copy of a chain could stand in for the guarded one.
    Bookkeeping,
    /// `refs/replace/*`: git would show other objects in place of the ones pushed.
    Replace,
    /// `refs/orchestrator/claims/<slug>`: a claim on a PR.
    Claim(&'a str),
    /// `refs/orchestrator/archive`: the finished workflows (docs/refs.md, "The archive").
    Archive,
    Main,
    /// A name that differs from a guarded one only in case: on a file system that folds case
    /// (a loose ref is a file) it is that guarded ref's own file.
    Folded,
    Other,
}

/// Whether `reference` is a notes ref named for the verdicts: not only the server's own but
/// any under `refs/notes/` whose name holds it (`refs/notes/remotes/origin/orchestrator-attest`
/// is what `verify` reads as a remote's verdicts, and what a CI job's `refs/notes/*` fetch
/// brings in beside the server's).
fn is_verdict_notes(reference: &str) -> bool {
    // In any case: on a server whose file system folds case, `Orchestrator-Attest` is the
    // same file as the guarded ref.
    let name = ATTEST_NOTES_REF.trim_start_matches("refs/notes/");
    reference
        .get(..11)
        .is_some_and(|p| p.eq_ignore_ascii_case("refs/notes/"))
        && reference[11..].to_ascii_lowercase().contains(name)
}

fn guarded<'a>(reference: &'a str, main: &str) -> Guarded<'a> {
    match exactly_guarded(reference, main) {
        Guarded::Other => match exactly_guarded(&fold(reference), &fold(main)) {
            Guarded::Other => Guarded::Other,
            _ => Guarded::Folded,
        },
        guarded => guarded,
    }
}

/// `name` as a file system that folds case and normalization may store it: in canonical
/// decomposition (APFS and HFS+ take `café` typed as `e` + U+0301 and as U+00E9 for one
/// name), each code point then folded by Unicode's simple case folding, and decomposed again
/// (a folded letter may sort among combining marks otherwise): Unicode's canonical caseless
/// match, one code point onto one.
fn fold(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    // HFS+ also ignores these code points in names (git's utf8.c, `next_hfs_char`).
    let ignored = |c: &char| matches!(*c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff);
    name.chars()
        .filter(|c| !ignored(c))
        .nfd()
        .map(fold_char)
        .nfd()
        .collect()
}

/// One code point by Unicode's simple case folding (CaseFolding.txt, status C and S): a
/// folding to several code points (F: `ß` to `ss`, `ﬆ` to `st`) is none of it, so `straße`
/// and `strasse` are two names, and two refs here; a code point is folded alone, never by its
/// neighbours (no final-sigma rule). It is the simple upper case, then the simple lower case
/// of that, but for the code points where those two steps and the table part ways; and one
/// more join than the table's: the dotless `ı` meets `i`, as NTFS, which upper-cases a name
/// by simple upper case, takes `ı` for `I` (the table joins them only by a Turkic T row).
fn fold_char(c: char) -> char {
    match c {
        // S foldings that no one-to-one case mapping gives: `ΐ` written with its oxia, and
        // the ligature of a long s and t onto that of s and t.
        '\u{1fd3}' => '\u{390}',
        '\u{1fe3}' => '\u{3b0}',
        '\u{fb05}' => '\u{fb06}',
        _ => {
            let upper = only(c.to_uppercase()).unwrap_or(c);
            only(upper.to_lowercase()).unwrap_or(upper)
        }
    }
}

/// The code point a case mapping gives, when it gives exactly one.
fn only(mut mapped: impl Iterator<Item = char>) -> Option<char> {
    let first = mapped.next()?;
    mapped.next().is_none().then_some(first)
}

/// A ref that the new ref `reference` would share a file with where the file system folds
/// case or normalization (a workflow `MAIN` beside `main`, a branch `café` spelled
/// decomposed beside one spelled composed), if there is one: one of the server's that the push
/// does not delete, or one the push creates before it. Created beside it, it would be that
/// ref, judged as another.
fn folded_twin(
    judged: &Judged,
    reference: &str,
    updates: &[Update],
) -> Result<Option<String>, EngineError> {
    let folded = fold(reference);
    let deleted = |name: &str| {
        updates
            .iter()
            .any(|u| u.reference == name && u.new.is_none())
    };
    let created_before = updates
        .iter()
        .take_while(|u| u.reference != reference)
        .filter(|u| u.old.is_none() && u.new.is_some())
        .map(|u| u.reference.clone());
    Ok(judged
        .git
        .refs_under(&["refs/orchestrator/", "refs/notes/", "refs/heads/"])?
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| !deleted(name))
        .chain(created_before)
        .find(|name| name != reference && fold(name) == folded))
}

fn exactly_guarded<'a>(reference: &'a str, main: &str) -> Guarded<'a> {
    use crate::store::{branch_of_ref, is_bookkeeping_ref, is_local_workflow_ref, is_replace_ref};
    if reference == crate::store::ATTEST_CI_NOTES_REF {
        return Guarded::CiNotes;
    }
    // Any other spelling of it is refused as a verdicts ref (below), not taken as the CI's.
    if is_verdict_notes(reference) {
        return Guarded::AttestNotes;
    }
    if reference == crate::store::NOTES_REF {
        return Guarded::Notes;
    }
    if let Some(slug) = reference.strip_prefix(crate::store::CLAIMS) {
        return Guarded::Claim(slug);
    }
    if reference == crate::store::ARCHIVE {
        return Guarded::Archive;
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
        report.refusals = refuse_all(updates, &why);
        return Ok(report);
    }
    let verifier = Verifier::new(&judged, judged.confine(Confine::Namespace)?)?;
    if let Some(why) = before_judging(&judged, &verifier, &main, updates, human.is_some())? {
        report.refusals = refuse_all(updates, &why);
        return Ok(report);
    }
    let chains = pushed_then_guarded_chains(&judged, &main, updates)?;
    // Where the push moves main, the commits it brings onto it are on main once it lands.
    let main_after = updates
        .iter()
        .find(|u| guarded(&u.reference, &main) == Guarded::Main)
        .and_then(|u| u.new.as_deref());
    let archived_by_push = archived_by(&judged, updates)?;
    // Main as the server has it now, read once: a push whose move of main starts elsewhere was
    // overtaken by another push landing first (two landings at once), and git's
    // compare-and-swap will refuse it whatever is judged; judged against main as it is, its
    // notes would read as notes added after that other merge. Said as git says it, so the
    // client tries again. The notes are judged against this same main, which another push
    // may move while this one is judged.
    let main_now = judged
        .git
        .rev_parse(&crate::store::branch_ref(&main))
        .ok()
        .filter(|id| !id.is_empty());
    for u in updates {
        let refuse = |commit: Option<&String>, reason: String| Refusal {
            reference: u.reference.clone(),
            commit: commit.cloned(),
            reason,
        };
        let created = u.old.is_none() && u.new.is_some();
        if created && let Some(twin) = folded_twin(&judged, &u.reference, updates)? {
            report.refusals.push(refuse(
                u.new.as_ref(),
                format!(
                    "differs only in case from {twin} (the server's, or made by this push): \
                     where the file system folds case it is that ref's own file"
                ),
            ));
            continue;
        }
        if guarded(&u.reference, &main) == Guarded::Main && u.old != main_now {
            report.refusals.push(refuse(
                u.new.as_ref(),
                format!(
                    "main is at {} but expected {}: another push moved it while this one was \
                     under way; fetch and push again",
                    main_now.as_deref().map_or("nothing", crate::short_id),
                    u.old.as_deref().map_or("nothing", crate::short_id),
                ),
            ));
            continue;
        }
        match guarded(&u.reference, &main) {
            Guarded::AttestNotes => report.refusals.push(refuse(
                u.new.as_ref(),
                "only the server writes attestations; no client pushes to them".into(),
            )),
            Guarded::CiNotes => {
                if let Some(why) =
                    super::ci_notes::refusal(&judged, u.old.as_deref(), u.new.as_deref())?
                {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Notes => {
                let moved = (u.old.as_deref(), u.new.as_deref());
                if let Some(why) = super::kept_notes::refusal(&judged, moved, (main_now.as_deref(), main_after), human.is_some())? {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Bookkeeping => report.refusals.push(refuse(
                u.new.as_ref(),
                "a clone's own bookkeeping; push workflows to refs/orchestrator/workflows/".into(),
            )),
            Guarded::Replace => report.refusals.push(refuse(
                u.new.as_ref(),
                "a replace ref makes git show other objects than the ones stored; none is pushed here".into(),
            )),
            // Deleted with an archive update that holds its very tip: archived, not rewound.
            Guarded::Workflow(name)
                if u.new.is_none()
                    && u.old.is_some()
                    && archived_by_push.get(name) == u.old.as_ref() => {}
            Guarded::Archive => {
                if let Some(why) = judge_archive(&judged, &verifier, u, updates, human.is_some())? {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Workflow(name) => {
                if let Some(why) = judge_chain(&judged, &verifier, name, u, human.is_some())? {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Claim(slug) => {
                let held = Held {
                    judged: &judged,
                    verifier: &verifier,
                    chains: &chains,
                    ttl: config.claims.ttl,
                    moved: moved_workflows(updates, &main),
                    master_plan: master_plan_on(&judged, &main, &config.master_plan)?,
                };
                if let Some(why) = judge_claim(&held, slug, u, human.is_some())? {
                    report.refusals.push(refuse(u.new.as_ref(), why));
                }
            }
            Guarded::Main if human.is_some() => {}
            Guarded::Main => {
                let (refusals, verdicts) = judge_main_move(&judged, &verifier, &chains, &main, u)?;
                report.refusals.extend(refusals);
                report.verdicts.extend(verdicts);
            }
            Guarded::Folded => report.refusals.push(refuse(
                u.new.as_ref(),
                "differs from a ref the server guards only in case: where the file system folds \
                 case it is that ref's own file; push it under its own name"
                    .into(),
            )),
            Guarded::Other => {}
        }
    }
    if report.refusals.is_empty() {
        keep_verdicts(&judged, &report.verdicts)?;
    }
    Ok(report)
}

/// Every update refused for the one reason `why`: nothing of the push can be judged.
fn refuse_all(updates: &[Update], why: &str) -> Vec<Refusal> {
    updates
        .iter()
        .map(|u| Refusal {
            reference: u.reference.clone(),
            commit: u.new.clone(),
            reason: why.to_string(),
        })
        .collect()
}

/// The master plan on the server's main, as a claimer reads the remote's (at most
/// [`crate::input::CAP`] bytes, as there); `None` when there is none.
fn master_plan_on(judged: &Judged, main: &str, path: &str) -> Result<Option<String>, EngineError> {
    Ok(judged
        .git
        .show(&format!("refs/heads/{main}"), path)?
        .filter(|bytes| u64::try_from(bytes.len()).is_ok_and(|n| n <= crate::input::CAP))
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// The workflows whose chains the push moves (not deletes), each with its tip on the server
/// before the push (`None`: the push creates it).
fn moved_workflows<'u>(updates: &'u [Update], main: &str) -> Vec<(&'u str, Option<&'u str>)> {
    updates
        .iter()
        .filter(|u| u.new.is_some())
        .filter_map(|u| match guarded(&u.reference, main) {
            Guarded::Workflow(name) => Some((name, u.old.as_deref())),
            _ => None,
        })
        .collect()
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
        let verdict = judge_remembered(judged, verifier, chains, &commit)?;
        // A workflow's merge, or a ticket's: both are a workflow moving main.
        let merge = matches!(verdict.kind, Some("merge" | "ticket-merge"));
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

/// The index of the archive this push moves the archive ref to, by name; empty when it does
/// not move it.
fn archived_by(
    judged: &Judged,
    updates: &[Update],
) -> Result<BTreeMap<String, String>, EngineError> {
    let pushed = updates
        .iter()
        .find(|u| u.reference == crate::store::ARCHIVE)
        .and_then(|u| u.new.as_ref());
    Ok(match pushed {
        Some(new) => judged.git.gitlinks(new)?.into_iter().collect(),
        None => BTreeMap::new(),
    })
}

/// Why the name filter of the pushed archive commit `new` misleads, if it does: readers rule
/// names out by it without reading the index (src/store/archive_filter.rs), so a filter
/// that left out an archived workflow would hide it from every clone's `sync`. The filter
/// the commit's header names must be exactly the one this release writes for its index.
fn misleading_filter(
    judged: &Judged,
    new: &str,
    index: &BTreeMap<String, String>,
) -> Result<Option<String>, EngineError> {
    use crate::store::archive_filter::{HEADER, encode};
    let Some(raw) = judged.git.object_within(new, "commit", u64::MAX)? else {
        return Ok(None);
    };
    let raw = String::from_utf8_lossy(&raw);
    let headers = raw.split("\n\n").next().unwrap_or_default();
    let Some(blob) = headers
        .lines()
        .find_map(|l| l.strip_prefix(HEADER)?.strip_prefix(' '))
    else {
        return Ok(None);
    };
    let held = judged.git.blob_within(blob.trim(), crate::input::CAP)?;
    let expected = encode(index.keys().map(String::as_str));
    if held.is_some() && held == expected {
        return Ok(None);
    }
    Ok(Some(format!(
        "its name filter ({HEADER} {}) is not the one its index makes: readers rule archived \
         workflows out by it",
        crate::short_id(blob.trim())
    )))
}

/// Why the update of the archive is refused, if it is: a deletion, a move that does not
/// descend from the server's archive, one that drops or rewrites a workflow the archive
/// holds, or one that indexes a tip its own history does not hold, or a chain whose replay
/// finds a forged transition (unless a listed human pushes it: then only what it indexes
/// must be its history). Archived chains are kept for ever: a workflow leaves the index only
/// restored (`archive --restore`), its live ref at the very tip archived, pushed with it
/// (`updates`) or on the server already.
fn judge_archive(
    judged: &Judged,
    verifier: &Verifier,
    u: &Update,
    updates: &[Update],
    human: bool,
) -> Result<Option<String>, EngineError> {
    let Some(new) = &u.new else {
        return Ok((!human)
            .then(|| "deletes the archive: archived workflows are kept for ever".to_string()));
    };
    if let Some(old) = &u.old
        && !human
        && !judged.git.is_ancestor(old, new)?
    {
        return Ok(Some(format!(
            "rewinds or forks the archive: it does not descend from {}",
            crate::short_id(old)
        )));
    }
    let before: BTreeMap<String, String> = match &u.old {
        Some(old) => judged.git.gitlinks(old)?.into_iter().collect(),
        None => BTreeMap::new(),
    };
    let after: BTreeMap<String, String> = judged.git.gitlinks(new)?.into_iter().collect();
    if let Some(why) = misleading_filter(judged, new, &after)? {
        return Ok(Some(why));
    }
    for (name, tip) in &before {
        match after.get(name) {
            Some(now) if now == tip => {}
            Some(now) if !human => {
                return Ok(Some(format!(
                    "rewrites archived workflow {name}: {} became {}",
                    crate::short_id(tip),
                    crate::short_id(now)
                )));
            }
            Some(_) => {}
            None if restored(judged, updates, name, tip)? => {}
            None => {
                return Ok(Some(format!(
                    "drops archived workflow {name} (at {}): the archive only grows, but for a \
                     workflow restored at that tip",
                    crate::short_id(tip)
                )));
            }
        }
    }
    let added: Vec<(&String, &String)> = after
        .iter()
        .filter(|(name, tip)| before.get(*name) != Some(*tip))
        .collect();
    if added.is_empty() {
        return Ok(None);
    }
    let held = judged.git.reachable(new)?;
    let live: BTreeMap<String, String> = judged
        .git
        .refs_under(&[crate::store::WORKFLOW_REF_PREFIXES[0]])?
        .into_iter()
        .filter_map(|(reference, id)| {
            Some((crate::store::workflow_of_ref(&reference)?.to_string(), id))
        })
        .collect();
    for (name, tip) in added {
        if !crate::store::valid_workflow_name(name) {
            return Ok(Some(format!("indexes {name:?}, which is no workflow name")));
        }
        if !held.contains(tip) {
            return Ok(Some(format!(
                "indexes workflow {name} at {}, which the archive's own history does not hold",
                crate::short_id(tip)
            )));
        }
        // The server's live chain at that very tip was judged when it was pushed.
        if human || live.get(name) == Some(tip) {
            continue;
        }
        let archived = Update {
            reference: crate::store::workflow_ref(name),
            old: None,
            new: Some(tip.clone()),
        };
        if let Some(why) = judge_chain(judged, verifier, name, &archived, false)? {
            return Ok(Some(format!("archives {why}")));
        }
    }
    Ok(None)
}

/// True when workflow `name`'s live ref stands at `tip`, or at a chain grown from it, once this
/// push lands: pushed so, or the server's so and not moved by the push. A workflow restored
/// and gone on before its clone's `sync` arrives with its newer tip; the chain from `tip` on
/// is judged as every pushed chain is.
fn restored(
    judged: &Judged,
    updates: &[Update],
    name: &str,
    tip: &str,
) -> Result<bool, EngineError> {
    let reference = crate::store::workflow_ref(name);
    let grown = |id: &str| -> Result<bool, EngineError> {
        Ok(id == tip || judged.git.is_ancestor(tip, id)?)
    };
    if let Some(u) = updates.iter().find(|u| u.reference == reference) {
        return match u.new.as_deref() {
            Some(new) => grown(new),
            None => Ok(false),
        };
    }
    for (r, id) in judged.git.refs_under(&[reference.as_str()])? {
        if r == reference {
            return grown(&id);
        }
    }
    Ok(false)
}

/// What the hook reads a claim's update against.
struct Held<'a> {
    judged: &'a Judged,
    verifier: &'a Verifier,
    /// The chains as this push leaves them: pushed first, then the server's.
    chains: &'a [Chain],
    /// Main's `[claims] ttl`: no claim is pushed to last longer.
    ttl: std::time::Duration,
    /// The workflows whose chains this push moves forward, each with its tip before.
    moved: Vec<(&'a str, Option<&'a str>)>,
    /// Main's master plan on the server, which keys a plan's PR as the claimer keyed it.
    master_plan: Option<String>,
}

impl Held<'_> {
    /// The claim commit `id` states; `None` when it is no claim of ours.
    fn claim(&self, id: &str) -> Result<Option<crate::store::Claim>, EngineError> {
        Ok(self
            .judged
            .git
            .commit_message_within(id, 8 * 1024)?
            .and_then(|message| crate::store::Claim::parse(&message)))
    }

    /// Whether this push moves workflow `name` across the acceptance of a plan for the PR
    /// keyed `slug`: as the push leaves it, its chain works on that PR, and among the commits
    /// the push adds (or the server's tip before it) one is in INITIALIZING, after which the
    /// plan was accepted. A chain that only grows a step of another PR (or of this one), or
    /// re-plans it, takes no claim: else an agent could hold any PR of the master plan
    /// against the others. The PR is keyed from the plan itself (`pr.json`, which the replay
    /// of the chain holds to its events), not from the summary `state.json` keeps beside it,
    /// which nothing checks.
    fn accepts_plan_for(&self, name: &str, slug: &str) -> Result<Accepts, EngineError> {
        /// Commits walked back from the tip at most: a claim is pushed with its acceptance.
        const WALK: usize = 10_000;
        let Some((_, before)) = self.moved.iter().find(|(moved, _)| *moved == name) else {
            return Ok(Accepts::No);
        };
        // The pushed chain comes first among them.
        let Some(chain) = self.chains.iter().find(|c| c.workflow == name) else {
            return Ok(Accepts::No);
        };
        let session = self.verifier.session(chain)?;
        let store = &session.store;
        let initializing = |snap: &crate::store::Snapshot| {
            snap.state.status() == crate::workflow::Status::Initializing
        };
        let tip = store.read_at(chain.tip, &chain.reference)?;
        if initializing(&tip) {
            return Ok(Accepts::No);
        }
        let Some(plan) = store.plan(&tip)? else {
            return Ok(Accepts::No);
        };
        let works_on =
            crate::workflow::claims::pr_slug(self.master_plan.as_deref(), &plan.summary().title);
        if works_on != slug {
            return Ok(Accepts::OtherPr(works_on));
        }
        let before = before.and_then(|id| ObjectId::from_hex(id.as_bytes()).ok());
        let mut at = chain.tip;
        for _ in 0..WALK {
            let Some(parent) = store.commit_parents(at)?.first().copied() else {
                return Ok(Accepts::No);
            };
            if initializing(&store.read_at(parent, &chain.reference)?) {
                return Ok(Accepts::Yes);
            }
            if Some(parent) == before {
                return Ok(Accepts::No);
            }
            at = parent;
        }
        Ok(Accepts::No)
    }

    /// Whether workflow `name`, as this push leaves it, works on a PR (its plan accepted and
    /// not merged yet).
    fn working(&self, name: &str) -> Result<bool, EngineError> {
        // The pushed chain comes first among them.
        let Some(chain) = self.chains.iter().find(|c| c.workflow == name) else {
            return Ok(false);
        };
        let session = self.verifier.session(chain)?;
        Ok(session
            .store
            .read_at(chain.tip, &chain.reference)
            .ok()
            .is_some_and(|snap| {
                snap.summary.is_some()
                    && snap.state.status() != crate::workflow::Status::Initializing
            }))
    }
}

/// Whether a pushed chain accepts its plan for the PR a claim names ([`Held::accepts_plan_for`]).
#[derive(Debug, PartialEq, Eq)]
enum Accepts {
    Yes,
    No,
    /// Its plan is another PR's, keyed as main's master plan keys it here.
    OtherPr(String),
}

/// A claim's update, as the hook reads it.
#[derive(Debug)]
struct ClaimMove<'a> {
    slug: &'a str,
    /// The server's claim now: `None` when there is none, `Some(None)` when its ref holds no
    /// claim of ours.
    old: Option<Option<crate::store::Claim>>,
    /// The pushed claim: `None` for a deletion, `Some(None)` for what is no claim of ours.
    new: Option<Option<crate::store::Claim>>,
    now: i64,
    /// The longest a claim may run from now.
    ttl: i64,
    /// Whether the server's holder's workflow, as this push leaves it, works on a PR.
    holder_working: bool,
    /// Whether the new claim's workflow accepts its plan in this push: moved by it, and
    /// working on a PR once moved.
    accepted_here: bool,
    /// The PR the new claim's workflow works on instead, keyed here, when that is another.
    works_on: Option<String>,
    /// Pushed by a human listed in main's `[attest] humans`.
    human: bool,
}

/// Why a claim's update is refused, if it is (docs/refs.md, "Claims"): what is no claim is
/// never taken; a claim is taken with its workflow's plan acceptance in the same push (or
/// when the one there lapsed), renewed only as the same holder's, and deleted only once
/// its holder's workflow is done with it; a listed human may do anything but push junk.
fn claim_refusal(m: &ClaimMove) -> Option<String> {
    use crate::workflow::claims::expired;
    match &m.new {
        Some(None) => {
            return Some(
                "not a claim git-orchestrate writes: refs/orchestrator/claims/ holds claims only"
                    .into(),
            );
        }
        Some(Some(c)) if c.slug != m.slug => {
            return Some(format!(
                "states a claim on {} under the ref of {}",
                c.slug, m.slug
            ));
        }
        // The pusher's clock may run ahead of the server's by the margin claims allow.
        Some(Some(c))
            if c.expires
                > m.now
                    .saturating_add(m.ttl)
                    .saturating_add(crate::workflow::claims::SKEW_SECONDS) =>
        {
            return Some(format!(
                "runs until {}, longer than main's [claims] ttl from now",
                c.expires
            ));
        }
        _ => {}
    }
    if m.human {
        return None;
    }
    let held = match &m.old {
        Some(Some(c)) => Some(c),
        _ => None,
    };
    let live = held.filter(|c| !expired(c.expires, m.now));
    // The same holder: its workflow, machine, user and first claim time kept. A holder renews
    // its claim even once it lapsed, as `sync` does (nobody else took it meanwhile).
    let same_holder = |new: &crate::store::Claim| {
        held.is_some_and(|old| {
            new.workflow == old.workflow
                && new.host == old.host
                && new.user == old.user
                && new.since == old.since
        })
    };
    match &m.new {
        None => live.filter(|_| m.holder_working).map(|old| {
            format!(
                "deletes the claim {} holds while that workflow works on it: its holder's \
                 workflow releases it when done, or a listed human does",
                old.holder()
            )
        }),
        // A renewal runs a full term from now (less the clocks' skew), and never ends before
        // the live claim does unless that is further off: one that ends sooner is a forged
        // lapse, after which anyone could delete the claim its holder's workflow still works
        // under. The floor holds against cuts in steps: each push is held to the claim the
        // server has.
        Some(Some(new))
            if same_holder(new)
                && m.holder_working
                && let Some(old) = live
                && new.expires
                    < old.expires.min(
                        m.now
                            .saturating_add(m.ttl)
                            .saturating_sub(crate::workflow::claims::SKEW_SECONDS),
                    ) =>
        {
            Some(format!(
                "would end the claim {} holds at {}, before its term (until {}): a renewal runs a \
                 full term from now, and its holder's workflow still works on it",
                old.holder(),
                new.expires,
                old.expires
            ))
        }
        Some(Some(new)) if same_holder(new) => None,
        Some(Some(_)) if let Some(old) = live => Some(format!(
            "{} holds the claim until {}: only its holder renews it, and only a listed human \
             takes it (git orchestrate claim steal)",
            old.holder(),
            old.expires
        )),
        Some(Some(new)) => (!m.accepted_here).then(|| {
            let instead = m.works_on.as_ref().map_or(String::new(), |other| {
                format!(" (its plan is for {other}, as the server keys PRs)")
            });
            format!(
                "a claim is taken with its workflow's plan acceptance in the same push, and \
                 workflow {} accepts no plan for {} in this one{instead}",
                new.workflow, m.slug
            )
        }),
        Some(None) => None,
    }
}

/// Why the update of the claim on `slug` is refused, if it is.
fn judge_claim(
    held: &Held,
    slug: &str,
    u: &Update,
    human: bool,
) -> Result<Option<String>, EngineError> {
    let old = match &u.old {
        Some(id) => Some(held.claim(id)?),
        None => None,
    };
    let new = match &u.new {
        Some(id) => Some(held.claim(id)?),
        None => None,
    };
    let holder_working = match &old {
        Some(Some(c)) if !human => held.working(&c.workflow)?,
        _ => false,
    };
    let accepts = match &new {
        Some(Some(c)) if !human => held.accepts_plan_for(&c.workflow, slug)?,
        _ => Accepts::No,
    };
    let accepted_here = accepts == Accepts::Yes;
    let works_on = match accepts {
        Accepts::OtherPr(other) => Some(other),
        Accepts::Yes | Accepts::No => None,
    };
    Ok(claim_refusal(&ClaimMove {
        slug,
        old,
        new,
        now: crate::engine::claims::now(),
        ttl: i64::try_from(held.ttl.as_secs()).unwrap_or(i64::MAX),
        holder_working,
        accepted_here,
        works_on,
        human,
    }))
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
        write_whole(
            &dir.join(&v.commit),
            super::note_text(v, key.as_deref().map(Path::new))?.as_bytes(),
        )?;
    }
    Ok(())
}

/// Writes `bytes` as the file `path` all at once (a temporary file beside it, renamed): a
/// hook killed meanwhile leaves the old file or the new one, never half of one.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temporary, bytes)
        .map_err(io_error(format!("write {}", temporary.display())))?;
    std::fs::rename(&temporary, path).map_err(io_error(format!("write {}", path.display())))
}

/// `attest --post-receive`, after git applied a push: the verdicts the pre-receive hook kept
/// for commits now on main, written as notes under `refs/notes/orchestrator-attest`
/// ([`complete_record`]).
pub fn post_receive(dir: &Path) -> Result<Completed, EngineError> {
    complete_record(dir)
}

/// What [`complete_record`] did with the verdicts it found kept for commits on main.
#[derive(Debug, Default, Serialize)]
pub struct Completed {
    /// The commits whose verdict's note it wrote.
    pub written: Vec<String>,
    /// The commits whose note was there already, as kept (a hook killed after the note and
    /// before it let the verdict go): their record is completed without a write.
    pub already_written: Vec<String>,
}

/// Writes the note of every verdict the pre-receive hook kept whose commit is on main now,
/// this push's and any an earlier post-receive did not write (it was killed, or the machine
/// went down, after git moved main): the record survives its hook. Idempotent, so the next
/// push's post-receive and `attest --repair` both run it. A kept verdict whose commit is not
/// on main (its push was refused after the pre-receive passed) is dropped after a day.
pub fn complete_record(dir: &Path) -> Result<Completed, EngineError> {
    let judged = Judged::open(dir)?;
    let (main, _) = judged.main_config()?;
    let pending = pending_dir(&judged)?;
    if !pending.is_dir() {
        return Ok(Completed::default());
    }
    let Some(tip) = judged.git.ref_target(&crate::store::branch_ref(&main))? else {
        return Ok(Completed::default());
    };
    let mut kept: Vec<(String, PathBuf, bool)> = Vec::new();
    let day = std::time::Duration::from_secs(24 * 60 * 60);
    for entry in std::fs::read_dir(&pending)
        .map_err(io_error(format!("read {}", pending.display())))?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > day);
        kept.push((name, entry.path(), stale));
    }
    kept.sort();
    let mut store = crate::store::Store::open_for_notes(dir)?;
    if store.needs_ref_commands() {
        store.use_ref_commands(std::sync::Arc::new(judged.git.clone()));
    }
    let mut completed = Completed::default();
    let mut failed = None;
    for (commit, path, stale) in kept {
        // A commit the push that judged it never brought (its objects left with the
        // quarantine) is no ancestor of anything: `is_ancestor` fails on it.
        let on_main = crate::exec::git::is_full_object_id(&commit)
            && judged.git.is_ancestor(&commit, &tip).unwrap_or(false);
        if !on_main {
            if stale {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        // Every push runs this, so two runs may take the same file at once: the file gone
        // means the other run wrote its note (note first, file last), and this one goes on to
        // the rest, which may be its own push's verdict.
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(format!("read {}", path.display()))(e)),
        };
        // A note that cannot be written now (its ref locked, or kept moving) leaves its
        // verdict kept for the next run; the others, this push's among them, go on.
        let changed = match super::write_verdict_note(&store, ATTEST_NOTES_REF, &commit, &text) {
            Ok(changed) => changed,
            Err(e) => {
                failed.get_or_insert(e);
                continue;
            }
        };
        // Note first, then the file: a kill between the two leaves a file whose note is
        // written already, which the next run writes again as it is (no change). The run
        // that removes the file reports the verdict, so racing runs report it once: written
        // where this run's write changed the note, else found written already.
        match std::fs::remove_file(&path) {
            Ok(()) if changed => completed.written.push(commit),
            Ok(()) => completed.already_written.push(commit),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(format!("remove {}", path.display()))(e)),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(completed),
    }
}

/// What the server remembers of a verdict on a tree under a policy (docs/integrity.md,
/// "The server hook"): a PASSED one is not judged again for the same commit, and a FAILED
/// one whose code ran stays failed for that tree and policy, since a later pass would be luck.
#[derive(Debug, Serialize, serde::Deserialize)]
struct Remembered {
    commit: String,
    passed: bool,
    kind: Option<String>,
    workflow: Option<String>,
    transition: Option<String>,
    reasons: Vec<String>,
    reran: Vec<String>,
    statement: serde_json::Value,
}

/// Where the remembered verdicts are: one file per tree and policy; with `commit`'s tree and
/// policy.
fn memory_file(judged: &Judged, commit: &str) -> Result<(PathBuf, String, String), EngineError> {
    let tree = judged.git.tree_of(commit)?;
    // The policy: main's config as the merge's first parent has it, which a merge that
    // PASSED was pinned to (its blob id, as git names it).
    let config = judged
        .git
        .show(&format!("{commit}^1"), crate::config::FILE_NAME)
        .ok()
        .flatten();
    let policy = match config {
        Some(bytes) => {
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, &bytes)
                .map_err(|e| EngineError::Internal(format!("hash the policy: {e}")))?
                .to_string()
        }
        None => "none".to_string(),
    };
    let file = judged
        .git
        .common_dir()?
        .join("orchestrator")
        .join("verdicts")
        .join(format!("{tree}-{policy}"));
    Ok((file, tree, policy))
}

/// The verdict on `commit`, as remembered when the server has judged its tree under its
/// policy before, else judged now (and remembered when it passed, or failed having run the
/// PR's code: a failure of the record alone, such as a chain not pushed yet, is not the
/// tree's).
fn judge_remembered(
    judged: &Judged,
    verifier: &Verifier,
    chains: &[Chain],
    commit: &str,
) -> Result<Verdict, EngineError> {
    let (file, tree, policy) = memory_file(judged, commit)?;
    let remembered = crate::input::read_file(&file, crate::input::CAP)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<Remembered>(&bytes).ok());
    let lifted = match remembered {
        Some(r) if r.passed && r.commit == commit => return Ok(recalled(commit, &tree, r)),
        // A failure stays remembered until a human's answer in the chain accepts a pass of
        // this tree under this policy, by the rule `attest` holds it to: then it is judged
        // afresh, and the failure stays on file for any other commit of the tree.
        Some(r) if !r.passed => {
            match super::lifted::accepted_for(verifier, chains, commit, &tree, &policy)? {
                Some(answer) => Some((answer, r)),
                None => return Ok(recalled(commit, &tree, r)),
            }
        }
        _ => None,
    };
    let mut verdict = judge(verifier, chains, commit)?;
    if let Some((answer, r)) = lifted {
        if verdict.passed {
            accept(&mut verdict, &tree, answer, r);
        }
        return Ok(verdict);
    }
    // A refusal that only awaits a human's approval by name is the policy's, not the tree's:
    // not remembered, so the push once a human approved is judged afresh.
    let awaiting = !verdict.reasons.is_empty()
        && verdict
            .reasons
            .iter()
            .all(|r| r.starts_with(crate::engine::finalize::AWAITING_APPROVAL));
    if verdict.passed || (!verdict.reran.is_empty() && !awaiting) {
        let r = Remembered {
            commit: verdict.commit.clone(),
            passed: verdict.passed,
            kind: verdict.kind.map(str::to_string),
            workflow: verdict.workflow.clone(),
            transition: verdict.transition.clone(),
            reasons: verdict.reasons.clone(),
            reran: verdict.reran.clone(),
            statement: verdict.statement.clone(),
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
        }
        let bytes = serde_json::to_vec(&r)
            .map_err(|e| EngineError::Internal(format!("a verdict did not serialise: {e}")))?;
        write_whole(&file, &bytes)?;
    }
    Ok(verdict)
}

/// A verdict that passed after the remembered failure `r` of its `tree`, accepted by a human's
/// `answer`: it lists that refusal and the answer, and names it in a warning, in its
/// statement too (the note the post-receive hook writes).
fn accept(verdict: &mut Verdict, tree: &str, answer: AnswerCheck, r: Remembered) {
    let predicate = &r.statement["predicate"];
    let refusal = super::memory::EarlierRefusal {
        commit: r.commit,
        time: predicate["timeVerified"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        reasons: r.reasons,
    };
    if !verdict.earlier_refusals.contains(&refusal) {
        verdict.earlier_refusals.push(refusal);
    }
    verdict.tree = Some(tree.to_string());
    let warning = super::memory::accepted_warning(tree, &answer);
    if !verdict.warnings.contains(&warning) {
        verdict.warnings.push(warning);
    }
    if !verdict.answers.iter().any(|a| a.commit == answer.commit) {
        verdict.answers.push(answer);
    }
    let ours = &mut verdict.statement["predicate"]["gitOrchestrate"];
    if ours.is_object() {
        ours["tree"] = serde_json::json!(tree);
        ours["warnings"] = serde_json::json!(verdict.warnings);
        ours["answers"] = serde_json::json!(verdict.answers);
        ours["earlierRefusals"] = serde_json::json!(verdict.earlier_refusals);
    }
}

/// A remembered verdict as the verdict on `commit`: the same one (a PASSED verdict on this
/// very commit), or a failure because this tree failed under this policy before.
fn recalled(commit: &str, tree: &str, r: Remembered) -> Verdict {
    const KINDS: [&str; 4] = ["merge", "pr-head", "ticket-merge", "ticket-squash"];
    let kind = r
        .kind
        .as_deref()
        .and_then(|k| KINDS.into_iter().find(|known| *known == k));
    let same = r.commit == commit;
    let reasons = if r.passed {
        r.reasons
    } else {
        vec![format!(
            "its tree failed under this policy before{} (a later pass would be luck; a human \
             who accepts it answers by name: git orchestrate approve --flaky --tree {tree}, \
             pushed with the chain): {}",
            if same {
                String::new()
            } else {
                format!(", in {}", crate::short_id(&r.commit))
            },
            r.reasons.join("; ")
        )]
    };
    Verdict {
        commit: commit.to_string(),
        kind,
        workflow: r.workflow,
        transition: r.transition,
        passed: r.passed,
        reasons,
        reran: r.reran,
        // A remembered verdict re-ran nothing this time: no per-test evidence of its own.
        red_tests: Vec::new(),
        changed_tests: None,
        changed_tests_verdict: None,
        adequacy: super::verdict::Adequacy::NotMeasured { report: false },
        warnings: Vec::new(),
        tree: None,
        flaky: false,
        earlier_refusals: Vec::new(),
        answers: Vec::new(),
        final_note: None,
        statement: if same {
            r.statement
        } else {
            serde_json::Value::Null
        },
    }
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
        for forged in [
            "refs/notes/remotes/origin/orchestrator-attest",
            "refs/notes/x/orchestrator-attest",
            "refs/notes/orchestrator-attest-copy",
            "refs/notes/Orchestrator-Attest-CI",
            "refs/notes/ORCHESTRATOR-ATTEST",
            "refs/Notes/orchestrator-attest",
        ] {
            assert_eq!(guarded(forged, "main"), Guarded::AttestNotes, "{forged}");
        }
        assert_eq!(
            guarded("refs/notes/orchestrator-attest-ci", "main"),
            Guarded::CiNotes
        );
        assert_eq!(guarded("refs/notes/orchestrator", "main"), Guarded::Notes);
        assert_eq!(
            guarded("refs/heads/orchestrator-attest", "main"),
            Guarded::Other
        );
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
        for folded in [
            "refs/notes/ORCHESTRATOR",
            "refs/Notes/orchestrator",
            "refs/Orchestrator/workflows/w",
            "refs/orchestrator/CLAIMS/pr-1",
            "refs/orchestrator/Archive",
            "refs/Orchestrator/remotes/o/workflows/w",
            "refs/REPLACE/abc",
            "refs/heads/Main",
            "REFS/heads/main",
        ] {
            assert_eq!(guarded(folded, "main"), Guarded::Folded, "{folded}");
        }
        for beyond_ascii in [
            "refs/notes/orche\u{17f}trator",
            "refs/heads/ma\u{131}n",
            "refs/orchestrator/wor\u{212a}flows/w",
            "refs/heads/ma\u{200c}in",
            "refs/notes/orche\u{feff}strator",
        ] {
            assert_eq!(
                guarded(beyond_ascii, "main"),
                Guarded::Folded,
                "{beyond_ascii}"
            );
        }
        assert_eq!(guarded("refs/heads/TRUNK", "Trunk"), Guarded::Folded);
        assert_eq!(guarded("refs/heads/Trunk", "Trunk"), Guarded::Main);
        assert_eq!(guarded("refs/heads/Feature", "main"), Guarded::Other);
        assert_eq!(guarded("refs/tags/V1", "main"), Guarded::Other);
    }

    /// Each row: two names, whether they are twins (one file where the file system folds case
    /// and normalization), and why, by CaseFolding.txt's status for the code point (C and S
    /// fold; F and T do not) or by canonical equivalence.
    #[test]
    fn fold_takes_canonical_equivalents_then_simple_case_folding() {
        let table = [
            (
                "caf\u{e9}",
                "cafe\u{301}",
                true,
                "U+00E9 is canonically e + U+0301 (APFS, HFS+)",
            ),
            (
                "CAF\u{c9}",
                "cafe\u{301}",
                true,
                "É decomposes, then E folds (C)",
            ),
            ("STRA\u{1e9e}E", "straße", true, "U+1E9E; S; 00DF"),
            (
                "STRA\u{1e9e}E",
                "STRASSE",
                false,
                "ẞ folds to ß, and ß to ss only in full (F)",
            ),
            (
                "straße",
                "strasse",
                false,
                "00DF has only a full (F) folding",
            ),
            (
                "\u{212a}ELVIN",
                "kelvin",
                true,
                "212A; C; 006B (the Kelvin sign)",
            ),
            (
                "\u{212b}ngstrom",
                "ångstrom",
                true,
                "U+212B is canonically A + U+030A",
            ),
            (
                "orche\u{17f}trator",
                "orchestrator",
                true,
                "017F; C; 0073 (long s)",
            ),
            (
                "orche\u{fb06}rator",
                "orchestrator",
                false,
                "FB06 has only a full (F) folding",
            ),
            ("\u{fb05}", "\u{fb06}", true, "FB05; S; FB06"),
            (
                "\u{fb01}x",
                "fix",
                false,
                "FB01 has only a full (F) folding",
            ),
            (
                "ma\u{131}n",
                "main",
                true,
                "0131 upper-cases to I, as NTFS folds it (the table: only Turkic, T)",
            ),
            (
                "\u{130}",
                "i",
                false,
                "0130 has only full (F) and Turkic (T) foldings",
            ),
            (
                "\u{130}",
                "I\u{307}",
                true,
                "U+0130 is canonically I + U+0307",
            ),
            (
                "\u{3c2}a",
                "\u{3c3}a",
                true,
                "03C2; C; 03C3 (final sigma, alone)",
            ),
            ("\u{3a3}\u{3a3}", "\u{3c3}\u{3c3}", true, "03A3; C; 03C3"),
            (
                "\u{1c5}",
                "\u{1c6}",
                true,
                "01C5; C; 01C6 (a title-case letter)",
            ),
            (
                "\u{390}",
                "\u{1fd3}",
                true,
                "1FD3; S; 0390, and canonically equal",
            ),
            ("\u{3b1}\u{345}", "\u{3b1}\u{3b9}", true, "0345; C; 03B9"),
            (
                "\u{149}",
                "\u{2bc}n",
                false,
                "0149 has only a full (F) folding",
            ),
            (
                "\u{ab70}",
                "\u{13a0}",
                true,
                "AB70; C; 13A0 (Cherokee folds to upper case)",
            ),
            (
                "ma\u{200c}in",
                "main",
                true,
                "HFS+ ignores U+200C in a name",
            ),
            (
                "REFS/Heads/Main",
                "refs/heads/main",
                true,
                "ASCII letters fold (C)",
            ),
            ("refs/heads/main", "refs/heads/mains", false, "another name"),
        ];
        for (a, b, twins, why) in table {
            assert_eq!(fold(a) == fold(b), twins, "{a:?} and {b:?}: {why}");
        }
    }

    /// One code point onto one, as CaseFolding.txt's C and S rows say (and `ı` onto `i`, as
    /// NTFS joins them); F and T rows are none of it. (Cherokee, which the table folds onto
    /// its upper case, meets it here on its lower case: the same twins, above.)
    #[test]
    fn fold_char_is_simple_case_folding() {
        for (c, folded) in [
            ('A', 'a'),
            ('\u{1e9e}', 'ß'),
            ('ß', 'ß'),
            ('\u{212a}', 'k'),
            ('\u{17f}', 's'),
            ('\u{3c2}', '\u{3c3}'),
            ('\u{1c5}', '\u{1c6}'),
            ('\u{345}', '\u{3b9}'),
            ('\u{1fd3}', '\u{390}'),
            ('\u{fb05}', '\u{fb06}'),
            ('\u{fb06}', '\u{fb06}'),
            ('\u{131}', 'i'),
            ('\u{130}', '\u{130}'),
        ] {
            assert_eq!(fold_char(c), folded, "{c:?}");
        }
    }

    fn claim(workflow: &str, user: &str, expires: i64) -> crate::store::Claim {
        crate::store::Claim {
            slug: "pr-1".into(),
            workflow: workflow.into(),
            host: "h".into(),
            user: user.into(),
            since: 100,
            expires,
            nonce: "n".into(),
        }
    }

    /// Each row: the update, and whether it is refused.
    #[test]
    fn claims_move_only_as_their_holder_or_a_human_moves_them() {
        let now = 1_000;
        let base = || ClaimMove {
            slug: "pr-1",
            old: None,
            new: None,
            now,
            ttl: 7_200,
            holder_working: false,
            accepted_here: false,
            works_on: None,
            human: false,
        };
        let live = || Some(Some(claim("a", "alice", now + 60)));
        let lapsed = || Some(Some(claim("a", "alice", now - 3_600)));
        let rows: Vec<(&str, ClaimMove, bool)> = vec![
            (
                "junk",
                ClaimMove {
                    new: Some(None),
                    ..base()
                },
                true,
            ),
            (
                "junk, by a human",
                ClaimMove {
                    new: Some(None),
                    human: true,
                    ..base()
                },
                true,
            ),
            (
                "taken with the plan acceptance",
                ClaimMove {
                    new: Some(Some(claim("b", "bob", now + 60))),
                    accepted_here: true,
                    ..base()
                },
                false,
            ),
            (
                "taken alone",
                ClaimMove {
                    new: Some(Some(claim("b", "bob", now + 60))),
                    ..base()
                },
                true,
            ),
            (
                "for longer than the ttl",
                ClaimMove {
                    new: Some(Some(claim("b", "bob", now + 10_000))),
                    accepted_here: true,
                    ..base()
                },
                true,
            ),
            (
                "under another key's ref",
                ClaimMove {
                    slug: "pr-2",
                    new: Some(Some(claim("b", "bob", now + 60))),
                    accepted_here: true,
                    ..base()
                },
                true,
            ),
            (
                "renewed by its holder",
                ClaimMove {
                    old: live(),
                    new: Some(Some(claim("a", "alice", now + 120))),
                    ..base()
                },
                false,
            ),
            (
                "renewed by its holder for a full term while it works",
                ClaimMove {
                    old: live(),
                    new: Some(Some(claim("a", "alice", now + 120))),
                    holder_working: true,
                    ..base()
                },
                false,
            ),
            (
                "shortened to a lapse in its holder's name while it works",
                ClaimMove {
                    old: Some(Some(claim("a", "alice", now + 3_600))),
                    new: Some(Some(claim("a", "alice", now - 1))),
                    holder_working: true,
                    ..base()
                },
                true,
            ),
            (
                "shortened to a minute in its holder's name while it works",
                ClaimMove {
                    old: Some(Some(claim("a", "alice", now + 3_600))),
                    new: Some(Some(claim("a", "alice", now + 60))),
                    holder_working: true,
                    ..base()
                },
                true,
            ),
            (
                "cut by the clocks' skew, once, from beyond a full term",
                ClaimMove {
                    old: Some(Some(claim("a", "alice", now + 7_100))),
                    new: Some(Some(claim("a", "alice", now + 6_900))),
                    holder_working: true,
                    ..base()
                },
                false,
            ),
            (
                "cut again, below the claim the server has",
                ClaimMove {
                    old: Some(Some(claim("a", "alice", now + 6_900))),
                    new: Some(Some(claim("a", "alice", now + 6_899))),
                    holder_working: true,
                    ..base()
                },
                true,
            ),
            (
                "shortened once its workflow is done",
                ClaimMove {
                    old: live(),
                    new: Some(Some(claim("a", "alice", now - 1))),
                    ..base()
                },
                false,
            ),
            (
                "renewed by its holder once lapsed",
                ClaimMove {
                    old: lapsed(),
                    new: Some(Some(claim("a", "alice", now + 120))),
                    ..base()
                },
                false,
            ),
            (
                "taken from its holder",
                ClaimMove {
                    old: live(),
                    new: Some(Some(claim("b", "bob", now + 120))),
                    accepted_here: true,
                    ..base()
                },
                true,
            ),
            (
                "taken over once lapsed",
                ClaimMove {
                    old: lapsed(),
                    new: Some(Some(claim("b", "bob", now + 120))),
                    accepted_here: true,
                    ..base()
                },
                false,
            ),
            (
                "deleted while its workflow works on it",
                ClaimMove {
                    old: live(),
                    holder_working: true,
                    ..base()
                },
                true,
            ),
            (
                "deleted once its workflow is done",
                ClaimMove {
                    old: live(),
                    ..base()
                },
                false,
            ),
            (
                "deleted by a human",
                ClaimMove {
                    old: live(),
                    holder_working: true,
                    human: true,
                    ..base()
                },
                false,
            ),
            (
                "taken by a human",
                ClaimMove {
                    old: live(),
                    new: Some(Some(claim("b", "bob", now + 120))),
                    human: true,
                    ..base()
                },
                false,
            ),
        ];
        for (what, row, refused) in rows {
            assert_eq!(claim_refusal(&row).is_some(), refused, "{what}: {row:?}");
        }
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
