//! What can go wrong in the store: [`StoreError`], and [`WriteError`] for a write that lost
//! the compare-and-swap; a gix error keeps its causes.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No repository holds the directory, or the one found cannot be opened: the whole
    /// message, said once.
    #[error("{0}")]
    NotARepository(String),
    #[error("the repository has no working tree; git orchestrate needs one to run tests in")]
    Bare,
    /// A file git would wait on for ever where it reads one (a FIFO as a `.gitignore`).
    #[error("{0}")]
    WouldHang(String),
    #[error(
        "invalid workflow name \"{0}\": use letters, digits, '.', '_' and '-' (not starting with '.' or '-')"
    )]
    BadWorkflowName(String),
    /// The repository keeps its refs in a backend gix cannot read (reftable).
    #[error(
        "this repository keeps its refs in the {format} backend (extensions.refStorage = {format} in {}), \
         which git-orchestrate cannot read or write yet; nothing was changed",
        git_dir.display()
    )]
    UnsupportedRefStorage { format: String, git_dir: PathBuf },
    #[error("internal error: {0}")]
    Internal(String),
    #[error("cannot read {what} of {reference} (commit {commit}): {message}")]
    Corrupt {
        reference: String,
        commit: String,
        what: String,
        message: String,
    },
    #[error(
        "{} {reference} is locked by {} (left {}s ago): a git process that crashed can leave such a lock \
         behind",
        if reference.starts_with("refs/notes/") {
            "the notes ref"
        } else if reference.starts_with(crate::store::CLAIMS)
            || (reference.starts_with("refs/orchestrator/remotes/") && reference.contains("/claims/"))
        {
            "the claim ref"
        } else {
            "workflow ref"
        },
        path.display(),
        age.as_secs()
    )]
    Locked {
        reference: String,
        path: PathBuf,
        age: std::time::Duration,
    },
    #[error(
        "workflow ref {reference} is missing, but the workflow existed here (its last tip was {tip}): something \
         deleted the ref, and starting a new workflow would drop its history"
    )]
    Vanished {
        reference: String,
        tip: String,
        /// Whether the tip commit is still in the object store (then `update-ref` restores it).
        restorable: bool,
    },
    /// A TDD command met a ticket workflow (docs/tickets.md).
    #[error(
        "{reference} is a ticket workflow: the TDD commands (plans, steps, checkpoints) do not apply to it"
    )]
    TicketWorkflow { reference: String },
    #[error("git object store: {0}")]
    Git(String),
    /// gix failed; the OS's answer ("No space left on device", "Read-only file system") is
    /// several sources down, and is printed as what caused it.
    #[error("git object store: {message}")]
    Objects {
        message: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A gix error, its causes kept: the OS's answer is several levels down, and that is what
/// a person needs.
pub(super) fn git_err(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Objects {
        message: e.to_string(),
        source: Box::new(e),
    }
}

/// `e` and its sources, joined with ": ", each message once.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another process moved the workflow ref since it was read: re-run from a fresh read.
    #[error("the workflow changed while this command ran")]
    Conflict,
    #[error(transparent)]
    Store(#[from] StoreError),
}
