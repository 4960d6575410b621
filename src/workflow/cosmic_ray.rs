//! cosmic-ray (8.x) as the adequacy check's mutant maker for Python (docs/integrity.md,
//! "Adequacy by mutation"): the configuration it runs with, the mutations of its session
//! kept to the lines a task changed, and each mutant named from the text it made. Pure: the
//! engine runs cosmic-ray.

use serde_json::Value;

/// Our configuration for making the mutants of `path` (relative to the worktree): written
/// outside the worktree, so nothing the PR commits (a `cosmic-ray.toml` of its own, excluded
/// modules or operators) is read; the test command passes (`true`): cosmic-ray only lists
/// the mutations here, the engine runs the task's test on each.
pub fn config(path: &str) -> String {
    // A JSON string is a TOML basic string: the same escapes.
    let quoted = serde_json::to_string(path).unwrap_or_else(|_| "\"\"".into());
    format!(
        "[cosmic-ray]\nmodule-path = {quoted}\ntimeout = 10.0\nexcluded-modules = []\n\
         test-command = \"true\"\n\n[cosmic-ray.distributor]\nname = \"local\"\n"
    )
}

/// One mutation of a session: what `cosmic-ray apply PATH OPERATOR OCCURRENCE` makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub path: String,
    pub operator: String,
    pub occurrence: u64,
    /// Where it is, 1-based lines and 0-based columns, as cosmic-ray records it.
    pub start: (usize, usize),
    pub end: (usize, usize),
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

    const DUMP: &str = r#"[{"job_id": "c4aa", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceBinaryOperator_Add_Sub", "occurrence": 0, "start_pos": [10, 32], "end_pos": [10, 33], "operator_args": {}, "definition_name": "add"}]}, null]
[{"job_id": "7778", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceTrueWithFalse", "occurrence": 0, "start_pos": [7, 15], "end_pos": [7, 19], "operator_args": {}, "definition_name": "__eq__"}]}, null]
[{"job_id": "46d4", "mutations": [{"module_path": "money.py", "operator_name": "core/ReplaceBinaryOperator_Add_Mul", "occurrence": 0, "start_pos": [10, 32], "end_pos": [10, 33], "operator_args": {}, "definition_name": "add"}]}, null]
[{"job_id": "9999", "mutations": [{"module_path": "other.py", "operator_name": "core/ReplaceTrueWithFalse", "occurrence": 0, "start_pos": [7, 15], "end_pos": [7, 19]}]}, null]
"#;

    #[test]
    fn only_the_changed_lines_mutations_of_the_file_are_kept_in_a_fixed_order() {
        let kept = mutations(DUMP, "money.py", &[7, 10]).unwrap();
        let named: Vec<(usize, &str)> = kept
            .iter()
            .map(|m| (m.start.0, m.operator.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                (7, "core/ReplaceTrueWithFalse"),
                (10, "core/ReplaceBinaryOperator_Add_Mul"),
                (10, "core/ReplaceBinaryOperator_Add_Sub"),
            ]
        );
        assert_eq!(mutations(DUMP, "money.py", &[10]).unwrap().len(), 2);
        assert_eq!(mutations(DUMP, "money.py", &[3]).unwrap(), []);
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
    fn the_configuration_names_the_module_and_a_passing_test_command() {
        assert_eq!(
            config("pkg/money.py"),
            "[cosmic-ray]\nmodule-path = \"pkg/money.py\"\ntimeout = 10.0\nexcluded-modules = \
             []\ntest-command = \"true\"\n\n[cosmic-ray.distributor]\nname = \"local\"\n"
        );
    }
}
