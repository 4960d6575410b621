//! `git orchestrate plan show`: the active PR plan.

use clap::{Args, Subcommand};

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};
use crate::workflow::plan::{StepStatus, TaskStatus};

/// Work with the active PR plan (stored as pr.json in the workflow ref).
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(subcommand)]
    pub command: PlanCommand,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Show the active PR plan with each step's status; `>` marks the current step.
    Show,
}

pub fn run(session: &Session, args: &PlanArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let PlanCommand::Show = args.command;
    let report = engine::plan(session)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let current = report.current_step;
    let Some(plan) = report.plan else {
        let state = report
            .state
            .map_or("INITIALIZING (not created yet)".to_string(), |s| {
                s.to_string()
            });
        ui.line(format!(
            "no active PR plan (state {state}); `git orchestrate get-task` says how to submit one"
        ))?;
        return Ok(Exit::Success);
    };
    let (done, total) = plan.progress();
    let mut text = format!(
        "{}\n  master plan:  {}\n  summary:      {}\n  verification: {}\n  progress:     {done} of {total} steps done\n",
        plan.pr_title, plan.master_plan_path, plan.summary, plan.verification_plan
    );
    for (t, task) in plan.tasks.iter().enumerate() {
        let status = match task.status {
            TaskStatus::Todo => "TODO",
            TaskStatus::InProgress => "IN_PROGRESS",
            TaskStatus::Done => "DONE",
            TaskStatus::Error => "ERROR",
        };
        text.push_str(&format!("\nTask {} [{status}] {}\n", t + 1, task.name));
        if let Some(h) = &task.breakdown_history {
            text.push_str(&format!(
                "  (broken down from \"{}\": {})\n",
                h.original_task_name, h.justification
            ));
        }
        for (s, step) in task.tdd_steps.iter().enumerate() {
            let mark = if current.is_some_and(|c| c.task == t && c.step == s) {
                ">"
            } else if step.status == StepStatus::Done {
                "x"
            } else {
                " "
            };
            text.push_str(&format!(
                "  [{mark}] {}.{} {:<8} {}\n",
                t + 1,
                s + 1,
                step.kind.as_str(),
                step.description.lines().next().unwrap_or_default()
            ));
        }
    }
    ui.text(&text)?;
    Ok(Exit::Success)
}
