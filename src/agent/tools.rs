//! The agent tools (docs/agent-guide.md, "Agents that plug in natively"): one definition,
//! rendered as plain JSON Schema (the MCP shape) or in the function-calling format of each
//! model API.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::workflow::plan::Plan;
use crate::workflow::ticket::{self, Role};

/// One tool: its name, what the model reads about it, and its parameters as JSON Schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// A JSON Schema object (`"type": "object"`), lowercase types.
    pub parameters: Value,
}

pub const GET_TASK: &str = "get_task";
pub const SUBMIT_WORK: &str = "submit_work";
pub const REQUEST_SCOPE_REDUCTION: &str = "request_scope_reduction";
pub const ESCALATE: &str = "escalate_for_external_help";
pub const CHECKPOINT: &str = "checkpoint";

/// The tools: the four agent commands, then `checkpoint`.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: GET_TASK,
            description: "Gets the next task or mission briefing from the orchestrator: what to do now, in the \
                          current state of the workflow. Call this to get your goal, and whenever you are unsure \
                          what to do.",
            parameters: parameters::<NoArguments>(),
        },
        Tool {
            name: SUBMIT_WORK,
            description: "The single gateway for all code verification. Modes: (1) to plan a PR in \
                          INITIALIZING (or re-plan in REPLANNING), provide the 'plan'; (2) to run a test, \
                          provide a 'test_command' and your 'expectation'; (3) to confirm the result of an \
                          ambiguous test run, provide your 'analysis_decision'; (4) with only a 'summary', \
                          confirm a finalization step ('squash' or 'mark_done' make that step's commit \
                          first); (5) in INITIALIZING, when every PR of the master plan is marked [DONE], set \
                          'no_pr_left'. You are FORBIDDEN from running tests with a shell \
                          tool to judge your work: this tool runs them, then the preflight gates.",
            parameters: parameters::<SubmitWorkArguments>(),
        },
        Tool {
            name: REQUEST_SCOPE_REDUCTION,
            description: "Use this tool as an escape hatch when you conclude a task is too complex or ambiguous to \
                          be completed. It reverts your code changes to the last successful checkpoint and assigns \
                          you a new task: break the original task down into smaller, more verifiable steps. It is \
                          locked until you have made several unsuccessful debugging attempts.",
            parameters: parameters::<NoArguments>(),
        },
        Tool {
            name: ESCALATE,
            description: "Use this as a final escape hatch when you are stuck. It pauses the automated workflow and \
                          shows a report to the human user, who will then provide guidance. You MUST write a \
                          comprehensive markdown report: the problem, what you have tried, and the relevant error \
                          messages. After calling this tool, the workflow STOPS and waits for the human. It is \
                          locked until many debugging attempts have failed.",
            parameters: parameters::<EscalateArguments>(),
        },
        Tool {
            name: CHECKPOINT,
            description: "Makes the checkpoint commit after a GREEN or REFACTOR step passed: stages everything and \
                          commits it on the PR branch. Preflight is not run again for the tree that just passed.",
            parameters: parameters::<CheckpointArguments>(),
        },
    ]
}

/// The tools of one role of a ticket workflow (docs/tickets.md): `get_task` for the role's
/// briefing, then the role's tools under their function-calling names (docs/tickets.md: `assign_to_developer`,
/// `update_subtask`, `complete_ticket` for the manager; `subtask_complete` for the
/// developer), each with its parameters as `workflow::ticket::tool_schema` gives them.
pub fn ticket_tools(role: Role) -> Vec<Tool> {
    let briefing = match role {
        Role::Manager => {
            "Gets your briefing as the ticket's manager: the ticket, every subtask's status and \
             rejection count, the developer's last report beside what git-orchestrate observed at \
             its commit, and the next legal action. Call it first, and whenever you are unsure \
             what to do."
        }
        Role::Developer => {
            "Gets your briefing as the ticket's developer: the current assignment (mode, goal, \
             files, acceptance criteria, constraints) and the next legal action. Call it first, \
             and whenever you are unsure what to do."
        }
    };
    std::iter::once(Tool {
        name: GET_TASK,
        description: briefing,
        parameters: parameters::<NoArguments>(),
    })
    .chain(ticket::Tool::for_role(role).map(|t| Tool {
        name: t.function_name(),
        description: t.description(),
        parameters: ticket::tool_schema(t),
    }))
    .collect()
}

/// The ticket tool an MCP or function-calling name stands for (its function-calling name, docs/tickets.md).
pub fn ticket_tool(name: &str) -> Option<ticket::Tool> {
    ticket::Tool::ALL
        .into_iter()
        .find(|t| t.function_name() == name)
}

/// The formats `schema --format` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `[{name, description, inputSchema}]`: JSON Schema, as MCP lists tools.
    JsonSchema,
    /// OpenAI function calling: `[{type: "function", function: {name, description, parameters}}]`.
    OpenAi,
    /// Anthropic tool use: `[{name, description, input_schema}]`.
    Anthropic,
    /// Gemini: `[{functionDeclarations: [{name, description, parameters}]}]`, with the
    /// OpenAPI subset Gemini takes (uppercase types, no `additionalProperties`).
    Gemini,
}

/// The tools in `format`, as the JSON array that API takes.
pub fn render(format: Format) -> Value {
    render_tools(&tools(), format)
}

/// `tools` in `format`, as the JSON array that API takes.
pub fn render_tools(tools: &[Tool], format: Format) -> Value {
    match format {
        Format::JsonSchema => tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.parameters}))
            .collect(),
        Format::OpenAi => tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect(),
        Format::Anthropic => tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect(),
        Format::Gemini => json!([{
            "functionDeclarations": tools.iter().map(|t| json!({
                "name": t.name,
                "description": t.description,
                "parameters": gemini_schema(&t.parameters),
            })).collect::<Vec<_>>()
        }]),
    }
}

/// The arguments of `get_task` and `request_scope_reduction`: none.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArguments {}

/// The arguments of `submit_work`: one kind of submission besides the summary (the MCP server
/// refuses two kinds at once). The plan is [`Plan`] itself, the type the validator
/// (`workflow::plan::parse_submitted_plan`) checks and fills, so its schema cannot drift.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SubmitWorkArguments {
    #[schemars(description = "A brief summary of the work you completed and its outcome.")]
    pub summary: String,
    #[schemars(
        description = "The command that runs this step's test (sh -c, repository root). Omit it when providing an 'analysis_decision' or a 'plan'."
    )]
    pub test_command: Option<String>,
    #[schemars(
        description = "Your expectation for the test outcome: FAIL for a RED step, PASS for GREEN and REFACTOR. Omit it when providing an 'analysis_decision'."
    )]
    pub expectation: Option<ExpectationArgument>,
    #[schemars(
        description = "Your final judgment after analyzing a 'NEEDS_ANALYSIS' response. Use 'SUCCESS' if the test failed as intended, 'FAILURE' otherwise."
    )]
    pub analysis_decision: Option<DecisionArgument>,
    pub plan: Option<Plan>,
    #[schemars(
        description = "In INITIALIZING: true when every PR of the master plan is marked [DONE], so there is nothing left to do."
    )]
    pub no_pr_left: Option<bool>,
    #[schemars(
        description = "In AWAITING_FINALIZATION: true to have the branch squashed into one commit titled with the PR title, then checked."
    )]
    pub squash: Option<bool>,
    #[schemars(
        description = "In FINALIZE_COMPLETE: true to have this PR marked [DONE] with the squashed commit in the master plan, committed, then checked."
    )]
    pub mark_done: Option<bool>,
    #[schemars(
        description = "While a test holds the work (EXECUTING_TDD, DEBUGGING, REPLANNING): the task and its test contradict each other, and this says how (what the task asks, what the test holds, why both cannot be true). The workflow halts for a human with your account. Use it instead of bending the test or special-casing the code."
    )]
    pub contradiction: Option<String>,
}

/// `expectation` as the tool takes it: the spelling of [`crate::workflow::Expectation`] (a
/// test holds the two to the same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExpectationArgument {
    Pass,
    Fail,
}

/// `analysis_decision` as the tool takes it: the spelling of [`crate::workflow::Decision`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DecisionArgument {
    Success,
    Failure,
}

/// The arguments of `escalate_for_external_help`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EscalateArguments {
    #[schemars(
        description = "A comprehensive markdown report for the human user, detailing the issue, attempts made, and final error messages."
    )]
    pub markdown_report: String,
}

/// The arguments of `checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CheckpointArguments {
    #[schemars(
        description = "The message after 'checkpoint: ' (default: the step and its description)."
    )]
    pub message: Option<String>,
}

/// A tool's parameters: the schema derived from `T`, in the shape every API takes (see
/// [`portable`]), as a closed object that lists `required` even when it is empty.
fn parameters<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let derived = portable(
        &generator.into_root_schema_for::<T>().to_value(),
        Level::Tool,
    );
    json!({
        "type": "object",
        "properties": derived.get("properties").cloned().unwrap_or_else(|| json!({})),
        "required": derived.get("required").cloned().unwrap_or_else(|| json!([])),
        "additionalProperties": false,
    })
}

/// A derived schema reduced to what every model API accepts: subschemas inlined, an optional
/// value as the value's own schema (`["string", "null"]` and a `null` in `enum` are refused
/// by Gemini), and only the keywords below. The order is fixed, so `schema` prints the same
/// bytes whatever order the generator writes: the type, then its parts, the required
/// properties before the optional ones (what a model must give first), then the
/// description; but a tool parameter that is an object (the plan) says what it is before
/// its long list of properties. `$schema`, `title`, `format` and the like are dropped.
fn portable(schema: &Value, level: Level) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    if let Some(t) = map.get("type") {
        out.insert("type".into(), without_null(t));
    }
    let description = map.get("description");
    let leading = level == Level::Parameter && map.contains_key("properties");
    if let (Some(description), true) = (description, leading) {
        out.insert("description".into(), description.clone());
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let values = values.iter().filter(|v| !v.is_null()).cloned().collect();
        out.insert("enum".into(), Value::Array(values));
    }
    if let Some(item) = map.get("items") {
        out.insert("items".into(), portable(item, Level::Nested));
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        let required = map.get("required").and_then(Value::as_array);
        let is_required = |k: &String| required.is_some_and(|r| r.iter().any(|n| n == k.as_str()));
        let (first, rest): (Vec<_>, Vec<_>) = props.iter().partition(|(k, _)| is_required(k));
        let props = first
            .into_iter()
            .chain(rest)
            .map(|(k, v)| (k.clone(), portable(v, level.inner())))
            .collect();
        out.insert("properties".into(), Value::Object(props));
    }
    if let Some(required) = map.get("required") {
        out.insert("required".into(), required.clone());
    }
    if let (Some(description), false) = (description, leading) {
        out.insert("description".into(), description.clone());
    }
    Value::Object(out)
}

/// Where a schema sits in a tool's parameters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The parameters object itself.
    Tool,
    /// One parameter.
    Parameter,
    /// Inside a parameter.
    Nested,
}

impl Level {
    fn inner(self) -> Level {
        match self {
            Level::Tool => Level::Parameter,
            Level::Parameter | Level::Nested => Level::Nested,
        }
    }
}

/// `["string", "null"]` → `"string"`.
fn without_null(types: &Value) -> Value {
    match types {
        Value::Array(types) => types
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// JSON Schema → Gemini's OpenAPI subset: types in uppercase, `additionalProperties` dropped
/// (Gemini refuses it), an object without properties kept as `{"type": "OBJECT"}` with empty
/// `properties`.
fn gemini_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("additionalProperties", _) => {}
                    ("type", Value::String(t)) => {
                        out.insert(key.clone(), Value::String(t.to_uppercase()));
                    }
                    // `["object", "null"]` (the ticket tools' optional objects): Gemini takes
                    // one type, and says "may be null" with `nullable`.
                    ("type", types @ Value::Array(_)) => {
                        if let Value::String(t) = without_null(types) {
                            out.insert(key.clone(), Value::String(t.to_uppercase()));
                        }
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    ("items", item) => {
                        out.insert(key.clone(), gemini_schema(item));
                    }
                    ("properties", Value::Object(props)) => {
                        let props = props
                            .iter()
                            .map(|(k, v)| (k.clone(), gemini_schema(v)))
                            .collect();
                        out.insert(key.clone(), Value::Object(props));
                    }
                    _ => {
                        out.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each API's tool list, whole, as `git orchestrate schema --format …` prints it: the
    /// snapshots were taken from the hand-written schemas these derived ones replaced.
    #[test]
    fn each_format_matches_its_snapshot() {
        let formats = [
            (Format::JsonSchema, "json-schema"),
            (Format::OpenAi, "openai"),
            (Format::Anthropic, "anthropic"),
            (Format::Gemini, "gemini"),
        ];
        for (format, name) in formats {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/snapshots/schemas")
                .join(format!("{name}.json"));
            let text = serde_json::to_string_pretty(&render(format)).expect("plain JSON") + "\n";
            let expected = std::fs::read_to_string(&path).expect("the snapshot is committed");
            assert_eq!(text, expected, "{name} differs from {}", path.display());
        }
    }
    use pretty_assertions::assert_eq;

    #[test]
    fn the_tools_are_the_four_and_checkpoint() {
        let names: Vec<&str> = tools().iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                GET_TASK,
                SUBMIT_WORK,
                REQUEST_SCOPE_REDUCTION,
                ESCALATE,
                CHECKPOINT
            ]
        );
    }

    /// Each role's tools: its briefing, then its tools (docs/tickets.md) with their schemas; Gemini
    /// gets one type per schema (`nullable` for the optional objects).
    #[test]
    fn each_ticket_role_has_its_own_tools() {
        let names = |role| {
            ticket_tools(role)
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(Role::Manager),
            [
                GET_TASK,
                "assign_to_developer",
                "update_subtask",
                "complete_ticket"
            ]
        );
        assert_eq!(names(Role::Developer), [GET_TASK, "subtask_complete"]);
        let report = &ticket_tools(Role::Developer)[1];
        assert_eq!(
            report.parameters,
            ticket::tool_schema(ticket::Tool::SubtaskComplete)
        );
        assert_eq!(
            ticket_tool("subtask_complete"),
            Some(ticket::Tool::SubtaskComplete)
        );
        assert_eq!(ticket_tool("subtask-complete"), None);
        let gemini = render_tools(&ticket_tools(Role::Developer), Format::Gemini);
        let results =
            &gemini[0]["functionDeclarations"][1]["parameters"]["properties"]["testResults"];
        assert_eq!(results["type"], "OBJECT");
        assert_eq!(results["nullable"], true);
        assert_eq!(results["properties"]["total"]["type"], "INTEGER");
    }

    #[test]
    fn each_format_carries_the_same_parameters() {
        let submit = |v: &Value, pointer: &str| v.pointer(pointer).cloned().unwrap_or(Value::Null);
        let base = tools()[1].parameters.clone();
        assert_eq!(submit(&render(Format::JsonSchema), "/1/inputSchema"), base);
        assert_eq!(
            submit(&render(Format::OpenAi), "/1/function/parameters"),
            base
        );
        assert_eq!(
            submit(&render(Format::OpenAi), "/1/type"),
            json!("function")
        );
        assert_eq!(submit(&render(Format::Anthropic), "/1/input_schema"), base);
        let gemini = render(Format::Gemini);
        let params = submit(&gemini, "/0/functionDeclarations/1/parameters");
        assert_eq!(params["type"], "OBJECT");
        assert_eq!(params["properties"]["expectation"]["type"], "STRING");
        assert_eq!(
            params["properties"]["expectation"]["enum"],
            json!(["PASS", "FAIL"])
        );
        assert_eq!(params["properties"]["no_pr_left"]["type"], "BOOLEAN");
        assert_eq!(params["required"], json!(["summary"]));
        assert!(params.get("additionalProperties").is_none());
        assert_eq!(
            submit(&gemini, "/0/functionDeclarations/0/parameters"),
            json!({"type": "OBJECT", "properties": {}, "required": []})
        );
    }

    /// Gemini refuses a nested OBJECT without properties ("should be non-empty for OBJECT
    /// type"), and takes only uppercase types: the plan is spelled out to its steps.
    #[test]
    fn gemini_gets_every_nested_object_with_its_properties() {
        fn walk(v: &Value, path: &str, top: bool, wrong: &mut Vec<String>) {
            let Value::Object(map) = v else { return };
            if let Some(Value::String(t)) = map.get("type") {
                if t.chars().any(|c| c.is_lowercase()) {
                    wrong.push(format!("{path}: type {t}"));
                }
                let empty = map
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(|p| p.is_empty());
                if t == "OBJECT" && !top && empty {
                    wrong.push(format!("{path}: an OBJECT without properties"));
                }
            }
            if let Some(Value::Object(props)) = map.get("properties") {
                for (k, p) in props {
                    walk(p, &format!("{path}.{k}"), false, wrong);
                }
            }
            if let Some(items) = map.get("items") {
                walk(items, &format!("{path}[]"), false, wrong);
            }
        }
        let mut wrong = Vec::new();
        let gemini = render(Format::Gemini);
        for tool in gemini[0]["functionDeclarations"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            walk(&tool["parameters"], name, true, &mut wrong);
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
        let step = &gemini[0]["functionDeclarations"][1]["parameters"]["properties"]["plan"]["properties"]
            ["tasks"]["items"]["properties"]["tdd_steps"]["items"];
        assert_eq!(
            step["properties"]["type"]["enum"],
            json!(["RED", "GREEN", "REFACTOR"])
        );
    }

    /// What every model API takes: no reference, definition, meta-schema, format or title,
    /// one type per schema and no `null` anywhere.
    #[test]
    fn the_derived_schemas_use_only_what_every_api_takes() {
        // `names`: the keys of this object are property names, not keywords.
        fn walk(v: &Value, path: &str, names: bool, wrong: &mut Vec<String>) {
            match v {
                Value::Object(map) => {
                    for (k, v) in map {
                        let at = format!("{path}/{k}");
                        let refused = k.starts_with('$')
                            || ["anyOf", "oneOf", "format", "title"].contains(&k.as_str())
                            || (k == "type" && !v.is_string());
                        if refused && !names {
                            wrong.push(format!("{at}: {v}"));
                        }
                        walk(v, &at, !names && k == "properties", wrong);
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, &format!("{path}/{i}"), false, wrong);
                    }
                }
                Value::Null => wrong.push(format!("{path}: null")),
                _ => {}
            }
        }
        let mut wrong = Vec::new();
        for tool in tools() {
            walk(&tool.parameters, tool.name, false, &mut wrong);
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The plan parameter of submit_work, as the tool lists it.
    fn plan_parameter() -> Value {
        tools()[1].parameters["properties"]["plan"].clone()
    }

    /// A value of every property the schema names (the first of each enum).
    fn example(schema: &Value) -> Value {
        if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            return first.clone();
        }
        match schema["type"].as_str() {
            Some("object") => schema["properties"]
                .as_object()
                .map(|props| props.iter().map(|(k, v)| (k.clone(), example(v))).collect())
                .unwrap_or_default(),
            Some("array") => json!([example(&schema["items"])]),
            Some("boolean") => json!(true),
            _ => json!("Add numbers"),
        }
    }

    /// A problem with the plan's shape (a field missing, unknown or of the wrong type or
    /// value), not with what it says (a task ending in RED).
    fn shape_problems(plan: &Value) -> Vec<String> {
        let bytes = serde_json::to_vec(plan).expect("a JSON value serialises");
        match crate::workflow::plan::parse_plan(&bytes) {
            Ok(_) => Vec::new(),
            Err(problems) => problems
                .into_iter()
                .filter(|p| {
                    ["missing", "unknown field", "expected"]
                        .iter()
                        .any(|start| p.message.starts_with(start))
                })
                .map(|p| p.to_string())
                .collect(),
        }
    }

    /// Every (path, schema) of the plan's properties, depth first.
    fn plan_properties() -> Vec<(Vec<String>, Value, bool)> {
        fn walk(schema: &Value, at: &[String], out: &mut Vec<(Vec<String>, Value, bool)>) {
            let schema = if schema["type"] == "array" {
                &schema["items"]
            } else {
                schema
            };
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            for (k, v) in schema["properties"].as_object().into_iter().flatten() {
                let mut path = at.to_vec();
                path.push(k.clone());
                out.push((path.clone(), v.clone(), required.contains(&json!(k))));
                walk(v, &path, out);
            }
        }
        let mut out = Vec::new();
        walk(&plan_parameter(), &[], &mut out);
        out
    }

    /// The value at `path` (arrays stepped through at their first item).
    fn at<'v>(plan: &'v mut Value, path: &[String]) -> &'v mut Value {
        path.iter().fold(plan, |v, key| {
            let v = if v.is_array() { &mut v[0] } else { v };
            &mut v[key.as_str()]
        })
    }

    /// The fields the validator takes in the object at `path` (an array's first item), as
    /// its refusal of an unknown one lists them; none when it takes any.
    fn accepted_fields(full: &Value, path: &[String]) -> Vec<String> {
        let mut plan = full.clone();
        let value = at(&mut plan, path);
        let value = if value.is_array() {
            &mut value[0]
        } else {
            value
        };
        value["notInTheSchema"] = json!("x");
        let mut fields: Vec<String> = shape_problems(&plan)
            .iter()
            .find_map(|p| p.split_once("notInTheSchema: unknown field (expected one of "))
            .map(|(_, list)| {
                list.trim_end_matches(')')
                    .split(", ")
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        fields.sort();
        fields
    }

    /// The properties of an object schema (an array's items), sorted.
    fn schema_fields(schema: &Value) -> Vec<String> {
        let schema = if schema["type"] == "array" {
            &schema["items"]
        } else {
            schema
        };
        let mut fields: Vec<String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        fields.sort();
        fields
    }

    /// The schema and the validator agree: a plan of every property the schema lists has
    /// the shape the validator wants; each property the schema requires, the validator
    /// misses, and each it leaves optional, the validator does not; each enum value is one
    /// the validator takes; and the fields the validator takes in each object are the
    /// properties the schema lists there, no more, no fewer.
    #[test]
    fn the_plan_schema_and_the_validator_agree() {
        let full = example(&plan_parameter());
        assert_eq!(shape_problems(&full), Vec::<String>::new());
        assert_eq!(
            accepted_fields(&full, &[]),
            schema_fields(&plan_parameter())
        );
        for (path, schema, required) in plan_properties() {
            let (parent, key) = path.split_at(path.len() - 1);
            let mut plan = full.clone();
            let holder = at(&mut plan, parent);
            let holder = if holder.is_array() {
                &mut holder[0]
            } else {
                holder
            };
            holder
                .as_object_mut()
                .expect("an object holds the property")
                .remove(&key[0]);
            let problems = shape_problems(&plan);
            assert_eq!(
                !problems.is_empty(),
                required,
                "{path:?} without it: {problems:?}"
            );
            for value in schema["enum"].as_array().into_iter().flatten() {
                let mut plan = full.clone();
                *at(&mut plan, &path) = value.clone();
                assert_eq!(
                    shape_problems(&plan),
                    Vec::<String>::new(),
                    "{path:?} = {value}"
                );
            }
            if schema["type"] == "object" || schema["type"] == "array" {
                assert_eq!(
                    accepted_fields(&full, &path),
                    schema_fields(&schema),
                    "{path:?}"
                );
            }
        }
    }

    #[test]
    fn the_tool_arguments_spell_the_workflow_values() {
        use crate::workflow::{Decision, Expectation};
        assert_eq!(
            serde_json::to_value([ExpectationArgument::Pass, ExpectationArgument::Fail]).ok(),
            serde_json::to_value([Expectation::Pass, Expectation::Fail]).ok()
        );
        assert_eq!(
            serde_json::to_value([DecisionArgument::Success, DecisionArgument::Failure]).ok(),
            serde_json::to_value([Decision::Success, Decision::Failure]).ok()
        );
    }
}
