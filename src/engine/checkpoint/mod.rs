//! `checkpoint`: verifies the working tree with preflight (or reuses the passing result for
//! exactly this tree and these gates), commits everything as a checkpoint, and records it.

use super::proof::{Given, verify_working_tree};
use super::verify::{GateSource, record_pass};
use serde::Serialize;

mod decide;
#[cfg(test)]
mod tests;

use self::decide::{Changed, CommitPlan, Facts, Head, Plan, Refusal};
use super::{EngineError, Session, notes, wrong_state};
use crate::config::Config;
use crate::store::FoundCommit;
use crate::workflow::proof::{self as proof_plan, Recheck, Reuse};
use crate::workflow::state::PreflightRecord;
use crate::workflow::{self, Event, State, Status, StepId};

/// What `checkpoint` answers (docs/agent-guide.md, "Checkpoint").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointReport {
    pub commit: String,
    pub subject: String,
    pub step: Option<StepId>,
    /// The preflight run, or `None` when the result of the last submit was reused.
    pub preflight: Option<PreflightRecord>,
    pub cached: bool,
    pub state: Status,
    pub new_commit: bool,
    /// How the checkpoint came about when it made no new commit.
    #[serde(rename = "recorded_without_commit")]
    pub without_commit: Option<WithoutCommit>,
    /// Files the checkpoint committed that were untracked before it.
    pub untracked_added: Vec<String>,
    /// `.gitignore` lines for those of them that look like build output.
    #[serde(rename = "gitignore_suggestions")]
    pub ignore_suggestions: Vec<String>,
    /// Agent-client settings that `init --agent` manages, changed or new, and left out of
    /// the commit: they are the user's, committed on main.
    pub left_out: Vec<String>,
}

const GET_TASK: &str = "Run `git orchestrate get-task` for the current instruction.";

/// A checkpoint recorded on a commit that already existed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithoutCommit {
    /// HEAD was a checkpoint commit whose recording a crash cut short: noted and recorded.
    Recovered,
    /// Nothing changed since the last checkpoint: the owed step is recorded on it.
    Unchanged,
}

pub fn checkpoint(
    session: &Session,
    message: Option<&str>,
) -> Result<CheckpointReport, EngineError> {
    // One checkpoint at a time in a working tree: the second waits, then finds what the
    // first committed.
    let _lock = session.store.checkpoint_lock()?;
    checkpoint_locked(session, message)
}

fn checkpoint_locked(
    session: &Session,
    message: Option<&str>,
) -> Result<CheckpointReport, EngineError> {
    if let Some(refusal) = decide::check_message(message) {
        return Err(refusal.into_error());
    }
    if let Some(m) = message {
        super::check_field(crate::workflow::fields::Field::Message, m)?;
    }
    let Some(snap) = session.store.read()? else {
        return Err(wrong_state(
            Status::Initializing,
            "checkpoint is not accepted in state INITIALIZING: there is no PR branch yet",
            GET_TASK,
        ));
    };
    let state = &snap.state;
    let owed = workflow::check_checkpoint(state).map_err(EngineError::Rejected)?;
    session.require_pr_branch(state, "checkpoint", "")?;

    let config = session.load_config(Some(state))?.config;
    let tree = session.worktree_tree()?;
    let head = session.store.head_commit()?;
    if let Some(head) = &head
        && let Some(report) = recover(session, &snap, head)?
    {
        if head.tree == tree {
            return Ok(report);
        }
        // Recorded; what changed since is a checkpoint of its own.
        return checkpoint_locked(session, message);
    }
    let facts = Facts {
        status: state.status(),
        owed: owed.as_ref().map(|o| (o.step, o.description.as_str())),
        last_checkpoint: state.pr().and_then(|pr| pr.last_checkpoint.as_deref()),
        head: head.as_ref().map(|h| Head {
            commit: &h.commit,
            tree: &h.tree,
            subject: h.message.lines().next().unwrap_or_default(),
        }),
        tree: &tree,
        message,
    };
    match decide::decide(&facts) {
        Plan::Refuse(refusal) => Err(refusal.into_error()),
        Plan::RecordUnchanged { step } => match &head {
            Some(head) => {
                record_without_commit(session, head, Some(step), WithoutCommit::Unchanged)
            }
            None => Err(EngineError::Internal(
                "a checkpoint was to be recorded on HEAD, and there is none".into(),
            )),
        },
        Plan::Commit(plan) => commit(session, state, &config, &tree, plan),
    }
}

/// Verifies `tree` with preflight, commits it as `plan` says, notes and records the commit.
fn commit(
    session: &Session,
    state: &State,
    config: &Config,
    tree: &str,
    plan: CommitPlan,
) -> Result<CheckpointReport, EngineError> {
    // Gates that passed on exactly this tree (at the last submit, say) are not run again.
    let gates = proof_plan::working_tree(Some(tree), Reuse::Cache, Recheck::WorktreeTree);
    let given = Given {
        state: Some(state),
        ..Given::default()
    };
    let verification = verify_working_tree(session, config, &gates, given)?;
    if let Some(failure) = verification.failure() {
        return Err(decide::refusal(state.status(), failure).into_error());
    }
    let cached = verification.source == GateSource::Recorded;
    // Recorded before the commit: the commit-msg hook finds it and does not run the gates a
    // second time.
    record_pass(session, &verification)?;
    let staged = stage(session, state.status(), tree)?;
    let commit = make_commit(session, state.status(), tree, &plan.message)?;

    // The post-commit hook notes the commit when hooks are installed; without them, this
    // does (a note that is already there is not written twice).
    let made = |e: EngineError| EngineError::AfterCommit {
        commit: commit.clone(),
        source: Box::new(e),
    };
    let step = plan.step;
    if let Some(note) = verification.note(session.store.workflow(), step.map(|s| s.to_string())) {
        notes::record_checkpoint(session, &commit, &note).map_err(made)?;
    }
    let found = FoundCommit {
        commit: commit.clone(),
        // Preflight passed for this tree, just now or at the last submit.
        tree: tree.to_string(),
        message: plan.subject.clone(),
    };
    let state = record(session, &found).map_err(made)?;
    let ignore_suggestions = build_output_patterns(&staged.untracked);
    Ok(CheckpointReport {
        commit,
        subject: plan.subject,
        step,
        untracked_added: staged.untracked,
        ignore_suggestions,
        left_out: staged.left_out,
        without_commit: None,
        new_commit: true,
        preflight: (!cached).then(|| PreflightRecord {
            gates: verification.gates.clone(),
        }),
        cached,
        state,
    })
}

/// What staging the working tree took in, and left out.
struct Staged {
    /// Files that were untracked before.
    untracked: Vec<String>,
    /// Agent-client settings that `init --agent` manages.
    left_out: Vec<String>,
}

/// Stages everything, refusing when what is staged is not the verified `tree`.
fn stage(session: &Session, status: Status, tree: &str) -> Result<Staged, EngineError> {
    let left_out = session.git.left_out_changes()?;
    let untracked: Vec<String> = session
        .git
        .untracked_files()?
        .into_iter()
        .filter(|file| !left_out.contains(file))
        .collect();
    session.git.add_all()?;
    let staged = session.git.write_tree()?;
    if staged != tree {
        return Err(tree_changed(
            session,
            status,
            Changed::AfterPreflight,
            &staged,
            tree,
        )?);
    }
    Ok(Staged {
        untracked,
        left_out,
    })
}

/// Commits what is staged, refusing to count a commit whose tree is not the verified one.
fn make_commit(
    session: &Session,
    status: Status,
    tree: &str,
    message: &str,
) -> Result<String, EngineError> {
    let commit = session
        .git
        .commit(
            message,
            true,
            session.store.identity().is_some(),
            // The commit-msg hook acts for this workflow, not the default one.
            &[(crate::WORKFLOW_ENV, session.store.workflow())],
        )
        .map_err(EngineError::CommitRefused)?;
    // A pre-commit hook that rewrites files (a formatter) commits a tree nobody verified.
    let committed = session.git.tree_of(&commit)?;
    if committed != tree {
        let when = Changed::ByCommitHook {
            commit: commit.clone(),
        };
        return Err(tree_changed(session, status, when, &committed, tree)?);
    }
    Ok(commit)
}

/// Records `commit` as the checkpoint; the state it leaves the workflow in.
fn record(session: &Session, commit: &FoundCommit) -> Result<Status, EngineError> {
    session.with_retries(|| {
        let snap = session.store.read()?.ok_or(EngineError::Conflict)?;
        let t = session.apply(
            &snap,
            Event::CheckpointRecorded {
                commit: commit.commit.clone(),
                subject: commit.message.clone(),
                tree: commit.tree.clone(),
            },
        )?;
        Ok(t.to())
    })
}

/// A HEAD checkpoint commit that the workflow has not recorded, whose tree it verified (a
/// checkpoint killed after `git commit`): its note is attached and it is recorded, so no
/// second commit is made. `None` when HEAD is no such commit.
fn recover(
    session: &Session,
    snap: &crate::store::Snapshot,
    head: &FoundCommit,
) -> Result<Option<CheckpointReport>, EngineError> {
    let state = &snap.state;
    if state.pr().and_then(|pr| pr.last_checkpoint.as_deref()) == Some(head.commit.as_str())
        || state.pr().and_then(|pr| pr.base.as_deref()) == Some(head.commit.as_str())
    {
        return Ok(None);
    }
    let main = session.main_branch(Some(state))?;
    let stops = [
        state.pr().and_then(|pr| pr.last_checkpoint.as_deref()),
        state.pr().and_then(|pr| pr.base.as_deref()),
    ];
    let Some(found) = session.store.find_checkpoint(&stops, &main)? else {
        return Ok(None);
    };
    if found.commit != head.commit
        || super::unrecorded::unverified(session, state, &found)?.is_some()
    {
        return Ok(None);
    }
    super::unrecorded::attach_missing_note(session, state, &found.commit, &found.tree)?;
    let step = state.owed_checkpoint();
    record_without_commit(session, head, step, WithoutCommit::Recovered).map(Some)
}

/// Records `head` as the checkpoint, with no new commit.
fn record_without_commit(
    session: &Session,
    head: &FoundCommit,
    step: Option<StepId>,
    how: WithoutCommit,
) -> Result<CheckpointReport, EngineError> {
    let subject = head.message.lines().next().unwrap_or_default().to_string();
    let state = record(
        session,
        &FoundCommit {
            commit: head.commit.clone(),
            tree: head.tree.clone(),
            message: subject.clone(),
        },
    )?;
    Ok(CheckpointReport {
        commit: head.commit.clone(),
        subject,
        step,
        untracked_added: Vec::new(),
        ignore_suggestions: Vec::new(),
        left_out: Vec::new(),
        without_commit: Some(how),
        new_commit: false,
        preflight: None,
        cached: true,
        state,
    })
}

/// The `.gitignore` lines for files that look like build output (what a test run leaves
/// behind), one per kind, in the order first seen.
pub fn build_output_patterns(files: &[String]) -> Vec<String> {
    const DIRS: &[&str] = &[
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        "node_modules",
        "target",
        "build",
        "dist",
        ".gradle",
        "coverage",
        ".nyc_output",
    ];
    const SUFFIXES: &[&str] = &[".pyc", ".pyo", ".o", ".obj", ".class", ".so", ".a", ".log"];
    let mut patterns: Vec<String> = Vec::new();
    for file in files {
        let dir = file
            .split('/')
            .find(|part| DIRS.contains(part) || part.ends_with(".egg-info"))
            .map(|part| {
                if part.ends_with(".egg-info") {
                    "*.egg-info/".to_string()
                } else {
                    format!("{part}/")
                }
            });
        let pattern = dir.or_else(|| {
            SUFFIXES
                .iter()
                .find(|s| file.ends_with(*s))
                .map(|s| format!("*{s}"))
        });
        if let Some(p) = pattern
            && !patterns.contains(&p)
        {
            patterns.push(p);
        }
    }
    patterns
}

/// The refusal when the tree to commit is not the verified one, naming the files that differ
/// (often build output a `.gitignore` should cover).
fn tree_changed(
    session: &Session,
    status: Status,
    when: Changed,
    found: &str,
    verified: &str,
) -> Result<EngineError, EngineError> {
    let files = session.git.changed_files(verified, found)?;
    Ok(Refusal::FilesChanged {
        status,
        when,
        files,
    }
    .into_error())
}
