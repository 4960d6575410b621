//! The MCP server's stdin and stdout read and written by the runtime's own thread, where
//! they are pipes or sockets (as every MCP client gives them): tokio's `stdin` and `stdout`
//! hand each read and write to a thread of their own and wait for its answer, two thread
//! wake-ups a call more than the answer needs (a warm `get_task` round trip measured 0.29 ms
//! on a quiet machine, most of it such hand-offs, against 263,000 instructions of work).
//! Anything else (a terminal, a file) keeps tokio's.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// A standard descriptor's flags as they were, put back when the session ends: its
/// description is the client's pipe or socket, and outlives this process.
struct Restore {
    fd: OwnedFd,
    flags: OFlags,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(&self.fd, self.flags);
    }
}

/// What a standard descriptor is read or written through.
enum Through<P> {
    Pipe { io: P, _restore: Restore },
    Socket { io: UnixStream, _restore: Restore },
}

/// A copy of `fd` for the runtime, when it is a pipe or a socket: only those are made
/// non-blocking, since a terminal's or a file's description may be shared with the shell
/// that started us.
fn through<P>(fd: impl AsFd, pipe: impl Fn(OwnedFd) -> io::Result<P>) -> Option<Through<P>> {
    let stat = rustix::fs::fstat(&fd).ok()?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    // Shared with stderr (`2>&1` into one pipe): a write to stderr made non-blocking would
    // fail when that pipe is full, and `eprintln!` panics on a failed write.
    let errors = rustix::fs::fstat(std::io::stderr()).ok();
    if errors.is_some_and(|e| (e.st_dev, e.st_ino) == (stat.st_dev, stat.st_ino)) {
        return None;
    }
    let flags = rustix::fs::fcntl_getfl(&fd).ok()?;
    let restore = || -> Option<Restore> {
        Some(Restore {
            fd: rustix::io::fcntl_dupfd_cloexec(&fd, 3).ok()?,
            flags,
        })
    };
    let copy = rustix::io::fcntl_dupfd_cloexec(&fd, 3).ok()?;
    match kind {
        FileType::Fifo => {
            let restore = restore()?;
            // Made non-blocking by tokio, which checks it is a pipe open this way.
            Some(Through::Pipe {
                io: pipe(copy).ok()?,
                _restore: restore,
            })
        }
        FileType::Socket => {
            let restore = restore()?;
            rustix::fs::fcntl_setfl(&copy, flags | OFlags::NONBLOCK).ok()?;
            let stream = std::os::unix::net::UnixStream::from(copy);
            Some(Through::Socket {
                io: UnixStream::from_std(stream).ok()?,
                _restore: restore,
            })
        }
        _ => None,
    }
}

/// The client's side of the session, as read.
pub struct Input(Reading);

enum Reading {
    Direct(Through<pipe::Receiver>),
    Tokio(tokio::io::Stdin),
}

/// The client's side of the session, as written.
pub struct Output(Writing);

enum Writing {
    Direct(Through<pipe::Sender>),
    Tokio(tokio::io::Stdout),
}

/// This process's stdin.
pub fn input() -> Input {
    match through(std::io::stdin(), pipe::Receiver::from_owned_fd) {
        Some(direct) => Input(Reading::Direct(direct)),
        None => Input(Reading::Tokio(tokio::io::stdin())),
    }
}

/// This process's stdout.
pub fn output() -> Output {
    match through(std::io::stdout(), pipe::Sender::from_owned_fd) {
        Some(direct) => Output(Writing::Direct(direct)),
        None => Output(Writing::Tokio(tokio::io::stdout())),
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Reading::Direct(Through::Pipe { io, .. }) => Pin::new(io).poll_read(cx, buf),
            Reading::Direct(Through::Socket { io, .. }) => Pin::new(io).poll_read(cx, buf),
            Reading::Tokio(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Writing::Direct(Through::Pipe { io, .. }) => Pin::new(io).poll_write(cx, bytes),
            Writing::Direct(Through::Socket { io, .. }) => Pin::new(io).poll_write(cx, bytes),
            Writing::Tokio(stdout) => Pin::new(stdout).poll_write(cx, bytes),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Writing::Direct(Through::Pipe { io, .. }) => Pin::new(io).poll_flush(cx),
            Writing::Direct(Through::Socket { io, .. }) => Pin::new(io).poll_flush(cx),
            Writing::Tokio(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            // The descriptor stays open: it is this process's stdout, not ours to end.
            Writing::Direct(_) => Poll::Ready(Ok(())),
            Writing::Tokio(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}
