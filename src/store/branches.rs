//! Facts about branches and HEAD: which branches exist, which one HEAD is on, HEAD's commit,
//! the main branch, and a file's blob as committed on a branch.

use gix::bstr::ByteSlice;

use gix::ObjectId;

use super::names::BRANCHES;
use super::{Store, StoreError, branch_ref, git_err};

impl Store {
    /// HEAD's commit: its id, tree and message, or `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<FoundCommit>, StoreError> {
        let Some(id) = self.head_commit_id()? else {
            return Ok(None);
        };
        let commit = self.repo()?.find_commit(id).map_err(git_err)?;
        Ok(Some(FoundCommit {
            commit: id.to_string(),
            tree: commit.tree_id().map_err(git_err)?.to_string(),
            message: commit.message_raw_sloppy().to_str_lossy().into_owned(),
        }))
    }

    /// True when any branch exists (a repository with no commit has none).
    pub fn has_any_branch(&self) -> Result<bool, StoreError> {
        if let Some(git) = self.ref_commands()? {
            return Ok(!self.listed_refs(git, BRANCHES)?.is_empty());
        }
        let refs = self.repo()?.references().map_err(git_err)?;
        let mut branches = refs.local_branches().map_err(git_err)?;
        Ok(branches.next().is_some())
    }

    /// True when `refs/heads/<name>` exists.
    pub fn branch_exists(&self, name: &str) -> Result<bool, StoreError> {
        self.ref_exists(&branch_ref(name))
    }

    /// The commit `refs/heads/<name>` is at, when it exists.
    pub(super) fn branch_tip(&self, name: &str) -> Result<Option<ObjectId>, StoreError> {
        self.peeled_ref(&branch_ref(name))
    }

    /// The branch HEAD is on, or `None` when detached.
    pub fn head_branch(&self) -> Result<Option<String>, StoreError> {
        Ok(self.head_ref_name()?.map(|name| {
            name.strip_prefix(BRANCHES)
                .or_else(|| name.strip_prefix("refs/"))
                .unwrap_or(&name)
                .to_string()
        }))
    }

    /// The branch `init` should call main: `main`, else `master`, else the current branch.
    pub fn detect_main_branch(&self) -> Result<String, StoreError> {
        for candidate in ["main", "master"] {
            if self.branch_exists(candidate)? {
                return Ok(candidate.to_string());
            }
        }
        Ok(self.head_branch()?.unwrap_or_else(|| "main".to_string()))
    }

    /// The commit `refs/heads/<branch>` points at, and the blob id of `path` in it.
    pub fn file_id_at_branch(
        &self,
        branch: &str,
        path: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError> {
        let Some(tip) = self.branch_tip(branch)? else {
            return Ok(None);
        };
        let tree = self.commit_tree(tip)?;
        let blob = self.entry_at(tree, path)?.map(|e| e.id.to_string());
        Ok(Some((tip.to_string(), blob)))
    }
}

/// A commit as [`Store::head_commit`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCommit {
    pub commit: String,
    pub tree: String,
    pub message: String,
}
