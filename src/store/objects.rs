//! Objects read by id: blobs, within a size when asked, and whether files of the working
//! tree are byte for byte the blobs a commit holds.

use gix::ObjectId;
use gix::bstr::ByteSlice as _;

use super::{Store, StoreError, git_err};

impl Store {
    /// True when each of `paths` (repository-relative file paths) is in the working tree
    /// exactly as in `commit`: the same bytes and mode (or absent from both). No file is
    /// written, and a file that is not a regular file or a link, or is larger than 8 MiB, is
    /// not read (false): a FIFO put in a protected path must not block the caller. False
    /// means only "not shown equal here": the caller then asks git, which also knows what
    /// is tracked and what is ignored.
    pub fn worktree_matches(&self, commit: &str, paths: &[String]) -> Result<bool, StoreError> {
        use super::EntryType;
        const CAP: u64 = crate::input::CAP;
        let id = ObjectId::from_hex(commit.as_bytes()).map_err(git_err)?;
        let hash = self.repo.object_hash();
        let tree = self.commit_tree(id)?;
        for path in paths {
            let plain = !path.is_empty()
                && !path.starts_with('/')
                && path.split('/').all(|part| !matches!(part, "" | "." | ".."));
            if !plain {
                return Ok(false);
            }
            // A directory on the way that is a link: git sees other paths than these.
            let mut prefix = self.workdir().to_path_buf();
            let parts: Vec<&str> = path.split('/').collect();
            for part in &parts[..parts.len() - 1] {
                prefix.push(part);
                if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Ok(false);
                }
            }
            let entry = self.entry_at(tree, path)?;
            let file = self.workdir().join(path);
            let meta = match std::fs::symlink_metadata(&file) {
                Ok(meta) => Some(meta),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                // Not a directory on the way, say: git decides.
                Err(_) => return Ok(false),
            };
            let same = match (entry, meta) {
                (None, None) => true,
                (Some(entry), Some(meta)) => {
                    let kind = entry.kind;
                    let bytes = if meta.file_type().is_symlink() && kind == EntryType::Link {
                        match std::fs::read_link(&file) {
                            Ok(target) => Some(target.into_os_string().into_encoded_bytes()),
                            Err(_) => None,
                        }
                    } else if meta.file_type().is_file() && meta.len() <= CAP {
                        use std::os::unix::fs::PermissionsExt as _;
                        let executable = meta.permissions().mode() & 0o111 != 0;
                        let wanted = if executable {
                            EntryType::Executable
                        } else {
                            EntryType::File
                        };
                        if kind == wanted {
                            std::fs::read(&file).ok()
                        } else {
                            None
                        }
                    } else {
                        None
                    };
                    bytes.is_some_and(|bytes| {
                        gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
                            .is_ok_and(|found| found == entry.id)
                    })
                }
                _ => false,
            };
            if !same {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// True when each of the directories `dirs` (repository-relative) holds in the working
    /// tree exactly the files `commit` holds under it, as [`Store::worktree_matches`] compares
    /// them (absent from both is the same). A file only one side has (an untracked or ignored
    /// one too), a directory on the way that is a link, or an entry that is neither a file, a
    /// link nor a directory is "not shown equal": the caller asks git.
    pub fn worktree_dirs_match(&self, commit: &str, dirs: &[&str]) -> Result<bool, StoreError> {
        let id = ObjectId::from_hex(commit.as_bytes()).map_err(git_err)?;
        let hash = self.repo.object_hash();
        let tree = self.commit_tree(id)?;
        let mut paths = Vec::new();
        for dir in dirs {
            let mut in_tree = Vec::new();
            if let Some(entry) = self.entry_at(tree, dir)? {
                if entry.kind != super::EntryType::Directory {
                    return Ok(false);
                }
                let mut todo = vec![(entry.id, format!("{dir}/"))];
                while let Some((id, prefix)) = todo.pop() {
                    let data = self
                        .object_of_kind(id, gix::objs::Kind::Tree)
                        .map_err(StoreError::Git)?;
                    let decoded = gix::objs::TreeRef::from_bytes(&data, hash).map_err(git_err)?;
                    for entry in &decoded.entries {
                        let path = format!("{prefix}{}", entry.filename.to_str_lossy());
                        if entry.mode.is_tree() {
                            todo.push((entry.oid.to_owned(), format!("{path}/")));
                        } else {
                            in_tree.push(path);
                        }
                    }
                }
            }
            let Some(mut in_worktree) = self.worktree_files_under(dir) else {
                return Ok(false);
            };
            in_tree.sort();
            in_worktree.sort();
            if in_tree != in_worktree {
                return Ok(false);
            }
            paths.extend(in_tree);
        }
        self.worktree_matches(commit, &paths)
    }

    /// The files and links under the working tree's directory `dir`, repository-relative;
    /// `None` when a directory on the way is a link or something under it is neither a file,
    /// a link nor a directory (a FIFO is not opened), or it cannot be read.
    fn worktree_files_under(&self, dir: &str) -> Option<Vec<String>> {
        let mut on_the_way = self.workdir().to_path_buf();
        for part in dir.split('/') {
            on_the_way.push(part);
            match std::fs::symlink_metadata(&on_the_way) {
                Ok(meta) if meta.file_type().is_symlink() => return None,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
                Err(_) => return None,
            }
        }
        let mut out = Vec::new();
        let mut todo = vec![(on_the_way, dir.to_string())];
        while let Some((path, relative)) = todo.pop() {
            let meta = std::fs::symlink_metadata(&path).ok()?;
            if meta.is_dir() {
                for entry in std::fs::read_dir(&path).ok()? {
                    let entry = entry.ok()?;
                    let name = entry.file_name().into_string().ok()?;
                    todo.push((entry.path(), format!("{relative}/{name}")));
                }
            } else if meta.is_file() || meta.file_type().is_symlink() {
                out.push(relative);
            } else {
                return None;
            }
        }
        Some(out)
    }

    /// The bytes of blob `id` when it holds at most `cap` of them; `Err(size)` when it holds
    /// more, and nothing was read (its size comes from the object's header).
    pub fn blob_within(&self, id: &str, cap: u64) -> Result<Result<Vec<u8>, u64>, StoreError> {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        // Its size first, from the loose file's header where it is loose: opening gix for it
        // was the only reason a plain repository's board opened gix at all.
        let size = match self.loose.header(&oid).map_err(StoreError::Git)? {
            Some((_, size)) => size,
            None => self.repo()?.find_header(oid).map_err(git_err)?.size(),
        };
        if size > cap {
            return Ok(Err(size));
        }
        self.blob(id).map(Ok)
    }

    /// Whether the repository holds object `id` (a tree a chain names may be out of a
    /// clone's reach when the transition that names it did not carry it).
    pub fn has_object(&self, id: &str) -> Result<bool, StoreError> {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        self.holds(oid)
    }

    /// True when the repository holds object `id`: a loose one is looked for by the store
    /// itself, and where there is no pack and no alternate, that is all there is.
    pub(super) fn holds(&self, id: ObjectId) -> Result<bool, StoreError> {
        if self.loose.holds(&id) {
            return Ok(true);
        }
        if self.loose.alone() {
            return Ok(false);
        }
        Ok(self.repo()?.has_object(id))
    }

    /// Object `id`, its kind and bytes: read by the store itself when it is loose
    /// (`loose.rs`), else by gix. The error says why, for the caller to name what it read.
    pub(super) fn object(&self, id: ObjectId) -> Result<super::loose::Found, String> {
        if let Some(found) = self.memo.as_ref().and_then(|memo| memo.borrow().get(&id)) {
            return Ok(found);
        }
        let not_loose = (self.memo.as_ref()).is_some_and(|memo| memo.borrow().not_loose(&id));
        let found = match if not_loose {
            None
        } else {
            self.loose.read(&id)?
        } {
            Some(found) => found,
            None => {
                if let Some(memo) = &self.memo {
                    memo.borrow_mut().missed(|| self.loose.fan_outs());
                }
                let object = (self.repo().map_err(|e| e.to_string())?)
                    .find_object(id)
                    .map_err(|e| e.to_string())?;
                (object.kind, std::sync::Arc::from(object.data.as_slice()))
            }
        };
        if let Some(memo) = &self.memo {
            memo.borrow_mut().keep(id, &found);
        }
        Ok(found)
    }

    /// [`Self::object`], which must be of `kind`.
    pub(super) fn object_of_kind(
        &self,
        id: ObjectId,
        kind: gix::objs::Kind,
    ) -> Result<std::sync::Arc<[u8]>, String> {
        match self.object(id)? {
            (found, data) if found == kind => Ok(data),
            (found, _) => Err(format!("{id} is a {found}, not a {kind}")),
        }
    }

    /// The tree of commit `id`, read through the store's reader (loose, else gix): a
    /// submit's checks, main's configuration and `tree_of` read commits so on every call.
    pub(super) fn commit_tree(&self, id: ObjectId) -> Result<ObjectId, StoreError> {
        let data = self
            .object_of_kind(id, gix::objs::Kind::Commit)
            .map_err(StoreError::Git)?;
        Ok(
            gix::objs::CommitRef::from_bytes(&data, self.repo.object_hash())
                .map_err(git_err)?
                .tree(),
        )
    }

    /// Blob `id`, read through the store's reader (loose, else gix).
    pub(super) fn blob_of(&self, id: ObjectId) -> Result<std::sync::Arc<[u8]>, StoreError> {
        self.object_of_kind(id, gix::objs::Kind::Blob)
            .map_err(StoreError::Git)
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        let id = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        // Through the store's reader: main's configuration is read so on every call.
        self.object_of_kind(id, gix::objs::Kind::Blob)
            .map(|data| data.to_vec())
            .map_err(StoreError::Git)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;

    /// A CI directory shown equal in-process only when the working tree holds exactly the
    /// commit's files under it: a file added, changed, removed or turned into a link, and a
    /// directory on the way made a link, are each "not shown equal" (git then decides).
    #[test]
    fn a_directory_matches_only_with_exactly_the_commits_files() {
        let repo = tempfile::tempdir().unwrap();
        let d = repo.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        let write = |path: &str, text: &str| {
            let full = d.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write(".github/workflows/ci.yml", "on: push\n");
        write(".github/workflows/deep/x.yml", "x\n");
        write("README", "r\n");
        git(d, &["add", "--all"]);
        git(d, &["commit", "--quiet", "-m", "one"]);
        let commit = git(d, &["rev-parse", "HEAD"]);
        let store = Store::discover(d, "main").unwrap();
        let dirs = [".github/workflows", ".gitlab"];
        let matches = || store.worktree_dirs_match(&commit, &dirs).unwrap();
        assert!(matches(), "as committed, and `.gitlab` absent from both");

        write(".github/workflows/zz.yml", "on: push\n");
        assert!(!matches(), "a file added");
        std::fs::remove_file(d.join(".github/workflows/zz.yml")).unwrap();
        write(".gitlab/other.yml", "x\n");
        assert!(
            !matches(),
            "a file added under a directory the commit lacks"
        );
        std::fs::remove_dir_all(d.join(".gitlab")).unwrap();
        write(".github/workflows/deep/x.yml", "y\n");
        assert!(!matches(), "a file changed");
        write(".github/workflows/deep/x.yml", "x\n");
        std::fs::remove_file(d.join(".github/workflows/ci.yml")).unwrap();
        assert!(!matches(), "a file removed");
        std::os::unix::fs::symlink("../../README", d.join(".github/workflows/ci.yml")).unwrap();
        assert!(!matches(), "a file made a link");
        std::fs::remove_file(d.join(".github/workflows/ci.yml")).unwrap();
        write(".github/workflows/ci.yml", "on: push\n");
        assert!(matches(), "put back");

        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::rename(d.join(".github"), elsewhere.path().join("github")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("github"), d.join(".github")).unwrap();
        assert!(!matches(), "a directory on the way made a link");
    }
}
