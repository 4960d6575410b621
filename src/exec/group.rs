//! Ending a command's whole process group: what a timeout, a cancel and the end of a run all
//! do, so that nothing a command started outlives it.

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
