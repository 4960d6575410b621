//! The confined runner (docs/integrity.md, "What the verifier runs"): one process of this
//! program per confinement holder, started once inside the holder's user, mount and network
//! namespaces, which starts every command of the verification there; each command's first
//! process is this program again ([`command_init`]), the first of a new PID namespace, which
//! mounts that namespace's `/proc`, drops every capability and becomes the command. That is
//! one helper program per command where `nsenter`, `unshare` and `setpriv` were three. Both
//! sides of the runner's protocol live here: [`serve`], the runner's loop, and [`Runner`],
//! the verifier's end.
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

/// The hidden first argument that makes this program the runner.
pub const MODE: &str = "__confined-runner";

/// The hidden first argument that makes this program a command's first process.
pub const COMMAND_MODE: &str = "__confined-command";

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

    /// Kills the command and everything it started (its PID namespace).
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

/// The runner's loop: refused unless its stdin is a `SOCK_SEQPACKET` socket and it runs in
/// a user namespace (what the holder's start of it makes), since a runner anywhere else
/// would confine nothing. Returns why it refused, or `Ok` once the verifier has closed the
/// control socket (the commands still running are then killed: their first process dies
/// with the runner's thread that started it).
pub fn serve() -> Result<(), String> {
    let stdin = std::io::stdin();
    let control = stdin.as_fd();
    let started_by_holder = in_user_namespace()
        && rustix::net::sockopt::socket_type(control).ok()
            == Some(rustix::net::SocketType::SEQPACKET);
    if !started_by_holder {
        return Err(format!(
            "`git-orchestrate {MODE}` is started only by the confinement of `attest`'s commands \
             (docs/integrity.md), inside its namespaces"
        ));
    }
    // The commands cannot trace the runner, which keeps the capabilities they drop, nor read
    // it through `/proc`.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .map_err(|e| format!("cannot make the runner undumpable: {e}"))?;
    rustix::net::send(control, READY, rustix::net::SendFlags::NOSIGNAL)
        .map_err(|e| format!("cannot answer the verifier: {e}"))?;
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
            std::thread::spawn(move || run_one(UnixStream::from(conn), [stdin, stdout, stderr]));
        }
    }
}

/// One command: read its request, start its first process (this program as
/// [`command_init`]) in a new PID namespace, kill it if the verifier says so, answer how it
/// ended. When that process ends, the kernel ends every process left in its namespace, a
/// `setsid` daemon included.
fn run_one(mut conn: UnixStream, [stdin, stdout, stderr]: [OwnedFd; 3]) {
    let answer = |conn: &mut UnixStream, kind: &str, value: String| {
        let _ = conn.write_all(&frame(&[kind.as_bytes().to_vec(), value.into_bytes()]));
    };
    let fields = match read_frame(&mut conn, MAX_REQUEST) {
        Ok(Some(fields)) => fields,
        Ok(None) => return,
        Err(e) => return answer(&mut conn, "error", e.to_string()),
    };
    let request = first_process(&fields);
    let Some(mut cmd) = request else {
        return answer(
            &mut conn,
            "error",
            "a request the runner cannot read".into(),
        );
    };
    cmd.stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    // This thread's next child, and only this thread's, goes into a new PID namespace.
    if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWPID) {
        return answer(&mut conn, "error", format!("no PID namespace: {e}"));
    }
    let spawned = cmd.spawn();
    // The runner's copies of the command's stdio close here: its readers see EOF with it.
    drop(cmd);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return answer(&mut conn, "error", e.to_string()),
    };
    let pidfd = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
    // Without a way to watch it, a command could never be stopped (a timeout, the verifier's
    // end): it is not let run.
    let Some(pidfd) = pidfd else {
        let _ = child.kill();
        let _ = child.wait();
        return answer(
            &mut conn,
            "error",
            "the runner cannot watch a command here (pidfd_open failed): none is run".into(),
        );
    };
    // Until it ends: a word from the verifier (or its end) kills it.
    {
        use rustix::event::{PollFd, PollFlags, poll};
        loop {
            let mut fds = [
                PollFd::new(&pidfd, PollFlags::IN),
                PollFd::new(&conn, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => {
                    let _ = child.kill();
                    break;
                }
            }
            if !fds[1].revents().is_empty() {
                let _ = child.kill();
                break;
            }
            if !fds[0].revents().is_empty() {
                break;
            }
        }
    }
    match child.wait() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt as _;
            match (status.code(), status.signal()) {
                (Some(code), _) => answer(&mut conn, "code", code.to_string()),
                (None, Some(signal)) => answer(&mut conn, "signal", signal.to_string()),
                (None, None) => answer(&mut conn, "code", "-1".into()),
            }
        }
        Err(e) => answer(&mut conn, "error", e.to_string()),
    }
}

/// The command of a request's fields: this very program as its first process, whatever now
/// lies at its path (`/proc/self/exe` is the file the runner was started from), given the
/// command's argv, directory and whole environment.
fn first_process(fields: &[Vec<u8>]) -> Option<Command> {
    let [program, dir, argc, rest @ ..] = fields else {
        return None;
    };
    let argc: usize = std::str::from_utf8(argc).ok()?.parse().ok()?;
    let (args, env) = (rest.get(..argc)?, rest.get(argc..)?);
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg(COMMAND_MODE)
        .arg(OsStr::from_bytes(program))
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
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

/// A command's first process, started by the runner as the first of a new PID namespace:
/// dies with the runner's thread that started it, mounts a `/proc` of the namespace's own
/// in a mount namespace of its own (so the command sees no process of the verifier's, and a
/// `/proc/PID/root` cannot lead it around the mounts), drops every capability (bounding,
/// inheritable and ambient sets, and new privileges on exec: what `setpriv` did), then
/// becomes `program args…`. Returns only why it could not.
pub fn command_init(program: &OsStr, args: &[OsString]) -> String {
    use std::os::unix::process::CommandExt as _;
    if !rustix::process::getpid().is_init() || !in_user_namespace() {
        return format!(
            "`git-orchestrate {COMMAND_MODE}` is started only by the confinement's runner"
        );
    }
    let why = |what: &str, e: &dyn std::fmt::Display| format!("confined command: {what}: {e}");
    if let Err(e) =
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
    {
        return why("no death signal", &e);
    }
    if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS) {
        return why("no mount namespace", &e);
    }
    // Nothing mounted here goes back to the runner's namespace.
    if let Err(e) = rustix::mount::mount_change(
        "/",
        rustix::mount::MountPropagationFlags::PRIVATE | rustix::mount::MountPropagationFlags::REC,
    ) {
        return why("cannot make the mounts private", &e);
    }
    if let Err(e) = rustix::mount::mount(
        "proc",
        "/proc",
        "proc",
        rustix::mount::MountFlags::NOSUID
            | rustix::mount::MountFlags::NODEV
            | rustix::mount::MountFlags::NOEXEC,
        None,
    ) {
        return why("cannot mount /proc", &e);
    }
    if let Err(e) = drop_capabilities() {
        return e;
    }
    let e = Command::new(program).args(args).exec();
    why(&format!("cannot run {}", Path::new(program).display()), &e)
}

/// Every capability of the bounding set, the inheritable and the ambient ones, and new
/// privileges on exec: the program this process becomes, root of the holder's user
/// namespace, starts with none, so it cannot mount, unmount or remount anything.
fn drop_capabilities() -> Result<(), String> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    let why =
        |what: &str, e: rustix::io::Errno| format!("confined command: cannot drop {what}: {e}");
    for capability in CapabilitySet::all().iter() {
        match rustix::thread::remove_capability_from_bounding_set(capability) {
            // A capability this kernel does not know is in no set.
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(why("the bounding set", e)),
        }
    }
    let sets = rustix::thread::capabilities(None).map_err(|e| why("capabilities", e))?;
    rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            inheritable: CapabilitySet::empty(),
            ..sets
        },
    )
    .map_err(|e| why("the inheritable capabilities", e))?;
    rustix::thread::clear_ambient_capability_set().map_err(|e| why("the ambient ones", e))?;
    rustix::thread::set_no_new_privs(true).map_err(|e| why("new privileges", e))?;
    Ok(())
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
    fn the_runner_and_a_commands_first_process_refuse_outside_a_confinement() {
        // The test's stdin is no control socket, and it is no PID namespace's first process.
        let why = serve().unwrap_err();
        assert!(why.contains("started only by the confinement"), "{why}");
        let why = command_init(OsStr::new("true"), &[]);
        assert!(
            why.contains("started only by the confinement's runner"),
            "{why}"
        );
    }
}
