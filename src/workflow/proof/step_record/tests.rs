use super::*;
use crate::workflow::proof::{StepAsk, step};
use crate::workflow::state::RedOutcome;
use crate::workflow::state::{ExitRecord, RedPin};
use crate::workflow::{Expectation, RedRerun, StepId, StepType, TestRun};

const COMMAND: &str = "sh tests/test_add.sh";

/// A RED step's run of [`COMMAND`] that ended with `code`, pinning its test when it failed,
/// recording `outcomes` for its plan.
fn red_run(code: i32, outcomes: Vec<Came>) -> TestRun {
    let plan = step(StepAsk {
        command: COMMAND,
        expect: Expectation::Fail,
        red_due: None,
        start: "c0",
        main: "m0",
    });
    TestRun {
        step: StepId::new(0, 0),
        kind: StepType::Red,
        description: "test add".into(),
        command: COMMAND.into(),
        expectation: Expectation::Fail,
        exit: ExitRecord::code(code),
        output_tail: String::new(),
        preflight: None,
        red_rerun: None,
        summary: "red".into(),
        red: (code != 0).then(|| {
            RedOutcome::Pinned(RedPin {
                tree: "t1".into(),
                start: Some("t0".into()),
                paths: vec!["tests/test_add.sh".into()],
                shared: Vec::new(),
                tests: Vec::new(),
                test_files: Default::default(),
                hooks: Vec::new(),
            })
        }),
        syntax_error: None,
        proof: Some(StepProof { plan, outcomes }),
        tested_tree: None,
    }
}

#[test]
fn obligations_after_the_last_that_ran_did_not_run() {
    let plan = red_run(1, Vec::new()).proof.unwrap().plan;
    assert_eq!(
        StepProof::new(plan.clone(), &[false]).outcomes,
        [Came::Failed, Came::NotRun]
    );
    assert_eq!(
        StepProof::new(plan, &[true, true]).outcomes,
        [Came::Held, Came::Held]
    );
}

#[test]
fn a_recorded_proof_agrees_with_its_event_or_says_where_not() {
    use Came::*;
    let cases: Vec<(TestRun, Option<&str>)> = vec![
        (red_run(1, vec![Held, Held]), None),
        (red_run(0, vec![Failed, NotRun]), None),
        (
            red_run(1, vec![Held]),
            Some("its proof records 1 outcomes for 2 obligations"),
        ),
        (
            red_run(0, vec![Held, Held]),
            Some("its proof says obligation 1 (step_test) held, which the event does not bear out"),
        ),
        (
            red_run(1, vec![Failed, NotRun]),
            Some(
                "its proof says obligation 1 (step_test) failed, which the event does not bear \
                 out",
            ),
        ),
        (
            red_run(0, vec![Failed, Held]),
            Some("its proof says obligation 2 (red_pin) held, which the event does not bear out"),
        ),
        (
            red_run(1, vec![Held, NotRun]),
            Some(
                "its proof says obligation 2 (red_pin) did not run, which the event does not \
                 bear out",
            ),
        ),
        (
            TestRun {
                command: "true".into(),
                ..red_run(1, vec![Held, Held])
            },
            Some(
                "its proof's plan runs `sh tests/test_add.sh` expecting FAIL, but it ran `true` \
                 expecting FAIL",
            ),
        ),
        (
            TestRun {
                proof: None,
                ..red_run(1, Vec::new())
            },
            None,
        ),
    ];
    for (run, expected) in cases {
        assert_eq!(
            run.proof_disagrees().as_deref(),
            expected,
            "{:?}",
            run.proof.map(|p| p.outcomes)
        );
    }
}

/// A GREEN step's re-run of its RED test is held exactly when the event's re-run passed
/// having run a test.
#[test]
fn a_red_reruns_outcome_is_the_events_rerun() {
    use Came::*;
    let red = crate::workflow::state::RedTest {
        task: 0,
        command: COMMAND.into(),
        tree: Some("t1".into()),
        paths: vec!["tests/test_add.sh".into()],
        shared: Vec::new(),
        tests: Vec::new(),
        test_files: Default::default(),
        hooks: Vec::new(),
    };
    let plan = step(StepAsk {
        command: "sh run_tests.sh",
        expect: Expectation::Pass,
        red_due: Some(&red),
        start: "c1",
        main: "m0",
    });
    let green = |rerun_code: i32, outcomes: Vec<Came>| TestRun {
        step: StepId::new(0, 1),
        kind: StepType::Green,
        command: "sh run_tests.sh".into(),
        expectation: Expectation::Pass,
        exit: ExitRecord::code(0),
        red: None,
        red_rerun: Some(RedRerun {
            command: COMMAND.into(),
            exit: ExitRecord::code(rerun_code),
            output_tail: String::new(),
            restored: Vec::new(),
            taken_out: Vec::new(),
            hooks: Vec::new(),
            not_run: None,
        }),
        proof: Some(StepProof {
            plan: plan.clone(),
            outcomes,
        }),
        ..red_run(1, Vec::new())
    };
    assert_eq!(green(0, vec![Held, Held, Held]).proof_disagrees(), None);
    assert_eq!(green(1, vec![Held, Failed, NotRun]).proof_disagrees(), None);
    assert_eq!(
        green(1, vec![Held, Held, Held])
            .proof_disagrees()
            .as_deref(),
        Some("its proof says obligation 2 (red_rerun) held, which the event does not bear out")
    );
}

/// A step's recorded plan is held to the one emitted again from the state before it: a
/// plan emptied, or running another command, differs, and says where; one whose passing run
/// took no tree is an earlier release's (no gates) and agrees; a state that fixes no main
/// branch is not judged.
#[test]
fn a_recorded_plan_is_the_one_the_state_before_it_gives() {
    use crate::workflow::State;
    use crate::workflow::proof::Obligation;
    let before = State::new(Some("m0".into()));
    let step_id = (StepId::new(0, 1), StepType::Green);
    let emitted = || {
        step(StepAsk::on(
            &before,
            step_id,
            (COMMAND, Expectation::Pass),
            "m0",
        ))
    };
    let passed = |plan: crate::workflow::proof::ProofPlan| TestRun {
        step: step_id.0,
        kind: step_id.1,
        expectation: Expectation::Pass,
        exit: ExitRecord::code(0),
        red: None,
        proof: Some(StepProof::new(plan, &[true, true])),
        ..red_run(1, Vec::new())
    };
    let mut emptied = emitted();
    emptied.obligations.clear();
    let take_tree = |t: bool| Obligation::StepTest {
        command: COMMAND.into(),
        expect: Expectation::Pass,
        take_tree: t,
    };
    let json = |o: &Obligation| serde_json::to_string(o).expect("JSON");
    let mut untaken = emitted();
    untaken.obligations[0] = take_tree(false);
    let mut other = emitted();
    other.obligations[0] = Obligation::StepTest {
        command: "true".into(),
        expect: Expectation::Pass,
        take_tree: true,
    };
    let other_json = json(&other.obligations[0]);
    let differs = |why: String| {
        Some(format!(
            "its proof's plan is not the one the state before it gives for step 1.2: {why}"
        ))
    };
    // Each row: the plan recorded and what is found.
    let cases = [
        ("as emitted", emitted(), None),
        (
            "emptied",
            emptied,
            differs(format!(
                "0 obligations are recorded, and the chain gives 2 (the first not recorded: {})",
                json(&take_tree(true))
            )),
        ),
        ("its tree not taken, as an earlier release", untaken, None),
        (
            "another command",
            other,
            differs(format!(
                "its obligation 1 is recorded as {other_json}, and the chain gives {}",
                json(&take_tree(true))
            )),
        ),
    ];
    for (case, plan, expected) in cases {
        assert_eq!(passed(plan).plan_differs(&before), expected, "{case}");
    }
    let unfixed = State::new(None);
    assert_eq!(passed(emitted()).plan_differs(&unfixed), None);
}
