//! The guard's context, gathered in-process: what the pre-tool-use hook judges an agent's
//! command by, and `submit-work` a test command before it runs (the repository's paths, the
//! main branch, the gates, the protected paths and the session's role).

use std::path::Path;

use super::{EngineError, Facts, Session};
use crate::agent::guard::GuardContext;
use crate::store::Workflow;

/// What the guard needs, read in-process (the hook runs before every shell command).
pub fn guard_context(session: &Session, cwd: &Path) -> Result<GuardContext, EngineError> {
    // A ticket workflow has no TDD state: the guard judges it by the configuration alone
    // (the same rules as a workflow not started), rather than refusing every call.
    let (snapshot, ticket) = match session.store.read_workflow()? {
        Some(Workflow::Ticket(_)) => (None, true),
        tdd => (tdd.and_then(Workflow::into_tdd), false),
    };
    let state = snapshot.as_ref().map(|s| &s.state);
    let facts = session.facts(state)?;
    let mut context = guard_context_for(session, &facts, cwd)?;
    // Only a ticket's role needs its pinned configuration read (the guard runs before every
    // shell command; a TDD workflow pays for the variable alone).
    if ticket {
        context.role = super::ticket::role(session, None)?;
    }
    Ok(context)
}

/// [`guard_context`] under the facts of the command, gathered already.
pub fn guard_context_for(
    session: &Session,
    facts: &Facts,
    cwd: &Path,
) -> Result<GuardContext, EngineError> {
    let config = facts.config();
    let judges = super::verify::judges(config);
    Ok(GuardContext {
        root: session.store.workdir().to_path_buf(),
        cwd: cwd.to_path_buf(),
        git_dir: session.store.common_dir().to_path_buf(),
        hooks_dir: session.store.hooks_dir(),
        main_branch: facts.main.clone(),
        head_branch: session.store.head_branch()?,
        gate_commands: config.preflight.iter().map(|g| g.command.clone()).collect(),
        protected_files: crate::config::always_protected()
            .map(str::to_string)
            .chain(judges)
            .collect(),
        protected_globs: crate::config::always_protected_globs()
            .chain(config.gates.protected.iter().cloned())
            .collect(),
        role: super::ticket::env_role(),
    })
}
