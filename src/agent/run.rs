//! `git orchestrate run`, the decisions (docs/agent-guide.md): which agent session a turn goes
//! to, when an agent that makes no progress is stuck, how each known agent CLI is started
//! headless and what it said, and the stuck report. Pure: the engine runs the turns.

use serde_json::Value;

use crate::config::RetryStrategy;

use super::hook::Client;

/// The environment variable through which `git orchestrate run` gives each turn's agent a
/// token; the session-start hook and the MCP server, started by the client, write it back.
pub const RUN_PROOF_VAR: &str = "GIT_ORCHESTRATE_RUN_PROOF";

/// Which session a turn goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    Same,
    Fresh,
}

impl SessionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Same => "same",
            SessionMode::Fresh => "fresh",
        }
    }
}

/// The retry bookkeeping of a run: turns without progress on the step at hand.
#[derive(Clone, Debug)]
pub struct Retry {
    pub strategy: RetryStrategy,
    pub fresh_after: u32,
    pub max_iterations: u32,
    /// Where the workflow stood for the turns counted: state and step.
    step: Option<String>,
    /// Turns in a row on `step` that made no transition.
    pub without_progress: u32,
}

/// What a finished turn means for the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Continue,
    /// `max_iterations` turns in a row made no progress on one step.
    Stuck,
}

impl Retry {
    pub fn new(strategy: RetryStrategy, fresh_after: u32, max_iterations: u32) -> Retry {
        Retry {
            strategy,
            fresh_after,
            max_iterations,
            step: None,
            without_progress: 0,
        }
    }

    /// The session for the next turn, given whether there is one to continue.
    pub fn mode(&self, have_session: bool) -> SessionMode {
        if !have_session {
            return SessionMode::Fresh;
        }
        match self.strategy {
            RetryStrategy::Same => SessionMode::Same,
            RetryStrategy::Fresh => SessionMode::Fresh,
            // Once, when the count reaches the threshold: the fresh session then continues.
            RetryStrategy::Auto
                if self.without_progress > 0
                    && self.without_progress.is_multiple_of(self.fresh_after) =>
            {
                SessionMode::Fresh
            }
            RetryStrategy::Auto => SessionMode::Same,
        }
    }

    /// Counts a finished turn on `step`: `progressed` when the workflow made a transition.
    pub fn record(&mut self, step: &str, progressed: bool) -> Next {
        if progressed || self.step.as_deref() != Some(step) {
            self.step = Some(step.to_string());
            self.without_progress = 0;
        }
        if !progressed {
            self.without_progress += 1;
        }
        if self.without_progress >= self.max_iterations {
            Next::Stuck
        } else {
            Next::Continue
        }
    }
}

/// The longest briefing given as the agent's prompt argument: Linux takes at most 128 KiB in
/// one argument (MAX_ARG_STRLEN), and a briefing carries up to 64 KiB of failing output
/// besides everything else.
pub const MAX_PROMPT_BYTES: usize = 96 * 1024;

/// The prompt for a known agent: the briefing itself, or, when it is too long for one
/// argument, where to read it (the file `run` writes it to for every turn).
pub fn prompt(briefing: &str, file: &std::path::Path) -> String {
    if briefing.len() <= MAX_PROMPT_BYTES {
        return briefing.to_string();
    }
    format!(
        "Your briefing from git-orchestrate is too long to pass here ({} bytes). Read all of it \
         from the file {} and do what it says.",
        briefing.len(),
        file.display()
    )
}

/// How a known agent CLI runs one turn headless: its arguments (after the program name) and
/// the session the turn belongs to, when known before it runs.
pub fn agent_arguments(
    client: Client,
    mode: SessionMode,
    session: Option<&str>,
    new_session: &str,
    prompt: &str,
    trust: bool,
) -> (Vec<String>, Option<String>) {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let resume = session.filter(|_| mode == SessionMode::Same);
    match client {
        // Claude Code takes the session id of a new session, and resumes by it.
        Client::Claude => {
            let mut args = s(&[
                "-p",
                prompt,
                "--output-format",
                "json",
                "--dangerously-skip-permissions",
            ]);
            let id = match resume {
                Some(id) => {
                    args.extend(s(&["--resume", id]));
                    id
                }
                None => {
                    args.extend(s(&["--session-id", new_session]));
                    new_session
                }
            };
            (args, Some(id.to_string()))
        }
        // Codex loads a project's `.codex/` files only once the project is trusted (`--trust`
        // saves that, as a user's "yes" would: given only for a project its user never
        // judged), and runs its hooks only with their own trust: unattended, the guard must
        // run. `run` checks every turn that it did.
        Client::Codex => {
            let mut args = s(&["exec"]);
            if resume.is_some() {
                args.push("resume".into());
            }
            args.extend(s(&["--json", "--dangerously-bypass-approvals-and-sandbox"]));
            if trust {
                args.push("--trust".into());
            }
            args.push("--dangerously-bypass-hook-trust".into());
            match resume {
                Some(id) => {
                    args.extend(s(&[id, prompt]));
                    (args, Some(id.to_string()))
                }
                // Codex names its session itself: read from its first event.
                None => {
                    args.push(prompt.to_string());
                    (args, None)
                }
            }
        }
        Client::Gemini => {
            // In a folder not yet trusted, Gemini CLI drops the workspace settings (hooks and
            // MCP) and `--yolo`: `run` trusts the folder for the turn through the environment
            // (`trust_env`).
            let mut args = s(&["-p", prompt, "--yolo", "--output-format", "json"]);
            match resume {
                // Gemini CLI resumes "latest" or an index; the run's own session is the latest.
                Some(id) => {
                    args.extend(s(&["--resume", "latest"]));
                    (args, Some(id.to_string()))
                }
                None => {
                    args.extend(s(&["--session-id", new_session]));
                    (args, Some(new_session.to_string()))
                }
            }
        }
    }
}

/// A turn after which `run` must not start another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnFault {
    /// The agent failed without doing anything: it exited with an error, printed nothing on
    /// stdout and made no transition (a known client also never started its session).
    CouldNotStart,
    /// A known client ran the turn without firing the session-start hook of `init --agent`:
    /// it did not load the project's settings, so its commands were not guarded.
    Unguarded,
    /// A known client's hooks fired, but our MCP server never started with the turn's token:
    /// the agent had none of the orchestrate tools (Codex without `env_vars`, say).
    NoServer,
}

/// What a known client proved during a turn, by writing back the turn's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// The session-start hook of `init --agent` fired.
    pub hooks: bool,
    /// Our MCP server started.
    pub server: bool,
}

/// What one finished turn means for the run. `proof` is what a known client proved in the
/// turn (`None` for a command, which has no hooks and no server).
pub fn turn_fault(
    proof: Option<Proof>,
    failed: bool,
    progressed: bool,
    printed: bool,
) -> Option<TurnFault> {
    let silent_failure = failed && !progressed && !printed;
    match proof {
        Some(Proof {
            hooks: true,
            server: true,
        }) => None,
        Some(Proof { hooks: false, .. }) if silent_failure => Some(TurnFault::CouldNotStart),
        Some(Proof { hooks: false, .. }) => Some(TurnFault::Unguarded),
        Some(Proof { server: false, .. }) => Some(TurnFault::NoServer),
        None => silent_failure.then_some(TurnFault::CouldNotStart),
    }
}

/// `text` quoted for a message, a `  > ` before each line: its first and last `lines` lines
/// when it has more than twice as many (an error comes first, a backtrace or the last words
/// after it).
pub fn quoted(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let shown: Vec<String> = if all.len() > 2 * lines {
        all[..lines]
            .iter()
            .map(|l| l.to_string())
            .chain(std::iter::once(format!(
                "[{} lines left out]",
                all.len() - 2 * lines
            )))
            .chain(all[all.len() - lines..].iter().map(|l| l.to_string()))
            .collect()
    } else {
        all.iter().map(|l| l.to_string()).collect()
    };
    shown
        .iter()
        .map(|l| format!("  > {l}").trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The environment a known client needs to load the project's settings unasked.
pub fn trust_env(client: Client) -> &'static [(&'static str, &'static str)] {
    match client {
        Client::Gemini => &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
        Client::Claude | Client::Codex => &[],
    }
}

/// The program of a known agent.
pub fn program(client: Client) -> &'static str {
    match client {
        Client::Claude => "claude",
        Client::Codex => "codex",
        Client::Gemini => "gemini",
    }
}

/// What the agent said at the end of its turn, and its session id, read off its headless
/// output (Claude Code's and Gemini CLI's JSON result, Codex's JSON events); `None` where the
/// output does not say.
pub fn read_output(client: Client, stdout: &str) -> (Option<String>, Option<String>) {
    match client {
        Client::Claude | Client::Gemini => {
            let Some(value) = last_json_object(stdout) else {
                return (None, None);
            };
            let said = value["result"]
                .as_str()
                .or_else(|| value["response"].as_str())
                .map(str::to_string);
            let session = value["session_id"]
                .as_str()
                .or_else(|| value["sessionId"].as_str())
                .map(str::to_string);
            (said, session)
        }
        Client::Codex => {
            let mut said = None;
            let mut session = None;
            for line in stdout.lines() {
                let Ok(event) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                if session.is_none() {
                    session = ["thread_id", "session_id"]
                        .iter()
                        .find_map(|k| event[*k].as_str())
                        .map(str::to_string);
                }
                if let Some(text) = event["item"]["text"].as_str()
                    && event["item"]["type"] == "agent_message"
                {
                    said = Some(text.to_string());
                }
            }
            (said, session)
        }
    }
}

/// The last line of `text` that is a JSON object (a CLI may print warnings before it).
fn last_json_object(text: &str) -> Option<Value> {
    if let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(value);
    }
    text.lines().rev().find_map(|l| {
        serde_json::from_str::<Value>(l)
            .ok()
            .filter(Value::is_object)
    })
}

/// One turn, as the stuck report tells it.
#[derive(Clone, Debug)]
pub struct TurnStory {
    pub turn: u32,
    pub mode: SessionMode,
    pub session: Option<String>,
    pub seconds: f64,
    pub exit: String,
    pub briefing: String,
    pub said: String,
}

/// The report a stuck run leaves for the human (as `escalation.md`).
pub fn stuck_report(
    state: &str,
    step: &str,
    max_iterations: u32,
    turns: &[TurnStory],
    last_failure: Option<&str>,
) -> String {
    let mut out = format!(
        "# `git orchestrate run`: the agent is stuck\n\nIn state {state}, on {step}, the agent made no progress \
         (no transition of the workflow) in {} turns in a row, so the run stopped it \
         (`[retry] max_iterations = {max_iterations}`).\n",
        turns.len()
    );
    for t in turns {
        out.push_str(&format!(
            "\n## Turn {} ({} session{}, {:.1} s, {})\n\nThe briefing it was given:\n\n{}\nWhat the agent said:\n\n{}",
            t.turn,
            t.mode.as_str(),
            t.session.as_deref().map(|s| format!(" {s}")).unwrap_or_default(),
            t.seconds,
            t.exit,
            quote(&t.briefing),
            quote(if t.said.trim().is_empty() { "(nothing)" } else { &t.said }),
        ));
    }
    out.push_str("\n## The last failing output\n\n");
    match last_failure {
        Some(text) if !text.trim().is_empty() => out.push_str(&quote(text)),
        _ => out.push_str("(none recorded for this step)\n"),
    }
    out
}

/// Text indented as a Markdown code block: nothing in it can close it.
fn quote(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn auto_goes_fresh_once_after_n_turns_without_progress_then_stuck() {
        let mut retry = Retry::new(RetryStrategy::Auto, 2, 3);
        assert_eq!(retry.mode(false), SessionMode::Fresh);
        assert_eq!(retry.record("s1", true), Next::Continue);
        assert_eq!(retry.mode(true), SessionMode::Same);
        assert_eq!(retry.record("s2", false), Next::Continue);
        assert_eq!(retry.mode(true), SessionMode::Same);
        assert_eq!(retry.record("s2", false), Next::Continue);
        assert_eq!(retry.mode(true), SessionMode::Fresh);
        assert_eq!(retry.record("s2", false), Next::Stuck);
        // Progress starts the count again.
        let mut retry = Retry::new(RetryStrategy::Auto, 2, 3);
        retry.record("s1", false);
        retry.record("s1", false);
        assert_eq!(retry.record("s1", true), Next::Continue);
        assert_eq!(retry.without_progress, 0);
        assert_eq!(retry.mode(true), SessionMode::Same);
    }

    #[test]
    fn same_and_fresh_are_what_they_say() {
        let retry = Retry::new(RetryStrategy::Same, 2, 3);
        assert_eq!(retry.mode(true), SessionMode::Same);
        assert_eq!(retry.mode(false), SessionMode::Fresh);
        let retry = Retry::new(RetryStrategy::Fresh, 2, 3);
        assert_eq!(retry.mode(true), SessionMode::Fresh);
    }

    #[test]
    fn a_briefing_too_long_for_one_argument_goes_by_its_file() {
        let file = std::path::Path::new("/repo/.git/orchestrator/run/briefing.txt");
        let short = "STEP 1.1 (RED)\n";
        assert_eq!(prompt(short, file), short);
        let long = "x".repeat(MAX_PROMPT_BYTES + 1);
        assert_eq!(
            prompt(&long, file),
            format!(
                "Your briefing from git-orchestrate is too long to pass here ({} bytes). Read all \
                 of it from the file /repo/.git/orchestrator/run/briefing.txt and do what it says.",
                MAX_PROMPT_BYTES + 1
            )
        );
    }

    #[test]
    fn known_agents_continue_their_own_sessions() {
        let (args, session) = agent_arguments(
            Client::Claude,
            SessionMode::Fresh,
            None,
            "u-1",
            "do it",
            true,
        );
        assert_eq!(
            args,
            [
                "-p",
                "do it",
                "--output-format",
                "json",
                "--dangerously-skip-permissions",
                "--session-id",
                "u-1"
            ]
        );
        assert_eq!(session.as_deref(), Some("u-1"));
        let (args, _) = agent_arguments(
            Client::Claude,
            SessionMode::Same,
            Some("u-1"),
            "u-2",
            "go on",
            true,
        );
        assert_eq!(args[5..], ["--resume", "u-1"]);
        let (args, session) = agent_arguments(
            Client::Codex,
            SessionMode::Same,
            Some("t-9"),
            "u",
            "p",
            true,
        );
        assert_eq!(
            args,
            [
                "exec",
                "resume",
                "--json",
                "--dangerously-bypass-approvals-and-sandbox",
                "--trust",
                "--dangerously-bypass-hook-trust",
                "t-9",
                "p"
            ]
        );
        assert_eq!(session.as_deref(), Some("t-9"));
        let (args, session) = agent_arguments(
            Client::Codex,
            SessionMode::Fresh,
            Some("t-9"),
            "u",
            "p",
            true,
        );
        assert_eq!(args[..2], ["exec", "--json"]);
        assert_eq!(session, None);
        // A project its user trusted already (or must not be trusted): no `--trust`, which
        // would write over the user's own record.
        let (args, _) = agent_arguments(Client::Codex, SessionMode::Fresh, None, "u", "p", false);
        assert_eq!(
            args,
            [
                "exec",
                "--json",
                "--dangerously-bypass-approvals-and-sandbox",
                "--dangerously-bypass-hook-trust",
                "p"
            ]
        );
        let (args, _) =
            agent_arguments(Client::Gemini, SessionMode::Same, Some("g"), "u", "p", true);
        assert_eq!(args[args.len() - 2..], ["--resume", "latest"]);
    }

    #[test]
    fn a_turn_without_the_hooks_or_without_a_start_stops_the_run() {
        use TurnFault::*;
        let proved = |hooks, server| Some(Proof { hooks, server });
        // A known client: the session-start hook and the server's start decide.
        assert_eq!(turn_fault(proved(true, true), true, false, false), None);
        assert_eq!(
            turn_fault(proved(false, false), true, false, false),
            Some(CouldNotStart)
        );
        assert_eq!(
            turn_fault(proved(false, false), false, false, true),
            Some(Unguarded)
        );
        assert_eq!(
            turn_fault(proved(false, true), true, true, true),
            Some(Unguarded)
        );
        // One that worked without the hooks and then failed ran unguarded: not "could not
        // start".
        assert_eq!(
            turn_fault(proved(false, false), true, false, true),
            Some(Unguarded)
        );
        // Guarded, but without the tools.
        assert_eq!(
            turn_fault(proved(true, false), false, true, true),
            Some(NoServer)
        );
        // A command: only a failure that did and said nothing.
        assert_eq!(turn_fault(None, true, false, false), Some(CouldNotStart));
        assert_eq!(turn_fault(None, true, false, true), None);
        assert_eq!(turn_fault(None, true, true, false), None);
        assert_eq!(turn_fault(None, false, false, false), None);
    }

    #[test]
    fn what_an_agent_said_is_quoted_by_its_first_and_last_lines() {
        assert_eq!(quoted("a\n\nb\n", 2), "  > a\n  >\n  > b");
        let long: String = (1..=7).map(|n| format!("{n}\n")).collect();
        assert_eq!(
            quoted(&long, 2),
            "  > 1\n  > 2\n  > [3 lines left out]\n  > 6\n  > 7"
        );
    }

    #[test]
    fn what_each_agent_said_is_read_off_its_output() {
        let claude = "warning: old node\n{\"type\":\"result\",\"result\":\"All done.\",\"session_id\":\"abc\"}\n";
        assert_eq!(
            read_output(Client::Claude, claude),
            (Some("All done.".into()), Some("abc".into()))
        );
        let codex = "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"fixed\"}}\n";
        assert_eq!(
            read_output(Client::Codex, codex),
            (Some("fixed".into()), Some("t-1".into()))
        );
        assert_eq!(read_output(Client::Gemini, "not json"), (None, None));
    }

    #[test]
    fn the_stuck_report_tells_each_turn() {
        let turn = |n| TurnStory {
            turn: n,
            mode: SessionMode::Same,
            session: Some("s".into()),
            seconds: 1.0,
            exit: "exit 0".into(),
            briefing: "STEP 1.2 (GREEN)\n```\nx".into(),
            said: String::new(),
        };
        let report = stuck_report(
            "EXECUTING_TDD",
            "step 1.2 (GREEN)",
            2,
            &[turn(3), turn(4)],
            Some("boom"),
        );
        assert!(report.starts_with("# `git orchestrate run`: the agent is stuck\n\nIn state EXECUTING_TDD, on step 1.2 (GREEN), the agent made no progress (no transition of the workflow) in 2 turns in a row"), "{report}");
        assert!(report.contains("## Turn 4 (same session s, 1.0 s, exit 0)\n\nThe briefing it was given:\n\n    STEP 1.2 (GREEN)\n    ```\n    x\n"), "{report}");
        assert!(report.contains("What the agent said:\n\n    (nothing)\n"));
        assert!(report.ends_with("## The last failing output\n\n    boom\n"));
    }
}
