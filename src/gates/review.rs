//! The automated code review (docs/config.md, "[review]"): the review command once per dimension, in parallel,
//! the review context on its stdin as JSON, its findings read from stdout and merged. A crash,
//! a timeout or unreadable output is an error, never an approval.

use std::path::Path;
use std::thread;

use serde_json::json;

use crate::config::ReviewPolicy;
use crate::exec::{self, CommandEnv, ShellOptions};
use crate::workflow::Plan;
use crate::workflow::review::{ReviewRecord, aggregate, parse_findings};

/// What the reviewers are told, besides their dimension.
pub struct ReviewContext<'a> {
    pub plan: &'a Plan,
    pub branch: &'a str,
    pub main_branch: &'a str,
    pub base: &'a str,
    pub head: &'a str,
    pub diff: &'a str,
    pub round: u32,
    /// The PR changes `.orchestrate.toml`: the reviewer should look hard at that.
    pub config_changed: bool,
    /// Tasks whose checkpoints changed nothing (docs/integrity.md): look hard at those too.
    pub empty_tasks: &'a [String],
    /// GREEN steps that had changed their task's pinned RED test, with the paths.
    pub edited_red_tests: &'a [(String, Vec<String>)],
    /// Pinned RED test files the PR's head holds otherwise than their latest pin.
    pub changed_after_red: &'a [String],
    /// RED steps that pinned again an earlier task's pinned test, with the paths.
    pub repinned_red_tests: &'a [(String, Vec<String>)],
    /// RED steps that changed no file: the test they ran was there before the task.
    pub reds_without_a_test: &'a [String],
    /// Tests present when the PR began that it changes or removes.
    pub changed_tests: &'a [String],
    /// Tests the PR adds that no RED step pinned.
    pub unpinned_tests: &'a [String],
    /// Tasks without a RED step.
    pub tasks_without_red: &'a [String],
    /// main moved outside the workflow: what every briefing says about it.
    pub main_moved_outside: Option<&'a str>,
}

/// Runs the review of `context.round`. With no review command configured, nothing runs and
/// the record says so (`ran: false`).
pub fn run_review(
    policy: &ReviewPolicy,
    context: &ReviewContext,
    dir: &Path,
    env: &CommandEnv,
) -> Result<ReviewRecord, String> {
    let record = |findings| ReviewRecord {
        round: context.round,
        ran: policy.command.is_some(),
        dimensions: policy.dimensions.clone(),
        block_on: policy.block_on.clone(),
        findings,
    };
    let Some(command) = &policy.command else {
        return Ok(record(Vec::new()));
    };
    let dimensions: Vec<Option<&str>> = if policy.dimensions.is_empty() {
        vec![None]
    } else {
        policy.dimensions.iter().map(|d| Some(d.as_str())).collect()
    };
    let results: Vec<Result<Vec<_>, String>> = thread::scope(|scope| {
        let runs: Vec<_> = dimensions
            .iter()
            .map(|dimension| {
                scope.spawn(move || review_one(command, policy, context, *dimension, dir, env))
            })
            .collect();
        runs.into_iter()
            .map(|run| {
                run.join()
                    .unwrap_or_else(|_| Err("a reviewer thread panicked".to_string()))
            })
            .collect()
    });
    let mut findings = Vec::new();
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(found) => findings.extend(found),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(record(aggregate(findings)))
    } else {
        Err(errors.join("\n"))
    }
}

fn review_one(
    command: &str,
    policy: &ReviewPolicy,
    context: &ReviewContext,
    dimension: Option<&str>,
    dir: &Path,
    env: &CommandEnv,
) -> Result<Vec<crate::workflow::review::Finding>, String> {
    let input = json!({
        "pr": context.plan,
        "branch": context.branch,
        "main_branch": context.main_branch,
        "base": context.base,
        "head": context.head,
        "diff": context.diff,
        "dimension": dimension,
        "round": context.round,
        "config_changed": context.config_changed,
        "empty_tasks": context.empty_tasks,
        "edited_red_tests": context
            .edited_red_tests
            .iter()
            .map(|(step, paths)| json!({"step": step, "paths": paths}))
            .collect::<Vec<_>>(),
        "changed_after_red": context.changed_after_red,
        "repinned_red_tests": context
            .repinned_red_tests
            .iter()
            .map(|(step, paths)| json!({"step": step, "paths": paths}))
            .collect::<Vec<_>>(),
        "reds_without_a_test": context.reds_without_a_test,
        "changed_tests": context.changed_tests,
        "unpinned_tests": context.unpinned_tests,
        "tasks_without_red": context.tasks_without_red,
        "main_moved_outside": context.main_moved_outside,
    })
    .to_string();
    let which = dimension.map_or_else(
        || "the review command".to_string(),
        |d| format!("the {d} review"),
    );
    let run = exec::run_shell_with(
        command,
        dir,
        policy.timeout,
        env,
        ShellOptions {
            stdin: Some(input.as_bytes()),
            split_stderr: true,
            ..ShellOptions::default()
        },
    )
    .map_err(|e| format!("{which} could not start `{command}`: {e}"))?;
    let said = |bytes: &[u8]| {
        let tail = exec::tail_lines(bytes, 20);
        if tail.trim().is_empty() {
            String::new()
        } else {
            format!("; it said:\n{}", tail.trim_end())
        }
    };
    if !run.exit.success() {
        return Err(format!(
            "{which} failed: `{command}` ended with {}{}",
            run.exit,
            said(if run.stderr.is_empty() {
                &run.output
            } else {
                &run.stderr
            })
        ));
    }
    parse_findings(&run.output, dimension).map_err(|why| {
        format!(
            "{which} printed something that is not a review: {why}{}",
            said(&run.output)
        )
    })
}
