//! What a PR's chain records about its tests (docs/integrity.md): the RED test each task
//! pinned, the GREEN steps that had changed one, and the RED steps that pinned no file. Read
//! from the events the transitions recorded, from the plan's acceptance to the tip.

use gix::ObjectId;
use serde::Serialize;

use super::{EngineError, Session};
use crate::store::{HistoryEntry, Snapshot};
use crate::workflow::state::RedOutcome;
use crate::workflow::{Decision, Event, Expectation, StepId};

/// A task's RED test as its step pinned it: run at the end on the PR's base (it must fail)
/// and on the squashed commit (it must pass).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PinnedRed {
    pub step: StepId,
    pub command: String,
    /// The tree the RED run left; `None` for a RED accepted before tests were pinned.
    pub tree: Option<String>,
    /// The tree the task began at, before its RED step: the tree the passing test of the step
    /// before it looked at (not that step's checkpoint; a checkpoint the agent made on its
    /// own between steps does not move it either), else the tree its RED pin counted from
    /// (the first task's: the base); `None` in a chain whose pins, or whose run of the step
    /// before, did not record it (docs/integrity.md, "Adequacy by mutation").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The test's files, put back as the RED step left them wherever it runs again.
    pub paths: Vec<String>,
    /// Files that existed before the task and that its RED step changed (a Rust module's
    /// inline tests): as the RED step left them only on the PR's base, where the test must
    /// fail; the GREEN step goes on to change them.
    pub shared: Vec<String>,
    /// The runner's hook files on the test's way (pytest's `conftest.py` files): every
    /// pinned test runs with them as RED steps left them (src/engine/proof/red.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}

/// A GREEN step whose working tree had changed its task's pinned RED test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EditedRed {
    pub step: StepId,
    pub paths: Vec<String>,
}

/// What the PR's chain says about its tests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrRecord {
    pub reds: Vec<PinnedRed>,
    pub edited_red_tests: Vec<EditedRed>,
    /// RED steps whose step changed no file: the test they ran was there before the task,
    /// and nothing of it is pinned.
    pub reds_without_a_test: Vec<StepId>,
}

/// The PR's record, from `pr` (its transitions, newest first, back to the plan's acceptance,
/// as `Store::history_back_to` lists them).
pub fn pr_record(session: &Session, pr: &[HistoryEntry]) -> Result<PrRecord, EngineError> {
    let store = &session.store;
    let mut record = PrRecord::default();
    let mut failed_red: Option<PinnedRed> = None;
    // The last passing run of a step meant to pass: its step, and the tree its test looked
    // at (`None` in a run recorded before that was).
    let mut tested: Option<(StepId, Option<String>)> = None;
    // Where the last step ended, as its checkpoint closed it: the tree that step's test
    // looked at; `Some(None)` where the chain does not record it (an earlier release's run).
    let mut step_tree: Option<Option<String>> = None;
    for entry in pr.iter().rev() {
        let step_checkpoint = entry.event == "checkpoint" && entry.step.is_some();
        if !step_checkpoint
            && !matches!(
                entry.event.as_str(),
                "test" | "analysis" | "scope-reduction"
            )
        {
            continue;
        }
        let id = ObjectId::from_hex(entry.commit.as_bytes())
            .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
        let Some(Ok(event)) = store
            .commit_record(id)?
            .event
            .map(|json| serde_json::from_str::<Event>(&json))
        else {
            continue;
        };
        match event {
            Event::TestRan(run) => {
                let run = *run;
                if run.expectation == Expectation::Pass && run.exit.success() {
                    tested = Some((run.step, run.tested_tree.clone()));
                }
                if run.expectation == Expectation::Fail && !run.exit.success() {
                    failed_red = match run.red {
                        Some(RedOutcome::NotATest(_)) => None,
                        Some(RedOutcome::Pinned(pin)) => Some(PinnedRed {
                            step: run.step,
                            command: run.command.clone(),
                            tree: Some(pin.tree),
                            start: pin.start,
                            paths: pin.paths,
                            shared: pin.shared,
                            hooks: pin.hooks,
                        }),
                        // Recorded before RED tests were pinned.
                        None => Some(PinnedRed {
                            step: run.step,
                            command: run.command.clone(),
                            tree: None,
                            start: None,
                            paths: Vec::new(),
                            shared: Vec::new(),
                            hooks: Vec::new(),
                        }),
                    };
                }
                if let Some(rerun) = run.red_rerun.filter(|r| !r.restored.is_empty()) {
                    record.edited_red_tests.push(EditedRed {
                        step: run.step,
                        paths: rerun.restored,
                    });
                }
            }
            Event::CheckpointRecorded { .. } if step_checkpoint => {
                // The tree the step's passing test looked at, not the checkpoint's: code
                // written after the test ran and before the checkpoint is no code that test
                // saw, so it is the next task's, measured by the next task's test
                // (docs/integrity.md, "Adequacy by mutation").
                step_tree = Some(
                    tested
                        .take()
                        .filter(|(step, _)| entry.step == Some(step.to_string()))
                        .and_then(|(_, tree)| tree),
                );
            }
            Event::AnalysisDecided { decision, .. } => {
                if let (Decision::Success, Some(mut red)) = (decision, failed_red.take()) {
                    // Where the chain records where the step before ended (one whose pins
                    // record where their task began), it is where this task began; where it
                    // does not (an earlier release's run, or a tree this repository lacks),
                    // the task is bounded by nothing the chain vouches for: as a pin without
                    // `start` (src/engine/proof/adequacy.rs).
                    if red.start.is_some()
                        && let Some(ended) = &step_tree
                    {
                        red.start = match ended {
                            Some(tree) if store.has_object(tree)? => Some(tree.clone()),
                            _ => None,
                        };
                    }
                    if red.tree.is_some() && red.paths.is_empty() && red.shared.is_empty() {
                        record.reds_without_a_test.push(red.step);
                    }
                    record.reds.push(red);
                }
                failed_red = None;
            }
            // The task is replaced; its tests, and those of every later task, go with it.
            Event::ScopeReduced { step, .. } => {
                record.reds.retain(|r| r.step.task < step.task);
                record.edited_red_tests.retain(|r| r.step.task < step.task);
                record.reds_without_a_test.retain(|s| s.task < step.task);
                failed_red = None;
            }
            _ => {}
        }
    }
    Ok(record)
}

impl PrRecord {
    /// RED steps that pinned again a path an earlier task's RED step had pinned, with those
    /// paths: the later step rewrote the earlier test, and the end proves the earlier task
    /// with the rewritten one (docs/integrity.md).
    pub fn repinned(&self) -> Vec<(StepId, Vec<String>)> {
        let mut out = Vec::new();
        for (i, red) in self.reds.iter().enumerate() {
            let earlier = &self.reds[..i];
            let paths: Vec<String> = red
                .paths
                .iter()
                .filter(|p| {
                    earlier
                        .iter()
                        .any(|e| e.step.task != red.step.task && e.paths.contains(p))
                })
                .cloned()
                .collect();
            if !paths.is_empty() {
                out.push((red.step, paths));
            }
        }
        out
    }

    /// Pinned paths whose entry in `head` differs from their latest pin: a later step (a
    /// REFACTOR, a later task) changed a RED test after it was judged.
    pub fn changed_after_red(
        &self,
        session: &Session,
        head: &str,
    ) -> Result<Vec<String>, EngineError> {
        let store = &session.store;
        let head_tree = store.tree_of(head)?;
        let mut latest: std::collections::BTreeMap<&str, &str> = Default::default();
        for red in &self.reds {
            if let Some(tree) = &red.tree {
                for path in &red.paths {
                    latest.insert(path, tree);
                }
            }
        }
        let mut out = Vec::new();
        for (path, tree) in latest {
            let pinned = store.tree_entry(tree, path)?;
            let now = store.tree_entry(&head_tree, path)?;
            if pinned.map(|e| (e.id, e.kind)) != now.map(|e| (e.id, e.kind)) {
                out.push(path.to_string());
            }
        }
        Ok(out)
    }

    /// Tests (by `[gates] test_paths`) the PR adds between `base` and `head` that no RED step
    /// pinned: a test file a GREEN or REFACTOR step wrote, which a RED test may lean on while
    /// it was never judged failing (docs/integrity.md).
    pub fn unpinned_tests(
        &self,
        session: &Session,
        config: &crate::config::Config,
        base: &str,
        head: &str,
    ) -> Result<Vec<String>, EngineError> {
        let changes = super::proof::test_changes(session, config, base, head)?;
        let pinned = |path: &String| self.reds.iter().any(|r| r.paths.contains(path));
        Ok(changes
            .into_iter()
            .filter_map(|(how, path)| (how == "added" && !pinned(&path)).then_some(path))
            .collect())
    }
}

/// The names of the plan's tasks that have no RED step: nothing proves their tests failed
/// first.
pub fn tasks_without_red(plan: &crate::workflow::Plan) -> Vec<String> {
    plan.tasks
        .iter()
        .filter(|t| {
            !t.tdd_steps
                .iter()
                .any(|s| s.kind == crate::workflow::StepType::Red)
        })
        .map(|t| t.name.clone())
        .collect()
}

/// [`pr_record`] of the PR at `snap`'s tip.
pub fn of_snapshot(session: &Session, snap: &Snapshot) -> Result<PrRecord, EngineError> {
    let pr = session.store.history_back_to(snap.tip, "plan")?;
    pr_record(session, &pr)
}
