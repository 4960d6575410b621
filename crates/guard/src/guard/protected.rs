//! The protected set as concrete paths a pattern is matched against: the git directory's
//! guarded parts and hooks, the protected files (those that exist under a protected glob,
//! and one instance of each glob), the agents' settings and the user's git configuration,
//! with the directories that hold them, indexed by name.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::context::GuardContext;
use super::policy::{AGENT_SETTINGS, GIT_DIR_GUARDED, Rule, USER_GIT_CONFIG};
use crate::glob::glob_match;

/// Every hook git runs (githooks(5)): a pattern that may name one reaches the hooks.
#[rustfmt::skip]
const GIT_HOOKS: &[&str] = &[
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
    "p4-post-changelist", "p4-pre-submit", "post-index-change",
];

/// A protected path, or a directory that holds one (which only a removal reaches).
pub(super) struct Target {
    pub(super) path: String,
    pub(super) rule: Rule,
    pub(super) holder: bool,
}

/// The protected paths and their directories, indexed by their last part.
pub(super) struct Targets {
    pub(super) all: Vec<Target>,
    pub(super) by_name: HashMap<String, Vec<usize>>,
}

impl Targets {
    pub(super) fn new(instances: Vec<(PathBuf, Rule)>) -> Targets {
        let mut all = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (path, rule) in instances {
            let mut holder = false;
            let mut next: Option<&Path> = Some(&path);
            while let Some(p) = next.filter(|p| p.components().count() > 1) {
                if seen.insert((p.to_path_buf(), holder)) {
                    all.push(Target {
                        path: p.to_string_lossy().to_string(),
                        rule: rule.clone(),
                        holder,
                    });
                }
                holder = true;
                next = p.parent();
            }
        }
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (at, target) in all.iter().enumerate() {
            let name = target
                .path
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            by_name.entry(name).or_default().push(at);
        }
        Targets { all, by_name }
    }
}

/// The directory part of a pattern before its first wildcard (`/r/ci/*.sh` → `/r/ci`).
pub(super) fn literal_dir(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '*' | '?' | '[' => break,
            c => out.push(c),
        }
    }
    match out.rfind('/') {
        Some(at) => out[..at].to_string(),
        None => String::new(),
    }
}

/// Files that exist under a protected glob's directory and match it (at most so many): what
/// a glob or `find` in the repository can reach.
fn existing(root: &Path, glob: &str, out: &mut Vec<(PathBuf, Rule)>) {
    const MOST: usize = 2000;
    let fixed = glob.split(['*', '?', '[']).next().unwrap_or_default();
    let dir = fixed.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let mut pending = vec![root.join(dir)];
    let mut seen = 0;
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MOST {
                return;
            }
            let path = entry.path();
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            if relative.starts_with(".git") {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path.clone());
            } else if glob_match(glob, &relative.to_string_lossy()) {
                out.push((path, Rule::Protected));
            }
        }
    }
}

/// Concrete paths that stand for the protected set, each with the rule that protects it.
pub(super) fn instances(ctx: &GuardContext) -> Vec<(PathBuf, Rule)> {
    let mut out = Vec::new();
    let git = normalize(&ctx.git_dir);
    if !ctx.git_dir.as_os_str().is_empty() {
        for part in GIT_DIR_GUARDED {
            out.push((git.join(part).join("x"), Rule::GitInternals));
            out.push((git.join(part), Rule::GitInternals));
        }
        for hook in crate::product::HOOK_NAMES.iter().chain(GIT_HOOKS) {
            out.push((git.join("hooks").join(hook), Rule::GitInternals));
        }
    }
    if !ctx.hooks_dir.as_os_str().is_empty() {
        let hooks = normalize(&ctx.hooks_dir);
        for hook in crate::product::HOOK_NAMES {
            out.push((hooks.join(hook), Rule::GitInternals));
        }
    }
    let root = normalize(&ctx.root);
    for file in &ctx.protected_files {
        out.push((root.join(file), Rule::Protected));
    }
    for glob in &ctx.protected_globs {
        let instance: String = glob
            .replace("**", "x")
            .chars()
            .map(|c| if matches!(c, '*' | '?') { 'x' } else { c })
            .collect();
        // A bracket expression stands for one of its characters: its first.
        let instance = instance.replace(['[', ']'], "");
        out.push((root.join(instance.trim_start_matches('/')), Rule::Protected));
        existing(&root, glob, &mut out);
    }
    for file in AGENT_SETTINGS {
        out.push((root.join(file), Rule::AgentSettings));
    }
    if let Some(home) = std::env::var_os("HOME") {
        for file in USER_GIT_CONFIG {
            out.push((normalize(&Path::new(&home).join(file)), Rule::GitInternals));
        }
        for file in AGENT_SETTINGS {
            out.push((normalize(&Path::new(&home).join(file)), Rule::AgentSettings));
        }
    }
    out
}

/// `.` and `..` resolved without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What follows `dir` in `path`, without the `/` between (empty for `dir` itself); `None`
/// where `path` is not `dir` or below it. As `Path::strip_prefix` says for the paths the
/// guard compares, which are [`normalize`]d or resolved (no `.`, `//` or trailing `/`), at a
/// fraction of its cost: it compares component by component, and a line of 40,000 `rm`s
/// made a million comparisons.
pub(super) fn rest_under<'p>(path: &'p Path, dir: &Path) -> Option<&'p [u8]> {
    let path = path.as_os_str().as_encoded_bytes();
    let dir = dir.as_os_str().as_encoded_bytes();
    if dir.is_empty() {
        // No component: every path is below it.
        return Some(path);
    }
    let rest = path.strip_prefix(dir)?;
    if dir.ends_with(b"/") {
        return Some(rest);
    }
    match rest {
        [] => Some(rest),
        [b'/', tail @ ..] => Some(tail),
        _ => None,
    }
}

/// Whether the last parts of `path` are `tail` (relative, plain names: `.mcp.json`,
/// `.claude/settings.json`), as `Path::ends_with` says for a [`normalize`]d or resolved
/// path, compared as bytes: every path a command line writes was compared with each agent
/// settings file.
pub(super) fn ends_with_parts(path: &Path, tail: &str) -> bool {
    let path = path.as_os_str().as_encoded_bytes();
    let Some(before) = path.strip_suffix(tail.as_bytes()) else {
        return false;
    };
    before.is_empty() || before.ends_with(b"/")
}
