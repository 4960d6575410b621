//! How the engine's errors read, and the helpers that make the common ones.

use super::*;
use crate::workflow::fields::Field;
use pretty_assertions::assert_eq;

fn problem(commit: Option<&str>) -> AuditProblem {
    AuditProblem {
        workflow: "w1".into(),
        commit: commit.map(str::to_string),
        problem: "its state is not what its event makes".into(),
        expected: None,
        found: None,
        fix: None,
    }
}

#[test]
fn an_audit_problem_names_its_workflow_and_commit() {
    assert_eq!(
        problem(Some("abc123")).to_string(),
        "workflow w1, commit abc123: its state is not what its event makes"
    );
}

#[test]
fn an_audit_problem_about_the_ref_itself_names_no_commit() {
    assert_eq!(
        problem(None).to_string(),
        "workflow w1: its state is not what its event makes"
    );
}

#[test]
fn an_unsafe_setting_reads_as_the_setting_where_it_is_and_why() {
    let u = Unsafe {
        setting: "core.worktree".into(),
        origin: ".git/config".into(),
        why: "another working tree".into(),
        fix: "unset it".into(),
    };
    assert_eq!(
        u.to_string(),
        "core.worktree (in .git/config): another working tree"
    );
    assert_eq!(
        EngineError::NotHermetic(Box::new(u)).to_string(),
        "nothing can be verified in this repository: core.worktree (in .git/config): another working tree"
    );
}

#[test]
fn a_lost_write_is_a_conflict_and_a_store_error_stays_one() {
    assert!(matches!(
        EngineError::from(WriteError::Conflict),
        EngineError::Conflict
    ));
    let store = StoreError::TicketWorkflow {
        reference: "refs/orchestrator/workflows/t".into(),
    };
    assert!(matches!(
        EngineError::from(WriteError::Store(store)),
        EngineError::Store(StoreError::TicketWorkflow { .. })
    ));
}

#[test]
fn a_wrong_state_is_a_rejection_in_that_state_with_its_hint() {
    match wrong_state(Status::Initializing, "not now", "do this") {
        EngineError::Rejected(r) => {
            assert_eq!(r.kind, workflow::RejectionKind::WrongState);
            assert_eq!(r.state, Status::Initializing);
            assert_eq!(r.message, "not now");
            assert_eq!(r.hint, "do this");
        }
        other => panic!("not a rejection: {other:?}"),
    }
}

#[test]
fn an_io_error_says_what_could_not_be_done() {
    let e = io_error("read x")(std::io::Error::from(std::io::ErrorKind::NotFound));
    assert!(e.to_string().starts_with("could not read x: "), "{e}");
}

#[test]
fn a_commit_kept_after_a_failure_is_named_by_its_short_id() {
    let e = EngineError::AfterCommit {
        commit: "0123456789abcdef0123".into(),
        source: Box::new(EngineError::Conflict),
    };
    assert_eq!(
        e.to_string(),
        "checkpoint commit 0123456789ab was made and is kept, but recording it failed: the workflow changed while this command ran"
    );
}

#[test]
fn plain_text_passes_the_field_rule() {
    assert!(check_field(Field::Summary, "add a counter\n\twith a tab\r\n").is_ok());
}

#[test]
fn an_empty_field_is_refused_as_bad_input_naming_the_field() {
    match check_field(Field::Comment, "  \n") {
        Err(EngineError::BadInput { message, hint }) => {
            assert_eq!(
                message,
                "the comment must not be empty; nothing was written"
            );
            assert!(hint.starts_with("Give the comment as plain text"), "{hint}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_field_with_an_escape_character_is_refused_at_its_offset() {
    match check_field(Field::Message, "ok\u{1b}[31m") {
        Err(EngineError::BadInput { message, .. }) => {
            assert!(message.contains("escape, U+001B"), "{message}");
            assert!(message.contains("at byte 2"), "{message}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_field_over_its_cap_is_refused_with_the_cap_in_the_hint() {
    let long = "x".repeat(Field::Summary.cap() + 1);
    match check_field(Field::Summary, &long) {
        Err(EngineError::BadInput { hint, .. }) => {
            assert!(hint.contains("at most 64 KiB"), "{hint}")
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_missing_key_file_is_bad_input_naming_it() {
    let temp = tempfile::tempdir().expect("temp");
    let key = temp.path().join("id_ed25519");
    match require_key_file(&key, "signing key") {
        Err(EngineError::BadInput { message, .. }) => {
            assert!(
                message.starts_with(&format!("the signing key {}", key.display())),
                "{message}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
    std::fs::write(&key, "key").expect("write");
    assert!(require_key_file(&key, "signing key").is_ok());
}

#[test]
fn a_directory_is_no_key_file() {
    let temp = tempfile::tempdir().expect("temp");
    assert!(matches!(
        require_key_file(temp.path(), "key"),
        Err(EngineError::BadInput { .. })
    ));
}
