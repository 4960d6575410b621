//! The events of the TDD loop: a test ran, an analysis was decided, a checkpoint recorded,
//! a preflight passed; failures counted as debugging attempts.

use crate::workflow::debugging::same_failure;
use crate::workflow::plan::Plan;
use crate::workflow::state::{Attempts, LastRun, State};
use crate::workflow::state::{Phase, Pr, PrStage, PreflightCache};
use crate::workflow::state::{RedAnalysis, RedOutcome, RedTest};
use crate::workflow::state::{TddPending, Verdict};
use crate::workflow::{Decision, Expectation};

use super::decide::*;
use super::event::*;
use super::next::{Next, Refusal, object_id, with_phase};

/// The TDD loop's data, whichever of its two phases the workflow is in.
pub(super) struct Tdd {
    pr: Pr,
    attempts: Option<Attempts>,
    pending: Option<TddPending>,
}

impl Tdd {
    pub(super) fn of(state: &State) -> Option<Tdd> {
        let Phase::Pr { pr, stage } = &state.phase else {
            return None;
        };
        let (attempts, pending) = stage.tdd()?;
        Some(Tdd {
            pr: pr.clone(),
            attempts: attempts.cloned(),
            pending: pending.clone(),
        })
    }

    /// The attempt failed: DEBUGGING starts, or counts one more attempt (docs/states.md).
    pub(super) fn failed(self, error: String) -> Phase {
        let attempts = match self.attempts {
            // Agents loop on identical errors; the briefing says so when it happens.
            Some(old) => Attempts {
                count: old.count.saturating_add(1),
                identical_failures: if same_failure(&old.error, &error) {
                    old.identical_failures.saturating_add(1)
                } else {
                    0
                },
                error,
            },
            None => Attempts {
                count: 1,
                identical_failures: 0,
                error,
            },
        };
        Phase::Pr {
            pr: self.pr,
            stage: PrStage::Debugging {
                attempts,
                pending: self.pending,
            },
        }
    }

    /// The outcome matched the expectation: debugging is over.
    fn succeeded(self) -> Phase {
        Phase::Pr {
            pr: self.pr,
            stage: PrStage::ExecutingTdd {
                pending: self.pending,
            },
        }
    }

    /// The phase as it was, with the changes made to its data.
    fn unchanged(self) -> Phase {
        match self.attempts {
            Some(attempts) => Phase::Pr {
                pr: self.pr,
                stage: PrStage::Debugging {
                    attempts,
                    pending: self.pending,
                },
            },
            None => self.succeeded(),
        }
    }
}

/// A passing run whose tree does not count (docs/integrity.md): `what` happened to `files`,
/// and `why` that undoes the pass. The attempt fails like any other.
/// What a test run comes to: the phase, the plan's change, the commit body, the output to
/// keep and the verdict.
type Outcome = (Phase, PlanChange, String, OutputSource, Verdict);

/// A failed attempt: the workflow debugs it; `body` gets the attempt's number.
fn failure(
    tdd: Tdd,
    error: String,
    output: OutputSource,
    body: impl FnOnce(u32) -> String,
) -> Outcome {
    let phase = tdd.failed(error);
    let body = body(phase.attempts());
    (phase, PlanChange::Keep, body, output, Verdict::Failure)
}

fn pass_not_counted(tdd: Tdd, run: &TestRun, files: &[String], what: &str, why: &str) -> Outcome {
    let files = files.join(", ");
    let error = format!("{what}: {files}\n");
    failure(tdd, error, OutputSource::Test, |attempt| {
        format!(
            "FAILURE: `{}` passed ({}), but {what} ({files}): {why}; debugging attempt {attempt}",
            run.command, run.exit
        )
    })
}

/// A GREEN run passed, and the task's RED test, run again, still fails (or runs nothing).
/// A `conftest.py` the run had otherwise than the working tree is named apart, taken out
/// (the RED tree has none) or put back, with what to do: the agent who wrote a fixture
/// there at GREEN sees why the run lacks it, and that its place is the RED step.
fn red_still_fails(tdd: Tdd, run: &TestRun, red: &RedRerun) -> Outcome {
    let them = |paths: &[&String]| if paths.len() == 1 { "it" } else { "them" };
    let join = |paths: &[&String]| {
        paths
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A chain recorded before `hooks` was names its `conftest.py` files by name only.
    let (conftests, others): (Vec<&String>, Vec<&String>) = red
        .restored
        .iter()
        .partition(|p| red.hooks.contains(p) || crate::workflow::red::is_conftest(p));
    let what = runner_files_named(&conftests, &red.command);
    let (taken_out, put_back_hooks): (Vec<&String>, Vec<&String>) = conftests
        .into_iter()
        .partition(|p| red.taken_out.contains(p));
    let mut with = Vec::new();
    if !others.is_empty() {
        with.push(format!(
            "{} as the RED step left {}",
            join(&others),
            them(&others)
        ));
    }
    if !put_back_hooks.is_empty() {
        with.push(format!(
            "{} as the RED step left {}",
            join(&put_back_hooks),
            them(&put_back_hooks)
        ));
    }
    if !taken_out.is_empty() {
        with.push(format!(
            "{} taken out, as the RED step's tree has none",
            join(&taken_out)
        ));
    }
    let put_back = if with.is_empty() {
        String::new()
    } else {
        format!(" (run with {})", with.join("; "))
    };
    let how = match &red.not_run {
        Some(why) => format!("passes without running a test ({why})"),
        None => format!("still fails ({})", red.exit),
    };
    let conftest = if taken_out.is_empty() && put_back_hooks.is_empty() {
        String::new()
    } else {
        format!(
            ". {what} test code, which only a RED step may write: what the GREEN step \
             changed there is not in the RED test's run. What the test needs from it (a \
             fixture, say) belongs in the task's RED test file, written by its RED step; \
             submit-work cannot undo the GREEN step, so a RED step that lacks it needs a new \
             plan (`request-scope-reduction` once unlocked, or `submit-work --contradiction`)"
        )
    };
    failure(
        tdd,
        red.output_tail.clone(),
        OutputSource::RedTest,
        |attempt| {
            format!(
                "FAILURE: `{}` passed ({}), but the task's RED test `{}`{put_back} {how}: \
             the GREEN step must make it pass{conftest}; debugging attempt {attempt}",
                run.command, run.exit, red.command
            )
        },
    )
}

/// What the runner's files `hooks` of the RED test `command` are, with their verb:
/// `conftest.py is`, `pytest's configuration is`, `conftest.py and pytest's configuration
/// are`, `cargo's configuration is`, `the script the RED command runs is`, …
fn runner_files_named(hooks: &[&String], command: &str) -> String {
    use crate::workflow::cargo_files::is_cargo_file;
    use crate::workflow::pytest_files::{is_config, is_jest_config};
    use crate::workflow::red::is_conftest;
    let scripts = crate::workflow::command_files::repository_files(command);
    let script = |p: &&String| scripts.contains(p);
    let mocha = crate::workflow::evidence::request(command).report
        == Some(crate::workflow::evidence::ReportAsk::Mocha);
    let mocha_configs = crate::workflow::mocha_files::configs_named_by_command(command);
    let mocha_config = |p: &&String| {
        mocha
            && (crate::workflow::mocha_files::is_config(p)
                || mocha_configs.contains(p)
                || p.as_str() == crate::workflow::red::PACKAGE_JSON)
    };
    let vitest = crate::workflow::vitest_files::runs_vitest(command);
    let vitest_configs = crate::workflow::vitest_files::configs_named_by_command(command);
    let vitest_config = |p: &&String| {
        vitest && (crate::workflow::vitest_files::is_config(p) || vitest_configs.contains(p))
    };
    let mut kinds = Vec::new();
    if hooks.iter().any(|p| is_conftest(p)) {
        kinds.push("conftest.py");
    }
    // A configuration file a `-c` names has any name: read by its kind.
    let config = |p: &&String| {
        !is_cargo_file(p)
            && !script(p)
            && !mocha_config(p)
            && !vitest_config(p)
            && (is_config(p) || [".ini", ".cfg", ".toml"].iter().any(|e| p.ends_with(e)))
    };
    if hooks.iter().any(config) {
        kinds.push("pytest's configuration");
    }
    if hooks.iter().any(|p| is_cargo_file(p)) {
        kinds.push("cargo's configuration");
    }
    if hooks.iter().any(script) {
        kinds.push("the script the RED command runs");
    }
    if hooks.iter().any(mocha_config) {
        kinds.push("mocha's configuration");
    }
    if hooks.iter().any(vitest_config) {
        kinds.push("vitest's configuration");
    }
    let other = |p: &&&String| {
        !is_conftest(p)
            && !config(p)
            && !is_jest_config(p)
            && !is_cargo_file(p)
            && !script(p)
            && !mocha_config(p)
            && !vitest_config(p)
    };
    if hooks.iter().filter(other).any(|p| p.ends_with(".py")) {
        kinds.push("a plugin module pytest loads");
    }
    if hooks.iter().any(|p| is_jest_config(p) && !mocha_config(p)) {
        kinds.push("jest's configuration");
    }
    if hooks.iter().filter(other).any(|p| !p.ends_with(".py")) {
        kinds.push(if mocha {
            "a module mocha loads"
        } else if vitest {
            "a module vitest loads"
        } else {
            "a module jest loads"
        });
    }
    let named = match kinds.as_slice() {
        [one] => format!("{one} is"),
        [init @ .., last] => format!("{} and {last} are", init.join(", ")),
        [] => "conftest.py is".to_string(),
    };
    // A sentence begins with a capital, a file's or pytest's name aside.
    match (named.strip_prefix("a "), named.strip_prefix("the ")) {
        (Some(rest), _) => format!("A {rest}"),
        (_, Some(rest)) => format!("The {rest}"),
        _ => named,
    }
}

/// A passing run that was meant to pass, with passing gates: the step is DONE.
fn step_done(mut tdd: Tdd, run: &TestRun, pre: &PreflightOutcome, red_due: bool) -> Outcome {
    if red_due {
        tdd.pr.red_test = None;
    }
    if let (Some(tree), Some(key)) = (&pre.verified_tree, &pre.key) {
        tdd.pr.verified_tree = Some(tree.clone());
        tdd.pr.preflight_cache = Some(PreflightCache {
            tree: tree.clone(),
            key: key.clone(),
            gates: pre.record.gates.clone(),
        });
    }
    tdd.pending = run.kind.needs_checkpoint().then(|| TddPending::Checkpoint {
        step: run.step,
        step_type: run.kind,
        description: run.description.clone(),
    });
    let gates = match pre.record.gates.len() {
        0 => "preflight: none configured".to_string(),
        1 => "preflight passed (1 gate)".to_string(),
        n => format!("preflight passed ({n} gates)"),
    };
    (
        tdd.succeeded(),
        PlanChange::CompleteStep(run.step),
        format!(
            "SUCCESS: step {} DONE: `{}` passed ({}); {gates}",
            run.step, run.command, run.exit
        ),
        OutputSource::Test,
        Verdict::Success,
    )
}

/// A RED run failed as it should: the agent judges why, pinned to the test it left.
fn red_needs_analysis(mut tdd: Tdd, run: &TestRun) -> Outcome {
    let pin = match &run.red {
        Some(RedOutcome::Pinned(pin)) => Some(pin.clone()),
        Some(RedOutcome::NotATest(_)) | None => None,
    };
    tdd.pending = Some(TddPending::Analysis(RedAnalysis {
        step: run.step,
        command: run.command.clone(),
        exit: run.exit,
        output_tail: run.output_tail.clone(),
        red_tree: pin.as_ref().map(|p| p.tree.clone()),
        red_shared: pin.as_ref().map(|p| p.shared.clone()).unwrap_or_default(),
        red_tests: pin.as_ref().map(|p| p.tests.clone()).unwrap_or_default(),
        red_test_files: pin
            .as_ref()
            .map(|p| p.test_files.clone())
            .unwrap_or_default(),
        red_hooks: pin.as_ref().map(|p| p.hooks.clone()).unwrap_or_default(),
        red_paths: pin.map(|p| p.paths).unwrap_or_default(),
        syntax_error: run.syntax_error.clone(),
    }));
    (
        tdd.unchanged(),
        PlanChange::Keep,
        format!(
            "NEEDS_ANALYSIS: the RED test `{}` failed ({}), as it should; awaiting the analysis",
            run.command, run.exit
        ),
        OutputSource::Test,
        Verdict::NeedsAnalysis,
    )
}

pub(super) fn test_ran(state: &State, plan: Option<&Plan>, run: TestRun) -> Result<Next, Refusal> {
    let tdd = Tdd::of(state).ok_or(Refusal::WrongState)?;
    run_fits(&tdd, plan, &run)?;
    if let Some(tree) = run
        .preflight
        .as_ref()
        .and_then(|p| p.verified_tree.as_ref())
    {
        object_id("verified tree", tree)?;
    }
    let step = run.step;
    let mut last_run = LastRun {
        step,
        command: run.command.clone(),
        expectation: run.expectation,
        exit: run.exit,
        verdict: Verdict::Failure,
        preflight: run.preflight.as_ref().map(|p| p.record.clone()),
    };
    let (phase, plan, body, output, verdict) = judge_run(state, tdd, &run)?;
    last_run.verdict = verdict;
    let mut next = with_phase(state, phase);
    if let Some(pr) = next.pr_mut() {
        pr.last_run = Some(last_run);
    }
    Ok(Next::new(next, format!("{body}\n\n{}", run.summary))
        .plan(plan)
        .step(step)
        .effects(vec![Effect::SaveOutput(output), Effect::Reply(verdict)]))
}

/// Why `run` is no run `submit-work` records in this state: what `check_test` (decide.rs)
/// holds a submit to before it runs anything. The transition holds a recorded run to it
/// again because `audit`, `sync` and the server hook replay the transition, not the command:
/// a chain written by hand could otherwise record a passing run of a RED step (its kind said
/// GREEN, or its expectation PASS), and so mark the step DONE with no failing test pinned for
/// `attest` to run again; or a run of a step that is not the current one. The step and its
/// kind are held to `plan`, when given: the replay always gives it ([`held_to_plan`]); the
/// command, which took them from the plan itself, does not parse it again on the hot path.
/// Every run a release recorded meets it: the command always took the step, its kind and the
/// expectation from the plan's current step, and refused while an analysis or a checkpoint
/// was owed.
fn run_fits(tdd: &Tdd, plan: Option<&Plan>, run: &TestRun) -> Result<(), Refusal> {
    let owed = match &tdd.pending {
        Some(TddPending::Analysis(analysis)) => {
            Some(format!("step {} waits for its analysis", analysis.step))
        }
        Some(TddPending::Checkpoint { step, .. }) => {
            Some(format!("step {step} waits for its checkpoint"))
        }
        None => None,
    };
    if let Some(owed) = owed {
        return Err(Refusal::Said(format!(
            "a test run of step {} is no run to record now: {owed}",
            run.step
        )));
    }
    if let Some(plan) = plan {
        let Some((current, kind)) = plan
            .current_step()
            .and_then(|id| plan.step(id).map(|s| (id, s.kind)))
        else {
            return Err(Refusal::Said(format!(
                "a test run of step {} is no run to record: every step of the plan is DONE",
                run.step
            )));
        };
        if run.step != current {
            return Err(Refusal::Said(format!(
                "a test run of step {} is no run to record: the current step is {current}",
                run.step
            )));
        }
        if run.kind != kind {
            return Err(Refusal::Said(format!(
                "the run records step {current} as a {} step; the plan's step {current} is a \
                 {kind} step",
                run.kind
            )));
        }
    }
    let wanted = Expectation::for_step(run.kind);
    if run.expectation != wanted {
        return Err(Refusal::Said(format!(
            "step {} is a {} step, so its test is expected to {}; the run expected {}",
            run.step,
            run.kind,
            wanted.as_str(),
            run.expectation.as_str()
        )));
    }
    Ok(())
}

/// A RED run that failed, but as no test fails: a debugging attempt, saying why.
fn not_a_test(tdd: Tdd, run: &TestRun) -> Outcome {
    let (command, exit) = (&run.command, run.exit);
    let why = match &run.red {
        Some(RedOutcome::NotATest(why)) => why.clone(),
        _ => String::new(),
    };
    let error = format!("{why}\n{}", run.output_tail);
    failure(tdd, error, OutputSource::Test, |attempt| {
        format!(
            "FAILURE: the RED test `{command}` failed ({exit}), but it is no test that failed: {why}; \
         debugging attempt {attempt}"
        )
    })
}

/// What `run` comes to in a TDD step: the phase, plan change, text, output and verdict, or
/// why it cannot be recorded yet.
fn judge_run(state: &State, tdd: Tdd, run: &TestRun) -> Result<Outcome, Refusal> {
    let (command, exit) = (&run.command, run.exit);
    let red_due = state.red_test_due(run.step, run.kind);
    let red_failed = run
        .red_rerun
        .as_ref()
        .filter(|red| !red.exit.success() || red.not_run.is_some());
    Ok(
        match (run.expectation, exit.success(), &run.preflight, red_failed) {
            (Expectation::Pass, true, _, None)
                if red_due.is_some_and(|red| red.command != run.command)
                    && run.red_rerun.is_none() =>
            {
                return Err(Refusal::Said(
                "a passing GREEN run needs its task's RED test run again before it can be recorded"
                    .into(),
            ));
            }
            (Expectation::Pass, true, _, Some(red)) => red_still_fails(tdd, run, red),
            (Expectation::Pass, true, Some(pre), None) if !pre.changed.is_empty() => {
                pass_not_counted(
                    tdd,
                    run,
                    &pre.changed,
                    "files changed while the test and preflight ran",
                    "a pass counts only for the tree it ran on",
                )
            }
            (Expectation::Pass, true, Some(pre), None) if !pre.protected.is_empty() => {
                pass_not_counted(
                    tdd,
                    run,
                    &pre.protected,
                    "the working tree changes protected paths",
                    "a human changes these on main",
                )
            }
            (Expectation::Pass, true, Some(pre), None) if pre.record.passed() => {
                step_done(tdd, run, pre, red_due.is_some())
            }
            (
                Expectation::Pass,
                true,
                Some(PreflightOutcome {
                    failure: Some((gate, tail)),
                    ..
                }),
                None,
            ) => failure(
                tdd,
                tail.clone(),
                OutputSource::Gate(gate.clone()),
                |attempt| {
                    format!(
                        "FAILURE: `{command}` passed ({exit}), but preflight gate `{gate}` failed; debugging attempt {attempt}"
                    )
                },
            ),
            (Expectation::Pass, true, _, None) => {
                return Err(Refusal::Said(
                    "a passing PASS run needs its preflight result before it can be recorded"
                        .into(),
                ));
            }
            (Expectation::Pass, false, _, _) => failure(
                tdd,
                run.output_tail.clone(),
                OutputSource::Test,
                |attempt| {
                    format!("FAILURE: `{command}` failed ({exit}); debugging attempt {attempt}")
                },
            ),
            (Expectation::Fail, false, _, _)
                if matches!(run.red, Some(RedOutcome::NotATest(_))) =>
            {
                not_a_test(tdd, run)
            }
            (Expectation::Fail, false, _, _) => red_needs_analysis(tdd, run),
            (Expectation::Fail, true, _, _) => failure(
                tdd,
                run.output_tail.clone(),
                OutputSource::Test,
                |attempt| {
                    format!(
                        "FAILURE: the RED test `{command}` passed ({exit}), but a RED test must fail; debugging attempt {attempt}"
                    )
                },
            ),
        },
    )
}

pub(super) fn analysis_decided(
    state: &State,
    decision: Decision,
    summary: &str,
) -> Result<Next, Refusal> {
    let no_analysis = || {
        Refusal::Said(format!(
            "no analysis is pending in state {}",
            state.status()
        ))
    };
    let mut tdd = Tdd::of(state).ok_or_else(no_analysis)?;
    let Some(TddPending::Analysis(RedAnalysis {
        step,
        output_tail,
        command,
        red_tree,
        red_paths,
        red_shared,
        red_tests,
        red_test_files,
        red_hooks,
        ..
    })) = tdd.pending.take()
    else {
        return Err(no_analysis());
    };
    let (phase, plan, body, verdict) = match decision {
        Decision::Success => (
            {
                // The GREEN step must make exactly this test pass (docs/integrity.md).
                tdd.pr.red_test = Some(RedTest {
                    task: step.task,
                    command,
                    tree: red_tree,
                    paths: red_paths,
                    shared: red_shared,
                    tests: red_tests,
                    test_files: red_test_files,
                    hooks: red_hooks,
                });
                tdd.succeeded()
            },
            PlanChange::CompleteStep(step),
            format!("step {step} DONE: the RED test failed for the intended reason\n\n{summary}"),
            Verdict::Success,
        ),
        Decision::Failure => {
            let phase = tdd.failed(output_tail);
            let body = format!(
                "step {step}: the RED test failed for the wrong reason; debugging attempt {}\n\n{summary}",
                phase.attempts()
            );
            (phase, PlanChange::Keep, body, Verdict::Failure)
        }
    };
    let mut next = with_phase(state, phase);
    if let Some(run) = next.pr_mut().and_then(|pr| pr.last_run.as_mut()) {
        run.verdict = verdict;
    }
    Ok(Next::new(next, body)
        .plan(plan)
        .step(step)
        .effects(vec![Effect::Reply(verdict)]))
}

pub(super) fn checkpoint_recorded(
    state: &State,
    commit: String,
    subject: &str,
    tree: String,
) -> Result<Next, Refusal> {
    let mut phase = state.phase.clone();
    // A checkpoint nobody asked for (a human's) still moves the last checkpoint.
    let (pr, step) = match &mut phase {
        Phase::Pr {
            pr,
            stage: PrStage::ExecutingTdd { pending },
        }
        | Phase::Pr {
            pr,
            stage: PrStage::Debugging { pending, .. },
        } => {
            let step = match pending.take() {
                Some(TddPending::Checkpoint { step, .. }) => Some(step),
                other => {
                    *pending = other;
                    None
                }
            };
            (pr, step)
        }
        Phase::Pr {
            pr,
            stage: PrStage::AwaitingFinalization,
        } => (pr, None),
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. } => return Err(Refusal::WrongState),
    };
    object_id("checkpoint commit", &commit)?;
    object_id("checkpoint's tree", &tree)?;
    pr.verified_tree = Some(tree);
    pr.last_checkpoint = Some(commit.clone());
    let body = match step {
        Some(step) => format!("checkpoint for step {step}: {commit} {subject}"),
        None => format!("checkpoint {commit} {subject}"),
    };
    let next = Next::new(with_phase(state, phase), body);
    Ok(match step {
        Some(step) => next.step(step),
        None => next,
    })
}

pub(super) fn preflight_passed(state: &State, cache: PreflightCache) -> Result<Next, Refusal> {
    if !CHECKPOINT_STATES.contains(&state.status()) {
        return Err(Refusal::WrongState);
    }
    let body = format!("preflight passed on tree {} for a checkpoint", cache.tree);
    let mut next = state.clone();
    if let Some(pr) = next.pr_mut() {
        pr.preflight_cache = Some(cache);
    }
    Ok(Next::new(next, body))
}

#[cfg(test)]
mod tests {
    use super::runner_files_named;
    use pretty_assertions::assert_eq;

    /// A refusal names what the runner's files put back are, by runner and kind.
    #[test]
    fn the_runners_files_put_back_are_named_by_kind() {
        let named = |hooks: &[&str], command: &str| {
            let hooks: Vec<String> = hooks.iter().map(|h| h.to_string()).collect();
            runner_files_named(&hooks.iter().collect::<Vec<_>>(), command)
        };
        let cases = [
            (
                &["Cargo.toml"][..],
                "cargo test",
                "cargo's configuration is",
            ),
            (
                &[".cargo/config.toml", "rust-toolchain"][..],
                "cargo test",
                "cargo's configuration is",
            ),
            (
                &["run_tests.sh"][..],
                "sh run_tests.sh",
                "The script the RED command runs is",
            ),
            (
                &["myplugin.py", "ci.ini"][..],
                "sh run_tests.sh",
                "pytest's configuration and a plugin module pytest loads are",
            ),
            (
                &[".mocharc.yml"][..],
                "npx mocha test",
                "mocha's configuration is",
            ),
            (
                &["test/setup.js"][..],
                "npx mocha -r test/setup.js test",
                "A module mocha loads is",
            ),
            (
                &["package.json"][..],
                "npx mocha test",
                "mocha's configuration is",
            ),
            (&["package.json"][..], "npx jest", "jest's configuration is"),
            (&["test/setup.js"][..], "npx jest", "A module jest loads is"),
            (
                &["vite.config.ts", "vitest.config.js"][..],
                "npx vitest run",
                "vitest's configuration is",
            ),
            (
                &["ci/vt.mjs"][..],
                "npx vitest run -c ci/vt.mjs",
                "vitest's configuration is",
            ),
            (
                &["tests/setup.ts"][..],
                "npx vitest run",
                "A module vitest loads is",
            ),
        ];
        for (hooks, command, expected) in cases {
            assert_eq!(named(hooks, command), expected, "{hooks:?} {command}");
        }
    }
}
