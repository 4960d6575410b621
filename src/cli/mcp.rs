//! `git orchestrate mcp`: a stdio MCP server on the official Rust SDK, exposing the
//! agent tools as the same engine calls the commands make. One process per agent session
//! keeps the repository open; the engine runs on one worker thread, one call at a time, while
//! the protocol thread sends progress and hears cancellations. A `get_task` that only briefs
//! is answered on the protocol thread itself while the engine thread is idle
//! ([`Server::brief_at_once`]). Nothing but the protocol is
//! written to stdout. On a ticket workflow the server plays one role (`--role`), and lists
//! and takes only that role's tools.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Duration;

use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::error::CommandError;
use super::render::{error_json, error_text};
use super::{Exit, Failure};
use crate::agent::mcp_text::for_mcp;
use crate::agent::tools::{
    self, CHECKPOINT, ESCALATE, GET_TASK, REQUEST_SCOPE_REDUCTION, SUBMIT_WORK,
};
use crate::engine::ticket as ticket_engine;
use crate::engine::{self, EngineError, Session, SubmitKind};
use crate::exec::Cancel;
use crate::workflow::ticket::Role;
use crate::workflow::{Decision, Expectation, fence};

/// Serve the agent tools over MCP on stdin/stdout, for one agent session.
///
/// Tools: get_task, submit_work, request_scope_reduction, escalate_for_external_help and
/// checkpoint (`git orchestrate schema` prints them); each returns the text the command
/// prints and its --json object as structuredContent. Results that are errors for the agent
/// (bad input, wrong state, a locked tool, a halt) carry isError with the next legal action.
/// While submit_work runs tests it sends progress notifications; a cancelled call kills the
/// test's process group and records nothing. Read-only resources: orchestrate://status,
/// orchestrate://plan, orchestrate://output.log. Register it with `git orchestrate init
/// --agent claude|codex|gemini`.
///
/// On a ticket workflow (docs/tickets.md) the server plays one role, fixed when it starts:
/// --role, else GIT_ORCHESTRATE_ROLE, else `[agent] role`; with none of them it does not
/// start. The manager's server lists get_task (its briefing), assign_to_developer,
/// update_subtask and complete_ticket; the developer's lists get_task and
/// subtask_complete. Every call is made in the server's role, and a call out of turn
/// carries isError with the next legal action. Its resource is orchestrate://ticket.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve the ticket tools of this role only (default on a ticket workflow:
    /// GIT_ORCHESTRATE_ROLE, then `[agent] role`).
    #[arg(long, value_enum)]
    pub role: Option<Role>,
}

/// How often a running call reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

const STATUS_URI: &str = "orchestrate://status";
const PLAN_URI: &str = "orchestrate://plan";
const OUTPUT_URI: &str = "orchestrate://output.log";
const TICKET_URI: &str = "orchestrate://ticket";

/// What the server serves: the TDD workflow's tools, or one role's ticket tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Serving {
    Tdd,
    Ticket(Role),
}

impl Serving {
    fn tools(self) -> Vec<tools::Tool> {
        match self {
            Serving::Tdd => tools::tools(),
            Serving::Ticket(role) => tools::ticket_tools(role),
        }
    }
}

/// The role is fixed when the server starts, so no call can choose another: `--role`; on a
/// ticket workflow without it, GIT_ORCHESTRATE_ROLE or `[agent] role`, or no start at all
/// (a server with every role's tools would let one agent play both). Anything else, and a
/// directory where no workflow can be read yet, is served as a TDD workflow, as before.
fn serving(
    dir: &std::path::Path,
    workflow: Option<&str>,
    flag: Option<Role>,
) -> Result<Serving, Failure> {
    if let Some(role) = flag {
        // The session's variable is its identity: a server started with the other role's
        // flag (a client configured by the agent itself) serves nothing.
        if let Some(env) = ticket_engine::env_role()
            && env != role
        {
            return Err(Failure::from(
                CommandError::new(
                    super::ErrorKind::WrongState,
                    format!(
                        "this session is the {} (GIT_ORCHESTRATE_ROLE); `mcp --role {}` does not \
                         change that",
                        env.as_str(),
                        role.as_str()
                    ),
                )
                .hint("Serve the session's own role: `git orchestrate mcp --role` with its role."),
            ));
        }
        return Ok(Serving::Ticket(role));
    }
    let Ok(session) = Session::open_selected(dir, workflow) else {
        return Ok(Serving::Tdd);
    };
    if !matches!(
        ticket_engine::kind(&session),
        Ok(Some(crate::store::WorkflowKind::Ticket))
    ) {
        return Ok(Serving::Tdd);
    }
    match ticket_engine::role(&session, None)? {
        Some(role) => Ok(Serving::Ticket(role)),
        None => Err(Failure::from(
            CommandError::new(
                super::ErrorKind::Usage,
                format!(
                    "workflow \"{}\" is a ticket workflow, and this MCP server has no role",
                    session.store.workflow()
                ),
            )
            .hint(
                "Start it as `git orchestrate mcp --role manager` or `--role developer` (or set \
                 GIT_ORCHESTRATE_ROLE, or `[agent] role` in .orchestrate.toml): each role's \
                 server has only that role's tools.",
            ),
        )),
    }
}

pub fn run(workflow: Option<&str>, args: &McpArgs) -> Result<Exit, Failure> {
    let dir = std::env::current_dir().map_err(|e| {
        Failure::from(CommandError::new(
            super::ErrorKind::Io,
            format!("cannot read the current directory: {e}"),
        ))
    })?;
    let serving = serving(&dir, workflow, args.role)?;
    // Under `git orchestrate run`: the server answers the turn's token once it knows what it
    // serves, so the run knows the agent had its tools.
    if let Some(token) = std::env::var_os(crate::engine::agent_hook::RUN_PROOF_VAR)
        && let Ok(session) = Session::open_selected(&dir, workflow)
    {
        crate::engine::agent_hook::record_server_start(&session, &token.to_string_lossy());
    }
    let (jobs, inbox) = mpsc::channel();
    let shared = Arc::new(Shared {
        dir,
        workflow: workflow.map(str::to_string),
        pending: AtomicUsize::new(0),
        serves: OnceLock::new(),
    });
    let engine = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("engine".into())
        .spawn(move || worker(&engine, serving, inbox))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let server = Server {
            jobs,
            shared,
            serving,
            names: serving.tools().into_iter().map(|t| t.name).collect(),
        };
        let (transport, wire) = super::mcp_wire::pipes();
        match server.serve(transport).await {
            Ok(service) => {
                let _ = service.waiting().await;
                // Every answer written before the process ends.
                wire.finish().await;
                Ok(Exit::Success)
            }
            Err(e) => Err(Failure::from(CommandError::new(
                super::ErrorKind::Io,
                format!("the MCP session could not start: {e}"),
            ))),
        }
    })
}

/// Work for the engine thread.
enum Job {
    Call {
        name: String,
        args: Map<String, Value>,
        cancel: Cancel,
        reply: oneshot::Sender<CallToolResult>,
    },
    Read {
        uri: String,
        reply: oneshot::Sender<Result<String, String>>,
    },
}

/// What the protocol thread and the engine thread both know.
struct Shared {
    dir: PathBuf,
    /// The workflow asked for (`--workflow`), as each session is opened with it.
    workflow: Option<String>,
    /// Jobs handed to the engine thread and not answered yet.
    pending: AtomicUsize,
    /// The workflow the engine thread's session serves, and the git directory it is in, once
    /// it has opened one.
    serves: OnceLock<(String, PathBuf)>,
}

thread_local! {
    /// The protocol thread's own session, for the calls it answers at once: a session holds
    /// gix's repository, which stays on the thread that opened it.
    static AT_ONCE: RefCell<Option<Session>> = const { RefCell::new(None) };
}

#[derive(Clone)]
struct Server {
    jobs: mpsc::Sender<Job>,
    shared: Arc<Shared>,
    serving: Serving,
    /// The served tools' names, made once: each call is checked against them, and making
    /// the tools (their schemas) cost more than a whole `get_task` (callgrind, 750,000
    /// instructions a call).
    names: std::sync::Arc<[&'static str]>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("git-orchestrate", env!("CARGO_PKG_VERSION")))
        .with_instructions(match self.serving {
            Serving::Tdd => {
                "git-orchestrate drives your work through a test-driven workflow. Call get_task for your goal, \
                 report every result through submit_work (never run the tests yourself to judge your work), \
                 and make checkpoint commits with checkpoint. Stop when get_task says nothing is left to do \
                 or a human is needed."
            }
            Serving::Ticket(Role::Manager) => {
                "git-orchestrate runs a ticket with a manager and a developer; you are the manager. Call \
                 get_task for your briefing; assign each subtask with assign_to_developer, verify the \
                 developer's report against what git-orchestrate observed with update_subtask, and finish \
                 with complete_ticket once every subtask is complete. Stop when it is the developer's turn."
            }
            Serving::Ticket(Role::Developer) => {
                "git-orchestrate runs a ticket with a manager and a developer; you are the developer. Call \
                 get_task for your assignment, do it on the ticket's branch, commit, and report with \
                 subtask_complete (git-orchestrate re-runs the gates and tests at your commit). Stop when \
                 it is the manager's turn."
            }
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(mcp_tools(self.serving)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.names.contains(&name.as_str()) {
            return Err(McpError::invalid_params(
                format!("there is no tool {name:?}; the tools are listed by tools/list"),
                None,
            ));
        }
        if let Some(result) = self.brief_at_once(&name, request.arguments.as_ref()) {
            return Ok(CallToolResponse::from(result));
        }
        let cancel = Cancel::new();
        let (reply, mut answer) = oneshot::channel();
        self.hand_over(Job::Call {
            name,
            args: request.arguments.unwrap_or_default(),
            cancel: cancel.clone(),
            reply,
        })?;
        let token = context.meta.get_progress_token();
        let ticker = async {
            let Some(token) = token else {
                return std::future::pending::<()>().await;
            };
            let mut seconds = 0u64;
            loop {
                tokio::time::sleep(PROGRESS_EVERY).await;
                seconds += 1;
                let running = cancel.running();
                let message = if running.is_empty() {
                    format!("working ({seconds} s)")
                } else {
                    format!("running `{}` ({seconds} s)", running.join("`, `"))
                };
                let _ = context
                    .peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), seconds as f64)
                            .with_message(message),
                    )
                    .await;
            }
        };
        tokio::select! {
            result = &mut answer => result
                .map(CallToolResponse::from)
                .map_err(|_| McpError::internal_error("the engine thread stopped", None)),
            _ = context.ct.cancelled() => {
                // Kill what runs, and wait until the engine has given up: nothing is recorded.
                cancel.cancel();
                let _ = answer.await;
                Err(McpError::internal_error("the call was cancelled; nothing was recorded", None))
            }
            _ = ticker => Err(McpError::internal_error("progress stopped", None)),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resource = |uri: &str, name: &str, description: &str, mime: &str| {
            let mut r = Resource::new(uri, name);
            r.description = Some(description.to_string());
            r.mime_type = Some(mime.to_string());
            r
        };
        if let Serving::Ticket(_) = self.serving {
            return Ok(ListResourcesResult::with_all_items(vec![resource(
                TICKET_URI,
                "ticket",
                "The ticket (`git orchestrate ticket show --json`): every subtask, each report beside \
                 what was observed; never changes anything.",
                "application/json",
            )]));
        }
        Ok(ListResourcesResult::with_all_items(vec![
            resource(
                STATUS_URI,
                "status",
                "Where the workflow stands (`git orchestrate status --json`); never changes anything.",
                "application/json",
            ),
            resource(
                PLAN_URI,
                "plan",
                "The active PR plan (`git orchestrate plan show --json`).",
                "application/json",
            ),
            resource(
                OUTPUT_URI,
                "output.log",
                "The full output of the last test or gate run.",
                "text/plain",
            ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.clone();
        let (reply, answer) = oneshot::channel();
        self.hand_over(Job::Read {
            uri: uri.clone(),
            reply,
        })?;
        match answer.await {
            Ok(Ok(text)) => {
                let mime = if uri == OUTPUT_URI {
                    "text/plain"
                } else {
                    "application/json"
                };
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, uri).with_mime_type(mime),
                ])
                .into())
            }
            Ok(Err(message)) => Err(McpError::resource_not_found(message, None)),
            Err(_) => Err(McpError::internal_error("the engine thread stopped", None)),
        }
    }
}

impl Server {
    /// `job` to the engine thread, counted until it is answered.
    fn hand_over(&self, job: Job) -> Result<(), McpError> {
        self.shared.pending.fetch_add(1, Ordering::SeqCst);
        self.jobs.send(job).map_err(|_| {
            self.shared.pending.fetch_sub(1, Ordering::SeqCst);
            McpError::internal_error("the engine thread is gone", None)
        })
    }

    /// A `get_task` that only briefs (`engine::brief_only`), answered here from this thread's
    /// own session: handing it to the engine thread and back cost two thread wake-ups, a
    /// third of a warm call's round trip (docs/architecture.md, "Performance"). Only while the
    /// engine thread is idle, so calls still take effect in the order they came, and only
    /// for the workflow its session serves, in the same repository; `None` hands the call
    /// over as before: a call that acts may run commands, and only the engine thread's can
    /// be cancelled.
    fn brief_at_once(
        &self,
        name: &str,
        args: Option<&Map<String, Value>>,
    ) -> Option<CallToolResult> {
        if self.serving != Serving::Tdd || name != GET_TASK || args.is_some_and(|a| !a.is_empty()) {
            return None;
        }
        if self.shared.pending.load(Ordering::SeqCst) != 0 {
            return None;
        }
        let serves = self.shared.serves.get()?;
        AT_ONCE.with(|cell| {
            let mut slot = cell.try_borrow_mut().ok()?;
            if slot.is_none() {
                *slot = Some(open_session(&self.shared).ok()?);
            }
            let session = slot.as_ref()?;
            // Found and selected when it opened, as the engine's was: `.git` or the setting
            // may have changed between the two.
            if session.store.workflow() != serves.0 || session.store.git_dir() != serves.1 {
                return None;
            }
            session.begin_call();
            let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                engine::brief_only(session)
            }))
            .ok()?
            .ok()??;
            Some(answered(Ok(get_task_answer(&report))))
        })
    }
}

/// A session as the server keeps one: its last workflow and configuration remembered.
fn open_session(shared: &Shared) -> Result<Session, EngineError> {
    let mut session = Session::open_selected(&shared.dir, shared.workflow.as_deref())?;
    session.store.remember_workflows();
    session.remember_config();
    Ok(session)
}

/// `get_task`'s answer: a halt and a branch that could not be created are exits 10 and 4,
/// errors.
fn get_task_answer(report: &engine::GetTaskReport) -> Answer {
    let stopped = report.halted || report.branch_blocked.is_some();
    Answer::new(report.briefing.clone(), report).error_if(stopped)
}

/// The tools as MCP lists them: the schemas `git orchestrate schema [--role]` prints.
fn mcp_tools(serving: Serving) -> Vec<Tool> {
    serving
        .tools()
        .into_iter()
        .map(|t| {
            let schema = match t.parameters {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            let mut tool = Tool::default();
            tool.name = t.name.into();
            tool.description = Some(t.description.into());
            tool.input_schema = std::sync::Arc::new(schema);
            tool
        })
        .collect()
}

/// The engine thread: owns the session, answers one job at a time.
fn worker(shared: &Shared, serving: Serving, inbox: mpsc::Receiver<Job>) {
    let (dir, workflow) = (&shared.dir, &shared.workflow);
    let mut session: Option<Session> = None;
    for job in inbox {
        if session.is_none() {
            session = open_session(shared).ok();
            if let Some(s) = &session {
                let _ = shared.serves.set((
                    s.store.workflow().to_string(),
                    s.store.git_dir().to_path_buf(),
                ));
            }
        }
        match job {
            Job::Call {
                name,
                args,
                cancel,
                reply,
            } => {
                let result = match &session {
                    Some(s) => {
                        s.begin_call();
                        cancel.scope(|| match serving {
                            Serving::Tdd => call(s, &name, &args),
                            Serving::Ticket(role) => call_ticket(s, role, &name, &args),
                        })
                    }
                    None => match Session::open_selected(dir, workflow.as_deref()) {
                        Ok(_) => error_result(&CommandError::new(
                            super::ErrorKind::Internal,
                            "the repository could not be opened".to_string(),
                        )),
                        Err(e) => error_result(&CommandError::from(e)),
                    },
                };
                // Counted off before the answer goes: once the client has it, the next call
                // may be answered at once.
                shared.pending.fetch_sub(1, Ordering::SeqCst);
                let _ = reply.send(result);
            }
            Job::Read { uri, reply } => {
                let result = match &session {
                    Some(s) => {
                        s.begin_call();
                        match serving {
                            Serving::Tdd => read(s, &uri),
                            Serving::Ticket(_) => read_ticket(s, &uri),
                        }
                    }
                    None => Err("not inside a git repository with a working tree".to_string()),
                };
                shared.pending.fetch_sub(1, Ordering::SeqCst);
                let _ = reply.send(result);
            }
        }
    }
}

/// One tool call, with exit codes mapped as docs/agent-guide.md says: 0 and 3 a normal
/// result, 1 a normal result that says FAILURE, 2, 4, 5 and 10 `isError` with the message and
/// the next action.
fn call(session: &Session, name: &str, args: &Map<String, Value>) -> CallToolResult {
    let outcome = match name {
        GET_TASK => no_arguments(args).and_then(|()| {
            let report = engine::get_task(session).map_err(refused)?;
            Ok(get_task_answer(&report))
        }),
        SUBMIT_WORK => submit_kind(args).and_then(|(summary, kind)| {
            let report = engine::submit(session, &summary, &kind).map_err(refused)?;
            let text = super::submit_work::render_for_agent(session, &report);
            Ok(Answer::new(text, &report).output_capped(true))
        }),
        REQUEST_SCOPE_REDUCTION => no_arguments(args).and_then(|()| {
            let report = engine::request_scope_reduction(session).map_err(refused)?;
            Ok(Answer::new(report.briefing.clone(), &report))
        }),
        ESCALATE => text_argument(args, ESCALATE_KEYS[0], true).and_then(|report| {
            let report = report.unwrap_or_default();
            let done = engine::escalate(session, &report).map_err(refused)?;
            let text = format!(
                "HALTED: your report is with a human, and the workflow waits for their answer \
                 (`git orchestrate resume`). Stop working now.\n\n{}",
                done.report
            );
            Ok(Answer::new(text, &done).error_if(true))
        }),
        CHECKPOINT => text_argument(args, CHECKPOINT_KEYS[0], false).and_then(|message| {
            let report = engine::checkpoint(session, message.as_deref()).map_err(refused)?;
            Ok(Answer::new(
                super::checkpoint::render_text(&report, false),
                &report,
            ))
        }),
        _ => Err(bad(
            format!("there is no tool {name:?}"),
            "The tools are listed by tools/list.",
        )),
    };
    answered(outcome)
}

/// One call on a ticket workflow, made in the server's `role` (no argument can name
/// another): the briefing, or the role's tool with its arguments as the input
/// `workflow::ticket` checks. Exit codes map as in [`call`].
fn call_ticket(
    session: &Session,
    role: Role,
    name: &str,
    args: &Map<String, Value>,
) -> CallToolResult {
    let outcome = if name == GET_TASK {
        no_arguments(args).and_then(|()| {
            let task = super::ticket::task(session, Some(role)).map_err(refused)?;
            let mut report = task.report;
            // The tools this agent has, by the names it calls them.
            report["tools"] = json!(
                tools::ticket_tools(role)
                    .iter()
                    .map(|t| t.name)
                    .filter(|n| *n != GET_TASK)
                    .collect::<Vec<_>>()
            );
            Ok(Answer::new(task.briefing, &report)
                .error_if(task.exit != Exit::Success)
                .whole_in_ticket())
        })
    } else {
        match tools::ticket_tool(name).filter(|t| t.role() == role) {
            Some(tool) => {
                ticket_engine::call(session, Some(role), tool, &Value::Object(args.clone()))
                    .map_err(refused)
                    .map(|outcome| {
                        Answer::new(outcome.message.clone(), &outcome)
                            .error_if(outcome.halted)
                            .whole_in_ticket()
                    })
            }
            None => Err(bad(
                format!("there is no tool {name:?} for the {}", role.as_str()),
                "The tools are listed by tools/list.",
            )),
        }
    };
    answered(outcome)
}

/// A call's answer as the client gets it.
fn answered(outcome: Result<Answer, Box<CommandError>>) -> CallToolResult {
    match outcome {
        Ok(answer) => answer.output_capped(false).result(),
        Err(mut err) => {
            // A refused checkpoint carries its gate's output: its end only, as in a result.
            if let Some(output) = err.output.take() {
                err.output =
                    Some(result_tail(&String::from_utf8_lossy(&output), false).into_bytes());
            }
            error_result(&err)
        }
    }
}

/// The lines of a command's output a tool result carries: clients refuse or hide a large
/// result (Claude Code swaps one over its limit for a file the model never opens), so the
/// verdict must not drown in its output. The rest is in `orchestrate://output.log`.
const RESULT_OUTPUT_LINES: usize = 100;
/// The bytes of output a tool result carries, at most.
const RESULT_OUTPUT_BYTES: usize = 16 * 1024;

/// The end of `output` a tool result carries: its last [`RESULT_OUTPUT_LINES`] lines, and of
/// those at most [`RESULT_OUTPUT_BYTES`] bytes, starting on a character.
fn result_tail(output: &str, in_log: bool) -> String {
    let tail = crate::exec::tail_lines(output.as_bytes(), RESULT_OUTPUT_LINES);
    if tail.len() <= RESULT_OUTPUT_BYTES {
        return tail;
    }
    let mut at = tail.len() - RESULT_OUTPUT_BYTES;
    while !tail.is_char_boundary(at) {
        at += 1;
    }
    let rest = if in_log {
        format!(": all of it is in {OUTPUT_URI}")
    } else {
        String::new()
    };
    format!("[… earlier output cut{rest} …]\n{}", &tail[at..])
}

/// The bytes a result's text, and its structured content as JSON, take at most: Claude Code
/// swaps a larger result for a file and shows the model its first 2 KB (docs/agent-guide.md),
/// so a briefing's quoted output is cut to fit, and the whole stays in `output.log`.
const RESULT_BYTES: usize = 15 * 1024;

/// The length of `value` written as compact JSON, as serde_json writes it, counted without
/// writing it: every warm call measures its result, which is rarely near the limit.
fn json_len(value: &Value) -> usize {
    // A quote, a backslash and a control character take one byte more (`\n`), a control
    // character with no short escape five more (`\u001b`). Counted in byte-wide sums over
    // runs of 255, which the compiler makes sixteen bytes at a time.
    fn count(bytes: &[u8], hit: impl Fn(u8) -> bool + Copy) -> usize {
        bytes
            .chunks(255)
            .map(|run| usize::from(run.iter().fold(0u8, |n, &b| n + u8::from(hit(b)))))
            .sum()
    }
    fn string(s: &str) -> usize {
        let bytes = s.as_bytes();
        let escaped = count(bytes, |b| b < 0x20 || b == b'"' || b == b'\\');
        let long = count(bytes, |b| {
            b < 0x20 && !matches!(b, 0x08 | 0x0c | b'\n' | b'\r' | b'\t')
        });
        2 + bytes.len() + escaped + 4 * long
    }
    match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => string(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(json_len).sum::<usize>()
        }
        Value::Object(fields) => {
            2 + fields.len().saturating_sub(1)
                + fields
                    .iter()
                    .map(|(k, v)| string(k) + 1 + json_len(v))
                    .sum::<usize>()
        }
    }
}

/// `structured` cut to [`RESULT_BYTES`] as JSON: the quoted output of its briefing first,
/// then the start of its longest text (`output`, a gate's output in a ticket), each cut said
/// in it; the instructions are never cut.
fn fit(structured: &mut Value, whole: &str) {
    for _ in 0..8 {
        let size = json_len(structured);
        if size <= RESULT_BYTES {
            return;
        }
        // Cutting a byte of text saves at least a byte of its JSON.
        let excess = size - RESULT_BYTES;
        if let Some(Value::String(briefing)) = structured.get_mut("briefing") {
            // Down to half the result at most: the rest of the room is the other texts'.
            let target = briefing
                .len()
                .saturating_sub(excess)
                .max(briefing.len().min(RESULT_BYTES / 2));
            let cut = fence::shortened(briefing, target, whole);
            if cut.len() < briefing.len() {
                *briefing = cut;
                continue;
            }
        }
        let mut longest = (0, String::new());
        longest_text(structured, String::new(), &mut longest);
        // What is left is the result's own words, not a quoted output.
        if longest.0 < 1024 {
            return;
        }
        let Some(Value::String(text)) = structured.pointer_mut(&longest.1) else {
            return;
        };
        let note = format!("[… earlier output cut: all of it is in {whole} …]\n");
        let mut at = (excess + note.len()).min(text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        *text = format!("{note}{}", &text[at..]);
        if longest.1 == "/output"
            && let Value::Object(fields) = structured
        {
            fields.insert("output_truncated".into(), json!(true));
        }
    }
}

/// The length and JSON pointer of the longest string in `value` (other than the briefing).
fn longest_text(value: &Value, at: String, best: &mut (usize, String)) {
    match value {
        Value::String(text) if text.len() > best.0 && at != "/briefing" => {
            *best = (text.len(), at);
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                longest_text(item, format!("{at}/{i}"), best);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                let key = key.replace('~', "~0").replace('/', "~1");
                longest_text(item, format!("{at}/{key}"), best);
            }
        }
        _ => {}
    }
}

/// Bad input (exit 2): the message and how to give it right.
fn bad(message: impl Into<String>, hint: impl Into<String>) -> Box<CommandError> {
    Box::new(CommandError::invalid_input(message, hint))
}

fn refused(e: EngineError) -> Box<CommandError> {
    Box::new(CommandError::from(e))
}

/// A tool's answer: the text the command prints, and its `--json` object.
struct Answer {
    text: String,
    structured: Value,
    is_error: bool,
    /// The resource that holds all of the output a result cuts.
    whole: &'static str,
}

impl Answer {
    fn new(text: String, report: &impl serde::Serialize) -> Answer {
        let mut structured = Map::new();
        structured.insert("schema".into(), json!(super::render::JSON_SCHEMA));
        if let Ok(Value::Object(fields)) = serde_json::to_value(report) {
            structured.extend(fields);
        }
        Answer {
            text,
            structured: Value::Object(structured),
            is_error: false,
            whole: OUTPUT_URI,
        }
    }

    /// A ticket's gate output is kept whole in the ticket itself.
    fn whole_in_ticket(mut self) -> Answer {
        self.whole = TICKET_URI;
        self
    }

    /// The structured `output` cut to its end ([`RESULT_OUTPUT_LINES`] lines, at most
    /// `exec::MAX_TAIL_BYTES`), saying so: its whole size, and, where `output.log` holds it
    /// (`in_log`), the resource to read it from.
    fn output_capped(mut self, in_log: bool) -> Answer {
        let Value::Object(fields) = &mut self.structured else {
            return self;
        };
        let Some(Value::String(output)) = fields.get("output") else {
            return self;
        };
        if output.len() <= RESULT_OUTPUT_BYTES && output.lines().count() <= RESULT_OUTPUT_LINES {
            return self;
        }
        let tail = result_tail(output, in_log);
        let bytes = output.len();
        fields.insert("output".into(), json!(tail));
        fields.insert("output_truncated".into(), json!(true));
        fields.insert("output_bytes".into(), json!(bytes));
        if in_log {
            fields.insert("output_log".into(), json!(OUTPUT_URI));
        }
        self
    }

    fn error_if(mut self, halted: bool) -> Answer {
        self.is_error = halted;
        self
    }

    fn result(mut self) -> CallToolResult {
        let text = fence::shortened(&for_mcp(&self.text), RESULT_BYTES, self.whole);
        // What to do next comes first and the quoted output last, as in the briefings: a
        // client that shows the model only the start of a result (Claude Code shows the
        // structured result; docs/agent-guide.md) keeps the instructions.
        if let Value::Object(fields) = &mut self.structured {
            next_first(fields);
            if let Some(output) = fields.shift_remove("output") {
                fields.insert("output".into(), output);
            }
        }
        in_mcp_dialect(&mut self.structured);
        fit(&mut self.structured, self.whole);
        let mut result = if self.is_error {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        result.structured_content = Some(self.structured);
        result
    }
}

/// `fields` with its `next` right after `schema` and `status`, ahead of the summary and the
/// test (which quote the test's command) and anything else.
fn next_first(fields: &mut Map<String, Value>) {
    let Some(next) = fields.shift_remove("next") else {
        return;
    };
    let rest = std::mem::take(fields);
    let mut rest = rest.into_iter().peekable();
    while let Some((key, value)) = rest.next_if(|(k, _)| k == "schema" || k == "status") {
        fields.insert(key, value);
    }
    fields.insert("next".into(), next);
    fields.extend(rest);
}

/// An error the agent reads: `isError`, except a failed verification (exit 1), which is a
/// normal result whose status says FAILURE.
fn error_result(err: &CommandError) -> CallToolResult {
    let mut structured = Map::new();
    structured.insert("schema".into(), json!(super::render::JSON_SCHEMA));
    if err.exit() == Exit::VerificationFailed {
        structured.insert("status".into(), json!("FAILURE"));
    }
    if let Ok(Value::Object(fields)) = serde_json::to_value(error_json(err)) {
        structured.extend(fields);
    }
    let text = for_mcp(&error_text(err, false));
    let mut structured = Value::Object(structured);
    in_mcp_dialect(&mut structured);
    let mut result = if err.exit() == Exit::VerificationFailed {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// What an agent reads in a result (the briefing, the next action, an error's message and
/// hint, notes and warnings) names the tools, not command lines; command output and what
/// the agent wrote stay as they were.
fn in_mcp_dialect(value: &mut Value) {
    const READ: &[&str] = &["briefing", "next", "hint", "message", "notes", "warnings"];
    let Value::Object(fields) = value else {
        return;
    };
    for (key, field) in fields.iter_mut() {
        match field {
            Value::String(text) if READ.contains(&key.as_str()) => *text = for_mcp(text),
            Value::Array(items) if READ.contains(&key.as_str()) => {
                for item in items {
                    if let Value::String(text) = item {
                        *text = for_mcp(text);
                    }
                }
            }
            Value::Object(_) if key == "error" => in_mcp_dialect(field),
            _ => {}
        }
    }
}

/// The arguments each tool takes, in the order the hint lists them: the schemas derived in
/// `agent/tools.rs` name exactly these (a test holds them together).
const SUBMIT_WORK_KEYS: &[&str] = &[
    "summary",
    "test_command",
    "expectation",
    "analysis_decision",
    "plan",
    "no_pr_left",
    "squash",
    "mark_done",
    "contradiction",
];
const ESCALATE_KEYS: &[&str] = &["markdown_report"];
const CHECKPOINT_KEYS: &[&str] = &["message"];

fn unknown_keys(args: &Map<String, Value>, known: &[&str]) -> Result<(), Box<CommandError>> {
    let unknown: Vec<&str> = args
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(bad(
        format!("unknown argument(s): {}", unknown.join(", ")),
        format!(
            "This tool takes {}.",
            if known.is_empty() {
                "no arguments".to_string()
            } else {
                known.join(", ")
            }
        ),
    ))
}

fn no_arguments(args: &Map<String, Value>) -> Result<(), Box<CommandError>> {
    unknown_keys(args, &[])
}

/// The one text argument `key` (required or not), and nothing else.
fn text_argument(
    args: &Map<String, Value>,
    key: &str,
    required: bool,
) -> Result<Option<String>, Box<CommandError>> {
    unknown_keys(args, &[key])?;
    match args.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        None | Some(Value::Null) if !required => Ok(None),
        _ => Err(bad(
            format!("`{key}` must be a non-empty string"),
            format!("Pass `{key}` as text."),
        )),
    }
}

/// How a JSON object or array begins: a `plan` given as text that begins otherwise and does
/// not parse is a file's name, not a plan.
const JSON_OPENERS: [char; 2] = ['{', '['];

/// submit_work's arguments as the engine takes them, with the checks `submit-work` makes.
fn submit_kind(args: &Map<String, Value>) -> Result<(String, SubmitKind), Box<CommandError>> {
    unknown_keys(args, SUBMIT_WORK_KEYS)?;
    let summary = optional_text(args, "summary")?.unwrap_or_default();
    if summary.trim().is_empty() {
        return Err(bad(
            "`summary` must not be empty",
            "Say in one line what you did, e.g. \"add() sums two numbers\".",
        ));
    }
    let no_pr_left = flag(
        args,
        "no_pr_left",
        "Pass \"no_pr_left\": true when every PR of the master plan is done.",
    )?;
    let squash = flag(
        args,
        "squash",
        "Pass \"squash\": true to have the branch squashed at AWAITING_FINALIZATION.",
    )?;
    let mark_done = flag(
        args,
        "mark_done",
        "Pass \"mark_done\": true to have the master plan marked at FINALIZE_COMPLETE.",
    )?;
    let test_command = optional_text(args, "test_command")?;
    let expectation = optional_text(args, "expectation")?;
    let decision = optional_text(args, "analysis_decision")?;
    let plan = args.get("plan").filter(|v| !v.is_null());
    let contradiction = optional_text(args, "contradiction")?;
    one_kind(&[
        ("contradiction", contradiction.is_some()),
        ("test_command", test_command.is_some()),
        ("analysis_decision", decision.is_some()),
        ("plan", plan.is_some()),
        ("no_pr_left", no_pr_left),
        ("squash", squash),
        ("mark_done", mark_done),
    ])?;
    if expectation.is_some() && test_command.is_none() {
        return Err(bad(
            "`expectation` needs a `test_command`",
            "Pass the test command with its expectation.",
        ));
    }
    let kind = if let Some(account) = contradiction {
        SubmitKind::Contradiction(account)
    } else if no_pr_left {
        SubmitKind::NoPrLeft
    } else if squash {
        SubmitKind::Squash
    } else if mark_done {
        SubmitKind::MarkDone
    } else if let Some(plan) = plan {
        // A path where the plan belongs (`"plan": "plan.json"`): the server reads no file.
        if let Value::String(text) = plan
            && serde_json::from_str::<Value>(text).is_err()
            && !text.trim_start().starts_with(JSON_OPENERS)
        {
            return Err(bad(
                format!("`plan` is the text {text:?}, not a plan: it is not JSON"),
                "Pass the plan object, not a file: `plan` takes the plan itself, as a JSON \
                 object (a file's name or path is not read).",
            ));
        }
        SubmitKind::Plan(match plan {
            // A plan given as text is taken as the JSON it holds.
            Value::String(s) => s.clone().into_bytes(),
            other => serde_json::to_vec(other).unwrap_or_default(),
        })
    } else if let Some(command) = test_command {
        test_kind(command, expectation.as_deref())?
    } else if let Some(decision) = decision {
        analysis_kind(&decision)?
    } else {
        SubmitKind::Confirm
    };
    Ok((summary, kind))
}

/// An optional string argument: absent or null is `None`.
fn optional_text(
    args: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, Box<CommandError>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(
            format!("`{key}` must be a string"),
            format!("Pass `{key}` as text."),
        )),
    }
}

/// A boolean argument: absent or null is false.
fn flag(args: &Map<String, Value>, key: &str, hint: &str) -> Result<bool, Box<CommandError>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(format!("`{key}` must be true or false"), hint)),
    }
}

/// At most one kind of work per submission: `given` names each kind and whether it was given.
fn one_kind(given: &[(&str, bool)]) -> Result<(), Box<CommandError>> {
    let given: Vec<&str> = given
        .iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| *name)
        .collect();
    if given.len() > 1 {
        return Err(bad(
            format!("{} cannot be given together", given.join(" and ")),
            "Submit one kind of work at a time: a plan, a test run, an analysis, or no_pr_left.",
        ));
    }
    Ok(())
}

/// A test run: its command, and the expectation PASS or FAIL if one was given.
fn test_kind(command: String, expectation: Option<&str>) -> Result<SubmitKind, Box<CommandError>> {
    if command.trim().is_empty() {
        return Err(bad(
            "`test_command` must not be empty",
            "Pass the command that runs this step's test.",
        ));
    }
    let expectation = match expectation.map(str::to_ascii_uppercase).as_deref() {
        None => None,
        Some("PASS") => Some(Expectation::Pass),
        Some("FAIL") => Some(Expectation::Fail),
        Some(other) => {
            return Err(bad(
                format!("`expectation` must be PASS or FAIL, not {other:?}"),
                "FAIL for a RED step, PASS for GREEN and REFACTOR.",
            ));
        }
    };
    Ok(SubmitKind::Test {
        command,
        expectation,
    })
}

/// The analysis of a RED run: SUCCESS or FAILURE, in any case.
fn analysis_kind(decision: &str) -> Result<SubmitKind, Box<CommandError>> {
    Ok(SubmitKind::Analysis(
        match decision.to_ascii_uppercase().as_str() {
            "SUCCESS" => Decision::Success,
            "FAILURE" => Decision::Failure,
            other => {
                return Err(bad(
                    format!("`analysis_decision` must be SUCCESS or FAILURE, not {other:?}"),
                    "SUCCESS if the RED test failed for the intended reason, FAILURE otherwise.",
                ));
            }
        },
    ))
}

/// The ticket resource's text.
fn read_ticket(session: &Session, uri: &str) -> Result<String, String> {
    if uri != TICKET_URI {
        return Err(format!("there is no resource {uri:?}; it is {TICKET_URI}"));
    }
    let snap = ticket_engine::read(session).map_err(|e| CommandError::from(e).message)?;
    let value = json!({
        "schema": super::render::JSON_SCHEMA,
        "workflow": session.store.workflow(),
        "tip": snap.tip.to_string(),
        "state": snap.ticket.state,
        "ticket": snap.ticket,
    });
    serde_json::to_string_pretty(&value).map_err(|e| e.to_string())
}

/// A read-only resource's text.
fn read(session: &Session, uri: &str) -> Result<String, String> {
    let as_json = |value: Result<Value, EngineError>| -> Result<String, String> {
        let value = value.map_err(|e| CommandError::from(e).message)?;
        let mut object = Map::new();
        object.insert("schema".into(), json!(super::render::JSON_SCHEMA));
        if let Value::Object(fields) = value {
            object.extend(fields);
        }
        serde_json::to_string_pretty(&Value::Object(object)).map_err(|e| e.to_string())
    };
    let to_value =
        |v: Result<Value, serde_json::Error>| v.map_err(|e| EngineError::Internal(e.to_string()));
    match uri {
        STATUS_URI => as_json(
            engine::workflow_status(session).and_then(|r| to_value(serde_json::to_value(r))),
        ),
        PLAN_URI => as_json(engine::plan(session).and_then(|r| to_value(serde_json::to_value(r)))),
        OUTPUT_URI => {
            let snapshot = session
                .store
                .read()
                .map_err(|e| e.to_string())?
                .ok_or("the workflow has not started: there is no output.log yet")?;
            let bytes = session
                .store
                .output_log(&snapshot)
                .map_err(|e| e.to_string())?
                .ok_or("no test or gate has run yet: there is no output.log")?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
        other => Err(format!(
            "there is no resource {other:?}; they are {STATUS_URI}, {PLAN_URI} and {OUTPUT_URI}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The length counted is the length serde_json writes, for any value.
    #[test]
    fn json_len_is_the_written_length() {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            "[\\x00-\\x20\"\\\\\\x7f-\\u{a0}é😀]{0,16}".prop_map(Value::from),
        ];
        let tree = leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        });
        proptest!(ProptestConfig::with_cases(1024), |(value in tree)| {
            prop_assert_eq!(json_len(&value), value.to_string().len());
        });
    }

    /// A result over the limit is cut to it: the briefing's quoted output first, then the
    /// longest text wherever it is (a ticket's gate output), saying where all of it is; the
    /// briefing's instructions and the short fields stay whole.
    #[test]
    fn a_large_result_is_cut_to_the_limit_quoted_output_first() {
        let output: String = (0..3000).map(|i| format!("line {i}\n")).collect();
        let briefing = format!(
            "Answer with exactly one of: A or B.\n{}",
            fence::fenced(&output)
        );
        let tail = "x".repeat(40 * 1024);
        let mut structured = json!({
            "schema": 1,
            "briefing": briefing,
            "ticket": {"subtasks": [{"observed": {"gates": {"failed": {"tail": tail}}}}]},
            "state": "MANAGER",
        });
        fit(&mut structured, TICKET_URI);
        let size = serde_json::to_string(&structured).unwrap().len();
        assert!(size <= RESULT_BYTES, "{size}");
        let briefing = structured["briefing"].as_str().unwrap();
        assert!(
            briefing.starts_with("Answer with exactly one of: A or B.\n[the output below is cut")
        );
        assert!(briefing.contains("line 2999\n"));
        let tail = structured["ticket"]["subtasks"][0]["observed"]["gates"]["failed"]["tail"]
            .as_str()
            .unwrap();
        assert!(
            tail.starts_with("[… earlier output cut: all of it is in orchestrate://ticket …]\nxxx"),
            "{}",
            &tail[..80]
        );
        assert_eq!(structured["state"], "MANAGER");
        // Small enough already: untouched.
        let mut small = json!({"briefing": "b", "output": "o"});
        fit(&mut small, OUTPUT_URI);
        assert_eq!(small, json!({"briefing": "b", "output": "o"}));
    }

    /// What the server accepts is what the schemas it lists say, tool by tool: the schemas
    /// are derived from the argument types, and this holds the parser to them.
    #[test]
    fn each_tool_accepts_exactly_the_arguments_its_schema_names() {
        for tool in crate::agent::tools::tools() {
            let schema: Vec<String> = tool.parameters["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let mut accepted: Vec<String> = match tool.name {
                SUBMIT_WORK => SUBMIT_WORK_KEYS,
                ESCALATE => ESCALATE_KEYS,
                CHECKPOINT => CHECKPOINT_KEYS,
                _ => &[],
            }
            .iter()
            .map(|k| k.to_string())
            .collect();
            let mut schema = schema;
            schema.sort();
            accepted.sort();
            assert_eq!(accepted, schema, "{}", tool.name);
        }
    }

    fn argument() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            "\\PC{0,16}".prop_map(Value::String),
            prop_oneof![Just("PASS"), Just("fail"), Just("SUCCESS"), Just("x")]
                .prop_map(|s| Value::String(s.into())),
            proptest::collection::vec(any::<u8>(), 0..3).prop_map(|v| json!(v)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(25),
            ..ProptestConfig::default()
        })]

        /// Any arguments to `submit_work`: one kind of submission, or a refusal with a
        /// message and a next action, never a panic; a kind needs exactly its own keys.
        #[test]
        fn submit_work_arguments_are_one_kind_or_a_refusal(
            pairs in proptest::collection::vec(
                (prop_oneof![
                    Just("summary"), Just("test_command"), Just("expectation"),
                    Just("analysis_decision"), Just("plan"), Just("no_pr_left"),
                    Just("squash"), Just("mark_done"), Just("other"),
                ], argument()),
                0..6,
            ),
        ) {
            let args: Map<String, Value> =
                pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            match submit_kind(&args) {
                Ok((summary, kind)) => {
                    prop_assert!(!summary.trim().is_empty());
                    prop_assert!(!args.contains_key("other"));
                    if let SubmitKind::Test { command, .. } = &kind {
                        prop_assert!(!command.trim().is_empty());
                    }
                }
                Err(e) => {
                    prop_assert!(!e.message.is_empty());
                }
            }
        }
    }
}
