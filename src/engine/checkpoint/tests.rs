//! Table tests of `checkpoint`'s decisions: rows of facts and the plan each makes, without git.

use super::decide::*;
use super::*;
use crate::workflow::proof::{GateFailure, TreeFailure};
use pretty_assertions::assert_eq;

const TREE: &str = "tree-now";
const HEAD: &str = "c0ffee0123456789";

fn head(tree: &'static str) -> Option<Head<'static>> {
    Some(Head {
        commit: HEAD,
        tree,
        subject: "checkpoint: 1.1 test add",
    })
}

fn facts(
    owed: Option<(StepId, &'static str)>,
    last_checkpoint: Option<&'static str>,
    head: Option<Head<'static>>,
) -> Facts<'static> {
    Facts {
        status: Status::ExecutingTdd,
        owed,
        last_checkpoint,
        head,
        tree: TREE,
        message: None,
    }
}

#[test]
fn decisions() {
    let step = StepId::new(0, 1);
    let owed = Some((step, "implement add"));
    let commit_step = Plan::Commit(CommitPlan {
        subject: "checkpoint: 1.2 implement add".into(),
        message: "checkpoint: 1.2 implement add\n\nOrchestrator-Checkpoint: 1.2\n".into(),
        step: Some(step),
    });
    let rows: Vec<(&str, Facts, Plan)> = vec![
        (
            "no commit yet",
            facts(owed, None, None),
            commit_step.clone(),
        ),
        (
            "the tree changed since HEAD",
            facts(owed, Some(HEAD), head("tree-before")),
            commit_step.clone(),
        ),
        (
            "unchanged since the last checkpoint, a step owed",
            facts(owed, Some(HEAD), head(TREE)),
            Plan::RecordUnchanged { step },
        ),
        (
            "unchanged since plain commits, a step owed: an empty commit marks it",
            facts(owed, Some("older"), head(TREE)),
            commit_step,
        ),
        (
            "unchanged, nothing owed",
            facts(None, Some(HEAD), head(TREE)),
            Plan::Refuse(Refusal::NothingChanged {
                status: Status::ExecutingTdd,
                head: HEAD.into(),
                subject: "checkpoint: 1.1 test add".into(),
            }),
        ),
        (
            "a manual checkpoint with -m",
            Facts {
                message: Some("checkpoint: tidy"),
                ..facts(None, Some(HEAD), head("tree-before"))
            },
            Plan::Commit(CommitPlan {
                subject: "checkpoint: tidy".into(),
                message: "checkpoint: tidy\n\nOrchestrator-Checkpoint: manual\n".into(),
                step: None,
            }),
        ),
    ];
    for (name, facts, expected) in rows {
        assert_eq!(decide::decide(&facts), expected, "{name}");
    }
}

#[test]
fn messages() {
    let rows: Vec<(Option<&str>, Option<Refusal>)> = vec![
        (None, None),
        (Some("tidy"), None),
        (Some("  "), Some(Refusal::EmptyMessage)),
        (Some("checkpoint: "), Some(Refusal::EmptyMessage)),
    ];
    for (message, expected) in rows {
        assert_eq!(decide::check_message(message), expected, "{message:?}");
    }
}

#[test]
fn each_way_the_gates_did_not_verify_the_tree_is_its_refusal() {
    let status = Status::ExecutingTdd;
    let files = vec!["a.txt".to_string()];
    let gate = GateFailure {
        name: "test".into(),
        exit: "exit 1".into(),
        output: b"boom".to_vec(),
    };
    let rows = [
        (
            TreeFailure::Protected(files.clone()),
            Refusal::ProtectedChanged {
                status,
                files: files.clone(),
            },
        ),
        (
            TreeFailure::GateFailed(gate),
            Refusal::GateFailed {
                gate: "test".into(),
                exit: "exit 1".into(),
                output: b"boom".to_vec(),
            },
        ),
        (
            TreeFailure::ChangedDuring(files.clone()),
            Refusal::FilesChanged {
                status,
                when: Changed::DuringPreflight,
                files,
            },
        ),
    ];
    for (failure, expected) in rows {
        assert_eq!(
            decide::refusal(status, failure.clone()),
            expected,
            "{failure:?}"
        );
    }
}

#[test]
fn refusals_read_as_before() {
    let nothing = Refusal::NothingChanged {
        status: Status::ExecutingTdd,
        head: HEAD.into(),
        subject: "checkpoint: 1.1 test add".into(),
    };
    assert_eq!(
        nothing.into_error().to_string(),
        "checkpoint refused: nothing changed since the last checkpoint (HEAD is c0ffee012345 checkpoint: 1.1 \
         test add); no commit was made (state EXECUTING_TDD)"
    );
    let hook = Refusal::FilesChanged {
        status: Status::ExecutingTdd,
        when: Changed::ByCommitHook {
            commit: HEAD.into(),
        },
        files: (0..12).map(|n| format!("f{n}")).collect(),
    };
    assert_eq!(
        hook.into_error().to_string(),
        "checkpoint refused: commit c0ffee012345 holds a tree other than the one preflight verified (a commit \
         hook changed files?); it stays, but is not recorded as a checkpoint (state EXECUTING_TDD); \
         changed: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 2 more"
    );
}

#[test]
fn subjects() {
    let plain = |m, step| subject(m, step).0;
    assert_eq!(plain(Some("checkpoint: tidy"), None), "checkpoint: tidy");
    assert_eq!(
        plain(Some("tidy"), Some((StepId::new(0, 1), "x"))),
        "checkpoint: tidy"
    );
    assert_eq!(
        subject(None, Some((StepId::new(0, 1), "add\nmore"))),
        (
            "checkpoint: 1.2 add".to_string(),
            Some("add\nmore".to_string())
        )
    );
    assert_eq!(
        subject(None, None),
        ("checkpoint: work in progress".to_string(), None)
    );
    let long = plain(Some(&"x".repeat(100)), None);
    assert_eq!(long.chars().count(), 72);
    assert!(long.ends_with('…'));
}

/// Three review fixes whose descriptions start alike: each subject keeps its step id,
/// is cut at a word boundary, and the body has the whole description.
#[test]
fn long_step_descriptions_are_cut_at_a_word_with_the_whole_text_in_the_body() {
    let descriptions = [
        "Fix: [P1] inflection/__init__.py: new public function plural_verb_case lacks a docstring",
        "Fix: [P1] inflection/__init__.py: new public function plural_noun_case lacks type hints",
        "Fix: [P1] inflection/__init__.py: new public function singular_case is untested",
    ];
    let subjects: Vec<(String, Option<String>)> = descriptions
        .iter()
        .enumerate()
        .map(|(i, d)| subject(None, Some((StepId::new(2, i), d))))
        .collect();
    assert_eq!(
        subjects.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
        [
            "checkpoint: 3.1 Fix: [P1] inflection/__init__.py: new public function…",
            "checkpoint: 3.2 Fix: [P1] inflection/__init__.py: new public function…",
            "checkpoint: 3.3 Fix: [P1] inflection/__init__.py: new public function…",
        ]
    );
    for ((s, body), d) in subjects.iter().zip(descriptions) {
        assert!(s.chars().count() <= 72, "{s}");
        assert_eq!(body.as_deref(), Some(d));
    }
}
