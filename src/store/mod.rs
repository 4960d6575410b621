//! The only code that knows ref names and tree paths (docs/refs.md): reads a workflow's tip
//! snapshot in-process with gix, writes a transition as blob/tree/commit followed by one
//! compare-and-swap ref update, and reads the history and the repository facts the engine
//! needs (branches, HEAD, files committed on the main branch).

mod export;
mod loose;
mod main_line;
mod notes;
mod remote;
mod settings;
mod time;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

use crate::workflow::branch_name::BranchHolder;
use crate::workflow::plan::{Plan, PlanSummary, StepId, StepSummary, StepType};
use crate::workflow::state::{State, StateWire, Status};
use crate::workflow::{Human, PlanChange};

pub use export::{EntryType, TreeEntry};
pub use main_line::{MainLine, MergeRecord};
pub use notes::{NOTES_REF, NoteReader};
pub use remote::{
    Backup, LocalRef, Relation, Standing, exact_notes_refspec, fetch_refspecs, is_state_ref,
    sync_refspecs, tracking_branch_ref, tracking_notes_ref, tracking_ref, writes_local_state,
};
pub use remote::{is_state_ref_name, transition_history_globs};
pub use settings::Setting;
pub use time::format_time;

const WORKFLOWS: &str = "refs/orchestrator/workflows/";
/// The last tip of each workflow ref, one file per workflow, under the git directory.
const TIP_MARKERS: &str = "orchestrator/tips";
/// The git config key that selects a worktree's workflow when none is named.
pub const WORKFLOW_CONFIG_KEY: &str = "orchestrate.workflow";
pub const DEFAULT_WORKFLOW: &str = "main";
/// `git orchestrate run`'s record of its turns, one ref per workflow.
const RUNS: &str = "refs/orchestrator/runs/";
/// The agent Stop hook's loop guard, one file per agent session.
const STOP_BLOCKS: &str = "orchestrator/stop-blocks";
/// `init --agent`'s record of the client files as they were.
const AGENT_SETUP: &str = "orchestrator/agent-setup";
/// The commit header that records the event a transition applied.
pub const EVENT_HEADER: &str = "orchestrator-event";
const STATE_FILE: &str = "state.json";
const PLAN_FILE: &str = "pr.json";
const OUTPUT_FILE: &str = "output.log";
const ESCALATION_FILE: &str = "escalation.md";
const REVIEW_FILE: &str = "review.json";

use crate::{FALLBACK_EMAIL, FALLBACK_NAME};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No repository holds the directory, or the one found cannot be opened: the whole
    /// message, said once.
    #[error("{0}")]
    NotARepository(String),
    #[error("the repository has no working tree; git orchestrate needs one to run tests in")]
    Bare,
    #[error(
        "invalid workflow name \"{0}\": use letters, digits, '.', '_' and '-' (not starting with '.' or '-')"
    )]
    BadWorkflowName(String),
    #[error("internal error: {0}")]
    Internal(String),
    #[error("cannot read {what} of {reference} (commit {commit}): {message}")]
    Corrupt {
        reference: String,
        commit: String,
        what: String,
        message: String,
    },
    #[error(
        "{} {reference} is locked by {} (left {}s ago): a git process that crashed can leave such a lock \
         behind",
        if reference.starts_with("refs/notes/") { "the notes ref" } else { "workflow ref" },
        path.display(),
        age.as_secs()
    )]
    Locked {
        reference: String,
        path: PathBuf,
        age: std::time::Duration,
    },
    #[error(
        "workflow ref {reference} is missing, but the workflow existed here (its last tip was {tip}): something \
         deleted the ref, and starting a new workflow would drop its history"
    )]
    Vanished {
        reference: String,
        tip: String,
        /// Whether the tip commit is still in the object store (then `update-ref` restores it).
        restorable: bool,
    },
    #[error("git object store: {0}")]
    Git(String),
    /// gix failed; the OS's answer ("No space left on device", "Read-only file system") is
    /// several sources down, and is printed as what caused it.
    #[error("git object store: {message}")]
    Objects {
        message: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A ref lock older than this is not another command at work (they hold it for
/// milliseconds) but the remains of a crash.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(30);

/// A gix error, its causes kept: the OS's answer is several levels down, and that is what
/// a person needs.
fn git_err(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Objects {
        message: e.to_string(),
        source: Box::new(e),
    }
}

/// `e` and its sources, joined with ": ", each message once.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

/// A ref's lock file at one moment; two sightings are equal when the same file, unchanged,
/// locks a ref that has not moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSighting {
    pub reference: String,
    pub path: PathBuf,
    identity: (u64, u64, std::time::SystemTime),
    value: Option<ObjectId>,
    pub age: std::time::Duration,
}

impl LockSighting {
    pub fn same_lock(&self, other: &LockSighting) -> bool {
        (&self.reference, &self.path, &self.identity, &self.value)
            == (&other.reference, &other.path, &other.identity, &other.value)
    }

    pub fn into_error(self) -> StoreError {
        StoreError::Locked {
            reference: self.reference,
            path: self.path,
            age: self.age,
        }
    }
}

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another process moved the workflow ref since it was read: re-run from a fresh read.
    #[error("the workflow changed while this command ran")]
    Conflict,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The state of a workflow at its tip. The plan is summarised; the full plan is parsed only
/// when asked for ([`Store::plan`]), because a 200-task `pr.json` costs more to parse than
/// everything else a `get-task` does.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub tip: ObjectId,
    pub state: State,
    /// The active plan's summary, `None` when no plan is active.
    pub summary: Option<PlanSummary>,
    /// The full plan, progress included, when reading had to parse it anyway (a missing or
    /// stale summary).
    parsed: Option<Plan>,
    /// The steps completed since `pr.json` was stored.
    done: Vec<StepId>,
    /// The store's plan record as read, when it describes this `pr.json`.
    progress: Option<Progress>,
    entries: BTreeMap<String, ObjectId>,
}

/// `plan_progress` in `state.json`: the store's record of the plan. `pr.json` is written
/// once per plan; the steps completed since ride here, so a passing step rewrites a few
/// bytes, not the plan. The summary spares `get-task` and `status` parsing a large plan, and
/// is trusted only while `plan` names the `pr.json` beside it (a hand edit makes it stale).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Progress {
    plan: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    done: Vec<StepId>,
    summary: PlanSummary,
    /// The steps after the current one in its task: completing the current step then needs
    /// no parse of the plan to know the next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ahead: Vec<StepSummary>,
}

impl Progress {
    /// The record for `plan` stored as blob `id`, with `done` completed since.
    fn of(plan: &Plan, id: String, done: Vec<StepId>) -> Progress {
        let summary = plan.summary();
        let ahead = summary
            .current
            .as_ref()
            .and_then(|c| plan.tasks.get(c.id.task).map(|t| (c.id, t)))
            .map(|(id, task)| {
                (id.step + 1..task.tdd_steps.len())
                    .filter_map(|s| plan.step_summary(StepId::new(id.task, s)))
                    .collect()
            })
            .unwrap_or_default();
        Progress {
            plan: id,
            done,
            summary,
            ahead,
        }
    }

    /// The record once `step`, the current step, is done, when the next one is in the same
    /// task (every step before it is done, since steps are done in order).
    fn completed(&self, step: StepId) -> Option<Progress> {
        let current = self.summary.current.as_ref()?;
        let (next, rest) = self.ahead.split_first()?;
        if current.id != step {
            return None;
        }
        let mut done = self.done.clone();
        done.push(step);
        Some(Progress {
            plan: self.plan.clone(),
            done,
            summary: PlanSummary {
                done: self.summary.done + 1,
                current: Some(StepSummary {
                    after_red: current.kind == StepType::Red,
                    ..next.clone()
                }),
                ..self.summary.clone()
            },
            ahead: rest.to_vec(),
        })
    }
}

impl Snapshot {
    pub fn has_output_log(&self) -> bool {
        self.entries.contains_key(OUTPUT_FILE)
    }

    /// The blob `pr.json` names, while a plan is active.
    pub fn plan_blob(&self) -> Option<ObjectId> {
        self.entries.get(PLAN_FILE).copied()
    }

    /// The steps completed since `pr.json` was stored.
    pub fn done(&self) -> &[StepId] {
        &self.done
    }
}

/// What `audit` reads of a transition commit besides its state.
#[derive(Clone, Debug)]
pub struct CommitRecord {
    pub parents: Vec<ObjectId>,
    /// The `orchestrator-event` header: the event the transition applied, as JSON.
    pub event: Option<String>,
    pub history: HistoryEntry,
}

/// One line of a ref's reflog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflogEntry {
    pub old: String,
    pub new: String,
    pub message: String,
}

/// How a move of a workflow ref that git-orchestrate made starts its reflog message.
pub const REFLOG_PREFIX: &str = "git-orchestrate: ";

/// A change to one file of the workflow tree.
#[derive(Debug)]
pub enum FileChange<'a, T: ?Sized> {
    Keep,
    Set(&'a T),
    Remove,
}

// By hand: the derives would demand `T: Copy`, which `[u8]` is not.
impl<T: ?Sized> Clone for FileChange<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for FileChange<'_, T> {}

/// One transition to store.
pub struct TransitionWrite<'a> {
    pub event: &'a str,
    pub from: Option<Status>,
    pub state: &'a State,
    pub plan: &'a PlanChange,
    pub output_log: FileChange<'a, [u8]>,
    pub escalation: FileChange<'a, [u8]>,
    pub review: FileChange<'a, [u8]>,
    pub step: Option<String>,
    pub summary: &'a str,
    /// How a human's answer was authorised, when the transition is one.
    pub human: Option<Human>,
    /// The event the transition applied, as JSON: the commit's `orchestrator-event` header,
    /// from which `audit` computes the transition again (docs/integrity.md).
    pub input: Option<String>,
}

/// One entry of `git orchestrate log`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HistoryEntry {
    pub commit: String,
    pub time: String,
    pub event: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub step: Option<String>,
    /// How a human's answer was authorised (`terminal`, `GIT_ORCHESTRATE_HUMAN`).
    pub human: Option<String>,
    pub subject: String,
    pub body: String,
}

/// The newest transitions, and how many the history holds in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    pub total: usize,
}

impl HistoryPage {
    /// True when older transitions exist than the ones listed.
    pub fn truncated(&self) -> bool {
        self.entries.len() < self.total
    }
}

pub struct Store {
    repo: gix::Repository,
    workflow: String,
    ref_name: FullName,
}

/// Opens the repository containing `dir` with replace refs off: every object read is the
/// object stored under its id, whatever `refs/replace/` holds (docs/integrity.md, "Hermetic
/// verification"), as every git command of ours runs with `GIT_NO_REPLACE_OBJECTS`.
fn open_without_replacements(dir: &Path) -> Result<gix::Repository, StoreError> {
    const NO_REPLACE: &str = "core.useReplaceRefs=false";
    let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
    trust.full = trust.full.config_overrides([NO_REPLACE]);
    trust.reduced = trust.reduced.config_overrides([NO_REPLACE]);
    gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
        dir,
        Default::default(),
        trust,
    )
    .map(gix::Repository::from)
    .map_err(|e| {
        let text = e.to_string();
        // gix's own words for "none found" say what ours would: said once, in ours.
        StoreError::NotARepository(if text.starts_with("Could not find a git repository") {
            format!(
                "not a git repository: neither {} nor any directory above it is in one",
                dir.display()
            )
        } else {
            format!("cannot open the git repository: {text}")
        })
    })
}

impl Store {
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
        let repo = open_without_replacements(dir)?;
        if repo.workdir().is_none() {
            return Err(StoreError::Bare);
        }
        let workflow = match workflow {
            Some(w) => w.to_string(),
            None => repo
                .config_snapshot()
                .string(WORKFLOW_CONFIG_KEY)
                .map(|w| w.to_str_lossy().into_owned())
                .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string()),
        };
        let workflow = workflow.as_str();
        if !valid_workflow_name(workflow) {
            return Err(StoreError::BadWorkflowName(workflow.to_string()));
        }
        let ref_name = FullName::try_from(format!("{WORKFLOWS}{workflow}"))
            .map_err(|_| StoreError::BadWorkflowName(workflow.to_string()))?;
        Ok(Store {
            repo,
            workflow: workflow.to_string(),
            ref_name,
        })
    }

    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// `refs/orchestrator/workflows/<name>`; see [`workflow_ref`].
    pub fn ref_name(&self) -> String {
        self.ref_name.as_bstr().to_string()
    }

    /// A command a person or agent can run to see the full output of the last run.
    pub fn output_log_command(&self) -> String {
        format!("git show {}:{OUTPUT_FILE}", self.ref_name())
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

    /// Where git runs hooks from: `core.hooksPath` (relative to the top directory, as git
    /// takes it), else `hooks` in the common directory. Read in-process, for the agent hooks.
    pub fn hooks_dir(&self) -> PathBuf {
        let configured = self
            .repo
            .config_snapshot()
            .string("core.hooksPath")
            .map(|p| p.to_str_lossy().into_owned());
        match configured {
            Some(path) if path.starts_with('/') => PathBuf::from(path),
            Some(path) => self.workdir().join(path),
            None => self.repo.common_dir().join("hooks"),
        }
    }

    /// Where `init --agent` keeps what a client's files held before it wrote them.
    pub fn agent_setup_dir(&self, client: &str) -> PathBuf {
        self.repo.common_dir().join(AGENT_SETUP).join(client)
    }

    /// The agent Stop hook's count of blocked stops for one agent session (a name made safe
    /// for a file).
    pub fn stop_blocks_file(&self, session: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join(STOP_BLOCKS)
            .join(safe_file_name(session))
    }

    /// Where an agent's session-start hook says it fired in a turn of `git orchestrate run`
    /// (`token` is the turn's, a name made safe for a file).
    pub fn run_proof_file(&self, token: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run/started")
            .join(safe_file_name(token))
    }

    /// HEAD's commit: its id, tree and message, or `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<FoundCommit>, StoreError> {
        let Ok(id) = self.repo.head_id() else {
            return Ok(None);
        };
        let commit = self.repo.find_commit(id).map_err(git_err)?;
        Ok(Some(FoundCommit {
            commit: id.to_string(),
            tree: commit.tree_id().map_err(git_err)?.to_string(),
            message: commit.message_raw_sloppy().to_str_lossy().into_owned(),
        }))
    }

    /// Reads the workflow at its tip, or `None` when it does not exist yet.
    pub fn read(&self) -> Result<Option<Snapshot>, StoreError> {
        match self.tip()? {
            Some(tip) => self.read_at(tip, &self.ref_name()).map(Some),
            None => Ok(None),
        }
    }

    /// Reads the workflow state held by commit `tip`, which `reference` (named in errors)
    /// points at: this workflow's tip, or a remote's copy of it.
    pub fn read_at(&self, tip: ObjectId, reference: &str) -> Result<Snapshot, StoreError> {
        let corrupt = |what: &str, message: String| StoreError::Corrupt {
            reference: reference.to_string(),
            commit: tip.to_string(),
            what: what.to_string(),
            message,
        };
        let commit = self
            .repo
            .find_commit(tip)
            .map_err(|e| corrupt("the tip commit", e.to_string()))?;
        let tree_id = commit
            .tree_id()
            .map_err(|e| corrupt("the tree", e.to_string()))?;
        let tree = self
            .repo
            .find_tree(tree_id)
            .map_err(|e| corrupt("the tree", e.to_string()))?;
        let mut entries = BTreeMap::new();
        for entry in tree
            .decode()
            .map_err(|e| corrupt("the tree", e.to_string()))?
            .entries
        {
            entries.insert(
                entry.filename.to_str_lossy().into_owned(),
                entry.oid.to_owned(),
            );
        }
        let blob = |name: &str| -> Result<Option<Vec<u8>>, StoreError> {
            entries
                .get(name)
                .map(|id| {
                    self.repo
                        .find_blob(*id)
                        .map(|b| b.data.clone())
                        .map_err(|e| corrupt(name, e.to_string()))
                })
                .transpose()
        };
        let state_bytes =
            blob(STATE_FILE)?.ok_or_else(|| corrupt(STATE_FILE, "it is missing".into()))?;
        let (state, progress) = read_state(&state_bytes).map_err(|m| corrupt(STATE_FILE, m))?;
        let plan_id = entries.get(PLAN_FILE).map(ToString::to_string);
        let mut trusted = None;
        let (summary, parsed, done) = match (&plan_id, progress) {
            (None, _) => (None, None, Vec::new()),
            // The summary describes exactly this pr.json: no need to parse it.
            (Some(id), Some(progress)) if &progress.plan == id => {
                let read = (Some(progress.summary.clone()), None, progress.done.clone());
                trusted = Some(progress);
                read
            }
            (Some(_), progress) => {
                let bytes = blob(PLAN_FILE)?.unwrap_or_default();
                let mut plan: Plan = serde_json::from_slice(&bytes)
                    .map_err(|e| corrupt(PLAN_FILE, e.to_string()))?;
                // Progress outlives a hand edit of the plan: it is ours, the edit is not.
                let done = progress.map(|p| p.done).unwrap_or_default();
                for step in &done {
                    plan.complete_step(*step);
                }
                (Some(plan.summary()), Some(plan), done)
            }
        };
        Ok(Snapshot {
            tip,
            state,
            summary,
            parsed,
            done,
            progress: trusted,
            entries,
        })
    }

    /// The PR branches the other workflows of this repository record. A workflow that cannot
    /// be read is left out: its own commands report it, and it blocks no one else.
    pub fn other_workflow_branches(&self) -> Result<Vec<BranchHolder>, StoreError> {
        let mut out = Vec::new();
        for (name, tip) in self.local_workflows()? {
            if name == self.workflow {
                continue;
            }
            let Ok(snapshot) = self.read_at(tip, &workflow_ref(&name)) else {
                continue;
            };
            if let Some(branch) = snapshot.state.branch() {
                out.push(BranchHolder {
                    workflow: name,
                    status: snapshot.state.status(),
                    branch: branch.to_string(),
                });
            }
        }
        Ok(out)
    }

    /// The PR titles of the other workflows of this repository that have a plan, by workflow.
    pub fn other_active_prs(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut out = Vec::new();
        for (name, tip) in self.local_workflows()? {
            if name == self.workflow {
                continue;
            }
            let Ok(snapshot) = self.read_at(tip, &workflow_ref(&name)) else {
                continue;
            };
            if let Some(summary) = snapshot.summary {
                out.push((name, summary.title));
            }
        }
        Ok(out)
    }

    /// The commit the workflow ref points at.
    pub fn tip(&self) -> Result<Option<ObjectId>, StoreError> {
        let reference = self
            .repo
            .try_find_reference(&self.ref_name)
            .map_err(git_err)?;
        Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// The snapshot's full plan as it now reads: `pr.json`, parsed on demand, with the steps
    /// completed since it was stored marked DONE.
    pub fn plan(&self, snapshot: &Snapshot) -> Result<Option<Plan>, StoreError> {
        if let Some(plan) = &snapshot.parsed {
            return Ok(Some(plan.clone()));
        }
        let Some(id) = snapshot.entries.get(PLAN_FILE) else {
            return Ok(None);
        };
        let bytes = self.repo.find_blob(*id).map_err(git_err)?.data.clone();
        let mut plan: Plan = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            reference: self.ref_name(),
            commit: snapshot.tip.to_string(),
            what: PLAN_FILE.to_string(),
            message: e.to_string(),
        })?;
        for step in &snapshot.done {
            plan.complete_step(*step);
        }
        Ok(Some(plan))
    }

    /// The full `output.log` of the snapshot, when there is one.
    pub fn output_log(&self, snapshot: &Snapshot) -> Result<Option<Vec<u8>>, StoreError> {
        self.file(snapshot, OUTPUT_FILE)
    }

    /// The agent's escalation report, while the workflow is halted for it.
    pub fn escalation(&self, snapshot: &Snapshot) -> Result<Option<String>, StoreError> {
        Ok(self
            .file(snapshot, ESCALATION_FILE)?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// The last review's record (`review.json`), when there is one.
    pub fn review(&self, snapshot: &Snapshot) -> Result<Option<Vec<u8>>, StoreError> {
        self.file(snapshot, REVIEW_FILE)
    }

    /// A command that prints the active plan, to start a re-plan from.
    pub fn plan_show_command(&self) -> String {
        format!("git show {}:{PLAN_FILE}", self.ref_name())
    }

    /// A command that prints the last review's findings.
    pub fn review_show_command(&self) -> String {
        format!("git show {}:{REVIEW_FILE}", self.ref_name())
    }

    /// A command that prints the escalation report.
    pub fn escalation_command(&self) -> String {
        format!("git show {}:{ESCALATION_FILE}", self.ref_name())
    }

    fn file(&self, snapshot: &Snapshot, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        snapshot
            .entries
            .get(name)
            .map(|id| {
                self.repo
                    .find_blob(*id)
                    .map(|b| b.data.clone())
                    .map_err(git_err)
            })
            .transpose()
    }

    /// Stores a transition: objects first, then one compare-and-swap of the ref against
    /// `expected` (the tip the command read; `None` = the ref must not exist yet). A crash at
    /// any point leaves either the old state or the new one.
    pub fn write(
        &self,
        expected: Option<&Snapshot>,
        write: &TransitionWrite,
    ) -> Result<ObjectId, WriteError> {
        let mut entries = expected.map(|s| s.entries.clone()).unwrap_or_default();
        let objects = std::cell::RefCell::new(loose::LooseWriter::new(&self.repo));
        // Content that repeats (an empty output.log, an unchanged plan) is often stored already:
        // hashing is far cheaper than creating another object file.
        let blob = |bytes: &[u8]| -> Result<ObjectId, StoreError> {
            let id = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
                .map_err(git_err)?;
            if self.repo.has_object(id) {
                return Ok(id);
            }
            objects.borrow_mut().write(gix::objs::Kind::Blob, bytes)
        };
        let current_plan = || -> Result<Plan, StoreError> {
            expected
                .map(|s| self.plan(s))
                .transpose()?
                .flatten()
                .ok_or_else(|| {
                    StoreError::Internal("the transition changes a plan, and none is active".into())
                })
        };
        // A completed step rewrites only the small progress record: the plan stays as stored,
        // until its last step is done and the PR is read as a whole.
        let mut plan_written = None;
        let progress = match write.plan {
            PlanChange::Keep => expected.and_then(|s| {
                let plan = s.entries.get(PLAN_FILE)?.to_string();
                Some(Progress {
                    plan,
                    done: s.done.clone(),
                    summary: s.summary.clone()?,
                    ahead: s
                        .progress
                        .as_ref()
                        .map(|p| p.ahead.clone())
                        .unwrap_or_default(),
                })
            }),
            // The next step is in the same task: known without reading the plan.
            PlanChange::CompleteStep(step)
                if let Some(next) = expected
                    .and_then(|s| s.progress.as_ref())
                    .and_then(|p| p.completed(*step)) =>
            {
                Some(next)
            }
            PlanChange::Drop => {
                entries.remove(PLAN_FILE);
                None
            }
            PlanChange::CompleteStep(step) => {
                let mut plan = current_plan()?;
                plan.complete_step(*step);
                if plan.all_done() {
                    plan_written = Some(plan);
                    None
                } else {
                    let mut done = expected.map(|s| s.done.clone()).unwrap_or_default();
                    if !done.contains(step) {
                        done.push(*step);
                    }
                    Some(Progress::of(
                        &plan,
                        entries
                            .get(PLAN_FILE)
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                        done,
                    ))
                }
            }
            PlanChange::Materialize => {
                plan_written = Some(current_plan()?);
                None
            }
            PlanChange::Replace(plan) => {
                plan_written = Some(plan.clone());
                None
            }
        };
        let progress = match plan_written {
            Some(plan) => {
                let id = blob(&plan.to_json())?;
                entries.insert(PLAN_FILE.into(), id);
                Some(Progress::of(&plan, id.to_string(), Vec::new()))
            }
            None => progress,
        };
        // state.json is new with every transition; probing for it first would only make gix
        // rescan the pack directory on the miss.
        let state_id = objects.borrow_mut().write(
            gix::objs::Kind::Blob,
            &state_json(write.state, progress.as_ref())?,
        )?;
        entries.insert(STATE_FILE.into(), state_id);
        for (name, change) in [
            (OUTPUT_FILE, write.output_log),
            (ESCALATION_FILE, write.escalation),
            (REVIEW_FILE, write.review),
        ] {
            match change {
                FileChange::Keep => {}
                FileChange::Set(bytes) => {
                    entries.insert(name.into(), blob(bytes)?);
                }
                FileChange::Remove => {
                    entries.remove(name);
                }
            }
        }
        let tree = gix::objs::Tree {
            entries: entries
                .iter()
                .map(|(name, oid)| gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Blob.into(),
                    filename: name.as_str().into(),
                    oid: *oid,
                })
                .collect(),
        };
        let tree_id = objects.borrow_mut().write_object(&tree)?;

        let signature = self.signature()?;
        let message = commit_message(write);
        let commit = gix::objs::Commit {
            tree: tree_id,
            parents: expected.map(|s| s.tip).into_iter().collect(),
            author: signature.clone(),
            committer: signature.clone(),
            encoding: None,
            message: message.clone().into(),
            extra_headers: write
                .input
                .iter()
                .map(|json| (EVENT_HEADER.into(), json.as_str().into()))
                .collect(),
        };
        let commit_id = objects.borrow_mut().write_object(&commit)?;
        self.update_ref(
            &self.ref_name,
            expected.map(|s| s.tip),
            commit_id,
            format!(
                "git-orchestrate: {}",
                message.lines().next().unwrap_or_default()
            ),
            &signature,
        )?;
        Ok(commit_id)
    }

    /// Where `run` writes the briefing of the turn at hand, for `GIT_ORCHESTRATE_BRIEFING_FILE`:
    /// in the git directory, never in the working tree.
    pub fn run_briefing_file(&self) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.briefing.txt", self.workflow))
    }

    /// Waits for, then holds, this working tree's checkpoint lock
    /// (`<git dir>/orchestrator/checkpoint.lock`, an advisory `flock`): two checkpoints in one
    /// working tree would share its index and `.git/COMMIT_EDITMSG`, so one could record its
    /// message on the other's commit. The kernel lets go of it when its holder ends, however
    /// it ends.
    pub fn checkpoint_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.git_dir().join("orchestrator/checkpoint.lock"))
    }

    /// Waits for, then holds, the lock of `init` (`<common dir>/orchestrator/init.lock`).
    pub fn init_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.repo.common_dir().join("orchestrator/init.lock"))
    }

    /// Waits for, then holds, the lock of `init --agent` (`<common dir>/orchestrator/
    /// agent-setup.lock`): two at once would each read the settings files, then write over
    /// each other's records of what was there before.
    pub fn agent_setup_lock(&self) -> Result<std::fs::File, StoreError> {
        exclusive_lock(&self.repo.common_dir().join("orchestrator/agent-setup.lock"))
    }

    /// Takes the lock that lets one `git orchestrate run` drive this workflow at a time:
    /// `.git/orchestrator/run/<workflow>.lock`, an advisory `flock` taken without waiting, which
    /// the kernel lets go of when its holder ends, however it ends (a run killed with
    /// SIGKILL included). The holder's pid and host are written in it, for the refusal only.
    /// `Err` names the run that holds it.
    pub fn take_run_lock(&self) -> Result<Result<RunLock, String>, StoreError> {
        use std::io::{Read as _, Seek as _, Write as _};
        let path = self
            .repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.lock", safe_file_name(&self.workflow)));
        let io = |e: std::io::Error| {
            StoreError::Internal(format!("cannot take the run lock {}: {e}", path.display()))
        };
        let mut file = open_lock_file(&path).map_err(io)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {
                file.set_len(0).map_err(io)?;
                file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
                file.write_all(format!("{} {}\n", std::process::id(), host_name()).as_bytes())
                    .map_err(io)?;
                Ok(Ok(RunLock { _file: file }))
            }
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                let mut text = String::new();
                let _ = std::io::Read::by_ref(&mut file)
                    .take(256)
                    .read_to_string(&mut text);
                let mut words = text.split_whitespace();
                let pid = words
                    .next()
                    .filter(|p| p.bytes().all(|b| b.is_ascii_digit()));
                let host = words.next().filter(|h| h.len() <= 64);
                Ok(Err(format!(
                    "another `git orchestrate run` (pid {}, host {}) drives workflow {}",
                    pid.unwrap_or("?"),
                    host.unwrap_or("?"),
                    self.workflow
                )))
            }
            Err(e) => Err(io(e.into())),
        }
    }

    /// The turn a `git orchestrate run` of this workflow has started and not yet recorded.
    pub fn run_turn_file(&self) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.turn.json", safe_file_name(&self.workflow)))
    }

    /// `refs/orchestrator/runs/<workflow>`: one commit per turn of `git orchestrate run`.
    pub fn run_ref_name(&self) -> String {
        format!("{RUNS}{}", self.workflow)
    }

    /// The last turn `run` recorded: its commit and subject.
    pub fn last_run_record(&self) -> Result<Option<(String, String)>, StoreError> {
        let Some(mut reference) = self
            .repo
            .try_find_reference(self.run_ref_name().as_str())
            .map_err(git_err)?
        else {
            return Ok(None);
        };
        let commit = reference.peel_to_commit().map_err(git_err)?;
        let subject = commit
            .message_raw_sloppy()
            .to_str_lossy()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        Ok(Some((commit.id.to_string(), subject)))
    }

    /// Appends a turn of `run` to the run ref: a commit whose tree holds `files`, on top of
    /// the last one (compare-and-swap, retried when another run appended meanwhile).
    pub fn append_run_record(
        &self,
        files: &[(&str, &[u8])],
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        let name = FullName::try_from(self.run_ref_name())
            .map_err(|_| StoreError::BadWorkflowName(self.workflow.clone()))?;
        let mut names: Vec<&(&str, &[u8])> = files.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        let signature = self.signature()?;
        for _ in 0..20 {
            let parent = match self.repo.try_find_reference(&name).map_err(git_err)? {
                Some(mut r) => Some(r.peel_to_id().map_err(git_err)?.detach()),
                None => None,
            };
            let mut objects = loose::LooseWriter::new(&self.repo);
            let mut entries = Vec::new();
            for (file, bytes) in &names {
                entries.push(gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Blob.into(),
                    filename: (*file).into(),
                    oid: objects.write(gix::objs::Kind::Blob, bytes)?,
                });
            }
            let tree = objects.write_object(&gix::objs::Tree { entries })?;
            let commit = objects.write_object(&gix::objs::Commit {
                tree,
                parents: parent.into_iter().collect(),
                author: signature.clone(),
                committer: signature.clone(),
                encoding: None,
                message: message.into(),
                extra_headers: Vec::new(),
            })?;
            match self.update_ref(&name, parent, commit, message.to_string(), &signature) {
                Ok(()) => return Ok(commit),
                Err(WriteError::Conflict) => continue,
                Err(WriteError::Store(e)) => return Err(e),
            }
        }
        Err(StoreError::Internal(format!(
            "{} kept changing while a run turn was recorded",
            self.run_ref_name()
        )))
    }

    /// Moves `name` from `expected` (`None`: it must not exist) to `new`, logging `message`:
    /// the compare-and-swap every write ends with.
    fn update_ref(
        &self,
        name: &FullName,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: String,
        signature: &gix::actor::Signature,
    ) -> Result<(), WriteError> {
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    // git does not log refs outside refs/heads and friends unless told to.
                    force_create_reflog: true,
                    message: message.into(),
                },
                expected: match expected {
                    Some(tip) => PreviousValue::MustExistAndMatch(Target::Object(tip)),
                    None => PreviousValue::MustNotExist,
                },
                new: Target::Object(new),
            },
            name: name.clone(),
            deref: false,
        };
        self.mend_torn_reflog(name);
        let workflow = name
            .as_bstr()
            .to_str()
            .ok()
            .and_then(|n| n.strip_prefix(WORKFLOWS));
        // Writers of one workflow take turns from the intent to the marker: two at once
        // would otherwise leave the marker at the earlier tip with no intent to explain it.
        let _turn = workflow
            .and_then(|w| exclusive_lock(&self.tip_marker(w).with_extension("tips-lock")).ok());
        // Written before the ref moves: a kill between the move and the marker's rewrite
        // leaves this, which `audit` takes as our own move, and nothing else does.
        let intent = workflow.and_then(|w| self.note_intent(w, expected, new));
        let mut time_buf = gix::date::parse::TimeBuf::default();
        let result = self
            .repo
            .edit_references_as(Some(edit), Some(signature.to_ref(&mut time_buf)));
        let marked = match (&result, workflow) {
            (Ok(_), Some(workflow)) => self.remember_tip(workflow, new),
            _ => true,
        };
        // Kept when the marker could not be written: it still explains the move.
        if let Some(intent) = intent
            && marked
        {
            let _ = std::fs::remove_file(intent);
        }
        match result {
            Ok(_) => Ok(()),
            Err(e) if is_lost_race(&e) => match self.stale_lock_of(name) {
                Some(locked) => Err(WriteError::Store(locked)),
                None => Err(WriteError::Conflict),
            },
            Err(e) => Err(WriteError::Store(git_err(e))),
        }
    }

    /// A lock file on the workflow ref or the notes ref, as a [`StoreError::Locked`], when it
    /// has been there longer than any command holds it: the remains of a crash, not a
    /// process at work.
    pub fn stale_lock(&self) -> Option<StoreError> {
        let notes = FullName::try_from(NOTES_REF).ok()?;
        self.stale_lock_of(&self.ref_name)
            .or_else(|| self.stale_lock_of(&notes))
    }

    /// Ends a reflog whose last line a crash cut short (no newline) with a newline, so that
    /// the entry this write appends is a line of its own: glued onto the torn one, git would
    /// skip it. Best effort: the write itself does not depend on it. A writer appends its line
    /// in pieces while it holds the ref's lock, so a line is taken for torn only while no lock
    /// is held and the file has not changed for two seconds: a newline put into a line being
    /// written would break that line instead.
    fn mend_torn_reflog(&self, name: &FullName) {
        use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
        let Ok(name) = name.as_bstr().to_str() else {
            return;
        };
        let path = self.repo.common_dir().join("logs").join(name);
        let lock = self.repo.common_dir().join(format!("{name}.lock"));
        let Ok(mut file) = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
        else {
            return;
        };
        let settled = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= std::time::Duration::from_secs(2));
        let mut last = [0u8; 1];
        let torn = settled
            && !lock.exists()
            && file.seek(SeekFrom::End(-1)).is_ok()
            && file.read_exact(&mut last).is_ok()
            && last[0] != b'\n';
        if torn {
            let _ = file.write_all(b"\n");
        }
    }

    /// Where the last tip written to a workflow's ref is kept, outside the ref store: git
    /// deletes a ref's reflog with the ref, so this is what remains when something (a test
    /// command, a script) deletes the workflow ref.
    fn tip_marker(&self, workflow: &str) -> PathBuf {
        self.repo.common_dir().join(TIP_MARKERS).join(workflow)
    }

    /// Best effort, after the ref moved: a marker that could not be written only weakens the
    /// check for a deleted ref, and the write itself has happened. One small write, on every
    /// transition: a marker cut short by a crash reads as no marker (the reflog still speaks
    /// while the ref exists), so it needs no temporary file and rename.
    fn remember_tip(&self, workflow: &str, tip: ObjectId) -> bool {
        let path = self.tip_marker(workflow);
        let line = format!("{tip}\n");
        match std::fs::write(&path, &line) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                path.parent()
                    .is_some_and(|dir| std::fs::create_dir_all(dir).is_ok())
                    && std::fs::write(&path, &line).is_ok()
            }
            Err(_) => false,
        }
    }

    /// Records, before a write moves `workflow`'s ref from `old` to `new`, that this
    /// program is making that move: a file of this process's own beside the tip marker
    /// (`<workflow>.intent.<pid>`), removed once the move and the marker are done. `None`
    /// when it could not be written (the write goes on; a kill then may read as a move by
    /// something else, as before).
    fn note_intent(&self, workflow: &str, old: Option<ObjectId>, new: ObjectId) -> Option<PathBuf> {
        let marker = self.tip_marker(workflow);
        let name = format!(
            "{}.intent.{}",
            marker.file_name()?.to_string_lossy(),
            std::process::id()
        );
        let path = marker.with_file_name(name);
        let old = old.map_or_else(|| "0".repeat(new.to_string().len()), |o| o.to_string());
        let line = format!("{old} {new}\n");
        if std::fs::write(&path, &line).is_err() {
            std::fs::create_dir_all(path.parent()?).ok()?;
            std::fs::write(&path, &line).ok()?;
        }
        Some(path)
    }

    /// The moves of `workflow`'s ref this program had begun when it was stopped: `(old,
    /// new)` from the intent files [`Store::note_intent`] leaves when a kill comes between
    /// the ref's move and the marker's rewrite.
    pub fn unfinished_tip_moves(&self, workflow: &str) -> Vec<(String, String)> {
        let marker = self.tip_marker(workflow);
        let (Some(dir), Some(base)) = (marker.parent(), marker.file_name()) else {
            return Vec::new();
        };
        let prefix = format!("{}.intent.", base.to_string_lossy());
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| {
                let e = e.ok()?;
                if !e.file_name().to_string_lossy().starts_with(&prefix) {
                    return None;
                }
                let text = crate::input::read_file(&e.path(), 256).ok()??;
                let text = String::from_utf8(text).ok()?;
                let (old, new) = text.trim().split_once(' ')?;
                Some((old.to_string(), new.to_string()))
            })
            .collect()
    }

    /// The tip git-orchestrate last wrote to `workflow`'s ref in this repository, when it
    /// remembers one: something else moved the ref when it is not the tip now.
    pub fn last_written_tip(&self, workflow: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.tip_marker(workflow)).ok()?;
        let tip = text.trim();
        (!tip.is_empty()).then(|| tip.to_string())
    }

    /// When this workflow's ref is missing but it existed here (its reflog, or the tip
    /// marker, says so): the last tip it had, and whether that commit is still in the
    /// object store.
    pub fn vanished_tip(&self) -> Result<Option<(String, bool)>, StoreError> {
        if self.tip()?.is_some() {
            return Ok(None);
        }
        let reflog = self
            .repo
            .common_dir()
            .join("logs")
            .join(self.ref_name.as_bstr().to_str().unwrap_or_default());
        let from_reflog = std::fs::read_to_string(reflog).ok().and_then(|log| {
            log.lines()
                .last()
                .and_then(|line| line.split(' ').nth(1).map(str::to_string))
        });
        let from_marker = || {
            std::fs::read_to_string(self.tip_marker(&self.workflow))
                .ok()
                .map(|t| t.trim().to_string())
        };
        let Some(tip) = from_reflog
            .or_else(from_marker)
            .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
            .filter(|t| !t.is_null())
        else {
            return Ok(None);
        };
        let exists = self.repo.find_commit(tip).is_ok();
        Ok(Some((tip.to_string(), exists)))
    }

    /// Forgets that this workflow existed (its tip marker and reflog), for a deliberate
    /// fresh start (`init --new`).
    pub fn forget_vanished(&self) -> Result<(), StoreError> {
        let reflog = self
            .repo
            .common_dir()
            .join("logs")
            .join(self.ref_name.as_bstr().to_str().unwrap_or_default());
        for path in [self.tip_marker(&self.workflow), reflog] {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(StoreError::Git(format!(
                        "cannot remove {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// The lock files on the workflow ref and the notes ref as they are now, each with
    /// what identifies it and the ref's value: a lock seen again unchanged while its ref
    /// stands still is held by nobody at work.
    pub fn lock_sightings(&self) -> Vec<LockSighting> {
        let notes = FullName::try_from(NOTES_REF).ok();
        [Some(self.ref_name.clone()), notes]
            .into_iter()
            .flatten()
            .filter_map(|name| {
                let path = self
                    .repo
                    .common_dir()
                    .join(format!("{}.lock", name.as_bstr()));
                let meta = std::fs::symlink_metadata(&path).ok()?;
                let modified = meta.modified().ok()?;
                let value = self
                    .repo
                    .try_find_reference(name.as_ref())
                    .ok()
                    .flatten()
                    .and_then(|r| r.target().try_id().map(ToOwned::to_owned));
                Some(LockSighting {
                    reference: name.to_string(),
                    path,
                    identity: (
                        std::os::unix::fs::MetadataExt::ino(&meta),
                        meta.len(),
                        modified,
                    ),
                    value,
                    age: modified.elapsed().unwrap_or_default(),
                })
            })
            .collect()
    }

    fn stale_lock_of(&self, name: &FullName) -> Option<StoreError> {
        let path = self
            .repo
            .common_dir()
            .join(format!("{}.lock", name.as_bstr()));
        let age = std::fs::metadata(&path)
            .ok()?
            .modified()
            .ok()?
            .elapsed()
            .unwrap_or_default();
        (age >= STALE_LOCK).then(|| StoreError::Locked {
            reference: name.to_string(),
            age,
            path,
        })
    }

    /// The committer identity as git resolves it: `GIT_COMMITTER_*`, then `committer.*`, then
    /// `user.*` (and `EMAIL` for the address). `None` when either part is missing.
    pub fn identity(&self) -> Option<(BString, BString)> {
        let config = self.repo.config_snapshot();
        let env = |key: &str| std::env::var_os(key).map(|v| BString::from(v.as_encoded_bytes()));
        let name = env("GIT_COMMITTER_NAME")
            .or_else(|| config.string("committer.name"))
            .or_else(|| config.string("user.name"))?;
        let email = env("GIT_COMMITTER_EMAIL")
            .or_else(|| config.string("committer.email"))
            .or_else(|| config.string("user.email"))
            .or_else(|| env("EMAIL"))?;
        Some((name, email))
    }

    /// The user's identity, or the fixed fallback. The time is `GIT_COMMITTER_DATE` or now, in
    /// UTC: gix's local-time lookup reads the whole zoneinfo database, a third of a write's cost.
    fn signature(&self) -> Result<gix::actor::Signature, StoreError> {
        let (name, email) = self
            .identity()
            .unwrap_or_else(|| (FALLBACK_NAME.into(), FALLBACK_EMAIL.into()));
        let time = match std::env::var("GIT_COMMITTER_DATE") {
            Ok(date) => gix::date::parse(&date, None).map_err(|e| {
                StoreError::Git(format!(
                    "GIT_COMMITTER_DATE=\"{date}\" is not a date git understands: {e}"
                ))
            })?,
            Err(_) => gix::date::Time::now_utc(),
        };
        Ok(gix::actor::Signature { name, email, time })
    }

    /// The transitions, newest first, following first parents from the tip.
    pub fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, StoreError> {
        match self.tip()? {
            Some(tip) => self.history_from(tip, None, limit),
            None => Ok(Vec::new()),
        }
    }

    /// The newest `limit` transitions (all with `None`), and how many there are in all. Only
    /// a truncated listing walks on to count the rest, and then reads nothing of each older
    /// commit but its first parent.
    pub fn history_page(&self, limit: Option<usize>) -> Result<HistoryPage, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(HistoryPage {
                entries: Vec::new(),
                total: 0,
            });
        };
        let limit = limit.unwrap_or(usize::MAX);
        let entries = self.history_from(tip, None, limit)?;
        let mut total = entries.len();
        let mut next = match entries.last() {
            Some(last) if total == limit => {
                let id = ObjectId::from_hex(last.commit.as_bytes()).map_err(git_err)?;
                self.first_parent(id)?
            }
            // `-n 0`: nothing listed, everything counted.
            None if limit == 0 => Some(tip),
            _ => None,
        };
        while let Some(id) = next {
            total += 1;
            next = self.first_parent(id)?;
        }
        Ok(HistoryPage { entries, total })
    }

    fn first_parent(&self, id: ObjectId) -> Result<Option<ObjectId>, StoreError> {
        let commit = self.repo.find_commit(id).map_err(git_err)?;
        Ok(commit.parent_ids().next().map(|p| p.detach()))
    }

    /// The transitions from `tip` back to (not including) `stop`, newest first, at most
    /// `limit`.
    pub fn history_from(
        &self,
        tip: ObjectId,
        stop: Option<ObjectId>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            if out.len() >= limit || Some(id) == stop {
                break;
            }
            let commit = self.repo.find_commit(id).map_err(git_err)?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            let time = commit.time().map(format_time).unwrap_or_default();
            next = commit.parent_ids().next().map(|p| p.detach());
            out.push(parse_history_entry(id.to_string(), time, &message));
        }
        Ok(out)
    }

    /// The transitions from `tip` back to the newest one of `event`, inclusive: a PR's own
    /// history, back to its `plan`.
    pub fn history_back_to(
        &self,
        tip: ObjectId,
        event: &str,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            let commit = self.repo.find_commit(id).map_err(git_err)?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            let time = commit.time().map(format_time).unwrap_or_default();
            next = commit.parent_ids().next().map(|p| p.detach());
            let entry = parse_history_entry(id.to_string(), time, &message);
            let reached = entry.event == event;
            out.push(entry);
            if reached {
                break;
            }
        }
        Ok(out)
    }

    /// How many transitions lead from `from` (none: the workflow's start) to `to`, counted
    /// along first parents; at most `limit`.
    pub fn transitions_between(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
        limit: u32,
    ) -> Result<u32, StoreError> {
        let mut count = 0;
        let mut next = Some(to);
        while let Some(id) = next.filter(|id| Some(*id) != from && count < limit) {
            count += 1;
            let commit = self.repo.find_commit(id).map_err(git_err)?;
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(count)
    }

    /// True when any branch exists (a repository with no commit has none).
    pub fn has_any_branch(&self) -> Result<bool, StoreError> {
        let refs = self.repo.references().map_err(git_err)?;
        let mut branches = refs.local_branches().map_err(git_err)?;
        Ok(branches.next().is_some())
    }

    /// True when `refs/heads/<name>` exists.
    pub fn branch_exists(&self, name: &str) -> Result<bool, StoreError> {
        Ok(self
            .repo
            .try_find_reference(format!("refs/heads/{name}").as_str())
            .map_err(git_err)?
            .is_some())
    }

    /// The branch HEAD is on, or `None` when detached.
    pub fn head_branch(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .repo
            .head_name()
            .map_err(git_err)?
            .map(|name| name.shorten().to_str_lossy().into_owned()))
    }

    /// The branch `init` should call main: `main`, else `master`, else the current branch.
    pub fn detect_main_branch(&self) -> Result<String, StoreError> {
        for candidate in ["main", "master"] {
            if self.branch_exists(candidate)? {
                return Ok(candidate.to_string());
            }
        }
        Ok(self.head_branch()?.unwrap_or_else(|| "main".to_string()))
    }

    /// The commit `refs/heads/<branch>` points at, and the blob id of `path` in it.
    pub fn file_id_at_branch(
        &self,
        branch: &str,
        path: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError> {
        let Some(mut reference) = self
            .repo
            .try_find_reference(format!("refs/heads/{branch}").as_str())
            .map_err(git_err)?
        else {
            return Ok(None);
        };
        let commit = reference.peel_to_commit().map_err(git_err)?;
        let tree = commit.tree().map_err(git_err)?;
        let blob = tree
            .lookup_entry_by_path(path)
            .map_err(git_err)?
            .map(|entry| entry.object_id().to_string());
        Ok(Some((commit.id.to_string(), blob)))
    }

    /// The parents, the recorded event and the message of transition commit `id`.
    pub fn commit_record(&self, id: ObjectId) -> Result<CommitRecord, StoreError> {
        let commit = self.repo.find_commit(id).map_err(git_err)?;
        let decoded = commit.decode().map_err(git_err)?;
        let event = decoded
            .extra_headers()
            .find(EVENT_HEADER)
            .map(|v| v.to_str_lossy().into_owned());
        let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
        let time = commit.time().map(format_time).unwrap_or_default();
        Ok(CommitRecord {
            parents: commit.parent_ids().map(|p| p.detach()).collect(),
            event,
            history: parse_history_entry(id.to_string(), time, &message),
        })
    }

    /// The reflog of `reference`, oldest first; empty when it has none.
    pub fn reflog(&self, reference: &str) -> Result<Vec<ReflogEntry>, StoreError> {
        let path = self.repo.common_dir().join("logs").join(reference);
        let text = match std::fs::read(&path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(StoreError::Internal(format!(
                    "cannot read {}: {e}",
                    path.display()
                )));
            }
        };
        Ok(text
            .lines()
            .filter_map(|line| {
                // A line cut short by a crash mid-append lacks the writer's identity and
                // time: git skips it, and so does this (the next write starts on a line of
                // its own, see `mend_torn_reflog`). A whole entry without a message has no
                // tab (git writes none then).
                let (head, message) = line.split_once('\t').unwrap_or((line, ""));
                let words: Vec<&str> = head.split(' ').collect();
                let complete = words.len() >= 5
                    && words[words.len() - 2].bytes().all(|b| b.is_ascii_digit())
                    && words[words.len() - 1].len() == 5
                    && words[words.len() - 1].starts_with(['+', '-']);
                if !complete {
                    return None;
                }
                let mut words = words.into_iter();
                let id = |word: Option<&str>| {
                    word.filter(|w| ObjectId::from_hex(w.as_bytes()).is_ok())
                        .map(str::to_string)
                };
                Some(ReflogEntry {
                    old: id(words.next())?,
                    new: id(words.next())?,
                    message: message.to_string(),
                })
            })
            .collect())
    }

    /// True when each of `paths` (repository-relative file paths) is in the working tree
    /// exactly as in `commit`: the same bytes and mode (or absent from both). No file is
    /// written, and a file that is not a regular file or a link, or is larger than 8 MiB, is
    /// not read (false): a FIFO put in a protected path must not block the caller. False
    /// means only "not shown equal here": the caller then asks git, which also knows what
    /// is tracked and what is ignored.
    pub fn worktree_matches(&self, commit: &str, paths: &[String]) -> Result<bool, StoreError> {
        use gix::object::tree::EntryKind;
        const CAP: u64 = crate::input::CAP;
        let id = ObjectId::from_hex(commit.as_bytes()).map_err(git_err)?;
        let tree = self
            .repo
            .find_commit(id)
            .map_err(git_err)?
            .tree()
            .map_err(git_err)?;
        let hash = self.repo.object_hash();
        for path in paths {
            let plain = !path.is_empty()
                && !path.starts_with('/')
                && path.split('/').all(|part| !matches!(part, "" | "." | ".."));
            if !plain {
                return Ok(false);
            }
            // A directory on the way that is a link: git sees other paths than these.
            let mut prefix = self.workdir().to_path_buf();
            let parts: Vec<&str> = path.split('/').collect();
            for part in &parts[..parts.len() - 1] {
                prefix.push(part);
                if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Ok(false);
                }
            }
            let entry = tree.lookup_entry_by_path(path).map_err(git_err)?;
            let file = self.workdir().join(path);
            let meta = match std::fs::symlink_metadata(&file) {
                Ok(meta) => Some(meta),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                // Not a directory on the way, say: git decides.
                Err(_) => return Ok(false),
            };
            let same = match (entry, meta) {
                (None, None) => true,
                (Some(entry), Some(meta)) => {
                    let kind = entry.mode().kind();
                    let bytes = if meta.file_type().is_symlink() && kind == EntryKind::Link {
                        match std::fs::read_link(&file) {
                            Ok(target) => Some(target.into_os_string().into_encoded_bytes()),
                            Err(_) => None,
                        }
                    } else if meta.file_type().is_file() && meta.len() <= CAP {
                        use std::os::unix::fs::PermissionsExt as _;
                        let executable = meta.permissions().mode() & 0o111 != 0;
                        let wanted = if executable {
                            EntryKind::BlobExecutable
                        } else {
                            EntryKind::Blob
                        };
                        if kind == wanted {
                            std::fs::read(&file).ok()
                        } else {
                            None
                        }
                    } else {
                        None
                    };
                    bytes.is_some_and(|bytes| {
                        gix::objs::compute_hash(hash, gix::objs::Kind::Blob, &bytes)
                            .is_ok_and(|found| found == entry.object_id())
                    })
                }
                _ => false,
            };
            if !same {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The bytes of blob `id` when it holds at most `cap` of them; `Err(size)` when it holds
    /// more, and nothing was read (its size comes from the object's header).
    pub fn blob_within(&self, id: &str, cap: u64) -> Result<Result<Vec<u8>, u64>, StoreError> {
        let oid = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        let size = self.repo.find_header(oid).map_err(git_err)?.size();
        if size > cap {
            return Ok(Err(size));
        }
        self.blob(id).map(Ok)
    }

    /// The bytes of blob `id`.
    pub fn blob(&self, id: &str) -> Result<Vec<u8>, StoreError> {
        let id = ObjectId::from_hex(id.as_bytes()).map_err(git_err)?;
        Ok(self.repo.find_blob(id).map_err(git_err)?.data.clone())
    }

    /// The newest checkpoint commit on HEAD's first-parent line, walking back no further
    /// than the first of `stops` (the last recorded checkpoint, where the branch left main)
    /// or `main`'s tip.
    pub fn find_checkpoint(
        &self,
        stops: &[Option<&str>],
        main: &str,
    ) -> Result<Option<FoundCheckpoint>, StoreError> {
        let Ok(head) = self.repo.head_id() else {
            return Ok(None);
        };
        Ok(self
            .walk_checkpoints(head.detach(), stops, main, 1)?
            .into_iter()
            .next())
    }

    /// Every checkpoint commit on the first-parent line back from `from`, newest first,
    /// with the same stops as [`Self::find_checkpoint`].
    pub fn checkpoints_from(
        &self,
        from: &str,
        stops: &[Option<&str>],
        main: &str,
    ) -> Result<Vec<FoundCheckpoint>, StoreError> {
        let from = ObjectId::from_hex(from.as_bytes()).map_err(git_err)?;
        self.walk_checkpoints(from, stops, main, usize::MAX)
    }

    fn walk_checkpoints(
        &self,
        from: ObjectId,
        stops: &[Option<&str>],
        main: &str,
        most: usize,
    ) -> Result<Vec<FoundCheckpoint>, StoreError> {
        const MAX_WALK: usize = 500;
        let main_tip = self
            .repo
            .try_find_reference(format!("refs/heads/{main}").as_str())
            .map_err(git_err)?
            .and_then(|r| r.target().try_id().map(ToOwned::to_owned));
        let mut found = Vec::new();
        let mut next = Some(from);
        for _ in 0..MAX_WALK {
            let Some(id) = next else { break };
            let hex = id.to_string();
            if found.len() >= most || stops.contains(&Some(hex.as_str())) || Some(id) == main_tip {
                break;
            }
            let commit = self.repo.find_commit(id).map_err(git_err)?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            if is_checkpoint_message(&message) {
                found.push(FoundCheckpoint {
                    commit: hex,
                    subject: message.lines().next().unwrap_or_default().to_string(),
                    tree: commit.tree_id().map_err(git_err)?.to_string(),
                });
            }
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(found)
    }
}

/// A commit as [`Store::head_commit`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCommit {
    pub commit: String,
    pub tree: String,
    pub message: String,
}

/// A checkpoint commit found on the PR branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCheckpoint {
    pub commit: String,
    pub subject: String,
    pub tree: String,
}

/// A checkpoint commit's message starts with `checkpoint:` or carries the
/// `Orchestrator-Checkpoint:` trailer (docs/refs.md).
pub fn is_checkpoint_message(message: &str) -> bool {
    message.trim_start().starts_with("checkpoint:")
        || message
            .lines()
            .any(|l| l.starts_with("Orchestrator-Checkpoint:"))
}

const BRANCHES: &str = "refs/heads/";

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

/// True when `name` can be a branch: git's ref-format rules, checked by gix.
pub fn is_valid_branch_name(name: &str) -> bool {
    FullName::try_from(format!("refs/heads/{name}")).is_ok()
}

/// True when `name` can name a workflow (see [`StoreError::BadWorkflowName`]).
pub fn valid_workflow_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// `state.json` with the store's plan record in it.
fn state_json(state: &State, progress: Option<&Progress>) -> Result<Vec<u8>, StoreError> {
    let mut wire = StateWire::from(state.clone());
    wire.plan_progress = progress
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| StoreError::Internal(e.to_string()))?;
    let mut out =
        serde_json::to_vec_pretty(&wire).map_err(|e| StoreError::Internal(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}

/// Splits `state.json` into the state and the store's plan record.
fn read_state(bytes: &[u8]) -> Result<(State, Option<Progress>), String> {
    let mut wire = State::wire_from_json(bytes)?;
    let progress = wire
        .plan_progress
        .take()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| format!("`plan_progress`: {e}"))?;
    Ok((State::try_from(wire)?, progress))
}

fn is_lost_race(e: &gix::Error) -> bool {
    use gix::error::Class;
    e.downcast_any_ref::<gix::refs::file::transaction::prepare::ReferenceOutOfDate>()
        .is_some()
        || e.downcast_any_ref::<gix::refs::file::transaction::prepare::MustNotExist>()
            .is_some()
        || matches!(e.dominant_class(), Some(Class::Conflict | Class::Retryable))
}

fn commit_message(write: &TransitionWrite) -> String {
    let from = write.from.map_or("(none)", Status::as_str);
    let to = write.state.status().as_str();
    let mut message = format!("{}: {from} -> {to}\n", write.event);
    let body = write.summary.trim();
    if !body.is_empty() {
        message.push('\n');
        message.push_str(body);
        message.push('\n');
    }
    message.push_str(&format!(
        "\nOrchestrator-Event: {}\nOrchestrator-From: {from}\nOrchestrator-To: {to}\n",
        write.event
    ));
    if let Some(step) = &write.step {
        message.push_str(&format!("Orchestrator-Step: {step}\n"));
    }
    if let Some(human) = write.human {
        message.push_str(&format!("Orchestrator-Human: {}\n", human.as_str()));
    }
    message
}

fn parse_history_entry(commit: String, time: String, message: &str) -> HistoryEntry {
    let lines: Vec<&str> = message.trim_end().lines().collect();
    // The trailers are the last paragraph, as git reads them: a summary the agent wrote
    // (`--summary "Orchestrator-Step: 9.9"`) stays in the body, whatever its lines look like.
    let block = lines
        .iter()
        .rposition(|l| l.trim().is_empty())
        .map_or(lines.len(), |blank| blank + 1);
    let (text, trailers) = if lines[block.min(lines.len())..]
        .iter()
        .all(|l| l.starts_with("Orchestrator-"))
        && block > 0
    {
        (&lines[..block], &lines[block..])
    } else {
        (&lines[..], &lines[lines.len()..])
    };
    let trailer = |key: &str| {
        trailers
            .iter()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
    };
    let subject = lines.first().copied().unwrap_or_default().to_string();
    let body: Vec<&str> = text.iter().skip(1).copied().collect();
    HistoryEntry {
        commit,
        time,
        event: trailer("Orchestrator-Event:")
            .unwrap_or_else(|| subject.split(':').next().unwrap_or_default().to_string()),
        from: trailer("Orchestrator-From:"),
        to: trailer("Orchestrator-To:"),
        step: trailer("Orchestrator-Step:"),
        human: trailer("Orchestrator-Human:"),
        subject,
        body: body.join("\n").trim().to_string(),
    }
}

/// `name` made safe for a file name: ASCII letters, digits, `-` and `_` kept, anything else
/// `_`, at most 80 characters; `default` when nothing is left.
fn safe_file_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if safe.is_empty() {
        "default".to_string()
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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

    /// Completing a step inside its task from the record alone gives what reading the whole
    /// plan gives; at a task's last step it declines, and the plan is read.
    #[test]
    fn the_record_knows_the_next_step_of_the_task_without_the_plan() {
        let mut plan = crate::workflow::plan::parse_plan(
            br#"{"masterPlanPath": "m", "prTitle": "feat: X", "summary": "s", "verificationPlan": "v",
                "tasks": [
                  {"taskName": "a", "status": "TODO", "tdd_steps": [
                    {"type": "RED", "description": "r", "status": "TODO"},
                    {"type": "GREEN", "description": "g", "status": "TODO"},
                    {"type": "REFACTOR", "description": "f", "status": "TODO"}]},
                  {"taskName": "b", "status": "TODO", "tdd_steps": [
                    {"type": "RED", "description": "r2", "status": "TODO"},
                    {"type": "GREEN", "description": "g2", "status": "TODO"}]}]}"#,
        )
        .unwrap();
        let mut record = Progress::of(&plan, "blob".into(), Vec::new());
        let mut done = Vec::new();
        for step in [StepId::new(0, 0), StepId::new(0, 1)] {
            let fast = record
                .completed(step)
                .expect("the next step is in the task");
            plan.complete_step(step);
            done.push(step);
            let slow = Progress::of(&plan, "blob".into(), done.clone());
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&slow).unwrap()
            );
            record = fast;
        }
        assert!(
            record.completed(StepId::new(0, 2)).is_none(),
            "the task's last step: the next one is in another task"
        );
        assert!(
            record.completed(StepId::new(1, 0)).is_none(),
            "not the current step"
        );
    }

    #[test]
    fn commit_messages_carry_the_trailers() {
        let mut state = State::new(None);
        state = state.edit(|w| {
            w.status = Status::Debugging;
        });
        let msg = commit_message(&TransitionWrite {
            event: "test",
            from: Some(Status::ExecutingTdd),
            state: &state,
            plan: &PlanChange::Keep,
            output_log: FileChange::Keep,
            escalation: FileChange::Keep,
            review: FileChange::Keep,
            step: Some("1.2".into()),
            summary: "FAILURE: `make` (exit 2)\n\nI tried",
            human: None,
            input: None,
        });
        assert_eq!(
            msg,
            "test: EXECUTING_TDD -> DEBUGGING\n\nFAILURE: `make` (exit 2)\n\nI tried\n\n\
             Orchestrator-Event: test\nOrchestrator-From: EXECUTING_TDD\nOrchestrator-To: DEBUGGING\nOrchestrator-Step: 1.2\n"
        );
        let entry = parse_history_entry("c".into(), "t".into(), &msg);
        assert_eq!(entry.event, "test");
        assert_eq!(entry.from.as_deref(), Some("EXECUTING_TDD"));
        assert_eq!(entry.to.as_deref(), Some("DEBUGGING"));
        assert_eq!(entry.step.as_deref(), Some("1.2"));
        assert_eq!(entry.body, "FAILURE: `make` (exit 2)\n\nI tried");
    }

    /// A summary whose lines read like our trailers stays text: only the last paragraph is
    /// trailers, and a plan transition (no step) does not take a step from the summary.
    #[test]
    fn a_summary_that_looks_like_trailers_is_not_read_as_them() {
        let mut state = State::new(None);
        state = state.edit(|w| {
            w.status = Status::CreatingBranch;
        });
        let summary = "plan\nOrchestrator-Step: 9.9\nOrchestrator-To: MERGING_BRANCH\n\nOrchestrator-Step: 9.8";
        let msg = commit_message(&TransitionWrite {
            event: "plan",
            from: Some(Status::Initializing),
            summary,
            ..transition(&state)
        });
        let entry = parse_history_entry("c".into(), "t".into(), &msg);
        assert_eq!(entry.step, None);
        assert_eq!(entry.to.as_deref(), Some("CREATING_BRANCH"));
        assert_eq!(entry.body, summary);
        // A message of a subject alone has no trailers and no body.
        let entry = parse_history_entry("c".into(), "t".into(), "create: (none) -> INITIALIZING\n");
        assert_eq!((entry.event.as_str(), entry.body.as_str()), ("create", ""));
    }

    fn transition(state: &State) -> TransitionWrite<'_> {
        TransitionWrite {
            event: "test",
            from: Some(state.status()),
            state,
            plan: &PlanChange::Keep,
            output_log: FileChange::Keep,
            escalation: FileChange::Keep,
            review: FileChange::Keep,
            step: None,
            summary: "",
            human: None,
            input: None,
        }
    }

    #[test]
    fn a_lock_left_behind_is_reported_at_once_and_a_fresh_one_is_a_lost_race() {
        let dir = tempfile::tempdir().unwrap();
        crate::test_git::git(dir.path(), &["init", "--quiet"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let state = State::new(Some("main".into()));
        store.write(None, &transition(&state)).unwrap();
        let snapshot = store.read().unwrap().unwrap();
        let lock = dir
            .path()
            .join(".git/refs/orchestrator/workflows/main.lock");

        let file = std::fs::File::create(&lock).unwrap();
        assert!(
            matches!(
                store.write(Some(&snapshot), &transition(&state)),
                Err(WriteError::Conflict)
            ),
            "a fresh lock is another process at work: retry"
        );
        file.set_modified(std::time::SystemTime::now() - 2 * STALE_LOCK)
            .unwrap();
        match store.write(Some(&snapshot), &transition(&state)) {
            Err(WriteError::Store(StoreError::Locked { path, age, .. })) => {
                assert_eq!(path, lock);
                assert!(age >= STALE_LOCK);
            }
            other => panic!("a stale lock is named, not retried: {other:?}"),
        }
        drop(file);
        std::fs::remove_file(&lock).unwrap();
        store.write(Some(&snapshot), &transition(&state)).unwrap();
    }

    #[test]
    fn checkpoint_messages() {
        assert!(is_checkpoint_message("checkpoint: 1.2 add"));
        assert!(is_checkpoint_message(
            "tidy\n\nOrchestrator-Checkpoint: 1.3\n"
        ));
        assert!(!is_checkpoint_message("fix: checkpoint: not at start"));
    }

    #[test]
    fn workflow_names() {
        for good in ["main", "feature-x", "a.b_c"] {
            assert!(valid_workflow_name(good), "{good}");
        }
        for bad in ["", "-x", ".x", "a..b", "a/b", "x.lock", "a b", "ä"] {
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

/// Held while a `git orchestrate run` drives a workflow ([`Store::take_run_lock`]): the
/// lock goes with the file's last descriptor.
#[derive(Debug)]
pub struct RunLock {
    _file: std::fs::File,
}

/// This machine's name, as the run lock records it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty() && !h.contains(char::is_whitespace))
        .unwrap_or_else(|| "localhost".to_string())
}

/// A lock file opened for `flock`: created when missing, never through a link, without
/// blocking (a FIFO put there answers at once), and only a regular file.
fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// How long a command waits for a lock another holds before it gives up, naming the lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// An advisory `flock` on `path` (created when missing), waited for (at most [`LOCK_WAIT`])
/// and held while the file is open; the kernel lets go of it when its holder ends, however
/// it ends.
fn exclusive_lock(path: &Path) -> Result<std::fs::File, StoreError> {
    let io = |e: std::io::Error| {
        StoreError::Internal(format!("cannot take the lock {}: {e}", path.display()))
    };
    let file = open_lock_file(path).map_err(io)?;
    let until = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                if std::time::Instant::now() >= until {
                    return Err(StoreError::Internal(format!(
                        "{} is held by another command for {} minutes; nothing was done (a \
                         process of yours holds it: `fuser {}` names it)",
                        path.display(),
                        LOCK_WAIT.as_secs() / 60,
                        path.display()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(io(e.into())),
        }
    }
}
