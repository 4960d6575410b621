//! `pr.json`: the active PR plan (docs/refs.md, "pr.json"), step addressing (`T.S`), and validation of
//! submitted plans that reports every problem with its JSON path.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(description = "The PR plan (the INITIALIZING briefing of get_task shows an example).")]
pub struct Plan {
    #[serde(rename = "masterPlanPath")]
    #[schemars(description = "The configured master plan, e.g. docs/Plan_Doc/Active_Plan.md.")]
    pub master_plan_path: String,
    #[serde(rename = "prTitle")]
    #[schemars(
        description = "One line; it names the branch (\"feat: Add numbers\" → feat/add-numbers)."
    )]
    pub pr_title: String,
    #[schemars(description = "What the PR does.")]
    pub summary: String,
    #[serde(rename = "verificationPlan")]
    #[schemars(description = "How the PR is verified.")]
    pub verification_plan: String,
    pub tasks: Vec<Task>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    #[serde(rename = "taskName")]
    #[schemars(description = "One line.")]
    pub name: String,
    pub status: TaskStatus,
    #[serde(
        rename = "breakdownHistory",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(description = "Only in a re-plan, on the first new task.")]
    pub breakdown_history: Option<BreakdownHistory>,
    #[schemars(
        description = "In order; a task with steps left ends with a GREEN or REFACTOR step."
    )]
    pub tdd_steps: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BreakdownHistory {
    #[serde(rename = "originalTaskName")]
    #[schemars(description = "The task this one replaces.")]
    pub original_task_name: String,
    #[schemars(description = "Why it was broken down.")]
    pub justification: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    #[serde(rename = "type")]
    pub kind: StepType,
    #[schemars(description = "What this step does.")]
    pub description: String,
    pub status: StepStatus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    Todo,
    InProgress,
    Done,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepStatus {
    Todo,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepType {
    Red,
    Green,
    Refactor,
}

impl StepType {
    pub fn as_str(self) -> &'static str {
        match self {
            StepType::Red => "RED",
            StepType::Green => "GREEN",
            StepType::Refactor => "REFACTOR",
        }
    }

    /// A checkpoint commit follows every passing GREEN and REFACTOR step (docs/refs.md, "Transition commits").
    pub fn needs_checkpoint(self) -> bool {
        matches!(self, StepType::Green | StepType::Refactor)
    }
}

impl fmt::Display for StepType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step's address: 0-based indices inside, `T.S` (1-based) outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StepId {
    pub task: usize,
    pub step: usize,
}

impl StepId {
    pub fn new(task: usize, step: usize) -> Self {
        StepId { task, step }
    }
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.task + 1, self.step + 1)
    }
}

impl FromStr for StepId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parse = |part: &str| part.parse::<usize>().ok().filter(|n| *n >= 1);
        match s.split_once('.') {
            Some((t, st)) => match (parse(t), parse(st)) {
                (Some(t), Some(st)) => Ok(StepId::new(t - 1, st - 1)),
                _ => Err(format!("`{s}` is not a step id like `2.3`")),
            },
            None => Err(format!("`{s}` is not a step id like `2.3`")),
        }
    }
}

impl Serialize for StepId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StepId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl Plan {
    /// The first TODO step of the first task that is not DONE (docs/refs.md, "pr.json").
    pub fn current_step(&self) -> Option<StepId> {
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, task)| task.status != TaskStatus::Done)
            .find_map(|(t, task)| {
                task.tdd_steps
                    .iter()
                    .position(|s| s.status == StepStatus::Todo)
                    .map(|s| StepId::new(t, s))
            })
    }

    pub fn step(&self, id: StepId) -> Option<&Step> {
        self.tasks.get(id.task)?.tdd_steps.get(id.step)
    }

    pub fn task(&self, id: StepId) -> Option<&Task> {
        self.tasks.get(id.task)
    }

    /// True when no step is left to do: the PR is ready for review, or the plan is stale.
    pub fn all_done(&self) -> bool {
        self.current_step().is_none()
    }

    /// Marks a step DONE and keeps its task's status in line: DONE when every step is,
    /// IN_PROGRESS once any is.
    pub fn complete_step(&mut self, id: StepId) {
        let Some(task) = self.tasks.get_mut(id.task) else {
            return;
        };
        if let Some(step) = task.tdd_steps.get_mut(id.step) {
            step.status = StepStatus::Done;
        }
        task.status = if task.tdd_steps.iter().all(|s| s.status == StepStatus::Done) {
            TaskStatus::Done
        } else {
            TaskStatus::InProgress
        };
    }

    /// Every step and task back to TODO; returns how many steps were marked DONE.
    pub fn reset_progress(&mut self) -> usize {
        let mut done = 0;
        for task in &mut self.tasks {
            task.status = TaskStatus::Todo;
            for step in &mut task.tdd_steps {
                done += usize::from(step.status == StepStatus::Done);
                step.status = StepStatus::Todo;
            }
        }
        done
    }

    /// (steps done, steps in all)
    pub fn progress(&self) -> (usize, usize) {
        let steps = self.tasks.iter().flat_map(|t| &t.tdd_steps);
        let total = steps.clone().count();
        let done = steps.filter(|s| s.status == StepStatus::Done).count();
        (done, total)
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("plan serializes: plain data");
        out.push(b'\n');
        out
    }
}

/// What briefings, `status` and the submit checks need of a plan: small enough to live in
/// `state.json`, so the hot path never parses a large `pr.json` (docs/architecture.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub title: String,
    #[serde(rename = "masterPlanPath")]
    pub master_plan_path: String,
    pub tasks: usize,
    pub done: usize,
    pub total: usize,
    /// The current step: the first TODO step of the first task not DONE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<StepSummary>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSummary {
    pub id: StepId,
    pub task: String,
    #[serde(rename = "type")]
    pub kind: StepType,
    pub description: String,
    /// The step before it in its task is a RED step (a GREEN step then makes that test pass;
    /// otherwise, as for review feedback, it makes the change it describes).
    #[serde(default)]
    pub after_red: bool,
}

impl PlanSummary {
    pub fn all_done(&self) -> bool {
        self.current.is_none()
    }
}

impl Plan {
    pub fn summary(&self) -> PlanSummary {
        let (done, total) = self.progress();
        PlanSummary {
            title: self.pr_title.clone(),
            master_plan_path: self.master_plan_path.clone(),
            tasks: self.tasks.len(),
            done,
            total,
            current: self.current_step().and_then(|id| self.step_summary(id)),
        }
    }

    pub fn step_summary(&self, id: StepId) -> Option<StepSummary> {
        let task = self.task(id)?;
        let step = self.step(id)?;
        let after_red = id.step > 0 && task.tdd_steps[id.step - 1].kind == StepType::Red;
        Some(StepSummary {
            id,
            task: task.name.clone(),
            kind: step.kind,
            description: step.description.clone(),
            after_red,
        })
    }
}

pub use super::problems::Problem;
use super::problems::{Problems, describe, join, one_of};

const PLAN_FIELDS: &[&str] = &[
    "masterPlanPath",
    "prTitle",
    "summary",
    "verificationPlan",
    "tasks",
];
const TASK_FIELDS: &[&str] = &["taskName", "status", "breakdownHistory", "tdd_steps"];
const STEP_FIELDS: &[&str] = &["type", "description", "status"];
const HISTORY_FIELDS: &[&str] = &["originalTaskName", "justification"];

/// Parses and validates a submitted plan. On failure returns **every** problem found, in
/// document order, so an agent can fix them all in one go.
pub fn parse_plan(bytes: &[u8]) -> Result<Plan, Vec<Problem>> {
    parse(bytes, None, false).map(|(plan, _)| plan)
}

/// [`parse_plan`] for a plan an agent submits: its `masterPlanPath` must also be the master
/// plan the configuration names, the file finalization checks.
pub fn parse_submitted_plan(bytes: &[u8], master_plan: &str) -> Result<Plan, Vec<Problem>> {
    parse(bytes, Some(master_plan), false).map(|(plan, _)| plan)
}

/// [`parse_submitted_plan`] for the plan that starts a PR: its statuses are no claim the
/// workflow takes (docs/integrity.md): every step starts TODO. Also returns how many steps
/// it marked DONE.
pub fn parse_first_plan(bytes: &[u8], master_plan: &str) -> Result<(Plan, usize), Vec<Problem>> {
    parse(bytes, Some(master_plan), true)
}

fn parse(
    bytes: &[u8],
    master_plan: Option<&str>,
    fresh: bool,
) -> Result<(Plan, usize), Vec<Problem>> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        vec![Problem {
            path: "(root)".into(),
            message: format!("not valid JSON: {e}"),
        }]
    })?;
    let mut v = Validator {
        problems: Problems::new(duplicate_keys(bytes)),
        master_plan,
    };
    v.plan(&value);
    if v.problems.is_empty() {
        let mut plan: Plan = serde_json::from_value(value).map_err(|e| {
            vec![Problem {
                path: "(root)".into(),
                message: e.to_string(),
            }]
        })?;
        let claimed_done = if fresh { plan.reset_progress() } else { 0 };
        if plan.all_done() {
            v.problem(
                "tasks",
                "every step is already DONE; a plan needs at least one TODO step",
            );
        } else if super::branch_name::sanitize(&plan.pr_title).is_none() {
            v.problem(
                "prTitle",
                "needs at least one letter or digit to name the PR branch",
            );
        } else {
            return Ok((plan, claimed_done));
        }
    }
    Err(v.problems.into_vec())
}

/// Every key that appears twice in one JSON object, at its path. serde_json keeps the last
/// silently, so a plan (or an agent's settings file) could say one thing to a reader and
/// another to us.
pub fn duplicate_keys(bytes: &[u8]) -> Vec<Problem> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::cell::RefCell;

    struct Walk<'a> {
        path: String,
        found: &'a RefCell<Vec<Problem>>,
    }
    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while seq
                .next_element_seed(Walk {
                    path: format!("{}[{i}]", self.path),
                    found: self.found,
                })?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let path = join(&self.path, &key);
                if !seen.insert(key) {
                    self.found.borrow_mut().push(Problem {
                        path: path.clone(),
                        message: "the key appears more than once in this object; give it once"
                            .into(),
                    });
                }
                map.next_value_seed(Walk {
                    path,
                    found: self.found,
                })?;
            }
            Ok(())
        }
    }

    let found = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // The JSON is already known to parse; a walk that stops early only finds fewer.
    let _ = Walk {
        path: String::new(),
        found: &found,
    }
    .deserialize(&mut de);
    found.into_inner()
}

/// Characters that make text read differently from what it is: C0/C1 controls, the
/// bidirectional overrides and isolates (a title that renders reversed), the invisible
/// direction marks and the line and paragraph separators.
pub fn is_deceptive_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{FEFF}'
        )
}

/// Like [`is_deceptive_char`], but a text of several lines may keep its newlines and tabs.
fn is_deceptive_in_text(c: char) -> bool {
    !matches!(c, '\n' | '\r' | '\t') && is_deceptive_char(c)
}

/// Checks a plan's JSON by hand (its rules relate fields to each other), naming each
/// problem through the collector every input shares.
struct Validator<'a> {
    problems: Problems,
    master_plan: Option<&'a str>,
}

impl Validator<'_> {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(path, message);
    }

    fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        fields: &[&str],
    ) -> Option<&'v serde_json::Map<String, Value>> {
        self.problems.object(path, value, fields)
    }

    /// A required non-empty string; returns it when it is one.
    fn string<'v>(
        &mut self,
        path: &str,
        map: &'v serde_json::Map<String, Value>,
        key: &str,
    ) -> Option<&'v str> {
        let at = join(path, key);
        match map.get(key) {
            None => self.problem(&at, "missing (expected a non-empty string)"),
            Some(Value::String(s)) if s.trim().is_empty() => self.problem(&at, "must not be empty"),
            Some(Value::String(s)) if s.chars().any(is_deceptive_in_text) => self.problem(
                &at,
                "must not contain control, bidirectional-override or invisible direction characters",
            ),
            Some(Value::String(s)) => return Some(s),
            Some(other) => {
                self.problem(&at, format!("expected a string, found {}", describe(other)))
            }
        }
        None
    }

    /// A string that ends up in a commit subject, a branch name or a path: one line, no
    /// control characters.
    fn line<'v>(
        &mut self,
        path: &str,
        map: &'v serde_json::Map<String, Value>,
        key: &str,
    ) -> Option<&'v str> {
        let s = self.string(path, map, key)?;
        if s.chars().any(is_deceptive_char) {
            self.problem(
                &join(path, key),
                "must be a single line without control, bidirectional-override or invisible direction \
                 characters",
            );
            return None;
        }
        Some(s)
    }

    fn enumeration(
        &mut self,
        path: &str,
        map: &serde_json::Map<String, Value>,
        key: &str,
        allowed: &[&str],
    ) -> Option<String> {
        let at = join(path, key);
        let expected = one_of(allowed);
        match map.get(key) {
            None => self.problem(&at, format!("missing (expected {expected})")),
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => return Some(s.clone()),
            Some(Value::String(s)) => {
                self.problem(&at, format!("expected {expected}, found \"{s}\""))
            }
            Some(other) => self.problem(
                &at,
                format!("expected {expected}, found {}", describe(other)),
            ),
        }
        None
    }

    fn plan(&mut self, value: &Value) {
        let Some(map) = self.object("", value, PLAN_FIELDS) else {
            return;
        };
        let master_plan = self.line("", map, "masterPlanPath");
        if let (Some(given), Some(configured)) = (master_plan, self.master_plan)
            && given.trim_start_matches("./") != configured
        {
            self.problem(
                "masterPlanPath",
                format!(
                    "is \"{given}\", but the configured master plan (master_plan in .orchestrate.toml) is \
                     \"{configured}\"; the plan must come from it"
                ),
            );
        }
        self.line("", map, "prTitle");
        for key in ["summary", "verificationPlan"] {
            self.string("", map, key);
        }
        match map.get("tasks") {
            None => self.problem("tasks", "missing (expected a non-empty array of tasks)"),
            Some(Value::Array(tasks)) if tasks.is_empty() => {
                self.problem("tasks", "must contain at least one task")
            }
            Some(Value::Array(tasks)) => {
                for (i, task) in tasks.iter().enumerate() {
                    self.task(&format!("tasks[{i}]"), task);
                }
            }
            Some(other) => self.problem(
                "tasks",
                format!("expected an array of tasks, found {}", describe(other)),
            ),
        }
    }

    fn task(&mut self, path: &str, value: &Value) {
        let Some(map) = self.object(path, value, TASK_FIELDS) else {
            return;
        };
        self.line(path, map, "taskName");
        let status = self.enumeration(
            path,
            map,
            "status",
            &["TODO", "IN_PROGRESS", "DONE", "ERROR"],
        );
        if let Some(history) = map.get("breakdownHistory") {
            let at = join(path, "breakdownHistory");
            if let Some(h) = self.object(&at, history, HISTORY_FIELDS) {
                self.string(&at, h, "originalTaskName");
                self.string(&at, h, "justification");
            }
        }
        let steps_at = join(path, "tdd_steps");
        match map.get("tdd_steps") {
            None => self.problem(&steps_at, "missing (expected a non-empty array of steps)"),
            Some(Value::Array(steps)) if steps.is_empty() => {
                self.problem(&steps_at, "must contain at least one step")
            }
            Some(Value::Array(steps)) => {
                let mut first_todo = None;
                for (i, step) in steps.iter().enumerate() {
                    let at = format!("{steps_at}[{i}]");
                    if self.step(&at, step).as_deref() == Some("TODO") && first_todo.is_none() {
                        first_todo = Some(i);
                    }
                }
                if let (Some("DONE"), Some(i)) = (status.as_deref(), first_todo) {
                    self.problem(
                        &join(path, "status"),
                        format!("is DONE, but tdd_steps[{i}] is still TODO"),
                    );
                }
                self.ends_verified(&steps_at, steps);
            }
            Some(other) => self.problem(
                &steps_at,
                format!("expected an array of steps, found {}", describe(other)),
            ),
        }
    }

    /// A task with work left must end with a GREEN or REFACTOR step still to do: a RED step
    /// only proves a test fails, so a task whose remaining steps are all RED would reach
    /// finalization with nothing verified and no tree the squash could be held to.
    fn ends_verified(&mut self, steps_at: &str, steps: &[Value]) {
        let field = |step: &Value, key: &str| {
            step.get(key)
                .and_then(Value::as_str)
                .map(ToString::to_string)
        };
        let Some(last_todo) = steps
            .iter()
            .rposition(|s| field(s, "status").as_deref() == Some("TODO"))
        else {
            return;
        };
        if field(&steps[last_todo], "type").as_deref() != Some("RED") {
            return;
        }
        let which = if last_todo + 1 == steps.len() {
            format!("ends with a RED step (tdd_steps[{last_todo}])")
        } else {
            format!("has a RED step (tdd_steps[{last_todo}]) as its last TODO step")
        };
        self.problem(
            steps_at,
            format!(
                "{which}; every task must end with a GREEN or REFACTOR step: a RED step only proves a \
                 test fails, so nothing would verify the task's work (add the GREEN step that makes the \
                 test pass)"
            ),
        );
    }

    /// Returns the step's status when it is valid.
    fn step(&mut self, path: &str, value: &Value) -> Option<String> {
        let map = self.object(path, value, STEP_FIELDS)?;
        self.enumeration(path, map, "type", &["RED", "GREEN", "REFACTOR"]);
        self.string(path, map, "description");
        self.enumeration(path, map, "status", &["TODO", "DONE"])
    }
}

/// The plan schema exactly as the INITIALIZING briefing shows it.
pub const PLAN_SCHEMA: &str = r#"{
  "masterPlanPath": "string  (path of the master plan this PR comes from)",
  "prTitle": "string  (e.g. \"feat: Implement New Feature\"; names the branch)",
  "summary": "string  (what the PR delivers)",
  "verificationPlan": "string  (how the whole PR is proven to work)",
  "tasks": [
    {
      "taskName": "string",
      "status": "TODO | IN_PROGRESS | DONE | ERROR",
      "breakdownHistory": { "originalTaskName": "string", "justification": "string" },  // optional
      "tdd_steps": [
        { "type": "RED | GREEN | REFACTOR", "description": "string", "status": "TODO | DONE" }
      ]
    }
  ]
}"#;

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn problems(json: &str) -> Vec<String> {
        parse_plan(json.as_bytes())
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const GOOD: &str = r#"{
        "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
        "verificationPlan": "v",
        "tasks": [
          {"taskName": "t1", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "r", "status": "TODO"},
            {"type": "GREEN", "description": "g", "status": "TODO"}]},
          {"taskName": "t2", "status": "TODO", "tdd_steps": [
            {"type": "REFACTOR", "description": "f", "status": "TODO"}]}
        ]}"#;

    #[test]
    fn a_good_plan_parses_and_addresses_steps() {
        let mut plan = parse_plan(GOOD.as_bytes()).unwrap();
        assert_eq!(plan.current_step(), Some(StepId::new(0, 0)));
        plan.complete_step(StepId::new(0, 0));
        assert_eq!(plan.tasks[0].status, TaskStatus::InProgress);
        assert_eq!(plan.current_step(), Some(StepId::new(0, 1)));
        plan.complete_step(StepId::new(0, 1));
        assert_eq!(plan.tasks[0].status, TaskStatus::Done);
        assert_eq!(
            plan.current_step().map(|s| s.to_string()),
            Some("2.1".into())
        );
        assert_eq!(plan.progress(), (2, 3));
        plan.complete_step(StepId::new(1, 0));
        assert!(plan.all_done());
    }

    #[test]
    fn not_json_is_one_problem_at_the_root() {
        assert_eq!(
            problems("<plan>not json</plan>"),
            vec!["(root): not valid JSON: expected value at line 1 column 1"]
        );
    }

    #[test]
    fn every_problem_is_listed_with_its_path() {
        let json = r#"{
            "prTitle": 7, "summary": "", "verificationPlan": "v", "extra": true,
            "tasks": [
              {"taskName": "t1", "status": "WIP", "tdd_steps": [
                {"type": "BLUE", "description": "r", "status": "TODO"},
                {"kind": "GREEN", "description": "g"}]},
              {"taskName": "t2", "status": "DONE", "tdd_steps": [
                {"type": "RED", "description": "x", "status": "TODO"}]},
              {"status": "TODO", "tdd_steps": []},
              "nope"
            ]}"#;
        assert_eq!(
            problems(json),
            vec![
                "extra: unknown field (expected one of masterPlanPath, prTitle, summary, verificationPlan, tasks)",
                "masterPlanPath: missing (expected a non-empty string)",
                "prTitle: expected a string, found a number",
                "summary: must not be empty",
                "tasks[0].status: expected TODO, IN_PROGRESS, DONE or ERROR, found \"WIP\"",
                "tasks[0].tdd_steps[0].type: expected RED, GREEN or REFACTOR, found \"BLUE\"",
                "tasks[0].tdd_steps[1].kind: unknown field (expected one of type, description, status)",
                "tasks[0].tdd_steps[1].type: missing (expected RED, GREEN or REFACTOR)",
                "tasks[0].tdd_steps[1].status: missing (expected TODO or DONE)",
                "tasks[1].status: is DONE, but tdd_steps[0] is still TODO",
                "tasks[1].tdd_steps: ends with a RED step (tdd_steps[0]); every task must end with a GREEN or \
                 REFACTOR step: a RED step only proves a test fails, so nothing would verify the task's work \
                 (add the GREEN step that makes the test pass)",
                "tasks[2].taskName: missing (expected a non-empty string)",
                "tasks[2].tdd_steps: must contain at least one step",
                "tasks[3]: expected an object, found a string",
            ]
        );
    }

    #[test]
    fn empty_tasks_and_wrong_root() {
        assert_eq!(
            problems(
                r#"{"masterPlanPath":"m","prTitle":"p","summary":"s","verificationPlan":"v","tasks":[]}"#
            ),
            vec!["tasks: must contain at least one task"]
        );
        assert_eq!(
            problems("[]"),
            vec!["(root): expected an object, found an array"]
        );
    }

    #[test]
    fn a_plan_with_nothing_to_do_is_rejected() {
        let json = GOOD.replace("\"TODO\"", "\"DONE\"");
        assert_eq!(
            problems(&json),
            vec!["tasks: every step is already DONE; a plan needs at least one TODO step"]
        );
    }

    #[test]
    fn a_task_with_work_left_ends_with_a_green_or_refactor_step() {
        let red_only = GOOD.replace(
            r#"{"type": "REFACTOR", "description": "f", "status": "TODO"}"#,
            r#"{"type": "RED", "description": "f", "status": "TODO"}"#,
        );
        assert_eq!(
            problems(&red_only),
            vec![
                "tasks[1].tdd_steps: ends with a RED step (tdd_steps[0]); every task must end with a GREEN or \
                 REFACTOR step: a RED step only proves a test fails, so nothing would verify the task's work \
                 (add the GREEN step that makes the test pass)"
            ]
        );
        // A GREEN step already DONE after the last RED one verifies nothing that is left.
        let green_done = GOOD.replace(
            r#"{"type": "GREEN", "description": "g", "status": "TODO"}"#,
            r#"{"type": "GREEN", "description": "g", "status": "DONE"}"#,
        );
        assert_eq!(
            problems(&green_done),
            vec![
                "tasks[0].tdd_steps: has a RED step (tdd_steps[0]) as its last TODO step; every task must end \
                 with a GREEN or REFACTOR step: a RED step only proves a test fails, so nothing would verify \
                 the task's work (add the GREEN step that makes the test pass)"
            ]
        );
        // A task with nothing left to do verifies nothing more either way: it is history.
        let done_red = GOOD.replace(
            r#"{"taskName": "t1", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "r", "status": "TODO"},"#,
            r#"{"taskName": "t0", "status": "DONE", "tdd_steps": [
            {"type": "RED", "description": "r0", "status": "DONE"}]},
          {"taskName": "t1", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "r", "status": "TODO"},"#,
        );
        assert_eq!(
            parse_plan(done_red.as_bytes()).map(|p| p.tasks.len()),
            Ok(3)
        );
    }

    #[test]
    fn a_title_without_letters_is_rejected() {
        let json = GOOD.replace("feat: Add numbers", "!!! ???");
        assert_eq!(
            problems(&json),
            vec!["prTitle: needs at least one letter or digit to name the PR branch"]
        );
    }

    #[test]
    fn names_that_become_subjects_and_branches_are_single_lines() {
        let json = GOOD
            .replace("feat: Add numbers", r"feat: Add\nnumbers")
            .replace(r#""taskName": "t2""#, r#""taskName": "t2\u001b[31m""#)
            .replace("docs/plan.md", r"docs/plan.md\r");
        assert_eq!(
            problems(&json),
            vec![
                "masterPlanPath: must be a single line without control, bidirectional-override or invisible \
                 direction characters",
                "prTitle: must be a single line without control, bidirectional-override or invisible direction \
                 characters",
                "tasks[1].taskName: must not contain control, bidirectional-override or invisible direction \
                 characters",
            ]
        );
    }

    #[test]
    fn a_submitted_plan_names_the_configured_master_plan() {
        assert!(parse_submitted_plan(GOOD.as_bytes(), "docs/plan.md").is_ok());
        let json = GOOD.replace("docs/plan.md", "./docs/plan.md");
        assert!(
            parse_submitted_plan(json.as_bytes(), "docs/plan.md").is_ok(),
            "a leading ./ names the same file"
        );
        let json = GOOD.replace("\"tasks\": [", "\"tasks\": 3, \"x\": [");
        let got: Vec<String> = parse_submitted_plan(json.as_bytes(), "PLAN.md")
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec![
                "x: unknown field (expected one of masterPlanPath, prTitle, summary, verificationPlan, tasks)",
                "masterPlanPath: is \"docs/plan.md\", but the configured master plan (master_plan in \
                 .orchestrate.toml) is \"PLAN.md\"; the plan must come from it",
                "tasks: expected an array of tasks, found a number",
            ],
            "listed with every other problem"
        );
    }

    #[test]
    fn breakdown_history_is_checked_when_present() {
        let json = GOOD.replace(
            r#""taskName": "t2","#,
            r#""taskName": "t2", "breakdownHistory": {"originalTaskName": "", "why": 1},"#,
        );
        assert_eq!(
            problems(&json),
            vec![
                "tasks[1].breakdownHistory.why: unknown field (expected one of originalTaskName, justification)",
                "tasks[1].breakdownHistory.originalTaskName: must not be empty",
                "tasks[1].breakdownHistory.justification: missing (expected a non-empty string)",
            ]
        );
    }

    #[test]
    fn step_ids_parse_and_print_one_based() {
        assert_eq!("2.3".parse::<StepId>(), Ok(StepId::new(1, 2)));
        assert!("0.1".parse::<StepId>().is_err());
        assert!("x".parse::<StepId>().is_err());
        assert_eq!(StepId::new(0, 0).to_string(), "1.1");
    }
}
