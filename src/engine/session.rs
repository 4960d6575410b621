//! `Session`: one command's repository and workflow, the facts it reads once per attempt (the
//! configuration in force, the environment commands run in) and the one way it writes a
//! transition (compare-and-swap, re-run from a fresh read on a lost race).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{EngineError, chain, io_error, wrong_state};
use crate::config::{self, Config, ConfigError, Origin};
use crate::exec::{CommandEnv, Git};
use crate::store::{
    EntryType, FileChange, LockSighting, Snapshot, Store, StoreError, TransitionWrite, Workflow,
};
use crate::workflow::briefing::Notice;
use crate::workflow::state::Pin;
use crate::workflow::{
    self, Effect, Event, Human, PlanChange, Rejection, State, Status, Transition,
};

/// A signed answer's signature, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerSignature {
    /// Who signed, as the pinned allowed-signers file names them.
    pub principal: String,
    pub signature: String,
}

/// How often a command re-runs after losing a race before it gives up (exit 5).
const MAX_ATTEMPTS: u32 = 100;

/// How long a ref lock may stay the same file, unchanged, over a ref that does not move,
/// before it counts as left by a crash. Writers hold such a lock for milliseconds; this
/// leaves room for a loaded machine.
const LOCK_HELD_BY_NOBODY: Duration = Duration::from_secs(2);

/// A configuration's text (none: the defaults), where it came from, and what it parsed to.
type ParsedConfig = (Option<String>, Origin, std::sync::Arc<Config>);

/// A repository and workflow to act on.
pub struct Session {
    pub store: Store,
    pub git: Git,
    /// The configuration in force, loaded once per command attempt (and again only when the
    /// attempt moved the workflow to where another file is in force).
    config: RefCell<Option<(ConfigKey, Loaded)>>,
    /// The last configuration text parsed, with where it came from: a long-lived server
    /// (`mcp`) reads the file again on every call, but parses it again only when it changed.
    /// Kept only once [`Self::remember_config`] was called.
    parsed: Option<RefCell<Option<ParsedConfig>>>,
    /// The environment commands run in, made when the first one runs.
    env: std::cell::OnceCell<CommandEnv>,
}

/// What decides which configuration is in force: the main branch, the PR branch (once there
/// is one), the main branch the workflow was created with, and the pin of the PR's gates.
type ConfigKey = (String, Option<String>, Option<String>, Option<String>);

/// The facts one command attempt asks about at every step, gathered once from the workflow's
/// state as the attempt read it ([`Session::facts`]) and handed down, rather than asked of the
/// session again by each step (a `submit-work` of a plan asked for the main branch nine times).
#[derive(Clone)]
pub struct Facts {
    /// The workflow's main branch: fixed in its state once it exists.
    pub main: String,
    /// The configuration in force for that state.
    pub loaded: Loaded,
}

impl Facts {
    pub fn config(&self) -> &Config {
        &self.loaded.config
    }
}

/// The configuration in force, where it came from, and what the user must be warned about.
#[derive(Clone)]
pub struct Loaded {
    /// Shared, not copied: a call's steps each ask for it, and a server's calls keep it.
    pub config: std::sync::Arc<Config>,
    pub origin: Origin,
    pub warnings: Vec<Notice>,
}

impl Session {
    pub fn open(dir: &Path, workflow: &str) -> Result<Session, EngineError> {
        Self::open_selected(dir, Some(workflow))
    }

    /// As [`Self::open`]; `None`: the workflow git config selects, else `main`.
    pub fn open_selected(dir: &Path, workflow: Option<&str>) -> Result<Session, EngineError> {
        let mut store = Store::discover_selected(dir, workflow)?;
        let inside = [store.workdir(), store.git_dir(), store.common_dir()]
            .map(Path::to_path_buf)
            .to_vec();
        // The agent clients' settings are the user's, wired by `init --agent`: never part of
        // the agent's work, so never swept into a checkpoint.
        let git =
            Git::finding(store.workdir(), inside).leaving_out(crate::agent::setup::managed_paths());
        if store.needs_ref_commands() {
            store.use_ref_commands(std::sync::Arc::new(git.clone()));
        }
        Ok(Session {
            store,
            git,
            config: RefCell::new(None),
            parsed: None,
            env: std::cell::OnceCell::new(),
        })
    }

    /// A verifier's session on the repository in `dir` (made by `attest`): its store and its
    /// git see that repository only, never the caller's environment or configuration files.
    pub fn open_isolated(
        dir: &Path,
        workflow: &str,
        confinement: Option<crate::exec::confine::Confinement>,
    ) -> Result<Session, EngineError> {
        let mut store = Store::open_isolated(dir, workflow)?;
        let program = crate::exec::env::find_git_for(&[store.workdir()]);
        let git = Git::with_program(store.workdir(), program).isolated();
        if store.needs_ref_commands() {
            store.use_ref_commands(std::sync::Arc::new(git.clone()));
        }
        let session = Session {
            git,
            store,
            config: RefCell::new(None),
            parsed: None,
            env: std::cell::OnceCell::new(),
        };
        if let Some(confinement) = confinement {
            let env = session.new_command_env()?;
            // The directory of the tools the commands find first (sh, bash, git): a command
            // that could replace them would run every later command of the verification.
            let tools = std::env::split_paths(env.path()).next();
            let confinement = match tools {
                Some(tools) => confinement.also_read_only(&tools),
                None => confinement,
            };
            // Where the scratch worktrees are made, the commands' working directories: made
            // now, since only what exists can be bound writable inside what is not.
            // (`hermetic::scratch_root`, which reads this module's `Session`.)
            let scratch = crate::exec::env::scratch_dir(
                &[
                    session.store.workdir(),
                    session.store.git_dir(),
                    session.store.common_dir(),
                ],
                session.store.common_dir(),
            );
            std::fs::create_dir_all(&scratch)
                .map_err(io_error(format!("create {}", scratch.display())))?;
            let confinement = confinement.also_writable(&scratch);
            let _ = session.env.set(env.confined(confinement));
        }
        Ok(session)
    }

    /// The tree `git add --all && git write-tree` would make of the working tree, the
    /// user's staging area left alone: taken in-process where the store reads the working
    /// tree as git would (src/store/worktree_tree.rs); else git adds into a scratch copy of
    /// the index, and the tree is written from that copy in-process where the store reads
    /// its form, else by git (src/store/index_tree.rs).
    pub fn worktree_tree(&self) -> Result<String, EngineError> {
        // A file git would wait on for ever is refused on either road: git would never return.
        let would_hang = |e: StoreError| EngineError::BadInput {
            message: format!("the working tree's tree cannot be taken: {e}"),
            hint: "remove it, or make it a regular file".into(),
        };
        if self.git.is_callers() {
            match self.store.worktree_tree(self.git.left_out()) {
                Ok(Some(tree)) => return Ok(tree.to_string()),
                Err(e @ StoreError::WouldHang(_)) => return Err(would_hang(e)),
                // Any other error is git's to meet and say again, in its own words.
                _ => {}
            }
        }
        self.store.refuse_waiting_reads().map_err(would_hang)?;
        let scratch = self.git.index_with_all(&self.store.index_path())?;
        // An error here is git's to meet and say again, in its own words.
        if let Ok(Some(tree)) = self.store.tree_of_index(&scratch) {
            return Ok(tree.to_string());
        }
        Ok(self.git.tree_of_index(&scratch)?)
    }

    /// Refuses the FIFOs, sockets and devices `git status` would read as ignore or
    /// attributes files in the working tree at `top` (this one where `None`) and wait on for
    /// ever (`Store::refuse_waiting_reads`): asked before each `git status` that lists
    /// untracked files.
    pub fn refuse_waiting_reads(&self, top: Option<&std::path::Path>) -> Result<(), EngineError> {
        self.store
            .refuse_waiting_status_reads(top)
            .map_err(|e| EngineError::BadInput {
                message: format!("the working tree's files cannot be listed: {e}"),
                hint: "remove it, or make it a regular file".into(),
            })
    }

    /// The environment the test, gate and review commands run in (docs/integrity.md,
    /// "Hermetic verification").
    pub fn command_env(&self) -> Result<&CommandEnv, EngineError> {
        if let Some(env) = self.env.get() {
            return Ok(env);
        }
        let env = self.new_command_env()?;
        Ok(self.env.get_or_init(|| env))
    }

    fn new_command_env(&self) -> Result<CommandEnv, EngineError> {
        CommandEnv::with_git(
            &[
                self.store.workdir(),
                self.store.git_dir(),
                self.store.common_dir(),
            ],
            Some(self.git.program().to_path_buf()),
        )
        .map_err(io_error(
            "make the directory of the tools every command runs with (sh, bash, git): without it a \
             command finds them wherever PATH says",
        ))
    }

    /// The TDD workflow's snapshot, creating the workflow in INITIALIZING when it does not
    /// exist; a ticket workflow is refused.
    pub fn read_or_create(&self) -> Result<Snapshot, EngineError> {
        self.read_or_create_workflow()?
            .into_tdd()
            .ok_or_else(|| self.ticket_refused())
    }

    /// The refusal of a TDD command on a ticket workflow.
    pub fn ticket_refused(&self) -> EngineError {
        StoreError::TicketWorkflow {
            reference: self.store.ref_name(),
        }
        .into()
    }

    /// The workflow, either kind, read once; a new TDD workflow in INITIALIZING when none
    /// exists.
    pub fn read_or_create_workflow(&self) -> Result<Workflow, EngineError> {
        if let Some(workflow) = self.store.read_workflow()? {
            return Ok(workflow);
        }
        self.refuse_if_vanished()?;
        let working_tree = self.working_tree_config()?;
        let main = match working_tree.as_ref().and_then(|c| c.main_branch.clone()) {
            Some(main) => main,
            None => self.store.detect_main_branch()?,
        };
        // main is accounted for from the first pin on, not from here: `init` creates the
        // workflow and a human then commits its config on main.
        let state = State::new(Some(main));
        self.store.write(
            None,
            &TransitionWrite {
                event: "create",
                from: None,
                state: &state,
                plan: &PlanChange::Keep,
                output_log: FileChange::Keep,
                escalation: FileChange::Keep,
                review: FileChange::Keep,
                step: None,
                summary: "workflow created",
                human: None,
                signed: None,
                // Marks a history whose every transition records its event, so that `audit`
                // tells a transition with none from one written before events were.
                input: Some(chain::CREATED.to_string()),
                pinned_trees: FileChange::Keep,
            },
        )?;
        self.store.read_workflow()?.ok_or(EngineError::Conflict)
    }

    /// Refuses to start a workflow whose ref was deleted (a test command, a script): the new
    /// one would silently replace its history. `init --new` starts over on purpose.
    pub fn refuse_if_vanished(&self) -> Result<(), EngineError> {
        // A ref being created has its reflog a moment before the ref itself: looked at
        // again before it is called deleted.
        if self.store.vanished_tip()?.is_some() {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        match self.store.vanished_tip()? {
            Some((tip, restorable)) => Err(StoreError::Vanished {
                reference: self.store.ref_name(),
                tip,
                restorable,
            }
            .into()),
            None => self.refuse_if_archived(),
        }
    }

    /// Refuses to start a workflow under a name the archive holds: the name stays taken, as a
    /// live workflow's does, and its history stays that workflow's.
    pub fn refuse_if_archived(&self) -> Result<(), EngineError> {
        let store = &self.store;
        match store.archived_tip(store.workflow())? {
            Some(tip) => Err(EngineError::BadInput {
                message: format!(
                    "workflow \"{}\" is finished and archived in {} (its last tip is {tip}): its name stays taken",
                    store.workflow(),
                    crate::store::ARCHIVE
                ),
                hint: format!(
                    "Start the new work under another name, or go on with this one after \
                     `git orchestrate archive --restore {0}`. `git orchestrate log --workflow {0}` \
                     and `git orchestrate board --all` read the archived one.",
                    store.workflow()
                ),
            }),
            None => Ok(()),
        }
    }

    /// The workflow's snapshot, for a command that has nothing to do in a new workflow: when
    /// the workflow does not exist, the command is refused as `refuse` refuses it in
    /// INITIALIZING, and nothing is created.
    pub fn read_or_refuse(
        &self,
        command: &str,
        refuse: impl FnOnce(&State) -> Option<Rejection>,
    ) -> Result<Snapshot, EngineError> {
        if let Some(snapshot) = self.store.read()? {
            return Ok(snapshot);
        }
        Err(match refuse(&State::new(None)) {
            Some(rejection) => EngineError::Rejected(rejection),
            None => wrong_state(
                Status::Initializing,
                format!(
                    "{command} is not accepted in state INITIALIZING: workflow \"{}\" has not started yet",
                    self.store.workflow()
                ),
                "Run `git orchestrate get-task`: it explains how to submit the first plan.",
            ),
        })
    }

    pub(super) fn working_tree_config(&self) -> Result<Option<Config>, EngineError> {
        match self.read_working_tree_config()? {
            Some(text) => Ok(Some(Config::parse(&text, &Origin::WorkingTree)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn read_working_tree_config(&self) -> Result<Option<String>, EngineError> {
        let path = self.store.workdir().join(config::FILE_NAME);
        // A directory, a FIFO or a link to a device in its place is the user's input gone
        // wrong (or an agent's doing), not a broken repository: a config error, at once.
        let bytes = match crate::input::read_file(&path, crate::input::CAP) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(crate::input::FileError::Io { source, .. }) => {
                return Err(io_error(format!("read {}", path.display()))(source));
            }
            Err(e) => {
                return Err(ConfigError {
                    origin: Origin::WorkingTree.to_string(),
                    message: e.problem(),
                }
                .into());
            }
        };
        Ok(Some(config_text(bytes, &Origin::WorkingTree)?))
    }

    /// The main branch of this workflow: fixed in its state once it exists.
    pub fn main_branch(&self, state: Option<&State>) -> Result<String, EngineError> {
        if let Some(main) = state.and_then(|s| s.main_branch.clone()) {
            return Ok(main);
        }
        match self.working_tree_config()?.and_then(|c| c.main_branch) {
            Some(main) => Ok(main),
            None => Ok(self.store.detect_main_branch()?),
        }
    }

    /// The configuration in force for `state` (docs/config.md, "Which file is in force"): once a PR branch exists, the file as
    /// committed on the main branch, so an agent cannot weaken its own gates; before that,
    /// the working-tree file, with a warning while it is not committed on main.
    /// main's gates as they are now, for a PR to be verified under (docs/integrity.md).
    pub fn pin_now(&self, main: &str) -> Result<Option<Pin>, EngineError> {
        Ok(self
            .store
            .file_id_at_branch(main, config::FILE_NAME)?
            .map(|(commit, config)| Pin { commit, config }))
    }

    /// The blob of the master plan on `main` now: what `--no-pr-left` judges and what idle
    /// holds against (docs/agent-guide.md, "Nothing left to do"). `None` when the branch or
    /// the file does not exist.
    pub fn master_plan_blob(&self, main: &str, path: &str) -> Result<Option<String>, EngineError> {
        Ok(self
            .store
            .file_id_at_branch(main, path)?
            .and_then(|(_, blob)| blob))
    }

    /// The master plan's text in commit `commit` (an id): `None` when it has no such file;
    /// one over 8 MiB is refused unread.
    pub fn master_plan_at(&self, commit: &str, path: &str) -> Result<Option<String>, EngineError> {
        let tree = self.store.tree_of(commit)?;
        let Some(entry) = self
            .store
            .tree_entry(&tree, path)?
            .filter(|e| matches!(e.kind, EntryType::File | EntryType::Executable))
        else {
            return Ok(None);
        };
        match self
            .store
            .blob_within(&entry.id.to_string(), crate::input::CAP)?
        {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(size) => Err(EngineError::BadInput {
                message: format!(
                    "the master plan {path} in {} is {size} bytes, over the limit of {} MiB; it is not read",
                    crate::short_id(commit),
                    crate::input::CAP >> 20
                ),
                hint: "A master plan lists PRs; keep it small.".into(),
            }),
        }
    }

    /// True when `state` is idle and the master plan on the main branch is still the one the
    /// agent judged: nothing is left to do.
    pub fn idle_holds(&self, state: &State, master_plan: &str) -> Result<bool, EngineError> {
        if state.idle.is_none() {
            return Ok(false);
        }
        self.idle_holds_on(state, &self.main_branch(Some(state))?, master_plan)
    }

    /// [`Self::idle_holds`] with `main`, the workflow's main branch, read already.
    pub fn idle_holds_on(
        &self,
        state: &State,
        main: &str,
        master_plan: &str,
    ) -> Result<bool, EngineError> {
        let Some(idle) = &state.idle else {
            return Ok(false);
        };
        Ok(self.master_plan_blob(main, master_plan)? == idle.master_plan)
    }

    /// Forgets what an earlier call in this process read: a long-lived server (`mcp`) starts
    /// each call from the repository as it is now.
    pub fn begin_call(&self) {
        self.config.borrow_mut().take();
    }

    pub fn load_config(&self, state: Option<&State>) -> Result<Loaded, EngineError> {
        let main = self.main_branch(state)?;
        self.load_config_on(state, main)
    }

    /// The facts of one command attempt on `state` (the workflow as the attempt read it):
    /// gathered once, then handed down to every step that asks.
    pub fn facts(&self, state: Option<&State>) -> Result<Facts, EngineError> {
        let main = self.main_branch(state)?;
        let loaded = self.load_config_on(state, main.clone())?;
        Ok(Facts { main, loaded })
    }

    /// [`Self::load_config`] with the main branch read already.
    fn load_config_on(&self, state: Option<&State>, main: String) -> Result<Loaded, EngineError> {
        let key = (
            main.clone(),
            state.and_then(|s| s.branch()).map(str::to_string),
            state.and_then(|s| s.main_branch.clone()),
            state
                .and_then(State::pr)
                .and_then(|pr| pr.pin.as_ref())
                .map(|p| p.commit.clone()),
        );
        if let Some((cached, loaded)) = self.config.borrow().as_ref()
            && *cached == key
        {
            return Ok(loaded.clone());
        }
        let loaded = self.read_config(state, main)?;
        *self.config.borrow_mut() = Some((key, loaded.clone()));
        Ok(loaded)
    }

    fn read_config(&self, state: Option<&State>, main: String) -> Result<Loaded, EngineError> {
        // main's file as it is now: its blob id only, which tells a change without a read.
        let now_on_main = self
            .store
            .file_id_at_branch(&main, config::FILE_NAME)?
            .and_then(|(_, blob)| blob);
        let mut warnings = Vec::new();
        // A PR is verified under main's gates as they were when it began; a change on main
        // takes effect when a human repins (docs/integrity.md).
        let (blob, main_origin) = match state.and_then(State::pr).and_then(|pr| pr.pin.as_ref()) {
            Some(pin) => {
                if pin.config != now_on_main {
                    warnings.push(Notice::MainGatesChanged {
                        main: main.clone(),
                        pinned: pin.commit.clone(),
                    });
                }
                let origin = Origin::Pinned {
                    main: main.clone(),
                    commit: pin.commit.clone(),
                };
                (pin.config.clone(), origin)
            }
            None => (now_on_main, Origin::MainBranch(main.clone())),
        };
        let on_main = match blob.as_deref() {
            Some(b) => Some(
                self.store
                    .blob_within(b, crate::input::CAP)?
                    .map_err(|size| ConfigError {
                        origin: main_origin.to_string(),
                        message: format!(
                            "it is {size} bytes, over the limit of {} MiB, and is not read",
                            crate::input::CAP >> 20
                        ),
                    })?,
            ),
            None => None,
        };
        let working = self.read_working_tree_config()?;
        let pr_branch = state.and_then(|s| s.branch());
        let (text, origin) = match (pr_branch, on_main, working) {
            (Some(branch), Some(committed), working) => {
                let committed = config_text(committed, &main_origin)?;
                if working.as_deref().is_some_and(|w| w != committed) {
                    warnings.push(Notice::ConfigDiffersFromMain {
                        main: main.clone(),
                        branch: branch.to_string(),
                    });
                }
                (Some(committed), main_origin)
            }
            (_, on_main, Some(working)) => {
                match on_main {
                    None => warnings.push(Notice::ConfigNotCommitted { main: main.clone() }),
                    Some(committed) if committed != working.as_bytes() => {
                        warnings.push(Notice::ConfigUncommitted { main: main.clone() });
                    }
                    Some(_) => {}
                }
                (Some(working), Origin::WorkingTree)
            }
            (_, Some(committed), None) => {
                (Some(config_text(committed, &main_origin)?), main_origin)
            }
            (_, None, None) => (None, Origin::Defaults),
        };
        let config = self.parse_config(text, &origin)?;
        if let (Some(fixed), Some(configured)) = (
            state.and_then(|s| s.main_branch.as_ref()),
            &config.main_branch,
        ) && fixed != configured
        {
            warnings.push(Notice::MainBranchFixed {
                origin: origin.to_string(),
                configured: configured.clone(),
                workflow: self.store.workflow().to_string(),
                fixed: fixed.clone(),
            });
        }
        if config.preflight.is_empty() {
            warnings.push(Notice::NoPreflightGates {
                origin: origin.to_string(),
            });
        }
        Ok(Loaded {
            config,
            origin,
            warnings,
        })
    }

    /// From now on the last configuration parsed is kept, by its text and origin, and a text
    /// seen again is not parsed again: for a long-lived server (`mcp`), which reads the file
    /// on every call. One command parses once and keeps nothing.
    pub fn remember_config(&mut self) {
        self.parsed = Some(RefCell::new(None));
    }

    /// `Config::parse` of `text` (the defaults where there is none), remembered as
    /// [`Self::remember_config`] says.
    fn parse_config(
        &self,
        text: Option<String>,
        origin: &Origin,
    ) -> Result<std::sync::Arc<Config>, ConfigError> {
        let parse = |text: Option<&str>| match text {
            Some(text) => Config::parse(text, origin).map(std::sync::Arc::new),
            None => Ok(std::sync::Arc::new(Config::default())),
        };
        let Some(parsed) = &self.parsed else {
            return parse(text.as_deref());
        };
        if let Some((seen, seen_origin, config)) = parsed.borrow().as_ref()
            && *seen == text
            && seen_origin == origin
        {
            return Ok(config.clone());
        }
        let config = parse(text.as_deref())?;
        *parsed.borrow_mut() = Some((text, origin.clone(), config.clone()));
        Ok(config)
    }

    /// Refuses (exit 4) unless HEAD is on the PR branch: the orchestrator only verifies,
    /// commits or resets the work on the branch it created. `why` completes "HEAD is on X,
    /// not on the PR branch B (state S)".
    pub(crate) fn require_pr_branch(
        &self,
        state: &State,
        command: &str,
        why: &str,
    ) -> Result<(), EngineError> {
        let Some(branch) = state.branch() else {
            return Ok(());
        };
        let head = self.store.head_branch()?;
        if head.as_deref() == Some(branch) {
            return Ok(());
        }
        // git refuses to check out a branch another worktree has: send the agent there.
        let hint = match self.branch_worktree(branch)? {
            Some(path) => format!(
                "{branch} is checked out in the worktree {}: run `git orchestrate {command}` there.",
                path.display()
            ),
            None => format!("Run `git checkout {branch}`, then `git orchestrate {command}` again."),
        };
        Err(wrong_state(
            state.status(),
            format!(
                "HEAD is on {}, not on the PR branch {branch} (state {}){why}",
                head.as_deref().unwrap_or("a detached commit"),
                state.status()
            ),
            hint,
        ))
    }

    /// The worktree `branch` is checked out in, when that is not this one.
    pub fn branch_worktree(&self, branch: &str) -> Result<Option<PathBuf>, EngineError> {
        if self.store.head_branch()?.as_deref() == Some(branch) {
            return Ok(None);
        }
        Ok(self
            .git
            .checked_out_branches()?
            .into_iter()
            .find_map(|(name, path)| (name == branch).then_some(path)))
    }

    /// Warns when the working tree is not on the PR branch the workflow expects.
    pub fn branch_warning(&self, state: &State) -> Result<Option<Notice>, EngineError> {
        let Some(branch) = state.branch() else {
            return Ok(None);
        };
        if !matches!(state.status(), Status::ExecutingTdd | Status::Debugging) {
            return Ok(None);
        }
        let head = self.store.head_branch()?;
        if head.as_deref() == Some(branch) {
            return Ok(None);
        }
        Ok(Some(Notice::OffBranch {
            head,
            branch: branch.to_string(),
            worktree: self.branch_worktree(branch)?,
        }))
    }

    /// The transition `event` makes from `snapshot`, with the full plan parsed only when the
    /// event needs it (it adds a task, or is a re-plan held to the plan it replaces).
    pub fn transition(&self, snapshot: &Snapshot, event: Event) -> Result<Transition, EngineError> {
        let full_plan = if workflow::needs_full_plan(&event) {
            self.store.plan(snapshot)?
        } else {
            None
        };
        workflow::transition(&snapshot.state, full_plan.as_ref(), event)
            .map_err(EngineError::Rejected)
    }

    /// The transition for `event`, stored: for events that save no run output.
    pub fn apply(&self, snapshot: &Snapshot, event: Event) -> Result<Transition, EngineError> {
        let t = self.transition(snapshot, event)?;
        self.commit(snapshot, &t, None)?;
        Ok(t)
    }

    /// [`Self::apply`] for a human's answer, recorded with how it was authorised and, when
    /// it was signed, its checked signature.
    pub fn apply_answer(
        &self,
        snapshot: &Snapshot,
        event: Event,
        human: Human,
        signed: Option<&AnswerSignature>,
    ) -> Result<Transition, EngineError> {
        let t = self.transition(snapshot, event)?;
        self.write_transition(snapshot, &t, None, Some(human), signed, |_| Ok(()))?;
        Ok(t)
    }

    /// [`Self::apply_answer`], with `before` given the new commit once its objects are
    /// stored and before the ref moves (a human's merge pushed with its record): an error
    /// from it leaves the workflow where it was.
    pub fn apply_answer_before(
        &self,
        snapshot: &Snapshot,
        event: Event,
        human: Human,
        signed: Option<&AnswerSignature>,
        before: impl FnOnce(gix::ObjectId) -> Result<(), EngineError>,
    ) -> Result<Transition, EngineError> {
        let t = self.transition(snapshot, event)?;
        self.write_transition(snapshot, &t, None, Some(human), signed, before)?;
        Ok(t)
    }

    /// Stores `t` on top of `snapshot`; `output` is the run output its `SaveOutput` effect names.
    pub fn commit(
        &self,
        snapshot: &Snapshot,
        t: &Transition,
        output: Option<&[u8]>,
    ) -> Result<(), EngineError> {
        self.write_transition(snapshot, t, output, None, None, |_| Ok(()))
    }

    /// [`Self::commit`], with `before` given the new commit once its objects are stored and
    /// before the ref moves (a claim pushed with the transition that accepts a plan): an
    /// error from it leaves the workflow where it was.
    pub fn commit_before(
        &self,
        snapshot: &Snapshot,
        t: &Transition,
        output: Option<&[u8]>,
        before: impl FnOnce(gix::ObjectId) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        self.write_transition(snapshot, t, output, None, None, before)
    }

    fn write_transition(
        &self,
        snapshot: &Snapshot,
        t: &Transition,
        output: Option<&[u8]>,
        human: Option<Human>,
        signed: Option<&AnswerSignature>,
        before: impl FnOnce(gix::ObjectId) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        // A cancelled MCP call records nothing, even when its commands had all finished.
        if crate::exec::cancel::cancelled() {
            return Err(EngineError::Io {
                what: "record the transition".into(),
                source: std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "the call was cancelled; nothing was recorded",
                ),
            });
        }
        let review = t.effects.iter().find_map(|e| match e {
            Effect::SaveReview(record) => Some(Some(record.to_json())),
            Effect::DropPrRecords => Some(None),
            _ => None,
        });
        let merged = t.effects.contains(&Effect::DropPrRecords);
        // A RED step's pinned tree, and the tree its task began at (a checkpoint's, whose
        // commit a squash leaves behind), are held by no commit the chain reaches: the chain
        // carries them, so that a verifier elsewhere (a clone, CI, the server) can put its test
        // back and count the code each task wrote from where it began.
        // A step's checkpoint tree likewise, and the tree a passing run's test looked at:
        // where the next task begins (src/engine/pr_record.rs).
        let trees: Vec<&String> = match &t.input {
            Event::TestRan(run) => match &run.red {
                Some(crate::workflow::state::RedOutcome::Pinned(pin)) => {
                    std::iter::once(&pin.tree).chain(&pin.start).collect()
                }
                _ => run.tested_tree.iter().collect(),
            },
            Event::CheckpointRecorded { tree, .. } if t.step.is_some() => vec![tree],
            _ => Vec::new(),
        };
        let mut red_trees = Vec::new();
        for tree in trees {
            red_trees.push(gix::ObjectId::from_hex(tree.as_bytes()).map_err(|e| {
                EngineError::Internal(format!("a pinned tree id did not parse: {e}"))
            })?);
        }
        self.store.write_before(
            Some(snapshot),
            &TransitionWrite {
                event: t.event,
                from: Some(t.from),
                state: &t.state,
                plan: &t.plan,
                output_log: match output {
                    Some(bytes) => FileChange::Set(bytes),
                    None if merged => FileChange::Remove,
                    None => FileChange::Keep,
                },
                escalation: t
                    .effects
                    .iter()
                    .find_map(|e| match e {
                        Effect::SaveEscalation(report) => Some(FileChange::Set(report.as_bytes())),
                        Effect::DropEscalation => Some(FileChange::Remove),
                        _ => None,
                    })
                    .unwrap_or(FileChange::Keep),
                review: match &review {
                    Some(Some(bytes)) => FileChange::Set(bytes),
                    Some(None) => FileChange::Remove,
                    None => FileChange::Keep,
                },
                step: t.step.map(|s| s.to_string()),
                summary: &t.summary,
                human,
                signed: signed.map(|s| crate::store::SignedAnswer {
                    principal: &s.principal,
                    signature: &s.signature,
                }),
                input: Some(event_record(&t.input)?),
                pinned_trees: match (red_trees.is_empty(), merged) {
                    (false, _) => FileChange::Set(&red_trees),
                    (true, true) => FileChange::Remove,
                    (true, false) => FileChange::Keep,
                },
            },
            before,
        )?;
        Ok(())
    }

    /// Runs `attempt` until it does not lose a race, at most [`MAX_ATTEMPTS`] times.
    pub fn with_retries<T>(
        &self,
        mut attempt: impl FnMut() -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        // Locks seen after a lost race, with when each was first seen as it is.
        let mut seen: Vec<(LockSighting, Instant)> = Vec::new();
        for n in 0..MAX_ATTEMPTS {
            // Each attempt reads the configuration afresh, as it reads the state.
            self.config.borrow_mut().take();
            match attempt() {
                Err(EngineError::Conflict) => {
                    // A lock older than any writer holds one is a crash's, whichever write of
                    // the attempt lost to it (some name no lock themselves).
                    if let Some(locked) = self.store.stale_lock() {
                        return Err(EngineError::Store(locked));
                    }
                    // A writer at work holds a ref lock for milliseconds and then the ref moves;
                    // the same lock file, unchanged, over a still ref for this long is a crash's.
                    let now = self.store.workflow_lock_sightings();
                    let mut next = Vec::with_capacity(now.len());
                    for lock in now {
                        let since = seen
                            .iter()
                            .find(|(old, _)| old.same_lock(&lock))
                            .map_or_else(Instant::now, |(_, since)| *since);
                        if since.elapsed() >= LOCK_HELD_BY_NOBODY {
                            return Err(EngineError::Store(lock.into_error()));
                        }
                        next.push((lock, since));
                    }
                    seen = next;
                    std::thread::sleep(backoff(n));
                }
                other => return other,
            }
        }
        // Not other processes, but a lock that nobody releases (a claim's too: a plan's
        // acceptance writes its claim beside the workflow).
        if let Some(locked) = self.store.lock_at_give_up() {
            return Err(EngineError::Store(locked));
        }
        Err(EngineError::RetriesExhausted {
            attempts: MAX_ATTEMPTS,
            workflow: self.store.workflow().to_string(),
        })
    }
}

/// A config file's bytes as text: TOML is UTF-8, and a file that is not is refused rather
/// than read with its bad bytes replaced.
pub(super) fn config_text(bytes: Vec<u8>, origin: &Origin) -> Result<String, ConfigError> {
    // The same cap as the working tree's file: a committed config is no larger.
    if bytes.len() as u64 > crate::input::CAP {
        return Err(ConfigError {
            origin: origin.to_string(),
            message: format!(
                "it is larger than the limit of {} MiB",
                crate::input::CAP / (1024 * 1024)
            ),
        });
    }
    String::from_utf8(bytes).map_err(|e| ConfigError {
        origin: origin.to_string(),
        message: format!(
            "not valid UTF-8 text (an invalid byte at offset {}): TOML files are UTF-8",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// The JSON an event is recorded as, in its transition's commit.
fn event_record(event: &Event) -> Result<String, EngineError> {
    serde_json::to_string(event)
        .map_err(|e| EngineError::Internal(format!("an event did not serialize: {e}")))
}

/// A random pause that grows with the attempt number, so racing processes spread out.
pub(super) fn backoff(attempt: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    h.write_u32(std::process::id());
    let cap_ms = 1u64 << attempt.min(6);
    Duration::from_micros(h.finish() % (cap_ms * 1000) + 100)
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod unit_tests;
