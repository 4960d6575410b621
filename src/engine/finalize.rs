//! The finalization checks (SPEC §6.6): the squash is one commit over main, titled with the
//! PR title, with exactly the verified tree; the master-plan commit sits on it, changes only
//! the master plan, and names the squashed commit.

use super::{EngineError, Session};
use crate::store::Snapshot;

/// `Ok(Ok(commit))` when the squash holds, `Ok(Err(reason))` when it does not.
pub fn verify_squash(
    session: &Session,
    snap: &Snapshot,
) -> Result<Result<String, String>, EngineError> {
    let git = &session.git;
    let state = &snap.state;
    let main = session.main_branch(Some(state))?;
    if let Err(reason) = on_pr_branch(session, snap)? {
        return Ok(Err(reason));
    }
    let Some(plan) = &snap.summary else {
        return Ok(Err("there is no PR plan to finalize".into()));
    };
    let head = git.rev_parse("HEAD")?;
    let count = git.count(&format!("{main}..HEAD"))?;
    if count != 1 {
        return Ok(Err(format!(
            "the branch has {count} commits over {main}; it must have exactly one. Squash them: \
             git reset --soft $(git merge-base {main} HEAD) && git commit -m {}",
            crate::workflow::briefing::shell_quote(&plan.title)
        )));
    }
    let subject = git.subject("HEAD")?;
    if subject != plan.title {
        return Ok(Err(format!(
            "the squashed commit is titled \"{subject}\"; it must be titled with the PR title, \"{}\" \
             (fix it with `git commit --amend -m ...`)",
            plan.title
        )));
    }
    let verified = match (&state.verified_tree, &state.last_commit_hash) {
        (Some(tree), _) => tree.clone(),
        (None, Some(checkpoint)) => git.tree_of(checkpoint)?,
        (None, None) => {
            return Ok(Err(
                "nothing on this branch has passed verification yet".into()
            ));
        }
    };
    let tree = git.tree_of("HEAD")?;
    if tree != verified {
        return Ok(Err(format!(
            "the squashed commit's tree ({tree}) is not the tree that last passed verification ({verified}): \
             the squash holds changes that were never verified. Make the branch hold exactly the verified \
             work (for example `git reset --soft HEAD~1`, undo the extra changes, and squash again)"
        )));
    }
    Ok(Ok(head))
}

/// `Ok(Ok(commit))` when the master-plan commit holds, `Ok(Err(reason))` when it does not.
pub fn verify_master_plan(
    session: &Session,
    snap: &Snapshot,
) -> Result<Result<String, String>, EngineError> {
    let git = &session.git;
    if let Err(reason) = on_pr_branch(session, snap)? {
        return Ok(Err(reason));
    }
    let (Some(squashed), Some(plan)) = (&snap.state.final_commit, &snap.summary) else {
        return Ok(Err("the PR has not been squashed yet".into()));
    };
    let head = git.rev_parse("HEAD")?;
    if head == *squashed {
        return Ok(Err(format!(
            "HEAD is still the squashed commit; commit the change to {} on top of it",
            plan.master_plan_path
        )));
    }
    if git.parents(&head)? != [squashed.clone()] {
        return Ok(Err(format!(
            "the master-plan commit must sit directly on the squashed commit {squashed}, as the only commit after it"
        )));
    }
    let changed = git.changed_files(squashed, &head)?;
    if changed != [plan.master_plan_path.clone()] {
        return Ok(Err(format!(
            "the commit changes {}; it must change only the master plan, {}",
            changed.join(", "),
            plan.master_plan_path
        )));
    }
    let text = git
        .show(&head, &plan.master_plan_path)?
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    if !text.contains(&squashed[..7]) {
        return Ok(Err(format!(
            "{} does not mention the squashed commit {} (write its hash next to the PR marked [DONE])",
            plan.master_plan_path,
            &squashed[..12]
        )));
    }
    Ok(Ok(head))
}

fn on_pr_branch(session: &Session, snap: &Snapshot) -> Result<Result<(), String>, EngineError> {
    let branch = snap.state.current_pr_branch.as_deref().unwrap_or_default();
    let head = session.store.head_branch()?;
    Ok(if head.as_deref() == Some(branch) {
        Ok(())
    } else {
        Err(format!(
            "HEAD is on {}, not on the PR branch {branch}: run `git checkout {branch}` first",
            head.as_deref().unwrap_or("a detached commit")
        ))
    })
}
