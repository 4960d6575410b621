//! A human's commit on main, judged off the agent's machine as the server hook judges a push
//! of main (src/engine/attest/receive.rs): the hook lets a human listed in `[attest] humans`
//! move main; here a commit passes when a `repin` accounts for it (its recorded main tip is
//! that commit or descends from it) and a listed human signed that repin (docs/integrity.md,
//! "attest").

use gix::ObjectId;

use super::verifier::{Chain, Verifier};
use crate::engine::EngineError;
use crate::engine::answers::{self, AnswerCheck, AnswerVerdict};
use crate::workflow::Event;

/// The repin that accounts for a human's commit on main.
pub struct Accounted {
    pub chain: Chain,
    pub transition: ObjectId,
    /// Its answer, judged: signed by a listed human.
    pub answer: AnswerCheck,
}

/// The first repin (chains in the order given, each from its tip back) that accounts for
/// `commit` and that a listed human signed: `Ok(None)` when no repin accounts for it,
/// `Err` with why each repin that does is not enough.
pub fn locate(
    verifier: &Verifier,
    chains: &[Chain],
    commit: &str,
) -> Result<Result<Option<Accounted>, Vec<String>>, EngineError> {
    let mut why = Vec::new();
    for chain in chains {
        let session = verifier.session(chain)?;
        let store = &session.store;
        let mut next = Some(chain.tip);
        while let Some(id) = next {
            let Ok(record) = store.commit_record(id) else {
                // A chain the repository does not hold in full ends where its objects do.
                break;
            };
            next = record.parents.first().copied();
            let Some(Ok(Event::Repinned { pin })) =
                record.event.as_deref().map(serde_json::from_str::<Event>)
            else {
                continue;
            };
            let accounts = pin.commit == commit
                || session
                    .git
                    .is_ancestor(commit, &pin.commit)
                    .unwrap_or(false);
            let Some(parent) = next.filter(|_| accounts) else {
                continue;
            };
            let name = format!(
                "the repin {} of workflow {}",
                crate::short_id(&id.to_string()),
                chain.workflow
            );
            // The chain from the repin on replays clean: a repin written by hand is none.
            let replay =
                crate::engine::chain::audit_chain(store, &chain.workflow, chain.tip, Some(parent))?;
            if let Some(forged) = replay.forged {
                why.push(format!(
                    "{name} is in a chain that does not replay: {forged}"
                ));
                continue;
            }
            let checks = answers::judge_answers(&session, &chain.workflow, id, Some(parent))?;
            let wanted = id.to_string();
            let Some(check) = checks.into_iter().find(|c| c.commit == wanted) else {
                why.push(format!("{name} records no human's answer"));
                continue;
            };
            let principal = match &check.verdict {
                AnswerVerdict::Signed { .. } if !check.bound => {
                    why.push(format!(
                        "{name} was signed before a repin's signature covered the main commit it \
                         accounts for: a human repins again (git orchestrate repin --sign-key KEY)"
                    ));
                    continue;
                }
                AnswerVerdict::Signed { principal } => principal.clone(),
                AnswerVerdict::Unsigned { .. } => {
                    why.push(format!(
                        "{name} is not signed: only a repin a human listed in [attest] humans signed \
                         (git orchestrate repin --sign-key KEY) accounts for a commit on main here"
                    ));
                    continue;
                }
                AnswerVerdict::Bad { why: bad } => {
                    why.push(format!(
                        "{name} carries a signature that does not hold: {bad}"
                    ));
                    continue;
                }
            };
            let before = store.read_at(parent, &chain.reference)?;
            let config = answers::answer_config(&session, &before.state)?;
            if config.attest.human(None, Some(&principal)).is_none() {
                why.push(format!(
                    "{name} is signed by {principal}, whom [attest] humans (as pinned for it) does not \
                     list as \"user:{principal}\""
                ));
                continue;
            }
            return Ok(Ok(Some(Accounted {
                chain: chain.clone(),
                transition: id,
                answer: check,
            })));
        }
    }
    Ok(if why.is_empty() { Ok(None) } else { Err(why) })
}
