//! A ticket workflow's commits (docs/tickets.md): `ticket.json` alone in the tree of each,
//! written objects first and the workflow ref last by compare-and-swap, as a TDD workflow's.

use gix::ObjectId;

use super::snapshot::{STATE_FILE, TICKET_FILE};
use super::write::{blob_tree, commit_object};
use super::{EVENT_HEADER, REFLOG_PREFIX, Store, StoreError, WriteError, git_err, loose};
use crate::workflow::ticket::{Ticket, TicketState};

/// A ticket as read at a commit of its workflow ref.
#[derive(Clone, Debug)]
pub struct TicketSnapshot {
    pub tip: ObjectId,
    /// The tip commit's committer time: the ticket's last activity.
    pub time: i64,
    pub ticket: Ticket,
}

/// What kind of workflow a commit holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkflowKind {
    Tdd,
    Ticket,
}

impl Store {
    /// The kind of workflow commit `tip` holds: a ticket when its tree has `ticket.json`
    /// and no `state.json`.
    pub fn kind_at(&self, tip: ObjectId) -> Result<WorkflowKind, StoreError> {
        let names = self.tree_names(tip)?;
        let has = |name: &str| names.iter().any(|n| n == name);
        Ok(if has(TICKET_FILE) && !has(STATE_FILE) {
            WorkflowKind::Ticket
        } else {
            WorkflowKind::Tdd
        })
    }

    /// The names at the top of commit `tip`'s tree: a ticket commit holds `ticket.json`
    /// alone, and `audit` names anything else mixed in.
    pub fn tree_names(&self, tip: ObjectId) -> Result<Vec<String>, StoreError> {
        let tree = self
            .repo
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

    /// The TDD workflow's snapshot, `None` when the workflow does not exist or holds a ticket:
    /// for the code that reads the state only for what it pins (the configuration, the main
    /// branch) and runs on a ticket's branch too (the git hooks, `verify`, claims).
    pub fn read_unless_ticket(&self) -> Result<Option<super::Snapshot>, StoreError> {
        match self.read() {
            Err(StoreError::TicketWorkflow { .. }) => Ok(None),
            other => other,
        }
    }

    /// The kind of this workflow, `None` when it does not exist yet.
    pub fn kind(&self) -> Result<Option<WorkflowKind>, StoreError> {
        self.tip()?.map(|tip| self.kind_at(tip)).transpose()
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
        let corrupt = |what: &str, message: String| StoreError::Corrupt {
            reference: reference.to_string(),
            commit: tip.to_string(),
            what: what.to_string(),
            message,
        };
        if self.kind_at(tip)? != WorkflowKind::Ticket {
            return Ok(None);
        }
        let commit = self
            .repo
            .find_commit(tip)
            .map_err(|e| corrupt("the tip commit", e.to_string()))?;
        let time = commit.time().map(|t| t.seconds).unwrap_or_default();
        let tree = commit
            .tree()
            .map_err(|e| corrupt("the tree", e.to_string()))?;
        let entry = tree
            .find_entry(TICKET_FILE)
            .ok_or_else(|| corrupt(TICKET_FILE, "it is missing".into()))?;
        let blob = self
            .repo
            .find_blob(entry.oid())
            .map_err(|e| corrupt(TICKET_FILE, e.to_string()))?;
        let ticket = Ticket::from_json(&blob.data).map_err(|m| corrupt(TICKET_FILE, m))?;
        Ok(Some(TicketSnapshot { tip, time, ticket }))
    }

    /// Stores `ticket` as the workflow's next commit: objects first, then one
    /// compare-and-swap of the ref against `expected` (`None`: it must not exist, or, with
    /// `replacing`, must be that TDD tip, whose history the ticket continues).
    pub fn write_ticket(
        &self,
        expected: Option<ObjectId>,
        from: Option<TicketState>,
        ticket: &Ticket,
        event: &str,
        summary: &str,
        recorded: &str,
    ) -> Result<ObjectId, WriteError> {
        self.write_ticket_before(expected, from, ticket, (event, summary, recorded), |_| {
            Ok::<(), WriteError>(())
        })
    }

    /// [`Store::write_ticket`], with `before` given the new commit once its objects are
    /// stored and before the ref moves (a ticket's merge pushed with its record): an error
    /// from it leaves the ticket where it was.
    pub fn write_ticket_before<E: From<WriteError> + From<super::StoreError>>(
        &self,
        expected: Option<ObjectId>,
        from: Option<TicketState>,
        ticket: &Ticket,
        (event, summary, recorded): (&str, &str, &str),
        before: impl FnOnce(ObjectId) -> Result<(), E>,
    ) -> Result<ObjectId, E> {
        let mut objects = loose::LooseWriter::new(&self.repo);
        let blob = objects.write(gix::objs::Kind::Blob, &ticket.to_json())?;
        let tree = objects.write_object(&blob_tree(std::iter::once((TICKET_FILE, blob))))?;
        let signature = self.signature()?;
        let from = from.map_or("(none)", TicketState::as_str);
        let to = ticket.state.as_str();
        let mut message = format!("{event}: {from} -> {to}\n");
        let body = summary.trim();
        if !body.is_empty() {
            message.push('\n');
            message.push_str(body);
            message.push('\n');
        }
        message.push_str(&format!(
            "\nOrchestrator-Event: {event}\nOrchestrator-From: {from}\nOrchestrator-To: {to}\n\
             Orchestrator-Kind: ticket\n"
        ));
        // The recorded event, from which a replay computes this ticket.json again.
        let headers = vec![(EVENT_HEADER.into(), recorded.into())];
        let commit = commit_object(tree, expected, &signature, &message, headers);
        let id = objects.write_object(&commit)?;
        before(id)?;
        self.update_ref(
            &self.ref_name,
            expected,
            id,
            format!(
                "{REFLOG_PREFIX}{}",
                message.lines().next().unwrap_or_default()
            ),
            &signature,
        )?;
        Ok(id)
    }
}
