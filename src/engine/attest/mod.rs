//! `git orchestrate attest` (docs/integrity.md, "attest"): the verdict on a workflow's merge
//! into main, or on a finalized PR's head, reached off the agent's machine (in CI or on the
//! git server) on content the agent cannot choose after the fact: the chain is replayed, the
//! pinned gates and every task's pinned RED test run again in a fresh repository that reads
//! only the judged repository's objects, and the merge, the pin and the protected paths are
//! checked against what the chain says was verified.

mod check;
mod ci_notes;
pub mod dsse;
mod find;
pub mod harden;
mod human;
mod install;
mod kept_notes;
mod lifted;
pub mod memory;
mod plans;
pub mod receive;
pub mod seal;
mod statement;
mod ticket;
mod verdict;
mod verifier;

use serde::Serialize;
use serde_json::Value;

pub use find::Target;
pub use install::{Installed, install_server_hook};
pub use statement::{PREDICATE_TYPE, STATEMENT_TYPE, VERIFIER_ID};
pub use verdict::{Adequacy, Verdict};
pub use verifier::{Chain, Confine, Judged, Verifier};

use super::EngineError;

/// A commit `attest` was asked to judge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    pub commit: String,
    /// Named by itself, not as one of a range's commits: it must be something a workflow
    /// made (a range of main may hold a human's commit, which is judged FAILED).
    pub alone: bool,
}

/// The commits `revs` name in the repository `judged` (a revision each, or `A..B`: the
/// first-parent commits of the range, oldest first), each once, in the order first named.
pub fn commits_of(judged: &Judged, revs: &[String]) -> Result<Vec<Wanted>, EngineError> {
    let mut commits: Vec<Wanted> = Vec::new();
    let mut add = |commit: String, alone: bool| {
        // Named twice, judged once: a verdict does not change by asking again.
        if !commits.iter().any(|w| w.commit == commit) {
            commits.push(Wanted { commit, alone });
        }
    };
    let mut named: Vec<&str> = Vec::new();
    for rev in revs {
        // The same text names the same commits: resolved once (`attest HEAD` × 1,000).
        if named.contains(&rev.as_str()) {
            continue;
        }
        named.push(rev);
        if rev.starts_with('-') {
            return Err(EngineError::BadInput {
                message: format!("\"{rev}\" is not a revision: attest takes commits and ranges"),
                hint: "Name a commit (HEAD, main, an id) or a range A..B.".into(),
            });
        }
        if rev.contains("...") {
            return Err(EngineError::BadInput {
                message: format!(
                    "\"{rev}\" is a symmetric difference: it holds the commits of both sides, not \
                     what one side added"
                ),
                hint:
                    "Name a range A..B (the first-parent commits B added to A), like main~3..main."
                        .into(),
            });
        }
        if rev.contains("..") {
            let mut range = judged
                .git
                .first_parents(rev)
                .map_err(|e| EngineError::BadInput {
                    message: format!("cannot list the range {rev}: {}", e.stderr.trim()),
                    hint: "Name a range of commits this repository has, like main~3..main.".into(),
                })?;
            if range.is_empty() {
                return Err(EngineError::BadInput {
                    message: format!("the range {rev} names no commit"),
                    hint: "Name a range that holds commits, like main~3..main.".into(),
                });
            }
            range.reverse();
            for commit in range {
                add(commit, false);
            }
        } else {
            let id = judged
                .git
                .rev_parse(rev)
                .map_err(|_| EngineError::BadInput {
                    message: format!("\"{rev}\" names no commit in this repository"),
                    hint: "Fetch it first, or name a commit this repository has.".into(),
                })?;
            add(id, true);
        }
    }
    Ok(commits)
}

/// Refuses a commit named by itself that no workflow made (a branch not merged, a workflow
/// ref's own commit): there is nothing to judge, so nothing is written for it.
fn require_recorded(rev: &Wanted, verdict: &Verdict) -> Result<(), EngineError> {
    if !rev.alone || verdict.kind.is_some() {
        return Ok(());
    }
    Err(EngineError::BadInput {
        message: format!(
            "{} is not a workflow's merge into main nor a finalized PR's head: {}",
            crate::short_id(&rev.commit),
            verdict.reasons.join("; ")
        ),
        hint: "attest judges what a workflow made: its merge on main (main's first-parent \
               commits, or a range A..B of them) or its PR's squashed head."
            .into(),
    })
}

/// Whether a commit no workflow made may pass as a human's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Humans {
    /// When a repin a human listed in `[attest] humans` signed accounts for it: `attest`, the
    /// CI job's judgement of main, which has no pusher to ask.
    Repinned,
    /// Never: the server hook, which lets a listed human's own push move main instead.
    Refused,
}

/// The verdict on `commit`, judged in `verifier` from the chains given (pushed updates
/// first, then the repository's refs), as the server hook judges it: a commit no workflow
/// made fails.
/// The server remembers its verdicts in files instead (receive.rs, `judge_remembered`): it
/// writes the notes of accepted verdicts only, and a refused push's commit is not kept.
pub fn judge(verifier: &Verifier, chains: &[Chain], commit: &str) -> Result<Verdict, EngineError> {
    judge_as(verifier, chains, commit, Humans::Refused, None)
}

fn judge_as(
    verifier: &Verifier,
    chains: &[Chain],
    commit: &str,
    humans: Humans,
    memory: Option<&memory::Memory>,
) -> Result<Verdict, EngineError> {
    let time = gix::date::Time::now_utc().format_or_unix(gix::date::time::format::ISO8601_STRICT);
    let mut verdict = Verdict::new(commit);
    let found = match chains.first() {
        Some(first) => {
            let probe = verifier.session(first)?;
            find::locate(&probe.store, chains, commit)?
        }
        None => None,
    };
    let mut policy = None;
    let ticket = match (&found, chains.first()) {
        (None, Some(first)) => {
            let probe = verifier.session(first)?;
            ticket::locate(&probe.store, chains, commit)?
        }
        _ => None,
    };
    if let Some(found) = ticket {
        verdict.kind = Some(if found.merge {
            "ticket-merge"
        } else {
            "ticket-squash"
        });
        verdict.workflow = Some(found.chain.workflow.clone());
        verdict.transition = Some(found.transition.to_string());
        let session = verifier.session(&found.chain)?;
        policy = ticket::check(
            &session,
            &found,
            commit,
            verifier.cannot_confine(),
            &mut verdict,
        )?;
        remember(
            &session,
            memory,
            commit,
            policy.as_ref(),
            Some(AnswersIn::Ticket {
                tip: found.chain.tip,
                ticket: &found.ticket,
            }),
            &mut verdict,
        )?;
    }
    match found {
        None if verdict.kind.is_some() => {}
        None => unrecorded(verifier, chains, commit, humans, &mut verdict)?,
        Some((chain, target)) => {
            verdict.kind = Some(target.kind());
            verdict.workflow = Some(chain.workflow.clone());
            verdict.transition = Some(target.transition().to_string());
            let session = verifier.session(&chain)?;
            policy = check::check(
                &session,
                &chain,
                &target,
                commit,
                verifier.cannot_confine(),
                &mut verdict,
            )?;
            let stop = crate::engine::chain::pr_stop(&session.store, target.pr_state())?;
            remember(
                &session,
                memory,
                commit,
                policy.as_ref(),
                Some(AnswersIn::Pr {
                    tip: chain.tip,
                    stop,
                }),
                &mut verdict,
            )?;
        }
    }
    verdict.passed = verdict.reasons.is_empty();
    verdict.statement = statement_of(&verdict, policy.as_ref(), &time);
    Ok(verdict)
}

/// Why no workflow's chain records `commit`, in `verdict`: a human's commit on main, which
/// `attest` passes when a repin a listed human signed accounts for it (see `attest`).
fn unrecorded(
    verifier: &Verifier,
    chains: &[Chain],
    commit: &str,
    humans: Humans,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let human = match humans {
        Humans::Repinned => human::locate(verifier, chains, commit)?,
        Humans::Refused => Ok(None),
    };
    match human {
        Ok(Some(found)) => {
            verdict.kind = Some("human");
            verdict.workflow = Some(found.chain.workflow.clone());
            verdict.transition = Some(found.transition.to_string());
            verdict.answers.push(found.answer);
        }
        other => {
            verdict.reasons.push(format!(
                "no workflow's chain records {commit} as its merge into main or as a finalized PR's \
                 head (fetch +refs/orchestrator/*:refs/orchestrator/* if a workflow elsewhere made it)"
            ));
            // A repin accounts for it, and is not enough: why, after.
            if let Err(why) = other {
                verdict.reasons.extend(why);
            }
        }
    }
    Ok(())
}

/// The in-toto statement of `verdict`, made at `time` under `policy` (the pin and its config
/// blob).
fn statement_of(verdict: &Verdict, policy: Option<&(String, String)>, time: &str) -> Value {
    let reference = verdict
        .workflow
        .as_deref()
        .map(crate::store::workflow_ref)
        .unwrap_or_default();
    statement::statement(&statement::Facts {
        commit: &verdict.commit,
        kind: verdict.kind,
        workflow: verdict.workflow.as_deref(),
        chain: verdict
            .transition
            .as_deref()
            .map(|t| (t, reference.as_str())),
        policy: policy.map(|(p, b)| (p.as_str(), b.as_str())),
        passed: verdict.passed,
        time,
        reasons: &verdict.reasons,
        reran: &verdict.reran,
        answers: &verdict
            .answers
            .iter()
            .filter_map(|a| serde_json::to_value(a).ok())
            .collect::<Vec<_>>(),
        changed_tests: verdict.changed_tests.as_ref().and_then(|changed| {
            let mut value = serde_json::to_value(changed).ok()?;
            value["verdict"] = Value::from(changed.verdict());
            Some(value)
        }),
        warnings: &verdict.warnings,
        tree: verdict.tree.as_deref(),
        earlier_refusals: &verdict
            .earlier_refusals
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect::<Vec<_>>(),
    })
}

/// Where the human answers a verdict may rest on are recorded.
enum AnswersIn<'t> {
    /// A PR's segment of its workflow's chain: the chain's tip, and where the segment stops.
    Pr {
        tip: gix::ObjectId,
        stop: Option<gix::ObjectId>,
    },
    /// A finished ticket's chain, to its tip.
    Ticket {
        tip: gix::ObjectId,
        ticket: &'t crate::workflow::ticket::Ticket,
    },
}

/// The judged commit's tree in `verdict`, and, with a `memory` of the verdict notes, every
/// earlier refusal of that tree under `policy` a listed verifier signed (after those the
/// chain's final checks recorded): a verdict that passed now is then `flaky`, and FAILED
/// (docs/integrity.md, "A tree that failed stays failed, off the server too"), unless a
/// human's answer where `answers` are recorded (a PR's segment of its chain, or a finished
/// ticket's chain) accepted a pass of that tree by name (`approve --flaky --tree TREE`,
/// signed where required): then it passes, listing the refusals and the answer.
fn remember(
    session: &crate::engine::Session,
    memory: Option<&memory::Memory>,
    commit: &str,
    policy: Option<&check::Policy>,
    answers: Option<AnswersIn>,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let tree = session.store.tree_of(commit)?;
    verdict.tree = Some(tree.clone());
    verdict.flaky = verdict.reasons.iter().any(|r| r.starts_with("flaky: "));
    let (Some(memory), Some((_, blob))) = (memory, policy) else {
        return Ok(());
    };
    let noted = memory.refusals(session, &tree, blob)?;
    if noted.is_empty() {
        return Ok(());
    }
    for refusal in noted {
        if !verdict.earlier_refusals.contains(&refusal) {
            verdict.earlier_refusals.push(refusal);
        }
    }
    verdict
        .earlier_refusals
        .sort_by(|a, b| a.time.cmp(&b.time).then(a.commit.cmp(&b.commit)));
    if !verdict.reasons.is_empty() {
        return Ok(());
    }
    let accepted = match answers {
        Some(AnswersIn::Pr { tip, stop }) => memory::accepted(
            session,
            (tip, stop),
            &tree,
            Some(blob),
            memory::Answerer::Signed,
        )?,
        Some(AnswersIn::Ticket { tip, ticket }) => memory::accepted_in_ticket(
            session,
            (tip, ticket),
            &tree,
            Some(blob),
            memory::Answerer::Signed,
        )?,
        None => None,
    };
    match accepted {
        Some(answer) => {
            let warning = memory::accepted_warning(&tree, &answer);
            if !verdict.warnings.contains(&warning) {
                verdict.warnings.push(warning);
            }
            if !verdict.answers.iter().any(|a| a.commit == answer.commit) {
                verdict.answers.push(answer);
            }
        }
        None => {
            verdict.flaky = true;
            verdict
                .reasons
                .push(memory::flaky_reason(&tree, &verdict.earlier_refusals));
        }
    }
    Ok(())
}

/// What `attest` did: a verdict per commit, and where the verdicts were written.
#[derive(Clone, Debug, Serialize)]
pub struct AttestReport {
    pub verdicts: Vec<Verdict>,
    /// Commits whose verdict was written as a note under `refs/notes/orchestrator-attest`.
    pub notes_written: Vec<String>,
    /// Why no note was written, when none was asked for or none could be.
    pub notes_skipped: Option<String>,
    /// With `--format dsse`: each verdict's statement in a DSSE envelope, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub envelopes: Vec<Value>,
    /// The notes ref the verdicts go under: `refs/notes/orchestrator-attest`, or with
    /// `--ci-note` the CI job's `refs/notes/orchestrator-attest-ci`.
    #[serde(skip)]
    pub notes_ref: &'static str,
}

impl AttestReport {
    pub fn passed(&self) -> bool {
        !self.verdicts.is_empty() && self.verdicts.iter().all(|v| v.passed)
    }
}

/// What a verdict's note holds: the statement on one line, then, with `key`, its SSH
/// signature (namespace `git-orchestrate-attest`) over that line.
pub fn note_text(verdict: &Verdict, key: Option<&std::path::Path>) -> Result<String, EngineError> {
    let line = format!("{}\n", verdict.statement);
    let Some(key) = key else {
        return Ok(line);
    };
    let failed = |e: crate::exec::ssh::SshError| EngineError::Io {
        what: format!("sign the verdict with {}", key.display()),
        source: std::io::Error::other(e.to_string()),
    };
    let program = crate::exec::ssh::ssh_keygen(&[]).map_err(failed)?;
    let signature = crate::exec::ssh::sign_in(
        &program,
        key,
        crate::exec::ssh::ATTEST_NAMESPACE,
        line.as_bytes(),
    )
    .map_err(failed)?;
    Ok(format!("{line}{signature}"))
}

/// `attest REV...` in the repository `dir` is in: every commit judged in one fresh
/// verifier repository; with `note`, each verdict written as a note on its commit, signed
/// with `signing_key` (else main's `[attest] signing_key`) when there is one; with `ci`,
/// under the CI job's notes ref, and then signed or not written at all.
pub fn attest(
    dir: &std::path::Path,
    revs: &[String],
    note: bool,
    dsse: bool,
    signing_key: Option<SigningKey<'_>>,
    confine: Option<Confine>,
    ci: bool,
) -> Result<AttestReport, EngineError> {
    let judged = Judged::open(dir)?;
    let revs = if revs.is_empty() {
        vec!["HEAD".to_string()]
    } else {
        revs.to_vec()
    };
    let commits = commits_of(&judged, &revs)?;
    let (key, held_key) = signing_keys(&judged, signing_key, note || dsse, ci)?;
    // Read before anything is judged: a key that cannot sign an envelope is bad input.
    let envelope_key = match (&key, &held_key, dsse) {
        (Some(key), _, true) => Some(dsse::read_key(key)?),
        (None, Some(held), true) => Some(dsse::parse_key(held, "given on stdin")?),
        _ => None,
    };
    let chains = judged.chains()?;
    let confine = match confine {
        Some(confine) => confine,
        None => judged.confine(Confine::None)?,
    };
    if ci && matches!(confine, Confine::None) {
        // The job's secret came in through the environment its step started with, which a
        // test running as the same user reads in /proc (unset does not clear it there).
        return Err(EngineError::BadInput {
            message: "--ci-note signs a verdict others trust, and the PR's tests would run \
                      unconfined, where they can read the job's secret from its environment"
                .into(),
            hint: "Add --confine namespace (or git config orchestrate.attestConfine namespace)."
                .into(),
        });
    }
    let verifier = Verifier::new(&judged, confine)?;
    let memory = memory::Memory::read(&judged)?;
    let mut verdicts = Vec::new();
    for wanted in &commits {
        let verdict = judge_as(
            &verifier,
            &chains,
            &wanted.commit,
            Humans::Repinned,
            Some(&memory),
        )?;
        require_recorded(wanted, &verdict)?;
        verdicts.push(verdict);
    }
    let envelopes = if dsse {
        verdicts
            .iter()
            .map(|v| dsse::envelope(&v.statement, envelope_key.as_ref()))
            .collect()
    } else {
        Vec::new()
    };
    let mut report = AttestReport {
        verdicts,
        notes_written: Vec::new(),
        notes_skipped: (!note).then(|| "--no-note".to_string()),
        envelopes,
        notes_ref: if ci {
            crate::store::ATTEST_CI_NOTES_REF
        } else {
            crate::store::ATTEST_NOTES_REF
        },
    };
    // A key given on stdin reaches a file only now, after the last of the PR's tests ended,
    // in a directory of our own that is gone when the notes are signed (docs/ci.md).
    let private = match &held_key {
        Some(text) if note => Some(PrivateKeyFile::write(text)?),
        _ => None,
    };
    let key = key.or_else(|| private.as_ref().map(|p| p.path.clone()));
    if note {
        write_notes(dir, &mut report, key.as_deref())?;
    }
    Ok(report)
}

/// The key file that signs the verdicts (`signing_key`'s, else, when a note or an envelope
/// is `wanted`, main's `[attest] signing_key`), and a key's text given on stdin: checked
/// before anything is judged. With `ci`, one of them there must be.
fn signing_keys(
    judged: &Judged,
    signing_key: Option<SigningKey<'_>>,
    wanted: bool,
    ci: bool,
) -> Result<(Option<std::path::PathBuf>, Option<String>), EngineError> {
    let (signing_key, held_key) = match signing_key {
        Some(SigningKey::File(path)) => (Some(path), None),
        Some(SigningKey::Held(bytes)) => (None, Some(held_key_text(bytes)?)),
        None => (None, None),
    };
    let key = match signing_key {
        Some(key) => Some(key.to_path_buf()),
        None if wanted => judged
            .main_config()?
            .1
            .attest
            .signing_key
            .map(std::path::PathBuf::from),
        None => None,
    };
    if let Some(key) = &key {
        crate::engine::error::require_key_file(key, "signing key")?;
    }
    if ci && key.is_none() && held_key.is_none() {
        // The server hook takes only signed verdicts there (docs/ci.md): refused before
        // anything runs, not after the gates.
        return Err(EngineError::BadInput {
            message: format!(
                "--ci-note writes under {}, where only signed verdicts are taken, and there is \
                 no signing key",
                crate::store::ATTEST_CI_NOTES_REF
            ),
            hint: "Give --signing-key KEY (the CI job's secret), or set [attest] signing_key."
                .into(),
        });
    }
    Ok((key, held_key))
}

/// Where `attest` takes the key that signs its verdicts from.
pub enum SigningKey<'a> {
    /// A private key file, readable for the whole run.
    File(&'a std::path::Path),
    /// The key's text itself (`--signing-key -`, read from stdin before anything runs): held
    /// in memory while the PR's tests run, so that no file of it is within their reach: a
    /// test that can read the key can print it into the verdict's output, and whoever reads
    /// the note then signs what they like.
    Held(Vec<u8>),
}

/// The text of a key given on stdin, refused (exit 2) unless it is an OpenSSH private key
/// within [`crate::input::KEY_CAP`].
fn held_key_text(bytes: Vec<u8>) -> Result<String, EngineError> {
    let bad = |problem: &str| {
        EngineError::BadInput {
        message: format!("--signing-key -: the key given on stdin {problem}"),
        hint: "Pipe an OpenSSH private key in: printf '%s\\n' \"$KEY\" | git orchestrate attest --signing-key - …"
            .into(),
    }
    };
    if bytes.len() as u64 > crate::input::KEY_CAP {
        return Err(bad(&format!("is over {} KiB", crate::input::KEY_CAP >> 10)));
    }
    let text = String::from_utf8(bytes).map_err(|_| bad("is not text"))?;
    if !text.contains("-----BEGIN OPENSSH PRIVATE KEY-----") {
        return Err(bad("is not an OpenSSH private key"));
    }
    Ok(text)
}

/// A held key written for `ssh-keygen -Y sign`: mode 0600 in a fresh 0700 directory,
/// removed with this value.
struct PrivateKeyFile {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl PrivateKeyFile {
    fn write(text: &str) -> Result<PrivateKeyFile, EngineError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::Builder::new()
            .prefix("git-orchestrate-key")
            .tempdir()
            .map_err(crate::engine::error::io_error(
                "make a private directory for the signing key",
            ))?;
        let path = dir.path().join("key");
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(crate::engine::error::io_error(
                "write the signing key for ssh-keygen",
            ))?;
        Ok(PrivateKeyFile { path, _dir: dir })
    }
}

/// Each verdict as the note on its commit, in the judged repository.
fn write_notes(
    dir: &std::path::Path,
    report: &mut AttestReport,
    key: Option<&std::path::Path>,
) -> Result<(), EngineError> {
    let mut store = match crate::store::Store::discover_selected(dir, None) {
        Ok(store) => store,
        Err(crate::store::StoreError::Bare) => {
            report.notes_skipped = Some(
                "a bare repository: the server hook writes the verdicts of the pushes it accepts"
                    .into(),
            );
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    if store.needs_ref_commands() {
        let git = crate::exec::Git::new(store.workdir());
        store.use_ref_commands(std::sync::Arc::new(git));
    }
    for verdict in &report.verdicts {
        let text = note_text(verdict, key)?;
        write_verdict_note(&store, report.notes_ref, &verdict.commit, &text)?;
        report.notes_written.push(verdict.commit.clone());
    }
    Ok(())
}

/// Writes the verdict note `text` on `commit` under `notes_ref`, again from a fresh read
/// each time another writer moved the ref first, a little later each time: two hooks of
/// concurrent pushes write notes at once. A writer that never lets go is named by its lock
/// ([`crate::store::Store::lock_on`]), not reported as a race lost (on a server there is no workflow
/// whose change that would be).
pub(crate) fn write_verdict_note(
    store: &crate::store::Store,
    notes_ref: &str,
    commit: &str,
    text: &str,
) -> Result<bool, EngineError> {
    const TRIES: u64 = 20;
    let mut tries = 0;
    loop {
        match store.set_attest_note_under(notes_ref, commit, text) {
            Ok(changed) => return Ok(changed),
            Err(crate::store::WriteError::Conflict) if tries < TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(tries));
            }
            Err(crate::store::WriteError::Conflict) => {
                return Err(match store.lock_on(notes_ref) {
                    Some(locked) => locked.into(),
                    // Not "the workflow changed": a server has none, and this is no
                    // workflow's ref.
                    None => EngineError::NotesBusy {
                        attempts: TRIES + 1,
                        commit: commit.to_string(),
                        notes_ref: notes_ref.to_string(),
                    },
                });
            }
            Err(e) => return Err(e.into()),
        }
    }
}
