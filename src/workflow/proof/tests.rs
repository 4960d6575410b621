use super::*;
use crate::workflow::evidence::{Kind, passes};
use crate::workflow::state::RedTest;

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
        start: None,
        paths: paths.iter().map(|p| p.to_string()).collect(),
        shared: Vec::new(),
        hooks: Vec::new(),
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

fn red_test(command: &str, tree: Option<&str>) -> RedTest {
    RedTest {
        task: 0,
        command: command.to_string(),
        tree: tree.map(str::to_string),
        paths: vec!["tests/t.sh".into()],
        shared: vec!["src/a.rs".into()],
        tests: vec!["t::mul".into()],
        test_files: Default::default(),
        hooks: Vec::new(),
    }
}

fn step_test(expect: Expectation, take_tree: bool) -> Obligation {
    Obligation::StepTest {
        command: "./t".into(),
        expect,
        take_tree,
    }
}

fn rerun(command: &str, tree: Option<&str>, same_command: bool) -> Obligation {
    Obligation::RedRerun {
        command: command.into(),
        tree: tree.map(str::to_string),
        paths: vec!["tests/t.sh".into()],
        tests: vec!["t::mul".into()],
        files: Default::default(),
        hooks: Vec::new(),
        same_command,
    }
}

#[test]
fn a_steps_plan_runs_its_test_then_pins_a_red_or_reruns_the_red_test_and_the_gates() {
    let (same, other, unpinned) = (
        red_test("./t", Some("red")),
        red_test("./red", Some("red")),
        red_test("./red", None),
    );
    let pin = Obligation::RedPin {
        start: "start".into(),
        main: "main".into(),
    };
    // (expect, red due, obligations)
    let cases: Vec<(Expectation, Option<&RedTest>, Vec<Obligation>)> = vec![
        // A RED run pins what it failed on; the tree is read after it, not before.
        (
            Expectation::Fail,
            None,
            vec![step_test(Expectation::Fail, false), pin.clone()],
        ),
        // A RED test due is for a run meant to pass only.
        (
            Expectation::Fail,
            Some(&same),
            vec![step_test(Expectation::Fail, false), pin],
        ),
        // The tree a run meant to pass runs on is taken before it, gates or none: the gates
        // are held to it, and the next task begins there.
        (
            Expectation::Pass,
            None,
            vec![step_test(Expectation::Pass, true), Obligation::StepGates],
        ),
        (
            Expectation::Pass,
            Some(&same),
            vec![
                step_test(Expectation::Pass, true),
                rerun("./t", Some("red"), true),
                Obligation::StepGates,
            ],
        ),
        (
            Expectation::Pass,
            Some(&other),
            vec![
                step_test(Expectation::Pass, true),
                rerun("./red", Some("red"), false),
                Obligation::StepGates,
            ],
        ),
        (
            Expectation::Pass,
            Some(&unpinned),
            vec![
                step_test(Expectation::Pass, true),
                rerun("./red", None, false),
                Obligation::StepGates,
            ],
        ),
    ];
    for (expect, red_due, obligations) in cases {
        let plan = step(StepAsk {
            command: "./t",
            expect,
            red_due,
            start: "start",
            main: "main",
        });
        assert_eq!(
            plan,
            ProofPlan {
                commit: String::new(),
                base: "start".into(),
                policy: None,
                obligations,
                stop: Stop::AtFirstFailure,
            },
            "{expect:?} {red_due:?}"
        );
    }
}

#[test]
fn a_run_that_must_pass_passes_having_run_a_test_that_reports_the_pinned_ids_passing() {
    use crate::workflow::evidence::Outcome as Test;
    let report = |tests: &[(&str, Test)]| Evidence {
        kind: Kind::Libtest,
        tests: tests.iter().map(|(id, o)| (id.to_string(), *o)).collect(),
        files: None,
        missing: None,
        unreported: Vec::new(),
    };
    let pinned = vec!["t::mul".to_string()];
    let ran = b"running 1 test\ntest t::mul ... ok\n\ntest result: ok. 1 passed; 0 failed\n";
    let none = b"running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 1 filtered out\n";
    let passed = report(&[("t::mul", Test::Passed)]);
    let ignored = report(&[("t::mul", Test::Skipped)]);
    let other = report(&[("t::add", Test::Passed)]);
    let exit_only = Evidence::exit_code_only();
    let fails = |code: i32| PairFailure::FailsOnTree {
        exit: ExitRecord::Code(code).to_string(),
    };
    let evidence = |e: &Evidence| PairFailure::Evidence {
        on_base: false,
        why: passes(e, Some(&pinned), &[])
            .err()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    };
    // (exit, output, per-test report, judgement)
    let cases: Vec<(i32, &[u8], &Evidence, Option<PairFailure>)> = vec![
        (0, ran, &passed, None),
        // A run that reports nothing per test reports no pinned test.
        (0, ran, &exit_only, Some(evidence(&exit_only))),
        // A failure by exit is said whatever the report holds.
        (101, ran, &ignored, Some(fails(101))),
        (
            0,
            none,
            &passed,
            Some(PairFailure::RunsNoTest {
                why: crate::workflow::red::did_not_run("cargo test", ExitRecord::Code(0), none)
                    .unwrap_or_default(),
            }),
        ),
        (0, ran, &ignored, Some(evidence(&ignored))),
        (0, ran, &other, Some(evidence(&other))),
    ];
    for (code, output, report, expected) in cases {
        let judged = passes_on(
            "cargo test",
            ExitRecord::Code(code),
            output,
            report,
            (&pinned, &[], &Default::default()),
        );
        assert_eq!(judged, expected, "{code} {report:?}");
        // What a rerun records as no pass: the judgement's reason, never for an exit.
        assert_eq!(
            judged.as_ref().and_then(PairFailure::no_pass),
            match &expected {
                Some(PairFailure::RunsNoTest { why } | PairFailure::Evidence { why, .. }) => {
                    Some(why.as_str())
                }
                _ => None,
            }
        );
    }
    // The pair's tree half is this very judgement.
    for (code, not_run) in [(0, None), (0, Some("none ran")), (1, Some("none ran"))] {
        let on_tree = ExitRecord::Code(code);
        assert_eq!(
            judge_pair(ExitRecord::Code(1), on_tree, not_run, None),
            judge_passing(on_tree, not_run, None)
        );
    }
}
