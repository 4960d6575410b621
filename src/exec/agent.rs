//! Runs one turn of an agent for `git orchestrate run`: the agent CLI (or the user's command)
//! with the briefing on stdin or as its prompt, to completion. The agent stays in our process
//! group, so a Ctrl-C at the terminal stops it and its children with us; what it printed is
//! kept, its end only when it printed more than a turn's record holds.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `program ARGS` in `dir` with `env` set and `stdin` fed to it (closed when `None`).
pub fn run_agent(
    program: &OsString,
    args: &[String],
    dir: &Path,
    env: &[(&str, OsString)],
    stdin: Option<&[u8]>,
) -> std::io::Result<AgentTurn> {
    let start = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let mut child = cmd.spawn()?;
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
        child
            .stdout
            .take()
            .map(|pipe| std::thread::spawn(move || read_end(pipe))),
        child
            .stderr
            .take()
            .map(|pipe| std::thread::spawn(move || read_end(pipe))),
    ];
    let status = child.wait()?;
    let [stdout, stderr] = readers.map(|reader| {
        reader
            .map(|r| r.join().unwrap_or_default())
            .unwrap_or_default()
    });
    let exit = match status.code() {
        Some(code) => ExitRecord::Code(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            ExitRecord::Signal(status.signal().unwrap_or(0))
        }
    };
    Ok(AgentTurn {
        exit,
        stdout,
        stderr,
        elapsed: start.elapsed(),
    })
}

/// All of `pipe` read, its last [`MAX_TURN_OUTPUT`] bytes kept. A read error ends it with
/// what was read.
fn read_end(mut pipe: impl std::io::Read) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                kept.extend_from_slice(&buffer[..n]);
                // Trimmed in batches, so a long stream costs amortised O(1) per byte.
                if kept.len() > 2 * MAX_TURN_OUTPUT {
                    kept.drain(..kept.len() - MAX_TURN_OUTPUT);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if kept.len() > MAX_TURN_OUTPUT {
        kept.drain(..kept.len() - MAX_TURN_OUTPUT);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_end_of_a_long_stream_is_kept() {
        let mut stream = vec![b'a'; 3 * MAX_TURN_OUTPUT + 17];
        stream.extend_from_slice(b"the end\n");
        let kept = read_end(&stream[..]);
        assert_eq!(kept.len(), MAX_TURN_OUTPUT);
        assert!(kept.ends_with(b"aaathe end\n"));
        assert_eq!(read_end(&b"short"[..]), b"short");
    }
}
