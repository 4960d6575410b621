//! Maps every library error to its exit code (SPEC §5) and to a message that says what
//! happened, in which state, and what to do next.

use crate::engine::EngineError;
use crate::store::StoreError;
use crate::workflow::plan::Problem;
use crate::workflow::{RejectionKind, Status};

/// Set to 1 to run a human's command (`resume`, `approve`, `reject`) without a terminal.
pub const HUMAN_ENV: &str = "GIT_ORCHESTRATE_HUMAN";

/// Why a command did not complete.
#[derive(Debug)]
pub enum Failure {
    /// Writing to stdout failed (a closed pipe is not an error worth a message).
    Output(std::io::Error),
    /// The command failed; rendered as an error, exits with its code.
    Command(CommandError),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Output(e)
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        Failure::Command(e.into())
    }
}

/// An error as the user sees it.
#[derive(Debug, Clone)]
pub struct CommandError {
    pub code: u8,
    pub kind: &'static str,
    pub message: String,
    pub state: Option<Status>,
    pub hint: Option<String>,
    pub problems: Vec<Problem>,
    /// Output of a failed verification, shown with the error.
    pub output: Option<Vec<u8>>,
}

impl CommandError {
    fn new(code: u8, kind: &'static str, message: impl Into<String>) -> Self {
        CommandError {
            code,
            kind,
            message: message.into(),
            state: None,
            hint: None,
            problems: Vec::new(),
            output: None,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(2, "usage", message)
    }

    pub fn invalid_input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        let mut e = Self::new(2, "invalid_input", message);
        e.hint = Some(hint.into());
        e
    }

    /// A human's command run where no human is: exit 4, like every "not allowed now".
    pub fn human_only(command: &str) -> Self {
        Self::new(
            4,
            "human_only",
            format!(
                "{command} is a human's answer, and stdin is not a terminal: an agent must not answer \
                 its own halt or review"
            ),
        )
                // The variable that lifts this is documented for people, not offered to the agent
        // that was just refused.
        .hint(format!(
            "Ask a human to run `git orchestrate {command}` in a terminal."
        ))
    }

    pub fn store(message: impl Into<String>) -> Self {
        Self::new(5, "store", message)
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl From<EngineError> for CommandError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        match e {
            EngineError::AfterCommit { commit, source } => {
                // The cause decides the exit code; the message and hint say the commit exists.
                let mut err = CommandError::from(*source);
                err.message = message;
                let finish = format!(
                    "Commit {} stays; `git orchestrate get-task` (or `checkpoint`) finishes recording it without \
                     a second commit.",
                    &commit[..commit.len().min(12)]
                );
                err.hint = Some(match err.hint.take() {
                    Some(hint) => format!("{hint} {finish}"),
                    None => finish,
                });
                err
            }
            EngineError::Rejected(r) => {
                let (code, kind) = match r.kind {
                    RejectionKind::WrongState => (4, "wrong_state"),
                    RejectionKind::InvalidInput => (2, "invalid_input"),
                };
                let mut err = CommandError::new(code, kind, r.message).hint(r.hint);
                err.state = Some(r.state);
                err
            }
            EngineError::InvalidPlan { state, problems } => {
                let mut err = CommandError::new(
                    2,
                    "invalid_plan",
                    format!(
                        "the plan was not accepted ({} problem{}); nothing was written",
                        problems.len(),
                        if problems.len() == 1 { "" } else { "s" }
                    ),
                )
                .hint(if state == Status::Replanning {
                    "Fix every problem listed and submit the re-plan again; `git orchestrate get-task` repeats the rules."
                } else {
                    "Fix every problem listed and submit the plan again; `git orchestrate get-task` shows the schema."
                });
                err.problems = problems;
                err.state = Some(state);
                err
            }
            EngineError::Config(_) => CommandError::new(2, "invalid_config", message)
                .hint("Fix .orchestrate.toml (every key is described in `git orchestrate init`'s file and docs/config.md)."),
            EngineError::Store(StoreError::BadWorkflowName(_)) => CommandError::new(2, "invalid_input", message),
            EngineError::Store(StoreError::Locked { path, reference, .. }) => {
                let rm = crate::workflow::briefing::shell_quote(&path.display().to_string());
                CommandError::new(5, "locked", message).hint(if crate::store::is_notes_ref(&reference) {
                    format!(
                        "Only the verification note was not written: a commit this command made is kept. If no \
                         git or git-orchestrate process is still running, delete the lock (rm {rm}), then run \
                         `git orchestrate get-task`: it attaches the missing note."
                    )
                } else {
                    format!(
                        "The workflow state was not changed. If no git or git-orchestrate process is still \
                         running, delete the lock: rm {rm}"
                    )
                })
            }
            EngineError::Store(StoreError::Vanished { reference, tip, restorable }) => {
                CommandError::new(5, "workflow_vanished", message).hint(if restorable {
                    format!(
                        "Restore it: git update-ref {reference} {tip} (then `git orchestrate status`). To start over \
                         instead, deliberately: git orchestrate init --new"
                    )
                } else {
                    format!(
                        "Its commit {tip} is gone from the object store too; another clone may still have the \
                         workflow (`git orchestrate sync`). To start over: git orchestrate init --new"
                    )
                })
            }
            EngineError::Store(StoreError::NotARepository(_) | StoreError::Bare) => {
                CommandError::new(5, "store", message).hint("Run git orchestrate inside a git repository with a working tree.")
            }
            EngineError::Store(_) => CommandError::new(5, "store", message)
                .hint("git-orchestrate could not read or write the repository (the cause is above: a full disk, a \
                       read-only file system, a damaged object); fix that, then run the command again."),
            EngineError::RetriesExhausted { .. } => CommandError::new(5, "retries_exhausted", message)
                .hint("Nothing was written. Run the command again once the other processes are done."),
            EngineError::Io { .. } | EngineError::Conflict => CommandError::new(5, "io", message),
            EngineError::Git(_) => CommandError::new(5, "git", message),
                        EngineError::Internal(_) => CommandError::new(5, "internal", message),
            EngineError::Remote { hint, .. } => CommandError::new(5, "remote", message).hint(hint),
            EngineError::BadInput { hint, .. } => CommandError::invalid_input(message, hint),
            EngineError::CheckpointRefused { output, .. } => {
                let mut err = CommandError::new(1, "verification_failed", format!("{message}; nothing was committed"))
                    .hint("Fix what the gate reports, then run `git orchestrate checkpoint` again.");
                err.output = Some(output);
                err
            }
            EngineError::CommitRefused(_) => CommandError::new(1, "verification_failed", message)
                .hint("Nothing was recorded. Fix what git reported, then run `git orchestrate checkpoint` again."),
        }
    }
}
