//! A human approves by name what the proofs alone refuse (SPEC §16.3, §15 "Human answers an
//! agent cannot give"; docs/integrity.md, "Approved by name"): an existing test the PR
//! changed that fails the gates when put back, under `[gates] pinned_tests = "report"`, and a
//! pass of a tree after an earlier failure of it. Real repositories, the real binary, real
//! `ssh-keygen`; the CI side is `attest` in a fresh clone.

use pretty_assertions::assert_eq;

use crate::oracle::{
    CALC_CONFIG, MUL, RED_MUL, TEST_MUL, calc_with, green, main_tip, mark_done_and_merge, outside,
    red, squash,
};
use crate::signed::{allowed, key, sign_elsewhere};
use crate::support::*;

/// The PR's tree that guts `tests/test_add.sh` while it breaks `add`: mul right, add broken,
/// add's test emptied; GREEN passes, and the workflow waits for the squash.
pub(crate) fn gutted(repo: &TestRepo) {
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo 0; }}\n{MUL}"));
    repo.write("tests/test_add.sh", "");
    green(repo, RED_MUL);
}

/// The PR whose test of `mul` is a coin flip (the first route of docs/integrity.md's flaky passes), with a fixed sequence
/// of sides in the file returned, outside the repository: each run takes the first line, and
/// fails unless it says `pass`; an empty file passes. GREEN passes, and the workflow waits for
/// the squash.
fn coin_flip_pr(repo: &TestRepo) -> std::path::PathBuf {
    let coin = outside(repo, "coin");
    let coin_test = format!(
        "seq='{}'\nif [ -s \"$seq\" ]; then\n  side=$(head -n 1 \"$seq\"); tail -n +2 \"$seq\" > \
         \"$seq.next\"; mv \"$seq.next\" \"$seq\"\n  [ \"$side\" = pass ] || {{ echo 'the coin \
         says fail'; exit 1; }}\nfi\n{TEST_MUL}",
        coin.display()
    );
    repo.write("tests/test_mul.sh", &coin_test);
    red(repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(repo, RED_MUL);
    coin
}

/// The verified tree the squash will have.
fn head_tree(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string()
}

/// The local refusal of the gutted test, awaiting a human's approval of `unapproved`.
fn awaiting(tree: &str, unapproved: &str) -> String {
    format!(
        "awaiting a human's approval by name: the PR changes tests that existed when it began \
         (tests/test_add.sh), and with them as they were then, preflight gate `tests` fails; \
         under [gates] pinned_tests = \"report\" that stands only where a human approved the \
         change by name for this tree, and none approved {unapproved}. Put them back, or a human \
         who accepts the change runs `git orchestrate approve --test-change {unapproved} --tree \
         {tree}`."
    )
}

#[track_caller]
fn refused_with(out: Run, code: i32, why: &str) {
    out.expect(code);
    assert!(out.stderr.contains(why), "{}", out.stderr);
}

fn final_note(repo: &TestRepo, commit: &str) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", commit]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "final")
        .expect("a final record")
}

/// A fresh clone that fetched the chains and the notes, as the CI job does.
fn ci_clone(repo: &TestRepo) -> TestRepo {
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
        "+refs/notes/orchestrator*:refs/notes/orchestrator*",
    ]);
    ci
}

/// Under `[human] require = "signature"`: the gutted test refuses the squash, naming it and
/// the command a human runs; the agent's approval (no human) and a human's unsigned one are
/// refused and record nothing; a signed approval of another path does not count; a signed
/// approval of the path lets the squash through. The final note and `attest` in a fresh clone
/// agree field by field on the changed test, its verdict `approved` and who approved it.
#[test]
fn a_gutted_test_is_refused_until_a_human_approves_it_by_name_with_a_signature() {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let alice_arg = alice.display().to_string();
    let repo = calc_with(
        &format!("{CALC_CONFIG}\n[human]\nrequire = \"signature\"\n"),
        &[(".orchestrate/allowed_signers", &allowed("alice", &alice))],
    );
    gutted(&repo);
    let tree = head_tree(&repo);
    squash(&repo);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&awaiting(&tree, "tests/test_add.sh")),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");

    // The agent cannot give it, nor a human without the signature the policy requires.
    let tip = repo.tip();
    refused_with(
        repo.run(&["approve", "--test-change", "tests/test_add.sh"]),
        4,
        "approve is a human's answer, and stdin is not a terminal",
    );
    refused_with(
        repo.human(&["approve", "--test-change", "tests/test_add.sh"]),
        4,
        "approve-tree needs a signature",
    );
    refused_with(
        repo.human(&[
            "approve",
            "--test-change",
            "calc.sh",
            "--sign-key",
            &alice_arg,
        ]),
        2,
        "\"calc.sh\" is not a test path of the pinned configuration",
    );
    assert_eq!(repo.tip(), tip, "nothing was recorded");

    // Another path's approval does not count; this one signed elsewhere, over the payload
    // printed (which writes nothing and needs no terminal).
    let printed = repo.run(&[
        "approve",
        "--test-change",
        "tests/test_mul.sh",
        "--print-payload",
    ]);
    printed.expect(0);
    assert_eq!(
        printed.stdout,
        format!(
            "{{\"v\":1,\"workflow\":\"main\",\"tip\":\"{}\",\"answer\":\"approve-tree\",\
             \"text\":\"{{\\\"tree\\\":\\\"{tree}\\\",\\\"tests\\\":[\\\"tests/test_mul.sh\\\"]}}\"}}\n",
            tip.as_deref().unwrap()
        )
    );
    assert_eq!(repo.tip(), tip);
    let signature = sign_elsewhere(keys.path(), &alice, printed.stdout.as_bytes(), "other");
    repo.human(&[
        "approve",
        "--test-change",
        "tests/test_mul.sh",
        "--signature",
        signature.to_str().unwrap(),
    ])
    .expect(0);
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&awaiting(&tree, "tests/test_add.sh")),
        "{}",
        out.stdout
    );

    let out = repo.human(&[
        "approve",
        "--test-change",
        "tests/test_add.sh",
        "--sign-key",
        &alice_arg,
    ]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "approved for the tree {tree} only: the changes to tests/test_add.sh (signed by \
             alice); state AWAITING_FINALIZATION\n"
        )
    );
    let approval = repo.tip().unwrap();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let note = final_note(&repo, &squashed);
    assert_eq!(
        note["changed_tests"],
        serde_json::json!({"paths": ["tests/test_add.sh"], "mode": "report", "passed": false,
                           "failed_gate": "tests",
                           "approvals": [{"commit": approval, "tests": ["tests/test_add.sh"],
                                          "by": "signed by alice"}]})
    );
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);

    let ci = ci_clone(&repo);
    let out = ci.run(&["attest", "--no-note", "--json", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["changed_tests"], note["changed_tests"], "{verdict}");
    // Everything the local final note records, from attest's own run of the final check: the
    // same, field by field, but for what differs by design: attest measures adequacy under
    // `enforce` only (the local `report` measured it), names no drift of main (the local
    // note said how main stood at the squash), and shows no checkpoint's note (each clone's
    // unsigned word, not the verifier's).
    let mut mine = verdict["final_note"].clone();
    let mut local = note.clone();
    for side in [&mut mine, &mut local] {
        let fields = side.as_object_mut().expect("a note is an object");
        fields.remove("adequacy");
        fields.remove("main_moved_outside");
    }
    for checkpoint in local["checkpoints"].as_array_mut().expect("checkpoints") {
        checkpoint["note"] = serde_json::Value::Null;
    }
    assert_eq!(mine, local, "attest: {mine}\nlocal: {local}");
    assert_eq!(verdict["changed_tests_verdict"], "approved");
    assert_eq!(
        verdict["warnings"],
        serde_json::json!([
            "the PR changes or removes tests that existed on its base (tests/test_add.sh); with \
             them as they were there, the gate `tests` fails; a human approved the change by \
             name for this tree (tests/test_add.sh: signed by alice)"
        ])
    );
    let answer = verdict["answers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["commit"] == approval.as_str())
        .expect("the approval is listed");
    assert_eq!(
        answer,
        &serde_json::json!({"commit": approval, "answer": "approve-tree", "required": true,
                            "verdict": {"verdict": "signed", "principal": "alice"},
                            "approves": {"tree": tree, "tests": ["tests/test_add.sh"]}})
    );
    assert_eq!(
        verdict["statement"]["predicate"]["gitOrchestrate"]["changedTests"]["verdict"],
        "approved"
    );
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!(
            "  changed tests: tests/test_add.sh ([gates] pinned_tests = \"report\"; with them put \
             back: the gate `tests` fails): approved; approved by name: tests/test_add.sh (signed \
             by alice, in {})\n",
            &approval[..12]
        )),
        "{}",
        out.stdout
    );
}

/// Where the local check did not put the tests back (`[finalize] clean_check = false`), the
/// gutted test merges unapproved; `attest` in a fresh clone puts them back and FAILS it,
/// naming the test and what a human runs. Where signatures are not required, a human's
/// unsigned approval counts as every unsigned answer does, named as unsigned.
#[test]
fn attest_fails_an_unapproved_gutted_test_and_counts_an_unsigned_approval_where_allowed() {
    let repo = calc_with(
        &format!("{CALC_CONFIG}\n[finalize]\nclean_check = false\n"),
        &[],
    );
    gutted(&repo);
    let tree = head_tree(&repo);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let out = ci_clone(&repo).run(&["attest", "--no-note", "--json", &merge]);
    out.expect(1);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["changed_tests_verdict"], "unapproved");
    assert_eq!(
        verdict["changed_tests"],
        serde_json::json!({"paths": ["tests/test_add.sh"], "mode": "report", "passed": false,
                           "failed_gate": "tests"})
    );
    assert_eq!(
        verdict["reasons"],
        serde_json::json!([awaiting(&tree, "tests/test_add.sh")])
    );
    assert_eq!(verdict["warnings"], serde_json::json!([]));

    // The same PR, approved by a human without a signature, which nothing requires here.
    let repo = calc_with(
        &format!("{CALC_CONFIG}\n[finalize]\nclean_check = false\n"),
        &[],
    );
    gutted(&repo);
    repo.human(&["approve", "--test-change", "tests/test_add.sh"])
        .expect(0);
    let approval = repo.tip().unwrap();
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let out = ci_clone(&repo).run(&["attest", "--no-note", "--json", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["changed_tests_verdict"], "approved");
    assert_eq!(
        verdict["changed_tests"]["approvals"],
        serde_json::json!([{"commit": approval, "tests": ["tests/test_add.sh"],
                            "by": "unsigned (GIT_ORCHESTRATE_HUMAN)"}])
    );
}

/// A coin-flip test (the first route of docs/integrity.md's flaky passes) with a fixed sequence outside the repository:
/// the first final check draws `fail` and refuses the tree; the second draws nothing and
/// passes it, and is refused as flaky, naming the first; a human's `approve --flaky` for that
/// tree lets it through. `attest` in a fresh clone passes it, listing both refusals and the
/// answer.
#[test]
fn a_pass_after_a_failure_is_flaky_until_a_human_accepts_that_tree() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let coin = coin_flip_pr(&repo);
    let tree = head_tree(&repo);
    squash(&repo);
    std::fs::write(&coin, "fail\n").unwrap();
    repo.run(&["submit-work", "-s", "squashed"])
        .expect(1)
        .says("the coin says fail");
    let first = repo.tip().unwrap();
    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert!(
        out.stdout.contains(&format!(
            "flaky: the final check refused the tree {} before (in {} at ",
            &tree[..12],
            &repo.git(&["rev-parse", "HEAD"])[..12]
        )) && out.stdout.contains(&format!(
            "and passes it now: a pass after a failure is luck, not proof. A human who accepts \
             this pass runs `git orchestrate approve --flaky --tree {tree}`."
        )),
        "{}",
        out.stdout
    );
    assert_ne!(repo.tip().unwrap(), first, "the refusal is recorded");
    refused_with(
        repo.run(&["approve", "--flaky"]),
        4,
        "approve is a human's answer",
    );
    repo.human(&["approve", "--flaky"]).expect(0);
    let answer = repo.tip().unwrap();
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);

    let out = ci_clone(&repo).run(&["attest", "--no-note", "--json", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["flaky"], false);
    let refusals = verdict["earlier_refusals"].as_array().unwrap();
    assert_eq!(refusals.len(), 2, "{verdict}");
    assert!(
        refusals[0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("the coin says fail"),
        "{verdict}"
    );
    assert!(
        refusals[1]["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("flaky: the final check refused the tree"),
        "{verdict}"
    );
    assert_eq!(
        verdict["warnings"],
        serde_json::json!([format!(
            "its tree {} was refused before and passes now; a human accepted this pass by name \
             in {} (unsigned (GIT_ORCHESTRATE_HUMAN))",
            &tree[..12],
            &answer[..12]
        )])
    );
    assert!(
        verdict["answers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["commit"] == answer.as_str()
                && a["approves"] == serde_json::json!({"tree": tree, "flaky": true})),
        "{verdict}"
    );
    assert_eq!(
        verdict["statement"]["predicate"]["gitOrchestrate"]["earlierRefusals"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

/// A human's `approve --flaky` counts under the policy it was given under only (the pinned
/// configuration's blob), as `attest` and the server hold it: given under main's gates as the
/// PR pinned them, it does not lift the final check's refusal once a repin moved the PR to
/// main's changed gates, though the tree is the same; given again under those, it does.
#[test]
fn an_approval_of_a_flaky_pass_counts_under_the_policy_it_was_given_under_only() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let coin = coin_flip_pr(&repo);
    let tree = head_tree(&repo);
    squash(&repo);
    let squashed = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    std::fs::write(&coin, "fail\n").unwrap();
    repo.run(&["submit-work", "-s", "squashed"])
        .expect(1)
        .says("the coin says fail");
    let refused_at = repo.tip().unwrap();
    repo.human(&["approve", "--flaky"]).expect(0);

    // Main's gates change (a longer timeout), and a human moves the PR to them.
    repo.git(&["checkout", "--quiet", "main"]);
    repo.write(
        ".orchestrate.toml",
        &CALC_CONFIG.replace("timeout = \"60s\"", "timeout = \"90s\""),
    );
    repo.commit_all("longer timeouts");
    repo.human(&["repin"])
        .expect(0)
        .says("its .orchestrate.toml differs from the one pinned before");
    repo.git(&["checkout", "--quiet", "feat/multiply"]);
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), squashed);

    let out = repo.run(&["submit-work", "-s", "squashed"]);
    out.expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "FAILURE: flaky: the final check refused the tree {} before (in {} at 2026-01-01 \
             00:00:00 +0000) and passes it now: a pass after a failure is luck, not proof. A \
             human who accepts this pass runs `git orchestrate approve --flaky --tree {tree}`.\n\
             state: AWAITING_FINALIZATION · next: fix what the FAILURE line says and submit \
             again (`git orchestrate get-task` repeats the instructions); if it cannot be fixed, \
             hand it to a human with `git orchestrate escalate --report FILE`\n",
            &tree[..12],
            &squashed[..12]
        )
    );
    assert_ne!(repo.tip().unwrap(), refused_at, "the refusal is recorded");

    // Given again, under the gates the PR is pinned to now.
    repo.human(&["approve", "--flaky"]).expect(0);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
}

/// Off the machine (the coin flip, as tests/cli/attest.rs plays it): CI's first
/// `attest` draws `fail`, and its signed FAILED note is pushed; the next clone passes the
/// tests and is FAILED as flaky. A human's `approve --flaky --tree TREE`, given after the
/// merge, lets the next `attest` pass it once signed by a key main lists, still listing the
/// earlier refusal, with the answer; unsigned, it lifts nothing.
#[test]
fn a_flaky_verdict_off_the_machine_is_lifted_by_a_humans_answer_after_the_merge() {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let public = std::fs::read_to_string(verifier.with_extension("pub")).unwrap();
    let alice = crate::signed::key(keys.path(), "alice");
    let signers = format!(
        "ci@example namespaces=\"git-orchestrate-attest\" {public}{}",
        crate::signed::allowed("alice", &alice)
    );
    let repo = calc_with(CALC_CONFIG, &[(".orchestrate/allowed_signers", &signers)]);
    let coin = coin_flip_pr(&repo);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let tree = repo
        .git(&["rev-parse", &format!("{merge}^{{tree}}")])
        .trim()
        .to_string();

    std::fs::write(&coin, "fail\n").unwrap();
    let ci = ci_clone(&repo);
    let key_arg = verifier.display().to_string();
    ci.run(&["attest", "--signing-key", &key_arg, &merge])
        .expect(1);
    ci.git(&[
        "push",
        "--quiet",
        "origin",
        "refs/notes/orchestrator-attest",
    ]);
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(out.json()["verdicts"][0]["flaky"], true);

    // Given after the merge: the workflow waits for its next plan, and records the answer.
    // Unsigned, it is only attributed, which the agent can write itself: nothing lifted.
    assert_eq!(repo.status(), "INITIALIZING");
    repo.human(&["approve", "--flaky", "--tree", &merge])
        .expect(0);
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(out.json()["verdicts"][0]["flaky"], true);
    repo.human(&[
        "approve",
        "--flaky",
        "--tree",
        &merge,
        "--sign-key",
        alice.to_str().unwrap(),
    ])
    .expect(0);
    let answer = repo.tip().unwrap();
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["flaky"], false);
    assert_eq!(
        verdict["earlier_refusals"].as_array().map(Vec::len),
        Some(1),
        "{verdict}"
    );
    assert_eq!(
        verdict["warnings"],
        serde_json::json!([format!(
            "its tree {} was refused before and passes now; a human accepted this pass by name \
             in {} (signed by alice)",
            &tree[..12],
            &answer[..12]
        )])
    );
    assert!(
        verdict["answers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["commit"] == answer.as_str()),
        "{verdict}"
    );
    // An unsigned answer given after the human's (the agent's own) hides nothing: the signed
    // one still lifts it, named as before.
    repo.human(&["approve", "--flaky", "--tree", &merge])
        .expect(0);
    let later = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    later.expect(0);
    assert_eq!(later.json()["verdicts"][0]["warnings"], verdict["warnings"]);
}

/// Off the machine, for a ticket's merge: CI's first `attest` fails its gates (a flag outside
/// the repository) and its signed FAILED note is pushed; the next clone's `attest` passes the
/// gates and is FAILED as flaky. A human's `approve --flaky` on the finished ticket (of its
/// merge's tree by default) lets the next `attest` pass it once signed by a key main lists,
/// listing the earlier refusal, with the answer; unsigned, it lifts nothing.
#[test]
fn a_flaky_verdict_on_a_tickets_merge_is_lifted_by_a_humans_answer_on_the_ticket() {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let public = std::fs::read_to_string(verifier.with_extension("pub")).unwrap();
    let flags = tempfile::tempdir().unwrap();
    let flag = flags.path().join("flag");
    let alice = crate::signed::key(keys.path(), "alice");
    let repo = TestRepo::empty();
    repo.write("run_tests.sh", crate::tickets::RUNNER);
    repo.write(
        ".orchestrate.toml",
        &format!(
            "[[preflight]]\nname = \"tests\"\ncommand = \"[ ! -e '{}' ] || {{ echo flagged; exit \
             1; }}; sh run_tests.sh\"\ntimeout = \"30s\"\n",
            flag.display()
        ),
    );
    repo.write(
        ".orchestrate/allowed_signers",
        &format!(
            "ci@example namespaces=\"git-orchestrate-attest\" {public}{}",
            crate::signed::allowed("alice", &alice)
        ),
    );
    repo.write("src/base.sh", "echo base\n");
    repo.commit_all("initial");
    crate::tickets::finished_ticket(&repo);
    let merge = main_tip(&repo);
    let tree = repo
        .git(&["rev-parse", &format!("{merge}^{{tree}}")])
        .trim()
        .to_string();
    // The ticket's branch went at the merge: what keeps its subtasks' commits, as a landing
    // with a remote pushes it.
    let verified = repo.run(&["--json", "ticket", "show"]).json()["ticket"]["verified"]
        .as_str()
        .unwrap()
        .to_string();
    repo.git(&["update-ref", "refs/orchestrator/kept/main", &verified]);

    std::fs::write(&flag, "").unwrap();
    let ci = ci_clone(&repo);
    let key_arg = verifier.display().to_string();
    ci.run(&["attest", "--signing-key", &key_arg, &merge])
        .expect(1);
    ci.git(&[
        "push",
        "--quiet",
        "origin",
        "refs/notes/orchestrator-attest",
    ]);
    std::fs::remove_file(&flag).unwrap();
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["kind"], "ticket-merge");
    assert_eq!(verdict["flaky"], true);
    let reason = format!(
        "flaky: its tree {} FAILED under this policy before (in {} at ",
        &tree[..12],
        &merge[..12]
    );
    assert!(
        verdict["reasons"][0].as_str().unwrap().starts_with(&reason),
        "{verdict}"
    );

    // Unsigned, an answer is only attributed, which the agent can write itself.
    repo.human(&["approve", "--flaky"]).expect(0);
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(out.json()["verdicts"][0]["flaky"], true);
    repo.human(&["approve", "--flaky", "--sign-key", alice.to_str().unwrap()])
        .expect(0);
    let answer = repo.tip().unwrap();
    let out = ci_clone(&repo).run(&["attest", "--json", "--no-note", &merge]);
    out.expect(0);
    let verdict = &out.json()["verdicts"][0];
    assert_eq!(verdict["flaky"], false);
    assert_eq!(
        verdict["earlier_refusals"].as_array().map(Vec::len),
        Some(1),
        "{verdict}"
    );
    assert_eq!(
        verdict["warnings"],
        serde_json::json!([format!(
            "its tree {} was refused before and passes now; a human accepted this pass by name \
             in {} (signed by alice)",
            &tree[..12],
            &answer[..12]
        )])
    );
    assert!(
        verdict["answers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["commit"] == answer.as_str()
                && a["approves"] == serde_json::json!({"tree": tree, "flaky": true})),
        "{verdict}"
    );
}

/// On a ticket, `approve` takes `--flaky` only, once the ticket is finished; under `[human]
/// require = "signature"` an unsigned one is refused and one signed by a key the pin does not
/// list too, nothing recorded either way; alice's, made elsewhere over `--print-payload`'s
/// bytes, is recorded as signed by her.
#[test]
fn a_tickets_flaky_approval_is_held_to_its_pinned_signers() {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let mallory = key(keys.path(), "mallory");
    let repo = TestRepo::empty();
    repo.write("run_tests.sh", crate::tickets::RUNNER);
    repo.write(
        ".orchestrate.toml",
        "[[preflight]]\nname = \"tests\"\ncommand = \"sh run_tests.sh\"\ntimeout = \"30s\"\n\n\
         [human]\nrequire = \"signature\"\n",
    );
    repo.write(".orchestrate/allowed_signers", &allowed("alice", &alice));
    repo.write("src/base.sh", "echo base\n");
    repo.commit_all("initial");
    repo.run(&["ticket", "new", "--title", "Hello"]).expect(0);
    refused_with(
        repo.human(&["approve", "--flaky"]),
        4,
        "a pass after a failure is accepted for a finished ticket, and this one is in MANAGER",
    );
    crate::tickets::assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    crate::tickets::honest_work(&repo, "hello");
    crate::tickets::report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    crate::tickets::judge(&repo, "complete", &[]).expect(0);
    repo.run(&["complete-ticket", "--summary", "hello"])
        .expect(0);
    let tip = repo.tip();
    refused_with(
        repo.human(&["approve", "--test-change", "tests/hello.sh"]),
        2,
        "a ticket takes one approval: `approve --flaky`",
    );
    refused_with(
        repo.run(&["approve", "--flaky"]),
        4,
        "approve is a human's answer",
    );
    refused_with(
        repo.human(&["approve", "--flaky"]),
        4,
        "approve-tree needs a signature: the ticket's pinned configuration says [human] require \
         = \"signature\"; nothing was recorded",
    );
    let mallory_arg = mallory.display().to_string();
    refused_with(
        repo.human(&["approve", "--flaky", "--sign-key", &mallory_arg]),
        4,
        "the signature of approve-tree does not hold: its key is not in the pinned \
         .orchestrate/allowed_signers",
    );
    assert_eq!(repo.tip(), tip, "nothing was recorded");

    let merge = main_tip(&repo);
    let tree = repo
        .git(&["rev-parse", &format!("{merge}^{{tree}}")])
        .trim()
        .to_string();
    let payload = repo
        .human(&["approve", "--flaky", "--print-payload"])
        .expect(0)
        .stdout
        .clone();
    assert_eq!(
        payload,
        format!(
            "{{\"v\":1,\"workflow\":\"main\",\"tip\":\"{}\",\"answer\":\"approve-tree\",\
             \"text\":{}}}\n",
            tip.clone().unwrap(),
            serde_json::to_string(&format!("{{\"tree\":\"{tree}\",\"flaky\":true}}")).unwrap()
        )
    );
    let signature = sign_elsewhere(keys.path(), &alice, payload.as_bytes(), "ticket-flaky");
    let signature_arg = signature.display().to_string();
    let out = repo.human(&["approve", "--flaky", "--signature", &signature_arg]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "approved for the tree {tree} only: a pass after an earlier failure (signed by \
             alice); ticket TICKET_DONE\n"
        )
    );
    let message = repo.git(&["log", "-1", "--format=%B", REF]);
    assert!(
        message.starts_with("approve-flaky: TICKET_DONE -> TICKET_DONE\n")
            && message.contains("Orchestrator-Human: signed alice\n"),
        "{message}"
    );
    repo.run(&["audit", "--all"])
        .expect(0)
        .says("transitions replayed: clean");
}

/// Before the PR is pinned to main's configuration, an answer would be judged under the
/// defaults, which require no signature: an approval by name is refused there (exit 4), even
/// where main's configuration requires a signature, and nothing is recorded.
#[test]
fn an_approval_by_name_before_the_pr_is_pinned_is_refused() {
    let repo = TestRepo::empty();
    repo.write("calc.sh", "add() { echo $(($1 + $2)); }\n");
    repo.write("tests/test_add.sh", ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n");
    repo.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    repo.write(
        ".orchestrate.toml",
        &format!("{CALC_CONFIG}\n[human]\nrequire = \"signature\"\n"),
    );
    repo.commit_all("calculator");
    repo.submit_plan(crate::oracle::MUL_PLAN).expect(0);
    let tip = repo.tip();
    let tree = head_tree(&repo);
    refused_with(
        repo.human(&[
            "approve",
            "--test-change",
            "tests/test_add.sh",
            "--flaky",
            "--tree",
            &tree,
        ]),
        4,
        "approve --test-change/--flaky is not accepted before the PR has begun",
    );
    assert_eq!(repo.tip(), tip, "nothing recorded");
}
