//! Code review findings (docs/config.md, "[review]"): what a reviewer must print, how the findings
//! of several dimensions are merged, which of them block, and the task they become.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::{Step, StepStatus, StepType, Task, TaskStatus};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    P0,
    P1,
    P2,
    P3,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::P0 => "P0",
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding, as reviewers print it, plus where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub priority: Priority,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub issue: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// The dimensions that reported it; a human's rejection has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimensions: Vec<String>,
    /// Set when a human reported it with `reject`: it always blocks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub human: bool,
    /// How that human's answer was authorised (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<crate::workflow::Human>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.priority)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " {file}:{line}:")?,
            (Some(file), None) => write!(f, " {file}:")?,
            _ => {}
        }
        if self.human {
            f.write_str(match self.answered {
                Some(crate::workflow::Human::Terminal) => " (from a human, at a terminal)",
                Some(crate::workflow::Human::Env) => {
                    " (from a human, through GIT_ORCHESTRATE_HUMAN)"
                }
                None => " (from a human)",
            })?;
        }
        write!(f, " {}", self.issue)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (suggestion: {s})")?;
        }
        Ok(())
    }
}

/// Reads a reviewer's stdout: `{"findings": [{"priority", "file", "line", "issue",
/// "suggestion"}]}`. Anything else is an error that says what is wrong, never "no findings".
pub fn parse_findings(stdout: &[u8], dimension: Option<&str>) -> Result<Vec<Finding>, String> {
    let value: Value =
        serde_json::from_slice(stdout).map_err(|e| format!("its output is not JSON ({e})"))?;
    let Some(list) = value.get("findings").and_then(Value::as_array) else {
        return Err("its output has no \"findings\" array".to_string());
    };
    let mut out = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let at = format!("findings[{i}]");
        let field = |key: &str| item.get(key).filter(|v| !v.is_null());
        let priority = match field("priority").and_then(Value::as_str) {
            Some("P0") => Priority::P0,
            Some("P1") => Priority::P1,
            Some("P2") => Priority::P2,
            Some("P3") => Priority::P3,
            _ => {
                return Err(format!(
                    "{at}.priority: expected \"P0\", \"P1\", \"P2\" or \"P3\""
                ));
            }
        };
        let issue = field("issue")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| format!("{at}.issue: expected a non-empty string"))?;
        let text = |key: &str| -> Result<Option<String>, String> {
            match field(key) {
                None => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                Some(Value::String(_)) => Ok(None),
                Some(_) => Err(format!("{at}.{key}: expected a string")),
            }
        };
        let line = match field("line") {
            None => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| format!("{at}.line: expected a line number"))?,
            ),
        };
        out.push(Finding {
            priority,
            file: text("file")?,
            line,
            issue: issue.to_string(),
            suggestion: text("suggestion")?,
            dimensions: dimension.map(|d| vec![d.to_string()]).unwrap_or_default(),
            human: false,
            answered: None,
        });
    }
    Ok(out)
}

/// Merges the findings of all dimensions: the same issue at the same place is one finding
/// (at its highest priority, naming every dimension that saw it), sorted P0 first.
pub fn aggregate(findings: impl IntoIterator<Item = Finding>) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::new();
    for finding in findings {
        let key = |f: &Finding| (f.file.clone(), f.line, normalize(&f.issue));
        match merged.iter_mut().find(|m| key(m) == key(&finding)) {
            Some(existing) => {
                existing.priority = existing.priority.min(finding.priority);
                for d in finding.dimensions {
                    if !existing.dimensions.contains(&d) {
                        existing.dimensions.push(d);
                    }
                }
                if existing.suggestion.is_none() {
                    existing.suggestion = finding.suggestion;
                }
            }
            None => merged.push(finding),
        }
    }
    merged.sort_by(|a, b| (a.priority, &a.file, a.line).cmp(&(b.priority, &b.file, b.line)));
    merged
}

fn normalize(issue: &str) -> String {
    issue
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A finding blocks when its priority is in `block_on`, or a human reported it.
pub fn blocks(finding: &Finding, block_on: &[Priority]) -> bool {
    finding.human || block_on.contains(&finding.priority)
}

/// The task that sends blocking findings back to the agent: one GREEN step per finding.
pub fn feedback_task(round: u32, blocking: &[Finding]) -> Task {
    Task {
        name: format!("Address code review feedback (round {round})"),
        status: TaskStatus::Todo,
        breakdown_history: None,
        tdd_steps: blocking
            .iter()
            .map(|f| Step {
                kind: StepType::Green,
                description: format!("Fix: {f}"),
                status: StepStatus::Todo,
            })
            .collect(),
    }
}

/// Whether `task` is one [`feedback_task`] makes: GREEN steps only, by design (the review or
/// a human asked for a fix; the gates judge it).
pub fn is_feedback_task(task: &Task) -> bool {
    task.name
        .strip_prefix("Address code review feedback (round ")
        .and_then(|rest| rest.strip_suffix(')'))
        .is_some_and(|round| round.parse::<u32>().is_ok())
        && !task.tdd_steps.is_empty()
        && task
            .tdd_steps
            .iter()
            .all(|s| s.kind == StepType::Green && s.description.starts_with("Fix: "))
}

/// `review.json`: the last review's round and findings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub round: u32,
    /// False when no review command is configured: nothing was reviewed.
    pub ran: bool,
    pub dimensions: Vec<String>,
    pub block_on: Vec<Priority>,
    pub findings: Vec<Finding>,
}

impl ReviewRecord {
    pub fn blocking(&self) -> Vec<Finding> {
        self.findings
            .iter()
            .filter(|f| blocks(f, &self.block_on))
            .cloned()
            .collect()
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out =
            serde_json::to_vec_pretty(self).expect("review record serializes: plain data");
        out.push(b'\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn feedback_tasks_are_told_from_a_plans_tasks() {
        let task = feedback_task(2, &[finding(Priority::P1, "a.rs", 3, "bug", "correctness")]);
        assert!(is_feedback_task(&task));
        let mut named_alike = task.clone();
        named_alike.tdd_steps[0].kind = StepType::Red;
        assert!(!is_feedback_task(&named_alike), "a RED step is a plan's");
        let mut renamed = task.clone();
        renamed.name = "Address code review feedback (round two)".into();
        assert!(!is_feedback_task(&renamed));
        let mut empty = task;
        empty.tdd_steps.clear();
        assert!(!is_feedback_task(&empty));
    }

    fn finding(priority: Priority, file: &str, line: u64, issue: &str, dimension: &str) -> Finding {
        Finding {
            priority,
            file: Some(file.into()),
            line: Some(line),
            issue: issue.into(),
            suggestion: None,
            dimensions: vec![dimension.into()],
            human: false,
            answered: None,
        }
    }

    #[test]
    fn reviewer_output_is_parsed_strictly() {
        let ok = br#"{"findings": [
            {"priority": "P1", "file": "src/a.rs", "line": 3, "issue": "unchecked unwrap", "suggestion": "use ?"},
            {"priority": "P3", "issue": "consider a doc comment"}]}"#;
        let parsed = parse_findings(ok, Some("correctness")).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(
            parsed[0].to_string(),
            "[P1] src/a.rs:3: unchecked unwrap (suggestion: use ?)"
        );
        assert_eq!(parsed[1].to_string(), "[P3] consider a doc comment");
        assert_eq!(parse_findings(br#"{"findings": []}"#, None), Ok(vec![]));
        let errors = [
            (
                &b"LGTM!"[..],
                "its output is not JSON (expected value at line 1 column 1)",
            ),
            (b"{}", "its output has no \"findings\" array"),
            (
                br#"{"findings": [{"priority": "high", "issue": "x"}]}"#,
                "findings[0].priority: expected \"P0\", \"P1\", \"P2\" or \"P3\"",
            ),
            (
                br#"{"findings": [{"priority": "P2"}]}"#,
                "findings[0].issue: expected a non-empty string",
            ),
            (
                br#"{"findings": [{"priority": "P2", "issue": "x", "line": "ten"}]}"#,
                "findings[0].line: expected a line number",
            ),
        ];
        for (input, message) in errors {
            assert_eq!(parse_findings(input, None), Err(message.to_string()));
        }
    }

    #[test]
    fn findings_are_merged_across_dimensions_and_sorted() {
        let merged = aggregate([
            finding(Priority::P2, "src/b.rs", 9, "slow loop", "performance"),
            finding(
                Priority::P1,
                "src/a.rs",
                3,
                "Unchecked  unwrap",
                "correctness",
            ),
            finding(
                Priority::P0,
                "src/a.rs",
                3,
                "unchecked unwrap",
                "resilience",
            ),
            finding(Priority::P3, "src/a.rs", 1, "naming", "maintainability"),
        ]);
        let shown: Vec<String> = merged
            .iter()
            .map(|f| format!("{} {:?}", f, f.dimensions))
            .collect();
        assert_eq!(
            shown,
            vec![
                "[P0] src/a.rs:3: Unchecked  unwrap [\"correctness\", \"resilience\"]",
                "[P2] src/b.rs:9: slow loop [\"performance\"]",
                "[P3] src/a.rs:1: naming [\"maintainability\"]",
            ]
        );
    }

    #[test]
    fn blocking_findings_become_one_task() {
        let block_on = [Priority::P0, Priority::P1];
        let p2 = finding(Priority::P2, "x", 1, "minor", "d");
        let mut human = finding(Priority::P3, "x", 2, "rename it", "d");
        human.human = true;
        assert!(!blocks(&p2, &block_on));
        assert!(blocks(&human, &block_on), "a human's finding always blocks");
        let task = feedback_task(
            2,
            &[finding(
                Priority::P1,
                "src/a.rs",
                3,
                "unchecked unwrap",
                "c",
            )],
        );
        assert_eq!(task.name, "Address code review feedback (round 2)");
        assert_eq!(task.tdd_steps.len(), 1);
        assert_eq!(task.tdd_steps[0].kind, StepType::Green);
        assert_eq!(
            task.tdd_steps[0].description,
            "Fix: [P1] src/a.rs:3: unchecked unwrap"
        );
    }
}
