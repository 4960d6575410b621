//! Moving a ref by compare-and-swap, the step every write of the store ends with: the reflog
//! line, the tip marker's turn, and a lost race told apart from a lock left by a crash.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use super::flocks::exclusive_lock;
use super::names::WORKFLOWS;
use super::tips::Intent;
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
        let intent = workflow.and_then(|w| match &_turn {
            Some(_) => self.note_intent_in_turn(w, expected, new),
            None => self.note_intent(w, expected, new).map(Intent::Own),
        });
        let result = match commands {
            None if let Some(moved) =
                self.move_plain_ref(name, expected, new, &message, signature) =>
            {
                moved
            }
            Some(git) => {
                let name = name.as_bstr().to_str_lossy();
                self.move_ref_by_commands(git, &name, expected, Some(new), &message, signature)
            }
            None => {
                let mut time_buf = gix::date::parse::TimeBuf::default();
                self.refuse_waiting_ref(&name.as_bstr().to_str_lossy())?;
                match self
                    .repo()?
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
        if result.is_ok() {
            // The tests' kill between the ref's move and the marker's rewrite.
            crate::crash::crash_point("ref-moved");
        }
        let marked = match (&result, workflow) {
            (Ok(_), Some(workflow)) => self.remember_tip(workflow, new),
            _ => true,
        };
        // Kept when the marker could not be written: it still explains the move.
        if let Some(intent) = intent
            && marked
        {
            Store::clear_intent(intent);
            // The marker is the tip again, so what killed writers left explains nothing any
            // more; holding the turn, no other writer is between its intent and its marker.
            if let (Some(_), Some(workflow)) = (&_turn, workflow) {
                self.forget_unfinished_moves(workflow);
            }
        }
        result
    }
}

impl Store {
    /// The move of a loose ref in a plain repository (`layout.rs`) as gix's transaction makes
    /// it, without opening gix: the ref's lock taken (git's 100 ms of retries), its value
    /// compared, the new one written to the lock, the reflog line appended, the lock renamed
    /// over the ref. `None`, before anything is written, for every case gix's transaction
    /// handles otherwise: a `packed-refs` file, a setting about logs, locks or permissions, a
    /// ref that is not one id, a message of more than one line, a lock that cannot be made.
    fn move_plain_ref(
        &self,
        name: &FullName,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
        signature: &gix::actor::Signature,
    ) -> Option<Result<(), WriteError>> {
        use std::io::Write as _;
        let text = name.as_bstr().to_str().ok()?;
        let common = self.repo.common_dir();
        let settings = ["core.filesRefLockTimeout", "core.sharedRepository"];
        // `git init` writes `true`; either logs a ref told to make its log, as ours are.
        let logs = self
            .repo
            .config_string("core.logAllRefUpdates")
            .is_none_or(|v| v.eq_ignore_ascii_case(b"true") || v.eq_ignore_ascii_case(b"always"));
        if !self.repo.is_plain()
            || !text.starts_with("refs/")
            || message.contains('\n')
            || !logs
            || !super::refs::absent(&common.join("packed-refs"))
            // gix removes an empty directory where the log should be; left to it.
            || common.join("logs").join(text).is_dir()
            || settings
                .iter()
                .any(|key| self.repo.config_string(key).is_some())
        {
            return None;
        }
        let path = common.join(text);
        let mut lock = match gix::lock::File::acquire_to_update_resource(
            &path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_millis(
                100,
            )),
            Some(common.to_path_buf()),
            0,
        ) {
            Ok(lock) => lock,
            // Held past the retries (gix's own words: a retryable failure): a lost race, or
            // a lock left by a crash.
            Err(e) if is_lost_race(&e) => {
                return Some(match self.stale_lock_of(name) {
                    Some(locked) => Err(WriteError::Store(locked)),
                    None => Err(WriteError::Conflict),
                });
            }
            Err(_) => return None,
        };
        let current = if super::refs::absent(&path) {
            None
        } else {
            // A symbolic ref or a file that is no id: gix says what it is. The lock is
            // removed as it is dropped.
            Some(self.loose_ref(text)?)
        };
        if current != expected {
            return Some(Err(WriteError::Conflict));
        }
        let wrote = lock.with_mut(|file| writeln!(file, "{new}"));
        Some(
            wrote
                .and_then(|()| self.append_reflog(text, current, new, message, signature))
                .map_err(|e| not_moved(text, &e))
                .and_then(|()| {
                    lock.commit()
                        .map(|_| ())
                        .map_err(|e| not_moved(text, &e.error))
                }),
        )
    }

    /// The reflog line gix writes for a move of `name`: old and new ids, the committer, the
    /// time and the message, in `logs/<name>` (made, with its directories, as gix makes it
    /// when told to create a log).
    fn append_reflog(
        &self,
        name: &str,
        old: Option<ObjectId>,
        new: ObjectId,
        message: &str,
        signature: &gix::actor::Signature,
    ) -> std::io::Result<()> {
        use std::io::Write as _;
        let path = self.repo.common_dir().join("logs").join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = Vec::with_capacity(200);
        let old = old.unwrap_or_else(|| new.kind().null());
        write!(line, "{old} {new} ")?;
        let mut time = gix::date::parse::TimeBuf::default();
        let full = signature.to_ref(&mut time);
        gix::actor::SignatureRef {
            name: trimmed(full.name),
            email: trimmed(full.email),
            time: full.time.trim(),
        }
        .write_to(&mut line)?;
        if message.is_empty() {
            line.push(b'\n');
        } else {
            line.push(b'\t');
            line.extend_from_slice(message.as_bytes());
            line.push(b'\n');
        }
        super::regular::open(&path, std::fs::OpenOptions::new().append(true).create(true))?
            .write_all(&line)
    }
}

/// `field` trimmed as gix's `SignatureRef::trim` trims it, of Unicode whitespace, without
/// loading the DFA that trim builds its first time (26,000 instructions, 2 % of a write):
/// where the ASCII whitespace trimmed leaves ASCII at both ends, Unicode's trim would stop
/// there too. Only a field that then begins or ends outside ASCII is left to gix.
fn trimmed(field: &gix::bstr::BStr) -> &gix::bstr::BStr {
    // U+0009..U+000D and U+0020: the ASCII characters with Unicode's White_Space property.
    let space = |b: &u8| matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ');
    let start = field.iter().position(|b| !space(b)).unwrap_or(field.len());
    let end = field
        .iter()
        .rposition(|b| !space(b))
        .map_or(start, |at| at + 1);
    let rest = &field[start..end];
    match (rest.first(), rest.last()) {
        (Some(first), Some(last)) if !first.is_ascii() || !last.is_ascii() => rest.trim().as_bstr(),
        _ => rest.as_bstr(),
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

/// A plain move that failed before its rename: the ref still holds what it held (the lock
/// is removed as it is dropped), so the whole command can simply run again.
fn not_moved(name: &str, e: &std::io::Error) -> WriteError {
    WriteError::Store(super::StoreError::Git(format!(
        "cannot move {name}: {e}; it was not moved, and the command can be run again"
    )))
}

#[cfg(test)]
mod tests {
    use super::trimmed;
    use gix::bstr::{BStr, ByteSlice as _};

    /// gix's own trim, the oracle: what its transactions write in the reflog.
    fn gix_trim(field: &str) -> &BStr {
        field.as_bytes().as_bstr().trim().as_bstr()
    }

    #[test]
    fn an_identity_is_trimmed_as_gix_trims_it() {
        for field in [
            "",
            " ",
            "Name",
            "  Name Surname \t",
            "\x0bName\x0c",
            "\u{a0}Name\u{3000}",
            " \u{2003} Name",
            "Name \u{85}",
            "Zoë",
            " Zoë ",
            "名前",
            "\u{200b}Name",
            "a@example.invalid\r\n",
            "\u{a0}",
        ] {
            assert_eq!(
                trimmed(field.as_bytes().as_bstr()),
                gix_trim(field),
                "{field:?}"
            );
        }
        // Not UTF-8: a lone continuation byte or 0xFF at an end, or inside.
        for field in [
            &b"\xffName "[..],
            b" Name\xa0",
            b"\t\x80\t",
            b" Na\xffme ",
            b"\xc2",
        ] {
            let gix = field.as_bstr().trim().as_bstr();
            assert_eq!(trimmed(field.as_bstr()), gix, "{field:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_field_is_trimmed_as_gix_trims_it(
            field in "[ \t\n\u{0b}\u{0c}\r\u{85}\u{a0}\u{2003}\u{3000}\u{200b}aZë名<>@.]{0,12}"
        ) {
            proptest::prop_assert_eq!(trimmed(field.as_bytes().as_bstr()), gix_trim(&field));
        }
    }
}
