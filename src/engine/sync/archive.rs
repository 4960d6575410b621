//! `sync` of the archive ref (docs/refs.md, "The archive"): this clone's and the remote's
//! archives made one (fast-forward, push, or an archive commit over both), the live refs the
//! archive holds dropped here, and their deletion on the remote pushed in the same atomic
//! push as the archive that holds them, each with a lease at the tip archived; and with them
//! the deletion of the remote's claims that no live workflow holds any more.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::plan::Push;
use crate::engine::{EngineError, Session};
use crate::store::{
    ARCHIVE, WriteError, claim_ref, tracking_archive_ref, tracking_claim_ref, tracking_ref,
    workflow_ref,
};
use crate::workflow::archive as rules;

/// Levels the archive with `remote`'s (as just fetched): moves this clone's archive ref
/// (compare-and-swap; a lost race is the round's [`EngineError::Conflict`]), queues its push
/// with a lease, and drops each local live ref the archive holds at its tip (and from
/// `local`, this clone's live workflows as listed before: not listed again). Returns what the
/// archive, as the remote will hold it after the push, holds of the workflows live here or
/// on `remote` (`tracked`, as fetched).
pub(super) fn sync_archive(
    session: &Session,
    remote: &str,
    local: &mut BTreeMap<String, ObjectId>,
    tracked: &BTreeMap<String, ObjectId>,
    pushes: &mut Vec<Push>,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, ObjectId>, EngineError> {
    let store = &session.store;
    let tracking = tracking_archive_ref(remote);
    let ours = store.archive_tip()?;
    let theirs = store.ref_tip(&tracking)?;
    let conflict = |e: WriteError| match e {
        WriteError::Conflict => EngineError::Conflict,
        e => e.into(),
    };
    let push = |source: ObjectId| Push {
        source: Some(source),
        target: ARCHIVE.to_string(),
        tracking: tracking.clone(),
        seen: theirs,
        leased: true,
    };
    let message = format!("sync {remote}: the archive");
    let now = match (ours, theirs) {
        (None, None) => return Ok(BTreeMap::new()),
        (Some(ours), None) => {
            pushes.push(push(ours));
            ours
        }
        (None, Some(theirs)) => {
            store
                .move_archive(None, theirs, &message)
                .map_err(conflict)?;
            theirs
        }
        (Some(ours), Some(theirs)) if ours == theirs => ours,
        (Some(ours), Some(theirs)) => {
            let (a, b) = (ours.to_string(), theirs.to_string());
            if session.git.is_ancestor(&a, &b)? {
                store
                    .move_archive(Some(ours), theirs, &message)
                    .map_err(conflict)?;
                theirs
            } else if session.git.is_ancestor(&b, &a)? {
                pushes.push(push(ours));
                ours
            } else {
                // Both archived: one archive commit over the remote's, holding ours too. A
                // name both hold at different tips keeps the remote's, which its server holds.
                // A workflow either side restored since the two parted (held at that tip
                // where they parted, no longer on that side) stays restored.
                let base = match session.git.merge_base(&a, &b) {
                    Ok(id) => ObjectId::from_hex(id.trim().as_bytes()).ok(),
                    Err(_) => None,
                };
                let parted = match base {
                    Some(base) => store.archived_at(base)?,
                    None => BTreeMap::new(),
                };
                let index = store.archived_at(theirs)?;
                let mine = store.archived_at(ours)?;
                let restored: Vec<String> = parted
                    .iter()
                    .filter(|(name, tip)| {
                        !mine.contains_key(*name) && index.get(*name) == Some(*tip)
                    })
                    .map(|(name, _)| name.clone())
                    .collect();
                let mut batch = BTreeMap::new();
                for (name, tip) in mine {
                    match index.get(&name) {
                        Some(t) if *t != tip => warnings.push(format!(
                            "workflow {name} is archived here at {tip} and on {remote} at {t}: {remote}'s is kept"
                        )),
                        Some(_) => {}
                        None if parted.get(&name) == Some(&tip) => {}
                        None => {
                            batch.insert(name, tip);
                        }
                    }
                }
                let merged = store.write_archive_over(theirs, &batch, &restored, ours)?;
                store
                    .move_archive(Some(ours), merged, &message)
                    .map_err(conflict)?;
                pushes.push(push(merged));
                merged
            }
        }
    };
    drop_archived(session, local, tracked, now)
}

/// Drops each local live ref (of `local`, here and in the map) that the archive at `at`
/// holds at its very tip, and returns what the archive holds of the workflows live here or on
/// the remote (`tracked`, as fetched): only those are looked up, so that a sync costs the same
/// however many workflows the archive holds.
fn drop_archived(
    session: &Session,
    local: &mut BTreeMap<String, ObjectId>,
    tracked: &BTreeMap<String, ObjectId>,
    at: ObjectId,
) -> Result<BTreeMap<String, ObjectId>, EngineError> {
    let store = &session.store;
    let names = local
        .keys()
        .chain(tracked.keys())
        .map(String::as_str)
        .collect();
    let index = store.archived_among(at, &names)?;
    for (name, tip) in &index {
        if local.get(name) != Some(tip) {
            continue;
        }
        match store.drop_archived_ref(name, *tip) {
            Ok(()) => {
                local.remove(name);
            }
            // It moved on meanwhile: synced as any live workflow, at the tip it has now.
            Err(WriteError::Conflict) => match store.ref_tip(&workflow_ref(name))? {
                Some(now) => {
                    local.insert(name.clone(), now);
                }
                None => {
                    local.remove(name);
                }
            },
            Err(e) => return Err(e.into()),
        }
    }
    Ok(index)
}

/// True when workflow `name` is archived away: no live ref here, and the remote's (as
/// fetched) is the tip the archive holds, whose deletion is queued. A live ref here, or a
/// remote tip the archive does not hold (moved on), is synced as any other.
pub(super) fn archived_away(
    name: &str,
    local: &BTreeMap<String, ObjectId>,
    tracked: &BTreeMap<String, ObjectId>,
    archived: &BTreeMap<String, ObjectId>,
    remote: &str,
    pushes: &mut Vec<Push>,
) -> bool {
    let Some(tip) = archived.get(name) else {
        return false;
    };
    if local.contains_key(name) {
        return false;
    }
    match tracked.get(name) {
        Some(theirs) if theirs == tip => {
            pushes.push(Push {
                source: None,
                target: workflow_ref(name),
                tracking: tracking_ref(remote, name),
                seen: Some(*theirs),
                leased: true,
            });
            true
        }
        Some(_) => false,
        None => true,
    }
}

/// Queues, in the same atomic push, the deletion of each of `remote`'s claims (as fetched)
/// that [`rules::claim_finished`] removes: its workflow is archived (in `archived`, what the
/// archive as the push leaves it holds of the live names, or in that archive), or it lapsed, and no live ref of the workflow remains (`live`:
/// this clone's and the remote's, the ones archived away left out). Each with a lease at the
/// claim read. A claim this clone holds at that very commit is left to `claims::renew`, which
/// releases it in its own push; what holds no claim of ours is left as it is.
pub(super) fn archive_claims(
    session: &Session,
    remote: &str,
    live: &BTreeSet<String>,
    archived: &BTreeMap<String, ObjectId>,
    pushes: &mut Vec<Push>,
) -> Result<(), EngineError> {
    let store = &session.store;
    let theirs = store.tracking_claims(remote)?;
    if theirs.is_empty() {
        return Ok(());
    }
    let ours = store.local_claims()?;
    let now = crate::engine::claims::now();
    let mut read = Vec::new();
    for (pr, id) in theirs {
        if ours.get(&pr) == Some(&id) {
            continue;
        }
        if let Some((claim, _)) = store.read_claim(id)? {
            read.push((pr, id, claim));
        }
    }
    // A claim's workflow may be live nowhere (archived on both sides): looked up in the
    // archive, which `sync_archive` left at what the push leaves, by the names claimed only.
    let claimed = read
        .iter()
        .map(|(_, _, claim)| claim.workflow.as_str())
        .filter(|name| !archived.contains_key(*name))
        .collect();
    let more = match store.archive_tip()? {
        Some(at) => store.archived_among(at, &claimed)?,
        None => BTreeMap::new(),
    };
    for (pr, id, claim) in read {
        let holder = rules::Holder {
            expires: claim.expires,
            live: live.contains(&claim.workflow),
            archived: archived.contains_key(&claim.workflow) || more.contains_key(&claim.workflow),
        };
        if rules::claim_finished(holder, now) {
            pushes.push(Push {
                source: None,
                target: claim_ref(&pr),
                tracking: tracking_claim_ref(remote, &pr),
                seen: Some(id),
                leased: true,
            });
        }
    }
    Ok(())
}
