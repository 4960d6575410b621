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
    let mut cmd = piped_command(program.as_os_str(), args, dir, stdin.is_some());
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

/// `program ARGS` in `dir` with its output piped to us, and its stdin too when there is
/// input for it; closed otherwise, so that a program that reads it ends instead of waiting.
pub(super) fn piped_command(
    program: &OsStr,
    args: impl IntoIterator<Item = impl AsRef<OsStr>>,
    dir: &Path,
    has_input: bool,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .stdin(if has_input {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `PATH` with `dir` first, so `git orchestrate` finds the binary in `dir`.
pub fn path_with_first(dir: &Path) -> Result<OsString, std::env::JoinPathsError> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
}
