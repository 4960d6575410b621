//! `get-task`: performs the orchestrator's own steps for the current state (drop a stale
//! plan, create the PR branch, record a checkpoint) and returns the briefing.

use super::{EngineError, Session};
use crate::store::{FoundCheckpoint, Snapshot, is_valid_branch_name};
use crate::workflow::briefing::{self, Briefing};
use crate::workflow::plan::PlanSummary;
use crate::workflow::{self, Event, GetTaskStep, Pending, Rejection, State, Status, branch_name};

/// At most this many orchestrator steps per `get-task`; each state needs at most two.
const MAX_STEPS: usize = 8;

pub struct TaskReport {
    pub workflow: String,
    pub state: State,
    pub plan: Option<PlanSummary>,
    pub briefing: Briefing,
    /// The workflow waits for a human: `get-task` exits 10.
    pub halted: bool,
}

pub fn get_task(session: &Session) -> Result<TaskReport, EngineError> {
    session.with_retries(|| attempt(session))
}

fn attempt(session: &Session) -> Result<TaskReport, EngineError> {
    let mut done = Vec::new();
    let mut notes = Vec::new();
    let mut guidance = None;
    let mut snap = session.read_or_create()?;
    for _ in 0..MAX_STEPS {
        let event = match workflow::get_task_step(&snap.state, snap.summary.as_ref()) {
            GetTaskStep::Brief | GetTaskStep::Halted => break,
            GetTaskStep::DeliverGuidance => {
                guidance.clone_from(&snap.state.guidance);
                Event::GuidanceDelivered
            }
            GetTaskStep::DropStalePlan => {
                let title = snap.summary.as_ref().map(|s| s.title.clone());
                done.push(match &title {
                    Some(title) => {
                        format!("dropped the stale plan \"{title}\": every step of it was DONE.")
                    }
                    None => "dropped an empty plan.".to_string(),
                });
                Event::StalePlanDropped { title }
            }
            GetTaskStep::AdoptPlan => {
                let Some(plan) = session.store.plan(&snap)? else {
                    break;
                };
                let branch = free_branch_name(session, &plan.pr_title)?;
                done.push(format!("took up the stored plan \"{}\".", plan.pr_title));
                Event::PlanSubmitted {
                    plan,
                    branch,
                    summary: "get-task took up a plan stored in INITIALIZING".to_string(),
                }
            }
            GetTaskStep::PrepareBranch { branch } => match prepare_branch(session, &snap, &branch)?
            {
                Ok(what) => {
                    done.push(what);
                    Event::BranchReady
                }
                Err(reason) if snap.state.last_error.as_deref() == Some(reason.as_str()) => break,
                Err(reason) => Event::BranchBlocked { reason },
            },
            GetTaskStep::LookForCheckpoint { since } => {
                let Some(branch) = snap.state.current_pr_branch.clone() else {
                    break;
                };
                if session.store.head_branch()?.as_deref() != Some(branch.as_str()) {
                    break;
                }
                let main = session.main_branch(Some(&snap.state))?;
                let Some(found) = session.store.find_checkpoint(since.as_deref(), &main)? else {
                    break;
                };
                let short = &found.commit[..found.commit.len().min(12)];
                if let Some(why) = unverified(session, &snap.state, &found)? {
                    notes.push(format!(
                        "commit {short} ({}) is marked as a checkpoint, but {why}; it was not recorded. \
                         Run `git orchestrate checkpoint`: it runs preflight on exactly what it commits.",
                        found.subject
                    ));
                    break;
                }
                done.push(format!("recorded checkpoint {short} ({}).", found.subject));
                Event::CheckpointRecorded {
                    commit: found.commit,
                    subject: found.subject,
                }
            }
        };
        let blocked = matches!(event, Event::BranchBlocked { .. });
        // None of get-task's own events completes a step: the full plan is not needed.
        let t = workflow::transition(&snap.state, None, event).map_err(EngineError::Rejected)?;
        session.commit(&snap, &t, None)?;
        snap = session.store.read()?.ok_or(EngineError::Conflict)?;
        if blocked {
            break;
        }
    }
    report(session, snap, &done, notes, guidance.as_deref())
}

/// Why a checkpoint commit made outside `git orchestrate checkpoint` does not count: it holds
/// a tree other than the one preflight verified, or the gates changed since. `None` when it
/// counts, including when no gate ran (there was nothing to verify against).
fn unverified(
    session: &Session,
    state: &State,
    found: &FoundCheckpoint,
) -> Result<Option<String>, EngineError> {
    let Some(Pending::Checkpoint {
        verified_tree: Some(verified),
        preflight_key,
        ..
    }) = &state.pending
    else {
        return Ok(None);
    };
    if *verified != found.tree {
        return Ok(Some(
            "it holds changes that preflight has not verified (its tree differs from the one verified at the \
             last submit-work)"
                .to_string(),
        ));
    }
    let key = session.load_config(Some(state))?.config.preflight_key();
    Ok((preflight_key.as_deref() != Some(key.as_str()))
        .then(|| "the preflight gates changed since its tree was verified".to_string()))
}

fn report(
    session: &Session,
    snap: Snapshot,
    done: &[String],
    notes: Vec<String>,
    guidance: Option<&str>,
) -> Result<TaskReport, EngineError> {
    let loaded = session.load_config(Some(&snap.state))?;
    let mut warnings = notes;
    warnings.extend(loaded.warnings);
    if let Some(w) = session.branch_warning(&snap.state)? {
        warnings.push(w);
    }
    let halted = snap.state.status == Status::Halted;
    let gates = loaded.config.gate_names();
    let output_log_command = session.store.output_log_command();
    let escalation = match snap.state.halt {
        Some(_) => session.store.escalation(&snap)?,
        None => None,
    };
    let escalation_command = session.store.escalation_command();
    let plan_show_command = session.store.plan_show_command();
    let briefing = briefing::brief(&briefing::Context {
        thresholds: loaded.config.debugging.thresholds(),
        guidance,
        escalation: escalation
            .as_deref()
            .map(|report| (escalation_command.as_str(), report)),
        plan_show_command: &plan_show_command,
        workflow: session.store.workflow(),
        state: &snap.state,
        plan: snap.summary.as_ref(),
        master_plan: &loaded.config.master_plan,
        output_log_command: &output_log_command,
        gates: &gates,
        done,
        warnings: &warnings,
    });
    Ok(TaskReport {
        workflow: session.store.workflow().to_string(),
        state: snap.state,
        plan: snap.summary,
        briefing,
        halted,
    })
}

/// A branch name for `title` that no branch has yet: `feat/x`, else `feat/x-2`, `feat/x-3`, …
pub(super) fn free_branch_name(session: &Session, title: &str) -> Result<String, EngineError> {
    let base = branch_name::sanitize(title).ok_or_else(|| {
        EngineError::Rejected(Rejection {
            kind: workflow::RejectionKind::InvalidInput,
            state: Status::Initializing,
            message: format!("the PR title \"{title}\" has no letter or digit to name a branch by"),
            hint: "Submit the plan again with a descriptive prTitle.".to_string(),
        })
    })?;
    // A branch `feat` makes `feat/x` impossible (and the other way round): flatten then.
    let base = if parent_is_branch(session, &base)? {
        base.replace('/', "-")
    } else {
        base
    };
    for n in 1..=1000 {
        let name = branch_name::numbered(&base, n);
        if is_valid_branch_name(&name) && !session.store.branch_exists(&name)? {
            return Ok(name);
        }
    }
    Err(EngineError::Rejected(Rejection {
        kind: workflow::RejectionKind::InvalidInput,
        state: Status::Initializing,
        message: format!("every branch name from {base} to {base}-1000 is taken"),
        hint: "Delete merged branches, or submit the plan with a different prTitle.".to_string(),
    }))
}

fn parent_is_branch(session: &Session, name: &str) -> Result<bool, EngineError> {
    let mut prefix = String::new();
    for part in name
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(&[][..], |(_, rest)| rest)
    {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        if session.store.branch_exists(&prefix)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Checks out main, updates it when a remote is configured, and creates the PR branch from
/// it; an existing branch of that name (from an interrupted run) is checked out instead.
/// `Ok(Err(reason))` means the working tree blocked it and nothing was changed.
fn prepare_branch(
    session: &Session,
    snap: &Snapshot,
    branch: &str,
) -> Result<Result<String, String>, EngineError> {
    if session.store.head_branch()?.as_deref() == Some(branch) {
        return Ok(Ok(format!("branch {branch} is checked out.")));
    }
    let changes = session.git.tracked_changes()?;
    if !changes.trim().is_empty() {
        return Ok(Err(format!(
            "the working tree has uncommitted changes to tracked files, and switching branches could \
             carry them into the PR or lose them:\n{}\nCommit them, or put them aside with `git stash`.",
            changes.trim_end()
        )));
    }
    let main = session.main_branch(Some(&snap.state))?;
    if !session.store.branch_exists(&main)? {
        return Ok(Err(format!(
            "the main branch {main} does not exist yet: make a first commit on it (PR branches start from it)."
        )));
    }
    let git = &session.git;
    if session.store.branch_exists(branch)? {
        return Ok(git
            .checkout(branch)
            .map(|()| {
                format!("checked out branch {branch}, created by an earlier interrupted get-task.")
            })
            .map_err(|e| e.to_string()));
    }
    let remote = session.load_config(Some(&snap.state))?.config.remote;
    let steps = || -> Result<String, crate::exec::GitError> {
        git.checkout(&main)?;
        let pulled = match &remote {
            Some(remote) => {
                git.pull_ff_only(remote, &main)?;
                format!(", updated it from {remote}")
            }
            None => String::new(),
        };
        git.checkout_new_branch(branch, &main)?;
        Ok(format!(
            "checked out {main}{pulled}, and created branch {branch} from it."
        ))
    };
    Ok(steps().map_err(|e| e.to_string()))
}
