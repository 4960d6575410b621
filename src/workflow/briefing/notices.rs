//! What a briefing or a report tells besides the task: notices about the config, main and
//! the hooks (`Notice`), how preparing the branch went (`BranchOutcome`), and what the
//! orchestrator did for the agent (`DoneAction`).

use super::text::shell_quote;

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
    /// The merge could not release the PR's claim (docs/refs.md, "Claims"): it lapses at its expiry.
    ClaimNotReleased {
        error: String,
    },
    /// `[archive] auto` did not archive at the landing (docs/config.md): the merge stands.
    ArchiveNotDone {
        error: String,
    },
    /// The merge reached the remote's main, but the workflow's record of it did not: another
    /// clone counts the merge as its workflow's once `sync` brings the record.
    MergeRecordNotPushed {
        remote: String,
        said: String,
    },
    /// The local main branch lacks `behind` commits of the remote's main as last fetched.
    MainBehindRemote {
        main: String,
        remote: String,
        behind: u64,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const CONFIG: &str = crate::workflow::CONFIG_FILE;
        match self {
            Notice::MainMovedOutside {
                main,
                since,
                commits,
                rewritten,
            } => main_moved_outside(f, main, since, commits, *rewritten),
            Notice::ClaimNotReleased { error } => write!(
                f,
                "the PR's claim was not released ({error}); it lapses at its expiry, and \
                 `git orchestrate sync` releases it sooner."
            ),
            Notice::ArchiveNotDone { error } => write!(
                f,
                "[archive] auto did not archive the finished workflows ({error}); \
                 `git orchestrate archive` or the next `git orchestrate sync` does."
            ),
            Notice::MergeRecordNotPushed { remote, said } => write!(
                f,
                "the merge is on {remote}, but the workflow's record of it was not pushed ({}): run \
                 `git orchestrate sync {remote}`, or other clones count the merge as a move of main \
                 outside the workflows",
                said.trim()
            ),
            Notice::MainBehindRemote {
                main,
                remote,
                behind,
            } => write!(
                f,
                "{main} is {behind} commit{} behind {remote}/{main} (along its first parents: a merged \
                 PR counts one) as last fetched: other workflows \
                 may have merged PRs since; `git orchestrate get-task` brings {main} up to {remote}'s \
                 before the next PR branch is made, and the merge does too",
                if *behind == 1 { "" } else { "s" }
            ),
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
            } => off_branch(f, head.as_deref(), branch, worktree.as_deref()),
            Notice::UnverifiedCheckpoint {
                commit,
                subject,
                gates_changed,
            } => unverified_checkpoint(f, commit, subject, *gates_changed),
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
            } => locked(f, reference, path, *age_s),
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
            Notice::DestructiveRefspecs { remote, refspecs } => {
                destructive_refspecs(f, remote, refspecs)
            }
            Notice::PushSaid { said } => write!(f, "git push said: {said}"),
            Notice::Skipped { what, why } if why.is_empty() => write!(f, "skipped {what}"),
            Notice::Skipped { what, why } => write!(f, "skipped {what}: {why}"),
            Notice::BranchNotTouched { workflow, branch } => write!(
                f,
                "workflow {workflow} names \"{branch}\" as its PR branch, which sync does not touch"
            ),
            Notice::HooksInWorkingTree { dir } => hooks_in_working_tree(f, dir),
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
        /// Pushes of main that lost the race to another clone's before this one landed.
        raced: usize,
    },
    /// The claims the merged PR held were released (docs/refs.md, "Claims").
    ReleasedClaims {
        prs: Vec<String>,
    },
    /// `[archive] auto` archived the finished workflows at the landing (docs/config.md).
    Archived {
        archived: usize,
        /// How many workflows the archive holds after it.
        total: usize,
    },
}

/// HEAD is not on the PR's branch: where the branch is, and how to get to it.
fn off_branch(
    f: &mut std::fmt::Formatter<'_>,
    head: Option<&str>,
    branch: &str,
    worktree: Option<&std::path::Path>,
) -> std::fmt::Result {
    let head = head.unwrap_or("a detached commit");
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

/// A commit marked as a checkpoint that preflight did not verify: why, and what to run.
fn unverified_checkpoint(
    f: &mut std::fmt::Formatter<'_>,
    commit: &str,
    subject: &str,
    gates_changed: bool,
) -> std::fmt::Result {
    let short = crate::short_id(commit);
    let why = if gates_changed {
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

/// A ref's lock file that stays: who left it, and how to remove it.
fn locked(
    f: &mut std::fmt::Formatter<'_>,
    reference: &str,
    path: &std::path::Path,
    age_s: u64,
) -> std::fmt::Result {
    write!(
        f,
        "{reference} is locked by {} (left {age_s}s ago): if no git or git-orchestrate process is running, a crash \
     left it; delete it (rm {}) or every write to it fails",
        path.display(),
        shell_quote(&path.display().to_string())
    )
}

/// The hooks directory is inside the working tree, where its files count as untracked.
fn hooks_in_working_tree(
    f: &mut std::fmt::Formatter<'_>,
    dir: &std::path::Path,
) -> std::fmt::Result {
    write!(
        f,
        "the hooks directory {} is in the working tree: commit the hook files (or list them in \
         .gitignore), or they count as untracked files, and untracked files refuse every checkpoint commit",
        dir.display()
    )
}

/// A fetch refspec that would overwrite this clone's state with the remote's.
fn destructive_refspecs(
    f: &mut std::fmt::Formatter<'_>,
    remote: &str,
    refspecs: &[String],
) -> std::fmt::Result {
    write!(
        f,
        "remote.{remote}.fetch has {}: a plain `git fetch {remote}` overwrites this clone's state with the remote's; `git orchestrate doctor` prints the command that removes it",
        refspecs.join(", ")
    )
}

/// `main` moved outside the workflow since `since`: how, the first few commits, what to do.
fn main_moved_outside(
    f: &mut std::fmt::Formatter<'_>,
    main: &str,
    since: &str,
    commits: &[String],
    rewritten: bool,
) -> std::fmt::Result {
    let since = crate::short_id(since);
    if rewritten {
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
        let mut listed: Vec<&str> = commits.iter().take(SHOWN).map(String::as_str).collect();
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
            DoneAction::Merged {
                branch,
                main,
                raced: 0,
            } => write!(f, "merged {branch} into {main} and deleted the branch."),
            DoneAction::Merged {
                branch,
                main,
                raced,
            } => write!(
                f,
                "merged {branch} into {main} and deleted the branch (merged again onto the \
                 remote's newer {main} after {raced} push{} lost the race to another clone's).",
                if *raced == 1 { "" } else { "es" }
            ),
            DoneAction::ReleasedClaims { prs } => {
                write!(f, "released the claim on {}.", prs.join(", "))
            }
            DoneAction::Archived { archived, total } => write!(
                f,
                "[archive] auto: archived {archived} finished workflow{} (the archive holds {total}).",
                if *archived == 1 { "" } else { "s" }
            ),
        }
    }
}
