//! What `worktree add` and `worktree remove` do, decided without git from the facts gathered:
//! where the new worktree goes, or which worktree goes, or the refusal that names why not
//! (docs/worktrees.md).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::super::{EngineError, wrong_state};
use crate::store::valid_workflow_name;
use crate::workflow::Status;

/// How many uncommitted files a refusal names.
pub(super) const FILES_NAMED: usize = 10;

/// What is not on a remote yet in a worktree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Unpushed {
    /// The repository has no remote: nothing can be pushed, so nothing counts as unpushed.
    NoRemote,
    /// `count` commits of HEAD are not on `upstream` (the branch's), or with none, on any
    /// remote-tracking ref.
    Commits {
        count: usize,
        upstream: Option<String>,
    },
}

impl Unpushed {
    pub fn count(&self) -> usize {
        match self {
            Unpushed::NoRemote => 0,
            Unpushed::Commits { count, .. } => *count,
        }
    }
}

/// One worktree of the repository, as the decisions see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorktreeFacts {
    pub path: PathBuf,
    /// The primary worktree (the repository's own directory), never removed.
    pub primary: bool,
    /// The worktree this command runs in.
    pub current: bool,
    pub branch: Option<String>,
    pub head: Option<String>,
    /// The workflow its own config (`config.worktree`) records.
    pub recorded: Option<String>,
    pub uncommitted: Vec<String>,
    pub unpushed: Unpushed,
    /// Left by a `git worktree add` killed inside its checkout: still locked as
    /// `initializing`, detached, recording no workflow.
    pub half_made: bool,
}

/// What lies at the path a new worktree is to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    Missing,
    EmptyDir,
    NonEmptyDir,
    /// A file, a symbolic link, or anything else that is not a directory.
    NotADirectory,
}

/// What `worktree add` found before deciding.
#[derive(Clone, Debug)]
pub struct AddFacts<'a> {
    pub name: &'a str,
    /// The state of workflow `name` when it exists already.
    pub existing: Option<Status>,
    pub worktrees: &'a [WorktreeFacts],
    /// Where the worktree is to go, absolute, and whether that is the default.
    pub path: &'a Path,
    pub default_path: bool,
    pub path_kind: PathKind,
    /// A setting of the shared config that git applies to every worktree once
    /// `extensions.worktreeConfig` is turned on (`core.bare = true`, `core.worktree`), when
    /// the extension is off yet.
    pub moves_with_extension: Option<String>,
}

/// Where `worktree add` puts the worktree of workflow `workflow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddPlan {
    pub workflow: String,
    pub path: PathBuf,
    pub default_path: bool,
    /// A half-made worktree at the path, removed first (an interrupted `worktree add`'s).
    pub clean_first: bool,
}

/// Why a worktree is not added, or not removed. Nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    BadName {
        name: String,
    },
    /// A path git or a shell would misread: not UTF-8, or with a control character.
    BadPath {
        path: PathBuf,
    },
    WorkflowExists {
        name: String,
        state: Status,
    },
    RecordedElsewhere {
        name: String,
        path: PathBuf,
    },
    PathIsNotADirectory {
        path: PathBuf,
    },
    PathNotEmpty {
        path: PathBuf,
    },
    PathInsideWorktree {
        path: PathBuf,
        worktree: PathBuf,
    },
    /// A shared setting git would apply to every worktree once the extension is on.
    SharedSetting {
        setting: String,
    },
    NotRecorded {
        name: String,
        recorded: Vec<(String, PathBuf)>,
    },
    Primary {
        name: String,
        path: PathBuf,
    },
    Current {
        name: String,
        path: PathBuf,
        primary: Option<PathBuf>,
    },
    Uncommitted {
        name: String,
        path: PathBuf,
        files: Vec<String>,
    },
    Unpushed {
        name: String,
        path: PathBuf,
        branch: Option<String>,
        count: usize,
        upstream: Option<String>,
    },
}

/// Decides `worktree add NAME [PATH]`.
pub fn decide_add(facts: &AddFacts) -> Result<AddPlan, Refusal> {
    let name = facts.name;
    if !valid_workflow_name(name) {
        return Err(Refusal::BadName { name: name.into() });
    }
    if let Some(state) = facts.existing {
        return Err(Refusal::WorkflowExists {
            name: name.into(),
            state,
        });
    }
    if let Some(w) = facts
        .worktrees
        .iter()
        .find(|w| w.recorded.as_deref() == Some(name))
    {
        return Err(Refusal::RecordedElsewhere {
            name: name.into(),
            path: w.path.clone(),
        });
    }
    let path = facts.path;
    if path
        .to_str()
        .is_none_or(|p| p.chars().any(char::is_control))
    {
        return Err(Refusal::BadPath { path: path.into() });
    }
    // An earlier `worktree add` of this path killed inside git's checkout: it is finished
    // over again, never left to block every later try.
    if facts
        .worktrees
        .iter()
        .any(|w| w.half_made && !w.primary && !w.current && w.path == path)
        && facts.moves_with_extension.is_none()
    {
        return Ok(AddPlan {
            workflow: name.into(),
            path: path.into(),
            default_path: facts.default_path,
            clean_first: true,
        });
    }
    if let Some(w) = facts.worktrees.iter().find(|w| path.starts_with(&w.path)) {
        return Err(Refusal::PathInsideWorktree {
            path: path.into(),
            worktree: w.path.clone(),
        });
    }
    if let Some(setting) = &facts.moves_with_extension {
        return Err(Refusal::SharedSetting {
            setting: setting.clone(),
        });
    }
    match facts.path_kind {
        PathKind::NotADirectory => Err(Refusal::PathIsNotADirectory { path: path.into() }),
        PathKind::NonEmptyDir => Err(Refusal::PathNotEmpty { path: path.into() }),
        PathKind::Missing | PathKind::EmptyDir => Ok(AddPlan {
            workflow: name.into(),
            path: path.into(),
            default_path: facts.default_path,
            clean_first: false,
        }),
    }
}

/// Decides `worktree remove NAME`: the worktree whose own config records workflow `name`,
/// when it may go.
pub fn decide_remove<'a>(
    name: &str,
    worktrees: &'a [WorktreeFacts],
) -> Result<&'a WorktreeFacts, Refusal> {
    if !valid_workflow_name(name) {
        return Err(Refusal::BadName { name: name.into() });
    }
    let Some(found) = worktrees
        .iter()
        .find(|w| w.recorded.as_deref() == Some(name))
    else {
        return Err(Refusal::NotRecorded {
            name: name.into(),
            recorded: worktrees
                .iter()
                .filter_map(|w| Some((w.recorded.clone()?, w.path.clone())))
                .collect(),
        });
    };
    let (name, path) = (name.to_string(), found.path.clone());
    if found.primary {
        return Err(Refusal::Primary { name, path });
    }
    if found.current {
        let primary = worktrees.iter().find(|w| w.primary).map(|w| w.path.clone());
        return Err(Refusal::Current {
            name,
            path,
            primary,
        });
    }
    if !found.uncommitted.is_empty() {
        return Err(Refusal::Uncommitted {
            name,
            path,
            files: found.uncommitted.clone(),
        });
    }
    if let Unpushed::Commits { count, upstream } = &found.unpushed
        && *count > 0
    {
        return Err(Refusal::Unpushed {
            name,
            path,
            branch: found.branch.clone(),
            count: *count,
            upstream: upstream.clone(),
        });
    }
    Ok(found)
}

fn shown(path: &Path) -> String {
    crate::workflow::briefing::shell_quote(&path.display().to_string())
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

impl Refusal {
    /// The error the command exits with: a name or path that cannot be used is bad input
    /// (exit 2), the rest are not allowed now (exit 4). `state` is that of the workflow
    /// named, when it exists.
    pub fn into_error(self, state: Option<Status>) -> EngineError {
        let state = state.unwrap_or(Status::Initializing);
        let bad = |message: String, hint: &str| EngineError::BadInput {
            message,
            hint: hint.into(),
        };
        match self {
            Refusal::BadName { name } => bad(
                format!("{name:?} cannot name a workflow; nothing was created"),
                "A workflow name is letters, digits, '.', '_' and '-', not starting with '.' or '-' and not one of git's own names (HEAD, FETCH_HEAD, …), e.g. `git orchestrate worktree add feature-x`.",
            ),
            Refusal::BadPath { path } => bad(
                format!(
                    "the path {path:?} has a control character or is not UTF-8 text; nothing was created"
                ),
                "Give a plain path, or leave it out for the default beside the repository.",
            ),
            Refusal::PathIsNotADirectory { path } => bad(
                format!(
                    "{} exists and is not a directory; nothing was created",
                    shown(&path)
                ),
                "Give a path that does not exist yet (or an empty directory), or leave it out for the default.",
            ),
            Refusal::PathNotEmpty { path } => bad(
                format!(
                    "{} exists and is not empty; nothing was created",
                    shown(&path)
                ),
                "Give a path that does not exist yet (or an empty directory), or leave it out for the default.",
            ),
            // The very path of a worktree: most likely one an interrupted `worktree add`
            // made (its checkout done, its workflow not recorded yet).
            Refusal::PathInsideWorktree { path, worktree } if path == worktree => bad(
                format!(
                    "{} is a worktree already, recording no workflow; nothing was created",
                    shown(&path)
                ),
                &format!(
                    "If it is left by an interrupted `git orchestrate worktree add` and holds nothing of yours, \
                     remove it (`git worktree remove --force {}`) and run the command again.",
                    shown(&path)
                ),
            ),
            Refusal::PathInsideWorktree { path, worktree } => bad(
                format!(
                    "{} is inside the worktree {}; nothing was created",
                    shown(&path),
                    shown(&worktree)
                ),
                "A worktree goes beside the repository, not in one: leave PATH out for the default.",
            ),
            Refusal::SharedSetting { setting } => wrong_state(
                state,
                format!(
                    "the repository's shared config sets {setting}, which git would apply to every worktree once \
                     extensions.worktreeConfig is on; nothing was created"
                ),
                "Move it into the primary worktree's own config first (git's `git help worktree`, \
                 CONFIGURATION FILE, says how), then run `git orchestrate worktree add` again.",
            ),
            Refusal::WorkflowExists { name, state } => wrong_state(
                state,
                format!("workflow {name} exists already (state {state}); nothing was created"),
                format!(
                    "Pick another name, or work on {name} where it is (`git orchestrate worktree list` shows where; `--workflow {name}` names it anywhere)."
                ),
            ),
            Refusal::RecordedElsewhere { name, path } => wrong_state(
                state,
                format!(
                    "the worktree {} records workflow {name} already; nothing was created",
                    shown(&path)
                ),
                format!(
                    "Pick another name, or work there: cd {} && git orchestrate get-task",
                    shown(&path)
                ),
            ),
            Refusal::NotRecorded { name, recorded } => {
                let known = if recorded.is_empty() {
                    "no worktree of this repository records a workflow".to_string()
                } else {
                    let list: Vec<String> = recorded
                        .iter()
                        .map(|(w, p)| format!("{w} ({})", shown(p)))
                        .collect();
                    format!("the worktrees record {}", list.join(", "))
                };
                wrong_state(
                    state,
                    format!(
                        "no worktree of this repository records workflow {name}; nothing was removed"
                    ),
                    format!(
                        "Only a worktree `git orchestrate worktree add` made is removed by name ({known}); `git orchestrate worktree list` shows them all."
                    ),
                )
            }
            Refusal::Primary { name, path } => wrong_state(
                state,
                format!(
                    "workflow {name} is recorded by the primary worktree {}, which holds the repository itself; nothing was removed",
                    shown(&path)
                ),
                "The primary worktree is never removed; `git config --worktree --unset orchestrate.workflow` there forgets the workflow.",
            ),
            Refusal::Current {
                name,
                path,
                primary,
            } => wrong_state(
                state,
                format!(
                    "the worktree of workflow {name} is the one this command runs in ({}); git does not remove the worktree you stand in, and nothing was removed",
                    shown(&path)
                ),
                match primary {
                    Some(primary) => format!(
                        "Run it from another worktree: cd {} && git orchestrate worktree remove {name}",
                        shown(&primary)
                    ),
                    None => format!(
                        "Run `git orchestrate worktree remove {name}` from another worktree."
                    ),
                },
            ),
            Refusal::Uncommitted { name, path, files } => {
                let mut named: Vec<String> = files.iter().take(FILES_NAMED).cloned().collect();
                if files.len() > FILES_NAMED {
                    named.push(format!("and {} more", files.len() - FILES_NAMED));
                }
                wrong_state(
                    state,
                    format!(
                        "the worktree of workflow {name} ({}) has uncommitted changes ({}): {}; nothing was removed",
                        shown(&path),
                        plural(files.len(), "file"),
                        named.join(", ")
                    ),
                    format!(
                        "Commit (and push) or discard them there first: cd {} && git status",
                        shown(&path)
                    ),
                )
            }
            Refusal::Unpushed {
                name,
                path,
                branch,
                count,
                upstream,
            } => wrong_state(
                state,
                format!(
                    "the worktree of workflow {name} ({}) has {} not pushed: {}; nothing was removed",
                    shown(&path),
                    plural(count, "commit"),
                    match (&branch, &upstream) {
                        (Some(branch), Some(upstream)) =>
                            format!("on {branch}, not on its upstream {upstream}"),
                        (Some(branch), None) =>
                            format!("on {branch}, on no remote-tracking branch"),
                        (None, _) =>
                            "at its detached HEAD, on no branch and no remote-tracking branch"
                                .to_string(),
                    }
                ),
                format!(
                    "Push them first (cd {} && git push), or `git orchestrate sync` for the workflow's PR branch.",
                    shown(&path)
                ),
            ),
        }
    }
}
