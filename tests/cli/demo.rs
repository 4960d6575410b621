//! `git orchestrate demo`: the newcomer's first command must work, and show what it claims.

use pretty_assertions::assert_eq;

use crate::support::TestRepo;

#[test]
fn the_demo_drives_a_pr_through_the_tdd_loop_and_the_escape_hatches() {
    let scratch = TestRepo::empty();
    let dir = scratch.dir().join("demo");
    let out = scratch.run(&["demo", "--json", "--dir", dir.to_str().unwrap()]);
    out.expect(0);
    let j = out.json();
    assert_eq!(j["kept"], true);
    let audit: Vec<String> = j["audit_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().split_once(' ').unwrap().1.to_string())
        .collect();
    let expected = "create: (none) -> INITIALIZING
plan: INITIALIZING -> CREATING_BRANCH
branch: CREATING_BRANCH -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> DEBUGGING
scope-reduction: DEBUGGING -> REPLANNING
replan: REPLANNING -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> EXECUTING_TDD
analysis: EXECUTING_TDD -> EXECUTING_TDD
test: EXECUTING_TDD -> DEBUGGING
test: DEBUGGING -> DEBUGGING
test: DEBUGGING -> DEBUGGING
escalate: DEBUGGING -> HALTED
resume: HALTED -> DEBUGGING
guidance: DEBUGGING -> DEBUGGING
test: DEBUGGING -> EXECUTING_TDD
checkpoint: EXECUTING_TDD -> EXECUTING_TDD";
    let oldest_first: Vec<String> = audit.into_iter().rev().collect();
    assert_eq!(oldest_first.join("\n"), expected);
    let steps = j["steps"].as_array().unwrap();
    let exits = |prefix: &str| -> Vec<i64> {
        steps
            .iter()
            .filter(|s| s["command"].as_str().is_some_and(|c| c.starts_with(prefix)))
            .map(|s| s["exit"].as_i64().unwrap())
            .collect()
    };
    // plan, RED, analysis, GREEN, broken REFACTOR, fix; sub: RED, analysis, two failures;
    // re-plan; neg: RED, analysis, GREEN; sub again: RED, analysis, three failures, the fix.
    assert_eq!(
        exits("git orchestrate submit-work"),
        vec![0, 3, 0, 0, 1, 0, 3, 0, 1, 1, 0, 3, 0, 0, 3, 0, 1, 1, 1, 0]
    );
    // The locked escape hatch, then the unlocked one; the escalation halts (10) until resumed.
    assert_eq!(exits("git orchestrate request-scope-reduction"), vec![4, 0]);
    assert_eq!(exits("git orchestrate escalate"), vec![10]);
    assert_eq!(exits("git orchestrate resume"), vec![0]);
    let guided: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|s| {
            s["stdout"]
                .as_str()
                .is_some_and(|o| o.contains("GUIDANCE FROM A HUMAN"))
        })
        .collect();
    assert_eq!(guided.len(), 1, "the guidance is shown exactly once");
    // The DEBUGGING briefing the agent read carried the verbatim failure.
    let debugging = steps
        .iter()
        .find(|s| {
            s["stdout"]
                .as_str()
                .is_some_and(|o| o.contains("· DEBUGGING"))
        })
        .expect("a DEBUGGING briefing");
    assert!(
        debugging["stdout"]
            .as_str()
            .unwrap()
            .contains("FAIL: add 2 3 printed '', expected 5")
    );
    // The demo repository holds the project only; the state is in refs.
    let calc = std::fs::read_to_string(dir.join("lib/calc.sh")).unwrap();
    assert!(
        calc.contains("sub() { add \"$1\" \"$(neg \"$2\")\"; }"),
        "{calc}"
    );
}

#[test]
fn the_demo_prints_for_people_and_cleans_up() {
    let scratch = TestRepo::empty();
    let out = scratch.run(&["demo"]);
    out.expect(0);
    assert!(
        out.stdout.contains("━━━━ agent: submit REFACTOR\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  transition "), "{}", out.stdout);
    assert!(out.stdout.ends_with("(The demo repository was temporary and is removed now; `git orchestrate demo --keep` keeps it.)\n"));
    let path = out
        .stdout
        .lines()
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    assert!(
        !std::path::Path::new(&path).exists(),
        "{path} was not removed"
    );
}
