//! Advisory `flock`s that make commands take turns: a working tree's checkpoint, `init`,
//! `init --agent`, one `git orchestrate run` per workflow. The kernel lets go of each when its
//! holder ends, however it ends.

use std::path::Path;

use super::files::safe_file_name;
use super::{Store, StoreError};

impl Store {
    /// Waits for, then holds, this working tree's checkpoint lock
    /// (`<git dir>/orchestrator/checkpoint.lock`, an advisory `flock`): two checkpoints in one
    /// working tree would share its index and `.git/COMMIT_EDITMSG`, so one could record its
    /// message on the other's commit. The kernel lets go of it when its holder ends, however
    /// it ends.
    pub fn checkpoint_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.git_dir().join("orchestrator/checkpoint.lock"))
    }

    /// Waits for, then holds, the lock of `init` (`<common dir>/orchestrator/init.lock`).
    pub fn init_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.repo.common_dir().join("orchestrator/init.lock"))
    }

    /// Waits for, then holds, the lock of `init --agent` (`<common dir>/orchestrator/
    /// agent-setup.lock`): two at once would each read the settings files, then write over
    /// each other's records of what was there before.
    pub fn agent_setup_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.repo.common_dir().join("orchestrator/agent-setup.lock"))
    }

    /// Takes the lock that lets one `git orchestrate run` drive this workflow at a time:
    /// `.git/orchestrator/run/<workflow>.lock`, an advisory `flock` taken without waiting, which
    /// the kernel lets go of when its holder ends, however it ends (a run killed with
    /// SIGKILL included). The holder's pid and host are written in it, for the refusal only.
    /// `Err` names the run that holds it.
    pub fn take_run_lock(&self) -> Result<Result<RunLock, RunLockHeld>, StoreError> {
        use std::io::{Read as _, Seek as _, Write as _};
        let path = self
            .repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.lock", safe_file_name(&self.workflow)));
        let io = |e: std::io::Error| {
            StoreError::Internal(format!("cannot take the run lock {}: {e}", path.display()))
        };
        let mut file = open_lock_file(&path).map_err(io)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {
                file.set_len(0).map_err(io)?;
                file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
                file.write_all(format!("{} {}\n", std::process::id(), host_name()).as_bytes())
                    .map_err(io)?;
                Ok(Ok(RunLock { _file: file }))
            }
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                let mut text = String::new();
                let _ = std::io::Read::by_ref(&mut file)
                    .take(256)
                    .read_to_string(&mut text);
                let mut words = text.split_whitespace();
                let pid = words
                    .next()
                    .filter(|p| p.bytes().all(|b| b.is_ascii_digit()));
                let host = words.next().filter(|h| h.len() <= 64);
                Ok(Err(RunLockHeld {
                    pid: pid.map(str::to_string),
                    host: host.map(str::to_string),
                    workflow: self.workflow.clone(),
                }))
            }
            Err(e) => Err(io(e.into())),
        }
    }
}

/// Held while a `git orchestrate run` drives a workflow ([`Store::take_run_lock`]): the
/// lock goes with the file's last descriptor.
#[derive(Debug)]
pub struct RunLock {
    _file: std::fs::File,
}

/// The run that holds a workflow's run lock, as its lock file names it (`None`: unreadable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLockHeld {
    pub pid: Option<String>,
    pub host: Option<String>,
    pub workflow: String,
}

impl std::fmt::Display for RunLockHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "another `git orchestrate run` (pid {}, host {}) drives workflow {}",
            self.pid.as_deref().unwrap_or("?"),
            self.host.as_deref().unwrap_or("?"),
            self.workflow
        )
    }
}

/// This machine's name, as the run lock records it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace))
        .unwrap_or_else(|| "localhost".to_string())
}

/// A lock file opened for `flock`: created when missing, never through a link, without
/// blocking (a FIFO put there answers at once), and only a regular file.
fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// How long a command waits for a lock another holds before it gives up, naming the lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// An advisory `flock` on `path` (created when missing), waited for (at most [`LOCK_WAIT`])
/// and held while the file is open; the kernel lets go of it when its holder ends, however
/// it ends.
pub(super) fn exclusive_lock(path: &Path) -> Result<std::fs::File, StoreError> {
    let io = |e: std::io::Error| {
        StoreError::Internal(format!("cannot take the lock {}: {e}", path.display()))
    };
    let file = open_lock_file(path).map_err(io)?;
    let until = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                if std::time::Instant::now() >= until {
                    return Err(StoreError::Internal(format!(
                        "{} is held by another command for {} minutes; nothing was done (a \
                         process of yours holds it: `fuser {}` names it)",
                        path.display(),
                        LOCK_WAIT.as_secs() / 60,
                        path.display()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(io(e.into())),
        }
    }
}
