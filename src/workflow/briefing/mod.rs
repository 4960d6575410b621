//! The briefing `get-task` prints: for every state, a text an LLM can follow with no
//! other context. It is the product, so its tests compare whole texts.

use std::fmt::Write as _;

use super::state::{Pending, State, Status, Verdict};

mod context;
mod notices;
mod states;
pub(crate) mod text;

pub use context::{Briefing, Context, StepView, TakenPr};
pub use notices::{BranchOutcome, DoneAction, Notice};
use states::*;
use text::indent;
pub use text::shell_quote;

const RULES: &str =
    "Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.";

pub fn brief(ctx: &Context) -> Briefing {
    let mut out = String::new();
    header(&mut out, ctx);
    let current = ctx.plan.and_then(|p| p.current.as_ref());
    let step = current.map(StepView::from);
    if let Some(guidance) = ctx.guidance {
        let _ = write!(
            out,
            "GUIDANCE FROM A HUMAN (shown once; follow it):\n{}\n\n",
            indent(guidance)
        );
    }
    match (ctx.state.status(), ctx.plan, current) {
        (Status::Halted, _, _) => {
            halted(&mut out, ctx);
            return Briefing {
                text: out,
                step,
                attempt: ctx.state.attempts(),
            };
        }
        (Status::Replanning, _, _) => replanning(&mut out, ctx),
        (Status::Initializing, _, _) if ctx.idle => {
            nothing_left(&mut out, ctx);
            return Briefing {
                text: out,
                step,
                attempt: 0,
            };
        }
        (Status::Initializing, _, _) => initializing(&mut out, ctx),
        (Status::CreatingBranch, _, _) => creating_branch(&mut out, ctx),
        (Status::ExecutingTdd | Status::Debugging, Some(plan), current) => {
            match (&ctx.state.pending(), current) {
                (Some(pending @ Pending::Checkpoint { .. }), _) => checkpoint(&mut out, pending),
                (Some(Pending::Analysis(_)), Some(step)) => analysis(&mut out, ctx, plan, step),
                (None, Some(step)) if ctx.state.status() == Status::Debugging => {
                    debugging(&mut out, ctx, plan, step)
                }
                (None, Some(step)) => tdd_step(&mut out, ctx, plan, step),
                (_, None) => all_steps_done(&mut out),
                // Approval and escalation only wait in CODE_REVIEW.
                (Some(Pending::Approval { .. } | Pending::Escalation { .. }), Some(step)) => {
                    tdd_step(&mut out, ctx, plan, step)
                }
            }
        }
        (Status::CodeReview, _, _) => code_review(&mut out, ctx),
        (Status::AwaitingFinalization, Some(plan), _) => awaiting_finalization(&mut out, ctx, plan),
        (Status::FinalizeComplete, Some(plan), _) => finalize_complete(&mut out, ctx, plan),
        (Status::PlanUpdated | Status::MergingBranch, _, _) => merging(&mut out, ctx),
        (status, None, _) => {
            let _ = writeln!(
                out,
                "State {status} needs an active PR plan, and there is none. A human has to look at \
                 `git orchestrate status` and `git orchestrate log`."
            );
        }
    }
    footer(&mut out, ctx);
    Briefing {
        text: out,
        step,
        attempt: ctx.state.attempts(),
    }
}

fn header(out: &mut String, ctx: &Context) {
    let _ = writeln!(
        out,
        "git-orchestrate · workflow {} · {}",
        ctx.workflow,
        ctx.state.status()
    );
    if let Some(plan) = ctx.plan {
        let (done, total) = (plan.done, plan.total);
        let branch = match (&ctx.state.branch(), ctx.state.status()) {
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

/// What the agent does after a `submit-work` that left the workflow in `state`.
pub fn next_action(state: &State, verdict: Verdict) -> &'static str {
    match (state.pending(), state.status(), verdict) {
        (Some(Pending::Checkpoint { .. }), _, _) => {
            "make the checkpoint commit with `git orchestrate checkpoint`, then run `git orchestrate get-task`"
        }
        (Some(Pending::Analysis(_)), _, _) => {
            "judge why the RED test failed, then answer with exactly one of \
             `git orchestrate submit-work --summary \"<why>\" --analysis-decision SUCCESS` (it failed \
             for the intended reason) or `git orchestrate submit-work --summary \"<why>\" \
             --analysis-decision FAILURE` (the wrong reason; `git orchestrate get-task` explains)"
        }
        (_, Status::Halted, _) => {
            "stop here: the workflow waits for a human, who answers with `git orchestrate resume`"
        }
        (_, Status::CreatingBranch, _) => {
            "run `git orchestrate get-task`; it creates the PR branch and gives you the first step"
        }
        (_, Status::Debugging, _) => {
            "run `git orchestrate get-task` for the failing output and debugging guidance"
        }
        (_, Status::AwaitingFinalization | Status::FinalizeComplete, Verdict::Failure) => {
            "fix what the FAILURE line says and submit again (`git orchestrate get-task` repeats the instructions); \
             if it cannot be fixed, hand it to a human with `git orchestrate escalate --report FILE`"
        }
        (_, Status::Initializing, _) if state.idle.is_some() => {
            "stop: nothing is left to do until the master plan changes on the main branch"
        }
        _ => "run `git orchestrate get-task` for your next instruction",
    }
}

#[cfg(test)]
mod tests;
