//! Repositories whose refs are in reftable (`git init --ref-format=reftable`, docs/refs.md
//! "Ref storage"): gix cannot read them, so the store reads and moves refs through git's own
//! ref commands. The core flow runs here on reftable whatever
//! `GIT_ORCHESTRATE_TEST_REF_FORMAT` says: init, a PR through to its merge, sync between two
//! clones, a claim taken and released, the hooks checking a checkpoint commit, and writers
//! racing on one workflow ref.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::oracle::{calc, finalized, main_tip, mark_done_and_merge};
use crate::support::{PLAN, RED, REF, TestRepo, one_task_plan, use_ref_format};

/// What `git config extensions.refStorage` says in `dir` (a clone, or a bare repository).
fn ref_storage(repo: &TestRepo, git_dir: Option<&Path>) -> String {
    let mut args = Vec::new();
    if let Some(dir) = git_dir {
        args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
    }
    args.extend(["config", "extensions.refStorage"]);
    repo.git(&args).trim().to_string()
}

fn rev(repo: &TestRepo, git_dir: Option<&Path>, name: &str) -> Option<String> {
    let mut args = Vec::new();
    if let Some(dir) = git_dir {
        args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
    }
    args.extend(["rev-parse", "--verify", "--quiet", name]);
    let (ok, out) = repo.git_try(&args);
    ok.then(|| out.trim().to_string())
}

/// The reflog messages of `reference`, newest first, as git reads them.
fn reflog(repo: &TestRepo, reference: &str) -> Vec<String> {
    repo.git(&["reflog", "show", "--format=%gs", reference])
        .lines()
        .map(str::to_string)
        .collect()
}

/// init, a whole PR (plan, RED, GREEN, the squash, its end-of-PR proof) and its merge on
/// main, the chain audited: every ref read and moved on reftable.
#[test]
fn a_pr_goes_from_init_to_its_merge_on_reftable() {
    use_ref_format("reftable");
    let repo = calc();
    assert_eq!(ref_storage(&repo, None), "reftable");
    assert_eq!(repo.status(), "EXECUTING_TDD");
    let before = main_tip(&repo);
    let squashed = finalized(&repo);
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
    let note = repo.git(&["notes", "--ref=orchestrator", "show", &squashed]);
    assert!(note.contains("\"kind\":\"final\""), "{note}");
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    assert_ne!(main_tip(&repo), before, "main moved");
    assert!(
        repo.git(&["log", "--format=%s", "-1", "main"])
            .starts_with("Merge branch 'feat/multiply'")
    );
    // The workflow ref's moves are logged by git with our messages, as gix logs them.
    let log = reflog(&repo, REF);
    assert!(log.len() > 5, "{log:?}");
    assert!(
        log.iter().all(|m| m.starts_with("git-orchestrate: ")),
        "{log:?}"
    );
    assert!(log.last().unwrap().contains("create"), "{log:?}");
    repo.run(&["audit"]).expect(0);
    repo.run(&["log", "-n", "3"]).expect(0);
    repo.run(&["--json", "board"]).expect(0);
    repo.run(&["doctor"]);
}

/// Two reftable clones of a reftable remote: A's workflow is adopted by B's init, and each
/// receives the other's progress through `sync`.
#[test]
fn two_clones_sync_their_progress_on_reftable() {
    use_ref_format("reftable");
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    assert_eq!(ref_storage(&a, Some(&bare)), "reftable");
    a.run(&["init"]).expect(0);
    a.submit_plan(PLAN).expect(0);
    a.run(&["get-task"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    assert_eq!(ref_storage(&b, None), "reftable");
    a.run(&["sync"])
        .expect(0)
        .says("workflow main: pushed 1 transition (EXECUTING_TDD)");
    assert_eq!(rev(&a, Some(&bare), REF), a.tip());
    b.run(&["init"])
        .expect(0)
        .says("ADOPTED workflow main from origin: 3 transitions, state EXECUTING_TDD");
    assert_eq!(b.tip(), a.tip());

    a.submit_test(RED, Some("FAIL")).expect(3);
    a.run(&["sync"]).expect(0);
    b.run(&["sync"])
        .expect(0)
        .says("workflow main: fast-forwarded 1 transition (EXECUTING_TDD)");
    assert_eq!(b.tip(), a.tip());
    assert_eq!(
        b.run(&["status", "--json"]).json()["remotes"][0]["standing"],
        "equal"
    );

    b.git(&["checkout", "--quiet", "feat/add-numbers"]);
    b.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    b.run(&["sync"])
        .expect(0)
        .says("workflow main: pushed 1 transition");
    let out = a.run(&["sync", "--json"]);
    out.expect(0);
    assert_eq!(out.json()["workflows"][0]["action"], "fast_forwarded");
    assert_eq!(a.tip(), b.tip());
    assert_eq!(a.status(), "EXECUTING_TDD");
}

/// A plan accepted in a clone of a remote takes the PR's claim there and here; a human's
/// `claim release` gives it up in both.
#[test]
fn a_claim_is_taken_and_released_on_reftable() {
    use_ref_format("reftable");
    const CLAIM: &str = "refs/orchestrator/claims/pr-1-feat-add-numbers";
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    a.submit_plan(&one_task_plan("feat: Add numbers", "add.sh"))
        .expect(0);
    let held = rev(&a, Some(&bare), CLAIM).expect("the remote holds the claim");
    assert_eq!(rev(&a, None, CLAIM).as_deref(), Some(held.as_str()));
    assert!(
        reflog(&a, CLAIM)[0].starts_with("git-orchestrate: "),
        "{:?}",
        reflog(&a, CLAIM)
    );
    a.human(&["claim", "release", "pr-1-feat-add-numbers"])
        .expect(0)
        .says("claim on pr-1-feat-add-numbers released on origin");
    assert_eq!(rev(&a, Some(&bare), CLAIM), None);
    assert_eq!(rev(&a, None, CLAIM), None);
}

/// The installed hooks check a checkpoint commit made with `git commit` and note it.
#[test]
fn the_hooks_check_a_checkpoint_commit_on_reftable() {
    use_ref_format("reftable");
    let repo = TestRepo::at_green_step();
    assert_eq!(ref_storage(&repo, None), "reftable");
    repo.run(&["hooks", "install"]).expect(0);
    repo.write("add.sh", "echo 5\n");
    repo.submit_test(RED, None).expect(0);
    repo.git(&["add", "--all"]);
    let out = repo.git_run(&["commit", "-m", "checkpoint: add numbers"]);
    out.expect(0);
    assert!(
        out.stderr.contains("git-orchestrate: checkpoint verified"),
        "{}",
        out.stderr
    );
    let note = repo.git(&["notes", "--ref=orchestrator", "show", "HEAD"]);
    assert!(note.contains("\"kind\":\"checkpoint\""), "{note}");
    repo.run(&["verify", "HEAD~1..HEAD"]).expect(0);
}

/// Writers racing on one workflow ref: git checks each move's old value under its lock, so
/// a writer that lost re-reads and writes again, and no update is lost: the chain grows by
/// exactly the writes that completed, in one straight line, each logged once.
#[test]
fn racing_writers_lose_no_update_on_reftable() {
    use_ref_format("reftable");
    let repo = TestRepo::at_green_step();
    let before = repo.history_len();
    let before_tip = repo.tip().unwrap();
    let logged = reflog(&repo, REF).len();
    let codes: Vec<i32> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|p| {
                let repo = &repo;
                scope.spawn(move || {
                    (0..6)
                        .map(|i| {
                            let summary = format!("process {p} attempt {i}");
                            repo.run(&["submit-work", "-s", &summary, "--test-command", "false"])
                                .code
                        })
                        .collect::<Vec<i32>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        codes.iter().all(|c| *c == 1 || *c == 5),
        "exit 1 = completed, 5 = retries exhausted: {codes:?}"
    );
    let succeeded = codes.iter().filter(|c| **c == 1).count();
    assert!(succeeded > 0, "{codes:?}");
    assert_eq!(repo.history_len(), before + succeeded);
    assert_eq!(repo.state()["debug_attempt_counter"], succeeded);
    let chain = repo.git(&["rev-list", "--parents", &format!("{before_tip}..{REF}")]);
    let lines: Vec<Vec<&str>> = chain.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), succeeded);
    for (i, commit) in lines.iter().enumerate() {
        let parent = lines.get(i + 1).map_or(before_tip.as_str(), |next| next[0]);
        assert_eq!(commit[1..], [parent], "one straight line");
    }
    assert_eq!(reflog(&repo, REF).len(), logged + succeeded);
    repo.run(&["audit"]).expect(0);
}

/// Two writers that read the same tip and move the ref at once: exactly one move is taken
/// as it was read, the other finds the ref moved, re-reads and applies its event on top.
#[test]
fn a_lost_compare_and_swap_re_reads_on_reftable() {
    use_ref_format("reftable");
    let repo = TestRepo::at_green_step();
    let before = repo.tip().unwrap();
    let outs: Vec<crate::support::Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|p| {
                let repo = &repo;
                scope.spawn(move || {
                    let summary = format!("writer {p}");
                    repo.run(&["submit-work", "-s", &summary, "--test-command", "false"])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &outs {
        out.expect(1);
    }
    let chain = repo.git(&["rev-list", "--first-parent", &format!("{before}..{REF}")]);
    assert_eq!(chain.lines().count(), 2, "both events are on the chain");
    assert_eq!(repo.state()["debug_attempt_counter"], 2);
}
