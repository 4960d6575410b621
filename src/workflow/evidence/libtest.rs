//! libtest's per-test lines, as every cargo test binary prints them: `test <name> ... ok`,
//! `... FAILED`, `... ignored`.

use std::collections::BTreeMap;

use super::outcome::Outcome;

/// The tests the output's libtest lines report; `None` when it has none (and no
/// `running N tests` line: a binary that announced tests and ended before reporting any
/// still reports, nothing).
pub fn parse(text: &str) -> Option<BTreeMap<String, Outcome>> {
    let mut tests = BTreeMap::new();
    let mut announced = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test")) {
            announced = true;
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, result)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match result.trim() {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            r if r == "ignored" || r.starts_with("ignored, ") => Outcome::Skipped,
            _ => continue,
        };
        let name = name.trim().to_string();
        let merged = tests
            .get(&name)
            .map_or(outcome, |o: &Outcome| o.worst(outcome));
        tests.insert(name, merged);
    }
    (announced || !tests.is_empty()).then_some(tests)
}
