//! One workflow chain replayed through the pure transition function: each commit checked to
//! be what its recorded event makes; a ticket workflow's commits through the ticket machine
//! (docs/tickets.md). `audit`, `sync`, the merge, the main-line check and the
//! final note all judge chains this way.

use gix::ObjectId;

use super::EngineError;
use crate::store::{
    CommitRecord, Snapshot, Store, StoreError, TICKET_FILE, Workflow, workflow_ref,
};
use crate::workflow::ticket::{self, Before, Ticket};
use crate::workflow::{self, Event, PlanChange, State, Status};

/// The `Orchestrator-Kind` trailer of a ticket workflow's commits (docs/tickets.md).
const TICKET_KIND: &str = "ticket";

/// The event header of a workflow's first commit, from 0.3 on: every transition after it
/// records its event.
pub const CREATED: &str = r#"{"event":"create"}"#;

pub use super::error::AuditProblem;

/// The audit of one chain segment.
#[derive(Clone, Debug, Default)]
pub struct ChainAudit {
    pub replayed: usize,
    pub unrecorded: usize,
    /// The first commit, oldest first, that is not what it claims; the replay stops there.
    pub forged: Option<AuditProblem>,
    /// The segment's commits, newest first.
    pub commits: Vec<ObjectId>,
}
/// Replays the chain from `tip` back to `stop` (exclusive; `None`: to its root).
pub fn audit_chain(
    store: &Store,
    workflow: &str,
    tip: ObjectId,
    stop: Option<ObjectId>,
) -> Result<ChainAudit, EngineError> {
    let reference = workflow_ref(workflow);
    let problem = |commit: ObjectId, text: String| AuditProblem {
        workflow: workflow.to_string(),
        commit: Some(commit.to_string()),
        problem: text,
        expected: None,
        found: None,
        fix: None,
    };
    // Ids only, oldest first, each commit read again as its turn comes: what is held grows
    // by an id per transition, not by a whole record (`audit --all` of long histories).
    let ids = segment_ids(store, tip, stop)?;
    let mut audit = ChainAudit {
        commits: ids.clone(),
        ..ChainAudit::default()
    };
    let mut parent: Option<Link> = match stop {
        Some(stop) => Some(read_link(store, stop, &reference).map_err(|e| {
            EngineError::Internal(format!("the commit {stop} the audit starts from: {e}"))
        })?),
        None => None,
    };
    // Before the segment, the history already records events: from here on every
    // transition must.
    let mut recorded_seen = match stop {
        Some(stop) => store.commit_record(stop)?.event.is_some(),
        None => false,
    };
    let mut plans = PlanCache::default();
    for id in ids.into_iter().rev() {
        let here = |text: String| problem(id, text);
        match judge_commit(
            store,
            &reference,
            id,
            parent.take(),
            (&mut recorded_seen, &mut plans),
            &here,
        )? {
            Judged::Replayed(link) => {
                audit.replayed += 1;
                parent = Some(link);
            }
            Judged::Unrecorded(link) => {
                audit.unrecorded += 1;
                parent = Some(link);
            }
            Judged::Root(link) => parent = Some(link),
            Judged::Forged(found) => {
                audit.forged = Some(*found);
                return Ok(audit);
            }
        }
    }
    Ok(audit)
}

/// What one commit of a chain came to.
enum Judged {
    /// Replayed and found to be what its event makes (a ticket's through its machine).
    Replayed(Link),
    /// Written before events were recorded: read, not replayed.
    Unrecorded(Link),
    /// The root: a new workflow.
    Root(Link),
    /// Not what it claims; the replay stops here.
    Forged(Box<AuditProblem>),
}

/// The plan a replay last handed the transition, by the `pr.json` blob and the steps done
/// since it was stored: a long history holds thousands of test runs, each held to the plan,
/// on one plan as it reads, which is then parsed once.
#[derive(Default)]
struct PlanCache {
    /// The `pr.json` blob and the steps done since, the plan below was read for.
    key: Option<(ObjectId, Vec<workflow::StepId>)>,
    plan: Option<workflow::Plan>,
}

impl PlanCache {
    /// The plan of `snap` as it now reads, parsed only when it is not the one held.
    fn plan(
        &mut self,
        store: &Store,
        snap: &Snapshot,
    ) -> Result<Option<&workflow::Plan>, StoreError> {
        let Some(blob) = snap.plan_blob() else {
            return Ok(None);
        };
        let key = (blob, snap.done().to_vec());
        if self.key.as_ref() != Some(&key) {
            // Forgotten first: a plan that fails to read is not held for the next one.
            self.key = None;
            self.plan = store.plan(snap)?;
            self.key = Some(key);
        }
        Ok(self.plan.as_ref())
    }
}

/// Judges the commit `id` after `parent` (`None`: it is the root). `recorded_seen`: an
/// earlier transition records its event, so this one must too; `plans`, the plan the last
/// replay read.
fn judge_commit(
    store: &Store,
    reference: &str,
    id: ObjectId,
    parent: Option<Link>,
    (recorded_seen, plans): (&mut bool, &mut PlanCache),
    problem: &dyn Fn(String) -> AuditProblem,
) -> Result<Judged, EngineError> {
    let forged = |found: AuditProblem| Ok(Judged::Forged(Box::new(found)));
    let record = store.commit_record(id)?;
    if record.parents.len() > 1 {
        return forged(problem(
            "a merge commit: git-orchestrate never writes one into a workflow's chain".into(),
        ));
    }
    // One read of the commit tells the kinds apart.
    let snap = match store.workflow_at(id, reference) {
        Ok(Workflow::Tdd(snap)) => *snap,
        Ok(Workflow::Ticket(snap)) => {
            return match ticket_link(store, (id, snap.ticket), &record, parent.as_ref()) {
                Ok(ticket) => Ok(Judged::Replayed(Link::Ticket(Box::new(ticket)))),
                Err(text) => forged(problem(text)),
            };
        }
        Err(e) => return forged(problem(format!("its state cannot be read: {e}"))),
    };
    if let Some(text) = tdd_link_problem(&snap, &record, parent.as_ref()) {
        return forged(problem(text));
    }
    let Some(Link::Tdd(before)) = parent else {
        *recorded_seen = record.event.as_deref() == Some(CREATED);
        // The root: a new workflow, and nothing else.
        let fresh = State::new(snap.state.main_branch.clone());
        if snap.state != fresh || snap.plan_blob().is_some() {
            return forged(AuditProblem {
                expected: serde_json::to_value(&fresh).ok(),
                found: serde_json::to_value(&snap.state).ok(),
                ..problem("the first commit is not a new workflow".into())
            });
        }
        return Ok(Judged::Root(Link::Tdd(Box::new(snap))));
    };
    let Some(json) = &record.event else {
        if *recorded_seen {
            return forged(problem(
                "it records no event, after transitions that do: git-orchestrate did not write it"
                    .into(),
            ));
        }
        return Ok(Judged::Unrecorded(Link::Tdd(Box::new(snap))));
    };
    *recorded_seen = true;
    if let Err(mismatch) = replay(store, (&before, plans), &snap, json, &record.history) {
        let (text, expected, found) = *mismatch;
        return forged(AuditProblem {
            expected,
            found,
            ..problem(text)
        });
    }
    Ok(Judged::Replayed(Link::Tdd(Box::new(snap))))
}

/// What one commit of a chain holds: a TDD workflow's state, or a ticket
/// (docs/tickets.md).
enum Link {
    Tdd(Box<Snapshot>),
    Ticket(Box<Ticket>),
}

/// Reads commit `id` as whichever kind of workflow it holds.
fn read_link(store: &Store, id: ObjectId, reference: &str) -> Result<Link, StoreError> {
    Ok(match store.workflow_at(id, reference)? {
        Workflow::Ticket(snap) => Link::Ticket(Box::new(snap.ticket)),
        Workflow::Tdd(snap) => Link::Tdd(snap),
    })
}

/// Why a TDD workflow's commit cannot stand where it is: a ticket's trailer or file mixed
/// in, or a TDD state after a ticket (no command writes one there). `None`: it may.
fn tdd_link_problem(
    snap: &Snapshot,
    record: &CommitRecord,
    parent: Option<&Link>,
) -> Option<String> {
    if snap.has_file(TICKET_FILE) {
        return Some(format!(
            "its tree mixes {TICKET_FILE} with a TDD workflow's state.json: git-orchestrate \
             writes one or the other"
        ));
    }
    if record.history.kind.as_deref() == Some(TICKET_KIND) {
        return Some(
            "its message says `Orchestrator-Kind: ticket`, but its tree holds no ticket.json"
                .into(),
        );
    }
    if let Some(Link::Ticket(ticket)) = parent {
        return Some(format!(
            "a TDD workflow's commit after ticket \"{}\" (state {}): no command turns a \
             ticket into a TDD workflow",
            ticket.title,
            ticket.state.as_str()
        ));
    }
    None
}

/// Checks ticket commit `id` against the commit before it (docs/tickets.md, "Status, log, board, audit, sync, demo"): its
/// tree is `ticket.json` alone, its trailers name the kind and the states the move was
/// between, and its event makes exactly its ticket. Returns the ticket, or the problem.
fn ticket_link(
    store: &Store,
    (id, ticket): (ObjectId, Ticket),
    record: &CommitRecord,
    parent: Option<&Link>,
) -> Result<Ticket, String> {
    let names = store.tree_names(id).map_err(|e| e.to_string())?;
    let extra: Vec<&String> = names.iter().filter(|n| *n != TICKET_FILE).collect();
    if !extra.is_empty() {
        return Err(format!(
            "a ticket commit whose tree holds {} besides {TICKET_FILE}",
            extra
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let history = &record.history;
    if history.kind.as_deref() != Some(TICKET_KIND) {
        return Err(format!(
            "it holds {TICKET_FILE}, but its message has no `Orchestrator-Kind: ticket` trailer: \
             git-orchestrate did not write it"
        ));
    }
    let before = match parent {
        None => Before::Nothing,
        Some(Link::Tdd(snap)) => Before::Tdd {
            initializing: snap.state.status() == Status::Initializing,
        },
        Some(Link::Ticket(t)) => Before::Ticket(t),
    };
    let (from, to) = (before.state_name(), ticket.state.as_str());
    if history.from.as_deref() != Some(from) || history.to.as_deref() != Some(to) {
        return Err(format!(
            "its message says {} {} -> {}, but the ticket moved {from} -> {to}",
            history.event,
            history.from.as_deref().unwrap_or("?"),
            history.to.as_deref().unwrap_or("?"),
        ));
    }
    ticket::replay(before, &ticket, &history.event)?;
    // The action the commit records (its `orchestrator-event` header) must make exactly
    // this ticket too: what the stored ticket alone does not say (the manager's verdict
    // and override, the time) is held to what the command was given.
    let recorded: ticket::Recorded = record
        .event
        .as_deref()
        .ok_or("it records no event (no `orchestrator-event` header)")
        .and_then(|e| serde_json::from_str(e).map_err(|_| "its recorded event does not parse"))?;
    let parent_ticket = match before {
        Before::Ticket(t) => Some(t),
        Before::Nothing | Before::Tdd { .. } => None,
    };
    ticket::replay_recorded(parent_ticket, &ticket, &recorded)?;
    Ok(ticket)
}

/// Where the PR whose state is at `tip` began: the parent of its plan's acceptance, the
/// `stop` of [`audit_chain`] for the PR's own segment (`None`: no plan transition found, so
/// the whole chain).
pub fn pr_stop(store: &Store, tip: ObjectId) -> Result<Option<ObjectId>, EngineError> {
    let pr = store.history_back_to(tip, "plan")?;
    Ok(match pr.last() {
        Some(plan) if plan.event == "plan" => {
            let id = ObjectId::from_hex(plan.commit.as_bytes())
                .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
            store.commit_record(id)?.parents.first().copied()
        }
        _ => None,
    })
}

/// The ids of the chain's commits from `tip` back to `stop` (exclusive), newest first, along
/// first parents; a merge commit ends it (the replay refuses it).
fn segment_ids(
    store: &Store,
    tip: ObjectId,
    stop: Option<ObjectId>,
) -> Result<Vec<ObjectId>, EngineError> {
    let mut ids = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        if Some(id) == stop {
            break;
        }
        let parents = store.commit_parents(id)?;
        next = parents.first().copied();
        ids.push(id);
        if parents.len() > 1 {
            break;
        }
    }
    Ok(ids)
}

/// The chain's commits from `tip` back to `stop` (exclusive), newest first, along first
/// parents; a merge commit ends it (the replay refuses it). Read one at a time as the caller
/// asks: what is held does not grow with the chain (`audit --all` of one long history).
pub(super) fn segment(
    store: &Store,
    tip: ObjectId,
    stop: Option<ObjectId>,
) -> impl Iterator<Item = Result<(ObjectId, CommitRecord), EngineError>> + '_ {
    let mut next = Some(tip);
    std::iter::from_fn(move || {
        let id = next.take().filter(|id| Some(*id) != stop)?;
        Some(match store.commit_record(id) {
            Ok(record) => {
                if record.parents.len() == 1 {
                    next = record.parents.first().copied();
                }
                Ok((id, record))
            }
            Err(e) => Err(e.into()),
        })
    })
}

/// Why a replay failed, with the state expected and found when they differ.
type Mismatch = Box<(String, Option<serde_json::Value>, Option<serde_json::Value>)>;

/// Checks that `after` is the transition the recorded `event` makes from `before`.
fn replay(
    store: &Store,
    (before, plans): (&Snapshot, &mut PlanCache),
    after: &Snapshot,
    event: &str,
    history: &crate::store::HistoryEntry,
) -> Result<(), Mismatch> {
    let said = |text: String| Box::new((text, None, None));
    let event: Event = serde_json::from_str(event).map_err(|e| {
        said(format!(
            "its recorded event is not one git-orchestrate writes: {e}"
        ))
    })?;
    // A step's recorded proof must be what the rest of its event says ran.
    if let Event::TestRan(run) = &event
        && let Some(why) = run.proof_disagrees()
    {
        return Err(said(why));
    }
    // And its recorded plan must be the one the pure core emits from the state before it:
    // else a hand-written chain could record any plan, an empty one, and pass.
    if let Event::TestRan(run) = &event
        && run.proof.is_some()
        && let Some(why) = run.plan_differs(&before.state)
    {
        return Err(said(why));
    }
    // Held to the plan where the command held it, and where the transition needs it.
    let plan = if workflow::held_to_plan(&event) {
        let plan = plans
            .plan(store, before)
            .map_err(|e| said(format!("the plan before it cannot be read: {e}")))?;
        if plan.is_none() && !workflow::needs_full_plan(&event) {
            return Err(said(format!(
                "no plan before it to hold its {} to",
                event.name()
            )));
        }
        plan
    } else {
        None
    };
    let t = workflow::transition(&before.state, plan, event).map_err(|r| {
        said(format!(
            "its recorded event is refused in state {}: {}",
            r.state, r.message
        ))
    })?;
    if history.event != t.event
        || history.from.as_deref() != Some(t.from.as_str())
        || history.to.as_deref() != Some(t.to().as_str())
    {
        return Err(said(format!(
            "its message says {} {} -> {}, but its event makes {} {} -> {}",
            history.event,
            history.from.as_deref().unwrap_or("?"),
            history.to.as_deref().unwrap_or("?"),
            t.event,
            t.from,
            t.to()
        )));
    }
    if t.state != after.state {
        return Err(Box::new((
            "its state is not the one its recorded event makes".into(),
            serde_json::to_value(&t.state).ok(),
            serde_json::to_value(&after.state).ok(),
        )));
    }
    let plan_holds = match &t.plan {
        PlanChange::Keep => {
            after.plan_blob() == before.plan_blob() && after.done() == before.done()
        }
        PlanChange::Drop => after.plan_blob().is_none(),
        PlanChange::CompleteStep(step) if after.plan_blob() == before.plan_blob() => {
            let mut done = before.done().to_vec();
            if !done.contains(step) {
                done.push(*step);
            }
            after.done() == done.as_slice()
        }
        PlanChange::CompleteStep(step) => {
            let mut expected = store.plan(before).ok().flatten();
            if let Some(plan) = &mut expected {
                plan.complete_step(*step);
            }
            after.done().is_empty()
                && expected.is_some()
                && store.plan(after).ok().flatten() == expected
        }
        PlanChange::Materialize => {
            after.done().is_empty()
                && store.plan(after).ok().flatten() == store.plan(before).ok().flatten()
        }
        PlanChange::Replace(plan) => {
            after.done().is_empty() && store.plan(after).ok().flatten().as_ref() == Some(plan)
        }
    };
    if !plan_holds {
        return Err(said(
            "its plan is not the one its recorded event makes".into(),
        ));
    }
    Ok(())
}
