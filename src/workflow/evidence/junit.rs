//! JUnit XML, as pytest writes it: every `<testcase>` with its outcome. A small reader of
//! the elements and attributes it needs, not an XML parser: a report that does not hold
//! `<testcase>` elements as pytest writes them reads as no report.

use std::collections::BTreeMap;

use super::outcome::{Files, Outcome};

/// The tests of a JUnit report by id (`classname::name`, or `name` without a class), and
/// how each ended. `Err` when it holds no `<testsuite>`.
#[cfg(test)]
pub fn parse(bytes: &[u8]) -> Result<BTreeMap<String, Outcome>, String> {
    parse_with_files(bytes).map(|(tests, _)| tests)
}

/// [`parse`]'s tests, and the file each is in: pytest's `xunit1` report names it (`file=`,
/// relative to pytest's rootdir). `None` when a testcase names none (an `xunit2` report):
/// then the report does not tie its tests to files.
pub fn parse_with_files(
    bytes: &[u8],
) -> Result<(BTreeMap<String, Outcome>, Option<Files>), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
    if !text.contains("<testsuite") {
        return Err("it holds no <testsuite>".into());
    }
    let mut tests = BTreeMap::new();
    let mut files = Some(Files::new());
    let mut rest = text;
    while let Some(at) = find_tag(rest, "testcase") {
        rest = &rest[at..];
        let (attrs, self_closing, after) = tag(rest).ok_or("a <testcase> tag is not closed")?;
        let body = if self_closing {
            ""
        } else {
            let end = rest[after..]
                .find("</testcase>")
                .ok_or("a <testcase> is not closed")?;
            &rest[after..after + end]
        };
        let name = attr(attrs, "name").unwrap_or_default();
        let class = attr(attrs, "classname").unwrap_or_default();
        let id = if class.is_empty() {
            name
        } else {
            format!("{class}::{name}")
        };
        let outcome = if find_tag(body, "error").is_some() {
            Outcome::Error
        } else if find_tag(body, "failure").is_some() {
            Outcome::Failed
        } else if let Some(skip) = find_tag(body, "skipped") {
            let skipped = tag(&body[skip..]).map(|(a, _, _)| a).unwrap_or_default();
            if attr(skipped, "type").is_some_and(|t| t == "pytest.xfail") {
                Outcome::Xfail
            } else {
                Outcome::Skipped
            }
        } else {
            Outcome::Passed
        };
        let merged = tests
            .get(&id)
            .map_or(outcome, |o: &Outcome| o.worst(outcome));
        match (attr(attrs, "file"), files.as_mut()) {
            (Some(file), Some(files)) => {
                files.entry(id.clone()).or_default().insert(file);
            }
            _ => files = None,
        }
        tests.insert(id, merged);
        rest = &rest[after..];
    }
    Ok((tests, files))
}

/// Where the element `<name` starts in `text` (followed by a space, `>` or `/`).
pub(crate) fn find_tag(text: &str, name: &str) -> Option<usize> {
    let open = format!("<{name}");
    text.match_indices(&open).map(|(i, _)| i).find(|i| {
        text[i + open.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c == '>' || c == '/')
    })
}

/// The tag starting at `text`'s `<`: its attribute text, whether it closes itself, and the
/// offset just after its `>`. Quoted attribute values may hold `>`.
pub(crate) fn tag(text: &str) -> Option<(&str, bool, usize)> {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => {
                let inner = &text[1..i];
                let self_closing = inner.ends_with('/');
                let name_end = inner
                    .find(|c: char| c.is_whitespace() || c == '/')
                    .unwrap_or(inner.len());
                return Some((&inner[name_end..], self_closing, i + 1));
            }
            _ => {}
        }
    }
    None
}

/// The value of attribute `name` in a tag's attribute text, unescaped.
pub(crate) fn attr(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        let eq = rest.find('=')?;
        let key = rest[..eq].trim();
        let value = rest[eq + 1..].trim_start();
        let quote = value.chars().next()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let end = value[1..].find(quote)?;
        if key == name {
            return Some(unescape(&value[1..1 + end]));
        }
        rest = &value[end + 2..];
    }
}

/// XML's five entities and character references.
pub(crate) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semi) = rest.find(';').filter(|s| *s <= 10) else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..semi];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
