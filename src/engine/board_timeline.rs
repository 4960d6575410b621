//! A workflow's timeline for the board (docs/board.md, "A workflow's timeline"): its chain's
//! transitions as `workflow::timeline` reads them, with the final check's note on the squashed
//! commit and the attestation verdicts (this clone's and the remotes' notes) on the squashed
//! and the merged commit. Read-only and offline, like the board.

use serde::Serialize;

use super::attest::seal::{self, Attestation};
use super::{EngineError, Session};
use crate::store::{tracking_ref, workflow_ref};
use crate::workflow::notes::FinalNote;
use crate::workflow::state::ExitRecord;
use crate::workflow::timeline::{self, Entry};

/// The most transitions a timeline shows: the newest.
pub const TIMELINE_MAX: usize = 1000;

/// What `board --timeline` and `/workflow/<name>.json` report.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineReport {
    pub workflow: String,
    /// `local`, or `remote`: the remote's copy as last fetched, when this clone has none.
    pub shown: &'static str,
    pub tip: String,
    /// How many transitions the chain holds in all.
    pub total: usize,
    /// True when older transitions than the ones listed exist.
    pub truncated: bool,
    /// Oldest first.
    pub entries: Vec<TimelineEntry>,
}

/// A transition of the timeline, with the verdicts recorded beside the chain.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineEntry {
    #[serde(flatten)]
    pub entry: Entry,
    /// On a `squash`: the final check's note on the squashed commit.
    pub final_check: Option<FinalCheck>,
    /// On a `squash` or `merge`: the attestation notes on its commit.
    pub attestations: Vec<AttestationSeen>,
}

/// The final check, as its note (`kind: "final"`) on the squashed commit says.
#[derive(Clone, Debug, Serialize)]
pub struct FinalCheck {
    pub commit: String,
    /// What the verification rests on (`not verified: no gates` when no gate ran).
    pub verification: String,
    pub review_rounds: Option<u32>,
    pub final_checks_refused: usize,
    pub red_tests: Vec<RedProofView>,
}

/// A task's pinned RED test at the final check: failed on the base, passed on the squash.
#[derive(Clone, Debug, Serialize)]
pub struct RedProofView {
    pub step: String,
    pub command: String,
    pub base: String,
    #[serde(rename = "final")]
    pub squashed: String,
    /// `junit`, `libtest`, `tap`, …, or `exit code only`; `None` in older notes.
    pub evidence: Option<String>,
    /// The tests, by id, that failed on the base and passed on the squash.
    pub tests: Vec<String>,
}

/// An attestation note on a commit, judged as `verify` judges it.
#[derive(Clone, Debug, Serialize)]
pub struct AttestationSeen {
    pub commit: String,
    /// `local` (this clone's notes: `attest` run here), else the remote whose notes hold it,
    /// as last fetched.
    pub source: String,
    /// Whose verdict it is, by the notes ref that holds it: `local` (this clone's
    /// `refs/notes/orchestrator-attest`), `server` (a remote's: its server hook writes them),
    /// `CI` (`refs/notes/orchestrator-attest-ci`, here or a remote's: a CI job's).
    pub by: &'static str,
    /// Signed by a key main's `.orchestrate/allowed_signers` lists for
    /// `git-orchestrate-attest`: only then is the verdict one (`passed` or `failed`).
    pub signed: bool,
    #[serde(flatten)]
    pub verdict: Attestation,
}

fn exit_text(exit: &ExitRecord) -> String {
    match exit {
        ExitRecord::Code(code) => format!("exit {code}"),
        ExitRecord::Signal(signal) => format!("signal {signal}"),
        ExitRecord::TimedOut { after_ms } => format!("timed out after {after_ms} ms"),
    }
}

/// The timeline of `workflow`: this clone's copy, else `remote`'s as last fetched.
pub fn timeline(
    session: &Session,
    workflow: &str,
    remote: Option<&str>,
) -> Result<TimelineReport, EngineError> {
    let store = &session.store;
    let local = store.local_workflows()?;
    let (shown, tip, reference) = match local.get(workflow) {
        Some(tip) => ("local", *tip, workflow_ref(workflow)),
        None => {
            let found = match remote {
                Some(remote) => store
                    .tracking_workflows(remote)?
                    .get(workflow)
                    .map(|tip| (*tip, tracking_ref(remote, workflow))),
                None => None,
            };
            let Some((tip, reference)) = found else {
                return Err(EngineError::BadInput {
                    message: format!(
                        "there is no workflow \"{workflow}\" here or on the remote as last fetched"
                    ),
                    hint: "`git orchestrate board` lists the workflows.".to_string(),
                });
            };
            ("remote", tip, reference)
        }
    };
    let (records, total) = store.recorded_transitions(tip, &reference, TIMELINE_MAX)?;
    // The tiers as this clone's configuration sets them: the defaults when it cannot be read.
    let thresholds = session
        .load_config(None)
        .map(|l| l.config.debugging.thresholds())
        .unwrap_or_default();
    let main = session.main_branch(None)?;
    let mut notes = store.notes()?;
    let mut entries = Vec::new();
    for entry in timeline::timeline(&records, &thresholds) {
        let mut final_check = None;
        if let Some(commit) = &entry.squashed {
            final_check = notes
                .get(commit)
                .ok()
                .flatten()
                .and_then(|text| final_note(&text))
                .map(|note| FinalCheck {
                    commit: commit.clone(),
                    verification: note.verification.clone(),
                    review_rounds: note.review.as_ref().map(|r| r.rounds),
                    final_checks_refused: note.final_checks_refused,
                    red_tests: note
                        .red_tests
                        .iter()
                        .map(|p| RedProofView {
                            step: p.step.clone(),
                            command: p.command.clone(),
                            base: exit_text(&p.base),
                            squashed: exit_text(&p.squashed),
                            evidence: p.evidence.clone(),
                            tests: p.tests.clone(),
                        })
                        .collect(),
                });
        }
        let mut attestations = Vec::new();
        for commit in entry.squashed.iter().chain(entry.merged.iter()) {
            // A note that cannot be judged here (no ssh-keygen) is left out, not guessed.
            if let Ok(judged) = seal::judge_each(session, &main, commit) {
                for (notes_ref, verdict) in judged {
                    let (source, by) = source_of(&notes_ref);
                    attestations.push(AttestationSeen {
                        commit: commit.clone(),
                        source,
                        by,
                        signed: matches!(
                            verdict,
                            Attestation::Passed { .. } | Attestation::Failed { .. }
                        ),
                        verdict,
                    });
                }
            }
        }
        entries.push(TimelineEntry {
            entry,
            final_check,
            attestations,
        });
    }
    Ok(TimelineReport {
        workflow: workflow.to_string(),
        shown,
        tip: tip.to_string(),
        total,
        truncated: total > entries.len(),
        entries,
    })
}

/// Where a notes ref's verdicts come from: `local` for this clone's, else the remote's name;
/// and whose they are: `CI` for the CI job's ref, else `local` or `server`.
fn source_of(notes_ref: &str) -> (String, &'static str) {
    let remote = notes_ref.strip_prefix("refs/notes/remotes/");
    if let Some(ci) = notes_ref.strip_suffix("-ci") {
        let source = remote
            .and_then(|rest| rest.strip_suffix("/orchestrator-attest-ci"))
            .or(remote.is_none().then_some("local"));
        if let (Some(source), true) = (source, ci.ends_with("orchestrator-attest")) {
            return (source.to_string(), "CI");
        }
    }
    match remote.and_then(|rest| rest.strip_suffix("/orchestrator-attest")) {
        Some(remote) => (remote.to_string(), "server"),
        None => ("local".to_string(), "local"),
    }
}

/// The `kind: "final"` line of a note, read.
fn final_note(text: &str) -> Option<FinalNote> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<FinalNote>(line).ok())
        .find(|note| note.kind == "final")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_named_by_their_notes_ref() {
        let named = |r: &str| {
            let (source, by) = source_of(r);
            (source, by.to_string())
        };
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            named("refs/notes/orchestrator-attest"),
            pair("local", "local")
        );
        assert_eq!(
            named("refs/notes/remotes/origin/orchestrator-attest"),
            pair("origin", "server")
        );
        assert_eq!(
            named("refs/notes/orchestrator-attest-ci"),
            pair("local", "CI")
        );
        assert_eq!(
            named("refs/notes/remotes/up/stream/orchestrator-attest-ci"),
            pair("up/stream", "CI")
        );
    }
}

#[cfg(test)]
#[path = "board_timeline_tests.rs"]
mod unit_tests;
