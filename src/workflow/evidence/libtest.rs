//! libtest's per-test lines, as every cargo test binary prints them: `test <name> ... ok`,
//! `... FAILED`, `... ignored`.

use std::collections::BTreeMap;

use super::outcome::{Files, Outcome};

/// The tests the output's libtest lines report, and the binaries that announced tests
/// (`running N tests`) and ended before their `test result:` line: a binary cut short by
/// an exit in its tests. `None` when no line names a test and no binary was cut short:
/// nothing per test (`cargo test -q` prints dots, not names).
pub fn parse(text: &str) -> Option<(BTreeMap<String, Outcome>, Vec<String>)> {
    let mut tests = BTreeMap::new();
    let mut cut = Vec::new();
    let mut running: Option<&str> = None;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test")) {
            if let Some(announced) = running.replace(line.trim()) {
                cut.push(announced);
            }
            continue;
        }
        if line.starts_with("test result: ") {
            running = None;
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
    cut.extend(running);
    // `running 0 tests` announces nothing that could be cut.
    let cut: Vec<String> = cut
        .into_iter()
        .filter(|line| *line != "running 0 tests")
        .map(|line| format!("a test binary's result ({line})"))
        .collect();
    (!tests.is_empty() || !cut.is_empty()).then_some((tests, cut))
}

/// The source file of each test the output's libtest lines report, from cargo's line before
/// each binary's (`Running tests/mul.rs (target/debug/deps/mul-…)`, `Running unittests
/// src/lib.rs (…)`), as cargo names it (relative to its package). A test of a binary whose
/// line names no source (doc tests, an older cargo) has none.
pub fn files(text: &str) -> Files {
    let mut files = Files::new();
    let mut source: Option<&str> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Running ") {
            let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
            source = rest
                .split_once(" (")
                .map(|(file, _)| file.trim())
                .filter(|file| !file.is_empty() && !file.contains(' '));
            continue;
        }
        if line.starts_with("Doc-tests ") {
            source = None;
            continue;
        }
        let Some((name, _)) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.rsplit_once(" ... "))
        else {
            continue;
        };
        if let Some(file) = source {
            files
                .entry(name.trim().to_string())
                .or_default()
                .insert(file.to_string());
        }
    }
    files
}
