//! Writing one transition's loose objects with one zlib state: the hot path of every write.
//!
//! gix builds a fresh deflate state (about 380 KB, zeroed) for every object it writes; a
//! transition writes three to five objects, and the page faults of those allocations were a
//! tenth of a failing submit-work (`perf record -e page-faults`, docs/architecture.md). The
//! format is git's own and has not changed since 2005: `<kind> <size>\0<data>`, deflated, in
//! `objects/xx/yyyy…`, published by renaming a finished temporary file, as gix and git do.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::zlib::stream::deflate::{Compress, FlushCompress};
use gix::zlib::{Compression, Status};

use super::StoreError;

pub(super) struct LooseWriter {
    dir: PathBuf,
    hash: gix::hash::Kind,
    compress: Option<Compress>,
    out: Vec<u8>,
}

impl LooseWriter {
    pub(super) fn new(repo: &gix::Repository) -> LooseWriter {
        LooseWriter {
            dir: repo.objects.store_ref().path().to_path_buf(),
            hash: repo.object_hash(),
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

    /// Deflates `parts`, one stream, into `self.out`.
    fn deflate(&mut self, parts: &[&[u8]]) -> Result<(), StoreError> {
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
}
