//! The free-text fields an agent or a person gives (a summary, a test command, a report, a
//! comment, a commit message), judged by one rule whichever adapter brought them (the CLI,
//! MCP, a hook): each goes into a commit of the workflow's history, which is append-only and
//! must stay valid for `git fsck --strict` and for a remote with `receive.fsckObjects`.

/// A field, with the rule it is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Summary,
    TestCommand,
    /// An escalation's report.
    Report,
    /// A human's rejection comment.
    Comment,
    /// `checkpoint -m`, a ticket report's `message`.
    Message,
    /// A ticket subtask's review `notes`.
    Notes,
}

impl Field {
    /// The name every adapter's error uses.
    pub fn name(self) -> &'static str {
        match self {
            Field::Summary => "summary",
            Field::TestCommand => "test command",
            Field::Report => "report",
            Field::Comment => "comment",
            Field::Message => "message",
            Field::Notes => "notes",
        }
    }

    /// The most bytes it may hold: enough for any honest text, far from a commit that
    /// weighs on every clone.
    pub fn cap(self) -> usize {
        match self {
            Field::Summary
            | Field::Comment
            | Field::Message
            | Field::Notes
            | Field::TestCommand => 64 * 1024,
            Field::Report => 256 * 1024,
        }
    }
}

/// Why a field's text is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldProblem {
    Empty,
    TooLong {
        bytes: usize,
        cap: usize,
    },
    /// A control character other than a line end or a tab (a NUL, an escape sequence's
    /// ESC, a carriage return alone), at this byte offset.
    Control {
        offset: usize,
        char: char,
    },
}

impl FieldProblem {
    /// The message, naming the field.
    pub fn message(&self, field: Field) -> String {
        let name = field.name();
        match self {
            FieldProblem::Empty => format!("the {name} must not be empty"),
            FieldProblem::TooLong { bytes, cap } => format!(
                "the {name} is {bytes} bytes long; at most {cap} bytes ({} KiB) are taken",
                cap / 1024
            ),
            FieldProblem::Control { offset, char } => format!(
                "the {name} holds a control character ({}) at byte {offset}: only line ends and \
                 tabs are taken, since it goes into the workflow's history, which git must be \
                 able to check",
                describe(*char)
            ),
        }
    }
}

/// The format characters that make text display otherwise than it reads (bidirectional
/// overrides and isolates, zero-width characters, line and paragraph separators): a summary
/// or a comment shown in `log`, a review or a briefing must say what it holds.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'
            | '\u{200E}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
    )
}

fn describe(c: char) -> String {
    match c {
        '\0' => "NUL".to_string(),
        '\r' => "carriage return, U+000D".to_string(),
        '\u{1b}' => "escape, U+001B".to_string(),
        other => format!("U+{:04X}", u32::from(other)),
    }
}

/// Whether `text` may stand in `field`: not blank, within the cap, and no control character
/// but `\n`, `\r\n` and `\t`.
pub fn check(field: Field, text: &str) -> Result<(), FieldProblem> {
    if text.trim().is_empty() {
        return Err(FieldProblem::Empty);
    }
    if text.len() > field.cap() {
        return Err(FieldProblem::TooLong {
            bytes: text.len(),
            cap: field.cap(),
        });
    }
    let mut chars = text.char_indices().peekable();
    let mut found = None;
    while let Some((offset, c)) = chars.next() {
        // A carriage return ending a line (CRLF) is a line end too.
        let crlf = c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n');
        if (c.is_control() || is_invisible_format(c)) && !matches!(c, '\n' | '\t') && !crlf {
            found = Some((offset, c));
            break;
        }
    }
    match found {
        Some((offset, char)) => Err(FieldProblem::Control { offset, char }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_field_takes_lines_and_tabs_and_refuses_controls_blanks_and_bulk() {
        for field in [
            Field::Summary,
            Field::TestCommand,
            Field::Report,
            Field::Comment,
            Field::Message,
            Field::Notes,
        ] {
            assert_eq!(check(field, "two\n\tlines"), Ok(()));
            assert_eq!(check(field, "crlf\r\nlines\r\n"), Ok(()));
            assert_eq!(check(field, "é ünïcode ✓"), Ok(()));
            assert_eq!(check(field, " \n\t"), Err(FieldProblem::Empty));
            assert_eq!(
                check(field, "a\0b"),
                Err(FieldProblem::Control {
                    offset: 1,
                    char: '\0'
                })
            );
            for c in [
                '\r', '\u{1b}', '\u{7f}', '\u{85}', '\u{7}', '\u{202E}', '\u{2066}', '\u{200B}',
                '\u{2028}', '\u{FEFF}',
            ] {
                assert!(
                    matches!(
                        check(field, &format!("ok{c}")),
                        Err(FieldProblem::Control { offset: 2, .. })
                    ),
                    "{field:?} {c:?}"
                );
            }
            let long = "x".repeat(field.cap() + 1);
            assert_eq!(
                check(field, &long),
                Err(FieldProblem::TooLong {
                    bytes: field.cap() + 1,
                    cap: field.cap()
                })
            );
            assert_eq!(check(field, &long[1..]), Ok(()));
        }
        assert_eq!(
            FieldProblem::Control {
                offset: 3,
                char: '\0'
            }
            .message(Field::Summary),
            "the summary holds a control character (NUL) at byte 3: only line ends and tabs are \
             taken, since it goes into the workflow's history, which git must be able to check"
        );
    }
}
