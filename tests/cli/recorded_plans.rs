//! The proof plans a final check records, held by `attest` against those the chain gives
//! (docs/integrity.md, layer 10, step 4): a ticket's as a PR's, a record edited or its
//! plans removed, and `[verify] recorded_plans` (`require` in what `init` writes, `warn`
//! without the key).

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::attest::{redact, swap_chain_tip, write_commit};
use crate::oracle::{CALC_CONFIG, calc_with, finalized, main_tip, mark_done_and_merge};
use crate::support::*;
use crate::tickets::{TICKET_CONFIG, finished_ticket, repo_with};

pub(crate) const REQUIRE: &str = "\n[verify]\nrecorded_plans = \"require\"\n";

/// The chain's newest commit whose message names `event` (`finish-start`, `squash`).
pub(crate) fn chain_commit(repo: &TestRepo, event: &str) -> String {
    repo.git(&["rev-list", "--first-parent", REF])
        .lines()
        .find(|id| {
            repo.git(&["log", "-1", "--format=%s", id])
                .split_once(':')
                .map(|(name, _)| name)
                == Some(event)
        })
        .unwrap_or_else(|| panic!("no {event} in the chain"))
        .to_string()
}

/// The chain rewritten by hand: `commit`'s recorded event with `from` replaced by `to`, and
/// every transition after it made again on it, as an agent with write access to its own
/// refs can; the chain's ref, reflog and tip marker moved to the new tip.
fn edit_event(repo: &TestRepo, commit: &str, from: &str, to: &str) {
    let tip = repo.git(&["rev-parse", REF]).trim().to_string();
    let after: Vec<String> = repo
        .git(&["rev-list", "--first-parent", &format!("{commit}..{tip}")])
        .lines()
        .rev()
        .map(str::to_string)
        .collect();
    let text = repo.git(&["cat-file", "commit", commit]);
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text, "{text}");
    let mut new = write_commit(repo, &edited);
    let mut old = commit.to_string();
    for id in after {
        let text = repo.git(&["cat-file", "commit", &id]);
        let moved = text.replacen(&format!("parent {old}\n"), &format!("parent {new}\n"), 1);
        assert_ne!(moved, text, "{text}");
        old = id;
        new = write_commit(repo, &moved);
    }
    swap_chain_tip(repo, &tip, &new);
}

/// The recorded plans of the event of `commit`, removed from it.
pub(crate) fn strip_plans(repo: &TestRepo, commit: &str) {
    let text = repo.git(&["cat-file", "commit", commit]);
    let event = text
        .lines()
        .find_map(|l| l.strip_prefix("orchestrator-event "))
        .expect("an event header");
    let mut json: Value = serde_json::from_str(event).expect("the event");
    fn strip(value: &mut Value) -> bool {
        match value {
            Value::Object(map) => map.remove("plans").is_some() || map.values_mut().any(strip),
            _ => false,
        }
    }
    assert!(strip(&mut json), "no plans in {event}");
    edit_event(repo, commit, event, &json.to_string());
}

/// A ticket's merge whose recorded plan lost its gates (an edited `finish-start`): FAILED,
/// naming the first difference, and nothing of the ticket run.
#[test]
fn a_ticket_merge_whose_recorded_plan_was_edited_is_failed_naming_the_difference() {
    let repo = repo_with(TICKET_CONFIG);
    finished_ticket(&repo);
    let honest = repo.run(&["attest", "--no-note", "main"]);
    honest.expect(0);
    assert!(!honest.stdout.contains("proof plan"), "{}", honest.stdout);
    let start = chain_commit(&repo, "finish-start");
    edit_event(
        &repo,
        &start,
        r#""obligations":[{"obligation":"gates_pass"}]"#,
        r#""obligations":[]"#,
    );
    let out = repo.run(&["attest", "--no-note", "main"]);
    assert_eq!(
        redact(&out.stdout),
        "FAILED <id> (the merge of workflow main's ticket)\n  \
         - the proof plan the ticket's final check recorded is not the one its chain gives: \
         plan 1: 0 obligations are recorded, and the chain gives 1 (the first not recorded: \
         {\"obligation\":\"gates_pass\"})\n\
         no note written: --no-note\n",
        "{}",
        out.stderr
    );
    out.expect(1);
}

/// A ticket whose `finish-start` had its plans removed: under `require` FAILED, naming why;
/// under `warn` (no key) PASSED, with the warning, the ticket's plan run.
#[test]
fn a_ticket_whose_plans_were_removed_fails_under_require_and_warns_under_warn() {
    let repo = repo_with(&format!("{TICKET_CONFIG}{REQUIRE}"));
    finished_ticket(&repo);
    strip_plans(&repo, &chain_commit(&repo, "finish-start"));
    let out = repo.run(&["attest", "--no-note", "main"]);
    assert_eq!(
        redact(&out.stdout),
        "FAILED <id> (the merge of workflow main's ticket)\n  \
         - the ticket's final check recorded no proof plan, and the pinned configuration \
         requires one ([verify] recorded_plans = \"require\"): nothing shows what that check \
         ran\n\
         no note written: --no-note\n",
        "{}",
        out.stderr
    );
    out.expect(1);

    let repo = repo_with(TICKET_CONFIG);
    finished_ticket(&repo);
    strip_plans(&repo, &chain_commit(&repo, "finish-start"));
    let out = repo.run(&["attest", "--no-note", "main"]);
    assert_eq!(
        redact(&out.stdout),
        "PASSED <id> (the merge of workflow main's ticket)\n  \
         re-ran: gates on the squashed commit: passed (tests)\n  \
         re-ran: subtask S1's tests (tests/hello.sh) on its base <id>: fail, as they must\n  \
         warning: the ticket's final check recorded no proof plan (its chain was made before \
         plans were recorded, or they were removed; [verify] recorded_plans = \"require\" \
         fails it): the plan the chain gives was run\n\
         no note written: --no-note\n",
        "{}",
        out.stderr
    );
    out.expect(0);
}

/// A PR whose squash transition had its plans removed: under `require` FAILED, naming why;
/// under `warn` PASSED with the warning.
#[test]
fn a_pr_whose_plans_were_removed_fails_under_require_and_warns_under_warn() {
    let reran = format!(
        "  re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
         re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 on \
         the final tree; evidence: exit code only\n{}",
        crate::attest::NOT_MEASURED
    );
    let repo = calc_with(&format!("{CALC_CONFIG}{REQUIRE}"), &[]);
    let head = finalized(&repo);
    strip_plans(&repo, &chain_commit(&repo, "squash"));
    let out = repo.run(&["attest", "--no-note", &head]);
    assert_eq!(
        redact(&out.stdout),
        format!(
            "FAILED <id> (the head of workflow main's PR)\n{reran}  \
             - the PR's final check recorded no proof plan, and the pinned configuration \
             requires one ([verify] recorded_plans = \"require\"): nothing shows what that \
             check ran\n\
             no note written: --no-note\n"
        ),
        "{}",
        out.stderr
    );
    out.expect(1);

    let repo = calc_with(CALC_CONFIG, &[]);
    let head = finalized(&repo);
    strip_plans(&repo, &chain_commit(&repo, "squash"));
    let out = repo.run(&["attest", "--no-note", &head]);
    assert_eq!(
        redact(&out.stdout),
        format!(
            "PASSED <id> (the head of workflow main's PR)\n{reran}  \
             warning: the PR's final check recorded no proof plan (its chain was made before \
             plans were recorded, or they were removed; [verify] recorded_plans = \"require\" \
             fails it): the plan the chain gives was run\n\
             no note written: --no-note\n"
        ),
        "{}",
        out.stderr
    );
    out.expect(0);
}

/// `init` in a new repository writes `[verify] recorded_plans = "require"`.
#[test]
fn init_writes_require_into_a_new_repositorys_configuration() {
    let repo = TestRepo::empty();
    repo.write("README.md", "# project\n");
    repo.commit_all("initial");
    repo.run(&["init"]).expect(0);
    let text = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).expect("config");
    assert!(
        text.contains("\n[verify]\nrecorded_plans = \"require\"\n"),
        "{text}"
    );
}

/// A fresh clone of the bare repository `bare` that fetched the chains, as a CI job does.
fn fresh_clone(bare: &Path) -> TestRepo {
    let ci = TestRepo::clone_of(bare);
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    ci
}

/// `attest --json` of `rev` in `ci`: the one verdict, PASSED with nothing to say of plans.
#[track_caller]
fn passes_clean(ci: &TestRepo, rev: &str) -> Value {
    let out = ci.run(&["--json", "attest", "--no-note", rev]);
    out.expect(0);
    let verdict = out.json()["verdicts"][0].clone();
    assert_eq!(verdict["passed"], true, "{verdict}");
    assert_eq!(verdict["reasons"], serde_json::json!([]), "{verdict}");
    assert_eq!(verdict["warnings"], serde_json::json!([]), "{verdict}");
    verdict
}

/// Under `require`, an honest ticket's merge and an honest PR's merge PASS in a fresh clone.
#[test]
fn an_honest_ticket_and_pr_pass_under_require_in_a_fresh_clone() {
    // The ticket lands through its remote: main, its chain and the ref that keeps its
    // subtasks' commits are pushed there.
    let repo = repo_with(&format!("{TICKET_CONFIG}{REQUIRE}"));
    let (_dir, bare) = repo.share();
    finished_ticket(&repo);
    let ci = fresh_clone(&bare);
    assert_eq!(passes_clean(&ci, "main")["kind"], "ticket-merge");

    let repo = calc_with(&format!("{CALC_CONFIG}{REQUIRE}"), &[]);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let (_dir, bare) = repo.share();
    repo.git(&[
        "push",
        "--quiet",
        "--no-verify",
        "origin",
        "refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let ci = fresh_clone(&bare);
    assert_eq!(passes_clean(&ci, &merge)["kind"], "merge");
}
