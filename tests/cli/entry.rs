//! The binary's own entry point (src/main.rs), which does what Rust's start-up would: a
//! closed pipe is an error the command handles, not a signal that ends it; a command started
//! without its standard descriptors works as with them.

use std::process::Stdio;

use crate::support::{BIN, RED, TestRepo};

#[test]
fn output_into_a_pipe_nobody_reads_ends_quietly_with_success() {
    let repo = TestRepo::at_first_step();
    for args in [&["man"][..], &["status"], &["--version"]] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        // The reading end closed before the command starts: its first write meets no reader.
        drop(reader);
        let out = repo
            .command(BIN, args)
            .current_dir(repo.dir())
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run git-orchestrate");
        // Killed by SIGPIPE, the status has no code.
        assert_eq!(out.status.code(), Some(0), "{args:?}: {:?}", out.status);
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
    }
}

#[test]
fn a_command_started_without_its_standard_descriptors_still_works() {
    let repo = TestRepo::at_first_step();
    let before = repo.tip();
    // stdin, stdout and stderr closed: the files the command opens would take 0, 1 and 2
    // but for src/main.rs. (std's own output ignores EBADF, so a plain print to a closed
    // descriptor succeeds either way: this checks the command as a whole.)
    let status = repo
        .command(
            "sh",
            [
                "-c",
                r#""$0" submit-work --summary red --test-command "$1" <&- >&- 2>&-"#,
                BIN,
                RED,
            ],
        )
        .current_dir(repo.dir())
        .status()
        .expect("run sh");
    // 3, as with its descriptors open: the RED test failed on a missing file, for the agent
    // to analyse (tests/cli/checkpoints.rs); not 5, output it could not write.
    assert_eq!(status.code(), Some(3), "{}", repo.status());
    assert_ne!(repo.tip(), before, "the step was recorded");
    // Nothing the command printed went into a file of the repository's.
    let fsck = repo.git_run(&["fsck", "--no-dangling"]);
    fsck.expect(0);
    repo.run(&["get-task"]).expect(0);
}
