//! The demo's scenario as a table of steps: what the scripted agent and human do, in order,
//! and what each command is expected to do. Data only; src/demo/runner.rs carries it out.

use std::path::Path;

use super::files::{
    CALC_ADD, CALC_ADD_REFACTOR_BROKEN, CALC_ADD_REFACTOR_FIXED, CALC_EMPTY, CONFIG, ESCALATION,
    MASTER_PLAN, MCP_SESSION, PLAN, PLAN_2, REPLAN, REVIEWER, RUN_ALL, calc_test, calc_with,
};

/// Where the demo project keeps its master plan (as .orchestrate.toml says).
const MASTER_PLAN_PATH: &str = "docs/Plan_Doc/Active_Plan.md";

/// Who does a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Actor {
    Agent,
    /// A person: their `git orchestrate` commands run as typed in a terminal.
    Human,
    /// Ticket mode's manager agent (docs/tickets.md).
    Manager,
    /// Ticket mode's developer agent.
    Developer,
}

impl Actor {
    /// The name the narration and `--json` give the actor.
    pub(super) fn name(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::Human => "human",
            Actor::Manager => "manager",
            Actor::Developer => "developer",
        }
    }
}

/// The exit code the script expects of a `git orchestrate` command (the program's exit codes,
/// as `git orchestrate --help` lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    Success = 0,
    VerificationFailed = 1,
    NeedsAnalysis = 3,
    NotAllowed = 4,
    Halted = 10,
}

impl Expect {
    pub(super) fn code(self) -> i32 {
        self as i32
    }
}

/// One step of the scenario.
#[derive(Debug)]
pub(super) enum Step {
    /// Narration for people; nothing is done.
    Say(&'static str),
    /// Something done outside `git orchestrate` (editing files, looking at git), announced;
    /// the steps after it do it.
    Act(Actor, &'static str),
    /// Writes a file of the project.
    Write { path: &'static str, content: String },
    /// Writes a file of the project whose content names HEAD: `content(short hash of HEAD)`.
    WriteNamingHead {
        path: &'static str,
        content: fn(&str) -> String,
    },
    /// Removes a file of the project.
    Remove(&'static str),
    /// Runs git quietly; it must succeed.
    Git(Vec<&'static str>),
    /// Runs git quietly, and narrates what it printed after `heading`, if any.
    ShowGit {
        heading: Option<&'static str>,
        args: Vec<&'static str>,
    },
    /// Squashes the branch into one commit on its merge base with the branch `onto`.
    Squash {
        onto: &'static str,
        message: &'static str,
    },
    /// A git command the actor types, hooks and all, shown with what it printed; `succeeds`
    /// is what the script expects of it.
    TypeGit {
        actor: Actor,
        what: &'static str,
        args: Vec<&'static str>,
        succeeds: bool,
    },
    /// `git orchestrate ARGS`, as the actor runs it, with `stdin` if any.
    Orchestrate {
        actor: Actor,
        what: &'static str,
        args: Vec<&'static str>,
        stdin: Option<&'static str>,
        expect: Expect,
    },
}

/// The narration that opens the demo, naming the repository (its last word).
pub(super) fn intro(repo: &Path) -> String {
    format!(
        "git-orchestrate demo: a throwaway repository at {}\n\
                  A scripted agent drives the real `git orchestrate` binary through one PR, from its plan to\n\
         its merge: RED, GREEN and REFACTOR steps with checkpoints; debugging, a scope reduction and\n\
         a re-plan; an escalation that a human answers; a code review round with a finding; the\n\
         squash, the master-plan update and the merge; then the start of the next PR.",
        repo.display()
    )
}

/// The whole scenario, in order.
pub(super) fn scenario() -> Vec<Step> {
    [
        setup(),
        add_story(),
        sub_story(),
        escalation_story(),
        review_story(),
        finalize_story(),
        agents_story(),
        closing(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

pub(super) fn act(actor: Actor, what: &'static str) -> Step {
    Step::Act(actor, what)
}

pub(super) fn write(path: &'static str, content: impl Into<String>) -> Step {
    Step::Write {
        path,
        content: content.into(),
    }
}

pub(super) fn git(args: &[&'static str]) -> Step {
    Step::Git(args.to_vec())
}

fn orchestrate(
    actor: Actor,
    what: &'static str,
    args: &[&'static str],
    stdin: Option<&'static str>,
    expect: Expect,
) -> Step {
    Step::Orchestrate {
        actor,
        what,
        args: args.to_vec(),
        stdin,
        expect,
    }
}

fn agent(what: &'static str, args: &[&'static str], expect: Expect) -> Step {
    orchestrate(Actor::Agent, what, args, None, expect)
}

fn human(what: &'static str, args: &[&'static str], expect: Expect) -> Step {
    orchestrate(Actor::Human, what, args, None, expect)
}

fn get_task(what: &'static str) -> Step {
    agent(what, &["get-task"], Expect::Success)
}

fn checkpoint() -> Step {
    agent("checkpoint", &["checkpoint"], Expect::Success)
}

/// The agent submits a test run: `submit-work --summary SUMMARY --test-command COMMAND`.
fn submit_test(
    what: &'static str,
    summary: &'static str,
    command: &'static str,
    expect: Expect,
) -> Step {
    let args = [
        "submit-work",
        "--summary",
        summary,
        "--test-command",
        command,
    ];
    agent(what, &args, expect)
}

/// The agent says a RED test failed for the intended reason.
fn analysis(what: &'static str, summary: &'static str) -> Step {
    let args = [
        "submit-work",
        "--summary",
        summary,
        "--analysis-decision",
        "SUCCESS",
    ];
    agent(what, &args, Expect::Success)
}

/// The agent submits a plan on stdin, as the briefing suggests.
fn submit_plan(what: &'static str, summary: &'static str, plan: &'static str) -> Step {
    let args = ["submit-work", "--summary", summary, "--plan", "-"];
    orchestrate(Actor::Agent, what, &args, Some(plan), Expect::Success)
}

/// A repository with the tiny project, its master plan and config, and the hooks.
fn setup() -> Vec<Step> {
    vec![
        act(
            Actor::Human,
            "set up a repository with a tiny project, a master plan and .orchestrate.toml",
        ),
        git(&["init", "--quiet", "--initial-branch=main"]),
        git(&["config", "user.name", "Demo Human"]),
        git(&["config", "user.email", "human@demo.invalid"]),
        git(&["config", "commit.gpgsign", "false"]),
        git(&["config", "core.hooksPath", ".git/hooks"]),
        write(MASTER_PLAN_PATH, MASTER_PLAN),
        write("tests/run_all.sh", RUN_ALL),
        write("lib/calc.sh", CALC_EMPTY),
        write("tools/review.sh", REVIEWER),
        write(".orchestrate.toml", CONFIG),
        git(&["add", "--all"]),
        git(&[
            "commit",
            "--quiet",
            "-m",
            "calc: project skeleton, master plan, orchestrator config",
        ]),
        Step::ShowGit {
            heading: None,
            args: vec!["log", "--oneline", "--stat"],
        },
        human(
            "install the git hooks: they verify every checkpoint commit, a person's too",
            &["hooks", "install"],
            Expect::Success,
        ),
    ]
}

/// The plan, then task 1 (add): RED with analysis, GREEN, and a REFACTOR that slips and is
/// debugged.
fn add_story() -> Vec<Step> {
    let test = "sh tests/test_add.sh";
    vec![
        get_task("what should I do?"),
        submit_plan(
            "submit the plan for PR 1 (on stdin)",
            "plan for PR 1: add and sub",
            PLAN,
        ),
        get_task("what now?"),
        act(
            Actor::Agent,
            "writes tests/test_add.sh (add does not exist yet)",
        ),
        write("tests/test_add.sh", calc_test("add 2 3", "5")),
        agent(
            "submit the RED test",
            &[
                "submit-work",
                "--summary",
                "test for add",
                "--test-command",
                test,
                "--expectation",
                "FAIL",
            ],
            Expect::NeedsAnalysis,
        ),
        get_task("what now?"),
        analysis(
            "it failed because add is not defined: the intended reason",
            "fails with 'add: not found': add does not exist yet",
        ),
        get_task("next step"),
        act(Actor::Agent, "implements add in lib/calc.sh"),
        write("lib/calc.sh", CALC_ADD),
        agent(
            "submit GREEN",
            &[
                "submit-work",
                "--summary",
                "add implemented with shell arithmetic",
                "--test-command",
                test,
                "--expectation",
                "PASS",
            ],
            Expect::Success,
        ),
        get_task("next step"),
        checkpoint(),
        get_task("next step"),
        act(Actor::Agent, "refactors add, and slips: $3 instead of $2"),
        write("lib/calc.sh", CALC_ADD_REFACTOR_BROKEN),
        submit_test(
            "submit REFACTOR",
            "document add, print with printf",
            test,
            Expect::VerificationFailed,
        ),
        get_task("what now?"),
        act(
            Actor::Agent,
            "reads the verbatim output: the arithmetic fails on \"2 + \", so $3 is empty; fixes $3 -> $2",
        ),
        write("lib/calc.sh", CALC_ADD_REFACTOR_FIXED),
        submit_test(
            "submit the fix",
            "hypothesis: add used $3; fixed to $2",
            test,
            Expect::Success,
        ),
        get_task("next step"),
        checkpoint(),
        get_task("next step"),
    ]
}

/// Task 2 goes wrong: a locked escape hatch, the unlock, a scope reduction and re-plan, and
/// the negation task of the re-plan.
fn sub_story() -> Vec<Step> {
    let sub = "sh tests/test_sub.sh";
    let neg = "sh tests/test_neg.sh";
    vec![
        act(
            Actor::Agent,
            "writes tests/test_sub.sh (sub does not exist yet)",
        ),
        write("tests/test_sub.sh", calc_test("sub 5 3", "2")),
        submit_test(
            "submit the RED test",
            "test for sub",
            sub,
            Expect::NeedsAnalysis,
        ),
        analysis(
            "it failed because sub is not defined: the intended reason",
            "'sub: not found': sub does not exist yet",
        ),
        get_task("next step"),
        act(
            Actor::Agent,
            "implements sub, with the operands the wrong way round",
        ),
        write("lib/calc.sh", calc_with("sub() { echo $(($2 - $1)); }\n")),
        submit_test(
            "submit GREEN",
            "sub implemented",
            sub,
            Expect::VerificationFailed,
        ),
        get_task("what now?"),
        agent(
            "try to give up on the task already",
            &["request-scope-reduction"],
            Expect::NotAllowed,
        ),
        act(Actor::Agent, "tries another fix, and fails again"),
        write("lib/calc.sh", calc_with("sub() { echo $(($1 + $2)); }\n")),
        submit_test(
            "submit the fix",
            "swapped the operator",
            sub,
            Expect::VerificationFailed,
        ),
        get_task("what now? (the scope reduction is unlocked)"),
        agent(
            "reduce the scope",
            &["request-scope-reduction"],
            Expect::Success,
        ),
        act(
            Actor::Agent,
            "deletes tests/test_sub.sh, left behind by the failed attempt; the verification task recreates it",
        ),
        Step::Remove("tests/test_sub.sh"),
        submit_plan(
            "submit the re-plan: sub becomes 2a (negate) and 2b (verification)",
            "sub split into neg and a verification task",
            REPLAN,
        ),
        get_task("next step"),
        act(Actor::Agent, "writes tests/test_neg.sh"),
        write("tests/test_neg.sh", calc_test("neg 3", "-3")),
        submit_test(
            "submit the RED test",
            "test for neg",
            neg,
            Expect::NeedsAnalysis,
        ),
        analysis(
            "neg is not defined: the intended reason",
            "'neg: not found': neg does not exist yet",
        ),
        write("lib/calc.sh", calc_with("neg() { echo $((0 - $1)); }\n")),
        submit_test(
            "submit GREEN for neg",
            "neg implemented",
            neg,
            Expect::Success,
        ),
        checkpoint(),
        get_task("next step"),
    ]
}

/// The verification task of the re-plan fails the same way three times: an escalation that a
/// human answers with guidance.
fn escalation_story() -> Vec<Step> {
    let sub = "sh tests/test_sub.sh";
    let green = |what| submit_test(what, "sub = add a (neg b)", sub, Expect::VerificationFailed);
    vec![
        act(
            Actor::Agent,
            "recreates the original RED test, tests/test_sub.sh, for the verification task",
        ),
        write("tests/test_sub.sh", calc_test("sub 5 3", "2")),
        submit_test(
            "submit the RED test",
            "original sub test",
            sub,
            Expect::NeedsAnalysis,
        ),
        analysis(
            "sub is not defined: the intended reason",
            "'sub: not found' again",
        ),
        act(
            Actor::Agent,
            "implements sub with add and neg, and negates the wrong operand",
        ),
        write(
            "lib/calc.sh",
            calc_with("neg() { echo $((0 - $1)); }\nsub() { add \"$1\" \"$(neg $1)\"; }\n"),
        ),
        green("submit GREEN"),
        green("submit the same idea again"),
        get_task("what now? (identical failures are called out)"),
        write(
            "lib/calc.sh",
            calc_with("neg() { echo $((0 - $1)); }\nsub() { add \"$(neg $1)\" \"$1\"; }\n"),
        ),
        green("a third try"),
        get_task("what now? (escalation is unlocked)"),
        orchestrate(
            Actor::Agent,
            "escalate with a report",
            &["escalate", "--report", "-"],
            Some(ESCALATION),
            Expect::Halted,
        ),
        agent("what now?", &["get-task"], Expect::Halted),
        human(
            "reads the report and answers it",
            &[
                "resume",
                "--guidance",
                "neg the SECOND operand: sub A B = add A (neg B). Your tries negated $1.",
            ],
            Expect::Success,
        ),
        get_task("what now? (the guidance is shown once)"),
        write(
            "lib/calc.sh",
            calc_with("neg() { echo $((0 - $1)); }\nsub() { add \"$1\" \"$(neg \"$2\")\"; }\n"),
        ),
        submit_test(
            "submit the fix",
            "sub negates its second operand",
            sub,
            Expect::Success,
        ),
        checkpoint(),
    ]
}

/// Every step is DONE: the orchestrator reviews, the agent fixes a finding, the review passes.
fn review_story() -> Vec<Step> {
    vec![
        get_task("next step (every step is DONE: the review runs)"),
        act(
            Actor::Agent,
            "prints with printf in neg, as the finding asks",
        ),
        write(
            "lib/calc.sh",
            calc_with(
                "neg() { printf '%d\\n' \"$((0 - $1))\"; }\nsub() { add \"$1\" \"$(neg \"$2\")\"; }\n",
            ),
        ),
        submit_test(
            "submit the fix",
            "neg prints with printf",
            "sh tests/run_all.sh",
            Expect::Success,
        ),
        checkpoint(),
        get_task("next step (review round 2)"),
        human(
            "every checkpoint on the branch carries a passing verification note",
            &["verify"],
            Expect::Success,
        ),
    ]
}

/// The master plan with PR 1 marked done by the commit `squashed`.
fn master_plan_done(squashed: &str) -> String {
    MASTER_PLAN.replace(
        "## PR 1: feat: Add and subtract numbers",
        &format!("## PR 1: feat: Add and subtract numbers [DONE] ({squashed})"),
    )
}

/// The agent squashes and updates the master plan, the orchestrator merges, and PR 2 starts;
/// a person's failing checkpoint is refused by the commit-msg hook.
fn finalize_story() -> Vec<Step> {
    vec![
        act(
            Actor::Agent,
            "squashes the branch into one commit, as instructed",
        ),
        Step::Squash {
            onto: "main",
            message: "feat: Add and subtract numbers",
        },
        agent(
            "confirm the squash",
            &["submit-work", "--summary", "squashed"],
            Expect::Success,
        ),
        get_task("next step"),
        act(
            Actor::Agent,
            "marks PR 1 [DONE] in the master plan, with the squashed commit's hash",
        ),
        Step::WriteNamingHead {
            path: MASTER_PLAN_PATH,
            content: master_plan_done,
        },
        git(&[
            "commit",
            "--quiet",
            "-m",
            "docs: mark PR 1 done",
            "--",
            MASTER_PLAN_PATH,
        ]),
        agent(
            "confirm the master plan update",
            &["submit-work", "--summary", "master plan updated"],
            Expect::Success,
        ),
        get_task("next step (the orchestrator merges)"),
        submit_plan("submit the plan for PR 2", "plan for PR 2: mul", PLAN_2),
        get_task("next step"),
        act(
            Actor::Human,
            "writes tests/test_mul.sh before mul exists, and tries to commit it as a checkpoint",
        ),
        write("tests/test_mul.sh", calc_test("mul 4 3", "12")),
        git(&["add", "tests/test_mul.sh"]),
        Step::TypeGit {
            actor: Actor::Human,
            what: "the commit-msg hook runs preflight on exactly what would be committed",
            args: vec!["commit", "-m", "checkpoint: mul test"],
            succeeds: false,
        },
        git(&["rm", "--quiet", "--cached", "tests/test_mul.sh"]),
        Step::Remove("tests/test_mul.sh"),
    ]
}

/// Agents that plug in natively: the tool schemas for a custom loop, and one `get_task` round
/// trip over MCP, the server `init --agent claude|codex|gemini` registers.
fn agents_story() -> Vec<Step> {
    vec![
        act(
            Actor::Human,
            "wires a real agent instead of this script: `git orchestrate init --agent claude` (or codex, \
             gemini) registers the MCP server and the hooks; a custom loop takes the tools as JSON",
        ),
        human(
            "the agent tools in Anthropic's format (also openai, gemini, json-schema)",
            &["schema", "--format", "anthropic"],
            Expect::Success,
        ),
        orchestrate(
            Actor::Agent,
            "the same get_task as an MCP client calls it (initialize, then tools/call)",
            &["mcp"],
            Some(MCP_SESSION),
            Expect::Success,
        ),
    ]
}

/// Where things stand, read-only, and what landed on main.
fn closing() -> Vec<Step> {
    vec![
        human(
            "where does the workflow stand? (read-only)",
            &["status"],
            Expect::Success,
        ),
        human("the plan", &["plan", "show"], Expect::Success),
        human("the audit log", &["log"], Expect::Success),
        act(Actor::Human, "looks at what landed on main"),
        Step::ShowGit {
            heading: Some("$ git log --oneline --graph main"),
            args: vec!["log", "--oneline", "--graph", "main"],
        },
        Step::Say(
            "The workflow state, the plan and the full output of every run live in git, under\n\
             refs/orchestrator/workflows/main; the working tree holds only the project.",
        ),
    ]
}
