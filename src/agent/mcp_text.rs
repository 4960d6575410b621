//! Briefings and hints as an MCP client's agent reads them: every agent command they name
//! (`git orchestrate submit-work --summary … --plan -`, `get-task`, `checkpoint`, …) becomes
//! the tool and its arguments (`submit_work {"summary": …, "plan": {…}}`), so an agent that
//! has only the tools is never told to run a command line. Commands for humans (`resume`,
//! `approve`, …) stay as they are. Pure: text in, text out.

use serde_json::{Map, Value};

use super::tools::{CHECKPOINT, ESCALATE, GET_TASK, REQUEST_SCOPE_REDUCTION, SUBMIT_WORK};
use crate::workflow::ticket::Tool;

const PREFIX: &str = "git orchestrate ";

/// Sentences about how a command line takes its input, and what a tool takes instead.
const SENTENCES: &[(&str, &str)] = &[(
    "Submit the plan on stdin, or from a file outside the repository (a file inside it would\n   be committed with the next checkpoint); the orchestrator keeps the plan in git:",
    "Submit the plan as the `plan` argument, a JSON object (not a file: a file inside the\n   repository would be committed with the next checkpoint); the orchestrator keeps it in git:",
)];

/// What the refusals and the ticket briefings say of a command without naming it in full
/// (`submit-work --plan is not accepted …`, "unless you give `--override REASON`"), and how
/// an MCP client's agent calls the same.
const FRAGMENTS: &[(&str, &str)] = &[
    (
        "submit-work --test-command is",
        "submit_work with `test_command` is",
    ),
    (
        "submit-work --analysis-decision is",
        "submit_work with `analysis_decision` is",
    ),
    ("submit-work --plan is", "submit_work with `plan` is"),
    (
        "submit-work --no-pr-left is",
        "submit_work with `no_pr_left` is",
    ),
    ("submit-work --squash is", "submit_work with `squash` is"),
    (
        "submit-work --mark-done is",
        "submit_work with `mark_done` is",
    ),
    (
        "`submit-work --no-pr-left`",
        "`submit_work {\"no_pr_left\": true}`",
    ),
    (
        "`submit-work --mark-done`",
        "`submit_work {\"mark_done\": true}`",
    ),
    (
        "request-scope-reduction is not",
        "request_scope_reduction is not",
    ),
    (
        "escalate is not accepted",
        "escalate_for_external_help is not accepted",
    ),
    (" (`--prior-context TEXT`)", ""),
    (
        "`--status rejected --notes …`",
        "`update_subtask {\"status\": \"rejected\", \"notes\": …}`",
    ),
    ("`--override REASON`", "`\"override\": \"REASON\"`"),
    (
        "`update-subtask --status complete`",
        "`update_subtask {\"status\": \"complete\"}`",
    ),
    ("Tools: assign (", "Tools: assign_to_developer ("),
    ("; update-subtask (status", "; update_subtask (status"),
    ("; complete-ticket (summary)", "; complete_ticket (summary)"),
];

/// `text` with each agent command it names written as the MCP tool call.
///
/// A warm server converts the same briefing again and again, twice an answer (its text and
/// its structured copy), and each conversion searches it for every command and fragment
/// (callgrind: 350,000 instructions a `get_task`, more than the engine's own work): the last
/// few conversions are kept, the input compared whole, so what is returned is what
/// converting would give.
pub fn for_mcp(text: &str) -> String {
    use std::sync::{Mutex, PoisonError};
    const KEPT: usize = 4;
    static LAST: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    {
        let last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, out)) = last.iter().find(|(input, _)| input == text) {
            return out.clone();
        }
    }
    let out = converted(text);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if last.len() >= KEPT {
        last.remove(0);
    }
    last.push((text.to_string(), out.clone()));
    out
}

fn converted(text: &str) -> String {
    let mut out = commands_for_mcp(text);
    if FRAGMENTS.iter().any(|(cli, _)| out.contains(cli)) {
        out = FRAGMENTS
            .iter()
            .fold(out, |t, (cli, mcp)| t.replace(cli, mcp));
    }
    // A ticket tool named in a refusal: "`subtask-complete` is not allowed in state …",
    // "the assign input was not accepted".
    for (cli, mcp) in ticket_tool_names() {
        if out.contains(cli.as_str()) {
            out = out.replace(cli.as_str(), mcp);
        }
    }
    out
}

/// The ticket tools' names as refusals say them, and as the MCP client's agent calls them:
/// made once, since a warm server converts every answer (docs/architecture.md).
fn ticket_tool_names() -> &'static [(String, String)] {
    static NAMES: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        Tool::ALL
            .iter()
            .flat_map(|tool| {
                [
                    (
                        format!("`{}` is ", tool.command()),
                        format!("`{}` is ", tool.function_name()),
                    ),
                    (
                        format!("the {} input", tool.command()),
                        format!("the {} input", tool.function_name()),
                    ),
                ]
            })
            .collect()
    })
}

fn commands_for_mcp(text: &str) -> String {
    let replaced;
    let text = if SENTENCES.iter().any(|(cli, _)| text.contains(cli)) {
        replaced = SENTENCES
            .iter()
            .fold(text.to_string(), |t, (cli, mcp)| t.replace(cli, mcp));
        replaced.as_str()
    } else {
        text
    };
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        // The plan given on stdin through a here-document: the tool takes it as an object.
        if let Some(at) = line.find(PREFIX)
            && line[at..].contains("--plan - <<'EOF'")
        {
            let end = line[at..]
                .find(" --plan - <<'EOF'")
                .map_or(line.len(), |i| at + i);
            let command = &line[at..end];
            let mut call = parse(command).unwrap_or_else(|| (SUBMIT_WORK, Map::new()));
            call.1.insert(
                "plan".into(),
                Value::String("<the plan, as a JSON object>".into()),
            );
            out.push_str(&line[..at]);
            out.push_str(&render(call.0, &call.1).replace(
                "\"<the plan, as a JSON object>\"",
                "{ ...the plan, as a JSON object... }",
            ));
            out.push('\n');
            // Up to and with the here-document's end.
            for rest in lines.by_ref() {
                if rest.trim() == "EOF" {
                    break;
                }
            }
            continue;
        }
        out.push_str(&line_for_mcp(line));
    }
    out
}

/// One line: each `git orchestrate <agent command> …` in it, in backticks or running to the
/// end of the line (or to a gap of two spaces), as the tool call.
fn line_for_mcp(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(PREFIX) {
        let quoted = rest[..at].ends_with('`');
        let after = &rest[at..];
        let end = if quoted {
            after.find('`').unwrap_or(after.len())
        } else {
            [after.find("  "), after.find('\n')]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(after.len())
        };
        let command = &after[..end];
        out.push_str(&rest[..at]);
        rest = &after[end..];
        match parse(command) {
            Some((tool, args)) => {
                out.push_str(&render(tool, &args));
                // The command line's other way to give the report has no tool form.
                if tool == ESCALATE
                    && let Some(aside) = rest.trim_start().strip_prefix("(or --report")
                    && let Some(close) = aside.find(')')
                {
                    rest = &aside[close + 1..];
                }
            }
            None => out.push_str(command),
        }
    }
    out.push_str(rest);
    out
}

/// The tool call a command line makes, or `None` for a command that is no agent tool (or
/// one this reading does not know, left as written).
fn parse(command: &str) -> Option<(&'static str, Map<String, Value>)> {
    let words = split(command.strip_prefix(PREFIX)?)?;
    let (sub, rest) = words.split_first()?;
    let mut args = Map::new();
    let tool = match sub.as_str() {
        "get-task" => GET_TASK,
        "request-scope-reduction" => REQUEST_SCOPE_REDUCTION,
        "checkpoint" => CHECKPOINT,
        "escalate" => ESCALATE,
        "submit-work" => SUBMIT_WORK,
        other => return ticket_call(other, rest),
    };
    let mut i = 0;
    while i < rest.len() {
        let flag = rest[i].as_str();
        // A flag that only a command line needs, or "and more" after the flags shown.
        if flag == "…" {
            args.insert(MORE.into(), Value::Null);
            i += 1;
            continue;
        }
        if tool == GET_TASK && flag == "--role" {
            // An MCP server serves one role, fixed when it started.
            i += 2;
            continue;
        }
        let value = rest.get(i + 1).cloned();
        let (key, taken) = match (tool, flag) {
            (_, "--workflow") => (None, 2),
            (SUBMIT_WORK, "--summary" | "-s") => (Some(("summary", value.map(Value::String))), 2),
            (SUBMIT_WORK, "--test-command") => {
                (Some(("test_command", value.map(Value::String))), 2)
            }
            (SUBMIT_WORK, "--expectation") => (Some(("expectation", value.map(Value::String))), 2),
            (SUBMIT_WORK, "--analysis-decision") => {
                (Some(("analysis_decision", value.map(Value::String))), 2)
            }
            (SUBMIT_WORK, "--plan") => (
                Some((
                    "plan",
                    Some(Value::String("<the plan, as a JSON object>".into())),
                )),
                2,
            ),
            (SUBMIT_WORK, "--no-pr-left") => (Some(("no_pr_left", Some(Value::Bool(true)))), 1),
            (SUBMIT_WORK, "--squash") => (Some(("squash", Some(Value::Bool(true)))), 1),
            (SUBMIT_WORK, "--mark-done") => (Some(("mark_done", Some(Value::Bool(true)))), 1),
            (SUBMIT_WORK, "--contradiction") => {
                (Some(("contradiction", value.map(Value::String))), 2)
            }
            (CHECKPOINT, "-m" | "--message") => (Some(("message", value.map(Value::String))), 2),
            (ESCALATE, "--report") => (
                Some((
                    "markdown_report",
                    Some(Value::String("<your report, in markdown>".into())),
                )),
                2,
            ),
            _ => return None,
        };
        if let Some((key, value)) = key {
            args.insert(key.to_string(), value?);
        }
        i += taken;
    }
    Some((tool, args))
}

/// The key that stands for "and more" (`…` after the flags a text shows).
const MORE: &str = "\u{0}more";

/// A ticket tool's call as its command line makes it (docs/tickets.md): the flags as the
/// tool's parameters, a repeated flag as a list.
fn ticket_call(sub: &str, words: &[String]) -> Option<(&'static str, Map<String, Value>)> {
    let tool = Tool::ALL.into_iter().find(|t| t.command() == sub)?;
    let mut args = Map::new();
    let mut i = 0;
    while i < words.len() {
        let flag = words[i].as_str();
        if flag == "…" {
            args.insert(MORE.into(), Value::Null);
            i += 1;
            continue;
        }
        let value = Value::String(words.get(i + 1)?.clone());
        if (tool, flag) == (Tool::SubtaskComplete, "--file") {
            match args
                .entry("filesChanged")
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                Value::Array(items) => items.push(serde_json::json!({ "path": value })),
                _ => return None,
            }
            i += 2;
            continue;
        }
        let (key, list) = match (tool, flag) {
            (Tool::Assign, "--mode") => ("mode", false),
            (Tool::Assign, "--goal") => ("goal", false),
            (Tool::Assign, "--file-to-inspect") => ("filesToInspect", true),
            (Tool::Assign, "--file-to-modify") => ("filesToModify", true),
            (Tool::Assign, "--acceptance-criteria") => ("acceptanceCriteria", true),
            (Tool::Assign, "--prior-context") => ("priorContext", false),
            (Tool::Assign, "--constraint") => ("constraints", true),
            (Tool::UpdateSubtask | Tool::SubtaskComplete, "--status") => ("status", false),
            (Tool::UpdateSubtask, "--notes") => ("notes", false),
            (Tool::UpdateSubtask, "--override") => ("override", false),
            (Tool::CompleteTicket, "--summary") => ("summary", false),
            (Tool::SubtaskComplete, "--build-status") => ("buildStatus", false),
            (Tool::SubtaskComplete, "--message") => ("message", false),
            (Tool::SubtaskComplete, "--commit") => ("commit", false),
            _ => return None,
        };
        if list {
            match args.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
                Value::Array(items) => items.push(value),
                _ => return None,
            }
        } else {
            args.insert(key.into(), value);
        }
        i += 2;
    }
    Some((tool.function_name(), args))
}

/// `tool {"key": value, …}`, or the tool alone when it takes nothing here.
fn render(tool: &str, args: &Map<String, Value>) -> String {
    let more = args.contains_key(MORE);
    let pairs: Vec<String> = args
        .iter()
        .filter(|(k, _)| *k != MORE)
        .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), shown(v)))
        .chain(more.then(|| "…".to_string()))
        .collect();
    if pairs.is_empty() {
        return tool.to_string();
    }
    format!("{tool} {{{}}}", pairs.join(", "))
}

/// A value as JSON spaced as the call around it is: `["a", "b"]`, `{"path": "p"}`.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(shown).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(fields) => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), shown(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// Shell words as the briefings write them: blanks apart, `'…'` and `"…"` quoted (`\` escapes
/// in double quotes), `'\''` joined. `None` for an unclosed quote.
fn split(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut any = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            '\'' => {
                any = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                any = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            c => {
                any = true;
                word.push(c);
            }
        }
    }
    if any {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn agent_commands_become_tool_calls() {
        assert_eq!(
            for_mcp(
                "  git orchestrate submit-work --summary \"<what you did>\" --test-command 'sh t.sh' --expectation PASS\n"
            ),
            "  submit_work {\"summary\": \"<what you did>\", \"test_command\": \"sh t.sh\", \"expectation\": \"PASS\"}\n"
        );
        assert_eq!(
            for_mcp("Then run `git orchestrate get-task` for your next instruction.\n"),
            "Then run `get_task` for your next instruction.\n"
        );
        assert_eq!(
            for_mcp(
                "  git orchestrate escalate --report <file>      (or --report - with the report on stdin)\n"
            ),
            "  escalate_for_external_help {\"markdown_report\": \"<your report, in markdown>\"}\n"
        );
        assert_eq!(
            for_mcp(
                "x `git orchestrate submit-work --workflow w -s \"it's \\\"done\\\"\" --squash` y\n"
            ),
            "x `submit_work {\"summary\": \"it's \\\"done\\\"\", \"squash\": true}` y\n"
        );
        // A `--plan -` before the command on the line is no panic.
        let odd = "x --plan - <<'EOF' git orchestrate submit-work --plan - <<'EOF'\n{}\nEOF\n";
        assert_eq!(
            for_mcp(odd),
            "x --plan - <<'EOF' submit_work {\"plan\": { ...the plan, as a JSON object... }}\n"
        );
        // Commands for humans, and what this reading does not know, stay as written.
        let human = "  git orchestrate resume --guidance \"<what to try>\"\n  git orchestrate submit-work --bogus\n";
        assert_eq!(for_mcp(human), human);
    }

    #[test]
    fn ticket_commands_and_flags_become_the_ticket_tools_and_their_parameters() {
        assert_eq!(
            for_mcp(
                "Next: `git orchestrate assign --mode MODE --goal TEXT --file-to-modify 'src/*' --acceptance-criteria A --acceptance-criteria B …`\n"
            ),
            "Next: `assign_to_developer {\"mode\": \"MODE\", \"goal\": \"TEXT\", \"filesToModify\": [\"src/*\"], \"acceptanceCriteria\": [\"A\", \"B\"], …}`\n"
        );
        assert_eq!(
            for_mcp("`git orchestrate update-subtask --status rejected --notes TEXT --override R`"),
            "`update_subtask {\"status\": \"rejected\", \"notes\": \"TEXT\", \"override\": \"R\"}`"
        );
        assert_eq!(
            for_mcp("run `git orchestrate complete-ticket --summary TEXT` again"),
            "run `complete_ticket {\"summary\": \"TEXT\"}` again"
        );
        assert_eq!(
            for_mcp(
                "`subtask-complete` is not allowed in state MANAGER; the assign input was not accepted"
            ),
            "`subtask_complete` is not allowed in state MANAGER; the assign_to_developer input was not accepted"
        );
        assert_eq!(
            for_mcp("`git orchestrate get-task --role developer`"),
            "`get_task`"
        );
        // What refusals and briefings say of a flag alone.
        assert_eq!(
            for_mcp(
                "Reject it (`--status rejected --notes …`, the developer is told why), or accept it anyway with `--override REASON` (recorded)."
            ),
            "Reject it (`update_subtask {\"status\": \"rejected\", \"notes\": …}`, the developer is told why), or accept it anyway with `\"override\": \"REASON\"` (recorded)."
        );
        assert_eq!(
            for_mcp("Give `priorContext` (`--prior-context TEXT`) that says what is new"),
            "Give `priorContext` that says what is new"
        );
        assert_eq!(
            for_mcp("submit-work --test-command is not accepted in state INITIALIZING: no plan"),
            "submit_work with `test_command` is not accepted in state INITIALIZING: no plan"
        );
        assert_eq!(
            for_mcp(
                "Tools: assign (mode); update-subtask (status, notes); complete-ticket (summary)."
            ),
            "Tools: assign_to_developer (mode); update_subtask (status, notes); complete_ticket (summary)."
        );
    }

    #[test]
    fn a_plan_on_stdin_becomes_the_plan_argument() {
        let text = "4. Submit it:\n\n     git orchestrate submit-work --summary \"<one line>\" --plan - <<'EOF'\n     { ...the plan... }\n     EOF\n5. Then run `git orchestrate get-task`.\n";
        assert_eq!(
            for_mcp(text),
            "4. Submit it:\n\n     submit_work {\"summary\": \"<one line>\", \"plan\": { ...the plan, as a JSON object... }}\n5. Then run `get_task`.\n"
        );
    }

    /// Every briefing the workflow gives (the snapshots of src/workflow/briefing/tests.rs), as an
    /// MCP client's agent reads it, names no agent command line.
    #[test]
    fn no_briefing_names_an_agent_command_line_over_mcp() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/briefings");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let mcp = for_mcp(&text);
            assert!(
                !mcp.contains("Submit the plan on stdin"),
                "{}",
                path.display()
            );
            for command in [
                "get-task",
                "submit-work",
                "checkpoint",
                "escalate ",
                "request-scope-reduction",
            ] {
                assert!(
                    !mcp.contains(&format!("git orchestrate {command}")),
                    "{}: {command}\n{mcp}",
                    path.display()
                );
            }
            seen += 1;
        }
        assert!(seen > 20, "{seen} briefings");
    }

    /// What is kept is what converting gives, whichever texts come and in whatever order.
    #[test]
    fn a_kept_conversion_is_the_conversion() {
        let texts: Vec<String> = (0..9)
            .map(|i| format!("Step {i}: run `git orchestrate get-task`, then `git orchestrate checkpoint`.\n{}", "x".repeat(i)))
            .collect();
        for round in 0..3 {
            for (i, text) in texts.iter().enumerate() {
                let text = if round == 1 {
                    &texts[texts.len() - 1 - i]
                } else {
                    text
                };
                assert_eq!(for_mcp(text), converted(text));
                assert_eq!(for_mcp(text), converted(text), "kept");
                assert_ne!(for_mcp(text), *text, "a command in it is converted");
            }
        }
    }
}
