//! The command line: clap definitions, one file per subcommand, and the only code that
//! prints. Every command renders for people or, with `--json`, as a versioned JSON object.

mod adequacy;
mod agent_hook;
mod approve;
mod archive;
mod args;
mod attest;
mod audit;
mod board;
mod board_serve;
mod checkpoint;
mod claim;
mod completions;
mod demo;
mod doctor;
mod error;
mod escalate;
mod fast;
mod get_task;
mod hooks;
mod init;
mod input;
mod live;
mod log;
mod man;
mod mcp;
mod mcp_pipe;
mod mcp_wire;
mod plan;
mod reject;
mod render;
mod repin;
mod request_scope_reduction;
mod resume;
mod run;
mod schema;
mod signing;
mod status;
mod submit_work;
mod sync;
mod ticket;
mod verify;
mod worktree;

use std::io::Write;

use clap::{CommandFactory, Parser};

pub use args::{Cli, Command};
pub use error::{CommandError, ErrorKind, Exit, Failure};
pub use input::MAX_INPUT_BYTES;
pub use render::Ui;

use crate::engine::Session;

/// The binary's entry point (src/main.rs): parses, runs, and gives the exit status.
pub fn main() -> u8 {
    // The confinement's runner (src/exec/runner.rs), started only by it and hidden from
    // `--help`: before any parsing.
    if let Some(exit) = confined_mode() {
        return exit;
    }
    // The lines an agent's loop repeats are read without clap's command tree (src/cli/fast.rs).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(line) = fast::version(&args) {
        // A closed pipe is no failure of the command (as for every command's output).
        let _ = std::io::stdout().write_all(line.as_bytes());
        return Exit::Success.code();
    }
    let cli = match fast::parse(&args, std::env::var_os(crate::WORKFLOW_ENV)) {
        Some(cli) => cli,
        None => match Cli::try_parse() {
            Ok(cli) => cli,
            Err(e) => return usage_error(e),
        },
    };
    // `mcp` owns stdout for the protocol, written from another thread: no lock held here, and
    // anything else it has to say goes to stderr.
    let mut ui = match cli.command {
        Command::Mcp(_) => Ui::buffered(cli.json, Box::new(std::io::stderr())),
        _ => Ui::new(cli.json, cli.quiet),
    };
    match run(&cli, &mut ui) {
        Ok(exit) => exit.code(),
        Err(Failure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Exit::Success.code()
        }
        Err(Failure::Output(e)) => {
            let _ = writeln!(std::io::stderr(), "error: could not write output: {e}");
            Exit::Store.code()
        }
        Err(Failure::Command(err)) => {
            let exit = err.exit();
            match ui.error(&err) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    let _ = writeln!(std::io::stderr(), "error: {}", err.message);
                }
                _ => {}
            }
            exit.code()
        }
    }
}

/// Opens `/dev/null` on each of the standard descriptors 0, 1 and 2 that the process was
/// started without, as Rust's own start-up does and src/main.rs skips: a file the program
/// opens later (a ref's lock, a report) would otherwise take that number, and what is
/// printed would be written into it.
pub fn keep_standard_descriptors() {
    use std::os::fd::{AsRawFd as _, IntoRawFd as _};
    // Each open takes the lowest free number: while that is 0, 1 or 2, it was closed and now
    // holds `/dev/null`, kept open for the process's life.
    for _ in 0..3 {
        let Ok(null) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
        else {
            return;
        };
        if null.as_raw_fd() > 2 {
            return;
        }
        let _ = null.into_raw_fd();
    }
}

/// The confinement's runner, when the first argument names it; it refuses, saying why, when
/// not started by the confinement.
fn confined_mode() -> Option<u8> {
    use crate::exec::runner;
    let mode = std::env::args_os().nth(1)?;
    if mode != runner::MODE {
        return None;
    }
    let why = match runner::serve() {
        Ok(()) => return Some(Exit::Success.code()),
        Err(why) => why,
    };
    let _ = writeln!(std::io::stderr(), "error: {why}");
    Some(Exit::Usage.code())
}

fn usage_error(e: clap::Error) -> u8 {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return Exit::Success.code();
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
    Exit::Usage.code()
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

/// Runs one parsed command line; returns the exit code of a completed command.
/// Each command's code in a function of its own ([`apart`]).
pub fn run(cli: &Cli, ui: &mut Ui) -> Result<Exit, Failure> {
    let open = || -> Result<Session, Failure> {
        Session::open_selected(&input::current_dir()?, cli.workflow.as_deref())
            .map_err(Failure::from)
    };
    match &cli.command {
        Command::Init(args) => apart(|| init::run(&open()?, args, Cli::command(), ui)),
        Command::GetTask(args) => apart(|| get_task::run(&open()?, args, ui)),
        Command::SubmitWork(args) => apart(|| submit_work::run(&open()?, args, ui)),
        Command::Checkpoint(args) => apart(|| checkpoint::run(&open()?, args, ui)),
        Command::RequestScopeReduction(args) => {
            apart(|| request_scope_reduction::run(&open()?, args, ui))
        }
        Command::Escalate(args) => apart(|| escalate::run(&open()?, args, ui)),
        Command::Resume(args) => apart(|| resume::run(&open()?, args, ui)),
        Command::Approve(args) => apart(|| approve::run(&open()?, args, ui)),
        Command::Reject(args) => apart(|| reject::run(&open()?, args, ui)),
        Command::Repin(args) => apart(|| repin::run(&open()?, args, ui)),
        Command::Status(args) => apart(|| status::run(&open()?, args, ui)),
        Command::Log(args) => apart(|| log::run(&open()?, args, ui)),
        Command::Plan(args) => apart(|| plan::run(&open()?, args, ui)),
        Command::Verify(args) => apart(|| verify::run(&open()?, args, ui)),
        Command::Audit(args) => apart(|| audit::run(&open()?, args, ui)),
        Command::Attest(args) => apart(|| attest::run(args, ui)),
        Command::Sync(args) => apart(|| sync::run(&open()?, args, ui)),
        Command::Claim(args) => apart(|| claim::run(&open()?, args, ui)),
        Command::Board(args) => apart(|| board::run(&open, args, ui)),
        Command::Archive(args) => apart(|| archive::run(&open()?, args, ui)),
        Command::Hooks(args) => apart(|| hooks::run(&open()?, args, ui)),
        Command::Hook(args) => apart(|| hooks::hook(&open()?, args, ui)),
        Command::Doctor(args) => apart(|| doctor::run(&open()?, args, ui)),
        Command::Demo(args) => apart(|| demo::run(args, Cli::command(), ui)),
        Command::Schema(args) => apart(|| schema::run(args, ui)),
        Command::AgentHook(args) => apart(|| agent_hook::run(cli.workflow.as_deref(), args)),
        Command::Mcp(args) => apart(|| mcp::run(cli.workflow.as_deref(), args)),
        Command::Run(args) => apart(|| run::run(&open()?, args, ui)),
        Command::Worktree(args) => apart(|| worktree::run(&open()?, args, ui)),
        Command::Ticket(args) => apart(|| ticket::run(&open()?, args, ui)),
        Command::Assign(args) => apart(|| ticket::assign(&open()?, args, ui)),
        Command::UpdateSubtask(args) => apart(|| ticket::update(&open()?, args, ui)),
        Command::CompleteTicket(args) => apart(|| ticket::complete(&open()?, args, ui)),
        Command::SubtaskComplete(args) => apart(|| ticket::report(&open()?, args, ui)),
        Command::Completions(args) => apart(|| completions::run(args, Cli::command(), ui)),
        Command::Man(args) => apart(|| man::run(args, Cli::command(), ui)),
    }
}

/// `command` run in a frame of its own. Inlined into [`run`]'s match (fat LTO inlines a
/// function called once), every command's locals made one frame of about 32 KB, which each
/// call probed page by page whichever command ran: a `get-task` touched 19 stack pages, 13
/// now, and took 144 page faults in all, 141 now (`perf record -e page-faults -d`).
#[inline(never)]
fn apart<T>(command: impl FnOnce() -> T) -> T {
    command()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The subcommands are built only when they run; the line `-h` shows for each comes from
    /// its variant and must be the first line of its own help.
    #[test]
    fn each_summary_is_the_first_line_of_its_commands_help() {
        let eager = Cli::command();
        let mut built = Cli::command();
        built.build();
        for command in eager.get_subcommands().filter(|c| !c.is_hide_set()) {
            let name = command.get_name();
            let full = built.find_subcommand(name).expect("built");
            assert_eq!(
                command.get_about().map(ToString::to_string),
                full.get_about().map(ToString::to_string),
                "`{name}`"
            );
            assert!(full.get_arguments().count() > 0, "`{name}` was built");
        }
    }

    /// `-h` lists each command on one short line; the paragraph is for `<command> --help`.
    #[test]
    fn short_help_has_one_short_line_per_command() {
        let help = Cli::command().render_help().to_string();
        let commands = help
            .split("Commands:\n")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .expect("a Commands: section");
        let visible: Vec<String> = Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .chain(["help".to_string()])
            .collect();
        let listed: Vec<String> = commands
            .lines()
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
            .collect();
        assert_eq!(listed, visible, "one line per command:\n{commands}");
        for line in commands.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            assert!(
                line.len() > name.len() + 4 && !line[2 + name.len()..].trim().is_empty(),
                "`{name}` has no summary in -h: {line}"
            );
            assert!(line.len() <= 120, "too long for a one-line summary: {line}");
            assert!(
                !line.trim_end().ends_with('.'),
                "a summary, not a sentence: {line}"
            );
        }
        let long = Cli::command()
            .find_subcommand_mut("sync")
            .expect("sync")
            .render_long_help()
            .to_string();
        assert!(
            long.contains("until you choose a side with --take"),
            "{long}"
        );
    }

    /// The page in docs/ is the one `git orchestrate man` prints: regenerate it with
    /// `cargo run -q -- man > docs/git-orchestrate.1` when a command's help changes.
    #[test]
    fn the_man_page_in_docs_is_the_generated_one() {
        let committed = include_str!("../../docs/git-orchestrate.1");
        let generated = man::page(Cli::command());
        assert!(
            committed == generated,
            "docs/git-orchestrate.1 is stale: run `cargo run -q -- man > docs/git-orchestrate.1`"
        );
        // Every command a person can run has its entry, with each of its options.
        let mut cli = Cli::command();
        cli.build();
        for command in cli
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        {
            let name = command.get_name().replace('-', "\\-");
            assert!(
                generated.contains(&format!(".SS \"git orchestrate {name}\"\n")),
                "{name}"
            );
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    assert!(
                        generated.contains(&format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-"))),
                        "{name} --{long}"
                    );
                }
            }
        }
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "COMMANDS",
            "GLOBAL OPTIONS",
            "EXIT STATUS",
            "FILES",
            "ENVIRONMENT",
            "EXAMPLES",
            "SEE ALSO",
        ] {
            assert!(
                generated.contains(&format!("\n.SH {section}\n")),
                "{section}"
            );
        }
    }
}
