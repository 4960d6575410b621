//! The audit of one ticket transition (docs/tickets.md): given the ticket before a commit
//! and the ticket the commit holds, whether the recorded event makes exactly that ticket.
//! The invariants no event breaks are checked here, so that a forgery is named by what it
//! changed; the action each commit records then recomputes its ticket exactly
//! (`replay_recorded`).

use super::{Activity, SubtaskStatus, Ticket, TicketState};

/// What the commit before a ticket commit held.
#[derive(Clone, Copy, Debug)]
pub enum Before<'a> {
    /// The chain's first commit.
    Nothing,
    /// A TDD workflow's commit: `ticket new` continues one only while it is initializing.
    Tdd {
        initializing: bool,
    },
    Ticket(&'a Ticket),
}

impl Before<'_> {
    /// The state the commit's `Orchestrator-From` must name.
    pub fn state_name(&self) -> &'static str {
        match self {
            Before::Ticket(t) => t.state.as_str(),
            Before::Nothing | Before::Tdd { .. } => "(none)",
        }
    }
}

/// Why a ticket commit is not the transition it records.
pub type Forgery = String;

/// Checks that `after` is what `event` makes from `before` (docs/tickets.md, "Status, log, board, audit, sync, demo").
pub fn replay(before: Before<'_>, after: &Ticket, event: &str) -> Result<(), Forgery> {
    if event == "ticket-new" {
        return fresh(before, after);
    }
    let Before::Ticket(before) = before else {
        return Err(format!(
            "`{event}` on a workflow that holds no ticket before it: a ticket begins with \
             `ticket-new`"
        ));
    };
    invariants(before, after, event)?;
    // What each event makes exactly is replayed from the action the commit records
    // (`replay_recorded`, src/workflow/ticket/machine.rs); here only its name is judged.
    match event {
        "assign" | "subtask-complete" | "update-subtask" | "finish-start" | "complete-ticket"
        | "halt" | "resume" | "approve-flaky" => Ok(()),
        other => Err(format!(
            "`{other}` is not an event a ticket workflow records"
        )),
    }
}

/// `ticket-new`: a ticket as `ticket new` makes it, continuing nothing but an initializing
/// TDD workflow or a finished ticket.
fn fresh(before: Before<'_>, after: &Ticket) -> Result<(), Forgery> {
    match before {
        Before::Nothing | Before::Tdd { initializing: true } => {}
        Before::Ticket(t) if t.state == TicketState::TicketDone => {}
        Before::Tdd {
            initializing: false,
        } => {
            return Err("`ticket-new` replaced a TDD workflow that had begun".into());
        }
        Before::Ticket(t) => {
            return Err(format!(
                "`ticket-new` replaced ticket \"{}\" in state {}, which is not done",
                t.title,
                t.state.as_str()
            ));
        }
    }
    let at = after.activity.first().map_or(0, |a| a.at);
    let titles: Vec<String> = after.subtasks.iter().map(|s| s.title.clone()).collect();
    let made = Ticket::new(
        after.title.clone(),
        after.body.clone(),
        after.main_branch.clone(),
        after.branch.clone(),
        after.pin.clone(),
        after.config.clone(),
        &titles,
        at,
    );
    if &made != after {
        return Err(
            "its ticket.json is not a new ticket: `ticket-new` makes one with every \
                    subtask todo, nothing assigned and the branch verified at its pin"
                .into(),
        );
    }
    Ok(())
}

/// What no event undoes: the log only grows, a subtask stays, its rejections never fall,
/// a complete one stays complete and accepted, and `verified` moves only to an accepted
/// commit.
fn invariants(before: &Ticket, after: &Ticket, event: &str) -> Result<(), Forgery> {
    if !is_prefix(&before.activity, &after.activity) {
        return Err("its activity log rewrites the log before it (the log only grows)".into());
    }
    for old in &before.subtasks {
        let Some(new) = after.subtask(&old.id) else {
            return Err(format!("subtask {} disappeared", old.id));
        };
        if new.rejections < old.rejections {
            return Err(format!(
                "subtask {}'s rejections fell from {} to {}",
                old.id, old.rejections, new.rejections
            ));
        }
        if old.status == SubtaskStatus::Complete
            && (new.status != SubtaskStatus::Complete || new.accepted != old.accepted)
        {
            return Err(format!(
                "subtask {} was complete and is now {}",
                old.id,
                new.status.as_str()
            ));
        }
        // Only a report brings an observation: any other event that changes one rewrote
        // what the orchestrator saw.
        if event != "subtask-complete"
            && (new.observed != old.observed
                || new.report != old.report
                || new.claimed != old.claimed)
        {
            return Err(format!(
                "subtask {}'s report or observed result was rewritten by `{event}` (only \
                 `subtask-complete` records them)",
                old.id
            ));
        }
    }
    if after.verified != before.verified
        && !after
            .subtasks
            .iter()
            .any(|s| s.accepted.as_deref() == Some(after.verified.as_str()))
    {
        return Err(format!(
            "`verified` moved to {}, which no subtask was accepted at",
            crate::short_id(&after.verified)
        ));
    }
    for new in &after.subtasks {
        let was = before.subtask(&new.id).map(|s| s.status);
        if new.status == SubtaskStatus::Complete && was != Some(SubtaskStatus::Complete) {
            // Only the manager's update completes a subtask; the recompute says whether
            // this one did.
            let by_update = after.activity.last().is_some_and(|a| {
                a.event == "update-subtask" && a.subtask.as_deref() == Some(&new.id)
            });
            if !by_update {
                return Err(format!(
                    "subtask {} became complete with no `update-subtask`",
                    new.id
                ));
            }
        }
    }
    Ok(())
}

fn is_prefix(before: &[Activity], after: &[Activity]) -> bool {
    after.len() >= before.len() && after[..before.len()] == *before
}
