//! What a PR's chain remembers of its final checks (docs/integrity.md, "Approved by name",
//! "The chain remembers the final check's refusals"): every earlier refusal of the same tree,
//! so that a pass after one is `flaky`, refused unless a human answered for that tree by name
//! (`approve --flaky`) under the policy the check runs under.

use super::refusal::{AWAITING_APPROVAL, FinalCheckRefusal};
use crate::engine::answers::{self, AnswerCheck};
use crate::engine::attest::memory::EarlierRefusal;
use crate::engine::{EngineError, Session};
use crate::store::Snapshot;
use crate::workflow::Event;

/// The final check's refusals of `tree` the PR's chain records up to `snap`, oldest first.
/// A refusal that awaited a human's approval by name is the policy's, not the tree's, and is
/// left out: a pass once the human approved is no luck.
pub fn earlier_refusals(
    session: &Session,
    snap: &Snapshot,
    tree: &str,
) -> Result<Vec<EarlierRefusal>, EngineError> {
    let store = &session.store;
    let stop = crate::engine::chain::pr_stop(store, snap.tip)?;
    let mut found = Vec::new();
    for item in crate::engine::chain::segment(store, snap.tip, stop) {
        let (_, record) = item?;
        let Some(Ok(Event::FinalCheckRefused { commit, reason })) =
            record.event.as_deref().map(serde_json::from_str::<Event>)
        else {
            continue;
        };
        if reason.starts_with(AWAITING_APPROVAL)
            || session.store.tree_of(&commit).ok().as_deref() != Some(tree)
        {
            continue;
        }
        found.push(EarlierRefusal {
            commit,
            time: record.history.time.clone(),
            reasons: vec![reason],
        });
    }
    found.reverse();
    Ok(found)
}

/// What the chain's memory makes of a final check that passed on a tree.
pub struct Judged {
    /// The final check's earlier refusals of the tree, oldest first.
    pub earlier: Vec<EarlierRefusal>,
    /// The human answer that accepted a pass after them.
    pub accepted_by: Option<AnswerCheck>,
    /// Flaky: refused, when no human accepted it.
    pub refused: Option<FinalCheckRefusal>,
}

/// After a final check that passed on `tree`: refused as flaky when the chain records an
/// earlier refusal of it and no human accepted the pass; the refusals, and the answer that
/// accepted it, are returned for the record either way.
pub fn judge(session: &Session, snap: &Snapshot, tree: &str) -> Result<Judged, EngineError> {
    let earlier = earlier_refusals(session, snap, tree)?;
    if earlier.is_empty() {
        return Ok(Judged {
            earlier,
            accepted_by: None,
            refused: None,
        });
    }
    let stop = crate::engine::chain::pr_stop(&session.store, snap.tip)?;
    // Held to the rule `attest` and the server hook hold an answer to: given under the
    // policy this check ran under.
    let policy = answers::answer_policy(session, &snap.state)?;
    let accepted_by = crate::engine::attest::memory::accepted(
        session,
        (snap.tip, stop),
        tree,
        policy.as_deref(),
        crate::engine::attest::memory::Answerer::Standing,
    )?;
    let refused = accepted_by
        .is_none()
        .then(|| FinalCheckRefusal::FailedBefore {
            tree: tree.to_string(),
            earlier: earlier
                .iter()
                .map(|e| format!("in {} at {}", crate::short_id(&e.commit), e.time))
                .collect(),
        });
    Ok(Judged {
        earlier,
        accepted_by,
        refused,
    })
}
