//! Ending a command's whole process group: what a timeout, a cancel, the end of a run and a
//! signal that ends this process all do, so that nothing a command started outlives it.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

/// The process groups of the commands running now (0: a free slot), read by the signal
/// thread.
static RUNNING: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// Set where another part of this process ends it on those signals (`run`'s agent
/// supervision, src/exec/agent.rs): the handler here then only ends the groups.
static ENDED_ELSEWHERE: AtomicBool = AtomicBool::new(false);

static INSTALLED: Once = Once::new();

/// A command's process group, ended with this process when a SIGINT, SIGTERM or SIGHUP
/// ends it, until dropped. The group is the command's own (it does not get the terminal's
/// Ctrl-C), and a supervisor's `kill PID` reaches this process alone: without this, a test
/// command killed with it ran on, orphaned, however long it looped.
pub(super) struct Watched(Option<usize>);

/// Watches `pgid` until the returned guard drops.
pub(super) fn watch(pgid: u32) -> Watched {
    INSTALLED.call_once(install);
    let Ok(pgid) = i32::try_from(pgid) else {
        return Watched(None);
    };
    let slot = RUNNING.iter().position(|slot| {
        slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    Watched(slot)
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(slot) = self.0.and_then(|at| RUNNING.get(at)) {
            slot.store(0, Ordering::SeqCst);
        }
    }
}

/// This process ends on those signals elsewhere: the handler only ends the groups.
pub(crate) fn ended_elsewhere() {
    ENDED_ELSEWHERE.store(true, Ordering::SeqCst);
}

/// A thread that hears those signals (started with the first command): it ends every
/// group running, then this process as the signal would have.
fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let heeded = heeded(&[SIGINT, SIGTERM, SIGHUP]);
    if heeded.is_empty() {
        return;
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new(heeded) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let Some(number) = signals.forever().next() else {
                return;
            };
            for slot in &RUNNING {
                if let Ok(pgid) = u32::try_from(slot.load(Ordering::SeqCst))
                    && pgid != 0
                {
                    kill_group(pgid);
                }
            }
            if !ENDED_ELSEWHERE.load(Ordering::SeqCst) {
                let _ = signal_hook::low_level::emulate_default_handler(number);
                // Not reached for these signals, whose default is to end.
                std::process::exit(128 + number);
            }
        });
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
