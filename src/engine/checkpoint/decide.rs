//! What `checkpoint` does, decided without git from the facts gathered and the request:
//! refuse (and why), record HEAD as it is, or verify and commit the tree with this message.

use super::super::{EngineError, wrong_state};
use crate::workflow::proof::TreeFailure;
use crate::workflow::{Status, StepId};

/// HEAD, as the decision sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Head<'a> {
    pub commit: &'a str,
    pub tree: &'a str,
    pub subject: &'a str,
}

/// What `checkpoint` found before deciding.
#[derive(Clone, Copy, Debug)]
pub(super) struct Facts<'a> {
    pub status: Status,
    /// The step whose checkpoint is owed, with its description.
    pub owed: Option<(StepId, &'a str)>,
    pub last_checkpoint: Option<&'a str>,
    pub head: Option<Head<'a>>,
    /// The working tree, as it would be committed.
    pub tree: &'a str,
    /// `-m`, as given.
    pub message: Option<&'a str>,
}

/// What `checkpoint` is to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Plan {
    Refuse(Refusal),
    /// Nothing changed since the last checkpoint: the owed step is recorded on HEAD.
    RecordUnchanged {
        step: StepId,
    },
    /// Verify the tree with preflight, then commit it.
    Commit(CommitPlan),
}

/// The commit a checkpoint makes once preflight passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CommitPlan {
    pub subject: String,
    /// The whole commit message: subject, body, and the `Orchestrator-Checkpoint` trailer.
    pub message: String,
    pub step: Option<StepId>,
}

/// Why a checkpoint makes no commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// `-m` says nothing once `checkpoint:` is taken off.
    EmptyMessage,
    /// The tree is HEAD's, and no step is owed.
    NothingChanged {
        status: Status,
        head: String,
        subject: String,
    },
    /// The tree changes protected paths: the gates did not run.
    ProtectedChanged { status: Status, files: Vec<String> },
    /// A preflight gate failed.
    GateFailed {
        gate: String,
        exit: String,
        output: Vec<u8>,
    },
    /// What would be committed is not the tree preflight verified.
    FilesChanged {
        status: Status,
        when: Changed,
        files: Vec<String>,
    },
}

/// When the tree to commit stopped being the verified one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Changed {
    DuringPreflight,
    AfterPreflight,
    /// A commit hook changed files: `commit` was made and stays.
    ByCommitHook {
        commit: String,
    },
}

impl Changed {
    fn text(&self) -> String {
        match self {
            Changed::DuringPreflight => {
                "files changed while preflight ran, so it did not verify what would be committed".into()
            }
            Changed::AfterPreflight => {
                "files changed after preflight verified them; they are staged, but nothing was committed"
                    .into()
            }
            Changed::ByCommitHook { commit } => format!(
                "commit {} holds a tree other than the one preflight verified (a commit hook changed \
                 files?); it stays, but is not recorded as a checkpoint",
                crate::short_id(commit)
            ),
        }
    }
}

impl Refusal {
    pub(super) fn into_error(self) -> EngineError {
        match self {
            Refusal::EmptyMessage => EngineError::BadInput {
                message: "the checkpoint message (-m) is empty: a commit subject must say what the checkpoint holds"
                    .into(),
                hint: "Give a message, e.g. -m \"add() handles negatives\", or leave out -m for the step and its \
                       description."
                    .into(),
            },
            Refusal::NothingChanged {
                status,
                head,
                subject,
            } => wrong_state(
                status,
                format!(
                    "checkpoint refused: nothing changed since the last checkpoint (HEAD is {} {}); no commit was \
                     made (state {})",
                    crate::short_id(&head),
                    subject,
                    status
                ),
                "Change something first; `git status` shows that the working tree matches HEAD.",
            ),
            Refusal::ProtectedChanged { status, files } => wrong_state(
                status,
                format!(
                    "checkpoint refused: the working tree changes protected paths ({}), which a human changes \
                     on main; nothing was committed (state {status})",
                    files.join(", ")
                ),
                "Put them back as they are on main (`git checkout <main> -- <path>`, or `git checkout \
                 HEAD -- <path>` if the branch has not changed them); if they must change, a human commits \
                 the change on main and runs `git orchestrate repin`.",
            ),
            Refusal::GateFailed { gate, exit, output } => {
                EngineError::CheckpointRefused { gate, exit, output }
            }
            Refusal::FilesChanged {
                status,
                when,
                files,
            } => files_changed(status, &when.text(), &files),
        }
    }
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

/// `-m` refused before anything is read: it must say something.
pub(super) fn check_message(message: Option<&str>) -> Option<Refusal> {
    message
        .filter(|m| m.trim().trim_start_matches("checkpoint:").trim().is_empty())
        .map(|_| Refusal::EmptyMessage)
}

/// What the checkpoint does, from what it found (after any cut-short checkpoint at HEAD was
/// recovered).
pub(super) fn decide(facts: &Facts) -> Plan {
    if let Some(head) = facts.head
        && head.tree == facts.tree
    {
        match facts.owed {
            Some((step, _)) if facts.last_checkpoint == Some(head.commit) => {
                return Plan::RecordUnchanged { step };
            }
            // Plain commits since the last checkpoint hold the step's work: the checkpoint
            // commit (empty) marks it.
            Some(_) => {}
            None => {
                return Plan::Refuse(Refusal::NothingChanged {
                    status: facts.status,
                    head: head.commit.to_string(),
                    subject: head.subject.to_string(),
                });
            }
        }
    }
    Plan::Commit(commit_plan(facts.message, facts.owed))
}

/// The refusal of a checkpoint whose tree the gates did not verify
/// ([`crate::workflow::proof::tree_failure`]).
pub(super) fn refusal(status: Status, failure: TreeFailure) -> Refusal {
    match failure {
        TreeFailure::Protected(files) => Refusal::ProtectedChanged { status, files },
        TreeFailure::GateFailed(failed) => Refusal::GateFailed {
            gate: failed.name,
            exit: failed.exit,
            output: failed.output,
        },
        TreeFailure::ChangedDuring(files) => Refusal::FilesChanged {
            status,
            when: Changed::DuringPreflight,
            files,
        },
    }
}

/// The commit for `message` (or the owed step's description), with its trailer.
pub(super) fn commit_plan(message: Option<&str>, owed: Option<(StepId, &str)>) -> CommitPlan {
    let (subject, body) = subject(message, owed);
    let step = owed.map(|(step, _)| step);
    let message = format!(
        "{subject}\n\n{}Orchestrator-Checkpoint: {}\n",
        body.map(|b| format!("{b}\n\n")).unwrap_or_default(),
        step.map_or_else(|| "manual".to_string(), |s| s.to_string())
    );
    CommitPlan {
        subject,
        message,
        step,
    }
}

/// The checkpoint's subject, and its whole text as the body when the subject had to be
/// cut. A cut keeps the step id and the start of the description and ends at a word
/// boundary, so checkpoints of steps that start alike still read apart.
pub(super) fn subject(
    message: Option<&str>,
    step: Option<(StepId, &str)>,
) -> (String, Option<String>) {
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
