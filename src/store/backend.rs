//! Where a repository keeps its refs, read once from its config when the store opens: the
//! files backend (gix, in-process) or one git's own ref commands serve ([`RefCommands`], which
//! the engine hands over); the reads and moves through them are `refs.rs`.

use std::sync::Arc;

use gix::bstr::ByteSlice;

use super::error::StoreError;

/// git's own ref commands in the store's repository: what the store reads and moves refs
/// with when gix cannot (reftable). The engine implements it with exec's git.
pub trait RefCommands: Send + Sync {
    /// `git <args>` in the store's repository with `input` on its stdin and `env` added:
    /// its stdout, or how it failed.
    fn git(
        &self,
        args: &[&str],
        input: &[u8],
        env: &[(&str, String)],
    ) -> Result<Vec<u8>, RefCommandFailure>;
}

/// A ref command that failed: its exit status (`None`: it could not run) and what it said.
#[derive(Debug)]
pub struct RefCommandFailure {
    pub status: Option<i32>,
    pub message: String,
}

/// Where the refs are kept, read once from the config gix has already loaded.
#[derive(Clone)]
pub(super) enum RefBackend {
    /// `refs/` and `packed-refs`: gix, in-process.
    Files,
    /// Any other `extensions.refStorage` git knows (reftable): git's commands, once the
    /// engine has handed them over.
    Commands {
        format: String,
        git: Option<Arc<dyn RefCommands>>,
    },
}

/// The formats git's ref commands serve; any other is refused by name.
const SERVED: [&str; 1] = ["reftable"];

/// The backend of `repo`'s refs; a format git itself does not know is refused by name
/// before anything is read, rather than failing later as if HEAD had no commit.
pub(super) fn ref_backend(repo: &super::layout::Repo) -> Result<RefBackend, StoreError> {
    let Some(format) = repo.config_string("extensions.refStorage") else {
        return Ok(RefBackend::Files);
    };
    let format = format.to_str_lossy().to_ascii_lowercase();
    if format == "files" {
        return Ok(RefBackend::Files);
    }
    if !SERVED.contains(&format.as_str()) {
        return Err(StoreError::UnsupportedRefStorage {
            format,
            git_dir: repo.git_dir().to_path_buf(),
        });
    }
    Ok(RefBackend::Commands { format, git: None })
}
