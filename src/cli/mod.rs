//! The command line: clap definitions, one file per subcommand, and the only code that
//! prints. Every command renders for people or, with `--json`, as a versioned JSON object.

mod checkpoint;
mod demo;
mod doctor;
mod error;
mod escape;
mod get_task;
mod hooks;
mod init;
mod log;
mod plan;
mod render;
mod status;
mod submit_work;
mod sync;

mod verify;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::{CommandError, Failure};
pub use render::Ui;

use crate::engine::Session;

/// Drive an AI coding agent (or a human) through a tool-gated, test-driven workflow, one pull
/// request at a time. All state lives in git under refs/orchestrator/*.
///
/// Agents loop on `git orchestrate get-task` (what to do now) and `git orchestrate
/// submit-work` (prove it). Exit codes: 0 success, 1 verification failed, 2 bad input,
/// 3 needs analysis, 4 not allowed in this state, 5 repository/store problem, 10 halted for a
/// human.
#[derive(Debug, Parser)]
#[command(name = "git-orchestrate", bin_name = "git orchestrate", version)]
pub struct Cli {
    /// The workflow to act on (several can live side by side).
    #[arg(
        long,
        global = true,
        env = crate::WORKFLOW_ENV,
        default_value = "main"
    )]
    pub workflow: String,

    /// Print a JSON object (with "schema": 1) instead of text; errors too, on stdout.
    #[arg(long, global = true)]
    pub json: bool,

    /// Print only what matters: the outcome, no hints or warnings.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(init::InitArgs),
    GetTask(get_task::GetTaskArgs),
    SubmitWork(submit_work::SubmitWorkArgs),
    Checkpoint(checkpoint::CheckpointArgs),
    RequestScopeReduction(escape::ScopeReductionArgs),
    Escalate(escape::EscalateArgs),
    Resume(escape::ResumeArgs),
    Approve(escape::ApproveArgs),
    Reject(escape::RejectArgs),
    Status(status::StatusArgs),
    Log(log::LogArgs),
    Plan(plan::PlanArgs),
    Verify(verify::VerifyArgs),
    Sync(sync::SyncArgs),
    Hooks(hooks::HooksArgs),
    #[command(hide = true)]
    Hook(hooks::HookArgs),
    Doctor(doctor::DoctorArgs),
    Demo(demo::DemoArgs),
}

/// The binary's entry point: parses, runs, maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let mut ui = Ui::new(cli.json, cli.quiet);
    match run(&cli, &mut ui) {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Output(e)) => {
            let _ = writeln!(std::io::stderr(), "error: could not write output: {e}");
            ExitCode::from(5)
        }
        Err(Failure::Command(err)) => {
            let code = err.code;
            match ui.error(&err) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    let _ = writeln!(std::io::stderr(), "error: {}", err.message);
                }
                _ => {}
            }
            ExitCode::from(code)
        }
    }
}

fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    if std::env::args().any(|a| a == "--json") {
        let err = CommandError::usage(
            e.render()
                .to_string()
                .trim_start_matches("error: ")
                .trim()
                .to_string(),
        );
        let mut ui = Ui::new(true, false);
        let _ = ui.error(&err);
    } else {
        let _ = e.print();
    }
    ExitCode::from(2)
}

/// The bytes of an input given as `FILE` or `-` (stdin); `what` names it in the error, and
/// `hint` says how to pass it.
fn read_input(path: &std::path::Path, what: &str, hint: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read as _;
    let from_stdin = path.as_os_str() == "-";
    let result = if from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(path)
    };
    result.map_err(|e| {
        let source = if from_stdin {
            "from stdin".to_string()
        } else {
            path.display().to_string()
        };
        Failure::Command(CommandError::invalid_input(
            format!("cannot read {what} {source}: {e}"),
            hint,
        ))
    })
}

/// Runs one parsed command line; returns the exit code of a completed command.
pub fn run(cli: &Cli, ui: &mut Ui) -> Result<u8, Failure> {
    let open = || -> Result<Session, Failure> {
        let dir = std::env::current_dir().map_err(|e| {
            Failure::Command(CommandError::store(format!(
                "cannot read the current directory: {e}"
            )))
        })?;
        Session::open(&dir, &cli.workflow).map_err(|e| Failure::Command(e.into()))
    };
    match &cli.command {
        Command::Init(args) => init::run(&open()?, args, ui),
        Command::GetTask(args) => get_task::run(&open()?, args, ui),
        Command::SubmitWork(args) => submit_work::run(&open()?, args, ui),
        Command::Checkpoint(args) => checkpoint::run(&open()?, args, ui),
        Command::RequestScopeReduction(args) => escape::scope_reduction(&open()?, args, ui),
        Command::Escalate(args) => escape::escalate(&open()?, args, ui),
        Command::Resume(args) => escape::resume(&open()?, args, ui),
        Command::Approve(args) => escape::approve(&open()?, args, ui),
        Command::Reject(args) => escape::reject(&open()?, args, ui),
        Command::Status(args) => status::run(&open()?, args, ui),
        Command::Log(args) => log::run(&open()?, args, ui),
        Command::Plan(args) => plan::run(&open()?, args, ui),
        Command::Verify(args) => verify::run(&open()?, args, ui),
        Command::Sync(args) => sync::run(&open()?, args, ui),
        Command::Hooks(args) => hooks::run(&open()?, args, ui),
        Command::Hook(args) => hooks::hook(&open()?, args, ui),
        Command::Doctor(args) => doctor::run(&open()?, args, ui),
        Command::Demo(args) => demo::run(args, ui),
    }
}
