//! The files git-orchestrate keeps under the git directory for the agent hooks and `init
//! --agent`, and where git runs hooks from.

use std::path::PathBuf;

use gix::bstr::ByteSlice;

use super::Store;

/// The agent Stop hook's loop guard, one file per agent session.
const STOP_BLOCKS: &str = "orchestrator/stop-blocks";
/// `init --agent`'s record of the client files as they were.
const AGENT_SETUP: &str = "orchestrator/agent-setup";

impl Store {
    /// Where git runs hooks from: `core.hooksPath` (relative to the top directory, as git
    /// takes it), else `hooks` in the common directory. Read in-process, for the agent hooks.
    pub fn hooks_dir(&self) -> PathBuf {
        let configured = self
            .repo
            .config_snapshot()
            .string("core.hooksPath")
            .map(|p| p.to_str_lossy().into_owned());
        match configured {
            Some(path) if path.starts_with('/') => PathBuf::from(path),
            Some(path) => self.workdir().join(path),
            None => self.repo.common_dir().join("hooks"),
        }
    }

    /// Where `init --agent` keeps what a client's files held before it wrote them.
    pub fn agent_setup_dir(&self, client: &str) -> PathBuf {
        self.repo.common_dir().join(AGENT_SETUP).join(client)
    }

    /// The agent Stop hook's count of blocked stops for one agent session (a name made safe
    /// for a file).
    pub fn stop_blocks_file(&self, session: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join(STOP_BLOCKS)
            .join(safe_file_name(session))
    }
}

/// `name` made safe for a file name: ASCII letters, digits, `-` and `_` kept, anything else
/// `_`, at most 80 characters; `default` when nothing is left.
pub(super) fn safe_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if safe.is_empty() {
        "default".to_string()
    } else {
        safe
    }
}
