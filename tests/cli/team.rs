//! The team, end to end (docs/trust.md, docs/worktrees.md, docs/ci.md): over a real `git
//! daemon` on 127.0.0.1 serving a bare repository with the installed server hook, three
//! clones and a linked worktree, each with its own workflow, take the PRs of one master plan
//! and merge them at once; a human commits a gate change on main and repins, signed; the CI
//! job's own fetch and `attest` pass in a fresh clone. No honest push is refused, every PR is
//! merged exactly once, no `audit` says FORGED, no claim is left and `board` agrees with the
//! remote.

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

/// One scripted agent: a workflow driven from `dir`, named by `--workflow` in a clone, or by
/// its worktree's own config in a linked worktree (as `worktree add` records it).
struct Agent<'a> {
    repo: &'a TestRepo,
    dir: PathBuf,
    workflow: &'a str,
    by_flag: bool,
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
        self.run(&["status", "--json"]).expect(0).json()["state"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// From its plan `title` (one task creating `file`) to the master plan marked done: the
    /// next `get-task` merges it. Accepting the plan claims the PR on the remote.
    fn up_to_the_merge(&self, title: &str, file: &str) {
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
        std::fs::write(self.dir.join(file), "made\n").expect("write");
        self.run(&["submit-work", "-s", "green", "--test-command", &test])
            .expect(0);
        self.run(&["checkpoint"]).expect(0);
        self.run(&["get-task"]).expect(0);
        self.run(&["submit-work", "-s", "squashed", "--squash"])
            .expect(0);
        self.run(&["submit-work", "-s", "plan updated", "--mark-done"])
            .expect(0);
    }
}

/// The CI job's own commands on a push of main, as `init --ci` writes them
/// (src/engine/init/ci.rs): a fresh clone (full history), its fetch of the workflows and the
/// two notes refs, then `attest --json --no-note BEFORE..AFTER`.
fn ci_job(server: &Server, before: &str, after: &str) -> Run {
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    ci.git(&[
        "fetch",
        "--quiet",
        "--no-tags",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
        "+refs/notes/orchestrator*:refs/notes/orchestrator*",
    ]);
    ci.run(&[
        "attest",
        "--json",
        "--no-note",
        &format!("{before}..{after}"),
    ])
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

#[test]
fn a_team_of_clones_and_a_worktree_merges_one_plan_through_the_hook_and_ci_passes() {
    let keys = tempfile::tempdir().expect("temp dir");
    let alice = crate::signed::key(keys.path(), "alice");
    let config = format!(
        "{CONFIG}\n[human]\nrequire = \"signature\"\n\n[attest]\nhumans = [\"user:alice\"]\n"
    );
    let origin = TestRepo::with_config(&config);
    origin.write(
        ".orchestrate/allowed_signers",
        &crate::signed::allowed("alice", &alice),
    );
    origin.write("docs/plan.md", FOUR_PRS);
    origin.commit_all("four PRs");
    let server = Server::start(&origin);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let base = origin.git(&["rev-parse", "main"]).trim().to_string();

    let a = TestRepo::clone_of(Path::new(&server.url()));
    let b = TestRepo::clone_of(Path::new(&server.url()));
    let c = TestRepo::clone_of(Path::new(&server.url()));
    let beside = tempfile::tempdir().expect("temp dir");
    let wt = beside.path().canonicalize().expect("canonical").join("w");
    a.run(&["worktree", "add", "w", wt.to_str().expect("UTF-8")])
        .expect(0);
    let agents = [
        Agent {
            repo: &a,
            dir: a.dir().to_path_buf(),
            workflow: "a",
            by_flag: true,
        },
        Agent {
            repo: &b,
            dir: b.dir().to_path_buf(),
            workflow: "b",
            by_flag: true,
        },
        Agent {
            repo: &c,
            dir: c.dir().to_path_buf(),
            workflow: "c",
            by_flag: true,
        },
        Agent {
            repo: &a,
            dir: wt.clone(),
            workflow: "w",
            by_flag: false,
        },
    ];
    let prs = [
        ("feat: One", "one.txt"),
        ("feat: Two", "two.txt"),
        ("feat: Three", "three.txt"),
        ("feat: Four", "four.txt"),
    ];
    for (agent, (title, file)) in agents.iter().zip(prs) {
        agent.up_to_the_merge(title, file);
    }

    // The merges, all at once: each waiting agent's `get-task` a child process of its own.
    let mut rounds = 0;
    let mut pushes_refused = 0;
    let mut remerged = 0;
    let mut false_alarms = 0;
    let mut last_round: Vec<String> = Vec::new();
    loop {
        let waiting: Vec<&Agent> = agents
            .iter()
            .filter(|agent| agent.state() != "INITIALIZING")
            .collect();
        if waiting.is_empty() {
            break;
        }
        rounds += 1;
        assert!(
            rounds <= agents.len(),
            "still unmerged after {} rounds; the last round's get-task runs:\n{}",
            agents.len(),
            last_round.join("\n")
        );
        last_round.clear();
        let children: Vec<_> = waiting
            .iter()
            .map(|agent| {
                agent
                    .command(&["get-task"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start get-task")
            })
            .collect();
        for (agent, child) in waiting.iter().zip(children) {
            let out = Run::from(child.wait_with_output().expect("get-task"));
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
    }
    // Each agent's next `get-task` (the briefing for the next PR, with the PRs taken) brings
    // main here up to the server's: from then on every audit is clean.
    for agent in &agents {
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

    // Every PR on the server's main exactly once.
    let bare = server.bare.to_str().expect("UTF-8");
    let line = server.main_line(&origin);
    let merges: Vec<&String> = line.iter().take_while(|c| **c != base).collect();
    assert_eq!(
        merges.len(),
        4,
        "four merges on the server's main: {line:?}"
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
            "Merge branch 'feat/two'"
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
    ci_job(&server, &base, &merged).expect(0);

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
    ci_job(&server, &merged, &gate_change).expect(1);

    // The human repins, signed, in clone A (its workflow is between PRs), and shares the
    // chain with `sync`: `repin` writes only here, and `sync` is how a chain reaches the
    // remote (docs/sharing.md).
    a.git(&["fetch", "--quiet", "origin"]);
    a.git(&["update-ref", "refs/heads/main", &gate_change]);
    a.human(&[
        "--workflow",
        "a",
        "repin",
        "--sign-key",
        alice.to_str().expect("UTF-8"),
    ])
    .expect(0);
    a.run(&["--workflow", "a", "sync"]).expect(0);
    let ci = ci_job(&server, &base, &gate_change);
    ci.expect(0);
    let verdicts = ci.json();
    let verdicts = verdicts["verdicts"].as_array().expect("verdicts");
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
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
        audit_all(repo, "at the end");
    }

    // The board agrees with the remote: every workflow between PRs, its tip the server's,
    // no PR claimed and none left free.
    let board = a.run(&["board", "--json"]).expect(0).json();
    let rows = board["workflows"].as_array().expect("rows");
    let mut names: Vec<&str> = rows.iter().filter_map(|r| r["workflow"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c", "w"], "{board}");
    for row in rows {
        let name = row["workflow"].as_str().unwrap_or_default();
        assert_eq!(row["state"], "INITIALIZING", "{row}");
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
    eprintln!(
        "team: 4 agents, {rounds} round(s) of get-task, {remerged} merge(s) made again after a \
         lost race, {pushes_refused} refusals, 4 merges, {false_alarms} false \"moved outside the \
         workflow\" warning(s), 1 human gate change + signed repin"
    );
}
