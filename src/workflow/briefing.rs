//! The briefing `get-task` prints: for every state, a text an LLM can follow with no
//! other context. It is the product, so its tests compare whole texts.

use std::fmt::Write as _;

use serde::Serialize;

use super::Expectation;
use super::debugging::{Thresholds, Tier};
use super::plan::{PLAN_SCHEMA, PlanSummary, StepSummary, StepType};
use super::state::{HaltReason, LastRun, Pending, State, Status, Verdict};

/// Everything a briefing is made from. The engine gathers it; nothing here reads git.
pub struct Context<'a> {
    pub workflow: &'a str,
    pub state: &'a State,
    pub plan: Option<&'a PlanSummary>,
    /// `master_plan` from the config.
    pub master_plan: &'a str,
    /// A command that prints the full `output.log` of the workflow.
    pub output_log_command: &'a str,
    /// Names of the preflight gates in force (empty: none configured).
    pub gates: &'a [String],
    /// What `get-task` did just now, in the order it did it.
    pub done: &'a [DoneAction],
    /// Problems the agent (and whoever reads along) must know about.
    pub warnings: &'a [String],
    pub thresholds: Thresholds,
    /// A human's guidance from `resume`, delivered with this briefing (once).
    pub guidance: Option<&'a str>,
    /// While halted by an escalation: the command that prints the report, and the report.
    pub escalation: Option<(&'a str, &'a str)>,
    /// A command that prints the active plan, for a re-plan to start from.
    pub plan_show_command: &'a str,
    /// A command that prints the last review's findings.
    pub review_show_command: &'a str,
    /// The last review's findings, at the human gate (none of them blocks: the human
    /// weighs them).
    pub noted_findings: &'a [super::review::Finding],
    /// The branch PRs start from and merge into.
    pub main_branch: &'a str,
    /// INITIALIZING after `submit-work --no-pr-left`, and the master plan on the main branch
    /// is still the one judged: nothing is left to do.
    pub idle: bool,
}

/// A briefing and the structured view of its step, for `--json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Briefing {
    pub text: String,
    pub step: Option<StepView>,
    pub attempt: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepView {
    pub id: String,
    pub task: String,
    #[serde(rename = "type")]
    pub kind: StepType,
    pub description: String,
}

/// How `get-task` got the PR branch checked out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BranchOutcome {
    /// It already was.
    CheckedOut { branch: String },
    /// An interrupted `get-task` had created it; now it is checked out.
    Resumed { branch: String },
    /// Created from the main branch, after updating main from `pulled_from`.
    Created {
        branch: String,
        main: String,
        pulled_from: Option<String>,
    },
    /// The working tree (or git) blocked it; nothing was changed.
    Blocked { reason: String },
}

/// Something the agent (and whoever reads along) must know, found by the shell and worded
/// here: a warning in briefings and `status`, a note of `submit-work`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The working tree's config differs from the main branch's, which stays in force.
    ConfigDiffersFromMain {
        main: String,
        branch: String,
    },
    /// The config is read from the working tree because it is not committed on main.
    ConfigNotCommitted {
        main: String,
    },
    /// The working tree's config is in force with changes not committed on main.
    ConfigUncommitted {
        main: String,
    },
    /// The config names another main branch than the one the workflow was created with.
    MainBranchFixed {
        origin: String,
        configured: String,
        workflow: String,
        fixed: String,
    },
    NoPreflightGates {
        origin: String,
    },
    /// The config does not parse; the commands that need it refuse.
    ConfigInvalid,
    /// HEAD is not on the PR branch (which may be checked out in another worktree).
    OffBranch {
        head: Option<String>,
        branch: String,
        worktree: Option<std::path::PathBuf>,
    },
    /// A commit marked as a checkpoint holds a tree the gates in force did not verify.
    UnverifiedCheckpoint {
        commit: String,
        subject: String,
        gates_changed: bool,
    },
    /// main's config changed since the PR's gates were pinned; the pinned one stays in force.
    MainGatesChanged {
        main: String,
        pinned: String,
    },
    /// A first plan marked steps DONE; they start TODO like every other.
    PlanStatusesIgnored {
        claimed_done: usize,
    },
    /// The workflow ref was deleted; its last tip is known.
    WorkflowVanished {
        reference: String,
        tip: String,
    },
    /// A ref lock file is there.
    Locked {
        reference: String,
        path: std::path::PathBuf,
        age_s: u64,
    },
    /// `init` adopted the remote's workflow, and a later step of the adoption failed.
    AdoptionUnfinished {
        workflow: String,
        remote: String,
        error: String,
    },
    /// `init` could not look at the remote, and created a workflow of its own.
    AdoptionFailed {
        remote: String,
        error: String,
    },
    /// `init --main-branch` named another main branch than the workflow's.
    MainBranchKept {
        workflow: String,
        main: String,
        asked: String,
    },
    /// Fetch refspecs that make a plain `git fetch` overwrite this clone's state.
    DestructiveRefspecs {
        remote: String,
        refspecs: Vec<String>,
    },
    /// What `git push` said besides succeeding.
    PushSaid {
        said: String,
    },
    /// `sync` left something out and goes on with the rest.
    Skipped {
        what: String,
        why: String,
    },
    /// A workflow names its main branch or an unsafe name as its PR branch.
    BranchNotTouched {
        workflow: String,
        branch: String,
    },
    /// The hooks directory lies in the working tree.
    HooksInWorkingTree {
        dir: std::path::PathBuf,
    },
    /// `core.hooksPath` is relative: each linked worktree has its own hooks.
    RelativeHooksPath {
        path: String,
    },
    /// `core.hooksPath` is outside the repository: the hooks serve others too.
    SharedHooksPath {
        path: String,
    },
    /// The main branch moved outside the workflow since the tip it accounts for: commits no
    /// workflow merged, or a history that no longer leads back to it (docs/integrity.md).
    MainMovedOutside {
        main: String,
        since: String,
        /// `<short id> "<subject>"`, newest first.
        commits: Vec<String>,
        rewritten: bool,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const CONFIG: &str = super::CONFIG_FILE;
        match self {
            Notice::MainMovedOutside {
                main,
                since,
                commits,
                rewritten,
            } => {
                let since = crate::short_id(since);
                if *rewritten {
                    write!(
                        f,
                        "{main} moved outside the workflow: its history no longer leads back to {since}, the \
                         tip this workflow last accounted for (a rebase, a reset, a force-push, a deleted branch)"
                    )?;
                } else {
                    write!(
                        f,
                        "{main} moved outside the workflow since {since} (the last merge or repin): {} \
                         commit{} no workflow merged",
                        commits.len(),
                        if commits.len() == 1 { "" } else { "s" }
                    )?;
                }
                const SHOWN: usize = 5;
                if !commits.is_empty() {
                    let mut listed: Vec<&str> =
                        commits.iter().take(SHOWN).map(String::as_str).collect();
                    let more = format!("and {} more", commits.len().saturating_sub(SHOWN));
                    if commits.len() > SHOWN {
                        listed.push(&more);
                    }
                    write!(f, " ({})", listed.join(", "))?;
                }
                write!(
                    f,
                    "; no PR is merged until a human looks at them and runs `git orchestrate repin` (a \
                     merge another clone's workflow made counts once `git orchestrate sync` brings its \
                     refs)"
                )
            }
            Notice::ConfigDiffersFromMain { main, branch } => write!(
                f,
                "{CONFIG} in the working tree differs from {main}:{CONFIG}; the gates of {main} stay in \
                 force for branch {branch} (changes take effect once merged into {main})"
            ),
            Notice::ConfigNotCommitted { main } => write!(
                f,
                "{CONFIG} is not committed on {main}: the gates are read from the working tree and are \
                 not protected (an agent could edit them); commit it on {main}"
            ),
            Notice::ConfigUncommitted { main } => write!(
                f,
                "{CONFIG} has uncommitted changes: they are in force now, but not protected until \
                 committed on {main}"
            ),
            Notice::MainBranchFixed {
                origin,
                configured,
                workflow,
                fixed,
            } => write!(
                f,
                "{origin} says main_branch = \"{configured}\", but workflow {workflow} was created with {fixed} as its \
                 main branch, which stays in force (start a new workflow with --workflow to use another)"
            ),
            Notice::NoPreflightGates { origin } => write!(
                f,
                "no preflight gates are configured ([[preflight]] in {CONFIG}, read from {origin}): a PASS is \
                 verified by the agent's test command alone"
            ),
            Notice::ConfigInvalid => f.write_str(
                "the configuration is invalid: get-task, submit-work and checkpoint refuse to run \
                 until it is fixed",
            ),
            Notice::OffBranch {
                head,
                branch,
                worktree,
            } => {
                let head = head.as_deref().unwrap_or("a detached commit");
                match worktree {
                    Some(path) => write!(
                        f,
                        "HEAD is on {head}, but this PR's branch is {branch}, checked out in the worktree {}: work there",
                        path.display()
                    ),
                    None => write!(
                        f,
                        "HEAD is on {head}, but this PR's branch is {branch}: run `git checkout {branch}`"
                    ),
                }
            }
            Notice::UnverifiedCheckpoint {
                commit,
                subject,
                gates_changed,
            } => {
                let short = crate::short_id(commit);
                let why = if *gates_changed {
                    "the preflight gates changed since its tree was verified"
                } else {
                    "it holds a tree that preflight has not verified (not at the last submit-work, nor in \
                     `checkpoint` or the commit-msg hook; a note is no proof)"
                };
                write!(
                    f,
                    "commit {short} ({subject}) is marked as a checkpoint, but {why}; it was not recorded. \
                     Run `git orchestrate checkpoint`: it runs preflight on exactly what it commits."
                )
            }
            Notice::MainGatesChanged { main, pinned } => write!(
                f,
                "{main}'s gates changed since this PR began: it is verified under {main}:{CONFIG} as \
                 of {}, until a human runs `git orchestrate repin`",
                crate::short_id(pinned)
            ),
            Notice::PlanStatusesIgnored { claimed_done } => write!(
                f,
                "the plan marked {claimed_done} step{} DONE; a step is DONE only when its test \
                 ran here, so every step starts TODO",
                if *claimed_done == 1 { "" } else { "s" }
            ),
            Notice::WorkflowVanished { reference, tip } => write!(
                f,
                "the workflow existed here, but its ref was deleted (last tip {tip}): restore it with `git update-ref \
                 {reference} {tip}`, or start over with `git orchestrate init --new`"
            ),
            Notice::Locked {
                reference,
                path,
                age_s,
            } => write!(
                f,
                "{reference} is locked by {} (left {age_s}s ago): if no git or git-orchestrate process is running, a crash \
                 left it; delete it (rm {}) or every write to it fails",
                path.display(),
                shell_quote(&path.display().to_string())
            ),
            Notice::AdoptionUnfinished {
                workflow,
                remote,
                error,
            } => write!(
                f,
                "adopted workflow {workflow} from {remote}, but then: {error}; `git orchestrate sync {remote}` finishes it"
            ),
            Notice::AdoptionFailed { remote, error } => write!(
                f,
                "{error}; created a new workflow: if {remote} has one, `git orchestrate sync` will \
                 report the two as diverged"
            ),
            Notice::MainBranchKept {
                workflow,
                main,
                asked,
            } => write!(
                f,
                "workflow {workflow} already uses {main} as its main branch; --main-branch {asked} does not change that"
            ),
            Notice::DestructiveRefspecs { remote, refspecs } => write!(
                f,
                "remote.{remote}.fetch has {}: a plain `git fetch {remote}` overwrites this clone's state with the remote's; `git orchestrate doctor` prints the command that removes it",
                refspecs.join(", ")
            ),
            Notice::PushSaid { said } => write!(f, "git push said: {said}"),
            Notice::Skipped { what, why } if why.is_empty() => write!(f, "skipped {what}"),
            Notice::Skipped { what, why } => write!(f, "skipped {what}: {why}"),
            Notice::BranchNotTouched { workflow, branch } => write!(
                f,
                "workflow {workflow} names \"{branch}\" as its PR branch, which sync does not touch"
            ),
            Notice::HooksInWorkingTree { dir } => write!(
                f,
                "the hooks directory {} is in the working tree: commit the hook files (or list them in \
                 .gitignore), or they count as untracked files, and untracked files refuse every checkpoint commit",
                dir.display()
            ),
            Notice::RelativeHooksPath { path } => write!(
                f,
                "core.hooksPath = {path} is relative, so each linked worktree has its own hooks directory: run \
                 `git orchestrate hooks install` in each"
            ),
            Notice::SharedHooksPath { path } => write!(
                f,
                "core.hooksPath = {path} is outside this repository: these hooks serve every repository that \
                 uses it"
            ),
        }
    }
}

/// Something `get-task` did for the agent, shown as "Done for you: …".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DoneAction {
    DroppedStalePlan {
        title: Option<String>,
    },
    AdoptedPlan {
        title: String,
    },
    /// The branch is checked out ([`BranchOutcome::Blocked`] is never done).
    Branch(BranchOutcome),
    RecordedCheckpoint {
        commit: String,
        subject: String,
    },
    ReviewRan {
        round: u32,
        findings: usize,
        blocking: usize,
    },
    /// No review command is configured.
    NothingToReview,
    ReviewFailed {
        round: u32,
    },
    Merged {
        branch: String,
        main: String,
    },
}

impl std::fmt::Display for DoneAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DoneAction::DroppedStalePlan { title: Some(title) } => {
                write!(
                    f,
                    "dropped the stale plan \"{title}\": every step of it was DONE."
                )
            }
            DoneAction::DroppedStalePlan { title: None } => f.write_str("dropped an empty plan."),
            DoneAction::AdoptedPlan { title } => write!(f, "took up the stored plan \"{title}\"."),
            DoneAction::Branch(BranchOutcome::CheckedOut { branch }) => {
                write!(f, "branch {branch} is checked out.")
            }
            DoneAction::Branch(BranchOutcome::Resumed { branch }) => write!(
                f,
                "checked out branch {branch}, created by an earlier interrupted get-task."
            ),
            DoneAction::Branch(BranchOutcome::Created {
                branch,
                main,
                pulled_from,
            }) => {
                let pulled = pulled_from
                    .as_ref()
                    .map(|remote| format!(", updated it from {remote}"))
                    .unwrap_or_default();
                write!(
                    f,
                    "checked out {main}{pulled}, and created branch {branch} from it."
                )
            }
            DoneAction::Branch(BranchOutcome::Blocked { reason }) => {
                write!(f, "could not check out the PR branch: {reason}")
            }
            DoneAction::RecordedCheckpoint { commit, subject } => {
                let short = crate::short_id(commit);
                write!(f, "recorded checkpoint {short} ({subject}).")
            }
            DoneAction::ReviewRan {
                round,
                findings,
                blocking,
            } => write!(
                f,
                "ran code review round {round}: {findings} finding{}, {blocking} blocking.",
                if *findings == 1 { "" } else { "s" }
            ),
            DoneAction::NothingToReview => f.write_str(
                "no review command is configured, so nothing was reviewed automatically.",
            ),
            DoneAction::ReviewFailed { round } => {
                write!(f, "tried to run code review round {round}.")
            }
            DoneAction::Merged { branch, main } => {
                write!(f, "merged {branch} into {main} and deleted the branch.")
            }
        }
    }
}

impl From<&StepSummary> for StepView {
    fn from(s: &StepSummary) -> StepView {
        StepView {
            id: s.id.to_string(),
            task: s.task.clone(),
            kind: s.kind,
            description: s.description.clone(),
        }
    }
}

/// Where a re-plan is edited: inside the git directory, so no `git add --all` stages it.
const PLAN_FILE: &str = "\"$(git rev-parse --git-dir)/plan.json\"";

const RULES: &str =
    "Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.";

pub fn brief(ctx: &Context) -> Briefing {
    let mut out = String::new();
    header(&mut out, ctx);
    let current = ctx.plan.and_then(|p| p.current.as_ref());
    let step = current.map(StepView::from);
    if let Some(guidance) = ctx.guidance {
        let _ = write!(
            out,
            "GUIDANCE FROM A HUMAN (shown once; follow it):\n{}\n\n",
            indent(guidance)
        );
    }
    match (ctx.state.status(), ctx.plan, current) {
        (Status::Halted, _, _) => {
            halted(&mut out, ctx);
            return Briefing {
                text: out,
                step,
                attempt: ctx.state.attempts(),
            };
        }
        (Status::Replanning, _, _) => replanning(&mut out, ctx),
        (Status::Initializing, _, _) if ctx.idle => {
            nothing_left(&mut out, ctx);
            return Briefing {
                text: out,
                step,
                attempt: 0,
            };
        }
        (Status::Initializing, _, _) => initializing(&mut out, ctx),
        (Status::CreatingBranch, _, _) => creating_branch(&mut out, ctx),
        (Status::ExecutingTdd | Status::Debugging, Some(plan), current) => {
            match (&ctx.state.pending(), current) {
                (Some(pending @ Pending::Checkpoint { .. }), _) => checkpoint(&mut out, pending),
                (Some(Pending::Analysis { .. }), Some(step)) => analysis(&mut out, ctx, plan, step),
                (None, Some(step)) if ctx.state.status() == Status::Debugging => {
                    debugging(&mut out, ctx, plan, step)
                }
                (None, Some(step)) => tdd_step(&mut out, ctx, plan, step),
                (_, None) => all_steps_done(&mut out),
                // Approval and escalation only wait in CODE_REVIEW.
                (Some(Pending::Approval { .. } | Pending::Escalation { .. }), Some(step)) => {
                    tdd_step(&mut out, ctx, plan, step)
                }
            }
        }
        (Status::CodeReview, _, _) => code_review(&mut out, ctx),
        (Status::AwaitingFinalization, Some(plan), _) => awaiting_finalization(&mut out, ctx, plan),
        (Status::FinalizeComplete, Some(plan), _) => finalize_complete(&mut out, ctx, plan),
        (Status::PlanUpdated | Status::MergingBranch, _, _) => merging(&mut out, ctx),
        (status, None, _) => {
            let _ = writeln!(
                out,
                "State {status} needs an active PR plan, and there is none. A human has to look at \
                 `git orchestrate status` and `git orchestrate log`."
            );
        }
    }
    footer(&mut out, ctx);
    Briefing {
        text: out,
        step,
        attempt: ctx.state.attempts(),
    }
}

fn header(out: &mut String, ctx: &Context) {
    let _ = writeln!(
        out,
        "git-orchestrate · workflow {} · {}",
        ctx.workflow,
        ctx.state.status()
    );
    if let Some(plan) = ctx.plan {
        let (done, total) = (plan.done, plan.total);
        let branch = match (&ctx.state.branch(), ctx.state.status()) {
            (Some(b), Status::CreatingBranch) => format!(" · branch {b} (not created yet)"),
            (Some(b), _) => format!(" · branch {b}"),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "PR: {}{branch} · {done} of {total} steps done",
            plan.title
        );
    }
    out.push('\n');
    for line in ctx.done {
        let _ = writeln!(out, "Done for you: {line}");
    }
    if !ctx.done.is_empty() {
        out.push('\n');
    }
}

fn footer(out: &mut String, ctx: &Context) {
    out.push('\n');
    out.push_str(RULES);
    out.push('\n');
    if !ctx.warnings.is_empty() {
        out.push('\n');
        for w in ctx.warnings {
            let _ = writeln!(out, "WARNING: {w}");
        }
    }
}

fn initializing(out: &mut String, ctx: &Context) {
    let _ = write!(
        out,
        "GOAL: plan the next pull request.

1. Read the master plan: {master}
2. Pick the first PR in it that is not marked [DONE].
3. Write that PR's plan as JSON in the schema below, with \"masterPlanPath\": \"{master}\".
   Break the work into small tasks, each proven by its own steps: RED (a test that fails
   because the behaviour is missing), GREEN (the least code that makes it pass), REFACTOR
   (clean up, tests still passing). Every status starts as \"TODO\".
4. Submit the plan on stdin, or from a file outside the repository (a file inside it would
   be committed with the next checkpoint); the orchestrator keeps the plan in git:

     git orchestrate submit-work --summary \"<one line>\" --plan - <<'EOF'
     {{ ...the plan... }}
     EOF
5. Then run `git orchestrate get-task`: it creates the PR branch and gives you the first step.

If every PR in the master plan is marked [DONE], there is nothing to plan. Say so, and stop:

     git orchestrate submit-work --summary \"<one line>\" --no-pr-left

From then on `git orchestrate get-task` answers \"nothing left to do\" (exit 0) until a commit
on {main} changes {master}.

PLAN SCHEMA (every field is required unless marked optional):
{PLAN_SCHEMA}
",
        master = ctx.master_plan,
        main = ctx.main_branch
    );
}

/// The stop condition of an unattended agent: nothing of the master plan is left.
fn nothing_left(out: &mut String, ctx: &Context) {
    let _ = writeln!(
        out,
        "NOTHING LEFT TO DO: every PR of the master plan ({master}) is done, as recorded by
`submit-work --no-pr-left`. Stop here; do not start work that is not in the master plan.
This holds until a commit on {main} changes {master}; then `git orchestrate get-task` briefs
the next PR.",
        master = ctx.master_plan,
        main = ctx.main_branch
    );
}

fn creating_branch(out: &mut String, ctx: &Context) {
    let branch = ctx.state.branch().unwrap_or("(unnamed)");
    match &ctx.state.last_error() {
        Some(reason) => {
            let _ = write!(
                out,
                "The PR branch {branch} could not be created:
{}

Resolve that (for example commit or stash the changes), then run `git orchestrate get-task`
again; it retries.
",
                indent(reason)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "The PR branch {branch} is created by the next `git orchestrate get-task`; run it."
            );
        }
    }
}

fn step_line(out: &mut String, plan: &PlanSummary, step: &StepSummary) {
    let _ = writeln!(
        out,
        "STEP {} ({}) of task {}/{} \"{}\":\n{}",
        step.id,
        step.kind,
        step.id.task + 1,
        plan.tasks,
        step.task,
        indent(&step.description)
    );
}

/// What happens after a passing PASS submit, as one sentence.
fn gates_sentence(gates: &[String]) -> String {
    if gates.is_empty() {
        "No preflight gates are configured, so your test command is the only check.".to_string()
    } else {
        format!(
            "When it passes, the orchestrator runs the preflight gates ({}).",
            gates.join(", ")
        )
    }
}

fn submit_command(expectation: Expectation, command: Option<&str>, summary: &str) -> String {
    let command = command.map_or_else(
        || "\"<command that runs the test>\"".to_string(),
        shell_quote,
    );
    format!(
        "git orchestrate submit-work --summary \"{summary}\" --test-command {command} --expectation {expectation}"
    )
}

fn tdd_step(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    step_line(out, plan, step);
    out.push('\n');
    let what = match step.kind {
        StepType::Red => {
            "Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

The files this step changes are pinned as the test: every later run of it (at the GREEN
step, and at the end on the PR's base and on the squashed commit) has them exactly as they
are now. So change only the test here, inside the repository, and make it a test that runs: a
command that runs no test (exit 126 or 127, a runner that reports no tests) is not a RED."
                .to_string()
        }
        StepType::Green if step.after_red => format!(
            "Write the least code that makes the failing test from the RED step pass. Submit the
test command with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
        StepType::Green => format!(
            "Make the change this step describes, keeping every test passing. Submit the test
command that proves it with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
        StepType::Refactor => format!(
            "Improve the code of this task without changing its behaviour; its tests must still
pass. Submit the test command with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
    };
    let _ = write!(
        out,
        "{what}

  {}

Then run `git orchestrate get-task` for your next instruction.
",
        // At a GREEN step after its RED step, the test is the RED step's command: filled in.
        submit_command(
            Expectation::for_step(step.kind),
            ctx.state
                .red_test_due(step.id, step.kind)
                .map(|red| red.command.as_str()),
            "<what you did>"
        )
    );
}

fn output_block(out: &mut String, ctx: &Context, tail: &str) {
    let _ = write!(
        out,
        "Output (the end of it; all of it, byte for byte: {}):\n{}",
        ctx.output_log_command,
        super::fence::fenced(tail)
    );
}

fn analysis(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let Some(Pending::Analysis {
        command,
        exit,
        output_tail,
        red_tree,
        red_paths,
        red_shared,
        syntax_error,
        ..
    }) = &ctx.state.pending()
    else {
        return;
    };
    step_line(out, plan, step);
    let _ = write!(
        out,
        "
Your RED test failed as a RED test should ({exit}). Before the step counts, judge WHY it
failed.

$ {command}
"
    );
    output_block(out, ctx, output_tail);
    if let Some(line) = syntax_error {
        let _ = write!(
            out,
            "
NOTE: the output shows that the test itself could not be read:
  {line}
A test that cannot be read says nothing about the behaviour: that is the wrong reason. Answer
--analysis-decision FAILURE, fix the test, and submit the RED step again.
"
        );
    }
    if red_tree.is_some() {
        const SHOWN: usize = 20;
        let listed = |paths: &[String]| {
            let mut listed: Vec<String> = paths.iter().take(SHOWN).cloned().collect();
            if paths.len() > SHOWN {
                listed.push(format!("and {} more", paths.len() - SHOWN));
            }
            indent(&listed.join("\n"))
        };
        if red_paths.is_empty() && red_shared.is_empty() {
            out.push_str(
                "
This RED step changed no file since the task began: nothing is pinned as its test, and the
reviewer is told so. If its test was meant to be new, write it and submit the RED step again.
",
            );
        }
        if !red_paths.is_empty() {
            let _ = write!(
                out,
                "
If you answer SUCCESS, what this RED step changed since the task began is pinned as its test:
{}
The GREEN step and the final check run the test with these files exactly as they are now. If
one of them is not part of the test (a stub of the code, say), answer FAILURE and submit the
RED step again without it.
",
                listed(red_paths)
            );
        }
        if !red_shared.is_empty() {
            let _ = write!(
                out,
                "
These files existed before the task and are no test files by `[gates] test_paths`, so they
are not pinned:
{}
The final check runs the test on the PR's base with them as they are now, where it must fail;
the later steps go on to change them. A test that can live in a test file belongs there.
",
                listed(red_shared)
            );
        }
    }
    out.push_str(
        "
It failed for the intended reason when the output shows that the behaviour under test is
missing: a failed assertion about it, or \"not found\"/\"not defined\" for the very thing you
are about to build. It failed for the wrong reason when something unrelated broke: a typo, a
wrong path, a missing import, a crash while setting up.

Answer with exactly one of:

  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision SUCCESS
      (it failed for the intended reason: the step is done)
  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision FAILURE
      (it failed for the wrong reason: you will debug it)
",
    );
}

fn checkpoint(out: &mut String, pending: &Pending) {
    let Pending::Checkpoint {
        step: id,
        step_type: kind,
        description,
        ..
    } = pending
    else {
        return;
    };
    let _ = write!(
        out,
        "STEP {id} ({kind}) passed verification: \"{description}\".

Make a safety checkpoint commit before the next step:

  git orchestrate checkpoint

It stages all changes, commits them as \"checkpoint: {id} …\" and records the commit.
(A commit of your own whose message starts with \"checkpoint:\" counts too, if it holds
exactly what was verified.) Then run `git orchestrate get-task` for the next step.
"
    );
}

fn what_failed(run: &LastRun) -> String {
    let failing_gate = run
        .preflight
        .as_ref()
        .and_then(|p| p.gates.iter().find(|g| !g.exit.success()));
    match (
        run.expectation,
        run.exit.success(),
        failing_gate,
        run.verdict,
    ) {
        (Expectation::Pass, true, Some(gate), _) => format!(
            "your test command `{}` passed, but the preflight gate `{}` failed ({}).",
            run.command, gate.name, gate.exit
        ),
        (Expectation::Pass, _, _, _) => {
            format!("your test command `{}` failed ({}).", run.command, run.exit)
        }
        (Expectation::Fail, true, _, _) => format!(
            "your RED test `{}` passed ({}), but a RED test must fail: it does not yet show that the \
             behaviour is missing.",
            run.command, run.exit
        ),
        (Expectation::Fail, false, _, Verdict::Failure) => format!(
            "you judged that your RED test `{}` failed for the wrong reason ({}).",
            run.command, run.exit
        ),
        (Expectation::Fail, false, _, _) => {
            format!("your RED test `{}` ended with {}.", run.command, run.exit)
        }
    }
}

fn debugging(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let state = ctx.state;
    let attempt = state.attempts();
    out.push_str("Your previous submission failed. Your new primary goal is to fix the bug.\n\n");
    step_line(out, plan, step);
    if attempt == 0 {
        out.push_str(
            "\nDebugging resumes after a human's guidance; the attempt count starts again.\n",
        );
    } else {
        let _ = writeln!(out, "\nDebugging attempt {attempt} on this step.");
    }
    if let Some(run) = &state.last_run() {
        let _ = writeln!(out, "What failed: {}", what_failed(run));
    }
    out.push('\n');
    output_block(out, ctx, state.last_error().unwrap_or(""));
    if state.identical_failures() > 0 {
        let _ = write!(
            out,
            "\nYour last {} attempts failed identically: the same output came back, so your changes did not
reach the cause. Try a different approach.\n",
            if state.identical_failures() == 1 { "two".to_string() } else { (state.identical_failures() + 1).to_string() }
        );
    }
    let command = state
        .last_run()
        .as_ref()
        .filter(|r| r.step == step.id)
        .map(|r| r.command.as_str());
    let submit = submit_command(
        Expectation::for_step(step.kind),
        command,
        "<hypothesis and fix>",
    );
    let _ = match ctx.thresholds.tier(attempt) {
        Tier::Hypothesize => write!(
            out,
            "
Guidance: read the output above, form one hypothesis about the cause, make one focused fix,
and submit again:

  {submit}
"
        ),
        Tier::Instrument => write!(
            out,
            "
Guidance: your fixes have not worked, so stop guessing. Add temporary logging, prints or
assertions around the code that fails, submit to run them, and read what the new output shows
before you change any behaviour. Remove the instrumentation once you have found the cause.

  {submit}
"
        ),
        Tier::ReduceScope => write!(
            out,
            "
Guidance: {attempt} attempts have failed. Conclude that this task is too large or too vague to
finish as planned, and request a scope reduction. It reverts the working tree to the last
commit (untracked files stay) and asks you to break the task into smaller ones:

  git orchestrate request-scope-reduction

(If you are certain that one last fix will do it, you may still submit it:
  {submit})
"
        ),
        Tier::Escalate => write!(
            out,
            "
You have made numerous attempts and have been unable to solve the problem. Your new primary goal
is to escalate for external help. You MUST generate a comprehensive markdown report detailing
the problem, what you've tried, and any relevant error messages. Then, you MUST run

  git orchestrate escalate --report <file>      (or --report - with the report on stdin)

with the full markdown report. The workflow then stops and waits for a human.
"
        ),
    };
}

fn replanning(out: &mut String, ctx: &Context) {
    let Some(context) = &ctx.state.replan_context() else {
        return;
    };
    let task = context.step.task + 1;
    let _ = write!(
        out,
        "Your previous attempt failed and all changes have been reverted. Your new assignment is to
create a more granular plan.

1. Analyze the original goal: task {task}, '{original}', and the final error:
{error}2. Break down the original task into the smallest possible verifiable Implementation Tasks,
   each with its own full Red-Green-Refactor cycle.
3. The very last task in your new plan must be a 'Verification Task' (its taskName contains
   \"Verification\"). This task's purpose is to prove that the preceding sub-tasks collectively
   achieve the original goal. Its RED step should be a recreation of the original task's RED
   step.
4. Update the plan to replace the original task with your new plan. The first new task must
   include a breakdownHistory object documenting the original goal and your justification:
     \"breakdownHistory\": {{ \"originalTaskName\": \"{original}\", \"justification\": \"<why>\" }}

Start from the stored plan, change only task {task}, and submit the whole plan. Keep the file
inside the git directory, where no commit picks it up:

  {plan_show} > {PLAN_FILE}
  git orchestrate submit-work --summary \"<one line>\" --plan {PLAN_FILE}

Keep every task before task {task} and every task after it exactly as it is; the new tasks, and all
their steps, start as \"TODO\". Every rule that is broken is listed if the plan is refused.
",
        original = context.original_task,
        error = super::fence::fenced(&context.error),
        plan_show = ctx.plan_show_command,
    );
    if !context.untracked.is_empty() {
        out.push_str("\nThe revert left these untracked files in place (delete them if they belong to the failed attempt):\n");
        for file in &context.untracked {
            let _ = writeln!(out, "  {file}");
        }
    }
}

fn halted(out: &mut String, ctx: &Context) {
    let Some(halt) = &ctx.state.halt() else {
        out.push_str(
            "The workflow is HALTED for a human; `git orchestrate status` shows what is known.\n",
        );
        return;
    };
    let stop = if halt.message.ends_with('.') { "" } else { "." };
    let _ = writeln!(
        out,
        "The workflow is HALTED and waits for a human: {}{stop}",
        halt.message
    );
    out.push_str(
        "\nFor the agent: stop here. There is nothing to do until a human resumes the workflow.\n",
    );
    match halt.reason {
        HaltReason::Escalated => report_to_answer(out, ctx, &halt.resume_to, "agent's report", ""),
        HaltReason::Stuck => report_to_answer(
            out,
            ctx,
            &halt.resume_to,
            "run's report",
            " (the briefings the agent was given, what it said,\nthe last failing output)",
        ),
        HaltReason::MergeConflict => {
            let _ = write!(
                out,
                "
For the human: resolve the conflict, merge the branch into the main branch yourself, then run

  git orchestrate resume

which checks that the branch is merged, cleans up and moves on to the next PR.
"
            );
        }
    }
    for w in ctx.warnings {
        let _ = writeln!(out, "\nWARNING: {w}");
    }
}

/// A halt a human answers with guidance, and the report it rests on (`escalation.md`).
fn report_to_answer(out: &mut String, ctx: &Context, resume_to: &Status, what: &str, about: &str) {
    let _ = write!(
        out,
        "
For the human: read the {what} below{about}, then answer it:

  git orchestrate resume --guidance \"<what to try, or what you changed>\"

The workflow then returns to {resume_to} and shows your guidance to the agent once.
"
    );
    if let Some((command, report)) = ctx.escalation {
        let _ = write!(
            out,
            "\nThe {what} ({command}):\n{}",
            super::fence::fenced(report)
        );
    }
}

/// The review's findings a human weighs at the approval, as a paragraph; nothing when there
/// are none.
fn noted_findings(findings: &[super::review::Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let list: Vec<String> = findings.iter().map(|f| format!("  - {f}")).collect();
    format!(
        "What the review noted (none of it blocks; the human weighs it):\n\n{}\n\n",
        list.join("\n")
    )
}

fn code_review(out: &mut String, ctx: &Context) {
    let state = ctx.state;
    match &state.pending() {
        Some(Pending::Approval { round }) => {
            let reviewed = match &state.last_review() {
                Some(r) if r.ran => format!(
                    "The automated review (round {round}) found no blocking issues ({} noted; {}).",
                    r.findings, ctx.review_show_command
                ),
                _ => "No automated review is configured.".to_string(),
            };
            let _ = write!(
                out,
                "{reviewed} The PR now waits for a human's approval.

For the agent: stop here. There is nothing to do until a human answers.

{noted}For the human: look at the branch ({branch}), then answer:

  git orchestrate approve
  git orchestrate reject --comment \"<what must change>\"

A rejection becomes a blocking finding: a new task for the agent, then another review.
",
                branch = state.branch().unwrap_or("?"),
                noted = noted_findings(ctx.noted_findings),
            );
        }
        Some(Pending::Escalation { reason }) => {
            let _ = write!(
                out,
                "The code review keeps finding blocking issues: {reason}.

You have made numerous attempts and have been unable to solve the problem. Your new primary goal
is to escalate for external help. You MUST generate a comprehensive markdown report detailing
the problem, what you've tried, and any relevant error messages (the last review's findings:
{review}). Then, you MUST run

  git orchestrate escalate --report <file>      (or --report - with the report on stdin)

with the full markdown report. The workflow then stops and waits for a human.
",
                review = ctx.review_show_command
            );
        }
        _ => match state.last_error() {
            Some(error) => {
                let _ = write!(
                    out,
                    "The automated code review could not run, so the PR is NOT approved:
{}

Run `git orchestrate get-task` again to retry the review. If it fails the same way, stop and
tell a human: the review command (review.command in {main}:.orchestrate.toml) needs fixing.
",
                    indent(error),
                    main = ctx.main_branch
                );
            }
            None => {
                out.push_str("The code review runs with the next `git orchestrate get-task`.\n")
            }
        },
    }
}

fn awaiting_finalization(out: &mut String, ctx: &Context, plan: &PlanSummary) {
    let reviewed = match &ctx.state.last_review() {
        Some(r) if r.ran => format!(
            "the code review passed (round {}: {} finding{} noted, none blocking; {})",
            r.round,
            r.findings,
            if r.findings == 1 { "" } else { "s" },
            ctx.review_show_command
        ),
        _ => "no automated review is configured".to_string(),
    };
    let _ = write!(
        out,
        "Every step is DONE and {reviewed}.

Finalize the PR: squash all commits of this branch into one commit titled with the PR title.
The squash must hold exactly the tree that last passed verification, so add nothing by hand
now. If something is still missing, add it and run `git orchestrate checkpoint` first: it
verifies the addition and commits it. Then run exactly:

  git reset --soft $(git merge-base {main} HEAD) && git commit -m {title}

Then confirm. The orchestrator checks that the branch is exactly one commit over {main}, that
its message is the PR title, and that its tree is the one that last passed verification (a
squash may not bring in anything unverified):

  git orchestrate submit-work --summary \"squashed\"

Or let the orchestrator make the squash and check it in one go (a squash it refuses is undone):

  git orchestrate submit-work --summary \"squashed\" --squash
",
        main = ctx.main_branch,
        title = shell_quote(&plan.title)
    );
}

fn finalize_complete(out: &mut String, ctx: &Context, plan: &PlanSummary) {
    // The configured path: the plan named it when it was submitted, and the check uses it.
    let commit = ctx.state.final_commit().unwrap_or("?");
    let _ = write!(
        out,
        "The PR is squashed into commit {commit}.

Update the master plan, {path}: mark the PR \"{title}\" as [DONE]
and write the squashed commit's hash next to it:

  {commit}

Change nothing else, and commit only that file, as a second commit on the branch:

  git add {path_arg} && git commit -m {message}

Then confirm. The orchestrator checks that the commit changes only the master plan and that the
file mentions the hash:

  git orchestrate submit-work --summary \"master plan updated\"

Or let the orchestrator mark the PR's heading, commit it and check it in one go:

  git orchestrate submit-work --summary \"master plan updated\" --mark-done
",
        path = ctx.master_plan,
        path_arg = shell_quote(ctx.master_plan),
        title = plan.title,
        message = shell_quote(&format!(
            "docs: mark \"{}\" done in the master plan",
            plan.title
        )),
    );
}

fn merging(out: &mut String, ctx: &Context) {
    let branch = ctx.state.branch().unwrap_or("?");
    match &ctx.state.last_error() {
        Some(reason) => {
            let _ = write!(
                out,
                "The merge of {branch} into {main} could not start:
{}

Resolve what it names (local changes: commit or stash them; main moved outside the workflow:
that is a human's to look at and `git orchestrate repin`), then run `git orchestrate get-task`
again; it retries the merge.
",
                indent(reason),
                main = ctx.main_branch
            );
        }
        None => {
            let _ = writeln!(
                out,
                "The next `git orchestrate get-task` merges {branch} into {}.",
                ctx.main_branch
            );
        }
    }
}

fn all_steps_done(out: &mut String) {
    out.push_str(
        "Every step of this PR's plan is DONE. Run `git orchestrate get-task` again to move the PR
on to its next phase.
",
    );
}

fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out.trim_end_matches('\n').to_string()
}

/// Quotes `s` for a POSIX shell when it needs quoting, so suggested commands can be pasted.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// What the agent does after a `submit-work` that left the workflow in `state`.
pub fn next_action(state: &State, verdict: Verdict) -> &'static str {
    match (state.pending(), state.status(), verdict) {
        (Some(Pending::Checkpoint { .. }), _, _) => {
            "make the checkpoint commit with `git orchestrate checkpoint`, then run `git orchestrate get-task`"
        }
        (Some(Pending::Analysis { .. }), _, _) => {
            "judge why the RED test failed, then answer with \
             `git orchestrate submit-work --summary \"<why>\" --analysis-decision SUCCESS` (intended reason) \
             or `--analysis-decision FAILURE` (`git orchestrate get-task` explains)"
        }
        (_, Status::CreatingBranch, _) => {
            "run `git orchestrate get-task`; it creates the PR branch and gives you the first step"
        }
        (_, Status::Debugging, _) => {
            "run `git orchestrate get-task` for the failing output and debugging guidance"
        }
        (_, Status::AwaitingFinalization | Status::FinalizeComplete, Verdict::Failure) => {
            "fix what the FAILURE line says and submit again (`git orchestrate get-task` repeats the instructions); \
             if it cannot be fixed, hand it to a human with `git orchestrate escalate --report FILE`"
        }
        (_, Status::Initializing, _) if state.idle.is_some() => {
            "stop: nothing is left to do until the master plan changes on the main branch"
        }
        _ => "run `git orchestrate get-task` for your next instruction",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::plan::{Step, StepId, parse_plan};
    use crate::workflow::state::{ExitRecord, GateRecord, PreflightRecord};
    use pretty_assertions::assert_eq;

    const PLAN: &str = r#"{
        "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
        "verificationPlan": "v",
        "tasks": [
          {"taskName": "add", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test that add(2, 3) is 5", "status": "TODO"},
            {"type": "GREEN", "description": "implement add", "status": "TODO"}]}
        ]}"#;

    fn ctx<'a>(
        state: &'a State,
        plan: Option<&'a PlanSummary>,
        gates: &'a [String],
    ) -> Context<'a> {
        Context {
            workflow: "main",
            state,
            plan,
            master_plan: "docs/plan.md",
            output_log_command: "git show refs/orchestrator/workflows/main:output.log",
            gates,
            done: &[],
            warnings: &[],
            thresholds: Thresholds::default(),
            guidance: None,
            escalation: None,
            plan_show_command: "git show refs/orchestrator/workflows/main:pr.json",
            review_show_command: "git show refs/orchestrator/workflows/main:review.json",
            noted_findings: &[],
            main_branch: "main",
            idle: false,
        }
    }

    fn tdd_state() -> State {
        let mut s = State::new(Some("main".into()));
        s = s.edit(|w| {
            w.status = Status::ExecutingTdd;
            w.current_pr_branch = Some("feat/add-numbers".into());
        });
        s
    }

    #[test]
    fn red_step_briefing() {
        let plan = parse_plan(PLAN.as_bytes()).unwrap();
        let state = tdd_state();
        let summary = plan.summary();
        let b = brief(&ctx(&state, Some(&summary), &[]));
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 0 of 2 steps done

STEP 1.1 (RED) of task 1/1 "add":
  test that add(2, 3) is 5

Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

The files this step changes are pinned as the test: every later run of it (at the GREEN
step, and at the end on the PR's base and on the squashed commit) has them exactly as they
are now. So change only the test here, inside the repository, and make it a test that runs: a
command that runs no test (exit 126 or 127, a runner that reports no tests) is not a RED.

  git orchestrate submit-work --summary "<what you did>" --test-command "<command that runs the test>" --expectation FAIL

Then run `git orchestrate get-task` for your next instruction.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
        );
        assert_eq!(
            b.step,
            Some(StepView {
                id: "1.1".into(),
                task: "add".into(),
                kind: StepType::Red,
                description: "test that add(2, 3) is 5".into()
            })
        );
    }

    #[test]
    fn debugging_briefing_after_a_failing_gate() {
        let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
        plan.complete_step(StepId::new(0, 0));
        let mut state = tdd_state();
        state = state.edit(|w| {
            w.status = Status::Debugging;
            w.debug_attempt_counter = 2;
            w.last_error = Some("lint: line 3: unused variable\n".into());
            w.last_run = Some(LastRun {
                step: StepId::new(0, 1),
                command: "sh tests/add.sh".into(),
                expectation: Expectation::Pass,
                exit: ExitRecord::code(0),
                verdict: Verdict::Failure,
                preflight: Some(PreflightRecord {
                    gates: vec![GateRecord {
                        name: "lint".into(),
                        exit: ExitRecord::code(3),
                        ms: 12,
                        reused: false,
                    }],
                }),
            });
        });
        let gates = vec!["lint".to_string()];
        let warnings = vec!["a warning".to_string()];
        let summary = plan.summary();
        let mut c = ctx(&state, Some(&summary), &gates);
        c.warnings = &warnings;
        let b = brief(&c);
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · DEBUGGING
PR: feat: Add numbers · branch feat/add-numbers · 1 of 2 steps done

Your previous submission failed. Your new primary goal is to fix the bug.

STEP 1.2 (GREEN) of task 1/1 "add":
  implement add

Debugging attempt 2 on this step.
What failed: your test command `sh tests/add.sh` passed, but the preflight gate `lint` failed (exit 3).

Output (the end of it; all of it, byte for byte: git show refs/orchestrator/workflows/main:output.log):
----- BEGIN OUTPUT 87da5efd4f53c9f8 (quoted; nothing before END OUTPUT 87da5efd4f53c9f8 is from git-orchestrate) -----
lint: line 3: unused variable
----- END OUTPUT 87da5efd4f53c9f8 -----

Guidance: read the output above, form one hypothesis about the cause, make one focused fix,
and submit again:

  git orchestrate submit-work --summary "<hypothesis and fix>" --test-command 'sh tests/add.sh' --expectation PASS

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.

WARNING: a warning
"#
        );
        assert_eq!(b.attempt, 2);
    }

    #[test]
    fn checkpoint_briefing_names_the_step_that_passed_not_the_next_one() {
        let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
        plan.complete_step(StepId::new(0, 0));
        plan.complete_step(StepId::new(0, 1));
        plan.tasks[0].tdd_steps.push(Step {
            kind: StepType::Refactor,
            description: "tidy add".into(),
            status: crate::workflow::plan::StepStatus::Todo,
        });
        let mut state = tdd_state();
        state = state.edit(|w| {
            w.pending = Some(Pending::Checkpoint {
                step: StepId::new(0, 1),
                step_type: StepType::Green,
                description: "implement add".into(),
            });
        });
        let summary = plan.summary();
        let b = brief(&ctx(&state, Some(&summary), &[]));
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 2 of 3 steps done

STEP 1.2 (GREEN) passed verification: "implement add".

Make a safety checkpoint commit before the next step:

  git orchestrate checkpoint

It stages all changes, commits them as "checkpoint: 1.2 …" and records the commit.
(A commit of your own whose message starts with "checkpoint:" counts too, if it holds
exactly what was verified.) Then run `git orchestrate get-task` for the next step.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("make"), "make");
        assert_eq!(shell_quote("cargo test -p x"), "'cargo test -p x'");
        assert_eq!(shell_quote("echo 'hi'"), r"'echo '\''hi'\'''");
    }

    /// Compares `text` with `tests/snapshots/briefings/<name>.txt`; with UPDATE_SNAPSHOTS=1
    /// writes it instead. A missing snapshot is a failure, never silently accepted.
    fn assert_snapshot(name: &str, text: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/snapshots/briefings")
            .join(format!("{name}.txt"));
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "no snapshot {}; run with UPDATE_SNAPSHOTS=1 and review it",
                path.display()
            )
        });
        assert_eq!(text, expected, "briefing {name} differs from its snapshot");
    }

    const TWO_TASKS: &str = r#"{
        "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
        "verificationPlan": "v",
        "tasks": [
          {"taskName": "add", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test that add(2, 3) is 5", "status": "TODO"},
            {"type": "GREEN", "description": "implement add", "status": "TODO"},
            {"type": "REFACTOR", "description": "tidy add", "status": "TODO"}]},
          {"taskName": "sub", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test that sub(5, 3) is 2", "status": "TODO"}]}
        ]}"#;

    /// The two-task plan with its first `done` steps DONE, in plan order. Deserialized, not
    /// validated: its second task stops at a RED step, which a submitted plan may no longer
    /// do, but these briefings only need a second task, and the snapshots keep their counts.
    fn plan_at(done: usize) -> crate::workflow::plan::Plan {
        let mut plan: crate::workflow::plan::Plan = serde_json::from_str(TWO_TASKS).unwrap();
        for _ in 0..done {
            if let Some(id) = plan.current_step() {
                plan.complete_step(id);
            }
        }
        plan
    }

    /// What a snapshot varies besides the state and the plan.
    #[derive(Default)]
    struct Extras<'a> {
        done: &'a [DoneAction],
        warnings: &'a [String],
        no_gates: bool,
        thresholds: Option<Thresholds>,
        guidance: Option<&'a str>,
        escalation: Option<(&'a str, &'a str)>,
    }

    fn render(state: &State, done: usize, extras: Extras) -> String {
        let summary = plan_at(done).summary();
        let gates = if extras.no_gates {
            vec![]
        } else {
            vec!["tests".to_string()]
        };
        let mut c = ctx(state, Some(&summary), &gates);
        c.done = extras.done;
        c.warnings = extras.warnings;
        c.thresholds = extras.thresholds.unwrap_or_default();
        c.guidance = extras.guidance;
        c.escalation = extras.escalation;
        brief(&c).text
    }

    fn failed_green(attempt: u32) -> State {
        let mut state = tdd_state();
        state = state.edit(|w| {
            w.status = Status::Debugging;
            w.debug_attempt_counter = attempt;
            w.last_error = Some("test add ... FAILED\nexpected 5, got -1\n".into());
            w.last_run = Some(LastRun {
                step: StepId::new(0, 1),
                command: "cargo test add".into(),
                expectation: Expectation::Pass,
                exit: ExitRecord::code(101),
                verdict: Verdict::Failure,
                preflight: None,
            });
        });
        state
    }

    #[test]
    fn every_briefing_matches_its_snapshot() {
        let mut init = State::new(Some("main".into()));
        let initializing = {
            let c = ctx(&init, None, &[]);
            brief(&c).text
        };
        assert_snapshot("initializing", &initializing);
        let idle = {
            let mut c = ctx(&init, None, &[]);
            c.idle = true;
            brief(&c)
        };
        assert_eq!((idle.step, idle.attempt), (None, 0));
        assert_snapshot("idle", &idle.text);

        init = init.edit(|w| {
            w.status = Status::CreatingBranch;
            w.current_pr_branch = Some("feat/add-numbers".into());
            w.last_error = Some("the working tree has uncommitted changes to tracked files:\n M src/lib.rs\nCommit them, or put them aside with `git stash`.".into());
        });
        assert_snapshot(
            "creating_branch_blocked",
            &render(&init, 0, Extras::default()),
        );

        let tdd = tdd_state();
        assert_snapshot("red_step", &render(&tdd, 0, Extras::default()));
        let done = vec![DoneAction::Branch(BranchOutcome::Created {
            branch: "feat/add-numbers".into(),
            main: "main".into(),
            pulled_from: None,
        })];
        assert_snapshot(
            "red_step_after_branching",
            &render(
                &tdd,
                0,
                Extras {
                    done: &done,
                    ..Default::default()
                },
            ),
        );
        assert_snapshot("green_step", &render(&tdd, 1, Extras::default()));
        assert_snapshot("refactor_step", &render(&tdd, 2, Extras::default()));
        assert_snapshot(
            "refactor_step_no_gates",
            &render(
                &tdd,
                2,
                Extras {
                    no_gates: true,
                    ..Default::default()
                },
            ),
        );

        let mut analysis = tdd_state();
        analysis = analysis.edit(|w| {
            w.pending = Some(Pending::Analysis {
                step: StepId::new(0, 0),
                command: "cargo test add".into(),
                exit: ExitRecord::code(101),
                output_tail: "error[E0425]: cannot find function `add` in this scope\n".into(),
                red_tree: None,
                red_paths: Vec::new(),
                red_shared: Vec::new(),
                syntax_error: None,
            });
        });
        assert_snapshot("analysis", &render(&analysis, 0, Extras::default()));

        let pinned = analysis.edit(|w| {
            if let Some(Pending::Analysis {
                red_tree,
                red_paths,
                syntax_error,
                ..
            }) = &mut w.pending
            {
                *red_tree = Some("a1b2c3".into());
                *red_paths = vec!["tests/test_add.sh".into(), "src/add.sh".into()];
                *syntax_error =
                    Some("tests/test_add.sh: 3: Syntax error: \"fi\" unexpected".into());
            }
        });
        assert_snapshot("analysis_pinned", &render(&pinned, 0, Extras::default()));
        let nothing_pinned = pinned.edit(|w| {
            if let Some(Pending::Analysis {
                red_paths,
                syntax_error,
                ..
            }) = &mut w.pending
            {
                red_paths.clear();
                *syntax_error = None;
            }
        });
        assert_snapshot(
            "analysis_nothing_pinned",
            &render(&nothing_pinned, 0, Extras::default()),
        );
        let shared = nothing_pinned.edit(|w| {
            if let Some(Pending::Analysis { red_shared, .. }) = &mut w.pending {
                *red_shared = vec!["src/lib.rs".into()];
            }
        });
        assert_snapshot("analysis_shared", &render(&shared, 0, Extras::default()));

        for attempt in [1, 2, 3, 5, 6, 9, 10] {
            assert_snapshot(
                &format!("debugging_attempt_{attempt}"),
                &render(&failed_green(attempt), 1, Extras::default()),
            );
        }
        let custom = Thresholds {
            hypothesize_max_attempts: 1,
            instrumentation_max_attempts: 1,
            unlock_scope_reduction_at: 2,
            unlock_escalation_at: 3,
        };
        for attempt in [2, 3] {
            assert_snapshot(
                &format!("debugging_custom_attempt_{attempt}"),
                &render(
                    &failed_green(attempt),
                    1,
                    Extras {
                        thresholds: Some(custom),
                        ..Default::default()
                    },
                ),
            );
        }
        let mut identical = failed_green(4);
        identical = identical.edit(|w| {
            w.identical_failures = 2;
        });
        assert_snapshot(
            "debugging_identical",
            &render(&identical, 1, Extras::default()),
        );

        let mut red_passed = failed_green(1);
        red_passed = red_passed.edit(|w| {
            w.last_run = Some(LastRun {
                step: StepId::new(0, 0),
                command: "cargo test add".into(),
                expectation: Expectation::Fail,
                exit: ExitRecord::code(0),
                verdict: Verdict::Failure,
                preflight: None,
            });
        });
        assert_snapshot(
            "debugging_red_passed",
            &render(&red_passed, 0, Extras::default()),
        );

        let mut timed_out = failed_green(1);
        if let Some(run) = timed_out.pr_mut().and_then(|pr| pr.last_run.as_mut()) {
            run.exit = ExitRecord::timed_out(600_000);
        }
        assert_snapshot(
            "debugging_timed_out",
            &render(&timed_out, 1, Extras::default()),
        );

        let resumed = failed_green(0);
        let warnings = vec!["no preflight gates are configured".to_string()];
        assert_snapshot(
            "debugging_resumed_with_guidance",
            &render(
                &resumed,
                1,
                Extras {
                    guidance: Some(
                        "The test uses the old signature; call add(a, b), not add(&[a, b]).",
                    ),
                    warnings: &warnings,
                    ..Default::default()
                },
            ),
        );

        let mut replanning = failed_green(6);
        replanning = replanning.edit(|w| {
            w.status = Status::Replanning;
            w.replan_context = Some(crate::workflow::state::ReplanContext {
                original_task: "add".into(),
                step: StepId::new(0, 1),
                error: "test add ... FAILED\nexpected 5, got -1\n".into(),
                untracked: vec!["scratch/debug.log".into(), "notes.txt".into()],
            });
        });
        assert_snapshot("replanning", &render(&replanning, 1, Extras::default()));

        let mut halted = failed_green(10);
        halted = halted.edit(|w| {
            w.status = Status::Halted;
            w.halt = Some(crate::workflow::state::HaltRecord {
                reason: HaltReason::Escalated,
                message: "the agent escalated for external help after 10 failed attempts".into(),
                resume_to: Status::Debugging,
            });
        });
        let reviewed = |status: Status| {
            let mut s = tdd_state();
            s = s.edit(|w| {
                w.status = status;
                w.review_round = 1;
                w.last_review = Some(crate::workflow::state::ReviewSummary {
                    round: 1,
                    ran: true,
                    findings: 2,
                    blocking: 0,
                });
            });
            s
        };
        let mut approval = reviewed(Status::CodeReview);
        approval = approval.edit(|w| {
            w.pending = Some(Pending::Approval { round: 1 });
        });
        assert_snapshot(
            "code_review_approval",
            &render(&approval, 4, Extras::default()),
        );
        let mut exhausted = reviewed(Status::CodeReview);
        exhausted = exhausted.edit(|w| {
            w.pending = Some(Pending::Escalation {
                reason:
                    "3 review rounds ended with blocking findings, the most review.max_rounds allows"
                        .into(),
            });
        });
        assert_snapshot(
            "code_review_escalation",
            &render(&exhausted, 4, Extras::default()),
        );
        let mut review_error = reviewed(Status::CodeReview);
        review_error = review_error.edit(|w| {
            w.last_error = Some(
                "the security review failed: `sh review.sh` ended with exit 2; it said:\nreview.sh: jq: not found"
                    .into(),
            )
        });
        assert_snapshot(
            "code_review_error",
            &render(&review_error, 4, Extras::default()),
        );
        assert_snapshot(
            "awaiting_finalization",
            &render(
                &reviewed(Status::AwaitingFinalization),
                4,
                Extras::default(),
            ),
        );
        let mut squashed = reviewed(Status::FinalizeComplete);
        squashed = squashed.edit(|w| {
            w.final_commit = Some("5d88a7584537662d385f2fcc39fd439fe6c13aee".into());
        });
        assert_snapshot(
            "finalize_complete",
            &render(&squashed, 4, Extras::default()),
        );
        let mut merge_blocked = reviewed(Status::MergingBranch);
        merge_blocked = merge_blocked.edit(|w| {
            w.last_error = Some("`git checkout --quiet main` failed (exit 1):\nerror: Your local changes would be overwritten".into());
        });
        assert_snapshot(
            "merging_blocked",
            &render(&merge_blocked, 4, Extras::default()),
        );
        let mut conflict = reviewed(Status::Halted);
        conflict = conflict.edit(|w| {
            w.halt = Some(crate::workflow::state::HaltRecord {
                reason: HaltReason::MergeConflict,
                message: "ERROR: Automated merge failed due to a conflict. Please resolve the conflict in branch 'feat/add-numbers' and merge it to main manually. Then run `git orchestrate resume`: it checks that the branch is merged, deletes it, and continues with the next PR. Conflicting files: src/lib.rs.".into(),
                resume_to: Status::MergingBranch,
            });
        });
        assert_snapshot(
            "halted_merge_conflict",
            &render(&conflict, 4, Extras::default()),
        );
        let mut with_feedback = plan_at(3);
        with_feedback.tasks[1].status = crate::workflow::plan::TaskStatus::Done;
        with_feedback.tasks[1].tdd_steps[0].status = crate::workflow::plan::StepStatus::Done;
        with_feedback
            .tasks
            .push(crate::workflow::review::feedback_task(
                1,
                &[crate::workflow::review::Finding {
                    priority: crate::workflow::review::Priority::P1,
                    file: Some("src/lib.rs".into()),
                    line: Some(12),
                    issue: "add() panics on overflow".into(),
                    suggestion: Some("use checked_add".into()),
                    dimensions: vec!["correctness".into()],
                    human: false,
                    answered: None,
                }],
            ));
        let summary = with_feedback.summary();
        let gates = vec!["tests".to_string()];
        assert_snapshot(
            "green_step_review_fix",
            &brief(&ctx(&tdd, Some(&summary), &gates)).text,
        );

        assert_snapshot(
            "halted_escalated",
            &render(
                &halted,
                1,
                Extras {
                    escalation: Some((
                        "git show refs/orchestrator/workflows/main:escalation.md",
                        "# add() returns -1\n\nTried: 10 fixes. The subtraction comes from the macro.\n",
                    )),
                    ..Default::default()
                },
            ),
        );
    }
}
