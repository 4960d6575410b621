//! What a killed process leaves behind, and how the next command leads out of it: a stale
//! packed-refs lock named as such with the command that removes it, a worktree `git worktree
//! add` left half made cleaned by the next `worktree add`, and a config `init` never leaves
//! empty.

use std::os::unix::process::CommandExt as _;
use std::process::Stdio;

use crate::support::{BIN, TestRepo};

/// A `packed-refs.lock` left by a killed `git pack-refs` or `gc`: the next write names it as
/// a stale lock, with the file and the command, instead of retrying for minutes and blaming
/// other processes.
#[test]
fn a_stale_packed_refs_lock_is_named_with_the_command_that_removes_it() {
    let repo = TestRepo::at_green_step();
    // The workflow ref held in packed-refs, as after `git gc`.
    repo.git(&["pack-refs", "--all"]);
    let tip = repo.tip();
    let lock = repo.path.join(".git/packed-refs.lock");
    // As a process killed just now left it: not old yet.
    std::fs::write(&lock, b"").expect("lock");
    let out = repo.submit_test("false", None);
    out.expect(5);
    let shown = lock.display().to_string();
    assert!(
        out.stderr.starts_with(&format!(
            "error: workflow ref refs/orchestrator/workflows/main is locked by {shown} (left "
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("delete the lock: rm {shown}\n")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("kept changing"), "{}", out.stderr);
    assert_eq!(repo.tip(), tip, "nothing was written while locked");

    // `status` and `doctor` see it too.
    let status = repo.run(&["status", "--json"]);
    status.expect(0);
    assert_eq!(status.json()["locks"][0]["path"], shown);

    std::fs::remove_file(&lock).expect("unlock");
    repo.submit_test("false", None).expect(1);
    assert_ne!(repo.tip(), tip);
}

/// `worktree add` killed inside `git worktree add` (SIGKILL from a smudge filter of the
/// checkout, to the whole process group): git leaves the worktree registered and locked as
/// `initializing`. The next `worktree add` of the same path removes it and makes it whole.
#[test]
fn a_worktree_add_killed_inside_git_is_finished_by_the_next() {
    let repo = TestRepo::new();
    let gate = repo.path.with_extension("kill-gate");
    std::fs::create_dir_all(&gate).expect("mkdir");
    let armed = gate.join("armed");
    let pid = gate.join("pid");
    repo.write(".gitattributes", "killme.txt filter=killer\n");
    repo.write("killme.txt", "x\n");
    repo.commit_all("a file the checkout filters");
    // Once: waits for the test to name the command's process, then kills its whole group.
    let smudge = format!(
        "if [ -e '{armed}' ]; then rm -f '{armed}'; while [ ! -s '{pid}' ]; do sleep 0.05; done; \
         kill -KILL \"$(cat '{pid}')\"; kill -KILL 0; fi; cat",
        armed = armed.display(),
        pid = pid.display()
    );
    repo.git(&["config", "filter.killer.smudge", &smudge]);
    std::fs::write(&armed, b"").expect("arm");
    let path = repo.path.with_extension("w1");
    let shown = path.display().to_string();

    let mut child = repo
        .command(BIN, ["worktree", "add", "w1", &shown])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn");
    std::fs::write(&pid, child.id().to_string()).expect("pid");
    let status = child.wait().expect("wait");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "killed"
    );
    assert!(!armed.exists(), "the filter ran");
    let listing = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(
        listing.contains(&format!("worktree {shown}\n")) && listing.contains("locked initializing"),
        "git left it half made:\n{listing}"
    );

    let out = repo.run(&["worktree", "add", "w1", &shown]);
    out.expect(0)
        .says("cleaned   the half-made worktree an interrupted `worktree add` left there");
    let listing = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(!listing.contains("locked"), "{listing}");
    assert_eq!(
        std::fs::read_to_string(path.join("killme.txt")).expect("checked out"),
        "x\n"
    );
    let status = repo.run_in(&path, &["status", "--json"]);
    status.expect(0);
    assert_eq!(status.json()["workflow"], "w1", "{}", status.stdout);
    let _ = std::fs::remove_dir_all(&gate);
}

/// A whole worktree at the path that records no workflow (what a kill after git's part and
/// before ours leaves) is nobody's to remove unasked: the refusal names the command.
#[test]
fn a_worktree_at_the_path_is_named_with_the_command_that_frees_it() {
    let repo = TestRepo::new();
    let path = repo.path.with_extension("w1");
    let shown = path.display().to_string();
    repo.git(&["worktree", "add", "--quiet", "--detach", &shown]);
    let out = repo.run(&["worktree", "add", "w1", &shown]);
    out.expect(2);
    assert!(
        out.stderr.contains(&format!(
            "{shown} is a worktree already, recording no workflow; nothing was created"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("(`git worktree remove --force {shown}`)")),
        "{}",
        out.stderr
    );
    repo.git(&["worktree", "remove", "--force", &shown]);
    repo.run(&["worktree", "add", "w1", &shown]).expect(0);
}

/// An empty `.orchestrate.toml` (what an init killed between creating and writing it used to
/// leave) is written again by the next init; a cut one is an error naming the file.
#[test]
fn init_writes_an_empty_config_again_and_names_a_broken_one() {
    let repo = TestRepo::with_config("");
    repo.write(".orchestrate.toml", "");
    repo.run(&["init", "--no-hooks"]).expect(0);
    let text = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).expect("config");
    assert!(text.contains("main_branch = \"main\""), "{text}");

    let repo = TestRepo::with_config("");
    repo.write(".orchestrate.toml", "main_branch = \"ma");
    let out = repo.run(&["init", "--no-hooks"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("invalid .orchestrate.toml (working tree)"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.path.join(".orchestrate.toml")).expect("config"),
        "main_branch = \"ma"
    );
    assert_eq!(repo.git(&["for-each-ref", "refs/orchestrator"]), "");
}

/// SIGKILL at random moments of `init`, 30 times: the config is never left empty or cut
/// (it is there whole, or not at all), and the next init finishes the work, or names the
/// ref lock the kill left with the `rm` that frees it.
#[test]
fn kills_at_random_moments_of_init_never_leave_a_cut_config() {
    use std::hash::{BuildHasher as _, Hasher as _};
    const KILLS: usize = 30;
    let mut seed = std::collections::hash_map::RandomState::new().build_hasher();
    let (mut absent, mut whole, mut locked) = (0, 0, 0);
    for i in 0..KILLS {
        let repo = TestRepo::with_config("");
        seed.write_usize(i);
        let delay = std::time::Duration::from_micros(seed.finish() % 60_000);
        let mut child = repo
            .command(BIN, ["init", "--no-hooks"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let config = repo.path.join(".orchestrate.toml");
        match std::fs::read_to_string(&config) {
            Err(_) => absent += 1,
            Ok(text) => {
                assert!(
                    text.contains("main_branch = \"main\""),
                    "kill {i} after {delay:?} left {text:?}"
                );
                whole += 1;
            }
        }
        let again = repo.run(&["init", "--no-hooks"]);
        if again.code == 5 {
            // Killed inside the workflow ref's write: its lock is named, and the hint's `rm`
            // of that very file is all it takes.
            let (_, rm) = again
                .stderr
                .split_once("delete the lock: rm ")
                .unwrap_or_else(|| panic!("kill {i} after {delay:?}: {}", again.stderr));
            let lock = std::path::Path::new(rm.trim());
            assert!(
                lock.starts_with(&repo.path) && lock.is_file(),
                "{}",
                again.stderr
            );
            std::fs::remove_file(lock).expect("rm the lock");
            locked += 1;
            repo.run(&["init", "--no-hooks"]).expect(0);
        } else {
            again.expect(0);
        }
        let text = std::fs::read_to_string(&config).expect("config");
        assert!(text.contains("main_branch = \"main\""), "{text}");
    }
    eprintln!(
        "{KILLS} kills: config absent after {absent}, whole after {whole}; a ref lock left by {locked}"
    );
}

/// An `init` killed after git logged the workflow ref's creation and before the ref was in
/// place leaves its lock and a reflog of one entry from nothing: the next `init` names the
/// lock, and once it is removed creates the workflow; it is not taken for a deleted workflow.
/// With the tip marker a move leaves, the same reflog still means a deleted ref.
#[test]
fn a_creation_killed_between_its_reflog_and_its_ref_is_not_a_deleted_workflow() {
    let repo = TestRepo::with_config("");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let half_made = |repo: &TestRepo| {
        let logs = repo.path.join(".git/logs/refs/orchestrator/workflows");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(
            logs.join("main"),
            format!(
                "{} {head} Test User <test@example.invalid> 1700000000 +0000\tworkflow created\n",
                "0".repeat(40)
            ),
        )
        .unwrap();
    };
    half_made(&repo);
    let refs = repo.path.join(".git/refs/orchestrator/workflows");
    std::fs::create_dir_all(&refs).unwrap();
    let lock = refs.join("main.lock");
    std::fs::write(&lock, format!("{head}\n")).unwrap();
    let out = repo.run(&["init", "--no-hooks"]);
    out.expect(5);
    assert!(
        out.stderr
            .contains(&format!("delete the lock: rm {}", lock.display())),
        "{}",
        out.stderr
    );
    std::fs::remove_file(&lock).unwrap();
    repo.run(&["init", "--no-hooks"]).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");

    // The same reflog beside the tip marker of a workflow that moved: a deleted ref.
    let other = TestRepo::with_config("");
    half_made(&other);
    let tips = other.path.join(".git/orchestrator/tips");
    std::fs::create_dir_all(&tips).unwrap();
    std::fs::write(tips.join("main"), format!("{head}\n")).unwrap();
    let out = other.run(&["init", "--no-hooks"]);
    out.expect(5);
    assert!(
        out.stderr.starts_with(
            "error: workflow ref refs/orchestrator/workflows/main is missing, but the workflow existed here"
        ),
        "{}",
        out.stderr
    );
}
