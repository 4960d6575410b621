//! Claims on PRs (docs/refs.md, "Claims"): the real binary racing for one PR from several
//! clones of one bare remote, served by path and by a real `git daemon`; expiry, takeover,
//! renewal and release on a fake clock; a human's `claim release|steal`; what a hostile
//! remote may hold under the claims namespace; and what an agent might try to dodge a claim.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use crate::support::*;

/// The master plan of [`TestRepo::new`] has one PR, `## PR 1: feat: Add numbers`.
const PR: &str = "pr-1-feat-add-numbers";
const CLAIM: &str = "refs/orchestrator/claims/pr-1-feat-add-numbers";
const TITLE: &str = "feat: Add numbers";

fn plan() -> String {
    one_task_plan(TITLE, "add.sh")
}

/// Runs git in the bare repository `bare` (no hooks of a clone, the test's environment).
fn bare_git(repo: &TestRepo, bare: &Path, args: &[&str]) -> String {
    let mut all = vec!["--git-dir", bare.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    repo.git(&all)
}

/// `reference` in `repo` (or in the git dir `git_dir`), if it exists.
fn rev_in(repo: &TestRepo, git_dir: Option<&Path>, reference: &str) -> Option<String> {
    let mut args = Vec::new();
    if let Some(dir) = git_dir {
        args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
    }
    args.extend(["rev-parse", "--verify", "--quiet", reference]);
    let (ok, out) = repo.git_try(&args);
    ok.then(|| out.trim().to_string())
}

/// The trailer `key` of the commit `id`.
fn trailer(repo: &TestRepo, git_dir: Option<&Path>, id: &str, key: &str) -> String {
    let mut args = Vec::new();
    if let Some(dir) = git_dir {
        args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
    }
    args.extend(["log", "-1", "--format=%B", id]);
    let message = repo.git(&args);
    message
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("{id} has no {key}:\n{message}"))
        .to_string()
}

/// The workflow the remote's claim on [`PR`] names, if it holds one.
fn remote_holder(repo: &TestRepo, bare: &Path) -> Option<String> {
    let id = rev_in(repo, Some(bare), CLAIM)?;
    Some(trailer(
        repo,
        Some(bare),
        &id,
        "Orchestrator-Claim-Workflow",
    ))
}

/// `git-orchestrate ARGS` in `repo` for the workflow `workflow`, with `env` set.
fn run_as(repo: &TestRepo, workflow: &str, env: &[(&str, String)], args: &[&str]) -> Run {
    let mut cmd = repo.command(BIN, args);
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", workflow)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("run git-orchestrate"))
}

/// Submits [`plan`] (or `plan_text`) in `repo` as workflow `workflow` at the fake time `now`.
fn claim_at(repo: &TestRepo, workflow: &str, now: i64, plan_text: &str) -> Run {
    let mut cmd = repo.command(BIN, ["submit-work", "--summary", "the plan", "--plan", "-"]);
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", workflow)
        .env("GIT_ORCHESTRATE_NOW", now.to_string());
    feed(cmd, plan_text)
}

/// Turns off what would make a long race slow or uneven: automatic gc and maintenance.
fn quiet(repo: &TestRepo, git_dir: Option<&Path>) {
    for (key, value) in [
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("receive.autogc", "false"),
    ] {
        let mut args = Vec::new();
        if let Some(dir) = git_dir {
            args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
        }
        args.extend(["config", key, value]);
        repo.git(&args);
    }
}

/// Deletes every ref under `refs/orchestrator/` (workflows, claims, remote-tracking copies)
/// and, in a clone, the markers that remember the workflows' tips: the clean slate a race
/// round starts from, as if its claimers had never run.
fn clear_orchestrator_refs(repo: &TestRepo, git_dir: Option<&Path>) {
    if git_dir.is_none() {
        let _ = std::fs::remove_dir_all(repo.path.join(".git/orchestrator/tips"));
    }
    let mut args = Vec::new();
    if let Some(dir) = git_dir {
        args.extend(["--git-dir", dir.to_str().expect("a UTF-8 path")]);
    }
    let mut list = args.clone();
    list.extend([
        "for-each-ref",
        "--format=delete %(refname)",
        "refs/orchestrator/",
    ]);
    let deletes = repo.git(&list);
    if deletes.is_empty() {
        return;
    }
    args.extend(["update-ref", "--stdin"]);
    repo.git_with_stdin(&args, deletes.as_bytes());
}

/// The pre-receive hook that holds pushes of claims until `count` of them wait at the server
/// (or 10 s pass), when `<dir>/on` exists. receive-pack runs pre-receive before it takes any
/// ref lock (the hook sees the objects in a quarantine; the ref transaction starts after it
/// exits), so concurrent pushes wait here side by side and none holds another up: the test
/// checks that all of them were waiting at once.
fn barrier_hook(dir: &Path, count: usize) -> String {
    format!(
        "#!/bin/sh\n\
         dir='{dir}'\n\
         [ -e \"$dir/on\" ] || exit 0\n\
         grep -q ' refs/orchestrator/claims/' || exit 0\n\
         : > \"$dir/waiting.$$\"\n\
         i=0\n\
         while [ ! -e \"$dir/go\" ]; do\n\
         \x20 set -- \"$dir\"/waiting.*\n\
         \x20 if [ $# -ge {count} ]; then : > \"$dir/go\"; break; fi\n\
         \x20 if [ $i -ge 500 ]; then : > \"$dir/timeout\"; : > \"$dir/go\"; break; fi\n\
         \x20 sleep 0.02; i=$((i+1))\n\
         done\n\
         exit 0\n",
        dir = dir.display()
    )
}

/// How the claimers of a round are released.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Barrier {
    /// Started one after another; the server's pre-receive hook holds every claim push until
    /// all of them are there.
    Server,
    /// All blocked before they start (each a shell waiting for a line on stdin), then
    /// released together; no hook.
    Start,
}

/// What the race rounds found.
#[derive(Default)]
struct Tally {
    rounds: usize,
    double_winners: usize,
    no_winner: usize,
    barrier_timeouts: usize,
    anomalies: Vec<String>,
}

const CLAIMERS: usize = 16;

/// The claim race of docs/refs.md, "Claims": 16 claimers (the real binary, each its own
/// workflow) over 3 clones of one bare remote, by path and through `git daemon`, submit the
/// same plan for the same PR at once, released by a barrier at the server or at the start.
/// Every round: one winner (exit 0), 15 losers (exit 4) each naming the winner, the remote's
/// claim names the winner, no loser's workflow left INITIALIZING (here or on the remote), no
/// loser's claim left in any clone and the winner's claim in its own. 50 rounds (half with
/// each barrier); `GIT_ORCHESTRATE_CLAIM_ROUNDS=N` runs N.
#[test]
fn sixteen_claimers_over_three_clones_never_have_two_winners() {
    let rounds: usize = std::env::var("GIT_ORCHESTRATE_CLAIM_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let first = TestRepo::new();
    let (dir, bare) = first.share();
    let base = dir.path().canonicalize().expect("canonical");
    let clones = [first, TestRepo::clone_of(&bare), TestRepo::clone_of(&bare)];
    for clone in &clones {
        quiet(clone, None);
    }
    quiet(&clones[0], Some(&bare));
    let barrier = base.join("barrier");
    std::fs::create_dir_all(&barrier).expect("barrier dir");
    let hook = bare.join("hooks/pre-receive");
    std::fs::write(&hook, barrier_hook(&barrier, CLAIMERS)).expect("write the hook");
    let chmod = std::process::Command::new("chmod")
        .args(["+x", hook.to_str().expect("a UTF-8 path")])
        .status()
        .expect("chmod");
    assert!(chmod.success());
    let daemon = GitDaemon::start(&clones[0], &base);
    let by_path = bare.display().to_string();
    let by_daemon = daemon.url("remote.git");
    let plan_file = base.join("plan.json");
    std::fs::write(&plan_file, plan()).expect("write the plan");

    let started = Instant::now();
    let mut tally = Tally::default();
    for round in 0..rounds {
        // Clone 0 by path, clone 1 through the daemon, clone 2 alternating.
        let urls = [
            &by_path,
            &by_daemon,
            if round % 2 == 0 { &by_daemon } else { &by_path },
        ];
        for (clone, url) in clones.iter().zip(urls) {
            clone.git(&["remote", "set-url", "origin", url]);
        }
        let kind = if round % 2 == 0 {
            Barrier::Server
        } else {
            Barrier::Start
        };
        race_round(
            &clones, &bare, &barrier, &plan_file, kind, round, &mut tally,
        );
        tally.rounds += 1;
    }
    let elapsed = started.elapsed();
    eprintln!(
        "claim race: {} rounds of {CLAIMERS} claimers over 3 clones, {} with two or more winners, \
         {} with none, {} barrier timeouts; {:.0} ms per round ({:.1} s)",
        tally.rounds,
        tally.double_winners,
        tally.no_winner,
        tally.barrier_timeouts,
        elapsed.as_secs_f64() * 1000.0 / rounds.max(1) as f64,
        elapsed.as_secs_f64()
    );
    assert!(
        tally.anomalies.is_empty(),
        "{} anomalies, the first:\n{}",
        tally.anomalies.len(),
        tally
            .anomalies
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
    assert_eq!(tally.double_winners, 0);
    assert_eq!(tally.barrier_timeouts, 0);
}

/// One round of the race, from a clean slate, its findings added to `tally`.
fn race_round(
    clones: &[TestRepo; 3],
    bare: &Path,
    barrier: &Path,
    plan_file: &Path,
    kind: Barrier,
    round: usize,
    tally: &mut Tally,
) {
    let probe = &clones[0];
    clear_orchestrator_refs(probe, Some(bare));
    for clone in clones {
        clear_orchestrator_refs(clone, None);
    }
    let _ = std::fs::remove_dir_all(barrier);
    std::fs::create_dir_all(barrier).expect("barrier dir");
    if kind == Barrier::Server {
        std::fs::write(barrier.join("on"), "").expect("barrier on");
    }
    let ready = barrier.join("ready");
    std::fs::create_dir_all(&ready).expect("ready dir");

    let names: Vec<String> = (0..CLAIMERS).map(|i| format!("c{i:02}")).collect();
    let mut children: Vec<(String, usize, Child)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let clone_index = i % clones.len();
        let clone = &clones[clone_index];
        let mut cmd = match kind {
            Barrier::Server => {
                clone.command(BIN, ["submit-work", "--summary", "the plan", "--plan", "-"])
            }
            Barrier::Start => {
                let mut cmd = clone.command(
                    "sh",
                    [
                        "-c",
                        ": > \"$1/$2\"; read _; exec git-orchestrate submit-work --summary 'the plan' \
                         --plan - < \"$3\"",
                        "sh",
                    ],
                );
                cmd.arg(&ready).arg(name).arg(plan_file);
                cmd
            }
        };
        let mut child = cmd
            .env("GIT_ORCHESTRATE_WORKFLOW", name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn a claimer");
        if kind == Barrier::Server {
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(plan().as_bytes()).expect("write the plan");
        }
        children.push((name.clone(), clone_index, child));
    }
    if kind == Barrier::Start {
        let start = Instant::now();
        while std::fs::read_dir(&ready).map_or(0, |d| d.count()) < CLAIMERS {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the claimers did not all start"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        // Release them together: one line to each, then each stdin closed.
        let mut pipes: Vec<_> = children
            .iter_mut()
            .map(|(_, _, c)| c.stdin.take().expect("stdin"))
            .collect();
        for pipe in &mut pipes {
            let _ = pipe.write_all(b"go\n");
        }
        drop(pipes);
    }
    let mut outcomes: Vec<(String, usize, Run)> = Vec::new();
    for (name, clone_index, child) in children {
        let out = Run::from(child.wait_with_output().expect("wait for a claimer"));
        outcomes.push((name, clone_index, out));
    }

    let mut problems = Vec::new();
    let winners: Vec<&(String, usize, Run)> =
        outcomes.iter().filter(|(_, _, o)| o.code == 0).collect();
    match winners.len() {
        1 => {}
        0 => tally.no_winner += 1,
        _ => tally.double_winners += 1,
    }
    if kind == Barrier::Server {
        let waited = std::fs::read_dir(barrier)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("waiting."))
                    .count()
            })
            .unwrap_or(0);
        if barrier.join("timeout").exists() {
            tally.barrier_timeouts += 1;
            problems.push(format!(
                "the server barrier timed out with {waited} pushes waiting"
            ));
        }
    }
    let holder = remote_holder(probe, bare);
    let winner = winners.first().map(|(name, _, _)| name.clone());
    if winners.len() != 1 || holder != winner {
        problems.push(format!(
            "winners {:?}, the remote's claim names {holder:?}",
            winners.iter().map(|(n, _, _)| n).collect::<Vec<_>>()
        ));
    }
    let winner = winner.unwrap_or_default();
    for (name, _, out) in &outcomes {
        if *name == winner {
            continue;
        }
        if out.code != 4 || !out.stderr.contains(&format!("workflow {winner}")) {
            problems.push(format!(
                "loser {name}: exit {}, stderr:\n{}",
                out.code, out.stderr
            ));
        }
    }
    // The remote: the claim and the winner's workflow, nothing of a loser's.
    let remote_workflows = bare_git(
        probe,
        bare,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/orchestrator/workflows/",
        ],
    );
    let expected_remote = format!("refs/orchestrator/workflows/{winner}\n");
    if remote_workflows != expected_remote {
        problems.push(format!("the remote's workflows:\n{remote_workflows}"));
    }
    let remote_claim = rev_in(probe, Some(bare), CLAIM);
    for (index, clone) in clones.iter().enumerate() {
        // Each workflow of this clone: the winner's accepted its plan, the others did not.
        let refs = clone.git(&[
            "for-each-ref",
            "--format=%(refname:lstrip=3)",
            "refs/orchestrator/workflows/",
        ]);
        let queries: String = refs
            .lines()
            .map(|w| format!("refs/orchestrator/workflows/{w}:state.json\n"))
            .collect();
        let states = if queries.is_empty() {
            String::new()
        } else {
            clone.git_with_stdin(&["cat-file", "--batch"], queries.as_bytes())
        };
        let statuses: Vec<String> = states
            .lines()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                Some(v["status"].as_str()?.to_string())
            })
            .collect();
        for (workflow, status) in refs.lines().zip(&statuses) {
            let expected = if workflow == winner {
                "CREATING_BRANCH"
            } else {
                "INITIALIZING"
            };
            if status != expected {
                problems.push(format!("clone {index}: workflow {workflow} is {status}"));
            }
        }
        // The claim: the winner's in its own clone, none elsewhere. A loser in a sibling
        // worktree can still drop the winner's local ref (rarely: once in hundreds of rounds);
        // the remote holds the claim, and the next `sync` puts the ref back (`adopt_own`,
        // checked below), so a missing one is taken up by a sync here, never a loser's.
        let mut local = rev_in(clone, None, CLAIM);
        let winner_here = outcomes.iter().any(|(n, i, _)| *n == winner && *i == index);
        let expected = if winner_here {
            remote_claim.clone()
        } else {
            None
        };
        let mut resynced = false;
        if winner_here && local.is_none() {
            resynced = true;
            let synced = clone
                .command(BIN, ["sync"])
                .env("GIT_ORCHESTRATE_WORKFLOW", &winner)
                .output()
                .expect("sync");
            eprintln!(
                "round {round}: the winner's local claim ref was gone; sync exited {:?}",
                synced.status.code()
            );
            local = rev_in(clone, None, CLAIM);
        }
        // After that sync the winner's claim is renewed: a new commit, the winner's still.
        let renewed = resynced
            && local.as_deref().is_some_and(|id| {
                trailer(clone, None, id, "Orchestrator-Claim-Workflow") == winner
            });
        if local != expected && !renewed {
            let named = local
                .as_deref()
                .map(|id| trailer(clone, None, id, "Orchestrator-Claim-Workflow"));
            problems.push(format!(
                "clone {index}: the local claim is {local:?} (workflow {named:?}), expected \
                 {expected:?} (the winner {winner} is {}here)",
                if winner_here { "" } else { "not " }
            ));
        }
    }
    if !problems.is_empty() {
        tally.anomalies.push(format!(
            "round {round} ({kind:?} barrier): {}",
            problems.join("\n")
        ));
    }
}

/// A fake "now" (2027-01-15 08:00:00 UTC) and the default ttl, 2 h, with the 5-minute margin.
const T: i64 = 1_800_000_000;
const TTL: i64 = 2 * 3600;
const SKEW: i64 = 5 * 60;
const SINCE_T: &str = "since 2027-01-15 08:00:00 +0000";

/// Clone A (the repository that made the remote) and clone B, both of one bare remote.
fn two_clones() -> (TestRepo, TestRepo, tempfile::TempDir, PathBuf) {
    let a = TestRepo::new();
    let (dir, bare) = a.share();
    let b = TestRepo::clone_of(&bare);
    (a, b, dir, bare)
}

/// The local claim ref on [`PR`] of `repo`, if any.
fn local_claim(repo: &TestRepo) -> Option<String> {
    rev_in(repo, None, CLAIM)
}

#[test]
fn a_claim_holds_through_its_margin_then_is_taken_over_and_its_holder_learns_on_sync() {
    let (a, b, _dir, bare) = two_clones();
    claim_at(&a, "wa", T, &plan()).expect(0);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
    assert_eq!(local_claim(&a), rev_in(&a, Some(&bare), CLAIM));

    // Past its expiry, within the margin: still A's, named with since when.
    let out = claim_at(&b, "wb", T + TTL + SKEW - 1, &plan());
    out.expect(4).warns(&format!(
        "the plan is not accepted: PR {PR} is claimed by workflow wa ("
    ));
    out.warns(SINCE_T);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
    assert_eq!(local_claim(&b), None, "a refused claim leaves no ref");
    let state = b.git(&["show", "refs/orchestrator/workflows/wb:state.json"]);
    assert!(state.contains("\"INITIALIZING\""), "{state}");

    // One second past the margin: B takes it over.
    let later = T + TTL + SKEW + 1;
    claim_at(&b, "wb", later, &plan()).expect(0);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wb"));
    assert_eq!(local_claim(&b), rev_in(&b, Some(&bare), CLAIM));

    // A's sync learns it lost the claim and drops its local ref.
    let out = run_as(
        &a,
        "wa",
        &[("GIT_ORCHESTRATE_NOW", later.to_string())],
        &["sync"],
    );
    out.expect(0)
        .says(&format!("claims lost: {PR} (now held by workflow wb ("));
    assert_eq!(local_claim(&a), None);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wb"));
}

#[test]
fn sync_renews_a_claim_past_its_first_expiry() {
    let (a, b, _dir, bare) = two_clones();
    claim_at(&a, "wa", T, &plan()).expect(0);
    let first = rev_in(&a, Some(&bare), CLAIM).unwrap();
    assert_eq!(
        trailer(&a, Some(&bare), &first, "Orchestrator-Claim-Expires"),
        (T + TTL).to_string()
    );
    let out = run_as(
        &a,
        "wa",
        &[("GIT_ORCHESTRATE_NOW", (T + 3600).to_string())],
        &["sync"],
    );
    out.expect(0).says(&format!("claims renewed: {PR}"));
    let renewed = rev_in(&a, Some(&bare), CLAIM).unwrap();
    assert_ne!(renewed, first, "a renewal is a new commit");
    assert_eq!(local_claim(&a).as_deref(), Some(renewed.as_str()));
    assert_eq!(
        trailer(&a, Some(&bare), &renewed, "Orchestrator-Claim-Expires"),
        (T + 3600 + TTL).to_string()
    );
    assert_eq!(
        trailer(&a, Some(&bare), &renewed, "Orchestrator-Claim-Since"),
        T.to_string(),
        "since is kept across renewals"
    );
    // Where the first claim would have lapsed, the renewed one holds.
    claim_at(&b, "wb", T + TTL + 6 * 60, &plan())
        .expect(4)
        .warns("is claimed by workflow wa (")
        .warns(SINCE_T);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
}

#[test]
fn the_merge_releases_the_claim() {
    use crate::oracle::{MUL_PLAN, finalized, mark_done_and_merge};
    let a = TestRepo::empty();
    a.write("calc.sh", "add() { echo $(($1 + $2)); }\n");
    a.write(
        "tests/test_add.sh",
        ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ] || exit 1\n",
    );
    a.write(
        "run_tests.sh",
        "for t in tests/test_*.sh; do sh \"$t\" || exit 1; done\n",
    );
    a.write("docs/plan.md", "# Plan\n## PR 1: feat: Multiply\n");
    a.write(".orchestrate.toml", crate::oracle::CALC_CONFIG);
    a.commit_all("calculator");
    let (_dir, bare) = a.share();
    let b = TestRepo::clone_of(&bare);
    let key = "refs/orchestrator/claims/pr-1-feat-multiply";
    a.submit_plan(MUL_PLAN).expect(0);
    a.run(&["get-task"]).expect(0);
    assert!(rev_in(&a, Some(&bare), key).is_some());
    let mut taken = b.command(BIN, ["submit-work", "--summary", "p", "--plan", "-"]);
    taken.env("GIT_ORCHESTRATE_WORKFLOW", "wb");
    let refused = run_with(&mut taken, MUL_PLAN);
    refused.expect(4).warns("is claimed by workflow main (");

    finalized(&a);
    mark_done_and_merge(&a).expect(0);
    assert_eq!(rev_in(&a, Some(&bare), key), None, "the merge released it");
    assert_eq!(rev_in(&a, None, key), None);
    // B may plan it as far as claims go: what refuses it now is that the PR is done on the
    // remote's main, not a claim.
    let mut again = b.command(BIN, ["submit-work", "--summary", "p", "--plan", "-"]);
    again.env("GIT_ORCHESTRATE_WORKFLOW", "wb");
    let out = run_with(&mut again, MUL_PLAN);
    out.expect(4)
        .warns("is done on origin's main: it was merged already");
    assert!(!out.stderr.contains("claimed"), "{}", out.stderr);
    assert_eq!(rev_in(&b, Some(&bare), key), None);
}

/// Runs `cmd` with `input` on stdin.
fn run_with(cmd: &mut std::process::Command, input: &str) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    Run::from(child.wait_with_output().expect("wait"))
}

#[test]
fn claim_release_and_steal_are_a_humans_and_work_for_one() {
    let (a, b, _dir, bare) = two_clones();
    claim_at(&a, "wa", T, &plan()).expect(0);
    let held = rev_in(&a, Some(&bare), CLAIM);
    for args in [["claim", "steal", PR], ["claim", "release", PR]] {
        run_as(&b, "wb", &[], &args)
            .expect(4)
            .warns("is a human's answer, and stdin is not a terminal");
    }
    assert_eq!(rev_in(&a, Some(&bare), CLAIM), held, "nothing moved");

    // A human steals it for B's workflow (the key or the heading's text both name it).
    let human = [
        ("GIT_ORCHESTRATE_HUMAN", "1".to_string()),
        ("GIT_ORCHESTRATE_NOW", (T + 30).to_string()),
    ];
    run_as(
        &b,
        "wb",
        &human,
        &["claim", "steal", "PR 1: feat: Add numbers"],
    )
    .expect(0)
    .says(&format!("claim on {PR} taken on origin for workflow wb ("))
    .says("held before by workflow wa (");
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wb"));
    assert_eq!(local_claim(&b), rev_in(&b, Some(&bare), CLAIM));
    // A third clone is refused now, naming B's workflow.
    let c = TestRepo::clone_of(&bare);
    claim_at(&c, "wc", T + 60, &plan())
        .expect(4)
        .warns("is claimed by workflow wb (");

    // And releases it: nobody holds it, and A may claim again.
    run_as(&b, "wb", &human, &["claim", "release", PR])
        .expect(0)
        .says(&format!(
            "claim on {PR} released on origin (held by workflow wb ("
        ));
    assert_eq!(rev_in(&a, Some(&bare), CLAIM), None);
    assert_eq!(local_claim(&b), None);
    run_as(&b, "wb", &human, &["claim", "release", PR])
        .expect(2)
        .warns(&format!("nobody claims PR {PR}"));
    claim_at(&c, "wc", T + 120, &plan()).expect(0);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wc"));

    // A key that would climb out of the claims namespace is only a slug.
    run_as(&b, "wb", &human, &["claim", "steal", "../../x"])
        .expect(0)
        .says("claim on x taken on origin");
    assert!(rev_in(&b, Some(&bare), "refs/orchestrator/claims/x").is_some());
    assert_eq!(rev_in(&b, Some(&bare), "refs/x"), None);
}

#[test]
fn two_claimers_of_one_expired_claim_at_once_have_one_winner() {
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    let others = [TestRepo::clone_of(&bare), TestRepo::clone_of(&bare)];
    for round in 0..4 {
        let start = T + i64::from(round) * 10 * TTL;
        clear_orchestrator_refs(&a, Some(&bare));
        for repo in std::iter::once(&a).chain(&others) {
            clear_orchestrator_refs(repo, None);
        }
        claim_at(&a, "wa", start, &plan()).expect(0);
        let expired = start + TTL + SKEW + 1;
        let outs: Vec<Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = others
                .iter()
                .enumerate()
                .map(|(i, repo)| {
                    let name = format!("w{i}");
                    scope.spawn(move || claim_at(repo, &name, expired, &plan()))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let codes: Vec<i32> = outs.iter().map(|o| o.code).collect();
        let winner = remote_holder(&a, &bare).expect("a claim");
        let won = usize::from(winner.trim_start_matches('w').parse::<u8>().unwrap());
        assert_eq!(
            codes.iter().filter(|c| **c == 0).count(),
            1,
            "round {round}: {codes:?}\n{}\n{}",
            outs[0].stderr,
            outs[1].stderr
        );
        assert_eq!(codes[won], 0, "the remote names the winner");
        outs[1 - won]
            .expect(4)
            .warns(&format!("is claimed by workflow {winner} ("));
        assert_eq!(local_claim(&others[1 - won]), None);
        assert_eq!(local_claim(&others[won]), rev_in(&a, Some(&bare), CLAIM));
    }
}

#[test]
fn worktrees_of_a_clone_without_a_remote_claim_through_its_local_ref() {
    let repo = TestRepo::new();
    let beside = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for name in ["w1", "w2", "w3"] {
        let path = beside.path().join(name);
        repo.run(&["worktree", "add", name, path.to_str().unwrap()])
            .expect(0);
        paths.push(path);
    }
    // All three at once: one wins, the others name it.
    let outs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = paths
            .iter()
            .map(|path| {
                let repo = &repo;
                scope.spawn(move || {
                    let mut cmd =
                        repo.command(BIN, ["submit-work", "--summary", "p", "--plan", "-"]);
                    cmd.current_dir(path)
                        .env("GIT_ORCHESTRATE_NOW", T.to_string());
                    run_with(&mut cmd, &plan())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<usize> = (0..3).filter(|i| outs[*i].code == 0).collect();
    assert_eq!(
        winners.len(),
        1,
        "{:?}",
        outs.iter().map(|o| &o.stderr).collect::<Vec<_>>()
    );
    let winner = format!("w{}", winners[0] + 1);
    for (i, out) in outs.iter().enumerate() {
        if i != winners[0] {
            out.expect(4).warns(&format!("workflow {winner}"));
        }
    }
    let local = local_claim(&repo).expect("the local claim");
    assert_eq!(
        trailer(&repo, None, &local, "Orchestrator-Claim-Workflow"),
        winner
    );
    let listed = repo.run(&["claim", "list"]);
    listed
        .expect(0)
        .says(&format!("local    {PR}: workflow {winner} ("));
}

/// Makes a commit of the empty tree with `message` in the bare repository and points the
/// claim ref on [`PR`] at it (or at `object` when given); returns what the ref holds.
fn plant(a: &TestRepo, bare: &Path, message: Option<&str>, object: Option<&str>) -> String {
    let git_dir = bare.to_str().expect("a UTF-8 path");
    let id = match (message, object) {
        (_, Some(object)) => object.to_string(),
        (Some(message), None) => {
            let tree = a.git_with_stdin(&["--git-dir", git_dir, "mktree"], b"");
            a.git(&[
                "-c",
                "user.name=Mallory",
                "-c",
                "user.email=m@example.invalid",
                "--git-dir",
                git_dir,
                "commit-tree",
                tree.trim(),
                "-m",
                message,
            ])
            .trim()
            .to_string()
        }
        (None, None) => unreachable!("a message or an object"),
    };
    a.git(&["--git-dir", git_dir, "update-ref", CLAIM, &id]);
    id
}

/// A claim's message as git-orchestrate writes it, with the fields given.
fn claim_message(workflow: &str, host: &str, user: &str, since: i64, expires: i64) -> String {
    format!(
        "claim {PR}\n\nOrchestrator-Claim: {PR}\nOrchestrator-Claim-Workflow: {workflow}\n\
         Orchestrator-Claim-Host: {host}\nOrchestrator-Claim-User: {user}\n\
         Orchestrator-Claim-Since: {since}\nOrchestrator-Claim-Expires: {expires}\n\
         Orchestrator-Claim-Nonce: 00ff\n"
    )
}

/// Whatever a remote holds under the claims namespace, nothing panics and the claimer judges
/// it by the rule: what is no claim of ours is taken over (leased against it); a claim is
/// held until its expiry and the margin, however far, and a human may still steal it; a
/// holder's host and user are printed as one plain line.
#[test]
fn junk_under_the_claims_namespace_is_judged_by_the_rule_and_never_panics() {
    let (a, b, _dir, bare) = two_clones();
    let git_dir = bare.to_str().unwrap();
    let fresh = |repo: &TestRepo| clear_orchestrator_refs(repo, None);
    let no_panic = |out: &Run| {
        assert!(!out.stderr.contains("panicked"), "a panic:\n{}", out.stderr);
    };

    // Not claims of ours: a blob, a commit whose message only looks like one, a claim with
    // a repeated field, one too long to read, a claim under another PR's ref. Each is taken.
    let blob = a.git_with_stdin(
        &["--git-dir", git_dir, "hash-object", "-w", "--stdin"],
        b"junk",
    );
    let forged = "claim x\n\nOrchestrator-Claim: x\nOrchestrator-Claim-Workflow: evil\n";
    let repeated = format!(
        "{}Orchestrator-Claim-Workflow: other\n",
        claim_message("evil", "h", "u", T, T + 10 * TTL)
    );
    let long = format!(
        "{}{}",
        claim_message("evil", "h", "u", T, T + 10 * TTL),
        "x".repeat(5000)
    );
    let cases: [(&str, Option<&str>, Option<&str>); 4] = [
        ("a blob", None, Some(blob.trim())),
        ("a forged message", Some(forged), None),
        ("a repeated field", Some(&repeated), None),
        ("an unreadably long message", Some(&long), None),
    ];
    for (what, message, object) in cases {
        clear_orchestrator_refs(&a, Some(&bare));
        let junk = plant(&a, &bare, message, object);
        fresh(&b);
        let listed = b.run(&["sync"]);
        no_panic(&listed);
        let listed = b.run(&["claim", "list"]);
        no_panic(&listed);
        listed.expect(0);
        let out = claim_at(&b, "wb", T, &plan());
        no_panic(&out);
        out.expect(0);
        assert_eq!(
            remote_holder(&a, &bare).as_deref(),
            Some("wb"),
            "{what}: taken over"
        );
        assert_ne!(rev_in(&a, Some(&bare), CLAIM), Some(junk), "{what}");
    }

    // A claim whose host and user carry control characters: held, and named in one line.
    clear_orchestrator_refs(&a, Some(&bare));
    plant(
        &a,
        &bare,
        Some(&claim_message(
            "evil",
            "box\u{1b}[31mred\u{7}",
            "bob\u{8}\u{8}\u{8}root",
            T,
            T + TTL,
        )),
        None,
    );
    fresh(&b);
    b.run(&["sync"]).expect(0);
    for out in [
        claim_at(&b, "wb", T + 60, &plan()),
        b.run(&["claim", "list"]),
        b.run(&["claim", "list", "--json"]),
    ] {
        no_panic(&out);
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(text.contains("evil"), "{text}");
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a control character is printed: {text:?}"
        );
    }
    claim_at(&b, "wb", T + 60, &plan()).expect(4);

    // Absurd times: held "forever" against agents, listed without a panic, and a human
    // still steals it.
    for (since, expires) in [(T, i64::MAX), (i64::MIN, i64::MAX), (i64::MIN, i64::MIN)] {
        clear_orchestrator_refs(&a, Some(&bare));
        plant(
            &a,
            &bare,
            Some(&claim_message("evil", "h", "u", since, expires)),
            None,
        );
        fresh(&b);
        b.run(&["sync"]).expect(0);
        for args in [
            &["claim", "list"][..],
            &["claim", "list", "--json"],
            &["get-task"],
        ] {
            no_panic(&b.run(args));
        }
        let out = claim_at(&b, "wb", T + 100 * TTL, &plan());
        no_panic(&out);
        if expires == i64::MAX {
            out.expect(4).warns("is claimed by workflow evil (u@h)");
            let stolen = run_as(
                &b,
                "wb",
                &[("GIT_ORCHESTRATE_HUMAN", "1".to_string())],
                &["claim", "steal", PR],
            );
            no_panic(&stolen);
            stolen.expect(0);
            assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wb"));
        } else {
            out.expect(0);
        }
    }
}

/// A master-plan heading meant to climb out of the claims namespace keys its PR by a plain
/// slug; so does a heading in another script.
#[test]
fn a_hostile_heading_keys_its_pr_by_a_plain_slug() {
    for (heading, key) in [
        (
            "PR 1: ../../refs/heads/main\u{1b}[31m",
            "pr-1-refs-heads-main-31m",
        ),
        ("PR 2: Ωmega ümlaut", "pr-2-mega-mlaut-"),
    ] {
        let repo = TestRepo::new();
        let (_dir, bare) = repo.share();
        repo.write("docs/plan.md", &format!("# Plan\n## {heading}\n"));
        repo.commit_all("the master plan");
        repo.git(&["push", "--quiet", "origin", "main"]);
        let title = crate::support::one_task_plan(
            &heading
                .split_once(": ")
                .unwrap()
                .1
                .replace('\u{1b}', "\\u001b"),
            "x.sh",
        );
        let out = repo.submit_plan(&title);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        let refs = repo.git(&[
            "--git-dir",
            bare.to_str().unwrap(),
            "for-each-ref",
            "--format=%(refname)",
            "refs/orchestrator/claims/",
        ]);
        if out.code == 0 {
            assert!(
                refs.starts_with(&format!("refs/orchestrator/claims/{key}")),
                "{heading:?}: {refs}"
            );
        } else {
            // A title the plan rules refuse claims nothing.
            assert_eq!(refs, "", "{heading:?}: {}", out.stderr);
        }
        assert_eq!(
            repo.git(&["for-each-ref", "refs/heads/"]).lines().count(),
            1
        );
    }
}

/// A claim is not dodged by retyping the PR's title: one that differs from the heading only
/// in case, spacing or punctuation is keyed by the heading. A title that names no heading at
/// all is keyed by itself (the master plan does not bind plans to its headings today).
#[test]
fn a_retyped_title_is_keyed_by_the_heading_it_names() {
    let (a, b, _dir, bare) = two_clones();
    claim_at(&a, "wa", T, &plan()).expect(0);
    for (i, title) in [
        "feat:  add numbers.",
        "Feat - Add Numbers",
        "FEAT: add_numbers",
    ]
    .iter()
    .enumerate()
    {
        claim_at(
            &b,
            &format!("w{i}"),
            T + 60,
            &one_task_plan(title, "add.sh"),
        )
        .expect(4)
        .warns(&format!("PR {PR} is claimed by workflow wa ("));
    }
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
    claim_at(
        &b,
        "wx",
        T + 60,
        &one_task_plan("feat: Sum numbers", "add.sh"),
    )
    .expect(0);
    assert!(rev_in(&b, Some(&bare), "refs/orchestrator/claims/feat-sum-numbers").is_some());
}

/// A PR planned under a title no heading names is claimed under that title's key, so it
/// cannot close a heading another workflow may hold: marking it [DONE] by hand is refused,
/// and marking its own (none) is what the master plan allows.
#[test]
fn a_pr_planned_under_another_title_cannot_mark_a_heading_done() {
    let repo = TestRepo::new();
    do_the_steps(&repo, "feat: Sum numbers", "add.txt");
    repo.run(&["get-task"]).expect(0);
    repo.run(&["submit-work", "-s", "squashed", "--squash"])
        .expect(0);
    let squashed = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    repo.write(
        "docs/plan.md",
        &format!(
            "# Plan\n## PR 1: feat: Add numbers [DONE] {}\n",
            squashed.trim()
        ),
    );
    repo.commit_all("docs: PR 1 done");
    let out = repo.run(&["submit-work", "-s", "plan updated"]);
    out.expect(1);
    out.says(
        "FAILURE: the commit closes \"PR 1: feat: Add numbers\" in docs/plan.md, which is not this PR \
         (\"feat: Sum numbers\"): a PR marks only its own heading done",
    );
    assert_eq!(repo.status(), "FINALIZE_COMPLETE");
    // --mark-done finds no heading of its own to mark, and says so.
    repo.git(&["reset", "--quiet", "--hard", "HEAD~1"]);
    let out = repo.run(&["submit-work", "-s", "plan updated", "--mark-done"]);
    out.expect(4);
    out.warns("docs/plan.md has no open PR heading titled \"feat: Sum numbers\" to mark [DONE]");
}

/// Without a remote nothing syncs: the workflow's own writes renew its claim once half its
/// ttl has passed, so a PR that takes longer than the ttl is not taken over.
#[test]
fn without_a_remote_the_workflows_writes_renew_its_claim() {
    let repo = TestRepo::new();
    claim_at(&repo, "wa", T, &plan()).expect(0);
    let expires = |repo: &TestRepo| -> i64 {
        let json = repo.run(&["claim", "list", "--json"]).expect(0).json();
        json["claims"][0]["claim"]["expires"]
            .as_i64()
            .expect("expires")
    };
    assert_eq!(expires(&repo), T + 2 * 3600);
    // Before half the ttl: nothing renewed.
    let get_task = |now: i64| {
        let mut cmd = repo.command(BIN, ["get-task"]);
        cmd.env("GIT_ORCHESTRATE_WORKFLOW", "wa")
            .env("GIT_ORCHESTRATE_NOW", now.to_string());
        feed(cmd, "")
    };
    get_task(T + 1800).expect(0);
    assert_eq!(expires(&repo), T + 2 * 3600);
    // Past it, the next transition renews it (its since kept).
    repo.write("x.txt", "x\n");
    let mut cmd = repo.command(
        BIN,
        [
            "submit-work",
            "-s",
            "red",
            "--test-command",
            "test -e nothing",
        ],
    );
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", "wa")
        .env("GIT_ORCHESTRATE_NOW", (T + 5400).to_string());
    feed(cmd, "");
    assert_eq!(expires(&repo), T + 5400 + 2 * 3600);
    let json = repo.run(&["claim", "list", "--json"]).expect(0).json();
    assert_eq!(json["claims"][0]["claim"]["since"], T);
}

/// A claim the remote holds for a workflow of this clone, whose local ref is gone (a loser in
/// a sibling worktree can drop it), is taken back by the next `sync` and renewed there.
#[test]
fn sync_takes_back_a_claim_the_remote_holds_for_this_clone() {
    let repo = TestRepo::new();
    let (_dir, bare) = repo.share();
    claim_at(&repo, "wa", T, &plan()).expect(0);
    let name = format!("refs/orchestrator/claims/{PR}");
    let taken = repo.git(&["rev-parse", &name]);
    repo.git(&["update-ref", "-d", &name]);
    let mut cmd = repo.command(BIN, ["sync"]);
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", "wa")
        .env("GIT_ORCHESTRATE_NOW", (T + 60).to_string());
    let out = feed(cmd, "");
    out.expect(0);
    out.says(&format!("claims renewed: {PR}"));
    let here = repo.git(&["rev-parse", &name]);
    assert_ne!(here, taken, "renewed: a new commit");
    assert_eq!(
        trailer(&repo, None, here.trim(), "Orchestrator-Claim-Workflow"),
        "wa"
    );
    let theirs = repo.git(&["--git-dir", bare.to_str().unwrap(), "rev-parse", &name]);
    assert_eq!(theirs, here, "the remote holds the renewed claim");
}

/// A second clone of the same user on the same host holds none of the first's claims: its
/// `sync` leaves them as they are (the holder's crash still lets them lapse), and the holder's
/// own `sync` renews them as its own.
#[test]
fn a_second_clones_sync_leaves_anothers_claim_as_it_is() {
    let (a, b, _dir, bare) = two_clones();
    claim_at(&a, "wa", T, &plan()).expect(0);
    let first = rev_in(&a, Some(&bare), CLAIM).expect("the remote holds A's claim");
    // B knows A's workflow (its sync brings it in), and syncs for a workflow of its own.
    let out = run_as(
        &b,
        "wb",
        &[("GIT_ORCHESTRATE_NOW", (T + 3600).to_string())],
        &["sync"],
    );
    out.expect(0);
    assert!(!out.stdout.contains("claims renewed"), "{}", out.stdout);
    assert_eq!(
        rev_in(&a, Some(&bare), CLAIM).as_deref(),
        Some(first.as_str()),
        "B's sync left A's claim on the remote as it was"
    );
    assert_eq!(
        trailer(&a, Some(&bare), &first, "Orchestrator-Claim-Expires"),
        (T + TTL).to_string()
    );
    assert_eq!(local_claim(&b), None, "B took no ref for A's claim");
    assert!(
        b.git(&["rev-parse", "--verify", "refs/orchestrator/workflows/wa"])
            .len()
            >= 40,
        "B has A's workflow, so the test exercised the claim's ownership"
    );
    // A's own sync renews it as A's, and is not told it lost it.
    let out = run_as(
        &a,
        "wa",
        &[("GIT_ORCHESTRATE_NOW", (T + 3600).to_string())],
        &["sync"],
    );
    out.expect(0).says(&format!("claims renewed: {PR}"));
    assert!(!out.stdout.contains("claims lost"), "{}", out.stdout);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
}

/// Without `$USER` or `$LOGNAME`, a claim names its holder by the committer's email.
#[test]
fn a_claims_holder_without_user_is_named_by_email() {
    let (a, _b, _dir, bare) = two_clones();
    let mut cmd = a.command(BIN, ["submit-work", "--summary", "the plan", "--plan", "-"]);
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", "wa")
        .env("GIT_ORCHESTRATE_NOW", T.to_string())
        .env_remove("USER")
        .env_remove("LOGNAME");
    feed(cmd, &plan()).expect(0);
    let id = rev_in(&a, Some(&bare), CLAIM).expect("claimed");
    assert_eq!(
        trailer(&a, Some(&bare), &id, "Orchestrator-Claim-User"),
        "test@example.invalid"
    );
    let host = trailer(&a, Some(&bare), &id, "Orchestrator-Claim-Host");
    assert!(!host.is_empty() && host != "unknown", "{host}");
    let list = a.run(&["claim", "list"]);
    list.expect(0);
    assert!(!list.stdout.contains("unknown@"), "{}", list.stdout);
}

/// A plan acceptance SIGKILLed right after its atomic push of claim and transition (the
/// crash-injection point `plan-pushed`), many times over, each followed by the agent's next
/// command (`get-task`, or the plan submitted again): that command adopts the transition the
/// remote holds, so local and remote agree, `sync` finds nothing diverged and `audit` nothing
/// forged.
#[test]
fn a_plan_acceptance_killed_after_its_push_is_adopted_by_the_next_command() {
    const WORKFLOW_REF: &str = "refs/orchestrator/workflows/wa";
    const KILLS: usize = 8;
    for round in 0..KILLS {
        let resubmit = round % 2 == 1;
        let repo = TestRepo::new();
        let (_dir, bare) = repo.share();
        let mut cmd = repo.command(BIN, ["submit-work", "--summary", "the plan", "--plan", "-"]);
        cmd.env("GIT_ORCHESTRATE_WORKFLOW", "wa")
            .env("GIT_ORCHESTRATE_NOW", T.to_string())
            .env("GIT_ORCHESTRATE_CRASH_AT", "plan-pushed");
        let killed = feed(cmd, &plan());
        assert_eq!(killed.code, -1, "killed by SIGKILL: {}", killed.stderr);
        let pushed = rev_in(&repo, Some(&bare), WORKFLOW_REF).expect("the push landed");
        let local = rev_in(&repo, None, WORKFLOW_REF).expect("the workflow exists here");
        assert_eq!(
            repo.git(&["rev-parse", &format!("{pushed}~1")]).trim(),
            local,
            "round {round}: the kill left the remote one transition ahead"
        );

        let out = if resubmit {
            claim_at(&repo, "wa", T + 1, &plan())
        } else {
            run_as(
                &repo,
                "wa",
                &[("GIT_ORCHESTRATE_NOW", (T + 1).to_string())],
                &["get-task"],
            )
        };
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(!all.contains("DIVERGED"), "round {round}: {all}");
        if resubmit {
            // The plan is accepted already (the remote's transition, adopted): nothing new.
            out.expect(4).warns("is not accepted in state");
            assert_eq!(
                rev_in(&repo, None, WORKFLOW_REF).as_deref(),
                Some(pushed.as_str())
            );
        } else {
            out.expect(0);
            let here = rev_in(&repo, None, WORKFLOW_REF).unwrap();
            assert_eq!(
                repo.git(&["merge-base", "--is-ancestor", &pushed, &here]),
                "",
                "round {round}: get-task built on the adopted transition"
            );
        }

        let sync = run_as(
            &repo,
            "wa",
            &[("GIT_ORCHESTRATE_NOW", (T + 2).to_string())],
            &["sync"],
        );
        sync.expect(0);
        let local = rev_in(&repo, None, WORKFLOW_REF).unwrap();
        let remote = rev_in(&repo, Some(&bare), WORKFLOW_REF).unwrap();
        assert_eq!(local, remote, "round {round}: local == remote");
        run_as(&repo, "wa", &[], &["audit"]).expect(0);
        assert_eq!(local_claim(&repo), rev_in(&repo, Some(&bare), CLAIM));
    }
    eprintln!("{KILLS} kills right after the plan's push: each adopted by the next command");
}

/// A plan acceptance killed while git's lock on a claim ref stood (this clone's claim, or its
/// copy of the remote's) leaves the lock: every later acceptance lost to it as to a racing
/// writer, a hundred times, then blamed "other processes" and named no file. The lock is
/// named now, with the file to remove, as a workflow ref's is; once it is removed, the next
/// acceptance takes the free claim, or is told who holds it. (A lock is per ref file only in
/// the files backend: the test keeps its refs there.)
#[test]
fn a_claim_lock_left_by_a_killed_acceptance_is_named_and_the_next_acceptance_decides() {
    // Asked for only where another backend is (the reftable run): the oldest git the suite
    // runs with, 2.39, knows files alone and no `--ref-format`.
    if std::env::var("GIT_ORCHESTRATE_TEST_REF_FORMAT").is_ok_and(|format| format != "files") {
        use_ref_format("files");
    }
    let plant = |repo: &TestRepo, locked: &str| {
        let lock = repo.dir().join(".git").join(format!("{locked}.lock"));
        std::fs::create_dir_all(lock.parent().expect("a parent")).expect("the claims' dir");
        std::fs::write(&lock, "").expect("the lock a kill left");
        lock
    };
    let named = |out: &Run, locked: &str, lock: &Path| {
        out.expect(5)
            .warns(&format!(
                "the claim ref {locked} is locked by {}",
                lock.display()
            ))
            .warns(&format!("delete the lock: rm {}", lock.display()));
    };

    // This clone's claim: the free PR is claimed once the lock is gone.
    let (a, _b, _dir, bare) = two_clones();
    let lock = plant(&a, CLAIM);
    named(&claim_at(&a, "wa", T, &plan()), CLAIM, &lock);
    assert_eq!(remote_holder(&a, &bare), None, "nothing was pushed");
    std::fs::remove_file(&lock).expect("rm the lock");
    claim_at(&a, "wa", T + 1, &plan()).expect(0);
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wa"));
    assert_eq!(local_claim(&a), rev_in(&a, Some(&bare), CLAIM));
    run_as(&a, "wa", &[], &["audit"]).expect(0);

    // The copy of the remote's claim, which an acceptance updates to what it reads there:
    // once the lock is gone, the holder is named.
    let (a, b, _dir, bare) = two_clones();
    claim_at(&b, "wb", T, &plan()).expect(0);
    let tracking = format!("refs/orchestrator/remotes/origin/claims/{PR}");
    let lock = plant(&a, &tracking);
    named(&claim_at(&a, "wa", T + 1, &plan()), &tracking, &lock);
    std::fs::remove_file(&lock).expect("rm the lock");
    claim_at(&a, "wa", T + 2, &plan()).expect(4).warns(&format!(
        "the plan is not accepted: PR {PR} is claimed by workflow wb ("
    ));
    assert_eq!(remote_holder(&a, &bare).as_deref(), Some("wb"));
    run_as(&a, "wa", &[], &["audit"]).expect(0);
}

/// Two clones accept a plan for the same PR at the same moment, through a real `git daemon`
/// whose bare repository has the product's own server hook (which judges every claim it is
/// pushed): several rounds, one PR each, both claimers released together. Each round one
/// wins (exit 0) and holds the claim on the server, the other is refused naming the winner
/// (exit 4) and is left INITIALIZING with no claim of its own; both audit clean.
#[test]
fn two_clones_racing_for_one_claim_through_the_server_hook_have_one_winner() {
    use std::io::Write as _;
    const PRS: [&str; 3] = ["feat: One", "feat: Two", "feat: Three"];
    let origin = TestRepo::with_config(CONFIG);
    origin.write(
        "docs/plan.md",
        "# Plan\n\n## PR 1: feat: One\n\nx\n\n## PR 2: feat: Two\n\nx\n\n## PR 3: feat: Three\n\nx\n",
    );
    origin.commit_all("three PRs");
    let server = crate::landing::Server::start(&origin);
    origin.git(&["remote", "add", "origin", &server.url()]);
    origin
        .git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
    let clones = [
        TestRepo::clone_of(Path::new(&server.url())),
        TestRepo::clone_of(Path::new(&server.url())),
    ];
    let plans = tempfile::tempdir().expect("temp dir");
    for (round, title) in PRS.iter().enumerate() {
        let plan = plans.path().join(format!("plan-{round}.json"));
        std::fs::write(&plan, one_task_plan(title, "x.txt")).expect("write the plan");
        let workflows = [format!("a{round}"), format!("b{round}")];
        // Each claimer blocked on its stdin until both are started, then released together.
        let mut racers: Vec<Child> = clones
            .iter()
            .zip(&workflows)
            .map(|(clone, workflow)| {
                clone
                    .command(
                        "sh",
                        [
                            "-c",
                            "read go && exec \"$0\" --workflow \"$1\" submit-work --summary plan --plan \"$2\"",
                            BIN,
                            workflow,
                            plan.to_str().expect("a UTF-8 path"),
                        ],
                    )
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start a claimer")
            })
            .collect();
        for racer in &mut racers {
            racer
                .stdin
                .take()
                .expect("its stdin")
                .write_all(b"go\n")
                .expect("release it");
        }
        let outs: Vec<Run> = racers
            .into_iter()
            .map(|racer| Run::from(racer.wait_with_output().expect("a claimer")))
            .collect();
        let winner = outs
            .iter()
            .position(|out| out.code == 0)
            .unwrap_or_else(|| panic!("round {round}: no winner"));
        let loser = 1 - winner;
        let slug = format!(
            "pr-{}-{}",
            round + 1,
            title.to_lowercase().replace(": ", "-").replace(' ', "-")
        );
        outs[loser].expect(4).warns(&format!(
            "the plan is not accepted: PR {slug} is claimed by workflow {} (",
            workflows[winner]
        ));
        let claim = format!("refs/orchestrator/claims/{slug}");
        let held = rev_in(&origin, Some(&server.bare), &claim).expect("the server's claim");
        assert_eq!(
            trailer(
                &origin,
                Some(&server.bare),
                &held,
                "Orchestrator-Claim-Workflow"
            ),
            workflows[winner],
            "round {round}"
        );
        assert_eq!(rev_in(&clones[winner], None, &claim), Some(held));
        assert_eq!(rev_in(&clones[loser], None, &claim), None, "round {round}");
        let state = |clone: &TestRepo, workflow: &str| {
            run_as(clone, workflow, &[], &["status", "--json"])
                .expect(0)
                .json()["state"]
                .clone()
        };
        assert_eq!(
            state(&clones[winner], &workflows[winner]),
            "CREATING_BRANCH"
        );
        assert_eq!(state(&clones[loser], &workflows[loser]), "INITIALIZING");
        for (clone, workflow) in clones.iter().zip(&workflows) {
            run_as(clone, workflow, &[], &["audit"]).expect(0);
        }
    }
}
