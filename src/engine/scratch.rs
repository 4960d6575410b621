//! Scratch worktrees for verification (docs/integrity.md): a linked worktree of the
//! repository whose files are one tree written straight from the objects, where pinned paths
//! are put in from another tree and taken out again, and which is reset to how it was made
//! between the runs that must not see each other's leftovers. Removed however the run ends.

use std::path::{Path, PathBuf};

use super::{EngineError, Session};
use crate::exec::git::TempWorktree;
use crate::exec::{Git, GitError};

/// A tree, written out in a worktree of its own.
pub struct Scratch<'a> {
    session: &'a Session,
    worktree: TempWorktree<'a>,
    git: Git,
    tree: String,
    /// The worktree's own git directory, as it was made: what [`Scratch::reset`] puts back.
    admin: PathBuf,
    made: Made,
}

/// The files git made for a fresh worktree, read once it was made: its `.git` file, and
/// every file of its own git directory (HEAD, the index just read, …), with their bytes.
struct Made {
    dot_git: Vec<u8>,
    admin_files: Vec<(PathBuf, Vec<u8>)>,
}

impl<'a> Scratch<'a> {
    /// `tree` in a fresh worktree detached at `commit` (whose tree it usually is): nothing of
    /// the working tree, untracked or ignored, is there, and no filter or hook ran to make it.
    pub fn new(session: &'a Session, commit: &str, tree: &str) -> Result<Scratch<'a>, EngineError> {
        Self::with_index(session, commit, tree, tree)
    }

    /// `tree`'s files in a fresh worktree detached at `commit`, with `index` as its index:
    /// two of these at one commit and one index differ in their files only.
    pub fn with_index(
        session: &'a Session,
        commit: &str,
        tree: &str,
        index: &str,
    ) -> Result<Scratch<'a>, EngineError> {
        super::hermetic::require_clean_scratch(session)?;
        let worktree = session
            .git
            .temp_worktree(&super::hermetic::scratch_root(session), commit)?;
        // Named now, before anything ran there: a command run in the worktree can rewrite
        // its `.git` file.
        let admin = session.git.at(worktree.path()).absolute_git_dir()?;
        let git = session
            .git
            .at(worktree.path())
            .pinned_to(admin.clone(), session.store.common_dir().to_path_buf());
        let pointers = session.store.export_tree(tree, worktree.path())?;
        git.read_tree(index)?;
        let io = |what: &str| super::io_error(format!("read the new worktree's {what}"));
        let made = Made {
            dot_git: std::fs::read(worktree.path().join(".git")).map_err(io(".git file"))?,
            admin_files: files_under(&admin).map_err(io("git directory"))?,
        };
        let scratch = Scratch {
            session,
            worktree,
            git,
            tree: tree.to_string(),
            admin,
            made,
        };
        scratch.fetch_lfs(&pointers)?;
        Ok(scratch)
    }

    /// Puts the worktree back as [`Scratch::with_index`] made it, without a git process:
    /// every file and directory in it removed (tracked, untracked and ignored alike, so
    /// nothing a test left is seen by the next run), its tree written again from the objects,
    /// and its `.git` file and own git directory (HEAD, the index) rewritten as they were
    /// made. An error (a directory a test made unremovable, say) leaves the worktree in no
    /// known state: the caller makes a new one.
    pub fn reset(&self) -> Result<(), EngineError> {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = self.path();
        let io = |what: &str| super::io_error(format!("reset the scratch worktree's {what}"));
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("directory"))?;
        empty(dir).map_err(io("files"))?;
        std::fs::write(dir.join(".git"), &self.made.dot_git).map_err(io(".git file"))?;
        empty(&self.admin).map_err(io("git directory"))?;
        for (path, bytes) in &self.made.admin_files {
            let full = self.admin.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent).map_err(io("git directory"))?;
            }
            std::fs::write(&full, bytes).map_err(io("git directory"))?;
        }
        let pointers = self.session.store.export_tree(&self.tree, dir)?;
        self.fetch_lfs(&pointers)
    }

    pub fn path(&self) -> &Path {
        self.worktree.path()
    }

    /// Takes its files as they are now as the baseline [`Scratch::changed`] compares with:
    /// a shadow index in the repository's git directory, which a confined command cannot
    /// write (docs/integrity.md, "What the verifier runs").
    pub fn baseline(&self) -> Result<(), EngineError> {
        let index = self.git.git_path("index")?;
        Ok(self.git.snapshot_into(&index, &self.shadow())?)
    }

    /// The files that changed since [`Scratch::baseline`].
    pub fn changed(&self) -> Result<Vec<String>, EngineError> {
        Ok(self.git.changed_since(&self.shadow())?)
    }

    fn shadow(&self) -> std::path::PathBuf {
        let name = self
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.session
            .store
            .common_dir()
            .join("orchestrator")
            .join("shadow")
            .join(format!("{name}.index"))
    }

    /// Puts `paths` in as `from` has them (removed where it has none).
    pub fn put(&self, from: &str, paths: &[String]) -> Result<(), EngineError> {
        let pointers = self.session.store.put_paths(from, paths, self.path())?;
        self.fetch_lfs(&pointers)
    }

    /// Puts `paths` back as this worktree's own tree has them.
    pub fn restore(&self, paths: &[String]) -> Result<(), EngineError> {
        self.put(&self.tree.clone(), paths)
    }

    /// git-lfs's content for the pointer files its filter applies to: git-lfs's own filter is
    /// the one content filter a verification goes through (docs/integrity.md).
    fn fetch_lfs(&self, pointers: &[String]) -> Result<(), EngineError> {
        let lfs_configured = self
            .session
            .store
            .settings("filter")
            .iter()
            .any(|s| s.key == "filter.lfs.smudge" || s.key == "filter.lfs.process");
        if pointers.is_empty() || !lfs_configured {
            return Ok(());
        }
        for path in self.git.lfs_tracked(pointers)? {
            let file = self.path().join(&path);
            let pointer = std::fs::read(&file)
                .map_err(super::io_error(format!("read {}", file.display())))?;
            let content = self
                .git
                .lfs_smudge(&path, &pointer, self.session.command_env()?)
                .map_err(|e| GitError {
                    stderr: format!(
                        "the git-lfs content of {path} could not be fetched: {}",
                        e.stderr
                    ),
                    ..e
                })?;
            std::fs::write(&file, content)
                .map_err(super::io_error(format!("write {}", file.display())))?;
        }
        Ok(())
    }
}

/// Removes everything in `dir`, leaving it empty; a link is removed, never followed.
fn empty(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if std::fs::symlink_metadata(&path)?.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Every regular file under `dir`, by its path from `dir`, with its bytes.
fn files_under(dir: &Path) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() {
                out.push((path.clone(), std::fs::read(dir.join(&path))?));
            }
        }
    }
    Ok(out)
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        // The baseline's shadow index goes with the worktree; there may be none.
        let _ = std::fs::remove_file(self.shadow());
    }
}
