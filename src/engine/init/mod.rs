//! `init`: writes `.orchestrate.toml` when there is none (never overwriting one), adds the
//! fetch refspecs that share state (docs/refs.md, "Fetch refspecs"), and creates the workflow in INITIALIZING, or,
//! on a fresh clone whose remote has it, adopts the remote's. Running it again changes nothing.
//! With `--ci` it also writes the CI job that attests the workflow's work (docs/ci.md), and
//! refuses, before writing anything, when that file is there already.

use std::io::Write as _;
use std::path::PathBuf;

use super::sync::{Adoption, adopt_from_remote, ensure_refspecs, resolve_remote};
use serde::Serialize;

mod ci;
mod decide;
#[cfg(test)]
mod tests;

pub use self::ci::{CHECK_NAME, CiProvider};
use self::decide::{Checks, CiFacts, CiPlan, ConfigAction, Facts, WorkflowAction};
use super::{EngineError, Session, io_error};
use crate::config::{self, Config, Origin};
use crate::hooks::{install, managed};
use crate::workflow::Status;
use crate::workflow::briefing::Notice;

/// What `init` did (docs/agent-guide.md, "Other commands").
#[derive(Serialize)]
pub struct InitReport {
    pub workflow: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub main_branch: String,
    #[serde(rename = "config")]
    pub config_path: PathBuf,
    pub config_written: bool,
    /// Set when flags were given but an existing file was kept.
    #[serde(skip)]
    pub config_note: Option<String>,
    /// The test command found in the project's files and written as the first gate.
    pub detected_gate: Option<config::TestRunner>,
    pub created: bool,
    /// Set when the workflow was adopted from a remote instead of created.
    pub adopted: Option<Adoption>,
    /// The fetch refspecs added.
    pub refspecs_added: Vec<RefspecAdded>,
    /// The workflow's state: a TDD status, or a ticket's (docs/tickets.md).
    pub state: String,
    /// The hooks as installed; `None` with `--no-hooks`.
    pub hooks: Option<install::Report>,
    /// Set when they went in through a hook manager whose configuration holds ours already.
    pub hooks_manager: Option<managed::ManagedReport>,
    pub warnings: Vec<String>,
    /// The CI job written with `--ci`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<CiReport>,
    /// The configured master plan in the working tree, and whether `--plan-template` wrote it.
    pub master_plan: MasterPlanReport,
}

/// The master plan's file as `init` left it.
#[derive(Clone, Debug, Serialize)]
pub struct MasterPlanReport {
    /// As configured (`master_plan`), relative to the working tree's root.
    pub path: String,
    /// True when this `init` wrote the template there (`--plan-template`).
    pub template_written: bool,
    /// True when a file is there now.
    pub present: bool,
}

/// `init --ci`: where the job runs, and how it installs git-orchestrate.
#[derive(Clone, Copy, Debug)]
pub struct CiRequest<'a> {
    pub provider: CiProvider,
    /// `--ci-install`; `None`: `cargo install` of this very version once it is published,
    /// a refusal until then.
    pub install: Option<&'a str>,
}

/// The CI job `init --ci` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct CiReport {
    pub provider: CiProvider,
    /// The check's name, to make required.
    pub check: &'static str,
    /// The files written, relative to the working tree's root, the job's first.
    pub written: Vec<&'static str>,
    /// The project's own pipeline file, which must include the job (GitLab, when it had one).
    pub include_from: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefspecAdded {
    pub remote: String,
    pub refspec: String,
}

pub fn init(
    session: &Session,
    main_branch: Option<&str>,
    preflight: Option<&str>,
    fresh: bool,
    hooks: bool,
    ci: Option<CiRequest>,
    plan_template: bool,
) -> Result<InitReport, EngineError> {
    // One init at a time: a second would find the first's workflow half made (its reflog
    // written, its ref not yet) and take it for a deleted one.
    let _lock = session.store.init_lock()?;
    check(session, main_branch, fresh)?;
    let Present {
        path,
        existing,
        left_empty,
        snapshot,
        ticket,
    } = present(session)?;
    let plan = decide::decide(&Facts {
        config_exists: existing.is_some(),
        workflow_exists: snapshot.is_some() || ticket.is_some(),
        fresh,
        main_branch,
        preflight,
        hooks,
    });
    // Before anything is written: a CI file that is there already refuses the whole init.
    let ci_plan = match ci {
        Some(request) => {
            let state = snapshot.as_ref().map(|s| &s.state);
            let main = planned_main(session, state, &plan.config)?;
            let ci_plan = plan_ci(session, request, &main)?;
            Some((request, main, ci_plan))
        }
        None => None,
    };
    let config_note = plan.config.note();
    let state_now = snapshot.as_ref().map(|s| &s.state);
    let (config_written, detected_gate) = apply_config(
        session,
        &plan.config,
        existing,
        state_now,
        &path,
        left_empty,
    )?;
    let refspecs_added = add_refspecs(session)?;
    let mut warnings = Vec::new();
    let adopted = match plan.workflow {
        WorkflowAction::AdoptElseCreate => adopt(session, &mut warnings)?,
        WorkflowAction::Keep | WorkflowAction::Create => None,
    };
    let created = snapshot.is_none() && ticket.is_none() && adopted.is_none();
    let (state, status) = settle_workflow(session, snapshot, ticket.as_ref())?;
    let main = session.main_branch(Some(&state))?;
    if ticket.is_none() {
        warnings.extend(state_warnings(session, &state, &main, main_branch)?);
    }
    let ci = match ci_plan {
        Some((request, planned, ci_plan)) => {
            // A workflow adopted from the remote brings its own main branch.
            let ci_plan = match planned == main {
                true => ci_plan,
                false => plan_ci(session, request, &main)?,
            };
            Some(write_ci(session, request.provider, ci_plan)?)
        }
        None => None,
    };
    let master_plan = master_plan(session, plan_template)?;
    let (hooks_report, hooks_manager) = if plan.install_hooks {
        let (report, managed) = install_hooks(&session.git)?;
        (Some(report), managed)
    } else {
        (None, None)
    };
    Ok(InitReport {
        workflow: session.store.workflow().to_string(),
        reference: session.store.ref_name(),
        main_branch: main,
        config_path: path,
        config_written,
        config_note,
        detected_gate,
        created,
        adopted,
        refspecs_added,
        state: status,
        hooks: hooks_report,
        hooks_manager,
        warnings,
        ci,
        master_plan,
    })
}

/// The configuration as the decision has it: a kept file is read (and must parse), a written
/// one is written. Whether a file was written, and the gate it detected.
/// What `init` finds before it decides: the configuration file and the workflow.
struct Present {
    path: PathBuf,
    /// The working tree's configuration, when it has one that is not empty.
    existing: Option<String>,
    /// An empty file is there: what an init killed between creating the file and writing it
    /// left (before the file was written whole), written again, never kept as if chosen.
    left_empty: bool,
    snapshot: Option<crate::store::Snapshot>,
    /// A ticket workflow is kept as it is: init sets up the repository around it.
    ticket: Option<crate::store::TicketSnapshot>,
}

fn present(session: &Session) -> Result<Present, EngineError> {
    let path = session.store.workdir().join(config::FILE_NAME);
    let existing = session
        .read_working_tree_config()?
        .filter(|text| !text.trim().is_empty());
    let left_empty = existing.is_none() && path.symlink_metadata().is_ok_and(|m| m.is_file());
    let (snapshot, ticket) = match session.store.read_workflow()? {
        Some(crate::store::Workflow::Ticket(snap)) => (None, Some(*snap)),
        tdd => (tdd.and_then(crate::store::Workflow::into_tdd), None),
    };
    Ok(Present {
        path,
        existing,
        left_empty,
        snapshot,
        ticket,
    })
}

fn apply_config(
    session: &Session,
    action: &ConfigAction,
    existing: Option<String>,
    state: Option<&crate::workflow::State>,
    path: &std::path::Path,
    left_empty: bool,
) -> Result<(bool, Option<config::TestRunner>), EngineError> {
    match (action, existing) {
        (ConfigAction::Keep { .. }, Some(text)) => {
            Config::parse(&text, &Origin::WorkingTree)?;
            Ok((false, None))
        }
        (ConfigAction::Keep { .. }, None) => Ok((false, None)),
        (ConfigAction::Write { main, gate }, _) => {
            let main = match main {
                Some(main) => main.clone(),
                None => session.main_branch(state)?,
            };
            let detected = write_config(session, path, &main, gate.as_deref(), left_empty)?;
            Ok((true, detected))
        }
    }
}

/// The workflow's state and status after init: a TDD workflow's as read, a ticket's as its
/// record says (with a state for its main branch), else a new workflow's, created now.
fn settle_workflow(
    session: &Session,
    snapshot: Option<crate::store::Snapshot>,
    ticket: Option<&crate::store::TicketSnapshot>,
) -> Result<(crate::workflow::State, String), EngineError> {
    Ok(match (snapshot, ticket) {
        (Some(s), _) => {
            let status = s.state.status().to_string();
            (s.state, status)
        }
        (None, Some(t)) => (
            crate::workflow::State::new(Some(t.ticket.main_branch.clone())),
            t.ticket.state.as_str().to_string(),
        ),
        (None, None) => {
            let s = session.with_retries(|| session.read_or_create())?;
            let status = s.state.status().to_string();
            (s.state, status)
        }
    })
}

/// The configured master plan, with the template written there first when `write` asks
/// for it and no file is there (one that is, is kept as it is).
fn master_plan(session: &Session, write: bool) -> Result<MasterPlanReport, EngineError> {
    let path = session
        .working_tree_config()?
        .map_or_else(|| Config::default().master_plan, |c| c.master_plan);
    let root = session.store.workdir();
    let full = root.join(&path);
    let present = full.symlink_metadata().is_ok();
    if !write || present {
        return Ok(MasterPlanReport {
            path,
            template_written: false,
            present,
        });
    }
    let refuse = |why: &str| EngineError::BadInput {
        message: format!("no master-plan template written to {path}: {why}"),
        hint: "Set `master_plan` in .orchestrate.toml to a path inside the working tree, or \
               write the plan there yourself."
            .into(),
    };
    // The path comes from a file in the working tree: it is written only inside the tree,
    // never through a link, and never over anything.
    let relative = std::path::Path::new(&path);
    let plain = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain {
        return Err(refuse("it is not a plain path inside the working tree"));
    }
    let mut dir = root.to_path_buf();
    for part in relative.parent().into_iter().flat_map(|p| p.components()) {
        dir.push(part);
        match dir.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refuse(&format!(
                    "{} is a symbolic link (never written through)",
                    dir.display()
                )));
            }
            Ok(_) => return Err(refuse(&format!("{} is not a directory", dir.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(io_error(format!("create {}", dir.display())))?
            }
            Err(e) => return Err(io_error(format!("read {}", dir.display()))(e)),
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&full)
        .map_err(io_error(format!("create {}", full.display())))?;
    file.write_all(crate::workflow::master_plan::TEMPLATE.as_bytes())
        .map_err(io_error(format!("write {}", full.display())))?;
    Ok(MasterPlanReport {
        path,
        template_written: true,
        present: true,
    })
}

/// The main branch the workflow will have once `init` has run, as far as it can be told
/// before anything is written: the workflow's, else the one given for a new configuration,
/// else the configuration's or the one found.
fn planned_main(
    session: &Session,
    state: Option<&crate::workflow::State>,
    config: &ConfigAction,
) -> Result<String, EngineError> {
    match (state.and_then(|s| s.main_branch.clone()), config) {
        (Some(main), _) => Ok(main),
        (
            None,
            ConfigAction::Write {
                main: Some(main), ..
            },
        ) => Ok(main.clone()),
        (None, _) => session.main_branch(None),
    }
}

/// The CI files to write for `main`, or the refusal that writes nothing.
fn plan_ci(session: &Session, request: CiRequest, main: &str) -> Result<CiPlan, EngineError> {
    let root = session.store.workdir();
    // A link (even a dangling one) in the file's place is a file there: never written through.
    let there = |path: &str| root.join(path).symlink_metadata().is_ok();
    let version = env!("CARGO_PKG_VERSION");
    let default = ci::default_install(version);
    let runner = detect_runner(session).map(|r| r.command);
    let setup = ci::setup(runner.as_deref(), &project_files(root));
    decide::decide_ci(&CiFacts {
        provider: request.provider,
        main,
        install: request.install.or(default.as_deref()),
        setup: &setup,
        version,
        job_exists: there(request.provider.job_path()),
        gitlab_ci_exists: there(ci::GITLAB_CI),
    })
    .map_err(|refusal| EngineError::Rejected(refusal.rejection()))
}

/// The project's top-level file names, and `pyproject.toml`'s text: what the CI job's setup
/// is decided from.
fn project_files(root: &std::path::Path) -> ci::ProjectFiles {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    ci::ProjectFiles {
        names,
        pyproject: config::read_small_file(&root.join("pyproject.toml")),
    }
}

/// Writes the CI files, each only if it is still absent.
fn write_ci(
    session: &Session,
    provider: CiProvider,
    plan: CiPlan,
) -> Result<CiReport, EngineError> {
    let root = session.store.workdir();
    let mut written = Vec::new();
    for file in plan.files {
        let path = root.join(file.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
        }
        write_new(&path, &file.text)?;
        written.push(file.path);
    }
    Ok(CiReport {
        provider,
        check: CHECK_NAME,
        written,
        include_from: plan.include_from,
    })
}

/// Writes `text` into a new file at `path`, whole or not at all: into a temporary file beside
/// it, then linked into place, so a kill midway leaves no empty or cut file that a re-run
/// would keep. A file that appeared since it was looked for is never overwritten.
fn write_new(path: &std::path::Path, text: &str) -> Result<(), EngineError> {
    let file = write_temporary(path, text)?;
    file.persist_noclobber(path)
        .map_err(|e| io_error(format!("create {}", path.display()))(e.error))?;
    Ok(())
}

/// [`write_new`] over an empty file (the one a killed init left): renamed into its place.
fn write_over_empty(path: &std::path::Path, text: &str) -> Result<(), EngineError> {
    let file = write_temporary(path, text)?;
    file.persist(path)
        .map_err(|e| io_error(format!("write {}", path.display()))(e.error))?;
    Ok(())
}

/// `text` in a temporary file in `path`'s directory (a rename stays on one file system),
/// flushed to disk.
fn write_temporary(
    path: &std::path::Path,
    text: &str,
) -> Result<tempfile::NamedTempFile, EngineError> {
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".git-orchestrate-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_error(format!("create a file in {}", dir.display())))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(io_error(format!("write {}", path.display())))?;
    Ok(file)
}

/// Refuses, changing nothing, when `init` may not run; a deleted workflow ref is restored or
/// given up on purpose, never replaced silently.
fn check(session: &Session, main_branch: Option<&str>, fresh: bool) -> Result<(), EngineError> {
    let has_ref = session.store.tip()?.is_some();
    if !has_ref {
        if fresh {
            session.refuse_if_archived()?;
            session.store.forget_vanished()?;
        } else {
            session.refuse_if_vanished()?;
        }
    }
    let existing = match has_ref && fresh {
        true => Some(
            session
                .store
                .read()?
                .map_or(Status::Initializing, |s| s.state.status()),
        ),
        false => None,
    };
    let checks = Checks {
        workflow: session.store.workflow(),
        existing,
        fresh,
        main_branch,
    };
    let refused = match decide::refusal(&checks) {
        Some(refusal) => Some(refusal),
        None => decide::no_commit(
            session.store.head_commit()?.is_some() || session.store.has_any_branch()?,
        ),
    };
    match refused {
        Some(refusal) => Err(EngineError::Rejected(refusal.rejection())),
        None => Ok(()),
    }
}

/// What the configuration in force warns about, and a `--main-branch` the workflow does not
/// take (its main branch is fixed).
fn state_warnings(
    session: &Session,
    state: &crate::workflow::State,
    main: &str,
    asked: Option<&str>,
) -> Result<Vec<String>, EngineError> {
    let mut warnings: Vec<String> = session
        .load_config(Some(state))?
        .warnings
        .iter()
        .map(ToString::to_string)
        .collect();
    if let Some(asked) = asked.filter(|m| *m != main) {
        warnings.push(
            Notice::MainBranchKept {
                workflow: session.store.workflow().to_string(),
                main: main.to_string(),
                asked: asked.to_string(),
            }
            .to_string(),
        );
    }
    Ok(warnings)
}

/// Writes a new `.orchestrate.toml` for `main`, its first gate `gate`, or else the project's
/// own test runner when one is found: a workflow without gates verifies nothing but the
/// agent's word. The runner found, if one was.
fn write_config(
    session: &Session,
    path: &std::path::Path,
    main: &str,
    gate: Option<&str>,
    over_empty: bool,
) -> Result<Option<config::TestRunner>, EngineError> {
    let detected = match gate {
        Some(_) => None,
        None => detect_runner(session),
    };
    let first_gate = match (gate, &detected) {
        (Some(command), _) => config::FirstGate::Given(command),
        (None, Some(runner)) => config::FirstGate::Detected(runner),
        (None, None) => config::FirstGate::None,
    };
    let text = config::initial_file(main, first_gate);
    match over_empty {
        true => write_over_empty(path, &text)?,
        false => write_new(path, &text)?,
    }
    Ok(detected)
}

/// The project's own test runner, as a command that can start here.
fn detect_runner(session: &Session) -> Option<config::TestRunner> {
    let root = session.store.workdir().to_path_buf();
    let mut runner =
        config::detect_test_runner(&|name: &str| crate::config::read_small_file(&root.join(name)))?;
    // Many systems have `python3` only (Debian and Ubuntu, say): a gate that cannot start
    // verifies nothing.
    let inside = [
        session.store.workdir(),
        session.store.git_dir(),
        session.store.common_dir(),
    ];
    let on_path = |program: &str| crate::exec::env::on_commands_path(program, &inside);
    if let Some(rest) = runner.command.strip_prefix("python ")
        && !on_path("python")
        && on_path("python3")
    {
        runner.command = format!("python3 {rest}");
    }
    Some(runner)
}

/// Adds the fetch refspecs that share state to every remote.
fn add_refspecs(session: &Session) -> Result<Vec<RefspecAdded>, EngineError> {
    let mut added = Vec::new();
    for remote in session.git.remotes()? {
        for refspec in ensure_refspecs(session, &remote)? {
            added.push(RefspecAdded {
                remote: remote.clone(),
                refspec,
            });
        }
    }
    Ok(added)
}

/// The workflow adopted from the remote, when it has one; what went wrong is a warning.
fn adopt(session: &Session, warnings: &mut Vec<String>) -> Result<Option<Adoption>, EngineError> {
    let Ok(remote) = resolve_remote(session, None) else {
        return Ok(None);
    };
    match adopt_from_remote(session, &remote) {
        Ok(adopted) => Ok(adopted),
        // Neither adopted nor replaced by a fresh start that would hide it.
        Err(e @ EngineError::Forged { .. }) => Err(e),
        // Offline is no reason to refuse a local start; `sync` reports the split later.
        Err(e) if session.store.tip()?.is_some() => {
            warnings.push(
                Notice::AdoptionUnfinished {
                    workflow: session.store.workflow().to_string(),
                    remote: remote.clone(),
                    error: e.to_string(),
                }
                .to_string(),
            );
            Ok(None)
        }
        Err(e) => {
            warnings.push(
                Notice::AdoptionFailed {
                    remote: remote.clone(),
                    error: e.to_string(),
                }
                .to_string(),
            );
            Ok(None)
        }
    }
}

/// The hooks, as a fresh clone of a team's repository needs them: through the hook manager
/// when its committed configuration holds our entries already, else in the hooks directory.
/// Plain hooks beside such a manager run every gate twice once the manager's own install
/// step moves them aside (pre-commit runs `<hook>.legacy` too).
fn install_hooks(
    git: &crate::exec::Git,
) -> Result<(install::Report, Option<managed::ManagedReport>), EngineError> {
    let hooks = |source| EngineError::Hooks { source };
    if let Some((manager, found)) = managed::detect(git).map_err(hooks)?
        && managed::configured(git, manager).map_err(hooks)?
    {
        let report = managed::install(git, manager, found).map_err(hooks)?;
        return Ok((install::status(git).map_err(hooks)?, Some(report)));
    }
    Ok((install::install(git).map_err(hooks)?, None))
}
