//! Moving a ref by compare-and-swap, the step every write of the store ends with: the reflog
//! line, the tip marker's turn, and a lost race told apart from a lock left by a crash.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use super::flocks::exclusive_lock;
use super::names::WORKFLOWS;
use super::{Store, WriteError, git_err};

impl Store {
    /// Moves `name` from `expected` (`None`: it must not exist) to `new`, logging `message`:
    /// the compare-and-swap every write ends with.
    pub(super) fn update_ref(
        &self,
        name: &FullName,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: String,
        signature: &gix::actor::Signature,
    ) -> Result<(), WriteError> {
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    // git does not log refs outside refs/heads and friends unless told to.
                    force_create_reflog: true,
                    message: message.as_str().into(),
                },
                expected: match expected {
                    Some(tip) => PreviousValue::MustExistAndMatch(Target::Object(tip)),
                    None => PreviousValue::MustNotExist,
                },
                new: Target::Object(new),
            },
            name: name.clone(),
            deref: false,
        };
        let commands = self.ref_commands()?;
        if commands.is_none() {
            self.mend_torn_reflog(name);
        }
        let workflow = name
            .as_bstr()
            .to_str()
            .ok()
            .and_then(|n| n.strip_prefix(WORKFLOWS));
        // Writers of one workflow take turns from the intent to the marker: two at once
        // would otherwise leave the marker at the earlier tip with no intent to explain it.
        let _turn = workflow
            .and_then(|w| exclusive_lock(&self.tip_marker(w).with_extension("tips-lock")).ok());
        // Written before the ref moves: a kill between the move and the marker's rewrite
        // leaves this, which `audit` takes as our own move, and nothing else does.
        let intent = workflow.and_then(|w| self.note_intent(w, expected, new));
        let result = match commands {
            Some(git) => {
                let name = name.as_bstr().to_str_lossy();
                self.move_ref_by_commands(git, &name, expected, Some(new), &message, signature)
            }
            None => {
                let mut time_buf = gix::date::parse::TimeBuf::default();
                match self
                    .repo
                    .edit_references_as(Some(edit), Some(signature.to_ref(&mut time_buf)))
                {
                    Ok(_) => Ok(()),
                    Err(e) if is_lost_race(&e) => match self.stale_lock_of(name) {
                        Some(locked) => Err(WriteError::Store(locked)),
                        None => Err(WriteError::Conflict),
                    },
                    Err(e) => Err(WriteError::Store(git_err(e))),
                }
            }
        };
        let marked = match (&result, workflow) {
            (Ok(_), Some(workflow)) => self.remember_tip(workflow, new),
            _ => true,
        };
        // Kept when the marker could not be written: it still explains the move.
        if let Some(intent) = intent
            && marked
        {
            let _ = std::fs::remove_file(intent);
            // The marker is the tip again, so what killed writers left explains nothing any
            // more; holding the turn, no other writer is between its intent and its marker.
            if let (Some(_), Some(workflow)) = (&_turn, workflow) {
                self.forget_unfinished_moves(workflow);
            }
        }
        result
    }
}

pub(super) fn is_lost_race(e: &gix::Error) -> bool {
    use gix::error::Class;
    e.downcast_any_ref::<gix::refs::file::transaction::prepare::ReferenceOutOfDate>()
        .is_some()
        || e.downcast_any_ref::<gix::refs::file::transaction::prepare::MustNotExist>()
            .is_some()
        || matches!(e.dominant_class(), Some(Class::Conflict | Class::Retryable))
}
