//! The store's record of the active plan in `state.json` (`plan_progress`): the steps done
//! since `pr.json` was stored, and the plan's summary, so that a passing step rewrites a few
//! bytes and `get-task` parses no plan.

use super::StoreError;
use crate::workflow::plan::{Plan, PlanSummary, StepId, StepSummary, StepType};
use crate::workflow::state::{State, StateWire};

/// `plan_progress` in `state.json`: the store's record of the plan. `pr.json` is written
/// once per plan; the steps completed since ride here, so a passing step rewrites a few
/// bytes, not the plan. The summary spares `get-task` and `status` parsing a large plan, and
/// is trusted only while `plan` names the `pr.json` beside it (a hand edit makes it stale).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Progress {
    pub(super) plan: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) done: Vec<StepId>,
    pub(super) summary: PlanSummary,
    /// The steps after the current one in its task: completing the current step then needs
    /// no parse of the plan to know the next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) ahead: Vec<StepSummary>,
}

impl Progress {
    /// The record for `plan` stored as blob `id`, with `done` completed since.
    pub(super) fn of(plan: &Plan, id: String, done: Vec<StepId>) -> Progress {
        let summary = plan.summary();
        let ahead = summary
            .current
            .as_ref()
            .and_then(|c| plan.tasks.get(c.id.task).map(|t| (c.id, t)))
            .map(|(id, task)| {
                (id.step + 1..task.tdd_steps.len())
                    .filter_map(|s| plan.step_summary(StepId::new(id.task, s)))
                    .collect()
            })
            .unwrap_or_default();
        Progress {
            plan: id,
            done,
            summary,
            ahead,
        }
    }

    /// The record once `step`, the current step, is done, when the next one is in the same
    /// task (every step before it is done, since steps are done in order).
    pub(super) fn completed(&self, step: StepId) -> Option<Progress> {
        let current = self.summary.current.as_ref()?;
        let (next, rest) = self.ahead.split_first()?;
        if current.id != step {
            return None;
        }
        let mut done = self.done.clone();
        done.push(step);
        Some(Progress {
            plan: self.plan.clone(),
            done,
            summary: PlanSummary {
                done: self.summary.done + 1,
                current: Some(StepSummary {
                    after_red: current.kind == StepType::Red,
                    ..next.clone()
                }),
                ..self.summary.clone()
            },
            ahead: rest.to_vec(),
        })
    }
}

/// `state.json` with the store's plan record in it.
pub(super) fn state_json(
    state: &State,
    progress: Option<&Progress>,
) -> Result<Vec<u8>, StoreError> {
    let mut wire = StateWire::from(state.clone());
    wire.plan_progress = progress
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut out =
        serde_json::to_vec_pretty(&wire).map_err(|e| StoreError::Internal(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}

/// Splits `state.json` into the state and the store's plan record.
pub(super) fn read_state(bytes: &[u8]) -> Result<(State, Option<Progress>), String> {
    let (wire, progress) = State::wire_with_record(bytes)?;
    Ok((State::try_from(wire)?, progress))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Completing a step inside its task from the record alone gives what reading the whole
    /// plan gives; at a task's last step it declines, and the plan is read.
    #[test]
    fn the_record_knows_the_next_step_of_the_task_without_the_plan() {
        let mut plan = crate::workflow::plan::parse_plan(
            br#"{"masterPlanPath": "m", "prTitle": "feat: X", "summary": "s", "verificationPlan": "v",
                "tasks": [
                  {"taskName": "a", "status": "TODO", "tdd_steps": [
                    {"type": "RED", "description": "r", "status": "TODO"},
                    {"type": "GREEN", "description": "g", "status": "TODO"},
                    {"type": "REFACTOR", "description": "f", "status": "TODO"}]},
                  {"taskName": "b", "status": "TODO", "tdd_steps": [
                    {"type": "RED", "description": "r2", "status": "TODO"},
                    {"type": "GREEN", "description": "g2", "status": "TODO"}]}]}"#,
        )
        .unwrap();
        let mut record = Progress::of(&plan, "blob".into(), Vec::new());
        let mut done = Vec::new();
        for step in [StepId::new(0, 0), StepId::new(0, 1)] {
            let fast = record
                .completed(step)
                .expect("the next step is in the task");
            plan.complete_step(step);
            done.push(step);
            let slow = Progress::of(&plan, "blob".into(), done.clone());
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&slow).unwrap()
            );
            record = fast;
        }
        assert!(
            record.completed(StepId::new(0, 2)).is_none(),
            "the task's last step: the next one is in another task"
        );
        assert!(
            record.completed(StepId::new(1, 0)).is_none(),
            "not the current step"
        );
    }
}
