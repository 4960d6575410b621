//! `checkpoint`: verifies the working tree with preflight (or reuses the passing result for
//! exactly this tree and these gates), commits everything as a checkpoint, and records it.

use super::verify::{GateSource, Recheck, Reuse, record_pass, verify_tree};
use serde::Serialize;

use super::{EngineError, Session, notes, wrong_state};
use crate::store::FoundCommit;
use crate::workflow::state::PreflightRecord;
use crate::workflow::{self, Event, Status, StepId};

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
    if let Some(m) = message
        && m.trim().trim_start_matches("checkpoint:").trim().is_empty()
    {
        return Err(EngineError::BadInput {
            message: "the checkpoint message (-m) is empty: a commit subject must say what the checkpoint holds"
                .into(),
            hint: "Give a message, e.g. -m \"add() handles negatives\", or leave out -m for the step and its \
                   description."
                .into(),
        });
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
    let tree = session.git.worktree_tree(&session.store.index_path())?;
    let owed = owed.as_ref().map(|o| (o.step, o.description.as_str()));
    let head = session.store.head_commit()?;
    if let Some(head) = &head {
        if let Some(report) = recover(session, &snap, head)? {
            if head.tree == tree {
                return Ok(report);
            }
            // Recorded; what changed since is a checkpoint of its own.
            return checkpoint_locked(session, message);
        }
        if head.tree == tree {
            match owed {
                Some((step, _)) if state.last_checkpoint() == Some(head.commit.as_str()) => {
                    return record_without_commit(
                        session,
                        head,
                        Some(step),
                        WithoutCommit::Unchanged,
                    );
                }
                // Plain commits since the last checkpoint hold the step's work: the checkpoint
                // commit (empty) marks it.
                Some(_) => {}
                None => {
                    return Err(wrong_state(
                        state.status(),
                        format!(
                            "checkpoint refused: nothing changed since the last checkpoint (HEAD is {} {}); no commit was \
                             made (state {})",
                            crate::short_id(&head.commit),
                            head.message.lines().next().unwrap_or_default(),
                            state.status()
                        ),
                        "Change something first; `git status` shows that the working tree matches HEAD.",
                    ));
                }
            }
        }
    }
    // Gates that passed on exactly this tree (at the last submit, say) are not run again.
    let verification = verify_tree(
        session,
        Some(state),
        &config,
        Some(&tree),
        Reuse::Cache,
        Recheck::WorktreeTree,
    )?;
    if !verification.protected.is_empty() {
        return Err(protected_changed(state.status(), &verification.protected));
    }
    if let Some(failed) = verification.failed {
        return Err(EngineError::CheckpointRefused {
            gate: failed.name,
            exit: failed.exit,
            output: failed.output,
        });
    }
    // Preflight verified the tree as it was when it started: a file written meanwhile (by
    // the gates themselves, or anyone else) would be committed unverified.
    if !verification.changed_during.is_empty() {
        return Err(files_changed(
            state.status(),
            "files changed while preflight ran, so it did not verify what would be committed",
            &verification.changed_during,
        ));
    }
    let cached = verification.source == GateSource::Recorded;
    // Recorded before the commit: the commit-msg hook finds it and does not run the gates a
    // second time.
    record_pass(session, &verification)?;

    let step = owed;
    let (subject, body) = subject(message, step);
    let step = step.map(|(step, _)| step);
    let full_message = format!(
        "{subject}\n\n{}Orchestrator-Checkpoint: {}\n",
        body.map(|b| format!("{b}\n\n")).unwrap_or_default(),
        step.map_or_else(|| "manual".to_string(), |s| s.to_string())
    );
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
            state.status(),
            "files changed after preflight verified them; they are staged, but nothing was committed",
            &staged,
            &tree,
        )?);
    }
    let commit = session
        .git
        .commit(
            &full_message,
            true,
            session.store.identity().is_some(),
            // The commit-msg hook acts for this workflow, not the default one.
            &[(crate::WORKFLOW_ENV, session.store.workflow())],
        )
        .map_err(EngineError::CommitRefused)?;
    // A pre-commit hook that rewrites files (a formatter) commits a tree nobody verified.
    let committed = session.git.tree_of(&commit)?;
    if committed != tree {
        return Err(tree_changed(
            session,
            state.status(),
            &format!(
                "commit {} holds a tree other than the one preflight verified (a commit hook changed \
                 files?); it stays, but is not recorded as a checkpoint",
                crate::short_id(&commit)
            ),
            &committed,
            &tree,
        )?);
    }

    // The post-commit hook notes the commit when hooks are installed; without them, this
    // does (a note that is already there is not written twice).
    let made = |e: EngineError| EngineError::AfterCommit {
        commit: commit.clone(),
        source: Box::new(e),
    };
    if let Some(note) = verification.note(session.store.workflow(), step.map(|s| s.to_string())) {
        notes::record_checkpoint(session, &commit, &note).map_err(made)?;
    }

    let state = session
        .with_retries(|| {
            let snap = session.store.read()?.ok_or(EngineError::Conflict)?;
            let t = session.apply(
                &snap,
                Event::CheckpointRecorded {
                    commit: commit.clone(),
                    subject: subject.clone(),
                    // Preflight passed for this tree, just now or at the last submit.
                    tree: tree.clone(),
                },
            )?;
            Ok(t.to())
        })
        .map_err(made)?;
    let ignore_suggestions = build_output_patterns(&untracked);
    Ok(CheckpointReport {
        commit,
        subject,
        step,
        untracked_added: untracked,
        ignore_suggestions,
        left_out,
        without_commit: None,
        new_commit: true,
        preflight: (!cached).then(|| PreflightRecord {
            gates: verification.gates.clone(),
        }),
        cached,
        state,
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
    if state.last_checkpoint() == Some(head.commit.as_str())
        || state.branch_base() == Some(head.commit.as_str())
    {
        return Ok(None);
    }
    let main = session.main_branch(Some(state))?;
    let stops = [state.last_checkpoint(), state.branch_base()];
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
    let state = session.with_retries(|| {
        let snap = session.store.read()?.ok_or(EngineError::Conflict)?;
        let t = session.apply(
            &snap,
            Event::CheckpointRecorded {
                commit: head.commit.clone(),
                subject: subject.clone(),
                tree: head.tree.clone(),
            },
        )?;
        Ok(t.to())
    })?;
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
    state: Status,
    why: &str,
    found: &str,
    verified: &str,
) -> Result<EngineError, EngineError> {
    let files = session.git.changed_files(verified, found)?;
    Ok(files_changed(state, why, &files))
}

/// The refusal naming `files`, the ones that differ from the verified tree.
fn protected_changed(state: Status, files: &[String]) -> EngineError {
    wrong_state(
        state,
        format!(
            "checkpoint refused: the working tree changes protected paths ({}), which a human changes \
             on main; nothing was committed (state {state})",
            files.join(", ")
        ),
        "Put them back as they are on main (`git checkout <main> -- <path>`, or `git checkout \
         HEAD -- <path>` if the branch has not changed them); if they must change, a human commits \
         the change on main and runs `git orchestrate repin`.",
    )
}

fn files_changed(state: Status, why: &str, files: &[String]) -> EngineError {
    const SHOWN: usize = 10;
    let mut list = files
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > SHOWN {
        list.push_str(&format!(" and {} more", files.len() - SHOWN));
    }
    wrong_state(
        state,
        format!("checkpoint refused: {why} (state {state}); changed: {list}"),
        "Run `git orchestrate checkpoint` again once nothing else is writing to the working tree; it \
                  verifies and commits the tree as it is then. Build output belongs in .gitignore.",
    )
}

/// The checkpoint's subject, and its whole text as the body when the subject had to be
/// cut. A cut keeps the step id and the start of the description and ends at a word
/// boundary, so checkpoints of steps that start alike still read apart.
fn subject(message: Option<&str>, step: Option<(StepId, &str)>) -> (String, Option<String>) {
    const MAX: usize = 72;
    let (prefix, text) = match (message, step) {
        (Some(m), _) => (
            String::new(),
            m.trim()
                .trim_start_matches("checkpoint:")
                .trim()
                .to_string(),
        ),
        (None, Some((step, description))) => (format!("{step} "), description.trim().to_string()),
        (None, None) => (String::new(), "work in progress".to_string()),
    };
    let first_line = text.lines().next().unwrap_or_default().trim();
    let head = format!("checkpoint: {prefix}");
    let whole = format!("{head}{first_line}");
    let several_lines = text.lines().count() > 1;
    if whole.chars().count() <= MAX {
        return (whole, several_lines.then_some(text));
    }
    // Room for the text after the head and the ellipsis.
    let room = MAX.saturating_sub(head.chars().count() + 1);
    let kept: String = first_line.chars().take(room).collect();
    let cut_at_word = first_line
        .chars()
        .nth(room)
        .is_some_and(char::is_whitespace);
    let kept = match kept.rfind(char::is_whitespace) {
        // A word boundary in the second half: cut there rather than mid-word.
        _ if cut_at_word => kept.trim_end().to_string(),
        Some(i) if kept[..i].chars().count() >= room / 2 => kept[..i].trim_end().to_string(),
        _ => kept,
    };
    (format!("{head}{kept}…"), Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn subjects() {
        let plain = |m, step| subject(m, step).0;
        assert_eq!(plain(Some("checkpoint: tidy"), None), "checkpoint: tidy");
        assert_eq!(
            plain(Some("tidy"), Some((StepId::new(0, 1), "x"))),
            "checkpoint: tidy"
        );
        assert_eq!(
            subject(None, Some((StepId::new(0, 1), "add\nmore"))),
            (
                "checkpoint: 1.2 add".to_string(),
                Some("add\nmore".to_string())
            )
        );
        assert_eq!(
            subject(None, None),
            ("checkpoint: work in progress".to_string(), None)
        );
        let long = plain(Some(&"x".repeat(100)), None);
        assert_eq!(long.chars().count(), 72);
        assert!(long.ends_with('…'));
    }

    /// Three review fixes whose descriptions start alike: each subject keeps its step id,
    /// is cut at a word boundary, and the body has the whole description.
    #[test]
    fn long_step_descriptions_are_cut_at_a_word_with_the_whole_text_in_the_body() {
        let descriptions = [
            "Fix: [P1] inflection/__init__.py: new public function plural_verb_case lacks a docstring",
            "Fix: [P1] inflection/__init__.py: new public function plural_noun_case lacks type hints",
            "Fix: [P1] inflection/__init__.py: new public function singular_case is untested",
        ];
        let subjects: Vec<(String, Option<String>)> = descriptions
            .iter()
            .enumerate()
            .map(|(i, d)| subject(None, Some((StepId::new(2, i), d))))
            .collect();
        assert_eq!(
            subjects.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
            [
                "checkpoint: 3.1 Fix: [P1] inflection/__init__.py: new public function…",
                "checkpoint: 3.2 Fix: [P1] inflection/__init__.py: new public function…",
                "checkpoint: 3.3 Fix: [P1] inflection/__init__.py: new public function…",
            ]
        );
        for ((s, body), d) in subjects.iter().zip(descriptions) {
            assert!(s.chars().count() <= 72, "{s}");
            assert_eq!(body.as_deref(), Some(d));
        }
    }
}
