//! Puts the shims where git runs hooks (`git rev-parse --git-path hooks`, which honours
//! `core.hooksPath` and linked worktrees) without ever clobbering a hook that is there
//! (docs/config.md, "[hooks]"). A shell hook gets our block inserted after its first line; any other hook is
//! moved aside and run by our shim after our block. `uninstall` undoes either exactly, so
//! the user's hook is back byte for byte. Hook managers that own the files (husky,
//! lefthook, pre-commit) are left alone here; `managed.rs` puts our hooks into their
//! configuration instead.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::{BEGIN, END, NAMES, shim};
use crate::exec::{Git, GitError};
use crate::workflow::briefing::Notice;

/// The first lines of a hook file git-orchestrate wrote whole: uninstall deletes it.
const OWN_HEADER: &str = "#!/bin/sh\n# This hook file was written by git-orchestrate.\n";

/// A hook that was not a shell script is moved here and run by the shim.
const ORIGINAL_SUFFIX: &str = ".git-orchestrate-original";

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("could not {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{} exists already: a hook moved aside by an earlier install is still there; move it back or \
         delete it, then install again",
        path.display()
    )]
    OriginalInTheWay { path: PathBuf },
    /// A hook manager's configuration our entries cannot go into as it is written.
    #[error("{}: {problem}; nothing was changed", path.display())]
    Config { path: PathBuf, problem: String },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |source| InstallError::Io { what, path, source }
}

/// How our hook is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The whole file is ours.
    Own,
    /// Our block sits in the user's shell hook.
    Block,
    /// The user's hook was moved aside; ours runs it after our block.
    Chained,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Own => "its own file",
            Mode::Block => "a block in your hook",
            Mode::Chained => "chained: your hook runs after it",
        })
    }
}

/// A tool that owns hook files, which would undo an edit of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    Husky,
    Lefthook,
    PreCommit,
}

impl Manager {
    /// The manager [`Manager::name`] names.
    pub fn from_name(name: &str) -> Option<Manager> {
        [Manager::Husky, Manager::Lefthook, Manager::PreCommit]
            .into_iter()
            .find(|m| m.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Manager::Husky => "husky",
            Manager::Lefthook => "lefthook",
            Manager::PreCommit => "pre-commit",
        }
    }

    /// How to run our hooks from the manager's own configuration.
    pub fn instructions(self) -> String {
        format!(
            "`git orchestrate hooks install --manager {}` adds our commit-msg, post-commit and pre-push to its configuration",
            self.name()
        )
    }
}

/// Where one hook stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookState {
    Installed {
        mode: Mode,
        current: bool,
    },
    Missing,
    /// A hook of the user's without our block.
    Foreign,
    Managed(Manager),
}

/// One hook in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookReport {
    pub name: &'static str,
    pub path: PathBuf,
    pub state: HookState,
    /// What `install` or `uninstall` did to it; `None` for `status`.
    pub action: Option<Action>,
    /// False when git would not run the file: it is not executable.
    pub executable: bool,
}

/// What `install` or `uninstall` did to one hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Installed(Mode),
    Updated(Mode),
    /// A file of ours lacked its run bit and got it back (`updated`: its block too).
    Repaired {
        mode: Mode,
        updated: bool,
    },
    Unchanged,
    Removed(Mode),
    Skipped(Manager),
}

pub struct Report {
    pub dir: PathBuf,
    /// `core.hooksPath`, when set.
    pub hooks_path: Option<String>,
    /// The manager that owns the whole hooks directory, when one does.
    pub managed_by: Option<Manager>,
    pub hooks: Vec<HookReport>,
    /// What to know about where the hooks directory is.
    pub notes: Vec<String>,
}

/// `hooks --json` (docs/agent-guide.md, "Other commands"): each hook's state by name.
impl serde::Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Hook<'a> {
            name: &'a str,
            path: &'a Path,
            state: &'static str,
            mode: Option<&'static str>,
            current: Option<bool>,
            executable: bool,
            action: Option<&'static str>,
            manager: Option<&'static str>,
        }
        #[derive(serde::Serialize)]
        struct View<'a> {
            dir: &'a Path,
            hooks_path: &'a Option<String>,
            managed_by: Option<&'static str>,
            notes: &'a [String],
            hooks: Vec<Hook<'a>>,
        }
        View {
            dir: &self.dir,
            hooks_path: &self.hooks_path,
            managed_by: self.managed_by.map(Manager::name),
            notes: &self.notes,
            hooks: self
                .hooks
                .iter()
                .map(|h| {
                    let (state, mode, current, manager) = match &h.state {
                        HookState::Installed { mode, current } => {
                            ("installed", Some(mode.name()), Some(*current), None)
                        }
                        HookState::Missing => ("missing", None, None, None),
                        HookState::Foreign => ("foreign", None, None, None),
                        HookState::Managed(m) => ("managed", None, None, Some(m.name())),
                    };
                    Hook {
                        name: h.name,
                        path: &h.path,
                        state,
                        mode,
                        current,
                        executable: h.executable,
                        action: h.action.as_ref().map(Action::name),
                        manager,
                    }
                })
                .collect(),
        }
        .serialize(serializer)
    }
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Own => "own",
            Mode::Block => "block",
            Mode::Chained => "chained",
        }
    }
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Installed(_) => "installed",
            Action::Updated(_) => "updated",
            Action::Repaired { .. } => "repaired",
            Action::Unchanged => "unchanged",
            Action::Removed(_) => "removed",
            Action::Skipped(_) => "skipped",
        }
    }
}

/// Where each hook stands, changing nothing.
pub fn status(git: &Git) -> Result<Report, InstallError> {
    survey(git, |_, _, _| Ok(None))
}

/// Installs every hook that is not installed, and brings an older block up to date.
pub fn install(git: &Git) -> Result<Report, InstallError> {
    // Every hook that would be moved aside is checked first: an install that stops half way
    // would leave some hooks in place and others not.
    let dir = git.git_path("hooks")?;
    for name in NAMES {
        let path = dir.join(name);
        if matches!(hook_state(name, &path, None)?, HookState::Foreign)
            && block_text(name, &path).is_none()
            && original_path(&path).exists()
        {
            return Err(InstallError::OriginalInTheWay {
                path: original_path(&path),
            });
        }
    }
    record_binary(git)?;
    survey(git, |name, path, state| match state {
        HookState::Managed(manager) => Ok(Some(Action::Skipped(*manager))),
        HookState::Missing => {
            write_new(path, &own_file(name))?;
            Ok(Some(Action::Installed(Mode::Own)))
        }
        HookState::Installed { mode, current } => {
            if !current {
                let text = read(path)?;
                let updated = replace_block(&text, block(name)).unwrap_or(text);
                write_keeping_mode(path, &updated)?;
            }
            // A file of ours without its run bit (an install cut short, a checkout that
            // dropped it) is one git silently skips. A hook of the user's keeps the mode
            // they gave it.
            let repaired = *mode != Mode::Block && !is_executable(path);
            if repaired {
                make_executable(path)?;
            }
            Ok(Some(match (current, repaired) {
                (true, false) => Action::Unchanged,
                (false, false) => Action::Updated(*mode),
                (_, true) => Action::Repaired {
                    mode: *mode,
                    updated: !current,
                },
            }))
        }
        HookState::Foreign => {
            if let Some(with_block) = block_text(name, path) {
                write_keeping_mode(path, &with_block)?;
                return Ok(Some(Action::Installed(Mode::Block)));
            }
            let original = original_path(path);
            if original.exists() {
                return Err(InstallError::OriginalInTheWay { path: original });
            }
            std::fs::rename(path, &original).map_err(io_err("move aside", path))?;
            write_new(path, &chained_file(name))?;
            Ok(Some(Action::Installed(Mode::Chained)))
        }
    })
}

/// Records the absolute path of this binary where the shims look when `git-orchestrate` is
/// not on PATH ([`super::BINARY_RECORD`]): an agent's login shell, or a GUI's git, may run
/// hooks with a PATH that lacks it.
pub fn record_binary(git: &Git) -> Result<(), InstallError> {
    let path = git.common_dir()?.join(super::BINARY_RECORD);
    let exe = std::env::current_exe()
        .map_err(io_err("find the path of", Path::new("git-orchestrate")))?;
    let text = exe.to_string_lossy();
    // A path the shims could not read back as one line is not recorded.
    if text.contains('\n') {
        return Ok(());
    }
    if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text.as_bytes()).map_err(io_err("write", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(io_err("write", &path))
}

/// The binary `hooks install` recorded, when it did.
pub fn recorded_binary(git: &Git) -> Option<PathBuf> {
    let path = git.common_dir().ok()?.join(super::BINARY_RECORD);
    crate::store::regular::read_to_string(&path)
        .ok()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// The user's hook with our block in it, when the hook is one our block can go into: an
/// executable shell script in a regular file (a symlink is chained instead, so that its
/// target, perhaps a tracked file, is never edited).
fn block_text(name: &str, path: &Path) -> Option<String> {
    let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if !regular || !is_executable(path) {
        return None;
    }
    let text = String::from_utf8(crate::store::regular::read(path).ok()?).ok()?;
    if !is_shell_script(&text) {
        return None;
    }
    insert_block(&text, block(name))
}

/// Removes our hooks; a hook of the user's is left exactly as it was before `install`.
pub fn uninstall(git: &Git) -> Result<Report, InstallError> {
    let record = git.common_dir()?.join(super::BINARY_RECORD);
    match std::fs::remove_file(&record) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err("remove", &record)(e)),
        _ => {}
    }
    survey(git, |_, path, state| {
        let HookState::Installed { mode, .. } = state else {
            return Ok(None);
        };
        match mode {
            Mode::Own => {
                std::fs::remove_file(path).map_err(io_err("remove", path))?;
            }
            Mode::Chained => {
                std::fs::remove_file(path).map_err(io_err("remove", path))?;
                std::fs::rename(original_path(path), path).map_err(io_err("move back", path))?;
            }
            Mode::Block => {
                let text = read(path)?;
                if let Some(without) = remove_block(&text) {
                    write_keeping_mode(path, &without)?;
                }
            }
        }
        Ok(Some(Action::Removed(*mode)))
    })
}

/// Where a hook manager keeps a hook it found in the way when it installed its own: pre-commit
/// runs `<hook>.legacy` before its own hooks, lefthook keeps `<hook>.old` and runs nothing.
pub const MOVED_ASIDE: [&str; 2] = [".legacy", ".old"];

/// Takes our hooks out of the copies a hook manager moved aside ([`MOVED_ASIDE`]): a file
/// of our own is removed, our block is taken out of a hook of the user's. Beside a manager
/// whose configuration runs our hooks, pre-commit's copy would run every gate a second time.
/// A chained file of ours is left alone: it is what runs the user's original hook. Returns
/// the files changed.
pub fn remove_moved_aside(git: &Git) -> Result<Vec<PathBuf>, InstallError> {
    let dir = git.git_path("hooks")?;
    let mut changed = Vec::new();
    for name in NAMES {
        for suffix in MOVED_ASIDE {
            let path = dir.join(format!("{name}{suffix}"));
            let text = match crate::input::read_file(&path, crate::input::CAP) {
                Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(None) => continue,
                // Not a file of ours (a FIFO, say): left alone.
                Err(
                    crate::input::FileError::NotRegular { .. }
                    | crate::input::FileError::TooLarge { .. },
                ) => {
                    continue;
                }
                Err(crate::input::FileError::Io { source, .. }) => {
                    return Err(io_err("read", &path)(source));
                }
            };
            if find_block(&text).is_none() {
                continue;
            }
            if text.starts_with(OWN_HEADER) {
                if original_path(&dir.join(name)).exists() {
                    continue;
                }
                std::fs::remove_file(&path).map_err(io_err("remove", &path))?;
            } else if let Some(without) = remove_block(&text) {
                write_keeping_mode(&path, &without)?;
            } else {
                continue;
            }
            changed.push(path);
        }
    }
    Ok(changed)
}

/// Looks at every hook, lets `act` change it, and reports where each stands afterwards.
fn survey(
    git: &Git,
    mut act: impl FnMut(&'static str, &Path, &HookState) -> Result<Option<Action>, InstallError>,
) -> Result<Report, InstallError> {
    let dir = git.git_path("hooks")?;
    let hooks_path = git.config("core.hooksPath")?;
    let managed_by = hooks_path
        .as_deref()
        .filter(|p| p.contains(".husky"))
        .map(|_| Manager::Husky)
        .or_else(|| {
            [
                "lefthook.yml",
                ".lefthook.yml",
                "lefthook.yaml",
                ".lefthook.yaml",
            ]
            .iter()
            .any(|f| git.workdir().join(f).exists())
            .then_some(Manager::Lefthook)
        });
    let mut hooks = Vec::new();
    for name in NAMES {
        let path = dir.join(name);
        let state = hook_state(name, &path, managed_by)?;
        let action = act(name, &path, &state)?;
        let after = if action.is_some() {
            hook_state(name, &path, managed_by)?
        } else {
            state
        };
        hooks.push(HookReport {
            name,
            executable: is_executable(&path),
            path,
            state: after,
            action,
        });
    }
    let notes = location_notes(git, &dir, hooks_path.as_deref());
    Ok(Report {
        dir,
        hooks_path,
        managed_by,
        hooks,
        notes,
    })
}

/// A hooks directory inside the working tree, or one shared by every repository, changes
/// what installing means.
fn location_notes(git: &Git, dir: &Path, hooks_path: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    let workdir = git.workdir();
    let in_git_dir = dir
        .strip_prefix(workdir)
        .is_ok_and(|rest| rest.starts_with(".git"));
    if dir.starts_with(workdir) && !in_git_dir {
        notes.push(
            Notice::HooksInWorkingTree {
                dir: dir.to_path_buf(),
            }
            .to_string(),
        );
    }
    match hooks_path {
        Some(path) if !Path::new(path).is_absolute() => notes.push(
            Notice::RelativeHooksPath {
                path: path.to_string(),
            }
            .to_string(),
        ),
        Some(path)
            if !dir.starts_with(workdir)
                && git
                    .common_dir()
                    .is_ok_and(|common| !dir.starts_with(common)) =>
        {
            notes.push(
                Notice::SharedHooksPath {
                    path: path.to_string(),
                }
                .to_string(),
            );
        }
        _ => {}
    }
    notes
}

fn hook_state(
    name: &str,
    path: &Path,
    managed_by: Option<Manager>,
) -> Result<HookState, InstallError> {
    // Through the bounded reader: a FIFO or a device in the hooks directory must not block
    // `hooks status`, `doctor` or `init`.
    let text = match crate::input::read_file(path, crate::input::CAP) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(None) => {
            return Ok(match managed_by {
                Some(manager) => HookState::Managed(manager),
                None => HookState::Missing,
            });
        }
        Err(crate::input::FileError::Io { source, .. }) => {
            return Err(io_err("read", path)(source));
        }
        Err(e) => {
            return Err(InstallError::Config {
                path: path.to_path_buf(),
                problem: e.problem(),
            });
        }
    };
    if let Some(ours) = find_block(&text) {
        let mode = if text.starts_with(OWN_HEADER) {
            if original_path(path).exists() {
                Mode::Chained
            } else {
                Mode::Own
            }
        } else {
            Mode::Block
        };
        return Ok(HookState::Installed {
            mode,
            current: ours == block(name),
        });
    }
    if let Some(manager) = managed_by {
        return Ok(HookState::Managed(manager));
    }
    if text.contains("File generated by pre-commit") {
        return Ok(HookState::Managed(Manager::PreCommit));
    }
    if text.contains("lefthook") {
        return Ok(HookState::Managed(Manager::Lefthook));
    }
    Ok(HookState::Foreign)
}

/// The block of hook `name`: its shim without the shebang line.
fn block(name: &str) -> &'static str {
    let shim = shim(name).unwrap_or_default();
    shim.split_once('\n').map_or("", |(_, rest)| rest)
}

fn own_file(name: &str) -> String {
    format!("{OWN_HEADER}{}", block(name))
}

fn chained_file(name: &str) -> String {
    format!(
        "{OWN_HEADER}{}\
         # The hook that was here before git-orchestrate, moved aside; it runs now.\n\
         git_orchestrate_original=\"${{0%/*}}/{name}{ORIGINAL_SUFFIX}\"\n\
         if [ -x \"$git_orchestrate_original\" ]; then exec \"$git_orchestrate_original\" \"$@\"; fi\n",
        block(name)
    )
}

fn original_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(ORIGINAL_SUFFIX);
    path.with_file_name(name)
}

/// True for a script that a POSIX shell runs: our block is shell.
pub fn is_shell_script(text: &str) -> bool {
    let Some(first) = text.lines().next() else {
        return false;
    };
    let Some(interpreter) = first.strip_prefix("#!") else {
        return false;
    };
    let mut words = interpreter.split_whitespace();
    let program = words.next().unwrap_or_default();
    let program = if program.ends_with("/env") {
        words.next().unwrap_or_default()
    } else {
        program
    };
    let base = program.rsplit('/').next().unwrap_or_default();
    matches!(base, "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash")
}

/// The text from the line `BEGIN` through the line `END`, both included, if it is there.
fn find_block(text: &str) -> Option<&str> {
    let start = line_start(text, BEGIN)?;
    let end = line_start(&text[start..], END)? + start;
    let end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    Some(&text[start..end])
}

fn line_start(text: &str, line: &str) -> Option<usize> {
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        if l.trim_end_matches('\n') == line {
            return Some(at);
        }
        at += l.len();
    }
    None
}

/// `text` with `block` after its first line; `None` when the first line has no end.
pub fn insert_block(text: &str, block: &str) -> Option<String> {
    let first_end = text.find('\n')? + 1;
    Some(format!(
        "{}{block}{}",
        &text[..first_end],
        &text[first_end..]
    ))
}

/// `text` without our block: exactly what [`insert_block`] was given.
pub fn remove_block(text: &str) -> Option<String> {
    let found = find_block(text)?;
    let start = found.as_ptr() as usize - text.as_ptr() as usize;
    Some(format!(
        "{}{}",
        &text[..start],
        &text[start + found.len()..]
    ))
}

fn replace_block(text: &str, block: &str) -> Option<String> {
    let found = find_block(text)?;
    let start = found.as_ptr() as usize - text.as_ptr() as usize;
    Some(format!(
        "{}{block}{}",
        &text[..start],
        &text[start + found.len()..]
    ))
}

fn read(path: &Path) -> Result<String, InstallError> {
    let bytes = std::fs::read(path).map_err(io_err("read", path))?;
    String::from_utf8(bytes).map_err(|_| InstallError::Io {
        what: "read",
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, "the hook is not UTF-8 text"),
    })
}

/// Written beside `path` and renamed onto it already executable, so an interrupted install
/// leaves no half-written hook and none without its run bit.
fn write_new(path: &Path, text: &str) -> Result<(), InstallError> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io_err("create a file in", dir))?;
    file.write_all(text.as_bytes())
        .map_err(io_err("write", path))?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o755))
        .map_err(io_err("make executable", path))?;
    file.persist(path)
        .map_err(|e| io_err("write", path)(e.error))?;
    Ok(())
}

/// Adds the run bits a hook file of ours lost, keeping the rest of its mode.
fn make_executable(path: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(io_err("read", path))?
        .permissions()
        .mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o111))
        .map_err(io_err("make executable", path))
}

fn write_keeping_mode(path: &Path, text: &str) -> Result<(), InstallError> {
    std::fs::write(path, text).map_err(io_err("write", path))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn shells_are_recognised_by_their_shebang() {
        for yes in [
            "#!/bin/sh\n",
            "#!/bin/bash -e\n",
            "#!/usr/bin/env bash\n",
            "#! /bin/dash\n",
            "#!/usr/bin/env zsh\nx",
        ] {
            assert!(is_shell_script(yes), "{yes:?}");
        }
        for no in [
            "#!/usr/bin/env python3\n",
            "#!/usr/bin/node\n",
            "echo hi\n",
            "",
        ] {
            assert!(!is_shell_script(no), "{no:?}");
        }
    }

    #[test]
    fn a_block_comes_out_exactly_as_it_went_in() {
        let theirs = "#!/bin/bash\nset -e\necho theirs\nexit 0\n";
        let with = insert_block(theirs, block("commit-msg")).unwrap();
        assert!(
            with.starts_with(&format!("#!/bin/bash\n{BEGIN}\n")),
            "{with}"
        );
        assert!(
            with.ends_with(&format!("{END}\nset -e\necho theirs\nexit 0\n")),
            "{with}"
        );
        assert_eq!(find_block(&with), Some(block("commit-msg")));
        assert_eq!(remove_block(&with).as_deref(), Some(theirs));
        assert_eq!(
            insert_block("#!/bin/sh", block("commit-msg")),
            None,
            "no line end"
        );
        let older = with.replace("verifies checkpoint commits", "checks checkpoint commits");
        assert_eq!(
            replace_block(&older, block("commit-msg")).as_deref(),
            Some(with.as_str())
        );
    }
}
