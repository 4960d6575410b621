//! What each obligation of a proof plan came to (docs/tickets.md), typed: the executor
//! (src/engine/proof/mod.rs) returns these, and every verdict and its text is read from them.

use crate::engine::evidence::TestRun;
use crate::engine::verify::TreeVerification;
use crate::exec::RunOutput;
use crate::workflow::Expectation;
use crate::workflow::evidence::{Kind, Shortfall, Side};
use crate::workflow::notes::TaskAdequacy;
use crate::workflow::proof::adequacy::Policy;
use crate::workflow::proof::{PairFailure, PinnedTest};
use crate::workflow::ticket::{GateResult, GateVerdict};

/// What one obligation of a plan came to, typed: every verdict and its text are read from
/// these.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// `GatesPass`: the gates' verdict on the plan's tree, and the files they changed there.
    Gates {
        result: GateResult,
        changed: Vec<String>,
    },
    /// `FailsOn` of gated tests: the gates' verdict on `base` with only `paths`
    /// put in (it must be a failure).
    OnBase {
        subtask: Option<String>,
        base: String,
        paths: Vec<String>,
        result: GateResult,
    },
    /// `PassesOn` of gated tests: the gates' verdict on the plan's tree with
    /// `paths` (tests that existed on the base) put back as they were there.
    PutBack {
        paths: Vec<String>,
        result: GateResult,
    },
    /// A pinned test's `FailsOn` and `PassesOn`, run as a pair.
    Red(Box<RedPair>),
    /// A pinned test's repeated runs disagreed on one tree (`on`): each run's verdict.
    Flaky {
        test: PinnedTest,
        on: String,
        verdicts: Vec<String>,
    },
    /// `TreeUnchanged`: the files the runs of `by` changed in the final tree.
    Tree {
        by: Option<PinnedTest>,
        changed: Vec<String>,
    },
    /// `WorkingTreeGates` and `StepGates`: what the gates made of the agent's working tree.
    WorkingTree(Box<TreeVerification>),
    /// `Adequacy`: each task's test against mutants of its code, judged by `policy`.
    Adequacy {
        policy: Policy,
        tasks: Vec<TaskAdequacy>,
    },
    /// `StepTest`: the step's own run.
    Step(Box<StepRun>),
    /// `RedPin`: what the failing RED run pins as its test.
    Pinned(RedRun),
    /// `RedRerun`: the task's RED test run again; `None` when the step's own run is that run
    /// and it ran a test.
    Rerun(Option<Box<Rerun>>),
}

/// A submit's test command as it ran in the working tree.
#[derive(Clone, Debug)]
pub struct StepRun {
    pub expect: Expectation,
    pub test: TestRun,
    /// The working tree's tree, taken before it ran (when the plan asked for it).
    pub before: Option<String>,
}

/// What a failing RED run is, and the line showing its test could not be read, if any.
#[derive(Clone, Debug, Default)]
pub struct RedRun {
    pub outcome: Option<crate::workflow::state::RedOutcome>,
    pub syntax_error: Option<String>,
}

/// The task's RED test, run again at its GREEN step.
#[derive(Clone, Debug)]
pub struct Rerun {
    pub output: RunOutput,
    pub command: String,
    /// Pinned paths the GREEN step had changed, put back for the run.
    pub restored: Vec<String>,
    /// The runner's files among `restored` the RED tree has none of: taken out.
    pub taken_out: Vec<String>,
    /// The runner's files among `restored` (`conftest.py` files, pytest's configuration,
    /// plugin modules `pytest_plugins` names): test code only a RED step writes.
    pub hooks: Vec<String>,
    /// The run passed without running a test, or its per-test report says otherwise.
    pub not_run: Option<String>,
}

/// A pinned test's two runs and what they prove.
#[derive(Clone, Debug)]
pub struct RedPair {
    pub test: PinnedTest,
    pub on_base: TestRun,
    pub on_tree: TestRun,
    /// The evidence kind and the pinned ids, or where the per-test report falls short
    /// ([`crate::workflow::evidence::red_proven`]).
    pub proven: Result<(Kind, Vec<String>), (Shortfall, Side)>,
    /// Why the pair does not prove the test, if it does not.
    pub failure: Option<PairFailure>,
    /// The runner's hooks on the test's way that the squashed commit holds otherwise than RED
    /// steps left them, put back so for its run there.
    pub hooks: Vec<String>,
}

impl Outcome {
    /// Whether the obligation holds.
    pub fn held(&self) -> bool {
        match self {
            Outcome::Gates { result, .. } => result.result == GateVerdict::Pass,
            Outcome::OnBase { result, .. } => result.result == GateVerdict::Fail,
            Outcome::PutBack { result, .. } => result.result == GateVerdict::Pass,
            Outcome::Red(pair) => pair.failure.is_none(),
            Outcome::Flaky { .. } => false,
            Outcome::Tree { changed, .. } => changed.is_empty(),
            Outcome::WorkingTree(verification) => verification.failure().is_none(),
            Outcome::Adequacy { policy, tasks } => {
                super::adequacy::inadequate(policy, tasks).is_none()
            }
            Outcome::Step(run) => {
                run.test.output.exit.success() == (run.expect == Expectation::Pass)
            }
            Outcome::Pinned(_) => true,
            Outcome::Rerun(rerun) => rerun
                .as_ref()
                .is_none_or(|r| r.output.exit.success() && r.not_run.is_none()),
        }
    }

    /// The line `attest` says of what it ran again, where the outcome is a gated run.
    pub fn reran(&self) -> Option<String> {
        match self {
            Outcome::Gates { result: gates, .. } => Some(format!(
                "gates on the squashed commit: {}",
                match (&gates.result, &gates.failed) {
                    (GateVerdict::Pass, _) => format!("passed ({})", gates.ran.join(", ")),
                    (_, Some(f)) => format!("`{}` failed ({})", f.gate, f.exit),
                    (_, None) => "ran nothing".into(),
                }
            )),
            Outcome::OnBase {
                subtask,
                base,
                paths,
                result,
            } => Some(format!(
                "subtask {}'s tests ({}) on its base {}: {}",
                subtask.as_deref().unwrap_or("?"),
                paths.join(", "),
                crate::short_id(base),
                match result.result {
                    GateVerdict::Fail => "fail, as they must",
                    GateVerdict::Pass => "pass",
                    GateVerdict::None => "ran nothing",
                }
            )),
            _ => None,
        }
    }
}
