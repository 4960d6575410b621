//! git porcelain the orchestrator performs on the working tree (checkout, pull, add, commit),
//! through the `git` CLI so that the user's hooks, config and credentials apply.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed, with what git said.
#[derive(Debug, thiserror::Error)]
pub struct GitError {
    pub command: String,
    pub status: Option<i32>,
    pub stderr: String,
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(code) => write!(f, "`{}` failed (exit {code})", self.command)?,
            None => write!(f, "`{}` could not run", self.command)?,
        }
        let said = self.stderr.trim();
        if !said.is_empty() {
            write!(f, ":\n{said}")?;
        }
        Ok(())
    }
}

/// Every file whose working-tree state differs from the index (`-z`, one entry each),
/// without refreshing the index (a hook runs while git holds its lock).
const STATUS: [&str; 6] = [
    "--no-optional-locks",
    "status",
    "--porcelain",
    "-z",
    "--untracked-files=all",
    "--no-renames",
];

/// Runs git in one working tree.
#[derive(Clone, Debug)]
pub struct Git {
    workdir: PathBuf,
    /// The `git` program, by absolute path (docs/integrity.md, "Hermetic verification").
    program: PathBuf,
    /// Files (from the top of the working tree) that are never part of the agent's work:
    /// [`Git::add_all`] and [`Git::worktree_tree`] leave them as the index has them.
    left_out: Vec<String>,
}

impl Git {
    /// git in `workdir`, the program found as [`super::env::find_git`] finds it for commands
    /// run there.
    pub fn new(workdir: impl Into<PathBuf>) -> Self {
        let workdir = workdir.into();
        let program = super::env::find_git_for(&[&workdir]);
        Git {
            workdir,
            program,
            left_out: Vec::new(),
        }
    }

    /// git in `workdir`, running `program`.
    pub fn with_program(workdir: impl Into<PathBuf>, program: impl Into<PathBuf>) -> Self {
        Git {
            workdir: workdir.into(),
            program: program.into(),
            left_out: Vec::new(),
        }
    }

    /// This git, leaving `paths` out of the agent's work ([`Git::add_all`],
    /// [`Git::worktree_tree`]).
    pub fn leaving_out(mut self, paths: impl IntoIterator<Item = String>) -> Self {
        self.left_out = paths.into_iter().collect();
        self
    }

    /// `add --all` for the whole working tree, the files left out excepted.
    fn add_all_args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["add", "--all", "--", ":/"].map(String::from).to_vec();
        args.extend(
            self.left_out
                .iter()
                .map(|path| format!(":(top,literal,exclude){path}")),
        );
        args
    }

    /// Which of the files left out differ from HEAD in the working tree (changed, or new and
    /// not ignored): what a checkpoint leaves out.
    pub fn left_out_changes(&self) -> Result<Vec<String>, GitError> {
        if self.left_out.is_empty() {
            return Ok(Vec::new());
        }
        let mut args: Vec<String> = STATUS
            .iter()
            .chain(&["--"])
            .map(|a| a.to_string())
            .collect();
        args.extend(
            self.left_out
                .iter()
                .map(|path| format!(":(top,literal){path}")),
        );
        let listing = self.run(args)?;
        Ok(paths(&listing)
            .into_iter()
            .map(|entry| entry.get(3..).unwrap_or_default().to_string())
            .collect())
    }

    /// The `git` program every command runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    fn command<I, S>(&self, args: I) -> (Command, String)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let shown = format!(
            "git {}",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut cmd = Command::new(&self.program);
        cmd.args(&args)
            .current_dir(&self.workdir)
            .stdin(Stdio::null())
            // Never wait for a password prompt nobody will answer.
            .env("GIT_TERMINAL_PROMPT", "0")
            // What is read is what is stored: a replace ref would show other objects in
            // place of the ones the workflow names (docs/integrity.md).
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            // git runs the helpers of its exec path; the caller's is not ours to follow.
            .env_remove("GIT_EXEC_PATH");
        // Nor is a library or a shell start-up file the caller slipped in for git, its hooks
        // and filters to load.
        for var in super::env::injecting_vars() {
            cmd.env_remove(var);
        }
        (cmd, shown)
    }

    /// Runs git and returns its stdout, or the failure with stderr.
    pub fn run<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (cmd, shown) = self.command(args);
        run(cmd, shown)
    }

    fn run_with_index<I, S>(&self, index: &Path, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (mut cmd, shown) = self.command(args);
        cmd.env("GIT_INDEX_FILE", index);
        run(cmd, shown)
    }

    /// Tracked files with changes, staged or not (`git status --porcelain`), untracked ignored:
    /// those travel along with a checkout harmlessly.
    pub fn tracked_changes(&self) -> Result<String, GitError> {
        self.run(["status", "--porcelain", "--untracked-files=no"])
    }

    pub fn untracked_files(&self) -> Result<Vec<String>, GitError> {
        Ok(paths(&self.run([
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
        ])?))
    }

    /// Files whose working-tree state is not what the index (`GIT_INDEX_FILE`, when git set
    /// it for a hook) holds: tracked files changed since they were staged, and untracked
    /// files that are not ignored, the files left out excepted. One `git status`, both at
    /// once.
    pub fn unstaged_files(&self) -> Result<Vec<String>, GitError> {
        // A hook runs while git holds the index lock: status must not try to refresh it.
        let listing = self.run(STATUS)?;
        Ok(paths(&listing)
            .into_iter()
            .filter(|entry| {
                let worktree = entry.as_bytes().get(1).copied();
                entry.starts_with("??") || !matches!(worktree, Some(b' ') | None)
            })
            .map(|entry| entry.get(3..).unwrap_or_default().to_string())
            // The files left out are never part of a commit of the agent's work.
            .filter(|path| !self.left_out.contains(path))
            .collect())
    }

    /// Reverts tracked files and the index to HEAD. Untracked files are left alone.
    pub fn reset_hard(&self) -> Result<(), GitError> {
        self.run(["reset", "--hard", "--quiet", "HEAD"]).map(drop)
    }

    pub fn checkout(&self, branch: &str) -> Result<(), GitError> {
        self.run(["checkout", "--quiet", branch]).map(drop)
    }

    pub fn checkout_new_branch(&self, branch: &str, start: &str) -> Result<(), GitError> {
        self.run(["checkout", "--quiet", "-b", branch, start])
            .map(drop)
    }

    pub fn pull_ff_only(&self, remote: &str, branch: &str) -> Result<(), GitError> {
        self.run(["pull", "--quiet", "--ff-only", remote, branch])
            .map(drop)
    }

    pub fn add_all(&self) -> Result<(), GitError> {
        self.run(self.add_all_args()).map(drop)
    }

    /// The tree of the index, as `git write-tree` writes it. It takes the index's lock; a hook
    /// manager's own git call (lefthook refreshes the index around each hook) may hold it for
    /// a moment, so a held lock is waited out, briefly.
    pub fn write_tree(&self) -> Result<String, GitError> {
        let mut attempts = 0;
        loop {
            match self.run(["write-tree"]) {
                Ok(tree) => return Ok(tree.trim().to_string()),
                Err(e) if attempts < 40 && e.stderr.contains("index.lock") => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The tree `git add --all && git write-tree` would produce (the files left out as the
    /// index has them), computed in a scratch copy of the index so the user's staging area is
    /// left alone.
    pub fn worktree_tree(&self, index: &Path) -> Result<String, GitError> {
        // Beside the index, inside the git directory: a command killed mid-way leaves its
        // copy where the next one clears it, not in the system's temp dir.
        let dir = index.parent().unwrap_or(Path::new(".")).join(SCRATCH_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create a scratch index", e))?;
        remove_abandoned_scratch(&dir);
        let scratch = tempfile::Builder::new()
            .prefix(&format!("index-{}-", std::process::id()))
            .tempfile_in(&dir)
            .map_err(|e| io_error("create a scratch index", e))?;
        if index.exists() {
            std::fs::copy(index, scratch.path()).map_err(|e| io_error("copy the index", e))?;
            // git re-reads a file changed in the same instant the index was written only if it
            // can tell ("racy git", by the index's mtime). A copy made now would look newer
            // than such a change, and the change would be missed: the copy keeps the mtime.
            let modified = std::fs::metadata(index)
                .and_then(|m| m.modified())
                .map_err(|e| io_error("read the index's time", e))?;
            std::fs::File::options()
                .write(true)
                .open(scratch.path())
                .and_then(|f| f.set_modified(modified))
                .map_err(|e| io_error("keep the index's time", e))?;
        } else {
            // An empty file is not a valid index; git treats a missing one as empty.
            std::fs::remove_file(scratch.path())
                .map_err(|e| io_error("prepare a scratch index", e))?;
        }
        self.run_with_index(scratch.path(), self.add_all_args())?;
        let tree = self.run_with_index(scratch.path(), ["write-tree"])?;
        Ok(tree.trim().to_string())
    }

    /// `git reset --soft REV`: the branch moves, the index and the working tree stay.
    pub fn reset_soft(&self, rev: &str) -> Result<(), GitError> {
        self.run(["reset", "--soft", "--quiet", rev]).map(drop)
    }

    /// `path` (from the top of the working tree) as `rev` has it, in the index and the
    /// working tree.
    pub fn restore_path(&self, rev: &str, path: &str) -> Result<(), GitError> {
        let spec = format!(":(top,literal){path}");
        self.run(["checkout", "--quiet", rev, "--", spec.as_str()])
            .map(drop)
    }

    /// Stages `path` (from the top of the working tree) alone.
    pub fn add_path(&self, path: &str) -> Result<(), GitError> {
        let spec = format!(":(top,literal){path}");
        self.run(["add", "--", spec.as_str()]).map(drop)
    }

    /// Commits the index with `message` (hooks run) and returns the new HEAD. Without an
    /// identity configured, commits as the fixed git-orchestrate identity instead of failing.
    pub fn commit(
        &self,
        message: &str,
        allow_empty: bool,
        has_identity: bool,
        hook_env: &[(&str, &str)],
    ) -> Result<String, GitError> {
        let mut args = vec!["commit", "--quiet", "-m", message];
        if allow_empty {
            args.push("--allow-empty");
        }
        let (mut cmd, shown) = self.command(args);
        with_identity(&mut cmd, has_identity);
        // For the hooks the commit runs: they see git's environment, not our arguments.
        cmd.envs(hook_env.iter().copied());
        run(cmd, shown)?;
        Ok(self.run(["rev-parse", "HEAD"])?.trim().to_string())
    }

    /// The commit `rev` names.
    pub fn rev_parse(&self, rev: &str) -> Result<String, GitError> {
        Ok(self
            .run([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ])?
            .trim()
            .to_string())
    }

    /// The tree of commit `rev`.
    pub fn tree_of(&self, rev: &str) -> Result<String, GitError> {
        Ok(self
            .run([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{tree}}"),
            ])?
            .trim()
            .to_string())
    }

    pub fn merge_base(&self, a: &str, b: &str) -> Result<String, GitError> {
        Ok(self.run(["merge-base", a, b])?.trim().to_string())
    }

    /// How many commits `range` (`a..b`) holds.
    pub fn count(&self, range: &str) -> Result<u64, GitError> {
        let out = self.run(["rev-list", "--count", range])?;
        out.trim().parse().map_err(|_| GitError {
            command: format!("git rev-list --count {range}"),
            status: Some(0),
            stderr: format!("unexpected output {:?}", out.trim()),
        })
    }

    /// A commit message as git cleans it up: comment lines (`core.commentChar`) removed,
    /// blank lines squeezed (`git stripspace --strip-comments`).
    pub fn strip_comments(&self, message: &str) -> Result<String, GitError> {
        use std::io::Write as _;
        let (mut cmd, shown) = self.command(["stripspace", "--strip-comments"]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let failed = |e: std::io::Error| GitError {
            command: shown.clone(),
            status: None,
            stderr: e.to_string(),
        };
        let mut child = cmd.spawn().map_err(failed)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(message.as_bytes()).map_err(failed)?;
        }
        let out = child.wait_with_output().map_err(failed)?;
        if !out.status.success() {
            return Err(GitError {
                command: shown,
                status: out.status.code(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Where git keeps `name` for this working tree (`git rev-parse --git-path`): honours
    /// `core.hooksPath` for `hooks`, and linked worktrees. Relative paths are made absolute.
    pub fn git_path(&self, name: &str) -> Result<PathBuf, GitError> {
        let path = PathBuf::from(self.run(["rev-parse", "--git-path", name])?.trim_end());
        Ok(if path.is_absolute() {
            path
        } else {
            self.workdir.join(path)
        })
    }

    /// The git directory all worktrees share (`git rev-parse --git-common-dir`), absolute.
    pub fn common_dir(&self) -> Result<PathBuf, GitError> {
        let path = PathBuf::from(self.run(["rev-parse", "--git-common-dir"])?.trim_end());
        Ok(if path.is_absolute() {
            path
        } else {
            self.workdir.join(path)
        })
    }

    /// Every value of a multi-valued config key, in order.
    pub fn config_all(&self, key: &str) -> Result<Vec<String>, GitError> {
        match self.run(["config", "--get-all", key]) {
            Ok(values) => Ok(values.lines().map(str::to_string).collect()),
            Err(e) if e.status == Some(1) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The configured remotes.
    pub fn remotes(&self) -> Result<Vec<String>, GitError> {
        Ok(self.run(["remote"])?.lines().map(str::to_string).collect())
    }

    /// `git version 2.47.3` → `2.47.3`; see [`MIN_VERSION`].
    pub fn version(&self) -> Result<String, GitError> {
        Ok(self
            .run(["version"])?
            .trim()
            .trim_start_matches("git version ")
            .to_string())
    }

    /// A config value as git resolves it, or `None` when it is not set.
    pub fn config(&self, key: &str) -> Result<Option<String>, GitError> {
        match self.run(["config", "--get", key]) {
            Ok(value) => Ok(Some(value.trim_end().to_string())),
            Err(e) if e.status == Some(1) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The commits `revs` select (as `git log` takes them: `a..b`, `x --not --remotes`),
    /// newest first, each with its tree and message.
    pub fn commits(&self, revs: &[&str]) -> Result<Vec<LoggedCommit>, GitError> {
        let mut args = vec!["log", "-z", "--format=%H%x01%T%x01%B"];
        args.extend_from_slice(revs);
        args.push("--");
        Ok(self
            .run(args)?
            .split('\0')
            .filter(|entry| !entry.is_empty())
            .filter_map(|entry| {
                let mut parts = entry.splitn(3, '\x01');
                Some(LoggedCommit {
                    commit: parts.next()?.trim_start_matches('\n').to_string(),
                    tree: parts.next()?.to_string(),
                    message: parts.next()?.to_string(),
                })
            })
            .collect())
    }

    /// [`Git::commits`] for revisions a person gave: after `--end-of-options`, so that none
    /// of them is taken as an option.
    pub fn commits_of_revisions(&self, revs: &[&str]) -> Result<Vec<LoggedCommit>, GitError> {
        let mut args = vec!["--end-of-options"];
        args.extend_from_slice(revs);
        self.commits(&args)
    }

    pub fn subject(&self, rev: &str) -> Result<String, GitError> {
        Ok(self
            .run(["log", "-1", "--format=%s", rev])?
            .trim_end()
            .to_string())
    }

    pub fn parents(&self, rev: &str) -> Result<Vec<String>, GitError> {
        let line = self.run(["rev-list", "--parents", "-n", "1", rev])?;
        Ok(line
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect())
    }

    /// The paths matching `pathspecs` that differ between two trees (or commits).
    pub fn changed_files_in(
        &self,
        a: &str,
        b: &str,
        pathspecs: &[String],
    ) -> Result<Vec<String>, GitError> {
        let mut args = vec!["diff", "-z", "--name-only", "--no-renames", a, b, "--"];
        args.extend(pathspecs.iter().map(String::as_str));
        Ok(paths(&self.run(args)?))
    }

    /// The paths that differ between two commits.
    pub fn changed_files(&self, a: &str, b: &str) -> Result<Vec<String>, GitError> {
        Ok(paths(&self.run([
            "diff",
            "-z",
            "--name-only",
            "--no-renames",
            a,
            b,
        ])?))
    }

    /// Each path that differs between trees (or commits) `a` and `b`, with how: `added`,
    /// `removed` or `changed` (from `a` to `b`).
    pub fn tree_changes(&self, a: &str, b: &str) -> Result<Vec<(&'static str, String)>, GitError> {
        let listing = self.run(["diff", "-z", "--name-status", "--no-renames", a, b])?;
        let mut fields = listing.split('\0').filter(|f| !f.is_empty());
        let mut out = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let how = match status.chars().next() {
                Some('A') => "added",
                Some('D') => "removed",
                _ => "changed",
            };
            out.push((how, path.to_string()));
        }
        Ok(out)
    }

    /// The patch from `a` to `b`, as a reviewer reads it.
    pub fn diff(&self, a: &str, b: &str) -> Result<String, GitError> {
        self.run(["diff", "--no-color", "--no-ext-diff", a, b])
    }

    /// A file as committed in `rev`, or `None` when it is not there.
    pub fn show(&self, rev: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let (cmd, shown) = self.command(["show", &format!("{rev}:{path}")]);
        match run_bytes(cmd, shown) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.status == Some(128) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// True when `a` is an ancestor of (or equal to) `b`.
    pub fn is_ancestor(&self, a: &str, b: &str) -> Result<bool, GitError> {
        match self.run(["merge-base", "--is-ancestor", a, b]) {
            Ok(_) => Ok(true),
            Err(e) if e.status == Some(1) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `git merge --no-ff --no-edit BRANCH` into the current branch.
    /// Merges `commit` into the checked-out branch with a merge commit titled `message`.
    pub fn merge_no_ff(
        &self,
        commit: &str,
        message: &str,
        has_identity: bool,
    ) -> Result<MergeOutcome, GitError> {
        // No hook runs: a `post-merge` hook could move main on to a commit nobody checked,
        // which would then be recorded as the workflow's merge.
        let (mut cmd, shown) = self.command([
            "-c",
            "core.hooksPath=/dev/null",
            "merge",
            "--no-ff",
            "--no-verify",
            "--quiet",
            "-m",
            message,
            commit,
        ]);
        with_identity(&mut cmd, has_identity);
        match run(cmd, shown) {
            Ok(_) => Ok(MergeOutcome::Merged),
            Err(e) => {
                let conflicted = self.run(["ls-files", "-z", "--unmerged"])?;
                if conflicted.is_empty() {
                    Err(e)
                } else {
                    let mut files: Vec<String> = paths(&conflicted)
                        .iter()
                        .filter_map(|l| l.split_once('\t').map(|(_, path)| path.to_string()))
                        .collect();
                    files.dedup();
                    Ok(MergeOutcome::Conflict(files))
                }
            }
        }
    }

    /// The tree `git merge` would make of `ours` and `theirs` (`git merge-tree --write-tree`),
    /// or `None` when they conflict.
    pub fn merge_tree(&self, ours: &str, theirs: &str) -> Result<Option<String>, GitError> {
        match self.run([
            "merge-tree",
            "--write-tree",
            "--end-of-options",
            ours,
            theirs,
        ]) {
            Ok(out) => Ok(out.lines().next().map(|l| l.trim().to_string())),
            Err(e) if e.status == Some(1) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn merge_abort(&self) -> Result<(), GitError> {
        self.run(["merge", "--abort"]).map(drop)
    }

    /// Adds one value to a multi-valued config key (`git config --add`).
    pub fn config_add(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--add", key, value]).map(drop)
    }

    /// Removes the values of `key` that are exactly `value`.
    pub fn config_unset_value(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--fixed-value", "--unset-all", key, value])
            .map(drop)
    }

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
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            // Only under the refspecs' own destinations: remote-tracking copies.
            "--prune",
            "--refmap=",
            remote,
        ];
        args.extend(refspecs.iter().map(String::as_str));
        self.run(args).map(drop)
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
        let mut args = vec![
            "push".to_string(),
            "--atomic".to_string(),
            "--porcelain".to_string(),
        ];
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

    /// `git branch -d`: refuses to delete a branch that is not merged.
    pub fn delete_branch(&self, branch: &str) -> Result<(), GitError> {
        self.run(["branch", "--quiet", "-d", branch]).map(drop)
    }
}

/// Where scratch copies of the index live, relative to the index's directory (`.git/`).
pub const SCRATCH_DIR: &str = "orchestrator/scratch";

/// Removes scratch indexes whose command is gone: named `index-<pid>-…`, with no live
/// process of that id, or older than an hour (a reused pid). Best effort: a copy that
/// cannot be removed now is removed by a later run.
/// A temporary linked worktree, detached at a commit: removed (and pruned from git's list)
/// when dropped, whatever happened meanwhile. One left by a killed process is removed by
/// the next [`Git::temp_worktree`].
pub struct TempWorktree<'a> {
    git: &'a Git,
    path: PathBuf,
}

impl TempWorktree<'_> {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempWorktree<'_> {
    fn drop(&mut self) {
        remove_worktree(self.git, &self.path);
    }
}

fn remove_worktree(git: &Git, path: &Path) {
    let _ = git.run([
        OsStr::new("worktree"),
        OsStr::new("remove"),
        OsStr::new("--force"),
        path.as_os_str(),
    ]);
    let _ = std::fs::remove_dir_all(path);
    let _ = git.run(["worktree", "prune"]);
}

impl Git {
    /// A fresh linked worktree detached at `commit` in a new directory under `parent` (inside
    /// the git directory), with no file checked out: the caller writes the tree it verifies
    /// from the objects (docs/integrity.md, "Hermetic verification"). No hook runs.
    pub fn temp_worktree(&self, parent: &Path, commit: &str) -> Result<TempWorktree<'_>, GitError> {
        std::fs::create_dir_all(parent)
            .map_err(|e| io_error("create a directory for a worktree", e))?;
        if let Ok(entries) = std::fs::read_dir(parent) {
            for entry in entries.flatten() {
                let pid = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix("wt-"))
                    .and_then(|n| n.split('-').next())
                    .and_then(|p| p.parse::<i32>().ok());
                if pid.is_some_and(|pid| !process_alive(pid)) {
                    remove_worktree(self, &entry.path());
                }
            }
        }
        let dir = tempfile::Builder::new()
            .prefix(&format!("wt-{}-", std::process::id()))
            .tempdir_in(parent)
            .map_err(|e| io_error("create a directory for a worktree", e))?
            .keep();
        let worktree = TempWorktree {
            git: self,
            path: dir,
        };
        self.run([
            OsStr::new("-c"),
            OsStr::new("core.hooksPath=/dev/null"),
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--detach"),
            OsStr::new("--force"),
            OsStr::new("--no-checkout"),
            OsStr::new("--quiet"),
            worktree.path.as_os_str(),
            OsStr::new(commit),
        ])?;
        Ok(worktree)
    }

    /// Makes the index (of this working tree) hold `tree`, touching no file.
    pub fn read_tree(&self, tree: &str) -> Result<(), GitError> {
        self.run(["read-tree", "--end-of-options", tree]).map(drop)
    }

    /// Which of `paths` git-lfs's filter applies to (`filter=lfs` in the attributes).
    pub fn lfs_tracked(&self, paths: &[String]) -> Result<Vec<String>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["check-attr", "-z", "filter", "--"];
        args.extend(paths.iter().map(String::as_str));
        let listing = self.run(args)?;
        let fields: Vec<&str> = listing.split('\0').collect();
        Ok(fields
            .chunks(3)
            .filter(|c| c.len() == 3 && c[2] == "lfs")
            .map(|c| c[0].to_string())
            .collect())
    }

    /// The content filters (`filter` attribute values) git applies to the files `git add
    /// --all` would store: every tracked file and every untracked one that is not ignored,
    /// as git's own attribute rules resolve them (`.gitattributes` in the tree and the
    /// index, `info/attributes`, `core.attributesFile`, `GIT_ATTR_SOURCE`).
    pub fn filters_applied(&self) -> Result<std::collections::BTreeSet<String>, GitError> {
        use std::io::{Seek as _, Write as _};
        let (cmd, shown) = self.command([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ]);
        let listing = run_bytes(cmd, shown)?;
        let (mut cmd, shown) = self.command(["check-attr", "-z", "--stdin", "filter"]);
        let failed = |e: std::io::Error| GitError {
            command: shown.clone(),
            status: None,
            stderr: e.to_string(),
        };
        // From a file, not a pipe: the listing can outgrow what a pipe holds while git writes.
        let mut input = tempfile::tempfile().map_err(failed)?;
        input.write_all(&listing).map_err(failed)?;
        input.rewind().map_err(failed)?;
        cmd.stdin(input);
        let out = run_bytes(cmd, shown.clone())?;
        Ok(out
            .split(|b| *b == 0)
            .collect::<Vec<_>>()
            .chunks(3)
            .filter_map(|triple| match triple {
                [_, _, value] => Some(String::from_utf8_lossy(value).into_owned()),
                _ => None,
            })
            .filter(|v| !matches!(v.as_str(), "unspecified" | "unset" | "set" | ""))
            .collect())
    }

    /// The content git-lfs checks out for the pointer file `path` (`git lfs smudge`), with
    /// `git-lfs` looked up on the commands' PATH (none of the repository's).
    pub fn lfs_smudge(
        &self,
        path: &str,
        pointer: &[u8],
        env: &super::CommandEnv,
    ) -> Result<Vec<u8>, GitError> {
        use std::io::Write as _;
        let (mut cmd, shown) = self.command(["lfs", "smudge", "--", path]);
        cmd.env("PATH", env.path());
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let failed = |e: std::io::Error| GitError {
            command: shown.clone(),
            status: None,
            stderr: e.to_string(),
        };
        let mut child = cmd.spawn().map_err(failed)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(pointer).map_err(failed)?;
        }
        let out = child.wait_with_output().map_err(failed)?;
        if !out.status.success() {
            return Err(GitError {
                command: shown,
                status: out.status.code(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(out.stdout)
    }
}

/// True when process `pid` exists (EPERM: it does, and is someone else's).
fn process_alive(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
        matches!(
            rustix::process::test_kill_process(pid),
            Ok(()) | Err(rustix::io::Errno::PERM)
        )
    })
}

fn remove_abandoned_scratch(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("index-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = process_alive(pid);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(3600));
        if !alive || old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The oldest git git-orchestrate works with, as (major, minor): the test suite runs
/// against it (`.ci/run`). What it relies on: `--end-of-options` (2.24), `git worktree
/// list -z` (2.36).
pub const MIN_VERSION: (u32, u32) = (2, 39);

/// `2.39.5`, `2.47.3.windows.1`, `2.39.5 (Apple Git-154)` → (major, minor); `None` when
/// it does not start with two numbers.
pub fn parse_version(version: &str) -> Option<(u32, u32)> {
    let mut parts = version
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(str::parse::<u32>);
    if !version.trim().starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((parts.next()?.ok()?, parts.next()?.ok()?))
}

/// 40 (SHA-1) or 64 (SHA-256) lowercase hex digits: what git prints as a commit id, and
/// what no option or ref expression can be mistaken for.
pub fn is_full_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The entries of a `-z` listing: paths exactly as stored, never quoted.
fn paths(listing: &str) -> Vec<String> {
    listing
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// A commit as [`Git::commits`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedCommit {
    pub commit: String,
    pub tree: String,
    pub message: String,
}

/// What `git merge` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeOutcome {
    Merged,
    /// It stopped with these files in conflict; the merge is still in progress.
    Conflict(Vec<String>),
}

/// Without an identity configured, git commits as the fixed git-orchestrate identity
/// instead of failing.
fn with_identity(cmd: &mut Command, has_identity: bool) {
    if !has_identity {
        for (key, value) in [
            ("GIT_AUTHOR_NAME", crate::FALLBACK_NAME),
            ("GIT_AUTHOR_EMAIL", crate::FALLBACK_EMAIL),
            ("GIT_COMMITTER_NAME", crate::FALLBACK_NAME),
            ("GIT_COMMITTER_EMAIL", crate::FALLBACK_EMAIL),
        ] {
            cmd.env(key, value);
        }
    }
}

fn io_error(what: &str, e: std::io::Error) -> GitError {
    GitError {
        command: format!("(to {what})"),
        status: None,
        stderr: e.to_string(),
    }
}

fn run(cmd: Command, shown: String) -> Result<String, GitError> {
    run_bytes(cmd, shown).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs `cmd` to completion; only a failure to start it is an error here.
fn output(mut cmd: Command, shown: &str) -> Result<std::process::Output, GitError> {
    cmd.output().map_err(|e| GitError {
        command: shown.to_string(),
        status: None,
        stderr: e.to_string(),
    })
}

fn run_bytes(cmd: Command, shown: String) -> Result<Vec<u8>, GitError> {
    let out = output(cmd, &shown)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let mut said = String::from_utf8_lossy(&out.stderr).into_owned();
        if said.trim().is_empty() {
            said = String::from_utf8_lossy(&out.stdout).into_owned();
        }
        Err(GitError {
            command: shown,
            status: out.status.code(),
            stderr: said,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    use crate::test_git::git;

    #[test]
    fn paths_come_back_exactly_as_named_never_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        git(dir, &["init", "--quiet"]);
        git(dir, &["commit", "--quiet", "--allow-empty", "-m", "empty"]);
        let first = git(dir, &["rev-parse", "HEAD"]);
        let names = ["a b.txt", "docs/Plän.md", "new\nline.txt", "tab\there.txt"];
        std::fs::create_dir(dir.join("docs")).unwrap();
        for name in names {
            std::fs::write(dir.join(name), "x\n").unwrap();
        }
        let g = Git::new(dir);
        let mut untracked = g.untracked_files().unwrap();
        untracked.sort();
        assert_eq!(untracked, names);
        git(dir, &["add", "--all"]);
        git(dir, &["commit", "--quiet", "-m", "files"]);
        let mut changed = g.changed_files(&first, "HEAD").unwrap();
        changed.sort();
        assert_eq!(changed, names);
    }

    #[test]
    fn versions_are_read_as_git_prints_them() {
        assert_eq!(parse_version("2.39.5"), Some((2, 39)));
        assert_eq!(parse_version("2.47.3.windows.1"), Some((2, 47)));
        assert_eq!(parse_version("2.39.5 (Apple Git-154)"), Some((2, 39)));
        assert_eq!(parse_version("3.0"), Some((3, 0)));
        assert_eq!(parse_version("2"), None);
        assert_eq!(parse_version("unknown"), None);
        assert!(parse_version("2.38.9") < Some(MIN_VERSION));
        assert!(parse_version("2.39.0") >= Some(MIN_VERSION));
        assert!(parse_version("10.1") > Some(MIN_VERSION));
    }

    #[test]
    fn only_a_full_object_id_is_passed_to_reset_without_end_of_options() {
        assert!(is_full_object_id(&"a".repeat(40)));
        assert!(is_full_object_id(&"0123456789abcdef".repeat(4)));
        for not in [
            "-m",
            "HEAD",
            "abc123",
            &"A".repeat(40),
            &"g".repeat(40),
            &"a".repeat(41),
        ] {
            assert!(!is_full_object_id(not), "{not}");
        }
    }

    /// git 2.39 refuses `reset --keep --end-of-options <commit>`; this is the form that
    /// works there and on newer gits, even beside a file named like the commit.
    #[test]
    fn reset_keep_moves_to_a_commit_whose_id_is_also_a_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        git(dir, &["init", "--quiet"]);
        git(dir, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        let first = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
        git(dir, &["commit", "--quiet", "--allow-empty", "-m", "two"]);
        std::fs::write(dir.join(&first), "x\n").unwrap();
        let g = Git::new(dir);
        g.reset_keep(&first).unwrap();
        assert_eq!(git(dir, &["rev-parse", "HEAD"]).trim(), first);
        let refused = g.reset_keep("HEAD~1").unwrap_err();
        assert_eq!(refused.status, None, "{refused}");
    }
}
