//! The session's own decisions on a real repository: which main branch and configuration
//! are in force, what reading a workflow creates or refuses, and the config file's bytes.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;
use std::sync::Arc;

#[test]
fn a_config_file_of_utf8_text_is_its_text() {
    let text = config_text(b"[claims]\nttl = \"1h\"\n".to_vec(), &Origin::WorkingTree)
        .expect("UTF-8 text");
    assert_eq!(text, "[claims]\nttl = \"1h\"\n");
}

#[test]
fn a_config_file_with_a_bad_byte_is_refused_naming_where_it_is() {
    let e = config_text(b"ab\xffcd".to_vec(), &Origin::WorkingTree).expect_err("refused");
    assert_eq!(e.origin, Origin::WorkingTree.to_string());
    assert!(e.message.contains("offset 2"), "{}", e.message);
}

#[test]
fn a_config_file_over_the_cap_is_refused_unread() {
    let huge = vec![b'#'; usize::try_from(crate::input::CAP).expect("fits") + 1];
    let e = config_text(huge, &Origin::MainBranch("main".into())).expect_err("refused");
    assert_eq!(e.origin, "main:.orchestrate.toml");
    assert!(e.message.contains("larger than the limit"), "{}", e.message);
}

#[test]
fn a_config_file_exactly_at_the_cap_is_read() {
    let full = vec![b'#'; usize::try_from(crate::input::CAP).expect("fits")];
    assert!(config_text(full, &Origin::WorkingTree).is_ok());
}

#[test]
fn the_pause_between_attempts_stays_under_a_cap_that_doubles() {
    for attempt in 0..6u32 {
        let cap = Duration::from_micros((1u64 << attempt) * 1000 + 100);
        for _ in 0..20 {
            let pause = backoff(attempt);
            assert!(pause >= Duration::from_micros(100), "{pause:?}");
            assert!(pause < cap, "attempt {attempt}: {pause:?} over {cap:?}");
        }
    }
}

#[test]
fn the_pause_between_attempts_stops_growing_after_the_sixth() {
    for attempt in [6u32, 7, 50, u32::MAX] {
        assert!(
            backoff(attempt) < Duration::from_micros(64_100),
            "{attempt}"
        );
    }
}

#[test]
fn the_main_branch_of_a_state_is_the_one_it_was_created_with() {
    let repo = Repo::new();
    repo.write(config::FILE_NAME, "main_branch = \"develop\"\n");
    let state = State::new(Some("trunk".into()));
    assert_eq!(
        repo.session("w").main_branch(Some(&state)).expect("read"),
        "trunk"
    );
}

#[test]
fn before_a_state_the_working_tree_config_names_the_main_branch() {
    let repo = Repo::new();
    repo.write(config::FILE_NAME, "main_branch = \"develop\"\n");
    assert_eq!(
        repo.session("w").main_branch(None).expect("read"),
        "develop"
    );
}

#[test]
fn without_a_state_or_a_config_the_main_branch_is_detected() {
    let repo = Repo::new();
    repo.git(&["branch", "-m", "main", "master"]);
    assert_eq!(repo.session("w").main_branch(None).expect("read"), "master");
}

#[test]
fn a_config_that_is_a_directory_is_a_config_error() {
    let repo = Repo::new();
    std::fs::create_dir(repo.dir().join(config::FILE_NAME)).expect("mkdir");
    assert!(matches!(
        repo.session("w").read_working_tree_config(),
        Err(EngineError::Config(_))
    ));
}

#[test]
fn a_config_that_is_not_utf8_is_a_config_error() {
    let repo = Repo::new();
    std::fs::write(repo.dir().join(config::FILE_NAME), b"x = \"\xfe\"\n").expect("write");
    assert!(matches!(
        repo.session("w").main_branch(None),
        Err(EngineError::Config(_))
    ));
}

#[test]
fn reading_a_missing_workflow_to_refuse_creates_nothing() {
    let repo = Repo::new();
    let session = repo.session("w");
    let Err(e) = session.read_or_refuse("record-test", |_| None) else {
        panic!("not refused");
    };
    assert!(e.to_string().contains("has not started yet"), "{e}");
    assert_eq!(repo.git(&["for-each-ref", "refs/orchestrator"]), "");
}

#[test]
fn reading_to_create_starts_the_workflow_in_initializing_on_main() {
    let repo = Repo::new();
    let snapshot = repo.session("w").read_or_create().expect("created");
    assert_eq!(snapshot.state.status(), Status::Initializing);
    assert_eq!(snapshot.state.main_branch.as_deref(), Some("main"));
    assert_eq!(
        repo.git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/orchestrator/workflows"
        ]),
        "refs/orchestrator/workflows/w"
    );
}

#[test]
fn reading_to_create_twice_creates_once() {
    let repo = Repo::new();
    let first = repo.session("w").read_or_create().expect("created");
    let second = repo.session("w").read_or_create().expect("read");
    assert_eq!(first.tip, second.tip);
}

#[test]
fn a_deleted_workflow_is_not_silently_started_again() {
    let repo = Repo::new();
    repo.session("w").read_or_create().expect("created");
    repo.git(&["update-ref", "-d", "refs/orchestrator/workflows/w"]);
    assert!(matches!(
        repo.session("w").read_or_create(),
        Err(EngineError::Store(StoreError::Vanished { .. }))
    ));
}

#[test]
fn a_master_plan_is_read_from_the_commit_named() {
    let repo = Repo::new();
    repo.write("PLAN.md", "## PR 1\n");
    let commit = repo.commit_all("plan");
    let session = repo.session("w");
    assert_eq!(
        session.master_plan_at(&commit, "PLAN.md").expect("read"),
        Some("## PR 1\n".to_string())
    );
}

#[test]
fn a_master_plan_missing_or_a_directory_is_none() {
    let repo = Repo::new();
    repo.write("docs/x.md", "x\n");
    let commit = repo.commit_all("docs");
    let session = repo.session("w");
    assert_eq!(
        session.master_plan_at(&commit, "PLAN.md").expect("read"),
        None
    );
    assert_eq!(session.master_plan_at(&commit, "docs").expect("read"), None);
}

#[test]
fn the_master_plan_blob_of_a_branch_that_does_not_exist_is_none() {
    let repo = Repo::new();
    repo.write("PLAN.md", "## PR 1\n");
    repo.commit_all("plan");
    let session = repo.session("w");
    assert_eq!(
        session
            .master_plan_blob("no-such-branch", "PLAN.md")
            .expect("read"),
        None
    );
    assert_eq!(
        session.master_plan_blob("main", "PLAN.md").expect("read"),
        Some(repo.git(&["rev-parse", "main:PLAN.md"]))
    );
}

#[test]
fn a_state_that_is_not_idle_holds_nothing() {
    let repo = Repo::new();
    let state = State::new(Some("main".into()));
    assert!(
        !repo
            .session("w")
            .idle_holds(&state, "PLAN.md")
            .expect("read")
    );
}

#[test]
fn idle_holds_while_the_master_plan_is_the_one_judged() {
    let repo = Repo::new();
    repo.write("PLAN.md", "## PR 1 (done)\n");
    repo.commit_all("plan");
    let blob = repo.git(&["rev-parse", "main:PLAN.md"]);
    let mut state = State::new(Some("main".into()));
    state.idle = Some(crate::workflow::state::Idle {
        master_plan: Some(blob),
    });
    assert!(
        repo.session("w")
            .idle_holds(&state, "PLAN.md")
            .expect("read")
    );
    repo.write("PLAN.md", "## PR 1 (done)\n## PR 2\n");
    repo.commit_all("another PR");
    assert!(
        !repo
            .session("w")
            .idle_holds(&state, "PLAN.md")
            .expect("read")
    );
}

#[test]
fn nothing_is_pinned_while_main_has_no_config_committed() {
    let repo = Repo::new();
    let pin = repo
        .session("w")
        .pin_now("main")
        .expect("read")
        .expect("main exists");
    assert_eq!(pin.config, None);
    assert_eq!(pin.commit, repo.git(&["rev-parse", "main"]));
}

#[test]
fn a_pin_names_mains_commit_and_its_config_blob() {
    let repo = Repo::new();
    repo.write(config::FILE_NAME, "\n");
    repo.commit_all("config");
    let pin = repo
        .session("w")
        .pin_now("main")
        .expect("read")
        .expect("main exists");
    assert_eq!(
        pin.config,
        Some(repo.git(&["rev-parse", "main:.orchestrate.toml"]))
    );
}

#[test]
fn a_session_outside_any_repository_is_refused() {
    let temp = tempfile::tempdir().expect("temp");
    assert!(Session::open(temp.path(), "w").is_err());
}

/// A server's session parses a configuration once and shares it from then on, the defaults
/// too; a changed file is read again, and a session that keeps nothing parses anew.
#[test]
fn a_remembered_configuration_is_shared_until_its_file_changes() {
    let repo = Repo::new();
    let mut session = repo.session("w");
    let fresh = |session: &Session| {
        session.begin_call();
        session.load_config(None).expect("load")
    };
    let first = fresh(&session);
    assert!(
        !Arc::ptr_eq(&first.config, &fresh(&session).config),
        "kept nothing"
    );
    session.remember_config();
    let defaults = fresh(&session);
    assert_eq!(defaults.origin, Origin::Defaults);
    assert!(
        Arc::ptr_eq(&defaults.config, &fresh(&session).config),
        "the defaults kept"
    );
    repo.write(config::FILE_NAME, "main_branch = \"develop\"\n");
    let written = fresh(&session);
    assert_eq!(written.origin, Origin::WorkingTree);
    assert_eq!(written.config.main_branch.as_deref(), Some("develop"));
    assert!(
        Arc::ptr_eq(&written.config, &fresh(&session).config),
        "the file's kept"
    );
    repo.write(config::FILE_NAME, "main_branch = \"trunk\"\n");
    assert_eq!(fresh(&session).config.main_branch.as_deref(), Some("trunk"));
}
