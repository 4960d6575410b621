//! `agent-hook` as the clients run it: the real binary, the hook JSON on stdin, hostile input
//! included. It always exits 0 with an answer in the client's own format; pre-tool-use fails
//! closed, session-start and stop fail open (docs/agent-guide.md, "Agents that plug in
//! natively").

use std::io::Write as _;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::*;

const CLIENTS: [&str; 3] = ["claude", "codex", "gemini"];

/// Runs `agent-hook CLIENT EVENT` with `input` on stdin.
fn hook(repo: &TestRepo, client: &str, event: &str, input: &[u8]) -> Run {
    let mut child = repo
        .command(BIN, ["agent-hook", client, event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn git-orchestrate");
    let mut stdin = child.stdin.take().expect("stdin");
    // The hook may stop reading early (input beyond its limit): a broken pipe is its right.
    let _ = stdin.write_all(input);
    drop(stdin);
    Run::from(child.wait_with_output().expect("wait"))
}

/// What each client reads as "go on": no output for Claude Code and Codex, `{}` for Gemini.
fn allowed(client: &str) -> &'static str {
    if client == "gemini" { "{}\n" } else { "" }
}

/// The reason of a pre-tool-use denial, checking the client's exact shape on the way.
fn denial(client: &str, run: &Run) -> String {
    run.expect(0);
    let answer = run.json();
    let (shape, reason) = if client == "gemini" {
        let reason = answer["reason"].as_str().unwrap_or_default().to_string();
        (json!({"decision": "deny", "reason": reason}), reason)
    } else {
        let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (
            json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }}),
            reason,
        )
    };
    assert_eq!(answer, shape, "{client}: {}", run.stdout);
    assert!(reason.starts_with("git-orchestrate: "), "{reason}");
    reason
}

#[test]
fn hostile_hook_input_never_breaks_the_hook_and_pre_tool_use_fails_closed() {
    let repo = TestRepo::at_first_step();
    let before = repo.tip();
    let deep = "[".repeat(100_000);
    let huge = format!(
        "{{\"tool_name\":\"Bash\",\"tool_input\":{{\"command\":\"{}\"}}}}",
        "a".repeat(9 << 20)
    );
    let inputs: [(&str, &[u8]); 7] = [
        ("empty", b""),
        ("not JSON, not UTF-8", b"garbage\xff\xfe"),
        ("an array", b"[1,2]"),
        ("null", b"null"),
        ("nested 100,000 deep", deep.as_bytes()),
        ("over the input limit", huge.as_bytes()),
        ("a truncated object", b"{\"tool_name\":\"Bash\",\"tool_in"),
    ];
    for client in CLIENTS {
        for (what, input) in inputs {
            let run = hook(&repo, client, "pre-tool-use", input);
            let reason = denial(client, &run);
            assert!(
                reason.contains("the guard could not check this call, so it is refused"),
                "{client}, {what}: {reason}"
            );
            for event in ["session-start", "stop"] {
                let run = hook(&repo, client, event, input);
                run.expect(0);
                assert_eq!(run.stdout, allowed(client), "{client} {event}, {what}");
                assert!(
                    run.stderr.contains("(the hook lets the agent go on)")
                        && !run.stderr.contains("bug"),
                    "{client} {event}, {what}: {}",
                    run.stderr
                );
            }
        }
    }
    assert_eq!(repo.tip(), before, "a hook never moves the workflow");
}

#[test]
fn each_client_gets_the_guards_denial_in_its_own_format() {
    let repo = TestRepo::at_first_step();
    let cwd = repo.dir().display().to_string();
    let calls = [
        (
            "claude",
            json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "bash -c \"git commit -n\""}}),
            "--no-verify",
        ),
        (
            "claude",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "Write",
                   "tool_input": {"file_path": format!("{cwd}/.git/hooks/commit-msg"), "content": "exit 0"}}),
            ".git/hooks",
        ),
        (
            "claude",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "Edit",
                   "tool_input": {"file_path": ".orchestrate.toml", "old_string": "a", "new_string": "b"}}),
            "protected",
        ),
        // Anything under the directories CI reads its jobs from, not only the job `init
        // --ci` writes: a workflow added beside it runs on the same events.
        (
            "claude",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "Write",
                   "tool_input": {"file_path": ".github/workflows/zz.yml", "content": "on: push"}}),
            "protected",
        ),
        (
            "codex",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "Bash",
                   "tool_input": {"command": "rm -rf .gitlab"}}),
            "protected",
        ),
        (
            "codex",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "Bash",
                   "tool_input": {"command": "echo $(git update-ref refs/orchestrator/workflows/main HEAD)"}}),
            "writes a ref the orchestrator keeps",
        ),
        (
            "gemini",
            json!({"session_id": "s", "cwd": cwd, "hook_event_name": "BeforeTool",
                   "tool_name": "run_shell_command", "tool_input": {"command": "GIT_ORCHESTRATE_HUMAN=1 git orchestrate approve"}}),
            "for humans",
        ),
        (
            "gemini",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "write_file",
                   "tool_input": {"file_path": ".git/orchestrator/x", "content": ""}}),
            "orchestrator's state",
        ),
        // Run from outside the repository, the command is judged against the project the
        // client runs its hooks in.
        (
            "claude",
            json!({"session_id": "s", "cwd": "/", "tool_name": "Bash",
                   "tool_input": {"command": format!("rm -rf {cwd}/.git/hooks")}}),
            "orchestrator's state",
        ),
        (
            "codex",
            json!({"session_id": "s", "cwd": cwd, "tool_name": "shell",
                   "tool_input": {"command": ["apply_patch",
                       "*** Begin Patch\n*** Update File: .orchestrate.toml\n@@\n-a\n+b\n*** End Patch"]}}),
            "protected",
        ),
    ];
    for (client, input, why) in calls {
        let run = hook(&repo, client, "pre-tool-use", input.to_string().as_bytes());
        let reason = denial(client, &run);
        assert!(reason.contains(why), "{client} {input}: {reason}");
    }
    // Ordinary work passes, silently for Claude Code and Codex.
    for client in CLIENTS {
        let input = json!({"session_id": "s", "cwd": cwd, "tool_name": "Bash",
                           "tool_input": {"command": "ls -la && cargo build"}});
        let run = hook(&repo, client, "pre-tool-use", input.to_string().as_bytes());
        run.expect(0);
        assert_eq!(run.stdout, allowed(client), "{client}");
    }
}

#[test]
fn the_stop_hook_blocks_while_a_step_is_open_and_its_own_loop_guard_lets_go() {
    let repo = TestRepo::at_first_step();
    let cwd = repo.dir().display().to_string();
    for client in CLIENTS {
        // Gemini CLI sets no stop_hook_active: the count is ours, per agent session.
        let input = json!({"session_id": format!("loop-{client}"), "cwd": cwd,
                           "hook_event_name": "Stop"})
        .to_string();
        let block = if client == "gemini" { "deny" } else { "block" };
        for n in 1..=3 {
            let run = hook(&repo, client, "stop", input.as_bytes());
            run.expect(0);
            let answer = run.json();
            assert_eq!(answer["decision"], block, "{client}, stop {n}");
            let reason = answer["reason"].as_str().unwrap_or_default();
            assert!(
                reason.starts_with("The workflow is not done and expects your work.\n")
                    && reason.contains("Current step 1.1 (RED)"),
                "{client}: {reason}"
            );
        }
        // The fourth stop in a row, with no transition between: let go, and say why.
        let run = hook(&repo, client, "stop", input.as_bytes());
        run.expect(0);
        let message = run.json()["systemMessage"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            message.contains("after 3 blocked stops") && message.contains("max_stop_blocks"),
            "{client}: {}",
            run.stdout
        );
        // The count starts again: the next stop blocks.
        let run = hook(&repo, client, "stop", input.as_bytes());
        assert_eq!(run.json()["decision"], block, "{client}");
    }
    // A transition resets the count of a session with blocks behind it.
    let input = json!({"session_id": "progress", "cwd": cwd}).to_string();
    for _ in 0..3 {
        assert_eq!(
            hook(&repo, "claude", "stop", input.as_bytes()).json()["decision"],
            "block"
        );
    }
    repo.write("add.sh", "exit 1\n");
    repo.submit_test(RED, Some("FAIL")).expect(3);
    assert_eq!(
        hook(&repo, "claude", "stop", input.as_bytes()).json()["decision"],
        "block",
        "a transition since the last block starts the count again"
    );
}

#[test]
fn the_stop_hook_lets_the_agent_stop_when_a_human_is_needed() {
    let repo = TestRepo::with_config(&format!(
        "{CONFIG}\n[debugging]\nhypothesize_max_attempts = 1\ninstrumentation_max_attempts = 1\nunlock_scope_reduction_at = 1\nunlock_escalation_at = 1\n"
    ));
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.submit_test("echo 'still 4'; exit 1", None).expect(1);
    repo.run_with_stdin(&["escalate", "--report", "-"], "# the API key is missing\n")
        .expect(10);
    let input = json!({"session_id": "s", "cwd": repo.dir().display().to_string()}).to_string();
    for client in CLIENTS {
        let run = hook(&repo, client, "stop", input.as_bytes());
        run.expect(0);
        assert_eq!(run.stdout, allowed(client), "{client}");
        let value: Value =
            serde_json::from_str(&hook(&repo, client, "session-start", input.as_bytes()).stdout)
                .expect("JSON");
        let context = value["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default();
        assert!(
            context.contains("The workflow waits for a human"),
            "{client}: {context}"
        );
    }
}

/// The guard's model of reach through the real hook: what it cannot know is refused where it
/// could reach something protected, with the word named; the same runner with other
/// arguments than a gate's, and words it can know, pass.
#[test]
fn the_guard_refuses_what_it_cannot_know_and_passes_what_it_can() {
    let repo = TestRepo::at_first_step();
    let cwd = repo.dir().display().to_string();
    let judge = |command: &str| {
        let input = json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse",
                           "tool_name": "Bash", "tool_input": {"command": command}});
        hook(
            &repo,
            "claude",
            "pre-tool-use",
            input.to_string().as_bytes(),
        )
    };
    for (command, why) in [
        (
            "$(echo git) commit -n -m x",
            "cannot tell what `$(echo git)` is",
        ),
        ("git $x -n -m y", "cannot tell what `$x` is"),
        ("echo x > .g*/hooks/pre-push", ".git/hooks/pre-push"),
        ("for f in .git/hooks/*; do rm \"$f\"; done", "hooks"),
        (
            "base64 -d payload.b64 | sh",
            "what `base64` prints into `sh`",
        ),
        ("git -c gc.reflogExpire=now gc", "reflog"),
        (
            "git fetch . 'refs/o*:refs/o*'",
            "writes a ref the orchestrator keeps",
        ),
        (
            "printf -v GIT_ORCHESTRATE_HUMAN 1; export GIT_ORCHESTRATE_HUMAN",
            "for humans",
        ),
        (
            "python3 -c 'import pty; pty.spawn([\"git\",\"orchestrate\",\"approve\"])'",
            "for humans",
        ),
        ("export PATH=/tmp/evil:$PATH", "append"),
        ("git worktree add ../w main", "main branch"),
    ] {
        let reason = denial("claude", &judge(command));
        assert!(reason.contains(why), "{command}: {reason}");
    }
    for command in [
        "x=build; rm -rf \"$x\"",
        "for f in *.md; do wc -l \"$f\"; done",
        "git commit -m \"$(cat <<'EOF'\nfeat: add\nEOF\n)\"",
        "python3 -m unittest tests.test_add -v",
        "export PATH=\"$PATH:$HOME/.local/bin\"",
        "cd \"$(git rev-parse --show-toplevel)\" && git status",
    ] {
        let run = judge(command);
        run.expect(0);
        assert_eq!(run.stdout, "", "{command}: {}", run.stdout);
    }
}

/// Runs `agent-hook claude EVENT` as a session playing `role` (GIT_ORCHESTRATE_ROLE).
fn role_hook(repo: &TestRepo, role: &str, event: &str, input: &Value) -> Run {
    let mut child = repo
        .command(BIN, ["agent-hook", "claude", event])
        .env("GIT_ORCHESTRATE_ROLE", role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn git-orchestrate");
    let mut stdin = child.stdin.take().expect("stdin");
    let _ = stdin.write_all(input.to_string().as_bytes());
    drop(stdin);
    Run::from(child.wait_with_output().expect("wait"))
}

/// On a ticket the real hooks know the session's role: the Stop hook keeps the role whose
/// turn it is working and lets the other one stop, session-start gives the role's briefing,
/// and the guard refuses the other role's tools and a role set by hand.
#[test]
fn on_a_ticket_the_hooks_know_the_sessions_role() {
    let repo = TestRepo::new();
    repo.run(&["ticket", "new", "--title", "Add numbers"])
        .expect(0);
    let dir = repo.dir().display().to_string();
    let stop = |role: &str, session: &str| {
        let run = role_hook(
            &repo,
            role,
            "stop",
            &json!({"session_id": session, "cwd": dir}),
        );
        run.expect(0);
        run.stdout.clone()
    };
    // MANAGER: the manager owes an action, the developer may stop.
    let blocked = stop("manager", "m1");
    assert!(blocked.contains(r#""decision":"block""#), "{blocked}");
    assert!(blocked.contains("you are the manager"), "{blocked}");
    assert_eq!(stop("developer", "d1"), "");
    // The loop guard of the TDD rule holds here too: after 3 blocks with no transition.
    stop("manager", "m1");
    stop("manager", "m1");
    let released = stop("manager", "m1");
    assert!(released.contains("after 3 blocked stops"), "{released}");

    repo.run(&[
        "assign",
        "--role",
        "manager",
        "--mode",
        "implementation",
        "--goal",
        "add numbers",
        "--acceptance-criteria",
        "add.sh prints 5",
    ])
    .expect(0);
    // DEVELOPER: now the developer is kept working, and the manager may stop.
    let blocked = stop("developer", "d2");
    assert!(blocked.contains("you are the developer"), "{blocked}");
    assert!(blocked.contains("subtask_complete"), "{blocked}");
    assert_eq!(stop("manager", "m2"), "");

    let context = role_hook(
        &repo,
        "developer",
        "session-start",
        &json!({"session_id": "d3", "cwd": dir}),
    );
    context.expect(0);
    let additional = context.json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let cli = repo.run(&["get-task", "--role", "developer"]);
    cli.expect(0);
    assert_eq!(
        additional,
        cli.stdout.trim_end_matches('\n').to_string() + "\n"
    );
    assert!(additional.contains("## Current Assignment"), "{additional}");

    let guard = |role: &str, command: &str| {
        role_hook(
            &repo,
            role,
            "pre-tool-use",
            &json!({"session_id": "g", "cwd": dir, "tool_name": "Bash",
                    "tool_input": {"command": command}}),
        )
    };
    for command in [
        "git orchestrate update-subtask --status complete --notes ok",
        "env GIT_ORCHESTRATE_ROLE=manager git orchestrate assign --goal g",
        "bash -c 'git-orchestrate complete-ticket --summary s'",
        "git orchestrate get-task --role manager",
    ] {
        let reason = denial("claude", &guard("developer", command));
        assert!(
            reason.contains("ticket role") || reason.contains("GIT_ORCHESTRATE_ROLE"),
            "{command}: {reason}"
        );
    }
    let reason = denial(
        "claude",
        &guard(
            "manager",
            "git orchestrate subtask-complete --status complete",
        ),
    );
    assert!(reason.contains("this session is the manager"), "{reason}");
    for (role, command) in [
        (
            "developer",
            "git orchestrate subtask-complete --status complete --build-status pass --message m",
        ),
        ("developer", "git orchestrate get-task"),
        (
            "manager",
            "git orchestrate update-subtask --status complete --notes ok",
        ),
        ("developer", "ls"),
    ] {
        let run = guard(role, command);
        run.expect(0);
        assert_eq!(run.stdout, "", "{role}: {command}");
    }

    // TICKET_DONE and HALTED let every role stop: a finished ticket owes nothing.
    repo.write("add.sh", "echo 5\n");
    repo.commit_all("add numbers");
    repo.run(&[
        "subtask-complete",
        "--role",
        "developer",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "add.sh",
        "--file",
        "add.sh",
    ])
    .expect(0);
    repo.run(&[
        "update-subtask",
        "--role",
        "manager",
        "--status",
        "complete",
        "--notes",
        "ok",
    ])
    .expect(0);
    repo.run(&[
        "complete-ticket",
        "--role",
        "manager",
        "--summary",
        "add numbers",
    ])
    .expect(0);
    assert_eq!(stop("manager", "m4"), "");
    assert_eq!(stop("developer", "d4"), "");
}

/// A ticket workflow has no TDD state for the guard to read: it judges by the configuration
/// (as before a workflow starts) instead of refusing every call.
#[test]
fn the_guard_judges_a_ticket_workflow_by_its_configuration() {
    let repo = TestRepo::new();
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    let cwd = repo.dir().display().to_string();
    let call = |command: &str| {
        let input = json!({"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse",
                           "tool_name": "Bash", "tool_input": {"command": command}});
        hook(
            &repo,
            "claude",
            "pre-tool-use",
            input.to_string().as_bytes(),
        )
    };
    let ls = call("ls");
    ls.expect(0);
    assert_eq!(ls.stdout, allowed("claude"), "{}", ls.stderr);
    let ours =
        call("git orchestrate subtask-complete --status complete --build-status pass --message m");
    assert_eq!(ours.stdout, allowed("claude"), "{}", ours.stderr);
    assert!(denial("claude", &call("git commit -n -m x")).contains("--no-verify"));
    assert!(denial("claude", &call("sh run_tests.sh")).contains("submit-work"));
}

/// Each client's hook input in the shape it sends (Claude Code's and Codex's SessionStart and
/// Stop, Gemini CLI's SessionStart and AfterAgent): session-start, then the stop.
fn client_inputs(client: &str, cwd: &str, session: &str) -> (Value, Value) {
    match client {
        "claude" => (
            json!({"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                   "hook_event_name": "SessionStart", "source": "startup"}),
            json!({"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
                   "permission_mode": "bypassPermissions", "hook_event_name": "Stop",
                   "stop_hook_active": false, "last_assistant_message": "Done."}),
        ),
        "codex" => (
            json!({"session_id": session, "transcript_path": null, "cwd": cwd,
                   "hook_event_name": "SessionStart", "model": "fake", "source": "startup"}),
            json!({"session_id": session, "turn_id": "1", "cwd": cwd, "model": "fake",
                   "hook_event_name": "Stop", "stop_hook_active": false,
                   "last_assistant_message": "Done."}),
        ),
        _ => (
            json!({"session_id": session, "transcript_path": "/tmp/t.json", "cwd": cwd,
                   "hook_event_name": "SessionStart", "timestamp": "2026-11-29T00:00:00Z",
                   "source": "startup"}),
            json!({"session_id": session, "transcript_path": "/tmp/t.json", "cwd": cwd,
                   "hook_event_name": "AfterAgent", "timestamp": "2026-11-29T00:00:00Z",
                   "prompt": "go", "prompt_response": "Done.", "stop_hook_active": false}),
        ),
    }
}

/// The session-start context and the stop's reason, as `client` reads them.
fn start_and_stop(repo: &TestRepo, client: &str, role: Option<&str>) -> (String, String) {
    let cwd = repo.dir().display().to_string();
    let (start, stop) = client_inputs(client, &cwd, &format!("s-{client}"));
    let run = |event: &str, input: &Value| {
        let mut command = repo.command(BIN, ["agent-hook", client, event]);
        if let Some(role) = role {
            command.env("GIT_ORCHESTRATE_ROLE", role);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn git-orchestrate");
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(input.to_string().as_bytes());
        drop(stdin);
        let run = Run::from(child.wait_with_output().expect("wait"));
        run.expect(0);
        run.json()
    };
    let context = run("session-start", &start)["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let answer = run("stop", &stop);
    let block = if client == "gemini" { "deny" } else { "block" };
    assert_eq!(answer["decision"], block, "{client}: {answer}");
    (
        context,
        answer["reason"].as_str().unwrap_or_default().to_string(),
    )
}

/// In a session whose client's settings register our MCP server (`init --agent`), the
/// session-start and stop hooks name the MCP tools and their arguments, as the MCP
/// briefings do; without the server they name the commands.
#[test]
fn the_hooks_name_the_mcp_tools_in_a_session_that_has_them() {
    for client in CLIENTS {
        let repo = TestRepo::at_first_step();
        // No MCP server registered: the commands (with the tools aside).
        let (context, reason) = start_and_stop(&repo, client, None);
        assert!(
            context.contains("Run `git orchestrate get-task` (MCP: get_task)"),
            "{client}: {context}"
        );
        assert!(
            reason.contains("`git orchestrate submit-work`"),
            "{client}: {reason}"
        );

        repo.run(&["init", "--agent", client]).expect(0);
        let (context, reason) = start_and_stop(&repo, client, None);
        let tools = "Current step 1.1 (RED) of task \"add\": test add.\nCall the \
                     `get_task` tool for the full instructions, and report every result through \
                     the `submit_work` tool; never run the tests yourself to judge your work.";
        assert!(
            context.starts_with("git-orchestrate: workflow main is in state EXECUTING_TDD")
                && context.ends_with(tools),
            "{client}: {context}"
        );
        assert_eq!(
            reason,
            format!("The workflow is not done and expects your work.\n{context}"),
            "{client}"
        );
        for text in [&context, &reason] {
            assert!(!text.contains("git orchestrate"), "{client}: {text}");
        }
    }
    // A checkpoint owed: the tool.
    for client in CLIENTS {
        let repo = TestRepo::at_green_step();
        repo.run(&["init", "--agent", client]).expect(0);
        repo.submit_test(RED, Some("PASS")).expect(0);
        let (context, _) = start_and_stop(&repo, client, None);
        assert!(
            context.contains("A checkpoint commit is owed: call the `checkpoint` tool."),
            "{client}: {context}"
        );
    }
}

/// On a ticket, an MCP session's role briefing at session start and the stop's next action
/// name the role's tools, per client.
#[test]
fn on_a_ticket_the_hooks_of_an_mcp_session_name_the_roles_tools() {
    for client in CLIENTS {
        let repo = TestRepo::new();
        repo.run(&["ticket", "new", "--title", "Add numbers"])
            .expect(0);
        repo.run(&["init", "--agent", client]).expect(0);
        let (context, reason) = start_and_stop(&repo, client, Some("manager"));
        assert!(
            context.contains("assign_to_developer {")
                && !context.contains("git orchestrate assign"),
            "{client}: {context}"
        );
        assert!(
            reason.ends_with(
                "Next: The manager assigns a subtask: `assign_to_developer {\"mode\": \"MODE\", \
                 \"goal\": \"TEXT\", \"acceptanceCriteria\": [\"TEXT\"], …}`\nCall the `get_task` \
                 tool for your full briefing, and act through your role's tools \
                 (assign_to_developer, update_subtask, complete_ticket)."
            ),
            "{client}: {reason}"
        );
        repo.run(&[
            "assign",
            "--role",
            "manager",
            "--mode",
            "implementation",
            "--goal",
            "add numbers",
            "--acceptance-criteria",
            "add.sh prints 5",
        ])
        .expect(0);
        let (context, reason) = start_and_stop(&repo, client, Some("developer"));
        assert!(
            context.contains("## Current Assignment")
                && context.contains("subtask_complete {")
                && !context.contains("git orchestrate subtask-complete"),
            "{client}: {context}"
        );
        assert!(
            reason.contains("Next: The developer commits its work on the ticket's branch and reports it: `subtask_complete {")
                && reason.ends_with("act through your role's tools (subtask_complete)."),
            "{client}: {reason}"
        );
    }
}
