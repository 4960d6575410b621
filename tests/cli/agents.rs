//! The real agent CLIs (Claude Code, Codex, Gemini CLI; pinned, installed with npm into a cache
//! outside the clone), run headless against a scripted fake model on 127.0.0.1
//! (tests/agents/fake_llm.py): its turns call our MCP tools and the shell, and the hooks
//! `init --agent` wired decide what happens. Skipped, loudly, only when `npm` is missing; a
//! failed install fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::*;

/// The pinned version: newer ones declare node ≥ 22, and an unpinned install on Node 20
/// silently picks an old one.
const CLAUDE_VERSION: &str = "2.1.330";

fn cache_dir() -> PathBuf {
    match std::env::var_os("GIT_ORCHESTRATE_CI_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/git-orchestrate-ci")
        }
    }
}

/// An agent CLI from npm, pinned; its cache directory's name and its binary.
struct Cli {
    package: &'static str,
    version: &'static str,
    dir: &'static str,
    bin: &'static str,
}

const CLAUDE: Cli = Cli {
    package: "@anthropic-ai/claude-code",
    version: CLAUDE_VERSION,
    dir: "claude-code",
    bin: "claude",
};
/// Codex CLI and Gemini CLI, at the versions these tests were written against.
const CODEX: Cli = Cli {
    package: "@openai/codex",
    version: "0.169.0",
    dir: "codex",
    bin: "codex",
};
const GEMINI: Cli = Cli {
    package: "@google/gemini-cli",
    version: "0.61.0",
    dir: "gemini-cli",
    bin: "gemini",
};

/// The `claude` binary, installed once per machine; `None` only when npm is missing.
fn claude_bin() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| install(&CLAUDE)).clone()
}

fn codex_bin() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| install(&CODEX)).clone()
}

fn gemini_bin() -> Option<PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| install(&GEMINI)).clone()
}

/// Installs `cli` into the cache unless it is there; `None` only when npm is missing. A
/// failed install (an unreachable registry) fails the test.
fn install(cli: &Cli) -> Option<PathBuf> {
    let (package, version) = (cli.package, cli.version);
    let prefix = cache_dir().join(format!("{}-{version}", cli.dir));
    let bin = prefix.join("node_modules/.bin").join(cli.bin);
    if bin.exists() {
        return Some(bin);
    }
    if Command::new("npm").arg("--version").output().is_err() {
        // In CI (.ci/run installs npm) a missing npm is a broken machine, never a skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "the real agent CLI tests need `npm`, which is not installed (.ci/run installs it)"
        );
        eprintln!(
            "\n*** SKIPPED: the real agent CLI tests need `npm` (Node.js), which is not installed ***\n"
        );
        return None;
    }
    // Into a directory of its own, renamed into place: a concurrent or killed install never
    // leaves a half-installed cache behind.
    let staging = cache_dir().join(format!("{}-{version}.{}", cli.dir, std::process::id()));
    std::fs::create_dir_all(&staging).expect("create the npm cache directory");
    eprintln!("installing {package}@{version} into {}", prefix.display());
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&staging)
        .arg(format!("{package}@{version}"))
        // Claude Code's install script fetches its native binary; none of them should see the
        // clone the tests run in.
        .current_dir(&staging)
        .stdin(Stdio::null())
        .output()
        .expect("run npm");
    assert!(
        out.status.success(),
        "npm could not install {package}@{version} (is the registry reachable?):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if std::fs::rename(&staging, &prefix).is_err() {
        // Another run got there first.
        let _ = std::fs::remove_dir_all(&staging);
    }
    assert!(bin.exists(), "npm installed no {}", bin.display());
    Some(bin)
}

/// The scripted model, a child process; killed when dropped.
struct FakeModel {
    child: std::process::Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl FakeModel {
    fn start(turns: Value) -> FakeModel {
        Self::with_script(json!({ "turns": turns }))
    }

    /// A model that answers by the prompt of each conversation: `[{"match", "turns"}]`.
    fn start_by_prompt(entries: Value) -> FakeModel {
        Self::with_script(json!({ "by_prompt": entries }))
    }

    fn with_script(script_json: Value) -> FakeModel {
        let dir = tempfile::tempdir().expect("temp dir");
        let script = dir.path().join("script.json");
        std::fs::write(&script, script_json.to_string()).expect("write the script");
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/fake_llm.py");
        let port_file = dir.path().join("port");
        let child = Command::new("python3")
            .arg(server)
            .arg(&script)
            .arg(dir.path().join("log.jsonl"))
            .arg(&port_file)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the fake model");
        let start = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().expect("a port");
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the fake model did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        FakeModel { child, dir, port }
    }

    /// Every request Claude Code made, in order.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("log.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a logged request"))
            .collect()
    }

    /// The conversation as the model last saw it.
    fn conversation(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .rev()
            .find_map(|r| r["body"]["messages"].as_array().cloned())
            .unwrap_or_default()
    }

    /// How many turns the model answered: the assistant turns in the last request, and that
    /// request's own answer.
    fn turns(&self) -> usize {
        self.conversation()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count()
            + 1
    }

    /// The result of the tool call made in script turn `turn`: its text and is_error.
    fn tool_result(&self, turn: usize) -> (String, bool) {
        let id = format!("toolu_{turn:02}_00");
        for message in self.conversation() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" && block["tool_use_id"] == id {
                    let text = match &block["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join(""),
                        other => other.to_string(),
                    };
                    return (text, block["is_error"] == true);
                }
            }
        }
        panic!("no result for the tool call of turn {turn}")
    }

    /// The model turns (requests for an answer, whichever API) and the tool calls among
    /// them (the requests that carry a tool's result back), for the figures a test prints.
    fn figures(&self) -> (usize, usize) {
        let asked: Vec<Value> = self
            .requests()
            .into_iter()
            .filter(|r| {
                r["path"].as_str().is_some_and(|p| {
                    p.contains("/v1/messages")
                        || p.contains("/v1/responses")
                        || p.contains("streamGenerateContent")
                })
            })
            .collect();
        let calls = asked
            .iter()
            .filter(|r| {
                let body = &r["body"];
                let last = |key: &str| body[key].as_array().and_then(|a| a.last()).cloned();
                if let Some(messages) = body["messages"].as_array() {
                    // Claude Code may add a message of its own after the tool's result.
                    messages
                        .iter()
                        .rev()
                        .take_while(|m| m["role"] != "assistant")
                        .any(|m| {
                            m["content"]
                                .as_array()
                                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
                        })
                } else if let Some(item) = last("input") {
                    item["type"]
                        .as_str()
                        .is_some_and(|t| t.ends_with("_output"))
                } else if let Some(content) = last("contents") {
                    content["parts"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()))
                } else {
                    false
                }
            })
            .count();
        (asked.len(), calls)
    }

    /// The texts of what the hooks told the model (system or user messages).
    fn hook_messages(&self, prefix: &str) -> Vec<String> {
        let mut found = Vec::new();
        for message in self.conversation() {
            let texts: Vec<String> = match &message["content"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            found.extend(texts.into_iter().filter(|t| t.starts_with(prefix)));
        }
        found
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `claude -p` in the repository, headless, against the fake model; killed after 3 minutes.
fn run_claude(repo: &TestRepo, claude: &Path, model: &FakeModel) -> Output {
    let mut cmd = repo.command(
        claude.to_str().expect("utf-8 path"),
        [
            "-p",
            "Work on this repository.",
            "--output-format",
            "json",
            "--dangerously-skip-permissions",
        ],
    );
    cmd.env(
        "ANTHROPIC_BASE_URL",
        format!("http://127.0.0.1:{}", model.port),
    )
    .env("ANTHROPIC_API_KEY", "dummy")
    .env("DISABLE_TELEMETRY", "1")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1")
    .env("IS_SANDBOX", "1")
    .env("ENABLE_TOOL_SEARCH", "false");
    run_agent(cmd)
}

/// Runs an agent CLI headless (stdin closed) in its own process group, killed after 3
/// minutes.
fn run_agent(mut cmd: Command) -> Output {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = cmd.spawn().expect("the agent CLI starts");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(180)) {
        Ok(out) => out.expect("the agent CLI ran"),
        Err(_) => {
            // SAFETY-free: kill(2) through the libc crate on the group we made.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            panic!("the agent CLI did not finish in 3 minutes");
        }
    }
}

fn mcp(tool: &str, input: Value) -> Value {
    json!([{"tool_use": {"name": format!("mcp__orchestrate__{tool}"), "input": input}}])
}

fn bash(command: &str) -> Value {
    json!([{"tool_use": {"name": "Bash", "input": {"command": command, "description": "run it"}}}])
}

fn say(text: &str) -> Value {
    json!([{ "text": text }])
}

#[test]
fn claude_code_works_a_step_through_mcp_and_the_hooks_keep_it_honest() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "git-orchestrate agent-hook claude pre-tool-use"
    );
    let plan: Value = serde_json::from_str(&one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let model = FakeModel::start(json!([
        /* 0 */ mcp("get_task", json!({})),
        /* 1 */ bash("git commit --no-verify --allow-empty -m sneaky"),
        /* 2 */
        mcp(
            "submit_work",
            json!({"summary": "plan the PR", "plan": plan})
        ),
        /* 3 */ mcp("get_task", json!({})),
        /* 4 */
        mcp(
            "submit_work",
            json!({"summary": "RED", "test_command": "test -e add.sh", "expectation": "FAIL"})
        ),
        /* 5 */
        mcp(
            "submit_work",
            json!({"summary": "add.sh is missing", "analysis_decision": "SUCCESS"})
        ),
        /* 6 */ bash("sh run_tests.sh"),
        /* 7 */ bash("echo 'add.sh v1' > add.sh"),
        /* 8 */ say("I think I am done."),
        /* 9 */
        mcp(
            "submit_work",
            json!({"summary": "GREEN", "test_command": "test -e add.sh", "expectation": "PASS"})
        ),
        /* 10 */ mcp("checkpoint", json!({})),
        /* 11 */ say("Done."),
        /* 12 */ say("Done!"),
        /* 13 */ say("Really done."),
        /* 14 */ say("Stopping."),
    ]));
    let out = run_claude(&repo, &claude, &model);
    assert!(
        out.status.success(),
        "claude failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The session started with the workflow's briefing in the model's context.
    let first = serde_json::to_string(&model.requests()[0]["body"]).unwrap();
    assert!(
        first.contains("git-orchestrate: workflow main is in state INITIALIZING"),
        "{first}"
    );
    // The MCP tools answered.
    let (task, error) = model.tool_result(0);
    assert!(
        !error && task.contains("GOAL: plan the next pull request."),
        "{task}"
    );
    let (red, _) = model.tool_result(4);
    assert!(red.contains("NEEDS_ANALYSIS"), "{red}");
    // The guard's denials reached the model, with the legal route.
    let (denied, error) = model.tool_result(1);
    assert!(error, "{denied}");
    assert!(
        denied.contains("PreToolUse:Bash hook error")
            && denied.contains("git orchestrate checkpoint"),
        "{denied}"
    );
    let (denied, error) = model.tool_result(6);
    assert!(
        error && denied.contains("preflight gate's command") && denied.contains("submit-work"),
        "{denied}"
    );
    let (written, error) = model.tool_result(7);
    assert!(!error, "an ordinary command runs: {written}");
    // The Stop hook kept the agent going while the step was open, then let it go after
    // [agent] max_stop_blocks blocks with no progress.
    let stops = model.hook_messages("Stop hook feedback:");
    assert_eq!(stops.len(), 4, "{stops:#?}");
    assert!(
        stops[0].contains("Current step 1.2 (GREEN)"),
        "{}",
        stops[0]
    );
    assert_eq!(model.turns(), 15, "every turn of the script was played");

    // The workflow moved only through submit_work and checkpoint, and nothing else was
    // committed.
    assert!(
        !repo
            .git(&["log", "--all", "--format=%s"])
            .contains("sneaky")
    );
    let subject = repo.git(&["log", "-1", "--format=%s"]);
    assert_eq!(
        subject.trim(),
        "checkpoint: 1.2 create add.sh",
        "{:?}",
        model.tool_result(10)
    );
    let events: Vec<String> = repo.run(&["log", "--json"]).expect(0).json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        events,
        [
            "create",
            "plan",
            "branch",
            "test",
            "analysis",
            "test",
            "checkpoint"
        ]
    );
    repo.run(&["audit"]).expect(0);
}

#[test]
fn claude_code_stops_when_nothing_is_left() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
    );
    repo.commit_all("plan: all done");
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let model = FakeModel::start(json!([
        mcp("get_task", json!({})),
        mcp(
            "submit_work",
            json!({"summary": "every PR is [DONE]", "no_pr_left": true})
        ),
        say("Nothing is left to do."),
    ]));
    let out = run_claude(&repo, &claude, &model);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (said, error) = model.tool_result(1);
    assert!(!error && said.contains("nothing left to do"), "{said}");
    assert_eq!(
        model.hook_messages("Stop hook feedback:"),
        Vec::<String>::new(),
        "the agent may stop"
    );
    assert_eq!(model.turns(), 3, "it stopped after saying so");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
}

/// A CODEX_HOME whose config points Codex at the fake model and nothing else: the project
/// is not trusted, as on a user's first run.
fn codex_home(model: &FakeModel) -> tempfile::TempDir {
    codex_home_with(model, "")
}

/// [`codex_home`] with `more` appended to its config.
fn codex_home_with(model: &FakeModel, more: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-fake\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n\n{more}",
            model.port,
        ),
    )
    .expect("write the Codex config");
    home
}

/// A HOME whose Gemini CLI user settings choose API-key auth.
fn gemini_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(home.path().join(".gemini")).expect("mkdir .gemini");
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
    )
    .expect("write the Gemini user settings");
    home
}

/// `codex exec` in the repository against the fake model (the Responses API), with an
/// empty CODEX_HOME of its own: `--trust` makes the project's `.codex/` files count, as the
/// message of `init --agent codex` tells a user in automation.
fn run_codex(repo: &TestRepo, codex: &Path, model: &FakeModel) -> Output {
    let home = codex_home(model);
    let mut cmd = repo.command(
        codex.to_str().expect("utf-8 path"),
        [
            "exec",
            "--dangerously-bypass-approvals-and-sandbox",
            "--trust",
            "--dangerously-bypass-hook-trust",
            "Work on this repository.",
        ],
    );
    cmd.env("CODEX_HOME", home.path()).env("FAKE_KEY", "dummy");
    run_agent(cmd)
}

/// `gemini -p` in the repository against the fake model, with a HOME whose user settings
/// choose API-key auth.
fn run_gemini(repo: &TestRepo, gemini: &Path, model: &FakeModel) -> Output {
    let home = gemini_home();
    let mut cmd = repo.command(
        gemini.to_str().expect("utf-8 path"),
        ["-p", "Work on this repository.", "--yolo"],
    );
    cmd.env("HOME", home.path())
        .env(
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("GEMINI_API_KEY", "dummy")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    run_agent(cmd)
}

/// The last request the model got, as JSON text: its whole conversation.
fn last_request(model: &FakeModel, path_part: &str) -> Value {
    model
        .requests()
        .into_iter()
        .rev()
        .find(|r| r["path"].as_str().is_some_and(|p| p.contains(path_part)))
        .map(|r| r["body"].clone())
        .expect("the agent asked the model")
}

fn succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "the agent CLI failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn codex_wired_by_init_agent_calls_the_mcp_tools_and_obeys_the_hooks() {
    let Some(codex) = codex_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "codex"]).expect(0);
    let model = FakeModel::start(json!([
        [{"tool_use": {"namespace": "mcp__orchestrate", "name": "get_task", "input": {}}}],
        [{"tool_use": {"name": "exec_command", "input": {"cmd": "git commit --no-verify --allow-empty -m sneaky"}}}],
        say("Done."),
    ]));
    let out = run_codex(&repo, &codex, &model);
    succeeded(&out);
    let input = last_request(&model, "/v1/responses")["input"].clone();
    let items = input.as_array().unwrap();
    let output_of = |call: &str| {
        items
            .iter()
            .find(|i| i["type"] == "function_call_output" && i["call_id"] == call)
            .map(|i| i["output"].to_string())
            .unwrap_or_else(|| panic!("no output for {call}: {input:#}"))
    };
    let task = output_of("call_00_00");
    assert!(task.contains("GOAL: plan the next pull request."), "{task}");
    let denied = output_of("call_01_00");
    assert!(
        denied.contains("Command blocked by PreToolUse hook: git-orchestrate:")
            && denied.contains("--no-verify"),
        "{denied}"
    );
    let text = input.to_string();
    assert!(
        text.contains("git-orchestrate: workflow main is in state INITIALIZING"),
        "the session-start context"
    );
    // Codex sets stop_hook_active; our own guard lets it go after three blocks all the same.
    assert_eq!(text.matches("<hook_prompt").count(), 3, "{text}");
    assert!(
        !repo
            .git(&["log", "--all", "--format=%s"])
            .contains("sneaky")
    );
}

#[test]
fn gemini_wired_by_init_agent_calls_the_mcp_tools_and_obeys_the_hooks() {
    let Some(gemini) = gemini_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "gemini"]).expect(0);
    let model = FakeModel::start(json!([
        [{"tool_use": {"name": "mcp_orchestrate_get_task", "input": {}}}],
        [{"tool_use": {"name": "run_shell_command", "input": {"command": "git commit --no-verify --allow-empty -m sneaky"}}}],
        say("Done."),
    ]));
    let out = run_gemini(&repo, &gemini, &model);
    succeeded(&out);
    let contents = last_request(&model, "streamGenerateContent")["contents"].clone();
    let response_of = |tool: &str| {
        contents
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .find(|p| p["functionResponse"]["name"] == tool)
            .map(|p| p["functionResponse"]["response"].to_string())
            .unwrap_or_else(|| panic!("no response for {tool}: {contents:#}"))
    };
    let task = response_of("mcp_orchestrate_get_task");
    assert!(task.contains("GOAL: plan the next pull request."), "{task}");
    let denied = response_of("run_shell_command");
    assert!(
        denied.contains("Tool execution blocked: git-orchestrate:")
            && denied.contains("--no-verify"),
        "{denied}"
    );
    let text = contents.to_string();
    assert!(
        text.contains("<hook_context>git-orchestrate: workflow main is in state INITIALIZING"),
        "the session-start context"
    );
    // Gemini CLI does not set stop_hook_active: only our loop guard ends the blocks.
    assert_eq!(
        text.matches("The workflow is not done and expects your work.")
            .count(),
        3,
        "{text}"
    );
    assert!(
        !repo
            .git(&["log", "--all", "--format=%s"])
            .contains("sneaky")
    );
}

/// `git orchestrate run --agent claude --json` against the fake model: the real `claude`
/// first on PATH, with the offline environment; its exit code and JSON events.
fn run_with_claude(
    repo: &TestRepo,
    claude: &Path,
    model: &FakeModel,
    extra: &[&str],
) -> (i32, Vec<Value>) {
    let base = format!("http://127.0.0.1:{}", model.port);
    run_driver(
        repo,
        "claude",
        claude,
        &[
            ("ANTHROPIC_BASE_URL", base.as_str()),
            ("ANTHROPIC_API_KEY", "dummy"),
            ("DISABLE_TELEMETRY", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("IS_SANDBOX", "1"),
            ("ENABLE_TOOL_SEARCH", "false"),
        ],
        extra,
    )
}

/// `git orchestrate run --agent AGENT --json` with the agent's CLI first on PATH and `env`.
fn run_driver(
    repo: &TestRepo,
    agent: &str,
    cli: &Path,
    env: &[(&str, &str)],
    extra: &[&str],
) -> (i32, Vec<Value>) {
    let path = path_with(cli);
    let mut args = vec!["--json", "run", "--agent", agent];
    args.extend_from_slice(extra);
    let mut cmd = repo.command(BIN, &args);
    cmd.env("PATH", path);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = run_agent(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "not JSON ({e}): {l}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect();
    (out.status.code().unwrap_or(-1), events)
}

fn turns_of<'a>(events: &'a [Value], key: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["event"] == "turn")
        .map(|e| &e[key])
        .collect()
}

/// The briefings of a one-task PR, each answered as a careful agent would: through the MCP
/// tools, and the shell for the squash and the master plan.
fn careful_agent(plan_file: &Path) -> Value {
    let plan = plan_file.display();
    json!([
        {"match": "GOAL: plan the next pull request.", "turns": [
            bash(&format!(
                "if grep -q DONE docs/plan.md; then git orchestrate submit-work -s 'every PR is done' --no-pr-left; \
                 else git orchestrate submit-work -s 'plan the PR' --plan {plan}; fi"
            )),
            say("Planned, or nothing left."),
        ]},
        {"match": "STEP 1.1 (RED)", "turns": [
            mcp("submit_work", json!({"summary": "RED", "test_command": "test -e add.sh", "expectation": "FAIL"})),
            mcp("submit_work", json!({"summary": "add.sh is missing", "analysis_decision": "SUCCESS"})),
            say("RED done."),
        ]},
        {"match": "STEP 1.2 (GREEN)", "turns": [
            bash("echo 'add.sh v1' > add.sh"),
            mcp("submit_work", json!({"summary": "GREEN", "test_command": "test -e add.sh", "expectation": "PASS"})),
            mcp("checkpoint", json!({})),
            say("GREEN done."),
        ]},
        {"match": "Finalize the PR: squash", "turns": [
            bash("git reset --soft $(git merge-base main HEAD) && git commit -q -m 'feat: Add numbers'"),
            mcp("submit_work", json!({"summary": "squashed"})),
            say("Squashed."),
        ]},
        {"match": "Update the master plan", "turns": [
            bash("sed -i \"s/feat: Add numbers/feat: Add numbers [DONE] $(git rev-parse HEAD)/\" docs/plan.md && git add docs/plan.md && git commit -q -m 'docs: mark done'"),
            mcp("submit_work", json!({"summary": "master plan updated"})),
            say("Marked done."),
        ]},
    ])
}

#[test]
fn run_with_claude_code_works_a_plan_end_to_end_and_stops_when_nothing_is_left() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Claude Code"]);
    let plan = repo.path.with_extension("plan.json");
    std::fs::write(&plan, one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let model = FakeModel::start_by_prompt(careful_agent(&plan));
    let (code, events) = run_with_claude(&repo, &claude, &model, &[]);
    assert_eq!(code, 0, "{events:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "idle", "{events:#?}");
    let states: Vec<&str> = turns_of(&events, "state")
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        [
            "INITIALIZING",
            "EXECUTING_TDD",
            "EXECUTING_TDD",
            "AWAITING_FINALIZATION",
            "FINALIZE_COMPLETE",
            "INITIALIZING"
        ]
    );
    assert!(turns_of(&events, "progressed").iter().all(|p| **p == true));
    // One Claude Code session, continued turn after turn.
    let ids: Vec<&Value> = turns_of(&events, "session_id");
    assert!(
        ids.iter().all(|id| *id == ids[0] && id.is_string()),
        "{ids:?}"
    );
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
    assert!(
        repo.git(&["log", "--format=%s", "main"])
            .contains("feat: Add numbers")
    );
    repo.run(&["audit"]).expect(0);
    // The ledger: Claude Code's own figures, from its `result` (the fake model reports 10
    // input and 5 output tokens for every request), turn by turn and in all.
    let requests = model
        .requests()
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or("").starts_with("/v1/messages"))
        .count() as u64;
    let usages = turns_of(&events, "usage");
    assert!(
        usages.iter().all(
            |u| u["input_tokens"].as_u64().unwrap_or(0) > 0 && u["cost_usd"].as_f64().is_some()
        ),
        "{usages:#?}"
    );
    let sum = |key: &str| usages.iter().map(|u| u[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(
        (sum("input_tokens"), sum("output_tokens")),
        (10 * requests, 5 * requests)
    );
    let board = repo.run(&["board", "--json"]).expect(0).json();
    let ledger = &board["workflows"][0]["ledger"];
    assert_eq!(
        (
            &ledger["turns"],
            &ledger["turns_reporting"],
            &ledger["tokens"]
        ),
        (
            &json!(6),
            &json!(6),
            &json!({"input": 10 * requests, "output": 5 * requests})
        ),
        "{ledger}"
    );
    let cost: f64 = usages.iter().map(|u| u["cost_usd"].as_f64().unwrap()).sum();
    assert!(
        (ledger["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-12,
        "{ledger}"
    );
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: claude, a whole PR under run: {} run turns, {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len()
    );
}

#[test]
fn run_with_claude_code_halts_a_stuck_agent_after_a_fresh_session() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Claude Code"]);
    let plan = repo.path.with_extension("plan.json");
    std::fs::write(&plan, one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let mut script = careful_agent(&plan);
    // On GREEN this agent only talks.
    let cannot = say("I cannot make this pass.");
    script[2]["turns"] = json!([cannot, cannot, cannot, cannot]);
    let model = FakeModel::start_by_prompt(script);
    let (code, events) = run_with_claude(
        &repo,
        &claude,
        &model,
        &["--retry", "auto", "--fresh-after", "2"],
    );
    assert_eq!(code, 10, "{events:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "stuck");
    let sessions: Vec<&str> = turns_of(&events, "session")
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["fresh", "same", "same", "same", "fresh"]);
    let ids = turns_of(&events, "session_id");
    assert_eq!(ids[1], ids[3]);
    assert_ne!(ids[3], ids[4], "a fresh Claude Code session");
    let status = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(status["halt"]["reason"], "stuck");
    let report = repo.git(&["show", "refs/orchestrator/workflows/main:escalation.md"]);
    assert!(
        report.contains("    I cannot make this pass."),
        "what the agent said: {report}"
    );
    assert!(
        report.contains("    git-orchestrate · workflow main · EXECUTING_TDD"),
        "the briefing: {report}"
    );
}

#[test]
fn run_with_claude_code_ends_a_loop_of_denied_commands_and_blocked_stops() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Claude Code"]);
    // An agent that only ever runs the gate itself (denied) and then tries to stop (blocked):
    // without the Stop hook's loop guard and the run's stuck rule this would never end.
    let model = FakeModel::start_by_prompt(json!([
        {"match": "GOAL: plan the next pull request.", "turns": [bash("sh run_tests.sh"), say("Tests first.")]},
    ]));
    let (code, events) = run_with_claude(&repo, &claude, &model, &[]);
    assert_eq!(code, 10, "{events:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "stuck");
    assert_eq!(turns_of(&events, "progressed").len(), 3);
    // Each of the three sessions stopped after [agent] max_stop_blocks blocked stops.
    // The session goes on from turn to turn: its last request holds every blocked stop.
    let feedback = model
        .requests()
        .iter()
        .map(|r| {
            serde_json::to_string(&r["body"]["messages"])
                .unwrap()
                .matches("Stop hook feedback:")
                .count()
        })
        .max()
        .unwrap_or(0);
    assert_eq!(feedback, 9, "three blocked stops in each of three turns");
    let denied = serde_json::to_string(&model.requests()).unwrap();
    assert!(denied.contains("preflight gate's command"));
}

/// Codex and Gemini CLI under `run`, started from empty homes in a project neither has
/// trusted (a user's first run): `run` makes each load the project's settings, so the guard
/// denies a commit around the hooks, and the agent's `--no-pr-left` ends the run.
/// The shell tool starts a login shell that may reset PATH, so the agent names the binary.
#[test]
fn run_with_codex_and_gemini_from_untrusted_homes_is_guarded_and_ends_when_nothing_is_left() {
    let (Some(codex), Some(gemini)) = (codex_bin(), gemini_bin()) else {
        return;
    };
    let done = format!("{BIN} submit-work -s 'every PR is done' --no-pr-left");
    let sneaky = "git commit --no-verify --allow-empty -m 'checkpoint: sneaky'";
    for agent in ["codex", "gemini"] {
        let repo = TestRepo::new();
        repo.write(
            "docs/plan.md",
            "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
        );
        repo.commit_all("plan: all done");
        repo.run(&["init", "--agent", agent]).expect(0);
        let main = repo.git(&["rev-parse", "main"]);
        let shell = |command: &str| match agent {
            "codex" => json!([{"tool_use": {"name": "exec_command", "input": {"cmd": command}}}]),
            _ => {
                json!([{"tool_use": {"name": "run_shell_command", "input": {"command": command}}}])
            }
        };
        let model = FakeModel::start(json!([
            shell(sneaky),
            shell(&done),
            say("Nothing is left to do.")
        ]));
        let base = format!("http://127.0.0.1:{}", model.port);
        let (code, events) = if agent == "codex" {
            let home = codex_home(&model);
            let codex_home = home.path().display().to_string();
            run_driver(
                &repo,
                agent,
                &codex,
                &[("CODEX_HOME", &codex_home), ("FAKE_KEY", "dummy")],
                &[],
            )
        } else {
            let home = gemini_home();
            let gemini_home = home.path().display().to_string();
            run_driver(
                &repo,
                agent,
                &gemini,
                &[
                    ("HOME", &gemini_home),
                    ("GOOGLE_GEMINI_BASE_URL", &base),
                    ("GEMINI_API_KEY", "dummy"),
                ],
                &[],
            )
        };
        assert_eq!(code, 0, "{agent}: {events:#?}");
        assert_eq!(events.last().unwrap()["outcome"], "idle", "{agent}");
        // A project nobody judged: the run trusts it, and says so first.
        assert_eq!(
            (&events[0]["event"], &events[0]["client"]),
            (&json!("trust"), &json!(agent)),
            "{events:#?}"
        );
        let turns = turns_of(&events, "progressed");
        assert_eq!(turns, [&json!(true)], "{agent}: one turn, with progress");
        assert!(
            turns_of(&events, "session_id")[0].is_string(),
            "{agent}: its session is known"
        );
        assert_eq!(
            repo.git(&["rev-parse", "main"]),
            main,
            "{agent}: the commit was denied"
        );
        let conversation = serde_json::to_string(&model.requests()).unwrap();
        assert!(
            conversation.contains("git-orchestrate: ") && conversation.contains("--no-verify"),
            "{agent}: the model was told why: {conversation}"
        );
        // The client's own token counts (the fake model reports 10 in and 5 out for each
        // streamed answer; Gemini CLI's router call 1 and 1), no cost: neither prices a turn.
        let usage = turns_of(&events, "usage")[0].clone();
        let streamed = model
            .requests()
            .iter()
            .filter(|r| {
                let path = r["path"].as_str().unwrap_or("");
                path.starts_with("/v1/responses") || path.contains(":streamGenerateContent")
            })
            .count() as u64;
        let routed = model
            .requests()
            .iter()
            .filter(|r| {
                r["path"]
                    .as_str()
                    .unwrap_or("")
                    .contains(":generateContent")
            })
            .count() as u64;
        assert_eq!(
            (
                &usage["input_tokens"],
                &usage["output_tokens"],
                &usage["cost_usd"]
            ),
            (
                &json!(10 * streamed + routed),
                &json!(5 * streamed + routed),
                &json!(null)
            ),
            "{agent}: {usage}"
        );
        let ledger = &repo.run(&["board", "--json"]).expect(0).json()["workflows"][0]["ledger"];
        assert_eq!(
            (&ledger["turns"], &ledger["tokens"], &ledger["cost_usd"]),
            (
                &json!(1),
                &json!({"input": usage["input_tokens"], "output": usage["output_tokens"]}),
                &json!(null)
            ),
            "{agent}: {ledger}"
        );
        assert_eq!(
            repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
            true
        );
    }
}

/// A project the user told Codex not to trust: `run` does not overrule them (`codex exec
/// --trust` would write over their `trust_level`); it refuses before turn 1 with exit 4,
/// naming the setting and the file, and starts nothing.
#[test]
fn run_refuses_a_project_the_user_marked_untrusted_for_codex() {
    let Some(codex) = codex_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "codex"]).expect(0);
    let model = FakeModel::start(json!([say("Hello.")]));
    let home = codex_home_with(
        &model,
        &format!(
            "[projects.{}]\ntrust_level = \"untrusted\"\n",
            toml::Value::String(repo.path.display().to_string())
        ),
    );
    let config = home.path().join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let out = run_known(
        &repo,
        &codex,
        "codex",
        &[
            ("CODEX_HOME", home.path().to_str().unwrap()),
            ("FAKE_KEY", "dummy"),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "run refused before turn 1: {} says trust_level = \"untrusted\" under [projects.\"{}\"]",
            config.display(),
            repo.path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("If you trust this project, set trust_level = \"trusted\" there"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before, "kept");
    assert!(model.requests().is_empty(), "Codex never started");
    assert!(
        repo.git(&["for-each-ref", "refs/orchestrator/runs/"])
            .trim()
            .is_empty()
    );
}

/// Gemini CLI in a project where `init --agent gemini` never ran: `run` refuses before turn
/// 1, naming the file and the fix; the client never starts.
#[test]
fn run_refuses_gemini_before_turn_1_in_a_project_without_its_settings() {
    let Some(gemini) = gemini_bin() else { return };
    let repo = TestRepo::new();
    let main = repo.git(&["rev-parse", "main"]);
    let model = FakeModel::start(json!([say("Hello.")]));
    let home = gemini_home();
    let base = format!("http://127.0.0.1:{}", model.port);
    let out = run_known(
        &repo,
        &gemini,
        "gemini",
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("GOOGLE_GEMINI_BASE_URL", &base),
            ("GEMINI_API_KEY", "dummy"),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(
            "run refused before turn 1: gemini would work here without git-orchestrate's hooks or \
             MCP server: .gemini/settings.json is not there; nothing was started or committed"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("Run `git orchestrate init --agent gemini` here"),
        "{stderr}"
    );
    assert!(model.requests().is_empty(), "Gemini CLI never started");
    assert_eq!(repo.git(&["rev-parse", "main"]), main);
}

/// `git orchestrate run --agent AGENT --max-turns 3` with the agent's CLI first on PATH.
fn run_known(repo: &TestRepo, cli: &Path, agent: &str, env: &[(&str, &str)]) -> Output {
    let path = path_with(cli);
    let mut cmd = repo.command(BIN, ["run", "--agent", agent, "--max-turns", "3"]);
    cmd.env("PATH", path);
    for (key, value) in env {
        cmd.env(key, value);
    }
    run_agent(cmd)
}

/// PATH with the agent's CLI and this build's git-orchestrate first.
fn path_with(cli: &Path) -> std::ffi::OsString {
    std::env::join_paths(
        [
            cli.parent().unwrap().to_path_buf(),
            Path::new(BIN).parent().unwrap().to_path_buf(),
        ]
        .into_iter()
        .chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
}

/// A ticket of one subtask driven by `git orchestrate run --agent claude`: the real Claude Code
/// plays both roles, one session per turn, each told its role (GIT_ORCHESTRATE_ROLE) and
/// briefed as it; the fake model answers by the briefing each session starts with.
#[test]
fn run_with_claude_code_plays_both_roles_of_a_ticket_until_it_is_merged() {
    let Some(claude) = claude_bin() else { return };
    // The gate runs the test the developer adds, so its report is checked by running it.
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Claude Code"]);
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    let model = FakeModel::start_by_prompt(json!([
        {"match": "## Report of S1", "turns": [
            bash("echo \"role=$GIT_ORCHESTRATE_ROLE\" && git orchestrate update-subtask --status complete --notes 'says hello'"),
            bash("git orchestrate complete-ticket --summary 'hello.sh says hello'"),
            say("The ticket is done."),
        ]},
        {"match": "(none yet: break the ticket", "turns": [
            bash("echo \"role=$GIT_ORCHESTRATE_ROLE\" && git orchestrate assign --mode implementation \
                  --goal 'hello.sh prints hello' --file-to-modify hello.sh --file-to-modify test_hello.sh \
                  --acceptance-criteria 'sh hello.sh prints hello'"),
            say("Assigned."),
        ]},
        {"match": "## Current Assignment", "turns": [
            bash("echo \"role=$GIT_ORCHESTRATE_ROLE\" && echo 'echo hello' > hello.sh && \
                  echo '[ \"$(sh hello.sh)\" = hello ]' > test_hello.sh && \
                  git add hello.sh test_hello.sh && git commit -q -m 'hello.sh says hello'"),
            bash("git orchestrate subtask-complete --status complete --build-status pass \
                  --message 'hello.sh says hello' --file hello.sh --file test_hello.sh"),
            say("Reported."),
        ]},
    ]));
    let (code, events) = run_with_claude(&repo, &claude, &model, &[]);
    assert_eq!(code, 0, "{events:#?}");
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("done"), &json!("TICKET_DONE")),
        "{events:#?}"
    );
    let roles: Vec<&str> = turns_of(&events, "role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(roles, ["manager", "developer", "manager"]);
    assert!(turns_of(&events, "progressed").iter().all(|p| **p == true));
    // A Claude Code session of its own for each turn: the roles never share a conversation.
    let ids = turns_of(&events, "session_id");
    assert!(ids.iter().all(|id| id.is_string()), "{ids:?}");
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    // Each session's shell had its role.
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert_eq!(seen.matches("role=manager").count() > 0, true);
    assert_eq!(seen.matches("role=developer").count() > 0, true);
    // main has the merge of one squashed commit.
    let parents = repo.git(&["log", "-1", "--format=%P", "main"]);
    let parents: Vec<&str> = parents.split_whitespace().collect();
    assert_eq!(parents.len(), 2, "{parents:?}");
    assert_eq!(
        repo.git(&[
            "rev-list",
            "--count",
            &format!("{}..{}", parents[0], parents[1])
        ])
        .trim(),
        "1"
    );
    assert_eq!(repo.git(&["show", "main:hello.sh"]), "echo hello\n");
    assert_eq!(
        repo.run(&["--json", "ticket", "show"]).expect(0).json()["state"],
        "TICKET_DONE"
    );
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: claude, a ticket (both roles) under run: {} run turns, {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len()
    );
}

/// A ticket whose developer is the real Codex under `git orchestrate run` (the manager a
/// scripted agent): Codex's MCP server gets the session's role through the `env_vars` of
/// `init --agent codex`, so each developer turn commits through Codex's shell and reports
/// through the MCP tool `subtask_complete`; the manager rejects once, then accepts and merges.
#[test]
fn codex_as_a_ticket_developer_under_run_reports_through_mcp_until_the_merge() {
    let Some(codex) = codex_bin() else { return };
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["init", "--agent", "codex"]).expect(0);
    // Codex's files stay out of the ticket's commits.
    let exclude = repo.path.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(".codex/\n");
    std::fs::write(&exclude, text).unwrap();
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    // Each developer turn is a fresh Codex session, so both play one script: "hi" first,
    // "hello" once hello.sh is there (after the manager's rejection).
    let model = FakeModel::start(json!([
        [{"tool_use": {"name": "exec_command", "input": {"cmd":
            "echo \"role=$GIT_ORCHESTRATE_ROLE\" && w=hi && if [ -e hello.sh ]; then w=hello; fi && \
             echo \"echo $w\" > hello.sh && echo \"[ \\\"\\$(sh hello.sh)\\\" = $w ]\" > test_hello.sh && \
             git add hello.sh test_hello.sh && git commit -q -m \"hello.sh says $w\""}}}],
        [{"tool_use": {"namespace": "mcp__orchestrate", "name": "subtask_complete", "input": {
            "status": "complete", "buildStatus": "pass", "message": "hello.sh as assigned",
            "filesChanged": [{"path": "hello.sh"}, {"path": "test_hello.sh"}]
        }}}],
        say("Reported."),
    ]));
    let home = codex_home(&model);
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/ticket_agent.py");
    let log = repo.path.parent().unwrap().join(format!(
        "roles-{}.log",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    let mut cmd = repo.command(
        BIN,
        [
            "--json",
            "run",
            "--developer-agent",
            "codex",
            "--",
            "python3",
            agent.to_str().unwrap(),
        ],
    );
    cmd.env("PATH", path_with(&codex))
        .env("CODEX_HOME", home.path())
        .env("FAKE_KEY", "dummy")
        .env("ROLE_LOG", &log);
    let out = run_agent(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{events:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("done"), &json!("TICKET_DONE")),
        "{events:#?}"
    );
    let roles: Vec<&str> = turns_of(&events, "role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["manager", "developer", "manager", "developer", "manager"]
    );
    assert!(turns_of(&events, "progressed").iter().all(|p| **p == true));
    // Each developer turn's report went through the MCP tool, in the developer's role.
    let outputs: Vec<String> = model
        .requests()
        .iter()
        .filter(|r| {
            r["path"]
                .as_str()
                .is_some_and(|p| p.contains("/v1/responses"))
        })
        .flat_map(|r| r["body"]["input"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["type"] == "function_call_output" && i["call_id"] == "call_01_00")
        .map(|i| i["output"].to_string())
        .collect();
    assert!(!outputs.is_empty(), "the model saw the tool's answer");
    assert!(
        outputs
            .iter()
            .all(|o| o.contains("what was observed agrees with the report")),
        "{outputs:#?}"
    );
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(seen.contains("role=developer"), "the shell had the role");
    assert_eq!(repo.git(&["show", "main:hello.sh"]), "echo hello\n");
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: codex, a ticket's developer (the manager scripted) under run: {} run turns \
         ({} of them Codex's), {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len(),
        roles.iter().filter(|r| **r == "developer").count()
    );
}

/// A RED test whose output is about 1 MB: Claude Code, which shows the model only a preview
/// of a large tool result, still shows it the analysis briefing's instructions, since the
/// MCP result is held under 16 KiB with the instructions ahead of the quoted output.
#[test]
fn claude_code_sees_the_analysis_instructions_after_a_red_test_with_a_megabyte_of_output() {
    let Some(claude) = claude_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let plan: Value = serde_json::from_str(&one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    // 10,000 lines of 100 bytes, then the failure.
    let verbose = "i=0; while [ $i -lt 10000 ]; do echo \"verbose test line $i: \
                   ..............................................................................\"; \
                   i=$((i+1)); done; echo 'add.sh is missing'; test -e add.sh";
    let model = FakeModel::start(json!([
        /* 0 */ mcp("get_task", json!({})),
        /* 1 */
        mcp(
            "submit_work",
            json!({"summary": "plan the PR", "plan": plan})
        ),
        /* 2 */ mcp("get_task", json!({})),
        /* 3 */
        mcp(
            "submit_work",
            json!({"summary": "RED", "test_command": verbose, "expectation": "FAIL"})
        ),
        /* 4 */ mcp("get_task", json!({})),
        /* 5 */
        mcp(
            "submit_work",
            json!({"summary": "add.sh is missing", "analysis_decision": "SUCCESS"})
        ),
        /* 6 */ say("Done."),
        /* 7 */ say("Done!"),
        /* 8 */ say("Really done."),
        /* 9 */ say("Stopping."),
    ]));
    let out = run_claude(&repo, &claude, &model);
    succeeded(&out);
    let output = repo.git(&["show", "refs/orchestrator/workflows/main:output.log"]);
    assert!(output.len() > 1_000_000, "{} bytes", output.len());
    // What the model saw of the RED submit, as Claude Code sent it back in the tool_result:
    // the structured result, which opens with the instruction (both answers as tool calls),
    // ahead of the summary and test that quote the command and of the quoted output.
    let (red, error) = model.tool_result(3);
    assert!(!error, "{red}");
    let opening = "{\"schema\":1,\"status\":\"NEEDS_ANALYSIS\",\"next\":\"judge why the RED test \
                   failed, then answer with exactly one of `submit_work {\\\"summary\\\": \\\"<why>\\\", \
                   \\\"analysis_decision\\\": \\\"SUCCESS\\\"}` (it failed for the intended \
                   reason) or `submit_work {\\\"summary\\\": \\\"<why>\\\", \
                   \\\"analysis_decision\\\": \\\"FAILURE\\\"}` (the wrong reason; `get_task` \
                   explains)\",\"summary\":";
    assert!(
        red.starts_with(opening) && !red.contains("--analysis-decision"),
        "{} bytes: {}",
        red.len(),
        &red[..red.len().min(3000)]
    );
    assert!(red.find("verbose test line 99") > Some(opening.len()));
    assert!(red.len() < 24 * 1024, "{} bytes", red.len());
    // The analysis briefing get_task gives then: its "Answer with exactly one of:" and both
    // answers as tool calls come before the quoted output, in the first 2 KB.
    let (briefing, error) = model.tool_result(4);
    assert!(!error, "{briefing}");
    let answer = briefing
        .find("Answer with exactly one of:")
        .expect("the answer instructions");
    let failure = briefing
        .find("\\\"analysis_decision\\\": \\\"FAILURE\\\"}")
        .unwrap_or_else(|| panic!("{}", &briefing[..briefing.len().min(3000)]));
    assert!(
        answer < failure && failure < 2000 && Some(failure) < briefing.find("BEGIN OUTPUT"),
        "{}",
        &briefing[..briefing.len().min(3000)]
    );
    assert!(briefing.len() < 24 * 1024, "{} bytes", briefing.len());
    let (answered, error) = model.tool_result(5);
    assert!(!error, "{answered}");
    assert_eq!(repo.state()["status"], "EXECUTING_TDD");
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: claude, a 1 MB RED: {asked} model turns, {calls} tool calls; the RED result {} bytes",
        red.len()
    );
}

/// A whole one-task PR in one session, through the MCP tools (`tool(name, input)` in the
/// client's naming) and the client's shell (`shell(command)`): plan, RED and its analysis,
/// GREEN, checkpoint, the squash by `submit_work {"squash": true}`, the master plan by
/// `mark_done`, and the `get_task` that merges.
fn pr_over_mcp(
    plan: &Value,
    tool: impl Fn(&str, Value) -> Value,
    shell: impl Fn(&str) -> Value,
) -> Value {
    json!([
        /* 0 */ tool("get_task", json!({})),
        /* 1 */
        tool(
            "submit_work",
            json!({"summary": "plan the PR", "plan": plan})
        ),
        /* 2 */ tool("get_task", json!({})),
        /* 3 */
        tool(
            "submit_work",
            json!({"summary": "RED", "test_command": "test -e add.sh", "expectation": "FAIL"})
        ),
        /* 4 */
        tool(
            "submit_work",
            json!({"summary": "add.sh is missing", "analysis_decision": "SUCCESS"})
        ),
        /* 5 */ shell("echo 'add.sh v1' > add.sh"),
        /* 6 */
        tool(
            "submit_work",
            json!({"summary": "GREEN", "test_command": "test -e add.sh", "expectation": "PASS"})
        ),
        /* 7 */ tool("checkpoint", json!({})),
        /* 8 */ tool("get_task", json!({})),
        /* 9 */
        tool(
            "submit_work",
            json!({"summary": "squashed", "squash": true})
        ),
        /* 10 */ tool("get_task", json!({})),
        /* 11 */
        tool(
            "submit_work",
            json!({"summary": "master plan updated", "mark_done": true})
        ),
        /* 12 */ tool("get_task", json!({})),
        /* 13 */ say("Merged."),
    ])
}

/// main's last commit merges the PR on `main_before`: one squashed commit titled as the PR,
/// and the master plan's update `mark_done` made.
fn merged_one_squash(repo: &TestRepo, main_before: &str) {
    let merge = repo.git(&["log", "-1", "--format=%P", "main"]);
    let parents: Vec<&str> = merge.split_whitespace().collect();
    assert_eq!(parents.len(), 2, "a merge: {merge}");
    assert_eq!(parents[0], main_before.trim());
    assert_eq!(
        repo.git(&[
            "log",
            "--format=%s",
            &format!("{}..{}", parents[0], parents[1])
        ])
        .trim(),
        "docs: mark \"feat: Add numbers\" done in docs/plan.md\nfeat: Add numbers",
        "one squashed commit, and the master plan's update"
    );
    assert_eq!(repo.git(&["show", "main:add.sh"]), "add.sh v1\n");
}

/// Codex works a whole PR through its MCP tools in one `codex exec` session, to the merge.
#[test]
fn codex_works_a_whole_pr_over_mcp_to_the_merge() {
    let Some(codex) = codex_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "codex"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Codex"]);
    let main_before = repo.git(&["rev-parse", "main"]);
    let plan: Value = serde_json::from_str(&one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let model = FakeModel::start(pr_over_mcp(
        &plan,
        |name, input| json!([{"tool_use": {"namespace": "mcp__orchestrate", "name": name, "input": input}}]),
        |command| json!([{"tool_use": {"name": "exec_command", "input": {"cmd": command}}}]),
    ));
    let out = run_codex(&repo, &codex, &model);
    succeeded(&out);
    merged_one_squash(&repo, &main_before);
    let (asked, calls) = model.figures();
    eprintln!("figures: codex, a whole PR in one session: {asked} model turns, {calls} tool calls");
}

/// Gemini CLI (which refuses a shell line with `$(…)`, as the squash by hand needs) works a
/// whole PR through the MCP tools in one session and squashes with `submit_work {"squash":
/// true}`, then marks the master plan with `mark_done`, to the merge.
#[test]
fn gemini_squashes_over_mcp_and_the_pr_is_merged() {
    let Some(gemini) = gemini_bin() else { return };
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "gemini"]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "chore: wire Gemini CLI"]);
    let main_before = repo.git(&["rev-parse", "main"]);
    let plan: Value = serde_json::from_str(&one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let model = FakeModel::start(pr_over_mcp(
        &plan,
        |name, input| json!([{"tool_use": {"name": format!("mcp_orchestrate_{name}"), "input": input}}]),
        |command| json!([{"tool_use": {"name": "run_shell_command", "input": {"command": command}}}]),
    ));
    let out = run_gemini(&repo, &gemini, &model);
    succeeded(&out);
    let contents = last_request(&model, "streamGenerateContent")["contents"].clone();
    let responses: Vec<String> = contents
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| {
            p["functionResponse"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("mcp_orchestrate_"))
        })
        .map(|p| p["functionResponse"]["response"].to_string())
        .collect();
    let finalize = responses
        .iter()
        .find(|r| r.contains("AWAITING_FINALIZATION"))
        .unwrap_or_else(|| panic!("no finalization briefing: {responses:#?}"));
    // The briefing offers the tool's squash first, with no `$(…)`.
    assert!(
        finalize.contains(r#"submit_work {\"summary\": \"squashed\", \"squash\": true}"#)
            || finalize.contains("\\\"squash\\\": true"),
        "{finalize}"
    );
    merged_one_squash(&repo, &main_before);
    let shell_refusals = contents.to_string().matches("Command injection").count();
    assert_eq!(shell_refusals, 0, "no shell line was refused");
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: gemini, a whole PR in one session: {asked} model turns, {calls} tool calls ({} of \
         them MCP)",
        responses.len()
    );
}

/// A ticket whose developer is the real Gemini CLI under `git orchestrate run` (the manager
/// a scripted agent): each developer turn commits through Gemini's shell, with no `$(…)`
/// (which Gemini refuses), and reports through the MCP tool `subtask_complete`; the manager
/// rejects once, then accepts and merges.
#[test]
fn gemini_as_a_ticket_developer_under_run_reports_through_mcp_until_the_merge() {
    let Some(gemini) = gemini_bin() else { return };
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["init", "--agent", "gemini"]).expect(0);
    let exclude = repo.path.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(".gemini/\n");
    std::fs::write(&exclude, text).unwrap();
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    let model = FakeModel::start(json!([
        [{"tool_use": {"name": "run_shell_command", "input": {"command":
            "echo \"role=$GIT_ORCHESTRATE_ROLE\" && w=hi && if [ -e hello.sh ]; then w=hello; fi && \
             echo \"echo $w\" > hello.sh && echo \"sh hello.sh | grep -qx $w\" > test_hello.sh && \
             git add hello.sh test_hello.sh && git commit -q -m \"hello.sh says $w\""}}}],
        [{"tool_use": {"name": "mcp_orchestrate_subtask_complete", "input": {
            "status": "complete", "buildStatus": "pass", "message": "hello.sh as assigned",
            "filesChanged": [{"path": "hello.sh"}, {"path": "test_hello.sh"}]
        }}}],
        say("Reported."),
    ]));
    let home = gemini_home();
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/ticket_agent.py");
    let log = repo.path.parent().unwrap().join(format!(
        "roles-{}.log",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    let mut cmd = repo.command(
        BIN,
        [
            "--json",
            "run",
            "--developer-agent",
            "gemini",
            "--",
            "python3",
            agent.to_str().unwrap(),
        ],
    );
    cmd.env("PATH", path_with(&gemini))
        .env("HOME", home.path())
        .env(
            "GOOGLE_GEMINI_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("GEMINI_API_KEY", "dummy")
        .env("ROLE_LOG", &log);
    let out = run_agent(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{events:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("done"), &json!("TICKET_DONE")),
        "{events:#?}"
    );
    let roles: Vec<&str> = turns_of(&events, "role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["manager", "developer", "manager", "developer", "manager"]
    );
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(seen.contains("role=developer"), "the shell had the role");
    assert!(!seen.contains("Command injection"), "no shell line refused");
    assert_eq!(repo.git(&["show", "main:hello.sh"]), "echo hello\n");
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: gemini, a ticket's developer (the manager scripted) under run: {} run turns \
         ({} of them Gemini's), {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len(),
        roles.iter().filter(|r| **r == "developer").count()
    );
}

/// The environment `run` starts Codex or Gemini CLI in, against `model`, from an empty home
/// of its own (kept alive by the returned directory).
fn offline_env(agent: &str, model: &FakeModel) -> (tempfile::TempDir, Vec<(String, String)>) {
    if agent == "codex" {
        let home = codex_home(model);
        let env = vec![
            ("CODEX_HOME".into(), home.path().display().to_string()),
            ("FAKE_KEY".into(), "dummy".into()),
        ];
        (home, env)
    } else {
        let home = gemini_home();
        let env = vec![
            ("HOME".into(), home.path().display().to_string()),
            (
                "GOOGLE_GEMINI_BASE_URL".into(),
                format!("http://127.0.0.1:{}", model.port),
            ),
            ("GEMINI_API_KEY".into(), "dummy".into()),
        ];
        (home, env)
    }
}

/// A tool call and a shell command in `agent`'s naming (Codex or Gemini CLI).
fn tool_of(agent: &str) -> impl Fn(&str, Value) -> Value + use<> {
    let codex = agent == "codex";
    move |name, input| {
        if codex {
            json!([{"tool_use": {"namespace": "mcp__orchestrate", "name": name, "input": input}}])
        } else {
            json!([{"tool_use": {"name": format!("mcp_orchestrate_{name}"), "input": input}}])
        }
    }
}

fn shell_of(agent: &str) -> impl Fn(&str) -> Value + use<> {
    let codex = agent == "codex";
    move |command| {
        if codex {
            json!([{"tool_use": {"name": "exec_command", "input": {"cmd": command}}}])
        } else {
            json!([{"tool_use": {"name": "run_shell_command", "input": {"command": command}}}])
        }
    }
}

/// A whole one-task PR under `git orchestrate run --agent AGENT`, from an empty home in a
/// project the client never trusted: plan, RED and its analysis, GREEN, checkpoint, squash and
/// master plan through the MCP tools, the merge, and `no_pr_left`, which ends the run idle.
/// The agent stops twice on the way (`max_stop_blocks = 1`: one blocked stop, then it may),
/// so the PR takes three turns of one session, which `run` resumes each time (Gemini CLI
/// takes some 10 s a turn).
fn whole_pr_under_run(agent: &str, cli: &Path) {
    let repo = TestRepo::with_config(&format!("{CONFIG}\n[agent]\nmax_stop_blocks = 1\n"));
    repo.run(&["init", "--agent", agent]).expect(0);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", &format!("chore: wire {agent}")]);
    let main_before = repo.git(&["rev-parse", "main"]);
    let plan: Value = serde_json::from_str(&one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let tool = tool_of(agent);
    let pr = pr_over_mcp(&plan, &tool, shell_of(agent));
    let mut script = Vec::new();
    for (i, turn) in pr.as_array().unwrap().iter().enumerate() {
        // The last turn said "Merged.": instead, nothing is left, and then it stops.
        if i == 13 {
            script.push(tool(
                "submit_work",
                json!({"summary": "every PR is done", "no_pr_left": true}),
            ));
            script.push(say("Nothing is left."));
            break;
        }
        script.push(turn.clone());
        // After the RED analysis and after the squash: a stop (blocked), and a stop again
        // (let go), which ends the run's turn.
        if [4, 9].contains(&i) {
            script.push(say("Pausing here."));
            script.push(say("Stopping."));
        }
    }
    let model = FakeModel::start(json!(script));
    let (_home, env) = offline_env(agent, &model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (code, events) = run_driver(&repo, agent, cli, &env, &[]);
    assert_eq!(code, 0, "{agent}: {events:#?}");
    assert_eq!(
        events.last().unwrap()["outcome"],
        "idle",
        "{agent}: {events:#?}"
    );
    assert_eq!(
        turns_of(&events, "progressed"),
        [&json!(true); 3],
        "{agent}: {events:#?}"
    );
    // One session, resumed turn after turn.
    let sessions: Vec<&Value> = turns_of(&events, "session");
    assert_eq!(
        sessions,
        [&json!("fresh"), &json!("same"), &json!("same")],
        "{agent}"
    );
    let ids = turns_of(&events, "session_id");
    assert!(
        ids.iter().all(|id| *id == ids[0] && id.is_string()),
        "{agent}: {ids:?}"
    );
    merged_one_squash(&repo, &main_before);
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
    repo.run(&["audit"]).expect(0);
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(
        !seen.contains("Command injection"),
        "{agent}: no shell line refused"
    );
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: {agent}, a whole PR under run: {} run turns, {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len()
    );
}

#[test]
fn run_with_codex_works_a_whole_pr_over_mcp_to_the_merge() {
    let Some(codex) = codex_bin() else { return };
    whole_pr_under_run("codex", &codex);
}

#[test]
fn run_with_gemini_works_a_whole_pr_over_mcp_to_the_merge() {
    let Some(gemini) = gemini_bin() else { return };
    whole_pr_under_run("gemini", &gemini);
}

/// A ticket whose manager is the real Codex or Gemini CLI under `git orchestrate run` (the
/// developer a scripted agent): each manager turn is a session of its own, briefed as the
/// manager, and acts only through the manager's MCP tools: it assigns the subtask, then
/// verifies the developer's report and completes the ticket, which merges it.
fn ticket_manager_under_run(agent: &str, cli: &Path) {
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["init", "--agent", agent]).expect(0);
    let exclude = repo.path.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(&format!(".{agent}/\n"));
    std::fs::write(&exclude, text).unwrap();
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    let tool = tool_of(agent);
    let model = FakeModel::start_by_prompt(json!([
        {"match": "## Report of S1", "turns": [
            tool("update_subtask", json!({"status": "complete", "notes": "hello.sh says hi, as assigned"})),
            tool("complete_ticket", json!({"summary": "hello.sh says hi"})),
            say("The ticket is done."),
        ]},
        {"match": "(none yet: break the ticket", "turns": [
            tool("assign_to_developer", json!({
                "mode": "implementation", "goal": "hello.sh prints hi",
                "filesToModify": ["hello.sh", "test_hello.sh"],
                "acceptanceCriteria": ["sh hello.sh prints hi"]
            })),
            say("Assigned."),
        ]},
    ]));
    let (_home, env) = offline_env(agent, &model);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/ticket_agent.py");
    let log = repo.path.parent().unwrap().join(format!(
        "roles-{}.log",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    let mut cmd = repo.command(
        BIN,
        [
            "--json",
            "run",
            "--manager-agent",
            agent,
            "--",
            "python3",
            script.to_str().unwrap(),
        ],
    );
    cmd.env("PATH", path_with(cli)).env("ROLE_LOG", &log);
    for (key, value) in &env {
        cmd.env(key, value);
    }
    let out = run_agent(cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{agent}: {events:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("done"), &json!("TICKET_DONE")),
        "{agent}: {events:#?}"
    );
    let roles: Vec<&str> = turns_of(&events, "role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(roles, ["manager", "developer", "manager"], "{agent}");
    assert!(turns_of(&events, "progressed").iter().all(|p| **p == true));
    let ids = turns_of(&events, "session_id");
    assert!(ids[0].is_string() && ids[0] != ids[2], "{agent}: {ids:?}");
    // The manager's tools answered without an error.
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(
        !seen.contains("no role"),
        "{agent}: the server had the role"
    );
    assert_eq!(repo.git(&["show", "main:hello.sh"]), "echo hi\n");
    let ticket = repo.run(&["--json", "ticket", "show"]).expect(0).json();
    assert_eq!(ticket["state"], "TICKET_DONE", "{ticket:#}");
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: {agent}, a ticket's manager (the developer scripted) under run: {} run turns \
         ({} of them {agent}'s), {asked} model turns, {calls} tool calls",
        turns_of(&events, "turn").len(),
        roles.iter().filter(|r| **r == "manager").count()
    );
}

#[test]
fn codex_as_a_ticket_manager_under_run_assigns_verifies_and_merges_through_mcp() {
    let Some(codex) = codex_bin() else { return };
    ticket_manager_under_run("codex", &codex);
}

#[test]
fn gemini_as_a_ticket_manager_under_run_assigns_verifies_and_merges_through_mcp() {
    let Some(gemini) = gemini_bin() else { return };
    ticket_manager_under_run("gemini", &gemini);
}

/// A ticket of one subtask driven by `git orchestrate run --agent AGENT` (Codex or Gemini
/// CLI), which plays both roles as the Claude Code test above does: one session per turn, each
/// told its role (GIT_ORCHESTRATE_ROLE) and briefed as it, acting through that role's MCP tools
/// (the developer commits through the client's shell, with no `$(…)`, which Gemini refuses);
/// the fake model answers by the briefing each session starts with.
fn ticket_both_roles_under_run(agent: &str, cli: &Path) {
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["init", "--agent", agent]).expect(0);
    // The client's files stay out of the ticket's commits.
    let exclude = repo.path.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(&format!(".{agent}/\n"));
    std::fs::write(&exclude, text).unwrap();
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    let tool = tool_of(agent);
    let shell = shell_of(agent);
    let model = FakeModel::start_by_prompt(json!([
        {"match": "## Report of S1", "turns": [
            shell("echo \"role=$GIT_ORCHESTRATE_ROLE\""),
            tool("update_subtask", json!({"status": "complete", "notes": "hello.sh says hello"})),
            tool("complete_ticket", json!({"summary": "hello.sh says hello"})),
            say("The ticket is done."),
        ]},
        {"match": "(none yet: break the ticket", "turns": [
            shell("echo \"role=$GIT_ORCHESTRATE_ROLE\""),
            tool("assign_to_developer", json!({
                "mode": "implementation", "goal": "hello.sh prints hello",
                "filesToModify": ["hello.sh", "test_hello.sh"],
                "acceptanceCriteria": ["sh hello.sh prints hello"]
            })),
            say("Assigned."),
        ]},
        {"match": "## Current Assignment", "turns": [
            shell("echo \"role=$GIT_ORCHESTRATE_ROLE\" && echo 'echo hello' > hello.sh && \
                   echo 'sh hello.sh | grep -qx hello' > test_hello.sh && \
                   git add hello.sh test_hello.sh && git commit -q -m 'hello.sh says hello'"),
            tool("subtask_complete", json!({
                "status": "complete", "buildStatus": "pass", "message": "hello.sh says hello",
                "filesChanged": [{"path": "hello.sh"}, {"path": "test_hello.sh"}]
            })),
            say("Reported."),
        ]},
    ]));
    let (_home, env) = offline_env(agent, &model);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (code, events) = run_driver(&repo, agent, cli, &env, &[]);
    assert_eq!(code, 0, "{agent}: {events:#?}");
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("done"), &json!("TICKET_DONE")),
        "{agent}: {events:#?}"
    );
    let roles: Vec<&str> = turns_of(&events, "role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(roles, ["manager", "developer", "manager"], "{agent}");
    assert!(turns_of(&events, "progressed").iter().all(|p| **p == true));
    // A session of its own for each turn: the roles never share a conversation.
    let ids = turns_of(&events, "session_id");
    assert!(ids.iter().all(|id| id.is_string()), "{agent}: {ids:?}");
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{agent}: {ids:?}"
    );
    // Each session's shell had its role, and every MCP tool had the server's.
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(
        seen.contains("role=manager"),
        "{agent}: the manager's shell"
    );
    assert!(
        seen.contains("role=developer"),
        "{agent}: the developer's shell"
    );
    assert!(
        !seen.contains("no role"),
        "{agent}: the server had the role"
    );
    assert!(
        !seen.contains("Command injection"),
        "{agent}: no shell line refused"
    );
    // main has the merge of one squashed commit.
    let parents = repo.git(&["log", "-1", "--format=%P", "main"]);
    let parents: Vec<&str> = parents.split_whitespace().collect();
    assert_eq!(parents.len(), 2, "{agent}: {parents:?}");
    assert_eq!(
        repo.git(&[
            "rev-list",
            "--count",
            &format!("{}..{}", parents[0], parents[1])
        ])
        .trim(),
        "1",
        "{agent}"
    );
    assert_eq!(repo.git(&["show", "main:hello.sh"]), "echo hello\n");
    assert_eq!(
        repo.run(&["--json", "ticket", "show"]).expect(0).json()["state"],
        "TICKET_DONE"
    );
    let (asked, calls) = model.figures();
    eprintln!(
        "figures: {agent}, a ticket (both roles) under run: {} run turns, {asked} model turns, \
         {calls} tool calls",
        turns_of(&events, "turn").len()
    );
}

#[test]
fn run_with_codex_plays_both_roles_of_a_ticket_until_it_is_merged() {
    let Some(codex) = codex_bin() else { return };
    ticket_both_roles_under_run("codex", &codex);
}

#[test]
fn run_with_gemini_plays_both_roles_of_a_ticket_until_it_is_merged() {
    let Some(gemini) = gemini_bin() else { return };
    ticket_both_roles_under_run("gemini", &gemini);
}

/// The real Claude Code run by hand (`claude -p`, no `run` around it) in a project wired by
/// `init --agent claude`, against a fake model that reports `usage` or not: its one turn (it
/// asks for the task, says nothing is left, and may stop). Returns the repository, the
/// client's session id and the workflow's ledger figures from `board --json`.
fn claude_by_hand(usage: bool) -> Option<(TestRepo, String, Value)> {
    let claude = claude_bin()?;
    let repo = TestRepo::new();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
    );
    repo.commit_all("plan: all done");
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let model = FakeModel::with_script(json!({"usage": usage, "turns": [
        mcp("get_task", json!({})),
        mcp("submit_work", json!({"summary": "every PR is [DONE]", "no_pr_left": true})),
        say("Nothing is left to do."),
    ]}));
    let out = run_claude(&repo, &claude, &model);
    succeeded(&out);
    let result: Value = serde_json::from_slice(&out.stdout).expect("claude's JSON result");
    let session = result["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    // The Stop hook let it stop at once: one stop, which read the whole transcript.
    assert_eq!(
        model.hook_messages("Stop hook feedback:"),
        Vec::<String>::new()
    );
    let board = repo.run(&["--json", "board"]).expect(0).json();
    let ledger = &board["workflows"][0]["ledger"];
    let figures = json!({
        "turns": ledger["turns"], "turns_reporting": ledger["turns_reporting"],
        "tokens": ledger["tokens"], "cost_usd": ledger["cost_usd"]
    });
    Some((repo, session, figures))
}

/// The record of the by-hand turn, whole, with what only the run knows (the session id, the
/// workflow's tip) filled in.
fn by_hand_record(repo: &TestRepo, session: &str, usage: Value) -> (Value, Value) {
    let record: Value =
        serde_json::from_str(&repo.git(&["show", "refs/orchestrator/runs/main:turn.json"]))
            .expect("turn.json");
    let tip = repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]);
    let expected = json!({
        "session": "by-hand", "session_id": session, "client": "claude", "messages": 3,
        "usage": usage, "tip_after": tip.trim(),
    });
    (record, expected)
}

/// By hand, the Stop hook reads Claude Code's transcript: the fake model reports 10 input and
/// 5 output tokens for each of its 3 messages, and the ledger shows exactly that for the one
/// by-hand turn (the cost is not in a transcript: not reported).
#[test]
fn claude_code_by_hand_its_transcripts_tokens_reach_the_ledger() {
    let Some((repo, session, figures)) = claude_by_hand(true) else {
        return;
    };
    assert_eq!(
        figures,
        json!({"turns": 1, "turns_reporting": 1,
               "tokens": {"input": 30, "output": 15}, "cost_usd": null})
    );
    let (record, expected) = by_hand_record(
        &repo,
        &session,
        json!({"input_tokens": 30, "output_tokens": 15, "cached_input_tokens": 0, "cost_usd": null}),
    );
    assert_eq!(record, expected);
}

/// By hand, against a model that reports no usage: Claude Code writes zeros into its
/// transcript, which are no report; the turn is counted, its tokens "not reported" (null),
/// never 0.
#[test]
fn claude_code_by_hand_without_usage_is_not_reported_never_zero() {
    let Some((repo, session, figures)) = claude_by_hand(false) else {
        return;
    };
    assert_eq!(
        figures,
        json!({"turns": 1, "turns_reporting": 0, "tokens": null, "cost_usd": null})
    );
    let (record, expected) = by_hand_record(&repo, &session, Value::Null);
    assert_eq!(record, expected);
}

/// Codex or Gemini CLI run by hand (`codex exec`, `gemini -p`; no `run` around it) in a
/// project wired by `init --agent AGENT`, against a fake model that reports usage or not: one
/// turn (it asks for the task, says nothing is left, and may stop). The Stop hook reads the
/// client's own session file (Codex's rollout, Gemini CLI's chat), which each names in the
/// hook's `transcript_path`. Returns the ledger's figures and the by-hand turn's record.
fn by_hand(agent: &str, cli: &Path, usage: bool) -> (Value, Value) {
    let repo = TestRepo::new();
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
    );
    repo.commit_all("plan: all done");
    repo.run(&["init", "--agent", agent]).expect(0);
    let tool = tool_of(agent);
    let model = FakeModel::with_script(json!({"usage": usage, "turns": [
        tool("get_task", json!({})),
        tool("submit_work", json!({"summary": "every PR is [DONE]", "no_pr_left": true})),
        say("Nothing is left to do."),
    ]}));
    let out = if agent == "codex" {
        run_codex(&repo, cli, &model)
    } else {
        run_gemini(&repo, cli, &model)
    };
    succeeded(&out);
    let seen = serde_json::to_string(&model.requests()).unwrap();
    assert!(
        seen.contains("nothing left to do"),
        "{agent}: the MCP tools answered"
    );
    let board = repo.run(&["--json", "board"]).expect(0).json();
    let ledger = &board["workflows"][0]["ledger"];
    let figures = json!({
        "turns": ledger["turns"], "turns_reporting": ledger["turns_reporting"],
        "tokens": ledger["tokens"], "cost_usd": ledger["cost_usd"]
    });
    let mut record: Value =
        serde_json::from_str(&repo.git(&["show", "refs/orchestrator/runs/main:turn.json"]))
            .expect("turn.json");
    // The client's own session id, from its hook input.
    let session = record["session_id"].take();
    assert!(
        session.as_str().is_some_and(|s| s.len() >= 8),
        "{agent}: {session}"
    );
    let tip = repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]);
    assert_eq!(record["tip_after"], tip.trim(), "{agent}");
    record["tip_after"].take();
    (figures, record)
}

/// The by-hand record of `agent`'s three model messages, `usage` as it should read.
fn by_hand_expected(agent: &str, usage: Value) -> Value {
    json!({
        "session": "by-hand", "session_id": null, "client": agent, "messages": 3,
        "usage": usage, "tip_after": null,
    })
}

/// Codex and Gemini CLI by hand: the fake model's 10 input and 5 output tokens for each of
/// the 3 messages reach the ledger as the one by-hand turn; with no usage reported, the turn
/// is counted and its tokens are "not reported" (null), never 0.
fn by_hand_tokens(agent: &str, cli: &Path) {
    let (figures, record) = by_hand(agent, cli, true);
    assert_eq!(
        figures,
        json!({"turns": 1, "turns_reporting": 1,
               "tokens": {"input": 30, "output": 15}, "cost_usd": null}),
        "{agent}"
    );
    assert_eq!(
        record,
        by_hand_expected(
            agent,
            json!({"input_tokens": 30, "output_tokens": 15, "cached_input_tokens": 0, "cost_usd": null})
        )
    );
    let (figures, record) = by_hand(agent, cli, false);
    assert_eq!(
        figures,
        json!({"turns": 1, "turns_reporting": 0, "tokens": null, "cost_usd": null}),
        "{agent}"
    );
    assert_eq!(record, by_hand_expected(agent, Value::Null));
}

#[test]
fn codex_by_hand_its_rollouts_tokens_reach_the_ledger_or_are_not_reported() {
    let Some(codex) = codex_bin() else { return };
    by_hand_tokens("codex", &codex);
}

#[test]
fn gemini_by_hand_its_chats_tokens_reach_the_ledger_or_are_not_reported() {
    let Some(gemini) = gemini_bin() else { return };
    by_hand_tokens("gemini", &gemini);
}

/// Under `run`, against a model that reports no usage: Claude Code and Codex print zeros in
/// their own output, which are no report; the turn's usage and the ledger's tokens are null
/// ("not reported"), never 0.
#[test]
fn run_with_a_model_that_reports_no_usage_records_not_reported() {
    let (Some(claude), Some(codex)) = (claude_bin(), codex_bin()) else {
        return;
    };
    let done = format!("{BIN} submit-work -s 'every PR is done' --no-pr-left");
    for (agent, cli) in [("claude", &claude), ("codex", &codex)] {
        let repo = TestRepo::new();
        repo.write(
            "docs/plan.md",
            "# Plan\n## PR 1: feat: Add numbers [DONE]\n",
        );
        repo.commit_all("plan: all done");
        repo.run(&["init", "--agent", agent]).expect(0);
        let shell = if agent == "claude" {
            bash(&done)
        } else {
            shell_of(agent)(&done)
        };
        let model = FakeModel::with_script(json!({"usage": false, "turns": [
            shell,
            say("Nothing is left to do."),
        ]}));
        let (code, events) = if agent == "claude" {
            run_with_claude(&repo, cli, &model, &[])
        } else {
            let (_home, env) = offline_env(agent, &model);
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            run_driver(&repo, agent, cli, &env, &[])
        };
        assert_eq!(code, 0, "{agent}: {events:#?}");
        assert_eq!(events.last().unwrap()["outcome"], "idle", "{agent}");
        assert_eq!(turns_of(&events, "usage"), [&Value::Null], "{agent}");
        let ledger = &repo.run(&["board", "--json"]).expect(0).json()["workflows"][0]["ledger"];
        assert_eq!(
            json!({"turns": ledger["turns"], "turns_reporting": ledger["turns_reporting"],
                   "tokens": ledger["tokens"], "cost_usd": ledger["cost_usd"]}),
            json!({"turns": 1, "turns_reporting": 0, "tokens": null, "cost_usd": null}),
            "{agent}"
        );
    }
}
