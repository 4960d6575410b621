//! `state.json`: the orchestration state of one workflow (SPEC §3.1), and its status enum.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::plan::{PlanSummary, StepId, StepType};

/// The only `state.json` schema this version reads and writes.
pub const STATE_SCHEMA: u32 = 1;

/// Where the workflow is. Names are the seed's, spelled as in `state.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Initializing,
    CreatingBranch,
    ExecutingTdd,
    Debugging,
    Replanning,
    CodeReview,
    AwaitingFinalization,
    FinalizeComplete,
    PlanUpdated,
    MergingBranch,
    Halted,
}

impl Status {
    pub const ALL: [Status; 11] = [
        Status::Initializing,
        Status::CreatingBranch,
        Status::ExecutingTdd,
        Status::Debugging,
        Status::Replanning,
        Status::CodeReview,
        Status::AwaitingFinalization,
        Status::FinalizeComplete,
        Status::PlanUpdated,
        Status::MergingBranch,
        Status::Halted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Initializing => "INITIALIZING",
            Status::CreatingBranch => "CREATING_BRANCH",
            Status::ExecutingTdd => "EXECUTING_TDD",
            Status::Debugging => "DEBUGGING",
            Status::Replanning => "REPLANNING",
            Status::CodeReview => "CODE_REVIEW",
            Status::AwaitingFinalization => "AWAITING_FINALIZATION",
            Status::FinalizeComplete => "FINALIZE_COMPLETE",
            Status::PlanUpdated => "PLAN_UPDATED",
            Status::MergingBranch => "MERGING_BRANCH",
            Status::Halted => "HALTED",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the next submit or get-task must resolve before the workflow moves on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    /// A RED test failed as expected; the agent must say whether it failed for the right reason.
    Analysis {
        step: StepId,
        command: String,
        exit: ExitRecord,
        /// The last lines of the output the agent has to judge (full text in `output.log`).
        output_tail: String,
    },
    /// A GREEN or REFACTOR step passed; a checkpoint commit must be made before the next step.
    Checkpoint {
        step: StepId,
        #[serde(rename = "type")]
        step_type: StepType,
        description: String,
    },
    /// The automated review passed; a human must `approve` or `reject`.
    Approval { round: u32 },
    /// The review rounds are used up; the agent must escalate (SPEC §6.5).
    Escalation { reason: String },
}

impl Pending {
    pub fn kind(&self) -> &'static str {
        match self {
            Pending::Analysis { .. } => "analysis",
            Pending::Checkpoint { .. } => "checkpoint",
            Pending::Approval { .. } => "approval",
            Pending::Escalation { .. } => "escalation",
        }
    }
}

/// The outcome of the last code review, for `status` and the briefings (the findings are in
/// `review.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSummary {
    pub round: u32,
    /// False when no review command is configured.
    pub ran: bool,
    pub findings: usize,
    pub blocking: usize,
}

/// How a command ended. Exactly one of the fields is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl ExitRecord {
    pub fn code(code: i32) -> Self {
        ExitRecord {
            code: Some(code),
            signal: None,
            timeout_ms: None,
        }
    }

    pub fn signal(signal: i32) -> Self {
        ExitRecord {
            code: None,
            signal: Some(signal),
            timeout_ms: None,
        }
    }

    pub fn timed_out(after_ms: u64) -> Self {
        ExitRecord {
            code: None,
            signal: None,
            timeout_ms: Some(after_ms),
        }
    }

    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl fmt::Display for ExitRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal, self.timeout_ms) {
            (Some(code), _, _) => write!(f, "exit {code}"),
            (_, Some(signal), _) => write!(f, "killed by signal {signal}"),
            (_, _, Some(ms)) => write!(f, "killed after the {} timeout", format_ms(ms)),
            _ => f.write_str("unknown exit"),
        }
    }
}

/// `1500` → `1.5s`, `600000` → `10m`: durations as a person reads them.
pub fn format_ms(ms: u64) -> String {
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// One preflight gate's result, as recorded in state and notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateRecord {
    pub name: String,
    pub exit: ExitRecord,
    pub ms: u64,
}

/// The preflight run that followed a passing test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightRecord {
    pub passed: bool,
    /// Empty when no gates are configured: then `passed` is vacuous and every report says so.
    pub gates: Vec<GateRecord>,
}

/// A passing preflight run, keyed by what it verified: the tree and the gate configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightCache {
    pub tree: String,
    /// [`crate::config::Config::preflight_key`] of the gates that ran.
    pub key: String,
    pub gates: Vec<GateRecord>,
}

impl PreflightCache {
    /// True when this run verified `tree` under the gates `key` identifies.
    pub fn covers(&self, tree: &str, key: &str) -> bool {
        self.tree == tree && self.key == key
    }
}

/// The verdict `submit-work` returns (the seed's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Success,
    Failure,
    NeedsAnalysis,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Success => "SUCCESS",
            Verdict::Failure => "FAILURE",
            Verdict::NeedsAnalysis => "NEEDS_ANALYSIS",
        }
    }
}

/// The last verification `submit-work` performed, for `status` and the briefings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    pub step: StepId,
    pub command: String,
    pub expectation: super::Expectation,
    pub exit: ExitRecord,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<PreflightRecord>,
}

/// What a scope reduction saved for the re-plan (SPEC §6.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplanContext {
    /// The task being replaced.
    pub original_task: String,
    /// The step that kept failing; its task is the one to replace.
    pub step: StepId,
    /// The last failure's output tail.
    pub error: String,
    /// Untracked files the revert left in place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HaltReason {
    /// The agent escalated for external help.
    Escalated,
    /// The automated merge hit a conflict.
    MergeConflict,
}

/// Why the workflow waits for a human, and where `resume` returns to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Halt {
    pub reason: HaltReason,
    pub message: String,
    pub resume_to: Status,
}

/// `state.json`. Field names follow the seed's ORCHESTRATION_STATE; the rest are ours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub schema: u32,
    pub status: Status,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub debug_attempt_counter: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_commit_hash: Option<String>,
    /// The tree of the working tree when it last passed verification (test and preflight):
    /// the squashed commit must have exactly this tree (SPEC §6.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_tree: Option<String>,
    /// The PR's single squashed commit, once finalized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_commit: Option<String>,
    /// The master-plan commit that was checked at FINALIZE_COMPLETE: the branch is only
    /// merged while its tip is still this commit, so nothing unchecked rides along.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_commit: Option<String>,
    /// Where the PR branch left the main branch: the search for checkpoint commits stops here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_review: Option<ReviewSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_pr_branch: Option<String>,
    /// The branch PRs start from and merge into, fixed when the workflow is created so that
    /// an agent cannot redirect the protected config (SPEC §4) by editing its own copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// How many failures in a row came back with the same output as the one before.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub identical_failures: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub review_round: u32,
    /// Review rounds that sent work back with blocking findings, since the review started or
    /// a human resumed it: `review.max_rounds` limits these, not a human's rejections.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_rounds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replan_context: Option<ReplanContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halt: Option<Halt>,
    /// A human's guidance from `resume`, shown once in the next briefing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guidance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    /// The last passing preflight run and the tree it verified (SPEC §7.3): a checkpoint of
    /// exactly this tree under exactly these gates needs no second run, from the
    /// `checkpoint` command or the `commit-msg` hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight_cache: Option<PreflightCache>,
    /// A summary of `pr.json`, maintained by the store beside it so that `get-task` and
    /// `status` never parse a large plan. Trusted only while `plan_blob` names the `pr.json`
    /// in the same tree; transitions never set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_summary: Option<PlanSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_blob: Option<String>,
    /// Fields written by a newer version are carried through unchanged, never dropped.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl State {
    pub fn new(main_branch: Option<String>) -> Self {
        State {
            schema: STATE_SCHEMA,
            status: Status::Initializing,
            debug_attempt_counter: 0,
            last_commit_hash: None,
            verified_tree: None,
            final_commit: None,
            plan_commit: None,
            branch_base: None,
            last_review: None,
            current_pr_branch: None,
            main_branch,
            last_error: None,
            pending: None,
            identical_failures: 0,
            review_round: 0,
            blocked_rounds: 0,
            replan_context: None,
            halt: None,
            guidance: None,
            last_run: None,
            preflight_cache: None,
            plan_summary: None,
            plan_blob: None,
            extra: BTreeMap::new(),
        }
    }

    /// Parses `state.json` as read from a workflow ref. An unknown schema or status is an
    /// error, never a guess (SPEC §3.1).
    pub fn from_json(bytes: &[u8]) -> Result<State, String> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn new_state_serializes_minimally() {
        let state = State::new(Some("main".into()));
        assert_eq!(
            String::from_utf8(state.to_json()).unwrap(),
            "{\n  \"schema\": 1,\n  \"status\": \"INITIALIZING\",\n  \"main_branch\": \"main\"\n}\n"
        );
    }

    #[test]
    fn unknown_status_is_an_error_naming_it() {
        let err = State::from_json(br#"{"schema":1,"status":"DANCING"}"#).unwrap_err();
        assert!(err.contains("unknown variant `DANCING`"), "{err}");
    }

    #[test]
    fn unknown_schema_is_an_error() {
        let err = State::from_json(br#"{"schema":2,"status":"INITIALIZING"}"#).unwrap_err();
        assert!(err.starts_with("schema 2 is not understood"), "{err}");
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let state =
            State::from_json(br#"{"schema":1,"status":"HALTED","future_field":{"a":1}}"#).unwrap();
        let again = State::from_json(&state.to_json()).unwrap();
        assert_eq!(again.extra["future_field"], serde_json::json!({"a": 1}));
        assert_eq!(again.status, Status::Halted);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_ms(600_000), "10m");
        assert_eq!(format_ms(1_000), "1s");
        assert_eq!(format_ms(1_500), "1.5s");
        assert_eq!(format_ms(250), "250ms");
        assert_eq!(format_ms(7_200_000), "2h");
    }
}
