//! `git orchestrate run`: the driver loop, for people (a line per turn, a summary) and, with
//! `--json`, one JSON event per line.

use std::io::Write as _;

use clap::{Args, ValueEnum};

use super::error::CommandError;
use super::{Exit, Failure, Ui};
use crate::agent::hook::Client;
use crate::config::RetryStrategy;
use crate::engine::Session;
use crate::engine::run::{self, Driver, RunEvent, RunOptions, RunSummary, TurnReport};

/// Let an agent work unattended: brief it, let it work, repeat until done or a human is needed
///
/// Each turn runs `get-task`, then hands the briefing to the agent and waits: a known agent
/// CLI headless (claude -p, codex exec, gemini -p, each with its "approve everything" flag:
/// the pre-tool-use guard of `init --agent` stays in force), or any command after `--`, which
/// gets the briefing on stdin and in GIT_ORCHESTRATE_BRIEFING_FILE. A turn makes progress
/// when the workflow made a transition during it. Stops with exit 0 when nothing is left to
/// do (`submit-work --no-pr-left`); with exit 10 when the workflow waits for a human, when the
/// agent made no progress on one step for `[retry] max_iterations` turns (the workflow then
/// halts as stuck, with a report), or after --max-turns. Each turn's briefing and output are
/// kept in refs/orchestrator/runs/<workflow>. Ctrl-C stops the agent with its children; the
/// workflow stays consistent.
///
/// On a ticket workflow each turn goes to the role whose turn it is (manager or developer),
/// with that role's briefing and GIT_ORCHESTRATE_ROLE set for the agent; when the turn passes
/// to the other role, that role starts in a fresh session of its own. Stops with exit 0 when
/// the ticket is done (TICKET_DONE), and with exit 10 when it is HALTED, when a role made no
/// progress for `[retry] max_iterations` turns (the ticket then halts as stuck), or after
/// --max-turns. --manager-agent and --developer-agent give a role an agent CLI of its own.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The agent CLI to run (it must be on PATH); or give a command after `--`.
    #[arg(long, value_enum)]
    pub agent: Option<AgentArg>,

    /// Stop after this many turns (exit 10).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,

    /// Which session a turn goes to: the same one (keeps its context), a fresh one every turn,
    /// or auto: fresh after --fresh-after turns without progress (default: [retry] strategy).
    #[arg(long, value_enum)]
    pub retry: Option<RetryArg>,

    /// With auto: turns without progress on one step before a fresh session (default:
    /// [retry] fresh_after_failures).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub fresh_after: Option<u32>,

    /// On a ticket workflow: the agent CLI for the manager's turns (default: the run's agent).
    #[arg(long, value_enum, value_name = "AGENT")]
    pub manager_agent: Option<AgentArg>,

    /// On a ticket workflow: the agent CLI for the developer's turns (default: the run's
    /// agent).
    #[arg(long, value_enum, value_name = "AGENT")]
    pub developer_agent: Option<AgentArg>,

    /// Any agent command (after `--`): the briefing on its stdin.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AgentArg {
    Claude,
    Codex,
    Gemini,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RetryArg {
    Same,
    Fresh,
    Auto,
}

pub fn run(session: &Session, args: &RunArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let options = options(args)?;
    let json = ui.json;
    let quiet = ui.quiet;
    let mut ticker: Option<Ticker> = None;
    let summary = run::run(session, &options, &mut |event| match event {
        // Said even with --quiet: the run changed how a client treats this project.
        RunEvent::Trusted(notice) if json => {
            ui.line(serde_json::to_string(notice).map_err(std::io::Error::other)?)
        }
        RunEvent::Trusted(notice) => ui.line(format!("run: {}", notice.message)),
        RunEvent::Start {
            turn,
            state,
            role,
            step,
            attempt,
            session,
        } if !json && !quiet => {
            let line = format!(
                "turn {turn} · {state}{}{} · attempt {attempt} · {} session · working…",
                role.map(|r| format!(" · {}", r.as_str()))
                    .unwrap_or_default(),
                step.map(|s| format!(" · {s}")).unwrap_or_default(),
                session.as_str()
            );
            ui.line(&line)?;
            ticker = Ticker::start();
            Ok(())
        }
        RunEvent::Start { .. } => Ok(()),
        RunEvent::Done(turn) if json => {
            ui.line(serde_json::to_string(turn).map_err(std::io::Error::other)?)
        }
        RunEvent::Done(turn) => {
            if let Some(t) = ticker.take() {
                t.stop();
            }
            ui.line(turn_line(turn))
        }
    })?;
    if let Some(t) = ticker.take() {
        t.stop();
    }
    if json {
        ui.line(serde_json::to_string(&summary).map_err(std::io::Error::other)?)?;
    } else {
        ui.line(summary_line(&summary))?;
    }
    Ok(match summary.outcome {
        "idle" | "done" => Exit::Success,
        _ => Exit::Halted,
    })
}

/// The driver's options from the command line: the agent (a known CLI or a command) and
/// how turns go to sessions.
fn options(args: &RunArgs) -> Result<RunOptions, Failure> {
    let manager = args.manager_agent.map(known);
    let developer = args.developer_agent.map(known);
    let driver = match (args.agent, args.command.is_empty()) {
        (Some(agent), true) => known(agent),
        (None, false) => Driver::Command(args.command.clone()),
        // Each role has its own: no other agent is needed (the engine refuses the flags on a
        // TDD workflow).
        (None, true) if developer.is_some() && manager.is_some() => args
            .manager_agent
            .map_or(Driver::Command(Vec::new()), known),
        (Some(_), false) => {
            return Err(Failure::from(CommandError::invalid_input(
                "give either --agent or a command after `--`, not both",
                "`git orchestrate run --agent claude`, or `git orchestrate run -- ./my-agent.sh`.",
            )));
        }
        (None, true) => {
            return Err(Failure::from(CommandError::invalid_input(
                "run needs an agent: --agent claude|codex|gemini, or a command after `--`",
                "`git orchestrate run --agent claude`, or `git orchestrate run -- ./my-agent.sh`.",
            )));
        }
    };
    Ok(RunOptions {
        driver,
        manager,
        developer,
        max_turns: args.max_turns,
        strategy: args.retry.map(|r| match r {
            RetryArg::Same => RetryStrategy::Same,
            RetryArg::Fresh => RetryStrategy::Fresh,
            RetryArg::Auto => RetryStrategy::Auto,
        }),
        fresh_after: args.fresh_after,
    })
}

fn known(agent: AgentArg) -> Driver {
    Driver::Known(match agent {
        AgentArg::Claude => Client::Claude,
        AgentArg::Codex => Client::Codex,
        AgentArg::Gemini => Client::Gemini,
    })
}

/// A finished turn, for people.
fn turn_line(turn: &TurnReport) -> String {
    format!(
        "turn {}{} · {:.1} s · {} · {} session{} · {}",
        turn.turn,
        turn.role
            .map(|r| format!(" · {}", r.as_str()))
            .unwrap_or_default(),
        turn.seconds,
        turn.exit,
        turn.session.as_str(),
        turn.session_id
            .as_deref()
            // The id is the agent's own output: cut by characters, not bytes.
            .map(|s| format!(" {}", s.chars().take(8).collect::<String>()))
            .unwrap_or_default(),
        if turn.progressed {
            format!("progress → {}", turn.state_after)
        } else {
            format!(
                "no progress ({} in a row on this step)",
                turn.without_progress
            )
        }
    )
}

/// How the run ended, for people.
fn summary_line(summary: &RunSummary) -> String {
    format!(
        "run: {} after {} turn{} ({} with progress, {:.1} s): {}; state {}; turns kept in {}",
        summary.outcome,
        summary.turns,
        if summary.turns == 1 { "" } else { "s" },
        summary.transitions,
        summary.seconds,
        summary.message,
        summary.state,
        summary.run_ref
    )
}

/// The live part of a turn's line for a person at a terminal: the time the agent has been
/// working, rewritten in place on stderr every second (nothing when stderr is not a
/// terminal, so logs and pipes get the plain lines only).
struct Ticker {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

impl Ticker {
    fn start() -> Option<Ticker> {
        use std::io::IsTerminal as _;
        use std::sync::atomic::Ordering;
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let started = std::time::Instant::now();
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let seconds = started.elapsed().as_secs();
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K  … {seconds} s");
                let _ = err.flush();
            }
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        });
        Some(Ticker { stop, handle })
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.handle.join();
    }
}
