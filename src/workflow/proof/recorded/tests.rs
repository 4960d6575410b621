//! Recorded plans held against the chain's, and what a verdict takes from that, as tables.

use super::super::{final_gates, gates};
use super::*;
use pretty_assertions::assert_eq;

fn plan(squash: &str, existing: &[&str]) -> ProofPlan {
    let existing: Vec<String> = existing.iter().map(|p| p.to_string()).collect();
    final_gates(squash, "pin", Some("blob"), &existing)
}

/// A case: its name, the plans recorded, the chain's, whether the check was complete, and
/// what holding them gives.
type Case = (&'static str, Vec<ProofPlan>, Vec<ProofPlan>, bool, Held);

#[test]
fn recorded_plans_are_held_against_the_chains() {
    let two = [plan("s", &["tests/a.sh"]), gates("m", Some("blob"))];
    let cases: Vec<Case> = vec![
        ("the same", two.to_vec(), two.to_vec(), true, Held::Agrees),
        ("none from none", vec![], vec![], true, Held::Agrees),
        ("none recorded", vec![], two.to_vec(), true, Held::None),
        (
            "one short",
            two[..1].to_vec(),
            two.to_vec(),
            true,
            Held::Differs("1 plan is recorded, and the chain gives 2".into()),
        ),
        // A check refused part way made only its first plans: those are held.
        (
            "refused part way",
            two.to_vec(),
            two[..1].to_vec(),
            false,
            Held::Agrees,
        ),
        (
            "more than a complete check made",
            two.to_vec(),
            two[..1].to_vec(),
            true,
            Held::Differs("2 plans are recorded, and the chain gives 1".into()),
        ),
        (
            "a put-back test dropped",
            vec![plan("s", &[])],
            vec![plan("s", &["tests/a.sh"])],
            true,
            Held::Differs(
                "plan 1: 1 obligations are recorded, and the chain gives 2 (the first not \
                 recorded: {\"obligation\":\"passes_on\",\"tree\":\"s\",\"tests\":{\"kind\":\
                 \"gated\",\"subtask\":null,\"from\":\"pin\",\"paths\":[\"tests/a.sh\"]}})"
                    .into(),
            ),
        ),
        (
            "another squash",
            vec![plan("t", &[])],
            vec![plan("s", &[])],
            true,
            Held::Differs(
                "plan 1: its commit is recorded as \"t\", and the chain gives \"s\"".into(),
            ),
        ),
    ];
    for (name, recorded, expected, complete, held) in cases {
        assert_eq!(hold(&recorded, &expected, complete), held, "{name}");
    }
}

#[test]
fn a_difference_always_fails_and_no_plan_fails_only_under_require() {
    let differs = Held::Differs("plan 1: its base differs".into());
    let cases = [
        (Held::Agrees, true, None),
        (Held::Agrees, false, None),
        (
            differs.clone(),
            false,
            Some(Finding::Reason(
                "the proof plan the ticket's final check recorded is not the one its chain \
                 gives: plan 1: its base differs"
                    .into(),
            )),
        ),
        (
            differs,
            true,
            Some(Finding::Reason(
                "the proof plan the ticket's final check recorded is not the one its chain \
                 gives: plan 1: its base differs"
                    .into(),
            )),
        ),
        (
            Held::None,
            true,
            Some(Finding::Reason(
                "the ticket's final check recorded no proof plan, and the pinned configuration \
                 requires one ([verify] recorded_plans = \"require\"): nothing shows what that \
                 check ran"
                    .into(),
            )),
        ),
        (
            Held::None,
            false,
            Some(Finding::Warning(
                "the ticket's final check recorded no proof plan (its chain was made before \
                 plans were recorded, or they were removed; [verify] recorded_plans = \
                 \"require\" fails it): the plan the chain gives was run"
                    .into(),
            )),
        ),
    ];
    for (held, require, finding) in cases {
        assert_eq!(
            judge(&held, "the ticket's", require),
            finding,
            "{held:?} {require}"
        );
    }
}
