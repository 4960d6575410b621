//! Which kind of workflow a commit holds, told once from its tree (docs/tickets.md): the
//! one read that every command serving both kinds dispatches on, and the reads of one kind
//! (a TDD command's, a ticket command's) by it.

use gix::ObjectId;

use super::snapshot::{STATE_FILE, Snapshot, TICKET_FILE};
use super::tickets::TicketSnapshot;
use super::{Store, StoreError, git_err};

/// A workflow as read at one commit: a TDD workflow's state, or a ticket.
#[derive(Clone, Debug)]
pub enum Workflow {
    Tdd(Box<Snapshot>),
    Ticket(Box<TicketSnapshot>),
}

/// What kind of workflow a commit holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkflowKind {
    Tdd,
    Ticket,
}

impl Workflow {
    pub fn kind(&self) -> WorkflowKind {
        match self {
            Workflow::Tdd(_) => WorkflowKind::Tdd,
            Workflow::Ticket(_) => WorkflowKind::Ticket,
        }
    }

    /// The TDD workflow's snapshot; `None` for a ticket.
    pub fn into_tdd(self) -> Option<Snapshot> {
        match self {
            Workflow::Tdd(snapshot) => Some(*snapshot),
            Workflow::Ticket(_) => None,
        }
    }
}

/// The kind a tree with these top-level names holds: a ticket when it has `ticket.json`
/// and no `state.json` (a tree with both is a TDD workflow's, and `audit` names the mix).
pub(super) fn kind_of<'a>(mut names: impl Iterator<Item = &'a str>) -> WorkflowKind {
    let (mut ticket, mut state) = (false, false);
    for name in names.by_ref() {
        ticket |= name == TICKET_FILE;
        state |= name == STATE_FILE;
    }
    if ticket && !state {
        WorkflowKind::Ticket
    } else {
        WorkflowKind::Tdd
    }
}

impl Store {
    /// The workflow at its tip, either kind; `None` when it does not exist yet.
    pub fn read_workflow(&self) -> Result<Option<Workflow>, StoreError> {
        match self.tip()? {
            Some(tip) => self.workflow_at(tip, &self.ref_name()).map(Some),
            None => Ok(None),
        }
    }

    /// The workflow commit `tip` holds, either kind, which `reference` (named in errors)
    /// points at. The commit and its tree are read once; a record that cannot be read is an
    /// error, never taken for the other kind.
    pub fn workflow_at(&self, tip: ObjectId, reference: &str) -> Result<Workflow, StoreError> {
        let Some(remembered) = &self.remembered else {
            return self.decode_workflow(tip, reference);
        };
        if let Some((id, name, workflow)) = &*remembered.borrow()
            && *id == tip
            && name == reference
        {
            return Ok(workflow.clone());
        }
        let workflow = self.decode_workflow(tip, reference)?;
        *remembered.borrow_mut() = Some((tip, reference.to_string(), workflow.clone()));
        Ok(workflow)
    }

    fn decode_workflow(&self, tip: ObjectId, reference: &str) -> Result<Workflow, StoreError> {
        let (time, entries) = self.commit_entries(tip, reference)?;
        Ok(match kind_of(entries.keys().map(String::as_str)) {
            WorkflowKind::Tdd => {
                Workflow::Tdd(Box::new(self.tdd_at((tip, time), entries, reference)?))
            }
            WorkflowKind::Ticket => Workflow::Ticket(Box::new(self.ticket_in(
                (tip, time),
                &entries,
                reference,
            )?)),
        })
    }

    /// Reads the TDD workflow at its tip, or `None` when it does not exist yet; a ticket
    /// workflow is refused ([`StoreError::TicketWorkflow`]): for the TDD commands. Code that
    /// serves both kinds dispatches on [`Store::read_workflow`].
    pub fn read(&self) -> Result<Option<Snapshot>, StoreError> {
        match self.tip()? {
            Some(tip) => self.read_at(tip, &self.ref_name()).map(Some),
            None => Ok(None),
        }
    }

    /// Reads the TDD workflow state held by commit `tip`, which `reference` (named in errors)
    /// points at: this workflow's tip, or a remote's copy of it. A ticket is refused.
    pub fn read_at(&self, tip: ObjectId, reference: &str) -> Result<Snapshot, StoreError> {
        match self.workflow_at(tip, reference)? {
            Workflow::Tdd(snapshot) => Ok(*snapshot),
            Workflow::Ticket(_) => Err(StoreError::TicketWorkflow {
                reference: reference.to_string(),
            }),
        }
    }

    /// The kind of workflow commit `tip` holds, told by its tree alone.
    pub fn kind_at(&self, tip: ObjectId) -> Result<WorkflowKind, StoreError> {
        let names = self.tree_names(tip)?;
        Ok(kind_of(names.iter().map(String::as_str)))
    }

    /// The names at the top of commit `tip`'s tree: a ticket commit holds `ticket.json`
    /// alone, and `audit` names anything else mixed in.
    pub fn tree_names(&self, tip: ObjectId) -> Result<Vec<String>, StoreError> {
        let tree = self
            .repo()?
            .find_commit(tip)
            .and_then(|c| c.tree())
            .map_err(git_err)?;
        let decoded = tree.decode().map_err(git_err)?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| e.filename.to_string())
            .collect())
    }

    /// Reads the ticket at this workflow's tip: `None` when the workflow does not exist or
    /// is not a ticket.
    pub fn read_ticket(&self) -> Result<Option<TicketSnapshot>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        self.ticket_at(tip, &self.ref_name())
    }

    /// The ticket commit `tip` holds (`reference` names it in errors); `None` when it holds
    /// a TDD workflow.
    pub fn ticket_at(
        &self,
        tip: ObjectId,
        reference: &str,
    ) -> Result<Option<TicketSnapshot>, StoreError> {
        let (time, entries) = self.commit_entries(tip, reference)?;
        if kind_of(entries.keys().map(String::as_str)) != WorkflowKind::Ticket {
            return Ok(None);
        }
        self.ticket_in((tip, time), &entries, reference).map(Some)
    }

    /// The TDD workflow's snapshot, `None` when the workflow does not exist or holds a ticket:
    /// for the code that reads the state only for what it pins (the configuration, the main
    /// branch) and runs on a ticket's branch too (the git hooks, `verify`, claims).
    pub fn read_unless_ticket(&self) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.read_workflow()?.and_then(Workflow::into_tdd))
    }
}

#[cfg(test)]
mod tests {
    use super::super::loose::LooseWriter;
    use super::super::write::{FileChange, TransitionWrite, blob_tree, commit_object};
    use super::*;
    use crate::test_git::git;
    use crate::workflow::PlanChange;
    use crate::workflow::state::State;
    use crate::workflow::ticket::Ticket;
    use pretty_assertions::assert_eq;

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "w").unwrap();
        (dir, store)
    }

    /// Makes a commit whose tree holds `files` (sorted by name) the workflow's tip, by hand.
    fn tip_with(dir: &tempfile::TempDir, store: &Store, files: Files) -> ObjectId {
        let mut objects = LooseWriter::new(store.repo().unwrap());
        let blobs: Vec<(&str, ObjectId)> = files
            .iter()
            .map(|(name, bytes)| (*name, objects.write(gix::objs::Kind::Blob, bytes).unwrap()))
            .collect();
        let tree = objects.write_object(&blob_tree(blobs.into_iter())).unwrap();
        let signature = store.signature().unwrap();
        let commit = commit_object(tree, None, &signature, "by hand\n", Vec::new());
        let id = objects.write_object(&commit).unwrap();
        git(
            dir.path(),
            &["update-ref", &store.ref_name(), &id.to_string()],
        );
        id
    }

    /// A tree's files, by name and content.
    type Files<'a> = &'a [(&'a str, &'a [u8])];

    fn ticket() -> Ticket {
        Ticket::new(
            "title".into(),
            String::new(),
            "main".into(),
            "ticket/t".into(),
            "0".repeat(40),
            None,
            &[],
            0,
        )
    }

    fn kind(store: &Store) -> Result<Option<WorkflowKind>, String> {
        store
            .read_workflow()
            .map(|w| w.map(|w| w.kind()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn no_workflow_reads_as_none() {
        let (_dir, store) = repo();
        assert_eq!(kind(&store), Ok(None));
        assert_eq!(store.read_unless_ticket().unwrap().map(|s| s.tip), None);
    }

    #[test]
    fn a_tdd_workflow_reads_as_its_state() {
        let (_dir, store) = repo();
        let state = State::new(Some("main".into()));
        let tip = store
            .write(
                None,
                &TransitionWrite {
                    event: "create",
                    from: None,
                    state: &state,
                    plan: &PlanChange::Keep,
                    output_log: FileChange::Keep,
                    escalation: FileChange::Keep,
                    review: FileChange::Keep,
                    step: None,
                    summary: "",
                    human: None,
                    signed: None,
                    input: None,
                    pinned_trees: FileChange::Keep,
                },
            )
            .unwrap();
        let Some(Workflow::Tdd(snapshot)) = store.read_workflow().unwrap() else {
            panic!("not read as a TDD workflow");
        };
        assert_eq!((snapshot.tip, &snapshot.state), (tip, &state));
        assert_eq!(store.read().unwrap().map(|s| s.tip), Some(tip));
        assert_eq!(store.read_ticket().unwrap().map(|t| t.tip), None);
    }

    #[test]
    fn a_ticket_reads_as_the_ticket_and_is_refused_by_the_tdd_read() {
        let (_dir, store) = repo();
        let ticket = ticket();
        let tip = store
            .write_ticket(None, None, &ticket, "ticket-new", "", "{}")
            .unwrap();
        let Some(Workflow::Ticket(snap)) = store.read_workflow().unwrap() else {
            panic!("not read as a ticket");
        };
        assert_eq!((snap.tip, &snap.ticket.title), (tip, &ticket.title));
        assert_eq!(store.read_unless_ticket().unwrap().map(|s| s.tip), None);
        assert_eq!(
            store.read().map(|_| ()).map_err(|e| e.to_string()),
            Err(format!(
                "{} is a ticket workflow: the TDD commands (plans, steps, checkpoints) do not \
                 apply to it",
                store.ref_name()
            ))
        );
    }

    /// A record that cannot be read is an error naming the file, never the other kind.
    #[test]
    fn a_corrupt_record_is_an_error_not_the_other_kind() {
        let (dir, store) = repo();
        let cases: [(Files, &str); 3] = [
            (&[("ticket.json", b"{not json")], "ticket.json"),
            (&[("state.json", b"{not json")], "state.json"),
            (&[("notes.md", b"hello")], "state.json"),
        ];
        for (files, named) in cases {
            let tip = tip_with(&dir, &store, files);
            let error = kind(&store).unwrap_err();
            assert!(
                error.contains(named) && error.contains(&tip.to_string()),
                "{files:?}: {error}"
            );
            assert!(store.read_unless_ticket().is_err(), "{files:?}");
            assert_eq!(
                store.read_ticket().is_err(),
                named == "ticket.json",
                "{files:?}"
            );
        }
    }

    /// A tree with both files is a TDD workflow's (the audit names the mix), as `kind_at` says.
    #[test]
    fn a_tree_with_both_files_is_a_tdd_workflows() {
        let (dir, store) = repo();
        let state =
            String::from_utf8(serde_json::to_vec(&State::new(Some("main".into()))).unwrap())
                .unwrap();
        let tip = tip_with(
            &dir,
            &store,
            &[
                ("state.json", state.as_bytes()),
                ("ticket.json", &ticket().to_json()),
            ],
        );
        assert_eq!(kind(&store), Ok(Some(WorkflowKind::Tdd)));
        assert_eq!(store.kind_at(tip).unwrap(), WorkflowKind::Tdd);
        assert_eq!(store.ticket_at(tip, "r").unwrap().map(|t| t.tip), None);
    }
}
