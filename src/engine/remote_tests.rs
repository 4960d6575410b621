//! The coordination remote, main fetched from and pushed to a real bare remote with a
//! lease, and the refusals a push's race shows.

use super::*;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

/// A repository with a bare clone of it as `origin`, main pushed there.
fn with_origin() -> (Repo, std::path::PathBuf) {
    let repo = Repo::new();
    let bare = repo.outside().join("origin.git");
    let bare_path = bare.display().to_string();
    repo.git(&["clone", "-q", "--bare", ".", &bare_path]);
    repo.git(&["remote", "add", "origin", &bare_path]);
    (repo, bare)
}

fn said(stderr: &str) -> GitError {
    GitError {
        command: "git push".into(),
        status: Some(1),
        stderr: stderr.into(),
    }
}

#[test]
fn the_remotes_own_compare_and_swap_refusing_is_a_lost_race() {
    assert!(lost_race(&said(
        "remote: error: cannot lock ref 'refs/heads/main': is at 1111 but expected 2222"
    )));
}

#[test]
fn an_empty_refusal_is_no_race() {
    assert!(!lost_race(&said("")));
}

#[test]
fn a_configured_remote_that_does_not_exist_names_the_ones_that_do() {
    let remotes = vec!["origin".to_string(), "fork".to_string()];
    match choose_remote(Some("up"), &remotes) {
        Err(EngineError::BadInput { message, hint }) => {
            assert_eq!(
                message,
                "`remote = \"up\"` in .orchestrate.toml names no remote of this repository"
            );
            assert!(
                hint.ends_with("change `remote` to one of: origin, fork."),
                "{hint}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_configured_remote_in_a_repository_without_remotes_says_there_are_none() {
    match choose_remote(Some("origin"), &[]) {
        Err(EngineError::BadInput { hint, .. }) => {
            assert!(hint.ends_with("one of: (none)."), "{hint}")
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_remote_is_chosen_by_its_exact_name() {
    let remotes = vec!["Origin".to_string(), "origin2".to_string()];
    assert_eq!(choose_remote(None, &remotes).expect("chosen"), None);
}

#[test]
fn the_coordination_remote_of_a_repository_is_origin() {
    let (repo, _bare) = with_origin();
    let state = State::new(Some("main".into()));
    assert_eq!(
        coordination_remote(&repo.session("w"), &state).expect("read"),
        Some("origin".to_string())
    );
}

#[test]
fn the_coordination_remote_is_the_configs_when_it_names_one() {
    let (repo, bare) = with_origin();
    repo.git(&["remote", "add", "up", &bare.display().to_string()]);
    repo.write(".orchestrate.toml", "remote = \"up\"\n");
    let state = State::new(Some("main".into()));
    assert_eq!(
        coordination_remote(&repo.session("w"), &state).expect("read"),
        Some("up".to_string())
    );
}

#[test]
fn fetching_main_gives_its_commit_on_the_remote_and_tracks_it() {
    let (repo, _bare) = with_origin();
    let head = repo.git(&["rev-parse", "HEAD"]);
    let seen = fetch_main(&repo.session("w"), "origin", "main").expect("fetched");
    assert_eq!(seen, Some(head.clone()));
    assert_eq!(repo.git(&["rev-parse", "refs/remotes/origin/main"]), head);
}

#[test]
fn fetching_a_main_the_remote_does_not_have_gives_none() {
    let (repo, _bare) = with_origin();
    assert_eq!(
        fetch_main(&repo.session("w"), "origin", "trunk").expect("fetched"),
        None
    );
}

#[test]
fn fetching_from_a_remote_that_is_not_there_is_an_error() {
    let repo = Repo::new();
    repo.git(&["remote", "add", "origin", "/nonexistent/remote.git"]);
    assert!(fetch_main(&repo.session("w"), "origin", "main").is_err());
}

#[test]
fn main_is_pushed_as_a_fast_forward_on_the_lease_fetched() {
    let (repo, bare) = with_origin();
    let session = repo.session("w");
    let seen = fetch_main(&session, "origin", "main").expect("fetched");
    let next = repo.commit_all("next");
    push_main(&session, "origin", "main", &next, seen.as_deref()).expect("pushed");
    let there = Repo::command_in(&bare, &["rev-parse", "main"]);
    assert_eq!(there, next);
}

#[test]
fn a_push_on_a_stale_lease_is_refused_as_a_lost_race() {
    let (repo, _bare) = with_origin();
    let session = repo.session("w");
    let stale = repo.git(&["rev-parse", "HEAD"]);
    let theirs = repo.commit_all("theirs");
    repo.git(&["push", "-q", "origin", "main"]);
    repo.git(&["reset", "-q", "--hard", &stale]);
    let mine = repo.commit_all("mine");
    assert_ne!(mine, theirs);
    let e = push_main(&session, "origin", "main", &mine, Some(&stale)).expect_err("refused");
    assert!(lost_race(&e), "{}", e.stderr);
}

#[test]
fn a_push_leased_on_no_main_is_refused_where_main_exists() {
    let (repo, _bare) = with_origin();
    let next = repo.commit_all("next");
    let e = push_main(&repo.session("w"), "origin", "main", &next, None).expect_err("refused");
    assert!(lost_race(&e), "{}", e.stderr);
}

#[test]
fn the_workflow_is_published_to_the_remote_under_its_own_ref() {
    let (repo, bare) = with_origin();
    let session = repo.session("w");
    let tip = session.read_or_create().expect("created").tip;
    publish_workflow(&session, "origin").expect("pushed");
    assert_eq!(
        Repo::command_in(&bare, &["rev-parse", "refs/orchestrator/workflows/w"]),
        tip.to_string()
    );
}
