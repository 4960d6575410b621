//! `agent-hook`: gathers what the agent clients' hooks judge by (where the workflow stands,
//! and on a ticket workflow the role this session plays; the guard's context is
//! `guard_context.rs`'s) and keeps the Stop hook's count of blocked stops. Read-only on the
//! workflow: a hook never moves it.

use std::path::Path;

use super::{EngineError, Session, io_error};
use crate::agent::hook::{Client, StopDecision, StopRecord, TicketTurn, WorkflowView, decide_stop};
use crate::store::Workflow;

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

/// The most bytes of a transcript one stop reads: what is past it is read at the next stop.
pub const TRANSCRIPT_READ_CAP: u64 = 32 << 20;

/// The longest transcript line read: a longer one is skipped whole, never cut and guessed.
const TRANSCRIPT_LINE_CAP: usize = 4 << 20;

/// How far a session's transcript has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct TranscriptMark {
    path: String,
    offset: u64,
    last_message: Option<String>,
}

/// How long the last stop of a session waits for the client to write the message it names:
/// Claude Code appends to its transcript behind the hook (seen with 2.1.330: the last message
/// was missing at its Stop hook in 1 of 4 sessions), and no later stop would read it.
const LAST_MESSAGE_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// An agent run by hand (not under `run`): at its Stop hook, the tokens its client's session
/// file (Claude Code's transcript, Codex's rollout, Gemini CLI's chat) says the model used
/// since the last stop are recorded as a turn in `refs/orchestrator/runs/<workflow>`, in the
/// record `run` writes, so the ledger counts them (docs/board.md, "The ledger"). Only the new complete lines are read, at most
/// [`TRANSCRIPT_READ_CAP`] bytes a stop; a file that is not a regular one is not read.
/// `last_message` is the text of the message the hook says ended the session (a stop that lets
/// the agent go): until the transcript holds it, it is read again, for at most
/// [`LAST_MESSAGE_WAIT`]. Returns whether a turn was recorded: none when no new assistant
/// message was found.
pub fn record_transcript_usage(
    session: &Session,
    client: Client,
    agent_session: &str,
    transcript: &Path,
    last_message: Option<&str>,
) -> Result<bool, EngineError> {
    let mark_path = session.store.transcript_mark_file(agent_session);
    let shown = transcript.display().to_string();
    let mut mark: TranscriptMark = crate::input::read_file(&mark_path, crate::input::CAP)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .filter(|m: &TranscriptMark| m.path == shown)
        .unwrap_or_else(|| TranscriptMark {
            path: shown.clone(),
            ..TranscriptMark::default()
        });
    let deadline = std::time::Instant::now() + LAST_MESSAGE_WAIT;
    let (read, found) = loop {
        let (read, lines) = read_transcript(transcript, &shown, &mut mark)?;
        let found = crate::agent::usage::transcript(
            client,
            lines.iter().map(Vec::as_slice),
            mark.last_message.as_deref(),
        );
        let written = match last_message {
            None => true,
            Some(text) => found
                .last_text
                .as_deref()
                .is_some_and(|t| ends_the_turn(t, text)),
        };
        if written || std::time::Instant::now() >= deadline {
            break (read, found);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if read == 0 && found.messages == 0 {
        return Ok(false);
    }
    let next = TranscriptMark {
        path: shown,
        offset: mark.offset.saturating_add(read),
        last_message: found.last_message.clone(),
    };
    let mut recorded = false;
    if found.messages > 0 {
        let tip = session
            .store
            .ref_tip(&crate::store::workflow_ref(session.store.workflow()))?;
        let turn = serde_json::json!({
            "session": "by-hand",
            "session_id": agent_session,
            "client": crate::agent::run::program(client),
            "messages": found.messages,
            // Null when no message carried a usage: not reported, never 0.
            "usage": found.usage,
            "tip_after": tip.map(|t| t.to_string()),
        });
        session.store.append_run_record(
            &[("turn.json", turn.to_string().as_bytes())],
            &format!(
                "by hand: {} message(s) of session {}",
                found.messages,
                crate::workflow::fence::visible(agent_session)
            ),
        )?;
        recorded = true;
    }
    if let Some(dir) = mark_path.parent() {
        std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    }
    let bytes = serde_json::to_vec(&next).map_err(|e| EngineError::Internal(e.to_string()))?;
    let tmp = mark_path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io_error(format!("write {}", tmp.display())))?;
    std::fs::rename(&tmp, &mark_path).map_err(io_error(format!("rename {}", tmp.display())))?;
    Ok(recorded)
}

/// The complete new lines of `transcript` past `mark` (reset when the file is shorter than
/// what was read: another file now), and how many bytes they take.
fn read_transcript(
    transcript: &Path,
    shown: &str,
    mark: &mut TranscriptMark,
) -> Result<(u64, Vec<Vec<u8>>), EngineError> {
    use std::io::{BufRead, Read, Seek};
    // A FIFO or a device would block or never end: only a regular file is read.
    let meta = std::fs::metadata(transcript).map_err(io_error(format!("read {shown}")))?;
    if !meta.is_file() {
        return Err(EngineError::BadInput {
            message: format!("the transcript {shown} is not a regular file"),
            hint: "the agent client names its transcript file in transcript_path".into(),
        });
    }
    if meta.len() < mark.offset {
        *mark = TranscriptMark {
            path: shown.to_string(),
            ..TranscriptMark::default()
        };
    }
    let mut file = std::fs::File::open(transcript).map_err(io_error(format!("read {shown}")))?;
    file.seek(std::io::SeekFrom::Start(mark.offset))
        .map_err(io_error(format!("read {shown}")))?;
    let mut reader = std::io::BufReader::new(file.take(TRANSCRIPT_READ_CAP));
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut read: u64 = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(io_error(format!("read {shown}")))?;
        if n > 0 && line.last() != Some(&b'\n') && read == 0 && n as u64 >= TRANSCRIPT_READ_CAP {
            // One line longer than a whole read: skipped, its rest unreadable at the next.
            read = n as u64;
            break;
        }
        // The end, or a line still being written: it is read whole at the next stop.
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        read = read.saturating_add(n as u64);
        if line.len() <= TRANSCRIPT_LINE_CAP {
            lines.push(std::mem::take(&mut line));
        }
    }
    Ok((read, lines))
}

/// Whether `last`, the newest message's text in the session file, is how `said`, the text
/// the hook input says ended the turn, ends. Compared without white space: the hook's text
/// joins the message's blocks, and Gemini CLI's `prompt_response` the turn's messages.
fn ends_the_turn(last: &str, said: &str) -> bool {
    let words = |text: &str| text.split_whitespace().collect::<String>();
    let (last, said) = (words(last), words(said));
    last == said || (!last.is_empty() && said.ends_with(&last))
}

fn write_record(path: &Path, record: &StopRecord) -> Result<(), EngineError> {
    let bytes = serde_json::to_vec(record).map_err(|e| EngineError::Internal(e.to_string()))?;
    if crate::store::overwrite(path, &bytes) {
        return Ok(());
    }
    // Only the first record needs its directory made: a stop that finds its record skips
    // the `mkdir`.
    let dir = path
        .parent()
        .ok_or_else(|| EngineError::Internal("the stop record has no directory".into()))?;
    std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    // The first record, or something else in its place: whole or not at all, and whatever
    // was there replaced, not written through. The temporary name is this process's, so two
    // stops of one session at once each rename a whole record (the last one stands).
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

#[cfg(test)]
mod tests {
    use super::ends_the_turn;

    #[test]
    fn the_last_message_ends_the_turn_the_hook_names() {
        assert!(ends_the_turn("All done.", "All done."));
        // Claude Code joins a message's text blocks; Gemini CLI the turn's messages.
        assert!(ends_the_turn("All\ndone.", "All done."));
        assert!(ends_the_turn("All done.", "Let me look. All done."));
        assert!(ends_the_turn("", ""));
        // An older message, or one with nothing to say, is not the one named.
        assert!(!ends_the_turn("Let me look.", "Let me look. All done."));
        assert!(!ends_the_turn("", "All done."));
    }
}

#[cfg(test)]
#[path = "agent_hook_tests.rs"]
mod unit_tests;
