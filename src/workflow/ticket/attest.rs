//! What `attest` decides of a finished ticket's squash from facts the engine gathered
//! (src/engine/attest/ticket.rs): the squash is one commit on the pin holding the last
//! accepted tree, the pin's configuration is the pinned one, the verified commit is a
//! subtask's, and every subtask is complete, accepted between its base and the verified
//! commit. Pure: the engine reads git, this decides.

use super::{SubtaskStatus, Ticket};
use crate::short_id;

/// What git says of a finished ticket's squash.
pub struct SquashFacts<'a> {
    pub ticket: &'a Ticket,
    pub squash: &'a str,
    pub squash_tree: &'a str,
    pub verified_tree: &'a str,
    pub squash_parents: &'a [String],
    /// The pinned configuration blob, and the one main had at the pin.
    pub blob: &'a str,
    pub config_at_pin: Option<&'a str>,
    /// Per subtask with a base and an accepted commit, by id: whether the accepted commit
    /// lies between its base and the verified commit.
    pub between: &'a [(String, bool)],
}

/// The reasons the squash fails `attest`, and the notes said of it without failing it (a
/// subtask accepted over contradictions), in the order they are found.
pub fn squash_reasons(f: &SquashFacts) -> (Vec<String>, Vec<String>) {
    let t = f.ticket;
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    if f.squash_tree != f.verified_tree {
        reasons.push(format!(
            "the squashed commit's tree {} is not the tree of the last accepted subtask ({})",
            short_id(f.squash_tree),
            short_id(f.verified_tree)
        ));
    }
    if f.squash_parents != [t.pin.clone()] {
        reasons.push(format!(
            "the squashed commit {} is not one commit on the ticket's pin {}",
            short_id(f.squash),
            short_id(&t.pin)
        ));
    }
    if f.config_at_pin != Some(f.blob) {
        reasons.push(format!(
            "the pinned configuration ({}) is not main's {} at the pin {}",
            short_id(f.blob),
            super::super::CONFIG_FILE,
            short_id(&t.pin)
        ));
    }
    if !t
        .subtasks
        .iter()
        .any(|s| s.accepted.as_deref() == Some(t.verified.as_str()))
    {
        reasons.push(format!(
            "the ticket's verified commit {} is no subtask's accepted commit",
            short_id(&t.verified)
        ));
    }
    for s in &t.subtasks {
        let between = f.between.iter().find(|(id, _)| *id == s.id).map(|b| b.1);
        if let (Some(base), Some(accepted), Some(false)) = (&s.base, &s.accepted, between) {
            reasons.push(format!(
                "subtask {}'s accepted commit {} does not lie between its base {} and the \
                 verified commit {}",
                s.id,
                short_id(accepted),
                short_id(base),
                short_id(&t.verified)
            ));
        }
        if s.status != SubtaskStatus::Complete || s.accepted.is_none() {
            reasons.push(format!(
                "subtask {} is {}, not complete",
                s.id,
                s.status.as_str()
            ));
        }
        if let Some(reason) = &s.override_reason {
            notes.push(format!(
                "subtask {} was accepted over {} contradiction(s) by the manager: {reason}",
                s.id,
                s.contradictions.len()
            ));
        }
    }
    (reasons, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: char) -> String {
        c.to_string().repeat(40)
    }

    /// A ticket pinned at `p…`, verified at `v…`, its subtask S1 accepted as `accepted`.
    fn ticket(accepted: Option<String>, status: SubtaskStatus, over: Option<&str>) -> Ticket {
        let mut t = Ticket::new(
            "T".into(),
            "B".into(),
            "main".into(),
            "ticket/t".into(),
            id('p'),
            Some(id('b')),
            &[],
            0,
        );
        t.verified = id('v');
        let mut s = super::super::Subtask::new("S1".into(), "one".into());
        s.base = Some(id('p'));
        s.accepted = accepted;
        s.status = status;
        s.override_reason = over.map(str::to_string);
        s.contradictions = over.map(|_| vec!["x".to_string()]).unwrap_or_default();
        t.subtasks.push(s);
        t
    }

    #[test]
    fn a_squash_is_judged_from_its_facts_alone() {
        let (pin, blob, tree, other) = (id('p'), id('b'), id('t'), id('o'));
        let honest = ticket(Some(id('v')), SubtaskStatus::Complete, None);
        let todo = ticket(None, SubtaskStatus::Todo, None);
        let over = ticket(Some(id('v')), SubtaskStatus::Complete, Some("fine"));
        let on_pin = [pin.clone()];
        let on_other = [other.clone()];
        // (ticket, squash tree, parents, config at the pin, between, reasons, notes)
        type Case<'a> = (
            &'a Ticket,
            &'a str,
            &'a [String],
            Option<&'a str>,
            bool,
            Vec<&'a str>,
            Vec<&'a str>,
        );
        let cases: Vec<Case> = vec![
            (&honest, &tree, &on_pin, Some(&blob), true, vec![], vec![]),
            (
                &honest,
                &other,
                &on_other,
                None,
                false,
                vec![
                    "the squashed commit's tree oooooooooooo is not the tree of the last accepted subtask (tttttttttttt)",
                    "the squashed commit ssssssssssss is not one commit on the ticket's pin pppppppppppp",
                    "the pinned configuration (bbbbbbbbbbbb) is not main's .orchestrate.toml at the pin pppppppppppp",
                    "subtask S1's accepted commit vvvvvvvvvvvv does not lie between its base pppppppppppp and the verified commit vvvvvvvvvvvv",
                ],
                vec![],
            ),
            (
                &todo,
                &tree,
                &on_pin,
                Some(&blob),
                true,
                vec![
                    "the ticket's verified commit vvvvvvvvvvvv is no subtask's accepted commit",
                    "subtask S1 is todo, not complete",
                ],
                vec![],
            ),
            (
                &over,
                &tree,
                &on_pin,
                Some(&blob),
                true,
                vec![],
                vec!["subtask S1 was accepted over 1 contradiction(s) by the manager: fine"],
            ),
        ];
        for (t, squash_tree, parents, at_pin, between, reasons, notes) in cases {
            let between = [("S1".to_string(), between)];
            let facts = SquashFacts {
                ticket: t,
                squash: &id('s'),
                squash_tree,
                verified_tree: &tree,
                squash_parents: parents,
                blob: &blob,
                config_at_pin: at_pin,
                between: &between,
            };
            let (got_reasons, got_notes) = squash_reasons(&facts);
            assert_eq!(got_reasons, reasons);
            assert_eq!(got_notes, notes);
        }
    }
}
