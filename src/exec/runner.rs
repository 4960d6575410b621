//! The confined runner (docs/integrity.md, "What the verifier runs"): one process of this
//! program per confinement holder, started once inside the holder's user, mount and network
//! namespaces as the first process of a PID namespace of its own, with that namespace's
//! `/proc` and no capability left (src/exec/confine.rs starts it so, through `unshare` and
//! `setpriv`), which starts every command of the verification there: each a plain child of
//! the runner, in a process group of its own, one at a time; when one ends, the runner ends
//! and reaps everything else in the namespace before it answers, so nothing a command starts
//! outlives it. No program runs between the runner and a command. Both sides of the runner's
//! protocol live here: [`serve`], the runner's loop, and [`Runner`], the verifier's end.
//!
//! The protocol: the runner's stdin is a `SOCK_SEQPACKET` socket. The runner says `ready` once
//! it can take commands. Each command is one message `run` carrying four descriptors: a
//! stream socket of the command's own (the connection), then its stdin, stdout and stderr.
//! On the connection the verifier writes the request ([`Request`], framed as below); the
//! runner answers one status frame when the command has ended. Anything the verifier writes
//! afterwards, or its closing the connection, kills the command. A frame is a count, then
//! that many fields, each its length then its bytes, all lengths `u32` little endian.

use std::ffi::{OsStr, OsString};
use std::io::{IoSlice, IoSliceMut, Write as _};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The hidden first argument that makes this program the runner.
pub const MODE: &str = "__confined-runner";

/// What the runner says once it can take commands.
const READY: &[u8] = b"ready";

/// The control message of one command.
const RUN: &[u8] = b"run";

/// A request up to this size fits in a new connection's buffer (Linux gives a Unix socket
/// some 200 KiB).
const SMALL_REQUEST: usize = 64 * 1024;

/// A request larger than this is refused: a command line and environment are far smaller.
const MAX_REQUEST: usize = 64 * 1024 * 1024;

/// One command for the runner: what `Command` would be given.
#[derive(Debug)]
pub struct Request<'a> {
    pub program: &'a OsStr,
    pub args: Vec<&'a OsStr>,
    pub dir: &'a Path,
    /// The command's whole environment: nothing of the runner's own is added.
    pub env: Vec<(OsString, OsString)>,
}

/// How a command ended, as the runner saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
}

/// The verifier's end of a runner: the control socket. Requests may come from several
/// threads: each is one message.
#[derive(Debug)]
pub struct Runner {
    control: OwnedFd,
}

/// A command running in the runner: its connection, which becomes readable when it ends.
#[derive(Debug)]
pub struct Running {
    conn: UnixStream,
    ended: Option<Ended>,
}

impl Runner {
    /// The pair of control sockets: this end, and the runner's (its stdin).
    pub fn pair() -> std::io::Result<(Runner, OwnedFd)> {
        let (ours, theirs) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )?;
        Ok((Runner { control: ours }, theirs))
    }

    /// Waits for the runner's `ready`: false when it ended without saying it (a program
    /// that is not this one, or a runner that refused).
    pub fn ready(&self) -> bool {
        let mut buf = [0u8; 16];
        matches!(rustix::net::recv(&self.control, &mut buf, rustix::net::RecvFlags::empty()),
            Ok((n, _)) if buf.get(..n) == Some(READY))
    }

    /// Starts `request` with the three descriptors as its stdin, stdout and stderr.
    pub fn spawn(
        &self,
        request: &Request<'_>,
        stdin: BorrowedFd<'_>,
        stdout: BorrowedFd<'_>,
        stderr: BorrowedFd<'_>,
    ) -> std::io::Result<Running> {
        let (mut conn, theirs) = UnixStream::pair()?;
        // The request first: the connection's buffer holds it until the runner reads it.
        let mut fields: Vec<Vec<u8>> = vec![
            request.program.as_bytes().to_vec(),
            request.dir.as_os_str().as_bytes().to_vec(),
            request.args.len().to_string().into_bytes(),
        ];
        fields.extend(request.args.iter().map(|a| a.as_bytes().to_vec()));
        fields.extend(request.env.iter().map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            kv
        }));
        let frame = frame(&fields);
        // A request larger than the connection's buffer would block until the runner reads
        // it, which it does once told: that one is written on a thread of its own.
        let sending = if frame.len() <= SMALL_REQUEST {
            conn.write_all(&frame)?;
            None
        } else {
            let mut writer = conn.try_clone()?;
            Some(std::thread::spawn(move || writer.write_all(&frame)))
        };
        let fds = [theirs.as_fd(), stdin, stdout, stderr];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
        let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
        if !control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds)) {
            return Err(std::io::Error::other(
                "cannot pass descriptors to the runner",
            ));
        }
        rustix::net::sendmsg(
            &self.control,
            &[IoSlice::new(RUN)],
            &mut control,
            rustix::net::SendFlags::NOSIGNAL,
        )?;
        drop(theirs);
        if let Some(sending) = sending {
            sending
                .join()
                .map_err(|_| std::io::Error::other("the request's writer panicked"))??;
        }
        Ok(Running { conn, ended: None })
    }
}

impl Running {
    /// Readable when the command has ended (or the runner is gone).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.conn.as_fd()
    }

    /// How the command ended: waits for it.
    pub fn wait(&mut self) -> std::io::Result<Ended> {
        if let Some(ended) = self.ended {
            return Ok(ended);
        }
        let fields = read_frame(&mut self.conn, 1024)?
            .ok_or_else(|| std::io::Error::other("the confined runner ended with the command"))?;
        let ended = match fields.as_slice() {
            [kind, value] => {
                let value = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<i32>().ok());
                match (kind.as_slice(), value) {
                    (b"code", Some(v)) => Ended::Code(v),
                    (b"signal", Some(v)) => Ended::Signal(v),
                    (b"error", _) => {
                        return Err(std::io::Error::other(format!(
                            "the confined runner could not start the command: {}",
                            String::from_utf8_lossy(&fields[1])
                        )));
                    }
                    _ => return Err(std::io::Error::other("a status the runner cannot send")),
                }
            }
            _ => return Err(std::io::Error::other("a status the runner cannot send")),
        };
        self.ended = Some(ended);
        Ok(ended)
    }

    /// Kills the command and everything it started (everything in the runner's namespace).
    pub fn kill(&mut self) {
        if self.ended.is_none() {
            let _ = self.conn.write_all(b"k");
            let _ = self.conn.shutdown(std::net::Shutdown::Write);
        }
    }
}

/// `fields` as one frame.
fn frame(fields: &[Vec<u8>]) -> Vec<u8> {
    let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    let mut out = len(fields.len()).to_vec();
    for field in fields {
        out.extend_from_slice(&len(field.len()));
        out.extend_from_slice(field);
    }
    out
}

/// One frame of at most `max` bytes in all; `None` at end of input before it.
fn read_frame(input: &mut impl std::io::Read, max: usize) -> std::io::Result<Option<Vec<Vec<u8>>>> {
    let mut word = [0u8; 4];
    match input.read_exact(&mut word) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let count = u32::from_le_bytes(word) as usize;
    let mut total = 0usize;
    let mut fields = Vec::new();
    for _ in 0..count {
        input.read_exact(&mut word)?;
        let n = u32::from_le_bytes(word) as usize;
        total = total.saturating_add(n).saturating_add(4);
        if total > max {
            return Err(std::io::Error::other(
                "a frame larger than the runner takes",
            ));
        }
        let mut field = vec![0u8; n];
        input.read_exact(&mut field)?;
        fields.push(field);
    }
    Ok(Some(fields))
}

/// Whether this process is in a user namespace of its own (the holder's), not the
/// machine's: the machine's maps every user id to itself.
fn in_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|map| {
        let fields: Vec<&str> = map.split_whitespace().collect();
        fields != ["0", "0", "4294967295"]
    })
}

/// Whether this process is the first of a PID namespace of its own whose `/proc` is
/// mounted: it is PID 1, and `/proc` says so (the machine's would name another process).
fn first_of_its_pid_namespace() -> bool {
    rustix::process::getpid().is_init()
        && std::fs::read_link("/proc/self").is_ok_and(|link| link == Path::new("1"))
}

/// Why this process still has a privilege the runner must not have: a capability in any of
/// its sets (effective, permitted, inheritable, bounding, ambient), or new privileges on
/// exec. What `setpriv` takes away before the runner starts (src/exec/confine.rs).
fn privilege_left() -> Option<String> {
    use rustix::thread::CapabilitySet;
    let sets = match rustix::thread::capabilities(None) {
        Ok(sets) => sets,
        Err(e) => return Some(format!("its capabilities cannot be read: {e}")),
    };
    if !(sets.effective.is_empty() && sets.permitted.is_empty() && sets.inheritable.is_empty()) {
        return Some("it has capabilities".into());
    }
    for capability in CapabilitySet::all().iter() {
        // A capability this kernel does not know is in no set.
        let bounding = rustix::thread::capability_is_in_bounding_set(capability);
        let ambient = rustix::thread::capability_is_in_ambient_set(capability);
        if matches!(bounding, Ok(true)) || matches!(ambient, Ok(true)) {
            return Some(format!("{capability:?} is in its bounding or ambient set"));
        }
    }
    match rustix::thread::no_new_privs() {
        Ok(true) => None,
        _ => Some("it may gain privileges on exec".into()),
    }
}

/// The runner's loop: refused unless its stdin is a `SOCK_SEQPACKET` socket, it runs in a
/// user namespace, it is the first process of a PID namespace with its `/proc`, and it has no
/// privilege left (what the confinement's start of it makes), since a runner anywhere else
/// would confine nothing. Returns why it refused, or `Ok` once the verifier has closed the
/// control socket: the runner then ends, and with it, its PID namespace's first process,
/// everything still running there.
pub fn serve() -> Result<(), String> {
    let stdin = std::io::stdin();
    let control = stdin.as_fd();
    let started_by_confinement = in_user_namespace()
        && rustix::net::sockopt::socket_type(control).ok()
            == Some(rustix::net::SocketType::SEQPACKET)
        && first_of_its_pid_namespace();
    if !started_by_confinement {
        return Err(format!(
            "`git-orchestrate {MODE}` is started only by the confinement of `attest`'s commands \
             (docs/integrity.md), inside its namespaces"
        ));
    }
    if let Some(why) = privilege_left() {
        return Err(format!("the confined runner refuses to run: {why}"));
    }
    // The commands run as the same user: undumpable, the runner cannot be traced by them,
    // nor its memory, descriptors or environment read through `/proc/1`. (Signals from its
    // own namespace do not reach it: it is that namespace's first process and handles none.)
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(|e| format!("cannot make the runner undumpable: {e}"))?;
    rustix::net::send(control, READY, rustix::net::SendFlags::NOSIGNAL)
        .map_err(|e| format!("cannot answer the verifier: {e}"))?;
    // One command at a time: what one leaves is ended before the next starts.
    let turn = Arc::new(Mutex::new(()));
    loop {
        let mut data = [0u8; 16];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
        let mut fds_buffer = rustix::net::RecvAncillaryBuffer::new(&mut space);
        let got = match rustix::net::recvmsg(
            control,
            &mut [IoSliceMut::new(&mut data)],
            &mut fds_buffer,
            rustix::net::RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(got) => got,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("cannot read the verifier's requests: {e}")),
        };
        if got.bytes == 0 {
            return Ok(());
        }
        let mut fds: Vec<OwnedFd> = Vec::new();
        for message in fds_buffer.drain() {
            if let rustix::net::RecvAncillaryMessage::ScmRights(received) = message {
                fds.extend(received);
            }
        }
        if data.get(..got.bytes) != Some(RUN) || fds.len() != 4 {
            // Not a request of ours: nothing runs for it (its descriptors close here).
            continue;
        }
        let mut fds = fds.into_iter();
        if let (Some(conn), Some(stdin), Some(stdout), Some(stderr)) =
            (fds.next(), fds.next(), fds.next(), fds.next())
        {
            let turn = turn.clone();
            std::thread::spawn(move || {
                run_one(UnixStream::from(conn), [stdin, stdout, stderr], &turn);
            });
        }
    }
}

/// The request on a command's connection `conn`, and whether the verifier wrote more after
/// it. Read through a buffer: a request is some hundred fields, each a length then its
/// bytes, and a read each was a system call each. What the verifier writes after the
/// request can only be its word to stop, which the buffer may now hold rather than the
/// socket ([`told_to_stop`] would not see it).
fn read_request(conn: &UnixStream) -> (std::io::Result<Option<Vec<Vec<u8>>>>, bool) {
    let mut reader = std::io::BufReader::with_capacity(SMALL_REQUEST, conn);
    let read = read_frame(&mut reader, MAX_REQUEST);
    (read, !reader.buffer().is_empty())
}

/// Whether the verifier has spoken on (or closed) a command's connection: it wants the
/// command killed.
fn told_to_stop(conn: &UnixStream) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(conn, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).is_ok_and(|n| n > 0)
}

/// One command: read its request, wait for its turn, start it as a child of the runner in a
/// process group of its own, kill it if the verifier says so, end everything it left, then
/// answer how it ended. No program runs between the runner and the command: the runner has
/// no capability to drop, and its PID namespace and `/proc` are the command's.
fn run_one(mut conn: UnixStream, [stdin, stdout, stderr]: [OwnedFd; 3], turn: &Mutex<()>) {
    use std::os::unix::process::CommandExt as _;
    let answer = |conn: &mut UnixStream, kind: &str, value: String| {
        let _ = conn.write_all(&frame(&[kind.as_bytes().to_vec(), value.into_bytes()]));
    };
    let (read, stop_written) = read_request(&conn);
    let fields = match read {
        Ok(Some(fields)) => fields,
        Ok(None) => return,
        Err(e) => return answer(&mut conn, "error", e.to_string()),
    };
    let Some(mut cmd) = command_of(&fields) else {
        return answer(
            &mut conn,
            "error",
            "a request the runner cannot read".into(),
        );
    };
    let _turn = turn.lock().unwrap_or_else(PoisonError::into_inner);
    // Killed while it waited: it never starts.
    if stop_written || told_to_stop(&conn) {
        return answer(&mut conn, "signal", "9".into());
    }
    cmd.stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .process_group(0);
    let spawned = cmd.spawn();
    // The runner's copies of the command's stdio close here: its readers see EOF with it.
    drop(cmd);
    let child = match spawned {
        Ok(child) => child,
        Err(e) => return answer(&mut conn, "error", e.to_string()),
    };
    let pid = rustix::process::Pid::from_child(&child);
    let ended = watch(&conn, pid);
    // Whatever it left is ended, even when it could not be watched: the next command (or the
    // verifier's next step) sees none of it.
    let left = end_leftovers(pid);
    match (ended, left) {
        (Err(why), _) | (_, Err(why)) => answer(&mut conn, "error", why),
        (Ok(status), Ok(())) => match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => answer(&mut conn, "code", code.to_string()),
            (None, Some(signal)) => answer(&mut conn, "signal", signal.to_string()),
            (None, None) => answer(&mut conn, "code", "-1".into()),
        },
    }
}

/// The command `pid` until it ends, or until a word from the verifier (or its end) kills
/// it; its status, reaped. Meanwhile what it leaves running becomes the runner's (the first
/// process of the namespace) and is reaped as it ends, so that those cannot pile up.
fn watch(
    conn: &UnixStream,
    pid: rustix::process::Pid,
) -> Result<rustix::process::WaitStatus, String> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let kill = || {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    };
    // Without a way to watch it, a command could never be stopped (a timeout, the verifier's
    // end): it is not let run.
    let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
        kill();
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
        return Err(
            "the runner cannot watch a command here (pidfd_open failed): none is run".into(),
        );
    };
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    loop {
        let mut fds = [
            PollFd::new(&pidfd, PollFlags::IN),
            PollFd::new(conn, PollFlags::IN),
        ];
        match poll(&mut fds, Some(&tick)) {
            Ok(0) => {
                reap_orphans(pid);
                continue;
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => {
                kill();
                break;
            }
        }
        if !fds[1].revents().is_empty() {
            kill();
            break;
        }
        if !fds[0].revents().is_empty() {
            break;
        }
    }
    loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => return Ok(status),
            Err(rustix::io::Errno::INTR) => {}
            Ok(None) => return Err("the command's status was lost".into()),
            Err(e) => return Err(format!("cannot wait for the command: {e}")),
        }
    }
}

/// The processes of this namespace but its first (the runner), from its `/proc`.
fn others() -> Vec<rustix::process::Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(rustix::process::Pid::from_raw)
        .filter(|pid| !pid.is_init())
        .collect()
}

/// Reaps, without waiting, every process of the namespace that has ended and is the
/// runner's (orphans of the running command), but `running`, whose status is its answer.
fn reap_orphans(running: rustix::process::Pid) {
    for pid in others().into_iter().filter(|pid| *pid != running) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
    }
}

/// How long the runner tries to end what a command left before it says it cannot.
const LEFTOVER_LIMIT: Duration = Duration::from_secs(10);

/// Ends every process of the namespace but the runner (what the command `pid` left:
/// daemons, double forks, nested namespaces) and reaps them, until its `/proc` shows none,
/// the command's own included. From the namespace's first process, a `SIGKILL` reaches
/// every one of them; those forked while it is sent are found on the next scan.
fn end_leftovers(pid: rustix::process::Pid) -> Result<(), String> {
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        // `wait`, any child: rustix's `waitpid(None, …)` is a wait for this process group's.
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
        let left = others();
        if left.is_empty() {
            return Ok(());
        }
        if start.elapsed() > LEFTOVER_LIMIT {
            let named: Vec<String> = left
                .iter()
                .map(|pid| {
                    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_pid()));
                    stat.unwrap_or_default().trim().to_string()
                })
                .collect();
            return Err(format!(
                "the runner could not end what the command left: {}",
                named.join("; ")
            ));
        }
        for pid in left {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// The command of a request's fields: `program args…` in its directory, with the whole
/// environment it names and nothing of the runner's.
fn command_of(fields: &[Vec<u8>]) -> Option<Command> {
    let [program, dir, argc, rest @ ..] = fields else {
        return None;
    };
    let argc: usize = std::str::from_utf8(argc).ok()?.parse().ok()?;
    let (args, env) = (rest.get(..argc)?, rest.get(argc..)?);
    let mut cmd = Command::new(OsStr::from_bytes(program));
    cmd.args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(PathBuf::from(OsString::from_vec(dir.clone())))
        .env_clear();
    for kv in env {
        let at = kv.iter().position(|b| *b == b'=')?;
        cmd.env(
            OsStr::from_bytes(&kv[..at]),
            OsStr::from_bytes(&kv[at + 1..]),
        );
    }
    Some(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_as_written_and_a_short_one_is_an_error() {
        let fields = vec![b"sh".to_vec(), Vec::new(), b"a=b\0c".to_vec()];
        let bytes = frame(&fields);
        assert_eq!(
            read_frame(&mut bytes.as_slice(), 1024).unwrap(),
            Some(fields)
        );
        assert_eq!(read_frame(&mut [].as_slice(), 1024).unwrap(), None);
        assert!(read_frame(&mut &bytes[..bytes.len() - 1], 1024).is_err());
        assert!(read_frame(&mut bytes.as_slice(), 8).is_err());
    }

    #[test]
    fn a_stop_written_with_the_request_is_seen_though_a_buffer_read_it() {
        // Not through `run_one`: outside a PID namespace of its own, its ending of what a
        // command left would reach every process this user may signal.
        let fields: Vec<Vec<u8>> = ["/bin/sh", "/", "2", "-c", "exit 3"]
            .iter()
            .map(|f| f.as_bytes().to_vec())
            .collect();
        for (after, stop) in [(&b"k"[..], true), (&b""[..], false)] {
            let (mut ours, theirs) = UnixStream::pair().unwrap();
            let mut written = frame(&fields);
            written.extend_from_slice(after);
            ours.write_all(&written).unwrap();
            let (read, stop_written) = read_request(&theirs);
            assert_eq!(read.unwrap(), Some(fields.clone()));
            assert_eq!(stop_written, stop, "{after:?}");
            // What the buffer took is gone from the socket: only the buffer could tell.
            assert!(!told_to_stop(&theirs));
        }
    }

    #[test]
    fn the_runner_refuses_outside_a_confinement() {
        // The test's stdin is no control socket, and it is no PID namespace's first process.
        let why = serve().unwrap_err();
        assert!(why.contains("started only by the confinement"), "{why}");
    }

    #[test]
    fn a_request_becomes_its_command_with_nothing_of_the_runners_environment() {
        let fields: Vec<Vec<u8>> = ["sh", "/tmp", "2", "-c", "exit 3", "A=b=c", "EMPTY="]
            .iter()
            .map(|f| f.as_bytes().to_vec())
            .collect();
        let cmd = command_of(&fields).unwrap();
        assert_eq!(cmd.get_program(), "sh");
        assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["-c", "exit 3"]);
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/tmp")));
        let env: Vec<_> = cmd.get_envs().collect();
        assert_eq!(
            env,
            [
                (OsStr::new("A"), Some(OsStr::new("b=c"))),
                (OsStr::new("EMPTY"), Some(OsStr::new("")))
            ]
        );
        // An argument count beyond the fields, or a variable without `=`, is no request.
        assert!(command_of(&fields[..4]).is_none());
        let mut bad = fields.clone();
        bad.push(b"NOEQUALS".to_vec());
        assert!(command_of(&bad).is_none());
    }
}
