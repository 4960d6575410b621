//! Concurrency (docs/architecture.md, "Compare-and-swap"): real processes racing on one workflow. Every write is a
//! compare-and-swap, so no update is lost and the history stays one straight line.

use std::collections::HashMap;

use pretty_assertions::assert_eq;

use crate::support::{REF, TestRepo};

const PROCESSES: usize = 8;
const COMMANDS: usize = 50;

#[test]
fn eight_processes_racing_lose_no_update() {
    let repo = TestRepo::at_green_step();
    let before = repo.history_len();
    let before_tip = repo.tip().unwrap();

    // Each command is a failing PASS submit: always accepted in EXECUTING_TDD/DEBUGGING, and
    // each one that succeeds adds exactly one to debug_attempt_counter.
    let codes: Vec<Vec<i32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..PROCESSES)
            .map(|p| {
                let repo = &repo;
                scope.spawn(move || {
                    (0..COMMANDS)
                        .map(|i| {
                            let summary = format!("process {p} attempt {i}");
                            repo.run(&[
                                "submit-work",
                                "--summary",
                                &summary,
                                "--test-command",
                                "false",
                            ])
                            .code
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut by_code: HashMap<i32, usize> = HashMap::new();
    for code in codes.iter().flatten() {
        *by_code.entry(*code).or_default() += 1;
    }
    let succeeded = by_code.get(&1).copied().unwrap_or(0);
    // exit 1 = the command completed (verdict FAILURE); 5 = it gave up after its retries.
    // Nothing else is acceptable.
    assert_eq!(
        by_code.keys().filter(|c| **c != 1 && **c != 5).count(),
        0,
        "unexpected exit codes: {by_code:?}"
    );
    assert!(succeeded > 0, "{by_code:?}");
    eprintln!("race: {by_code:?} (exit 1 = completed, 5 = retries exhausted)");

    // History grew by exactly the number of completed commands, and each counted once.
    assert_eq!(repo.history_len(), before + succeeded);
    let state = repo.state();
    assert_eq!(state["status"], "DEBUGGING");
    assert_eq!(state["debug_attempt_counter"], succeeded);

    // One straight line: every commit's only parent is the previous tip.
    let chain = repo.git(&["rev-list", "--parents", &format!("{before_tip}..{REF}")]);
    let lines: Vec<Vec<&str>> = chain.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), succeeded);
    for (i, commit) in lines.iter().enumerate() {
        assert_eq!(
            commit.len(),
            2,
            "commit {} has {} parents",
            commit[0],
            commit.len() - 1
        );
        let expected_parent = lines.get(i + 1).map_or(before_tip.as_str(), |next| next[0]);
        assert_eq!(commit[1], expected_parent);
    }

    // The reflog records every update, each starting where the previous one ended.
    let reflog = std::fs::read_to_string(repo.path.join(".git/logs").join(REF)).unwrap();
    let entries: Vec<(&str, &str)> = reflog
        .lines()
        .map(|l| {
            let mut parts = l.split(' ');
            (parts.next().unwrap(), parts.next().unwrap())
        })
        .collect();
    assert_eq!(entries.len(), before + succeeded);
    for pair in entries.windows(2) {
        assert_eq!(
            pair[1].0, pair[0].1,
            "a reflog entry does not continue from the previous one"
        );
    }

    // And the state is readable by every command.
    repo.run(&["status"]).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.run(&["log", "-n", "3"]).expect(0);
    // Racing writers leave the tip marker where the last of them put it: no false "moved
    // on by something else".
    repo.run(&["audit"]).expect(0);
}

#[test]
fn a_lock_left_by_a_crash_is_named_not_retried_for_ever() {
    let repo = TestRepo::at_green_step();
    let tip = repo.tip();
    let lock = repo.path.join(".git/refs/orchestrator/workflows/main.lock");
    let file = std::fs::File::create(&lock).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(120))
        .unwrap();
    drop(file);
    let out = repo.submit_test("false", None);
    out.expect(5);
    // The temporary directory's path needs no shell quoting.
    let lock_shown = lock.display().to_string();
    assert!(
        out.stderr.starts_with(&format!(
            "error: workflow ref refs/orchestrator/workflows/main is locked by {lock_shown} (left 1"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.ends_with(&format!(
            "s ago): a git process that crashed can leave such a lock behind\n\
             hint: The workflow state was not changed. If no git or git-orchestrate process is still running, delete the lock: rm {lock_shown}\n"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip);
    std::fs::remove_file(&lock).unwrap();
    repo.submit_test("false", None).expect(1);
}

/// Checkpoints racing in one working tree (each with its own message, some with hooks
/// installed): they take turns, so every commit carries the message its checkpoint
/// recorded, nothing says "committed" and then fails, and the audit passes.
#[test]
fn checkpoints_racing_in_one_working_tree_take_turns() {
    for round in 0..3 {
        let repo = TestRepo::at_green_step();
        if round > 0 {
            repo.run(&["hooks", "install"]).expect(0);
        }
        repo.submit_test(crate::support::RED, Some("PASS"))
            .expect(0);
        let outs: Vec<crate::support::Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = ["alpha", "beta", "gamma", "delta"]
                .into_iter()
                .map(|name| {
                    let repo = &repo;
                    scope.spawn(move || repo.run(&["--json", "checkpoint", "-m", name]))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let made: Vec<&crate::support::Run> = outs.iter().filter(|o| o.code == 0).collect();
        for out in &outs {
            assert!(
                out.code == 0 || out.code == 4,
                "round {round}: exit {}: {}{}",
                out.code,
                out.stdout,
                out.stderr
            );
        }
        assert!(!made.is_empty(), "round {round}: one made it");
        for out in &made {
            let report = out.json();
            let commit = report["commit"].as_str().unwrap();
            let subject = repo.git(&["log", "-1", "--format=%s", commit]);
            assert_eq!(
                subject.trim(),
                report["subject"].as_str().unwrap(),
                "round {round}: the commit carries the message its checkpoint recorded"
            );
        }
        let state = repo.state();
        let last = state["last_commit_hash"].as_str().unwrap().to_string();
        assert_eq!(
            repo.git(&["rev-parse", "HEAD"]).trim(),
            last,
            "round {round}"
        );
        repo.run(&["audit"]).expect(0);
    }
}
