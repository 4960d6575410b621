//! Agent integration: the tool schemas, the shell-command guard, the hook adapters of each
//! agent client, and the client project files `init --agent` merges into. Each is a thin
//! translation of what the engine already does; nothing here prints. The user's side is in
//! docs/agent-guide.md, "Agents that plug in natively".

pub use git_orchestrate_guard::guard;
pub mod hook;
mod json_edit;
pub mod mcp_text;
pub mod run;
pub mod setup;
pub use git_orchestrate_guard::shell;
pub mod tools;
pub mod trust;
pub mod usage;
