//! `git orchestrate schema`: the agent tools as JSON, for custom agent loops.

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::{Exit, Failure, Ui};
use crate::agent::tools::{self, Format};

/// Print the agent tools' schemas, in the function-calling format of a model API.
///
/// The tools of `mcp`: get_task, submit_work, request_scope_reduction,
/// escalate_for_external_help and checkpoint, each with its parameters. Without --json the
/// output is the bare array the API takes (paste it into your agent loop's tool list); with
/// --json it is wrapped as {"schema": 1, "format": …, "tools": […]}. Needs no repository.
#[derive(Debug, Args)]
pub struct SchemaArgs {
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
    tools: &'a serde_json::Value,
}

pub fn run(args: &SchemaArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let (format, name) = match args.format {
        FormatArg::JsonSchema => (Format::JsonSchema, "json-schema"),
        FormatArg::Openai => (Format::OpenAi, "openai"),
        FormatArg::Anthropic => (Format::Anthropic, "anthropic"),
        FormatArg::Gemini => (Format::Gemini, "gemini"),
    };
    let rendered = tools::render(format);
    if ui.json {
        ui.report(&SchemaOutput {
            format: name,
            tools: &rendered,
        })?;
    } else {
        let text = serde_json::to_string_pretty(&rendered).map_err(std::io::Error::other)?;
        ui.text(&text)?;
    }
    Ok(Exit::Success)
}
