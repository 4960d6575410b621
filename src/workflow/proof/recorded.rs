//! The proof plans a final check recorded, held against those the chain gives
//! (docs/integrity.md, layer 10, step 4): one judgement for a PR's merge and a ticket's,
//! which `attest` and the server hook both give, since the hook decides from `attest`'s verdict.

use super::{ProofPlan, difference};

/// What the plans a final check recorded are to those made again from the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    Agrees,
    /// Where they first differ ([`difference`]), or why the record cannot be read.
    Differs(String),
    /// None were recorded where the chain gives some: made before plans were recorded, or
    /// removed since.
    None,
}

/// `recorded` held against `expected`, the plans the same code made again from the chain;
/// when the check was refused part way (not `complete`), only as many recorded plans as it
/// made are held. A recorded plan weaker than the chain's is a difference.
pub fn hold(recorded: &[ProofPlan], expected: &[ProofPlan], complete: bool) -> Held {
    if recorded.is_empty() && !expected.is_empty() {
        return Held::None;
    }
    let recorded = match complete {
        true => recorded,
        false => &recorded[..recorded.len().min(expected.len())],
    };
    difference(recorded, expected).map_or(Held::Agrees, Held::Differs)
}

/// What a verdict takes from [`Held`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// It FAILS, for this reason.
    Reason(String),
    /// It is named, and does not fail.
    Warning(String),
}

/// What the verdict on `whose` merge (`the PR's`, `the ticket's`) takes from `held`, under
/// the pinned `[verify] recorded_plans` (`require`: true): a difference always fails; no
/// plan fails under `require` (else an agent would strip the plans to escape the
/// comparison) and is a warning under `warn`. `None` when they agree.
pub fn judge(held: &Held, whose: &str, require: bool) -> Option<Finding> {
    match held {
        Held::Agrees => None,
        Held::Differs(why) => Some(Finding::Reason(format!(
            "the proof plan {whose} final check recorded is not the one its chain gives: {why}"
        ))),
        Held::None if require => Some(Finding::Reason(format!(
            "{whose} final check recorded no proof plan, and the pinned configuration requires \
             one ([verify] recorded_plans = \"require\"): nothing shows what that check ran"
        ))),
        Held::None => Some(Finding::Warning(format!(
            "{whose} final check recorded no proof plan (its chain was made before plans were \
             recorded, or they were removed; [verify] recorded_plans = \"require\" fails it): \
             the plan the chain gives was run"
        ))),
    }
}

#[cfg(test)]
mod tests;
