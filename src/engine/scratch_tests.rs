//! Scratch worktrees in a real repository (what they hold, what a reset puts back, what a
//! baseline sees changed), and the file helpers a reset is made of.

use std::os::unix::fs::PermissionsExt as _;

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

fn head(repo: &Repo) -> (String, String) {
    (
        repo.git(&["rev-parse", "HEAD"]),
        repo.git(&["rev-parse", "HEAD^{tree}"]),
    )
}

fn repo_with_files() -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.txt", "lib\n");
    repo.write("test.sh", "echo ok\n");
    repo.commit_all("files");
    repo
}

#[test]
fn a_scratch_worktree_holds_the_tree_and_nothing_of_the_working_tree() {
    let repo = repo_with_files();
    repo.write("untracked.txt", "mine\n");
    repo.write("README", "changed in the working tree\n");
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    let dir = scratch.path();
    assert_eq!(
        std::fs::read_to_string(dir.join("README")).expect("read"),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.txt")).expect("read"),
        "lib\n"
    );
    assert!(!dir.join("untracked.txt").exists());
    assert!(!dir.starts_with(repo.dir()), "{}", dir.display());
}

#[test]
fn a_scratch_worktree_and_its_build_directory_go_when_dropped() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    let (path, build) = (scratch.path().to_path_buf(), scratch.build_dir());
    assert!(build.is_dir());
    drop(scratch);
    assert!(!path.exists(), "{}", path.display());
    assert!(!build.exists(), "{}", build.display());
}

#[test]
fn a_reset_removes_what_a_run_left_and_puts_back_what_it_changed() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    let dir = scratch.path();
    std::fs::write(dir.join("left.log"), "x").expect("write");
    std::fs::create_dir(dir.join("cache")).expect("mkdir");
    std::fs::write(dir.join("README"), "rewritten").expect("write");
    std::fs::remove_file(dir.join("src/lib.txt")).expect("remove");
    scratch.reset().expect("reset");
    assert!(!dir.join("left.log").exists());
    assert!(!dir.join("cache").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("README")).expect("read"),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.txt")).expect("read"),
        "lib\n"
    );
}

#[test]
fn a_reset_puts_back_a_git_file_a_run_rewrote() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    let dot_git = scratch.path().join(".git");
    let made = std::fs::read(&dot_git).expect("read");
    std::fs::write(&dot_git, "gitdir: /elsewhere\n").expect("write");
    scratch.reset().expect("reset");
    assert_eq!(std::fs::read(&dot_git).expect("read"), made);
}

#[test]
fn changes_are_compared_with_no_baseline_only_as_an_internal_error() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    assert!(matches!(scratch.changed(), Err(EngineError::Internal(_))));
}

#[test]
fn a_baseline_sees_changed_and_removed_files_but_not_new_ones() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    scratch.baseline().expect("taken");
    assert_eq!(scratch.changed().expect("compared"), Vec::<String>::new());
    let dir = scratch.path();
    std::fs::write(dir.join("README"), "other").expect("write");
    std::fs::remove_file(dir.join("test.sh")).expect("remove");
    std::fs::write(dir.join("coverage.xml"), "new").expect("write");
    assert_eq!(
        scratch.changed().expect("compared"),
        vec!["README", "test.sh"]
    );
}

#[test]
fn a_settled_worktree_resets_to_what_was_settled() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let mut scratch = Scratch::new(&session, &commit, &tree).expect("made");
    std::fs::write(scratch.path().join("pinned_test.txt"), "put in").expect("write");
    scratch.settle();
    std::fs::write(scratch.path().join("pinned_test.txt"), "changed").expect("write");
    std::fs::write(scratch.path().join("stray"), "x").expect("write");
    scratch.reset().expect("reset");
    let dir = scratch.path();
    assert_eq!(
        std::fs::read_to_string(dir.join("pinned_test.txt")).expect("read"),
        "put in"
    );
    assert!(!dir.join("stray").exists());
}

#[test]
fn pinned_paths_are_kept_by_a_reset_until_unpinned() {
    let repo = repo_with_files();
    let (base_commit, base_tree) = head(&repo);
    repo.write("README", "newer\n");
    repo.write("tests/deep/added.txt", "added\n");
    repo.commit_all("newer");
    let newer = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    let mut scratch = Scratch::new(&session, &base_commit, &base_tree).expect("made");
    scratch.settle();
    let paths = vec!["README".to_string(), "tests/deep/added.txt".to_string()];
    scratch.pin(&newer, &paths).expect("pinned");
    let dir = scratch.path().to_path_buf();
    let read = |path: &str| std::fs::read_to_string(dir.join(path)).expect("read");
    assert_eq!(
        (read("README"), read("tests/deep/added.txt")),
        ("newer\n".into(), "added\n".into())
    );
    // A run rewrites one pinned file, removes the other's directory and leaves a file
    // beside them: the reset puts the pins back as put in, and removes the leftover.
    std::fs::write(dir.join("README"), "a run wrote this").expect("write");
    std::fs::remove_dir_all(dir.join("tests/deep")).expect("remove");
    std::fs::write(dir.join("tests/left"), "x").expect("write");
    scratch.reset().expect("reset");
    assert_eq!(
        (read("README"), read("tests/deep/added.txt")),
        ("newer\n".into(), "added\n".into())
    );
    assert!(!dir.join("tests/left").exists());
    // Unpinned, the next reset puts the settled files back: the base's README, and no
    // directory the pin made.
    scratch.unpin();
    scratch.reset().expect("reset");
    assert_eq!(read("README"), "hello\n");
    assert!(!dir.join("tests").exists());
}

#[test]
fn a_new_pin_takes_the_previous_one_out() {
    let repo = repo_with_files();
    let (base_commit, base_tree) = head(&repo);
    repo.write("t1.sh", "one\n");
    repo.write("test.sh", "changed\n");
    repo.commit_all("newer");
    let newer = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    let mut scratch = Scratch::new(&session, &base_commit, &base_tree).expect("made");
    scratch.settle();
    scratch.pin(&newer, &["t1.sh".to_string()]).expect("pinned");
    scratch
        .pin(&newer, &["test.sh".to_string()])
        .expect("pinned");
    scratch.reset().expect("reset");
    let dir = scratch.path();
    assert!(!dir.join("t1.sh").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("test.sh")).expect("read"),
        "changed\n"
    );
}

#[test]
fn a_path_that_climbs_out_of_the_worktree_is_never_put_in() {
    let repo = repo_with_files();
    let (commit, tree) = head(&repo);
    let session = repo.session("w");
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    let victim = scratch.path().parent().expect("parent").join("victim");
    std::fs::write(&victim, "keep").expect("write");
    let climbing = vec!["../victim".to_string(), "/etc/passwd".to_string()];
    scratch.put(&tree, &climbing).expect("skipped");
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    let _ = std::fs::remove_file(&victim);
}

#[test]
fn a_scratch_worktree_is_refused_under_a_test_runners_file() {
    let repo = repo_with_files();
    let session = repo.session("w");
    // The scratch root is this repository's alone: a file planted there steers no other
    // repository's runs.
    let root = super::super::hermetic::scratch_root(&session);
    std::fs::create_dir_all(&root).expect("mkdir");
    let planted = root.join("conftest.py");
    std::fs::write(&planted, "x").expect("write");
    let (commit, tree) = head(&repo);
    let made = Scratch::new(&session, &commit, &tree);
    std::fs::remove_file(&planted).expect("remove");
    match made {
        Err(EngineError::NotHermetic(found)) => {
            assert_eq!(found.setting, planted.display().to_string());
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("not refused"),
    }
}

#[test]
fn a_build_directory_is_beside_its_worktree() {
    assert_eq!(
        build_dir(Path::new("/tmp/scratch-1/wt-9-a")),
        PathBuf::from("/tmp/scratch-1/wt-9-a.target")
    );
}

#[test]
fn only_a_scratch_worktree_gets_its_own_cargo_target_dir() {
    let target = |p: &str| vec![("CARGO_TARGET_DIR".to_string(), format!("{p}.target"))];
    assert_eq!(
        build_dir_of(Path::new("/t/scratch-abc/wt-1-x")),
        target("/t/scratch-abc/wt-1-x")
    );
    assert_eq!(
        build_dir_of(Path::new("/t/clean-check/wt-2")),
        target("/t/clean-check/wt-2")
    );
    assert_eq!(build_dir_of(Path::new("/home/u/project")), Vec::new());
    assert_eq!(build_dir_of(Path::new("/home/u/wt-1")), Vec::new());
    assert_eq!(
        build_dir_of(Path::new("/t/scratch-abc/project")),
        Vec::new()
    );
    assert_eq!(build_dir_of(Path::new("/")), Vec::new());
    assert_eq!(build_dir_of(Path::new("")), Vec::new());
}

#[test]
fn restoring_files_removes_the_new_and_writes_the_missing_with_their_modes() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    std::fs::write(dir.join("d/run.sh"), "echo").expect("write");
    std::fs::set_permissions(dir.join("d/run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    std::os::unix::fs::symlink("d/run.sh", dir.join("link")).expect("link");
    let files = read_files(dir).expect("read").expect("small");
    std::fs::remove_dir_all(dir.join("d")).expect("remove");
    std::fs::remove_file(dir.join("link")).expect("remove");
    std::os::unix::fs::symlink("elsewhere", dir.join("link")).expect("link");
    std::fs::write(dir.join("new"), "x").expect("write");
    restore_files(dir, &files, None).expect("restored");
    assert_eq!(
        std::fs::read_to_string(dir.join("d/run.sh")).expect("read"),
        "echo"
    );
    let mode = std::fs::metadata(dir.join("d/run.sh"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(
        std::fs::read_link(dir.join("link")).expect("link"),
        PathBuf::from("d/run.sh")
    );
    assert!(!dir.join("new").exists());
    assert_eq!(changed_files(dir, &files, None), Vec::<String>::new());
}

#[test]
fn restoring_puts_back_the_modes_of_kept_directories_and_files() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    for (d, mode) in [("open", 0o755), ("shut", 0o500)] {
        std::fs::create_dir(dir.join(d)).expect("mkdir");
        std::fs::write(dir.join(d).join("f"), "f").expect("write");
        std::fs::set_permissions(dir.join(d), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    }
    let files = read_files(dir).expect("read").expect("small");
    // A test makes one writable by all and opens the other; a file's mode changes.
    std::fs::set_permissions(dir.join("open"), std::fs::Permissions::from_mode(0o777))
        .expect("chmod");
    std::fs::set_permissions(dir.join("shut"), std::fs::Permissions::from_mode(0o700))
        .expect("chmod");
    std::fs::set_permissions(dir.join("open/f"), std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    restore_files(dir, &files, None).expect("restored");
    let mode = |p: &str| {
        std::fs::symlink_metadata(dir.join(p))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!((mode("open"), mode("shut")), (0o755, 0o500));
    assert_eq!(mode("open/f"), mode("shut/f"));
    assert_eq!(changed_files(dir, &files, None), Vec::<String>::new());
    std::fs::set_permissions(dir.join("shut"), std::fs::Permissions::from_mode(0o700))
        .expect("chmod");
}

#[test]
fn restoring_opens_a_directory_a_test_made_unreadable() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    std::fs::create_dir(dir.join("locked")).expect("mkdir");
    std::fs::write(dir.join("locked/f"), "f").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    std::fs::write(dir.join("locked/stray"), "x").expect("write");
    std::fs::set_permissions(dir.join("locked"), std::fs::Permissions::from_mode(0o000))
        .expect("chmod");
    restore_files(dir, &files, None).expect("restored");
    assert!(!dir.join("locked/stray").exists());
    let mode = std::fs::metadata(dir.join("locked"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o700, 0o700);
}

#[test]
fn the_git_file_is_never_read_as_a_worktree_file() {
    let temp = tempfile::tempdir().expect("temp");
    std::fs::write(temp.path().join(".git"), "gitdir: x").expect("write");
    std::fs::write(temp.path().join("a"), "a").expect("write");
    let files = read_files(temp.path()).expect("read").expect("small");
    let paths: Vec<&Path> = files.entries.keys().map(PathBuf::as_path).collect();
    assert_eq!(paths, vec![Path::new("a")]);
}

#[test]
fn emptying_a_directory_removes_a_link_and_never_what_it_points_to() {
    let temp = tempfile::tempdir().expect("temp");
    let outside = tempfile::tempdir().expect("temp");
    std::fs::write(outside.path().join("keep"), "k").expect("write");
    let dir = temp.path().join("wt");
    std::fs::create_dir_all(dir.join("sub/deeper")).expect("mkdir");
    std::fs::set_permissions(dir.join("sub"), std::fs::Permissions::from_mode(0o500))
        .expect("chmod");
    std::os::unix::fs::symlink(outside.path(), dir.join("out")).expect("link");
    empty(&dir).expect("emptied");
    assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 0);
    assert!(outside.path().join("keep").exists());
}

#[test]
fn removing_what_is_not_there_is_no_error() {
    let temp = tempfile::tempdir().expect("temp");
    remove_any(&temp.path().join("nothing")).expect("nothing to remove");
    std::os::unix::fs::symlink("/", temp.path().join("root")).expect("link");
    remove_any(&temp.path().join("root")).expect("the link alone");
    assert!(Path::new("/").exists());
}

/// A test's rewrite of a file to other bytes of the same size, its modification time put
/// back as it was, at once after the files were read (within the clock's tick): what a
/// stamp compare must still see, and a reset undo.
fn rewrite_keeping_size_and_times(path: &Path, bytes: &str) {
    let meta = std::fs::metadata(path).expect("stat");
    let modified = meta.modified().expect("mtime");
    let accessed = meta.accessed().expect("atime");
    std::fs::write(path, bytes).expect("rewrite");
    std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open")
        .set_times(
            std::fs::FileTimes::new()
                .set_modified(modified)
                .set_accessed(accessed),
        )
        .expect("put the times back");
}

#[test]
fn files_read_hold_their_stamps_once_the_clock_passed_them() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    std::fs::write(dir.join("a"), "a").expect("write");
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    std::fs::write(dir.join("d/b"), "b").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    for (path, entry) in &files.entries {
        match entry {
            FileEntry::File { stamp, .. } => assert_eq!(
                stamp.is_some(),
                writes_move_change_time(dir),
                "{} has a stamp where the filesystem's writes move change times",
                path.display()
            ),
            FileEntry::Link(_) => panic!("no links here"),
        }
    }
}

/// tmpfs is not among the filesystems whose every write (through a memory map too) moves a
/// file's change time: its files are compared by their bytes, never their stamps.
#[test]
fn files_on_tmpfs_are_compared_by_their_bytes() {
    let temp = tempfile::tempdir_in("/dev/shm").expect("a directory on tmpfs");
    let dir = temp.path();
    assert!(!writes_move_change_time(dir));
    std::fs::write(dir.join("code"), "good").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    assert!(matches!(
        files.entries.get(Path::new("code")),
        Some(FileEntry::File { stamp: None, .. })
    ));
    rewrite_keeping_size_and_times(&dir.join("code"), "evil");
    assert_eq!(changed_files(dir, &files, None), ["code"]);
}

#[test]
fn a_same_size_rewrite_with_its_times_put_back_is_changed_and_reset() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    std::fs::write(dir.join("kept"), "same").expect("write");
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    std::fs::write(dir.join("d/code"), "good").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    rewrite_keeping_size_and_times(&dir.join("d/code"), "evil");
    assert_eq!(changed_files(dir, &files, None), ["d/code"]);
    restore_files(dir, &files, None).expect("restored");
    assert_eq!(
        std::fs::read_to_string(dir.join("d/code")).expect("read"),
        "good"
    );
    assert_eq!(changed_files(dir, &files, None), Vec::<String>::new());
    // Again, now that the file a reset wrote has a stamp other than the one read.
    rewrite_keeping_size_and_times(&dir.join("d/code"), "evil");
    assert_eq!(changed_files(dir, &files, None), ["d/code"]);
    restore_files(dir, &files, None).expect("restored");
    assert_eq!(
        std::fs::read_to_string(dir.join("d/code")).expect("read"),
        "good"
    );
}

#[test]
fn a_file_swapped_for_a_copy_of_another_is_changed() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    std::fs::write(dir.join("a"), "1").expect("write");
    std::fs::write(dir.join("b"), "2").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    // `b`'s inode under `a`'s name: its stamp is not `a`'s, and its bytes differ.
    std::fs::rename(dir.join("b"), dir.join("a")).expect("rename");
    assert_eq!(changed_files(dir, &files, None), ["a", "b"]);
}

/// A pinned path that the pinning tree does not hold, in a directory the base does not have
/// either (a RED step's file a later step removed): pinned as absent, and kept absent.
#[test]
fn a_pinned_path_absent_with_its_directory_is_pinned_as_absent() {
    let repo = repo_with_files();
    let (base_commit, base_tree) = head(&repo);
    let session = repo.session("w");
    let mut scratch = Scratch::new(&session, &base_commit, &base_tree).expect("made");
    scratch.settle();
    scratch
        .pin(&base_tree, &["tests/new/helper.sh".to_string()])
        .expect("pinned");
    let dir = scratch.path().to_path_buf();
    std::fs::create_dir_all(dir.join("tests/new")).expect("mkdir");
    std::fs::write(dir.join("tests/new/helper.sh"), "left by a run").expect("write");
    scratch.reset().expect("reset");
    assert!(!dir.join("tests/new/helper.sh").exists());
}

#[test]
fn a_reset_names_what_a_compare_before_it_would_and_resets() {
    let repo = repo_with_files();
    repo.write("run.sh", "echo run\n");
    repo.write("d/inside", "e\n");
    repo.write("mode.txt", "m\n");
    repo.commit_all("more files");
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let mut scratch = Scratch::new(&session, &commit, &tree).expect("made");
    scratch.settle();
    scratch.baseline().expect("taken");
    let dir = scratch.path().to_path_buf();
    assert_eq!(
        scratch.reset_changed(&|_| true).expect("reset"),
        Vec::<String>::new()
    );
    // Rewritten, removed, made executable, a directory swapped for a link to a copy of it, a
    // mode git does not see (group write), and a new file: what a compare names, the reset
    // names, and every one of them is put back. A mode set again moves the change time
    // alone, which is no write (`rewritten`), test code or not.
    std::fs::write(dir.join("README"), "other").expect("write");
    std::fs::remove_file(dir.join("test.sh")).expect("remove");
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let copy = tempfile::tempdir().expect("temp");
    std::fs::write(copy.path().join("inside"), "e\n").expect("write");
    std::fs::rename(dir.join("d"), dir.join("d.away")).expect("rename");
    std::os::unix::fs::symlink(copy.path(), dir.join("d")).expect("link");
    std::fs::set_permissions(dir.join("mode.txt"), std::fs::Permissions::from_mode(0o664))
        .expect("chmod");
    std::fs::write(dir.join("coverage.xml"), "new").expect("write");
    let compared = scratch.changed().expect("compared");
    assert_eq!(compared, ["README", "d/inside", "run.sh", "test.sh"]);
    assert_eq!(scratch.reset_changed(&|_| true).expect("reset"), compared);
    assert_eq!(scratch.changed().expect("compared"), Vec::<String>::new());
    assert!(!dir.join("coverage.xml").exists() && !dir.join("d.away").exists());
    assert!(
        std::fs::symlink_metadata(dir.join("d"))
            .expect("stat")
            .is_dir()
    );
    let mode = |p: &str| {
        std::fs::metadata(dir.join(p))
            .expect("stat")
            .permissions()
            .mode()
    };
    assert_eq!(
        (mode("run.sh") & 0o777, mode("mode.txt") & 0o777),
        (0o644, 0o644)
    );
    assert_eq!(
        std::fs::read_to_string(copy.path().join("inside")).expect("read"),
        "e\n",
        "what the link led to is never touched"
    );
}

#[test]
fn a_reset_with_a_baseline_read_apart_compares_then_resets() {
    let repo = repo_with_files();
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let scratch = Scratch::new(&session, &commit, &tree).expect("made");
    scratch.baseline().expect("taken");
    let dir = scratch.path().to_path_buf();
    std::fs::write(dir.join("README"), "other").expect("write");
    std::fs::write(dir.join("left"), "x").expect("write");
    assert_eq!(scratch.reset_changed(&|_| true).expect("reset"), ["README"]);
    assert!(!dir.join("left").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("README")).expect("read"),
        "hello\n"
    );
}

#[test]
fn the_next_tasks_pin_keeps_the_directory_it_shares_emptied_of_all_else() {
    let repo = repo_with_files();
    let (base_commit, base_tree) = head(&repo);
    repo.write("tests/deep/t1.sh", "one\n");
    repo.write("tests/deep/t2.sh", "two\n");
    repo.commit_all("tests");
    let newer = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    let mut scratch = Scratch::new(&session, &base_commit, &base_tree).expect("made");
    scratch.settle();
    let dir = scratch.path().to_path_buf();
    scratch
        .pin(&newer, &["tests/deep/t1.sh".to_string()])
        .expect("pinned");
    // The first task's run leaves files beside its test, an ignored marker, a link out and
    // a nested directory, and opens its directory to everyone.
    std::fs::write(dir.join("tests/deep/leftover"), "x").expect("write");
    std::fs::write(dir.join("tests/.marker"), "x").expect("write");
    std::os::unix::fs::symlink("/etc", dir.join("tests/deep/out")).expect("link");
    std::fs::create_dir_all(dir.join("tests/deep/nested/more")).expect("mkdir");
    std::fs::set_permissions(
        dir.join("tests/deep"),
        std::fs::Permissions::from_mode(0o777),
    )
    .expect("chmod");
    let next = vec!["tests/deep/t2.sh".to_string()];
    scratch.unpin_keeping(&next);
    scratch.reset().expect("reset");
    let names = |p: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(p))
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names("tests"), ["deep"]);
    assert_eq!(names("tests/deep"), Vec::<String>::new());
    scratch.pin(&newer, &next).expect("pinned");
    assert_eq!(names("tests/deep"), ["t2.sh"]);
    let mode = std::fs::symlink_metadata(dir.join("tests/deep"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "its mode as the first pin made it");
    // Its pin's own: taken out with it, as a fresh worktree of the base has none.
    scratch.unpin();
    scratch.reset().expect("reset");
    assert!(!dir.join("tests").exists());
}

#[test]
fn a_kept_directory_the_next_pin_puts_nothing_into_is_removed() {
    let repo = repo_with_files();
    let (base_commit, base_tree) = head(&repo);
    repo.write("tests/t1.sh", "one\n");
    repo.commit_all("tests");
    let newer = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    let mut scratch = Scratch::new(&session, &base_commit, &base_tree).expect("made");
    scratch.settle();
    let dir = scratch.path().to_path_buf();
    scratch
        .pin(&newer, &["tests/t1.sh".to_string()])
        .expect("pinned");
    // The next task's pinned path has no file: a fresh worktree has no `tests` either.
    let next = vec!["tests/gone.sh".to_string()];
    scratch.unpin_keeping(&next);
    scratch.reset().expect("reset");
    scratch.pin(&newer, &next).expect("pinned");
    assert!(!dir.join("tests").exists());
    scratch.reset().expect("reset");
    assert!(!dir.join("tests").exists());
}

/// A mutant is written into the worktree's own file only: never through a link (to the
/// file, or to a directory on the way) nor into a file with another name elsewhere.
#[test]
fn write_inside_writes_the_worktrees_own_files_and_nothing_a_link_reaches() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    std::fs::create_dir(root.join("lib")).unwrap();
    std::fs::write(root.join("lib/calc.sh"), "echo 1\n").unwrap();
    std::fs::set_permissions(
        root.join("lib/calc.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink(&victim, root.join("lib/link.sh")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    std::fs::hard_link(&victim, root.join("lib/hard.sh")).unwrap();

    write_inside(root, "lib/calc.sh", b"echo 2\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("lib/calc.sh")).unwrap(),
        "echo 2\n"
    );
    let mode = std::fs::metadata(root.join("lib/calc.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "the file's mode is kept");
    write_inside(root, "lib/new.sh", b"new\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("lib/new.sh")).unwrap(),
        "new\n"
    );

    for path in [
        "lib/link.sh",
        "out/victim",
        "lib/hard.sh",
        "../victim",
        "/x",
        "lib//x",
        "",
    ] {
        let err = write_inside(root, path, b"exit 97\n").unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::InvalidInput,
            "{path}: {err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!outside.path().join("x").exists());
}

/// A file a run rewrote and then wrote its old bytes back to (code a test loads swapping the
/// pinned test and the swapped test putting it back) is written all the same where it is test
/// code: the tree check (its `test_code`, and the reset's walk naming what it found
/// unchanged) counts it, while the byte compare of [`Scratch::changed`] does not, nor does
/// the check for a file that is no test code. Only where stamps are trusted.
#[test]
fn a_file_rewritten_and_put_back_counts_as_written_for_the_tree_check() {
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path();
    if !writes_move_change_time(dir) {
        return;
    }
    std::fs::write(dir.join("kept"), "same").expect("write");
    std::fs::write(dir.join("test_mul.py"), "def test_mul(): assert False\n").expect("write");
    let files = read_files(dir).expect("read").expect("small");
    assert!(matches!(
        files.entries.get(Path::new("test_mul.py")),
        Some(FileEntry::File { stamp: Some(_), .. })
    ));
    std::fs::write(dir.join("test_mul.py"), "def test_mul(): pass\n").expect("write");
    std::fs::write(dir.join("test_mul.py"), "def test_mul(): assert False\n").expect("write");
    // What is not test code may be touched so: written again with its bytes, its mode set
    // again (a `chmod +x`): its change time moves, its content does not.
    std::fs::write(dir.join("kept"), "same").expect("write");
    let test_code = |p: &Path| p == Path::new("test_mul.py");
    assert_eq!(changed_files(dir, &files, None), Vec::<String>::new());
    assert_eq!(
        changed_files(dir, &files, Some((&test_code, false))),
        ["test_mul.py"]
    );
    assert_eq!(
        changed_files(dir, &files, Some((&|_| true, false))),
        ["kept", "test_mul.py"]
    );
    let mut unchanged = std::collections::HashSet::new();
    restore_files(dir, &files, Some((&mut unchanged, &test_code, false))).expect("restored");
    assert!(unchanged.contains(Path::new("kept")), "{unchanged:?}");
    assert!(
        !unchanged.contains(Path::new("test_mul.py")),
        "{unchanged:?}"
    );
}

/// The watch of a run ([`Scratch::watch`]): a directory above the test code moved away and
/// back, a test file rewritten and put back with its time set back, and a test file moved
/// aside and back, are changes the reset names, though every file is as it was; a mode set
/// again, what a run creates and removes beside the test code, and what it does to files
/// that are no test code, are not.
#[test]
fn a_watched_run_that_moves_test_code_and_puts_it_back_is_named() {
    let repo = repo_with_files();
    repo.write("tests/test_mul.sh", "exit 1\n");
    repo.write("tests/helper.sh", "true\n");
    repo.write("calc.sh", "echo\n");
    repo.commit_all("tests");
    let session = repo.session("w");
    let (commit, tree) = head(&repo);
    let mut scratch = Scratch::new(&session, &commit, &tree).expect("made");
    scratch.settle();
    scratch.baseline().expect("taken");
    let dir = scratch.path().to_path_buf();
    let test_code = |p: &Path| p.starts_with("tests");

    // Honest: a temporary file under tests/ made and removed, calc.sh moved aside and back.
    let watch = scratch.watch(&test_code).expect("watched");
    std::fs::write(dir.join("tests/tmp.out"), "x").expect("write");
    std::fs::remove_file(dir.join("tests/tmp.out")).expect("remove");
    std::fs::rename(dir.join("calc.sh"), dir.join("calc.sh.bak")).expect("rename");
    std::fs::rename(dir.join("calc.sh.bak"), dir.join("calc.sh")).expect("rename");
    scratch.watched(watch);
    assert_eq!(
        scratch.reset_changed(&test_code).expect("reset"),
        Vec::<String>::new()
    );

    // The directory swapped away and back.
    let watch = scratch.watch(&test_code).expect("watched");
    std::fs::rename(dir.join("tests"), dir.join("tests.away")).expect("rename");
    std::fs::create_dir(dir.join("tests")).expect("mkdir");
    std::fs::remove_dir(dir.join("tests")).expect("rmdir");
    std::fs::rename(dir.join("tests.away"), dir.join("tests")).expect("rename");
    scratch.watched(watch);
    assert_eq!(scratch.reset_changed(&test_code).expect("reset"), ["tests"]);

    // The test's mode set again (a `chmod +x` before it runs) is no write.
    let watch = scratch.watch(&test_code).expect("watched");
    let mode = std::fs::metadata(dir.join("tests/test_mul.sh"))
        .expect("stat")
        .permissions();
    std::fs::set_permissions(dir.join("tests/test_mul.sh"), mode).expect("chmod");
    scratch.watched(watch);
    assert_eq!(
        scratch.reset_changed(&test_code).expect("reset"),
        Vec::<String>::new()
    );

    // The test rewritten and put back, its modification time set back too: the watch saw
    // the writes.
    let watch = scratch.watch(&test_code).expect("watched");
    let test = dir.join("tests/test_mul.sh");
    let mtime = std::fs::metadata(&test)
        .expect("stat")
        .modified()
        .expect("mtime");
    std::fs::write(&test, "exit 0\n").expect("write");
    std::fs::write(&test, "exit 1\n").expect("write");
    std::fs::File::options()
        .write(true)
        .open(&test)
        .expect("open")
        .set_modified(mtime)
        .expect("set the time back");
    scratch.watched(watch);
    assert_eq!(
        scratch.reset_changed(&test_code).expect("reset"),
        ["tests/test_mul.sh"]
    );

    // Opened for writing and closed (an `mmap` that writes, whose writes are no events, needs
    // it), its time set back: named.
    let watch = scratch.watch(&test_code).expect("watched");
    let mtime = std::fs::metadata(&test)
        .expect("stat")
        .modified()
        .expect("mtime");
    std::fs::File::options()
        .write(true)
        .open(&test)
        .expect("open")
        .set_modified(mtime)
        .expect("set the time back");
    scratch.watched(watch);
    assert_eq!(
        scratch.reset_changed(&test_code).expect("reset"),
        ["tests/test_mul.sh"]
    );

    // A test file moved aside and back.
    let watch = scratch.watch(&test_code).expect("watched");
    std::fs::rename(dir.join("tests/helper.sh"), dir.join("h")).expect("rename");
    std::fs::rename(dir.join("h"), dir.join("tests/helper.sh")).expect("rename");
    scratch.watched(watch);
    assert_eq!(
        scratch.reset_changed(&test_code).expect("reset"),
        ["tests/helper.sh"]
    );
}
