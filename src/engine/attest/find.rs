//! Which workflow transition a commit's verdict rests on: the `merge` that recorded it as
//! main's new tip, or the finalized PR whose head it is.

use gix::ObjectId;

use super::verifier::Chain;
use crate::engine::EngineError;
use crate::store::Store;
use crate::workflow::Event;

/// What the commit is to a workflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A workflow's merge into main: `transition` recorded it, `pr_state` (its parent) is
    /// the PR as finalization left it.
    Merge {
        transition: ObjectId,
        pr_state: ObjectId,
    },
    /// The head of a finalized PR (its squashed commit or the master-plan commit on it), as
    /// the transition `pr_state` records it.
    Head { pr_state: ObjectId },
}

impl Target {
    /// The newest transition the verdict reads: the merge, or the PR state.
    pub fn transition(&self) -> ObjectId {
        match self {
            Target::Merge { transition, .. } => *transition,
            Target::Head { pr_state } => *pr_state,
        }
    }

    pub fn pr_state(&self) -> ObjectId {
        match self {
            Target::Merge { pr_state, .. } | Target::Head { pr_state } => *pr_state,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Target::Merge { .. } => "merge",
            Target::Head { .. } => "pr-head",
        }
    }
}

/// The first chain (in the order given) that records `commit`, and what it records. A merge
/// is looked for along each whole chain; a PR head at chain tips and before each merge.
pub fn locate(
    store: &Store,
    chains: &[Chain],
    commit: &str,
) -> Result<Option<(Chain, Target)>, EngineError> {
    for chain in chains {
        if let Some(target) = in_chain(store, chain, commit)? {
            return Ok(Some((chain.clone(), target)));
        }
    }
    Ok(None)
}

fn in_chain(store: &Store, chain: &Chain, commit: &str) -> Result<Option<Target>, EngineError> {
    let mut next = Some(chain.tip);
    let mut head = None;
    let mut first = true;
    while let Some(id) = next {
        let Ok(record) = store.commit_record(id) else {
            // A chain the repository does not hold in full ends where its objects do.
            break;
        };
        next = record.parents.first().copied();
        let merged = match record.event.as_deref().map(serde_json::from_str::<Event>) {
            Some(Ok(Event::Merged { main, .. })) => Some(main),
            _ => None,
        };
        if let Some(main) = &merged
            && main.as_deref() == Some(commit)
            && let Some(parent) = next
        {
            return Ok(Some(Target::Merge {
                transition: id,
                pr_state: parent,
            }));
        }
        // A PR's head is found where a finalized PR can be: at the tip, and just before a
        // merge; the first found is kept while a merge of it may still be further back.
        let look = first || merged.is_some();
        first = false;
        let at = if merged.is_some() { next } else { Some(id) };
        if head.is_none()
            && look
            && let Some(at) = at
            && is_head_of(store, chain, at, commit)
        {
            head = Some(Target::Head { pr_state: at });
        }
    }
    Ok(head)
}

fn is_head_of(store: &Store, chain: &Chain, at: ObjectId, commit: &str) -> bool {
    let Ok(snap) = store.read_at(at, &chain.reference) else {
        return false;
    };
    let state = &snap.state;
    state.final_commit() == Some(commit) || state.plan_commit() == Some(commit)
}
