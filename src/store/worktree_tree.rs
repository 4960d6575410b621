//! The tree `git add --all` would make of the working tree, taken in-process for the plain
//! cases: the index read, every file whose `lstat` differs from it (or that git would
//! re-read: "racily clean") hashed, untracked files added unless a `.gitignore`,
//! `info/exclude` says otherwise, and the tree written as `git write-tree` writes it
//! (src/store/index_tree.rs). Anything this does not read as git does (attributes, a filter,
//! an end-of-line setting, a submodule or nested repository, a sparse checkout, a name git
//! refuses, a global exclude file, a file not regular, a link or a directory) is left to
//! git: `None`, and the caller runs `git add --all` as before. One git process (and the
//! copy of the index it wrote, flushed by ext4) less on every passing step.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice as _;
use gix::objs::tree::EntryKind;
use gix_ignore::search::Ignore;

use super::index_tree::{
    IndexEntry, Parsed, build, parse, parse_paths, plain_path, read_regular, read_regular_within,
};
use super::loose::LooseWriter;
use super::{Store, StoreError, git_err};

/// A file beyond this size is left to git (it streams big files; this reads them whole).
const MAX_FILE_BYTES: u64 = 32 << 20;

/// A `.gitignore` beyond this size is left to git.
const MAX_IGNORE_BYTES: u64 = 1 << 20;

/// Deeper than this, the working tree is left to git.
const MAX_DEPTH: usize = 256;

/// Settings that change what `git add` makes of a file or which files it sees: any of them
/// set leaves the tree to git (booleans below are read for their value).
const LEFT_TO_GIT: &[&str] = &[
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.excludesFile",
    "core.attributesFile",
    "core.sparseCheckout",
    "core.sparseCheckoutCone",
    "index.sparse",
    "core.worktree",
    // Attributes read from a tree (git 2.47), stat fields git compares fewer of.
    "attr.tree",
    "core.checkStat",
    "core.trustctime",
];

/// System configuration and attributes files of git builds installed elsewhere than
/// `/etc` (gix reads `/etc/gitconfig` itself): any of them there leaves the tree to git.
const SYSTEM_FILES: &[&str] = &[
    "/etc/gitattributes",
    "/usr/local/etc/gitconfig",
    "/usr/local/etc/gitattributes",
    "/usr/etc/gitconfig",
    "/usr/etc/gitattributes",
    "/opt/homebrew/etc/gitconfig",
    "/opt/homebrew/etc/gitattributes",
    "/opt/local/etc/gitconfig",
    "/opt/local/etc/gitattributes",
];

/// Why the walk stopped: the tree is git's to take.
struct LeftToGit;

type Walked<T> = Result<T, LeftToGit>;

impl Store {
    /// The id of the tree `git add --all -- :/ ':(exclude)<left out>…' && git write-tree`
    /// would write from this working tree and its index (the index itself not written),
    /// its blobs and trees written to the object database; `None` where that is left to
    /// git (above).
    pub fn worktree_tree(&self, left_out: &[String]) -> Result<Option<ObjectId>, StoreError> {
        if self.repo.object_hash() != gix::hash::Kind::Sha1 || !self.plain_settings() {
            return Ok(None);
        }
        // The store's own paths and objects (src/store/layout.rs): no gix repository is
        // opened for this (opening one cost a fifth of a passing step).
        let Some(root) = self.repo.workdir().map(Path::to_path_buf) else {
            return Ok(None);
        };
        let index_path = self.repo.index_path();
        let (parsed, index_time) = match std::fs::symlink_metadata(&index_path) {
            Ok(meta) => {
                let Some(bytes) = read_regular(&index_path) else {
                    return Ok(None);
                };
                let Some(parsed) = parse(&bytes, gix::hash::Kind::Sha1.len_in_bytes()) else {
                    return Ok(None);
                };
                use std::os::unix::fs::MetadataExt as _;
                (parsed, Some((meta.mtime(), meta.mtime_nsec())))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Parsed::default(), None),
            Err(_) => return Ok(None),
        };
        // An attributes file the index holds counts even where the working tree lacks it:
        // git reads it from the index then.
        if parsed.entries.iter().any(|e| {
            let name = e.path.rsplit(|b| *b == b'/').next().unwrap_or_default();
            e.not_compared || e.kind == EntryKind::Commit || left_to_git_name(name)
        }) {
            return Ok(None);
        }
        let git_dir = self.repo.git_dir().to_path_buf();
        // A git directory inside the working tree other than its `.git` is git's to skip.
        if git_dir.starts_with(&root) && git_dir.parent() != Some(root.as_path()) {
            return Ok(None);
        }
        let mut base = Vec::new();
        // Shared by every worktree of the repository, as git reads it.
        let exclude = self.repo.common_dir().join("info").join("exclude");
        if let Some(list) = ignore_list(&exclude, None)? {
            base.push(list);
        } else if !super::refs::absent(&exclude) {
            return Ok(None);
        }
        let left_out: Vec<Vec<u8>> = left_out.iter().map(|p| p.as_bytes().to_vec()).collect();
        let mut walk = Walk {
            root: &root,
            left_out: &left_out,
            tracked: &parsed.entries,
            ignores: base,
            out: Vec::with_capacity(parsed.entries.len()),
            index_time,
            store: self,
            objects: LooseWriter::at(self.repo.objects_dir(), gix::hash::Kind::Sha1),
            hashed: Vec::new(),
        };
        if walk.dir(&mut Vec::new(), &root, false, 0)?.is_err() {
            return Ok(None);
        }
        let Walk {
            mut out,
            mut objects,
            hashed,
            ..
        } = walk;
        out.extend(
            parsed
                .entries
                .iter()
                .filter(|e| left_out_has(&left_out, &e.path))
                .cloned(),
        );
        out.sort_by(|a, b| a.path.cmp(&b.path));
        if out.windows(2).any(|w| w[0].path == w[1].path) {
            return Ok(None);
        }
        // Every directory above a path that changed is written again; the index's cached
        // trees stand for the rest.
        let mut cached = parsed.cached.clone();
        let changed = changed_paths(&parsed.entries, &out);
        for path in changed.into_iter().chain(hashed.iter().map(Vec::as_slice)) {
            cached.remove(b"".as_slice());
            for (at, byte) in path.iter().enumerate() {
                if *byte == b'/' {
                    cached.remove(&path[..=at]);
                }
            }
        }
        let fresh = Parsed {
            entries: out,
            cached,
        };
        let mut write = |tree: gix::objs::Tree| objects.write_object(&tree);
        let has_object = |id: &ObjectId| self.holds(*id).unwrap_or(false);
        build(&fresh, &mut write, &has_object)
    }

    /// Refuses, before git reads them, the ignore and attributes files `git add --all` would
    /// open and wait on for ever: a FIFO, socket or device as a `.gitignore` or
    /// `.gitattributes` in a directory git walks, or as `info/exclude`, `info/attributes`,
    /// `core.excludesFile`, `core.attributesFile`, the global ones or the system's. What
    /// [`Store::worktree_tree`] refuses on its own road, for git's road: it walks the
    /// directories git would (ignored ones only where the index has files in them; nested
    /// repositories not), reading no file but the `.gitignore`s. A name beyond
    /// `MAX_DEPTH` directories is checked without its ignore files: a refusal there may be
    /// one git would not have needed, never a wait.
    pub fn refuse_waiting_reads(&self) -> Result<(), StoreError> {
        match self.repo.workdir() {
            Some(top) => self.refuse_waiting_reads_in(top, &self.repo.index_path(), false),
            None => Ok(()),
        }
    }

    /// [`Store::refuse_waiting_reads`] for `git status` in the working tree at `top` (this
    /// one where `None`; another worktree of this repository as `board` and `worktree list`
    /// run it), which reads the submodules' files too.
    pub fn refuse_waiting_status_reads(&self, top: Option<&Path>) -> Result<(), StoreError> {
        let Some(top) = top else {
            return match self.repo.workdir() {
                Some(top) => self.refuse_waiting_reads_in(top, &self.repo.index_path(), true),
                None => Ok(()),
            };
        };
        // Its index is in its own git directory, which its `.git` file names.
        let dot_git = top.join(".git");
        let index = match std::fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_file() => super::layout::linked_git_dir(&dot_git)
                .ok()
                .flatten()
                .map_or_else(|| dot_git.join("index"), |dir| dir.join("index")),
            _ => dot_git.join("index"),
        };
        self.refuse_waiting_reads_in(top, &index, true)
    }

    fn refuse_waiting_reads_in(
        &self,
        root: &Path,
        index: &Path,
        into_submodules: bool,
    ) -> Result<(), StoreError> {
        let mut outside: Vec<PathBuf> = SYSTEM_FILES.iter().map(PathBuf::from).collect();
        for dir in [self.git_dir(), self.common_dir()] {
            outside.push(dir.join("info").join("exclude"));
            outside.push(dir.join("info").join("attributes"));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let config_home = super::layout::git_config_home();
        // The ignore file below all others: `core.excludesFile`, else the XDG one (and
        // likewise for attributes): git reads the XDG file only where the setting is unset.
        let mut global_ignore = config_home.as_ref().map(|c| c.join("git").join("ignore"));
        let mut global_attributes = config_home
            .as_ref()
            .map(|c| c.join("git").join("attributes"));
        for key in ["core.excludesFile", "core.attributesFile"] {
            let Some(value) = self.repo.config_string(key) else {
                continue;
            };
            let Ok(value) = gix::path::from_bstring(value) else {
                continue;
            };
            // git runs at the top of the working tree: a relative path is from there.
            let path = match (value.strip_prefix("~"), &home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ => root.join(value),
            };
            if key == "core.excludesFile" {
                global_ignore = Some(path);
            } else {
                global_attributes = Some(path);
            }
        }
        outside.extend(global_ignore.iter().cloned());
        outside.extend(global_attributes);
        for path in &outside {
            // git follows a link here.
            if let Ok(meta) = std::fs::metadata(path) {
                refuse_waiting(path, &meta)?;
            }
        }
        // Directories that file ignores are not entered either, as git does not enter them:
        // a `node_modules` ignored there is not walked.
        let global = global_ignore.and_then(|path| {
            let bytes = super::regular::read(&path).ok()?;
            gix_glob::search::pattern::List::from_bytes(&bytes, path, None, Ignore::default()).ok()
        });
        let tree = Tree {
            root,
            index,
            exclude: &self.common_dir().join("info").join("exclude"),
            global: global.as_ref(),
            hash_len: self.repo.object_hash().len_in_bytes(),
            into_submodules,
        };
        tree.probe(0)
    }

    /// No setting, variable or global file that makes `git add` see or hash files otherwise
    /// than [`Store::worktree_tree`] does.
    fn plain_settings(&self) -> bool {
        let vars = [
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
            "GIT_INDEX_FILE",
        ];
        if vars.iter().any(|v| std::env::var_os(v).is_some()) {
            return false;
        }
        let set = |key: &str| self.repo.config_string(key).is_some();
        let is = |key: &str, default: bool| {
            self.repo
                .with_config(|config| config.boolean(key))
                .map_or(None, |value| Some(value.unwrap_or(default)))
        };
        if LEFT_TO_GIT.iter().any(|key| set(key))
            || is("core.fileMode", true) != Some(true)
            || is("core.symlinks", true) != Some(true)
            || is("core.ignoreCase", false) != Some(false)
            || is("core.precomposeUnicode", false) != Some(false)
        {
            return false;
        }
        // git reads these without being told to.
        let config_home = super::layout::git_config_home();
        let mut files: Vec<PathBuf> = SYSTEM_FILES.iter().map(PathBuf::from).collect();
        files.push(self.git_dir().join("info").join("attributes"));
        files.push(self.common_dir().join("info").join("attributes"));
        if let Some(home) = config_home {
            files.push(home.join("git").join("ignore"));
            files.push(home.join("git").join("attributes"));
        }
        files.iter().all(|f| super::refs::absent(f))
    }
}

/// The patterns of the ignore file at `path` (a regular file, not a link), relative to the
/// directory it is in below `root`; `None` where there is no such file.
fn ignore_list(
    path: &Path,
    root: Option<&Path>,
) -> Result<Option<gix_glob::search::pattern::List<Ignore>>, StoreError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(None);
    };
    refuse_waiting(path, &meta)?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_BYTES {
        return Ok(None);
    }
    let Some(bytes) = read_regular(path) else {
        return Ok(None);
    };
    Ok(gix_glob::search::pattern::List::from_bytes(
        &bytes,
        path.to_path_buf(),
        root,
        Ignore::default(),
    )
    .ok())
}

/// A FIFO, socket or device at `path`, which git would read as an ignore or attributes
/// file: git opens it with a blocking `open` and would wait on it for ever.
fn refuse_waiting(path: &Path, meta: &std::fs::Metadata) -> Result<(), StoreError> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    // `core.excludesFile = /dev/null` reads as empty at once.
    if !super::regular::is_dev_null(meta)
        && (kind.is_fifo() || kind.is_socket() || kind.is_char_device() || kind.is_block_device())
    {
        return Err(StoreError::WouldHang(format!(
            "{} is not a regular file (a FIFO, socket or device): git reads it as an ignore or \
             attributes file and would wait on it for ever",
            path.display()
        )));
    }
    Ok(())
}

/// Whether the ignore lists `ignores` (the most specific last) exclude `path`: the most
/// specific list with a matching pattern decides, by its last one (dir.c's
/// `last_matching_pattern_from_lists`).
fn excluded_by(
    ignores: &[gix_glob::search::pattern::List<Ignore>],
    path: &[u8],
    is_dir: bool,
) -> bool {
    let basename = path.rfind_byte(b'/').map(|at| at + 1);
    for list in ignores.iter().rev() {
        if let Some(found) = gix_ignore::search::pattern_matching_relative_path(
            list,
            path.as_bstr(),
            basename,
            Some(is_dir),
            gix_glob::pattern::Case::Sensitive,
        ) {
            return !found.pattern.is_negative();
        }
    }
    false
}

/// One working tree [`Store::refuse_waiting_reads`] checks: the repository's own, or a
/// submodule of it (`git status` runs in it).
struct Tree<'a> {
    root: &'a Path,
    index: &'a Path,
    /// Its `info/exclude`.
    exclude: &'a Path,
    /// The user's ignore file's patterns, below all others.
    global: Option<&'a gix_glob::search::pattern::List<Ignore>>,
    hash_len: usize,
    into_submodules: bool,
}

impl Tree<'_> {
    /// Walks it as git would, `depth` directories below the top of the outermost one.
    fn probe(&self, depth: usize) -> Result<(), StoreError> {
        // Its paths are all that is asked of its index. One whose entries are not all in
        // the file (a split index) may have files in any ignored directory: every one is
        // entered.
        let (tracked, known) = match read_regular(self.index) {
            Some(bytes) => match parse_paths(&bytes, self.hash_len) {
                Some(tracked) => (tracked, true),
                None => (Default::default(), false),
            },
            None => (Default::default(), !self.index.exists()),
        };
        let mut probe = Probe {
            tracked: &tracked.entries,
            index_known: known,
            tree: self,
            ignores: Vec::new(),
        };
        probe.ignores.extend(self.global.cloned());
        if let Ok(Some(list)) = ignore_list(self.exclude, None) {
            probe.ignores.push(list);
        }
        probe.dir(&mut Vec::new(), self.root, false, depth)
    }
}

/// The walk of [`Store::refuse_waiting_reads`]: the directories `git add --all` reads.
struct Probe<'a> {
    /// The index's entries, sorted by path.
    tracked: &'a [IndexEntry],
    /// Whether `tracked` is the whole index (else any directory may have tracked files).
    index_known: bool,
    /// The tree walked.
    tree: &'a Tree<'a>,
    /// The ignore lists in force, the most specific last.
    ignores: Vec<gix_glob::search::pattern::List<Ignore>>,
}

impl Probe<'_> {
    /// Checks the directory `dir` (relative: `""` or `a/b/`, at `abs`), every untracked
    /// path under it ignored when `ignored`.
    fn dir(
        &mut self,
        dir: &mut Vec<u8>,
        abs: &Path,
        ignored: bool,
        depth: usize,
    ) -> Result<(), StoreError> {
        use std::os::unix::ffi::OsStrExt as _;
        if depth > MAX_DEPTH {
            return refuse_waiting_below(abs);
        }
        let Ok(read) = std::fs::read_dir(abs) else {
            return Ok(());
        };
        let names: Vec<_> = read
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
            .collect();
        // git reads no ignore file in a directory it ignores (it adds the files the index
        // has there from the index); the attributes of any file it adds.
        let read = if ignored {
            &[".gitattributes"][..]
        } else {
            &[".gitignore", ".gitattributes"][..]
        };
        for name in read {
            if names.iter().any(|(n, _)| n.as_bytes() == name.as_bytes()) {
                let path = abs.join(name);
                if let Ok(meta) = std::fs::symlink_metadata(&path) {
                    refuse_waiting(&path, &meta)?;
                }
            }
        }
        let mut pushed = false;
        if !ignored
            && names.iter().any(|(n, _)| n.as_bytes() == b".gitignore")
            && let Ok(Some(list)) = ignore_list(&abs.join(".gitignore"), Some(self.tree.root))
        {
            self.ignores.push(list);
            pushed = true;
        }
        let mut walked = Ok(());
        for (name, kind) in &names {
            let name = name.as_bytes();
            if !kind.is_dir() || (dir.is_empty() && name == b".git") {
                continue;
            }
            let sub = abs.join(std::ffi::OsStr::from_bytes(name));
            let len = dir.len();
            // A nested repository: `git add` records it, or skips it, without reading
            // inside. `git status` runs in a submodule the index has: every ignore and
            // attributes file in it is checked, and those of its git directory.
            if !super::refs::absent(&sub.join(".git")) {
                dir.extend_from_slice(name);
                let submodule = self.tree.into_submodules
                    && (!self.index_known || is_gitlink(self.tracked, dir));
                dir.truncate(len);
                if submodule {
                    walked = self.submodule(&sub, depth + 1);
                    if walked.is_err() {
                        break;
                    }
                }
                continue;
            }
            dir.extend_from_slice(name);
            dir.push(b'/');
            let tracked_below = !self.index_known || tracked_below(self.tracked, dir);
            let excluded = ignored || excluded_by(&self.ignores, &dir[..dir.len() - 1], true);
            if !excluded || tracked_below {
                walked = self.dir(dir, &sub, excluded, depth + 1);
            }
            dir.truncate(len);
            if walked.is_err() {
                break;
            }
        }
        if pushed {
            self.ignores.pop();
        }
        walked
    }

    /// The files `git status` in the submodule at `top` would wait on: its git directory's
    /// `info/exclude` and `info/attributes`, and what a walk of it as git walks it finds.
    fn submodule(&self, top: &Path, depth: usize) -> Result<(), StoreError> {
        let dot_git = top.join(".git");
        let git_dir = match std::fs::metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => dot_git,
            Ok(meta) => {
                refuse_waiting(&dot_git, &meta)?;
                match super::layout::linked_git_dir(&dot_git) {
                    Ok(Some(dir)) => dir,
                    _ => return refuse_waiting_below(top),
                }
            }
            Err(_) => return Ok(()),
        };
        for file in ["exclude", "attributes"] {
            let path = git_dir.join("info").join(file);
            if let Ok(meta) = std::fs::metadata(&path) {
                refuse_waiting(&path, &meta)?;
            }
        }
        let tree = Tree {
            root: top,
            index: &git_dir.join("index"),
            exclude: &git_dir.join("info").join("exclude"),
            global: self.tree.global,
            hash_len: self.tree.hash_len,
            into_submodules: true,
        };
        tree.probe(depth)
    }
}

/// Every `.gitignore` and `.gitattributes` below `top`, checked without ignore files: a
/// walk with its own stack, however deep.
fn refuse_waiting_below(top: &Path) -> Result<(), StoreError> {
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() {
                if name != ".git" {
                    stack.push(entry.path());
                }
            } else if (name == ".gitignore" || name == ".gitattributes")
                && let Ok(meta) = std::fs::symlink_metadata(entry.path())
            {
                refuse_waiting(&entry.path(), &meta)?;
            }
        }
    }
    Ok(())
}

/// Whether `tracked` (sorted by path) has `path` as a submodule.
fn is_gitlink(tracked: &[IndexEntry], path: &[u8]) -> bool {
    tracked
        .binary_search_by(|e| e.path.as_slice().cmp(path))
        .ok()
        .and_then(|at| tracked.get(at))
        .is_some_and(|e| e.kind == gix::objs::tree::EntryKind::Commit)
}

/// Whether `tracked` (sorted by path) has an entry below the directory `dir` (ending in `/`).
fn tracked_below(tracked: &[IndexEntry], dir: &[u8]) -> bool {
    let at = tracked.partition_point(|e| e.path.as_slice() < dir);
    tracked.get(at).is_some_and(|e| e.path.starts_with(dir))
}

/// Whether `path` is one of the paths left out, or below one.
fn left_out_has(left_out: &[Vec<u8>], path: &[u8]) -> bool {
    left_out.iter().any(|out| {
        path.starts_with(out) && (path.len() == out.len() || path.get(out.len()) == Some(&b'/'))
    })
}

/// The paths whose entry differs between the sorted lists `old` and `new` (changed, added,
/// removed).
fn changed_paths<'a>(old: &'a [IndexEntry], new: &'a [IndexEntry]) -> Vec<&'a [u8]> {
    let (mut i, mut j) = (0, 0);
    let mut changed = Vec::new();
    loop {
        match (old.get(i), new.get(j)) {
            (None, None) => return changed,
            (Some(a), None) => {
                changed.push(a.path.as_slice());
                i += 1;
            }
            (None, Some(b)) => {
                changed.push(b.path.as_slice());
                j += 1;
            }
            (Some(a), Some(b)) => match a.path.cmp(&b.path) {
                std::cmp::Ordering::Less => {
                    changed.push(a.path.as_slice());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    changed.push(b.path.as_slice());
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    if a.kind != b.kind || a.id != b.id {
                        changed.push(b.path.as_slice());
                    }
                    i += 1;
                    j += 1;
                }
            },
        }
    }
}

/// A name git would refuse or treat otherwise on some file system (read-cache.c's
/// `verify_path` with `core.protectNTFS`, on by default): `.git` in any case followed only
/// by dots, spaces or an NTFS stream, `git~1`-like short names, a backslash; and the files
/// that make git read attributes or submodules.
fn left_to_git_name(name: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    let dotgit_like = lower.strip_prefix(b".git").is_some_and(|rest| {
        rest.iter().all(|b| matches!(b, b'.' | b' ')) || rest.first() == Some(&b':')
    });
    dotgit_like
        || lower.starts_with(b"git~")
        || name.contains(&b'\\')
        || lower == b".gitattributes"
        || lower == b".gitmodules"
        || !plain_path(name)
}

/// One walk of the working tree against the index.
struct Walk<'a> {
    root: &'a Path,
    left_out: &'a [Vec<u8>],
    /// The index's entries, sorted by path.
    tracked: &'a [IndexEntry],
    /// The ignore lists in force, the most specific last.
    ignores: Vec<gix_glob::search::pattern::List<Ignore>>,
    /// The entries of the tree to be.
    out: Vec<IndexEntry>,
    /// The index file's modification time: an entry not older is "racily clean".
    index_time: Option<(i64, i64)>,
    store: &'a Store,
    objects: LooseWriter,
    /// The paths read and hashed (not taken from the index).
    hashed: Vec<Vec<u8>>,
}

impl Walk<'_> {
    /// Walks the directory `dir` (relative: `""` or `a/b/`, at `abs`), every untracked file
    /// under it ignored when `ignored`.
    fn dir(
        &mut self,
        dir: &mut Vec<u8>,
        abs: &Path,
        ignored: bool,
        depth: usize,
    ) -> Result<Walked<()>, StoreError> {
        use std::os::unix::ffi::OsStrExt as _;
        if depth > MAX_DEPTH {
            return Ok(Err(LeftToGit));
        }
        let Ok(read) = std::fs::read_dir(abs) else {
            return Ok(Err(LeftToGit));
        };
        let mut names = Vec::new();
        for entry in read {
            let Ok(entry) = entry else {
                return Ok(Err(LeftToGit));
            };
            let Ok(kind) = entry.file_type() else {
                return Ok(Err(LeftToGit));
            };
            names.push((entry.file_name(), kind));
        }
        let mut pushed = false;
        if !ignored
            && names
                .iter()
                .any(|(name, _)| name.as_bytes() == b".gitignore")
        {
            let path = abs.join(".gitignore");
            match ignore_list(&path, Some(self.root))? {
                Some(list) => {
                    self.ignores.push(list);
                    pushed = true;
                }
                None => return Ok(Err(LeftToGit)),
            }
        }
        let walked = self.entries(dir, abs, &names, ignored, depth);
        if pushed {
            self.ignores.pop();
        }
        walked
    }

    fn entries(
        &mut self,
        dir: &mut Vec<u8>,
        abs: &Path,
        names: &[(std::ffi::OsString, std::fs::FileType)],
        ignored: bool,
        depth: usize,
    ) -> Result<Walked<()>, StoreError> {
        use std::os::unix::ffi::OsStrExt as _;
        for (name, kind) in names {
            let name = name.as_bytes();
            if dir.is_empty() && name == b".git" {
                continue;
            }
            if left_to_git_name(name) {
                return Ok(Err(LeftToGit));
            }
            let len = dir.len();
            dir.extend_from_slice(name);
            let walked = self.entry(
                dir,
                &abs.join(std::ffi::OsStr::from_bytes(name)),
                *kind,
                ignored,
                depth,
            );
            dir.truncate(len);
            if walked?.is_err() {
                return Ok(Err(LeftToGit));
            }
        }
        Ok(Ok(()))
    }

    /// The file, link or directory at `path` (relative; `abs`).
    fn entry(
        &mut self,
        path: &mut Vec<u8>,
        abs: &Path,
        kind: std::fs::FileType,
        ignored: bool,
        depth: usize,
    ) -> Result<Walked<()>, StoreError> {
        if left_out_has(self.left_out, path) {
            return Ok(Ok(()));
        }
        if kind.is_dir() {
            path.push(b'/');
            let tracked_below = tracked_below(self.tracked, path);
            let excluded = ignored || self.excluded(&path[..path.len() - 1], true);
            let walked = if excluded && !tracked_below {
                Ok(Ok(()))
            } else {
                self.dir(path, abs, excluded, depth + 1)
            };
            path.pop();
            return walked;
        }
        if !kind.is_file() && !kind.is_symlink() {
            return Ok(Err(LeftToGit));
        }
        let tracked = self.tracked(path);
        if tracked.is_none() && (ignored || self.excluded(path, false)) {
            return Ok(Ok(()));
        }
        let Ok(meta) = std::fs::symlink_metadata(abs) else {
            return Ok(Err(LeftToGit));
        };
        use std::os::unix::fs::MetadataExt as _;
        let file_kind = if meta.file_type().is_symlink() {
            EntryKind::Link
        } else if meta.file_type().is_file() {
            if meta.mode() & 0o100 != 0 {
                EntryKind::BlobExecutable
            } else {
                EntryKind::Blob
            }
        } else {
            return Ok(Err(LeftToGit));
        };
        // What git compares (read-cache.c's `ce_match_stat_basic`), and more: a field it
        // skips can only make this hash a file git would not, to the same id.
        let stat = [
            meta.ctime() as u32,
            meta.ctime_nsec() as u32,
            meta.mtime() as u32,
            meta.mtime_nsec() as u32,
            meta.dev() as u32,
            meta.ino() as u32,
            u32::from(file_kind as u16),
            meta.uid(),
            meta.gid(),
            meta.size() as u32,
        ];
        if let Some(entry) = tracked {
            let racy = self.index_time.is_none_or(|(secs, nanos)| {
                (i64::from(entry.stat[2]), i64::from(entry.stat[3])) >= (secs, nanos)
            });
            // git writes a racily clean entry's size as 0 ("smudged"), to be read again.
            let smudged =
                entry.stat[9] == 0 && entry.id != ObjectId::empty_blob(gix::hash::Kind::Sha1);
            if entry.stat == stat && entry.kind == file_kind && !racy && !smudged {
                self.out.push(IndexEntry {
                    stat,
                    ..entry.clone()
                });
                return Ok(Ok(()));
            }
        }
        let bytes = if file_kind == EntryKind::Link {
            use std::os::unix::ffi::OsStrExt as _;
            match std::fs::read_link(abs) {
                Ok(target) => target.as_os_str().as_bytes().to_vec(),
                Err(_) => return Ok(Err(LeftToGit)),
            }
        } else {
            if meta.len() > MAX_FILE_BYTES {
                return Ok(Err(LeftToGit));
            }
            match read_regular_within(abs, MAX_FILE_BYTES) {
                Some(bytes) => bytes,
                None => return Ok(Err(LeftToGit)),
            }
        };
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
            .map_err(git_err)?;
        if !self.store.holds(id)? {
            self.objects.write(gix::objs::Kind::Blob, &bytes)?;
        }
        self.out.push(IndexEntry {
            path: path.clone(),
            kind: file_kind,
            id,
            stat,
            not_compared: false,
        });
        // git writes every directory above a file it read again, whatever it found.
        self.hashed.push(path.clone());
        Ok(Ok(()))
    }

    /// The index's entry for `path`.
    fn tracked(&self, path: &[u8]) -> Option<&IndexEntry> {
        self.tracked
            .binary_search_by(|e| e.path.as_slice().cmp(path))
            .ok()
            .and_then(|at| self.tracked.get(at))
    }

    /// Whether the ignore lists in force exclude `path`: the most specific list with a
    /// matching pattern decides, by its last one (dir.c's `last_matching_pattern_from_lists`).
    fn excluded(&self, path: &[u8], is_dir: bool) -> bool {
        excluded_by(&self.ignores, path, is_dir)
    }
}

#[cfg(test)]
mod tests;
