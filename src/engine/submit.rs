//! `submit-work`: the verification gateway. Accepts a plan, runs the agent's test command and
//! then preflight, or takes the agent's analysis, and stores the outcome.

use serde::Serialize;

use super::branches::{check_branch_free, free_branch_name};
use super::finalize::{self, FinalizeCheck};
use super::proof::{Given, Outcome, RedRun, Rerun, execute_with};
use super::verify::TreeVerification;
use super::{EngineError, Facts, Session, notes};
use crate::agent::guard;
use crate::config::Config;
use crate::exec::{self, RunOutput};
use crate::gates::PreflightRun;
use crate::store::Snapshot;
use crate::workflow::briefing::{self, Notice};
use crate::workflow::master_plan;
use crate::workflow::plan::{Plan, parse_first_plan, parse_submitted_plan};
use crate::workflow::proof::adequacy::At;
use crate::workflow::proof::step_record::StepProof;
use crate::workflow::proof::{self as proof_plan, StepAsk};
use crate::workflow::replan::check_replan;
use crate::workflow::state::{ExitRecord, PreflightRecord};
use crate::workflow::{
    self, Accepted, Effect, Event, Expectation, OutputSource, Pending, PreflightOutcome, RedRerun,
    State, Status, StepId, StepType, SubmitRequest, TestRun, Verdict,
};

/// What the agent submits: the plan's bytes and the test command ride in the core's request
/// (and come back in its [`Accepted`]). Plan bytes are read once, before any attempt, so a
/// retry after a lost race never reads stdin twice.
pub type SubmitKind = SubmitRequest<Vec<u8>, String>;

/// The agent's test command as it ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TestReport {
    pub command: String,
    pub exit: ExitRecord,
    pub ms: u64,
}

/// What `submit-work` answers (docs/agent-guide.md, "`submit-work --json`").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SubmitReport {
    #[serde(rename = "status")]
    pub verdict: Verdict,
    /// The one-line account stored in the transition commit, or why a finalization check
    /// refused.
    #[serde(rename = "summary")]
    pub headline: String,
    /// The output the verdict rests on: the test's, or the failing gate's; verbatim bytes,
    /// as text where they are not UTF-8.
    #[serde(serialize_with = "lossy")]
    pub output: Vec<u8>,
    pub state: Status,
    pub step: Option<StepId>,
    pub debug_attempt_counter: u32,
    pub pending: Option<&'static str>,
    pub test: Option<TestReport>,
    pub preflight: Option<PreflightRecord>,
    /// What the agent should know besides the verdict.
    pub notes: Vec<String>,
    /// What to do next.
    pub next: &'static str,
    /// The output's last `test.output_tail` lines, as briefings show them.
    #[serde(skip)]
    pub output_tail: String,
}

fn lossy<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

impl SubmitReport {
    fn new(state: &State, verdict: Verdict, headline: String) -> SubmitReport {
        SubmitReport {
            verdict,
            headline,
            output: Vec::new(),
            state: state.status(),
            step: None,
            debug_attempt_counter: state.attempts(),
            pending: state.pending().as_ref().map(Pending::kind),
            test: None,
            preflight: None,
            notes: Vec::new(),
            next: briefing::next_action(state, verdict),
            output_tail: String::new(),
        }
    }
}

pub fn submit(
    session: &Session,
    summary: &str,
    kind: &SubmitKind,
) -> Result<SubmitReport, EngineError> {
    use crate::workflow::fields::Field;
    if !summary.trim().is_empty() {
        super::check_field(Field::Summary, summary)?;
    }
    if let SubmitRequest::Test { command, .. } = kind
        && !command.trim().is_empty()
    {
        super::check_field(Field::TestCommand, command)?;
    }
    if let SubmitRequest::Contradiction(account) = kind {
        if account.trim().is_empty() {
            return Err(EngineError::BadInput {
                message: "the contradiction's account is empty; nothing was written".into(),
                hint: "Say what the task asks, what the test holds, and why both cannot be true."
                    .into(),
            });
        }
        super::check_field(Field::Report, account)?;
    }
    // The test and the gates run once: a lost race re-reads the state and re-decides, but
    // never runs the agent's command again (it may be slow, or not repeatable).
    let mut measured = None;
    session.with_retries(|| attempt(session, summary, kind, &mut measured))
}

/// The test command's run and what preflight made of it, for the step it was run for.
#[derive(Clone)]
struct Measured {
    step: StepId,
    expectation: Expectation,
    run: RunOutput,
    /// What a failing RED run pins as its test, or why it is no test that failed.
    red: Option<RedRun>,
    /// The task's RED test run again.
    red_rerun: Option<Rerun>,
    /// The gates' run (none when the test changed the tree: they were not asked) and what
    /// the workflow makes of it.
    preflight: Option<(Option<PreflightRun>, PreflightOutcome)>,
    /// The step's plan and what each obligation came to: recorded in the transition.
    proof: StepProof,
    /// The tree a run meant to pass ran on, when it passed.
    tested_tree: Option<String>,
}

fn attempt(
    session: &Session,
    summary: &str,
    kind: &SubmitKind,
    measured: &mut Option<Measured>,
) -> Result<SubmitReport, EngineError> {
    let snap = read_for(session, kind)?;
    // The facts every step below asks about, gathered once. A broken config stops every
    // submit, not only those that run commands.
    let facts = session.facts(Some(&snap.state))?;
    let config = facts.config();
    let accepted = workflow::check_submit(&snap.state, snap.summary.as_ref(), kind.as_ref())
        .map_err(EngineError::Rejected)?;
    let mut notes = Vec::new();
    let status = snap.state.status();
    let (event, ran) = match accepted {
        Accepted::Plan(bytes) => {
            let (plan, claimed_done) = parse_first(bytes, config, status)?;
            master_plan_exists(session, &facts, status)?;
            if claimed_done > 0 {
                notes.push(Notice::PlanStatusesIgnored { claimed_done }.to_string());
            }
            let branch = free_branch_name(session, &plan.pr_title)?;
            check_branch_free(session, &branch, status)?;
            let summary = summary.to_string();
            let event = Event::PlanSubmitted {
                plan,
                branch,
                summary,
            };
            (event, None)
        }
        Accepted::Replan(bytes) => (replanned(session, &snap, config, bytes, summary)?, None),
        Accepted::Test {
            command,
            step,
            kind: step_kind,
            description,
            expectation,
        } => {
            let asked = Asked {
                command,
                step,
                kind: step_kind,
                description,
                expectation,
            };
            let (event, ran) = test_ran(session, &snap.state, &facts, asked, summary, measured)?;
            (event, Some(ran))
        }
        Accepted::Squash { make } => match squash_confirmed(session, &snap, &facts, make)? {
            Ok(event) => (event, None),
            Err(refusal) => return Ok(refusal),
        },
        Accepted::MasterPlanUpdate { make } => {
            match master_plan_confirmed(session, &snap, config, make)? {
                Ok(event) => (event, None),
                Err(refusal) => return Ok(refusal),
            }
        }
        Accepted::NoPrLeft => {
            let master_plan = check_no_pr_left(session, &snap.state, &facts)?;
            let summary = summary.to_string();
            (
                Event::NoPrLeft {
                    master_plan,
                    summary,
                },
                None,
            )
        }
        Accepted::Contradiction(account) => (
            Event::Contradicted {
                account: account.clone(),
            },
            None,
        ),
        Accepted::Analysis(decision) => {
            refuse_protected(session, &snap.state, config)?;
            let summary = summary.to_string();
            (Event::AnalysisDecided { decision, summary }, None)
        }
    };
    write_and_report(session, &snap, &facts, event, ran, notes)
}

/// The workflow the submit acts on. Only a plan, or saying there is none to make, starts a
/// workflow; a first plan that is not accepted leaves nothing behind, not even a new one.
fn read_for(session: &Session, kind: &SubmitKind) -> Result<Snapshot, EngineError> {
    match kind {
        SubmitKind::NoPrLeft => session.read_or_create(),
        SubmitKind::Plan(bytes) => {
            // A re-run after a kill that left this plan's acceptance on the remote only.
            super::claims::adopt_pushed_plan(session)?;
            match session.store.read()? {
                Some(snap) => Ok(snap),
                None => {
                    let facts = session.facts(None)?;
                    let (plan, _) = parse_first(bytes, facts.config(), Status::Initializing)?;
                    master_plan_exists(session, &facts, Status::Initializing)?;
                    let branch = free_branch_name(session, &plan.pr_title)?;
                    check_branch_free(session, &branch, Status::Initializing)?;
                    session.read_or_create()
                }
            }
        }
        _ => session.read_or_refuse("submit-work", |s| {
            workflow::check_submit(s, None, kind.as_ref()).err()
        }),
    }
}

/// A plan in REPLANNING, held to the re-plan rules.
fn replanned(
    session: &Session,
    snap: &Snapshot,
    config: &Config,
    bytes: &[u8],
    summary: &str,
) -> Result<Event, EngineError> {
    let status = snap.state.status();
    let plan = parse(bytes, config, status)?;
    let old = session.store.plan(snap)?;
    if let (Some(old), Some(context)) = (&old, &snap.state.replan_context()) {
        check_replan(old, context, &plan).map_err(|problems| EngineError::InvalidPlan {
            state: status,
            problems,
        })?;
    }
    // The rules guarantee the old plan's other tasks are all still there.
    let new_tasks = plan.tasks.len() + 1 - old.map_or(1, |o| o.tasks.len());
    Ok(Event::Replanned {
        plan,
        new_tasks,
        summary: summary.to_string(),
    })
}

/// The step a test was accepted for, with the agent's command.
struct Asked<'a> {
    command: &'a str,
    step: StepId,
    kind: StepType,
    description: String,
    expectation: Expectation,
}

/// What ran for a test submit, kept for the output the transition saves and the report.
struct Ran {
    command: String,
    run: RunOutput,
    preflight: Option<PreflightRun>,
    /// The task's RED test's output, when it ran again.
    red_output: Option<Vec<u8>>,
}

/// Runs the test (once: a retry after a lost race takes the first run, for the same step
/// only) and makes the event of its result.
fn test_ran(
    session: &Session,
    state: &State,
    facts: &Facts,
    asked: Asked<'_>,
    summary: &str,
    measured: &mut Option<Measured>,
) -> Result<(Event, Ran), EngineError> {
    let Asked {
        command,
        step,
        kind,
        description,
        expectation,
    } = asked;
    let config = facts.config();
    let m = match measured.as_ref() {
        // The run is recorded with the plan it ran, which must be the one the state it is
        // recorded after gives (`audit` emits it again from there): a lost race to a move
        // that changes it (a checkpoint recorded meanwhile moves where the task began) is
        // a workflow moved on.
        Some(m)
            if m.step == step
                && m.expectation == expectation
                && m.proof.plan
                    == step_plan(state, facts, (step, kind), (command, expectation)) =>
        {
            m.clone()
        }
        Some(m) => return Err(moved_on(state, m.step)),
        None => {
            if expectation == Expectation::Fail {
                refuse_protected(session, state, config)?;
            }
            let m = measure(session, state, facts, command, step, kind, expectation)?;
            *measured = Some(m.clone());
            m
        }
    };
    let preflight = m.preflight.as_ref().map(|(_, outcome)| outcome.clone());
    let red_rerun = m.red_rerun.as_ref().map(|r| RedRerun {
        command: r.command.clone(),
        exit: r.output.exit,
        output_tail: exec::tail_lines(&r.output.output, config.test.output_tail),
        restored: r.restored.clone(),
        taken_out: r.taken_out.clone(),
        hooks: r.hooks.clone(),
        not_run: r.not_run.clone(),
    });
    let red = m.red.unwrap_or_default();
    let event = Event::TestRan(Box::new(TestRun {
        step,
        kind,
        description,
        command: command.to_string(),
        expectation,
        exit: m.run.exit,
        output_tail: exec::tail_lines(&m.run.output, config.test.output_tail),
        preflight,
        red_rerun,
        summary: summary.to_string(),
        red: red.outcome,
        syntax_error: red.syntax_error,
        proof: Some(m.proof),
        tested_tree: m.tested_tree,
    }));
    let ran = Ran {
        command: command.to_string(),
        run: m.run,
        preflight: m.preflight.and_then(|(pre, _)| pre),
        red_output: m.red_rerun.map(|r| r.output.output),
    };
    Ok((event, ran))
}

/// The test ran for a step the workflow has since left: another process moved it on.
fn moved_on(state: &State, ran_for: StepId) -> EngineError {
    super::wrong_state(
        state.status(),
        format!(
            "the workflow moved on while the test ran (another process changed it: the run was \
             for step {ran_for}, the workflow is now in state {}); nothing was recorded",
            state.status()
        ),
        "Run `git orchestrate get-task` for the current instruction.",
    )
}

/// AWAITING_FINALIZATION confirmed: the squash (made first with `--squash`) is judged. A
/// refusal is the report: what `--squash` made is taken back, so nothing is left half-done.
fn squash_confirmed(
    session: &Session,
    snap: &Snapshot,
    facts: &Facts,
    make: bool,
) -> Result<Result<Event, SubmitReport>, EngineError> {
    // `--squash` makes the commit the manual route makes; the same check judges it.
    let made = if make {
        finalize::make_squash(session, snap)?
    } else {
        None
    };
    // An error after --squash made its commit (a check that cannot run, a note that cannot
    // be written) takes the commit back too.
    let judged = judge_squash(session, snap, facts.config()).inspect_err(|_| {
        if let Some(old) = &made {
            let _ = session.git.reset_soft(old);
        }
    })?;
    match judged {
        SquashJudged::Holds(event) => Ok(Ok(event)),
        SquashJudged::FinalCheckRefused(state, reason) => {
            let reason = match &made {
                Some(old) => {
                    session.git.reset_soft(old)?;
                    format!(
                        "{reason}\nThe squash commit --squash made is undone: the branch is back at {}",
                        crate::short_id(old)
                    )
                }
                None => reason,
            };
            Ok(Err(refused(*state, reason)))
        }
        SquashJudged::Refused(reason) => {
            let reason = match made {
                // What --squash made is taken back: the branch is as it was.
                Some(old) => {
                    session.git.reset_soft(&old)?;
                    format!(
                        "{reason}. The squash commit --squash made is undone: the branch is back at {}",
                        crate::short_id(&old)
                    )
                }
                // A squash made by hand: how to take it back, where there is one.
                None if squashed_by_hand(session, &facts.main) => format!(
                    "{reason}. To undo the squash: `git reset --soft ORIG_HEAD` right after it, or \
                     `git reset --soft <the branch's old tip>` (`git reflog` lists it)"
                ),
                None => reason,
            };
            Ok(Err(refused(snap.state.clone(), reason)))
        }
    }
}

/// FINALIZE_COMPLETE confirmed: the master-plan commit (made first with `--mark-done`) is
/// judged; a refusal takes back what `--mark-done` made.
fn master_plan_confirmed(
    session: &Session,
    snap: &Snapshot,
    config: &Config,
    make: bool,
) -> Result<Result<Event, SubmitReport>, EngineError> {
    let made = if make {
        finalize::make_mark_done(session, snap, &config.master_plan)?
    } else {
        None
    };
    // Both steps are tried, whatever the first says: the branch back at the squash, and the
    // master plan as it was there.
    let undo = |squashed: &str| -> Result<(), EngineError> {
        let reset = session.git.reset_soft(squashed);
        let restored = session.git.restore_path(squashed, &config.master_plan);
        reset?;
        restored?;
        Ok(())
    };
    let judged =
        finalize::verify_master_plan(session, snap, &config.master_plan).inspect_err(|_| {
            if let Some(squashed) = &made {
                let _ = undo(squashed);
            }
        })?;
    let reason = match judged {
        FinalizeCheck::Holds { commit } => return Ok(Ok(Event::MasterPlanUpdated { commit })),
        FinalizeCheck::Refused { reason } => reason,
    };
    let reason = match made {
        Some(squashed) => {
            undo(&squashed)?;
            format!(
                "{reason}. The commit --mark-done made is undone: the branch is back at {}",
                crate::short_id(&squashed)
            )
        }
        None if snap.state.final_commit().is_some_and(|squashed| {
            session
                .git
                .rev_parse("HEAD")
                .is_ok_and(|head| head != squashed)
        }) =>
        {
            format!(
                "{reason}. To undo the master-plan commit and edit it again: `git reset --soft HEAD~1`"
            )
        }
        None => reason.to_string(),
    };
    Ok(Err(refused(snap.state.clone(), reason)))
}

/// Writes the transition, with the output its effects save, and reports it.
fn write_and_report(
    session: &Session,
    snap: &Snapshot,
    facts: &Facts,
    event: Event,
    ran: Option<Ran>,
    notes: Vec<String>,
) -> Result<SubmitReport, EngineError> {
    let t = session.transition(snap, event)?;
    let output: Option<&[u8]> = t.effects.iter().find_map(|e| match (e, &ran) {
        (Effect::SaveOutput(OutputSource::Test), Some(ran)) => Some(ran.run.output.as_slice()),
        (Effect::SaveOutput(OutputSource::RedTest), Some(ran)) => ran.red_output.as_deref(),
        (Effect::SaveOutput(OutputSource::Gate(name)), Some(ran)) => ran
            .preflight
            .as_ref()?
            .gates
            .iter()
            .find(|g| &g.name == name)
            .map(|g| g.run.output.as_slice()),
        _ => None,
    });
    super::claims::commit_claiming(session, facts, snap, &t, output)?;

    let output = output.map(<[u8]>::to_vec).unwrap_or_default();
    let output_tail = exec::tail_lines(&output, facts.config().test.output_tail);
    let verdict = t.verdict().unwrap_or(Verdict::Success);
    let headline = t.summary.lines().next().unwrap_or_default().to_string();
    let test = ran.as_ref().map(|ran| TestReport {
        command: ran.command.clone(),
        exit: ran.run.exit,
        ms: u64::try_from(ran.run.elapsed.as_millis()).unwrap_or(u64::MAX),
    });
    let preflight = ran.and_then(|ran| ran.preflight.map(|p| p.record()));
    Ok(SubmitReport {
        notes,
        step: t.step,
        output,
        output_tail,
        test,
        preflight,
        ..SubmitReport::new(&t.state, verdict, headline)
    })
}

/// Runs the step's plan ([`proof_plan::step`]): the agent's test command, then what a failing
/// RED run pins, or, after a passing run that was meant to pass, the task's RED test again
/// and the preflight gates; and reads what each came to.
fn measure(
    session: &Session,
    state: &State,
    facts: &Facts,
    command: &str,
    step: StepId,
    kind: StepType,
    expectation: Expectation,
) -> Result<Measured, EngineError> {
    session.require_pr_branch(
        state,
        "submit-work",
        "; the test verifies the work on the PR branch",
    )?;
    super::hermetic::require(session)?;
    judge_test_command(session, facts, command)?;
    let config = facts.config();
    let plan = step_plan(state, facts, (step, kind), (command, expectation));
    let given = Given {
        state: Some(state),
        ..Given::default()
    };
    let (mut run, mut tested_tree) = (None, None);
    let (mut red, mut red_rerun, mut preflight) = (None, None, None);
    let outcomes = execute_with(session, config, &plan, given)?;
    let held: Vec<bool> = outcomes.iter().map(Outcome::held).collect();
    for outcome in outcomes {
        match outcome {
            Outcome::Step(step) => {
                if expectation == Expectation::Pass && step.test.output.exit.success() {
                    tested_tree = step.before;
                }
                run = Some(step.test.output);
            }
            Outcome::Pinned(pinned) => red = Some(pinned),
            Outcome::Rerun(rerun) => red_rerun = rerun.map(|r| *r),
            Outcome::WorkingTree(verification) => {
                let outcome = preflight_outcome(config, &verification);
                preflight = Some((verification.run, outcome));
            }
            _ => {
                return Err(EngineError::Internal(
                    "a step's plan came to what no step runs".into(),
                ));
            }
        }
    }
    let run = run.ok_or_else(|| EngineError::Internal("a step's plan ran no test".into()))?;
    Ok(Measured {
        step,
        expectation,
        run,
        red,
        red_rerun,
        preflight,
        proof: StepProof::new(plan, &held),
        tested_tree,
    })
}

/// The plan of a test run of `command` for `step` on `state` ([`StepAsk::on`]): what `audit`
/// emits again from the chain to hold the recorded one to.
fn step_plan(
    state: &State,
    facts: &Facts,
    step: (StepId, StepType),
    run: (&str, Expectation),
) -> proof_plan::ProofPlan {
    proof_plan::step(StepAsk::on(state, step, run, &facts.main))
}

/// What the workflow makes of the gates' `verification` after a passing test that was meant to
/// pass: a step records the tree they verified, and what stopped them from verifying it.
fn preflight_outcome(config: &Config, verification: &TreeVerification) -> PreflightOutcome {
    let failure = verification.failed.as_ref().map(|g| {
        (
            g.name.clone(),
            exec::tail_lines(&g.output, config.test.output_tail),
        )
    });
    let cache = verification.cache();
    PreflightOutcome {
        record: PreflightRecord {
            gates: verification.gates.clone(),
        },
        failure,
        key: cache.as_ref().map(|c| c.key.clone()),
        verified_tree: cache.map(|c| c.tree),
        changed: verification.changed_during.clone(),
        protected: verification.protected.clone(),
    }
}

/// The guard judges a test command before it runs (docs/integrity.md): a command that moves
/// main, writes the workflow's refs or the hooks, or answers for a human is no test.
fn judge_test_command(session: &Session, facts: &Facts, command: &str) -> Result<(), EngineError> {
    let mut ctx = super::guard_context::guard_context_for(session, facts, session.store.workdir())?;
    // Running a gate's own command is what a test command may well do.
    ctx.gate_commands.clear();
    match guard::check_shell(command, &ctx) {
        guard::Decision::Allow => Ok(()),
        guard::Decision::Deny(why) => Err(EngineError::BadInput {
            message: format!("the test command `{command}` is refused, and nothing ran: {why}"),
            hint: "A test command runs the tests and changes nothing else: not the main branch, the \
                   workflow's refs, the hooks or a human's answer. Submit one that only runs the test."
                .into(),
        }),
    }
}

/// `--no-pr-left` is a claim, and it is checked (docs/integrity.md, "Claims are checked"):
/// refused while main moved outside the workflow, or while the master plan on main has a PR
/// heading neither marked `[DONE]` nor claimed by another workflow's active PR. Returns the
/// master plan's blob, which the idle state holds against.
fn check_no_pr_left(
    session: &Session,
    state: &State,
    facts: &Facts,
) -> Result<Option<String>, EngineError> {
    let config = facts.config();
    let status = state.status();
    if let Some(drift) = super::main_line::drift(session, state)? {
        return Err(super::wrong_state(
            status,
            format!("submit-work --no-pr-left is refused: {}", drift.notice()),
            "A human looks at what moved main and runs `git orchestrate repin`; until then the master \
             plan on it is not settled.",
        ));
    }
    let main = &facts.main;
    let blob = session.master_plan_blob(main, &config.master_plan)?;
    let Some(id) = &blob else {
        return Ok(blob);
    };
    let text = match session.store.blob_within(id, crate::input::CAP)? {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(size) => {
            return Err(EngineError::BadInput {
                message: format!(
                    "the master plan {} on {main} is {size} bytes, over the limit of {} MiB; it is \
                     not read",
                    config.master_plan,
                    crate::input::CAP >> 20
                ),
                hint: "A master plan lists PRs; keep it small.".into(),
            });
        }
    };
    let claimed = session.store.other_active_prs()?;
    // A PR another workflow claims (docs/refs.md, "Claims"), here or on the remote as last fetched.
    let held = super::claims::held_by_others(session, state)?;
    let open: Vec<String> = master_plan::open_prs(&text)
        .into_iter()
        .filter(|heading| {
            !claimed
                .iter()
                .any(|(_, title)| master_plan::names_pr(heading, title))
                && !held.contains_key(&crate::workflow::claims::slug(heading))
        })
        .collect();
    if open.is_empty() {
        return Ok(blob);
    }
    const SHOWN: usize = 5;
    let mut listed: Vec<String> = open
        .iter()
        .take(SHOWN)
        .map(|h| format!("\"{h}\""))
        .collect();
    if open.len() > SHOWN {
        listed.push(format!("and {} more", open.len() - SHOWN));
    }
    Err(super::wrong_state(
        status,
        format!(
            "submit-work --no-pr-left is refused: the master plan {main}:{} still has {} PR{} neither marked \
             [DONE] nor claimed by another workflow: {}",
            config.master_plan,
            open.len(),
            if open.len() == 1 { "" } else { "s" },
            listed.join(", ")
        ),
        "Plan the first of them (`git orchestrate get-task` shows how); --no-pr-left is for when every PR \
         of the master plan is marked [DONE].",
    ))
}

/// A plan comes from the master plan on the main branch: one that is not there is named,
/// with what to create, and nothing is written.
fn master_plan_exists(session: &Session, facts: &Facts, status: Status) -> Result<(), EngineError> {
    let (main, config) = (&facts.main, facts.config());
    if session
        .master_plan_blob(main, &config.master_plan)?
        .is_some()
    {
        return Ok(());
    }
    Err(EngineError::InvalidPlan {
        state: status,
        problems: vec![crate::workflow::plan::Problem {
            path: "masterPlanPath".into(),
            message: format!(
                "the master plan {} is not on the main branch {main}: create it there (a `## PR 1: <title>` \
                 heading for each pull request) and commit it, then submit the plan again",
                config.master_plan
            ),
        }],
    })
}

/// A RED run, or the analysis that accepts one, on a working tree that changes protected
/// paths is refused before anything runs: the RED test would be pinned with the judges
/// changed. (A GREEN pass there is not counted, and the checkpoint refuses it.)
fn refuse_protected(session: &Session, state: &State, config: &Config) -> Result<(), EngineError> {
    let changed = super::verify::protected_worktree_changes(session, state, config)?;
    if changed.is_empty() {
        return Ok(());
    }
    Err(super::wrong_state(
        state.status(),
        format!(
            "submit-work refused: the working tree changes protected paths ({}), which a human changes \
             on main; nothing ran and nothing was recorded",
            changed.join(", ")
        ),
        "Put them back as they are on main (`git checkout <main> -- <path>`); if they must change, a \
         human commits the change on main and runs `git orchestrate repin`.",
    ))
}

/// What the squash check and the final check make of the PR branch's squashed commit.
enum SquashJudged {
    /// Both hold: the final note is written, and this is the event to record.
    Holds(Event),
    /// The final check refused it; the refusal is recorded (the state after it, the reason).
    FinalCheckRefused(Box<State>, String),
    /// The squash check refused it: nothing recorded.
    Refused(String),
}

fn judge_squash(
    session: &Session,
    snap: &crate::store::Snapshot,
    config: &Config,
) -> Result<SquashJudged, EngineError> {
    match finalize::verify_squash(session, snap)? {
        FinalizeCheck::Holds { commit } => {
            let check = finalize::final_check(session, snap, config, &commit, At::FinalCheck)?;
            if let Some(reason) = check.refused {
                // Recorded: a check passed only at the n-th try says so in the final note.
                let t = session.transition(
                    snap,
                    Event::FinalCheckRefused {
                        commit,
                        reason: reason.to_string(),
                    },
                )?;
                session.commit(snap, &t, None)?;
                return Ok(SquashJudged::FinalCheckRefused(
                    Box::new(t.state),
                    reason.to_string(),
                ));
            }
            // Before the state moves: a retry writes the same record, which is kept once.
            notes::record_final(session, snap, &commit, &check)?;
            Ok(SquashJudged::Holds(Event::Squashed {
                commit,
                plans: check.plans,
            }))
        }
        FinalizeCheck::Refused { reason } => Ok(SquashJudged::Refused(reason.to_string())),
    }
}

/// True when the PR branch is one commit over main: squashed (by hand), so a refusal says
/// how to take the squash back.
fn squashed_by_hand(session: &Session, main: &str) -> bool {
    session
        .git
        .count(&format!("{main}..HEAD"))
        .is_ok_and(|n| n == 1)
}

/// A submitted plan, valid and naming the configured master plan; every problem otherwise.
fn parse(bytes: &[u8], config: &Config, state: Status) -> Result<Plan, EngineError> {
    parse_submitted_plan(bytes, &config.master_plan)
        .map_err(|problems| EngineError::InvalidPlan { state, problems })
}

/// [`parse`] for the plan that starts a PR: its statuses are reset, and counted.
fn parse_first(bytes: &[u8], config: &Config, state: Status) -> Result<(Plan, usize), EngineError> {
    parse_first_plan(bytes, &config.master_plan)
        .map_err(|problems| EngineError::InvalidPlan { state, problems })
}

/// A finalization check that failed: FAILURE with the reason, and the state unchanged.
fn refused(state: State, reason: String) -> SubmitReport {
    SubmitReport::new(&state, Verdict::Failure, reason)
}
