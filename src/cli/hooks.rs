//! `git orchestrate hooks install|uninstall|status`, and `git orchestrate hook <name>`, which
//! the installed hooks call.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::error::{CommandError, ErrorKind};
use super::render::output_block;
use super::{Exit, Failure, Ui};
use crate::engine::Session;
use crate::engine::git_hook::{self as run, Outcome};
use crate::hooks::install::{self, Action, HookState, InstallError, Manager, Report};
use crate::hooks::managed::{self, FileAction as ManagedFileAction, InstallStep, ManagedReport};

/// Install, remove or show the git hooks that enforce preflight on checkpoints.
///
/// commit-msg runs preflight on checkpoint commits, post-commit notes verified checkpoints,
/// pre-push checks pushes. They go where git looks for hooks (core.hooksPath and linked worktrees are honoured). A hook of
/// yours is never overwritten: a shell hook gets a marked block, any other hook is chained;
/// uninstall restores it byte for byte. With a hook manager (pre-commit, lefthook, husky:
/// detected, or --manager), they go into its configuration instead, and its own install step
/// runs when the tool is on PATH; uninstall takes out exactly what was added.
#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Install the hooks (an older version of them is updated); with a hook manager, into its
    /// configuration.
    Install(ManagerChoice),
    /// Remove the hooks, leaving yours exactly as they were.
    Uninstall(ManagerChoice),
    /// Show where each hook stands.
    Status,
}

#[derive(Debug, Args)]
pub struct ManagerChoice {
    /// Put our hooks into this hook manager's configuration (.pre-commit-config.yaml,
    /// lefthook.yml, .husky/<hook>) instead of the hooks directory. Without it, a manager the
    /// repository uses is detected: husky by core.hooksPath, lefthook and pre-commit by their
    /// config files.
    #[arg(long, value_enum)]
    pub manager: Option<ManagerArg>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ManagerArg {
    PreCommit,
    Lefthook,
    Husky,
}

impl ManagerArg {
    fn manager(self) -> Manager {
        match self {
            ManagerArg::PreCommit => Manager::PreCommit,
            ManagerArg::Lefthook => Manager::Lefthook,
            ManagerArg::Husky => Manager::Husky,
        }
    }
}

/// Run by the installed hooks: `git orchestrate hook commit-msg FILE`,
/// `hook post-commit`, `hook pre-push REMOTE URL` (ref lines on stdin).
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The hook: commit-msg, post-commit or pre-push.
    pub name: String,
    /// What git passed to the hook.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

fn install_error(e: InstallError) -> Failure {
    let kind = match &e {
        InstallError::Git(_) => ErrorKind::Git,
        InstallError::Io { .. } => ErrorKind::Io,
        InstallError::Config { .. } => ErrorKind::InvalidInput,
        _ => ErrorKind::Store,
    };
    Failure::from(CommandError::new(kind, e.to_string()).caused_by(&e))
}

pub fn run(session: &Session, args: &HooksArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let git = &session.git;
    let chosen = |choice: &ManagerChoice| -> Result<Option<(Manager, String)>, Failure> {
        match choice.manager {
            Some(m) => Ok(Some((m.manager(), "--manager".to_string()))),
            None => managed::detect(git).map_err(install_error),
        }
    };
    let report = match &args.action {
        HooksAction::Install(choice) => match chosen(choice)? {
            Some((manager, found)) => {
                let report = managed::install(git, manager, found).map_err(install_error)?;
                return render_managed(&report, false, ui);
            }
            None => install::install(git),
        },
        HooksAction::Uninstall(choice) => match chosen(choice)? {
            Some((manager, found)) => {
                let report = managed::uninstall(git, manager, found).map_err(install_error)?;
                install::uninstall(git).map_err(install_error)?;
                return render_managed(&report, true, ui);
            }
            None => install::uninstall(git),
        },
        HooksAction::Status => install::status(git),
    }
    .map_err(install_error)?;
    render(&report, runs_ours(git)?, ui)?;
    Ok(Exit::Success)
}

/// The hook manager here whose configuration already runs our hooks, if one does.
pub fn runs_ours(git: &crate::exec::Git) -> Result<Option<Manager>, Failure> {
    Ok(match managed::detect(git).map_err(install_error)? {
        Some((manager, _)) if managed::configured(git, manager).map_err(install_error)? => {
            Some(manager)
        }
        _ => None,
    })
}

/// What `hooks install|uninstall` did in a hook manager's configuration.
fn render_managed(report: &ManagedReport, removed: bool, ui: &mut Ui) -> Result<Exit, Failure> {
    if ui.json_report(report)? {
        return Ok(Exit::Success);
    }
    ui.text(&managed_text(report, removed))?;
    Ok(Exit::Success)
}

/// What `hooks install|uninstall` (and `init`) did in a hook manager's configuration.
pub fn managed_text(report: &ManagedReport, removed: bool) -> String {
    let mut text = if report.found == "--manager" {
        format!("hook manager {} (--manager): ", report.manager)
    } else {
        format!("found {} ({}): ", report.manager, report.found)
    };
    text.push_str(if removed {
        "taking git-orchestrate's hooks out of its configuration\n"
    } else {
        "git-orchestrate's commit-msg, post-commit and pre-push go into its configuration\n"
    });
    for file in &report.files {
        let what = match file.action {
            ManagedFileAction::Created => "created, with our hooks",
            ManagedFileAction::Added => "our hooks added",
            ManagedFileAction::Unchanged if removed => "none of ours in it",
            ManagedFileAction::Unchanged => "our hooks are in it already",
            ManagedFileAction::Removed => "our hooks taken out; the rest is as it was",
            ManagedFileAction::Deleted => "removed: it held only our hooks",
        };
        text.push_str(&format!("  {}: {what}\n", file.path.display()));
    }
    match &report.install_step {
        InstallStep::Ran(command) => text.push_str(&format!(
            "ran `{command}`: the manager's hooks are in place\n"
        )),
        InstallStep::Needed(command) => text.push_str(&format!(
            "next: run `{command}`, so that git runs {}'s hooks (it could not run here). Until then no hook of git-orchestrate runs: ours were taken out of the hooks directory so that they would not run twice\n",
            report.manager
        )),
        InstallStep::NotNeeded => {}
    }
    for copy in &report.removed_copies {
        text.push_str(&format!(
            "  {}: our hook taken out of it: {} had kept it aside, and it ran beside the manager's, so \
             every gate ran twice\n",
            copy.display(),
            report.manager
        ));
    }
    text
}

/// The hooks report, as `hooks` prints it.
pub fn render(report: &Report, runs_ours: Option<Manager>, ui: &mut Ui) -> Result<(), Failure> {
    if ui.json_report(report)? {
        return Ok(());
    }
    ui.text(&report_text(report, runs_ours))?;
    Ok(())
}

/// `runs_ours`: the manager whose configuration holds our hooks already; it gets no advice
/// to add them.
pub fn report_text(report: &Report, runs_ours: Option<Manager>) -> String {
    let mut text = format!("hooks in {}", report.dir.display());
    if let Some(path) = &report.hooks_path {
        text.push_str(&format!(" (core.hooksPath = {path})"));
    }
    text.push('\n');
    let mut advice = Vec::new();
    for h in &report.hooks {
        let what = match (&h.action, &h.state) {
            (Some(Action::Installed(mode)), _) => format!("installed ({mode})"),
            (Some(Action::Updated(mode)), _) => format!("updated ({mode})"),
            (Some(Action::Repaired { mode, updated }), _) => format!(
                "{}made executable again ({mode}): git was skipping it",
                if *updated { "updated, and " } else { "" }
            ),
            (Some(Action::Unchanged), _) => "already installed".to_string(),
            (Some(Action::Removed(mode)), _) => format!("removed (was {mode})"),
            (Some(Action::Skipped(m)), _) | (None, HookState::Managed(m))
                if runs_ours == Some(*m) =>
            {
                format!(
                    "{} manages it, and runs ours from its configuration",
                    m.name()
                )
            }
            (Some(Action::Skipped(m)), _) | (None, HookState::Managed(m)) => {
                advice.push(*m);
                format!("left alone: {} manages it", m.name())
            }
            (None, HookState::Installed { mode, current }) => format!(
                "installed ({mode}){}",
                if *current {
                    ""
                } else {
                    "; an older version: `git orchestrate hooks install` updates it"
                }
            ),
            (None, HookState::Missing) => "not installed".to_string(),
            (None, HookState::Foreign) => "not installed (a hook of yours is there)".to_string(),
        };
        let dormant = matches!(h.state, HookState::Installed { .. }) && !h.executable;
        text.push_str(&format!(
            "  {:<12} {what}{}\n",
            h.name,
            if dormant {
                " — NOT executable, so git does not run it (chmod +x)"
            } else {
                ""
            }
        ));
    }
    advice.dedup();
    for manager in advice {
        text.push_str(&format!("note: {}\n", manager.instructions()));
    }
    for note in &report.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    text
}

pub fn hook(session: &Session, args: &HookArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let outcome = match args.name.as_str() {
        "commit-msg" => {
            let Some(file) = args.args.first() else {
                return Err(Failure::from(CommandError::usage(
                    "hook commit-msg needs the commit message file git passes it",
                )));
            };
            super::live::while_running(|| run::commit_msg(session, &PathBuf::from(file)))?
        }
        "post-commit" => match run::post_commit(session) {
            Ok(outcome) => outcome,
            // The commit is made: say what went wrong, and do not pretend it failed.
            Err(e) => {
                let e = CommandError::from(e);
                ui.stderr_line(format!(
                    "git-orchestrate: WARNING: the checkpoint was verified, but its note could not be written: {}",
                    e.message
                ))?;
                return Ok(Exit::Success);
            }
        },
        "pre-push" => {
            // pre-commit reads git's ref lines itself and passes them on as variables.
            let from_pre_commit = |name: &str| std::env::var(format!("PRE_COMMIT_{name}")).ok();
            let remote = args
                .args
                .first()
                .cloned()
                .or_else(|| from_pre_commit("REMOTE_NAME"))
                .unwrap_or_default();
            let mut lines = String::new();
            std::io::Read::read_to_string(
                &mut std::io::Read::take(std::io::stdin(), super::MAX_INPUT_BYTES),
                &mut lines,
            )
            .map_err(|e| {
                Failure::from(CommandError::store(format!(
                    "cannot read the pushed refs from stdin: {e}"
                )))
            })?;
            if lines.trim().is_empty()
                && let Some(local) = from_pre_commit("LOCAL_BRANCH")
            {
                const ZERO: &str = "0000000000000000000000000000000000000000";
                let to = from_pre_commit("TO_REF")
                    .filter(|r| !r.is_empty())
                    .or_else(|| {
                        session
                            .git
                            .run(["rev-parse", "--verify", local.as_str()])
                            .ok()
                    })
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default();
                let from = from_pre_commit("FROM_REF")
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| ZERO.to_string());
                let remote_branch =
                    from_pre_commit("REMOTE_BRANCH").unwrap_or_else(|| local.clone());
                lines = format!("{local} {to} {remote_branch} {from}\n");
            }
            run::pre_push(session, &remote, &lines)?
        }
        other => {
            return Err(Failure::from(CommandError::usage(format!(
                "there is no hook \"{other}\": git-orchestrate has commit-msg, post-commit and pre-push"
            ))));
        }
    };
    hook_outcome(outcome, ui)
}

/// What a hook says. git shows hook output to the person committing; it is kept short.
fn hook_outcome(outcome: Outcome, ui: &mut Ui) -> Result<Exit, Failure> {
    let (code, text) = match outcome {
        Outcome::Probe(nonce) => {
            // On stdout: `doctor` reads it there; and in a file, for a hook manager that keeps
            // a passing hook's output to itself (pre-commit).
            // Appended, one line a run: `doctor` counts them, so a hook of ours that runs twice
            // (through a manager and again as a copy it kept aside) shows.
            if let Some(file) = std::env::var_os(crate::hooks::PROBE_FILE_ENV) {
                use std::io::Write as _;
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(file)
                    .and_then(|mut f| f.write_all(format!("git-orchestrate hook probe {nonce}\n").as_bytes()));
            }
            ui.line(format!("git-orchestrate hook probe {nonce}"))?;
            return Ok(Exit::Success);
        }
        Outcome::Pass | Outcome::Noted(_) => (Exit::Success, String::new()),
        Outcome::Verified { cached: true, .. } => (
                Exit::Success,
            "git-orchestrate: checkpoint verified: preflight passed on exactly this tree before; not run again"
                .to_string(),
        ),
        Outcome::Verified { gates: 0, .. } => (
                Exit::Success,
            "git-orchestrate: checkpoint committed, but no preflight gates are configured: nothing verified it"
                .to_string(),
        ),
        Outcome::Verified { gates, .. } => (
                Exit::Success,
            format!(
                "git-orchestrate: checkpoint verified: preflight passed ({gates} gate{})",
                if gates == 1 { "" } else { "s" }
            ),
        ),
        Outcome::Unstaged(files) => (
                Exit::VerificationFailed,
            format!(
                "error: checkpoint commit refused: the working tree holds changes this commit does not ({}).\n\
                 A checkpoint is verified on exactly what it commits: stage them (git add -A) or stash them \
                 (git stash -u), then commit again.",
                files.join(", ")
            ),
        ),
        Outcome::ChangedDuringPreflight(files) => (
                Exit::VerificationFailed,
            format!(
                "error: checkpoint commit refused: files changed while preflight ran ({}), so it did not \
                 verify exactly what would be committed. Build output belongs in .gitignore; commit again.",
                files.join(", ")
            ),
        ),
        Outcome::Protected(files) => (
            Exit::VerificationFailed,
            format!(
                "error: checkpoint commit refused: it changes protected paths ({}), which a human \
                 changes on main (then `git orchestrate repin`); nothing was committed.",
                files.join(", ")
            ),
        ),
        Outcome::GateFailed { gate, exit, output } => (
                Exit::VerificationFailed,
            format!(
                "{}error: checkpoint commit refused: preflight gate `{gate}` failed ({exit}); nothing was committed.\n\
                 Fix what the gate reports, then commit again.",
                if output.is_empty() {
                    String::new()
                } else {
                    output_block(&run::output_tail(&output), None)
                }
            ),
        ),
        Outcome::Unverified { commits, refused } => {
            let mut text = format!(
                "git-orchestrate: {} checkpoint commit{} without a passing note (made without the commit-msg hook?):\n",
                commits.len(),
                if commits.len() == 1 { "" } else { "s" }
            );
            for c in &commits {
                text.push_str(&format!("  {} {}\n", &c.commit[..12.min(c.commit.len())], c.subject));
            }
            if refused {
                text.push_str(
                    "error: push refused ([hooks] pre_push = \"enforce\"). Verify them again: `git orchestrate verify` \
                     lists them; recommit each through the hook (for example `git commit --amend --no-edit` on it).",
                );
                (Exit::VerificationFailed, text)
            } else {
                text.push_str("pushing anyway ([hooks] pre_push = \"warn\")");
                (Exit::Success, text)
            }
        }
    };
    if !text.is_empty() {
        ui.stderr_line(text)?;
    }
    Ok(code)
}
