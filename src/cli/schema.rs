//! `git orchestrate schema`: the agent tools as JSON, for custom agent loops.

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::{Exit, Failure, Ui};
use crate::agent::tools::{self, Format};
use crate::workflow::ticket::Role;

/// Print the agent tools' schemas, in the function-calling format of a model API.
///
/// The tools of `mcp`: get_task, submit_work, request_scope_reduction,
/// escalate_for_external_help and checkpoint, each with its parameters. With --role, the
/// tools of that role of a ticket workflow, as `mcp --role` lists them: get_task (the role's
/// briefing), then assign_to_developer, update_subtask and complete_ticket for the manager,
/// or subtask_complete for the developer. Without --json the output is the bare array the
/// API takes (paste it into your agent loop's tool list); with --json it is wrapped as
/// {"schema": 1, "format": …, "tools": […]} (and "role" with --role). Needs no repository.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// The ticket tools of this role (docs/tickets.md) instead of the TDD workflow's.
    #[arg(long, value_enum)]
    pub role: Option<Role>,
    /// json-schema: name, description and inputSchema (as MCP lists them); openai: Chat
    /// Completions `tools`; anthropic: Messages `tools`; gemini: `tools` with
    /// functionDeclarations.
    #[arg(long, value_enum, default_value = "json-schema")]
    pub format: FormatArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    JsonSchema,
    Openai,
    Anthropic,
    Gemini,
}

/// What `schema --json` prints: the format's name and its tools.
#[derive(Serialize)]
struct SchemaOutput<'a> {
    format: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Role>,
    tools: &'a serde_json::Value,
}

pub fn run(args: &SchemaArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let (format, name) = match args.format {
        FormatArg::JsonSchema => (Format::JsonSchema, "json-schema"),
        FormatArg::Openai => (Format::OpenAi, "openai"),
        FormatArg::Anthropic => (Format::Anthropic, "anthropic"),
        FormatArg::Gemini => (Format::Gemini, "gemini"),
    };
    let rendered = match args.role {
        Some(role) => tools::render_tools(&tools::ticket_tools(role), format),
        None => tools::render(format),
    };
    if ui.json {
        ui.report(&SchemaOutput {
            format: name,
            role: args.role,
            tools: &rendered,
        })?;
    } else {
        let text = serde_json::to_string_pretty(&rendered).map_err(std::io::Error::other)?;
        ui.text(&text)?;
    }
    Ok(Exit::Success)
}
