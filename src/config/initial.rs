//! The `.orchestrate.toml` that `init` writes: the project's test runner, detected from its
//! files, as the first gate.

use super::FILE_NAME;
use super::sections::DEFAULT_MASTER_PLAN;

/// The file `init` writes when there is none: every key documented, preflight from `--preflight`.
/// The gate `init` writes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstGate<'a> {
    /// `--preflight CMD`.
    Given(&'a str),
    /// The project's test runner, found by [`detect_test_runner`].
    Detected(&'a TestRunner),
    None,
}

/// A project's test command, as its files show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TestRunner {
    pub command: String,
    /// What showed it, for the comment above the gate.
    pub from: String,
}

/// The test command the project's own files name, in this order: `Cargo.toml`, pytest
/// (`pyproject.toml`, `pytest.ini`, `setup.cfg`, `tox.ini`, `conftest.py`), a `package.json`
/// `test` script other than npm's placeholder, `go.mod`, a Makefile's `test` target. `read`
/// gives a top-level file's text, or `None` when there is no such file.
pub fn detect_test_runner(read: &dyn Fn(&str) -> Option<String>) -> Option<TestRunner> {
    let found = |command: &str, from: &str| {
        Some(TestRunner {
            command: command.to_string(),
            from: from.to_string(),
        })
    };
    if read("Cargo.toml").is_some() {
        return found("cargo test", "Cargo.toml");
    }
    let pytest = [
        ("pyproject.toml", "pytest"),
        ("pytest.ini", ""),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
        ("conftest.py", ""),
    ];
    for (file, mark) in pytest {
        if read(file).is_some_and(|text| text.contains(mark)) {
            return found("python -m pytest", file);
        }
    }
    if let Some(text) = read("package.json")
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(script) = json["scripts"]["test"].as_str()
        && !script.contains("no test specified")
    {
        return found("npm test", "package.json's \"test\" script");
    }
    if read("go.mod").is_some() {
        return found("go test ./...", "go.mod");
    }
    for file in ["GNUmakefile", "makefile", "Makefile"] {
        if read(file).is_some_and(|text| {
            text.lines()
                .any(|l| l.starts_with("test:") || l.starts_with("test :"))
        }) {
            return found("make test", &format!("the {file}'s test target"));
        }
    }
    None
}

/// A regular file's text, at most 1 MiB of it, for reading what a project's own files say;
/// `None` when it is missing, not a regular file (a FIFO would block) or not text.
pub fn read_small_file(path: &std::path::Path) -> Option<String> {
    let bytes = crate::input::read_file(path, 1024 * 1024).ok()??;
    String::from_utf8(bytes).ok()
}

pub fn initial_file(main_branch: &str, first_gate: FirstGate) -> String {
    let gate = match first_gate {
        FirstGate::Given(command) => format!(
            "[[preflight]]\nname = \"preflight\"\ncommand = {}\ntimeout = \"10m\"\n",
            toml_string(command)
        ),
        FirstGate::Detected(runner) => format!(
            "# Detected from {}: the project's tests are the first gate. Change the command if\n\
             # they run otherwise; without any gate the final note says \"not verified: no gates\".\n\
             [[preflight]]\nname = \"tests\"\ncommand = {}\ntimeout = \"10m\"\n",
            runner.from,
            toml_string(&runner.command)
        ),
        FirstGate::None => "# No preflight gate yet: a PASS is then verified by the agent's test command alone.\n\
                 # Add the command that must pass before any step counts, for example:\n\
                 # [[preflight]]\n# name = \"tests\"\n# command = \"cargo test\"\n# timeout = \"10m\"\n"
            .to_string(),
    };
    format!(
        "# git-orchestrate configuration (every key: `man git-orchestrate`, or docs/config.md in its sources).
# Commit this file on {main_branch}: once a PR branch exists, the gates are read from
# {main_branch}:{FILE_NAME}, so an agent cannot weaken them on its branch.

main_branch = {main}
master_plan = \"{DEFAULT_MASTER_PLAN}\"
# remote = \"origin\"          # set to pull {main_branch} before each new PR branch

# Ordered gates, run after every passing PASS submit and on checkpoints.
# Consecutive gates with the same `group` run in parallel.
{gate}
# Code review, run by get-task once every step is DONE. Without a command there
# is no automated review. The command gets the review context as JSON on stdin and prints
# {{\"findings\": [{{\"priority\": \"P0\"..\"P3\", \"file\", \"line\", \"issue\", \"suggestion\"}}]}}.
# [review]
# preset = \"code-review\"        # code-review | security-audit | quick-review | none
# command = \"./tools/review.sh\"
# dimensions = [\"correctness\", \"security\"]   # one run per dimension, in parallel
# block_on = [\"P0\", \"P1\"]          # findings of these priorities send the work back
# max_rounds = 3                  # then the agent must escalate
# human = false                   # true: a human approves or rejects after the review
# timeout = \"10m\"

# Debugging: guidance tiers and when the escape tools unlock (these are the defaults).
[debugging]
hypothesize_max_attempts = 2        # attempts 1-2: hypothesize and fix
instrumentation_max_attempts = 5    # then: instrument and log
unlock_scope_reduction_at = 6       # request-scope-reduction unlocks
unlock_escalation_at = 10           # escalate unlocks

# Paths a PR must not change (globs); a human changes them on main, then runs
# `git orchestrate repin`. This file, and the scripts the gates and the review run
# (`sh run_tests.sh`: run_tests.sh), always are.
[gates]
protected = []               # e.g. [\"run_tests.sh\", \"ci/**\"]

# At finalization the gates run once more on the squashed commit, in a fresh worktree.
[finalize]
clean_check = true

# `attest` and the server hook hold the proof plans a PR's or a ticket's final check
# recorded against the ones its chain gives; \"require\": a merge whose check recorded none
# FAILS (\"warn\", the default without this key, only warns).
[verify]
recorded_plans = \"require\"

# Agent hooks (`git orchestrate init --agent claude|codex|gemini`): the Stop hook lets the
# agent stop after this many blocked stops in a row with no progress.
[agent]
max_stop_blocks = 3

# `git orchestrate run`, the driver loop: which agent session a turn goes to, and when an
# agent that makes no progress on a step is stopped as stuck.
[retry]
strategy = \"same\"            # \"fresh\": a new session every turn; \"auto\": fresh after fresh_after_failures
fresh_after_failures = 2
max_iterations = 3
turn_timeout = \"30m\"         # one turn at most; then the agent and all it started are ended

# Git hooks (`git orchestrate hooks install`; init installs them).
[hooks]
pre_push = \"warn\"          # \"enforce\": refuse to push checkpoint commits without a passing note

[test]
timeout = \"10m\"            # for the agent's --test-command; the process group is killed after it
output_tail = 200           # lines of output shown in briefings; output.log keeps all of it
",
        main = toml_string(main_branch)
    )
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
