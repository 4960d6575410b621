//! git's settings and where it keeps things: config values, remotes, the version it is,
//! `--git-path` and the common directory.

use std::path::PathBuf;

use super::{Git, GitError};

impl Git {
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

    /// Adds one value to a multi-valued config key (`git config --add`).
    pub fn config_add(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--add", key, value]).map(drop)
    }

    /// Removes the values of `key` that are exactly `value`.
    pub fn config_unset_value(&self, key: &str, value: &str) -> Result<(), GitError> {
        self.run(["config", "--fixed-value", "--unset-all", key, value])
            .map(drop)
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
