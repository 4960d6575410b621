//! The finalization checks (docs/architecture.md, "Finalization and merge"): the squash is one commit over main, titled with the
//! PR title, with exactly the verified tree; the master-plan commit sits on it, changes only
//! the master plan, and names the squashed commit.

use super::pr_record::{self, PinnedRed, PrRecord};
use super::scratch::Scratch;
use super::{EngineError, Session, io_error};
use crate::config::{Config, PinnedTests};
use crate::exec::{self, GitError, RunOutput};
use crate::gates;
use crate::store::Snapshot;
use crate::workflow::fence::fenced;
use crate::workflow::notes::{ChangedTests, PathsOfStep, RedProof};
use crate::workflow::{master_plan, red};

/// What the final check found (docs/integrity.md, "A clean final check" and "RED proves
/// itself at the end"): what the squashed commit's verification rests on, every task's RED
/// test on the PR's base and on the squashed commit, the tests the PR changed, and why the
/// squash does not count, when it does not.
#[derive(Clone, Debug)]
pub struct FinalCheck {
    /// For the final note: `not verified: no gates`, or what passed.
    pub verification: String,
    pub red_tests: Vec<RedProof>,
    pub changed_tests: Option<ChangedTests>,
    /// What the PR's chain records about its tests.
    pub record: PrRecord,
    /// Tests the PR adds that no RED step pinned.
    pub unpinned_tests: Vec<String>,
    /// Tasks of the plan without a RED step.
    pub tasks_without_red: Vec<String>,
    pub refused: Option<String>,
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
    // A link out of the repository makes what the commit holds depend on a file it does
    // not hold, whichever test reads it, and whatever the RED step pinned.
    let mut links_out = Vec::new();
    for (how, path) in git.tree_changes(&base, commit)? {
        if how != "removed"
            && let Some(why) = super::red::link_out(session, &tree, &path)?
        {
            links_out.push(why);
        }
    }
    let no_gates = config.preflight.is_empty();
    let mut check = FinalCheck {
        verification: if no_gates {
            "not verified: no gates".to_string()
        } else {
            "not verified again: the clean final check is off ([finalize] clean_check)".to_string()
        },
        red_tests: Vec::new(),
        changed_tests: changed_tests(session, config, &base, &tree)?,
        record,
        unpinned_tests,
        tasks_without_red,
        refused: None,
    };
    if !links_out.is_empty() {
        check.refused = Some(format!(
            "the PR adds {} out of the repository ({}): what the commit holds would depend on a \
             file it does not hold, which no check here or on a clone can see. Commit the file \
             itself (or a link that stays inside the repository), then squash and submit again.",
            if links_out.len() == 1 {
                "a symbolic link"
            } else {
                "symbolic links"
            },
            links_out.join("; ")
        ));
        return Ok(check);
    }
    if !config.finalize.clean_check {
        return Ok(check);
    }
    let env = session.command_env()?;
    let squashed = Scratch::new(session, commit, &tree)?;
    if !no_gates {
        let run = gates::run_preflight(&config.preflight, squashed.path(), env)
            .map_err(io_error("run preflight in the clean worktree"))?;
        if let Some(gate) = run.failed() {
            check.refused = Some(format!(
                "the clean final check failed: preflight gate `{}` failed ({}) on the squashed commit in a \
                 fresh worktree, though it passed in yours: something the commit does not hold (an \
                 untracked or ignored file) made it pass there. Commit what the tests need, then squash \
                 and submit again.\n{}",
                gate.name,
                gate.run.exit,
                exec::tail_lines(&gate.run.output, config.test.output_tail)
            ));
            return Ok(check);
        }
        check.verification = format!(
            "the gates passed on the squashed commit in a clean worktree ({})",
            config.gate_names().join(", ")
        );
    }
    if let Some(changed) = check.changed_tests.as_mut()
        && !no_gates
    {
        let base_tree = git.tree_of(&base)?;
        squashed.put(&base_tree, &changed.paths)?;
        let run = gates::run_preflight(&config.preflight, squashed.path(), env)
            .map_err(io_error("run preflight with the pinned tests"))?;
        squashed.restore(&changed.paths)?;
        changed.passed = Some(run.passed());
        changed.failed_gate = run.failed().map(|g| g.name.clone());
        if config.gates.pinned_tests == PinnedTests::Enforce && !run.passed() {
            check.refused = Some(format!(
                "the PR changes tests that existed when it began ({}), and with them as they were then, \
                 preflight gate `{}` fails: under [gates] pinned_tests = \"enforce\" a PR keeps the tests \
                 it found passing. Put them back, or ask a human to change them on main.",
                changed.paths.join(", "),
                changed.failed_gate.as_deref().unwrap_or("?")
            ));
            return Ok(check);
        }
    }
    // The RED tests run in worktrees of their own: nothing the gates left behind is there.
    drop(squashed);
    red_proofs(session, config, &mut check, &base, &tree)?;
    Ok(check)
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
/// having run a test. The two worktrees differ in their files only: both are detached at the
/// base with the base's tree as their index, made in an order drawn at random, and each
/// RED's two runs come in an order drawn at random too.
fn red_proofs(
    session: &Session,
    config: &Config,
    check: &mut FinalCheck,
    base: &str,
    tree: &str,
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
    let git = &session.git;
    let store = &session.store;
    let env = session.command_env()?;
    let base_tree = git.tree_of(base)?;
    // Both runs see one history and one index: a test that tells the trees apart by HEAD,
    // the log or what is staged, not by the code, cannot pass one and fail the other.
    let (before, squashed) = if coin() {
        let before = Scratch::with_index(session, base, &base_tree, &base_tree)?;
        (
            before,
            Scratch::with_index(session, base, tree, &base_tree)?,
        )
    } else {
        let squashed = Scratch::with_index(session, base, tree, &base_tree)?;
        (
            Scratch::with_index(session, base, &base_tree, &base_tree)?,
            squashed,
        )
    };
    // The latest pin of each path, in the squashed worktree once for all the runs there.
    let mut latest: std::collections::BTreeMap<&str, (&str, &PinnedRed)> =
        std::collections::BTreeMap::new();
    for red in &reds {
        let Some(red_tree) = &red.tree else { continue };
        squashed.put(red_tree, &red.paths)?;
        for path in &red.paths {
            latest.insert(path, (red_tree, red));
        }
    }
    let timeout = config.test.timeout;
    let run = |scratch: &Scratch, command: &str| -> Result<RunOutput, EngineError> {
        exec::run_shell(command, scratch.path(), timeout, env)
            .map_err(io_error(format!("run the RED test `{command}`")))
    };
    for pinned in &reds {
        let Some(red_tree) = &pinned.tree else {
            continue;
        };
        let on_base_paths: Vec<String> =
            pinned.paths.iter().chain(&pinned.shared).cloned().collect();
        before.put(red_tree, &on_base_paths)?;
        let (on_base, on_squash) = if coin() {
            let on_base = run(&before, &pinned.command)?;
            (on_base, run(&squashed, &pinned.command)?)
        } else {
            let on_squash = run(&squashed, &pinned.command)?;
            (run(&before, &pinned.command)?, on_squash)
        };
        before.restore(&on_base_paths)?;
        let mut changed_after_red = Vec::new();
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
                changed_after_red.push(path.clone());
            }
        }
        // A shared file's test lines are not pinned: a later step that dropped them is named.
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
                &text(&base_tree, path)?,
                &text(red_tree, path)?,
                &text(tree, path)?,
            );
            if !dropped.is_empty() {
                changed_after_red.push(path.clone());
            }
        }
        check.red_tests.push(RedProof {
            step: pinned.step.to_string(),
            command: pinned.command.clone(),
            paths: pinned.paths.clone(),
            shared: pinned.shared.clone(),
            changed_after_red,
            repinned,
            base: on_base.exit,
            squashed: on_squash.exit,
        });
        let not_run = on_squash
            .exit
            .success()
            .then(|| red::did_not_run(&pinned.command, on_squash.exit, &on_squash.output))
            .flatten();
        let (why, output) = if on_base.exit.success() {
            (
                format!(
                    "it passes on the PR's base ({}) too, so what it checks is not the PR's code: a test \
                     whose verdict comes from elsewhere (a file outside the repository, the environment, \
                     how it is run) proves nothing",
                    base.get(..12).unwrap_or(base)
                ),
                &on_base.output,
            )
        } else if !on_squash.exit.success() {
            (
                format!("it fails on the squashed commit ({})", on_squash.exit),
                &on_squash.output,
            )
        } else if let Some(why) = not_run {
            (
                format!("on the squashed commit it passes without running a test ({why})"),
                &on_squash.output,
            )
        } else {
            continue;
        };
        check.refused = Some(format!(
            "the final check of task {}'s RED test (step {}, `{}`, with {} as the RED step left them) \
             failed: {why}. Output:\n{}",
            pinned.step.task + 1,
            pinned.step,
            pinned.command,
            if pinned.paths.is_empty() {
                "no pinned file".to_string()
            } else {
                pinned.paths.join(", ")
            },
            fenced(&exec::tail_lines(output, config.test.output_tail))
        ));
        return Ok(());
    }
    Ok(())
}

/// Tests present on the PR's base that the PR changes or removes (their gates' verdict is left for
/// the clean check to give).
fn changed_tests(
    session: &Session,
    config: &Config,
    base: &str,
    tree: &str,
) -> Result<Option<ChangedTests>, EngineError> {
    // From the PR's base, not the pin: after a rebase onto main as another workflow's merge
    // left it, what that merge changed is not this PR's.
    let paths: Vec<String> = session
        .git
        .tree_changes(base, tree)?
        .into_iter()
        .filter(|(how, path)| *how != "added" && config.is_test_path(path))
        .map(|(_, path)| path)
        .collect();
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
    }))
}

/// Whether the squash holds.
pub fn verify_squash(session: &Session, snap: &Snapshot) -> Result<FinalizeCheck, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work", FINALIZATION)?;
    super::hermetic::require(session)?;
    let main = session.main_branch(Some(&snap.state))?;
    Ok(as_reason(squash(session, snap, &main)))
}

/// `submit-work --squash`: makes the squash commit the briefing asks for (the branch's
/// commits over main as one, titled with the PR title, the plan's summary as its body),
/// unless HEAD is one already. Returns the branch's tip before, to put it back when the
/// check refuses the squash; `None` when nothing was made.
pub fn make_squash(session: &Session, snap: &Snapshot) -> Result<Option<String>, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work --squash", FINALIZATION)?;
    // Found before anything is made: the check that follows would refuse to run.
    super::hermetic::require(session)?;
    let git = &session.git;
    let Some(plan) = session.store.plan(snap)? else {
        return Err(EngineError::Internal(
            "there is no PR plan to squash for".into(),
        ));
    };
    let main = session.main_branch(Some(&snap.state))?;
    if git.count(&format!("{main}..HEAD"))? == 1 && git.subject("HEAD")? == plan.pr_title {
        return Ok(None);
    }
    let old = git.rev_parse("HEAD")?;
    let base = git.merge_base(&main, "HEAD")?;
    git.reset_soft(&base)?;
    let message = format!("{}\n\n{}\n", plan.pr_title, plan.summary.trim());
    let made = git.commit(
        &message,
        false,
        session.store.identity().is_some(),
        &[(crate::WORKFLOW_ENV, session.store.workflow())],
    );
    if let Err(e) = made {
        // Nothing half-done: the branch goes back to where it was.
        git.reset_soft(&old)?;
        return Err(EngineError::Git(e));
    }
    Ok(Some(old))
}

/// `submit-work --mark-done`: marks this PR's heading in the master plan `[DONE] <squashed
/// commit>` and commits only that file on the squashed commit, unless HEAD is that commit
/// already. Returns the squashed commit, to put the branch back when the check refuses;
/// `None` when nothing was made.
pub fn make_mark_done(
    session: &Session,
    snap: &Snapshot,
    path: &str,
) -> Result<Option<String>, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work --mark-done", FINALIZATION)?;
    let git = &session.git;
    let Some(squashed) = snap.state.final_commit().map(str::to_string) else {
        return Err(EngineError::Internal(
            "the PR has not been squashed yet".into(),
        ));
    };
    let head = git.rev_parse("HEAD")?;
    if head != squashed {
        // Made already (by a run that lost a race, or by hand): the check judges it.
        return Ok(None);
    }
    let Some(title) = snap.summary.as_ref().map(|p| p.title.clone()) else {
        return Err(EngineError::Internal(
            "there is no PR plan to finalize".into(),
        ));
    };
    // Uncommitted changes, the agent clients' settings aside (never part of the agent's
    // work, and untouched here).
    let left_out = git.left_out_changes()?;
    let changed = git
        .tracked_changes()?
        .lines()
        .any(|l| l.get(3..).is_some_and(|f| !left_out.iter().any(|o| o == f)));
    if git.unstaged_files()?.iter().any(|f| f == path) || changed {
        return Err(super::wrong_state(
            snap.state.status(),
            format!(
                "submit-work --mark-done edits and commits {path}, and the working tree has uncommitted \
                 changes to tracked files"
            ),
            "Commit or stash them first (`git stash`), then run it again.",
        ));
    }
    let text = session.master_plan_at(&squashed, path)?.unwrap_or_default();
    let short = crate::short_id(&squashed).to_string();
    let Some(marked) = master_plan::mark_done(&text, &title, &short) else {
        return Err(super::wrong_state(
            snap.state.status(),
            format!("{path} has no open PR heading titled \"{title}\" to mark [DONE]"),
            format!(
                "Edit {path} by hand (mark the PR's heading [DONE] {short}), commit only that file, and \
                 run `git orchestrate submit-work --summary \"master plan updated\"`."
            ),
        ));
    };
    let file = session.store.workdir().join(path);
    std::fs::write(&file, marked).map_err(io_error(format!("write {}", file.display())))?;
    let commit = git.add_path(path).and_then(|()| {
        git.commit(
            &format!("docs: mark \"{title}\" done in {path}\n"),
            false,
            session.store.identity().is_some(),
            &[(crate::WORKFLOW_ENV, session.store.workflow())],
        )
    });
    if let Err(e) = commit {
        git.reset_soft(&squashed)?;
        git.restore_path(&squashed, path)?;
        return Err(EngineError::Git(e));
    }
    Ok(Some(squashed))
}

/// Completes "HEAD is on X, not on the PR branch B (state S)".
const FINALIZATION: &str = "; finalization checks the PR branch";

/// What a finalization check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalizeCheck {
    /// The commit holds.
    Holds { commit: String },
    /// It does not, and this says why.
    Refused { reason: String },
}

fn refuse(reason: impl Into<String>) -> Result<FinalizeCheck, GitError> {
    Ok(FinalizeCheck::Refused {
        reason: reason.into(),
    })
}

/// A git command that fails during a check (a missing branch, an unreadable commit) fails
/// the check, with git's words as the reason.
fn as_reason(checked: Result<FinalizeCheck, GitError>) -> FinalizeCheck {
    checked.unwrap_or_else(|e| FinalizeCheck::Refused {
        reason: format!("the check could not run: {e}"),
    })
}

fn squash(session: &Session, snap: &Snapshot, main: &str) -> Result<FinalizeCheck, GitError> {
    let git = &session.git;
    let state = &snap.state;
    let Some(plan) = &snap.summary else {
        return refuse("there is no PR plan to finalize");
    };
    let head = git.rev_parse("HEAD")?;
    let count = git.count(&format!("{main}..HEAD"))?;
    if count != 1 {
        return refuse(format!(
            "the branch has {count} commits over {main}; it must have exactly one. Squash them: \
             git reset --soft $(git merge-base {main} HEAD) && git commit -m {}",
            crate::workflow::briefing::shell_quote(&plan.title)
        ));
    }
    let subject = git.subject("HEAD")?;
    if subject != plan.title {
        return refuse(format!(
            "the squashed commit is titled \"{subject}\"; it must be titled with the PR title, \"{}\" \
             (fix it with `git commit --amend -m ...`)",
            plan.title
        ));
    }
    let verified = match (state.verified_tree(), state.last_checkpoint()) {
        (Some(tree), _) => tree.to_string(),
        (None, Some(checkpoint)) => git.tree_of(checkpoint)?,
        (None, None) => {
            return refuse("nothing on this branch has passed verification yet");
        }
    };
    let tree = git.tree_of("HEAD")?;
    if tree != verified {
        let differ = git.tree_changes(&verified, &tree)?;
        const SHOWN: usize = 20;
        let mut listed: Vec<String> = differ
            .iter()
            .take(SHOWN)
            .map(|(how, path)| format!("{how} {path}"))
            .collect();
        if differ.len() > SHOWN {
            listed.push(format!("and {} more", differ.len() - SHOWN));
        }
        return refuse(format!(
            "the squashed commit's tree ({tree}) is not the tree that last passed verification ({verified}): \
             the squash holds changes that were never verified ({}). To keep them, verify them first: \
             `git reset --soft HEAD~1`, then `git orchestrate checkpoint` (it verifies and commits them), and \
             squash again; to drop them, undo them and squash again",
            listed.join(", ")
        ));
    }
    Ok(FinalizeCheck::Holds { commit: head })
}

/// Whether the master-plan commit holds.
/// The file is the configured master plan (`path`), the one the plan had to name.
pub fn verify_master_plan(
    session: &Session,
    snap: &Snapshot,
    path: &str,
) -> Result<FinalizeCheck, EngineError> {
    session.require_pr_branch(&snap.state, "submit-work", FINALIZATION)?;
    Ok(as_reason(master_plan(session, snap, path)))
}

fn master_plan(session: &Session, snap: &Snapshot, path: &str) -> Result<FinalizeCheck, GitError> {
    let git = &session.git;
    let Some(squashed) = &snap.state.final_commit() else {
        return refuse("the PR has not been squashed yet");
    };
    let head = git.rev_parse("HEAD")?;
    if head == *squashed {
        return refuse(format!(
            "HEAD is still the squashed commit; commit the change to {} on top of it",
            path
        ));
    }
    if git.parents(&head)? != [squashed.to_string()] {
        return refuse(format!(
            "the master-plan commit must sit directly on the squashed commit {squashed}, as the only commit after it"
        ));
    }
    let changed = git.changed_files(squashed, &head)?;
    if changed != [path.to_string()] {
        return refuse(format!(
            "the commit changes {}; it must change only the master plan, {}",
            changed.join(", "),
            path
        ));
    }
    // Read in-process, to at most 8 MiB: the agent wrote this commit.
    let text = match session.master_plan_at(&head, path) {
        Ok(text) => text.unwrap_or_default(),
        Err(e) => return refuse(e.to_string()),
    };
    // It marks this PR done, and no other: a master plan with every PR closed would make the
    // next `--no-pr-left` true by the agent's own hand (docs/integrity.md).
    let before = match session.master_plan_at(squashed, path) {
        Ok(text) => text.unwrap_or_default(),
        Err(e) => return refuse(e.to_string()),
    };
    let still_open = master_plan::open_prs(&text);
    let closed: Vec<String> = master_plan::open_prs(&before)
        .into_iter()
        .filter(|heading| !still_open.contains(heading))
        .collect();
    if closed.len() > 1 {
        return refuse(format!(
            "the commit closes {} PRs of {path} ({}); it may mark only this PR done (the others stay as \
             they were: undo the rest, and commit again)",
            closed.len(),
            closed
                .iter()
                .map(|h| format!("\"{h}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !text.contains(&squashed[..7]) {
        return refuse(format!(
            "{} does not mention the squashed commit {} (write its hash next to the PR marked [DONE])",
            path,
            crate::short_id(squashed)
        ));
    }
    Ok(FinalizeCheck::Holds { commit: head })
}
