//! `ssh-keygen -Y`: signing a human's answer with the user's key, and checking a signature
//! against an allowed-signers file (docs/integrity.md, "Signed human answers"). The signature
//! and the allowed-signers file come from the user and the repository: they are written to a
//! private temporary directory and handed to `ssh-keygen` as paths, never through a shell.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The namespace every signature of git-orchestrate's is made in: a signature made for git
/// commits or for a file (`-n file`) does not verify as an answer.
pub const NAMESPACE: &str = "git-orchestrate";

/// The namespace `attest` signs its verdicts in: a key listed for human answers only
/// (`namespaces="git-orchestrate"`) cannot pass for a verifier, nor the other way round.
pub const ATTEST_NAMESPACE: &str = "git-orchestrate-attest";

/// A verification is two short runs; one that hangs is broken, not slow.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(30);

/// Signing may wait for a passphrase or for a touch of a security key.
const SIGN_TIMEOUT: Duration = Duration::from_secs(300);

/// What `ssh-keygen` may print that we read: principals, or a failure's message.
const OUTPUT_CAP: u64 = 64 * 1024;

/// Why `ssh-keygen` could not do its part.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    #[error(
        "ssh-keygen was not found on PATH: signed human answers need OpenSSH 8.2 or newer \
         (`ssh-keygen -Y`)"
    )]
    Missing,
    #[error("could not run ssh-keygen: {0}")]
    Io(#[from] std::io::Error),
    #[error("ssh-keygen did not finish within {} seconds and was stopped", .0.as_secs())]
    Timeout(Duration),
    #[error("ssh-keygen could not sign with {key}: {message}")]
    SignFailed { key: String, message: String },
}

/// What a signature proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verified {
    /// Made by the key of `principal`, over these bytes, in [`NAMESPACE`].
    Good { principal: String },
    /// No key of the allowed-signers file made it (or it is no signature at all).
    NotAllowed { message: String },
    /// Made by a listed key, and not over these bytes (or not in this namespace).
    Bad { message: String },
}

/// The `ssh-keygen` to run: the system's first, as every program we start is found
/// (`find_tool`); `inside` are the repository's directories, whose programs never count.
pub fn ssh_keygen(inside: &[PathBuf]) -> Result<PathBuf, SshError> {
    super::env::find_tool(
        "ssh-keygen",
        std::env::var_os("PATH").as_deref(),
        std::env::var_os("GIT_EXEC_PATH").as_deref(),
        inside,
    )
    .ok_or(SshError::Missing)
}

/// Signs `payload` with the key at `key` (`ssh-keygen -Y sign -f KEY -n git-orchestrate`),
/// returning the armored signature. stdin and stderr stay the user's, and the program stays in
/// our process group (the terminal's foreground one): a passphrase prompt or a security key's
/// "touch your key" reaches the person at the terminal.
pub fn sign(program: &Path, key: &Path, payload: &[u8]) -> Result<String, SshError> {
    sign_in(program, key, NAMESPACE, payload)
}

/// As [`sign`], in `namespace` (`attest` signs its verdicts in [`ATTEST_NAMESPACE`]).
pub fn sign_in(
    program: &Path,
    key: &Path,
    namespace: &str,
    payload: &[u8],
) -> Result<String, SshError> {
    // It runs in the temporary directory: a relative path is the user's, from here.
    let key = &std::path::absolute(key)?;
    // Whoever called us checked it too; a FIFO or a device here would hold ssh-keygen (and
    // us, waiting for it) until the timeout.
    crate::input::check_key_file(key).map_err(|e| SshError::SignFailed {
        key: key.display().to_string(),
        message: e.problem(),
    })?;
    let dir = private_dir()?;
    let data = dir.path().join("answer");
    std::fs::write(&data, payload)?;
    let mut cmd = Command::new(program);
    cmd.arg("-Y")
        .arg("sign")
        .arg("-q")
        .arg("-f")
        .arg(key)
        .arg("-n")
        .arg(namespace)
        .arg(&data)
        .current_dir(dir.path())
        .stdin(Stdio::inherit())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    sanitise(&mut cmd, true);
    let out = finish(cmd, None, SIGN_TIMEOUT, false)?;
    let failed = |message: String| SshError::SignFailed {
        key: key.display().to_string(),
        message,
    };
    if out.code != Some(0) {
        return Err(failed(match out.code {
            Some(code) => format!("it exited with {code}; its message is above"),
            None => "it was ended by a signal".into(),
        }));
    }
    let signature = std::fs::read_to_string(dir.path().join("answer.sig"))
        .map_err(|e| failed(format!("its signature file cannot be read: {e}")))?;
    Ok(signature)
}

/// Checks that `signature` was made over `payload` in [`NAMESPACE`] by a key that
/// `allowed_signers` (the file's bytes) lists: `ssh-keygen -Y find-principals`, then
/// `ssh-keygen -Y verify` as each principal found.
pub fn verify(
    program: &Path,
    allowed_signers: &[u8],
    signature: &str,
    payload: &[u8],
) -> Result<Verified, SshError> {
    verify_in(program, allowed_signers, NAMESPACE, signature, payload)
}

/// As [`verify`], in `namespace`.
pub fn verify_in(
    program: &Path,
    allowed_signers: &[u8],
    namespace: &str,
    signature: &str,
    payload: &[u8],
) -> Result<Verified, SshError> {
    let dir = private_dir()?;
    let allowed = dir.path().join("allowed_signers");
    let sig = dir.path().join("answer.sig");
    std::fs::write(&allowed, allowed_signers)?;
    std::fs::write(&sig, signature)?;
    let run = |args: &[&OsStr], stdin: Option<&[u8]>| -> Result<Finished, SshError> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(dir.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        sanitise(&mut cmd, false);
        finish(cmd, stdin, VERIFY_TIMEOUT, true)
    };
    let found = run(
        &[
            "-Y".as_ref(),
            "find-principals".as_ref(),
            "-f".as_ref(),
            allowed.as_os_str(),
            "-s".as_ref(),
            sig.as_os_str(),
        ],
        None,
    )?;
    let principals = parse_principals(&found.stdout);
    if found.code != Some(0) || principals.is_empty() {
        return Ok(Verified::NotAllowed {
            message: found.message(),
        });
    }
    let mut last = String::new();
    for principal in principals {
        let checked = run(
            &[
                "-Y".as_ref(),
                "verify".as_ref(),
                "-f".as_ref(),
                allowed.as_os_str(),
                "-I".as_ref(),
                principal.as_ref(),
                "-n".as_ref(),
                namespace.as_ref(),
                "-s".as_ref(),
                sig.as_os_str(),
            ],
            Some(payload),
        )?;
        if checked.code == Some(0) {
            return Ok(Verified::Good { principal });
        }
        last = checked.message();
    }
    Ok(Verified::Bad { message: last })
}

/// The principals `ssh-keygen -Y find-principals` printed, one a line. A line that could
/// not be one principal of an allowed-signers file (empty, or holding a space or a control
/// character) is left out: a principal goes into a commit trailer, which is one line.
pub fn parse_principals(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty() && !line.chars().any(|c| c.is_whitespace() || c.is_control())
        })
        .map(str::to_string)
        .collect()
}

/// A 0700 directory of our own, removed when dropped.
fn private_dir() -> Result<tempfile::TempDir, SshError> {
    Ok(tempfile::Builder::new()
        .prefix("git-orchestrate-ssh-")
        .tempdir()?)
}

/// `ssh-keygen` gets a small environment of known variables: none of the caller's that load
/// code into it. Signing keeps what finds the user's agent, askpass program and security-key
/// middleware.
fn sanitise(cmd: &mut Command, signing: bool) {
    const KEPT: &[&str] = &["HOME", "USER", "LOGNAME", "TERM", "LANG", "TMPDIR"];
    const SIGNING: &[&str] = &[
        "SSH_AUTH_SOCK",
        "SSH_ASKPASS",
        "SSH_ASKPASS_REQUIRE",
        "SSH_SK_PROVIDER",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
    ];
    cmd.env_clear();
    let keep = KEPT
        .iter()
        .chain(if signing { SIGNING } else { &[] })
        .copied();
    for key in keep {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.env("PATH", "/usr/bin:/bin").env("LC_ALL", "C");
}

/// How a run ended and what it printed.
struct Finished {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Finished {
    /// What the program said about its failure: the last lines of stderr.
    fn message(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let text = text.trim();
        match (text.is_empty(), self.code) {
            (false, _) => text.lines().last().unwrap_or(text).to_string(),
            (true, Some(code)) => format!("ssh-keygen exited with {code}"),
            (true, None) => "ssh-keygen was ended by a signal".into(),
        }
    }
}

/// Starts `cmd`, feeds it `stdin`, and waits at most `timeout`; then it is killed (with its
/// process group when `own_group`: nothing it started outlives it).
fn finish(
    mut cmd: Command,
    stdin: Option<&[u8]>,
    timeout: Duration,
    own_group: bool,
) -> Result<Finished, SshError> {
    use std::io::Read as _;
    use std::os::unix::process::CommandExt as _;
    if own_group {
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let input = input.to_vec();
        // Apart from us: a program that prints before reading all its input must not
        // deadlock against our write.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(OUTPUT_CAP).read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let (done, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let status = match waited.recv_timeout(timeout) {
        Ok(status) => status?,
        Err(_) => {
            if own_group {
                super::group::kill_group(pid);
            } else if let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            let _ = waited.recv();
            return Err(SshError::Timeout(timeout));
        }
    };
    if own_group {
        // Anything it left running in its group is ended with it.
        super::group::kill_group(pid);
    }
    Ok(Finished {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_one_plain_word_a_line() {
        let table: &[(&str, &[&str])] = &[
            ("alice@example.com\n", &["alice@example.com"]),
            ("a\nb\n", &["a", "b"]),
            ("", &[]),
            ("\n\n", &[]),
            ("  spaced  \n", &["spaced"]),
            ("two words\nok\n", &["ok"]),
            ("bell\u{7}\n", &[]),
            ("crlf\r\n", &["crlf"]),
        ];
        for (stdout, expected) in table {
            assert_eq!(parse_principals(stdout.as_bytes()), *expected, "{stdout:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_parsed_principal_is_always_one_trailer_word(bytes: Vec<u8>) {
            for principal in parse_principals(&bytes) {
                proptest::prop_assert!(!principal.is_empty());
                proptest::prop_assert!(!principal.contains(char::is_whitespace));
                proptest::prop_assert!(!principal.contains(char::is_control));
            }
        }
    }
}
