//! The CI job `init --ci` writes (docs/ci.md): its files' paths and text, rendered without
//! git or a filesystem from the provider, the main branch and the install command, with every
//! value that comes from outside quoted for YAML (and for the provider's own branch matching).

use serde::Serialize;

/// The name the job reports its status under: the one name to make a required check.
pub const CHECK_NAME: &str = "git-orchestrate attest";

/// The GitHub Actions workflow file.
pub const GITHUB_WORKFLOW: &str = ".github/workflows/git-orchestrate.yml";
/// The GitLab job file, included from the project's pipeline configuration.
pub const GITLAB_JOB: &str = ".gitlab/git-orchestrate.yml";
/// GitLab's default pipeline configuration file: written (including the job) when absent.
pub const GITLAB_CI: &str = ".gitlab-ci.yml";

/// Where the job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CiProvider {
    Github,
    Gitlab,
}

impl CiProvider {
    /// The file holding the job: the one whose presence stops `init --ci`.
    pub fn job_path(self) -> &'static str {
        match self {
            CiProvider::Github => GITHUB_WORKFLOW,
            CiProvider::Gitlab => GITLAB_JOB,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CiProvider::Github => "github",
            CiProvider::Gitlab => "gitlab",
        }
    }
}

/// One file to write, its path relative to the working tree's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CiFile {
    pub path: &'static str,
    pub text: String,
}

/// Why a job cannot be rendered as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CiProblem {
    /// The install command is empty or holds a line break or another control character: it
    /// goes into the job as one shell line.
    BadInstall { install: String },
    /// A GitLab `rules:if` string literal has no escapes: it cannot hold both quote kinds,
    /// and GitLab versions disagree on whether `$NAME` inside one is expanded.
    UnquotableForGitlab { main: String },
}

/// The default install command: this very version, from crates.io, with its lock file.
pub fn default_install(version: &str) -> String {
    format!("cargo install --locked git-orchestrate --version ={version}")
}

/// The install command's problem, if it has one.
pub fn check_install(install: &str) -> Option<CiProblem> {
    let bad = install.trim().is_empty() || install.chars().any(breaks_a_line);
    bad.then(|| CiProblem::BadInstall {
        install: install.to_string(),
    })
}

/// The files of the job for `provider` on `main` (already a valid branch name), installing
/// git-orchestrate with `install`; `gitlab_ci_exists`: the project has a `.gitlab-ci.yml`
/// already (then it is left alone and has to include the job file).
pub fn render(
    provider: CiProvider,
    main: &str,
    install: &str,
    version: &str,
    gitlab_ci_exists: bool,
) -> Result<Vec<CiFile>, CiProblem> {
    if let Some(problem) = check_install(install) {
        return Err(problem);
    }
    Ok(match provider {
        CiProvider::Github => vec![CiFile {
            path: GITHUB_WORKFLOW,
            text: github(main, install, version),
        }],
        CiProvider::Gitlab => {
            let mut files = vec![CiFile {
                path: GITLAB_JOB,
                text: gitlab(main, install, version)?,
            }];
            if !gitlab_ci_exists {
                files.push(CiFile {
                    path: GITLAB_CI,
                    text: gitlab_pipeline(version),
                });
            }
            files
        }
    })
}

/// The job's problem for this main branch, if it has one (checked before anything is
/// written).
pub fn check_main(provider: CiProvider, main: &str) -> Option<CiProblem> {
    match provider {
        CiProvider::Github => None,
        CiProvider::Gitlab => {
            gitlab_literal(main)
                .is_none()
                .then(|| CiProblem::UnquotableForGitlab {
                    main: main.to_string(),
                })
        }
    }
}

/// The shell script that picks what to attest and runs `attest`, shared by both providers
/// (POSIX sh: GitLab images may have no bash). Reads `EVENT_IS_PR`, `HEAD_SHA`, `BEFORE`,
/// `AFTER` and `VERDICT` from the environment, never from text pasted into the script: a
/// value from the event (a branch name, a title) spliced into a script runs as code.
const ATTEST_SCRIPT: &str = r#"if [ "$EVENT_IS_PR" = true ]; then
  # The PR head: a workflow's finalized, squashed commit.
  set -- "$HEAD_SHA"
else
  case "$BEFORE" in
    *[!0]*)
      if git cat-file -e "$BEFORE^{commit}" 2>/dev/null; then
        # Every first-parent commit the push added must be a workflow merge.
        set -- "$BEFORE..$AFTER"
      else
        echo "the main branch's previous tip $BEFORE is not in its history: it was rewritten (a force push)" >&2
        exit 1
      fi
      ;;
    *)
      # A new branch (its old tip all zeros): nothing before it to compare with.
      set -- "$AFTER"
      ;;
  esac
fi
# --no-note: the job may not push, so a note written here would be lost; the verdict is
# the exit status and the JSON kept beside the job.
status=0
git orchestrate attest --json --no-note "$@" >"$VERDICT" || status=$?
cat "$VERDICT"
exit "$status"
"#;

/// The GitHub Actions workflow.
fn github(main: &str, install: &str, version: &str) -> String {
    format!(
        r#"# git-orchestrate: attests, where the agent cannot write, every pull request's head and
# every merge on the main branch: the workflow behind it replays, its pinned gates and every
# task's RED test run again (docs/ci.md in git-orchestrate).
# Make the check "{CHECK_NAME}" required, from the GitHub Actions app, and keep
# .github/workflows/ under CODEOWNERS: any workflow can report a status of the same name.
# Written by `git orchestrate init --ci github` (git-orchestrate {version}).
name: git-orchestrate

on:
  pull_request:
  push:
    branches:
      - {branch}

# Read only: the verdict is the check's status and the artifact, never a push.
permissions:
  contents: read

jobs:
  attest:
    name: {CHECK_NAME}
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          # Full history: attest walks the workflow's segment behind the commit.
          fetch-depth: 0
      - name: Fetch the workflow state and the notes
        run: git fetch --no-tags origin '+refs/orchestrator/*:refs/orchestrator/*' '+refs/notes/*:refs/notes/*'
      # No cache on purpose: any workflow of a pull request can write a cache entry its own
      # later runs restore, and so put another program in this one's place.
      - name: Install git-orchestrate
        run: {install}
      - name: Attest
        env:
          EVENT_IS_PR: ${{{{ github.event_name == 'pull_request' }}}}
          HEAD_SHA: ${{{{ github.event.pull_request.head.sha }}}}
          BEFORE: ${{{{ github.event.before }}}}
          AFTER: ${{{{ github.event.after }}}}
          VERDICT: ${{{{ runner.temp }}}}/git-orchestrate-attest.json
        run: |
{script}      - name: Keep the verdict
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: git-orchestrate-attest
          path: ${{{{ runner.temp }}}}/git-orchestrate-attest.json
          if-no-files-found: ignore
"#,
        branch = yaml_string(&github_pattern(main)),
        install = yaml_string(install),
        script = indent(ATTEST_SCRIPT, 10),
    )
}

/// The GitLab job, for `include:` from the pipeline configuration.
fn gitlab(main: &str, install: &str, version: &str) -> Result<String, CiProblem> {
    let literal = gitlab_literal(main).ok_or_else(|| CiProblem::UnquotableForGitlab {
        main: main.to_string(),
    })?;
    let on_main = format!("$CI_PIPELINE_SOURCE == \"push\" && $CI_COMMIT_BRANCH == {literal}");
    Ok(format!(
        r#"# git-orchestrate: attests, where the agent cannot write, every merge request's head and
# every merge on the main branch: the workflow behind it replays, its pinned gates and every
# task's RED test run again (docs/ci.md in git-orchestrate).
# Include it from .gitlab-ci.yml, make pipelines required ("Pipelines must succeed") and
# protect the CI configuration: a merge request can change its own pipeline.
# Written by `git orchestrate init --ci gitlab` (git-orchestrate {version}).
{CHECK_NAME}:
  image: rust:1
  variables:
    # Full history: attest walks the workflow's segment behind the commit.
    GIT_DEPTH: "0"
  rules:
    - if: '$CI_PIPELINE_SOURCE == "merge_request_event"'
    - if: {on_main}
  script:
    - git fetch --no-tags origin '+refs/orchestrator/*:refs/orchestrator/*' '+refs/notes/*:refs/notes/*'
    - {install}
    - |
      EVENT_IS_PR=false
      if [ "$CI_PIPELINE_SOURCE" = merge_request_event ]; then EVENT_IS_PR=true; fi
      # In a merged results pipeline the commit is the merge; the source branch's head is
      # the one the workflow finalized.
      HEAD_SHA="${{CI_MERGE_REQUEST_SOURCE_BRANCH_SHA:-$CI_COMMIT_SHA}}"
      BEFORE="$CI_COMMIT_BEFORE_SHA"
      AFTER="$CI_COMMIT_SHA"
      VERDICT=git-orchestrate-attest.json
{script}  artifacts:
    when: always
    paths:
      - git-orchestrate-attest.json
"#,
        on_main = yaml_string(&on_main),
        install = yaml_string(install),
        script = indent(ATTEST_SCRIPT, 6),
    ))
}

/// The `.gitlab-ci.yml` written when the project has none: merge request pipelines for
/// merge requests and branch pipelines otherwise, never both for one push (a branch pipeline
/// without the job must not be the one "Pipelines must succeed" judges), and the job.
fn gitlab_pipeline(version: &str) -> String {
    format!(
        r#"# The pipeline: merge request pipelines for merge requests, branch pipelines otherwise
# (never both for one push, so "Pipelines must succeed" judges the pipeline that holds
# the git-orchestrate job), and the jobs.
# Written by `git orchestrate init --ci gitlab` (git-orchestrate {version}).
workflow:
  rules:
    - if: '$CI_PIPELINE_SOURCE == "merge_request_event"'
    - if: '$CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS'
      when: never
    - if: '$CI_COMMIT_BRANCH'

include:
  - local: {GITLAB_JOB}
"#
    )
}

/// `text` with every non-empty line indented by `by` spaces.
fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|line| match line {
            "" => "\n".to_string(),
            line => format!("{pad}{line}\n"),
        })
        .collect()
}

/// Characters YAML takes for a line break or cannot hold unescaped: a value holding one is
/// written double-quoted, with escapes.
fn breaks_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// `value` as one YAML scalar: single-quoted (only `'` is special there), or double-quoted
/// with escapes when it holds a character single quotes cannot carry.
pub fn yaml_string(value: &str) -> String {
    if !value.chars().any(breaks_a_line) {
        return format!("'{}'", value.replace('\'', "''"));
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if breaks_a_line(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A branch name as a GitHub Actions branch filter that matches it alone: the filter's
/// special characters escaped with `\` (`*`, `?`, `[` and `\` cannot be in a branch name;
/// `+` and `!` can). A lone `]` is literal, and escaping it is an error.
fn github_pattern(branch: &str) -> String {
    let mut out = String::new();
    for c in branch.chars() {
        if matches!(c, '*' | '?' | '+' | '[' | '!' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A branch name as a string literal of a GitLab `rules:if` expression, if it can be one:
/// the literal has no escapes, so `"…"`, or `'…'` for a name holding `"`.
fn gitlab_literal(branch: &str) -> Option<String> {
    if branch.contains('$') {
        return None;
    }
    if !branch.contains('"') {
        Some(format!("\"{branch}\""))
    } else if !branch.contains('\'') {
        Some(format!("'{branch}'"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Compares `text` with `tests/snapshots/ci/<name>`; with UPDATE_SNAPSHOTS=1 writes it
    /// instead. A missing snapshot is a failure, never silently accepted. The end-to-end
    /// tests lint these files with the real tools.
    fn assert_snapshot(name: &str, text: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/snapshots/ci")
            .join(name);
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "no snapshot {}; run with UPDATE_SNAPSHOTS=1 and review it",
                path.display()
            )
        });
        assert_eq!(text, expected, "{name} differs from its snapshot");
    }

    fn one(files: Vec<CiFile>, path: &str) -> String {
        files
            .into_iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("no {path}"))
            .text
    }

    #[test]
    fn github_whole_workflow() {
        let files = render(
            CiProvider::Github,
            "main",
            &default_install("0.1.0"),
            "0.1.0",
            false,
        )
        .unwrap();
        assert_eq!(
            files.iter().map(|f| f.path).collect::<Vec<_>>(),
            [GITHUB_WORKFLOW]
        );
        assert_snapshot("github.yml", &one(files, GITHUB_WORKFLOW));
    }

    #[test]
    fn gitlab_whole_job_and_pipeline() {
        let files = render(
            CiProvider::Gitlab,
            "main",
            &default_install("0.1.0"),
            "0.1.0",
            false,
        )
        .unwrap();
        assert_eq!(
            files.iter().map(|f| f.path).collect::<Vec<_>>(),
            [GITLAB_JOB, GITLAB_CI]
        );
        assert_snapshot("gitlab-ci.yml", &one(files.clone(), GITLAB_CI));
        assert_snapshot("gitlab.yml", &one(files, GITLAB_JOB));
        // A project with a pipeline of its own keeps it: the job file alone.
        let files = render(CiProvider::Gitlab, "main", "true", "0.1.0", true).unwrap();
        assert_eq!(
            files.iter().map(|f| f.path).collect::<Vec<_>>(),
            [GITLAB_JOB]
        );
    }

    #[test]
    fn values_are_quoted() {
        let text = render(
            CiProvider::Github,
            "release/v1.2+x!y]",
            "make install-it's",
            "0.1.0",
            false,
        )
        .map(|files| one(files, GITHUB_WORKFLOW))
        .unwrap();
        assert!(text.contains("      - 'release/v1.2\\+x\\!y]'\n"), "{text}");
        assert!(
            text.contains("        run: 'make install-it''s'\n"),
            "{text}"
        );
        let text = render(CiProvider::Gitlab, "release/\"x\"", "true", "0.1.0", true)
            .map(|files| one(files, GITLAB_JOB))
            .unwrap();
        assert!(
            text.contains(
                "    - if: '$CI_PIPELINE_SOURCE == \"push\" && $CI_COMMIT_BRANCH == ''release/\"x\"'''\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn yaml_strings() {
        assert_eq!(yaml_string("main"), "'main'");
        assert_eq!(yaml_string("it's"), "'it''s'");
        assert_eq!(yaml_string("a\"b\\c"), "'a\"b\\c'");
        // YAML takes these for line breaks: escaped, inside double quotes.
        assert_eq!(yaml_string("a\u{2028}\"b"), "\"a\\u2028\\\"b\"");
    }

    #[test]
    fn gitlab_literals() {
        assert_eq!(gitlab_literal("main").as_deref(), Some("\"main\""));
        assert_eq!(gitlab_literal("a\"b").as_deref(), Some("'a\"b'"));
        assert_eq!(gitlab_literal("a\"b'c"), None);
        assert_eq!(gitlab_literal("a$b"), None);
        assert_eq!(
            check_main(CiProvider::Gitlab, "a$b"),
            Some(CiProblem::UnquotableForGitlab { main: "a$b".into() })
        );
        assert_eq!(check_main(CiProvider::Github, "a$b\"'"), None);
    }

    #[test]
    fn install_commands() {
        assert_eq!(
            default_install("1.2.3"),
            "cargo install --locked git-orchestrate --version =1.2.3"
        );
        assert_eq!(check_install("cargo install --path ."), None);
        for bad in ["", "  ", "a\nb", "a\rb", "a\u{7}", "a\u{2028}b"] {
            assert_eq!(
                check_install(bad),
                Some(CiProblem::BadInstall {
                    install: bad.into()
                }),
                "{bad:?}"
            );
        }
    }
}
