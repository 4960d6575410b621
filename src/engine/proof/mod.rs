//! The one executor of proof plans (docs/tickets.md, src/workflow/proof.rs) and the pieces every
//! verification shares, each written once (docs/integrity.md): the configuration a proof is
//! judged by, read from the blob it pinned; the gates run in a scratch worktree; a change's
//! tests run on its base, where they must fail; and the tests that existed on a PR's base
//! that it changed or removed.

pub mod adequacy;
mod here;
mod outcome;
mod pytest_hooks;
mod red;
mod step;

pub use self::outcome::{Outcome, RedPair, RedRun, Rerun};
pub use self::red::end_orphans;
pub use self::step::link_out;
use crate::config::{Config, ConfigError, Origin, PinnedTests};
use crate::engine::scratch::Scratch;
use crate::engine::verify::TreeVerification;
use crate::engine::{EngineError, Session, io_error};
use crate::exec;
use crate::exec::orphans::Reaper;
use crate::gates::{self, PreflightRun};
use crate::workflow::State;
use crate::workflow::notes::ChangedTests;
use crate::workflow::proof::{Obligation, PinnedTest, ProofPlan, Stop, Tests};
use crate::workflow::ticket::{FailedGate, GateResult, GateVerdict};

/// Runs `plan`'s obligations in order, each in scratch worktrees written from the objects,
/// under `config` (the plan's policy, read), and returns what each came to; the plan's
/// [`Stop`] says when nothing more runs ([`stops`]). A pinned test's `FailsOn` and `PassesOn`
/// run as one pair, and its `TreeUnchanged` is judged before the pair is: a run that wrote
/// into the final tree is what stops the plan then. Under no confinement, `reaper` ends what
/// each run leaves running.
pub fn execute(
    session: &Session,
    config: &Config,
    plan: &ProofPlan,
    reaper: Option<&Reaper>,
) -> Result<Vec<Outcome>, EngineError> {
    let given = Given {
        reaper,
        ..Given::default()
    };
    execute_with(session, config, plan, given)
}

/// What a plan's run is given besides the plan and its configuration.
#[derive(Clone, Copy, Default)]
pub struct Given<'a> {
    /// Under no confinement, ends what each run leaves running.
    pub reaper: Option<&'a Reaper>,
    /// The workflow's state: its preflight cache and pin, for a working tree's gates.
    pub state: Option<&'a State>,
}

/// [`execute`], given more than a reaper ([`Given`]).
pub fn execute_with(
    session: &Session,
    config: &Config,
    plan: &ProofPlan,
    given: Given<'_>,
) -> Result<Vec<Outcome>, EngineError> {
    let reaper = given.reaper;
    let mut run = Run {
        session,
        config,
        reaper,
        given,
        plan,
        pairs: pairs(session, config, plan, reaper)?,
    };
    let mut outcomes = Vec::new();
    let mut obligations = plan.obligations.iter().peekable();
    // A pair's failure waits for its tree's check.
    let mut pending = false;
    while let Some(obligation) = obligations.next() {
        let outcome = run.one(obligation, &mut obligations, &outcomes)?;
        let failed = !outcome.held();
        let waits = matches!(outcome, Outcome::Red(_))
            && matches!(obligations.peek(), Some(Obligation::TreeUnchanged));
        let stop = stops(plan.stop, &outcome, failed, pending, waits);
        pending = waits && failed;
        outcomes.push(outcome);
        if stop {
            break;
        }
    }
    Ok(outcomes)
}

/// Whether a plan stopped by `stop` runs nothing after `outcome` (`failed`: it does not hold;
/// `pending`: the pair before it failed and waited for this tree check; `waits`: it is a
/// pair whose tree check comes next).
fn stops(stop: Stop, outcome: &Outcome, failed: bool, pending: bool, waits: bool) -> bool {
    match stop {
        Stop::Never => false,
        Stop::WhenGatesFail => failed && matches!(outcome, Outcome::Gates { .. }),
        Stop::AtFirstFailure => (failed || pending) && !waits,
    }
}

/// The pinned pairs of `plan`, when it has any: every pinned test, run against the final
/// tree its `PassesOn` names.
fn pairs<'a>(
    session: &'a Session,
    config: &'a Config,
    plan: &ProofPlan,
    reaper: Option<&'a Reaper>,
) -> Result<Option<red::Pairs<'a>>, EngineError> {
    let pinned: Vec<PinnedTest> = plan
        .obligations
        .iter()
        .filter_map(|o| match o {
            Obligation::FailsOn {
                tests: Tests::Pinned(test),
                ..
            } => Some(test.clone()),
            _ => None,
        })
        .collect();
    let final_tree = plan.obligations.iter().find_map(|o| match o {
        Obligation::PassesOn {
            tree,
            tests: Tests::Pinned(_),
        } => Some(tree),
        _ => None,
    });
    Ok(match final_tree {
        Some(final_tree) if !pinned.is_empty() => Some(red::Pairs::new(
            session,
            config,
            reaper,
            (&plan.base, final_tree),
            pinned,
        )?),
        _ => None,
    })
}

/// One plan's run: what each obligation needs.
struct Run<'a> {
    session: &'a Session,
    config: &'a Config,
    reaper: Option<&'a Reaper>,
    given: Given<'a>,
    plan: &'a ProofPlan,
    pairs: Option<red::Pairs<'a>>,
}

impl Run<'_> {
    /// Runs `obligation` (a pinned `FailsOn` takes its `PassesOn` from `rest`; a step's
    /// obligations after its `StepTest` take its run from the outcomes `done`).
    fn one<'p>(
        &mut self,
        obligation: &Obligation,
        rest: &mut impl Iterator<Item = &'p Obligation>,
        done: &[Outcome],
    ) -> Result<Outcome, EngineError> {
        let (session, config) = (self.session, self.config);
        let pinned_pair = matches!(
            obligation,
            Obligation::FailsOn {
                tests: Tests::Pinned(_),
                ..
            } | Obligation::TreeUnchanged
        );
        if let Some(pairs) = self.pairs.as_ref().filter(|_| !pinned_pair) {
            pairs.ran_elsewhere();
        }
        let unpaired = || EngineError::Internal("a proof plan's obligation has no pair".into());
        let step_run = || {
            done.iter()
                .find_map(|o| match o {
                    Outcome::Step(run) => Some(&**run),
                    _ => None,
                })
                .ok_or_else(|| EngineError::Internal("a step's obligation has no test run".into()))
        };
        Ok(match obligation {
            Obligation::GatesPass => {
                let tree = session.store.tree_of(&self.plan.commit)?;
                let scratch = Scratch::new(session, &self.plan.commit, &tree)?;
                let run = gates_in(session, config, &scratch);
                end_orphans(self.reaper, "the gates")?;
                gates_outcome(config, run?)
            }
            Obligation::FailsOn {
                base,
                tests:
                    Tests::Gated {
                        subtask,
                        from,
                        paths,
                    },
            } => {
                let (base_tree, from_tree) =
                    (session.store.tree_of(base)?, session.store.tree_of(from)?);
                let run = tests_on_base(session, config, (from, &from_tree), &base_tree, paths);
                end_orphans(self.reaper, "the gates")?;
                Outcome::OnBase {
                    subtask: subtask.clone(),
                    base: base.clone(),
                    paths: paths.clone(),
                    result: gate_result(config, run?),
                }
            }
            Obligation::FailsOn {
                tests: Tests::Pinned(test),
                ..
            } => {
                match rest.next() {
                    Some(Obligation::PassesOn {
                        tests: Tests::Pinned(other),
                        ..
                    }) if other == test => {}
                    _ => return Err(unpaired()),
                }
                self.pairs.as_mut().ok_or_else(unpaired)?.run(test)?
            }
            Obligation::PassesOn {
                tree: at,
                tests: Tests::Gated { from, paths, .. },
            } => {
                let scratch = Scratch::new(session, at, &session.store.tree_of(at)?)?;
                scratch.put(&session.store.tree_of(from)?, paths)?;
                let run = gates_in(session, config, &scratch);
                end_orphans(self.reaper, "the gates")?;
                Outcome::PutBack {
                    paths: paths.clone(),
                    result: gate_result(config, run?),
                }
            }
            Obligation::PassesOn { .. } => return Err(unpaired()),
            Obligation::TreeUnchanged => self.pairs.as_ref().ok_or_else(unpaired)?.unchanged()?,
            Obligation::Adequacy {
                tree,
                tests,
                policy,
            } => Outcome::Adequacy {
                tasks: adequacy::measure(
                    session,
                    config,
                    tests,
                    (&self.plan.base, tree),
                    policy,
                    self.reaper,
                )?,
                policy: *policy,
            },
            Obligation::WorkingTreeGates {
                tree,
                reuse,
                recheck,
            } => Outcome::WorkingTree(Box::new(here::gates_here(
                session,
                (self.given.state, config),
                (tree.as_deref(), *reuse, *recheck),
                None,
            )?)),
            Obligation::StepTest {
                command,
                expect,
                take_tree,
            } => Outcome::Step(Box::new(step::step_test(
                session, config, command, *expect, *take_tree,
            )?)),
            Obligation::RedPin { start, main } => {
                let run = step_run()?;
                let command = step_command(self.plan)?;
                Outcome::Pinned(step::red_pin(session, config, run, (command, start, main))?)
            }
            Obligation::RedRerun {
                command,
                tree,
                paths,
                tests,
                files,
                hooks,
                same_command,
            } => {
                let red_test = step::RedTest {
                    command,
                    tree: tree.as_deref(),
                    paths,
                    tests,
                    files,
                    hooks,
                    same_command: *same_command,
                };
                Outcome::Rerun(step::red_rerun(session, config, &red_test, step_run()?)?)
            }
            Obligation::StepGates => Outcome::WorkingTree(Box::new(step::step_gates(
                session,
                (self.given.state, config),
                step_command(self.plan)?,
                step_run()?,
            )?)),
        })
    }
}

/// The command of `plan`'s `StepTest`.
fn step_command(plan: &ProofPlan) -> Result<&str, EngineError> {
    plan.obligations
        .iter()
        .find_map(|o| match o {
            Obligation::StepTest { command, .. } => Some(command.as_str()),
            _ => None,
        })
        .ok_or_else(|| EngineError::Internal("a step's obligation has no test command".into()))
}

/// Runs `plan`, the gates in the agent's working tree ([`crate::workflow::proof::working_tree`]),
/// and returns what they made of it.
pub fn verify_working_tree(
    session: &Session,
    config: &Config,
    plan: &ProofPlan,
    given: Given<'_>,
) -> Result<TreeVerification, EngineError> {
    execute_with(session, config, plan, given)?
        .into_iter()
        .find_map(|outcome| match outcome {
            Outcome::WorkingTree(verification) => Some(*verification),
            _ => None,
        })
        .ok_or_else(|| EngineError::Internal("a working tree's plan verified no tree".into()))
}

/// The outcome of `GatesPass`: the gates' verdict on their run ([`gate_result`]), and what
/// they changed.
fn gates_outcome(config: &Config, run: GatesRun) -> Outcome {
    Outcome::Gates {
        result: gate_verdict(config, &run.run, &run.changed),
        changed: run.changed,
    }
}

/// The ticket's verdict on a run of its pinned gates: none configured, a gate that failed
/// (first), gates that changed the files, or a pass.
pub fn gate_result(config: &Config, gates: GatesRun) -> GateResult {
    let GatesRun { run, changed } = gates;
    gate_verdict(config, &run, &changed)
}

/// [`gate_result`] of a run of the gates, `run`, that changed `changed`.
fn gate_verdict(config: &Config, run: &PreflightRun, changed: &[String]) -> GateResult {
    if config.preflight.is_empty() {
        return GateResult {
            result: GateVerdict::None,
            ran: Vec::new(),
            failed: None,
        };
    }
    let ran = run.gates.iter().map(|g| g.name.clone()).collect();
    if let Some(gate) = run.failed() {
        return GateResult {
            result: GateVerdict::Fail,
            ran,
            failed: Some(FailedGate {
                gate: gate.name.clone(),
                exit: gate.run.exit.to_string(),
                tail: exec::tail_lines(&gate.run.output, config.test.output_tail),
            }),
        };
    }
    if !changed.is_empty() {
        return GateResult {
            result: GateVerdict::Fail,
            ran,
            failed: Some(FailedGate {
                gate: "(the gates changed files)".into(),
                exit: "n/a".into(),
                tail: changed.join("\n"),
            }),
        };
    }
    GateResult {
        result: GateVerdict::Pass,
        ran,
        failed: None,
    }
}

/// The configuration in the config blob `blob`, pinned from branch `main` at its commit
/// `commit`, read from the object database within the input cap; the defaults when nothing
/// was pinned (main had no configuration then). The one reader of a pinned configuration:
/// the PR's `attest`, a ticket's checks and a human answer's requirement all go through it.
pub fn pinned_config(
    session: &Session,
    blob: Option<&str>,
    main: &str,
    commit: &str,
) -> Result<Config, EngineError> {
    let Some(blob) = blob else {
        return Ok(Config::default());
    };
    let origin = Origin::Pinned {
        main: main.to_string(),
        commit: commit.to_string(),
    };
    let bytes = session
        .store
        .blob_within(blob, crate::input::CAP)?
        .map_err(|size| ConfigError {
            origin: origin.to_string(),
            message: format!("{blob} is {size} bytes, over the limit, and is not read"),
        })?;
    let text = super::session::config_text(bytes, &origin)?;
    Ok(Config::parse(&text, &origin)?)
}

/// The gates in force, run once on the tree in `scratch`, and the files they changed there
/// (its baseline taken just before): what every verification's gate verdict is read from.
pub struct GatesRun {
    pub run: PreflightRun,
    pub changed: Vec<String>,
}

/// Runs the gates of `config` in `scratch` (none configured: an empty run), and names the
/// files they changed.
pub fn gates_in(
    session: &Session,
    config: &Config,
    scratch: &Scratch,
) -> Result<GatesRun, EngineError> {
    if config.preflight.is_empty() {
        return Ok(GatesRun {
            run: PreflightRun { gates: Vec::new() },
            changed: Vec::new(),
        });
    }
    let env = session.command_env()?;
    scratch.baseline()?;
    let run = gates::run_preflight(&config.preflight, scratch.path(), env)
        .map_err(io_error("run the gates in a scratch worktree"))?;
    let changed = scratch.changed()?;
    Ok(GatesRun { run, changed })
}

/// A change's `tests` (paths) on its base: the base's files (`base_tree`) with only the tests
/// put in as the change's `tree` has them, at its `commit`'s history with `tree` as the index, as the run on the change
/// had them, so that the two runs differ in the code alone (a test that tells them apart by
/// HEAD or the index passes both). The gates run there, and must fail, or the tests do not
/// test the change.
pub fn tests_on_base(
    session: &Session,
    config: &Config,
    (commit, tree): (&str, &str),
    base_tree: &str,
    tests: &[String],
) -> Result<GatesRun, EngineError> {
    let scratch = Scratch::with_index(session, commit, base_tree, tree)?;
    scratch.put(tree, tests)?;
    gates_in(session, config, &scratch)
}

/// The test files (by `[gates] test_paths`) that differ between `base` and `head` (commits
/// or trees), with how (`added`, `removed`, `changed`): what a PR's tests are read from, the
/// tests it adds as much as those it changes.
pub fn test_changes(
    session: &Session,
    config: &Config,
    base: &str,
    head: &str,
) -> Result<Vec<(&'static str, String)>, EngineError> {
    let mut changes = session.git.tree_changes(base, head)?;
    changes.retain(|(_, path)| config.is_test_path(path));
    Ok(changes)
}

/// Tests present on the PR's `base` that `head` (a commit or a tree) changes or removes: what
/// the reviewer is told, and what the final check and `attest` put back for the gates.
pub fn changed_test_paths(
    session: &Session,
    config: &Config,
    base: &str,
    head: &str,
) -> Result<Vec<String>, EngineError> {
    // From the PR's base, not the pin: after a rebase onto main as another workflow's merge
    // left it, what that merge changed is not this PR's.
    let changes = test_changes(session, config, base, head)?;
    Ok(changes
        .into_iter()
        .filter_map(|(how, path)| (how != "added").then_some(path))
        .collect())
}

/// `changed` (the tests a change altered, [`changed_tests`]) with the gates' verdict on them
/// put back, as a plan's outcomes have it ([`Outcome::PutBack`]): unjudged when the gates did
/// not run with them.
pub fn judged_changed(changed: Option<ChangedTests>, outcomes: &[Outcome]) -> Option<ChangedTests> {
    let mut changed = changed?;
    for outcome in outcomes {
        if let Outcome::PutBack { paths, result } = outcome
            && *paths == changed.paths
        {
            changed.passed = Some(result.result == GateVerdict::Pass);
            changed.failed_gate = result.failed.as_ref().map(|f| f.gate.clone());
        }
    }
    Some(changed)
}

/// [`changed_test_paths`] as the final check and `attest` record them, under the policy in
/// force (`[gates] pinned_tests`); the gates' verdict with them put back is left for the
/// clean check to give. `None` when the PR changes no test that existed on its base.
pub fn changed_tests(
    session: &Session,
    config: &Config,
    base: &str,
    tree: &str,
) -> Result<Option<ChangedTests>, EngineError> {
    let paths = changed_test_paths(session, config, base, tree)?;
    if paths.is_empty() {
        return Ok(None);
    }
    let mode = match config.gates.pinned_tests {
        PinnedTests::Report => "report",
        PinnedTests::Enforce => "enforce",
    };
    Ok(Some(ChangedTests {
        paths,
        mode: mode.to_string(),
        passed: None,
        failed_gate: None,
        approvals: Vec::new(),
    }))
}

/// Why tests the ticket changed refuse it: under `[gates] pinned_tests = "enforce"` the gates
/// fail with them put back as they were at the pin.
pub fn ticket_changed_tests_refused(changed: &ChangedTests) -> String {
    format!(
        "the ticket changes tests that existed at its pin ({}), and with them as they were \
         there, preflight gate `{}` fails: under [gates] pinned_tests = \"enforce\" a ticket \
         keeps the tests it found passing. Put them back, or ask a human to change them on main.",
        changed.paths.join(", "),
        changed.failed_gate.as_deref().unwrap_or("?")
    )
}

#[cfg(test)]
mod tests;
