//! State travels with clones and pushes (docs/refs.md, "Sharing through a remote"): two clones of a bare remote, the real
//! binary, real `git fetch` and `git push`.

use std::path::Path;

use pretty_assertions::assert_eq;

use crate::support::{RED, REF, TestRepo};

const TRACKING: &str = "refs/orchestrator/remotes/origin/workflows/main";
const BRANCH: &str = "feat/add-numbers";

fn rev(repo: &TestRepo, name: &str) -> Option<String> {
    let (ok, out) = repo.git_try(&["rev-parse", "--verify", "--quiet", name]);
    ok.then(|| out.trim().to_string())
}

fn remote_refs(bare: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["for-each-ref", "--format=%(refname)"])
        .current_dir(bare)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn remote_tip(bare: &Path, name: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", name])
        .current_dir(bare)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Every commit in `tips` is still reachable in `repo` from a local workflow ref or a backup
/// ref (not from a remote's copy). Unpushed local state is never lost.
#[track_caller]
fn assert_kept(repo: &TestRepo, tips: &[&str]) {
    let refs = repo.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/orchestrator/workflows/",
        "refs/orchestrator/backups/",
    ]);
    for tip in tips {
        let kept = refs
            .lines()
            .any(|r| repo.git_try(&["merge-base", "--is-ancestor", tip, r]).0);
        assert!(
            kept,
            "{tip} is no longer reachable from refs/orchestrator/:\n{refs}"
        );
    }
}

/// Clone A at step 1.1 of the plan, sharing through a bare remote; clone B a fresh clone of
/// it, before anyone synced.
fn two_clones() -> (TestRepo, TestRepo, tempfile::TempDir, std::path::PathBuf) {
    let a = TestRepo::new();
    let (dir, bare) = a.share();
    a.run(&["init"]).expect(0);
    a.submit_plan(crate::support::PLAN).expect(0);
    a.run(&["get-task"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    (a, b, dir, bare)
}

#[test]
fn a_second_clone_adopts_the_workflow_and_each_clone_receives_the_others_progress() {
    let (a, b, _dir, bare) = two_clones();
    let out = a.run(&["sync"]);
    out.expect(0);
    // Accepting the plan pushed its first transitions with the claim (docs/refs.md, "Claims").
    out.says("workflow main: pushed 1 transition (EXECUTING_TDD)");
    out.says(&format!("branch {BRANCH} (workflow main): pushed"));
    assert_eq!(remote_tip(&bare, REF), a.tip());
    assert_eq!(
        remote_tip(&bare, &format!("refs/heads/{BRANCH}")),
        rev(&a, BRANCH)
    );

    // A fresh clone's init adopts the remote's workflow instead of starting another.
    let out = b.run(&["init"]);
    out.expect(0);
    out.says("ADOPTED workflow main from origin: 3 transitions, state EXECUTING_TDD");
    assert_eq!(b.tip(), a.tip());
    assert!(
        b.git(&["config", "--get-all", "remote.origin.fetch"])
            .contains("refs/orchestrator/workflows/*:refs/orchestrator/remotes/origin/workflows/*"),
    );

    // A advances; a plain fetch in B brings it into the tracking namespace only.
    a.submit_test(RED, Some("FAIL")).expect(3);
    let status = a.run(&["status"]).expect(0).stdout.clone();
    let pushed_tip = rev(&a, TRACKING).unwrap();
    assert!(
        status.contains(&format!(
            "remote    origin @ {}: 1 transition ahead: `git orchestrate sync origin` pushes them\n",
            &pushed_tip[..12]
        )),
        "{status}"
    );
    a.run(&["sync"]).expect(0);
    let b_before = b.tip().unwrap();
    b.git(&["fetch", "--quiet", "origin"]);
    assert_eq!(
        b.tip().as_deref(),
        Some(b_before.as_str()),
        "git fetch never moves local state"
    );
    assert_eq!(rev(&b, TRACKING), a.tip());
    let status = b.run(&["status", "--json"]).expect(0).json();
    assert_eq!(status["remotes"][0]["remote"], "origin");
    assert_eq!(status["remotes"][0]["standing"], "behind");
    assert_eq!(status["remotes"][0]["behind"], 1);

    let out = b.run(&["sync"]);
    out.expect(0);
    out.says("workflow main: fast-forwarded 1 transition (EXECUTING_TDD)");
    assert_eq!(b.tip(), a.tip());
    assert_eq!(
        b.run(&["status", "--json"]).json()["remotes"][0]["standing"],
        "equal"
    );

    // B continues on the PR branch it received, commits, and syncs; A receives both.
    b.git(&["checkout", "--quiet", BRANCH]);
    b.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    b.write("notes.txt", "from b\n");
    b.commit_all("wip from b");
    let out = b.run(&["sync"]);
    out.expect(0);
    out.says("workflow main: pushed 1 transition");
    out.says(&format!("branch {BRANCH} (workflow main): pushed"));

    let a_before = a.tip().unwrap();
    let out = a.run(&["sync", "--json"]);
    out.expect(0);
    let json = out.json();
    assert_eq!(json["workflows"][0]["action"], "fast_forwarded");
    assert_eq!(json["branches"][0]["action"], "fast_forwarded");
    assert_eq!(a.tip(), b.tip());
    assert_eq!(
        rev(&a, "HEAD"),
        rev(&b, BRANCH),
        "A's checked-out PR branch moved forward"
    );
    assert_eq!(
        std::fs::read_to_string(a.path.join("notes.txt")).unwrap(),
        "from b\n"
    );
    assert_eq!(a.status(), "EXECUTING_TDD");
    assert_kept(&a, &[&a_before]);
    assert_kept(&b, &[&b_before]);
}

#[test]
fn both_advancing_is_reported_as_diverged_and_take_keeps_the_other_tip() {
    let (a, b, _dir, bare) = two_clones();
    a.run(&["sync"]).expect(0);
    b.run(&["init"]).expect(0);
    b.git(&["checkout", "--quiet", BRANCH]);
    let base = a.tip().unwrap();

    // Different transitions on each side: A's RED test fails, B's passes.
    a.submit_test(RED, Some("FAIL")).expect(3);
    b.submit_test("true", Some("FAIL")).expect(1);
    let (a_tip, b_tip) = (a.tip().unwrap(), b.tip().unwrap());
    a.run(&["sync"]).expect(0);

    let out = b.run(&["sync"]);
    out.expect(4);
    out.says("workflow main: DIVERGED: this clone");
    out.says("(1 transition since the fork)");
    out.says("test: EXECUTING_TDD -> DEBUGGING");
    out.says("test: EXECUTING_TDD -> EXECUTING_TDD");
    out.says("--take local");
    assert_eq!(
        b.tip().as_deref(),
        Some(b_tip.as_str()),
        "nothing changed here"
    );
    assert_eq!(
        remote_tip(&bare, REF).as_deref(),
        Some(a_tip.as_str()),
        "nothing changed there"
    );
    let json = b.run(&["sync", "--json"]).expect(4).json();
    assert_eq!(json["workflows"][0]["action"], "diverged");
    assert_eq!(json["workflows"][0]["base"], base.as_str());
    assert_eq!(
        json["workflows"][0]["local_since"][0]["commit"],
        b_tip.as_str()
    );
    assert_eq!(
        json["workflows"][0]["remote_since"][0]["commit"],
        a_tip.as_str()
    );
    assert_eq!(
        b.run(&["status", "--json"]).json()["remotes"][0]["standing"],
        "diverged"
    );

    // B keeps its own history; A's tip stays under a backup ref.
    let out = b.run(&["sync", "--take", "local"]);
    out.expect(0);
    let backup = format!("refs/orchestrator/backups/main/state-{a_tip}");
    out.says(&backup);
    assert_eq!(rev(&b, &backup).as_deref(), Some(a_tip.as_str()));
    assert_eq!(remote_tip(&bare, REF).as_deref(), Some(b_tip.as_str()));

    // A now sees the divergence from its side, and takes the remote's.
    a.run(&["sync"]).expect(4);
    assert_eq!(a.tip().as_deref(), Some(a_tip.as_str()));
    let out = a.run(&["sync", "--take", "remote"]);
    out.expect(0);
    assert_eq!(a.tip().as_deref(), Some(b_tip.as_str()));
    assert_eq!(
        rev(&a, &backup).as_deref(),
        Some(a_tip.as_str()),
        "A's own tip is kept"
    );
    assert_eq!(a.status(), "DEBUGGING");
    a.run(&["sync"]).expect(0);
    assert_kept(&a, &[&a_tip, &b_tip]);
    assert_kept(&b, &[&a_tip, &b_tip]);
}

fn add_note(repo: &TestRepo, commit: &str, line: &str) {
    repo.git(&["notes", "--ref=orchestrator", "append", "-m", line, commit]);
}

fn notes_on(repo: &TestRepo, commit: &str) -> Vec<String> {
    let mut lines: Vec<String> = repo
        .git(&["notes", "--ref=orchestrator", "show", commit])
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn notes_from_both_clones_are_all_there_after_sync_in_both() {
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    a.run(&["init"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    b.run(&["init"]).expect(0);
    let first = a.git(&["rev-parse", "HEAD"]).trim().to_string();
    b.write("b.txt", "b\n");
    b.commit_all("b's commit");
    let second = b.git(&["rev-parse", "HEAD"]).trim().to_string();

    add_note(&a, &first, "{\"from\":\"a\"}");
    add_note(&b, &first, "{\"from\":\"b\"}");
    add_note(&b, &second, "{\"from\":\"b\",\"n\":2}");
    a.run(&["sync"]).expect(0);
    let out = b.run(&["sync"]);
    out.expect(0);
    out.says("notes: merged with origin's (union of lines), pushed");
    a.run(&["sync"]).expect(0);
    a.git(&["fetch", "--quiet", "origin", "main"]);

    for repo in [&a, &b] {
        assert_eq!(
            notes_on(repo, &first),
            vec!["{\"from\":\"a\"}", "{\"from\":\"b\"}"]
        );
        assert_eq!(notes_on(repo, &second), vec!["{\"from\":\"b\",\"n\":2}"]);
    }
    assert_eq!(
        remote_tip(&bare, "refs/notes/orchestrator"),
        rev(&a, "refs/notes/orchestrator")
    );
    assert_eq!(
        rev(&a, "refs/notes/orchestrator"),
        rev(&b, "refs/notes/orchestrator")
    );
}

#[test]
fn two_clones_syncing_at_once_one_wins_and_the_other_retries_to_a_consistent_end() {
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    // A barrier: the first push waits (up to 20 s) until the second has arrived, so both
    // syncs have fetched before either lands, however slow the machine.
    let hook = bare.join("hooks/pre-receive");
    let arrivals = bare.parent().unwrap().join("arrivals");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat >/dev/null\nd='{}'\nmkdir -p \"$d\" && touch \"$d/$$\"\ni=0\n\
             while [ \"$(ls \"$d\" | wc -l)\" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done\n",
            arrivals.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    let b = TestRepo::clone_of(&bare);
    a.run(&["--workflow", "wa", "init"]).expect(0);
    b.run(&["--workflow", "wb", "init"]).expect(0);
    let first = a.git(&["rev-parse", "HEAD"]).trim().to_string();
    add_note(&a, &first, "{\"from\":\"a\"}");
    add_note(&b, &first, "{\"from\":\"b\"}");

    let spawn = |repo: &TestRepo| {
        repo.command(crate::support::BIN, ["sync", "--json"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a), spawn(&b));
    let outs = [
        pa.wait_with_output().unwrap(),
        pb.wait_with_output().unwrap(),
    ];
    let mut rounds = Vec::new();
    for out in &outs {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        rounds.push(json["rounds"].as_u64().unwrap());
    }
    rounds.sort();
    assert_eq!(rounds[0], 1, "one push won at once: {rounds:?}");
    assert!(
        rounds[1] >= 2,
        "the other lost the race and retried: {rounds:?}"
    );

    // One more sync each, and all three agree.
    a.run(&["sync"]).expect(0);
    b.run(&["sync"]).expect(0);
    for repo in [&a, &b] {
        for workflow in ["wa", "wb"] {
            let name = format!("refs/orchestrator/workflows/{workflow}");
            assert_eq!(rev(repo, &name), remote_tip(&bare, &name), "{workflow}");
            assert!(rev(repo, &name).is_some());
        }
        assert_eq!(
            notes_on(repo, &first),
            vec!["{\"from\":\"a\"}", "{\"from\":\"b\"}"]
        );
        assert_eq!(
            rev(repo, "refs/notes/orchestrator"),
            remote_tip(&bare, "refs/notes/orchestrator")
        );
    }
}

#[test]
fn a_plain_git_push_or_fetch_leaves_state_alone() {
    let (a, b, _dir, bare) = two_clones();
    // init added only fetch refspecs, none for push.
    assert_eq!(
        a.git_try(&["config", "--get-all", "remote.origin.push"]).0,
        false
    );
    // What accepting the plan pushed (its claim, its first transitions) is all there is.
    let state_refs = || -> Vec<(String, Option<String>)> {
        remote_refs(&bare)
            .into_iter()
            .filter(|r| r.starts_with("refs/orchestrator/") || r.starts_with("refs/notes/"))
            .map(|r| {
                let tip = remote_tip(&bare, &r);
                (r, tip)
            })
            .collect()
    };
    let before = state_refs();
    assert_eq!(
        before.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        vec![
            "refs/orchestrator/claims/pr-1-feat-add-numbers",
            "refs/orchestrator/workflows/main"
        ]
    );
    a.git(&["push", "--quiet", "origin", "main"]);
    a.git(&["push", "--quiet", "origin", BRANCH]);
    assert_eq!(state_refs(), before);

    // B starts its own workflow (--new: not A's, which accepting the plan pushed) before it
    // ever syncs: a plain fetch keeps it.
    // At another time than A's: the same transition at the same second is the same commit.
    let init = b
        .command(crate::support::BIN, ["init", "--new"])
        .env("GIT_COMMITTER_DATE", "2026-02-02T00:00:00Z")
        .output()
        .unwrap();
    assert!(init.status.success());
    let b_own = b.tip().unwrap();
    a.run(&["sync"]).expect(0);
    // The remote has no notes yet: the fetch must not fail on the notes refspec.
    b.git(&["fetch", "--quiet", "origin"]);
    assert_eq!(b.tip().as_deref(), Some(b_own.as_str()));
    assert_eq!(rev(&b, TRACKING), a.tip());
    let out = b.run(&["sync"]);
    out.expect(4);
    out.says("share no transition");
    assert_eq!(b.tip().as_deref(), Some(b_own.as_str()));
    assert_kept(&b, &[&b_own]);
}

#[test]
fn a_host_that_refuses_custom_refs_gets_a_clear_message_and_nothing_changes() {
    let (a, _b, _dir, bare) = two_clones();
    let hook = bare.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  case $ref in refs/orchestrator/*|refs/notes/*)\n    \
         echo \"this host accepts branches and tags only, not $ref\" >&2; exit 1;;\n  esac\ndone\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    let before = a.tip();
    let theirs = remote_tip(&bare, REF);
    let out = a.run(&["sync"]);
    out.expect(5);
    out.warns("could not push refs/orchestrator/workflows/main");
    out.warns("this host accepts branches and tags only, not refs/orchestrator/workflows/main");
    out.warns("refuse refs outside refs/heads and refs/tags");
    assert_eq!(a.tip(), before);
    assert_eq!(remote_tip(&bare, REF), theirs);
    let json = a.run(&["sync", "--json"]).expect(5).json();
    assert_eq!(json["error"]["kind"], "remote");
}

#[test]
fn sync_without_a_remote_says_how_to_add_one() {
    let repo = TestRepo::new();
    let out = repo.run(&["sync"]);
    out.expect(2);
    out.warns("this repository has no remote to sync with");
    out.warns("git remote add origin");
    let out = repo.run(&["sync", "upstream"]);
    out.expect(2);
    out.warns("there is no remote named \"upstream\"");
}

#[test]
fn the_pre_push_hook_checks_what_sync_pushes_and_its_warning_is_shown() {
    let (a, _b, _dir, bare) = two_clones();
    a.write("x.txt", "x\n");
    a.git(&["add", "x.txt"]);
    a.git(&[
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        "checkpoint: 1.1 made without the hook",
    ]);
    let out = a.run(&["sync"]);
    out.expect(0);
    out.says("WARNING: git push said: git-orchestrate: 1 checkpoint commit without a passing note");
    assert_eq!(
        remote_tip(&bare, &format!("refs/heads/{BRANCH}")),
        rev(&a, "HEAD")
    );
}

#[test]
fn a_pr_branch_is_never_moved_over_local_work_and_take_keeps_the_other_tip() {
    let (a, b, _dir, bare) = two_clones();
    a.run(&["sync"]).expect(0);
    b.run(&["init"]).expect(0);
    b.git(&["checkout", "--quiet", BRANCH]);

    // A commits to the PR branch; B has an uncommitted change to the same file.
    a.write("shared.txt", "from a\n");
    a.commit_all("a's work");
    a.run(&["sync"]).expect(0);
    b.write("shared.txt", "b, not committed\n");
    let out = b.run(&["sync"]);
    out.expect(0);
    out.says(&format!(
        "branch {BRANCH} (workflow main): NOT updated: git refused"
    ));
    assert_eq!(
        std::fs::read_to_string(b.path.join("shared.txt")).unwrap(),
        "b, not committed\n"
    );

    // B commits its own version instead: now the branch has diverged, and nothing moves.
    b.commit_all("b's work");
    let b_commit = rev(&b, "HEAD").unwrap();
    let out = b.run(&["sync"]);
    out.expect(4);
    out.says(&format!("branch {BRANCH} (workflow main): DIVERGED"));
    assert_eq!(rev(&b, "HEAD").as_deref(), Some(b_commit.as_str()));
    let a_commit = rev(&a, "HEAD").unwrap();
    assert_eq!(
        remote_tip(&bare, &format!("refs/heads/{BRANCH}")).as_deref(),
        Some(a_commit.as_str())
    );

    // --take remote moves B's checked-out branch to A's and keeps B's commit.
    let out = b.run(&["sync", "--take", "remote"]);
    out.expect(0);
    assert_eq!(rev(&b, "HEAD").as_deref(), Some(a_commit.as_str()));
    assert_eq!(
        std::fs::read_to_string(b.path.join("shared.txt")).unwrap(),
        "from a\n"
    );
    let backup = format!("refs/orchestrator/backups/main/branch-{b_commit}");
    out.says(&backup);
    assert_kept(&b, &[&b_commit]);
}

#[test]
fn a_branch_name_from_the_remote_is_never_taken_as_an_option_or_the_main_branch() {
    let (a, b, _dir, _bare) = two_clones();
    a.run(&["sync"]).expect(0);
    b.run(&["init"]).expect(0);
    // A hostile clone rewrites the state to name "-m" (and pushes such a branch) or main.
    for hostile in ["-m", "main"] {
        let mut state = a.state();
        state["current_pr_branch"] = serde_json::json!(hostile);
        let bytes = serde_json::to_vec_pretty(&state).unwrap();
        a.write_workflow_commit(&[("state.json", &bytes)]);
        a.git(&["push", "--quiet", "origin", "HEAD:refs/heads/-m"]);
        let out = a.run(&["sync"]);
        out.expect(0);
        out.says(&format!(
            "names \"{hostile}\" as its PR branch, which sync does not touch"
        ));
        let head = b.git(&["symbolic-ref", "HEAD"]);
        let main = rev(&b, "main");
        // A hand-written transition: the audit refuses it before sync touches anything
        // (docs/integrity.md), and the branch name is never taken either way.
        let out = b.run(&["sync"]);
        out.expect(1);
        assert!(
            out.stderr.starts_with(
                "error: sync refused what origin holds: workflow main has a forged transition"
            ),
            "{}",
            out.stderr
        );
        assert_eq!(
            b.git(&["symbolic-ref", "HEAD"]),
            head,
            "B's branch was not renamed"
        );
        assert_eq!(rev(&b, "main"), main, "main was not moved");
        assert_eq!(rev(&b, "refs/heads/-m"), None);
    }
}

#[test]
fn sync_replaces_the_exact_notes_refspec_that_breaks_git_fetch() {
    let (a, _b, _dir, _bare) = two_clones();
    let exact = "refs/notes/orchestrator:refs/notes/remotes/origin/orchestrator";
    a.git(&["config", "--add", "remote.origin.fetch", exact]);
    assert!(
        !a.git_try(&["fetch", "--quiet", "origin"]).0,
        "git fetch fails while origin has no notes"
    );
    let doctor = a.run(&["doctor", "--json"]).json();
    assert!(
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["level"] == "warning"
                && c["message"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{exact} makes `git fetch origin` fail"))),
        "{doctor}"
    );
    a.run(&["sync"]).expect(0);
    let specs = a.git(&["config", "--get-all", "remote.origin.fetch"]);
    assert!(!specs.lines().any(|s| s == exact), "{specs}");
    assert!(
        specs
            .lines()
            .any(|s| s == "refs/notes/orchestrator*:refs/notes/remotes/origin/orchestrator*")
    );
    a.git(&["fetch", "--quiet", "origin"]);
}

/// Clone A of a shared project whose committed config has `[hooks] pre_push = mode`, with a
/// checkpoint made by `git orchestrate checkpoint` at step 1.1: the workflow then holds a
/// transition whose subject reads `checkpoint: EXECUTING_TDD -> …`.
fn checkpointed_clone(mode: &str) -> (TestRepo, tempfile::TempDir, std::path::PathBuf) {
    let a = TestRepo::with_config(&format!(
        "{}\n[hooks]\npre_push = \"{mode}\"\n",
        crate::support::CONFIG
    ));
    let (dir, bare) = a.share();
    a.run(&["init"]).expect(0);
    a.submit_plan(crate::support::PLAN).expect(0);
    a.run(&["get-task"]).expect(0);
    a.submit_test(RED, Some("FAIL")).expect(3);
    a.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    a.write("add.sh", "echo 5\n");
    a.submit_test("sh add.sh", None).expect(0);
    a.run(&["checkpoint"]).expect(0);
    let transitions = a.git(&["log", "--format=%s", REF]);
    assert!(
        transitions.lines().any(|s| s.starts_with("checkpoint: ")),
        "{transitions}"
    );
    (a, dir, bare)
}

#[test]
fn sync_pushes_a_verified_checkpoint_and_the_workflow_under_either_pre_push_mode() {
    for mode in ["enforce", "warn"] {
        let (a, _dir, bare) = checkpointed_clone(mode);
        let out = a.run(&["sync"]);
        out.expect(0);
        assert!(
            !out.stdout.contains("WARNING"),
            "{mode}: no commit pushed lacks a note:\n{}",
            out.stdout
        );
        assert_eq!(remote_tip(&bare, REF), a.tip(), "{mode}");
        assert_eq!(
            remote_tip(&bare, &format!("refs/heads/{BRANCH}")),
            rev(&a, "HEAD"),
            "{mode}"
        );
    }
}

#[test]
fn a_checked_out_branch_git_cannot_move_is_reported_in_gits_words_not_as_local_changes() {
    let (a, b, _dir, _bare) = two_clones();
    a.run(&["sync"]).expect(0);
    b.run(&["init"]).expect(0);
    b.git(&["checkout", "--quiet", BRANCH]);
    a.write("shared.txt", "from a\n");
    a.commit_all("a's work");
    a.run(&["sync"]).expect(0);
    b.write("other.txt", "from b\n");
    b.commit_all("b's work");
    b.run(&["sync"]).expect(4);
    let b_commit = rev(&b, "HEAD").unwrap();

    // Nothing uncommitted in B; git fails for a reason of its own (another git holds the
    // index).
    let lock = b.path.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let out = b.run(&["sync", "--take", "remote"]);
    std::fs::remove_file(&lock).unwrap();
    out.expect(0);
    out.says(&format!(
        "branch {BRANCH} (workflow main): NOT updated: git could not move the checked-out branch: `git reset --keep"
    ));
    out.says("index.lock");
    assert!(!out.stdout.contains("commit or stash"), "{}", out.stdout);
    assert_eq!(rev(&b, "HEAD").as_deref(), Some(b_commit.as_str()));
}
