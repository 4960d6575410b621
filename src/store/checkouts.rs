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
        if !self.repo.is_plain() {
            return match self.repo() {
                Ok(repo) => repo
                    .remote_names()
                    .into_iter()
                    .map(|name| name.to_str_lossy().into_owned())
                    .collect(),
                Err(_) => Vec::new(),
            };
        }
        // A plain repository is the user's own: every section is trusted, as gix trusts it.
        self.repo.with_config(|config| {
            let names: std::collections::BTreeSet<String> = config
                .sections_by_name("remote")
                .into_iter()
                .flatten()
                .filter_map(|s| {
                    s.header()
                        .subsection_name()
                        .map(|n| n.to_str_lossy().into_owned())
                })
                .collect();
            names.into_iter().collect()
        })
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
        let boolean = |key: &str| {
            self.repo
                .with_config(|config| config.boolean(key).ok().flatten())
                .unwrap_or(false)
        };
        let own_config = boolean("extensions.worktreeConfig");
        let workflow_of = |git_dir: &Path| {
            own_config
                .then(|| read_config_value(&git_dir.join("config.worktree")))
                .flatten()
                .or_else(|| shared.clone())
                .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string())
        };
        // In reftable every worktree's HEAD is in the ref tables (its HEAD file names no
        // branch): git lists them all at once.
        let listed = self.listed_worktree_heads();
        let mut out = Vec::new();
        let bare = boolean("core.bare");
        if !bare && let Some(path) = common.parent() {
            let mut checkout = self.checkout(path.to_path_buf(), common, true, workflow_of(common));
            listed_head(&listed, &mut checkout);
            out.push(checkout);
        }
        for (git_dir, path) in linked_worktrees(self.repo.common_dir()) {
            if !path.is_dir() {
                continue;
            }
            let mut checkout = self.checkout(path, &git_dir, false, workflow_of(&git_dir));
            listed_head(&listed, &mut checkout);
            out.push(checkout);
        }
        out
    }

    fn checkout(&self, path: PathBuf, git_dir: &Path, primary: bool, workflow: String) -> Checkout {
        let head = super::regular::read_to_string(&git_dir.join("HEAD")).unwrap_or_default();
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

impl Store {
    /// Each worktree's branch and HEAD commit by its real path, as `git worktree list
    /// --porcelain` says, when git's ref commands read the refs; empty otherwise.
    fn listed_worktree_heads(&self) -> Vec<(PathBuf, Option<String>, Option<ObjectId>)> {
        let Ok(Some(git)) = self.ref_commands() else {
            return Vec::new();
        };
        let Ok(out) = git.git(&["worktree", "list", "--porcelain"], b"", &[]) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&out);
        text.split("\n\n")
            .filter_map(|entry| {
                let mut path = None;
                let mut branch = None;
                let mut head = None;
                for line in entry.lines() {
                    if let Some(p) = line.strip_prefix("worktree ") {
                        path = Some(gix::path::realpath(p).unwrap_or_else(|_| PathBuf::from(p)));
                    } else if let Some(h) = line.strip_prefix("HEAD ") {
                        head = ObjectId::from_hex(h.as_bytes()).ok();
                    } else if let Some(b) = line.strip_prefix("branch ") {
                        branch = branch_of_ref(b).map(str::to_string);
                    }
                }
                Some((path?, branch, head))
            })
            .collect()
    }
}

/// `checkout`'s branch and HEAD as git listed them, when it did.
fn listed_head(listed: &[(PathBuf, Option<String>, Option<ObjectId>)], checkout: &mut Checkout) {
    if listed.is_empty() {
        return;
    }
    let real = gix::path::realpath(&checkout.path).unwrap_or_else(|_| checkout.path.clone());
    if let Some((_, branch, head)) = listed.iter().find(|(path, _, _)| *path == real) {
        checkout.branch = branch.clone();
        checkout.head = *head;
    }
}

/// `orchestrate.workflow` as the config file at `path` sets it (its last value), when it does.
fn read_config_value(path: &Path) -> Option<String> {
    let text = super::regular::read_to_string(path).ok()?;
    let file: gix::config::File = text.parse().ok()?;
    file.string(WORKFLOW_CONFIG_KEY)
        .map(|v| v.to_str_lossy().into_owned())
        .filter(|w| super::valid_workflow_name(w))
}

/// Each linked worktree registered under `common` (the common git directory): its private
/// git directory (`worktrees/<id>`, holding a `gitdir` file) and its checkout, in the order of
/// those directories. What gix's `Repository::worktrees` lists, read without opening gix: the
/// board lists the worktrees on every call. One whose `gitdir` cannot be read is left out.
fn linked_worktrees(common: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let git_dir = entry.path();
            let gitdir = git_dir.join("gitdir");
            // Read only when it is a regular file, as gix reads it: a FIFO there would hold
            // the read, and the board, for ever.
            if !gitdir.is_file() {
                return None;
            }
            let dot_git = gix::discover::path::from_plain_file_relative_to_file(&gitdir)?.ok()?;
            Some((git_dir, gix::discover::path::without_dot_git_dir(dot_git)))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A registration whose `gitdir` is a regular file is listed, by its checkout; one whose
    /// `gitdir` is a FIFO, or missing, is left out without waiting on it.
    #[test]
    fn linked_worktrees_are_read_from_regular_gitdir_files_only() {
        let common = tempfile::tempdir().unwrap();
        let registered = |id: &str| {
            let dir = common.path().join("worktrees").join(id);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        let a = registered("a");
        std::fs::write(a.join("gitdir"), "/elsewhere/wt/.git\n").unwrap();
        crate::test_git::mkfifo(&registered("b").join("gitdir"));
        registered("c");
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = common.path().to_path_buf();
        std::thread::spawn(move || tx.send(linked_worktrees(&dir)));
        let listed = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a FIFO named gitdir is not read");
        assert_eq!(listed, vec![(a, PathBuf::from("/elsewhere/wt"))]);
    }
}
