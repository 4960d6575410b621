//! What the guard knows of the product it guards, defined here once and re-exported by the
//! product: the ticket roles and the variable that names a session's role, which role each
//! ticket command belongs to, and the git hooks the product installs.

use serde::{Deserialize, Serialize};

/// The environment variable that names the role of an agent session (`run` sets it for
/// each session; the guard keeps the agent from changing it).
pub const ROLE_ENV: &str = "GIT_ORCHESTRATE_ROLE";

/// Who calls a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Manager,
    Developer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Manager => "manager",
            Role::Developer => "developer",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "manager" => Some(Role::Manager),
            "developer" => Some(Role::Developer),
            _ => None,
        }
    }
}

/// Each ticket command (`git orchestrate <name>`, the MCP tool of the same name) and the
/// role that may call it; the product's ticket tools are checked against this table
/// (src/workflow/ticket/tests.rs).
pub const TICKET_COMMANDS: [(&str, Role); 4] = [
    ("assign", Role::Manager),
    ("update-subtask", Role::Manager),
    ("complete-ticket", Role::Manager),
    ("subtask-complete", Role::Developer),
];

/// The role a ticket command belongs to; `None` for any other word.
pub fn ticket_command_role(command: &str) -> Option<Role> {
    TICKET_COMMANDS
        .iter()
        .find(|(name, _)| *name == command)
        .map(|(_, role)| *role)
}

/// The hooks git-orchestrate installs, in the order it reports them.
pub const HOOK_NAMES: [&str; 3] = ["commit-msg", "post-commit", "pre-push"];
