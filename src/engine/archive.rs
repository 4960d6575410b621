//! `archive`: moves every finished workflow out of the live ref space into the archive ref
//! (docs/refs.md, "The archive"), so that what the hot path lists stays the live workflows;
//! and what reads an archived workflow by name (`log`, `audit`, a name that stays taken).
//! The claims of archived workflows, and lapsed ones no live workflow renews, go with them.

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::Serialize;

use super::{EngineError, Session};
use crate::store::{WriteError, claim_ref, workflow_ref};
use crate::workflow::archive as rules;

/// What `archive` did (or, with `--dry-run`, would do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArchiveReport {
    /// The finished workflows archived now, by name.
    pub archived: Vec<String>,
    /// Finished when read, moved on before their ref was dropped: the archive holds the tip
    /// read, and the live ref stays (and wins) until a later `archive`.
    pub moved_on: Vec<String>,
    /// How many workflows the archive holds in all after this.
    pub total: usize,
    /// The claim refs removed (by PR key): their workflow is archived, or they lapsed with
    /// no live workflow behind them. Not kept: a claim is a lease with no history of its own,
    /// and the workflow's chain records the plan it accepted.
    pub claims: Vec<String>,
    pub dry_run: bool,
}

/// How often the archive ref is read again when another writer moved it first.
const ATTEMPTS: usize = 5;

/// `archive [--dry-run]`: decides which live workflows are finished, then writes the archive
/// commit holding their tips (objects first, the archive ref by compare-and-swap, a lost race
/// made again from a fresh read), then drops each live ref at the tip archived.
pub fn archive(session: &Session, dry_run: bool) -> Result<ArchiveReport, EngineError> {
    archive_batch(session, finished_workflows(session)?, dry_run)
}

/// `[archive] auto` (docs/config.md): run by `sync` before its fetch, so that the archive
/// goes out in the same sync, and by a landing once its merge is recorded (`get-task`'s, a
/// ticket's `complete-ticket`): the archive then goes out with the next sync. Archives when
/// at least `[archive] after` live workflows are finished; `None` when it is off, or fewer
/// are. Nothing else calls it: `get-task` short of a landing, and `status`, read nothing
/// more for it.
pub(crate) fn auto_archive(session: &Session) -> Result<Option<ArchiveReport>, EngineError> {
    let config = session.load_config(None)?.config.archive;
    if !config.auto {
        return Ok(None);
    }
    let batch = finished_workflows(session)?;
    if batch.len() < usize::try_from(config.after).unwrap_or(usize::MAX) {
        return Ok(None);
    }
    archive_batch(session, batch, false).map(Some)
}

/// Every live workflow that is finished, by name, with the tip read.
fn finished_workflows(session: &Session) -> Result<BTreeMap<String, ObjectId>, EngineError> {
    let mut batch = BTreeMap::new();
    for (name, tip) in session.store.local_workflows()? {
        if finished(session, &name, tip)? {
            batch.insert(name, tip);
        }
    }
    Ok(batch)
}

/// Archives `batch` (finished workflows, by name, at the tips read) and the claims that go
/// with them, as [`archive`] says.
fn archive_batch(
    session: &Session,
    batch: BTreeMap<String, ObjectId>,
    dry_run: bool,
) -> Result<ArchiveReport, EngineError> {
    let store = &session.store;
    let mut index = store.archived_workflows()?;
    index.extend(batch.iter().map(|(n, t)| (n.clone(), *t)));
    let claims = finished_claims(session, &batch, &index)?;
    let mut report = ArchiveReport {
        archived: Vec::new(),
        moved_on: Vec::new(),
        total: 0,
        claims: Vec::new(),
        dry_run,
    };
    if dry_run || batch.is_empty() {
        report.archived = batch.keys().cloned().collect();
        report.total = index.len();
        report.claims = if dry_run {
            claims.keys().cloned().collect()
        } else {
            drop_claims(session, &claims)?
        };
        return Ok(report);
    }
    let mut attempt = 0;
    loop {
        let old = store.archive_tip()?;
        let new = store.write_archive(old, &batch)?;
        let message = format!("archive {} finished workflows", batch.len());
        match store.move_archive(old, new, &message) {
            Ok(()) => break,
            Err(WriteError::Conflict) if attempt + 1 < ATTEMPTS => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    }
    crate::exec::pause::point("archive-written");
    // All at once when none moved on (the usual case); else one by one, naming each.
    if store.drop_archived_refs(&batch).is_ok() {
        report.archived = batch.keys().cloned().collect();
    } else {
        for (name, tip) in &batch {
            match store.drop_archived_ref(name, *tip) {
                Ok(()) => report.archived.push(name.clone()),
                Err(WriteError::Conflict) => report.moved_on.push(name.clone()),
                Err(e) => return Err(e.into()),
            }
        }
    }
    // A workflow that moved on keeps its live ref, and with it its claim.
    let claims = claims
        .into_iter()
        .filter(|(_, (_, workflow))| !report.moved_on.contains(workflow))
        .collect();
    report.claims = drop_claims(session, &claims)?;
    report.total = store.archived_workflows()?.len();
    Ok(report)
}

/// This clone's claim refs that leave with the archive (by PR key: the commit read and the
/// workflow it names): [`rules::claim_finished`] with `batch` archived and `index` the
/// archive as this run leaves it. A ref that holds no claim of ours is left as it is.
fn finished_claims(
    session: &Session,
    batch: &BTreeMap<String, ObjectId>,
    index: &BTreeMap<String, ObjectId>,
) -> Result<BTreeMap<String, (ObjectId, String)>, EngineError> {
    let store = &session.store;
    let local = store.local_claims()?;
    if local.is_empty() {
        return Ok(BTreeMap::new());
    }
    let live = store.local_workflows()?;
    let now = super::claims::now();
    let mut out = BTreeMap::new();
    for (pr, id) in local {
        let Some((claim, _)) = store.read_claim(id)? else {
            continue;
        };
        let holder = rules::Holder {
            expires: claim.expires,
            live: live.contains_key(&claim.workflow) && !batch.contains_key(&claim.workflow),
            archived: index.contains_key(&claim.workflow),
        };
        if rules::claim_finished(holder, now) {
            out.insert(pr, (id, claim.workflow));
        }
    }
    Ok(out)
}

/// Deletes each claim ref of `claims` by compare-and-swap at the commit read, after the
/// archive and the workflows' refs moved: a claim renewed or taken meanwhile is someone's
/// again and stays. Returns the PR keys removed.
fn drop_claims(
    session: &Session,
    claims: &BTreeMap<String, (ObjectId, String)>,
) -> Result<Vec<String>, EngineError> {
    let store = &session.store;
    let mut dropped = Vec::new();
    for (pr, (id, workflow)) in claims {
        let message = format!("archive: the claim of workflow {workflow}");
        match store.move_claim_ref(&claim_ref(pr), Some(*id), None, &message) {
            Ok(()) => {
                store.forget_claim(*id);
                dropped.push(pr.clone());
            }
            Err(WriteError::Conflict) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(dropped)
}

/// What `archive --restore` did (or, with `--dry-run`, would do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RestoreReport {
    pub workflow: String,
    /// The archived tip its live ref is back at.
    pub tip: String,
    pub dry_run: bool,
}

/// `archive --restore NAME [--dry-run]`: brings workflow `name`'s live ref back at the tip
/// the archive holds (created by compare-and-swap: refused when a live ref of that name
/// exists), then moves the archive ref to a commit that no longer indexes it. The live ref
/// first: a kill in between leaves both naming it, and the live ref wins wherever both do.
pub fn restore(session: &Session, name: &str, dry_run: bool) -> Result<RestoreReport, EngineError> {
    let store = &session.store;
    if !crate::store::valid_workflow_name(name) {
        return Err(EngineError::BadInput {
            message: format!("{name:?} is no workflow name"),
            hint: "`git orchestrate board --all` lists the archived workflows.".into(),
        });
    }
    let live = |current: ObjectId| EngineError::BadInput {
        message: format!(
            "workflow {name} has a live ref (at {current}): nothing is restored over it"
        ),
        hint: "The live workflow wins over the archive; restore only a name with no live ref."
            .into(),
    };
    if let Some(current) = store.ref_tip(&workflow_ref(name))? {
        return Err(live(current));
    }
    let Some(tip) = store.archived_workflows()?.get(name).copied() else {
        return Err(EngineError::BadInput {
            message: format!("workflow {name} is not in the archive: nothing to restore"),
            hint: "`git orchestrate board --all` lists the archived workflows.".into(),
        });
    };
    let report = RestoreReport {
        workflow: name.to_string(),
        tip: tip.to_string(),
        dry_run,
    };
    if dry_run {
        return Ok(report);
    }
    match store.move_ref(
        crate::store::LocalRef::Workflow(name),
        None,
        tip,
        &format!("archive --restore: workflow {name} back from the archive"),
    ) {
        Ok(()) => {}
        Err(WriteError::Conflict) => {
            let current = store.ref_tip(&workflow_ref(name))?.unwrap_or(tip);
            return Err(live(current));
        }
        Err(e) => return Err(e.into()),
    }
    crate::exec::pause::point("restore-live");
    for attempt in 0.. {
        let Some(old) = store.archive_tip()? else {
            break;
        };
        // Another writer let it go first: nothing left to record.
        if !store.archived_at(old)?.contains_key(name) {
            break;
        }
        let new = store.write_restore(old, name)?;
        match store.move_archive(Some(old), new, &format!("archive: restore {name}")) {
            Ok(()) => break,
            Err(WriteError::Conflict) if attempt + 1 < ATTEMPTS => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(report)
}

/// True when workflow `name` at `tip` is finished; one that cannot be read is not.
fn finished(session: &Session, name: &str, tip: ObjectId) -> Result<bool, EngineError> {
    let store = &session.store;
    let reference = workflow_ref(name);
    if let Ok(Some(ticket)) = store.ticket_at(tip, &reference) {
        return Ok(rules::ticket_finished(ticket.ticket.state));
    }
    let Ok(snapshot) = store.read_at(tip, &reference) else {
        return Ok(false);
    };
    let state = &snapshot.state;
    if state.idle.is_none() {
        return Ok(false);
    }
    let idle_holds = match session.load_config(Some(state)) {
        Ok(loaded) => session.idle_holds(state, &loaded.config.master_plan)?,
        Err(_) => false,
    };
    Ok(rules::tdd_finished(state.status(), idle_holds))
}

/// The tip of the selected workflow: its live ref's, else the archive's (a finished one).
pub(super) fn tip_or_archived(session: &Session) -> Result<Option<ObjectId>, EngineError> {
    let store = &session.store;
    match store.tip()? {
        Some(tip) => Ok(Some(tip)),
        None => Ok(store.archived_tip(store.workflow())?),
    }
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod unit_tests;
