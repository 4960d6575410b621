//! `git orchestrate run`: the driver loop (README, "Unattended"). Each turn asks `get-task`,
//! hands the briefing to the agent and waits; the workflow's own transitions are the measure
//! of progress. Turns are recorded under `refs/orchestrator/runs/<workflow>`; an agent that
//! makes no progress on one step for `[retry] max_iterations` turns halts the workflow as
//! stuck, with a report.

use std::ffi::OsString;
use std::path::Path;

use serde::Serialize;

use super::{EngineError, Session, io_error};
use crate::agent::hook::Client;
use crate::agent::run::{self as decide, Next, Retry, SessionMode, TurnStory};
use crate::config::RetryStrategy;
use crate::exec::agent::{AgentTurn, run_agent};
use crate::workflow::Event;

/// Who works the turns.
#[derive(Clone, Debug)]
pub enum Driver {
    /// A known agent CLI, headless, continuing its own sessions.
    Known(Client),
    /// Any command, with the briefing on stdin.
    Command(Vec<String>),
}

pub struct RunOptions {
    pub driver: Driver,
    pub max_turns: u32,
    /// Overrides of `[retry]`.
    pub strategy: Option<RetryStrategy>,
    pub fresh_after: Option<u32>,
}

/// One finished turn (`run --json` prints it as one line).
#[derive(Clone, Debug, Serialize)]
pub struct TurnReport {
    pub event: &'static str,
    pub turn: u32,
    pub state: String,
    pub step: Option<String>,
    pub attempt: u32,
    pub session: SessionMode,
    pub session_id: Option<String>,
    pub exit: String,
    pub seconds: f64,
    /// The workflow made a transition during the turn.
    pub progressed: bool,
    pub state_after: String,
    /// Turns in a row without progress on this step.
    pub without_progress: u32,
    /// What the agent said at the end, when its output says (first 500 characters).
    pub said: Option<String>,
    /// The commit of the run ref that keeps the turn's briefing and output.
    pub record: String,
}

/// How the run ended.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub event: &'static str,
    /// `idle` (nothing left: exit 0), `halted` (a human is needed: 10), `stuck` (10),
    /// `max_turns` (10).
    pub outcome: &'static str,
    pub turns: u32,
    /// The workflow's transitions during the run (a turn may make several).
    pub transitions: u32,
    pub seconds: f64,
    pub state: String,
    pub run_ref: String,
    pub message: String,
}

/// What `run` tells its caller as it goes.
pub enum RunEvent<'a> {
    /// A turn starts: the agent has the briefing.
    Start {
        turn: u32,
        state: &'a str,
        step: Option<&'a str>,
        attempt: u32,
        session: SessionMode,
    },
    Done(&'a TurnReport),
}

pub fn run(
    session: &Session,
    options: &RunOptions,
    on_event: &mut dyn FnMut(RunEvent) -> std::io::Result<()>,
) -> Result<RunSummary, EngineError> {
    let started = std::time::Instant::now();
    // One run drives a workflow at a time: two would brief two agents on one step.
    let _lock = match session.store.take_run_lock()? {
        Ok(lock) => lock,
        Err(holder) => {
            let status = session
                .store
                .read()?
                .map_or(crate::workflow::Status::Initializing, |s| s.state.status());
            return Err(super::wrong_state(
                status,
                format!("run refused: {holder}; nothing was started"),
                "Let that run finish, or stop it (Ctrl-C, or `kill PID`); a run that was killed leaves \
                 a lock the next run takes over.",
            ));
        }
    };
    let config = session.load_config(None)?.config;
    crate::exec::agent::forward_stop_signals()
        .map_err(|e| EngineError::Internal(format!("cannot watch for signals: {e}")))?;
    crate::exec::agent::supervise().map_err(|e| {
        EngineError::Internal(format!(
            "cannot become the reaper of the agent's processes: {e}"
        ))
    })?;
    let mut retry = Retry::new(
        options.strategy.unwrap_or(config.retry.strategy),
        options
            .fresh_after
            .unwrap_or(config.retry.fresh_after_failures),
        config.retry.max_iterations,
    );
    let mut session_id: Option<String> = None;
    let mut stories: Vec<TurnStory> = Vec::new();
    let briefing_file = session.store.run_briefing_file();
    // The workflow's transitions during the run are those between its tip now and at the end
    // (those of `get-task` at the start of a turn too).
    let run_start = session.store.read()?.map(|s| s.tip);
    let summary = |outcome: &'static str,
                   turns: u32,
                   state: String,
                   message: String|
     -> Result<RunSummary, EngineError> {
        let transitions = match session.store.read()?.map(|s| s.tip) {
            Some(end) => session.store.transitions_between(run_start, end, 100_000)?,
            None => 0,
        };
        Ok(RunSummary {
            event: "end",
            outcome,
            turns,
            transitions,
            seconds: started.elapsed().as_secs_f64(),
            state,
            run_ref: session.store.run_ref_name(),
            message,
        })
    };
    // A turn the last run started and never finished (it was killed) is recorded first, as
    // interrupted; turns are numbered on from the runs record, across runs.
    let unfinished = session.store.run_turn_file();
    if let Some(bytes) = crate::input::read_file(&unfinished, 64 * 1024)
        .ok()
        .flatten()
    {
        // Only a record this program wrote is taken: a turn number, a state's name.
        let record = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
        let n = record
            .as_ref()
            .and_then(|r| r["turn"].as_u64())
            .and_then(|n| u32::try_from(n).ok());
        let what = record
            .as_ref()
            .and_then(|r| r["state"].as_str())
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
            .unwrap_or("?")
            .to_string();
        // Recorded already when the kill came after the turn's record was written.
        let last = session
            .store
            .last_run_record()?
            .and_then(|(_, subject)| turn_number(&subject));
        if let (Some(n), Some(mut record)) = (n, record)
            && last.is_none_or(|last| last < n)
        {
            record["interrupted"] = serde_json::json!(true);
            session.store.append_run_record(
                &[("turn.json", record.to_string().as_bytes())],
                &format!("turn {n}: {what} -> ? (interrupted: its run ended before the turn did)"),
            )?;
        }
        let _ = std::fs::remove_file(&unfinished);
    }
    let first = session
        .store
        .last_run_record()?
        .and_then(|(_, subject)| turn_number(&subject))
        .map_or(1, |n| n + 1);
    for turn in 1..=options.max_turns {
        let number = first + turn - 1;
        session.begin_call();
        let task = super::get_task(session)?;
        let state = task.state.to_string();
        if task.idle {
            return summary("idle", turn - 1, state, "nothing is left to do".into());
        }
        if task.halted {
            return summary(
                "halted",
                turn - 1,
                state,
                "the workflow waits for a human (`git orchestrate status` says why)".into(),
            );
        }
        let step = task
            .step
            .as_ref()
            .map(|s| format!("step {} ({})", s.id, s.kind));
        let where_ = format!(
            "{state} {} {}",
            step.as_deref().unwrap_or("-"),
            task.pending.unwrap_or("-")
        );
        let before = session.store.read()?.map(|s| s.tip);
        let mode = retry.mode(session_id.is_some());
        let new_id = new_session_id();
        on_event(RunEvent::Start {
            turn: number,
            state: &state,
            step: step.as_deref(),
            attempt: task.attempt,
            session: mode,
        })
        .map_err(io_error("print the turn"))?;
        // Kept until the turn's record is written: a turn cut short by a kill is recorded by
        // the next run.
        let started = serde_json::json!({
            "turn": number, "state": state, "step": step, "session": mode,
        });
        let _unfinished = Unfinished::write(&unfinished, &started.to_string())?;
        // The turn's token: the session-start hook of `init --agent` writes it back when the
        // client loaded our settings (`agent_hook::record_run_start`).
        let token = new_session_id();
        let (outcome, used_session) = run_turn(
            session,
            &options.driver,
            mode,
            session_id.as_deref(),
            &new_id,
            number,
            &token,
            &task.briefing,
            &briefing_file,
            config.retry.turn_timeout,
        )?;
        let hooks_fired = match &options.driver {
            Driver::Known(client) => Some(super::agent_hook::take_run_start(
                session,
                &token,
                decide::program(*client),
            )),
            Driver::Command(_) => None,
        };
        let (said, reported_session) = match &options.driver {
            Driver::Known(client) => {
                decide::read_output(*client, &String::from_utf8_lossy(&outcome.stdout))
            }
            Driver::Command(_) => (None, None),
        };
        session_id = reported_session.or(used_session);
        let after = session.store.read()?;
        let progressed = after.as_ref().map(|s| s.tip) != before;
        if progressed {
            stories.clear();
        }
        let state_after = after
            .as_ref()
            .map(|s| s.state.status().to_string())
            .unwrap_or_else(|| state.clone());
        let exit = outcome.exit.to_string();
        let said_text = said.clone().unwrap_or_else(|| {
            let tail = crate::exec::tail_lines(&outcome.stdout, 40);
            tail.trim().to_string()
        });
        let next = retry.record(&where_, progressed);
        let turn_json = serde_json::json!({
            "turn": number, "state": state, "step": step, "session": mode, "session_id": session_id,
            "exit": exit, "seconds": outcome.elapsed.as_secs_f64(), "progressed": progressed,
            "state_after": state_after,
        });
        let record = session.store.append_run_record(
            &[
                ("turn.json", turn_json.to_string().as_bytes()),
                ("briefing.txt", task.briefing.as_bytes()),
                ("stdout.log", &outcome.stdout),
                ("stderr.log", &outcome.stderr),
            ],
            &format!(
                "turn {number}: {state}{} -> {state_after} ({})",
                step.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
                if progressed {
                    "progress"
                } else {
                    "no progress"
                }
            ),
        )?;
        drop(_unfinished);
        let report = TurnReport {
            event: "turn",
            turn: number,
            state: state.clone(),
            step: step.clone(),
            attempt: task.attempt,
            session: mode,
            session_id: session_id.clone(),
            exit: exit.clone(),
            seconds: outcome.elapsed.as_secs_f64(),
            progressed,
            state_after: state_after.clone(),
            without_progress: retry.without_progress,
            said: said.map(|s| s.chars().take(500).collect()),
            record: record.to_string(),
        };
        on_event(RunEvent::Done(&report)).map_err(io_error("print the turn"))?;
        let failed = !matches!(outcome.exit, crate::workflow::state::ExitRecord::Code(0));
        let printed = !outcome.stdout.iter().all(u8::is_ascii_whitespace);
        // A turn cut at its time limit ran: it did not fail to start.
        let timed_out = matches!(
            outcome.exit,
            crate::workflow::state::ExitRecord::TimedOut { .. }
        );
        if let Some(fault) =
            decide::turn_fault(hooks_fired, failed && !timed_out, progressed, printed)
        {
            return Err(turn_fault_error(
                session,
                &options.driver,
                fault,
                number,
                &exit,
                &outcome,
            ));
        }
        if !progressed {
            stories.push(TurnStory {
                turn: number,
                mode,
                session: session_id.clone(),
                seconds: outcome.elapsed.as_secs_f64(),
                exit,
                briefing: task.briefing.clone(),
                said: said_text,
            });
        }
        if next == Next::Stuck {
            let last_failure = after
                .as_ref()
                .and_then(|s| s.state.last_error().map(str::to_string));
            let text = decide::stuck_report(
                &state_after,
                step.as_deref().unwrap_or("no step"),
                retry.max_iterations,
                &stories,
                last_failure.as_deref(),
            );
            halt_stuck(session, &text, retry.without_progress)?;
            return summary(
                "stuck",
                turn,
                "HALTED".into(),
                format!(
                    "the agent made no progress in {} turns; the workflow is HALTED (stuck) with the run's report: \
                     `git orchestrate status`, then `git orchestrate resume --guidance \"…\"`",
                    retry.without_progress
                ),
            );
        }
    }
    let state = session
        .store
        .read()?
        .map(|s| s.state.status().to_string())
        .unwrap_or_else(|| "INITIALIZING".into());
    summary(
        "max_turns",
        options.max_turns,
        state,
        format!(
            "stopped after --max-turns {} turns; the workflow is not done",
            options.max_turns
        ),
    )
}

/// The record of a turn under way, on disk until the turn's record is written or the turn
/// ends in an error (dropped); a run killed (SIGKILL, or a signal it passes on to the agent)
/// leaves it for the next run to record.
struct Unfinished(std::path::PathBuf);

impl Unfinished {
    fn write(path: &Path, text: &str) -> Result<Unfinished, EngineError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
        }
        // Whole or not at all: a kill mid-write leaves the old file or none.
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).map_err(io_error(format!("write {}", tmp.display())))?;
        std::fs::rename(&tmp, path).map_err(io_error(format!("write {}", path.display())))?;
        Ok(Unfinished(path.to_path_buf()))
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The number of the turn a run record names (`turn 7: …`, `turn 7 started: …`).
fn turn_number(subject: &str) -> Option<u32> {
    subject
        .strip_prefix("turn ")?
        .split([':', ' '])
        .next()?
        .parse()
        .ok()
}

/// Starts the agent on one turn and waits for it.
#[allow(clippy::too_many_arguments)]
fn run_turn(
    session: &Session,
    driver: &Driver,
    mode: SessionMode,
    session_id: Option<&str>,
    new_id: &str,
    turn: u32,
    token: &str,
    briefing: &str,
    briefing_file: &Path,
    turn_timeout: std::time::Duration,
) -> Result<(AgentTurn, Option<String>), EngineError> {
    if let Some(dir) = briefing_file.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    }
    std::fs::write(briefing_file, briefing)
        .map_err(io_error(format!("write {}", briefing_file.display())))?;
    let (program, args, stdin, used) = match driver {
        Driver::Known(client) => {
            let prompt = decide::prompt(briefing, briefing_file);
            let (args, used) = decide::agent_arguments(*client, mode, session_id, new_id, &prompt);
            (OsString::from(decide::program(*client)), args, None, used)
        }
        Driver::Command(argv) => {
            let used = match (mode, session_id) {
                (SessionMode::Same, Some(id)) => id.to_string(),
                _ => new_id.to_string(),
            };
            let (program, rest) = argv
                .split_first()
                .ok_or_else(|| EngineError::BadInput {
                    message: "`run --` needs a command".into(),
                    hint: "Give the agent's command after `--`, e.g. `git orchestrate run -- ./my-agent.sh`.".into(),
                })?;
            (
                OsString::from(program),
                rest.to_vec(),
                Some(briefing.as_bytes()),
                Some(used),
            )
        }
    };
    let mut env = vec![
        (
            "GIT_ORCHESTRATE_WORKFLOW",
            OsString::from(session.store.workflow()),
        ),
        (
            "GIT_ORCHESTRATE_BRIEFING_FILE",
            briefing_file.as_os_str().to_os_string(),
        ),
        ("GIT_ORCHESTRATE_RUN_TURN", OsString::from(turn.to_string())),
        ("GIT_ORCHESTRATE_RUN_SESSION", OsString::from(mode.as_str())),
        (
            "GIT_ORCHESTRATE_RUN_SESSION_ID",
            OsString::from(used.clone().unwrap_or_default()),
        ),
    ];
    // Only a known client's hooks write the token back: a command gets none.
    if let Driver::Known(client) = driver {
        env.push((super::agent_hook::RUN_PROOF_VAR, OsString::from(token)));
        env.extend(
            decide::trust_env(*client)
                .iter()
                .map(|(key, value)| (*key, OsString::from(value))),
        );
    }
    let turn = run_agent(
        &program,
        &args,
        session.store.workdir(),
        &env,
        stdin,
        turn_timeout,
    )
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            EngineError::BadInput {
                message: format!(
                    "cannot start the agent `{}`: not found on PATH",
                    program.to_string_lossy()
                ),
                hint: "Install it, or give any agent command after `--`.".into(),
            }
        } else {
            io_error(format!("run the agent `{}`", program.to_string_lossy()))(e)
        }
    })?;
    Ok((turn, used))
}

/// The error that stops the run after a faulty turn, quoting what the agent said.
fn turn_fault_error(
    session: &Session,
    driver: &Driver,
    fault: decide::TurnFault,
    turn: u32,
    exit: &str,
    outcome: &AgentTurn,
) -> EngineError {
    let said = [&outcome.stderr, &outcome.stdout]
        .into_iter()
        .map(|out| String::from_utf8_lossy(out).into_owned())
        .find(|text| !text.trim().is_empty())
        .map(|text| format!("It said:\n{}", decide::quoted(&text, 8)))
        .unwrap_or_else(|| "It printed nothing.".to_string());
    let (name, client) = match driver {
        Driver::Known(client) => (decide::program(*client).to_string(), Some(*client)),
        Driver::Command(argv) => (argv.join(" "), None),
    };
    let run_ref = session.store.run_ref_name();
    match (fault, client) {
        (decide::TurnFault::CouldNotStart, _) => EngineError::Agent {
            message: format!(
                "the agent `{name}` could not start: turn {turn} ended with {exit} before it did \
                 anything; the run stops, the workflow is untouched. {said}"
            ),
            hint: format!(
                "Fix what it said (run it by hand to see more), then `git orchestrate run` again; the \
                 turn's output is kept in {run_ref}."
            ),
        },
        (decide::TurnFault::Unguarded, client) => {
            let client = client.map(decide::program).unwrap_or("CLIENT");
            EngineError::Agent {
                message: format!(
                    "the agent `{name}` ran turn {turn} without git-orchestrate's hooks (their \
                     session-start hook never ran), so its commands were not guarded; the run stops \
                     before another turn. {said}"
                ),
                hint: format!(
                    "Run `git orchestrate init --agent {client}` here, and `git orchestrate doctor` to see \
                     whether {client} loads this project's settings; check the turn's work with `git \
                     orchestrate audit` and the output kept in {run_ref}."
                ),
            }
        }
    }
}

/// Halts the workflow as stuck, with the run's report (a lost race re-reads and retries; a
/// workflow already halted is left as it is).
fn halt_stuck(session: &Session, report: &str, turns: u32) -> Result<(), EngineError> {
    session.with_retries(|| {
        let Some(snap) = session.store.read()? else {
            return Ok(());
        };
        if snap.state.halt().is_some() {
            return Ok(());
        }
        session
            .apply(
                &snap,
                Event::Stuck {
                    report: report.to_string(),
                    turns,
                },
            )
            .map(|_| ())
    })
}

/// A random UUID (version 4) for a new agent session.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut bytes)
    });
    if read.is_err() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
            ^ u128::from(std::process::id());
        bytes = seed.to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
