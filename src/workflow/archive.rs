//! Which workflows are finished and leave the live ref space for the archive (docs/refs.md,
//! "The archive"), and which claims leave the claim refs with them: rules on what was read,
//! nothing read here.

use super::Status;
use super::claims::expired;
use super::ticket::TicketState;

/// A TDD workflow is finished when it stands in INITIALIZING and the agent's word that no PR
/// of the master plan is left still holds (`idle_holds`: the master plan did not change
/// since): a workflow between two PRs still has work, and `get-task` would start the next.
pub fn tdd_finished(status: Status, idle_holds: bool) -> bool {
    status == Status::Initializing && idle_holds
}

/// A ticket workflow is finished once its ticket is done; a halted one waits for a human.
pub fn ticket_finished(state: TicketState) -> bool {
    state == TicketState::TicketDone
}

/// What `archive` knows of a claim's holder (docs/refs.md, "The archive"): the claim's
/// expiry, and where the workflow it names stands once this archive is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    pub expires: i64,
    /// A live ref of the workflow remains (here, or on the remote as fetched).
    pub live: bool,
    /// The archive holds the workflow (archived before, or by this very run).
    pub archived: bool,
}

/// A claim leaves the live ref space when its workflow is archived, or when it is past its
/// expiry (and the skew margin) with no live workflow behind it: nobody renews or releases it
/// any more. A live workflow's claim stays: `sync` renews it and the merge releases it.
pub fn claim_finished(holder: Holder, now: i64) -> bool {
    !holder.live && (holder.archived || expired(holder.expires, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_goes_with_its_archived_workflow_or_once_it_lapsed_with_none_live() {
        let now = 100_000;
        let holder = |expires, live, archived| Holder {
            expires,
            live,
            archived,
        };
        let lapsed = now - 3_600;
        let in_force = now + 60;
        assert!(claim_finished(holder(in_force, false, true), now));
        assert!(claim_finished(holder(lapsed, false, false), now));
        assert!(
            !claim_finished(holder(in_force, false, false), now),
            "in force, its workflow not seen yet"
        );
        assert!(
            !claim_finished(holder(lapsed, true, false), now),
            "a live workflow's"
        );
        assert!(
            !claim_finished(holder(lapsed, true, true), now),
            "the live ref wins"
        );
        // Within the skew margin a claim still holds.
        assert!(!claim_finished(
            holder(now - super::super::claims::SKEW_SECONDS, false, false),
            now
        ));
    }

    #[test]
    fn only_an_idle_initializing_workflow_or_a_done_ticket_is_finished() {
        assert!(tdd_finished(Status::Initializing, true));
        assert!(!tdd_finished(Status::Initializing, false));
        assert!(!tdd_finished(Status::Halted, true));
        assert!(ticket_finished(TicketState::TicketDone));
        assert!(!ticket_finished(TicketState::Halted));
        assert!(!ticket_finished(TicketState::Manager));
    }
}
