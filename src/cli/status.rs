//! `git orchestrate status`: where the workflow stands. Read-only: it never acts.

use clap::Args;
use serde_json::json;

use super::render::preflight_line;
use super::{Exit, Failure, Ui};
use crate::engine::{EngineError, Session};
use crate::workflow::{State, Status};

/// Show where the workflow stands; unlike get-task it never changes anything.
///
/// The state, branch, current step, counters, last result, warnings, locks and remotes.
#[derive(Debug, Args)]
pub struct StatusArgs {}

pub fn run(session: &Session, _args: &StatusArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let snapshot = session.store.read().map_err(EngineError::from)?;
    let (state, plan, tip) = match &snapshot {
        Some(s) => (s.state.clone(), s.summary.clone(), Some(s.tip.to_string())),
        None => (State::new(None), None, None),
    };
    // A broken config is one more thing to report, not a reason to hide the state.
    let (loaded, mut warnings) = match session.load_config(Some(&state)) {
        Ok(mut loaded) => {
            let warnings = std::mem::take(&mut loaded.warnings);
            (Ok(loaded), warnings)
        }
        Err(EngineError::Config(e)) => {
            let message = e.to_string();
            (
                Err(message),
                vec![
                    "the configuration is invalid: get-task, submit-work and checkpoint refuse to run \
                     until it is fixed"
                        .to_string(),
                ],
            )
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(w) = session.branch_warning(&state)? {
        warnings.push(w);
    }
    if snapshot.is_none()
        && let Some((tip, _)) = session.store.vanished_tip().map_err(EngineError::from)?
    {
        warnings.push(format!(
            "the workflow existed here, but its ref was deleted (last tip {tip}): restore it with `git update-ref \
             {} {tip}`, or start over with `git orchestrate init --new`",
            session.store.ref_name()
        ));
    }
    // A lock file is either a command at work right now or a crash's remains; say which file.
    let locks = session.store.lock_sightings();
    for lock in &locks {
        warnings.push(format!(
            "{} is locked by {} (left {}s ago): if no git or git-orchestrate process is running, a crash \
             left it; delete it (rm {}) or every write to it fails",
            lock.reference,
            lock.path.display(),
            lock.age.as_secs(),
            crate::workflow::briefing::shell_quote(&lock.path.display().to_string())
        ));
    }
    let head = session.store.head_branch().map_err(EngineError::from)?;
    // Another worktree may hold the PR branch; then a `git checkout` here would fail.
    let elsewhere = match state.branch() {
        Some(branch) if state.status() != Status::CreatingBranch => {
            session.branch_worktree(branch)?
        }
        _ => None,
    };
    let remotes = remote_standings(session, snapshot.as_ref().map(|s| s.tip))?;
    let current = plan.as_ref().and_then(|p| p.current.as_ref());
    if ui.json {
        ui.json_object(json!({
            "workflow": session.store.workflow(),
            "exists": snapshot.is_some(),
            "state": state.status(),
            "branch": state.branch(),
            "head": head,
            "branch_worktree": elsewhere,
            "main_branch": state.main_branch,
            // The same step shape as get-task --json.
            "step": current.map(|s| json!({
                "id": s.id.to_string(), "task": s.task, "type": s.kind, "description": s.description,
            })),
            "progress": plan.as_ref().map(|p| json!({"done": p.done, "total": p.total})),
            "pr_title": plan.as_ref().map(|p| p.title.clone()),
            "debug_attempt_counter": state.attempts(),
            "pending": state.pending().as_ref().map(|p| p.kind()),
            "last_run": state.last_run(),
            "last_commit_hash": state.last_checkpoint(),
            "identical_failures": state.identical_failures(),
            "review_round": state.review_round(),
            "blocked_rounds": state.blocked_rounds(),
            "last_review": state.last_review(),
            "verified_tree": state.verified_tree(),
            "final_commit": state.final_commit(),
            "plan_commit": state.plan_commit(),
            "halt": state.halt(),
            "replan": state.replan_context(),
            "guidance": state.guidance,
            "config": match &loaded {
                Ok(loaded) => json!({ "origin": loaded.origin.to_string(), "preflight": loaded.config.gate_names() }),
                Err(error) => json!({ "error": error }),
            },
            "warnings": warnings,
            "locks": locks.iter().map(|l| json!({
                "reference": l.reference, "path": l.path, "age_s": l.age.as_secs(),
            })).collect::<Vec<_>>(),
            "tip": tip,
            "remotes": remotes.iter().map(|r| json!({
                "remote": r.remote, "tip": r.tip.to_string(), "standing": r.standing(),
                "ahead": r.relation.ahead, "behind": r.relation.behind,
            })).collect::<Vec<_>>(),
        }))?;
        return Ok(Exit::Success);
    }
    let mut lines = Vec::new();
    let reference = session.store.ref_name();
    lines.push(match &tip {
        Some(tip) => format!(
            "workflow  {} ({reference} @ {})",
            session.store.workflow(),
            &tip[..12]
        ),
        None => format!(
            "workflow  {} (not created yet: `git orchestrate init` or `get-task` creates it)",
            session.store.workflow()
        ),
    });
    let attempt = if state.status() == Status::Debugging {
        format!(" · debugging attempt {}", state.attempts())
    } else {
        String::new()
    };
    lines.push(format!("state     {}{attempt}", state.status()));
    if let Some(plan) = &plan {
        lines.push(format!(
            "PR        {} · {} of {} steps done",
            plan.title, plan.done, plan.total
        ));
    }
    if let Some(branch) = state.branch() {
        let where_ = if state.status() == Status::CreatingBranch {
            "to be created".to_string()
        } else if head.as_deref() == Some(branch) {
            "checked out".to_string()
        } else if let Some(path) = &elsewhere {
            format!("checked out in {}", path.display())
        } else {
            "not checked out".to_string()
        };
        lines.push(format!("branch    {branch} ({where_})"));
    }
    if let Some(step) = current {
        lines.push(format!(
            "step      {} {} of task {}/{} \"{}\": {}",
            step.id,
            step.kind,
            step.id.task + 1,
            plan.as_ref().map_or(0, |p| p.tasks),
            step.task,
            step.description.lines().next().unwrap_or_default()
        ));
    }
    if let Some(halt) = &state.halt() {
        lines.push(format!(
            "halted    {} · `git orchestrate resume` returns to {}",
            halt.message, halt.resume_to
        ));
    }
    if let Some(replan) = &state.replan_context() {
        lines.push(format!(
            "replan    task {} \"{}\" is to be broken into smaller tasks (submit-work --plan)",
            replan.step.task + 1,
            replan.original_task
        ));
    }
    if state.guidance.is_some() {
        lines.push("guidance  a human's guidance waits for the agent's next get-task".to_string());
    }
    if let Some(pending) = &state.pending() {
        let what = match pending.kind() {
            "analysis" => "analysis of the last RED run (submit-work --analysis-decision)",
            "approval" => {
                "a human's answer to the review: git orchestrate approve | reject --comment TEXT"
            }
            "escalation" => {
                "the agent's escalation: the review rounds are used up (git orchestrate escalate)"
            }
            _ => "a checkpoint commit (git orchestrate checkpoint)",
        };
        lines.push(format!("pending   {what}"));
    }
    if let Some(run) = &state.last_run() {
        let mut line = format!(
            "last run  step {} `{}`: {} ({})",
            run.step,
            run.command,
            run.verdict.as_str(),
            run.exit
        );
        if let Some(pre) = &run.preflight {
            line.push_str(&format!(" · {}", preflight_line(pre)));
        }
        lines.push(line);
    }
    if let Some(commit) = state.last_checkpoint() {
        lines.push(format!("checkpoint {}", &commit[..commit.len().min(12)]));
    }
    if let Some(review) = &state.last_review() {
        lines.push(if review.ran {
            format!(
                "review    round {}: {} finding(s), {} blocking",
                review.round, review.findings, review.blocking
            )
        } else {
            "review    no review command configured".to_string()
        });
    }
    if let Some(commit) = state.final_commit() {
        lines.push(format!("squashed  {}", &commit[..commit.len().min(12)]));
    }
    for r in &remotes {
        let what = match r.standing() {
            "equal" => "up to date".to_string(),
            "ahead" => format!(
                "{} ahead: `git orchestrate sync {}` pushes them",
                plural(r.relation.ahead),
                r.remote
            ),
            "behind" => format!(
                "{} behind: `git orchestrate sync {}` fast-forwards",
                plural(r.relation.behind),
                r.remote
            ),
            _ => format!(
                "DIVERGED: {} here, {} there since the fork: `git orchestrate sync {}` shows both",
                plural(r.relation.ahead),
                r.relation.behind,
                r.remote
            ),
        };
        lines.push(format!(
            "remote    {} @ {}: {what}",
            r.remote,
            &r.tip.to_string()[..12]
        ));
    }
    lines.push(match &loaded {
        Ok(loaded) => {
            let gates = loaded.config.gate_names();
            format!(
                "config    {} · preflight: {}",
                loaded.origin,
                if gates.is_empty() {
                    "none".to_string()
                } else {
                    gates.join(", ")
                }
            )
        }
        Err(error) => format!("config    INVALID: {error}"),
    });
    for line in lines {
        ui.line(line)?;
    }
    if !ui.quiet {
        for w in &warnings {
            ui.line(format!("WARNING: {w}"))?;
        }
    }
    Ok(Exit::Success)
}

/// This workflow against a remote's copy, as last fetched.
struct RemoteStanding {
    remote: String,
    tip: gix::ObjectId,
    relation: crate::store::Relation,
}

impl RemoteStanding {
    fn standing(&self) -> &'static str {
        self.relation.standing().as_str()
    }
}

/// Only what the remote-tracking refs say: `status` never fetches.
fn remote_standings(
    session: &Session,
    tip: Option<gix::ObjectId>,
) -> Result<Vec<RemoteStanding>, EngineError> {
    let Some(tip) = tip else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (remote, theirs) in session.store.tracking_tips()? {
        out.push(RemoteStanding {
            relation: session.store.relation(tip, theirs)?,
            remote,
            tip: theirs,
        });
    }
    Ok(out)
}

fn plural(n: usize) -> String {
    format!("{n} transition{}", if n == 1 { "" } else { "s" })
}
