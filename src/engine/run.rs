//! `git orchestrate run`: the driver loop (docs/setup.md, "Unattended"). Each turn asks `get-task`,
//! hands the briefing to the agent and waits; the workflow's own transitions are the measure
//! of progress. Turns are recorded under `refs/orchestrator/runs/<workflow>`; an agent that
//! makes no progress on one step for `[retry] max_iterations` turns halts the workflow as
//! stuck, with a report. On a ticket workflow (docs/tickets.md) each turn goes to the role
//! whose turn it is, with that role's briefing and `GIT_ORCHESTRATE_ROLE` set; a hand-over to
//! the other role starts a fresh agent session, and the run ends when the ticket is done.

use std::ffi::OsString;
use std::path::Path;

use serde::Serialize;

use super::{EngineError, Session, io_error};
use crate::agent::hook::Client;
use crate::agent::run::{self as decide, Next, Retry, SessionMode, TurnStory};
use crate::agent::usage::{Usage, read_usage};
use crate::config::RetryStrategy;
use crate::exec::agent::{AgentTurn, run_agent};
use crate::workflow::Event;
use crate::workflow::state::ExitRecord;
use crate::workflow::ticket::{Role, TicketState};

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
    /// On a ticket workflow: who works the manager's turns, when not `driver`.
    pub manager: Option<Driver>,
    /// On a ticket workflow: who works the developer's turns, when not `driver`.
    pub developer: Option<Driver>,
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
    /// On a ticket workflow: the role the turn's agent played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
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
    /// The tokens and cost the client reported for the turn (`None`: it reported none, or
    /// the agent is a command).
    pub usage: Option<Usage>,
    /// The commit of the run ref that keeps the turn's briefing and output.
    pub record: String,
}

/// `run` trusted the project for an agent client (`run --json` prints it as one line).
#[derive(Clone, Debug, Serialize)]
pub struct TrustNotice {
    pub event: &'static str,
    pub client: &'static str,
    pub message: String,
}

/// How the run ended.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub event: &'static str,
    /// `idle` (nothing left: exit 0), `done` (the ticket is done and merged: 0), `halted` (a
    /// human is needed: 10), `stuck` (10), `max_turns` (10).
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
    /// Before the first turn: `run` trusts the project for a client whose user had not
    /// judged it (the run's first line says so).
    Trusted(&'a TrustNotice),
    /// A turn starts: the agent has the briefing.
    Start {
        turn: u32,
        state: &'a str,
        /// On a ticket workflow: the role the agent plays.
        role: Option<Role>,
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
    let ticket = super::ticket::kind(session)? == Some(crate::store::WorkflowKind::Ticket);
    if !ticket && (options.manager.is_some() || options.developer.is_some()) {
        return Err(EngineError::BadInput {
            message: format!(
                "--manager-agent and --developer-agent apply to ticket workflows; workflow \"{}\" \
                 is a TDD workflow",
                session.store.workflow()
            ),
            hint: "Give the agent with --agent or after `--`.".into(),
        });
    }
    // Before anything is started or written: every client of the run loads our hooks and
    // MCP server here, or the run does not start.
    let granted = prepare_clients(session, options)?;
    for notice in &granted {
        on_event(RunEvent::Trusted(notice)).map_err(io_error("print the run's start"))?;
    }
    crate::exec::agent::forward_stop_signals()
        .map_err(|e| EngineError::Internal(format!("cannot watch for signals: {e}")))?;
    crate::exec::agent::supervise().map_err(|e| {
        EngineError::Internal(format!(
            "cannot become the reaper of the agent's processes: {e}"
        ))
    })?;
    let mut driving = Driving {
        session,
        options,
        retry: Retry::new(
            options.strategy.unwrap_or(config.retry.strategy),
            options
                .fresh_after
                .unwrap_or(config.retry.fresh_after_failures),
            config.retry.max_iterations,
        ),
        turn_timeout: config.retry.turn_timeout,
        session_id: None,
        stories: Vec::new(),
        briefing_file: session.store.run_briefing_file(),
        unfinished: session.store.run_turn_file(),
        // The workflow's transitions during the run are those between its tip now and at the
        // end (those of `get-task` at the start of a turn too).
        run_start: workflow_tip(session, ticket)?,
        started,
        briefed_state: None,
        ticket,
        role: None,
        trusting: granted
            .iter()
            .filter_map(|n| known_client(n.client))
            .collect(),
    };
    // A turn the last run started and never finished (it was killed) is recorded first, as
    // interrupted; turns are numbered on from the runs record, across runs.
    record_interrupted(session, &driving.unfinished)?;
    let first = session
        .store
        .last_run_record()?
        .and_then(|(_, subject)| turn_number(&subject))
        .map_or(1, |n| n + 1);
    for turn in 1..=options.max_turns {
        if let Some(ending) = driving.turn(first + turn - 1, on_event)? {
            let turns = match ending {
                Ending::Idle | Ending::Done | Ending::Halted => turn - 1,
                Ending::Stuck | Ending::MaxTurns => turn,
            };
            return driving.summary(ending, turns);
        }
    }
    driving.summary(Ending::MaxTurns, options.max_turns)
}

/// How a run ends without an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Nothing is left to do (exit 0).
    Idle,
    /// The ticket is done and merged (exit 0).
    Done,
    /// The workflow waits for a human (10).
    Halted,
    /// The agent made no progress for `[retry] max_iterations` turns: halted as stuck (10).
    Stuck,
    /// `--max-turns` turns were taken (10).
    MaxTurns,
}

impl Ending {
    fn outcome(self) -> &'static str {
        match self {
            Ending::Idle => "idle",
            Ending::Done => "done",
            Ending::Halted => "halted",
            Ending::Stuck => "stuck",
            Ending::MaxTurns => "max_turns",
        }
    }
}

/// What `get-task`'s answer means before a turn: the run ends, or the agent takes a turn.
fn before_turn(idle: bool, halted: bool) -> Option<Ending> {
    if idle {
        Some(Ending::Idle)
    } else if halted {
        Some(Ending::Halted)
    } else {
        None
    }
}

/// What one finished turn showed.
#[derive(Clone, Copy, Debug)]
struct TurnFacts {
    /// Whether a known client's session-start hook fired and its MCP server started (`None`
    /// for a command).
    proof: Option<decide::Proof>,
    /// The agent exited other than 0 and was not cut at its time limit (a turn cut at its
    /// limit ran: it did not fail to start).
    failed: bool,
    progressed: bool,
    /// It wrote something other than white space on stdout.
    printed: bool,
}

/// What a finished turn means for the run: go on, stop with the fault, or end as stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterTurn {
    Next,
    Fault(decide::TurnFault),
    Stuck,
}

impl TurnFacts {
    /// What the finished turn `taken` showed.
    fn of(taken: &Taken) -> TurnFacts {
        TurnFacts {
            proof: taken.proof,
            failed: !matches!(
                taken.outcome.exit,
                ExitRecord::Code(0) | ExitRecord::TimedOut { .. }
            ),
            progressed: taken.progressed,
            printed: !taken.outcome.stdout.iter().all(u8::is_ascii_whitespace),
        }
    }
}

/// What the stuck report quotes of a turn without progress: what the agent said, else the
/// last 40 lines it printed.
fn story_said(taken: &Taken) -> String {
    taken.said.clone().unwrap_or_else(|| {
        let tail = crate::exec::tail_lines(&taken.outcome.stdout, 40);
        tail.trim().to_string()
    })
}

/// The record of a turn under way, kept on disk until the turn's own record is written.
fn started_record(number: u32, brief: &Brief, mode: SessionMode) -> serde_json::Value {
    let mut started = serde_json::json!({
        "turn": number, "state": brief.state, "step": brief.step, "session": mode,
    });
    if let Some(role) = brief.role {
        started["role"] = serde_json::json!(role);
    }
    started
}

fn after_turn(facts: TurnFacts, next: Next) -> AfterTurn {
    let TurnFacts {
        proof,
        failed,
        progressed,
        printed,
    } = facts;
    match (decide::turn_fault(proof, failed, progressed, printed), next) {
        (Some(fault), _) => AfterTurn::Fault(fault),
        (None, Next::Stuck) => AfterTurn::Stuck,
        (None, Next::Continue) => AfterTurn::Next,
    }
}

/// The run under way: what carries over from one turn to the next.
struct Driving<'a> {
    session: &'a Session,
    options: &'a RunOptions,
    retry: Retry,
    turn_timeout: std::time::Duration,
    /// The agent's session, to continue where the strategy says so.
    session_id: Option<String>,
    /// The turns without progress on the current step, for the stuck report.
    stories: Vec<TurnStory>,
    briefing_file: std::path::PathBuf,
    unfinished: std::path::PathBuf,
    run_start: Option<gix::ObjectId>,
    started: std::time::Instant,
    /// The state `get-task` named when it ended the run (idle, halted).
    briefed_state: Option<String>,
    /// A ticket workflow: turns go to the role whose turn it is.
    ticket: bool,
    /// The role of the last turn (a ticket workflow): the agent's session is that role's.
    role: Option<Role>,
    /// The clients `run` trusts the project for (their users had not judged it).
    trusting: Vec<Client>,
}

/// What a turn starts from: where the workflow stands, and the briefing for the agent.
struct Brief {
    state: String,
    role: Option<Role>,
    step: Option<String>,
    /// Where the workflow stands, as the count of turns without progress keys it.
    where_: String,
    attempt: u32,
    briefing: String,
}

/// The briefing ends the run, or starts a turn.
enum Briefed {
    /// How the run ends, and the state that says so.
    End(Ending, String),
    Turn(Brief),
}

/// The workflow's tip: a ticket's, or a TDD workflow's as its state reads.
fn workflow_tip(session: &Session, ticket: bool) -> Result<Option<gix::ObjectId>, EngineError> {
    if ticket {
        Ok(session.store.tip()?)
    } else {
        Ok(session.store.read()?.map(|s| s.tip))
    }
}

/// A TDD workflow's briefing: `get-task`, which may act first.
fn tdd_brief(session: &Session) -> Result<Briefed, EngineError> {
    let task = super::get_task(session)?;
    let state = task.state.to_string();
    if let Some(ending) = before_turn(task.idle, task.halted) {
        return Ok(Briefed::End(ending, state));
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
    Ok(Briefed::Turn(Brief {
        state,
        role: None,
        step,
        where_,
        attempt: task.attempt,
        briefing: task.briefing,
    }))
}

/// The ticket's commits since `before` (the tip a turn started from), newest first, each
/// with its event.
fn moves_since(
    session: &Session,
    before: Option<gix::ObjectId>,
) -> Result<Vec<(String, String)>, EngineError> {
    let Some(mut at) = session.store.tip()? else {
        return Ok(Vec::new());
    };
    let mut moves = Vec::new();
    while Some(at) != before {
        let record = session.store.commit_record(at)?;
        moves.push((at.to_string(), record.history.event.clone()));
        match record.parents.first() {
            Some(parent) => at = *parent,
            None => break,
        }
    }
    Ok(moves)
}

/// The role whose move a ticket's event is (`None`: an event either may cause, or none).
fn mover(event: &str) -> Option<Role> {
    match event {
        "assign" | "update-subtask" | "finish-start" | "complete-ticket" => Some(Role::Manager),
        "subtask-complete" => Some(Role::Developer),
        _ => None,
    }
}

/// The first move of the other role's among `moves` (newest first, as [`moves_since`] reads
/// them) that a turn of `role` made, with its commit.
fn foreign_move(role: Role, moves: &[(String, String)]) -> Option<&(String, String)> {
    moves
        .iter()
        .rev()
        .find(|(_, event)| mover(event).is_some_and(|by| by != role))
}

/// What a ticket's state means before a turn: the run ends, or the role whose turn it is.
fn ticket_turn(state: TicketState) -> Result<Role, Ending> {
    match (state.role(), state) {
        (Some(role), _) => Ok(role),
        (None, TicketState::TicketDone) => Err(Ending::Done),
        (None, _) => Err(Ending::Halted),
    }
}

/// A ticket's briefing for the role whose turn it is.
fn ticket_brief(session: &Session) -> Result<Briefed, EngineError> {
    let snap = super::ticket::read(session)?;
    let state = snap.ticket.state;
    let role = match ticket_turn(state) {
        Ok(role) => role,
        Err(ending) => return Ok(Briefed::End(ending, state.as_str().to_string())),
    };
    let (snap, briefing) = super::ticket::briefing(session, Some(role))?;
    let current = snap.ticket.current();
    let step = current.map(|s| format!("subtask {}", s.id));
    let where_ = format!(
        "{} {} {}",
        snap.ticket.state.as_str(),
        role.as_str(),
        step.as_deref().unwrap_or("-")
    );
    Ok(Briefed::Turn(Brief {
        state: snap.ticket.state.as_str().to_string(),
        role: Some(role),
        step,
        where_,
        attempt: current.map_or(1, |s| s.rejections + 1),
        briefing,
    }))
}

/// One turn as the agent took it.
struct Taken {
    outcome: AgentTurn,
    proof: Option<decide::Proof>,
    /// What the agent said at the end, when its output says.
    said: Option<String>,
    /// What the client reported the turn used, read off its output.
    usage: Option<Usage>,
    /// The workflow's tip after the turn: the PR the turn worked on, for the ledger.
    after: Option<gix::ObjectId>,
    progressed: bool,
    /// The step's last failing output, for the stuck report (a TDD workflow's).
    last_failure: Option<String>,
    state_after: String,
}

impl Driving<'_> {
    /// One turn: brief, let the agent work, record it, and decide. `Some` ends the run.
    /// What the turn shows is gathered ([`Taken`]), judged by the pure [`after_turn`], and
    /// only then carried out ([`Self::carry_out`]).
    fn turn(
        &mut self,
        number: u32,
        on_event: &mut dyn FnMut(RunEvent) -> std::io::Result<()>,
    ) -> Result<Option<Ending>, EngineError> {
        let session = self.session;
        session.begin_call();
        let briefed = if self.ticket {
            ticket_brief(session)?
        } else {
            tdd_brief(session)?
        };
        let brief = match briefed {
            Briefed::End(ending, state) => {
                self.briefed_state = Some(state);
                return Ok(Some(ending));
            }
            Briefed::Turn(brief) => brief,
        };
        // A hand-over: the other role starts in a session of its own, never in the
        // conversation of the role before it.
        if brief.role != self.role {
            self.session_id = None;
            self.role = brief.role;
        }
        let mode = self.retry.mode(self.session_id.is_some());
        // The tip the turn starts from, read before anything of the turn is shown or kept.
        let before = workflow_tip(session, self.ticket)?;
        on_event(RunEvent::Start {
            turn: number,
            state: &brief.state,
            role: brief.role,
            step: brief.step.as_deref(),
            attempt: brief.attempt,
            session: mode,
        })
        .map_err(io_error("print the turn"))?;
        // Kept until the turn's record is written: a turn cut short by a kill is recorded by
        // the next run.
        let unfinished = Unfinished::write(
            &self.unfinished,
            &started_record(number, &brief, mode).to_string(),
        )?;
        let taken = self.take(number, mode, before, &brief)?;
        self.halt_a_foreign_move(brief.role, before)?;
        let next = self.retry.record(&brief.where_, taken.progressed);
        if taken.progressed {
            self.stories.clear();
        }
        let record = self.record(number, &brief, mode, &taken)?;
        drop(unfinished);
        let report = self.report(number, &brief, mode, &taken, record);
        on_event(RunEvent::Done(&report)).map_err(io_error("print the turn"))?;
        let verdict = after_turn(TurnFacts::of(&taken), next);
        if !taken.progressed {
            self.stories.push(TurnStory {
                turn: number,
                mode,
                session: self.session_id.clone(),
                seconds: taken.outcome.elapsed.as_secs_f64(),
                exit: report.exit.clone(),
                briefing: brief.briefing.clone(),
                said: story_said(&taken),
            });
        }
        self.carry_out(verdict, number, &brief, &taken)
    }

    /// A role acts only in its own session: a move of the other role's made during this
    /// turn (a script the guard could not read, a tool called with another role) halts the
    /// ticket for a human, whatever it did (a ticket already done is named in its log).
    fn halt_a_foreign_move(
        &self,
        role: Option<Role>,
        before: Option<gix::ObjectId>,
    ) -> Result<(), EngineError> {
        let Some(role) = role else {
            return Ok(());
        };
        let moves = moves_since(self.session, before)?;
        let Some((commit, event)) = foreign_move(role, &moves) else {
            return Ok(());
        };
        let reason = format!(
            "the {} session made the {}'s move `{event}` (commit {}): a role acts only in its \
             own session; a human looks at what happened before `git orchestrate resume`",
            role.as_str(),
            match role {
                Role::Manager => "developer",
                Role::Developer => "manager",
            },
            crate::short_id(commit)
        );
        // Recorded as any turn is; the next briefing finds the ticket halted and ends the
        // run (exit 10).
        super::ticket::halt_stuck(self.session, &reason)
    }

    /// What `run --json` prints of the finished turn.
    fn report(
        &self,
        number: u32,
        brief: &Brief,
        mode: SessionMode,
        taken: &Taken,
        record: gix::ObjectId,
    ) -> TurnReport {
        TurnReport {
            event: "turn",
            turn: number,
            state: brief.state.clone(),
            role: brief.role,
            step: brief.step.clone(),
            attempt: brief.attempt,
            session: mode,
            session_id: self.session_id.clone(),
            exit: taken.outcome.exit.to_string(),
            seconds: taken.outcome.elapsed.as_secs_f64(),
            progressed: taken.progressed,
            state_after: taken.state_after.clone(),
            without_progress: self.retry.without_progress,
            said: taken.said.as_ref().map(|s| s.chars().take(500).collect()),
            usage: taken.usage,
            record: record.to_string(),
        }
    }

    /// Carries out what [`after_turn`] decided: the next turn, the fault's error, or the
    /// workflow halted as stuck.
    fn carry_out(
        &self,
        verdict: AfterTurn,
        number: u32,
        brief: &Brief,
        taken: &Taken,
    ) -> Result<Option<Ending>, EngineError> {
        match verdict {
            AfterTurn::Next => Ok(None),
            AfterTurn::Fault(fault) => Err(turn_fault_error(
                self.session,
                self.driver(brief.role),
                fault,
                number,
                &taken.outcome.exit.to_string(),
                &taken.outcome,
            )),
            AfterTurn::Stuck => {
                self.halt_as_stuck(number, taken, brief.role, brief.step.as_deref())?;
                Ok(Some(Ending::Stuck))
            }
        }
    }

    /// Who works a turn of `role` (`None`: a TDD workflow's turn).
    fn driver(&self, role: Option<Role>) -> &Driver {
        let chosen = match role {
            Some(Role::Manager) => self.options.manager.as_ref(),
            Some(Role::Developer) => self.options.developer.as_ref(),
            None => None,
        };
        chosen.unwrap_or(&self.options.driver)
    }

    /// Halts the workflow as stuck, with the report of the turns that made no progress.
    fn halt_as_stuck(
        &self,
        number: u32,
        taken: &Taken,
        role: Option<Role>,
        step: Option<&str>,
    ) -> Result<(), EngineError> {
        let text = decide::stuck_report(
            &taken.state_after,
            step.unwrap_or("no step"),
            self.retry.max_iterations,
            &self.stories,
            taken.last_failure.as_deref(),
        );
        if !self.ticket {
            return halt_stuck(self.session, &text, self.retry.without_progress);
        }
        // A ticket keeps only `ticket.json`: the report goes with the run's turns, and the
        // halt names the commit that holds it.
        let who = role.map_or("agent", Role::as_str);
        let kept = self.session.store.append_run_record(
            &[("stuck.md", text.as_bytes())],
            &format!(
                "turn {number} stuck: the {who} made no progress in {} turns",
                self.retry.without_progress
            ),
        )?;
        let reason = format!(
            "stuck: under `git orchestrate run` the {who} made no progress (no transition of the \
             ticket) in {} turns in a row on {}; the run's report: `git show {}:stuck.md`",
            self.retry.without_progress,
            step.unwrap_or("the ticket"),
            crate::short_id(&kept.to_string())
        );
        super::ticket::halt_stuck(self.session, &reason)
    }

    /// Hands the briefing to the agent and waits for its turn to end.
    fn take(
        &mut self,
        number: u32,
        mode: SessionMode,
        before: Option<gix::ObjectId>,
        brief: &Brief,
    ) -> Result<Taken, EngineError> {
        let (briefing, state, role) = (&brief.briefing, &brief.state, brief.role);
        let session = self.session;
        let driver = self.driver(role).clone();
        let new_id = new_session_id();
        // The turn's token: the session-start hook of `init --agent` writes it back when the
        // client loaded our settings (`agent_hook::record_run_start`).
        let token = new_session_id();
        let (outcome, used_session) = run_turn(
            session,
            &driver,
            role,
            mode,
            self.session_id.as_deref(),
            &new_id,
            number,
            &token,
            briefing,
            &self.briefing_file,
            self.turn_timeout,
            &self.trusting,
        )?;
        let usage = match &driver {
            Driver::Known(client) => read_usage(*client, &String::from_utf8_lossy(&outcome.stdout)),
            Driver::Command(_) => None,
        };
        let (proof, said, reported_session) = match &driver {
            Driver::Known(client) => {
                let proof = decide::Proof {
                    hooks: super::agent_hook::take_run_start(
                        session,
                        &token,
                        decide::program(*client),
                    ),
                    server: super::agent_hook::take_server_start(session, &token),
                };
                let (said, reported) =
                    decide::read_output(*client, &String::from_utf8_lossy(&outcome.stdout));
                (Some(proof), said, reported)
            }
            Driver::Command(_) => (None, None, None),
        };
        self.session_id = reported_session.or(used_session);
        let (after, state_after, last_failure) = if self.ticket {
            let after = session.store.read_ticket()?;
            (
                after.as_ref().map(|s| s.tip),
                after.map(|s| s.ticket.state.as_str().to_string()),
                None,
            )
        } else {
            let after = session.store.read()?;
            (
                after.as_ref().map(|s| s.tip),
                after.as_ref().map(|s| s.state.status().to_string()),
                after.and_then(|s| s.state.last_error().map(str::to_string)),
            )
        };
        Ok(Taken {
            outcome,
            proof,
            said,
            usage,
            after,
            progressed: after != before,
            last_failure,
            state_after: state_after.unwrap_or_else(|| state.to_string()),
        })
    }

    /// The turn's record under `refs/orchestrator/runs/<workflow>`: what it was told, what
    /// it printed, where it left the workflow.
    fn record(
        &self,
        number: u32,
        brief: &Brief,
        mode: SessionMode,
        taken: &Taken,
    ) -> Result<gix::ObjectId, EngineError> {
        let (state, step) = (&brief.state, brief.step.as_deref());
        // The turn's role: the run keeps it for the turn under way.
        let role = self.role;
        let outcome = &taken.outcome;
        let mut turn_json = serde_json::json!({
            "turn": number, "state": state, "step": step, "session": mode,
            "session_id": self.session_id, "exit": outcome.exit.to_string(),
            "seconds": outcome.elapsed.as_secs_f64(), "progressed": taken.progressed,
            "state_after": taken.state_after,
            // The ledger's figures (docs/board.md, "The ledger"): null when not reported.
            "usage": taken.usage,
            "tip_after": taken.after.map(|t| t.to_string()),
        });
        if let Some(role) = role {
            turn_json["role"] = serde_json::json!(role);
        }
        let subject = turn_subject(
            number,
            state,
            role,
            step,
            &taken.state_after,
            taken.progressed,
        );
        Ok(self.session.store.append_run_record(
            &[
                ("turn.json", turn_json.to_string().as_bytes()),
                ("briefing.txt", brief.briefing.as_bytes()),
                ("stdout.log", &outcome.stdout),
                ("stderr.log", &outcome.stderr),
            ],
            &subject,
        )?)
    }

    /// How the run ended, with the transitions it saw.
    fn summary(&self, ending: Ending, turns: u32) -> Result<RunSummary, EngineError> {
        let store = &self.session.store;
        let (end, state_now) = if self.ticket {
            let end = store.read_ticket()?;
            (
                end.as_ref().map(|s| s.tip),
                end.map(|s| s.ticket.state.as_str().to_string()),
            )
        } else {
            let end = store.read()?;
            (
                end.as_ref().map(|s| s.tip),
                end.map(|s| s.state.status().to_string()),
            )
        };
        let transitions = match end {
            Some(end) => store.transitions_between(self.run_start, end, 100_000)?,
            None => 0,
        };
        let state = match (ending, &self.briefed_state) {
            (Ending::Stuck, _) => "HALTED".to_string(),
            (Ending::Idle | Ending::Done | Ending::Halted, Some(state)) => state.clone(),
            _ => state_now.unwrap_or_else(|| "INITIALIZING".to_string()),
        };
        let message = match ending {
            Ending::Idle => "nothing is left to do".to_string(),
            Ending::Done => "the ticket is done and merged".to_string(),
            Ending::Halted if self.ticket => {
                "the ticket waits for a human (`git orchestrate ticket show` says why)".to_string()
            }
            Ending::Halted => {
                "the workflow waits for a human (`git orchestrate status` says why)".to_string()
            }
            Ending::Stuck if self.ticket => format!(
                "the {} made no progress in {} turns; the ticket is HALTED (stuck) with the run's report: \
                 `git orchestrate ticket show`, then `git orchestrate resume --guidance \"…\"`",
                self.role.map_or("agent", Role::as_str),
                self.retry.without_progress
            ),
            Ending::Stuck => format!(
                "the agent made no progress in {} turns; the workflow is HALTED (stuck) with the run's report: \
                 `git orchestrate status`, then `git orchestrate resume --guidance \"…\"`",
                self.retry.without_progress
            ),
            Ending::MaxTurns => format!(
                "stopped after --max-turns {} turns; the workflow is not done",
                self.options.max_turns
            ),
        };
        Ok(RunSummary {
            event: "end",
            outcome: ending.outcome(),
            turns,
            transitions,
            seconds: self.started.elapsed().as_secs_f64(),
            state,
            run_ref: store.run_ref_name(),
            message,
        })
    }
}

/// Records the turn a killed run left unfinished, as interrupted, unless its record was
/// written before the kill.
fn record_interrupted(session: &Session, unfinished: &Path) -> Result<(), EngineError> {
    let Some(bytes) = crate::input::read_file(unfinished, 64 * 1024)
        .ok()
        .flatten()
    else {
        return Ok(());
    };
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
    let _ = std::fs::remove_file(unfinished);
    Ok(())
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

/// The subject of a turn's run record (`turn_number` reads its number back).
fn turn_subject(
    number: u32,
    state: &str,
    role: Option<Role>,
    step: Option<&str>,
    state_after: &str,
    progressed: bool,
) -> String {
    format!(
        "turn {number}: {state}{}{} -> {state_after} ({})",
        role.map(|r| format!(" {}", r.as_str())).unwrap_or_default(),
        step.map(|s| format!(" {s}")).unwrap_or_default(),
        if progressed {
            "progress"
        } else {
            "no progress"
        }
    )
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
    role: Option<Role>,
    mode: SessionMode,
    session_id: Option<&str>,
    new_id: &str,
    turn: u32,
    token: &str,
    briefing: &str,
    briefing_file: &Path,
    turn_timeout: std::time::Duration,
    trusting: &[Client],
) -> Result<(AgentTurn, Option<String>), EngineError> {
    if let Some(dir) = briefing_file.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    }
    std::fs::write(briefing_file, briefing)
        .map_err(io_error(format!("write {}", briefing_file.display())))?;
    let (program, args, stdin, used) = match driver {
        Driver::Known(client) => {
            let prompt = decide::prompt(briefing, briefing_file);
            let trust = trusting.contains(client);
            let (args, used) =
                decide::agent_arguments(*client, mode, session_id, new_id, &prompt, trust);
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
    // The role's CLI calls, and the hooks its client runs, know the role from here.
    if let Some(role) = role {
        env.push((super::ticket::ROLE_ENV, OsString::from(role.as_str())));
    }
    // Only a known client's hooks write the token back: a command gets none.
    if let Driver::Known(client) = driver {
        env.push((super::agent_hook::RUN_PROOF_VAR, OsString::from(token)));
        if trusting.contains(client) {
            env.extend(
                decide::trust_env(*client)
                    .iter()
                    .map(|(key, value)| (*key, OsString::from(value))),
            );
        }
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
    // A known client's reply is read off its JSON (Claude's `result`), not its raw lines.
    let reply = match driver {
        Driver::Known(client) => {
            decide::read_output(*client, &String::from_utf8_lossy(&outcome.stdout)).0
        }
        Driver::Command(_) => None,
    };
    let said = reply
        .into_iter()
        .chain(
            [&outcome.stderr, &outcome.stdout]
                .into_iter()
                .map(|out| String::from_utf8_lossy(out).into_owned()),
        )
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
        (decide::TurnFault::NoServer, client) => {
            let client = client.unwrap_or(Client::Claude);
            let name = decide::program(client);
            EngineError::Agent {
                message: format!(
                    "the agent `{name}` ran turn {turn} without git-orchestrate's MCP server (it never \
                     started with the turn's token), so the agent had none of the orchestrate tools; \
                     the run stops before another turn. {said}"
                ),
                hint: format!(
                    "Run `git orchestrate init --agent {name}` here (it registers the server in {}), and \
                     `git orchestrate doctor`; the turn's output is kept in {run_ref}.",
                    server_file(client)
                ),
            }
        }
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

/// The file that registers our MCP server for `client`, as `init --agent` writes it.
fn server_file(client: Client) -> &'static str {
    match client {
        Client::Claude => ".mcp.json",
        Client::Codex => ".codex/config.toml",
        Client::Gemini => ".gemini/settings.json",
    }
}

fn known_client(name: &str) -> Option<Client> {
    [Client::Claude, Client::Codex, Client::Gemini]
        .into_iter()
        .find(|c| decide::program(*c) == name)
}

/// Before turn 1, for each known client of the run: its project files as it will load them
/// name our hooks and MCP server (else exit 5), and it will load them here: a project its
/// user marked untrusted is refused (exit 4), one nobody judged is trusted, and said so.
/// Nothing is started or written either way.
fn prepare_clients(
    session: &Session,
    options: &RunOptions,
) -> Result<Vec<TrustNotice>, EngineError> {
    let clients = clients_of(options);
    for client in &clients {
        refuse_gaps(session, *client)?;
    }
    let mut notices = Vec::new();
    for client in clients {
        notices.extend(trust(session.store.workdir(), client)?);
    }
    Ok(notices)
}

/// The known clients of a run, each once, in the order its options name them.
fn clients_of(options: &RunOptions) -> Vec<Client> {
    let mut clients: Vec<Client> = Vec::new();
    for driver in [
        Some(&options.driver),
        options.manager.as_ref(),
        options.developer.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if let Driver::Known(client) = driver
            && !clients.contains(client)
        {
            clients.push(*client);
        }
    }
    clients
}

/// Refuses (exit 5) when `client`'s project files as it will load them do not name our hooks
/// and MCP server.
fn refuse_gaps(session: &Session, client: Client) -> Result<(), EngineError> {
    let name = decide::program(client);
    let files = super::agent_setup::file_gaps(session, client);
    let gaps: Vec<String> = files
        .iter()
        .flat_map(|f| f.gaps.iter().map(move |g| format!("{} {g}", f.path)))
        .collect();
    if !gaps.is_empty() {
        return Err(EngineError::Agent {
            message: format!(
                "run refused before turn 1: {name} would work here without git-orchestrate's \
                 hooks or MCP server: {}; nothing was started or committed",
                gaps.join("; ")
            ),
            hint: format!(
                "Run `git orchestrate init --agent {name}` here (it writes {}), then `git \
                 orchestrate run` again; `git orchestrate doctor` checks them.",
                files
                    .iter()
                    .map(|f| f.path)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        });
    }
    Ok(())
}

/// Whether `client` will load the project at `root`: refused (exit 4) where its user marked
/// it untrusted; trusted, and said so, where nobody judged it.
fn trust(root: &Path, client: Client) -> Result<Option<TrustNotice>, EngineError> {
    let name = decide::program(client);
    let Some(trust) = super::agent_setup::client_trust(client, root) else {
        return Ok(None);
    };
    let folder = trust
        .rule
        .clone()
        .unwrap_or_else(|| root.display().to_string());
    match (crate::agent::trust::run_trust(&trust.trust), client) {
        (crate::agent::trust::RunTrust::Loads, _) => Ok(None),
        (crate::agent::trust::RunTrust::Refuse, Client::Codex) => {
            Err(EngineError::AgentUntrusted {
                message: format!(
                    "run refused before turn 1: {} says trust_level = \"untrusted\" under \
                     [projects.{}], so Codex would drop .codex/ here (no hooks, no MCP server), \
                     and run does not overrule your setting; nothing was started",
                    trust.record,
                    toml::Value::String(folder.clone())
                ),
                hint: format!(
                    "If you trust this project, set trust_level = \"trusted\" there (or delete the \
                     entry: run then trusts it and says so), then `git orchestrate run --agent {name}` \
                     again."
                ),
            })
        }
        (crate::agent::trust::RunTrust::Refuse, _) => Err(EngineError::AgentUntrusted {
            message: format!(
                "run refused before turn 1: {} marks {folder} DO_NOT_TRUST, so Gemini CLI would \
                     drop .gemini/settings.json here (no hooks, no MCP server), and run does not \
                     overrule your setting; nothing was started",
                trust.record
            ),
            hint: format!(
                "If you trust this folder, change that rule to TRUST_FOLDER (or remove it: run \
                     then trusts the folder for its own turns and says so), then `git orchestrate \
                     run --agent {name}` again."
            ),
        }),
        (crate::agent::trust::RunTrust::Grant, Client::Codex) => Ok(Some(TrustNotice {
            event: "trust",
            client: name,
            message: format!(
                "run trusts this project for Codex: {} had no trust_level for {}, and Codex loads \
                 .codex/ (our hooks and MCP server) only in a trusted project; `codex exec --trust` \
                 records trust_level = \"trusted\" for it there",
                trust.record,
                root.display()
            ),
        })),
        (crate::agent::trust::RunTrust::Grant, _) => Ok(Some(TrustNotice {
            event: "trust",
            client: name,
            message: format!(
                "run trusts this folder for Gemini CLI's turns alone (GEMINI_CLI_TRUST_WORKSPACE=true): \
                 {} does not decide {}, and Gemini CLI loads .gemini/settings.json (our hooks and \
                 MCP server) only in a trusted folder; nothing is recorded",
                trust.record,
                root.display()
            ),
        })),
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

#[cfg(test)]
mod tests {
    use super::*;
    use decide::TurnFault::{CouldNotStart, Unguarded};
    use pretty_assertions::assert_eq;

    #[test]
    fn get_task_ends_the_run_when_nothing_is_left_or_a_human_is_needed() {
        let table = [
            ((true, false), Some(Ending::Idle)),
            ((false, true), Some(Ending::Halted)),
            ((true, true), Some(Ending::Idle)),
            ((false, false), None),
        ];
        for ((idle, halted), expected) in table {
            assert_eq!(
                before_turn(idle, halted),
                expected,
                "idle {idle}, halted {halted}"
            );
        }
    }

    /// Each row: hooks fired (None: a command), failed, progressed, printed, what the retry
    /// count says; then what the run does.
    #[test]
    fn a_finished_turn_goes_on_stops_with_its_fault_or_ends_stuck() {
        let go = Next::Continue;
        let stuck = Next::Stuck;
        #[rustfmt::skip]
        let table = [
            ("a command that worked", (None, false, true, true, go), AfterTurn::Next),
            ("a command that failed but printed", (None, true, false, true, go), AfterTurn::Next),
            ("a command that failed silently", (None, true, false, false, go), AfterTurn::Fault(CouldNotStart)),
            ("a silent failure that still progressed", (None, true, true, false, go), AfterTurn::Next),
            ("a guarded client, no progress, count reached", (Some(true), false, false, true, stuck), AfterTurn::Stuck),
            ("a client whose hooks never fired", (Some(false), false, true, true, go), AfterTurn::Fault(Unguarded)),
            ("a client that could not start", (Some(false), true, false, false, go), AfterTurn::Fault(CouldNotStart)),
            ("a fault wins over stuck", (Some(false), false, false, true, stuck), AfterTurn::Fault(Unguarded)),
        ];
        for (name, (hooks_fired, failed, progressed, printed, next), expected) in table {
            let facts = TurnFacts {
                proof: hooks_fired.map(|hooks| decide::Proof {
                    hooks,
                    server: hooks,
                }),
                failed,
                progressed,
                printed,
            };
            assert_eq!(after_turn(facts, next), expected, "{name}");
        }
    }

    #[test]
    fn a_tickets_state_gives_the_turn_to_its_role_or_ends_the_run() {
        let table = [
            (TicketState::Manager, Ok(Role::Manager)),
            (TicketState::Developer, Ok(Role::Developer)),
            (TicketState::TicketDone, Err(Ending::Done)),
            (TicketState::Halted, Err(Ending::Halted)),
        ];
        for (state, expected) in table {
            assert_eq!(ticket_turn(state), expected, "{}", state.as_str());
        }
    }

    #[test]
    fn endings_are_named_as_run_json_prints_them() {
        let names = [
            Ending::Idle,
            Ending::Done,
            Ending::Halted,
            Ending::Stuck,
            Ending::MaxTurns,
        ]
        .map(Ending::outcome);
        assert_eq!(names, ["idle", "done", "halted", "stuck", "max_turns"]);
    }

    fn taken(exit: ExitRecord, stdout: &str, progressed: bool) -> Taken {
        Taken {
            outcome: AgentTurn {
                exit,
                stdout: stdout.as_bytes().to_vec(),
                stderr: Vec::new(),
                elapsed: std::time::Duration::from_millis(1500),
            },
            proof: None,
            said: None,
            usage: None,
            after: None,
            progressed,
            last_failure: None,
            state_after: "DEBUGGING".into(),
        }
    }

    /// A turn cut at its time limit ran, and did not fail to start; white space is no output.
    #[test]
    fn a_turn_fails_on_an_exit_other_than_0_and_prints_when_not_only_white_space() {
        #[rustfmt::skip]
        let table = [
            (ExitRecord::Code(0), "done\n", (false, true)),
            (ExitRecord::Code(1), " \n\t", (true, false)),
            (ExitRecord::Signal(9), "", (true, false)),
            (ExitRecord::TimedOut { after_ms: 5 }, "x", (false, true)),
        ];
        for (exit, stdout, (failed, printed)) in table {
            let facts = TurnFacts::of(&taken(exit, stdout, true));
            assert_eq!(
                (facts.failed, facts.printed),
                (failed, printed),
                "{exit:?} {stdout:?}"
            );
            assert!(facts.progressed);
        }
    }

    #[test]
    fn a_stuck_turns_story_is_what_it_said_else_its_last_lines() {
        let mut quiet = taken(ExitRecord::Code(0), "\n  last words  \n", false);
        assert_eq!(story_said(&quiet), "last words");
        quiet.said = Some("I am done".into());
        assert_eq!(story_said(&quiet), "I am done");
    }

    #[test]
    fn a_ticket_move_is_the_managers_or_the_developers() {
        #[rustfmt::skip]
        let table = [
            ("assign", Some(Role::Manager)), ("update-subtask", Some(Role::Manager)),
            ("finish-start", Some(Role::Manager)), ("complete-ticket", Some(Role::Manager)),
            ("subtask-complete", Some(Role::Developer)), ("create", None), ("halt", None),
        ];
        for (event, expected) in table {
            assert_eq!(mover(event), expected, "{event}");
        }
    }

    #[test]
    fn the_first_move_of_the_other_role_during_a_turn_is_named() {
        let moves: Vec<(String, String)> = [
            ("c3", "subtask-complete"),
            ("c2", "assign"),
            ("c1", "update-subtask"),
            ("c0", "create"),
        ]
        .iter()
        .map(|(c, e)| (c.to_string(), e.to_string()))
        .collect();
        // Newest first: the developer's turn made c1 first of the manager's moves.
        assert_eq!(
            foreign_move(Role::Developer, &moves),
            Some(&("c1".to_string(), "update-subtask".to_string()))
        );
        assert_eq!(
            foreign_move(Role::Manager, &moves),
            Some(&("c3".to_string(), "subtask-complete".to_string()))
        );
        assert_eq!(foreign_move(Role::Manager, &moves[1..]), None);
        assert_eq!(foreign_move(Role::Developer, &[]), None);
    }

    #[test]
    fn a_turns_record_names_its_role_and_step_only_when_it_has_them() {
        assert_eq!(
            turn_subject(
                3,
                "EXECUTING_TDD",
                None,
                Some("step 1.2 (GREEN)"),
                "DEBUGGING",
                false
            ),
            "turn 3: EXECUTING_TDD step 1.2 (GREEN) -> DEBUGGING (no progress)"
        );
        assert_eq!(
            turn_subject(4, "DEVELOPER", Some(Role::Developer), None, "MANAGER", true),
            "turn 4: DEVELOPER developer -> MANAGER (progress)"
        );
        for subject in [
            turn_subject(12, "X", None, None, "Y", true),
            turn_subject(12, "X", Some(Role::Manager), Some("s"), "Y", false),
        ] {
            assert_eq!(turn_number(&subject), Some(12), "{subject}");
        }
    }

    #[test]
    fn a_turn_under_way_is_kept_with_its_role_when_it_has_one() {
        let brief = |role| Brief {
            state: "MANAGER".into(),
            role,
            step: Some("subtask 2".into()),
            where_: String::new(),
            attempt: 1,
            briefing: String::new(),
        };
        assert_eq!(
            started_record(5, &brief(None), SessionMode::Fresh).to_string(),
            r#"{"turn":5,"state":"MANAGER","step":"subtask 2","session":"fresh"}"#
        );
        assert_eq!(
            started_record(5, &brief(Some(Role::Manager)), SessionMode::Fresh)["role"],
            serde_json::json!("manager")
        );
    }

    #[test]
    fn a_runs_clients_are_its_known_agents_each_once_in_the_order_named() {
        let options = |driver, manager, developer| RunOptions {
            driver,
            manager,
            developer,
            max_turns: 1,
            strategy: None,
            fresh_after: None,
        };
        let command = || Driver::Command(vec!["./agent.sh".into()]);
        #[rustfmt::skip]
        let table = [
            (options(Driver::Known(Client::Codex), None, None), vec![Client::Codex]),
            (options(command(), None, None), vec![]),
            (options(Driver::Known(Client::Claude), Some(Driver::Known(Client::Gemini)), Some(Driver::Known(Client::Claude))), vec![Client::Claude, Client::Gemini]),
            (options(command(), Some(command()), Some(Driver::Known(Client::Gemini))), vec![Client::Gemini]),
        ];
        for (options, expected) in table {
            assert_eq!(clients_of(&options), expected);
        }
    }

    #[test]
    fn turn_numbers_are_read_from_record_subjects() {
        assert_eq!(
            turn_number("turn 7: EXECUTING_TDD -> DEBUGGING (progress)"),
            Some(7)
        );
        assert_eq!(turn_number("turn 12 started: x"), Some(12));
        assert_eq!(turn_number("turned 3"), None);
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod unit_tests;
