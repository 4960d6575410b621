//! Runs a shell command the way (docs/agent-guide.md, "EXECUTING_TDD") demands: as `sh -c` would, in the repo root, stdin closed,
//! stdout and stderr captured together and verbatim, and the whole process group killed at
//! the timeout.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::env::CommandEnv;
use super::group::kill_group;
use crate::workflow::state::ExitRecord;

/// Output beyond this is dropped from the front: the end of a log is where failures are.
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// How long to wait for the output pipe to close after the process group is gone. Only a
/// process that left the group (setsid) can keep it open that long.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
pub struct RunOutput {
    pub exit: ExitRecord,
    /// stdout and stderr interleaved as the command wrote them, byte for byte; only stdout
    /// when [`ShellOptions::split_stderr`] was asked for.
    pub output: Vec<u8>,
    /// stderr, when it was kept apart.
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

/// How to run a shell command beyond the defaults (stdin closed, streams together).
#[derive(Clone, Copy, Debug, Default)]
pub struct ShellOptions<'a> {
    /// Fed to the command's stdin, which is then closed.
    pub stdin: Option<&'a [u8]>,
    /// Keep stderr apart, for commands whose stdout is data (reviewers print JSON).
    pub split_stderr: bool,
    /// Variables the command gets on top of [`CommandEnv`]'s: what the orchestrator asks of
    /// a test runner (the report it writes, docs/integrity.md "Per-test evidence"). Set after
    /// the variables a command never gets are taken out.
    pub vars: &'a [(String, String)],
}

/// Runs `command` as `sh -c` would, in `dir`, in the environment `env` (docs/integrity.md,
/// "Hermetic verification"). When it exits, anything it left running in its process group is
/// killed too, so no stray process outlives the gate or holds its output.
pub fn run_shell(
    command: &str,
    dir: &Path,
    timeout: Duration,
    env: &CommandEnv,
) -> std::io::Result<RunOutput> {
    run_shell_with(command, dir, timeout, env, ShellOptions::default())
}

/// [`run_shell`] with stdin input and/or stderr kept apart.
pub fn run_shell_with(
    command: &str,
    dir: &Path,
    timeout: Duration,
    env: &CommandEnv,
    options: ShellOptions,
) -> std::io::Result<RunOutput> {
    run(command, dir, timeout, env, options, true)
}

/// `command` itself, when it can be started without a shell: git's rule
/// (`prepare_shell_cmd`), no character a shell would treat specially. A path is made
/// absolute against `dir` by the kernel only after the chdir, so one with a `/` goes to sh.
fn plain_program(command: &str) -> Option<&str> {
    const SHELL_META: &str = "|&;<>()$`\\\"' \t\n*?[#~=%/";
    (!command.is_empty() && !command.contains(|c| SHELL_META.contains(c))).then_some(command)
}

/// `use_pidfd`: false to take the path of kernels without pidfds (tests take both).
fn run(
    command: &str,
    dir: &Path,
    timeout: Duration,
    env: &CommandEnv,
    options: ShellOptions,
    use_pidfd: bool,
) -> std::io::Result<RunOutput> {
    let (out_reader, out_writer) = std::io::pipe()?;
    let (err_reader, err_writer) = if options.split_stderr {
        let (r, w) = std::io::pipe()?;
        (Some(r), w)
    } else {
        (None, out_writer.try_clone()?)
    };
    let start = Instant::now();
    // Confined with a runner: the runner starts it (src/exec/runner.rs).
    let pipes = Pipes {
        out_reader,
        err_reader,
        out_writer,
        err_writer,
    };
    let Pipes {
        out_reader,
        err_reader,
        out_writer,
        err_writer,
    } = match by_runner(command, dir, (start, timeout), env, &options, pipes)? {
        Ran::Done(output) => return Ok(output),
        Ran::NoRunner(pipes) => pipes,
    };
    let spawn = |program: &std::ffi::OsStr, script: Option<&str>, arg0: Option<&str>| {
        spawn_in_group(
            (program, arg0),
            script,
            dir,
            env,
            &options,
            (&out_writer, &err_writer),
        )
    };
    // What git does for hooks and aliases: a command with nothing for a shell to interpret
    // is started directly, sparing a shell's start-up on every run. Anything the kernel
    // will not start that way (a shell builtin, a script without `#!`, a missing program)
    // goes to sh after all, which runs it or reports it as it always would.
    // POSIX puts sh at /bin/sh; naming it skips a PATH search on every run.
    // A confined command always starts as sh's: the confinement starts, whether or not the
    // program would, so a failed start could not fall back to sh.
    // The program is looked up here, in the command's PATH, and started by its path: std
    // starts a program it must look up in a PATH of the child's own with `fork` (a copy of
    // this process's page tables, and a fault on every page either side writes before the
    // `exec`), one it is given by path with `posix_spawn` (`vfork`). Not found: sh's.
    let own_path = options.vars.iter().any(|(key, _)| key == "PATH");
    let direct = plain_program(command)
        .filter(|_| env.confinement().is_none() && !own_path)
        .and_then(|program| Some((program, env.find(program)?)));
    let mut child = match direct.map(|(name, path)| spawn(path.as_os_str(), None, Some(name))) {
        Some(Ok(child)) => child,
        _ => spawn(std::ffi::OsStr::new(super::env::SH), Some(command), None)?,
    };
    // Only the child's copies of the pipes' write ends may remain, so that the readers see
    // EOF when the group is gone.
    drop((out_writer, err_writer));
    let pgid = child.id();
    let _watched = super::group::watch(pgid);
    let registration = super::cancel::register(pgid, command);
    if let (Some(input), Some(mut pipe)) = (options.stdin, child.stdin.take()) {
        let input = input.to_vec();
        // A separate writer: a command that prints before reading all its input must not
        // deadlock against us.
        thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&input);
        });
    }
    let (exit, output, stderr) = match pidfd(pgid).filter(|_| use_pidfd) {
        Some(pidfd) => collect(
            &mut Proc::Plain { child, pgid },
            &pidfd,
            start + timeout,
            timeout,
            out_reader,
            err_reader,
        )?,
        None => {
            let stdout = spawn_reader(out_reader);
            let stderr = err_reader.map(spawn_reader);
            let exit = wait_with_timeout(child, pgid, timeout)?;
            kill_group(pgid);
            (
                exit,
                stdout.finish(),
                stderr.map(Reader::finish).unwrap_or_default(),
            )
        }
    };
    if registration.cancelled() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the call was cancelled; the command was killed with its process group",
        ));
    }
    Ok(RunOutput {
        exit,
        output,
        stderr,
        elapsed: start.elapsed(),
    })
}

/// `program` (with `sh -c script` when `script` is given) started in a process group of its
/// own in `dir`, with `env` and `options`' variables, its output into the `writers`; through
/// the confinement's own commands when `env` confines.
fn spawn_in_group(
    (program, arg0): (&std::ffi::OsStr, Option<&str>),
    script: Option<&str>,
    dir: &Path,
    env: &CommandEnv,
    options: &ShellOptions,
    (out_writer, err_writer): (&std::io::PipeWriter, &std::io::PipeWriter),
) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let mut cmd = match env.confinement() {
        Some(confinement) => {
            let args = script.map(super::confine::shell_args);
            let args: Vec<&std::ffi::OsStr> = args
                .iter()
                .flatten()
                .map(std::ffi::OsString::as_os_str)
                .collect();
            confinement.command(program, &args, dir)?
        }
        None => {
            let mut cmd = Command::new(program);
            if let Some(arg0) = arg0 {
                cmd.arg0(arg0);
            }
            if let Some(script) = script {
                cmd.arg("-c").arg(script);
            }
            cmd
        }
    };
    cmd.current_dir(dir)
        .stdin(if options.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(out_writer.try_clone()?)
        .stderr(err_writer.try_clone()?)
        .process_group(0);
    env.apply(&mut cmd);
    for (key, value) in options.vars {
        cmd.env(key, value);
    }
    cmd.spawn()
}

/// The ends of a command's output pipes: the readers ours, the writers the command's.
struct Pipes {
    out_reader: std::io::PipeReader,
    err_reader: Option<std::io::PipeReader>,
    out_writer: std::io::PipeWriter,
    err_writer: std::io::PipeWriter,
}

/// What [`by_runner`] did: ran the command, or found no runner and hands the pipes back.
enum Ran {
    Done(RunOutput),
    NoRunner(Pipes),
}

/// `command` started by the confinement's runner (src/exec/runner.rs), when `env` confines
/// and the runner is up; its output read from `readers` until it ends or `timeout` passes.
fn by_runner(
    command: &str,
    dir: &Path,
    (start, timeout): (Instant, Duration),
    env: &CommandEnv,
    options: &ShellOptions,
    pipes: Pipes,
) -> std::io::Result<Ran> {
    use std::os::fd::AsFd as _;
    let Some(confinement) = env.confinement() else {
        return Ok(Ran::NoRunner(pipes));
    };
    let (stdin_reader, stdin_writer) = match options.stdin {
        Some(_) => {
            let (r, w) = std::io::pipe()?;
            (std::os::fd::OwnedFd::from(r), Some(w))
        }
        None => (std::fs::File::open("/dev/null")?.into(), None),
    };
    let env_vars = resolved_env(env, options.vars);
    let script_args = super::confine::shell_args(command);
    let request = super::runner::Request {
        program: std::ffi::OsStr::new(super::env::SH),
        args: script_args
            .iter()
            .map(std::ffi::OsString::as_os_str)
            .collect(),
        dir,
        env: env_vars,
    };
    let Some(running) = confinement.spawn(
        &request,
        stdin_reader.as_fd(),
        pipes.out_writer.as_fd(),
        pipes.err_writer.as_fd(),
    ) else {
        return Ok(Ran::NoRunner(pipes));
    };
    let running = running?;
    // Only the command's copies of the write ends may remain, so that the readers see EOF
    // when it ends.
    let Pipes {
        out_reader,
        err_reader,
        out_writer,
        err_writer,
    } = pipes;
    drop((out_writer, err_writer, stdin_reader));
    if let (Some(input), Some(mut pipe)) = (options.stdin, stdin_writer) {
        let input = input.to_vec();
        thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&input);
        });
    }
    let exit_fd = running.fd().try_clone_to_owned()?;
    let mut proc = Proc::Confined(running);
    let (exit, output, stderr) = collect(
        &mut proc,
        &exit_fd,
        start + timeout,
        timeout,
        out_reader,
        err_reader,
    )?;
    // It has no process group of ours for a cancel to kill (confined commands run only in
    // `attest`, where none is in force); a cancelled call's run still does not count.
    if super::cancel::cancelled() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the call was cancelled",
        ));
    }
    Ok(Ran::Done(RunOutput {
        exit,
        output,
        stderr,
        elapsed: start.elapsed(),
    }))
}

/// A descriptor that becomes readable when the process exits; `None` on a kernel without
/// pidfds (before Linux 5.3), where a thread waits instead.
fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// The command's environment as [`CommandEnv::apply`] and `vars` make it, whole: what a
/// runner, which has none of ours, gives it.
fn resolved_env(
    env: &CommandEnv,
    vars: &[(String, String)],
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut cmd = Command::new(super::env::SH);
    env.apply(&mut cmd);
    for (key, value) in vars {
        cmd.env(key, value);
    }
    let mut all: std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString> =
        crate::environ::vars().iter().cloned().collect();
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => all.insert(key.to_os_string(), value.to_os_string()),
            None => all.remove(key),
        };
    }
    all.into_iter().collect()
}

/// A started command: a child of ours in its process group, or one a confinement's runner
/// started (in its PID namespace, which ends with it).
enum Proc {
    Plain { child: Child, pgid: u32 },
    Confined(super::runner::Running),
}

impl Proc {
    /// Kills the command and whatever it started.
    fn kill(&mut self) {
        match self {
            Proc::Plain { pgid, .. } => kill_group(*pgid),
            Proc::Confined(running) => running.kill(),
        }
    }

    /// How it ended: waits for it.
    fn wait(&mut self) -> std::io::Result<ExitRecord> {
        use std::os::unix::process::ExitStatusExt;
        match self {
            Proc::Plain { child, .. } => {
                let status = child.wait()?;
                Ok(match (status.code(), status.signal()) {
                    (Some(code), _) => ExitRecord::code(code),
                    (None, Some(signal)) => ExitRecord::signal(signal),
                    (None, None) => ExitRecord::code(-1),
                })
            }
            Proc::Confined(running) => Ok(match running.wait()? {
                super::runner::Ended::Code(code) => ExitRecord::code(code),
                super::runner::Ended::Signal(signal) => ExitRecord::signal(signal),
            }),
        }
    }
}

/// What a descriptor [`collect`] polls stands for.
#[derive(Clone, Copy)]
enum Waited {
    /// The output pipe at this index.
    Pipe(usize),
    /// The command's exit.
    Exit,
    /// A signal for this process.
    Signal,
}

/// Waits for the command and drains its pipes on this thread, all with one `poll`: an
/// ordinary run starts no thread. When the command exits (or times out) its group is
/// killed, and the pipes are read until they close, or for [`DRAIN_GRACE`] at most.
/// `exited` becomes readable when it has ended.
fn collect(
    proc: &mut Proc,
    exited_fd: &std::os::fd::OwnedFd,
    deadline: Instant,
    timeout: Duration,
    out: std::io::PipeReader,
    err: Option<std::io::PipeReader>,
) -> std::io::Result<(ExitRecord, Vec<u8>, Vec<u8>)> {
    use rustix::event::{PollFd, PollFlags, poll};

    let mut pipes = [(Some(out), Captured::default()), (err, Captured::default())];
    let mut exit = None;
    let mut drain_until = deadline;
    let mut chunk = [0u8; 16 * 1024];
    // A SIGINT, SIGTERM or SIGHUP for this process wakes this wait (src/exec/group.rs).
    let alarm = super::group::alarm();
    while pipes.iter().any(|(pipe, _)| pipe.is_some()) || exit.is_none() {
        let now = Instant::now();
        if now >= drain_until {
            if exit.is_some() {
                // A process that left the group holds a pipe: keep what was read.
                break;
            }
            proc.kill();
            proc.wait()?;
            exit = Some(ExitRecord::timed_out(
                u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            ));
            drain_until = Instant::now() + DRAIN_GRACE;
            continue;
        }
        let wait = rustix::event::Timespec::try_from(drain_until - now).ok();
        let (ready_pipes, exited) = {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            let mut which = Vec::with_capacity(4);
            for (i, (pipe, _)) in pipes.iter().enumerate() {
                if let Some(pipe) = pipe {
                    fds.push(PollFd::new(pipe, PollFlags::IN));
                    which.push(Waited::Pipe(i));
                }
            }
            if exit.is_none() {
                fds.push(PollFd::new(exited_fd, PollFlags::IN));
                which.push(Waited::Exit);
            }
            if let Some(alarm) = &alarm {
                fds.push(PollFd::from_borrowed_fd(*alarm, PollFlags::IN));
                which.push(Waited::Signal);
            }
            match poll(&mut fds, wait.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let mut ready = Vec::new();
            let mut exited = false;
            let mut signalled = false;
            for (fd, which) in fds.iter().zip(which) {
                if fd.revents().is_empty() {
                    continue;
                }
                match which {
                    Waited::Pipe(i) => ready.push(i),
                    Waited::Exit => exited = true,
                    Waited::Signal => signalled = true,
                }
            }
            if signalled {
                // Ends every command's group and, unless `run` ends it, this process.
                super::group::heard();
            }
            (ready, exited)
        };
        for i in ready_pipes {
            let (pipe, captured) = &mut pipes[i];
            match pipe.as_mut().map(|p| p.read(&mut chunk)) {
                Some(Ok(n)) if n > 0 => captured.push(&chunk[..n]),
                _ => *pipe = None,
            }
        }
        if exited {
            exit = Some(proc.wait()?);
            // Whatever it left running goes with it, so the pipes close.
            proc.kill();
            drain_until = Instant::now() + DRAIN_GRACE;
        }
    }
    proc.kill();
    let [(_, mut output), (_, mut stderr)] = pipes;
    Ok((
        exit.unwrap_or(ExitRecord::code(-1)),
        output.take(),
        stderr.take(),
    ))
}

/// A pipe drained on its own thread into a bounded buffer.
struct Reader {
    captured: Arc<Mutex<Captured>>,
    done: mpsc::Receiver<()>,
}

fn spawn_reader(mut pipe: std::io::PipeReader) -> Reader {
    let captured = Arc::new(Mutex::new(Captured::default()));
    let (done_tx, done) = mpsc::channel();
    let shared = Arc::clone(&captured);
    thread::spawn(move || {
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => match shared.lock() {
                    Ok(mut c) => c.push(&chunk[..n]),
                    Err(_) => break,
                },
            }
        }
        let _ = done_tx.send(());
    });
    Reader { captured, done }
}

impl Reader {
    /// What was read, once the pipe closed (or, if a process outside the group keeps it
    /// open, after a grace period).
    fn finish(self) -> Vec<u8> {
        let _ = self.done.recv_timeout(DRAIN_GRACE);
        match self.captured.lock() {
            Ok(mut c) => c.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }
}

fn wait_with_timeout(
    mut child: Child,
    pgid: u32,
    timeout: Duration,
) -> std::io::Result<ExitRecord> {
    use std::os::unix::process::ExitStatusExt;

    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    // No descriptor to poll here: a signal for this process is looked for every tick.
    const TICK: Duration = Duration::from_millis(50);
    let deadline = Instant::now() + timeout;
    let status = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(TICK)) {
            Ok(status) => break status?,
            Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {
                if super::group::signalled() {
                    super::group::heard();
                }
            }
            Err(_) => {
                kill_group(pgid);
                let _ = rx.recv();
                return Ok(ExitRecord::timed_out(
                    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                ));
            }
        }
    };
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => ExitRecord::code(code),
        (None, Some(signal)) => ExitRecord::signal(signal),
        (None, None) => ExitRecord::code(-1),
    })
}

#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: usize,
}

impl Captured {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > 2 * MAX_OUTPUT {
            let excess = self.bytes.len() - MAX_OUTPUT;
            self.bytes.drain(..excess);
            self.dropped += excess;
        }
    }

    fn take(&mut self) -> Vec<u8> {
        if self.bytes.len() > MAX_OUTPUT {
            let excess = self.bytes.len() - MAX_OUTPUT;
            self.bytes.drain(..excess);
            self.dropped += excess;
        }
        let mut out = Vec::new();
        if self.dropped > 0 {
            out.extend_from_slice(
                format!(
                    "[git-orchestrate: the first {} bytes of output were dropped; the last {} are kept]\n",
                    self.dropped, MAX_OUTPUT
                )
                .as_bytes(),
            );
        }
        out.append(&mut self.bytes);
        out
    }
}

/// A tail is kept in `state.json`, which every command reads: a few minified lines must not
/// make it megabytes.
pub const MAX_TAIL_BYTES: usize = 64 * 1024;

/// The last `lines` lines of `output` as text, at most [`MAX_TAIL_BYTES`] of them. Bytes that
/// are not UTF-8 are shown as U+FFFD; `output.log` keeps the originals.
pub fn tail_lines(output: &[u8], lines: usize) -> String {
    let trimmed = output.strip_suffix(b"\n").unwrap_or(output);
    let start = trimmed
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines.saturating_sub(1))
        .map_or(0, |(i, _)| i + 1);
    let (start, cut) = if output.len() - start > MAX_TAIL_BYTES {
        let mut at = output.len() - MAX_TAIL_BYTES;
        // Start on a character, so the cut does not show as a replacement character.
        while at < output.len() && (output[at] & 0b1100_0000) == 0b1000_0000 {
            at += 1;
        }
        (
            at,
            "[… earlier output cut: the full output is in output.log …]\n",
        )
    } else {
        (start, "")
    };
    let mut text = String::from(cut);
    text.push_str(&String::from_utf8_lossy(&output[start..]));
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env() -> &'static CommandEnv {
        super::super::env::unconfined()
    }

    #[test]
    fn tails_are_bounded_in_bytes_too() {
        let line = "é".repeat(20_000);
        let output = format!("first\n{line}\n{line}\n");
        let tail = tail_lines(output.as_bytes(), 200);
        assert!(
            tail.starts_with("[… earlier output cut: the full output is in output.log …]\né"),
            "cut on a character boundary"
        );
        assert!(tail.len() <= MAX_TAIL_BYTES + 100, "{}", tail.len());
        assert!(tail.ends_with(&format!("{line}\n")));
        assert_eq!(
            tail_lines(b"a\nb\nc\n", 2),
            "b\nc\n",
            "short output: lines only"
        );
    }

    /// `command` run in `dir`, with time enough.
    fn run_in(dir: &Path, command: &str) -> RunOutput {
        run_shell(command, dir, Duration::from_secs(10), env()).unwrap()
    }

    #[test]
    fn captures_both_streams_and_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(dir.path(), "echo out; echo err >&2; exit 3");
        assert_eq!(out.exit, ExitRecord::code(3));
        assert_eq!(out.output, b"out\nerr\n");
    }

    #[test]
    fn a_command_with_nothing_for_a_shell_starts_directly_and_behaves_as_under_sh() {
        assert_eq!(plain_program("true"), Some("true"));
        assert_eq!(plain_program("pytest"), Some("pytest"));
        for shell_needed in [
            "",
            "cargo test",
            "./run_tests.sh",
            "A=1",
            "x;y",
            "$T",
            "~/t",
        ] {
            assert_eq!(plain_program(shell_needed), None, "{shell_needed:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let run = |command: &str| run_in(dir.path(), command);
        assert_eq!(run("true").exit, ExitRecord::code(0));
        assert_eq!(run("false").exit, ExitRecord::code(1));
        // Builtins have no program to start: sh runs them after all.
        assert_eq!(run(":").exit, ExitRecord::code(0));
        assert_eq!(run("exit").exit, ExitRecord::code(0));
        // A missing program is reported by sh, as it always was.
        let missing = run("no-such-program-for-git-orchestrate");
        assert_eq!(missing.exit, ExitRecord::code(127));
        let text = String::from_utf8_lossy(&missing.output);
        assert!(text.contains("not found"), "{text}");
        let expected_dir = dir.path().canonicalize().unwrap();
        assert_eq!(
            run("pwd").output,
            format!("{}\n", expected_dir.display()).into_bytes()
        );
    }

    /// A plain command is looked up in the commands' PATH as `execvp` looks it up, and
    /// started by its path: a directory or a file that cannot be executed of its name is
    /// passed over, the first executable wins, and a script without `#!` (which the kernel
    /// will not start) is run by sh, as `execvp` runs it.
    #[test]
    fn a_plain_command_is_found_on_the_commands_path_as_execvp_finds_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let bins: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let put = |dir: &tempfile::TempDir, name: &str, text: &str, mode: u32| {
            let file = dir.path().join(name);
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        std::fs::create_dir(bins[0].path().join("tool")).unwrap();
        put(&bins[1], "tool", "#!/bin/sh\necho one\n", 0o644);
        put(&bins[2], "tool", "#!/bin/sh\necho two\n", 0o755);
        put(&bins[2], "bare", "echo run by sh\n", 0o755);
        let mut path: Vec<std::path::PathBuf> =
            bins.iter().map(|d| d.path().to_path_buf()).collect();
        path.push("/usr/bin".into());
        path.push("/bin".into());
        let env = CommandEnv::with_path(&std::env::join_paths(path).unwrap());
        assert_eq!(env.find("tool"), Some(bins[2].path().join("tool")));
        let dir = tempfile::tempdir().unwrap();
        let run = |command: &str| run_shell(command, dir.path(), Duration::from_secs(10), &env);
        assert_eq!(run("tool").unwrap().output, b"two\n");
        assert_eq!(run("bare").unwrap().output, b"run by sh\n");
        assert_eq!(env.find("no-such-program-for-git-orchestrate"), None);
        assert_eq!(
            run("no-such-program-for-git-orchestrate").unwrap().exit,
            ExitRecord::code(127)
        );
    }

    #[test]
    fn runs_in_the_given_directory_with_stdin_closed() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_in(dir.path(), "pwd; cat; echo done");
        let text = String::from_utf8(out.output).unwrap();
        let expected_dir = dir.path().canonicalize().unwrap();
        assert_eq!(text, format!("{}\ndone\n", expected_dir.display()));
        assert!(out.exit.success());
    }

    #[test]
    fn keeps_bytes_that_are_not_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_shell(
            r"printf 'a\377b\n'",
            dir.path(),
            Duration::from_secs(10),
            env(),
        )
        .unwrap();
        assert_eq!(out.output, b"a\xffb\n");
        assert_eq!(tail_lines(&out.output, 5), "a\u{fffd}b\n");
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        for use_pidfd in [true, false] {
            a_timeout_kills_the_whole_group_with(use_pidfd);
        }
    }

    fn a_timeout_kills_the_whole_group_with(use_pidfd: bool) {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child.pid");
        let command = format!(
            "sleep 300 & echo $! > {}; echo started; wait",
            pidfile.display()
        );
        let timeout = Duration::from_millis(500);
        let out = run(
            &command,
            dir.path(),
            timeout,
            env(),
            ShellOptions::default(),
            use_pidfd,
        )
        .unwrap();
        assert_eq!(out.exit, ExitRecord::timed_out(500));
        assert_eq!(out.output, b"started\n");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            process_gone(pid),
            "the backgrounded sleep {pid} survived the timeout"
        );
    }

    #[test]
    fn leftovers_of_a_finished_command_do_not_hold_it() {
        let dir = tempfile::tempdir().unwrap();
        for use_pidfd in [true, false] {
            let started = Instant::now();
            let out = run(
                "sleep 300 & echo bye; echo err >&2; exit 7",
                dir.path(),
                Duration::from_secs(60),
                env(),
                ShellOptions {
                    split_stderr: true,
                    ..ShellOptions::default()
                },
                use_pidfd,
            )
            .unwrap();
            assert_eq!(out.exit, ExitRecord::code(7));
            assert_eq!(out.output, b"bye\n");
            assert_eq!(out.stderr, b"err\n");
            // Killed with the group at exit, the sleep holds nothing for the grace period.
            assert!(started.elapsed() < DRAIN_GRACE, "use_pidfd {use_pidfd}");
        }
    }

    /// Polls for the process to be gone (or a zombie awaiting its new parent).
    pub(crate) fn process_gone(pid: i32) -> bool {
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) => {
                    return true;
                }
                Ok(_) => thread::sleep(Duration::from_millis(50)),
            }
        }
        false
    }

    #[test]
    fn tails() {
        assert_eq!(tail_lines(b"a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines(b"a\nb\nc", 2), "b\nc\n");
        assert_eq!(tail_lines(b"a\nb\n", 5), "a\nb\n");
        assert_eq!(tail_lines(b"", 5), "");
    }

    #[test]
    fn huge_output_keeps_its_end() {
        let mut c = Captured::default();
        let block = vec![b'x'; MAX_OUTPUT];
        c.push(&block);
        c.push(&block);
        c.push(b"the end\n");
        let out = c.take();
        assert!(out.starts_with(b"[git-orchestrate: the first "));
        assert!(out.ends_with(b"the end\n"));
    }
}
