//! Problems with an agent's structured input (a plan, a ticket tool's parameters): the one
//! collector that names every problem at its JSON path in one wording, and the check of a
//! JSON value against the schema derived from the type it must become, so an agent fixes
//! them all in one go.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use super::fields::{self, Field};

/// One thing wrong with an input, at a JSON path like `tasks[1].tdd_steps[0].type`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The path a problem with the whole input is named at.
pub const ROOT: &str = "(root)";

/// What kind of JSON value `value` is, as a problem names what it found.
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON path of `key` inside the object at `path`.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `a`, `a or b`, `a, b or c`: the values a problem says it expected.
pub fn one_of<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => format!(
            "{} or {}",
            rest.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// Collects the problems of one input, each at its path.
#[derive(Debug, Default)]
pub struct Problems {
    list: Vec<Problem>,
}

impl Problems {
    pub fn new(list: Vec<Problem>) -> Self {
        Problems { list }
    }

    /// A problem at `path` (the empty path is the whole input).
    pub fn push(&mut self, path: &str, message: impl Into<String>) {
        self.list.push(Problem {
            path: if path.is_empty() { ROOT } else { path }.to_string(),
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn into_vec(self) -> Vec<Problem> {
        self.list
    }

    /// The object at `path`, with every key outside `fields` named.
    pub fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        fields: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.push(
                path,
                format!("expected an object, found {}", describe(value)),
            );
            return None;
        };
        for key in map.keys().filter(|k| !fields.contains(&k.as_str())) {
            self.push(
                &join(path, key),
                format!("unknown field (expected one of {})", fields.join(", ")),
            );
        }
        Some(map)
    }
}

/// The rules a derived schema carries beyond JSON Schema, as `#[schemars(extend(…))]`
/// keywords; [`reduced`] drops them from what a model is shown.
pub mod rule {
    /// The string (or each string of the array) is free text held to this
    /// [`Field`](super::Field)'s rule, named by [`Field::name`](super::Field::name).
    pub const TEXT: &str = "x-text";
    /// The string (or each string of the array) names files of the repository.
    pub const REPO_PATH: &str = "x-repo-path";
    /// The string is a revision handed to git: it must not read as an option.
    pub const REVISION: &str = "x-revision";
}

/// The schema of `T` as its derive writes it, every subschema in place (so a walk needs no
/// `$ref` and a model API gets one self-contained object).
pub fn derived<T: schemars::JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// How [`check`] treats the top-level fields.
#[derive(Clone, Copy, Debug)]
pub struct Root<'a> {
    /// Fields another source gives (the command line's flags): neither read here nor missing.
    pub given_elsewhere: &'a [&'a str],
    /// Whether a required field that is absent is a problem.
    pub required: bool,
}

/// Every problem of `value` against `schema` (one [`derived`]), in the order of the
/// schema's fields: unknown fields first, then each field's. A `null` field is an absent
/// one.
pub fn check(schema: &Value, value: &Value, root: Root, problems: &mut Problems) {
    Walk { problems }.object(schema, value, "", Some(root));
}

/// The field names of an object schema, in order.
pub fn field_names(schema: &Value) -> Vec<&str> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// `value` without its `null` fields (at any depth, not inside arrays): what [`check`]
/// reads as absent, so that deserializing it agrees.
pub fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| match item {
                    Value::Object(_) => without_nulls(item),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `schema` as a model is shown it: the types (a `null` kept, which Gemini turns into
/// `nullable`), enums without `null`, items, properties, `required`, `minimum` and the
/// descriptions; the rules above and `$schema`, `title`, `format` dropped.
pub fn reduced(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let kept = match key.as_str() {
            "type" | "required" | "description" | "minimum" | "additionalProperties" => {
                value.clone()
            }
            "enum" => Value::Array(
                value
                    .as_array()
                    .map(|v| v.iter().filter(|v| !v.is_null()).cloned().collect())
                    .unwrap_or_default(),
            ),
            "items" => reduced(value),
            "properties" => Value::Object(
                value
                    .as_object()
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), reduced(v))).collect())
                    .unwrap_or_default(),
            ),
            _ => continue,
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
}

/// The JSON types a schema admits (`type` a name or a list of names).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn names(schema: &Value) -> Option<Vec<&str>> {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| values.iter().filter_map(Value::as_str).collect::<Vec<_>>())
}

fn field_rule(name: &str) -> Option<Field> {
    [
        Field::Summary,
        Field::TestCommand,
        Field::Report,
        Field::Comment,
        Field::Message,
        Field::Notes,
    ]
    .into_iter()
    .find(|f| f.name() == name)
}

/// What a value of `schema` is, as "missing (expected …)" says it (`whole`: with what an
/// empty one lacks) and "expected …, found …" (the kind of value alone).
fn noun(schema: &Value, whole: bool) -> String {
    if let Some(names) = names(schema) {
        return one_of(&names);
    }
    let kind = types(schema)
        .into_iter()
        .find(|t| *t != "null")
        .unwrap_or("value");
    match kind {
        "string" if whole && schema.get(rule::TEXT).is_some() => "a non-empty string".into(),
        "string" => "a string".into(),
        "integer" if schema.get("minimum").and_then(Value::as_f64) == Some(0.0) => {
            "a whole number ≥ 0".into()
        }
        "integer" => "a whole number".into(),
        "number" => "a number".into(),
        "boolean" => "a boolean".into(),
        "object" => "an object".into(),
        "array" => {
            let item = schema
                .get("items")
                .map(|item| noun(item, false))
                .unwrap_or_default();
            let items = match item.as_str() {
                "a string" => "strings".to_string(),
                "an object" => "objects".to_string(),
                other => format!("values ({other})"),
            };
            if whole && schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 {
                format!("a non-empty array of {items}")
            } else {
                format!("an array of {items}")
            }
        }
        other => format!("a value of type {other}"),
    }
}

struct Walk<'a> {
    problems: &'a mut Problems,
}

impl Walk<'_> {
    fn value(&mut self, schema: &Value, value: &Value, path: &str, inherited: &Value) {
        let kinds = types(schema);
        let fits = match value {
            Value::Null => kinds.contains(&"null"),
            Value::Bool(_) => kinds.contains(&"boolean"),
            Value::Number(n) => {
                kinds.contains(&"number") || (kinds.contains(&"integer") && !n.is_f64())
            }
            Value::String(_) => kinds.contains(&"string"),
            Value::Array(_) => kinds.contains(&"array"),
            Value::Object(_) => kinds.contains(&"object"),
        };
        if !fits {
            let found = match (value, names(schema)) {
                (Value::String(s), Some(_)) => format!("\"{}\"", s.escape_debug()),
                _ => describe(value).to_string(),
            };
            self.problems.push(
                path,
                format!("expected {}, found {found}", noun(schema, false)),
            );
            return;
        }
        match value {
            Value::Number(n) => {
                let minimum = schema.get("minimum").and_then(Value::as_f64);
                if minimum.is_some_and(|m| n.as_f64().is_some_and(|v| v < m)) {
                    self.problems
                        .push(path, format!("expected {}, found {n}", noun(schema, false)));
                }
            }
            Value::String(s) => self.string(schema, s, path, inherited),
            Value::Array(items) => self.array(schema, items, path),
            Value::Object(_) => self.object(schema, value, path, None),
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn string(&mut self, schema: &Value, text: &str, path: &str, inherited: &Value) {
        if let Some(names) = names(schema)
            && !names.contains(&text)
        {
            self.problems.push(
                path,
                format!(
                    "expected {}, found \"{}\"",
                    one_of(&names),
                    text.escape_debug()
                ),
            );
            return;
        }
        let rule_of = |key: &str| schema.get(key).or_else(|| inherited.get(key));
        if let Some(field) = rule_of(rule::TEXT)
            .and_then(Value::as_str)
            .and_then(field_rule)
            && let Err(problem) = fields::check(field, text)
        {
            self.problems.push(path, problem.message(field));
            return;
        }
        if rule_of(rule::REPO_PATH) == Some(&Value::Bool(true))
            && let Some(why) = bad_path(text)
        {
            self.problems.push(path, why);
            return;
        }
        if rule_of(rule::REVISION) == Some(&Value::Bool(true))
            && (text.starts_with('-') || text.contains(char::is_whitespace))
        {
            self.problems
                .push(path, "must be a revision (a commit id or a ref name)");
        }
    }

    fn array(&mut self, schema: &Value, items: &[Value], path: &str) {
        let at_most = schema.get("maxItems").and_then(Value::as_u64);
        if let Some(max) = at_most
            && items.len() as u64 > max
        {
            self.problems.push(
                path,
                format!("lists {} items; at most {max} are taken", items.len()),
            );
            return;
        }
        if items.is_empty() && schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 {
            self.problems.push(path, "must contain at least one item");
        }
        let item_schema = schema.get("items").cloned().unwrap_or(Value::Null);
        for (i, item) in items.iter().enumerate() {
            self.value(&item_schema, item, &format!("{path}[{i}]"), schema);
        }
    }

    fn object(&mut self, schema: &Value, value: &Value, path: &str, root: Option<Root>) {
        let fields = field_names(schema);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let known: &[&str] = if closed { &fields } else { &[] };
        let map = if closed {
            self.problems.object(path, value, known)
        } else {
            value.as_object()
        };
        let Some(map) = map else {
            if !closed {
                self.problems.push(
                    path,
                    format!("expected an object, found {}", describe(value)),
                );
            }
            return;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, field_schema) in properties.into_iter().flatten() {
            if root.is_some_and(|r| r.given_elsewhere.contains(&key.as_str())) {
                continue;
            }
            let at = join(path, key);
            match map.get(key) {
                None | Some(Value::Null) => {
                    let needed = root.is_none_or(|r| r.required);
                    if needed && required.contains(&key.as_str()) {
                        self.problems.push(
                            &at,
                            format!("missing (expected {})", noun(field_schema, true)),
                        );
                    }
                }
                Some(field) => self.value(field_schema, field, &at, &Value::Null),
            }
        }
    }
}

/// Why `path` cannot name files of the repository: absolute, leaving it, or with a
/// backslash or a line end.
pub fn bad_path(path: &str) -> Option<String> {
    if path.starts_with('/') {
        return Some("must be a path inside the repository, relative to its root".into());
    }
    if path.split('/').any(|c| c == "..") {
        return Some("must not leave the repository (`..`)".into());
    }
    if path.contains(['\\', '\n', '\r', '\t']) {
        return Some("must not hold a backslash, a tab or a line end".into());
    }
    None
}
