//! Bad input is refused at once with exit 2 and changes nothing (docs/agent-guide.md, "Exit
//! codes"): key files that are devices or FIFOs (which `ssh-keygen` would read forever or
//! wait on), `attest` on what no workflow made, the ticket tools' text caps and their check
//! order (input first), claim keys and workflow names git reads as its own.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::*;

/// A FIFO nobody writes, in a temporary directory kept alive with it.
fn fifo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    (dir, path)
}

/// Runs `args` in `repo` as a human would; asserts it exits 2 within a minute, saying `says`.
#[track_caller]
fn refused_at_once(repo: &TestRepo, args: &[&str], says: &str) -> Run {
    let start = Instant::now();
    let out = repo.human(args);
    // Not a timing assertion of speed: a reader stuck on a FIFO or /dev/zero never ends,
    // and ssh-keygen's own timeout is longer than this.
    assert!(start.elapsed() < Duration::from_secs(60), "{args:?} hung");
    out.expect(2).warns(says);
    out
}

/// `attest --signing-key` and `resume --sign-key` given `/dev/zero` or a FIFO: refused at
/// once (exit 2), nothing judged or written.
#[test]
fn key_files_that_are_devices_or_fifos_are_refused_at_once() {
    let repo = TestRepo::new();
    let (_dir, fifo) = fifo();
    let fifo = fifo.to_str().unwrap();
    for key in ["/dev/zero", fifo] {
        let out = refused_at_once(
            &repo,
            &["attest", "--signing-key", key, "HEAD"],
            "not a regular file, and is not read",
        );
        assert!(out.stderr.contains(key), "{}", out.stderr);
        assert!(
            !repo
                .git_try(&["rev-parse", "--verify", "refs/notes/orchestrator-attest"])
                .0,
            "no verdict was written"
        );
    }
    // resume, signed with such a key: the key is input, judged before the state is.
    let repo = TestRepo::at_first_step();
    let tip = repo.tip();
    for key in ["/dev/zero", fifo] {
        refused_at_once(
            &repo,
            &["resume", "--sign-key", key],
            "not a regular file, and is not read",
        );
        assert_eq!(repo.tip(), tip, "nothing recorded");
    }
    refused_at_once(
        &repo,
        &["resume", "--sign-key", "/nonexistent/key"],
        "the key to sign with /nonexistent/key",
    );
}

/// `attest` on what is not a workflow's merge or PR head, named by itself (a branch not
/// merged, a workflow ref, a symmetric range): exit 2, no note. The same commit named twice
/// is judged once.
#[test]
fn attest_refuses_what_no_workflow_made_and_judges_each_commit_once() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "--quiet", "-b", "side"]);
    repo.write("side.txt", "side\n");
    repo.commit_all("side work");
    repo.run(&["init"]).expect(0);
    for (rev, says) in [
        (
            "side",
            "is not a workflow's merge into main nor a finalized PR's head",
        ),
        (
            REF,
            "is not a workflow's merge into main nor a finalized PR's head",
        ),
        ("main...side", "is a symmetric difference"),
    ] {
        repo.run(&["attest", rev]).expect(2).warns(says);
        assert!(
            !repo
                .git_try(&["rev-parse", "--verify", "refs/notes/orchestrator-attest"])
                .0,
            "attest {rev} wrote a verdict"
        );
    }
    // A range of main's commits judges each (a human's commit on main fails, exit 1); named
    // twice, or in two ranges that overlap, each commit once.
    let json = repo
        .run(&[
            "attest",
            "--json",
            "--no-note",
            "main..side",
            "main..side",
            "side~1..side",
        ])
        .expect(1)
        .json();
    assert_eq!(json["verdicts"].as_array().unwrap().len(), 1, "{json}");
}

/// The ticket tools check their input first (exit 2) whatever the state, and
/// `subtask-complete --message` and `update-subtask --notes` take at most 64 KiB.
#[test]
fn the_ticket_tools_check_input_first_and_cap_every_text() {
    let repo =
        TestRepo::with_config("[[preflight]]\nname = \"tests\"\ncommand = \"sh run_tests.sh\"\n");
    repo.run(&["ticket", "new", "--title", "Limits"]).expect(0);
    let before = repo.git(&["rev-parse", REF]);
    let long = "x".repeat(70_000);
    // In MANAGER: subtask-complete and update-subtask are out of turn, yet the input speaks
    // first.
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        &long,
    ])
    .expect(2)
    .warns("message: the message is 70000 bytes long; at most 65536 bytes (64 KiB) are taken");
    repo.run(&["update-subtask", "--status", "complete", "--notes", &long])
        .expect(2)
        .warns("notes: the notes is 70000 bytes long; at most 65536 bytes (64 KiB) are taken");
    repo.run_with_stdin(
        &["complete-ticket", "--json-input", "-"],
        "{\"summary\": 5}",
    )
    .expect(2)
    .warns("summary: expected a string, found a number");
    // Good input out of turn: the state answers.
    repo.run(&["update-subtask", "--status", "complete", "--notes", "ok"])
        .expect(4);
    assert_eq!(repo.git(&["rev-parse", REF]), before, "nothing written");
}

/// `claim steal ""` and `claim steal '*'` name no PR (they took a claim named `pr`);
/// `worktree add HEAD` (and git's other own names) make no workflow.
#[test]
fn claim_keys_and_workflow_names_git_reads_as_its_own_are_refused() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    for key in ["", "*", " - "] {
        repo.human(&["claim", "steal", key])
            .expect(2)
            .warns("names no PR");
        repo.human(&["claim", "release", key])
            .expect(2)
            .warns("names no PR");
    }
    assert!(
        repo.git(&["for-each-ref", "refs/orchestrator/claims/"])
            .is_empty(),
        "no claim was taken"
    );
    for name in ["HEAD", "head", "FETCH_HEAD", "ORIG_HEAD"] {
        repo.run(&["worktree", "add", name])
            .expect(2)
            .warns(&format!(
                "\"{name}\" cannot name a workflow; nothing was created"
            ));
        assert!(
            !repo
                .git_try(&[
                    "rev-parse",
                    "--verify",
                    &format!("refs/orchestrator/workflows/{name}")
                ])
                .0
        );
    }
}
