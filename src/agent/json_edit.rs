//! Writing a JSON value back into the text it was read from, keeping the text of every part
//! that did not change: a user's settings file keeps its layout (a one-line object stays on
//! one line, comments aside) when `init --agent` adds its entries. Pure: text in, text out.

use serde_json::Value;

/// A value as written: where it is in the text and, for objects and arrays, its parts.
#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Scalar,
    /// Members: the key's start, the key, the value.
    Object(Vec<(usize, String, Node)>),
    Array(Vec<Node>),
}

/// `new` written over `old` (the text `new` was made from, by adding members and array
/// items and changing values): the parts of `old` whose value is unchanged keep their text;
/// new parts are written in the style around them (`indent` per level where the container
/// spans lines, on one line where it does not). `None` when `old` is not one JSON value or
/// something was taken away; the caller then writes the whole value afresh.
pub fn rewrite(old: &str, new: &Value, indent: &str) -> Option<String> {
    let mut parser = Parser {
        text: old.as_bytes(),
        pos: 0,
    };
    parser.blank();
    let node = parser.value(0)?;
    parser.blank();
    if parser.pos != old.len() {
        return None;
    }
    let body = Writer { old, indent }.write(&node, new)?;
    let text = format!("{}{body}{}", &old[..node.start], &old[node.end..]);
    // What is written must read back as the value: anything else is written afresh.
    (serde_json::from_str::<Value>(&text).ok().as_ref() == Some(new)).then_some(text)
}

struct Writer<'a> {
    old: &'a str,
    indent: &'a str,
}

impl Writer<'_> {
    fn write(&self, node: &Node, new: &Value) -> Option<String> {
        let text = &self.old[node.start..node.end];
        if serde_json::from_str::<Value>(text).ok().as_ref() == Some(new) {
            return Some(text.to_string());
        }
        // An empty container has no style to keep: what goes in it is written pretty.
        let empty = match &node.kind {
            Kind::Object(members) => members.is_empty(),
            Kind::Array(items) => items.is_empty(),
            Kind::Scalar => false,
        };
        let one_line = !text.contains('\n') && !empty;
        match (&node.kind, new) {
            (Kind::Object(members), Value::Object(map)) if !members.is_empty() => {
                // Every old member is still there, in order, first: the new ones come after.
                if map.len() < members.len()
                    || members.iter().zip(map.keys()).any(|((_, k, _), n)| k != n)
                {
                    return None;
                }
                let mut out = self.old[node.start..members[0].0].to_string();
                for (i, ((key_start, _, value), fresh)) in
                    members.iter().zip(map.values()).enumerate()
                {
                    out.push_str(&self.old[*key_start..value.start]);
                    out.push_str(&self.write(value, fresh)?);
                    if i + 1 < members.len() {
                        out.push_str(&self.old[value.end..members[i + 1].0]);
                    }
                }
                let last = &members[members.len() - 1];
                let separator = self.separator(last.0, one_line);
                for (key, value) in map.iter().skip(members.len()) {
                    out.push(',');
                    out.push_str(&separator);
                    out.push_str(&serde_json::to_string(key).ok()?);
                    out.push_str(": ");
                    out.push_str(&self.fresh(value, separator.trim_start_matches('\n'), one_line));
                }
                out.push_str(&self.old[last.2.end..node.end]);
                Some(out)
            }
            (Kind::Array(items), Value::Array(values)) if !items.is_empty() => {
                if values.len() < items.len() {
                    return None;
                }
                let mut out = self.old[node.start..items[0].start].to_string();
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&self.write(item, &values[i])?);
                    if i + 1 < items.len() {
                        out.push_str(&self.old[item.end..items[i + 1].start]);
                    }
                }
                let last = &items[items.len() - 1];
                let separator = self.separator(last.start, one_line);
                for value in values.iter().skip(items.len()) {
                    out.push(',');
                    out.push_str(&separator);
                    out.push_str(&self.fresh(value, separator.trim_start_matches('\n'), one_line));
                }
                out.push_str(&self.old[last.end..node.end]);
                Some(out)
            }
            _ => Some(self.fresh(new, self.line_indent(node.start), one_line)),
        }
    }

    /// What goes between a `,` and a new part of a container: a space on one line; else a
    /// newline and the indentation of the line the part at `last` starts on.
    fn separator(&self, last: usize, one_line: bool) -> String {
        if one_line {
            return " ".into();
        }
        format!("\n{}", self.line_indent(last))
    }

    /// The blanks that start the line `at` is on.
    fn line_indent(&self, at: usize) -> &str {
        let start = self.old[..at].rfind('\n').map_or(0, |i| i + 1);
        let blanks = self.old[start..at]
            .find(|c: char| c != ' ' && c != '\t')
            .unwrap_or(at - start);
        &self.old[start..start + blanks]
    }

    /// `value` written afresh: on one line inside a one-line container, else pretty, its
    /// later lines indented by `base` (the indentation of the line it starts on).
    fn fresh(&self, value: &Value, base: &str, one_line: bool) -> String {
        if one_line {
            return one_line_text(value);
        }
        use serde::Serialize as _;
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        // A Value always serializes.
        let _ = value.serialize(&mut serializer);
        let text = String::from_utf8_lossy(&out).into_owned();
        text.lines()
            .enumerate()
            .map(|(i, line)| {
                if i == 0 {
                    line.to_string()
                } else {
                    format!("{base}{line}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `value` on one line, as people write it: `{"a": 1, "b": [2, 3]}`.
fn one_line_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), one_line_text(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(one_line_text).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// A reader of JSON text that keeps where each value is. Text serde_json accepted is read
/// whole; anything else is `None`.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

/// Nesting deeper than this is not read (a settings file is shallow).
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn blank(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    /// An object's members or an array's items, the cursor on its opening bracket: `item`
    /// reads each (from its first character), separated by commas, up to `close`.
    fn sequence(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.pos += 1;
        self.blank();
        if self.text.get(self.pos) == Some(&close) {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.blank();
            item(self)?;
            self.blank();
            match self.text.get(self.pos)? {
                b',' => self.pos += 1,
                b if *b == close => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let start = self.pos;
        let kind =
            match self.text.get(self.pos)? {
                b'{' => {
                    let mut members = Vec::new();
                    self.sequence(b'}', |p| {
                        let key_start = p.pos;
                        p.string()?;
                        let key: String = serde_json::from_slice(&p.text[key_start..p.pos]).ok()?;
                        p.blank();
                        (p.text.get(p.pos) == Some(&b':')).then_some(())?;
                        p.pos += 1;
                        p.blank();
                        members.push((key_start, key, p.value(depth + 1)?));
                        Some(())
                    })?;
                    Kind::Object(members)
                }
                b'[' => {
                    let mut items = Vec::new();
                    self.sequence(b']', |p| {
                        items.push(p.value(depth + 1)?);
                        Some(())
                    })?;
                    Kind::Array(items)
                }
                b'"' => {
                    self.string()?;
                    Kind::Scalar
                }
                _ => {
                    while self.text.get(self.pos).is_some_and(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
                    }) {
                        self.pos += 1;
                    }
                    (self.pos > start).then_some(())?;
                    Kind::Scalar
                }
            };
        Some(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    /// Past a string at the cursor.
    fn string(&mut self) -> Option<()> {
        (self.text.get(self.pos) == Some(&b'"')).then_some(())?;
        self.pos += 1;
        loop {
            match self.text.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// `old` with `key: value` added, written back in the indentation unit of its style
    /// (as `init --agent` finds it).
    fn add(old: &str, key: &str, value: Value) -> String {
        let mut new: Value = serde_json::from_str(old).unwrap();
        new.as_object_mut().unwrap().insert(key.into(), value);
        rewrite(old, &new, "    ").unwrap()
    }

    #[test]
    fn what_did_not_change_keeps_its_text() {
        let old = "{\n    \"theme\": \"GitHub\",\n    \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}\n}\n";
        let new = add(
            old,
            "mcpServers",
            json!({"orchestrate": {"command": "git-orchestrate", "args": ["mcp"]}}),
        );
        assert_eq!(
            new,
            "{\n    \"theme\": \"GitHub\",\n    \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n    \"mcpServers\": {\n        \"orchestrate\": {\n            \"command\": \"git-orchestrate\",\n            \"args\": [\n                \"mcp\"\n            ]\n        }\n    }\n}\n"
        );
        // A one-line file stays on one line.
        assert_eq!(
            add("{\"a\":1}", "b", json!({"c": [1, 2]})),
            "{\"a\":1, \"b\": {\"c\": [1, 2]}}"
        );
    }

    #[test]
    fn a_member_added_deep_inside_keeps_the_rest() {
        let old = "{\n\t\"hooks\": {\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}]\n\t},\n\t\"env\": {\"A\": \"1\"}\n}";
        let mut new: Value = serde_json::from_str(old).unwrap();
        new["hooks"]["Stop"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [{"type": "command", "command": "y"}]}));
        new["hooks"]["SessionStart"] = json!([{"hooks": []}]);
        assert_eq!(
            rewrite(old, &new, "\t").unwrap(),
            "{\n\t\"hooks\": {\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}, {\"hooks\": [{\"type\": \"command\", \"command\": \"y\"}]}],\n\t\t\"SessionStart\": [\n\t\t\t{\n\t\t\t\t\"hooks\": []\n\t\t\t}\n\t\t]\n\t},\n\t\"env\": {\"A\": \"1\"}\n}"
        );
    }

    #[test]
    fn a_last_member_on_the_opening_line_gets_its_own_indentation() {
        let old = "{\"permissions\": {\n  \"allow\": [\"Bash(ls)\"]\n}}";
        let mut new: Value = serde_json::from_str(old).unwrap();
        new["hooks"] = json!({"Stop": []});
        let written = rewrite(old, &new, "  ").unwrap();
        assert_eq!(serde_json::from_str::<Value>(&written).unwrap(), new);
        assert_eq!(
            written,
            "{\"permissions\": {\n  \"allow\": [\"Bash(ls)\"]\n},\n\"hooks\": {\n  \"Stop\": []\n}}"
        );
    }

    #[test]
    fn a_changed_value_is_written_in_place_and_a_removal_is_left_to_the_caller() {
        let old = "{ \"a\" : \"x\" ,\n  \"b\": 2 }";
        let new = json!({"a": "y", "b": 2});
        assert_eq!(
            rewrite(old, &new, "  ").unwrap(),
            "{ \"a\" : \"y\" ,\n  \"b\": 2 }"
        );
        assert_eq!(rewrite(old, &json!({"b": 2}), "  "), None);
        assert_eq!(rewrite("{} x", &json!({}), "  "), None);
        assert_eq!(
            rewrite("[1, 2]", &json!([1, 2, 3]), "  ").unwrap(),
            "[1, 2, 3]"
        );
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z\"\\\\ \u{e9}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(("[a-z]{1,4}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever the layout, the text written holds exactly the new value, and a member
        /// that did not change keeps its text.
        #[test]
        fn the_text_written_reads_as_the_new_value(
            base in proptest::collection::vec(("[a-z]{1,4}", json_value()), 1..5),
            extra in json_value(),
            pretty in proptest::bool::ANY,
        ) {
            let old_value = Value::Object(base.into_iter().collect());
            let old = if pretty {
                serde_json::to_string_pretty(&old_value).unwrap()
            } else {
                serde_json::to_string(&old_value).unwrap()
            };
            let mut new = old_value.clone();
            new.as_object_mut().unwrap().insert("zz_added".into(), extra);
            let written = rewrite(&old, &new, "  ").unwrap();
            proptest::prop_assert_eq!(serde_json::from_str::<Value>(&written).unwrap(), new);
            let (first_key, first) = old_value.as_object().unwrap().iter().next().unwrap();
            let first_text = if pretty {
                serde_json::to_string_pretty(first).unwrap()
            } else {
                serde_json::to_string(first).unwrap()
            };
            let kept = first_text.lines().next().unwrap_or_default().to_string();
            proptest::prop_assert!(written.contains(&kept), "{first_key}: {written}");
        }
    }
}
