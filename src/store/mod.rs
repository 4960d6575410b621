//! The only code that knows ref names and tree paths (docs/refs.md): reads a workflow's tip
//! snapshot in-process with gix, writes a transition as blob/tree/commit followed by one
//! compare-and-swap ref update, and reads the history and the repository facts the engine
//! needs (branches, HEAD, files committed on the main branch). Each room is a file of its own;
//! the [`Store`] they all add methods to, and how it is opened, are here.

mod archive;
pub mod archive_filter;
mod backend;
mod branches;
mod cas;
mod checkouts;
mod checkpoints;
mod claims;
mod error;
mod export;
mod files;
mod fingerprint;
mod flocks;
mod history;
mod index_tree;
mod layout;
mod locks;
mod loose;
mod main_line;
mod names;
mod notes;
mod objects;
mod progress;
mod refs;
pub(crate) mod regular;
mod remote;
mod runs;
mod worktree_tree;
pub use runs::{runs_ref, tracking_runs_prefix};
mod settings;
mod signature;
mod snapshot;
mod tickets;
mod time;
mod tips;
mod workflow;
mod write;

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::FullName;

pub use backend::{RefCommandFailure, RefCommands};
pub use branches::FoundCommit;
pub use checkouts::Checkout;
pub use checkpoints::{FoundCheckpoint, is_checkpoint_message};
pub use claims::{Claim, claim_ref, one_line, tracking_claim_ref};
use error::git_err;
pub use error::{StoreError, WriteError, error_chain};
pub use export::{EntryType, TreeEntry};
pub use files::overwrite;
pub use flocks::{RunLock, RunLockHeld};
pub use history::{CommitRecord, HistoryEntry, HistoryPage};
pub use locks::LockSighting;
pub use main_line::{MainLine, MergeRecord};
use names::WORKFLOWS;
pub use names::{ARCHIVE, CLAIMS};
pub use names::{
    DEFAULT_WORKFLOW, EVENT_HEADER, REFLOG_PREFIX, SIGNATURE_HEADER, WORKFLOW_CONFIG_KEY,
    WORKFLOW_REF_PREFIXES, branch_of_ref, branch_ref, is_bookkeeping_ref, is_local_workflow_ref,
    is_notes_ref, is_replace_ref, is_valid_branch_name, valid_workflow_name, workflow_of_ref,
    workflow_ref,
};
pub use notes::{ATTEST_CI_NOTES_REF, ATTEST_NOTES_REF, NOTES_REF, NoteReader};
pub use remote::{
    Backup, LocalRef, Relation, Standing, exact_notes_refspec, fetch_hidden_refs, fetch_refspecs,
    is_state_ref, sync_refspecs, tracking_archive_ref, tracking_branch_ref, tracking_notes_ref,
    tracking_ref, unforced_claims_refspec, writes_local_state,
};
pub use remote::{is_state_ref_name, transition_history_globs};
pub use settings::Setting;
pub use snapshot::Snapshot;
pub use snapshot::TICKET_FILE;
pub use tickets::TicketSnapshot;
pub use time::format_time;
pub use tips::{Landing, ReflogEntry};
pub use workflow::{Workflow, WorkflowKind};
pub use write::{FileChange, SignedAnswer, TransitionWrite};

pub struct Store {
    repo: layout::Repo,
    workflow: String,
    ref_name: FullName,
    /// The workflow is the one git config selects (`orchestrate.workflow`, a worktree's own
    /// included), not one named by the caller.
    selected_by_config: bool,
    /// Where the refs are kept: gix reads the files backend; git's commands the others.
    refs: backend::RefBackend,
    /// The workflow's own objects, read with one inflate state (`loose.rs`).
    loose: std::sync::Arc<loose::LooseReader>,
    /// The last workflow decoded, by its commit and ref, for a store that lives across
    /// calls (the MCP server's): a commit never changes, so neither does what it holds.
    remembered: Option<std::cell::RefCell<Option<(ObjectId, String, Workflow)>>>,
    /// Every object read, by id, for a store that reads many workflows at once
    /// ([`Store::with_pack_cache`]): the board reads a tip's commit, tree and state again for
    /// its ledger, and a hundred claims share one tree.
    memo: Option<std::cell::RefCell<loose::Memo>>,
}

impl Store {
    /// The repository in `dir` itself (no discovery upwards), read as a verifier reads it:
    /// blind to the environment and to every configuration file but the repository's own
    /// (docs/integrity.md, "attest"). Replace objects are ignored as everywhere.
    pub fn open_isolated(dir: &Path, workflow: &str) -> Result<Store, StoreError> {
        let store = Self::open_isolated_any(dir, workflow)?;
        if store.repo.workdir().is_none() {
            return Err(StoreError::Bare);
        }
        Ok(store)
    }

    /// The repository in `dir`, bare or not, read as [`Store::open_isolated`] reads it: for
    /// the notes a git server's hook writes.
    pub fn open_for_notes(dir: &Path) -> Result<Store, StoreError> {
        Self::open_isolated_any(dir, DEFAULT_WORKFLOW)
    }

    fn open_isolated_any(dir: &Path, workflow: &str) -> Result<Store, StoreError> {
        if !valid_workflow_name(workflow) {
            return Err(StoreError::BadWorkflowName(workflow.to_string()));
        }
        let options =
            gix::open::Options::isolated().config_overrides(["core.useReplaceRefs=false"]);
        let repo = gix::ThreadSafeRepository::open_opts(dir, options)
            .map(gix::Repository::from)
            .map_err(|e| {
                StoreError::NotARepository(format!("cannot open the git repository: {e}"))
            })?;
        Self::addressing(Self::opened(repo), workflow)
    }

    /// gix's `repo`, its object cache sized.
    fn opened(mut repo: gix::Repository) -> layout::Repo {
        // One call reads some objects more than once (main's commit for the configuration,
        // the master plan and the main line; the configuration blob): decoded once, kept
        // while the store lives. Objects never change under their id, so a long-lived server
        // reads nothing stale; the cap bounds what it holds.
        repo.object_cache_size_if_unset(layout::OBJECT_CACHE_BYTES);
        layout::Repo::opened(repo)
    }

    /// The store of `repo`, addressing workflow `workflow` (a valid name).
    fn addressing(repo: layout::Repo, workflow: &str) -> Result<Store, StoreError> {
        let refs = backend::ref_backend(&repo)?;
        let ref_name = FullName::try_from(format!("{WORKFLOWS}{workflow}"))
            .map_err(|_| StoreError::BadWorkflowName(workflow.to_string()))?;
        Ok(Store {
            loose: std::sync::Arc::new(loose::LooseReader::at(repo.objects_dir())),
            repo,
            workflow: workflow.to_string(),
            ref_name,
            selected_by_config: false,
            refs,
            remembered: None,
            memo: None,
        })
    }

    /// Finds the repository containing `dir` (honouring `GIT_DIR` and friends, as hooks set
    /// them) and addresses workflow `workflow` in it.
    pub fn discover(dir: &Path, workflow: &str) -> Result<Store, StoreError> {
        Self::discover_selected(dir, Some(workflow))
    }

    /// As [`Self::discover`]; with no workflow named, the one git config selects
    /// (`orchestrate.workflow`, worktree config included), else `main` (docs/refs.md, "Refs").
    pub fn discover_selected(dir: &Path, workflow: Option<&str>) -> Result<Store, StoreError> {
        if let Some(workflow) = workflow
            && !valid_workflow_name(workflow)
        {
            return Err(StoreError::BadWorkflowName(workflow.to_string()));
        }
        let repo = match layout::plain(dir) {
            Some(plain) => layout::Repo::plain(dir, plain),
            None => Self::opened(layout::open_without_replacements(dir)?),
        };
        if repo.workdir().is_none() {
            return Err(StoreError::Bare);
        }
        let configured = match workflow {
            Some(_) => None,
            None => repo
                .config_string(WORKFLOW_CONFIG_KEY)
                .map(|w| w.to_str_lossy().into_owned()),
        };
        let selected_by_config = configured.is_some();
        let workflow = match (workflow, configured) {
            (Some(w), _) => w.to_string(),
            (None, Some(w)) => w,
            (None, None) => DEFAULT_WORKFLOW.to_string(),
        };
        let workflow = workflow.as_str();
        if !valid_workflow_name(workflow) {
            return Err(StoreError::BadWorkflowName(workflow.to_string()));
        }
        let mut store = Self::addressing(repo, workflow)?;
        store.selected_by_config = selected_by_config;
        Ok(store)
    }

    /// True when no workflow was named (`--workflow`, `GIT_ORCHESTRATE_WORKFLOW`) and git
    /// config (`orchestrate.workflow`, a worktree's own included) selected this one: what is
    /// started here selects it again without being told.
    pub fn workflow_selected_by_config(&self) -> bool {
        self.selected_by_config
    }

    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// This store, reading through a cache of decompressed pack entries and keeping every
    /// object it reads (up to [`loose::Memo::BYTES`]): for a command that reads many
    /// workflows at once (`board`), whose state blobs are deltas of one another in a packed
    /// repository. The one-workflow commands keep gix's default, no cache, and the memory it
    /// saves.
    pub fn with_pack_cache(&self) -> Store {
        const BYTES: usize = 16 << 20;
        Store {
            repo: self.repo.with_pack_cache(BYTES),
            workflow: self.workflow.clone(),
            ref_name: self.ref_name.clone(),
            selected_by_config: self.selected_by_config,
            refs: self.refs.clone(),
            loose: std::sync::Arc::clone(&self.loose),
            remembered: None,
            memo: Some(std::cell::RefCell::new(loose::Memo::default())),
        }
    }

    /// Keeps the last workflow read, for a store that answers many calls: one whose tip has
    /// not moved is not decoded again.
    pub fn remember_workflows(&mut self) {
        self.remembered = Some(std::cell::RefCell::new(None));
    }

    /// gix's repository, opened now if the store found a plain one without it.
    fn repo(&self) -> Result<&gix::Repository, StoreError> {
        self.repo.get()
    }

    /// `refs/orchestrator/workflows/<name>`; see [`workflow_ref`].
    pub fn ref_name(&self) -> String {
        self.ref_name.as_bstr().to_string()
    }

    pub fn workdir(&self) -> &Path {
        self.repo.workdir().unwrap_or_else(|| self.repo.git_dir())
    }

    pub fn index_path(&self) -> PathBuf {
        self.repo.index_path()
    }

    /// This working tree's git directory (`.git`, or `.git/worktrees/<name>` in a linked
    /// worktree): where state that belongs to one working tree is kept.
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The repository's git directory shared by all its worktrees: refs, hooks, config.
    pub fn common_dir(&self) -> &Path {
        self.repo.common_dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// `git orchestrate worktree add` records a linked worktree's workflow in its own
    /// `config.worktree`: the store there selects it, the primary worktree does not, and a
    /// named workflow still wins (docs/worktrees.md).
    #[test]
    fn a_linked_worktrees_own_config_selects_its_workflow() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("repo");
        std::fs::create_dir(&d).unwrap();
        git(&d, &["init", "--quiet", "--initial-branch=main"]);
        git(&d, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        let linked = dir.path().join("linked");
        let linked_str = linked.to_str().unwrap();
        git(
            &d,
            &["worktree", "add", "--quiet", "--detach", linked_str, "main"],
        );
        git(&d, &["config", "extensions.worktreeConfig", "true"]);
        git(
            &linked,
            &["config", "--worktree", WORKFLOW_CONFIG_KEY, "w1"],
        );
        let selected = Store::discover_selected(&linked, None).unwrap();
        assert_eq!(selected.workflow(), "w1");
        assert!(selected.workflow_selected_by_config());
        assert!(
            !Store::discover_selected(&linked, Some("w1"))
                .unwrap()
                .workflow_selected_by_config()
        );
        assert_eq!(
            Store::discover_selected(&linked.join("."), Some("other"))
                .unwrap()
                .workflow(),
            "other"
        );
        assert_eq!(
            Store::discover_selected(&d, None).unwrap().workflow(),
            DEFAULT_WORKFLOW,
            "the primary worktree has no workflow of its own"
        );
        // The primary's own config.worktree is its own, not the linked worktree's.
        git(&d, &["config", "--worktree", WORKFLOW_CONFIG_KEY, "prime"]);
        assert_eq!(
            Store::discover_selected(&d, None).unwrap().workflow(),
            "prime"
        );
        assert_eq!(
            Store::discover_selected(&linked, None).unwrap().workflow(),
            "w1"
        );
    }

    /// A replace ref shows another object under an id; the store reads what is stored.
    #[test]
    fn replace_refs_do_not_change_what_the_store_reads() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        std::fs::write(d.join("gates.toml"), "strict\n").unwrap();
        git(d, &["add", "gates.toml"]);
        git(d, &["commit", "--quiet", "-m", "one"]);
        let pinned = git(d, &["rev-parse", "HEAD:gates.toml"]);
        std::fs::write(d.join("weak"), "weak\n").unwrap();
        let weak = git(d, &["hash-object", "-w", "weak"]);
        git(d, &["replace", &pinned, &weak]);
        assert_eq!(
            git(d, &["cat-file", "-p", &pinned]),
            "weak",
            "the replacement is in force for git"
        );
        let store = Store::discover(d, "main").unwrap();
        assert_eq!(store.blob(&pinned).unwrap(), b"strict\n");
        let found = store.file_id_at_branch("main", "gates.toml").unwrap();
        assert_eq!(found.and_then(|(_, blob)| blob), Some(pinned));
    }

    /// `file_id_at_branch` and `tree_entry` read commits and trees through the store's reader
    /// (`loose.rs`, else gix): what they find is what git finds, loose or packed, for names gix's path lookup would take.
    #[test]
    fn a_files_id_on_a_branch_is_the_one_git_names() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        std::fs::create_dir_all(d.join("docs/plan")).unwrap();
        std::fs::write(d.join("docs/plan/Active.md"), "# Plan\n").unwrap();
        std::fs::write(d.join("top.toml"), "x = 1\n").unwrap();
        git(d, &["add", "."]);
        git(d, &["commit", "--quiet", "-m", "one"]);
        let tip = git(d, &["rev-parse", "main"]);
        let id = |path: &str| git(d, &["rev-parse", &format!("main:{path}")]);
        for packed in [false, true] {
            if packed {
                git(d, &["gc", "--quiet", "--prune=now"]);
                assert!(!d.join(".git/objects").join(&tip[..2]).exists(), "packed");
            }
            let store = Store::discover(d, "main").unwrap();
            let found = |path: &str| store.file_id_at_branch("main", path).unwrap();
            for (path, wanted) in [
                ("top.toml", Some(id("top.toml"))),
                ("docs/plan/Active.md", Some(id("docs/plan/Active.md"))),
                ("docs//plan/Active.md", Some(id("docs/plan/Active.md"))),
                ("docs/plan", Some(id("docs/plan"))),
                ("docs/plan/", Some(id("docs/plan"))),
                ("docs/missing.md", None),
                ("top.toml/x", None),
                ("./top.toml", None),
                ("/top.toml", None),
                ("", None),
            ] {
                assert_eq!(found(path), Some((tip.clone(), wanted.clone())), "{path:?}");
                let tree = git(d, &["rev-parse", "main^{tree}"]);
                let entry = store.tree_entry(&tree, path).unwrap();
                assert_eq!(entry.map(|e| e.id.to_string()), wanted, "{path:?}");
            }
            assert_eq!(
                store.file_id_at_branch("nothing", "top.toml").unwrap(),
                None
            );
        }
    }

    /// A ref read from its own file (`refs.rs`) is what gix's lookup and peel give: loose,
    /// packed, through an annotated tag, and symbolic.
    #[test]
    fn a_ref_read_from_its_file_is_the_commit_git_names() {
        use crate::test_git::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "--quiet", "--initial-branch=main"]);
        git(d, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
        let tip = git(d, &["rev-parse", "main"]);
        git(d, &["tag", "-a", "-m", "t", "v1"]);
        git(d, &["update-ref", "refs/orchestrator/t", "v1"]);
        git(
            d,
            &["symbolic-ref", "refs/orchestrator/s", "refs/heads/main"],
        );
        let peeled = |name: &str| {
            Store::discover(d, "main")
                .unwrap()
                .peeled_ref(name)
                .unwrap()
                .map(|id| id.to_string())
        };
        for name in [
            "refs/heads/main",
            "refs/orchestrator/t",
            "refs/orchestrator/s",
        ] {
            assert_eq!(peeled(name), Some(tip.clone()), "{name}");
        }
        assert_eq!(peeled("refs/orchestrator/none"), None);
        // Packed, the loose files gone: gix reads them.
        git(d, &["pack-refs", "--all"]);
        git(d, &["gc", "--quiet", "--prune=now"]);
        assert_eq!(peeled("refs/heads/main"), Some(tip.clone()));
        // A loose file is the ref whatever packed-refs says, as in git.
        git(d, &["commit", "--quiet", "--allow-empty", "-m", "two"]);
        let two = git(d, &["rev-parse", "main"]);
        assert_eq!(peeled("refs/heads/main"), Some(two.clone()));
    }
}
