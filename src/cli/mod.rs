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
    let message = usage_text(&e);
    // `args_os`: an argument that is not UTF-8 is itself a usage error, not a reason to panic.
    if std::env::args_os().any(|a| a == "--json") {
        let err = CommandError::usage(message.trim_start_matches("error: ").trim().to_string());
        let mut ui = Ui::new(true, false);
        let _ = ui.error(&err);
    } else {
        let _ = write!(std::io::stderr(), "{message}");
    }
    ExitCode::from(2)
}

/// clap's usage error as plain text. Run as `git orchestrate`, `--help` makes git look for a
/// man page that may not be installed, so the error points at `-h`; an argument that is not
/// valid UTF-8 is named as such.
fn usage_text(e: &clap::Error) -> String {
    let text = e.render().to_string().replace("try '--help'", "try '-h'");
    if e.kind() == clap::error::ErrorKind::InvalidUtf8 {
        return text.replacen(
            "error: ",
            "error: every argument must be valid UTF-8 text: ",
            1,
        );
    }
    text
}

/// The most input a command reads from a file or stdin: far above any real plan, analysis or
/// report, and low enough that `--plan /dev/zero` fails at once instead of filling memory.
pub const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// The bytes of an input given as `FILE` or `-` (stdin); `what` names it in the error, and
/// `hint` says how to pass it.
fn read_input(path: &std::path::Path, what: &str, hint: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read as _;
    let from_stdin = path.as_os_str() == "-";
    let source = || {
        if from_stdin {
            "from stdin".to_string()
        } else {
            path.display().to_string()
        }
    };
    let mut bytes = Vec::new();
    let result = if from_stdin {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
    };
    if let Err(e) = result {
        return Err(Failure::Command(CommandError::invalid_input(
            format!("cannot read {what} {}: {e}", source()),
            hint,
        )));
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::Command(CommandError::invalid_input(
            format!(
                "{what} {} is larger than the limit of {} MiB",
                source(),
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
            hint,
        )));
    }
    Ok(bytes)
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
