//! The command line's shape as clap reads it: the global options and each subcommand with
//! its arguments (each subcommand's own in its file); src/cli/fast.rs reads the hot path's
//! lines into the same.

use clap::{Parser, Subcommand};

/// Drive an AI coding agent (or a human) through a test-driven workflow, one PR at a time.
///
/// The workflow is tool-gated, and all of its state lives in git under refs/orchestrator/*.
/// Agents loop on `git orchestrate get-task` (what to do now) and `git orchestrate
/// submit-work` (prove it). Exit codes: 0 success, 1 verification failed, 2 bad input,
/// 3 needs analysis, 4 not allowed in this state, 5 repository/store problem, 10 halted for a
/// human.
#[derive(Debug, Parser)]
#[command(name = "git-orchestrate", bin_name = "git orchestrate", version)]
pub struct Cli {
    /// The workflow to act on (several can live side by side). Default: git config
    /// `orchestrate.workflow`, else "main".
    #[arg(long, global = true, env = crate::WORKFLOW_ENV)]
    pub workflow: Option<String>,

    /// Print a JSON object (with "schema": 1) instead of text; errors too, on stdout.
    #[arg(long, global = true)]
    pub json: bool,

    /// Print only what matters: the outcome, no hints or warnings.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

// Deferred: only the subcommand given is built in full, which saves a start-up cost that
// every call pays (the hot path is one call ≈ one `git rev-parse`). So each variant carries
// the one line `-h` lists (its arguments' doc comment, built only when it runs, has the
// rest); a test keeps the two first lines the same.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Set up git-orchestrate in this repository (safe to run again)
    Init(super::init::InitArgs),
    /// Print what to do now: the briefing for the current state
    GetTask(super::get_task::GetTaskArgs),
    /// Submit work for verification: a plan, a test run, an analysis, a finalization step
    SubmitWork(super::submit_work::SubmitWorkArgs),
    /// Stage everything and make the checkpoint commit on the PR branch
    Checkpoint(super::checkpoint::CheckpointArgs),
    /// Give up on a task that keeps failing, and re-plan it as smaller ones
    RequestScopeReduction(super::request_scope_reduction::ScopeReductionArgs),
    /// Hand the problem to a human: store a report, halt, exit 10
    Escalate(super::escalate::EscalateArgs),
    /// For humans: answer a halt, with guidance for the agent
    Resume(super::resume::ResumeArgs),
    /// For humans: approve the PR at the review's human gate, or one tree by name
    Approve(super::approve::ApproveArgs),
    /// For humans: reject the PR at the review's human gate, with a comment
    Reject(super::reject::RejectArgs),
    /// For humans: verify the rest of the PR under main's gates as they are now
    Repin(super::repin::RepinArgs),
    /// Show where the workflow stands; unlike get-task it never changes anything
    Status(super::status::StatusArgs),
    /// Show the workflow's transitions, newest first
    Log(super::log::LogArgs),
    /// Work with the active PR plan (stored as pr.json in the workflow ref)
    Plan(super::plan::PlanArgs),
    /// Check that every checkpoint commit in RANGE carries a passing verification note
    Verify(super::verify::VerifyArgs),
    /// Replay the workflow's history and check that nothing in it was forged
    Audit(super::audit::AuditArgs),
    /// Judge a workflow's merge into main, or a finalized PR's head, off the agent's machine
    Attest(super::attest::AttestArgs),
    /// Bring this clone and a remote level: workflows, notes and PR branches
    Sync(super::sync::SyncArgs),
    /// Show the claims on PRs, or (humans) release or steal one
    Claim(super::claim::ClaimArgs),
    /// Show every workflow here and on the remote, and the PRs nobody has taken
    Board(super::board::BoardArgs),
    /// Move the finished workflows out of the live refs into the archive ref
    Archive(super::archive::ArchiveArgs),
    /// Install, remove or show the git hooks that enforce preflight on checkpoints
    Hooks(super::hooks::HooksArgs),
    #[command(hide = true)]
    Hook(super::hooks::HookArgs),
    /// Check the setup, and say how to fix what is wrong
    Doctor(super::doctor::DoctorArgs),
    /// Run a whole PR in a throwaway repository with a built-in scripted agent
    Demo(super::demo::DemoArgs),
    /// Print the agent tools' schemas, in the function-calling format of a model API
    Schema(super::schema::SchemaArgs),
    /// Agent client hooks: session-start context, the pre-tool-use guard, the stop rule
    AgentHook(super::agent_hook::AgentHookArgs),
    /// Serve the agent tools over MCP on stdin/stdout, for one agent session
    Mcp(super::mcp::McpArgs),
    /// Let an agent work unattended: brief it, let it work, repeat until done or a human is needed
    Run(super::run::RunArgs),
    /// Give each agent a worktree of its own, with a workflow of its own
    Worktree(super::worktree::WorktreeArgs),
    /// Ticket mode: start a ticket (a manager agent and a developer agent), or show it
    Ticket(super::ticket::TicketArgs),
    /// Manager: assign the current subtask to the developer (assign_to_developer)
    Assign(super::ticket::AssignArgs),
    /// Manager: accept, reject or block the subtask the developer reported
    UpdateSubtask(super::ticket::UpdateArgs),
    /// Manager: squash, check and merge the ticket once every subtask is complete
    CompleteTicket(super::ticket::CompleteArgs),
    /// Developer: report the subtask's commit; it is checked by running it
    SubtaskComplete(super::ticket::ReportArgs),
    /// Print a shell completion script for git orchestrate
    Completions(super::completions::CompletionsArgs),
    /// Print the manual page (roff), or install it where `man` finds it
    Man(super::man::ManArgs),
}
