//! The proofs a turn of `run` leaves (session start, MCP server start), each taken once, in
//! a real repository's git directory; and how the turn's last message is matched.

use super::*;
use crate::agent::hook::StopRecord;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

#[test]
fn no_session_start_is_proven_without_its_record() {
    let repo = Repo::new();
    assert!(!take_run_start(&repo.session("w"), "token-1", "claude"));
}

#[test]
fn a_session_start_is_proven_once_for_its_client() {
    let repo = Repo::new();
    let session = repo.session("w");
    record_run_start(&session, "token-1", "claude", "sess-1");
    assert!(take_run_start(&session, "token-1", "claude"));
    assert!(
        !take_run_start(&session, "token-1", "claude"),
        "one turn, one token"
    );
}

#[test]
fn another_clients_session_start_proves_nothing_and_is_taken() {
    let repo = Repo::new();
    let session = repo.session("w");
    record_run_start(&session, "token-1", "codex", "sess-1");
    assert!(!take_run_start(&session, "token-1", "claude"));
    assert!(!session.store.run_proof_file("token-1").exists());
}

#[test]
fn a_session_start_under_another_token_proves_nothing() {
    let repo = Repo::new();
    let session = repo.session("w");
    record_run_start(&session, "token-1", "claude", "s");
    assert!(!take_run_start(&session, "token-2", "claude"));
}

#[test]
fn a_server_start_is_proven_once() {
    let repo = Repo::new();
    let session = repo.session("w");
    assert!(!take_server_start(&session, "t"));
    record_server_start(&session, "t");
    assert!(take_server_start(&session, "t"));
    assert!(!take_server_start(&session, "t"));
}

#[test]
fn a_directory_in_place_of_a_server_proof_proves_nothing() {
    let repo = Repo::new();
    let session = repo.session("w");
    std::fs::create_dir_all(server_proof_file(&session, "t")).expect("mkdir");
    assert!(!take_server_start(&session, "t"));
}

#[test]
fn a_server_proof_is_not_a_session_start_proof() {
    let repo = Repo::new();
    let session = repo.session("w");
    record_server_start(&session, "t");
    assert!(!take_run_start(&session, "t", "claude"));
}

#[test]
fn a_message_longer_than_what_the_hook_said_does_not_end_the_turn() {
    assert!(!ends_the_turn("Let me look. All done.", "All done."));
    assert!(ends_the_turn(" \tAll done.\n", "All done."));
}

#[test]
fn a_stop_record_is_written_whole_in_a_directory_made_for_it() {
    let temp = tempfile::tempdir().expect("temp");
    let path = temp.path().join("stop/record.json");
    let record = StopRecord {
        tip: Some("abc".into()),
        blocks: 2,
    };
    write_record(&path, &record).expect("written");
    let text = std::fs::read_to_string(&path).expect("read");
    assert_eq!(text, r#"{"tip":"abc","blocks":2}"#);
    let left: Vec<_> = std::fs::read_dir(temp.path().join("stop"))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}

#[test]
fn a_stop_record_is_rewritten_in_place_and_nothing_else_is_written_through() {
    use std::os::unix::fs::MetadataExt as _;
    let temp = tempfile::tempdir().expect("temp");
    let dir = temp.path().join("stop");
    let path = dir.join("record.json");
    let longer = StopRecord {
        tip: Some("a-longer-tip".into()),
        blocks: 12,
    };
    write_record(&path, &longer).expect("first");
    let inode = std::fs::metadata(&path).expect("stat").ino();
    let shorter = StopRecord {
        tip: Some("abc".into()),
        blocks: 1,
    };
    write_record(&path, &shorter).expect("again");
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        r#"{"tip":"abc","blocks":1}"#,
        "what the longer record held past the new one is cut"
    );
    assert_eq!(
        std::fs::metadata(&path).expect("stat").ino(),
        inode,
        "in place"
    );
    // A link in its place is replaced, its target untouched (a FIFO: `store::files`' test).
    let target = temp.path().join("elsewhere");
    std::fs::write(&target, "mine").expect("target");
    std::fs::remove_file(&path).expect("remove");
    std::os::unix::fs::symlink(&target, &path).expect("link");
    write_record(&path, &shorter).expect("over a link");
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "mine");
    assert!(std::fs::symlink_metadata(&path).expect("stat").is_file());
}
