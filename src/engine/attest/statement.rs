//! The verdict as an in-toto Statement (v1) with the SLSA `verification_summary/v1`
//! predicate: what `attest` writes as a note and prints with `--json`. Pure.

use serde_json::{Value, json};

/// The statement's `_type`.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// Its `predicateType`.
pub const PREDICATE_TYPE: &str = "https://slsa.dev/verification_summary/v1";
/// The verifier's id: this program's verification of a workflow's record.
pub const VERIFIER_ID: &str = "https://git-orchestrate.dev/attest/v1";

/// What the statement says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts<'a> {
    pub commit: &'a str,
    /// `merge` or `pr-head`; `None` when no workflow records the commit.
    pub kind: Option<&'a str>,
    pub workflow: Option<&'a str>,
    /// The transition the verdict read, and the ref it came from.
    pub chain: Option<(&'a str, &'a str)>,
    /// The pinned config: the main commit it was pinned at and the blob.
    pub policy: Option<(&'a str, &'a str)>,
    pub passed: bool,
    pub time: &'a str,
    pub reasons: &'a [String],
    pub reran: &'a [String],
    pub answers: &'a [Value],
    /// Tests the PR changed that existed on its base, with the policy's verdict on them.
    pub changed_tests: Option<Value>,
    pub warnings: &'a [String],
    /// The judged commit's tree, when a workflow records it.
    pub tree: Option<&'a str>,
    /// Earlier FAILED verdicts on the same tree under the same policy: carried in each
    /// later verdict, so that the list outlives the note it was first in.
    pub earlier_refusals: &'a [Value],
}

/// The Statement: subjects are the commit and the chain's transition; the predicate's
/// `policy` is the pinned config blob; what was re-run and every reason are in the
/// predicate's `gitOrchestrate` member (an extension field, as the predicate allows).
pub fn statement(f: &Facts) -> Value {
    let mut subject = vec![json!({"name": "commit", "digest": {"gitCommit": f.commit}})];
    if let Some((transition, reference)) = f.chain {
        subject.push(json!({"name": reference, "digest": {"gitCommit": transition}}));
    }
    let mut predicate = json!({
        "verifier": {
            "id": VERIFIER_ID,
            "version": {"git-orchestrate": env!("CARGO_PKG_VERSION")},
        },
        "timeVerified": f.time,
        "resourceUri": format!("git+commit:{}", f.commit),
        "verificationResult": if f.passed { "PASSED" } else { "FAILED" },
        "verifiedLevels": if f.passed { ["GIT_ORCHESTRATE_TDD_RERUN"] } else { ["FAILED"] },
        "slsaVersion": "1.0",
    });
    if let Some((pin, blob)) = f.policy {
        predicate["policy"] = json!({
            "uri": format!("git+blob:{pin}:.orchestrate.toml"),
            "digest": {"gitBlob": blob},
        });
    }
    if let Some((transition, reference)) = f.chain {
        predicate["inputAttestations"] = json!([{
            "uri": format!("git+ref:{reference}"),
            "digest": {"gitCommit": transition},
        }]);
    }
    predicate["gitOrchestrate"] = json!({
        "kind": f.kind,
        "workflow": f.workflow,
        "reran": f.reran,
        "answers": f.answers,
        "reasons": f.reasons,
    });
    if let Some(changed) = &f.changed_tests {
        predicate["gitOrchestrate"]["changedTests"] = changed.clone();
    }
    if !f.warnings.is_empty() {
        predicate["gitOrchestrate"]["warnings"] = json!(f.warnings);
    }
    if let Some(tree) = f.tree {
        predicate["gitOrchestrate"]["tree"] = json!(tree);
    }
    if !f.earlier_refusals.is_empty() {
        predicate["gitOrchestrate"]["earlierRefusals"] = json!(f.earlier_refusals);
    }
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_passed_merge_reads_as_a_verification_summary() {
        let reran = vec!["gates: passed".to_string()];
        let facts = Facts {
            commit: "c0ffee",
            kind: Some("merge"),
            workflow: Some("main"),
            chain: Some(("abc", "refs/orchestrator/workflows/main")),
            policy: Some(("p1n", "b10b")),
            passed: true,
            time: "2026-11-26T05:00:00+00:00",
            reasons: &[],
            reran: &reran,
            answers: &[],
            changed_tests: None,
            warnings: &[],
            tree: None,
            earlier_refusals: &[],
        };
        let expected = json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [
                {"name": "commit", "digest": {"gitCommit": "c0ffee"}},
                {"name": "refs/orchestrator/workflows/main", "digest": {"gitCommit": "abc"}},
            ],
            "predicateType": "https://slsa.dev/verification_summary/v1",
            "predicate": {
                "verifier": {
                    "id": "https://git-orchestrate.dev/attest/v1",
                    "version": {"git-orchestrate": env!("CARGO_PKG_VERSION")},
                },
                "timeVerified": "2026-11-26T05:00:00+00:00",
                "resourceUri": "git+commit:c0ffee",
                "verificationResult": "PASSED",
                "verifiedLevels": ["GIT_ORCHESTRATE_TDD_RERUN"],
                "slsaVersion": "1.0",
                "policy": {"uri": "git+blob:p1n:.orchestrate.toml", "digest": {"gitBlob": "b10b"}},
                "inputAttestations": [{
                    "uri": "git+ref:refs/orchestrator/workflows/main",
                    "digest": {"gitCommit": "abc"},
                }],
                "gitOrchestrate": {
                    "kind": "merge",
                    "workflow": "main",
                    "reran": ["gates: passed"],
                    "answers": [],
                    "reasons": [],
                },
            },
        });
        assert_eq!(statement(&facts), expected);
    }

    #[test]
    fn a_commit_no_workflow_records_fails_with_its_reason() {
        let reasons = vec!["no workflow".to_string()];
        let facts = Facts {
            commit: "c0ffee",
            kind: None,
            workflow: None,
            chain: None,
            policy: None,
            passed: false,
            time: "t",
            reasons: &reasons,
            reran: &[],
            answers: &[],
            changed_tests: None,
            warnings: &[],
            tree: None,
            earlier_refusals: &[],
        };
        let s = statement(&facts);
        assert_eq!(s["predicate"]["verificationResult"], "FAILED");
        assert_eq!(s["predicate"]["verifiedLevels"], json!(["FAILED"]));
        assert_eq!(s["subject"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            s["predicate"]["gitOrchestrate"]["reasons"],
            json!(["no workflow"])
        );
        assert!(s["predicate"].get("policy").is_none());
    }
}
