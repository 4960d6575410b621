//! This process's environment, read once.
//!
//! Nothing in git-orchestrate changes its own environment, and reading all of it costs a
//! copy of every variable (about 25,000 instructions for a shell's thirty): the repository's
//! discovery, the commands' environment and our own git commands each looked at all of it,
//! on every call.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// Every variable, as the process started with it.
pub fn vars() -> &'static [(OsString, OsString)] {
    static VARS: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();
    VARS.get_or_init(|| std::env::vars_os().collect())
}

/// Every variable's name.
pub fn names() -> impl Iterator<Item = &'static OsStr> {
    vars().iter().map(|(name, _)| name.as_os_str())
}
