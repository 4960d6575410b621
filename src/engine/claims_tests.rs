//! Claims read from a real repository's refs (listed, in force, held by others, stolen), and
//! the helpers that name and time them.

use super::*;
use crate::config::Origin;
use crate::engine::test_repo::Repo;
use pretty_assertions::assert_eq;

const HOUR: i64 = 3600;

fn claim(pr: &str, workflow: &str, expires: i64) -> Claim {
    Claim {
        slug: pr.into(),
        workflow: workflow.into(),
        host: "host1".into(),
        user: "alice".into(),
        since: 1_000,
        expires,
        nonce: "00112233445566778899aabbccddeeff".into(),
    }
}

/// Writes `claim` and points `reference` at it.
fn hold(repo: &Repo, session: &Session, reference: &str, claim: &Claim) -> String {
    let id = match session.store.write_claim(claim) {
        Ok(id) => id.to_string(),
        Err(_) => panic!("the claim is written"),
    };
    repo.git(&["update-ref", reference, &id]);
    id
}

#[test]
fn a_time_is_shown_in_utc_to_the_second() {
    assert_eq!(format_epoch(0), "1970-01-01 00:00:00 +0000");
    assert_eq!(format_epoch(86_400 + 61), "1970-01-02 00:01:01 +0000");
}

#[test]
fn the_clock_counts_seconds_since_the_epoch() {
    let now = now();
    assert!(now > 1_600_000_000 && now < 10_000_000_000, "{now}");
}

#[test]
fn a_nonce_is_128_random_bits_in_lowercase_hex() {
    let n = nonce();
    assert_eq!(n.len(), 32);
    assert!(
        n.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{n}"
    );
    assert_ne!(nonce(), n);
}

#[test]
fn a_claim_holds_for_the_configured_ttl_in_seconds() {
    let config = Config::parse("[claims]\nttl = \"2h\"\n", &Origin::WorkingTree).expect("parses");
    assert_eq!(ttl_of(&config), 2 * HOUR);
}

#[test]
fn the_refusal_of_a_held_pr_names_its_holder_and_since_when() {
    let e = lost("pr-1", Some(&claim("pr-1", "w2", 0)));
    assert_eq!(
        e.to_string(),
        "the plan is not accepted: PR pr-1 is claimed by workflow w2 (alice@host1) since 1970-01-01 00:16:40 +0000"
    );
}

#[test]
fn the_refusal_of_a_pr_under_a_foreign_ref_says_it_holds_no_claim() {
    let e = lost("pr-1", None);
    assert_eq!(
        e.to_string(),
        "the plan is not accepted: PR pr-1 is claimed by a ref that holds no claim of ours"
    );
}

#[test]
fn a_lease_refused_for_another_reason_is_not_lost() {
    let error = GitError {
        command: "git push".into(),
        status: Some(1),
        stderr: " ! [remote rejected] x -> refs/orchestrator/claims/pr-1 (hook declined)".into(),
    };
    assert!(!lost_lease(&error, "refs/orchestrator/claims/pr-1"));
    assert!(!lost_lease(
        &GitError {
            stderr: String::new(),
            ..error
        },
        "x"
    ));
}

#[test]
fn a_repository_without_claims_lists_none_and_has_none_in_force() {
    let repo = Repo::new();
    let session = repo.session("w1");
    assert_eq!(list(&session).expect("read"), Vec::new());
    assert!(in_force(&session, None).expect("read").is_empty());
}

#[test]
fn a_local_claim_is_listed_with_whether_it_expired() {
    let repo = Repo::new();
    let session = repo.session("w1");
    let live = hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-1",
        &claim("pr-1", "w1", now() + HOUR),
    );
    let old = hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-2",
        &claim("pr-2", "w1", 1_000),
    );
    let listed: Vec<(String, String, String, bool)> = list(&session)
        .expect("read")
        .into_iter()
        .map(|v| (v.pr, v.source, v.commit, v.expired))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("pr-1".to_string(), "local".to_string(), live, false),
            ("pr-2".to_string(), "local".to_string(), old, true),
        ]
    );
}

#[test]
fn a_ref_that_holds_no_claim_is_listed_as_expired_without_one() {
    let repo = Repo::new();
    let head = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&["update-ref", "refs/orchestrator/claims/pr-x", &head]);
    let views = list(&repo.session("w1")).expect("read");
    assert_eq!(views.len(), 1);
    assert_eq!(views[0].claim, None);
    assert!(views[0].expired);
    assert!(
        in_force(&repo.session("w1"), None)
            .expect("read")
            .is_empty()
    );
}

#[test]
fn an_expired_claim_is_not_in_force() {
    let repo = Repo::new();
    let session = repo.session("w1");
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-1",
        &claim("pr-1", "w2", now() + HOUR),
    );
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-2",
        &claim("pr-2", "w2", now() - HOUR),
    );
    let held: Vec<String> = in_force(&session, None)
        .expect("read")
        .into_keys()
        .collect();
    assert_eq!(held, vec!["pr-1".to_string()]);
}

#[test]
fn the_remotes_claim_decides_over_the_local_one() {
    let repo = Repo::new();
    let session = repo.session("w1");
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-1",
        &claim("pr-1", "w1", now() + HOUR),
    );
    hold(
        &repo,
        &session,
        &tracking_claim_ref("origin", "pr-1"),
        &claim("pr-1", "w2", now() + HOUR),
    );
    let held = in_force(&session, Some("origin")).expect("read");
    assert_eq!(held["pr-1"].workflow, "w2");
    let local_only = in_force(&session, None).expect("read");
    assert_eq!(local_only["pr-1"].workflow, "w1");
}

#[test]
fn a_local_claim_the_remote_has_not_seen_stays_in_force() {
    let repo = Repo::new();
    let session = repo.session("w1");
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-3",
        &claim("pr-3", "w1", now() + HOUR),
    );
    let held: Vec<String> = in_force(&session, Some("origin"))
        .expect("read")
        .into_keys()
        .collect();
    assert_eq!(held, vec!["pr-3".to_string()]);
}

#[test]
fn the_claims_others_hold_leave_out_this_workflows_own() {
    let repo = Repo::new();
    let session = repo.session("w1");
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-1",
        &claim("pr-1", "w1", now() + HOUR),
    );
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-2",
        &claim("pr-2", "w2", now() + HOUR),
    );
    let state = State::new(Some("main".into()));
    let others: Vec<String> = held_by_others(&session, &state)
        .expect("read")
        .into_keys()
        .collect();
    assert_eq!(others, vec!["pr-2".to_string()]);
}

#[test]
fn a_stolen_claim_is_this_workflows_from_now_for_the_ttl() {
    let repo = Repo::new();
    let session = repo.session("w9");
    let before = now();
    let c = stolen(&session, "pr-4", HOUR);
    assert_eq!((c.slug.as_str(), c.workflow.as_str()), ("pr-4", "w9"));
    assert!(c.since >= before, "{} < {before}", c.since);
    assert_eq!(c.expires, c.since + HOUR);
    assert_eq!(c.nonce.len(), 32);
}

#[test]
fn a_stolen_claims_expiry_saturates_rather_than_wrapping() {
    let repo = Repo::new();
    let c = stolen(&repo.session("w9"), "pr-4", i64::MAX);
    assert_eq!(c.expires, i64::MAX);
}

#[test]
fn the_taken_prs_are_empty_when_nobody_else_holds_one() {
    let repo = Repo::new();
    let session = repo.session("w1");
    hold(
        &repo,
        &session,
        "refs/orchestrator/claims/pr-1",
        &claim("pr-1", "w1", now() + HOUR),
    );
    let state = State::new(Some("main".into()));
    let facts = session.facts(Some(&state)).expect("facts");
    assert!(taken(&session, &facts).expect("read").is_empty());
}
