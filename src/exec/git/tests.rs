//! Tests of the git porcelain: paths exactly as named, versions as git prints them, and
//! `reset` given a full commit id.

use super::*;
use pretty_assertions::assert_eq;

use crate::test_git::git;

#[test]
fn paths_come_back_exactly_as_named_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    git(dir, &["init", "--quiet"]);
    git(dir, &["commit", "--quiet", "--allow-empty", "-m", "empty"]);
    let first = git(dir, &["rev-parse", "HEAD"]);
    let names = ["a b.txt", "docs/Plän.md", "new\nline.txt", "tab\there.txt"];
    std::fs::create_dir(dir.join("docs")).unwrap();
    for name in names {
        std::fs::write(dir.join(name), "x\n").unwrap();
    }
    let g = Git::new(dir);
    let mut untracked = g.untracked_files().unwrap();
    untracked.sort();
    assert_eq!(untracked, names);
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "-m", "files"]);
    let mut changed = g.changed_files(&first, "HEAD").unwrap();
    changed.sort();
    assert_eq!(changed, names);
}

#[test]
fn versions_are_read_as_git_prints_them() {
    assert_eq!(parse_version("2.39.5"), Some((2, 39)));
    assert_eq!(parse_version("2.47.3.windows.1"), Some((2, 47)));
    assert_eq!(parse_version("2.39.5 (Apple Git-154)"), Some((2, 39)));
    assert_eq!(parse_version("3.0"), Some((3, 0)));
    assert_eq!(parse_version("2"), None);
    assert_eq!(parse_version("unknown"), None);
    assert!(parse_version("2.38.9") < Some(MIN_VERSION));
    assert!(parse_version("2.39.0") >= Some(MIN_VERSION));
    assert!(parse_version("10.1") > Some(MIN_VERSION));
}

#[test]
fn only_a_full_object_id_is_passed_to_reset_without_end_of_options() {
    assert!(is_full_object_id(&"a".repeat(40)));
    assert!(is_full_object_id(&"0123456789abcdef".repeat(4)));
    for not in [
        "-m",
        "HEAD",
        "abc123",
        &"A".repeat(40),
        &"g".repeat(40),
        &"a".repeat(41),
    ] {
        assert!(!is_full_object_id(not), "{not}");
    }
}

/// git 2.39 refuses `reset --keep --end-of-options <commit>`; this is the form that
/// works there and on newer gits, even beside a file named like the commit.
#[test]
fn reset_keep_moves_to_a_commit_whose_id_is_also_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    git(dir, &["init", "--quiet"]);
    git(dir, &["commit", "--quiet", "--allow-empty", "-m", "one"]);
    let first = git(dir, &["rev-parse", "HEAD"]).trim().to_string();
    git(dir, &["commit", "--quiet", "--allow-empty", "-m", "two"]);
    std::fs::write(dir.join(&first), "x\n").unwrap();
    let g = Git::new(dir);
    g.reset_keep(&first).unwrap();
    assert_eq!(git(dir, &["rev-parse", "HEAD"]).trim(), first);
    let refused = g.reset_keep("HEAD~1").unwrap_err();
    assert_eq!(refused.status, None, "{refused}");
}

/// An input and an answer each larger than a pipe holds: the input is written while the
/// answer is read, where writing it all first waited for ever. The trees of the commits
/// asked about, each once, and nothing for what is not a commit here.
#[test]
fn a_batch_larger_than_a_pipe_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    git(dir, &["init", "--quiet"]);
    git(dir, &["commit", "--quiet", "--allow-empty", "-m", "empty"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    let tree = git(dir, &["rev-parse", "HEAD^{tree}"]);
    let missing: Vec<String> = (0..5000).map(|i| format!("{i:040x}")).collect();
    let mut asked: Vec<&str> = missing.iter().map(String::as_str).collect();
    asked.push(&head);
    let g = Git::new(dir);
    assert_eq!(g.trees_of(&asked).unwrap(), [(head.clone(), tree)]);
    assert_eq!(
        g.present_commits(&asked).unwrap(),
        std::collections::HashSet::from([head])
    );
}

/// A link left in the worktrees' directory under a dead process's name (a confined command
/// can write there) is removed itself, not followed: the worktree it names keeps its files.
#[test]
fn a_link_among_the_scratch_worktrees_is_removed_not_followed() {
    let (dir, head) = crate::test_git::repo_with_a_commit();
    let sibling = dir.path().join("sibling");
    git(
        dir.path(),
        &[
            "worktree",
            "add",
            "--quiet",
            sibling.to_str().unwrap(),
            &head,
        ],
    );
    std::fs::write(sibling.join("work.txt"), "uncommitted").unwrap();
    let parent = dir.path().join(".git").join("scratch");
    std::fs::create_dir_all(&parent).unwrap();
    // No process has this id (above the kernel's pid_max).
    let planted = parent.join("wt-99999999-x");
    std::os::unix::fs::symlink(&sibling, &planted).unwrap();
    let g = Git::new(dir.path());
    let made = g.temp_worktree(&parent, &head).expect("a worktree");
    drop(made);
    assert!(
        std::fs::symlink_metadata(&planted).is_err(),
        "the link is gone"
    );
    assert_eq!(
        std::fs::read_to_string(sibling.join("work.txt")).unwrap(),
        "uncommitted"
    );
}
