//! TAP, as shell tests print it: `ok N - name`, `not ok N - name`, `# SKIP` and `# TODO`
//! directives, and a plan line `1..N`.

use std::collections::BTreeMap;

use super::outcome::Outcome;

/// The tests the output's TAP lines report, by name (by number when a line has none), and
/// the numbers a plan announced that no line reported; `None` when it has no numbered TAP
/// line (a bare `ok` is too common to be TAP).
pub fn parse(text: &str) -> Option<(BTreeMap<String, Outcome>, Vec<String>)> {
    let mut tests = BTreeMap::new();
    let mut numbers = Vec::new();
    let mut plan = None;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some((first, last)) = line.split_once("..")
            && first == "1"
            && let Some(n) = last
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
        {
            plan = Some(n);
            continue;
        }
        let (passed, rest) = if let Some(rest) = line.strip_prefix("not ok ") {
            (false, rest)
        } else if let Some(rest) = line.strip_prefix("ok ") {
            (true, rest)
        } else {
            continue;
        };
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let Ok(number) = rest[..digits].parse::<u64>() else {
            continue;
        };
        let rest = &rest[digits..];
        let (description, directive) = match rest.split_once('#') {
            Some((d, directive)) => (d, directive.trim().to_lowercase()),
            None => (rest, String::new()),
        };
        let description = description.trim().trim_start_matches('-').trim();
        let outcome = if directive.starts_with("skip") {
            Outcome::Skipped
        } else if directive.starts_with("todo") {
            Outcome::Xfail
        } else if passed {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        let id = if description.is_empty() {
            number.to_string()
        } else {
            description.to_string()
        };
        numbers.push(number);
        let merged = tests
            .get(&id)
            .map_or(outcome, |o: &Outcome| o.worst(outcome));
        tests.insert(id, merged);
    }
    if numbers.is_empty() {
        return None;
    }
    let unreported = plan
        .map(|n| {
            (1..=n.min(100_000))
                .filter(|i| !numbers.contains(i))
                .map(|i| format!("test {i} of the plan 1..{n}"))
                .collect()
        })
        .unwrap_or_default();
    Some((tests, unreported))
}
