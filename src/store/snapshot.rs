//! A TDD workflow's state: the [`Snapshot`] a commit's tree holds, its files on demand, and
//! the other workflows of the repository.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::progress::{Progress, read_state};
use super::{Store, StoreError, git_err, workflow_ref};
use crate::workflow::branch_name::BranchHolder;
use crate::workflow::plan::{Plan, PlanSummary, StepId};
use crate::workflow::state::State;

/// The files of a workflow's tree.
pub(super) const STATE_FILE: &str = "state.json";
pub(super) const PLAN_FILE: &str = "pr.json";
pub(super) const OUTPUT_FILE: &str = "output.log";
pub(super) const ESCALATION_FILE: &str = "escalation.md";
pub(super) const REVIEW_FILE: &str = "review.json";
/// The file of a ticket workflow's tree (docs/tickets.md), instead of all of the above.
pub const TICKET_FILE: &str = "ticket.json";

/// The entries of a workflow commit's tree, by name.
pub(super) type Entries = BTreeMap<String, ObjectId>;

/// The state of a workflow at its tip. The plan is summarised; the full plan is parsed only
/// when asked for ([`Store::plan`]), because a 200-task `pr.json` costs more to parse than
/// everything else a `get-task` does.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub tip: ObjectId,
    /// The tip commit's committer time, seconds since the epoch: the workflow's last activity.
    pub time: i64,
    pub state: State,
    /// The active plan's summary, `None` when no plan is active.
    pub summary: Option<PlanSummary>,
    /// The full plan, progress included, when reading had to parse it anyway (a missing or
    /// stale summary).
    pub(super) parsed: Option<Plan>,
    /// The steps completed since `pr.json` was stored.
    pub(super) done: Vec<StepId>,
    /// The store's plan record as read, when it describes this `pr.json`.
    pub(super) progress: Option<Progress>,
    pub(super) entries: BTreeMap<String, ObjectId>,
}

impl Snapshot {
    /// True when the tree holds a file of this name (the audit tells a ticket's file mixed
    /// into a TDD workflow's tree by it).
    pub fn has_file(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub fn has_output_log(&self) -> bool {
        self.entries.contains_key(OUTPUT_FILE)
    }

    /// The blob `pr.json` names, while a plan is active.
    pub fn plan_blob(&self) -> Option<ObjectId> {
        self.entries.get(PLAN_FILE).copied()
    }

    /// The steps completed since `pr.json` was stored.
    pub fn done(&self) -> &[StepId] {
        &self.done
    }
}

impl Store {
    /// A command a person or agent can run to see the full output of the last run.
    pub fn output_log_command(&self) -> String {
        format!("git show {}:{OUTPUT_FILE}", self.ref_name())
    }

    /// The commit time and top-level tree entries of commit `tip`: what tells the kinds
    /// apart, and where each kind's files are.
    pub(super) fn commit_entries(
        &self,
        tip: ObjectId,
        reference: &str,
    ) -> Result<(i64, Entries), StoreError> {
        let corrupt = |what: &str, message: String| corrupt(reference, tip, what, message);
        let hash = self.repo.object_hash();
        let commit = self
            .object_of_kind(tip, gix::objs::Kind::Commit)
            .map_err(|e| corrupt("the tip commit", e))?;
        let commit = gix::objs::CommitRef::from_bytes(&commit, hash)
            .map_err(|e| corrupt("the tip commit", e.to_string()))?;
        let time = commit.time().map(|t| t.seconds).unwrap_or_default();
        let tree = self
            .object_of_kind(commit.tree(), gix::objs::Kind::Tree)
            .map_err(|e| corrupt("the tree", e))?;
        let mut entries = BTreeMap::new();
        for entry in gix::objs::TreeRef::from_bytes(&tree, hash)
            .map_err(|e| corrupt("the tree", e.to_string()))?
            .entries
        {
            entries.insert(
                entry.filename.to_str_lossy().into_owned(),
                entry.oid.to_owned(),
            );
        }
        Ok((time, entries))
    }

    /// The TDD workflow state of commit `tip`, whose tree `entries` are read already.
    pub(super) fn tdd_at(
        &self,
        (tip, time): (ObjectId, i64),
        entries: Entries,
        reference: &str,
    ) -> Result<Snapshot, StoreError> {
        let corrupt = |what: &str, message: String| corrupt(reference, tip, what, message);
        let blob = |name: &str| -> Result<Option<Vec<u8>>, StoreError> {
            entries
                .get(name)
                .map(|id| {
                    self.object_of_kind(*id, gix::objs::Kind::Blob)
                        .map(|data| data.to_vec())
                        .map_err(|e| corrupt(name, e))
                })
                .transpose()
        };
        let Some(state_bytes) = blob(STATE_FILE)? else {
            return Err(corrupt(STATE_FILE, "it is missing".into()));
        };
        let (state, progress) = read_state(&state_bytes).map_err(|m| corrupt(STATE_FILE, m))?;
        let plan_id = entries.get(PLAN_FILE).map(ToString::to_string);
        let mut trusted = None;
        let (summary, parsed, done) = match (&plan_id, progress) {
            (None, _) => (None, None, Vec::new()),
            // The summary describes exactly this pr.json: no need to parse it.
            (Some(id), Some(progress)) if &progress.plan == id => {
                let read = (Some(progress.summary.clone()), None, progress.done.clone());
                trusted = Some(progress);
                read
            }
            (Some(_), progress) => {
                let bytes = blob(PLAN_FILE)?.unwrap_or_default();
                // Progress outlives a hand edit of the plan: it is ours, the edit is not.
                let done = progress.map(|p| p.done).unwrap_or_default();
                let plan =
                    plan_as_now(&bytes, &done).map_err(|e| corrupt(PLAN_FILE, e.to_string()))?;
                (Some(plan.summary()), Some(plan), done)
            }
        };
        Ok(Snapshot {
            tip,
            time,
            state,
            summary,
            parsed,
            done,
            progress: trusted,
            entries,
        })
    }

    /// The PR branches the other workflows of this repository record. A workflow that cannot
    /// be read is left out: its own commands report it, and it blocks no one else.
    pub fn other_workflow_branches(&self) -> Result<Vec<BranchHolder>, StoreError> {
        Ok(self
            .other_workflows()?
            .into_iter()
            .filter_map(|(name, snapshot)| {
                Some(BranchHolder {
                    branch: snapshot.state.branch()?.to_string(),
                    status: snapshot.state.status(),
                    workflow: name,
                })
            })
            .collect())
    }

    /// The PR titles of the other workflows of this repository that have a plan, by workflow.
    pub fn other_active_prs(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .other_workflows()?
            .into_iter()
            .filter_map(|(name, snapshot)| Some((name, snapshot.summary?.title)))
            .collect())
    }

    /// The other workflows of this repository that can be read, by name.
    fn other_workflows(&self) -> Result<Vec<(String, Snapshot)>, StoreError> {
        Ok(self
            .local_workflows()?
            .into_iter()
            .filter(|(name, _)| *name != self.workflow)
            .filter_map(|(name, tip)| {
                // A ticket holds no TDD state to name a branch or a PR by.
                let snapshot = self.workflow_at(tip, &workflow_ref(&name)).ok()?;
                Some((name, snapshot.into_tdd()?))
            })
            .collect())
    }

    /// The commit the workflow ref points at.
    pub fn tip(&self) -> Result<Option<ObjectId>, StoreError> {
        if self.ref_commands()?.is_some() {
            return self.direct_ref(&self.ref_name());
        }
        if let Some(id) = self.loose_ref(self.ref_name.as_bstr().to_str().unwrap_or_default()) {
            return Ok(Some(id));
        }
        self.refuse_waiting_ref(&self.ref_name())?;
        let reference = self
            .repo()?
            .try_find_reference(&self.ref_name)
            .map_err(git_err)?;
        Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// The snapshot's full plan as it now reads: `pr.json`, parsed on demand, with the steps
    /// completed since it was stored marked DONE.
    pub fn plan(&self, snapshot: &Snapshot) -> Result<Option<Plan>, StoreError> {
        if let Some(plan) = &snapshot.parsed {
            return Ok(Some(plan.clone()));
        }
        let Some(id) = snapshot.entries.get(PLAN_FILE) else {
            return Ok(None);
        };
        let bytes = self.blob_of(*id)?;
        let plan = plan_as_now(&bytes, &snapshot.done).map_err(|e| StoreError::Corrupt {
            reference: self.ref_name(),
            commit: snapshot.tip.to_string(),
            what: PLAN_FILE.to_string(),
            message: e.to_string(),
        })?;
        Ok(Some(plan))
    }

    /// The full `output.log` of the snapshot, when there is one.
    pub fn output_log(&self, snapshot: &Snapshot) -> Result<Option<Vec<u8>>, StoreError> {
        self.file(snapshot, OUTPUT_FILE)
    }

    /// The agent's escalation report, while the workflow is halted for it.
    pub fn escalation(&self, snapshot: &Snapshot) -> Result<Option<String>, StoreError> {
        Ok(self
            .file(snapshot, ESCALATION_FILE)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// The last review's record (`review.json`), when there is one.
    pub fn review(&self, snapshot: &Snapshot) -> Result<Option<Vec<u8>>, StoreError> {
        self.file(snapshot, REVIEW_FILE)
    }

    /// A command that prints the active plan, to start a re-plan from.
    pub fn plan_show_command(&self) -> String {
        format!("git show {}:{PLAN_FILE}", self.ref_name())
    }

    /// A command that prints the last review's findings.
    pub fn review_show_command(&self) -> String {
        format!("git show {}:{REVIEW_FILE}", self.ref_name())
    }

    /// A command that prints the escalation report.
    pub fn escalation_command(&self) -> String {
        format!("git show {}:{ESCALATION_FILE}", self.ref_name())
    }

    fn file(&self, snapshot: &Snapshot, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        snapshot
            .entries
            .get(name)
            .map(|id| self.blob_of(*id).map(|data| data.to_vec()))
            .transpose()
    }
}

/// The error for a workflow commit that cannot be read as what it says it is.
pub(super) fn corrupt(reference: &str, tip: ObjectId, what: &str, message: String) -> StoreError {
    StoreError::Corrupt {
        reference: reference.to_string(),
        commit: tip.to_string(),
        what: what.to_string(),
        message,
    }
}

/// `pr.json` as stored, with `done`, the steps completed since, marked DONE.
fn plan_as_now(bytes: &[u8], done: &[StepId]) -> Result<Plan, serde_json::Error> {
    let mut plan: Plan = serde_json::from_slice(bytes)?;
    for step in done {
        plan.complete_step(*step);
    }
    Ok(plan)
}
