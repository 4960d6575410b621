//! `complete-ticket`'s finalization and merge (docs/tickets.md): the ticket's branch, as
//! verified subtask by subtask, squashed into one commit on its pin, the pinned gates run
//! on it in a clean worktree, a final note on it, and the merge into main made, pushed and
//! recorded by the TDD workflow's own landing (docs/architecture.md, "Finalization and
//! merge").

use super::observe::{gates_in, pinned_config};
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session};
use crate::store::branch_ref;
use crate::workflow::Event;
use crate::workflow::ticket::{GateVerdict, SubtaskStatus, Ticket};

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

/// Squashes, checks and merges the ticket's branch. Safe to run again after a crash: a
/// branch that already holds the squash is not squashed again.
pub fn finish(session: &Session, ticket: &Ticket, summary: &str) -> Result<Landed, EngineError> {
    let git = &session.git;
    let branch = &ticket.branch;
    let tip = git.rev_parse(&branch_ref(branch)).map_err(|_| {
        refused(
            format!("the ticket's branch {branch} does not exist"),
            "A human restores it at the last accepted commit.",
        )
    })?;
    let verified_tree = git.tree_of(&ticket.verified)?;
    let already = tip != ticket.verified
        && git.parents(&tip)? == [ticket.pin.clone()]
        && git.tree_of(&tip)? == verified_tree;
    if tip != ticket.verified && !already {
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
    debug_assert!(
        ticket
            .subtasks
            .iter()
            .all(|s| s.status == SubtaskStatus::Complete)
    );
    let config = pinned_config(session, ticket)?;
    let squash = if already {
        tip.clone()
    } else {
        let has_identity = session.store.identity().is_some();
        git.commit_tree(
            &verified_tree,
            &[&ticket.pin],
            &message(ticket, session.store.workflow(), summary),
            has_identity,
        )?
    };
    // The gates once more, on exactly what will be merged, in a worktree holding only it.
    let gates = {
        let scratch = Scratch::new(session, &squash, &verified_tree)?;
        gates_in(session, &config, &scratch)?
    };
    if gates.result == GateVerdict::Fail {
        let failed = gates.failed.clone().map_or_else(String::new, |f| {
            format!(": `{}` ended with {}\n{}", f.gate, f.exit, f.tail)
        });
        return Err(EngineError::TicketGatesFailed {
            message: format!("the gates fail on the squashed ticket in a clean worktree{failed}"),
        });
    }
    if !already {
        git.update_ref_cas(&branch_ref(branch), &squash, Some(&tip))?;
    }
    let verification = match gates.result {
        GateVerdict::Pass => format!("gates passed: {}", gates.ran.join(", ")),
        GateVerdict::None | GateVerdict::Fail => "not verified: no gates".to_string(),
    };
    let note = serde_json::json!({
        "v": 1,
        "kind": "ticket",
        "workflow": session.store.workflow(),
        "title": ticket.title,
        "branch": branch,
        "tree": verified_tree,
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
    session.store.add_note_line(&squash, &note.to_string())?;
    // The landing needs a workflow state only for the remote and the gates in force: the
    // ticket's main, with no PR.
    let state = crate::workflow::State::new(Some(ticket.main_branch.clone()));
    let mut raced = 0;
    let event = crate::engine::get_task::merge::land(
        session,
        &state,
        None,
        branch,
        &squash,
        &ticket.main_branch,
        &mut raced,
    )?;
    Ok(match event {
        Event::Merged { main, .. } => Landed::Merged {
            squash,
            merge: main,
        },
        Event::MergeConflicted { message } => Landed::Halted { reason: message },
        Event::MergeBlocked { reason } => {
            return Err(refused(
                format!("the ticket's branch was squashed and checked, but not merged: {reason}"),
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
