//! What lifts the server hook's memory of a failed tree (docs/integrity.md, "A judged tree
//! is not judged again"): a human's signed answer in the chain that records the commit, a
//! PR's or a finished ticket's. Apart from src/engine/attest/memory.rs, which the verdicts
//! read: finding a ticket's chain reads the verdicts in turn.

use super::verifier::{Chain, Verifier};
use crate::engine::EngineError;
use crate::engine::answers::AnswerCheck;

/// The human answer that lifts the server's remembered failure of `commit`'s `tree` under
/// `policy`: [`super::memory::accepted`] in the PR's segment of the chain (of `chains`,
/// pushed ones first) that records `commit`, as `attest` looks for it, or
/// [`super::memory::accepted_in_ticket`] in the chain of the ticket whose merge or squash it
/// is; and signed by a key the pinned allowed signers list whatever `[human] require` says.
/// Unsigned, an answer is only attributed, and the agent can write one
/// (`GIT_ORCHESTRATE_HUMAN=1`); what the server remembers failed stays failed until a listed
/// human pushes, or signs (docs/integrity.md, "A judged tree is not judged again").
pub fn accepted_for(
    verifier: &Verifier,
    chains: &[Chain],
    commit: &str,
    tree: &str,
    policy: &str,
) -> Result<Option<AnswerCheck>, EngineError> {
    let Some(first) = chains.first() else {
        return Ok(None);
    };
    let probe = verifier.session(first)?;
    use super::memory::Answerer;
    Ok(match super::find::locate(&probe.store, chains, commit)? {
        Some((chain, target)) => {
            let session = verifier.session(&chain)?;
            let stop = crate::engine::chain::pr_stop(&session.store, target.pr_state())?;
            super::memory::accepted(
                &session,
                (chain.tip, stop),
                tree,
                Some(policy),
                Answerer::Signed,
            )?
        }
        // A ticket's merge or squash: its answers are in the ticket's chain, as `attest`
        // finds the ticket (src/engine/attest/ticket.rs).
        None => match super::ticket::locate(&probe.store, chains, commit)? {
            Some(found) => {
                let session = verifier.session(&found.chain)?;
                super::memory::accepted_in_ticket(
                    &session,
                    (found.chain.tip, &found.ticket),
                    tree,
                    Some(policy),
                    Answerer::Signed,
                )?
            }
            None => None,
        },
    })
}
