//! Ending a command's whole process group: what a timeout, a cancel, the end of a run and a
//! signal that ends this process all do, so that nothing a command started outlives it.

use std::io::Read as _;
use std::os::fd::{AsFd as _, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Sends SIGKILL to process group `pgid`.
pub(super) fn kill_group(pgid: u32) {
    let pid = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // ESRCH (nothing left in the group) is the normal case after a clean exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// How many commands' groups a signal can end at once: gates run a few at a time.
const SLOTS: usize = 64;

/// The process groups of the commands running now (0: a free slot), read by whichever
/// command's wait hears a signal.
static RUNNING: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Set where another part of this process ends it on those signals (`run`'s agent
/// supervision, src/exec/agent.rs): a signal then only ends the groups.
static ENDED_ELSEWHERE: AtomicBool = AtomicBool::new(false);

/// The signals' handlers, once the first command has started.
static ALARM: OnceLock<Option<Alarm>> = OnceLock::new();

/// How many commands are watched now; under a lock so that the last one's end and another's
/// start cannot both decide whether this process is idle.
static WATCHED: Mutex<usize> = Mutex::new(0);

/// What the handlers of SIGINT, SIGTERM and SIGHUP share with this process's commands. No
/// thread listens: the handlers record the signal and wake every command's wait (its
/// `poll`), which ends the groups and then this process; while no command runs, the handler
/// ends the process itself, as the signal's default would. A listening thread was made at
/// every process's first command, which was some 3 % of a passing `submit-work`
/// (benches/orchestrate.rs, GREEN).
struct Alarm {
    /// Readable once a signal has arrived: polled by each command's wait.
    wake: std::io::PipeReader,
    /// The signal heard (0: none yet).
    heard: Arc<AtomicUsize>,
    /// True while no command runs and nothing else ends this process: the handler then
    /// ends it at once.
    idle: Arc<AtomicBool>,
}

/// A command's process group, ended with this process when a SIGINT, SIGTERM or SIGHUP
/// ends it, until dropped. The group is the command's own (it does not get the terminal's
/// Ctrl-C), and a supervisor's `kill PID` reaches this process alone: without this, a test
/// command killed with it ran on, orphaned, however long it looped.
pub(super) struct Watched(Option<usize>);

/// Watches `pgid` until the returned guard drops; the command's wait polls [`alarm`] and
/// calls [`heard`] when it is readable.
pub(super) fn watch(pgid: u32) -> Watched {
    let slot = i32::try_from(pgid).ok().and_then(|pgid| {
        RUNNING.iter().position(|slot| {
            slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    });
    let alarm = ALARM.get_or_init(install);
    let mut watched = WATCHED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *watched += 1;
    if let Some(alarm) = alarm {
        alarm.idle.store(false, Ordering::SeqCst);
    }
    Watched(slot)
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(slot) = self.0.and_then(|at| RUNNING.get(at)) {
            slot.store(0, Ordering::SeqCst);
        }
        let mut watched = WATCHED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *watched = watched.saturating_sub(1);
        let Some(Some(alarm)) = ALARM.get() else {
            return;
        };
        if *watched == 0 && !ENDED_ELSEWHERE.load(Ordering::SeqCst) {
            alarm.idle.store(true, Ordering::SeqCst);
            // A signal that came while the last command was ending, after its wait stopped
            // polling: no wait will hear it now, and the handler saw this process busy.
            end_as_heard(alarm);
        }
    }
}

/// The descriptor that becomes readable when a signal has come while commands run: `None`
/// before the first command, or where every one of those signals is ignored.
pub(super) fn alarm() -> Option<BorrowedFd<'static>> {
    ALARM.get()?.as_ref().map(|alarm| alarm.wake.as_fd())
}

/// Whether a signal has come (what a wait without [`alarm`] checks now and then).
pub(super) fn signalled() -> bool {
    matches!(ALARM.get(), Some(Some(alarm)) if alarm.heard.load(Ordering::SeqCst) != 0)
}

/// A signal has come: every command's group is ended, then this process as the signal
/// would have ended it, unless it is ended elsewhere, where this returns and the caller's
/// command, its group gone, ends.
pub(super) fn heard() {
    let Some(Some(alarm)) = ALARM.get() else {
        return;
    };
    // Drained, so that a wait that goes on (`run`) does not wake again for it.
    let mut byte = [0u8; 16];
    while matches!((&alarm.wake).read(&mut byte), Ok(n) if n > 0) {}
    for slot in &RUNNING {
        if let Ok(pgid) = u32::try_from(slot.load(Ordering::SeqCst))
            && pgid != 0
        {
            kill_group(pgid);
        }
    }
    if !ENDED_ELSEWHERE.load(Ordering::SeqCst) {
        end_as_heard(alarm);
    }
}

/// Ends this process as the signal heard would have, if one was.
fn end_as_heard(alarm: &Alarm) {
    let heard = alarm.heard.load(Ordering::SeqCst);
    if let Ok(number) = i32::try_from(heard)
        && number != 0
    {
        let _ = signal_hook::low_level::emulate_default_handler(number);
        // Not reached for these signals, whose default is to end.
        std::process::exit(128 + number);
    }
}

/// This process ends on those signals elsewhere: a signal only ends the groups.
pub(crate) fn ended_elsewhere() {
    ENDED_ELSEWHERE.store(true, Ordering::SeqCst);
    if let Some(Some(alarm)) = ALARM.get() {
        alarm.idle.store(false, Ordering::SeqCst);
    }
}

/// The handlers (with the first command): each records its signal and wakes the waits,
/// and ends this process itself while it is idle. `None` where every signal is ignored or
/// a handler cannot be set (the signals then keep their default, as before any command).
fn install() -> Option<Alarm> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let heeded = heeded(&[SIGINT, SIGTERM, SIGHUP]);
    if heeded.is_empty() {
        return None;
    }
    // A pipe, not a socket pair: one object for the kernel to make, not two.
    let (wake, writer) = std::io::pipe().ok()?;
    // Every command's wait reads it when it is readable, and all but one find it empty.
    rustix::io::ioctl_fionbio(&wake, true).ok()?;
    let heard = Arc::new(AtomicUsize::new(0));
    // Idle until every handler is set: one left half set (a registration failed) then still
    // ends this process as the signal's default would, never leaves it caught and ignored.
    let idle = Arc::new(AtomicBool::new(true));
    for number in heeded {
        let value = usize::try_from(number).ok()?;
        signal_hook::flag::register_conditional_default(number, Arc::clone(&idle)).ok()?;
        signal_hook::flag::register_usize(number, Arc::clone(&heard), value).ok()?;
        signal_hook::low_level::pipe::register(number, writer.try_clone().ok()?).ok()?;
    }
    // Busy: the first command has started.
    idle.store(false, Ordering::SeqCst);
    Some(Alarm { wake, heard, idle })
}

/// Those of `signals` this process was not started ignoring. A signal ignored at start
/// (`nohup`, a script's `cmd &` without job control, `trap '' INT`) must stay ignored, by
/// this process and by the commands it starts: a handler would make it end us, and would
/// reset it to its default in every command started after. The ignored set is read from
/// `/proc/self/status` (`SigIgn`), as querying `sigaction` takes unsafe code the library
/// forbids; where it cannot be read, every signal is heeded.
pub(crate) fn heeded(signals: &[i32]) -> Vec<i32> {
    let ignored = proc_status()
        .and_then(|status| ignored_mask(&status))
        .unwrap_or(0);
    signals
        .iter()
        .copied()
        .filter(|&number| {
            let bit = u32::try_from(number - 1)
                .ok()
                .and_then(|at| 1u64.checked_shl(at));
            bit.is_none_or(|bit| ignored & bit == 0)
        })
        .collect()
}

/// This process's `/proc/self/status`, read in one call: `read_to_string` would grow its
/// buffer from 32 bytes in eight reads, on every command-running call.
fn proc_status() -> Option<Vec<u8>> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        "/proc/self/status",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut bytes = Vec::with_capacity(4096);
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(4096);
        }
        match rustix::io::read(&fd, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => return Some(bytes),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}

/// The `SigIgn` mask of a `/proc/PID/status` text: bit N-1 set where signal N is ignored.
fn ignored_mask(status: &[u8]) -> Option<u64> {
    use gix::bstr::ByteSlice as _;
    const KEY: &[u8] = b"\nSigIgn:";
    let rest = status.get(status.find(KEY)? + KEY.len()..)?;
    let line = rest.get(..rest.find_byte(b'\n').unwrap_or(rest.len()))?;
    let hex = std::str::from_utf8(line).ok()?.trim();
    u64::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ignored_mask_is_read_from_the_status_text() {
        let status =
            b"Name:\tx\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000003\nSigCgt:\t0\n";
        assert_eq!(ignored_mask(status), Some(3));
        assert_eq!(ignored_mask(b"Name:\tx\n"), None);
        assert_eq!(ignored_mask(b"Name:\tx\nSigIgn:\tzz\n"), None);
        assert_eq!(
            ignored_mask(b"Name:\tx\nSigIgn:\t0000000000000001"),
            Some(1)
        );
        // This process's own, read as the command reads it.
        assert!(ignored_mask(&proc_status().expect("/proc/self/status")).is_some());
    }
}
