//! Table tests of `init`'s decisions: rows of facts and what each decides, without git.

use super::ci::CiProvider;
use super::decide::*;
use crate::workflow::{RejectionKind, Status};
use pretty_assertions::assert_eq;

fn checks() -> Checks<'static> {
    Checks {
        workflow: "main",
        existing: None,
        fresh: false,
        main_branch: None,
    }
}

#[test]
fn refusals() {
    let rows: Vec<(&str, Checks, Option<Refusal>)> = vec![
        ("a first init", checks(), None),
        (
            "init again, without --new",
            Checks {
                existing: Some(Status::ExecutingTdd),
                ..checks()
            },
            None,
        ),
        (
            "--new where the ref is gone",
            Checks {
                fresh: true,
                ..checks()
            },
            None,
        ),
        (
            "--new over an existing workflow",
            Checks {
                fresh: true,
                existing: Some(Status::ExecutingTdd),
                ..checks()
            },
            Some(Refusal::FreshOverExisting {
                workflow: "main".into(),
                status: Status::ExecutingTdd,
            }),
        ),
        (
            "an invalid --main-branch",
            Checks {
                main_branch: Some("a..b"),
                ..checks()
            },
            Some(Refusal::InvalidMainBranch {
                main: "a..b".into(),
            }),
        ),
        (
            "a valid --main-branch",
            Checks {
                main_branch: Some("trunk"),
                ..checks()
            },
            None,
        ),
    ];
    for (name, checks, expected) in rows {
        assert_eq!(refusal(&checks), expected, "{name}");
    }
    assert_eq!(no_commit(false), Some(Refusal::NoCommit), "no commit yet");
    assert_eq!(no_commit(true), None, "a commit to start from");
}

#[test]
fn refusals_read_as_before() {
    let rejection = Refusal::FreshOverExisting {
        workflow: "main".into(),
        status: Status::ExecutingTdd,
    }
    .rejection();
    assert_eq!(rejection.kind, RejectionKind::WrongState);
    assert_eq!(
        rejection.message,
        "init --new starts a workflow over only when its ref is gone, and workflow main exists (state \
         EXECUTING_TDD); nothing was changed"
    );
    let rejection = Refusal::InvalidMainBranch { main: "a b".into() }.rejection();
    assert_eq!(rejection.kind, RejectionKind::InvalidInput);
    assert_eq!(
        rejection.message,
        "--main-branch \"a b\" is not a valid branch name"
    );
}

fn facts() -> Facts<'static> {
    Facts {
        config_exists: false,
        workflow_exists: false,
        fresh: false,
        main_branch: None,
        preflight: None,
        hooks: true,
    }
}

#[test]
fn plans() {
    let write = ConfigAction::Write {
        main: None,
        gate: None,
    };
    let rows: Vec<(&str, Facts, Plan)> = vec![
        (
            "a first init: config written, the remote's workflow adopted if it has one",
            facts(),
            Plan {
                config: write.clone(),
                workflow: WorkflowAction::AdoptElseCreate,
                install_hooks: true,
            },
        ),
        (
            "--new: created, never adopted",
            Facts {
                fresh: true,
                hooks: false,
                ..facts()
            },
            Plan {
                config: write,
                workflow: WorkflowAction::Create,
                install_hooks: false,
            },
        ),
        (
            "flags for a new file",
            Facts {
                main_branch: Some("trunk"),
                preflight: Some("make test"),
                ..facts()
            },
            Plan {
                config: ConfigAction::Write {
                    main: Some("trunk".into()),
                    gate: Some("make test".into()),
                },
                workflow: WorkflowAction::AdoptElseCreate,
                install_hooks: true,
            },
        ),
        (
            "init again: everything kept",
            Facts {
                config_exists: true,
                workflow_exists: true,
                ..facts()
            },
            Plan {
                config: ConfigAction::Keep {
                    ignored: Vec::new(),
                },
                workflow: WorkflowAction::Keep,
                install_hooks: true,
            },
        ),
        (
            "flags over an existing file are not applied",
            Facts {
                config_exists: true,
                main_branch: Some("trunk"),
                preflight: Some("make test"),
                ..facts()
            },
            Plan {
                config: ConfigAction::Keep {
                    ignored: vec!["--main-branch", "--preflight"],
                },
                workflow: WorkflowAction::AdoptElseCreate,
                install_hooks: true,
            },
        ),
    ];
    for (name, facts, expected) in rows {
        assert_eq!(decide(&facts), expected, "{name}");
    }
}

#[test]
fn notes() {
    let keep = |ignored: Vec<&'static str>| ConfigAction::Keep { ignored }.note();
    assert_eq!(keep(Vec::new()), None);
    assert_eq!(
        keep(vec!["--main-branch", "--preflight"]).as_deref(),
        Some(
            "kept the existing .orchestrate.toml; --main-branch and --preflight not applied (edit the file \
             instead)"
        )
    );
}

static CARGO: super::ci::Setup = super::ci::Setup::Cargo;

fn ci_facts() -> CiFacts<'static> {
    CiFacts {
        provider: CiProvider::Github,
        main: "main",
        install: Some("cargo install git-orchestrate"),
        setup: &CARGO,
        version: "0.1.0",
        job_exists: false,
        gitlab_ci_exists: false,
    }
}

/// The paths a CI plan writes, and the pipeline file that must include the job.
type CiOutcome = Result<(Vec<&'static str>, Option<&'static str>), Refusal>;

/// Which files `init --ci` writes, or why none (and nothing else either).
#[test]
fn ci_plans() {
    let paths = |facts: CiFacts| {
        decide_ci(&facts).map(|plan| {
            (
                plan.files.iter().map(|f| f.path).collect::<Vec<_>>(),
                plan.include_from,
            )
        })
    };
    let gitlab = CiFacts {
        provider: CiProvider::Gitlab,
        ..ci_facts()
    };
    let rows: Vec<(&str, CiFacts, CiOutcome)> = vec![
        (
            "github",
            ci_facts(),
            Ok((vec![".github/workflows/git-orchestrate.yml"], None)),
        ),
        (
            "gitlab without a pipeline: one is written, including the job",
            gitlab,
            Ok((vec![".gitlab/git-orchestrate.yml", ".gitlab-ci.yml"], None)),
        ),
        (
            "gitlab with a pipeline of the project's: kept, and it must include the job",
            CiFacts {
                gitlab_ci_exists: true,
                ..gitlab
            },
            Ok((vec![".gitlab/git-orchestrate.yml"], Some(".gitlab-ci.yml"))),
        ),
        (
            "the job file is there: never overwritten",
            CiFacts {
                job_exists: true,
                ..ci_facts()
            },
            Err(Refusal::CiFileExists {
                path: ".github/workflows/git-orchestrate.yml",
            }),
        ),
        (
            "a bad install command is named first",
            CiFacts {
                job_exists: true,
                install: Some("a\nb"),
                ..ci_facts()
            },
            Err(Refusal::Ci(super::ci::CiProblem::BadInstall {
                install: "a\nb".into(),
            })),
        ),
        (
            "no install command, and no release to install: refused",
            CiFacts {
                install: None,
                ..ci_facts()
            },
            Err(Refusal::Ci(super::ci::CiProblem::NoInstall {
                version: "0.1.0".into(),
            })),
        ),
        (
            "a main branch GitLab's rules cannot quote",
            CiFacts {
                main: "a$b",
                ..gitlab
            },
            Err(Refusal::Ci(super::ci::CiProblem::UnquotableForGitlab {
                main: "a$b".into(),
            })),
        ),
        (
            "GitHub's filter quotes it",
            CiFacts {
                main: "a$b",
                ..ci_facts()
            },
            Ok((vec![".github/workflows/git-orchestrate.yml"], None)),
        ),
    ];
    for (name, facts, expected) in rows {
        assert_eq!(paths(facts), expected, "{name}");
    }
    let kind = |refusal: Refusal| refusal.rejection().kind;
    assert_eq!(
        kind(Refusal::CiFileExists { path: "x" }),
        RejectionKind::WrongState
    );
    assert_eq!(
        kind(Refusal::Ci(super::ci::CiProblem::BadInstall {
            install: String::new()
        })),
        RejectionKind::InvalidInput
    );
}

/// The files `init --ci` writes are the ones the configuration protects always.
#[test]
fn the_ci_files_are_the_protected_ones() {
    assert_eq!(
        crate::config::CI_FILES,
        [
            super::ci::GITHUB_WORKFLOW,
            super::ci::GITLAB_JOB,
            super::ci::GITLAB_CI
        ]
    );
}
