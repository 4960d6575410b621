//! The finalization checks (docs/architecture.md, "Finalization and merge"): the squash is one commit over main, titled with the
//! PR title, with exactly the verified tree; the master-plan commit sits on it, changes only
//! the master plan, and names the squashed commit.

use super::{EngineError, Session, io_error};
use crate::config::Config;
use crate::exec::{self, GitError};
use crate::gates;
use crate::store::Snapshot;

/// Where the clean final check's worktrees live, inside the git directory.
const CLEAN_CHECK_DIR: &str = "orchestrator/clean-check";

/// The clean final check (docs/integrity.md): the gates in force run once more on the
/// squashed `commit`, in a fresh linked worktree that holds only what the commit holds, so
/// that nothing untracked or ignored in the working tree can have made it pass. `None` when
/// it passed (or is off, or there are no gates); the refusal otherwise. The worktree is
/// removed however the run ends.
pub fn clean_check(
    session: &Session,
    config: &Config,
    commit: &str,
) -> Result<Option<String>, EngineError> {
    if !config.finalize.clean_check || config.preflight.is_empty() {
        return Ok(None);
    }
    let parent = session.store.git_dir().join(CLEAN_CHECK_DIR);
    let worktree = session.git.temp_worktree(&parent, commit)?;
    let run = gates::run_preflight(&config.preflight, worktree.path())
        .map_err(io_error("run preflight in the clean worktree"))?;
    drop(worktree);
    Ok(run.failed().map(|gate| {
        format!(
            "the clean final check failed: preflight gate `{}` failed ({}) on the squashed commit in a \
             fresh worktree, though it passed in yours: something the commit does not hold (an \
             untracked or ignored file) made it pass there. Commit what the tests need, then squash \
             and submit again.\n{}",
            gate.name,
            gate.run.exit,
            exec::tail_lines(&gate.run.output, config.test.output_tail)
        )
    }))
}

/// Whether the squash holds.
pub fn verify_squash(session: &Session, snap: &Snapshot) -> Result<FinalizeCheck, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work", FINALIZATION)?;
    let main = session.main_branch(Some(&snap.state))?;
    Ok(as_reason(squash(session, snap, &main)))
}

/// Completes "HEAD is on X, not on the PR branch B (state S)".
const FINALIZATION: &str = "; finalization checks the PR branch";

/// What a finalization check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalizeCheck {
    /// The commit holds.
    Holds { commit: String },
    /// It does not, and this says why.
    Refused { reason: String },
}

fn refuse(reason: impl Into<String>) -> Result<FinalizeCheck, GitError> {
    Ok(FinalizeCheck::Refused {
        reason: reason.into(),
    })
}

/// A git command that fails during a check (a missing branch, an unreadable commit) fails
/// the check, with git's words as the reason.
fn as_reason(checked: Result<FinalizeCheck, GitError>) -> FinalizeCheck {
    checked.unwrap_or_else(|e| FinalizeCheck::Refused {
        reason: format!("the check could not run: {e}"),
    })
}

fn squash(session: &Session, snap: &Snapshot, main: &str) -> Result<FinalizeCheck, GitError> {
    let git = &session.git;
    let state = &snap.state;
    let Some(plan) = &snap.summary else {
        return refuse("there is no PR plan to finalize");
    };
    let head = git.rev_parse("HEAD")?;
    let count = git.count(&format!("{main}..HEAD"))?;
    if count != 1 {
        return refuse(format!(
            "the branch has {count} commits over {main}; it must have exactly one. Squash them: \
             git reset --soft $(git merge-base {main} HEAD) && git commit -m {}",
            crate::workflow::briefing::shell_quote(&plan.title)
        ));
    }
    let subject = git.subject("HEAD")?;
    if subject != plan.title {
        return refuse(format!(
            "the squashed commit is titled \"{subject}\"; it must be titled with the PR title, \"{}\" \
             (fix it with `git commit --amend -m ...`)",
            plan.title
        ));
    }
    let verified = match (state.verified_tree(), state.last_checkpoint()) {
        (Some(tree), _) => tree.to_string(),
        (None, Some(checkpoint)) => git.tree_of(checkpoint)?,
        (None, None) => {
            return refuse("nothing on this branch has passed verification yet");
        }
    };
    let tree = git.tree_of("HEAD")?;
    if tree != verified {
        let differ = git.tree_changes(&verified, &tree)?;
        const SHOWN: usize = 20;
        let mut listed: Vec<String> = differ
            .iter()
            .take(SHOWN)
            .map(|(how, path)| format!("{how} {path}"))
            .collect();
        if differ.len() > SHOWN {
            listed.push(format!("and {} more", differ.len() - SHOWN));
        }
        return refuse(format!(
            "the squashed commit's tree ({tree}) is not the tree that last passed verification ({verified}): \
             the squash holds changes that were never verified ({}). To keep them, verify them first: \
             `git reset --soft HEAD~1`, then `git orchestrate checkpoint` (it verifies and commits them), and \
             squash again; to drop them, undo them and squash again",
            listed.join(", ")
        ));
    }
    Ok(FinalizeCheck::Holds { commit: head })
}

/// Whether the master-plan commit holds.
/// The file is the configured master plan (`path`), the one the plan had to name.
pub fn verify_master_plan(
    session: &Session,
    snap: &Snapshot,
    path: &str,
) -> Result<FinalizeCheck, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work", FINALIZATION)?;
    Ok(as_reason(master_plan(session, snap, path)))
}

fn master_plan(session: &Session, snap: &Snapshot, path: &str) -> Result<FinalizeCheck, GitError> {
    let git = &session.git;
    let Some(squashed) = &snap.state.final_commit() else {
        return refuse("the PR has not been squashed yet");
    };
    let head = git.rev_parse("HEAD")?;
    if head == *squashed {
        return refuse(format!(
            "HEAD is still the squashed commit; commit the change to {} on top of it",
            path
        ));
    }
    if git.parents(&head)? != [squashed.to_string()] {
        return refuse(format!(
            "the master-plan commit must sit directly on the squashed commit {squashed}, as the only commit after it"
        ));
    }
    let changed = git.changed_files(squashed, &head)?;
    if changed != [path.to_string()] {
        return refuse(format!(
            "the commit changes {}; it must change only the master plan, {}",
            changed.join(", "),
            path
        ));
    }
    let text = git
        .show(&head, path)?
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    if !text.contains(&squashed[..7]) {
        return refuse(format!(
            "{} does not mention the squashed commit {} (write its hash next to the PR marked [DONE])",
            path,
            &squashed[..12]
        ));
    }
    Ok(FinalizeCheck::Holds { commit: head })
}
