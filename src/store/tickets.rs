//! A ticket workflow's commits (docs/tickets.md): `ticket.json` alone in the tree of each,
//! written objects first and the workflow ref last by compare-and-swap, as a TDD workflow's.

use gix::ObjectId;

use super::snapshot::{Entries, TICKET_FILE, corrupt};
use super::write::{blob_tree, commit_object};
use super::{EVENT_HEADER, REFLOG_PREFIX, SIGNATURE_HEADER, Store, StoreError, WriteError, loose};
use crate::workflow::ticket::{Ticket, TicketState};

/// A ticket as read at a commit of its workflow ref.
#[derive(Clone, Debug)]
pub struct TicketSnapshot {
    pub tip: ObjectId,
    /// The tip commit's committer time: the ticket's last activity.
    pub time: i64,
    pub ticket: Ticket,
}

impl Store {
    /// The ticket of commit `tip`, whose tree `entries` are read already.
    pub(super) fn ticket_in(
        &self,
        (tip, time): (ObjectId, i64),
        entries: &Entries,
        reference: &str,
    ) -> Result<TicketSnapshot, StoreError> {
        let corrupt = |what: &str, message: String| corrupt(reference, tip, what, message);
        let id = entries
            .get(TICKET_FILE)
            .ok_or_else(|| corrupt(TICKET_FILE, "it is missing".into()))?;
        let blob = self
            .repo()?
            .find_blob(*id)
            .map_err(|e| corrupt(TICKET_FILE, e.to_string()))?;
        let ticket = Ticket::from_json(&blob.data).map_err(|m| corrupt(TICKET_FILE, m))?;
        Ok(TicketSnapshot { tip, time, ticket })
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
        texts: (&str, &str, &str),
        before: impl FnOnce(ObjectId) -> Result<(), E>,
    ) -> Result<ObjectId, E> {
        self.ticket_commit(expected, from, ticket, texts, None, before)
    }

    /// [`Store::write_ticket`] for a human's answer, recorded as a TDD workflow's are
    /// (src/store/write.rs): `Orchestrator-Human:` says how it was authorised, and a signed
    /// one (`signed`: the principal and the armored signature) carries its signature in the
    /// `orchestrator-signature` header and `signed <principal>` as how.
    pub fn write_ticket_answer(
        &self,
        expected: ObjectId,
        from: TicketState,
        ticket: &Ticket,
        texts: (&str, &str, &str),
        human: &str,
        signed: Option<(&str, &str)>,
    ) -> Result<ObjectId, WriteError> {
        self.ticket_commit(
            Some(expected),
            Some(from),
            ticket,
            texts,
            Some((human, signed)),
            |_| Ok::<(), WriteError>(()),
        )
    }

    fn ticket_commit<E: From<WriteError> + From<super::StoreError>>(
        &self,
        expected: Option<ObjectId>,
        from: Option<TicketState>,
        ticket: &Ticket,
        (event, summary, recorded): (&str, &str, &str),
        answer: Option<(&str, Option<(&str, &str)>)>,
        before: impl FnOnce(ObjectId) -> Result<(), E>,
    ) -> Result<ObjectId, E> {
        let mut objects = loose::LooseWriter::at(self.repo.objects_dir(), self.repo.object_hash());
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
        let mut headers = vec![(EVENT_HEADER.into(), recorded.into())];
        match answer {
            Some((_, Some((principal, armored)))) => {
                message.push_str(&format!("Orchestrator-Human: signed {principal}\n"));
                // gix continues a value's lines with a space; the reader takes it off again.
                headers.push((SIGNATURE_HEADER.into(), armored.trim_end().into()));
            }
            Some((human, None)) => message.push_str(&format!("Orchestrator-Human: {human}\n")),
            None => {}
        }
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
