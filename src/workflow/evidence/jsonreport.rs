//! The JSON reports of jest (vitest writes the same) and mocha.

use std::collections::BTreeMap;

use serde_json::Value;

use super::outcome::{Files, Outcome};

/// jest's `--json` report: `testResults[].assertionResults[]`, by `file::full name`, and the
/// file of each (the report's own: jest names every test's file).
pub fn jest(bytes: &[u8]) -> Result<(BTreeMap<String, Outcome>, Files), String> {
    let report: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let files = report["testResults"]
        .as_array()
        .ok_or("it has no testResults")?;
    let mut tests = BTreeMap::new();
    let mut of = Files::new();
    for file in files {
        let name = file["name"].as_str().unwrap_or_default();
        let assertions = file["assertionResults"].as_array();
        if assertions.is_none_or(|a| a.is_empty()) && file["status"] == "failed" {
            // A file that failed before any test (it does not load) is one error.
            tests.insert(name.to_string(), Outcome::Error);
            of.entry(name.to_string())
                .or_default()
                .insert(name.to_string());
        }
        for test in assertions.into_iter().flatten() {
            let title = test["fullName"]
                .as_str()
                .or(test["title"].as_str())
                .unwrap_or_default();
            let outcome = match test["status"].as_str().unwrap_or_default() {
                "passed" => Outcome::Passed,
                "failed" => Outcome::Failed,
                "todo" => Outcome::Xfail,
                _ => Outcome::Skipped,
            };
            let id = format!("{name}::{title}");
            of.entry(id.clone()).or_default().insert(name.to_string());
            tests.insert(id, outcome);
        }
    }
    Ok((tests, of))
}

/// mocha's `json` reporter: `passes`, `failures` and `pending`, by full title, and the file
/// of each where the report names one (mocha's `file`, absolute: the caller makes it
/// relative to the run's directory). A title in two files is in both, at its worse outcome.
/// `None` for the files when no test in the report names one (a mocha that does not):
/// nothing is tied to a file then.
pub fn mocha(bytes: &[u8]) -> Result<(BTreeMap<String, Outcome>, Option<Files>), String> {
    let report: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if !report["stats"].is_object() {
        return Err("it has no stats".into());
    }
    let mut tests = BTreeMap::new();
    let mut of = Files::new();
    let mut named = false;
    for (list, outcome) in [
        ("passes", Outcome::Passed),
        ("pending", Outcome::Skipped),
        ("failures", Outcome::Failed),
    ] {
        for test in report[list].as_array().into_iter().flatten() {
            let title = test["fullTitle"].as_str().unwrap_or_default().to_string();
            if let Some(file) = test["file"].as_str() {
                named = true;
                if !file.is_empty() {
                    of.entry(title.clone())
                        .or_default()
                        .insert(file.to_string());
                }
            }
            let merged = tests
                .get(&title)
                .map_or(outcome, |o: &Outcome| o.worst(outcome));
            tests.insert(title, merged);
        }
    }
    Ok((tests, named.then_some(of)))
}
