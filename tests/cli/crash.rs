//! What a crash, a kill or a full disk leaves behind, and how the next command copes
//! (issue 10): scratch files, stale locks, deleted refs, commits made but not recorded.

use std::process::Stdio;

use pretty_assertions::assert_eq;

use crate::support::{BIN, Run, TestRepo};

fn run_with_env(repo: &TestRepo, args: &[&str], env: &[(&str, &std::path::Path)]) -> Run {
    let mut cmd = repo.command(BIN, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .expect("run git-orchestrate");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        raw_stdout: out.stdout,
    }
}

#[test]
fn scratch_indexes_stay_in_the_git_dir_and_a_killed_commands_copy_is_cleared() {
    let repo = TestRepo::at_green_step();
    let scratch = repo.dir().join(".git/orchestrator/scratch");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    // Left by a command that was killed: its pid is gone.
    let leftover = scratch.join("index-999999999-abc");
    std::fs::write(&leftover, b"DIRC").expect("write");
    let tmp = tempfile::tempdir().expect("tmp");
    repo.write("add.sh", "echo 5\n");
    run_with_env(
        &repo,
        &["submit-work", "-s", "add", "--test-command", "sh add.sh"],
        &[("TMPDIR", tmp.path())],
    )
    .expect(0);
    let in_tmp: Vec<_> = std::fs::read_dir(tmp.path()).expect("read").collect();
    assert!(
        in_tmp.is_empty(),
        "nothing in the system temp dir: {in_tmp:?}"
    );
    assert!(!leftover.exists(), "the killed command's copy is cleared");
    let left: Vec<_> = std::fs::read_dir(&scratch).expect("read").collect();
    assert!(
        left.is_empty(),
        "our own copy is removed when done: {left:?}"
    );
}

/// The OS's answer is in the error: a full disk or a read-only file system is named as
/// such. A file where git needs a directory gives a real OS error without privileges.
#[test]
fn a_store_error_names_the_os_cause() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.dir().join(".git/refs")).expect("refs");
    std::fs::write(repo.dir().join(".git/refs/orchestrator"), b"").expect("write");
    let out = repo.run(&["get-task"]);
    out.expect(5);
    assert!(
        out.stderr.contains("Not a directory (os error 20)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("could not be read"), "{}", out.stderr);
}
