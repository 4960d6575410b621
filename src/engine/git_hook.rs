//! What the installed hooks run (`git orchestrate hook <name>`), for agents and humans alike
//! (docs/architecture.md, "Hooks and notes"):
//! - `commit-msg`, for checkpoint commits only: the working tree must equal what is
//!   committed, then preflight runs on it unless it passed on exactly this tree and these
//!   gates before. A pass is left for `post-commit` to note.
//! - `post-commit`: attaches that record to the new commit.
//! - `pre-push`: the pushed checkpoint commits must carry a passing note
//!   (`[hooks] pre_push` says whether a missing one is a warning or a refusal).
//!
//! Ordinary commits get no preflight, no state write and no network.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::notes::{self, CheckedCommit};
use super::proof::{Given, verify_working_tree};
use super::verify::{GateSource, record_pass};
use super::{EngineError, Session, io_error};
use crate::config::PrePush;
use crate::exec;
use crate::hooks::{PENDING_NOTE, PROBE_ENV};
use crate::store::{is_checkpoint_message, is_state_ref_name, transition_history_globs};
use crate::workflow::State;
use crate::workflow::notes::CheckpointNote;
use crate::workflow::proof::{self as proof_plan, Recheck, Reuse, TreeFailure};

/// What a hook decided.
#[derive(Debug)]
pub enum Outcome {
    /// `doctor`'s dry run reached the binary; nothing else happened.
    Probe(String),
    /// Nothing to do: an ordinary commit, or a push with nothing to check.
    Pass,
    /// A checkpoint commit passed preflight (`cached`: it had passed on this tree before).
    Verified { cached: bool, gates: usize },
    /// `post-commit` attached the record to this commit.
    Noted(String),
    /// The working tree holds changes the commit would not: verifying it would prove
    /// nothing about the commit.
    Unstaged(Vec<String>),
    /// Files changed while the gates ran (written by a gate, say): they did not verify
    /// exactly what is committed.
    ChangedDuringPreflight(Vec<String>),
    /// The commit changes protected paths (docs/integrity.md): refused, no gate ran.
    Protected(Vec<String>),
    /// A gate failed: the commit is refused.
    GateFailed {
        gate: String,
        exit: String,
        output: Vec<u8>,
    },
    /// Pushed checkpoint commits without a passing note; `refused` under `pre_push =
    /// "enforce"`.
    Unverified {
        commits: Vec<CheckedCommit>,
        refused: bool,
    },
}

fn probe() -> Option<Outcome> {
    std::env::var(PROBE_ENV).ok().map(Outcome::Probe)
}

/// Where `commit-msg` leaves the record of a verified checkpoint for `post-commit`.
fn pending_note(session: &Session) -> PathBuf {
    session.store.git_dir().join(PENDING_NOTE)
}

/// `commit-msg <message-file>`.
pub fn commit_msg(session: &Session, message_file: &Path) -> Result<Outcome, EngineError> {
    if let Some(probe) = probe() {
        return Ok(probe);
    }
    let message = std::fs::read(message_file)
        .map_err(io_error(format!("read {}", message_file.display())))?;
    let raw = String::from_utf8_lossy(&message);
    // Judged as git will commit it: a template's comment lines above the subject must not
    // hide a checkpoint. Either reading makes it one: a doubt is settled by verifying. The raw
    // reading first: for a checkpoint it saves starting `git stripspace`.
    if !is_checkpoint_message(&raw)
        && !is_checkpoint_message(&session.git.strip_comments(above_scissors(&raw))?)
    {
        return Ok(Outcome::Pass);
    }
    // The commit is what the index holds (git points GIT_INDEX_FILE at it, also for `commit
    // -a`); preflight runs on the working tree, so the two must be the same.
    let git = &session.git;
    session.refuse_waiting_reads(None)?;
    let unstaged = git.unstaged_files()?;
    if !unstaged.is_empty() {
        return Ok(Outcome::Unstaged(unstaged));
    }
    let tree = git.write_tree()?;
    let snapshot = session.store.read_unless_ticket()?;
    let state = snapshot.as_ref().map(|s| &s.state);
    let config = session.load_config(state)?.config;
    let plan = proof_plan::working_tree(Some(&tree), Reuse::Cache, Recheck::Unstaged);
    let given = Given {
        state,
        ..Given::default()
    };
    let verification = verify_working_tree(session, &config, &plan, given)?;
    // The gates saw the working tree; it must still be what is committed.
    match verification.failure() {
        Some(TreeFailure::Protected(files)) => return Ok(Outcome::Protected(files)),
        Some(TreeFailure::GateFailed(failed)) => {
            return Ok(Outcome::GateFailed {
                gate: failed.name,
                exit: failed.exit,
                output: failed.output,
            });
        }
        Some(TreeFailure::ChangedDuring(files)) => {
            return Ok(Outcome::ChangedDuringPreflight(files));
        }
        None => {}
    }
    let on_pr_branch = match (state, session.store.head_branch()?) {
        (Some(s), Some(head)) => s.branch() == Some(head.as_str()),
        _ => false,
    };
    // The pass is proof only once the workflow's own chain records it (docs/integrity.md):
    // `get-task` then records the commit as it would one made by `checkpoint`. The note
    // below is the report for people and CI.
    if on_pr_branch {
        record_pass(session, &verification)?;
    }
    let step = state
        .and_then(State::owed_checkpoint)
        .filter(|_| on_pr_branch)
        .map(|s| s.to_string());
    let Some(note) = verification.note(session.store.workflow(), step) else {
        return Ok(Outcome::Pass);
    };
    let cached = verification.source == GateSource::Recorded;
    let gates = verification.gates;
    write_pending(&pending_note(session), &note.to_line())?;
    Ok(Outcome::Verified {
        cached,
        gates: gates.len(),
    })
}

/// The message above `commit -v`'s scissors line: below it is the diff, not the message.
fn above_scissors(message: &str) -> &str {
    const SCISSORS: &str = " ------------------------ >8 ------------------------";
    let mut at = 0;
    for line in message.split_inclusive('\n') {
        let mut chars = line.trim_end_matches('\n').chars();
        if chars.next().is_some() && chars.as_str() == SCISSORS {
            return &message[..at];
        }
        at += line.len();
    }
    message
}

/// Written whole or not at all: a half-written record must not be attached.
fn write_pending(path: &Path, line: &str) -> Result<(), EngineError> {
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .map_err(io_error(format!("create a file in {}", dir.display())))?;
    file.write_all(line.as_bytes())
        .map_err(io_error(format!("write {}", path.display())))?;
    file.persist(path)
        .map_err(|e| io_error(format!("write {}", path.display()))(e.error))?;
    Ok(())
}

/// `post-commit`.
pub fn post_commit(session: &Session) -> Result<Outcome, EngineError> {
    if let Some(probe) = probe() {
        return Ok(probe);
    }
    let path = pending_note(session);
    let line = match std::fs::read_to_string(&path) {
        Ok(line) => line,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Outcome::Pass),
        Err(e) => return Err(io_error(format!("read {}", path.display()))(e)),
    };
    // Taken whatever happens next: a record is for the commit that follows it, or none.
    std::fs::remove_file(&path).map_err(io_error(format!("remove {}", path.display())))?;
    let Ok(note) = serde_json::from_str::<CheckpointNote>(line.trim_end()) else {
        return Ok(Outcome::Pass);
    };
    let Some(head) = session.store.head_commit()? else {
        return Ok(Outcome::Pass);
    };
    if !is_checkpoint_message(&head.message) || head.tree != note.tree {
        return Ok(Outcome::Pass);
    }
    notes::record_checkpoint(session, &head.commit, &note)?;
    Ok(Outcome::Noted(head.commit))
}

/// One line git gives `pre-push` on stdin.
struct PushedRef<'a> {
    local: &'a str,
    /// The ref being updated on the remote. The local side can be a bare object id
    /// (`git push origin <id>:<ref>`, as `sync` pushes), so this is what tells what is pushed.
    remote_ref: &'a str,
    remote: &'a str,
}

fn is_zero(id: &str) -> bool {
    id.bytes().all(|b| b == b'0')
}

/// `pre-push <remote> <url>`, with git's ref lines on stdin.
pub fn pre_push(session: &Session, remote: &str, lines: &str) -> Result<Outcome, EngineError> {
    if let Some(probe) = probe() {
        return Ok(probe);
    }
    let pushed: Vec<PushedRef> = lines
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace().skip(1);
            Some(PushedRef {
                local: words.next()?,
                remote_ref: words.next()?,
                remote: words.next()?,
            })
        })
        // Deletions push no commits; workflow and notes refs hold no checkpoint commits.
        .filter(|p| !is_zero(p.local) && !is_state_ref_name(p.remote_ref))
        .collect();
    if pushed.is_empty() {
        return Ok(Outcome::Pass);
    }
    let known_remote = session
        .git
        .config(&format!("remote.{remote}.url"))?
        .is_some();
    // What the remote has already is not pushed now: the pushed refs' old tips (those this
    // repository has) and its remote-tracking branches. One walk for every pushed ref: a
    // walk per ref made a push of 10,000 refs take many minutes.
    let mut not = vec![if known_remote {
        format!("--remotes={remote}")
    } else {
        "--remotes".to_string()
    }];
    // Never a workflow's own transitions, whatever ref they are pushed to.
    not.extend(
        transition_history_globs()
            .iter()
            .map(|g| format!("--glob={g}")),
    );
    let not: Vec<&str> = not.iter().map(String::as_str).collect();
    let old_tips: Vec<&str> = pushed
        .iter()
        .map(|p| p.remote)
        .filter(|id| !is_zero(id))
        .collect();
    let present = session.git.present_commits(&old_tips)?;
    let bases: Vec<&str> = old_tips
        .into_iter()
        .filter(|id| present.contains(*id))
        .collect();
    let tips: Vec<&str> = pushed.iter().map(|p| p.local).collect();
    let failed: Vec<CheckedCommit> = notes::verify_walk(session, &tips, &bases, &not)?
        .failures()
        .cloned()
        .collect();
    if failed.is_empty() {
        return Ok(Outcome::Pass);
    }
    let snapshot = session.store.read_unless_ticket()?;
    let mode = session
        .load_config(snapshot.as_ref().map(|s| &s.state))?
        .config
        .hooks
        .pre_push;
    Ok(Outcome::Unverified {
        commits: failed,
        refused: mode == PrePush::Enforce,
    })
}

/// The tail of a failing gate's output, as the refused commit shows it.
pub fn output_tail(output: &[u8]) -> String {
    exec::tail_lines(output, 40)
}

#[cfg(test)]
#[path = "git_hook_tests.rs"]
mod unit_tests;
