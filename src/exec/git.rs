//! git porcelain the orchestrator performs on the working tree (checkout, pull, add, commit),
//! through the `git` CLI so that the user's hooks, config and credentials apply.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed, with what git said.
#[derive(Debug, thiserror::Error)]
pub struct GitError {
    pub command: String,
    pub status: Option<i32>,
    pub stderr: String,
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(code) => write!(f, "`{}` failed (exit {code})", self.command)?,
            None => write!(f, "`{}` could not run", self.command)?,
        }
        let said = self.stderr.trim();
        if !said.is_empty() {
            write!(f, ":\n{said}")?;
        }
        Ok(())
    }
}

/// Runs git in one working tree.
#[derive(Clone, Debug)]
pub struct Git {
    workdir: PathBuf,
}

impl Git {
    pub fn new(workdir: impl Into<PathBuf>) -> Self {
        Git {
            workdir: workdir.into(),
        }
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    fn command<I, S>(&self, args: I) -> (Command, String)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let shown = format!(
            "git {}",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut cmd = Command::new("git");
        cmd.args(&args)
            .current_dir(&self.workdir)
            .stdin(Stdio::null())
            // Never wait for a password prompt nobody will answer.
            .env("GIT_TERMINAL_PROMPT", "0");
        (cmd, shown)
    }

    /// Runs git and returns its stdout, or the failure with stderr.
    pub fn run<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (cmd, shown) = self.command(args);
        run(cmd, shown)
    }

    fn run_with_index<I, S>(&self, index: &Path, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (mut cmd, shown) = self.command(args);
        cmd.env("GIT_INDEX_FILE", index);
        run(cmd, shown)
    }

    /// Tracked files with changes, staged or not (`git status --porcelain`), untracked ignored:
    /// those travel along with a checkout harmlessly.
    pub fn tracked_changes(&self) -> Result<String, GitError> {
        self.run(["status", "--porcelain", "--untracked-files=no"])
    }

    pub fn untracked_files(&self) -> Result<Vec<String>, GitError> {
        Ok(self
            .run(["ls-files", "--others", "--exclude-standard"])?
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// Reverts tracked files and the index to HEAD. Untracked files are left alone.
    pub fn reset_hard(&self) -> Result<(), GitError> {
        self.run(["reset", "--hard", "--quiet", "HEAD"]).map(drop)
    }

    pub fn checkout(&self, branch: &str) -> Result<(), GitError> {
        self.run(["checkout", "--quiet", branch]).map(drop)
    }

    pub fn checkout_new_branch(&self, branch: &str, start: &str) -> Result<(), GitError> {
        self.run(["checkout", "--quiet", "-b", branch, start])
            .map(drop)
    }

    pub fn pull_ff_only(&self, remote: &str, branch: &str) -> Result<(), GitError> {
        self.run(["pull", "--quiet", "--ff-only", remote, branch])
            .map(drop)
    }

    pub fn add_all(&self) -> Result<(), GitError> {
        self.run(["add", "--all"]).map(drop)
    }

    /// The tree of the index, as `git write-tree` writes it.
    pub fn write_tree(&self) -> Result<String, GitError> {
        Ok(self.run(["write-tree"])?.trim().to_string())
    }

    /// The tree `git add --all && git write-tree` would produce, computed in a scratch copy of
    /// the index so the user's staging area is left alone.
    pub fn worktree_tree(&self, index: &Path) -> Result<String, GitError> {
        let scratch = tempfile::Builder::new()
            .prefix("git-orchestrate-index")
            .tempfile()
            .map_err(|e| io_error("create a scratch index", e))?;
        if index.exists() {
            std::fs::copy(index, scratch.path()).map_err(|e| io_error("copy the index", e))?;
        } else {
            // An empty file is not a valid index; git treats a missing one as empty.
            std::fs::remove_file(scratch.path())
                .map_err(|e| io_error("prepare a scratch index", e))?;
        }
        self.run_with_index(scratch.path(), ["add", "--all"])?;
        let tree = self.run_with_index(scratch.path(), ["write-tree"])?;
        Ok(tree.trim().to_string())
    }

    /// Commits the index with `message` (hooks run) and returns the new HEAD. Without an
    /// identity configured, commits as the fixed git-orchestrate identity instead of failing.
    pub fn commit(
        &self,
        message: &str,
        allow_empty: bool,
        has_identity: bool,
    ) -> Result<String, GitError> {
        let mut args = vec!["commit", "--quiet", "-m", message];
        if allow_empty {
            args.push("--allow-empty");
        }
        let (mut cmd, shown) = self.command(args);
        if !has_identity {
            for (key, value) in [
                ("GIT_AUTHOR_NAME", crate::FALLBACK_NAME),
                ("GIT_AUTHOR_EMAIL", crate::FALLBACK_EMAIL),
                ("GIT_COMMITTER_NAME", crate::FALLBACK_NAME),
                ("GIT_COMMITTER_EMAIL", crate::FALLBACK_EMAIL),
            ] {
                cmd.env(key, value);
            }
        }
        run(cmd, shown)?;
        Ok(self.run(["rev-parse", "HEAD"])?.trim().to_string())
    }
}

fn io_error(what: &str, e: std::io::Error) -> GitError {
    GitError {
        command: format!("(to {what})"),
        status: None,
        stderr: e.to_string(),
    }
}

fn run(mut cmd: Command, shown: String) -> Result<String, GitError> {
    let out = cmd.output().map_err(|e| GitError {
        command: shown.clone(),
        status: None,
        stderr: e.to_string(),
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let mut said = String::from_utf8_lossy(&out.stderr).into_owned();
        if said.trim().is_empty() {
            said = String::from_utf8_lossy(&out.stdout).into_owned();
        }
        Err(GitError {
            command: shown,
            status: out.status.code(),
            stderr: said,
        })
    }
}
