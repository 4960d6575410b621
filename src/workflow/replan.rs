//! The rules a re-plan must follow after a scope reduction (docs/agent-guide.md, "REPLANNING"):
//! DONE tasks unchanged, the failed task replaced by smaller ones, the first carrying
//! `breakdownHistory`, the last a verification task, everything else as it was.

use super::plan::{Plan, Problem, StepStatus, StepType, Task, TaskStatus};
use super::state::ReplanContext;

/// Checks `new` against the plan it replaces; returns every violation, with its JSON path.
pub fn check_replan(old: &Plan, context: &ReplanContext, new: &Plan) -> Result<(), Vec<Problem>> {
    let mut problems = Vec::new();
    let mut problem = |path: String, message: String| problems.push(Problem { path, message });
    let failed = context.step.task;
    let before = &old.tasks[..failed.min(old.tasks.len())];
    let after = old.tasks.get(failed + 1..).unwrap_or_default();
    let original = &context.original_task;

    if new.pr_title != old.pr_title {
        problem(
            "prTitle".into(),
            format!(
                "must stay \"{}\": the PR and its branch do not change with a re-plan",
                old.pr_title
            ),
        );
    }
    // The new tasks sit between the unchanged ones before and after the replaced task.
    let Some(new_count) = new
        .tasks
        .len()
        .checked_sub(before.len() + after.len())
        .filter(|n| *n >= 2)
    else {
        problem(
            "tasks".into(),
            format!(
                "expected the {} task(s) before \"{original}\" unchanged, at least two new tasks in its place \
                 (the smaller tasks, then a verification task), and the {} task(s) after it unchanged; \
                 found {} task(s) in all",
                before.len(),
                after.len(),
                new.tasks.len()
            ),
        );
        return Err(problems);
    };
    for (i, (was, now)) in before.iter().zip(&new.tasks).enumerate() {
        if was != now {
            problem(
                format!("tasks[{i}]"),
                format!(
                    "must stay exactly as it was (\"{}\", {}): it comes before the replaced task",
                    was.name,
                    status_word(was)
                ),
            );
        }
    }
    let first_new = before.len();
    let last_new = first_new + new_count - 1;
    for (k, (was, now)) in after.iter().zip(&new.tasks[last_new + 1..]).enumerate() {
        if was != now {
            problem(
                format!("tasks[{}]", last_new + 1 + k),
                format!(
                    "must stay exactly as it was (\"{}\"): it comes after the replaced task",
                    was.name
                ),
            );
        }
    }
    check_new_tasks(
        &new.tasks[first_new..=last_new],
        first_new,
        original,
        &mut problem,
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The tasks that replace the failed one (`new`, from index `first_new`): all TODO, the first
/// recording that it replaces `original`, the last the verification task.
fn check_new_tasks(
    new: &[Task],
    first_new: usize,
    original: &str,
    problem: &mut impl FnMut(String, String),
) {
    let last = new.len() - 1;
    for (i, task) in (first_new..).zip(new) {
        if task.status != TaskStatus::Todo
            || task.tdd_steps.iter().any(|s| s.status != StepStatus::Todo)
        {
            problem(
                format!("tasks[{i}]"),
                "is a new task: it and all its steps must be TODO (nothing of it is verified yet)"
                    .into(),
            );
        }
    }
    for (i, task) in (first_new..).zip(new) {
        // The plan's own rules, held here too: the transition that replays a recorded
        // re-plan runs this check, not the plan's parser, and a new task with no step (or
        // one that ends at its RED test) would drop the replaced task's work unseen.
        match task.tdd_steps.last().map(|s| s.kind) {
            None => problem(
                format!("tasks[{i}].tdd_steps"),
                "a new task needs its steps: a RED test, then the GREEN code".into(),
            ),
            Some(StepType::Red) => problem(
                format!("tasks[{i}].tdd_steps"),
                "a new task ends with a GREEN or REFACTOR step, not its RED test".into(),
            ),
            Some(_) => {}
        }
    }
    match &new[0].breakdown_history {
        None => problem(
            format!("tasks[{first_new}].breakdownHistory"),
            format!(
                "missing: the first new task must record that it replaces \"{original}\" and why"
            ),
        ),
        Some(h) if h.original_task_name != original => problem(
            format!("tasks[{first_new}].breakdownHistory.originalTaskName"),
            format!(
                "must be \"{original}\", the task being replaced, not \"{}\"",
                h.original_task_name
            ),
        ),
        Some(_) => {}
    }
    if !new[last].name.to_lowercase().contains("verification") {
        problem(
            format!("tasks[{}].taskName", first_new + last),
            format!(
                "the last new task must be the verification task (its name contains \"Verification\") that \
                 proves the new tasks together achieve \"{original}\"; found \"{}\"",
                new[last].name
            ),
        );
    }
}

fn status_word(task: &Task) -> &'static str {
    match task.status {
        TaskStatus::Done => "DONE",
        TaskStatus::InProgress => "IN_PROGRESS",
        TaskStatus::Todo => "TODO",
        TaskStatus::Error => "ERROR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::plan::{BreakdownHistory, StepId, parse_plan};
    use pretty_assertions::assert_eq;

    const OLD: &str = r#"{
        "masterPlanPath": "m", "prTitle": "feat: calc", "summary": "s", "verificationPlan": "v",
        "tasks": [
          {"taskName": "add", "status": "DONE", "tdd_steps": [
            {"type": "RED", "description": "r", "status": "DONE"}]},
          {"taskName": "sub", "status": "IN_PROGRESS", "tdd_steps": [
            {"type": "RED", "description": "test sub", "status": "DONE"},
            {"type": "GREEN", "description": "implement sub", "status": "TODO"}]},
          {"taskName": "mul", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test mul", "status": "TODO"},
            {"type": "GREEN", "description": "implement mul", "status": "TODO"}]}
        ]}"#;

    fn old() -> Plan {
        let mut p: Plan = serde_json::from_str(OLD).unwrap();
        p.tasks[0].status = TaskStatus::Done;
        p
    }

    fn context() -> ReplanContext {
        ReplanContext {
            original_task: "sub".into(),
            step: StepId::new(1, 1),
            error: "boom".into(),
            untracked: vec![],
        }
    }

    fn new_task(name: &str, history: bool) -> Task {
        let json = format!(
            r#"{{"taskName": "{name}", "status": "TODO", "tdd_steps": [
                {{"type": "RED", "description": "r", "status": "TODO"}},
                {{"type": "GREEN", "description": "g", "status": "TODO"}}]}}"#
        );
        let mut t: Task = serde_json::from_str(&json).unwrap();
        if history {
            t.breakdown_history = Some(BreakdownHistory {
                original_task_name: "sub".into(),
                justification: "too big".into(),
            });
        }
        t
    }

    /// A re-plan that follows every rule.
    fn good() -> Plan {
        let mut p = old();
        p.tasks.splice(
            1..2,
            [
                new_task("sub 1a: negate", true),
                new_task("sub 1b (Verification): sub", false),
            ],
        );
        p
    }

    fn problems(new: &Plan) -> Vec<String> {
        check_replan(&old(), &context(), new)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_good_replan_passes() {
        assert_eq!(check_replan(&old(), &context(), &good()), Ok(()));
        // Through the full plan parser too.
        let json = String::from_utf8(good().to_json()).unwrap();
        assert!(parse_plan(json.as_bytes()).is_ok());
    }

    #[test]
    fn each_rule_on_its_own() {
        let mut changed_done = good();
        changed_done.tasks[0].name = "addition".into();
        let mut dropped_after = good();
        dropped_after.tasks.pop();
        dropped_after.tasks.push(new_task("mul changed", false));
        let mut no_history = good();
        no_history.tasks[1].breakdown_history = None;
        let mut wrong_history = good();
        wrong_history.tasks[1]
            .breakdown_history
            .as_mut()
            .unwrap()
            .original_task_name = "add".into();
        let mut no_verification = good();
        no_verification.tasks[2].name = "sub 1b: finish".into();
        let mut done_new = good();
        done_new.tasks[2].tdd_steps[0].status = StepStatus::Done;
        let mut retitled = good();
        retitled.pr_title = "feat: other".into();
        let mut only_one = old();
        only_one.tasks[1] = new_task("sub (Verification)", true);
        let mut kept_failed = old();
        kept_failed
            .tasks
            .insert(2, new_task("sub 2 (Verification)", false));
        #[rustfmt::skip]
        let cases: Vec<(&str, Plan, Vec<&str>)> = vec![
            ("a DONE task changed", changed_done,
             vec!["tasks[0]: must stay exactly as it was (\"add\", DONE): it comes before the replaced task"]),
            ("a later task changed", dropped_after,
             vec!["tasks[3]: must stay exactly as it was (\"mul\"): it comes after the replaced task"]),
            ("no breakdownHistory", no_history,
             vec!["tasks[1].breakdownHistory: missing: the first new task must record that it replaces \"sub\" and why"]),
            ("breakdownHistory names another task", wrong_history,
             vec!["tasks[1].breakdownHistory.originalTaskName: must be \"sub\", the task being replaced, not \"add\""]),
            ("no verification task last", no_verification,
             vec!["tasks[2].taskName: the last new task must be the verification task (its name contains \"Verification\") that proves the new tasks together achieve \"sub\"; found \"sub 1b: finish\""]),
            ("a new step marked DONE", done_new,
             vec!["tasks[2]: is a new task: it and all its steps must be TODO (nothing of it is verified yet)"]),
            ("the PR title changed", retitled,
             vec!["prTitle: must stay \"feat: calc\": the PR and its branch do not change with a re-plan"]),
            ("one new task is not a breakdown", only_one,
             vec!["tasks: expected the 1 task(s) before \"sub\" unchanged, at least two new tasks in its place (the smaller tasks, then a verification task), and the 1 task(s) after it unchanged; found 3 task(s) in all"]),
            ("the failed task kept", kept_failed,
             vec![
                 "tasks[1]: is a new task: it and all its steps must be TODO (nothing of it is verified yet)",
                 "tasks[1].breakdownHistory: missing: the first new task must record that it replaces \"sub\" and why",
             ]),
        ];
        for (name, plan, expected) in cases {
            assert_eq!(problems(&plan), expected, "{name}");
        }
    }
}
