//! Why a finalization check does not count a commit, as data: the squash and master-plan
//! checks' reasons and the final check's, each displayed as the text the agent is given.

use std::fmt;

/// Why the squash or the master-plan commit does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalizeRefusal {
    NoPlan,
    /// The branch is not one commit over main.
    CommitCount {
        count: u64,
        main: String,
        title: String,
    },
    /// The squashed commit is not titled with the PR title.
    WrongTitle {
        subject: String,
        title: String,
    },
    NothingVerified,
    /// The squashed tree is not the one that last passed verification; `listed` names
    /// what differs.
    TreeNotVerified {
        tree: String,
        verified: String,
        listed: Vec<String>,
    },
    NotSquashed,
    /// HEAD is still the squashed commit: the master-plan commit is missing.
    HeadIsSquashed {
        path: String,
    },
    /// The master-plan commit is not the only commit after the squashed one.
    NotOnSquashed {
        squashed: String,
    },
    /// The master-plan commit changes other files.
    ChangesOthers {
        changed: Vec<String>,
        path: String,
    },
    /// The master plan could not be read at a commit.
    Unreadable(String),
    /// The master-plan commit closes more than this PR.
    ClosesOthers {
        path: String,
        closed: Vec<String>,
    },
    /// The commit closes a PR that is not this one (its heading does not name the plan's
    /// title): a PR planned under another title cannot mark a heading it did not claim.
    ClosesAnother {
        path: String,
        closed: String,
        title: String,
    },
    /// The master plan does not name the squashed commit.
    NoMention {
        path: String,
        squashed: String,
    },
    /// A git command failed during the check.
    CouldNotRun(String),
}

impl fmt::Display for FinalizeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FinalizeRefusal::NoPlan => f.write_str("there is no PR plan to finalize"),
            FinalizeRefusal::CommitCount { count, main, title } => write!(
                f,
                "the branch has {count} commits over {main}; it must have exactly one titled {}. \
                 Let the orchestrator squash them and check the squash: \
                 `git orchestrate submit-work --summary \"squashed\" --squash`",
                crate::workflow::briefing::shell_quote(title)
            ),
            FinalizeRefusal::WrongTitle { subject, title } => write!(
                f,
                "the squashed commit is titled \"{subject}\"; it must be titled with the PR title, \"{title}\" \
                 (fix it with `git commit --amend -m ...`)"
            ),
            FinalizeRefusal::NothingVerified => {
                f.write_str("nothing on this branch has passed verification yet")
            }
            FinalizeRefusal::TreeNotVerified {
                tree,
                verified,
                listed,
            } => write!(
                f,
                "the squashed commit's tree ({tree}) is not the tree that last passed verification ({verified}): \
                 the squash holds changes that were never verified ({}). To keep them, verify them first: \
                 `git reset --soft HEAD~1`, then `git orchestrate checkpoint` (it verifies and commits them), and \
                 squash again; to drop them, undo them and squash again",
                listed.join(", ")
            ),
            FinalizeRefusal::NotSquashed => f.write_str("the PR has not been squashed yet"),
            FinalizeRefusal::HeadIsSquashed { path } => write!(
                f,
                "HEAD is still the squashed commit; commit the change to {path} on top of it"
            ),
            FinalizeRefusal::NotOnSquashed { squashed } => write!(
                f,
                "the master-plan commit must sit directly on the squashed commit {squashed}, as the only commit after it"
            ),
            FinalizeRefusal::ChangesOthers { changed, path } => write!(
                f,
                "the commit changes {}; it must change only the master plan, {path}",
                changed.join(", ")
            ),
            FinalizeRefusal::Unreadable(why) => f.write_str(why),
            FinalizeRefusal::ClosesOthers { path, closed } => write!(
                f,
                "the commit closes {} PRs of {path} ({}); it may mark only this PR done (the others stay as \
                 they were: undo the rest, and commit again)",
                closed.len(),
                closed
                    .iter()
                    .map(|h| format!("\"{h}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            FinalizeRefusal::ClosesAnother {
                path,
                closed,
                title,
            } => write!(
                f,
                "the commit closes \"{closed}\" in {path}, which is not this PR (\"{title}\"): a PR \
                 marks only its own heading done, the one its claim was taken on (undo it, and commit \
                 again)"
            ),
            FinalizeRefusal::NoMention { path, squashed } => write!(
                f,
                "{path} does not mention the squashed commit {} (write its hash next to the PR marked [DONE])",
                crate::short_id(squashed)
            ),
            FinalizeRefusal::CouldNotRun(error) => write!(f, "the check could not run: {error}"),
        }
    }
}

/// How a refusal that awaits a human's approval by name begins: such a refusal is the
/// policy's, not the tree's, so it is never remembered as the tree failing (a pass once the
/// human approved is no luck).
pub const AWAITING_APPROVAL: &str = "awaiting a human's approval by name: ";

/// Why the final check does not count the squashed commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalCheckRefusal {
    /// The PR adds symbolic links out of the repository.
    LinksOut { links: Vec<String> },
    /// A gate failed in the clean worktree; `tail` is the end of its output.
    CleanCheckFailed {
        gate: String,
        exit: String,
        tail: String,
    },
    /// Under `pinned_tests = "enforce"`, a gate fails with the tests the PR changed put back.
    PinnedTestsFail {
        paths: Vec<String>,
        failed_gate: Option<String>,
    },
    /// Under `pinned_tests = "report"`, a gate fails with the tests the PR changed put back,
    /// and no human approved the change of `unapproved` by name for `tree` (docs/
    /// integrity.md, "Approved by name"). Not the tree's failure: the human's answer is
    /// awaited, and a pass after it is no luck ([`AWAITING_APPROVAL`]).
    TestChangesUnapproved {
        paths: Vec<String>,
        unapproved: Vec<String>,
        failed_gate: Option<String>,
        tree: String,
    },
    /// The check passed on `tree`, which the final check refused before (`earlier`, each
    /// named): a pass after a failure is luck, refused until a human accepts it by name.
    FailedBefore { tree: String, earlier: Vec<String> },
    /// A command of the final check changed the files of the worktree it ran in (docs/
    /// integrity.md, "Nothing changes under the gates"): what ran after it, or what it
    /// judged, was not what the commit holds.
    ChangedTree { what: String, paths: Vec<String> },
    /// A task's RED test did not prove itself; `output` is the end of the run's output.
    Red {
        task: usize,
        step: String,
        command: String,
        paths: Vec<String>,
        /// The runner's hooks its run on the squashed commit had as RED steps left them, not
        /// as the commit holds them.
        hooks: Vec<String>,
        failure: RedFailure,
        output: String,
    },
    /// Under `[verify] adequacy = "enforce"`, a task's test killed too few mutants of the
    /// code the task wrote (docs/integrity.md, "Adequacy by mutation"); shares in thousandths.
    Inadequate {
        task: usize,
        step: String,
        command: String,
        killed: usize,
        mutants: usize,
        min_killed: u32,
        survived: Vec<String>,
        /// What made the mutants: `mutmut`, `cosmic-ray`, `stryker`, `cargo-mutants` or
        /// `builtin`.
        tool: String,
        /// Why no mutant was run, when none was (the test failed on the task's own code, or
        /// the time budget ran out first).
        unmeasured: Option<String>,
        /// The code file the counts and survivors are of, when it is one file of several
        /// falling short on its own (each file must meet `min_killed`); `None`: all the
        /// task's code.
        file: Option<String>,
    },
    /// A task's RED proof gave different verdicts on runs of one tree (docs/integrity.md,
    /// "Repeat"): `verdicts` lists each run's pass or fail, in order.
    Flaky {
        task: usize,
        step: String,
        command: String,
        on: String,
        verdicts: Vec<String>,
    },
}

/// How a pinned RED test failed to prove itself at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedFailure {
    /// It passes on the PR's base (`base`, shortened) too.
    PassesOnBase { base: String },
    /// It fails on the squashed commit, with this exit.
    FailsOnSquash { exit: String },
    /// It passes on the squashed commit without running a test.
    RunsNoTest { why: String },
    /// Its per-test evidence does not show it failing on the base (`on_base`) or passing on
    /// the squashed commit: the exit code alone proves nothing (docs/integrity.md,
    /// "Per-test evidence").
    Evidence { on_base: bool, why: String },
}

impl fmt::Display for RedFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedFailure::PassesOnBase { base } => write!(
                f,
                "it passes on the PR's base ({base}) too, so what it checks is not the PR's code: a test \
                 whose verdict comes from elsewhere (a file outside the repository, the environment, \
                 how it is run) proves nothing"
            ),
            RedFailure::FailsOnSquash { exit } => {
                write!(f, "it fails on the squashed commit ({exit})")
            }
            RedFailure::RunsNoTest { why } => write!(
                f,
                "on the squashed commit it passes without running a test ({why})"
            ),
            RedFailure::Evidence { on_base, why } => write!(
                f,
                "on {} its exit code is not borne out by what the test runner reported: {why}",
                if *on_base {
                    "the PR's base"
                } else {
                    "the squashed commit"
                }
            ),
        }
    }
}

impl fmt::Display for FinalCheckRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FinalCheckRefusal::LinksOut { links } => write!(
                f,
                "the PR adds {} out of the repository ({}): what the commit holds would depend on a \
                 file it does not hold, which no check here or on a clone can see. Commit the file \
                 itself (or a link that stays inside the repository), then squash and submit again.",
                if links.len() == 1 {
                    "a symbolic link"
                } else {
                    "symbolic links"
                },
                links.join("; ")
            ),
            FinalCheckRefusal::CleanCheckFailed { gate, exit, tail } => write!(
                f,
                "the clean final check failed: preflight gate `{gate}` failed ({exit}) on the squashed commit in a \
                 fresh worktree, though it passed in yours: something the commit does not hold (an \
                 untracked or ignored file) made it pass there. Commit what the tests need, then squash \
                 and submit again.\n{tail}"
            ),
            FinalCheckRefusal::ChangedTree { what, paths } => write!(
                f,
                "{what} changed files of the commit in the worktree the checks run in ({}{}): \
                 what ran after it, or what it judged, is not what the commit holds. Make the \
                 tests and gates leave the project's files as they find them (write under \
                 $TMPDIR instead), then squash and submit again.",
                paths
                    .iter()
                    .take(10)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if paths.len() > 10 {
                    format!(" and {} more", paths.len() - 10)
                } else {
                    String::new()
                }
            ),
            FinalCheckRefusal::PinnedTestsFail { paths, failed_gate } => write!(
                f,
                "the PR changes tests that existed when it began ({}), and with them as they were then, \
                 preflight gate `{}` fails: under [gates] pinned_tests = \"enforce\" a PR keeps the tests \
                 it found passing. Put them back, or ask a human to change them on main.",
                paths.join(", "),
                failed_gate.as_deref().unwrap_or("?")
            ),
            FinalCheckRefusal::TestChangesUnapproved {
                paths,
                unapproved,
                failed_gate,
                tree,
            } => write!(
                f,
                "{AWAITING_APPROVAL}the PR changes tests that existed when it began ({}), and with them as \
                 they were then, preflight gate `{}` fails; under [gates] pinned_tests = \"report\" that \
                 stands only where a human approved the change by name for this tree, and none approved \
                 {}. Put them back, or a human who accepts the change runs `git orchestrate approve \
                 {}--tree {tree}`.",
                paths.join(", "),
                failed_gate.as_deref().unwrap_or("?"),
                unapproved.join(", "),
                unapproved
                    .iter()
                    .map(|p| format!("--test-change {p} "))
                    .collect::<String>(),
            ),
            FinalCheckRefusal::FailedBefore { tree, earlier } => write!(
                f,
                "flaky: the final check refused the tree {} before ({}) and passes it now: a pass \
                 after a failure is luck, not proof. A human who accepts this pass runs `git \
                 orchestrate approve --flaky --tree {tree}`.",
                crate::short_id(tree),
                earlier.join("; ")
            ),
            FinalCheckRefusal::Red {
                task,
                step,
                command,
                paths,
                hooks,
                failure,
                output,
            } => write!(
                f,
                "the final check of task {task}'s RED test (step {step}, `{command}`, with {} as the RED step left them{}) \
                 failed: {failure}. Output:\n{output}",
                if paths.is_empty() {
                    "no pinned file".to_string()
                } else {
                    paths.join(", ")
                },
                if hooks.is_empty() {
                    String::new()
                } else {
                    let it = if hooks.len() == 1 { "it" } else { "them" };
                    format!(
                        ", and {} as RED steps left {it}, else as the base has {it}",
                        hooks.join(", "),
                    )
                },
            ),
            FinalCheckRefusal::Inadequate {
                task,
                step,
                command,
                unmeasured: Some(why),
                ..
            } => write!(
                f,
                "task {task}'s RED test (step {step}, `{command}`) was measured against no mutant \
                 of the code the task wrote ({}): under [verify] adequacy = \"enforce\" a test \
                 that was not measured does not pass. Do what the parenthesis says, then squash \
                 again",
                why
            ),
            FinalCheckRefusal::Inadequate {
                task,
                step,
                command,
                killed,
                mutants,
                min_killed,
                survived,
                tool,
                unmeasured: None,
                file,
            } => write!(
                f,
                "task {task}'s RED test (step {step}, `{command}`) killed {killed} of {mutants} \
                 mutants of {} (made by {}), below the {}% [verify] \
                 min_killed{}: it does \
                 not check what the code does. Surviving mutants (the test still passes with \
                 each):\n{}\nStrengthen the test so it fails on them (a test in a new RED step), \
                 then squash again",
                match file {
                    Some(path) => format!("{path}, code the task wrote"),
                    None => "the code the task wrote".to_string(),
                },
                if tool == "builtin" {
                    "the built-in mutator"
                } else {
                    tool.as_str()
                },
                min_killed / 10,
                if file.is_some() {
                    ", which each file of a task's code must meet on its own"
                } else {
                    ""
                },
                survived
                    .iter()
                    .map(|m| format!("- {m}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            FinalCheckRefusal::Flaky {
                task,
                step,
                command,
                on,
                verdicts,
            } => write!(
                f,
                "task {task}'s RED test (step {step}, `{command}`) is flaky: run on {on} again and \
                 again it gave {}. A test whose verdict changes between runs of one tree proves \
                 nothing; make it deterministic",
                verdicts.join(", then ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn refusals_read_as_the_agent_is_told() {
        let rows: Vec<(Box<dyn fmt::Display>, &str)> = vec![
            (
                Box::new(FinalCheckRefusal::Inadequate {
                    task: 1,
                    step: "1.1".into(),
                    command: "sh t.sh".into(),
                    killed: 0,
                    mutants: 3,
                    min_killed: 500,
                    survived: vec!["neg.sh:1 line removed".into()],
                    tool: "builtin".into(),
                    unmeasured: None,
                    file: Some("neg.sh".into()),
                }),
                "task 1's RED test (step 1.1, `sh t.sh`) killed 0 of 3 mutants of neg.sh, code the \
                 task wrote (made by the built-in mutator), below the 50% [verify] min_killed, \
                 which each file of a task's code must meet on its own: it does not check what \
                 the code does. Surviving mutants (the test still passes with each):\n- neg.sh:1 \
                 line removed\nStrengthen the test so it fails on them (a test in a new RED \
                 step), then squash again",
            ),
            (
                Box::new(FinalizeRefusal::CommitCount {
                    count: 3,
                    main: "main".into(),
                    title: "feat: x".into(),
                }),
                "the branch has 3 commits over main; it must have exactly one titled 'feat: x'. Let the \
                 orchestrator squash them and check the squash: \
                 `git orchestrate submit-work --summary \"squashed\" --squash`",
            ),
            (
                Box::new(FinalizeRefusal::NoMention {
                    path: "PLAN.md".into(),
                    squashed: "0123456789abcdef".into(),
                }),
                "PLAN.md does not mention the squashed commit 0123456789ab (write its hash next to the PR \
                 marked [DONE])",
            ),
            (
                Box::new(FinalizeRefusal::CouldNotRun("git died".into())),
                "the check could not run: git died",
            ),
            (
                Box::new(FinalCheckRefusal::LinksOut {
                    links: vec!["a -> /etc/passwd".into()],
                }),
                "the PR adds a symbolic link out of the repository (a -> /etc/passwd): what the commit holds \
                 would depend on a file it does not hold, which no check here or on a clone can see. Commit \
                 the file itself (or a link that stays inside the repository), then squash and submit again.",
            ),
            (
                Box::new(FinalCheckRefusal::Red {
                    task: 2,
                    step: "2.1".into(),
                    command: "pytest t.py".into(),
                    paths: Vec::new(),
                    hooks: Vec::new(),
                    failure: RedFailure::FailsOnSquash {
                        exit: "exit 1".into(),
                    },
                    output: "out".into(),
                }),
                "the final check of task 2's RED test (step 2.1, `pytest t.py`, with no pinned file as the RED \
                 step left them) failed: it fails on the squashed commit (exit 1). Output:\nout",
            ),
            (
                Box::new(FinalCheckRefusal::Red {
                    task: 1,
                    step: "1.1".into(),
                    command: "pytest tests".into(),
                    paths: vec!["tests/test_mul.py".into()],
                    hooks: vec!["conftest.py".into()],
                    failure: RedFailure::FailsOnSquash {
                        exit: "exit 1".into(),
                    },
                    output: "out".into(),
                }),
                "the final check of task 1's RED test (step 1.1, `pytest tests`, with tests/test_mul.py as the \
                 RED step left them, and conftest.py as RED steps left it, else as the base has it) failed: it \
                 fails on the squashed commit (exit 1). Output:\nout",
            ),
        ];
        for (refusal, text) in rows {
            assert_eq!(refusal.to_string(), text);
        }
    }
}
