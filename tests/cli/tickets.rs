//! Ticket mode end to end (docs/tickets.md): a manager and a developer, the real binary in a
//! real repository; every report is checked by running its commit, and a lying developer is
//! caught whichever way it lies.

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::{Run, TestRepo};

/// Every `tests/*.sh` must pass; `src/*.sh` is the code under test.
pub(crate) const TICKET_CONFIG: &str = r#"
[[preflight]]
name = "tests"
command = "sh run_tests.sh"
timeout = "30s"
"#;

pub(crate) const RUNNER: &str = "for t in tests/*.sh; do [ -e \"$t\" ] || continue; \
                      sh \"$t\" || { echo \"FAILED: $t\"; exit 1; }; done; echo 'all tests pass'\n";

pub(crate) fn repo() -> TestRepo {
    repo_with(TICKET_CONFIG)
}

/// The ticket repository of [`repo`], its `.orchestrate.toml` `config`.
pub(crate) fn repo_with(config: &str) -> TestRepo {
    let repo = TestRepo::empty();
    repo.write("run_tests.sh", RUNNER);
    repo.write(".orchestrate.toml", config);
    repo.write("src/base.sh", "echo base\n");
    repo.write("README.md", "# project\n");
    repo.commit_all("initial");
    repo
}

fn ticket(repo: &TestRepo) -> Value {
    let run = repo.run(&["--json", "ticket", "show"]);
    run.expect(0);
    run.json()["ticket"].clone()
}

fn state(repo: &TestRepo) -> String {
    ticket(repo)["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub(crate) fn assign(repo: &TestRepo, goal: &str, scope: &[&str], extra: &[&str]) -> Run {
    let mut args = vec![
        "assign",
        "--role",
        "manager",
        "--mode",
        "implementation",
        "--goal",
        goal,
        "--acceptance-criteria",
        "its test passes",
    ];
    for glob in scope {
        args.extend(["--file-to-modify", glob]);
    }
    args.extend(extra);
    repo.run(&args)
}

pub(crate) fn report(repo: &TestRepo, build: &str, files: &[&str], extra: &[&str]) -> Run {
    let mut args = vec![
        "subtask-complete",
        "--role",
        "developer",
        "--status",
        "complete",
        "--build-status",
        build,
        "--message",
        "done",
    ];
    for f in files {
        args.extend(["--file", f]);
    }
    args.extend(extra);
    repo.run(&args)
}

pub(crate) fn judge(repo: &TestRepo, status: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "update-subtask",
        "--role",
        "manager",
        "--status",
        status,
        "--notes",
        "checked",
    ];
    args.extend(extra);
    repo.run(&args)
}

/// A feature and its test: `src/<name>.sh` prints `<name>`, `tests/<name>.sh` checks it.
pub(crate) fn honest_work(repo: &TestRepo, name: &str) {
    repo.write(&format!("src/{name}.sh"), &format!("echo {name}\n"));
    repo.write(
        &format!("tests/{name}.sh"),
        &format!("[ \"$(sh src/{name}.sh 2>/dev/null)\" = {name} ]\n"),
    );
    repo.commit_all(&format!("add {name}"));
}

fn contradictions(repo: &TestRepo, id: &str) -> Vec<String> {
    let t = ticket(repo);
    let subtask = t["subtasks"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["id"] == id))
        .cloned()
        .unwrap_or(Value::Null);
    subtask["contradictions"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_ticket_of_three_subtasks_runs_to_a_merged_squash_with_a_rejection_and_a_block() {
    let repo = repo();
    repo.run(&[
        "ticket",
        "new",
        "--title",
        "Greetings",
        "--subtask",
        "hello",
    ])
    .expect(0)
    .says("branch ticket/greetings made");
    assert_eq!(
        repo.git(&["branch", "--show-current"]).trim(),
        "ticket/greetings"
    );
    assert_eq!(state(&repo), "MANAGER");

    // S1: the planned subtask, accepted on the first try.
    assign(&repo, "Add hello", &["src/hello.sh", "tests/**"], &[])
        .expect(0)
        .says("S1 assigned");
    repo.run(&["get-task", "--role", "developer"])
        .expect(0)
        .says("## Current Assignment\nSubtask: S1 (assignment 1)\nMode: implementation\nGoal: Add hello");
    honest_work(&repo, "hello");
    report(
        &repo,
        "pass",
        &["src/hello.sh", "tests/hello.sh"],
        &["--tests", "1,1,0,0"],
    )
    .expect(0)
    .says("agrees with the report");
    repo.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says("Contradictions: none.")
        .says("on the subtask's base (");
    judge(&repo, "complete", &[])
        .expect(0)
        .says("S1 is now complete");

    // S2: rejected once (the manager wants more), then accepted.
    assign(&repo, "Add bye", &["src/bye.sh", "tests/**"], &[])
        .expect(0)
        .says("S2 assigned");
    honest_work(&repo, "bye");
    report(&repo, "pass", &["src/bye.sh", "tests/bye.sh"], &[]).expect(0);
    judge(&repo, "rejected", &[])
        .expect(0)
        .says("S2 is now rejected");
    assign(
        &repo,
        "Add bye, with a newline",
        &["src/bye.sh", "tests/**"],
        &[],
    )
    .expect(0)
    .says("S2 assigned");
    repo.run(&["get-task", "--role", "developer"])
        .expect(0)
        .says("Subtask: S2 (assignment 2)")
        .says("The manager's notes on your last attempt: checked");
    repo.write("src/bye.sh", "echo bye\n\n");
    repo.commit_all("bye again");
    report(&repo, "pass", &["src/bye.sh", "tests/bye.sh"], &[]).expect(0);
    judge(&repo, "complete", &[]).expect(0);

    // S3: rejected three times → blocked; reassigned only with new priorContext.
    for round in 1..=3 {
        assign(&repo, "Add hi", &["src/hi.sh", "tests/**"], &[]).expect(0);
        repo.write("src/hi.sh", &format!("echo hi # try {round}\n"));
        if round == 1 {
            repo.write("tests/hi.sh", "[ \"$(sh src/hi.sh)\" = hi ]\n");
        }
        repo.commit_all(&format!("hi {round}"));
        report(&repo, "pass", &["src/hi.sh", "tests/hi.sh"], &[]).expect(0);
        judge(&repo, "rejected", &[]).expect(0);
    }
    let t = ticket(&repo);
    assert_eq!(t["subtasks"][2]["status"], "blocked");
    assert_eq!(t["subtasks"][2]["rejections"], 3);
    repo.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says("## Blocked: S3\nRejected 3 time(s), assigned 3 time(s).")
        .says("History:\n- manager assign: assigned S3 (implementation): Add hi");
    assign(&repo, "Add hi", &["src/hi.sh", "tests/**"], &[])
        .expect(4)
        .warns("reassigned only with new priorContext");
    repo.run(&["complete-ticket", "--summary", "too early"])
        .expect(4)
        .warns("not every subtask is complete: S3 (blocked)");
    assign(
        &repo,
        "Add hi",
        &["src/hi.sh", "tests/**"],
        &["--prior-context", "keep it as is"],
    )
    .expect(0);
    report(&repo, "pass", &["src/hi.sh", "tests/hi.sh"], &[]).expect(0);
    judge(&repo, "complete", &[]).expect(0);

    let before = repo.git(&["rev-parse", "main"]).trim().to_string();
    repo.run(&[
        "complete-ticket",
        "--role",
        "manager",
        "--summary",
        "three greetings",
    ])
    .expect(0)
    .says("ticket done: squashed as");
    assert_eq!(state(&repo), "TICKET_DONE");
    // One merge on main, whose second parent is one squashed commit on the pin.
    let merge = repo.git(&["rev-parse", "main"]).trim().to_string();
    let parents: Vec<String> = repo
        .git(&["rev-list", "--parents", "-n1", &merge])
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect();
    assert_eq!(parents.len(), 2);
    assert_eq!(parents[0], before);
    let squash_parents = repo.git(&["rev-list", "--parents", "-n1", &parents[1]]);
    assert_eq!(
        squash_parents.split_whitespace().nth(1),
        Some(before.as_str())
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", &parents[1]]).trim(),
        "Greetings"
    );
    for file in ["src/hello.sh", "src/bye.sh", "src/hi.sh", "tests/hi.sh"] {
        repo.git(&["cat-file", "-e", &format!("main:{file}")]);
    }
    let note = repo.git(&[
        "notes",
        "--ref=refs/notes/orchestrator",
        "show",
        &parents[1],
    ]);
    assert!(note.contains("\"kind\":\"ticket\""), "{note}");
    assert!(
        note.contains("\"verification\":\"gates passed: tests\""),
        "{note}"
    );
    let (branch_left, _) = repo.git_try(&["rev-parse", "--verify", "refs/heads/ticket/greetings"]);
    assert!(!branch_left, "the ticket's branch is deleted once merged");
    // Every transition is one commit of the workflow ref.
    let log = repo.git(&["log", "--format=%s", "refs/orchestrator/workflows/main"]);
    assert!(
        log.starts_with("complete-ticket: MANAGER -> TICKET_DONE\n"),
        "{log}"
    );
    assert!(
        log.trim_end().ends_with("ticket-new: (none) -> MANAGER"),
        "{log}"
    );
}

/// The honest developer is accepted at once; every lie is caught, each in a fresh ticket.
#[test]
fn a_lying_developer_is_caught_every_time_and_an_honest_one_is_not() {
    // Honest: no contradiction, accepted without an override.
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Honest"]).expect(0);
    assign(&repo, "Add hello", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    honest_work(&repo, "hello");
    report(
        &repo,
        "pass",
        &["src/hello.sh", "tests/hello.sh"],
        &["--tests", "1,1,0,0"],
    )
    .expect(0);
    assert_eq!(contradictions(&repo, "S1"), Vec::<String>::new());
    judge(&repo, "complete", &[]).expect(0);

    // Lie 1: claims pass while a test fails.
    let repo = self::repo();
    repo.run(&["ticket", "new", "--title", "Fails"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    repo.write("src/hello.sh", "echo helo\n");
    repo.write("tests/hello.sh", "[ \"$(sh src/hello.sh)\" = hello ]\n");
    repo.commit_all("broken");
    report(
        &repo,
        "pass",
        &["src/hello.sh", "tests/hello.sh"],
        &["--tests", "1,1,0,0"],
    )
    .expect(0)
    .says("contradicts the report");
    let found = contradictions(&repo, "S1");
    assert!(
        found.contains(
            &"the developer reported pass; the gates failed: `tests` ended with exit 1".to_string()
        ),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|c| c.starts_with("the developer reported no failing test;")),
        "{found:?}"
    );
    repo.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says("CONTRADICTIONS (the report is not what was observed):")
        .says("FAILED: tests/hello.sh");
    judge(&repo, "complete", &[])
        .expect(4)
        .warns("contradicts the report");
    assert_eq!(ticket(&repo)["subtasks"][0]["status"], "in-progress");
    judge(
        &repo,
        "complete",
        &["--override", "the manager knows better"],
    )
    .expect(0)
    .says("S1 is now complete");
    let t = ticket(&repo);
    assert_eq!(
        t["subtasks"][0]["overrideReason"],
        "the manager knows better"
    );
    assert!(
        t["activity"]
            .as_array()
            .expect("activity")
            .iter()
            .any(|a| a["text"].as_str().is_some_and(
                |s| s.contains("accepted over 3 contradiction(s): the manager knows better")
            )),
        "{t}"
    );

    // Lie 2: claims a scope, touches another file.
    let repo = self::repo();
    repo.run(&["ticket", "new", "--title", "Scope"]).expect(0);
    assign(&repo, "Add hello", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    repo.write("README.md", "# project, rewritten\n");
    honest_work(&repo, "hello");
    report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    assert_eq!(
        contradictions(&repo, "S1"),
        vec![
            "changed `README.md`, outside the assignment (filesToModify: `src/hello.sh`, `tests/hello.sh`)"
                .to_string(),
            "changed `README.md` without reporting it".to_string(),
        ]
    );
    // Reporting the file does not make it in scope.
    judge(&repo, "rejected", &[]).expect(0);
    assign(&repo, "Add hello", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    report(
        &repo,
        "pass",
        &["src/hello.sh", "tests/hello.sh", "README.md"],
        &[],
    )
    .expect(0);
    assert_eq!(
        contradictions(&repo, "S1"),
        vec!["changed `README.md`, outside the assignment (filesToModify: `src/hello.sh`, `tests/hello.sh`)"
            .to_string()]
    );

    // Lie 3: reports a commit that is not its branch's tip (an older one, and main's).
    let repo = self::repo();
    repo.run(&["ticket", "new", "--title", "Tip"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    honest_work(&repo, "hello");
    let good = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.write("src/hello.sh", "exit 3\n");
    repo.commit_all("breaks it after the good commit");
    let before = repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]);
    for commit in [good.as_str(), "main"] {
        report(
            &repo,
            "pass",
            &["src/hello.sh", "tests/hello.sh"],
            &["--commit", commit],
        )
        .expect(4)
        .warns("is not the tip of the ticket's branch ticket/tip");
    }
    // Uncommitted work is not in any commit.
    repo.write("src/hello.sh", "echo hello\n");
    report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[])
        .expect(4)
        .warns("not committed");
    assert_eq!(
        repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]),
        before,
        "nothing written"
    );
    assert_eq!(state(&repo), "DEVELOPER");

    // Lie 4: adds a test that passes on the parent too.
    let repo = self::repo();
    repo.run(&["ticket", "new", "--title", "Vacuous"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    repo.write("src/hello.sh", "echo hello\n");
    repo.write("tests/hello.sh", "true\n");
    repo.commit_all("a test that tests nothing");
    report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    assert_eq!(
        contradictions(&repo, "S1"),
        vec!["the tests the subtask added or changed (`tests/hello.sh`) pass on its base too: they do not test the change".to_string()]
    );
    repo.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says("they PASS: they do not test the change");

    // Lie 5: makes the gates pass by changing what they run, inside its scope, and weakens
    // an existing test.
    let repo = self::repo();
    repo.write("tests/base.sh", "[ \"$(sh src/base.sh)\" = base ]\n");
    repo.commit_all("a test on main");
    repo.run(&["ticket", "new", "--title", "Judge"]).expect(0);
    assign(&repo, "Add hello", &["**"], &[]).expect(0);
    repo.write("run_tests.sh", "echo 'all tests pass'\n");
    repo.write("src/base.sh", "echo changed\n");
    repo.write("tests/base.sh", "true\n");
    repo.commit_all("make it green");
    report(
        &repo,
        "pass",
        &["run_tests.sh", "src/base.sh", "tests/base.sh"],
        &[],
    )
    .expect(0);
    assert_eq!(
        contradictions(&repo, "S1"),
        vec![
            "the tests the subtask added or changed (`tests/base.sh`) pass on its base too: they do not test the change".to_string(),
            "changed `run_tests.sh`, which the configuration protects: the gates and the prompts are not a subtask's to change".to_string(),
        ]
    );
}

#[test]
fn a_tool_out_of_role_or_state_is_refused_with_the_next_legal_action_and_bad_input_with_every_path()
{
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Roles"]).expect(0);
    let before = repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]);
    // The developer cannot assign; the manager cannot report; nothing to verify yet.
    repo.run(&[
        "assign",
        "--role",
        "developer",
        "--mode",
        "implementation",
        "--goal",
        "g",
        "--acceptance-criteria",
        "c",
    ])
    .expect(4)
    .warns("`assign` is the manager's tool; this session is the developer")
    .warns("it is the manager's turn, not the developer's");
    repo.run(&[
        "subtask-complete",
        "--role",
        "manager",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "m",
    ])
    .expect(4)
    .warns("`subtask-complete` is the developer's tool");
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "m",
    ])
    .expect(4)
    .warns("`subtask-complete` is not allowed in state MANAGER");
    judge(&repo, "complete", &[])
        .expect(4)
        .warns("there is no report to verify");
    repo.run(&["get-task", "--role", "developer"])
        .expect(4)
        .says(
            "It is the manager's turn, not the developer's"
                .to_lowercase()
                .as_str(),
        );
    // GIT_ORCHESTRATE_ROLE speaks for a session that passes no flag.
    let run = Run::from(
        repo.command(
            env!("CARGO_BIN_EXE_git-orchestrate"),
            [
                "assign",
                "--mode",
                "implementation",
                "--goal",
                "g",
                "--acceptance-criteria",
                "c",
            ],
        )
        .env("GIT_ORCHESTRATE_ROLE", "developer")
        .output()
        .expect("runs"),
    );
    run.expect(4);
    // A flag cannot speak for another role than the session's.
    let run = Run::from(
        repo.command(
            env!("CARGO_BIN_EXE_git-orchestrate"),
            [
                "assign",
                "--role",
                "manager",
                "--mode",
                "implementation",
                "--goal",
                "g",
                "--acceptance-criteria",
                "c",
            ],
        )
        .env("GIT_ORCHESTRATE_ROLE", "developer")
        .output()
        .expect("runs"),
    );
    run.expect(4).warns(
        "this session is the developer (GIT_ORCHESTRATE_ROLE); --role manager does not change that",
    );
    // Nor can an MCP server be started for the other role.
    let run = Run::from(
        repo.command(
            env!("CARGO_BIN_EXE_git-orchestrate"),
            ["mcp", "--role", "manager"],
        )
        .env("GIT_ORCHESTRATE_ROLE", "developer")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs"),
    );
    run.expect(4).warns(
        "this session is the developer (GIT_ORCHESTRATE_ROLE); `mcp --role manager` does not change that",
    );
    // Bad input: every problem with its JSON path, exit 2, nothing written.
    let run = repo.run_with_stdin(
        &["--json", "assign", "--json-input", "-"],
        r#"{"mode": "refactor", "goal": "", "filesToModify": ["../x", "/abs"], "acceptanceCriteria": [], "nope": 1}"#,
    );
    run.expect(2);
    let paths: Vec<String> = run.json()["error"]["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p["path"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "nope",
            "mode",
            "goal",
            "filesToModify[0]",
            "filesToModify[1]",
            "acceptanceCriteria"
        ]
    );
    repo.run_with_stdin(&["assign", "--json-input", "-"], "not json")
        .expect(2)
        .warns("not valid JSON");
    assert_eq!(
        repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]),
        before,
        "nothing written"
    );
    // A TDD command on a ticket workflow is refused and names the ticket tools.
    repo.run(&["submit-work", "-s", "x", "--plan", "-"])
        .expect(4)
        .warns("is a ticket workflow");
    // A second ticket in the same workflow is refused while this one runs.
    repo.run(&["ticket", "new", "--title", "Another"])
        .expect(4)
        .warns("already works on ticket \"Roles\"");
    // The JSON input takes the tools' parameter names; flags override its fields.
    repo.run_with_stdin(
        &["assign", "--json-input", "-", "--goal", "from the flag"],
        r#"{"mode": "write-tests", "goal": "from json", "acceptanceCriteria": ["a"], "priorContext": null}"#,
    )
    .expect(0);
    let t = ticket(&repo);
    assert_eq!(t["subtasks"][0]["assignment"]["goal"], "from the flag");
    assert_eq!(t["subtasks"][0]["assignment"]["mode"], "write-tests");
    assert_eq!(t["state"], "DEVELOPER");
    // write-tests without a test file is a contradiction.
    repo.write("src/x.sh", "echo x\n");
    repo.commit_all("no test");
    report(&repo, "pass", &["src/x.sh"], &[]).expect(0);
    assert!(
        contradictions(&repo, "S1").contains(
            &"the assignment's mode is write-tests, and the commit adds or changes no test file"
                .to_string()
        )
    );
}

#[test]
fn complete_ticket_refuses_commits_no_subtask_covers_and_gates_that_fail_on_the_squash() {
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Guarded"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    honest_work(&repo, "hello");
    report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    judge(&repo, "complete", &[]).expect(0);
    // A commit after the last accepted subtask is in no subtask.
    repo.write("src/hello.sh", "exit 1\n");
    repo.commit_all("sneaked in");
    let main_before = repo.git(&["rev-parse", "main"]);
    repo.run(&["complete-ticket", "--summary", "s"])
        .expect(4)
        .warns("moved since the last accepted subtask");
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    assert_eq!(state(&repo), "MANAGER");
    // Covered by a subtask, its report is checked like any other.
    assign(&repo, "Tidy hello", &["src/**"], &[]).expect(0);
    report(&repo, "pass", &["src/hello.sh"], &[]).expect(0);
    assert!(
        contradictions(&repo, "S2")[0].starts_with("the developer reported pass; the gates failed")
    );
}

#[test]
fn a_merge_that_conflicts_halts_the_ticket_until_a_human_resumes_it() {
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Readme"]).expect(0);
    assign(&repo, "Reword the readme", &["README.md"], &[]).expect(0);
    repo.write("README.md", "# project, by the ticket\n");
    repo.commit_all("ticket readme");
    report(&repo, "pass", &["README.md"], &[]).expect(0);
    judge(&repo, "complete", &[]).expect(0);
    // main moves meanwhile, on the same line.
    repo.git(&["switch", "--quiet", "main"]);
    repo.write("README.md", "# project, on main\n");
    repo.commit_all("main readme");
    repo.run(&["complete-ticket", "--summary", "reworded"])
        .expect(10)
        .says("Conflicting files: README.md");
    assert_eq!(state(&repo), "HALTED");
    repo.run(&["get-task", "--role", "manager"])
        .expect(10)
        .says("HALTED: ERROR: Automated merge failed");
    // The human merges the squashed branch by hand, then resumes.
    let (merged, _) = repo.git_try(&["merge", "--no-edit", "ticket/readme"]);
    assert!(!merged, "the merge conflicts");
    repo.write("README.md", "# project, both\n");
    repo.git(&["add", "README.md"]);
    repo.git(&["commit", "--quiet", "--no-edit"]);
    repo.run(&["resume"]).expect(4).warns("human");
    repo.human(&["resume", "--guidance", "merged by hand"])
        .expect(0);
    assert_eq!(state(&repo), "MANAGER");
    repo.run(&["complete-ticket", "--summary", "reworded"])
        .expect(0)
        .says("ticket done");
    assert_eq!(state(&repo), "TICKET_DONE");
    let t = ticket(&repo);
    assert!(
        t["activity"]
            .as_array()
            .expect("activity")
            .iter()
            .any(|a| a["by"] == "human" && a["text"] == "merged by hand")
    );
}

/// The ticket `a_ticket_…` would make, shorter: one subtask, accepted, completed.
pub(crate) fn finished_ticket(repo: &TestRepo) {
    repo.run(&["ticket", "new", "--title", "Hello"]).expect(0);
    assign(repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    honest_work(repo, "hello");
    report(repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    judge(repo, "complete", &[]).expect(0);
    repo.run(&["complete-ticket", "--summary", "hello"])
        .expect(0);
}

#[test]
fn attest_replays_a_ticket_and_runs_its_squash_and_its_tests_again() {
    let repo = repo();
    finished_ticket(&repo);
    let out = repo.run(&["attest", "--no-note", "main", "main^2"]);
    out.expect(0);
    assert_eq!(
        crate::support::redact_ids(&out.stdout),
        "PASSED <id> (the merge of workflow main's ticket)\n  \
         re-ran: gates on the squashed commit: passed (tests)\n  \
         re-ran: subtask S1's tests (tests/hello.sh) on its base <id>: fail, as they must\n\
         PASSED <id> (the squashed commit of workflow main's ticket)\n  \
         re-ran: gates on the squashed commit: passed (tests)\n  \
         re-ran: subtask S1's tests (tests/hello.sh) on its base <id>: fail, as they must\n\
         no note written: --no-note\n"
    );
    repo.run(&["audit", "--all"])
        .expect(0)
        .says("transitions replayed: clean");
}

#[test]
fn a_hand_written_ticket_commit_is_forged_for_attest_and_a_vacuous_test_fails_it() {
    // A subtask accepted over "its tests pass on the base too": attest fails it.
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Vacuous"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    repo.write("src/hello.sh", "echo hello\n");
    repo.write("tests/hello.sh", "true\n");
    repo.commit_all("vacuous");
    report(&repo, "pass", &["src/hello.sh", "tests/hello.sh"], &[]).expect(0);
    judge(&repo, "complete", &["--override", "looks fine to me"]).expect(0);
    repo.run(&["complete-ticket", "--summary", "hello"])
        .expect(0);
    let out = repo.run(&["attest", "--no-note", "main"]);
    out.expect(1)
        .says("re-ran: subtask S1 was accepted over 1 contradiction(s) by the manager: looks fine to me")
        .says("subtask S1's tests pass on its base too: nothing proves they test its change");

    // The last commit rewritten by hand (the override hidden): the replay names it.
    let tip = repo
        .git(&["rev-parse", "refs/orchestrator/workflows/main"])
        .trim()
        .to_string();
    let text = repo.git(&["show", &format!("{tip}:ticket.json")]);
    let mut t: Value = serde_json::from_str(&text).expect("ticket.json");
    t["subtasks"][0]["overrideReason"] = Value::Null;
    let blob = repo.git_with_stdin(&["hash-object", "-w", "--stdin"], t.to_string().as_bytes());
    let tree = repo.git_with_stdin(
        &["mktree"],
        format!("100644 blob {}\tticket.json\n", blob.trim()).as_bytes(),
    );
    let event = repo
        .git(&["cat-file", "commit", &tip])
        .lines()
        .find_map(|l| l.strip_prefix("orchestrator-event ").map(str::to_string))
        .expect("event header");
    let message = repo.git(&["log", "-1", "--format=%B", &tip]);
    let raw = format!(
        "tree {}\nparent {}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\norchestrator-event {event}\n\n{message}",
        tree.trim(),
        repo.git(&["rev-parse", &format!("{tip}^")]).trim()
    );
    let forged = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        raw.as_bytes(),
    );
    repo.git(&[
        "update-ref",
        "refs/orchestrator/workflows/main",
        forged.trim(),
        &tip,
    ]);
    let out = repo.run(&["attest", "--no-note", "main"]);
    out.expect(1).says(&format!(
        "the ticket's history is forged: workflow main, commit {}: ticket.json is not what its recorded event makes of its parent (it differs in: subtasks)",
        forged.trim()
    ));
    repo.run(&["audit"]).expect(1).says("FORGED");
}

/// Real processes racing one ticket: of eight managers assigning at once exactly one wins,
/// the others hear the next legal action; of four developers reporting at once, one.
#[test]
fn racing_tool_calls_make_exactly_one_move() {
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Race"]).expect(0);
    // `n` processes started together; their exit codes.
    let race = |args: &[&str], n: usize| -> Vec<i32> {
        let children: Vec<_> = (0..n)
            .map(|_| {
                repo.command(env!("CARGO_BIN_EXE_git-orchestrate"), args)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawns")
            })
            .collect();
        children
            .into_iter()
            .map(|c| {
                let out = c.wait_with_output().expect("waits");
                let code = out.status.code().unwrap_or(-1);
                // Anything but a move or "not now" is shown: it is what the test is about.
                assert!(
                    code == 0 || code == 4,
                    "exit {code}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                code
            })
            .collect()
    };
    let assign_args = [
        "assign",
        "--role",
        "manager",
        "--mode",
        "implementation",
        "--goal",
        "Add hello",
        "--file-to-modify",
        "src/**",
        "--file-to-modify",
        "tests/**",
        "--acceptance-criteria",
        "it passes",
    ];
    let codes = race(&assign_args, 8);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 4).count(), 7, "{codes:?}");
    let t = ticket(&repo);
    assert_eq!(t["state"], "DEVELOPER");
    assert_eq!(t["subtasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(t["subtasks"][0]["assignments"], 1);
    assert_eq!(t["activity"].as_array().map(Vec::len), Some(2));

    honest_work(&repo, "hello");
    let report_args = [
        "subtask-complete",
        "--role",
        "developer",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "done",
        "--file",
        "src/hello.sh",
        "--file",
        "tests/hello.sh",
    ];
    let codes = race(&report_args, 4);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 4).count(), 3, "{codes:?}");
    assert_eq!(state(&repo), "MANAGER");
    repo.run(&["audit"]).expect(0);
    assert_eq!(
        repo.scratch_worktrees(),
        0,
        "every observation's worktree is removed"
    );
}

/// A link out of the repository, or a change to what the gates run, is accepted by no
/// override: a human changes those on main.
#[test]
fn no_override_accepts_a_link_out_of_the_repository_or_a_protected_path() {
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Links"]).expect(0);
    assign(&repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
    honest_work(&repo, "hello");
    std::os::unix::fs::symlink("/etc/hostname", repo.path.join("src/host")).expect("symlink");
    repo.commit_all("a link out");
    report(
        &repo,
        "pass",
        &["src/hello.sh", "tests/hello.sh", "src/host"],
        &[],
    )
    .expect(0);
    let found = contradictions(&repo, "S1");
    assert!(
        found
            .iter()
            .any(|c| c.starts_with("a symbolic link points out of the repository: src/host")),
        "{found:?}"
    );
    judge(&repo, "complete", &["--override", "it is only a hostname"])
        .expect(4)
        .warns("no override accepts that");
    assert_eq!(ticket(&repo)["subtasks"][0]["status"], "in-progress");
}

#[test]
fn init_and_doctor_set_up_the_repository_around_a_ticket() {
    let repo = repo();
    repo.run(&["ticket", "new", "--title", "Setup"]).expect(0);
    let before = repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]);
    let out = repo.run(&["--json", "init"]);
    out.expect(0);
    let report = out.json();
    assert_eq!(report["state"], "MANAGER", "{report}");
    assert_eq!(report["created"], false);
    assert_eq!(
        repo.git(&["rev-parse", "refs/orchestrator/workflows/main"]),
        before,
        "the ticket is kept as it is"
    );
    repo.run(&["doctor"])
        .says("workflow main: a ticket, MANAGER (refs/orchestrator/workflows/main)");
}

/// The ticket's final note on its squashed commit `squash` (the line of kind `ticket`).
fn ticket_note(repo: &TestRepo, squash: &str) -> serde_json::Value {
    let text = repo.git(&["notes", "--ref=orchestrator", "show", squash]);
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a note line is JSON"))
        .find(|n| n["kind"] == "ticket")
        .expect("a ticket's final note")
}

/// A ticket that guts a test main had (`tests/base.sh` made `true`) beside an honest new one:
/// under `[gates] pinned_tests = "report"` its own final check passes and `attest` names the
/// gutted test, how the gates fare with it put back and the policy's verdict, as a PR's
/// verdict does; under `enforce` the ticket's final check refuses to squash, naming it.
#[test]
fn a_ticket_that_changes_an_existing_test_is_named_by_attest_and_refused_under_enforce() {
    // `base` is what src/base.sh prints after the ticket.
    let gut = |repo: &TestRepo, base: &str| {
        repo.run(&["ticket", "new", "--title", "Gut"]).expect(0);
        assign(repo, "Add hello", &["src/**", "tests/**"], &[]).expect(0);
        honest_work(repo, "hello");
        repo.write("tests/base.sh", "true\n");
        repo.write("src/base.sh", &format!("echo {base}\n"));
        repo.commit_all("hello, and a lighter base test");
        let mut files = vec!["src/hello.sh", "tests/hello.sh", "tests/base.sh"];
        if base != "base" {
            files.push("src/base.sh");
        }
        report(repo, "pass", &files, &[]).expect(0);
        judge(repo, "complete", &[]).expect(0);
    };
    let with_base_test = |config: &str| {
        let repo = TestRepo::empty();
        repo.write("run_tests.sh", RUNNER);
        repo.write(".orchestrate.toml", config);
        repo.write("src/base.sh", "echo base\n");
        repo.write(
            "tests/base.sh",
            "out=$(sh src/base.sh); [ \"$out\" = base ] || { echo \"base printed '$out'\"; exit 1; }\n",
        );
        repo.commit_all("initial");
        repo
    };

    let repo = with_base_test(TICKET_CONFIG);
    gut(&repo, "base");
    // The gutted test still passes as it was: nothing the ticket did breaks it.
    repo.run(&["complete-ticket", "--summary", "hello"])
        .expect(0);
    let out = repo.run(&["attest", "--no-note", "main"]);
    out.expect(0);
    assert_eq!(
        crate::support::redact_ids(&out.stdout),
        "PASSED <id> (the merge of workflow main's ticket)\n  \
         re-ran: gates on the squashed commit: passed (tests)\n  \
         re-ran: subtask S1's tests (tests/base.sh, tests/hello.sh) on its base <id>: fail, as they must\n  \
         changed tests: tests/base.sh ([gates] pinned_tests = \"report\"; with them put back: the gates pass): reported\n  \
         warning: the PR changes or removes tests that existed on its base (tests/base.sh); the gates pass with them as they were there; [gates] pinned_tests = \"report\" reports this and does not refuse it\n\
         no note written: --no-note\n"
    );
    let json = repo.run(&["--json", "attest", "--no-note", "main"]);
    json.expect(0);
    let verdict = &json.json()["verdicts"][0];
    let changed = &verdict["changed_tests"];
    assert_eq!(
        *changed,
        serde_json::json!({"paths": ["tests/base.sh"], "mode": "report", "passed": true})
    );
    assert_eq!(verdict["changed_tests_verdict"], "reported");
    // The ticket's own final note on its squash records them as `attest` names them, field
    // by field, as a PR's final note does.
    let squash = repo.git(&["rev-parse", "main^2"]).trim().to_string();
    let note = ticket_note(&repo, &squash);
    assert_eq!(note["changed_tests"], *changed, "{note}");
    assert_eq!(
        note["changed_tests_verdict"], verdict["changed_tests_verdict"],
        "{note}"
    );

    // Under enforce, with the code changed so that the test as main had it fails.
    let repo = with_base_test(&format!(
        "{TICKET_CONFIG}\n[gates]\npinned_tests = \"enforce\"\n"
    ));
    gut(&repo, "changed");
    let out = repo.run(&["complete-ticket", "--summary", "hello"]);
    out.expect(1).warns(
        "the ticket changes tests that existed at its pin (tests/base.sh), and with them as they \
         were there, preflight gate `tests` fails",
    );
}

/// The developer's honest way to stop (docs/integrity.md, "A way to stop honestly"): its
/// briefing names the move, and a `blocked` report whose message starts `contradiction:` is
/// put before the manager, the developer's account quoted, for the manager to weigh; nothing
/// is merged by it.
#[test]
fn a_developers_contradiction_is_a_blocked_report_the_manager_reads() {
    let repo = repo();
    repo.run(&[
        "ticket",
        "new",
        "--title",
        "Greetings",
        "--subtask",
        "hello",
    ])
    .expect(0);
    assign(&repo, "Add hello", &["src/hello.sh", "tests/**"], &[]).expect(0);
    repo.run(&["get-task", "--role", "developer"])
        .expect(0)
        .says(
            "If the assignment and its acceptance criteria or tests cannot both hold, do not bend \
             the tests or special-case the code: report the subtask blocked (status blocked) with \
             a message that starts \"contradiction:\"",
        );
    let account = "contradiction: the goal says hello prints hello; tests/hello.sh, given, \
                   expects HELLO. Both cannot hold.";
    repo.write("tests/hello.sh", "[ \"$(sh src/hello.sh)\" = HELLO ]\n");
    repo.commit_all("the given test");
    repo.run(&[
        "subtask-complete",
        "--role",
        "developer",
        "--status",
        "blocked",
        "--build-status",
        "pass",
        "--message",
        account,
        "--blocker",
        "the test contradicts the goal",
        "--needed",
        "the manager decides which holds",
    ])
    .expect(0);
    repo.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says(&format!("Message: {account}\n"))
        .says("Blocker: the test contradicts the goal (needed: the manager decides which holds)");
    let t = ticket(&repo);
    assert_eq!(t["subtasks"][0]["report"]["status"], "blocked", "{t}");
    assert_eq!(t["subtasks"][0]["report"]["message"], account, "{t}");
}
