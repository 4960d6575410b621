//! Whether this repository can verify anything (docs/integrity.md, "Hermetic verification").
//! Settings that make git store, show or check out something other than what a gate saw, or
//! that change which hooks a worktree runs, refuse every verification, naming the setting:
//! the agent can write `.git/config` and `.git/info/attributes` like any file. A content
//! filter other than git-lfs's counts where an attribute applies it to a file git stores.

use std::path::PathBuf;

use super::{EngineError, Session};
use crate::store::Setting;

pub use super::error::Unsafe;

/// Refuses (exit 5) when anything makes the repository unfit to verify in.
pub fn require(session: &Session) -> Result<(), EngineError> {
    match problems(session)?.into_iter().next() {
        Some(problem) => Err(EngineError::NotHermetic(Box::new(problem))),
        None => Ok(()),
    }
}

/// Everything that makes the repository unfit to verify in.
pub fn problems(session: &Session) -> Result<Vec<Unsafe>, EngineError> {
    let store = &session.store;
    let mut found: Vec<Unsafe> = store
        .replace_refs()?
        .into_iter()
        .map(|id| Unsafe {
            setting: format!("refs/replace/{id}"),
            origin: "the repository's refs".into(),
            why: format!(
                "git shows another object in place of {id}, so what a command reads is not what is stored"
            ),
            fix: format!("a human checks what it replaces, then: git replace -d {id}"),
        })
        .collect();
    let mut settings = store.settings("filter");
    settings.extend(store.settings("core"));
    settings.extend(from_environment());
    let judged: Vec<Unsafe> = settings.iter().filter_map(judge).collect();
    // A filter driver is configured for everything a user's git does (a notebook stripper in
    // ~/.gitconfig, say); it changes what is stored only where an attribute applies it.
    let drivers: Vec<&str> = judged.iter().filter_map(|u| driver(&u.setting)).collect();
    let applied = if drivers.is_empty() {
        Default::default()
    } else {
        session.git.filters_applied()?
    };
    found.extend(
        judged
            .into_iter()
            .filter(|u| driver(&u.setting).is_none_or(|name| applied.contains(name))),
    );
    Ok(found)
}

/// Files test runners look for in the directories above the one they run in (pytest's
/// configuration, node's modules and packages, cargo's configuration, Go's module files).
const RUNNER_FILES: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "conftest.py",
    "package.json",
    "node_modules",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "tsconfig.json",
    ".babelrc",
    "babel.config.js",
    "babel.config.cjs",
    "babel.config.mjs",
    "babel.config.json",
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "jest.config.json",
    "vitest.config.js",
    "vitest.config.ts",
    "vitest.config.mjs",
    "vitest.config.mts",
    "vitest.config.cjs",
    "vitest.config.cts",
    "vite.config.js",
    "vite.config.ts",
    "vite.config.mjs",
    "vite.config.mts",
    "vite.config.cjs",
    "vite.config.cts",
    ".mocharc.js",
    ".mocharc.cjs",
    ".mocharc.json",
    ".mocharc.jsonc",
    ".mocharc.yaml",
    ".mocharc.yml",
    "Cargo.toml",
    ".cargo",
    "go.mod",
    "go.work",
];

/// Where this repository's scratch worktrees live: outside it, so that nothing a program
/// finds by looking upward from one (a `node_modules`, a config file, a file the agent left
/// there) is the working tree's.
pub fn scratch_root(session: &Session) -> PathBuf {
    crate::exec::env::scratch_dir(
        &[
            session.store.workdir(),
            session.store.git_dir(),
            session.store.common_dir(),
        ],
        session.store.common_dir(),
    )
}

/// A test runner's file above the scratch worktrees (docs/integrity.md): pytest, node, cargo
/// and go search upward from where they run, so such a file would steer every run of the
/// final check, the base's and the squashed commit's alike, from outside the repository.
pub fn above_scratch(session: &Session) -> Vec<Unsafe> {
    let root = scratch_root(session);
    let mut found = Vec::new();
    for dir in root.ancestors() {
        for name in RUNNER_FILES {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_ok() {
                found.push(Unsafe {
                    setting: path.display().to_string(),
                    origin: "a directory above the scratch worktrees".into(),
                    why: format!(
                        "test runners read {name} from the directories above the one they run in, so it \
                         would steer the final check's runs from outside the repository"
                    ),
                    fix: format!(
                        "a human checks it and removes it: rm -r '{}' (or sets TMPDIR elsewhere)",
                        path.display()
                    ),
                });
            }
        }
    }
    found
}

/// Refuses (exit 5) to make a scratch worktree under a runner's file ([`above_scratch`]).
pub fn require_clean_scratch(session: &Session) -> Result<(), EngineError> {
    match above_scratch(session).into_iter().next() {
        Some(problem) => Err(EngineError::NotHermetic(Box::new(problem))),
        None => Ok(()),
    }
}

/// The driver a `filter.<driver>.<part>` setting configures.
fn driver(key: &str) -> Option<&str> {
    key.strip_prefix("filter.")
        .and_then(|rest| rest.rsplit_once('.'))
        .map(|(name, _)| name)
}

/// git-lfs's own filter, as `git lfs install` writes it: content it stores is fetched by id,
/// and what it checks out is that. Anything added to its command line is not git-lfs's.
fn is_lfs_own(key: &str, value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    let args = match words.as_slice() {
        ["git-lfs", rest @ ..] => rest,
        ["git", "lfs", rest @ ..] => rest,
        _ => return false,
    };
    let expected: &[&[&str]] = match key {
        "filter.lfs.clean" => &[&["clean", "--", "%f"]],
        "filter.lfs.smudge" => &[&["smudge", "--", "%f"], &["smudge", "--skip", "--", "%f"]],
        "filter.lfs.process" => &[&["filter-process"], &["filter-process", "--skip"]],
        _ => return false,
    };
    expected.contains(&args)
}

fn judge(setting: &Setting) -> Option<Unsafe> {
    let key = setting.key.as_str();
    let unset = |why: &str| Unsafe {
        setting: key.to_string(),
        origin: setting.origin.clone(),
        why: why.to_string(),
        fix: format!(
            "a human removes it: git config --unset-all {key} (in {})",
            setting.origin
        ),
    };
    let filter_part = key
        .strip_prefix("filter.")
        .and_then(|rest| rest.rsplit_once('.'))
        .map(|(_, part)| part);
    if let Some(part) = filter_part {
        return (matches!(part, "clean" | "smudge" | "process")
            && !setting.value.trim().is_empty()
            && !is_lfs_own(key, &setting.value))
            .then(|| {
                unset(
                    "a content filter rewrites files between the working tree and what git stores, so \
                     the commit is not the tree the gates saw (git-lfs's own filter is the one allowed)",
                )
            });
    }
    match key {
        "core.fsmonitor" if !is_false(&setting.value) => Some(unset(
            "a file system monitor tells git which files changed; one that leaves a change out makes \
             the tree taken for verification differ from the working tree",
        )),
        "core.worktree" => Some(unset(
            "git reads another directory as the working tree than the one the gates run in",
        )),
        "core.hookspath" if setting.worktree_only => Some(unset(
            "this worktree alone runs other hooks than the repository's, so the checkpoint hooks \
             do not run here",
        )),
        _ => None,
    }
}

fn is_false(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    )
}

/// Settings given to this process through the environment (`git -c` sets
/// `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT` names `GIT_CONFIG_KEY_<n>`): the git commands
/// of ours inherit them.
fn from_environment() -> Vec<Setting> {
    let setting = |key: &str, value: &str| Setting {
        key: lowercase_key(key),
        value: value.to_string(),
        origin: "the environment (`git -c`, GIT_CONFIG_*)".into(),
        worktree_only: false,
    };
    let mut out = Vec::new();
    if let Some(params) = std::env::var_os("GIT_CONFIG_PARAMETERS") {
        for (key, value) in parse_parameters(&params.to_string_lossy()) {
            out.push(setting(&key, &value));
        }
    }
    let count = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .unwrap_or(0);
    for i in 0..count.min(10_000) {
        if let Ok(key) = std::env::var(format!("GIT_CONFIG_KEY_{i}")) {
            let value = std::env::var(format!("GIT_CONFIG_VALUE_{i}")).unwrap_or_default();
            out.push(setting(&key, &value));
        }
    }
    out
}

/// `section.Sub.Key` → `section.Sub.key`: git compares section and key names without case.
fn lowercase_key(key: &str) -> String {
    match (key.split_once('.'), key.rsplit_once('.')) {
        (Some((section, _)), Some((middle, name))) if middle.len() > section.len() => format!(
            "{}{}.{}",
            section.to_lowercase(),
            &middle[section.len()..],
            name.to_lowercase()
        ),
        _ => key.to_lowercase(),
    }
}

/// `GIT_CONFIG_PARAMETERS` as git writes it: single-quoted words, `'key=value'` or
/// `'key'='value'`, separated by spaces (`'\''` is a quote inside a word).
fn parse_parameters(text: &str) -> Vec<(String, String)> {
    let mut words: Vec<(String, bool)> = Vec::new(); // (word, joined to the one before by `=`)
    let mut chars = text.chars().peekable();
    let mut joined = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let mut word = String::new();
                while let Some(c) = chars.next() {
                    if c == '\'' {
                        // `'\''`: a quote, and the word goes on.
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                            chars.next();
                            chars.next();
                            word.push('\'');
                            continue;
                        }
                        break;
                    }
                    word.push(c);
                }
                words.push((word, joined));
                joined = false;
            }
            '=' => joined = true,
            _ => {}
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (word, is_value) in words {
        match (is_value, out.last_mut()) {
            (true, Some(last)) => last.1 = word,
            _ => {
                let (key, value) = word.split_once('=').unwrap_or((&word, ""));
                out.push((key.to_string(), value.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn setting(key: &str, value: &str, worktree_only: bool) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
            origin: ".git/config".into(),
            worktree_only,
        }
    }

    #[test]
    fn filters_other_than_git_lfs_fsmonitor_core_worktree_and_a_worktree_hooks_path_are_unsafe() {
        let unsafe_ones = [
            setting("filter.x.clean", "sed s/a/b/", false),
            setting("filter.x.smudge", "cat", false),
            setting("filter.x.process", "my-filter", false),
            setting("filter.lfs.clean", "sh -c 'cat'", false),
            setting(
                "filter.lfs.clean",
                "git-lfs clean -- %f | sed s/a/b/",
                false,
            ),
            setting(
                "filter.lfs.smudge",
                "git-lfs smudge -- %f; touch /tmp/x",
                false,
            ),
            setting("filter.other.process", "git-lfs filter-process", false),
            setting("core.fsmonitor", "true", false),
            setting("core.fsmonitor", ".git/hooks/fsmonitor-watchman", false),
            setting("core.worktree", "/tmp/elsewhere", false),
            setting("core.hookspath", "/tmp/hooks", true),
        ];
        for s in &unsafe_ones {
            assert!(judge(s).is_some(), "{s:?}");
        }
        let safe = [
            setting("filter.lfs.clean", "git-lfs clean -- %f", false),
            setting("filter.lfs.smudge", "git-lfs smudge -- %f", false),
            setting("filter.lfs.process", "git-lfs filter-process", false),
            setting("filter.lfs.smudge", "git-lfs smudge --skip -- %f", false),
            setting("filter.lfs.process", "git lfs filter-process --skip", false),
            setting("filter.lfs.required", "true", false),
            setting("filter.x.clean", "", false),
            setting("core.fsmonitor", "false", false),
            setting("core.hookspath", ".husky/_", false),
            setting("core.autocrlf", "input", false),
        ];
        for s in &safe {
            assert_eq!(judge(s), None, "{s:?}");
        }
    }

    #[test]
    fn git_config_parameters_are_read_in_both_of_gits_forms() {
        assert_eq!(
            parse_parameters(r"'filter.x.clean=sed s/a/b/' 'user.name=O'\''Brien'"),
            vec![
                ("filter.x.clean".to_string(), "sed s/a/b/".to_string()),
                ("user.name".to_string(), "O'Brien".to_string())
            ]
        );
        assert_eq!(
            parse_parameters(r"'core.fsmonitor'='true' 'a.b'='c=d'"),
            vec![
                ("core.fsmonitor".to_string(), "true".to_string()),
                ("a.b".to_string(), "c=d".to_string())
            ]
        );
        assert_eq!(
            lowercase_key("Filter.MyDriver.Clean"),
            "filter.MyDriver.clean"
        );
        assert_eq!(lowercase_key("Core.FSMonitor"), "core.fsmonitor");
    }
}

#[cfg(test)]
#[path = "hermetic_tests.rs"]
mod unit_tests;
