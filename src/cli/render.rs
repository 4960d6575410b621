//! Output: text for people, JSON objects for machines, and errors in both forms. Writes go
//! through here so that a closed pipe ends the program quietly instead of panicking.

use std::io::Write;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use super::error::{CommandError, ErrorKind};
use crate::workflow::Status;
use crate::workflow::plan::Problem;
use crate::workflow::state::{ExitRecord, PreflightRecord, format_ms};

/// The JSON schema version of every object printed with `--json`.
pub const JSON_SCHEMA: u32 = 1;

pub struct Ui {
    pub json: bool,
    pub quiet: bool,
    out: Box<dyn Write>,
}

impl Ui {
    pub fn new(json: bool, quiet: bool) -> Self {
        Ui {
            json,
            quiet,
            out: Box::new(std::io::stdout().lock()),
        }
    }

    /// A Ui writing into a buffer, for tests and the demo.
    pub fn buffered(json: bool, out: Box<dyn Write>) -> Self {
        Ui {
            json,
            quiet: false,
            out,
        }
    }

    pub fn text(&mut self, text: &str) -> std::io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        if !text.is_empty() && !text.ends_with('\n') {
            self.out.write_all(b"\n")?;
        }
        self.out.flush()
    }

    pub fn line(&mut self, line: impl AsRef<str>) -> std::io::Result<()> {
        writeln!(self.out, "{}", line.as_ref())
    }

    /// `lines`, written at once: stdout writes a line at a time, and the board's hundred
    /// rows were a hundred writes.
    pub fn lines<S: AsRef<str>>(
        &mut self,
        lines: impl IntoIterator<Item = S>,
    ) -> std::io::Result<()> {
        let mut text = String::new();
        for line in lines {
            text.push_str(line.as_ref());
            text.push('\n');
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    /// A line for the person at the terminal when stdout is not theirs: hooks, whose
    /// stdout git may keep for itself.
    pub fn stderr_line(&mut self, line: impl AsRef<str>) -> std::io::Result<()> {
        let mut stderr = std::io::stderr().lock();
        writeln!(stderr, "{}", line.as_ref())?;
        stderr.flush()
    }

    /// Prints a JSON object, adding `"schema": 1` first.
    pub fn json_object(&mut self, value: Value) -> std::io::Result<()> {
        // Made whole, then written at once: stdout writes each line as it ends.
        let mut text = serde_json::to_vec_pretty(&with_schema(value))?;
        text.push(b'\n');
        self.out.write_all(&text)?;
        self.out.flush()
    }

    /// A command's report as its `--json` object, `"schema"` first.
    pub fn report(&mut self, report: &impl serde::Serialize) -> std::io::Result<()> {
        let value = serde_json::to_value(report).map_err(std::io::Error::other)?;
        self.json_object(value)
    }

    /// With `--json`, prints `report` and says so: the caller has nothing more to print.
    pub fn json_report(&mut self, report: &impl serde::Serialize) -> std::io::Result<bool> {
        if self.json {
            self.report(report)?;
        }
        Ok(self.json)
    }

    /// `report` as JSON with `--json`, else `text` for people.
    pub fn report_or_text(
        &mut self,
        report: &impl serde::Serialize,
        text: &str,
    ) -> std::io::Result<()> {
        if self.json {
            self.report(report)
        } else {
            self.text(text)
        }
    }

    /// Renders an error: JSON on stdout with `--json`, otherwise text on stderr.
    pub fn error(&mut self, err: &CommandError) -> std::io::Result<()> {
        if self.json {
            return self.report(&error_json(err));
        }
        let text = error_text(err, self.quiet);
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(text.as_bytes())?;
        stderr.flush()
    }
}

/// `value` (an object) with `"schema": 1` put first: the shape of every `--json` output.
fn with_schema(value: Value) -> Value {
    let mut object = serde_json::Map::new();
    object.insert("schema".into(), json!(JSON_SCHEMA));
    if let Value::Object(fields) = value {
        object.extend(fields);
    }
    Value::Object(object)
}

/// A command's report as the text `--json` prints, for another way of showing it (`board
/// --serve`'s `/board.json`): the same object, byte for byte.
pub fn report_json(report: &impl serde::Serialize) -> std::io::Result<String> {
    let value = serde_json::to_value(report).map_err(std::io::Error::other)?;
    let mut text =
        serde_json::to_string_pretty(&with_schema(value)).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

/// An error as `--json` prints it, without `"schema"`: `{"error": {code, kind, message, …}}`.
#[derive(Debug, Serialize)]
pub struct ErrorEnvelope<'a> {
    error: ErrorBody<'a>,
}

/// The fields of an error, in the order `--json` prints them; empty ones are left out.
#[derive(Debug, Serialize)]
struct ErrorBody<'a> {
    code: u8,
    kind: ErrorKind,
    message: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    causes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    problems: &'a [Problem],
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<Cow<'a, str>>,
}

/// An error as `--json` prints it, without `"schema"`.
pub fn error_json(err: &CommandError) -> ErrorEnvelope<'_> {
    ErrorEnvelope {
        error: ErrorBody {
            code: err.exit().code(),
            kind: err.kind,
            message: &err.message,
            causes: &err.causes,
            state: err.state,
            hint: err.hint.as_deref(),
            problems: &err.problems,
            output: err.output.as_deref().map(String::from_utf8_lossy),
        },
    }
}

/// An error as people read it: the failing output, the message, the problems, what caused
/// it, and the hint (left out with `--quiet`).
pub fn error_text(err: &CommandError, quiet: bool) -> String {
    let mut text = String::new();
    if let Some(output) = err.output.as_ref().filter(|o| !o.is_empty()) {
        text.push_str(&output_block(&String::from_utf8_lossy(output), None));
    }
    text.push_str(&format!("error: {}\n", err.message));
    for p in &err.problems {
        text.push_str(&format!("  - {p}\n"));
    }
    if !err.causes.is_empty() {
        text.push_str("Caused by:\n");
        for (n, cause) in err.causes.iter().enumerate() {
            text.push_str(&format!("  {}: {cause}\n", n + 1));
        }
    }
    if let Some(hint) = err.hint.as_ref().filter(|_| !quiet) {
        text.push_str(&format!("hint: {hint}\n"));
    }
    text
}

/// Output fenced so that it cannot pose as ours (docs/integrity.md), with where to find all
/// of it.
pub fn output_block(text: &str, full: Option<&str>) -> String {
    let heading = match full {
        Some(cmd) => format!("output (the end of it; all of it: {cmd}):\n"),
        None => "output:\n".to_string(),
    };
    format!("{heading}{}", crate::workflow::fence::fenced(text))
}

/// `exit 0, 812ms` for a gate or test line.
pub fn exit_and_time(exit: &ExitRecord, ms: u64) -> String {
    format!("{exit}, {}", format_ms(ms))
}

/// `preflight: tests ok (exit 0, 812ms), lint FAILED (exit 1, 90ms)` (a gate that took the
/// test's run says `reused`) or the honest
/// `preflight: none configured`.
pub fn preflight_line(preflight: &PreflightRecord) -> String {
    if preflight.gates.is_empty() {
        return "preflight: none configured (WARNING: a pass was verified by the test command alone)".to_string();
    }
    let gates: Vec<String> = preflight
        .gates
        .iter()
        .map(|g| {
            format!(
                "{} {} ({}{})",
                g.name,
                if g.exit.success() { "ok" } else { "FAILED" },
                exit_and_time(&g.exit, g.ms),
                if g.reused {
                    "; reused: the test command is this gate's, and it just ran on this tree"
                } else {
                    ""
                }
            )
        })
        .collect();
    format!("preflight: {}", gates.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn printed(err: &CommandError) -> String {
        serde_json::to_string(&error_json(err)).expect("an envelope serializes")
    }

    /// The envelope's fields come in a fixed order, and empty ones are left out: scripts and
    /// snapshots read these bytes.
    #[test]
    fn the_error_envelope_keeps_its_field_order_and_omits_empty_fields() {
        let bare = CommandError::new(ErrorKind::Git, "git failed");
        assert_eq!(
            printed(&bare),
            r#"{"error":{"code":5,"kind":"git","message":"git failed"}}"#
        );
        let mut full = CommandError::invalid_input("bad plan", "fix it");
        full.causes = vec!["because".into()];
        full.state = Some(Status::Replanning);
        full.problems = vec![Problem {
            path: "tasks[0]".into(),
            message: "empty".into(),
        }];
        full.output = Some(b"out\xff".to_vec());
        assert_eq!(
            printed(&full),
            concat!(
                r#"{"error":{"code":2,"kind":"invalid_input","message":"bad plan","causes":["because"],"#,
                r#""state":"REPLANNING","hint":"fix it","problems":[{"path":"tasks[0]","message":"empty"}],"#,
                r#""output":"out�"}}"#
            )
        );
    }
}
