//! The landing carries its own proof (docs/integrity.md, "A landing in flight"): over a
//! real `git daemon` on 127.0.0.1 serving a bare repository with the installed server hook,
//! `get-task` merges a PR itself: the `merge` transition, main and the notes travel in one
//! atomic push the hook accepts, and `attest` of the new main passes in a fresh clone. Kills
//! at each point inside the landing leave no FORGED audit, and the next `get-task` completes
//! or gives up the landing: every merge lands exactly once.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;

use crate::oracle::{CALC_CONFIG, finalized, main_tip, mark_done_and_merge};
use crate::support::*;

/// A `git daemon` serving `remote.git`, a bare repository with the server hook installed
/// by the binary under test; killed when dropped.
pub(crate) struct Server {
    daemon: GitDaemon,
    pub(crate) bare: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    pub(crate) fn start(repo: &TestRepo) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().canonicalize().expect("canonical");
        let bare = base.join("remote.git");
        repo.git(&[
            "init",
            "--quiet",
            "--bare",
            "--initial-branch=main",
            bare.to_str().unwrap(),
        ]);
        repo.run(&["attest", "--install-server-hook", bare.to_str().unwrap()])
            .expect(0);
        Server {
            daemon: GitDaemon::start(repo, &base),
            bare,
            _dir: dir,
        }
    }

    pub(crate) fn url(&self) -> String {
        self.daemon.url("remote.git")
    }

    /// The server's `reference`, if it has it.
    pub(crate) fn rev(&self, repo: &TestRepo, reference: &str) -> Option<String> {
        let (ok, out) = repo.git_try(&[
            "--git-dir",
            self.bare.to_str().unwrap(),
            "rev-parse",
            "--verify",
            "--quiet",
            reference,
        ]);
        ok.then(|| out.trim().to_string())
    }

    /// The first-parent commits of the server's main, newest first.
    pub(crate) fn main_line(&self, repo: &TestRepo) -> Vec<String> {
        repo.git(&[
            "--git-dir",
            self.bare.to_str().unwrap(),
            "rev-list",
            "--first-parent",
            "main",
        ])
        .lines()
        .map(str::to_string)
        .collect()
    }
}

/// The calculator with the server as `origin`, main and the chain pushed to it (the
/// first push of main sets the guarded repository up).
fn shared_calc() -> (TestRepo, Server) {
    let repo = crate::oracle::calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main", REF])
        .expect(0);
    (repo, server)
}

/// `attest` of `commit` in a fresh clone of the server, with the workflows fetched as the
/// CI job fetches them: its JSON verdicts.
fn attest_in_fresh_clone(server: &Server, commit: &str) -> serde_json::Value {
    let fresh = TestRepo::clone_of(Path::new(&server.url()));
    fresh.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = fresh.run(&["attest", "--json", "--no-note", commit]);
    assert_eq!(
        out.code, 0,
        "attest failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    out.json()
}

/// The audit of `repo`'s workflow says nothing is forged (exit 0).
#[track_caller]
fn audit_clean(repo: &TestRepo, when: &str) {
    let out = repo.run(&["audit"]);
    assert_eq!(out.code, 0, "audit {when}:\n{}\n{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("FORGED"), "{when}: {}", out.stdout);
}

/// An honest PR merged by `get-task` itself lands through the hook: the server's main is the
/// merge, its chain the `merge` transition that records it, the hook's verdict is written as
/// the server's note, and `attest` of the new main passes in a fresh clone.
#[test]
fn get_task_lands_an_honest_merge_through_the_server_hook() {
    let (repo, server) = shared_calc();
    let before = main_tip(&repo);
    finalized(&repo);
    let out = mark_done_and_merge(&repo);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(repo.status(), "INITIALIZING", "{}", out.stdout);
    let merge = main_tip(&repo);
    assert_ne!(merge, before, "main moved");
    assert_eq!(server.rev(&repo, "refs/heads/main"), Some(merge.clone()));
    assert_eq!(
        server.rev(&repo, REF),
        repo.tip(),
        "the record went with main"
    );
    assert_eq!(
        repo.git(&["rev-parse", &format!("{REF}~1")]).trim(),
        server.rev(&repo, &format!("{REF}~1")).unwrap()
    );
    let note = server.rev(&repo, "refs/notes/orchestrator-attest");
    assert!(note.is_some(), "the server wrote its verdict");
    assert_eq!(
        server.rev(&repo, "refs/notes/orchestrator"),
        repo.git_try(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "refs/notes/orchestrator"
        ])
        .0
        .then(|| repo
            .git(&["rev-parse", "refs/notes/orchestrator"])
            .trim()
            .to_string()),
        "the notes went with main"
    );
    let verdicts = attest_in_fresh_clone(&server, &merge);
    let v = &verdicts["verdicts"][0];
    assert_eq!(v["kind"], "merge", "{v}");
    assert_eq!(v["passed"], true, "{v}");
    audit_clean(&repo, "after the landing");
    assert!(
        !repo.dir().join(".git/orchestrator/landings/main").exists(),
        "no landing is left in flight"
    );
}

/// Runs `get-task` to stop at `point` inside the landing, kills it there with SIGKILL, and
/// returns once it is gone.
fn kill_at(repo: &TestRepo, point: &str) {
    kill_in(repo, &["get-task"], point);
}

/// Runs the command `args` (as a human: `resume` needs one) to stop at `point` inside the
/// landing, kills it there with SIGKILL, and returns once it is gone.
fn kill_in(repo: &TestRepo, args: &[&str], point: &str) {
    let pause = repo.temp_dir().join(format!("pause-{point}"));
    let _ = std::fs::remove_file(&pause);
    let mut cmd = repo.command(BIN, args);
    if args.contains(&"resume") {
        cmd.env("GIT_ORCHESTRATE_HUMAN", "1");
    }
    let mut child = cmd
        .env("GIT_ORCHESTRATE_PAUSE_AT", point)
        .env("GIT_ORCHESTRATE_PAUSE_FILE", &pause)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start get-task");
    // Waits for the point (or the end: a point never reached is a failure named below).
    loop {
        if std::fs::read_to_string(&pause).is_ok_and(|pid| !pid.is_empty()) {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            use std::io::Read as _;
            let _ = child
                .stderr
                .take()
                .map(|mut e| e.read_to_string(&mut stderr));
            panic!("{args:?} ended ({status}) before reaching {point}: {stderr}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
}

/// The points inside the landing, in order.
const POINTS: [&str; 4] = [
    "landing-noted",
    "landing-pushed",
    "landing-main-moved",
    "landing-recorded",
];

/// SIGKILL at each point inside the landing, then `audit` and the next `get-task`: no
/// FORGED at any time, the merge on the server's main exactly once, and the chain here and
/// on the server the record of it.
#[test]
fn a_kill_at_each_point_inside_the_landing_is_completed_by_the_next_get_task() {
    let mut outcomes = Vec::new();
    for point in POINTS {
        let (repo, server) = shared_calc();
        let before = main_tip(&repo);
        finalized(&repo);
        let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
        repo.write(
            "docs/plan.md",
            &format!(
                "# Plan\n## PR 1: feat: Multiply [DONE] {}\n",
                squashed.trim()
            ),
        );
        repo.commit_all("docs: PR 1 done");
        repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
        kill_at(&repo, point);
        audit_clean(&repo, &format!("after a kill at {point}"));
        let next = repo.run(&["get-task"]);
        assert_eq!(next.code, 0, "{point}: {}\n{}", next.stdout, next.stderr);
        assert_eq!(repo.status(), "INITIALIZING", "{point}: {}", next.stdout);
        audit_clean(&repo, &format!("after the get-task that followed {point}"));
        let line = server.main_line(&repo);
        let merges: Vec<&String> = line.iter().take_while(|c| **c != before).collect();
        assert_eq!(
            merges.len(),
            1,
            "{point}: one merge on the server's main: {line:?}"
        );
        assert_eq!(
            &main_tip(&repo),
            merges[0],
            "{point}: main here is the server's"
        );
        assert_eq!(
            server.rev(&repo, REF),
            repo.tip(),
            "{point}: the record is on the server"
        );
        let v = attest_in_fresh_clone(&server, merges[0]);
        assert_eq!(v["verdicts"][0]["passed"], true, "{point}: {v}");
        outcomes.push(format!("{point}: merged once"));
    }
    assert_eq!(outcomes.len(), POINTS.len(), "{outcomes:?}");
}

/// A master plan of three PRs, far enough apart that marking each [DONE] never conflicts.
const THREE_PRS: &str = "# Plan\n\n## PR 1: feat: One\n\nThe first.\n\n## PR 2: feat: Two\n\n\
    The second.\n\n## PR 3: feat: Three\n\nThe third.\n";

/// Workflow `workflow` of clone `repo`, from its plan `title` (one task creating `file`) to
/// the master plan marked done: the next `get-task` merges it.
pub(crate) fn up_to_the_merge(
    repo: &TestRepo,
    workflow: &str,
    title: &str,
    file: &str,
    content: &str,
) {
    let run = |args: &[&str]| {
        let mut all = vec!["--workflow", workflow];
        all.extend_from_slice(args);
        repo.run(&all)
    };
    let mut cmd = repo.command(
        BIN,
        [
            "--workflow",
            workflow,
            "submit-work",
            "--summary",
            "the plan",
            "--plan",
            "-",
        ],
    );
    cmd.current_dir(repo.dir());
    feed(cmd, &one_task_plan(title, file)).expect(0);
    run(&["get-task"]).expect(0);
    let test = format!("test -e {file}");
    run(&["submit-work", "-s", "red", "--test-command", &test]).expect(3);
    run(&[
        "submit-work",
        "-s",
        "missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write(file, content);
    run(&["submit-work", "-s", "green", "--test-command", &test]).expect(0);
    run(&["checkpoint"]).expect(0);
    run(&["get-task"]).expect(0);
    run(&["submit-work", "-s", "squashed", "--squash"]).expect(0);
    run(&["submit-work", "-s", "plan updated", "--mark-done"]).expect(0);
}

fn state_of(repo: &TestRepo, workflow: &str) -> String {
    repo.run(&["--workflow", workflow, "status", "--json"])
        .expect(0)
        .json()["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Three clones merge three PRs of one master plan at once, through the hook, with no
/// `sync` typed: the losers merge again onto the new main by themselves; every PR is on the
/// server's main exactly once, the hook refuses no push, and no `audit` says FORGED.
#[test]
fn three_clones_racing_their_merges_each_land_once_with_no_sync() {
    let origin = TestRepo::with_config(CONFIG);
    origin.write("docs/plan.md", THREE_PRS);
    origin.commit_all("three PRs");
    let server = Server::start(&origin);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let base = main_tip(&origin);
    let clones: Vec<(TestRepo, &str, &str, &str)> = [
        ("a", "feat: One", "one.txt"),
        ("b", "feat: Two", "two.txt"),
        ("c", "feat: Three", "three.txt"),
    ]
    .into_iter()
    .map(|(w, t, f)| (TestRepo::clone_of(Path::new(&server.url())), w, t, f))
    .collect();
    for (repo, workflow, title, file) in &clones {
        up_to_the_merge(repo, workflow, title, file, "made\n");
    }
    let mut rounds = 0;
    let mut refusals = 0;
    let mut remerged = 0;
    loop {
        let waiting: Vec<&(TestRepo, &str, &str, &str)> = clones
            .iter()
            .filter(|(repo, w, _, _)| state_of(repo, w) != "INITIALIZING")
            .collect();
        if waiting.is_empty() {
            break;
        }
        rounds += 1;
        assert!(rounds <= 3, "still unmerged after 3 rounds");
        let children: Vec<_> = waiting
            .iter()
            .map(|(repo, w, _, _)| {
                repo.command(BIN, ["--workflow", w, "get-task"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start get-task")
            })
            .collect();
        for child in children {
            let out = Run::from(child.wait_with_output().expect("get-task"));
            if out.stdout.contains("lost the race to another clone") {
                remerged += 1;
            }
            if out.stdout.contains("hook declined") || out.stderr.contains("hook declined") {
                refusals += 1;
            }
            assert!(
                !out.stdout.contains("moved outside the workflow"),
                "{}",
                out.stdout
            );
        }
        for (repo, w, _, _) in &clones {
            let out = repo.run(&["--workflow", w, "audit"]);
            assert_eq!(out.code, 0, "audit {w}: {}\n{}", out.stdout, out.stderr);
        }
    }
    assert_eq!(refusals, 0, "the hook refused no honest push");
    let line = server.main_line(&origin);
    let merges: Vec<&String> = line.iter().take_while(|c| **c != base).collect();
    assert_eq!(
        merges.len(),
        3,
        "three merges on the server's main: {line:?}"
    );
    let subjects = origin.git(&[
        "--git-dir",
        server.bare.to_str().unwrap(),
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
            "Merge branch 'feat/one'",
            "Merge branch 'feat/three'",
            "Merge branch 'feat/two'"
        ]
    );
    // The server's record is whole: one verdict per merge (the post-receives of the racing
    // pushes ran at once), none left waiting for a later push, no claim left, and each
    // workflow's ref there is the clone's own; the repositories are sound.
    let bare = server.bare.to_str().unwrap();
    let noted = origin.git(&[
        "--git-dir",
        bare,
        "notes",
        "--ref",
        "orchestrator-attest",
        "list",
    ]);
    let mut noted: Vec<&str> = noted
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|c| merges.iter().any(|m| m == c))
        .collect();
    noted.sort_unstable();
    let mut expected: Vec<&str> = merges.iter().map(|m| m.as_str()).collect();
    expected.sort_unstable();
    assert_eq!(noted, expected, "one verdict per merge");
    let kept: Vec<String> = std::fs::read_dir(server.bare.join("orchestrator/attested"))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| merges.contains(&name))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        kept,
        Vec::<String>::new(),
        "a verdict on main left unwritten"
    );
    assert_eq!(
        origin.git(&[
            "--git-dir",
            bare,
            "for-each-ref",
            "refs/orchestrator/claims/"
        ]),
        "",
        "no claim left on the server"
    );
    for (repo, w, _, _) in &clones {
        let workflow = format!("refs/orchestrator/workflows/{w}");
        assert_eq!(
            server.rev(repo, &workflow),
            Some(repo.git(&["rev-parse", &workflow]).trim().to_string()),
            "{w}"
        );
        repo.git(&["fsck", "--no-dangling"]);
    }
    origin.git(&["--git-dir", bare, "fsck", "--no-dangling"]);
    // A clone that has not pulled main since (the one that wrote the plan) audits every
    // workflow clean once it has their records: its main is behind their merges, not moved
    // outside them.
    origin.run(&["init"]).expect(0);
    origin.run(&["sync"]).expect(0);
    let out = origin.run(&["audit", "--all"]);
    assert_eq!(
        out.code, 0,
        "audit --all behind:\n{}\n{}",
        out.stdout, out.stderr
    );
    assert!(!out.stdout.contains("NOT ACCOUNTED FOR"), "{}", out.stdout);
    eprintln!(
        "three clones: {rounds} round(s) of get-task, {remerged} merge(s) made again after a lost race, {refusals} refusals"
    );
}

/// Two clones whose PRs write the same file: A lands first; B's merge conflicts and halts.
/// A human resolves it on main in B, as the README says, and `resume` lands it through the
/// workflow: the record and main in one push the hook accepts, and `attest` of the new main
/// passes in a fresh clone (the human's tree gated again).
#[test]
fn a_conflict_resolved_by_a_human_is_landed_by_resume_through_the_hook() {
    let origin = TestRepo::with_config(CONFIG);
    origin.write(
        "docs/plan.md",
        "# Plan\n\n## PR 1: feat: One\n\nThe first.\n\n## PR 2: feat: Two\n\nThe second.\n",
    );
    origin.commit_all("two PRs");
    let server = Server::start(&origin);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let a = TestRepo::clone_of(Path::new(&server.url()));
    let b = TestRepo::clone_of(Path::new(&server.url()));
    up_to_the_merge(&a, "a", "feat: One", "same.txt", "one\n");
    up_to_the_merge(&b, "b", "feat: Two", "same.txt", "two\n");
    a.run(&["--workflow", "a", "get-task"]).expect(0);
    assert_eq!(state_of(&a, "a"), "INITIALIZING");
    let halted = b.run(&["--workflow", "b", "get-task"]);
    assert_eq!(halted.code, 10, "{}\n{}", halted.stdout, halted.stderr);
    assert_eq!(state_of(&b, "b"), "HALTED");
    // The human, as the README says: merge the branch into main, resolve, commit.
    b.git(&["checkout", "--quiet", "main"]);
    let (clean, _) = b.git_try(&["merge", "--no-ff", "--no-edit", "feat/two"]);
    assert!(!clean, "the merge conflicts");
    b.write("same.txt", "one\ntwo\n");
    b.git(&["add", "same.txt"]);
    b.git(&["commit", "--quiet", "--no-edit"]);
    let resolution = main_tip(&b);
    let out = b.human(&["--workflow", "b", "resume"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(state_of(&b, "b"), "INITIALIZING");
    assert_eq!(server.rev(&b, "refs/heads/main"), Some(resolution.clone()));
    assert_eq!(
        server.rev(&b, "refs/orchestrator/workflows/b"),
        Some(
            b.git(&["rev-parse", "refs/orchestrator/workflows/b"])
                .trim()
                .to_string()
        ),
        "the record went with main"
    );
    let v = attest_in_fresh_clone(&server, &resolution);
    let v = &v["verdicts"][0];
    assert_eq!(v["kind"], "merge", "{v}");
    assert_eq!(v["passed"], true, "{v}");
    assert!(
        v["reran"].as_array().unwrap().iter().any(|r| r
            .as_str()
            .unwrap()
            .starts_with("the gates passed on the merge")),
        "{v}"
    );
    let out = b.run(&["--workflow", "b", "audit"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A ticket merged where its branch was deleted at the merge: a fresh clone that has main
/// and the ticket's chain but not the subtasks' commits. `attest` of the merge fails naming
/// the commit that is missing and why (exit 1), never a raw git failure (exit 5).
#[test]
fn attest_of_a_ticket_whose_subtask_commits_never_left_names_the_missing_commit() {
    let repo = crate::tickets::repo();
    crate::tickets::finished_ticket(&repo);
    // Over the pack protocol, as from a server: only what refs reach is copied.
    let url = format!("file://{}", repo.dir().display());
    let fresh = TestRepo::clone_of(Path::new(&url));
    fresh.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/workflows/*:refs/orchestrator/workflows/*",
    ]);
    let out = fresh.run(&["attest", "--no-note", "main"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        redact_ids(&out.stdout).contains(
            "the ticket's verified commit <id> is not in this repository: nothing here can check it"
        ),
        "{}",
        out.stdout
    );
}

/// A ticket's merge lands the same way: its completion recorded first and pushed with main,
/// the notes and the verified commit (which the subtasks' commits lead to, and which the
/// merge does not reach) in one push the hook accepts; `attest` of the merge passes in a
/// fresh clone, the subtasks' tests run again there on their bases.
#[test]
fn a_ticket_merge_lands_through_the_hook_with_what_its_verifier_needs() {
    let repo = crate::tickets::repo();
    let server = Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    crate::tickets::finished_ticket(&repo);
    let merge = main_tip(&repo);
    assert_eq!(server.rev(&repo, "refs/heads/main"), Some(merge.clone()));
    assert_eq!(
        server.rev(&repo, REF),
        repo.tip(),
        "the record went with main"
    );
    let v = attest_in_fresh_clone(&server, &merge);
    let v = &v["verdicts"][0];
    assert_eq!(v["kind"], "ticket-merge", "{v}");
    assert_eq!(v["passed"], true, "{v}");
    assert!(
        v["reran"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().contains("on its base")),
        "{v}"
    );
}

/// The landing file cannot be written (as on a full disk): the landing does not begin, so
/// nothing moved, here or on the server, and nothing is FORGED; once it can be written, the
/// next `get-task` lands the merge once.
#[test]
fn a_landing_that_cannot_note_itself_moves_nothing_and_lands_later() {
    let (repo, server) = shared_calc();
    let before = main_tip(&repo);
    finalized(&repo);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Multiply [DONE] {}\n",
            squashed.trim()
        ),
    );
    repo.commit_all("docs: PR 1 done");
    repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
    let chain = repo.tip();
    let server_chain = server.rev(&repo, REF);
    // A file where the landings' directory goes: every write under it fails.
    let landings = repo.dir().join(".git/orchestrator/landings");
    std::fs::create_dir_all(landings.parent().unwrap()).unwrap();
    std::fs::write(&landings, b"").unwrap();
    let out = repo.run(&["get-task"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains(".git/orchestrator/landings/main"),
        "{}",
        out.stderr
    );
    assert_eq!(main_tip(&repo), before, "main did not move here");
    assert_eq!(server.rev(&repo, "refs/heads/main"), Some(before.clone()));
    // The steps before the landing are recorded (MERGING_BRANCH), the merge is not.
    assert_eq!(repo.status(), "MERGING_BRANCH");
    assert_ne!(repo.tip(), chain);
    let subject = repo.git(&["log", "-1", "--format=%s", REF]);
    assert!(!subject.starts_with("merge:"), "{subject}");
    assert_eq!(server.rev(&repo, REF), server_chain);
    audit_clean(&repo, "after the landing could not begin");
    std::fs::remove_file(&landings).unwrap();
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    let line = server.main_line(&repo);
    assert_eq!(
        line.iter().take_while(|c| **c != before).count(),
        1,
        "{line:?}"
    );
    assert_eq!(server.rev(&repo, REF), repo.tip());
}

/// Two clones whose PRs write the same file, A's landed, B's halted on the conflict and
/// resolved by a human on main (as in
/// [`a_conflict_resolved_by_a_human_is_landed_by_resume_through_the_hook`]): B, the server,
/// main before B's merge, the human's resolution, and the clone that wrote the plan (whose
/// temporary directory the server's hook uses: it lives as long as the server).
fn resolved_conflict() -> (TestRepo, Server, String, String, TestRepo) {
    let origin = TestRepo::with_config(CONFIG);
    origin.write(
        "docs/plan.md",
        "# Plan\n\n## PR 1: feat: One\n\nThe first.\n\n## PR 2: feat: Two\n\nThe second.\n",
    );
    origin.commit_all("two PRs");
    let server = Server::start(&origin);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let a = TestRepo::clone_of(Path::new(&server.url()));
    let b = TestRepo::clone_of(Path::new(&server.url()));
    up_to_the_merge(&a, "a", "feat: One", "same.txt", "one\n");
    up_to_the_merge(&b, "b", "feat: Two", "same.txt", "two\n");
    a.run(&["--workflow", "a", "get-task"]).expect(0);
    b.run(&["--workflow", "b", "get-task"]).expect(10);
    b.git(&["checkout", "--quiet", "main"]);
    let before = main_tip(&b);
    let (clean, _) = b.git_try(&["merge", "--no-ff", "--no-edit", "feat/two"]);
    assert!(!clean, "the merge conflicts");
    b.write("same.txt", "one\ntwo\n");
    b.git(&["add", "same.txt"]);
    b.git(&["commit", "--quiet", "--no-edit"]);
    let resolution = main_tip(&b);
    (b, server, before, resolution, origin)
}

/// The points inside `resume`'s landing of a human's merge, in order (main does not move
/// here: the human moved it).
const RESUME_POINTS: [&str; 3] = ["landing-noted", "landing-pushed", "landing-recorded"];

/// SIGKILL at each point inside `resume`'s landing, then `audit` and the next `resume`: no
/// FORGED at any time, the human's merge on the server's main exactly once, the chain here
/// and on the server the record of it, and `sync` finds nothing diverged.
#[test]
fn a_kill_at_each_point_inside_resumes_landing_is_completed_by_the_next_resume() {
    let mut outcomes = Vec::new();
    for point in RESUME_POINTS {
        let (b, server, before, resolution, _origin) = resolved_conflict();
        kill_in(&b, &["--workflow", "b", "resume"], point);
        let out = b.run(&["--workflow", "b", "audit"]);
        assert_eq!(
            out.code, 0,
            "{point}: audit:\n{}\n{}",
            out.stdout, out.stderr
        );
        assert!(!out.stdout.contains("FORGED"), "{point}: {}", out.stdout);
        let next = b.human(&["--workflow", "b", "resume"]);
        if point == "landing-recorded" {
            // Killed after the record: the workflow is not halted any more, and says so.
            assert_eq!(next.code, 4, "{point}: {}\n{}", next.stdout, next.stderr);
            assert!(
                next.stderr.contains("the workflow is not halted"),
                "{point}: {}",
                next.stderr
            );
        } else {
            assert_eq!(next.code, 0, "{point}: {}\n{}", next.stdout, next.stderr);
        }
        assert_eq!(state_of(&b, "b"), "INITIALIZING", "{point}");
        let line = server.main_line(&b);
        let merges: Vec<&String> = line.iter().take_while(|c| **c != before).collect();
        assert_eq!(
            merges,
            [&resolution],
            "{point}: one merge on the server's main"
        );
        let chain = b
            .git(&["rev-parse", "refs/orchestrator/workflows/b"])
            .trim()
            .to_string();
        assert_eq!(
            server.rev(&b, "refs/orchestrator/workflows/b"),
            Some(chain),
            "{point}: the record is on the server"
        );
        let out = b.run(&["--workflow", "b", "audit"]);
        assert_eq!(out.code, 0, "{point}: {}\n{}", out.stdout, out.stderr);
        let sync = b.run(&["--workflow", "b", "sync"]);
        assert_eq!(
            sync.code, 0,
            "{point}: sync: {}\n{}",
            sync.stdout, sync.stderr
        );
        assert!(
            !sync.stdout.contains("DIVERGED"),
            "{point}: {}",
            sync.stdout
        );
        let v = attest_in_fresh_clone(&server, &resolution);
        assert_eq!(v["verdicts"][0]["passed"], true, "{point}: {v}");
        outcomes.push(format!("{point}: landed once"));
    }
    eprintln!(
        "resume's landing: {} kill(s): {}",
        outcomes.len(),
        outcomes.join(", ")
    );
}

/// SIGKILL at each point inside a ticket's landing (`complete-ticket`), then `audit` and the
/// next `complete-ticket`: no FORGED at any time, the ticket's merge on the server's main
/// exactly once, the chain here and on the server the record of it, and `sync` finds nothing
/// diverged.
#[test]
fn a_kill_at_each_point_inside_a_tickets_landing_is_completed_by_the_next_complete_ticket() {
    let mut outcomes = Vec::new();
    for point in POINTS {
        let repo = crate::tickets::repo();
        let server = Server::start(&repo);
        repo.git(&["remote", "add", "origin", &server.url()]);
        repo.git_run(&["push", "--quiet", "origin", "main"])
            .expect(0);
        let before = main_tip(&repo);
        repo.run(&["ticket", "new", "--title", "Hello"]).expect(0);
        crate::tickets::assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
        crate::tickets::honest_work(&repo, "hello");
        crate::tickets::report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
        crate::tickets::judge(&repo, "complete", &[]).expect(0);
        kill_in(&repo, &["complete-ticket", "--summary", "hello"], point);
        audit_clean(&repo, &format!("after a kill at {point}"));
        let next = repo.run(&["complete-ticket", "--summary", "hello"]);
        if point == "landing-recorded" {
            // Killed after the record: the ticket is done, and says so.
            assert_eq!(next.code, 4, "{point}: {}\n{}", next.stdout, next.stderr);
            assert!(
                next.stderr.contains("the ticket is done and merged"),
                "{point}: {}",
                next.stderr
            );
        } else {
            assert_eq!(next.code, 0, "{point}: {}\n{}", next.stdout, next.stderr);
        }
        let state =
            repo.run(&["--json", "ticket", "show"]).expect(0).json()["ticket"]["state"].clone();
        assert_eq!(state, "TICKET_DONE", "{point}");
        audit_clean(
            &repo,
            &format!("after the complete-ticket that followed {point}"),
        );
        let line = server.main_line(&repo);
        let merges: Vec<&String> = line.iter().take_while(|c| **c != before).collect();
        assert_eq!(
            merges.len(),
            1,
            "{point}: one merge on the server's main: {line:?}"
        );
        assert_eq!(
            server.rev(&repo, REF),
            repo.tip(),
            "{point}: the record is on the server"
        );
        let sync = repo.run(&["sync"]);
        assert_eq!(
            sync.code, 0,
            "{point}: sync: {}\n{}",
            sync.stdout, sync.stderr
        );
        let v = attest_in_fresh_clone(&server, merges[0]);
        assert_eq!(v["verdicts"][0]["passed"], true, "{point}: {v}");
        outcomes.push(format!("{point}: merged once"));
    }
    eprintln!(
        "a ticket's landing: {} kill(s): {}",
        outcomes.len(),
        outcomes.join(", ")
    );
}

/// Inside a user and mount namespace (`unshare -Urm`, no root needed): the workflows' refs
/// of the repository in `$REPO` (`refs/orchestrator`, or `reftable` for that backend) on a
/// small tmpfs holding a copy of them (on their own filesystem, so that the PR branch the
/// landing deletes frees no space there); `get-task` paused inside its landing (after its note, before its
/// push), the tmpfs filled to the last byte, `get-task` let go; `audit` while the disk is
/// full; the filler removed, `audit` and `get-task` again; the refs copied back to the disk.
/// Each command's exit status and output are left in `$OUT`.
const FULL_DISK: &str = r#"
set -u
R="$REPO/.git/refs/orchestrator"
[ -d "$REPO/.git/reftable" ] && R="$REPO/.git/reftable"
SAVE="$OUT/save"
mkdir "$SAVE" && cp -a "$R/." "$SAVE/"
mount -t tmpfs -o size=512k tmpfs "$R"
cp -a "$SAVE/." "$R/"
run() { name=$1; shift; "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.code"; }
run first env GIT_ORCHESTRATE_PAUSE_AT=landing-noted GIT_ORCHESTRATE_PAUSE_FILE="$OUT/pause" \
  git-orchestrate get-task &
while [ ! -s "$OUT/pause" ] && [ ! -e "$OUT/first.code" ]; do sleep 0.05; done
[ -s "$OUT/pause" ] && echo paused >"$OUT/paused"
dd if=/dev/zero of="$R/fill" bs=4096 2>/dev/null
df -k "$R" | tail -1 >"$OUT/df"
rm -f "$OUT/pause"
wait
run full git-orchestrate audit
rm -f "$R/fill"
run freed git-orchestrate audit
run second git-orchestrate get-task
run after git-orchestrate audit
rm -rf "$SAVE" && mkdir "$SAVE" && cp -a "$R/." "$SAVE/"
umount "$R"
rm -rf "$R"/* && cp -a "$SAVE/." "$R/"
"#;

/// The disk fills up inside the landing (the refs' filesystem full after the landing noted
/// itself): the command fails saying so, and nothing is FORGED; once there is space, the
/// next `get-task` completes the landing: the merge on the server's main exactly once, the
/// chain here and there the record of it, nothing lost. Needs `unshare -Urm` (user
/// namespaces): where that is unavailable the test fails under CI (`CI=true`) and says so
/// loudly elsewhere.
#[test]
fn a_full_disk_inside_the_landing_is_named_and_the_next_get_task_completes_it() {
    let usable = std::process::Command::new("unshare")
        .args(["-Urm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`unshare -Urm` (user and mount namespaces) is needed for the full-disk test"
        );
        eprintln!("SKIPPED: `unshare -Urm` is unavailable here; the full-disk test did not run");
        return;
    }
    let (repo, server) = shared_calc();
    let before = main_tip(&repo);
    finalized(&repo);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Multiply [DONE] {}\n",
            squashed.trim()
        ),
    );
    repo.commit_all("docs: PR 1 done");
    repo.run(&["submit-work", "-s", "plan updated"]).expect(0);
    let out = tempfile::tempdir().expect("temp dir");
    let done = Run::from(
        repo.command("unshare", ["-Urm", "sh", "-c", FULL_DISK])
            .env("REPO", repo.dir())
            .env("OUT", out.path())
            .stdin(Stdio::null())
            .output()
            .expect("unshare"),
    );
    let read = |name: &str| std::fs::read_to_string(out.path().join(name)).unwrap_or_default();
    let step = |name: &str| {
        (
            read(&format!("{name}.code"))
                .trim()
                .parse::<i32>()
                .unwrap_or(-1),
            format!(
                "{}{}",
                read(&format!("{name}.out")),
                read(&format!("{name}.err"))
            ),
        )
    };
    assert_eq!(done.code, 0, "the script: {}\n{}", done.stdout, done.stderr);
    let (first, said) = step("first");
    assert_ne!(
        first,
        0,
        "the landing on a full disk: {said}\n(df: {}, {})",
        read("df"),
        read("paused")
    );
    assert!(
        said.contains("No space left on device")
            && said.contains("refs/orchestrator/workflows/main")
            && said.contains("a full disk"),
        "the error names the full disk: {said}\n(df: {})",
        read("df")
    );
    assert!(!said.contains("FORGED"), "{said}");
    let (_, full) = step("full");
    assert!(!full.contains("FORGED"), "audit on the full disk: {full}");
    for name in ["freed", "second", "after"] {
        let (code, text) = step(name);
        assert_eq!(code, 0, "{name}: {text}");
        assert!(!text.contains("FORGED"), "{name}: {text}");
    }
    assert_eq!(repo.status(), "INITIALIZING");
    audit_clean(&repo, "after the disk had space again");
    let line = server.main_line(&repo);
    let merges: Vec<&String> = line.iter().take_while(|c| **c != before).collect();
    assert_eq!(merges.len(), 1, "one merge on the server's main: {line:?}");
    assert_eq!(&main_tip(&repo), merges[0], "main here is the server's");
    assert_eq!(
        server.rev(&repo, REF),
        repo.tip(),
        "the record is on the server"
    );
    let v = attest_in_fresh_clone(&server, merges[0]);
    assert_eq!(v["verdicts"][0]["passed"], true, "{v}");
    eprintln!(
        "full disk inside the landing: the landing exited {first} saying:\n{}",
        read("first.err")
    );
}
