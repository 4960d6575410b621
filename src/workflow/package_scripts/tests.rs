use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| (*n).to_string()).collect()
}

const OWN: &str = "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\n    \"lint\": \"true\",\n    \"test\": \"sh t/check.sh\"\n  },\n  \"dependencies\": {\"left-pad\": \"1.3.0\"}\n}\n";

/// The squash's entries of the reached scripts only: the version, the dependencies and the
/// scripts no RED command runs stay the task's.
#[test]
fn the_reached_scripts_come_from_the_squash_and_nothing_else_does() {
    let npm = names(&["pretest", "test", "posttest"]);
    let squashed = r#"{"name": "calc", "version": "2.0.0",
        "scripts": {"lint": "eslint .", "test": "true", "pretest": "echo hi"},
        "dependencies": {"left-pad": "9.9.9"}}"#;
    let put = as_squashed(OWN, Some(squashed), &npm, false)
        .expect("both read")
        .expect("the script differs");
    assert_eq!(
        serde_json::from_str::<Value>(&put).expect("JSON"),
        json!({"name": "calc", "version": "1.0.0",
               "scripts": {"lint": "true", "test": "true", "pretest": "echo hi"},
               "dependencies": {"left-pad": "1.3.0"}})
    );
    // Key order kept: `scripts` still between `version` and `dependencies`.
    assert!(put.find("\"version\"") < put.find("\"scripts\""));
    assert!(put.find("\"scripts\"") < put.find("\"dependencies\""));
    // The same reached scripts: the file stays byte for byte, whatever else changed.
    let same = r#"{"version": "3.0.0", "scripts": {"test": "sh t/check.sh", "lint": "x"}}"#;
    assert_eq!(as_squashed(OWN, Some(same), &npm, false), Ok(None));
    // A yarn run reaches its one script: an added `posttest` is not it.
    let yarn = names(&["test"]);
    let post = r#"{"scripts": {"test": "sh t/check.sh", "posttest": "exit 0"}}"#;
    assert_eq!(as_squashed(OWN, Some(post), &yarn, false), Ok(None));
}

/// A script the squash does not hold, or a squash with no `package.json`, takes the entry
/// out (the run then fails as the squash's would); a file that does not read as a JSON
/// object is named, never a panic.
#[test]
fn a_missing_script_is_taken_out_and_unreadable_json_is_named() {
    let test = names(&["test"]);
    for squashed in [Some(r#"{"scripts": {"lint": "true"}}"#), Some("{}"), None] {
        let put = as_squashed(OWN, squashed, &test, false)
            .expect("reads")
            .expect("differs");
        let value: Value = serde_json::from_str(&put).expect("JSON");
        assert_eq!(value["scripts"], json!({"lint": "true"}), "{squashed:?}");
    }
    for bad in ["{\"scripts\": {", "[1]", "", "\"test\""] {
        assert_eq!(
            as_squashed(OWN, Some(bad), &test, false),
            Err(NotJson::Squashed),
            "{bad:?}"
        );
        assert_eq!(
            as_squashed(bad, Some(OWN), &test, false),
            Err(NotJson::Own),
            "{bad:?}"
        );
        assert_eq!(with_scripts_of(bad, OWN, &test), None);
        assert!(!only_scripts_differ(OWN, bad, &test));
    }
    // `scripts` that is no object is replaced by one.
    let put = as_squashed(r#"{"scripts": 1}"#, Some(OWN), &test, false)
        .expect("reads")
        .expect("differs");
    assert_eq!(
        serde_json::from_str::<Value>(&put).expect("JSON")["scripts"],
        json!({"test": "sh t/check.sh"})
    );
}

/// Where the squash's scripts fail on the task's own code, the task's entry is kept only
/// where the squash's fails wherever it fails: `ORIG && MORE`, or an added `postNAME`;
/// anything that could pass where the task's check fails, or runs before it, stays the
/// squash's.
#[test]
fn the_kept_entries_are_the_tasks_only_where_the_squashs_fail_wherever_they_fail() {
    let npm = names(&["pretest", "test", "posttest"]);
    let own = r#"{"scripts": {"test": "sh t/check.sh"}}"#;
    let kept = |squashed_test: &str| {
        let squashed = json!({"scripts": {"test": squashed_test}}).to_string();
        as_squashed(own, Some(&squashed), &npm, true).expect("reads")
    };
    // Kept as the task's (nothing put in).
    for extended in [
        "sh t/check.sh && sh t/sub.sh",
        "  sh t/check.sh&&sh t/sub.sh | grep -q ok ",
        "sh t/check.sh && sh t/sub.sh && sh t/div.sh",
    ] {
        assert_eq!(kept(extended), None, "{extended}");
    }
    // The squash's.
    for weaker in [
        "true",
        "sh t/other.sh",
        "sh t/check.sh || true",
        "sh t/check.sh && sh t/sub.sh || true",
        "sh t/check.sh; true",
        "sh t/check.sh && sh t/sub.sh; true",
        "sh t/check.sh && true & true",
        "sh t/check.sh && x\ntrue",
        "sed -i 1d t/check.sh && sh t/check.sh",
        "sh t/check.sh.bak && true",
    ] {
        let put = kept(weaker).expect("the squash's");
        assert_eq!(
            serde_json::from_str::<Value>(&put).expect("JSON")["scripts"]["test"],
            json!(weaker)
        );
    }
    // An added `posttest` runs only after `test` passed: left out; an added `pretest` runs
    // before it: put in.
    let squashed = r#"{"scripts": {"test": "sh t/check.sh", "posttest": "sh t/sub.sh",
        "pretest": "exit 0"}}"#;
    let put = as_squashed(own, Some(squashed), &npm, true)
        .expect("reads")
        .expect("the pretest");
    assert_eq!(
        serde_json::from_str::<Value>(&put).expect("JSON")["scripts"],
        json!({"test": "sh t/check.sh", "pretest": "exit 0"})
    );
    // Not kept: every entry the squash's.
    let put = as_squashed(own, Some(squashed), &npm, false)
        .expect("reads")
        .expect("both");
    assert_eq!(
        serde_json::from_str::<Value>(&put).expect("JSON")["scripts"],
        json!({"test": "sh t/check.sh", "posttest": "sh t/sub.sh", "pretest": "exit 0"})
    );
}

/// A mutant of the reached scripts alone is test code (dropped); one of anything else is
/// the task's, and runs with the scripts the worktree holds.
#[test]
fn a_mutant_of_the_reached_scripts_alone_is_the_tests() {
    let test = names(&["test"]);
    let scripts_only = OWN.replace("sh t/check.sh", "sh t/check.sh 0");
    assert!(only_scripts_differ(OWN, &scripts_only, &test));
    let removed = OWN.replace("    \"test\": \"sh t/check.sh\"\n", "");
    let removed = removed.replace("\"true\",", "\"true\"");
    assert!(only_scripts_differ(OWN, &removed, &test));
    let version = OWN.replace("1.0.0", "1.0.1");
    assert!(!only_scripts_differ(OWN, &version, &test));
    let lint = OWN.replace("\"true\"", "\"false\"");
    assert!(!only_scripts_differ(OWN, &lint, &test));
    assert!(!only_scripts_differ(OWN, OWN, &test));
    // Written with the worktree's scripts.
    let from = r#"{"scripts": {"test": "true"}}"#;
    let written = with_scripts_of(&version, from, &test).expect("reads");
    assert_eq!(
        serde_json::from_str::<Value>(&written).expect("JSON"),
        json!({"name": "calc", "version": "1.0.1",
               "scripts": {"lint": "true", "test": "true"},
               "dependencies": {"left-pad": "1.3.0"}})
    );
}

#[test]
fn the_names_of_one_package_are_taken_in_order_once() {
    let reached: Vec<PackageScript> = [
        ("package.json", "pretest"),
        ("web/package.json", "test"),
        ("package.json", "test"),
        ("package.json", "pretest"),
    ]
    .iter()
    .map(|(p, n)| PackageScript {
        package: (*p).into(),
        name: (*n).into(),
    })
    .collect();
    assert_eq!(
        names_in(&reached, "package.json"),
        names(&["pretest", "test"])
    );
    assert_eq!(names_in(&reached, "web/package.json"), names(&["test"]));
}

/// A change to the reached scripts alone, a file created with nothing else, is the test's.
#[test]
fn a_change_to_the_reached_scripts_alone_is_the_tests() {
    let test = names(&["test"]);
    let created = r#"{"scripts": {"test": "sh t/check.sh"}}"#;
    assert!(same_but_scripts("{}", created, &test));
    assert!(same_but_scripts(OWN, &OWN.replace("check", "other"), &test));
    assert!(!same_but_scripts("{}", OWN, &test));
    assert!(!same_but_scripts(
        OWN,
        &OWN.replace("1.0.0", "1.1.0"),
        &test
    ));
    assert!(!same_but_scripts("{", created, &test));
}

#[test]
fn the_rewritten_scripts_are_the_squashs_lines_that_differ() {
    let npm = names(&["pretest", "test", "posttest"]);
    let squashed = r#"{"scripts": {"test": "sh t/other.sh", "pretest": "sh t/pre.sh",
        "posttest": 1, "lint": "sh t/lint.sh"}}"#;
    assert_eq!(
        rewritten(OWN, squashed, &npm),
        ["sh t/pre.sh".to_string(), "sh t/other.sh".to_string()]
    );
    assert!(rewritten(OWN, OWN, &npm).is_empty());
    assert!(rewritten(OWN, "{", &npm).is_empty());
}
