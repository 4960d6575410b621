//! `go test -json`'s events: how each test ended, as go's converter (test2json, in the go
//! command) reports it, and the packages go could not build.

use std::collections::{BTreeMap, BTreeSet};

use super::outcome::Outcome;

#[derive(serde::Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "Test", default)]
    test: Option<String>,
}

/// The tests the events report, by `package::Test`, each at the worst of its events (a test
/// run twice, `-count=2`, that failed once failed); a package that failed with no test of it
/// failing (it did not build: go prints `FAIL\t<package> [build failed]`, no event, before
/// 1.20) is one error by its name, the unit its tests are pinned by. `Ok(None)` when no line
/// is an event or a failed build.
///
/// What the test binary prints to its own output reaches the stream only as an `output`
/// event's text (go's converter wraps it), so a JSON line printed there is no event. Not
/// closed: the test runs as the same user as go, and can write into go's own output (its
/// parent's `/proc/<pid>/fd/1`) events go never made, read here as go's (docs/integrity.md,
/// "What it does not guarantee"). A line the command
/// prints itself beside `go test` (`go test ./...; cat events.json`) is at the top level,
/// and is refused where it shows: an event of a package after go ended that package, or a
/// package's tests with no end (go ends every package it ran with a `pass`, `fail` or
/// `skip` of the package).
pub fn parse(text: &str) -> Result<Option<BTreeMap<String, Outcome>>, String> {
    let mut tests: BTreeMap<String, Outcome> = BTreeMap::new();
    let mut ended = BTreeSet::new();
    let mut failed_packages = Vec::new();
    let mut events = false;
    for line in text.lines() {
        if let Some(package) = build_failed(line) {
            failed_packages.push(package.to_string());
            continue;
        }
        if !line.starts_with('{') {
            continue;
        }
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        events = true;
        if ended.contains(&event.package) {
            return Err(format!(
                "an event of package `{}` comes after go ended that package: go did not write it",
                event.package
            ));
        }
        let outcome = match event.action.as_str() {
            "pass" => Outcome::Passed,
            "fail" => Outcome::Failed,
            "skip" => Outcome::Skipped,
            _ => continue,
        };
        let Some(test) = event.test else {
            if outcome == Outcome::Failed {
                failed_packages.push(event.package.clone());
            }
            ended.insert(event.package);
            continue;
        };
        let id = format!("{}::{test}", event.package);
        let outcome = tests.get(&id).map_or(outcome, |o| o.worst(outcome));
        tests.insert(id, outcome);
    }
    if let Some(open) = tests
        .keys()
        .filter_map(|id| id.split_once("::").map(|(p, _)| p))
        .find(|p| !ended.contains(*p))
    {
        return Err(format!(
            "package `{open}` has test events and no end: go did not write them"
        ));
    }
    for package in failed_packages {
        let prefix = format!("{package}::");
        let a_test_failed = tests
            .iter()
            .any(|(id, o)| id.starts_with(&prefix) && o.failed());
        if !a_test_failed {
            tests.insert(package, Outcome::Error);
        }
    }
    Ok((events || !tests.is_empty()).then_some(tests))
}

/// The package of go's `FAIL\t<package> [build failed]` (or `[setup failed]`) line.
fn build_failed(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("FAIL\t")?;
    let (package, why) = rest.split_once(' ')?;
    matches!(why.trim_end(), "[build failed]" | "[setup failed]").then_some(package)
}
