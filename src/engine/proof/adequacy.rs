//! The executor's adequacy obligation (docs/integrity.md, "Adequacy by mutation";
//! src/workflow/proof/adequacy.rs): each task's pinned RED test run against mutants of the code
//! the task wrote (made as src/engine/adequacy.rs makes them), in a worktree of the task's
//! own, with the command runner every pinned test's run goes through, and what it killed.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::adequacy::{
    Task, TaskWorktree, Tool, builtin_mutants, cargo_mutants_mutants, choose_tool,
    cosmic_ray_mutants, mutmut_mutants, stryker_mutants, task_files,
};
use crate::engine::{EngineError, Session};
use crate::exec::orphans::Reaper;
use crate::workflow::notes::TaskAdequacy;
use crate::workflow::proof::PinnedTest;
use crate::workflow::proof::adequacy::Policy;
use crate::workflow::state::ExitRecord;

/// Each pinned RED test (`reds`, in task order) against mutants of its task's code: the code
/// files the task changed from the tree it began at (before its RED step, which may write code
/// too) to the tree the next task began at (the last task's: `squashed`, the squash's tree),
/// mutated in that tree, the test run on each, within `policy`'s budgets. `reaper`, when
/// verification is unconfined, ends what each run left running (src/exec/orphans.rs).
pub fn measure(
    session: &Session,
    config: &Config,
    reds: &[PinnedTest],
    (base, squashed): (&str, &str),
    policy: &Policy,
    reaper: Option<&Reaper>,
) -> Result<Vec<TaskAdequacy>, EngineError> {
    let mut out = Vec::new();
    // The first task's code is counted from the base's tree.
    let base_tree = session.store.tree_of(base)?.to_string();
    for (i, red) in reds.iter().enumerate() {
        // Under `enforce`, a range the chain does not bound (an earlier release's, or one
        // stripped of `start` to bring back the RED-tree ranges, where a later RED step's
        // code is charged to the task before it) measures nothing: no pass.
        let unbounded = |r: &PinnedTest| r.start.is_none();
        if policy.enforce && ((i > 0 && unbounded(red)) || reds.get(i + 1).is_some_and(unbounded)) {
            out.push(TaskAdequacy {
                unmeasured: Some(
                    "the chain does not record where the task began or where the next began (a \
                     RED step recorded by an earlier release): under enforce each task is \
                     measured on the code it wrote, from there; do the RED step again"
                        .into(),
                ),
                ..unmeasured_task(red)
            });
            continue;
        }
        let (start, end, next) = range(reds, i, &base_tree, squashed);
        let task = Task {
            reds,
            red,
            red_tree: &red.tree,
            base,
            start,
            end,
            next,
        };
        out.push(measure_task(session, config, &task, policy, reaper)?);
    }
    Ok(out)
}

/// The trees task `i`'s code is counted between, and the next task's test when the later
/// tree holds it. Where the chain records where each task began (the RED pin's `start`):
/// from there to where the next task began (the last task's: `squashed`), so that code a
/// RED step writes beside its test is its own task's, measured by its own test, and the
/// later tree holds no later test. In a chain that does not, from the task's RED tree (the
/// first task's: the base's) to the next task's RED tree, whose test, failing, is put back
/// as it was for the run (docs/integrity.md, "Adequacy by mutation").
fn range<'a>(
    reds: &'a [PinnedTest],
    i: usize,
    base_tree: &'a str,
    squashed: &'a str,
) -> (&'a str, &'a str, Option<&'a PinnedTest>) {
    let red = &reds[i];
    let next = reds.get(i + 1);
    let start = match (i, red.start.as_deref()) {
        (0, _) => base_tree,
        (_, Some(start)) => start,
        (_, None) => red.tree.as_str(),
    };
    match next {
        None => (start, squashed, None),
        Some(next) => match next.start.as_deref() {
            Some(began) => (start, began, None),
            None => (start, next.tree.as_str(), Some(next)),
        },
    }
}

/// The first task whose test killed a smaller share of its mutants than `policy`'s
/// `min_killed`, or whose test could not be measured at all though its task wrote code to
/// mutate (it failed on the task's own code, or no mutant ran within the budget), when the
/// policy enforces it: a measure that did not happen is no pass (docs/integrity.md).
pub fn inadequate<'a>(policy: &Policy, tasks: &'a [TaskAdequacy]) -> Option<&'a TaskAdequacy> {
    if !policy.enforce {
        return None;
    }
    tasks.iter().find(|a| {
        a.unmeasured.is_some()
            || (a.mutants == 0 && a.not_run > 0)
            || (a.mutants > 0 && a.killed_share() < policy.min_killed)
    })
}

/// The measure of `red`'s task before anything ran: no mutant, the built-in tool.
fn unmeasured_task(red: &PinnedTest) -> TaskAdequacy {
    TaskAdequacy {
        task: red.step.task + 1,
        step: red.step.to_string(),
        tool: "builtin".into(),
        tool_error: None,
        mutants: 0,
        killed: 0,
        survived: Vec::new(),
        not_run: 0,
        unmeasured: None,
    }
}

/// One task's test against the mutants of its code, within `policy`'s budgets.
fn measure_task(
    session: &Session,
    config: &Config,
    task: &Task,
    policy: &Policy,
    reaper: Option<&Reaper>,
) -> Result<TaskAdequacy, EngineError> {
    let mut result = unmeasured_task(task.red);
    let red = task.red;
    let (files, unreadable) = task_files(session, config, task)?;
    if let Some(path) = unreadable.first() {
        result.unmeasured = Some(format!(
            "{path}, code the task wrote, is not text where the task ends (a byte that is no \
             UTF-8, or over the size cap): no mutant of it can be made; keep code in UTF-8 \
             text"
        ));
        return Ok(result);
    }
    if files.is_empty() {
        return Ok(result);
    }
    let env = session.command_env()?;
    let limit = Duration::from_millis(policy.timeout_ms);
    let deadline = Instant::now() + limit;
    let mut worktree = TaskWorktree::new(session, task, reaper)?;
    let budget = policy.max_mutants;
    let made = match choose_tool(config, env, &files) {
        Ok(None) => Ok(None),
        Ok(Some(Tool::Mutmut)) => {
            mutmut_mutants(&mut worktree, &files, limit)?.map(|made| Some((Tool::Mutmut, made, 0)))
        }
        Ok(Some(Tool::Stryker)) => stryker_mutants(&mut worktree, &files, limit)?
            .map(|made| Some((Tool::Stryker, made, 0))),
        Ok(Some(Tool::CargoMutants)) => cargo_mutants_mutants(&mut worktree, &files, limit)?
            .map(|made| Some((Tool::CargoMutants, made, 0))),
        Ok(Some(Tool::CosmicRay)) => cosmic_ray_mutants(&mut worktree, &files, limit, budget)?
            .map(|(made, unmade)| Some((Tool::CosmicRay, made, unmade))),
        Err(why) => Err(why),
    };
    let mut mutants = match made {
        Ok(Some((tool, made, unmade))) => {
            result.tool = tool.name().into();
            result.not_run += unmade;
            made
        }
        Ok(None) => builtin_mutants(&files),
        Err(why) => {
            result.tool_error = Some(why);
            builtin_mutants(&files)
        }
    };
    if mutants.is_empty() {
        return Ok(result);
    }
    if mutants.len() > budget {
        result.not_run += mutants.len() - budget;
        mutants.truncate(budget);
    }
    // The test must pass on the task's own code, else a failing mutant proves nothing.
    let left = deadline.saturating_duration_since(Instant::now());
    let own = worktree.run(None, &red.command, config.test.timeout.min(left))?;
    if !own.success() {
        result.unmeasured = Some(format!(
            "the test fails on the task's own code ({own}); make it pass there within [verify] \
             mutation_timeout"
        ));
        result.not_run += mutants.len();
        return Ok(result);
    }
    let total = mutants.len();
    for (done, mutant) in mutants.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            result.not_run += total - done;
            break;
        }
        let limit = config.test.timeout.min(left);
        let exit = worktree.run(Some(mutant), &red.command, limit)?;
        // Cut short by the task's budget, not by the test's own timeout: not a verdict.
        if matches!(exit, ExitRecord::TimedOut { .. }) && limit < config.test.timeout {
            result.not_run += total - done;
            break;
        }
        result.mutants += 1;
        if exit.success() {
            result.survived.push(mutant.name.clone());
        } else {
            result.killed += 1;
        }
    }
    Ok(result)
}
