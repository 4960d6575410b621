//! The decisions of `worktree add` and `worktree remove`, row by row, without git.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::decide::*;
use super::{default_path, lexically_absolute};
use crate::workflow::Status;

fn worktree(path: &str, recorded: Option<&str>) -> WorktreeFacts {
    WorktreeFacts {
        path: PathBuf::from(path),
        primary: false,
        current: false,
        branch: None,
        head: Some("1".repeat(40)),
        recorded: recorded.map(str::to_string),
        uncommitted: Vec::new(),
        unpushed: Unpushed::NoRemote,
        half_made: false,
    }
}

fn repo() -> Vec<WorktreeFacts> {
    let mut primary = worktree("/r/repo", None);
    primary.primary = true;
    primary.current = true;
    primary.branch = Some("main".into());
    vec![primary, worktree("/r/repo-w1", Some("w1"))]
}

fn add(
    name: &str,
    path: &str,
    kind: PathKind,
    existing: Option<Status>,
) -> Result<AddPlan, Refusal> {
    let worktrees = repo();
    decide_add(&AddFacts {
        name,
        existing,
        worktrees: &worktrees,
        path: Path::new(path),
        default_path: false,
        path_kind: kind,
        moves_with_extension: None,
    })
}

/// NAME, PATH, what is at PATH, the state of a workflow NAME, and the decision.
type AddRow<'a> = (
    &'a str,
    &'a str,
    PathKind,
    Option<Status>,
    Result<AddPlan, Refusal>,
);

#[test]
fn add_decides_by_name_and_path() {
    use PathKind::*;
    let ok = |path: &str| {
        Ok(AddPlan {
            workflow: "w2".into(),
            path: path.into(),
            default_path: false,
            clean_first: false,
        })
    };
    let rows: Vec<AddRow> = vec![
        ("w2", "/r/repo-w2", Missing, None, ok("/r/repo-w2")),
        ("w2", "/r/empty", EmptyDir, None, ok("/r/empty")),
        (
            "w2",
            "/r/full",
            NonEmptyDir,
            None,
            Err(Refusal::PathNotEmpty {
                path: "/r/full".into(),
            }),
        ),
        (
            "w2",
            "/r/file",
            NotADirectory,
            None,
            Err(Refusal::PathIsNotADirectory {
                path: "/r/file".into(),
            }),
        ),
        (
            "w2",
            "/r/repo/sub",
            Missing,
            None,
            Err(Refusal::PathInsideWorktree {
                path: "/r/repo/sub".into(),
                worktree: "/r/repo".into(),
            }),
        ),
        (
            "w2",
            "/r/a\nb",
            Missing,
            None,
            Err(Refusal::BadPath {
                path: "/r/a\nb".into(),
            }),
        ),
        // The name is checked first, whatever the path.
        (
            "../x",
            "/r/full",
            NonEmptyDir,
            None,
            Err(Refusal::BadName {
                name: "../x".into(),
            }),
        ),
        (
            "-f",
            "/r/x",
            Missing,
            None,
            Err(Refusal::BadName { name: "-f".into() }),
        ),
        (
            "a b",
            "/r/x",
            Missing,
            None,
            Err(Refusal::BadName { name: "a b".into() }),
        ),
        (
            "a\u{7}b",
            "/r/x",
            Missing,
            None,
            Err(Refusal::BadName {
                name: "a\u{7}b".into(),
            }),
        ),
        (
            "w2",
            "/r/x",
            Missing,
            Some(Status::ExecutingTdd),
            Err(Refusal::WorkflowExists {
                name: "w2".into(),
                state: Status::ExecutingTdd,
            }),
        ),
        (
            "w1",
            "/r/x",
            Missing,
            None,
            Err(Refusal::RecordedElsewhere {
                name: "w1".into(),
                path: "/r/repo-w1".into(),
            }),
        ),
    ];
    for (name, path, kind, existing, expected) in rows {
        assert_eq!(
            add(name, path, kind, existing),
            expected,
            "{name} {path} {kind:?}"
        );
    }
}

#[test]
fn a_shared_setting_that_would_reach_every_worktree_is_refused() {
    let worktrees = repo();
    let refused = decide_add(&AddFacts {
        name: "w2",
        existing: None,
        worktrees: &worktrees,
        path: Path::new("/r/repo-w2"),
        default_path: true,
        path_kind: PathKind::Missing,
        moves_with_extension: Some("core.worktree".into()),
    });
    assert_eq!(
        refused,
        Err(Refusal::SharedSetting {
            setting: "core.worktree".into()
        })
    );
}

#[test]
fn remove_goes_only_for_a_clean_pushed_worktree_that_records_the_name() {
    let mut dirty = worktree("/r/repo-w2", Some("w2"));
    dirty.uncommitted = (0..12).map(|i| format!("f{i}")).collect();
    let mut ahead = worktree("/r/repo-w3", Some("w3"));
    ahead.branch = Some("feat/x".into());
    ahead.unpushed = Unpushed::Commits {
        count: 2,
        upstream: Some("origin/feat/x".into()),
    };
    let mut pushed = worktree("/r/repo-w4", Some("w4"));
    pushed.unpushed = Unpushed::Commits {
        count: 0,
        upstream: None,
    };
    let mut here = worktree("/r/repo-w5", Some("w5"));
    here.current = true;
    let mut worktrees = repo();
    worktrees[0].current = false;
    worktrees[0].recorded = Some("prime".into());
    worktrees.extend([dirty.clone(), ahead, pushed.clone(), here]);

    assert_eq!(decide_remove("w1", &worktrees), Ok(&worktrees[1]));
    assert_eq!(decide_remove("w4", &worktrees), Ok(&pushed));
    assert_eq!(
        decide_remove("w2", &worktrees),
        Err(Refusal::Uncommitted {
            name: "w2".into(),
            path: "/r/repo-w2".into(),
            files: dirty.uncommitted
        })
    );
    assert_eq!(
        decide_remove("w3", &worktrees),
        Err(Refusal::Unpushed {
            name: "w3".into(),
            path: "/r/repo-w3".into(),
            branch: Some("feat/x".into()),
            count: 2,
            upstream: Some("origin/feat/x".into()),
        })
    );
    assert_eq!(
        decide_remove("w5", &worktrees),
        Err(Refusal::Current {
            name: "w5".into(),
            path: "/r/repo-w5".into(),
            primary: Some("/r/repo".into())
        })
    );
    assert_eq!(
        decide_remove("prime", &worktrees),
        Err(Refusal::Primary {
            name: "prime".into(),
            path: "/r/repo".into()
        })
    );
    assert!(matches!(
        decide_remove("nobody", &worktrees),
        Err(Refusal::NotRecorded { recorded, .. }) if recorded.len() == 6
    ));
    assert_eq!(
        decide_remove("../x", &worktrees),
        Err(Refusal::BadName {
            name: "../x".into()
        })
    );
}

/// A refusal names what it is about: the files (ten at most), the branch and its count.
#[test]
fn refusals_name_what_stays() {
    let files: Vec<String> = (0..12).map(|i| format!("f{i}")).collect();
    let text = Refusal::Uncommitted {
        name: "w2".into(),
        path: "/r/w2".into(),
        files,
    }
    .into_error(None)
    .to_string();
    assert!(
        text.contains("12 files): f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, and 2 more"),
        "{text}"
    );
    let text = Refusal::Unpushed {
        name: "w3".into(),
        path: "/r/w3".into(),
        branch: Some("feat/x".into()),
        count: 1,
        upstream: None,
    }
    .into_error(Some(Status::ExecutingTdd))
    .to_string();
    assert!(
        text.contains("1 commit not pushed: on feat/x, on no remote-tracking branch"),
        "{text}"
    );
}

#[test]
fn paths_are_read_as_a_person_reads_them() {
    assert_eq!(
        default_path(Path::new("/r/repo"), "w1"),
        PathBuf::from("/r/repo-w1")
    );
    assert_eq!(
        lexically_absolute(Path::new("/nonexistent/repo"), Path::new("../x/./y")),
        PathBuf::from("/nonexistent/x/y")
    );
    assert_eq!(
        lexically_absolute(Path::new("/nonexistent/repo"), Path::new("/abs")),
        PathBuf::from("/abs")
    );
}

/// A worktree `git worktree add` left half made at the very path is removed and made again;
/// a whole one that records no workflow is refused (its message names the command that
/// frees it); a workflow of that name refuses first.
#[test]
fn a_half_made_worktree_at_the_path_is_made_again() {
    let decide = |half_made: bool, existing: Option<Status>| {
        let mut worktrees = repo();
        let mut left = worktree("/r/repo-w2", None);
        left.half_made = half_made;
        worktrees.push(left);
        decide_add(&AddFacts {
            name: "w2",
            existing,
            worktrees: &worktrees,
            path: Path::new("/r/repo-w2"),
            default_path: true,
            path_kind: PathKind::NonEmptyDir,
            moves_with_extension: None,
        })
    };
    assert_eq!(
        decide(true, None),
        Ok(AddPlan {
            workflow: "w2".into(),
            path: "/r/repo-w2".into(),
            default_path: true,
            clean_first: true,
        })
    );
    let whole = decide(false, None);
    assert_eq!(
        whole,
        Err(Refusal::PathInsideWorktree {
            path: "/r/repo-w2".into(),
            worktree: "/r/repo-w2".into(),
        })
    );
    let message = match whole.map_err(|r| r.into_error(None)) {
        Err(super::EngineError::BadInput { message, hint }) => format!("{message}\n{hint}"),
        other => panic!("{other:?}"),
    };
    assert!(
        message.contains("git worktree remove --force /r/repo-w2"),
        "{message}"
    );
    assert_eq!(
        decide(true, Some(Status::Initializing)),
        Err(Refusal::WorkflowExists {
            name: "w2".into(),
            state: Status::Initializing,
        })
    );
}
