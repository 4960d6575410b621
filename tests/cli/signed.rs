//! Signed human answers end to end (docs/integrity.md, "Signed human answers"): real
//! `ssh-keygen` keys made in the test, `[human] require = "signature"` pinned on main, and
//! the forgeries a cheating agent could write by hand, caught by `audit`.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;

use crate::support::{CONFIG, REF, Run, TestRepo, do_the_steps, one_task_plan};

/// A key pair made with `ssh-keygen`, without a passphrase: `<dir>/<name>` and `.pub`.
pub(crate) fn key(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .expect("run ssh-keygen");
    assert!(out.status.success(), "{out:?}");
    path
}

/// An allowed-signers line for `principal`'s key.
pub(crate) fn allowed(principal: &str, key: &Path) -> String {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut fields = public.split_whitespace();
    let (kind, blob) = (fields.next().unwrap(), fields.next().unwrap());
    format!("{principal} namespaces=\"git-orchestrate\" {kind} {blob}\n")
}

/// Signs `payload` with `key` as a human elsewhere would; the armored signature's path.
pub(crate) fn sign_elsewhere(dir: &Path, key: &Path, payload: &[u8], name: &str) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, payload).unwrap();
    let out = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "git-orchestrate", "-f"])
        .arg(key)
        .arg(&file)
        .output()
        .expect("run ssh-keygen");
    assert!(out.status.success(), "{out:?}");
    file.with_extension("sig")
}

/// A repository whose main pins a clean human-gated review, `[human] require = "signature"`
/// when `require`, and alice's key as the one allowed signer; with alice's and mallory's
/// keys in a directory of their own.
fn signing_repo(require: bool) -> (TestRepo, tempfile::TempDir, PathBuf, PathBuf) {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let mallory = key(keys.path(), "mallory");
    let human = if require {
        "[human]\nrequire = \"signature\"\n"
    } else {
        ""
    };
    let repo = TestRepo::with_config(&format!(
        "{CONFIG}\n[review]\ncommand = \"sh review.sh\"\nhuman = true\n{human}"
    ));
    repo.write("review.sh", "cat >/dev/null; echo '{\"findings\": []}'\n");
    repo.write(".orchestrate/allowed_signers", &allowed("alice", &alice));
    repo.commit_all("reviewer and signers");
    (repo, keys, alice, mallory)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The expected payload of `answer` on `tip`.
fn payload(tip: &str, answer: &str, text: &str) -> String {
    format!(
        "{{\"v\":1,\"workflow\":\"main\",\"tip\":\"{tip}\",\"answer\":\"{answer}\",\"text\":\"{text}\"}}\n"
    )
}

#[track_caller]
fn refused(out: &Run, why: &str) {
    out.expect(4);
    assert!(
        out.stderr.contains(why),
        "stderr lacks {why:?}:\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("nothing was recorded"),
        "{}",
        out.stderr
    );
}

#[test]
fn under_require_every_answer_needs_a_listed_key_over_its_own_tip() {
    let (repo, keys, alice, mallory) = signing_repo(true);
    do_the_steps(&repo, "feat: Add", "add.txt");
    repo.run(&["get-task"]).expect(10);
    let gate = repo.tip().unwrap();

    // Unsigned, or signed by a key the pinned file does not list: refused, nothing written.
    let unsigned = repo.human(&["approve"]);
    unsigned.expect(4);
    assert_eq!(
        unsigned.stderr,
        "error: approve needs a signature: the pinned configuration says [human] require = \"signature\"; \
         nothing was recorded\n\
         hint: Sign with a key listed in the pinned .orchestrate/allowed_signers: `git orchestrate approve \
         --sign-key ~/.ssh/id_ed25519_sk`, or `--print-payload` and sign elsewhere (`ssh-keygen -Y sign -n \
         git-orchestrate -f KEY`), then pass `--signature FILE`.\n"
    );
    refused(
        &repo.human(&["approve", "--sign-key", path(&mallory)]),
        "its key is not in the pinned .orchestrate/allowed_signers",
    );
    assert_eq!(repo.tip().unwrap(), gate);

    // The payload is printed as is, and printing it writes nothing; no terminal needed.
    let printed = repo.run(&["approve", "--print-payload"]);
    printed.expect(0);
    assert_eq!(printed.stdout, payload(&gate, "approve", ""));
    let old_approval = sign_elsewhere(
        keys.path(),
        &alice,
        printed.stdout.as_bytes(),
        "approve-at-gate",
    );
    let reject = repo.run(&[
        "reject",
        "--comment",
        " name it \"sum\" ",
        "--print-payload",
    ]);
    reject.expect(0);
    assert_eq!(
        reject.stdout,
        payload(&gate, "reject", "name it \\\"sum\\\"")
    );
    assert_eq!(repo.tip().unwrap(), gate);

    // A signature made elsewhere, over this answer on this tip.
    let signature = sign_elsewhere(keys.path(), &alice, reject.stdout.as_bytes(), "reject");
    repo.human(&[
        "reject",
        "--comment",
        " name it \"sum\" ",
        "--signature",
        path(&signature),
    ])
    .expect(0);
    let message = repo.git(&["log", "-1", "--format=%B", REF]);
    assert!(
        message
            .trim_end()
            .ends_with("Orchestrator-Human: signed alice"),
        "{message}"
    );
    let raw = repo.git(&["cat-file", "commit", REF]);
    assert!(
        raw.contains("\norchestrator-signature -----BEGIN SSH SIGNATURE-----\n "),
        "{raw}"
    );

    repo.submit_test("test -e add.txt", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(10);
    // The approval signed at the first gate is a replay here.
    refused(
        &repo.human(&["approve", "--signature", path(&old_approval)]),
        &format!(
            "it is a replay: it was made over the older tip {}",
            &gate[..12]
        ),
    );
    // A key path relative to where the command runs (the repository).
    std::fs::copy(&alice, repo.path.join(".git/alice-key")).unwrap();
    repo.human(&["approve", "--sign-key", ".git/alice-key"])
        .expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    let log = repo.run(&["log", "-n", "1"]).expect(0).stdout.clone();
    assert!(
        log.contains("answered by a human: signed by alice (SSH key)"),
        "{log}"
    );

    // resume and repin too.
    repo.run_with_stdin(&["escalate", "--report", "-"], "# help\n")
        .expect(10);
    refused(&repo.human(&["resume"]), "resume needs a signature");
    repo.human(&[
        "resume",
        "--guidance",
        "squash it",
        "--sign-key",
        path(&alice),
    ])
    .expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    // main moves outside the workflow: a repin accounts for it.
    let tree = repo.git(&["rev-parse", "main^{tree}"]);
    let moved = repo.git(&["commit-tree", tree.trim(), "-p", "main", "-m", "by hand"]);
    repo.git(&["update-ref", "refs/heads/main", moved.trim()]);
    refused(&repo.human(&["repin"]), "repin needs a signature");
    refused(
        &repo.human(&["repin", "--sign-key", path(&mallory)]),
        "its key is not in the pinned",
    );
    repo.human(&["repin", "--sign-key", path(&alice)]).expect(0);

    let audit = repo.run(&["audit", "--json"]);
    audit.expect(0);
    assert_eq!(audit.json()["problems"], serde_json::json!([]));

    judged_from_objects_alone(&repo);
    forgeries_are_caught(&repo, keys.path(), &mallory);
}

/// `judge_answers`, as `attest` calls it, in a fresh repository that has nothing but the
/// workflow ref, its objects reached through alternates: no working tree of the PR's, no main.
fn judged_from_objects_alone(repo: &TestRepo) {
    use git_orchestrate::engine::{AnswerVerdict, Session, judge_answers};
    let tip = repo.tip().unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let out = Command::new("git")
        .args(["init", "-q"])
        .arg(fresh.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let objects = repo.path.join(".git/objects");
    std::fs::write(
        fresh.path().join(".git/objects/info/alternates"),
        format!("{}\n", objects.display()),
    )
    .unwrap();
    let out = Command::new("git")
        .args(["update-ref", REF, &tip])
        .current_dir(fresh.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let session = Session::open(fresh.path(), "main").unwrap();
    let id = gix::ObjectId::from_hex(tip.as_bytes()).unwrap();
    let checks = judge_answers(&session, "main", id, None).unwrap();
    let found: Vec<(&str, bool, &AnswerVerdict)> = checks
        .iter()
        .map(|c| (c.answer.as_str(), c.required, &c.verdict))
        .collect();
    let alice = AnswerVerdict::Signed {
        principal: "alice".into(),
    };
    assert_eq!(
        found,
        vec![
            ("repin", true, &alice),
            ("resume", true, &alice),
            ("approve", true, &alice),
            ("reject", true, &alice),
        ]
    );
    assert!(checks.iter().all(|c| !c.fails()));
    // A segment: stop (exclusive) at the approve's parent leaves out the reject.
    let approve = gix::ObjectId::from_hex(checks[2].commit.as_bytes()).unwrap();
    let parent = repo.git(&["rev-parse", &format!("{approve}^")]);
    let stop = gix::ObjectId::from_hex(parent.trim().as_bytes()).unwrap();
    assert_eq!(
        judge_answers(&session, "main", id, Some(stop))
            .unwrap()
            .len(),
        3
    );
}

/// What a cheating agent could write by hand on top of a signed repin: the same transition
/// with another key's signature, and with none at all. `audit` names each.
fn forgeries_are_caught(repo: &TestRepo, keys: &Path, mallory: &Path) {
    let genuine = repo.tip().unwrap();
    let raw = repo.git(&["cat-file", "commit", &genuine]);
    let parent = repo.git(&["rev-parse", &format!("{genuine}^")]);
    let payload = payload(parent.trim(), "repin", "");
    let forged_sig =
        std::fs::read_to_string(sign_elsewhere(keys, mallory, payload.as_bytes(), "forged"))
            .unwrap();
    let (head, message) = raw.split_once("\n\n").unwrap();
    let kept: Vec<&str> = head
        .lines()
        .filter(|l| !l.starts_with("orchestrator-signature ") && !l.starts_with(' '))
        .collect();
    let header = |signature: Option<&str>| {
        let mut text = kept.join("\n");
        if let Some(sig) = signature {
            text.push_str("\norchestrator-signature ");
            text.push_str(&sig.trim_end().replace('\n', "\n "));
        }
        text
    };
    let write = |text: String| {
        let id = repo.git_with_stdin(
            &["hash-object", "-t", "commit", "-w", "--stdin"],
            text.as_bytes(),
        );
        let current = repo.tip().unwrap();
        repo.git(&["update-ref", REF, id.trim(), &current]);
        id.trim().to_string()
    };
    let problems = |commit: &str| -> Vec<String> {
        let audit = repo.run(&["audit", "--json"]);
        audit.expect(1);
        audit.json()["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["commit"] == commit)
            .map(|p| p["problem"].as_str().unwrap().to_string())
            .collect()
    };

    let bad = write(format!("{}\n\n{message}", header(Some(&forged_sig))));
    let found = problems(&bad);
    assert!(
        found.iter().any(|p| p.starts_with(
            "a forged human answer: its `repin` claims a signature that does not hold: its key is \
             not in the pinned .orchestrate/allowed_signers"
        )),
        "{found:?}"
    );

    let unsigned = write(format!(
        "{}\n\n{}",
        header(None),
        message.replace(
            "Orchestrator-Human: signed alice",
            "Orchestrator-Human: GIT_ORCHESTRATE_HUMAN"
        )
    ));
    let found = problems(&unsigned);
    assert!(
        found.iter().any(|p| p
            == "an unsigned human answer: its `repin` carries no signature (GIT_ORCHESTRATE_HUMAN), \
                and the configuration pinned for it says [human] require = \"signature\""),
        "{found:?}"
    );
}

/// Without `require`, answers stay attributed; a signature given anyway is still checked.
#[test]
fn a_signature_not_required_is_still_checked_and_recorded() {
    let (repo, _keys, alice, mallory) = signing_repo(false);
    do_the_steps(&repo, "feat: Add", "add.txt");
    repo.run(&["get-task"]).expect(10);
    refused(
        &repo.human(&["approve", "--sign-key", path(&mallory)]),
        "its key is not in the pinned",
    );
    let approved = repo.human(&["approve", "--sign-key", path(&alice), "--json"]);
    approved.expect(0);
    assert_eq!(approved.json()["signed_by"], "alice");
    let entries = repo.run(&["log", "--json"]).expect(0).json();
    assert_eq!(entries["entries"][0]["human"], "signed alice");
    repo.run(&["audit"]).expect(0);
}

#[test]
fn a_pr_that_edits_the_allowed_signers_does_not_verify() {
    let (repo, _keys, _alice, mallory) = signing_repo(true);
    repo.submit_plan(&one_task_plan("feat: Add", "add.txt"))
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test("test -e add.txt", None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.txt", "v1\n");
    repo.write(".orchestrate/allowed_signers", &allowed("agent", &mallory));
    repo.submit_test("test -e add.txt", None)
        .expect(1)
        .says("but the working tree changes protected paths (.orchestrate/allowed_signers)");
}

/// The CI job's own command, as `init --ci` runs it on a push of main: a fresh clone that
/// fetches the workflows' refs and notes, then `attest --json --no-note BEFORE..AFTER`.
fn ci_attest(bare: &Path, before: &str, after: &str) -> Run {
    let ci = TestRepo::clone_of(bare);
    ci.git(&[
        "fetch",
        "--quiet",
        "--no-tags",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
        "+refs/notes/*:refs/notes/*",
    ]);
    ci.run(&[
        "attest",
        "--json",
        "--no-note",
        &format!("{before}..{after}"),
    ])
}

/// A human commits a gate change on main, as docs/config.md invites. Before a repin accounts
/// for it, `doctor` names `git orchestrate repin` as the fix (not `audit --all`), `audit`
/// says main moved outside the workflow (not FORGED), and the CI job fails main. After a
/// signed repin by a human `[attest] humans` lists, pushed with `sync`: `doctor`'s history and
/// `audit --all` are clean, and the CI job passes main in a fresh clone.
#[test]
fn a_humans_gate_change_on_main_is_accounted_for_by_a_signed_repin_and_ci_accepts_it() {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let config = format!(
        "{CONFIG}\n[human]\nrequire = \"signature\"\n\n[attest]\nhumans = [\"user:alice\"]\n"
    );
    let repo = TestRepo::with_config(&config);
    repo.write(".orchestrate/allowed_signers", &allowed("alice", &alice));
    repo.commit_all("signers");
    let (_remote, bare) = repo.share();
    repo.submit_plan(crate::support::PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.run(&["sync"]).expect(0);
    let rev = |name: &str| repo.git(&["rev-parse", name]).trim().to_string();
    let before = rev("main");

    // The human's commit on main, pushed.
    repo.git(&["checkout", "--quiet", "main"]);
    repo.write(
        ".orchestrate.toml",
        &config.replacen("timeout = \"30s\"", "timeout = \"60s\"", 1),
    );
    repo.commit_all("gates: a longer preflight timeout");
    let after = rev("main");
    repo.git(&["push", "--quiet", "origin", "main"]);
    repo.git(&["checkout", "--quiet", "-"]);

    let doctor = repo.run(&["doctor"]);
    doctor.expect(1);
    let lines: Vec<&str> = doctor.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("ERROR    history"))
        .unwrap_or_else(|| panic!("a history error:\n{}", doctor.stdout));
    assert!(
        lines[at].contains("main moved outside the workflow"),
        "{}",
        lines[at]
    );
    assert_eq!(lines[at + 1].trim(), "fix: git orchestrate repin");
    assert!(!doctor.stdout.contains("audit --all"), "{}", doctor.stdout);
    let audit = repo.run(&["audit", "--all"]);
    audit
        .expect(1)
        .says("NOT ACCOUNTED FOR: workflow main, commit ");
    assert!(!audit.stdout.contains("FORGED"), "{}", audit.stdout);
    let ci = ci_attest(&bare, &before, &after);
    ci.expect(1);
    assert!(
        ci.stdout
            .contains(&format!("no workflow's chain records {after} as its merge")),
        "{}",
        ci.stdout
    );

    // A human looks at it and repins, signed; the chain reaches the remote.
    repo.human(&["repin", "--sign-key", path(&alice)]).expect(0);
    repo.run(&["sync"]).expect(0);
    let doctor = repo.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("ok       history")),
        "{}",
        doctor.stdout
    );
    assert!(
        !doctor.stdout.contains("ERROR    history"),
        "{}",
        doctor.stdout
    );
    repo.run(&["audit", "--all"]).expect(0).says(": clean\n");
    let ci = ci_attest(&bare, &before, &after);
    ci.expect(0);
    let verdict = &ci.json()["verdicts"][0];
    assert_eq!(verdict["commit"], after.as_str());
    assert_eq!(verdict["kind"], "human");
    assert_eq!(verdict["passed"], true);
    assert_eq!(verdict["answers"][0]["answer"], "repin");
    assert_eq!(verdict["answers"][0]["verdict"]["principal"], "alice");

    // The repin's signature covers the main commit it accounts for: moved onto a repin of
    // another commit, forged on the same tip, it does not hold.
    let genuine = repo.tip().unwrap();
    let raw = repo.git(&["cat-file", "commit", &genuine]);
    let tree = rev(&format!("{genuine}^{{tree}}"));
    let state = repo.git(&["cat-file", "blob", &format!("{genuine}:state.json")]);
    assert!(state.contains(&after), "{state}");
    let blob = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        state.replace(&after, &before).as_bytes(),
    );
    let listing: String = repo
        .git(&["ls-tree", &tree])
        .lines()
        .map(|l| match l.strip_suffix("\tstate.json") {
            Some(_) => format!("100644 blob {}\tstate.json\n", blob.trim()),
            None => format!("{l}\n"),
        })
        .collect();
    let forged_tree = repo.git_with_stdin(&["mktree"], listing.as_bytes());
    let forged = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        raw.replace(&tree, forged_tree.trim())
            .replace(&after, &before)
            .as_bytes(),
    );
    repo.git(&["update-ref", REF, forged.trim(), &genuine]);
    repo.run(&["audit"])
        .expect(1)
        .says(&format!("commit {}: a forged human answer", forged.trim()));
}
