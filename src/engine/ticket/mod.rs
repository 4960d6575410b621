//! Ticket mode's commands (docs/tickets.md): `ticket new`, the role briefings, and the four
//! tools. Each decides from a fresh read, then does (a report is observed in fresh
//! worktrees, a completion squashed, checked and merged), then writes `ticket.json` by
//! compare-and-swap; a lost race runs the whole command again.

mod answer;
pub(crate) mod finish;
pub(crate) mod observe;
mod status;

pub use answer::{approve_flaky, approve_flaky_payload};
pub use status::{
    SubtaskStatusLine, TicketStatus, WaitingReport, WorkflowStatus, progress, workflow_status,
};

use serde_json::Value;

use super::{EngineError, Session};
use crate::store::{TicketSnapshot, Workflow, WorkflowKind, branch_ref};
use crate::workflow::notes::ChangedTests;
use crate::workflow::ticket::start::{self, BadStart, Holder, StartRefusal};
use crate::workflow::ticket::{
    self, Action, Assignment, Refusal, Report, Role, Ticket, TicketState, Tool, Update,
    parse_assignment, parse_complete_ticket, parse_report, parse_update,
};

pub use crate::workflow::ticket::ROLE_ENV;

pub use crate::workflow::ticket::PROMPTS_DIR;

/// What a ticket command did: the ticket as written, what to say, and the next briefing.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    pub workflow: String,
    pub tip: String,
    pub state: TicketState,
    pub message: String,
    pub ticket: Ticket,
    /// A merge that conflicted halted the ticket (exit 10).
    pub halted: bool,
}

/// The role `GIT_ORCHESTRATE_ROLE` names, if it names one (for what must stay cheap on a
/// TDD workflow; [`role`] refuses a value that names none).
pub fn env_role() -> Option<Role> {
    std::env::var(ROLE_ENV)
        .ok()
        .as_deref()
        .and_then(Role::parse)
}

/// The role a call is made in: the flag, else `GIT_ORCHESTRATE_ROLE`, else `[agent] role`
/// as main had it at the ticket's pin (the working tree's copy is the agent's to edit). A
/// flag may not contradict the session's variable: `run` sets it for each agent session.
pub fn role(session: &Session, flag: Option<Role>) -> Result<Option<Role>, EngineError> {
    let env = match std::env::var(ROLE_ENV) {
        Ok(text) if !text.is_empty() => {
            Some(Role::parse(&text).ok_or_else(|| EngineError::BadInput {
                message: format!("{ROLE_ENV}={text:?} names no role"),
                hint: "Use manager or developer.".into(),
            })?)
        }
        _ => None,
    };
    match (flag, env) {
        (Some(flag), Some(env)) if flag != env => Err(EngineError::TicketRefused {
            message: format!(
                "this session is the {} ({ROLE_ENV}); --role {} does not change that",
                env.as_str(),
                flag.as_str()
            ),
            hint: "Call only your role's tools; the other role has its own session.".into(),
            state: "ANY".into(),
        }),
        (Some(role), _) | (None, Some(role)) => Ok(Some(role)),
        (None, None) => match session.store.read_ticket()? {
            Some(snap) => Ok(observe::ticket_config(session, &snap.ticket)?.agent.role),
            None => Ok(None),
        },
    }
}

fn refused(ticket: &Ticket, refusal: Refusal) -> EngineError {
    EngineError::TicketRefused {
        message: refusal.message,
        hint: refusal.hint,
        state: ticket.state.as_str().to_string(),
    }
}

/// A tool's input refused: every problem with it (exit 2), before anything is read.
pub fn invalid(tool: Tool, problems: Vec<crate::workflow::plan::Problem>) -> EngineError {
    EngineError::ToolInput {
        tool: tool.command().to_string(),
        problems,
    }
}

/// The ticket of the selected workflow, or why there is none.
pub fn read(session: &Session) -> Result<TicketSnapshot, EngineError> {
    session.refuse_if_vanished()?;
    match session.store.read_ticket()? {
        Some(snap) => Ok(snap),
        None => Err(EngineError::TicketRefused {
            message: format!(
                "workflow \"{}\" is not a ticket workflow",
                session.store.workflow()
            ),
            hint: "Start one with `git orchestrate ticket new --title TEXT`, or name it with \
                   --workflow."
                .into(),
            state: "NONE".into(),
        }),
    }
}

/// The kind of the selected workflow, from the one read both kinds dispatch on; `None`
/// when it does not exist yet.
pub fn kind(session: &Session) -> Result<Option<WorkflowKind>, EngineError> {
    Ok(session.store.read_workflow()?.map(|w| w.kind()))
}

fn now() -> i64 {
    super::claims::now()
}

/// `ticket new`: a ticket workflow on a new branch from main's tip, checked out here when
/// the working tree allows.
pub fn create(
    session: &Session,
    title: &str,
    body: &str,
    subtasks: &[String],
) -> Result<Outcome, EngineError> {
    start::check_input(title, body, subtasks).map_err(bad_start)?;
    session.refuse_if_vanished()?;
    let (id, ticket) = session.with_retries(|| {
        let tip = session.store.tip()?;
        let holder = match tip {
            None => Holder::Nothing,
            Some(tip) => match session.store.workflow_at(tip, &session.store.ref_name())? {
                Workflow::Ticket(old) => Holder::Ticket {
                    title: old.ticket.title,
                    state: old.ticket.state,
                },
                Workflow::Tdd(snap) => Holder::Tdd(snap.state.status()),
            },
        };
        let main = session.main_branch(None)?;
        let pin = session.pin_now(&main)?;
        let facts = start::Facts {
            holder,
            main_exists: pin.is_some(),
        };
        let from = start::decide(&facts).map_err(|r| start_refused(session, &main, r))?;
        let pin = pin.ok_or_else(|| start_refused(session, &main, StartRefusal::NoMain))?;
        begin(session, tip, from, (title, body, subtasks), main, pin)
    })?;
    let message = ensure_branch(session, &ticket)?;
    Ok(Outcome {
        workflow: session.store.workflow().to_string(),
        tip: id.to_string(),
        state: ticket.state,
        message,
        ticket,
        halted: false,
    })
}

/// `ticket new`'s effects, once decided: the branch taken, the ticket written over `tip`
/// (which held `from`); a write that fails gives the branch back.
fn begin(
    session: &Session,
    tip: Option<gix::ObjectId>,
    from: Option<TicketState>,
    (title, body, subtasks): (&str, &str, &[String]),
    main: String,
    pin: crate::workflow::state::Pin,
) -> Result<(gix::ObjectId, Ticket), EngineError> {
    // The branch is taken first, by creating it: two tickets started at once (in two
    // workflows) never share one.
    let branch = take_branch(session, title, &pin.commit)?;
    let at = now();
    let ticket = Ticket::new(
        title.to_string(),
        body.to_string(),
        main,
        branch,
        pin.commit,
        pin.config,
        subtasks,
        at,
    );
    let recorded = recorded_json(&ticket::Recorded { at, action: None })?;
    match session
        .store
        .write_ticket(tip, from, &ticket, "ticket-new", title, &recorded)
    {
        Ok(id) => Ok((id, ticket)),
        Err(e) => {
            // A lost race (or a failed write) gives the branch back; the retry takes one
            // anew.
            let _ = session
                .git
                .delete_ref_cas(&branch_ref(&ticket.branch), &ticket.pin);
            Err(e.into())
        }
    }
}

/// `ticket new`'s input refused (exit 2).
fn bad_start(bad: BadStart) -> EngineError {
    match bad {
        BadStart::Field { field, problem } => super::field_refused(field, &problem),
        BadStart::TitleNotOneLine => EngineError::BadInput {
            message: format!(
                "the ticket's title must be one line of at most {} bytes",
                start::MAX_TITLE
            ),
            hint: "Put the details in --body.".into(),
        },
    }
}

/// Why the workflow starts no ticket, in the words of its state.
fn start_refused(session: &Session, main: &str, refusal: StartRefusal) -> EngineError {
    match refusal {
        StartRefusal::Busy { title, state } => EngineError::TicketRefused {
            message: format!(
                "workflow \"{}\" already works on ticket \"{title}\" (state {})",
                session.store.workflow(),
                state.as_str()
            ),
            hint: "Finish it, or start the new ticket in another workflow: \
                   `git orchestrate worktree add NAME`, or --workflow NAME."
                .into(),
            state: state.as_str().into(),
        },
        StartRefusal::TddUnderway(status) => EngineError::TicketRefused {
            message: format!(
                "workflow \"{}\" is a TDD workflow in state {status}",
                session.store.workflow(),
            ),
            hint: "Start the ticket in another workflow: `git orchestrate \
                   worktree add NAME`, or --workflow NAME."
                .into(),
            state: status.to_string(),
        },
        StartRefusal::NoMain => EngineError::BadInput {
            message: format!("the main branch `{main}` does not exist yet"),
            hint: format!("Make a first commit on {main}, then start the ticket."),
        },
    }
}

/// Creates `ticket/<slug of the title>` at `pin` (with a number when that branch exists)
/// and returns its name.
fn take_branch(session: &Session, title: &str, pin: &str) -> Result<String, EngineError> {
    let slug = crate::workflow::claims::slug(title);
    let slug = if slug.is_empty() {
        "ticket".into()
    } else {
        slug
    };
    for n in 1..1000 {
        let name = if n == 1 {
            format!("ticket/{slug}")
        } else {
            format!("ticket/{slug}-{n}")
        };
        if !crate::store::is_valid_branch_name(&name) || session.store.branch_exists(&name)? {
            continue;
        }
        // Created only if nobody made it meanwhile.
        if session
            .git
            .update_ref_cas(&branch_ref(&name), pin, None)
            .is_ok()
        {
            return Ok(name);
        }
    }
    Err(EngineError::BadInput {
        message: format!("no free branch name for ticket/{slug}"),
        hint: "Give the ticket another title.".into(),
    })
}

/// Makes the ticket's branch at its verified tip when it does not exist (a crash came
/// between the ticket's write and its branch), and checks it out here when this worktree has
/// no changes to tracked files; says what it did.
fn ensure_branch(session: &Session, ticket: &Ticket) -> Result<String, EngineError> {
    let git = &session.git;
    let here = session.store.head_branch()?;
    if session.store.branch_exists(&ticket.branch)? && here.as_deref() != Some(&ticket.branch) {
        if !git.tracked_changes()?.trim().is_empty() {
            return Ok(format!(
                "branch {} made at {}; not checked out: this working tree has changes (commit or \
                 stash them, then `git switch {}`)",
                ticket.branch,
                crate::short_id(&ticket.verified),
                ticket.branch
            ));
        }
        if git.checkout(&ticket.branch).is_err() {
            return Ok(format!(
                "branch {} made at {}; not checked out here (`git switch {}` where the developer \
                 works)",
                ticket.branch,
                crate::short_id(&ticket.verified),
                ticket.branch
            ));
        }
        return Ok(format!(
            "branch {} made at {} and checked out",
            ticket.branch,
            crate::short_id(&ticket.verified)
        ));
    }
    if !session.store.branch_exists(&ticket.branch)? {
        if !git.tracked_changes()?.trim().is_empty() {
            git.update_ref_cas(&branch_ref(&ticket.branch), &ticket.verified, None)?;
            return Ok(format!(
                "branch {} made at {}; not checked out: this working tree has changes \
                 (commit or stash them, then `git switch {}`)",
                ticket.branch,
                crate::short_id(&ticket.verified),
                ticket.branch
            ));
        }
        git.checkout_new_branch(&ticket.branch, &ticket.verified)?;
        return Ok(format!(
            "branch {} made at {} and checked out",
            ticket.branch,
            crate::short_id(&ticket.verified)
        ));
    }
    Ok(format!("branch {} exists", ticket.branch))
}

/// The prompt file for `role` (and the current assignment's mode), as main has it at the
/// ticket's pin: the agent cannot rewrite its own instructions on the branch.
fn prompt(session: &Session, ticket: &Ticket, role: Role) -> Result<Option<String>, EngineError> {
    let name = match role {
        Role::Manager => "manager.md".to_string(),
        Role::Developer => match ticket.current().and_then(|s| s.assignment.as_ref()) {
            Some(a) => format!("developer-{}.md", a.mode.as_str()),
            None => return Ok(None),
        },
    };
    session.master_plan_at(&ticket.pin, &format!("{PROMPTS_DIR}/{name}"))
}

/// The briefing for `role` (`None`: whoever's turn it is). A role asking out of turn gets
/// the briefing with the next legal action; `turn` says whose turn it is.
pub fn briefing(
    session: &Session,
    role: Option<Role>,
) -> Result<(TicketSnapshot, String), EngineError> {
    let snap = read(session)?;
    let shown = role.or(snap.ticket.state.role()).unwrap_or(Role::Manager);
    let prompt = prompt(session, &snap.ticket, shown)?;
    let mut text = ticket::briefing(
        &snap.ticket,
        session.store.workflow(),
        Some(shown),
        prompt.as_deref(),
    );
    if shown == Role::Developer
        && snap.ticket.state == TicketState::Developer
        && session.store.head_branch()?.as_deref() != Some(snap.ticket.branch.as_str())
    {
        text.push_str(&format!(
            "\nThis worktree is not on the ticket's branch: `git switch {}` first.\n",
            snap.ticket.branch
        ));
    }
    Ok((snap, text))
}

/// The event header's text: one line of JSON.
fn recorded_json(recorded: &ticket::Recorded) -> Result<String, EngineError> {
    serde_json::to_string(recorded)
        .map_err(|e| EngineError::Internal(format!("a ticket event does not serialize: {e}")))
}

/// Writes the outcome of `action` on `snap` (refused: nothing is written).
fn write(
    session: &Session,
    snap: &TicketSnapshot,
    role: Option<Role>,
    action: Action,
    event: &str,
    summary: &str,
) -> Result<Outcome, EngineError> {
    write_before(session, snap, role, action, (event, summary), &mut |_| {
        Ok(())
    })
}

/// [`write`], with `before` given the new commit before the ticket's ref moves.
fn write_before(
    session: &Session,
    snap: &TicketSnapshot,
    role: Option<Role>,
    action: Action,
    (event, summary): (&str, &str),
    before: &mut dyn FnMut(gix::ObjectId) -> Result<(), EngineError>,
) -> Result<Outcome, EngineError> {
    let at = now();
    let next = ticket::apply(&snap.ticket, role, action.clone(), at)
        .map_err(|r| refused(&snap.ticket, r))?;
    let recorded = recorded_json(&ticket::Recorded {
        at,
        action: Some(action),
    })?;
    let id = session.store.write_ticket_before(
        Some(snap.tip),
        Some(snap.ticket.state),
        &next,
        (event, summary, &recorded),
        before,
    )?;
    Ok(Outcome {
        workflow: session.store.workflow().to_string(),
        tip: id.to_string(),
        state: next.state,
        message: String::new(),
        halted: next.state == TicketState::Halted,
        ticket: next,
    })
}

/// The role and the state, judged once the input is (docs/tickets.md: the input is checked
/// first, exit 2), before anything is read or run for the call: a tool called out of turn
/// with good input hears the next legal action.
fn precheck(session: &Session, role: Option<Role>, tool: Tool) -> Result<(), EngineError> {
    let snap = read(session)?;
    ticket::check(&snap.ticket, role, tool).map_err(|r| refused(&snap.ticket, r))
}

/// A tool called with its parameters as JSON (an MCP call's arguments): the input checked
/// first (docs/tickets.md), then the tool.
pub fn call(
    session: &Session,
    role: Option<Role>,
    tool: Tool,
    input: &Value,
) -> Result<Outcome, EngineError> {
    match tool {
        Tool::Assign => assign(
            session,
            role,
            parse_assignment(input).map_err(|p| invalid(tool, p))?,
        ),
        Tool::UpdateSubtask => update(
            session,
            role,
            parse_update(input).map_err(|p| invalid(tool, p))?,
        ),
        Tool::CompleteTicket => complete(
            session,
            role,
            &parse_complete_ticket(input).map_err(|p| invalid(tool, p))?,
        ),
        Tool::SubtaskComplete => report(
            session,
            role,
            parse_report(input).map_err(|p| invalid(tool, p))?,
        ),
    }
}

/// `assign` (`assign_to_developer`, docs/tickets.md), its input checked.
pub fn assign(
    session: &Session,
    role: Option<Role>,
    assignment: Assignment,
) -> Result<Outcome, EngineError> {
    precheck(session, role, Tool::Assign)?;
    session.with_retries(|| {
        let snap = read(session)?;
        ticket::check(&snap.ticket, role, Tool::Assign).map_err(|r| refused(&snap.ticket, r))?;
        let mut outcome = write(
            session,
            &snap,
            role,
            Action::Assign(assignment.clone()),
            "assign",
            &assignment.goal,
        )?;
        let id = outcome.ticket.current.clone().unwrap_or_default();
        outcome.message = format!(
            "{id} assigned to the developer ({}); the developer's session gets it with \
             `git orchestrate get-task --role developer`",
            assignment.mode.as_str()
        );
        // A crash between `ticket new`'s write and its branch left no branch: made now.
        if !session.store.branch_exists(&outcome.ticket.branch)? {
            outcome.message = format!(
                "{}; {}",
                outcome.message,
                ensure_branch(session, &outcome.ticket)?
            );
        }
        Ok(outcome)
    })
}

/// `update-subtask` (`update_subtask`, docs/tickets.md), its input checked.
pub fn update(
    session: &Session,
    role: Option<Role>,
    update: Update,
) -> Result<Outcome, EngineError> {
    precheck(session, role, Tool::UpdateSubtask)?;
    session.with_retries(|| {
        let snap = read(session)?;
        ticket::check(&snap.ticket, role, Tool::UpdateSubtask)
            .map_err(|r| refused(&snap.ticket, r))?;
        let id = snap.ticket.current.clone().unwrap_or_default();
        let mut outcome = write(
            session,
            &snap,
            role,
            Action::Update(update.clone()),
            "update-subtask",
            &format!("{id} {}: {}", update.status.as_str(), update.notes),
        )?;
        let status = outcome
            .ticket
            .subtask(&id)
            .map(|s| s.status.as_str())
            .unwrap_or_default();
        outcome.message = format!("{id} is now {status}");
        Ok(outcome)
    })
}

/// `subtask-complete` (`subtask_complete`, docs/tickets.md): the report's commit is observed
/// before the report is stored beside what was observed.
pub fn report(
    session: &Session,
    role: Option<Role>,
    mut report: Report,
) -> Result<Outcome, EngineError> {
    precheck(session, role, Tool::SubtaskComplete)?;
    super::hermetic::require(session)?;
    session.with_retries(|| {
        let snap = read(session)?;
        ticket::check(&snap.ticket, role, Tool::SubtaskComplete)
            .map_err(|r| refused(&snap.ticket, r))?;
        let t = &snap.ticket;
        let subtask = t.current().cloned().ok_or_else(|| {
            EngineError::Internal("a ticket in DEVELOPER without a current subtask".into())
        })?;
        let commit = observe::delivered_commit(session, t, &subtask, &report.commit)?;
        let observed = observe::observe(session, t, &subtask, &commit)?;
        report.commit = commit.clone();
        let summary = format!(
            "{} reported {} at {}",
            subtask.id,
            report.status.as_str(),
            crate::short_id(&commit)
        );
        let mut outcome = write(
            session,
            &snap,
            role,
            Action::Report {
                report: Box::new(report.clone()),
                observed: Box::new(observed),
            },
            "subtask-complete",
            &summary,
        )?;
        let contradictions = outcome
            .ticket
            .subtask(&subtask.id)
            .map(|s| s.contradictions.clone())
            .unwrap_or_default();
        outcome.message = if contradictions.is_empty() {
            format!("{summary}; what was observed agrees with the report; the manager verifies it")
        } else {
            format!(
                "{summary}; what was observed contradicts the report, and the manager is shown: {}",
                contradictions.join("; ")
            )
        };
        Ok(outcome)
    })
}

/// `complete-ticket` (`complete_ticket`, docs/tickets.md): every subtask complete, the branch as
/// verified, squashed, checked and merged.
pub fn complete(
    session: &Session,
    role: Option<Role>,
    summary: &str,
) -> Result<Outcome, EngineError> {
    precheck(session, role, Tool::CompleteTicket)?;
    super::hermetic::require(session)?;
    session.with_retries(|| {
        let snap = read(session)?;
        // A landing a kill interrupted after its push is completed before anything else
        // (docs/integrity.md, "A landing in flight"): its completion is on the remote already.
        if let Some(done) = complete_interrupted(session, &snap)? {
            return Ok(done);
        }
        ticket::check(&snap.ticket, role, Tool::CompleteTicket)
            .map_err(|r| refused(&snap.ticket, r))?;
        // Nothing is merged from a history that does not replay.
        let audit =
            super::chain::audit_chain(&session.store, session.store.workflow(), snap.tip, None)?;
        if let Some(problem) = audit.forged {
            return Err(EngineError::Forged {
                what: "the ticket was not completed".into(),
                problem: Box::new(problem),
            });
        }
        let (snap, squash, changed) = squash_recorded(session, snap, role, summary)?;
        // The completion is the record of the merge: written first and pushed with main
        // (docs/integrity.md, "A landing in flight").
        let completion = Completion {
            session,
            snap: &snap,
            role,
            summary,
            squash: &squash,
            written: std::cell::RefCell::new(None),
        };
        let landed = finish::land(
            session,
            &snap.ticket,
            (&squash, changed.as_ref()),
            &completion,
        )?;
        let recorded = completion.written.take();
        let (action, event) = match &landed {
            finish::Landed::Merged { squash, merge } => (
                Action::Complete {
                    summary: summary.to_string(),
                    squash: squash.clone(),
                    merge: merge.clone(),
                },
                "complete-ticket",
            ),
            finish::Landed::Halted { reason } => (
                Action::Halt {
                    reason: reason.clone(),
                },
                "halt",
            ),
        };
        let mut outcome = match recorded {
            Some(outcome) => outcome,
            None => write(session, &snap, role, action, event, summary)?,
        };
        outcome.message = match landed {
            finish::Landed::Merged { squash, merge } => format!(
                "ticket done: squashed as {} and merged into {}{}",
                crate::short_id(&squash),
                snap.ticket.main_branch,
                merge
                    .map(|m| format!(" ({})", crate::short_id(&m)))
                    .unwrap_or_default()
            ),
            finish::Landed::Halted { reason } => reason,
        };
        if !outcome.halted {
            outcome.message.push_str(&archive_after_landing(session));
        }
        Ok(outcome)
    })
}

/// The landing of `snap`'s squash that a kill interrupted after its push, completed (its
/// completion is on the remote already): the outcome, or `None` when there is none.
fn complete_interrupted(
    session: &Session,
    snap: &TicketSnapshot,
) -> Result<Option<Outcome>, EngineError> {
    let Some(squash) = snap.ticket.finishing.as_deref() else {
        return Ok(None);
    };
    let record = match crate::engine::get_task::landing::complete_interrupted_ticket(
        session,
        snap.tip,
        &snap.ticket.main_branch,
        &snap.ticket.branch,
        squash,
    )? {
        Ok(Some(record)) => record,
        Ok(None) => return Ok(None),
        Err(why) => {
            return Err(EngineError::TicketRefused {
                message: format!("the ticket's interrupted landing: {why}"),
                hint: "Fix what is named, then run `git orchestrate complete-ticket` again.".into(),
                state: snap.ticket.state.as_str().into(),
            });
        }
    };
    let done = read(session)?;
    if done.tip != record {
        return Err(EngineError::Conflict);
    }
    let merge = done.ticket.finished.as_ref().and_then(|f| f.merge.clone());
    Ok(Some(Outcome {
        workflow: session.store.workflow().to_string(),
        tip: record.to_string(),
        state: done.ticket.state,
        message: format!(
            "ticket done: squashed as {} and merged into {}{} (the landing a kill interrupted, \
             completed)",
            crate::short_id(squash),
            done.ticket.main_branch,
            merge
                .map(|m| format!(" ({})", crate::short_id(&m)))
                .unwrap_or_default()
        ),
        ticket: done.ticket,
        halted: false,
    }))
}

/// The squash `complete-ticket` lands, made, checked and recorded first (`finish-start`): a
/// crash or a lost race after it lands the same squash, and no other tool acts meanwhile. One
/// recorded by a run that stopped before it landed is proven again, for its note. With the
/// snapshot after it and the tests it changed that existed at the pin.
fn squash_recorded(
    session: &Session,
    snap: TicketSnapshot,
    role: Option<Role>,
    summary: &str,
) -> Result<(TicketSnapshot, String, Option<ChangedTests>), EngineError> {
    if let Some(squash) = snap.ticket.finishing.clone() {
        // Its plan is recorded already, with the squash.
        let (changed, _) = finish::prove(session, &snap.ticket, &squash)?;
        return Ok((snap, squash, changed));
    }
    let (squash, changed, plan) = finish::squash(session, &snap.ticket, summary)?;
    let marked = write(
        session,
        &snap,
        role,
        Action::Finishing {
            squash: squash.clone(),
            plans: vec![plan],
        },
        "finish-start",
        summary,
    )?;
    let tip = gix::ObjectId::from_hex(marked.tip.as_bytes())
        .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
    let snap = TicketSnapshot {
        tip,
        time: snap.time,
        ticket: marked.ticket,
    };
    Ok((snap, squash, changed))
}

/// `[archive] auto` once a ticket landed (docs/config.md): what it archived, or why it did
/// not, as a sentence to add to the completion's message; the merge stands either way.
fn archive_after_landing(session: &Session) -> String {
    match crate::engine::archive::auto_archive(session) {
        Ok(Some(done)) if !done.archived.is_empty() => format!(
            "; [archive] auto: archived {} finished workflow{} (the archive holds {})",
            done.archived.len(),
            if done.archived.len() == 1 { "" } else { "s" },
            done.total
        ),
        Ok(_) => String::new(),
        Err(e) => format!("; [archive] auto did not archive ({e})"),
    }
}

/// A ticket's completion, written as the record of its merge by the landing.
struct Completion<'a> {
    session: &'a Session,
    snap: &'a TicketSnapshot,
    role: Option<Role>,
    summary: &'a str,
    squash: &'a str,
    written: std::cell::RefCell<Option<Outcome>>,
}

impl crate::engine::get_task::landing::Recorder for Completion<'_> {
    fn tip(&self) -> gix::ObjectId {
        self.snap.tip
    }

    fn record(
        &self,
        merge: Option<&str>,
        before: &mut dyn FnMut(gix::ObjectId) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let action = Action::Complete {
            summary: self.summary.to_string(),
            squash: self.squash.to_string(),
            merge: merge.map(str::to_string),
        };
        let outcome = write_before(
            self.session,
            self.snap,
            self.role,
            action,
            ("complete-ticket", self.summary),
            before,
        )?;
        *self.written.borrow_mut() = Some(outcome);
        Ok(())
    }

    /// The subtasks' commits lead to the verified commit, which neither the squash nor the
    /// merge reaches, and the ticket's branch goes at the merge.
    fn keep(&self) -> Option<(String, String)> {
        Some((
            self.snap.ticket.verified.clone(),
            format!("refs/orchestrator/kept/{}", self.session.store.workflow()),
        ))
    }
}

/// `resume` on a halted ticket: a human says the conflict (or what kept a role stuck) is
/// dealt with; the ticket returns to the state it halted from.
pub fn resume(
    session: &Session,
    guidance: Option<&str>,
    human: crate::workflow::Human,
) -> Result<Outcome, EngineError> {
    session.with_retries(|| {
        let snap = read(session)?;
        if observe::ticket_config(session, &snap.ticket)?.human.require
            == crate::config::HumanProof::Signature
        {
            return Err(EngineError::TicketRefused {
                message: "the pinned configuration requires signed answers ([human] require = \
                          \"signature\"), and a ticket's `resume` takes no signature in this \
                          version"
                    .into(),
                hint: "Resume it under a configuration that takes attributed answers, or finish \
                       the ticket's merge by hand (docs/tickets.md)."
                    .into(),
                state: snap.ticket.state.as_str().into(),
            });
        }
        let mut outcome = write(
            session,
            &snap,
            None,
            Action::Resume {
                guidance: guidance.map(str::to_string),
                human: Some(human.as_str().to_string()),
            },
            "resume",
            guidance.unwrap_or("resumed"),
        )?;
        outcome.message = format!("the ticket is back in {}", outcome.ticket.state.as_str());
        Ok(outcome)
    })
}

/// Halts the ticket for `run`, which found the role whose turn it is stuck (a lost race
/// re-reads and retries; a ticket already halted or done is left as it is).
pub fn halt_stuck(session: &Session, reason: &str) -> Result<(), EngineError> {
    session.with_retries(|| {
        let snap = read(session)?;
        if snap.ticket.state.role().is_none() {
            return Ok(());
        }
        write(
            session,
            &snap,
            None,
            Action::Halt {
                reason: reason.to_string(),
            },
            "halt",
            reason,
        )
        .map(|_| ())
    })
}
