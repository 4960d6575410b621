//! `git orchestrate worktree add|list|remove`: one workflow per linked worktree, recorded in
//! that worktree's own config so that every command and hook run there acts on it
//! (docs/worktrees.md). Gathers the facts, asks `decide.rs`, then acts through git.

mod decide;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod unit_tests;

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::{EngineError, Session};
use crate::store::{WORKFLOW_CONFIG_KEY, branch_ref, valid_workflow_name, workflow_ref};
use crate::workflow::Status;

use decide::{AddFacts, PathKind, WorktreeFacts, decide_add, decide_remove};
pub use decide::{Refusal, Unpushed};

/// The git setting that gives each worktree a config file of its own (`config.worktree`).
const WORKTREE_CONFIG_EXTENSION: &str = "extensions.worktreeConfig";

/// What `worktree add` did.
#[derive(Clone, Debug, Serialize)]
pub struct WorktreeAddReport {
    pub workflow: String,
    pub path: PathBuf,
    /// The path was not given: a sibling of the primary worktree, `<its name>-<workflow>`.
    pub default_path: bool,
    pub main_branch: String,
    /// The commit checked out, detached: main's tip.
    pub commit: String,
    /// The workflow's state, created in INITIALIZING.
    pub state: Status,
    /// True when `extensions.worktreeConfig` was turned on by this command.
    pub enabled_worktree_config: bool,
    /// True when a half-made worktree an interrupted `worktree add` left at the path was
    /// removed first.
    pub cleaned_half_made: bool,
    /// What to run next.
    pub next: String,
}

/// One worktree, as `worktree list` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct WorktreeEntry {
    pub path: PathBuf,
    pub primary: bool,
    pub current: bool,
    /// The branch checked out; `None` when detached.
    pub branch: Option<String>,
    pub head: Option<String>,
    /// The workflow commands run there act on with no flag or variable.
    pub workflow: String,
    /// Where that comes from: `worktree` (its own config), `config` (a config shared with
    /// other worktrees) or `default`.
    pub workflow_from: &'static str,
    /// The workflow's state; `None` when it has not been created yet.
    pub state: Option<Status>,
    pub dirty: bool,
    pub uncommitted: Vec<String>,
    pub unpushed: bool,
    pub unpushed_commits: Unpushed,
}

/// What `worktree list` found.
#[derive(Clone, Debug, Serialize)]
pub struct WorktreeListReport {
    pub worktrees: Vec<WorktreeEntry>,
}

/// What `worktree remove` did.
#[derive(Clone, Debug, Serialize)]
pub struct WorktreeRemoveReport {
    pub workflow: String,
    pub path: PathBuf,
    /// The workflow's ref, kept: its history stays.
    pub kept_ref: String,
    pub state: Option<Status>,
}

/// One worktree's facts, with what `list` shows beyond what the decisions need.
struct Gathered {
    facts: WorktreeFacts,
    workflow: String,
    workflow_from: &'static str,
}

/// Every worktree git knows whose directory is there, the primary first.
fn gather(session: &Session) -> Result<Vec<Gathered>, EngineError> {
    let git = &session.git;
    let has_remote = !git.remotes()?.is_empty();
    let upstreams: HashMap<String, String> = git.branch_upstreams()?.into_iter().collect();
    let here = canonical(session.store.workdir());
    let mut out = Vec::new();
    for (i, listed) in git.worktrees()?.into_iter().enumerate() {
        if listed.bare || listed.prunable {
            continue;
        }
        let at = git.at(&listed.path);
        let (workflow, workflow_from, recorded) = match at.config_with_scope(WORKFLOW_CONFIG_KEY)? {
            Some((scope, value)) if scope == "worktree" => (value.clone(), "worktree", Some(value)),
            Some((_, value)) => (value, "config", None),
            None => (crate::store::DEFAULT_WORKFLOW.to_string(), "default", None),
        };
        let unpushed = match (&listed.head, has_remote) {
            (_, false) => Unpushed::NoRemote,
            (None, true) => Unpushed::Commits {
                count: 0,
                upstream: None,
            },
            (Some(head), true) => {
                let upstream = listed.branch.as_ref().and_then(|b| upstreams.get(b));
                let not: Vec<&str> = match (&listed.branch, upstream) {
                    (Some(_), Some(upstream)) => vec![upstream.as_str()],
                    (Some(_), None) => vec!["--remotes"],
                    // Detached: what no branch holds goes with the worktree.
                    (None, _) => vec!["--remotes", "--branches"],
                };
                Unpushed::Commits {
                    count: git.count_commits_not_on(head, &not)?,
                    upstream: upstream
                        .map(|u| u.strip_prefix("refs/remotes/").unwrap_or(u).to_string()),
                }
            }
        };
        let half_made = listed.locked.as_deref() == Some("initializing")
            && listed.branch.is_none()
            && recorded.is_none();
        out.push(Gathered {
            facts: WorktreeFacts {
                half_made,
                primary: i == 0,
                current: canonical(&listed.path) == here,
                uncommitted: {
                    session.refuse_waiting_reads(Some(&listed.path))?;
                    at.uncommitted_files()?
                },
                path: listed.path,
                branch: listed.branch,
                head: listed.head,
                recorded,
                unpushed,
            },
            workflow,
            workflow_from,
        });
    }
    Ok(out)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The state of every local workflow that can be read, by name.
fn workflow_states(session: &Session) -> Result<BTreeMap<String, Status>, EngineError> {
    Ok(session
        .store
        .local_workflows()?
        .into_iter()
        .filter_map(|(name, tip)| {
            // A ticket has no TDD status to list.
            let snapshot = session.store.workflow_at(tip, &workflow_ref(&name)).ok()?;
            Some((name, snapshot.into_tdd()?.state.status()))
        })
        .collect())
}

/// `path` with `.` and `..` taken out by their names, as a person reads `../x` from `dir`.
fn lexically_absolute(dir: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in dir.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    // The parent as the file system names it (a symbolic link resolved), as git lists it.
    match (out.parent().map(canonical), out.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => out,
    }
}

/// The default place of workflow `name`'s worktree: beside the primary worktree, named
/// after it: `../<repo>-<name>`.
pub fn default_path(primary: &Path, name: &str) -> PathBuf {
    let repo = primary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_string());
    primary
        .parent()
        .unwrap_or(primary)
        .join(format!("{repo}-{name}"))
}

fn is_true(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "yes" | "on" | "1"
    )
}

/// `core.bare = true` or `core.worktree` in the repository's shared config: git documents
/// that they must move to the primary worktree's own config when `extensions.worktreeConfig`
/// is turned on, or they would apply to every worktree.
fn shared_setting_that_moves(session: &Session) -> Result<Option<String>, EngineError> {
    for key in ["core.bare", "core.worktree"] {
        if let Some((scope, value)) = session.git.config_with_scope(key)?
            && scope == "local"
            && (key == "core.worktree" || is_true(&value))
        {
            return Ok(Some(format!("{key} = {value}")));
        }
    }
    Ok(None)
}

fn path_kind(path: &Path) -> PathKind {
    match std::fs::symlink_metadata(path) {
        Err(_) => PathKind::Missing,
        Ok(meta) if !meta.is_dir() => PathKind::NotADirectory,
        Ok(_) => match std::fs::read_dir(path).map(|mut entries| entries.next().is_none()) {
            Ok(true) => PathKind::EmptyDir,
            _ => PathKind::NonEmptyDir,
        },
    }
}

/// `worktree add NAME [PATH]`: a linked worktree detached at main's tip, its own config
/// naming workflow `name`, and the workflow created there in INITIALIZING, so that `worktree
/// list`, `status --workflow` and the other workflows' checks see it from the start.
pub fn add(
    session: &Session,
    name: &str,
    path: Option<&Path>,
    cwd: &Path,
) -> Result<WorktreeAddReport, EngineError> {
    let states = workflow_states(session)?;
    let existing = states.get(name).copied();
    let gathered = gather(session)?;
    let worktrees: Vec<WorktreeFacts> = gathered.into_iter().map(|g| g.facts).collect();
    let primary = worktrees
        .iter()
        .find(|w| w.primary)
        .map_or_else(|| session.store.workdir().to_path_buf(), |w| w.path.clone());
    let (target, default) = match path {
        Some(path) => (lexically_absolute(cwd, path), false),
        None => (default_path(&primary, name), true),
    };
    let extension_on = session
        .git
        .config(WORKTREE_CONFIG_EXTENSION)?
        .is_some_and(|v| is_true(&v));
    let moves_with_extension = if extension_on {
        None
    } else {
        shared_setting_that_moves(session)?
    };
    let plan = decide_add(&AddFacts {
        name,
        existing,
        worktrees: &worktrees,
        path: &target,
        default_path: default,
        path_kind: path_kind(&target),
        moves_with_extension,
    })
    .map_err(|refusal| refusal.into_error(existing))?;

    let main = session.main_branch(None)?;
    let commit = session.git.rev_parse(&branch_ref(&main)).map_err(|_| {
        EngineError::BadInput {
            message: format!("the main branch {main} has no commit here; nothing was created"),
            hint: "Set main_branch in .orchestrate.toml to the branch PRs start from, or make its first commit.".into(),
        }
    })?;
    if plan.clean_first {
        session.git.remove_half_made_worktree(&plan.path)?;
    }
    session.git.add_detached_worktree(&plan.path, &commit)?;
    let enabled = !extension_on;
    if enabled {
        session.git.set_config(WORKTREE_CONFIG_EXTENSION, "true")?;
    }
    session
        .git
        .at(&plan.path)
        .set_worktree_config(WORKFLOW_CONFIG_KEY, name)?;
    let created = Session::open(&plan.path, name)?;
    let snapshot = created.read_or_create()?;
    Ok(WorktreeAddReport {
        workflow: name.to_string(),
        next: format!(
            "cd {} && git orchestrate get-task",
            crate::workflow::briefing::shell_quote(&plan.path.display().to_string())
        ),
        path: plan.path,
        default_path: plan.default_path,
        main_branch: main,
        commit,
        state: snapshot.state.status(),
        enabled_worktree_config: enabled,
        cleaned_half_made: plan.clean_first,
    })
}

/// `worktree list`: every worktree, its workflow and that workflow's state, and what it
/// holds that is not committed or not pushed.
pub fn list(session: &Session) -> Result<WorktreeListReport, EngineError> {
    let states = workflow_states(session)?;
    let worktrees = gather(session)?
        .into_iter()
        .map(|g| WorktreeEntry {
            state: states.get(&g.workflow).copied(),
            dirty: !g.facts.uncommitted.is_empty(),
            unpushed: g.facts.unpushed.count() > 0,
            path: g.facts.path,
            primary: g.facts.primary,
            current: g.facts.current,
            branch: g.facts.branch,
            head: g.facts.head,
            workflow: g.workflow,
            workflow_from: g.workflow_from,
            uncommitted: g.facts.uncommitted,
            unpushed_commits: g.facts.unpushed,
        })
        .collect();
    Ok(WorktreeListReport { worktrees })
}

/// `worktree remove NAME`: the worktree whose own config records workflow `name`, when it
/// holds nothing uncommitted or unpushed. The workflow's refs stay.
pub fn remove(session: &Session, name: &str) -> Result<WorktreeRemoveReport, EngineError> {
    if !valid_workflow_name(name) {
        return Err(Refusal::BadName { name: name.into() }.into_error(None));
    }
    let state = workflow_states(session)?.get(name).copied();
    let worktrees: Vec<WorktreeFacts> = gather(session)?.into_iter().map(|g| g.facts).collect();
    let found = decide_remove(name, &worktrees).map_err(|refusal| refusal.into_error(state))?;
    session.git.remove_worktree(&found.path)?;
    Ok(WorktreeRemoveReport {
        workflow: name.to_string(),
        path: found.path.clone(),
        kept_ref: workflow_ref(name),
        state,
    })
}
