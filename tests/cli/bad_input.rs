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

/// `attest --signing-key` (note or DSSE) and `resume --sign-key` given `/dev/zero`, a FIFO,
/// a link to a device, a directory or a file over 64 KiB: refused at once (exit 2), nothing
/// judged or written.
#[test]
fn key_files_that_are_devices_or_fifos_are_refused_at_once() {
    let repo = TestRepo::new();
    let (dir, fifo) = fifo();
    let fifo = fifo.to_str().unwrap();
    // A link to a device, a directory (and a link to one), a file over 64 KiB: refused
    // alike, read no further than the cap.
    let zero_link = dir.path().join("zero-link");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    let dir_link = dir.path().join("dir-link");
    std::os::unix::fs::symlink(dir.path(), &dir_link).unwrap();
    let huge = dir.path().join("huge");
    std::fs::write(&huge, vec![b'k'; 64 * 1024 + 1]).unwrap();
    let others = [
        (
            zero_link.to_str().unwrap(),
            "it is a device, not a regular file",
        ),
        (
            dir.path().to_str().unwrap(),
            "it is a directory, not a regular file",
        ),
        (
            dir_link.to_str().unwrap(),
            "it is a directory, not a regular file",
        ),
        (
            huge.to_str().unwrap(),
            "it is larger than the limit of 65536 bytes, and is not read",
        ),
    ];
    for (key, says) in others {
        for args in [
            vec!["attest", "--signing-key", key, "HEAD"],
            vec!["attest", "--format", "dsse", "--signing-key", key, "HEAD"],
        ] {
            refused_at_once(&repo, &args, says);
        }
    }
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
    for (key, says) in others {
        refused_at_once(&repo, &["resume", "--sign-key", key], says);
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

/// Every text field of every ticket tool over its cap (docs/tickets.md, "The tools"): 64 KiB,
/// or 256 KiB for the longer texts, given as JSON on stdin: exit 2 naming the field, out of
/// turn (the state is read after the input) and in turn, and nothing written.
#[test]
fn every_ticket_text_field_is_capped_in_turn_and_out_of_turn() {
    let repo =
        TestRepo::with_config("[[preflight]]\nname = \"tests\"\ncommand = \"sh run_tests.sh\"\n");
    let body = repo.dir().join("body");
    std::fs::write(&body, "b".repeat(270_000)).unwrap();
    repo.run(&[
        "ticket",
        "new",
        "--title",
        "T",
        "--body",
        body.to_str().unwrap(),
    ])
    .expect(2)
    .warns("the report is 270000 bytes long; at most 262144 bytes (256 KiB) are taken");
    repo.run(&["ticket", "new", "--title", "Caps"]).expect(0);
    let long = "x".repeat(70_000);
    let longer = "x".repeat(270_000);
    let summary = "is 70000 bytes long; at most 65536 bytes (64 KiB) are taken";
    let report = "is 270000 bytes long; at most 262144 bytes (256 KiB) are taken";
    let assign = |field: &str, value: serde_json::Value| {
        let mut input = serde_json::json!({"mode": "implementation", "goal": "g",
                                           "acceptanceCriteria": ["ok"]});
        input[field] = value;
        ("assign", "manager", input)
    };
    let blocked = |details: serde_json::Value| {
        serde_json::json!({"status": "blocked", "filesChanged": [], "buildStatus": "fail",
                           "message": "m", "blockerDetails": details})
    };
    let complete = |field: &str, value: serde_json::Value| {
        let mut input = serde_json::json!({"status": "complete", "filesChanged": [],
                                           "buildStatus": "pass", "message": "m"});
        input[field] = value;
        ("subtask-complete", "developer", input)
    };
    let cases = [
        (assign("goal", long.clone().into()), "goal", summary),
        (
            assign("acceptanceCriteria", serde_json::json!([long])),
            "acceptanceCriteria[0]",
            summary,
        ),
        (
            assign("filesToInspect", serde_json::json!([long])),
            "filesToInspect[0]",
            summary,
        ),
        (
            assign("filesToModify", serde_json::json!([long])),
            "filesToModify[0]",
            summary,
        ),
        (
            assign("constraints", serde_json::json!([long])),
            "constraints[0]",
            summary,
        ),
        (
            assign("priorContext", longer.clone().into()),
            "priorContext",
            report,
        ),
        (complete("message", long.clone().into()), "message", summary),
        (
            complete(
                "filesChanged",
                serde_json::json!([{"path": "a", "summary": long}]),
            ),
            "filesChanged[0].summary",
            summary,
        ),
        (
            (
                "subtask-complete",
                "developer",
                blocked(serde_json::json!({"issue": longer})),
            ),
            "blockerDetails.issue",
            report,
        ),
        (
            (
                "subtask-complete",
                "developer",
                blocked(serde_json::json!({"tried": [long]})),
            ),
            "blockerDetails.tried[0]",
            summary,
        ),
        (
            (
                "subtask-complete",
                "developer",
                blocked(serde_json::json!({"needed": longer})),
            ),
            "blockerDetails.needed",
            report,
        ),
        (
            (
                "update-subtask",
                "manager",
                serde_json::json!({"status": "complete", "notes": long}),
            ),
            "notes",
            summary,
        ),
        (
            (
                "update-subtask",
                "manager",
                serde_json::json!({"status": "complete", "notes": "n", "override": long}),
            ),
            "override",
            summary,
        ),
        (
            (
                "complete-ticket",
                "manager",
                serde_json::json!({"summary": long}),
            ),
            "summary",
            summary,
        ),
    ];
    let check = |when: &str| {
        let before = repo.git(&["for-each-ref"]);
        for ((tool, role, input), path, says) in &cases {
            let out = repo.run_with_stdin(
                &[tool, "--role", role, "--json-input", "-"],
                &input.to_string(),
            );
            assert_eq!(out.code, 2, "{tool} {path} {when}:\n{}", out.stderr);
            let line = out
                .stderr
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("- {path}:")))
                .unwrap_or_else(|| panic!("{tool} {path} {when}: not named:\n{}", out.stderr));
            assert!(line.ends_with(says), "{tool} {path} {when}: {line}");
        }
        assert_eq!(
            repo.git(&["for-each-ref"]),
            before,
            "{when}: nothing written"
        );
    };
    // The manager's turn: the developer's tool, `update-subtask` and `complete-ticket` are out
    // of turn.
    check("in MANAGER");
    repo.run(&[
        "assign",
        "--role",
        "manager",
        "--mode",
        "implementation",
        "--goal",
        "g",
        "--acceptance-criteria",
        "ok",
    ])
    .expect(0);
    // The developer's turn: every manager tool is out of turn.
    check("in DEVELOPER");
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
    // A heading is one line: a key with a line break or an escape names no PR either (its
    // slug, `a-b`, would be another PR's).
    for key in ["a\nb", "a\u{1b}[31mb", "pr-1\r"] {
        for verb in ["steal", "release"] {
            repo.human(&["claim", verb, key])
                .expect(2)
                .warns("names no PR: a PR's key or heading holds no control character");
        }
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

/// A FIFO as a `.gitignore`: `git status`, which `board` runs in each worktree and
/// `worktree list` in every one, would wait on it for ever. The board says so for that
/// worktree and shows the rest; `worktree list` refuses at once, naming it.
#[test]
fn a_fifo_where_git_status_reads_is_named_not_waited_on() {
    let repo = TestRepo::at_green_step();
    std::fs::create_dir_all(repo.dir().join("sub")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(repo.dir().join("sub/.gitignore"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let says = "sub/.gitignore is not a regular file (a FIFO, socket or device): git reads it \
                as an ignore or attributes file and would wait on it for ever";
    let start = Instant::now();
    let board = repo.run(&["board"]);
    assert!(start.elapsed() < Duration::from_secs(60), "board hung");
    board.expect(0);
    assert!(
        board.stdout.contains("main      EXECUTING_TDD"),
        "{}",
        board.stdout
    );
    assert!(
        board.stdout.contains("cannot be looked at"),
        "{}",
        board.stdout
    );
    assert!(board.stdout.contains(says), "{}", board.stdout);
    refused_at_once(&repo, &["worktree", "list"], says);
}

/// A FIFO where git reads an ignore or attributes file: `git add` would wait on it for
/// ever, and the step with it. On either road to the working tree's tree (in-process, or
/// `git add` where a `.gitattributes` or a setting leaves it to git), a passing step is
/// refused at once, naming it, and nothing is recorded. One git does not read (a
/// `.gitignore` in an ignored directory) does not stop the step.
#[test]
fn a_fifo_as_an_ignore_or_attributes_file_is_refused_not_waited_on() {
    let deep = format!("{}.gitignore", "d/".repeat(300));
    let cases: &[(&str, bool, &str)] = &[
        // (the FIFO, a `.gitattributes` leaves the tree to git, what it names)
        ("sub/.gitignore", false, "sub/.gitignore"),
        (".git/info/exclude", false, ".git/info/exclude"),
        ("sub/.gitignore", true, "sub/.gitignore"),
        (".git/info/exclude", true, ".git/info/exclude"),
        ("sub/.gitattributes", true, "sub/.gitattributes"),
        (".gitattributes", false, ".gitattributes"),
        (".git/info/attributes", false, ".git/info/attributes"),
        (&deep, true, "d/d/d/"),
        ("outside-exclude", false, "outside-exclude"),
    ];
    for (at, attributes, names) in cases {
        let repo = TestRepo::at_green_step();
        if *attributes {
            std::fs::write(repo.dir().join(".gitattributes"), "*.md text\n").expect("write");
        }
        let path = if *at == "outside-exclude" {
            let outside = repo.dir().join(".git").join("outside-exclude");
            repo.git(&[
                "config",
                "core.excludesFile",
                &outside.display().to_string(),
            ]);
            outside
        } else {
            repo.dir().join(at)
        };
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        let _ = std::fs::remove_file(&path);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let tip = repo.tip();
        let out = refused_at_once(
            &repo,
            &["submit-work", "-s", "add", "--test-command", RED],
            "is not a regular file (a FIFO, socket or device): git reads it as an ignore or \
             attributes file and would wait on it for ever",
        );
        assert!(out.stderr.contains(names), "{at}: {}", out.stderr);
        assert_eq!(repo.tip(), tip, "{at}: nothing recorded");
    }
    // git walks no ignored directory the index has nothing in, and reads no ignore file in
    // one it has: neither FIFO stops the step, on git's road.
    let repo = TestRepo::at_green_step();
    std::fs::write(repo.dir().join(".gitattributes"), "*.md text\n").expect("write");
    std::fs::write(repo.dir().join(".gitignore"), "build/\n").expect("write");
    std::fs::create_dir_all(repo.dir().join("build")).expect("mkdir");
    let made = std::process::Command::new("mkfifo")
        .arg(repo.dir().join("build/.gitignore"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let tip = repo.tip();
    let start = Instant::now();
    let out = repo.human(&["submit-work", "-s", "add", "--test-command", RED]);
    assert!(start.elapsed() < Duration::from_secs(60), "the step hung");
    out.expect(0);
    assert_ne!(repo.tip(), tip, "the step was recorded");
    // `/dev/null`, a device too, reads as empty at once: as the excludes file, and as the
    // user's configuration (`GIT_CONFIG_GLOBAL=/dev/null`, as scripts and CI keep it out).
    let repo = TestRepo::at_green_step();
    repo.git(&["config", "core.excludesFile", "/dev/null"]);
    let tip = repo.tip();
    let out = Run::from(
        repo.command(BIN, ["submit-work", "-s", "add", "--test-command", RED])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run"),
    );
    out.expect(0);
    assert_ne!(repo.tip(), tip, "the step was recorded");
}

/// A FIFO (or a link to `/dev/zero`) where git keeps one of its files: the command that
/// reads it ends at once, saying which file is no regular file. Each was opened, or read,
/// for ever, and the command with it (gix and git open them with a plain `open`). Where
/// git-orchestrate keeps a record of its own it can do without, the command goes on as
/// without it.
#[test]
fn fifos_and_devices_where_git_keeps_its_files_are_refused_not_waited_on() {
    let cases: &[(&str, &[&str])] = &[
        (".git/HEAD", &["get-task"]),
        (".git/config", &["get-task"]),
        ("~/.gitconfig", &["get-task"]),
        (".git/packed-refs", &["get-task"]),
        (".git/objects/info/alternates", &["get-task"]),
        (".git/refs/heads/main", &["get-task"]),
        (".git/refs/orchestrator/workflows/main", &["status"]),
        ("the workflow's tip object", &["status"]),
        (
            ".git/logs/refs/orchestrator/workflows/main",
            &["submit-work", "-s", "s", "--test-command", RED],
        ),
        // A record of git-orchestrate's own it can do without: read as none.
        (".git/orchestrator/tips/main", &["audit"]),
        (".git/orchestrator/plan-pushes/main", &["get-task"]),
        (
            ".git/index",
            &["submit-work", "-s", "s", "--test-command", RED],
        ),
    ];
    for (at, args) in cases {
        for device in [false, true] {
            let repo = TestRepo::at_green_step();
            let path = match *at {
                "~/.gitconfig" => repo.home().join(".gitconfig"),
                "the workflow's tip object" => {
                    let tip = repo.tip().expect("a workflow");
                    repo.dir()
                        .join(".git/objects")
                        .join(&tip[..2])
                        .join(&tip[2..])
                }
                _ => repo.dir().join(at),
            };
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            let _ = std::fs::remove_file(&path);
            if device {
                std::os::unix::fs::symlink("/dev/zero", &path).expect("a link to /dev/zero");
            } else {
                let made = std::process::Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .expect("mkfifo");
                assert!(made.success());
            }
            let mut timed = vec!["60", BIN];
            timed.extend(args.iter().copied());
            let out = repo
                .command("timeout", &timed)
                .env("GIT_ORCHESTRATE_HUMAN", "1")
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_ne!(
                out.status.code(),
                Some(124),
                "{at} ({device}): {args:?} hung"
            );
            if at.starts_with(".git/orchestrator/") {
                assert!(out.status.success(), "{at} ({device}): {args:?}: {stderr}");
                continue;
            }
            assert!(
                !out.status.success(),
                "{at} ({device}): {args:?} went on: {stderr}"
            );
            assert!(
                stderr.contains("is not a regular file"),
                "{at} ({device}): {args:?}: {stderr}"
            );
        }
    }
}

/// `args` run in `repo` as a human would, ended after a minute: a git left waiting on a
/// FIFO would otherwise hold the test for ever instead of failing it.
#[track_caller]
fn human_within_a_minute(repo: &TestRepo, args: &[&str]) -> Run {
    let mut timed = vec!["60", BIN];
    timed.extend_from_slice(args);
    let out = repo
        .command("timeout", &timed)
        .env("GIT_ORCHESTRATE_HUMAN", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_ne!(out.status.code(), Some(124), "{args:?} hung");
    Run::from(out)
}

/// The passing step of `repo` ends, within a minute, recorded.
#[track_caller]
fn passes_and_is_recorded(repo: &TestRepo) {
    let tip = repo.tip();
    human_within_a_minute(
        repo,
        &["submit-work", "-s", "add", "--test-command", "sh add.sh"],
    )
    .expect(0);
    assert_ne!(repo.tip(), tip, "the step was recorded");
}

fn mkfifo(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(made.success());
}

/// `git status` runs in each submodule and reads its ignore files; `git add` does not
/// enter it. A FIFO as a submodule's `.gitignore` is named by `board` (for that worktree)
/// and `worktree list` at once, and does not stop a passing step, on git's road too.
#[test]
fn a_fifo_in_a_submodule_stops_what_runs_git_status_there_not_the_step() {
    let repo = TestRepo::at_green_step();
    let inner = tempfile::tempdir().expect("tmp");
    let inner_repo = inner.path().join("inner");
    for args in [
        &["init", "-q", inner_repo.to_str().expect("utf-8")][..],
        &[
            "-C",
            inner_repo.to_str().expect("utf-8"),
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "i",
        ],
    ] {
        repo.git(args);
    }
    repo.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        inner_repo.to_str().expect("utf-8"),
        "vendored",
    ]);
    repo.git(&["commit", "-q", "-m", "a submodule"]);
    mkfifo(&repo.dir().join("vendored/d/.gitignore"));
    let says = "vendored/d/.gitignore is not a regular file (a FIFO, socket or device)";
    let board = human_within_a_minute(&repo, &["board"]);
    board.expect(0);
    assert!(
        board.stdout.contains("cannot be looked at"),
        "{}",
        board.stdout
    );
    assert!(board.stdout.contains(says), "{}", board.stdout);
    human_within_a_minute(&repo, &["worktree", "list"])
        .expect(2)
        .warns(says);
    // A `.gitattributes` leaves the tree to `git add`, which does not read the submodule.
    repo.write(".gitattributes", "*.md text\n");
    passes_and_is_recorded(&repo);
    // A directory the submodule's own `.gitignore` ignores, git does not enter: a FIFO
    // there stops nothing.
    std::fs::remove_file(repo.dir().join("vendored/d/.gitignore")).expect("rm");
    repo.write("vendored/.gitignore", "build/\n");
    mkfifo(&repo.dir().join("vendored/build/.gitignore"));
    human_within_a_minute(&repo, &["worktree", "list"]).expect(0);
    let board = human_within_a_minute(&repo, &["board"]);
    board.expect(0);
    assert!(
        !board.stdout.contains("cannot be looked at"),
        "{}",
        board.stdout
    );
}

/// An index our tree reader leaves to git (an intent-to-add entry) may have files in an
/// ignored directory, whose attributes `git add` then reads: a FIFO `.gitattributes` there
/// is refused at once. It waited for ever: the ignored directory was taken for one without
/// tracked files, and not looked into.
#[test]
fn a_fifo_in_an_ignored_directory_an_intent_to_add_index_has_files_in_is_refused() {
    let repo = TestRepo::at_green_step();
    repo.write(".gitattributes", "*.md text\n");
    repo.write(".gitignore", "build/\n");
    repo.write("build/x", "a\n");
    repo.git(&["add", "-f", "build/x", ".gitignore", ".gitattributes"]);
    repo.git(&[
        "commit",
        "-q",
        "-m",
        "a tracked file in an ignored directory",
    ]);
    repo.write("build/x", "b\n");
    repo.write("later", "n\n");
    repo.git(&["add", "-N", "later"]);
    mkfifo(&repo.dir().join("build/.gitattributes"));
    let tip = repo.tip();
    human_within_a_minute(
        &repo,
        &["submit-work", "-s", "add", "--test-command", "sh add.sh"],
    )
    .expect(2)
    .warns("build/.gitattributes is not a regular file (a FIFO, socket or device)");
    assert_eq!(repo.tip(), tip, "nothing recorded");
}

/// A directory the user's own ignore file (`core.excludesFile`) ignores is not entered by
/// git, nor by the check before it: a FIFO there does not stop the step.
#[test]
fn a_fifo_in_a_directory_the_global_ignore_file_ignores_does_not_stop_the_step() {
    let repo = TestRepo::at_green_step();
    repo.write(".gitattributes", "*.md text\n");
    let global = repo.home().join("ignore-these");
    std::fs::write(&global, "vendor/\n").expect("write");
    repo.git(&[
        "config",
        "core.excludesFile",
        global.to_str().expect("utf-8"),
    ]);
    mkfifo(&repo.dir().join("vendor/.gitignore"));
    passes_and_is_recorded(&repo);
    // Nor where the index is one our tree reader leaves to git (a file to be added, a
    // conflict): `git status` and the check before it walk what git walks.
    repo.write("later", "n\n");
    repo.git(&["add", "-N", "later"]);
    human_within_a_minute(&repo, &["worktree", "list"]).expect(0);
}

/// What a variable keeps git from reading is not refused: `~/.gitconfig` (and the XDG
/// one) under `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`'s file under `GIT_CONFIG_NOSYSTEM`.
/// What it names instead is checked.
#[test]
fn a_fifo_git_is_told_not_to_read_is_not_refused() {
    let repo = TestRepo::at_green_step();
    mkfifo(&repo.home().join(".gitconfig"));
    mkfifo(&repo.home().join(".config/git/config"));
    let system = repo.home().join("system-config");
    mkfifo(&system);
    let global = repo.home().join("global-config");
    std::fs::write(&global, "[user]\n\tname = T\n").expect("write");
    let run = |vars: &[(&str, &std::path::Path)]| {
        let mut cmd = repo.command("timeout", ["60", BIN, "status"]);
        // The tests' own settings, for the defaults' case.
        cmd.env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("GIT_CONFIG_NOSYSTEM");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        assert_ne!(out.status.code(), Some(124), "{vars:?}: status hung");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for yes in ["1", "true", "Yes", "on"] {
        let (ok, stderr) = run(&[
            ("GIT_CONFIG_GLOBAL", &global),
            ("GIT_CONFIG_SYSTEM", &system),
            ("GIT_CONFIG_NOSYSTEM", std::path::Path::new(yes)),
        ]);
        assert!(ok, "{yes}: {stderr}");
    }
    // Set but empty: no user configuration at all.
    let (ok, stderr) = run(&[("GIT_CONFIG_GLOBAL", std::path::Path::new(""))]);
    assert!(ok, "{stderr}");
    // A false `GIT_CONFIG_NOSYSTEM`, as git reads a boolean: the system file is read.
    for no in ["0", "FALSE", "No", "off"] {
        let (ok, stderr) = run(&[
            ("GIT_CONFIG_GLOBAL", &global),
            ("GIT_CONFIG_SYSTEM", &system),
            ("GIT_CONFIG_NOSYSTEM", std::path::Path::new(no)),
        ]);
        assert!(
            !ok && stderr.contains("system-config is not a regular file"),
            "{no}: {stderr}"
        );
    }
    let (ok, stderr) = run(&[
        ("GIT_CONFIG_GLOBAL", &global),
        ("GIT_CONFIG_SYSTEM", &system),
    ]);
    assert!(
        !ok && stderr.contains("system-config is not a regular file"),
        "{stderr}"
    );
    // In the order gix reads them: the XDG file, then `~/.gitconfig`.
    let (ok, stderr) = run(&[]);
    assert!(
        !ok && stderr.contains("/.config/git/config is not a regular file"),
        "{stderr}"
    );
    std::fs::remove_file(repo.home().join(".config/git/config")).expect("rm");
    let (ok, stderr) = run(&[]);
    assert!(
        !ok && stderr.contains("/.gitconfig is not a regular file"),
        "{stderr}"
    );
}
