//! What a crash, a kill or a full disk leaves behind, and how the next command copes:
//! scratch files, stale locks, deleted refs, commits made but not recorded.

use std::process::Stdio;

use pretty_assertions::assert_eq;

use crate::support::{BIN, RED, Run, TestRepo};

fn run_with_env(repo: &TestRepo, args: &[&str], env: &[(&str, &std::path::Path)]) -> Run {
    let mut cmd = repo.command(BIN, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(
        cmd.stdin(Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    )
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
    // Attributes: the working tree's tree is git's to take (`git add` into a scratch copy of
    // the index), not the store's in-process reading (src/store/worktree_tree.rs), which
    // makes no copy.
    repo.write(".gitattributes", "*.bin binary\n");
    run_with_env(
        &repo,
        &["submit-work", "-s", "add", "--test-command", "sh add.sh"],
        &[("TMPDIR", tmp.path())],
    )
    .expect(0);
    // Nothing but this user's scratch directories (where a test run's report directory is
    // made, and removed after it) is left in the system's temporary directory.
    fn files_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read").flatten() {
            let path = entry.path();
            if entry.file_type().expect("file type").is_dir() {
                files_under(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut in_tmp = Vec::new();
    files_under(tmp.path(), &mut in_tmp);
    assert!(
        in_tmp.is_empty(),
        "no file in the system temp dir: {in_tmp:?}"
    );
    assert!(!leftover.exists(), "the killed command's copy is cleared");
    let left: Vec<_> = std::fs::read_dir(&scratch).expect("read").collect();
    assert!(
        left.is_empty(),
        "our own copy is removed when done: {left:?}"
    );
}

/// A plain working tree's tree is taken in-process (src/store/worktree_tree.rs): no copy of
/// the index is made, so none can be left by a kill, and the user's index is not written.
#[test]
fn a_plain_working_tree_s_tree_makes_no_scratch_index_and_leaves_the_index_alone() {
    let repo = TestRepo::at_green_step();
    let index = repo.dir().join(".git/index");
    let before = std::fs::read(&index).expect("the index");
    repo.submit_test(RED, None).expect(0);
    let scratch = repo.dir().join(".git/orchestrator/scratch");
    let copies: Vec<_> = std::fs::read_dir(&scratch)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(copies.is_empty(), "no scratch index: {copies:?}");
    assert_eq!(std::fs::read(&index).expect("the index"), before);
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

/// An empty lock left by a crash: the command runs the agent's test once, sees the same
/// lock over a still ref, and stops naming it, instead of retrying for half a minute.
#[test]
fn a_lock_left_by_a_crash_is_reported_after_one_test_run() {
    let repo = TestRepo::at_green_step();
    let counter = crate::support::counter_file(&repo, "lock-test-runs");
    let lock = repo
        .dir()
        .join(".git/refs/orchestrator/workflows/main.lock");
    std::fs::write(&lock, b"").expect("lock");
    let before = repo.tip();
    repo.write("add.sh", "echo 5\n");
    let command = format!("echo run >> '{}'; sh add.sh", counter.display());
    let out = repo.run(&["submit-work", "-s", "add", "--test-command", &command]);
    out.expect(5);
    assert_eq!(
        crate::support::runs(&counter),
        1,
        "the test command ran once"
    );
    assert!(
        out.stderr.starts_with(&format!(
            "error: workflow ref refs/orchestrator/workflows/main is locked by {}",
            lock.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("The workflow state was not changed"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("kept changing"), "{}", out.stderr);

    let status = repo.run(&["status", "--json"]);
    status.expect(0);
    assert_eq!(
        status.json()["locks"][0]["path"],
        lock.display().to_string()
    );
    let doctor = repo.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains(&format!("is locked by {}", lock.display())),
        "{}",
        doctor.stdout
    );

    std::fs::remove_file(&lock).expect("unlock");
    assert_eq!(repo.tip(), before, "nothing was written while locked");
    repo.submit_test("sh add.sh", None).expect(0);
}

/// The notes ref locked: the checkpoint's commit is made and kept, the error names the
/// notes ref and says so, and once the lock is gone get-task attaches the missing note.
#[test]
fn a_locked_notes_ref_keeps_the_commit_and_get_task_attaches_the_note_later() {
    let repo = TestRepo::at_green_step();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    let lock = repo.dir().join(".git/refs/notes/orchestrator.lock");
    std::fs::create_dir_all(lock.parent().expect("dir")).expect("mkdir");
    std::fs::write(&lock, b"").expect("lock");
    let out = repo.run(&["checkpoint"]);
    out.expect(5);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert!(
        out.stderr.starts_with(&format!(
            "error: checkpoint commit {} was made and is kept, but recording it failed: the notes ref \
             refs/notes/orchestrator is locked by {}",
            &head[..12],
            lock.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("a commit this command made is kept"),
        "{}",
        out.stderr
    );
    assert!(
        repo.git(&["log", "-1", "--format=%s"])
            .starts_with("checkpoint: 1.2")
    );

    std::fs::remove_file(&lock).expect("unlock");
    repo.run(&["get-task"]).expect(0);
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]).trim(),
        head,
        "no second commit"
    );
    let note = repo.git(&["notes", "--ref=orchestrator", "show", &head]);
    assert!(note.contains(r#""kind":"checkpoint""#), "{note}");
    repo.run(&["verify"]).expect(0);
}

/// A checkpoint killed right after its `git commit`: the commit is there, with no note and
/// not recorded. The next `checkpoint` notes and records it instead of committing again.
#[test]
fn a_checkpoint_cut_short_after_its_commit_is_finished_not_repeated() {
    let repo = TestRepo::at_green_step();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    // What `checkpoint` had done when it was killed: staged and committed, nothing more.
    repo.git(&["add", "--all"]);
    repo.git(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "checkpoint: 1.2 implement add\n\nOrchestrator-Checkpoint: 1.2",
    ]);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let out = repo.run(&["checkpoint"]);
    out.expect(0);
    assert!(
        out.stdout
            .contains("recorded the checkpoint commit an interrupted run had made"),
        "{}",
        out.stdout
    );
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]).trim(),
        head,
        "no second commit"
    );
    assert_eq!(repo.state()["last_commit_hash"], head.as_str());
    assert_eq!(repo.state()["pending"], serde_json::Value::Null);
    let note = repo.git(&["notes", "--ref=orchestrator", "show", &head]);
    assert!(note.contains(r#""step":"1.2""#), "{note}");
    repo.run(&["verify"]).expect(0);
}

/// Nothing changed: a checkpoint nobody owes is refused with no commit; an owed one (a
/// REFACTOR that changed nothing) is recorded on the last checkpoint, with no empty commit.
#[test]
fn a_checkpoint_with_no_change_makes_no_commit() {
    let repo = TestRepo::at_green_step();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let tip = repo.tip();
    let out = repo.run(&["checkpoint", "-m", "again"]);
    out.expect(4);
    assert!(
        out.stderr.starts_with(&format!(
            "error: checkpoint refused: nothing changed since the last checkpoint (HEAD is {} checkpoint: 1.2 implement add)",
            &head[..12]
        )),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip, "the state is unchanged");
    // REFACTOR 1.3 changes nothing: its owed checkpoint is the last one.
    repo.run(&["get-task"]).expect(0);
    repo.submit_test("sh add.sh", None).expect(0);
    let out = repo.run(&["--json", "checkpoint"]);
    out.expect(0);
    let json = out.json();
    assert_eq!(json["new_commit"], false);
    assert_eq!(json["recorded_without_commit"], "unchanged");
    assert_eq!(json["step"], "1.3");
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]).trim(),
        head,
        "no empty commit"
    );
    assert_eq!(repo.git(&["rev-list", "--count", "main..HEAD"]).trim(), "1");
}

/// Build output a test run left untracked is listed, and a .gitignore line suggested.
#[test]
fn a_checkpoint_lists_the_untracked_files_it_adds_and_flags_build_output() {
    let repo = TestRepo::at_green_step();
    repo.write("add.sh", "echo 5\n");
    repo.write("__pycache__/add.cpython-311.pyc", "bytecode");
    repo.submit_test("sh add.sh", None).expect(0);
    let out = repo.run(&["checkpoint"]);
    out.expect(0);
    assert!(
        out.stdout.contains(
            "added 2 files that git did not track before: __pycache__/add.cpython-311.pyc, add.sh\n\
             warning: some of them look like build output, now committed; if they are, add to .gitignore: __pycache__/"
        ),
        "{}",
        out.stdout
    );
    repo.write("docs/notes.md", "more\n");
    let json = repo
        .run(&["--json", "checkpoint", "-m", "notes"])
        .expect(0)
        .json();
    assert_eq!(
        json["untracked_added"],
        serde_json::json!(["docs/notes.md"])
    );
    assert_eq!(json["gitignore_suggestions"], serde_json::json!([]));
}

/// A test command that deletes the workflow ref: the next get-task does not start a new
/// workflow over the old one's history; it names the last tip and how to restore it.
#[test]
fn a_deleted_workflow_ref_is_not_silently_replaced() {
    let repo = TestRepo::at_green_step();
    let tip = repo.tip().expect("a workflow");
    let out = repo.submit_test(
        "git update-ref -d refs/orchestrator/workflows/main; sh add.sh",
        None,
    );
    // The submit itself lost its ref mid-way: it may fail, but never recreate.
    assert_ne!(out.code, 0, "{}{}", out.stdout, out.stderr);
    repo.git(&["update-ref", "-d", "refs/orchestrator/workflows/main"]);
    for args in [&["get-task"][..], &["init", "--no-hooks"][..]] {
        let out = repo.run(args);
        out.expect(5);
        assert!(
            out.stderr.starts_with(&format!(
                "error: workflow ref refs/orchestrator/workflows/main is missing, but the workflow existed here \
                 (its last tip was {tip})"
            )),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(&format!(
                "hint: Restore it: git update-ref refs/orchestrator/workflows/main {tip}"
            )),
            "{}",
            out.stderr
        );
        assert_eq!(repo.tip(), None, "{args:?} created nothing");
    }
    let status = repo.run(&["status"]);
    status.expect(0);
    assert!(
        status
            .stdout
            .contains(&format!("its ref was deleted (last tip {tip})")),
        "{}",
        status.stdout
    );
    repo.git(&["update-ref", "refs/orchestrator/workflows/main", &tip]);
    assert_eq!(repo.status(), "EXECUTING_TDD");

    // On purpose: --new starts over (and refuses while the workflow exists).
    repo.run(&["init", "--no-hooks", "--new"]).expect(4);
    repo.git(&["update-ref", "-d", "refs/orchestrator/workflows/main"]);
    repo.run(&["init", "--no-hooks", "--new"]).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    repo.run(&["get-task"]).expect(0);
}

/// A kill between the workflow ref's move and the tip marker's rewrite leaves the marker one
/// transition behind, and the intent file the write left before it moved the ref: `audit`
/// and `doctor` pass. A marker behind that no intent explains (a move made with `git
/// update-ref`, even with our reflog message) is still reported.
#[test]
fn a_tip_marker_one_transition_behind_after_a_kill_is_no_forgery() {
    let repo = TestRepo::at_first_step();
    let before = repo.tip().unwrap();
    let older = repo
        .git(&["rev-parse", &format!("{before}^")])
        .trim()
        .to_string();
    repo.submit_test(crate::support::RED, Some("FAIL"))
        .expect(3);
    let after = repo.tip().unwrap();
    let tips = repo.path.join(".git/orchestrator/tips");
    std::fs::write(tips.join("main"), format!("{before}\n")).unwrap();
    // As the killed write left it.
    std::fs::write(tips.join("main.intent.4242"), format!("{before} {after}\n")).unwrap();
    repo.run(&["audit"]).expect(0);
    let doctor = repo.run(&["doctor", "--json"]).json();
    assert!(!doctor.to_string().contains("moved on from"), "{doctor:#}");

    // Without the intent, the same move is something else's, whatever the reflog says.
    std::fs::remove_file(tips.join("main.intent.4242")).unwrap();
    repo.run(&["audit"]).expect(1).says(&format!(
        "was moved on from {before}, the tip git-orchestrate last wrote, by something else"
    ));
    repo.git(&[
        "update-ref",
        "-m",
        "git-orchestrate: forged",
        crate::support::REF,
        &after,
        &after,
    ]);
    repo.run(&["audit"]).expect(1);

    // A longer move (a sync's fast-forward) cut short the same way: its intent names it.
    std::fs::write(tips.join("main"), format!("{older}\n")).unwrap();
    std::fs::write(tips.join("main.intent.4242"), format!("{older} {after}\n")).unwrap();
    repo.run(&["audit"]).expect(0);
    // An intent for another move explains nothing.
    std::fs::write(tips.join("main.intent.4242"), format!("{before} {after}\n")).unwrap();
    repo.run(&["audit"]).expect(1).says(&format!(
        "was moved on from {older}, the tip git-orchestrate last wrote, by something else"
    ));
    // Two writes in a row killed there: each left its intent, and together they lead from
    // the marker to the tip.
    std::fs::write(tips.join("main.intent.4243"), format!("{older} {before}\n")).unwrap();
    repo.run(&["audit"]).expect(0);

    // The next write leaves the marker at the tip again, and the intents explain nothing any
    // more: it removes them (not a marker of a workflow named like one, which holds one id).
    std::fs::write(tips.join("main.intent.77"), format!("{after}\n")).unwrap();
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    let mut left: Vec<String> = std::fs::read_dir(&tips)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("main.intent."))
        .collect();
    left.sort();
    // `main.intent.0` is the writers' own, cleared (one word names no move).
    assert_eq!(left, ["main.intent.0", "main.intent.77"]);
    assert_eq!(
        std::fs::read_to_string(tips.join("main.intent.0"))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["-"]
    );
    repo.run(&["audit"]).expect(0);
}

/// Writers taking turns note their intent in one file written over in place
/// (`main.intent.0`) and clear it after the marker, so no file is made or removed at each
/// write. An intent a killed writer left there stays, explaining its move, until a write
/// puts the marker back at the tip; the write that finds it notes its own intent in a file of
/// its own meanwhile.
#[test]
fn the_intent_slot_is_written_over_in_place_and_a_killed_writers_intent_stays_there() {
    use std::os::unix::fs::MetadataExt as _;
    let repo = TestRepo::at_first_step();
    let tips = repo.path.join(".git/orchestrator/tips");
    let slot = tips.join("main.intent.0");
    let intents = || {
        let mut names: Vec<String> = std::fs::read_dir(&tips)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("main.intent."))
            .collect();
        names.sort();
        names
    };
    let words = || {
        std::fs::read_to_string(&slot)
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    repo.submit_test(crate::support::RED, Some("FAIL"))
        .expect(3);
    assert_eq!(intents(), ["main.intent.0"]);
    assert_eq!(words(), ["-"]);
    let inode = std::fs::metadata(&slot).unwrap().ino();
    let before = repo.tip().unwrap();
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    let after = repo.tip().unwrap();
    assert_ne!(before, after);
    assert_eq!(
        std::fs::metadata(&slot).unwrap().ino(),
        inode,
        "written over in place"
    );
    assert_eq!(words(), ["-"]);
    assert_eq!(intents(), ["main.intent.0"]);

    // As a writer killed between the ref's move and the marker's rewrite leaves them.
    std::fs::write(tips.join("main"), format!("{before}\n")).unwrap();
    std::fs::write(&slot, format!("{before} {after}\n")).unwrap();
    repo.run(&["audit"]).expect(0);
    // Cleared, it explains nothing.
    std::fs::write(&slot, format!("-{}\n", " ".repeat(80))).unwrap();
    repo.run(&["audit"]).expect(1).says(&format!(
        "was moved on from {before}, the tip git-orchestrate last wrote, by something else"
    ));
    std::fs::write(&slot, format!("{before} {after}\n")).unwrap();

    // The next write, killed the same way: the slot's intent stays, and its own, in a
    // file of its own, carries the chain on to the tip.
    let killed = repo
        .command(
            crate::support::BIN,
            [
                "submit-work",
                "--summary",
                "did the step",
                "--test-command",
                crate::support::RED,
                "--expectation",
                "PASS",
            ],
        )
        .env("GIT_ORCHESTRATE_CRASH_AT", "ref-moved")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(killed.status.code(), None, "killed: {killed:?}");
    let moved = repo.tip().unwrap();
    assert_ne!(moved, after);
    assert_eq!(words(), [before.clone(), after.clone()]);
    let own: Vec<String> = intents()
        .into_iter()
        .filter(|name| name != "main.intent.0")
        .collect();
    assert_eq!(own.len(), 1, "{own:?}");
    assert_eq!(
        std::fs::read_to_string(tips.join(&own[0])).unwrap(),
        format!("{after} {moved}\n")
    );
    repo.run(&["audit"]).expect(0);

    // The next write leaves the marker at the tip: both intents explain nothing any more,
    // the slot is cleared and the other file removed.
    std::fs::remove_file(repo.path.join("add.sh")).ok();
    repo.submit_test(crate::support::RED, Some("PASS"))
        .expect(1);
    assert_eq!(
        std::fs::read_to_string(tips.join("main")).unwrap().trim(),
        repo.tip().unwrap()
    );
    assert_eq!(intents(), ["main.intent.0"]);
    assert_eq!(words(), ["-"]);
    repo.run(&["audit"]).expect(0);
}

/// A kill mid-append leaves the reflog's last line torn (`OLD NEW`, no newline). The next
/// write starts a line of its own, so git still lists its entry, and `audit` passes.
#[test]
fn a_torn_last_reflog_line_does_not_swallow_the_next_entry() {
    let repo = TestRepo::at_first_step();
    let tip = repo.tip().unwrap();
    let log = repo.path.join(".git/logs").join(crate::support::REF);
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("{tip} {tip}"));
    std::fs::write(&log, text).unwrap();
    // As a crash long enough ago leaves it.
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
    std::fs::File::options()
        .append(true)
        .open(&log)
        .unwrap()
        .set_modified(past)
        .unwrap();
    repo.run(&["audit"]).expect(0);
    repo.submit_test(crate::support::RED, Some("FAIL"))
        .expect(3);
    let new = repo.tip().unwrap();
    let listed = repo.git(&["reflog", "show", "--format=%H", crate::support::REF]);
    assert_eq!(listed.lines().next(), Some(new.as_str()), "{listed}");
    repo.run(&["audit"]).expect(0);
}

/// SIGKILL at random moments of a write, 200 times: after every kill the audit passes (no
/// false "FORGED" from a kill between the ref's move and the tip marker's), the history is one
/// line, and git finds nothing wrong in the end. Prints how many kills landed before, during
/// and after a write.
#[test]
fn kills_at_random_moments_of_a_write_leave_a_history_that_audits_clean() {
    use std::hash::{BuildHasher as _, Hasher as _};
    const KILLS: usize = 200;
    let repo = TestRepo::at_green_step();
    let mut seed = std::collections::hash_map::RandomState::new().build_hasher();
    let (mut before, mut wrote) = (0, 0);
    for i in 0..KILLS {
        seed.write_usize(i);
        let delay = std::time::Duration::from_micros(seed.finish() % 40_000);
        let tip = repo.tip();
        let mut child = repo
            .command(
                BIN,
                [
                    "submit-work",
                    "-s",
                    "killed",
                    "--test-command",
                    "false",
                    "--expectation",
                    "PASS",
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        if repo.tip() == tip {
            before += 1;
        } else {
            wrote += 1;
        }
        let audit = repo.run(&["audit"]);
        assert_eq!(
            audit.code, 0,
            "kill {i} after {delay:?}: {}{}",
            audit.stdout, audit.stderr
        );
    }
    eprintln!("{KILLS} kills: {before} before the write moved the ref, {wrote} at or after it");
    let chain = repo.git(&["rev-list", "--parents", crate::support::REF]);
    assert!(
        chain.lines().all(|l| l.split(' ').count() <= 2),
        "one straight line"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// Starts `submit-work -s s --test-command TEST` with each of HUP, INT and TERM at its
/// default, whatever this test was started ignoring (a shell's `cargo test &` ignores INT):
/// one ignored stays so (`a_signal_ignored_at_start_…` below).
fn submit_with_default_signals(repo: &TestRepo, test: &str) -> std::process::Child {
    repo.command(
        "env",
        [
            "--default-signal=HUP,INT,TERM",
            BIN,
            "submit-work",
            "-s",
            "s",
            "--test-command",
            test,
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("start submit-work")
}

/// Polls `ready` until it gives a value; panics naming `what` after 60 s.
fn wait_for<T>(what: &str, mut ready: impl FnMut() -> Option<T>) -> T {
    let started = std::time::Instant::now();
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `kill -SIGNAL PID`.
fn send(signal: &str, pid: u32) {
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// Asserts that each process group led by one of `pids` ends (their leaders' processes are
/// gone within 30 s: not a timing assertion of speed, a group left running never ends at
/// all); kills whatever is left first, so a failure leaves nothing looping.
fn assert_all_end(what: &str, pids: &[i32]) {
    let alive = |pid: i32| std::path::Path::new(&format!("/proc/{pid}")).exists();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while pids.iter().any(|&pid| alive(pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    for pid in &left {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &format!("-{pid}")])
            .status();
    }
    assert!(left.is_empty(), "{what} {left:?} run on");
}

/// The pid a command under test wrote to `file`, once it has.
fn pid_in(file: &std::path::Path) -> Option<i32> {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
}

/// `git orchestrate submit-work` ended by SIGTERM, SIGINT or SIGHUP (a supervisor's `kill
/// PID`, a client's tool timeout) while its test runs: the test, in a process group of its
/// own, ends with it, and nothing is recorded. It ran on, orphaned, however long it looped.
#[test]
fn a_command_ended_by_a_signal_ends_its_running_test_too() {
    for signal in ["TERM", "INT", "HUP"] {
        let repo = TestRepo::at_green_step();
        let tip = repo.tip();
        let pid_file = repo.dir().join(".git/test-pid");
        let test = format!(
            "echo $$ > {}; while :; do sleep 1; done",
            pid_file.display()
        );
        let mut child = submit_with_default_signals(&repo, &test);
        let test_pid = wait_for("the test never started", || pid_in(&pid_file));
        send(signal, child.id());
        let status = child.wait().expect("submit-work ends");
        assert!(!status.success(), "{signal}: {status:?}");
        assert_all_end(&format!("{signal}: the test"), &[test_pid]);
        assert_eq!(repo.tip(), tip, "{signal}: nothing recorded");
    }
}

/// The same signal while the step's preflight runs two gates at once, after its test has
/// run and ended: both gates' groups end with the command, which ends as the signal ends a
/// process, and nothing is recorded. Each command's wait hears the signal (no thread does),
/// and between two commands the process is idle, so this is the path through both.
#[test]
fn a_signal_during_two_gates_at_once_after_the_test_ends_both_gates() {
    let config = format!(
        "{}\n[[preflight]]\nname = \"one\"\ncommand = \"sh gate.sh one\"\ngroup = \"g\"\n\
         \n[[preflight]]\nname = \"two\"\ncommand = \"sh gate.sh two\"\ngroup = \"g\"\n",
        crate::support::CONFIG
    );
    for (signal, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let repo = TestRepo::with_config(&config);
        // Each gate passes, unless told to loop: then it says its pid and loops.
        repo.write(
            "gate.sh",
            "[ -e .git/loop ] || exit 0; echo $$ > .git/gate-$1; while :; do sleep 1; done\n",
        );
        repo.commit_all("gates");
        repo.submit_plan(crate::support::PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.submit_test(RED, Some("FAIL")).expect(3);
        repo.run(&["submit-work", "-s", "why", "--analysis-decision", "SUCCESS"])
            .expect(0);
        repo.write("add.sh", "echo 5\n");
        std::fs::write(repo.dir().join(".git/loop"), "").expect("loop");
        let tip = repo.tip();
        let mut child = submit_with_default_signals(&repo, RED);
        let gate = |name: &str| pid_in(&repo.dir().join(".git").join(name));
        let gates = wait_for(&format!("{signal}: the gates never both started"), || {
            Some([gate("gate-one")?, gate("gate-two")?])
        });
        send(signal, child.id());
        // A signal that nothing heard would leave it waiting on its gates for ever.
        let ended = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if ended.elapsed() > std::time::Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                for pid in gates {
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &format!("-{pid}")])
                        .status();
                }
                panic!("{signal}: submit-work did not end");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.signal(), Some(number), "{signal}: {status:?}");
        assert_all_end(&format!("{signal}: the gates"), &gates);
        assert_eq!(repo.tip(), tip, "{signal}: nothing recorded");
    }
}

/// Started ignoring a signal (`nohup`, a script's `cmd &`, `trap '' HUP`), git-orchestrate
/// and the test it runs keep ignoring it: the step runs to its end and is recorded.
#[test]
fn a_signal_ignored_at_start_stays_ignored_by_the_command_and_its_test() {
    let repo = TestRepo::at_green_step();
    let tip = repo.tip();
    let pid_file = repo.dir().join(".git/test-pid");
    let stop = repo.dir().join(".git/test-stop");
    // The test ends when told, and reports what it was started ignoring.
    let test = format!(
        "grep SigIgn /proc/$$/status > {pid}.ign; echo $$ > {pid}; \
         while [ ! -e {stop} ]; do sleep 0.05; done; sh add.sh",
        pid = pid_file.display(),
        stop = stop.display()
    );
    let child = repo
        .command(
            "sh",
            [
                "-c",
                "trap '' HUP INT TERM; exec \"$0\" \"$@\"",
                BIN,
                "submit-work",
                "-s",
                "s",
                "--test-command",
                test.as_str(),
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start submit-work");
    wait_for("the test never started", || pid_in(&pid_file));
    for signal in ["HUP", "INT", "TERM"] {
        send(signal, child.id());
    }
    // Long enough for a handler to have ended everything; the test then ends by itself.
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&stop, "").expect("stop the test");
    let out = child.wait_with_output().expect("submit-work ends");
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(repo.tip(), tip, "the passing step is recorded");
    // HUP (1), INT (2) and TERM (15) reach the test ignored, as they reached us.
    let ignored = std::fs::read_to_string(format!("{}.ign", pid_file.display())).expect("mask");
    let mask = u64::from_str_radix(ignored.trim().trim_start_matches("SigIgn:").trim(), 16)
        .expect("hex mask");
    assert_eq!(mask & 0x4003, 0x4003, "{ignored}");
}
