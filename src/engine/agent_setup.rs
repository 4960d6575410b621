//! `init --agent`: writes the agent client's project files (src/agent/setup.rs decides what
//! goes in them) and keeps what was there before, so that `--remove` restores it exactly.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{EngineError, Session, io_error};
use crate::agent::hook::Client;
use crate::agent::setup::{self, Launch};
use crate::agent::trust::{self, Trust};

/// What happened to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileAction {
    Created,
    Updated,
    Unchanged,
    /// `--remove`: the file is back to the bytes it had before `init --agent`.
    Restored,
    /// `--remove`: the file was ours alone and is gone.
    Removed,
    /// `--remove`: the file changed since, so our entries were taken out of it and the rest
    /// kept (its layout may differ from before).
    Cleaned,
}

#[derive(Clone, Debug, Serialize)]
pub struct AgentFileReport {
    pub path: String,
    pub action: FileAction,
}

#[derive(Clone, Debug, Serialize)]
pub struct AgentSetupReport {
    pub client: &'static str,
    pub removed: bool,
    pub files: Vec<AgentFileReport>,
}

/// The launcher our entries use: `git-orchestrate`, found on PATH by the client.
const PROGRAM: &str = "git-orchestrate";

pub fn setup_agent(
    session: &Session,
    client: Client,
    workflow: Option<&str>,
    remove: bool,
) -> Result<AgentSetupReport, EngineError> {
    // One at a time: two would read the same files, then write over each other's records.
    let _lock = session.store.agent_setup_lock()?;
    let root = session.store.workdir().to_path_buf();
    let backups = session.store.agent_setup_dir(client_name(client));
    let launch = Launch {
        program: PROGRAM.to_string(),
        workflow: workflow.map(str::to_string),
    };
    // Check every file before writing any: a refusal leaves them all as they were.
    let mut planned = Vec::new();
    for file in setup::files(client) {
        let path = root.join(file.path);
        let dangling = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::metadata(&path).is_err();
        if dangling {
            return Err(bad(
                file.path,
                "it is a symbolic link that leads nowhere (write through it, or remove it)",
            ));
        }
        let next = plan_file(&file, &path, remove, &backups, &launch)?;
        planned.push((file.path, path, next));
    }
    let mut files = Vec::new();
    for (name, path, plan) in planned {
        let action = carry_out(plan, name, &path, &root, &backups)?;
        files.push(AgentFileReport {
            path: name.to_string(),
            action,
        });
    }
    Ok(AgentSetupReport {
        client: client_name(client),
        removed: remove,
        files,
    })
}

/// What becomes of one of the client's files, decided before any is written: a refusal
/// leaves them all as they were.
fn plan_file(
    file: &setup::AgentFile,
    path: &Path,
    remove: bool,
    backups: &Path,
    launch: &Launch,
) -> Result<Plan, EngineError> {
    let current = read_text(path)?;
    Ok(if remove {
        match &current {
            Some(text) if setup::has_ours(file.kind, text) => {
                let original = Backup::read(backups, file.path)?;
                match original.filter(|b| b.ours.as_deref() == Some(text.as_str())) {
                    Some(b) => Plan::Restore(b.before),
                    None => {
                        match setup::uninstall(file.kind, text).map_err(|e| bad(file.path, &e))? {
                            Some(rest) => Plan::Write(rest, FileAction::Cleaned),
                            None => Plan::Restore(None),
                        }
                    }
                }
            }
            _ => Plan::Keep,
        }
    } else {
        let next = setup::install(file.kind, current.as_deref(), launch)
            .map_err(|e| bad(file.path, &e))?;
        if Some(&next) == current.as_ref() {
            Plan::Keep
        } else {
            Plan::Install {
                before: current.clone(),
                next,
            }
        }
    })
}

/// Carries out `plan` for the file `name` at `path`.
fn carry_out(
    plan: Plan,
    name: &str,
    path: &Path,
    root: &Path,
    backups: &Path,
) -> Result<FileAction, EngineError> {
    Ok(match plan {
        Plan::Keep => FileAction::Unchanged,
        Plan::Install { before, next } => {
            // The first install keeps what was there; a re-install after the user took our
            // entries out keeps the file as it is now.
            let keep = match Backup::read(backups, name)? {
                Some(b) if b.ours.as_deref() == before.as_deref() => b.before,
                _ => before.clone(),
            };
            Backup {
                before: keep,
                ours: Some(next.clone()),
            }
            .write(backups, name)?;
            write_text(path, &next)?;
            if before.is_none() {
                FileAction::Created
            } else {
                FileAction::Updated
            }
        }
        Plan::Restore(Some(bytes)) => {
            write_text(path, &bytes)?;
            Backup::forget(backups, name)?;
            FileAction::Restored
        }
        Plan::Restore(None) => {
            std::fs::remove_file(path).map_err(io_error(format!("remove {}", path.display())))?;
            // A directory we made for it (.claude, .codex, .gemini) goes too when empty.
            if let Some(dir) = path.parent().filter(|d| *d != root) {
                let _ = std::fs::remove_dir(dir);
            }
            Backup::forget(backups, name)?;
            FileAction::Removed
        }
        Plan::Write(text, action) => {
            write_text(path, &text)?;
            Backup::forget(backups, name)?;
            action
        }
    })
}

enum Plan {
    Keep,
    Install {
        before: Option<String>,
        next: String,
    },
    /// The bytes from before, or no file.
    Restore(Option<String>),
    Write(String, FileAction),
}

pub fn client_name(client: Client) -> &'static str {
    match client {
        Client::Claude => "claude",
        Client::Codex => "codex",
        Client::Gemini => "gemini",
    }
}

fn bad(path: &str, problem: &str) -> EngineError {
    EngineError::BadInput {
        message: format!("{path}: {problem}; nothing was changed"),
        hint: format!("Fix {path} (or move it aside), then run the command again."),
    }
}

fn read_text(path: &Path) -> Result<Option<String>, EngineError> {
    match crate::input::read_file(path, crate::input::CAP) {
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| EngineError::BadInput {
                message: format!("{} is not UTF-8 text; nothing was changed", path.display()),
                hint: "Fix the file, then run the command again.".into(),
            }),
        Ok(None) => Ok(None),
        Err(crate::input::FileError::Io { source, .. }) => {
            Err(io_error(format!("read {}", path.display()))(source))
        }
        Err(e) => Err(EngineError::BadInput {
            message: format!("{e}; nothing was changed"),
            hint: "Put a regular file there (or move it aside), then run the command again.".into(),
        }),
    }
}

/// Whole or not at all: a temporary file renamed over it. A settings file that is a link
/// (kept with the user's dotfiles, say) is written where it points, so the link stays.
fn write_text(path: &Path, text: &str) -> Result<(), EngineError> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let resolved;
    let path = if is_link {
        resolved = std::fs::canonicalize(path).map_err(|e| EngineError::BadInput {
            message: format!(
                "{} is a symbolic link that leads nowhere ({e}); nothing was changed",
                path.display()
            ),
            hint: "Point it at a file, or remove it, then run the command again.".into(),
        })?;
        resolved.as_path()
    } else {
        path
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    }
    let tmp = path.with_extension("git-orchestrate.tmp");
    std::fs::write(&tmp, text).map_err(io_error(format!("write {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io_error(format!("write {}", path.display())))
}

/// What a file held before `init --agent` first wrote it, and what it wrote last.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
struct Backup {
    before: Option<String>,
    ours: Option<String>,
}

impl Backup {
    fn file(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{}.json", name.replace('/', "%2F")))
    }

    fn read(dir: &Path, name: &str) -> Result<Option<Backup>, EngineError> {
        let path = Self::file(dir, name);
        match crate::input::read_file(&path, crate::input::CAP) {
            Ok(Some(bytes)) => Ok(serde_json::from_slice(&bytes).ok()),
            Ok(None) => Ok(None),
            Err(e) => Err(EngineError::Internal(format!(
                "cannot read the record of what init --agent wrote: {e}"
            ))),
        }
    }

    fn write(&self, dir: &Path, name: &str) -> Result<(), EngineError> {
        let text = serde_json::to_string(self).map_err(|e| EngineError::Internal(e.to_string()))?;
        write_text(&Self::file(dir, name), &text)
    }

    fn forget(dir: &Path, name: &str) -> Result<(), EngineError> {
        match std::fs::remove_file(Self::file(dir, name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io_error(format!("remove the record of {name}"))(e))
            }
            _ => Ok(()),
        }
    }
}

/// One of a client's project files, and what it lacks for the client to load our hooks and
/// MCP server (nothing: it is complete).
#[derive(Clone, Debug)]
pub struct FileGaps {
    pub path: &'static str,
    pub gaps: Vec<setup::Gap>,
}

/// Each project file `client` loads here, as it will read it, and what it lacks.
pub fn file_gaps(session: &Session, client: Client) -> Vec<FileGaps> {
    let root = session.store.workdir();
    setup::files(client)
        .into_iter()
        .map(|file| {
            let path = root.join(file.path);
            let gaps = match crate::agent::guard::read_capped(&path, 1 << 20) {
                Ok(text) => setup::gaps(file.kind, Some(&text)),
                // A file that is there and cannot be read is not "missing".
                Err(e) if std::fs::symlink_metadata(&path).is_ok() => {
                    vec![setup::Gap::Unreadable(e.to_string())]
                }
                Err(_) => setup::gaps(file.kind, None),
            };
            FileGaps {
                path: file.path,
                gaps,
            }
        })
        .collect()
}

/// What a client's own record says of this project: where the record is, the folder its
/// deciding entry names, and the verdict. `None` for Claude Code, which keeps no "untrusted".
#[derive(Clone, Debug)]
pub struct ClientTrust {
    pub record: String,
    pub rule: Option<String>,
    pub trust: Trust,
}

pub fn client_trust(client: Client, project: &Path) -> Option<ClientTrust> {
    // A record of a client's own: small, and never a FIFO or a device.
    let read = |path: &Path| crate::agent::guard::read_capped(path, 1 << 20).ok();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match client {
        Client::Claude => None,
        Client::Codex => {
            let config = std::env::var_os("CODEX_HOME")
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".codex")))
                .map(|dir| dir.join("config.toml"));
            let text = config.as_deref().and_then(read);
            let rule = trust::codex_rule(text.as_deref(), project);
            Some(ClientTrust {
                record: config
                    .map(|c| c.display().to_string())
                    .unwrap_or_else(|| "$CODEX_HOME/config.toml".into()),
                trust: rule.as_ref().map_or(Trust::Undecided, |(_, t)| t.clone()),
                rule: rule.map(|(dir, _)| dir),
            })
        }
        Client::Gemini => {
            let folders = home.as_ref().map(|h| h.join(".gemini/trustedFolders.json"));
            let text = folders.as_deref().and_then(read);
            let rule = trust::gemini_rule(text.as_deref(), project);
            // The user's own environment trusting every workspace is a decision too.
            let by_env = std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true");
            Some(ClientTrust {
                record: "~/.gemini/trustedFolders.json".into(),
                trust: if by_env {
                    Trust::Trusted
                } else {
                    rule.as_ref().map_or(Trust::Undecided, |(_, t)| t.clone())
                },
                rule: rule.map(|(dir, _)| dir),
            })
        }
    }
}
