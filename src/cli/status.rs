//! `git orchestrate status`: where the workflow stands. Read-only: it never acts.

use clap::Args;

use super::render::preflight_line;
use super::{Exit, Failure, Ui};
use crate::engine::ticket::TicketStatus;
use crate::engine::{self, ConfigStatus, RemoteReport, Session, StatusReport, WorkflowStatus};
use crate::workflow::Status;
use crate::workflow::ticket::GateVerdict;

/// Show where the workflow stands; unlike get-task it never changes anything.
///
/// The state, branch, current step, counters, last result, warnings, locks and remotes.
#[derive(Debug, Args)]
pub struct StatusArgs {}

pub fn run(session: &Session, _args: &StatusArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::workflow_status(session)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let report = match report {
        WorkflowStatus::Ticket(ticket) => {
            for line in ticket_lines(&ticket) {
                ui.line(line)?;
            }
            return Ok(Exit::Success);
        }
        WorkflowStatus::Tdd(report) => report,
    };
    for line in lines(&report) {
        ui.line(line)?;
    }
    if !ui.quiet {
        for w in &report.warnings {
            ui.line(format!("WARNING: {w}"))?;
        }
    }
    Ok(Exit::Success)
}

/// A ticket workflow's status as people read it (docs/tickets.md).
fn ticket_lines(t: &TicketStatus) -> Vec<String> {
    let mut lines = vec![format!(
        "workflow  {} ({} @ {}) · ticket",
        t.workflow,
        t.reference,
        crate::short_id(&t.tip)
    )];
    let turn = match t.turn {
        Some(role) => format!(" · the {}'s turn", role.as_str()),
        None => String::new(),
    };
    lines.push(format!("state     {}{turn}", t.state.as_str()));
    lines.push(format!(
        "ticket    {} · {} of {} subtasks complete",
        t.title, t.progress.done, t.progress.total
    ));
    let where_ = if t.head.as_deref() == Some(t.branch.as_str()) {
        "checked out".to_string()
    } else if let Some(path) = &t.branch_worktree {
        format!("checked out in {}", path.display())
    } else {
        "not checked out".to_string()
    };
    lines.push(format!(
        "branch    {} ({where_}) · verified at {}",
        t.branch,
        crate::short_id(&t.verified)
    ));
    for s in &t.subtasks {
        let mut line = format!("subtask   {} {} \"{}\"", s.id, s.status.as_str(), s.title);
        if s.rejections > 0 {
            line.push_str(&format!(" · {} rejection(s)", s.rejections));
        }
        if t.current.as_deref() == Some(s.id.as_str()) {
            line.push_str(" · current");
        }
        lines.push(line);
    }
    if t.subtasks.is_empty() {
        lines.push("subtask   none yet: the manager's `assign` makes the first".to_string());
    }
    if let Some(w) = &t.waiting {
        let observed = match w.observed {
            Some(GateVerdict::Pass) => "pass",
            Some(GateVerdict::Fail) => "fail",
            Some(GateVerdict::None) => "none configured",
            None => "not observed",
        };
        lines.push(format!(
            "report    {} reported {} (build {}) at {}; observed gates: {observed} · {} contradiction(s)",
            w.subtask,
            w.status,
            w.build_status,
            crate::short_id(&w.commit),
            w.contradictions.len()
        ));
        for c in &w.contradictions {
            lines.push(format!("          - {c}"));
        }
    }
    if let Some(halt) = &t.halt {
        lines.push(format!("halted    {halt}"));
    }
    if let Some(done) = &t.finished {
        lines.push(format!(
            "squashed  {}{}",
            crate::short_id(&done.squash),
            done.merge
                .as_deref()
                .map(|m| format!(" · merged as {}", crate::short_id(m)))
                .unwrap_or_default()
        ));
    }
    lines.push(format!("next      {}", t.next));
    lines.extend(t.remotes.iter().map(remote_line));
    lines
}

/// The report as people read it, one line per fact.
fn lines(report: &StatusReport) -> Vec<String> {
    let mut lines = Vec::new();
    position(report, &mut lines);
    holds(report, &mut lines);
    if let Some(pending) = report.pending {
        lines.push(format!("pending   {}", pending_line(report, pending)));
        for finding in &report.noted_findings {
            lines.push(format!("noted     {finding}"));
        }
    }
    results(report, &mut lines);
    remotes(report, &mut lines);
    lines.push(config_line(&report.config));
    lines
}

/// Where the workflow is: its ref, state, PR, branch and current step.
fn position(report: &StatusReport, lines: &mut Vec<String>) {
    let reference = &report.reference;
    lines.push(match &report.tip {
        Some(tip) => format!(
            "workflow  {} ({reference} @ {})",
            report.workflow,
            crate::short_id(tip)
        ),
        None => format!(
            "workflow  {} (not created yet: `git orchestrate init` or `get-task` creates it)",
            report.workflow
        ),
    });
    let attempt = if report.state == Status::Debugging {
        format!(" · debugging attempt {}", report.debug_attempt_counter)
    } else {
        String::new()
    };
    lines.push(format!("state     {}{attempt}", report.state));
    if let (Some(title), Some(progress)) = (&report.pr_title, &report.progress) {
        lines.push(format!(
            "PR        {title} · {} of {} steps done",
            progress.done, progress.total
        ));
    }
    if let Some(branch) = &report.branch {
        let where_ = if report.state == Status::CreatingBranch {
            "to be created".to_string()
        } else if report.head.as_ref() == Some(branch) {
            "checked out".to_string()
        } else if let Some(path) = &report.branch_worktree {
            format!("checked out in {}", path.display())
        } else {
            "not checked out".to_string()
        };
        lines.push(format!("branch    {branch} ({where_})"));
    }
    if let Some(step) = &report.current {
        lines.push(format!(
            "step      {} {} of task {}/{} \"{}\": {}",
            step.id,
            step.kind,
            step.id.task + 1,
            report.tasks,
            step.task,
            step.description.lines().next().unwrap_or_default()
        ));
    }
}

/// What holds the workflow: a halt, a re-plan, the end of the plan, a human's guidance.
fn holds(report: &StatusReport, lines: &mut Vec<String>) {
    if let Some(halt) = &report.halt {
        lines.push(format!(
            "halted    {} · `git orchestrate resume` returns to {}",
            halt.message, halt.resume_to
        ));
    }
    if let Some(replan) = &report.replan {
        lines.push(format!(
            "replan    task {} \"{}\" is to be broken into smaller tasks (submit-work --plan)",
            replan.step.task + 1,
            replan.original_task
        ));
    }
    if report.idle {
        lines.push(
            "idle      nothing left to do: the agent said no PR is left (submit-work --no-pr-left)"
                .to_string(),
        );
    }
    if report.guidance.is_some() {
        lines.push("guidance  a human's guidance waits for the agent's next get-task".to_string());
    }
}

/// What the workflow waits for.
fn pending_line(report: &StatusReport, pending: &str) -> String {
    let what = match pending {
        "analysis" => "analysis of the last RED run (submit-work --analysis-decision)",
        "approval" => {
            "a human's answer to the review: git orchestrate approve | reject --comment TEXT"
        }
        "escalation" => {
            "the agent's escalation: the review rounds are used up (git orchestrate escalate)"
        }
        _ => "a checkpoint commit (git orchestrate checkpoint)",
    };
    match &report.checkpoint_made {
        Some(made) if made.verified => format!(
            "a checkpoint commit: made ({} {}) and verified; the next `git orchestrate get-task` records it",
            crate::short_id(&made.commit),
            made.subject
        ),
        Some(made) => format!(
            "a checkpoint commit: {} {} is one, but preflight has not verified its tree, so it does \
                 not count (`git orchestrate get-task` says why)",
            crate::short_id(&made.commit),
            made.subject
        ),
        None => what.to_string(),
    }
}

/// What the last run, checkpoint, review and squash left.
fn results(report: &StatusReport, lines: &mut Vec<String>) {
    if let Some(run) = &report.last_run {
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
    if let Some(commit) = &report.last_commit_hash {
        lines.push(format!("checkpoint {}", crate::short_id(commit)));
    }
    if let Some(review) = &report.last_review {
        lines.push(if review.ran {
            format!(
                "review    round {}: {} finding(s), {} blocking",
                review.round, review.findings, review.blocking
            )
        } else {
            "review    no review command configured".to_string()
        });
    }
    if let Some(commit) = &report.final_commit {
        lines.push(format!("squashed  {}", crate::short_id(commit)));
    }
    if let Some(run) = &report.run {
        lines.push(format!(
            "run       last {} · its briefing and output: git show {}:briefing.txt, :stdout.log",
            run.subject, run.reference
        ));
    }
}

/// How each remote's copy of the workflow stands against this one.
fn remotes(report: &StatusReport, lines: &mut Vec<String>) {
    lines.extend(report.remotes.iter().map(remote_line));
}

/// How one remote's copy stands, for a TDD and a ticket status alike.
fn remote_line(r: &RemoteReport) -> String {
    {
        let what = match r.standing {
            "equal" => "up to date".to_string(),
            "ahead" => format!(
                "{} ahead: `git orchestrate sync {}` pushes them",
                plural(r.ahead),
                r.remote
            ),
            "behind" => format!(
                "{} behind: `git orchestrate sync {}` fast-forwards",
                plural(r.behind),
                r.remote
            ),
            _ => format!(
                "DIVERGED: {} here, {} there since the fork: `git orchestrate sync {}` shows both",
                plural(r.ahead),
                r.behind,
                r.remote
            ),
        };
        format!(
            "remote    {} @ {}: {what}",
            r.remote,
            crate::short_id(&r.tip)
        )
    }
}

fn config_line(config: &ConfigStatus) -> String {
    match config {
        ConfigStatus::Loaded { origin, preflight } => format!(
            "config    {origin} · preflight: {}",
            if preflight.is_empty() {
                "none".to_string()
            } else {
                preflight.join(", ")
            }
        ),
        ConfigStatus::Invalid { error } => format!("config    INVALID: {error}"),
    }
}

fn plural(n: usize) -> String {
    format!("{n} transition{}", if n == 1 { "" } else { "s" })
}
