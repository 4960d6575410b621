//! Table tests of the executor's pure decision: when a plan's run stops.

use super::*;

fn gates(result: GateVerdict) -> Outcome {
    Outcome::Gates {
        result: GateResult {
            result,
            ran: Vec::new(),
            failed: None,
        },
        changed: Vec::new(),
    }
}

#[test]
fn a_plan_stops_as_its_stop_says_and_a_pairs_failure_waits_for_its_tree_check() {
    let tree = Outcome::Tree {
        by: None,
        changed: Vec::new(),
    };
    let (pass, fail) = (gates(GateVerdict::Pass), gates(GateVerdict::Fail));
    // (stop, outcome, failed, pending, waits, stops)
    let cases = [
        (Stop::Never, &fail, true, false, false, false),
        (Stop::WhenGatesFail, &fail, true, false, false, true),
        (Stop::WhenGatesFail, &pass, false, false, false, false),
        (Stop::WhenGatesFail, &tree, true, false, false, false),
        (Stop::AtFirstFailure, &pass, false, false, false, false),
        (Stop::AtFirstFailure, &tree, true, false, false, true),
        (Stop::AtFirstFailure, &tree, false, true, false, true),
        (Stop::AtFirstFailure, &fail, true, false, true, false),
    ];
    for (stop, outcome, failed, pending, waits, expected) in cases {
        assert_eq!(
            stops(stop, outcome, failed, pending, waits),
            expected,
            "{stop:?} {outcome:?} failed {failed} pending {pending} waits {waits}"
        );
    }
}
