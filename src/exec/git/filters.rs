//! git's content filters: which ones `git add --all` would apply, and git-lfs's (which files it
//! tracks, and the content it checks out for a pointer).

use super::{Git, GitError, run_bytes, run_with_input};
use crate::exec::CommandEnv;

impl Git {
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
        env: &CommandEnv,
    ) -> Result<Vec<u8>, GitError> {
        let (mut cmd, shown) = self.command(["lfs", "smudge", "--", path]);
        cmd.env("PATH", env.path());
        run_with_input(cmd, shown, pointer)
    }
}
