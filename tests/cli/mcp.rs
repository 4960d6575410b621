//! `git orchestrate mcp` driven by a real MCP client (rmcp's own, over the server's stdio):
//! the whole loop, errors with the next action, a cancelled submit, protocol versions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

use crate::support::*;
use git_orchestrate::agent::mcp_text::for_mcp;

/// A client that remembers the progress notifications it hears.
#[derive(Clone)]
struct Client {
    info: ClientConfig,
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn connect(
    repo: &TestRepo,
    version: ProtocolVersion,
) -> (RunningService<RoleClient, Client>, Arc<Mutex<Vec<String>>>) {
    let command = tokio::process::Command::from(repo.command(BIN, ["mcp"]));
    let transport = TokioChildProcess::new(command).expect("the server starts");
    let progress = Arc::new(Mutex::new(Vec::new()));
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("git-orchestrate-tests", "1"),
    )
    .with_protocol_version(version);
    let client = Client {
        info,
        progress: progress.clone(),
    }
    .serve(transport)
    .await
    .expect("the handshake succeeds");
    (client, progress)
}

async fn call(
    client: &RunningService<RoleClient, Client>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        client.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args)),
    )
    .await
    .expect("answered in time")
    .expect("a tool result")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

fn structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

#[test]
fn a_real_client_drives_the_whole_loop_through_the_server() {
    let repo = TestRepo::new();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let tools: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(
            tools,
            ["get_task", "submit_work", "request_scope_reduction", "escalate_for_external_help", "checkpoint"]
        );

        // The briefing is the one `get-task` prints, the structured content its --json,
        // except that every agent command in it is named as the tool and its arguments.
        let task = call(&client, "get_task", json!({})).await;
        assert!(!is_error(&task));
        let mut cli = repo.run(&["get-task", "--json"]).expect(0).json();
        let briefing = for_mcp(cli["briefing"].as_str().unwrap());
        assert_eq!(text(&task), briefing);
        cli["briefing"] = json!(briefing);
        assert_eq!(structured(&task), cli);
        assert!(
            briefing.contains(
                "     submit_work {\"summary\": \"<one line>\", \"plan\": { ...the plan, as a JSON object... }}\n"
            ),
            "{briefing}"
        );
        assert!(briefing.contains("run `get_task`"), "{briefing}");
        assert!(
            briefing.contains("4. Submit the plan as the `plan` argument, a JSON object"),
            "{briefing}"
        );
        for command in ["get-task", "submit-work", "checkpoint", "escalate", "request-scope-reduction"] {
            assert!(
                !briefing.contains(&format!("git orchestrate {command}")),
                "{command} in {briefing}"
            );
        }

        let plan: Value = serde_json::from_str(PLAN).unwrap();
        let planned = call(&client, "submit_work", json!({"summary": "plan it", "plan": plan})).await;
        assert!(!is_error(&planned), "{}", text(&planned));
        assert_eq!(structured(&planned)["status"], "SUCCESS");
        assert_eq!(structured(&planned)["state"], "CREATING_BRANCH");

        let red = call(&client, "get_task", json!({})).await;
        assert_eq!(structured(&red)["step"]["type"], "RED");
        assert!(text(&red).contains("STEP 1.1 (RED)"), "{}", text(&red));

        let ran = call(
            &client,
            "submit_work",
            json!({"summary": "test add", "test_command": RED, "expectation": "FAIL"}),
        )
        .await;
        assert!(!is_error(&ran), "exit 3 is a normal result: {}", text(&ran));
        assert_eq!(structured(&ran)["status"], "NEEDS_ANALYSIS");
        let judged = call(
            &client,
            "submit_work",
            json!({"summary": "right reason", "analysis_decision": "SUCCESS"}),
        )
        .await;
        assert_eq!(structured(&judged)["status"], "SUCCESS");

        // A failing GREEN run is a normal result whose status says FAILURE.
        let failed = call(
            &client,
            "submit_work",
            json!({"summary": "not yet", "test_command": RED, "expectation": "PASS"}),
        )
        .await;
        assert!(!is_error(&failed));
        assert_eq!(structured(&failed)["status"], "FAILURE");
        // A small output is carried whole, with no note of a cut.
        assert!(structured(&failed)["output"].as_str().is_some_and(|o| !o.is_empty()));
        assert_eq!(structured(&failed).get("output_truncated"), None);
        assert!(text(&failed).starts_with("FAILURE: "), "{}", text(&failed));

        repo.write("add.sh", "echo 5\n");
        let green = call(
            &client,
            "submit_work",
            json!({"summary": "add works", "test_command": RED, "expectation": "PASS"}),
        )
        .await;
        assert_eq!(structured(&green)["status"], "SUCCESS", "{}", text(&green));
        assert_eq!(structured(&green)["pending"], "checkpoint");
        let checkpoint = call(&client, "checkpoint", json!({})).await;
        assert!(!is_error(&checkpoint), "{}", text(&checkpoint));
        let commit = structured(&checkpoint)["commit"].as_str().unwrap().to_string();
        assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), commit);
        let next = call(&client, "get_task", json!({})).await;
        assert!(text(&next).contains("STEP 1.3 (REFACTOR)"), "{}", text(&next));

        // The resources read what the commands print.
        let status = client
            .read_resource(ReadResourceRequestParams::new("orchestrate://status"))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text: status, .. } = &status.contents[0] else {
            panic!("text")
        };
        let status: Value = serde_json::from_str(status).unwrap();
        assert_eq!(status["state"], "EXECUTING_TDD");
        assert_eq!(status["tip"], json!(repo.tip()));
        let log = client
            .read_resource(ReadResourceRequestParams::new("orchestrate://output.log"))
            .await
            .unwrap();
        assert!(matches!(&log.contents[0], ResourceContents::TextResourceContents { text, .. } if text.contains("add: 5 ok")));
        client.cancel().await.unwrap();
    });
    // Every step went through the engine: the history replays clean.
    repo.run(&["audit"]).expect(0);
}

#[test]
fn errors_carry_the_next_action_and_change_nothing() {
    let repo = TestRepo::new();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let wrong = call(
            &client,
            "submit_work",
            json!({"summary": "x", "test_command": "true", "expectation": "PASS"}),
        )
        .await;
        assert!(is_error(&wrong));
        let error = &structured(&wrong)["error"];
        assert_eq!(error["code"], 4);
        assert_eq!(error["kind"], "wrong_state");
        assert!(
            text(&wrong).contains("hint: Submit a plan first"),
            "{}",
            text(&wrong)
        );
        // The refusal names the tool's argument, not the command line's flag.
        assert!(
            text(&wrong)
                .contains("submit_work with `test_command` is not accepted in state INITIALIZING"),
            "{}",
            text(&wrong)
        );
        assert!(!text(&wrong).contains("--test-command"), "{}", text(&wrong));
        assert!(
            !error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("submit-work"),
            "{error}"
        );
        // A plan given as a file's path: the server reads no file, and says what to pass.
        let path = call(
            &client,
            "submit_work",
            json!({"summary": "x", "plan": ".git/plan.json"}),
        )
        .await;
        assert!(is_error(&path));
        assert_eq!(structured(&path)["error"]["code"], 2);
        assert!(
            text(&path).contains("Pass the plan object, not a file"),
            "{}",
            text(&path)
        );

        for (args, message) in [
            (json!({"summary": ""}), "`summary` must not be empty"),
            (
                json!({"summary": "x", "bogus": 1}),
                "unknown argument(s): bogus",
            ),
            (
                json!({"summary": "x", "squash": "yes"}),
                "`squash` must be true or false",
            ),
            (
                json!({"summary": "x", "squash": true, "mark_done": true}),
                "squash and mark_done cannot be given together",
            ),
            (
                json!({"summary": "x", "test_command": "true", "plan": {}}),
                "test_command and plan cannot be given together",
            ),
            (
                json!({"summary": "x", "expectation": "PASS"}),
                "`expectation` needs a `test_command`",
            ),
            (
                json!({"summary": "x", "test_command": "true", "expectation": "MAYBE"}),
                "must be PASS or FAIL",
            ),
        ] {
            let bad = call(&client, "submit_work", args.clone()).await;
            assert!(is_error(&bad), "{args}");
            assert_eq!(structured(&bad)["error"]["code"], 2, "{args}");
            assert!(text(&bad).contains(message), "{args}: {}", text(&bad));
        }
        let bad_plan = call(
            &client,
            "submit_work",
            json!({"summary": "x", "plan": {"prTitle": 3}}),
        )
        .await;
        assert!(is_error(&bad_plan));
        assert_eq!(structured(&bad_plan)["error"]["code"], 2);
        assert!(
            text(&bad_plan).contains("prTitle: expected a string, found a number"),
            "{}",
            text(&bad_plan)
        );
        assert!(
            structured(&bad_plan)["error"]["problems"]
                .as_array()
                .is_some_and(|p| p.len() == 5)
        );

        let locked = call(&client, "request_scope_reduction", json!({})).await;
        assert!(is_error(&locked));
        assert_eq!(structured(&locked)["error"]["code"], 4);
        let locked = call(
            &client,
            "escalate_for_external_help",
            json!({"markdown_report": "help"}),
        )
        .await;
        assert!(is_error(&locked));
        assert_eq!(structured(&locked)["error"]["code"], 4);
        client.cancel().await.unwrap();
    });
    assert_eq!(repo.tip(), None, "nothing was written");
}

/// A summary or a test command with a NUL, an escape character or 9 MB is refused over MCP
/// with the message the command line gives, nothing written: the history stays valid for
/// `git fsck --strict`.
#[test]
fn text_fields_with_control_characters_or_bulk_are_refused_over_mcp_as_on_the_command_line() {
    let repo = TestRepo::at_first_step();
    let tip = repo.tip();
    let big = "x".repeat(9 * 1024 * 1024);
    let cases = [
        (
            json!({"summary": "a\u{0}b", "test_command": "sh test_add.sh", "expectation": "FAIL"}),
            "the summary holds a control character (NUL) at byte 1",
        ),
        (
            json!({"summary": "ok", "test_command": "sh test_add.sh\u{1b}[2J", "expectation": "FAIL"}),
            "the test command holds a control character (escape, U+001B) at byte 14",
        ),
        (
            json!({"summary": big, "test_command": "sh test_add.sh", "expectation": "FAIL"}),
            "the summary is 9437184 bytes long; at most 65536 bytes (64 KiB) are taken",
        ),
    ];
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        for (args, says) in &cases {
            let refused = call(&client, "submit_work", args.clone()).await;
            assert!(is_error(&refused), "{says}");
            assert_eq!(structured(&refused)["error"]["code"], 2, "{says}");
            assert!(text(&refused).contains(says), "{says}: {}", text(&refused));
        }
        client.cancel().await.unwrap();
    });
    assert_eq!(repo.tip(), tip, "nothing was written");
    // The command line says the same.
    let out = repo.run(&[
        "submit-work",
        "-s",
        "ok",
        "--test-command",
        "sh test_add.sh\u{1b}[2J",
    ]);
    out.expect(2);
    assert!(
        out.stderr
            .contains("the test command holds a control character (escape, U+001B) at byte 14"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip);
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// The guard judges a `test_command` before it runs, over MCP as on the command line.
#[test]
fn a_test_command_that_moves_main_is_refused_over_mcp() {
    let repo = TestRepo::at_first_step();
    let tip = repo.tip();
    let main = repo.git(&["rev-parse", "main"]);
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let refused = call(
            &client,
            "submit_work",
            json!({"summary": "x", "test_command": "git push . HEAD:main; false", "expectation": "FAIL"}),
        )
        .await;
        assert!(is_error(&refused));
        assert_eq!(structured(&refused)["error"]["code"], 2);
        assert!(
            text(&refused).contains("is refused, and nothing ran"),
            "{}",
            text(&refused)
        );
        client.cancel().await.unwrap();
    });
    assert_eq!(repo.tip(), tip, "nothing was written");
    assert_eq!(repo.git(&["rev-parse", "main"]), main, "main did not move");
}

#[test]
fn a_cancelled_submit_kills_the_test_and_records_nothing() {
    let repo = TestRepo::at_green_step();
    let tip = repo.tip();
    let pid_file = repo.path.join("test.pid");
    runtime().block_on(async {
        let (client, progress) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let Value::Object(args) = json!({
            "summary": "slow",
            "test_command": "sleep 301 & echo $! > sleep.pid; echo $$ > test.pid; wait",
            "expectation": "PASS"
        }) else {
            unreachable!()
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("submit_work").with_arguments(args),
        ));
        let handle = client
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        // The test runs, and the client hears about it.
        for _ in 0..200 {
            let written = std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n'));
            if written && !progress.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let heard = progress.lock().unwrap().clone();
        assert!(
            heard.iter().any(|m| m.contains("sleep 301")),
            "progress names the running command: {heard:?}"
        );
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        handle
            .cancel(Some("the test takes too long".into()))
            .await
            .unwrap();
        assert!(
            crate::process_gone(pid),
            "the test's shell {pid} was killed"
        );
        // The server goes on, and the workflow is where it was.
        let task = call(&client, "get_task", json!({})).await;
        assert!(text(&task).contains("STEP 1.2 (GREEN)"), "{}", text(&task));
        client.cancel().await.unwrap();
    });
    assert_eq!(repo.tip(), tip, "the cancelled call wrote nothing");
    // The background sleep was in the test's process group: it is gone too (its own pid,
    // since other tests run sleeps of their own meanwhile).
    let sleeper: i32 = std::fs::read_to_string(repo.path.join("sleep.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        crate::process_gone(sleeper),
        "the test's process group is gone"
    );
}

#[test]
fn both_protocol_versions_are_spoken() {
    let repo = TestRepo::new();
    for version in [ProtocolVersion::V_2024_11_05, ProtocolVersion::V_2025_11_25] {
        runtime().block_on(async {
            let (client, _) = connect(&repo, version.clone()).await;
            let info = client.peer_info().expect("the server's initialize result");
            assert_eq!(info.protocol_version, version);
            assert_eq!(info.server_info.clone().unwrap().name, "git-orchestrate");
            let task = call(&client, "get_task", json!({})).await;
            assert!(text(&task).contains("GOAL: plan the next pull request."));
            client.cancel().await.unwrap();
        });
    }
}

#[test]
fn the_workflow_is_chosen_by_flag_or_by_git_config() {
    let repo = TestRepo::new();
    repo.git(&["config", "orchestrate.workflow", "second"]);
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let task = call(&client, "get_task", json!({})).await;
        assert_eq!(structured(&task)["workflow"], "second");
        client.cancel().await.unwrap();
    });
    assert!(
        repo.git(&["for-each-ref", "refs/orchestrator/workflows/"])
            .contains("workflows/second")
    );
    // The CLI reads the same key; a flag wins over it.
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["workflow"],
        "second"
    );
    assert_eq!(
        repo.run(&["--workflow", "main", "status", "--json"])
            .expect(0)
            .json()["workflow"],
        "main"
    );
}

/// A test that prints megabytes: the result carries the end of its output and says where
/// the rest is, so a client's size limit never hides the verdict; `output.log` has it all.
#[test]
fn a_large_output_is_cut_to_its_end_in_the_result_and_whole_in_output_log() {
    let repo = TestRepo::at_first_step();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let command = "i=0; while [ $i -lt 30000 ]; do echo \"line $i of a very chatty test run\"; \
                       i=$((i+1)); done; echo 'the last line'; false";
        let result = call(
            &client,
            "submit_work",
            json!({"summary": "red", "test_command": command, "expectation": "FAIL"}),
        )
        .await;
        assert!(!is_error(&result), "{}", text(&result));
        let answer = structured(&result);
        let output = answer["output"].as_str().unwrap();
        assert!(output.len() <= 16 * 1024 + 100, "{} bytes", output.len());
        assert!(
            output.ends_with("the last line\n") || output.ends_with("the last line"),
            "{output}"
        );
        assert_eq!(
            output.lines().filter(|l| l.starts_with("line ")).count(),
            99
        );
        assert_eq!(answer["output_truncated"], true);
        assert!(
            answer["output_bytes"].as_u64().unwrap() > 900_000,
            "{answer:#}"
        );
        assert_eq!(answer["output_log"], "orchestrate://output.log");
        let whole = serde_json::to_string(&result).unwrap();
        assert!(
            whole.len() < 200 * 1024,
            "the whole result is {} bytes",
            whole.len()
        );
        let log = client
            .read_resource(ReadResourceRequestParams::new("orchestrate://output.log"))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text: log, .. } = &log.contents[0] else {
            panic!("text")
        };
        assert!(
            log.starts_with("line 0 of a very chatty test run\n"),
            "{}",
            &log[..100]
        );
        assert!(log.contains("line 29999 of"));
        client.cancel().await.unwrap();
    });
}

/// A RED test whose last lines are long (64 KiB of them reach the briefing): the analysis
/// briefing over MCP keeps its instructions ahead of the output and within what Claude Code
/// shows (its first 2 KB), all of it under 16 KiB, the output cut to its end, and where all
/// of it is.
#[test]
fn a_long_red_output_leaves_the_analysis_instructions_first_in_a_small_result() {
    let repo = TestRepo::at_first_step();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let command = "i=0; while [ $i -lt 30 ]; do printf 'E%04d %05000d\\n' $i 0; i=$((i+1)); done; \
                       echo 'the last line'; false";
        let result = call(
            &client,
            "submit_work",
            json!({"summary": "red", "test_command": command, "expectation": "FAIL"}),
        )
        .await;
        assert!(!is_error(&result), "{}", text(&result));
        assert!(text(&result).len() <= 16 * 1024, "{}", text(&result).len());
        let result_len = serde_json::to_string(&structured(&result)).unwrap().len();
        assert!(result_len <= 16 * 1024, "{result_len} bytes");
        // The result itself says how to answer first: in its text (Codex, Gemini CLI) right
        // under the headline, and in its structured content (Claude Code) right after status.
        let said = text(&result);
        let lines: Vec<&str> = said.lines().take(2).collect();
        assert!(
            lines[0].starts_with("NEEDS_ANALYSIS: ")
                && lines[1].starts_with(
                    "state: EXECUTING_TDD · next: judge why the RED test failed, then answer with \
                     exactly one of `submit_work {\"summary\": \"<why>\", \"analysis_decision\": \
                     \"SUCCESS\"}`"
                ),
            "{said}"
        );
        let keys: Vec<String> = structured(&result)
            .as_object()
            .unwrap()
            .keys()
            .take(3)
            .cloned()
            .collect();
        assert_eq!(keys, ["schema", "status", "next"]);
        // The analysis briefing that follows: its instructions ahead of the output, all of it
        // under 16 KiB (Claude Code shows a larger result as a 2 KB preview of a file), the
        // output cut to its end, and where all of it is.
        let briefing = call(&client, "get_task", json!({})).await;
        let shown = text(&briefing);
        let structured_len = serde_json::to_string(&structured(&briefing)).unwrap().len();
        assert!(shown.len() <= 16 * 1024, "{} bytes", shown.len());
        assert!(structured_len <= 16 * 1024, "{structured_len} bytes");
        let answer_at = shown
            .find("\"analysis_decision\": \"FAILURE\"}")
            .expect("the answer");
        assert!(answer_at < 2000, "the answer at byte {answer_at}");
        assert!(answer_at < shown.find("----- BEGIN OUTPUT").unwrap());
        assert!(
            shown.contains("all of it is in orchestrate://output.log]\n----- BEGIN OUTPUT"),
            "{shown}"
        );
        assert!(shown.contains("the last line\n----- END OUTPUT"), "{shown}");
        let log = client
            .read_resource(ReadResourceRequestParams::new("orchestrate://output.log"))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text: log, .. } = &log.contents[0] else {
            panic!("text")
        };
        assert!(log.starts_with("E0000 000"), "{}", &log[..20]);
        assert_eq!(log.len(), 30 * 5007 + "the last line\n".len());
        client.cancel().await.unwrap();
    });
}

/// A line that is not JSON gets JSON-RPC's parse error (id null) instead of silence; a
/// 10 MB method name is answered "method not found" with its first characters, not echoed
/// whole; the session goes on and answers the next request.
#[test]
fn garbled_lines_are_answered_and_nothing_is_echoed_whole() {
    use std::io::Write as _;
    let repo = TestRepo::at_first_step();
    let mut child = repo
        .command(BIN, ["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let long = "m".repeat(10 * 1024 * 1024);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let mut stdin = child.stdin.take().unwrap();
    let input = format!(
        "{init}\n{{not json\n{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 2, "method": long}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    );
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    assert!(
        by_id(json!(1)).unwrap()["result"].is_object(),
        "{answers:?}"
    );
    let parse = by_id(Value::Null).expect("a parse error");
    assert_eq!(parse["error"]["code"], -32700);
    let missing = by_id(json!(2)).expect("an answer to the long method");
    assert_eq!(missing["error"]["code"], -32601);
    assert!(missing.to_string().len() < 1000, "not echoed whole");
    assert!(
        by_id(json!(3)).is_some(),
        "the session went on: {answers:?}"
    );
}

/// A server started with `args` and the environment `env` (a ticket role, say).
async fn connect_with(
    repo: &TestRepo,
    args: &[&str],
    env: &[(&str, &str)],
) -> RunningService<RoleClient, Client> {
    let mut command = repo.command(BIN, args);
    for (key, value) in env {
        command.env(key, value);
    }
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(command)).expect("the server starts");
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("git-orchestrate-tests", "1"),
    );
    Client {
        info,
        progress: Arc::new(Mutex::new(Vec::new())),
    }
    .serve(transport)
    .await
    .expect("the handshake succeeds")
}

async fn tool_names(client: &RunningService<RoleClient, Client>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// `mcp --role`: each role's server lists exactly its tools (with the schemas `schema
/// --role` prints), makes every call in its own role, refuses a call out of turn with the
/// next legal action and bad input with each problem at its JSON path, as the command line
/// does; and a developer reports a real commit through it.
#[test]
fn each_ticket_role_has_its_own_server() {
    let repo = TestRepo::new();
    repo.run(&["ticket", "new", "--title", "Add numbers"])
        .expect(0);
    runtime().block_on(async {
        let manager = connect_with(&repo, &["mcp", "--role", "manager"], &[]).await;
        let developer = connect_with(&repo, &["mcp", "--role", "developer"], &[]).await;
        assert_eq!(
            tool_names(&manager).await,
            ["get_task", "assign_to_developer", "update_subtask", "complete_ticket"]
        );
        assert_eq!(tool_names(&developer).await, ["get_task", "subtask_complete"]);
        let listed: Vec<Value> = developer
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| json!({"name": t.name, "inputSchema": *t.input_schema}))
            .collect();
        let printed = repo.run(&["schema", "--role", "developer"]).expect(0).json();
        let printed: Vec<Value> = printed
            .as_array()
            .unwrap()
            .iter()
            .map(|t| json!({"name": t["name"], "inputSchema": t["inputSchema"]}))
            .collect();
        assert_eq!(listed, printed);

        // The manager's tool is not the developer server's to call.
        let absent = developer
            .call_tool(
                CallToolRequestParams::new("assign_to_developer").with_arguments(
                    json!({"mode": "implementation", "goal": "g", "acceptanceCriteria": ["c"]})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await;
        assert!(absent.is_err(), "{absent:?}");

        // Out of turn: the error the command line gives, with the next legal action.
        let early = call(
            &developer,
            "subtask_complete",
            json!({"status": "complete", "filesChanged": [], "buildStatus": "pass", "message": "m"}),
        )
        .await;
        assert!(is_error(&early));
        let cli = repo
            .run(&[
                "subtask-complete", "--role", "developer", "--status", "complete",
                "--build-status", "pass", "--message", "m", "--json",
            ])
            .expect(4)
            .json();
        // The same refusal, in each one's words: the tools over MCP, the commands here.
        let error = &structured(&early)["error"];
        assert_eq!(
            (&error["code"], &error["kind"]),
            (&cli["error"]["code"], &cli["error"]["kind"])
        );
        assert_eq!(
            error["message"],
            "`subtask_complete` is not allowed in state MANAGER"
        );
        assert_eq!(
            cli["error"]["message"],
            "`subtask-complete` is not allowed in state MANAGER"
        );
        assert!(
            error["hint"]
                .as_str()
                .unwrap_or_default()
                .ends_with("the manager assigns a subtask: `assign_to_developer {\"mode\": \"MODE\", \"goal\": \"TEXT\", \"acceptanceCriteria\": [\"TEXT\"], …}`"),
            "{error}"
        );
        assert!(
            text(&early).contains("the manager assigns a subtask"),
            "{}",
            text(&early)
        );
        let briefing = call(&developer, "get_task", json!({})).await;
        assert!(is_error(&briefing), "the manager's turn: {}", text(&briefing));
        assert_eq!(structured(&briefing)["role"], "developer");
        assert_eq!(structured(&briefing)["tools"], json!(["subtask_complete"]));

        // Bad input: every problem at its JSON path, nothing written.
        let tip = repo.tip();
        let bad = call(
            &manager,
            "assign_to_developer",
            json!({"mode": "everything", "goal": 3, "role": "developer"}),
        )
        .await;
        assert!(is_error(&bad));
        let mut paths: Vec<String> = structured(&bad)["error"]["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|p| p["path"].as_str().unwrap_or_default().to_string())
            .collect();
        paths.sort();
        assert_eq!(paths, ["acceptanceCriteria", "goal", "mode", "role"]);
        assert_eq!(repo.tip(), tip);

        let assigned = call(
            &manager,
            "assign_to_developer",
            json!({"mode": "implementation", "goal": "add numbers",
                   "filesToModify": ["add.sh"], "acceptanceCriteria": ["add.sh prints 5"]}),
        )
        .await;
        assert!(!is_error(&assigned), "{}", text(&assigned));
        assert!(text(&assigned).starts_with("S1 assigned to the developer"));
        assert!(
            text(&assigned).ends_with("(implementation); the developer's session gets it with `get_task`"),
            "{}",
            text(&assigned)
        );

        // The developer's work, committed, and reported through its server.
        let briefing = call(&developer, "get_task", json!({})).await;
        assert!(!is_error(&briefing), "{}", text(&briefing));
        assert!(text(&briefing).contains("## Current Assignment"));
        // It names its tool and the tool's arguments, as it calls them, not a command line.
        assert!(
            text(&briefing).contains(
                "reports it: `subtask_complete {\"status\": \"complete|blocked\", \"filesChanged\": \
                 [{\"path\": \"PATH\"}], \"buildStatus\": \"pass|fail\", \"message\": \"TEXT\", …}`"
            ),
            "{}",
            text(&briefing)
        );
        assert_eq!(
            structured(&briefing)["briefing"].as_str(),
            Some(text(&briefing).as_str())
        );
        assert!(!text(&briefing).contains("git orchestrate"), "{}", text(&briefing));
        repo.write("add.sh", "echo 5\n");
        repo.commit_all("add numbers");
        // No argument names another role: the server's is the only one.
        let posing = call(
            &developer,
            "subtask_complete",
            json!({"status": "complete", "filesChanged": [{"path": "add.sh"}],
                   "buildStatus": "pass", "message": "m", "role": "manager"}),
        )
        .await;
        assert!(is_error(&posing));
        assert_eq!(structured(&posing)["error"]["problems"][0]["path"], "role");
        let reported = call(
            &developer,
            "subtask_complete",
            json!({"status": "complete", "filesChanged": [{"path": "add.sh", "summary": "prints 5"}],
                   "buildStatus": "pass", "message": "add.sh prints 5"}),
        )
        .await;
        assert!(!is_error(&reported), "{}", text(&reported));
        assert!(
            text(&reported).contains("what was observed agrees with the report"),
            "{}",
            text(&reported)
        );
        let report = structured(&reported);
        assert_eq!(report["state"], "MANAGER");
        assert_eq!(
            report["ticket"]["subtasks"][0]["observed"]["gates"]["result"],
            "pass"
        );
        let head = repo.git(&["rev-parse", "HEAD"]);
        assert_eq!(
            report["ticket"]["subtasks"][0]["report"]["commit"],
            head.trim()
        );

        let briefing = call(&manager, "get_task", json!({})).await;
        assert!(!is_error(&briefing), "{}", text(&briefing));
        assert!(
            text(&briefing).contains(
                "verifies the developer's report: `update_subtask {\"status\": \
                 \"complete|rejected|blocked\", \"notes\": \"TEXT\"}`"
            ),
            "{}",
            text(&briefing)
        );
        for command in ["assign", "update-subtask", "complete-ticket", "subtask-complete"] {
            assert!(
                !text(&briefing).contains(&format!("git orchestrate {command}")),
                "{command}: {}",
                text(&briefing)
            );
        }
        let verified = call(
            &manager,
            "update_subtask",
            json!({"status": "complete", "notes": "checked"}),
        )
        .await;
        assert!(!is_error(&verified), "{}", text(&verified));
        assert_eq!(text(&verified), "S1 is now complete");
        manager.cancel().await.ok();
        developer.cancel().await.ok();
    });
}

/// Without --role a ticket workflow's server takes GIT_ORCHESTRATE_ROLE, and with no role
/// at all it does not start: one server with both roles' tools would let one agent play
/// both. A TDD workflow's server is as it was.
#[test]
fn a_ticket_server_without_a_role_takes_the_sessions_or_refuses_to_start() {
    let repo = TestRepo::new();
    repo.run(&["ticket", "new", "--title", "Add numbers"])
        .expect(0);
    let refused = Run::from(
        repo.command(BIN, ["mcp"])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run mcp"),
    );
    refused.expect(2);
    assert!(
        refused
            .stderr
            .contains("is a ticket workflow, and this MCP server has no role"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("--role manager"),
        "{}",
        refused.stderr
    );
    runtime().block_on(async {
        let developer =
            connect_with(&repo, &["mcp"], &[("GIT_ORCHESTRATE_ROLE", "developer")]).await;
        assert_eq!(
            tool_names(&developer).await,
            ["get_task", "subtask_complete"]
        );
        // The flag serves a session with no role of its own (one that has a role cannot be
        // served the other's: tests/cli/tickets.rs).
        let manager = connect_with(&repo, &["mcp", "--role", "manager"], &[]).await;
        assert_eq!(tool_names(&manager).await.len(), 4);
        let ticket = manager
            .read_resource(ReadResourceRequestParams::new("orchestrate://ticket"))
            .await
            .expect("the ticket resource");
        let ResourceContents::TextResourceContents { text, .. } = &ticket.contents[0] else {
            panic!("text")
        };
        let ticket: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ticket["state"], "MANAGER");
        assert_eq!(ticket["ticket"]["title"], "Add numbers");
        developer.cancel().await.ok();
        manager.cancel().await.ok();
    });
}

/// `submit_work` with `contradiction` halts for a human with the agent's account, as the
/// command line's `--contradiction` does; with another kind of work beside it, refused.
#[test]
fn a_contradiction_over_mcp_halts_for_a_human_with_the_account() {
    let repo = TestRepo::at_first_step();
    let account = "The task says add prints the sum; the pinned test expects the product.";
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let both = call(
            &client,
            "submit_work",
            json!({"summary": "x", "contradiction": account, "test_command": "true"}),
        )
        .await;
        assert!(is_error(&both));
        assert!(
            text(&both).contains("contradiction and test_command cannot be given together"),
            "{}",
            text(&both)
        );
        let halted = call(
            &client,
            "submit_work",
            json!({"summary": "the test contradicts the task", "contradiction": account}),
        )
        .await;
        assert!(!is_error(&halted), "{}", text(&halted));
        assert_eq!(structured(&halted)["state"], "HALTED", "{}", text(&halted));
        let briefing = text(&call(&client, "get_task", json!({})).await);
        assert!(briefing.contains(account), "{briefing}");
        assert!(
            briefing.contains("the agent reports that the task contradicts its test"),
            "{briefing}"
        );
        client.cancel().await.unwrap();
    });
    assert_eq!(repo.state()["halt"]["reason"], "contradiction");
    assert_eq!(
        repo.git(&["show", &format!("{REF}:escalation.md")]),
        account
    );
}

/// The server speaks over whatever stdio a client gives it: pipes (the SDK's client, in
/// the tests above), a socket pair each way (Node's child processes, so Claude Code's and
/// Gemini CLI's), and files (a script replaying a session), with the same answers; and the
/// client's socket is left blocking, as it was given, once the session ends.
#[test]
fn the_server_answers_alike_over_sockets_and_files() {
    use std::io::{BufRead as _, Write as _};
    use std::os::unix::net::UnixStream;
    let repo = TestRepo::at_first_step();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let input = format!(
        "{init}\n{}\n{}\n{}\n",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "get_task", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    );
    // By id: requests read at once are answered as each is done (a ping before a tool).
    let read = |text: &str| -> Vec<(Value, bool)> {
        let mut answers: Vec<(Value, bool)> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|a| (a["id"].clone(), a["result"].is_object()))
            .collect();
        answers.sort_by_key(|(id, _)| id.as_i64());
        answers
    };
    let expected = vec![(json!(1), true), (json!(2), true), (json!(3), true)];

    // Sockets: each answer read before the next request is written, as a client does.
    let (ours_in, theirs_in) = UnixStream::pair().unwrap();
    let (ours_out, theirs_out) = UnixStream::pair().unwrap();
    let mut child = repo
        .command(BIN, ["mcp"])
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs_in.try_clone().unwrap(),
        )))
        .stdout(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs_out.try_clone().unwrap(),
        )))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = ours_in.try_clone().unwrap();
    let mut reader = std::io::BufReader::new(ours_out.try_clone().unwrap());
    let mut said = String::new();
    for line in input.lines() {
        writeln!(writer, "{line}").unwrap();
        if line.contains("\"id\"") {
            reader.read_line(&mut said).unwrap();
        }
    }
    drop(writer);
    ours_in.shutdown(std::net::Shutdown::Both).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(read(&said), expected, "{said}");
    assert!(
        said.contains("RED"),
        "get_task's briefing came back: {said}"
    );
    for socket in [&theirs_in, &theirs_out] {
        let flags = rustix::fs::fcntl_getfl(socket).unwrap();
        assert!(
            !flags.contains(rustix::fs::OFlags::NONBLOCK),
            "left blocking"
        );
    }

    // Stdout and stderr one pipe (`2>&1`): tokio's stdio keeps stderr blocking.
    let (reader_end, writer_end) = std::io::pipe().unwrap();
    let mut child = repo
        .command(BIN, ["mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(writer_end.try_clone().unwrap())
        .stderr(writer_end)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let mut said = String::new();
    std::io::Read::read_to_string(&mut { reader_end }, &mut said).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(read(&said), expected, "{said}");

    // Files: the whole session read from one, the answers written to another.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in"), &input).unwrap();
    let status = repo
        .command(BIN, ["mcp"])
        .stdin(std::fs::File::open(dir.path().join("in")).unwrap())
        .stdout(std::fs::File::create(dir.path().join("out")).unwrap())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let said = std::fs::read_to_string(dir.path().join("out")).unwrap();
    assert_eq!(read(&said), expected, "{said}");
}

/// `get_task` over MCP against `get-task --json` run now: the text and the structured content
/// alike (the text with its commands named as tools), and whether it is an error.
async fn get_task_as_cli(
    client: &RunningService<RoleClient, Client>,
    repo: &TestRepo,
    code: i32,
) -> String {
    let task = call(client, "get_task", json!({})).await;
    let mut cli = repo.run(&["get-task", "--json"]).expect(code).json();
    let briefing = for_mcp(cli["briefing"].as_str().unwrap());
    assert_eq!(text(&task), briefing);
    cli["briefing"] = json!(briefing);
    assert_eq!(structured(&task), cli);
    assert_eq!(is_error(&task), code != 0, "{briefing}");
    briefing
}

/// A `get_task` that only briefs is answered by the server's protocol thread from a session of
/// its own (src/cli/mcp.rs, `brief_at_once`): it reads the repository as it is at each call,
/// whoever moved it (here the command line, between calls), exactly as `get-task` does.
#[test]
fn a_briefing_answered_at_once_reads_the_repository_as_it_is_at_each_call() {
    let repo = TestRepo::at_green_step();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        // The engine thread's first, then the protocol thread's.
        let green = get_task_as_cli(&client, &repo, 0).await;
        assert!(green.contains("STEP 1.2 (GREEN)"), "{green}");
        assert_eq!(get_task_as_cli(&client, &repo, 0).await, green);

        // A failing attempt made on the command line: the next briefing is the next attempt's.
        std::fs::remove_file(repo.path.join("add.sh")).unwrap();
        repo.submit_test(RED, Some("PASS")).expect(1);
        let again = get_task_as_cli(&client, &repo, 0).await;
        assert_ne!(again, green, "the briefing follows the failed attempt");

        // Each failed attempt's briefing, up to where escalating unlocks (attempt 10).
        let mut seen = vec![green, again];
        for attempt in 2..=10 {
            repo.submit_test(&format!("echo 'failure {attempt}'; exit 1"), None)
                .expect(1);
            let now = get_task_as_cli(&client, &repo, 0).await;
            assert!(!seen.contains(&now), "attempt {attempt}: {now}");
            seen.push(now);
        }
        // A halt made on the command line: the briefing is the halt's, an error (exit 10).
        repo.run_with_stdin(&["escalate", "--report", "-"], "# the key is missing\n")
            .expect(10);
        let halted = get_task_as_cli(&client, &repo, 10).await;
        assert!(halted.contains("the key is missing"), "{halted}");
        client.cancel().await.unwrap();
    });
    repo.run(&["audit"]).expect(0);
}

/// The protocol thread answers for the workflow the engine thread serves, never for one git
/// config selects after the server started: both were opened by that setting, at different
/// times.
#[test]
fn a_briefing_answered_at_once_is_the_served_workflows_after_the_selection_changed() {
    let repo = TestRepo::at_green_step();
    repo.git(&["config", "orchestrate.workflow", "second"]);
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        let first = call(&client, "get_task", json!({})).await;
        assert_eq!(structured(&first)["workflow"], "second");
        // Now `main`, at its GREEN step (a briefing the protocol thread would answer), is the
        // one git config selects.
        repo.git(&["config", "--unset", "orchestrate.workflow"]);
        for _ in 0..2 {
            let task = call(&client, "get_task", json!({})).await;
            assert_eq!(structured(&task)["workflow"], "second", "{}", text(&task));
            assert_eq!(text(&task), text(&first));
        }
        client.cancel().await.unwrap();
    });
}

/// Nor for another repository that a `.git` names by the time the protocol thread opens its
/// session: the server runs in a directory of the repository, and a gitfile put there then
/// names another; the engine thread's session stays in the one it found.
#[test]
fn a_briefing_answered_at_once_is_the_served_repositorys_after_a_gitfile_appeared() {
    let repo = TestRepo::at_green_step();
    let other = TestRepo::at_green_step();
    std::fs::remove_file(other.path.join("add.sh")).unwrap();
    other.submit_test(RED, Some("PASS")).expect(1);
    let theirs = other.run(&["get-task", "--json"]).expect(0).json();
    let sub = repo.path.join("sub");
    std::fs::create_dir(&sub).unwrap();
    runtime().block_on(async {
        let mut command = repo.command(BIN, ["mcp"]);
        command.current_dir(&sub);
        let transport = TokioChildProcess::new(tokio::process::Command::from(command))
            .expect("the server starts");
        let client = Client {
            info: ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new("git-orchestrate-tests", "1"),
            ),
            progress: Arc::new(Mutex::new(Vec::new())),
        }
        .serve(transport)
        .await
        .expect("the handshake succeeds");
        let first = call(&client, "get_task", json!({})).await;
        assert!(
            text(&first).contains("STEP 1.2 (GREEN)"),
            "{}",
            text(&first)
        );
        assert_ne!(structured(&first)["attempt"], theirs["attempt"]);
        std::fs::write(
            sub.join(".git"),
            format!("gitdir: {}\n", other.path.join(".git").display()),
        )
        .unwrap();
        for _ in 0..2 {
            let task = call(&client, "get_task", json!({})).await;
            assert_eq!(text(&task), text(&first));
            assert_eq!(structured(&task), structured(&first));
        }
        client.cancel().await.unwrap();
    });
}

/// A `get_task` sent while a `submit_work` runs waits for it, as every call did when only the
/// engine thread answered: it is not answered at once from the state before the submit.
#[test]
fn a_briefing_asked_for_during_a_submit_is_the_one_after_it() {
    let repo = TestRepo::at_green_step();
    runtime().block_on(async {
        let (client, _) = connect(&repo, ProtocolVersion::V_2025_11_25).await;
        // The protocol thread would answer this one at once.
        let green = call(&client, "get_task", json!({})).await;
        assert!(text(&green).contains("STEP 1.2 (GREEN)"), "{}", text(&green));
        let started = repo.path.join("started");
        let submit = call(
            &client,
            "submit_work",
            json!({"summary": "slow", "test_command": "touch started; sleep 2; exit 1", "expectation": "PASS"}),
        );
        let asked = async {
            for _ in 0..400 {
                if started.exists() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            assert!(started.exists(), "the submit's test started");
            call(&client, "get_task", json!({})).await
        };
        let (submitted, task) = tokio::join!(submit, asked);
        assert_eq!(structured(&submitted)["status"], "FAILURE", "{}", text(&submitted));
        let mut cli = repo.run(&["get-task", "--json"]).expect(0).json();
        cli["briefing"] = json!(for_mcp(cli["briefing"].as_str().unwrap()));
        assert_eq!(structured(&task), cli);
        assert_ne!(text(&task), text(&green));
        client.cancel().await.unwrap();
    });
}
