//! `demo --ticket`: one ticket in ticket mode (docs/tickets.md), scripted as a table of
//! steps like the TDD scenario (src/demo/scenario.rs) and carried out by the same runner: a
//! manager breaks it into two subtasks, a developer implements them; one report is
//! rejected, one claims a pass the gates contradict (and changes a file outside its
//! assignment), a subtask is rejected three times and blocked, reassigned with new
//! priorContext, and the ticket completes and merges.

use std::path::Path;

use super::files::{MASTER_PLAN, RUN_ALL, calc_test};
use super::scenario::{Actor, Expect, Step, act, git, write};

/// The ticket project's configuration: one gate, the project's tests.
const CONFIG: &str = "main_branch = \"main\"
master_plan = \"docs/Plan_Doc/Active_Plan.md\"

[[preflight]]
name = \"tests\"
command = \"sh tests/run_all.sh\"
timeout = \"1m\"
";

const CALC_EMPTY: &str = "# calc: shell functions for arithmetic.\n";
const CALC_ADD_ECHO: &str =
    "# calc: shell functions for arithmetic.\nadd() { echo $(($1 + $2)); }\n";
const CALC_ADD: &str =
    "# calc: shell functions for arithmetic.\nadd() { printf '%s\\n' $(($1 + $2)); }\n";
const CALC_SUB_BROKEN: &str = "# calc: shell functions for arithmetic.\nadd() { printf '%s\\n' $(($1 + $2)); }\nsub() { printf '%s\\n' $(($1 + $2)); }\n";
const CALC_SUB: &str = "# calc: shell functions for arithmetic.\nadd() { printf '%s\\n' $(($1 + $2)); }\nsub() { printf '%s\\n' $(($1 - $2)); }\n";

/// The narration that opens the ticket demo, naming the repository (its last word).
pub(super) fn intro(repo: &Path) -> String {
    format!(
        "git-orchestrate demo --ticket: a throwaway repository at {}\n\
         A scripted manager and developer drive the real `git orchestrate` binary through one\n\
         ticket: subtasks assigned and verified, a rejection, a report the gates contradict, a\n\
         subtask blocked after three rejections and reassigned with new priorContext, then the\n\
         squash and the merge.",
        repo.display()
    )
}

/// The whole ticket scenario, in order.
pub(super) fn scenario() -> Vec<Step> {
    [setup(), add_story(), sub_story(), closing()]
        .into_iter()
        .flatten()
        .collect()
}

fn run(actor: Actor, what: &'static str, args: &[&'static str], expect: Expect) -> Step {
    Step::Orchestrate {
        actor,
        what,
        args: args.to_vec(),
        stdin: None,
        expect,
    }
}

fn manager(what: &'static str, args: &[&'static str], expect: Expect) -> Step {
    run(Actor::Manager, what, args, expect)
}

fn developer(what: &'static str, args: &[&'static str], expect: Expect) -> Step {
    run(Actor::Developer, what, args, expect)
}

/// The developer commits everything, as a person would with `git commit -a`.
fn commit(message: &'static str) -> Vec<Step> {
    vec![
        git(&["add", "--all"]),
        Step::TypeGit {
            actor: Actor::Developer,
            what: "commit the work on the ticket's branch",
            args: vec!["commit", "--quiet", "-m", message],
            succeeds: true,
        },
    ]
}

/// `subtask-complete` claiming a complete subtask that builds.
fn report(what: &'static str, message: &'static str, files: &[&'static str]) -> Step {
    let mut args = vec![
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        message,
    ];
    for file in files {
        args.push("--file");
        args.push(file);
    }
    developer(what, &args, Expect::Success)
}

fn reject(what: &'static str, notes: &'static str) -> Step {
    manager(
        what,
        &["update-subtask", "--status", "rejected", "--notes", notes],
        Expect::Success,
    )
}

fn setup() -> Vec<Step> {
    vec![
        act(
            Actor::Human,
            "set up a repository with a tiny project and .orchestrate.toml",
        ),
        git(&["init", "--quiet", "--initial-branch=main"]),
        git(&["config", "user.name", "Demo Human"]),
        git(&["config", "user.email", "human@demo.invalid"]),
        git(&["config", "commit.gpgsign", "false"]),
        git(&["config", "core.hooksPath", ".git/hooks"]),
        write("docs/Plan_Doc/Active_Plan.md", MASTER_PLAN),
        write("tests/run_all.sh", RUN_ALL),
        write("lib/calc.sh", CALC_EMPTY),
        write(".orchestrate.toml", CONFIG),
        git(&["add", "--all"]),
        git(&[
            "commit",
            "--quiet",
            "-m",
            "calc: project skeleton, orchestrator config",
        ]),
        run(
            Actor::Human,
            "install the git hooks",
            &["hooks", "install"],
            Expect::Success,
        ),
        run(
            Actor::Human,
            "open a ticket with two subtasks planned",
            &[
                "ticket",
                "new",
                "--title",
                "Add and subtract numbers",
                "--subtask",
                "add A B prints A + B",
                "--subtask",
                "sub A B prints A - B",
            ],
            Expect::Success,
        ),
    ]
}

/// S1 (add): assigned, rejected once, reassigned, accepted.
fn add_story() -> Vec<Step> {
    let mut steps = vec![
        manager(
            "what is the ticket's state?",
            &["get-task", "--role", "manager"],
            Expect::Success,
        ),
        manager(
            "assign S1 to the developer",
            &[
                "assign",
                "--mode",
                "implementation",
                "--goal",
                "add A B prints A + B",
                "--file-to-modify",
                "lib/calc.sh",
                "--file-to-modify",
                "tests/test_add.sh",
                "--acceptance-criteria",
                "tests/test_add.sh passes",
                "--acceptance-criteria",
                "every function prints with printf",
            ],
            Expect::Success,
        ),
        developer(
            "what is my assignment?",
            &["get-task", "--role", "developer"],
            Expect::Success,
        ),
        act(Actor::Developer, "writes add (with echo) and its test"),
        write("lib/calc.sh", CALC_ADD_ECHO),
        write("tests/test_add.sh", calc_test("add 2 3", "5")),
    ];
    steps.extend(commit("calc: add"));
    steps.extend([
        report(
            "report S1 done (the orchestrator runs the gates itself)",
            "add works",
            &["lib/calc.sh", "tests/test_add.sh"],
        ),
        reject(
            "reject S1: it prints with echo, the criteria say printf",
            "add prints with echo; use printf as the criteria say",
        ),
        manager(
            "reassign S1, saying what to change",
            &[
                "assign",
                "--mode",
                "implementation",
                "--goal",
                "add A B prints A + B",
                "--file-to-modify",
                "lib/calc.sh",
                "--file-to-modify",
                "tests/test_add.sh",
                "--acceptance-criteria",
                "every function prints with printf",
                "--prior-context",
                "rejected once: add printed with echo",
            ],
            Expect::Success,
        ),
        act(Actor::Developer, "prints with printf"),
        write("lib/calc.sh", CALC_ADD),
    ]);
    steps.extend(commit("calc: add prints with printf"));
    steps.extend([
        report(
            "report S1 again",
            "add prints with printf",
            &["lib/calc.sh", "tests/test_add.sh"],
        ),
        manager(
            "accept S1",
            &[
                "update-subtask",
                "--status",
                "complete",
                "--notes",
                "add is right now",
            ],
            Expect::Success,
        ),
    ]);
    steps
}

/// S2 (sub): a report the gates contradict, three rejections and a block, a reassignment
/// with new priorContext, acceptance.
fn sub_story() -> Vec<Step> {
    let mut steps = sub_contradicted();
    steps.extend(sub_blocked());
    steps.extend(sub_accepted());
    steps
}

/// The manager's assignment of S2, with `context` from the rejections before.
fn assign_sub(what: &'static str, context: Option<&'static str>) -> Step {
    let mut args = vec![
        "assign",
        "--mode",
        "implementation",
        "--goal",
        "sub A B prints A - B",
        "--file-to-modify",
        "lib/calc.sh",
        "--file-to-modify",
        "tests/test_sub.sh",
        "--acceptance-criteria",
        "tests/test_sub.sh passes",
    ];
    if let Some(context) = context {
        args.extend(["--prior-context", context]);
    }
    manager(what, &args, Expect::Success)
}

/// S2 assigned, done wrongly, reported as passing, and rejected for what contradicts that.
fn sub_contradicted() -> Vec<Step> {
    let mut steps = vec![
        assign_sub("assign S2", None),
        act(
            Actor::Developer,
            "writes sub (wrongly: it adds), its test, and a NOTES.md nobody asked for",
        ),
        write("lib/calc.sh", CALC_SUB_BROKEN),
        write("tests/test_sub.sh", calc_test("sub 5 3", "2")),
        write("NOTES.md", "sub is done\n"),
    ];
    steps.extend(commit("calc: sub"));
    steps.extend([
        report(
            "report S2 done, claiming the build passes",
            "sub works, all tests pass",
            &["lib/calc.sh", "tests/test_sub.sh"],
        ),
        manager(
            "the manager's briefing shows what contradicts the claim",
            &["get-task", "--role", "manager"],
            Expect::Success,
        ),
        manager(
            "try to accept S2 anyway",
            &[
                "update-subtask",
                "--status",
                "complete",
                "--notes",
                "looks fine",
            ],
            Expect::NotAllowed,
        ),
        reject(
            "reject S2 (1 of 3)",
            "the tests fail and NOTES.md is outside the assignment",
        ),
    ]);
    steps
}

/// S2 reassigned and rejected twice more, blocked; reassigning it with the same
/// priorContext is refused.
fn sub_blocked() -> Vec<Step> {
    let mut steps = vec![
        assign_sub("reassign S2", Some("rejected: the gates failed on sub 5 3")),
        report(
            "report S2 again without changing anything",
            "sub works",
            &["lib/calc.sh", "tests/test_sub.sh"],
        ),
        reject(
            "reject S2 (2 of 3)",
            "nothing changed: the tests still fail",
        ),
        assign_sub("reassign S2", Some("rejected twice: sub 5 3 prints 8")),
        report(
            "report S2 a third time",
            "sub works now",
            &["lib/calc.sh", "tests/test_sub.sh"],
        ),
        reject("reject S2 (3 of 3): it is blocked", "still failing"),
        run(
            Actor::Human,
            "where does the ticket stand? (read-only)",
            &["status"],
            Expect::Success,
        ),
        assign_sub(
            "reassign the blocked S2 with the same priorContext: refused",
            Some("rejected twice: sub 5 3 prints 8"),
        ),
    ];
    // The refusal above is expected: the script says so on the step itself.
    if let Some(Step::Orchestrate { expect, .. }) = steps.last_mut() {
        *expect = Expect::NotAllowed;
    }
    steps
}

/// S2 reassigned with new priorContext, fixed, accepted; the ticket completed.
fn sub_accepted() -> Vec<Step> {
    let mut steps = vec![
        assign_sub(
            "reassign S2 with new priorContext",
            Some(
                "blocked after three rejections: sub uses + where it needs -; also remove NOTES.md",
            ),
        ),
        act(Actor::Developer, "subtracts, and removes NOTES.md"),
        write("lib/calc.sh", CALC_SUB),
        Step::Remove("NOTES.md"),
    ];
    steps.extend(commit("calc: sub subtracts"));
    steps.extend([
        report(
            "report S2",
            "sub subtracts",
            &["lib/calc.sh", "tests/test_sub.sh"],
        ),
        manager(
            "accept S2",
            &[
                "update-subtask",
                "--status",
                "complete",
                "--notes",
                "sub is right",
            ],
            Expect::Success,
        ),
        manager(
            "complete the ticket: squash, gates, merge",
            &["complete-ticket", "--summary", "calc: add and sub"],
            Expect::Success,
        ),
    ]);
    steps
}

fn closing() -> Vec<Step> {
    vec![
        run(
            Actor::Human,
            "where does the ticket stand? (read-only)",
            &["status"],
            Expect::Success,
        ),
        run(
            Actor::Human,
            "the audit log",
            &["log", "--all"],
            Expect::Success,
        ),
        run(
            Actor::Human,
            "the chain replayed",
            &["audit"],
            Expect::Success,
        ),
        act(Actor::Human, "looks at what landed on main"),
        Step::ShowGit {
            heading: Some("$ git log --oneline --graph main"),
            args: vec!["log", "--oneline", "--graph", "main"],
        },
        Step::Say(
            "The ticket, every report beside what the orchestrator observed, and the activity log\n\
             live in git, under refs/orchestrator/workflows/main (`git show \
             refs/orchestrator/workflows/main:ticket.json`).",
        ),
    ]
}
