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

/// A ticket workflow has no TDD state for the guard to read: it judges by the configuration
/// (as before a workflow starts) instead of refusing every call, and the session-start and
/// stop hooks let the agent go on.
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
    let stop = json!({"session_id": "s", "cwd": cwd, "hook_event_name": "Stop",
                      "stop_hook_active": false});
    let stopped = hook(&repo, "claude", "stop", stop.to_string().as_bytes());
    stopped.expect(0);
    assert_eq!(stopped.stdout, allowed("claude"));
}
