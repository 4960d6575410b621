//! The store's own reading of a plain repository (src/store/layout.rs) against what gix
//! reads where the repository is not plain: one view of the refs, reads and writes alike.

use crate::support::*;

/// Under `GIT_NAMESPACE` every ref is under `refs/namespaces/<ns>/`, as gix reads them: the
/// workflow made outside the namespace is not this one, and nothing reads it while writes
/// go through the namespace.
#[test]
fn a_namespaced_repository_is_read_and_written_through_one_view() {
    let repo = TestRepo::new();
    repo.submit_plan(PLAN).expect(0);
    let outside = repo.run(&["status"]);
    assert_eq!(outside.code, 0, "{}", outside.stderr);
    assert!(
        outside.stdout.contains("CREATING_BRANCH"),
        "{}",
        outside.stdout
    );
    let listed = || {
        repo.git(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/orchestrator/",
        ])
    };
    let before = listed();
    for args in [
        &["status"][..],
        &["get-task"],
        &["submit-work", "-s", "s", "--test-command", "false"],
    ] {
        let run = Run::from(
            repo.command(BIN, args)
                .env("GIT_NAMESPACE", "ns")
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run"),
        );
        assert!(
            !run.stdout.contains("CREATING_BRANCH")
                && !run.stderr.contains("Could not prepare reference edit"),
            "{args:?} under a namespace read the workflow outside it:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
    assert_eq!(listed(), before, "nothing outside the namespace moved");
}

/// An empty directory where a workflow ref's log goes is taken away, as gix and git take
/// it, and the ref moves with its log written.
#[test]
fn an_empty_directory_where_the_log_goes_is_no_obstacle() {
    let repo = TestRepo::new();
    let log = repo
        .dir()
        .join(".git/logs/refs/orchestrator/workflows/main");
    std::fs::create_dir_all(&log).expect("the directory");
    repo.submit_plan(PLAN).expect(0);
    assert!(log.is_file(), "the log is a file");
    let lines = std::fs::read_to_string(&log).expect("the log");
    let moves: Vec<&str> = lines.lines().filter_map(|l| l.split('\t').nth(1)).collect();
    assert_eq!(
        moves,
        [
            "git-orchestrate: create: (none) -> INITIALIZING",
            "git-orchestrate: plan: INITIALIZING -> CREATING_BRANCH"
        ]
    );
}
