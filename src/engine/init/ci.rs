//! The CI job `init --ci` writes (docs/ci.md): its files' paths and text, rendered without
//! git or a filesystem from the provider, the main branch, the install command and the
//! toolchain the project's gates need, with every value that comes from outside quoted for
//! YAML (and for the provider's own branch matching), and every action pinned by commit.

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
    /// No `--ci-install`, and no release a registry has to install by default: the job's
    /// first run would fail at its install step.
    NoInstall { version: String },
    /// The install command is empty or holds a line break or another control character: it
    /// goes into the job as one shell line.
    BadInstall { install: String },
    /// A GitLab `rules:if` string literal has no escapes: it cannot hold both quote kinds,
    /// and GitLab versions disagree on whether `$NAME` inside one is expanded.
    UnquotableForGitlab { main: String },
}

/// Whether this version is on crates.io. It is not: until a release is published, a job
/// installing `git-orchestrate --version =X.Y.Z` from the registry fails on its first run, so
/// `init --ci` needs `--ci-install`.
pub const PUBLISHED: bool = false;

/// The default install command, when this version is published: this very version, from
/// crates.io, with its lock file.
pub fn default_install(version: &str) -> Option<String> {
    PUBLISHED.then(|| format!("cargo install --locked git-orchestrate --version ={version}"))
}

/// An action the GitHub job uses, pinned by its commit (a tag can be moved to other code),
/// the release's tag beside it for people.
struct Action {
    name: &'static str,
    commit: &'static str,
    tag: &'static str,
}

impl Action {
    fn uses(&self) -> String {
        format!("{}@{} # {}", self.name, self.commit, self.tag)
    }
}

const CHECKOUT: Action = Action {
    name: "actions/checkout",
    commit: "11d5960a326750d5838078e36cf38b85af677262",
    tag: "v4.4.0",
};
const CACHE: Action = Action {
    name: "actions/cache",
    commit: "0057852bfaa89a56745cba8c7296529d2fc39830",
    tag: "v4.3.0",
};
const UPLOAD_ARTIFACT: Action = Action {
    name: "actions/upload-artifact",
    commit: "ea165f8d65b6e75b540449e92b4886f43607fa02",
    tag: "v4.6.2",
};
const DOWNLOAD_ARTIFACT: Action = Action {
    name: "actions/download-artifact",
    commit: "d3f86a106a0bac45b974a628896c90dbdf5c8093",
    tag: "v4.3.0",
};
const SETUP_PYTHON: Action = Action {
    name: "actions/setup-python",
    commit: "a26af69be951a213d495a4c3e4e4022e16d87065",
    tag: "v5.6.0",
};
const SETUP_NODE: Action = Action {
    name: "actions/setup-node",
    commit: "49933ea5288caeca8642d1e84afbd3f7d6820020",
    tag: "v4.4.0",
};
const SETUP_GO: Action = Action {
    name: "actions/setup-go",
    commit: "40f1582b2485089dde7abd97c1529aa768e1baff",
    tag: "v5.6.0",
};

/// What the job sets up before it attests: the gates run again there, so it needs what they
/// need. Decided from the test runner `init` found and the project's top-level files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// Python, then `pip install` of these words (already shell words).
    Python { pip: Vec<String> },
    /// Node (the version a file names, else the current LTS), then the install command.
    Node {
        version_file: Option<&'static str>,
        install: &'static str,
    },
    /// Go, the version `go.mod` names.
    Go,
    /// Cargo: a Rust toolchain is on the runner (and in GitLab's `rust:1` image) already.
    Cargo,
    /// Nothing known: a marked place for the project's own steps; the runner found, if any.
    Unknown { runner: Option<String> },
}

/// The project's top-level files `setup` looks at.
#[derive(Clone, Debug, Default)]
pub struct ProjectFiles {
    /// The names of the top-level files.
    pub names: Vec<String>,
    /// `pyproject.toml`'s text, when there is one.
    pub pyproject: Option<String>,
}

/// What the job sets up for the gates, from the runner's command `init` found.
pub fn setup(runner: Option<&str>, files: &ProjectFiles) -> Setup {
    let has = |name: &str| files.names.iter().any(|n| n == name);
    match runner {
        Some("cargo test") => Setup::Cargo,
        Some(r) if r.contains("pytest") => Setup::Python {
            pip: python_packages(files),
        },
        Some("npm test") => Setup::Node {
            version_file: [".nvmrc", ".node-version"].into_iter().find(|f| has(f)),
            install: if has("package-lock.json") || has("npm-shrinkwrap.json") {
                "npm ci"
            } else if has("pnpm-lock.yaml") {
                "corepack enable && pnpm install --frozen-lockfile"
            } else if has("yarn.lock") {
                "corepack enable && yarn install"
            } else {
                "npm install"
            },
        },
        Some(r) if r.starts_with("go test") => Setup::Go,
        other => Setup::Unknown {
            runner: other.map(str::to_string),
        },
    }
}

/// What `pip install` needs for the project's tests: its requirements files, else its test
/// extra, else the project itself; pytest always (a pinned one in a file wins).
fn python_packages(files: &ProjectFiles) -> Vec<String> {
    let mut requirements: Vec<&String> = files
        .names
        .iter()
        // A name that needs no quoting for the shell or YAML; others are left to the user.
        .filter(|n| {
            n.starts_with("requirements")
                && n.ends_with(".txt")
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
        .collect();
    requirements.sort();
    let mut words: Vec<String> = requirements
        .into_iter()
        .flat_map(|n| ["-r".to_string(), n.clone()])
        .collect();
    if words.is_empty() {
        let extra = files.pyproject.as_deref().and_then(|text| {
            let doc: toml::Table = toml::from_str(text).ok()?;
            let extras = doc
                .get("project")?
                .get("optional-dependencies")?
                .as_table()?;
            ["test", "tests"]
                .into_iter()
                .find(|name| extras.contains_key(*name))
        });
        match extra {
            Some(extra) => words.extend(["-e".to_string(), format!("'.[{extra}]'")]),
            None if files.pyproject.is_some() || files.names.iter().any(|n| n == "setup.py") => {
                words.extend(["-e".to_string(), ".".to_string()]);
            }
            None => {}
        }
    }
    words.push("pytest".to_string());
    words
}

/// A short, stable digest of the install command for the cache key (FNV-1a, 64 bits): a
/// changed command builds again instead of restoring another's binary.
fn install_digest(install: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in install.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The cache key of the installed binary: the version that wrote the job and the install
/// command.
fn cache_key(version: &str, install: &str) -> String {
    format!("git-orchestrate-{version}-{}", install_digest(install))
}

/// The install command's problem, if it has one.
pub fn check_install(install: &str) -> Option<CiProblem> {
    let bad = install.trim().is_empty() || install.chars().any(breaks_a_line);
    bad.then(|| CiProblem::BadInstall {
        install: install.to_string(),
    })
}

/// The files of the job for `provider` on `main` (already a valid branch name), installing
/// git-orchestrate with `install` and setting up `setup` for the gates; `gitlab_ci_exists`: the project has a `.gitlab-ci.yml`
/// already (then it is left alone and has to include the job file).
pub fn render(
    provider: CiProvider,
    main: &str,
    install: &str,
    version: &str,
    setup: &Setup,
    gitlab_ci_exists: bool,
) -> Result<Vec<CiFile>, CiProblem> {
    if let Some(problem) = check_install(install) {
        return Err(problem);
    }
    Ok(match provider {
        CiProvider::Github => vec![CiFile {
            path: GITHUB_WORKFLOW,
            text: github(main, install, version, setup),
        }],
        CiProvider::Gitlab => {
            let mut files = vec![CiFile {
                path: GITLAB_JOB,
                text: gitlab(main, install, version, setup)?,
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
status=0
signed=false
if [ -n "${GIT_ORCHESTRATE_ATTEST_KEY:-}" ]; then
  # Signed with the job's key (a secret) under refs/notes/orchestrator-attest-ci, the notes
  # ref the server hook takes signed verdicts on (docs/ci.md, "A signed verdict from CI").
  # The key goes in on stdin: no file of it exists while the PR's tests run. They run
  # confined (a PID namespace and a /proc of their own), out of reach of the environment
  # this step started with, where the secret came in.
  key=$GIT_ORCHESTRATE_ATTEST_KEY
  unset GIT_ORCHESTRATE_ATTEST_KEY
  printf '%s\n' "$key" | git orchestrate attest --json --ci-note --confine namespace --signing-key - "$@" >"$VERDICT" || status=$?
  key=
  signed=true
else
  echo "git-orchestrate: no GIT_ORCHESTRATE_ATTEST_KEY secret: no signed verdict is written or pushed; the verdict is this job's status and artifact (docs/ci.md)"
  # --no-note: unsigned, a note is anyone's word, and the server takes none.
  git orchestrate attest --json --no-note "$@" >"$VERDICT" || status=$?
fi
cat "$VERDICT"
"#;

/// The GitHub job's end of the attest script: the signed verdicts handed, as a bundle at
/// `$CI_NOTES`, to the publish job, the only one that may push (it runs none of the PR's
/// code).
const GITHUB_TAIL: &str = r#"if [ "$signed" = true ] && git rev-parse --verify --quiet refs/notes/orchestrator-attest-ci >/dev/null; then
  git bundle create "$CI_NOTES" refs/notes/orchestrator-attest-ci
fi
exit "$status"
"#;

/// The push of the signed verdicts to `$remote`: when another job pushed first, both are
/// kept (this job's where both judged one commit: each is signed) and the push is made again.
const PUSH_CI_NOTES: &str = r#"n=0
until git push "$remote" refs/notes/orchestrator-attest-ci; do
  n=$((n + 1))
  if [ "$n" -ge 3 ]; then
    echo "git-orchestrate: the signed verdicts could not be pushed" >&2
    exit 1
  fi
  git fetch --no-tags "$remote" '+refs/notes/orchestrator-attest-ci:refs/notes/orchestrator-attest-ci-theirs'
  git -c user.name=git-orchestrate -c user.email=git-orchestrate@localhost notes --ref=orchestrator-attest-ci merge -s ours refs/notes/orchestrator-attest-ci-theirs
done
"#;

/// The GitHub publish job's script: the bundle the attest job left, pushed to `origin`.
fn github_publish_script() -> String {
    format!(
        r#"bundle="$RUNNER_TEMP/ci-notes/git-orchestrate-ci-notes.bundle"
if [ ! -f "$bundle" ]; then
  echo "git-orchestrate: no signed verdict to push (no GIT_ORCHESTRATE_ATTEST_KEY secret, or attest wrote none)"
  exit 0
fi
git fetch --no-tags "$bundle" '+refs/notes/orchestrator-attest-ci:refs/notes/orchestrator-attest-ci'
remote=origin
{PUSH_CI_NOTES}"#
    )
}

/// The GitLab job's end of the attest script: the signed verdicts pushed with the
/// `GIT_ORCHESTRATE_PUSH_TOKEN` variable (a project access token that may write the
/// repository; the job's own token may not push).
fn gitlab_tail() -> String {
    format!(
        r#"if [ "$signed" = true ] && git rev-parse --verify --quiet refs/notes/orchestrator-attest-ci >/dev/null; then
  if [ -n "${{GIT_ORCHESTRATE_PUSH_TOKEN:-}}" ]; then
    remote="$CI_SERVER_PROTOCOL://oauth2:$GIT_ORCHESTRATE_PUSH_TOKEN@$CI_SERVER_HOST:$CI_SERVER_PORT/$CI_PROJECT_PATH.git"
{push}  else
    echo "git-orchestrate: no GIT_ORCHESTRATE_PUSH_TOKEN variable: the signed verdict is not pushed (docs/ci.md)"
  fi
fi
exit "$status"
"#,
        push = indent(PUSH_CI_NOTES, 4)
    )
}

/// The fetch of the workflow state and of the two notes refs attest reads, nothing else: a
/// note pushed anywhere else under `refs/notes/` (`refs/notes/remotes/…`, say) is read as a
/// remote's copy and must not come in. A pattern, so that a ref the remote lacks yet (no
/// attestation note before the server hook wrote one) matches nothing instead of failing.
const FETCH: &str = "git fetch --no-tags origin '+refs/orchestrator/*:refs/orchestrator/*' \
                     '+refs/notes/orchestrator*:refs/notes/orchestrator*'";

/// The GitHub steps that set up `setup`, each line indented for the steps list.
fn github_setup(setup: &Setup) -> String {
    let marked = "      # The gates run again below, so this job needs what they need. Change these steps\n      \
                  # if your gates need more (docs/ci.md in git-orchestrate).\n";
    match setup {
        Setup::Python { pip } => format!(
            "{marked}      - name: Set up Python\n        uses: {}\n        with:\n          python-version: '3.x'\n      \
             - name: Install the project's test dependencies\n        run: {}\n",
            SETUP_PYTHON.uses(),
            yaml_string(&format!("python -m pip install {}", pip.join(" ")))
        ),
        Setup::Node {
            version_file,
            install,
        } => format!(
            "{marked}      - name: Set up Node\n        uses: {}\n        with:\n          {}\n      \
             - name: Install the project's packages\n        run: {}\n",
            SETUP_NODE.uses(),
            match version_file {
                Some(file) => format!("node-version-file: {}", yaml_string(file)),
                None => "node-version: 'lts/*'".to_string(),
            },
            yaml_string(install)
        ),
        Setup::Go => format!(
            "{marked}      - name: Set up Go\n        uses: {}\n        with:\n          go-version-file: 'go.mod'\n",
            SETUP_GO.uses()
        ),
        Setup::Cargo => "      # The gates run `cargo test`: the runner has a Rust toolchain (rust-toolchain.toml,\n      \
                         # if any, picks the version). Add steps here if your gates need more.\n"
            .to_string(),
        Setup::Unknown { runner } => format!(
            "      # >>> SET UP YOUR GATES' TOOLCHAIN HERE <<<\n      \
             # The gates run again below, so this job needs what they need: {}. Add the steps\n      \
             # that set it up here (docs/ci.md in git-orchestrate).\n",
            match runner {
                Some(runner) => format!("`{runner}` was found, add its language and packages"),
                None => "no test runner was found".to_string(),
            }
        ),
    }
}

/// The GitLab script lines that set up `setup` (the job runs in `rust:1`, a Debian image),
/// or the marked place for them, each line indented for the script list.
fn gitlab_setup(setup: &Setup) -> String {
    let (what, lines): (String, Vec<String>) = match setup {
        Setup::Cargo => return "    # The gates run `cargo test`: the rust:1 image has the toolchain. Add lines here\n    \
                                # if your gates need more.\n"
            .to_string(),
        Setup::Python { pip } => (
            "Python and the project's test dependencies".into(),
            vec![
                "apt-get update -qq && apt-get install -y -qq python3-venv".into(),
                "python3 -m venv /tmp/venv && . /tmp/venv/bin/activate".into(),
                format!("python -m pip install {}", pip.join(" ")),
            ],
        ),
        Setup::Node { install, .. } => (
            "Node and the project's packages".into(),
            vec![
                "apt-get update -qq && apt-get install -y -qq nodejs npm".into(),
                (*install).to_string(),
            ],
        ),
        Setup::Go => (
            "Go".into(),
            vec!["apt-get update -qq && apt-get install -y -qq golang".into()],
        ),
        Setup::Unknown { runner } => (
            match runner {
                Some(runner) => format!("what `{runner}` needs"),
                None => "what your gates need (no test runner was found)".into(),
            },
            Vec::new(),
        ),
    };
    let mut text = format!(
        "    # >>> SET UP YOUR GATES' TOOLCHAIN HERE <<<\n    \
         # The gates run again below, so this job needs {what}.\n    \
         # Set it up here, or pick an image that has it (docs/ci.md in git-orchestrate).\n"
    );
    if !lines.is_empty() {
        text.push_str("    # For example:\n");
        for line in lines {
            text.push_str(&format!("    # - {line}\n"));
        }
    }
    text
}

/// The GitHub Actions workflow.
fn github(main: &str, install: &str, version: &str, setup: &Setup) -> String {
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

# Read only: the verdict is the check's status and the artifact. Only the publish job,
# which runs none of the PR's code, pushes: the signed verdicts, when there are any.
permissions:
  contents: read

jobs:
  attest:
    name: {CHECK_NAME}
    runs-on: ubuntu-latest
    # The gates and every RED test run again: bounded, so a hanging one cannot hold the runner.
    timeout-minutes: 60
    steps:
      - uses: {checkout}
        with:
          # Full history: attest walks the workflow's segment behind the commit.
          fetch-depth: 0
      - name: Fetch the workflow state and its notes
        run: {fetch}
      - name: Where git-orchestrate is installed
        run: |
          echo "CARGO_INSTALL_ROOT=$HOME/.git-orchestrate" >> "$GITHUB_ENV"
          echo "$HOME/.git-orchestrate/bin" >> "$GITHUB_PATH"
      # The binary, cached by the version that wrote this file and the install command. A
      # pull request's workflows can write entries only its own runs restore, and such a
      # workflow could report this check's name itself anyway: .github/ under CODEOWNERS
      # guards both (docs/ci.md).
      - name: Restore git-orchestrate
        id: cache
        uses: {cache}
        with:
          path: ~/.git-orchestrate
          key: {key}-${{{{ runner.os }}}}
      # It must leave the program at $CARGO_INSTALL_ROOT/bin/git-orchestrate (cargo install does).
      - name: Install git-orchestrate
        if: steps.cache.outputs.cache-hit != 'true'
        run: {install}
      - name: Check git-orchestrate
        run: git orchestrate --version
{setup}      - name: Attest
        env:
          EVENT_IS_PR: ${{{{ github.event_name == 'pull_request' }}}}
          HEAD_SHA: ${{{{ github.event.pull_request.head.sha }}}}
          BEFORE: ${{{{ github.event.before }}}}
          AFTER: ${{{{ github.event.after }}}}
          VERDICT: ${{{{ runner.temp }}}}/git-orchestrate-attest.json
          # Optional: an SSH private key main's .orchestrate/allowed_signers lists for
          # git-orchestrate-attest. Without it the verdict is the check's status only.
          GIT_ORCHESTRATE_ATTEST_KEY: ${{{{ secrets.GIT_ORCHESTRATE_ATTEST_KEY }}}}
          CI_NOTES: ${{{{ runner.temp }}}}/git-orchestrate-ci-notes.bundle
        run: |
{script}      - name: Keep the verdict
        if: always()
        uses: {upload}
        with:
          name: git-orchestrate-attest
          path: ${{{{ runner.temp }}}}/git-orchestrate-attest.json
          if-no-files-found: ignore
      - name: Keep the signed verdicts
        if: always()
        uses: {upload}
        with:
          name: git-orchestrate-ci-notes
          path: ${{{{ runner.temp }}}}/git-orchestrate-ci-notes.bundle
          if-no-files-found: ignore

  # Pushes the signed verdicts the attest job wrote to refs/notes/orchestrator-attest-ci
  # (docs/ci.md): the only job that may write, and it runs none of the PR's code.
  publish:
    name: git-orchestrate publish
    needs: attest
    if: always()
    runs-on: ubuntu-latest
    timeout-minutes: 10
    permissions:
      contents: write
    steps:
      - uses: {checkout}
      - name: Fetch the signed verdicts
        uses: {download}
        # None when the secret is not set (a fork's pull request has no secrets).
        continue-on-error: true
        with:
          name: git-orchestrate-ci-notes
          path: ${{{{ runner.temp }}}}/ci-notes
      - name: Push the signed verdicts
        run: |
{publish}"#,
        branch = yaml_string(&github_pattern(main)),
        install = yaml_string(install),
        script = indent(&format!("{ATTEST_SCRIPT}{GITHUB_TAIL}"), 10),
        publish = indent(&github_publish_script(), 10),
        checkout = CHECKOUT.uses(),
        cache = CACHE.uses(),
        upload = UPLOAD_ARTIFACT.uses(),
        download = DOWNLOAD_ARTIFACT.uses(),
        fetch = yaml_string(FETCH),
        key = cache_key(version, install),
        setup = github_setup(setup),
    )
}

/// The GitLab job, for `include:` from the pipeline configuration.
fn gitlab(main: &str, install: &str, version: &str, setup: &Setup) -> Result<String, CiProblem> {
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
# For signed verdicts (docs/ci.md), set the CI/CD variables GIT_ORCHESTRATE_ATTEST_KEY (an
# SSH private key main's .orchestrate/allowed_signers lists for git-orchestrate-attest) and
# GIT_ORCHESTRATE_PUSH_TOKEN (a project access token that may write the repository), both
# masked and protected.
# Written by `git orchestrate init --ci gitlab` (git-orchestrate {version}).
{CHECK_NAME}:
  image: rust:1
  # The gates and every RED test run again: bounded, so a hanging one cannot hold the runner.
  timeout: 1h
  variables:
    # Full history: attest walks the workflow's segment behind the commit.
    GIT_DEPTH: "0"
    # Where the install line leaves the program (cargo install does), inside the project
    # directory as GitLab's cache needs.
    CARGO_INSTALL_ROOT: $CI_PROJECT_DIR/.git-orchestrate
  # The binary, cached by the version that wrote this file and the install command.
  cache:
    key: {key}
    paths:
      - .git-orchestrate/
  rules:
    - if: '$CI_PIPELINE_SOURCE == "merge_request_event"'
    - if: {on_main}
  script:
    - {fetch}
    - mkdir -p .git/info && echo /.git-orchestrate/ >> .git/info/exclude
    - export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
    - |
      if [ ! -x "$CARGO_INSTALL_ROOT/bin/git-orchestrate" ]; then
        {install}
      fi
    - git orchestrate --version
{setup}    - |
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
        fetch = yaml_string(FETCH),
        key = yaml_string(&cache_key(version, install)),
        setup = gitlab_setup(setup),
        script = indent(&format!("{ATTEST_SCRIPT}{}", gitlab_tail()), 6),
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

    const INSTALL: &str = "cargo install --locked --git https://example.org/git-orchestrate --rev \
                           0123456789abcdef0123456789abcdef01234567";

    fn python() -> Setup {
        Setup::Python {
            pip: vec!["-r".into(), "requirements.txt".into(), "pytest".into()],
        }
    }

    #[test]
    fn github_whole_workflow() {
        // No test runner found: the marked place (the end-to-end tests' project).
        let unknown = Setup::Unknown { runner: None };
        let files = render(
            CiProvider::Github,
            "main",
            INSTALL,
            "0.1.0",
            &unknown,
            false,
        )
        .unwrap();
        assert_eq!(
            files.iter().map(|f| f.path).collect::<Vec<_>>(),
            [GITHUB_WORKFLOW]
        );
        assert_snapshot("github.yml", &one(files, GITHUB_WORKFLOW));
        let files = render(
            CiProvider::Github,
            "main",
            INSTALL,
            "0.1.0",
            &python(),
            false,
        )
        .unwrap();
        assert_snapshot("github-python.yml", &one(files, GITHUB_WORKFLOW));
    }

    #[test]
    fn gitlab_whole_job_and_pipeline() {
        let files = render(
            CiProvider::Gitlab,
            "main",
            INSTALL,
            "0.1.0",
            &python(),
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
        let files = render(
            CiProvider::Gitlab,
            "main",
            "true",
            "0.1.0",
            &Setup::Cargo,
            true,
        )
        .unwrap();
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
            &Setup::Cargo,
            false,
        )
        .map(|files| one(files, GITHUB_WORKFLOW))
        .unwrap();
        assert!(text.contains("      - 'release/v1.2\\+x\\!y]'\n"), "{text}");
        assert!(
            text.contains("        run: 'make install-it''s'\n"),
            "{text}"
        );
        let text = render(
            CiProvider::Gitlab,
            "release/\"x\"",
            "true",
            "0.1.0",
            &Setup::Cargo,
            true,
        )
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
        // No release on a registry yet: no default that would fail the job's first run.
        assert_eq!(default_install("1.2.3"), None);
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

    #[test]
    fn actions_are_pinned_by_commit() {
        for action in [
            &CHECKOUT,
            &CACHE,
            &UPLOAD_ARTIFACT,
            &DOWNLOAD_ARTIFACT,
            &SETUP_PYTHON,
            &SETUP_NODE,
            &SETUP_GO,
        ] {
            assert_eq!(action.commit.len(), 40, "{}", action.name);
            assert!(
                action.commit.bytes().all(|b| b.is_ascii_hexdigit()),
                "{}",
                action.name
            );
        }
        let text = one(
            render(
                CiProvider::Github,
                "main",
                INSTALL,
                "0.1.0",
                &python(),
                false,
            )
            .unwrap(),
            GITHUB_WORKFLOW,
        );
        for line in text.lines().filter(|l| l.contains("uses:")) {
            let (_, used) = line.split_once("uses: ").unwrap();
            let (_, pin) = used.split_once('@').unwrap();
            assert!(
                pin.len() > 40 && pin[..40].bytes().all(|b| b.is_ascii_hexdigit()),
                "{line}"
            );
        }
    }

    #[test]
    fn the_cache_key_follows_the_install_command_and_the_version() {
        assert_eq!(cache_key("0.1.0", "a"), cache_key("0.1.0", "a"));
        assert_ne!(cache_key("0.1.0", "a"), cache_key("0.1.0", "b"));
        assert_ne!(cache_key("0.1.0", "a"), cache_key("0.2.0", "a"));
    }

    fn files(names: &[&str], pyproject: Option<&str>) -> ProjectFiles {
        ProjectFiles {
            names: names.iter().map(|n| n.to_string()).collect(),
            pyproject: pyproject.map(str::to_string),
        }
    }

    fn pip(words: &[&str]) -> Setup {
        Setup::Python {
            pip: words.iter().map(|w| w.to_string()).collect(),
        }
    }

    #[test]
    fn the_setup_follows_the_runner_and_the_files() {
        let pytest = Some("python -m pytest");
        assert_eq!(
            setup(
                pytest,
                &files(
                    &[
                        "requirements.txt",
                        "requirements-dev.txt",
                        "requirements x.txt"
                    ],
                    None
                )
            ),
            pip(&[
                "-r",
                "requirements-dev.txt",
                "-r",
                "requirements.txt",
                "pytest"
            ])
        );
        let with_extra =
            "[project]\nname = \"x\"\n[project.optional-dependencies]\ntest = [\"pytest\"]\n";
        assert_eq!(
            setup(pytest, &files(&["pyproject.toml"], Some(with_extra))),
            pip(&["-e", "'.[test]'", "pytest"])
        );
        assert_eq!(
            setup(
                Some("python3 -m pytest"),
                &files(&["pyproject.toml"], Some("[tool.pytest.ini_options]\n"))
            ),
            pip(&["-e", ".", "pytest"])
        );
        assert_eq!(
            setup(pytest, &files(&["conftest.py"], None)),
            pip(&["pytest"])
        );
        assert_eq!(
            setup(
                Some("npm test"),
                &files(&["package-lock.json", ".nvmrc"], None)
            ),
            Setup::Node {
                version_file: Some(".nvmrc"),
                install: "npm ci"
            }
        );
        assert_eq!(setup(Some("go test ./..."), &files(&[], None)), Setup::Go);
        assert_eq!(setup(Some("cargo test"), &files(&[], None)), Setup::Cargo);
        assert_eq!(
            setup(Some("make test"), &files(&[], None)),
            Setup::Unknown {
                runner: Some("make test".into())
            }
        );
        // Nothing found: a marked place, in both jobs.
        let unknown = Setup::Unknown { runner: None };
        assert!(github_setup(&unknown).contains("SET UP YOUR GATES' TOOLCHAIN HERE"));
        assert!(gitlab_setup(&unknown).contains("SET UP YOUR GATES' TOOLCHAIN HERE"));
    }
}
