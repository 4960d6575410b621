//! `run`'s helpers one behaviour each: session ids, clients and their files, turn numbers,
//! and the record of a turn a killed run left unfinished, in a real repository.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

fn last_subject(session: &Session) -> Option<String> {
    session
        .store
        .last_run_record()
        .expect("read the run record")
        .map(|(_, subject)| subject)
}

#[test]
fn a_new_agent_session_id_is_a_version_4_uuid() {
    let id = new_session_id();
    let groups: Vec<usize> = id.split('-').map(str::len).collect();
    assert_eq!(groups, vec![8, 4, 4, 4, 12], "{id}");
    assert!(
        id.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(&id[14..15], "4", "the version: {id}");
    assert!(
        matches!(&id[19..20], "8" | "9" | "a" | "b"),
        "the variant: {id}"
    );
}

#[test]
fn two_agent_session_ids_differ() {
    assert_ne!(new_session_id(), new_session_id());
}

#[test]
fn a_known_client_is_named_by_its_program_exactly() {
    assert_eq!(known_client("claude"), Some(Client::Claude));
    assert_eq!(known_client("codex"), Some(Client::Codex));
    assert_eq!(known_client("gemini"), Some(Client::Gemini));
    assert_eq!(known_client("Claude"), None);
    assert_eq!(known_client("/usr/bin/claude"), None);
    assert_eq!(known_client(""), None);
}

#[test]
fn each_client_registers_our_server_in_its_own_file() {
    assert_eq!(server_file(Client::Claude), ".mcp.json");
    assert_eq!(server_file(Client::Codex), ".codex/config.toml");
    assert_eq!(server_file(Client::Gemini), ".gemini/settings.json");
}

#[test]
fn a_subject_without_a_number_or_with_one_too_large_names_no_turn() {
    assert_eq!(turn_number("turn : x"), None);
    assert_eq!(turn_number("turn -1: x"), None);
    assert_eq!(turn_number("turn 4294967296: x"), None);
    assert_eq!(turn_number(""), None);
    assert_eq!(turn_number("Turn 3: x"), None);
    assert_eq!(turn_number("turn 4294967295: x"), Some(u32::MAX));
}

#[test]
fn a_turn_records_subject_names_the_move_and_whether_it_progressed() {
    assert_eq!(
        turn_subject(
            3,
            "EXECUTING_TDD",
            None,
            Some("step 1.1"),
            "DEBUGGING",
            false
        ),
        "turn 3: EXECUTING_TDD step 1.1 -> DEBUGGING (no progress)"
    );
}

#[test]
fn an_unfinished_turn_is_kept_on_disk_until_dropped() {
    let temp = tempfile::tempdir().expect("temp");
    let path = temp.path().join("runs/unfinished.json");
    let unfinished = Unfinished::write(&path, "{\"turn\":1}").expect("written");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        "{\"turn\":1}"
    );
    assert!(!path.with_extension("json.tmp").exists());
    drop(unfinished);
    assert!(!path.exists());
}

#[test]
fn without_an_unfinished_turn_nothing_is_recorded() {
    let repo = Repo::new();
    let session = repo.session("w");
    record_interrupted(&session, &repo.outside().join("none.json")).expect("runs");
    assert_eq!(last_subject(&session), None);
}

#[test]
fn an_unfinished_turn_is_recorded_as_interrupted_and_its_file_taken() {
    let repo = Repo::new();
    let session = repo.session("w");
    let file = repo.outside().join("unfinished.json");
    std::fs::write(&file, r#"{"turn":3,"state":"EXECUTING_TDD"}"#).expect("write");
    record_interrupted(&session, &file).expect("runs");
    assert_eq!(
        last_subject(&session).as_deref(),
        Some("turn 3: EXECUTING_TDD -> ? (interrupted: its run ended before the turn did)")
    );
    assert!(!file.exists());
}

#[test]
fn an_unfinished_turns_state_that_is_not_a_states_name_is_not_printed() {
    let repo = Repo::new();
    let session = repo.session("w");
    let file = repo.outside().join("unfinished.json");
    std::fs::write(&file, r#"{"turn":1,"state":"\u001b[31mRED"}"#).expect("write");
    record_interrupted(&session, &file).expect("runs");
    assert_eq!(
        last_subject(&session).as_deref(),
        Some("turn 1: ? -> ? (interrupted: its run ended before the turn did)")
    );
}

#[test]
fn a_turn_recorded_before_the_kill_is_not_recorded_again() {
    let repo = Repo::new();
    let session = repo.session("w");
    session
        .store
        .append_run_record(&[("turn.json", b"{}")], "turn 5: A -> B (progress)")
        .expect("recorded");
    let file = repo.outside().join("unfinished.json");
    std::fs::write(&file, r#"{"turn":5,"state":"A"}"#).expect("write");
    record_interrupted(&session, &file).expect("runs");
    assert_eq!(
        last_subject(&session).as_deref(),
        Some("turn 5: A -> B (progress)")
    );
    assert!(!file.exists(), "the file is taken all the same");
}

#[test]
fn an_unfinished_file_that_is_not_our_record_is_dropped_unrecorded() {
    let repo = Repo::new();
    let session = repo.session("w");
    let file = repo.outside().join("unfinished.json");
    std::fs::write(&file, b"\xff\xfe not json").expect("write");
    record_interrupted(&session, &file).expect("runs");
    assert_eq!(last_subject(&session), None);
    assert!(!file.exists());
}

#[test]
fn a_workflow_that_does_not_exist_has_no_tip_and_no_moves() {
    let repo = Repo::new();
    let session = repo.session("w");
    assert_eq!(workflow_tip(&session, false).expect("read"), None);
    assert_eq!(workflow_tip(&session, true).expect("read"), None);
    assert_eq!(moves_since(&session, None).expect("read"), Vec::new());
}

#[test]
fn a_tdd_workflows_tip_is_its_refs() {
    let repo = Repo::new();
    let session = repo.session("w");
    let snapshot = session.read_or_create().expect("created");
    assert_eq!(
        workflow_tip(&session, false).expect("read"),
        Some(snapshot.tip)
    );
}
