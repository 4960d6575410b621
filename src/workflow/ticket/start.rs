//! `ticket new`'s decisions (docs/tickets.md): whether its input may make a ticket, and
//! whether the workflow may start one, from the facts the engine gathers. Pure: the engine
//! then takes the branch and writes the ticket.

use super::TicketState;
use crate::workflow::Status;
use crate::workflow::fields::{self, Field, FieldProblem};

/// The longest title taken: it names the branch and heads every briefing.
pub const MAX_TITLE: usize = 200;

/// Why `ticket new`'s input makes no ticket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadStart {
    /// A text breaks its field's rule (docs/tickets.md: the title and each subtask a
    /// summary, the body a report).
    Field { field: Field, problem: FieldProblem },
    /// The title is more than one line, or longer than [`MAX_TITLE`].
    TitleNotOneLine,
}

/// `ticket new`'s input judged, in the order a person reads it: the title, the body, each
/// subtask. An empty body is no body.
pub fn check_input(title: &str, body: &str, subtasks: &[String]) -> Result<(), BadStart> {
    let field = |field: Field, text: &str| {
        fields::check(field, text).map_err(|problem| BadStart::Field { field, problem })
    };
    field(Field::Summary, title)?;
    if title.contains(['\n', '\r']) || title.trim().len() > MAX_TITLE {
        return Err(BadStart::TitleNotOneLine);
    }
    if !body.is_empty() {
        field(Field::Report, body)?;
    }
    subtasks
        .iter()
        .try_for_each(|subtask| field(Field::Summary, subtask))
}

/// What the workflow's ref holds when a ticket is asked to start there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    /// No workflow yet.
    Nothing,
    Ticket {
        title: String,
        state: TicketState,
    },
    /// A TDD workflow, in this status.
    Tdd(Status),
}

/// The facts `ticket new` decides from, read fresh on each attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub holder: Holder,
    /// Whether the main branch has a commit to start the ticket's branch from.
    pub main_exists: bool,
}

/// Why the workflow starts no ticket now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartRefusal {
    /// It works on another ticket, which is not done.
    Busy { title: String, state: TicketState },
    /// It is a TDD workflow past INITIALIZING: its PR is under way.
    TddUnderway(Status),
    /// The main branch has no commit yet.
    NoMain,
}

/// Whether a ticket starts: `Ok` with the state the workflow leaves (the done ticket it
/// follows, if any), which the write holds the ref to. A workflow's own work comes first:
/// a busy one refuses whatever main is.
pub fn decide(facts: &Facts) -> Result<Option<TicketState>, StartRefusal> {
    let from = match &facts.holder {
        Holder::Ticket { title, state } if *state != TicketState::TicketDone => {
            return Err(StartRefusal::Busy {
                title: title.clone(),
                state: *state,
            });
        }
        Holder::Ticket { state, .. } => Some(*state),
        Holder::Tdd(status) if *status != Status::Initializing => {
            return Err(StartRefusal::TddUnderway(*status));
        }
        Holder::Tdd(_) | Holder::Nothing => None,
    };
    if !facts.main_exists {
        return Err(StartRefusal::NoMain);
    }
    Ok(from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ticket(state: TicketState) -> Holder {
        Holder::Ticket {
            title: "Old".into(),
            state,
        }
    }

    /// Every holder, with and without a main branch: the whole table.
    #[test]
    fn each_holder_and_main_decides_the_start() {
        let busy = |state| {
            Err(StartRefusal::Busy {
                title: "Old".into(),
                state,
            })
        };
        let rows: Vec<(Holder, bool, Result<Option<TicketState>, StartRefusal>)> = vec![
            (Holder::Nothing, true, Ok(None)),
            (Holder::Nothing, false, Err(StartRefusal::NoMain)),
            (Holder::Tdd(Status::Initializing), true, Ok(None)),
            (
                Holder::Tdd(Status::Initializing),
                false,
                Err(StartRefusal::NoMain),
            ),
            (
                Holder::Tdd(Status::ExecutingTdd),
                true,
                Err(StartRefusal::TddUnderway(Status::ExecutingTdd)),
            ),
            (
                Holder::Tdd(Status::Debugging),
                false,
                Err(StartRefusal::TddUnderway(Status::Debugging)),
            ),
            (
                ticket(TicketState::TicketDone),
                true,
                Ok(Some(TicketState::TicketDone)),
            ),
            (
                ticket(TicketState::TicketDone),
                false,
                Err(StartRefusal::NoMain),
            ),
            (
                ticket(TicketState::Manager),
                true,
                busy(TicketState::Manager),
            ),
            (
                ticket(TicketState::Developer),
                false,
                busy(TicketState::Developer),
            ),
            (ticket(TicketState::Halted), true, busy(TicketState::Halted)),
        ];
        for (holder, main_exists, expected) in rows {
            let facts = Facts {
                holder: holder.clone(),
                main_exists,
            };
            assert_eq!(decide(&facts), expected, "{holder:?}, main: {main_exists}");
        }
    }

    /// A TDD workflow in any status but INITIALIZING has a PR under way.
    #[test]
    fn only_an_initializing_tdd_workflow_takes_a_ticket() {
        for status in Status::ALL {
            let facts = Facts {
                holder: Holder::Tdd(*status),
                main_exists: true,
            };
            let expected = if *status == Status::Initializing {
                Ok(None)
            } else {
                Err(StartRefusal::TddUnderway(*status))
            };
            assert_eq!(decide(&facts), expected, "{status:?}");
        }
    }

    #[test]
    fn the_input_is_judged_title_first() {
        let long_title = "t".repeat(MAX_TITLE + 1);
        let subtasks = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        type Row<'a> = (&'a str, &'a str, Vec<String>, Result<(), BadStart>);
        let rows: Vec<Row> = vec![
            ("Add numbers", "", subtasks(&["one", "two"]), Ok(())),
            ("Add numbers", "A body\n\nof lines", Vec::new(), Ok(())),
            (
                " ",
                "\0",
                Vec::new(),
                Err(BadStart::Field {
                    field: Field::Summary,
                    problem: FieldProblem::Empty,
                }),
            ),
            ("two\nlines", "", Vec::new(), Err(BadStart::TitleNotOneLine)),
            (&long_title, "", Vec::new(), Err(BadStart::TitleNotOneLine)),
            (
                "Title",
                "a\u{1b}b",
                subtasks(&[""]),
                Err(BadStart::Field {
                    field: Field::Report,
                    problem: FieldProblem::Control {
                        offset: 1,
                        char: '\u{1b}',
                    },
                }),
            ),
            (
                "Title",
                "",
                subtasks(&["fine", " "]),
                Err(BadStart::Field {
                    field: Field::Summary,
                    problem: FieldProblem::Empty,
                }),
            ),
        ];
        for (title, body, subtasks, expected) in rows {
            assert_eq!(
                check_input(title, body, &subtasks),
                expected,
                "{title:?} {body:?} {subtasks:?}"
            );
        }
    }
}
