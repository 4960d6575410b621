//! `get-task`'s merge of the PR branch into main (docs/architecture.md, "Finalization and
//! merge"): only a PR whose history, notes and main are as finalization left them.

use super::blocked::{Blocked, dirty};
use super::land::{MainAt, dirty_elsewhere, main_at, move_main, up_to_remote};
use super::landing::Landed;
use crate::engine::{EngineError, Session};
use crate::exec::git::MergedTree;
use crate::store::Snapshot;
use crate::workflow::Event;

/// The first forged transition of the PR in `snap`: from its plan's acceptance to the tip.
fn forged_in_pr(
    session: &Session,
    snap: &Snapshot,
) -> Result<Option<crate::engine::chain::AuditProblem>, EngineError> {
    let store = &session.store;
    let stop = crate::engine::chain::pr_stop(store, snap.tip)?;
    let chain = crate::engine::chain::audit_chain(store, store.workflow(), snap.tip, stop)?;
    Ok(chain.forged)
}

/// Why main moved outside the workflow, if it did: its drift, less this PR's own merge when
/// a crash came between the merge and its record (a merge commit of exactly the checked
/// commit onto main, whose tree is what git makes of that merge, so nothing rode along).
fn outside_moves(
    session: &Session,
    snap: &Snapshot,
    main: &str,
    checked: Option<&str>,
) -> Result<Option<Blocked>, EngineError> {
    let Some(mut drift) = crate::engine::main_line::drift_on(session, &snap.state, main)? else {
        return Ok(None);
    };
    let git = &session.git;
    if let Some(checked) = checked {
        let ours = |commit: &str| -> Result<bool, EngineError> {
            let parents = git.parents(commit)?;
            let [first, second] = parents.as_slice() else {
                return Ok(false);
            };
            if second != checked {
                return Ok(false);
            }
            Ok(git.merge_tree(first, checked)? == Some(git.tree_of(commit)?))
        };
        let mut kept = Vec::new();
        for commit in drift.commits {
            if !ours(&commit.commit)? {
                kept.push(commit);
            }
        }
        drift.commits = kept;
    }
    if drift.commits.is_empty() && !drift.rewritten {
        return Ok(None);
    }
    Ok(Some(Blocked::MovedOutside {
        notice: drift.notice().to_string(),
    }))
}

/// Merges the PR branch into main (docs/architecture.md, "Finalization and merge"). Safe to run again after a crash: a branch
/// already merged and deleted counts as merged.
pub(super) fn merge(
    session: &Session,
    facts: &crate::engine::Facts,
    snap: &Snapshot,
    branch: &str,
    out: &mut LandOutcome,
) -> Result<Event, EngineError> {
    crate::engine::hermetic::require(session)?;
    let main = facts.main.clone();
    let git = &session.git;
    let blocked = |reason: Blocked| {
        Ok(Event::MergeBlocked {
            reason: reason.to_string(),
        })
    };
    // A landing a kill interrupted is completed (its record is the chain's tip then) or
    // given up before anything else is judged (docs/integrity.md, "A landing in flight").
    let remote = crate::engine::remote::remote_under(session, facts.config())?;
    match super::landing::complete_interrupted(session, snap, remote.as_deref(), &main)? {
        Ok(Some(event)) => {
            out.recorded = true;
            return Ok(event);
        }
        Ok(None) => {}
        Err(why) => return blocked(why),
    }
    if let Some(reason) = not_mergeable(session, snap)? {
        return blocked(reason);
    }
    // What finalization checked: the merge takes exactly this commit, nothing added since.
    let checked = snap.state.plan_commit();
    // Only a workflow or a human moves main (docs/integrity.md): as it is here when there is
    // no remote; with one, `land` judges main as the remote has it, after fetching it with the
    // workflows' records (judged before that fetch, a merge another clone pushed a moment ago
    // would block this one for good).
    if remote.is_none()
        && let Some(reason) = outside_moves(session, snap, &main, checked)?
    {
        return blocked(reason);
    }
    if !session.store.branch_exists(branch)? {
        // A crash after the merge deleted the branch: merged if the checked work is in main.
        let merged = match checked.or(snap.state.final_commit()) {
            Some(commit) => git.is_ancestor(commit, &main)?,
            None => false,
        };
        return if merged {
            Ok(Event::Merged {
                branch: branch.to_string(),
                main: git.rev_parse(&main).ok(),
            })
        } else {
            blocked(Blocked::BranchGone {
                branch: branch.to_string(),
                checked: checked.map(str::to_string),
                main,
            })
        };
    }
    let tip = git.rev_parse(branch)?;
    match checked {
        Some(checked) if *checked == tip => {}
        Some(checked) => {
            return blocked(Blocked::BranchMoved {
                branch: branch.to_string(),
                tip,
                checked: checked.to_string(),
                main,
            });
        }
        None => {
            return blocked(Blocked::NothingChecked {
                branch: branch.to_string(),
                main,
            });
        }
    }
    let recorder = super::landing::MergeRecord {
        session,
        snap,
        branch,
    };
    land(
        session,
        &snap.state,
        Some(snap),
        Some(&recorder),
        None,
        branch,
        &tip,
        &main,
        out,
    )
}

/// What a landing did besides its event: how often it lost the race to another clone, and
/// whether it recorded the `merge` transition itself (the workflow's merge is recorded
/// before it is pushed; a ticket's is recorded by the ticket).
#[derive(Clone, Debug, Default)]
pub(crate) struct LandOutcome {
    pub raced: usize,
    pub recorded: bool,
}

/// How often the merge is made again after another clone pushed main first.
const MAX_PUSHES: usize = 5;

/// Lands the merge of `tip` on main (docs/architecture.md, "Finalization and merge"): main
/// brought up to the remote's, the merge made from objects, checked again when main moved
/// since the PR was checked, put on main where main is checked out, and pushed with a lease
/// on the remote's main as fetched. A push that loses the race takes the merge back off
/// main and does it all again; a conflict halts with the PR branch intact.
///
/// `state` gives the remote and the gates; `judged` is the workflow whose accounting of main
/// tells a move outside the workflows (none for a ticket, which keeps no such accounting),
/// and whose `merge` transition is recorded first and pushed with main in one atomic push
/// (`super::landing`);
/// `pinned` is the commit the work was checked on (a ticket's pin): a merge onto a main
/// that moved since is gated again before it lands.
#[allow(clippy::too_many_arguments)]
pub(crate) fn land(
    session: &Session,
    state: &crate::workflow::State,
    judged: Option<&Snapshot>,
    recorder: Option<&dyn super::landing::Recorder>,
    pinned: Option<&str>,
    branch: &str,
    tip: &str,
    main: &str,
    out: &mut LandOutcome,
) -> Result<Event, EngineError> {
    let git = &session.git;
    let blocked = |reason: Blocked| {
        Ok(Event::MergeBlocked {
            reason: reason.to_string(),
        })
    };
    let remote = crate::engine::remote::coordination_remote(session, state)?;
    let at = match place_main(session, main)? {
        Ok(at) => at,
        Err(why) => return blocked(why),
    };
    let message = format!("Merge branch '{branch}'");
    for attempt in 0..MAX_PUSHES {
        let theirs = match &remote {
            Some(remote) => match up_to_remote(session, main, &at, remote)? {
                Ok(theirs) => theirs,
                Err(why) => return blocked(why),
            },
            None => None,
        };
        // Only a workflow or a human moves main (docs/integrity.md): as the remote has it too.
        if let Some(snap) = judged
            && let Some(why) = outside_moves(session, snap, main, Some(tip))?
        {
            return blocked(why);
        }
        let before = git.rev_parse(&crate::store::branch_ref(main))?;
        let merged = match merge_commit(session, tip, &before, &message)? {
            Ok(merged) => merged,
            Err(files) => return Ok(conflicted(branch, main, &files)),
        };
        // A merge onto a main that moved after another clone's push is checked again.
        if merged != before && (attempt > 0 || pinned.is_some_and(|pin| pin != before)) {
            let config = session.load_config(Some(state))?.config;
            if let Some(why) = crate::engine::finalize::gates_on(session, &config, &merged)? {
                return blocked(Blocked::FailsOnNewMain {
                    main: main.to_string(),
                    why,
                });
            }
        }
        let target = super::landing::Target {
            remote: remote.as_deref(),
            main,
            at: &at,
            branch,
            tip,
            merged: &merged,
            before: &before,
            theirs: theirs.as_deref(),
            // Only the recorder reads it.
            exact: recorder.is_some() && merged_exactly(session, &merged, tip, &before)?,
        };
        let attempt = match recorder {
            Some(recorder) => record_and_push(session, recorder, &target)?,
            None => move_and_push(session, &target)?,
        };
        match attempt {
            Pushed::Recorded(event) => {
                out.recorded = true;
                return Ok(event);
            }
            Pushed::Landed => return finish(session, branch, tip, &at, &merged, &before),
            Pushed::Blocked(why) => return blocked(why),
            Pushed::Raced => out.raced += 1,
        }
    }
    blocked(Blocked::RaceLost {
        main: main.to_string(),
        remote: remote.unwrap_or_default(),
        attempts: MAX_PUSHES,
    })
}

/// Where main is for the landing: checked out here in a repository of one worktree (the
/// merge lands in its files), else where it is; `Err` when it is checked out in another
/// worktree whose files are not clean, or cannot be checked out here.
fn place_main(session: &Session, main: &str) -> Result<Result<MainAt, Blocked>, EngineError> {
    let git = &session.git;
    let mut at = main_at(session, main)?;
    match &at {
        // One worktree, as ever: main checked out here, and the merge lands in its files.
        MainAt::Nowhere if git.worktrees()?.len() <= 1 => {
            if let Err(e) = git.checkout(main) {
                return Ok(Err(Blocked::Git(e.to_string())));
            }
            at = MainAt::Here;
        }
        // Several worktrees, each maybe another workflow's landing at this moment: main stays
        // checked out nowhere and moves as a ref, by compare-and-swap, and this worktree is
        // left detached at the merge. Checked out here, another workflow that found it
        // checked out nowhere a moment before would move the ref under this worktree's
        // files, leaving them staged as undoing its merge (tests/cli/team.rs).
        MainAt::Nowhere => {}
        MainAt::Elsewhere(worktree) => {
            if let Some(why) = dirty_elsewhere(session, main, worktree)? {
                return Ok(Err(why));
            }
        }
        MainAt::Here => {}
    }
    Ok(Ok(at))
}

/// How one attempt of landing the merge ended.
enum Pushed {
    /// The recorder recorded the merge and it landed: the event it recorded.
    Recorded(Event),
    /// Main moved to the merge (and pushed, with a remote), nothing recorded yet.
    Landed,
    Blocked(Blocked),
    /// The remote's main moved first: the attempt is made again from a fresh read.
    Raced,
}

/// The recorder's landing (the merge recorded first, then pushed with main and the notes in
/// one atomic push), its refusal told apart from a lost race.
fn record_and_push(
    session: &Session,
    recorder: &dyn super::landing::Recorder,
    target: &super::landing::Target,
) -> Result<Pushed, EngineError> {
    Ok(
        match super::landing::record_and_push(session, recorder, target)? {
            Landed::Recorded(event) => Pushed::Recorded(event),
            Landed::Blocked(why) => Pushed::Blocked(why),
            Landed::Refused(refused) if crate::engine::remote::lost_race(&refused) => Pushed::Raced,
            Landed::Refused(refused) => Pushed::Blocked(Blocked::PushRefused {
                main: target.main.to_string(),
                remote: target.remote.unwrap_or_default().to_string(),
                said: refused.to_string(),
            }),
        },
    )
}

/// The merge commit of `tip` onto main at `before` (main itself when `tip` is in it already:
/// a crash came after the merge, "already up to date"), or the files that conflict.
fn merge_commit(
    session: &Session,
    tip: &str,
    before: &str,
    message: &str,
) -> Result<Result<String, Vec<String>>, EngineError> {
    let git = &session.git;
    if git.is_ancestor(tip, before)? {
        return Ok(Ok(before.to_string()));
    }
    Ok(match git.merge_tree_files(before, tip)? {
        MergedTree::Conflict(files) => Err(files),
        MergedTree::Clean(tree) => {
            let has_identity = session.store.identity().is_some();
            Ok(git.commit_tree(&tree, &[before, tip], message, has_identity)?)
        }
    })
}

/// Main moved here to the merge, then pushed when there is a remote (unless the remote has
/// it already); a refused push puts main back where it was, and a lost race says so.
fn move_and_push(
    session: &Session,
    target: &super::landing::Target,
) -> Result<Pushed, EngineError> {
    let super::landing::Target {
        remote,
        main,
        at,
        merged,
        before,
        theirs,
        ..
    } = *target;
    if merged != before
        && let Err(why) = move_main(session, main, at, before, merged)?
    {
        return Ok(Pushed::Blocked(why));
    }
    let Some(remote) = remote else {
        return Ok(Pushed::Landed);
    };
    if theirs == Some(merged) {
        return Ok(Pushed::Landed);
    }
    let Err(refused) = crate::engine::remote::push_main(session, remote, main, merged, theirs)
    else {
        return Ok(Pushed::Landed);
    };
    // What the remote refused does not stay on main here.
    if merged != before
        && let Err(why) = move_main(session, main, at, merged, before)?
    {
        return Ok(Pushed::Blocked(why));
    }
    if !crate::engine::remote::lost_race(&refused) {
        return Ok(Pushed::Blocked(Blocked::PushRefused {
            main: main.to_string(),
            remote: remote.to_string(),
            said: refused.to_string(),
        }));
    }
    Ok(Pushed::Raced)
}

/// The halt of a merge that conflicts; nothing was changed, the PR branch is kept.
fn conflicted(branch: &str, main: &str, files: &[String]) -> Event {
    Event::MergeConflicted {
        message: format!(
            "ERROR: Automated merge failed due to a conflict. Please resolve the conflict in branch '{branch}' \
             and merge it to {main} manually. Then run `git orchestrate resume`: it checks that the branch \
             is merged, deletes it, and continues with the next PR. Conflicting files: {}.",
            files.join(", ")
        ),
    }
}

/// After the merge is on main (and on the remote): this worktree leaves the PR branch, which
/// is deleted, and the merge is recorded.
fn finish(
    session: &Session,
    branch: &str,
    tip: &str,
    at: &MainAt,
    merged: &str,
    before: &str,
) -> Result<Event, EngineError> {
    let git = &session.git;
    // main is checked out elsewhere (or, with several worktrees, nowhere), so this worktree
    // does not have it: it stays at main's tip.
    if !matches!(at, MainAt::Here)
        && let Err(e) = git.checkout_detached(merged)
    {
        return Ok(Event::MergeBlocked {
            reason: Blocked::Git(e.to_string()).to_string(),
        });
    }
    // Deleted because its tip is the checked commit, now in main, whatever its upstream
    // says (`git branch -d` refuses a branch whose upstream is behind: one `sync` adopted).
    git.delete_branch_at(branch, tip)?;
    // main's tip is recorded as the workflow's only when it is exactly the merge of the
    // checked commit onto main as it was: anything else that moved it meanwhile stays a
    // move outside the workflow, named until a human repins.
    // (main as it was is the merge itself when a crash came after it: "already up to date".)
    let exact = merged_exactly(session, merged, tip, before)?;
    Ok(Event::Merged {
        branch: branch.to_string(),
        main: exact.then_some(merged.to_string()),
    })
}

/// Why the PR is not merged whatever main holds: a forged history, a working tree with
/// changes, a commit without its note.
fn not_mergeable(session: &Session, snap: &Snapshot) -> Result<Option<Blocked>, EngineError> {
    // Only a PR whose every transition is what its recorded event makes is merged
    // (docs/integrity.md).
    if let Some(problem) = forged_in_pr(session, snap)? {
        return Ok(Some(Blocked::Forged {
            commit: problem.commit,
            problem: problem.problem,
        }));
    }
    if let Some(why) = dirty(session, false)? {
        return Ok(Some(why));
    }
    // No note, no merge (docs/integrity.md): what CI and people check must be there.
    let unnoted = crate::engine::notes::unnoted(session, snap)?;
    if !unnoted.is_empty() {
        return Ok(Some(Blocked::Unnoted { commits: unnoted }));
    }
    Ok(None)
}

/// Whether `merged` is exactly the merge of the checked `tip` onto main as it was
/// (`before`), or the merge itself when a crash came after it ("already up to date").
fn merged_exactly(
    session: &Session,
    merged: &str,
    tip: &str,
    before: &str,
) -> Result<bool, EngineError> {
    let git = &session.git;
    Ok(match git.parents(merged)?.as_slice() {
        [first, second] if *second == tip && (*first == before || merged == before) => {
            git.merge_tree(first, tip)? == Some(git.tree_of(merged)?)
        }
        _ => false,
    })
}
