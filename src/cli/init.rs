//! `git orchestrate init`: configure a repository and create its workflow.

use clap::Args;
use serde::Serialize;

use super::{Exit, Failure, Ui};
use crate::agent::hook::Client;
use crate::config::FILE_NAME;
use crate::engine::agent_setup::{self, AgentSetupReport, FileAction};
use crate::engine::{self, CiProvider, CiReport, CiRequest, InitReport, Session};
use crate::store::DEFAULT_WORKFLOW;

/// Set up git-orchestrate in this repository (safe to run again).
///
/// Writes .orchestrate.toml if there is none (an existing one is never overwritten), installs
/// the git hooks (see `hooks`), adds each remote's fetch refspecs for the workflow state and
/// notes, and creates the workflow in INITIALIZING, or, when the remote already has it (a
/// fresh clone), adopts the remote's.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The branch PRs start from and merge into (default: main, else master, else the
    /// current branch).
    #[arg(long, value_name = "BRANCH")]
    pub main_branch: Option<String>,

    /// The preflight command every PASS must also pass, e.g. "cargo test".
    #[arg(long, value_name = "COMMAND")]
    pub preflight: Option<String>,

    /// Do not install the git hooks (`git orchestrate hooks install` does it later).
    #[arg(long)]
    pub no_hooks: bool,

    /// Start the workflow over although it existed here and its ref was deleted (without it,
    /// commands refuse and say how to restore the ref). Takes nothing from a remote.
    #[arg(long)]
    pub new: bool,

    /// Also wire an agent client to the workflow: its hooks (session-start, the pre-tool-use
    /// guard, stop) and the MCP server, merged into .claude/settings.json and .mcp.json
    /// (claude), .codex/config.toml and .codex/hooks.json (codex), or .gemini/settings.json
    /// (gemini). Nothing of yours is dropped or reordered; running it again changes nothing.
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub agent: Option<AgentArg>,

    /// With --agent: take the client's wiring out again, restoring each file exactly as it
    /// was (a file you changed since keeps your changes, without ours). Nothing else is
    /// touched.
    #[arg(long, requires = "agent")]
    pub remove: bool,

    /// Also write the CI job that runs `git orchestrate attest` on every pull request's head
    /// and every push to the main branch, under the one check name "git-orchestrate attest":
    /// .github/workflows/git-orchestrate.yml (github), or .gitlab/git-orchestrate.yml and,
    /// when the project has none, a .gitlab-ci.yml that includes it (gitlab). A file that is
    /// there already is never overwritten: init then refuses and changes nothing.
    #[arg(long, value_enum, value_name = "PROVIDER", conflicts_with = "remove")]
    pub ci: Option<CiArg>,

    /// With --ci: the one shell line the job installs git-orchestrate with, leaving it in
    /// $CARGO_INSTALL_ROOT/bin (e.g. `cargo install --locked --git URL --rev COMMIT`).
    /// Required while no release is on a registry.
    #[arg(long, value_name = "COMMAND", requires = "ci")]
    pub ci_install: Option<String>,

    /// Also write a master-plan template at the configured path (`master_plan`, by default
    /// docs/Plan_Doc/Active_Plan.md) when no file is there: two PR headings to replace with
    /// yours. A file that is there is kept as it is.
    #[arg(long, conflicts_with = "remove")]
    pub plan_template: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CiArg {
    Github,
    Gitlab,
}

impl CiArg {
    fn provider(self) -> CiProvider {
        match self {
            CiArg::Github => CiProvider::Github,
            CiArg::Gitlab => CiProvider::Gitlab,
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum AgentArg {
    Claude,
    Codex,
    Gemini,
}

impl AgentArg {
    fn client(self) -> Client {
        match self {
            AgentArg::Claude => Client::Claude,
            AgentArg::Codex => Client::Codex,
            AgentArg::Gemini => Client::Gemini,
        }
    }
}

/// What `init --json` prints: the init report's fields, then `agent` with `--agent` (alone
/// with `--agent --remove`).
#[derive(Serialize)]
struct InitOutput<'a> {
    #[serde(flatten)]
    init: Option<&'a InitReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a AgentSetupReport>,
    /// Where the manual page was installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    man_page: Option<String>,
}

/// `cli` is the program's whole command line (for the manual page `init` installs).
pub fn run(
    session: &Session,
    args: &InitArgs,
    cli: clap::Command,
    ui: &mut Ui,
) -> Result<Exit, Failure> {
    // A workflow git config selects (a worktree's own, from `worktree add`) is selected again
    // for the agent's hooks and MCP server run there: named in the client's files, it would
    // follow those files into every other worktree.
    let workflow = Some(session.store.workflow())
        .filter(|w| *w != DEFAULT_WORKFLOW && !session.store.workflow_selected_by_config());
    if let (Some(agent), true) = (args.agent, args.remove) {
        let report = agent_setup::setup_agent(session, agent.client(), workflow, true)?;
        if ui.json {
            ui.report(&InitOutput {
                init: None,
                agent: Some(&report),
                man_page: None,
            })?;
        } else {
            ui.text(&agent_text(&report, ui.quiet))?;
        }
        return Ok(Exit::Success);
    }
    let report = engine::init(
        session,
        args.main_branch.as_deref(),
        args.preflight.as_deref(),
        args.new,
        !args.no_hooks,
        args.ci.map(|ci| CiRequest {
            provider: ci.provider(),
            install: args.ci_install.as_deref(),
        }),
        args.plan_template,
    )?;
    let agent = match args.agent {
        Some(agent) => Some(agent_setup::setup_agent(
            session,
            agent.client(),
            workflow,
            false,
        )?),
        None => None,
    };
    // As the demo does: git turns `git orchestrate --help` into `man git-orchestrate`, which
    // finds the page only once it is installed; a repository's first `init` is often the
    // first use.
    let man_page = super::man::default_dir()
        .ok_or_else(|| "cannot tell where this program is".to_string())
        .and_then(|dir| {
            super::man::install(&dir, cli).map_err(|e| format!("{}: {e}", dir.display()))
        });
    if ui.json_report(&InitOutput {
        init: Some(&report),
        agent: agent.as_ref(),
        man_page: man_page.as_ref().ok().map(|p| p.display().to_string()),
    })? {
        return Ok(Exit::Success);
    }
    let man_line = match &man_page {
        Ok(path) if !ui.quiet => Some(format!(
            "installed the manual page: {} (`git orchestrate --help` opens it)",
            path.display()
        )),
        Ok(_) => None,
        Err(e) => Some(format!(
            "note: the manual page could not be installed ({e}); `git orchestrate man --install \
             --dir DIR` puts it into DIR/man1"
        )),
    };
    for line in init_lines(&report, ui.quiet, man_line) {
        ui.line(line)?;
    }
    if let Some(agent) = &agent {
        ui.text(&agent_text(agent, ui.quiet))?;
    }
    Ok(Exit::Success)
}

/// What `init` did, as people read it, one line per fact; `man` says where the manual page
/// went, before what to do next.
fn init_lines(report: &InitReport, quiet: bool, man: Option<String>) -> Vec<String> {
    let mut lines = vec![if report.config_written {
        format!(
            "wrote {} (main branch: {})",
            report.config_path.display(),
            report.main_branch
        )
    } else {
        format!("kept {}", report.config_path.display())
    }];
    if let Some(note) = &report.config_note {
        lines.push(format!("note: {note}"));
    }
    if let Some(runner) = &report.detected_gate {
        lines.push(format!(
            "first gate: `{}` (detected from {}); edit .orchestrate.toml if the tests run otherwise",
            runner.command, runner.from
        ));
    }
    for added in &report.refspecs_added {
        lines.push(format!(
            "added fetch refspec remote.{}.fetch {}",
            added.remote, added.refspec
        ));
    }
    lines.push(workflow_line(report));
    lines.extend(hooks_text(report).lines().map(str::to_string));
    if let Some(ci) = &report.ci {
        lines.extend(ci_lines(ci, &report.main_branch, quiet));
    }
    lines.extend(man);
    let plan = &report.master_plan;
    if plan.template_written {
        lines.push(format!(
            "wrote a master-plan template at {}: replace its two PR headings with yours",
            plan.path
        ));
    } else if !plan.present && !quiet {
        lines.push(format!(
            "no master plan at {} yet: write one (`## PR 1: <title>` per pull request), or have \
             `git orchestrate init --plan-template` write a template there",
            plan.path
        ));
    }
    if !quiet {
        lines.push(next_line(report));
        for w in &report.warnings {
            lines.push(format!("WARNING: {w}"));
        }
    }
    lines
}

/// The CI files written, and what is left to do before the check protects anything.
fn ci_lines(ci: &CiReport, main: &str, quiet: bool) -> Vec<String> {
    let mut lines: Vec<String> = ci
        .written
        .iter()
        .map(|path| format!("wrote {path} (CI: the check \"{}\")", ci.check))
        .collect();
    if quiet {
        return lines;
    }
    if let Some(pipeline) = ci.include_from {
        lines.push(format!(
            "next: include the job from your {pipeline} (`include: [{{local: {}}}]`)",
            ci.written.first().copied().unwrap_or_default()
        ));
    }
    lines.push(format!(
        "next: commit {} on {main}, and push the workflow state with `git orchestrate sync`",
        ci.written.join(" and ")
    ));
    lines.push(match ci.provider {
        CiProvider::Github => format!(
            "next: make \"{}\" a required status check of {main}, from the GitHub Actions app (a ruleset's \
             required status checks), and put .github/workflows/ under CODEOWNERS: any workflow can report a \
             check of the same name (docs/ci.md)",
            ci.check
        ),
        CiProvider::Gitlab => "next: turn on \"Pipelines must succeed\" for merge requests and protect the CI \
                               configuration: a merge request can change its own pipeline (docs/ci.md)"
            .to_string(),
    });
    lines
}

/// The workflow: adopted from a remote, created, or already there.
fn workflow_line(report: &InitReport) -> String {
    if let Some(adopted) = &report.adopted {
        format!(
            "ADOPTED workflow {} from {}: {} transitions, state {} ({} @ {}); this clone continues that history",
            report.workflow,
            adopted.remote,
            adopted.transitions,
            adopted.state,
            report.reference,
            crate::short_id(&adopted.tip)
        )
    } else if report.created {
        format!(
            "created workflow {} in INITIALIZING ({})",
            report.workflow, report.reference
        )
    } else {
        format!(
            "workflow {} exists ({}, state {})",
            report.workflow, report.reference, report.state
        )
    }
}

/// The hooks installed, through a hook manager or not, or why none were.
fn hooks_text(report: &InitReport) -> String {
    match (&report.hooks, &report.hooks_manager) {
        (Some(hooks), Some(managed)) => format!(
            "{}{}",
            super::hooks::managed_text(managed, false),
            super::hooks::report_text(
                hooks,
                crate::hooks::install::Manager::from_name(managed.manager)
            )
        ),
        (Some(hooks), None) => super::hooks::report_text(hooks, None),
        (None, _) => {
            "hooks not installed (--no-hooks): `git orchestrate hooks install` installs them\n"
                .to_string()
        }
    }
}

/// What to do next.
fn next_line(report: &InitReport) -> String {
    let plan = &report.master_plan.path;
    if report.config_written && report.master_plan.template_written {
        format!(
            "next: edit {plan}, commit it and {FILE_NAME} on {} (git add {FILE_NAME} {plan} && git commit -m \
             \"chore: configure git-orchestrate\"), then have your agent run `git orchestrate get-task`",
            report.main_branch
        )
    } else if report.master_plan.template_written {
        format!(
            "next: edit {plan} and commit it on {}, then have your agent run `git orchestrate get-task`",
            report.main_branch
        )
    } else if report.config_written {
        format!(
            "next: commit {FILE_NAME} on {} (git add {FILE_NAME} && git commit -m \"chore: configure git-orchestrate\"), \
             then have your agent run `git orchestrate get-task`",
            report.main_branch
        )
    } else {
        "next: have your agent run `git orchestrate get-task`".to_string()
    }
}

/// What `init --agent` did, and how to check it.
fn agent_text(report: &AgentSetupReport, quiet: bool) -> String {
    let mut text = String::new();
    for file in &report.files {
        let (action, after) = match file.action {
            FileAction::Created => ("created", ""),
            FileAction::Updated => ("added git-orchestrate to", ""),
            FileAction::Unchanged => ("unchanged:", ""),
            FileAction::Restored => ("restored", ""),
            FileAction::Removed => ("removed", ""),
            FileAction::Cleaned => (
                "took git-orchestrate out of",
                " (you changed it since; the rest is kept)",
            ),
        };
        text.push_str(&format!(
            "agent {}: {action} {}{after}
",
            report.client, file.path
        ));
    }
    if quiet {
        return text;
    }
    if report.removed {
        text.push_str(&format!(
            "agent {}: the hooks and the MCP server are gone from its project files
",
            report.client
        ));
        return text;
    }
    let check = match report.client {
        "claude" => {
            "check: `claude mcp list` lists orchestrate (approve the project server once when Claude Code \
             asks; `claude -p` connects it without asking), and `/hooks` in a session shows the three hooks"
        }
        "codex" => {
            "check: `codex mcp list` lists orchestrate; Codex reads .codex/ only in a project you trusted \
             (say yes once in an interactive session; in automation `codex exec --trust \
             --dangerously-bypass-hook-trust`, as `git orchestrate run` does)"
        }
        _ => {
            "check: `gemini mcp list` lists orchestrate, and `/hooks` in a session shows the hooks; Gemini \
             CLI reads .gemini/settings.json only in a folder you trusted (in automation \
             GEMINI_CLI_TRUST_WORKSPACE=true, as `git orchestrate run` does)"
        }
    };
    text.push_str(&format!(
        "{check}
next: commit these files on the main branch (checkpoints leave them out of PRs); the agent starts \
         with `get_task`
"
    ));
    text
}
