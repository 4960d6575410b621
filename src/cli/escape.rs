//! `request-scope-reduction`, `escalate` and `resume`: the escape hatches of debugging and the
//! human's answer to a halt (SPEC §6.3, §6.4).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::error::{CommandError, HUMAN_ENV};
use super::{Failure, Ui};
use crate::engine::{self, Session};

/// Give up on a task that keeps failing: revert tracked changes to the last commit (untracked
/// files stay, and are listed) and re-plan the task as smaller ones. Locked until
/// `[debugging] unlock_scope_reduction_at` failed attempts (default 6).
#[derive(Debug, Args)]
pub struct ScopeReductionArgs {}

/// Hand the problem to a human: store a markdown report, halt the workflow, print the report,
/// and exit 10. Locked until `[debugging] unlock_escalation_at` failed attempts (default 10).
#[derive(Debug, Args)]
pub struct EscalateArgs {
    /// The markdown report: the goal, what was tried, the error messages, your analysis. A
    /// file, or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    pub report: PathBuf,
}

/// For humans: answer a halt. The workflow returns to where it stopped, with the attempt
/// counter reset; the guidance is shown to the agent once, in its next briefing.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// What the agent should try, or what you changed.
    #[arg(long, value_name = "TEXT")]
    pub guidance: Option<String>,
}

pub fn scope_reduction(
    session: &Session,
    _args: &ScopeReductionArgs,
    ui: &mut Ui,
) -> Result<u8, Failure> {
    let report = engine::request_scope_reduction(session)?;
    if ui.json {
        ui.json_object(json!({
            "workflow": report.workflow,
            "state": report.state.status(),
            "replan": report.state.replan_context(),
            "briefing": report.briefing.text,
        }))?;
    } else {
        ui.text(&report.briefing.text)?;
    }
    Ok(0)
}

pub fn escalate(session: &Session, args: &EscalateArgs, ui: &mut Ui) -> Result<u8, Failure> {
    let bytes = super::read_input(
        &args.report,
        "the report",
        "Pass a markdown file with --report FILE, or pipe it with --report -.",
    )?;
    let report = String::from_utf8(bytes).map_err(|_| {
        Failure::Command(CommandError::invalid_input(
            "the report is not UTF-8 text",
            "Write the report as UTF-8 markdown.",
        ))
    })?;
    let done = engine::escalate(session, &report)?;
    if ui.json {
        ui.json_object(json!({ "state": done.state.status(), "report": done.report }))?;
    } else {
        // The report, verbatim: the seed's escalate prints exactly what it was given.
        ui.text(&done.report)?;
    }
    Ok(10)
}

pub fn resume(session: &Session, args: &ResumeArgs, ui: &mut Ui) -> Result<u8, Failure> {
    require_human("resume")?;
    let done = engine::resume(session, args.guidance.as_deref())?;
    if ui.json {
        ui.json_object(json!({
            "state": done.state.status(),
            "halt_message": done.from,
            "guidance": done.guidance,
            "merged": done.merged,
        }))?;
        return Ok(0);
    }
    if let Some(branch) = &done.merged {
        let mut text = format!(
            "resumed: {branch} is merged and deleted; HALTED -> {}, and the agent's next \
             `git orchestrate get-task` plans the next PR\n",
            done.state.status()
        );
        if args.guidance.is_some() {
            text.push_str("note: --guidance is not kept after a merge conflict: the PR is done, and the next one starts afresh\n");
        }
        ui.text(&text)?;
        return Ok(0);
    }
    let mut text = format!(
        "resumed: HALTED -> {} (halted because {})\n",
        done.state.status(),
        done.from
    );
    if !ui.quiet {
        text.push_str(match done.guidance {
            Some(_) => "the agent sees your guidance once, in its next `git orchestrate get-task`\n",
            None => "no guidance given; the agent's next `git orchestrate get-task` continues where it stopped\n",
        });
    }
    ui.text(&text)?;
    Ok(0)
}

/// For humans: approve the PR at the review's human gate (`[review] human = true`).
#[derive(Debug, Args)]
pub struct ApproveArgs {}

/// For humans: reject the PR at the review's human gate. The comment becomes a blocking
/// finding: a new task for the agent, then another review round.
#[derive(Debug, Args)]
pub struct RejectArgs {
    /// What must change.
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub comment: String,
}

/// `resume`, `approve` and `reject` answer for a human. Agents run commands without a
/// terminal; refusing them there stops an agent from waving its own work through (a speed
/// bump, not a wall: the environment variable is for scripts acting for a person).
fn require_human(command: &str) -> Result<(), Failure> {
    use std::io::IsTerminal as _;
    let said = std::env::var(HUMAN_ENV).is_ok_and(|v| v == "1");
    if said || std::io::stdin().is_terminal() {
        Ok(())
    } else {
        Err(Failure::Command(CommandError::human_only(command)))
    }
}

pub fn approve(session: &Session, _args: &ApproveArgs, ui: &mut Ui) -> Result<u8, Failure> {
    require_human("approve")?;
    let state = engine::approve(session)?;
    if ui.json {
        ui.json_object(json!({ "state": state.status() }))?;
    } else {
        ui.text(&format!(
            "approved: CODE_REVIEW -> {}; the agent's next `git orchestrate get-task` finalizes the PR\n",
            state.status()
        ))?;
    }
    Ok(0)
}

pub fn reject(session: &Session, args: &RejectArgs, ui: &mut Ui) -> Result<u8, Failure> {
    require_human("reject")?;
    let state = engine::reject(session, &args.comment)?;
    if ui.json {
        ui.json_object(json!({ "state": state.status() }))?;
    } else {
        ui.text(&format!(
            "rejected: CODE_REVIEW -> {}; your comment is the agent's next task, and another review follows it\n",
            state.status()
        ))?;
    }
    Ok(0)
}
