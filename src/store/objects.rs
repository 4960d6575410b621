//! Objects read by id: blobs, within a size when asked, and whether files of the working
//! tree are byte for byte the blobs a commit holds.

use gix::ObjectId;

use super::{Store, StoreError, git_err};

impl Store {
    /// True when each of `paths` (repository-relative file paths) is in the working tree
    /// exactly as in `commit`: the same bytes and mode (or absent from both). No file is
    /// written, and a file that is not a regular file or a link, or is larger than 8 MiB, is
    /// not read (false): a FIFO put in a protected path must not block the caller. False
    /// means only "not shown equal here": the caller then asks git, which also knows what
    /// is tracked and what is ignored.
    pub fn worktree_matches(&self, commit: &str, paths: &[String]) -> Result<bool, StoreError> {
        use gix::object::tree::EntryKind;
        const CAP: u64 = crate::input::CAP;
        let id = ObjectId::from_hex(commit.as_bytes()).map_err(git_err)?;
        let tree = self
            .repo
            .find_commit(id)
            .map_err(git_err)?
            .tree()
            .map_err(git_err)?;
        let hash = self.repo.object_hash();
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
            let entry = tree.lookup_entry_by_path(path).map_err(git_err)?;
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
                    let kind = entry.mode().kind();
                    let bytes = if meta.file_type().is_symlink() && kind == EntryKind::Link {
                        match std::fs::read_link(&file) {
                            Ok(target) => Some(target.into_os_string().into_encoded_bytes()),
                            Err(_) => None,
                        }
                    } else if meta.file_type().is_file() && meta.len() <= CAP {
                        use std::os::unix::fs::PermissionsExt as _;
                        let executable = meta.permissions().mode() & 0o111 != 0;
                        let wanted = if executable {
                            EntryKind::BlobExecutable
                        } else {
                            EntryKind::Blob
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
                            .is_ok_and(|found| found == entry.object_id())
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

    /// The bytes of blob `id` when it holds at most `cap` of them; `Err(size)` when it holds
    /// more, and nothing was read (its size comes from the object's header).
    pub fn blob_within(&self, id: &str, cap: u64) -> Result<Result<Vec<u8>, u64>, StoreError> {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        let size = self.repo.find_header(oid).map_err(git_err)?.size();
        if size > cap {
            return Ok(Err(size));
        }
        self.blob(id).map(Ok)
    }

    /// Whether the repository holds object `id` (a tree a chain names may be out of a
    /// clone's reach when the transition that names it did not carry it).
    pub fn has_object(&self, id: &str) -> Result<bool, StoreError> {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        Ok(self.repo.has_object(oid))
    }

    /// Object `id`, its kind and bytes: read by the store itself when it is loose
    /// (`loose.rs`), else by gix. The error says why, for the caller to name what it read.
    pub(super) fn object(&self, id: ObjectId) -> Result<super::loose::Found, String> {
        if let Some(found) = self.loose.read(&id)? {
            return Ok(found);
        }
        let object = self.repo.find_object(id).map_err(|e| e.to_string())?;
        Ok((object.kind, std::sync::Arc::from(object.data.as_slice())))
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

    /// The bytes of blob `id`.
    pub fn blob(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        let id = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        // Through the store's reader: main's configuration is read so on every call.
        self.object_of_kind(id, gix::objs::Kind::Blob)
            .map(|data| data.to_vec())
            .map_err(StoreError::Git)
    }
}
