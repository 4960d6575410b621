//! The ticket tools' input (the parameter names and enums of docs/tickets.md): each is
//! checked like a plan, every problem reported with its JSON path, and each tool's JSON
//! schema for `schema` and MCP.

use serde_json::{Map, Value, json};

use super::{
    Assignment, BlockerDetails, BuildStatus, FileChanged, Mode, Report, ReportStatus, Role,
    TestResults, Update, UpdateStatus,
};
use crate::workflow::fields::{self, Field};
use crate::workflow::plan::{Problem, describe, join};

/// The four ticket tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Assign,
    UpdateSubtask,
    CompleteTicket,
    SubtaskComplete,
}

impl Tool {
    pub const ALL: [Tool; 4] = [
        Tool::Assign,
        Tool::UpdateSubtask,
        Tool::CompleteTicket,
        Tool::SubtaskComplete,
    ];

    /// The command's name: `git orchestrate <name>`, and the MCP tool's.
    pub fn command(self) -> &'static str {
        match self {
            Tool::Assign => "assign",
            Tool::UpdateSubtask => "update-subtask",
            Tool::CompleteTicket => "complete-ticket",
            Tool::SubtaskComplete => "subtask-complete",
        }
    }

    /// The function-calling name `schema` and MCP give it (docs/tickets.md).
    pub fn function_name(self) -> &'static str {
        match self {
            Tool::Assign => "assign_to_developer",
            Tool::UpdateSubtask => "update_subtask",
            Tool::CompleteTicket => "complete_ticket",
            Tool::SubtaskComplete => "subtask_complete",
        }
    }

    pub fn role(self) -> Role {
        match self {
            Tool::SubtaskComplete => Role::Developer,
            Tool::Assign | Tool::UpdateSubtask | Tool::CompleteTicket => Role::Manager,
        }
    }

    pub fn for_role(role: Role) -> impl Iterator<Item = Tool> {
        Tool::ALL.into_iter().filter(move |t| t.role() == role)
    }

    pub fn description(self) -> &'static str {
        match self {
            Tool::Assign => {
                "Assign the current subtask to the developer agent (the next todo subtask, the \
                 rejected or blocked one, or a new one)"
            }
            Tool::UpdateSubtask => {
                "Update the current subtask's status after verifying the developer's report \
                 against what git-orchestrate observed at its commit"
            }
            Tool::CompleteTicket => {
                "Mark the ticket as Done after all subtasks are complete: runs the gates, \
                 squashes the ticket's branch and merges it into main"
            }
            Tool::SubtaskComplete => {
                "Signal completion of the current work and return control to the manager; \
                 commit first: git-orchestrate re-runs the gates and tests at the reported commit"
            }
        }
    }
}

/// Each tool's parameters as a JSON schema (docs/tickets.md), with what the orchestrator needs
/// beyond it (`override` on update-subtask, `commit` on subtask-complete).
pub fn tool_schema(tool: Tool) -> Value {
    let strings = |description: &str| json!({"type": "array", "items": {"type": "string"}, "description": description});
    match tool {
        Tool::Assign => json!({
            "type": "object",
            "required": ["mode", "goal", "acceptanceCriteria"],
            "properties": {
                "mode": {"type": "string", "enum": Mode::NAMES,
                         "description": "The developer mode to activate"},
                "goal": {"type": "string",
                         "description": "Clear description of what the developer should accomplish"},
                "filesToInspect": strings("File paths the developer should read before making changes"),
                "filesToModify": strings("File paths (globs) the developer is expected to create or modify; a change outside them is reported to you"),
                "acceptanceCriteria": strings("List of criteria that must be met for the subtask to be complete"),
                "priorContext": {"type": ["string", "null"],
                                 "description": "Context from previous attempts or dependent subtasks (required, and new, to reassign a blocked subtask)"},
                "constraints": strings("Rules or patterns the developer must follow")
            },
            "additionalProperties": false
        }),
        Tool::UpdateSubtask => json!({
            "type": "object",
            "required": ["status", "notes"],
            "properties": {
                "status": {"type": "string", "enum": UpdateStatus::NAMES,
                           "description": "The new status for the subtask"},
                "notes": {"type": "string",
                          "description": "Reason for the status change, feedback, or blocker details"},
                "override": {"type": "string",
                             "description": "Accept a report whose observed result contradicts it, for this reason (recorded)"}
            },
            "additionalProperties": false
        }),
        Tool::CompleteTicket => json!({
            "type": "object",
            "required": ["summary"],
            "properties": {
                "summary": {"type": "string",
                            "description": "Brief summary of all changes made for this ticket"}
            },
            "additionalProperties": false
        }),
        Tool::SubtaskComplete => json!({
            "type": "object",
            "required": ["status", "filesChanged", "buildStatus", "message"],
            "properties": {
                "status": {"type": "string", "enum": ReportStatus::NAMES,
                           "description": "Whether the work was completed successfully or is blocked"},
                "filesChanged": {"type": "array", "items": {"type": "object",
                    "required": ["path"],
                    "properties": {"path": {"type": "string"}, "summary": {"type": "string"}}},
                    "description": "List of files that were created or modified"},
                "buildStatus": {"type": "string", "enum": BuildStatus::NAMES,
                                "description": "Whether the solution builds successfully"},
                "testResults": {"type": ["object", "null"], "properties": {
                    "total": {"type": "integer", "minimum": 0},
                    "passed": {"type": "integer", "minimum": 0},
                    "failed": {"type": "integer", "minimum": 0},
                    "skipped": {"type": "integer", "minimum": 0}},
                    "description": "Test results if tests were run (testing/write-tests modes)"},
                "message": {"type": "string", "description": "Summary of what was done"},
                "blockerDetails": {"type": ["object", "null"], "properties": {
                    "issue": {"type": "string"},
                    "tried": {"type": "array", "items": {"type": "string"}},
                    "needed": {"type": "string"}},
                    "description": "Details about what is blocking progress (if status is 'blocked')"},
                "commit": {"type": "string",
                           "description": "The commit this report delivers: the tip of the ticket's branch (default HEAD)"}
            },
            "additionalProperties": false
        }),
    }
}

/// The most items a list of a tool's input holds: far above an honest assignment or report,
/// and low enough that comparing them stays cheap.
const MAX_ITEMS: usize = 1000;

/// Collects problems while reading one object.
struct Reader<'a> {
    problems: &'a mut Vec<Problem>,
}

impl Reader<'_> {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// The object at `path`, with any field outside `known` reported.
    fn object<'v>(
        &mut self,
        value: &'v Value,
        path: &str,
        known: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.problem(
                if path.is_empty() { "$" } else { path },
                format!("expected an object, found {}", describe(value)),
            );
            return None;
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                self.problem(
                    &join(path, key),
                    format!("unknown field; expected one of: {}", known.join(", ")),
                );
            }
        }
        Some(map)
    }

    fn text(&mut self, path: &str, value: &Value, field: Field) -> Option<String> {
        let Some(text) = value.as_str() else {
            self.problem(
                path,
                format!("expected a string, found {}", describe(value)),
            );
            return None;
        };
        if let Err(problem) = fields::check(field, text) {
            self.problem(path, problem.message(field));
            return None;
        }
        Some(text.to_string())
    }

    fn required_text(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        field: Field,
    ) -> Option<String> {
        match map.get(key) {
            None | Some(Value::Null) => {
                self.problem(&join(path, key), "missing (required)");
                None
            }
            Some(value) => self.text(&join(path, key), value, field),
        }
    }

    fn optional_text(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        field: Field,
    ) -> Option<String> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => self.text(&join(path, key), value, field),
        }
    }

    fn choice<T>(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        names: &[&str],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<T> {
        let at = join(path, key);
        match map.get(key) {
            None | Some(Value::Null) => {
                self.problem(
                    &at,
                    format!("missing (required): one of {}", names.join(", ")),
                );
                None
            }
            Some(Value::String(s)) => {
                let parsed = parse(s);
                if parsed.is_none() {
                    self.problem(
                        &at,
                        format!("`{}` is not one of: {}", s.escape_debug(), names.join(", ")),
                    );
                }
                parsed
            }
            Some(other) => {
                self.problem(&at, format!("expected a string, found {}", describe(other)));
                None
            }
        }
    }

    /// An array of strings; `paths` checks each as a repository path or glob.
    fn strings(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        key: &str,
        required: bool,
        paths: bool,
    ) -> Vec<String> {
        let at = join(path, key);
        let items = match map.get(key) {
            None | Some(Value::Null) => {
                if required {
                    self.problem(&at, "missing (required): a list of strings");
                }
                return Vec::new();
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.problem(&at, format!("expected an array, found {}", describe(other)));
                return Vec::new();
            }
        };
        if required && items.is_empty() {
            self.problem(&at, "must list at least one item");
        }
        if items.len() > MAX_ITEMS {
            self.problem(
                &at,
                format!("lists {} items; at most {MAX_ITEMS} are taken", items.len()),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_at = format!("{at}[{i}]");
            let Some(text) = self.text(&item_at, item, Field::Summary) else {
                continue;
            };
            if paths && let Some(why) = bad_path(&text) {
                self.problem(&item_at, why);
                continue;
            }
            out.push(text);
        }
        out
    }
}

/// Why `path` cannot name files of the repository: absolute, leaving it, or with a
/// backslash or a line end.
fn bad_path(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return Some("must be a path inside the repository, relative to its root".into());
    }
    if path.split('/').any(|c| c == "..") {
        return Some("must not leave the repository (`..`)".into());
    }
    if path.contains(['\\', '\n', '\r', '\t']) {
        return Some("must not hold a backslash, a tab or a line end".into());
    }
    None
}

const ASSIGN_FIELDS: &[&str] = &[
    "mode",
    "goal",
    "filesToInspect",
    "filesToModify",
    "acceptanceCriteria",
    "priorContext",
    "constraints",
];

/// `assign`'s input, or every problem with it.
pub fn parse_assignment(value: &Value) -> Result<Assignment, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut r = Reader {
        problems: &mut problems,
    };
    let Some(map) = r.object(value, "", ASSIGN_FIELDS) else {
        return Err(problems);
    };
    let mode = r.choice(map, "", "mode", &Mode::NAMES, Mode::parse);
    let goal = r.required_text(map, "", "goal", Field::Summary);
    let files_to_inspect = r.strings(map, "", "filesToInspect", false, true);
    let files_to_modify = r.strings(map, "", "filesToModify", false, true);
    let acceptance_criteria = r.strings(map, "", "acceptanceCriteria", true, false);
    let prior_context = r.optional_text(map, "", "priorContext", Field::Report);
    let constraints = r.strings(map, "", "constraints", false, false);
    match (mode, goal) {
        (Some(mode), Some(goal)) if problems.is_empty() => Ok(Assignment {
            mode,
            goal,
            files_to_inspect,
            files_to_modify,
            acceptance_criteria,
            prior_context,
            constraints,
        }),
        _ => Err(problems),
    }
}

/// `update-subtask`'s input, or every problem with it.
pub fn parse_update(value: &Value) -> Result<Update, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut r = Reader {
        problems: &mut problems,
    };
    let Some(map) = r.object(value, "", &["status", "notes", "override"]) else {
        return Err(problems);
    };
    let status = r.choice(map, "", "status", &UpdateStatus::NAMES, |s| match s {
        "complete" => Some(UpdateStatus::Complete),
        "rejected" => Some(UpdateStatus::Rejected),
        "blocked" => Some(UpdateStatus::Blocked),
        _ => None,
    });
    let notes = r.required_text(map, "", "notes", Field::Notes);
    let override_reason = r.optional_text(map, "", "override", Field::Summary);
    match (status, notes) {
        (Some(status), Some(notes)) if problems.is_empty() => Ok(Update {
            status,
            notes,
            override_reason,
        }),
        _ => Err(problems),
    }
}

/// `complete-ticket`'s input: its summary, or every problem with it.
pub fn parse_complete_ticket(value: &Value) -> Result<String, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut r = Reader {
        problems: &mut problems,
    };
    let Some(map) = r.object(value, "", &["summary"]) else {
        return Err(problems);
    };
    match r.required_text(map, "", "summary", Field::Summary) {
        Some(summary) if problems.is_empty() => Ok(summary),
        _ => Err(problems),
    }
}

const REPORT_FIELDS: &[&str] = &[
    "status",
    "filesChanged",
    "buildStatus",
    "testResults",
    "message",
    "blockerDetails",
    "commit",
];

/// `subtask-complete`'s input, or every problem with it. `commit` defaults to `HEAD`.
pub fn parse_report(value: &Value) -> Result<Report, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut r = Reader {
        problems: &mut problems,
    };
    let Some(map) = r.object(value, "", REPORT_FIELDS) else {
        return Err(problems);
    };
    let status = r.choice(map, "", "status", &ReportStatus::NAMES, |s| match s {
        "complete" => Some(ReportStatus::Complete),
        "blocked" => Some(ReportStatus::Blocked),
        _ => None,
    });
    let files_changed = files_changed(&mut r, map);
    let build_status = r.choice(map, "", "buildStatus", &BuildStatus::NAMES, |s| match s {
        "pass" => Some(BuildStatus::Pass),
        "fail" => Some(BuildStatus::Fail),
        _ => None,
    });
    let test_results = test_results(&mut r, map);
    let message = r.required_text(map, "", "message", Field::Message);
    let blocker_details = blocker_details(&mut r, map);
    let commit = r
        .optional_text(map, "", "commit", Field::Summary)
        .unwrap_or_else(|| "HEAD".to_string());
    if commit.starts_with('-') || commit.contains(char::is_whitespace) {
        r.problem("commit", "must be a revision (a commit id or a ref name)");
    }
    match (status, files_changed, build_status, message) {
        (Some(status), Some(files_changed), Some(build_status), Some(message))
            if problems.is_empty() =>
        {
            Ok(Report {
                status,
                files_changed,
                build_status,
                test_results,
                message,
                blocker_details,
                commit,
            })
        }
        _ => Err(problems),
    }
}

fn files_changed(r: &mut Reader, map: &Map<String, Value>) -> Option<Vec<FileChanged>> {
    let items = match map.get("filesChanged") {
        None | Some(Value::Null) => {
            r.problem(
                "filesChanged",
                "missing (required): a list of {path, summary}",
            );
            return None;
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            r.problem(
                "filesChanged",
                format!("expected an array, found {}", describe(other)),
            );
            return None;
        }
    };
    if items.len() > MAX_ITEMS {
        r.problem(
            "filesChanged",
            format!("lists {} files; at most {MAX_ITEMS} are taken", items.len()),
        );
        return None;
    }
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("filesChanged[{i}]");
        let Some(entry) = r.object(item, &at, &["path", "summary"]) else {
            continue;
        };
        let path = r.required_text(entry, &at, "path", Field::Summary);
        if let Some(path) = &path
            && let Some(why) = bad_path(path)
        {
            r.problem(&join(&at, "path"), why);
        }
        let summary = r.optional_text(entry, &at, "summary", Field::Summary);
        if let Some(path) = path {
            out.push(FileChanged { path, summary });
        }
    }
    Some(out)
}

fn test_results(r: &mut Reader, map: &Map<String, Value>) -> Option<TestResults> {
    let value = map.get("testResults").filter(|v| !v.is_null())?;
    let entry = r.object(
        value,
        "testResults",
        &["total", "passed", "failed", "skipped"],
    )?;
    let mut count = |key: &str| -> Option<u64> {
        let value = entry.get(key).filter(|v| !v.is_null())?;
        let n = value.as_u64();
        if n.is_none() {
            r.problem(
                &join("testResults", key),
                format!("expected a whole number ≥ 0, found {}", describe(value)),
            );
        }
        n
    };
    let results = TestResults {
        total: count("total"),
        passed: count("passed"),
        failed: count("failed"),
        skipped: count("skipped"),
    };
    if let Some(total) = results.total {
        let counted = [results.passed, results.failed, results.skipped]
            .into_iter()
            .flatten()
            .fold(0u64, u64::saturating_add);
        if counted > total {
            r.problem(
                "testResults",
                format!("passed + failed + skipped is {counted}, more than total ({total})"),
            );
        }
    }
    Some(results)
}

fn blocker_details(r: &mut Reader, map: &Map<String, Value>) -> Option<BlockerDetails> {
    let value = map.get("blockerDetails").filter(|v| !v.is_null())?;
    let entry = r.object(value, "blockerDetails", &["issue", "tried", "needed"])?;
    Some(BlockerDetails {
        issue: r.optional_text(entry, "blockerDetails", "issue", Field::Report),
        tried: r.strings(entry, "blockerDetails", "tried", false, false),
        needed: r.optional_text(entry, "blockerDetails", "needed", Field::Report),
    })
}
