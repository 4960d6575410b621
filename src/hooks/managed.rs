//! `hooks install|uninstall --manager`: our hooks in a hook manager's own configuration
//! (the edits are `managers.rs`'), and the manager's own install step, run when the tool is
//! on PATH and named otherwise.

use std::path::{Path, PathBuf};

use super::install::{InstallError, Manager};
use super::managers;
use crate::exec::Git;

/// What happened to one file of the manager's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileAction {
    Created,
    Added,
    Unchanged,
    Removed,
    /// The file was ours alone and is gone.
    Deleted,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ManagedFile {
    pub path: PathBuf,
    pub action: FileAction,
}

/// The manager's own step that puts its hooks where git runs them.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "step", content = "command")]
pub enum InstallStep {
    /// Run now, successfully.
    Ran(String),
    /// Still to do: the tool is not on PATH, or it failed.
    Needed(PendingStep),
    /// Nothing to do.
    NotNeeded,
}

/// A manager's install step still to run: its command line, and what it said when it ran
/// and failed. Shown (and serialised) as one text: the command, then why it is still to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingStep {
    pub command: String,
    /// Its standard error, trimmed, when it ran and failed; `None` when it is not on PATH.
    pub failure: Option<String>,
}

impl std::fmt::Display for PendingStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.failure {
            Some(failure) => write!(f, "{} (it failed: {failure})", self.command),
            None => f.write_str(&self.command),
        }
    }
}

impl serde::Serialize for PendingStep {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ManagedReport {
    pub manager: &'static str,
    pub files: Vec<ManagedFile>,
    pub install_step: InstallStep,
    /// How the manager was chosen, for people: "--manager", or what was found.
    pub found: String,
    /// Copies of our hooks that a manager had moved aside (`commit-msg.legacy`), taken out:
    /// pre-commit runs such a copy beside its own hooks, so every gate ran twice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_copies: Vec<PathBuf>,
}

const LEFTHOOK_FILES: [&str; 4] = [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
];
const PRE_COMMIT_FILE: &str = ".pre-commit-config.yaml";
/// How our hooks start git-orchestrate from a manager's configuration.
const PROGRAM: &str = "git-orchestrate";

/// The manager this repository uses, and the evidence: husky when core.hooksPath points into
/// `.husky`, lefthook when its config exists, pre-commit when `.pre-commit-config.yaml` does.
pub fn detect(git: &Git) -> Result<Option<(Manager, String)>, InstallError> {
    if let Some(path) = git
        .config("core.hooksPath")?
        .filter(|p| p.contains(".husky"))
    {
        return Ok(Some((Manager::Husky, format!("core.hooksPath is {path}"))));
    }
    let root = git.workdir();
    if let Some(file) = LEFTHOOK_FILES.iter().find(|f| root.join(f).exists()) {
        return Ok(Some((Manager::Lefthook, format!("{file} exists"))));
    }
    if root.join(PRE_COMMIT_FILE).exists() {
        return Ok(Some((
            Manager::PreCommit,
            format!("{PRE_COMMIT_FILE} exists"),
        )));
    }
    Ok(None)
}

/// The files our entries go into.
fn files(
    git: &Git,
    manager: Manager,
) -> Result<Vec<(PathBuf, Option<&'static str>)>, InstallError> {
    let root = git.workdir();
    Ok(match manager {
        Manager::PreCommit => vec![(root.join(PRE_COMMIT_FILE), None)],
        Manager::Lefthook => {
            let file = LEFTHOOK_FILES
                .iter()
                .find(|f| root.join(f).exists())
                .unwrap_or(&LEFTHOOK_FILES[0]);
            vec![(root.join(file), None)]
        }
        Manager::Husky => {
            let dir = husky_dir(git)?;
            super::NAMES
                .iter()
                .map(|name| (dir.join(name), Some(*name)))
                .collect()
        }
    })
}

/// `.husky`, or where core.hooksPath says husky's scripts are (its `_` directory's parent).
fn husky_dir(git: &Git) -> Result<PathBuf, InstallError> {
    let root = git.workdir();
    Ok(match git.config("core.hooksPath")? {
        Some(path) if path.trim_end_matches('/').ends_with("/_") => {
            let dir = root.join(path.trim_end_matches('/'));
            dir.parent()
                .map_or_else(|| root.join(".husky"), Path::to_path_buf)
        }
        _ => root.join(".husky"),
    })
}

fn read(path: &Path) -> Result<Option<String>, InstallError> {
    match crate::input::read_file(path, crate::input::CAP) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| InstallError::Io {
                what: "read (it is not UTF-8 text)",
                path: path.to_path_buf(),
                source: std::io::Error::from(std::io::ErrorKind::InvalidData),
            }),
        Ok(None) => Ok(None),
        Err(crate::input::FileError::Io { source, .. }) => Err(InstallError::Io {
            what: "read",
            path: path.to_path_buf(),
            source,
        }),
        Err(e) => Err(InstallError::Config {
            path: path.to_path_buf(),
            problem: e.problem(),
        }),
    }
}

fn write(path: &Path, text: &str) -> Result<(), InstallError> {
    let io = |what: &'static str| {
        let path = path.to_path_buf();
        move |source| InstallError::Io { what, path, source }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create the directory of"))?;
    }
    let tmp = path.with_extension("git-orchestrate.tmp");
    std::fs::write(&tmp, text).map_err(io("write"))?;
    std::fs::rename(&tmp, path).map_err(io("write"))
}

/// Adds our entries to the manager's configuration, takes our own hook files out of the way
/// (the manager's would run them a second time), and runs the manager's install step.
pub fn install(git: &Git, manager: Manager, found: String) -> Result<ManagedReport, InstallError> {
    // Every file is edited in memory first: a refusal leaves all of them as they were.
    let mut edits = Vec::new();
    for (path, hook) in files(git, manager)? {
        let original = read(&path)?;
        // A file whose every line ends in CRLF is edited as LF and written back as CRLF, so
        // that it keeps its line ends and `uninstall` gives it back byte for byte.
        let crlf = original.as_deref().is_some_and(|t| {
            t.contains("\r\n") && t.matches('\n').count() == t.matches("\r\n").count()
        });
        let before = original.as_deref().map(|t| {
            let t = if crlf {
                t.replace("\r\n", "\n")
            } else {
                t.to_string()
            };
            // Entries of ours from an older version are written again as they are now (the
            // same ones come back unchanged).
            if managers::has_ours(&t) {
                managers::remove_ours(&t)
            } else {
                t
            }
        });
        let after = match (manager, hook) {
            (Manager::PreCommit, _) => {
                managers::pre_commit_install(before.as_deref().unwrap_or_default(), PROGRAM)
            }
            (Manager::Lefthook, _) => {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                managers::lefthook_install(
                    before.as_deref().unwrap_or_default(),
                    PROGRAM,
                    name.as_deref().unwrap_or("lefthook.yml"),
                )
            }
            (Manager::Husky, Some(hook)) => {
                Ok(managers::husky_install(hook, before.as_deref(), PROGRAM))
            }
            (Manager::Husky, None) => Ok(before.clone().unwrap_or_default()),
        }
        .map_err(|refusal| InstallError::Config {
            path: path.clone(),
            problem: refusal.to_string(),
        })?;
        let after = if crlf {
            after.replace('\n', "\r\n")
        } else {
            after
        };
        edits.push((path, original, after));
    }
    let mut report = Vec::new();
    for (path, before, after) in edits {
        let action = match &before {
            Some(b) if *b == after => FileAction::Unchanged,
            Some(_) => FileAction::Added,
            None => FileAction::Created,
        };
        if action != FileAction::Unchanged {
            write(&path, &after)?;
        }
        report.push(ManagedFile { path, action });
    }
    // Our own hook files in the hooks directory would run beside the manager's, and so would
    // a copy of them the manager moved aside.
    super::install::uninstall(git)?;
    let removed_copies = super::install::remove_moved_aside(git)?;
    // The entries find the binary where it is recorded when it is not on PATH (uninstalling
    // our own hook files took the record away).
    super::install::record_binary(git)?;
    let install_step = match manager {
        Manager::PreCommit => run_step(git, "pre-commit", &["install"]),
        Manager::Lefthook => run_step(git, "lefthook", &["install"]),
        Manager::Husky => match git.config("core.hooksPath")? {
            Some(p) if p.contains(".husky") => InstallStep::NotNeeded,
            _ => run_step(git, "husky", &[]),
        },
    };
    Ok(ManagedReport {
        manager: manager.name(),
        files: report,
        install_step,
        found,
        removed_copies,
    })
}

/// Takes exactly our entries out of the manager's configuration.
pub fn uninstall(
    git: &Git,
    manager: Manager,
    found: String,
) -> Result<ManagedReport, InstallError> {
    let mut report = Vec::new();
    for (path, _) in files(git, manager)? {
        let Some(text) = read(&path)? else {
            continue;
        };
        let action = if managers::has_ours(&text) {
            let rest = managers::remove_ours(&text);
            if rest.trim().is_empty() {
                std::fs::remove_file(&path).map_err(|source| InstallError::Io {
                    what: "remove",
                    path: path.clone(),
                    source,
                })?;
                FileAction::Deleted
            } else {
                write(&path, &rest)?;
                FileAction::Removed
            }
        } else {
            FileAction::Unchanged
        };
        report.push(ManagedFile { path, action });
    }
    Ok(ManagedReport {
        manager: manager.name(),
        files: report,
        install_step: InstallStep::NotNeeded,
        found,
        removed_copies: Vec::new(),
    })
}

/// True when the manager's configuration holds our entries (all of them, for husky).
pub fn configured(git: &Git, manager: Manager) -> Result<bool, InstallError> {
    let mut any = false;
    for (path, _) in files(git, manager)? {
        match read(&path)? {
            Some(text) if managers::has_ours(&text) => any = true,
            _ if manager == Manager::Husky => return Ok(false),
            _ => {}
        }
    }
    Ok(any)
}

/// Where git runs the manager's hook `name` from.
pub fn shim(git: &Git, manager: Manager, name: &str) -> Result<PathBuf, InstallError> {
    Ok(match manager {
        Manager::Husky => husky_dir(git)?.join("_").join(name),
        Manager::PreCommit | Manager::Lefthook => git.git_path("hooks")?.join(name),
    })
}

fn run_step(git: &Git, program: &str, args: &[&str]) -> InstallStep {
    let shown = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    match crate::exec::run_captured(Path::new(program), args, git.workdir(), &[], None) {
        Ok(out) if out.code == Some(0) => InstallStep::Ran(shown),
        Ok(out) => InstallStep::Needed(PendingStep {
            command: shown,
            failure: Some(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        }),
        Err(_) => InstallStep::Needed(PendingStep {
            command: shown,
            failure: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step still to do reads, and serialises, as the one text it always was.
    #[test]
    fn a_pending_step_is_one_text() {
        let failed = InstallStep::Needed(PendingStep {
            command: "pre-commit install".into(),
            failure: Some("boom".into()),
        });
        assert_eq!(
            serde_json::to_string(&failed).ok().as_deref(),
            Some(r#"{"step":"needed","command":"pre-commit install (it failed: boom)"}"#)
        );
        let missing = PendingStep {
            command: "husky".into(),
            failure: None,
        };
        assert_eq!(missing.to_string(), "husky");
    }
}
