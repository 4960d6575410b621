//! The git plumbing that lands a merge on main without checking main out (it may be checked
//! out in another worktree): the merge made from objects, refs moved by compare-and-swap, a
//! worktree fast-forwarded with its hooks off, and main fetched from and pushed to a remote.

use super::{Git, GitError, paths, run, with_identity};

/// What `git merge-tree --write-tree` made of two commits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergedTree {
    Clean(String),
    /// The files in conflict.
    Conflict(Vec<String>),
}

impl Git {
    /// The tree a merge of `theirs` into `ours` makes, or the files in conflict; touches no
    /// worktree, index or ref.
    pub fn merge_tree_files(&self, ours: &str, theirs: &str) -> Result<MergedTree, GitError> {
        let args = [
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            "-z",
            "--end-of-options",
            ours,
            theirs,
        ];
        match self.run(args) {
            Ok(out) => Ok(MergedTree::Clean(
                paths(&out).first().cloned().unwrap_or_default(),
            )),
            // Exit 1: conflicts; the tree first, then each conflicted file.
            Err(e) if e.status == Some(1) => {
                let out = self.run_allowing(&args, 1)?;
                let mut files: Vec<String> = paths(&out).into_iter().skip(1).collect();
                files.dedup();
                Ok(MergedTree::Conflict(files))
            }
            Err(e) => Err(e),
        }
    }

    /// Runs git and returns its stdout when it exits 0 or `allowed`.
    fn run_allowing(&self, args: &[&str], allowed: i32) -> Result<String, GitError> {
        let (cmd, shown) = self.command(args);
        let out = super::output(cmd, &shown)?;
        match out.status.code() {
            Some(0) => {}
            Some(code) if code == allowed => {}
            code => {
                return Err(GitError {
                    command: shown,
                    status: code,
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A commit of `tree` with `parents` and `message`, made from objects (no hook runs),
    /// identified as [`Git::merge_no_ff`] identifies its merge.
    pub fn commit_tree(
        &self,
        tree: &str,
        parents: &[&str],
        message: &str,
        has_identity: bool,
    ) -> Result<String, GitError> {
        let mut args = vec!["commit-tree", "-m", message];
        for parent in parents {
            args.extend(["-p", parent]);
        }
        args.push(tree);
        let (mut cmd, shown) = self.command(args);
        with_identity(&mut cmd, has_identity);
        Ok(run(cmd, shown)?.trim().to_string())
    }

    /// Moves `reference` from `old` to `new` only if it still is at `old` (`old` `None`: it
    /// must not exist).
    pub fn update_ref_cas(
        &self,
        reference: &str,
        new: &str,
        old: Option<&str>,
    ) -> Result<(), GitError> {
        // An all-zero old value is git's "must not exist".
        let zero = "0".repeat(new.len());
        self.run([
            "update-ref",
            "--no-deref",
            reference,
            new,
            old.unwrap_or(&zero),
        ])
        .map(drop)
    }

    /// Deletes `reference` only if it still is at `old`.
    pub fn delete_ref_cas(&self, reference: &str, old: &str) -> Result<(), GitError> {
        self.run(["update-ref", "--no-deref", "-d", reference, old])
            .map(drop)
    }

    /// Deletes `branch` only if its tip is still `tip` (the caller checked that `tip` is
    /// merged), whatever its upstream says, with its configuration (`branch.<name>.*`).
    pub fn delete_branch_at(&self, branch: &str, tip: &str) -> Result<(), GitError> {
        self.delete_ref_cas(&crate::store::branch_ref(branch), tip)?;
        // Gone with the branch; a branch without configuration has no section to remove.
        let _ = self.run(["config", "--remove-section", &format!("branch.{branch}")]);
        Ok(())
    }

    /// Detaches HEAD at `commit`, carrying no local change that would be overwritten.
    pub fn checkout_detached(&self, commit: &str) -> Result<(), GitError> {
        self.run(["checkout", "--quiet", "--detach", commit, "--"])
            .map(drop)
    }

    /// Fast-forwards the branch checked out here to `commit`, its files with it; no hook runs
    /// (a `post-merge` hook could move main on to a commit nobody checked).
    pub fn fast_forward_quietly(&self, commit: &str) -> Result<(), GitError> {
        self.run([
            "-c",
            "core.hooksPath=/dev/null",
            "merge",
            "--ff-only",
            "--quiet",
            "--end-of-options",
            commit,
        ])
        .map(drop)
    }
}
