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
    /// What [`Scratch::changed`] compares with, once [`Scratch::baseline`] took it.
    baseline: std::cell::RefCell<Baseline>,
    /// The test code a watched run moved or removed ([`Scratch::watched`]), whatever it put
    /// back: what the next [`Scratch::reset_changed`] names besides what it finds.
    moved: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// A run since the last reset was not watched as [`Scratch::watch`] asks (the kernel gave
    /// no watch, or dropped events): its test code is judged by its change time too.
    unwatched: std::cell::Cell<bool>,
    /// The worktree's one inotify instance, made at its first [`Scratch::watch`] and kept:
    /// the kernel waits for a grace period before a closed instance is gone (milliseconds),
    /// which each pair of a 50-task PR's final check would otherwise wait for in turn.
    inotify: std::cell::RefCell<Option<rustix::fd::OwnedFd>>,
}

/// An inotify watch on the directories above a scratch worktree's test code while a command
/// runs there ([`Scratch::watch`]).
pub struct Watch {
    fd: rustix::fd::OwnedFd,
    /// Each watch's directory, from the worktree's root (empty: the root).
    dirs: std::collections::HashMap<i32, PathBuf>,
    /// Each watch of a file of the test code, by its path.
    file_watches: std::collections::HashMap<i32, PathBuf>,
    /// The files of test code the worktree was made with: what a test creates and removes
    /// beside them (a temporary file under `tests/`) is its own.
    files: std::collections::HashSet<PathBuf>,
}

/// The files [`Scratch::changed`] compares with.
enum Baseline {
    /// None taken.
    None,
    /// Its files as [`Scratch::settle`] kept them, which a reset puts back.
    Settled,
    /// Its files as they were when the baseline was taken.
    Files(Files),
    /// Too large to keep: a shadow index of them, which `git status` compares with.
    Shadow,
}

/// The files git made for a fresh worktree, read once it was made: its `.git` file, and
/// every file and directory of its own git directory (HEAD, the index just read, …), with
/// their bytes.
struct Made {
    dot_git: Vec<u8>,
    dot_git_mode: u32,
    admin: Files,
    /// Its files as [`Scratch::settle`] found them, when they fit in [`FILES_CAP`]: a reset
    /// then removes and writes only what differs from them (creating and removing files is
    /// what a reset costs), else it writes the whole tree again.
    files: Option<Files>,
    /// [`Scratch::settle`] was called: its files are not its tree's alone any more.
    settled: bool,
    /// What [`Scratch::pin`] changed in `files`, which [`Scratch::unpin`] puts back.
    pins: Pins,
}

/// The entries of [`Made::files`] a pin replaced, and those it added: one task's pinned
/// files are kept by the resets between its runs, and taken out for the next task's.
#[derive(Default)]
struct Pins {
    replaced: Vec<(PathBuf, FileEntry)>,
    replaced_dirs: Vec<(PathBuf, u32)>,
    added: Vec<PathBuf>,
    added_dirs: Vec<PathBuf>,
}

/// Beyond this many bytes of files a worktree's files are not kept in memory: its reset
/// writes its tree again from the objects.
const FILES_CAP: u64 = 64 << 20;

/// How many milliseconds [`read_files`] waits at most for the filesystem's clock to pass the
/// change time of the files it read: a kernel's clock tick is 1 to 10 ms.
const RACY_WAITS: usize = 20;

/// Every entry of a worktree but its `.git` file, by its path from the worktree: each
/// directory with its mode, each file with its mode and bytes, each link with its target.
#[derive(Default)]
struct Files {
    dirs: std::collections::BTreeMap<PathBuf, u32>,
    entries: std::collections::BTreeMap<PathBuf, FileEntry>,
}

enum FileEntry {
    File {
        mode: u32,
        bytes: Vec<u8>,
        /// Its metadata when it was read, where that is enough to know it unchanged later
        /// ([`Stamp`]): then a compare reads no bytes.
        stamp: Option<Stamp>,
    },
    Link(PathBuf),
}

/// What a file's metadata says of its content: the same file (device and inode), size,
/// mode, and modification and change times. Any write to a file, or change of its times or
/// mode, sets its change time to the filesystem's clock then, which no process can set back
/// (the system clock aside). So a file whose stamp is as read, and whose change time was
/// already older than the filesystem's clock when it was read ([`fs_now`]), has not been
/// written since: comparing the stamps of a worktree's files, not their bytes, is what makes
/// a reset and a compare cost a stat per file, not a read (each RED run resets and compares
/// the final tree's worktree: reading every file was most of what `attest` added to the
/// tests' own run time, the bench's `attest` mode). A file changed within the clock's tick
/// (its change time not older) is racy, as git calls it: its bytes are compared.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt as _;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// The filesystem's clock now, as a change time of `dir`'s (whose access time it sets): a
/// file whose change time is older was not written since. `None` when `dir`'s times cannot
/// be set.
fn fs_now(dir: &Path) -> Option<(i64, i64)> {
    use std::os::unix::fs::MetadataExt as _;
    let file = std::fs::File::open(dir).ok()?;
    file.set_times(std::fs::FileTimes::new().set_accessed(std::time::SystemTime::now()))
        .ok()?;
    let meta = file.metadata().ok()?;
    Some((meta.ctime(), meta.ctime_nsec()))
}

/// Whether every write to a file under `dir` moves its change time, a write through a
/// shared memory map included: on ext2/3/4, XFS and btrfs a first write to a mapped page
/// calls the filesystem's `page_mkwrite`, which sets the file's times. tmpfs, for one, has
/// none, so a test that maps a file and writes through the map changes its bytes and not its
/// times: there [`Stamp`]s are not trusted, and bytes are compared. A process that dirtied a
/// mapped page before the stamp was taken and writes again later is not seen either; every
/// process a command starts is ended before its worktree is read (src/exec/orphans.rs, the
/// confined runner), so only one the agent started outside the run could.
fn writes_move_change_time(dir: &Path) -> bool {
    const EXT: u64 = 0xEF53;
    const XFS: u64 = 0x5846_5342;
    const BTRFS: u64 = 0x9123_683E;
    rustix::fs::statfs(dir)
        .ok()
        .and_then(|stat| u64::try_from(stat.f_type).ok())
        .is_some_and(|kind| matches!(kind, EXT | XFS | BTRFS))
}

/// Which paths of a scratch worktree are test code, where a write whose bytes were put back
/// still counts ([`rewritten`], [`Scratch::watch`]): the pinned tests' files and the runner's
/// files put in with them, what the runner loads as the test. Other files a run may rewrite
/// with the same bytes (a snapshot file jest saves again, a generated fixture), as a compare
/// of bytes allows.
pub type TestCode<'a> = &'a dyn Fn(&Path) -> bool;

/// Whether the file whose metadata is `meta` was written since its [`Stamp`] was taken
/// (`stamp`), whatever it holds now: another file in its place, or its modification time
/// moved. Code a test loads can rewrite the pinned test before its runner reads it and put
/// the bytes back once it ran (a module imported at collection, a build script): a compare
/// of bytes finds nothing, but a write moves the modification time (through `mmap` too). A
/// time set back (`utime`) is the watch's to see ([`Scratch::watch`]: a write is an event,
/// and so is closing a file opened for writing, which an `mmap` for writing needs); the
/// change time alone is not asked, as a `chmod +x` of the test moves it too, unless
/// `strict`: where no watch saw the run, the change time, which no process sets back, is
/// asked too. `false` without a stamp (a racy file, a filesystem whose times are not
/// trusted).
fn rewritten(meta: &std::fs::Metadata, stamp: Option<Stamp>, strict: bool) -> bool {
    stamp.is_some_and(|s| {
        let now = Stamp::of(meta);
        (now.dev, now.ino, now.mtime) != (s.dev, s.ino, s.mtime) || (strict && now.ctime != s.ctime)
    })
}

/// Whether the file at `full`, whose metadata is `meta`, still holds `bytes` with the mode
/// `same_mode` accepts: by its [`Stamp`] alone when it has one as read, else by its bytes.
fn holds(
    full: &Path,
    meta: &std::fs::Metadata,
    (bytes, stamp): (&[u8], Option<Stamp>),
    same_mode: impl Fn(u32) -> bool,
) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    if stamp.is_some_and(|s| s == Stamp::of(meta)) {
        return true;
    }
    meta.is_file()
        && same_mode(meta.permissions().mode() & 0o7777)
        && meta.len() == bytes.len() as u64
        && std::fs::read(full).is_ok_and(|now| now == bytes)
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
            dot_git_mode: {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::symlink_metadata(worktree.path().join(".git"))
                    .map_err(io(".git file"))?
                    .permissions()
                    .mode()
                    & 0o7777
            },
            admin: read_files(&admin)
                .map_err(io("git directory"))?
                .ok_or_else(|| {
                    EngineError::Internal("the new worktree's git directory is too large".into())
                })?,
            files: None,
            settled: false,
            pins: Pins::default(),
        };
        let scratch = Scratch {
            session,
            worktree,
            git,
            tree: tree.to_string(),
            admin,
            made,
            baseline: std::cell::RefCell::new(Baseline::None),
            moved: Default::default(),
            unwatched: Default::default(),
            inotify: Default::default(),
        };
        scratch.fetch_lfs(&pointers)?;
        // Made now: a confined run of the other worktree gets it bound read-only, and only
        // what exists can be.
        std::fs::create_dir_all(scratch.build_dir()).map_err(super::io_error(
            "make the scratch worktree's build directory",
        ))?;
        Ok(scratch)
    }

    /// Where a build tool builds for this worktree ([`build_dir_of`]).
    pub fn build_dir(&self) -> PathBuf {
        build_dir(self.path())
    }

    /// Takes its files as they are now (paths put in, say) as what [`Scratch::reset`] puts
    /// back, removing and writing only what differs from them. Over [`FILES_CAP`], or
    /// unreadable, they are not kept, and a reset fails: the caller makes a new worktree.
    pub fn settle(&mut self) {
        self.made.settled = true;
        self.made.files = read_files(self.worktree.path()).ok().flatten();
    }

    /// Puts the worktree back as [`Scratch::with_index`] made it (or as [`Scratch::settle`]
    /// found it), without a git process: every file and directory in it that is not as it
    /// was removed (tracked, untracked and ignored alike, so nothing a test left is seen by
    /// the next run) and written again, and its `.git` file and own git directory (HEAD, the
    /// index) likewise. What is as it was is neither removed nor written: a new file costs
    /// the filesystem an inode, and a RED test's repeats reset two worktrees each (the
    /// bench's `attest` mode). An error (a directory a test made unremovable, say) leaves the
    /// worktree in no known state: the caller makes a new one.
    pub fn reset(&self) -> Result<(), EngineError> {
        self.reset_seeing(None)
    }

    /// [`Scratch::reset`], naming what [`Scratch::changed`] would have named just before it:
    /// one walk of the worktree, where a compare then a reset were two (each RED test's
    /// repeat and its tree check compare and reset the final tree's worktree: the bench's
    /// `attest` mode). When the baseline is what it was settled as, the reset's own walk
    /// finds them: a file of the baseline is unchanged when the walk, through real
    /// directories only, finds it as it was (its executable bit, not its other mode bits,
    /// compared, as [`Scratch::changed`] does), and, where it is `test_code`, not written
    /// since its stamp was taken ([`rewritten`]: a run that rewrote a pinned test and put its
    /// bytes back changed it, where [`Scratch::changed`] compares bytes alone). Otherwise, a compare then a reset. The
    /// worktree is reset either way.
    pub fn reset_changed(&self, test_code: TestCode) -> Result<Vec<String>, EngineError> {
        let settled = matches!(&*self.baseline.borrow(), Baseline::Settled);
        let Some(files) = self.made.files.as_ref().filter(|_| settled) else {
            let changed = self.changed_seeing(test_code)?;
            self.reset()?;
            self.unwatched.set(false);
            return Ok(changed);
        };
        let mut unchanged = std::collections::HashSet::new();
        self.reset_seeing(Some((&mut unchanged, test_code)))?;
        let mut changed: Vec<String> = files
            .entries
            .keys()
            .filter(|p| !unchanged.contains(*p))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        changed.extend(std::mem::take(&mut *self.moved.borrow_mut()));
        changed.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        changed.dedup();
        // The worktree is as it was made: what the next runs do is judged afresh.
        self.unwatched.set(false);
        Ok(changed)
    }

    /// [`Scratch::changed`], with what a watched run moved or wrote of the test code and a
    /// file of it written though its bytes are back ([`rewritten`]): what
    /// [`Scratch::reset_changed`] names, where no reset follows (one that failed).
    pub fn changed_seeing(&self, test_code: TestCode) -> Result<Vec<String>, EngineError> {
        let mut changed = self.compare(Some(test_code))?;
        changed.extend(std::mem::take(&mut *self.moved.borrow_mut()));
        changed.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        changed.dedup();
        Ok(changed)
    }

    /// Watches this worktree's test code for what the commands run from now until
    /// [`Scratch::watched`] write, move or remove of it: each file of it (a write, or a close
    /// of it opened for writing, as an `mmap` that writes needs; through any link to it), and
    /// every directory on the way to one, the root's too (a name of it moved, removed or made
    /// again; the directory itself moved or removed). The test's directory renamed away, a new
    /// one holding a rewritten test and links to the other files put in its place, and the old
    /// one renamed back once the runner read it leaves every file as it was, its inode and
    /// times too, which no compare afterwards can see. A file of it already written since the
    /// worktree was made (by a run before this one) is named at once. `None` where no baseline
    /// of files is kept (a tree too large: git compares it) or there is no test code; where the
    /// kernel gives no watch (no inotify, the user's instances or watches used up), `None` too,
    /// and the compares after the run judge the test code by its change time as well.
    pub fn watch(&self, test_code: TestCode) -> Option<Watch> {
        use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
        let mut dirs: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
        let mut code = std::collections::HashSet::new();
        {
            let baseline = self.baseline.borrow();
            let files = match &*baseline {
                Baseline::Settled => self.made.files.as_ref(),
                Baseline::Files(files) => Some(files),
                Baseline::Shadow | Baseline::None => None,
            }?;
            let mut moved = self.moved.borrow_mut();
            for (path, entry) in files.entries.iter().filter(|(p, _)| test_code(p)) {
                dirs.extend(path.ancestors().skip(1).map(Path::to_path_buf));
                code.insert(path.clone());
                if let FileEntry::File { stamp, .. } = entry
                    && std::fs::symlink_metadata(self.path().join(path))
                        .is_ok_and(|meta| rewritten(&meta, *stamp, false))
                {
                    moved.insert(path.to_string_lossy().into_owned());
                }
            }
        }
        if dirs.is_empty() {
            return None;
        }
        let watched = (|| {
            let mut kept = self.inotify.borrow_mut();
            if kept.is_none() {
                *kept = Some(inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?);
            }
            let fd = kept.as_ref()?.try_clone().ok()?;
            // What is queued came from this worktree's own reset since the last run, or from
            // watches of another pair's test code: none of it is this run's.
            let mut buf = [std::mem::MaybeUninit::uninit(); 8192];
            let mut queued = inotify::Reader::new(&fd, &mut buf);
            while queued.next().is_ok() {}
            let gone = WatchFlags::MOVE_SELF | WatchFlags::DELETE_SELF | WatchFlags::DONT_FOLLOW;
            // No write of a directory's other files: those are no test code, and their
            // events would only fill the queue.
            let dir_flags = gone
                | WatchFlags::MOVED_FROM
                | WatchFlags::MOVED_TO
                | WatchFlags::DELETE
                | WatchFlags::CREATE
                | WatchFlags::ONLYDIR;
            // A directory or file watched for an earlier pair keeps its watch: adding it again
            // gives the same one.
            let mut watched = std::collections::HashMap::new();
            for dir in dirs {
                let wd = inotify::add_watch(&fd, self.path().join(&dir), dir_flags).ok()?;
                watched.insert(wd, dir);
            }
            // Each file itself too: a write through another link to it is no event of its
            // directory's.
            let file_flags = gone | WatchFlags::MODIFY | WatchFlags::CLOSE_WRITE;
            let mut file_watches = std::collections::HashMap::new();
            for file in &code {
                let wd = inotify::add_watch(&fd, self.path().join(file), file_flags).ok()?;
                file_watches.insert(wd, file.clone());
            }
            Some(Watch {
                fd,
                dirs: watched,
                file_watches,
                files: code,
            })
        })();
        if watched.is_none() {
            self.unwatched.set(true);
        }
        watched
    }

    /// What the commands [`Scratch::watch`] watched wrote, moved or removed of the test code
    /// the worktree was made with: a file of it, or a directory above it, kept for the next
    /// [`Scratch::reset_changed`] to name. Where the kernel dropped events, or they could not
    /// be read, every watched directory is named: what they were is not known.
    pub fn watched(&self, watch: Watch) {
        use rustix::fs::inotify::{ReadFlags, Reader};
        use std::os::unix::ffi::OsStrExt as _;
        let name = |dir: &Path| match dir.as_os_str().is_empty() {
            true => ".".to_string(),
            false => dir.to_string_lossy().into_owned(),
        };
        let mut moved = self.moved.borrow_mut();
        let lost = || {
            self.unwatched.set(true);
            watch.dirs.values().map(|d| name(d)).collect::<Vec<_>>()
        };
        let mut buf = [std::mem::MaybeUninit::uninit(); 8192];
        let mut events = Reader::new(&watch.fd, &mut buf);
        // Non-blocking: the commands have ended, and the events they made are all queued.
        loop {
            let event = match events.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => break,
                Err(_) => {
                    moved.extend(lost());
                    break;
                }
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                moved.extend(lost());
                continue;
            }
            if let Some(file) = watch.file_watches.get(&event.wd()) {
                let written = ReadFlags::MODIFY
                    | ReadFlags::CLOSE_WRITE
                    | ReadFlags::MOVE_SELF
                    | ReadFlags::DELETE_SELF;
                if flags.intersects(written) {
                    moved.insert(name(file));
                }
                continue;
            }
            let Some(dir) = watch.dirs.get(&event.wd()) else {
                continue;
            };
            if flags.intersects(ReadFlags::MOVE_SELF | ReadFlags::DELETE_SELF) {
                moved.insert(name(dir));
                continue;
            }
            let Some(file) = event.file_name() else {
                continue;
            };
            let path = dir.join(std::ffi::OsStr::from_bytes(file.to_bytes()));
            let ours = watch.files.contains(&path) || watch.dirs.values().any(|d| *d == path);
            let named =
                ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO | ReadFlags::DELETE | ReadFlags::CREATE;
            if flags.intersects(named) && ours {
                moved.insert(name(&path));
            }
        }
    }

    /// [`Scratch::reset`]; with `unchanged`, the paths of the kept files' walk that held
    /// as [`Scratch::changed`] compares them are put there.
    fn reset_seeing(
        &self,
        unchanged: Option<(&mut std::collections::HashSet<PathBuf>, TestCode)>,
    ) -> Result<(), EngineError> {
        let strict = self.unwatched.get();
        let unchanged = unchanged.map(|(seen, t)| (seen, t, strict));
        use std::os::unix::fs::PermissionsExt as _;
        let dir = self.path();
        let io = |what: &str| super::io_error(format!("reset the scratch worktree's {what}"));
        set_mode(dir, 0o700).map_err(io("directory"))?;
        let dot_git = dir.join(".git");
        match &self.made.files {
            Some(files) => {
                restore_files(dir, files, unchanged).map_err(io("files"))?;
                let kept = std::fs::symlink_metadata(&dot_git).is_ok_and(|m| {
                    m.is_file()
                        && m.permissions().mode() & 0o7777 == self.made.dot_git_mode
                        && m.len() == self.made.dot_git.len() as u64
                }) && std::fs::read(&dot_git).is_ok_and(|b| b == self.made.dot_git);
                if !kept {
                    remove_any(&dot_git).map_err(io(".git file"))?;
                }
            }
            None if self.made.settled => {
                return Err(EngineError::Internal(
                    "the scratch worktree's files were too large to keep for a reset".into(),
                ));
            }
            None => empty(dir).map_err(io("files"))?,
        }
        if std::fs::symlink_metadata(&dot_git).is_err() {
            std::fs::write(&dot_git, &self.made.dot_git).map_err(io(".git file"))?;
            set_mode(&dot_git, self.made.dot_git_mode).map_err(io(".git file"))?;
        }
        restore_files(&self.admin, &self.made.admin, None).map_err(io("git directory"))?;
        if self.made.files.is_some() {
            return Ok(());
        }
        let pointers = self.session.store.export_tree(&self.tree, dir)?;
        self.fetch_lfs(&pointers)
    }

    pub fn path(&self) -> &Path {
        self.worktree.path()
    }

    /// Takes its files as they are now as the baseline [`Scratch::changed`] compares with,
    /// in memory: its settled files when it was settled (what a reset puts back), else read
    /// now. Over [`FILES_CAP`], a shadow index in the repository's git directory, which a
    /// confined command cannot write (docs/integrity.md, "What the verifier runs"). Kept in
    /// memory, no git process runs for it: two per RED test's repeat were a third of what a
    /// verification added to the tests' own time (the bench's `attest` mode).
    pub fn baseline(&self) -> Result<(), EngineError> {
        let taken = if self.made.settled && self.made.files.is_some() {
            Baseline::Settled
        } else {
            match read_files(self.path())
                .map_err(super::io_error("read the scratch worktree's files"))?
            {
                Some(files) => Baseline::Files(files),
                None => {
                    let index = self.git.git_path("index")?;
                    self.git.snapshot_into(&index, &self.shadow())?;
                    Baseline::Shadow
                }
            }
        };
        *self.baseline.borrow_mut() = taken;
        Ok(())
    }

    /// The files of the baseline ([`Scratch::baseline`]) whose bytes, kind, link target or
    /// executable bit changed, or that are gone, by their paths in byte order. New files are
    /// not named: test runs leave reports and caches that a project does not always ignore
    /// (`coverage.xml`, `__pycache__`). Every file of the baseline is compared, ignored or not.
    pub fn changed(&self) -> Result<Vec<String>, EngineError> {
        self.compare(None)
    }

    /// [`Scratch::changed`]; with `test_code`, a file of it written since its stamp was
    /// taken is changed though its bytes were put back ([`rewritten`]).
    fn compare(&self, test_code: Option<TestCode>) -> Result<Vec<String>, EngineError> {
        let test_code = test_code.map(|t| (t, self.unwatched.get()));
        match &*self.baseline.borrow() {
            Baseline::Settled => match &self.made.files {
                Some(files) => Ok(changed_files(self.path(), files, test_code)),
                None => Err(EngineError::Internal(
                    "the scratch worktree's settled files were not kept".into(),
                )),
            },
            Baseline::Files(files) => Ok(changed_files(self.path(), files, test_code)),
            Baseline::Shadow => Ok(self.git.changed_since(&self.shadow())?),
            Baseline::None => Err(EngineError::Internal(
                "the scratch worktree's files were compared with no baseline".into(),
            )),
        }
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

    /// Puts `paths` in as `from` has them (removed where it has none) for the runs until
    /// [`Scratch::unpin`]: a reset of a settled worktree keeps them as put in, and puts them
    /// back so when a run changed them, as it does its settled files. One task's RED test
    /// is put in once for its `[verify] runs` repeats, not written and removed again for
    /// each (its directories too: the bench's `attest` mode). Unsettled, or with its files
    /// not kept, they are put in only, and a reset takes them out.
    pub fn pin(&mut self, from: &str, paths: &[String]) -> Result<(), EngineError> {
        // Directories an earlier pin added and [`Scratch::unpin_keeping`] kept for this one.
        let mut carried = self.made.pins.added_dirs.clone();
        self.unpin();
        self.put(from, paths)?;
        let dir = self.worktree.path().to_path_buf();
        // One this pin put nothing into (its path has no file in `from`) is not the tree's: a
        // fresh worktree would not have it. Deepest first, so that its parent is empty then.
        carried.sort_by(|a, b| b.cmp(a));
        for kept in carried {
            let full = dir.join(&kept);
            let empty = std::fs::read_dir(&full).is_ok_and(|mut d| d.next().is_none());
            if empty && std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir(&full)
                    .map_err(super::io_error("remove a directory no pin needs"))?;
            }
        }
        let Some(files) = self.made.files.as_mut() else {
            return Ok(());
        };
        let pins = &mut self.made.pins;
        // Only a path within the worktree, as put in (src/store/export.rs `safe_path`).
        let within = |path: &PathBuf| {
            path.components().next().is_some()
                && path
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(name) if name != ".git"))
        };
        for path in paths.iter().map(PathBuf::from).filter(within) {
            // What the settled files had at the path, or under it, is the pin's now.
            let under = |p: &PathBuf| p.starts_with(&path);
            let entries: Vec<PathBuf> =
                files.entries.keys().filter(|p| under(p)).cloned().collect();
            for p in entries {
                if let Some(entry) = files.entries.remove(&p) {
                    pins.replaced.push((p, entry));
                }
            }
            let dirs: Vec<PathBuf> = files.dirs.keys().filter(|p| under(p)).cloned().collect();
            for p in dirs {
                if let Some(mode) = files.dirs.remove(&p) {
                    pins.replaced_dirs.push((p, mode));
                }
            }
            let mut read = Files::default();
            read_entries(&dir, &path, &mut read)
                .map_err(super::io_error("read the pinned files put in"))?;
            for (p, mode) in read.dirs {
                if files.dirs.insert(p.clone(), mode).is_none() {
                    pins.added_dirs.push(p);
                }
            }
            for (p, entry) in read.entries {
                files.entries.insert(p.clone(), entry);
                pins.added.push(p);
            }
        }
        Ok(())
    }

    /// [`Scratch::unpin`], but the directories the pins added on the way to one of `next`
    /// (the next task's pinned paths) stay among what a reset keeps, emptied of all else
    /// and given their modes back like every directory it keeps: the next task's pin is put
    /// into them, where removing and making them again cost the filesystem two inodes a task
    /// (the bench's `attest` mode). The next [`Scratch::pin`] takes them as its own, and its
    /// unpin takes them out.
    pub fn unpin_keeping(&mut self, next: &[String]) {
        let kept: Vec<PathBuf> = self
            .made
            .pins
            .added_dirs
            .iter()
            .filter(|dir| {
                next.iter()
                    .any(|p| Path::new(p).starts_with(dir) && Path::new(p) != dir.as_path())
            })
            .cloned()
            .collect();
        self.made.pins.added_dirs.retain(|dir| !kept.contains(dir));
        self.unpin();
        // Still the pins' until the next pin takes them: an unpin with no pin between takes
        // them out.
        self.made.pins.added_dirs = kept;
    }

    /// Takes what [`Scratch::pin`] put in out of what a reset keeps: the next reset puts
    /// those paths back as they were settled.
    pub fn unpin(&mut self) {
        let pins = std::mem::take(&mut self.made.pins);
        let Some(files) = self.made.files.as_mut() else {
            return;
        };
        for p in pins.added {
            files.entries.remove(&p);
        }
        for p in pins.added_dirs {
            files.dirs.remove(&p);
        }
        files.entries.extend(pins.replaced);
        files.dirs.extend(pins.replaced_dirs);
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

/// The entries of the worktree `dir` (its `.git` file aside), with the bytes of its files;
/// `None` when they add up to more than [`FILES_CAP`].
fn read_files(dir: &Path) -> std::io::Result<Option<Files>> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut files = Files::default();
    let mut total = 0u64;
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if path.as_os_str() == ".git" {
                continue;
            }
            let full = dir.join(&path);
            let meta = std::fs::symlink_metadata(&full)?;
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                files.dirs.insert(path.clone(), mode);
                todo.push(path);
            } else if meta.file_type().is_symlink() {
                files
                    .entries
                    .insert(path, FileEntry::Link(std::fs::read_link(&full)?));
            } else {
                total += meta.len();
                if total > FILES_CAP {
                    return Ok(None);
                }
                let bytes = std::fs::read(&full)?;
                let stamp = Some(Stamp::of(&meta));
                files
                    .entries
                    .insert(path, FileEntry::File { mode, bytes, stamp });
            }
        }
    }
    // Read after every file was; a file written within the clock's current tick is racy,
    // and its stamp worth nothing yet. Nothing writes here meanwhile (no command runs while
    // a worktree is read), so once the tick is past every stamp holds: waited for, a few
    // milliseconds once per worktree, where a byte compare of each racy file would come
    // again at every reset.
    let newest = files
        .entries
        .values()
        .filter_map(|e| match e {
            FileEntry::File { stamp, .. } => stamp.map(|s| s.ctime),
            FileEntry::Link(_) => None,
        })
        .max();
    let mut now = fs_now(dir).filter(|_| writes_move_change_time(dir));
    for _ in 0..RACY_WAITS {
        if now.is_none() || newest.is_none_or(|newest| Some(newest) < now) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        now = fs_now(dir);
    }
    for entry in files.entries.values_mut() {
        if let FileEntry::File { stamp, .. } = entry {
            *stamp = stamp.filter(|s| now.is_some_and(|now| s.ctime < now));
        }
    }
    Ok(Some(files))
}

/// The entries of the worktree `dir` at its path `path` (a file, a link, or a directory with
/// all it holds, or nothing) and the directories above it, into `files`, with no [`Stamp`]:
/// just written, they are compared by their bytes.
fn read_entries(dir: &Path, path: &Path, files: &mut Files) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for above in path.ancestors().skip(1) {
        if above.as_os_str().is_empty() {
            break;
        }
        // A pinned path the task removed has no directory above it where none held anything
        // else: nothing there to keep.
        let meta = match std::fs::symlink_metadata(dir.join(above)) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        files
            .dirs
            .insert(above.to_path_buf(), meta.permissions().mode() & 0o7777);
    }
    let mut todo = vec![path.to_path_buf()];
    while let Some(rel) = todo.pop() {
        let full = dir.join(&rel);
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        if meta.is_dir() {
            files.dirs.insert(rel.clone(), mode);
            for entry in std::fs::read_dir(&full)? {
                todo.push(rel.join(entry?.file_name()));
            }
        } else if meta.file_type().is_symlink() {
            files
                .entries
                .insert(rel, FileEntry::Link(std::fs::read_link(&full)?));
        } else {
            let bytes = std::fs::read(&full)?;
            files.entries.insert(
                rel,
                FileEntry::File {
                    mode,
                    bytes,
                    stamp: None,
                },
            );
        }
    }
    Ok(())
}

/// The files and links of `files` that the worktree `dir` no longer holds as they were:
/// gone, another kind, other bytes or target, or the executable bit changed (what git
/// compares of a mode). Each is reached through real directories only: one a test replaced
/// with a link does not lead to a copy elsewhere.
fn changed_files(dir: &Path, files: &Files, test_code: Option<(TestCode, bool)>) -> Vec<String> {
    let mut real_dirs: std::collections::HashMap<PathBuf, bool> = std::collections::HashMap::new();
    let mut is_real_dir = |rel: &Path| -> bool {
        rel.ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .all(|a| {
                *real_dirs.entry(a.to_path_buf()).or_insert_with(|| {
                    std::fs::symlink_metadata(dir.join(a)).is_ok_and(|m| m.is_dir())
                })
            })
    };
    let mut changed = Vec::new();
    for (path, entry) in &files.entries {
        let within = path.parent().is_none_or(&mut is_real_dir);
        let full = dir.join(path);
        let meta = if within {
            std::fs::symlink_metadata(&full).ok()
        } else {
            None
        };
        let same = match (entry, meta) {
            (_, None) => false,
            (FileEntry::Link(target), Some(meta)) => {
                meta.file_type().is_symlink()
                    && std::fs::read_link(&full).is_ok_and(|t| t == *target)
            }
            (FileEntry::File { mode, bytes, stamp }, Some(meta)) => {
                !(test_code.is_some_and(|(t, strict)| rewritten(&meta, *stamp, strict) && t(path)))
                    && holds(&full, &meta, (bytes, *stamp), |now| {
                        (now & 0o100) == (mode & 0o100)
                    })
            }
        };
        if !same {
            changed.push(path.to_string_lossy().into_owned());
        }
    }
    changed.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    changed
}

/// Makes the worktree `dir` hold `files` exactly (its `.git` file aside): whatever is not one
/// of them, or differs from it in kind, mode, bytes or target, is removed, then what is
/// missing is written. What a test left unchanged is neither removed nor written again.
/// With `unchanged`, each file or link of `files` the walk finds as [`changed_files`] would
/// (reached through kept, real directories; its executable bit compared, not its other mode
/// bits) is put there, before anything is removed or written.
fn restore_files(
    dir: &Path,
    files: &Files,
    mut unchanged: Option<(&mut std::collections::HashSet<PathBuf>, TestCode, bool)>,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    // What the walk found as it was, with each kept directory's mode as it left it: those
    // are not looked at again below. Each entry is read through its directory (`fstatat`),
    // once: a reset is a stat per file, and the final check resets two worktrees per task
    // and per repeat (the bench's `attest` mode).
    let mut kept: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut kept_dirs: std::collections::HashMap<PathBuf, u32> = std::collections::HashMap::new();
    // A directory a test made unreadable or read-only is opened up to be read and emptied;
    // a kept one gets its mode back below.
    open_up(dir)?;
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if path.as_os_str() == ".git" {
                continue;
            }
            let full = dir.join(&path);
            let meta = entry.metadata()?;
            let keep = if meta.is_dir() {
                files.dirs.contains_key(&path)
            } else {
                match files.entries.get(&path) {
                    Some(FileEntry::Link(target)) => {
                        meta.file_type().is_symlink() && std::fs::read_link(&full)? == *target
                    }
                    Some(FileEntry::File {
                        mode: made,
                        bytes,
                        stamp,
                    }) => {
                        let kept = holds(&full, &meta, (bytes, *stamp), |now| now == *made);
                        // Another mode, the executable bit alone compared: no change for
                        // a compare, a rewrite for a reset.
                        if let Some((seen, _, _)) = unchanged.as_mut().filter(|(_, t, strict)| {
                            !(kept || rewritten(&meta, *stamp, *strict) && t(&path))
                        }) && holds(&full, &meta, (bytes, *stamp), |now| {
                            (now & 0o100) == (made & 0o100)
                        }) {
                            seen.insert(path.clone());
                        }
                        kept
                    }
                    None => false,
                }
            };
            // A file of test code kept as it holds its bytes, but written meanwhile, is no
            // unchanged file.
            let written = |test_code: TestCode, strict: bool| {
                matches!(
                    files.entries.get(&path),
                    Some(FileEntry::File { stamp, .. }) if rewritten(&meta, *stamp, strict)
                ) && test_code(&path)
            };
            if let Some((seen, _, _)) = unchanged
                .as_mut()
                .filter(|(_, t, strict)| keep && !meta.is_dir() && !written(*t, *strict))
            {
                seen.insert(path.clone());
            }
            match (keep, meta.is_dir()) {
                (true, true) => {
                    let mut mode = meta.permissions().mode() & 0o7777;
                    if mode & 0o700 != 0o700 {
                        std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o700))?;
                        mode = 0o700;
                    }
                    kept_dirs.insert(path.clone(), mode);
                    todo.push(path);
                }
                (true, false) => {
                    kept.insert(path);
                }
                (false, _) => remove_any(&full)?,
            }
        }
    }
    // Parents before children: the map is sorted by path.
    for (path, mode) in &files.dirs {
        let full = dir.join(path);
        match kept_dirs.get(path) {
            Some(now) if now == mode => {}
            Some(_) => std::fs::set_permissions(&full, std::fs::Permissions::from_mode(*mode))?,
            None => {
                if std::fs::symlink_metadata(&full).is_err() {
                    std::fs::create_dir(&full)?;
                }
                set_mode(&full, *mode)?;
            }
        }
    }
    for (path, entry) in &files.entries {
        let full = dir.join(path);
        if kept.contains(path) || std::fs::symlink_metadata(&full).is_ok() {
            continue;
        }
        match entry {
            FileEntry::Link(target) => std::os::unix::fs::symlink(target, &full)?,
            FileEntry::File { mode, bytes, .. } => {
                std::fs::write(&full, bytes)?;
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(*mode))?;
            }
        }
    }
    Ok(())
}

/// Gives `path` (never a link's target) the permission bits `mode`, when it has others: a
/// change of mode is a write of the filesystem's too.
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() || meta.permissions().mode() & 0o7777 == mode {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Removes whatever is at `path`, a directory with all it holds; a link is never followed.
fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(meta) if meta.is_dir() => {
            open_up_all(path)?;
            std::fs::remove_dir_all(path)
        }
        Ok(_) => std::fs::remove_file(path),
    }
}

/// Gives us read, write and search on directory `dir` (never a link's target), when it lacks
/// any of them.
fn open_up(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.is_dir() && meta.permissions().mode() & 0o700 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// [`open_up`] for `dir` and every directory under it, so that all of it can be removed.
fn open_up_all(dir: &Path) -> std::io::Result<()> {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        open_up(&next)?;
        for entry in std::fs::read_dir(&next)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                todo.push(entry.path());
            }
        }
    }
    Ok(())
}

/// Removes everything in `dir`, leaving it empty; a link is removed, never followed.
fn empty(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if std::fs::symlink_metadata(&path)?.is_dir() {
            open_up_all(&path)?;
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        // The baseline's shadow index goes with the worktree; there may be none. So does its
        // build directory.
        let _ = std::fs::remove_file(self.shadow());
        let _ = std::fs::remove_dir_all(build_dir(self.path()));
    }
}

/// Where a build tool puts what it builds for the scratch worktree at `worktree`: beside it,
/// its own (a stale one goes with a stale worktree's name, `wt-<pid>-…`). Cargo, told by a
/// user's `CARGO_TARGET_DIR` (or `build.target-dir`) to build every checkout into one
/// directory, takes the base's worktree for the squashed one's, whose artifacts are newer
/// than the base's files: the base's run would test the squashed code. A directory outside
/// the worktree, so a reset between runs does not make every run build anew.
fn build_dir(worktree: &Path) -> PathBuf {
    let mut name = worktree.as_os_str().to_os_string();
    name.push(".target");
    PathBuf::from(name)
}

/// Writes `bytes` into the file `path` (repository-relative) of the worktree at `root`
/// without following a link: every directory on the way must be a directory, and the file
/// a regular file with no other name (or absent). A mutant is written while the task's
/// test has run in the worktree before, and a link there (committed, or left by a run)
/// would have it written wherever the link points, outside the worktree.
pub fn write_inside(root: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let refused = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let parts: Vec<&str> = path.split('/').collect();
    if path.is_empty() || parts.iter().any(|p| matches!(*p, "" | "." | "..")) {
        return Err(refused(format!(
            "{path:?} is not a path inside the worktree"
        )));
    }
    let mut at = root.to_path_buf();
    for dir in &parts[..parts.len() - 1] {
        at.push(dir);
        if !std::fs::symlink_metadata(&at)?.is_dir() {
            return Err(refused(format!(
                "{} is not a directory (a link, say): {path} is not written",
                at.display()
            )));
        }
    }
    at.push(parts[parts.len() - 1]);
    match std::fs::symlink_metadata(&at) {
        Ok(meta) if !meta.is_file() || meta.nlink() > 1 => {
            return Err(refused(format!(
                "{path} is not a regular file of the worktree alone (a link, say): not written"
            )));
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&at)?;
    file.write_all(bytes)
}

/// The variables a test command run in `dir` gets so that its build is the worktree's own
/// ([`build_dir`]): `CARGO_TARGET_DIR`, when `dir` is a scratch worktree (`wt-…` in a scratch
/// root, `scratch-…` or `clean-check`: src/exec/env.rs `scratch_dir`), told by its path alone
/// so that nothing is made to tell it; none in the user's own working tree, whose build
/// directory is theirs.
pub fn build_dir_of(dir: &Path) -> Vec<(String, String)> {
    let name = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
            .unwrap_or_default()
    };
    let root = dir.parent().map(name).unwrap_or_default();
    let scratch =
        name(dir).starts_with("wt-") && (root.starts_with("scratch-") || root == "clean-check");
    if !scratch {
        return Vec::new();
    }
    vec![(
        "CARGO_TARGET_DIR".to_string(),
        build_dir(dir).to_string_lossy().into_owned(),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changed_files_are_those_rewritten_removed_replaced_or_made_executable() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("same", "a"),
            ("rewritten", "b"),
            ("removed", "c"),
            ("run", "d"),
            ("d/inside", "e"),
            ("ignored.log", "f"),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        std::os::unix::fs::symlink("same", root.join("link")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: elsewhere").unwrap();
        let files = read_files(root).unwrap().unwrap();
        assert_eq!(changed_files(root, &files, None), Vec::<String>::new());
        // Same size, other bytes; gone; executable; a directory swapped for a link to a copy
        // of it; a link retargeted; a new file and the `.git` file are not the tree's.
        std::fs::write(root.join("rewritten"), "B").unwrap();
        std::fs::write(root.join("ignored.log"), "F").unwrap();
        std::fs::remove_file(root.join("removed")).unwrap();
        std::fs::set_permissions(root.join("run"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = tempfile::tempdir().unwrap();
        std::fs::write(copy.path().join("inside"), "e").unwrap();
        std::fs::rename(root.join("d"), root.join("d.away")).unwrap();
        std::os::unix::fs::symlink(copy.path(), root.join("d")).unwrap();
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink("rewritten", root.join("link")).unwrap();
        std::fs::write(root.join("new"), "g").unwrap();
        std::fs::write(root.join(".git"), "gitdir: moved").unwrap();
        assert_eq!(
            changed_files(root, &files, None),
            [
                "d/inside",
                "ignored.log",
                "link",
                "removed",
                "rewritten",
                "run"
            ]
        );
        // A mode change git does not see (group write) is no change.
        std::fs::set_permissions(root.join("same"), std::fs::Permissions::from_mode(0o664))
            .unwrap();
        assert!(!changed_files(root, &files, None).contains(&"same".to_string()));
    }
}

#[cfg(test)]
#[path = "scratch_tests.rs"]
mod unit_tests;
