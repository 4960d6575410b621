//! Many agents at once (docs/sharing.md, "Several agents"): 8 scripted agents, each in its own clone of one
//! bare remote served by a real `git daemon` on 127.0.0.1, work through a master plan of 20
//! independent PRs with nothing but the binary: plan the first PR not taken, do its steps,
//! checkpoint, squash, mark it done, merge. At the end every PR is merged exactly once on the
//! remote's main, no claim is left, no workflow is forged, and every agent is idle.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::support::{GitDaemon, TestRepo, one_task_plan};

const AGENTS: usize = 8;
const PRS: usize = 20;

const CONFIG: &str =
    "main_branch = \"main\"\nmaster_plan = \"docs/plan.md\"\n\n[test]\ntimeout = \"30s\"\n";

/// The master plan: a line of prose under each heading, so that marking two neighbouring
/// headings [DONE] on two branches merges without a conflict.
fn master_plan() -> String {
    let mut text = String::from("# Plan\n\n");
    for i in 1..=PRS {
        text.push_str(&format!(
            "## PR {i}: feat: File {i}\n\nCreates f{i}.txt.\n\n"
        ));
    }
    text
}

/// What one agent saw.
#[derive(Debug, Default)]
struct Figures {
    merged: Vec<usize>,
    claims_lost: usize,
    merge_races: usize,
    conflicts: usize,
    calls: usize,
}

/// The open PR headings of the master plan in `text`, by number.
fn open_prs(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| l.strip_prefix("## PR "))
        .filter(|l| !l.contains("[DONE]"))
        .filter_map(|l| l.split(':').next()?.trim().parse().ok())
        .collect()
}

/// The PR numbers the briefing lists as taken (claimed by another or done).
fn taken(briefing: &str) -> Vec<usize> {
    briefing
        .lines()
        .filter_map(|l| l.strip_prefix("  - PR "))
        .filter_map(|l| l.split(':').next()?.trim().parse().ok())
        .collect()
}

/// One scripted agent: loops on `get-task` and does what the state asks, until it is idle and
/// the remote's master plan has no open PR left.
fn agent(repo: &TestRepo, figures: &Mutex<Figures>) -> Result<(), String> {
    let mut current: Option<usize> = None;
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut last = String::new();
    while Instant::now() < deadline {
        let task = repo.run(&["get-task", "--json"]);
        figures.lock().unwrap().calls += 1;
        if task.code == 10 {
            figures.lock().unwrap().conflicts += 1;
            return Err(format!("halted: {}", task.stdout));
        }
        let json = task.json();
        let briefing = json["briefing"].as_str().unwrap_or_default().to_string();
        let step_type = json["step"]["type"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let state = json["state"].as_str().unwrap_or_default().to_string();
        last = format!(
            "exit {} {state} {}",
            task.code,
            briefing.chars().take(1500).collect::<String>()
        );
        if let Some(n) = current
            && briefing.contains(&format!("Done for you: merged feat/file-{n} into main"))
        {
            figures.lock().unwrap().merged.push(n);
            current = None;
        }
        if briefing.contains("lost the race to another clone's") {
            figures.lock().unwrap().merge_races += 1;
        }
        match state.as_str() {
            "INITIALIZING" => {
                if json["idle"] == true {
                    let remote_plan = repo.git(&["show", "origin/main:docs/plan.md"]);
                    if open_prs(&remote_plan).is_empty() {
                        return Ok(());
                    }
                    repo.git(&["fetch", "--quiet", "origin"]);
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                let plan = std::fs::read_to_string(repo.path.join("docs/plan.md"))
                    .map_err(|e| e.to_string())?;
                let busy = taken(&briefing);
                let mut planned = false;
                for n in open_prs(&plan).into_iter().filter(|n| !busy.contains(n)) {
                    let submitted = repo.submit_plan(&one_task_plan(
                        &format!("feat: File {n}"),
                        &format!("f{n}.txt"),
                    ));
                    figures.lock().unwrap().calls += 1;
                    match submitted.code {
                        0 => {
                            current = Some(n);
                            planned = true;
                            break;
                        }
                        4 => figures.lock().unwrap().claims_lost += 1,
                        other => {
                            return Err(format!(
                                "plan for PR {n}: exit {other}: {}{}",
                                submitted.stdout, submitted.stderr
                            ));
                        }
                    }
                }
                if !planned {
                    let none = repo.run(&["submit-work", "-s", "all taken", "--no-pr-left"]);
                    figures.lock().unwrap().calls += 1;
                    if none.code != 0 {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            }
            "EXECUTING_TDD" => {
                let n = current.ok_or("a step with no PR of mine")?;
                let file = format!("f{n}.txt");
                let test = format!("test -e {file}");
                match (step_type.as_str(), json["pending"].as_str()) {
                    (_, Some("analysis")) => {
                        repo.run(&[
                            "submit-work",
                            "-s",
                            "missing",
                            "--analysis-decision",
                            "SUCCESS",
                        ])
                        .expect(0);
                    }
                    (_, Some("checkpoint")) => {
                        repo.run(&["checkpoint"]).expect(0);
                    }
                    ("RED", None) => {
                        repo.submit_test(&test, None).expect(3);
                    }
                    ("GREEN", None) => {
                        repo.write(&file, &format!("{file}\n"));
                        repo.submit_test(&test, None).expect(0);
                    }
                    other => return Err(format!("unexpected step {other:?}: {briefing}")),
                }
                figures.lock().unwrap().calls += 1;
            }
            "AWAITING_FINALIZATION" => {
                repo.run(&["submit-work", "-s", "squashed", "--squash"])
                    .expect(0);
            }
            "FINALIZE_COMPLETE" => {
                repo.run(&["submit-work", "-s", "plan updated", "--mark-done"])
                    .expect(0);
            }
            "CREATING_BRANCH" | "CODE_REVIEW" | "PLAN_UPDATED" | "MERGING_BRANCH" => {
                if task.code != 0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            other => return Err(format!("state {other}: {briefing}")),
        }
    }
    Err(format!("did not finish in 150 s; last: {last}"))
}

#[test]
fn eight_agents_merge_twenty_prs_each_exactly_once() {
    let started = Instant::now();
    let origin = TestRepo::with_config(CONFIG);
    origin.write("docs/plan.md", &master_plan());
    origin.commit_all("the master plan");
    let (dir, bare) = origin.share();
    let base: PathBuf = dir.path().canonicalize().unwrap();
    let daemon = GitDaemon::start(&origin, &base);
    let url = daemon.url("remote.git");
    let clones: Vec<TestRepo> = (0..AGENTS)
        .map(|i| {
            let clone = TestRepo::clone_of(Path::new(&url));
            clone.git(&["config", "orchestrate.workflow", &format!("agent{i}")]);
            clone.run(&["init"]).expect(0);
            clone
        })
        .collect();
    let set_up = started.elapsed();
    let figures = Mutex::new(Figures::default());
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = clones
            .iter()
            .map(|clone| scope.spawn(|| agent(clone, &figures)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("agent thread"))
            .collect()
    });
    let wall = started.elapsed() - set_up;
    let figures = figures.into_inner().unwrap();
    eprintln!(
        "scale: {AGENTS} agents, {PRS} PRs in {:.1} s (set-up {:.1} s); {} calls; claims lost and retried {}; merge races {}; conflicts halted {}",
        wall.as_secs_f64(),
        set_up.as_secs_f64(),
        figures.calls,
        figures.claims_lost,
        figures.merge_races,
        figures.conflicts
    );
    for (i, outcome) in outcomes.iter().enumerate() {
        assert!(outcome.is_ok(), "agent{i}: {outcome:?}");
    }
    // Every PR merged exactly once on the remote's main.
    let log = origin.git(&[
        "--git-dir",
        bare.to_str().unwrap(),
        "log",
        "--first-parent",
        "--format=%s",
        "main",
    ]);
    for i in 1..=PRS {
        let merges = log
            .lines()
            .filter(|s| *s == format!("Merge branch 'feat/file-{i}'"))
            .count();
        assert_eq!(merges, 1, "PR {i} merged {merges} times:\n{log}");
    }
    let plan = origin.git(&[
        "--git-dir",
        bare.to_str().unwrap(),
        "show",
        "main:docs/plan.md",
    ]);
    assert!(open_prs(&plan).is_empty(), "{plan}");
    for i in 1..=PRS {
        let file = format!("main:f{i}.txt");
        origin.git(&["--git-dir", bare.to_str().unwrap(), "cat-file", "-e", &file]);
    }
    let mut merged = figures.merged.clone();
    merged.sort_unstable();
    assert_eq!(
        merged,
        (1..=PRS).collect::<Vec<_>>(),
        "each PR merged by exactly one agent"
    );
    // No claim left on the remote.
    let claims = origin.git(&[
        "--git-dir",
        bare.to_str().unwrap(),
        "for-each-ref",
        "refs/orchestrator/claims/",
    ]);
    assert_eq!(claims, "", "claims left behind");
    // No workflow corrupt or forged, and every agent idle.
    for clone in &clones {
        clone.run(&["sync"]).expect(0);
        clone.run(&["audit", "--all"]).expect(0);
        let status = clone.run(&["status", "--json"]).expect(0).json();
        assert_eq!(status["state"], "INITIALIZING", "{status}");
    }
    // The board, from any clone: every agent's workflow with no PR and no claim, nothing free.
    let board = clones[0].run(&["board", "--json"]).expect(0).json();
    let rows = board["workflows"].as_array().expect("rows");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["workflow"].as_str()).collect();
    assert_eq!(
        names,
        (0..AGENTS).map(|i| format!("agent{i}")).collect::<Vec<_>>(),
        "{board}"
    );
    for row in rows {
        assert_eq!(row["state"], "INITIALIZING", "{row}");
        assert_eq!(row["claim"], serde_json::Value::Null, "{row}");
        assert_eq!(row["pr"], serde_json::Value::Null, "{row}");
    }
    assert_eq!(board["unclaimed"], serde_json::json!([]), "{board}");
}
