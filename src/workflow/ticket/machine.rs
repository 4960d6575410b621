//! The ticket state machine (docs/tickets.md): which tool each state and role allows, and
//! what each does to `ticket.json`. Pure: the engine resolves commits, observes reports and
//! merges, then applies the outcome here.

use super::text::{contradictions, legal_next};
use super::{
    Activity, Assignment, Finished, MAX_REJECTIONS, Observed, Report, ReportStatus, Role, Subtask,
    SubtaskStatus, Ticket, TicketState, Tool, Update, UpdateStatus,
};

/// What happened to a ticket. Recorded with each commit (the `orchestrator-event` header),
/// so that a replay computes every `ticket.json` again from its parent.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    Assign(Assignment),
    Update(Update),
    /// A developer's report, with what the orchestrator observed at its commit.
    Report {
        report: Box<Report>,
        observed: Box<Observed>,
    },
    /// The ticket's branch was squashed and checked: the squash is recorded before it lands,
    /// with the proof plans its final check ran (src/workflow/proof.rs), for `attest` to hold
    /// against the ones the ticket's history gives (none in events recorded before plans were).
    Finishing {
        squash: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        plans: Vec<crate::workflow::proof::ProofPlan>,
    },
    /// The ticket's branch was squashed, checked and merged.
    Complete {
        summary: String,
        squash: String,
        merge: Option<String>,
    },
    /// The merge could not be made (a conflict), or the role whose turn it is made no
    /// progress under `run`: a human resolves it.
    Halt {
        reason: String,
    },
    /// A human answered a halt.
    Resume {
        guidance: Option<String>,
        /// How the human's answer was authorised (`terminal`, `GIT_ORCHESTRATE_HUMAN`):
        /// recorded with the commit's event, as a TDD workflow's answers are.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        human: Option<String>,
    },
    /// A human accepts a pass of the finished ticket's `tree` after an earlier failure of it
    /// (`approve --flaky`, docs/integrity.md "A judged tree is not judged again"): what lifts
    /// the server's and `attest`'s memory of that failure. The ticket stays as it is, but for
    /// its log.
    ApproveFlaky {
        tree: String,
        /// How the human's answer was authorised, as for `Resume`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        human: Option<String>,
    },
}

/// A commit's recorded event: when, and what (none: the ticket's creation).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
}

/// Whether `child` is what `recorded` makes of `parent` (none: the first commit of this
/// ticket): the replay of one commit of a ticket's history. The observation a report
/// carries is taken as recorded; `attest` runs it again.
pub fn replay(parent: Option<&Ticket>, child: &Ticket, recorded: &Recorded) -> Result<(), String> {
    let expected = match (&recorded.action, parent) {
        (None, parent) => {
            if let Some(p) = parent
                && p.state != TicketState::TicketDone
            {
                return Err(format!(
                    "a new ticket replaced one in state {}",
                    p.state.as_str()
                ));
            }
            let titles: Vec<String> = child.subtasks.iter().map(|s| s.title.clone()).collect();
            Ticket::new(
                child.title.clone(),
                child.body.clone(),
                child.main_branch.clone(),
                child.branch.clone(),
                child.pin.clone(),
                child.config.clone(),
                &titles,
                recorded.at,
            )
        }
        (Some(_), None) => return Err("the first commit of a ticket records an action".into()),
        (Some(action), Some(parent)) => {
            apply(parent, None, action.clone(), recorded.at).map_err(|r| {
                format!(
                    "the recorded action is refused from its parent: {}",
                    r.message
                )
            })?
        }
    };
    if &expected == child {
        return Ok(());
    }
    let a = serde_json::to_value(&expected).unwrap_or_default();
    let b = serde_json::to_value(child).unwrap_or_default();
    let differs = match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => a
            .keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    Err(format!(
        "ticket.json is not what its recorded event makes of its parent (it differs in: {differs})"
    ))
}

/// Why a tool is refused: what was wrong, and the next legal action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    pub hint: String,
}

fn refuse<T>(message: impl Into<String>, hint: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        message: message.into(),
        hint: hint.into(),
    })
}

/// The subtask `assign` gives the developer: the one rejected or blocked (it must be done
/// before another), else the first planned one, else a new one.
fn assign_target(ticket: &Ticket) -> Option<&Subtask> {
    ticket
        .subtasks
        .iter()
        .find(|s| matches!(s.status, SubtaskStatus::Rejected | SubtaskStatus::Blocked))
        .or_else(|| {
            ticket
                .subtasks
                .iter()
                .find(|s| s.status == SubtaskStatus::Todo)
        })
}

/// Whether `tool`, called by `role` (`None`: no role given, the tool's own), is legal now.
pub fn check(ticket: &Ticket, role: Option<Role>, tool: Tool) -> Result<(), Refusal> {
    let hint = || legal_next(ticket, role);
    if let Some(role) = role
        && role != tool.role()
    {
        return refuse(
            format!(
                "`{}` is the {}'s tool; this session is the {}",
                tool.command(),
                tool.role().as_str(),
                role.as_str()
            ),
            hint(),
        );
    }
    let wrong_state = || {
        refuse(
            format!(
                "`{}` is not allowed in state {}",
                tool.command(),
                ticket.state.as_str()
            ),
            hint(),
        )
    };
    if let Some(squash) = &ticket.finishing
        && tool != Tool::CompleteTicket
    {
        return refuse(
            format!(
                "the ticket is being completed (its squash {} is recorded): only \
                 `complete-ticket` acts until it is merged",
                crate::short_id(squash)
            ),
            hint(),
        );
    }
    let awaiting = ticket.current().is_some_and(|s| s.awaiting_verification);
    match (ticket.state, tool) {
        (TicketState::Developer, Tool::SubtaskComplete) => Ok(()),
        (TicketState::Manager, Tool::UpdateSubtask) if awaiting => Ok(()),
        (TicketState::Manager, Tool::UpdateSubtask) => refuse(
            "there is no report to verify: `update-subtask` judges the developer's report",
            hint(),
        ),
        (TicketState::Manager, Tool::Assign | Tool::CompleteTicket) if awaiting => refuse(
            format!(
                "subtask {} has a report waiting for verification",
                ticket.current.as_deref().unwrap_or_default()
            ),
            hint(),
        ),
        (TicketState::Manager, Tool::Assign) => Ok(()),
        (TicketState::Manager, Tool::CompleteTicket) => {
            let open: Vec<String> = ticket
                .subtasks
                .iter()
                .filter(|s| s.status != SubtaskStatus::Complete)
                .map(|s| format!("{} ({})", s.id, s.status.as_str()))
                .collect();
            if ticket.subtasks.is_empty() {
                return refuse("the ticket has no subtask yet", hint());
            }
            if !open.is_empty() {
                return refuse(
                    format!("not every subtask is complete: {}", open.join(", ")),
                    hint(),
                );
            }
            Ok(())
        }
        _ => wrong_state(),
    }
}

fn log(ticket: &mut Ticket, now: i64, by: &str, event: &str, subtask: Option<&str>, text: String) {
    ticket.activity.push(Activity {
        at: now,
        by: by.to_string(),
        event: event.to_string(),
        subtask: subtask.map(str::to_string),
        text,
    });
}

/// Applies `action` by `role` to `ticket`: the new ticket, or why it is refused (nothing
/// changes).
pub fn apply(
    ticket: &Ticket,
    role: Option<Role>,
    action: Action,
    now: i64,
) -> Result<Ticket, Refusal> {
    let mut t = ticket.clone();
    match action {
        Action::Assign(assignment) => {
            check(ticket, role, Tool::Assign)?;
            assign(&mut t, assignment, now)?;
        }
        Action::Update(update) => {
            check(ticket, role, Tool::UpdateSubtask)?;
            update_subtask(&mut t, update, now)?;
        }
        Action::Report { report, observed } => {
            check(ticket, role, Tool::SubtaskComplete)?;
            if t.current_mut().is_none() {
                return refuse("no subtask is assigned", legal_next(ticket, role));
            }
            record_report(&mut t, *report, *observed, now);
        }
        Action::Finishing { squash, .. } => {
            check(ticket, role, Tool::CompleteTicket)?;
            if ticket.finishing.is_some() {
                return refuse(
                    "the ticket's squash is recorded already",
                    legal_next(ticket, role),
                );
            }
            let text = format!(
                "squashed as {} and checked; merging",
                crate::short_id(&squash)
            );
            t.finishing = Some(squash);
            log(&mut t, now, "manager", "finish-start", None, text);
        }
        Action::Complete {
            summary,
            squash,
            merge,
        } => {
            check(ticket, role, Tool::CompleteTicket)?;
            if ticket.finishing.as_deref() != Some(squash.as_str()) {
                return refuse(
                    "a ticket completes with the squash it recorded",
                    legal_next(ticket, role),
                );
            }
            complete(&mut t, summary, squash, merge, now);
        }
        Action::Halt { reason } => {
            if !matches!(ticket.state, TicketState::Manager | TicketState::Developer) {
                return refuse(
                    format!(
                        "a ticket halts from MANAGER or DEVELOPER, not {}",
                        ticket.state.as_str()
                    ),
                    legal_next(ticket, role),
                );
            }
            t.halted_from = Some(ticket.state);
            t.state = TicketState::Halted;
            t.halt = Some(reason.clone());
            log(&mut t, now, "orchestrator", "halt", None, reason);
        }
        Action::Resume { guidance, .. } => {
            if ticket.state != TicketState::Halted {
                return refuse(
                    format!("the ticket is not halted (state {})", ticket.state.as_str()),
                    legal_next(ticket, role),
                );
            }
            t.state = t.halted_from.take().unwrap_or(TicketState::Manager);
            t.halt = None;
            let text = guidance.unwrap_or_else(|| "resumed".to_string());
            log(&mut t, now, "human", "resume", None, text);
        }
        Action::ApproveFlaky { tree, .. } => {
            // Only a finished ticket has a merge or a squash whose tree a verifier judged.
            if ticket.state != TicketState::TicketDone {
                return refuse(
                    format!(
                        "a pass after a failure is accepted for a finished ticket, and this one \
                         is in {}",
                        ticket.state.as_str()
                    ),
                    legal_next(ticket, role),
                );
            }
            let text = format!(
                "accepted a pass of the tree {} after an earlier failure of it",
                crate::short_id(&tree)
            );
            log(&mut t, now, "human", "approve-flaky", None, text);
        }
    }
    Ok(t)
}

/// The developer's report on the current subtask recorded, with what the orchestrator
/// observed at its commit and where the two contradict each other: the manager verifies it.
fn record_report(t: &mut Ticket, report: Report, observed: Observed, now: i64) {
    let Some(subtask) = t.current_mut() else {
        return;
    };
    let assignment = subtask.assignment.clone().unwrap_or_else(|| Assignment {
        mode: super::Mode::Implementation,
        goal: String::new(),
        files_to_inspect: Vec::new(),
        files_to_modify: Vec::new(),
        acceptance_criteria: Vec::new(),
        prior_context: None,
        constraints: Vec::new(),
    });
    subtask.contradictions = contradictions(&assignment, &report, &observed);
    let id = subtask.id.clone();
    let text = format!(
        "reported {} at {} (build {}); observed: gates {}{}",
        report.status.as_str(),
        crate::short_id(&observed.commit),
        report.build_status.as_str(),
        observed_word(&observed),
        match subtask.contradictions.len() {
            0 => String::new(),
            n => format!(", {n} contradiction(s)"),
        }
    );
    subtask.claimed = Some(super::Claimed::of(&report));
    subtask.report = Some(report);
    subtask.observed = Some(observed);
    subtask.awaiting_verification = true;
    t.state = TicketState::Manager;
    log(t, now, "developer", "subtask-complete", Some(&id), text);
}

/// The ticket done: squashed as `squash` (the one it recorded), merged as `merge`.
fn complete(t: &mut Ticket, summary: String, squash: String, merge: Option<String>, now: i64) {
    let text = format!(
        "ticket complete: squashed as {}{}",
        crate::short_id(&squash),
        merge
            .as_deref()
            .map(|m| format!(", merged as {}", crate::short_id(m)))
            .unwrap_or_default()
    );
    t.finishing = None;
    t.finished = Some(Finished {
        squash,
        merge,
        summary,
    });
    t.state = TicketState::TicketDone;
    t.current = None;
    log(t, now, "manager", "complete-ticket", None, text);
}

fn observed_word(observed: &Observed) -> &'static str {
    match observed.gates.result {
        super::GateVerdict::Pass => "pass",
        super::GateVerdict::Fail => "fail",
        super::GateVerdict::None => "none configured",
    }
}

fn assign(t: &mut Ticket, assignment: Assignment, now: i64) -> Result<(), Refusal> {
    let verified = t.verified.clone();
    let (id, reassigned) = match assign_target(t) {
        Some(target) => {
            if target.status == SubtaskStatus::Blocked {
                // New means unlike every context it had, spacing and case aside: not the
                // last one with a space added, nor an older one again.
                let given = assignment.prior_context.as_deref().map(normalized);
                let seen = given
                    .as_ref()
                    .is_some_and(|g| target.prior_contexts.iter().any(|p| normalized(p) == *g));
                if given.as_deref().is_none_or(str::is_empty) || seen {
                    return refuse(
                        format!(
                            "subtask {} is blocked ({} rejection(s)): it is reassigned only with \
                             new priorContext",
                            target.id, target.rejections
                        ),
                        "Give `priorContext` (`--prior-context TEXT`) that says what is new: \
                         what the developer should do differently this time.",
                    );
                }
            }
            (target.id.clone(), target.status != SubtaskStatus::Todo)
        }
        None => {
            let id = format!("S{}", t.subtasks.len() + 1);
            t.subtasks
                .push(Subtask::new(id.clone(), assignment.goal.clone()));
            (id, false)
        }
    };
    t.current = Some(id.clone());
    t.state = TicketState::Developer;
    let text = format!(
        "{} {id} ({}): {}",
        if reassigned { "reassigned" } else { "assigned" },
        assignment.mode.as_str(),
        assignment.goal.lines().next().unwrap_or_default()
    );
    if let Some(subtask) = t.current_mut() {
        subtask.status = SubtaskStatus::InProgress;
        subtask.assignments += 1;
        if subtask.base.is_none() {
            subtask.base = Some(verified);
        }
        if subtask.title.trim().is_empty() {
            subtask.title = assignment
                .goal
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
        }
        if let Some(context) = &assignment.prior_context {
            subtask.prior_contexts.push(context.clone());
        }
        subtask.assignment = Some(assignment);
    }
    log(t, now, "manager", "assign", Some(&id), text);
    Ok(())
}

/// A context as compared for newness: words in lower case, single-spaced.
fn normalized(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn update_subtask(t: &mut Ticket, update: Update, now: i64) -> Result<(), Refusal> {
    let Some(subtask) = t.current_mut() else {
        return refuse(
            "no subtask is waiting for verification",
            "Assign one first.",
        );
    };
    let id = subtask.id.clone();
    let mut text = format!("{}: {}", update.status.as_str(), update.notes);
    match update.status {
        UpdateStatus::Complete => {
            let blocked_report = subtask
                .report
                .as_ref()
                .is_some_and(|r| r.status == ReportStatus::Blocked);
            let mut against: Vec<String> = subtask.contradictions.clone();
            // A commit the gates do not pass becomes the next subtask's base only over an
            // override: the developer may have said so honestly, and it is still red.
            match subtask.observed.as_ref().map(|o| o.gates.result) {
                Some(super::GateVerdict::Pass) => {}
                Some(super::GateVerdict::Fail) => {
                    against.push("the gates fail at the reported commit".into());
                }
                Some(super::GateVerdict::None) | None => {
                    against.push("no gate ran at the reported commit".into());
                }
            }
            against.dedup();
            if blocked_report {
                against.push("the developer reported the subtask blocked, not complete".into());
            }
            let protected: Vec<String> = subtask
                .observed
                .as_ref()
                .map(|o| o.protected.iter().chain(&o.links_out).cloned().collect())
                .unwrap_or_default();
            if !protected.is_empty() {
                return refuse(
                    format!(
                        "subtask {id} changes paths the configuration protects, or links out of \
                         the repository ({}): no override accepts that; a human changes them on \
                         main",
                        protected.join(", ")
                    ),
                    "Reject it: the developer takes the change to the protected paths back.",
                );
            }
            if !against.is_empty() && update.override_reason.is_none() {
                return refuse(
                    format!(
                        "subtask {id} cannot be accepted: what was observed contradicts the \
                         report: {}",
                        against.join("; ")
                    ),
                    "Reject it (`--status rejected --notes …`, the developer is told why), or \
                     accept it anyway with `--override REASON` (recorded).",
                );
            }
            let Some(commit) = subtask.observed.as_ref().map(|o| o.commit.clone()) else {
                return refuse(format!("subtask {id} has no observed report"), "Reject it.");
            };
            subtask.status = SubtaskStatus::Complete;
            subtask.accepted = Some(commit.clone());
            if let Some(reason) = &update.override_reason {
                text.push_str(&format!(
                    " (accepted over {} contradiction(s): {reason})",
                    against.len()
                ));
                subtask.override_reason = Some(reason.clone());
            }
            subtask.awaiting_verification = false;
            subtask.notes = Some(update.notes);
            t.verified = commit;
            t.current = None;
        }
        UpdateStatus::Rejected => {
            subtask.rejections += 1;
            if subtask.rejections >= MAX_REJECTIONS {
                subtask.status = SubtaskStatus::Blocked;
                text.push_str(&format!(
                    " (rejection {}: the subtask is blocked; reassign it only with new priorContext)",
                    subtask.rejections
                ));
            } else {
                subtask.status = SubtaskStatus::Rejected;
            }
            subtask.awaiting_verification = false;
            subtask.notes = Some(update.notes);
        }
        UpdateStatus::Blocked => {
            subtask.status = SubtaskStatus::Blocked;
            subtask.awaiting_verification = false;
            subtask.notes = Some(update.notes);
        }
    }
    log(t, now, "manager", "update-subtask", Some(&id), text);
    Ok(())
}
