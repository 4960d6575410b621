//! `complete-ticket`'s finalization and merge (docs/tickets.md): the ticket's branch, as
//! verified subtask by subtask, squashed into one commit on its pin, the pinned gates run
//! on it in a clean worktree, a final note on it, and the merge into main made, pushed and
//! recorded by the TDD workflow's own landing (docs/architecture.md, "Finalization and
//! merge").

use super::observe::ticket_config;
use crate::engine::proof;
use crate::engine::{EngineError, Session};
use crate::store::branch_ref;
use crate::workflow::Event;
use crate::workflow::notes::ChangedTests;
use crate::workflow::proof::ProofPlan;
use crate::workflow::ticket::{GateVerdict, Ticket};

/// How the ticket's branch ended.
pub enum Landed {
    Merged {
        squash: String,
        merge: Option<String>,
    },
    /// The merge conflicted: nothing was changed but the branch, which holds the squash.
    Halted { reason: String },
}

fn refused(message: String, hint: &str) -> EngineError {
    EngineError::TicketRefused {
        message,
        hint: hint.to_string(),
        state: "MANAGER".into(),
    }
}

/// The squashed commit's message: the title, the summary, each subtask.
fn message(ticket: &Ticket, workflow: &str, summary: &str) -> String {
    let mut text = format!("{}\n\n{}\n\n", ticket.title.trim(), summary.trim());
    for s in &ticket.subtasks {
        text.push_str(&format!("- {}: {}\n", s.id, s.title));
    }
    text.push_str(&format!("\nOrchestrator-Ticket: {workflow}\n"));
    text
}

/// How far back main's first parents are searched for the ticket's merge.
const MERGE_SEARCH: usize = 1000;

/// The merge on main that brought in `squash`, when main holds one.
fn merge_of(
    session: &Session,
    ticket: &Ticket,
    squash: &str,
) -> Result<Option<String>, EngineError> {
    let git = &session.git;
    let Ok(main) = git.rev_parse(&branch_ref(&ticket.main_branch)) else {
        return Ok(None);
    };
    if !git.is_ancestor(squash, &main)? {
        return Ok(None);
    }
    let mut at = main;
    for _ in 0..MERGE_SEARCH {
        let parents = git.parents(&at)?;
        if parents.get(1).map(String::as_str) == Some(squash) {
            return Ok(Some(at));
        }
        match parents.first() {
            Some(first) if *first != ticket.pin => at = first.clone(),
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// The squash `complete-ticket` records before it lands: one commit on the pin holding the
/// last accepted tree, with nothing under the protected paths changed, on which the pinned
/// gates pass in a clean worktree ([`prove`]); with the tests that existed at the pin that
/// it changed or removed, as its final note records them, and the plan that proved it.
/// Nothing is moved: the commit is an object until recorded.
pub fn squash(
    session: &Session,
    ticket: &Ticket,
    summary: &str,
) -> Result<(String, Option<ChangedTests>, ProofPlan), EngineError> {
    let git = &session.git;
    let branch = &ticket.branch;
    let tip = git.rev_parse(&branch_ref(branch)).map_err(|_| {
        refused(
            format!("the ticket's branch {branch} does not exist"),
            "A human restores it at the last accepted commit.",
        )
    })?;
    if tip != ticket.verified {
        return Err(refused(
            format!(
                "the ticket's branch {branch} moved since the last accepted subtask ({} → {}): \
                 those commits are in no accepted subtask",
                crate::short_id(&ticket.verified),
                crate::short_id(&tip)
            ),
            "Assign a subtask that covers them (its report is checked), or have a human reset \
             the branch to the last accepted commit.",
        ));
    }
    let config = ticket_config(session, ticket)?;
    let specs =
        crate::engine::verify::protected_specs(git, &config, &[&ticket.pin, &ticket.verified])?;
    let protected = git.changed_files_in(&ticket.pin, &ticket.verified, &specs)?;
    if !protected.is_empty() {
        return Err(EngineError::TicketGatesFailed {
            message: format!(
                "the ticket changes paths the configuration protects ({}): a human changes these \
                 on main",
                protected.join(", ")
            ),
        });
    }
    let verified_tree = git.tree_of(&ticket.verified)?;
    let has_identity = session.store.identity().is_some();
    let squash = git.commit_tree(
        &verified_tree,
        &[&ticket.pin],
        &message(ticket, session.store.workflow(), summary),
        has_identity,
    )?;
    let (changed, plan) = prove(session, ticket, &squash)?;
    Ok((squash, changed, plan))
}

/// The ticket's final check of `squash` ([`crate::workflow::proof::final_gates`], run by the
/// executor): the gates once more, on exactly what will be merged, in a worktree holding
/// only it; then with the tests that existed at the pin that it changed or removed put back
/// as they were there. Refused when the gates fail, or when the policy (`[gates]
/// pinned_tests`) refuses those tests; else those tests, judged, as the final note and
/// `attest` name them, and the plan run, which the squash's record keeps for `attest`.
pub fn prove(
    session: &Session,
    ticket: &Ticket,
    squash: &str,
) -> Result<(Option<ChangedTests>, ProofPlan), EngineError> {
    let config = ticket_config(session, ticket)?;
    let changed = proof::changed_tests(session, &config, &ticket.pin, squash)?;
    let plan = final_plan(ticket, squash, changed.as_ref());
    let outcomes = proof::execute(session, &config, &plan, None)?;
    let Some(proof::Outcome::Gates { result: gates, .. }) = outcomes.first() else {
        return Err(EngineError::Internal(
            "a ticket's final plan ran no gates".into(),
        ));
    };
    if gates.result == GateVerdict::Fail {
        let failed = gates.failed.clone().map_or_else(String::new, |f| {
            format!(": `{}` ended with {}\n{}", f.gate, f.exit, f.tail)
        });
        return Err(EngineError::TicketGatesFailed {
            message: format!("the gates fail on the squashed ticket in a clean worktree{failed}"),
        });
    }
    let changed = proof::judged_changed(changed, &outcomes);
    if let Some(changed) = &changed
        && changed.verdict() == "refused"
    {
        return Err(EngineError::TicketGatesFailed {
            message: proof::ticket_changed_tests_refused(changed),
        });
    }
    Ok((changed, plan))
}

/// The plan of a ticket's final check of `squash` ([`crate::workflow::proof::final_gates`]),
/// put back the tests that existed at the pin that it changed or removed (`changed`): what
/// [`prove`] runs, and what `attest` makes again from the ticket's history to hold the
/// recorded one against.
pub fn final_plan(ticket: &Ticket, squash: &str, changed: Option<&ChangedTests>) -> ProofPlan {
    let existing = changed.map(|c| c.paths.clone()).unwrap_or_default();
    crate::workflow::proof::final_gates(squash, &ticket.pin, ticket.config.as_deref(), &existing)
}

/// Lands the recorded `squash`: the branch moved onto it, its final note, and the merge
/// into main by the TDD landing, gated again when main moved since the pin. Safe to run
/// again after a crash at any point: a branch already moved, a note already written, a
/// merge already on main (the branch deleted) are each taken as done. `changed` is what
/// [`prove`] found of the tests that existed at the pin: the final note records it as
/// `attest` names it.
pub fn land(
    session: &Session,
    ticket: &Ticket,
    (squash, changed): (&str, Option<&ChangedTests>),
    recorder: &dyn crate::engine::get_task::landing::Recorder,
) -> Result<Landed, EngineError> {
    let git = &session.git;
    let branch = &ticket.branch;
    let Ok(tip) = git.rev_parse(&branch_ref(branch)) else {
        // A crash after the merge deleted the branch and before the ticket recorded it.
        if let Some(merge) = merge_of(session, ticket, squash)? {
            return Ok(Landed::Merged {
                squash: squash.to_string(),
                merge: Some(merge),
            });
        }
        return Err(refused(
            format!(
                "the ticket's branch {branch} does not exist, and main holds no merge of its squash"
            ),
            "A human restores the branch at the recorded squash.",
        ));
    };
    if tip == ticket.verified {
        git.update_ref_cas(&branch_ref(branch), squash, Some(&tip))?;
    } else if tip != squash {
        return Err(refused(
            format!(
                "the ticket's branch {branch} is at {}, neither the last accepted commit nor the \
                 recorded squash {}",
                crate::short_id(&tip),
                crate::short_id(squash)
            ),
            "A human resets the branch to the recorded squash.",
        ));
    }
    let note = final_note(session, ticket, squash, changed)?;
    session.store.add_note_line(squash, &note.to_string())?;
    // The landing needs a workflow state only for the remote and the gates in force: the
    // ticket's main, with no PR.
    let state = crate::workflow::State::new(Some(ticket.main_branch.clone()));
    let mut out = crate::engine::get_task::merge::LandOutcome::default();
    let event = crate::engine::get_task::merge::land(
        session,
        &state,
        None,
        Some(recorder),
        Some(&ticket.pin),
        branch,
        squash,
        &ticket.main_branch,
        &mut out,
    )?;
    Ok(match event {
        Event::Merged { main, .. } => Landed::Merged {
            squash: squash.to_string(),
            merge: main,
        },
        Event::MergeConflicted { message } => Landed::Halted { reason: message },
        Event::MergeBlocked { reason } => {
            return Err(refused(
                format!("the ticket's squash is recorded and checked, but not merged: {reason}"),
                "Fix what is named, then run `git orchestrate complete-ticket` again: the squash is \
                 kept and not made twice.",
            ));
        }
        other => {
            return Err(EngineError::Internal(format!(
                "the merge ended in an unexpected event: {other:?}"
            )));
        }
    })
}

/// The ticket's final note on `squash`: its subtasks, the gates in force, and what [`prove`]
/// found of the tests that existed at the pin (`changed`).
fn final_note(
    session: &Session,
    ticket: &Ticket,
    squash: &str,
    changed: Option<&ChangedTests>,
) -> Result<serde_json::Value, EngineError> {
    let git = &session.git;
    let branch = &ticket.branch;
    let config = ticket_config(session, ticket)?;
    let verification = if config.preflight.is_empty() {
        "not verified: no gates".to_string()
    } else {
        format!("gates passed: {}", config.gate_names().join(", "))
    };
    let mut note = serde_json::json!({
        "v": 1,
        "kind": "ticket",
        "workflow": session.store.workflow(),
        "title": ticket.title,
        "branch": branch,
        "tree": git.tree_of(squash)?,
        "subtasks": ticket.subtasks.iter().map(|s| serde_json::json!({
            "id": s.id,
            "title": s.title,
            "accepted": s.accepted,
            "rejections": s.rejections,
            "override": s.override_reason,
        })).collect::<Vec<_>>(),
        "verification": verification,
        "tool": format!("git-orchestrate {}", env!("CARGO_PKG_VERSION")),
    });
    // As a PR's final note names them (src/workflow/notes.rs, `changed_tests`), with the
    // policy's verdict as `attest --json` gives it beside them.
    if let Some(changed) = changed {
        note["changed_tests"] = serde_json::to_value(changed)
            .map_err(|e| EngineError::Internal(format!("changed tests as JSON: {e}")))?;
        note["changed_tests_verdict"] = changed.verdict().into();
    }
    Ok(note)
}
