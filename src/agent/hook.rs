//! The agent clients' hooks (docs/agent-guide.md): what each client sends on stdin,
//! the answer in that client's format, the stop rule and its loop guard, and the compact
//! briefing the hooks give. Pure: the engine reads the repository, the CLI prints.

use serde_json::{Value, json};

use super::guard::{self, Decision, GuardContext};
use crate::workflow::ticket::{Role, TicketState};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Claude,
    Codex,
    Gemini,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    PreToolUse,
    Stop,
}

/// The parts of a client's hook input the adapters use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookInput {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Value,
}

/// Reads the hook's stdin. Anything that is not a JSON object is an error the caller turns
/// into its fail-open or fail-closed answer.
pub fn parse_input(bytes: &[u8]) -> Result<HookInput, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the hook input is not JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the hook input is not a JSON object".into());
    };
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    Ok(HookInput {
        session_id: text("session_id"),
        cwd: text("cwd"),
        tool_name: text("tool_name"),
        tool_input: map.get("tool_input").cloned().unwrap_or(Value::Null),
    })
}

/// Tools that write the file named in their input (Claude Code's, Gemini CLI's).
const FILE_WRITERS: &[&str] = &[
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "replace",
];

/// The clients' shell tools: Claude Code's and Codex's `Bash`, Codex's `exec_command`,
/// `shell` and `local_shell`, Gemini CLI's `run_shell_command`.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "exec_command",
    "shell",
    "local_shell",
    "run_shell_command",
];

/// The guard over one tool call: shell commands, patches and file writes; other tools pass.
pub fn check_tool(input: &HookInput, ctx: &GuardContext) -> Decision {
    let tool = input.tool_name.as_deref().unwrap_or_default();
    let field = |key: &str| input.tool_input.get(key);
    let patch = field("input")
        .or_else(|| field("patch"))
        .and_then(Value::as_str)
        .or_else(|| {
            field("command")
                .and_then(Value::as_str)
                .filter(|c| c.trim_start().starts_with("*** Begin Patch"))
        });
    if let Some(patch) = patch.filter(|_| {
        tool.contains("patch") || tool == "Bash" || tool == "exec_command" || tool == "shell"
    }) && patch.trim_start().starts_with("*** Begin Patch")
    {
        return guard::check_patch(patch, ctx);
    }
    if FILE_WRITERS.contains(&tool) {
        for key in ["file_path", "notebook_path", "path"] {
            if let Some(path) = field(key).and_then(Value::as_str) {
                return guard::check_file_write(path, ctx);
            }
        }
        return Decision::Allow;
    }
    // The shell tools: Claude's and Codex's `Bash` {command}, Codex's `exec_command` {cmd}
    // and `shell` {command: [argv]}, Gemini's `run_shell_command` {command}.
    let command = match (field("command"), field("cmd")) {
        (Some(Value::String(c)), _) | (_, Some(Value::String(c))) => Some(c.clone()),
        (Some(Value::Array(argv)), _) | (_, Some(Value::Array(argv))) => {
            let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            // `["apply_patch", PATCH]`: Codex's patch tool through its shell.
            if let [program, patch, ..] = argv.as_slice()
                && program.ends_with("apply_patch")
            {
                return guard::check_patch(patch, ctx);
            }
            Some(match argv.as_slice() {
                // `["bash", "-lc", script]`: the script is the command line.
                [shell, flag, script]
                    if flag.starts_with('-') && flag.contains('c') && shell.ends_with("sh") =>
                {
                    script.to_string()
                }
                _ => argv
                    .iter()
                    .map(|w| crate::workflow::briefing::shell_quote(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            })
        }
        _ => None,
    };
    match command {
        Some(command) => guard::check_shell(&command, ctx),
        // A shell tool whose command is not there to read: closed, as for any doubt.
        None if SHELL_TOOLS.contains(&tool) => Decision::Deny(guard::Reason::new(
            guard::Rule::Input,
            format!(
                "the {tool} call carries no command the guard can read (`command` must be a string or a list of strings)"
            ),
        )),
        None => Decision::Allow,
    }
}

/// Where the workflow stands, for the hooks: read-only, as `status` reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkflowView {
    pub workflow: String,
    pub state: String,
    pub pr_title: Option<String>,
    pub branch: Option<String>,
    /// `1.2 (GREEN) of task "add": implement add`
    pub step: Option<String>,
    /// "checkpoint" or "analysis", as `status --json` says it.
    pub pending: Option<String>,
    /// Halted, or waiting for a human's approval.
    pub waits_for_human: bool,
    /// Why it waits, for the allow record.
    pub halt_message: Option<String>,
    /// Nothing left to do (docs/agent-guide.md).
    pub idle: bool,
    /// The workflow ref's tip: a transition changes it.
    pub tip: Option<String>,
    /// On a ticket workflow (docs/tickets.md): whose turn it is and the session's role.
    pub ticket: Option<TicketTurn>,
    /// The session has our MCP tools (its client's project settings register our server):
    /// the briefing names the tools, not command lines.
    pub mcp: bool,
}

/// A ticket's turn as a hook sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketTurn {
    pub state: TicketState,
    /// The role this agent session plays; `None`: it plays whichever role's turn it is.
    pub role: Option<Role>,
    /// The next legal action, as the role's briefing says it.
    pub next: String,
}

impl WorkflowView {
    /// The agent may stop: a human is needed, or nothing is left; on a ticket, also when it
    /// is the other role's turn (a session without a role plays both, so it may not).
    pub fn may_stop(&self) -> bool {
        if let Some(turn) = &self.ticket {
            return match turn.state.role() {
                None => true,
                Some(now) => turn.role.is_some_and(|mine| mine != now),
            };
        }
        self.waits_for_human || self.idle
    }

    /// What the agent should do now, in a few lines: the hooks' compact briefing. In an MCP
    /// session it names the tools and their arguments, as the MCP briefings do.
    pub fn compact_briefing(&self) -> String {
        if let Some(turn) = &self.ticket {
            return self.ticket_briefing(turn);
        }
        if self.mcp {
            return self.mcp_briefing();
        }
        let mut out = self.where_line();
        let now = if self.idle {
            "Nothing is left to do: every PR of the master plan is done. Stop here.".to_string()
        } else if self.waits_for_human {
            format!(
                "The workflow waits for a human{}; stop and let them answer.",
                self.halt_message
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )
        } else {
            let mut now = match (&self.pending, &self.step) {
                (Some(p), _) if p == "checkpoint" => {
                    "A checkpoint commit is owed: run `git orchestrate checkpoint` (MCP: checkpoint).".to_string()
                }
                (Some(p), Some(step)) if p == "analysis" => format!(
                    "Step {step}: judge the NEEDS_ANALYSIS result, then answer with submit-work --analysis-decision."
                ),
                (_, Some(step)) => format!("Current step {step}."),
                (_, None) if self.state == "INITIALIZING" => {
                    "Plan the next PR of the master plan and submit it (submit-work --plan); if every PR \
                     is marked [DONE], say so with `git orchestrate submit-work --summary \"…\" --no-pr-left`."
                        .to_string()
                }
                _ => String::new(),
            };
            if !now.is_empty() {
                now.push('\n');
            }
            now.push_str(
                "Run `git orchestrate get-task` (MCP: get_task) for the full instructions, and report \
                 every result through `git orchestrate submit-work` (MCP: submit_work); never run the \
                 tests yourself to judge your work.",
            );
            now
        };
        out.push_str(&now);
        out
    }
}

impl WorkflowView {
    /// Where the workflow is, the first line of every compact briefing of a TDD workflow.
    fn where_line(&self) -> String {
        let mut out = format!(
            "git-orchestrate: workflow {} is in state {}",
            self.workflow, self.state
        );
        if let Some(title) = &self.pr_title {
            out.push_str(&format!(", PR \"{title}\""));
        }
        if let Some(branch) = &self.branch {
            out.push_str(&format!(" on branch {branch}"));
        }
        out.push_str(".\n");
        out
    }

    /// [`WorkflowView::compact_briefing`] of a TDD workflow in a session with our MCP tools.
    fn mcp_briefing(&self) -> String {
        let mut out = self.where_line();
        if self.idle {
            out.push_str("Nothing is left to do: every PR of the master plan is done. Stop here.");
            return out;
        }
        if self.waits_for_human {
            out.push_str(&format!(
                "The workflow waits for a human{}; stop and let them answer.",
                self.halt_message
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ));
            return out;
        }
        let now = match (&self.pending, &self.step) {
            (Some(p), _) if p == "checkpoint" => {
                "A checkpoint commit is owed: call the `checkpoint` tool.".to_string()
            }
            (Some(p), Some(step)) if p == "analysis" => format!(
                "Step {step}: judge the NEEDS_ANALYSIS result, then answer with `submit_work` and its \
                 `analysis_decision`."
            ),
            (_, Some(step)) => format!("Current step {step}."),
            (_, None) if self.state == "INITIALIZING" => {
                "Plan the next PR of the master plan and submit it (`submit_work` with the `plan` \
                 object); if every PR is marked [DONE], say so with `submit_work {\"summary\": \"…\", \
                 \"no_pr_left\": true}`."
                    .to_string()
            }
            _ => String::new(),
        };
        if !now.is_empty() {
            out.push_str(&now);
            out.push('\n');
        }
        out.push_str(
            "Call the `get_task` tool for the full instructions, and report every result through \
             the `submit_work` tool; never run the tests yourself to judge your work.",
        );
        out
    }

    /// [`WorkflowView::compact_briefing`] of a ticket: where it stands, which role this
    /// session plays, and that role's next action or why it may stop.
    fn ticket_briefing(&self, turn: &TicketTurn) -> String {
        let mut out = format!(
            "git-orchestrate: ticket workflow {} is in state {}",
            self.workflow, self.state
        );
        if let Some(title) = &self.pr_title {
            out.push_str(&format!(", ticket \"{title}\""));
        }
        if let Some(branch) = &self.branch {
            out.push_str(&format!(" on branch {branch}"));
        }
        match turn.role {
            Some(role) => out.push_str(&format!("; you are the {}.\n", role.as_str())),
            None => out.push_str("; you play whichever role's turn it is.\n"),
        }
        let now = match (turn.state, turn.state.role(), turn.role) {
            (TicketState::TicketDone, _, _) => {
                "The ticket is done and merged: nothing is left to do. Stop here.".to_string()
            }
            (TicketState::Halted, _, _) => format!(
                "The ticket is halted and waits for a human{} (`git orchestrate resume`); stop and let them answer.",
                self.halt_message
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            (_, Some(now), Some(mine)) if now != mine => format!(
                "It is the {}'s turn, not yours: stop here; the ticket comes back to you when the {} has acted.",
                now.as_str(),
                now.as_str()
            ),
            _ => {
                let tools = match turn.role.or(turn.state.role()) {
                    Some(Role::Developer) => "subtask_complete",
                    _ => "assign_to_developer, update_subtask, complete_ticket",
                };
                if self.mcp {
                    format!(
                        "Next: {}\nCall the `get_task` tool for your full briefing, and act through \
                         your role's tools ({tools}).",
                        super::mcp_text::for_mcp(&turn.next)
                    )
                } else {
                    format!(
                        "Next: {}\nRun `git orchestrate get-task` (MCP: get_task) for your full briefing, and act \
                         through your role's tools (MCP: {tools}).",
                        turn.next
                    )
                }
            }
        };
        out.push_str(&now);
        out
    }
}

/// The Stop hook's record for one agent session: how many stops it blocked in a row, and the
/// workflow tip when it last did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StopRecord {
    pub tip: Option<String>,
    pub blocks: u32,
}

/// What the Stop hook answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopDecision {
    /// Keep the agent working: the reason goes to the model.
    Block(String),
    /// Let it stop; a message for the person when the loop guard let it go.
    Allow(Option<String>),
}

/// The stop rule (docs/agent-guide.md, "Agents that plug in natively"): block while the
/// workflow expects the agent's work, allow when a human is needed or nothing is left; after
/// `max_blocks` blocks in a row with no transition in between, allow and say so. Returns the
/// record to keep.
pub fn decide_stop(
    view: &WorkflowView,
    record: &StopRecord,
    max_blocks: u32,
) -> (StopDecision, StopRecord) {
    if view.may_stop() {
        return (StopDecision::Allow(None), StopRecord::default());
    }
    let blocks = if record.tip == view.tip {
        record.blocks
    } else {
        0
    };
    if blocks >= max_blocks {
        return (
            StopDecision::Allow(Some(format!(
                "git-orchestrate let the agent stop after {blocks} blocked stops with no progress of the \
                 workflow ([agent] max_stop_blocks = {max_blocks}); the workflow still expects work \
                 (state {}). Run `git orchestrate status` to see where it stands.",
                view.state
            ))),
            StopRecord::default(),
        );
    }
    (
        StopDecision::Block(format!(
            "The workflow is not done and expects your work.\n{}",
            view.compact_briefing()
        )),
        StopRecord {
            tip: view.tip.clone(),
            blocks: blocks + 1,
        },
    )
}

/// The hook's answer: what to print on stdout (nothing when `None`) and the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookOutput {
    pub stdout: Option<String>,
    pub exit: u8,
}

fn json_out(value: Value) -> HookOutput {
    HookOutput {
        stdout: Some(value.to_string()),
        exit: 0,
    }
}

/// Allow, in each client's terms: Claude Code and Codex read no output as "go on"; Gemini
/// CLI wants pure JSON on stdout.
pub fn allow(client: Client) -> HookOutput {
    match client {
        Client::Gemini => json_out(json!({})),
        Client::Claude | Client::Codex => HookOutput {
            stdout: None,
            exit: 0,
        },
    }
}

pub fn deny_tool(client: Client, reason: &str) -> HookOutput {
    let reason = format!("git-orchestrate: {reason}");
    match client {
        Client::Gemini => json_out(json!({"decision": "deny", "reason": reason})),
        Client::Claude | Client::Codex => json_out(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        })),
    }
}

pub fn stop_answer(client: Client, decision: &StopDecision) -> HookOutput {
    match (decision, client) {
        (StopDecision::Block(reason), Client::Gemini) => {
            json_out(json!({"decision": "deny", "reason": reason}))
        }
        (StopDecision::Block(reason), Client::Claude | Client::Codex) => {
            json_out(json!({"decision": "block", "reason": reason}))
        }
        (StopDecision::Allow(None), _) => allow(client),
        (StopDecision::Allow(Some(message)), _) => json_out(json!({"systemMessage": message})),
    }
}

pub fn session_context(client: Client, context: &str) -> HookOutput {
    let _ = client;
    json_out(json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn view() -> WorkflowView {
        WorkflowView {
            workflow: "main".into(),
            state: "EXECUTING_TDD".into(),
            pr_title: Some("feat: Add numbers".into()),
            branch: Some("feat/add-numbers".into()),
            step: Some("1.2 (GREEN) of task \"add\": implement add".into()),
            tip: Some("t1".into()),
            ..WorkflowView::default()
        }
    }

    #[test]
    fn the_stop_rule_blocks_while_work_is_expected_and_guards_its_own_loop() {
        let v = view();
        let (first, record) = decide_stop(&v, &StopRecord::default(), 3);
        assert_eq!(
            first,
            StopDecision::Block(
                "The workflow is not done and expects your work.\ngit-orchestrate: workflow main is in state \
                 EXECUTING_TDD, PR \"feat: Add numbers\" on branch feat/add-numbers.\nCurrent step 1.2 (GREEN) \
                 of task \"add\": implement add.\nRun `git orchestrate get-task` (MCP: get_task) for the full \
                 instructions, and report every result through `git orchestrate submit-work` (MCP: \
                 submit_work); never run the tests yourself to judge your work."
                    .into()
            )
        );
        assert_eq!(record.blocks, 1);
        let (_, record) = decide_stop(&v, &record, 3);
        let (_, record) = decide_stop(&v, &record, 3);
        assert_eq!(record.blocks, 3);
        let (fourth, record) = decide_stop(&v, &record, 3);
        assert!(
            matches!(&fourth, StopDecision::Allow(Some(m)) if m.contains("after 3 blocked stops")),
            "{fourth:?}"
        );
        assert_eq!(record, StopRecord::default());
        // A transition in between starts the count again.
        let moved = WorkflowView {
            tip: Some("t2".into()),
            ..view()
        };
        let stale = StopRecord {
            tip: Some("t1".into()),
            blocks: 3,
        };
        assert!(matches!(
            decide_stop(&moved, &stale, 3).0,
            StopDecision::Block(_)
        ));
    }

    #[test]
    fn the_agent_may_stop_when_a_human_is_needed_or_nothing_is_left() {
        for v in [
            WorkflowView {
                waits_for_human: true,
                ..view()
            },
            WorkflowView {
                idle: true,
                state: "INITIALIZING".into(),
                ..view()
            },
        ] {
            assert_eq!(
                decide_stop(&v, &StopRecord::default(), 3).0,
                StopDecision::Allow(None)
            );
        }
    }

    fn ticket(state: TicketState, role: Option<Role>) -> WorkflowView {
        WorkflowView {
            workflow: "main".into(),
            state: state.as_str().into(),
            pr_title: Some("T".into()),
            branch: Some("ticket/t".into()),
            tip: Some("t1".into()),
            ticket: Some(TicketTurn {
                state,
                role,
                next: "the next action".into(),
            }),
            ..WorkflowView::default()
        }
    }

    /// On a ticket the stop rule asks whose turn it is: the role that owes an action is
    /// kept working (with the same loop guard), the other role and a finished or halted
    /// ticket may stop, and a session without a role plays both.
    #[test]
    fn on_a_ticket_the_role_whose_turn_it_is_is_kept_working() {
        use TicketState::*;
        let blocks = |state, role| {
            matches!(
                decide_stop(&ticket(state, role), &StopRecord::default(), 3).0,
                StopDecision::Block(_)
            )
        };
        let (dev, man) = (Some(Role::Developer), Some(Role::Manager));
        for (state, role, blocked) in [
            (Developer, dev, true),
            (Developer, man, false),
            (Manager, man, true),
            (Manager, dev, false),
            (Developer, None, true),
            (Manager, None, true),
            (TicketDone, dev, false),
            (TicketDone, man, false),
            (TicketDone, None, false),
            (Halted, dev, false),
            (Halted, man, false),
            (Halted, None, false),
        ] {
            assert_eq!(blocks(state, role), blocked, "{state:?} {role:?}");
        }
        let (first, record) = decide_stop(&ticket(Developer, dev), &StopRecord::default(), 2);
        assert_eq!(
            first,
            StopDecision::Block(
                "The workflow is not done and expects your work.\ngit-orchestrate: ticket workflow main is in \
                 state DEVELOPER, ticket \"T\" on branch ticket/t; you are the developer.\nNext: the next \
                 action\nRun `git orchestrate get-task` (MCP: get_task) for your full briefing, and act \
                 through your role's tools (MCP: subtask_complete)."
                    .into()
            )
        );
        let (_, record) = decide_stop(&ticket(Developer, dev), &record, 2);
        let (third, _) = decide_stop(&ticket(Developer, dev), &record, 2);
        assert!(
            matches!(&third, StopDecision::Allow(Some(m)) if m.contains("after 2 blocked stops")),
            "{third:?}"
        );
        assert!(
            ticket(Manager, dev)
                .compact_briefing()
                .ends_with("It is the manager's turn, not yours: stop here; the ticket comes back to you when the manager has acted.")
        );
    }

    #[test]
    fn each_client_gets_its_own_format() {
        assert_eq!(
            deny_tool(Client::Claude, "no").stdout.unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"git-orchestrate: no"}}"#
        );
        assert_eq!(
            deny_tool(Client::Gemini, "no").stdout.unwrap(),
            r#"{"decision":"deny","reason":"git-orchestrate: no"}"#
        );
        assert_eq!(
            stop_answer(Client::Codex, &StopDecision::Block("r".into()))
                .stdout
                .unwrap(),
            r#"{"decision":"block","reason":"r"}"#
        );
        assert_eq!(
            stop_answer(Client::Gemini, &StopDecision::Block("r".into()))
                .stdout
                .unwrap(),
            r#"{"decision":"deny","reason":"r"}"#
        );
        assert_eq!(
            allow(Client::Claude),
            HookOutput {
                stdout: None,
                exit: 0
            }
        );
        assert_eq!(allow(Client::Gemini).stdout.unwrap(), "{}");
    }

    #[test]
    fn tool_inputs_of_each_client_reach_the_guard() {
        let ctx = GuardContext {
            root: "/r".into(),
            cwd: "/r".into(),
            git_dir: "/r/.git".into(),
            hooks_dir: "/r/.git/hooks".into(),
            main_branch: "main".into(),
            protected_files: vec!["run_tests.sh".into()],
            ..GuardContext::default()
        };
        let input = |tool: &str, tool_input: Value| HookInput {
            tool_name: Some(tool.into()),
            tool_input,
            ..HookInput::default()
        };
        let denied = |i: &HookInput| matches!(check_tool(i, &ctx), Decision::Deny(_));
        assert!(denied(&input("Bash", json!({"command": "git commit -n"}))));
        assert!(denied(&input(
            "run_shell_command",
            json!({"command": "git commit --no-verify"})
        )));
        assert!(denied(&input(
            "exec_command",
            json!({"cmd": "git commit -n"})
        )));
        assert!(denied(&input(
            "shell",
            json!({"command": ["bash", "-lc", "git commit -n"]})
        )));
        assert!(denied(&input(
            "Write",
            json!({"file_path": "/r/run_tests.sh", "content": ""})
        )));
        assert!(denied(&input(
            "replace",
            json!({"file_path": "/r/.git/hooks/commit-msg"})
        )));
        assert!(denied(&input(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Delete File: run_tests.sh\n*** End Patch"})
        )));
        assert!(!denied(&input(
            "Read",
            json!({"file_path": "/r/.git/hooks/commit-msg"})
        )));
        assert!(!denied(&input("Bash", json!({"command": "ls"}))));
        assert!(denied(&input("Bash", json!({"command": 123}))));
        assert!(denied(&input("run_shell_command", json!({}))));
        assert!(denied(&input(
            "Edit",
            json!({"file_path": "/r/.claude/settings.json"})
        )));
        assert!(!denied(&input(
            "mcp__orchestrate__submit_work",
            json!({"summary": "s"})
        )));
    }

    #[test]
    fn hook_input_that_is_not_an_object_is_an_error() {
        assert!(parse_input(b"").is_err());
        assert!(parse_input(b"[1]").is_err());
        let input =
            parse_input(br#"{"session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}"#)
                .unwrap();
        assert_eq!(input.session_id.as_deref(), Some("s"));
    }
}
