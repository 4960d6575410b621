//! The transition table (docs/states.md): `transition(state, plan, event) -> (state,
//! effects)`, one function per event. What an event is and what a transition returns
//! (`event.rs`), what one event's function decides (`next.rs`), the events of the TDD loop
//! (`tdd.rs`), and the pure checks that decide what `get-task` must do and whether a command
//! is accepted at all (`decide.rs`) live beside it.

mod decide;
mod event;
mod next;
mod tdd;

pub use super::rejection::{Rejection, RejectionKind};
pub use decide::*;
pub use event::*;
use next::{Next, Refusal, before_branch, object_id, with_phase};
use tdd::{analysis_decided, checkpoint_recorded, preflight_passed, test_ran};

use crate::workflow::Human;
use crate::workflow::plan::{Plan, StepId, TaskStatus};
use crate::workflow::review::{Finding, Priority, ReviewRecord, feedback_task};
use crate::workflow::state::Verdict;
use crate::workflow::state::{Attempts, Pending, State, Status, TddPending};
use crate::workflow::state::{Finalized, Halt, HaltReason, Phase, Pin, Pr, PrStage, ReplanContext};
use crate::workflow::state::{Idle, ReviewStage, ReviewSummary};

/// The transition table. Returns the new state and the effects, or a rejection when the
/// event does not apply to this state (the engine checks first, so this is the backstop
/// against a state that moved underneath it). `plan` is the full plan, progress included,
/// when [`needs_full_plan`] says the event needs it.
pub fn transition(
    state: &State,
    plan: Option<&Plan>,
    event: Event,
) -> Result<Transition, Rejection> {
    let from = state.status();
    let name = event.name();
    let input = event.clone();
    let next = match event {
        Event::PlanSubmitted {
            plan,
            branch,
            summary,
        } => plan_submitted(state, plan, branch, &summary),
        Event::StalePlanDropped { title } => stale_plan_dropped(state, title),
        Event::BranchReady { base, pin } => branch_ready(state, base, pin),
        Event::Repinned { pin } => repinned(state, pin),
        Event::BranchBlocked { reason } => branch_blocked(state, reason),
        Event::TestRan(run) => test_ran(state, plan, *run),
        Event::AnalysisDecided { decision, summary } => analysis_decided(state, decision, &summary),
        Event::CheckpointRecorded {
            commit,
            subject,
            tree,
        } => checkpoint_recorded(state, commit, &subject, tree),
        Event::PreflightPassed { cache } => preflight_passed(state, cache),
        Event::ScopeReduced {
            step,
            original_task,
            untracked,
        } => scope_reduced(state, plan, step, original_task, untracked),
        Event::Replanned {
            plan: new,
            new_tasks,
            summary,
        } => replanned(state, plan, new, new_tasks, &summary),
        Event::Escalated { report } => escalated(state, report),
        Event::Contradicted { account } => contradicted(state, account),
        Event::Resumed { guidance } => resumed(state, guidance),
        Event::GuidanceDelivered => Ok(Next::new(
            State {
                guidance: None,
                ..state.clone()
            },
            "the human's guidance was shown to the agent".into(),
        )),
        Event::ReviewStarted { max_rounds } => review_started(state, plan, max_rounds),
        Event::ReviewCompleted { record, human } => review_completed(state, plan, record, human),
        Event::ReviewFailed { error } => review_failed(state, error),
        Event::Approved => approved(state),
        Event::TreeApproved { tree, tests, flaky } => tree_approved(state, &tree, &tests, flaky),
        Event::Rejected { comment, by } => rejected(state, plan, comment, by),
        Event::Squashed { commit, .. } => squashed(state, commit),
        Event::FinalCheckRefused { reason, .. } => final_check_refused(state, reason),
        Event::MasterPlanUpdated { commit } => master_plan_updated(state, commit),
        Event::MergeStarted => merge_started(state),
        Event::Merged { branch, main } => merged(state, &branch, main),
        Event::MergeBlocked { reason } => merge_blocked(state, reason),
        Event::MergeConflicted { message } => merge_conflicted(state, message),
        Event::NoPrLeft {
            master_plan,
            summary,
        } => no_pr_left(state, master_plan, &summary),
        Event::Stuck { report, turns } => stuck(state, report, turns),
    }
    .map_err(|reason| reason.rejection(from, name))?;
    let mut next = next;
    // Idle holds until anything else happens: a plan, an escalation, a human's answer.
    if name != "no-pr-left" {
        next.state.idle = None;
    }
    Ok(Transition {
        event: name,
        input,
        from,
        state: next.state,
        plan: next.plan,
        step: next.step,
        summary: next.summary,
        effects: next.effects,
    })
}

fn plan_submitted(
    state: &State,
    mut plan: Plan,
    branch: String,
    summary: &str,
) -> Result<Next, Refusal> {
    if !before_branch(state) {
        return Err(Refusal::Said(format!(
            "a plan is only accepted in INITIALIZING, not in {}",
            state.status()
        )));
    }
    if !super::branch_name::could_be_made(&branch)
        || state.main_branch.as_deref() == Some(branch.as_str())
    {
        return Err(Refusal::Said(format!(
            "the PR branch {branch:?} is no name a PR title makes"
        )));
    }
    // What the agent claims done is no record (docs/integrity.md): every step starts TODO.
    plan.reset_progress();
    let body = format!(
        "plan \"{}\" accepted; branch {branch}\n\n{summary}",
        plan.pr_title
    );
    let phase = Phase::CreatingBranch {
        branch,
        blocked: None,
    };
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Replace(plan))
        .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn no_pr_left(state: &State, master_plan: Option<String>, summary: &str) -> Result<Next, Refusal> {
    if state.status() != Status::Initializing {
        return Err(Refusal::WrongState);
    }
    // Idle holds while main's master plan is this blob, compared by id.
    if let Some(blob) = &master_plan {
        object_id("master plan blob", blob)?;
    }
    let judged = master_plan
        .as_deref()
        .map_or("no master plan".to_string(), |b| {
            format!("master plan {}", crate::short_id(b))
        });
    Ok(Next::new(
        State {
            idle: Some(Idle { master_plan }),
            ..state.clone()
        },
        format!("nothing left to do ({judged})\n\n{summary}"),
    )
    .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn stale_plan_dropped(state: &State, title: Option<String>) -> Result<Next, Refusal> {
    if !before_branch(state) {
        return Err(Refusal::WrongState);
    }
    let body = match title {
        Some(title) => format!("dropped the stale plan \"{title}\": no step left to do"),
        None => "dropped an empty plan".to_string(),
    };
    Ok(Next::new(with_phase(state, Phase::Initializing), body).plan(PlanChange::Drop))
}

fn branch_ready(state: &State, base: Option<String>, pin: Option<Pin>) -> Result<Next, Refusal> {
    let Phase::CreatingBranch { branch, .. } = &state.phase else {
        return Err(Refusal::WrongState);
    };
    if let Some(base) = &base {
        object_id("PR branch's base", base)?;
    }
    if let Some(pin) = &pin {
        pin_ids(pin)?;
    }
    // The first pin is where this workflow starts to account for main.
    let main_tip = state
        .main_tip
        .clone()
        .or_else(|| pin.as_ref().map(|p| p.commit.clone()));
    let phase = Phase::Pr {
        pr: Pr {
            pin,
            ..Pr::new(branch.clone(), base)
        },
        stage: PrStage::ExecutingTdd { pending: None },
    };
    Ok(Next::new(
        State {
            main_tip,
            ..with_phase(state, phase)
        },
        format!("on branch {branch}"),
    ))
}

/// The pin's main commit and config blob are full object ids: the gates are read at the
/// commit, and the protected paths diffed against it, by every clone that verifies the PR.
fn pin_ids(pin: &Pin) -> Result<(), Refusal> {
    object_id("pinned main commit", &pin.commit)?;
    match &pin.config {
        Some(config) => object_id("pinned configuration blob", config),
        None => Ok(()),
    }
}

fn repinned(state: &State, pin: Pin) -> Result<Next, Refusal> {
    pin_ids(&pin)?;
    let mut next = state.clone();
    let short = crate::short_id(&pin.commit);
    // A human's repin accounts for main as it is now: what moved it since is theirs.
    next.main_tip = Some(pin.commit.clone());
    let body = match next.pr_mut() {
        Some(pr) => {
            pr.pin = Some(pin.clone());
            // A pass under the old gates proves nothing under the new ones.
            pr.preflight_cache = None;
            format!("a human repinned the PR's gates to main at {short}")
        }
        None => format!("a human accounted for main as it is at {short}"),
    };
    Ok(Next::new(next, body))
}

fn branch_blocked(state: &State, reason: String) -> Result<Next, Refusal> {
    let Phase::CreatingBranch { branch, .. } = &state.phase else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::CreatingBranch {
        branch: branch.clone(),
        blocked: Some(reason.clone()),
    };
    Ok(Next::new(with_phase(state, phase), reason))
}

/// A scope reduction of the step that keeps failing: the plan's current step, and its task
/// by name, as `request-scope-reduction` records them. Held here too because an audit
/// replays the transition, not the command: a chain written by hand could otherwise name an
/// earlier step, and the RED tests pinned from that task on would be dropped from the PR's
/// record (src/engine/pr_record.rs) while the re-plan keeps their tasks DONE, leaving
/// `attest` none of them to run again.
fn scope_reduced(
    state: &State,
    plan: Option<&Plan>,
    step: StepId,
    original_task: String,
    untracked: Vec<String>,
) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::Debugging { attempts, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let plan = plan.ok_or(Refusal::NoPlan)?;
    let current = plan.current_step();
    if current != Some(step) {
        return Err(Refusal::Said(format!(
            "a scope reduction of step {step} is no scope reduction to record: {}",
            match current {
                Some(current) => format!("the current step is {current}"),
                None => "every step of the plan is DONE".to_string(),
            }
        )));
    }
    let task = plan.task(step).map(|t| t.name.as_str()).unwrap_or_default();
    if task != original_task {
        return Err(Refusal::Said(format!(
            "the scope reduction names task {original_task:?}, but step {step} is of task {task:?}"
        )));
    }
    let body = format!(
        "scope reduction after {} failed attempts: the working tree was reset to HEAD; task \"{original_task}\" \
         is to be re-planned",
        attempts.count
    );
    // The task it was for is re-planned; its replacements have RED steps of their own.
    let pr = Pr {
        red_test: None,
        ..pr.clone()
    };
    let phase = Phase::Pr {
        pr,
        stage: PrStage::Replanning {
            attempts: attempts.count,
            context: ReplanContext {
                original_task,
                step,
                error: attempts.error.clone(),
                untracked,
            },
        },
    };
    // The re-plan starts from the stored plan, so it must read as it stands now.
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Materialize)
        .step(step))
}

/// The re-plan `plan` of the plan `old`, held to the re-plan rules here as well as by the
/// command that reads it: an audit replays this function on a recorded event, and a chain
/// written by hand could otherwise record any plan as a re-plan (every task DONE, another
/// PR's title).
fn replanned(
    state: &State,
    old: Option<&Plan>,
    plan: Plan,
    new_tasks: usize,
    summary: &str,
) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::Replanning { context, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let old = old.ok_or(Refusal::NoPlan)?;
    // The task the scope reduction named, as the plan it replaces holds it: a recorded
    // context is the chain's word, and the rules below are counted from it.
    match old.tasks.get(context.step.task) {
        Some(task) if task.name == context.original_task && task.status != TaskStatus::Done => {}
        _ => {
            return Err(Refusal::Said(format!(
                "the re-plan replaces task {} (\"{}\"), which the plan it replaces does not hold \
                 undone under that name",
                context.step.task + 1,
                context.original_task
            )));
        }
    }
    if let Err(problems) = super::replan::check_replan(old, context, &plan) {
        let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(Refusal::Said(format!(
            "the re-plan breaks the re-plan rules: {}",
            problems.join("; ")
        )));
    }
    if old.tasks.len().checked_add(new_tasks) != Some(plan.tasks.len() + 1) {
        return Err(Refusal::Said(format!(
            "the re-plan puts {} task(s) in the replaced one's place, not {new_tasks}",
            (plan.tasks.len() + 1).saturating_sub(old.tasks.len())
        )));
    }
    let body = format!(
        "re-plan accepted: \"{}\" is replaced by {new_tasks} tasks\n\n{summary}",
        context.original_task
    );
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::ExecutingTdd { pending: None },
    };
    Ok(Next::new(with_phase(state, phase), body)
        .plan(PlanChange::Replace(plan))
        .effects(vec![Effect::Reply(Verdict::Success)]))
}

fn escalated(state: &State, report: String) -> Result<Next, Refusal> {
    let from = state.status();
    if !ESCALATABLE.contains(&from) {
        return Err(Refusal::WrongState);
    }
    let message = match (&state.phase, state.pending()) {
        (_, Some(Pending::Escalation { reason })) => {
            format!("the agent escalated for external help: {reason}")
        }
        (
            Phase::Pr {
                stage: PrStage::Debugging { .. } | PrStage::Replanning { .. },
                ..
            },
            _,
        ) => format!(
            "the agent escalated for external help after {} failed attempts",
            state.attempts()
        ),
        _ => format!("the agent escalated for external help in state {from}"),
    };
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::Escalated,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message).effects(vec![Effect::SaveEscalation(report)]))
}

/// `submit-work --contradiction`: halted for a human, the account kept as an escalation's
/// report is. Not locked behind failed attempts as `escalate` is: an agent that sees the
/// contradiction at the first step has a legal move then, not only a test to bend.
fn contradicted(state: &State, account: String) -> Result<Next, Refusal> {
    let from = state.status();
    if !CONTRADICTABLE.contains(&from) {
        return Err(Refusal::WrongState);
    }
    let message = format!(
        "the agent reports that the task contradicts its test (in state {from}); its account is below"
    );
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::Contradiction,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message).effects(vec![Effect::SaveEscalation(account)]))
}

/// `run` found the agent stuck: halted for a human, the report kept as an escalation's is.
fn stuck(state: &State, report: String, turns: u32) -> Result<Next, Refusal> {
    if state.status() == Status::Halted {
        return Err(Refusal::WrongState);
    }
    let message = format!(
        "`git orchestrate run` stopped the agent as stuck: {turns} turns in a row without progress in state {}",
        state.status()
    );
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::Stuck,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message).effects(vec![Effect::SaveEscalation(report)]))
}

fn resumed(state: &State, guidance: Option<String>) -> Result<Next, Refusal> {
    let Phase::Halted { halt, resume } = &state.phase else {
        return Err(Refusal::Said(format!(
            "`resume` does not apply in state {}",
            state.status()
        )));
    };
    // A human answered: the attempts that unlocked the escape tools start again.
    let phase = match (**resume).clone() {
        Phase::Pr {
            pr,
            stage: PrStage::Debugging { attempts, pending },
        } => Phase::Pr {
            pr,
            stage: PrStage::Debugging {
                attempts: Attempts {
                    count: 0,
                    identical_failures: 0,
                    ..attempts
                },
                pending,
            },
        },
        Phase::Pr {
            pr,
            stage: PrStage::Replanning { context, .. },
        } => Phase::Pr {
            pr,
            stage: PrStage::Replanning {
                attempts: 0,
                context,
            },
        },
        // The human answered an exhausted review: the rounds start again (their numbers go
        // on, so feedback tasks keep distinct names).
        Phase::Pr {
            mut pr,
            stage: PrStage::CodeReview { review: stage },
        } => {
            pr.review.blocked_rounds = 0;
            let error = match stage {
                ReviewStage::Due { error } => error,
                ReviewStage::AwaitingApproval { .. } | ReviewStage::MustEscalate { .. } => None,
            };
            Phase::Pr {
                pr,
                stage: PrStage::CodeReview {
                    review: ReviewStage::Due { error },
                },
            }
        }
        other @ (Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::ExecutingTdd { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. }
                | PrStage::MergingBranch { .. },
            ..
        }
        | Phase::Halted { .. }) => other,
    };
    let body = match &guidance {
        Some(g) => format!(
            "resumed after: {}\n\nGuidance from a human:\n{g}",
            halt.message
        ),
        None => format!("resumed after: {}", halt.message),
    };
    let next = State {
        phase,
        guidance,
        ..state.clone()
    };
    Ok(Next::new(next, body).effects(vec![Effect::DropEscalation]))
}

/// The review starts where `get-task` starts it: every step of the plan DONE, nothing owed.
/// Held here too because an audit replays the transition, not the command: a chain written
/// by hand could otherwise start the review, and so reach the squash, with steps never run
/// (a RED step among them, which would then pin no test for `attest` to run again).
fn review_started(state: &State, plan: Option<&Plan>, max_rounds: u32) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::ExecutingTdd { pending },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    if let Some(owed) = pending {
        let step = match owed {
            TddPending::Analysis(analysis) => analysis.step,
            TddPending::Checkpoint { step, .. } => *step,
        };
        return Err(Refusal::Said(format!(
            "the review starts when nothing is owed; step {step} waits for its {}",
            match owed {
                TddPending::Analysis(_) => "analysis",
                TddPending::Checkpoint { .. } => "checkpoint",
            }
        )));
    }
    if let Some(step) = plan.ok_or(Refusal::NoPlan)?.current_step() {
        return Err(Refusal::Said(format!(
            "the review starts when every step is DONE; step {step} is not"
        )));
    }
    let blocked = pr.review.blocked_rounds;
    let (stage, body) = if blocked >= max_rounds {
        let reason = format!(
            "{blocked} review round{} ended with blocking findings, the most review.max_rounds allows",
            if blocked == 1 { "" } else { "s" }
        );
        let body = format!("every step is DONE, but {reason}: the agent must escalate");
        (ReviewStage::MustEscalate { reason }, body)
    } else {
        let body = format!(
            "every step is DONE: code review round {}",
            pr.review.round.saturating_add(1)
        );
        (ReviewStage::Due { error: None }, body)
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::CodeReview { review: stage },
    };
    // The PR is read as a whole from here on: store the plan as it stands.
    Ok(Next::new(with_phase(state, phase), body).plan(PlanChange::Materialize))
}

fn review_completed(
    state: &State,
    plan: Option<&Plan>,
    record: ReviewRecord,
    human: bool,
) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::CodeReview { .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let blocking = record.blocking();
    let mut pr = pr.clone();
    pr.review.round = record.round;
    pr.review.last = Some(ReviewSummary {
        round: record.round,
        ran: record.ran,
        findings: record.findings.len(),
        blocking: blocking.len(),
    });
    let effects = vec![Effect::SaveReview(record.clone())];
    if !blocking.is_empty() {
        let mut new_plan = plan.ok_or(Refusal::NoPlan)?.clone();
        new_plan.tasks.push(feedback_task(record.round, &blocking));
        pr.review.blocked_rounds = pr.review.blocked_rounds.saturating_add(1);
        let body = format!(
            "review round {}: {} blocking finding{} sent back as a new task\n\n{}",
            record.round,
            blocking.len(),
            if blocking.len() == 1 { "" } else { "s" },
            blocking
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        let phase = Phase::Pr {
            pr,
            stage: PrStage::ExecutingTdd { pending: None },
        };
        return Ok(Next::new(with_phase(state, phase), body)
            .plan(PlanChange::Replace(new_plan))
            .effects(effects));
    }
    let what = if record.ran {
        format!(
            "review round {}: no blocking findings ({} noted)",
            record.round,
            record.findings.len()
        )
    } else {
        "no review command is configured: nothing was reviewed automatically".to_string()
    };
    let (phase, body) = if human {
        let stage = ReviewStage::AwaitingApproval {
            round: record.round,
        };
        let body = format!("{what}; waiting for a human's approval");
        (
            Phase::Pr {
                pr,
                stage: PrStage::CodeReview { review: stage },
            },
            body,
        )
    } else {
        (
            Phase::Pr {
                pr,
                stage: PrStage::AwaitingFinalization,
            },
            what,
        )
    };
    Ok(Next::new(with_phase(state, phase), body).effects(effects))
}

fn review_failed(state: &State, error: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::CodeReview {
            review: ReviewStage::Due { .. },
        },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::CodeReview {
            review: ReviewStage::Due {
                error: Some(error.clone()),
            },
        },
    };
    let body = format!("the review could not run: {error}");
    Ok(Next::new(with_phase(state, phase), body))
}

/// The PR of a review that waits for a human's approval.
fn awaiting_approval(state: &State) -> Result<&Pr, Rejection> {
    match &state.phase {
        Phase::Pr {
            pr,
            stage:
                PrStage::CodeReview {
                    review: ReviewStage::AwaitingApproval { .. },
                },
        } => Ok(pr),
        _ => {
            let status = state.status();
            Err(Rejection::wrong_state(
                status,
                format!("nothing waits for a human's approval in state {status}"),
                "`git orchestrate status` shows where the workflow stands.",
            ))
        }
    }
}

/// `approve` and `reject` are for a review that waits for a human.
pub fn check_approval(state: &State) -> Result<(), Rejection> {
    awaiting_approval(state).map(|_| ())
}

fn approved(state: &State) -> Result<Next, Refusal> {
    let pr = awaiting_approval(state).map_err(Refusal::Rejected)?;
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::AwaitingFinalization,
    };
    Ok(Next::new(
        with_phase(state, phase),
        "a human approved the PR".into(),
    ))
}

/// A human's approval of a tree by name: recorded, and nothing else moves, in any state
/// (a flaky tree's answer may come after its merge).
fn tree_approved(
    state: &State,
    tree: &str,
    tests: &[String],
    flaky: bool,
) -> Result<Next, Refusal> {
    // The approval holds for this tree alone, compared by id wherever it is read.
    object_id("approved tree", tree)?;
    let mut what = Vec::new();
    if !tests.is_empty() {
        what.push(format!("the changes to {}", tests.join(", ")));
    }
    if flaky {
        what.push("a pass after an earlier failure".to_string());
    }
    Ok(Next::new(
        state.clone(),
        format!(
            "a human approved, for the tree {} only, {}",
            crate::short_id(tree),
            what.join(" and ")
        ),
    ))
}

fn rejected(
    state: &State,
    plan: Option<&Plan>,
    comment: String,
    by: Option<Human>,
) -> Result<Next, Refusal> {
    let pr = awaiting_approval(state).map_err(Refusal::Rejected)?;
    let mut new_plan = plan.ok_or(Refusal::NoPlan)?.clone();
    let finding = Finding {
        priority: Priority::P1,
        file: None,
        line: None,
        issue: comment.clone(),
        suggestion: None,
        dimensions: Vec::new(),
        human: true,
        answered: by,
    };
    new_plan
        .tasks
        .push(feedback_task(pr.review.round, &[finding]));
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::ExecutingTdd { pending: None },
    };
    let body = format!("a human rejected the PR:\n{comment}");
    Ok(Next::new(with_phase(state, phase), body).plan(PlanChange::Replace(new_plan)))
}

fn squashed(state: &State, commit: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::AwaitingFinalization,
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    object_id("squashed commit", &commit)?;
    let body = format!("squashed into {commit}");
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::FinalizeComplete {
            final_commit: commit,
        },
    };
    Ok(Next::new(with_phase(state, phase), body))
}

fn final_check_refused(state: &State, reason: String) -> Result<Next, Refusal> {
    if state.status() != Status::AwaitingFinalization {
        return Err(Refusal::WrongState);
    }
    Ok(Next::new(state.clone(), format!("FAILURE: {reason}"))
        .effects(vec![Effect::Reply(Verdict::Failure)]))
}

fn master_plan_updated(state: &State, commit: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::FinalizeComplete { final_commit },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    object_id("master-plan commit", &commit)?;
    let body = format!("the master plan marks the PR done, in {commit}");
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::PlanUpdated {
            finalized: Finalized {
                final_commit: final_commit.clone(),
                plan_commit: commit,
            },
        },
    };
    Ok(Next::new(with_phase(state, phase), body))
}

fn merge_started(state: &State) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::PlanUpdated { finalized },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::MergingBranch {
            finalized: finalized.clone(),
            blocked: None,
        },
    };
    Ok(Next::new(with_phase(state, phase), "merging".into()))
}

fn merged(state: &State, branch: &str, main: Option<String>) -> Result<Next, Refusal> {
    if let Some(main) = &main {
        object_id("main commit after the merge", main)?;
    }
    let after_conflict = match &state.phase {
        Phase::Pr {
            stage: PrStage::MergingBranch { .. },
            ..
        } => false,
        Phase::Halted { halt, .. } => match halt.reason {
            HaltReason::MergeConflict => true,
            HaltReason::Escalated | HaltReason::Stuck | HaltReason::Contradiction => {
                return Err(Refusal::WrongState);
            }
        },
        Phase::Initializing
        | Phase::CreatingBranch { .. }
        | Phase::Pr {
            stage:
                PrStage::ExecutingTdd { .. }
                | PrStage::Debugging { .. }
                | PrStage::Replanning { .. }
                | PrStage::CodeReview { .. }
                | PrStage::AwaitingFinalization
                | PrStage::FinalizeComplete { .. }
                | PrStage::PlanUpdated { .. },
            ..
        } => return Err(Refusal::WrongState),
    };
    let body = if after_conflict {
        format!("{branch} was merged by a human after a conflict; the branch is cleaned up")
    } else {
        format!("merged {branch} and deleted it")
    };
    let next = State {
        extra: state.extra.clone(),
        main_tip: main.or_else(|| state.main_tip.clone()),
        ..State::new(state.main_branch.clone())
    };
    Ok(Next::new(next, body)
        .plan(PlanChange::Drop)
        .effects(vec![Effect::DropPrRecords]))
}

fn merge_blocked(state: &State, reason: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        pr,
        stage: PrStage::MergingBranch { finalized, .. },
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Pr {
        pr: pr.clone(),
        stage: PrStage::MergingBranch {
            finalized: finalized.clone(),
            blocked: Some(reason.clone()),
        },
    };
    Ok(Next::new(with_phase(state, phase), reason))
}

fn merge_conflicted(state: &State, message: String) -> Result<Next, Refusal> {
    let Phase::Pr {
        stage: PrStage::MergingBranch { .. },
        ..
    } = &state.phase
    else {
        return Err(Refusal::WrongState);
    };
    let phase = Phase::Halted {
        halt: Halt {
            reason: HaltReason::MergeConflict,
            message: message.clone(),
        },
        resume: Box::new(state.phase.clone()),
    };
    Ok(Next::new(with_phase(state, phase), message))
}

#[cfg(test)]
mod tests;
