//! git porcelain the orchestrator performs on the working tree (checkout, pull, add, commit),
//! through the `git` CLI so that the user's hooks, config and credentials apply. What git
//! says of commits and trees (`inspect.rs`), its settings (`config.rs`), the moves `sync`
//! makes (`sync.rs`), git's content filters (`filters.rs`) and the scratch index and
//! worktrees (`scratch.rs`), and landing a merge on main without checking it out
//! (`landing.rs`) are rooms of their own.

mod config;
mod filters;
mod inspect;
mod landing;
mod refs;
mod scratch;
mod sync;
#[cfg(test)]
mod tests;
mod verifier;
mod worktree;

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use config::{MIN_VERSION, parse_version};
pub use landing::MergedTree;
pub use scratch::{SCRATCH_DIR, TempWorktree};
pub use worktree::{ListedWorktree, StartedStatus};

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
    program: Program,
    /// Files (from the top of the working tree) that are never part of the agent's work:
    /// [`Git::add_all`] and [`Git::index_with_all`] leave them as the index has them.
    left_out: Vec<String>,
    /// Blind to the caller's repository and configuration ([`Git::isolated`]).
    isolated: bool,
    /// The git directory and common directory named outright ([`Git::pinned_to`]).
    pinned: Option<(PathBuf, PathBuf)>,
}

/// What points git at a repository, its objects or its configuration from the environment:
/// a hook's git sets them (a pre-receive hook's point at the push's quarantine), and a
/// verifier's git must see only the repository it is run in.
const REPOSITORY_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_PUSH_OPTION_COUNT",
    "GIT_REPLACE_REF_BASE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_ATTR_SOURCE",
];

/// The `git` a [`Git`] runs: given, or found on first use. Looking along PATH costs as much
/// as a tenth of a command that reads refs only (`get-task`, `status`), which never runs git.
#[derive(Clone, Debug)]
enum Program {
    Given(PathBuf),
    /// As [`super::env::find_git_for`] finds it for the repository whose directories these
    /// are; the process's PATH does not change while it runs.
    Found {
        inside: Vec<PathBuf>,
        found: std::sync::OnceLock<PathBuf>,
    },
}

impl Program {
    fn path(&self) -> &Path {
        match self {
            Program::Given(path) => path,
            Program::Found { inside, found } => found.get_or_init(|| {
                super::env::find_git_for(&inside.iter().map(PathBuf::as_path).collect::<Vec<_>>())
            }),
        }
    }
}

impl Git {
    /// git in `workdir`, the program found as [`super::env::find_git`] finds it for commands
    /// run there.
    pub fn new(workdir: impl Into<PathBuf>) -> Self {
        let workdir = workdir.into();
        Self::finding(workdir.clone(), vec![workdir])
    }

    /// git in `workdir`, the program found (when a command first needs it) as
    /// [`super::env::find_git_for`] finds it for the repository whose directories are `inside`.
    pub fn finding(workdir: impl Into<PathBuf>, inside: Vec<PathBuf>) -> Self {
        Git {
            workdir: workdir.into(),
            program: Program::Found {
                inside,
                found: std::sync::OnceLock::new(),
            },
            left_out: Vec::new(),
            isolated: false,
            pinned: None,
        }
    }

    /// git in `workdir`, running `program`.
    pub fn with_program(workdir: impl Into<PathBuf>, program: impl Into<PathBuf>) -> Self {
        Git {
            workdir: workdir.into(),
            program: Program::Given(program.into()),
            left_out: Vec::new(),
            isolated: false,
            pinned: None,
        }
    }

    /// This git, blind to the caller's environment and configuration: no variable that
    /// names a repository, its objects or extra configuration, and neither the system's nor
    /// the user's config files. What a verifier runs (docs/integrity.md, "attest").
    pub fn isolated(mut self) -> Self {
        self.isolated = true;
        self
    }

    /// The same git (program, isolation) in another working tree.
    pub fn at(&self, workdir: impl Into<PathBuf>) -> Self {
        Git {
            workdir: workdir.into(),
            program: self.program.clone(),
            left_out: Vec::new(),
            isolated: self.isolated,
            pinned: None,
        }
    }

    /// This git, with its git directory and common directory named outright instead of
    /// found through the working tree's `.git` file (and the `commondir` file beside it):
    /// files a command that ran in the working tree could have rewritten to send our git to
    /// a repository of its own, whose config would run its code (`core.fsmonitor`). Never
    /// runs a hook or a monitor either.
    pub fn pinned_to(mut self, git_dir: PathBuf, common_dir: PathBuf) -> Self {
        self.pinned = Some((git_dir, common_dir));
        self
    }

    /// The git directory of this working tree, absolute.
    pub fn absolute_git_dir(&self) -> Result<PathBuf, GitError> {
        Ok(PathBuf::from(
            self.run(["rev-parse", "--absolute-git-dir"])?.trim_end(),
        ))
    }

    /// This git, leaving `paths` out of the agent's work ([`Git::add_all`],
    /// [`Git::index_with_all`]).
    pub fn leaving_out(mut self, paths: impl IntoIterator<Item = String>) -> Self {
        self.left_out = paths.into_iter().collect();
        self
    }

    /// The paths this git leaves out of the agent's work.
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// Whether this git is the caller's own: neither isolated from its configuration nor
    /// pinned to a git directory (what an in-process reading of the working tree sees too).
    pub fn is_callers(&self) -> bool {
        !self.isolated && self.pinned.is_none()
    }

    /// `add --all` for the whole working tree, the files left out excepted.
    fn add_all_args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["add", "--all", "--", ":/"].map(String::from).to_vec();
        args.extend(self.left_out.iter().flat_map(|path| excluding(path)));
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
        self.program.path()
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
        let mut cmd = Command::new(self.program.path());
        if let Some((git_dir, _)) = &self.pinned {
            cmd.arg("--git-dir")
                .arg(git_dir)
                .arg("--work-tree")
                .arg(&self.workdir)
                .args([
                    "-c",
                    "core.fsmonitor=false",
                    "-c",
                    "core.hooksPath=/dev/null",
                ]);
        }
        cmd.args(&args)
            .current_dir(&self.workdir)
            .stdin(Stdio::null())
            // Never wait for a password prompt nobody will answer.
            .env("GIT_TERMINAL_PROMPT", "0")
            // What is read is what is stored: a replace ref would show other objects in
            // place of the ones the workflow names (docs/integrity.md).
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            // git runs the helpers of its exec path; the caller's is not ours to follow.
            .env_remove("GIT_EXEC_PATH")
            // Our pathspecs mean what they say (`excluding`'s classes included), whatever
            // the caller's git reads pathspecs as.
            .env_remove("GIT_NOGLOB_PATHSPECS")
            .env_remove("GIT_GLOB_PATHSPECS")
            .env_remove("GIT_LITERAL_PATHSPECS")
            .env_remove("GIT_ICASE_PATHSPECS");
        // Nor is a library or a shell start-up file the caller slipped in for git, its hooks
        // and filters to load.
        for var in super::env::injecting_vars() {
            cmd.env_remove(var);
        }
        if self.isolated {
            for var in REPOSITORY_VARS {
                cmd.env_remove(var);
            }
            cmd.env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_ATTR_NOSYSTEM", "1");
        }
        if let Some((_, common_dir)) = &self.pinned {
            cmd.env("GIT_COMMON_DIR", common_dir);
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

    /// The untracked files git ignores named one of `names`, in any directory (inside
    /// ignored directories too): files a run in the working tree loads though no tree of it
    /// has them.
    pub fn ignored_files_named(&self, names: &[&str]) -> Result<Vec<String>, GitError> {
        let mut args: Vec<String> = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.extend(names.iter().map(|name| format!(":(glob)**/{name}")));
        Ok(paths(&self.run(args)?))
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

    /// A commit message as git cleans it up: comment lines (`core.commentChar`) removed,
    /// blank lines squeezed (`git stripspace --strip-comments`).
    pub fn strip_comments(&self, message: &str) -> Result<String, GitError> {
        let (cmd, shown) = self.command(["stripspace", "--strip-comments"]);
        let out = run_with_input(cmd, shown, message.as_bytes())?;
        Ok(String::from_utf8_lossy(&out).into_owned())
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

    pub fn merge_abort(&self) -> Result<(), GitError> {
        self.run(["merge", "--abort"]).map(drop)
    }

    /// `git branch -d`: refuses to delete a branch that is not merged.
    pub fn delete_branch(&self, branch: &str) -> Result<(), GitError> {
        self.run(["branch", "--quiet", "-d", branch]).map(drop)
    }

    /// Makes the index (of this working tree) hold `tree`, touching no file.
    pub fn read_tree(&self, tree: &str) -> Result<(), GitError> {
        self.run(["read-tree", "--end-of-options", tree]).map(drop)
    }
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
    finished(output(cmd, &shown)?, shown)
}

/// What a finished git said: its stdout, or the failure with stderr (stdout when stderr
/// says nothing).
fn finished(out: std::process::Output, shown: String) -> Result<Vec<u8>, GitError> {
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

/// Runs `cmd` with `input` on its stdin and returns its stdout, or the failure with stderr.
fn run_with_input(mut cmd: Command, shown: String, input: &[u8]) -> Result<Vec<u8>, GitError> {
    use std::io::Write as _;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let failed = |e: std::io::Error| GitError {
        command: shown.clone(),
        status: None,
        stderr: e.to_string(),
    };
    let mut child = cmd.spawn().map_err(failed)?;
    // Written from a thread of its own while the output is read: git answers as it reads
    // (`cat-file --batch-check`), and once its output fills the pipe it stops reading, so
    // writing all of a large input first would wait for ever.
    let writer = child.stdin.take().map(|mut stdin| {
        let input = input.to_vec();
        std::thread::spawn(move || stdin.write_all(&input))
    });
    let out = child.wait_with_output().map_err(failed)?;
    if !out.status.success() {
        return Err(GitError {
            command: shown,
            status: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    if let Some(writer) = writer {
        writer
            .join()
            .unwrap_or_else(|_| {
                Err(std::io::Error::other(
                    "the thread writing its input panicked",
                ))
            })
            .map_err(failed)?;
    }
    Ok(out.stdout)
}

/// The pathspecs that leave `path` (and anything below it) out of a `git add`. Not the
/// literal `:(exclude)path`: git fails the whole `add` ("The following paths are ignored by
/// one of your .gitignore files") when a path such an item names exactly is ignored and
/// there (a `.mcp.json` in `.gitignore`), or an ignored directory above it (`.codex/`), but
/// not when a wildcard comes first; so its first ASCII character (not `/` or a wildcard's)
/// is written as a class of one (`[.]mcp.json`), the rest escaped, with `/*` for what is
/// below it (`*` crosses `/` in a pathspec without `glob`).
fn excluding(path: &str) -> Vec<String> {
    let Some(at) = path.find(|c: char| c.is_ascii() && !"/!^[]\\*?".contains(c)) else {
        return vec![format!(":(top,literal,exclude){path}")];
    };
    let mut pattern = String::new();
    for (i, c) in path.char_indices() {
        if i == at {
            pattern.push('[');
            pattern.push(c);
            pattern.push(']');
        } else {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
    }
    vec![
        format!(":(top,exclude){pattern}"),
        format!(":(top,exclude){pattern}/*"),
    ]
}
