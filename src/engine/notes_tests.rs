//! `verify`'s ranges and verdicts on checkpoint commits in a real repository, and the notes
//! `record_checkpoint` writes.

use super::*;
use crate::engine::test_repo::Repo;
use crate::workflow::notes::NotePreflight;
use pretty_assertions::assert_eq;

fn passing_note(tree: &str) -> CheckpointNote {
    CheckpointNote::new(
        "w",
        None,
        tree,
        NotePreflight {
            passed: true,
            cached: false,
            gates: Vec::new(),
        },
        "key",
    )
}

fn report(session: &Session, range: &str) -> Vec<(String, Verification)> {
    match verify_range(session, &[range]) {
        Ok(report) => report
            .checkpoints
            .into_iter()
            .map(|c| (c.subject, c.verification))
            .collect(),
        Err(e) => panic!("verify {range}: {e}"),
    }
}

#[test]
fn a_subject_is_the_first_line_of_a_message() {
    assert_eq!(subject_of("checkpoint: 1.1\n\nbody\n"), "checkpoint: 1.1");
    assert_eq!(subject_of(""), "");
    assert_eq!(subject_of("\nsecond"), "");
}

#[test]
fn on_main_with_one_commit_the_default_range_is_that_commit() {
    let repo = Repo::new();
    assert_eq!(default_range(&repo.session("w")).expect("read"), "HEAD");
}

#[test]
fn on_main_the_default_range_is_the_last_commit() {
    let repo = Repo::new();
    repo.commit_all("second");
    assert_eq!(
        default_range(&repo.session("w")).expect("read"),
        "HEAD^..HEAD"
    );
}

#[test]
fn on_a_branch_the_default_range_is_what_it_adds_to_main_named_in_full() {
    let repo = Repo::new();
    repo.git(&["checkout", "-q", "-b", "pr-1"]);
    assert_eq!(
        default_range(&repo.session("w")).expect("read"),
        "refs/heads/main..HEAD"
    );
}

#[test]
fn an_option_given_as_a_range_is_refused_and_does_nothing() {
    let repo = Repo::new();
    let out = repo.outside().join("written");
    let option = format!("--output={}", out.display());
    match verify_range(&repo.session("w"), &[option.as_str()]) {
        Err(EngineError::BadInput { message, .. }) => {
            assert!(
                message.ends_with("is not a range: verify takes revisions, not options"),
                "{message}"
            );
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("not refused"),
    }
    assert!(!out.exists());
}

#[test]
fn a_range_git_cannot_read_is_bad_input_naming_it() {
    let repo = Repo::new();
    match verify_range(&repo.session("w"), &["no-such-ref..HEAD"]) {
        Err(EngineError::BadInput { message, .. }) => {
            assert!(
                message.starts_with("git cannot list the commits of no-such-ref..HEAD"),
                "{message}"
            );
        }
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("not refused"),
    }
}

#[test]
fn ordinary_commits_are_counted_and_none_is_judged() {
    let repo = Repo::new();
    repo.commit_all("an ordinary commit");
    let report = verify_range(&repo.session("w"), &["HEAD~1..HEAD"]).expect("read");
    assert_eq!(report.commits, 1);
    assert!(report.checkpoints.is_empty());
    assert_eq!(report.failure_count(), 0);
}

#[test]
fn a_checkpoint_commit_without_a_note_is_missing_its_record() {
    let repo = Repo::new();
    repo.commit_all("checkpoint: 1.1 unverified");
    assert_eq!(
        report(&repo.session("w"), "HEAD~1..HEAD"),
        vec![(
            "checkpoint: 1.1 unverified".to_string(),
            Verification::Missing
        )]
    );
}

#[test]
fn a_checkpoint_noted_for_another_tree_is_not_verified() {
    let repo = Repo::new();
    let commit = repo.commit_all("checkpoint: 1.1 amended");
    let session = repo.session("w");
    record_checkpoint(&session, &commit, &passing_note(&"1".repeat(40))).expect("noted");
    assert_eq!(
        report(&session, "HEAD~1..HEAD"),
        vec![(
            "checkpoint: 1.1 amended".to_string(),
            Verification::OtherTree
        )]
    );
}

#[test]
fn a_passing_note_no_workflow_backs_is_anyones_word() {
    let repo = Repo::new();
    let commit = repo.commit_all("checkpoint: 1.1 noted by hand");
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    record_checkpoint(&session, &commit, &passing_note(&tree)).expect("noted");
    let found = report(&session, "HEAD~1..HEAD");
    assert_eq!(found.len(), 1);
    assert!(!found[0].1.passes(), "{:?}", found[0].1);
}

#[test]
fn a_checkpoint_note_is_written_once_for_its_tree() {
    let repo = Repo::new();
    let commit = repo.commit_all("checkpoint: 1.1");
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    record_checkpoint(&session, &commit, &passing_note(&tree)).expect("noted");
    record_checkpoint(&session, &commit, &passing_note(&tree)).expect("noted again");
    let note = repo.git(&["notes", "--ref", "orchestrator", "show", &commit]);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(note.contains(&format!("\"tree\":\"{tree}\"")), "{note}");
}

#[test]
fn a_failing_verdict_is_no_pass_and_a_missing_one_is_none() {
    assert!(Verification::NoGates.passes());
    for v in [
        Verification::GatesMissing,
        Verification::Missing,
        Verification::Failed,
        Verification::OtherTree,
        Verification::Unauthenticated,
    ] {
        assert!(!v.passes(), "{v:?}");
    }
}
