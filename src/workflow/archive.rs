//! Which workflows are finished and leave the live ref space for the archive (docs/refs.md,
//! "The archive"): a rule on what a workflow's tip says, nothing read here.

use super::Status;
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

#[cfg(test)]
mod tests {
    use super::*;

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
