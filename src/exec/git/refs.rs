//! git's own ref commands for the store, in a repository whose refs gix cannot read
//! (reftable): the store's [`RefCommands`] seam, run as every other git command of ours is.

use std::process::Stdio;

use crate::store::{RefCommandFailure, RefCommands};

use super::Git;

impl RefCommands for Git {
    fn git(
        &self,
        args: &[&str],
        input: &[u8],
        env: &[(&str, String)],
    ) -> Result<Vec<u8>, RefCommandFailure> {
        use std::io::Write as _;
        let (mut cmd, _) = self.command(args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let failed = |e: std::io::Error| RefCommandFailure {
            status: None,
            message: e.to_string(),
        };
        let mut child = cmd.spawn().map_err(failed)?;
        if let Some(mut stdin) = child.stdin.take() {
            // Dropped at the end of this block: git sees the end of its input.
            stdin.write_all(input).map_err(failed)?;
        }
        let out = child.wait_with_output().map_err(failed)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(RefCommandFailure {
                status: out.status.code(),
                message: String::from_utf8_lossy(&out.stderr).into_owned(),
            })
        }
    }
}
