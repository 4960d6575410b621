//! `submit-work`: the verification gateway. Accepts a plan, runs the agent's test command and
//! then preflight, or takes the agent's analysis, and stores the outcome.

use super::finalize;
use super::get_task::free_branch_name;
use super::{EngineError, Session, io_error};
use crate::exec::{self, RunOutput};
use crate::gates::{self, PreflightRun};
use crate::workflow::plan::parse_plan;
use crate::workflow::replan::check_replan;
use crate::workflow::state::{ExitRecord, PreflightRecord};
use crate::workflow::{
    self, Accepted, Decision, Effect, Event, Expectation, OutputSource, PreflightOutcome, State,
    StepId, SubmitRequest, TestRun, Verdict,
};

/// What the agent submits. Plan bytes are read once, before any attempt, so a retry after a
/// lost race never reads stdin twice.
pub enum SubmitKind {
    Plan(Vec<u8>),
    Test {
        command: String,
        expectation: Option<Expectation>,
    },
    Analysis(Decision),
    /// Only a summary: confirms a finalization step (the squash, the master-plan commit).
    Confirm,
}

pub struct TestReport {
    pub command: String,
    pub exit: ExitRecord,
    pub ms: u64,
}

pub struct SubmitReport {
    pub verdict: Verdict,
    pub state: State,
    pub step: Option<StepId>,
    /// The output the verdict rests on: the test's, or the failing gate's. Verbatim bytes.
    pub output: Vec<u8>,
    /// Its last `test.output_tail` lines, as briefings show them.
    pub output_tail: String,
    pub test: Option<TestReport>,
    pub preflight: Option<PreflightRecord>,
    /// The one-line account stored in the transition commit.
    pub headline: String,
}

pub fn submit(
    session: &Session,
    summary: &str,
    kind: &SubmitKind,
) -> Result<SubmitReport, EngineError> {
    session.with_retries(|| attempt(session, summary, kind))
}

fn attempt(
    session: &Session,
    summary: &str,
    kind: &SubmitKind,
) -> Result<SubmitReport, EngineError> {
    let snap = session.read_or_create()?;
    // A broken config stops every submit, not only those that run commands.
    let config = session.load_config(Some(&snap.state))?.config;
    let request = match kind {
        SubmitKind::Plan(_) => SubmitRequest::Plan,
        SubmitKind::Test { expectation, .. } => SubmitRequest::Test {
            expectation: *expectation,
        },
        SubmitKind::Analysis(d) => SubmitRequest::Analysis(*d),
        SubmitKind::Confirm => SubmitRequest::Confirm,
    };
    let accepted = workflow::check_submit(&snap.state, snap.summary.as_ref(), request)
        .map_err(EngineError::Rejected)?;
    let mut test_run: Option<(RunOutput, Option<PreflightRun>)> = None;
    let mut test_command = None;
    let event = match (accepted, kind) {
        (Accepted::Plan, SubmitKind::Plan(bytes)) => {
            let plan = parse_plan(bytes).map_err(|problems| EngineError::InvalidPlan {
                state: snap.state.status,
                problems,
            })?;
            let branch = free_branch_name(session, &plan.pr_title)?;
            Event::PlanSubmitted {
                plan,
                branch,
                summary: summary.to_string(),
            }
        }
        (Accepted::Replan, SubmitKind::Plan(bytes)) => {
            let plan = parse_plan(bytes).map_err(|problems| EngineError::InvalidPlan {
                state: snap.state.status,
                problems,
            })?;
            let old = session.store.plan(&snap)?;
            if let (Some(old), Some(context)) = (&old, &snap.state.replan_context) {
                check_replan(old, context, &plan).map_err(|problems| EngineError::InvalidPlan {
                    state: snap.state.status,
                    problems,
                })?;
            }
            // The rules guarantee the old plan's other tasks are all still there.
            let new_tasks = plan.tasks.len() + 1 - old.map_or(1, |o| o.tasks.len());
            Event::Replanned {
                plan,
                new_tasks,
                summary: summary.to_string(),
            }
        }
        (
            Accepted::Test {
                step,
                kind: step_kind,
                expectation,
            },
            SubmitKind::Test { command, .. },
        ) => {
            let config = &config;
            let workdir = session.store.workdir();
            let run = exec::run_shell(command, workdir, config.test.timeout)
                .map_err(io_error(format!("run the test command `{command}`")))?;
            let preflight = if expectation == Expectation::Pass && run.exit.success() {
                let pre = gates::run_preflight(&config.preflight, workdir)
                    .map_err(io_error("run preflight"))?;
                // Every passing run records the tree it verified: the squash is checked
                // against it (SPEC §6.6), and a checkpoint of that tree needs no new preflight.
                let verified_tree = if pre.passed() {
                    Some(session.git.worktree_tree(&session.store.index_path())?)
                } else {
                    None
                };
                let failure = pre.failed().map(|g| {
                    (
                        g.name.clone(),
                        exec::tail_lines(&g.run.output, config.test.output_tail),
                    )
                });
                let outcome = PreflightOutcome {
                    record: pre.record(),
                    failure,
                    key: verified_tree.as_ref().map(|_| config.preflight_key()),
                    verified_tree,
                };
                test_run = Some((run.clone(), Some(pre)));
                Some(outcome)
            } else {
                test_run = Some((run.clone(), None));
                None
            };
            test_command = Some(command.clone());
            Event::TestRan(TestRun {
                step,
                kind: step_kind,
                command: command.clone(),
                expectation,
                exit: run.exit,
                output_tail: exec::tail_lines(&run.output, config.test.output_tail),
                preflight,
                summary: summary.to_string(),
            })
        }
        (Accepted::Squash, SubmitKind::Confirm) => match finalize::verify_squash(session, &snap)? {
            Ok(commit) => Event::Squashed { commit },
            Err(reason) => return Ok(refused(snap.state, reason)),
        },
        (Accepted::MasterPlanUpdate, SubmitKind::Confirm) => {
            match finalize::verify_master_plan(session, &snap)? {
                Ok(commit) => Event::MasterPlanUpdated { commit },
                Err(reason) => return Ok(refused(snap.state, reason)),
            }
        }
        (Accepted::Analysis, SubmitKind::Analysis(decision)) => Event::AnalysisDecided {
            decision: *decision,
            summary: summary.to_string(),
        },
        (accepted, _) => {
            // check_submit answers each request kind only with its own acceptance.
            return Err(EngineError::Io {
                what: "match the submission to its acceptance".into(),
                source: std::io::Error::other(format!("{accepted:?} does not fit the request")),
            });
        }
    };
    let t = session.transition(&snap, event)?;
    let output: Option<&[u8]> = t.effects.iter().find_map(|e| match (e, &test_run) {
        (Effect::SaveOutput(OutputSource::Test), Some((run, _))) => Some(run.output.as_slice()),
        (Effect::SaveOutput(OutputSource::Gate(name)), Some((_, Some(pre)))) => pre
            .gates
            .iter()
            .find(|g| &g.name == name)
            .map(|g| g.run.output.as_slice()),
        _ => None,
    });
    session.commit(&snap, &t, output)?;

    let output = output.map(<[u8]>::to_vec).unwrap_or_default();
    let output_tail = exec::tail_lines(&output, config.test.output_tail);
    Ok(SubmitReport {
        verdict: t
            .effects
            .iter()
            .find_map(|e| match e {
                Effect::Reply(v) => Some(*v),
                _ => None,
            })
            .unwrap_or(Verdict::Success),
        headline: t.summary.lines().next().unwrap_or_default().to_string(),
        state: t.state,
        step: t.step,
        output,
        output_tail,
        test: test_run
            .as_ref()
            .zip(test_command)
            .map(|((run, _), command)| TestReport {
                command,
                exit: run.exit,
                ms: u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX),
            }),
        preflight: test_run.and_then(|(_, pre)| pre.map(|p| p.record())),
    })
}

/// A finalization check that failed: FAILURE with the reason, and the state unchanged.
fn refused(state: State, reason: String) -> SubmitReport {
    SubmitReport {
        verdict: Verdict::Failure,
        headline: reason,
        state,
        step: None,
        output: Vec::new(),
        output_tail: String::new(),
        test: None,
        preflight: None,
    }
}
