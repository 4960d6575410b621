//! What `init` does, decided without git from the facts gathered and the request: refuse
//! (and why), or which configuration to keep or write, whether to adopt or create the
//! workflow, whether to install the hooks, and which CI files to write.

use super::ci::{self, CiFile, CiProblem, CiProvider};
use crate::config;
use crate::store::is_valid_branch_name;
use crate::workflow::{Rejection, RejectionKind, Status};

/// What `init` found before deciding whether it may run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Checks<'a> {
    pub workflow: &'a str,
    /// The workflow's state, when its ref exists.
    pub existing: Option<Status>,
    /// `--new`.
    pub fresh: bool,
    /// `--main-branch`.
    pub main_branch: Option<&'a str>,
}

/// Why `init` changes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// `--new` over a workflow whose ref exists.
    FreshOverExisting {
        workflow: String,
        status: Status,
    },
    InvalidMainBranch {
        main: String,
    },
    /// No commit to start PR branches from.
    NoCommit,
    /// `--ci` where its job file is already: never overwritten.
    CiFileExists {
        path: &'static str,
    },
    /// `--ci` that cannot be rendered as asked.
    Ci(CiProblem),
}

impl Refusal {
    pub(super) fn rejection(self) -> Rejection {
        match self {
            Refusal::FreshOverExisting { workflow, status } => Rejection {
                kind: RejectionKind::WrongState,
                state: status,
                message: format!(
                    "init --new starts a workflow over only when its ref is gone, and workflow {workflow} exists (state \
                     {status}); nothing was changed",
                ),
                hint: "Use `--workflow NAME` for another workflow beside it, or delete this one's ref first if you \
                       really mean to drop its history."
                    .into(),
            },
            Refusal::InvalidMainBranch { main } => Rejection {
                kind: RejectionKind::InvalidInput,
                state: Status::Initializing,
                message: format!("--main-branch \"{main}\" is not a valid branch name"),
                hint: "Pass the name of the branch PRs start from and merge into, e.g. --main-branch main.".into(),
            },
            Refusal::NoCommit => Rejection {
                kind: RejectionKind::WrongState,
                state: Status::Initializing,
                message: "this repository has no commit yet: git-orchestrate starts every PR branch from the main \
                          branch, so it needs a first commit; nothing was changed"
                    .into(),
                hint: "Make the first commit (for example `git commit --allow-empty -m \"Initial commit\"`, or \
                       commit your project), then run `git orchestrate init` again."
                    .into(),
            },
            Refusal::CiFileExists { path } => Rejection {
                kind: RejectionKind::WrongState,
                state: Status::Initializing,
                message: format!("{path} exists, and init --ci never overwrites a file; nothing was changed"),
                hint: format!(
                    "Keep yours, or move it aside and run `git orchestrate init --ci` again to have it written \
                     (docs/ci.md says what the job does: the check \"{}\")",
                    ci::CHECK_NAME
                ),
            },
            Refusal::Ci(CiProblem::BadInstall { install }) => Rejection {
                kind: RejectionKind::InvalidInput,
                state: Status::Initializing,
                message: format!(
                    "--ci-install {install:?} is not one line of shell: it is empty or holds a line break or \
                     another control character; nothing was changed"
                ),
                hint: "Pass the install command as one line, e.g. --ci-install 'cargo install --locked --git \
                       <URL of git-orchestrate> --rev <commit>'; join several with &&."
                    .into(),
            },
            Refusal::Ci(CiProblem::NoInstall { version }) => Rejection {
                kind: RejectionKind::InvalidInput,
                state: Status::Initializing,
                message: format!(
                    "init --ci needs --ci-install: git-orchestrate {version} is not published on a registry \
                     yet, so a job installing it from one would fail on its first run; nothing was changed"
                ),
                hint: "Say how the job gets the program, as one line of shell that leaves it in \
                       $CARGO_INSTALL_ROOT/bin, e.g. --ci-install 'cargo install --locked --git <URL of \
                       git-orchestrate> --rev <commit>' (a full commit id, so every run builds the same code; \
                       docs/ci.md)."
                    .into(),
            },
            Refusal::Ci(CiProblem::UnquotableForGitlab { main }) => Rejection {
                kind: RejectionKind::InvalidInput,
                state: Status::Initializing,
                message: format!(
                    "the main branch {main:?} cannot be written into a GitLab rules expression (it holds `$`, or \
                     both kinds of quote); nothing was changed"
                ),
                hint: "Write the job by hand from docs/ci.md, comparing $CI_COMMIT_BRANCH with $CI_DEFAULT_BRANCH \
                       if the main branch is the project's default branch."
                    .into(),
            },
        }
    }
}

/// Why `init` may not run, if it may not.
pub(super) fn refusal(checks: &Checks) -> Option<Refusal> {
    if let (Some(status), true) = (checks.existing, checks.fresh) {
        return Some(Refusal::FreshOverExisting {
            workflow: checks.workflow.to_string(),
            status,
        });
    }
    if let Some(main) = checks.main_branch.filter(|m| !is_valid_branch_name(m)) {
        return Some(Refusal::InvalidMainBranch {
            main: main.to_string(),
        });
    }
    None
}

/// The request is fine; the repository may still have nothing to start from. PR branches
/// start from the main branch: with no commit (at HEAD or on any branch) there is nothing to
/// start from, and the configuration could not be committed on main either. Asked only
/// after [`refusal`], so a refused request reads nothing of the repository.
pub(super) fn no_commit(has_commit: bool) -> Option<Refusal> {
    (!has_commit).then_some(Refusal::NoCommit)
}

/// What `init` found once it may run, with the request.
#[derive(Clone, Copy, Debug)]
pub(super) struct Facts<'a> {
    /// Whether `.orchestrate.toml` is in the working tree.
    pub config_exists: bool,
    /// Whether the workflow exists.
    pub workflow_exists: bool,
    pub fresh: bool,
    pub main_branch: Option<&'a str>,
    /// `--preflight`.
    pub preflight: Option<&'a str>,
    /// Not `--no-hooks`.
    pub hooks: bool,
}

/// What `init` does, in order (the fetch refspecs are added in between, always).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    pub config: ConfigAction,
    pub workflow: WorkflowAction,
    pub install_hooks: bool,
}

/// What becomes of `.orchestrate.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ConfigAction {
    /// The file is kept (and checked); these flags are not applied.
    Keep { ignored: Vec<&'static str> },
    /// A new file, for `main` (`None`: the main branch found) with `gate` as its first gate
    /// (`None`: the project's test runner, when one is found).
    Write {
        main: Option<String>,
        gate: Option<String>,
    },
}

impl ConfigAction {
    /// What the report says of flags that were not applied.
    pub(super) fn note(&self) -> Option<String> {
        match self {
            ConfigAction::Keep { ignored } if !ignored.is_empty() => Some(format!(
                "kept the existing {}; {} not applied (edit the file instead)",
                config::FILE_NAME,
                ignored.join(" and ")
            )),
            _ => None,
        }
    }
}

/// What becomes of the workflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WorkflowAction {
    Keep,
    /// Created in INITIALIZING.
    Create,
    /// Adopted from the remote when it has the workflow, else created.
    AdoptElseCreate,
}

pub(super) fn decide(facts: &Facts) -> Plan {
    let config = if facts.config_exists {
        ConfigAction::Keep {
            ignored: [
                facts.main_branch.map(|_| "--main-branch"),
                facts.preflight.map(|_| "--preflight"),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    } else {
        ConfigAction::Write {
            main: facts.main_branch.map(str::to_string),
            gate: facts.preflight.map(str::to_string),
        }
    };
    let workflow = match (facts.workflow_exists, facts.fresh) {
        (true, _) => WorkflowAction::Keep,
        // A deliberate fresh start does not take the remote's history back either.
        (false, true) => WorkflowAction::Create,
        (false, false) => WorkflowAction::AdoptElseCreate,
    };
    Plan {
        config,
        workflow,
        install_hooks: facts.hooks,
    }
}

/// What `init --ci` found, before anything is written.
#[derive(Clone, Copy, Debug)]
pub(super) struct CiFacts<'a> {
    pub provider: CiProvider,
    /// The main branch the workflow has, or will have.
    pub main: &'a str,
    /// `--ci-install`, else the default (none while no release is published).
    pub install: Option<&'a str>,
    /// What the job sets up for the gates.
    pub setup: &'a ci::Setup,
    /// This program's version, named in the files and installed by default.
    pub version: &'a str,
    /// Whether the job's file is there (`CiProvider::job_path`).
    pub job_exists: bool,
    /// Whether `.gitlab-ci.yml` is there.
    pub gitlab_ci_exists: bool,
}

/// The CI files to write, and where the job still has to be included from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CiPlan {
    pub files: Vec<CiFile>,
    /// The project's own pipeline file, which must include the job (GitLab, when it has one).
    pub include_from: Option<&'static str>,
}

/// The CI files `init --ci` writes, or why it writes none (and nothing else either): a bad
/// request first, then a job file that is there already.
pub(super) fn decide_ci(facts: &CiFacts) -> Result<CiPlan, Refusal> {
    let Some(install) = facts.install else {
        return Err(Refusal::Ci(CiProblem::NoInstall {
            version: facts.version.to_string(),
        }));
    };
    if let Some(problem) =
        ci::check_install(install).or_else(|| ci::check_main(facts.provider, facts.main))
    {
        return Err(Refusal::Ci(problem));
    }
    if facts.job_exists {
        return Err(Refusal::CiFileExists {
            path: facts.provider.job_path(),
        });
    }
    let files = ci::render(
        facts.provider,
        facts.main,
        install,
        facts.version,
        facts.setup,
        facts.gitlab_ci_exists,
    )
    .map_err(Refusal::Ci)?;
    let include_from =
        (facts.provider == CiProvider::Gitlab && facts.gitlab_ci_exists).then_some(ci::GITLAB_CI);
    Ok(CiPlan {
        files,
        include_from,
    })
}
