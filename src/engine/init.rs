//! `init`: writes `.orchestrate.toml` when there is none (never overwriting one), adds the
//! fetch refspecs that share state (docs/refs.md, "Fetch refspecs"), and creates the workflow in INITIALIZING, or,
//! on a fresh clone whose remote has it, adopts the remote's. Running it again changes nothing.

use std::io::Write as _;
use std::path::PathBuf;

use super::sync::{Adoption, adopt_from_remote, ensure_refspecs, resolve_remote};
use serde::Serialize;

use super::{EngineError, Session, io_error};
use crate::config::{self, Config, Origin};
use crate::hooks::{install, managed};
use crate::store::is_valid_branch_name;
use crate::workflow::briefing::Notice;
use crate::workflow::{Rejection, RejectionKind, Status};

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
    pub state: Status,
    /// The hooks as installed; `None` with `--no-hooks`.
    pub hooks: Option<install::Report>,
    /// Set when they went in through a hook manager whose configuration holds ours already.
    pub hooks_manager: Option<managed::ManagedReport>,
    pub warnings: Vec<String>,
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
) -> Result<InitReport, EngineError> {
    // One init at a time: a second would find the first's workflow half made (its reflog
    // written, its ref not yet) and take it for a deleted one.
    let _lock = session.store.init_lock()?;
    // A deleted workflow ref is restored or given up on purpose, never replaced silently.
    if session.store.tip()?.is_none() {
        if fresh {
            session.store.forget_vanished()?;
        } else {
            session.refuse_if_vanished()?;
        }
    } else if fresh {
        let status = session
            .store
            .read()?
            .map_or(Status::Initializing, |s| s.state.status());
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::WrongState,
            state: status,
            message: format!(
                "init --new starts a workflow over only when its ref is gone, and workflow {} exists (state \
                 {status}); nothing was changed",
                session.store.workflow()
            ),
            hint: "Use `--workflow NAME` for another workflow beside it, or delete this one's ref first if you \
                   really mean to drop its history."
                .into(),
        }));
    }
    if let Some(main) = main_branch.filter(|m| !is_valid_branch_name(m)) {
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::InvalidInput,
            state: Status::Initializing,
            message: format!("--main-branch \"{main}\" is not a valid branch name"),
            hint: "Pass the name of the branch PRs start from and merge into, e.g. --main-branch main.".into(),
        }));
    }
    // PR branches start from the main branch: with no commit there is nothing to start
    // from, and the configuration could not be committed on main either.
    if session.store.head_commit()?.is_none() && !session.store.has_any_branch()? {
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::WrongState,
            state: Status::Initializing,
            message: "this repository has no commit yet: git-orchestrate starts every PR branch from the main \
                      branch, so it needs a first commit; nothing was changed"
                .into(),
            hint: "Make the first commit (for example `git commit --allow-empty -m \"Initial commit\"`, or \
                   commit your project), then run `git orchestrate init` again."
                .into(),
        }));
    }
    let path = session.store.workdir().join(config::FILE_NAME);
    let existing = session.read_working_tree_config()?;
    let snapshot = session.store.read()?;
    let mut detected_gate = None;
    let (config_written, config_note) = match existing {
        Some(text) => {
            Config::parse(&text, &Origin::WorkingTree)?;
            let ignored: Vec<&str> = [
                main_branch.map(|_| "--main-branch"),
                preflight.map(|_| "--preflight"),
            ]
            .into_iter()
            .flatten()
            .collect();
            let note = (!ignored.is_empty()).then(|| {
                format!(
                    "kept the existing {}; {} not applied (edit the file instead)",
                    config::FILE_NAME,
                    ignored.join(" and ")
                )
            });
            (false, note)
        }
        None => {
            let main = match main_branch {
                Some(main) => main.to_string(),
                None => session.main_branch(snapshot.as_ref().map(|s| &s.state))?,
            };
            // The project's own test runner is the first gate unless one was named: a
            // workflow without gates verifies nothing but the agent's word.
            let root = session.store.workdir().to_path_buf();
            let detected = match preflight {
                Some(_) => None,
                None => config::detect_test_runner(&|name: &str| {
                    crate::config::read_small_file(&root.join(name))
                }),
            }
            .map(|mut runner| {
                // Many systems have `python3` only (Debian and Ubuntu, say): a gate that
                // cannot start verifies nothing.
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
                runner
            });
            let first_gate = match (preflight, &detected) {
                (Some(command), _) => config::FirstGate::Given(command),
                (None, Some(runner)) => config::FirstGate::Detected(runner),
                (None, None) => config::FirstGate::None,
            };
            detected_gate = detected.clone();
            let text = config::initial_file(&main, first_gate);
            // create_new: a file that appeared since the read above is never overwritten.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(io_error(format!("create {}", path.display())))?;
            file.write_all(text.as_bytes())
                .map_err(io_error(format!("write {}", path.display())))?;
            (true, None)
        }
    };
    let mut refspecs_added = Vec::new();
    for remote in session.git.remotes()? {
        for spec in ensure_refspecs(session, &remote)? {
            refspecs_added.push((remote.clone(), spec));
        }
    }
    let mut warnings = Vec::new();
    let adopted = match (&snapshot, resolve_remote(session, None)) {
        // A deliberate fresh start does not take the remote's history back either.
        (None, Ok(_)) if fresh => None,
        (None, Ok(remote)) => match adopt_from_remote(session, &remote) {
            Ok(adopted) => adopted,
            // Neither adopted nor replaced by a fresh start that would hide it.
            Err(e @ EngineError::Forged { .. }) => return Err(e),
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
                None
            }
            Err(e) => {
                warnings.push(
                    Notice::AdoptionFailed {
                        remote: remote.clone(),
                        error: e.to_string(),
                    }
                    .to_string(),
                );
                None
            }
        },
        _ => None,
    };
    let created = snapshot.is_none() && adopted.is_none();
    let snapshot = match snapshot {
        Some(s) => s,
        None => session.with_retries(|| session.read_or_create())?,
    };
    warnings.extend(
        session
            .load_config(Some(&snapshot.state))?
            .warnings
            .iter()
            .map(ToString::to_string),
    );
    let main = session.main_branch(Some(&snapshot.state))?;
    if let Some(asked) = main_branch.filter(|m| *m != main) {
        warnings.push(
            Notice::MainBranchKept {
                workflow: session.store.workflow().to_string(),
                main: main.clone(),
                asked: asked.to_string(),
            }
            .to_string(),
        );
    }
    let (hooks_report, hooks_manager) = if hooks {
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
        refspecs_added: refspecs_added
            .into_iter()
            .map(|(remote, refspec)| RefspecAdded { remote, refspec })
            .collect(),
        state: snapshot.state.status(),
        hooks: hooks_report,
        hooks_manager,
        warnings,
    })
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
