//! The environment of every process git-orchestrate starts (docs/integrity.md, "Hermetic
//! verification"): `git` by an absolute path chosen once, `sh` and `git` pinned first on the
//! commands' PATH, no PATH entry inside the repository, and none of the caller's `GIT_*`
//! variables. The agent runs git-orchestrate with an environment it chose; what a gate's
//! `sh run_tests.sh` or our own `git worktree add` reach must not be its programs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// POSIX puts the shell here; commands are started with it, and `sh` on their PATH is it.
pub const SH: &str = "/bin/sh";

/// Variables that make the programs a command starts run code of the caller's choosing: the
/// dynamic loader's preloads, a shell's start-up file and exported functions, the option
/// and module-path variables of interpreters, test runners and compilers, and the JVM's.
/// Removed from every command's environment, as the `GIT_*` ones are.
const INJECTING: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "IFS",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PERL5OPT",
    "RUBYOPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GCONV_PATH",
    // Where interpreters look for modules first, and what test runners load or are told
    // from outside the repository: a plugin on PYTHONPATH that passes every test, a
    // runner that is not the compiled test.
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "NODE_PATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUSTC",
    "RUSTDOC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_BUILD_RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "GOFLAGS",
];

/// True for a variable of [`INJECTING`], or one that runs a cargo target's tests through a
/// program of the caller's (`CARGO_TARGET_<triple>_RUNNER`).
fn injecting(key: &[u8]) -> bool {
    INJECTING.iter().any(|v| v.as_bytes() == key)
        || (key.starts_with(b"CARGO_TARGET_") && key.ends_with(b"_RUNNER"))
}

/// The variables that load code into a program or a shell it starts ([`INJECTING`], bash's
/// exported functions), as this process has them: our own git commands run without them.
pub fn injecting_vars() -> impl Iterator<Item = OsString> {
    crate::environ::names()
        .filter(|k| {
            let bytes = k.as_encoded_bytes();
            bytes.starts_with(b"BASH_FUNC_") || injecting(bytes)
        })
        .map(OsStr::to_os_string)
}

/// True for a variable no command of ours inherits: `GIT_*`, [`INJECTING`], and bash's
/// exported functions (`BASH_FUNC_name%%`), which replace commands by name.
fn withheld(key: &OsStr) -> bool {
    let bytes = key.as_encoded_bytes();
    bytes.starts_with(b"GIT_") || bytes.starts_with(b"BASH_FUNC_") || injecting(bytes)
}

/// Where the commands of one repository run from: what PATH they get, and which `git`.
#[derive(Clone, Debug)]
pub struct CommandEnv {
    git: PathBuf,
    path: OsString,
    /// Set for a verifier's commands: each runs confined ([`super::confine`]).
    confinement: Option<super::confine::Confinement>,
    /// The repository's directories, as given and resolved ([`canonical_all`]): kept for
    /// [`Self::scratch_dir`], which would resolve them all again.
    inside: Vec<PathBuf>,
}

impl CommandEnv {
    /// The environment for commands run in the repository whose working tree and git
    /// directories are `inside`, from this process's own PATH and `GIT_EXEC_PATH`.
    pub fn for_repository(inside: &[&Path]) -> std::io::Result<CommandEnv> {
        Self::with_git(inside, None)
    }

    /// [`Self::for_repository`] with `git` found already ([`find_git_for`]). Fails when no
    /// tool directory can be made: the commands would then find `sh` wherever PATH says.
    pub fn with_git(inside: &[&Path], git: Option<PathBuf>) -> std::io::Result<CommandEnv> {
        let path = std::env::var_os("PATH");
        let exec_path = std::env::var_os("GIT_EXEC_PATH");
        let inside = canonical_all(inside);
        let git = git.unwrap_or_else(|| find_git(path.as_deref(), exec_path.as_deref(), &inside));
        let clean = clean_path(path.as_deref(), exec_path.as_deref(), &inside);
        let lfs = find_among("git-lfs", &clean);
        let tools = tool_dir(&git, lfs.as_deref(), &inside)?;
        let mut entries = vec![tools];
        entries.extend(clean);
        Ok(CommandEnv {
            confinement: None,
            path: std::env::join_paths(entries).unwrap_or_default(),
            git,
            inside,
        })
    }

    /// The `git` program every git command of ours runs.
    pub fn git(&self) -> &Path {
        &self.git
    }

    /// This environment, with every command confined as `confinement` says.
    pub fn confined(mut self, confinement: super::confine::Confinement) -> CommandEnv {
        self.confinement = Some(confinement);
        self
    }

    pub fn confinement(&self) -> Option<&super::confine::Confinement> {
        self.confinement.as_ref()
    }

    /// [`scratch_dir`] of the repository this environment was made for, whose git directory
    /// is `common_dir`.
    pub fn scratch_dir(&self, common_dir: &Path) -> PathBuf {
        scratch_dir_in(&self.inside, common_dir)
    }

    /// The PATH the commands we start get.
    pub fn path(&self) -> &OsStr {
        &self.path
    }

    /// Commands with `path` as their PATH and nothing else of a repository's (tests of how a
    /// program is found).
    #[cfg(test)]
    pub fn with_path(path: &OsStr) -> CommandEnv {
        CommandEnv {
            git: PathBuf::from("git"),
            path: path.to_os_string(),
            confinement: None,
            inside: Vec::new(),
        }
    }

    /// Where `program` (a bare name) is on [`Self::path`], as `execvp` would find it: the
    /// first entry holding an executable file of that name.
    pub fn find(&self, program: &str) -> Option<PathBuf> {
        std::env::split_paths(&self.path)
            .map(|dir| dir.join(program))
            .find(|candidate| is_executable(candidate))
    }

    /// True when an executable `program` is on [`Self::path`]: what a command naming it runs.
    pub fn finds(&self, program: &str) -> bool {
        self.find(program).is_some()
    }

    /// Applies this environment to `cmd`: our PATH, and no `GIT_*` variable of the caller's
    /// (git sets `GIT_DIR`, `GIT_INDEX_FILE` and more for hooks; an agent may set
    /// `GIT_EXEC_PATH` or `GIT_CONFIG_*` to reach into what the command's own git does), nor
    /// any that injects code into what the command starts ([`withheld`]).
    pub fn apply(&self, cmd: &mut std::process::Command) {
        let set: Vec<OsString> = cmd
            .get_envs()
            .map(|(k, _)| k)
            .filter(|k| withheld(k))
            .map(OsStr::to_os_string)
            .collect();
        for key in crate::environ::names().filter(|k| withheld(k)) {
            cmd.env_remove(key);
        }
        for key in set {
            cmd.env_remove(key);
        }
        cmd.env("PATH", &self.path);
    }
}

/// The `git` to run for the repository whose directories are `inside`, from this process's
/// PATH and `GIT_EXEC_PATH` ([`find_git`]).
pub fn find_git_for(inside: &[&Path]) -> PathBuf {
    find_git(
        std::env::var_os("PATH").as_deref(),
        std::env::var_os("GIT_EXEC_PATH").as_deref(),
        &canonical_all(inside),
    )
}

/// The environment of a process that knows no repository (unit tests, `demo`'s own setup).
#[cfg(test)]
pub fn unconfined() -> &'static CommandEnv {
    static ENV: OnceLock<CommandEnv> = OnceLock::new();
    ENV.get_or_init(|| CommandEnv::for_repository(&[]).expect("a tool directory"))
}

/// `dirs`, each as named and as resolved; one named twice (a repository's git directory is
/// its common directory) is resolved once.
fn canonical_all(dirs: &[&Path]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (at, dir) in dirs.iter().enumerate() {
        if dirs[..at].contains(dir) {
            continue;
        }
        out.push(dir.to_path_buf());
        if let Ok(real) = real_path(dir) {
            out.push(real);
        }
    }
    out
}

/// `path` with every link resolved, as `Path::canonicalize` gives it, in three system calls
/// whatever its depth: the kernel walks it once (`open` with `O_PATH`) and names what it
/// reached (`/proc/self/fd`). glibc's `realpath` asks `readlink` of each component in turn,
/// five calls for `/tmp/x/repo/.git`, and a call that runs a command resolves some thirty
/// paths (27 in a `submit-work --test-command true`: its repository's, each PATH entry, the
/// tools found there), so the link's name and its answer are made on the stack: the result
/// is the one allocation (with rustix's copy of a path of 256 bytes or more for `open`).
/// Wherever that fails or /proc does not name it plainly (no descriptor left, a link
/// `fs.protected_symlinks` will not let `open` follow, /proc not mounted, a path removed
/// meanwhile, an answer that fills the buffer: Linux gives at most 4095 bytes and refuses a
/// longer one, but older kernels on large pages gave more), as std does: an entry judged by
/// its resolved path must not be judged by its name instead because `open` failed where
/// `realpath` would not.
fn real_path(path: &Path) -> std::io::Result<PathBuf> {
    use rustix::fs::{CWD, Mode, OFlags};
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(opened) = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) else {
        return path.canonicalize();
    };
    let mut link = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0";
    let prefix = b"/proc/self/fd/".len();
    let fd = rustix::path::DecInt::from_fd(&opened);
    let digits = fd.as_bytes();
    let Some(slot) = link.get_mut(prefix..prefix + digits.len()) else {
        return path.canonicalize();
    };
    slot.copy_from_slice(digits);
    // Left unset: zeroing 4 KB thirty times a call costs more than the rest of this.
    let mut buffer = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
    match rustix::fs::readlinkat_raw(CWD, &link[..prefix + digits.len()], &mut buffer) {
        // An answer that filled the buffer may have been cut short.
        Ok((named, rest))
            if !rest.is_empty() && named.starts_with(b"/") && !named.ends_with(b" (deleted)") =>
        {
            Ok(PathBuf::from(OsStr::from_bytes(named)))
        }
        _ => path.canonicalize(),
    }
}

/// True when `entry` is a PATH entry that may name the machine's programs: absolute, not
/// inside the repository, and not git's exec path as the caller set it.
fn trusted_entry(entry: &Path, exec_path: Option<&OsStr>, inside: &[PathBuf]) -> bool {
    trusted_entry_real(entry, exec_path, inside).is_some()
}

/// [`trusted_entry`], giving the entry as resolved (itself when it cannot be) when it is.
fn trusted_entry_real(
    entry: &Path,
    exec_path: Option<&OsStr>,
    inside: &[PathBuf],
) -> Option<PathBuf> {
    if !entry.is_absolute() {
        // "", "." and "bin" name the directory the command runs in: the repository's.
        return None;
    }
    if exec_path.is_some_and(|e| Path::new(e) == entry) {
        return None;
    }
    let real = real_path(entry).unwrap_or_else(|_| entry.to_path_buf());
    (!inside
        .iter()
        .any(|dir| within(entry, dir) || within(&real, dir)))
    .then_some(real)
}

/// True when `path` is `dir` or below it, compared as bytes: the paths here are absolute
/// and resolved, and a comparison by components costs more than the rest of a command.
fn within(path: &Path, dir: &Path) -> bool {
    let (path, dir) = (
        path.as_os_str().as_encoded_bytes(),
        dir.as_os_str().as_encoded_bytes(),
    );
    let dir = dir.strip_suffix(b"/").unwrap_or(dir);
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
}

/// The PATH entries a command may look programs up in: `path`'s, in order, without the
/// untrusted ones ([`trusted_entry`]).
pub fn clean_path(
    path: Option<&OsStr>,
    exec_path: Option<&OsStr>,
    inside: &[PathBuf],
) -> Vec<PathBuf> {
    std::env::split_paths(path.unwrap_or_default())
        .filter(|entry| trusted_entry(entry, exec_path, inside))
        .collect()
}

/// True when an executable `program` is on the PATH the commands of the repository whose
/// directories are `inside` get ([`clean_path`]): what a gate naming it would run.
pub fn on_commands_path(program: &str, inside: &[&Path]) -> bool {
    let path = std::env::var_os("PATH");
    let exec_path = std::env::var_os("GIT_EXEC_PATH");
    clean_path(
        path.as_deref(),
        exec_path.as_deref(),
        &canonical_all(inside),
    )
    .iter()
    .any(|dir| is_executable(&dir.join(program)))
}

/// The system's temporary directories, as named and as resolved.
pub(crate) fn temp_dirs() -> Vec<PathBuf> {
    with_real(vec![
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
        std::env::temp_dir(),
    ])
}

/// This user's home directory, as named and as resolved.
fn home_dirs() -> Vec<PathBuf> {
    with_real(
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .into_iter()
            .collect(),
    )
}

fn with_real(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    dirs.into_iter()
        .flat_map(|d| {
            let real = real_path(&d).ok();
            std::iter::once(d).chain(real)
        })
        .filter(|d| d.is_absolute() && d != Path::new("/"))
        .collect()
}

/// The `git` to run: the first executable `git` in a trusted PATH entry. When there is
/// none, the one in git's exec path (git runs us with it first on PATH), then plain `git`.
pub fn find_git(path: Option<&OsStr>, exec_path: Option<&OsStr>, inside: &[PathBuf]) -> PathBuf {
    find_tool("git", path, exec_path, inside)
        .or_else(|| {
            std::env::split_paths(path.unwrap_or_default())
                .filter(|e| e.is_absolute())
                .map(|dir| dir.join("git"))
                .find(|candidate| is_executable(candidate))
        })
        .unwrap_or_else(|| PathBuf::from("git"))
}

/// The program `name` to run: among the executables of that name in trusted PATH entries
/// ([`trusted_entry`]), the first that is the system's ([`system_installed`]), else the
/// first one at all. A PATH the caller chose can put any directory first; a program the
/// system installed is one the caller's account could not have written.
pub fn find_tool(
    name: &str,
    path: Option<&OsStr>,
    exec_path: Option<&OsStr>,
    inside: &[PathBuf],
) -> Option<PathBuf> {
    let mut first = None;
    // Every command opens a session and finds git: an entry is resolved only when it holds one.
    for dir in std::env::split_paths(path.unwrap_or_default()) {
        let candidate = dir.join(name);
        if !is_executable(&candidate) || !trusted_entry(&dir, exec_path, inside) {
            continue;
        }
        if system_installed(&candidate) {
            return Some(candidate);
        }
        first.get_or_insert(candidate);
    }
    first
}

/// [`find_tool`] among `dirs`, PATH entries already judged trusted ([`clean_path`]).
fn find_among(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let mut found = dirs
        .iter()
        .map(|dir| dir.join(name))
        .filter(|candidate| is_executable(candidate));
    let first = found.next()?;
    if system_installed(&first) {
        return Some(first);
    }
    found.find(|c| system_installed(c)).or(Some(first))
}

/// True when `program`, followed through its links, lies in a directory owned by root that
/// no one else may write, outside the temporary directories and this user's home: where a
/// package manager installs, not where an account's own files go.
fn system_installed(program: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(real) = real_path(program) else {
        return false;
    };
    // Resolved once per process: the environment does not change under it.
    static SCRATCH: OnceLock<Vec<PathBuf>> = OnceLock::new();
    let scratch = SCRATCH.get_or_init(|| {
        let mut dirs = temp_dirs();
        dirs.extend(home_dirs());
        dirs
    });
    if scratch.iter().any(|d| within(&real, d)) {
        return false;
    }
    let owned_by_root =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0);
    owned_by_root(&real) && real.parent().is_some_and(owned_by_root)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// This user's directory (`git-orchestrate-<uid>`) in the system's temporary directory, or in
/// `/tmp` when TMPDIR lies inside the repository.
fn temp_base(inside: &[PathBuf]) -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    let temp = std::env::temp_dir();
    let temp = if trusted_entry(&temp, None, inside) {
        temp
    } else {
        PathBuf::from("/tmp")
    };
    temp.join(format!("git-orchestrate-{uid}"))
}

/// Where the tool directory lives: the user's cache (`$XDG_CACHE_HOME`, `~/.cache`), which
/// stays put between runs, else the system's temporary directory; never in the repository.
fn cache_dir(inside: &[PathBuf]) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".cache"))
        })
        .map(|c| c.join("git-orchestrate"));
    match cache {
        Some(dir) if trusted_entry(&dir, None, inside) => dir,
        _ => temp_base(inside),
    }
}

/// Where the scratch worktrees of the repository whose git directory is `common_dir` are
/// made: this user's own directory (mode 0700) in the system's temporary directory, never
/// inside the repository, one per repository so that the next run clears what a killed one
/// left. When that directory is not this user's, or not a directory (a link left there,
/// by a confined command of an earlier verification among others, would lead its worktrees
/// anywhere), inside the git directory after all.
pub fn scratch_dir(inside: &[&Path], common_dir: &Path) -> PathBuf {
    scratch_dir_in(&canonical_all(inside), common_dir)
}

/// [`scratch_dir`], `inside` resolved already.
fn scratch_dir_in(inside: &[PathBuf], common_dir: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    real_path(common_dir)
        .unwrap_or_else(|_| common_dir.to_path_buf())
        .hash(&mut hasher);
    let base = temp_base(inside);
    let scratch = base.join(format!("scratch-{:016x}", hasher.finish()));
    if own_dir(&base) && own_dir(&scratch) {
        scratch
    } else {
        common_dir.join("orchestrator/clean-check")
    }
}

/// Makes `dir` (mode 0700) unless it exists; true when it is a directory of this user's, not
/// a link.
fn own_dir(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return false,
    }
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == rustix::process::getuid().as_raw())
}

/// A directory of this user's, outside the repository, holding `sh`, `bash`, `git` and
/// `git-lfs` as links to the system's (or the `git` and `git-lfs` found): first on the
/// commands' PATH, so that a gate's `sh run_tests.sh` runs the system's shell whatever else
/// PATH holds. Made in the user's cache, else in the temporary directory; an error when
/// neither can hold it.
fn tool_dir(git: &Path, lfs: Option<&Path>, inside: &[PathBuf]) -> std::io::Result<PathBuf> {
    let mut last = None;
    for base in [cache_dir(inside), temp_base(inside)] {
        match tool_dir_in(&base, git, lfs) {
            Ok(dir) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no directory for the tools")))
}

fn tool_dir_in(base: &Path, git: &Path, lfs: Option<&Path>) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};

    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    git.hash(&mut hasher);
    lfs.hash(&mut hasher);
    if let Some(parent) = base.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let dir = base.join(format!("tools-{:016x}", hasher.finish()));
    // Someone else's directory, or a link to one, is not ours to trust.
    for d in [base, dir.as_path()] {
        if !own_dir(d) {
            return Err(std::io::Error::other(format!(
                "{} is not a directory of this user's",
                d.display()
            )));
        }
    }
    // bash too, where the system has one: the other shell gates are commonly written for.
    let bash = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .map(Path::new)
        .find(|p| is_executable(p));
    let links = [
        ("sh", Some(Path::new(SH))),
        ("git", Some(git)),
        ("bash", bash),
        ("git-lfs", lfs),
    ];
    for (name, target) in links
        .into_iter()
        .filter_map(|(name, target)| Some((name, target?)))
    {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_deref() == Some(target) {
            continue;
        }
        // Made under a name of this process's own, then renamed over: two processes at once
        // each leave a whole link.
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        if let Err(e) =
            std::os::unix::fs::symlink(target, &tmp).and_then(|()| std::fs::rename(&tmp, &link))
        {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn exe(dir: &Path, name: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `real_path` gives what `canonicalize` gives, or fails where it fails: links absolute
    /// and relative, chains of them, `..` after a link (taken from where the link led), a
    /// file, a dangling link, a loop, a name that is not there, the root.
    #[test]
    fn real_path_resolves_as_canonicalize_does() {
        use std::os::unix::fs::symlink;
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/b/file"), "").unwrap();
        symlink(root.join("a/b"), root.join("abs")).unwrap();
        symlink("a/b/c", root.join("rel")).unwrap();
        symlink("rel", root.join("chain")).unwrap();
        symlink("missing", root.join("dangling")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        symlink("../../file", root.join("a/b/c/up")).unwrap();
        let names = [
            "",
            "a",
            "a/b/c",
            "abs",
            "abs/c",
            "rel",
            "chain",
            "chain/..",
            "chain/../file",
            "rel/up",
            "dangling",
            "loop1",
            "missing",
            "a/b/file",
            "a/b/file/x",
            "abs/../b",
            "a/./b//c/",
        ];
        for name in names {
            let path = root.join(name);
            let ours = real_path(&path).map_err(|e| e.kind());
            let std = path.canonicalize().map_err(|e| e.kind());
            assert_eq!(ours, std, "{name}");
        }
        assert_eq!(real_path(Path::new("/")).unwrap(), PathBuf::from("/"));
        assert_eq!(
            real_path(Path::new("")).map_err(|e| e.kind()),
            Path::new("").canonicalize().map_err(|e| e.kind())
        );
    }

    /// The scratch directory of a repository is this user's own directory in the temporary
    /// one; a link left at its name (a confined command can write the temporary directory)
    /// is not followed: the scratch worktrees go inside the git directory instead.
    #[test]
    fn a_link_at_the_scratch_directorys_name_is_not_followed() {
        let repo = tempfile::tempdir().unwrap();
        let common = repo.path().join(".git");
        std::fs::create_dir(&common).unwrap();
        let scratch = scratch_dir(&[repo.path()], &common);
        assert!(!scratch.starts_with(repo.path()), "{}", scratch.display());
        assert!(std::fs::symlink_metadata(&scratch).unwrap().is_dir());

        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::remove_dir_all(&scratch).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &scratch).unwrap();
        let chosen = scratch_dir(&[repo.path()], &common);
        std::fs::remove_file(&scratch).unwrap();
        assert_eq!(chosen, common.join("orchestrator/clean-check"));
    }

    #[test]
    fn within_is_the_directory_or_below_it_never_a_sibling_with_its_name_as_prefix() {
        let w = |p: &str, d: &str| within(Path::new(p), Path::new(d));
        assert!(w("/tmp", "/tmp"));
        assert!(w("/tmp/x/y", "/tmp"));
        assert!(w("/tmp/x", "/tmp/"));
        assert!(!w("/tmpfoo", "/tmp"));
        assert!(!w("/tm", "/tmp"));
        assert!(!w("/usr/bin", "/tmp"));
    }

    #[test]
    fn path_entries_inside_the_repository_relative_ones_and_the_exec_path_are_dropped() {
        let repo = tempfile::tempdir().unwrap();
        let in_temp = tempfile::tempdir().unwrap();
        let fake_exec = tempfile::tempdir().unwrap();
        let repo_bin = repo.path().join("bin");
        let path = std::env::join_paths([
            repo_bin.clone(),
            PathBuf::from("."),
            PathBuf::from(""),
            fake_exec.path().to_path_buf(),
            in_temp.path().to_path_buf(),
            PathBuf::from("/usr/bin"),
        ])
        .unwrap();
        let inside = canonical_all(&[repo.path()]);
        // A temporary directory's stays: a toolchain or a virtualenv made there is a user's.
        assert_eq!(
            clean_path(Some(&path), Some(fake_exec.path().as_os_str()), &inside),
            vec![in_temp.path().to_path_buf(), PathBuf::from("/usr/bin")]
        );
    }

    #[test]
    fn git_is_the_first_outside_the_repository_and_the_exec_path() {
        let repo = tempfile::tempdir().unwrap();
        let fake_exec = tempfile::tempdir().unwrap();
        let real = tempfile::tempdir().unwrap();
        let repo_bin = repo.path().join("bin");
        std::fs::create_dir(&repo_bin).unwrap();
        for dir in [
            &repo_bin,
            &fake_exec.path().to_path_buf(),
            &real.path().to_path_buf(),
        ] {
            exe(dir, "git");
        }
        let path = std::env::join_paths([
            repo_bin.clone(),
            fake_exec.path().to_path_buf(),
            real.path().to_path_buf(),
        ])
        .unwrap();
        let inside = canonical_all(&[repo.path()]);
        assert_eq!(
            find_git(Some(&path), Some(fake_exec.path().as_os_str()), &inside),
            real.path().join("git")
        );
        // Without GIT_EXEC_PATH set, the first entry outside the repository is git's own.
        assert_eq!(
            find_git(Some(&path), None, &inside),
            fake_exec.path().join("git")
        );
    }

    /// A `git` the caller put first on PATH, in a directory of its own, loses to the one the
    /// system installed further down.
    #[test]
    fn the_systems_git_wins_over_one_in_a_directory_of_the_callers() {
        let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join("git"))
            .find(|g| system_installed(g))
            .expect("the machine has a git the system installed");
        let fake = tempfile::tempdir().unwrap();
        exe(fake.path(), "git");
        let path = std::env::join_paths([
            fake.path().to_path_buf(),
            real.parent().unwrap().to_path_buf(),
        ])
        .unwrap();
        assert_eq!(find_tool("git", Some(&path), None, &[]), Some(real.clone()));
        assert!(!system_installed(&fake.path().join("git")));
        // Without one of the system's, the first trusted one.
        let only_fake = std::env::join_paths([fake.path()]).unwrap();
        assert_eq!(
            find_tool("git", Some(&only_fake), None, &[]),
            Some(fake.path().join("git"))
        );
    }

    #[test]
    fn a_tool_directory_that_cannot_be_made_is_an_error_not_a_fallback() {
        let blocked = tempfile::tempdir().unwrap();
        let base = blocked.path().join("cache");
        std::fs::write(&base, "a file where the directory would go").unwrap();
        assert!(tool_dir_in(&base, Path::new("/usr/bin/git"), None).is_err());
        let fine = blocked.path().join("fine");
        let dir = tool_dir_in(&fine, Path::new("/usr/bin/git"), None).unwrap();
        assert_eq!(std::fs::read_link(dir.join("sh")).unwrap(), Path::new(SH));
    }

    #[test]
    fn commands_get_the_pinned_sh_and_git_first_and_no_git_variables() {
        let repo = tempfile::tempdir().unwrap();
        let env = CommandEnv::for_repository(&[repo.path()]).unwrap();
        let first = std::env::split_paths(env.path())
            .next()
            .expect("a tool dir");
        assert_eq!(std::fs::read_link(first.join("sh")).unwrap(), Path::new(SH));
        assert_eq!(std::fs::read_link(first.join("git")).unwrap(), env.git());
        let mut cmd = std::process::Command::new(SH);
        cmd.args([
            "-c",
            "command -v sh; env | grep -c -e '^GIT_' -e '^LD_PRELOAD=' -e '^BASH_ENV=' -e '^BASH_FUNC_' || true",
        ])
        .env("GIT_DIR", "/nowhere")
        .env("GIT_EXEC_PATH", "/nowhere")
        .env("LD_PRELOAD", "/nowhere/evil.so")
        .env("BASH_ENV", "/nowhere/rc")
        .env("BASH_FUNC_bash%%", "() { :; }")
        .env("KEEP_ME", "1");
        env.apply(&mut cmd);
        let out = cmd.output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text, format!("{}\n0\n", first.join("sh").display()));
        assert!(cmd.get_envs().any(|(k, v)| k == "KEEP_ME" && v.is_some()));
    }
}
