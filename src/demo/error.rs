//! Why the demo stopped: its error type, shared by the runner and the entry point.

use std::path::PathBuf;

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the demo could not {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Git(String),
    /// A scripted step did not do what the script expects of it: a bug in git-orchestrate
    /// or in the demo.
    #[error("{0}")]
    Unexpected(String),
    #[error("{} is not empty", .0.display())]
    NotEmpty(PathBuf),
    /// Writing the narration failed (a closed pipe, say).
    #[error(transparent)]
    Narration(std::io::Error),
}

/// Wraps an I/O error with what the demo was doing when it happened.
pub(super) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DemoError {
    let what = what.into();
    move |source| DemoError::Io { what, source }
}
