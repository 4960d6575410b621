//! What `attest` remembers off the machine through the verdict notes (docs/integrity.md, "A
//! tree that failed stays failed, off the server too"): a FAILED verdict on a commit of the
//! same tree under the same policy, signed by a verifier main lists, makes a later pass of
//! that tree `flaky`.
//! Only signed verdicts count, as for `verify`: whoever can write a clone's notes could have
//! written an unsigned one, a FAILED one as well as a PASSED one.

use serde::Serialize;
use serde_json::Value;

use super::seal::split_note;
use super::verifier::Judged;
use crate::engine::answers::AnswerCheck;
use crate::engine::{EngineError, Session};
use crate::exec::ssh::{self, Verified};

/// An earlier FAILED verdict on the same tree under the same policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EarlierRefusal {
    /// The commit the verdict was on.
    pub commit: String,
    /// When it was reached (the statement's `timeVerified`).
    pub time: String,
    pub reasons: Vec<String>,
}

/// One verdict note on a commit the judged repository has, with that commit's tree.
struct Noted {
    blob: String,
    commit: String,
    tree: String,
}

/// The verdict notes of the judged repository (its own `refs/notes/orchestrator-attest` and
/// `refs/notes/orchestrator-attest-ci`, and the remotes' copies a fetch brought), listed
/// once; each is read only when its commit's tree is the one asked about.
pub struct Memory<'j> {
    judged: &'j Judged,
    notes: Vec<Noted>,
    /// Main's `.orchestrate/allowed_signers`: the verifiers whose verdicts count.
    allowed: Vec<u8>,
}

impl<'j> Memory<'j> {
    /// Lists the verdict notes of `judged`: one `for-each-ref`, and one `notes list` and one
    /// `cat-file` per notes ref.
    pub fn read(judged: &'j Judged) -> Result<Memory<'j>, EngineError> {
        let git = &judged.git;
        let mut notes = Vec::new();
        for (reference, _) in git.refs_under(&["refs/notes/"])? {
            // The CI job's signed verdicts too (`--ci-note`): a tree one job saw fail stays
            // failed for the next job, which fetches them.
            let ours = [
                crate::store::ATTEST_NOTES_REF,
                crate::store::ATTEST_CI_NOTES_REF,
            ]
            .contains(&reference.as_str())
                || (reference.starts_with("refs/notes/remotes/")
                    && (reference.ends_with("/orchestrator-attest")
                        || reference.ends_with("/orchestrator-attest-ci")));
            if !ours {
                continue;
            }
            let listed = git.notes_list(&reference)?;
            let commits: Vec<&str> = listed.iter().map(|(_, c)| c.as_str()).collect();
            let trees: std::collections::HashMap<String, String> =
                git.trees_of(&commits)?.into_iter().collect();
            for (blob, commit) in &listed {
                if let Some(tree) = trees.get(commit) {
                    notes.push(Noted {
                        blob: blob.clone(),
                        commit: commit.clone(),
                        tree: tree.clone(),
                    });
                }
            }
        }
        let allowed = super::ci_notes::main_allowed_signers(judged)?;
        Ok(Memory {
            judged,
            notes,
            allowed,
        })
    }

    /// The tree of `commit` in the judged repository.
    pub fn tree_of(&self, commit: &str) -> Result<String, EngineError> {
        Ok(self.judged.git.tree_of(commit)?)
    }

    /// Every earlier refusal of `tree` under the policy `policy` (the pinned config blob)
    /// that a listed verifier signed: each FAILED note on a commit of that tree that ran the
    /// PR's code (a failure of the record alone is not the tree's), and the refusals each of
    /// them lists in turn; oldest first (a stable sort: one carried in a later verdict stays
    /// before it), each once.
    pub fn refusals(
        &self,
        session: &Session,
        tree: &str,
        policy: &str,
    ) -> Result<Vec<EarlierRefusal>, EngineError> {
        let mut found: Vec<EarlierRefusal> = Vec::new();
        if self.allowed.is_empty() {
            return Ok(found);
        }
        for noted in self.notes.iter().filter(|n| n.tree == tree) {
            let Some(bytes) = self
                .judged
                .git
                .blob_within(&noted.blob, crate::input::CAP)?
            else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let (line, signature) = split_note(&text);
            let Ok(statement) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(refusal) = remembered(&statement, &noted.commit, tree, policy) else {
                continue;
            };
            let Some(signature) = signature else {
                continue;
            };
            if !self.signed(session, line, signature)? {
                continue;
            }
            let listed = statement["predicate"]["gitOrchestrate"]["earlierRefusals"].clone();
            let listed: Vec<EarlierRefusal> = serde_json::from_value::<Vec<Listed>>(listed)
                .unwrap_or_default()
                .into_iter()
                .map(|l| EarlierRefusal {
                    commit: l.commit,
                    time: l.time,
                    reasons: l.reasons,
                })
                .collect();
            for refusal in listed.into_iter().chain([refusal]) {
                if !found.contains(&refusal) {
                    found.push(refusal);
                }
            }
        }
        found.sort_by(|a, b| a.time.cmp(&b.time).then(a.commit.cmp(&b.commit)));
        Ok(found)
    }

    /// Whether a verifier main's allowed signers list for `git-orchestrate-attest` signed
    /// `line`.
    fn signed(&self, session: &Session, line: &str, signature: &str) -> Result<bool, EngineError> {
        let program = crate::engine::answers::ssh_keygen(session)?;
        let checked = ssh::verify_in(
            &program,
            &self.allowed,
            ssh::ATTEST_NAMESPACE,
            signature,
            format!("{line}\n").as_bytes(),
        )
        .map_err(|e| EngineError::Io {
            what: "check a remembered verdict's signature".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(matches!(checked, Verified::Good { .. }))
    }
}

/// A refusal as a statement lists it among its earlier ones.
#[derive(serde::Deserialize)]
struct Listed {
    commit: String,
    time: String,
    #[serde(default)]
    reasons: Vec<String>,
}

/// The refusal `statement` (a note on `commit`) records, when it is a FAILED verdict about
/// `commit`, of `tree` under `policy`, that ran the PR's code (pure; its signature is checked
/// apart).
fn remembered(statement: &Value, commit: &str, tree: &str, policy: &str) -> Option<EarlierRefusal> {
    let predicate = &statement["predicate"];
    let ours = &predicate["gitOrchestrate"];
    let about = super::seal::subject_commit(statement);
    let ran = ours["reran"].as_array().is_some_and(|r| !r.is_empty());
    // A refusal that only awaited a human's approval by name is the policy's, not the tree's.
    let awaiting = ours["reasons"].as_array().is_some_and(|r| {
        !r.is_empty()
            && r.iter().all(|x| {
                x.as_str()
                    .is_some_and(|x| x.starts_with(crate::engine::finalize::AWAITING_APPROVAL))
            })
    });
    (about == Some(commit)
        && !awaiting
        && predicate["verificationResult"] == "FAILED"
        && predicate["policy"]["digest"]["gitBlob"] == policy
        && ours["tree"] == tree
        && ran)
        .then(|| EarlierRefusal {
            commit: commit.to_string(),
            time: predicate["timeVerified"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            reasons: ours["reasons"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
}

/// Whose answer lifts a remembered failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answerer {
    /// Any answer that stands as every human answer must (the local final check).
    Standing,
    /// Only one signed by a key the pinned allowed signers list, whatever `[human] require`
    /// says (`attest` and the server hook): unsigned, an answer is only attributed, and the
    /// agent can write that itself (`GIT_ORCHESTRATE_HUMAN=1`).
    Signed,
}

impl Answerer {
    /// Whether `answer` is one this answerer's rule takes. Asked while the answers are
    /// searched, so that a later one it does not take (an agent's unsigned answer after a
    /// human's signed one) hides nothing.
    fn takes(self, answer: &AnswerCheck) -> bool {
        self == Answerer::Standing
            || matches!(
                answer.verdict,
                crate::engine::answers::AnswerVerdict::Signed { .. }
            )
    }
}

/// The human answer in a PR's chain (from `tip` back to `stop`) that lifts a remembered
/// failure of `tree` under `policy` (a config blob; `None`: no configuration pinned): the
/// newest `approve --flaky --tree TREE` standing as every human answer must (signed by a key
/// the pinned allowed signers list where `[human] require = "signature"`:
/// `AnswerCheck::accepts_flaky`) and given under that same policy
/// (`answers::answer_policy`). The one rule the local final check
/// (src/engine/finalize/remembered.rs), `attest` and the server hook
/// (src/engine/attest/receive.rs) hold a pass after a failure to: a human who accepted luck
/// under one set of gates has not accepted it under another.
pub fn accepted(
    session: &Session,
    (tip, stop): (gix::ObjectId, Option<gix::ObjectId>),
    tree: &str,
    policy: Option<&str>,
    who: Answerer,
) -> Result<Option<AnswerCheck>, EngineError> {
    let answers =
        crate::engine::answers::judge_answers(session, session.store.workflow(), tip, stop)?;
    let store = &session.store;
    // Every answer for the tree is looked at: one given under another policy does not hide
    // a later one given under this.
    for answer in answers
        .into_iter()
        .filter(|a| a.accepts_flaky(tree) && who.takes(a))
    {
        let id = gix::ObjectId::from_hex(answer.commit.as_bytes())
            .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
        let Some(parent) = store.commit_record(id)?.parents.first().copied() else {
            continue;
        };
        let before = store.read_at(parent, &crate::store::workflow_ref(store.workflow()))?;
        let given_under = crate::engine::answers::answer_policy(session, &before.state)?;
        if given_under.as_deref() == policy {
            return Ok(Some(answer));
        }
    }
    Ok(None)
}

/// [`accepted`] for a finished ticket (`ticket`, whose chain ends at `tip`): the newest
/// `approve --flaky --tree TREE` recorded after it finished, on that same ticket (a later
/// ticket on the same ref answers for its own), standing as every answer must, and given
/// under `policy` (the ticket's config blob: a ticket is pinned once, when it begins).
pub fn accepted_in_ticket(
    session: &Session,
    (tip, ticket): (gix::ObjectId, &crate::workflow::ticket::Ticket),
    tree: &str,
    policy: Option<&str>,
    who: Answerer,
) -> Result<Option<AnswerCheck>, EngineError> {
    let answers =
        crate::engine::answers::judge_ticket_answers(session, session.store.workflow(), tip)?;
    Ok(answers
        .into_iter()
        .find(|(answer, given_on)| {
            answer.accepts_flaky(tree)
                && who.takes(answer)
                && given_on.finished.is_some()
                && given_on.finished == ticket.finished
                && given_on.config.as_deref() == policy
        })
        .map(|(answer, _)| answer))
}

/// The warning a verdict carries when a human accepted a pass of `tree` after its earlier
/// refusals (`approve --flaky`): who, and whether signed.
pub fn accepted_warning(tree: &str, answer: &AnswerCheck) -> String {
    format!(
        "its tree {} was refused before and passes now; a human accepted this pass by name in {} \
         ({})",
        crate::short_id(tree),
        crate::short_id(&answer.commit),
        answer.given_by()
    )
}

/// The reason a verdict that passed now fails: its tree failed under this policy before
/// (pure).
pub fn flaky_reason(tree: &str, earlier: &[EarlierRefusal]) -> String {
    format!(
        "flaky: its tree {} FAILED under this policy before ({}) and passes now: a pass after a \
         failure is luck, not proof",
        crate::short_id(tree),
        earlier
            .iter()
            .map(|e| format!("in {} at {}", crate::short_id(&e.commit), e.time))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn statement(result: &str, commit: &str, tree: &str, policy: &str, reran: &[&str]) -> Value {
        json!({
            "subject": [{"name": "commit", "digest": {"gitCommit": commit}}],
            "predicate": {
                "timeVerified": "2026-11-29T08:00:00Z",
                "verificationResult": result,
                "policy": {"digest": {"gitBlob": policy}},
                "gitOrchestrate": {"tree": tree, "reran": reran, "reasons": ["it failed"]},
            },
        })
    }

    #[test]
    fn only_a_failed_run_of_the_same_tree_and_policy_on_its_own_commit_is_remembered() {
        let failed = statement("FAILED", "c1", "t1", "p1", &["the gates"]);
        assert_eq!(
            remembered(&failed, "c1", "t1", "p1"),
            Some(EarlierRefusal {
                commit: "c1".into(),
                time: "2026-11-29T08:00:00Z".into(),
                reasons: vec!["it failed".into()],
            })
        );
        assert_eq!(
            remembered(&failed, "c2", "t1", "p1"),
            None,
            "another commit's"
        );
        assert_eq!(remembered(&failed, "c1", "t2", "p1"), None, "another tree");
        assert_eq!(
            remembered(&failed, "c1", "t1", "p2"),
            None,
            "another policy"
        );
        let passed = statement("PASSED", "c1", "t1", "p1", &["the gates"]);
        assert_eq!(remembered(&passed, "c1", "t1", "p1"), None);
        let record_only = statement("FAILED", "c1", "t1", "p1", &[]);
        assert_eq!(
            remembered(&record_only, "c1", "t1", "p1"),
            None,
            "nothing of the tree ran"
        );
    }

    #[test]
    fn the_flaky_reason_names_every_earlier_refusal() {
        let earlier = [
            EarlierRefusal {
                commit: "0123456789abcdef".into(),
                time: "t1".into(),
                reasons: Vec::new(),
            },
            EarlierRefusal {
                commit: "fedcba9876543210".into(),
                time: "t2".into(),
                reasons: Vec::new(),
            },
        ];
        assert_eq!(
            flaky_reason("aaaabbbbccccdddd", &earlier),
            "flaky: its tree aaaabbbbcccc FAILED under this policy before (in 0123456789ab at t1; \
             in fedcba987654 at t2) and passes now: a pass after a failure is luck, not proof"
        );
    }
}
