//! Scratch space inside the git directory, where a command killed mid-way leaves it for the
//! next one to clear: a copy of the index to compute the tree `git add --all` would make
//! without touching the user's staging area, and a temporary linked worktree for the final
//! check.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Git, GitError, STATUS, io_error, paths};

/// Where scratch copies of the index live, relative to the index's directory (`.git/`).
pub const SCRATCH_DIR: &str = "orchestrator/scratch";

/// A temporary linked worktree, detached at a commit: removed (and pruned from git's list)
/// when dropped, whatever happened meanwhile. One left by a killed process is removed by
/// the next [`Git::temp_worktree`].
pub struct TempWorktree<'a> {
    git: &'a Git,
    path: PathBuf,
}

impl TempWorktree<'_> {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempWorktree<'_> {
    fn drop(&mut self) {
        remove_worktree(self.git, &self.path);
    }
}

/// Removes the worktree at `path`, taking turns with every other process of this repository
/// that adds or removes one ([`worktrees_lock`]).
fn remove_worktree(git: &Git, path: &Path) {
    let _turn = path.parent().and_then(worktrees_lock);
    remove_worktree_in_turn(git, path);
}

/// Makes the processes of one repository take turns at `git worktree add`, `remove` and
/// `prune` (an advisory `flock` on `<root>.lock` beside the scratch root `root`, so the root
/// holds worktrees alone, let go when the file
/// is dropped or the holder ends): git's worktree list is not safe to change from two
/// processes at once — one's `prune` deletes the other's worktree while it is being added
/// ("could not open …/locked"), and an `add` that lists the worktrees fails on one being
/// removed. Held only for those commands, never while a gate runs. Best effort: without the
/// lock the commands run as they did.
fn worktrees_lock(root: &Path) -> Option<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.with_extension("lock"))
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).ok()?;
    Some(file)
}

fn remove_worktree_in_turn(git: &Git, path: &Path) {
    // A link where a worktree was (a confined command can write the scratch directory) is
    // removed itself: `git worktree remove` would follow it to whatever it names.
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
        let _ = std::fs::remove_file(path);
        let _ = git.run(["worktree", "prune"]);
        return;
    }
    // A directory a command made read-only or unreadable would keep both removals below from
    // emptying it.
    open_up_all(path);
    let _ = git.run([
        OsStr::new("worktree"),
        OsStr::new("remove"),
        OsStr::new("--force"),
        path.as_os_str(),
    ]);
    let _ = std::fs::remove_dir_all(path);
    let _ = git.run(["worktree", "prune"]);
}

/// Gives us read, write and search on every directory under `dir` that lacks any of them
/// (links never followed), as far as it can.
fn open_up_all(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        if meta.permissions().mode() & 0o700 != 0o700 {
            let _ = std::fs::set_permissions(&next, std::fs::Permissions::from_mode(0o700));
        }
        if let Ok(entries) = std::fs::read_dir(&next) {
            todo.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
    }
}

impl Git {
    /// `git write-tree` of the index file at `index`.
    pub fn tree_of_index(&self, index: &Path) -> Result<String, GitError> {
        let tree = self.run_with_index(index, ["write-tree"])?;
        Ok(tree.trim().to_string())
    }

    /// A scratch copy of the index at `index` after `git add --all` (the files left out as
    /// the index has them), removed when dropped: the user's staging area is left alone.
    pub fn index_with_all(&self, index: &Path) -> Result<tempfile::TempPath, GitError> {
        // Beside the index, inside the git directory: a command killed mid-way leaves its
        // copy where the next one clears it, not in the system's temp dir.
        let dir = index.parent().unwrap_or(Path::new(".")).join(SCRATCH_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create a scratch index", e))?;
        remove_abandoned_scratch(&dir);
        let mut scratch = tempfile::Builder::new()
            .prefix(&format!("index-{}-", std::process::id()))
            .tempfile_in(&dir)
            .map_err(|e| io_error("create a scratch index", e))?;
        let original = crate::store::regular::open(index, std::fs::OpenOptions::new().read(true));
        // A FIFO or a device as the index: git would wait on it (or read it for ever) too.
        if let Err(e) = &original
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(io_error(
                "read the index",
                std::io::Error::new(e.kind(), e.to_string()),
            ));
        }
        if let Ok(mut original) = original {
            // Written through the new file's own handle, not `fs::copy`, which opens it again
            // with `O_TRUNC`: ext4 flushes a file cut to nothing when it is closed
            // (`auto_da_alloc`), a disk write on every call that takes the tree.
            std::io::copy(&mut original, scratch.as_file_mut())
                .map_err(|e| io_error("copy the index", e))?;
            // git re-reads a file changed in the same instant the index was written only if it
            // can tell ("racy git", by the index's mtime). A copy made now would look newer
            // than such a change, and the change would be missed: the copy keeps the mtime.
            let modified = original
                .metadata()
                .and_then(|m| m.modified())
                .map_err(|e| io_error("read the index's time", e))?;
            scratch
                .as_file()
                .set_modified(modified)
                .map_err(|e| io_error("keep the index's time", e))?;
        } else {
            // An empty file is not a valid index; git treats a missing one as empty.
            std::fs::remove_file(scratch.path())
                .map_err(|e| io_error("prepare a scratch index", e))?;
        }
        let scratch = scratch.into_temp_path();
        self.run_with_index(&scratch, self.add_all_args())?;
        Ok(scratch)
    }

    /// Records the working tree's files as they are now in the index file `shadow` (made
    /// from `index`, then `git add --all`): what [`Git::changed_since`] compares with.
    pub fn snapshot_into(&self, index: &Path, shadow: &Path) -> Result<(), GitError> {
        if let Some(dir) = shadow.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_error("create a shadow index", e))?;
        }
        if index.exists() {
            std::fs::copy(index, shadow).map_err(|e| io_error("copy the index", e))?;
        } else {
            let _ = std::fs::remove_file(shadow);
        }
        self.run_with_index(shadow, self.add_all_args())?;
        Ok(())
    }

    /// The files of the snapshot in `shadow` whose content changed or that are gone: one
    /// `git status`. New files are not named: test runs leave reports and caches that a
    /// project does not always ignore (`coverage.xml`, `__pycache__`).
    pub fn changed_since(&self, shadow: &Path) -> Result<Vec<String>, GitError> {
        let listing = self.run_with_index(shadow, STATUS)?;
        Ok(paths(&listing)
            .into_iter()
            .filter(|entry| {
                let worktree = entry.as_bytes().get(1).copied();
                !entry.starts_with("??") && !matches!(worktree, Some(b' ') | None)
            })
            .map(|entry| entry.get(3..).unwrap_or_default().to_string())
            .collect())
    }

    /// A fresh linked worktree detached at `commit` in a new directory under `parent` (inside
    /// the git directory), with no file checked out: the caller writes the tree it verifies
    /// from the objects (docs/integrity.md, "Hermetic verification"). No hook runs.
    pub fn temp_worktree(&self, parent: &Path, commit: &str) -> Result<TempWorktree<'_>, GitError> {
        std::fs::create_dir_all(parent)
            .map_err(|e| io_error("create a directory for a worktree", e))?;
        let turn = worktrees_lock(parent);
        if let Ok(entries) = std::fs::read_dir(parent) {
            for entry in entries.flatten() {
                let pid = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("wt-"))
                    .and_then(|n| n.split('-').next())
                    .and_then(|p| p.parse::<i32>().ok());
                if pid.is_some_and(|pid| !process_alive(pid)) {
                    remove_worktree_in_turn(self, &entry.path());
                }
            }
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("wt-{}-", std::process::id()))
            .tempdir_in(parent)
            .map_err(|e| io_error("create a directory for a worktree", e))?
            .keep();
        let worktree = TempWorktree {
            git: self,
            path: dir,
        };
        let added = self.run([
            OsStr::new("-c"),
            OsStr::new("core.hooksPath=/dev/null"),
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--detach"),
            OsStr::new("--force"),
            OsStr::new("--no-checkout"),
            OsStr::new("--quiet"),
            worktree.path.as_os_str(),
            OsStr::new(commit),
        ]);
        // Let go before a failed add's worktree is removed: its removal takes the turn too.
        drop(turn);
        added?;
        Ok(worktree)
    }
}

/// True when process `pid` exists (EPERM: it does, and is someone else's).
fn process_alive(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
        matches!(
            rustix::process::test_kill_process(pid),
            Ok(()) | Err(rustix::io::Errno::PERM)
        )
    })
}

/// Removes scratch indexes whose command is gone: named `index-<pid>-…`, with no live
/// process of that id, or older than an hour (a reused pid). Best effort: a copy that
/// cannot be removed now is removed by a later run.
fn remove_abandoned_scratch(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("index-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = process_alive(pid);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(3600));
        if !alive || old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
