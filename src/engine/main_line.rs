//! Whether the main branch moved outside the workflow (docs/integrity.md, "main moves only
//! through a workflow or a human"): first-parent commits on main after the tip the workflow
//! accounts for (its pin, its last merge, a human's `repin`) that no workflow merged.

use serde::Serialize;

use super::{EngineError, Facts, Session};
use crate::workflow::State;
use crate::workflow::briefing::Notice;

/// How far back main's first-parent line is followed: a longer stretch since the last
/// accounted tip counts as not followed, which a human settles with `repin`.
const WALK: usize = 1000;

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
                .map(|c| format!("{} \"{}\"", crate::short_id(&c.commit), c.subject))
                .collect(),
            rewritten: self.rewritten,
        }
    }
}

/// Transitions of another workflow that merged into main can be this much older than the
/// tip this workflow accounts for: clocks of two machines disagree.
const CLOCK_SKEW: i64 = 24 * 3600;

/// Which of `candidates` (main's commits since `since`, newest first) are accounted for by a
/// chain that replays clean from the record to its tip: a merge a workflow recorded, or a
/// commit at or before a main tip a human's `repin` accounted for, in any workflow's chain
/// (a human who looked at main once settles it for every workflow). A record in a chain that
/// does not replay clean accounts for nothing. Only the stretch of each chain since `since`
/// is read.
fn workflow_merges(
    session: &Session,
    since: &str,
    candidates: &[(String, String)],
) -> Result<std::collections::HashSet<String>, EngineError> {
    let store = &session.store;
    let not_before = store.commit_time(since).unwrap_or(0) - CLOCK_SKEW;
    let mut recognised = std::collections::HashSet::new();
    for record in store.merge_records(not_before)? {
        if !candidates.iter().any(|(c, _)| *c == record.main)
            || (!record.repin && recognised.contains(&record.main))
        {
            continue;
        }
        let stop = store
            .commit_record(record.transition)?
            .parents
            .first()
            .copied();
        let chain = super::chain::audit_chain(store, &record.workflow, record.tip, stop)?;
        if chain.forged.is_some() {
            continue;
        }
        if record.repin {
            // A human's answer, held to what the configuration pinned for it demands: an
            // unsigned repin under `require = "signature"` accounts for nothing.
            let name = record
                .workflow
                .rsplit_once("/workflows/")
                .map_or(record.workflow.as_str(), |(_, name)| name);
            let answers = super::answers::judge_answers(session, name, record.transition, stop)?;
            if answers.iter().any(super::answers::AnswerCheck::fails) {
                continue;
            }
            let at = candidates.iter().position(|(c, _)| *c == record.main);
            for (commit, _) in at.map_or(&[][..], |at| &candidates[at..]) {
                recognised.insert(commit.clone());
            }
        } else {
            recognised.insert(record.main);
        }
    }
    Ok(recognised)
}

/// How main stands against what `state` accounts for; `None` when no workflow or human moved
/// it since, or the workflow accounts for nothing yet.
pub fn drift(session: &Session, state: &State) -> Result<Option<MainDrift>, EngineError> {
    if accounted_since(state).is_none() {
        return Ok(None);
    }
    drift_on(session, state, &session.main_branch(Some(state))?)
}

/// The tip `state` accounts for main from: a PR begun before main_tip was recorded accounts
/// for main from its pin.
fn accounted_since(state: &State) -> Option<&str> {
    state.main_tip.as_deref().or(state
        .pr()
        .and_then(|pr| pr.pin.as_ref())
        .map(|p| p.commit.as_str()))
}

/// [`drift`] of `main`, the workflow's main branch read already.
pub fn drift_on(
    session: &Session,
    state: &State,
    main: &str,
) -> Result<Option<MainDrift>, EngineError> {
    let Some(since) = accounted_since(state) else {
        return Ok(None);
    };
    let main = main.to_string();
    let Some(line) = session.store.first_parents_since(&main, since, WALK)? else {
        // main is gone: what it led to is nobody's to account for.
        return Ok(Some(MainDrift {
            main,
            since: since.to_string(),
            commits: Vec::new(),
            rewritten: true,
        }));
    };
    if line.reached && line.commits.is_empty() {
        return Ok(None);
    }
    if !line.reached && behind(session, &line.tip, since) {
        // This clone's main has not caught up with a merge the workflow made (or fetched):
        // nothing moved here that the workflow does not account for; `main_behind_remote`
        // says how far behind it is.
        return Ok(None);
    }
    let merges = workflow_merges(session, since, &line.commits)?;
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

/// True when `tip` lies on `since`'s first-parent line: main stands behind the tip the
/// workflow accounts for, as in a clone that has not pulled another clone's merge.
fn behind(session: &Session, tip: &str, since: &str) -> bool {
    let (Ok(tip), Ok(since)) = (
        gix::ObjectId::from_hex(tip.as_bytes()),
        gix::ObjectId::from_hex(since.as_bytes()),
    ) else {
        return false;
    };
    session
        .store
        .relation(tip, since)
        .is_ok_and(|r| r.ahead == 0 && r.base == Some(tip))
}

impl Session {
    /// What every briefing and `status` warn about besides the configuration: HEAD off the PR
    /// branch, and main moved outside the workflow.
    pub fn state_warnings(&self, state: &State) -> Result<Vec<Notice>, EngineError> {
        let mut notices: Vec<Notice> = self.branch_warning(state)?.into_iter().collect();
        notices.extend(drift(self, state)?.map(|d| d.notice()));
        if let Ok(Some(remote)) = super::remote::coordination_remote(self, state) {
            let main = self.main_branch(Some(state))?;
            notices.extend(self.main_behind_remote(main, remote)?);
        }
        Ok(notices)
    }

    /// [`Self::state_warnings`] under the facts of the command that asks.
    pub fn state_warnings_on(
        &self,
        state: &State,
        facts: &Facts,
    ) -> Result<Vec<Notice>, EngineError> {
        let mut notices: Vec<Notice> = self.branch_warning(state)?.into_iter().collect();
        notices.extend(drift_on(self, state, &facts.main)?.map(|d| d.notice()));
        if let Ok(Some(remote)) = super::remote::remote_under(self, facts.config()) {
            notices.extend(self.main_behind_remote(facts.main.clone(), remote)?);
        }
        Ok(notices)
    }

    /// main behind the workflows' remote's main as last fetched (no network: `status` stays
    /// cheap); a remote that is not there, or was never fetched, says nothing.
    fn main_behind_remote(
        &self,
        main: String,
        remote: String,
    ) -> Result<Option<Notice>, EngineError> {
        // In-process, along first parents: two ref reads when main is level, as it mostly is.
        let (Some(local), Some(theirs)) = (
            self.store.ref_tip(&crate::store::branch_ref(&main))?,
            self.store.tracking_branch(&remote, &main)?,
        ) else {
            return Ok(None);
        };
        if local == theirs {
            return Ok(None);
        }
        let Ok(relation) = self.store.relation(local, theirs) else {
            return Ok(None);
        };
        let behind = u64::try_from(relation.behind).unwrap_or(u64::MAX);
        Ok(
            (relation.base.is_some() && behind > 0).then_some(Notice::MainBehindRemote {
                main,
                remote,
                behind,
            }),
        )
    }
}
