//! The files git-orchestrate keeps under the git directory for the agent hooks and `init
//! --agent`, `get-task`'s last read of a remote, the claims this clone wrote and a plan
//! acceptance's push in flight, and where git runs hooks from.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::Store;

/// `bytes` made the whole of the regular file at `path`, written over it in place; `false`,
/// having written nothing, where there is none, or where something else is in its place (a
/// link is not followed, a FIFO not waited on). ext4 flushes a file renamed over another,
/// or cut to nothing and written again, before the call returns (its `auto_da_alloc`): some
/// 130 to 250 µs measured here, a tenth to a fifth of a `git rev-parse`, where written over
/// in place a small record costs no flush and no directory change. For records whose loss
/// is safe: one cut short by a crash, or read while it is written, reads as none or as
/// another whole record, never as something its reader would trust wrongly.
pub fn overwrite(path: &Path, bytes: &[u8]) -> bool {
    use rustix::fs::{Mode, OFlags};
    use std::io::Write as _;
    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) else {
        return false;
    };
    let mut file = std::fs::File::from(fd);
    let Some(length) = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
    else {
        return false;
    };
    // Written, then cut to its length: never cut to nothing, which is what ext4 flushes. A
    // record as long as the last (a tip, every time) needs no cut: ext4 runs its whole
    // truncation for a `ftruncate` to the size a file has already.
    let wanted = bytes.len() as u64;
    file.write_all(bytes).is_ok() && (length == wanted || file.set_len(wanted).is_ok())
}

/// `bytes` as a new file at `path`, in a directory made for it, after [`overwrite`] found
/// no regular file there: what is in its place (a link, a FIFO) is removed, never written
/// through, and the file is made only where nothing is (so a link put there meanwhile is
/// not followed either).
pub(super) fn create_anew(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(bytes)
}

/// The agent Stop hook's loop guard, one file per agent session.
const STOP_BLOCKS: &str = "orchestrator/stop-blocks";
/// `init --agent`'s record of the client files as they were.
const AGENT_SETUP: &str = "orchestrator/agent-setup";
/// The last time `get-task` read each remote's main, and what it found, one file per remote.
const REMOTE_READS: &str = "orchestrator/remote-reads";
/// A plan acceptance's push in flight, one file per workflow: the remote, the tip it grows
/// from and the transition pushed.
const PLAN_PUSHES: &str = "orchestrator/plan-pushes";
/// The claim commits this clone wrote, one empty file each, named by the commit: what tells
/// this clone's claims from another clone's of the same user on the same host.
const CLAIMS_WRITTEN: &str = "orchestrator/claims-written";

impl Store {
    /// Where git runs hooks from: `core.hooksPath` (relative to the top directory, as git
    /// takes it), else `hooks` in the common directory. Read in-process, for the agent hooks.
    pub fn hooks_dir(&self) -> PathBuf {
        let configured = self
            .repo
            .config_string("core.hooksPath")
            .map(|p| p.to_str_lossy().into_owned());
        match configured {
            Some(path) if path.starts_with('/') => PathBuf::from(path),
            Some(path) => self.workdir().join(path),
            None => self.repo.common_dir().join("hooks"),
        }
    }

    /// Where `init --agent` keeps what a client's files held before it wrote them.
    pub fn agent_setup_dir(&self, client: &str) -> PathBuf {
        self.repo.common_dir().join(AGENT_SETUP).join(client)
    }

    /// Where the claim commit `id` is recorded as written by this clone.
    pub(super) fn claim_written_file(&self, id: &gix::ObjectId) -> PathBuf {
        self.repo
            .common_dir()
            .join(CLAIMS_WRITTEN)
            .join(id.to_string())
    }

    /// When `get-task` last read `remote`'s main (seconds since the epoch), and what it found:
    /// `None` when it never did here, or the record cannot be read.
    pub fn last_remote_read(&self, remote: &str) -> Option<(i64, String)> {
        let text = super::regular::read_to_string(&self.remote_read_file(remote)).ok()?;
        let (time, found) = text.trim_end().split_once(' ')?;
        Some((time.parse().ok()?, found.to_string()))
    }

    /// Records that `get-task` read `remote`'s main at `time` and found `found` (one word).
    /// Best effort: without the record the next call reads the remote again. A record cut
    /// short by a crash does not parse, which reads as none.
    pub fn remember_remote_read(&self, remote: &str, time: i64, found: &str) {
        let path = self.remote_read_file(remote);
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&path, format!("{time} {found}\n"));
    }

    /// Records, before the push, that this workflow's transition `to` (on its tip `from`) is
    /// about to be pushed to `remote` with its claim: a kill after the push leaves the remote
    /// a transition ahead, which the next command adopts ([`Self::plan_push`]). Best effort:
    /// without the record, such a kill is settled by `sync` as before.
    pub fn note_plan_push(&self, remote: &str, from: gix::ObjectId, to: gix::ObjectId) {
        let path = self.plan_push_file();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&path, format!("{from} {to} {remote}\n"));
    }

    /// The push [`Self::note_plan_push`] recorded for this workflow, unless it was forgotten
    /// since: `(remote, from, to)`. A record cut short by a crash does not parse, which reads
    /// as none (the push it was written before had not started).
    pub fn plan_push(&self) -> Option<(String, gix::ObjectId, gix::ObjectId)> {
        let text = super::regular::read_to_string(&self.plan_push_file()).ok()?;
        let line = text.strip_suffix('\n')?;
        let mut words = line.splitn(3, ' ');
        let from = gix::ObjectId::from_hex(words.next()?.as_bytes()).ok()?;
        let to = gix::ObjectId::from_hex(words.next()?.as_bytes()).ok()?;
        let remote = words.next().filter(|r| !r.is_empty())?;
        Some((remote.to_string(), from, to))
    }

    /// Forgets this workflow's plan push: it landed here, or is known not to have landed.
    pub fn forget_plan_push(&self) {
        let _ = std::fs::remove_file(self.plan_push_file());
    }

    fn plan_push_file(&self) -> PathBuf {
        self.repo
            .common_dir()
            .join(PLAN_PUSHES)
            .join(&self.workflow)
    }

    fn remote_read_file(&self, remote: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join(REMOTE_READS)
            .join(safe_file_name(remote))
    }

    /// The agent Stop hook's count of blocked stops for one agent session (a name made safe
    /// for a file).
    pub fn stop_blocks_file(&self, session: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join(STOP_BLOCKS)
            .join(safe_file_name(session))
    }
}

/// `name` made safe for a file name: ASCII letters, digits, `-` and `_` kept, anything else
/// `_`, at most 80 characters; `default` when nothing is left.
pub(super) fn safe_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if safe.is_empty() {
        "default".to_string()
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt as _;

    #[test]
    fn a_record_is_written_over_in_place_and_nothing_else_is_written_through() {
        let temp = tempfile::tempdir().expect("temp");
        let path = temp.path().join("tips/main");
        assert!(!overwrite(&path, b"none yet\n"), "no file: nothing written");
        assert!(!path.exists());
        create_anew(&path, b"a longer first record\n").expect("made");
        let inode = std::fs::metadata(&path).expect("stat").ino();
        assert!(overwrite(&path, b"shorter\n"));
        assert_eq!(std::fs::read(&path).expect("read"), b"shorter\n");
        assert_eq!(std::fs::metadata(&path).expect("stat").ino(), inode);
        // As long as the last, longer, then as long again.
        assert!(overwrite(&path, b"written\n"));
        assert_eq!(std::fs::read(&path).expect("read"), b"written\n");
        assert!(overwrite(&path, b"a longer record\n"));
        assert_eq!(std::fs::read(&path).expect("read"), b"a longer record\n");
        assert!(overwrite(&path, b"a record again\n"));
        assert_eq!(std::fs::read(&path).expect("read"), b"a record again\n");

        let target = temp.path().join("elsewhere");
        std::fs::write(&target, "mine").expect("target");
        std::fs::remove_file(&path).expect("remove");
        std::os::unix::fs::symlink(&target, &path).expect("link");
        assert!(!overwrite(&path, b"x\n"), "a link is not followed");
        create_anew(&path, b"x\n").expect("the link replaced");
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "mine");
        assert_eq!(std::fs::read(&path).expect("read"), b"x\n");

        std::fs::remove_file(&path).expect("remove");
        crate::test_git::mkfifo(&path);
        assert!(!overwrite(&path, b"y\n"), "a FIFO is not waited on");
        create_anew(&path, b"y\n").expect("the FIFO replaced");
        assert_eq!(std::fs::read(&path).expect("read"), b"y\n");
    }
}
