//! Ticket mode on the command line (docs/tickets.md): `ticket new|show`, and the four tools
//! (`assign`, `update-subtask`, `complete-ticket`, `subtask-complete`), each taking its
//! parameters (docs/tickets.md) as flags or as JSON (`--json-input FILE|-`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::input::read_input;
use super::{Exit, Failure, Ui};
use crate::engine::Session;
use crate::engine::ticket::{self, Outcome};
use crate::workflow::ticket::{
    self as model, AssignmentFlags, BlockerDetails, BuildStatus, FileChanged, Mode, ReportFlags,
    ReportStatus, Role, TestResults, Tool, UpdateFlags, UpdateStatus,
};

/// Ticket mode: start a ticket (a manager agent and a developer agent), or show it
///
/// docs/tickets.md describes both roles and how a report is checked.
#[derive(Debug, Args)]
pub struct TicketArgs {
    #[command(subcommand)]
    pub command: TicketCommand,
}

#[derive(Debug, Subcommand)]
pub enum TicketCommand {
    /// Start a ticket workflow: a branch from main's tip, the manager's turn
    New(NewArgs),
    /// Show the ticket: every subtask, the last report beside what was observed
    Show,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The ticket's title (it names the branch: ticket/<slug>)
    #[arg(long)]
    pub title: String,
    /// The ticket's description, from FILE or `-` (stdin)
    #[arg(long, value_name = "FILE|-")]
    pub body: Option<PathBuf>,
    /// A subtask planned ahead (status todo); repeat for several
    #[arg(long = "subtask", value_name = "TITLE")]
    pub subtasks: Vec<String>,
}

pub fn run(session: &Session, args: &TicketArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    match &args.command {
        TicketCommand::New(new) => {
            let body = match &new.body {
                Some(path) => {
                    let bytes =
                        read_input(path, "the ticket body", "Pass --body FILE or --body -.")?;
                    String::from_utf8(bytes).map_err(|_| {
                        Failure::from(super::CommandError::invalid_input(
                            "the ticket body is not UTF-8 text".to_string(),
                            "Pass a UTF-8 text file.",
                        ))
                    })?
                }
                None => String::new(),
            };
            let outcome = ticket::create(session, &new.title, &body, &new.subtasks)?;
            finish(ui, &outcome)
        }
        TicketCommand::Show => {
            let (snap, text) = ticket::briefing(session, Some(Role::Manager))?;
            if ui.json_report(&json!({
                "workflow": session.store.workflow(),
                "tip": snap.tip.to_string(),
                "state": snap.ticket.state,
                "ticket": snap.ticket,
            }))? {
                return Ok(Exit::Success);
            }
            ui.text(&text)?;
            Ok(Exit::Success)
        }
    }
}

fn finish(ui: &mut Ui, outcome: &Outcome) -> Result<Exit, Failure> {
    if !ui.json_report(outcome)? {
        ui.line(&outcome.message)?;
    }
    Ok(if outcome.halted {
        Exit::Halted
    } else {
        Exit::Success
    })
}

/// What every tool takes besides its parameters.
#[derive(Debug, Args)]
pub struct ToolCommon {
    /// The whole input as a JSON object (the parameter names of docs/tickets.md), from FILE or `-`;
    /// flags given as well override its fields
    #[arg(long, value_name = "FILE|-")]
    pub json_input: Option<PathBuf>,
    /// The role this call is made in (default: GIT_ORCHESTRATE_ROLE, then `[agent] role`)
    #[arg(long, value_enum)]
    pub role: Option<Role>,
}

/// Manager: assign the current subtask to the developer (assign_to_developer)
#[derive(Debug, Args)]
pub struct AssignArgs {
    /// The developer mode to activate
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// What the developer should accomplish
    #[arg(long)]
    pub goal: Option<String>,
    /// A file to read before changing anything (repeat)
    #[arg(long = "file-to-inspect", value_name = "PATH")]
    pub files_to_inspect: Vec<String>,
    /// A file (glob) the developer may create or modify (repeat)
    #[arg(long = "file-to-modify", value_name = "GLOB")]
    pub files_to_modify: Vec<String>,
    /// A criterion the subtask must meet (repeat)
    #[arg(long = "acceptance-criteria", value_name = "TEXT")]
    pub acceptance_criteria: Vec<String>,
    /// Context from earlier attempts (new context is required to reassign a blocked subtask)
    #[arg(long)]
    pub prior_context: Option<String>,
    /// A rule the developer must follow (repeat)
    #[arg(long = "constraint", value_name = "TEXT")]
    pub constraints: Vec<String>,
    #[command(flatten)]
    pub common: ToolCommon,
}

/// Manager: accept, reject or block the subtask the developer reported
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The subtask's new status
    #[arg(long, value_enum)]
    pub status: Option<UpdateStatus>,
    /// Why: feedback for the developer, or the blocker
    #[arg(long)]
    pub notes: Option<String>,
    /// Accept a report that what was observed contradicts, for this reason (recorded)
    #[arg(long = "override", value_name = "REASON")]
    pub override_reason: Option<String>,
    #[command(flatten)]
    pub common: ToolCommon,
}

/// Manager: squash, check and merge the ticket once every subtask is complete
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// A brief summary of every change the ticket made
    #[arg(long)]
    pub summary: Option<String>,
    #[command(flatten)]
    pub common: ToolCommon,
}

/// Developer: report the subtask's commit; it is checked by running it
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Whether the work is done or blocked
    #[arg(long, value_enum)]
    pub status: Option<ReportStatus>,
    /// A file created or modified, as PATH or PATH:SUMMARY (repeat)
    #[arg(long = "file", value_name = "PATH[:SUMMARY]", value_parser = file_changed)]
    pub files: Vec<FileChanged>,
    /// Whether the solution builds
    #[arg(long, value_enum)]
    pub build_status: Option<BuildStatus>,
    /// Test counts as TOTAL,PASSED,FAILED,SKIPPED
    #[arg(long, value_name = "T,P,F,S", value_parser = test_counts)]
    pub tests: Option<TestResults>,
    /// What was done
    #[arg(long)]
    pub message: Option<String>,
    /// What blocks the work (with --status blocked)
    #[arg(long)]
    pub blocker: Option<String>,
    /// What would unblock it
    #[arg(long)]
    pub needed: Option<String>,
    /// The commit the report delivers: the ticket branch's tip (default HEAD)
    #[arg(long)]
    pub commit: Option<String>,
    #[command(flatten)]
    pub common: ToolCommon,
}

/// `--file PATH[:SUMMARY]`.
fn file_changed(text: &str) -> Result<FileChanged, String> {
    let (path, summary) = match text.split_once(':') {
        Some((path, summary)) => (path, Some(summary.to_string())),
        None => (text, None),
    };
    Ok(FileChanged {
        path: path.to_string(),
        summary,
    })
}

/// `--tests TOTAL,PASSED,FAILED,SKIPPED`.
fn test_counts(text: &str) -> Result<TestResults, String> {
    let counts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [total, passed, failed, skipped] = counts[..] else {
        return Err(format!(
            "{text:?} is not four counts: give TOTAL,PASSED,FAILED,SKIPPED, e.g. 12,11,1,0"
        ));
    };
    let count = |n: &str| {
        n.parse::<u64>()
            .map_err(|_| format!("{n:?} is not a whole number ≥ 0"))
    };
    Ok(TestResults {
        total: Some(count(total)?),
        passed: Some(count(passed)?),
        failed: Some(count(failed)?),
        skipped: Some(count(skipped)?),
    })
}

/// The JSON input `--json-input` gave, if any.
fn json_input(common: &ToolCommon) -> Result<Option<Value>, Failure> {
    let Some(path) = &common.json_input else {
        return Ok(None);
    };
    let bytes = read_input(
        path,
        "the JSON input",
        "Pass --json-input FILE or --json-input - with a JSON object.",
    )?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        Failure::from(super::CommandError::invalid_input(
            format!("the JSON input is not valid JSON: {e}"),
            "Pass a JSON object with the tool's parameters (`git orchestrate schema`).",
        ))
    })
}

/// A repeated flag: given when it is given at least once.
fn list(items: &[String]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| items.to_vec())
}

fn role_of(session: &Session, common: &ToolCommon) -> Result<Option<Role>, Failure> {
    Ok(ticket::role(session, common.role)?)
}

/// A tool's input refused: every problem, exit 2.
fn refused(tool: Tool) -> impl Fn(Vec<crate::workflow::plan::Problem>) -> Failure {
    move |problems| Failure::from(ticket::invalid(tool, problems))
}

pub fn assign(session: &Session, args: &AssignArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let flags = AssignmentFlags {
        mode: args.mode,
        goal: args.goal.clone(),
        files_to_inspect: list(&args.files_to_inspect),
        files_to_modify: list(&args.files_to_modify),
        acceptance_criteria: list(&args.acceptance_criteria),
        prior_context: args.prior_context.clone(),
        constraints: list(&args.constraints),
    };
    let assignment = model::read_assignment(json_input(&args.common)?.as_ref(), &flags)
        .map_err(refused(Tool::Assign))?;
    let role = role_of(session, &args.common)?;
    finish(ui, &ticket::assign(session, role, assignment)?)
}

pub fn update(session: &Session, args: &UpdateArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let flags = UpdateFlags {
        status: args.status,
        notes: args.notes.clone(),
        override_reason: args.override_reason.clone(),
    };
    let update = model::read_update(json_input(&args.common)?.as_ref(), &flags)
        .map_err(refused(Tool::UpdateSubtask))?;
    let role = role_of(session, &args.common)?;
    finish(ui, &ticket::update(session, role, update)?)
}

pub fn complete(session: &Session, args: &CompleteArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let completion =
        model::read_completion(json_input(&args.common)?.as_ref(), args.summary.clone())
            .map_err(refused(Tool::CompleteTicket))?;
    let role = role_of(session, &args.common)?;
    finish(ui, &ticket::complete(session, role, &completion.summary)?)
}

pub fn report(session: &Session, args: &ReportArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let json = json_input(&args.common)?;
    // Flags alone: no --file is a report of no file changed (the JSON input must say so).
    let files_changed = match (args.files.is_empty(), &json) {
        (false, _) | (true, None) => Some(args.files.clone()),
        (true, Some(_)) => None,
    };
    let blocker_details =
        (args.blocker.is_some() || args.needed.is_some()).then(|| BlockerDetails {
            issue: args.blocker.clone(),
            tried: Vec::new(),
            needed: args.needed.clone(),
        });
    let flags = ReportFlags {
        status: args.status,
        files_changed,
        build_status: args.build_status,
        test_results: args.tests,
        message: args.message.clone(),
        blocker_details,
        commit: args.commit.clone(),
    };
    let report =
        model::read_report(json.as_ref(), &flags).map_err(refused(Tool::SubtaskComplete))?;
    let role = role_of(session, &args.common)?;
    finish(ui, &ticket::report(session, role, report)?)
}

/// `get-task` on a ticket workflow: the role's briefing. Asked out of turn, it exits 4
/// with the next legal action; a halted or finished ticket exits 10 / 0.
pub fn get_task(session: &Session, flag: Option<Role>, ui: &mut Ui) -> Result<Exit, Failure> {
    let role = ticket::role(session, flag)?;
    let task = task(session, role)?;
    ui.report_or_text(&task.report, &task.briefing)?;
    Ok(task.exit)
}

/// `get-task` on a ticket workflow, as the command and the MCP server give it.
pub struct Task {
    /// The `--json` object.
    pub report: Value,
    pub briefing: String,
    /// 10 when halted, 4 when asked out of turn, else 0.
    pub exit: Exit,
}

/// The briefing of `role` (`None`: whoever's turn it is) and what `get-task --json` says
/// with it.
pub fn task(session: &Session, role: Option<Role>) -> Result<Task, crate::engine::EngineError> {
    let (snap, text) = ticket::briefing(session, role)?;
    let turn = snap.ticket.state.role();
    let tools: Vec<&str> = Tool::ALL
        .into_iter()
        .filter(|t| role.or(turn).is_none_or(|r| t.role() == r))
        .map(Tool::command)
        .collect();
    let report = json!({
        "kind": "ticket",
        "workflow": session.store.workflow(),
        "state": snap.ticket.state,
        "role": role.or(turn),
        "turn": turn,
        "current": snap.ticket.current,
        "tools": tools,
        "briefing": text,
        "ticket": snap.ticket,
    });
    let exit = match (snap.ticket.state.role(), role) {
        (None, _) if snap.ticket.state == crate::workflow::ticket::TicketState::Halted => {
            Exit::Halted
        }
        (Some(turn), Some(asked)) if turn != asked => Exit::NotAllowed,
        _ => Exit::Success,
    };
    Ok(Task {
        report,
        briefing: text,
        exit,
    })
}
