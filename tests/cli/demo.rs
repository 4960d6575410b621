//! `git orchestrate demo`: the newcomer's first command must work, and show what it claims.

use pretty_assertions::assert_eq;

use crate::support::TestRepo;

#[test]
fn the_demo_drives_a_pr_through_the_tdd_loop() {
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
    assert_eq!(
        audit,
        vec![
            "checkpoint: EXECUTING_TDD -> EXECUTING_TDD",
            "test: DEBUGGING -> EXECUTING_TDD",
            "test: EXECUTING_TDD -> DEBUGGING",
            "checkpoint: EXECUTING_TDD -> EXECUTING_TDD",
            "test: EXECUTING_TDD -> EXECUTING_TDD",
            "analysis: EXECUTING_TDD -> EXECUTING_TDD",
            "test: EXECUTING_TDD -> EXECUTING_TDD",
            "branch: CREATING_BRANCH -> EXECUTING_TDD",
            "plan: INITIALIZING -> CREATING_BRANCH",
            "create: (none) -> INITIALIZING",
        ]
    );
    let steps = j["steps"].as_array().unwrap();
    let exits: Vec<(String, i64)> = steps
        .iter()
        .filter_map(|s| Some((s["command"].as_str()?.to_string(), s["exit"].as_i64()?)))
        .filter(|(c, _)| c.starts_with("git orchestrate submit-work"))
        .map(|(c, e)| (c.split(" --summary").next().unwrap().to_string(), e))
        .collect();
    // plan, RED (needs analysis), analysis, GREEN, broken REFACTOR, fix.
    assert_eq!(
        exits.iter().map(|(_, e)| *e).collect::<Vec<_>>(),
        vec![0, 3, 0, 0, 1, 0]
    );
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
    // The last briefing is the next task's RED step.
    let last_brief = steps
        .iter()
        .rev()
        .find(|s| s["command"] == "git orchestrate get-task")
        .unwrap();
    assert!(
        last_brief["stdout"]
            .as_str()
            .unwrap()
            .contains("STEP 2.1 (RED) of task 2/2 \"sub\"")
    );
    // The demo repository holds the project only; the state is in refs.
    let kept = dir.join("lib/calc.sh");
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .contains("$(($1 + $2))")
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
