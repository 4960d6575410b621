//! `go test -json`'s events: a test's last `pass`, `fail` or `skip` action.

use std::collections::BTreeMap;

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

/// The tests the events report, by `package::Test`; `None` when no line is an event.
pub fn parse(text: &str) -> Option<BTreeMap<String, Outcome>> {
    let mut tests = BTreeMap::new();
    let mut events = false;
    for line in text.lines().filter(|l| l.starts_with('{')) {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        events = true;
        let Some(test) = event.test else { continue };
        let outcome = match event.action.as_str() {
            "pass" => Outcome::Passed,
            "fail" => Outcome::Failed,
            "skip" => Outcome::Skipped,
            _ => continue,
        };
        tests.insert(format!("{}::{test}", event.package), outcome);
    }
    events.then_some(tests)
}
