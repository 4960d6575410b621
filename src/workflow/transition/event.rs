//! What the engine observed and feeds to the table ([`Event`]), and what a transition
//! returns: the new state, the plan's change, the effects to carry out ([`Transition`]).

use crate::workflow::plan::{Plan, StepId, StepType};
use crate::workflow::proof::step_record::Came;
use crate::workflow::proof::{Obligation, StepAsk, plan_difference, step};
use crate::workflow::review::ReviewRecord;
use crate::workflow::state::RedOutcome;
use crate::workflow::state::Verdict;
use crate::workflow::state::{ExitRecord, PreflightRecord, State, Status};
use crate::workflow::state::{Pin, PreflightCache};
use crate::workflow::{Decision, Expectation, Human};
use serde::{Deserialize, Serialize};

/// Something that happened, observed by the engine and fed to [`transition`]. Each
/// transition commit records the event it applied, so that `audit` can compute it again
/// (docs/integrity.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Event {
    /// A valid plan was submitted in INITIALIZING; `branch` is the free branch name for it.
    PlanSubmitted {
        plan: Plan,
        branch: String,
        summary: String,
    },
    /// The plan in INITIALIZING or CREATING_BRANCH had no step left to do.
    StalePlanDropped { title: Option<String> },
    /// The PR branch exists and is checked out; `base` is where it left the main branch,
    /// `pin` main's gates as they are now, which the whole PR is verified under.
    BranchReady {
        base: Option<String>,
        pin: Option<Pin>,
    },
    /// `repin`: a human moved the PR's gates to main's as they are now.
    Repinned { pin: Pin },
    /// Creating or checking out the PR branch failed; the reason is for the agent.
    BranchBlocked { reason: String },
    /// The agent's test command ran (and, after a passing PASS run, the preflight gates).
    TestRan(Box<TestRun>),
    /// The agent judged a NEEDS_ANALYSIS result.
    AnalysisDecided { decision: Decision, summary: String },
    /// A checkpoint commit was found on the PR branch (or just made by `checkpoint`); its
    /// tree passed preflight, and the squash is held to it.
    CheckpointRecorded {
        commit: String,
        subject: String,
        tree: String,
    },
    /// `checkpoint` ran preflight itself and it passed on `cache.tree`; recorded before the
    /// commit, so that the `commit-msg` hook finds it and does not run the gates again.
    PreflightPassed { cache: PreflightCache },
    /// `request-scope-reduction`: the working tree was reset to HEAD; `untracked` files stayed.
    ScopeReduced {
        step: StepId,
        original_task: String,
        untracked: Vec<String>,
    },
    /// A re-plan that follows the rules of [`super::replan::check_replan`]; `new_tasks`
    /// replace the failed one.
    Replanned {
        plan: Plan,
        new_tasks: usize,
        summary: String,
    },
    /// `escalate`: the agent's report for a human.
    Escalated { report: String },
    /// `submit-work --contradiction`: the agent's account of why the task and its test
    /// cannot both hold; halts for a human, never locked (docs/integrity.md, "A way to stop
    /// honestly").
    Contradicted { account: String },
    /// `resume`: a human answered the halt.
    Resumed { guidance: Option<String> },
    /// `get-task` showed the human's guidance; it is shown once.
    GuidanceDelivered,
    /// Every step is DONE: `get-task` starts the code review (docs/states.md), unless the
    /// rounds are used up.
    ReviewStarted { max_rounds: u32 },
    /// The review ran, or there was nothing to run (no review command).
    ReviewCompleted { record: ReviewRecord, human: bool },
    /// A reviewer crashed, timed out or printed something unreadable: never an approval.
    ReviewFailed { error: String },
    /// A human approved the reviewed PR.
    Approved,
    /// `approve --test-change PATH` / `approve --flaky`: a human accepts, for the tree `tree`
    /// only, the changes to the existing tests `tests` (`[gates] pinned_tests = "report"`),
    /// and with `flaky` a pass of that tree after it failed before (docs/integrity.md,
    /// "Approved by name"). The state does not change: the final check and `attest` read it.
    TreeApproved {
        tree: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tests: Vec<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        flaky: bool,
    },
    /// A human rejected it; the comment becomes a blocking finding.
    Rejected {
        comment: String,
        /// How the answer was authorised; `None` in events recorded before 0.3.
        #[serde(default)]
        by: Option<Human>,
    },
    /// The branch is one commit over main, with the verified tree; `plans` are the proof
    /// plans its final check ran (src/workflow/proof.rs), for `attest` to hold against the
    /// chain's (none in events recorded before plans were).
    Squashed {
        commit: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        plans: Vec<crate::workflow::proof::ProofPlan>,
    },
    /// The final check refused the squashed `commit` (docs/integrity.md): nothing moves,
    /// but the refusal stays in the chain, and the final note counts them.
    FinalCheckRefused { commit: String, reason: String },
    /// The master plan marks the PR DONE, in a second commit.
    MasterPlanUpdated { commit: String },
    /// PLAN_UPDATED → MERGING_BRANCH.
    MergeStarted,
    /// The branch is merged into main (by get-task, or by a human after a conflict) and gone;
    /// `main` is main's tip after it, the commit the workflow accounts main to (`None` in
    /// events recorded before 0.4).
    Merged {
        branch: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        main: Option<String>,
    },
    /// The merge could not start: a dirty tree, a failed checkout or pull.
    MergeBlocked { reason: String },
    /// The merge conflicted and was aborted: a human has to merge.
    MergeConflicted { message: String },
    /// `run` gave up: `turns` turns of the agent in a row made no transition on one step;
    /// the report says what was tried.
    Stuck { report: String, turns: u32 },
    /// `submit-work --no-pr-left` in INITIALIZING: every PR of the master plan is done;
    /// `master_plan` is the blob judged.
    NoPrLeft {
        master_plan: Option<String>,
        summary: String,
    },
}

impl Event {
    /// The name used in the commit subject and the `Orchestrator-Event` trailer.
    pub fn name(&self) -> &'static str {
        match self {
            Event::PlanSubmitted { .. } => "plan",
            Event::StalePlanDropped { .. } => "drop-stale-plan",
            Event::BranchReady { .. } => "branch",
            Event::Repinned { .. } => "repin",
            Event::BranchBlocked { .. } => "branch-blocked",
            Event::TestRan(_) => "test",
            Event::AnalysisDecided { .. } => "analysis",
            Event::CheckpointRecorded { .. } => "checkpoint",
            Event::PreflightPassed { .. } => "preflight",
            Event::ScopeReduced { .. } => "scope-reduction",
            Event::Replanned { .. } => "replan",
            Event::Escalated { .. } => "escalate",
            Event::Contradicted { .. } => "contradiction",
            Event::Resumed { .. } => "resume",
            Event::GuidanceDelivered => "guidance",
            Event::ReviewStarted { .. } => "review-start",
            Event::ReviewCompleted { .. } => "review",
            Event::ReviewFailed { .. } => "review-error",
            Event::Approved => "approve",
            Event::TreeApproved { .. } => "approve-tree",
            Event::Rejected { .. } => "reject",
            Event::Squashed { .. } => "squash",
            Event::FinalCheckRefused { .. } => "final-check-refused",
            Event::MasterPlanUpdated { .. } => "plan-update",
            Event::MergeStarted => "merge-start",
            Event::Merged { .. } => "merge",
            Event::MergeBlocked { .. } => "merge-blocked",
            Event::MergeConflicted { .. } => "merge-conflict",
            Event::NoPrLeft { .. } => "no-pr-left",
            Event::Stuck { .. } => "stuck",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestRun {
    pub step: StepId,
    pub kind: StepType,
    /// The step's description, for the checkpoint it may owe.
    pub description: String,
    pub command: String,
    pub expectation: Expectation,
    pub exit: ExitRecord,
    /// The last lines of the command's output, verbatim (lossy only where it was not UTF-8).
    pub output_tail: String,
    /// Present exactly when the command passed under a PASS expectation.
    pub preflight: Option<PreflightOutcome>,
    /// The task's RED test, run again after the command passed at the task's GREEN step
    /// ([`State::red_test_due`]); `None` when none was due, or it is the command itself and
    /// its pinned paths are as the RED step left them.
    pub red_rerun: Option<RedRerun>,
    pub summary: String,
    /// A failing RED run: the tree it left and the paths its step changed, pinned as its test
    /// when the analysis accepts it; or why it is no test that failed: it did not run (exit
    /// 126/127, a runner that says nothing ran), or its test cannot be pinned (a link out of
    /// the repository) (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<RedOutcome>,
    /// A line of a failing RED run's output that shows the test could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syntax_error: Option<String>,
    /// The proof plan the step's verdict was computed from and what each of its obligations
    /// came to (src/workflow/proof/step_record.rs); `None` in events recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<crate::workflow::proof::step_record::StepProof>,
    /// The tree a run meant to pass ran on (taken before it ran), when it passed: what the
    /// step's test looked at. The task after this step begins there, not at the step's
    /// checkpoint, so that code written after the test ran is the next task's
    /// (src/engine/pr_record.rs). `None` in events recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested_tree: Option<String>,
}

impl TestRun {
    /// Why the proof this run records disagrees with the rest of its event: its plan is not of
    /// the command and expectation the event ran, an outcome is missing, or an outcome is not
    /// what the event's exit, pin or re-run say. `None` when it agrees (or none is recorded).
    pub fn proof_disagrees(&self) -> Option<String> {
        let run = self;
        let proof = run.proof.as_ref()?;
        let obligations = &proof.plan.obligations;
        if proof.outcomes.len() != obligations.len() {
            return Some(format!(
                "its proof records {} outcomes for {} obligations",
                proof.outcomes.len(),
                obligations.len()
            ));
        }
        let ran_as_expected = run.exit.success() == (run.expectation == Expectation::Pass);
        for (i, (obligation, came)) in obligations.iter().zip(&proof.outcomes).enumerate() {
            let expected = match obligation {
                Obligation::StepTest {
                    command, expect, ..
                } => {
                    if command != &run.command || *expect != run.expectation {
                        return Some(format!(
                            "its proof's plan runs `{command}` expecting {}, but it ran `{}` \
                             expecting {}",
                            expect.as_str(),
                            run.command,
                            run.expectation.as_str()
                        ));
                    }
                    Some(ran_as_expected)
                }
                Obligation::RedPin { .. } => Some(matches!(
                    run.red,
                    Some(RedOutcome::Pinned(_) | RedOutcome::NotATest(_))
                )),
                Obligation::RedRerun { .. } => Some(
                    run.red_rerun
                        .as_ref()
                        .is_none_or(|r| r.exit.success() && r.not_run.is_none()),
                ),
                // The gates' verdict is the event's preflight, judged by the transition.
                _ => None,
            };
            let not_run = *came == Came::NotRun;
            // Everything after an obligation that did not hold did not run (the step's plan
            // stops at the first failure).
            let stopped = proof.outcomes[..i].iter().any(|c| *c != Came::Held);
            let agrees = match (stopped, came, expected) {
                (true, _, _) => not_run,
                (false, Came::NotRun, _) => false,
                (false, _, None) => true,
                (false, Came::Held, Some(held)) => held,
                (false, Came::Failed, Some(held)) => !held,
            };
            if !agrees {
                return Some(format!(
                    "its proof says obligation {} ({}) {}, which the event does not bear out",
                    i + 1,
                    obligation_name(obligation),
                    match came {
                        Came::Held => "held",
                        Came::Failed => "failed",
                        Came::NotRun => "did not run",
                    }
                ));
            }
        }
        None
    }

    /// Where the plan this run's proof records differs from the one the pure core emits for
    /// it ([`StepAsk::on`]) from `before`, the state the run was made on, under its fixed main
    /// branch: the first difference, as a sentence. A plan emptied, an obligation dropped,
    /// another test or base, is such a difference. `None` when they agree, or no proof is
    /// recorded, or `before` fixes no main branch (nothing then says which the run used).
    /// A passing run that took no tree before it ran is the plan an earlier release recorded
    /// where there were no gates: it agrees, and what it lacks, the tree the next task begins
    /// at, counts as not recorded where it is read (src/engine/pr_record.rs).
    pub fn plan_differs(&self, before: &State) -> Option<String> {
        let recorded = &self.proof.as_ref()?.plan;
        let main = before.main_branch.as_deref()?;
        let emitted = step(StepAsk::on(
            before,
            (self.step, self.kind),
            (&self.command, self.expectation),
            main,
        ));
        let why = plan_difference(recorded, &emitted)?;
        let mut earlier = emitted;
        if let Some(Obligation::StepTest { take_tree, .. }) = earlier.obligations.first_mut() {
            *take_tree = false;
        }
        plan_difference(recorded, &earlier).map(|_| {
            format!(
                "its proof's plan is not the one the state before it gives for step {}: {why}",
                self.step
            )
        })
    }
}

/// The obligation's name, as its JSON says it.
fn obligation_name(obligation: &Obligation) -> String {
    serde_json::to_value(obligation)
        .ok()
        .and_then(|v| v["obligation"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A RED test run again at its task's GREEN step: it must pass now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedRerun {
    pub command: String,
    pub exit: ExitRecord,
    pub output_tail: String,
    /// Pinned paths the GREEN step had changed: the run had them as the RED step left them
    /// (in a scratch worktree), and the change is named to the reviewer (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// The runner's files among `restored` the RED tree has none of: taken out for the
    /// run, and named as such.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taken_out: Vec<String>,
    /// The runner's files among `restored` (`conftest.py` files, pytest's configuration,
    /// plugin modules `pytest_plugins` names), named apart with what to do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// The run passed, but its runner says no test ran (all skipped, ignored or filtered
    /// out): that is no pass of the RED test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreflightOutcome {
    pub record: PreflightRecord,
    /// The failing gate's name and output tail, when one failed.
    pub failure: Option<(String, String)>,
    /// The tree the gates verified, recorded only when gates actually ran.
    pub verified_tree: Option<String>,
    pub key: Option<String>,
    /// Files that differ between the trees taken before the test, after it and after
    /// preflight: then the pass does not count (docs/integrity.md).
    pub changed: Vec<String>,
    /// Protected paths the tree changes against main at the PR's pin: then the gates did
    /// not run and the pass does not count (docs/integrity.md).
    pub protected: Vec<String>,
}

/// What the engine must carry out besides storing the new state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Store this output, verbatim, as `output.log` in the new state.
    SaveOutput(OutputSource),
    /// `submit-work` answers with this verdict (and its exit code).
    Reply(Verdict),
    /// Store the agent's escalation report as `escalation.md`.
    SaveEscalation(String),
    /// The halt is over: remove `escalation.md`.
    DropEscalation,
    /// Store the review's record as `review.json`.
    SaveReview(ReviewRecord),
    /// The PR is merged: its `review.json` and `output.log` go (`pr.json` goes with
    /// [`PlanChange::Drop`]).
    DropPrRecords,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputSource {
    /// The agent's test command.
    Test,
    /// The named preflight gate.
    Gate(String),
    /// The task's RED test, run again at its GREEN step.
    RedTest,
}

/// What happens to the PR plan. The accepted plan is stored once and never rewritten for
/// progress: a completed step is recorded beside it (docs/refs.md), so that success costs
/// no more than failure.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanChange {
    Keep,
    /// The step is DONE.
    CompleteStep(StepId),
    /// Store the plan as it now reads, progress included, as the plan: where someone is
    /// about to read or rewrite it (a re-plan, the review).
    Materialize,
    Replace(Plan),
    Drop,
}

/// The result of [`transition`]: the new state, what happens to the plan, and the effects.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub event: &'static str,
    /// The event applied, as each transition commit records it (docs/integrity.md).
    pub input: Event,
    pub from: Status,
    pub state: State,
    pub plan: PlanChange,
    pub step: Option<StepId>,
    /// The commit message body: what happened, then the agent's own summary.
    pub summary: String,
    pub effects: Vec<Effect>,
}

impl Transition {
    pub fn to(&self) -> Status {
        self.state.status()
    }

    pub fn verdict(&self) -> Option<Verdict> {
        self.effects.iter().find_map(|e| match e {
            Effect::Reply(v) => Some(*v),
            _ => None,
        })
    }
}
