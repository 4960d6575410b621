//! The executor's adequacy obligation (docs/integrity.md, "Adequacy by mutation";
//! src/workflow/proof/adequacy.rs): each task's pinned RED test run against mutants of the code
//! the task wrote (made as src/engine/adequacy.rs makes them), in a worktree of the task's
//! own, with the command runner every pinned test's run goes through, and what it killed.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::adequacy::{
    CodeFile, Planned, Task, TaskFiles, TaskWorktree, Tool, builtin_readable, builtin_within,
    cargo_mutants_mutants, choose_tool, cosmic_ray_mutants, mutmut_mutants, package_scripts,
    runs_as_code, script_text, split_within, stryker_mutants, task_files, written_otherwise,
};
use crate::engine::{EngineError, Session};
use crate::exec::orphans::Reaper;
use crate::workflow::notes::{FileAdequacy, NotMeasured, TaskAdequacy};
use crate::workflow::proof::PinnedTest;
use crate::workflow::proof::adequacy::Policy;
use crate::workflow::shell_reach::{PackageScript, Reach, reach};
use crate::workflow::state::ExitRecord;

/// Each pinned RED test (`reds`, in task order) against mutants of its task's code: the code
/// files the task changed from the tree it began at (before its RED step, which may write code
/// too) to the tree the next task began at (the last task's: `squashed`, the squash's tree),
/// mutated in that tree, the test run on each, within `policy`'s budgets. `reaper`, when
/// verification is unconfined, ends what each run left running (src/exec/orphans.rs).
pub fn measure(
    session: &Session,
    config: &Config,
    reds: &[PinnedTest],
    (base, squashed): (&str, &str),
    policy: &Policy,
    reaper: Option<&Reaper>,
) -> Result<Vec<TaskAdequacy>, EngineError> {
    let mut out = Vec::new();
    // The first task's code is counted from the base's tree.
    let base_tree = session.store.tree_of(base)?.to_string();
    // The files the pinned RED commands run, directly or through a script they run: test
    // code ([`witnesses`]); and the `package.json` scripts they run, put in as the squash
    // has them (src/engine/adequacy.rs, `package_scripts`).
    let mut run_by_reds: Vec<String> = Vec::new();
    let mut scripts: Vec<PackageScript> = Vec::new();
    for red in reds {
        // And what the command runs as the squash has its scripts (a `"test": "npm run
        // quick"` put in runs the squash's `quick` too, a `"test": "sh t/other.sh"` the
        // `t/other.sh` a later task wrote: test code for the task that wrote it too).
        let reached = run_by_red(session, config, red, None)?;
        let squash = run_by_red(session, config, red, Some(squashed))?;
        for path in reached.files.into_iter().chain(squash.files) {
            if !run_by_reds.contains(&path) {
                run_by_reds.push(path);
            }
        }
        for script in reached.scripts.into_iter().chain(squash.scripts) {
            if !scripts.contains(&script) {
                scripts.push(script);
            }
        }
    }
    for (i, red) in reds.iter().enumerate() {
        // Under `enforce`, a range the chain does not bound (an earlier release's, or one
        // stripped of `start` or of the tree the step before tested, to bring back the
        // RED-tree or checkpoint ranges, where a later task's code is charged to the task
        // before it) measures nothing: no pass.
        let unbounded = |r: &PinnedTest| r.start.is_none();
        if policy.enforce && ((i > 0 && unbounded(red)) || reds.get(i + 1).is_some_and(unbounded)) {
            out.push(TaskAdequacy {
                unmeasured: Some(
                    "the chain does not record where the task began or where the next began (a \
                     step recorded by an earlier release): under enforce each task is measured \
                     on the code it wrote, from there; do the RED step again"
                        .into(),
                ),
                ..unmeasured_task(red)
            });
            continue;
        }
        let (start, end, next) = range(reds, i, &base_tree, squashed);
        let puts = match package_scripts(session, config, &scripts, (end, squashed))? {
            Ok(puts) => puts,
            Err(why) => {
                out.push(TaskAdequacy {
                    unmeasured: Some(why),
                    ..unmeasured_task(red)
                });
                continue;
            }
        };
        let pinned: Vec<&String> = red
            .paths
            .iter()
            .chain(next.map_or(&[][..], |n| &n.paths))
            .collect();
        let witnesses = witnesses(session, config, &run_by_reds, (start, &red.tree, end))?;
        let mut later = tests_as_squashed(session, config, &pinned, (end, squashed))?;
        later.extend(
            witnesses
                .iter()
                .filter(|w| !later.contains(w))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let task = Task {
            red,
            red_tree: &red.tree,
            base,
            start,
            end,
            next,
            as_squashed: (squashed, &later),
            witnesses: &witnesses,
            scripts: &puts,
        };
        let mut measured = measure_task(session, config, &task, policy, reaper)?;
        measured.witnesses = witnesses.clone();
        measured.witnesses.sort();
        measured.scripts = puts.iter().flat_map(|put| put.named()).collect();
        measured.scripts.sort();
        out.push(measured);
    }
    Ok(out)
}

/// The trees task `i`'s code is counted between, and the next task's test when the later
/// tree holds it. Where the chain records where each task began (the RED pin's `start`):
/// from there to where the next task began (the last task's: `squashed`), so that code a
/// RED step writes beside its test is its own task's, measured by its own test, and the
/// later tree holds no later test. In a chain that does not, from the task's RED tree (the
/// first task's: the base's) to the next task's RED tree, whose test, failing, is put back
/// as it was for the run (docs/integrity.md, "Adequacy by mutation").
fn range<'a>(
    reds: &'a [PinnedTest],
    i: usize,
    base_tree: &'a str,
    squashed: &'a str,
) -> (&'a str, &'a str, Option<&'a PinnedTest>) {
    let red = &reds[i];
    let next = reds.get(i + 1);
    let start = match (i, red.start.as_deref()) {
        (0, _) => base_tree,
        (_, Some(start)) => start,
        (_, None) => red.tree.as_str(),
    };
    match next {
        None => (start, squashed, None),
        Some(next) => match next.start.as_deref() {
            Some(began) => (start, began, None),
            None => (start, next.tree.as_str(), Some(next)),
        },
    }
}

/// The files of the repository `red`'s command runs, read as shell (src/workflow/shell_reach.rs):
/// what it names as a program, a script or a sourced file, wherever its `cd`s took it, and
/// what the witness shell scripts among them name in turn, each read as the RED run had it
/// (the RED tree). A test path is not read: it is the test itself, and what it runs is the
/// code it tests (`sh mul.sh 4 3` in `tests/test_mul.sh`, where the RED step wrote `mul.sh`
/// beside it, is code, mutated). Where this clone lacks that tree, what the command itself
/// names. With them, the `package.json` scripts read on the way (`npm test`: `pretest`,
/// `test`, `posttest`), each with its file. `tree` reads it in another tree (the squash's).
fn run_by_red(
    session: &Session,
    config: &Config,
    red: &PinnedTest,
    tree: Option<&str>,
) -> Result<Reach, EngineError> {
    let tree = tree.unwrap_or(&red.tree);
    let readable = session.store.has_object(tree)?;
    reach(&red.command, |path| match readable {
        true => script_text(session, config, tree, path),
        false => Ok(None),
    })
}

/// Of `run_by_reds`, the files the PR's pinned RED commands run ([`run_by_red`]: `sh
/// check_mul.sh`, `./check_mul.sh`, `cd t && sh check.sh`, a `check_mul.sh` that `sh
/// run_tests.sh` runs), those outside the test paths that the
/// task's end tree `end` holds as a file, as its RED run left it (`red_tree`): the witness
/// a test command runs is test code wherever it lives, never mutated (each broken witness
/// would "kill" its own mutant) and, like every test the task's runs see, as the squash has
/// it (a later task could weaken it unseen). A file the task changed after its RED run is
/// code the GREEN step wrote (`sh calc.sh mul 4 3 | grep -q .` runs the code itself), and
/// where the task changed no file from `start` outside the test paths other than such a
/// witness, the witness is the code too: mutated as code, as a command that runs the code
/// it tests would otherwise leave that code unmeasured (docs/integrity.md, "Adequacy by
/// mutation").
fn witnesses(
    session: &Session,
    config: &Config,
    run_by_reds: &[String],
    (start, red_tree, end): (&str, &str, &str),
) -> Result<Vec<String>, EngineError> {
    let mut out = Vec::new();
    // A test path is judged as every test file is (the task's own pinned as its RED step
    // left it, any other as the squash has it).
    for path in run_by_reds.iter().filter(|p| !config.is_test_path(p)) {
        let at_end = session.store.tree_entry(end, path)?;
        let file = at_end.is_some_and(|e| {
            matches!(
                e.kind,
                crate::store::EntryType::File | crate::store::EntryType::Executable
            )
        });
        if file && session.store.tree_entry(red_tree, path)? == at_end {
            out.push(path.clone());
        }
    }
    if out.is_empty() {
        return Ok(out);
    }
    let changed = session.store.changed_paths(start, end)?;
    let other_code = changed
        .iter()
        .any(|p| !config.is_test_path(p) && !out.contains(p));
    if !other_code {
        out.retain(|w| !changed.contains(w));
    }
    Ok(out)
}

/// A task whose test the policy refuses, and the code file it falls short on, when that is
/// one file of several ([`inadequate`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Weak<'a> {
    pub task: &'a TaskAdequacy,
    pub file: Option<&'a FileAdequacy>,
}

/// The test files the task's end tree `end` holds that the squashed tree does not hold as
/// they are there, but for the task's own pinned ones (`pinned`, put in as its RED step left
/// them): a test a GREEN step wrote that a later task deleted or weakened (an assertion taken
/// out). Its runs against the task's mutants would kill them with a check the PR does not
/// end with: they run with each such file as the squash has it, absent where it has none
/// (docs/integrity.md, "Adequacy by mutation"). Read in-process.
fn tests_as_squashed(
    session: &Session,
    config: &Config,
    pinned: &[&String],
    (end, squashed): (&str, &str),
) -> Result<Vec<String>, EngineError> {
    if end == squashed {
        return Ok(Vec::new());
    }
    let mut later = Vec::new();
    for path in session.store.changed_paths(end, squashed)? {
        // One the squash added is no test the task's runs would see.
        if config.is_test_path(&path)
            && !pinned.contains(&&path)
            && session.store.tree_entry(end, &path)?.is_some()
        {
            later.push(path);
        }
    }
    Ok(later)
}

/// The first task whose test killed a smaller share of its mutants than `policy`'s
/// `min_killed`, over all its code or in any one code file of it, or whose test could not be
/// measured at all though its task wrote code to mutate (it failed on the task's own code,
/// or no mutant ran within the budget, of the task or of one of its files), when the policy
/// enforces it: a measure that did not happen is no pass (docs/integrity.md). Judged per
/// file too, so that kills in one file cannot hide survivors in another.
pub fn inadequate<'a>(policy: &Policy, tasks: &'a [TaskAdequacy]) -> Option<Weak<'a>> {
    if !policy.enforce {
        return None;
    }
    tasks.iter().find_map(|a| {
        if a.unmeasured.is_some()
            || (a.mutants == 0 && a.not_run > 0)
            || (a.mutants > 0 && a.killed_share() < policy.min_killed)
        {
            return Some(Weak {
                task: a,
                file: None,
            });
        }
        a.files
            .iter()
            .find(|f| {
                (f.mutants == 0 && f.not_run > 0)
                    || (f.mutants > 0 && f.killed_share() < policy.min_killed)
            })
            .map(|f| Weak {
                task: a,
                file: Some(f),
            })
    })
}

/// `path`'s counts among `files`, added when first seen.
fn tally<'a>(files: &'a mut Vec<FileAdequacy>, path: &str) -> &'a mut FileAdequacy {
    let at = match files.iter().position(|f| f.path == path) {
        Some(at) => at,
        None => {
            files.push(FileAdequacy {
                path: path.to_string(),
                mutants: 0,
                killed: 0,
                not_run: 0,
            });
            files.len() - 1
        }
    };
    &mut files[at]
}

/// The measure of `red`'s task before anything ran: no mutant, the built-in tool.
fn unmeasured_task(red: &PinnedTest) -> TaskAdequacy {
    TaskAdequacy {
        task: red.step.task + 1,
        step: red.step.to_string(),
        tool: "builtin".into(),
        tool_error: None,
        mutants: 0,
        killed: 0,
        survived: Vec::new(),
        not_run: 0,
        unmeasured: None,
        files: Vec::new(),
        not_measured: Vec::new(),
        witnesses: Vec::new(),
        scripts: Vec::new(),
    }
}

/// One task's test against the mutants of its code, within `policy`'s budgets. A file the
/// task changed that is not code by its kind, or not text, is first taken out of one run
/// ([`Planned::without`], one run against the mutant budget): where the test then fails it
/// is code the test depends on, mutated by the built-in mutator like any other (not text,
/// it cannot be, and the task is unmeasured); where it passes, the note names it as not
/// measured (docs/integrity.md, "Adequacy by mutation").
fn measure_task(
    session: &Session,
    config: &Config,
    task: &Task,
    policy: &Policy,
    reaper: Option<&Reaper>,
) -> Result<TaskAdequacy, EngineError> {
    let mut result = unmeasured_task(task.red);
    let red = task.red;
    let files = task_files(session, config, task)?;
    if let Some(path) = files.unreadable.first() {
        result.unmeasured = Some(not_text(path));
        return Ok(result);
    }
    if files.is_empty() {
        return Ok(result);
    }
    let env = session.command_env()?;
    let limit = Duration::from_millis(policy.timeout_ms);
    let deadline = Instant::now() + limit;
    let mut worktree = TaskWorktree::new(session, task, &files, reaper)?;
    let mut budget = policy.max_mutants;
    // Each file's counts, in the order its mutants come: judged on its own.
    let mut per_file = Vec::new();
    let TaskFiles {
        code,
        unsure,
        binary,
        ..
    } = files;
    let twins = written_otherwise(&code);
    let checks = !unsure.is_empty() || !binary.is_empty();
    // The test must pass on the task's own code, else a failing run proves nothing.
    if checks && let Some(why) = fails_on_own_code(&mut worktree, config, red, deadline)? {
        result.unmeasured = Some(why);
        return Ok(result);
    }
    let mut noticed = Vec::new();
    let mut candidates: Vec<(String, Option<CodeFile>)> = unsure
        .into_iter()
        .map(|f| (f.path().to_string(), Some(f)))
        .chain(binary.into_iter().map(|path| (path, None)))
        .collect();
    candidates.sort_by(|a, b| a.0.cmp(&b.0));
    let (squashed, later) = task.as_squashed;
    for (path, text) in candidates {
        // A test the PR deleted later is out of the runs: nothing to take out.
        if later.contains(&path) && session.store.tree_entry(squashed, &path)?.is_none() {
            continue;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if budget == 0 || left.is_zero() {
            unrun(&mut result, &mut per_file, std::iter::once(path.as_str()));
            continue;
        }
        budget -= 1;
        let limit = config.test.timeout.min(left);
        let without = Planned::without(&path, runs_as_code(config, &code, &path));
        let exit = worktree.run(Some(&without), &red.command, limit)?;
        // Cut short by the task's budget, not by the test's own timeout: not a verdict.
        if matches!(exit, ExitRecord::TimedOut { .. }) && limit < config.test.timeout {
            unrun(&mut result, &mut per_file, std::iter::once(path.as_str()));
            continue;
        }
        match (exit.success(), text) {
            (false, Some(file)) => noticed.push(file),
            (false, None) => {
                result.unmeasured = Some(not_text(&path));
                return Ok(finish(result, per_file));
            }
            (true, text) => result.not_measured.push(NotMeasured {
                path,
                why: match text {
                    Some(_) => "the tests do not notice it".into(),
                    None => "not text, and the tests do not notice it".into(),
                },
            }),
        }
    }
    if code.is_empty() && noticed.is_empty() {
        return Ok(finish(result, per_file));
    }
    // A tool mutates the files of its language: what the test noticed is the built-in
    // mutator's, whatever its name.
    let made = match code.is_empty() {
        true => Ok(None),
        false => match choose_tool(config, env, &code) {
            Ok(None) => Ok(None),
            Ok(Some(Tool::Mutmut)) => mutmut_mutants(&mut worktree, &code, limit)?
                .map(|made| Some((Tool::Mutmut, made, Vec::new()))),
            Ok(Some(Tool::Stryker)) => stryker_mutants(&mut worktree, &code, limit)?
                .map(|made| Some((Tool::Stryker, made, Vec::new()))),
            Ok(Some(Tool::CargoMutants)) => cargo_mutants_mutants(&mut worktree, &code, limit)?
                .map(|made| Some((Tool::CargoMutants, made, Vec::new()))),
            Ok(Some(Tool::CosmicRay)) => cosmic_ray_mutants(&mut worktree, &code, limit, budget)?
                .map(|(made, unmade)| Some((Tool::CosmicRay, made, unmade))),
            Err(why) => Err(why),
        },
    };
    let (mut mutants, unmade) = match made {
        // The tool's and the noticed files' share one budget: every file's first mutant
        // before any file's second, so that a file padded with mutants leaves none unrun.
        Ok(Some((tool, mut made, mut unmade))) => {
            result.tool = tool.name().into();
            made.extend(builtin_readable(&noticed, task.scripts));
            let (run, past) = split_within(made, budget);
            unmade.extend(past);
            (run, unmade)
        }
        // The built-in mutator spreads the budget over the changed lines itself.
        made => {
            if let Err(why) = made {
                result.tool_error = Some(why);
            }
            let mut all = code;
            all.extend(noticed);
            builtin_within(&all, budget, task.scripts)
        }
    };
    for m in &mutants {
        tally(&mut per_file, &m.path);
    }
    unrun(
        &mut result,
        &mut per_file,
        unmade.iter().map(String::as_str),
    );
    if mutants.is_empty() {
        return Ok(finish(result, per_file));
    }
    if mutants.len() > budget {
        unrun(
            &mut result,
            &mut per_file,
            mutants[budget..].iter().map(|m| m.path.as_str()),
        );
        mutants.truncate(budget);
    }
    if !checks && let Some(why) = fails_on_own_code(&mut worktree, config, red, deadline)? {
        unrun(
            &mut result,
            &mut per_file,
            mutants.iter().map(|m| m.path.as_str()),
        );
        result.unmeasured = Some(why);
        return Ok(finish(result, per_file));
    }
    for (done, mutant) in mutants.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            unrun(
                &mut result,
                &mut per_file,
                mutants[done..].iter().map(|m| m.path.as_str()),
            );
            break;
        }
        let limit = config.test.timeout.min(left);
        let exit = worktree.run(Some(mutant), &red.command, limit)?;
        // Cut short by the task's budget, not by the test's own timeout: not a verdict.
        if matches!(exit, ExitRecord::TimedOut { .. }) && limit < config.test.timeout {
            unrun(
                &mut result,
                &mut per_file,
                mutants[done..].iter().map(|m| m.path.as_str()),
            );
            break;
        }
        result.mutants += 1;
        let file = tally(&mut per_file, &mutant.path);
        file.mutants += 1;
        if exit.success() {
            result.survived.push(mutant.name.clone());
        } else {
            result.killed += 1;
            file.killed += 1;
        }
    }
    // Kills are a measure only where the test ran the code: one that reads its text (a
    // `grep` of the very line the task wrote, a checksum) fails on every mutant of that text
    // too. The same program written otherwise must pass as the code does. Run only where the
    // kills would pass: a share below `min_killed` is named as it is.
    if result.mutants > 0 && result.killed_share() >= policy.min_killed && !twins.is_empty() {
        let exit = worktree.run_all(&twins, &red.command, config.test.timeout)?;
        // Before the test is blamed, it runs once more on the code as written: one that fails
        // there too (a flaky test, a run out of time) says nothing of what it checks.
        let blamed = !exit.success()
            && worktree
                .run(None, &red.command, config.test.timeout)?
                .success();
        if blamed {
            let paths: Vec<&str> = twins.iter().map(|t| t.path.as_str()).collect();
            // What was named beside the kills (witnesses, files not measured) stays.
            result.mutants = 0;
            result.killed = 0;
            result.survived.clear();
            result.unmeasured = Some(format!(
                "the test fails on the task's own code written otherwise ({} run from an \
                 encoded copy of {} text, {exit}): it checks the code's text, not what the code \
                 does; test what it does",
                paths.join(", "),
                if paths.len() == 1 { "its" } else { "their" },
            ));
            return Ok(finish(result, Vec::new()));
        }
    }
    Ok(finish(result, per_file))
}

/// Why a run of the task's test on its own code (`None`: it passed) proves nothing: it
/// failed there, with the tests the PR changed later as the squash has them and again with
/// them holding only the lines the squash kept ([`TaskWorktree::keep_later_lines`]: a later
/// task's test, added to a file this task's command runs, fails on this task's code). Where
/// it passes so, the lines a later task added that it still passes with are put back
/// ([`TaskWorktree::put_back_added_lines`]: an `exit 0` on top of this task's check).
fn fails_on_own_code(
    worktree: &mut TaskWorktree,
    config: &Config,
    red: &PinnedTest,
    deadline: Instant,
) -> Result<Option<String>, EngineError> {
    let mut own;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        own = worktree.run(None, &red.command, config.test.timeout.min(left))?;
        if own.success() || !worktree.keep_later_lines()? {
            break;
        }
    }
    if own.success() {
        worktree.put_back_added_lines(&red.command, config.test.timeout, deadline)?;
    }
    Ok((!own.success()).then(|| {
        format!(
            "the test fails on the task's own code ({own}); make it pass there within [verify] \
             mutation_timeout"
        )
    }))
}

/// Why a task is unmeasured whose code at `path` is not text.
fn not_text(path: &str) -> String {
    format!(
        "{path}, code the task wrote, is not text where the task ends (a byte that is no \
         UTF-8, or over the size cap): no mutant of it can be made; keep code in UTF-8 text"
    )
}

/// Counts a mutant of each of `paths` as not run.
fn unrun<'p>(
    result: &mut TaskAdequacy,
    per_file: &mut Vec<FileAdequacy>,
    paths: impl Iterator<Item = &'p str>,
) {
    for path in paths {
        result.not_run += 1;
        tally(per_file, path).not_run += 1;
    }
}

/// `result` with each file's counts, every file its mutants are of named (of one file too:
/// the verdict names the files measured, not only those it did not measure).
fn finish(mut result: TaskAdequacy, per_file: Vec<FileAdequacy>) -> TaskAdequacy {
    result.files = per_file;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(killed: usize, mutants: usize, files: &[(&str, usize, usize, usize)]) -> TaskAdequacy {
        TaskAdequacy {
            task: 1,
            step: "1.1".into(),
            tool: "builtin".into(),
            tool_error: None,
            mutants,
            killed,
            survived: Vec::new(),
            not_run: files.iter().map(|f| f.3).sum(),
            unmeasured: None,
            files: files
                .iter()
                .map(|&(path, mutants, killed, not_run)| FileAdequacy {
                    path: path.into(),
                    mutants,
                    killed,
                    not_run,
                })
                .collect(),
            not_measured: Vec::new(),
            witnesses: Vec::new(),
            scripts: Vec::new(),
        }
    }

    const ENFORCE: Policy = Policy {
        enforce: true,
        min_killed: 500,
        max_mutants: 20,
        timeout_ms: 60_000,
    };

    #[test]
    fn each_file_of_a_task_meets_min_killed_on_its_own_under_enforce() {
        let file = |tasks: &[TaskAdequacy]| {
            inadequate(&ENFORCE, tasks).map(|w| (w.task.task, w.file.map(|f| f.path.clone())))
        };
        // 4 of 7 over the task; 0 of 3 in b.sh: refused, naming b.sh.
        let hidden = task(4, 7, &[("a.sh", 4, 4, 0), ("b.sh", 3, 0, 0)]);
        assert_eq!(
            file(std::slice::from_ref(&hidden)),
            Some((1, Some("b.sh".into())))
        );
        // Every file at the share: no refusal.
        let fine = task(5, 7, &[("a.sh", 4, 3, 0), ("b.sh", 3, 2, 0)]);
        assert_eq!(file(std::slice::from_ref(&fine)), None);
        // A file none of whose mutants ran is unmeasured.
        let starved = task(4, 4, &[("a.sh", 4, 4, 0), ("b.sh", 0, 0, 3)]);
        assert_eq!(file(&[starved]), Some((1, Some("b.sh".into()))));
        // Below over the task: the task is named, not a file.
        let weak = task(1, 7, &[("a.sh", 4, 1, 0), ("b.sh", 3, 0, 0)]);
        assert_eq!(file(&[fine, weak]), Some((1, None)));
        // Under report nothing is refused.
        let report = Policy {
            enforce: false,
            ..ENFORCE
        };
        assert!(inadequate(&report, &[hidden]).is_none());
    }
}
