//! The final check of a squashed commit (docs/integrity.md, "A clean final check" and "RED
//! proves itself at the end"): the gates again in a clean worktree, the tests the PR changed
//! put back, and every task's pinned RED test on the PR's base and on the squash.

use std::collections::BTreeMap;

use super::refusal::{FinalCheckRefusal, RedFailure};
use crate::config::{Adequacy, Config, PinnedTests};
use crate::engine::adequacy;
use crate::engine::evidence::{TestRun, run_test};
use crate::engine::pr_record::{self, PinnedRed, PrRecord};
use crate::engine::proof;
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session, io_error};
use crate::exec;
use crate::exec::orphans::Reaper;
use crate::gates;
use crate::store::Snapshot;
use crate::workflow::fence::fenced;
use crate::workflow::notes::{ChangedTests, PathsOfStep, RedProof, TaskAdequacy};
use crate::workflow::{evidence, red};

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
}

/// The final check, on the squashed `commit`: the gates in force run once more in a fresh
/// worktree that holds only what the commit holds; again with the tests the PR changed put
/// back as they were at the pin; and every task's pinned RED test runs on the PR's base (it
/// must fail) and on the squashed commit (it must pass, having run a test), back to back.
/// Each tree is written in one scratch worktree from the objects, and every worktree is
/// removed however it ends.
pub fn final_check(
    session: &Session,
    snap: &Snapshot,
    config: &Config,
    commit: &str,
) -> Result<FinalCheck, EngineError> {
    let record = pr_record::of_snapshot(session, snap)?;
    let git = &session.git;
    let base = git.parents(commit)?.into_iter().next().ok_or_else(|| {
        EngineError::Internal(format!("the squashed commit {commit} has no parent"))
    })?;
    let unpinned_tests = record.unpinned_tests(session, config, &base, commit)?;
    let tasks_without_red = session
        .store
        .plan(snap)?
        .map(|plan| pr_record::tasks_without_red(&plan))
        .unwrap_or_default();
    let tree = git.tree_of(commit)?;
    let links = links_out(session, &base, commit, &tree)?;
    let no_gates = config.preflight.is_empty();
    let mut check = FinalCheck {
        verification: if no_gates {
            "not verified: no gates".to_string()
        } else {
            "not verified again: the clean final check is off ([finalize] clean_check)".to_string()
        },
        red_tests: Vec::new(),
        adequacy: Vec::new(),
        changed_tests: proof::changed_tests(session, config, &base, &tree)?,
        record,
        unpinned_tests,
        tasks_without_red,
        refused: None,
        earlier_refusals: Vec::new(),
        flaky_accepted_by: None,
    };
    // A human's approval by name counts for this tree only (docs/integrity.md, "Approved by
    // name").
    if let Some(changed) = check.changed_tests.as_mut() {
        changed.approvals =
            crate::engine::answers::test_approvals(session, snap, &tree, &changed.paths)?;
    }
    if !links.is_empty() {
        check.refused = Some(FinalCheckRefusal::LinksOut { links });
        return Ok(check);
    }
    if !config.finalize.clean_check {
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
    let squashed = Scratch::new(session, commit, &tree)?;
    if !no_gates {
        let checked = clean_check(
            session,
            config,
            &mut check,
            &squashed,
            (&base, &tree),
            reaper.as_ref(),
        );
        end_orphans(reaper.as_ref(), "the gates")?;
        checked?;
        if check.refused.is_some() {
            return Ok(check);
        }
    }
    // The RED tests run in worktrees of their own: nothing the gates left behind is there.
    drop(squashed);
    red_proofs(session, config, &mut check, (&base, &tree), reaper.as_ref())?;
    if check.refused.is_none() {
        check.adequacy = adequacy::measure(
            session,
            config,
            &check.record.reds,
            (&base, &tree),
            reaper.as_ref(),
        )?;
        check.refused = inadequate(config, &check);
    }
    if check.refused.is_none() {
        let judged = super::remembered::judge(session, snap, &tree)?;
        check.earlier_refusals = judged.earlier;
        check.flaky_accepted_by = judged.accepted_by;
        check.refused = judged.refused;
    }
    Ok(check)
}

/// Under `[verify] adequacy = "enforce"`, the first task whose test killed a smaller share of
/// its mutants than `min_killed`.
fn inadequate(config: &Config, check: &FinalCheck) -> Option<FinalCheckRefusal> {
    if config.verify.adequacy != Adequacy::Enforce {
        return None;
    }
    let weak = check
        .adequacy
        .iter()
        .find(|a| a.mutants > 0 && a.killed_share() < config.verify.min_killed)?;
    let command = check
        .record
        .reds
        .iter()
        .find(|r| r.step.to_string() == weak.step)
        .map(|r| r.command.clone())
        .unwrap_or_default();
    Some(FinalCheckRefusal::Inadequate {
        task: weak.task,
        step: weak.step.clone(),
        command,
        killed: weak.killed,
        mutants: weak.mutants,
        min_killed: config.verify.min_killed,
        survived: weak.survived.clone(),
        tool: weak.tool.clone(),
    })
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
            && let Some(why) = crate::engine::red::link_out(session, tree, &path)?
        {
            links.push(why);
        }
    }
    Ok(links)
}

/// The gates in the clean worktree `squashed`, then again with the tests the PR changed put
/// back as they were on its base; a failure is the check's refusal.
fn clean_check(
    session: &Session,
    config: &Config,
    check: &mut FinalCheck,
    squashed: &Scratch,
    (base, tree): (&str, &str),
    reaper: Option<&Reaper>,
) -> Result<(), EngineError> {
    let env = session.command_env()?;
    let refusal = gates_refusal(session, config, squashed);
    // The gates run again in this worktree below: nothing the first run left may.
    end_orphans(reaper, "the gates")?;
    if let Some((verification, refused)) = refusal? {
        check.verification = verification;
        check.refused = Some(refused);
        return Ok(());
    }
    check.verification = format!(
        "the gates passed on the squashed commit in a clean worktree ({})",
        config.gate_names().join(", ")
    );
    let Some(changed) = check.changed_tests.as_mut() else {
        return Ok(());
    };
    let base_tree = session.git.tree_of(base)?;
    squashed.put(&base_tree, &changed.paths)?;
    let run = gates::run_preflight(&config.preflight, squashed.path(), env)
        .map_err(io_error("run preflight with the pinned tests"))?;
    squashed.restore(&changed.paths)?;
    changed.passed = Some(run.passed());
    changed.failed_gate = run.failed().map(|g| g.name.clone());
    if config.gates.pinned_tests == PinnedTests::Enforce && !run.passed() {
        check.refused = Some(FinalCheckRefusal::PinnedTestsFail {
            paths: changed.paths.clone(),
            failed_gate: changed.failed_gate.clone(),
        });
    } else if changed.refused() {
        check.refused = Some(FinalCheckRefusal::TestChangesUnapproved {
            paths: changed.paths.clone(),
            unapproved: changed.unapproved(),
            failed_gate: changed.failed_gate.clone(),
            tree: tree.to_string(),
        });
    }
    Ok(())
}

/// The gates in force, run on the tree in `scratch` ([`proof::gates_in`]): `None` when they
/// pass and leave its files as they were, else what the verification says and why it does
/// not count.
fn gates_refusal(
    session: &Session,
    config: &Config,
    scratch: &Scratch,
) -> Result<Option<(String, FinalCheckRefusal)>, EngineError> {
    let proof::GatesRun { run, changed } = proof::gates_in(session, config, scratch)?;
    if !changed.is_empty() {
        return Ok(Some((
            "the gates changed the squashed commit's files in the clean worktree".into(),
            FinalCheckRefusal::ChangedTree {
                what: "a preflight gate on the squashed commit".into(),
                paths: changed,
            },
        )));
    }
    if let Some(gate) = run.failed() {
        return Ok(Some((
            format!(
                "the gate `{}` failed on the squashed commit in a clean worktree",
                gate.name
            ),
            FinalCheckRefusal::CleanCheckFailed {
                gate: gate.name.clone(),
                exit: gate.run.exit.to_string(),
                tail: exec::tail_lines(&gate.run.output, config.test.output_tail),
            },
        )));
    }
    Ok(None)
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
    let tree = session.git.tree_of(commit)?;
    let scratch = Scratch::new(session, commit, &tree)?;
    Ok(gates_refusal(session, config, &scratch)?.map(|(_, refused)| refused.to_string()))
}

/// A fair coin, from the standard library's per-process random hash keys: which of the two
/// RED worktrees is made first, and which runs first, is not for a test to know.
fn coin() -> bool {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish() & 1 == 1
}

/// Every pinned RED test, on the PR's base and on the squashed commit (docs/integrity.md,
/// "RED proves itself at the end"). On the base, each RED's files are put in as its step left
/// them, shared code files too, and it must fail. On the squashed commit, every pinned file is
/// put in as the latest RED step that pinned it left it (a later task's RED may extend an
/// earlier task's test), shared files are the commit's own, and every RED test must pass
/// having run a test. Each task's test has two worktrees as they were made, which differ in
/// their files only: both are detached at the base with the base's tree as their index, made
/// in an order drawn at random and reset between tasks ([`task_worktrees`]), and each RED's
/// two runs come in an order drawn at random too, repeated `[verify] runs` times.
fn red_proofs(
    session: &Session,
    config: &Config,
    check: &mut FinalCheck,
    (base, tree): (&str, &str),
    reaper: Option<&Reaper>,
) -> Result<(), EngineError> {
    let reds: Vec<PinnedRed> = check.record.reds.clone();
    let (reds, unpinned): (Vec<PinnedRed>, Vec<PinnedRed>) =
        reds.into_iter().partition(|r| r.tree.is_some());
    if !unpinned.is_empty() {
        check.verification.push_str(&format!(
            "; {} RED test{} accepted before RED tests were pinned not run again ({})",
            unpinned.len(),
            if unpinned.len() == 1 { "" } else { "s" },
            unpinned
                .iter()
                .map(|r| r.step.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if reds.is_empty() {
        return Ok(());
    }
    let base_tree = session.git.tree_of(base)?;
    let trees = Trees {
        base,
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
    let mut worktrees = None;
    for pinned in &reds {
        let Some(red_tree) = &pinned.tree else {
            continue;
        };
        let previous = worktrees.take();
        let (before, squashed) =
            &*worktrees.insert(task_worktrees(session, &trees, &reds, previous)?);
        let (on_base, on_squash) = match run_red_repeated(
            session,
            config,
            pinned,
            red_tree,
            (before, squashed),
            reaper,
        )? {
            Ok(runs) => runs,
            Err(flaky) => {
                check.refused = Some(flaky);
                return Ok(());
            }
        };
        // The squashed worktree is where every task's test must pass: a run that wrote into
        // it (either run: unconfined, the base's can reach it) would hand a later task's test
        // what the commit lacks. The base's worktree may only make later base runs fail.
        if let Some(refusal) = wrote_into_squashed(pinned, squashed)? {
            check.refused = Some(refusal);
            return Ok(());
        }
        let (changed_after_red, repinned) =
            changed_after_red(session, pinned, red_tree, &latest, &trees)?;
        let proven = evidence::red_proven(
            (&on_base.evidence, on_base.output.exit),
            (&on_squash.evidence, on_squash.output.exit),
        );
        let (kind, tests) = match &proven {
            Ok((kind, tests)) => (*kind, tests.clone()),
            Err(_) => (on_squash.evidence.kind, Vec::new()),
        };
        check.red_tests.push(RedProof {
            step: pinned.step.to_string(),
            command: pinned.command.clone(),
            paths: pinned.paths.clone(),
            shared: pinned.shared.clone(),
            changed_after_red,
            repinned,
            base: on_base.output.exit,
            squashed: on_squash.output.exit,
            evidence: Some(kind.to_string()),
            tests,
        });
        if let Some(refusal) = red_refusal(config, pinned, base, &on_base, &on_squash, proven.err())
        {
            check.refused = Some(refusal);
            return Ok(());
        }
    }
    Ok(())
}

/// Ends what `what` left running, under a [`Reaper`] (unconfined verification).
fn end_orphans(reaper: Option<&Reaper>, what: &str) -> Result<(), EngineError> {
    match reaper {
        Some(reaper) => reaper
            .end_orphans()
            .map_err(io_error(format!("end what {what} left running"))),
        None => Ok(()),
    }
}

/// The commits and trees the RED tests are judged between.
struct Trees<'a> {
    /// The PR's base commit, and its tree.
    base: &'a str,
    base_tree: &'a str,
    /// The squashed commit's tree.
    squashed: &'a str,
}

/// The base's worktree and the squashed commit's, made in an order drawn at random. Both
/// runs see one history and one index: a test that tells the trees apart by HEAD, the log
/// or what is staged, not by the code, cannot pass one and fail the other.
fn red_worktrees<'a>(
    session: &'a Session,
    trees: &Trees,
) -> Result<(Scratch<'a>, Scratch<'a>), EngineError> {
    let (base, base_tree) = (trees.base, trees.base_tree);
    Ok(if coin() {
        let before = Scratch::with_index(session, base, base_tree, base_tree)?;
        (
            before,
            Scratch::with_index(session, base, trees.squashed, base_tree)?,
        )
    } else {
        let squashed = Scratch::with_index(session, base, trees.squashed, base_tree)?;
        (
            Scratch::with_index(session, base, base_tree, base_tree)?,
            squashed,
        )
    })
}

/// The base's worktree and the squashed commit's for one task's RED test, the squashed one
/// with every pinned path as its latest pin left it: the previous task's two, reset to how
/// they were made (docs/integrity.md, "RED proves itself at the end"), else new ones.
/// Nothing an earlier task's test left there, tracked, untracked or ignored (an ignored
/// marker file), is seen by the next; a reset costs no git process, a new pair ten.
fn task_worktrees<'a>(
    session: &'a Session,
    trees: &Trees,
    reds: &[PinnedRed],
    previous: Option<(Scratch<'a>, Scratch<'a>)>,
) -> Result<(Scratch<'a>, Scratch<'a>), EngineError> {
    let reset =
        previous.filter(|(before, squashed)| before.reset().is_ok() && squashed.reset().is_ok());
    if let Some(pair) = reset {
        // Reset to what it was settled as: the pins are in, and the baseline taken then is
        // what it is compared with.
        return Ok(pair);
    }
    let (mut before, mut squashed) = red_worktrees(session, trees)?;
    before.settle();
    for red in reds {
        if let Some(red_tree) = &red.tree {
            squashed.put(red_tree, &red.paths)?;
        }
    }
    squashed.settle();
    squashed.baseline()?;
    Ok((before, squashed))
}

/// The RED test's two runs, `[verify] runs` times over in the same worktrees, reset between
/// (docs/integrity.md, "Repeat"): the first pair when every run agrees on each tree, else the
/// refusal that names the test flaky (or the one of a run that wrote into the squashed tree).
fn run_red_repeated(
    session: &Session,
    config: &Config,
    pinned: &PinnedRed,
    red_tree: &str,
    (before, squashed): (&Scratch, &Scratch),
    reaper: Option<&Reaper>,
) -> Result<Result<(TestRun, TestRun), FinalCheckRefusal>, EngineError> {
    let first = run_red(
        session,
        config,
        pinned,
        red_tree,
        (before, squashed),
        reaper,
    )?;
    let mut on_base = vec![first.0.output.exit.success()];
    let mut on_squash = vec![first.1.output.exit.success()];
    for _ in 1..config.verify.runs {
        // Each repeat starts from the trees as they were made: what a run left (an ignored
        // marker, say) is not seen by the next, whose verdict is then its own. A write into
        // the squashed tree is refused before the reset could hide it.
        if let Some(refusal) = wrote_into_squashed(pinned, squashed)? {
            return Ok(Err(refusal));
        }
        before.reset()?;
        squashed.reset()?;
        let (b, s) = run_red(
            session,
            config,
            pinned,
            red_tree,
            (before, squashed),
            reaper,
        )?;
        on_base.push(b.output.exit.success());
        on_squash.push(s.output.exit.success());
    }
    for (on, verdicts) in [
        ("the PR's base", &on_base),
        ("the squashed commit", &on_squash),
    ] {
        if verdicts.iter().any(|v| Some(v) != verdicts.first()) {
            return Ok(Err(FinalCheckRefusal::Flaky {
                task: pinned.step.task + 1,
                step: pinned.step.to_string(),
                command: pinned.command.clone(),
                on: on.to_string(),
                verdicts: verdicts
                    .iter()
                    .map(|&passed| if passed { "pass" } else { "fail" }.to_string())
                    .collect(),
            }));
        }
    }
    Ok(Ok(first))
}

/// The refusal of a RED test's runs that changed the squashed commit's files, if they did.
fn wrote_into_squashed(
    pinned: &PinnedRed,
    squashed: &Scratch,
) -> Result<Option<FinalCheckRefusal>, EngineError> {
    let changed = squashed.changed()?;
    Ok(
        (!changed.is_empty()).then(|| FinalCheckRefusal::ChangedTree {
            what: format!(
                "the RED test of step {} (`{}`)",
                pinned.step, pinned.command
            ),
            paths: changed,
        }),
    )
}

/// The RED test's run on the base (its files and shared files put in as its step left
/// them) and on the squashed commit, in an order drawn at random.
fn run_red(
    session: &Session,
    config: &Config,
    pinned: &PinnedRed,
    red_tree: &str,
    (before, squashed): (&Scratch, &Scratch),
    reaper: Option<&Reaper>,
) -> Result<(TestRun, TestRun), EngineError> {
    let env = session.command_env()?;
    let timeout = config.test.timeout;
    // Confined (attest on a server), each run cannot write the other worktree either: the
    // base's run cannot put the code the squash lacks into it, nor the other way round.
    let run = |scratch: &Scratch, other: &Scratch, command: &str| -> Result<TestRun, EngineError> {
        let apart = env.confinement().map(|c| {
            let apart = c
                .also_read_only(other.path())
                .also_read_only(&other.build_dir());
            env.clone().confined(apart)
        });
        let ran = run_test(
            session,
            command,
            scratch.path(),
            timeout,
            apart.as_ref().unwrap_or(env),
        );
        // Whatever the run left running ends before anything else is read or run there.
        end_orphans(reaper, &format!("`{command}`"))?;
        ran
    };
    let on_base_paths: Vec<String> = pinned.paths.iter().chain(&pinned.shared).cloned().collect();
    before.put(red_tree, &on_base_paths)?;
    let runs = if coin() {
        let on_base = run(before, squashed, &pinned.command)?;
        (on_base, run(squashed, before, &pinned.command)?)
    } else {
        let on_squash = run(squashed, before, &pinned.command)?;
        (run(before, squashed, &pinned.command)?, on_squash)
    };
    before.restore(&on_base_paths)?;
    Ok(runs)
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

/// Why the RED test's two runs do not prove it, if they do not: it passes on the base, fails
/// on the squashed commit, passes there without running a test, or what its runner reported
/// per test does not bear its exit codes out (`shortfall`, [`evidence::red_proven`]'s).
fn red_refusal(
    config: &Config,
    pinned: &PinnedRed,
    base: &str,
    on_base: &TestRun,
    on_squash: &TestRun,
    shortfall: Option<(evidence::Shortfall, evidence::Side)>,
) -> Option<FinalCheckRefusal> {
    let (on_base, on_squash) = (&on_base.output, &on_squash.output);
    let not_run = on_squash
        .exit
        .success()
        .then(|| red::did_not_run(&pinned.command, on_squash.exit, &on_squash.output))
        .flatten();
    let (failure, output) = if on_base.exit.success() {
        (
            RedFailure::PassesOnBase {
                base: base.get(..12).unwrap_or(base).to_string(),
            },
            &on_base.output,
        )
    } else if !on_squash.exit.success() {
        (
            RedFailure::FailsOnSquash {
                exit: on_squash.exit.to_string(),
            },
            &on_squash.output,
        )
    } else if let Some(why) = not_run {
        (
            RedFailure::RunsNoTest {
                why: why.to_string(),
            },
            &on_squash.output,
        )
    } else if let Some((short, side)) = shortfall {
        let on_base_side = side == evidence::Side::Base;
        (
            RedFailure::Evidence {
                on_base: on_base_side,
                why: short.to_string(),
            },
            if on_base_side {
                &on_base.output
            } else {
                &on_squash.output
            },
        )
    } else {
        return None;
    };
    Some(FinalCheckRefusal::Red {
        task: pinned.step.task + 1,
        step: pinned.step.to_string(),
        command: pinned.command.clone(),
        paths: pinned.paths.clone(),
        failure,
        output: fenced(&exec::tail_lines(output, config.test.output_tail)),
    })
}
