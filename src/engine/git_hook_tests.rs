//! The hooks' own readings (the scissors line, zero ids, pushed ref lines) and what
//! `post-commit` and `pre-push` do in a real repository.

use super::*;
use crate::engine::test_repo::Repo;
use crate::workflow::notes::NotePreflight;
use pretty_assertions::assert_eq;

const SCISSORS: &str = "# ------------------------ >8 ------------------------\n";

#[test]
fn the_message_stops_at_the_scissors_line() {
    let message = format!("checkpoint: 1.1\n\nbody\n{SCISSORS}diff --git a/x b/x\n");
    assert_eq!(above_scissors(&message), "checkpoint: 1.1\n\nbody\n");
}

#[test]
fn a_message_without_scissors_is_whole() {
    let message = "subject\n\n# a comment\n";
    assert_eq!(above_scissors(message), message);
    assert_eq!(above_scissors(""), "");
}

#[test]
fn scissors_must_be_a_whole_line_to_cut() {
    let indented = format!("subject\n  {SCISSORS}");
    assert_eq!(above_scissors(&indented), indented);
    let trailing = "subject\n# ------------------------ >8 ------------------------ x\n";
    assert_eq!(above_scissors(trailing), trailing);
}

#[test]
fn scissors_on_the_first_line_leave_an_empty_message() {
    let message = format!("{SCISSORS}checkpoint: below the cut\n");
    assert_eq!(above_scissors(&message), "");
}

#[test]
fn an_id_of_zeros_alone_is_zero() {
    assert!(is_zero(&"0".repeat(40)));
    assert!(is_zero(&"0".repeat(64)));
    assert!(!is_zero(&format!("{}1", "0".repeat(39))));
}

#[test]
fn the_tail_of_a_gates_output_is_its_last_forty_lines() {
    let output: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    let tail = output_tail(output.as_bytes());
    let expected: String = (11..=50).map(|n| format!("line {n}\n")).collect();
    assert_eq!(tail, expected);
}

#[test]
fn the_tail_of_output_without_a_final_newline_gets_one_and_bad_bytes_are_replaced() {
    assert_eq!(output_tail(b"ok"), "ok\n");
    assert_eq!(output_tail(b"a\xffb"), "a\u{fffd}b\n");
    assert_eq!(output_tail(b""), "");
}

#[test]
fn a_pending_record_is_written_whole_in_a_directory_made_for_it() {
    let temp = tempfile::tempdir().expect("temp");
    let path = temp.path().join("a/b/note");
    write_pending(&path, "{\"v\":1}").expect("written");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "{\"v\":1}");
    write_pending(&path, "second").expect("replaced");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "second");
}

#[test]
fn post_commit_without_a_pending_record_passes() {
    let repo = Repo::new();
    assert!(matches!(
        post_commit(&repo.session("w")).expect("runs"),
        Outcome::Pass
    ));
}

#[test]
fn post_commit_takes_an_unreadable_record_away_and_notes_nothing() {
    let repo = Repo::new();
    let session = repo.session("w");
    let path = pending_note(&session);
    write_pending(&path, "not json").expect("written");
    assert!(matches!(
        post_commit(&session).expect("runs"),
        Outcome::Pass
    ));
    assert!(!path.exists(), "the record is taken");
    assert_eq!(repo.git(&["notes", "--ref", "orchestrator", "list"]), "");
}

fn note_for(tree: &str) -> String {
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
    .to_line()
}

#[test]
fn post_commit_notes_a_checkpoint_commit_whose_tree_the_record_names() {
    let repo = Repo::new();
    let commit = repo.commit_all("checkpoint: 1.1 a step");
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    write_pending(&pending_note(&session), &note_for(&tree)).expect("written");
    match post_commit(&session).expect("runs") {
        Outcome::Noted(noted) => assert_eq!(noted, commit),
        other => panic!("not noted: {other:?}"),
    }
    let note = repo.git(&["notes", "--ref", "orchestrator", "show", &commit]);
    assert!(note.contains(&tree), "{note}");
}

#[test]
fn post_commit_does_not_note_an_ordinary_commit_or_another_tree() {
    let repo = Repo::new();
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let session = repo.session("w");
    write_pending(&pending_note(&session), &note_for(&tree)).expect("written");
    assert!(matches!(
        post_commit(&session).expect("runs"),
        Outcome::Pass
    ));
    repo.commit_all("checkpoint: 1.1 a step");
    write_pending(&pending_note(&session), &note_for(&"1".repeat(40))).expect("written");
    assert!(matches!(
        post_commit(&session).expect("runs"),
        Outcome::Pass
    ));
    assert_eq!(repo.git(&["notes", "--ref", "orchestrator", "list"]), "");
}

#[test]
fn pre_push_of_deletions_and_state_refs_alone_passes() {
    let repo = Repo::new();
    let head = repo.git(&["rev-parse", "HEAD"]);
    let zero = "0".repeat(40);
    let lines = format!(
        "(delete) {zero} refs/heads/gone {head}\n\
         refs/orchestrator/workflows/w {head} refs/orchestrator/workflows/w {zero}\n\
         refs/notes/orchestrator {head} refs/notes/orchestrator {zero}\n"
    );
    assert!(matches!(
        pre_push(&repo.session("w"), "origin", &lines).expect("runs"),
        Outcome::Pass
    ));
}

#[test]
fn pre_push_ignores_lines_that_are_not_four_words() {
    let repo = Repo::new();
    assert!(matches!(
        pre_push(
            &repo.session("w"),
            "origin",
            "\n\ngarbage\nrefs/heads/x abc\n"
        )
        .expect("runs"),
        Outcome::Pass
    ));
}

#[test]
fn pre_push_names_a_pushed_checkpoint_commit_without_a_passing_note() {
    let repo = Repo::new();
    let commit = repo.commit_all("checkpoint: 1.1 unverified");
    let zero = "0".repeat(40);
    let lines = format!("refs/heads/main {commit} refs/heads/main {zero}\n");
    match pre_push(&repo.session("w"), "origin", &lines).expect("runs") {
        Outcome::Unverified { commits, refused } => {
            let ids: Vec<&str> = commits.iter().map(|c| c.commit.as_str()).collect();
            assert_eq!(ids, vec![commit.as_str()]);
            assert!(!refused, "the default is a warning");
        }
        other => panic!("not unverified: {other:?}"),
    }
}

#[test]
fn pre_push_of_ordinary_commits_passes() {
    let repo = Repo::new();
    let commit = repo.commit_all("an ordinary commit");
    let zero = "0".repeat(40);
    let lines = format!("refs/heads/main {commit} refs/heads/main {zero}\n");
    assert!(matches!(
        pre_push(&repo.session("w"), "origin", &lines).expect("runs"),
        Outcome::Pass
    ));
}

#[test]
fn commit_msg_of_an_ordinary_message_passes_without_verifying() {
    let repo = Repo::new();
    let file = repo.outside().join("MSG");
    std::fs::write(
        &file,
        "fix a typo\n\ncheckpoint: in the body is no checkpoint\n",
    )
    .expect("write");
    assert!(matches!(
        commit_msg(&repo.session("w"), &file).expect("runs"),
        Outcome::Pass
    ));
}

#[test]
fn commit_msg_of_a_missing_message_file_is_an_error() {
    let repo = Repo::new();
    let missing = repo.outside().join("no-such-file");
    assert!(commit_msg(&repo.session("w"), &missing).is_err());
}

#[test]
fn commit_msg_of_a_checkpoint_with_unstaged_changes_names_them() {
    let repo = Repo::new();
    repo.write("README", "changed\n");
    let file = repo.outside().join("MSG");
    std::fs::write(&file, "checkpoint: 1.1 step\n").expect("write");
    match commit_msg(&repo.session("w"), &file).expect("runs") {
        Outcome::Unstaged(files) => assert_eq!(files, vec!["README".to_string()]),
        other => panic!("not refused as unstaged: {other:?}"),
    }
}
