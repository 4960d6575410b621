//! The audit of one ticket transition (docs/tickets.md): given the ticket before a commit
//! and the ticket the commit holds, whether the recorded event makes exactly that ticket.
//! The machine is pure, so most events are recomputed whole from what the commit stores
//! (the assignment, the report and its observation, the manager's notes); the invariants
//! no event breaks are checked first, so a forgery is named by what it changed.

use super::{Action, Activity, SubtaskStatus, Ticket, TicketState, Update, UpdateStatus, apply};

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

/// Checks that `after` is what `event` makes from `before` (docs/tickets.md, "Audit").
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
    let now = after.activity.last().map_or(0, |a| a.at);
    let recompute = |action: Action| apply(before, None, action, now);
    let candidates: Vec<Action> = match event {
        "assign" => {
            let assignment = after
                .current()
                .and_then(|s| s.assignment.clone())
                .ok_or("`assign` left no current subtask with an assignment")?;
            vec![Action::Assign(assignment)]
        }
        "subtask-complete" => {
            let subtask = after
                .current()
                .ok_or("`subtask-complete` left no current subtask")?;
            match (&subtask.report, &subtask.observed) {
                (Some(report), Some(observed)) => vec![Action::Report {
                    report: Box::new(report.clone()),
                    observed: Box::new(observed.clone()),
                }],
                _ => {
                    return Err("`subtask-complete` stored no report beside its observation".into());
                }
            }
        }
        "update-subtask" => updates(before, after)?,
        "complete-ticket" => {
            let finished = after
                .finished
                .clone()
                .ok_or("`complete-ticket` recorded no squash")?;
            vec![Action::Complete {
                summary: finished.summary,
                squash: finished.squash,
                merge: finished.merge,
            }]
        }
        "halt" => vec![Action::Halt {
            reason: after.halt.clone().unwrap_or_default(),
        }],
        "resume" => {
            let text = after.activity.last().map(|a| a.text.clone());
            vec![Action::Resume { guidance: text }]
        }
        other => {
            return Err(format!(
                "`{other}` is not an event a ticket workflow records"
            ));
        }
    };
    let mut refusal = None;
    for action in candidates {
        match recompute(action) {
            Ok(made) if &made == after => return Ok(()),
            Ok(_) => {}
            Err(r) => refusal = Some(r),
        }
    }
    Err(match refusal {
        Some(r) => format!(
            "`{event}` is refused in state {}: {}",
            before.state.as_str(),
            r.message
        ),
        None => format!("its ticket.json is not the one `{event}` makes"),
    })
}

/// The manager's updates that could have made `after`: its notes as stored, with the
/// override recorded when there is one.
fn updates(before: &Ticket, after: &Ticket) -> Result<Vec<Action>, Forgery> {
    let id = before
        .current
        .as_deref()
        .ok_or("`update-subtask` with no subtask waiting for verification")?;
    let subtask = after
        .subtask(id)
        .ok_or_else(|| format!("`update-subtask` dropped subtask {id}"))?;
    let notes = subtask.notes.clone().unwrap_or_default();
    let statuses: &[UpdateStatus] = match subtask.status {
        SubtaskStatus::Complete => &[UpdateStatus::Complete],
        SubtaskStatus::Rejected => &[UpdateStatus::Rejected],
        // The third rejection blocks, as a manager's `blocked` does.
        SubtaskStatus::Blocked => &[UpdateStatus::Blocked, UpdateStatus::Rejected],
        SubtaskStatus::Todo | SubtaskStatus::InProgress => {
            return Err(format!(
                "`update-subtask` left subtask {id} {}",
                subtask.status.as_str()
            ));
        }
    };
    let overrides = [None, subtask.override_reason.clone()];
    Ok(statuses
        .iter()
        .flat_map(|status| {
            let notes = notes.clone();
            overrides.clone().into_iter().map(move |override_reason| {
                Action::Update(Update {
                    status: *status,
                    notes: notes.clone(),
                    override_reason,
                })
            })
        })
        .collect())
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
