//! The ticket tools' input (the parameter names and enums of docs/tickets.md): each tool's
//! parameters are a typed struct whose derived schema is what `schema` and MCP show and what
//! its input is checked against, every problem reported with its JSON path by the collector
//! plans use (`workflow/problems.rs`); the command line's flags come as a typed struct too.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::OnceLock;

use super::{
    Assignment, BlockerDetails, BuildStatus, FileChanged, Mode, Report, ReportStatus, Role,
    TestResults, Update, UpdateStatus,
};
use crate::workflow::problems::{self, Problem, Problems, Root};

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

/// `complete-ticket`'s parameters (`complete_ticket`, docs/tickets.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    #[schemars(
        description = "Brief summary of all changes made for this ticket",
        extend("x-text" = "summary")
    )]
    pub summary: String,
}

/// Each tool's parameters as a JSON schema (docs/tickets.md), derived from the type the
/// input becomes, with what the orchestrator needs beyond it (`override` on update-subtask,
/// `commit` on subtask-complete); the checking rules it carries are left out.
pub fn tool_schema(tool: Tool) -> Value {
    let mut schema = problems::reduced(derived(tool));
    // The tool's own description says what it does; the type's doc comment is for readers
    // of the code.
    if let Value::Object(map) = &mut schema {
        map.remove("description");
    }
    schema
}

/// The schema derived from the type `tool`'s input becomes, with its checking rules: made
/// once, since deriving it costs more than reading an input against it.
fn derived(tool: Tool) -> &'static Value {
    static SCHEMAS: [OnceLock<Value>; 4] = [const { OnceLock::new() }; 4];
    let (slot, derive): (usize, fn() -> Value) = match tool {
        Tool::Assign => (0, problems::derived::<Assignment>),
        Tool::UpdateSubtask => (1, problems::derived::<Update>),
        Tool::CompleteTicket => (2, problems::derived::<Completion>),
        Tool::SubtaskComplete => (3, problems::derived::<Report>),
    };
    SCHEMAS[slot].get_or_init(derive)
}

/// `assign`'s flags (docs/tickets.md): each one given overrides the JSON input's field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignmentFlags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_to_inspect: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_to_modify: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acceptance_criteria: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Vec<String>>,
}

/// `update-subtask`'s flags.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UpdateFlags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<UpdateStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(rename = "override", skip_serializing_if = "Option::is_none")]
    pub override_reason: Option<String>,
}

/// `subtask-complete`'s flags.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportFlags {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ReportStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_changed: Option<Vec<FileChanged>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_status: Option<BuildStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_results: Option<TestResults>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocker_details: Option<BlockerDetails>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// A tool's input from its JSON (`None`: the flags alone) and its flags: the JSON's fields
/// the flags give are not read, every problem of either is named (the flags' at the field
/// they give), and, when there is none, the struct. `after` adds the checks that relate
/// fields to each other.
fn read<T: DeserializeOwned>(
    tool: Tool,
    json: Option<&Value>,
    flags: &impl Serialize,
    after: fn(&Value, &mut Problems),
) -> Result<T, Vec<Problem>> {
    let schema = derived(tool);
    let flags = match serde_json::to_value(flags) {
        Ok(Value::Object(map)) => map,
        // The flags are plain data of named fields; nothing else serializes from them.
        _ => Map::new(),
    };
    let given: Vec<&str> = flags.keys().map(String::as_str).collect();
    let empty = Value::Object(Map::new());
    let json = json.unwrap_or(&empty);
    let mut found = Problems::default();
    let root = Root {
        given_elsewhere: &given,
        required: true,
    };
    problems::check(schema, json, root, &mut found);
    let flags = Value::Object(flags);
    let flag_root = Root {
        given_elsewhere: &[],
        required: false,
    };
    problems::check(schema, &flags, flag_root, &mut found);
    let mut merged = problems::without_nulls(json);
    if let (Value::Object(merged), Value::Object(flags)) = (&mut merged, flags) {
        merged.extend(flags);
    }
    if found.is_empty() {
        after(&merged, &mut found);
    }
    if !found.is_empty() {
        return Err(in_field_order(schema, found.into_vec()));
    }
    serde_json::from_value(merged).map_err(|e| {
        // The check above admits only what deserializes; this names a gap between them.
        vec![Problem {
            path: problems::ROOT.into(),
            message: e.to_string(),
        }]
    })
}

/// Problems in the order of the fields they are at (an unknown field's first, as the
/// check names them): the JSON's and the flags' read as one input.
fn in_field_order(schema: &Value, mut found: Vec<Problem>) -> Vec<Problem> {
    let fields = problems::field_names(schema);
    let position = |p: &Problem| {
        let field = p.path.split(['.', '[']).next().unwrap_or_default();
        fields.iter().position(|f| *f == field).map_or(0, |i| i + 1)
    };
    found.sort_by_key(position);
    found
}

fn nothing_more(_: &Value, _: &mut Problems) {}

/// `testResults` counts no more passed, failed and skipped tests than it says ran.
fn counts_add_up(report: &Value, found: &mut Problems) {
    let Some(results) = report.get("testResults") else {
        return;
    };
    let count = |key: &str| results.get(key).and_then(Value::as_u64);
    let Some(total) = count("total") else {
        return;
    };
    let counted = ["passed", "failed", "skipped"]
        .into_iter()
        .filter_map(count)
        .fold(0u64, u64::saturating_add);
    if counted > total {
        found.push(
            "testResults",
            format!("passed + failed + skipped is {counted}, more than total ({total})"),
        );
    }
}

/// `assign`'s input from its JSON and its flags, or every problem with it.
pub fn read_assignment(
    json: Option<&Value>,
    flags: &AssignmentFlags,
) -> Result<Assignment, Vec<Problem>> {
    read(Tool::Assign, json, flags, nothing_more)
}

/// `update-subtask`'s input from its JSON and its flags, or every problem with it.
pub fn read_update(json: Option<&Value>, flags: &UpdateFlags) -> Result<Update, Vec<Problem>> {
    read(Tool::UpdateSubtask, json, flags, nothing_more)
}

/// `complete-ticket`'s input from its JSON and its `--summary`, or every problem with it.
pub fn read_completion(
    json: Option<&Value>,
    summary: Option<String>,
) -> Result<Completion, Vec<Problem>> {
    #[derive(Serialize)]
    struct Flags {
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    }
    read(Tool::CompleteTicket, json, &Flags { summary }, nothing_more)
}

/// `subtask-complete`'s input from its JSON and its flags, or every problem with it.
/// `commit` defaults to `HEAD`.
pub fn read_report(json: Option<&Value>, flags: &ReportFlags) -> Result<Report, Vec<Problem>> {
    read(Tool::SubtaskComplete, json, flags, counts_add_up)
}

/// `assign`'s input (an MCP call's arguments), or every problem with it.
pub fn parse_assignment(value: &Value) -> Result<Assignment, Vec<Problem>> {
    read_assignment(Some(value), &AssignmentFlags::default())
}

/// `update-subtask`'s input, or every problem with it.
pub fn parse_update(value: &Value) -> Result<Update, Vec<Problem>> {
    read_update(Some(value), &UpdateFlags::default())
}

/// `complete-ticket`'s input: its summary, or every problem with it.
pub fn parse_complete_ticket(value: &Value) -> Result<String, Vec<Problem>> {
    read_completion(Some(value), None).map(|c| c.summary)
}

/// `subtask-complete`'s input, or every problem with it. `commit` defaults to `HEAD`.
pub fn parse_report(value: &Value) -> Result<Report, Vec<Problem>> {
    read_report(Some(value), &ReportFlags::default())
}
