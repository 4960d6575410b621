//! The ref backend seam (docs/refs.md, "Ref storage"): the files backend is read and written
//! in-process with gix, as every other part of the store is; a backend gix cannot read
//! (reftable) through git's own ref commands (`for-each-ref`, `rev-parse`, `symbolic-ref`,
//! `update-ref --stdin`), which the engine hands the store (`backend.rs`), since the
//! store starts no process itself (docs/architecture.md, "Layers").

use std::collections::BTreeMap;
use std::sync::Arc;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::backend::{RefBackend, RefCommandFailure, RefCommands};
use super::error::git_err;
use super::{Store, StoreError, WriteError};

/// How long a ref write waits for reftable's one lock (git's default is 100 ms, made for a
/// lock per ref): racing writers of unrelated refs would otherwise fail for each other.
const REFTABLE_LOCK_TIMEOUT: &str = "reftable.lockTimeout=5000";

/// A ref as `for-each-ref` lists it: what it points at.
pub(super) enum Listed {
    Object(ObjectId),
    Symbolic(String),
}

impl Store {
    /// True when this repository's refs are read through git's commands, which the engine
    /// must hand over with [`Store::use_ref_commands`] before any ref is read.
    pub fn needs_ref_commands(&self) -> bool {
        matches!(self.refs, RefBackend::Commands { git: None, .. })
    }

    /// Reads and moves refs with `git` from now on, when gix cannot (reftable); a files
    /// repository keeps gix.
    pub fn use_ref_commands(&mut self, git: Arc<dyn RefCommands>) {
        if let RefBackend::Commands { git: slot, .. } = &mut self.refs {
            *slot = Some(git);
        }
    }

    /// git's ref commands, when this repository needs them; `None` for the files backend.
    pub(super) fn ref_commands(&self) -> Result<Option<&dyn RefCommands>, StoreError> {
        match &self.refs {
            RefBackend::Files => Ok(None),
            RefBackend::Commands { git: Some(git), .. } => Ok(Some(git.as_ref())),
            RefBackend::Commands { format, git: None } => Err(StoreError::UnsupportedRefStorage {
                format: format.clone(),
                git_dir: self.repo.git_dir().to_path_buf(),
            }),
        }
    }

    /// True when refs live in reftable (their lock is `reftable/tables.list.lock`).
    pub(super) fn refs_in_reftable(&self) -> bool {
        matches!(&self.refs, RefBackend::Commands { format, .. } if format == "reftable")
    }

    /// The object ref `name` (a full name) points at directly; `None` when it does not
    /// exist (or, in the files backend, is symbolic).
    pub(super) fn direct_ref(&self, name: &str) -> Result<Option<ObjectId>, StoreError> {
        match self.ref_commands()? {
            None => {
                // Its own file, without gix's packed-refs check: the board reads a hundred.
                let file = self.loose_ref_file(name);
                if let Ok(Some(id)) = file {
                    return Ok(Some(id));
                }
                // No file of its own: none at all when nothing is packed (gix would look for a
                // `heads/`, `tags/` or `remotes/` file of that name too, with a plain `open`);
                // else packed, or none, with no file to wait on (its reflog gix does not read).
                if file.is_err() && self.loose_only() {
                    return Ok(None);
                }
                if file.is_ok() {
                    self.refuse_waiting_ref(name)?;
                }
                Ok(self
                    .repo()?
                    .try_find_reference(name)
                    .map_err(git_err)?
                    .and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
            }
            Some(git) => Ok(listed(git, name)?
                .into_iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, target)| match target {
                    Listed::Object(id) => Some(id),
                    Listed::Symbolic(_) => None,
                })),
        }
    }

    /// The commit ref `name` (a full name) leads to, symbolic refs and tags followed; `None`
    /// when it does not exist.
    pub(super) fn peeled_ref(&self, name: &str) -> Result<Option<ObjectId>, StoreError> {
        match self.ref_commands()? {
            None if let Some(id) = self.loose_commit_ref(name) => Ok(Some(id)),
            None if self.no_ref(name) => Ok(None),
            None => match self
                .refuse_waiting_ref(name)
                .and_then(|()| self.repo())?
                .try_find_reference(name)
                .map_err(git_err)?
            {
                Some(mut r) => Ok(Some(r.peel_to_id().map_err(git_err)?.detach())),
                None => Ok(None),
            },
            Some(git) => {
                if !self.ref_exists(name)? {
                    return Ok(None);
                }
                let peeled = format!("{name}^{{commit}}");
                let out = run(git, &["rev-parse", "--verify", "--end-of-options", &peeled])?;
                object_id_of(out.trim()).map(Some)
            }
        }
    }

    /// Ref `name` read from its own file in the files backend, when that file holds an
    /// object id and the object is a loose one that is not a tag: what gix's lookup and peel
    /// would give, without its packed-refs check and a second inflate of the object, which
    /// the caller reads next (the reader keeps it). Every other case is gix's to read:
    /// `None`. A loose ref's file is the ref whatever `packed-refs` says, as in git.
    fn loose_commit_ref(&self, name: &str) -> Option<ObjectId> {
        self.loose_commit_id(self.loose_ref(name)?)
    }

    /// `id` when it is a loose object that is not a tag: its own peel.
    fn loose_commit_id(&self, id: ObjectId) -> Option<ObjectId> {
        match self.loose.read(&id) {
            Ok(Some((kind, _))) if kind != gix::objs::Kind::Tag => Some(id),
            _ => None,
        }
    }

    /// This worktree's `HEAD` as its own file says: `Ok(branch)` (a full name under
    /// `refs/heads/`) or `Err(id)` when detached; `None` for anything else, gix's to read.
    fn plain_head(&self) -> Option<Result<String, ObjectId>> {
        if !self.repo.refs_are_files() {
            return None;
        }
        let text = read_small(&self.repo.git_dir().join("HEAD"))?;
        let line = text.strip_suffix(b"\n")?;
        if let Some(name) = line.strip_prefix(b"ref: ") {
            let name = std::str::from_utf8(name).ok()?;
            let valid =
                name.starts_with("refs/heads/") && gix::refs::FullName::try_from(name).is_ok();
            return valid.then(|| Ok(name.to_string()));
        }
        if line.len() != self.repo.object_hash().len_in_hex() {
            return None;
        }
        ObjectId::from_hex(line).ok().map(Err)
    }

    /// True when the files backend holds no ref `name`: no file of its own, and no
    /// `packed-refs` at all.
    pub(super) fn no_ref(&self, name: &str) -> bool {
        name.starts_with("refs/")
            && self.loose_only()
            && gix::refs::FullName::try_from(name).is_ok()
            && absent(&self.repo.common_dir().join(name))
    }

    /// Refuses a FIFO, socket or device as the loose file of ref `name` (a full name) or as
    /// its reflog, before gix opens either with a plain `open` and waits on it for ever.
    pub(super) fn refuse_waiting_ref(&self, name: &str) -> Result<(), StoreError> {
        if !self.repo.refs_are_files() {
            return Ok(());
        }
        let (own, common) = (self.repo.git_dir(), self.repo.common_dir());
        let dirs = if own == common {
            &[own][..]
        } else {
            &[own, common][..]
        };
        for dir in dirs {
            super::regular::refuse_waiting(&dir.join(name))?;
            super::regular::refuse_waiting(&dir.join("logs").join(name))?;
        }
        Ok(())
    }

    /// True where every ref is a loose file of its own, read where gix would read it: a
    /// files backend seen without a namespace, from the common git directory, with no
    /// `packed-refs`. The one precondition of the direct reads that answer for every ref
    /// ([`Self::no_ref`], [`Self::loose_refs_under`]).
    fn loose_only(&self) -> bool {
        let common = self.repo.common_dir();
        self.repo.refs_are_files()
            && self.repo.git_dir() == common
            && absent(&common.join("packed-refs"))
    }

    /// Every ref whose name starts with `prefix`, by the rest of its name, with the id it
    /// holds, read from the loose files of a files backend that has no `packed-refs`;
    /// symbolic refs left out, as gix's listing leaves them. `None` for anything else (a
    /// packed ref, a file that is not one id, a name git would not take, a link): gix's to
    /// list.
    pub(super) fn loose_refs_under(&self, prefix: &str) -> Option<BTreeMap<String, ObjectId>> {
        let common = self.repo.common_dir();
        let dir = &prefix[..prefix.rfind('/')?];
        if !prefix.starts_with("refs/") || !self.loose_only() {
            return None;
        }
        use rustix::fs::{FileType, Mode, OFlags};
        let hex_len = self.repo.object_hash().len_in_hex();
        let mut found = BTreeMap::new();
        let mut pending = vec![dir.to_string()];
        while let Some(dir) = pending.pop() {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = match rustix::fs::open(common.join(&dir), flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) => continue,
                Err(_) => return None,
            };
            let mut entries = rustix::fs::Dir::new(fd).ok()?;
            while let Some(entry) = entries.read() {
                let entry = entry.ok()?;
                let file = entry.file_name();
                if file == c"." || file == c".." {
                    continue;
                }
                let name = format!("{dir}/{}", file.to_str().ok()?);
                let kind = match entry.file_type() {
                    // A file system that does not say (no `d_type`): asked, not followed.
                    FileType::Unknown => FileType::from_raw_mode(
                        rustix::fs::statat(
                            entries.fd().ok()?,
                            file,
                            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                        )
                        .ok()?
                        .st_mode,
                    ),
                    kind => kind,
                };
                if kind == FileType::Directory {
                    pending.push(name);
                    continue;
                }
                if kind != FileType::RegularFile
                    || PER_WORKTREE.iter().any(|p| name.starts_with(p))
                    || gix::refs::FullName::try_from(name.as_str()).is_err()
                {
                    return None;
                }
                if let Some(rest) = name.strip_prefix(prefix) {
                    let id = id_in(entries.fd().ok()?, file, hex_len)?;
                    found.insert(rest.to_string(), id);
                }
            }
        }
        Some(found)
    }

    /// Ref `name`'s id as its own file in the files backend holds it (a loose file is the
    /// ref whatever `packed-refs` says, as in git); `None` for a symbolic ref, a packed one,
    /// or any file that is not one id and a newline: gix's to read.
    pub(super) fn loose_ref(&self, name: &str) -> Option<ObjectId> {
        self.loose_ref_file(name).ok().flatten()
    }

    /// [`Self::loose_ref`], telling apart a ref that has no file of its own in the common
    /// directory (`Err(())`: packed, or none at all) from anything else gix is to read
    /// (`Ok(None)`).
    fn loose_ref_file(&self, name: &str) -> Result<Option<ObjectId>, ()> {
        if !self.repo.refs_are_files()
            || !name.starts_with("refs/")
            || PER_WORKTREE.iter().any(|p| name.starts_with(p))
            || gix::refs::FullName::try_from(name).is_err()
        {
            return Ok(None);
        }
        let text = match super::regular::read_within(&self.repo.common_dir().join(name), 128) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(()),
            Err(_) => return Ok(None),
        };
        let Some(hex) = text.strip_suffix(b"\n") else {
            return Ok(None);
        };
        if hex.len() != self.repo.object_hash().len_in_hex() {
            return Ok(None);
        }
        Ok(ObjectId::from_hex(hex).ok())
    }

    /// True when ref `name` (a full name) exists, symbolic or not.
    pub(super) fn ref_exists(&self, name: &str) -> Result<bool, StoreError> {
        match self.ref_commands()? {
            None => Ok(self
                .repo()?
                .try_find_reference(name)
                .map_err(git_err)?
                .is_some()),
            Some(git) => Ok(listed(git, name)?.iter().any(|(n, _)| n == name)),
        }
    }

    /// Every ref whose name starts with `prefix`, by git's commands (not for the files
    /// backend, whose callers walk gix's own listing).
    pub(super) fn listed_refs(
        &self,
        git: &dyn RefCommands,
        prefix: &str,
    ) -> Result<Vec<(String, Listed)>, StoreError> {
        Ok(listed(git, prefix)?
            .into_iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .collect())
    }

    /// The commit HEAD is at; `None` on an unborn branch.
    pub(super) fn head_commit_id(&self) -> Result<Option<ObjectId>, StoreError> {
        match self.ref_commands()? {
            None if let Some(id) = self.plain_head().and_then(|head| match head {
                Ok(branch) if self.no_ref(&branch) => Some(None),
                Ok(branch) => self.loose_commit_ref(&branch).map(Some),
                Err(id) => self.loose_commit_id(id).map(Some),
            }) =>
            {
                Ok(id)
            }
            None => Ok(self.repo()?.head_id().ok().map(|id| id.detach())),
            Some(git) => match git.git(&["rev-parse", "--verify", "--quiet", "HEAD"], b"", &[]) {
                Ok(out) => object_id_of(out.to_str_lossy().trim()).map(Some),
                Err(RefCommandFailure {
                    status: Some(1), ..
                }) => Ok(None),
                Err(failure) => Err(command_error("rev-parse HEAD", failure)),
            },
        }
    }

    /// The full name of the branch HEAD is on; `None` when detached.
    pub(super) fn head_ref_name(&self) -> Result<Option<String>, StoreError> {
        match self.ref_commands()? {
            None if let Some(head) = self.plain_head() => Ok(head.ok()),
            None => Ok(self
                .repo()?
                .head_name()
                .map_err(git_err)?
                .map(|name| name.as_bstr().to_str_lossy().into_owned())),
            Some(git) => match git.git(&["symbolic-ref", "--quiet", "HEAD"], b"", &[]) {
                Ok(out) => Ok(Some(out.to_str_lossy().trim().to_string())),
                Err(RefCommandFailure {
                    status: Some(1), ..
                }) => Ok(None),
                Err(failure) => Err(command_error("symbolic-ref HEAD", failure)),
            },
        }
    }

    /// Moves `name` from `expected` (`None`: it must not exist) to `new` (`None`: deleted) in
    /// one `git update-ref --stdin` transaction, logging `message` as `signature`: git checks
    /// the old value under its lock, so a lost race is [`WriteError::Conflict`] as in gix.
    pub(super) fn move_ref_by_commands(
        &self,
        git: &dyn RefCommands,
        name: &str,
        expected: Option<ObjectId>,
        new: Option<ObjectId>,
        message: &str,
        signature: &gix::actor::Signature,
    ) -> Result<(), WriteError> {
        let zero = ObjectId::null(self.repo.object_hash());
        let change = match (new, expected) {
            (Some(new), Some(old)) => format!("update {name} {new} {old}"),
            (Some(new), None) => format!("create {name} {new}"),
            (None, Some(old)) => format!("delete {name} {old}"),
            (None, None) => format!("verify {name} {zero}"),
        };
        let input = format!("start\n{change}\nprepare\ncommit\n");
        // git's reflog line, like the one gix writes: one line, the committer we sign as.
        let message = message.lines().next().unwrap_or_default();
        let env = [
            (
                "GIT_COMMITTER_NAME",
                signature.name.to_str_lossy().into_owned(),
            ),
            (
                "GIT_COMMITTER_EMAIL",
                signature.email.to_str_lossy().into_owned(),
            ),
            ("GIT_COMMITTER_DATE", raw_date(signature.time)),
        ];
        // One lock guards all of reftable's refs, where the files backend locks each ref:
        // writers of other refs (another workflow, a claim) queue for it rather than fail.
        let args = [
            "-c",
            REFTABLE_LOCK_TIMEOUT,
            "update-ref",
            "--create-reflog",
            "-m",
            message,
            "--stdin",
        ];
        match git.git(&args, input.as_bytes(), &env) {
            Ok(_) => Ok(()),
            Err(failure) => {
                // The old value is checked under git's lock: a ref that is not at `expected`
                // now lost the race, and so did a writer that found the table lock held by
                // one at work. A lock left by a crash is named instead.
                if let Some(locked) = self.stale_reftable_lock(name) {
                    return Err(WriteError::Store(locked));
                }
                let now = self.direct_ref(name)?;
                // As gix does: a ref that must not exist may, at the value being written.
                if expected.is_none() && new.is_some() && now == new {
                    return Ok(());
                }
                // git's own words for an old value it found changed under its lock are the
                // verdict: the ref may be back at `expected` by the time it is read again
                // (another writer moved it away and back), and that write still lost.
                if now != expected || lost_under_lock(&failure.message) {
                    return Err(WriteError::Conflict);
                }
                Err(WriteError::Store(command_error(
                    "update-ref --stdin",
                    failure,
                )))
            }
        }
    }

    /// The reflog of `reference` as git reads it, oldest first: each entry's old value is
    /// the one logged before it (git's reflog listing shows each entry's new value only).
    pub(super) fn reflog_by_commands(
        &self,
        git: &dyn RefCommands,
        reference: &str,
    ) -> Result<Vec<super::ReflogEntry>, StoreError> {
        if !self.ref_exists(reference)? {
            return Ok(Vec::new());
        }
        let out = run(
            git,
            &[
                "reflog",
                "show",
                "--no-abbrev",
                "--format=%H%x09%gs",
                "--end-of-options",
                reference,
            ],
        )?;
        let zero = ObjectId::null(self.repo.object_hash()).to_string();
        let mut entries: Vec<super::ReflogEntry> = Vec::new();
        for line in out.lines().rev() {
            let (new, message) = line.split_once('\t').unwrap_or((line, ""));
            let old = entries.last().map_or(zero.clone(), |e| e.new.clone());
            entries.push(super::ReflogEntry {
                old,
                new: new.to_string(),
                message: message.to_string(),
            });
        }
        Ok(entries)
    }
}

/// True when `git update-ref` refused a move because the ref's value under its lock was not
/// the expected one, or because the lock was held by a writer at work: a lost race.
fn lost_under_lock(message: &str) -> bool {
    message.contains("but expected")
        || message.contains("reference already exists")
        || message.contains("cannot lock references")
}

/// The refs `for-each-ref` lists for the directory part of `prefix` (git matches whole path
/// components), each with its target; the caller keeps those it asked for.
fn listed(git: &dyn RefCommands, prefix: &str) -> Result<Vec<(String, Listed)>, StoreError> {
    let pattern = match prefix.rfind('/') {
        Some(slash) => &prefix[..=slash],
        None => prefix,
    };
    let out = run(
        git,
        &[
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(symref)",
            "--end-of-options",
            pattern,
        ],
    )?;
    let mut refs = Vec::new();
    for line in out.lines() {
        let mut fields = line.split('\0');
        let (Some(name), Some(id), Some(symref)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let target = if symref.is_empty() {
            match ObjectId::from_hex(id.as_bytes()) {
                Ok(id) => Listed::Object(id),
                Err(_) => continue,
            }
        } else {
            Listed::Symbolic(symref.to_string())
        };
        refs.push((name.to_string(), target));
    }
    Ok(refs)
}

/// `git <args>`'s stdout as text, or its failure as a store error.
fn run(git: &dyn RefCommands, args: &[&str]) -> Result<String, StoreError> {
    git.git(args, b"", &[])
        .map(|out| out.to_str_lossy().into_owned())
        .map_err(|failure| command_error(&args.join(" "), failure))
}

fn command_error(command: &str, failure: RefCommandFailure) -> StoreError {
    if failure.message.contains("unknown repository extension") {
        return StoreError::Git(format!(
            "the git found first on PATH cannot read this repository's refs (`git {command}`: {}); \
             reftable needs git 2.45 or later",
            failure.message.trim().replace('\n', " ").replace('\t', "")
        ));
    }
    let status = failure
        .status
        .map_or("could not run".to_string(), |code| format!("exit {code}"));
    StoreError::Git(format!(
        "`git {command}` failed ({status}): {}",
        failure.message.trim()
    ))
}

fn object_id_of(hex: &str) -> Result<ObjectId, StoreError> {
    ObjectId::from_hex(hex.as_bytes())
        .map_err(|_| StoreError::Git(format!("git named no object id but \"{hex}\"")))
}

/// `time` as git's raw date (`<seconds> <+hhmm>`), for `GIT_COMMITTER_DATE`.
fn raw_date(time: gix::date::Time) -> String {
    let sign = if time.offset < 0 { '-' } else { '+' };
    let offset = time.offset.unsigned_abs();
    format!(
        "{} {sign}{:02}{:02}",
        time.seconds,
        offset / 3600,
        (offset % 3600) / 60
    )
}

/// A ref's (or `HEAD`'s) own file, when it is a regular file of at most 128 bytes; opened
/// without blocking, so a FIFO put where the file should be is no wait.
fn read_small(path: &std::path::Path) -> Option<Vec<u8>> {
    // `/dev/null`, which this reads as empty, is no ref either.
    super::regular::read_within(path, 128).ok()
}

/// Names under these are the worktree's own, not the common directory's.
const PER_WORKTREE: [&str; 3] = ["refs/worktree/", "refs/bisect/", "refs/rewritten/"];

/// The object id a loose ref's file `file` in directory `dir` holds: one id of `hex_len`
/// digits and a newline. Opened from its directory (the kernel walks one name) without
/// waiting and read once: a regular file's read stops short only at its end, and anything
/// else (a FIFO reads as nothing at once) is no id, `None`, as is anything longer.
fn id_in(
    dir: rustix::fd::BorrowedFd<'_>,
    file: &std::ffi::CStr,
    hex_len: usize,
) -> Option<ObjectId> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, file, flags, Mode::empty()).ok()?;
    let mut buf = [0u8; 130];
    let want = (hex_len + 2).min(buf.len());
    let read = loop {
        match rustix::io::read(&fd, &mut buf[..want]) {
            Err(rustix::io::Errno::INTR) => {}
            other => break other.ok()?,
        }
    };
    let hex = buf[..read].strip_suffix(b"\n")?;
    if hex.len() != hex_len {
        return None;
    }
    ObjectId::from_hex(hex).ok()
}

/// True when nothing is at `path`, not even a broken link (any other failure is no answer).
pub(super) fn absent(path: &std::path::Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;

    use pretty_assertions::assert_eq;

    /// A loose ref's file read from its directory: one id and a newline, nothing else, and
    /// a FIFO no wait.
    #[test]
    fn a_loose_refs_file_holds_one_id_and_a_newline_or_is_no_id() {
        let dir = tempfile::tempdir().unwrap();
        let fd = rustix::fs::open(
            dir.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        use rustix::fd::AsFd as _;
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let id = |content: &str| {
            std::fs::write(dir.path().join("r"), content).unwrap();
            id_in(fd.as_fd(), c"r", 40)
        };
        assert_eq!(
            id(&format!("{hex}\n")),
            Some(ObjectId::from_hex(hex.as_bytes()).unwrap())
        );
        for wrong in [
            hex.to_string(),
            format!("{hex}\n\n"),
            format!("{hex}0\n"),
            format!("{}\n", &hex[1..]),
            "ref: refs/heads/main\n".to_string(),
            format!("{hex}\n{}", "x".repeat(200)),
            String::new(),
        ] {
            assert_eq!(id(&wrong), None, "{wrong:?}");
        }
        let fifo = dir.path().join("fifo");
        crate::test_git::mkfifo(&fifo);
        assert_eq!(id_in(fd.as_fd(), c"fifo", 40), None);
        assert_eq!(id_in(fd.as_fd(), c"none", 40), None);
    }

    /// git itself, in one directory: what the engine hands over, without the engine.
    struct Runner(std::path::PathBuf);

    impl RefCommands for Runner {
        fn git(
            &self,
            args: &[&str],
            input: &[u8],
            env: &[(&str, String)],
        ) -> Result<Vec<u8>, RefCommandFailure> {
            use std::io::Write as _;
            let mut child = std::process::Command::new("git")
                .args(args)
                .current_dir(&self.0)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input).unwrap();
            let out = child.wait_with_output().unwrap();
            if out.status.success() {
                Ok(out.stdout)
            } else {
                Err(RefCommandFailure {
                    status: out.status.code(),
                    message: String::from_utf8_lossy(&out.stderr).into_owned(),
                })
            }
        }
    }

    fn reftable_store() -> (tempfile::TempDir, Store, ObjectId, ObjectId) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(
            d,
            &["init", "--quiet", "--ref-format=reftable", "-b", "main"],
        );
        git(d, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        git(d, &["commit", "--quiet", "--allow-empty", "-m", "two"]);
        let one = ObjectId::from_hex(git(d, &["rev-parse", "HEAD~1"]).as_bytes()).unwrap();
        let two = ObjectId::from_hex(git(d, &["rev-parse", "HEAD"]).as_bytes()).unwrap();
        let mut store = Store::discover(d, "main").unwrap();
        assert!(store.needs_ref_commands());
        store.use_ref_commands(Arc::new(Runner(d.to_path_buf())));
        assert!(!store.needs_ref_commands());
        (dir, store, one, two)
    }

    /// Without git's commands handed over, a reftable repository is refused by name rather
    /// than read as one with no refs.
    #[test]
    fn reftable_refs_are_refused_until_the_commands_are_handed_over() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--ref-format=reftable"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        assert!(matches!(
            store.tip(),
            Err(StoreError::UnsupportedRefStorage { .. })
        ));
    }

    /// Reads through git's commands: HEAD, its branch, a branch's tip, and a listing by a
    /// prefix that is not a whole path component.
    #[test]
    fn refs_are_read_through_gits_commands() {
        let (dir, store, one, two) = reftable_store();
        assert_eq!(store.head_commit_id().unwrap(), Some(two));
        assert_eq!(store.head_branch().unwrap().as_deref(), Some("main"));
        assert_eq!(store.branch_tip("main").unwrap(), Some(two));
        assert!(store.branch_exists("main").unwrap());
        assert!(!store.branch_exists("mai").unwrap());
        assert_eq!(store.tip().unwrap(), None);
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/claims/a", &one.to_string()],
        );
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/claimsx", &two.to_string()],
        );
        let under = store.refs_under("refs/orchestrator/claims").unwrap();
        assert_eq!(
            under.into_iter().collect::<Vec<_>>(),
            vec![("/a".to_string(), one), ("x".to_string(), two)]
        );
        assert_eq!(
            store.ref_tip("refs/orchestrator/claims/a").unwrap(),
            Some(one)
        );
        assert_eq!(store.ref_tip("refs/orchestrator/claims").unwrap(), None);
        git(dir.path(), &["checkout", "--quiet", "--detach"]);
        assert_eq!(store.head_branch().unwrap(), None);
    }

    /// Moves are compare-and-swap: a stale old value, or a create over an existing ref, is
    /// a [`WriteError::Conflict`] and moves nothing; the moves are logged with the message.
    #[test]
    fn a_move_from_a_stale_value_is_a_conflict_and_moves_nothing() {
        let (_dir, store, one, two) = reftable_store();
        let name = "refs/orchestrator/claims/pr-1";
        store
            .move_claim_ref(name, None, Some(one), "claim")
            .unwrap();
        // As gix has it: a ref that must not exist may, at the value being written.
        store
            .move_claim_ref(name, None, Some(one), "claim")
            .unwrap();
        assert!(matches!(
            store.move_claim_ref(name, None, Some(two), "claim again"),
            Err(WriteError::Conflict)
        ));
        assert!(matches!(
            store.move_claim_ref(name, Some(two), Some(two), "from a stale read"),
            Err(WriteError::Conflict)
        ));
        assert_eq!(store.ref_tip(name).unwrap(), Some(one));
        store
            .move_claim_ref(name, Some(one), Some(two), "renew")
            .unwrap();
        assert_eq!(store.ref_tip(name).unwrap(), Some(two));
        let log = store.reflog(name).unwrap();
        assert_eq!(
            log.iter()
                .map(|e| (e.old.clone(), e.new.clone(), e.message.clone()))
                .collect::<Vec<_>>(),
            vec![
                (
                    ObjectId::null(gix::hash::Kind::Sha1).to_string(),
                    one.to_string(),
                    "git-orchestrate: claim".to_string()
                ),
                (
                    one.to_string(),
                    two.to_string(),
                    "git-orchestrate: renew".to_string()
                ),
            ]
        );
        assert!(matches!(
            store.move_claim_ref(name, Some(one), None, "release from a stale read"),
            Err(WriteError::Conflict)
        ));
        store
            .move_claim_ref(name, Some(two), None, "release")
            .unwrap();
        assert_eq!(store.ref_tip(name).unwrap(), None);
    }

    /// Another writer that moves the ref away just before our write and back just after it:
    /// git refused ours under its lock, so it lost, though a read afterwards finds the value
    /// it expected.
    struct AwayAndBack {
        git: Runner,
        name: String,
        away: ObjectId,
        back: ObjectId,
    }

    impl RefCommands for AwayAndBack {
        fn git(
            &self,
            args: &[&str],
            input: &[u8],
            env: &[(&str, String)],
        ) -> Result<Vec<u8>, RefCommandFailure> {
            if !args.contains(&"--stdin") {
                return self.git.git(args, input, env);
            }
            let away = self.away.to_string();
            let back = self.back.to_string();
            self.git
                .git(&["update-ref", &self.name, &away], b"", &[])
                .unwrap();
            let ours = self.git.git(args, input, env);
            self.git
                .git(&["update-ref", &self.name, &back], b"", &[])
                .unwrap();
            ours
        }
    }

    #[test]
    fn a_write_git_refused_under_its_lock_is_a_conflict_though_the_ref_came_back() {
        let (dir, mut store, one, two) = reftable_store();
        let name = "refs/orchestrator/claims/pr-1";
        store
            .move_claim_ref(name, None, Some(one), "claim")
            .unwrap();
        store.use_ref_commands(Arc::new(AwayAndBack {
            git: Runner(dir.path().to_path_buf()),
            name: name.to_string(),
            away: two,
            back: one,
        }));
        assert!(matches!(
            store.move_claim_ref(name, Some(one), Some(two), "renew"),
            Err(WriteError::Conflict)
        ));
        assert_eq!(store.ref_tip(name).unwrap(), Some(one));
    }
}
