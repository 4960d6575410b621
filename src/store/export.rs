//! Trees as directories, straight from the objects: what a verification runs on is exactly
//! what git stores, written without filters, attributes or hooks (docs/integrity.md,
//! "Hermetic verification"); and which paths of a working tree differ from a tree.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::{Store, StoreError, git_err};

/// What a path holds in a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    File,
    Executable,
    Link,
    /// A submodule's commit: written as an empty directory, as a checkout without
    /// `--recurse-submodules` leaves it.
    Submodule,
    Directory,
}

/// An entry of a tree, by path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeEntry {
    pub kind: EntryType,
    pub id: ObjectId,
}

/// The start of a git-lfs pointer file: its content is fetched by `git lfs smudge`.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n";

fn kind_of(kind: EntryKind) -> EntryType {
    match kind {
        EntryKind::Tree => EntryType::Directory,
        EntryKind::Blob => EntryType::File,
        EntryKind::BlobExecutable => EntryType::Executable,
        EntryKind::Link => EntryType::Link,
        EntryKind::Commit => EntryType::Submodule,
    }
}

/// A name a tree entry may have on disk: git refuses to check out the others (a crafted
/// tree could otherwise write outside the directory, or a `.git` of its own).
fn safe_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name != b"."
        && name != b".."
        && !name.contains(&b'/')
        && !name.contains(&0)
        && !name.eq_ignore_ascii_case(b".git")
}

/// A path from git (`a/b/c`) whose every part is a [`safe_name`].
fn safe_path(path: &str) -> bool {
    path.split('/').all(|part| safe_name(part.as_bytes()))
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Objects {
        message: format!("could not {what} {}", path.display()),
        source: Box::new(e),
    }
}

impl Store {
    fn tree_id(&self, tree: &str) -> Result<ObjectId, StoreError> {
        ObjectId::from_hex(tree.as_bytes()).map_err(git_err)
    }

    /// The tree of `rev` (a full commit id, `HEAD` or a branch name), read in-process.
    pub fn tree_of(&self, rev: &str) -> Result<String, StoreError> {
        Ok(self.commit_tree(self.commit_named(rev)?)?.to_string())
    }

    /// The parents of `rev` (as [`Self::tree_of`] takes it), first parent first: `git
    /// rev-list --parents -n 1`, in-process.
    pub fn parents_of(&self, rev: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .commit_parents(self.commit_named(rev)?)?
            .iter()
            .map(ObjectId::to_string)
            .collect())
    }

    fn commit_named(&self, rev: &str) -> Result<ObjectId, StoreError> {
        match ObjectId::from_hex(rev.as_bytes()) {
            Ok(id) => Ok(id),
            Err(_) => {
                let found = if rev == "HEAD" {
                    self.head_commit_id()?
                } else {
                    self.branch_tip(rev)?
                };
                found.ok_or_else(|| StoreError::Git(format!("no commit is named {rev}")))
            }
        }
    }

    /// The paths whose entries differ between trees `a` and `b` (added, removed or changed;
    /// a directory's every path when it is one side only), sorted: `git diff-tree -r
    /// --name-only`, in-process.
    pub fn changed_paths(&self, a: &str, b: &str) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        self.diff_trees(Some(self.tree_id(a)?), Some(self.tree_id(b)?), "", &mut out)?;
        out.sort();
        Ok(out)
    }

    fn diff_trees(
        &self,
        a: Option<ObjectId>,
        b: Option<ObjectId>,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<(), StoreError> {
        if a == b {
            return Ok(());
        }
        let entries = |id: Option<ObjectId>| -> Result<
            std::collections::BTreeMap<Vec<u8>, (EntryKind, ObjectId)>,
            StoreError,
        > {
            let Some(id) = id else {
                return Ok(Default::default());
            };
            let tree = self.repo()?.find_tree(id).map_err(git_err)?;
            let decoded = tree.decode().map_err(git_err)?;
            Ok(decoded
                .entries
                .iter()
                .map(|e| (e.filename.to_vec(), (e.mode.kind(), e.oid.to_owned())))
                .collect())
        };
        let (left, right) = (entries(a)?, entries(b)?);
        let names: std::collections::BTreeSet<&Vec<u8>> = left.keys().chain(right.keys()).collect();
        for name in names {
            let path = format!("{prefix}{}", String::from_utf8_lossy(name));
            let (l, r) = (left.get(name), right.get(name));
            if l == r {
                continue;
            }
            let tree_of = |side: Option<&(EntryKind, ObjectId)>| {
                side.filter(|(kind, _)| *kind == EntryKind::Tree)
                    .map(|(_, id)| *id)
            };
            let (lt, rt) = (tree_of(l), tree_of(r));
            if lt.is_some() || rt.is_some() {
                self.diff_trees(lt, rt, &format!("{path}/"), out)?;
            }
            // A file on either side that is not one same file on both.
            let is_file = |side: Option<&(EntryKind, ObjectId)>| {
                side.is_some_and(|(kind, _)| *kind != EntryKind::Tree)
            };
            if is_file(l) || is_file(r) {
                out.push(path);
            }
        }
        Ok(())
    }

    /// Every file named `name` anywhere in `tree` (links too; not inside a submodule),
    /// sorted: read in-process, one tree object per directory.
    pub fn files_named(&self, tree: &str, name: &str) -> Result<Vec<String>, StoreError> {
        self.files_named_any(tree, &[name])
    }

    /// Every file named one of `names` anywhere in `tree`, as [`Store::files_named`]: one
    /// walk for them all.
    pub fn files_named_any(&self, tree: &str, names: &[&str]) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        let mut dirs = vec![(self.tree_id(tree)?, String::new())];
        while let Some((id, prefix)) = dirs.pop() {
            let tree = self.repo()?.find_tree(id).map_err(git_err)?;
            let decoded = tree.decode().map_err(git_err)?;
            for entry in &decoded.entries {
                let path = format!("{prefix}{}", entry.filename.to_str_lossy());
                match entry.mode.kind() {
                    EntryKind::Tree => dirs.push((entry.oid.to_owned(), format!("{path}/"))),
                    EntryKind::Commit => {}
                    _ if names.iter().any(|n| entry.filename == n.as_bytes()) => out.push(path),
                    _ => {}
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The entry at `path` in `tree`, if there is one.
    pub fn tree_entry(&self, tree: &str, path: &str) -> Result<Option<TreeEntry>, StoreError> {
        self.entry_at(self.tree_id(tree)?, path)
    }

    /// [`Self::tree_entry`] of tree `tree` by id, each tree on the way read through the
    /// store's reader (`loose.rs`, else gix): main's configuration is looked up so on every
    /// call. `path` is cut as gix's `lookup_entry_by_path` cut it (`a//b` is `a/b`; `./a`,
    /// `/a` and the empty path name nothing), and a name on the way that is not a
    /// directory leads nowhere.
    pub(super) fn entry_at(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<TreeEntry>, StoreError> {
        let hash = self.repo.object_hash();
        let mut parts = Path::new(path)
            .components()
            .map(|c| c.as_os_str().as_encoded_bytes())
            .peekable();
        let mut id = tree;
        while let Some(part) = parts.next() {
            let data = self
                .object_of_kind(id, gix::objs::Kind::Tree)
                .map_err(StoreError::Git)?;
            let tree = gix::objs::TreeRef::from_bytes(&data, hash).map_err(git_err)?;
            let Some(entry) = tree.entries.iter().find(|e| e.filename == part) else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                return Ok(Some(TreeEntry {
                    kind: kind_of(entry.mode.kind()),
                    id: entry.oid.to_owned(),
                }));
            }
            if !entry.mode.is_tree() {
                return Ok(None);
            }
            id = entry.oid.to_owned();
        }
        Ok(None)
    }

    /// A symbolic link's target as `tree` stores it at `path`; `None` when `path` is no link.
    pub fn link_target(&self, tree: &str, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.tree_entry(tree, path)? {
            Some(TreeEntry {
                kind: EntryType::Link,
                id,
            }) => Ok(Some(
                self.repo()?.find_blob(id).map_err(git_err)?.data.clone(),
            )),
            _ => Ok(None),
        }
    }

    /// Writes every entry of `tree` under `dir`, which exists. Returns the paths whose
    /// content is a git-lfs pointer, for the caller to fetch if they are git-lfs's.
    pub fn export_tree(&self, tree: &str, dir: &Path) -> Result<Vec<String>, StoreError> {
        let mut links = Vec::new();
        let mut pointers = Vec::new();
        self.export_subtree(self.tree_id(tree)?, dir, "", &mut links, &mut pointers)?;
        // Links last: nothing is ever written through one.
        for (path, target) in links {
            make_link(&dir.join(&path), &target)?;
        }
        Ok(pointers)
    }

    fn export_subtree(
        &self,
        id: ObjectId,
        dir: &Path,
        prefix: &str,
        links: &mut Vec<(String, Vec<u8>)>,
        pointers: &mut Vec<String>,
    ) -> Result<(), StoreError> {
        let tree = self.repo()?.find_tree(id).map_err(git_err)?;
        let decoded = tree.decode().map_err(git_err)?;
        for entry in &decoded.entries {
            if !safe_name(entry.filename) {
                return Err(StoreError::Objects {
                    message: format!(
                        "tree {id} holds an entry named {:?}, which git would not check out",
                        entry.filename.to_str_lossy()
                    ),
                    source: Box::new(std::io::Error::other("unsafe tree entry name")),
                });
            }
            let name = entry.filename.to_str_lossy();
            let path = if prefix.is_empty() {
                name.into_owned()
            } else {
                format!("{prefix}/{name}")
            };
            let full = dir.join(&path);
            match kind_of(entry.mode.kind()) {
                EntryType::Directory => {
                    std::fs::create_dir(&full).map_err(|e| io_err("create", &full, e))?;
                    self.export_subtree(entry.oid.to_owned(), dir, &path, links, pointers)?;
                }
                EntryType::Submodule => {
                    std::fs::create_dir(&full).map_err(|e| io_err("create", &full, e))?;
                }
                EntryType::Link => {
                    let blob = self.repo()?.find_blob(entry.oid).map_err(git_err)?;
                    links.push((path, blob.data.clone()));
                }
                kind @ (EntryType::File | EntryType::Executable) => {
                    let blob = self.repo()?.find_blob(entry.oid).map_err(git_err)?;
                    write_file(&full, &blob.data, kind == EntryType::Executable)?;
                    if blob.data.starts_with(LFS_POINTER) {
                        pointers.push(path);
                    }
                }
            }
        }
        Ok(())
    }

    /// Puts `paths` into `dir` as `tree` has them: written, or removed where `tree` has none
    /// (a directory in `tree` is written whole). Returns the git-lfs pointers written.
    pub fn put_paths(
        &self,
        tree: &str,
        paths: &[String],
        dir: &Path,
    ) -> Result<Vec<String>, StoreError> {
        let mut pointers = Vec::new();
        for path in paths {
            if !safe_path(path) {
                continue;
            }
            let full = dir.join(path);
            ensure_no_link_above(dir, path)?;
            remove_any(&full)?;
            let Some(entry) = self.tree_entry(tree, path)? else {
                continue;
            };
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
            }
            match entry.kind {
                EntryType::Directory => {
                    std::fs::create_dir(&full).map_err(|e| io_err("create", &full, e))?;
                    let mut links = Vec::new();
                    self.export_subtree(entry.id, dir, path, &mut links, &mut pointers)?;
                    for (link, target) in links {
                        make_link(&dir.join(link), &target)?;
                    }
                }
                EntryType::Submodule => {
                    std::fs::create_dir(&full).map_err(|e| io_err("create", &full, e))?;
                }
                EntryType::Link => {
                    let blob = self.repo()?.find_blob(entry.id).map_err(git_err)?;
                    make_link(&full, &blob.data)?;
                }
                kind @ (EntryType::File | EntryType::Executable) => {
                    let blob = self.repo()?.find_blob(entry.id).map_err(git_err)?;
                    write_file(&full, &blob.data, kind == EntryType::Executable)?;
                    if blob.data.starts_with(LFS_POINTER) {
                        pointers.push(path.clone());
                    }
                }
            }
        }
        Ok(pointers)
    }

    /// Which of `paths` differ in the working directory `dir` from how `tree` has them: the
    /// content, the executable bit, a link's target, or being there at all. Compared byte for
    /// byte with the stored blobs (a path that git would convert on checkout counts as
    /// different, which only costs a scratch run).
    pub fn differing_paths(
        &self,
        tree: &str,
        paths: &[String],
        dir: &Path,
    ) -> Result<Vec<String>, StoreError> {
        use std::os::unix::fs::PermissionsExt as _;
        let mut out = Vec::new();
        for path in paths {
            let full = dir.join(path);
            let on_disk = std::fs::symlink_metadata(&full).ok();
            let same = match (self.tree_entry(tree, path)?, on_disk) {
                (None, None) => true,
                (None, Some(_)) | (Some(_), None) => false,
                (Some(entry), Some(meta)) => match entry.kind {
                    EntryType::Link => {
                        meta.file_type().is_symlink()
                            && std::fs::read_link(&full).ok().is_some_and(|target| {
                                let blob =
                                    self.repo().ok().and_then(|r| r.find_blob(entry.id).ok());
                                blob.is_some_and(|b| {
                                    b.data.as_slice() == target.as_os_str().as_encoded_bytes()
                                })
                            })
                    }
                    EntryType::File | EntryType::Executable => {
                        let executable = meta.permissions().mode() & 0o111 != 0;
                        meta.file_type().is_file()
                            && executable == (entry.kind == EntryType::Executable)
                            && std::fs::read(&full).ok().is_some_and(|bytes| {
                                gix::objs::compute_hash(
                                    self.repo.object_hash(),
                                    gix::objs::Kind::Blob,
                                    &bytes,
                                )
                                .ok()
                                    == Some(entry.id)
                            })
                    }
                    // A directory or a submodule named as a path: compare it whole elsewhere.
                    EntryType::Directory | EntryType::Submodule => false,
                },
            };
            if !same {
                out.push(path.clone());
            }
        }
        Ok(out)
    }
}

fn write_file(path: &Path, data: &[u8], executable: bool) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, data).map_err(|e| io_err("write", path, e))?;
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| io_err("set the mode of", path, e))
}

fn make_link(path: &Path, target: &[u8]) -> Result<(), StoreError> {
    use std::os::unix::ffi::OsStrExt as _;
    let target = PathBuf::from(std::ffi::OsStr::from_bytes(target));
    std::os::unix::fs::symlink(&target, path).map_err(|e| io_err("create the link", path, e))
}

/// Removes whatever is at `path` (file, link or directory); nothing there is fine.
fn remove_any(path: &Path) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(meta) if meta.is_dir() => {
            std::fs::remove_dir_all(path).map_err(|e| io_err("remove", path, e))
        }
        Ok(_) => std::fs::remove_file(path).map_err(|e| io_err("remove", path, e)),
    }
}

/// Refuses to write `path` under `dir` when a directory on the way is a symbolic link: the
/// write would land outside `dir`.
fn ensure_no_link_above(dir: &Path, path: &str) -> Result<(), StoreError> {
    let mut here = dir.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        here.push(part);
        if std::fs::symlink_metadata(&here).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io_err(
                "write beneath the symbolic link",
                &here,
                std::io::Error::other("a path is never written through a link"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;
    use pretty_assertions::assert_eq;

    /// The in-process diff lists what `git diff-tree -r --name-only` lists: changed,
    /// added and removed files, a file turned into a directory and back, a mode change, a
    /// link, nested directories.
    #[test]
    fn changed_paths_are_what_git_diff_tree_lists() {
        use std::os::unix::fs::PermissionsExt as _;
        let repo = tempfile::tempdir().unwrap();
        let d = repo.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        let write = |path: &str, text: &str| {
            let full = d.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("a.txt", "a\n");
        write("dir/x", "x\n");
        write("dir/deep/y", "y\n");
        write("f", "file\n");
        write("same/z", "z\n");
        write("run.sh", "true\n");
        git(d, &["add", "--all"]);
        git(d, &["commit", "--quiet", "-m", "one"]);
        let one = git(d, &["rev-parse", "HEAD^{tree}"]);
        write("a.txt", "A\n");
        std::fs::remove_file(d.join("dir/deep/y")).unwrap();
        write("dir/deep/w", "w\n");
        std::fs::remove_file(d.join("f")).unwrap();
        write("f/inside", "now a directory\n");
        std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
        write("a-b", "sorts before a/\n");
        git(d, &["add", "--all"]);
        git(d, &["commit", "--quiet", "-m", "two"]);
        let two = git(d, &["rev-parse", "HEAD^{tree}"]);
        let store = Store::discover(d, "main").unwrap();
        for (a, b) in [(&one, &two), (&two, &one), (&one, &one)] {
            let mut expected: Vec<String> = git(d, &["diff-tree", "-r", "--name-only", a, b])
                .lines()
                .map(str::to_string)
                .collect();
            expected.sort();
            assert_eq!(store.changed_paths(a, b).unwrap(), expected);
        }
        assert_eq!(store.tree_of("HEAD").unwrap(), two);
        assert_eq!(store.tree_of("main").unwrap(), two);
        let first = git(d, &["rev-parse", "HEAD~1"]);
        assert_eq!(store.tree_of(&first).unwrap(), one);
    }

    #[test]
    fn a_tree_is_written_as_stored_without_its_filters_and_paths_are_put_back() {
        let repo = tempfile::tempdir().unwrap();
        let d = repo.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        std::fs::create_dir_all(d.join("tests/data")).unwrap();
        std::fs::write(d.join("calc.sh"), "add() { echo $(($1+$2)); }\n").unwrap();
        std::fs::write(d.join("tests/test_add.sh"), "test \"$(add 2 3)\" = 5\n").unwrap();
        std::fs::write(d.join("tests/data/x"), "x\n").unwrap();
        std::os::unix::fs::symlink("../calc.sh", d.join("tests/calc.sh")).unwrap();
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(d.join("calc.sh"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        // A clean filter that would rewrite what is stored: export reads objects, not files.
        git(d, &["config", "filter.rot.smudge", "tr a-z b-za"]);
        std::fs::write(d.join(".gitattributes"), "*.sh filter=rot\n").unwrap();
        git(d, &["add", "--all"]);
        git(d, &["commit", "--quiet", "-m", "one"]);
        let tree = git(d, &["rev-parse", "HEAD^{tree}"]);
        let store = Store::discover(d, "main").unwrap();
        let out = tempfile::tempdir().unwrap();
        assert_eq!(
            store.export_tree(&tree, out.path()).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            std::fs::read_to_string(out.path().join("tests/test_add.sh")).unwrap(),
            "test \"$(add 2 3)\" = 5\n"
        );
        assert_eq!(
            std::fs::read_link(out.path().join("tests/calc.sh")).unwrap(),
            Path::new("../calc.sh")
        );
        let exported_tree = |dir: &Path| {
            git(dir, &["init", "--quiet"]);
            git(dir, &["-c", "core.autocrlf=false", "add", "--all", "."]);
            git(dir, &["write-tree"])
        };
        let copy = tempfile::tempdir().unwrap();
        store.export_tree(&tree, copy.path()).unwrap();
        // The same files make the same tree (without the filter git-add would apply: none here).
        assert_eq!(exported_tree(copy.path()), tree);

        // Nothing differs from the tree it was written from; an edit, a chmod, a removal do.
        let paths: Vec<String> = ["calc.sh", "tests/test_add.sh", "tests/calc.sh", "gone"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            store.differing_paths(&tree, &paths, out.path()).unwrap(),
            Vec::<String>::new()
        );
        std::fs::write(out.path().join("tests/test_add.sh"), "exit 0\n").unwrap();
        std::fs::remove_file(out.path().join("tests/calc.sh")).unwrap();
        std::fs::write(out.path().join("gone"), "").unwrap();
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(
                out.path().join("calc.sh"),
                std::fs::Permissions::from_mode(0o644),
            )
            .unwrap();
        }
        assert_eq!(
            store.differing_paths(&tree, &paths, out.path()).unwrap(),
            paths
        );
        store.put_paths(&tree, &paths, out.path()).unwrap();
        assert_eq!(
            store.differing_paths(&tree, &paths, out.path()).unwrap(),
            Vec::<String>::new()
        );
        assert!(!out.path().join("gone").exists());
    }

    #[test]
    fn crafted_entry_names_are_refused() {
        for name in ["..", ".git", ".GIT", "", "a/b"] {
            assert!(!safe_name(name.as_bytes()), "{name}");
        }
        assert!(safe_name(b".gitignore"));
        assert!(!safe_path("tests/../../x"));
        assert!(safe_path("tests/x.sh"));
    }
}
