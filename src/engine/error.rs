//! What goes wrong in a command: [`EngineError`], with the two findings it can carry (an
//! unsafe setting, a forged transition), and the helpers that make the common ones.

use serde::Serialize;

use crate::config::ConfigError;
use crate::exec::GitError;
use crate::store::{StoreError, WriteError};
use crate::workflow::plan::Problem;
use crate::workflow::{self, Rejection, Status};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A checkpoint's commit was made, and what came after it failed: the commit stays, and
    /// the next `checkpoint` or `get-task` finishes recording it.
    #[error(
        "checkpoint commit {} was made and is kept, but recording it failed: {source}",
        crate::short_id(commit)
    )]
    AfterCommit {
        commit: String,
        source: Box<EngineError>,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{}", .0.message)]
    Rejected(Rejection),
    #[error("the plan was not accepted: {} problem(s)", .problems.len())]
    InvalidPlan {
        state: Status,
        problems: Vec<Problem>,
    },
    #[error(
        "gave up after {attempts} attempts: other processes kept changing workflow \"{workflow}\" while this command ran"
    )]
    RetriesExhausted { attempts: u32, workflow: String },
    /// A verdict's note lost every compare-and-swap on its notes ref, with no lock left on
    /// it: other verifiers kept writing verdicts.
    #[error(
        "gave up after {attempts} attempts to write the verdict on {commit}: other verifiers kept changing {notes_ref}"
    )]
    NotesBusy {
        attempts: u64,
        commit: String,
        notes_ref: String,
    },
    #[error("could not {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] GitError),
    /// Preflight refused a checkpoint commit: the work failed verification (exit 1).
    #[error("checkpoint refused: preflight gate `{gate}` failed ({exit})")]
    CheckpointRefused {
        gate: String,
        exit: String,
        output: Vec<u8>,
    },
    /// git refused the checkpoint commit (a hook, usually): the work failed verification (exit 1).
    #[error("the checkpoint commit was refused: {0}")]
    CommitRefused(GitError),
    /// A ticket tool's input, with every problem at its JSON path (exit 2, nothing written).
    #[error("the {tool} input was not accepted: {} problem(s)", .problems.len())]
    ToolInput {
        tool: String,
        problems: Vec<crate::workflow::plan::Problem>,
    },
    /// A ticket tool called in the wrong state or by the wrong role (exit 4).
    #[error("{message}")]
    TicketRefused {
        message: String,
        hint: String,
        state: String,
    },
    /// The gates failed on a ticket's squash (exit 1, nothing recorded).
    #[error("{message}")]
    TicketGatesFailed { message: String },
    /// An argument that cannot be used, whatever the state (exit 2).
    #[error("{message}")]
    BadInput { message: String, hint: String },
    /// `run`'s agent could not start, or ran without the hooks of `init --agent` (exit 5):
    /// the run stops before another turn.
    #[error("{message}")]
    Agent { message: String, hint: String },
    /// `run` would have to overrule what the user told an agent client about this project
    /// (an explicit "untrusted"): it refuses instead (exit 4), before any turn.
    #[error("{message}")]
    AgentUntrusted { message: String, hint: String },
    /// A broken promise inside git-orchestrate itself: a bug to report.
    #[error("internal error: {0} (please report this as a git-orchestrate bug)")]
    Internal(String),
    /// The remote refused or could not be reached (exit 5); `answer` is what git and the
    /// host said.
    #[error("could not {what}: {answer}")]
    Remote {
        remote: String,
        what: String,
        answer: String,
        hint: String,
    },
    /// `init` set the workflow up, and installing the hooks failed.
    #[error("the workflow is set up, but the hooks could not be installed: {source}")]
    Hooks {
        #[source]
        source: crate::hooks::install::InstallError,
    },
    /// A setting makes the repository unfit to verify in (docs/integrity.md, "Hermetic
    /// verification"): nothing is verified until a human takes it away (exit 5).
    #[error("nothing can be verified in this repository: {0}")]
    NotHermetic(Box<Unsafe>),
    /// A lost compare-and-swap; never escapes [`Session::with_retries`].
    #[error("the workflow changed while this command ran")]
    Conflict,
    /// The audit found a transition that is not what its recorded event makes
    /// (docs/integrity.md); `what` says what was refused because of it.
    #[error("{what}: workflow {} has a forged transition, commit {}: {}", .problem.workflow, .problem.commit.as_deref().unwrap_or("?"), .problem.problem)]
    Forged {
        what: String,
        problem: Box<AuditProblem>,
    },
}

impl From<WriteError> for EngineError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Conflict => EngineError::Conflict,
            WriteError::Store(e) => EngineError::Store(e),
        }
    }
}

/// "Not allowed now" (exit 4): the message names the state, the hint the next legal action.
pub(crate) fn wrong_state(
    state: Status,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> EngineError {
    EngineError::Rejected(Rejection {
        kind: workflow::RejectionKind::WrongState,
        state,
        message: message.into(),
        hint: hint.into(),
    })
}

/// Refuses (bad input, exit 2) a key file `ssh-keygen` would hang on or that is not there:
/// checked before anything is judged, signed or written.
pub(crate) fn require_key_file(key: &std::path::Path, what: &str) -> Result<(), EngineError> {
    crate::input::check_key_file(key).map_err(|e| EngineError::BadInput {
        message: format!("the {what} {}: {}", key.display(), e.problem()),
        hint: "Name the private SSH key file (or its .pub beside a key in ssh-agent).".into(),
    })
}

pub(crate) fn io_error(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EngineError {
    let what = what.into();
    move |source| EngineError::Io { what, source }
}

/// A setting under which a verification would not be of what git stores.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Unsafe {
    /// The setting, as `git config` names it, or the ref.
    pub setting: String,
    /// Where it is set.
    pub origin: String,
    /// What it does to a verification.
    pub why: String,
    /// How a human takes it away.
    pub fix: String,
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (in {}): {}", self.setting, self.origin, self.why)
    }
}

/// One thing the audit found wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditProblem {
    pub workflow: String,
    /// The commit (or reflog entry's new value) it is about; `None` for the ref itself.
    pub commit: Option<String>,
    pub problem: String,
    /// The state the transition function computes, when the found one differs.
    pub expected: Option<serde_json::Value>,
    pub found: Option<serde_json::Value>,
    /// The command that settles it, when that is not an audit: a human's `repin` for main
    /// moved outside the workflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// `workflow main, commit <id>: <problem>`.
impl std::fmt::Display for AuditProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "workflow {}", self.workflow)?;
        if let Some(commit) = &self.commit {
            write!(f, ", commit {commit}")?;
        }
        write!(f, ": {}", self.problem)
    }
}

/// Holds a free-text field to the one rule every adapter's input is held to
/// (src/workflow/fields.rs); refused before anything is read or written.
pub(crate) fn check_field(
    field: crate::workflow::fields::Field,
    text: &str,
) -> Result<(), EngineError> {
    crate::workflow::fields::check(field, text).map_err(|problem| field_refused(field, &problem))
}

/// A free-text field refused: what is wrong with it, and the rule every field keeps.
pub(crate) fn field_refused(
    field: crate::workflow::fields::Field,
    problem: &crate::workflow::fields::FieldProblem,
) -> EngineError {
    EngineError::BadInput {
        message: format!("{}; nothing was written", problem.message(field)),
        hint: format!(
            "Give the {} as plain text: lines and tabs, no other control characters, at most {} KiB.",
            field.name(),
            field.cap() / 1024
        ),
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod unit_tests;
