//! A ticket's history replayed (docs/tickets.md, "`ticket.json`"): every commit's
//! `ticket.json` computed again from its parent and the event the commit records, its
//! trailers held to the states it moves between. What `audit` and `attest` rest on.

use gix::ObjectId;

use crate::engine::EngineError;
use crate::store::{Store, TicketSnapshot, WorkflowKind};
use crate::workflow::ticket::{self, Recorded};

/// The first commit of the ticket at `tip` whose `ticket.json` is not what its recorded
/// event makes of its parent, and why; `None` when every commit replays. The replay runs
/// from the ticket's first commit (its parent holds no ticket, or a finished one that this
/// ticket replaced) to `tip`.
pub fn forged(
    store: &Store,
    reference: &str,
    tip: ObjectId,
) -> Result<Option<(ObjectId, String)>, EngineError> {
    // The segment, newest first: back to the commit that started this ticket.
    let mut segment: Vec<(ObjectId, TicketSnapshot)> = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        if store.kind_at(id)? != WorkflowKind::Ticket {
            break;
        }
        let snap = match store.ticket_at(id, reference) {
            Ok(Some(snap)) => snap,
            Ok(None) => break,
            Err(e) => return Ok(Some((id, e.to_string()))),
        };
        let record = store.commit_record(id)?;
        let started = record.history.event == "ticket-new";
        next = record.parents.first().copied();
        segment.push((id, snap));
        if started {
            break;
        }
    }
    segment.reverse();
    // A ticket replaces only a finished one.
    if let Some((first, _)) = segment.first()
        && let Some(before) = store.commit_record(*first)?.parents.first().copied()
        && let Ok(Some(previous)) = store.ticket_at(before, reference)
        && previous.ticket.state != ticket::TicketState::TicketDone
    {
        return Ok(Some((
            *first,
            format!(
                "it starts a ticket over one in state {}",
                previous.ticket.state.as_str()
            ),
        )));
    }
    let mut parent: Option<&TicketSnapshot> = None;
    for (id, snap) in &segment {
        if let Some(why) = one(store, *id, parent, snap)? {
            return Ok(Some((*id, why)));
        }
        parent = Some(snap);
    }
    Ok(None)
}

/// Why commit `id` does not replay from `parent`, if it does not.
fn one(
    store: &Store,
    id: ObjectId,
    parent: Option<&TicketSnapshot>,
    snap: &TicketSnapshot,
) -> Result<Option<String>, EngineError> {
    let record = store.commit_record(id)?;
    let Some(event) = record.event.as_deref() else {
        return Ok(Some("it records no event".into()));
    };
    let recorded: Recorded = match serde_json::from_str(event) {
        Ok(recorded) => recorded,
        Err(e) => return Ok(Some(format!("its recorded event does not parse: {e}"))),
    };
    let from = parent.map_or("(none)", |p| p.ticket.state.as_str());
    let to = snap.ticket.state.as_str();
    if record.history.from.as_deref() != Some(from) || record.history.to.as_deref() != Some(to) {
        return Ok(Some(format!(
            "its trailers say {} -> {}, and the states it moves between are {from} -> {to}",
            record.history.from.as_deref().unwrap_or("?"),
            record.history.to.as_deref().unwrap_or("?")
        )));
    }
    // A ticket started on a finished one, or on a TDD workflow's history, replays from
    // nothing; any other first commit must be the ticket's creation.
    let parent_ticket = parent.map(|p| &p.ticket);
    Ok(ticket::replay(parent_ticket, &snap.ticket, &recorded).err())
}
