//! The agent tools (docs/agent-guide.md, "Agents that plug in natively"): one definition,
//! rendered as plain JSON Schema (the MCP shape) or in the function-calling format of each
//! model API.

use serde_json::{Map, Value, json};

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
            parameters: object(json!({}), &[]),
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
            parameters: object(
                json!({
                    "summary": {
                        "type": "string",
                        "description": "A brief summary of the work you completed and its outcome."
                    },
                    "test_command": {
                        "type": "string",
                        "description": "The command that runs this step's test (sh -c, repository root). Omit it when providing an 'analysis_decision' or a 'plan'."
                    },
                    "expectation": {
                        "type": "string",
                        "enum": ["PASS", "FAIL"],
                        "description": "Your expectation for the test outcome: FAIL for a RED step, PASS for GREEN and REFACTOR. Omit it when providing an 'analysis_decision'."
                    },
                    "analysis_decision": {
                        "type": "string",
                        "enum": ["SUCCESS", "FAILURE"],
                        "description": "Your final judgment after analyzing a 'NEEDS_ANALYSIS' response. Use 'SUCCESS' if the test failed as intended, 'FAILURE' otherwise."
                    },
                    "plan": plan_schema(),
                    "no_pr_left": {
                        "type": "boolean",
                        "description": "In INITIALIZING: true when every PR of the master plan is marked [DONE], so there is nothing left to do."
                    },
                    "squash": {
                        "type": "boolean",
                        "description": "In AWAITING_FINALIZATION: true to have the branch squashed into one commit titled with the PR title, then checked."
                    },
                    "mark_done": {
                        "type": "boolean",
                        "description": "In FINALIZE_COMPLETE: true to have this PR marked [DONE] with the squashed commit in the master plan, committed, then checked."
                    }
                }),
                &["summary"],
            ),
        },
        Tool {
            name: REQUEST_SCOPE_REDUCTION,
            description: "Use this tool as an escape hatch when you conclude a task is too complex or ambiguous to \
                          be completed. It reverts your code changes to the last successful checkpoint and assigns \
                          you a new task: break the original task down into smaller, more verifiable steps. It is \
                          locked until you have made several unsuccessful debugging attempts.",
            parameters: object(json!({}), &[]),
        },
        Tool {
            name: ESCALATE,
            description: "Use this as a final escape hatch when you are stuck. It pauses the automated workflow and \
                          shows a report to the human user, who will then provide guidance. You MUST write a \
                          comprehensive markdown report: the problem, what you have tried, and the relevant error \
                          messages. After calling this tool, the workflow STOPS and waits for the human. It is \
                          locked until many debugging attempts have failed.",
            parameters: object(
                json!({
                    "markdown_report": {
                        "type": "string",
                        "description": "A comprehensive markdown report for the human user, detailing the issue, attempts made, and final error messages."
                    }
                }),
                &["markdown_report"],
            ),
        },
        Tool {
            name: CHECKPOINT,
            description: "Makes the checkpoint commit after a GREEN or REFACTOR step passed: stages everything and \
                          commits it on the PR branch. Preflight is not run again for the tree that just passed.",
            parameters: object(
                json!({
                    "message": {
                        "type": "string",
                        "description": "The message after 'checkpoint: ' (default: the step and its description)."
                    }
                }),
                &[],
            ),
        },
    ]
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
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
    let tools = tools();
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

/// The PR plan as `submit-work --plan` reads it (docs/agent-guide.md, "The plan"): spelled
/// out, so a model sees its shape and Gemini, which refuses an object without properties,
/// takes it. The validator stays the judge (and lists every problem with its JSON path).
fn plan_schema() -> Value {
    let text = |description: &str| json!({"type": "string", "description": description});
    let step = json!({
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["RED", "GREEN", "REFACTOR"]},
            "description": text("What this step does."),
            "status": {"type": "string", "enum": ["TODO", "DONE"]}
        },
        "required": ["type", "description", "status"]
    });
    let task = json!({
        "type": "object",
        "properties": {
            "taskName": text("One line."),
            "status": {"type": "string", "enum": ["TODO", "IN_PROGRESS", "DONE", "ERROR"]},
            "tdd_steps": {
                "type": "array",
                "items": step,
                "description": "In order; a task with steps left ends with a GREEN or REFACTOR step."
            },
            "breakdownHistory": {
                "type": "object",
                "properties": {
                    "originalTaskName": text("The task this one replaces."),
                    "justification": text("Why it was broken down.")
                },
                "required": ["originalTaskName", "justification"],
                "description": "Only in a re-plan, on the first new task."
            }
        },
        "required": ["taskName", "status", "tdd_steps"]
    });
    json!({
        "type": "object",
        "description": "The PR plan (the INITIALIZING briefing of get_task shows an example).",
        "properties": {
            "masterPlanPath": text("The configured master plan, e.g. docs/Plan_Doc/Active_Plan.md."),
            "prTitle": text("One line; it names the branch (\"feat: Add numbers\" → feat/add-numbers)."),
            "summary": text("What the PR does."),
            "verificationPlan": text("How the PR is verified."),
            "tasks": {"type": "array", "items": task}
        },
        "required": ["masterPlanPath", "prTitle", "summary", "verificationPlan", "tasks"]
    })
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
}
