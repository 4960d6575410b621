//! Where a plain repository is, found without gix's open: a `.git` directory owned by this
//! user above the caller's directory, its configuration files read in gix's order, and
//! nothing in the environment or the configuration that moves anything. gix's open builds
//! its whole configuration cache, environment overrides included, on every call: a third of
//! a `get-task` (docs/architecture.md, "Performance"). Anything else (a linked
//! worktree, `GIT_DIR`, an include, an extension, another owner) is left to gix, opened at
//! once; a plain repository opens gix only when a call needs more than refs, loose objects
//! and configuration values ([`Repo::get`]). How gix opens a repository for the store is
//! here too, so that both roads are in one place.

use std::cell::OnceCell;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use super::error::StoreError;

/// What a store's object cache holds at most: a few configuration files, plans and
/// commits, not a history.
pub(super) const OBJECT_CACHE_BYTES: usize = 1 << 20;

/// Opens the repository containing `dir` with replace refs off: every object read is the
/// object stored under its id, whatever `refs/replace/` holds (docs/integrity.md, "Hermetic
/// verification"), as every git command of ours runs with `GIT_NO_REPLACE_OBJECTS`.
pub(super) fn open_without_replacements(dir: &Path) -> Result<gix::Repository, StoreError> {
    refuse_waiting_files(dir)?;
    const NO_REPLACE: &str = "core.useReplaceRefs=false";
    let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
    trust.full = trust.full.config_overrides([NO_REPLACE]);
    trust.reduced = trust.reduced.config_overrides([NO_REPLACE]);
    gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
        dir,
        Default::default(),
        trust,
    )
    .map(gix::Repository::from)
    .map_err(|e| {
        let text = e.to_string();
        // gix's own words for "none found" say what ours would: said once, in ours.
        StoreError::NotARepository(if text.starts_with("Could not find a git repository") {
            format!(
                "not a git repository: neither {} nor any directory above it is in one",
                dir.display()
            )
        } else {
            format!("cannot open the git repository: {text}")
        })
    })
}

/// `GIT_*` variables that change nothing this reader decides, or that it reads as gix does
/// (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_NOSYSTEM`): who commits (read where
/// the identity is), git's own paths and prompts, the program's own settings. Any other one set
/// (`GIT_DIR`, `GIT_CONFIG_*`, `GIT_OBJECT_DIRECTORY`, `GIT_INDEX_FILE` as hooks set it, …)
/// leaves the repository to gix.
const INERT: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_EXEC_PATH",
    "GIT_SSL_CAINFO",
    "GIT_TERMINAL_PROMPT",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_DEFAULT_REF_FORMAT",
];

/// What a plain repository's layout gives without gix.
pub(super) struct Plain {
    pub workdir: PathBuf,
    pub git_dir: PathBuf,
    /// The configuration files gix reads, in its order: system, user, repository.
    pub config: gix::config::File,
}

/// The plain repository holding `dir`, or `None` for gix to find (and explain) whatever is
/// there.
pub(super) fn plain(dir: &Path) -> Option<Plain> {
    if !environment_is_inert() || !is_plain_path(dir) {
        return None;
    }
    let (workdir, git_dir) = find(dir)?;
    let config = configuration(&git_dir)?;
    Some(Plain {
        workdir,
        git_dir,
        config,
    })
}

fn environment_is_inert() -> bool {
    inert(crate::environ::names())
}

/// True when none of the variables `names` is a `GIT_*` one beyond [`INERT`].
fn inert<N: AsRef<OsStr>>(names: impl IntoIterator<Item = N>) -> bool {
    names.into_iter().all(|name| {
        let name = name.as_ref().as_encoded_bytes();
        !name.starts_with(b"GIT_")
            || name.starts_with(b"GIT_ORCHESTRATE_")
            || INERT.iter().any(|inert| inert.as_bytes() == name)
    })
}

/// Absolute, and nothing but names on the way: gix's discovery and this one then cut it
/// the same way.
fn is_plain_path(dir: &Path) -> bool {
    dir.is_absolute()
        && dir
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && !dir.components().any(|c| c.as_os_str() == OsStr::new(".git"))
        // Written as its parts say: no `.` parts, doubled or trailing slashes.
        && dir.components().collect::<PathBuf>().as_os_str() == dir.as_os_str()
}

/// The working tree and git directory: the first directory from `dir` upwards holding a
/// `.git` directory, on the same filesystem as `dir`, with nothing on the way that could be
/// a git directory itself (a bare repository, gix's to find), all owned by this user.
fn find(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let device = std::fs::metadata(dir).ok()?.dev();
    let me = rustix::process::geteuid().as_raw();
    for candidate in dir.ancestors() {
        let meta = std::fs::metadata(candidate).ok()?;
        if meta.dev() != device || candidate.join("HEAD").exists() {
            return None;
        }
        let dot_git = candidate.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(git) if git.file_type().is_dir() => {
                let plain = meta.uid() == me
                    && git.uid() == me
                    && dot_git.join("HEAD").is_file()
                    && dot_git.join("objects").is_dir()
                    && dot_git.join("refs").is_dir()
                    && !dot_git.join("commondir").exists()
                    // A FIFO or device there goes to gix's open, which refuses it
                    // (`refuse_waiting_files`): the git our commands run would wait on it for
                    // ever, and a call that never opens gix would go on without a word.
                    && regular_or_absent(&dot_git.join("packed-refs"))
                    && regular_or_absent(&dot_git.join("objects/info/alternates"));
                return plain.then(|| (candidate.to_path_buf(), dot_git));
            }
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        }
    }
    None
}

/// True when `path` (a link followed) is a regular file or nothing at all.
fn regular_or_absent(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// The configuration gix would read for this repository (system, `$XDG_CONFIG_HOME/git/
/// config`, `~/.gitconfig`, the repository's, with replace refs off as the store opens
/// gix), or `None` when any of it asks for more than reading values: an include, an
/// extension, a `core.worktree`, a bare repository, a file gix cannot parse.
fn configuration(git_dir: &Path) -> Option<gix::config::File> {
    use gix::config::Source;
    let mut files = user_and_system_configuration();
    files.push((Source::Local, git_dir.join("config")));
    let mut merged = gix::config::File::new(gix::config::file::Metadata::api());
    let mut worktree_config = None;
    for (source, path) in files {
        let file = read(source, &path)?;
        if source == Source::Local {
            if let Some(sections) = file.sections_by_name("extensions") {
                for section in sections {
                    for key in section.value_names() {
                        if !key.eq_ignore_ascii_case("worktreeconfig") {
                            return None;
                        }
                    }
                }
            }
            worktree_config = Some(file.boolean("extensions.worktreeConfig").ok()? == Some(true));
        }
        merged.append(file).ok()?;
    }
    // gix's own settings (`gitoxide.core.refsNamespace`, …) change how it reads refs.
    if merged.sections_by_name("gitoxide").is_some() {
        return None;
    }
    if worktree_config? {
        merged
            .append(read(Source::Worktree, &git_dir.join("config.worktree"))?)
            .ok()?;
    }
    let format = merged.integer("core.repositoryformatversion").ok()?;
    if !matches!(format, None | Some(0 | 1))
        || merged.string("core.worktree").is_some()
        || merged.boolean("core.bare").ok()? == Some(true)
    {
        return None;
    }
    Some(merged)
}

/// Refuses a FIFO, socket or device where gix (and git) open a file of the repository
/// holding `dir` with a plain `open` as they open it: the user's and the system's
/// configuration, and the git directory's `HEAD`, `config`, `config.worktree`,
/// `commondir`, `packed-refs` and `objects/info/alternates` (the common directory's too).
/// gix would wait on it for ever.
fn refuse_waiting_files(dir: &Path) -> Result<(), StoreError> {
    use super::regular::refuse_waiting;
    for (_, file) in user_and_system_configuration() {
        refuse_waiting(&file)?;
    }
    let git_dir = match std::env::var_os("GIT_DIR").filter(|v| !v.is_empty()) {
        Some(named) => PathBuf::from(named),
        None => {
            let mut found = None;
            for candidate in dir.ancestors() {
                let dot_git = candidate.join(".git");
                // A link to the git directory is one (git follows it).
                let Ok(meta) = std::fs::metadata(&dot_git) else {
                    continue;
                };
                if meta.is_dir() {
                    found = Some(dot_git);
                    break;
                }
                // A `.git` file names the git directory; gix reads it.
                match linked_git_dir(&dot_git) {
                    Ok(Some(linked)) => {
                        found = Some(linked);
                        break;
                    }
                    Ok(None) => continue,
                    // Read without waiting; only a failure is looked at again.
                    Err(_) => refuse_waiting(&dot_git)?,
                }
            }
            let Some(found) = found else {
                return Ok(());
            };
            found
        }
    };
    let mut dirs = vec![git_dir.clone()];
    let commondir = git_dir.join("commondir");
    // Read without waiting; only a failure other than its absence is looked at again.
    match super::regular::read_to_string(&commondir) {
        Ok(text) => dirs.push(git_dir.join(text.trim_end())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => refuse_waiting(&commondir)?,
    }
    for dir in &dirs {
        for file in [
            "HEAD",
            "config",
            "config.worktree",
            "packed-refs",
            "objects/info/alternates",
        ] {
            refuse_waiting(&dir.join(file))?;
        }
    }
    Ok(())
}

/// The system's and the user's configuration files as gix (and git) choose them, in gix's
/// order, each once: a variable names a file in place of the usual ones (set but empty: none
/// at that level), and `GIT_CONFIG_NOSYSTEM` is a boolean as git reads one.
fn user_and_system_configuration() -> Vec<(gix::config::Source, PathBuf)> {
    use gix::config::Source;
    let mut env = |name: &str| std::env::var_os(name);
    let mut files: Vec<(Source, PathBuf)> = Vec::new();
    for source in [Source::System, Source::Git, Source::User] {
        // `GIT_CONFIG_GLOBAL` is both user files; gix reads a path once.
        if let Some(path) = source.storage_location(&mut env)
            && !path.as_os_str().is_empty()
            && !files.iter().any(|(_, seen)| *seen == path)
        {
            files.push((source, path));
        }
    }
    files
}

/// The git directory a `.git` file at `dot_git` names (`gitdir: <path>`, relative to the
/// directory holding it), read without waiting: `None` for a file saying anything else, an
/// `InvalidInput` error for a FIFO, socket or device (git reads no more than a line).
pub(super) fn linked_git_dir(dot_git: &Path) -> std::io::Result<Option<PathBuf>> {
    let bytes = super::regular::read_within(dot_git, 64 << 10)?;
    let Some(line) = bytes.strip_prefix(b"gitdir: ") else {
        return Ok(None);
    };
    let Ok(linked) = gix::path::from_byte_slice(line.trim_ascii_end()) else {
        return Ok(None);
    };
    Ok(Some(match dot_git.parent() {
        Some(holder) => holder.join(linked),
        None => linked.to_path_buf(),
    }))
}

/// Where git finds the user's `git/ignore` and `git/attributes` (and `git/config`):
/// `$XDG_CONFIG_HOME`, else `~/.config`; an empty variable is an unset one, as git reads it.
pub(super) fn git_config_home() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// One configuration file as gix reads it, without following includes; an absent file is
/// an empty one. `None` when it includes others or does not parse.
fn read(source: gix::config::Source, path: &Path) -> Option<gix::config::File> {
    let meta = gix::config::file::Metadata::from(source)
        .at(path)
        .with(gix::sec::Trust::Full);
    let bytes = match super::regular::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(_) => return None,
    };
    let mut bytes = bytes;
    let file = gix::config::File::from_bytes_owned(
        &mut bytes,
        meta,
        gix::config::file::init::Options::default(),
    )
    .ok()?;
    let includes = file.sections().any(|s| {
        let name = s.header().name();
        name.eq_ignore_ascii_case(b"include") || name.eq_ignore_ascii_case(b"includeif")
    });
    (!includes).then_some(file)
}

/// `repo`, reading its packs through a cache of decompressed entries of `bytes`.
fn cached(mut repo: gix::Repository, bytes: usize) -> gix::Repository {
    repo.objects.set_pack_cache(move || {
        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(bytes))
    });
    repo
}

/// The store's gix repository, opened at once where [`plain`] did not find the repository,
/// else on first need.
pub(super) struct Repo {
    opened: OnceCell<gix::Repository>,
    /// Where discovery starts when gix is opened late.
    from: PathBuf,
    workdir: Option<PathBuf>,
    git_dir: PathBuf,
    common_dir: PathBuf,
    /// The plain repository's configuration; gix's own otherwise.
    config: Option<gix::config::File>,
    /// gix reads packs through a cache of decompressed entries of this many bytes, once
    /// opened ([`Repo::with_pack_cache`]).
    pack_cache: Option<usize>,
}

impl Repo {
    pub(super) fn opened(repo: gix::Repository) -> Repo {
        Repo {
            from: repo.git_dir().to_path_buf(),
            workdir: repo.workdir().map(Path::to_path_buf),
            git_dir: repo.git_dir().to_path_buf(),
            common_dir: repo.common_dir().to_path_buf(),
            config: None,
            opened: OnceCell::from(repo),
            pack_cache: None,
        }
    }

    /// This repository, its packs read through a cache of decompressed entries of `bytes`:
    /// set now when gix is open, else when it opens; a plain repository whose objects are all
    /// loose never opens it (`loose.rs` reads them).
    pub(super) fn with_pack_cache(&self, bytes: usize) -> Repo {
        let opened = OnceCell::new();
        if let Some(repo) = self.opened.get() {
            let _ = opened.set(cached(repo.clone(), bytes));
        }
        Repo {
            opened,
            from: self.from.clone(),
            workdir: self.workdir.clone(),
            git_dir: self.git_dir.clone(),
            common_dir: self.common_dir.clone(),
            config: self.config.clone(),
            pack_cache: Some(bytes),
        }
    }

    pub(super) fn plain(from: &Path, plain: Plain) -> Repo {
        Repo {
            opened: OnceCell::new(),
            from: from.to_path_buf(),
            workdir: Some(plain.workdir),
            common_dir: plain.git_dir.clone(),
            git_dir: plain.git_dir,
            config: Some(plain.config),
            pack_cache: None,
        }
    }

    /// True when the repository is a plain one ([`plain`]), whether or not gix was opened
    /// since.
    pub(super) fn is_plain(&self) -> bool {
        self.config.is_some()
    }

    /// True when a ref's name is its file's path under the git directory: a plain
    /// repository, or gix's without a namespace (`GIT_NAMESPACE` puts every ref under
    /// `refs/namespaces/`, which gix resolves and a direct read would not).
    pub(super) fn refs_are_files(&self) -> bool {
        self.config.is_some() || self.opened.get().is_some_and(|r| r.namespace().is_none())
    }

    /// gix's repository, opened now if it was not.
    pub(super) fn get(&self) -> Result<&gix::Repository, StoreError> {
        if let Some(repo) = self.opened.get() {
            return Ok(repo);
        }
        let mut repo = open_without_replacements(&self.from)?;
        repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
        if let Some(bytes) = self.pack_cache {
            repo = cached(repo, bytes);
        }
        if repo.git_dir() != self.git_dir {
            return Err(StoreError::NotARepository(format!(
                "the repository at {} moved while it was read (now {})",
                self.git_dir.display(),
                repo.git_dir().display()
            )));
        }
        Ok(self.opened.get_or_init(|| repo))
    }

    pub(super) fn workdir(&self) -> Option<&Path> {
        self.workdir.as_deref()
    }

    pub(super) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    pub(super) fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    pub(super) fn index_path(&self) -> PathBuf {
        match self.opened.get() {
            Some(repo) => repo.index_path(),
            None => self.git_dir.join("index"),
        }
    }

    /// Where the loose objects are: the object store gix opened, else the git directory's
    /// `objects`.
    pub(super) fn objects_dir(&self) -> PathBuf {
        match self.opened.get() {
            Some(repo) => repo.objects.store_ref().path().to_path_buf(),
            None => self.common_dir.join("objects"),
        }
    }

    /// The last value of `key` across the configuration, as gix's snapshot gives it.
    pub(super) fn config_string(&self, key: &str) -> Option<gix::bstr::BString> {
        self.with_config(|config| config.string(key))
    }

    /// `read` of the configuration: the plain repository's, else gix's (opened then).
    pub(super) fn with_config<R>(&self, read: impl FnOnce(&gix::config::File) -> R) -> R {
        if let Some(config) = &self.config {
            return read(config);
        }
        match self.opened.get() {
            Some(repo) => read(repo.config_snapshot().plumbing()),
            // Not reached: a repository is either plain (its configuration read) or opened.
            None => read(&gix::config::File::default()),
        }
    }

    /// The object format: a plain repository has none but SHA-1 (an `objectFormat`
    /// extension leaves it to gix).
    pub(super) fn object_hash(&self) -> gix::hash::Kind {
        match self.opened.get() {
            Some(repo) => repo.object_hash(),
            None => gix::hash::Kind::Sha1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::test_git::{git, repo_with_a_commit};
    use pretty_assertions::assert_eq;

    /// The paths gix's own discovery gives for `dir`.
    fn gix_paths(dir: &Path) -> (Option<PathBuf>, PathBuf, PathBuf) {
        let repo = open_without_replacements(dir).unwrap();
        (
            repo.workdir().map(Path::to_path_buf),
            repo.git_dir().to_path_buf(),
            repo.common_dir().to_path_buf(),
        )
    }

    #[test]
    fn a_plain_repository_is_found_where_gix_finds_it() {
        let (temp, _) = repo_with_a_commit();
        let root = temp.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        for dir in [root.to_path_buf(), root.join("a"), root.join("a/b")] {
            let plain = plain(&dir).unwrap_or_else(|| panic!("{} is plain", dir.display()));
            assert_eq!(
                (Some(plain.workdir), plain.git_dir.clone(), plain.git_dir),
                gix_paths(&dir),
                "{}",
                dir.display()
            );
        }
    }

    #[test]
    fn every_other_layout_is_left_to_gix() {
        let (temp, _) = repo_with_a_commit();
        let root = temp.path();
        let outside = tempfile::tempdir().unwrap();
        let case = |name: &str, dir: &Path| {
            assert!(
                plain(dir).is_none(),
                "{name}: {} is left to gix",
                dir.display()
            );
        };
        // A linked worktree: its `.git` is a file naming its own git directory.
        let linked = outside.path().join("linked");
        git(
            root,
            &[
                "worktree",
                "add",
                "--quiet",
                "--detach",
                linked.to_str().unwrap(),
            ],
        );
        case("linked worktree", &linked);
        // Inside the git directory, and a bare repository.
        case("inside .git", &root.join(".git"));
        case("inside .git/refs", &root.join(".git/refs"));
        let bare = outside.path().join("bare.git");
        git(
            outside.path(),
            &["init", "--quiet", "--bare", bare.to_str().unwrap()],
        );
        case("bare", &bare);
        // Paths gix would cut otherwise.
        case("relative", Path::new("."));
        case("with ..", &root.join("x/.."));
        case("with .", &root.join("./."));
        case("with a .", &root.join("a/./b"));
        case("with //", Path::new(&format!("{}//a", root.display())));
        case(
            "with a trailing /",
            Path::new(&format!("{}/", root.display())),
        );
        // No repository at all.
        case("no repository", outside.path());
        // Configuration asking for more than values.
        for (key, value) in [
            ("include.path", "/dev/null"),
            ("includeIf.gitdir:/nowhere/.path", "/dev/null"),
            ("core.worktree", "/tmp"),
            ("extensions.objectFormat", "sha1"),
            ("extensions.refStorage", "files"),
        ] {
            let (temp, _) = repo_with_a_commit();
            git(temp.path(), &["config", key, value]);
            case(key, temp.path());
        }
        let (temp, _) = repo_with_a_commit();
        git(
            temp.path(),
            &["config", "core.repositoryformatversion", "2"],
        );
        case("a format version from later", temp.path());
        let (temp, _) = repo_with_a_commit();
        std::fs::write(temp.path().join(".git/config"), "[core\n").unwrap();
        case("a configuration that does not parse", temp.path());
        // A `.git` that is a link to a git directory.
        let (temp, _) = repo_with_a_commit();
        let linked_git = outside.path().join("linked-git");
        std::os::unix::fs::symlink(temp.path().join(".git"), &linked_git).unwrap();
        let holder = outside.path().join("holder");
        std::fs::create_dir(&holder).unwrap();
        std::os::unix::fs::symlink(&linked_git, holder.join(".git")).unwrap();
        case("a linked .git", &holder);
    }

    #[test]
    fn only_variables_read_as_gix_reads_them_or_that_move_nothing_keep_the_repository_plain() {
        for name in [
            "GIT_AUTHOR_NAME",
            "GIT_ORCHESTRATE_WORKFLOW",
            "GIT_CONFIG_GLOBAL",
            "PATH",
        ] {
            assert!(inert([std::ffi::OsString::from(name)]), "{name}");
        }
        for name in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_CEILING_DIRECTORIES",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_PARAMETERS",
            "GIT_NAMESPACE",
            "GIT_NO_REPLACE_OBJECTS",
            "GIT_ANYTHING_NEW",
        ] {
            assert!(!inert([std::ffi::OsString::from(name)]), "{name}");
        }
    }

    /// What a store reads without gix is what it reads through gix: refs loose, packed and
    /// missing, HEAD on a branch, detached and unborn, the configuration's values.
    #[test]
    fn a_plain_store_reads_what_gix_reads() {
        let (temp, head) = repo_with_a_commit();
        let dir = temp.path();
        git(dir, &["config", "user.name", "Plain Person"]);
        git(dir, &["config", "orchestrate.workflow", "w1"]);
        git(
            dir,
            &["update-ref", "refs/orchestrator/workflows/w1", &head],
        );
        git(
            dir,
            &[
                "update-ref",
                "refs/orchestrator/remotes/o/workflows/w1",
                &head,
            ],
        );
        let compare = |what: &str| {
            let plain = Store::discover_selected(dir, None).unwrap();
            assert!(plain.repo.opened.get().is_none(), "{what}: plain");
            let through_gix =
                Store::addressing(Store::opened(open_without_replacements(dir).unwrap()), "w1")
                    .unwrap();
            let read = |s: &Store| {
                format!(
                    "workflow {} tip {:?} head {:?} {:?} main {:?} missing {:?} remotes {:?} \
                     none {:?} identity {:?} settings {:?} remotes {:?} index {}",
                    s.workflow(),
                    s.tip().unwrap(),
                    s.head_ref_name().unwrap(),
                    s.head_commit_id().unwrap(),
                    s.peeled_ref("refs/heads/main").unwrap(),
                    s.peeled_ref("refs/heads/nothing").unwrap(),
                    s.refs_under("refs/orchestrator/remotes/").unwrap(),
                    s.refs_under("refs/orchestrator/nothing/").unwrap(),
                    s.identity(),
                    s.settings("user")
                        .iter()
                        .map(|s| (&s.key, &s.value))
                        .collect::<Vec<_>>(),
                    s.remote_names(),
                    s.index_path().display(),
                )
            };
            let (a, b) = (read(&plain), read(&through_gix));
            assert!(
                plain.repo.opened.get().is_none(),
                "{what}: read without gix"
            );
            assert_eq!(a, b, "{what}");
        };
        git(dir, &["branch", "-M", "main"]);
        compare("loose refs, on a branch");
        git(
            dir,
            &["remote", "add", "o", "https://example.invalid/o.git"],
        );
        git(dir, &["checkout", "--quiet", "--detach"]);
        compare("detached");
        git(dir, &["checkout", "--quiet", "--orphan", "unborn"]);
        compare("unborn");
        git(dir, &["checkout", "--quiet", "main"]);
        git(dir, &["pack-refs", "--all"]);
        git(dir, &["gc", "--quiet"]);
        let plain = Store::discover_selected(dir, None).unwrap();
        assert_eq!(
            plain.tip().unwrap().map(|id| id.to_string()),
            Some(head.clone()),
            "packed: read through gix"
        );
    }

    /// A move of a plain repository's ref writes what gix's transaction writes, to the byte:
    /// the ref's file and its reflog, for a new ref and a moved one; a stale expectation is a
    /// lost race and changes nothing.
    #[test]
    fn a_plain_move_writes_what_gixs_transaction_writes() {
        use crate::store::WriteError;
        let name = gix::refs::FullName::try_from("refs/orchestrator/workflows/w").unwrap();
        let signature = gix::actor::Signature {
            name: " Plain Person ".into(),
            email: "p@example.invalid".into(),
            time: gix::date::Time::new(1_700_000_000, 3600),
        };
        let written = |plain: bool| {
            let (temp, _) = repo_with_a_commit();
            let dir = temp.path();
            let one = git(dir, &["hash-object", "-w", "--stdin"]);
            let one = gix::ObjectId::from_hex(one.as_bytes()).unwrap();
            let two = gix::ObjectId::from_hex(
                git(
                    dir,
                    &[
                        "commit-tree",
                        "-m",
                        "x",
                        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                    ],
                )
                .as_bytes(),
            )
            .unwrap();
            let store = if plain {
                Store::discover_selected(dir, Some("w")).unwrap()
            } else {
                Store::addressing(Store::opened(open_without_replacements(dir).unwrap()), "w")
                    .unwrap()
            };
            store
                .update_ref(&name, None, one, "made".into(), &signature)
                .unwrap();
            store
                .update_ref(&name, Some(one), two, "moved: one line".into(), &signature)
                .unwrap();
            let lost = store.update_ref(&name, Some(one), one, "stale".into(), &signature);
            assert!(matches!(lost, Err(WriteError::Conflict)), "{lost:?}");
            let lost = store.update_ref(&name, None, one, "exists".into(), &signature);
            assert!(matches!(lost, Err(WriteError::Conflict)), "{lost:?}");
            assert_eq!(
                store.repo.opened.get().is_none(),
                plain,
                "gix opened only when asked"
            );
            let read = |path: &str| std::fs::read_to_string(dir.join(".git").join(path)).unwrap();
            let reflog = read("logs/refs/orchestrator/workflows/w");
            (
                read("refs/orchestrator/workflows/w").replace(&two.to_string(), "TWO"),
                reflog
                    .replace(&one.to_string(), "ONE")
                    .replace(&two.to_string(), "TWO"),
                dir.join(".git/refs/orchestrator/workflows/w.lock").exists(),
            )
        };
        assert_eq!(written(true), written(false));
        assert_eq!(written(true).0, "TWO\n");
    }
}
