//! Where a write lands: a path as written and as the file system resolves it (links
//! followed), judged against the protected set; a glob or an unknowable path judged by what
//! it could match. Each path is resolved once per command line, and only so many.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bstr::BStr;
use gix_glob::wildmatch::Mode;

use super::context::GuardContext;
use super::policy::{
    AGENT_SETTINGS, GIT_DIR_GUARDED, GIT_INTERNAL_NAMES, Reason, Rule, USER_GIT_CONFIG, Unknown,
};
use super::protected::{Targets, ends_with_parts, instances, literal_dir, normalize, rest_under};
use super::words::{Arg, escape};
use crate::glob::glob_match;

/// Where the commands may be running: known directories, and perhaps somewhere the guard
/// cannot know (`cd "$x"`).
#[derive(Clone, Debug)]
pub struct Cwds {
    pub known: Vec<PathBuf>,
    pub unknown: bool,
}

/// At most this many directories are followed; past them, the directory is unknown.
const MAX_CWDS: usize = 3;
/// A directory deeper than this (`cd a && cd a && …`) is taken as unknown.
const MAX_DEPTH: usize = 32;
/// At most this many paths are looked up on the file system in one command line.
const MAX_LOOKUPS: usize = 400_000;

impl Cwds {
    pub fn new(cwd: &Path) -> Cwds {
        Cwds {
            known: vec![normalize(cwd)],
            unknown: false,
        }
    }

    /// After `cd DIR` (`None`: a directory the guard cannot know). `certain`: the `cd`
    /// cannot fail or be undone before what follows (`cd x && …`); otherwise the old
    /// directories stay possible.
    pub fn change(&mut self, dir: Option<&str>, certain: bool) {
        let Some(dir) = dir else {
            if certain {
                self.known.clear();
            }
            self.unknown = true;
            return;
        };
        let next: Vec<PathBuf> = self.known.iter().map(|c| normalize(&c.join(dir))).collect();
        if certain && !self.unknown {
            self.known = next;
        } else {
            for cwd in next {
                if !self.known.contains(&cwd) {
                    self.known.push(cwd);
                }
            }
        }
        // A relative `cd` from an unknown directory stays unknown; an absolute one is known.
        let before = self.known.len();
        self.known.retain(|c| c.components().count() <= MAX_DEPTH);
        if self.known.len() < before {
            self.unknown = true;
        }
        if self.known.len() > MAX_CWDS {
            // Past so many, the first directory stays known and the rest is unknown.
            self.known.truncate(1);
            self.unknown = true;
        }
    }
}

/// Judges paths for one command line, with what it looked up kept.
pub struct Checker<'c> {
    pub ctx: &'c GuardContext,
    /// Keyed by the bytes of the path: hashing those is cheaper than a `Path`'s components.
    canonical: HashMap<std::ffi::OsString, Option<PathBuf>>,
    lookups: usize,
    /// Concrete paths standing for everything protected (a glob by one instance), built
    /// when a pattern is first judged.
    targets: Option<Targets>,
    #[allow(clippy::type_complexity)]
    places: Option<(Vec<PathBuf>, Vec<(PathBuf, bool)>)>,
    /// What a removal may not take away, as named ([`Self::holds_guarded`]): the git and
    /// hooks directories (`None`) and each protected path (`Some`: as the rule names it).
    /// Made once: a command line of 40,000 `rm`s made them 40,000 times.
    held: Option<Vec<(PathBuf, Option<String>)>>,
    /// The repository's top, normalized once.
    root: PathBuf,
    /// The git directory's parts whose mention in a word is refused
    /// ([`Self::mentions_internals`]), made once.
    internals: Vec<String>,
}

impl<'c> Checker<'c> {
    pub fn new(ctx: &'c GuardContext) -> Checker<'c> {
        Checker {
            ctx,
            canonical: HashMap::new(),
            lookups: 0,
            targets: None,
            places: None,
            held: None,
            root: normalize(&ctx.root),
            internals: if ctx.git_dir.as_os_str().is_empty() {
                Vec::new()
            } else {
                [
                    "orchestrator",
                    "refs/orchestrator",
                    "logs/refs/orchestrator",
                    "config",
                ]
                .iter()
                .map(|part| ctx.git_dir.join(part).to_string_lossy().into_owned())
                .collect()
            },
        }
    }

    /// The git internals or the hooks named in `word` (program text, a path as written).
    pub fn mentions_internals(&self, word: &str) -> Option<Reason> {
        mentions_internals(word, self.ctx, &self.internals)
    }

    /// A file a command writes, moves or deletes; `removes`: deleting or moving it takes
    /// away what a directory of that name holds.
    pub fn target(&mut self, arg: &Arg, cwds: &Cwds, removes: bool) -> Result<(), Reason> {
        if let Some(value) = arg.value() {
            for cwd in cwds.known.clone() {
                self.written(value, &cwd)?;
                if removes {
                    self.holds_guarded(value, &cwd)?;
                }
            }
            if cwds.unknown && !value.starts_with('/') {
                self.reach(&format!("*/{}", escape(value)), true, removes, arg, value)?;
            }
            return Ok(());
        }
        let mut pattern = arg.as_pattern().replace("/./", "/");
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest.to_string();
        }
        if pattern == "." {
            pattern.clear();
        }
        let crossing = arg.unknown.is_some();
        if crossing && pattern.split('/').any(|c| c == "..") {
            return Err(Reason::new(
                Rule::Unknowable(Unknown::Target),
                arg.unknown.clone().unwrap_or_default(),
            ));
        }
        if pattern.starts_with('/') || (crossing && pattern.starts_with('*')) {
            return self.reach(&pattern, crossing, removes, arg, &pattern);
        }
        for cwd in cwds.known.clone() {
            let absolute = format!("{}/{pattern}", escape(&cwd.to_string_lossy()));
            self.reach(&absolute, crossing, removes, arg, &pattern)?;
        }
        if cwds.unknown {
            self.reach(&format!("*/{pattern}"), true, removes, arg, &pattern)?;
        }
        Ok(())
    }

    /// A pattern of absolute paths against what is protected: any match is refused.
    fn reach(
        &mut self,
        pattern: &str,
        crossing: bool,
        removes: bool,
        arg: &Arg,
        shown: &str,
    ) -> Result<(), Reason> {
        self.lookups += 1;
        if self.lookups > MAX_LOOKUPS {
            return Err(Reason::new(Rule::TooMuch, "the paths it writes"));
        }
        let mode = if crossing {
            Mode::empty()
        } else {
            Mode::NO_MATCH_SLASH_LITERAL
        };
        // Inside a directory a `DIR/**` glob protects, anything it matches is protected.
        let literal = literal_dir(pattern);
        let root = &self.root;
        for glob in &self.ctx.protected_globs {
            let Some(dir) = glob
                .strip_suffix("/**")
                .filter(|d| !d.contains(['*', '?', '[']))
            else {
                continue;
            };
            if Path::new(&literal).starts_with(root.join(dir)) {
                return Err(match &arg.unknown {
                    Some(u) => Reason::new(Rule::Unknowable(Unknown::Target), u.clone()),
                    None => Reason::new(Rule::Protected, format!("{shown} (in {glob})")),
                });
            }
        }
        let targets = self.targets();
        // A pattern whose last part is plain text matches only paths of that name: looked up,
        // not scanned, so many writes cost what few do.
        let last = pattern.rsplit('/').next().unwrap_or(pattern);
        let plain = !last.contains(['*', '?', '[', '\\']);
        let indices: Box<dyn Iterator<Item = usize>> = if plain {
            Box::new(targets.by_name.get(last).into_iter().flatten().copied())
        } else {
            Box::new(0..targets.all.len())
        };
        for at in indices {
            let target = &targets.all[at];
            // Only a removal reaches through a directory.
            if target.holder && !removes {
                continue;
            }
            if gix_glob::wildmatch(
                BStr::new(pattern.as_bytes()),
                BStr::new(target.path.as_bytes()),
                mode,
            ) {
                return Err(match &arg.unknown {
                    Some(u) => Reason::new(Rule::Unknowable(Unknown::Target), u.clone()),
                    None => Reason::new(
                        target.rule.clone(),
                        format!("{shown} (it matches {})", target.path),
                    ),
                });
            }
        }
        Ok(())
    }

    fn targets(&mut self) -> &Targets {
        if self.targets.is_none() {
            self.targets = Some(Targets::new(instances(self.ctx)));
        }
        self.targets.get_or_insert_with(|| Targets::new(Vec::new()))
    }

    /// A known path written from `cwd`: as written, and as the file system resolves it.
    pub fn written(&mut self, path: &str, cwd: &Path) -> Result<(), Reason> {
        if path.is_empty() || path == "/dev/null" || path.starts_with("/dev/") {
            return Ok(());
        }
        if let Some(reason) = self.mentions_internals(path) {
            return Err(reason);
        }
        let absolute = normalize(&cwd.join(path));
        // A symbolic link (`ln -s .git g`, then writing `g/hooks/commit-msg`) writes where it
        // points; `..` after a link goes up from where the link points, so the path is also
        // resolved as written, before `..` is taken away as text.
        let mut candidates = vec![absolute.clone()];
        candidates.extend(self.resolved(&absolute)?);
        if path.contains("..") {
            candidates.extend(self.resolved(&cwd.join(path))?);
        }
        let ctx = self.ctx;
        let (roots, git_dirs) = self.places()?;
        for candidate in &candidates {
            for (dir, whole) in git_dirs {
                let Some(rest) = rest_under(candidate, dir) else {
                    continue;
                };
                let rest = String::from_utf8_lossy(rest);
                // In the git directory, the parts the workflow and the hooks live in; a lock
                // file, `info/exclude` or a rebase's scratch files are git's ordinary business.
                if *whole
                    || rest.is_empty()
                    || GIT_DIR_GUARDED
                        .iter()
                        .any(|g| rest == *g || rest.starts_with(&format!("{g}/")))
                {
                    return Err(Reason::new(Rule::GitInternals, path));
                }
            }
            if AGENT_SETTINGS.iter().any(|f| ends_with_parts(candidate, f)) {
                return Err(Reason::new(Rule::AgentSettings, path));
            }
            if USER_GIT_CONFIG
                .iter()
                .any(|f| ends_with_parts(candidate, f))
            {
                return Err(Reason::new(Rule::GitInternals, path));
            }
            let Some(relative) = roots.iter().find_map(|r| rest_under(candidate, r)) else {
                continue;
            };
            let relative = String::from_utf8_lossy(relative);
            if ctx.protected_files.iter().any(|f| f == relative.as_ref())
                || ctx.protected_globs.iter().any(|g| glob_match(g, &relative))
            {
                return Err(Reason::new(Rule::Protected, relative.to_string()));
            }
        }
        Ok(())
    }

    /// Refuses `path` when it is a directory that holds the git directory, the hooks or a
    /// protected path (`rm -rf ci` with `ci/**` protected; `rm -rf .`).
    pub fn holds_guarded(&mut self, path: &str, cwd: &Path) -> Result<(), Reason> {
        let target = normalize(&cwd.join(path));
        if target.as_os_str().is_empty() {
            return Ok(());
        }
        let mut targets = vec![target.clone()];
        targets.extend(self.canonical(&target)?);
        let held = self.held();
        for target in &targets {
            for (dir, inside) in held {
                if rest_under(dir, target).is_none() {
                    continue;
                }
                return Err(match inside {
                    None => Reason::new(Rule::GitInternals, path),
                    Some(inside) => {
                        Reason::new(Rule::Protected, format!("{path} (it holds {inside})"))
                    }
                });
            }
        }
        Ok(())
    }

    /// What a removal may not take away (the field of that name), made on first use.
    fn held(&mut self) -> &[(PathBuf, Option<String>)] {
        let ctx = self.ctx;
        self.held.get_or_insert_with(|| {
            let mut held: Vec<(PathBuf, Option<String>)> = [&ctx.git_dir, &ctx.hooks_dir]
                .into_iter()
                .filter(|dir| !dir.as_os_str().is_empty())
                .map(|dir| (normalize(dir), None))
                .collect();
            let root = &self.root;
            let protected = ctx.protected_files.iter().map(String::as_str).chain(
                ctx.protected_globs
                    .iter()
                    .map(|g| g.split(['*', '?', '[']).next().unwrap_or_default()),
            );
            held.extend(protected.map(|inside| {
                (
                    normalize(&root.join(inside.trim_end_matches('/'))),
                    Some(inside.to_string()),
                )
            }));
            held
        })
    }

    /// The repository's top and its git and hooks directories, as named and as resolved
    /// (`whole`: everything in it is guarded), looked up once.
    #[allow(clippy::type_complexity)]
    fn places(&mut self) -> Result<(&[PathBuf], &[(PathBuf, bool)]), Reason> {
        let found = match self.places.take() {
            Some(found) => found,
            None => self.find_places()?,
        };
        let (roots, git_dirs) = self.places.insert(found);
        Ok((roots, git_dirs))
    }

    #[allow(clippy::type_complexity)]
    fn find_places(&mut self) -> Result<(Vec<PathBuf>, Vec<(PathBuf, bool)>), Reason> {
        let ctx = self.ctx;
        let mut roots = vec![self.root.clone()];
        roots.extend(self.canonical(&ctx.root)?);
        let mut git_dirs: Vec<(PathBuf, bool)> = Vec::new();
        for (dir, whole) in [(&ctx.git_dir, false), (&ctx.hooks_dir, true)] {
            if dir.as_os_str().is_empty() {
                continue;
            }
            git_dirs.push((normalize(dir), whole));
            if let Some(real) = self.canonical(dir)? {
                git_dirs.push((real, whole));
            }
        }
        Ok((roots, git_dirs))
    }

    /// `path` made canonical, looked up once.
    fn canonical(&mut self, path: &Path) -> Result<Option<PathBuf>, Reason> {
        if let Some(known) = self.canonical.get(path.as_os_str()) {
            return Ok(known.clone());
        }
        self.lookups += 1;
        if self.lookups > MAX_LOOKUPS {
            return Err(Reason::new(Rule::TooMuch, "the paths it writes"));
        }
        // One `lstat` tells a missing path apart, cheaper than resolving it to find out.
        let real = std::fs::symlink_metadata(path)
            .ok()
            .and_then(|_| std::fs::canonicalize(path).ok());
        self.canonical
            .insert(path.as_os_str().to_os_string(), real.clone());
        Ok(real)
    }

    /// `path` as the file system resolves it: its longest existing ancestor (the whole path,
    /// when it exists, so a final link is followed as a write follows it) made canonical,
    /// the rest appended. `None` when nothing of it exists or it resolves to itself.
    fn resolved(&mut self, path: &Path) -> Result<Option<PathBuf>, Reason> {
        let mut existing = path;
        let mut rest = Vec::new();
        let real = loop {
            if let Some(real) = self.canonical(existing)? {
                break real;
            }
            let (Some(name), Some(parent)) = (existing.file_name(), existing.parent()) else {
                return Ok(None);
            };
            rest.push(name);
            existing = parent;
        };
        let mut out = real;
        for part in rest.iter().rev() {
            out.push(part);
        }
        Ok((out != path).then_some(out))
    }
}

/// The git directory's parts the orchestrator relies on, named in a command's text (a
/// script's argument, an interpreter's one-liner).
fn mentions_internals(word: &str, ctx: &GuardContext, internals: &[String]) -> Option<Reason> {
    // `.git//hooks`, `.git/./hooks` name the same directory.
    let normalized;
    let word = if word.contains("//") || word.contains("/./") {
        let mut text = word.to_string();
        while text.contains("//") || text.contains("/./") {
            text = text.replace("//", "/").replace("/./", "/");
        }
        normalized = text;
        normalized.as_str()
    } else {
        word
    };
    if let Some(name) = GIT_INTERNAL_NAMES.iter().find(|p| word.contains(**p)) {
        return Some(Reason::new(Rule::GitInternals, *name));
    }
    if word.ends_with(".gitconfig") || word.contains(".config/git/config") {
        return Some(Reason::new(Rule::GitInternals, word));
    }
    let hooks = ctx.hooks_dir.to_string_lossy();
    if !hooks.is_empty() && word.contains(hooks.as_ref()) {
        return Some(Reason::new(Rule::GitInternals, hooks.to_string()));
    }
    internals
        .iter()
        .find(|p| word.contains(p.as_str()))
        .map(|p| Reason::new(Rule::GitInternals, p.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `rest_under` says what `Path::strip_prefix` says of normalized paths: below or
        /// not, and what is left (`/a/bc` is not below `/a/b`; everything is below `/`).
        #[test]
        fn rest_under_agrees_with_strip_prefix(
            path in "(/)?((a|b|ab|\\.\\.|\\.|é)(/{1,2})){0,4}(a|b|ab)?",
            dir in "(/)?((a|b|ab|\\.\\.|\\.|é)(/{1,2})){0,4}(a|b|ab)?",
        ) {
            use std::os::unix::ffi::OsStrExt as _;
            let (path, dir) = (normalize(Path::new(&path)), normalize(Path::new(&dir)));
            let ours = super::rest_under(&path, &dir);
            let std = path.strip_prefix(&dir).ok().map(|rest| rest.as_os_str().as_bytes());
            proptest::prop_assert_eq!(ours, std, "{:?} under {:?}", path, dir);
        }

        /// `ends_with_parts` says what `Path::ends_with` says of a normalized path and a
        /// relative tail of plain names (`x/.mcp.json` ends with `.mcp.json`, `x.mcp.json`
        /// does not).
        #[test]
        fn ends_with_parts_agrees_with_ends_with(
            path in "(/)?((a|\\.b|a\\.b|b|é)(/{1,2})){0,4}(a|\\.b|a\\.b|b)?",
            tail in "((a|\\.b|a\\.b|b)/){0,2}(a|\\.b|a\\.b|b)",
        ) {
            let path = normalize(Path::new(&path));
            proptest::prop_assert_eq!(
                super::ends_with_parts(&path, &tail),
                path.ends_with(&tail),
                "{:?} ends with {:?}", path, tail
            );
        }
    }

    #[test]
    fn git_globs_match_as_git_matches_them() {
        assert!(glob_match("ci/**", "ci/a/b.sh"));
        assert!(glob_match("**/x.sh", "x.sh"));
        assert!(glob_match("**/x.sh", "a/b/x.sh"));
        assert!(glob_match("*.sh", "run.sh"));
        assert!(!glob_match("*.sh", "ci/run.sh"));
        assert!(glob_match("tests/[ab].py", "tests/a.py"));
    }

    #[test]
    fn cwds_follow_cd_and_give_up_when_they_cannot() {
        let mut cwds = Cwds::new(Path::new("/r"));
        cwds.change(Some("src"), true);
        assert_eq!(cwds.known, [PathBuf::from("/r/src")]);
        cwds.change(Some(".."), false);
        assert_eq!(cwds.known, [PathBuf::from("/r/src"), PathBuf::from("/r")]);
        cwds.change(None, false);
        assert!(cwds.unknown);
        for i in 0..20 {
            cwds.change(Some(&format!("d{i}")), false);
        }
        assert!(cwds.known.len() <= MAX_CWDS);
    }
}
