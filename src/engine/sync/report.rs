//! What `sync` reports: per workflow, for the notes and per PR branch, and as a whole
//! (`sync --json`).

use serde::Serialize;

use super::plan::Action;
use crate::engine::WorkflowState;
use crate::store::HistoryEntry;

/// What `sync` did with one workflow.
#[derive(Clone, Debug, Serialize)]
pub struct WorkflowSync {
    pub workflow: String,
    pub action: Action,
    /// The local tip after the sync (`None`: still absent).
    pub tip: Option<String>,
    pub remote_tip: Option<String>,
    /// A TDD workflow's state or a ticket's (docs/tickets.md).
    pub state: Option<WorkflowState>,
    /// Transitions this clone had that the remote had not, and the other way round.
    pub ahead: usize,
    pub behind: usize,
    /// For a divergence: the shared transition, and each side's transitions since.
    pub base: Option<String>,
    #[serde(serialize_with = "brief_history")]
    pub local_since: Vec<HistoryEntry>,
    #[serde(serialize_with = "brief_history")]
    pub remote_since: Vec<HistoryEntry>,
    /// Where `--take` kept the tip it moved away from.
    pub backup: Option<String>,
}

/// Each side's transitions since a divergence, as `sync --json` lists them.
fn brief_history<S: serde::Serializer>(entries: &[HistoryEntry], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Brief<'a> {
        commit: &'a str,
        subject: &'a str,
        time: &'a str,
    }
    s.collect_seq(entries.iter().map(|e| Brief {
        commit: &e.commit,
        subject: &e.subject,
        time: &e.time,
    }))
}

/// What `sync` did with the notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotesSync {
    /// `Nothing`, `Adopt`, `FastForward` or `Push`; a union merge is `Push` with `merged`.
    pub action: Action,
    pub merged: bool,
}

/// What `sync` did with a workflow's PR branch.
#[derive(Clone, Debug, Serialize)]
pub struct BranchSync {
    pub workflow: String,
    pub branch: String,
    pub action: Action,
    pub backup: Option<String>,
    /// Why the local branch could not be moved, when it could not.
    pub not_moved: Option<String>,
}

/// What `sync` did (docs/agent-guide.md, "Other commands").
#[derive(Clone, Debug)]
pub struct SyncReport {
    pub remote: String,
    pub refspecs_added: Vec<String>,
    pub workflows: Vec<WorkflowSync>,
    pub notes: NotesSync,
    pub branches: Vec<BranchSync>,
    /// The remote refs the push updated.
    pub pushed: Vec<String>,
    /// Fetch–reconcile–push rounds: more than one when a push lost a race.
    pub rounds: u32,
    /// This clone's claims: renewed, released or found lost (docs/refs.md, "Claims").
    pub claims: crate::engine::claims::Renewal,
    /// What `[archive] auto` archived before the fetch, when it did.
    pub archived: Option<crate::engine::ArchiveReport>,
    pub warnings: Vec<String>,
}

impl Serialize for SyncReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct View<'a> {
            remote: &'a str,
            refspecs_added: &'a [String],
            workflows: &'a [WorkflowSync],
            notes: &'a NotesSync,
            branches: &'a [BranchSync],
            pushed: &'a [String],
            rounds: u32,
            claims: &'a crate::engine::claims::Renewal,
            #[serde(skip_serializing_if = "Option::is_none")]
            archived: Option<&'a crate::engine::ArchiveReport>,
            diverged: bool,
            warnings: &'a [String],
        }
        View {
            remote: &self.remote,
            refspecs_added: &self.refspecs_added,
            workflows: &self.workflows,
            notes: &self.notes,
            branches: &self.branches,
            pushed: &self.pushed,
            rounds: self.rounds,
            claims: &self.claims,
            archived: self.archived.as_ref(),
            diverged: self.diverged(),
            warnings: &self.warnings,
        }
        .serialize(serializer)
    }
}

impl SyncReport {
    /// True when a workflow or a branch diverged and was left as it was.
    pub fn diverged(&self) -> bool {
        self.workflows.iter().any(|w| w.action == Action::Diverged)
            || self.branches.iter().any(|b| b.action == Action::Diverged)
    }
}
