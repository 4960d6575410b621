//! Runs one turn of an agent for `git orchestrate run`: the agent CLI (or the user's command)
//! with the briefing on stdin or as its prompt, to completion. The agent stays in our process
//! group, so a Ctrl-C at the terminal stops it and its children with us, and a signal sent to
//! us alone is passed on to it; what it printed is kept, its end only when it printed more
//! than a turn's record holds.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use super::orphans;
use super::process::piped_command;
use crate::workflow::state::ExitRecord;

/// The most of each stream a turn keeps: its end.
pub const MAX_TURN_OUTPUT: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub struct AgentTurn {
    pub exit: ExitRecord,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

/// Runs `program ARGS` in `dir` with `env` set and `stdin` fed to it (closed when `None`),
/// for at most `timeout`: then the agent and everything it started are ended (TERM, then
/// KILL after a grace period) and the turn's exit says it timed out. When the turn ends,
/// whatever the agent left running is ended too (see [`supervise`]).
pub fn run_agent(
    program: &OsString,
    args: &[String],
    dir: &Path,
    env: &[(&str, OsString)],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<AgentTurn> {
    let start = Instant::now();
    let mut cmd = piped_command(program, args, dir, stdin.is_some());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let mut child = cmd.spawn()?;
    AGENT.store(child.id() as i32, Ordering::SeqCst);
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let input = input.to_vec();
        // Apart, so an agent that prints before it reads cannot deadlock against us; one
        // that never reads its input is no error.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    // Read as it comes, keeping only the end: an agent that prints without end must not
    // fill our memory.
    let readers = [
        child.stdout.take().map(reader),
        child.stderr.take().map(reader),
    ];
    let deadline = start + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(Some(status)),
            Ok(None) if Instant::now() >= deadline && !timed_out => {
                timed_out = true;
                orphans::end_tree(&[i32::try_from(child.id()).unwrap_or(0)], GRACE);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            // Ending the tree reaped the agent itself: it is gone, as it was meant to be.
            Err(_) if timed_out => break Ok(None),
            Err(e) => break Err(e),
        }
    };
    AGENT.store(0, Ordering::SeqCst);
    // What the agent left running (a server, `sleep 600 &`, a `setsid` daemon) would race
    // the next turn: it ends with this one.
    end_orphans(GRACE);
    if STOPPING.load(Ordering::SeqCst) {
        // The signal thread ends the process: nothing more is recorded or started.
        loop {
            std::thread::park();
        }
    }
    let status = status?;
    // A child the agent left running in the background (a server, `sleep 600 &`) keeps the
    // pipes open after the agent has exited: the turn ends with the agent, with what was
    // read by then, and the readers are left to finish on their own.
    let deadline = Instant::now() + AFTER_EXIT;
    let [stdout, stderr] = readers.map(|reader| {
        let Some((kept, handle)) = reader else {
            return Vec::new();
        };
        while !handle.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let kept = kept.lock().map(|k| k.clone()).unwrap_or_default();
        trimmed(kept)
    });
    Ok(AgentTurn {
        exit: turn_exit(status, timed_out, timeout),
        stdout,
        stderr,
        elapsed: start.elapsed(),
    })
}

/// How a turn ended: timed out, or the agent's exit (`None`: reaped by ending its tree).
fn turn_exit(
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    timeout: Duration,
) -> ExitRecord {
    use std::os::unix::process::ExitStatusExt;
    if timed_out {
        return ExitRecord::TimedOut {
            after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
    }
    match status.map(|s| (s.code(), s.signal())) {
        Some((Some(code), _)) => ExitRecord::Code(code),
        Some((None, signal)) => ExitRecord::Signal(signal.unwrap_or(0)),
        None => ExitRecord::Signal(0),
    }
}

/// The agent running now (0: none), for the signal thread.
static AGENT: AtomicI32 = AtomicI32::new(0);
/// Set by the stop signal's handler, before the signal thread stops the agent.
static STOPPING: std::sync::LazyLock<std::sync::Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| std::sync::Arc::new(AtomicBool::new(false)));

/// From now on, a SIGINT, SIGTERM or SIGHUP sent to this process alone (`kill PID`, a
/// supervisor stopping it) reaches the agent too before this process ends as the signal
/// would end it. A Ctrl-C at the terminal reaches every process of the foreground group
/// anyway; a supervisor's signal would otherwise leave the agent running without us.
pub fn forward_stop_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // One started ignoring a signal (`nohup git orchestrate run`) keeps ignoring it.
    let heeded = super::group::heeded(&[SIGINT, SIGTERM, SIGHUP]);
    // Set in the handler itself, which Linux runs in the main thread (the group's leader,
    // preferred unless a signal is pending there already) before it can see the agent end:
    // a Ctrl-C stops the agent and us at once, and with the flag set by the thread below, a
    // main thread that saw the agent's end first went on to record the turn and start the
    // next (seen with that thread held back 1.5 s).
    for &number in &heeded {
        signal_hook::flag::register(number, std::sync::Arc::clone(&STOPPING))?;
    }
    let mut signals = signal_hook::iterator::Signals::new(heeded)?;
    super::group::ended_elsewhere();
    std::thread::spawn(move || {
        let Some(number) = signals.forever().next() else {
            return;
        };
        let agent = AGENT.load(Ordering::SeqCst);
        if let (Some(signal), Some(pid)) = (
            rustix::process::Signal::from_named_raw(number),
            rustix::process::Pid::from_raw(agent),
        ) {
            let me = rustix::process::getpid();
            if rustix::process::getpgrp() == me {
                // Leading our group (a shell's job), the agent's children are in it too.
                let _ = rustix::process::kill_current_process_group(signal);
            } else {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
        let _ = signal_hook::low_level::emulate_default_handler(number);
        // A signal whose default is not to end (none of ours): end as interrupted.
        std::process::exit(128 + number);
    });
    Ok(())
}

/// How long a process ended with TERM has before it gets KILL.
const GRACE: Duration = Duration::from_secs(3);

/// Set by [`supervise`]: this process is `run`, and every child it has after a turn is what
/// the turn left behind.
static SUPERVISING: AtomicBool = AtomicBool::new(false);

/// Makes this process the reaper of its descendants: a process the agent starts and leaves
/// behind, even one that left our session with `setsid` or shed our environment, becomes our
/// child when its parent ends, so [`end_orphans`] finds it. Once, before the first turn;
/// only `run` calls it (it starts no other process that outlives the call that starts it).
pub fn supervise() -> std::io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(std::io::Error::from)?;
    // Children this process had before (a wrapper's `job & exec git orchestrate run`) are
    // not the agent's: they are left alone.
    let _ = BEFORE.set(orphans::own_children());
    SUPERVISING.store(true, Ordering::SeqCst);
    Ok(())
}

/// The children [`supervise`] found: (pid, start time).
static BEFORE: std::sync::OnceLock<Vec<orphans::Known>> = std::sync::OnceLock::new();

/// After a turn, under [`supervise`]: ends every child this process has (what the turn left
/// behind, reparented to us: the agent's, a test's, a gate's), with everything it started,
/// and reaps every child that has ended. Nothing without [`supervise`]: then other children
/// may be someone else's (a test harness's).
fn end_orphans(grace: Duration) {
    if !SUPERVISING.load(Ordering::SeqCst) {
        return;
    }
    for _ in 0..5 {
        // Ended ones first: orphans that exited are our zombies until reaped.
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
        let before = BEFORE.get().map_or(&[][..], Vec::as_slice);
        let children = orphans::children_since(before);
        if children.is_empty() {
            return;
        }
        orphans::end_tree(&children, grace);
    }
}

/// How long a turn waits, once the agent has exited, for the rest of its output.
const AFTER_EXIT: Duration = Duration::from_secs(2);

type Kept = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// A thread reading `pipe` into a buffer it shares.
fn reader(pipe: impl std::io::Read + Send + 'static) -> (Kept, std::thread::JoinHandle<()>) {
    let kept = Kept::default();
    let shared = kept.clone();
    let handle = std::thread::spawn(move || read_end(pipe, &shared));
    (kept, handle)
}

/// All of `pipe` read into `kept`, its last [`MAX_TURN_OUTPUT`] bytes kept. A read error
/// ends it with what was read.
fn read_end(mut pipe: impl std::io::Read, kept: &Kept) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                let Ok(mut kept) = kept.lock() else { break };
                kept.extend_from_slice(&buffer[..n]);
                // Trimmed in batches, so a long stream costs amortised O(1) per byte.
                if kept.len() > 2 * MAX_TURN_OUTPUT {
                    let excess = kept.len() - MAX_TURN_OUTPUT;
                    kept.drain(..excess);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

fn trimmed(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() > MAX_TURN_OUTPUT {
        bytes.drain(..bytes.len() - MAX_TURN_OUTPUT);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_end_of_a_long_stream_is_kept() {
        let mut stream = vec![b'a'; 3 * MAX_TURN_OUTPUT + 17];
        stream.extend_from_slice(b"the end\n");
        let read = |bytes: &[u8]| {
            let kept = Kept::default();
            read_end(bytes, &kept);
            trimmed(kept.lock().unwrap().clone())
        };
        let kept = read(&stream[..]);
        assert_eq!(kept.len(), MAX_TURN_OUTPUT);
        assert!(kept.ends_with(b"aaathe end\n"));
        assert_eq!(read(b"short"), b"short");
    }

    #[test]
    fn a_child_left_in_the_background_does_not_hold_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let turn = run_agent(
            &OsString::from("sh"),
            &["-c".into(), "echo done; sleep 30 &".into()],
            dir.path(),
            &[],
            None,
            Duration::from_secs(60),
        )
        .unwrap();
        assert_eq!(turn.stdout, b"done\n");
        assert!(matches!(turn.exit, ExitRecord::Code(0)));
        // Not a timing assertion of speed: the background sleep is 30 s, the wait 2 s.
        assert!(started.elapsed() < Duration::from_secs(25));
    }
}
