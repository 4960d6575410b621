//! Table tests of the executor's pure decision (when a plan's run stops), and a step's plan run
//! by it in a real repository.

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

/// A step's plan run by the executor in a real repository: a failing RED run pins the test
/// it created; a GREEN step that passes by gutting that test has it run again as the RED step
/// left it, in a scratch worktree, where it still fails, and the gates after it never run.
#[test]
fn a_steps_plan_pins_its_red_test_and_runs_it_again_as_pinned_at_green() {
    use crate::engine::test_repo::Repo;
    use crate::workflow::Expectation;
    use crate::workflow::proof::{StepAsk, step};
    use crate::workflow::state::{RedOutcome, RedTest};

    let repo = Repo::new();
    let start = repo.git(&["rev-parse", "HEAD"]);
    repo.write("tests/t.sh", "echo 'mul: expected 6'; exit 1\n");
    let session = repo.session("w");
    let config = Config::default();
    let ask = |command, expect, red_due| StepAsk {
        command,
        expect,
        red_due,
        start: &start,
        main: "main",
    };
    let red = execute_with(
        &session,
        &config,
        &step(ask("sh tests/t.sh", Expectation::Fail, None)),
        Given::default(),
    )
    .expect("the RED plan runs");
    let [Outcome::Step(ran), Outcome::Pinned(pinned)] = red.as_slice() else {
        panic!("a RED run and its pin: {red:?}");
    };
    assert_eq!(ran.test.output.exit.to_string(), "exit 1");
    assert_eq!(ran.before, None);
    let Some(RedOutcome::Pinned(pin)) = &pinned.outcome else {
        panic!("a pinned test: {pinned:?}");
    };
    assert_eq!(pin.paths, vec!["tests/t.sh".to_string()]);
    assert_eq!(pin.shared, Vec::<String>::new());

    // The GREEN step guts the test and passes with another command.
    repo.write("tests/t.sh", "exit 0\n");
    let red_test = RedTest {
        task: 0,
        command: "sh tests/t.sh".into(),
        tree: Some(pin.tree.clone()),
        paths: pin.paths.clone(),
        shared: Vec::new(),
        tests: Vec::new(),
        test_files: Default::default(),
        hooks: Vec::new(),
    };
    let green = execute_with(
        &session,
        &config,
        &step(ask("true", Expectation::Pass, Some(&red_test))),
        Given::default(),
    )
    .expect("the GREEN plan runs");
    let [Outcome::Step(ran), Outcome::Rerun(Some(rerun))] = green.as_slice() else {
        panic!("a GREEN run and the RED test's, and nothing after: {green:?}");
    };
    assert_eq!(ran.test.output.exit.to_string(), "exit 0");
    assert_eq!(rerun.command, "sh tests/t.sh");
    assert_eq!(rerun.restored, vec!["tests/t.sh".to_string()]);
    assert_eq!(rerun.output.exit.to_string(), "exit 1");
    assert_eq!(rerun.not_run, None);
    assert!(!green[1].held());
}
