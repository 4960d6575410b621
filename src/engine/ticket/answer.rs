//! A human's answer on a finished ticket: `approve --flaky [--tree TREE]` accepts a pass of
//! the ticket's tree after an earlier failure of it, which lifts the server hook's and
//! `attest`'s memory of that failure (docs/integrity.md, "A judged tree is not judged
//! again"). Signed as a TDD workflow's answers are (src/engine/answers.rs), recorded as the
//! ticket's next commit.

use super::{Outcome, read, recorded_json, refused};
use crate::engine::answers::{self, Answer, Signing, TreeApproval};
use crate::engine::{EngineError, Session};
use crate::store::TicketSnapshot;
use crate::workflow::Human;
use crate::workflow::ticket::{self, Action, TicketState};

/// The approval asked for on `snap`: `tree` (a tree or a commit), else the tree of the
/// ticket's merge (of its squash, when it merged none). Refused unless the ticket is
/// finished.
fn approval(
    session: &Session,
    snap: &TicketSnapshot,
    tree: Option<&str>,
) -> Result<TreeApproval, EngineError> {
    let Some(finished) = snap
        .ticket
        .finished
        .as_ref()
        .filter(|_| snap.ticket.state == TicketState::TicketDone)
    else {
        return Err(EngineError::TicketRefused {
            message: format!(
                "a pass after a failure is accepted for a finished ticket, and this one is in {}",
                snap.ticket.state.as_str()
            ),
            hint: "Answer once the ticket's merge is made (`git orchestrate ticket show`).".into(),
            state: snap.ticket.state.as_str().into(),
        });
    };
    let rev = tree.unwrap_or(finished.merge.as_deref().unwrap_or(&finished.squash));
    let tree = session
        .git
        .tree_of(rev)
        .map_err(|_| EngineError::BadInput {
            message: format!("\"{rev}\" names no tree or commit in this repository"),
            hint: "Name the tree the server or attest named (--tree TREE), or a commit.".into(),
        })?;
    Ok(TreeApproval {
        tree,
        tests: Vec::new(),
        flaky: true,
    })
}

/// `approve --flaky` on a ticket workflow: checked (signed where the ticket's pinned
/// configuration requires it; a signature given must hold), then recorded, the ticket
/// otherwise unchanged.
pub fn approve_flaky(
    session: &Session,
    tree: Option<&str>,
    human: Human,
    signing: &Signing,
) -> Result<(Outcome, TreeApproval, Option<String>), EngineError> {
    session.with_retries(|| {
        let snap = read(session)?;
        let approved = approval(session, &snap, tree)?;
        let signed = answers::authorise_ticket(
            session,
            &snap,
            Answer::ApproveTree,
            &approved.text(),
            signing,
        )?;
        let action = Action::ApproveFlaky {
            tree: approved.tree.clone(),
            human: Some(human.as_str().to_string()),
        };
        let at = super::now();
        let next = ticket::apply(&snap.ticket, None, action.clone(), at)
            .map_err(|r| refused(&snap.ticket, r))?;
        let recorded = recorded_json(&ticket::Recorded {
            at,
            action: Some(action),
        })?;
        let summary = format!(
            "a pass of the tree {} after an earlier failure",
            crate::short_id(&approved.tree)
        );
        let id = session.store.write_ticket_answer(
            snap.tip,
            snap.ticket.state,
            &next,
            ("approve-flaky", &summary, &recorded),
            human.as_str(),
            signed
                .as_ref()
                .map(|s| (s.principal.as_str(), s.signature.as_str())),
        )?;
        let outcome = Outcome {
            workflow: session.store.workflow().to_string(),
            tip: id.to_string(),
            state: next.state,
            message: String::new(),
            halted: false,
            ticket: next,
        };
        Ok((outcome, approved.clone(), signed.map(|s| s.principal)))
    })
}

/// The bytes to sign for `approve --flaky` as asked, on the ticket as it is now
/// (`--print-payload`).
pub fn approve_flaky_payload(
    session: &Session,
    tree: Option<&str>,
) -> Result<Vec<u8>, EngineError> {
    let snap = read(session)?;
    let approved = approval(session, &snap, tree)?;
    Ok(answers::payload(
        session.store.workflow(),
        &snap.tip,
        Answer::ApproveTree,
        &approved.text(),
    ))
}
