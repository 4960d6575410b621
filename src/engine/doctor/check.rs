//! One line of the doctor's report: a named check, how it came out, and the fix.

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Warning,
    Error,
}

/// One line of the doctor's report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    #[serde(rename = "check")]
    pub name: String,
    pub level: Level,
    pub message: String,
    /// What to run or change, when something is wrong.
    pub fix: Option<String>,
}

pub(super) fn check(
    name: &str,
    level: Level,
    message: impl Into<String>,
    fix: Option<String>,
) -> Check {
    Check {
        name: name.to_string(),
        level,
        message: message.into(),
        fix,
    }
}
