//! The PR branch names the engine hands out: a free name for a plan's title, and the
//! refusal of a branch another workflow of this repository drives. `get-task` and
//! `submit-work` both name branches; neither owns the naming.

use super::{EngineError, Session};
use crate::store::is_valid_branch_name;
use crate::workflow::{self, Rejection, Status, branch_name};

/// Refuses `branch` when another workflow of this repository drives it (exit 4, naming it).
pub(crate) fn check_branch_free(
    session: &Session,
    branch: &str,
    status: Status,
) -> Result<(), EngineError> {
    let holders = session.store.other_workflow_branches()?;
    branch_name::check_branch_free(branch, status, &holders).map_err(EngineError::Rejected)
}

/// A branch name for `title` that no branch has yet: `feat/x`, else `feat/x-2`, `feat/x-3`, …
pub(crate) fn free_branch_name(session: &Session, title: &str) -> Result<String, EngineError> {
    let base = branch_name::sanitize(title).ok_or_else(|| {
        EngineError::Rejected(Rejection {
            kind: workflow::RejectionKind::InvalidInput,
            state: Status::Initializing,
            message: format!("the PR title \"{title}\" has no letter or digit to name a branch by"),
            hint: "Submit the plan again with a descriptive prTitle.".to_string(),
        })
    })?;
    // A branch `feat` makes `feat/x` impossible (and the other way round): flatten then.
    let base = if parent_is_branch(session, &base)? {
        base.replace('/', "-")
    } else {
        base
    };
    for n in 1..=1000 {
        let name = branch_name::numbered(&base, n);
        if is_valid_branch_name(&name) && !session.store.branch_exists(&name)? {
            return Ok(name);
        }
    }
    Err(EngineError::Rejected(Rejection {
        kind: workflow::RejectionKind::InvalidInput,
        state: Status::Initializing,
        message: format!("every branch name from {base} to {base}-1000 is taken"),
        hint: "Delete merged branches, or submit the plan with a different prTitle.".to_string(),
    }))
}

fn parent_is_branch(session: &Session, name: &str) -> Result<bool, EngineError> {
    let mut prefix = String::new();
    for part in name
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(&[][..], |(_, rest)| rest)
    {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        if session.store.branch_exists(&prefix)? {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
#[path = "branches_tests.rs"]
mod unit_tests;
