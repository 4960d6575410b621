//! The git porcelain `sync` needs: `ls-remote`, `fetch --refmap=`, `push --atomic --porcelain`
//! with leases, `merge --ff-only`, `reset --keep`, `branch --track`, and `worktree list` for
//! the branches checked out.

use std::path::PathBuf;

use super::{Git, GitError, is_full_object_id, output};

/// How many times a fetch that lost a remote-tracking ref to a concurrent fetch of the same
/// repository is run again.
const FETCH_TRIES: u64 = 5;

impl Git {
    /// The refs on `remote` that match `patterns` (`git ls-remote`), as `(name, id)`.
    pub fn ls_remote(
        &self,
        remote: &str,
        patterns: &[&str],
    ) -> Result<Vec<(String, String)>, GitError> {
        let mut args = vec!["ls-remote", "--quiet", remote];
        args.extend_from_slice(patterns);
        Ok(self
            .run(args)?
            .lines()
            .filter_map(|line| {
                let (id, name) = line.split_once('\t')?;
                Some((name.to_string(), id.to_string()))
            })
            .collect())
    }

    /// Fetches exactly `refspecs` from `remote`. `--refmap=` keeps git from also updating
    /// whatever the configured refspecs map the same sources to: with a `refs/*:refs/*`
    /// mapping configured, that would write onto local state.
    pub fn fetch(&self, remote: &str, refspecs: &[String]) -> Result<(), GitError> {
        self.fetch_hiding(remote, refspecs, &[])
    }

    /// [`Self::fetch`], with the refs under `hidden` left out of the connectivity check that
    /// follows it (`fetch.hideRefs`, git 2.44 on; an older git ignores the setting): that
    /// check walks back from every local ref as the boundary of what is already here, and a
    /// ref whose history is large but never fetched onto (the archive, docs/refs.md) would
    /// make every fetch cost more as it grows. A hidden ref is still fetched and updated.
    pub fn fetch_hiding(
        &self,
        remote: &str,
        refspecs: &[String],
        hidden: &[String],
    ) -> Result<(), GitError> {
        let hides: Vec<String> = hidden
            .iter()
            .map(|prefix| format!("fetch.hideRefs={prefix}"))
            .collect();
        let mut args: Vec<&str> = Vec::new();
        for hide in &hides {
            args.extend(["-c", hide.as_str()]);
        }
        args.extend([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            // Only under the refspecs' own destinations: remote-tracking copies.
            "--prune",
            "--refmap=",
            remote,
        ]);
        args.extend(refspecs.iter().map(String::as_str));
        // Two workflows of one clone fetch at once (one per worktree): git updates each
        // remote-tracking copy by compare-and-swap, and the slower fetch fails with "cannot
        // lock ref … is at X but expected Y" though the faster one wrote what it fetched.
        // It only writes remote-tracking copies, so it is run again (tests/cli/team.rs).
        let mut attempt = 0;
        loop {
            match self.run(args.iter().copied()) {
                Err(e) if attempt < FETCH_TRIES && e.stderr.contains("cannot lock ref") => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20 * attempt));
                }
                done => return done.map(drop),
            }
        }
    }

    /// `git push --atomic --porcelain`: every update lands or none does. Each lease is
    /// `(ref, expected id)`, `None` meaning the ref must not exist on the remote; refs
    /// without a lease are pushed without force. The error carries git's whole answer; a
    /// push that succeeds returns what hooks and the host said (stderr), if anything.
    pub fn push_atomic(
        &self,
        remote: &str,
        leases: &[(String, Option<String>)],
        refspecs: &[String],
    ) -> Result<String, GitError> {
        self.push_atomic_as(remote, leases, refspecs, false)
    }

    /// [`Self::push_atomic`]; with `signed`, as a signed push (`git push --signed`: a push
    /// certificate signed with the user's `user.signingkey`, which a server hook checks).
    pub fn push_atomic_as(
        &self,
        remote: &str,
        leases: &[(String, Option<String>)],
        refspecs: &[String],
        signed: bool,
    ) -> Result<String, GitError> {
        let mut args = vec![
            "push".to_string(),
            "--atomic".to_string(),
            "--porcelain".to_string(),
        ];
        if signed {
            args.push("--signed".to_string());
        }
        for (reference, expected) in leases {
            args.push(format!(
                "--force-with-lease={reference}:{}",
                expected.as_deref().unwrap_or_default()
            ));
        }
        args.push(remote.to_string());
        args.extend(refspecs.iter().cloned());
        let (cmd, shown) = self.command(&args);
        let out = output(cmd, &shown)?;
        if out.status.success() {
            // Hooks' words; the host's chatter ("remote: Create a pull request …") is not.
            let said: Vec<&str> = std::str::from_utf8(&out.stderr)
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with("remote:"))
                .collect();
            return Ok(said.join("\n"));
        }
        // What the host said (`remote: …`, `fatal: …`) is on stderr, the verdict on each ref
        // on stdout (`!\t<src>:<dst>\t[remote rejected] (why)`).
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = stderr
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.contains("failed to push some refs"))
            .map(str::to_string)
            .chain(stdout.lines().filter_map(|l| {
                let mut fields = l.strip_prefix("!\t")?.split('\t');
                let (_, target) = fields.next()?.split_once(':')?;
                Some(format!("{target}: {}", fields.next().unwrap_or("refused")))
            }))
            .collect::<Vec<_>>()
            .join("\n");
        Err(GitError {
            command: shown,
            status: out.status.code(),
            stderr: said,
        })
    }

    /// The branches checked out in any worktree of this repository (`refs/heads/…` names
    /// shortened), with the worktree's path.
    pub fn checked_out_branches(&self) -> Result<Vec<(String, PathBuf)>, GitError> {
        let listing = self.run(["worktree", "list", "--porcelain", "-z"])?;
        let mut out = Vec::new();
        let mut path = None;
        for field in listing.split('\0') {
            if let Some(p) = field.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let (Some(branch), Some(p)) = (
                field
                    .strip_prefix("branch ")
                    .and_then(crate::store::branch_of_ref),
                &path,
            ) {
                out.push((branch.to_string(), p.clone()));
            }
        }
        Ok(out)
    }

    /// Fast-forwards the checked-out branch to `commit`; git refuses when that is not a
    /// fast-forward or would overwrite local changes.
    pub fn merge_ff_only(&self, commit: &str) -> Result<(), GitError> {
        self.run(["merge", "--ff-only", "--quiet", "--end-of-options", commit])
            .map(drop)
    }

    /// Moves the checked-out branch to `commit`, a full object id, keeping local changes
    /// (`git reset --keep`); git refuses when a changed file would be overwritten.
    pub fn reset_keep(&self, commit: &str) -> Result<(), GitError> {
        self.reset("--keep", commit)
    }

    /// `git reset <mode> <commit>`, `commit` a full object id.
    fn reset(&self, mode: &str, commit: &str) -> Result<(), GitError> {
        // git 2.39 (Debian 12's) rejects `--end-of-options` in `reset` ("must come before
        // non-option arguments") wherever it stands; newer gits accept it. A full object id cannot be an option,
        // and the `--` after it keeps a file of that name from making it ambiguous.
        if !is_full_object_id(commit) {
            return Err(GitError {
                command: format!("git reset {mode} {commit}"),
                status: None,
                stderr: "it takes a full commit id".to_string(),
            });
        }
        self.run(["reset", mode, "--quiet", commit, "--"]).map(drop)
    }

    /// Creates `branch` at `start` with `start` as its upstream.
    pub fn create_tracking_branch(&self, branch: &str, start: &str) -> Result<(), GitError> {
        self.run([
            "branch",
            "--quiet",
            "--track",
            "--end-of-options",
            branch,
            start,
        ])
        .map(drop)
    }
}
