//! What each step proved, as its transition records it (src/workflow/proof/step_record.rs):
//! `log --json` shows the plan a `test` transition ran and what each obligation came to, and
//! `audit` names a recorded proof its own event does not bear out.

use pretty_assertions::assert_eq;

use crate::support::*;

/// The proofs of the `test` transitions `log --all --json` lists, oldest first, ids redacted.
fn proofs(repo: &TestRepo) -> serde_json::Value {
    let log = repo.run(&["log", "--all", "--json"]).expect(0).json();
    let mut out: Vec<serde_json::Value> = log["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["event"] == "test")
        .map(|e| e["proof"].clone())
        .collect();
    out.reverse();
    serde_json::from_str(&redact_ids(&serde_json::Value::from(out).to_string())).expect("JSON")
}

/// A GREEN step's plan, as `log --json` shows it: `command` run expecting a pass, the task's
/// RED test again, the gates.
fn green_plan(command: &str) -> serde_json::Value {
    serde_json::json!({
        "commit": "", "base": "<id>", "policy": null,
        "obligations": [
            {"obligation": "step_test", "command": command, "expect": "PASS", "take_tree": true},
            {"obligation": "red_rerun", "command": RED, "tree": "<id>", "paths": [], "tests": [],
             "same_command": command == RED},
            {"obligation": "step_gates"}],
        "stop": "at_first_failure"})
}

/// A RED step whose test failed (its test pinned), a GREEN step whose command failed (nothing
/// after it ran), and the GREEN step that passed: each `test` transition shows its plan and
/// what each obligation came to.
#[test]
fn log_json_shows_the_plan_each_step_ran_and_what_each_obligation_came_to() {
    let repo = TestRepo::at_green_step();
    repo.submit_test("exit 1", None).expect(1);
    repo.submit_test(RED, None).expect(0);
    assert_eq!(
        proofs(&repo),
        serde_json::json!([
            {"plan": {"commit": "", "base": "<id>", "policy": null, "obligations": [
                {"obligation": "step_test", "command": RED, "expect": "FAIL", "take_tree": false},
                {"obligation": "red_pin", "start": "<id>", "main": "main"}],
              "stop": "at_first_failure"},
             "outcomes": ["held", "held"]},
            {"plan": green_plan("exit 1"), "outcomes": ["failed", "not_run", "not_run"]},
            {"plan": green_plan(RED), "outcomes": ["held", "held", "held"]}])
    );
    // Other transitions record no proof.
    let log = repo.run(&["log", "--all", "--json"]).expect(0).json();
    assert!(
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| (e["event"] == "test") == e.get("proof").is_some()),
        "{log}"
    );
}

/// A RED transition whose recorded proof says its pin did not run, though its event records
/// the pin, is named by `audit` as forged.
#[test]
fn audit_names_a_recorded_proof_its_event_does_not_bear_out() {
    use crate::attest::{swap_chain_tip, write_commit};
    let repo = TestRepo::at_first_step();
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&["audit"]).expect(0);
    let tip = repo.tip().unwrap();
    let text = repo.git(&["cat-file", "commit", &tip]);
    let forged = text.replace(
        r#""outcomes":["held","held"]"#,
        r#""outcomes":["held","not_run"]"#,
    );
    assert_ne!(forged, text, "{text}");
    let forged = write_commit(&repo, &forged);
    swap_chain_tip(&repo, &tip, &forged);
    let out = repo.run(&["audit"]);
    out.expect(1);
    assert_eq!(
        redact_ids(&out.stdout),
        "FORGED: workflow main, commit <id>: its proof says obligation 2 (red_pin) did not run, \
         which the event does not bear out\n\
         audit of workflow main: 2 transitions replayed: FORGED\n"
    );
}
