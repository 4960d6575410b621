use super::*;
use crate::workflow::evidence::Kind;

fn gated(subtask: Option<&str>, from: &str, paths: &[&str]) -> Tests {
    Tests::Gated {
        subtask: subtask.map(str::to_string),
        from: from.to_string(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
    }
}

fn fails_on(base: &str, tests: Tests) -> Obligation {
    Obligation::FailsOn {
        base: base.to_string(),
        tests,
    }
}

/// A change's `(how, path)` listing.
type Changes = Vec<(&'static str, String)>;

/// The base's exit, the tree's, why no test ran, the evidence's shortfall, and the judgement.
type PairCase<'a> = (
    ExitRecord,
    ExitRecord,
    Option<&'a str>,
    Option<&'a (Shortfall, Side)>,
    Option<PairFailure>,
);

fn is_test(path: &str) -> bool {
    path.starts_with("tests/")
}

fn pinned(task: usize, paths: &[&str]) -> PinnedTest {
    PinnedTest {
        step: StepId::new(task, 0),
        command: format!("./test-{task}"),
        tree: format!("red{task}"),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        shared: Vec::new(),
    }
}

#[test]
fn a_reports_plan_runs_the_gates_and_the_tests_it_added_or_changed_on_its_base() {
    // (changes, obligations after GatesPass)
    let cases: Vec<(Changes, Vec<Obligation>)> = vec![
        (vec![("modified", "src/a.rs".into())], vec![]),
        (vec![("removed", "tests/old.rs".into())], vec![]),
        (
            vec![
                ("added", "tests/new.rs".into()),
                ("modified", "tests/old.rs".into()),
                ("removed", "tests/gone.rs".into()),
                ("modified", "src/a.rs".into()),
            ],
            vec![fails_on(
                "base",
                gated(None, "head", &["tests/new.rs", "tests/old.rs"]),
            )],
        ),
    ];
    for (changes, after) in cases {
        let plan = ticket_report("head", "base", Some("blob"), &changes, is_test);
        let mut expected = vec![Obligation::GatesPass];
        expected.extend(after);
        assert_eq!(
            plan,
            ProofPlan {
                commit: "head".into(),
                base: "base".into(),
                policy: Some("blob".into()),
                obligations: expected,
                stop: Stop::Never,
            },
            "{changes:?}"
        );
    }
}

#[test]
fn a_tickets_squash_plan_runs_the_gates_then_each_subtask_with_tests_on_its_base() {
    let subtasks = [
        AcceptedSubtask {
            id: "S1",
            base: "b1",
            accepted: "a1",
            changes: vec![("added", "tests/one.rs".into())],
        },
        AcceptedSubtask {
            id: "S2",
            base: "a1",
            accepted: "a2",
            changes: vec![("modified", "src/lib.rs".into())],
        },
        AcceptedSubtask {
            id: "S3",
            base: "a2",
            accepted: "a3",
            changes: vec![
                ("removed", "tests/one.rs".into()),
                ("modified", "tests/two.rs".into()),
            ],
        },
    ];
    let existing = ["tests/old.rs".to_string()];
    let plan = ticket_squash("squash", "pin", None, (&subtasks, &existing), is_test);
    assert_eq!(
        plan,
        ProofPlan {
            commit: "squash".into(),
            base: "pin".into(),
            policy: None,
            obligations: vec![
                Obligation::GatesPass,
                fails_on("b1", gated(Some("S1"), "a1", &["tests/one.rs"])),
                fails_on("a2", gated(Some("S3"), "a3", &["tests/two.rs"])),
                Obligation::PassesOn {
                    tree: "squash".into(),
                    tests: gated(None, "pin", &["tests/old.rs"]),
                },
            ],
            stop: Stop::WhenGatesFail,
        }
    );
    assert_eq!(
        ticket_squash("squash", "pin", None, (&[], &[]), is_test).obligations,
        [Obligation::GatesPass]
    );
    assert_eq!(
        final_gates("squash", "pin", Some("blob"), &[]),
        ProofPlan {
            commit: "squash".into(),
            base: "pin".into(),
            policy: Some("blob".into()),
            obligations: vec![Obligation::GatesPass],
            stop: Stop::WhenGatesFail,
        }
    );
    assert_eq!(
        final_gates("squash", "pin", None, &existing).obligations,
        [
            Obligation::GatesPass,
            Obligation::PassesOn {
                tree: "squash".into(),
                tests: gated(None, "pin", &["tests/old.rs"]),
            }
        ]
    );
}

#[test]
fn a_final_checks_plan_pairs_each_pinned_test_on_the_base_and_the_tree_then_the_tree_unchanged() {
    let one = pinned(0, &["tests/a.rs"]);
    let two = pinned(1, &["tests/b.rs"]);
    for reds in [vec![], vec![one.clone()], vec![one.clone(), two.clone()]] {
        let plan = final_check("squash", "tree", "base", Some("blob"), &reds);
        let expected: Vec<Obligation> = reds
            .iter()
            .flat_map(|red| {
                [
                    fails_on("base", Tests::Pinned(red.clone())),
                    Obligation::PassesOn {
                        tree: "tree".into(),
                        tests: Tests::Pinned(red.clone()),
                    },
                    Obligation::TreeUnchanged,
                ]
            })
            .collect();
        assert_eq!(plan.obligations, expected);
        assert_eq!(plan.obligations.len(), 3 * reds.len());
        assert_eq!(
            (plan.commit.as_str(), plan.base.as_str(), plan.stop),
            ("squash", "base", Stop::AtFirstFailure)
        );
        assert_eq!(plan.policy.as_deref(), Some("blob"));
    }
}

#[test]
fn a_pair_holds_only_failing_on_the_base_and_passing_on_the_tree_with_a_test_run_and_evidence() {
    let fail = ExitRecord::Code(1);
    let pass = ExitRecord::Code(0);
    let short = (
        Shortfall::NothingFailedOnBase { kind: Kind::Junit },
        Side::Base,
    );
    let final_short = (
        Shortfall::Unreported {
            what: "t".to_string(),
        },
        Side::Final,
    );
    let cases: Vec<PairCase> = vec![
        (fail, pass, None, None, None),
        (pass, pass, None, None, Some(PairFailure::PassesOnBase)),
        // Passing on the base is said first, whatever else is wrong.
        (
            pass,
            fail,
            Some("x"),
            Some(&short),
            Some(PairFailure::PassesOnBase),
        ),
        (
            fail,
            ExitRecord::Code(2),
            None,
            None,
            Some(PairFailure::FailsOnTree {
                exit: ExitRecord::Code(2).to_string(),
            }),
        ),
        (
            fail,
            pass,
            Some("no test ran"),
            Some(&short),
            Some(PairFailure::RunsNoTest {
                why: "no test ran".into(),
            }),
        ),
        (
            fail,
            pass,
            None,
            Some(&short),
            Some(PairFailure::Evidence {
                on_base: true,
                why: short.0.to_string(),
            }),
        ),
        (
            fail,
            pass,
            None,
            Some(&final_short),
            Some(PairFailure::Evidence {
                on_base: false,
                why: final_short.0.to_string(),
            }),
        ),
    ];
    for (on_base, on_tree, not_run, shortfall, expected) in cases {
        assert_eq!(
            judge_pair(on_base, on_tree, not_run, shortfall),
            expected,
            "{on_base:?} {on_tree:?} {not_run:?} {shortfall:?}"
        );
    }
}

#[test]
fn tests_changed_are_the_added_and_modified_test_paths_in_order() {
    let changes = [
        ("modified", "tests/b.rs".to_string()),
        ("removed", "tests/c.rs".to_string()),
        ("added", "tests/a.rs".to_string()),
        ("added", "src/a.rs".to_string()),
    ];
    assert_eq!(
        tests_changed(&changes, is_test),
        ["tests/b.rs".to_string(), "tests/a.rs".to_string()]
    );
    assert!(tests_changed(&[], is_test).is_empty());
}

#[test]
fn a_plan_is_recorded_in_one_stable_json_shape_and_read_back_as_it_was() {
    let plan = final_check(
        "squash",
        "tree",
        "base",
        Some("blob"),
        &[pinned(0, &["t/a.sh"])],
    );
    let json = serde_json::to_value(&plan).expect("a plan is JSON");
    assert_eq!(
        json,
        serde_json::json!({
            "commit": "squash", "base": "base", "policy": "blob", "stop": "at_first_failure",
            "obligations": [
                {"obligation": "fails_on", "base": "base", "tests": {"kind": "pinned",
                 "step": "1.1", "command": "./test-0", "tree": "red0",
                 "paths": ["t/a.sh"], "shared": []}},
                {"obligation": "passes_on", "tree": "tree", "tests": {"kind": "pinned",
                 "step": "1.1", "command": "./test-0", "tree": "red0",
                 "paths": ["t/a.sh"], "shared": []}},
                {"obligation": "tree_unchanged"},
            ],
        })
    );
    assert_eq!(serde_json::from_value::<ProofPlan>(json).ok(), Some(plan));
    let gates = serde_json::to_value(final_gates("s", "b", None, &["t/old.sh".into()]))
        .expect("a plan is JSON");
    assert_eq!(
        gates,
        serde_json::json!({
            "commit": "s", "base": "b", "policy": null, "stop": "when_gates_fail",
            "obligations": [
                {"obligation": "gates_pass"},
                {"obligation": "passes_on", "tree": "s", "tests": {"kind": "gated",
                 "subtask": null, "from": "b", "paths": ["t/old.sh"]}},
            ],
        })
    );
}

#[test]
fn a_recorded_plan_that_differs_from_the_chains_is_named_where_it_first_differs() {
    let red = pinned(0, &["t/a.sh"]);
    let full = final_check(
        "squash",
        "tree",
        "base",
        Some("blob"),
        std::slice::from_ref(&red),
    );
    let mut path_dropped = full.clone();
    path_dropped.obligations[0] = fails_on(
        "base",
        Tests::Pinned(PinnedTest {
            paths: Vec::new(),
            ..red.clone()
        }),
    );
    let mut last_dropped = full.clone();
    last_dropped.obligations.pop();
    let mut other_base = full.clone();
    other_base.base = "elsewhere".into();
    let gates = final_gates("squash", "base", Some("blob"), &[]);
    let cases: Vec<(Vec<ProofPlan>, Option<&str>)> = vec![
        (vec![gates.clone(), full.clone()], None),
        (
            vec![full.clone()],
            Some("1 plan is recorded, and the chain gives 2"),
        ),
        (
            vec![gates.clone(), other_base],
            Some("plan 2: its base is recorded as \"elsewhere\", and the chain gives \"base\""),
        ),
        (
            vec![gates.clone(), last_dropped],
            Some(
                r#"plan 2: 2 obligations are recorded, and the chain gives 3 (the first not recorded: {"obligation":"tree_unchanged"})"#,
            ),
        ),
    ];
    for (recorded, expected) in cases {
        assert_eq!(
            difference(&recorded, &[gates.clone(), full.clone()]).as_deref(),
            expected,
            "{recorded:?}"
        );
    }
    let named = difference(&[gates.clone(), path_dropped], &[gates, full]).unwrap_or_default();
    assert!(
        named.starts_with(r#"plan 2: its obligation 1 is recorded as {"obligation":"fails_on""#),
        "{named}"
    );
    assert!(named.contains(r#""paths":[],"#), "{named}");
}

#[test]
fn a_working_trees_plan_is_its_gates_in_place_on_the_tree_taken_before_anything_ran() {
    let cases = [
        (Some("t1"), Reuse::Cache, Recheck::WorktreeTree, "t1"),
        (Some("t2"), Reuse::Cache, Recheck::Unstaged, "t2"),
        (None, Reuse::TestRun, Recheck::WorktreeTree, ""),
    ];
    for (tree, reuse, recheck, at) in cases {
        assert_eq!(
            working_tree(tree, reuse, recheck),
            ProofPlan {
                commit: at.into(),
                base: at.into(),
                policy: None,
                obligations: vec![Obligation::WorkingTreeGates {
                    tree: tree.map(str::to_string),
                    reuse,
                    recheck,
                }],
                stop: Stop::Never,
            },
            "{tree:?} {reuse:?} {recheck:?}"
        );
    }
}

#[test]
fn a_working_tree_fails_on_protected_paths_first_then_a_gate_then_files_changed_meanwhile() {
    let failed = GateFailure {
        name: "test".into(),
        exit: "exit 1".into(),
        output: b"boom".to_vec(),
    };
    let files = vec!["a.txt".to_string()];
    let none: Vec<String> = Vec::new();
    let cases = [
        (&none, None, &none, None),
        (
            &files,
            Some(&failed),
            &files,
            Some(TreeFailure::Protected(files.clone())),
        ),
        (
            &none,
            Some(&failed),
            &files,
            Some(TreeFailure::GateFailed(failed.clone())),
        ),
        (
            &none,
            None,
            &files,
            Some(TreeFailure::ChangedDuring(files.clone())),
        ),
    ];
    for (protected, failed, changed, expected) in cases {
        assert_eq!(tree_failure(protected, failed, changed), expected);
    }
}
