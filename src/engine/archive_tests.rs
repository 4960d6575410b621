//! `archive` and `archive --restore` on a real repository: what they refuse, and what a
//! repository with nothing finished gives.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

fn refusal(result: Result<RestoreReport, EngineError>) -> String {
    match result {
        Err(EngineError::BadInput { message, .. }) => message,
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(report) => panic!("not refused: {report:?}"),
    }
}

#[test]
fn a_repository_without_workflows_archives_nothing() {
    let repo = Repo::new();
    assert_eq!(
        archive(&repo.session("w"), false).expect("runs"),
        ArchiveReport {
            archived: Vec::new(),
            moved_on: Vec::new(),
            total: 0,
            claims: Vec::new(),
            dry_run: false,
        }
    );
}

#[test]
fn a_workflow_still_at_work_is_not_archived() {
    let repo = Repo::new();
    let tip = repo.session("w1").read_or_create().expect("created").tip;
    let report = archive(&repo.session("w1"), false).expect("runs");
    assert!(report.archived.is_empty(), "{report:?}");
    assert_eq!(
        repo.git(&["rev-parse", "refs/orchestrator/workflows/w1"]),
        tip.to_string()
    );
}

#[test]
fn a_name_that_is_no_workflow_name_is_not_restored() {
    let repo = Repo::new();
    for name in ["../x", "", "a b", "w\u{1b}", "refs/heads/main"] {
        let message = refusal(restore(&repo.session("w"), name, false));
        assert!(
            message.ends_with("is no workflow name"),
            "{name:?}: {message}"
        );
    }
}

#[test]
fn a_name_the_archive_does_not_hold_is_not_restored() {
    let repo = Repo::new();
    assert_eq!(
        refusal(restore(&repo.session("w"), "gone", false)),
        "workflow gone is not in the archive: nothing to restore"
    );
}

#[test]
fn nothing_is_restored_over_a_live_workflow() {
    let repo = Repo::new();
    let tip = repo.session("w1").read_or_create().expect("created").tip;
    assert_eq!(
        refusal(restore(&repo.session("w1"), "w1", true)),
        format!("workflow w1 has a live ref (at {tip}): nothing is restored over it")
    );
}

#[test]
fn the_tip_of_a_workflow_that_never_was_is_none() {
    let repo = Repo::new();
    assert_eq!(tip_or_archived(&repo.session("w")).expect("read"), None);
}

#[test]
fn the_tip_of_a_live_workflow_is_its_refs() {
    let repo = Repo::new();
    let session = repo.session("w");
    let tip = session.read_or_create().expect("created").tip;
    assert_eq!(tip_or_archived(&session).expect("read"), Some(tip));
}

#[test]
fn a_workflow_at_work_is_not_finished_and_an_unreadable_tip_is_not_either() {
    let repo = Repo::new();
    let session = repo.session("w");
    let tip = session.read_or_create().expect("created").tip;
    assert!(!finished(&session, "w", tip).expect("read"));
    let head = repo.git(&["rev-parse", "HEAD"]);
    let id = ObjectId::from_hex(head.as_bytes()).expect("an id");
    assert!(!finished(&session, "w", id).expect("read"));
}
