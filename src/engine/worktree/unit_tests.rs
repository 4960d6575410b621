//! `worktree add`, `list` and `remove` on a real repository, and the path helpers they use.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;
use crate::engine::test_repo::Repo;

#[test]
fn the_default_place_is_beside_the_primary_named_after_it() {
    assert_eq!(
        default_path(Path::new("/r/repo"), "w1"),
        PathBuf::from("/r/repo-w1")
    );
}

#[test]
fn the_default_place_beside_the_root_is_named_repo() {
    assert_eq!(
        default_path(Path::new("/"), "w1"),
        PathBuf::from("/repo-w1")
    );
}

#[test]
fn a_path_is_made_absolute_dropping_dots_without_the_disk() {
    assert_eq!(
        lexically_absolute(Path::new("/nonexistent/a"), Path::new("../b/./c")),
        PathBuf::from("/nonexistent/b/c")
    );
}

#[test]
fn an_absolute_path_stays_itself() {
    assert_eq!(
        lexically_absolute(Path::new("/elsewhere"), Path::new("/nonexistent/x/../y")),
        PathBuf::from("/nonexistent/y")
    );
}

#[test]
fn climbing_above_the_root_stays_at_the_root() {
    assert_eq!(
        lexically_absolute(Path::new("/"), Path::new("../../nonexistent-wt")),
        PathBuf::from("/nonexistent-wt")
    );
}

#[test]
fn a_linked_parent_is_named_as_the_file_system_names_it() {
    let temp = tempfile::tempdir().expect("temp");
    let real = temp.path().join("real");
    std::fs::create_dir(&real).expect("mkdir");
    std::os::unix::fs::symlink(&real, temp.path().join("link")).expect("link");
    let made = lexically_absolute(temp.path(), Path::new("link/wt"));
    assert_eq!(made, real.canonicalize().expect("exists").join("wt"));
}

#[test]
fn true_is_any_of_gits_spellings_of_it() {
    for value in ["true", "TRUE", "yes", "On", "1"] {
        assert!(is_true(value), "{value}");
    }
    for value in ["false", "", "2", "y", " true"] {
        assert!(!is_true(value), "{value}");
    }
}

#[test]
fn a_worktree_is_added_beside_the_primary_with_its_workflow_created() {
    let repo = Repo::new();
    let session = repo.session("main");
    let report = add(&session, "w1", None, repo.dir()).expect("added");
    let expected = repo
        .outside()
        .canonicalize()
        .expect("exists")
        .join("repo-w1");
    assert_eq!(report.path.canonicalize().expect("made"), expected);
    assert!(report.default_path);
    assert_eq!(report.state, Status::Initializing);
    assert_eq!(report.main_branch, "main");
    assert!(expected.join("README").is_file());
    assert_eq!(
        Repo::command_in(&expected, &["config", "--worktree", "orchestrate.workflow"]),
        "w1"
    );
}

#[test]
fn a_name_that_is_no_workflow_name_is_refused_and_nothing_is_made() {
    let repo = Repo::new();
    let session = repo.session("main");
    for name in ["../x", "a b", ""] {
        assert!(add(&session, name, None, repo.dir()).is_err(), "{name:?}");
        assert!(remove(&session, name).is_err(), "{name:?}");
    }
    assert_eq!(
        repo.git(&["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[test]
fn a_workflow_is_not_given_a_second_worktree() {
    let repo = Repo::new();
    let session = repo.session("main");
    add(&session, "w1", None, repo.dir()).expect("added");
    let elsewhere = repo.outside().join("second");
    assert!(add(&session, "w1", Some(&elsewhere), repo.dir()).is_err());
    assert!(!elsewhere.exists());
}

#[test]
fn the_list_names_each_worktree_with_its_workflow() {
    let repo = Repo::new();
    let session = repo.session("main");
    add(&session, "w1", None, repo.dir()).expect("added");
    let listed: Vec<(bool, String, Option<Status>)> = list(&session)
        .expect("listed")
        .worktrees
        .into_iter()
        .map(|w| (w.primary, w.workflow, w.state))
        .collect();
    assert_eq!(
        listed,
        vec![
            (true, "main".to_string(), None),
            (false, "w1".to_string(), Some(Status::Initializing)),
        ]
    );
}

#[test]
fn a_clean_worktree_is_removed_and_its_directory_goes() {
    let repo = Repo::new();
    let session = repo.session("main");
    let path = add(&session, "w1", None, repo.dir()).expect("added").path;
    let report = remove(&session, "w1").expect("removed");
    assert_eq!(report.workflow, "w1");
    assert!(!path.exists(), "{}", path.display());
}

#[test]
fn a_worktree_holding_uncommitted_work_is_not_removed() {
    let repo = Repo::new();
    let session = repo.session("main");
    let path = add(&session, "w1", None, repo.dir()).expect("added").path;
    std::fs::write(path.join("README"), "work in progress\n").expect("write");
    assert!(remove(&session, "w1").is_err());
    assert!(path.join("README").is_file());
}
