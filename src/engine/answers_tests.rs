//! How a human's answer is named, attributed and judged, one behaviour each.

use super::*;
use pretty_assertions::assert_eq;

fn check(required: bool, verdict: AnswerVerdict) -> AnswerCheck {
    AnswerCheck {
        commit: "c".into(),
        answer: "approve-tree".into(),
        required,
        verdict,
        bound: true,
        approves: Some(TreeApproval {
            tree: "t".into(),
            tests: Vec::new(),
            flaky: false,
        }),
    }
}

fn signed() -> AnswerVerdict {
    AnswerVerdict::Signed {
        principal: "alice".into(),
    }
}

fn unsigned(how: &str) -> AnswerVerdict {
    AnswerVerdict::Unsigned { how: how.into() }
}

fn bad() -> AnswerVerdict {
    AnswerVerdict::Bad {
        why: "no such key".into(),
    }
}

#[test]
fn each_answer_is_named_as_its_command_spells_it() {
    let names: Vec<&str> = [
        Answer::Approve,
        Answer::Reject,
        Answer::Resume,
        Answer::Repin,
        Answer::ApproveTree,
    ]
    .into_iter()
    .map(Answer::as_str)
    .collect();
    assert_eq!(
        names,
        vec!["approve", "reject", "resume", "repin", "approve-tree"]
    );
}

#[test]
fn a_signed_answer_is_given_by_its_principal() {
    assert_eq!(check(true, signed()).given_by(), "signed by alice");
}

#[test]
fn an_unsigned_answer_says_how_it_was_authorised_when_it_says() {
    assert_eq!(
        check(false, unsigned("terminal")).given_by(),
        "unsigned (terminal)"
    );
    assert_eq!(check(false, unsigned("")).given_by(), "unsigned");
}

#[test]
fn a_signature_that_does_not_hold_says_why() {
    assert_eq!(
        check(false, bad()).given_by(),
        "a signature that does not hold: no such key"
    );
}

#[test]
fn a_signed_answer_never_fails() {
    assert!(!check(true, signed()).fails());
    assert!(!check(false, signed()).fails());
}

#[test]
fn an_unsigned_answer_fails_only_where_a_signature_is_required() {
    assert!(check(true, unsigned("terminal")).fails());
    assert!(!check(false, unsigned("terminal")).fails());
}

#[test]
fn a_bad_signature_fails_even_where_none_is_required() {
    assert!(check(false, bad()).fails());
}

#[test]
fn a_tree_approval_stands_only_when_its_answer_does() {
    assert!(check(false, unsigned("terminal")).approval().is_some());
    assert!(check(true, unsigned("terminal")).approval().is_none());
    assert!(check(false, bad()).approval().is_none());
    let mut none = check(true, signed());
    none.approves = None;
    assert!(none.approval().is_none());
}

#[test]
fn a_tree_approvals_text_is_one_line_in_a_fixed_order_leaving_out_defaults() {
    let plain = TreeApproval {
        tree: "abc".into(),
        tests: Vec::new(),
        flaky: false,
    };
    assert_eq!(plain.text(), r#"{"tree":"abc"}"#);
    let full = TreeApproval {
        tree: "abc".into(),
        tests: vec!["t/a\nb.rs".into()],
        flaky: true,
    };
    assert_eq!(
        full.text(),
        r#"{"tree":"abc","tests":["t/a\nb.rs"],"flaky":true}"#
    );
}

#[test]
fn an_answer_with_no_pin_and_no_main_tip_has_no_pin() {
    assert_eq!(answer_pin(&State::new(Some("main".into()))), None);
}

#[test]
fn before_a_pr_an_answer_is_pinned_to_the_main_tip_accounted_for() {
    let mut state = State::new(Some("main".into()));
    state.main_tip = Some("abc".into());
    assert_eq!(answer_pin(&state), Some(("abc".to_string(), None)));
}

#[test]
fn resumes_guidance_is_kept_trimmed_and_none_is_empty() {
    let state = State::new(Some("main".into()));
    assert_eq!(
        resume_text(&state, Some("  try the other fix \n")),
        "try the other fix"
    );
    assert_eq!(resume_text(&state, None), "");
}
