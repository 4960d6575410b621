//! Table tests of the final check's pure decisions: what the clean check's gates outcome and
//! the changed tests' policy make of the squash.

use super::*;
use crate::workflow::ticket::{FailedGate, GateResult, GateVerdict};

fn gates(result: GateVerdict, failed: Option<&str>, changed: &[&str]) -> Outcome {
    Outcome::Gates {
        result: GateResult {
            result,
            ran: vec!["tests".into()],
            failed: failed.map(|gate| FailedGate {
                gate: gate.into(),
                exit: "exit 1".into(),
                tail: "boom".into(),
            }),
        },
        changed: changed.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn the_gates_outcome_refuses_a_changed_tree_first_then_a_failed_gate() {
    let cases: Vec<(Outcome, Option<FinalCheckRefusal>)> = vec![
        (gates(GateVerdict::Pass, None, &[]), None),
        (
            gates(GateVerdict::Fail, Some("tests"), &[]),
            Some(FinalCheckRefusal::CleanCheckFailed {
                gate: "tests".into(),
                exit: "exit 1".into(),
                tail: "boom".into(),
            }),
        ),
        (
            gates(GateVerdict::Fail, Some("tests"), &["a.txt"]),
            Some(FinalCheckRefusal::ChangedTree {
                what: "a preflight gate on the squashed commit".into(),
                paths: vec!["a.txt".into()],
            }),
        ),
        (
            Outcome::PutBack {
                paths: Vec::new(),
                result: GateResult {
                    result: GateVerdict::Fail,
                    ran: Vec::new(),
                    failed: None,
                },
            },
            None,
        ),
    ];
    for (outcome, expected) in cases {
        assert_eq!(
            gates_refusal(&outcome).map(|(_, refused)| refused),
            expected,
            "{outcome:?}"
        );
    }
}

fn changed(mode: &str, passed: Option<bool>, approved: bool) -> ChangedTests {
    ChangedTests {
        paths: vec!["tests/a.sh".into()],
        mode: mode.into(),
        passed,
        failed_gate: (passed == Some(false)).then(|| "tests".into()),
        approvals: if approved {
            vec![crate::workflow::notes::TestApproval {
                commit: "c".into(),
                tests: vec!["tests/a.sh".into()],
                by: "signed by alice".into(),
            }]
        } else {
            Vec::new()
        },
    }
}

#[test]
fn changed_tests_refuse_under_enforce_when_failing_and_under_report_unless_approved() {
    let enforce_fails = Some(FinalCheckRefusal::PinnedTestsFail {
        paths: vec!["tests/a.sh".into()],
        failed_gate: Some("tests".into()),
    });
    let unapproved = Some(FinalCheckRefusal::TestChangesUnapproved {
        paths: vec!["tests/a.sh".into()],
        unapproved: vec!["tests/a.sh".into()],
        failed_gate: Some("tests".into()),
        tree: "tree".into(),
    });
    let cases = [
        (
            PinnedTests::Enforce,
            changed("enforce", Some(true), false),
            None,
        ),
        (
            PinnedTests::Enforce,
            changed("enforce", Some(false), false),
            enforce_fails,
        ),
        (PinnedTests::Enforce, changed("enforce", None, false), None),
        (
            PinnedTests::Report,
            changed("report", Some(true), false),
            None,
        ),
        (
            PinnedTests::Report,
            changed("report", Some(false), false),
            unapproved,
        ),
        (
            PinnedTests::Report,
            changed("report", Some(false), true),
            None,
        ),
    ];
    for (mode, tests, expected) in cases {
        assert_eq!(changed_refusal(mode, &tests, "tree"), expected, "{tests:?}");
    }
}
