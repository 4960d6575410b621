//! The git porcelain `git orchestrate worktree` needs: the worktrees `git worktree list`
//! knows, `worktree add --detach` and `worktree remove` (never forced), a worktree's own
//! config, and what a worktree holds that is not pushed or not committed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Git, GitError, STATUS, is_full_object_id, paths};

/// `git status` as the board counts a worktree's uncommitted entries.
const STATUS_ARGS: [&str; 6] = [
    "--no-optional-locks",
    "status",
    "--porcelain",
    "-z",
    "--untracked-files=normal",
    "--no-renames",
];

/// A `git status` started by [`Git::start_uncommitted_entries`]: killed and reaped if
/// dropped unread (a board that fails half way through in a long-lived `board --serve`).
pub struct StartedStatus {
    /// `None` once read.
    child: Option<Result<std::process::Child, GitError>>,
    shown: String,
}

impl StartedStatus {
    /// Waits for it: the entries it listed (an untracked directory counts once).
    pub fn finish(mut self) -> Result<usize, GitError> {
        let shown = std::mem::take(&mut self.shown);
        // Always `Some` here: only `finish`, which takes `self`, empties it.
        let child = self.child.take().unwrap_or_else(|| {
            Err(GitError {
                command: shown.clone(),
                status: None,
                stderr: "it was read already".into(),
            })
        })?;
        let out = child.wait_with_output().map_err(|e| GitError {
            command: shown.clone(),
            status: None,
            stderr: e.to_string(),
        })?;
        let listing = super::finished(out, shown)?;
        Ok(paths(&String::from_utf8_lossy(&listing)).len())
    }
}

impl Drop for StartedStatus {
    fn drop(&mut self) {
        if let Some(Ok(child)) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListedWorktree {
    pub path: PathBuf,
    /// The commit checked out; `None` in a bare entry or a branch with no commit yet.
    pub head: Option<String>,
    /// The branch checked out (`refs/heads/…` shortened); `None` when detached.
    pub branch: Option<String>,
    pub bare: bool,
    /// git could not find its directory any more (`git worktree prune` would drop it).
    pub prunable: bool,
    /// Why it is locked (`git worktree lock`), empty for no reason given; `git worktree add`
    /// holds it locked as `initializing` until its checkout is done.
    pub locked: Option<String>,
}

/// Parses `git worktree list --porcelain -z`: records of `key value` fields, each record
/// ended by an empty field.
pub fn parse_worktree_list(listing: &str) -> Vec<ListedWorktree> {
    let mut out = Vec::new();
    let mut current: Option<ListedWorktree> = None;
    for field in listing.split('\0') {
        if let Some(path) = field.strip_prefix("worktree ") {
            out.extend(current.take());
            current = Some(ListedWorktree {
                path: PathBuf::from(path),
                ..ListedWorktree::default()
            });
            continue;
        }
        let Some(entry) = current.as_mut() else {
            continue;
        };
        if let Some(head) = field.strip_prefix("HEAD ") {
            entry.head = Some(head.to_string()).filter(|h| !h.bytes().all(|b| b == b'0'));
        } else if let Some(branch) = field.strip_prefix("branch ") {
            entry.branch = crate::store::branch_of_ref(branch).map(str::to_string);
        } else if field == "bare" {
            entry.bare = true;
        } else if field == "prunable" || field.starts_with("prunable ") {
            entry.prunable = true;
        } else if field == "locked" {
            entry.locked = Some(String::new());
        } else if let Some(reason) = field.strip_prefix("locked ") {
            entry.locked = Some(reason.to_string());
        }
    }
    out.extend(current);
    out
}

impl Git {
    /// Every worktree of this repository, the primary one first (`git worktree list`).
    pub fn worktrees(&self) -> Result<Vec<ListedWorktree>, GitError> {
        let listing = self.run(["worktree", "list", "--porcelain", "-z"])?;
        Ok(parse_worktree_list(&listing))
    }

    /// `git worktree add --detach PATH COMMIT`: a new linked worktree with `commit` checked
    /// out and no branch, so that a branch checked out elsewhere (main, usually) can be its
    /// start.
    pub fn add_detached_worktree(&self, path: &Path, commit: &str) -> Result<(), GitError> {
        self.run([
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--quiet"),
            OsStr::new("--detach"),
            OsStr::new("--end-of-options"),
            path.as_os_str(),
            OsStr::new(commit),
        ])
        .map(drop)
    }

    /// `git worktree remove PATH`, never forced: git itself refuses a worktree with changes
    /// or untracked files, a locked one and the one it runs in.
    pub fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        self.run([
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--end-of-options"),
            path.as_os_str(),
        ])
        .map(drop)
    }

    /// `git worktree remove --force --force PATH`: only for a worktree `git worktree add` left
    /// half made (killed inside its checkout), which is locked and holds an unfinished
    /// checkout of a commit that is elsewhere; nothing of anyone's is in it.
    pub fn remove_half_made_worktree(&self, path: &Path) -> Result<(), GitError> {
        self.run([
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--force"),
            OsStr::new("--force"),
            OsStr::new("--end-of-options"),
            path.as_os_str(),
        ])
        .map(drop)
    }

    /// Sets `key` in the repository's shared config (`git config KEY VALUE`).
    pub fn set_config(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--end-of-options", key, value])
            .map(drop)
    }

    /// Sets `key` in this worktree's own config (`git config --worktree`, which needs
    /// `extensions.worktreeConfig`).
    pub fn set_worktree_config(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--worktree", "--end-of-options", key, value])
            .map(drop)
    }

    /// A config value as git resolves it here, with the scope it comes from (`worktree`,
    /// `local`, `global`, `system`, `command`), or `None` when it is not set.
    pub fn config_with_scope(&self, key: &str) -> Result<Option<(String, String)>, GitError> {
        match self.run(["config", "--show-scope", "--get", key]) {
            Ok(line) => Ok(line
                .trim_end_matches('\n')
                .split_once('\t')
                .map(|(scope, value)| (scope.to_string(), value.to_string()))),
            Err(e) if e.status == Some(1) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every path in this working tree that is not as HEAD has it: staged, changed, deleted
    /// or untracked and not ignored (`git status --porcelain`).
    pub fn uncommitted_files(&self) -> Result<Vec<String>, GitError> {
        let listing = self.run(STATUS)?;
        Ok(paths(&listing)
            .into_iter()
            .map(|entry| entry.get(3..).unwrap_or_default().to_string())
            .collect())
    }

    /// How many entries `git status` lists in this working tree: staged, changed, deleted,
    /// and untracked, an untracked directory counting once (`--untracked-files=normal`,
    /// which does not walk into it: the board only asks whether there is anything, and how
    /// much, and must stay cheap).
    pub fn uncommitted_entries(&self) -> Result<usize, GitError> {
        self.start_uncommitted_entries().finish()
    }

    /// [`Self::uncommitted_entries`], started now and read by [`StartedStatus::finish`]: the
    /// board starts it before it reads the workflows and waits for it last. A thread
    /// started to run it waited up to 3 ms for a CPU here while the board kept its own busy
    /// (the scheduler queues a new thread behind its parent); a process started by `exec`
    /// is placed on the idlest CPU at once.
    pub fn start_uncommitted_entries(&self) -> StartedStatus {
        let (mut cmd, shown) = self.command(STATUS_ARGS);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = cmd.spawn().map_err(|e| GitError {
            command: shown.clone(),
            status: None,
            stderr: e.to_string(),
        });
        StartedStatus {
            child: Some(child),
            shown,
        }
    }

    /// Each local branch with its upstream (`refs/remotes/…`), when it has one whose ref
    /// exists.
    pub fn branch_upstreams(&self) -> Result<Vec<(String, String)>, GitError> {
        let listing = self.run([
            "for-each-ref",
            "--format=%(refname:short)%00%(upstream)%00%(upstream:track)",
            "refs/heads/",
        ])?;
        Ok(listing
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\0');
                let branch = fields.next()?;
                let upstream = fields.next().filter(|u| !u.is_empty())?;
                let track = fields.next().unwrap_or_default();
                (track != "[gone]").then(|| (branch.to_string(), upstream.to_string()))
            })
            .collect())
    }

    /// How many commits reachable from `commit` are on none of `not` (refs, or
    /// `--remotes`/`--branches`): `git rev-list --count COMMIT --not …`. `commit` is a full
    /// object id, which no option can be mistaken for (`--end-of-options` would make
    /// `--not` a revision too).
    pub fn count_commits_not_on(&self, commit: &str, not: &[&str]) -> Result<usize, GitError> {
        if !is_full_object_id(commit)
            || not
                .iter()
                .any(|n| !n.starts_with("--") && n.starts_with('-'))
        {
            return Err(GitError {
                command: format!("git rev-list --count {commit} --not {}", not.join(" ")),
                status: None,
                stderr: "it takes a full commit id".to_string(),
            });
        }
        let mut args = vec!["rev-list", "--count", commit, "--not"];
        args.extend_from_slice(not);
        let count = self.run(args)?;
        count.trim().parse().map_err(|_| GitError {
            command: "git rev-list --count".to_string(),
            status: None,
            stderr: format!("not a count: {count}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_listing_is_read_record_by_record() {
        let listing = "worktree /r\0HEAD 1111111111111111111111111111111111111111\0branch refs/heads/main\0\0\
                       worktree /r-w1\0HEAD 2222222222222222222222222222222222222222\0detached\0locked initializing\0\0\
                       worktree /gone\0HEAD 3333333333333333333333333333333333333333\0detached\0prunable gitdir file points to non-existent location\0\0";
        let parsed = parse_worktree_list(listing);
        assert_eq!(
            parsed,
            vec![
                ListedWorktree {
                    path: "/r".into(),
                    head: Some("1".repeat(40)),
                    branch: Some("main".into()),
                    ..Default::default()
                },
                ListedWorktree {
                    path: "/r-w1".into(),
                    head: Some("2".repeat(40)),
                    locked: Some("initializing".into()),
                    ..Default::default()
                },
                ListedWorktree {
                    path: "/gone".into(),
                    head: Some("3".repeat(40)),
                    prunable: true,
                    ..Default::default()
                },
            ]
        );
    }
}
