//! Runs a program to completion with its output captured: for the demo, which drives this
//! very binary and git the way an agent would.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a finished program printed, and how it ended (`None`: killed by a signal).
#[derive(Clone, Debug)]
pub struct Captured {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `program ARGS` in `dir` with `env` applied (`None` removes a variable) and `stdin` fed
/// to it, or stdin closed.
pub fn run_captured(
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, Option<&OsStr>)],
    stdin: Option<&[u8]>,
) -> std::io::Result<Captured> {
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
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let mut child = cmd.spawn()?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input)?;
    }
    let out = child.wait_with_output()?;
    Ok(Captured {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: out.stderr,
    })
}

/// `PATH` with `dir` first, so `git orchestrate` finds the binary in `dir`.
pub fn path_with_first(dir: &Path) -> Result<OsString, std::env::JoinPathsError> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
}
