//! What shows a workflow ref was moved or deleted by something else: the tip marker and the
//! intent files beside it, outside the ref store, and the ref's reflog.

use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::FullName;

use super::{Store, StoreError};

/// The last tip of each workflow ref, one file per workflow, under the git directory.
const TIP_MARKERS: &str = "orchestrator/tips";

/// The landings in flight, one file per workflow, under the git directory.
const LANDINGS: &str = "orchestrator/landings";

/// A workflow's merge being landed (docs/integrity.md, "A landing in flight"): its record
/// `new` (a `merge` transition on `old`, the chain's tip when the landing began) and the
/// merge commit it records. Written before anything moves; removed once the record is the
/// chain's tip or the landing was given up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Landing {
    pub old: String,
    pub new: String,
    pub merge: String,
}

/// One line of a ref's reflog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflogEntry {
    pub old: String,
    pub new: String,
    pub message: String,
}

impl Store {
    /// Ends a reflog whose last line a crash cut short (no newline) with a newline, so that
    /// the entry this write appends is a line of its own: glued onto the torn one, git would
    /// skip it. Best effort: the write itself does not depend on it. A writer appends its line
    /// in pieces while it holds the ref's lock, so a line is taken for torn only while no lock
    /// is held and the file has not changed for two seconds: a newline put into a line being
    /// written would break that line instead.
    pub(super) fn mend_torn_reflog(&self, name: &FullName) {
        use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
        let lock = self.ref_lock_path(name);
        let Ok(name) = name.as_bstr().to_str() else {
            return;
        };
        let path = self.reflog_path(name);
        let Ok(mut file) =
            super::regular::open(&path, std::fs::OpenOptions::new().read(true).append(true))
        else {
            return;
        };
        let settled = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= std::time::Duration::from_secs(2));
        let mut last = [0u8; 1];
        let torn = settled
            && !lock.exists()
            && file.seek(SeekFrom::End(-1)).is_ok()
            && file.read_exact(&mut last).is_ok()
            && last[0] != b'\n';
        if torn {
            let _ = file.write_all(b"\n");
        }
    }

    /// Where the last tip written to a workflow's ref is kept, outside the ref store: git
    /// deletes a ref's reflog with the ref, so this is what remains when something (a test
    /// command, a script) deletes the workflow ref.
    pub(super) fn tip_marker(&self, workflow: &str) -> PathBuf {
        self.repo.common_dir().join(TIP_MARKERS).join(workflow)
    }

    /// Best effort, after the ref moved: a marker that could not be written only weakens the
    /// check for a deleted ref, and the write itself has happened. One small write, on every
    /// transition, over the last one in place ([`super::files::overwrite`]): a marker cut
    /// short by a crash reads as no marker (the reflog still speaks while the ref exists), so
    /// it needs no temporary file and rename.
    pub(super) fn remember_tip(&self, workflow: &str, tip: ObjectId) -> bool {
        let path = self.tip_marker(workflow);
        let line = format!("{tip}\n");
        // Made by another writer between the two (one that could not take the turn): over it.
        super::files::overwrite(&path, line.as_bytes())
            || super::files::create_anew(&path, line.as_bytes()).is_ok()
            || super::files::overwrite(&path, line.as_bytes())
    }

    /// Records, before a write moves `workflow`'s ref from `old` to `new`, that this
    /// program is making that move: a file of this process's own beside the tip marker
    /// (`<workflow>.intent.<pid>`), removed once the move and the marker are done. `None`
    /// when it could not be written (the write goes on; a kill then may read as a move by
    /// something else, as before).
    pub(super) fn note_intent(
        &self,
        workflow: &str,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Option<PathBuf> {
        let marker = self.tip_marker(workflow);
        let name = format!(
            "{}.intent.{}",
            marker.file_name()?.to_string_lossy(),
            std::process::id()
        );
        let path = marker.with_file_name(name);
        let line = intent_line(old, new);
        if std::fs::write(&path, &line).is_err() {
            std::fs::create_dir_all(path.parent()?).ok()?;
            std::fs::write(&path, &line).ok()?;
        }
        Some(path)
    }

    /// As [`Store::note_intent`], for a writer holding the writers' turn: the intent written
    /// over in place in the one file kept for it (`<workflow>.intent.0`; no process has pid
    /// 0), made once and never removed, only cleared ([`Store::clear_intent`]). A file made
    /// and removed at every write cost a new inode each time, which ext4 looks for past every
    /// inode freed in its group in the last seconds (docs/architecture.md, "Performance").
    /// Where the slot still holds an intent a killed writer left, that intent must stay to
    /// explain its move: this write's goes to a file of its own, as before.
    pub(super) fn note_intent_in_turn(
        &self,
        workflow: &str,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Option<Intent> {
        let slot = self.intent_slot(workflow)?;
        let line = intent_line(old, new);
        let taken = match read_slot(&slot) {
            Slot::Live => false,
            Slot::Clear => super::files::overwrite(&slot, line.as_bytes()),
            Slot::Missing => super::files::create_anew(&slot, line.as_bytes()).is_ok(),
        };
        if taken {
            return Some(Intent::Slot(slot, line.len()));
        }
        self.note_intent(workflow, old, new).map(Intent::Own)
    }

    /// The intent this write left, done with: its own file removed, the slot cleared (a
    /// line of one word, as long as the intent, which no reader takes for a move).
    pub(super) fn clear_intent(intent: Intent) {
        match intent {
            Intent::Own(path) => {
                let _ = std::fs::remove_file(path);
            }
            Intent::Slot(path, length) => {
                let _ = super::files::overwrite(&path, cleared_line(length).as_bytes());
            }
        }
    }

    fn intent_slot(&self, workflow: &str) -> Option<PathBuf> {
        let marker = self.tip_marker(workflow);
        let name = format!("{}.intent.0", marker.file_name()?.to_string_lossy());
        Some(marker.with_file_name(name))
    }

    /// The moves of `workflow`'s ref this program had begun when it was stopped: `(old,
    /// new)` from the intent files [`Store::note_intent`] leaves when a kill comes between
    /// the ref's move and the marker's rewrite.
    pub fn unfinished_tip_moves(&self, workflow: &str) -> Vec<(String, String)> {
        self.intent_files(workflow)
            .into_iter()
            .map(|(_, old, new)| (old, new))
            .collect()
    }

    /// Removes the intent files of `workflow`'s moves that writers killed before their
    /// marker left behind: called once the marker is the tip again, with the writers' turn
    /// held, when none of them can explain anything.
    pub(super) fn forget_unfinished_moves(&self, workflow: &str) {
        let slot = self.intent_slot(workflow);
        for (path, old, new) in self.intent_files(workflow) {
            if Some(&path) == slot.as_ref() {
                let length = old.len() + 1 + new.len() + 1;
                let _ = super::files::overwrite(&path, cleared_line(length).as_bytes());
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// `workflow`'s intent files, `<workflow>.intent.<pid>` beside its marker, each with the
    /// move it names. Only a name ending in a pid and a text of two ids is one: another
    /// workflow may be named like an intent (`main.intent.7`), and its marker holds one id.
    fn intent_files(&self, workflow: &str) -> Vec<(PathBuf, String, String)> {
        let marker = self.tip_marker(workflow);
        let (Some(dir), Some(base)) = (marker.parent(), marker.file_name()) else {
            return Vec::new();
        };
        let prefix = format!("{}.intent.", base.to_string_lossy());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let pid = name.strip_prefix(&prefix)?;
                if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let text = crate::input::read_file(&entry.path(), 256).ok()??;
                let text = String::from_utf8(text).ok()?;
                let mut ids = text.split_whitespace();
                let (old, new) = (ids.next()?, ids.next()?);
                ids.next()
                    .is_none()
                    .then(|| (entry.path(), old.to_string(), new.to_string()))
            })
            .collect()
    }

    fn landing_path(&self, workflow: &str) -> PathBuf {
        self.repo.common_dir().join(LANDINGS).join(workflow)
    }

    /// Records `landing` as in flight for `workflow`, durably, before the landing moves
    /// anything: an error (a full disk) means the landing must not begin.
    pub fn note_landing(&self, workflow: &str, landing: &Landing) -> Result<(), StoreError> {
        let path = self.landing_path(workflow);
        let failed =
            |e: std::io::Error| StoreError::Git(format!("cannot write {}: {e}", path.display()));
        let dir = path
            .parent()
            .ok_or_else(|| StoreError::Internal("a landing file has no directory".into()))?;
        std::fs::create_dir_all(dir).map_err(failed)?;
        // Written aside and renamed: a landing file is whole or absent, never cut short.
        let partial = dir.join(format!(".{workflow}.{}", std::process::id()));
        let text = format!("{} {} {}\n", landing.old, landing.new, landing.merge);
        let written = std::fs::write(&partial, text).and_then(|()| {
            std::fs::File::open(&partial)?.sync_all()?;
            std::fs::rename(&partial, &path)
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            return Err(failed(e));
        }
        Ok(())
    }

    /// The landing in flight for `workflow`, if one is: three ids, or nothing.
    pub fn landing(&self, workflow: &str) -> Option<Landing> {
        let text = crate::input::read_file(&self.landing_path(workflow), 512).ok()??;
        let text = String::from_utf8(text).ok()?;
        let ids: Vec<&str> = text.split_whitespace().collect();
        let [old, new, merge] = ids.as_slice() else {
            return None;
        };
        ids.iter()
            .all(|id| ObjectId::from_hex(id.as_bytes()).is_ok())
            .then(|| Landing {
                old: old.to_string(),
                new: new.to_string(),
                merge: merge.to_string(),
            })
    }

    /// The landings in flight of every workflow here, by workflow.
    pub fn landings(&self) -> Vec<(String, Landing)> {
        let dir = self.repo.common_dir().join(LANDINGS);
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    return None;
                }
                let landing = self.landing(&name)?;
                Some((name, landing))
            })
            .collect()
    }

    /// The landing of `workflow` is over (recorded, or given up with nothing moved).
    pub fn forget_landing(&self, workflow: &str) {
        let _ = std::fs::remove_file(self.landing_path(workflow));
    }

    /// The tip git-orchestrate last wrote to `workflow`'s ref in this repository, when it
    /// remembers one: something else moved the ref when it is not the tip now.
    pub fn last_written_tip(&self, workflow: &str) -> Option<String> {
        let text = super::regular::read_to_string(&self.tip_marker(workflow)).ok()?;
        let tip = text.trim();
        (!tip.is_empty()).then(|| tip.to_string())
    }

    /// When this workflow's ref is missing but it existed here (its reflog, or the tip
    /// marker, says so): the last tip it had, and whether that commit is still in the
    /// object store.
    pub fn vanished_tip(&self) -> Result<Option<(String, bool)>, StoreError> {
        if self.tip()?.is_some() {
            return Ok(None);
        }
        let reflog = self.reflog_path(&self.ref_name());
        let log = super::regular::read_to_string(&reflog).ok();
        let marker = self.tip_marker(&self.workflow);
        // A creation killed after git logged it and before the ref was in place (the ref's
        // lock still there, or already removed by hand): one entry from nothing, and no tip
        // marker, which is written only once a move has happened. Nothing was deleted.
        if let Some(log) = &log
            && log.lines().count() == 1
            && log
                .split(' ')
                .next()
                .is_some_and(|old| !old.is_empty() && old.bytes().all(|b| b == b'0'))
            && !marker.exists()
        {
            return Ok(None);
        }
        let from_reflog = log.and_then(|log| {
            log.lines()
                .last()
                .and_then(|line| line.split(' ').nth(1).map(str::to_string))
        });
        let from_marker = || {
            super::regular::read_to_string(&marker)
                .ok()
                .map(|t| t.trim().to_string())
        };
        let Some(tip) = from_reflog
            .or_else(from_marker)
            .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
            .filter(|t| !t.is_null())
        else {
            return Ok(None);
        };
        let exists = matches!(self.object(tip), Ok((gix::objs::Kind::Commit, _)));
        Ok(Some((tip.to_string(), exists)))
    }

    /// Forgets that this workflow existed (its tip marker and reflog), for a deliberate
    /// fresh start (`init --new`).
    pub fn forget_vanished(&self) -> Result<(), StoreError> {
        let reflog = self.reflog_path(&self.ref_name());
        for path in [self.tip_marker(&self.workflow), reflog] {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(StoreError::Git(format!(
                        "cannot remove {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Where git keeps the reflog of `reference`: git deletes it with the ref.
    fn reflog_path(&self, reference: &str) -> PathBuf {
        self.repo.common_dir().join("logs").join(reference)
    }

    /// The reflog of `reference`, oldest first; empty when it has none.
    pub fn reflog(&self, reference: &str) -> Result<Vec<ReflogEntry>, StoreError> {
        let mut entries = Vec::new();
        self.reflog_each(reference, |entry| entries.push(entry))?;
        Ok(entries)
    }

    /// Each entry of the reflog of `reference`, oldest first, handed to `each` as it is read:
    /// a line at a time from the files backend, so that what is held does not grow with the
    /// reflog (`audit --all` of one long history).
    pub fn reflog_each(
        &self,
        reference: &str,
        mut each: impl FnMut(ReflogEntry),
    ) -> Result<(), StoreError> {
        use std::io::BufRead;
        if let Some(git) = self.ref_commands()? {
            self.reflog_by_commands(git, reference)?
                .into_iter()
                .for_each(each);
            return Ok(());
        }
        let path = self.reflog_path(reference);
        let cannot = |e: std::io::Error| {
            StoreError::Internal(format!("cannot read {}: {e}", path.display()))
        };
        let mut file = match super::regular::open(&path, std::fs::OpenOptions::new().read(true)) {
            Ok(file) => std::io::BufReader::new(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(cannot(e)),
        };
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            if file.read_until(b'\n', &mut bytes).map_err(cannot)? == 0 {
                return Ok(());
            }
            let text = String::from_utf8_lossy(&bytes);
            // As `str::lines` splits: a trailing "\n" or "\r\n" is no part of the line.
            let line = text.strip_suffix('\n').unwrap_or(&text);
            let line = if text.ends_with('\n') {
                line.strip_suffix('\r').unwrap_or(line)
            } else {
                line
            };
            if let Some(entry) = reflog_entry(line) {
                each(entry);
            }
        }
    }
}

/// One reflog line read as an entry; `None` for a line a crash cut short.
fn reflog_entry(line: &str) -> Option<ReflogEntry> {
    // A line cut short by a crash mid-append lacks the writer's identity and time: git skips
    // it, and so does this (the next write starts on a line of its own, see
    // `mend_torn_reflog`). A whole entry without a message has no tab (git writes none then).
    let (head, message) = line.split_once('\t').unwrap_or((line, ""));
    let words: Vec<&str> = head.split(' ').collect();
    let complete = words.len() >= 5
        && words[words.len() - 2].bytes().all(|b| b.is_ascii_digit())
        && words[words.len() - 1].len() == 5
        && words[words.len() - 1].starts_with(['+', '-']);
    if !complete {
        return None;
    }
    let mut words = words.into_iter();
    let id = |word: Option<&str>| {
        word.filter(|w| ObjectId::from_hex(w.as_bytes()).is_ok())
            .map(str::to_string)
    };
    Some(ReflogEntry {
        old: id(words.next())?,
        new: id(words.next())?,
        message: message.to_string(),
    })
}

/// An intent a write left: a file of its own, or the slot of the writers' turn with the
/// length of the line written there.
pub(super) enum Intent {
    Own(PathBuf),
    Slot(PathBuf, usize),
}

/// What the intent slot holds.
enum Slot {
    /// No file yet.
    Missing,
    /// A cleared line, or anything else that names no move.
    Clear,
    /// A move noted and not cleared (a writer killed holding the turn, the only one that
    /// writes here, or a clear that failed), or anything else written there, or a file that
    /// cannot be read as one.
    Live,
}

/// Read without waiting; anything but a regular file (a FIFO, a device, a directory) counts
/// as taken, and is neither written through nor removed. A link is read through, and then
/// not written through ([`super::files::overwrite`] does not follow one).
fn read_slot(path: &std::path::Path) -> Slot {
    match crate::input::read_file(path, 256) {
        Ok(Some(text)) if String::from_utf8_lossy(&text).split_whitespace().count() == 2 => {
            Slot::Live
        }
        Ok(Some(_)) => Slot::Clear,
        Ok(None) => Slot::Missing,
        Err(_) => Slot::Live,
    }
}

/// `OLD NEW\n`, the move an intent names (zeros for a ref made anew).
fn intent_line(old: Option<ObjectId>, new: ObjectId) -> String {
    let old = old.map_or_else(|| "0".repeat(new.to_string().len()), |o| o.to_string());
    format!("{old} {new}\n")
}

/// `length` bytes that name no move: one word, then spaces and a newline.
fn cleared_line(length: usize) -> String {
    let mut line = String::from("-");
    line.push_str(&" ".repeat(length.saturating_sub(2)));
    line.push('\n');
    line
}
