//! The tree of an index file, written in-process: what `git write-tree` makes of the scratch
//! index `git add --all` has just written, for the forms of index git writes; any other form
//! is left to git itself. One git process less on every call that takes the working tree's
//! tree (a step's passing test, a checkpoint), and one index file not renamed over another
//! (ext4 flushes such a rename: src/store/files.rs).

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;
use gix::objs::tree::{Entry, EntryKind};

use super::{Store, StoreError, git_err};

/// Beyond this size an index is left to git: read whole into memory here.
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// One file of the index: its path, kind and object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct IndexEntry {
    pub(super) path: Vec<u8>,
    pub(super) kind: EntryKind,
    pub(super) id: ObjectId,
    /// What the index holds of the file's `lstat` when it was last added (ctime s/ns, mtime
    /// s/ns, dev, ino, mode, uid, gid, size), as git writes them: 32 bits each.
    pub(super) stat: [u32; 10],
    /// Not to be compared with the working tree: assumed unchanged or outside a sparse
    /// checkout (git's `CE_VALID` and `CE_SKIP_WORKTREE`).
    pub(super) not_compared: bool,
}

/// The index's entries, sorted as git sorts them, and the trees its cache (git's `TREE`
/// extension) holds as valid, by directory (`""` the root, else `a/b/`), each with the
/// number of entries it covers.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) entries: Vec<IndexEntry>,
    pub(super) cached: HashMap<Vec<u8>, (usize, ObjectId)>,
}

impl Store {
    /// The id of the tree `git write-tree` would write for the index file at `path`, its
    /// trees written to the object database; `None` where this reader leaves the index to
    /// git: a form it does not read (a split or sparse index, a conflict, an entry only
    /// intended to be added, a SHA-256 repository, a path git would refuse, a blob the
    /// objects lack), or a file that is not a regular file of a sane size.
    pub fn tree_of_index(&self, path: &Path) -> Result<Option<ObjectId>, StoreError> {
        let repo = self.repo()?;
        if repo.object_hash() != gix::hash::Kind::Sha1 {
            return Ok(None);
        }
        let Some(bytes) = read_regular(path) else {
            return Ok(None);
        };
        let Some(parsed) = parse(&bytes, gix::hash::Kind::Sha1.len_in_bytes()) else {
            return Ok(None);
        };
        let mut write = |tree: gix::objs::Tree| -> Result<ObjectId, StoreError> {
            Ok(repo.write_object(&tree).map_err(git_err)?.detach())
        };
        let has_object = |id: &ObjectId| repo.has_object(id);
        build(&parsed, &mut write, &has_object)
    }
}

/// The file at `path` whole, where it is a regular file (a link not followed, a FIFO not
/// waited on) of at most [`MAX_INDEX_BYTES`].
pub(super) fn read_regular(path: &Path) -> Option<Vec<u8>> {
    read_regular_within(path, MAX_INDEX_BYTES)
}

/// The file at `path` whole, where it is a regular file (a link not followed, a FIFO not
/// waited on) of at most `cap` bytes.
pub(super) fn read_regular_within(path: &Path, cap: u64) -> Option<Vec<u8>> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read as _;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > cap {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
    file.take(cap + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

/// Reads big-endian numbers and byte runs off the front of a slice; `None` past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// Up to the next NUL, which is passed over.
    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|b| *b == 0)?;
        self.at += len + 1;
        rest.get(..len)
    }

    /// git's offset varint of index version 4 (read-cache.c's `decode_varint`).
    fn varint(&mut self) -> Option<usize> {
        let mut byte = *self.take(1)?.first()?;
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = *self.take(1)?.first()?;
            value = value
                .checked_add(1)?
                .checked_mul(128)?
                .checked_add(usize::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

/// The bytes of an index file (git's `gitformat-index`, versions 2 to 4) read as far as
/// [`build`] needs them; `None` for any form left to git.
pub(super) fn parse(bytes: &[u8], hash_len: usize) -> Option<Parsed> {
    parse_as(bytes, hash_len, false)
}

/// The paths of an index [`parse`] leaves to git where only they are asked (which
/// directories have tracked files, which paths are submodules): conflict stages (one entry
/// a path), intent-to-add and skipped entries, and any mode are taken; the cache tree is not
/// read. `None` still for an index whose entries are not all in this file (a split index).
pub(super) fn parse_paths(bytes: &[u8], hash_len: usize) -> Option<Parsed> {
    parse_as(bytes, hash_len, true)
}

fn parse_as(bytes: &[u8], hash_len: usize, paths_only: bool) -> Option<Parsed> {
    // The trailing checksum is not checked: git has just written the file, and what its
    // bytes say is read as git reads it either way.
    let body = bytes.get(..bytes.len().checked_sub(hash_len)?)?;
    let mut cursor = Cursor { bytes: body, at: 0 };
    if cursor.take(4)? != b"DIRC" {
        return None;
    }
    let version = cursor.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(cursor.u32()?).ok()?;
    // Each entry takes at least this many bytes: a count the file cannot hold is refused
    // before anything is reserved for it.
    let smallest = 40 + hash_len + 2 + 1;
    if count > body.len() / smallest {
        return None;
    }
    let mut entries: Vec<IndexEntry> = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = cursor.at;
        let stat = cursor.take(40)?;
        let mode = u32::from_be_bytes(stat.get(24..28)?.try_into().ok()?);
        let id = ObjectId::try_from(cursor.take(hash_len)?).ok()?;
        let flags = cursor.u16()?;
        let stage = (flags >> 12) & 0x3;
        let extended = flags & 0x4000 != 0;
        let mut not_compared = flags & 0x8000 != 0;
        if stage != 0 && !paths_only {
            return None;
        }
        if extended {
            if version < 3 {
                return None;
            }
            let more = cursor.u16()?;
            // Intent to add (left out of the tree by git), and the bits git does not define.
            if (more & 0x2000 != 0 || more & 0x9fff != 0) && !paths_only {
                return None;
            }
            not_compared |= more & 0x4000 != 0;
        }
        let path = if version == 4 {
            let strip = cursor.varint()?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous.get(..keep)?.to_vec();
            path.extend_from_slice(cursor.until_nul()?);
            path
        } else {
            let path = cursor.until_nul()?.to_vec();
            // The entry is padded with NULs to a multiple of eight bytes (read-cache.c's
            // `ondisk_ce_size`), the one read above included.
            let fixed = cursor.at - start - path.len() - 1;
            let size = (fixed + path.len() + 8) & !7;
            cursor.at = start.checked_add(size)?;
            if cursor.at > body.len() {
                return None;
            }
            path
        };
        let name_len = usize::from(flags & 0x0fff);
        if name_len != path.len().min(0x0fff) {
            return None;
        }
        let kind = match mode {
            0o100644 => EntryKind::Blob,
            0o100755 => EntryKind::BlobExecutable,
            0o120000 => EntryKind::Link,
            0o160000 => EntryKind::Commit,
            // A sparse index's directory, or a mode git never writes.
            _ if paths_only => EntryKind::Blob,
            _ => return None,
        };
        if paths_only {
            if path < previous && !entries.is_empty() {
                return None;
            }
            // The conflict's other stages.
            if path == previous && !entries.is_empty() {
                continue;
            }
        } else if !plain_path(&path) || path <= previous && !entries.is_empty() {
            return None;
        }
        previous.clone_from(&path);
        let mut fields = [0u32; 10];
        for (i, field) in fields.iter_mut().enumerate() {
            *field = u32::from_be_bytes(stat.get(i * 4..i * 4 + 4)?.try_into().ok()?);
        }
        entries.push(IndexEntry {
            path,
            kind,
            id,
            stat: fields,
            not_compared,
        });
    }
    let mut cached = HashMap::new();
    while cursor.at < body.len() {
        let signature = cursor.take(4)?;
        let size = usize::try_from(cursor.u32()?).ok()?;
        let data = cursor.take(size)?;
        // An extension whose signature does not begin with a capital letter must be
        // understood to read the index (a split index's `link`, a sparse one's `sdir`).
        if !signature.first()?.is_ascii_uppercase() {
            return None;
        }
        if signature == b"TREE" && !paths_only {
            let mut tree = Cursor { bytes: data, at: 0 };
            cache_tree(&mut tree, &[], hash_len, &mut cached, 0)?;
            if tree.at != data.len() {
                return None;
            }
        }
    }
    Some(Parsed { entries, cached })
}

/// One node of git's cache tree and the nodes below it (cache-tree.c's `read_one`): its
/// name, the number of entries it covers (`-1`: not valid), the number of subtrees, then
/// the tree's id where valid, then the subtrees.
fn cache_tree(
    cursor: &mut Cursor<'_>,
    parent: &[u8],
    hash_len: usize,
    cached: &mut HashMap<Vec<u8>, (usize, ObjectId)>,
    depth: usize,
) -> Option<()> {
    // Deeper than any path git can write: a hostile file does not exhaust the stack.
    if depth > 4096 {
        return None;
    }
    let name = cursor.until_nul()?;
    let rest = cursor.bytes.get(cursor.at..)?;
    let line_len = rest.iter().position(|b| *b == b'\n')?;
    let line = std::str::from_utf8(cursor.take(line_len + 1)?.get(..line_len)?).ok()?;
    let (entries, subtrees) = line.split_once(' ')?;
    let entries: i64 = entries.parse().ok()?;
    let subtrees: usize = subtrees.parse().ok()?;
    let mut dir = parent.to_vec();
    if depth > 0 {
        dir.extend_from_slice(name);
        dir.push(b'/');
    } else if !name.is_empty() {
        return None;
    }
    if entries >= 0 {
        let id = ObjectId::try_from(cursor.take(hash_len)?).ok()?;
        cached.insert(dir.clone(), (usize::try_from(entries).ok()?, id));
    }
    for _ in 0..subtrees {
        cache_tree(cursor, &dir, hash_len, cached, depth + 1)?;
    }
    Some(())
}

/// A path git itself would put in a tree: relative, no empty, `.`, `..` or `.git`
/// component (read-cache.c's `verify_path`, the parts any file system shares).
pub(super) fn plain_path(path: &[u8]) -> bool {
    !path.is_empty()
        && path.split(|b| *b == b'/').all(|part| {
            !part.is_empty() && part != b"." && part != b".." && !part.eq_ignore_ascii_case(b".git")
        })
}

/// The root tree of `parsed`, each tree not held valid by the cache (or not in the objects)
/// written with `write`;
/// `None` where a blob it names is not in the objects (`git write-tree` then fails, saying
/// so, which the caller leaves to it).
pub(super) fn build(
    parsed: &Parsed,
    write: &mut impl FnMut(gix::objs::Tree) -> Result<ObjectId, StoreError>,
    has_object: &impl Fn(&ObjectId) -> bool,
) -> Result<Option<ObjectId>, StoreError> {
    build_dir(parsed, b"", &parsed.entries, write, has_object)
}

fn build_dir(
    parsed: &Parsed,
    dir: &[u8],
    entries: &[IndexEntry],
    write: &mut impl FnMut(gix::objs::Tree) -> Result<ObjectId, StoreError>,
    has_object: &impl Fn(&ObjectId) -> bool,
) -> Result<Option<ObjectId>, StoreError> {
    // A valid cached tree stands for exactly the entries it covers, as git takes it where
    // the objects hold it (cache-tree.c's `update_one`); else it is written again.
    if let Some((count, id)) = parsed.cached.get(dir)
        && *count == entries.len()
        && has_object(id)
    {
        return Ok(Some(*id));
    }
    let mut tree = Vec::new();
    let mut at = 0;
    while let Some(entry) = entries.get(at) {
        let Some(rest) = entry.path.get(dir.len()..) else {
            return Ok(None);
        };
        match rest.iter().position(|b| *b == b'/') {
            None => {
                if entry.kind != EntryKind::Commit && !has_object(&entry.id) {
                    return Ok(None);
                }
                tree.push(Entry {
                    mode: entry.kind.into(),
                    filename: rest.into(),
                    oid: entry.id,
                });
                at += 1;
            }
            Some(slash) => {
                let name = rest.get(..slash).unwrap_or_default();
                // A file of the same name as this directory (`a` and `a/b`): git refuses
                // such an index. Only names that begin with this one sort between the two.
                let file_too = tree
                    .iter()
                    .rev()
                    .take_while(|e: &&Entry| e.filename.starts_with(name))
                    .any(|e| e.filename == name);
                if file_too {
                    return Ok(None);
                }
                let mut sub = dir.to_vec();
                sub.extend_from_slice(rest.get(..=slash).unwrap_or_default());
                // The entries below `sub` follow one another in git's order.
                let len = entries
                    .get(at..)
                    .unwrap_or_default()
                    .iter()
                    .take_while(|e| e.path.starts_with(&sub))
                    .count();
                let below = entries.get(at..at + len).unwrap_or_default();
                let Some(id) = build_dir(parsed, &sub, below, write, has_object)? else {
                    return Ok(None);
                };
                tree.push(Entry {
                    mode: EntryKind::Tree.into(),
                    filename: name.into(),
                    oid: id,
                });
                at += len;
            }
        }
    }
    // Entries in the index's order are in a tree's order: a directory's entries sort as
    // its name and a `/`.
    write(gix::objs::Tree { entries: tree }).map(Some)
}

#[cfg(test)]
mod tests;
