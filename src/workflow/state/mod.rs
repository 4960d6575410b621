//! `state.json`: the orchestration state of one workflow. In memory it is a typed [`Phase`]
//! that owns exactly the data valid in it; on disk it is the flat schema-1 object of
//! docs/refs.md (`StateWire`), which every version so far has written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::workflow::plan::{StepId, StepType};
pub use crate::workflow::status::Status;

mod pending;
mod phase;
mod records;

pub use pending::{Pending, RedAnalysis, ReviewStage, ReviewSummary, TddPending};
pub use phase::{
    Attempts, Finalized, Halt, HaltReason, Phase, Pin, Pr, PrStage, RedOutcome, RedPin, RedTest,
    ReplanContext, ReviewProgress,
};
pub use records::{
    ExitRecord, GateRecord, LastRun, PreflightCache, PreflightRecord, Verdict, format_ms,
};

/// The only `state.json` schema this version reads and writes.
pub const STATE_SCHEMA: u32 = 1;

/// One workflow's state: the phase, and what outlives every PR.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "StateWire", try_from = "StateWire")]
pub struct State {
    /// The branch PRs start from and merge into, fixed when the workflow is created so that
    /// an agent cannot redirect the protected config (docs/config.md) by editing its own copy.
    pub main_branch: Option<String>,
    pub phase: Phase,
    /// A human's guidance from `resume`, shown once in the next briefing.
    pub guidance: Option<String>,
    /// In INITIALIZING: the agent said no PR of the master plan is left.
    pub idle: Option<Idle>,
    /// The main branch's tip as this workflow accounts for it: where it pinned its first PR,
    /// its last merge, or a human's `repin`. First-parent commits on main after it that no
    /// workflow merged moved main outside the workflow (docs/integrity.md).
    pub main_tip: Option<String>,
    /// Fields written by a newer version are carried through unchanged, never dropped.
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// `submit-work --no-pr-left`: the master plan the agent judged. It holds only while the
/// main branch's master plan is still this blob; a commit that changes it ends it by itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Idle {
    /// The blob of `<main>:<master_plan>` then; none when there was no such file.
    pub master_plan: Option<String>,
}

impl State {
    pub fn new(main_branch: Option<String>) -> Self {
        State {
            main_branch,
            phase: Phase::Initializing,
            guidance: None,
            idle: None,
            main_tip: None,
            extra: BTreeMap::new(),
        }
    }

    pub fn status(&self) -> Status {
        self.phase.status()
    }

    pub fn pr(&self) -> Option<&Pr> {
        self.phase.pr()
    }

    pub fn pr_mut(&mut self) -> Option<&mut Pr> {
        self.phase.pr_mut()
    }

    /// The PR branch, once a plan named it.
    pub fn branch(&self) -> Option<&str> {
        match self.phase.resumed() {
            Phase::CreatingBranch { branch, .. }
            | Phase::Pr {
                pr: Pr { branch, .. },
                ..
            } => Some(branch),
            Phase::Initializing | Phase::Halted { .. } => None,
        }
    }

    pub fn pending(&self) -> Option<Pending> {
        self.phase.pending()
    }

    /// The step whose checkpoint the workflow waits for, when it waits for one (not while
    /// halted: a human answers first).
    pub fn owed_checkpoint(&self) -> Option<StepId> {
        let Phase::Pr { stage, .. } = &self.phase else {
            return None;
        };
        match stage.tdd()? {
            (_, Some(TddPending::Checkpoint { step, .. })) => Some(*step),
            (_, Some(TddPending::Analysis(_)) | None) => None,
        }
    }

    /// True when only a human can move the workflow on: halted, or a review waiting for
    /// approval. The agent then has nothing to do (`get-task` exits 10).
    pub fn waits_for_human(&self) -> bool {
        match &self.phase {
            Phase::Halted { .. } => true,
            Phase::Pr {
                stage: PrStage::CodeReview { review },
                ..
            } => match review {
                ReviewStage::AwaitingApproval { .. } => true,
                ReviewStage::Due { .. } | ReviewStage::MustEscalate { .. } => false,
            },
            Phase::Initializing | Phase::CreatingBranch { .. } | Phase::Pr { .. } => false,
        }
    }

    pub fn last_error(&self) -> Option<&str> {
        self.phase.last_error()
    }

    pub fn attempts(&self) -> u32 {
        self.phase.attempts()
    }

    pub fn identical_failures(&self) -> u32 {
        self.phase.identical_failures()
    }

    /// The halt, with the status `resume` returns to.
    pub fn halt(&self) -> Option<HaltRecord> {
        match &self.phase {
            Phase::Halted { halt, resume } => Some(HaltRecord {
                reason: halt.reason,
                message: halt.message.clone(),
                resume_to: resume.status(),
            }),
            _ => None,
        }
    }

    pub fn replan_context(&self) -> Option<&ReplanContext> {
        match self.phase.stage()? {
            PrStage::Replanning { context, .. } => Some(context),
            _ => None,
        }
    }

    /// The RED test still to be run again at `step`, when `step` is its task's GREEN step
    /// (docs/integrity.md).
    pub fn red_test_due(&self, step: StepId, kind: StepType) -> Option<&RedTest> {
        self.pr()
            .and_then(|pr| pr.red_test.as_ref())
            .filter(|red| kind == StepType::Green && red.task == step.task)
    }

    /// Where the current task began: its previous step's checkpoint, or where the branch left
    /// main (`HEAD` before either is known).
    pub fn task_start(&self) -> &str {
        self.pr()
            .and_then(|pr| pr.last_checkpoint.as_deref())
            .or(self.pr().and_then(|pr| pr.base.as_deref()))
            .unwrap_or("HEAD")
    }

    pub fn final_commit(&self) -> Option<&str> {
        self.phase.finalized().0
    }

    pub fn plan_commit(&self) -> Option<&str> {
        self.phase.finalized().1
    }

    /// Parses `state.json` as read from a workflow ref. An unknown schema or status is an
    /// error, never a guess (docs/refs.md).
    pub fn from_json(bytes: &[u8]) -> Result<State, String> {
        State::try_from(State::wire_from_json(bytes)?)
    }

    /// Parses `state.json` into its wire form and the record `plan_progress` holds, decoded
    /// as `P`. Every command reads this first: a file with only the fields this version
    /// writes, at its schema, is decoded in one pass straight into its types ([`Known`]);
    /// anything else (an unknown field, which rides along in `extra`; another schema; an
    /// error to report) takes [`Self::wire_from_json`]'s road, which buffers the whole object
    /// to keep what it does not know.
    pub fn wire_with_record<P: serde::de::DeserializeOwned>(
        bytes: &[u8],
    ) -> Result<(StateWire, Option<P>), String> {
        // An object only: serde would also take a struct's fields from an array, which the
        // buffering road refuses.
        let object = bytes.trim_ascii_start().starts_with(b"{");
        if object
            && let Ok(known) = serde_json::from_slice::<Known<P>>(bytes)
            && known.schema == STATE_SCHEMA
        {
            return Ok(known.split());
        }
        State::wire_with_record_buffered(bytes)
    }

    /// [`Self::wire_with_record`]'s road for every file: the whole object buffered, so
    /// unknown fields are kept and errors are reported as they always were.
    pub(crate) fn wire_with_record_buffered<P: serde::de::DeserializeOwned>(
        bytes: &[u8],
    ) -> Result<(StateWire, Option<P>), String> {
        let mut wire = State::wire_from_json(bytes)?;
        let record = wire
            .plan_progress
            .take()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| format!("`plan_progress`: {e}"))?;
        Ok((wire, record))
    }

    /// Parses `state.json` into its wire form, checking the schema first.
    pub fn wire_from_json(bytes: &[u8]) -> Result<StateWire, String> {
        #[derive(Deserialize)]
        struct SchemaOnly {
            schema: Option<serde_json::Value>,
        }
        let probe: SchemaOnly =
            serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
        match probe.schema {
            Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(STATE_SCHEMA)) => {}
            Some(other) => {
                return Err(format!(
                    "schema {other} is not understood by this git-orchestrate (it reads schema {STATE_SCHEMA}); \
                     upgrade git-orchestrate"
                ));
            }
            None => return Err("the `schema` field is missing".to_string()),
        }
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("state serializes: plain data");
        out.push(b'\n');
        out
    }

    /// The state with its wire form edited: how tests build a state in any phase. Fields the
    /// phase needs and the edit left out get placeholders, so a test names only what it is
    /// about.
    #[cfg(test)]
    pub fn edit(self, f: impl FnOnce(&mut StateWire)) -> State {
        let mut wire = StateWire::from(self);
        f(&mut wire);
        let status = wire.halt.as_ref().map_or(wire.status, |h| h.resume_to);
        if status != Status::Initializing {
            wire.current_pr_branch
                .get_or_insert_with(|| "feat/add-numbers".into());
        }
        if wire.status == Status::Halted && wire.halt.is_none() {
            wire.halt = Some(HaltRecord {
                reason: HaltReason::Escalated,
                message: "halted".into(),
                resume_to: Status::ExecutingTdd,
            });
        }
        let status = wire.halt.as_ref().map_or(wire.status, |h| h.resume_to);
        if matches!(
            status,
            Status::FinalizeComplete | Status::PlanUpdated | Status::MergingBranch
        ) {
            wire.final_commit.get_or_insert_with(|| "final".into());
            wire.plan_commit.get_or_insert_with(|| "plan".into());
        }
        if status == Status::Replanning && wire.replan_context.is_none() {
            wire.replan_context = Some(ReplanContext {
                original_task: "add".into(),
                step: StepId::new(0, 1),
                error: wire.last_error.clone().unwrap_or_default(),
                untracked: Vec::new(),
            });
        }
        State::try_from(wire).expect("the edited state is valid")
    }
}

/// `halt` in `state.json`: why the workflow waits for a human, and where `resume` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HaltRecord {
    pub reason: HaltReason,
    pub message: String,
    pub resume_to: Status,
}

/// `state.json` as schema 1 spells it: one flat object whose fields each phase uses a subset
/// of (docs/refs.md). Field names and order are the format; [`State`] is built from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateWire {
    pub schema: u32,
    pub status: Status,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debug_attempt_counter: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_commit_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_tree: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_review: Option<ReviewSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_pr_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub identical_failures: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub review_round: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_rounds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replan_context: Option<ReplanContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halt: Option<HaltRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<Idle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight_cache: Option<PreflightCache>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_test: Option<RedTest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_tip: Option<String>,
    /// The store's own record of the plan (docs/refs.md): progress since `pr.json` was
    /// stored, and a summary of it. Never part of [`State`]; the store reads and writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_progress: Option<serde_json::Value>,
    /// The plan summary cache of versions up to 0.2: read and dropped, so it never rides
    /// along in `extra`.
    #[serde(default, skip_serializing)]
    pub plan_summary: Option<serde_json::Value>,
    #[serde(default, skip_serializing)]
    pub plan_blob: Option<serde_json::Value>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// [`StateWire`]'s fields, and no other: what [`State::wire_with_record`] decodes in one pass
/// (a field added to [`StateWire`] and not here is not lost: such a file takes the
/// buffering road). `plan_progress` is decoded straight into the store's type `P`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Known<P> {
    schema: u32,
    status: Status,
    #[serde(default)]
    debug_attempt_counter: u32,
    #[serde(default)]
    last_commit_hash: Option<String>,
    #[serde(default)]
    verified_tree: Option<String>,
    #[serde(default)]
    final_commit: Option<String>,
    #[serde(default)]
    plan_commit: Option<String>,
    #[serde(default)]
    branch_base: Option<String>,
    #[serde(default)]
    last_review: Option<ReviewSummary>,
    #[serde(default)]
    current_pr_branch: Option<String>,
    #[serde(default)]
    main_branch: Option<String>,
    #[serde(default)]
    last_error: Option<String>,
    #[serde(default)]
    pending: Option<Pending>,
    #[serde(default)]
    identical_failures: u32,
    #[serde(default)]
    review_round: u32,
    #[serde(default)]
    blocked_rounds: u32,
    #[serde(default)]
    replan_context: Option<ReplanContext>,
    #[serde(default)]
    halt: Option<HaltRecord>,
    #[serde(default)]
    guidance: Option<String>,
    #[serde(default)]
    idle: Option<Idle>,
    #[serde(default)]
    last_run: Option<LastRun>,
    #[serde(default)]
    preflight_cache: Option<PreflightCache>,
    #[serde(default)]
    red_test: Option<RedTest>,
    #[serde(default)]
    pin: Option<Pin>,
    #[serde(default)]
    main_tip: Option<String>,
    #[serde(default = "Option::default")]
    plan_progress: Option<P>,
}

impl<P> Known<P> {
    fn split(self) -> (StateWire, Option<P>) {
        let wire = StateWire {
            schema: self.schema,
            status: self.status,
            debug_attempt_counter: self.debug_attempt_counter,
            last_commit_hash: self.last_commit_hash,
            verified_tree: self.verified_tree,
            final_commit: self.final_commit,
            plan_commit: self.plan_commit,
            branch_base: self.branch_base,
            last_review: self.last_review,
            current_pr_branch: self.current_pr_branch,
            main_branch: self.main_branch,
            last_error: self.last_error,
            pending: self.pending,
            identical_failures: self.identical_failures,
            review_round: self.review_round,
            blocked_rounds: self.blocked_rounds,
            replan_context: self.replan_context,
            halt: self.halt,
            guidance: self.guidance,
            idle: self.idle,
            last_run: self.last_run,
            preflight_cache: self.preflight_cache,
            red_test: self.red_test,
            pin: self.pin,
            main_tip: self.main_tip,
            plan_progress: None,
            plan_summary: None,
            plan_blob: None,
            extra: BTreeMap::new(),
        };
        (wire, self.plan_progress)
    }
}

impl StateWire {
    fn empty(status: Status) -> StateWire {
        StateWire {
            schema: STATE_SCHEMA,
            status,
            debug_attempt_counter: 0,
            last_commit_hash: None,
            verified_tree: None,
            final_commit: None,
            plan_commit: None,
            branch_base: None,
            last_review: None,
            current_pr_branch: None,
            main_branch: None,
            last_error: None,
            pending: None,
            identical_failures: 0,
            review_round: 0,
            blocked_rounds: 0,
            replan_context: None,
            halt: None,
            guidance: None,
            idle: None,
            last_run: None,
            preflight_cache: None,
            red_test: None,
            pin: None,
            main_tip: None,
            plan_progress: None,
            plan_summary: None,
            plan_blob: None,
            extra: BTreeMap::new(),
        }
    }

    /// The phase these fields describe at `status` (the resume target, inside a halt).
    fn phase_at(&self, status: Status) -> Result<Phase, String> {
        Ok(match status {
            Status::Initializing => Phase::Initializing,
            // A branch name is what CREATING_BRANCH is about: without one, the plan is adopted
            // again, as in INITIALIZING.
            Status::CreatingBranch => match &self.current_pr_branch {
                Some(branch) => Phase::CreatingBranch {
                    branch: branch.clone(),
                    blocked: self.last_error.clone(),
                },
                None => Phase::Initializing,
            },
            Status::ExecutingTdd
            | Status::Debugging
            | Status::Replanning
            | Status::CodeReview
            | Status::AwaitingFinalization
            | Status::FinalizeComplete
            | Status::PlanUpdated
            | Status::MergingBranch => Phase::Pr {
                pr: self.pr_at(status)?,
                stage: self.stage_at(status)?,
            },
            Status::Halted => {
                let halt = self
                    .halt
                    .as_ref()
                    .ok_or_else(|| "state HALTED needs `halt`, which is missing".to_string())?;
                if halt.resume_to == Status::Halted {
                    return Err("`halt.resume_to` cannot be HALTED".to_string());
                }
                Phase::Halted {
                    halt: Halt {
                        reason: halt.reason,
                        message: halt.message.clone(),
                    },
                    resume: Box::new(self.phase_at(halt.resume_to)?),
                }
            }
        })
    }

    fn required(
        &self,
        status: Status,
        value: &Option<String>,
        field: &str,
    ) -> Result<String, String> {
        value
            .clone()
            .ok_or_else(|| format!("state {status} needs `{field}`, which is missing"))
    }

    /// The PR these fields describe, in a state that has one.
    fn pr_at(&self, status: Status) -> Result<Pr, String> {
        Ok(Pr {
            branch: self.required(status, &self.current_pr_branch, "current_pr_branch")?,
            base: self.branch_base.clone(),
            last_checkpoint: self.last_commit_hash.clone(),
            verified_tree: self.verified_tree.clone(),
            preflight_cache: self.preflight_cache.clone(),
            last_run: self.last_run.clone(),
            review: ReviewProgress {
                round: self.review_round,
                blocked_rounds: self.blocked_rounds,
                last: self.last_review.clone(),
            },
            red_test: self.red_test.clone(),
            pin: self.pin.clone(),
        })
    }

    /// Where the PR is at `status`, with the data valid there.
    fn stage_at(&self, status: Status) -> Result<PrStage, String> {
        let finalized = || -> Result<Finalized, String> {
            Ok(Finalized {
                final_commit: self.required(status, &self.final_commit, "final_commit")?,
                plan_commit: self.required(status, &self.plan_commit, "plan_commit")?,
            })
        };
        let cannot_wait = |other: &Pending| {
            format!(
                "state {status} cannot wait for {} (`pending`)",
                other.kind()
            )
        };
        Ok(match status {
            Status::ExecutingTdd => PrStage::ExecutingTdd {
                pending: self.tdd_pending(status)?,
            },
            Status::Debugging => PrStage::Debugging {
                attempts: Attempts {
                    count: self.debug_attempt_counter,
                    identical_failures: self.identical_failures,
                    error: self.last_error.clone().unwrap_or_default(),
                },
                pending: self.tdd_pending(status)?,
            },
            Status::Replanning => PrStage::Replanning {
                attempts: self.debug_attempt_counter,
                context: self.replan_context.clone().ok_or_else(|| {
                    "state REPLANNING needs `replan_context`, which is missing".to_string()
                })?,
            },
            Status::CodeReview => PrStage::CodeReview {
                review: match self.pending.clone() {
                    None => ReviewStage::Due {
                        error: self.last_error.clone(),
                    },
                    Some(Pending::Approval { round }) => ReviewStage::AwaitingApproval { round },
                    Some(Pending::Escalation { reason }) => ReviewStage::MustEscalate { reason },
                    Some(other) => return Err(cannot_wait(&other)),
                },
            },
            Status::AwaitingFinalization => PrStage::AwaitingFinalization,
            Status::FinalizeComplete => PrStage::FinalizeComplete {
                final_commit: self.required(status, &self.final_commit, "final_commit")?,
            },
            Status::PlanUpdated => PrStage::PlanUpdated {
                finalized: finalized()?,
            },
            Status::MergingBranch => PrStage::MergingBranch {
                finalized: finalized()?,
                blocked: self.last_error.clone(),
            },
            Status::Initializing | Status::CreatingBranch | Status::Halted => {
                return Err(format!("state {status} has no PR stage"));
            }
        })
    }

    /// What a TDD state waits for: an analysis or a checkpoint, nothing else.
    fn tdd_pending(&self, status: Status) -> Result<Option<TddPending>, String> {
        self.pending
            .clone()
            .map(|pending| {
                TddPending::try_from(pending).map_err(|other| {
                    format!(
                        "state {status} cannot wait for {} (`pending`)",
                        other.kind()
                    )
                })
            })
            .transpose()
    }

    /// Sets the fields that describe `phase` (not `status`: a halt records its own).
    fn describe(&mut self, phase: &Phase) {
        self.pending = phase.pending();
        self.last_error = phase.last_error().map(str::to_string);
        match phase {
            Phase::Initializing => {}
            Phase::CreatingBranch { branch, .. } => self.current_pr_branch = Some(branch.clone()),
            Phase::Pr { pr, stage } => {
                self.describe_pr(pr);
                self.describe_stage(stage);
            }
            Phase::Halted { halt, resume } => {
                self.describe(resume);
                self.halt = Some(HaltRecord {
                    reason: halt.reason,
                    message: halt.message.clone(),
                    resume_to: resume.status(),
                });
            }
        }
    }

    fn describe_pr(&mut self, pr: &Pr) {
        self.current_pr_branch = Some(pr.branch.clone());
        self.branch_base = pr.base.clone();
        self.last_commit_hash = pr.last_checkpoint.clone();
        self.verified_tree = pr.verified_tree.clone();
        self.preflight_cache = pr.preflight_cache.clone();
        self.last_run = pr.last_run.clone();
        self.review_round = pr.review.round;
        self.blocked_rounds = pr.review.blocked_rounds;
        self.last_review = pr.review.last.clone();
        self.red_test = pr.red_test.clone();
        self.pin = pr.pin.clone();
    }

    fn describe_stage(&mut self, stage: &PrStage) {
        match stage {
            PrStage::ExecutingTdd { .. }
            | PrStage::CodeReview { .. }
            | PrStage::AwaitingFinalization => {}
            PrStage::Debugging { attempts, .. } => {
                self.debug_attempt_counter = attempts.count;
                self.identical_failures = attempts.identical_failures;
            }
            PrStage::Replanning { attempts, context } => {
                self.debug_attempt_counter = *attempts;
                self.replan_context = Some(context.clone());
            }
            PrStage::FinalizeComplete { final_commit } => {
                self.final_commit = Some(final_commit.clone());
            }
            PrStage::PlanUpdated { finalized } | PrStage::MergingBranch { finalized, .. } => {
                self.final_commit = Some(finalized.final_commit.clone());
                self.plan_commit = Some(finalized.plan_commit.clone());
            }
        }
    }
}

impl TryFrom<StateWire> for State {
    type Error = String;

    fn try_from(wire: StateWire) -> Result<State, String> {
        let phase = wire.phase_at(wire.status)?;
        Ok(State {
            main_branch: wire.main_branch,
            phase,
            guidance: wire.guidance,
            // Idle describes INITIALIZING only; anywhere else it would be stale.
            idle: wire.idle.filter(|_| wire.status == Status::Initializing),
            main_tip: wire.main_tip,
            extra: wire.extra,
        })
    }
}

impl From<State> for StateWire {
    fn from(state: State) -> StateWire {
        let mut wire = StateWire::empty(state.status());
        wire.describe(&state.phase);
        wire.main_branch = state.main_branch;
        wire.guidance = state.guidance;
        wire.idle = state.idle;
        wire.main_tip = state.main_tip;
        wire.extra = state.extra;
        wire
    }
}

#[cfg(test)]
mod tests;
