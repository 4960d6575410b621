//! Whether the main branch moved outside the workflow (docs/integrity.md, "main moves only
//! through a workflow or a human"): first-parent commits on main after the tip the workflow
//! accounts for (its pin, its last merge, a human's `repin`) that no workflow merged.

use serde::Serialize;

use super::{EngineError, Session};
use crate::workflow::State;
use crate::workflow::briefing::Notice;

/// How far back main's first-parent line is followed: a longer stretch since the last
/// accounted tip counts as not followed, which a human settles with `repin`.
const WALK: usize = 200;

/// main moved outside the workflow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MainDrift {
    pub main: String,
    /// The tip the workflow accounts for.
    pub since: String,
    /// First-parent commits after it that no workflow merged, newest first.
    pub commits: Vec<ForeignCommit>,
    /// main's history no longer leads back to `since` (or not within reach).
    pub rewritten: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ForeignCommit {
    pub commit: String,
    pub subject: String,
}

impl MainDrift {
    pub fn notice(&self) -> Notice {
        Notice::MainMovedOutside {
            main: self.main.clone(),
            since: self.since.clone(),
            commits: self
                .commits
                .iter()
                .map(|c| format!("{} \"{}\"", &c.commit[..c.commit.len().min(12)], c.subject))
                .collect(),
            rewritten: self.rewritten,
        }
    }
}

/// How main stands against what `state` accounts for; `None` when no workflow or human moved
/// it since, or the workflow accounts for nothing yet.
pub fn drift(session: &Session, state: &State) -> Result<Option<MainDrift>, EngineError> {
    let Some(since) = state.main_tip.as_deref() else {
        return Ok(None);
    };
    let main = session.main_branch(Some(state))?;
    let Some(line) = session.store.first_parents_since(&main, since, WALK)? else {
        return Ok(None);
    };
    if line.reached && line.commits.is_empty() {
        return Ok(None);
    }
    let merges = session.store.workflow_merges()?;
    let commits: Vec<ForeignCommit> = line
        .commits
        .into_iter()
        .filter(|(commit, _)| !merges.contains(commit))
        .map(|(commit, subject)| ForeignCommit { commit, subject })
        .collect();
    if line.reached && commits.is_empty() {
        return Ok(None);
    }
    Ok(Some(MainDrift {
        main,
        since: since.to_string(),
        commits,
        rewritten: !line.reached,
    }))
}
