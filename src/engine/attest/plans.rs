//! The proof plans a final check recorded, held against the chain's into a verdict
//! (docs/integrity.md, layer 10, step 4): the one road for a PR's merge (check.rs) and a
//! ticket's (ticket.rs); the judgement is src/workflow/proof/recorded.rs's.

use super::verdict::Verdict;
use crate::config::RecordedPlans;
use crate::workflow::proof::ProofPlan;
use crate::workflow::proof::recorded::{self, Finding};

/// `recorded` (the plans `whose` final check recorded, or why none can be read) held against
/// `expected`, made again from the chain; `complete`: the check made all its plans.
/// `policy`: the pinned `[verify] recorded_plans`. What it finds goes into `verdict`.
pub(super) fn hold(
    verdict: &mut Verdict,
    whose: &str,
    recorded: Result<Vec<ProofPlan>, String>,
    (expected, complete): (&[ProofPlan], bool),
    policy: RecordedPlans,
) {
    let held = match recorded {
        Ok(plans) => recorded::hold(&plans, expected, complete),
        Err(why) => recorded::Held::Differs(why),
    };
    match recorded::judge(&held, whose, policy == RecordedPlans::Require) {
        Some(Finding::Reason(why)) => verdict.reasons.push(why),
        Some(Finding::Warning(why)) => verdict.warnings.push(why),
        None => {}
    }
}
