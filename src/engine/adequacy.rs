//! Adequacy by mutation at the final check (docs/integrity.md, "Adequacy by mutation"): each
//! task's pinned RED test run against mutants of the code the task wrote, in a scratch
//! worktree of the task's own, and what it killed.

use std::time::{Duration, Instant};

use crate::config::{Adequacy, Config};
use crate::engine::pr_record::PinnedRed;
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session, io_error};
use crate::exec;
use crate::workflow::mutate::{self, Mutant};
use crate::workflow::notes::TaskAdequacy;
use crate::workflow::state::ExitRecord;

/// Each pinned RED test against mutants of its task's code: the code files the task changed
/// after its RED step, up to the next RED step's tree (the last task's: the squashed tree),
/// mutated one line at a time in that tree, the test run on each. Nothing when adequacy is
/// off.
pub fn measure(
    session: &Session,
    config: &Config,
    reds: &[PinnedRed],
    base: &str,
    squashed: &str,
) -> Result<Vec<TaskAdequacy>, EngineError> {
    if config.verify.adequacy == Adequacy::Off {
        return Ok(Vec::new());
    }
    let pinned: Vec<(&PinnedRed, &str)> = reds
        .iter()
        .filter_map(|r| r.tree.as_deref().map(|t| (r, t)))
        .collect();
    let mut out = Vec::new();
    for (i, (red, red_tree)) in pinned.iter().enumerate() {
        let end = pinned.get(i + 1).map_or(squashed, |(_, t)| *t);
        out.push(measure_task(
            session, config, reds, red, red_tree, base, end,
        )?);
    }
    Ok(out)
}

/// The task's mutants, as the deterministic mutator orders them, at most `max_mutants`.
fn task_mutants(
    session: &Session,
    config: &Config,
    reds: &[PinnedRed],
    red_tree: &str,
    end: &str,
) -> Result<Vec<(Mutant, String)>, EngineError> {
    let mut out = Vec::new();
    // In-process: a `git diff` per task would cost the final check a process per task.
    for path in session.store.changed_paths(red_tree, end)? {
        let pinned = reds.iter().any(|r| r.paths.contains(&path));
        if pinned || config.is_test_path(&path) {
            continue;
        }
        let (Some(old), Some(Some(new))) = (
            text(session, red_tree, &path)?,
            session
                .store
                .tree_entry(end, &path)?
                .map(|_| text(session, end, &path))
                .transpose()?,
        ) else {
            // Removed by the task, or not text.
            continue;
        };
        let lines = mutate::changed_lines(&old, &new);
        for m in mutate::mutants(&path, &new, &lines) {
            out.push((m, new.clone()));
        }
    }
    Ok(out)
}

/// A text file of `tree` within the input cap; `None` when absent, binary or too large.
fn text(session: &Session, tree: &str, path: &str) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let Some(entry) = store.tree_entry(tree, path)? else {
        return Ok(Some(String::new()));
    };
    Ok(
        match store.blob_within(&entry.id.to_string(), crate::input::CAP)? {
            Ok(bytes) => String::from_utf8(bytes).ok(),
            Err(_) => None,
        },
    )
}

fn measure_task(
    session: &Session,
    config: &Config,
    reds: &[PinnedRed],
    red: &PinnedRed,
    red_tree: &str,
    base: &str,
    end: &str,
) -> Result<TaskAdequacy, EngineError> {
    let mut result = TaskAdequacy {
        task: red.step.task + 1,
        step: red.step.to_string(),
        mutants: 0,
        killed: 0,
        survived: Vec::new(),
        not_run: 0,
        unmeasured: None,
    };
    let mut mutants = task_mutants(session, config, reds, red_tree, end)?;
    if mutants.is_empty() {
        return Ok(result);
    }
    let budget = config.verify.max_mutants;
    if mutants.len() > budget {
        result.not_run = mutants.len() - budget;
        mutants.truncate(budget);
    }
    let env = session.command_env()?;
    // A worktree of the task's own: nothing an earlier task's runs left is in it.
    let scratch = Scratch::new(session, base, end)?;
    scratch.put(red_tree, &red.paths)?;
    let deadline = Instant::now() + config.verify.mutation_timeout;
    let run = |limit: Duration| {
        exec::run_shell(&red.command, scratch.path(), limit, env)
            .map_err(io_error(format!("run the RED test `{}`", red.command)))
    };
    // The test must pass on the task's own code, else a failing mutant proves nothing.
    let own = run(config.test.timeout.min(config.verify.mutation_timeout))?;
    if !own.exit.success() {
        result.unmeasured = Some(format!(
            "the test fails on the task's own code ({})",
            own.exit
        ));
        result.not_run += mutants.len();
        return Ok(result);
    }
    let total = mutants.len();
    for (done, (mutant, original)) in mutants.into_iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            result.not_run += total - done;
            break;
        }
        let file = scratch.path().join(&mutant.path);
        std::fs::write(&file, mutant.apply(&original))
            .map_err(io_error(format!("write a mutant of {}", mutant.path)))?;
        let limit = config.test.timeout.min(left);
        let ran = run(limit);
        std::fs::write(&file, &original).map_err(io_error(format!("restore {}", mutant.path)))?;
        let exit = ran?.exit;
        // Cut short by the task's budget, not by the test's own timeout: not a verdict.
        if matches!(exit, ExitRecord::TimedOut { .. }) && limit < config.test.timeout {
            result.not_run += total - done;
            break;
        }
        result.mutants += 1;
        if exit.success() {
            result.survived.push(mutant.name());
        } else {
            result.killed += 1;
        }
    }
    Ok(result)
}
