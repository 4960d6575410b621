//! The worktrees of this repository as their files say, read in-process for `board`
//! (docs/worktrees.md, "The board"): each one's path, HEAD, and the workflow its own config
//! selects. `git worktree list` says the same at the cost of a process.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{DEFAULT_WORKFLOW, Store, WORKFLOW_CONFIG_KEY, branch_of_ref};

/// One worktree, as its administrative files describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    pub path: PathBuf,
    pub primary: bool,
    /// The branch checked out; `None` when detached.
    pub branch: Option<String>,
    /// The commit checked out; `None` on a branch with no commit yet.
    pub head: Option<ObjectId>,
    /// The workflow commands run there act on with no flag: its own config's
    /// `orchestrate.workflow`, else the shared config's, else `main`.
    pub workflow: String,
}

impl Store {
    /// Every remote named in the configuration, in-process (`git remote` is a process).
    pub fn remote_names(&self) -> Vec<String> {
        self.repo
            .remote_names()
            .into_iter()
            .map(|name| name.to_str_lossy().into_owned())
            .collect()
    }

    /// The primary worktree (unless the repository is bare) and every linked one whose
    /// directory is still there.
    pub fn checkouts(&self) -> Vec<Checkout> {
        // Read from a linked worktree, git's `commondir` file makes this
        // `<repo>/.git/worktrees/<name>/../..`, whose parent is not the main worktree.
        let common = gix::path::realpath(self.repo.common_dir())
            .unwrap_or_else(|_| self.repo.common_dir().to_path_buf());
        let common = common.as_path();
        let shared = read_config_value(&common.join("config"));
        let own_config = self
            .repo
            .config_snapshot()
            .boolean("extensions.worktreeConfig")
            .unwrap_or(false);
        let workflow_of = |git_dir: &Path| {
            own_config
                .then(|| read_config_value(&git_dir.join("config.worktree")))
                .flatten()
                .or_else(|| shared.clone())
                .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string())
        };
        let mut out = Vec::new();
        let bare = self
            .repo
            .config_snapshot()
            .boolean("core.bare")
            .unwrap_or(false);
        if !bare && let Some(path) = common.parent() {
            out.push(self.checkout(path.to_path_buf(), common, true, workflow_of(common)));
        }
        for proxy in self.repo.worktrees().unwrap_or_default() {
            let Ok(path) = proxy.base() else { continue };
            if !path.is_dir() {
                continue;
            }
            let git_dir = proxy.git_dir().to_path_buf();
            out.push(self.checkout(path, &git_dir, false, workflow_of(&git_dir)));
        }
        out
    }

    fn checkout(&self, path: PathBuf, git_dir: &Path, primary: bool, workflow: String) -> Checkout {
        let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
        let head = head.trim();
        let (branch, id) = match head.strip_prefix("ref: ") {
            Some(reference) => (
                branch_of_ref(reference).map(str::to_string),
                self.ref_tip(reference).ok().flatten(),
            ),
            None => (None, ObjectId::from_hex(head.as_bytes()).ok()),
        };
        Checkout {
            path,
            primary,
            branch,
            head: id,
            workflow,
        }
    }
}

/// `orchestrate.workflow` as the config file at `path` sets it (its last value), when it does.
fn read_config_value(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let file: gix::config::File = text.parse().ok()?;
    file.string(WORKFLOW_CONFIG_KEY)
        .map(|v| v.to_str_lossy().into_owned())
        .filter(|w| super::valid_workflow_name(w))
}
