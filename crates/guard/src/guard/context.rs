//! What the guard knows about the repository, gathered by the engine.

use std::path::PathBuf;

/// What the guard knows about the repository, gathered by the engine.
#[derive(Clone, Debug, Default)]
pub struct GuardContext {
    /// The repository's top directory and the directory the command runs in.
    pub root: PathBuf,
    pub cwd: PathBuf,
    /// The git directory and the hooks directory, absolute.
    pub git_dir: PathBuf,
    pub hooks_dir: PathBuf,
    pub main_branch: String,
    /// The branch HEAD is on, if any.
    pub head_branch: Option<String>,
    /// The preflight gates' commands: running one directly is what submit-work is for.
    pub gate_commands: Vec<String>,
    /// Paths (relative to the root) an agent must not change: the config, the scripts the
    /// gates and reviewer run. `[gates] protected` globs are in `protected_globs`.
    pub protected_files: Vec<String>,
    pub protected_globs: Vec<String>,
    /// The ticket role this agent session plays (`GIT_ORCHESTRATE_ROLE`, else `[agent]
    /// role`): the other role's tools are refused. `None`: no role, nothing refused for it.
    pub role: Option<crate::product::Role>,
}
