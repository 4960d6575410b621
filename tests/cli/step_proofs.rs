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

/// The `test` transition at the chain's tip with its recorded proof changed by `edit` (the
/// rest of its event, its state and message as they were), put in its place as a hand-written
/// chain would be: what `audit` then prints, and the problems `audit --json` lists.
fn forge_proof(
    repo: &TestRepo,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (String, serde_json::Value) {
    use crate::attest::{swap_chain_tip, write_commit};
    const HEADER: &str = "orchestrator-event ";
    let tip = repo.tip().unwrap();
    let text = repo.git(&["cat-file", "commit", &tip]);
    let line = text
        .lines()
        .find(|l| l.starts_with(HEADER))
        .expect("the commit records its event");
    let mut event: serde_json::Value =
        serde_json::from_str(&line[HEADER.len()..]).expect("the event's JSON");
    assert_eq!(event["event"], "test-ran", "{event}");
    edit(&mut event["proof"]);
    let forged = text.replacen(line, &format!("{HEADER}{event}"), 1);
    assert_ne!(forged, text, "{text}");
    swap_chain_tip(repo, &tip, &write_commit(repo, &forged));
    let out = repo.run(&["audit"]);
    out.expect(1);
    let json = repo.run(&["audit", "--json"]);
    json.expect(1);
    (
        redact_ids(&out.stdout),
        serde_json::from_str(&redact_ids(&json.json()["problems"].to_string())).expect("JSON"),
    )
}

/// `audit`'s one problem of a forged `test` transition at the tip, as `--json` lists it.
fn forged(problem: &str) -> serde_json::Value {
    serde_json::json!([{"workflow": "main", "commit": "<id>", "problem": problem,
                        "expected": null, "found": null}])
}

/// A step's recorded plan is held to the one the pure core emits from the state before it
/// under the pinned configuration, not only to the rest of its own event: a RED step whose
/// plan was emptied (outcomes to match), a GREEN step whose plan dropped its RED re-run, and
/// one whose re-run names another test, are each named by `audit`; the honest chains are
/// clean.
#[test]
fn audit_names_a_recorded_plan_the_state_before_it_does_not_give() {
    let repo = TestRepo::at_first_step();
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&["audit"]).expect(0);
    let (text, json) = forge_proof(&repo, |proof| {
        proof["plan"]["obligations"] = serde_json::json!([]);
        proof["outcomes"] = serde_json::json!([]);
    });
    let why = format!(
        "its proof's plan is not the one the state before it gives for step 1.1: 0 obligations \
         are recorded, and the chain gives 2 (the first not recorded: \
         {{\"obligation\":\"step_test\",\"command\":\"{RED}\",\"expect\":\"FAIL\",\"take_tree\":false}})"
    );
    assert_eq!(
        text,
        format!(
            "FORGED: workflow main, commit <id>: {why}\n\
             audit of workflow main: 2 transitions replayed: FORGED\n"
        )
    );
    assert_eq!(json, forged(&why));

    let green = || {
        let repo = TestRepo::at_green_step();
        repo.submit_test(RED, None).expect(0);
        repo.run(&["audit"]).expect(0);
        repo
    };
    let (text, json) = forge_proof(&green(), |proof| {
        for list in ["/plan/obligations", "/outcomes"] {
            let list = proof.pointer_mut(list).and_then(|l| l.as_array_mut());
            list.expect("a list").remove(1);
        }
    });
    let why = format!(
        "its proof's plan is not the one the state before it gives for step 1.2: its \
         obligation 2 is recorded as {{\"obligation\":\"step_gates\"}}, and the chain gives \
         {{\"obligation\":\"red_rerun\",\"command\":\"{RED}\",\"tree\":\"<id>\",\"paths\":[],\
         \"tests\":[],\"same_command\":true}}"
    );
    assert_eq!(
        text.lines().next(),
        Some(format!("FORGED: workflow main, commit <id>: {why}").as_str())
    );
    assert_eq!(json, forged(&why));

    let (text, json) = forge_proof(&green(), |proof| {
        proof["plan"]["obligations"][1]["tests"] = serde_json::json!(["add::other"]);
    });
    let why = format!(
        "its proof's plan is not the one the state before it gives for step 1.2: its \
         obligation 2 is recorded as {{\"obligation\":\"red_rerun\",\"command\":\"{RED}\",\
         \"tree\":\"<id>\",\"paths\":[],\"tests\":[\"add::other\"],\"same_command\":true}}, and \
         the chain gives {{\"obligation\":\"red_rerun\",\"command\":\"{RED}\",\"tree\":\"<id>\",\
         \"paths\":[],\"tests\":[],\"same_command\":true}}"
    );
    assert_eq!(
        text.lines().next(),
        Some(format!("FORGED: workflow main, commit <id>: {why}").as_str())
    );
    assert_eq!(json, forged(&why));
}

/// A RED step marked DONE by a passing run, written into the chain by hand: the honest RED
/// run of step 1.1 replaced by a commit that records an honest GREEN pass (another
/// repository's, of step 1.2) as step 1.1's, its proof left out as an earlier release's run
/// has none, with the state, progress and message that event makes. Nothing would pin a
/// failing test for that task, so `attest` would run none again; the transition holds a
/// recorded run to the plan's current step and its kind, and `audit` names it forged.
#[test]
fn audit_names_a_passing_run_recorded_for_a_red_step() {
    use crate::attest::{swap_chain_tip, write_commit};
    use serde_json::Value;
    const HEADER: &str = "orchestrator-event ";
    let state_at = |repo: &TestRepo, commit: &str| -> Value {
        serde_json::from_str(&repo.git(&["show", &format!("{commit}:state.json")]))
            .expect("state.json is JSON")
    };
    // The template: an honest GREEN pass, and the state before and after it.
    let green = TestRepo::at_green_step();
    let before_green = green.tip().unwrap();
    green.submit_test(RED, None).expect(0);
    let passed = green.tip().unwrap();
    let commit_text = green.git(&["cat-file", "commit", &passed]);
    let line = commit_text
        .lines()
        .find(|l| l.starts_with(HEADER))
        .expect("the commit records its event");
    let mut event: Value = serde_json::from_str(&line[HEADER.len()..]).expect("the event's JSON");
    assert_eq!(
        (&event["step"], &event["kind"]),
        (&"1.2".into(), &"GREEN".into())
    );
    event["step"] = "1.1".into();
    event.as_object_mut().unwrap().remove("proof");
    let (green_before, green_after) = (state_at(&green, &before_green), state_at(&green, &passed));

    let repo = TestRepo::at_first_step();
    let at_red = repo.tip().unwrap();
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&["audit"]).expect(0);
    let honest = repo.tip().unwrap();
    // The state the forged event makes from the one at step 1.1: what the GREEN pass changed,
    // said of step 1.1; step 1.1 DONE in the progress.
    let mut state = state_at(&repo, &at_red);
    let keys: Vec<String> = green_before
        .as_object()
        .unwrap()
        .keys()
        .chain(green_after.as_object().unwrap().keys())
        .filter(|k| *k != "plan_progress")
        .cloned()
        .collect();
    for key in keys {
        if green_before.get(&key) != green_after.get(&key) {
            match green_after.get(&key) {
                Some(value) => {
                    let value = value.to_string().replace(r#""1.2""#, r#""1.1""#);
                    state[&key] = serde_json::from_str(&value).unwrap();
                }
                None => {
                    state.as_object_mut().unwrap().remove(&key);
                }
            }
        }
    }
    state["plan_progress"]["done"] = serde_json::json!(["1.1"]);
    let blob = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        serde_json::to_string_pretty(&state).unwrap().as_bytes(),
    );
    let tree = repo.git(&["rev-parse", &format!("{honest}^{{tree}}")]);
    let spec: String = repo
        .git(&["ls-tree", tree.trim()])
        .lines()
        .map(|l| match l.ends_with("\tstate.json") {
            true => format!("100644 blob {}\tstate.json\n", blob.trim()),
            false => format!("{l}\n"),
        })
        .collect();
    let new_tree = repo.git_with_stdin(&["mktree"], spec.as_bytes());
    let text = repo.git(&["cat-file", "commit", &honest]);
    let honest_line = text.lines().find(|l| l.starts_with(HEADER)).unwrap();
    let forged = text
        .replacen(
            &format!("tree {}", tree.trim()),
            &format!("tree {}", new_tree.trim()),
            1,
        )
        .replacen(honest_line, &format!("{HEADER}{event}"), 1);
    swap_chain_tip(&repo, &honest, &write_commit(&repo, &forged));
    let out = repo.run(&["audit"]);
    assert_eq!(
        (out.code, redact_ids(&out.stdout)),
        (
            1,
            "FORGED: workflow main, commit <id>: its recorded event is refused in state \
             EXECUTING_TDD: the run records step 1.1 as a GREEN step; the plan's step 1.1 is a \
             RED step\n\
             audit of workflow main: 2 transitions replayed: FORGED\n"
                .to_string()
        )
    );
}
