//! The names the store gives things (docs/refs.md): the refs of workflows and branches, the
//! commit header and reflog prefix of a transition, and which names are valid.

use gix::refs::FullName;

pub(super) const WORKFLOWS: &str = "refs/orchestrator/workflows/";
pub const CLAIMS: &str = "refs/orchestrator/claims/";
/// The one ref finished workflows are archived under (docs/refs.md, "The archive").
pub const ARCHIVE: &str = "refs/orchestrator/archive";
pub(super) const REMOTES: &str = "refs/orchestrator/remotes/";

/// The git config key that selects a worktree's workflow when none is named.
pub const WORKFLOW_CONFIG_KEY: &str = "orchestrate.workflow";
pub const DEFAULT_WORKFLOW: &str = "main";

/// The commit header that records the event a transition applied.
pub const EVENT_HEADER: &str = "orchestrator-event";

/// The commit header that holds the SSH signature of a signed human answer (docs/refs.md,
/// "Signed answers"): the armored text, its lines continued as git continues `gpgsig`'s.
pub const SIGNATURE_HEADER: &str = "orchestrator-signature";

/// How a move of a workflow ref that git-orchestrate made starts its reflog message.
pub const REFLOG_PREFIX: &str = "git-orchestrate: ";

pub(super) const BRANCHES: &str = "refs/heads/";

/// The full ref name of branch `name`: a revision that no tag of the same name can shadow.
pub fn branch_ref(name: &str) -> String {
    format!("{BRANCHES}{name}")
}

/// The branch a full ref name names, when it is a branch.
pub fn branch_of_ref(reference: &str) -> Option<&str> {
    reference.strip_prefix(BRANCHES)
}

/// True for the ref the verification notes live in, or any other notes ref.
pub fn is_notes_ref(reference: &str) -> bool {
    reference.starts_with("refs/notes/")
}

/// The ref a workflow's history lives in: `refs/orchestrator/workflows/<name>`.
pub fn workflow_ref(workflow: &str) -> String {
    format!("{WORKFLOWS}{workflow}")
}

/// The workflow a state ref names: `refs/orchestrator/workflows/<name>`, or a remote's copy
/// `refs/orchestrator/remotes/<remote>/workflows/<name>`; `None` for anything else.
pub fn workflow_of_ref(reference: &str) -> Option<&str> {
    if let Some(name) = reference.strip_prefix(WORKFLOWS) {
        return Some(name).filter(|n| !n.contains('/'));
    }
    let rest = reference.strip_prefix("refs/orchestrator/remotes/")?;
    let (_, name) = rest.split_once("/workflows/")?;
    Some(name).filter(|n| !n.contains('/'))
}

/// True for this clone's own workflow refs (not a remote's copy).
pub fn is_local_workflow_ref(reference: &str) -> bool {
    reference.starts_with(WORKFLOWS) && workflow_of_ref(reference).is_some()
}

/// True for what is a clone's own bookkeeping under `refs/orchestrator/`, never a client's to
/// push to a server: the remotes' copies, `sync --take`'s backups, and names nested below a
/// workflow's (`workflows/a/b`, which no workflow has).
pub fn is_bookkeeping_ref(reference: &str) -> bool {
    reference.starts_with("refs/orchestrator/remotes/")
        || reference.starts_with("refs/orchestrator/backups/")
        || (reference.starts_with(WORKFLOWS) && !is_local_workflow_ref(reference))
}

/// True for a replace ref: git would show another object in place of the one it names.
pub fn is_replace_ref(reference: &str) -> bool {
    reference.starts_with("refs/replace/")
}

/// The prefixes of every workflow ref, this clone's and the remotes' copies, for listing them.
pub const WORKFLOW_REF_PREFIXES: [&str; 2] = [WORKFLOWS, "refs/orchestrator/remotes/"];

/// True when `name` can be a branch: git's ref-format rules, checked by gix.
pub fn is_valid_branch_name(name: &str) -> bool {
    FullName::try_from(branch_ref(name)).is_ok()
}

/// True when `name` can name a workflow (see [`StoreError::BadWorkflowName`]).
pub fn valid_workflow_name(name: &str) -> bool {
    // git reads `HEAD`, `FETCH_HEAD`, `ORIG_HEAD`, … (any case, on a file system that folds
    // it) as its own pseudo-refs wherever a branch of that name is asked for.
    let upper = name.to_ascii_uppercase();
    let special = upper == "HEAD" || upper.ends_with("_HEAD") || upper == "AUTO_MERGE";
    !special
        && !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_names() {
        for good in ["main", "feature-x", "a.b_c"] {
            assert!(valid_workflow_name(good), "{good}");
        }
        for bad in [
            "",
            "-x",
            ".x",
            "a..b",
            "a/b",
            "x.lock",
            "a b",
            "ä",
            "*",
            "HEAD",
            "head",
            "FETCH_HEAD",
            "ORIG_HEAD",
            "AUTO_MERGE",
        ] {
            assert!(!valid_workflow_name(bad), "{bad}");
        }
    }

    #[test]
    fn branch_names_follow_git_rules() {
        assert!(is_valid_branch_name("feat/add-numbers"));
        assert!(!is_valid_branch_name("feat..x"));
        assert!(!is_valid_branch_name("x.lock"));
        assert!(!is_valid_branch_name("-x/"));
    }
}
