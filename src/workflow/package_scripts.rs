//! The `scripts` entries of a `package.json` that a pinned RED command reaches (`npm test`
//! runs `pretest`, `test`, `posttest`: src/workflow/shell_reach.rs), taken from the squash's
//! file into the task's for adequacy by mutation (docs/integrity.md, "Adequacy by
//! mutation"): those entries are the test, and a later task that rewrites one (`"test":
//! "true"`) is seen by the earlier task's measure, while the rest of the file (its
//! dependencies, its version, the scripts no RED command runs) stays the task's, judged as
//! any other file it changed. Pure: the texts come from the caller
//! (src/engine/adequacy.rs).

use serde_json::{Map, Value};

use super::shell_reach::PackageScript;

/// Which `package.json` text does not read as a JSON object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotJson {
    /// The task's own.
    Own,
    /// The squash's.
    Squashed,
}

/// The names of the scripts of `package` (a `package.json`'s path) among `reached`, in order.
pub fn names_in(reached: &[PackageScript], package: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in reached.iter().filter(|s| s.package == package) {
        if !out.contains(&s.name) {
            out.push(s.name.clone());
        }
    }
    out
}

/// `own` (the task's `package.json`) with the entries of the scripts `names` as `squashed`
/// has them (taken out where it has none, or has no file: `None`), or, where `kept`, as the
/// task's run may keep them when the squash's fail on its own code ([`kept_entry`]).
/// `Ok(None)` where that is `own`'s already: the file stays as the task has it, byte for
/// byte.
pub fn as_squashed(
    own: &str,
    squashed: Option<&str>,
    names: &[String],
    kept: bool,
) -> Result<Option<String>, NotJson> {
    let own_value = object(own).ok_or(NotJson::Own)?;
    let squashed_value = match squashed {
        Some(text) => Some(object(text).ok_or(NotJson::Squashed)?),
        None => None,
    };
    let own_entries = entries(&own_value, names);
    let last: Vec<Option<Value>> = match &squashed_value {
        Some(value) => entries(value, names),
        None => vec![None; names.len()],
    };
    let chosen: Vec<Option<Value>> = names
        .iter()
        .zip(own_entries.iter().zip(last))
        .map(|(name, (own, last))| match kept {
            true => kept_entry(name, names, own.as_ref(), last),
            false => last,
        })
        .collect();
    if chosen == own_entries {
        return Ok(None);
    }
    Ok(Some(put(own_value, names, &chosen)))
}

/// The command lines of the scripts `names` that `squashed` holds other than `own` does
/// (each a string; none where either does not read): what the squash's scripts run that the
/// task's did not.
pub fn rewritten(own: &str, squashed: &str, names: &[String]) -> Vec<String> {
    let (Some(own), Some(squashed)) = (object(own), object(squashed)) else {
        return Vec::new();
    };
    entries(&own, names)
        .into_iter()
        .zip(entries(&squashed, names))
        .filter(|(own, last)| own != last)
        .filter_map(|(_, last)| last.and_then(|l| l.as_str().map(str::to_string)))
        .collect()
}

/// `text` (a mutant of a `package.json`) with the entries of the scripts `names` as `from`
/// has them: a mutant runs with the test the worktree holds. `None` where either does not
/// read as a JSON object.
pub fn with_scripts_of(text: &str, from: &str, names: &[String]) -> Option<String> {
    let value = object(text)?;
    let from = entries(&object(from)?, names);
    Some(put(value, names, &from))
}

/// Whether `mutant` differs from `own` only in the entries of the scripts `names`: a change
/// to the test, not to the code, dropped as a mutant of a witness is never made (each one
/// that broke the test would "kill" itself). Texts that do not read as JSON objects are
/// compared as they are.
pub fn only_scripts_differ(own: &str, mutant: &str, names: &[String]) -> bool {
    object(own) != object(mutant) && same_but_scripts(own, mutant, names)
}

/// Whether `a` and `b` read as the same JSON object but for the entries of the scripts
/// `names`: a task whose change to a `package.json` is to those scripts alone changed its
/// test there, no code.
pub fn same_but_scripts(a: &str, b: &str, names: &[String]) -> bool {
    match (object(a), object(b)) {
        (Some(a), Some(b)) => {
            let none = vec![None; names.len()];
            put(a, names, &none) == put(b, names, &none)
        }
        _ => false,
    }
}

/// The entry the task's run keeps for script `name` (of `names`, the scripts reached in that
/// `package.json`) where the squash's entries make the task's test fail on its own code (a
/// later task ran its own test from the script, which fails before that task's code): the
/// task's own where the squash's only runs more after it (`ORIG && MORE`, with no `||`,
/// `;`, lone `&` or line break in `MORE`, which could make the whole pass where `ORIG`
/// fails), and none where the squash added a `postNAME` script (run only once `NAME`
/// passed); the squash's otherwise. What runs before the task's check (a `pretest`, a
/// command in front of it) can weaken it (a `sed` over the test file), so it is never
/// taken out.
pub fn kept_entry(
    name: &str,
    names: &[String],
    own: Option<&Value>,
    last: Option<Value>,
) -> Option<Value> {
    match (own, &last) {
        (Some(Value::String(own)), Some(Value::String(last))) if runs_after(own, last) => {
            Some(Value::String(own.clone()))
        }
        (None, Some(_))
            if name
                .strip_prefix("post")
                .is_some_and(|main| names.iter().any(|n| n == main)) =>
        {
            None
        }
        _ => last,
    }
}

/// Whether script line `last` is `own` followed by `&& MORE` alone: it fails wherever
/// `own` fails.
fn runs_after(own: &str, last: &str) -> bool {
    let own = own.trim();
    let Some(rest) = last.trim().strip_prefix(own) else {
        return false;
    };
    let rest = rest.trim_start();
    !own.is_empty()
        && rest.starts_with("&&")
        && !rest.contains("||")
        && !rest.contains([';', '\n', '\r'])
        && !rest.replace("&&", "").contains('&')
}

/// `text` as a JSON object.
/// The names among `names` that `own`'s scripts or `other`'s hold, in `names`' order.
pub fn present(own: &str, other: Option<&str>, names: &[String]) -> Vec<String> {
    let values: Vec<Value> = std::iter::once(own)
        .chain(other)
        .filter_map(object)
        .collect();
    names
        .iter()
        .filter(|name| {
            values.iter().any(|v| {
                v.get("scripts")
                    .and_then(|s| s.get(name.as_str()))
                    .is_some()
            })
        })
        .cloned()
        .collect()
}

fn object(text: &str) -> Option<Value> {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
}

/// The entries of the scripts `names` in `value` (`None`: absent).
fn entries(value: &Value, names: &[String]) -> Vec<Option<Value>> {
    names
        .iter()
        .map(|n| value.get("scripts").and_then(|s| s.get(n)).cloned())
        .collect()
}

/// `value` with the entries of the scripts `names` set to `entries` (taken out where
/// `None`), written as JSON, two spaces an indent (key order kept).
fn put(mut value: Value, names: &[String], entries: &[Option<Value>]) -> String {
    if let Some(fields) = value.as_object_mut() {
        let scripts = fields
            .entry("scripts")
            .or_insert_with(|| Value::Object(Map::new()));
        if !scripts.is_object() {
            *scripts = Value::Object(Map::new());
        }
        if let Some(scripts) = scripts.as_object_mut() {
            for (name, entry) in names.iter().zip(entries) {
                match entry {
                    Some(entry) => {
                        scripts.insert(name.clone(), entry.clone());
                    }
                    None => {
                        scripts.shift_remove(name);
                    }
                }
            }
        }
    }
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_default();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
