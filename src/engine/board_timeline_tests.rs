//! The timeline's readings of notes (the final line among others, exits, sources) and the
//! timeline of a real repository's workflow.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

fn final_line(pr: &str) -> String {
    serde_json::json!({
        "v": 1, "kind": "final", "workflow": "w", "pr": pr, "branch": "feat/x",
        "tree": "t", "steps": 2, "review": null, "checkpoints": [], "config_changed": false, "tool": "git-orchestrate",
    })
    .to_string()
}

#[test]
fn the_final_line_of_a_note_is_found_among_other_lines() {
    let text = format!(
        "{{\"kind\":\"checkpoint\"}}\nnot json\n{}\n",
        final_line("PR 1")
    );
    let note = final_note(&text).expect("found");
    assert_eq!((note.pr.as_str(), note.steps), ("PR 1", 2));
}

#[test]
fn a_note_without_a_final_line_has_none() {
    assert!(final_note("").is_none());
    assert!(final_note("{\"kind\":\"checkpoint\"}\n\u{0}\u{1b}").is_none());
    let not_final = final_line("PR 1").replace("\"final\"", "\"checkpoint\"");
    assert!(final_note(&not_final).is_none());
    let other_kind = final_line("PR 1").replace("\"final\"", "\"finale\"");
    assert!(final_note(&other_kind).is_none());
}

#[test]
fn of_two_final_lines_the_first_is_read() {
    let text = format!("{}\n{}\n", final_line("first"), final_line("second"));
    assert_eq!(final_note(&text).expect("found").pr, "first");
}

#[test]
fn an_exit_reads_as_its_code_signal_or_time_limit() {
    assert_eq!(exit_text(&ExitRecord::Code(0)), "exit 0");
    assert_eq!(exit_text(&ExitRecord::Code(-1)), "exit -1");
    assert_eq!(exit_text(&ExitRecord::Signal(9)), "signal 9");
    assert_eq!(
        exit_text(&ExitRecord::TimedOut { after_ms: 1500 }),
        "timed out after 1500 ms"
    );
}

#[test]
fn a_notes_ref_of_no_known_shape_is_counted_as_local() {
    assert_eq!(
        source_of("refs/notes/other"),
        ("local".to_string(), "local")
    );
    assert_eq!(source_of(""), ("local".to_string(), "local"));
    assert_eq!(
        source_of("refs/notes/remotes/origin/something-ci"),
        ("local".to_string(), "local")
    );
}

#[test]
fn the_timeline_of_a_workflow_nowhere_is_refused() {
    let repo = Repo::new();
    match timeline(&repo.session("w"), "ghost", Some("origin")) {
        Err(EngineError::BadInput { message, .. }) => assert_eq!(
            message,
            "there is no workflow \"ghost\" here or on the remote as last fetched"
        ),
        Err(e) => panic!("refused otherwise: {e}"),
        Ok(_) => panic!("not refused"),
    }
}

#[test]
fn the_timeline_of_a_new_workflow_is_its_creation_read_locally() {
    let repo = Repo::new();
    let tip = repo.session("w").read_or_create().expect("created").tip;
    let report = timeline(&repo.session("w"), "w", None).expect("read");
    assert_eq!(
        (
            report.workflow.as_str(),
            report.shown,
            report.tip.clone(),
            report.total,
            report.truncated
        ),
        ("w", "local", tip.to_string(), 1, false)
    );
}

#[test]
fn a_workflow_only_the_remote_has_is_read_from_its_tracking_ref() {
    let repo = Repo::new();
    let tip = repo.session("w").read_or_create().expect("created").tip;
    repo.git(&[
        "update-ref",
        "refs/orchestrator/remotes/origin/workflows/w",
        &tip.to_string(),
    ]);
    repo.git(&["update-ref", "-d", "refs/orchestrator/workflows/w"]);
    let report = timeline(&repo.session("x"), "w", Some("origin")).expect("read");
    assert_eq!((report.shown, report.tip), ("remote", tip.to_string()));
}
