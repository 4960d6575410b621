//! The only code that starts processes: the agent's test command and preflight gates
//! (`sh -c` with timeouts and process-group kill), git porcelain on the working tree, and
//! `ssh-keygen` for signed human answers.

pub mod agent;
pub mod cancel;
pub mod command;
pub mod confine;
pub mod env;
pub mod git;
mod group;
pub mod orphans;
pub mod pause;
pub mod process;
pub mod runner;
pub mod ssh;

pub use cancel::Cancel;
pub use command::{RunOutput, ShellOptions, run_shell, run_shell_with, tail_lines};
pub use env::CommandEnv;
pub use git::{Git, GitError, ListedWorktree, LoggedCommit, MergeOutcome, StartedStatus};
pub use process::{Captured, path_with_first, run_captured};
