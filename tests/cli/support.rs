//! TestRepo: a real git repository in a temp dir, driven by the real binary with a hermetic
//! environment (no system or global git config, fixed dates, C locale), so outputs are stable.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-orchestrate");
pub const REF: &str = "refs/orchestrator/workflows/main";

/// A plan with two tasks: add (RED, GREEN, REFACTOR) and sub (RED, GREEN).
pub const PLAN: &str = r#"{
  "masterPlanPath": "docs/plan.md",
  "prTitle": "feat: Add numbers",
  "summary": "add and sub",
  "verificationPlan": "the tests pass",
  "tasks": [
    {"taskName": "add", "status": "TODO", "tdd_steps": [
      {"type": "RED", "description": "test add", "status": "TODO"},
      {"type": "GREEN", "description": "implement add", "status": "TODO"},
      {"type": "REFACTOR", "description": "tidy add", "status": "TODO"}]},
    {"taskName": "sub", "status": "TODO", "tdd_steps": [
      {"type": "RED", "description": "test sub", "status": "TODO"},
      {"type": "GREEN", "description": "implement sub", "status": "TODO"}]}
  ]
}"#;

/// A plan with one task, RED then GREEN, that creates `file`.
pub fn one_task_plan(title: &str, file: &str) -> String {
    format!(
        r#"{{"masterPlanPath": "docs/plan.md", "prTitle": "{title}", "summary": "s", "verificationPlan": "v",
            "tasks": [{{"taskName": "{file}", "status": "TODO", "tdd_steps": [
              {{"type": "RED", "description": "test {file}", "status": "TODO"}},
              {{"type": "GREEN", "description": "create {file}", "status": "TODO"}}]}}]}}"#
    )
}

/// Plans the PR and does both steps, up to the checkpoint after GREEN.
pub fn do_the_steps(repo: &TestRepo, title: &str, file: &str) {
    repo.submit_plan(&one_task_plan(title, file)).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(&format!("test -e {file}"), None).expect(3);
    repo.run(&[
        "submit-work",
        "-s",
        "missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write(file, &format!("{file} v1\n"));
    repo.submit_test(&format!("test -e {file}"), None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
}

/// The RED test of task "add": `test_add.sh`, committed with the project, fails until the
/// GREEN step writes `add.sh`, and must pass after it (docs/integrity.md: a RED test must turn
/// GREEN).
pub const RED: &str = "sh test_add.sh";

/// The test `RED` runs: it checks what `add.sh` prints.
pub const TEST_ADD: &str = "out=$(sh add.sh 2>&1)\n[ \"$out\" = 5 ] || { echo \"add: expected 5, got: $out\"; exit 1; }\necho 'add: 5 ok'\n";

/// The RED test of task "sub": `test_sub.sh`, committed with the project, passes once
/// `sub.sh` prints 1.
pub const RED_SUB: &str = "sh test_sub.sh";
pub const TEST_SUB: &str =
    "out=$(sh sub.sh 2>&1)\n[ \"$out\" = 1 ] || { echo \"sub: expected 1, got: $out\"; exit 1; }\n";

/// A file beside `repo` (outside its working tree) for a gate to count its runs in.
pub fn counter_file(repo: &TestRepo, name: &str) -> PathBuf {
    repo.dir()
        .parent()
        .expect("a temp dir has a parent")
        .join(format!("{name}-{}-{:p}", std::process::id(), repo))
}

/// A config whose one gate, `counted`, adds a line to `counter` on each run and fails while
/// the file `fail` exists.
pub fn counting_config(counter: &Path, extra: &str) -> String {
    format!(
        "master_plan = \"docs/plan.md\"\n{extra}\n[[preflight]]\nname = \"counted\"\n\
         command = \"echo run >> '{}'; [ ! -e fail ] || {{ echo 'fail exists'; exit 1; }}\"\n",
        counter.display()
    )
}

/// How often a counting gate ran.
pub fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// A config whose one gate runs the project's test script.
pub const CONFIG: &str = r#"main_branch = "main"
master_plan = "docs/plan.md"

[[preflight]]
name = "tests"
command = "sh run_tests.sh"
timeout = "30s"

[test]
timeout = "30s"
output_tail = 20
"#;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Run {
    pub fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            raw_stdout: out.stdout,
        }
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts that stdout contains `text`, showing stdout when it does not.
    #[track_caller]
    pub fn says(&self, text: &str) -> &Run {
        assert!(
            self.stdout.contains(text),
            "stdout lacks {text:?}:\n{}",
            self.stdout
        );
        self
    }

    /// Asserts that stderr contains `text`, showing stderr when it does not.
    #[track_caller]
    pub fn warns(&self, text: &str) -> &Run {
        assert!(
            self.stderr.contains(text),
            "stderr lacks {text:?}:\n{}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn expect(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

pub struct TestRepo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    pub path: PathBuf,
    /// Directories its commands find programs in after the machine's PATH
    /// ([`TestRepo::add_to_path`]).
    path_after: std::sync::Mutex<Vec<PathBuf>>,
}

/// What a test put beside the repository (`counter_file`, `outside` in oracle.rs, the files
/// of hooks.rs: named `<name>-[<pid>-]<address of the TestRepo>`; the plan files of run.rs
/// and agents.rs) goes with it.
impl Drop for TestRepo {
    fn drop(&mut self) {
        let suffix = format!("-{:p}", self as *const TestRepo);
        let Some(parent) = self.dir.path().parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        let name = self
            .dir
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // run.rs's and agents.rs's plan files, named after the repository's directory.
        let plans = [format!("plan-{name}.json"), format!("{name}.plan.json")];
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.ends_with(&suffix) || plans.contains(&file) {
                let path = entry.path();
                if path.is_dir() && !path.is_symlink() {
                    let _ = std::fs::remove_dir_all(&path);
                } else {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
}

/// The ref backend the test repositories use: `GIT_ORCHESTRATE_TEST_REF_FORMAT`
/// (`reftable`; CI runs the core modules once so, `.ci/run`), else git's default (files).
/// A test of its own backend ([`use_ref_format`]) overrides it on its thread.
pub fn test_ref_format() -> Option<String> {
    REF_FORMAT
        .with(|format| format.borrow().clone())
        .or_else(|| std::env::var("GIT_ORCHESTRATE_TEST_REF_FORMAT").ok())
        .filter(|format| !format.is_empty())
}

thread_local! {
    static REF_FORMAT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Makes every repository this test's thread creates from now on keep its refs in `format`
/// (`reftable`), whatever `GIT_ORCHESTRATE_TEST_REF_FORMAT` says: each test runs on a thread
/// of its own.
pub fn use_ref_format(format: &str) {
    REF_FORMAT.with(|slot| *slot.borrow_mut() = Some(format.to_string()));
}

/// `--ref-format=<format>` for a `git init` or `git clone`, when a backend is asked for.
fn ref_format_arg() -> Option<String> {
    test_ref_format().map(|format| format!("--ref-format={format}"))
}

impl TestRepo {
    /// An empty repository on branch main with a test identity, no commits, its refs in
    /// the backend [`test_ref_format`] names.
    pub fn empty() -> TestRepo {
        Self::empty_with_ref_format(test_ref_format().as_deref())
    }

    /// An empty repository as [`Self::empty`] makes it, its refs in `format` (`None`:
    /// git's default).
    pub fn empty_with_ref_format(format: Option<&str>) -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = tempfile::tempdir().expect("temp home");
        std::fs::write(home.path().join(".gitconfig"), "").expect("empty global config");
        let path = dir.path().canonicalize().expect("canonical path");
        let repo = TestRepo {
            dir,
            home,
            path,
            path_after: Default::default(),
        };
        let format = format.map(|format| format!("--ref-format={format}"));
        let mut init = vec!["init", "--quiet", "--initial-branch=main"];
        init.extend(format.as_deref());
        repo.git(&init);
        repo.git(&["config", "user.name", "Test User"]);
        repo.git(&["config", "user.email", "test@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// A clone of `url` (a bare remote made by [`Self::share`]), with the test identity.
    pub fn clone_of(url: &Path) -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = tempfile::tempdir().expect("temp home");
        std::fs::write(home.path().join(".gitconfig"), "").expect("empty global config");
        let path = dir.path().canonicalize().expect("canonical path");
        let repo = TestRepo {
            dir,
            home,
            path,
            path_after: Default::default(),
        };
        let url = url.display().to_string();
        let format = ref_format_arg();
        let mut clone = vec!["clone", "--quiet"];
        clone.extend(format.as_deref());
        clone.extend([url.as_str(), "."]);
        repo.git(&clone);
        repo.git(&["config", "user.name", "Test User"]);
        repo.git(&["config", "user.email", "test@example.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// Makes a bare repository, adds it as `origin` and pushes `main` to it. The returned
    /// directory holds it at `remote.git`.
    pub fn share(&self) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let bare = dir
            .path()
            .canonicalize()
            .expect("canonical")
            .join("remote.git");
        let bare_str = bare.display().to_string();
        let format = ref_format_arg();
        let mut init = vec!["init", "--quiet", "--bare", "--initial-branch=main"];
        init.extend(format.as_deref());
        init.push(&bare_str);
        self.git(&init);
        self.git(&["remote", "add", "origin", &bare_str]);
        self.git(&["push", "--quiet", "origin", "main"]);
        (dir, bare)
    }

    /// A repository with a committed project: `run_tests.sh` (passes when the file
    /// `fail` is absent), the config, and a master plan.
    pub fn new() -> TestRepo {
        Self::with_config(CONFIG)
    }

    pub fn with_config(config: &str) -> TestRepo {
        let repo = Self::empty();
        repo.write("run_tests.sh", "if [ -e fail ]; then echo 'tests: FAILED (fail exists)'; exit 1; fi\necho 'tests: ok'\n");
        repo.write("test_add.sh", TEST_ADD);
        repo.write("test_sub.sh", TEST_SUB);
        repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Add numbers\n");
        if !config.is_empty() {
            repo.write(".orchestrate.toml", config);
        }
        repo.commit_all("initial");
        repo
    }

    /// A repository in EXECUTING_TDD on the PR branch of [`PLAN`], at step 1.1.
    pub fn at_first_step() -> TestRepo {
        let repo = Self::new();
        repo.submit_plan(PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo
    }

    /// As [`Self::at_first_step`], with 1.1 done: at GREEN step 1.2, its work written
    /// (`add.sh`, which makes the RED test pass) and not yet submitted.
    pub fn at_green_step() -> TestRepo {
        let repo = Self::at_first_step();
        repo.submit_test(RED, Some("FAIL")).expect(3);
        repo.run(&[
            "submit-work",
            "-s",
            "right reason",
            "--analysis-decision",
            "SUCCESS",
        ])
        .expect(0);
        repo.write("add.sh", "echo 5\n");
        repo
    }

    fn env(&self, cmd: &mut Command) {
        let bin_dir = Path::new(BIN).parent().expect("bin dir");
        let after = self.path_after.lock().expect("the PATH list").clone();
        let path = std::env::join_paths(
            std::iter::once(bin_dir.to_path_buf())
                .chain(std::env::split_paths(
                    &std::env::var_os("PATH").unwrap_or_default(),
                ))
                .chain(after),
        )
        .expect("PATH");
        cmd.current_dir(&self.path)
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("TMPDIR", self.temp_dir())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join(".gitconfig"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_EDITOR", ":")
            // The developer's own ignore and configuration files are not the test's.
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_ORCHESTRATE_WORKFLOW")
            .env_remove("GIT_ORCHESTRATE_HUMAN");
        // Every repository git makes for the test (a `git init` or `git clone` of its own
        // included) keeps its refs in the backend asked for.
        match test_ref_format() {
            Some(format) => cmd.env("GIT_DEFAULT_REF_FORMAT", format),
            None => cmd.env_remove("GIT_DEFAULT_REF_FORMAT"),
        };
    }

    /// Lets every command of this repository started from now on (a server started with it
    /// too) find the programs of `dir`, a tool installed into the cache outside the clone
    /// (`yarn`, `pnpm`: tests/cli/adequacy_yarn_pnpm.rs), by name, after the machine's own.
    pub fn add_to_path(&self, dir: PathBuf) {
        self.path_after.lock().expect("the PATH list").push(dir);
    }

    /// Lets this repository's commands find the programs `other`'s find after the machine's
    /// PATH ([`TestRepo::add_to_path`]): a CI clone has the tools the agent's machine had.
    pub fn add_path_of(&self, other: &TestRepo) {
        let dirs = other.path_after.lock().expect("the PATH list").clone();
        self.path_after.lock().expect("the PATH list").extend(dirs);
    }

    /// The temporary HOME every command of this repository runs with.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn command<I, S>(&self, program: &str, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        cmd.args(args);
        self.env(&mut cmd);
        cmd
    }

    /// Runs git, asserting success; returns stdout.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let out = self
            .command("git", args)
            .stdin(Stdio::null())
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {} failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git as a person would, hooks and all, returning how it ended.
    pub fn git_run(&self, args: &[&str]) -> Run {
        Run::from(
            self.command("git", args)
                .stdin(Stdio::null())
                .output()
                .expect("run git"),
        )
    }

    /// Runs git and returns (success, stdout).
    pub fn git_try(&self, args: &[&str]) -> (bool, String) {
        let out = self
            .command("git", args)
            .stdin(Stdio::null())
            .output()
            .expect("run git");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// Runs `git-orchestrate ARGS` the way `git orchestrate ARGS` would.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(
            self.command(BIN, args)
                .stdin(Stdio::null())
                .output()
                .expect("run git-orchestrate"),
        )
    }

    /// Runs a human's command (`resume`, `approve`, `reject`) as a script acting for a
    /// person does: without a terminal, with GIT_ORCHESTRATE_HUMAN=1.
    pub fn human(&self, args: &[&str]) -> Run {
        Run::from(
            self.command(BIN, args)
                .env("GIT_ORCHESTRATE_HUMAN", "1")
                .stdin(Stdio::null())
                .output()
                .expect("run git-orchestrate"),
        )
    }

    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.command(BIN, args);
        cmd.current_dir(dir);
        Run::from(
            cmd.stdin(Stdio::null())
                .output()
                .expect("run git-orchestrate"),
        )
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        feed(self.command(BIN, args), stdin)
    }

    pub fn submit_plan(&self, plan: &str) -> Run {
        self.run_with_stdin(
            &["submit-work", "--summary", "the plan", "--plan", "-"],
            plan,
        )
    }

    pub fn submit_test(&self, command: &str, expectation: Option<&str>) -> Run {
        let mut args = vec![
            "submit-work",
            "--summary",
            "did the step",
            "--test-command",
            command,
        ];
        if let Some(e) = expectation {
            args.extend(["--expectation", e]);
        }
        self.run(&args)
    }

    pub fn write(&self, path: &str, content: &str) {
        let full = self.path.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(full, content).expect("write file");
    }

    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "-m", message]);
    }

    /// The workflow ref's tip, if any.
    pub fn tip(&self) -> Option<String> {
        let (ok, out) = self.git_try(&["rev-parse", "--verify", "--quiet", REF]);
        ok.then(|| out.trim().to_string())
    }

    /// `state.json` at the workflow tip.
    pub fn state(&self) -> serde_json::Value {
        serde_json::from_str(&self.git(&["show", &format!("{REF}:state.json")]))
            .expect("state.json is JSON")
    }

    pub fn status(&self) -> String {
        self.state()["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Number of transitions (commits) in the workflow's history.
    pub fn history_len(&self) -> usize {
        self.git(&["rev-list", "--count", REF])
            .trim()
            .parse()
            .expect("count")
    }

    /// Runs git with `input` on stdin, asserting success; returns stdout.
    pub fn git_with_stdin(&self, args: &[&str], input: &[u8]) -> String {
        use std::io::Write;
        let mut child = self
            .command("git", args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
        let out = child.wait_with_output().expect("wait for git");
        assert!(out.status.success(), "git {} failed", args.join(" "));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Puts a workflow commit with exactly `files` on top of the workflow ref, with plain git
    /// plumbing: what an older version, another tool or a hand edit could leave behind.
    pub fn write_workflow_commit(&self, files: &[(&str, &[u8])]) -> String {
        let mut spec = String::new();
        for (name, content) in files {
            let blob = self.git_with_stdin(&["hash-object", "-w", "--stdin"], content);
            spec.push_str(&format!("100644 blob {}\t{name}\n", blob.trim()));
        }
        let tree = self.git_with_stdin(&["mktree"], spec.as_bytes());
        let parent = self.tip().expect("the workflow exists");
        let commit = self.git(&[
            "commit-tree",
            tree.trim(),
            "-p",
            &parent,
            "-m",
            "written by hand",
        ]);
        self.git(&["update-ref", REF, commit.trim(), &parent]);
        commit.trim().to_string()
    }

    /// Files in the working tree, relative, sorted, excluding `.git`.
    pub fn worktree_files(&self) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).expect("read_dir") {
                let entry = entry.expect("entry");
                let path = entry.path();
                if path.file_name() == Some(OsStr::new(".git")) {
                    continue;
                }
                if path.is_dir() {
                    walk(root, &path, out);
                } else {
                    out.push(
                        path.strip_prefix(root)
                            .expect("prefix")
                            .display()
                            .to_string(),
                    );
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.path, &self.path, &mut out);
        out.sort();
        out
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The commands' temporary directory (`TMPDIR`), this repository's own: where the
    /// scratch worktrees of the final check go.
    pub fn temp_dir(&self) -> PathBuf {
        let dir = self.home.path().join("tmp");
        std::fs::create_dir_all(&dir).expect("create the temp dir");
        dir
    }

    /// The scratch worktrees left in [`Self::temp_dir`].
    pub fn scratch_worktrees(&self) -> usize {
        let Ok(users) = std::fs::read_dir(self.temp_dir()) else {
            return 0;
        };
        users
            .flatten()
            .filter_map(|u| std::fs::read_dir(u.path()).ok())
            .flat_map(|repos| repos.flatten())
            .filter(|r| r.file_name().to_string_lossy().starts_with("scratch-"))
            .filter_map(|r| std::fs::read_dir(r.path()).ok())
            .map(|worktrees| worktrees.count())
            .sum()
    }
}

/// A `git daemon` on 127.0.0.1 serving the repositories under a directory over `git://`,
/// pushes enabled; killed and waited for when dropped.
pub struct GitDaemon {
    child: std::process::Child,
    pub port: u16,
}

impl GitDaemon {
    /// Serves every repository under `base` with `repo`'s hermetic environment; its log is
    /// `base/daemon.log`.
    pub fn start(repo: &TestRepo, base: &Path) -> GitDaemon {
        Self::start_with_path_first(repo, base, None)
    }

    /// [`Self::start`], `first` (if any) put first on the daemon's PATH.
    pub fn start_with_path_first(repo: &TestRepo, base: &Path, first: Option<&Path>) -> GitDaemon {
        // The port is free when picked, not always when the daemon binds it: another test
        // may take it in between, and then this daemon exits unable to listen. A few tries,
        // each on a port picked again.
        for _ in 0..4 {
            if let Some(daemon) = Self::start_once(repo, base, first) {
                return daemon;
            }
        }
        Self::start_once(repo, base, first).expect("a port git daemon could listen on")
    }

    /// One start on a port picked now; `None` when the daemon could not bind it.
    fn start_once(repo: &TestRepo, base: &Path, first: Option<&Path>) -> Option<GitDaemon> {
        use std::net::{TcpListener, TcpStream};
        use std::time::{Duration, Instant};
        // `git daemon` would run git-daemon as its child, which a kill of the parent leaves
        // behind: run the program itself.
        let exec_path = repo.git(&["--exec-path"]);
        let program = Path::new(exec_path.trim()).join("git-daemon");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = std::fs::File::create(base.join("daemon.log")).expect("daemon log");
        let mut command = repo.command(
            program.to_str().expect("a UTF-8 path"),
            [
                "--reuseaddr".to_string(),
                format!("--base-path={}", base.display()),
                "--export-all".into(),
                "--enable=receive-pack".into(),
                "--informative-errors".into(),
                "--listen=127.0.0.1".into(),
                format!("--port={port}"),
                base.display().to_string(),
            ],
        );
        if let Some(first) = first {
            let rest = command
                .get_envs()
                .find_map(|(k, v)| (k == "PATH").then_some(v).flatten())
                .map(std::ffi::OsStr::to_os_string)
                .unwrap_or_default();
            let path = std::env::join_paths(
                std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&rest)),
            )
            .expect("PATH");
            command.env("PATH", path);
        }
        let child = command
            // CI runs as root, maybe outside a container: its server hooks are meant to
            // (tests/cli/attest.rs tests the refusal without this).
            .env("GIT_ORCHESTRATE_ALLOW_ROOT", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start git daemon");
        let mut daemon = GitDaemon { child, port };
        let start = Instant::now();
        // Another test's daemon on the same port would answer the connect in place of this
        // one: wait until the listener is this child's own.
        while TcpStream::connect(("127.0.0.1", port)).is_err()
            || !listens_itself(daemon.child.id(), port)
        {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                let log = std::fs::read_to_string(base.join("daemon.log")).unwrap_or_default();
                if log.contains("unable to allocate any listen sockets") {
                    return None;
                }
                panic!("git daemon exited ({status}): {log}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "git daemon did not listen on port {port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(daemon)
    }

    /// The `git://` URL of `name`, a repository under the served directory.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{name}", self.port)
    }
}

/// Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux's /proc).
fn listens_itself(pid: u32, port: u16) -> bool {
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!("0100007F:{port:04X}");
    let Some(inode) = tcp.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A"))
            .then(|| fields.get(9).map(|i| format!("socket:[{i}]")))
            .flatten()
    }) else {
        return false;
    };
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|target| target.to_string_lossy() == inode)
            })
        })
        .unwrap_or(false)
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` with `stdin` on its standard input, and what it printed.
pub fn feed(mut cmd: Command, stdin: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    Run::from(child.wait_with_output().expect("wait"))
}

/// Replaces commit ids in `text` with `<id>` so outputs can be compared whole.
pub fn redact_ids(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        // A short id (12) or a whole one (40) may be all digits, one in a few hundred.
        if matches!(run.len(), 12 | 40)
            || run.len() >= 7
                && run.chars().any(|c| c.is_ascii_digit())
                && run.chars().any(|c| c.is_ascii_lowercase())
        {
            out.push_str("<id>");
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}
