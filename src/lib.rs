//! git-orchestrate: a git extension that drives an AI coding agent (or a human) through a
//! tool-gated, test-driven workflow, one pull request at a time, with all of its state kept
//! in git (docs/refs.md).
//!
//! Layers, from the inside out: [`workflow`] is the pure state machine and briefing text;
//! [`store`] reads and compare-and-swap-writes the workflow refs with gix; [`exec`] runs
//! processes; [`gates`] runs preflight; [`engine`] ties them together per command; [`cli`]
//! parses arguments and prints.

#![forbid(unsafe_code)]

pub mod agent;
pub mod cli;
pub mod config;
pub mod crash;
pub mod demo;
pub mod engine;
pub mod environ;
pub mod exec;
pub mod gates;
pub use git_orchestrate_guard::glob;
pub mod hooks;
pub mod input;
#[cfg(test)]
mod properties;
pub mod store;
#[cfg(test)]
mod test_git;
pub mod workflow;

/// Names the workflow when `--workflow` is not given; how the hooks learn it, too.
pub const WORKFLOW_ENV: &str = "GIT_ORCHESTRATE_WORKFLOW";

/// The identity used when git has none configured, so nothing fails for lack of `user.name`.
pub const FALLBACK_NAME: &str = "git-orchestrate";
pub const FALLBACK_EMAIL: &str = "git-orchestrate@localhost";

/// The first 12 characters of a commit or object id, as messages show one; the whole text
/// when it is shorter or is no id (a forged state's field can hold anything).
pub fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
