//! What the server hook checks before it judges a move of main (docs/integrity.md, "The
//! server is part of what is trusted"): it runs no PR's command as root outside a container
//! unless the server's administrator said so, and nothing it depends on (this program, git,
//! their directories and every directory above them, the directories of its PATH, the hooks,
//! the repository and its parent, the user's home and git configuration) is writable by
//! those commands.

use std::path::{Path, PathBuf};

use super::verifier::{Judged, Verifier, git_installation, home};
use crate::engine::EngineError;

/// The environment variable a server's administrator sets (in the daemon's environment) to
/// let the hook run the PR's commands as root outside a container.
pub const ALLOW_ROOT_ENV: &str = "GIT_ORCHESTRATE_ALLOW_ROOT";

/// The repository setting that says the same, or with `false`, never as root.
pub const ALLOW_ROOT_KEY: &str = "orchestrate.allowRoot";

/// Why the hook judges nothing of this push, if it does not: it would run the PR's commands
/// as root, or they could write what the hook depends on (named).
pub fn refusal(judged: &Judged, verifier: &Verifier) -> Result<Option<String>, EngineError> {
    let setting = allow_root_setting(judged)?;
    let root = rustix::process::geteuid().is_root();
    let env = std::env::var_os(ALLOW_ROOT_ENV).is_some_and(|v| v == "1" || v == "true");
    if !root_allowed(root, setting, env, in_container) {
        return Ok(Some(format!(
            "the server hook runs as root{}, and the PR's tests would run as root with it: run \
             the hook as a dedicated user (docs/integrity.md), or, where root is meant, git \
             config {ALLOW_ROOT_KEY} true in this repository",
            if setting == Some(false) {
                format!(" and this repository's {ALLOW_ROOT_KEY} is false")
            } else {
                " outside a container".to_string()
            }
        )));
    }
    let dependencies = dependencies(judged)?;
    let writable = match verifier.reachable(&dependencies) {
        // Unconfined (the administrator's choice), or unconfinable: judged as such later.
        None | Some(Err(_)) => return Ok(None),
        Some(Ok(writable)) => writable,
    };
    Ok(writable.first().map(|first| {
        let more = match writable.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        format!(
            "the PR's tests could write {}{more}, on the way to what this hook depends on: they \
             could change what judges the next push. A human makes it read-only to the server's user or \
             runs the hook as another user (docs/integrity.md)",
            first.display()
        )
    }))
}

/// `orchestrate.allowRoot` of the judged repository: unset, true or false.
fn allow_root_setting(judged: &Judged) -> Result<Option<bool>, EngineError> {
    let values = judged.git.config_all(ALLOW_ROOT_KEY)?;
    let Some(value) = values.last() else {
        return Ok(None);
    };
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(Some(true)),
        "false" | "no" | "off" | "0" => Ok(Some(false)),
        _ => Err(EngineError::BadInput {
            message: format!("{ALLOW_ROOT_KEY} is {value:?}; it is true or false"),
            hint: format!("git config {ALLOW_ROOT_KEY} false"),
        }),
    }
}

/// Whether the PR's commands may run as this user: any user but root; root where the
/// repository says `true` or the environment allows it, or inside a container (where root
/// is the container's), unless the repository says `false`.
fn root_allowed(
    root: bool,
    setting: Option<bool>,
    env: bool,
    in_container: impl Fn() -> bool,
) -> bool {
    !root
        || match setting {
            Some(allowed) => allowed,
            None => env || in_container(),
        }
}

/// The marks container runtimes leave: Docker's and Podman's files, a cgroup named by one,
/// or the `container` variable systemd-nspawn, LXC and Podman give the first process.
fn in_container() -> bool {
    if Path::new("/.dockerenv").exists() || Path::new("/run/.containerenv").exists() {
        return true;
    }
    let cgroup = std::fs::read_to_string("/proc/1/cgroup").unwrap_or_default();
    if ["docker", "kubepods", "containerd", "libpod", "lxc"]
        .iter()
        .any(|hint| cgroup.contains(hint))
    {
        return true;
    }
    std::fs::read("/proc/1/environ")
        .unwrap_or_default()
        .split(|b| *b == 0)
        .any(|var| var.starts_with(b"container="))
}

/// What the hook depends on, as named and as resolved (a link on the way is a dependency
/// too); the probe goes up from each ([`crate::exec::confine::Confinement::reachable`]).
fn dependencies(judged: &Judged) -> Result<Vec<PathBuf>, EngineError> {
    let common = judged.git.common_dir()?;
    let common = common.canonicalize().unwrap_or(common);
    let hooks = common.join("hooks");
    let mut paths = vec![
        hooks.join("pre-receive"),
        hooks.join("post-receive"),
        hooks,
        common.join("config"),
        common.clone(),
    ];
    if let Some(parent) = common.parent() {
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let hooks = entry.path().join("hooks");
            if hooks.is_dir() {
                paths.push(hooks);
            }
        }
    }
    paths.extend(std::env::current_exe().ok());
    paths.extend(git_installation(&judged.git));
    // Every directory of this hook's PATH, the daemon's: git's own commands are found
    // there (the `git receive-pack` that runs this hook among them), so a test that could
    // put a `git` in one ahead of git's own would have every later push received without
    // the hook.
    paths.extend(
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| dir.is_absolute()),
    );
    for dir in home() {
        paths.push(dir.join(".gitconfig"));
        paths.push(dir.join(".config").join("git"));
        paths.push(dir.join("git"));
        paths.push(dir);
    }
    let mut all: Vec<PathBuf> = Vec::new();
    for path in paths {
        all.extend(path.canonicalize().ok());
        all.push(path);
    }
    all.sort();
    all.dedup();
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_runs_the_prs_commands_only_where_it_is_meant() {
        let never = || panic!("not asked");
        assert!(root_allowed(false, Some(false), false, never));
        assert!(root_allowed(true, Some(true), false, never));
        assert!(!root_allowed(true, Some(false), true, never));
        assert!(root_allowed(true, None, true, never));
        assert!(root_allowed(true, None, false, || true));
        assert!(!root_allowed(true, None, false, || false));
    }
}
