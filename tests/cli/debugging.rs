//! DEBUGGING entry and exit (docs/agent-guide.md, "DEBUGGING"): failing submits, passing RED tests, failing
//! gates, hanging commands, and output kept verbatim.

use pretty_assertions::assert_eq;

use crate::support::{RED, REF, TestRepo};

#[test]
fn a_failing_pass_submit_enters_debugging_with_the_verbatim_output_in_the_next_briefing() {
    let repo = TestRepo::at_green_step();
    let command = r#"printf 'compiling\nerror[E0425]: cannot find `add` in "scope"\n' ; printf 'tab\there $HOME\n' >&2; exit 101"#;
    let out = repo.submit_test(command, Some("PASS"));
    out.expect(1);
    assert!(out.stdout.starts_with("FAILURE: `printf"), "{}", out.stdout);
    assert!(
        out.stdout.contains("state: DEBUGGING (attempt 1)"),
        "{}",
        out.stdout
    );

    let state = repo.state();
    assert_eq!(state["status"], "DEBUGGING");
    assert_eq!(state["debug_attempt_counter"], 1);
    assert_eq!(
        state["last_error"],
        "compiling\nerror[E0425]: cannot find `add` in \"scope\"\ntab\there $HOME\n"
    );

    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    let quoted = format!("'{}'", command.replace('\'', r"'\''"));
    let expected = format!(
        "git-orchestrate · workflow main · DEBUGGING
PR: feat: Add numbers · branch feat/add-numbers · 1 of 5 steps done

Your previous submission failed. Your new primary goal is to fix the bug.

STEP 1.2 (GREEN) of task 1/2 \"add\":
  implement add

Debugging attempt 1 on this step.
What failed: your test command `{command}` failed (exit 101).

Guidance: read the output below, form one hypothesis about the cause, make one focused fix,
and submit again:

  git orchestrate submit-work --summary \"<hypothesis and fix>\" --test-command {quoted} --expectation PASS

Output (the end of it; all of it, byte for byte: git show refs/orchestrator/workflows/main:output.log):
----- BEGIN OUTPUT 870b9798e864be53 (quoted; nothing before END OUTPUT 870b9798e864be53 is from git-orchestrate) -----
compiling
error[E0425]: cannot find `add` in \"scope\"
tab\there $HOME
----- END OUTPUT 870b9798e864be53 -----

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"
    );
    assert_eq!(brief, expected);

    // A second failure counts up; a passing submit leaves debugging and clears the error.
    repo.submit_test("exit 2", None).expect(1);
    assert_eq!(repo.state()["debug_attempt_counter"], 2);
    repo.submit_test("true", None).expect(0);
    let state = repo.state();
    assert_eq!(state["status"], "EXECUTING_TDD");
    assert!(state.get("debug_attempt_counter").is_none(), "{state}");
    assert!(state.get("last_error").is_none(), "{state}");
    assert_eq!(state["pending"]["kind"], "checkpoint");
}

#[test]
fn output_that_is_not_utf8_is_kept_byte_for_byte_in_output_log() {
    let repo = TestRepo::at_green_step();
    repo.submit_test(r"printf 'bad \377\376 bytes\n'; exit 1", None)
        .expect(1);
    let out = repo
        .command("git", ["show", &format!("{REF}:output.log")])
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"bad \xff\xfe bytes\n");
    // Briefings show it lossily.
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("bad \u{fffd}\u{fffd} bytes\n"), "{brief}");
}

#[test]
fn a_red_test_that_passes_enters_debugging() {
    let repo = TestRepo::at_first_step();
    let out = repo.submit_test("echo 'all good'", Some("FAIL"));
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: the RED test `echo 'all good'` passed (exit 0), but a RED test must fail; debugging attempt 1\n"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(repo.status(), "DEBUGGING");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "What failed: your RED test `echo 'all good'` passed (exit 0), but a RED test must fail: it does not yet show that the behaviour is missing."
        ),
        "{brief}"
    );
    assert!(brief.contains("--expectation FAIL"), "{brief}");

    // Failing as expected while debugging asks for analysis; SUCCESS leaves debugging.
    repo.submit_test("exit 1", None).expect(3);
    assert_eq!(repo.status(), "DEBUGGING");
    repo.run(&[
        "submit-work",
        "-s",
        "right reason",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    assert_eq!(repo.status(), "EXECUTING_TDD");
    assert_eq!(
        repo.run(&["get-task", "--json"]).expect(0).json()["step"]["id"],
        "1.2"
    );
}

#[test]
fn analysis_failure_enters_debugging_with_the_analysed_output() {
    let repo = TestRepo::at_first_step();
    repo.submit_test("echo 'syntax error near line 3'; exit 2", None)
        .expect(3);
    let out = repo.run(&[
        "submit-work",
        "-s",
        "a typo, not the missing feature",
        "--analysis-decision",
        "FAILURE",
    ]);
    out.expect(1);
    let state = repo.state();
    assert_eq!(state["status"], "DEBUGGING");
    assert_eq!(state["last_error"], "syntax error near line 3\n");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("What failed: you judged that your RED test `echo 'syntax error near line 3'; exit 2` failed for the wrong reason (exit 2)."),
        "{brief}"
    );
}

#[test]
fn a_failing_preflight_gate_enters_debugging_with_the_gate_output() {
    let repo = TestRepo::at_green_step();
    repo.write("fail", "");
    let out = repo.submit_test("echo test passes", Some("PASS"));
    out.expect(1);
    assert!(
        out.stdout.starts_with(
            "FAILURE: `echo test passes` passed (exit 0), but preflight gate `tests` failed; debugging attempt 1\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("preflight: tests FAILED (exit 1, "),
        "{}",
        out.stdout
    );
    assert_eq!(repo.state()["last_error"], "tests: FAILED (fail exists)\n");
    assert_eq!(
        repo.git(&["show", &format!("{REF}:output.log")]),
        "tests: FAILED (fail exists)\n"
    );
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("What failed: your test command `echo test passes` passed, but the preflight gate `tests` failed (exit 1)."),
        "{brief}"
    );
}

#[test]
fn no_preflight_is_reported_as_none_configured_never_as_a_pass() {
    let repo = TestRepo::with_config("");
    // No config at all: the plan names the default master plan, which is on main.
    repo.write(
        "docs/Plan_Doc/Active_Plan.md",
        "# Plan\n## PR 1: feat: Add numbers\n",
    );
    repo.commit_all("the master plan");
    repo.submit_plan(&crate::support::PLAN.replace("docs/plan.md", "docs/Plan_Doc/Active_Plan.md"))
        .expect(0);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("WARNING: no preflight gates are configured ([[preflight]] in .orchestrate.toml, read from built-in defaults (no .orchestrate.toml)): a PASS is verified by the agent's test command alone"),
        "{brief}"
    );
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    let out = repo.submit_test("true", None).expect(0).stdout.clone();
    assert!(
        out.contains(
            "preflight: none configured (WARNING: a pass was verified by the test command alone)"
        ),
        "{out}"
    );
    let json = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(
        json["last_run"]["preflight"],
        serde_json::json!({"passed": true, "gates": []})
    );
}

#[test]
fn a_hanging_test_command_is_killed_at_its_timeout_with_its_children() {
    let repo = TestRepo::with_config(&crate::support::CONFIG.replace(
        "timeout = \"30s\"\noutput_tail",
        "timeout = \"1s\"\noutput_tail",
    ));
    repo.submit_plan(crate::support::PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    let pidfile = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("child-{}.pid", std::process::id()));
    let command = format!(
        "echo started; sleep 300 & echo $! > {}; wait",
        pidfile.display()
    );
    let out = repo.submit_test(&command, Some("FAIL"));
    // A RED test that hangs "fails": it is for the agent to judge, with the timeout named.
    out.expect(3);
    assert!(
        out.stdout.contains("failed (killed after the 1s timeout)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("started\n"), "{}", out.stdout);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_file(&pidfile);
    assert!(
        crate::process_gone(pid),
        "the child {pid} of the timed-out command is still running"
    );
}

#[test]
fn a_hanging_pass_submit_enters_debugging_naming_the_timeout() {
    let repo = TestRepo::with_config(&crate::support::CONFIG.replace(
        "timeout = \"30s\"\noutput_tail",
        "timeout = \"1s\"\noutput_tail",
    ));
    repo.submit_plan(crate::support::PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test("exit 1", None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.submit_test("sleep 300", None).expect(1);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "What failed: your test command `sleep 300` failed (killed after the 1s timeout)."
        ),
        "{brief}"
    );
}
