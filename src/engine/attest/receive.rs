//! The git server's hooks (docs/integrity.md, "The server hook"): `attest --pre-receive`
//! judges every ref a push updates before git accepts any of it, reading the pushed objects
//! from the push's quarantine; `attest --post-receive` writes the verdicts of the accepted
//! moves of main as notes, which only the server writes.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::Serialize;

use super::judge;
use super::verdict::Verdict;
use super::verifier::{Chain, Confine, Judged, Verifier, workflow_of};
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
    if reference == ATTEST_NOTES_REF || reference.starts_with(&format!("{ATTEST_NOTES_REF}/")) {
        return Guarded::AttestNotes;
    }
    if reference.starts_with("refs/orchestrator/workflows/")
        && let Some(name) = workflow_of(reference)
    {
        return Guarded::Workflow(name);
    }
    if reference.starts_with("refs/orchestrator/remotes/")
        || reference.starts_with("refs/orchestrator/backups/")
        || reference.starts_with("refs/orchestrator/workflows/")
    {
        // What is left here is a nested name (`workflows/a/b`), no workflow's.
        return Guarded::Bookkeeping;
    }
    if reference.starts_with("refs/replace/") {
        return Guarded::Replace;
    }
    if reference.strip_prefix("refs/heads/") == Some(main) {
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
    // The pushed chains first: a merge on main is judged by the chain pushed with it.
    let mut chains: Vec<Chain> = Vec::new();
    for u in updates {
        if let (Guarded::Workflow(name), Some(new)) = (guarded(&u.reference, &main), &u.new)
            && let Ok(tip) = ObjectId::from_hex(new.as_bytes())
        {
            chains.push(Chain {
                workflow: name.to_string(),
                reference: u.reference.clone(),
                tip,
            });
        }
    }
    // Only the chains the hook guards: a remote-tracking copy is no one's word here.
    chains.extend(judged.chains()?.into_iter().filter(|c| {
        c.reference.starts_with("refs/orchestrator/workflows/")
            && !updates.iter().any(|u| u.reference == c.reference)
    }));
    let refuse = |u: &Update, commit: Option<&String>, reason: String| Refusal {
        reference: u.reference.clone(),
        commit: commit.cloned(),
        reason,
    };
    for u in updates {
        match guarded(&u.reference, &main) {
            Guarded::AttestNotes => report.refusals.push(refuse(
                u,
                u.new.as_ref(),
                "only the server writes attestations; no client pushes to them".into(),
            )),
            Guarded::Bookkeeping => report.refusals.push(refuse(
                u,
                u.new.as_ref(),
                "a clone's own bookkeeping; push workflows to refs/orchestrator/workflows/".into(),
            )),
            Guarded::Replace => report.refusals.push(refuse(
                u,
                u.new.as_ref(),
                "a replace ref makes git show other objects than the ones stored; none is pushed here".into(),
            )),
            Guarded::Workflow(name) => {
                if let Some(why) = judge_chain(&judged, &verifier, name, u, human.is_some())? {
                    report.refusals.push(refuse(u, u.new.as_ref(), why));
                }
            }
            Guarded::Main if human.is_some() => {}
            Guarded::Main => {
                let (Some(old), Some(new)) = (&u.old, &u.new) else {
                    if u.new.is_none() {
                        report
                            .refusals
                            .push(refuse(u, u.old.as_ref(), format!("deletes {main}")));
                    }
                    // The first push of main to an empty repository sets it up.
                    continue;
                };
                if !judged.git.is_ancestor(old, new)? {
                    report.refusals.push(refuse(
                        u,
                        Some(new),
                        format!(
                            "rewrites {main} (a rebase or a force push): it does not descend from {}",
                            crate::short_id(old)
                        ),
                    ));
                    continue;
                }
                let mut commits = judged.git.first_parents(&format!("{old}..{new}"))?;
                commits.reverse();
                for commit in commits {
                    let verdict = judge(&verifier, &chains, &commit)?;
                    let merge = verdict.kind == Some("merge");
                    if !verdict.passed || !merge {
                        let why = if merge || !verdict.passed {
                            verdict.reasons.join("; ")
                        } else {
                            "it is a PR's head, not the workflow's merge of it".to_string()
                        };
                        report.refusals.push(refuse(
                            u,
                            Some(&commit),
                            format!(
                                "moves {main} to a commit that is not a workflow merge that attests PASSED: {why}"
                            ),
                        ));
                    }
                    report.verdicts.push(verdict);
                }
            }
            Guarded::Other => {}
        }
    }
    if report.refusals.is_empty() {
        keep_verdicts(&judged, &report.verdicts)?;
    }
    Ok(report)
}

/// Why no update can be judged, if none can: main (HEAD's branch, or main's `main_branch`)
/// does not exist while other branches do, so the hook would guard a branch nobody pushes
/// to; or the repository is empty and the push does not create main.
fn unguardable(
    judged: &Judged,
    main: &str,
    updates: &[Update],
) -> Result<Option<String>, EngineError> {
    let main_ref = format!("refs/heads/{main}");
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

/// `attest --post-receive`: the verdicts the pre-receive hook kept, for commits now on main,
/// written as notes under `refs/notes/orchestrator-attest`; the rest are dropped.
pub fn post_receive(dir: &Path) -> Result<Vec<String>, EngineError> {
    let judged = Judged::open(dir)?;
    let (main, _) = judged.main_config()?;
    let pending = pending_dir(&judged)?;
    let Ok(entries) = std::fs::read_dir(&pending) else {
        return Ok(Vec::new());
    };
    let store = crate::store::Store::open_for_notes(dir)?;
    let mut written = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let on_main = crate::exec::git::is_full_object_id(&name)
            && judged
                .git
                .is_ancestor(&name, &format!("refs/heads/{main}"))
                .unwrap_or(false);
        if on_main && let Ok(text) = std::fs::read_to_string(&path) {
            let mut tries = 0;
            loop {
                match store.set_attest_note(&name, &text) {
                    Ok(_) => break,
                    Err(crate::store::WriteError::Conflict) if tries < 20 => tries += 1,
                    Err(e) => return Err(e.into()),
                }
            }
            written.push(name);
        }
        std::fs::remove_file(&path).map_err(io_error(format!("remove {}", path.display())))?;
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

/// The first line of the hooks `install_server_hook` writes: how a hook of ours is known.
const HOOK_MARK: &str = "# git-orchestrate server hook";

/// What `--install-server-hook` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Installed {
    pub hooks: Vec<PathBuf>,
    /// Hooks that were ours already and are rewritten.
    pub replaced: Vec<PathBuf>,
}

/// Installs the pre-receive and post-receive hooks in the bare repository `dir`, each
/// running `program` (absolute). A hook there that is not ours is never overwritten.
pub fn install_server_hook(dir: &Path, program: &Path) -> Result<Installed, EngineError> {
    let git = crate::exec::Git::new(dir);
    let bare = git.is_bare().map_err(|e| EngineError::BadInput {
        message: format!(
            "{} is not a git repository: {}",
            dir.display(),
            e.stderr.trim()
        ),
        hint: "Name the server's bare repository, like /srv/git/project.git.".into(),
    })?;
    if !bare {
        return Err(EngineError::BadInput {
            message: format!("{} is not a bare repository", dir.display()),
            hint: "The server hook guards the repository clients push to: a bare one (git init --bare).".into(),
        });
    }
    let common = git.common_dir()?;
    let hooks = common.canonicalize().unwrap_or(common).join("hooks");
    let program = program.to_string_lossy();
    if program.contains('\'') || program.contains('\n') {
        return Err(EngineError::BadInput {
            message: format!("the program's path {program:?} cannot be quoted for a hook"),
            hint: "Install git-orchestrate under a path without quotes or line breaks.".into(),
        });
    }
    let mut installed = Installed {
        hooks: Vec::new(),
        replaced: Vec::new(),
    };
    let files: Vec<(PathBuf, String)> = ["pre-receive", "post-receive"]
        .iter()
        .map(|name| {
            (
                hooks.join(name),
                format!(
                    "#!/bin/sh\n{HOOK_MARK} judges every push: docs/integrity.md, \"attest and the server hook\"\nexec '{program}' attest --{name}\n"
                ),
            )
        })
        .collect();
    // Decide for both before writing either.
    for (path, _) in &files {
        match std::fs::read_to_string(path) {
            Ok(text)
                if text
                    .lines()
                    .nth(1)
                    .is_some_and(|l| l.starts_with(HOOK_MARK)) =>
            {
                installed.replaced.push(path.clone());
            }
            Ok(_) => {
                return Err(EngineError::BadInput {
                    message: format!("{} exists and is not git-orchestrate's", path.display()),
                    hint: "Move it aside (or call it from a hook of your own), then install again."
                        .into(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(format!("read {}", path.display()))(e)),
        }
    }
    std::fs::create_dir_all(&hooks).map_err(io_error(format!("create {}", hooks.display())))?;
    for (path, text) in files {
        write_executable(&path, &text)?;
        installed.hooks.push(path);
    }
    Ok(installed)
}

fn write_executable(path: &Path, text: &str) -> Result<(), EngineError> {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = path.with_extension("git-orchestrate-tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(io_error(format!("write {}", path.display())))
}
