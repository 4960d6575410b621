//! cosmic-ray (8.x) as the adequacy check's mutant maker for Python (docs/integrity.md,
//! "Adequacy by mutation"): the configuration its one session per file runs with, the
//! mutations that session made of the lines a task changed, each one's text read back from
//! the diff cosmic-ray recorded, and each mutant named from that text. Pure: the engine runs
//! cosmic-ray.

use serde_json::Value;

/// Our configuration for making the mutants of `lines` (1-based) of `path` (relative to the
/// worktree): written outside the worktree, so nothing the PR commits (a `cosmic-ray.toml` of
/// its own, excluded modules or operators) is read. Its line filter (`cr-filter-lines`) is
/// given exactly `lines`, so `cosmic-ray exec` makes no mutant of any other line; its
/// test command passes (`true`): `exec` only makes each mutant and records its diff, the
/// engine runs the task's test on each, with its own resets, budgets and orphan ending.
pub fn config(path: &str, lines: &[usize]) -> String {
    // A JSON string is a TOML basic string: the same escapes.
    let quoted = serde_json::to_string(path).unwrap_or_else(|_| "\"\"".into());
    let ranges: Vec<String> = ranges(lines)
        .into_iter()
        .map(|(a, b)| match a == b {
            true => format!("\"{a}\""),
            false => format!("\"{a}-{b}\""),
        })
        .collect();
    format!(
        "[cosmic-ray]\nmodule-path = {quoted}\ntimeout = 10.0\nexcluded-modules = []\n\
         test-command = \"true\"\n\n[cosmic-ray.distributor]\nname = \"local\"\n\n\
         [cosmic-ray.filters.line-filter]\nlines = {{ {quoted} = [{}] }}\n",
        ranges.join(", ")
    )
}

/// `lines` as runs of consecutive lines, first and last of each, in order.
pub(crate) fn ranges(lines: &[usize]) -> Vec<(usize, usize)> {
    let mut sorted: Vec<usize> = lines.iter().copied().filter(|n| *n >= 1).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for n in sorted {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => out.push((n, n)),
        }
    }
    out
}

/// One mutation of a session, and what `cosmic-ray exec` recorded for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub path: String,
    pub operator: String,
    pub occurrence: u64,
    /// Where it is, 1-based lines and 0-based columns, as cosmic-ray records it.
    pub start: (usize, usize),
    pub end: (usize, usize),
    pub outcome: Outcome,
}

/// What a session holds for a mutation after `cosmic-ray exec`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No result: `exec` did not get to it.
    Pending,
    /// Made: the diff of the file cosmic-ray recorded.
    Made(String),
    /// Not applied (`no-test`: the occurrence `init` listed was not found in the file).
    Nothing,
    /// Skipped by a filter.
    Skipped,
    /// cosmic-ray failed making it (`exception`): the last line it recorded.
    Failed(String),
}

/// The mutations of `cosmic-ray dump SESSION` (one JSON array `[work item, result]` a line)
/// of `path` whose span touches one of `lines` (1-based), in a fixed order: by where, then by
/// operator and occurrence (the dump's order is its random job ids'). `Err`: the text is not
/// such a dump.
pub fn mutations(dump: &str, path: &str, lines: &[usize]) -> Result<Vec<Mutation>, String> {
    let mut out = Vec::new();
    for (n, line) in dump
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let item: Value = serde_json::from_str(line)
            .map_err(|e| format!("line {} of cosmic-ray's dump is not JSON: {e}", n + 1))?;
        let Some(found) = item[0]["mutations"].as_array() else {
            return Err(format!(
                "line {} of cosmic-ray's dump holds no work item",
                n + 1
            ));
        };
        let outcome = outcome(&item[1]);
        for m in found {
            let position = |key: &str| -> Option<(usize, usize)> {
                let at = m[key].as_array()?;
                Some((
                    usize::try_from(at.first()?.as_u64()?).ok()?,
                    usize::try_from(at.get(1)?.as_u64()?).ok()?,
                ))
            };
            let (Some(module), Some(operator), Some(occurrence), Some(start), Some(end)) = (
                m["module_path"].as_str(),
                m["operator_name"].as_str(),
                m["occurrence"].as_u64(),
                position("start_pos"),
                position("end_pos"),
            ) else {
                return Err(format!(
                    "line {} of cosmic-ray's dump holds a mutation without its place",
                    n + 1
                ));
            };
            let module = module.strip_prefix("./").unwrap_or(module);
            if module != path || !lines.iter().any(|l| (start.0..=end.0).contains(l)) {
                continue;
            }
            out.push(Mutation {
                path: path.to_string(),
                operator: operator.to_string(),
                occurrence,
                start,
                end,
                outcome: outcome.clone(),
            });
        }
    }
    out.sort_by(|a, b| {
        (a.start, a.end, &a.operator, a.occurrence).cmp(&(
            b.start,
            b.end,
            &b.operator,
            b.occurrence,
        ))
    });
    out.dedup();
    Ok(out)
}

/// The lines the first `count` of `listed` (in [`mutations`]' order) start on, in order:
/// what the line filter is given so that `exec` makes those and few more.
pub fn lines_of_first(listed: &[Mutation], count: usize) -> Vec<usize> {
    let mut lines: Vec<usize> = listed.iter().take(count).map(|m| m.start.0).collect();
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// What a work item's result (`null` while pending) says.
fn outcome(result: &Value) -> Outcome {
    if result.is_null() {
        return Outcome::Pending;
    }
    let last = |key: &str| {
        result[key]
            .as_str()
            .unwrap_or("")
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string()
    };
    match (result["worker_outcome"].as_str(), result["diff"].as_str()) {
        (Some("normal"), Some(diff)) => Outcome::Made(diff.to_string()),
        (Some("no-test"), _) => Outcome::Nothing,
        (Some("skipped"), _) => Outcome::Skipped,
        (Some(other), _) => Outcome::Failed(match last("output") {
            l if l.is_empty() => other.to_string(),
            l => l,
        }),
        (None, _) => Outcome::Failed("a result without its outcome".into()),
    }
}

impl Mutation {
    /// The text of `original` (the file as cosmic-ray mutated it) with this mutant; `Err(why)`
    /// when cosmic-ray did not make it (a changed line's mutation is never to be skipped, nor
    /// one it could not apply) or its diff does not fit.
    pub fn mutant(&self, original: &str) -> Result<String, String> {
        let what = format!("{} at {}:{}", self.operator, self.path, self.start.0);
        match &self.outcome {
            Outcome::Made(diff) => super::mutmut::apply_diff(original, diff)
                .ok_or_else(|| format!("cosmic-ray's mutant {what} does not fit the file")),
            // Listed by cosmic-ray's own `init` from this file: one it cannot apply is one a
            // budget counted and nothing measured, as a skipped one.
            Outcome::Nothing => Err(format!("cosmic-ray could not apply {what}")),
            Outcome::Pending => Err(format!("cosmic-ray exec left {what} unmade")),
            Outcome::Skipped => Err(format!("cosmic-ray skipped {what}, a changed line")),
            Outcome::Failed(why) => Err(format!("cosmic-ray failed making {what}: {why}")),
        }
    }
}

/// How the final note names the mutant `mutated` of `original` (the file `path`), as the
/// built-in mutator's are: `money.py:10 `+` → `-``, from the first line that differs; `None`
/// when nothing differs.
pub fn name(path: &str, original: &str, mutated: &str) -> Option<String> {
    let old: Vec<&str> = original.lines().collect();
    let new: Vec<&str> = mutated.lines().collect();
    let at = (0..old.len().max(new.len())).find(|i| old.get(*i) != new.get(*i))?;
    // A line taken out shifts the rest up: what is left at `at` is the next line.
    let added = if new.len() < old.len() {
        None
    } else {
        new.get(at).copied()
    };
    Some(super::mutate::change_name(
        path,
        at + 1,
        old.get(at).copied(),
        added,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const MONEY: &str = "class Money:\n    def __init__(self, cents, currency=\"EUR\"):\n        \
        self.cents = cents\n        self.currency = currency\n\n    \
        def __eq__(self, other):\n        \
        return self.cents == other.cents and self.currency == other.currency\n\n    \
        def add(self, other):\n        return Money(self.cents + other.cents, self.currency)\n";

    /// Lines of a real dump (cosmic-ray 8.7.0, after `cr-filter-lines` kept line 10 and
    /// `exec`), out of their random order, with one still pending and one of another file.
    const DUMP: &str = r#"[{"job_id": "4a30", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceBinaryOperator_Add_Mul", "occurrence": 0, "start_pos": [10, 32], "end_pos": [10, 33], "operator_args": {}, "definition_name": "add"}]}, {"worker_outcome": "normal", "output": "", "test_outcome": "survived", "diff": "--- mutation diff ---\n--- a/money.py\n+++ b/money.py\n@@ -7,5 +7,5 @@\n         return self.cents == other.cents and self.currency == other.currency\n \n     def add(self, other):\n-        return Money(self.cents + other.cents, self.currency)\n+        return Money(self.cents * other.cents, self.currency)\n "}]
[{"job_id": "2149", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceComparisonOperator_Eq_NotEq", "occurrence": 0, "start_pos": [7, 26], "end_pos": [7, 28], "operator_args": {}, "definition_name": "__eq__"}]}, {"worker_outcome": "skipped", "output": "Filtered line-filter", "test_outcome": null, "diff": null}]
[{"job_id": "8049", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceBinaryOperator_Add_Sub", "occurrence": 0, "start_pos": [10, 32], "end_pos": [10, 33], "operator_args": {}, "definition_name": "add"}]}, {"worker_outcome": "normal", "output": "", "test_outcome": "survived", "diff": "--- mutation diff ---\n--- a/money.py\n+++ b/money.py\n@@ -7,5 +7,5 @@\n         return self.cents == other.cents and self.currency == other.currency\n \n     def add(self, other):\n-        return Money(self.cents + other.cents, self.currency)\n+        return Money(self.cents - other.cents, self.currency)\n "}]
[{"job_id": "9999", "mutations": [{"module_path": "other.py", "operator_name": "core/ReplaceTrueWithFalse", "occurrence": 0, "start_pos": [7, 15], "end_pos": [7, 19]}]}, null]
[{"job_id": "7778", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceTrueWithFalse", "occurrence": 0, "start_pos": [4, 15], "end_pos": [4, 19], "operator_args": {}, "definition_name": "__init__"}]}, null]
"#;

    #[test]
    fn only_the_changed_lines_mutations_of_the_file_are_kept_in_a_fixed_order() {
        let kept = mutations(DUMP, "money.py", &[4, 7, 10]).unwrap();
        let named: Vec<(usize, &str)> = kept
            .iter()
            .map(|m| (m.start.0, m.operator.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                (4, "core/ReplaceTrueWithFalse"),
                (7, "core/ReplaceComparisonOperator_Eq_NotEq"),
                (10, "core/ReplaceBinaryOperator_Add_Mul"),
                (10, "core/ReplaceBinaryOperator_Add_Sub"),
            ]
        );
        assert_eq!(mutations(DUMP, "money.py", &[10]).unwrap().len(), 2);
        assert_eq!(mutations(DUMP, "money.py", &[3]).unwrap(), []);
    }

    #[test]
    fn a_made_mutant_is_the_file_with_its_recorded_diff_and_named_by_it() {
        let kept = mutations(DUMP, "money.py", &[10]).unwrap();
        let text = kept[1].mutant(MONEY).unwrap();
        assert_eq!(
            text,
            MONEY.replace("self.cents + other.cents", "self.cents - other.cents")
        );
        assert_eq!(
            name("money.py", MONEY, &text).as_deref(),
            Some("money.py:10 `+` → `-`")
        );
        assert_eq!(
            kept[1].mutant("class Other:\n    pass\n").unwrap_err(),
            "cosmic-ray's mutant core/ReplaceBinaryOperator_Add_Sub at money.py:10 does not fit \
             the file"
        );
    }

    #[test]
    fn a_changed_lines_mutation_not_made_or_not_applied_is_an_error() {
        let kept = mutations(DUMP, "money.py", &[4, 7]).unwrap();
        assert_eq!(
            kept[0].mutant(MONEY).unwrap_err(),
            "cosmic-ray exec left core/ReplaceTrueWithFalse at money.py:4 unmade"
        );
        assert_eq!(
            kept[1].mutant(MONEY).unwrap_err(),
            "cosmic-ray skipped core/ReplaceComparisonOperator_Eq_NotEq at money.py:7, a changed \
             line"
        );
        let failed = DUMP.lines().nth(4).unwrap().replace(
            "null]",
            r#"{"worker_outcome": "exception", "output": "Traceback:\nValueError: no\n"}]"#,
        );
        assert_eq!(
            mutations(&failed, "money.py", &[4]).unwrap()[0]
                .mutant(MONEY)
                .unwrap_err(),
            "cosmic-ray failed making core/ReplaceTrueWithFalse at money.py:4: ValueError: no"
        );
        let nothing = DUMP
            .lines()
            .nth(4)
            .unwrap()
            .replace("null]", r#"{"worker_outcome": "no-test"}]"#);
        assert_eq!(
            mutations(&nothing, "money.py", &[4]).unwrap()[0]
                .mutant(MONEY)
                .unwrap_err(),
            "cosmic-ray could not apply core/ReplaceTrueWithFalse at money.py:4"
        );
    }

    #[test]
    fn the_lines_of_the_first_mutations_are_what_the_filter_is_given() {
        let kept = mutations(DUMP, "money.py", &[4, 7, 10]).unwrap();
        assert_eq!(lines_of_first(&kept, 2), [4, 7]);
        assert_eq!(lines_of_first(&kept, 3), [4, 7, 10]);
        assert_eq!(lines_of_first(&kept, 20), [4, 7, 10]);
    }

    #[test]
    fn a_dump_that_is_not_one_is_named() {
        assert_eq!(
            mutations("not json\n", "money.py", &[1]).unwrap_err(),
            "line 1 of cosmic-ray's dump is not JSON: expected ident at line 1 column 2"
        );
        assert_eq!(
            mutations("[{}, null]\n", "money.py", &[1]).unwrap_err(),
            "line 1 of cosmic-ray's dump holds no work item"
        );
    }

    #[test]
    fn a_mutant_is_named_by_what_changed_on_its_line() {
        let original = "a = 1\nb = x + y\nc = 3\n";
        assert_eq!(
            name("m.py", original, "a = 1\nb = x - y\nc = 3\n").as_deref(),
            Some("m.py:2 `+` → `-`")
        );
        assert_eq!(
            name("m.py", original, "a = 1\nc = 3\n").as_deref(),
            Some("m.py:2 line removed")
        );
        assert_eq!(name("m.py", original, original), None);
    }

    #[test]
    fn the_configuration_names_the_module_its_changed_lines_and_a_passing_test_command() {
        assert_eq!(
            config("pkg/money.py", &[10, 2, 3, 4, 7, 3]),
            "[cosmic-ray]\nmodule-path = \"pkg/money.py\"\ntimeout = 10.0\nexcluded-modules = \
             []\ntest-command = \"true\"\n\n[cosmic-ray.distributor]\nname = \"local\"\n\n\
             [cosmic-ray.filters.line-filter]\nlines = { \"pkg/money.py\" = [\"2-4\", \"7\", \
             \"10\"] }\n"
        );
    }
}
