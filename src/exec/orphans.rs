//! Processes a command left running outside its process group (`setsid`, a double fork):
//! once this process is their subreaper they become its children when their parent ends,
//! and are found in `/proc` and ended with all they started. `run` ends what an agent's turn
//! left (src/exec/agent.rs); a verification that reuses its worktrees ends what each proof
//! command left before the next one runs ([`Reaper`]).

use std::time::{Duration, Instant};

/// A process named so that a later one given the same pid is not taken for it: (pid, start
/// time).
pub(super) type Known = (i32, Option<u64>);

/// This process's children now (zombies too), named.
pub(super) fn own_children() -> Vec<Known> {
    direct_children()
        .into_iter()
        .map(|(pid, _)| (pid, start_time(pid)))
        .collect()
}

/// This process's children now, zombies too: (pid, is a zombie). Read from each thread's
/// `/proc/self/task/<tid>/children` (a few bytes, where a scan of `/proc` reads every
/// process's: it runs after every RED run), else, on a kernel without that file, from a scan.
fn direct_children() -> Vec<(i32, bool)> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let listed = || -> std::io::Result<Vec<i32>> {
        let mut pids = Vec::new();
        for task in std::fs::read_dir("/proc/self/task")? {
            let text = std::fs::read_to_string(task?.path().join("children"))?;
            pids.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
        Ok(pids)
    };
    let Ok(pids) = listed() else {
        return all_processes()
            .into_iter()
            .filter(|(_, ppid, _)| *ppid == me)
            .map(|(pid, _, zombie)| (pid, zombie))
            .collect();
    };
    pids.into_iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid: i32 = fields.next()?.parse().ok()?;
            (ppid == me).then_some((pid, state == "Z"))
        })
        .collect()
}

/// This process's running children that are not in `before`.
pub(super) fn children_since(before: &[Known]) -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    processes()
        .into_iter()
        .filter(|(_, ppid)| *ppid == me)
        .map(|(pid, _)| pid)
        .filter(|pid| !before.contains(&(*pid, start_time(*pid))))
        .collect()
}

/// While it lives, this process is the subreaper of all it starts: a process a proof command
/// left behind outside its group (`setsid sh -c 'sleep 1; touch marker' &`, a double fork)
/// becomes our child when its parent ends instead of init's, and [`Reaper::end_orphans`]
/// finds and ends it. A verification that runs the next proof in the same worktree
/// (src/engine/finalize/final_check.rs) needs this unconfined: a survivor could write into
/// the worktree after its reset, through its path or through a file it holds open. Confined,
/// the runner, first process of the commands' PID namespace, ends all each command left
/// before it answers (src/exec/runner.rs).
pub struct Reaper {
    /// The children this process had when the reaper started: not a proof's, left alone.
    before: Vec<Known>,
    /// The subreaper setting before: `run` has made this process one already
    /// (src/exec/agent.rs), and keeps it.
    previous: Option<rustix::process::Pid>,
}

/// How long [`Reaper::end_orphans`] tries before it gives up on a process that will not end
/// (one stuck in the kernel).
const GIVE_UP: Duration = Duration::from_secs(10);

impl Reaper {
    /// Makes this process a subreaper until the reaper is dropped. Verification runs one
    /// command at a time on one thread: every child it has after a proof command returned,
    /// but those it had before, is what the command left.
    pub fn start() -> std::io::Result<Reaper> {
        let previous = rustix::process::child_subreaper().map_err(std::io::Error::from)?;
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
            .map_err(std::io::Error::from)?;
        Ok(Reaper {
            before: own_children(),
            previous,
        })
    }

    /// Ends every child this process gained since [`Reaper::start`], with all they started,
    /// with KILL at once (TERM could be trapped, and a trap could still write), and reaps
    /// them, again until none is left: a process being killed can still fork, and its
    /// children come to us. An error when one does not end within [`GIVE_UP`].
    pub fn end_orphans(&self) -> std::io::Result<()> {
        let until = Instant::now() + GIVE_UP;
        loop {
            let ours: Vec<(i32, bool)> = direct_children()
                .into_iter()
                .filter(|(pid, _)| !self.before.contains(&(*pid, start_time(*pid))))
                .collect();
            if ours.is_empty() {
                return Ok(());
            }
            let (ended, running): (Vec<_>, Vec<_>) = ours.into_iter().partition(|(_, z)| *z);
            let ended: Vec<i32> = ended.into_iter().map(|(pid, _)| pid).collect();
            reap(&ended);
            let running: Vec<i32> = running.into_iter().map(|(pid, _)| pid).collect();
            if running.is_empty() {
                continue;
            }
            signal_all(&tree(&running), rustix::process::Signal::KILL);
            if Instant::now() >= until {
                return Err(std::io::Error::other(format!(
                    "a process a test command left running (pid {}) could not be ended",
                    running[0]
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = rustix::process::set_child_subreaper(self.previous);
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`, field 22): with
/// the pid, it names one process, not a later one given the same pid.
pub(super) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    // Fields from the third (state) on; the start time is the 22nd field of the line.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Every process now running with its parent: (pid, parent pid), from `/proc`.
pub(super) fn processes() -> Vec<(i32, i32)> {
    all_processes()
        .into_iter()
        // A zombie has ended already: it waits only to be reaped.
        .filter(|(_, _, zombie)| !zombie)
        .map(|(pid, ppid, _)| (pid, ppid))
        .collect()
}

/// Every process now with its parent, zombies too: (pid, parent pid, is a zombie).
fn all_processes() -> Vec<(i32, i32, bool)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let ppid = fields.next()?.parse().ok()?;
        Some((pid, ppid, state == "Z"))
    })
    .collect()
}

/// `roots` and every process descending from them, as running now.
fn tree(roots: &[i32]) -> Vec<i32> {
    let all = processes();
    let mut found: Vec<i32> = roots.to_vec();
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid) in &all {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
    found
}

fn signal_all(pids: &[i32], signal: rustix::process::Signal) {
    for pid in pids {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

/// Reaps those of `pids` that are children of ours and have ended (orphans reparented to us
/// end as our zombies). Only these: another child of this process is not ours to reap.
fn reap(pids: &[i32]) {
    for pid in pids {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid) {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
        }
    }
}

/// Ends `roots` and all they started: TERM, then KILL to whatever is left after `grace`.
pub(super) fn end_tree(roots: &[i32], grace: Duration) {
    let pids: Vec<i32> = tree(roots).into_iter().filter(|p| *p > 0).collect();
    if pids.is_empty() {
        return;
    }
    signal_all(&pids, rustix::process::Signal::TERM);
    let until = Instant::now() + grace;
    let mut all = pids;
    loop {
        reap(&all);
        // A pid that has ended is dropped at once: it may be given to another process.
        let running_now: Vec<i32> = processes().into_iter().map(|(pid, _)| pid).collect();
        all.retain(|pid| running_now.contains(pid));
        // What is still running of them, and whatever they started meanwhile.
        let left = tree(&all);
        let running: Vec<i32> = processes()
            .into_iter()
            .map(|(pid, _)| pid)
            .filter(|pid| left.contains(pid))
            .collect();
        if running.is_empty() {
            return;
        }
        for pid in &running {
            if !all.contains(pid) {
                all.push(*pid);
            }
        }
        if Instant::now() >= until {
            signal_all(&running, rustix::process::Signal::KILL);
            std::thread::sleep(Duration::from_millis(50));
            reap(&all);
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
