//! `audit`: replays a workflow's chain through the pure transition function, checks that
//! git-orchestrate wrote each move of its ref, and finds deleted and rewound refs
//! (docs/integrity.md). `sync`, the merge and `doctor` run it too.

use std::collections::HashMap;

use gix::ObjectId;
use serde::Serialize;

use super::answers::{AnswerCheck, AnswerVerdict};
pub use super::chain::AuditProblem;
use super::chain::audit_chain;
use super::{EngineError, Session};
use crate::store::{HistoryEntry, REFLOG_PREFIX, Snapshot, workflow_ref};
use crate::workflow::Event;

/// What `audit` found, for one workflow or all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditReport {
    pub workflows: Vec<String>,
    /// Transitions replayed and found to be what their recorded event produces.
    pub replayed: usize,
    /// Transitions written before events were recorded (0.3): their chain is read, not
    /// replayed. They can only come before the first recorded one.
    pub unrecorded: usize,
    pub problems: Vec<AuditProblem>,
}

impl AuditReport {
    pub fn clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What settles main moved outside the workflow: a human looks at the commits and repins
/// (docs/integrity.md), signed where the pinned configuration requires it.
pub const MAIN_DRIFT_FIX: &str = "git orchestrate repin";

/// `audit [--all]`: this workflow, or every local workflow, the archived ones included
/// (docs/refs.md, "The archive"). One workflow's chain is held at a time.
pub fn audit(session: &Session, all: bool) -> Result<AuditReport, EngineError> {
    let store = &session.store;
    let archived = store.archived_workflows()?;
    let local: Vec<String> = if all {
        store.local_workflows()?.into_keys().collect()
    } else {
        Vec::new()
    };
    let names = workflows_to_audit(all, local, archived.keys().cloned(), store.workflow());
    let mut report = AuditReport {
        workflows: names.clone(),
        replayed: 0,
        unrecorded: 0,
        problems: Vec::new(),
    };
    for name in &names {
        let reference = workflow_ref(name);
        match (store.ref_tip(&reference)?, archived.get(name)) {
            (Some(tip), _) => audit_live(session, name, tip, &mut report)?,
            // Archived finished: its chain and answers are judged; its ref was dropped on
            // purpose, with the tip the archive holds, and main has moved on since by design.
            (None, Some(&tip)) => {
                replay_chain(session, name, tip, &mut report)?;
            }
            (None, None) => report.problems.extend(deleted(session, name)?),
        }
    }
    Ok(report)
}

/// The workflows an audit reads, sorted, each once: with `--all` every local and archived
/// one; the selected one always, for it may be the one whose ref was deleted.
fn workflows_to_audit(
    all: bool,
    local: Vec<String>,
    archived: impl Iterator<Item = String>,
    selected: &str,
) -> Vec<String> {
    let mut names: Vec<String> = if all {
        local.into_iter().chain(archived).collect()
    } else {
        Vec::new()
    };
    names.push(selected.to_string());
    names.sort();
    names.dedup();
    names
}

/// The chain of `name` from `tip` replayed, and its human answers judged: a human's answer
/// the pinned configuration demands a signature of, or whose signature does not hold, was
/// given by someone else than it says (docs/integrity.md, "Signed human answers").
fn replay_chain(
    session: &Session,
    name: &str,
    tip: ObjectId,
    report: &mut AuditReport,
) -> Result<super::chain::ChainAudit, EngineError> {
    let chain = audit_chain(&session.store, name, tip, None)?;
    report.replayed += chain.replayed;
    report.unrecorded += chain.unrecorded;
    report.problems.extend(chain.forged.clone());
    report.problems.extend(
        super::answers::judge_answers(session, name, tip, None)?
            .into_iter()
            .filter(AnswerCheck::fails)
            .map(|check| answer_problem(name, check)),
    );
    Ok(chain)
}

/// A workflow whose ref is gone: named when its last tip is known. git drops a deleted ref's
/// reflog; the tip marker remembers it then.
fn deleted(session: &Session, name: &str) -> Result<Option<AuditProblem>, EngineError> {
    let store = &session.store;
    let reference = workflow_ref(name);
    let remembered = match store.reflog(&reference)?.pop() {
        Some(last) => Some(last.new),
        None if name == store.workflow() => store.vanished_tip()?.map(|(tip, _)| tip),
        None => None,
    };
    Ok(remembered.map(|last| AuditProblem {
        workflow: name.to_string(),
        commit: Some(last.clone()),
        problem: format!("{reference} was deleted; it was last at {last}"),
        expected: None,
        found: None,
        fix: None,
    }))
}

/// A workflow whose ref is there: its chain replayed, main's drift, the tip marker and the
/// reflog judged.
fn audit_live(
    session: &Session,
    name: &str,
    tip: ObjectId,
    report: &mut AuditReport,
) -> Result<(), EngineError> {
    let store = &session.store;
    let reference = workflow_ref(name);
    let chain = replay_chain(session, name, tip, report)?;
    // main moved outside the workflow: named here as in every briefing (docs/integrity.md).
    // A ticket records no main line to drift from; an unreadable tip the chain names.
    if let Ok(crate::store::Workflow::Tdd(snapshot)) = store.workflow_at(tip, &reference)
        && let Some(drift) = super::main_line::drift(session, &snapshot.state)?
    {
        report.problems.push(AuditProblem {
            workflow: name.to_string(),
            commit: drift.commits.first().map(|c| c.commit.clone()),
            problem: drift.notice().to_string(),
            expected: None,
            found: None,
            // A human's commit on main is no forgery: a human looks at it and accounts
            // for it, and nothing else settles it.
            fix: Some(MAIN_DRIFT_FIX.to_string()),
        });
    }
    // git keeps no reflog for a ref it recreates after a deletion; the tip git-orchestrate
    // last wrote still tells a move by anything else.
    // A kill between the ref's move and the marker's rewrite leaves the marker behind
    // (a transition, or a sync's longer move), and the intent file the write left before
    // it moved the ref names exactly that move.
    // Kills in a row can each land there: the marker then lags several moves, each named
    // by its own intent, so the intents must lead from the marker to the tip.
    if let Some(last) = store
        .last_written_tip(name)
        .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
        && last != tip
    {
        let explained = moves_lead_from(&store.unfinished_tip_moves(name), last, tip);
        let held = chain.commits.contains(&last);
        report
            .problems
            .extend(marker_problem(name, tip, last, explained, held));
    }
    // Read a line at a time: a long history's reflog is never held whole.
    let judge = reflog_judge(name, &reference, &chain.commits);
    store.reflog_each(&reference, |entry| {
        report.problems.extend(judge(&entry));
    })?;
    Ok(())
}

/// The ref of `name` at `tip` where git-orchestrate last wrote `last`: no problem when the
/// two agree or unfinished writes lead from one to the other (`explained`); else moved on
/// by something else when the chain still holds `last` (`held`), or rewound or replaced.
fn marker_problem(
    name: &str,
    tip: ObjectId,
    last: ObjectId,
    explained: bool,
    held: bool,
) -> Option<AuditProblem> {
    if last == tip || explained {
        return None;
    }
    let reference = workflow_ref(name);
    Some(AuditProblem {
        workflow: name.to_string(),
        commit: Some(tip.to_string()),
        problem: if held {
            format!(
                "{reference} was moved on from {last}, the tip git-orchestrate last wrote, by \
                 something else"
            )
        } else {
            format!(
                "{reference} was rewound or replaced: git-orchestrate last wrote {last}, which its \
                 history no longer holds"
            )
        },
        expected: None,
        found: None,
        fix: None,
    })
}

/// The names of the PR's tasks whose checkpoints changed nothing (docs/integrity.md): the
/// tree of a task's last checkpoint is the tree it started from (the checkpoint before it,
/// or where the branch left main). Read from the checkpoint events the PR's transitions
/// record; tasks without a recorded checkpoint are not judged.
/// `pr` is the PR's history, newest first, as [`Store::history_back_to`] reads it.
pub fn empty_tasks(
    session: &Session,
    snap: &Snapshot,
    pr: &[HistoryEntry],
) -> Result<Vec<String>, EngineError> {
    let store = &session.store;
    let Some(plan) = store.plan(snap)? else {
        return Ok(Vec::new());
    };
    let mut tree = match snap.state.pr().and_then(|pr| pr.base.as_deref()) {
        Some(base) => session.git.tree_of(base).ok(),
        None => None,
    };
    // Per task: the tree it started from and the tree of its last checkpoint.
    let mut spans: Vec<Option<(Option<String>, String)>> = vec![None; plan.tasks.len()];
    for entry in pr.iter().rev().filter(|e| e.event == "checkpoint") {
        let id = ObjectId::from_hex(entry.commit.as_bytes())
            .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
        let Some(Ok(Event::CheckpointRecorded { tree: after, .. })) = store
            .commit_record(id)?
            .event
            .map(|json| serde_json::from_str::<Event>(&json))
        else {
            continue;
        };
        let task = entry
            .step
            .as_deref()
            .and_then(|s| s.parse::<crate::workflow::StepId>().ok())
            .map(|s| s.task);
        if let Some(span) = task.and_then(|t| spans.get_mut(t)) {
            let started = span.take().map_or_else(|| tree.clone(), |(from, _)| from);
            *span = Some((started, after.clone()));
        }
        tree = Some(after);
    }
    Ok(spans
        .iter()
        .zip(&plan.tasks)
        .filter_map(|(span, task)| match span {
            Some((Some(from), to)) if from == to => Some(task.name.clone()),
            _ => None,
        })
        .collect())
}

/// A recorded human answer that is not what the pinned configuration demands, as a problem.
fn answer_problem(workflow: &str, check: AnswerCheck) -> AuditProblem {
    let problem = match &check.verdict {
        AnswerVerdict::Bad { why } => format!(
            "a forged human answer: its `{}` claims a signature that does not hold: {why}",
            check.answer
        ),
        AnswerVerdict::Unsigned { how } => format!(
            "an unsigned human answer: its `{}` carries no signature ({}), and the configuration \
             pinned for it says [human] require = \"signature\"",
            check.answer,
            if how.is_empty() {
                "nor any attribution"
            } else {
                how.as_str()
            }
        ),
        AnswerVerdict::Signed { .. } => String::new(),
    };
    AuditProblem {
        workflow: workflow.to_string(),
        commit: Some(check.commit),
        problem,
        expected: None,
        found: None,
        fix: None,
    }
}

/// The judge of each reflog entry of the ref, as it is read: a move git-orchestrate did not
/// make, or a rewind along `chain` (newest first).
fn reflog_judge<'a>(
    workflow: &'a str,
    reference: &'a str,
    chain: &[ObjectId],
) -> impl Fn(&crate::store::ReflogEntry) -> Option<AuditProblem> + 'a {
    // Newest first in `chain`: a larger index is older.
    let position: HashMap<ObjectId, usize> =
        chain.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let at = move |id: &str| {
        ObjectId::from_hex(id.as_bytes())
            .ok()
            .and_then(|id| position.get(&id).copied())
    };
    let zero = |id: &str| id.bytes().all(|b| b == b'0');
    move |entry| {
        let problem = |text: String| AuditProblem {
            workflow: workflow.to_string(),
            commit: Some(entry.new.clone()),
            problem: text,
            expected: None,
            found: None,
            fix: None,
        };
        if !entry.message.starts_with(REFLOG_PREFIX) {
            return Some(problem(format!(
                "{reference} was moved to {} by something other than git-orchestrate (reflog message \"{}\")",
                entry.new, entry.message
            )));
        }
        if zero(&entry.old) || zero(&entry.new) {
            return None;
        }
        // A move back along the chain; `sync --take` replaces a chain on purpose, and
        // keeps the old tip under refs/orchestrator/backups/.
        let rewound = match (at(&entry.old), at(&entry.new)) {
            (Some(old), Some(new)) => new > old,
            // Moved onto today's history from a commit it no longer holds: back.
            (None, Some(_)) => true,
            _ => false,
        };
        (rewound && !entry.message.contains("take the remote's")).then(|| {
            problem(format!(
                "{reference} was rewound from {} to {}",
                entry.old, entry.new
            ))
        })
    }
}

/// Whether the unfinished moves `(old, new)` chain from `from` to `to`: the moves of writes
/// killed between moving the ref and rewriting the tip marker, one after another.
fn moves_lead_from(moves: &[(String, String)], from: ObjectId, to: ObjectId) -> bool {
    let parsed: Vec<(ObjectId, ObjectId)> = moves
        .iter()
        .filter_map(|(old, new)| {
            Some((
                ObjectId::from_hex(old.as_bytes()).ok()?,
                ObjectId::from_hex(new.as_bytes()).ok()?,
            ))
        })
        .collect();
    let mut reached = vec![from];
    let mut next = 0;
    while let Some(&at) = reached.get(next) {
        if at == to {
            return true;
        }
        for (old, new) in &parsed {
            if *old == at && !reached.contains(new) {
                reached.push(*new);
            }
        }
        next += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn mv(a: u8, b: u8) -> (String, String) {
        (id(a).to_string(), id(b).to_string())
    }

    #[test]
    fn unfinished_moves_explain_the_tip_only_as_a_chain_from_the_marker() {
        // Each row: the moves the intents name, the tip, and whether they explain the tip
        // when the marker says 1.
        let table = [
            ("one kill", vec![mv(1, 2)], 2, true),
            ("two kills in a row", vec![mv(2, 3), mv(1, 2)], 3, true),
            ("a gap in the chain", vec![mv(1, 2), mv(4, 3)], 3, false),
            ("moves that start elsewhere", vec![mv(5, 3)], 3, false),
            ("no moves", Vec::new(), 3, false),
            (
                "a loop that never arrives",
                vec![mv(1, 2), mv(2, 1)],
                3,
                false,
            ),
        ];
        for (name, moves, tip, expected) in table {
            assert_eq!(moves_lead_from(&moves, id(1), id(tip)), expected, "{name}");
        }
    }

    #[test]
    fn the_workflows_audited_are_the_selected_one_and_with_all_every_other_once() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Each row: --all, local, archived, selected, the workflows audited.
        type Row<'a> = (
            &'a str,
            bool,
            &'a [&'a str],
            &'a [&'a str],
            &'a str,
            &'a [&'a str],
        );
        let table: [Row; 4] = [
            ("one workflow", false, &[], &["old"], "main", &["main"]),
            (
                "a deleted selected one",
                true,
                &["a"],
                &[],
                "gone",
                &["a", "gone"],
            ),
            (
                "archived and local, sorted",
                true,
                &["main", "b"],
                &["a"],
                "main",
                &["a", "b", "main"],
            ),
            ("each once", true, &["main"], &["main"], "main", &["main"]),
        ];
        for (case, all, local, archived, selected, expected) in table {
            let found =
                workflows_to_audit(all, names(local), names(archived).into_iter(), selected);
            assert_eq!(found, names(expected), "{case}");
        }
    }

    #[test]
    fn the_tip_marker_names_a_move_by_something_else_unless_a_write_explains_it() {
        let moved = format!(
            "{} was moved on from {}, the tip git-orchestrate last wrote, by something else",
            workflow_ref("w"),
            id(1)
        );
        let rewound = format!(
            "{} was rewound or replaced: git-orchestrate last wrote {}, which its history no longer holds",
            workflow_ref("w"),
            id(1)
        );
        // Each row: the marker, the tip, explained by unfinished writes, held by the chain,
        // the problem named.
        let table = [
            ("marker at the tip", 2, 2, false, false, None),
            ("an unfinished write explains it", 1, 2, true, true, None),
            (
                "moved on past the marker",
                1,
                2,
                false,
                true,
                Some(moved.as_str()),
            ),
            (
                "rewound past the marker",
                1,
                2,
                false,
                false,
                Some(rewound.as_str()),
            ),
        ];
        for (case, last, tip, explained, held, expected) in table {
            let found = marker_problem("w", id(tip), id(last), explained, held);
            assert_eq!(
                found.as_ref().map(|p| p.problem.as_str()),
                expected,
                "{case}"
            );
            if let Some(problem) = found {
                assert_eq!(problem.commit, Some(id(tip).to_string()), "{case}");
                assert_eq!(problem.workflow, "w", "{case}");
            }
        }
    }
}
