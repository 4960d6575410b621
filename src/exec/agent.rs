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
    let out = child.wait_with_output()?;
    let exit = match out.status.code() {
        Some(code) => ExitRecord::Code(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            ExitRecord::Signal(out.status.signal().unwrap_or(0))
        }
    };
    Ok(AgentTurn {
        exit,
        stdout: keep_end(out.stdout),
        stderr: keep_end(out.stderr),
        elapsed: start.elapsed(),
    })
}

fn keep_end(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() > MAX_TURN_OUTPUT {
        bytes.drain(..bytes.len() - MAX_TURN_OUTPUT);
    }
    bytes
}
