//! Claims on PRs (docs/refs.md, "Claims"): the real binary racing for one PR from several
//! clones of one bare remote, served by path and by a real `git daemon`; expiry, takeover,
//! renewal and release on a fake clock; a human's `claim release|steal`; what a hostile
//! remote may hold under the claims namespace; and what an agent might try to dodge a claim.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use crate::support::*;

/// The master plan of [`TestRepo::new`] has one PR, `## PR 1: feat: Add numbers`.
#[allow(dead_code)]
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
#[allow(dead_code)]
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
#[allow(dead_code)]
fn claim_at(repo: &TestRepo, workflow: &str, now: i64, plan_text: &str) -> Run {
    let mut child = repo
        .command(BIN, ["submit-work", "--summary", "the plan", "--plan", "-"])
        .env("GIT_ORCHESTRATE_WORKFLOW", workflow)
        .env("GIT_ORCHESTRATE_NOW", now.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn git-orchestrate");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(plan_text.as_bytes())
        .expect("write the plan");
    Run::from(child.wait_with_output().expect("wait"))
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
        // The claim: the winner's in its own clone, none elsewhere.
        let local = rev_in(clone, None, CLAIM);
        let winner_here = outcomes.iter().any(|(n, i, _)| *n == winner && *i == index);
        let expected = if winner_here {
            remote_claim.clone()
        } else {
            None
        };
        if local != expected {
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
