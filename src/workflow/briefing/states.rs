//! The body of the briefing in each state: what to do now, and how.

use std::fmt::Write as _;

use super::context::Context;
use super::text::{indent, shell_quote};
use crate::workflow::Expectation;
use crate::workflow::debugging::Tier;
use crate::workflow::plan::{PLAN_SCHEMA, PlanSummary, StepSummary, StepType};
use crate::workflow::state::{HaltReason, LastRun, Pending, RedAnalysis, Status, Verdict};

/// Where a re-plan is edited: inside the git directory, so no `git add --all` stages it.
const PLAN_FILE: &str = "\"$(git rev-parse --git-dir)/plan.json\"";

pub(super) fn initializing(out: &mut String, ctx: &Context) {
    let _ = write!(
        out,
        "GOAL: plan the next pull request.

1. Read the master plan: {master}
2. Pick the first PR in it that is not marked [DONE].
3. Write that PR's plan as JSON in the schema below, with \"masterPlanPath\": \"{master}\"
   and \"prTitle\" the title of its heading (`## PR 2: feat: Multiply` -> \"feat: Multiply\"):
   the PR is claimed, and marked done at the end, by that heading.
   Break the work into small tasks, each proven by its own steps: RED (a test that fails
   because the behaviour is missing), GREEN (the least code that makes it pass), REFACTOR
   (clean up, tests still passing). Every status starts as \"TODO\".
4. Submit the plan on stdin, or from a file outside the repository (a file inside it would
   be committed with the next checkpoint); the orchestrator keeps the plan in git:

     git orchestrate submit-work --summary \"<one line>\" --plan - <<'EOF'
     {{ ...the plan... }}
     EOF
5. Then run `git orchestrate get-task`: it creates the PR branch and gives you the first step.

If every PR in the master plan is marked [DONE], there is nothing to plan. Say so, and stop:

     git orchestrate submit-work --summary \"<one line>\" --no-pr-left

From then on `git orchestrate get-task` answers \"nothing left to do\" (exit 0) until a commit
on {main} changes {master}.
",
        master = ctx.master_plan,
        main = ctx.main_branch
    );
    if !ctx.taken.is_empty() {
        let _ = writeln!(
            out,
            "
TAKEN: other agents work on the PRs of the master plan below, or they are done. Do not plan
any of them: pick the first PR that is neither [DONE] nor claimed here. A plan for a claimed
PR is refused (exit 4, naming its holder). When none is left, say so with --no-pr-left."
        );
        for taken in ctx.taken {
            let _ = match &taken.claimed_by {
                Some(holder) => writeln!(out, "  - {}: claimed by {holder}", taken.pr),
                None => writeln!(out, "  - {}: done", taken.pr),
            };
        }
    }
    let _ = write!(
        out,
        "
PLAN SCHEMA (every field is required unless marked optional):
{PLAN_SCHEMA}
"
    );
}

/// The stop condition of an unattended agent: nothing of the master plan is left.
pub(super) fn nothing_left(out: &mut String, ctx: &Context) {
    let _ = writeln!(
        out,
        "NOTHING LEFT TO DO: every PR of the master plan ({master}) is done, as recorded by
`submit-work --no-pr-left`. Stop here; do not start work that is not in the master plan.
This holds until a commit on {main} changes {master}; then `git orchestrate get-task` briefs
the next PR.",
        master = ctx.master_plan,
        main = ctx.main_branch
    );
}

pub(super) fn creating_branch(out: &mut String, ctx: &Context) {
    let branch = ctx.state.branch().unwrap_or("(unnamed)");
    match &ctx.state.last_error() {
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

pub(super) fn step_line(out: &mut String, plan: &PlanSummary, step: &StepSummary) {
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

/// What happens after a passing PASS submit, as one sentence.
pub(super) fn gates_sentence(gates: &[String]) -> String {
    if gates.is_empty() {
        "No preflight gates are configured, so your test command is the only check.".to_string()
    } else {
        format!(
            "When it passes, the orchestrator runs the preflight gates ({}).",
            gates.join(", ")
        )
    }
}

pub(super) fn submit_command(
    expectation: Expectation,
    command: Option<&str>,
    summary: &str,
) -> String {
    let command = command.map_or_else(
        || "\"<command that runs the test>\"".to_string(),
        shell_quote,
    );
    format!(
        "git orchestrate submit-work --summary \"{summary}\" --test-command {command} --expectation {expectation}"
    )
}

pub(super) fn tdd_step(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    step_line(out, plan, step);
    out.push('\n');
    let what = match step.kind {
        StepType::Red => {
            "Write a test for this behaviour that fails because the behaviour does not exist
yet. Do not implement the behaviour in this step. Submit the test command with
--expectation FAIL; you will then be asked to confirm that it failed for the intended reason.

The files this step changes are pinned as the test: every later run of it (at the GREEN
step, and at the end on the PR's base and on the squashed commit) has them exactly as they
are now. So change only the test here, inside the repository, and make it a test that runs: a
command that runs no test (exit 126 or 127, a runner that reports no tests) is not a RED."
                .to_string()
        }
        StepType::Green if step.after_red => format!(
            "Write the least code that makes the failing test from the RED step pass. Submit the
test command with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
        StepType::Green => format!(
            "Make the change this step describes, keeping every test passing. Submit the test
command that proves it with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
        StepType::Refactor => format!(
            "Improve the code of this task without changing its behaviour; its tests must still
pass. Submit the test command with --expectation PASS.
{}",
            gates_sentence(ctx.gates)
        ),
    };
    let _ = write!(
        out,
        "{what}

  {}

Then run `git orchestrate get-task` for your next instruction.
",
        // At a GREEN step after its RED step, the test is the RED step's command: filled in.
        // At a REFACTOR step, or a GREEN step without one (a review's fix), the test command
        // that last passed is: the tests that must still pass.
        submit_command(
            Expectation::for_step(step.kind),
            ctx.state
                .red_test_due(step.id, step.kind)
                .map(|red| red.command.as_str())
                .or_else(|| (step.kind != StepType::Red)
                    .then(|| last_passed(ctx))
                    .flatten()),
            "<what you did>"
        )
    );
}

/// The command of the last test run that was meant to pass and did.
fn last_passed<'a>(ctx: &Context<'a>) -> Option<&'a str> {
    ctx.state
        .pr()
        .and_then(|pr| pr.last_run.as_ref())
        .filter(|run| run.expectation == Expectation::Pass && run.verdict == Verdict::Success)
        .map(|run| run.command.as_str())
}

pub(super) fn output_block(out: &mut String, ctx: &Context, tail: &str) {
    let _ = write!(
        out,
        "Output (the end of it; all of it, byte for byte: {}):\n{}",
        ctx.output_log_command,
        crate::workflow::fence::fenced(tail)
    );
}

pub(super) fn analysis(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let Some(Pending::Analysis(RedAnalysis {
        command,
        exit,
        output_tail,
        red_tree,
        red_paths,
        red_shared,
        syntax_error,
        ..
    })) = &ctx.state.pending()
    else {
        return;
    };
    step_line(out, plan, step);
    // What to answer comes before the output it judges: a client that shows the model only
    // the start of a long result (docs/agent-guide.md) must not cut the instructions off.
    let _ = write!(
        out,
        "
Your RED test failed as a RED test should ({exit}). Before the step counts, judge WHY it
failed, from its output (quoted at the end).

It failed for the intended reason when the output shows that the behaviour under test is
missing: a failed assertion about it, or \"not found\"/\"not defined\" for the very thing you
are about to build. It failed for the wrong reason when something unrelated broke: a typo, a
wrong path, a missing import, a crash while setting up.

Answer with exactly one of:

  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision SUCCESS
      (it failed for the intended reason: the step is done)
  git orchestrate submit-work --summary \"<your analysis>\" --analysis-decision FAILURE
      (it failed for the wrong reason: you will debug it)
"
    );
    if let Some(line) = syntax_error {
        let _ = write!(
            out,
            "
NOTE: the output shows that the test itself could not be read:
  {line}
A test that cannot be read says nothing about the behaviour: that is the wrong reason. Answer
--analysis-decision FAILURE, fix the test, and submit the RED step again.
"
        );
    }
    if red_tree.is_some() {
        const SHOWN: usize = 20;
        let listed = |paths: &[String]| {
            let mut listed: Vec<String> = paths.iter().take(SHOWN).cloned().collect();
            if paths.len() > SHOWN {
                listed.push(format!("and {} more", paths.len() - SHOWN));
            }
            indent(&listed.join("\n"))
        };
        if red_paths.is_empty() && red_shared.is_empty() {
            out.push_str(
                "
This RED step changed no file since the task began: nothing is pinned as its test, and the
reviewer is told so. If its test was meant to be new, write it and submit the RED step again.
",
            );
        }
        if !red_paths.is_empty() {
            let _ = write!(
                out,
                "
If you answer SUCCESS, what this RED step changed since the task began is pinned as its test:
{}
The GREEN step and the final check run the test with these files exactly as they are now. If
one of them is not part of the test (a stub of the code, say), answer FAILURE and submit the
RED step again without it.
",
                listed(red_paths)
            );
        }
        if !red_shared.is_empty() {
            let _ = write!(
                out,
                "
These files existed before the task and are no test files by `[gates] test_paths`, so they
are not pinned:
{}
The final check runs the test on the PR's base with them as they are now, where it must fail;
the later steps go on to change them. A test that can live in a test file belongs there.
",
                listed(red_shared)
            );
        }
    }
    let _ = write!(out, "\n$ {command}\n");
    output_block(out, ctx, output_tail);
}

pub(super) fn checkpoint(out: &mut String, pending: &Pending) {
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

pub(super) fn what_failed(run: &LastRun) -> String {
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
        // Passed, no gate failed, and still refused: what refused it is named in that
        // submission's own output, not in the run this record keeps.
        (Expectation::Pass, true, None, _) => format!(
            "your test command `{}` passed ({}), but the submission was refused for what its \
             output named (the task's RED test failing when run again, a protected path \
             changed, or files changed while the tests ran).",
            run.command, run.exit
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

pub(super) fn debugging(out: &mut String, ctx: &Context, plan: &PlanSummary, step: &StepSummary) {
    let state = ctx.state;
    let attempt = state.attempts();
    out.push_str("Your previous submission failed. Your new primary goal is to fix the bug.\n\n");
    step_line(out, plan, step);
    if attempt == 0 {
        out.push_str(
            "\nDebugging resumes after a human's guidance; the attempt count starts again.\n",
        );
    } else {
        let _ = writeln!(out, "\nDebugging attempt {attempt} on this step.");
    }
    if let Some(run) = &state.pr().and_then(|pr| pr.last_run.as_ref()) {
        let _ = writeln!(out, "What failed: {}", what_failed(run));
    }
    if state.identical_failures() > 0 {
        let _ = write!(
            out,
            "\nYour last {} attempts failed identically: the same output came back, so your changes did not
reach the cause. Try a different approach.\n",
            if state.identical_failures() == 1 { "two".to_string() } else { (state.identical_failures() + 1).to_string() }
        );
    }
    let command = state
        .pr()
        .and_then(|pr| pr.last_run.as_ref())
        .as_ref()
        .filter(|r| r.step == step.id)
        .map(|r| r.command.as_str());
    let submit = submit_command(
        Expectation::for_step(step.kind),
        command,
        "<hypothesis and fix>",
    );
    let _ = match ctx.thresholds.tier(attempt) {
        Tier::Hypothesize => write!(
            out,
            "
Guidance: read the output below, form one hypothesis about the cause, make one focused fix,
and submit again:

  {submit}
"
        ),
        Tier::Instrument => write!(
            out,
            "
Guidance: your fixes have not worked, so stop guessing. Add temporary logging, prints or
assertions around the code that fails, submit to run them, and read what the new output shows
before you change any behaviour. Remove the instrumentation once you have found the cause.

  {submit}
"
        ),
        Tier::ReduceScope => write!(
            out,
            "
Guidance: {attempt} attempts have failed. Conclude that this task is too large or too vague to
finish as planned, and request a scope reduction. It reverts the working tree to the last
commit (untracked files stay) and asks you to break the task into smaller ones:

  git orchestrate request-scope-reduction

(If you are certain that one last fix will do it, you may still submit it:
  {submit})
"
        ),
        Tier::Escalate => write!(
            out,
            "
You have made numerous attempts and have been unable to solve the problem. Your new primary goal
is to escalate for external help. You MUST generate a comprehensive markdown report detailing
the problem, what you've tried, and any relevant error messages. Then, you MUST run

  git orchestrate escalate --report <file>      (or --report - with the report on stdin)

with the full markdown report. The workflow then stops and waits for a human.
"
        ),
    };
    // From the second failed attempt on, the honest way out is named (docs/integrity.md, "A
    // way to stop honestly"): an agent with no legal move left bends the test instead.
    if attempt >= 2 {
        out.push_str(CONTRADICTION_MOVE);
    }
    // The output last, after what to do with it (as in the analysis briefing).
    out.push('\n');
    output_block(out, ctx, state.last_error().unwrap_or(""));
}

/// The move for a task that contradicts its test, as the debugging briefings name it.
const CONTRADICTION_MOVE: &str = "
If the task and its test cannot both hold (the test demands what the task rules out, or the
reverse), do not bend the test or special-case the code to get past it. Say so, and a human
decides:

  git orchestrate submit-work --summary \"<one line>\" --contradiction \"<what the task asks, what the test holds, why both cannot be true>\"
";

pub(super) fn replanning(out: &mut String, ctx: &Context) {
    let Some(context) = &ctx.state.replan_context() else {
        return;
    };
    let task = context.step.task + 1;
    let _ = write!(
        out,
        "Your previous attempt failed and all changes have been reverted. Your new assignment is to
create a more granular plan.

1. Analyze the original goal: task {task}, '{original}', and the final error:
{error}2. Break down the original task into the smallest possible verifiable Implementation Tasks,
   each with its own full Red-Green-Refactor cycle.
3. The very last task in your new plan must be a 'Verification Task' (its taskName contains
   \"Verification\"). This task's purpose is to prove that the preceding sub-tasks collectively
   achieve the original goal. Its RED step should be a recreation of the original task's RED
   step.
4. Update the plan to replace the original task with your new plan. The first new task must
   include a breakdownHistory object documenting the original goal and your justification:
     \"breakdownHistory\": {{ \"originalTaskName\": \"{original}\", \"justification\": \"<why>\" }}

Start from the stored plan, change only task {task}, and submit the whole plan. Keep the file
inside the git directory, where no commit picks it up:

  {plan_show} > {PLAN_FILE}
  git orchestrate submit-work --summary \"<one line>\" --plan {PLAN_FILE}

Keep every task before task {task} and every task after it exactly as it is; the new tasks, and all
their steps, start as \"TODO\". Every rule that is broken is listed if the plan is refused.
",
        original = context.original_task,
        error = crate::workflow::fence::fenced(&context.error),
        plan_show = ctx.plan_show_command,
    );
    if !context.untracked.is_empty() {
        out.push_str("\nThe revert left these untracked files in place (delete them if they belong to the failed attempt):\n");
        for file in &context.untracked {
            let _ = writeln!(out, "  {file}");
        }
    }
}

pub(super) fn halted(out: &mut String, ctx: &Context) {
    let Some(halt) = &ctx.state.halt() else {
        out.push_str(
            "The workflow is HALTED for a human; `git orchestrate status` shows what is known.\n",
        );
        return;
    };
    let stop = if halt.message.ends_with('.') { "" } else { "." };
    let _ = writeln!(
        out,
        "The workflow is HALTED and waits for a human: {}{stop}",
        halt.message
    );
    out.push_str(
        "\nFor the agent: stop here. There is nothing to do until a human resumes the workflow.\n",
    );
    match halt.reason {
        HaltReason::Escalated => report_to_answer(out, ctx, &halt.resume_to, "agent's report", ""),
        HaltReason::Contradiction => report_to_answer(
            out,
            ctx,
            &halt.resume_to,
            "agent's account",
            " (why it finds the task and its test contradict each other: change\nthe task or the test on its branch, or tell the agent what it missed)",
        ),
        HaltReason::Stuck => report_to_answer(
            out,
            ctx,
            &halt.resume_to,
            "run's report",
            " (the briefings the agent was given, what it said,\nthe last failing output)",
        ),
        HaltReason::MergeConflict => {
            let _ = write!(
                out,
                "
For the human: resolve the conflict, merge the branch into the main branch yourself, then run

  git orchestrate resume

which checks that the branch is merged, cleans up and moves on to the next PR.
"
            );
        }
    }
    for w in ctx.warnings {
        let _ = writeln!(out, "\nWARNING: {w}");
    }
}

/// A halt a human answers with guidance, and the report it rests on (`escalation.md`).
pub(super) fn report_to_answer(
    out: &mut String,
    ctx: &Context,
    resume_to: &Status,
    what: &str,
    about: &str,
) {
    let _ = write!(
        out,
        "
For the human: read the {what} below{about}, then answer it:

  git orchestrate resume --guidance \"<what to try, or what you changed>\"

The workflow then returns to {resume_to} and shows your guidance to the agent once.
"
    );
    if let Some((command, report)) = ctx.escalation {
        let _ = write!(
            out,
            "\nThe {what} ({command}):\n{}",
            crate::workflow::fence::fenced(report)
        );
    }
}

/// The review's findings a human weighs at the approval, as a paragraph; nothing when there
/// are none.
pub(super) fn noted_findings(findings: &[crate::workflow::review::Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let list: Vec<String> = findings.iter().map(|f| format!("  - {f}")).collect();
    format!(
        "What the review noted (none of it blocks; the human weighs it):\n\n{}\n\n",
        list.join("\n")
    )
}

pub(super) fn code_review(out: &mut String, ctx: &Context) {
    let state = ctx.state;
    match &state.pending() {
        Some(Pending::Approval { round }) => {
            let reviewed = match &state.pr().and_then(|pr| pr.review.last.as_ref()) {
                Some(r) if r.ran => format!(
                    "The automated review (round {round}) found no blocking issues ({} noted; {}).",
                    r.findings, ctx.review_show_command
                ),
                _ => "No automated review is configured.".to_string(),
            };
            let _ = write!(
                out,
                "{reviewed} The PR now waits for a human's approval.

For the agent: stop here. There is nothing to do until a human answers.

{noted}For the human: look at the branch ({branch}), then answer:

  git orchestrate approve
  git orchestrate reject --comment \"<what must change>\"

A rejection becomes a blocking finding: a new task for the agent, then another review.
",
                branch = state.branch().unwrap_or("?"),
                noted = noted_findings(ctx.noted_findings),
            );
        }
        Some(Pending::Escalation { reason }) => {
            let _ = write!(
                out,
                "The code review keeps finding blocking issues: {reason}.

You have made numerous attempts and have been unable to solve the problem. Your new primary goal
is to escalate for external help. You MUST generate a comprehensive markdown report detailing
the problem, what you've tried, and any relevant error messages (the last review's findings:
{review}). Then, you MUST run

  git orchestrate escalate --report <file>      (or --report - with the report on stdin)

with the full markdown report. The workflow then stops and waits for a human.
",
                review = ctx.review_show_command
            );
        }
        _ => match state.last_error() {
            Some(error) => {
                let _ = write!(
                    out,
                    "The automated code review could not run, so the PR is NOT approved:
{}

Run `git orchestrate get-task` again to retry the review. If it fails the same way, stop and
tell a human: the review command (review.command in {main}:.orchestrate.toml) needs fixing.
",
                    indent(error),
                    main = ctx.main_branch
                );
            }
            None => {
                out.push_str("The code review runs with the next `git orchestrate get-task`.\n")
            }
        },
    }
}

pub(super) fn awaiting_finalization(out: &mut String, ctx: &Context, plan: &PlanSummary) {
    let reviewed = match &ctx.state.pr().and_then(|pr| pr.review.last.as_ref()) {
        Some(r) if r.ran => format!(
            "the code review passed (round {}: {} finding{} noted, none blocking; {})",
            r.round,
            r.findings,
            if r.findings == 1 { "" } else { "s" },
            ctx.review_show_command
        ),
        _ => "no automated review is configured".to_string(),
    };
    let _ = write!(
        out,
        "Every step is DONE and {reviewed}.

Finalize the PR: squash all commits of this branch into one commit titled with the PR title.
The squash must hold exactly the tree that last passed verification, so add nothing by hand
now. If something is still missing, add it and run `git orchestrate checkpoint` first: it
verifies the addition and commits it. Then let the orchestrator make the squash and check it
in one go (a squash it refuses is undone):

  git orchestrate submit-work --summary \"squashed\" --squash

It checks that the branch is exactly one commit over {main}, that its message is the PR title,
{title}, and that its tree is the one that last passed verification (a squash may not bring in
anything unverified). A squash you made yourself is confirmed, and checked the same way, with:

  git orchestrate submit-work --summary \"squashed\"
",
        main = ctx.main_branch,
        title = shell_quote(&plan.title)
    );
}

pub(super) fn finalize_complete(out: &mut String, ctx: &Context, plan: &PlanSummary) {
    // The configured path: the plan named it when it was submitted, and the check uses it.
    let commit = ctx.state.final_commit().unwrap_or("?");
    let _ = write!(
        out,
        "The PR is squashed into commit {commit}.

Update the master plan, {path}: mark the PR \"{title}\" as [DONE]
and write the squashed commit's hash next to it:

  {commit}

Change nothing else, and commit only that file, as a second commit on the branch:

  git add {path_arg} && git commit -m {message}

Then confirm. The orchestrator checks that the commit changes only the master plan and that the
file mentions the hash:

  git orchestrate submit-work --summary \"master plan updated\"

Or let the orchestrator mark the PR's heading, commit it and check it in one go:

  git orchestrate submit-work --summary \"master plan updated\" --mark-done
",
        path = ctx.master_plan,
        path_arg = shell_quote(ctx.master_plan),
        title = plan.title,
        message = shell_quote(&format!(
            "docs: mark \"{}\" done in the master plan",
            plan.title
        )),
    );
}

pub(super) fn merging(out: &mut String, ctx: &Context) {
    let branch = ctx.state.branch().unwrap_or("?");
    match &ctx.state.last_error() {
        Some(reason) => {
            let _ = write!(
                out,
                "The merge of {branch} into {main} could not start:
{}

Resolve what it names (local changes: commit or stash them; main moved outside the workflow:
that is a human's to look at and `git orchestrate repin`), then run `git orchestrate get-task`
again; it retries the merge.
",
                indent(reason),
                main = ctx.main_branch
            );
        }
        None => {
            let _ = writeln!(
                out,
                "The next `git orchestrate get-task` merges {branch} into {}.",
                ctx.main_branch
            );
        }
    }
}

pub(super) fn all_steps_done(out: &mut String) {
    out.push_str(
        "Every step of this PR's plan is DONE. Run `git orchestrate get-task` again to move the PR
on to its next phase.
",
    );
}
