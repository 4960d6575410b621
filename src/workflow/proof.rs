//! Proof plans (docs/tickets.md): what must be proven about a tree, as data the pure core emits
//! and one executor (src/engine/proof) runs, and the pure judgement of a RED test's two runs.
//! "The tests must fail on the base" is said here once, for a ticket's report, a ticket's
//! `attest` and a PR's final check alike.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::evidence::{Evidence, Shortfall, Side};
use super::state::{ExitRecord, RedTest};
use super::{Expectation, State, StepId, StepType};

pub mod adequacy;
pub mod recorded;
pub mod step_record;

/// What must be proven about the tree of `commit`, judged by the configuration pinned as
/// `policy`, against `base`. Recorded in the chain as the final check ran it (its JSON is
/// stable: `{"commit","base","policy","obligations":[{"obligation":"gates_pass"},…],"stop"}`),
/// for `attest` to hold against the plan the chain gives ([`difference`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofPlan {
    /// The commit whose tree is proven: a report's commit, a ticket's or a PR's squash.
    pub commit: String,
    /// What it is proven against: a subtask's base, a ticket's pin, a PR's base.
    pub base: String,
    /// The pinned configuration blob, when one was pinned.
    pub policy: Option<String>,
    /// In the order they run.
    pub obligations: Vec<Obligation>,
    /// When the executor stops running obligations.
    pub stop: Stop,
}

impl ProofPlan {
    /// The plan of `obligations` on `commit`'s tree against `base`, judged by `policy`.
    fn new(
        (commit, base): (&str, &str),
        policy: Option<&str>,
        obligations: Vec<Obligation>,
        stop: Stop,
    ) -> ProofPlan {
        ProofPlan {
            commit: commit.to_string(),
            base: base.to_string(),
            policy: policy.map(str::to_string),
            obligations,
            stop,
        }
    }
}

/// When a plan's run stops early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every obligation runs: a report's observation tells the manager everything.
    Never,
    /// Nothing runs after the gates fail: tests judged on the base mean nothing then.
    WhenGatesFail,
    /// Nothing runs after the first obligation that does not hold.
    AtFirstFailure,
}

/// One thing to prove.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "obligation", rename_all = "snake_case", deny_unknown_fields)]
pub enum Obligation {
    /// The pinned gates pass on the plan's tree and leave its files as they were.
    GatesPass,
    /// `tests` fail on `base`: else they do not test the change.
    FailsOn { base: String, tests: Tests },
    /// `tests` pass on the tree of the commit `tree`: a pinned test having run a test; gated
    /// tests (existing tests a change altered, put back) by the gates.
    PassesOn { tree: String, tests: Tests },
    /// The runs just before (a [`Tests::Pinned`] pair) left the plan's tree as it was made.
    TreeUnchanged,
    /// The gates pass in the agent's own working tree, as it is (not a scratch worktree):
    /// `tree` is its tree taken before anything ran (`None`: none was taken, a step's run
    /// without gates), and the gates must have seen exactly it ([`Recheck`]). A checkpoint's,
    /// a checkpoint commit's (`commit-msg`) and a passing step's preflight.
    WorkingTreeGates {
        tree: Option<String>,
        reuse: Reuse,
        recheck: Recheck,
    },
    /// A submit's test command, run as the agent gave it in its own working tree, where it
    /// must end as `expect` says; with `take_tree`, the working tree's tree is taken before it
    /// runs: what a pass verified, for the gates after it ([`Obligation::StepGates`]) to be
    /// held to, and where the next task begins (src/engine/pr_record.rs).
    StepTest {
        command: String,
        expect: Expectation,
        take_tree: bool,
    },
    /// The test of the failing RED run just before, pinned (docs/integrity.md, "The oracle
    /// the agent cannot write"): the paths its step changed since the task began at `start`
    /// (its previous step's checkpoint, or where the branch left main), files as `main` has
    /// them aside ([`super::red::pinned`]).
    RedPin { start: String, main: String },
    /// The task's RED test run again after its GREEN step's test passed, with its pinned
    /// `paths` as the RED step left them in `tree` ([`super::red::rerun_plan`]; `same_command`:
    /// the step's command is the RED test's), where it must pass having run the test ids
    /// it pinned (`tests`, [`passes_on`]), each from a file its RED run reported it from
    /// (`files`, where recorded); the runner's hook files on the test's way (`hooks`) are put
    /// back with `paths`, absent where `tree` has none.
    RedRerun {
        command: String,
        tree: Option<String>,
        paths: Vec<String>,
        tests: Vec<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        files: BTreeMap<String, Vec<String>>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        hooks: Vec<String>,
        same_command: bool,
    },
    /// The gates in the working tree after the step's test passed there, on the tree it ran
    /// on: not run when the test changed that tree, else as [`Obligation::WorkingTreeGates`]
    /// with the tree `StepTest` took, [`Reuse::TestRun`] and [`Recheck::WorktreeTree`].
    StepGates,
    /// Each of `tests` (a task's pinned RED test) kills its share of mutants of the code its
    /// task wrote, from the tree it began at (before its RED step) to the tree the next task
    /// began at (the last task's: `tree`, the squash's); where the chain does not record where
    /// a task began, from its RED tree to the next task's: docs/integrity.md, "Adequacy by
    /// mutation"; [`adequacy::plan`] emits it.
    Adequacy {
        tree: String,
        tests: Vec<PinnedTest>,
        policy: AdequacyPolicy,
    },
}

/// What an adequacy obligation is judged by, from the pinned `[verify]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdequacyPolicy {
    /// A task below `min_killed` fails the obligation; under `report` it only names it.
    pub enforce: bool,
    /// The share of a task's mutants its test must kill, in thousandths.
    pub min_killed: u32,
    /// Mutants run per task at most.
    pub max_mutants: usize,
    /// Time the mutants of one task may take in all, in milliseconds.
    pub timeout_ms: u64,
}

/// What may stand in for running a working tree's gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Every gate runs: the step's test just ran, and what it left must be checked afresh.
    /// Only a gate whose command is the test's own takes the test's run (it ran on this tree,
    /// here, in this environment), and is not run a second time.
    TestRun,
    /// Nothing runs when the preflight cache covers the tree under these gates.
    Cache,
}

/// How to tell whether the gates' view of the working tree is still the tree being verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recheck {
    /// Take the working tree's tree again and compare it with the tree given.
    WorktreeTree,
    /// The tree given is the index's: the working tree must still match the index.
    Unstaged,
}

/// The plan of the gates in the agent's working tree, whose tree `tree` was taken before
/// anything ran ([`Obligation::WorkingTreeGates`]): its commit and base are that tree (empty
/// when none was taken); the configuration in force judges it.
pub fn working_tree(tree: Option<&str>, reuse: Reuse, recheck: Recheck) -> ProofPlan {
    let at = tree.unwrap_or_default();
    ProofPlan::new(
        (at, at),
        None,
        vec![Obligation::WorkingTreeGates {
            tree: tree.map(str::to_string),
            reuse,
            recheck,
        }],
        Stop::Never,
    )
}

/// What a submit's test run is asked to prove ([`step`]).
#[derive(Clone, Copy, Debug)]
pub struct StepAsk<'a> {
    /// The agent's test command.
    pub command: &'a str,
    pub expect: Expectation,
    /// The task's RED test, when this step is its GREEN step ([`super::State::red_test_due`]).
    pub red_due: Option<&'a RedTest>,
    /// Where the task began ([`super::State::task_start`]).
    pub start: &'a str,
    /// The main branch.
    pub main: &'a str,
}

impl<'a> StepAsk<'a> {
    /// What a test run of `command` for `step` is asked to prove on `state`, the workflow as
    /// the run found it, under the main branch `main`: said once for `submit-work`, which
    /// runs the plan, and `audit`, which emits it again from the chain (src/engine/chain.rs)
    /// to hold the recorded plan to it.
    pub fn on(
        state: &'a State,
        (step, kind): (StepId, StepType),
        (command, expect): (&'a str, Expectation),
        main: &'a str,
    ) -> StepAsk<'a> {
        StepAsk {
            command,
            expect,
            red_due: state.red_test_due(step, kind),
            start: state.task_start(),
            main,
        }
    }
}

/// The plan of a submit's test run (docs/integrity.md): its command in the working tree; a
/// RED run that fails then pins its test; a run meant to pass that passes runs the task's
/// RED test again when due, then the gates on the tree it ran on (taken before it). The first
/// obligation that does not hold ends it.
pub fn step(ask: StepAsk<'_>) -> ProofPlan {
    let pass = ask.expect == Expectation::Pass;
    // The tree under test is taken before anything runs: what passed is this tree only if
    // nothing changed it meanwhile. With gates or without, it is recorded as the tree the
    // step's test looked at: code written after it (before the step's checkpoint) is not
    // this task's, which its test never saw, but the next task's (docs/integrity.md,
    // "Adequacy by mutation").
    let mut obligations = vec![Obligation::StepTest {
        command: ask.command.to_string(),
        expect: ask.expect,
        take_tree: pass,
    }];
    if pass {
        // The task's RED test must pass now too (docs/integrity.md): a GREEN step that makes
        // its own command pass proves nothing about the test that failed at RED.
        obligations.extend(ask.red_due.map(|red| Obligation::RedRerun {
            command: red.command.clone(),
            tree: red.tree.clone(),
            paths: red.paths.clone(),
            tests: red.tests.clone(),
            files: red.test_files.clone(),
            hooks: red.hooks.clone(),
            same_command: red.command == ask.command,
        }));
        obligations.push(Obligation::StepGates);
    } else {
        obligations.push(Obligation::RedPin {
            start: ask.start.to_string(),
            main: ask.main.to_string(),
        });
    }
    ProofPlan::new(("", ask.start), None, obligations, Stop::AtFirstFailure)
}

/// The first gate that failed in a working tree's preflight; the gates after it did not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateFailure {
    pub name: String,
    pub exit: String,
    pub output: Vec<u8>,
}

/// Why the gates in a working tree did not verify it, in the order it is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeFailure {
    /// The tree changes protected paths (docs/integrity.md): no gate ran.
    Protected(Vec<String>),
    /// A gate failed.
    GateFailed(GateFailure),
    /// Files changed while the gates ran: they verified a tree that is no longer there.
    ChangedDuring(Vec<String>),
}

/// The judgement of a working tree's gates, said once for `checkpoint` and the `commit-msg`
/// hook: protected paths changed (the gates did not count), else a gate that failed, else
/// files that changed while they ran (written by a gate, say, or anyone else: the tree they
/// saw would be committed unverified). `None` when they verified the tree.
pub fn tree_failure(
    protected: &[String],
    failed: Option<&GateFailure>,
    changed_during: &[String],
) -> Option<TreeFailure> {
    if !protected.is_empty() {
        Some(TreeFailure::Protected(protected.to_vec()))
    } else if let Some(failed) = failed {
        Some(TreeFailure::GateFailed(failed.clone()))
    } else if !changed_during.is_empty() {
        Some(TreeFailure::ChangedDuring(changed_during.to_vec()))
    } else {
        None
    }
}

/// The tests an obligation runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Tests {
    /// Test files run by the pinned gates, put in as the commit `from` has them, at its
    /// history and index: a ticket subtask's tests (`subtask` names it, for the text).
    Gated {
        subtask: Option<String>,
        from: String,
        paths: Vec<String>,
    },
    /// A RED step's pinned test, run by its own command: a [`Obligation::FailsOn`] and a
    /// [`Obligation::PassesOn`] of one pinned test run back to back, as a pair.
    Pinned(PinnedTest),
}

/// A RED step's test as its chain pinned it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedTest {
    pub step: StepId,
    pub command: String,
    /// The tree the RED run left: the test's files are put in from it.
    pub tree: String,
    /// The tree its task began at, before the RED step, where the chain records it: the code
    /// the task wrote is counted from it ([`Obligation::Adequacy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    pub paths: Vec<String>,
    /// Files that existed before the task that its RED step changed: put in on the base only.
    pub shared: Vec<String>,
    /// The runner's hook files on the test's way (pytest's `conftest.py` files): on the final
    /// tree, as the latest RED step that changed one left it, else as the base has it (a hook
    /// is test code, src/engine/proof/red.rs). Empty in a chain that did not record them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}

/// The test files among `changes` (`(how, path)`, git's `added`/`modified`/`removed`) that a
/// change added or changed: what must fail on its base.
pub fn tests_changed(changes: &[(&str, String)], is_test: impl Fn(&str) -> bool) -> Vec<String> {
    changes
        .iter()
        .filter(|(how, path)| *how != "removed" && is_test(path))
        .map(|(_, path)| path.clone())
        .collect()
}

/// The plan of a ticket subtask's report (docs/tickets.md): the gates on the delivered
/// `commit`, and the test files it added or changed since `base` on that base, where they
/// must fail. Both always run: the manager is told both.
pub fn ticket_report(
    commit: &str,
    base: &str,
    policy: Option<&str>,
    changes: &[(&str, String)],
    is_test: impl Fn(&str) -> bool,
) -> ProofPlan {
    let mut obligations = vec![Obligation::GatesPass];
    let paths = tests_changed(changes, is_test);
    if !paths.is_empty() {
        obligations.push(Obligation::FailsOn {
            base: base.to_string(),
            tests: Tests::Gated {
                subtask: None,
                from: commit.to_string(),
                paths,
            },
        });
    }
    ProofPlan::new((commit, base), policy, obligations, Stop::Never)
}

/// The plan of a clean final check (docs/tickets.md, `complete-ticket`; docs/integrity.md, "A
/// clean final check"): the gates once more on exactly what will be merged, `squash` (a
/// ticket's or a PR's), in a worktree holding only it; then, when it changes or removes tests
/// that existed at its `base` (a ticket's pin, a PR's base: `existing`), the gates again with
/// those put back as they were there ([`put_back`]).
pub fn final_gates(
    squash: &str,
    base: &str,
    policy: Option<&str>,
    existing: &[String],
) -> ProofPlan {
    let mut obligations = vec![Obligation::GatesPass];
    obligations.extend(put_back(squash, base, existing));
    ProofPlan::new((squash, base), policy, obligations, Stop::WhenGatesFail)
}

/// The plan of the gates alone on `commit` (a merge made onto a main that moved after the
/// final check): nothing is put in, so it is proven against itself.
pub fn gates(commit: &str, policy: Option<&str>) -> ProofPlan {
    final_gates(commit, commit, policy, &[])
}

/// The tests that existed at `base` that `commit` changed or removed (`existing`), put back
/// as `base` has them and run by the gates on `commit`'s tree: what `[gates] pinned_tests`
/// judges. None when there are none.
pub fn put_back(commit: &str, base: &str, existing: &[String]) -> Option<Obligation> {
    (!existing.is_empty()).then(|| Obligation::PassesOn {
        tree: commit.to_string(),
        tests: Tests::Gated {
            subtask: None,
            from: base.to_string(),
            paths: existing.to_vec(),
        },
    })
}

/// One accepted subtask of a finished ticket: its id, base, accepted commit, and the changes
/// between the two.
pub struct AcceptedSubtask<'a> {
    pub id: &'a str,
    pub base: &'a str,
    pub accepted: &'a str,
    pub changes: Vec<(&'a str, String)>,
}

/// The plan `attest` runs on a ticket's `squash` (docs/tickets.md): the gates on it, then
/// each accepted subtask's tests (found from the trees, not the recorded observation) on its
/// base, at its accepted commit's history and index, as its report's observation ran them;
/// then the tests that existed at the `pin` that the ticket changed or removed (`existing`)
/// put back ([`put_back`]), as the ticket's own final check ran them.
pub fn ticket_squash(
    squash: &str,
    pin: &str,
    policy: Option<&str>,
    (subtasks, existing): (&[AcceptedSubtask], &[String]),
    is_test: impl Fn(&str) -> bool,
) -> ProofPlan {
    let mut obligations = vec![Obligation::GatesPass];
    for s in subtasks {
        let paths = tests_changed(&s.changes, &is_test);
        if paths.is_empty() {
            continue;
        }
        obligations.push(Obligation::FailsOn {
            base: s.base.to_string(),
            tests: Tests::Gated {
                subtask: Some(s.id.to_string()),
                from: s.accepted.to_string(),
                paths,
            },
        });
    }
    obligations.extend(put_back(squash, pin, existing));
    ProofPlan::new((squash, pin), policy, obligations, Stop::WhenGatesFail)
}

/// The RED half of a PR's final check (docs/integrity.md, "RED proves itself at the end"):
/// every pinned RED test fails on the PR's `base` and passes on the squash's `tree`, and its
/// runs leave the squashed tree as it was made; the first that does not hold ends the check.
pub fn final_check(
    squash: &str,
    tree: &str,
    base: &str,
    policy: Option<&str>,
    reds: &[PinnedTest],
) -> ProofPlan {
    let obligations = reds
        .iter()
        .flat_map(|red| {
            [
                Obligation::FailsOn {
                    base: base.to_string(),
                    tests: Tests::Pinned(red.clone()),
                },
                Obligation::PassesOn {
                    tree: tree.to_string(),
                    tests: Tests::Pinned(red.clone()),
                },
                Obligation::TreeUnchanged,
            ]
        })
        .collect();
    ProofPlan::new((squash, base), policy, obligations, Stop::AtFirstFailure)
}

/// Where the plans a final check recorded (`recorded`) differ from those the chain gives
/// (`emitted`, made again from the chain by the same code), named for `attest`'s refusal:
/// the first difference, as a sentence. `None` when they agree. A recorded plan weaker than
/// the chain's (an obligation dropped, a test path taken out, another base) is such a
/// difference.
pub fn difference(recorded: &[ProofPlan], emitted: &[ProofPlan]) -> Option<String> {
    if recorded.len() != emitted.len() {
        return Some(format!(
            "{} plan{} recorded, and the chain gives {}",
            recorded.len(),
            if recorded.len() == 1 { " is" } else { "s are" },
            emitted.len()
        ));
    }
    recorded
        .iter()
        .zip(emitted)
        .enumerate()
        .find_map(|(i, (r, e))| plan_difference(r, e).map(|d| format!("plan {}: {d}", i + 1)))
}

/// [`difference`] of one plan: also how `audit` names a step's recorded plan that is not the
/// one its chain gives (src/workflow/transition/event.rs, `TestRun::plan_differs`).
pub fn plan_difference(recorded: &ProofPlan, emitted: &ProofPlan) -> Option<String> {
    let field = |name: &str, r: String, e: String| {
        format!("its {name} is recorded as {r}, and the chain gives {e}")
    };
    if recorded.commit != emitted.commit {
        return Some(field(
            "commit",
            json(&recorded.commit),
            json(&emitted.commit),
        ));
    }
    if recorded.base != emitted.base {
        return Some(field("base", json(&recorded.base), json(&emitted.base)));
    }
    if recorded.policy != emitted.policy {
        return Some(field(
            "policy",
            json(&recorded.policy),
            json(&emitted.policy),
        ));
    }
    if recorded.stop != emitted.stop {
        return Some(field("stop", json(&recorded.stop), json(&emitted.stop)));
    }
    let (r, e) = (&recorded.obligations, &emitted.obligations);
    if let Some(i) = (0..r.len().min(e.len())).find(|&i| r[i] != e[i]) {
        return Some(field(
            &format!("obligation {}", i + 1),
            json(&r[i]),
            json(&e[i]),
        ));
    }
    (r.len() != e.len()).then(|| {
        format!(
            "{} obligations are recorded, and the chain gives {}{}",
            r.len(),
            e.len(),
            e.get(r.len())
                .map(|o| format!(" (the first not recorded: {})", json(o)))
                .unwrap_or_default()
        )
    })
}

/// `value` as the JSON the chain records it in.
fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// How a pinned test's pair of runs fails to prove it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairFailure {
    /// It passed on the base: it does not test the change.
    PassesOnBase,
    /// It failed on the final tree, with this exit.
    FailsOnTree { exit: String },
    /// It passed on the final tree without running a test.
    RunsNoTest { why: String },
    /// What the runner reported per test does not bear the exits out.
    Evidence { on_base: bool, why: String },
}

/// The pure judgement of a pinned test's two runs: it must fail on the base, pass on the
/// final tree having run a test (`not_run`, [`super::red::did_not_run`]'s, when it ran
/// none), and what its runner reported per test must bear that out (`shortfall`,
/// [`super::evidence::red_proven`]'s). `None` when it holds.
pub fn judge_pair(
    on_base: ExitRecord,
    on_tree: ExitRecord,
    not_run: Option<&str>,
    shortfall: Option<&(Shortfall, Side)>,
) -> Option<PairFailure> {
    if on_base.success() {
        Some(PairFailure::PassesOnBase)
    } else {
        judge_passing(on_tree, not_run, shortfall)
    }
}

/// The pure judgement of a pinned test's run that must pass on a tree, said once for the
/// final check's pair ([`judge_pair`]) and a GREEN step's run of its task's RED test
/// ([`passes_on`]): it passed, having run a test (`not_run`), and what its runner reported
/// per test bears that out (`shortfall`). `None` when it holds.
pub fn judge_passing(
    on_tree: ExitRecord,
    not_run: Option<&str>,
    shortfall: Option<&(Shortfall, Side)>,
) -> Option<PairFailure> {
    if !on_tree.success() {
        Some(PairFailure::FailsOnTree {
            exit: on_tree.to_string(),
        })
    } else if let Some(why) = not_run {
        // What the report says of the pinned test goes with it: the refusal names the test.
        let why = match shortfall {
            Some((short, Side::Final)) => format!("{why}; {short}"),
            _ => why.to_string(),
        };
        Some(PairFailure::RunsNoTest { why })
    } else {
        shortfall.map(|(short, side)| PairFailure::Evidence {
            on_base: *side == Side::Base,
            why: short.to_string(),
        })
    }
}

/// A GREEN step's run of its task's RED test (`command`), judged ([`judge_passing`]): it must
/// pass, run a test ([`super::red::did_not_run`]), and report the ids the RED run `pinned`
/// passing, or with none pinned by id the tests of its pinned `files`
/// ([`super::evidence::passes`]); each from a file the RED run reported it from, where that
/// was recorded (`from`, [`super::evidence::from_pinned_files`]).
pub fn passes_on(
    command: &str,
    exit: ExitRecord,
    output: &[u8],
    evidence: &Evidence,
    (pinned, files, from): (&[String], &[String], &BTreeMap<String, Vec<String>>),
) -> Option<PairFailure> {
    let not_run = exit
        .success()
        .then(|| super::red::did_not_run(command, exit, output))
        .flatten();
    let shortfall = exit
        .success()
        .then(|| {
            super::evidence::passes(evidence, Some(pinned), files)
                .err()
                .or_else(|| super::evidence::from_pinned_files(evidence, from))
        })
        .flatten()
        .map(|short| (short, Side::Final));
    judge_passing(exit, not_run.as_deref(), shortfall.as_ref())
}

impl PairFailure {
    /// Why a run that passed is no pass: it ran no test, or its per-test report says
    /// otherwise. `None` for a failure by exit.
    pub fn no_pass(&self) -> Option<&str> {
        match self {
            PairFailure::RunsNoTest { why } | PairFailure::Evidence { why, .. } => Some(why),
            PairFailure::PassesOnBase | PairFailure::FailsOnTree { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests;
