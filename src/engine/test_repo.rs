//! A real git repository in a temporary directory for the engine's unit tests, made with the
//! `git` CLI, and the engine's `Session` opened on it (never a mock of git).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Session;

/// A repository on branch `main` with one commit (`README`), under a temporary directory
/// removed when this is dropped.
pub(crate) struct Repo {
    _temp: tempfile::TempDir,
    dir: PathBuf,
}

impl Repo {
    /// `git init -b main` and one commit.
    pub(crate) fn new() -> Repo {
        let repo = Repo::empty();
        repo.write("README", "hello\n");
        repo.commit_all("first");
        repo
    }

    /// `git init -b main`, nothing committed.
    pub(crate) fn empty() -> Repo {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().join("repo");
        std::fs::create_dir(&dir).expect("create the repository's directory");
        let repo = Repo { _temp: temp, dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a test may put files outside the repository.
    pub(crate) fn outside(&self) -> PathBuf {
        self.dir
            .parent()
            .expect("the repository has a parent")
            .to_path_buf()
    }

    /// The command `git ARGS` in the repository, with no user or system configuration and a
    /// fixed identity and date, so that what it makes does not depend on the machine.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(&self.dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE");
        cmd
    }

    /// `git ARGS`, which must succeed; its standard output, trimmed.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let out = self.command(args).output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub(crate) fn write(&self, path: &str, content: &str) {
        let path = self.dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the file's directory");
        }
        std::fs::write(path, content).expect("write the file");
    }

    /// Commits everything; the new commit's id.
    pub(crate) fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// `git ARGS` run in `dir` (another repository, a bare remote), which must succeed; its
    /// standard output, trimmed.
    pub(crate) fn command_in(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("GIT_DIR")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The engine's session on workflow `workflow` of this repository.
    pub(crate) fn session(&self, workflow: &str) -> Session {
        match Session::open(&self.dir, workflow) {
            Ok(session) => session,
            Err(e) => panic!("open a session on {}: {e}", self.dir.display()),
        }
    }
}

impl Drop for Repo {
    /// Takes away this repository's scratch root too (outside the temporary directory, in
    /// the user's shared one: src/exec/env.rs `scratch_dir`), so tests leave nothing behind.
    fn drop(&mut self) {
        let git = self.dir.join(".git");
        let root = crate::exec::env::scratch_dir(&[&self.dir, &git, &git], &git);
        if root.starts_with(&self.dir) {
            return;
        }
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_file(root.with_extension("lock"));
    }
}
