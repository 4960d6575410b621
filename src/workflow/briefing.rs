//! The briefing `get-task` prints: for every state, a text an LLM can follow with no
//! other context. It is the product, so its tests compare whole texts.

use std::fmt::Write as _;

use serde::Serialize;

use super::Expectation;
use super::plan::{PLAN_SCHEMA, PlanSummary, StepSummary, StepType};
use super::state::{LastRun, Pending, State, Status, Verdict};

/// Everything a briefing is made from. The engine gathers it; nothing here reads git.
pub struct Context<'a> {
    pub workflow: &'a str,
    pub state: &'a State,
    pub plan: Option<&'a PlanSummary>,
    /// `master_plan` from the config.
    pub master_plan: &'a str,
    /// A command that prints the full `output.log` of the workflow.
    pub output_log_command: &'a str,
    /// Names of the preflight gates in force (empty: none configured).
    pub gates: &'a [String],
    /// What `get-task` did just now, in the order it did it.
    pub done: &'a [String],
    /// Problems the agent (and whoever reads along) must know about.
    pub warnings: &'a [String],
}

/// A briefing and the structured view of its step, for `--json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Briefing {
    pub text: String,
    pub step: Option<StepView>,
    pub attempt: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepView {
    pub id: String,
    pub task: String,
    #[serde(rename = "type")]
    pub kind: StepType,
    pub description: String,
}

const RULE: &str = "----------------------------------------------------------------";

const RULES: &str =
    "Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.";

pub fn brief(ctx: &Context) -> Briefing {
    let mut out = String::new();
    header(&mut out, ctx);
    let current = ctx.plan.and_then(|p| p.current.as_ref());
    let step = current.map(|s| StepView {
        id: s.id.to_string(),
        task: s.task.clone(),
        kind: s.kind,
        description: s.description.clone(),
    });
    match (ctx.state.status, ctx.plan, current) {
        (Status::Initializing, _, _) => initializing(&mut out, ctx),
        (Status::CreatingBranch, _, _) => creating_branch(&mut out, ctx),
        (Status::ExecutingTdd | Status::Debugging, Some(plan), current) => {
            match (&ctx.state.pending, current) {
                (Some(pending @ Pending::Checkpoint { .. }), _) => checkpoint(&mut out, pending),
                (Some(Pending::Analysis { .. }), Some(step)) => analysis(&mut out, ctx, plan, step),
                (None, Some(step)) if ctx.state.status == Status::Debugging => {
                    debugging(&mut out, ctx, plan, step)
                }
                (None, Some(step)) => tdd_step(&mut out, ctx, plan, step),
                (_, None) => all_steps_done(&mut out),
            }
        }
        (status, _, _) => {
            let _ = writeln!(
                out,
                "This workflow is in state {status}, which this version of git-orchestrate ({}) does not \
                 drive. Upgrade git-orchestrate, or ask a human to look at `git orchestrate status`.",
                env!("CARGO_PKG_VERSION")
            );
        }
    }
    footer(&mut out, ctx);
    Briefing {
        text: out,
        step,
        attempt: ctx.state.debug_attempt_counter,
    }
}

fn header(out: &mut String, ctx: &Context) {
    let _ = writeln!(
        out,
        "git-orchestrate · workflow {} · {}",
        ctx.workflow, ctx.state.status
    );
    if let Some(plan) = ctx.plan {
        let (done, total) = (plan.done, plan.total);
        let branch = match (&ctx.state.current_pr_branch, ctx.state.status) {
            (Some(b), Status::CreatingBranch) => format!(" · branch {b} (not created yet)"),
            (Some(b), _) => format!(" · branch {b}"),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "PR: {}{branch} · {done} of {total} steps done",
            plan.title
        );
    }
    out.push('\n');
    for line in ctx.done {
        let _ = writeln!(out, "Done for you: {line}");
    }
    if !ctx.done.is_empty() {
        out.push('\n');
    }
}

fn footer(out: &mut String, ctx: &Context) {
    out.push('\n');
    out.push_str(RULES);
    out.push('\n');
    if !ctx.warnings.is_empty() {
        out.push('\n');
        for w in ctx.warnings {
            let _ = writeln!(out, "WARNING: {w}");
        }
    }
}

fn initializing(out: &mut String, ctx: &Context) {
    let _ = write!(
        out,
        "GOAL: plan the next pull request.

1. Read the master plan: {master}
2. Pick the first PR in it that is not marked [DONE].
3. Write that PR's plan as JSON in the schema below. Break the work into small tasks, each
   proven by its own steps: RED (a test that fails because the behaviour is missing),
   GREEN (the least code that makes it pass), REFACTOR (clean up, tests still passing).
   Every status starts as \"TODO\".
4. Submit the plan from a file, or with `--plan -` on stdin:

     git orchestrate submit-work --summary \"<one line>\" --plan <file>

   The orchestrator keeps the plan in git; do not commit the file.
5. Then run `git orchestrate get-task`: it creates the PR branch and gives you the first step.

PLAN SCHEMA (every field is required unless marked optional):
{PLAN_SCHEMA}
",
        master = ctx.master_plan
    );
}

fn creating_branch(out: &mut String, ctx: &Context) {
    let branch = ctx
        .state
        .current_pr_branch
        .as_deref()
        .unwrap_or("(unnamed)");
    match &ctx.state.last_error {
        Some(reason) => {
            let _ = write!(
                out,
                "The PR branch {branch} could not be created:
{}

Resolve that (for example commit or stash the changes), then run `git orchestrate get-task`
again; it retries.
",
                indent(reason)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "The PR branch {branch} is created by the next `git orchestrate get-task`; run it."
            );
        }
    }
}

fn step_line(out: &mut String, plan: &PlanSummary, step: &StepSummary) {
    let _ = writeln!(
        out,
        "STEP {} ({}) of task {}/{} \"{}\":\n{}",
        step.id,
        step.kind,
        step.id.task + 1,
        plan.tasks,
        step.task,
        indent(&step.description)
    );
}

fn gates_phrase(gates: &[String]) -> String {
    if gates.is_empty() {
        "(none are configured, so your test command is the only check)".to_string()
    } else {
        format!("({})", gates.join(", "))
    }
}

fn submit_command(expectation: Expectation, command: Option<&str>, summary: &str) -> String {
    let command = command.map_or_else(
        || "\"<command that runs the test>\"".to_string(),
        shell_quote,
    );
    format!(
        "git orchestrate submit-work --summary \"{summary}\" --test-command {command} --expectation {expectation}"
    )
}

fn tdd_step(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    step_line(out, plan, step);
    out.push('\n');
    let what = match step.kind {
        StepType::Red => {
            "Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason."
                .to_string()
        }
        StepType::Green => format!(
            "Write the least code that makes the failing test from the RED step pass. Submit the
test command with --expectation PASS; when it passes, the orchestrator runs the preflight
gates {}.",
            gates_phrase(ctx.gates)
        ),
        StepType::Refactor => format!(
            "Improve the code of this task without changing its behaviour. Submit the test command
with --expectation PASS; the tests must still pass, then the preflight gates run {}.",
            gates_phrase(ctx.gates)
        ),
    };
    let _ = write!(
        out,
        "{what}

  {}

Then run `git orchestrate get-task` for your next instruction.
",
        submit_command(Expectation::for_step(step.kind), None, "<what you did>")
    );
}

fn output_block(out: &mut String, ctx: &Context, tail: &str) {
    let _ = write!(
        out,
        "Output (the end of it, verbatim; all of it: {}):
{RULE}
{}{}{RULE}
",
        ctx.output_log_command,
        tail,
        if tail.is_empty() || tail.ends_with('\n') {
            ""
        } else {
            "\n"
        }
    );
}

fn analysis(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let Some(Pending::Analysis {
        command,
        exit,
        output_tail,
        ..
    }) = &ctx.state.pending
    else {
        return;
    };
    step_line(out, plan, step);
    let _ = write!(
        out,
        "
Your RED test failed as a RED test should ({exit}). Before the step counts, judge WHY it
failed.

$ {command}
"
    );
    output_block(out, ctx, output_tail);
    out.push_str(
        "
It failed for the intended reason when the output shows that the behaviour under test is
missing: a failed assertion about it, or \"not found\"/\"not defined\" for the very thing you
are about to build. It failed for the wrong reason when something unrelated broke: a typo, a
wrong path, a missing import, a crash while setting up.

Answer with exactly one of:

  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision SUCCESS
      (it failed for the intended reason: the step is done)
  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision FAILURE
      (it failed for the wrong reason: you will debug it)
",
    );
}

fn checkpoint(out: &mut String, pending: &Pending) {
    let Pending::Checkpoint {
        step: id,
        step_type: kind,
        description,
        ..
    } = pending
    else {
        return;
    };
    let _ = write!(
        out,
        "STEP {id} ({kind}) passed verification: \"{description}\".

Make a safety checkpoint commit before the next step:

  git orchestrate checkpoint

It stages all changes, commits them as \"checkpoint: {id} …\" and records the commit.
(A commit of your own whose message starts with \"checkpoint:\" counts too, if it holds
exactly what was verified.) Then run `git orchestrate get-task` for the next step.
"
    );
}

fn what_failed(run: &LastRun) -> String {
    let failing_gate = run
        .preflight
        .as_ref()
        .and_then(|p| p.gates.iter().find(|g| !g.exit.success()));
    match (
        run.expectation,
        run.exit.success(),
        failing_gate,
        run.verdict,
    ) {
        (Expectation::Pass, true, Some(gate), _) => format!(
            "your test command `{}` passed, but the preflight gate `{}` failed ({}).",
            run.command, gate.name, gate.exit
        ),
        (Expectation::Pass, _, _, _) => {
            format!("your test command `{}` failed ({}).", run.command, run.exit)
        }
        (Expectation::Fail, true, _, _) => format!(
            "your RED test `{}` passed ({}), but a RED test must fail: it does not yet show that the \
             behaviour is missing.",
            run.command, run.exit
        ),
        (Expectation::Fail, false, _, Verdict::Failure) => format!(
            "you judged that your RED test `{}` failed for the wrong reason ({}).",
            run.command, run.exit
        ),
        (Expectation::Fail, false, _, _) => {
            format!("your RED test `{}` ended with {}.", run.command, run.exit)
        }
    }
}

fn debugging(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let state = ctx.state;
    let id = step.id;
    out.push_str("Your previous submission failed. Your new primary goal is to fix the bug.\n\n");
    step_line(out, plan, step);
    let _ = writeln!(
        out,
        "\nDebugging attempt {} on this step.",
        state.debug_attempt_counter
    );
    if let Some(run) = &state.last_run {
        let _ = writeln!(out, "What failed: {}", what_failed(run));
    }
    out.push('\n');
    output_block(out, ctx, state.last_error.as_deref().unwrap_or(""));
    let command = state
        .last_run
        .as_ref()
        .filter(|r| r.step == id)
        .map(|r| r.command.as_str());
    let _ = write!(
        out,
        "
Guidance: read the output above, form one hypothesis about the cause, make one focused fix,
and submit again:

  {}
",
        submit_command(
            Expectation::for_step(step.kind),
            command,
            "<hypothesis and fix>"
        )
    );
}

fn all_steps_done(out: &mut String) {
    out.push_str(
        "Every step of this PR's plan is DONE. Run `git orchestrate get-task` again to move the PR
on to its next phase.
",
    );
}

fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out.trim_end_matches('\n').to_string()
}

/// Quotes `s` for a POSIX shell when it needs quoting, so suggested commands can be pasted.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::plan::{Step, StepId, parse_plan};
    use crate::workflow::state::{ExitRecord, GateRecord, PreflightRecord};
    use pretty_assertions::assert_eq;

    const PLAN: &str = r#"{
        "masterPlanPath": "docs/plan.md", "prTitle": "feat: Add numbers", "summary": "s",
        "verificationPlan": "v",
        "tasks": [
          {"taskName": "add", "status": "TODO", "tdd_steps": [
            {"type": "RED", "description": "test that add(2, 3) is 5", "status": "TODO"},
            {"type": "GREEN", "description": "implement add", "status": "TODO"}]}
        ]}"#;

    fn ctx<'a>(
        state: &'a State,
        plan: Option<&'a PlanSummary>,
        gates: &'a [String],
    ) -> Context<'a> {
        Context {
            workflow: "main",
            state,
            plan,
            master_plan: "docs/plan.md",
            output_log_command: "git show refs/orchestrator/workflows/main:output.log",
            gates,
            done: &[],
            warnings: &[],
        }
    }

    fn tdd_state() -> State {
        let mut s = State::new(Some("main".into()));
        s.status = Status::ExecutingTdd;
        s.current_pr_branch = Some("feat/add-numbers".into());
        s
    }

    #[test]
    fn red_step_briefing() {
        let plan = parse_plan(PLAN.as_bytes()).unwrap();
        let state = tdd_state();
        let summary = plan.summary();
        let b = brief(&ctx(&state, Some(&summary), &[]));
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 0 of 2 steps done

STEP 1.1 (RED) of task 1/1 "add":
  test that add(2, 3) is 5

Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

  git orchestrate submit-work --summary "<what you did>" --test-command "<command that runs the test>" --expectation FAIL

Then run `git orchestrate get-task` for your next instruction.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
        );
        assert_eq!(
            b.step,
            Some(StepView {
                id: "1.1".into(),
                task: "add".into(),
                kind: StepType::Red,
                description: "test that add(2, 3) is 5".into()
            })
        );
    }

    #[test]
    fn debugging_briefing_after_a_failing_gate() {
        let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
        plan.complete_step(StepId::new(0, 0));
        let mut state = tdd_state();
        state.status = Status::Debugging;
        state.debug_attempt_counter = 2;
        state.last_error = Some("lint: line 3: unused variable\n".into());
        state.last_run = Some(LastRun {
            step: StepId::new(0, 1),
            command: "sh tests/add.sh".into(),
            expectation: Expectation::Pass,
            exit: ExitRecord::code(0),
            verdict: Verdict::Failure,
            preflight: Some(PreflightRecord {
                passed: false,
                gates: vec![GateRecord {
                    name: "lint".into(),
                    exit: ExitRecord::code(3),
                    ms: 12,
                }],
            }),
        });
        let gates = vec!["lint".to_string()];
        let warnings = vec!["a warning".to_string()];
        let summary = plan.summary();
        let mut c = ctx(&state, Some(&summary), &gates);
        c.warnings = &warnings;
        let b = brief(&c);
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · DEBUGGING
PR: feat: Add numbers · branch feat/add-numbers · 1 of 2 steps done

Your previous submission failed. Your new primary goal is to fix the bug.

STEP 1.2 (GREEN) of task 1/1 "add":
  implement add

Debugging attempt 2 on this step.
What failed: your test command `sh tests/add.sh` passed, but the preflight gate `lint` failed (exit 3).

Output (the end of it, verbatim; all of it: git show refs/orchestrator/workflows/main:output.log):
----------------------------------------------------------------
lint: line 3: unused variable
----------------------------------------------------------------

Guidance: read the output above, form one hypothesis about the cause, make one focused fix,
and submit again:

  git orchestrate submit-work --summary "<hypothesis and fix>" --test-command 'sh tests/add.sh' --expectation PASS

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.

WARNING: a warning
"#
        );
        assert_eq!(b.attempt, 2);
    }

    #[test]
    fn checkpoint_briefing_names_the_step_that_passed_not_the_next_one() {
        let mut plan = parse_plan(PLAN.as_bytes()).unwrap();
        plan.complete_step(StepId::new(0, 0));
        plan.complete_step(StepId::new(0, 1));
        plan.tasks[0].tdd_steps.push(Step {
            kind: StepType::Refactor,
            description: "tidy add".into(),
            status: crate::workflow::plan::StepStatus::Todo,
        });
        let mut state = tdd_state();
        state.pending = Some(Pending::Checkpoint {
            step: StepId::new(0, 1),
            step_type: StepType::Green,
            description: "implement add".into(),
            verified_tree: None,
            preflight_key: None,
        });
        let summary = plan.summary();
        let b = brief(&ctx(&state, Some(&summary), &[]));
        assert_eq!(
            b.text,
            r#"git-orchestrate · workflow main · EXECUTING_TDD
PR: feat: Add numbers · branch feat/add-numbers · 2 of 3 steps done

STEP 1.2 (GREEN) passed verification: "implement add".

Make a safety checkpoint commit before the next step:

  git orchestrate checkpoint

It stages all changes, commits them as "checkpoint: 1.2 …" and records the commit.
(A commit of your own whose message starts with "checkpoint:" counts too, if it holds
exactly what was verified.) Then run `git orchestrate get-task` for the next step.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"#
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("make"), "make");
        assert_eq!(shell_quote("cargo test -p x"), "'cargo test -p x'");
        assert_eq!(shell_quote("echo 'hi'"), r"'echo '\''hi'\'''");
    }
}
