//! `status`: where the workflow stands, gathered without acting: the state, the plan's
//! progress, the configuration in force (or why it is invalid), warnings, ref locks, and how
//! the workflow stands against each remote's copy as last fetched.

use std::path::PathBuf;

use serde::Serialize;

use super::{EngineError, Session};
use crate::store::Snapshot;
use crate::workflow::briefing::{Notice, StepView};
use crate::workflow::plan::StepSummary;
use crate::workflow::state::{HaltRecord, LastRun, ReplanContext, ReviewSummary};
use crate::workflow::{Pending, State, Status};

/// The last turn `run` recorded (`status --json` "run").
#[derive(Clone, Debug, Serialize)]
pub struct RunPointer {
    #[serde(rename = "ref")]
    pub reference: String,
    pub commit: String,
    pub subject: String,
}

/// What `status` reports (docs/agent-guide.md, "`status --json`").
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    /// Always `tdd`; a ticket workflow's status says `ticket` (docs/tickets.md).
    pub kind: &'static str,
    pub workflow: String,
    pub exists: bool,
    pub state: Status,
    pub branch: Option<String>,
    pub head: Option<String>,
    /// Another worktree that has the PR branch checked out.
    pub branch_worktree: Option<PathBuf>,
    pub main_branch: Option<String>,
    /// The same step shape as `get-task --json`.
    pub step: Option<StepView>,
    pub progress: Option<Progress>,
    pub pr_title: Option<String>,
    pub debug_attempt_counter: u32,
    pub pending: Option<&'static str>,
    /// The checkpoint commit that is owed, when it is made already (by a human's `git
    /// commit`, say) and only waits for `get-task` to record it.
    pub checkpoint_made: Option<MadeCheckpoint>,
    /// At the human gate: the review's findings, none of them blocking, for the human to
    /// weigh. Empty elsewhere.
    pub noted_findings: Vec<crate::workflow::review::Finding>,
    pub last_run: Option<LastRun>,
    pub last_commit_hash: Option<String>,
    pub identical_failures: u32,
    pub review_round: u32,
    pub blocked_rounds: u32,
    pub last_review: Option<ReviewSummary>,
    pub verified_tree: Option<String>,
    pub final_commit: Option<String>,
    pub plan_commit: Option<String>,
    pub halt: Option<HaltRecord>,
    pub replan: Option<ReplanContext>,
    pub guidance: Option<String>,
    /// Nothing is left to do: `--no-pr-left` was said and the master plan on
    /// the main branch has not changed since.
    pub idle: bool,
    pub config: ConfigStatus,
    pub warnings: Vec<String>,
    pub locks: Vec<LockReport>,
    pub tip: Option<String>,
    pub remotes: Vec<RemoteReport>,
    /// The last turn of `git orchestrate run`, where its briefing and output are kept.
    pub run: Option<RunPointer>,
    /// The ref the workflow lives in, for people.
    #[serde(skip)]
    pub reference: String,
    /// The current step with its task's number, for people.
    #[serde(skip)]
    pub current: Option<StepSummary>,
    /// How many tasks the plan has.
    #[serde(skip)]
    pub tasks: usize,
}

/// A checkpoint commit on the PR branch that the workflow has not recorded yet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MadeCheckpoint {
    pub commit: String,
    pub subject: String,
    /// Preflight passed on exactly its tree under the gates in force: `get-task` records it.
    pub verified: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// The configuration in force, or why it cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConfigStatus {
    Loaded {
        origin: String,
        preflight: Vec<String>,
    },
    Invalid {
        error: String,
    },
}

/// A ref lock file seen now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LockReport {
    pub reference: String,
    pub path: PathBuf,
    pub age_s: u64,
}

/// This workflow against a remote's copy, as last fetched: `status` never fetches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RemoteReport {
    pub remote: String,
    pub tip: String,
    /// `equal`, `ahead`, `behind` or `diverged`.
    pub standing: &'static str,
    pub ahead: usize,
    pub behind: usize,
}

/// `status` on a TDD workflow; a ticket workflow is refused.
pub fn status(session: &Session) -> Result<StatusReport, EngineError> {
    status_of(session, session.store.read()?)
}

/// `status` on the TDD workflow read as `snapshot` (`None`: not created yet).
pub(super) fn status_of(
    session: &Session,
    snapshot: Option<Snapshot>,
) -> Result<StatusReport, EngineError> {
    let (state, plan, tip) = match &snapshot {
        Some(s) => (s.state.clone(), s.summary.clone(), Some(s.tip)),
        None => (State::new(None), None, None),
    };
    let (config, mut notices, idle) = config_status(session, &state)?;
    notices.extend(session.state_warnings(&state)?);
    if snapshot.is_none()
        && let Some((tip, _)) = session.store.vanished_tip()?
    {
        notices.push(Notice::WorkflowVanished {
            reference: session.store.ref_name(),
            tip,
        });
    }
    // A lock file is either a command at work right now or a crash's remains; say which file.
    let locks = session.store.lock_sightings();
    for lock in &locks {
        notices.push(Notice::Locked {
            reference: lock.reference.clone(),
            path: lock.path.clone(),
            age_s: lock.age.as_secs(),
        });
    }
    let warnings: Vec<String> = notices.iter().map(ToString::to_string).collect();
    let head = session.store.head_branch()?;
    // Another worktree may hold the PR branch; then a `git checkout` here would fail.
    let branch_worktree = match state.branch() {
        Some(branch) if state.status() != Status::CreatingBranch => {
            session.branch_worktree(branch)?
        }
        _ => None,
    };
    let checkpoint_made = made_checkpoint(session, &state, plan.as_ref(), head.as_deref())?;
    let facts = Gathered {
        workflow: session.store.workflow().to_string(),
        reference: session.store.ref_name(),
        exists: snapshot.is_some(),
        remotes: match tip {
            Some(tip) => remote_reports(session, tip)?,
            None => Vec::new(),
        },
        noted_findings: match &snapshot {
            Some(snap) => noted_findings(session, snap)?,
            None => Vec::new(),
        },
        run: session
            .store
            .last_run_record()?
            .map(|(commit, subject)| RunPointer {
                reference: session.store.run_ref_name(),
                commit,
                subject,
            }),
        locks: locks
            .iter()
            .map(|l| LockReport {
                reference: l.reference.clone(),
                path: l.path.clone(),
                age_s: l.age.as_secs(),
            })
            .collect(),
        tip: tip.map(|t| t.to_string()),
        head,
        branch_worktree,
        checkpoint_made,
        idle,
        config,
        warnings,
    };
    Ok(report(state, plan, facts))
}

/// What `status` read besides the workflow's state and plan.
struct Gathered {
    workflow: String,
    reference: String,
    exists: bool,
    head: Option<String>,
    branch_worktree: Option<PathBuf>,
    checkpoint_made: Option<MadeCheckpoint>,
    noted_findings: Vec<crate::workflow::review::Finding>,
    idle: bool,
    config: ConfigStatus,
    warnings: Vec<String>,
    locks: Vec<LockReport>,
    tip: Option<String>,
    remotes: Vec<RemoteReport>,
    run: Option<RunPointer>,
}

/// The status report of `state` and its `plan`, with what was read about them.
fn report(
    state: State,
    plan: Option<crate::workflow::plan::PlanSummary>,
    facts: Gathered,
) -> StatusReport {
    let current = plan.as_ref().and_then(|p| p.current.clone());
    let pr = state.pr();
    StatusReport {
        kind: "tdd",
        workflow: facts.workflow,
        exists: facts.exists,
        state: state.status(),
        branch: state.branch().map(str::to_string),
        head: facts.head,
        branch_worktree: facts.branch_worktree,
        main_branch: state.main_branch.clone(),
        step: current.as_ref().map(StepView::from),
        progress: plan.as_ref().map(|p| Progress {
            done: p.done,
            total: p.total,
        }),
        pr_title: plan.as_ref().map(|p| p.title.clone()),
        debug_attempt_counter: state.attempts(),
        pending: state.pending().as_ref().map(Pending::kind),
        checkpoint_made: facts.checkpoint_made,
        noted_findings: facts.noted_findings,
        last_run: pr.and_then(|pr| pr.last_run.as_ref()).cloned(),
        last_commit_hash: pr
            .and_then(|pr| pr.last_checkpoint.as_deref())
            .map(str::to_string),
        identical_failures: state.identical_failures(),
        review_round: pr.map_or(0, |pr| pr.review.round),
        blocked_rounds: pr.map_or(0, |pr| pr.review.blocked_rounds),
        last_review: pr.and_then(|pr| pr.review.last.as_ref()).cloned(),
        verified_tree: pr
            .and_then(|pr| pr.verified_tree.as_deref())
            .map(str::to_string),
        final_commit: state.final_commit().map(str::to_string),
        plan_commit: state.plan_commit().map(str::to_string),
        halt: state.halt(),
        replan: state.replan_context().cloned(),
        guidance: state.guidance.clone(),
        idle: facts.idle,
        config: facts.config,
        warnings: facts.warnings,
        locks: facts.locks,
        tip: facts.tip,
        remotes: facts.remotes,
        run: facts.run,
        reference: facts.reference,
        current,
        tasks: plan.as_ref().map_or(0, |p| p.tasks),
    }
}

/// The owed checkpoint commit, when HEAD on the PR branch is one already: what `get-task`
/// would record, found the same way, read only.
fn made_checkpoint(
    session: &Session,
    state: &State,
    plan: Option<&crate::workflow::plan::PlanSummary>,
    head: Option<&str>,
) -> Result<Option<MadeCheckpoint>, EngineError> {
    let crate::workflow::GetTaskStep::LookForCheckpoint { since } =
        crate::workflow::get_task_step(state, plan)
    else {
        return Ok(None);
    };
    if state.branch().is_none() || state.branch() != head {
        return Ok(None);
    }
    let main = session.main_branch(Some(state))?;
    let stops = [
        since.as_deref(),
        state.pr().and_then(|pr| pr.base.as_deref()),
    ];
    let Some(found) = session.store.find_checkpoint(&stops, &main)? else {
        return Ok(None);
    };
    let verified = super::unrecorded::unverified(session, state, &found)?.is_none();
    Ok(Some(MadeCheckpoint {
        commit: found.commit,
        subject: found.subject,
        verified,
    }))
}

/// The configuration's part of the status, what it warns about, and whether the workflow
/// is idle. A broken config is one more thing to report, not a reason to hide the state.
fn config_status(
    session: &Session,
    state: &State,
) -> Result<(ConfigStatus, Vec<Notice>, bool), EngineError> {
    match session.load_config(Some(state)) {
        Ok(loaded) => {
            let idle = session.idle_holds(state, &loaded.config.master_plan)?;
            Ok((
                ConfigStatus::Loaded {
                    origin: loaded.origin.to_string(),
                    preflight: loaded.config.gate_names(),
                },
                loaded.warnings,
                idle,
            ))
        }
        Err(EngineError::Config(e)) => Ok((
            ConfigStatus::Invalid {
                error: e.to_string(),
            },
            vec![Notice::ConfigInvalid],
            false,
        )),
        Err(e) => Err(e),
    }
}

/// How the workflow stands against each remote's copy of it.
pub(super) fn remote_reports(
    session: &Session,
    tip: gix::ObjectId,
) -> Result<Vec<RemoteReport>, EngineError> {
    let mut remotes = Vec::new();
    for (remote, theirs) in session.store.tracking_tips()? {
        let relation = session.store.relation(tip, theirs)?;
        remotes.push(RemoteReport {
            remote,
            tip: theirs.to_string(),
            standing: relation.standing().as_str(),
            ahead: relation.ahead,
            behind: relation.behind,
        });
    }
    Ok(remotes)
}

/// At the human gate, the review's findings the human weighs; none elsewhere.
pub(super) fn noted_findings(
    session: &Session,
    snap: &crate::store::Snapshot,
) -> Result<Vec<crate::workflow::review::Finding>, EngineError> {
    Ok(match snap.state.pending() {
        Some(Pending::Approval { .. }) => session
            .store
            .review(snap)?
            .and_then(|bytes| {
                serde_json::from_slice::<crate::workflow::review::ReviewRecord>(&bytes).ok()
            })
            .map(|record| record.findings)
            .unwrap_or_default(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// What `status` read about a workflow not created yet, on a repository with a lock.
    fn gathered() -> Gathered {
        Gathered {
            workflow: "main".into(),
            reference: "refs/orchestrator/workflows/main".into(),
            exists: false,
            head: Some("main".into()),
            branch_worktree: None,
            checkpoint_made: None,
            noted_findings: Vec::new(),
            idle: false,
            config: ConfigStatus::Loaded {
                origin: "main:.orchestrate.toml".into(),
                preflight: vec!["tests".into()],
            },
            warnings: vec!["a warning".into()],
            locks: vec![LockReport {
                reference: "refs/heads/main".into(),
                path: PathBuf::from(".git/refs/heads/main.lock"),
                age_s: 3,
            }],
            tip: None,
            remotes: Vec::new(),
            run: None,
        }
    }

    #[test]
    fn the_report_of_a_workflow_not_created_yet_is_its_fresh_state_and_what_was_read() {
        let report = report(State::new(Some("main".into())), None, gathered());
        assert_eq!(
            serde_json::to_value(&report).expect("a report serializes"),
            serde_json::json!({
                "kind": "tdd",
                "workflow": "main",
                "exists": false,
                "state": "INITIALIZING",
                "branch": null,
                "head": "main",
                "branch_worktree": null,
                "main_branch": "main",
                "step": null,
                "progress": null,
                "pr_title": null,
                "debug_attempt_counter": 0,
                "pending": null,
                "checkpoint_made": null,
                "noted_findings": [],
                "last_run": null,
                "last_commit_hash": null,
                "identical_failures": 0,
                "review_round": 0,
                "blocked_rounds": 0,
                "last_review": null,
                "verified_tree": null,
                "final_commit": null,
                "plan_commit": null,
                "halt": null,
                "replan": null,
                "guidance": null,
                "idle": false,
                "config": {"origin": "main:.orchestrate.toml", "preflight": ["tests"]},
                "warnings": ["a warning"],
                "locks": [{"reference": "refs/heads/main", "path": ".git/refs/heads/main.lock", "age_s": 3}],
                "tip": null,
                "remotes": [],
                "run": null
            })
        );
        assert_eq!(
            (report.reference.as_str(), report.current, report.tasks),
            ("refs/orchestrator/workflows/main", None, 0)
        );
    }
}
