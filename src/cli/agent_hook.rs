//! `git orchestrate agent-hook <client> <event>`: the agent clients' hook adapters. Reads
//! the client's hook JSON on stdin and answers on stdout in that client's format; never fails
//! the hook: session-start and stop fail open, pre-tool-use fails closed
//! (docs/agent-guide.md, "Agents that plug in natively").

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Exit, Failure, MAX_INPUT_BYTES};
use crate::agent::guard::Decision;
use crate::agent::hook::{self, Client, HookOutput};
use crate::engine::{self, EngineError, Session};
use crate::store::StoreError;

/// Agent client hooks: session-start context, the pre-tool-use guard, the stop rule.
///
/// Installed by `git orchestrate init --agent CLIENT` in the client's settings. session-start
/// gives the agent the workflow's compact briefing; pre-tool-use denies shell commands and
/// file writes that go around the workflow (docs/agent-guide.md lists them, and the guard's
/// limits); stop keeps the agent working while the workflow expects its work, and lets it stop
/// when a human is needed or nothing is left to do ([agent] max_stop_blocks bounds it).
/// On a ticket workflow the session's role (GIT_ORCHESTRATE_ROLE, else `[agent] role`)
/// decides: session-start gives that role's briefing; stop keeps the role whose turn it is
/// working and lets the other role stop (a session without a role plays both); pre-tool-use
/// refuses the other role's tools and `--role`, and setting or unsetting
/// GIT_ORCHESTRATE_ROLE in any session. Always exits 0 with the answer in the client's
/// format.
#[derive(Debug, Args)]
pub struct AgentHookArgs {
    /// The agent client whose hook format to read and answer in.
    #[arg(value_enum)]
    pub client: ClientArg,
    /// The hook event (Gemini CLI's BeforeTool is pre-tool-use, its AfterAgent is stop).
    #[arg(value_enum)]
    pub event: EventArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClientArg {
    Claude,
    Codex,
    Gemini,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EventArg {
    SessionStart,
    PreToolUse,
    Stop,
}

pub fn run(workflow: Option<&str>, args: &AgentHookArgs) -> Result<Exit, Failure> {
    let client = match args.client {
        ClientArg::Claude => Client::Claude,
        ClientArg::Codex => Client::Codex,
        ClientArg::Gemini => Client::Gemini,
    };
    let mut bytes = Vec::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES)
        .read_to_end(&mut bytes);
    // What the client sent is input, not a bug of ours: it is reported as such.
    let input = read
        .map_err(|e| format!("cannot read the hook input: {e}"))
        .and_then(|_| hook::parse_input(&bytes))
        .map_err(|message| EngineError::BadInput {
            message,
            hint: "the agent client sends its hook JSON on stdin".into(),
        });
    let output = match args.event {
        EventArg::PreToolUse => match input {
            Ok(input) => match guard(workflow, &input) {
                Ok(Decision::Allow) => hook::allow(client),
                Ok(Decision::Deny(reason)) => hook::deny_tool(client, &reason.to_string()),
                Err(e) => hook::deny_tool(
                    client,
                    &format!("the guard could not check this call, so it is refused: {e}"),
                ),
            },
            Err(e) => hook::deny_tool(
                client,
                &format!("the guard could not check this call, so it is refused: {e}"),
            ),
        },
        EventArg::Stop => {
            let decision = input.and_then(|input| {
                let session = open(workflow, &input)?;
                let agent_session = input.session_id.as_deref().unwrap_or("default");
                let decision = engine::agent_hook::stop(&session, client, agent_session);
                let last = matches!(decision, Ok(hook::StopDecision::Allow(_)));
                by_hand_usage(&session, client, agent_session, &bytes, last);
                decision
            });
            match decision {
                Ok(decision) => hook::stop_answer(client, &decision),
                Err(e) => fail_open(client, &e),
            }
        }
        EventArg::SessionStart => {
            let view = input.and_then(|input| {
                let session = open(workflow, &input)?;
                if let Some(token) = std::env::var_os(engine::agent_hook::RUN_PROOF_VAR) {
                    engine::agent_hook::record_run_start(
                        &session,
                        &token.to_string_lossy(),
                        crate::agent::run::program(client),
                        input.session_id.as_deref().unwrap_or(""),
                    );
                }
                engine::agent_hook::session_context(&session, client)
            });
            match view {
                Ok(context) => hook::session_context(client, &context),
                Err(e) => fail_open(client, &e),
            }
        }
    };
    print(&output)?;
    Ok(Exit::Success)
}

/// The session for the directory the agent works in.
fn open(workflow: Option<&str>, input: &hook::HookInput) -> Result<Session, EngineError> {
    let dir = match input.cwd.as_deref().filter(|c| !c.is_empty()) {
        Some(cwd) => PathBuf::from(cwd),
        None => std::env::current_dir().map_err(|e| {
            EngineError::Internal(format!("cannot read the current directory: {e}"))
        })?,
    };
    Session::open_selected(&dir, workflow)
}

/// The guard's decision. A command run outside the repository (`cd /tmp`, then `rm -rf
/// /repo/.git/hooks`) is judged against the project the client runs its hooks in; only
/// with no repository there either is there nothing to guard.
fn guard(workflow: Option<&str>, input: &hook::HookInput) -> Result<Decision, EngineError> {
    let session = match open(workflow, input) {
        Err(EngineError::Store(StoreError::NotARepository(_))) => {
            let project = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
                .iter()
                .filter_map(std::env::var_os)
                .map(PathBuf::from)
                .chain(std::env::current_dir().ok())
                .find_map(|dir| match Session::open_selected(&dir, workflow) {
                    Err(EngineError::Store(StoreError::NotARepository(_))) => None,
                    other => Some(other),
                });
            match project {
                Some(session) => session?,
                None => return Ok(Decision::Allow),
            }
        }
        other => other?,
    };
    let cwd = input
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| session.store.workdir().to_path_buf());
    let ctx = engine::guard_context::guard_context(&session, &cwd)?;
    Ok(hook::check_tool(input, &ctx))
}

/// An agent run by hand (no `run` turn token in its environment): the tokens its client's
/// session file (`transcript_path` in the hook input of all three) holds since the last stop
/// go to the run record, for the ledger (docs/board.md, "The ledger"). Under `run`, `run`
/// records them from the client's own output. At the stop that lets the agent go (`last`),
/// the message the hook input names is waited for, since no later stop would read it. Best
/// effort: what cannot be read is said on stderr, and the stop's answer stands.
fn by_hand_usage(session: &Session, client: Client, agent_session: &str, input: &[u8], last: bool) {
    // `run` sets both for its turns (src/engine/run.rs); either one means run records them.
    let under_run = [
        engine::agent_hook::RUN_PROOF_VAR,
        "GIT_ORCHESTRATE_RUN_SESSION",
    ]
    .iter()
    .any(|var| std::env::var_os(var).is_some());
    if under_run {
        return;
    }
    let input = serde_json::from_slice::<serde_json::Value>(input).unwrap_or_default();
    let path = input["transcript_path"]
        .as_str()
        .map(std::path::PathBuf::from);
    let Some(path) = path.filter(|p| p.is_absolute()) else {
        return;
    };
    // Gemini CLI's AfterAgent names the agent's last words `prompt_response`.
    let last_message = input["last_assistant_message"]
        .as_str()
        .or_else(|| input["prompt_response"].as_str())
        .filter(|_| last);
    if let Err(e) = engine::agent_hook::record_transcript_usage(
        session,
        client,
        agent_session,
        &path,
        last_message,
    ) {
        eprintln!("git-orchestrate: the session's token use is not recorded: {e}");
    }
}

/// Session-start and stop never keep the agent from working: the error goes to stderr.
fn fail_open(client: Client, error: &EngineError) -> HookOutput {
    let _ = writeln!(
        std::io::stderr(),
        "git-orchestrate agent-hook: {error} (the hook lets the agent go on)"
    );
    hook::allow(client)
}

fn print(output: &HookOutput) -> Result<(), Failure> {
    if let Some(text) = &output.stdout {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{text}")?;
        stdout.flush()?;
    }
    Ok(())
}
