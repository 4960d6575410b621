//! What git says of commits and trees, changing nothing: ids, counts, logs, diffs, ancestry,
//! a file as committed, and the tree a merge would make.

use super::{Git, GitError, LoggedCommit, paths, run_bytes};

impl Git {
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

    /// The commits `revs` select (as `git log` takes them: `a..b`, `x --not --remotes`),
    /// newest first, each with its tree and message.
    pub fn commits(&self, revs: &[&str]) -> Result<Vec<LoggedCommit>, GitError> {
        let mut args = vec!["log", "-z", "--format=%H%x01%T%x01%B"];
        args.extend_from_slice(revs);
        args.push("--");
        Ok(logged_commits(&self.run(args)?))
    }

    /// [`Git::commits`] of one walk: from every `tips` commit, not reaching any `bases` commit
    /// nor what `not` selects (options such as `--remotes=origin`, `--glob=…`). The ids go in
    /// on stdin, so that ten thousand pushed refs make one process and no command line that
    /// outgrows the system's limit.
    pub fn commits_of_walk(
        &self,
        tips: &[&str],
        bases: &[&str],
        not: &[&str],
    ) -> Result<Vec<LoggedCommit>, GitError> {
        let mut args = vec!["log", "-z", "--format=%H%x01%T%x01%B", "--not"];
        args.extend_from_slice(not);
        // A `--not` on the command line leaves what comes on stdin alone.
        args.extend(["--not", "--stdin"]);
        let mut input = String::new();
        for tip in tips {
            input.push_str(tip);
            input.push('\n');
        }
        for base in bases {
            input.push('^');
            input.push_str(base);
            input.push('\n');
        }
        let (cmd, shown) = self.command(&args);
        let out = super::run_with_input(cmd, shown, input.as_bytes())?;
        Ok(logged_commits(&String::from_utf8_lossy(&out)))
    }

    /// Which of `ids` name a commit (or a tag) this repository has: one `cat-file
    /// --batch-check` for them all.
    pub fn present_commits(
        &self,
        ids: &[&str],
    ) -> Result<std::collections::HashSet<String>, GitError> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let (cmd, shown) = self.command(["cat-file", "--batch-check=%(objectname) %(objecttype)"]);
        let out = super::run_with_input(cmd, shown, input.as_bytes())?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            // A missing one is answered `<id> missing`; a blob or a tree bounds no walk.
            .filter_map(|line| match line.split_once(' ') {
                Some((id, "commit" | "tag")) => Some(id.to_string()),
                _ => None,
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

    /// The message of commit `id` when it is a commit of at most `cap` bytes (its size read
    /// from the object's header first); `None` for anything else, or nothing by that id.
    pub fn commit_message_within(&self, id: &str, cap: u64) -> Result<Option<String>, GitError> {
        Ok(self.object_within(id, "commit", cap)?.and_then(|bytes| {
            String::from_utf8_lossy(&bytes)
                .split_once("\n\n")
                .map(|(_, message)| message.to_string())
        }))
    }

    /// Object `id`'s content when it is of `kind` and at most `cap` bytes (its type and size
    /// read from its header first, so nothing larger is read); `None` for anything else, or
    /// nothing by that id.
    pub fn object_within(
        &self,
        id: &str,
        kind: &str,
        cap: u64,
    ) -> Result<Option<Vec<u8>>, GitError> {
        let found = match self.run(["cat-file", "-t", id]) {
            Ok(found) => found,
            Err(e) if e.status == Some(128) => return Ok(None),
            Err(e) => return Err(e),
        };
        if found.trim() != kind {
            return Ok(None);
        }
        let size: u64 = self
            .run(["cat-file", "-s", id])?
            .trim()
            .parse()
            .unwrap_or(u64::MAX);
        if size > cap {
            return Ok(None);
        }
        let (cmd, shown) = self.command(["cat-file", kind, id]);
        super::run_bytes(cmd, shown).map(Some)
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

    /// The regular files of `rev`'s tree at or under `paths` (each a file or a directory,
    /// as `ls-tree` takes them), with the content of each of at most `cap` bytes: one
    /// `ls-tree` and one `cat-file --batch` for them all. A larger file is left out.
    pub fn files_within(
        &self,
        rev: &str,
        paths: &[String],
        cap: u64,
    ) -> Result<Vec<(String, Vec<u8>)>, GitError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut args = vec!["ls-tree", "-r", "-z", "-l", "--full-tree", rev, "--"];
        args.extend(paths.iter().map(String::as_str));
        let listing = self.run(args)?;
        let mut wanted: Vec<(String, String)> = Vec::new();
        for entry in listing.split('\0') {
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            let mut fields = meta.split_whitespace();
            let (Some(mode), Some("blob"), Some(id), Some(size)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if matches!(mode, "100644" | "100755") && size.parse::<u64>().is_ok_and(|s| s <= cap) {
                wanted.push((path.to_string(), id.to_string()));
            }
        }
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = wanted.iter().map(|(_, id)| format!("{id}\n")).collect();
        let (cmd, shown) = self.command(["cat-file", "--batch"]);
        let out = super::run_with_input(cmd, shown.clone(), input.as_bytes())?;
        let mut rest = out.as_slice();
        let mut files = Vec::new();
        for (path, _) in wanted {
            // `<id> blob <size>\n<content>\n` for each, in the order asked.
            let header_end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            let header = String::from_utf8_lossy(&rest[..header_end]).into_owned();
            let size: Option<usize> = header.rsplit(' ').next().and_then(|s| s.parse().ok());
            let (Some(size), true) = (size, header.contains(" blob ")) else {
                return Err(GitError {
                    command: shown,
                    status: None,
                    stderr: format!("unexpected answer {header:?} for {path}"),
                });
            };
            let start = (header_end + 1).min(rest.len());
            let end = (start + size).min(rest.len());
            files.push((path, rest[start..end].to_vec()));
            rest = &rest[(end + 1).min(rest.len())..];
        }
        Ok(files)
    }

    /// The gitlink entries (mode 160000) at the top of `rev`'s tree, by name: an archive
    /// commit's index of workflows (docs/refs.md, "The archive").
    pub fn gitlinks(&self, rev: &str) -> Result<Vec<(String, String)>, GitError> {
        let listing = self.run(["ls-tree", "-z", "--end-of-options", rev])?;
        Ok(listing
            .split('\0')
            .filter_map(|entry| {
                let (meta, name) = entry.split_once('\t')?;
                let mut fields = meta.split(' ');
                let (mode, _, id) = (fields.next()?, fields.next()?, fields.next()?);
                (mode == "160000").then(|| (name.to_string(), id.to_string()))
            })
            .collect())
    }

    /// Every commit reachable from `rev`.
    pub fn reachable(&self, rev: &str) -> Result<std::collections::HashSet<String>, GitError> {
        Ok(self
            .run(["rev-list", "--end-of-options", rev])?
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// True when `a` is an ancestor of (or equal to) `b`.
    pub fn is_ancestor(&self, a: &str, b: &str) -> Result<bool, GitError> {
        match self.run(["merge-base", "--is-ancestor", a, b]) {
            Ok(_) => Ok(true),
            Err(e) if e.status == Some(1) => Ok(false),
            Err(e) => Err(e),
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
}

/// `git log -z --format=%H%x01%T%x01%B`'s output, parsed.
fn logged_commits(out: &str) -> Vec<LoggedCommit> {
    out.split('\0')
        .filter(|entry| !entry.is_empty())
        .filter_map(|entry| {
            let mut parts = entry.splitn(3, '\x01');
            Some(LoggedCommit {
                commit: parts.next()?.trim_start_matches('\n').to_string(),
                tree: parts.next()?.to_string(),
                message: parts.next()?.to_string(),
            })
        })
        .collect()
}
