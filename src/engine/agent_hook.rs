//! `agent-hook`: gathers what the agent clients' hooks judge by (the guard's context, where
//! the workflow stands, and on a ticket workflow the role this session plays) and keeps the
//! Stop hook's count of blocked stops. Read-only on the workflow: a hook never moves it.

use std::path::Path;

use super::{EngineError, Session, io_error};
use crate::agent::guard::GuardContext;
use crate::agent::hook::{Client, StopDecision, StopRecord, TicketTurn, WorkflowView, decide_stop};
use crate::store::Workflow;

/// What the guard needs, read in-process (the hook runs before every shell command).
pub fn guard_context(session: &Session, cwd: &Path) -> Result<GuardContext, EngineError> {
    // A ticket workflow has no TDD state: the guard judges it by the configuration alone
    // (the same rules as a workflow not started), rather than refusing every call.
    let (snapshot, ticket) = match session.store.read_workflow()? {
        Some(Workflow::Ticket(_)) => (None, true),
        tdd => (tdd.and_then(Workflow::into_tdd), false),
    };
    let state = snapshot.as_ref().map(|s| &s.state);
    let config = session.load_config(state)?.config;
    let mut context = guard_context_for(session, state, &config, cwd)?;
    // Only a ticket's role needs its pinned configuration read (the guard runs before every
    // shell command; a TDD workflow pays for the variable alone).
    if ticket {
        context.role = super::ticket::role(session, None)?;
    }
    Ok(context)
}

/// [`guard_context`] for a workflow state and configuration read already.
pub fn guard_context_for(
    session: &Session,
    state: Option<&crate::workflow::State>,
    config: &crate::config::Config,
    cwd: &Path,
) -> Result<GuardContext, EngineError> {
    let judges = super::verify::judges(config);
    Ok(GuardContext {
        root: session.store.workdir().to_path_buf(),
        cwd: cwd.to_path_buf(),
        git_dir: session.store.common_dir().to_path_buf(),
        hooks_dir: session.store.hooks_dir(),
        main_branch: session.main_branch(state)?,
        head_branch: session.store.head_branch()?,
        gate_commands: config.preflight.iter().map(|g| g.command.clone()).collect(),
        protected_files: crate::config::always_protected()
            .map(str::to_string)
            .chain(judges)
            .collect(),
        protected_globs: config.gates.protected.clone(),
        role: super::ticket::env_role(),
    })
}

/// Where the workflow stands, as the hooks tell the agent.
pub fn workflow_view(session: &Session) -> Result<(WorkflowView, u32), EngineError> {
    // One read tells the kind: nothing added for TDD.
    let snapshot = match session.store.read_workflow()? {
        Some(Workflow::Ticket(snap)) => return ticket_view(session, &snap),
        tdd => tdd.and_then(Workflow::into_tdd),
    };
    let workflow = session.store.workflow().to_string();
    let Some(snap) = snapshot else {
        let config = session.load_config(None)?.config;
        return Ok((
            WorkflowView {
                workflow,
                state: "INITIALIZING".into(),
                ..WorkflowView::default()
            },
            config.agent.max_stop_blocks,
        ));
    };
    let config = session.load_config(Some(&snap.state))?.config;
    let idle = session.idle_holds(&snap.state, &config.master_plan)?;
    let step = snap
        .summary
        .as_ref()
        .and_then(|p| p.current.as_ref())
        .map(|s| {
            format!(
                "{} ({}) of task \"{}\": {}",
                s.id,
                s.kind,
                s.task,
                s.description.lines().next().unwrap_or_default()
            )
        });
    let halt = snap.state.halt();
    Ok((
        WorkflowView {
            workflow,
            state: snap.state.status().to_string(),
            pr_title: snap.summary.as_ref().map(|p| p.title.clone()),
            branch: snap.state.branch().map(str::to_string),
            step,
            pending: snap.state.pending().as_ref().map(|p| p.kind().to_string()),
            waits_for_human: snap.state.waits_for_human(),
            halt_message: halt.map(|h| h.message),
            idle,
            tip: Some(snap.tip.to_string()),
            ticket: None,
            mcp: false,
        },
        config.agent.max_stop_blocks,
    ))
}

/// Where a ticket stands, for the hooks, and the role this session plays in it
/// (`GIT_ORCHESTRATE_ROLE`, else `[agent] role`).
fn ticket_view(
    session: &Session,
    snap: &crate::store::TicketSnapshot,
) -> Result<(WorkflowView, u32), EngineError> {
    let role = super::ticket::role(session, None)?;
    let config = session.load_config(None)?.config;
    let ticket = &snap.ticket;
    Ok((
        WorkflowView {
            workflow: session.store.workflow().to_string(),
            state: ticket.state.as_str().to_string(),
            pr_title: Some(ticket.title.clone()),
            branch: Some(ticket.branch.clone()),
            step: ticket.current.clone(),
            pending: None,
            waits_for_human: ticket.state == crate::workflow::ticket::TicketState::Halted,
            halt_message: ticket.halt.clone(),
            idle: ticket.state == crate::workflow::ticket::TicketState::TicketDone,
            tip: Some(snap.tip.to_string()),
            ticket: Some(TicketTurn {
                state: ticket.state,
                role,
                next: crate::workflow::ticket::legal_next(ticket, role),
            }),
            mcp: false,
        },
        config.agent.max_stop_blocks,
    ))
}

/// Whether `client`'s sessions here have our MCP tools: its project settings register our
/// server (`init --agent` writes it beside the hooks, and a client that loads the hooks
/// loads the server from the same settings). The hooks then name the tools, not commands.
pub fn serves_mcp(session: &Session, client: Client) -> bool {
    use crate::agent::setup::{self, Gap, Kind};
    let root = session.store.workdir();
    setup::files(client)
        .into_iter()
        .filter(|file| {
            matches!(
                file.kind,
                Kind::ClaudeMcp | Kind::CodexConfig | Kind::GeminiSettings
            )
        })
        .any(|file| {
            crate::agent::guard::read_capped(&root.join(file.path), 1 << 20).is_ok_and(|text| {
                !setup::gaps(file.kind, Some(&text))
                    .iter()
                    .any(|g| matches!(g, Gap::Server | Gap::Missing | Gap::Unreadable(_)))
            })
        })
}

/// What the session-start hook gives the agent: on a ticket workflow the briefing of the
/// role this session plays, else the workflow's compact briefing; each naming the MCP
/// tools in a session that has them.
pub fn session_context(session: &Session, client: Client) -> Result<String, EngineError> {
    let mcp = serves_mcp(session, client);
    match workflow_view(session) {
        Ok((mut view, _)) if view.ticket.is_none() => {
            view.mcp = mcp;
            Ok(view.compact_briefing())
        }
        Ok(_) => {
            let role = super::ticket::role(session, None)?;
            let (_, briefing) = super::ticket::briefing(session, role)?;
            Ok(if mcp {
                crate::agent::mcp_text::for_mcp(&briefing)
            } else {
                briefing
            })
        }
        Err(e) => Err(e),
    }
}

/// The Stop hook: decides by the workflow and this agent session's record of blocked stops,
/// and keeps the new record (best effort: a record that cannot be written only weakens the
/// loop guard, and the answer stands).
pub fn stop(
    session: &Session,
    client: Client,
    agent_session: &str,
) -> Result<StopDecision, EngineError> {
    let (mut view, max_blocks) = workflow_view(session)?;
    view.mcp = serves_mcp(session, client);
    let path = session.store.stop_blocks_file(agent_session);
    let record: StopRecord = crate::input::read_file(&path, crate::input::CAP)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    let (decision, next) = decide_stop(&view, &record, max_blocks);
    if next != record {
        let _ = write_record(&path, &next);
    }
    Ok(decision)
}

fn write_record(path: &Path, record: &StopRecord) -> Result<(), EngineError> {
    let dir = path
        .parent()
        .ok_or_else(|| EngineError::Internal("the stop record has no directory".into()))?;
    std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    let bytes = serde_json::to_vec(record).map_err(|e| EngineError::Internal(e.to_string()))?;
    // Whole or not at all: a torn record would read as none, which is safe, but a rename is
    // as cheap. The temporary name is this process's, so two stops of one session at once
    // each rename a whole record (the last one stands).
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io_error(format!("write {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io_error(format!("rename {}", tmp.display())))
}

/// The token of `run`'s turn ([`record_run_start`], [`record_server_start`]).
pub use crate::agent::run::RUN_PROOF_VAR;

/// The session-start hook under `run`: records that the client loaded our settings in this
/// turn (the token `run` gave it), with the client's session. Best effort: a record that
/// cannot be written makes `run` stop, the safe side.
pub fn record_run_start(session: &Session, token: &str, client: &str, agent_session: &str) {
    let path = session.store.run_proof_file(token);
    let record = serde_json::json!({ "client": client, "session": agent_session });
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = std::fs::write(&path, record.to_string());
    }
}

/// Whether the session-start hook of `client` fired with `token`; the record is removed
/// (one turn, one token). A record of another client (one the agent started itself, say)
/// does not count.
pub fn take_run_start(session: &Session, token: &str, client: &str) -> bool {
    let path = session.store.run_proof_file(token);
    let record: Option<serde_json::Value> = crate::agent::guard::read_capped(&path, 64 * 1024)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let _ = std::fs::remove_file(&path);
    record.is_some_and(|r| r["client"] == client)
}

/// Where the MCP server started under `run` leaves its answer to the turn's token.
fn server_proof_file(session: &Session, token: &str) -> std::path::PathBuf {
    session.store.run_proof_file(&format!("{token}.mcp"))
}

/// Our MCP server, started by a client under `run`: records that it started with the turn's
/// token (it reached the server only if the client passed it on: Codex passes only the
/// variables `env_vars` names). Best effort, as [`record_run_start`].
pub fn record_server_start(session: &Session, token: &str) {
    let path = server_proof_file(session, token);
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let _ = std::fs::write(&path, "mcp");
    }
}

/// Whether our MCP server started with `token`; the record is removed (one turn, one token).
pub fn take_server_start(session: &Session, token: &str) -> bool {
    let path = server_proof_file(session, token);
    let started = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
    let _ = std::fs::remove_file(&path);
    started
}
