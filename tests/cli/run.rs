//! `git orchestrate run -- CMD`: the driver loop with a scripted agent
//! (tests/agents/scripted_agent.py) that works through the real commands: a plan done end to
//! end, an agent stuck on a step (fresh session, then HALTED stuck with a report), an agent
//! that never does anything, the turn limit, and Ctrl-C. A ticket driven by `run` with
//! tests/agents/ticket_agent.py playing both roles: each turn in a fresh session of the role
//! whose turn it is, until the ticket is done; a stuck developer halts the ticket.

use std::path::PathBuf;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::*;

fn agent() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/scripted_agent.py")
        .display()
        .to_string()
}

/// `run --json -- python3 scripted_agent.py` with `mode`; its exit code and events.
fn run(repo: &TestRepo, mode: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let plan = repo.path.parent().unwrap().join(format!(
        "plan-{}.json",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&plan, one_task_plan("feat: Add numbers", "add.sh")).unwrap();
    let agent = agent();
    let mut args = vec!["--json", "run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "python3", &agent]);
    let out = repo
        .command(BIN, &args)
        .env("AGENT_MODE", mode)
        .env("PLAN_FILE", &plan)
        .output()
        .unwrap();
    let out = Run::from(out);
    let events = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{}", out.stderr))
        })
        .collect();
    (out.code, events)
}

fn field<'a>(events: &'a [Value], key: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e["event"] == "turn")
        .map(|e| e[key].as_str().unwrap_or("-"))
        .collect()
}

#[test]
fn a_scripted_agent_works_a_plan_end_to_end_and_the_run_ends_when_nothing_is_left() {
    let repo = TestRepo::new();
    let (code, events) = run(&repo, "good", &[]);
    assert_eq!(code, 0, "{events:#?}");
    assert_eq!(
        field(&events, "state"),
        [
            "INITIALIZING",
            "EXECUTING_TDD",
            "EXECUTING_TDD",
            "AWAITING_FINALIZATION",
            "FINALIZE_COMPLETE",
            "INITIALIZING"
        ]
    );
    assert!(
        events
            .iter()
            .filter(|e| e["event"] == "turn")
            .all(|e| e["progressed"] == true)
    );
    // Same session from the second turn on (the default strategy).
    assert_eq!(
        field(&events, "session"),
        ["fresh", "same", "same", "same", "same", "same"]
    );
    let end = events.last().unwrap();
    assert_eq!(end["event"], "end");
    assert_eq!(end["outcome"], "idle");
    assert_eq!(end["turns"], 6);
    // Every transition of the run, not the turns that made one.
    let made = repo.git(&[
        "rev-list",
        "--count",
        "--first-parent",
        "refs/orchestrator/workflows/main",
    ]);
    assert_eq!(end["transitions"].to_string(), made.trim());
    assert!(end["transitions"].as_u64().unwrap() > 6, "{end}");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["idle"],
        true
    );
    assert!(
        repo.git(&["log", "--format=%s", "main"])
            .contains("feat: Add numbers")
    );
    // Each turn is kept: its briefing and what the agent printed.
    let turns = repo.git(&["log", "--format=%s", "refs/orchestrator/runs/main"]);
    assert_eq!(turns.lines().count(), 6, "{turns}");
    // A turn with no step names none (and no double space).
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", "refs/orchestrator/runs/main~5"])
            .trim(),
        "turn 1: INITIALIZING -> CREATING_BRANCH (progress)"
    );
    let said = repo.git(&["show", "refs/orchestrator/runs/main~5:stdout.log"]);
    assert!(said.starts_with("turn 1, session fresh"), "{said}");
    assert!(
        repo.git(&["show", "refs/orchestrator/runs/main~5:briefing.txt"])
            .contains("GOAL: plan the next pull request.")
    );
    let status = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(status["run"]["ref"], "refs/orchestrator/runs/main");
    assert!(
        status["run"]["subject"]
            .as_str()
            .unwrap()
            .starts_with("turn 6: INITIALIZING")
    );
    repo.run(&["status"])
        .expect(0)
        .says("run       last turn 6: INITIALIZING");
    repo.run(&["audit"]).expect(0);
    // The ledger counts the six turns, all on the one PR; a command reports no tokens and
    // no cost: null, never 0.
    let board = repo.run(&["board", "--json"]).expect(0).json();
    let ledger = &board["workflows"][0]["ledger"];
    for figures in [ledger, &ledger["prs"][0]] {
        assert_eq!(
            [
                &figures["turns"],
                &figures["turns_reporting"],
                &figures["tokens"],
                &figures["cost_usd"]
            ],
            [&json!(6), &json!(0), &json!(null), &json!(null)],
            "{ledger}"
        );
    }
    assert!(
        events
            .iter()
            .filter(|e| e["event"] == "turn")
            .all(|e| e["usage"].is_null())
    );
}

#[test]
fn an_agent_stuck_on_a_step_gets_a_fresh_session_then_the_workflow_halts_as_stuck() {
    let repo = TestRepo::new();
    let (code, events) = run(&repo, "lazy", &["--retry", "auto", "--fresh-after", "2"]);
    assert_eq!(code, 10, "{events:#?}");
    // Plan, RED, then three turns on GREEN without progress: same, same, then fresh.
    assert_eq!(
        field(&events, "session"),
        ["fresh", "same", "same", "same", "fresh"]
    );
    let progressed: Vec<bool> = events
        .iter()
        .filter(|e| e["event"] == "turn")
        .map(|e| e["progressed"] == true)
        .collect();
    assert_eq!(progressed, [true, true, false, false, false]);
    let ids: Vec<&str> = field(&events, "session_id");
    assert_eq!(ids[1], ids[3], "the same session continues");
    assert_ne!(ids[3], ids[4], "a fresh session is a new one");
    assert_eq!(events.last().unwrap()["outcome"], "stuck");

    let status = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(status["state"], "HALTED");
    assert_eq!(status["halt"]["reason"], "stuck");
    assert_eq!(status["halt"]["resume_to"], "EXECUTING_TDD");
    let report = repo.git(&["show", "refs/orchestrator/workflows/main:escalation.md"]);
    assert!(
        report.starts_with("# `git orchestrate run`: the agent is stuck"),
        "{report}"
    );
    assert!(
        report.contains("on step 1.2 (GREEN), the agent made no progress"),
        "{report}"
    );
    assert!(report.contains("## Turn 5 (fresh session"), "{report}");
    assert!(
        report.contains("    STEP 1.2 (GREEN) of task 1/1"),
        "the briefing given: {report}"
    );
    assert!(
        report.contains("    Not today."),
        "what the agent said: {report}"
    );
    // The halted briefing shows the report; a human answers it as an escalation.
    repo.run(&["get-task"]).expect(10).says("The run's report");
    repo.human(&["resume", "--guidance", "write add.sh"])
        .expect(0);
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["state"],
        "EXECUTING_TDD"
    );
    repo.run(&["audit"]).expect(0);
}

#[test]
fn an_agent_that_never_acts_does_not_loop_forever() {
    let repo = TestRepo::new();
    let (code, events) = run(&repo, "idle", &[]);
    assert_eq!(code, 10);
    assert_eq!(field(&events, "session"), ["fresh", "same", "same"]);
    assert_eq!(events.last().unwrap()["outcome"], "stuck");
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["halt"]["reason"],
        "stuck"
    );
    // The turn limit ends a run as well, with the workflow left as it was.
    let repo = TestRepo::new();
    let (code, events) = run(&repo, "good", &["--max-turns", "2"]);
    assert_eq!(code, 10);
    assert_eq!(events.last().unwrap()["outcome"], "max_turns");
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["state"],
        "EXECUTING_TDD"
    );
}

#[test]
fn run_needs_an_agent_and_says_how() {
    let repo = TestRepo::new();
    let out = repo.run(&["run"]);
    out.expect(2);
    assert!(out.stderr.contains("run needs an agent"), "{}", out.stderr);
    repo.run(&["run", "--agent", "claude", "--", "true"])
        .expect(2);
    let out = repo.run(&["run", "--", "/nonexistent/agent"]);
    out.expect(2);
    assert!(out.stderr.contains("not found"), "{}", out.stderr);
}

#[test]
fn ctrl_c_stops_the_agent_and_leaves_the_workflow_consistent() {
    use std::os::unix::process::CommandExt;
    let repo = TestRepo::new();
    repo.run(&["get-task"]).expect(0);
    let tip = repo.tip();
    let agent = agent();
    // As a terminal runs it: `run` and the agent in one foreground process group, Ctrl-C
    // heeded. A shell resets SIGINT for a job it runs in the foreground; this test may run
    // under a script's `cmd &`, which ignores it, and `run` keeps a signal ignored that it
    // was started ignoring (`nohup`): the agent then slept its minute and the run went on.
    let mut command = repo.command(BIN, ["run", "--", "python3", &agent]);
    command
        .env("AGENT_MODE", "sleep")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    // SAFETY: signal(2) is async-signal-safe, as a pre_exec hook requires.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        })
    };
    let mut child = command.spawn().unwrap();
    let pid_file = repo.path.join("agent.pid");
    for _ in 0..200 {
        if pid_file.exists() && std::fs::read_to_string(&pid_file).is_ok_and(|s| !s.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let agent_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the process group made above.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(crate::process_gone(agent_pid), "the agent was stopped");
    assert_eq!(repo.tip(), tip, "nothing was written");
    // Nor the turn recorded: it was cut short, and the next run records it as interrupted.
    assert_eq!(
        repo.git(&["for-each-ref", "refs/orchestrator/runs/"]),
        "",
        "no turn recorded after the Ctrl-C"
    );
    repo.run(&["status"]).expect(0);
    repo.run(&["audit"]).expect(0);
}

#[test]
fn a_signal_to_run_alone_stops_the_agent_too() {
    let repo = TestRepo::new();
    repo.run(&["get-task"]).expect(0);
    let tip = repo.tip();
    let agent = agent();
    // As a supervisor stops it: `kill PID` to `run` alone, which shares its process group
    // with this test.
    let mut child = repo
        .command(BIN, ["run", "--", "python3", &agent])
        .env("AGENT_MODE", "sleep")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = repo.path.join("agent.pid");
    for _ in 0..200 {
        if pid_file.exists() && std::fs::read_to_string(&pid_file).is_ok_and(|s| !s.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let agent_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) of the child started above.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(crate::process_gone(agent_pid), "the agent was stopped");
    assert_eq!(repo.tip(), tip, "nothing was written");
    repo.run(&["status"]).expect(0);
    repo.run(&["audit"]).expect(0);
}

/// A stand-in for a known agent CLI, first on PATH: a shell script named `name` that
/// does `body`. Returns the PATH to run with.
fn fake_client(repo: &TestRepo, name: &str, body: &str) -> std::ffi::OsString {
    let bin = repo.path.parent().unwrap().join(format!(
        "bin-{}",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join(name);
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::env::join_paths(
        [
            bin,
            std::path::Path::new(BIN).parent().unwrap().to_path_buf(),
        ]
        .into_iter()
        .chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
}

/// An agent CLI that cannot start (here: one that refuses a flag, as Claude Code refuses
/// `--dangerously-skip-permissions` as root) stops the run at once, quoting what it said;
/// the workflow is untouched, not halted as "stuck".
#[test]
fn an_agent_that_cannot_start_stops_the_run_with_what_it_said() {
    let repo = TestRepo::new();
    repo.run(&["get-task"]).expect(0);
    repo.run(&["init", "--agent", "claude"]).expect(0);
    let tip = repo.tip();
    let path = fake_client(
        &repo,
        "claude",
        "echo '--dangerously-skip-permissions cannot be used with root/sudo privileges' >&2; exit 1",
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "claude"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "the agent `claude` could not start: turn 1 ended with exit 1 before it did anything; \
             the run stops, the workflow is untouched. It said:\n  > \
             --dangerously-skip-permissions cannot be used with root/sudo privileges"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip, "the workflow is untouched");
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/orchestrator/runs/main"])
            .trim(),
        "1",
        "one turn, kept"
    );
    // A command (no hooks to prove) that fails without doing or saying anything, too; its
    // turn is numbered on from the runs record.
    let out = repo.run(&["run", "--", "sh", "-c", "echo 'no such model' >&2; exit 3"]);
    out.expect(5);
    assert!(
        out.stderr
            .contains("could not start: turn 2 ended with exit 3 before it did anything"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("  > no such model"), "{}", out.stderr);
    assert_eq!(repo.tip(), tip);
}

/// A known client that runs its turn without loading the project's settings (an untrusted
/// project: no hooks, no guard) stops the run before the next turn; one whose session-start
/// hook fires is let on.
#[test]
fn a_turn_whose_agent_ran_without_our_hooks_stops_the_run() {
    let repo = TestRepo::new();
    repo.run(&["get-task"]).expect(0);
    repo.run(&["init", "--agent", "codex"]).expect(0);
    let path = fake_client(
        &repo,
        "codex",
        "echo 'Untrusted project-local configuration is disabled.' >&2\n\
         echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'",
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "codex", "--max-turns", "3"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "the agent `codex` ran turn 1 without git-orchestrate's hooks (their session-start hook \
             never ran), so its commands were not guarded; the run stops before another turn. It \
             said:\n  > Untrusted project-local configuration is disabled."
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("Run `git orchestrate init --agent codex` here"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/orchestrator/runs/main"])
            .trim(),
        "1"
    );
    // The same client, with its session-start hook run as a client runs it (in the
    // client's environment, the hook JSON on stdin), but without starting our MCP server:
    // guarded, and without the tools; the run stops there too.
    let hook = format!(
        "echo '{{\"session_id\":\"t-2\",\"cwd\":\"{}\",\"hook_event_name\":\"SessionStart\"}}' \
         | git-orchestrate agent-hook codex session-start >/dev/null\n",
        repo.path.display()
    );
    let path = fake_client(
        &repo,
        "codex",
        &format!("{hook}echo '{{\"type\":\"thread.started\",\"thread_id\":\"t-2\"}}'"),
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "codex", "--max-turns", "2"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "the agent `codex` ran turn 2 without git-orchestrate's MCP server (it never started \
             with the turn's token), so the agent had none of the orchestrate tools"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("it registers the server in .codex/config.toml"),
        "{}",
        out.stderr
    );
    // With the server started as the client starts it (it exits when its stdin closes): the
    // run goes on to its turn limit.
    let path = fake_client(
        &repo,
        "codex",
        &format!(
            "{hook}git-orchestrate mcp </dev/null >/dev/null\n\
             echo '{{\"type\":\"thread.started\",\"thread_id\":\"t-2\"}}'"
        ),
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "codex", "--max-turns", "2"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(10);
    assert!(out.stdout.contains("--max-turns 2"), "{}", out.stdout);
    // Another client's session-start (one the agent started itself) vouches for nothing.
    let path = fake_client(
        &repo,
        "codex",
        &format!(
            "echo '{{\"session_id\":\"c-1\",\"cwd\":\"{}\",\"hook_event_name\":\"SessionStart\"}}' \
             | git-orchestrate agent-hook claude session-start >/dev/null\n\
             echo '{{\"type\":\"thread.started\",\"thread_id\":\"t-3\"}}'",
            repo.path.display()
        ),
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "codex", "--max-turns", "2"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr
            .contains("ran turn 5 without git-orchestrate's hooks"),
        "{}",
        out.stderr
    );
    // The hook's record of a turn is taken by that turn: none is left to vouch for another.
    assert_eq!(
        std::fs::read_dir(repo.path.join(".git/orchestrator/run/started"))
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
}

/// Claude Code prints its reply as one JSON line (1.5 KB of usage and ids around it): a turn
/// run without our hooks is reported with the reply's `result`, not that line.
#[test]
fn an_unguarded_claude_turn_is_reported_with_its_reply_not_its_json() {
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    let padding = "x".repeat(1500);
    let path = fake_client(
        &repo,
        "claude",
        &format!(
            "echo '{{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"I have no \
             orchestrate tools here.\",\"session_id\":\"c-1\",\"usage\":\"{padding}\"}}'"
        ),
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "claude", "--max-turns", "3"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "so its commands were not guarded; the run stops before another turn. It said:\n  > \
             I have no orchestrate tools here."
        ),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("\"type\":\"result\""),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(&padding), "{}", out.stderr);
}

/// The first `turn` event of a `run --json`.
fn first_turn(out: &Run) -> Value {
    out.stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "turn")
        .expect("a turn event")
}

/// `run --max-turns 1` (after `options`) of `sh -c script`, the whole run held to 60 s.
fn one_turn_of(repo: &TestRepo, options: &[&str], script: &str) -> Run {
    let mut args = vec!["60", BIN];
    args.extend_from_slice(options);
    args.extend(["run", "--max-turns", "1", "--", "sh", "-c", script]);
    Run::from(repo.command("timeout", args).output().unwrap())
}

/// Whether process `pid` still runs (a zombie has ended).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// An agent that never ends is ended at `[retry] turn_timeout` with all it started, even a
/// `setsid` child; the turn says it timed out and the run goes on as after a turn without
/// progress.
#[test]
fn a_turn_that_never_ends_is_ended_at_its_time_limit_with_everything_it_started() {
    let repo = TestRepo::with_config(&format!("{CONFIG}\n[retry]\nturn_timeout = \"2s\"\n"));
    let pidfile = repo.path.with_extension("pid");
    let script = format!(
        "setsid sleep 300 & echo $! > '{}'; exec sleep 300",
        pidfile.display()
    );
    let out = one_turn_of(&repo, &["--json"], &script);
    assert_eq!(out.code, 10, "{}{}", out.stdout, out.stderr);
    let turn = first_turn(&out);
    assert_eq!(turn["exit"], "killed after the 2s timeout", "{turn:#}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(!alive(&pid), "the setsid child {pid} still runs");
}

/// What an agent leaves running when its turn ends (a `setsid` daemon with an empty
/// environment, reparented to `run`) is ended with the turn: it cannot race the next one.
#[test]
fn what_a_turn_leaves_running_ends_with_it() {
    let repo = TestRepo::new();
    let pidfile = repo.path.with_extension("pid");
    let script = format!(
        "env -i setsid /bin/sh -c 'echo $$ > \"{}\"; exec sleep 300' >/dev/null 2>&1 < /dev/null & sleep 1; exit 0",
        pidfile.display()
    );
    let out = one_turn_of(&repo, &[], &script);
    assert_eq!(out.code, 10, "{}{}", out.stdout, out.stderr);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(!alive(&pid), "the daemon {pid} outlived its turn");
}

/// One run drives a workflow at a time: a second is refused naming the first (pid, host);
/// the lock goes with its run however it ends, and a FIFO in its place is refused at once.
#[test]
fn two_runs_cannot_drive_one_workflow() {
    let repo = TestRepo::new();
    let first = repo
        .command(BIN, ["run", "--max-turns", "1", "--", "sleep", "5"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = repo.path.join(".git/orchestrator/run/main.lock");
    let start = std::time::Instant::now();
    while !lock.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the first run took no lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = repo.run(&["run", "--max-turns", "1", "--", "true"]);
    out.expect(4);
    assert!(
        out.stderr.contains(&format!(
            "run refused: another `git orchestrate run` (pid {}, host ",
            first.id()
        )) && out
            .stderr
            .contains("drives workflow main; nothing was started"),
        "{}",
        out.stderr
    );
    let mut first = first;
    first.wait().unwrap();
    // The lock went with its run: the next one takes it.
    let out = repo.run(&["run", "--max-turns", "1", "--", "true"]);
    assert_eq!(out.code, 10, "{}{}", out.stdout, out.stderr);

    // A lock file whose run was killed (nothing holds it) is taken over, whatever it says.
    std::fs::write(&lock, "999999999 elsewhere\n").unwrap();
    let out = repo.run(&["run", "--max-turns", "1", "--", "true"]);
    assert_eq!(out.code, 10, "{}{}", out.stdout, out.stderr);
    // A FIFO in its place is refused at once, not waited on.
    std::fs::remove_file(&lock).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&lock)
            .status()
            .unwrap()
            .success()
    );
    let out = Run::from(
        repo.command(
            "timeout",
            ["20", BIN, "run", "--max-turns", "1", "--", "true"],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(out.code, 5, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("it is not a regular file"),
        "{}",
        out.stderr
    );
}

/// A run killed mid-turn (SIGKILL: nothing of it runs after) leaves its turn unrecorded; the
/// next run records it as interrupted, numbers its own turns on from it, and takes over the
/// dead run's lock.
#[test]
fn a_turn_cut_short_by_a_kill_is_recorded_and_the_next_run_numbers_on() {
    let repo = TestRepo::new();
    let mut first = repo
        .command(BIN, ["run", "--max-turns", "1", "--", "sleep", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let turn_file = repo.path.join(".git/orchestrator/run/main.turn.json");
    let start = std::time::Instant::now();
    while !turn_file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the turn never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let out = repo.run(&["--json", "run", "--max-turns", "1", "--", "true"]);
    assert_eq!(out.code, 10, "{}{}", out.stdout, out.stderr);
    let turn = first_turn(&out);
    assert_eq!(turn["turn"], 2);
    let subjects = repo.git(&["log", "--format=%s", "refs/orchestrator/runs/main"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(
        subjects[0].starts_with("turn 2: INITIALIZING"),
        "{subjects:?}"
    );
    assert_eq!(
        subjects[1],
        "turn 1: INITIALIZING -> ? (interrupted: its run ended before the turn did)"
    );
    let record = repo.git(&["show", "refs/orchestrator/runs/main~1:turn.json"]);
    let record: Value = serde_json::from_str(&record).unwrap();
    assert_eq!(record["interrupted"], true);
}

/// A project whose gate runs the test the ticket's developer adds (`test_hello.sh`), so a
/// report is checked by running it; a ticket is started on it.
fn ticket_repo() -> TestRepo {
    let repo = TestRepo::with_config(
        "main_branch = \"main\"\n[[preflight]]\nname = \"tests\"\n\
         command = \"sh run_tests.sh && if [ -e test_hello.sh ]; then sh test_hello.sh; fi\"\n",
    );
    repo.run(&["ticket", "new", "--title", "Say hello"])
        .expect(0);
    repo
}

/// `run --json -- python3 ticket_agent.py` with `mode`: its exit code, its events, and the
/// lines the agent logged (turn, GIT_ORCHESTRATE_ROLE, session id, the role briefed).
fn run_ticket(repo: &TestRepo, mode: &str) -> (i32, Vec<Value>, Vec<Vec<String>>) {
    let log = repo.path.parent().unwrap().join(format!(
        "roles-{}.log",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents/ticket_agent.py")
        .display()
        .to_string();
    let out = Run::from(
        repo.command(BIN, ["--json", "run", "--", "python3", &agent])
            .env("AGENT_MODE", mode)
            .env("ROLE_LOG", &log)
            .output()
            .unwrap(),
    );
    let events = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{}", out.stderr))
        })
        .collect();
    let seen = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect();
    (out.code, events, seen)
}

#[test]
fn a_ticket_run_gives_each_turn_to_the_role_whose_turn_it_is_in_a_fresh_session_until_done() {
    let repo = ticket_repo();
    let (code, events, seen) = run_ticket(&repo, "good");
    assert_eq!(code, 0, "{events:#?}");
    // Manager assigns; developer reports; manager rejects and reassigns; developer fixes;
    // manager accepts and completes.
    assert_eq!(
        field(&events, "role"),
        ["manager", "developer", "manager", "developer", "manager"]
    );
    assert_eq!(
        field(&events, "state_after"),
        [
            "DEVELOPER",
            "MANAGER",
            "DEVELOPER",
            "MANAGER",
            "TICKET_DONE"
        ]
    );
    // Each agent process was told its role, and briefed as that role.
    let roles: Vec<(&str, &str)> = seen
        .iter()
        .map(|l| (l[1].as_str(), l[3].as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("manager", "manager"),
            ("developer", "developer"),
            ("manager", "manager"),
            ("developer", "developer"),
            ("manager", "manager"),
        ]
    );
    // Every hand-over starts a fresh session: no two turns share one.
    assert_eq!(field(&events, "session"), ["fresh"; 5]);
    let mut ids: Vec<&str> = field(&events, "session_id");
    assert_eq!(
        ids,
        seen.iter().map(|l| l[2].as_str()).collect::<Vec<_>>(),
        "the session each agent was given"
    );
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 5, "{ids:?}");
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"], &end["turns"]),
        (&json!("done"), &json!("TICKET_DONE"), &json!(5))
    );
    let ticket = repo.run(&["--json", "ticket", "show"]).expect(0).json();
    assert_eq!(ticket["state"], "TICKET_DONE");
    assert_eq!(ticket["ticket"]["subtasks"][0]["rejections"], 1);
    // main has the merge of one squashed commit, which says hello.
    let merge = repo.git(&["log", "-1", "--format=%P", "main"]);
    let parents: Vec<&str> = merge.split_whitespace().collect();
    assert_eq!(parents.len(), 2, "a merge: {merge}");
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
    // The turns are kept, each with its role.
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", "refs/orchestrator/runs/main~4"])
            .trim(),
        "turn 1: MANAGER manager -> DEVELOPER (progress)"
    );
    assert!(
        repo.git(&["show", "refs/orchestrator/runs/main~3:briefing.txt"])
            .contains("## Current Assignment")
    );
    // Run again: the ticket is done, nothing is started.
    let (code, events, seen) = run_ticket(&repo, "good");
    assert_eq!((code, events.len(), seen.len()), (0, 1, 5));
}

#[test]
fn a_stuck_developer_halts_the_ticket_and_a_humans_resume_gives_it_back_its_assignment() {
    let repo = ticket_repo();
    let (code, events, seen) = run_ticket(&repo, "lazy");
    assert_eq!(code, 10, "{events:#?}");
    assert_eq!(
        field(&events, "role"),
        ["manager", "developer", "developer", "developer"]
    );
    // The developer's own session continues while it makes no progress (the default
    // strategy), and only its own.
    assert_eq!(
        field(&events, "session"),
        ["fresh", "fresh", "same", "same"]
    );
    assert!(
        seen[1..]
            .iter()
            .all(|l| l[1] == "developer" && l[2] == seen[1][2])
    );
    let end = events.last().unwrap();
    assert_eq!(
        (&end["outcome"], &end["state"]),
        (&json!("stuck"), &json!("HALTED"))
    );
    let shown = repo.run(&["ticket", "show"]);
    shown.expect(0);
    assert!(
        shown
            .stdout
            .contains("HALTED: stuck: under `git orchestrate run` the developer made no progress"),
        "{}",
        shown.stdout
    );
    let report = repo.git(&["show", "refs/orchestrator/runs/main:stuck.md"]);
    assert!(
        report.contains("    Not today."),
        "what the agent said: {report}"
    );
    // A halted ticket ends the next run at once; a human's resume returns to DEVELOPER.
    let (code, events, _) = run_ticket(&repo, "lazy");
    assert_eq!(
        (code, &events.last().unwrap()["outcome"]),
        (10, &json!("halted"))
    );
    // Only a human answers a halt.
    repo.run(&["resume"]).expect(4);
    repo.human(&["resume", "--guidance", "write hello.sh"])
        .expect(0);
    let (code, events, _) = run_ticket(&repo, "good");
    assert_eq!(code, 0, "{events:#?}");
    assert_eq!(
        field(&events, "role"),
        ["developer", "manager", "developer", "manager"]
    );
    // The per-role agent flags are for tickets only.
    let tdd = TestRepo::new();
    let out = tdd.run(&[
        "run",
        "--manager-agent",
        "claude",
        "--developer-agent",
        "codex",
    ]);
    out.expect(2);
    assert!(
        out.stderr.contains("apply to ticket workflows"),
        "{}",
        out.stderr
    );
}

/// `--manager-agent` and `--developer-agent`: each role's turns go to its own agent CLI (here
/// stand-ins for claude and codex that fire the session-start hook as the real ones do, then
/// play the role with ticket_agent.py).
#[test]
fn each_role_of_a_ticket_can_have_its_own_agent_cli() {
    let repo = ticket_repo();
    wire_untracked(&repo, &["claude", "codex"]);
    let dir = repo.path.parent().unwrap().to_path_buf();
    let name = repo.path.file_name().unwrap().to_string_lossy().to_string();
    let clients = dir.join(format!("clients-{name}.log"));
    let agent = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents/ticket_agent.py");
    let body = |client: &str| {
        format!(
            "echo \"{client} $GIT_ORCHESTRATE_ROLE\" >> '{}'\n\
             echo '{{\"session_id\":\"s\",\"cwd\":\"{}\",\"hook_event_name\":\"SessionStart\"}}' \
             | git-orchestrate agent-hook {client} session-start >/dev/null\n\
             git-orchestrate mcp </dev/null >/dev/null\n\
             python3 '{}' < \"$GIT_ORCHESTRATE_BRIEFING_FILE\"",
            clients.display(),
            repo.path.display(),
            agent.display()
        )
    };
    fake_client(&repo, "claude", &body("claude"));
    let path = fake_client(&repo, "codex", &body("codex"));
    let out = Run::from(
        repo.command(
            BIN,
            [
                "run",
                "--manager-agent",
                "claude",
                "--developer-agent",
                "codex",
            ],
        )
        .env("PATH", &path)
        .env("ROLE_LOG", dir.join(format!("roles-{name}.log")))
        .output()
        .unwrap(),
    );
    out.expect(0);
    assert!(
        out.stdout.contains("run: done after 5 turns"),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&clients).unwrap(),
        "claude manager\ncodex developer\nclaude manager\ncodex developer\nclaude manager\n"
    );
}

/// A developer session that makes the manager's move (its own report approved by a child
/// process claiming the manager's role, out of the guard's sight) halts the ticket: `run`
/// checks whose moves each turn made.
#[test]
fn a_developer_session_that_makes_the_managers_move_halts_the_ticket() {
    let repo = ticket_repo();
    let (code, events, _) = run_ticket(&repo, "cheat");
    assert_eq!(code, 10, "{events:#?}");
    assert_eq!(field(&events, "role"), ["manager", "developer"]);
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "halted", "{end}");
    let ticket = repo.run(&["--json", "ticket", "show"]).expect(0).json();
    assert_eq!(ticket["state"], "HALTED");
    let halt = ticket["ticket"]["halt"].as_str().unwrap();
    assert!(
        halt.starts_with("the developer session made the manager's move `update-subtask` (commit "),
        "{halt}"
    );
}

/// `init --agent` for each client, its files left out of git's sight (`.git/info/exclude`):
/// the ticket's commits never carry them.
fn wire_untracked(repo: &TestRepo, clients: &[&str]) {
    for client in clients {
        repo.run(&["init", "--agent", client]).expect(0);
    }
    let exclude = repo.path.join(".git/info/exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    text.push_str(".claude/\n.mcp.json\n.codex/\n.gemini/\n");
    std::fs::write(&exclude, text).unwrap();
}

/// A known client stand-in that, started, would commit on main: proof that nothing started.
fn committing_client(repo: &TestRepo, name: &str) -> std::ffi::OsString {
    fake_client(
        repo,
        name,
        "git commit -q --no-verify --allow-empty -m started\necho '{\"result\":\"ok\"}'",
    )
}

/// `run` checks, before turn 1, that the project's settings name our hooks and our MCP
/// server as each client will load them (and Codex's `env_vars`): without them it refuses
/// with exit 5, naming the file and the fix, and nothing is started or written.
#[test]
fn run_refuses_before_turn_1_without_the_agent_files_or_the_mcp_entry() {
    let repo = TestRepo::new();
    // Every ref, and the working tree's status: a refused run changes neither.
    let refs = |repo: &TestRepo| {
        repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
            + &repo.git(&["status", "--porcelain"])
    };
    let before = refs(&repo);
    assert!(!before.contains("refs/orchestrator/"), "{before}");
    // No agent files at all.
    let path = committing_client(&repo, "claude");
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "claude"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "run refused before turn 1: claude would work here without git-orchestrate's hooks or \
             MCP server: .claude/settings.json is not there; .mcp.json is not there; nothing was \
             started or committed"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "Run `git orchestrate init --agent claude` here (it writes .claude/settings.json and .mcp.json)"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(refs(&repo), before, "nothing started or written");
    // The hooks, and no MCP server.
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.write(".mcp.json", "{\"mcpServers\": {}}\n");
    let before = refs(&repo);
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "claude"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            "claude would work here without git-orchestrate's hooks or MCP server: .mcp.json \
             registers no MCP server `orchestrate` that starts `git-orchestrate mcp`; nothing was \
             started or committed"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(refs(&repo), before, "nothing started or written");
    // Codex's server table without the variables the server needs.
    repo.run(&["init", "--agent", "codex"]).expect(0);
    let config = repo.path.join(".codex/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("env_vars"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without, text, "init --agent codex wrote env_vars");
    std::fs::write(&config, without).unwrap();
    let before = refs(&repo);
    let path = committing_client(&repo, "codex");
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "codex"])
            .env("PATH", &path)
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stderr.contains(
            ".codex/config.toml does not pass GIT_ORCHESTRATE_ROLE, GIT_ORCHESTRATE_WORKFLOW, \
             GIT_ORCHESTRATE_RUN_PROOF to the MCP server (env_vars under [mcp_servers.orchestrate])"
        ),
        "{}",
        out.stderr
    );
    // doctor says the same of the file, instead of "loads .mcp.json".
    let doctor = repo.run(&["doctor"]);
    assert!(
        doctor.stdout.contains(
            "claude: .mcp.json registers no MCP server `orchestrate` that starts `git-orchestrate mcp`"
        ),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor
            .stdout
            .contains(".codex/config.toml does not pass GIT_ORCHESTRATE_ROLE"),
        "{}",
        doctor.stdout
    );
    assert_eq!(refs(&repo), before, "nothing started or written");
}

/// Gemini CLI's folder rule `DO_NOT_TRUST` is the user's word: `run` refuses (exit 4) rather
/// than trusting the folder for its turns; a folder nobody judged is trusted, and the run's
/// first line says so.
#[test]
fn run_respects_gemini_clis_untrusted_folder_and_says_when_it_trusts_one() {
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "gemini"]).expect(0);
    let main = repo.git(&["rev-parse", "main"]);
    let home = tempfile::tempdir().unwrap();
    let folders = home.path().join(".gemini/trustedFolders.json");
    std::fs::create_dir_all(folders.parent().unwrap()).unwrap();
    let rules = format!("{{\"{}\": \"DO_NOT_TRUST\"}}", repo.path.display());
    std::fs::write(&folders, &rules).unwrap();
    let path = committing_client(&repo, "gemini");
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "gemini"])
            .env("PATH", &path)
            .env("HOME", home.path())
            .output()
            .unwrap(),
    );
    out.expect(4);
    assert!(
        out.stderr.contains(&format!(
            "run refused before turn 1: ~/.gemini/trustedFolders.json marks {} DO_NOT_TRUST",
            repo.path.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("change that rule to TRUST_FOLDER"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.git(&["rev-parse", "main"]), main, "nothing started");
    assert_eq!(std::fs::read_to_string(&folders).unwrap(), rules);
    // Not judged: trusted for the run's turns, said first.
    std::fs::remove_file(&folders).unwrap();
    let path = fake_client(
        &repo,
        "gemini",
        "echo \"trust=$GEMINI_CLI_TRUST_WORKSPACE\" >&2; exit 1",
    );
    let out = Run::from(
        repo.command(BIN, ["run", "--agent", "gemini"])
            .env("PATH", &path)
            .env("HOME", home.path())
            .output()
            .unwrap(),
    );
    out.expect(5);
    assert!(
        out.stdout.starts_with(
            "run: run trusts this folder for Gemini CLI's turns alone (GEMINI_CLI_TRUST_WORKSPACE=true)"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("  > trust=true"), "{}", out.stderr);
    assert!(!folders.exists(), "nothing recorded");
}
