//! Bad input gets a clear error and changes nothing; wrong-state commands exit 4 naming the
//! state; every error has its exit code (docs/agent-guide.md, "Refusals and errors") and a JSON form.

use pretty_assertions::assert_eq;

use crate::support::{PLAN, TestRepo};

const PLAN_HINT: &str = "hint: Fix every problem listed and submit the plan again; `git orchestrate get-task` shows the schema.\n";

fn rejected_plan(repo: &TestRepo, plan: &str) -> String {
    let before = repo.tip();
    let out = repo.submit_plan(plan);
    out.expect(2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        repo.tip(),
        before,
        "a rejected plan must not move the workflow ref"
    );
    assert_eq!(repo.status(), "INITIALIZING");
    out.stderr.clone()
}

#[test]
fn a_rejected_first_plan_creates_no_workflow() {
    let repo = TestRepo::new();
    repo.submit_plan("{}").expect(2);
    assert_eq!(repo.tip(), None, "not even the workflow ref");
    repo.submit_plan(PLAN).expect(0);
    assert_eq!(repo.status(), "CREATING_BRANCH");
}

#[test]
fn bad_plans_are_rejected_with_every_problem_listed_and_nothing_written() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);

    assert_eq!(
        rejected_plan(&repo, "this is not { json"),
        format!(
            "error: the plan was not accepted (1 problem); nothing was written\n  \
             - (root): not valid JSON: expected ident at line 1 column 2\n{PLAN_HINT}"
        )
    );

    let missing =
        r#"{"prTitle": "feat: x", "tasks": [{"taskName": "t", "tdd_steps": [{"type": "RED"}]}]}"#;
    assert_eq!(
        rejected_plan(&repo, missing),
        format!(
            "error: the plan was not accepted (6 problems); nothing was written
  - masterPlanPath: missing (expected a non-empty string)
  - summary: missing (expected a non-empty string)
  - verificationPlan: missing (expected a non-empty string)
  - tasks[0].status: missing (expected TODO, IN_PROGRESS, DONE or ERROR)
  - tasks[0].tdd_steps[0].description: missing (expected a non-empty string)
  - tasks[0].tdd_steps[0].status: missing (expected TODO or DONE)
{PLAN_HINT}"
        )
    );

    let wrong_enum = PLAN.replace("\"REFACTOR\"", "\"CLEANUP\"").replace(
        "\"status\": \"TODO\", \"tdd_steps\"",
        "\"status\": \"STARTED\", \"tdd_steps\"",
    );
    assert_eq!(
        rejected_plan(&repo, &wrong_enum),
        format!(
            "error: the plan was not accepted (3 problems); nothing was written
  - tasks[0].status: expected TODO, IN_PROGRESS, DONE or ERROR, found \"STARTED\"
  - tasks[0].tdd_steps[2].type: expected RED, GREEN or REFACTOR, found \"CLEANUP\"
  - tasks[1].status: expected TODO, IN_PROGRESS, DONE or ERROR, found \"STARTED\"
{PLAN_HINT}"
        )
    );

    let empty_tasks = r#"{"masterPlanPath": "docs/plan.md", "prTitle": "feat: x", "summary": "s", "verificationPlan": "v", "tasks": []}"#;
    assert_eq!(
        rejected_plan(&repo, empty_tasks),
        format!(
            "error: the plan was not accepted (1 problem); nothing was written\n  - tasks: must contain at least one task\n{PLAN_HINT}"
        )
    );

    // The plan must come from the configured master plan: finalization edits that file.
    let elsewhere = PLAN.replace("docs/plan.md", "src/lib.rs");
    assert_eq!(
        rejected_plan(&repo, &elsewhere),
        format!(
            "error: the plan was not accepted (1 problem); nothing was written\n  - masterPlanPath: is \"src/lib.rs\", but the configured master plan (master_plan in .orchestrate.toml) is \"docs/plan.md\"; the plan must come from it\n{PLAN_HINT}"
        )
    );

    // The same problems as JSON, on stdout.
    let out = repo.run_with_stdin(
        &["--json", "submit-work", "-s", "p", "--plan", "-"],
        empty_tasks,
    );
    out.expect(2);
    assert_eq!(
        out.json(),
        serde_json::json!({
            "schema": 1,
            "error": {
                "code": 2,
                "kind": "invalid_plan",
                "message": "the plan was not accepted (1 problem); nothing was written",
                "state": "INITIALIZING",
                "hint": "Fix every problem listed and submit the plan again; `git orchestrate get-task` shows the schema.",
                "problems": [{"path": "tasks", "message": "must contain at least one task"}],
            }
        })
    );

    // A plan file that does not exist.
    let out = repo.run(&["submit-work", "-s", "p", "--plan", "no-such-plan.json"]);
    out.expect(2);
    assert!(
        out.stderr
            .starts_with("error: cannot read the plan no-such-plan.json: "),
        "{}",
        out.stderr
    );
}

#[test]
fn commands_in_the_wrong_state_exit_4_and_name_the_state() {
    let repo = TestRepo::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["submit-work", "-s", "x", "--test-command", "true"],
            "error: submit-work --test-command is not accepted in state INITIALIZING: no PR plan is active yet\n\
             hint: Submit a plan first: `git orchestrate submit-work --summary \"<one line>\" --plan FILE` (`git orchestrate get-task` shows the schema).\n",
        ),
        (
            &["submit-work", "-s", "x", "--analysis-decision", "SUCCESS"],
            "error: submit-work --analysis-decision is not accepted in state INITIALIZING: no PR plan is active yet\n\
             hint: Submit a plan first: `git orchestrate submit-work --summary \"<one line>\" --plan FILE` (`git orchestrate get-task` shows the schema).\n",
        ),
        (
            &["checkpoint"],
            "error: checkpoint is not accepted in state INITIALIZING: there is no PR branch yet\n\
             hint: Run `git orchestrate get-task` for the current instruction.\n",
        ),
        (
            &["submit-work", "-s", "done"],
            "error: submit-work without --plan, --test-command or --analysis-decision confirms a finalization step; in state INITIALIZING there is none\n\
             hint: Run `git orchestrate get-task` for the current instruction.\n",
        ),
        (
            &["approve"],
            "error: nothing waits for a human's approval in state INITIALIZING\n\
             hint: `git orchestrate status` shows where the workflow stands.\n",
        ),
    ];
    for (args, stderr) in cases {
        let out = if args[0] == "approve" {
            repo.human(args)
        } else {
            repo.run(args)
        };
        out.expect(4);
        assert_eq!(out.stderr, *stderr, "{args:?}");
    }
    for args in [
        &["resume"][..],
        &["reject", "--comment", "no"],
        &["escalate", "--report", "-"],
        &["request-scope-reduction"],
    ] {
        let out = if args[0] == "escalate" || args[0] == "request-scope-reduction" {
            repo.run(args)
        } else {
            repo.human(args)
        };
        out.expect(4);
        assert!(
            out.stderr.contains("is not accepted in state INITIALIZING")
                || out.stderr.contains("in state INITIALIZING"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert!(
        !repo
            .git_try(&[
                "rev-parse",
                "--verify",
                "--quiet",
                "refs/orchestrator/workflows/main"
            ])
            .0,
        "a refused command creates no workflow"
    );

    repo.submit_plan(PLAN).expect(0);
    let out = repo.submit_test("true", None);
    out.expect(4);
    assert!(
        out.stderr
            .contains("in state CREATING_BRANCH: the PR branch has not been created yet"),
        "{}",
        out.stderr
    );

    repo.run(&["get-task"]).expect(0);
    let tip = repo.tip();
    let out = repo.submit_plan(PLAN);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: submit-work --plan is not accepted in state EXECUTING_TDD: the plan \"feat: Add numbers\" is active\n\
         hint: Run `git orchestrate get-task` for the current instruction.\n"
    );
    let out = repo.run(&[
        "--json",
        "submit-work",
        "-s",
        "x",
        "--analysis-decision",
        "FAILURE",
    ]);
    out.expect(4);
    assert_eq!(
        out.json()["error"],
        serde_json::json!({
            "code": 4,
            "kind": "wrong_state",
            "message": "no analysis is pending in state EXECUTING_TDD: --analysis-decision answers a NEEDS_ANALYSIS result",
            "state": "EXECUTING_TDD",
            "hint": "Run `git orchestrate get-task` for the current instruction.",
        })
    );
    assert_eq!(repo.tip(), tip, "refused commands write nothing");
}

#[test]
fn an_expectation_that_contradicts_the_step_is_refused() {
    let repo = TestRepo::at_first_step();
    let tip = repo.tip();
    let out = repo.submit_test("true", Some("PASS"));
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: step 1.1 is a RED step, so its test is expected to fail; --expectation PASS does not fit it\n\
         hint: Submit with --expectation FAIL, or leave --expectation out.\n"
    );
    assert_eq!(repo.tip(), tip);
}

#[test]
fn usage_errors_exit_2() {
    let repo = TestRepo::new();
    let out = repo.run(&["submit-work"]);
    out.expect(2);
    assert!(out.stderr.contains("--summary"), "{}", out.stderr);
    let out = repo.run(&[
        "submit-work",
        "-s",
        "x",
        "--test-command",
        "true",
        "--analysis-decision",
        "SUCCESS",
    ]);
    out.expect(2);
    let out = repo.run(&[
        "submit-work",
        "-s",
        "x",
        "--test-command",
        "true",
        "--expectation",
        "MAYBE",
    ]);
    out.expect(2);
    let out = repo.run(&["--json", "submit-work", "--plan"]);
    out.expect(2);
    assert_eq!(out.json()["error"]["kind"], "usage");
    let out = repo.run(&["submit-work", "-s", "  ", "--test-command", "true"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: --summary must not be empty\nhint: Say in one line what you did, e.g. --summary \"add() sums two numbers\".\n"
    );
    assert_eq!(repo.tip(), None, "nothing was created by bad usage");
}

#[test]
fn hostile_workflow_names_are_refused() {
    let repo = TestRepo::new();
    for name in ["../escape", "a b", "-rf", "x.lock", "refs/heads/main"] {
        let out = repo.run(&[&format!("--workflow={name}"), "status"]);
        out.expect(2);
        assert!(
            out.stderr
                .starts_with(&format!("error: invalid workflow name \"{name}\"")),
            "{}",
            out.stderr
        );
    }
    let (ok, refs) = repo.git_try(&["for-each-ref", "refs/orchestrator"]);
    assert!(ok && refs.is_empty(), "{refs}");
}

#[test]
fn outside_a_repository_the_exit_code_is_5() {
    let dir = tempfile::tempdir().unwrap();
    let repo = TestRepo::new();
    let out = repo.run_in(dir.path(), &["status"]);
    out.expect(5);
    // Said once, whole.
    let real = dir.path().canonicalize().unwrap();
    assert!(
        out.stderr.starts_with(&format!(
            "error: not a git repository: neither {} nor any directory above it is in one
             hint: Run git orchestrate inside a git repository with a working tree.
",
            real.display()
        )) || out.stderr.starts_with(&format!(
            "error: not a git repository: neither {} nor any directory above it is in one
",
            dir.path().display()
        )),
        "{}",
        out.stderr
    );
    let out = repo.run_in(dir.path(), &["--json", "get-task"]);
    out.expect(5);
    assert_eq!(out.json()["error"]["kind"], "store");
}

#[test]
fn an_unknown_config_key_is_an_error_naming_key_and_line_and_nothing_is_written() {
    let repo =
        TestRepo::with_config("main_branch = \"main\"\n\n[test]\ntimeout = \"1m\"\nretries = 3\n");
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert!(
        out.stderr.starts_with(
            "error: invalid .orchestrate.toml (working tree): TOML parse error at line 5, column 1"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("unknown field `retries`"),
        "{}",
        out.stderr
    );
    // The workflow ref is created before the config is read for the briefing; the bad config
    // must stop everything that depends on it.
    let out = repo.run(&["init"]);
    out.expect(2);
    assert!(
        out.stderr.contains("unknown field `retries`"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_bad_duration_is_an_error() {
    let repo = TestRepo::with_config(
        "[[preflight]]\nname = \"t\"\ncommand = \"true\"\ntimeout = \"ten minutes\"\n",
    );
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert!(out.stderr.contains("line 4"), "{}", out.stderr);
    assert!(
        out.stderr.contains("invalid duration \"ten minutes\""),
        "{}",
        out.stderr
    );
    // status still shows where the workflow stands, with the config error in it.
    let out = repo.run(&["status"]);
    out.expect(0);
    assert!(
        out.stdout.contains("state     INITIALIZING\nconfig    INVALID: invalid .orchestrate.toml (working tree): TOML parse error at line 4"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("WARNING: the configuration is invalid: get-task, submit-work and checkpoint refuse to run until it is fixed\n"),
        "{}",
        out.stdout
    );
    let json = repo.run(&["status", "--json"]).expect(0).json();
    assert!(
        json["config"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("invalid duration \"ten minutes\"")),
        "{json}"
    );
}

#[test]
fn a_corrupt_state_is_a_clear_error_not_a_guess() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    let commit =
        repo.write_workflow_commit(&[("state.json", br#"{"schema": 1, "status": "PARTYING"}"#)]);
    let out = repo.run(&["get-task"]);
    out.expect(5);
    assert!(
        out.stderr.starts_with(&format!(
            "error: cannot read state.json of refs/orchestrator/workflows/main (commit {commit}): unknown variant `PARTYING`"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.tip().as_deref(),
        Some(commit.trim()),
        "nothing was written over it"
    );
}

/// What a new team meets first: each a clear error naming what to create, and nothing
/// written.
#[test]
fn a_missing_first_commit_or_master_plan_is_named_with_what_to_create() {
    // No commit at all: init refuses, and writes nothing.
    let repo = TestRepo::empty();
    let out = repo.run(&["init"]);
    out.expect(4);
    assert!(
        out.stderr.starts_with(
            "error: this repository has no commit yet: git-orchestrate starts every PR branch \
             from the main branch, so it needs a first commit; nothing was changed\n\
             hint: Make the first commit (for example `git commit --allow-empty -m \"Initial \
             commit\"`, or commit your project), then run `git orchestrate init` again.\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!repo.path.join(".orchestrate.toml").exists());
    let (_, refs) = repo.git_try(&["for-each-ref", "refs/orchestrator"]);
    assert_eq!(refs, "");

    // The master plan is not on main: doctor says so, and a plan naming it is refused.
    let repo = TestRepo::new();
    repo.git(&["rm", "--quiet", "docs/plan.md"]);
    repo.git(&["commit", "--quiet", "-m", "no plan"]);
    let doctor = repo.run(&["--json", "doctor"]);
    doctor.expect(1);
    let checks = doctor.json()["checks"].clone();
    let check = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "master plan")
        .unwrap()
        .clone();
    assert_eq!(check["level"], "error");
    assert_eq!(
        check["fix"],
        "create docs/plan.md with a `## PR 1: <title>` heading for each pull request, and commit it on main"
    );
    let out = repo.submit_plan(PLAN);
    out.expect(2);
    assert!(
        out.stderr.contains(
            "  - masterPlanPath: the master plan docs/plan.md is not on the main branch main: create \
             it there (a `## PR 1: <title>` heading for each pull request) and commit it, then submit \
             the plan again\n"
        ),
        "{}",
        out.stderr
    );
    let (_, refs) = repo.git_try(&["for-each-ref", "refs/orchestrator"]);
    assert_eq!(refs, "", "nothing written, not even a workflow");
}

/// A ref backend git-orchestrate cannot serve (neither gix's files nor git's own commands
/// for reftable: a format named in config that no git knows) is refused by name, with exit 5
/// and nothing written, by `init` (which used to say "no commit yet") and the rest.
#[test]
fn an_unknown_ref_backend_is_refused_by_name_and_nothing_is_written() {
    let repo = TestRepo::empty_with_ref_format(None);
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "first"]);
    repo.git(&["config", "core.repositoryformatversion", "1"]);
    repo.git(&["config", "extensions.refStorage", "tape"]);
    for args in [
        &["init"][..],
        &["status"],
        &["get-task"],
        &["--json", "board"],
    ] {
        let out = repo.run(args);
        out.expect(5);
        if args[0] == "--json" {
            assert_eq!(out.json()["error"]["kind"], "store", "{args:?}");
            continue;
        }
        assert!(
            out.stderr.starts_with(
                "error: this repository keeps its refs in the tape backend (extensions.refStorage = tape in "
            ) && out.stderr.contains("git refs migrate --ref-format=files"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // git itself refuses the repository now: the setting is taken out of the file directly.
    let config = repo.path.join(".git/config");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("refStorage = tape", "")).unwrap();
    assert_eq!(repo.git(&["for-each-ref", "refs/orchestrator"]), "");
    assert!(!repo.path.join(".orchestrate.toml").exists());
}

/// The program links gcc's unwinder in statically (build.rs): it loads no libgcc_s, and a
/// panic still unwinds to the entry point's catch, which reports it and exits 101.
#[test]
fn a_panic_unwinds_to_exit_101_with_no_libgcc_s_loaded() {
    let repo = TestRepo::new();
    let out = repo
        .command(crate::support::BIN, ["status"])
        .env("GIT_ORCHESTRATE_CRASH_AT", "panic:start")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("crash point start"), "{stderr}");
    assert!(out.stdout.is_empty());
    // Without the panic, the same call answers.
    repo.run(&["status"]).expect(0);

    let dynamic = std::process::Command::new("readelf")
        .args(["--dynamic", crate::support::BIN])
        .output()
        .expect("readelf (binutils) runs");
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        dynamic.contains("(NEEDED)") && dynamic.contains("libc.so"),
        "{dynamic}"
    );
    assert!(!dynamic.contains("libgcc_s"), "{dynamic}");
}
