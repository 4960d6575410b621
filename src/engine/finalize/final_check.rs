//! The final check of a squashed commit (docs/integrity.md, "A clean final check" and "RED
//! proves itself at the end"): the gates again in a clean worktree, the tests the PR changed
//! put back, and every task's pinned RED test on the PR's base and on the squash.

use std::collections::BTreeMap;

use super::refusal::{FinalCheckRefusal, RedFailure};
use crate::config::{Adequacy, Config, PinnedTests};
use crate::engine::pr_record::{self, PinnedRed, PrRecord};
use crate::engine::proof::adequacy::Weak;
use crate::engine::proof::{self, Outcome, RedPair};
use crate::engine::{EngineError, Session, io_error};
use crate::exec;
use crate::exec::orphans::Reaper;
use crate::store::Snapshot;
use crate::workflow::fence::fenced;
use crate::workflow::notes::{ChangedTests, PathsOfStep, RedProof, TaskAdequacy};
use crate::workflow::proof::adequacy::{self as adequacy_plan, At, Policy};
use crate::workflow::proof::{self as proof_plan, PairFailure, PinnedTest, ProofPlan};
use crate::workflow::red;

/// What the final check found (docs/integrity.md, "A clean final check" and "RED proves
/// itself at the end"): what the squashed commit's verification rests on, every task's RED
/// test on the PR's base and on the squashed commit, the tests the PR changed, and why the
/// squash does not count, when it does not.
#[derive(Clone, Debug)]
pub struct FinalCheck {
    /// For the final note: `not verified: no gates`, or what passed.
    pub verification: String,
    pub red_tests: Vec<RedProof>,
    /// Each task's test against mutants of its code (docs/integrity.md, "Adequacy by
    /// mutation"); empty when adequacy is off or the RED proofs did not hold.
    pub adequacy: Vec<TaskAdequacy>,
    /// Whether adequacy was measured: `attest` measures it under `enforce` only.
    pub adequacy_measured: bool,
    pub changed_tests: Option<ChangedTests>,
    /// What the PR's chain records about its tests.
    pub record: PrRecord,
    /// Tests the PR adds that no RED step pinned.
    pub unpinned_tests: Vec<String>,
    /// Tasks of the plan without a RED step.
    pub tasks_without_red: Vec<String>,
    pub refused: Option<FinalCheckRefusal>,
    /// The final check's earlier refusals of this tree the chain records (docs/integrity.md,
    /// "A tree that failed stays failed"), and the human answer that accepted a pass after
    /// them.
    pub earlier_refusals: Vec<crate::engine::attest::memory::EarlierRefusal>,
    pub flaky_accepted_by: Option<crate::engine::answers::AnswerCheck>,
    /// The proof plans the check ran, in order (src/workflow/proof.rs): recorded with the
    /// squash, for `attest` to hold against the chain's.
    pub plans: Vec<ProofPlan>,
}

/// The final check, on the squashed `commit`: the gates in force run once more in a fresh
/// worktree that holds only what the commit holds; again with the tests the PR changed put
/// back as they were at the pin; and every task's pinned RED test runs on the PR's base (it
/// must fail) and on the squashed commit (it must pass, having run a test), back to back.
/// Each tree is written in one scratch worktree from the objects, and every worktree is
/// removed however it ends. Then each task's test against mutants of its code, where `at`
/// (the agent's machine, or `attest`, which measures only under `enforce`) measures it
/// ([`adequacy_plan::measured`]).
pub fn final_check(
    session: &Session,
    snap: &Snapshot,
    config: &Config,
    commit: &str,
    at: At,
) -> Result<FinalCheck, EngineError> {
    let (mut check, base, tree) = gather(session, snap, config, commit)?;
    if check.refused.is_some() || !config.finalize.clean_check {
        return Ok(check);
    }
    // Found before a worktree is made: the commands run in it need it.
    let env = session.command_env()?;
    // Unconfined, a process a gate or a RED run left outside its group would outlive it and
    // could write into a later run's worktree (the RED pair is reset and used again, and
    // each new worktree is beside the last): it is ended after each (src/exec/orphans.rs).
    // Declared before the worktrees: it stays our subreaper until they are removed.
    let reaper = match env.confinement() {
        Some(_) => None,
        None => Some(Reaper::start().map_err(io_error("watch for what the tests leave running"))?),
    };
    let policy = snap
        .state
        .pr()
        .and_then(|pr| pr.pin.as_ref())
        .and_then(|pin| pin.config.as_deref());
    if !config.preflight.is_empty() {
        let plan = proof_plan::final_gates(commit, &base, policy, &changed_paths(&check));
        let outcomes = proof::execute(session, config, &plan, reaper.as_ref())?;
        check.plans.push(plan);
        clean_check(config, &mut check, &outcomes, &tree);
        if check.refused.is_some() {
            return Ok(check);
        }
    }
    // The RED tests run in worktrees of their own: nothing the gates left behind is there.
    red_proofs(
        session,
        config,
        &mut check,
        (&base, commit, &tree),
        policy,
        reaper.as_ref(),
    )?;
    if check.refused.is_none() {
        adequacy(
            session,
            config,
            &mut check,
            (commit, &tree, &base),
            (policy, at),
            reaper.as_ref(),
        )?;
    }
    if check.refused.is_none() {
        let judged = super::remembered::judge(session, snap, &tree)?;
        check.earlier_refusals = judged.earlier;
        check.flaky_accepted_by = judged.accepted_by;
        check.refused = judged.refused;
    }
    Ok(check)
}

/// What the final check of `commit` starts from, read before anything runs: the PR's record,
/// the tests it adds unpinned and changes, its tasks without RED, and the links out of the
/// repository it adds (a refusal then); with the squash's base and tree.
fn gather(
    session: &Session,
    snap: &Snapshot,
    config: &Config,
    commit: &str,
) -> Result<(FinalCheck, String, String), EngineError> {
    let record = pr_record::of_snapshot(session, snap)?;
    let base = session
        .store
        .parents_of(commit)?
        .into_iter()
        .next()
        .ok_or_else(|| {
            EngineError::Internal(format!("the squashed commit {commit} has no parent"))
        })?;
    let unpinned_tests = record.unpinned_tests(session, config, &base, commit)?;
    let tasks_without_red = session
        .store
        .plan(snap)?
        .map(|plan| pr_record::tasks_without_red(&plan))
        .unwrap_or_default();
    let tree = session.store.tree_of(commit)?;
    let links = links_out(session, &base, commit, &tree)?;
    let mut changed_tests = proof::changed_tests(session, config, &base, &tree)?;
    // A human's approval by name counts for this tree only (docs/integrity.md, "Approved by
    // name").
    if let Some(changed) = changed_tests.as_mut() {
        changed.approvals =
            crate::engine::answers::test_approvals(session, snap, &tree, &changed.paths)?;
    }
    let check = FinalCheck {
        verification: if config.preflight.is_empty() {
            "not verified: no gates".to_string()
        } else {
            "not verified again: the clean final check is off ([finalize] clean_check)".to_string()
        },
        red_tests: Vec::new(),
        adequacy: Vec::new(),
        adequacy_measured: false,
        changed_tests,
        record,
        unpinned_tests,
        tasks_without_red,
        refused: (!links.is_empty()).then_some(FinalCheckRefusal::LinksOut { links }),
        earlier_refusals: Vec::new(),
        flaky_accepted_by: None,
        plans: Vec::new(),
    };
    Ok((check, base, tree))
}

/// The tests the PR changed, put back for the gates' second run.
fn changed_paths(check: &FinalCheck) -> Vec<String> {
    check
        .changed_tests
        .as_ref()
        .map(|c| c.paths.clone())
        .unwrap_or_default()
}

/// Adequacy by mutation (docs/integrity.md), once every RED proof held: the plan the pure
/// core emits for `at` under the pinned `[verify]` ([`adequacy_plan::plan`]), run by the
/// executor; what each task killed goes into `check`, and under `enforce` the first task
/// below `min_killed` is its refusal.
fn adequacy(
    session: &Session,
    config: &Config,
    check: &mut FinalCheck,
    trees: (&str, &str, &str),
    (policy, at): (Option<&str>, At),
    reaper: Option<&Reaper>,
) -> Result<(), EngineError> {
    let (_, pinned, _) = pinned_tests(&check.record.reds);
    let verify = &config.verify;
    let mode = match verify.adequacy {
        Adequacy::Off => adequacy_plan::Mode::Off,
        Adequacy::Report => adequacy_plan::Mode::Report,
        Adequacy::Enforce => adequacy_plan::Mode::Enforce,
    };
    let budget = adequacy_plan::Policy {
        enforce: false,
        min_killed: verify.min_killed,
        max_mutants: verify.max_mutants,
        timeout_ms: u64::try_from(verify.mutation_timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let Some(plan) = adequacy_plan::plan(trees, policy, &pinned, (mode, at), budget) else {
        return Ok(());
    };
    check.adequacy_measured = true;
    for outcome in proof::execute(session, config, &plan, reaper)? {
        let Outcome::Adequacy { policy, tasks } = outcome else {
            continue;
        };
        check.refused = proof::adequacy::inadequate(&policy, &tasks)
            .map(|weak| inadequate(&check.record, &policy, &weak));
        check.adequacy = tasks;
    }
    Ok(())
}

/// The refusal of a task whose test killed too few mutants (`weak`, over all its code or in
/// one file of it) under `policy`.
fn inadequate(record: &PrRecord, policy: &Policy, weak: &Weak) -> FinalCheckRefusal {
    let task = weak.task;
    let command = record
        .reds
        .iter()
        .find(|r| r.step.to_string() == task.step)
        .map(|r| r.command.clone())
        .unwrap_or_default();
    let (killed, mutants, not_run) = match weak.file {
        Some(f) => (f.killed, f.mutants, f.not_run),
        None => (task.killed, task.mutants, task.not_run),
    };
    let file = weak.file.map(|f| f.path.clone());
    FinalCheckRefusal::Inadequate {
        task: task.task,
        step: task.step.clone(),
        command,
        killed,
        mutants,
        min_killed: policy.min_killed,
        survived: match &file {
            // A survivor is named `path:line what`.
            Some(path) => task
                .survived
                .iter()
                .filter(|m| {
                    m.strip_prefix(path.as_str())
                        .is_some_and(|r| r.starts_with(':'))
                })
                .cloned()
                .collect(),
            None => task.survived.clone(),
        },
        tool: task.tool.clone(),
        unmeasured: (mutants == 0).then(|| match (&file, &task.unmeasured) {
            (None, Some(why)) => why.clone(),
            (Some(path), _) => format!(
                "none of the {not_run} mutants of {path}, one file of the code it wrote, ran \
                 within [verify] max_mutants and mutation_timeout, and each file is measured on \
                 its own; make the test faster, raise them, or leave less code to one task"
            ),
            (None, None) => format!(
                "none of its {not_run} mutants ran within [verify] mutation_timeout; make the \
                 test faster or raise it"
            ),
        }),
        file,
    }
}

/// Why each symbolic link the PR adds or changes points out of the repository. A link out
/// makes what the commit holds depend on a file it does not hold, whichever test reads it,
/// and whatever the RED step pinned.
fn links_out(
    session: &Session,
    base: &str,
    commit: &str,
    tree: &str,
) -> Result<Vec<String>, EngineError> {
    let mut links = Vec::new();
    for (how, path) in session.git.tree_changes(base, commit)? {
        if how != "removed"
            && let Some(why) = crate::engine::proof::link_out(session, tree, &path)?
        {
            links.push(why);
        }
    }
    Ok(links)
}

/// What the clean check's plan ([`proof_plan::final_gates`]) came to, in `check`: the gates
/// on the squashed commit in a clean worktree, then with the tests the PR changed put back
/// as they were on its base; a failure is the check's refusal.
fn clean_check(config: &Config, check: &mut FinalCheck, outcomes: &[Outcome], tree: &str) {
    if let Some((verification, refused)) = outcomes.first().and_then(gates_refusal) {
        check.verification = verification;
        check.refused = Some(refused);
        return;
    }
    check.verification = format!(
        "the gates passed on the squashed commit in a clean worktree ({})",
        config.gate_names().join(", ")
    );
    check.changed_tests = proof::judged_changed(check.changed_tests.take(), outcomes);
    check.refused = check
        .changed_tests
        .as_ref()
        .and_then(|changed| changed_refusal(config.gates.pinned_tests, changed, tree));
}

/// Why the tests the PR changed refuse the squash, judged with them put back: under
/// `[gates] pinned_tests = "enforce"` the gates fail so; under `report`, a human has not
/// approved each by name for this `tree`.
fn changed_refusal(
    mode: PinnedTests,
    changed: &ChangedTests,
    tree: &str,
) -> Option<FinalCheckRefusal> {
    if mode == PinnedTests::Enforce && changed.passed == Some(false) {
        Some(FinalCheckRefusal::PinnedTestsFail {
            paths: changed.paths.clone(),
            failed_gate: changed.failed_gate.clone(),
        })
    } else if changed.refused() {
        Some(FinalCheckRefusal::TestChangesUnapproved {
            paths: changed.paths.clone(),
            unapproved: changed.unapproved(),
            failed_gate: changed.failed_gate.clone(),
            tree: tree.to_string(),
        })
    } else {
        None
    }
}

/// The gates' outcome on the squashed commit ([`Outcome::Gates`]): `None` when they pass and
/// leave its files as they were, else what the verification says and why it does not count.
fn gates_refusal(outcome: &Outcome) -> Option<(String, FinalCheckRefusal)> {
    let Outcome::Gates { result, changed } = outcome else {
        return None;
    };
    if !changed.is_empty() {
        return Some((
            "the gates changed the squashed commit's files in the clean worktree".into(),
            FinalCheckRefusal::ChangedTree {
                what: "a preflight gate on the squashed commit".into(),
                paths: changed.clone(),
            },
        ));
    }
    let failed = result.failed.as_ref()?;
    Some((
        format!(
            "the gate `{}` failed on the squashed commit in a clean worktree",
            failed.gate
        ),
        FinalCheckRefusal::CleanCheckFailed {
            gate: failed.gate.clone(),
            exit: failed.exit.clone(),
            tail: failed.tail.clone(),
        },
    ))
}

/// The gates in force, run once more on `commit` (a merge made onto a main that moved
/// after the PR was checked) in a clean worktree, as the final check runs them: `None` when
/// they pass or there is nothing to run, else why the commit does not count.
pub fn gates_on(
    session: &Session,
    config: &Config,
    commit: &str,
) -> Result<Option<String>, EngineError> {
    if config.preflight.is_empty() || !config.finalize.clean_check {
        return Ok(None);
    }
    session.command_env()?;
    let outcomes = proof::execute(session, config, &proof_plan::gates(commit, None), None)?;
    Ok(outcomes
        .first()
        .and_then(gates_refusal)
        .map(|(_, refused)| refused.to_string()))
}

/// Every pinned RED test, on the PR's base and on the squashed commit (docs/integrity.md,
/// "RED proves itself at the end"). On the base, each RED's files are put in as its step left
/// them, shared code files too, and it must fail. On the squashed commit, every pinned file is
/// put in as the latest RED step that pinned it left it (a later task's RED may extend an
/// earlier task's test), shared files are the commit's own, and every RED test must pass
/// having run a test. The plan says so ([`proof_plan::final_check`]) and the executor runs it
/// ([`proof::execute`]): each task's test in two worktrees that differ in their files only,
/// made and run in orders drawn at random, reset between tasks and repeats; what it found is
/// recorded here, and the first pair that does not hold is the check's refusal.
fn red_proofs(
    session: &Session,
    config: &Config,
    check: &mut FinalCheck,
    (base, commit, tree): (&str, &str, &str),
    policy: Option<&str>,
    reaper: Option<&Reaper>,
) -> Result<(), EngineError> {
    let (reds, pinned, not_run) = pinned_tests(&check.record.reds);
    check.verification.push_str(&not_run);
    if pinned.is_empty() {
        return Ok(());
    }
    let base_tree = session.store.tree_of(base)?;
    let trees = Trees {
        base_tree: &base_tree,
        squashed: tree,
    };
    // The latest pin of each path: the squashed worktree's runs have them so.
    let mut latest: BTreeMap<&str, (&str, &PinnedRed)> = BTreeMap::new();
    for red in &reds {
        let Some(red_tree) = &red.tree else { continue };
        for path in &red.paths {
            latest.insert(path, (red_tree, red));
        }
    }
    let plan = proof_plan::final_check(commit, tree, base, policy, &pinned);
    // A pair's outcome waits for its tree's check: a run that wrote into the squashed tree
    // is refused first.
    let mut pair = None;
    let outcomes = proof::execute(session, config, &plan, reaper)?;
    check.plans.push(plan);
    for outcome in outcomes {
        match outcome {
            Outcome::Red(red) => pair = Some(red),
            Outcome::Flaky { test, on, verdicts } => {
                check.refused = Some(FinalCheckRefusal::Flaky {
                    task: test.step.task + 1,
                    step: test.step.to_string(),
                    command: test.command,
                    on,
                    verdicts,
                });
                return Ok(());
            }
            Outcome::Tree { by, changed } => {
                if !changed.is_empty() {
                    check.refused = Some(FinalCheckRefusal::ChangedTree {
                        what: by.map_or_else(String::new, |by| {
                            format!("the RED test of step {} (`{}`)", by.step, by.command)
                        }),
                        paths: changed,
                    });
                    return Ok(());
                }
                let Some(red) = pair.take() else { continue };
                let Some(pinned) = reds.iter().find(|r| r.step == red.test.step) else {
                    continue;
                };
                let changed = changed_after_red(session, pinned, &red.test.tree, &latest, &trees)?;
                check.red_tests.push(red_proof(pinned, &red, changed));
                if let Some(failure) = &red.failure {
                    check.refused = Some(red_refusal(config, pinned, base, &red, failure));
                    return Ok(());
                }
            }
            Outcome::Gates { .. }
            | Outcome::OnBase { .. }
            | Outcome::PutBack { .. }
            | Outcome::WorkingTree(_)
            | Outcome::Adequacy { .. }
            | Outcome::Step(_)
            | Outcome::Pinned(_)
            | Outcome::Rerun(_) => {}
        }
    }
    Ok(())
}

/// The RED tests the chain pinned (`reds`, with their tree), as the final check's plan runs
/// them, and what the verification adds of those accepted before RED tests were pinned (not
/// run again), if any.
fn pinned_tests(reds: &[PinnedRed]) -> (Vec<PinnedRed>, Vec<PinnedTest>, String) {
    let (reds, unpinned): (Vec<PinnedRed>, Vec<PinnedRed>) =
        reds.iter().cloned().partition(|r| r.tree.is_some());
    let not_run = if unpinned.is_empty() {
        String::new()
    } else {
        format!(
            "; {} RED test{} accepted before RED tests were pinned not run again ({})",
            unpinned.len(),
            if unpinned.len() == 1 { "" } else { "s" },
            unpinned
                .iter()
                .map(|r| r.step.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let pinned = reds
        .iter()
        .filter_map(|r| {
            Some(PinnedTest {
                step: r.step,
                command: r.command.clone(),
                tree: r.tree.clone()?,
                start: r.start.clone(),
                paths: r.paths.clone(),
                shared: r.shared.clone(),
                hooks: r.hooks.clone(),
            })
        })
        .collect();
    (reds, pinned, not_run)
}

/// What the final note records of `pinned`'s pair of runs, `red`, with its pinned paths the
/// squashed commit changed and those a later RED pinned again (`changed`).
fn red_proof(
    pinned: &PinnedRed,
    red: &RedPair,
    (changed_after_red, repinned): (Vec<String>, Vec<PathsOfStep>),
) -> RedProof {
    let (kind, tests) = match &red.proven {
        Ok((kind, tests)) => (*kind, tests.clone()),
        Err(_) => (red.on_tree.evidence.kind, Vec::new()),
    };
    RedProof {
        step: pinned.step.to_string(),
        command: pinned.command.clone(),
        paths: pinned.paths.clone(),
        shared: pinned.shared.clone(),
        changed_after_red,
        repinned,
        base: red.on_base.output.exit,
        squashed: red.on_tree.output.exit,
        evidence: Some(kind.to_string()),
        tests,
    }
}

/// The trees a RED test's pinned paths are compared between.
struct Trees<'a> {
    /// The PR's base's tree.
    base_tree: &'a str,
    /// The squashed commit's tree.
    squashed: &'a str,
}

/// The RED's pinned paths the squashed commit holds otherwise than their pin (a later RED
/// that pinned them again is named), and its shared files whose test lines a later step
/// dropped (those lines are not pinned).
fn changed_after_red(
    session: &Session,
    pinned: &PinnedRed,
    red_tree: &str,
    latest: &BTreeMap<&str, (&str, &PinnedRed)>,
    trees: &Trees,
) -> Result<(Vec<String>, Vec<PathsOfStep>), EngineError> {
    let store = &session.store;
    let tree = trees.squashed;
    let mut changed = Vec::new();
    let mut repinned = Vec::new();
    for path in &pinned.paths {
        let (pin, by) = latest
            .get(path.as_str())
            .copied()
            .unwrap_or((red_tree, pinned));
        if by.step != pinned.step {
            repinned.push(PathsOfStep {
                step: by.step.to_string(),
                paths: vec![path.clone()],
            });
        }
        let same = match (store.tree_entry(pin, path)?, store.tree_entry(tree, path)?) {
            (Some(a), Some(b)) => a.id == b.id && a.kind == b.kind,
            (None, None) => true,
            _ => false,
        };
        if !same {
            changed.push(path.clone());
        }
    }
    let text = |tree: &str, path: &str| -> Result<String, EngineError> {
        Ok(match store.tree_entry(tree, path)? {
            // A file the agent wrote: read only within the cap (over it, it counts as empty,
            // and the lines it should hold are named dropped).
            Some(entry) => match store.blob_within(&entry.id.to_string(), crate::input::CAP)? {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => String::new(),
            },
            None => String::new(),
        })
    };
    for path in &pinned.shared {
        let dropped = red::lines_dropped(
            &text(trees.base_tree, path)?,
            &text(red_tree, path)?,
            &text(tree, path)?,
        );
        if !dropped.is_empty() {
            changed.push(path.clone());
        }
    }
    Ok((changed, repinned))
}

/// The refusal of a RED test whose two runs do not prove it (`failure`, the executor's
/// judgement): it passes on the base, fails on the squashed commit, passes there without
/// running a test, or what its runner reported per test does not bear its exit codes out.
/// The output shown is the run the failure is about.
fn red_refusal(
    config: &Config,
    pinned: &PinnedRed,
    base: &str,
    red: &RedPair,
    failure: &PairFailure,
) -> FinalCheckRefusal {
    let (on_base, on_squash) = (&red.on_base.output.output, &red.on_tree.output.output);
    let (failure, output) = match failure {
        PairFailure::PassesOnBase => (
            RedFailure::PassesOnBase {
                base: base.get(..12).unwrap_or(base).to_string(),
            },
            on_base,
        ),
        PairFailure::FailsOnTree { exit } => {
            (RedFailure::FailsOnSquash { exit: exit.clone() }, on_squash)
        }
        PairFailure::RunsNoTest { why } => (RedFailure::RunsNoTest { why: why.clone() }, on_squash),
        PairFailure::Evidence { on_base: side, why } => (
            RedFailure::Evidence {
                on_base: *side,
                why: why.clone(),
            },
            if *side { on_base } else { on_squash },
        ),
    };
    FinalCheckRefusal::Red {
        task: pinned.step.task + 1,
        step: pinned.step.to_string(),
        command: pinned.command.clone(),
        paths: pinned.paths.clone(),
        hooks: red.hooks.clone(),
        failure,
        output: fenced(&exec::tail_lines(output, config.test.output_tail)),
    }
}

#[cfg(test)]
mod tests;
