//! Why one of `get-task`'s own steps could not go on (the PR branch not made, the merge not
//! done), as data; displayed, it is the reason the recorded event and the briefing carry.

use std::fmt;

use crate::engine::{EngineError, Session};

/// Why the PR branch was not made, or the PR not merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Blocked {
    /// The working tree has uncommitted changes to tracked files (`changes`, as `git
    /// status --short` lists them); `settings` are the agent settings among them.
    Dirty {
        switching: bool,
        changes: String,
        settings: Vec<String>,
    },
    /// The main branch has no commit yet.
    NoMainBranch { main: String },
    /// What git said when it refused.
    Git(String),
    /// A forged transition in the PR's history.
    Forged {
        commit: Option<String>,
        problem: String,
    },
    /// The PR's commits without a verification note.
    Unnoted { commits: Vec<String> },
    /// Main moved outside the workflow; `notice` says how.
    MovedOutside { notice: String },
    /// The branch is gone, and the checked commit is not in main.
    BranchGone {
        branch: String,
        checked: Option<String>,
        main: String,
    },
    /// The branch moved after finalization was checked.
    BranchMoved {
        branch: String,
        tip: String,
        checked: String,
        main: String,
    },
    /// No checked master-plan commit is recorded.
    NothingChecked { branch: String, main: String },
    /// main is checked out in another worktree whose tracked files have changes, so it is
    /// not moved under them.
    MainDirtyElsewhere {
        main: String,
        worktree: String,
        changes: String,
    },
    /// main here and on the remote each have commits the other lacks.
    Diverged {
        main: String,
        remote: String,
        local: String,
        theirs: String,
    },
    /// The remote refused the push of main for another reason than a race.
    PushRefused {
        main: String,
        remote: String,
        said: String,
    },
    /// Other clones kept pushing main first, every time.
    RaceLost {
        main: String,
        remote: String,
        attempts: usize,
    },
    /// The merge onto the remote's newer main does not pass the gates.
    FailsOnNewMain { main: String, why: String },
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::Dirty {
                switching,
                changes,
                settings,
            } => {
                let risk = if *switching {
                    ", and switching branches could carry them into the PR or lose them"
                } else {
                    ""
                };
                write!(
                    f,
                    "the working tree has uncommitted changes to tracked files{risk}:\n{}\nCommit them, or put \
                     them aside with `git stash`.",
                    changes.trim_end()
                )?;
                if settings.is_empty() {
                    return Ok(());
                }
                let quoted: Vec<String> = settings
                    .iter()
                    .map(|f| crate::workflow::briefing::shell_quote(f))
                    .collect();
                write!(
                    f,
                    " Among them are the agent settings of `git orchestrate init --agent` ({}): commit them on \
                     the main branch, e.g. `git add {} && git commit -m \"Wire the agent clients to git-orchestrate\"`.",
                    settings.join(", "),
                    quoted.join(" ")
                )
            }
            Blocked::NoMainBranch { main } => write!(
                f,
                "the main branch {main} does not exist yet: make a first commit on it (PR branches start from it)."
            ),
            Blocked::Git(said) => f.write_str(said),
            Blocked::Forged { commit, problem } => write!(
                f,
                "the PR's history is forged, so it is not merged: commit {}: {problem} (`git orchestrate audit` \
                 shows it; a human decides what to keep)",
                commit.as_deref().unwrap_or("?"),
            ),
            Blocked::Unnoted { commits } => write!(
                f,
                "the PR is not merged: {} of its commits carr{} no verification note in refs/notes/orchestrator: {}. \
                 Restore the notes (`git reflog refs/notes/orchestrator`, or `git orchestrate sync` from a clone \
                 that has them); a human decides when they are gone",
                commits.len(),
                if commits.len() == 1 { "ies" } else { "y" },
                commits.join(", ")
            ),
            Blocked::MovedOutside { notice } => write!(f, "the PR is not merged: {notice}"),
            Blocked::BranchGone {
                branch,
                checked,
                main,
            } => write!(
                f,
                "the branch {branch} is gone, and the commit finalization checked ({}) is not in {main}",
                checked.as_deref().unwrap_or("none recorded")
            ),
            Blocked::BranchMoved {
                branch,
                tip,
                checked,
                main,
            } => write!(
                f,
                "the branch {branch} moved after finalization was checked: its tip is {tip}, but the \
                 checked master-plan commit is {checked}. Only checked work is merged: put the branch \
                 back with `git branch -f {branch} {checked}` (check out {main} first), or ask a human"
            ),
            Blocked::NothingChecked { branch, main } => write!(
                f,
                "no checked master-plan commit is recorded (the workflow was finalized by an older \
                 git-orchestrate), so nothing can be merged automatically: a human merges {branch} into \
                 {main} by hand"
            ),
            Blocked::MainDirtyElsewhere {
                main,
                worktree,
                changes,
            } => write!(
                f,
                "{main} is checked out in the worktree {worktree}, whose tracked files have uncommitted \
                 changes:\n{}\nso {main} is not moved under them. Commit or stash them there (or check \
                 out another branch there), then run `git orchestrate get-task` again.",
                changes.trim_end()
            ),
            Blocked::Diverged {
                main,
                remote,
                local,
                theirs,
            } => write!(
                f,
                "{main} here ({}) and on {remote} ({}) each have commits the other lacks, so {main} \
                 cannot be brought up to {remote}'s: a human reconciles them (push or rebase the \
                 local commits), then run `git orchestrate get-task` again.",
                crate::short_id(local),
                crate::short_id(theirs)
            ),
            Blocked::PushRefused { main, remote, said } => write!(
                f,
                "the merge was not kept: {remote} refused the push of {main}, and {main} here is \
                 back where it was:\n{}\nFix what {remote} said, then run `git orchestrate \
                 get-task` again.",
                said.trim_end()
            ),
            Blocked::RaceLost {
                main,
                remote,
                attempts,
            } => write!(
                f,
                "the merge was not kept: {attempts} times another clone pushed {main} to {remote} \
                 first, and {main} here is back where it was. Run `git orchestrate get-task` again."
            ),
            Blocked::FailsOnNewMain { main, why } => write!(
                f,
                "the merge was not kept: {main} moved on the remote since the PR was checked, and \
                 the merge onto it does not pass the gates: {why}. {main} here is as the remote has \
                 it; the PR branch is kept for a human to fix"
            ),
        }
    }
}

/// Why the working tree must not be switched or merged into: its uncommitted changes to
/// tracked files. `switching`: the branch is to be switched. `None` when it is clean.
pub(super) fn dirty(session: &Session, switching: bool) -> Result<Option<Blocked>, EngineError> {
    let changes = session.git.tracked_changes()?;
    if changes.trim().is_empty() {
        return Ok(None);
    }
    // The agent clients' settings `init --agent` changed belong on main, committed by their
    // user: named, with the command.
    let settings: Vec<String> = session
        .git
        .left_out_changes()?
        .into_iter()
        .filter(|file| changes.lines().any(|l| l.get(3..) == Some(file.as_str())))
        .collect();
    Ok(Some(Blocked::Dirty {
        switching,
        changes,
        settings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reasons_read_as_recorded() {
        let rows = [
            (
                Blocked::Dirty {
                    switching: true,
                    changes: " M a.txt\n M .claude/settings.json\n".into(),
                    settings: vec![".claude/settings.json".into()],
                },
                "the working tree has uncommitted changes to tracked files, and switching branches could carry \
                 them into the PR or lose them:\n M a.txt\n M .claude/settings.json\nCommit them, or put them \
                 aside with `git stash`. Among them are the agent settings of `git orchestrate init --agent` \
                 (.claude/settings.json): commit them on the main branch, e.g. `git add .claude/settings.json \
                 && git commit -m \"Wire the agent clients to git-orchestrate\"`.",
            ),
            (
                Blocked::Dirty {
                    switching: false,
                    changes: " M a.txt\n".into(),
                    settings: Vec::new(),
                },
                "the working tree has uncommitted changes to tracked files:\n M a.txt\nCommit them, or put them \
                 aside with `git stash`.",
            ),
            (
                Blocked::NoMainBranch {
                    main: "main".into(),
                },
                "the main branch main does not exist yet: make a first commit on it (PR branches start from it).",
            ),
            (
                Blocked::Unnoted {
                    commits: vec!["abc".into()],
                },
                "the PR is not merged: 1 of its commits carries no verification note in refs/notes/orchestrator: \
                 abc. Restore the notes (`git reflog refs/notes/orchestrator`, or `git orchestrate sync` from a \
                 clone that has them); a human decides when they are gone",
            ),
            (
                Blocked::BranchGone {
                    branch: "feat/x".into(),
                    checked: None,
                    main: "main".into(),
                },
                "the branch feat/x is gone, and the commit finalization checked (none recorded) is not in main",
            ),
            (
                Blocked::MainDirtyElsewhere {
                    main: "main".into(),
                    worktree: "/w/primary".into(),
                    changes: " M a.txt\n".into(),
                },
                "main is checked out in the worktree /w/primary, whose tracked files have uncommitted \
                 changes:\n M a.txt\nso main is not moved under them. Commit or stash them there (or \
                 check out another branch there), then run `git orchestrate get-task` again.",
            ),
            (
                Blocked::RaceLost {
                    main: "main".into(),
                    remote: "origin".into(),
                    attempts: 5,
                },
                "the merge was not kept: 5 times another clone pushed main to origin first, and main \
                 here is back where it was. Run `git orchestrate get-task` again.",
            ),
        ];
        for (blocked, text) in rows {
            assert_eq!(blocked.to_string(), text);
        }
    }
}
