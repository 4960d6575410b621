//! The team, end to end (docs/trust.md, docs/worktrees.md, docs/ci.md, docs/tickets.md): over
//! a real `git daemon` on 127.0.0.1 serving a bare repository with the installed server hook,
//! three clones and a linked worktree, each with its own workflow, take the PRs of one master
//! plan and merge them at once while a fourth clone's ticket lands; two PRs write the same
//! file, so the one that lands second conflicts and a human resolves it and lands it with
//! `resume`; a human commits a gate change on main and repins, signed. After every push of
//! main, the attest job of the GitHub workflow `init --ci github` wrote runs as GitHub runs
//! it, in a fresh clone. No honest push is refused, every PR is merged exactly once, no
//! `audit` says FORGED, no claim is left and `board` agrees with the remote.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::landing::Server;
use crate::support::*;

/// A master plan of four PRs, one per agent, far enough apart that marking each [DONE] never
/// conflicts.
const FOUR_PRS: &str = "# Plan\n\n## PR 1: feat: One\n\nThe first.\n\n## PR 2: feat: Two\n\n\
    The second.\n\n## PR 3: feat: Three\n\nThe third.\n\n## PR 4: feat: Four\n\nThe fourth.\n";

/// What an agent works on: a PR of the master plan, or a ticket.
#[derive(Clone, Copy, PartialEq)]
enum Work {
    Tdd,
    Ticket,
}

/// One scripted agent: a workflow driven from `dir`, named by `--workflow` in a clone, or by
/// its worktree's own config in a linked worktree (as `worktree add` records it).
struct Agent<'a> {
    repo: &'a TestRepo,
    dir: PathBuf,
    workflow: &'a str,
    by_flag: bool,
    work: Work,
}

impl Agent<'_> {
    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut all: Vec<&str> = Vec::new();
        if self.by_flag {
            all.extend(["--workflow", self.workflow]);
        }
        all.extend_from_slice(args);
        let mut cmd = self.repo.command(BIN, all);
        cmd.current_dir(&self.dir);
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(
            self.command(args)
                .stdin(Stdio::null())
                .output()
                .expect("run git-orchestrate"),
        )
    }

    fn state(&self) -> String {
        let state = match self.work {
            Work::Tdd => self.run(&["status", "--json"]).expect(0).json()["state"].clone(),
            Work::Ticket => {
                self.run(&["--json", "ticket", "show"]).expect(0).json()["ticket"]["state"].clone()
            }
        };
        state.as_str().unwrap_or_default().to_string()
    }

    /// The state its landing leaves it in.
    fn done(&self) -> &'static str {
        match self.work {
            Work::Tdd => "INITIALIZING",
            Work::Ticket => "TICKET_DONE",
        }
    }

    /// The command that lands its work: `get-task` merges a PR, `complete-ticket` a ticket.
    fn landing(&self) -> Vec<&'static str> {
        match self.work {
            Work::Tdd => vec!["get-task"],
            Work::Ticket => vec!["complete-ticket", "--summary", "hello"],
        }
    }

    /// From its plan `title` (one task creating `file` with `content`) to the master plan
    /// marked done: the next `get-task` merges it. Accepting the plan claims the PR on the
    /// remote.
    fn up_to_the_merge(&self, title: &str, file: &str, content: &str) {
        feed(
            self.command(&["submit-work", "--summary", "the plan", "--plan", "-"]),
            &one_task_plan(title, file),
        )
        .expect(0);
        self.run(&["get-task"]).expect(0);
        let test = format!("test -e {file}");
        self.run(&["submit-work", "-s", "red", "--test-command", &test])
            .expect(3);
        self.run(&[
            "submit-work",
            "-s",
            "missing",
            "--analysis-decision",
            "SUCCESS",
        ])
        .expect(0);
        std::fs::write(self.dir.join(file), content).expect("write");
        self.run(&["submit-work", "-s", "green", "--test-command", &test])
            .expect(0);
        self.run(&["checkpoint"]).expect(0);
        self.run(&["get-task"]).expect(0);
        self.run(&["submit-work", "-s", "squashed", "--squash"])
            .expect(0);
        self.run(&["submit-work", "-s", "plan updated", "--mark-done"])
            .expect(0);
    }

    /// The ticket (docs/tickets.md), a manager and a developer scripted through the CLI: one
    /// subtask, its test failing on the base and passing on the work, accepted; the next
    /// `complete-ticket` squashes and lands it.
    fn up_to_the_ticket_merge(&self) {
        let flag = ["--workflow", self.workflow];
        self.run(&["ticket", "new", "--title", "Hello"]).expect(0);
        crate::tickets::assign(self.repo, "Add hello", &["src/**", "tests/**"], &flag).expect(0);
        crate::tickets::honest_work(self.repo, "hello");
        crate::tickets::report(
            self.repo,
            "pass",
            &["src/hello.sh", "tests/hello.sh"],
            &flag,
        )
        .expect(0);
        crate::tickets::judge(self.repo, "complete", &flag).expect(0);
    }
}

/// The install command written into the workflow: never run (see [`github_job`]).
const CI_INSTALL: &str = "cargo install --locked --git https://example.org/git-orchestrate --rev \
                          0123456789abcdef0123456789abcdef01234567";

/// How the attest job of the GitHub workflow ended, run as GitHub runs it.
struct CiRun {
    /// The exit status of the first step that failed, or 0.
    code: i32,
    /// Each step run, its name, exit status and output.
    log: String,
    /// The JSON the Attest step kept as its verdict.
    verdicts: Option<serde_json::Value>,
}

impl CiRun {
    #[track_caller]
    fn expect(self, code: i32) -> CiRun {
        assert_eq!(self.code, code, "the CI job:\n{}", self.log);
        self
    }
}

/// `${{ … }}` in `text` replaced by what GitHub gives a push of main from `before` to
/// `after`; an expression this runner does not know fails the test (the template changed: the
/// runner must learn it, not guess it).
fn expand(text: &str, before: &str, after: &str, temp: &Path) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .map(|e| start + e)
            .unwrap_or_else(|| panic!("an unclosed expression in {text}"));
        let value = match rest[start + 3..end].trim() {
            "github.event_name == 'pull_request'" => "false".to_string(),
            "github.event.pull_request.head.sha" => String::new(),
            "github.event.before" => before.to_string(),
            "github.event.after" | "github.sha" => after.to_string(),
            "runner.temp" => temp.display().to_string(),
            "runner.os" => "Linux".to_string(),
            // A secret nobody set is empty on GitHub: the job says so and signs nothing.
            "secrets.GIT_ORCHESTRATE_ATTEST_KEY" => String::new(),
            other => panic!("the CI runner of this test does not know ${{{{ {other} }}}}"),
        };
        out.push_str(&value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// The attest job of the workflow `init --ci github` wrote (committed on main, so GitHub
/// reads it from the pushed commit), run as GitHub runs it on a push of main from `before`
/// to `after`: a fresh clone of the server at `after` with full history (the checkout step),
/// then every `run:` step, in order, with `bash --noprofile --norc -eo pipefail`, the
/// expressions and the variables GitHub sets, `$GITHUB_ENV` and `$GITHUB_PATH` honoured
/// between steps, until one fails.
///
/// The one thing not run is the install step: no registry or network here, and the binary
/// under test is the one to check. It is put where the "Restore git-orchestrate" cache step
/// puts it on a cache hit (`~/.git-orchestrate/bin`), and the install step is skipped by its
/// own `if:` as on a cache hit; every other `uses:` step (checkout, cache, artifact upload)
/// is GitHub's own and is stood in for as said.
fn github_job(server: &Server, before: &str, after: &str) -> CiRun {
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    ci.git(&["checkout", "--quiet", "--detach", after]);
    let workflow = crate::ci::yaml(&ci.dir().join(".github/workflows/git-orchestrate.yml"));
    let steps = workflow["jobs"]["attest"]["steps"]
        .as_array()
        .expect("the attest job's steps")
        .clone();
    let runner = tempfile::tempdir().expect("temp dir");
    let temp = runner.path().canonicalize().expect("canonical");
    let github_env = temp.join("github_env");
    let github_path = temp.join("github_path");
    let mut cache_hit = false;
    // The system's PATH, less any directory holding a git-orchestrate: the job finds the
    // binary only where its own steps say it is.
    let system_path: Vec<PathBuf> =
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|dir| !dir.join("git-orchestrate").exists())
            .collect();
    let mut log = String::new();
    for step in &steps {
        let name = step["name"]
            .as_str()
            .or(step["uses"].as_str())
            .unwrap_or("?")
            .to_string();
        if let Some(uses) = step["uses"].as_str() {
            if uses.starts_with("actions/cache@") && step["id"] == "cache" {
                let path = step["with"]["path"].as_str().expect("the cached path");
                let dir = ci.home().join(path.strip_prefix("~/").expect("under ~"));
                std::fs::create_dir_all(dir.join("bin")).expect("the cache's bin");
                std::os::unix::fs::symlink(BIN, dir.join("bin/git-orchestrate"))
                    .expect("the binary where the cache restores it");
                cache_hit = true;
            }
            log.push_str(&format!("-- {name}: stood in for\n"));
            continue;
        }
        let Some(script) = step["run"].as_str() else {
            panic!("a step neither uses nor runs: {step}");
        };
        match step["if"].as_str() {
            None => {}
            Some("always()") => {}
            Some("steps.cache.outputs.cache-hit != 'true'") => {
                if cache_hit {
                    log.push_str(&format!("-- {name}: skipped (cache hit)\n"));
                    continue;
                }
                panic!("the install step would run: {name}");
            }
            Some(other) => panic!("the CI runner of this test does not know `if: {other}`"),
        }
        let mut cmd = ci.command(
            "bash",
            [
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                &expand(script, before, after, &temp),
            ],
        );
        // What GitHub's runner sets for every step.
        cmd.env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", "push")
            .env("GITHUB_REF", "refs/heads/main")
            .env("GITHUB_SHA", after)
            .env("GITHUB_WORKSPACE", ci.dir())
            .env("RUNNER_TEMP", &temp)
            .env("RUNNER_OS", "Linux")
            .env("GITHUB_ENV", &github_env)
            .env("GITHUB_PATH", &github_path)
            .stdin(Stdio::null());
        if let Some(env) = step["env"].as_object() {
            for (key, value) in env {
                let value = match value {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                cmd.env(key, expand(&value, before, after, &temp));
            }
        }
        // $GITHUB_ENV: `NAME=value` lines, for every later step.
        for line in std::fs::read_to_string(&github_env)
            .unwrap_or_default()
            .lines()
        {
            let (key, value) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("a $GITHUB_ENV line this runner does not read: {line}"));
            cmd.env(key, value);
        }
        // $GITHUB_PATH: each line put before PATH, the latest first.
        let added: Vec<PathBuf> = std::fs::read_to_string(&github_path)
            .unwrap_or_default()
            .lines()
            .rev()
            .map(PathBuf::from)
            .collect();
        cmd.env(
            "PATH",
            std::env::join_paths(added.iter().chain(&system_path)).expect("PATH"),
        );
        let out = Run::from(cmd.output().expect("run a CI step"));
        log.push_str(&format!(
            "-- {name}: exit {}\n{}{}",
            out.code, out.stdout, out.stderr
        ));
        if out.code != 0 {
            return CiRun {
                code: out.code,
                log,
                verdicts: None,
            };
        }
    }
    let verdicts = std::fs::read_to_string(temp.join("git-orchestrate-attest.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    assert!(
        verdicts.is_some(),
        "the Attest step kept no verdict:\n{log}"
    );
    CiRun {
        code: 0,
        log,
        verdicts,
    }
}

/// `audit --all` of `repo` at `when`: never FORGED, and clean.
#[track_caller]
fn audit_all(repo: &TestRepo, when: &str) {
    let out = repo.run(&["audit", "--all"]);
    assert!(!out.stdout.contains("FORGED"), "{when}: {}", out.stdout);
    assert_eq!(
        out.code, 0,
        "audit --all {when}:\n{}\n{}",
        out.stdout, out.stderr
    );
}

/// The CI job on every push of main the server took since `seen` (each landing pushes one
/// first-parent commit of main, a fast-forward leased on what it fetched): each must pass.
/// Returns the server's main, and counts the jobs run in `jobs`.
fn ci_on_each_push(server: &Server, repo: &TestRepo, seen: &str, jobs: &mut usize) -> String {
    let line = server.main_line(repo);
    let added: Vec<&String> = line.iter().take_while(|c| **c != seen).collect();
    assert!(
        line.iter().any(|c| c == seen),
        "main on the server was rewritten: {seen} is not on {line:?}"
    );
    for pair in line.windows(2).take(added.len()) {
        let (after, before) = (&pair[0], &pair[1]);
        github_job(server, before, after).expect(0);
        *jobs += 1;
    }
    line[0].clone()
}

#[test]
fn a_team_of_clones_and_a_worktree_merges_one_plan_through_the_hook_and_ci_passes() {
    let started = std::time::Instant::now();
    let keys = tempfile::tempdir().expect("temp dir");
    let alice = crate::signed::key(keys.path(), "alice");
    let alice_key = alice.to_str().expect("UTF-8");
    let config = format!(
        "{CONFIG}\n[human]\nrequire = \"signature\"\n\n[attest]\nhumans = [\"user:alice\"]\n"
    );
    let origin = TestRepo::with_config(&config);
    origin.write(
        ".orchestrate/allowed_signers",
        &crate::signed::allowed("alice", &alice),
    );
    origin.write("docs/plan.md", FOUR_PRS);
    // The ticket's tests are `tests/*.sh`, run by the gate.
    origin.write("run_tests.sh", crate::tickets::RUNNER);
    // The CI job, as `init --ci` writes it, committed on main: GitHub reads it from the
    // pushed commit.
    origin
        .run(&[
            "init",
            "--ci",
            "github",
            "--ci-install",
            CI_INSTALL,
            "--no-hooks",
        ])
        .expect(0);
    origin.commit_all("four PRs, the gates and the CI job");
    let server = Server::start(&origin);
    let bare = server.bare.to_str().expect("UTF-8");
    // Every accepted move of a ref on the server, in its reflog: the pushes counted below.
    origin.git(&[
        "--git-dir",
        bare,
        "config",
        "core.logAllRefUpdates",
        "always",
    ]);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let base = origin.git(&["rev-parse", "main"]).trim().to_string();

    let a = TestRepo::clone_of(Path::new(&server.url()));
    let b = TestRepo::clone_of(Path::new(&server.url()));
    let c = TestRepo::clone_of(Path::new(&server.url()));
    let d = TestRepo::clone_of(Path::new(&server.url()));
    let beside = tempfile::tempdir().expect("temp dir");
    let wt = beside.path().canonicalize().expect("canonical").join("w");
    a.run(&["worktree", "add", "w", wt.to_str().expect("UTF-8")])
        .expect(0);
    let agent = |repo, workflow, work| Agent {
        repo,
        dir: repo.dir().to_path_buf(),
        workflow,
        by_flag: true,
        work,
    };
    let agents = [
        agent(&a, "a", Work::Tdd),
        agent(&b, "b", Work::Tdd),
        agent(&c, "c", Work::Tdd),
        Agent {
            repo: &a,
            dir: wt.clone(),
            workflow: "w",
            by_flag: false,
            work: Work::Tdd,
        },
        agent(&d, "t", Work::Ticket),
    ];
    // PRs Two and Three write the same file: whichever lands second conflicts.
    let prs = [
        ("feat: One", "one.txt", "one\n"),
        ("feat: Two", "same.txt", "two\n"),
        ("feat: Three", "same.txt", "three\n"),
        ("feat: Four", "four.txt", "four\n"),
    ];
    for (agent, (title, file, content)) in agents.iter().zip(prs) {
        agent.up_to_the_merge(title, file, content);
    }
    agents[4].up_to_the_ticket_merge();

    // The landings, all at once: each waiting agent's `get-task` (the ticket's
    // `complete-ticket`) a child process of its own.
    let mut rounds = 0;
    let mut landings_run = 0;
    let mut pushes_refused = 0;
    let mut remerged = 0;
    let mut false_alarms = 0;
    let mut ci_jobs = 0;
    let mut seen = base.clone();
    let mut last_round: Vec<String> = Vec::new();
    loop {
        let waiting: Vec<&Agent> = agents
            .iter()
            .filter(|agent| {
                let state = agent.state();
                state != agent.done() && state != "HALTED"
            })
            .collect();
        if waiting.is_empty() {
            break;
        }
        rounds += 1;
        assert!(
            rounds <= agents.len(),
            "still unmerged after {} rounds; the last round's landings:\n{}",
            agents.len(),
            last_round.join("\n")
        );
        last_round.clear();
        let children: Vec<_> = waiting
            .iter()
            .map(|agent| {
                agent
                    .command(&agent.landing())
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start the landing")
            })
            .collect();
        for (agent, child) in waiting.iter().zip(children) {
            let out = Run::from(child.wait_with_output().expect("the landing"));
            landings_run += 1;
            last_round.push(format!(
                "{} exit {}:\n{}\n{}",
                agent.workflow, out.code, out.stdout, out.stderr
            ));
            if out.stdout.contains("lost the race to another clone") {
                remerged += 1;
            }
            if out.stdout.contains("hook declined") || out.stderr.contains("hook declined") {
                pushes_refused += 1;
            }
            // Two workflows of one clone land at once: the one whose local move of main
            // loses leaves main here behind its own merge (on the server already; the next
            // fetch brings it), and its guidance then warns that main "moved outside the
            // workflow". A false alarm, counted and reported, not a refusal or a forgery.
            if out.stdout.contains("moved outside the workflow") {
                false_alarms += 1;
            }
            assert!(
                !out.stdout.contains("FORGED") && !out.stderr.contains("FORGED"),
                "{}: {}\n{}",
                agent.workflow,
                out.stdout,
                out.stderr
            );
        }
        for agent in &agents {
            let out = agent.run(&["audit"]);
            assert!(!out.stdout.contains("FORGED"), "{}", out.stdout);
            if out.code == 1 && out.stdout.contains("main moved outside the workflow") {
                false_alarms += 1;
                continue;
            }
            assert_eq!(
                out.code, 0,
                "audit {}: {}\n{}",
                agent.workflow, out.stdout, out.stderr
            );
        }
        seen = ci_on_each_push(&server, &origin, &seen, &mut ci_jobs);
    }

    // One of the PRs that write the same file landed; the other conflicted and halted.
    let halted: Vec<&Agent> = agents
        .iter()
        .filter(|agent| agent.state() == "HALTED")
        .collect();
    assert_eq!(halted.len(), 1, "one conflicted PR");
    let halted = halted[0];
    assert!(["b", "c"].contains(&halted.workflow), "{}", halted.workflow);
    // A human resolves it on main as the README says ("resolve it on the PR branch or on
    // main, then `git orchestrate resume`"): main brought up to the server's, the PR branch
    // merged into it, the conflict resolved, committed; `resume` (signed, as the config
    // requires) lands it through the workflow and the hook.
    let human = halted.repo;
    let branch = if halted.workflow == "b" {
        "feat/two"
    } else {
        "feat/three"
    };
    human.git(&["checkout", "--quiet", "main"]);
    human.git(&["pull", "--quiet", "--ff-only", "origin", "main"]);
    let (clean, _) = human.git_try(&["merge", "--no-ff", "--no-edit", branch]);
    assert!(!clean, "the merge conflicts");
    human.write("same.txt", "two\nthree\n");
    human.git(&["add", "same.txt"]);
    human.git(&["commit", "--quiet", "--no-edit"]);
    let resolution = human.git(&["rev-parse", "main"]).trim().to_string();
    let out = human.human(&[
        "--workflow",
        halted.workflow,
        "resume",
        "--sign-key",
        alice_key,
    ]);
    assert_eq!(out.code, 0, "resume: {}\n{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("hook declined"), "{}", out.stderr);
    assert_eq!(halted.state(), "INITIALIZING");
    assert_eq!(server.rev(&origin, "refs/heads/main"), Some(resolution));
    seen = ci_on_each_push(&server, &origin, &seen, &mut ci_jobs);

    // Each agent's next `get-task` (the briefing for the next PR, with the PRs taken) brings
    // main here up to the server's: from then on every audit is clean.
    for agent in agents.iter().filter(|agent| agent.work == Work::Tdd) {
        agent.run(&["get-task"]).expect(0);
    }
    for agent in &agents {
        let out = agent.run(&["audit"]);
        assert_eq!(
            out.code, 0,
            "audit {} after its next get-task: {}\n{}",
            agent.workflow, out.stdout, out.stderr
        );
    }
    assert_eq!(pushes_refused, 0, "the hook refused no honest push");

    // Every PR and the ticket on the server's main exactly once.
    let line = server.main_line(&origin);
    let merges: Vec<&String> = line.iter().take_while(|c| **c != base).collect();
    assert_eq!(
        merges.len(),
        5,
        "four merges and the ticket's on the server's main: {line:?}"
    );
    let subjects = origin.git(&[
        "--git-dir",
        bare,
        "log",
        "--first-parent",
        "--format=%s",
        &format!("{base}..main"),
    ]);
    let mut subjects: Vec<&str> = subjects.lines().collect();
    subjects.sort_unstable();
    assert_eq!(
        subjects,
        [
            "Merge branch 'feat/four'",
            "Merge branch 'feat/one'",
            "Merge branch 'feat/three'",
            "Merge branch 'feat/two'",
            "Merge branch 'ticket/hello'",
        ]
    );
    // The hook judged every merge: its verdict is the server's note on each.
    for merge in &merges {
        let (noted, verdict) = origin.git_try(&[
            "--git-dir",
            bare,
            "notes",
            "--ref",
            "orchestrator-attest",
            "show",
            merge,
        ]);
        assert!(noted, "the server's verdict on {merge}");
        assert!(!verdict.contains("FORGED"), "{verdict}");
    }
    let merged = server.rev(&origin, "refs/heads/main").expect("main");
    assert_eq!(merged, seen);

    // A human commits a gate change on main. `git daemon` authenticates no one: the
    // human's push goes over the local transport with REMOTE_USER set, as an HTTP server
    // sets it for its authenticated user (docs/config.md, `[attest] humans`).
    let human = TestRepo::clone_of(&server.bare);
    human.write(
        ".orchestrate.toml",
        &config.replacen("timeout = \"30s\"", "timeout = \"60s\"", 1),
    );
    human.commit_all("gates: a longer preflight timeout");
    let gate_change = human.git(&["rev-parse", "main"]).trim().to_string();
    // Unlisted, the same push is refused: the hook is live for every push above.
    let unlisted = human.git_run(&["push", "--quiet", bare, "main"]);
    assert_ne!(
        unlisted.code, 0,
        "an unlisted push of main: {}",
        unlisted.stderr
    );
    assert_eq!(server.rev(&origin, "refs/heads/main"), Some(merged.clone()));
    let pushed = Run::from(
        human
            .command("git", ["push", "--quiet", bare, "main"])
            .env("REMOTE_USER", "alice")
            .stdin(Stdio::null())
            .output()
            .expect("git push"),
    );
    assert_eq!(pushed.code, 0, "the listed human's push: {}", pushed.stderr);
    // Before a repin accounts for it, the CI job fails main.
    let red = github_job(&server, &merged, &gate_change).expect(1);
    assert!(red.log.contains("-- Attest: exit 1"), "{}", red.log);
    ci_jobs += 1;

    // The human repins, signed, in clone A (its workflow is between PRs), and shares the
    // chain with `sync`: `repin` writes only here, and `sync` is how a chain reaches the
    // remote (docs/sharing.md).
    a.git(&["fetch", "--quiet", "origin"]);
    a.git(&["update-ref", "refs/heads/main", &gate_change]);
    a.human(&["--workflow", "a", "repin", "--sign-key", alice_key])
        .expect(0);
    a.run(&["--workflow", "a", "sync"]).expect(0);
    // The job run again on the push of the gate change passes now, and so does one over
    // everything since the base.
    github_job(&server, &merged, &gate_change).expect(0);
    let ci = github_job(&server, &base, &gate_change).expect(0);
    ci_jobs += 2;
    let verdicts = ci.verdicts.expect("verdicts");
    let verdicts = verdicts["verdicts"].as_array().expect("verdicts");
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    assert!(verdicts.iter().all(|v| v["passed"] == true), "{verdicts:?}");

    // No claim left: here, and on the server.
    let claims = origin.git(&[
        "--git-dir",
        bare,
        "for-each-ref",
        "--format=%(refname)",
        "refs/orchestrator/claims/",
    ]);
    assert_eq!(claims, "", "no claim on the server");
    // `claim list` shows the remote's claims as the product's own fetch last brought them
    // (a plain `git fetch` leaves them, docs/sharing.md): each agent's `get-task` after the
    // merges fetched them.
    for repo in [&a, &b, &c] {
        let out = repo.run(&["claim", "list", "--json"]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert_eq!(out.json()["claims"], json!([]), "{}", out.stdout);
    }
    for repo in [&a, &b, &c, &d] {
        audit_all(repo, "at the end");
    }

    // The board agrees with the remote: every workflow between PRs (the ticket done), its
    // tip the server's, no PR claimed and none left free.
    let board = a.run(&["board", "--json"]).expect(0).json();
    let rows = board["workflows"].as_array().expect("rows");
    let mut names: Vec<&str> = rows.iter().filter_map(|r| r["workflow"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c", "t", "w"], "{board}");
    for row in rows {
        let name = row["workflow"].as_str().unwrap_or_default();
        let done = if name == "t" {
            "TICKET_DONE"
        } else {
            "INITIALIZING"
        };
        assert_eq!(row["state"], done, "{row}");
        assert_eq!(row["claim"], json!(null), "{row}");
        assert_eq!(
            row["remote_tip"].as_str(),
            server
                .rev(&a, &format!("refs/orchestrator/workflows/{name}"))
                .as_deref(),
            "{row}"
        );
    }
    assert_eq!(board["unclaimed"], json!([]), "{board}");
    let main_pushes = origin
        .git(&[
            "--git-dir",
            bare,
            "reflog",
            "show",
            "--format=%H",
            "refs/heads/main",
        ])
        .lines()
        .count();
    eprintln!(
        "team: 4 agents + 1 ticket, {rounds} round(s) of landings ({landings_run} landing \
         command(s)), {remerged} merge(s) made again after a lost race, {pushes_refused} \
         honest push(es) refused, {main_pushes} push(es) of main accepted by the server \
         (the first push, 4 landings by get-task and complete-ticket, the conflict's resolution \
         landed by resume, the gate change), 1 \
         unlisted push refused as it must be, {false_alarms} false \"moved outside the \
         workflow\" warning(s), 1 human gate change + signed repin, {ci_jobs} CI job(s) run as \
         the template runs them, wall time {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
