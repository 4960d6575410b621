//! `git orchestrate board` (docs/worktrees.md, "The board"): every workflow here and on the
//! remote as last fetched, claims, worktrees and the free PRs; read-only and offline; what a
//! remote sends is shown, never trusted.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{PLAN, Run, TestRepo, one_task_plan};

/// The commits' time in these tests (support.rs fixes it), and the board's clock: ten
/// minutes later.
const COMMITTED: i64 = 1_767_225_600;
const NOW: i64 = COMMITTED + 600;

const MASTER_PLAN: &str = "# Plan\n## PR 1: feat: Add numbers\n## PR 2: feat: Multiply\n\
                           ## PR 3: feat: Divide [DONE] abc1234\n## PR 4: feat: Subtract\n";

/// `git-orchestrate ARGS` at `dir`, with the claims' clock at [`NOW`] and a fixed user.
fn at(repo: &TestRepo, dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let mut cmd = repo.command(crate::support::BIN, args);
    cmd.current_dir(dir)
        .env("GIT_ORCHESTRATE_NOW", NOW.to_string())
        .env("USER", "tester")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn git-orchestrate");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("write stdin");
    drop(input);
    Run::from(child.wait_with_output().expect("wait"))
}

fn board(repo: &TestRepo, args: &[&str]) -> Run {
    let mut all = vec!["board"];
    all.extend_from_slice(args);
    at(repo, &repo.path, &all, None)
}

/// Clone A (workflow `main` at step 1.1 of PR 1, claimed; workflow `w1` in a linked worktree
/// with an untracked file) and clone B (workflow `bee`, PR 2 planned and claimed), sharing a
/// bare remote; A has fetched what B pushed.
struct Scene {
    a: TestRepo,
    b: TestRepo,
    worktree: PathBuf,
    bare: PathBuf,
    _remote: tempfile::TempDir,
    _worktrees: tempfile::TempDir,
}

fn scene() -> Scene {
    let a = TestRepo::new();
    a.write("docs/plan.md", MASTER_PLAN);
    a.commit_all("the master plan");
    let (remote, bare) = a.share();
    at(&a, &a.path, &["init"], None).expect(0);
    at(
        &a,
        &a.path,
        &["submit-work", "-s", "plan", "--plan", "-"],
        Some(PLAN),
    )
    .expect(0);
    at(&a, &a.path, &["get-task"], None).expect(0);
    let worktrees = tempfile::tempdir().unwrap();
    let worktree = worktrees.path().canonicalize().unwrap().join("w1");
    at(
        &a,
        &a.path,
        &["worktree", "add", "w1", &worktree.display().to_string()],
        None,
    )
    .expect(0);
    std::fs::write(worktree.join("notes.txt"), "not committed\n").unwrap();

    let b = TestRepo::clone_of(&bare);
    at(&b, &b.path, &["init"], None).expect(0);
    let plan = one_task_plan("feat: Multiply", "mul.sh");
    at(
        &b,
        &b.path,
        &[
            "--workflow",
            "bee",
            "submit-work",
            "-s",
            "plan",
            "--plan",
            "-",
        ],
        Some(&plan),
    )
    .expect(0);
    a.git(&["fetch", "--quiet", "origin"]);
    Scene {
        a,
        b,
        worktree,
        bare,
        _remote: remote,
        _worktrees: worktrees,
    }
}

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(&["rev-parse", name]).trim().to_string()
}

#[test]
fn the_board_shows_every_workflow_its_claim_its_worktree_and_the_free_prs() {
    let s = scene();
    let out = board(&s.a, &["--json"]);
    out.expect(0);
    let report = out.json();
    let names: Vec<&str> = report["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workflow"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bee", "main", "w1"]);
    assert_eq!(report["remote"], "origin");
    assert_eq!(report["now"], NOW);
    assert_eq!(
        report["unclaimed"],
        json!([{"pr": "pr-4-feat-subtract", "heading": "PR 4: feat: Subtract"}]),
        "PR 1 and 2 are claimed, PR 3 is done"
    );

    // The whole row of `main`: here and on the remote (the plan's acceptance pushed it).
    let main = &report["workflows"][1];
    let claim = &main["claim"];
    let tip = rev(&s.a, "refs/orchestrator/workflows/main");
    assert_eq!(
        main,
        &json!({
            "workflow": "main",
            "local_tip": tip,
            "remote_tip": rev(&s.a, "refs/orchestrator/remotes/origin/workflows/main"),
            "shown": "local",
            "error": null,
            "kind": "tdd",
            "state": "EXECUTING_TDD",
            "pr": "pr-1-feat-add-numbers",
            "pr_title": "feat: Add numbers",
            "branch": "feat/add-numbers",
            "step": {"id": "1.1", "task": "add", "type": "RED", "description": "test add"},
            "subtask": null,
            "debugging_attempt": 0,
            "progress": {"done": 0, "total": 5},
            "claim": {
                "slug": "pr-1-feat-add-numbers",
                "workflow": "main",
                "host": claim["host"],
                "user": "tester",
                "since": NOW,
                "expires": NOW + 7200,
                "nonce": claim["nonce"],
                "source": "origin",
                "age_s": 0,
                "expired": false
            },
            "last_activity": COMMITTED,
            "behind_main": 0,
            "worktree": {
                "path": s.a.path,
                "primary": true,
                "branch": "feat/add-numbers",
                "uncommitted": 0,
                "unpushed": 0
            },
            // Every commit at one time (support.rs fixes it): no time passed.
            "ledger": {
                "wall_seconds_total": 0,
                "steps": [
                    {"name": "INITIALIZING", "seconds": 0},
                    {"name": "CREATING_BRANCH", "seconds": 0}
                ],
                "failed_attempts": 0,
                "turns": null,
                "turns_reporting": null,
                "tokens": null,
                "cost_usd": null,
                "prs": [{
                    "plan_commit": rev(&s.a, "refs/orchestrator/workflows/main~1"),
                    "started": COMMITTED,
                    "wall_seconds_total": 0,
                    "steps": [
                        {"name": "INITIALIZING", "seconds": 0},
                        {"name": "CREATING_BRANCH", "seconds": 0}
                    ],
                    "failed_attempts": 0,
                    "turns": null,
                    "turns_reporting": null,
                    "tokens": null,
                    "cost_usd": null
                }]
            },
            "gate": null
        })
    );

    // `bee` is only on the remote, as last fetched: its claim is the remote's.
    let bee = &report["workflows"][0];
    assert_eq!(bee["local_tip"], json!(null));
    assert_eq!(bee["shown"], "remote");
    assert_eq!(bee["state"], "CREATING_BRANCH");
    assert_eq!(bee["pr"], "pr-2-feat-multiply");
    assert_eq!(bee["claim"]["workflow"], "bee");
    assert_eq!(bee["claim"]["source"], "origin");
    assert_eq!(bee["worktree"], json!(null));

    // `w1` has no plan, and its worktree an untracked file.
    let w1 = &report["workflows"][2];
    assert_eq!(w1["state"], "INITIALIZING");
    assert_eq!(w1["claim"], json!(null));
    assert_eq!(w1["worktree"]["path"], json!(s.worktree));
    assert_eq!(w1["worktree"]["uncommitted"], 1);
    assert_eq!(w1["worktree"]["primary"], false);

    // For people: one line per workflow, the dirty worktree flagged, the free PR listed.
    let text = board(&s.a, &[]);
    text.expect(0)
        .says("board: 3 workflow(s) here and on origin as last fetched; main branch main\n")
        .says("bee (remote)")
        .says("EXECUTING_TDD")
        .says("pr-1-feat-add-numbers 0/5  1.1 RED  tester@")
        .says(&format!("{} DIRTY 1", s.worktree.display()))
        .says("unclaimed:\n  pr-4-feat-subtract  PR 4: feat: Subtract\n");
    let _ = (&s.b, &s.bare);
}

/// Every ref and reflog of the repository, to compare before and after.
fn refs_and_logs(repo: &TestRepo) -> String {
    let mut out = repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
    let mut logs = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    walk(&repo.path.join(".git/logs"), &mut logs);
    logs.sort();
    for (path, content) in logs {
        out.push_str(&format!(
            "{} {}\n",
            path.display(),
            String::from_utf8_lossy(&content).len()
        ));
    }
    out
}

#[test]
fn the_board_changes_nothing_and_needs_no_network() {
    let s = scene();
    // Nowhere to reach: the board reads what was last fetched.
    s.a.git(&["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    let before = refs_and_logs(&s.a);
    let packed = std::fs::read(s.a.path.join(".git/packed-refs")).ok();
    board(&s.a, &[]).expect(0).says("bee (remote)");
    board(&s.a, &["--json"]).expect(0);
    board(&s.a, &["--remote", "origin"]).expect(0);
    assert_eq!(refs_and_logs(&s.a), before);
    assert_eq!(
        std::fs::read(s.a.path.join(".git/packed-refs")).ok(),
        packed
    );

    // An unknown remote is bad input, and says which there are.
    let out = board(&s.a, &["--remote", "nope"]);
    out.expect(2);
    assert!(
        out.stderr.contains("there is no remote \"nope\""),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("origin"), "{}", out.stderr);
}

#[test]
fn hostile_data_from_the_remote_is_shown_safely() {
    let s = scene();
    let bare = s.bare.display().to_string();
    let b = &s.b;
    // A workflow ref on a blob; one whose name and title carry terminal escapes and a
    // right-to-left override; a claim ref that holds no claim.
    let junk = b.git_with_stdin(&["hash-object", "-w", "--stdin"], b"not a commit");
    let junk = junk.trim();
    let state = b.git(&["show", "refs/orchestrator/workflows/bee:state.json"]);
    // JSON-escaped in state.json, as serde writes any title.
    let evil_state = state.replace(
        "feat: Multiply",
        "feat: \\u001b[31mred\\u0007\\nline\u{202e}txt",
    );
    assert_ne!(evil_state, state, "the title is in state.json");
    let blob = b.git_with_stdin(&["hash-object", "-w", "--stdin"], evil_state.as_bytes());
    // The plan itself as it was: the summary in state.json describes it, so it is shown.
    let plan = rev(b, "refs/orchestrator/workflows/bee:pr.json");
    let tree = b.git_with_stdin(
        &["mktree"],
        format!(
            "100644 blob {plan}\tpr.json\n100644 blob {}\tstate.json\n",
            blob.trim()
        )
        .as_bytes(),
    );
    let commit = b.git(&["commit-tree", tree.trim(), "-m", "hostile"]);
    let main_commit = rev(b, "main");
    b.git(&[
        "push",
        "--quiet",
        &bare,
        &format!("{junk}:refs/orchestrator/workflows/junk"),
        &format!(
            "{}:refs/orchestrator/workflows/evil\u{202e}name",
            commit.trim()
        ),
        &format!("{main_commit}:refs/orchestrator/claims/pr-4-feat-subtract"),
    ]);
    s.a.git(&["fetch", "--quiet", "origin"]);

    let out = board(&s.a, &[]);
    out.expect(0);
    let text = &out.stdout;
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'));
    out.says("evil\\u{202e}name (remote)")
        .says("junk (remote)")
        .says("UNREADABLE")
        .says("junk: the remote copy cannot be read")
        // A claim that is no claim takes nothing: PR 4 is still free.
        .says("unclaimed:\n  pr-4-feat-subtract");
    assert!(
        out.stdout
            .contains("WARNING: the claim ref for PR pr-4-feat-subtract (origin, "),
        "{}",
        out.stdout
    );

    let json = board(&s.a, &["--json"]);
    json.expect(0);
    let report = json.json();
    let rows = report["workflows"].as_array().unwrap();
    let evil = rows
        .iter()
        .find(|r| r["workflow"] == "evil\u{202e}name")
        .expect("the evil row");
    assert_eq!(
        evil["pr_title"],
        "feat: \u{1b}[31mred\u{7}\nline\u{202e}txt"
    );
    let junk_row = rows.iter().find(|r| r["workflow"] == "junk").unwrap();
    assert_eq!(junk_row["state"], json!(null));
    assert!(junk_row["error"].as_str().unwrap().contains("junk"));
}

/// Run inside a linked worktree, the board finds the primary worktree where it is (not under
/// the git directory) and looks at it like any other.
#[test]
fn the_board_in_a_linked_worktree_shows_the_primary_worktree_right() {
    let s = scene();
    let out = at(&s.a, &s.worktree, &["board", "--json"], None);
    out.expect(0);
    let report = out.json();
    assert_eq!(report["warnings"], json!([]), "{report}");
    let rows = report["workflows"].as_array().unwrap();
    let main = rows.iter().find(|r| r["workflow"] == "main").unwrap();
    assert_eq!(main["worktree"]["path"], json!(s.a.path));
    assert_eq!(main["worktree"]["primary"], true);
    assert_eq!(main["worktree"]["uncommitted"], 0);
    let w1 = rows.iter().find(|r| r["workflow"] == "w1").unwrap();
    assert_eq!(w1["worktree"]["path"], json!(s.worktree));
    assert_eq!(w1["worktree"]["uncommitted"], 1);
    let text = at(&s.a, &s.worktree, &["board"], None);
    text.expect(0);
    assert!(!text.stdout.contains("WARNING"), "{}", text.stdout);
    assert!(!text.stdout.contains("worktrees/"), "{}", text.stdout);
}

/// A PR merged through the remote by another clone is `[DONE]` on the remote's main (as last
/// fetched) before this clone's main has it: the board does not list it as free.
#[test]
fn the_board_reads_the_master_plan_from_the_remotes_main_when_it_is_ahead() {
    let s = scene();
    board(&s.a, &["--json"]).expect(0);
    s.b.git(&["checkout", "--quiet", "main"]);
    s.b.git(&["pull", "--quiet", "--ff-only", "origin", "main"]);
    s.b.write(
        "docs/plan.md",
        &MASTER_PLAN.replace("feat: Subtract", "feat: Subtract [DONE] def5678"),
    );
    s.b.git(&["commit", "--quiet", "-am", "PR 4 merged"]);
    s.b.git(&["push", "--quiet", "origin", "main"]);
    s.a.git(&["fetch", "--quiet", "origin"]);
    assert_ne!(
        rev(&s.a, "main"),
        rev(&s.a, "origin/main"),
        "A's main is behind"
    );
    let report = board(&s.a, &["--json"]).expect(0).json();
    assert_eq!(report["unclaimed"], json!([]), "{report}");
    // This clone's main ahead of the remote's: its own master plan is read.
    s.a.git(&[
        "update-ref",
        "refs/remotes/origin/main",
        &rev(&s.a, "main~1"),
    ]);
    let report = board(&s.a, &["--json"]).expect(0).json();
    assert_eq!(
        report["unclaimed"],
        json!([{"pr": "pr-4-feat-subtract", "heading": "PR 4: feat: Subtract"}])
    );
}

/// What git said when a worktree cannot be looked at keeps its line breaks.
#[test]
fn a_warning_prints_real_newlines() {
    let s = scene();
    let git_dir = s.a.git(&[
        "-C",
        &s.worktree.display().to_string(),
        "rev-parse",
        "--git-dir",
    ]);
    std::fs::write(PathBuf::from(git_dir.trim()).join("index"), "not an index").unwrap();
    let out = board(&s.a, &[]);
    out.expect(0);
    let warning = out
        .stdout
        .split("WARNING: ")
        .nth(1)
        .unwrap_or_else(|| panic!("a warning:\n{}", out.stdout));
    assert!(warning.contains("cannot be looked at"), "{warning}");
    assert!(!warning.contains("\\n"), "{warning}");
    assert!(
        warning.trim_end().lines().count() > 1,
        "git's answer keeps its lines:\n{warning}"
    );
}

/// `git-orchestrate ARGS` with its commits made at `minute` minutes past [`COMMITTED`].
fn at_minute(repo: &TestRepo, minute: i64, args: &[&str], stdin: Option<&str>) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let date = format!("2026-01-01T00:{minute:02}:00Z");
    let mut cmd = repo.command(crate::support::BIN, args);
    cmd.env("GIT_COMMITTER_DATE", &date)
        .env("GIT_AUTHOR_DATE", &date)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn git-orchestrate");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("write stdin");
    drop(input);
    Run::from(child.wait_with_output().expect("wait"))
}

/// A workflow driven by hand, one command a minute or so: the ledger has its wall time per
/// step and in all from its transitions' times, its debugging attempt, and no turns, tokens
/// or cost (no `run` drove it): null, never 0, and "not reported" on the page.
#[test]
fn the_ledger_of_a_workflow_driven_by_hand_has_its_times_and_no_turns() {
    let repo = TestRepo::new();
    let plan = one_task_plan("feat: Add numbers", "add.sh");
    at_minute(
        &repo,
        1,
        &["submit-work", "-s", "plan", "--plan", "-"],
        Some(&plan),
    )
    .expect(0);
    at_minute(&repo, 3, &["get-task"], None).expect(0);
    at_minute(
        &repo,
        6,
        &[
            "submit-work",
            "-s",
            "red",
            "--test-command",
            "test -e add.sh",
        ],
        None,
    )
    .expect(3);
    // The wrong reason: debugging attempt 1; the next run of the test awaits its analysis
    // again, in the same attempt.
    at_minute(
        &repo,
        10,
        &[
            "submit-work",
            "-s",
            "wrong",
            "--analysis-decision",
            "FAILURE",
        ],
        None,
    )
    .expect(1);
    at_minute(
        &repo,
        15,
        &[
            "submit-work",
            "-s",
            "again",
            "--test-command",
            "test -e add.sh",
        ],
        None,
    )
    .expect(3);
    let report = board(&repo, &["--json"]).expect(0).json();
    let ledger = &report["workflows"][0]["ledger"];
    let log = repo.run(&["log"]).expect(0).stdout.clone();
    let plan_commit = rev(&repo, "refs/orchestrator/workflows/main~4");
    assert_eq!(
        ledger,
        &json!({
            "wall_seconds_total": 14 * 60,
            "steps": [
                {"name": "INITIALIZING", "seconds": 0},
                {"name": "CREATING_BRANCH", "seconds": 120},
                {"name": "1.1", "seconds": 720}
            ],
            "failed_attempts": 1,
            "turns": null,
            "turns_reporting": null,
            "tokens": null,
            "cost_usd": null,
            "prs": [{
                "plan_commit": plan_commit,
                "started": COMMITTED + 60,
                "wall_seconds_total": 14 * 60,
                "steps": [
                    {"name": "INITIALIZING", "seconds": 0},
                    {"name": "CREATING_BRANCH", "seconds": 120},
                    {"name": "1.1", "seconds": 720}
                ],
                "failed_attempts": 1,
                "turns": null,
                "turns_reporting": null,
                "tokens": null,
                "cost_usd": null
            }]
        }),
        "{log}"
    );
}

/// The table shows no ledger and reads no workflow's history for one: with the chain's
/// first commit gone, the table is whole and says nothing of it, while `--json`, whose
/// ledger walks the chain, says the ledger cannot be read.
#[test]
fn the_table_reads_no_history_and_json_reads_the_ledgers() {
    let repo = TestRepo::new();
    let plan = one_task_plan("feat: Add numbers", "add.sh");
    repo.run_with_stdin(&["submit-work", "-s", "plan", "--plan", "-"], &plan)
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    let table = board(&repo, &[]).expect(0).stdout.clone();
    let chain = repo.git(&["rev-list", "refs/orchestrator/workflows/main"]);
    let root = chain.lines().last().expect("a root").to_string();
    assert_eq!(chain.lines().count(), 3, "{chain}");
    let object = repo
        .path
        .join(".git/objects")
        .join(&root[..2])
        .join(&root[2..]);
    std::fs::remove_file(&object).expect("the root commit is a loose object");
    assert_eq!(board(&repo, &[]).expect(0).stdout, table);
    let report = board(&repo, &["--json"]).expect(0).json();
    let warnings = report["warnings"].as_array().expect("warnings");
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .is_some_and(|w| w.starts_with("the ledger of workflow main cannot be read"))),
        "{warnings:?}"
    );
    assert_eq!(report["workflows"][0]["ledger"], json!(null));
    assert_eq!(report["workflows"][0]["state"], json!("EXECUTING_TDD"));
}

/// A halt waits for `resume`: the board gives the exact command, and where the PR's pinned
/// configuration requires a signed answer, the commands that sign it (docs/humans.md).
#[test]
fn a_halt_shows_the_command_that_answers_it_and_how_to_sign_it_where_required() {
    for (config, required) in [
        (crate::support::CONFIG.to_string(), false),
        (
            format!(
                "{}\n[human]\nrequire = \"signature\"\n",
                crate::support::CONFIG
            ),
            true,
        ),
    ] {
        let repo = TestRepo::with_config(&config);
        repo.submit_plan(PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.run(&[
            "submit-work",
            "--summary",
            "stuck",
            "--contradiction",
            "the plan contradicts the tests",
        ])
        .expect(10);
        let out = board(&repo, &["--json"]);
        out.expect(0);
        let gate = &out.json()["workflows"][0]["gate"];
        let signing = if required {
            json!({
                "answer": "resume",
                "command": "git orchestrate --workflow main resume",
                "signature_required": true,
                "sign_command": "git orchestrate --workflow main resume --sign-key KEY",
                "sign_elsewhere": [
                    "git orchestrate --workflow main resume --print-payload > answer",
                    "ssh-keygen -Y sign -n git-orchestrate -f KEY answer",
                    "git orchestrate --workflow main resume --signature answer.sig"
                ]
            })
        } else {
            json!({
                "answer": "resume",
                "command": "git orchestrate --workflow main resume",
                "signature_required": false,
                "sign_command": null,
                "sign_elsewhere": []
            })
        };
        assert_eq!(gate, &signing);
        let text = board(&repo, &[]);
        text.expect(0)
            .says("  main: waits for a human: git orchestrate --workflow main resume");
        let signed = "  main: signed (KEY: your SSH key): git orchestrate --workflow main resume --sign-key KEY";
        assert_eq!(text.stdout.contains(signed), required, "{}", text.stdout);
    }
}

/// `board --timeline NAME` of a workflow nobody has: a clear error, nothing changed.
#[test]
fn the_timeline_of_an_unknown_workflow_is_refused() {
    let repo = TestRepo::new();
    let out = board(&repo, &["--timeline", "nosuch"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains("there is no workflow \"nosuch\" here or on the remote as last fetched"),
        "{}",
        out.stderr
    );
}

/// The timeline of a workflow driven by hand: every transition in order, each test run's
/// verdict, and the debugging attempt a failure starts, as text and as JSON.
#[test]
fn the_timeline_lists_each_transition_and_its_test_verdicts() {
    let repo = TestRepo::at_first_step();
    repo.submit_test("sh test_add.sh", Some("FAIL")).expect(3);
    let out = board(&repo, &["--timeline", "main", "--json"]);
    out.expect(0);
    let j = out.json();
    let events: Vec<&str> = j["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["event"].as_str().expect("event"))
        .collect();
    assert_eq!(events, ["create", "plan", "branch", "test"]);
    assert_eq!(j["total"], 4);
    assert_eq!(j["truncated"], false);
    let test = &j["entries"][3]["test"];
    assert_eq!(test["kind"], "RED");
    assert_eq!(test["expectation"], "FAIL");
    assert_eq!(test["exit"], "exit 1");
    assert_eq!(test["met"], true);
    let text = board(&repo, &["--timeline", "main"]);
    text.expect(0)
        .says("timeline of workflow main (local copy): 4 transition(s)")
        .says("    RED run, expected FAIL: `sh test_add.sh` exit 1 (as expected)");
}

/// One line of a Claude Code transcript: an assistant entry (one content block of message
/// `id`) with the usage Claude Code writes on each of the message's entries.
fn assistant_line(id: &str, block: &str, usage: Option<(u64, u64, u64, u64)>) -> String {
    let mut message = json!({
        "id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": block}], "stop_reason": null,
        "stop_sequence": null
    });
    if let Some((input, created, read, output)) = usage {
        message["usage"] = json!({
            "input_tokens": input, "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": created, "ephemeral_1h_input_tokens": 0},
            "output_tokens": output, "service_tier": "standard"
        });
    }
    json!({
        "parentUuid": "p", "isSidechain": false, "userType": "external", "cwd": "/w",
        "sessionId": "s-1", "version": "2.0.14", "gitBranch": "main", "message": message,
        "requestId": "req_1", "type": "assistant", "uuid": format!("u-{id}-{block}"),
        "timestamp": "2026-01-01T00:00:00.000Z"
    })
    .to_string()
        + "\n"
}

/// Claude Code's Stop hook, as it runs it: the real `agent-hook claude stop` with its JSON
/// on stdin, no `run` around it.
fn stop_hook(repo: &TestRepo, transcript: &Path) -> Run {
    stop_hook_of(repo, "s-1", transcript)
}

/// [`stop_hook`] of agent session `session`.
fn stop_hook_of(repo: &TestRepo, session: &str, transcript: &Path) -> Run {
    stop_hook_with(repo, session, transcript, &[])
}

/// [`stop_hook_of`] with `env` set for the hook.
fn stop_hook_with(repo: &TestRepo, session: &str, transcript: &Path, env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    let input = json!({
        "session_id": session, "transcript_path": transcript, "cwd": repo.path,
        "hook_event_name": "Stop", "permission_mode": "default", "stop_hook_active": false,
        "last_assistant_message": "done"
    });
    let mut child = repo
        .command(crate::support::BIN, ["agent-hook", "claude", "stop"])
        .current_dir(&repo.path)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the hook");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(input.to_string().as_bytes())
        .expect("write the hook input");
    drop(stdin);
    Run::from(child.wait_with_output().expect("wait"))
}

fn ledger_figures(repo: &TestRepo) -> serde_json::Value {
    let out = board(repo, &["--json"]);
    out.expect(0);
    let ledger = &out.json()["workflows"][0]["ledger"];
    json!({
        "turns": ledger["turns"], "turns_reporting": ledger["turns_reporting"],
        "tokens": ledger["tokens"], "cost_usd": ledger["cost_usd"]
    })
}

/// An agent run by hand: at each stop, the Stop hook reads what the transcript gained since
/// the last one and records it as `run` records a turn; the ledger shows the tokens, the cost
/// (not in a transcript) stays "not reported", and what cannot be read is not guessed.
#[test]
fn the_ledger_counts_the_tokens_an_agent_run_by_hand_used_from_its_transcript() {
    let repo = TestRepo::at_first_step();
    let dir = tempfile::tempdir().expect("temp dir");
    let transcript = dir.path().join("s-1.jsonl");
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}}).to_string();
    // One message in two entries (its usage twice), then one more; a line being written.
    let first = [
        user.clone() + "\n",
        assistant_line("msg_a", "thinking", Some((3, 200, 10_000, 40))),
        assistant_line("msg_a", "text", Some((3, 200, 10_000, 40))),
        assistant_line("msg_b", "text", Some((1, 0, 10_200, 12))),
    ]
    .concat();
    let half = &assistant_line("msg_c", "text", Some((1, 0, 0, 5)))[..40];
    std::fs::write(&transcript, format!("{first}{half}")).expect("write the transcript");
    // Under `run`, the hook leaves the tokens to `run`, which reads them from the client.
    for var in ["GIT_ORCHESTRATE_RUN_PROOF", "GIT_ORCHESTRATE_RUN_SESSION"] {
        stop_hook_with(&repo, "under-run", &transcript, &[(var, "fresh")]).expect(0);
    }
    assert_eq!(
        ledger_figures(&repo),
        json!({"turns": null, "turns_reporting": null, "tokens": null, "cost_usd": null})
    );
    stop_hook(&repo, &transcript).expect(0);
    assert_eq!(
        ledger_figures(&repo),
        json!({"turns": 1, "turns_reporting": 1,
               "tokens": {"input": 3 + 200 + 10_000 + 1 + 10_200, "output": 52},
               "cost_usd": null})
    );
    // A stop with nothing new records nothing.
    stop_hook(&repo, &transcript).expect(0);
    assert_eq!(ledger_figures(&repo)["turns"], 1);
    // The line finished, and a message without usage: the next stop counts the new only.
    let rest = &assistant_line("msg_c", "text", Some((1, 0, 0, 5)))[40..];
    let more = format!("{rest}{}", assistant_line("msg_d", "text", None));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .and_then(|mut f| std::io::Write::write_all(&mut f, more.as_bytes()))
        .expect("append");
    stop_hook(&repo, &transcript).expect(0);
    assert_eq!(
        ledger_figures(&repo),
        json!({"turns": 2, "turns_reporting": 2,
               "tokens": {"input": 20_405, "output": 57}, "cost_usd": null})
    );
    let record = repo.git(&["show", "refs/orchestrator/runs/main:turn.json"]);
    let record: serde_json::Value = serde_json::from_str(&record).expect("turn.json");
    assert_eq!(record["session"], "by-hand");
    assert_eq!(record["messages"], 2);
    assert_eq!(
        record["usage"],
        json!({"input_tokens": 1, "output_tokens": 5, "cached_input_tokens": 0, "cost_usd": null})
    );
}

/// A transcript with no usage in it gives a turn whose tokens are "not reported"; a transcript
/// that is not a file, or is hostile, crashes nothing and records nothing; the stop's answer
/// is the same.
#[test]
fn a_transcript_without_usage_or_hostile_is_never_guessed() {
    let repo = TestRepo::at_first_step();
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("garbage.jsonl");
    let mut bytes =
        b"\x00\xff{not json\n[1,2]\n{\"type\":\"assistant\",\"message\":{\"id\":7}}\n".to_vec();
    bytes.extend_from_slice(
        br#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-4,"output_tokens":1e99}}}"#,
    );
    bytes.push(b'\n');
    std::fs::write(&garbage, &bytes).expect("write");
    let reference = stop_hook(&repo, &garbage);
    reference.expect(0);
    assert_eq!(reference.json()["decision"], "block");
    // The hostile message counts as a message with no usage: a turn, its tokens not reported.
    assert_eq!(
        ledger_figures(&repo),
        json!({"turns": 1, "turns_reporting": 0, "tokens": null, "cost_usd": null})
    );
    let missing = dir.path().join("missing");
    for (n, path) in [Path::new("/dev/zero"), dir.path(), &missing]
        .into_iter()
        .enumerate()
    {
        let run = stop_hook_of(&repo, &format!("hostile-{n}"), path);
        run.expect(0);
        assert_eq!(run.stdout, reference.stdout, "{}", path.display());
        assert!(
            run.stderr
                .contains("the session's token use is not recorded"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(ledger_figures(&repo)["turns"], 1);
}

/// The run records travel: `sync` pushes this clone's (through the server hook, over a real
/// `git daemon`) and another clone's `sync` adopts them, so its ledger shows the same turns.
#[test]
fn sync_carries_the_run_records_through_the_server_hook_to_another_clone() {
    let a = TestRepo::at_first_step();
    let server = crate::landing::Server::start(&a);
    a.git(&["remote", "add", "origin", &server.url()]);
    a.git_run(&[
        "push",
        "--quiet",
        "--no-verify",
        "origin",
        "main",
        crate::support::REF,
    ])
    .expect(0);
    let dir = tempfile::tempdir().expect("temp dir");
    let transcript = dir.path().join("s-1.jsonl");
    std::fs::write(
        &transcript,
        assistant_line("msg_a", "text", Some((10, 0, 90, 7))),
    )
    .expect("write the transcript");
    stop_hook(&a, &transcript).expect(0);
    let ours = rev(&a, "refs/orchestrator/runs/main");
    a.run(&["sync"]).expect(0);
    assert_eq!(
        server.rev(&a, "refs/orchestrator/runs/main").as_deref(),
        Some(ours.as_str()),
        "the server's hook accepted the run record"
    );

    let b = TestRepo::clone_of(Path::new(&server.url()));
    b.run(&["sync"]).expect(0);
    assert_eq!(rev(&b, "refs/orchestrator/runs/main"), ours);
    let figures = json!({"turns": 1, "turns_reporting": 1,
                         "tokens": {"input": 100, "output": 7}, "cost_usd": null});
    assert_eq!(ledger_figures(&a), figures);
    assert_eq!(ledger_figures(&b), figures);

    // B's turn goes back the same way; A moves forward to it.
    let more = dir.path().join("s-2.jsonl");
    std::fs::write(&more, assistant_line("msg_b", "text", Some((1, 0, 0, 1)))).expect("write");
    stop_hook_of(&b, "s-2", &more).expect(0);
    b.run(&["sync"]).expect(0);
    a.run(&["sync"]).expect(0);
    assert_eq!(
        rev(&a, "refs/orchestrator/runs/main"),
        rev(&b, "refs/orchestrator/runs/main")
    );
    assert_eq!(ledger_figures(&a)["turns"], 2);
}
/// The landing carries the workflow's run record: a turn recorded by the Stop hook, then
/// `get-task` lands the merge through the server hook (over a real `git daemon`), and a
/// fresh clone of the server shows the turn and its tokens, though the landing clone never
/// ran `sync`.
#[test]
fn the_landing_push_carries_the_run_record_to_a_fresh_clone() {
    let repo = crate::oracle::calc();
    let server = crate::landing::Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&[
        "push",
        "--quiet",
        "--no-verify",
        "origin",
        "main",
        crate::support::REF,
    ])
    .expect(0);
    crate::oracle::finalized(&repo);
    let dir = tempfile::tempdir().expect("temp dir");
    let transcript = dir.path().join("s-1.jsonl");
    std::fs::write(
        &transcript,
        assistant_line("msg_a", "text", Some((10, 0, 90, 7))),
    )
    .expect("write the transcript");
    stop_hook(&repo, &transcript).expect(0);
    let runs = "refs/orchestrator/runs/main";
    let ours = rev(&repo, runs);
    assert_eq!(
        server.rev(&repo, runs),
        None,
        "not pushed before the landing"
    );

    crate::oracle::mark_done_and_merge(&repo).expect(0);
    assert_eq!(
        server.rev(&repo, "refs/heads/main"),
        Some(crate::oracle::main_tip(&repo)),
        "landed"
    );
    assert_eq!(
        server.rev(&repo, runs),
        Some(ours.clone()),
        "pushed with it"
    );

    let fresh = TestRepo::clone_of(Path::new(&server.url()));
    fresh.run(&["sync"]).expect(0);
    assert_eq!(rev(&fresh, runs), ours);
    assert_eq!(
        ledger_figures(&fresh),
        json!({"turns": 1, "turns_reporting": 1,
               "tokens": {"input": 100, "output": 7}, "cost_usd": null})
    );
}

/// A ticket whose `ticket.json` cannot be read is shown unreadable, its error naming that
/// file: the kind is read once from the tree, and a record that cannot be read is never
/// called the other kind ("a ticket workflow" to which the TDD commands do not apply).
#[test]
fn a_ticket_that_cannot_be_read_is_unreadable_and_names_its_file() {
    let repo = TestRepo::new();
    let blob = repo.git_with_stdin(&["hash-object", "-w", "--stdin"], b"{not json");
    let tree = repo.git_with_stdin(
        &["mktree"],
        format!("100644 blob {}\tticket.json\n", blob.trim()).as_bytes(),
    );
    let commit = repo.git(&["commit-tree", tree.trim(), "-m", "by hand"]);
    repo.git(&[
        "update-ref",
        "refs/orchestrator/workflows/broken",
        commit.trim(),
    ]);
    let out = board(&repo, &["--json"]);
    out.expect(0);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let rows = report["workflows"].as_array().expect("workflows");
    let row = rows
        .iter()
        .find(|row| row["workflow"] == "broken")
        .expect("the broken workflow is listed");
    assert_eq!(row["kind"], serde_json::Value::Null);
    assert_eq!(
        row["error"],
        json!(format!(
            "cannot read ticket.json of refs/orchestrator/workflows/broken (commit {}): not \
             valid JSON: key must be a string at line 1 column 2",
            commit.trim()
        ))
    );
}
