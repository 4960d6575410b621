//! The git hooks (docs/architecture.md, "Hooks and notes"): the shim scripts from `hooks/` and how they are put in
//! place ([`install`]: install, uninstall, status, never clobbering a hook that is there),
//! and what they run ([`run`]: the `git orchestrate hook <name>` entry points).

pub mod install;
pub mod managed;
pub mod managers;

/// The hooks git-orchestrate installs, in the order it reports them (the guard protects them
/// by name, so they are defined with it).
pub use git_orchestrate_guard::product::HOOK_NAMES as NAMES;

/// The first and last line of the block a shim consists of; the same block goes into a
/// shell hook that is already there.
pub const BEGIN: &str = "# >>> git-orchestrate >>>";
pub const END: &str = "# <<< git-orchestrate <<<";

/// Set to a value to make the hooks prove they reach the binary and do nothing else
/// (`doctor` runs them so).
pub const PROBE_ENV: &str = "GIT_ORCHESTRATE_HOOK_PROBE";
/// Where the probed hook also writes its answer (`doctor`, through a hook manager).
pub const PROBE_FILE_ENV: &str = "GIT_ORCHESTRATE_HOOK_PROBE_FILE";

/// Where, relative to the git directory, `commit-msg` leaves the record of a verified
/// checkpoint for `post-commit` to attach. The `post-commit` shim tests for this path
/// itself, so that ordinary commits do not start the binary.
pub const PENDING_NOTE: &str = "orchestrator/checkpoint-note";

/// Where, relative to the common git directory, `hooks install` records the absolute path of
/// the binary: a shim runs it when `git-orchestrate` is not on the PATH git runs hooks with
/// (the shims read this path themselves).
pub const BINARY_RECORD: &str = "orchestrator/binary";

/// The shim for hook `name`, as `hooks/<name>` holds it.
pub fn shim(name: &str) -> Option<&'static str> {
    match name {
        "commit-msg" => Some(include_str!("../../hooks/commit-msg")),
        "post-commit" => Some(include_str!("../../hooks/post-commit")),
        "pre-push" => Some(include_str!("../../hooks/pre-push")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shim_is_one_block_after_a_shebang() {
        for name in NAMES {
            let shim = shim(name).unwrap();
            let mut lines = shim.lines();
            assert_eq!(lines.next(), Some("#!/bin/sh"), "{name}");
            assert_eq!(lines.next(), Some(BEGIN), "{name}");
            assert_eq!(shim.lines().last(), Some(END), "{name}");
            assert!(shim.ends_with('\n'), "{name}");
            assert!(
                shim.contains(&format!("\"$git_orchestrate\" hook {name}")),
                "{name}"
            );
            assert!(
                shim.contains(&format!(
                    "$(git rev-parse --git-common-dir)/{BINARY_RECORD}\""
                )),
                "{name}: the shim and the binary agree on the record's path"
            );
        }
        assert!(
            shim("post-commit")
                .unwrap()
                .contains(&format!("/{PENDING_NOTE}\"")),
            "the shim and the binary agree on the pending note's path"
        );
        assert_eq!(shim("pre-commit"), None);
    }
}
