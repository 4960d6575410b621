//! Writing one transition's loose objects with one zlib state: the hot path of every write;
//! and reading the workflow's own objects with one, the hot path of every read.
//!
//! gix builds a fresh deflate state (about 380 KB, zeroed) for every object it writes; a
//! transition writes three to five objects, and the page faults of those allocations were a
//! tenth of a failing submit-work (`perf record -e page-faults`, docs/architecture.md). The
//! format is git's own and has not changed since 2005: `<kind> <size>\0<data>`, deflated, in
//! `objects/xx/yyyy…`, published by renaming a finished temporary file, as gix and git do.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex, PoisonError};

use gix::ObjectId;
use gix::zlib::stream::deflate::{Compress, FlushCompress};
use gix::zlib::{Compression, Decompress, FlushDecompress, Status};

use super::StoreError;

pub(super) struct LooseWriter {
    dir: PathBuf,
    hash: gix::hash::Kind,
    compress: Option<Compress>,
    out: Vec<u8>,
}

impl LooseWriter {
    #[cfg(test)]
    pub(super) fn new(repo: &gix::Repository) -> LooseWriter {
        LooseWriter::at(
            repo.objects.store_ref().path().to_path_buf(),
            repo.object_hash(),
        )
    }

    /// The writer of loose objects of `hash` under `dir` (a repository's `objects`).
    pub(super) fn at(dir: PathBuf, hash: gix::hash::Kind) -> LooseWriter {
        LooseWriter {
            dir,
            hash,
            compress: None,
            out: Vec::new(),
        }
    }

    /// Writes `data` as an object of `kind` unless it is stored loose already; returns its id.
    pub(super) fn write(
        &mut self,
        kind: gix::objs::Kind,
        data: &[u8],
    ) -> Result<ObjectId, StoreError> {
        let id = gix::objs::compute_hash(self.hash, kind, data).map_err(objects_err)?;
        let path = object_path(&self.dir, &id);
        if path.exists() {
            return Ok(id);
        }
        let header = gix::objs::encode::loose_header(kind, data.len() as u64);
        self.deflate(&[&header, data])?;
        let mut file = temporary_object(&self.dir)?;
        file.write_all(&self.out)
            .map_err(|e| io_err("write a temporary object file in", &self.dir, e))?;
        if let Some(fan_out) = path.parent()
            && let Err(e) = std::fs::create_dir(fan_out)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err(io_err("create the object directory", fan_out, e));
        }
        file.persist(&path)
            .map_err(|e| io_err("publish the object", &path, e.error))?;
        Ok(id)
    }

    /// Writes a tree or a commit.
    pub(super) fn write_object(
        &mut self,
        object: &impl gix::objs::WriteTo,
    ) -> Result<ObjectId, StoreError> {
        let mut data = Vec::with_capacity(object.size() as usize);
        object
            .write_to(&mut data)
            .map_err(|e| io_err("encode an object for", &self.dir, e))?;
        self.write(object.kind(), &data)
    }

    /// Objects up to this size are written in zlib's stored blocks, uncompressed, as git
    /// writes every loose object under `core.looseCompression = 0`. Making a deflate state
    /// cost about 900,000 instructions and resetting it 700,000 (zlib-rs zeroes its tables
    /// each time: callgrind of a `submit-work`, docs/architecture.md), more than half of a
    /// whole call, to save a few hundred bytes on a state file that `git gc` packs anyway.
    const STORED_MAX: usize = 256 << 10;

    /// `parts`, one zlib stream, into `self.out`: stored blocks up to [`Self::STORED_MAX`],
    /// deflated above it.
    fn deflate(&mut self, parts: &[&[u8]]) -> Result<(), StoreError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if len <= Self::STORED_MAX {
            stored(parts, len, &mut self.out);
            return Ok(());
        }
        let compress = match &mut self.compress {
            Some(compress) => {
                compress.reset();
                compress
            }
            None => self.compress.insert(Compress::new(Compression::BEST_SPEED)),
        };
        let len: usize = parts.iter().map(|p| p.len()).sum();
        // zlib's compressBound: enough that one call finishes the stream.
        self.out.clear();
        self.out
            .resize(len + (len >> 12) + (len >> 14) + (len >> 25) + 64, 0);
        let mut written = 0;
        for (i, part) in parts.iter().enumerate() {
            let flush = if i + 1 == parts.len() {
                FlushCompress::Finish
            } else {
                FlushCompress::None
            };
            let mut input: &[u8] = part;
            loop {
                let (before_in, before_out) = (compress.total_in(), compress.total_out());
                let status = compress
                    .compress(input, &mut self.out[written..], flush)
                    .map_err(|e| StoreError::Internal(format!("deflating an object: {e}")))?;
                let consumed = (compress.total_in() - before_in) as usize;
                written += (compress.total_out() - before_out) as usize;
                input = &input[consumed..];
                let finished = match flush {
                    FlushCompress::Finish => status == Status::StreamEnd,
                    _ => input.is_empty(),
                };
                if finished {
                    break;
                }
                if written == self.out.len() {
                    self.out.resize(self.out.len() * 2, 0);
                } else if consumed == 0 && status == Status::BufError {
                    return Err(StoreError::Internal(
                        "deflating an object made no progress".into(),
                    ));
                }
            }
        }
        self.out.truncate(written);
        Ok(())
    }
}

/// `parts` (`len` bytes in all) as one zlib stream of stored blocks (RFC 1950, RFC 1951
/// §3.2.4), into `out`: a header that says "deflate, no dictionary", blocks of at most 65,535
/// bytes each led by its length and the length's complement, and the Adler-32 of the data.
fn stored(parts: &[&[u8]], len: usize, out: &mut Vec<u8>) {
    const BLOCK: usize = 65_535;
    out.clear();
    out.reserve(len + 2 + 5 * (len / BLOCK + 1) + 4);
    out.extend_from_slice(&[0x78, 0x01]);
    let mut adler = Adler32::default();
    let (mut left, mut in_block) = (len, 0);
    let block_header = |out: &mut Vec<u8>, left: &mut usize| -> usize {
        let size = (*left).min(BLOCK);
        *left -= size;
        out.push(u8::from(*left == 0));
        let size16 = size as u16;
        out.extend_from_slice(&size16.to_le_bytes());
        out.extend_from_slice(&(!size16).to_le_bytes());
        size
    };
    if len == 0 {
        block_header(out, &mut left);
    }
    for part in parts {
        let mut rest: &[u8] = part;
        while !rest.is_empty() {
            if in_block == 0 {
                in_block = block_header(out, &mut left);
            }
            let (now, later) = rest.split_at(in_block.min(rest.len()));
            out.extend_from_slice(now);
            adler.update(now);
            in_block -= now.len();
            rest = later;
        }
    }
    out.extend_from_slice(&adler.value().to_be_bytes());
}

/// The Adler-32 checksum that ends a zlib stream (RFC 1950 §9).
struct Adler32 {
    a: u32,
    b: u32,
}

impl Default for Adler32 {
    fn default() -> Self {
        Adler32 { a: 1, b: 0 }
    }
}

impl Adler32 {
    const MOD: u32 = 65_521;
    /// The most bytes summed before `b` could overflow a u32 (zlib's NMAX).
    const RUN: usize = 5_552;

    fn update(&mut self, data: &[u8]) {
        for run in data.chunks(Self::RUN) {
            for &byte in run {
                self.a += u32::from(byte);
                self.b += self.a;
            }
            self.a %= Self::MOD;
            self.b %= Self::MOD;
        }
    }

    fn value(&self) -> u32 {
        (self.b << 16) | self.a
    }
}

/// Reads loose objects with one inflate state for the store's life. gix makes a new one for
/// every loose object it reads, and zeroing those was 7 % of a `get-task`'s instructions
/// (docs/architecture.md, "Performance"): the workflow's tip, its tree and its state are
/// read on every call. What it read is kept ([`Self::KEPT`] objects, [`Self::KEPT_BYTES`] at
/// most), as gix's object cache would have kept it, for a long-lived server's next call.
pub(super) struct LooseReader {
    dir: PathBuf,
    /// `dir` opened once, the first time an object is read: each object is then opened from
    /// it (`regular::read_at`); `None` when it cannot be opened (each is opened by its path).
    dir_fd: std::sync::OnceLock<Option<rustix::fd::OwnedFd>>,
    inflate: Mutex<Inflating>,
    kept: Mutex<Vec<(ObjectId, Found)>>,
}

/// The inflate state, the buffer a file is read into and the one it inflates into, all kept
/// from object to object: a fresh zeroed buffer four times each file's size, then the
/// object copied out of it past its header, were a third of what the board's hundreds of
/// reads spent in the allocator.
#[derive(Default)]
struct Inflating {
    state: Option<Decompress>,
    out: Vec<u8>,
    input: Vec<u8>,
}

/// An object's kind and bytes, shared with what [`LooseReader`] keeps.
pub(super) type Found = (gix::objs::Kind, Arc<[u8]>);

impl LooseReader {
    const KEPT: usize = 16;
    const KEPT_BYTES: usize = 256 << 10;

    #[cfg(test)]
    pub(super) fn new(repo: &gix::Repository) -> LooseReader {
        LooseReader::at(repo.objects.store_ref().path().to_path_buf())
    }

    /// The reader of the loose objects under `dir` (a repository's `objects`).
    pub(super) fn at(dir: PathBuf) -> LooseReader {
        LooseReader {
            dir,
            dir_fd: std::sync::OnceLock::new(),
            inflate: Mutex::new(Inflating::default()),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The fan-out directories under the objects directory now, a bit each ([`FanOuts`]).
    pub(super) fn fan_outs(&self) -> FanOuts {
        FanOuts(fan_outs(&self.dir))
    }

    /// True when object `id` is stored loose here.
    pub(super) fn holds(&self, id: &gix::oid) -> bool {
        object_path(&self.dir, id).is_file()
    }

    /// True when the loose objects are all there is: no pack, no alternate object store.
    pub(super) fn alone(&self) -> bool {
        let alternates = self.dir.join("info/alternates");
        let packs = std::fs::read_dir(self.dir.join("pack"));
        matches!(std::fs::symlink_metadata(&alternates), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
            && match packs {
                Ok(mut entries) => !entries.any(|e| {
                    e.map_or(true, |e| {
                        e.file_name().as_encoded_bytes().ends_with(b".pack")
                    })
                }),
                Err(e) => e.kind() == std::io::ErrorKind::NotFound,
            }
    }

    /// Object `id`, its kind and bytes, when it is stored loose in this repository; `None`
    /// when it is not (packed, or in an alternate: gix reads those). An error when its file
    /// is not an object: not a zlib stream, cut short, or not the size its header says.
    pub(super) fn read(&self, id: &gix::oid) -> Result<Option<Found>, String> {
        {
            let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((_, (kind, data))) = kept.iter().find(|(k, _)| k.as_ref() == id) {
                return Ok(Some((*kind, Arc::clone(data))));
            }
        }
        let hex = id.to_hex().to_string();
        let (fan_out, rest) = hex.split_at(2);
        let path = || self.dir.join(fan_out).join(rest);
        let dir_fd = self.dir_fd.get_or_init(|| {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            rustix::fs::open(&self.dir, flags, Mode::empty()).ok()
        });
        let mut inflating = self.inflate.lock().unwrap_or_else(PoisonError::into_inner);
        let Inflating { state, out, input } = &mut *inflating;
        let read = match dir_fd {
            Some(fd) => {
                use rustix::fd::AsFd as _;
                // `xx/yyyy…`: made from the id, not cut from a path.
                let relative = format!("{fan_out}/{rest}");
                super::regular::read_at(fd.as_fd(), relative.as_str(), path, input)
            }
            None => super::regular::read(&path()).map(|bytes| *input = bytes),
        };
        match read {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path().display())),
        }
        let found = inflate(state, out, input, path);
        // Whatever came of it: an object that inflates to too much is not held for the reader's
        // life (a long-lived server's).
        if input.capacity() > KEEP_BUFFER {
            *input = Vec::new();
        }
        if out.len() > KEEP_BUFFER {
            *out = Vec::new();
        }
        drop(inflating);
        let (kind, data) = found?;
        if data.len() <= Self::KEPT_BYTES {
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            // The oldest go first, until the new one fits both bounds.
            while kept.len() >= Self::KEPT
                || kept.iter().map(|(_, (_, d))| d.len()).sum::<usize>() + data.len()
                    > Self::KEPT_BYTES
            {
                kept.remove(0);
            }
            kept.push((id.to_owned(), (kind, Arc::clone(&data))));
        }
        Ok(Some((kind, data)))
    }

    /// Object `id`'s kind and size, read off the first page of its loose file: the object's
    /// header is the first bytes of its zlib stream, and a size is all `blob_within` asks
    /// before it reads (gix opened the whole repository to answer it, a tenth of a plain
    /// repository's board). `None` when the object is not loose here, or when that page does
    /// not inflate as far as a whole header (gix decides then); an error when its file is no
    /// regular file, or no zlib stream.
    pub(super) fn header(&self, id: &gix::oid) -> Result<Option<(gix::objs::Kind, u64)>, String> {
        use std::io::Read as _;
        let path = object_path(&self.dir, id);
        // Refused at once if it is no regular file: a FIFO there would hold an open, and a
        // device would read on.
        let mut file = match super::regular::open(&path, std::fs::OpenOptions::new().read(true)) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let mut page = [0u8; 4096];
        let read = loop {
            match file.read(&mut page) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        }
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // The reader's own inflate state, as `read` takes it: a fresh one is a zlib state
        // allocated and set up for 32 bytes.
        let mut inflating = self.inflate.lock().unwrap_or_else(PoisonError::into_inner);
        let inflate = match &mut inflating.state {
            Some(inflate) => {
                inflate.reset();
                inflate
            }
            state @ None => state.insert(Decompress::new()),
        };
        // A header is `<kind> <size>\0`: 6 + 1 + 20 + 1 bytes at the most.
        let mut out = [0u8; 32];
        let before = inflate.total_out();
        // Partial input is no error: the stream goes on past the page.
        let _ = inflate
            .decompress(&page[..read], &mut out, FlushDecompress::None)
            .map_err(|e| {
                format!(
                    "{}: a loose object is not a zlib stream: {e}",
                    path.display()
                )
            })?;
        let written = usize::try_from(inflate.total_out() - before).unwrap_or(0);
        drop(inflating);
        match gix::objs::decode::loose_header(&out[..written]) {
            Ok((kind, size, _)) => Ok(Some((kind, size))),
            // Cut short by the page or by `out`: gix reads it whole.
            Err(_) if !out[..written].contains(&0) => Ok(None),
            Err(e) => Err(format!("{} has no object header: {e}", path.display())),
        }
    }
}

/// The fan-out directories under `objects`, a bit for each (`xx` read as a byte); every bit
/// set when the directory cannot be listed, so that nothing is skipped.
fn fan_outs(objects: &Path) -> [u64; 4] {
    let Ok(entries) = std::fs::read_dir(objects) else {
        return [u64::MAX; 4];
    };
    let mut there = [0u64; 4];
    for entry in entries {
        let Ok(entry) = entry else {
            return [u64::MAX; 4];
        };
        let name = entry.file_name();
        if let [high, low] = name.as_encoded_bytes()
            && let (Some(high), Some(low)) = (hex_digit(*high), hex_digit(*low))
        {
            let byte = high * 16 + low;
            there[usize::from(byte / 64)] |= 1 << (byte % 64);
        }
    }
    there
}

/// A lower-case hexadecimal digit's value, as git names its fan-out directories.
fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// The most the reader keeps of a buffer between objects.
const KEEP_BUFFER: usize = 1 << 20;

/// `compressed`, one zlib stream, inflated whole with `state` into `out`: the object's kind
/// and bytes, which must be as many as its header says (`path` names it in errors).
fn inflate(
    state: &mut Option<Decompress>,
    out: &mut Vec<u8>,
    compressed: &[u8],
    path: impl Fn() -> PathBuf,
) -> Result<Found, String> {
    let inflate = match state {
        Some(inflate) => {
            inflate.reset();
            inflate
        }
        None => state.insert(Decompress::new()),
    };
    let wanted = compressed.len().saturating_mul(4).max(64);
    if out.len() < wanted {
        out.resize(wanted, 0);
    }
    let (mut input, mut written) = (compressed, 0);
    let found = loop {
        let (before_in, before_out) = (inflate.total_in(), inflate.total_out());
        let status = inflate
            .decompress(input, &mut out[written..], FlushDecompress::Finish)
            .map_err(|e| format!("a loose object is not a zlib stream: {e}"))?;
        let consumed = (inflate.total_in() - before_in) as usize;
        let produced = (inflate.total_out() - before_out) as usize;
        input = &input[consumed..];
        written += produced;
        if status == Status::StreamEnd {
            let object = &out[..written];
            let (kind, size, header) = gix::objs::decode::loose_header(object)
                .map_err(|e| format!("{} has no object header: {e}", path().display()))?;
            if size != (written - header) as u64 {
                return Err(format!(
                    "{} holds {} bytes where its header says {size}",
                    path().display(),
                    written - header
                ));
            }
            break (kind, Arc::from(&object[header..]));
        }
        if written == out.len() {
            out.resize(out.len().saturating_mul(2), 0);
        } else if consumed == 0 && produced == 0 {
            return Err("a loose object's zlib stream is cut short".into());
        }
    };
    Ok(found)
}

/// The objects a store made by `Store::with_pack_cache` (`mod.rs`) has read, by id: objects
/// never change under their id, so what is kept is never stale.
#[derive(Default)]
pub(super) struct Memo {
    objects: std::collections::HashMap<ObjectId, Found>,
    bytes: usize,
    /// The fan-out directories there were at the first object this store did not find
    /// loose: in a packed repository every object was first looked for as a file, some 250
    /// failed opens a board. An object under a directory that was not there is not looked
    /// for; one made since is only slower to find (gix finds it). Kept for one store's life
    /// only, one board: gix opens a loose file without refusing a FIFO, as `regular.rs`
    /// does, and an object skipped here goes to gix.
    fan_outs: Option<FanOuts>,
}

/// Which fan-out directories (`xx` of `objects/xx/yyyy…`) there are, one bit for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FanOuts([u64; 4]);

impl FanOuts {
    fn holds(self, id: &gix::oid) -> bool {
        let first = id.as_bytes()[0];
        self.0[usize::from(first / 64)] & (1 << (first % 64)) != 0
    }
}

impl Memo {
    /// What is kept at most: past it, objects are read again each time (`board --all` over
    /// ten thousand archived workflows would otherwise keep them all).
    pub(super) const BYTES: usize = 16 << 20;

    pub(super) fn get(&self, id: &ObjectId) -> Option<Found> {
        self.objects
            .get(id)
            .map(|(kind, data)| (*kind, Arc::clone(data)))
    }

    /// True when object `id` cannot be loose here: its fan-out directory was not there when
    /// the first object was not found loose.
    pub(super) fn not_loose(&self, id: &gix::oid) -> bool {
        self.fan_outs.is_some_and(|there| !there.holds(id))
    }

    /// An object was not found loose: the fan-out directories are listed (`list`), the first
    /// time.
    pub(super) fn missed(&mut self, list: impl FnOnce() -> FanOuts) {
        if self.fan_outs.is_none() {
            self.fan_outs = Some(list());
        }
    }

    pub(super) fn keep(&mut self, id: ObjectId, (kind, data): &Found) {
        if self.bytes + data.len() <= Self::BYTES {
            self.bytes += data.len();
            self.objects.insert(id, (*kind, Arc::clone(data)));
        }
    }
}

fn object_path(dir: &Path, id: &gix::oid) -> PathBuf {
    let hex = id.to_hex().to_string();
    dir.join(&hex[..2]).join(&hex[2..])
}

fn objects_err(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Objects {
        message: "hashing an object".into(),
        source: Box::new(e),
    }
}

/// A temporary file for a loose object, in the objects directory, named `tmp_obj_…` as git
/// names its own: one a killed write leaves behind is removed by `git prune` (and `git gc`).
fn temporary_object(dir: &Path) -> Result<tempfile::NamedTempFile, StoreError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("tmp_obj_");
    // Objects are immutable; git makes them read-only too.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o444));
    builder
        .tempfile_in(dir)
        .map_err(|e| io_err("create a temporary object file in", dir, e))
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Objects {
        message: format!("cannot {what} {}", path.display()),
        source: Box::new(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a write killed before it published its object leaves is git's to clean up.
    #[test]
    fn a_temporary_object_left_by_a_kill_is_removed_by_git_prune() {
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let objects = temp.path().join(".git/objects");
        let (_, left) = temporary_object(&objects).unwrap().keep().unwrap();
        let name = left.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("tmp_obj_"), "{name}");
        crate::test_git::git(temp.path(), &["prune", "--expire=now"]);
        assert!(!left.exists(), "git prune left {name}");
    }

    #[test]
    fn objects_written_here_read_back_through_gix_and_git() {
        let temp = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("git")
            .args(["init", "--quiet"])
            .arg(temp.path())
            .status()
            .unwrap();
        assert!(status.success());
        let repo = gix::open(temp.path()).unwrap();
        let mut writer = LooseWriter::new(&repo);
        // Big and incompressible enough to need more than one round of output.
        let big: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for data in [&b""[..], b"hello\n", &big] {
            let id = writer.write(gix::objs::Kind::Blob, data).unwrap();
            let expected =
                gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, data).unwrap();
            assert_eq!(id, expected);
            let fresh = gix::open(temp.path()).unwrap();
            assert_eq!(fresh.find_object(id).unwrap().data, data);
            let output = std::process::Command::new("git")
                .current_dir(temp.path())
                .args(["cat-file", "-p", &id.to_string()])
                .output()
                .unwrap();
            assert_eq!(output.stdout, data);
        }
        // Written twice: the second write finds it and leaves it alone.
        let id = writer.write(gix::objs::Kind::Blob, b"hello\n").unwrap();
        assert!(object_path(&writer.dir, &id).exists());
        let fsck = std::process::Command::new("git")
            .current_dir(temp.path())
            .args(["fsck", "--strict"])
            .output()
            .unwrap();
        assert!(fsck.status.success(), "{fsck:?}");
    }

    /// A repository with a commit, and in its working tree `big`: 300,000 bytes that do not
    /// compress (returned too), for objects larger than any buffer's first fill.
    fn repo_with_big_file() -> (tempfile::TempDir, Vec<u8>) {
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let big: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        std::fs::write(temp.path().join("big"), &big).unwrap();
        (temp, big)
    }

    /// What git wrote loose reads back as git has it, a second read from what was kept;
    /// what is packed is left to gix; a cut or mislabelled file is an error, not an object.
    #[test]
    fn the_reader_reads_what_git_wrote_and_refuses_a_damaged_object() {
        use crate::test_git::git;
        let (temp, big) = repo_with_big_file();
        let dir = temp.path();
        std::fs::write(dir.join("small"), "small\n").unwrap();
        let hash = |file: &str| git(dir, &["hash-object", "-w", file]).trim().to_string();
        let (big_id, small_id) = (hash("big"), hash("small"));
        let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        let repo = gix::open(dir).unwrap();
        let reader = LooseReader::new(&repo);
        let read = |id: &str| reader.read(&ObjectId::from_hex(id.as_bytes()).unwrap());
        for (id, data) in [(&big_id, &big[..]), (&small_id, b"small\n")] {
            let (kind, got) = read(id).unwrap().expect("loose");
            assert_eq!((kind, &got[..]), (gix::objs::Kind::Blob, data));
        }
        let (kind, commit) = read(&head).unwrap().expect("loose");
        assert_eq!(kind, gix::objs::Kind::Commit);
        assert_eq!(
            commit.to_vec(),
            format!("{}\n", git(dir, &["cat-file", "commit", &head]).trim_end()).into_bytes()
        );
        // Kept: read again with its file gone.
        let small_path = object_path(
            &reader.dir,
            &ObjectId::from_hex(small_id.as_bytes()).unwrap(),
        );
        let small_file = std::fs::read(&small_path).unwrap();
        std::fs::remove_file(&small_path).unwrap();
        assert!(read(&small_id).unwrap().is_some());

        // Packed, not loose: gix's to read.
        git(dir, &["gc", "--quiet", "--prune=now"]);
        let fresh = LooseReader::new(&gix::open(dir).unwrap());
        assert_eq!(
            fresh.read(&ObjectId::from_hex(big_id.as_bytes()).unwrap()),
            Ok(None)
        );

        // Cut short, or its header's size not its own.
        let big_path = object_path(&fresh.dir, &ObjectId::from_hex(big_id.as_bytes()).unwrap());
        let damaged = |bytes: &[u8]| {
            std::fs::create_dir_all(big_path.parent().unwrap()).unwrap();
            std::fs::write(&big_path, bytes).unwrap();
            LooseReader::new(&repo).read(&ObjectId::from_hex(big_id.as_bytes()).unwrap())
        };
        let mut writer = LooseWriter::new(&repo);
        writer.deflate(&[b"blob 300000\0", &big]).unwrap();
        let whole = writer.out.clone();
        assert!(
            damaged(&whole[..whole.len() / 2])
                .unwrap_err()
                .contains("cut short")
        );
        writer.deflate(&[b"blob 7\0", b"small\n"]).unwrap();
        let liar = writer.out.clone();
        assert!(damaged(&liar).unwrap_err().contains("header says 7"));
        assert!(damaged(&small_file[..0]).is_err());
    }

    /// A loose object's kind and size as gix reads them, off its file's first page: for
    /// objects git wrote (one bigger than the page, one stored by our writer in blocks);
    /// nothing for an object not loose; an error at once for a FIFO or garbage there.
    #[test]
    fn a_header_is_read_as_gix_reads_it_and_a_fifo_is_refused_at_once() {
        use crate::test_git::git;
        let (temp, big) = repo_with_big_file();
        let dir = temp.path();
        std::fs::write(dir.join("empty"), "").unwrap();
        let hash = |file: &str| git(dir, &["hash-object", "-w", file]).trim().to_string();
        let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        let tree = git(dir, &["rev-parse", "HEAD^{tree}"]).trim().to_string();
        let repo = gix::open(dir).unwrap();
        let mut writer = LooseWriter::new(&repo);
        let stored = writer
            .write(gix::objs::Kind::Blob, &big[..100_000])
            .unwrap()
            .to_string();
        let reader = LooseReader::new(&repo);
        let oid = |id: &str| ObjectId::from_hex(id.as_bytes()).unwrap();
        for id in [hash("big"), hash("empty"), head.clone(), tree, stored] {
            let header = repo.find_header(oid(&id)).unwrap();
            assert_eq!(
                reader.header(&oid(&id)),
                Ok(Some((header.kind(), header.size()))),
                "{id}"
            );
        }
        // Not loose: gix's to answer.
        let missing = "0123456789012345678901234567890123456789";
        assert_eq!(reader.header(&oid(missing)), Ok(None));

        // A FIFO where an object's file would be: refused, not waited on.
        let path = object_path(&reader.dir, &oid(missing));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let objects = reader.dir.clone();
        std::thread::spawn(move || {
            let _ = tx.send(LooseReader::at(objects).header(&oid(missing)));
        });
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a FIFO is refused at once, not waited on");
        assert!(answer.unwrap_err().contains("not a regular file"));
        std::fs::remove_file(&path).unwrap();

        // Not a zlib stream, or a stream with no header in it.
        std::fs::write(&path, b"not zlib at all").unwrap();
        assert!(
            reader
                .header(&oid(missing))
                .unwrap_err()
                .contains("not a zlib stream")
        );
        writer.deflate(&[b"blob\0 nonsense"]).unwrap();
        std::fs::write(&path, &writer.out).unwrap();
        assert!(
            reader
                .header(&oid(missing))
                .unwrap_err()
                .contains("no object header")
        );
    }

    /// The fan-out directories are listed as they are; a memo lists them at its first miss
    /// only, and after it skips an object only under a directory that was not there.
    #[test]
    fn a_memo_skips_only_objects_under_fan_outs_that_were_not_there() {
        use crate::test_git::git;
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let dir = temp.path();
        git(dir, &["gc", "--quiet", "--prune=now"]);
        let oid = |id: &str| ObjectId::from_hex(id.as_bytes()).unwrap();
        let reader = LooseReader::new(&gix::open(dir).unwrap());
        assert_eq!(
            reader.fan_outs(),
            FanOuts([0; 4]),
            "packed: no fan-out directory"
        );
        std::fs::write(dir.join("new"), "made\n").unwrap();
        let made = git(dir, &["hash-object", "-w", "new"]).trim().to_string();
        // `ff` is the last bit, `00` the first: both ends of the set.
        std::fs::create_dir_all(reader.dir.join("ff")).unwrap();
        std::fs::create_dir_all(reader.dir.join("00")).unwrap();
        // Not fan-outs: upper case, one character, three.
        for name in ["AB", "a", "abc"] {
            std::fs::create_dir_all(reader.dir.join(name)).unwrap();
        }
        let listed = reader.fan_outs();
        let first = |byte: &str| oid(&format!("{byte}{}", "0".repeat(38)));
        // "made\n" is blob c5f1b8e…
        assert!(made.starts_with("c5"));
        for (byte, there) in [
            ("c5", true),
            ("ff", true),
            ("00", true),
            ("ab", false),
            ("01", false),
        ] {
            assert_eq!(listed.holds(&first(byte)), there, "{byte}");
        }
        let bits: u32 = listed.0.iter().map(|w| w.count_ones()).sum();
        assert_eq!(bits, 3);

        let mut memo = Memo::default();
        assert!(
            !memo.not_loose(&first("ab")),
            "nothing skipped before a miss"
        );
        memo.missed(|| listed);
        memo.missed(|| panic!("listed once"));
        assert!(memo.not_loose(&first("ab")));
        assert!(!memo.not_loose(&oid(&made)));
    }

    /// The board's store (one with a memo) reads an object made loose after its list under
    /// a new fan-out directory all the same: through gix.
    #[test]
    fn the_boards_store_finds_an_object_made_after_its_list() {
        use crate::test_git::git;
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let dir = temp.path();
        git(dir, &["gc", "--quiet", "--prune=now"]);
        let head = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        let store = super::super::Store::open_isolated(dir, "default")
            .unwrap()
            .with_pack_cache();
        let oid = |id: &str| ObjectId::from_hex(id.as_bytes()).unwrap();
        assert_eq!(store.object(oid(&head)).unwrap().0, gix::objs::Kind::Commit);
        std::fs::write(dir.join("new"), "made after the list\n").unwrap();
        let made = git(dir, &["hash-object", "-w", "new"]).trim().to_string();
        assert!(store.memo.as_ref().unwrap().borrow().not_loose(&oid(&made)));
        let (kind, data) = store.object(oid(&made)).unwrap();
        assert_eq!(
            (kind, &data[..]),
            (gix::objs::Kind::Blob, &b"made after the list\n"[..])
        );
    }

    /// What the reader keeps stays within both its bounds, however the sizes come.
    #[test]
    fn what_the_reader_keeps_stays_within_its_bounds() {
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let dir = temp.path();
        let repo = gix::open(dir).unwrap();
        let mut writer = LooseWriter::new(&repo);
        let reader = LooseReader::new(&repo);
        let mut sizes = vec![16 << 10; 15];
        sizes.extend([200 << 10, 1, 256 << 10, 3]);
        for (i, size) in sizes.into_iter().enumerate() {
            let data: Vec<u8> = (0..size).map(|j| (i * 31 + j * 7) as u8).collect();
            let id = writer.write(gix::objs::Kind::Blob, &data).unwrap();
            assert_eq!(&reader.read(&id).unwrap().unwrap().1[..], &data[..]);
            let kept = reader.kept.lock().unwrap();
            let bytes: usize = kept.iter().map(|(_, (_, d))| d.len()).sum();
            assert!(kept.len() <= LooseReader::KEPT, "{} kept", kept.len());
            assert!(bytes <= LooseReader::KEPT_BYTES, "{bytes} bytes kept");
            assert!(kept.iter().any(|(k, _)| *k == id), "the last read is kept");
        }
    }

    /// Stored blocks at every boundary read back through git (which checks the stream's
    /// Adler-32), gix and the reader; above the bound, objects are deflated.
    #[test]
    fn objects_in_stored_blocks_read_back_at_every_boundary() {
        let (temp, _) = crate::test_git::repo_with_a_commit();
        let dir = temp.path();
        let repo = gix::open(dir).unwrap();
        let mut writer = LooseWriter::new(&repo);
        let header = |n: usize| format!("blob {n}\0").len();
        let mut sizes = vec![0, 1, 5_552, 5_553, 65_536, 131_070, 131_071];
        // The whole stream's data (header too) exactly one and two blocks long.
        sizes.push(65_535 - header(65_535));
        sizes.push(2 * 65_535 - header(2 * 65_535));
        let most = LooseWriter::STORED_MAX - header(LooseWriter::STORED_MAX);
        sizes.extend([most, most + 1]);
        for size in sizes {
            let data: Vec<u8> = (0..size).map(|j| (j * 7 + size) as u8 | 0x80).collect();
            let id = writer.write(gix::objs::Kind::Blob, &data).unwrap();
            let file = std::fs::read(object_path(&writer.dir, &id)).unwrap();
            let is_stored = file.len() > data.len();
            assert_eq!(
                is_stored,
                size <= most,
                "{size}: {} bytes on disk",
                file.len()
            );
            let output = std::process::Command::new("git")
                .current_dir(dir)
                .args(["cat-file", "blob", &id.to_string()])
                .output()
                .unwrap();
            assert!(output.status.success(), "{size}: {output:?}");
            assert!(output.stdout == data, "{size}: git reads other bytes");
            let fresh = gix::open(dir).unwrap();
            assert!(fresh.find_object(id).unwrap().data == data, "{size}: gix");
            let read = LooseReader::new(&repo).read(&id).unwrap().unwrap();
            assert!(read.1[..] == data[..], "{size}: the reader");
        }
        let fsck = std::process::Command::new("git")
            .current_dir(dir)
            .args(["fsck", "--strict", "--full"])
            .output()
            .unwrap();
        assert!(fsck.status.success(), "{fsck:?}");
    }

    #[test]
    fn adler32_is_zlibs() {
        let of = |data: &[u8]| {
            let mut adler = Adler32::default();
            adler.update(data);
            adler.value()
        };
        assert_eq!(of(b""), 1);
        assert_eq!(of(b"Wikipedia"), 0x11E6_0398);
        // Long runs of 0xff: the sums wrap where zlib's do.
        let ones = vec![0xffu8; 100_000];
        let mut split = Adler32::default();
        split.update(&ones[..12_345]);
        split.update(&ones[12_345..]);
        assert_eq!(split.value(), of(&ones));
        // Python's `zlib.adler32(b"\xff" * 100000)`.
        assert_eq!(of(&ones), 0x149a_302c);
    }
}
