//! Small text helpers of the briefings: indenting a quoted text, quoting for a shell.

use std::fmt::Write as _;

pub(super) fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out.trim_end_matches('\n').to_string()
}

/// Quotes `s` for a POSIX shell when it needs quoting, so suggested commands can be pasted.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
