//! The demo's scenario: a throwaway repository with a tiny shell project and a master plan,
//! and a scripted agent (and human) that drive this very binary through the workflow,
//! narrating every briefing and transition. Nothing is simulated: real git, real processes.
//! `git orchestrate demo` (src/cli/demo.rs) runs it and renders the report.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::exec;
use crate::workflow::briefing::shell_quote;

/// The first PR's plan, as the scripted agent submits it; the tests submit the same file.
pub const PLAN: &str = include_str!("plan.json");
/// The re-plan after the scope reduction of task `sub`.
pub const REPLAN: &str = include_str!("replan.json");
/// The second PR's plan, submitted after the merge.
pub const PLAN_2: &str = include_str!("plan-2.json");

/// Lifts the terminal check of a human's command (`resume`, `approve`, `reject`).
const HUMAN_ENV: &str = "GIT_ORCHESTRATE_HUMAN";

/// Where to build the demo repository.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A new or empty directory to build it in and keep; a temporary one otherwise.
    pub dir: Option<PathBuf>,
    /// Keep the temporary repository.
    pub keep: bool,
}

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("the demo could not {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Git(String),
    /// A scripted step did not do what the script expects of it: a bug in git-orchestrate
    /// or in the demo.
    #[error("{0}")]
    Unexpected(String),
    #[error("{} is not empty", .0.display())]
    NotEmpty(PathBuf),
    /// Writing the narration failed (a closed pipe, say).
    #[error(transparent)]
    Narration(std::io::Error),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DemoError {
    let what = what.into();
    move |source| DemoError::Io { what, source }
}

/// What the demo did, as `demo --json` reports it.
#[derive(Debug, Serialize)]
pub struct DemoReport {
    pub repository: PathBuf,
    pub kept: bool,
    pub steps: Vec<Step>,
    pub audit_log: Vec<String>,
}

/// The workflow the demo drives (the default one).
const DEMO_WORKFLOW: &str = "main";

const MASTER_PLAN: &str = "# Master plan: calc, a tiny shell calculator

## PR 1: feat: Add and subtract numbers
- `add A B` prints A + B
- `sub A B` prints A - B

## PR 2: feat: Multiply numbers
- `mul A B` prints A * B
";

const CONFIG: &str = "main_branch = \"main\"
master_plan = \"docs/Plan_Doc/Active_Plan.md\"

[[preflight]]
name = \"tests\"
command = \"sh tests/run_all.sh\"
timeout = \"1m\"

# The demo's reviewer is a small script (tools/review.sh); a real one would ask a model.
[review]
command = \"sh tools/review.sh\"
dimensions = [\"correctness\", \"style\"]
max_rounds = 2

# Small thresholds, so the demo reaches the escape hatches quickly (defaults: 2 / 5 / 6 / 10).
[debugging]
hypothesize_max_attempts = 1
instrumentation_max_attempts = 1
unlock_scope_reduction_at = 2
unlock_escalation_at = 3

[test]
timeout = \"1m\"
output_tail = 40
";

const RUN_ALL: &str = "#!/bin/sh
# Runs every tests/test_*.sh; fails on the first failure.
for t in tests/test_*.sh; do
  [ -e \"$t\" ] || continue
  sh \"$t\" || exit 1
done
echo \"all tests passed\"
";

/// Reads the review context (JSON) on stdin and prints findings (JSON). It knows two rules:
/// style wants every function to print with printf; correctness always notes the missing docs.
const REVIEWER: &str = r#"#!/bin/sh
# The demo's code reviewer. git orchestrate runs it once per dimension, the review context
# as JSON on stdin ({pr, base, head, diff, dimension, round, ...}); it prints
# {"findings": [{"priority", "file", "line", "issue", "suggestion"}]}.
context=$(cat)
case "$context" in
  *'"dimension":"style"'*)
    if printf '%s' "$context" | grep -q '+[a-z]*() { echo \$(('; then
      echo '{"findings": [{"priority": "P1", "file": "lib/calc.sh", "issue": "a function prints with echo while add prints with printf: output formatting must be consistent", "suggestion": "print with printf as add does"}]}'
    else
      echo '{"findings": []}'
    fi ;;
  *)
    echo '{"findings": [{"priority": "P3", "file": "lib/calc.sh", "issue": "sub and neg have no usage comment", "suggestion": "document them like add"}]}' ;;
esac
"#;

const CALC_EMPTY: &str = "# calc: shell functions for arithmetic.\n";

const TEST_ADD: &str = "#!/bin/sh
. ./lib/calc.sh
result=$(add 2 3)
if [ \"$result\" != \"5\" ]; then
  echo \"FAIL: add 2 3 printed '$result', expected 5\"
  exit 1
fi
echo \"ok: add 2 3 = 5\"
";

const CALC_ADD: &str = "# calc: shell functions for arithmetic.
add() { echo $(($1 + $2)); }
";

const CALC_ADD_REFACTOR_BROKEN: &str = "# calc: shell functions for arithmetic.

# add A B: prints A + B.
add() { printf '%d\\n' \"$(($1 + $3))\"; }
";

const CALC_ADD_REFACTOR_FIXED: &str = "# calc: shell functions for arithmetic.

# add A B: prints A + B.
add() { printf '%d\\n' \"$(($1 + $2))\"; }
";

const TEST_SUB: &str = "#!/bin/sh
. ./lib/calc.sh
result=$(sub 5 3)
if [ \"$result\" != \"2\" ]; then
  echo \"FAIL: sub 5 3 printed '$result', expected 2\"
  exit 1
fi
echo \"ok: sub 5 3 = 2\"
";

const TEST_NEG: &str = "#!/bin/sh
. ./lib/calc.sh
result=$(neg 3)
if [ \"$result\" != \"-3\" ]; then
  echo \"FAIL: neg 3 printed '$result', expected -3\"
  exit 1
fi
echo \"ok: neg 3 = -3\"
";

const TEST_MUL: &str = "#!/bin/sh
. ./lib/calc.sh
result=$(mul 4 3)
if [ \"$result\" != \"12\" ]; then
  echo \"FAIL: mul 4 3 printed '$result', expected 12\"
  exit 1
fi
echo \"ok: mul 4 3 = 12\"
";

/// The calc library after task 1, plus `extra`.
fn calc_with(extra: &str) -> String {
    format!("{CALC_ADD_REFACTOR_FIXED}{extra}")
}

const ESCALATION: &str = "# sub 5 3 keeps printing 0

**Goal:** task 2b, `sub A B` prints A - B, built as `add A (neg B)`.

**Tried:**
1. `sub() { add \"$1\" \"$(neg $1)\"; }`: prints 0.
2. The same again, with quoting changes: prints 0 (identical failure).
3. `sub() { add \"$(neg $1)\" \"$1\"; }`: prints 0.

**Error:** `FAIL: sub 5 3 printed '0', expected 2`

**Analysis:** every variant cancels out. I do not see which operand `neg` should take.
";

/// One thing the scripted agent or human did, as `--json` reports it.
#[derive(Debug, Serialize)]
pub struct Step {
    actor: &'static str,
    what: String,
    command: Option<String>,
    exit: Option<i32>,
    stdout: String,
    stderr: String,
    /// Workflow commits made by this step: `<short id> <subject>`.
    transitions: Vec<String>,
}

struct Demo<'a> {
    repo: PathBuf,
    exe: PathBuf,
    path_env: std::ffi::OsString,
    /// The narration for people; `None` with `--json`, where the steps speak for themselves.
    out: Option<&'a mut dyn Write>,
    shown_tip: Option<String>,
    steps: Vec<Step>,
}

impl Demo<'_> {
    /// Narration for people.
    fn say(&mut self, text: &str) -> Result<(), DemoError> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let mut text = text.to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(DemoError::Narration)
    }

    /// Something done outside `git orchestrate`: editing files, looking at git.
    fn act(&mut self, actor: &'static str, what: &str) -> Result<(), DemoError> {
        self.say(&format!("\n━━━━ {actor}: {what}"))?;
        self.steps.push(Step {
            actor,
            what: what.to_string(),
            command: None,
            exit: None,
            stdout: String::new(),
            stderr: String::new(),
            transitions: Vec::new(),
        });
        Ok(())
    }

    fn remove(&self, path: &str) -> Result<(), DemoError> {
        let full = self.repo.join(path);
        std::fs::remove_file(&full).map_err(io(format!("remove {}", full.display())))
    }

    fn write(&self, path: &str, content: &str) -> Result<(), DemoError> {
        let full = self.repo.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
        }
        std::fs::write(&full, content).map_err(io(format!("write {}", full.display())))
    }

    fn git(&self, args: &[&str]) -> Result<String, DemoError> {
        let out = self.git_captured(args)?;
        if out.code != Some(0) {
            return Err(DemoError::Git(format!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs git with the demo's PATH, so that the installed hooks run this binary.
    fn git_captured(&self, args: &[&str]) -> Result<exec::Captured, DemoError> {
        exec::run_captured(
            Path::new("git"),
            args,
            &self.repo,
            &[("PATH", Some(self.path_env.as_os_str()))],
            None,
        )
        .map_err(io("run git"))
    }

    /// Runs a git command the `actor` types, hooks and all, and shows what it printed;
    /// `succeeds` is what the script expects of it.
    fn git_shown(
        &mut self,
        actor: &'static str,
        what: &str,
        args: &[&str],
        succeeds: bool,
    ) -> Result<(), DemoError> {
        let shown: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        let command = format!("git {}", shown.join(" "));
        self.say(&format!("\n━━━━ {actor}: {what}\n$ {command}"))?;
        let out = self.git_captured(args)?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.code.unwrap_or(-1);
        self.say(&stdout)?;
        self.say(&stderr)?;
        self.say(&format!("[exit {code}]"))?;
        if (code == 0) != succeeds {
            return Err(DemoError::Unexpected(format!(
                "the demo expected `{command}` to {}, but it exited {code}:\n{stderr}",
                if succeeds { "succeed" } else { "fail" }
            )));
        }
        self.steps.push(Step {
            actor,
            what: what.to_string(),
            command: Some(command),
            exit: Some(code),
            stdout,
            stderr,
            transitions: Vec::new(),
        });
        Ok(())
    }

    /// Runs `git orchestrate ARGS` (this binary) as the `actor` would, prints what it printed
    /// and the transitions it made, and checks the exit code the script expects.
    fn run(
        &mut self,
        actor: &'static str,
        what: &str,
        args: &[&str],
        stdin: Option<&str>,
        expect: i32,
    ) -> Result<String, DemoError> {
        let shown: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        let command = format!("git orchestrate {}", shown.join(" "));
        self.say(&format!("\n━━━━ {actor}: {what}\n$ {command}"))?;
        // The human's commands are typed in a terminal; the demo says so the way a script
        // acting for a person does. The agent runs without that claim.
        let human = (actor == "human").then_some(std::ffi::OsStr::new("1"));
        let env = [
            ("PATH", Some(self.path_env.as_os_str())),
            ("GIT_ORCHESTRATE_WORKFLOW", None),
            (HUMAN_ENV, human),
        ];
        let out = exec::run_captured(&self.exe, args, &self.repo, &env, stdin.map(str::as_bytes))
            .map_err(io(format!("run {}", self.exe.display())))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.code.unwrap_or(-1);
        self.say(&stdout)?;
        self.say(&stderr)?;
        self.say(&format!("[exit {code}]"))?;
        if code != expect {
            return Err(DemoError::Unexpected(format!(
                "the demo expected exit {expect} from `{command}`, got {code}:\n{stderr}"
            )));
        }
        let transitions = self.transitions()?;
        self.steps.push(Step {
            actor,
            what: what.to_string(),
            command: Some(command),
            exit: Some(code),
            stdout: stdout.clone(),
            stderr,
            transitions,
        });
        Ok(stdout)
    }

    /// Prints and returns the workflow commits made since the last look.
    fn transitions(&mut self) -> Result<Vec<String>, DemoError> {
        let reference = crate::store::workflow_ref(DEMO_WORKFLOW);
        let reference = reference.as_str();
        let tip = self
            .git(&["rev-parse", "--verify", "--quiet", reference])
            .ok();
        let tip = tip.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        if tip == self.shown_tip {
            return Ok(Vec::new());
        }
        let range = match &self.shown_tip {
            Some(old) => format!("{old}..{reference}"),
            None => reference.to_string(),
        };
        let log = self.git(&["log", "--reverse", "--format=%h %s", &range])?;
        let lines: Vec<String> = log.lines().map(str::to_string).collect();
        for line in &lines {
            self.say(&format!("  transition {line}"))?;
        }
        self.shown_tip = tip;
        Ok(lines)
    }
}

/// Runs the whole demo with this very binary, narrating to `out` (none: silent), and
/// reports what it did.
pub fn run(options: &Options, out: Option<&mut dyn Write>) -> Result<DemoReport, DemoError> {
    let exe = std::env::current_exe().map_err(io("find this binary"))?;
    let mut temp = None;
    let (repo, keep) = match &options.dir {
        Some(dir) => {
            if dir.exists()
                && std::fs::read_dir(dir)
                    .map_err(io(format!("read {}", dir.display())))?
                    .next()
                    .is_some()
            {
                return Err(DemoError::NotEmpty(dir.clone()));
            }
            std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
            (dir.clone(), true)
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("git-orchestrate-demo-")
                .tempdir()
                .map_err(io("create a temporary directory"))?;
            let path = dir.path().to_path_buf();
            temp = Some(dir);
            (path, options.keep)
        }
    };
    // `git orchestrate` inside the demo must be this binary, whatever else is installed.
    let path_env = exec::path_with_first(exe.parent().unwrap_or(Path::new("/")))
        .map_err(|e| io("build PATH")(std::io::Error::other(e)))?;
    let mut demo = Demo {
        repo: repo.clone(),
        exe,
        path_env,
        out,
        shown_tip: None,
        steps: Vec::new(),
    };
    script(&mut demo)?;
    let audit_log = demo.git(&[
        "log",
        "--format=%h %s",
        &crate::store::workflow_ref(DEMO_WORKFLOW),
    ])?;
    if keep {
        let dir = repo.display().to_string();
        demo.say(&format!(
            "\nThe demo repository is kept at {dir}\n  cd {dir} && git orchestrate status"
        ))?;
        // A TempDir deletes its directory on drop unless it is kept.
        if let Some(temp) = temp.take() {
            let _ = temp.keep();
        }
    } else {
        demo.say("\n(The demo repository was temporary and is removed now; `git orchestrate demo --keep` keeps it.)")?;
    }
    Ok(DemoReport {
        repository: repo,
        kept: keep,
        steps: std::mem::take(&mut demo.steps),
        audit_log: audit_log.lines().map(str::to_string).collect(),
    })
}

impl Demo<'_> {
    fn agent(
        &mut self,
        what: &str,
        args: &[&str],
        stdin: Option<&str>,
        expect: i32,
    ) -> Result<String, DemoError> {
        self.run("agent", what, args, stdin, expect)
    }

    /// The agent submits a plan on stdin, as the briefing suggests.
    fn submit_plan(&mut self, what: &str, summary: &str, plan: &str) -> Result<String, DemoError> {
        self.agent(
            what,
            &["submit-work", "--summary", summary, "--plan", "-"],
            Some(plan),
            0,
        )
    }

    fn human(&mut self, what: &str, args: &[&str], expect: i32) -> Result<String, DemoError> {
        self.run("human", what, args, None, expect)
    }
}

fn submit_test<'a>(summary: &'a str, command: &'a str) -> [&'a str; 5] {
    [
        "submit-work",
        "--summary",
        summary,
        "--test-command",
        command,
    ]
}

/// Task 2 goes wrong: a locked escape hatch, the unlock, a scope reduction and re-plan, then
/// an escalation that a human answers with guidance.
fn sub_story(d: &mut Demo) -> Result<(), DemoError> {
    d.act("agent", "writes tests/test_sub.sh (sub does not exist yet)")?;
    d.write("tests/test_sub.sh", TEST_SUB)?;
    d.agent(
        "submit the RED test",
        &submit_test("test for sub", "sh tests/test_sub.sh"),
        None,
        3,
    )?;
    d.agent(
        "it failed because sub is not defined: the intended reason",
        &[
            "submit-work",
            "--summary",
            "'sub: not found': sub does not exist yet",
            "--analysis-decision",
            "SUCCESS",
        ],
        None,
        0,
    )?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act(
        "agent",
        "implements sub, with the operands the wrong way round",
    )?;
    d.write("lib/calc.sh", &calc_with("sub() { echo $(($2 - $1)); }\n"))?;
    let green = submit_test("sub implemented", "sh tests/test_sub.sh");
    d.agent("submit GREEN", &green, None, 1)?;
    d.agent("what now?", &["get-task"], None, 0)?;
    d.agent(
        "try to give up on the task already",
        &["request-scope-reduction"],
        None,
        4,
    )?;

    d.act("agent", "tries another fix, and fails again")?;
    d.write("lib/calc.sh", &calc_with("sub() { echo $(($1 + $2)); }\n"))?;
    d.agent(
        "submit the fix",
        &submit_test("swapped the operator", "sh tests/test_sub.sh"),
        None,
        1,
    )?;
    d.agent(
        "what now? (the scope reduction is unlocked)",
        &["get-task"],
        None,
        0,
    )?;
    d.agent("reduce the scope", &["request-scope-reduction"], None, 0)?;
    d.act(
        "agent",
        "deletes tests/test_sub.sh, left behind by the failed attempt; the verification task recreates it",
    )?;
    d.remove("tests/test_sub.sh")?;
    d.submit_plan(
        "submit the re-plan: sub becomes 2a (negate) and 2b (verification)",
        "sub split into neg and a verification task",
        REPLAN,
    )?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act("agent", "writes tests/test_neg.sh")?;
    d.write("tests/test_neg.sh", TEST_NEG)?;
    d.agent(
        "submit the RED test",
        &submit_test("test for neg", "sh tests/test_neg.sh"),
        None,
        3,
    )?;
    d.agent(
        "neg is not defined: the intended reason",
        &[
            "submit-work",
            "--summary",
            "'neg: not found': neg does not exist yet",
            "--analysis-decision",
            "SUCCESS",
        ],
        None,
        0,
    )?;
    d.write("lib/calc.sh", &calc_with("neg() { echo $((0 - $1)); }\n"))?;
    d.agent(
        "submit GREEN for neg",
        &submit_test("neg implemented", "sh tests/test_neg.sh"),
        None,
        0,
    )?;
    d.agent("checkpoint", &["checkpoint"], None, 0)?;
    d.agent("next step", &["get-task"], None, 0)?;
    d.act(
        "agent",
        "recreates the original RED test, tests/test_sub.sh, for the verification task",
    )?;
    d.write("tests/test_sub.sh", TEST_SUB)?;
    d.agent(
        "submit the RED test",
        &submit_test("original sub test", "sh tests/test_sub.sh"),
        None,
        3,
    )?;
    d.agent(
        "sub is not defined: the intended reason",
        &[
            "submit-work",
            "--summary",
            "'sub: not found' again",
            "--analysis-decision",
            "SUCCESS",
        ],
        None,
        0,
    )?;

    d.act(
        "agent",
        "implements sub with add and neg, and negates the wrong operand",
    )?;
    let wrong = "neg() { echo $((0 - $1)); }\nsub() { add \"$1\" \"$(neg $1)\"; }\n";
    d.write("lib/calc.sh", &calc_with(wrong))?;
    let green = submit_test("sub = add a (neg b)", "sh tests/test_sub.sh");
    d.agent("submit GREEN", &green, None, 1)?;
    d.agent("submit the same idea again", &green, None, 1)?;
    d.agent(
        "what now? (identical failures are called out)",
        &["get-task"],
        None,
        0,
    )?;
    d.write(
        "lib/calc.sh",
        &calc_with("neg() { echo $((0 - $1)); }\nsub() { add \"$(neg $1)\" \"$1\"; }\n"),
    )?;
    d.agent("a third try", &green, None, 1)?;
    d.agent("what now? (escalation is unlocked)", &["get-task"], None, 0)?;
    d.agent(
        "escalate with a report",
        &["escalate", "--report", "-"],
        Some(ESCALATION),
        10,
    )?;
    d.agent("what now?", &["get-task"], None, 10)?;
    d.human(
        "reads the report and answers it",
        &[
            "resume",
            "--guidance",
            "neg the SECOND operand: sub A B = add A (neg B). Your tries negated $1.",
        ],
        0,
    )?;
    d.agent(
        "what now? (the guidance is shown once)",
        &["get-task"],
        None,
        0,
    )?;
    d.write(
        "lib/calc.sh",
        &calc_with("neg() { echo $((0 - $1)); }\nsub() { add \"$1\" \"$(neg \"$2\")\"; }\n"),
    )?;
    d.agent(
        "submit the fix",
        &submit_test("sub negates its second operand", "sh tests/test_sub.sh"),
        None,
        0,
    )?;
    d.agent("checkpoint", &["checkpoint"], None, 0)?;
    Ok(())
}

/// Every step is DONE: the orchestrator reviews, the agent fixes a finding, the review passes,
/// the agent squashes and updates the master plan, and the orchestrator merges.
/// Agents that plug in natively: the tool schemas for a custom loop, and one
/// `get_task` round trip over MCP, the server `init --agent claude|codex|gemini` registers.
fn agents_story(d: &mut Demo) -> Result<(), DemoError> {
    d.act(
        "human",
        "wires a real agent instead of this script: `git orchestrate init --agent claude` (or codex, \
         gemini) registers the MCP server and the hooks; a custom loop takes the tools as JSON",
    )?;
    d.human(
        "the agent tools in Anthropic's format (also openai, gemini, json-schema)",
        &["schema", "--format", "anthropic"],
        0,
    )?;
    let session = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task","arguments":{}}}"#,
        "\n",
    );
    d.agent(
        "the same get_task as an MCP client calls it (initialize, then tools/call)",
        &["mcp"],
        Some(session),
        0,
    )?;
    Ok(())
}

fn review_story(d: &mut Demo) -> Result<(), DemoError> {
    d.agent(
        "next step (every step is DONE: the review runs)",
        &["get-task"],
        None,
        0,
    )?;
    d.act("agent", "prints with printf in neg, as the finding asks")?;
    d.write(
        "lib/calc.sh",
        &calc_with(
            "neg() { printf '%d\\n' \"$((0 - $1))\"; }\nsub() { add \"$1\" \"$(neg \"$2\")\"; }\n",
        ),
    )?;
    d.agent(
        "submit the fix",
        &submit_test("neg prints with printf", "sh tests/run_all.sh"),
        None,
        0,
    )?;
    d.agent("checkpoint", &["checkpoint"], None, 0)?;
    d.agent("next step (review round 2)", &["get-task"], None, 0)?;

    d.human(
        "every checkpoint on the branch carries a passing verification note",
        &["verify"],
        0,
    )?;
    d.act(
        "agent",
        "squashes the branch into one commit, as instructed",
    )?;
    let base = d.git(&["merge-base", "main", "HEAD"])?;
    d.git(&["reset", "--soft", base.trim()])?;
    d.git(&["commit", "--quiet", "-m", "feat: Add and subtract numbers"])?;
    d.agent(
        "confirm the squash",
        &["submit-work", "--summary", "squashed"],
        None,
        0,
    )?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act(
        "agent",
        "marks PR 1 [DONE] in the master plan, with the squashed commit's hash",
    )?;
    let squashed = d.git(&["rev-parse", "--short=12", "HEAD"])?;
    let plan_path = "docs/Plan_Doc/Active_Plan.md";
    let updated = MASTER_PLAN.replace(
        "## PR 1: feat: Add and subtract numbers",
        &format!(
            "## PR 1: feat: Add and subtract numbers [DONE] ({})",
            squashed.trim()
        ),
    );
    d.write(plan_path, &updated)?;
    d.git(&[
        "commit",
        "--quiet",
        "-m",
        "docs: mark PR 1 done",
        "--",
        plan_path,
    ])?;
    d.agent(
        "confirm the master plan update",
        &["submit-work", "--summary", "master plan updated"],
        None,
        0,
    )?;
    d.agent(
        "next step (the orchestrator merges)",
        &["get-task"],
        None,
        0,
    )?;
    d.submit_plan("submit the plan for PR 2", "plan for PR 2: mul", PLAN_2)?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act(
        "human",
        "writes tests/test_mul.sh before mul exists, and tries to commit it as a checkpoint",
    )?;
    d.write("tests/test_mul.sh", TEST_MUL)?;
    d.git(&["add", "tests/test_mul.sh"])?;
    d.git_shown(
        "human",
        "the commit-msg hook runs preflight on exactly what would be committed",
        &["commit", "-m", "checkpoint: mul test"],
        false,
    )?;
    d.git(&["rm", "--quiet", "--cached", "tests/test_mul.sh"])?;
    d.remove("tests/test_mul.sh")?;
    Ok(())
}

fn script(d: &mut Demo) -> Result<(), DemoError> {
    d.say(&format!(
        "git-orchestrate demo: a throwaway repository at {}\n\
                  A scripted agent drives the real `git orchestrate` binary through one PR, from its plan to\n\
         its merge: RED, GREEN and REFACTOR steps with checkpoints; debugging, a scope reduction and\n\
         a re-plan; an escalation that a human answers; a code review round with a finding; the\n\
         squash, the master-plan update and the merge; then the start of the next PR.",
        d.repo.display()
    ))?;
    d.act(
        "human",
        "set up a repository with a tiny project, a master plan and .orchestrate.toml",
    )?;
    d.git(&["init", "--quiet", "--initial-branch=main"])?;
    for (key, value) in [
        ("user.name", "Demo Human"),
        ("user.email", "human@demo.invalid"),
        ("commit.gpgsign", "false"),
        ("core.hooksPath", ".git/hooks"),
    ] {
        d.git(&["config", key, value])?;
    }
    d.write("docs/Plan_Doc/Active_Plan.md", MASTER_PLAN)?;
    d.write("tests/run_all.sh", RUN_ALL)?;
    d.write("lib/calc.sh", CALC_EMPTY)?;
    d.write("tools/review.sh", REVIEWER)?;
    d.write(".orchestrate.toml", CONFIG)?;
    d.git(&["add", "--all"])?;
    d.git(&[
        "commit",
        "--quiet",
        "-m",
        "calc: project skeleton, master plan, orchestrator config",
    ])?;
    let log = d.git(&["log", "--oneline", "--stat"])?;
    d.say(&log)?;
    d.human(
        "install the git hooks: they verify every checkpoint commit, a person's too",
        &["hooks", "install"],
        0,
    )?;

    d.agent("what should I do?", &["get-task"], None, 0)?;
    d.submit_plan(
        "submit the plan for PR 1 (on stdin)",
        "plan for PR 1: add and sub",
        PLAN,
    )?;
    d.agent("what now?", &["get-task"], None, 0)?;

    d.act("agent", "writes tests/test_add.sh (add does not exist yet)")?;
    d.write("tests/test_add.sh", TEST_ADD)?;
    let red = submit_test("test for add", "sh tests/test_add.sh");
    d.agent(
        "submit the RED test",
        &[&red[..], &["--expectation", "FAIL"]].concat(),
        None,
        3,
    )?;
    d.agent("what now?", &["get-task"], None, 0)?;
    d.agent(
        "it failed because add is not defined: the intended reason",
        &[
            "submit-work",
            "--summary",
            "fails with 'add: not found': add does not exist yet",
            "--analysis-decision",
            "SUCCESS",
        ],
        None,
        0,
    )?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act("agent", "implements add in lib/calc.sh")?;
    d.write("lib/calc.sh", CALC_ADD)?;
    let green = submit_test(
        "add implemented with shell arithmetic",
        "sh tests/test_add.sh",
    );
    d.agent(
        "submit GREEN",
        &[&green[..], &["--expectation", "PASS"]].concat(),
        None,
        0,
    )?;
    d.agent("next step", &["get-task"], None, 0)?;
    d.agent("checkpoint", &["checkpoint"], None, 0)?;
    d.agent("next step", &["get-task"], None, 0)?;

    d.act("agent", "refactors add, and slips: $3 instead of $2")?;
    d.write("lib/calc.sh", CALC_ADD_REFACTOR_BROKEN)?;
    let refactor = submit_test("document add, print with printf", "sh tests/test_add.sh");
    d.agent("submit REFACTOR", &refactor, None, 1)?;
    d.agent("what now?", &["get-task"], None, 0)?;

    d.act(
        "agent",
        "reads the verbatim output: the arithmetic fails on \"2 + \", so $3 is empty; fixes $3 -> $2",
    )?;
    d.write("lib/calc.sh", CALC_ADD_REFACTOR_FIXED)?;
    let fix = submit_test(
        "hypothesis: add used $3; fixed to $2",
        "sh tests/test_add.sh",
    );
    d.agent("submit the fix", &fix, None, 0)?;
    d.agent("next step", &["get-task"], None, 0)?;
    d.agent("checkpoint", &["checkpoint"], None, 0)?;
    d.agent("next step", &["get-task"], None, 0)?;

    sub_story(d)?;
    review_story(d)?;

    agents_story(d)?;
    d.human("where does the workflow stand? (read-only)", &["status"], 0)?;
    d.human("the plan", &["plan", "show"], 0)?;
    d.human("the audit log", &["log"], 0)?;
    d.act("human", "looks at what landed on main")?;
    let history = d.git(&["log", "--oneline", "--graph", "main"])?;
    d.say(&format!("$ git log --oneline --graph main\n{history}"))?;
    d.say(
        "The workflow state, the plan and the full output of every run live in git, under\n\
         refs/orchestrator/workflows/main; the working tree holds only the project.",
    )?;
    Ok(())
}
