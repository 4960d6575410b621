//! The finalization checks (docs/architecture.md, "Finalization and merge"): the squash is one commit over main, titled with the
//! PR title, with exactly the verified tree; the master-plan commit sits on it, changes only
//! the master plan, and names the squashed commit.

mod final_check;
mod refusal;
pub mod remembered;

pub use self::final_check::{FinalCheck, final_check, gates_on};
pub use self::refusal::{AWAITING_APPROVAL, FinalizeRefusal};
use super::{EngineError, Session, io_error};
use crate::exec::GitError;
use crate::store::Snapshot;
use crate::workflow::master_plan;

/// Whether the squash holds.
pub fn verify_squash(session: &Session, snap: &Snapshot) -> Result<FinalizeCheck, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work", FINALIZATION)?;
    super::hermetic::require(session)?;
    let main = session.main_branch(Some(&snap.state))?;
    Ok(as_reason(squash(session, snap, &main)))
}

/// `submit-work --squash`: makes the squash commit the briefing asks for (the branch's
/// commits over main as one, titled with the PR title, the plan's summary as its body),
/// unless HEAD is one already. Returns the branch's tip before, to put it back when the
/// check refuses the squash; `None` when nothing was made.
pub fn make_squash(session: &Session, snap: &Snapshot) -> Result<Option<String>, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work --squash", FINALIZATION)?;
    // Found before anything is made: the check that follows would refuse to run.
    super::hermetic::require(session)?;
    let git = &session.git;
    let Some(plan) = session.store.plan(snap)? else {
        return Err(EngineError::Internal(
            "there is no PR plan to squash for".into(),
        ));
    };
    let main = session.main_branch(Some(&snap.state))?;
    if git.count(&format!("{main}..HEAD"))? == 1 && git.subject("HEAD")? == plan.pr_title {
        return Ok(None);
    }
    let old = git.rev_parse("HEAD")?;
    let base = git.merge_base(&main, "HEAD")?;
    git.reset_soft(&base)?;
    let message = format!("{}\n\n{}\n", plan.pr_title, plan.summary.trim());
    let made = git.commit(
        &message,
        false,
        session.store.identity().is_some(),
        &[(crate::WORKFLOW_ENV, session.store.workflow())],
    );
    if let Err(e) = made {
        // Nothing half-done: the branch goes back to where it was.
        git.reset_soft(&old)?;
        return Err(EngineError::Git(e));
    }
    Ok(Some(old))
}

/// `submit-work --mark-done`: marks this PR's heading in the master plan `[DONE] <squashed
/// commit>` and commits only that file on the squashed commit, unless HEAD is that commit
/// already. Returns the squashed commit, to put the branch back when the check refuses;
/// `None` when nothing was made.
pub fn make_mark_done(
    session: &Session,
    snap: &Snapshot,
    path: &str,
) -> Result<Option<String>, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work --mark-done", FINALIZATION)?;
    let git = &session.git;
    let Some(squashed) = snap.state.final_commit().map(str::to_string) else {
        return Err(EngineError::Internal(
            "the PR has not been squashed yet".into(),
        ));
    };
    let head = git.rev_parse("HEAD")?;
    if head != squashed {
        // Made already (by a run that lost a race, or by hand): the check judges it.
        return Ok(None);
    }
    let Some(title) = snap.summary.as_ref().map(|p| p.title.clone()) else {
        return Err(EngineError::Internal(
            "there is no PR plan to finalize".into(),
        ));
    };
    // Uncommitted changes, the agent clients' settings aside (never part of the agent's
    // work, and untouched here).
    let left_out = git.left_out_changes()?;
    let changed = git
        .tracked_changes()?
        .lines()
        .any(|l| l.get(3..).is_some_and(|f| !left_out.iter().any(|o| o == f)));
    session.refuse_waiting_reads(None)?;
    if git.unstaged_files()?.iter().any(|f| f == path) || changed {
        return Err(super::wrong_state(
            snap.state.status(),
            format!(
                "submit-work --mark-done edits and commits {path}, and the working tree has uncommitted \
                 changes to tracked files"
            ),
            "Commit or stash them first (`git stash`), then run it again.",
        ));
    }
    let text = session.master_plan_at(&squashed, path)?.unwrap_or_default();
    let short = crate::short_id(&squashed).to_string();
    let Some(marked) = master_plan::mark_done(&text, &title, &short) else {
        return Err(super::wrong_state(
            snap.state.status(),
            format!("{path} has no open PR heading titled \"{title}\" to mark [DONE]"),
            format!(
                "Edit {path} by hand (mark the PR's heading [DONE] {short}), commit only that file, and \
                 run `git orchestrate submit-work --summary \"master plan updated\"`."
            ),
        ));
    };
    let file = session.store.workdir().join(path);
    std::fs::write(&file, marked).map_err(io_error(format!("write {}", file.display())))?;
    let commit = git.add_path(path).and_then(|()| {
        git.commit(
            &format!("docs: mark \"{title}\" done in {path}\n"),
            false,
            session.store.identity().is_some(),
            &[(crate::WORKFLOW_ENV, session.store.workflow())],
        )
    });
    if let Err(e) = commit {
        git.reset_soft(&squashed)?;
        git.restore_path(&squashed, path)?;
        return Err(EngineError::Git(e));
    }
    Ok(Some(squashed))
}

/// Completes "HEAD is on X, not on the PR branch B (state S)".
const FINALIZATION: &str = "; finalization checks the PR branch";

/// What a finalization check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalizeCheck {
    /// The commit holds.
    Holds { commit: String },
    /// It does not, and this says why.
    Refused { reason: FinalizeRefusal },
}

fn refuse(reason: FinalizeRefusal) -> Result<FinalizeCheck, GitError> {
    Ok(FinalizeCheck::Refused { reason })
}

/// A git command that fails during a check (a missing branch, an unreadable commit) fails
/// the check, with git's words as the reason.
fn as_reason(checked: Result<FinalizeCheck, GitError>) -> FinalizeCheck {
    checked.unwrap_or_else(|e| FinalizeCheck::Refused {
        reason: FinalizeRefusal::CouldNotRun(e.to_string()),
    })
}

fn squash(session: &Session, snap: &Snapshot, main: &str) -> Result<FinalizeCheck, GitError> {
    let git = &session.git;
    let state = &snap.state;
    let Some(plan) = &snap.summary else {
        return refuse(FinalizeRefusal::NoPlan);
    };
    let head = git.rev_parse("HEAD")?;
    let count = git.count(&format!("{main}..HEAD"))?;
    if count != 1 {
        return refuse(FinalizeRefusal::CommitCount {
            count,
            main: main.to_string(),
            title: plan.title.clone(),
        });
    }
    let subject = git.subject("HEAD")?;
    if subject != plan.title {
        return refuse(FinalizeRefusal::WrongTitle {
            subject,
            title: plan.title.clone(),
        });
    }
    let verified = match (
        state.pr().and_then(|pr| pr.verified_tree.as_deref()),
        state.pr().and_then(|pr| pr.last_checkpoint.as_deref()),
    ) {
        (Some(tree), _) => tree.to_string(),
        (None, Some(checkpoint)) => git.tree_of(checkpoint)?,
        (None, None) => return refuse(FinalizeRefusal::NothingVerified),
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
        return refuse(FinalizeRefusal::TreeNotVerified {
            tree,
            verified,
            listed,
        });
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
        return refuse(FinalizeRefusal::NotSquashed);
    };
    let head = git.rev_parse("HEAD")?;
    if head == *squashed {
        return refuse(FinalizeRefusal::HeadIsSquashed {
            path: path.to_string(),
        });
    }
    if git.parents(&head)? != [squashed.to_string()] {
        return refuse(FinalizeRefusal::NotOnSquashed {
            squashed: squashed.to_string(),
        });
    }
    let changed = git.changed_files(squashed, &head)?;
    if changed != [path.to_string()] {
        return refuse(FinalizeRefusal::ChangesOthers {
            changed,
            path: path.to_string(),
        });
    }
    // Read in-process, to at most 8 MiB: the agent wrote this commit.
    let text = match session.master_plan_at(&head, path) {
        Ok(text) => text.unwrap_or_default(),
        Err(e) => return refuse(FinalizeRefusal::Unreadable(e.to_string())),
    };
    // It marks this PR done, and no other: a master plan with every PR closed would make the
    // next `--no-pr-left` true by the agent's own hand (docs/integrity.md).
    let before = match session.master_plan_at(squashed, path) {
        Ok(text) => text.unwrap_or_default(),
        Err(e) => return refuse(FinalizeRefusal::Unreadable(e.to_string())),
    };
    let still_open = master_plan::open_prs(&text);
    let closed: Vec<String> = master_plan::open_prs(&before)
        .into_iter()
        .filter(|heading| !still_open.contains(heading))
        .collect();
    if closed.len() > 1 {
        return refuse(FinalizeRefusal::ClosesOthers {
            path: path.to_string(),
            closed,
        });
    }
    // The one it closes is this PR's: the heading its plan's title names, which its claim
    // was keyed by (docs/refs.md, "Claims"); a PR planned under another title (and so
    // claimed under another key) cannot close a heading another workflow may hold.
    let title = snap
        .summary
        .as_ref()
        .map(|s| s.title.clone())
        .unwrap_or_default();
    if let [heading] = closed.as_slice()
        && crate::workflow::claims::pr_slug(Some(&before), &title)
            != crate::workflow::claims::slug(heading)
    {
        return refuse(FinalizeRefusal::ClosesAnother {
            path: path.to_string(),
            closed: heading.clone(),
            title,
        });
    }
    if !text.contains(&squashed[..7]) {
        return refuse(FinalizeRefusal::NoMention {
            path: path.to_string(),
            squashed: squashed.to_string(),
        });
    }
    Ok(FinalizeCheck::Holds { commit: head })
}
