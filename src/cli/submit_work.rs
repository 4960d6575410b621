//! `git orchestrate submit-work`: the verification gateway.

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::error::CommandError;
use super::render::{exit_and_time, output_block, preflight_line};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Session, SubmitKind, SubmitReport};
use crate::workflow::{Decision, Expectation, Status, Verdict};

/// Submit work for verification: a plan, a test run, an analysis, a finalization step.
///
/// A PR plan (--plan), a test run (--test-command), your judgement of a NEEDS_ANALYSIS result
/// (--analysis-decision), that no PR is left to do (--no-pr-left), or that the task contradicts
/// its test (--contradiction, which halts for a human). With only --summary it confirms
/// a finalization step (the squash, the master-plan commit), which is then checked; --squash and
/// --mark-done make that step's commit first. Never run tests to judge your work yourself; this
/// runs them, then the preflight gates.
///
/// Exit codes: 0 SUCCESS, 1 FAILURE, 3 NEEDS_ANALYSIS, 2 invalid input, 4 not accepted in
/// this state, 5 repository or store problem, 10 halted for a human (--contradiction).
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("work").args(["test_command", "analysis_decision", "plan", "no_pr_left", "squash", "mark_done", "contradiction"])))]
pub struct SubmitWorkArgs {
    /// A brief summary of what you did and why; it is recorded in the workflow's history.
    #[arg(long, short)]
    pub summary: String,

    /// The command that runs the test for this step (`sh -c`, in the repository root, stdin
    /// closed, killed with its process group at `test.timeout`).
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["analysis_decision", "plan"])]
    pub test_command: Option<String>,

    /// What the test must do: FAIL for a RED step, PASS for GREEN and REFACTOR (the default
    /// follows the step, and a contradicting value is refused).
    #[arg(long, value_enum, ignore_case = true, requires = "test_command")]
    pub expectation: Option<ExpectationArg>,

    /// After NEEDS_ANALYSIS: SUCCESS if the RED test failed for the intended reason, FAILURE if
    /// for another one.
    #[arg(long, value_enum, ignore_case = true, conflicts_with = "plan")]
    pub analysis_decision: Option<DecisionArg>,

    /// The PR plan as JSON (schema: `git orchestrate get-task` in INITIALIZING): a file, or
    /// `-` to read it from stdin.
    #[arg(long, value_name = "FILE|-")]
    pub plan: Option<PathBuf>,

    /// In INITIALIZING: every PR of the master plan is marked [DONE], so there is nothing to
    /// plan. get-task then answers "nothing left to do" until the master plan changes on the
    /// main branch.
    #[arg(long)]
    pub no_pr_left: bool,

    /// In AWAITING_FINALIZATION: squash the branch's commits into one titled with the PR title
    /// (the plan's summary as its body), then confirm it. A squash the check refuses is undone.
    #[arg(long)]
    pub squash: bool,

    /// In FINALIZE_COMPLETE: mark this PR's heading in the master plan `[DONE] <squashed
    /// commit>`, commit only that file, then confirm it. A commit the check refuses is undone.
    #[arg(long)]
    pub mark_done: bool,

    /// While a test holds the work (EXECUTING_TDD, DEBUGGING, REPLANNING): the task and its
    /// test contradict each other, and TEXT says how (what the task asks, what the test holds,
    /// why both cannot be true). The workflow halts for a human with your account (exit 10),
    /// instead of leaving a bent test or special-cased code as the only way on.
    #[arg(long, value_name = "TEXT")]
    pub contradiction: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExpectationArg {
    #[value(name = "PASS")]
    Pass,
    #[value(name = "FAIL")]
    Fail,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DecisionArg {
    #[value(name = "SUCCESS")]
    Success,
    #[value(name = "FAILURE")]
    Failure,
}

pub fn run(session: &Session, args: &SubmitWorkArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if args.summary.trim().is_empty() {
        return Err(Failure::from(CommandError::invalid_input(
            "--summary must not be empty",
            "Say in one line what you did, e.g. --summary \"add() sums two numbers\".",
        )));
    }
    let kind = match (&args.plan, &args.test_command, args.analysis_decision) {
        _ if args.no_pr_left => SubmitKind::NoPrLeft,
        _ if args.squash => SubmitKind::Squash,
        _ if args.mark_done => SubmitKind::MarkDone,
        _ if args.contradiction.is_some() => {
            SubmitKind::Contradiction(args.contradiction.clone().unwrap_or_default())
        }
        (Some(path), _, _) => SubmitKind::Plan(super::input::read_input(
            path,
            "the plan",
            "Pass a readable JSON file with --plan FILE, or pipe it with --plan -.",
        )?),
        (_, Some(command), _) if command.trim().is_empty() => {
            return Err(Failure::from(CommandError::invalid_input(
                "--test-command must not be empty",
                "Pass the command that runs this step's test.",
            )));
        }
        (_, Some(command), _) => SubmitKind::Test {
            command: command.clone(),
            expectation: args.expectation.map(|e| match e {
                ExpectationArg::Pass => Expectation::Pass,
                ExpectationArg::Fail => Expectation::Fail,
            }),
        },
        (_, _, Some(decision)) => SubmitKind::Analysis(match decision {
            DecisionArg::Success => Decision::Success,
            DecisionArg::Failure => Decision::Failure,
        }),
        (None, None, None) => SubmitKind::Confirm,
    };
    let report = super::live::while_running(|| engine::submit(session, &args.summary, &kind))?;
    let code = match report.state {
        // A contradiction halts for a human, as `escalate` does.
        Status::Halted => Exit::Halted,
        _ => exit_of(report.verdict),
    };
    if ui.json_report(&report)? {
        return Ok(code);
    }
    ui.text(&render_text(session, &report, ui.quiet))?;
    Ok(code)
}

/// The exit code of a verdict.
pub(super) fn exit_of(verdict: Verdict) -> Exit {
    match verdict {
        Verdict::Success => Exit::Success,
        Verdict::Failure => Exit::VerificationFailed,
        Verdict::NeedsAnalysis => Exit::NeedsAnalysis,
    }
}

/// The report as people see it: what to do next last, under the output.
pub(super) fn render_text(session: &Session, report: &SubmitReport, quiet: bool) -> String {
    render(session, report, if quiet { None } else { Some(false) })
}

/// The report as an agent reads it in a tool result: what to do next right under the
/// headline, ahead of any quoted output, since a client may show the model only the start of
/// a long result (docs/agent-guide.md).
pub(super) fn render_for_agent(session: &Session, report: &SubmitReport) -> String {
    render(session, report, Some(true))
}

/// `next_first`: `None` leaves the state and next line out; `Some(true)` puts it under the
/// headline, `Some(false)` at the end.
fn render(session: &Session, report: &SubmitReport, next_first: Option<bool>) -> String {
    let verdict = report.verdict.as_str();
    let headline = report
        .headline
        .strip_prefix(&format!("{verdict}: "))
        .unwrap_or(&report.headline);
    // A contradiction is accepted, and what it did is halt: said as the state, not SUCCESS.
    let said = match report.state {
        Status::Halted => "HALTED",
        _ => verdict,
    };
    let mut text = format!("{said}: {headline}\n");
    let next_line = || {
        let state = match report.state {
            Status::Debugging => format!("DEBUGGING (attempt {})", report.debug_attempt_counter),
            status => status.to_string(),
        };
        format!("state: {state} · next: {}\n", report.next)
    };
    if next_first == Some(true) {
        text.push_str(&next_line());
    }
    if let Some(test) = &report.test {
        text.push_str(&format!(
            "$ {}   ({})\n",
            test.command,
            exit_and_time(&test.exit, test.ms)
        ));
    }
    if let Some(pre) = &report.preflight {
        text.push_str(&preflight_line(pre));
        text.push('\n');
    }
    for note in &report.notes {
        text.push_str(&format!("note: {note}\n"));
    }
    if report.verdict != Verdict::Success && !report.output.is_empty() {
        let command = session.store.output_log_command();
        text.push_str(&output_block(&report.output_tail, Some(&command)));
    }
    if next_first == Some(false) {
        text.push_str(&next_line());
    }
    text
}
