//! The verdict on one commit, as `attest` reports it and the note holds it.

use serde::Serialize;
use serde_json::Value;

use crate::engine::answers::AnswerCheck;

/// The verdict on one commit.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub commit: String,
    /// `merge` or `pr-head`; `None` when no workflow records the commit.
    pub kind: Option<&'static str>,
    pub workflow: Option<String>,
    /// The transition the verdict read.
    pub transition: Option<String>,
    pub passed: bool,
    /// Why it failed: every reason found.
    pub reasons: Vec<String>,
    /// What ran again, and how it ended.
    pub reran: Vec<String>,
    /// Every task's RED test run again, as the local final note records it: both exits,
    /// the evidence they rest on (`junit`, `libtest`, `tap`, … or `exit code only`) and the
    /// tests by id.
    pub red_tests: Vec<crate::workflow::notes::RedProof>,
    /// Tests that existed on the PR's base that it changed or removed, and how the gates
    /// fared with them put back, as the local final note records them (`changed_tests`).
    pub changed_tests: Option<crate::workflow::notes::ChangedTests>,
    /// What the pinned policy makes of them: `refused` or `reported`
    /// ([`crate::workflow::notes::ChangedTests::verdict`]).
    pub changed_tests_verdict: Option<&'static str>,
    /// Each task's test against mutants of its code, as the local final note records it
    /// (`adequacy`), where `attest` measured it: under the pinned `[verify] adequacy =
    /// "enforce"` only (docs/integrity.md, "Adequacy by mutation").
    pub adequacy: Adequacy,
    /// What is named without failing the verdict: tests the PR changed that the policy
    /// reports and does not refuse.
    pub warnings: Vec<String>,
    /// The judged commit's tree, when a workflow records the commit: with the policy, what a
    /// FAILED verdict is remembered by.
    pub tree: Option<String>,
    /// It passed now, but its tree FAILED under this policy before
    /// ([`Verdict::earlier_refusals`]): refused as luck.
    pub flaky: bool,
    /// The earlier FAILED verdicts on the same tree under the same policy that a listed
    /// verifier signed, found among the verdict notes, oldest first.
    pub earlier_refusals: Vec<super::memory::EarlierRefusal>,
    /// The human answers in the PR's chain, each judged: signed by whom, or how it was
    /// given without a signature.
    pub answers: Vec<AnswerCheck>,
    /// The final record of the PR's squashed commit as `attest`'s own run of the final check
    /// makes it: the local final note's every field, from what this verifier ran and read
    /// (`adequacy` empty where it measured none; checkpoints without their notes, which the
    /// verifier does not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub final_note: Option<crate::workflow::notes::FinalNote>,
    /// The in-toto Statement (what the note holds).
    pub statement: Value,
}

/// Adequacy by mutation in a verdict: in JSON, the tasks measured, or `"not measured"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Adequacy {
    Measured(Vec<crate::workflow::notes::TaskAdequacy>),
    /// Not measured; `report`: the pinned policy is `report`, which `attest` does not measure
    /// (the text says so).
    NotMeasured {
        report: bool,
    },
}

impl Serialize for Adequacy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Adequacy::Measured(tasks) => tasks.serialize(serializer),
            Adequacy::NotMeasured { .. } => serializer.serialize_str("not measured"),
        }
    }
}

impl Verdict {
    /// The verdict on `commit` before anything is found: no workflow, no reason, nothing run.
    pub fn new(commit: &str) -> Verdict {
        Verdict {
            commit: commit.to_string(),
            kind: None,
            workflow: None,
            transition: None,
            passed: false,
            reasons: Vec::new(),
            reran: Vec::new(),
            red_tests: Vec::new(),
            changed_tests: None,
            changed_tests_verdict: None,
            adequacy: Adequacy::NotMeasured { report: false },
            warnings: Vec::new(),
            tree: None,
            flaky: false,
            earlier_refusals: Vec::new(),
            answers: Vec::new(),
            final_note: None,
            statement: Value::Null,
        }
    }
}
