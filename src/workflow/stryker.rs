//! Stryker (9.x) as the adequacy check's mutant maker for JavaScript and TypeScript
//! (docs/integrity.md, "Adequacy by mutation"): the configuration it runs with, and its JSON
//! report (the mutation-testing-report-schema) read back into mutants of the lines a task
//! changed, each applied to the file's text and named. Pure: the engine runs Stryker.

use serde_json::Value;

/// The extensions of the files Stryker mutates here: a task whose code files all end so is
/// Stryker's under `[verify] mutation_tool = "auto"`.
pub const EXTENSIONS: [&str; 6] = [".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx"];

/// Whether `path` is JavaScript or TypeScript by its name.
pub fn is_js(path: &str) -> bool {
    EXTENSIONS.iter().any(|e| path.ends_with(e))
}

/// Our configuration for making the mutants of `files` (each a path relative to the worktree
/// and its changed lines, 1-based), the report written to `report` and Stryker's sandbox made
/// under `temp` (both outside the worktree): given to `stryker run` by its path, so no
/// `stryker.conf.*` of the PR's is read (its excluded mutators, its `mutate` patterns). Its
/// test runner is the command `true`: Stryker makes every mutant and tests none, the engine
/// runs the task's test on each, with its own resets, budgets and orphan ending. No plugin is
/// loaded (the command runner is Stryker's own), so nothing of the project's `node_modules`
/// runs; and nothing but the mutated files is copied into its sandbox, which `true` needs
/// none of (a project of 2,000 small files costs Stryker ~1 s CPU more otherwise).
/// `Err(why)`: a path Stryker would read as a pattern, not a file.
pub fn config(files: &[(&str, &[usize])], report: &str, temp: &str) -> Result<String, String> {
    let mut mutate = Vec::new();
    for (path, lines) in files {
        // `mutate` entries are globs, and `path:1-2` a range of one.
        if let Some(c) = path.chars().find(|c| "*?[]{}()!\\:,".contains(*c)) {
            return Err(format!(
                "Stryker would read `{c}` in {path} as a pattern, not a file name"
            ));
        }
        for (first, last) in super::cosmic_ray::ranges(lines) {
            mutate.push(format!("{path}:{first}-{last}"));
        }
    }
    let paths: Vec<&str> = files.iter().map(|(p, _)| *p).collect();
    let config = serde_json::json!({
        "mutate": mutate,
        "ignorePatterns": only(&paths),
        "testRunner": "command",
        "commandRunner": {"command": "true"},
        "coverageAnalysis": "off",
        "reporters": ["json"],
        "jsonReporter": {"fileName": report},
        "plugins": [],
        "checkers": [],
        "disableTypeChecks": false,
        "concurrency": 1,
        "tempDirName": temp,
        "cleanTempDir": "always",
        "incremental": false,
        "ignoreStatic": false,
        "mutator": {"excludedMutations": []},
        "logLevel": "warn",
        "fileLogLevel": "off",
        "allowConsoleColors": false,
    });
    Ok(config.to_string())
}

/// Patterns (gitignore's) that leave only `paths` unignored: every entry at the top ignored,
/// then each directory on the way to a path (shallower first) unignored with its own
/// entries ignored, then the paths themselves unignored.
fn only(paths: &[&str]) -> Vec<String> {
    let mut dirs: Vec<&str> = Vec::new();
    for path in paths {
        let mut at = 0;
        while let Some(slash) = path[at..].find('/') {
            at += slash;
            dirs.push(&path[..at]);
            at += 1;
        }
    }
    dirs.sort_by_key(|d| (d.matches('/').count(), *d));
    dirs.dedup();
    let mut out = vec!["/*".to_string()];
    for d in dirs {
        out.push(format!("!/{d}"));
        out.push(format!("/{d}/*"));
    }
    out.extend(paths.iter().map(|p| format!("!/{p}")));
    out
}

/// One mutant of Stryker's report: the text `replacement` in place of the span from `start`
/// to `end` (1-based lines and columns, the end column one past the span's last character,
/// columns counted in UTF-16 units, as JavaScript counts them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    pub path: String,
    pub mutator: String,
    pub replacement: String,
    pub start: (usize, usize),
    pub end: (usize, usize),
}

/// The mutants of Stryker's JSON report of `files` (each its path, its text as the task wrote
/// it, and its changed lines, 1-based) whose span touches a changed line: file by file in
/// `files`' order, in each by place, then mutator and replacement (the report's order is its
/// ids'). Every mutant is taken whatever its status: one a `// Stryker disable` comment of the
/// PR's made `Ignored` is still a mutant of the task's code. `Err`: the text is not such a
/// report, or it read a file otherwise than the task wrote it.
pub fn mutants(report: &str, files: &[(&str, &str, &[usize])]) -> Result<Vec<Mutant>, String> {
    let report: Value =
        serde_json::from_str(report).map_err(|e| format!("Stryker's report is not JSON: {e}"))?;
    let Some(reported) = report["files"].as_object() else {
        return Err("Stryker's report holds no files".into());
    };
    let mut out = Vec::new();
    for (path, text, lines) in files {
        let Some(file) = reported.get(*path) else {
            continue;
        };
        if file["source"].as_str().is_some_and(|s| s != *text) {
            return Err(format!(
                "Stryker mutated another text of {path} than the task wrote"
            ));
        }
        let Some(found) = file["mutants"].as_array() else {
            return Err(format!("Stryker's report of {path} holds no mutants"));
        };
        let mut of_file = Vec::new();
        for m in found {
            let position = |key: &str| -> Option<(usize, usize)> {
                let at = &m["location"][key];
                Some((
                    usize::try_from(at["line"].as_u64()?).ok()?,
                    usize::try_from(at["column"].as_u64()?).ok()?,
                ))
            };
            let (Some(mutator), Some(replacement), Some(start), Some(end)) = (
                m["mutatorName"].as_str(),
                m["replacement"].as_str(),
                position("start"),
                position("end"),
            ) else {
                return Err(format!(
                    "Stryker's report of {path} holds a mutant without its place or replacement"
                ));
            };
            if !lines.iter().any(|l| (start.0..=end.0).contains(l)) {
                continue;
            }
            of_file.push(Mutant {
                path: path.to_string(),
                mutator: mutator.to_string(),
                replacement: replacement.to_string(),
                start,
                end,
            });
        }
        of_file.sort_by(|a, b| {
            (a.start, a.end, &a.mutator, &a.replacement).cmp(&(
                b.start,
                b.end,
                &b.mutator,
                &b.replacement,
            ))
        });
        of_file.dedup();
        out.extend(of_file);
    }
    Ok(out)
}

impl Mutant {
    /// `text` with this mutant in it; `None` when its span is not in `text`.
    pub fn apply(&self, text: &str) -> Option<String> {
        let from = offset(text, self.start)?;
        let to = offset(text, self.end)?;
        if from > to {
            return None;
        }
        Some(format!(
            "{}{}{}",
            &text[..from],
            self.replacement,
            &text[to..]
        ))
    }

    /// How the final note names it, as the built-in mutator's are: `calc.js:2 `+` → `-``,
    /// what changed on its line; a span of several lines by its first and last (`calc.js:4
    /// `{ … }` → `{}``); the mutator's name where it does not apply.
    pub fn name(&self, text: &str) -> String {
        let (Some(mutated), Some(from), Some(to)) = (
            self.apply(text),
            offset(text, self.start),
            offset(text, self.end),
        ) else {
            return format!("{}:{} {}", self.path, self.start.0, self.mutator);
        };
        if text.lines().count() == mutated.lines().count()
            && let Some(name) = super::cosmic_ray::name(&self.path, text, &mutated)
        {
            return name;
        }
        format!(
            "{}:{} `{}` → `{}`",
            self.path,
            self.start.0,
            ends(&text[from..to]),
            ends(&self.replacement)
        )
    }
}

/// A text of several lines by its first and last, trimmed: `{ … }`.
fn ends(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    match lines.as_slice() {
        [first, .., last] => format!("{first} … {last}"),
        _ => text.trim().to_string(),
    }
}

/// The byte offset in `text` of a 1-based line and 1-based column (in UTF-16 units; one past
/// the line's last character is its end). `None` when it is not in `text`, or within a
/// character.
fn offset(text: &str, (line, column): (usize, usize)) -> Option<usize> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let own = &text[start..];
    let own = &own[..own.find('\n').unwrap_or(own.len())];
    let mut units = 1;
    for (at, c) in own.char_indices() {
        if units == column {
            return Some(start + at);
        }
        if units > column {
            return None;
        }
        units += c.len_utf16();
    }
    (units == column).then_some(start + own.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    const CALC: &str = "function add(a, b) {\n  return a + b;\n}\nfunction mul(a, b) {\n  \
        // Stryker disable next-line all\n  return a * b;\n}\nmodule.exports = { add, mul };\n";

    /// Stryker 9.5.1's report of CALC with `calc.js:4-6` to mutate (trimmed: its config and
    /// test files), out of place order, one mutant `Ignored` by the PR's comment, and a
    /// mutant of another file.
    const REPORT: &str = r#"{"files": {"calc.js": {"language": "javascript", "mutants": [
      {"id": "1", "mutatorName": "ArithmeticOperator", "replacement": "a / b", "statusReason": "Ignored using a comment", "status": "Ignored", "static": false, "location": {"end": {"column": 15, "line": 6}, "start": {"column": 10, "line": 6}}},
      {"id": "0", "mutatorName": "BlockStatement", "replacement": "{}", "status": "Survived", "testsCompleted": 1, "location": {"end": {"column": 2, "line": 7}, "start": {"column": 20, "line": 4}}},
      {"id": "2", "mutatorName": "ArithmeticOperator", "replacement": "a - b", "status": "Survived", "location": {"end": {"column": 15, "line": 2}, "start": {"column": 10, "line": 2}}}],
      "source": "function add(a, b) {\n  return a + b;\n}\nfunction mul(a, b) {\n  // Stryker disable next-line all\n  return a * b;\n}\nmodule.exports = { add, mul };\n"},
      "other.js": {"language": "javascript", "mutants": [{"id": "3", "mutatorName": "BooleanLiteral", "replacement": "false", "status": "Survived", "location": {"end": {"column": 5, "line": 6}, "start": {"column": 1, "line": 6}}}], "source": "x\n"}},
      "schemaVersion": "1.0", "thresholds": {"high": 80, "low": 60, "break": null}}"#;

    #[test]
    fn the_changed_lines_mutants_of_the_files_are_kept_in_place_order_ignored_or_not() {
        let kept = mutants(REPORT, &[("calc.js", CALC, &[6])]).unwrap();
        let named: Vec<String> = kept.iter().map(|m| m.name(CALC)).collect();
        assert_eq!(named, ["calc.js:4 `{ … }` → `{}`", "calc.js:6 `*` → `/`",]);
        assert_eq!(kept[1].apply(CALC).unwrap(), CALC.replace("a * b", "a / b"));
        assert_eq!(
            kept[0].apply(CALC).unwrap(),
            CALC.replace(
                "{\n  // Stryker disable next-line all\n  return a * b;\n}",
                "{}"
            )
        );
        assert_eq!(mutants(REPORT, &[("calc.js", CALC, &[8])]).unwrap(), []);
        assert_eq!(mutants(REPORT, &[("absent.js", "", &[1])]).unwrap(), []);
    }

    #[test]
    fn a_report_of_another_text_or_not_a_report_is_an_error() {
        assert_eq!(
            mutants(REPORT, &[("calc.js", "other\n", &[1])]).unwrap_err(),
            "Stryker mutated another text of calc.js than the task wrote"
        );
        assert_eq!(
            mutants("not json", &[]).unwrap_err(),
            "Stryker's report is not JSON: expected ident at line 1 column 2"
        );
        assert_eq!(
            mutants("{}", &[]).unwrap_err(),
            "Stryker's report holds no files"
        );
        let placeless =
            r#"{"files": {"a.js": {"mutants": [{"mutatorName": "X", "replacement": "y"}]}}}"#;
        assert_eq!(
            mutants(placeless, &[("a.js", "x\n", &[1])]).unwrap_err(),
            "Stryker's report of a.js holds a mutant without its place or replacement"
        );
    }

    #[test]
    fn columns_count_utf16_units_and_a_span_outside_the_text_does_not_apply() {
        let text = "const s = \"é😀\" + x;\n";
        let m = |start, end| Mutant {
            path: "a.js".into(),
            mutator: "ArithmeticOperator".into(),
            replacement: "-".into(),
            start: (1, start),
            end: (1, end),
        };
        // é is one unit, 😀 two: `+` is at column 17.
        assert_eq!(m(17, 18).apply(text).unwrap(), "const s = \"é😀\" - x;\n");
        assert_eq!(m(14, 15).apply(text), None, "within 😀");
        assert_eq!(m(30, 31).apply(text), None);
        assert_eq!(m(18, 17).apply(text), None);
        assert_eq!(
            m(21, 21).apply(text).unwrap(),
            "const s = \"é😀\" + x;-\n",
            "one past the line's end"
        );
    }

    #[test]
    fn the_configuration_is_ours_with_a_range_per_run_of_changed_lines() {
        let ours: Value = serde_json::from_str(
            &config(&[("src/calc.js", &[7, 2, 3, 4])], "/t/r.json", "/t/s").unwrap(),
        )
        .unwrap();
        assert_eq!(
            ours["mutate"],
            serde_json::json!(["src/calc.js:2-4", "src/calc.js:7-7"])
        );
        assert_eq!(ours["commandRunner"]["command"], "true");
        assert_eq!(ours["jsonReporter"]["fileName"], "/t/r.json");
        assert_eq!(ours["tempDirName"], "/t/s");
        assert_eq!(ours["plugins"], serde_json::json!([]));
        assert_eq!(
            ours["ignorePatterns"],
            serde_json::json!(["/*", "!/src", "/src/*", "!/src/calc.js"])
        );
        assert_eq!(
            only(&["a/b/c.js", "a/d.ts", "e.js"]),
            [
                "/*",
                "!/a",
                "/a/*",
                "!/a/b",
                "/a/b/*",
                "!/a/b/c.js",
                "!/a/d.ts",
                "!/e.js"
            ]
        );
        assert_eq!(
            config(&[("src/[id].js", &[1])], "r", "t").unwrap_err(),
            "Stryker would read `[` in src/[id].js as a pattern, not a file name"
        );
    }

    proptest! {
        /// Whatever the report says, reading it and applying its mutants never panics, and
        /// what applies keeps the text before and after the span.
        #[test]
        fn any_report_reads_without_panic(
            text in "[a-z +é😀\n]{0,40}",
            line in 0usize..6, col in 0usize..30, end_line in 0usize..6, end_col in 0usize..30,
            replacement in "\\PC{0,8}",
        ) {
            let report = serde_json::json!({"files": {"a.js": {"mutants": [{
                "mutatorName": "M", "replacement": replacement,
                "location": {"start": {"line": line, "column": col},
                             "end": {"line": end_line, "column": end_col}}}]}}})
                .to_string();
            for m in mutants(&report, &[("a.js", &text, &[1, 2, 3, 4, 5])]).unwrap() {
                if let Some(out) = m.apply(&text) {
                    prop_assert!(out.contains(m.replacement.as_str()));
                }
                let _ = m.name(&text);
            }
        }

        /// A span in an ASCII line applies as the string slice it names.
        #[test]
        fn an_ascii_span_is_replaced_exactly(
            line in "[a-z +;]{0,30}", a in 0usize..31, b in 0usize..31, r in "[a-z]{0,4}",
        ) {
            let (a, b) = (a.min(line.len()), b.min(line.len()));
            let (a, b) = (a.min(b), a.max(b));
            let text = format!("x\n{line}\ny\n");
            let m = Mutant { path: "a.js".into(), mutator: "M".into(), replacement: r.clone(),
                start: (2, a + 1), end: (2, b + 1) };
            prop_assert_eq!(
                m.apply(&text),
                Some(format!("x\n{}{}{}\ny\n", &line[..a], r, &line[b..]))
            );
        }

        /// Garbage is an error, not a panic.
        #[test]
        fn garbage_is_an_error(s in "\\PC{0,60}") {
            let _ = mutants(&s, &[("a.js", "x", &[1])]);
        }
    }
}
