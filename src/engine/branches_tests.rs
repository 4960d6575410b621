//! The branch names the engine hands out, against a real repository's branches.

use super::*;
use crate::engine::test_repo::Repo;
use crate::workflow::RejectionKind;
use pretty_assertions::assert_eq;

#[test]
fn a_title_no_branch_has_is_its_own_name() {
    let repo = Repo::new();
    assert_eq!(
        free_branch_name(&repo.session("w"), "feat: add a counter").expect("named"),
        "feat/add-a-counter"
    );
}

#[test]
fn a_taken_name_is_numbered_from_2() {
    let repo = Repo::new();
    repo.git(&["branch", "feat/add-a-counter"]);
    assert_eq!(
        free_branch_name(&repo.session("w"), "feat: add a counter").expect("named"),
        "feat/add-a-counter-2"
    );
    repo.git(&["branch", "feat/add-a-counter-2"]);
    assert_eq!(
        free_branch_name(&repo.session("w"), "feat: add a counter").expect("named"),
        "feat/add-a-counter-3"
    );
}

#[test]
fn a_branch_named_as_the_prefix_flattens_the_name() {
    let repo = Repo::new();
    repo.git(&["branch", "feat"]);
    assert_eq!(
        free_branch_name(&repo.session("w"), "feat: add a counter").expect("named"),
        "feat-add-a-counter"
    );
}

#[test]
fn a_title_without_a_letter_or_digit_is_refused_as_invalid_input() {
    let repo = Repo::new();
    match free_branch_name(&repo.session("w"), "!!! ... ???") {
        Err(EngineError::Rejected(r)) => {
            assert_eq!(r.kind, RejectionKind::InvalidInput);
            assert!(
                r.message.contains("has no letter or digit"),
                "{}",
                r.message
            );
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_hostile_title_still_gives_a_valid_branch_name() {
    let repo = Repo::new();
    for title in [
        "../../etc/passwd",
        "fix: a..b",
        "x\u{1b}[31m red",
        "refs/heads/main",
        "@{-1}",
        "name.lock",
        &"long ".repeat(200),
    ] {
        let name = free_branch_name(&repo.session("w"), title).expect("named");
        assert!(is_valid_branch_name(&name), "{title:?} gave {name:?}");
        assert!(!name.contains(".."), "{title:?} gave {name:?}");
        assert!(
            repo.command(&["check-ref-format", "--branch", &name])
                .output()
                .expect("git runs")
                .status
                .success(),
            "git refuses {name:?} (from {title:?})"
        );
    }
}

#[test]
fn no_parent_is_a_branch_of_a_flat_name() {
    let repo = Repo::new();
    assert!(!parent_is_branch(&repo.session("w"), "main").expect("read"));
}

#[test]
fn any_ancestor_of_a_nested_name_that_is_a_branch_counts() {
    let repo = Repo::new();
    repo.git(&["branch", "a/b"]);
    let session = repo.session("w");
    assert!(parent_is_branch(&session, "a/b/c").expect("read"));
    assert!(!parent_is_branch(&session, "a/bc/d").expect("read"));
}

#[test]
fn a_branch_no_other_workflow_drives_is_free() {
    let repo = Repo::new();
    repo.session("other").read_or_create().expect("created");
    assert!(check_branch_free(&repo.session("w"), "feat/x", Status::Initializing).is_ok());
}
