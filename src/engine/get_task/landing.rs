//! The workflow's merge landed with its own proof (docs/integrity.md, "A landing in
//! flight"): the `merge` transition is written as objects first and named in a landing
//! file, then travels in one atomic push with main and the notes, then main moves here and
//! the chain's ref moves last. A landing a kill interrupted is completed, or given up, by the
//! next `get-task`.

use gix::ObjectId;

use super::blocked::Blocked;
use super::land::{MainAt, move_main, up_to_remote};
use crate::engine::{EngineError, Session};
use crate::exec::{GitError, pause};
use crate::store::{
    Landing, LocalRef, NOTES_REF, Snapshot, branch_ref, runs_ref, tracking_ref, workflow_ref,
};
use crate::workflow::Event;

/// What records a landing: the workflow's `merge` transition, or a ticket's completion.
pub(crate) trait Recorder {
    /// The chain's tip the record goes on.
    fn tip(&self) -> ObjectId;
    /// Writes the record of the merge (`merge`: main's new tip when it is exactly the merge of
    /// the checked commit onto main as it was), calling `before` with the record's commit
    /// once its objects are stored and before the chain's ref moves: an error from `before`
    /// leaves the chain where it was.
    fn record(
        &self,
        merge: Option<&str>,
        before: &mut dyn FnMut(ObjectId) -> Result<(), EngineError>,
    ) -> Result<(), EngineError>;
    /// A commit a verifier needs that the merge does not reach (a ticket's subtasks), and the
    /// ref that keeps it reachable where the landing pushes.
    fn keep(&self) -> Option<(String, String)> {
        None
    }
}

/// The TDD workflow's record: its `merge` transition on `snap`.
pub(super) struct MergeRecord<'a> {
    pub session: &'a Session,
    pub snap: &'a Snapshot,
    pub branch: &'a str,
}

impl Recorder for MergeRecord<'_> {
    fn tip(&self) -> ObjectId {
        self.snap.tip
    }

    fn record(
        &self,
        merge: Option<&str>,
        before: &mut dyn FnMut(ObjectId) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let event = Event::Merged {
            branch: self.branch.to_string(),
            main: merge.map(str::to_string),
        };
        let t = self.session.transition(self.snap, event)?;
        self.session.commit_before(self.snap, &t, None, before)
    }
}

/// How a landing ended.
pub(super) enum Landed {
    /// The chain's tip is the `merge` transition; with a remote, the remote has it with main.
    Recorded(Event),
    /// The remote refused the push: nothing moved, here or there.
    Refused(GitError),
    /// Nothing moved, for the reason given.
    Blocked(Blocked),
}

/// Where the merge lands: main (where it is checked out, and as the remote's was fetched),
/// the PR branch and its checked tip, and the merge commit made on `before`.
pub(super) struct Target<'a> {
    pub remote: Option<&'a str>,
    pub main: &'a str,
    pub at: &'a MainAt,
    pub branch: &'a str,
    pub tip: &'a str,
    pub merged: &'a str,
    pub before: &'a str,
    /// The remote's main as fetched: the lease of the push.
    pub theirs: Option<&'a str>,
    /// `merged` is exactly the merge of `tip` onto `before`.
    pub exact: bool,
}

/// The record-first landing: the `merge` transition stored, named in the landing file, pushed
/// atomically with main and the notes (each leased on what was fetched), main moved here,
/// the PR branch deleted, and the chain's ref moved last by compare-and-swap. A push the
/// remote refuses leaves nothing behind: the ref never moved and the landing file is gone.
pub(super) fn record_and_push(
    session: &Session,
    recorder: &dyn Recorder,
    target: &Target,
) -> Result<Landed, EngineError> {
    let tip = recorder.tip();
    let store = &session.store;
    let workflow = store.workflow().to_string();
    // The remote's copy of this chain as just fetched: the lease of its push. Only this
    // clone writes the chain, so its copy there is behind or level; one that is not was
    // taken elsewhere, and `sync` says what to do.
    let seen = match target.remote {
        Some(remote) => match own_copy(session, remote, tip)? {
            Ok(seen) => seen,
            Err(why) => {
                return Ok(Landed::Blocked(Blocked::Git(format!(
                    "{why}, then `git orchestrate get-task`"
                ))));
            }
        },
        None => None,
    };
    let event = Event::Merged {
        branch: target.branch.to_string(),
        main: target.exact.then(|| target.merged.to_string()),
    };
    let keep = recorder.keep();
    let carried = match target.remote {
        Some(remote) => (
            notes_to_push(session, remote)?,
            runs_to_push(session, remote)?,
        ),
        None => (None, None),
    };
    let mut stopped = None;
    let mut before = |record: ObjectId| -> Result<(), EngineError> {
        let landing = Landing {
            old: tip.to_string(),
            new: record.to_string(),
            merge: target.merged.to_string(),
        };
        match land_record(
            session,
            target,
            &landing,
            (record, seen),
            carried,
            keep.as_ref(),
        )? {
            None => Ok(()),
            Some(stop) => {
                stopped = Some(stop);
                Err(EngineError::Internal("the landing stopped".into()))
            }
        }
    };
    let written = recorder.record(target.exact.then_some(target.merged), &mut before);
    if let Some(stop) = stopped {
        return Ok(stop);
    }
    // A chain moved meanwhile (a lost compare-and-swap) keeps the landing file: the next
    // run finds the record on the remote, or on main here, and completes it.
    written?;
    store.forget_landing(&workflow);
    pause::point("landing-recorded");
    Ok(Landed::Recorded(event))
}

/// What a landing does once its record is stored and before the chain's ref moves: the
/// landing file written, the one atomic push, main moved here, the PR branch deleted.
/// `Some`: how it stopped (the push refused, or main not moved without a remote), the landing
/// file forgotten and the chain's ref left where it was.
fn land_record(
    session: &Session,
    target: &Target,
    landing: &Landing,
    (record, seen): (ObjectId, Option<ObjectId>),
    (notes, runs): (Option<(ObjectId, Option<ObjectId>)>, Option<RunsPush>),
    keep: Option<&(String, String)>,
) -> Result<Option<Landed>, EngineError> {
    let git = &session.git;
    let store = &session.store;
    let workflow = store.workflow();
    store.note_landing(workflow, landing)?;
    pause::point("landing-noted");
    if let Some(remote) = target.remote {
        let pushed = push_landing(
            session,
            remote,
            (record, seen),
            (target.main, target.merged, target.theirs),
            (notes, runs),
            keep,
        );
        if let Err(e) = pushed {
            store.forget_landing(workflow);
            return Ok(Some(Landed::Refused(e)));
        }
        pause::point("landing-pushed");
    }
    if target.merged != target.before {
        match move_main(
            session,
            target.main,
            target.at,
            target.before,
            target.merged,
        )? {
            Ok(()) => {}
            Err(why) if target.remote.is_none() => {
                store.forget_landing(workflow);
                return Ok(Some(Landed::Blocked(why)));
            }
            // On the remote already: main here catches up with its next fetch.
            Err(_) => {}
        }
    }
    pause::point("landing-main-moved");
    // Best effort: the merge is on main whatever becomes of the branch; a branch left
    // behind is deleted by the next merge's clean-up or by hand.
    if !matches!(target.at, MainAt::Here) {
        let _ = git.checkout_detached(target.merged);
    }
    let _ = git.delete_branch_at(target.branch, target.tip);
    Ok(None)
}

/// The one atomic push of a landing: the record to the workflow's ref (leased on the
/// remote's copy as fetched), the merge to main unless the remote has it (leased on main as
/// fetched), and the notes and the workflow's run record when there are any to push (each
/// leased on the remote's as fetched).
fn push_landing(
    session: &Session,
    remote: &str,
    (record, seen): (ObjectId, Option<ObjectId>),
    (main, merged, theirs): (&str, &str, Option<&str>),
    (notes, runs): (Option<(ObjectId, Option<ObjectId>)>, Option<RunsPush>),
    keep: Option<&(String, String)>,
) -> Result<(), GitError> {
    let reference = workflow_ref(session.store.workflow());
    let mut leases = vec![(reference.clone(), seen.map(|s| s.to_string()))];
    let mut specs = vec![format!("{record}:{reference}")];
    if theirs != Some(merged) {
        leases.push((branch_ref(main), theirs.map(str::to_string)));
        specs.push(format!("{merged}:{}", branch_ref(main)));
    }
    if let Some((tip, seen)) = notes {
        leases.push((NOTES_REF.to_string(), seen.map(|s| s.to_string())));
        specs.push(format!("{tip}:{NOTES_REF}"));
    }
    if let Some(RunsPush { ours, theirs }) = runs {
        let reference = runs_ref(session.store.workflow());
        leases.push((reference.clone(), theirs.map(|t| t.to_string())));
        specs.push(format!("{ours}:{reference}"));
    }
    if let Some((commit, kept)) = keep {
        // Only this workflow writes it; what it kept before, its chain's history names.
        specs.push(format!("+{commit}:{kept}"));
    }
    session.git.push_atomic(remote, &leases, &specs).map(drop)
}

/// The remote's copy of this workflow as last fetched, when this clone's chain holds it
/// (`Ok`); `Err` names it when it is not behind: taken elsewhere, for `sync` to settle.
fn own_copy(
    session: &Session,
    remote: &str,
    tip: ObjectId,
) -> Result<Result<Option<ObjectId>, String>, EngineError> {
    let workflow = session.store.workflow();
    let seen = session.store.ref_tip(&tracking_ref(remote, workflow))?;
    Ok(match seen {
        Some(seen)
            if !session
                .git
                .is_ancestor(&seen.to_string(), &tip.to_string())? =>
        {
            Err(format!(
                "{remote}'s copy of workflow {workflow} ({}) is not behind this one: the merge is not \
             pushed over it; run `git orchestrate sync {remote}`",
                crate::short_id(&seen.to_string())
            ))
        }
        seen => Ok(seen),
    })
}

/// `resume` after a merge conflict, with a remote: the human's merge on main here lands as
/// the workflow's does, its record (the answer) pushed with main and the notes in one atomic
/// push before the workflow's ref moves. A remote whose main moved on since, or that refuses
/// the push, leaves the workflow halted as it was, and the error says what to do.
pub(crate) fn land_resolution(
    session: &Session,
    snap: &Snapshot,
    event: Event,
    human: crate::workflow::Human,
    signed: Option<&crate::engine::AnswerSignature>,
    remote: &str,
) -> Result<crate::workflow::Transition, EngineError> {
    let git = &session.git;
    let store = &session.store;
    let workflow = store.workflow().to_string();
    let main = session.main_branch(Some(&snap.state))?;
    let merged = git.rev_parse(&branch_ref(&main))?;
    let failed = |what: &str, answer: String, hint: &str| EngineError::Remote {
        remote: remote.to_string(),
        what: what.to_string(),
        answer,
        hint: hint.to_string(),
    };
    let theirs = crate::engine::remote::fetch_main(session, remote, &main).map_err(|e| {
        failed(
            &format!("fetch {main}"),
            e.stderr.trim().to_string(),
            "Check that the remote answers, then run `git orchestrate resume` again.",
        )
    })?;
    if let Some(theirs) = &theirs
        && !git.is_ancestor(theirs, &merged)?
    {
        return Err(failed(
            &format!("land your merge on {main}"),
            format!(
                "{remote}'s {main} ({}) moved on since your merge: it is not in {main} here",
                crate::short_id(theirs)
            ),
            &format!(
                "Merge {remote}'s {main} into {main} here (`git merge {remote}/{main}`), then run \
                 `git orchestrate resume` again; nothing was recorded."
            ),
        ));
    }
    let seen = own_copy(session, remote, snap.tip)?.map_err(|why| {
        failed(
            "land your merge",
            why,
            "Run `git orchestrate sync`, then `git orchestrate resume` again.",
        )
    })?;
    let notes = notes_to_push(session, remote)?;
    let runs = runs_to_push(session, remote)?;
    let mut refused = None;
    let written = session.apply_answer_before(snap, event, human, signed, |record| {
        store.note_landing(
            &workflow,
            &Landing {
                old: snap.tip.to_string(),
                new: record.to_string(),
                merge: merged.clone(),
            },
        )?;
        pause::point("landing-noted");
        let pushed = push_landing(
            session,
            remote,
            (record, seen),
            (&main, &merged, theirs.as_deref()),
            (notes, runs),
            None,
        );
        if let Err(e) = pushed {
            store.forget_landing(&workflow);
            refused = Some(e);
            return Err(EngineError::Internal(
                "the landing's push was refused".into(),
            ));
        }
        pause::point("landing-pushed");
        Ok(())
    });
    if let Some(e) = refused {
        return Err(failed(
            &format!("push your merge with its record to {main}"),
            e.to_string(),
            "Fix what the remote said (a lost race: merge its main again), then run \
             `git orchestrate resume` again; nothing was recorded.",
        ));
    }
    let t = written?;
    store.forget_landing(&workflow);
    pause::point("landing-recorded");
    Ok(t)
}

/// The notes to push with the landing, with the remote's notes as fetched (the lease): the
/// local notes when they are ahead or the remote has none, both merged here when each has
/// notes the other lacks, nothing when the remote has them all.
fn notes_to_push(
    session: &Session,
    remote: &str,
) -> Result<Option<(ObjectId, Option<ObjectId>)>, EngineError> {
    let store = &session.store;
    let git = &session.git;
    let Some(ours) = store.local_tip(LocalRef::Notes)? else {
        return Ok(None);
    };
    let theirs = store.tracking_notes(remote)?;
    let Some(theirs) = theirs else {
        return Ok(Some((ours, None)));
    };
    let (o, t) = (ours.to_string(), theirs.to_string());
    if ours == theirs || git.is_ancestor(&o, &t)? {
        return Ok(None);
    }
    if git.is_ancestor(&t, &o)? {
        return Ok(Some((ours, Some(theirs))));
    }
    let merged = store.merge_notes(ours, theirs)?;
    store.move_ref(
        LocalRef::Notes,
        Some(ours),
        merged,
        &format!("merge: notes of {remote} merged for the landing"),
    )?;
    Ok(Some((merged, Some(theirs))))
}

/// The workflow's run record to push with the landing, and the remote's as fetched (the
/// lease).
#[derive(Clone, Copy)]
struct RunsPush {
    ours: ObjectId,
    theirs: Option<ObjectId>,
}

/// This workflow's run record (docs/board.md, "The ledger") when the remote lacks some of it,
/// so that a clone of the remote shows the run of a landed workflow without a later `sync`;
/// nothing when the remote has it all, or when each has turns the other lacks (two clones
/// ran the workflow: `sync` says so, and each keeps its own).
fn runs_to_push(session: &Session, remote: &str) -> Result<Option<RunsPush>, EngineError> {
    let store = &session.store;
    let workflow = store.workflow();
    let Some(ours) = store.local_runs()?.get(workflow).copied() else {
        return Ok(None);
    };
    let Some(theirs) = store.tracking_runs(remote)?.get(workflow).copied() else {
        return Ok(Some(RunsPush { ours, theirs: None }));
    };
    let ahead = ours != theirs
        && session
            .git
            .is_ancestor(&theirs.to_string(), &ours.to_string())?;
    Ok(ahead.then_some(RunsPush {
        ours,
        theirs: Some(theirs),
    }))
}

/// The record of a landing a kill (or a full disk) interrupted on the chain's `tip`, when it
/// landed: its record reached the remote (main here brought up to the remote's), or, without
/// one, its merge reached main here. A landing file that names nothing in flight, or a
/// landing that did not land, is forgotten (nothing having moved) and `None` returned.
fn interrupted_landed(
    session: &Session,
    tip: ObjectId,
    remote: Option<&str>,
    main: &str,
) -> Result<Result<Option<(ObjectId, Landing)>, Blocked>, EngineError> {
    let store = &session.store;
    let git = &session.git;
    let workflow = store.workflow().to_string();
    let Some(landing) = store.landing(&workflow) else {
        return Ok(Ok(None));
    };
    let record = ObjectId::from_hex(landing.new.as_bytes())
        .map_err(|e| EngineError::Internal(format!("a landing's record did not parse: {e}")))?;
    let on_tip = ObjectId::from_hex(landing.old.as_bytes()).ok() == Some(tip)
        && store
            .commit_record(record)
            .is_ok_and(|r| r.parents.first() == Some(&tip));
    if !on_tip {
        // The chain moved on since (the record became its tip, or another write came after
        // a landing given up): the file names nothing in flight.
        store.forget_landing(&workflow);
        return Ok(Ok(None));
    }
    let landed = match remote {
        Some(remote) => {
            let at = super::land::main_at(session, main)?;
            // The remote's main and its copies of the workflows, this one's included.
            if let Err(why) = up_to_remote(session, main, &at, remote)? {
                return Ok(Err(why));
            }
            match store.ref_tip(&tracking_ref(remote, &workflow))? {
                Some(there) => git.is_ancestor(&landing.new, &there.to_string())?,
                None => false,
            }
        }
        None => git.is_ancestor(&landing.merge, &branch_ref(main))?,
    };
    if !landed {
        store.forget_landing(&workflow);
        return Ok(Ok(None));
    }
    Ok(Ok(Some((record, landing))))
}

/// The chain's ref moved from `tip` to the landed `record`, and the landing file forgotten.
fn adopt_landed(session: &Session, tip: ObjectId, record: ObjectId) -> Result<(), EngineError> {
    let store = &session.store;
    let workflow = store.workflow().to_string();
    store.move_ref(
        LocalRef::Workflow(&workflow),
        Some(tip),
        record,
        "merge: the landing a kill interrupted, completed",
    )?;
    store.forget_landing(&workflow);
    Ok(())
}

/// A landing a kill (or a full disk) interrupted, found by the next `get-task` in
/// MERGING_BRANCH: completed when its record reached the remote (or, without one, its merge
/// reached main here), the chain moved to it; given up otherwise, nothing having moved.
/// `Some` is the recorded `merge`'s event once completed.
pub(super) fn complete_interrupted(
    session: &Session,
    snap: &Snapshot,
    remote: Option<&str>,
    main: &str,
) -> Result<Result<Option<Event>, Blocked>, EngineError> {
    let store = &session.store;
    let git = &session.git;
    let workflow = store.workflow().to_string();
    let (record, landing) = match interrupted_landed(session, snap.tip, remote, main)? {
        Ok(Some(landed)) => landed,
        Ok(None) => return Ok(Ok(None)),
        Err(why) => return Ok(Err(why)),
    };
    let event = store
        .commit_record(record)?
        .event
        .and_then(|e| serde_json::from_str::<Event>(&e).ok());
    let Some(event @ Event::Merged { .. }) = event else {
        store.forget_landing(&workflow);
        return Ok(Ok(None));
    };
    adopt_landed(session, snap.tip, record)?;
    if let Event::Merged { branch, .. } = &event
        && let Some(checked) = snap.state.plan_commit()
        && git.is_ancestor(checked, &branch_ref(main))?
    {
        // Best effort, as in the landing itself; HEAD leaves the branch first.
        if store.head_branch()?.as_deref() == Some(branch.as_str()) {
            let _ = git.checkout_detached(&landing.merge);
        }
        let _ = git.delete_branch_at(branch, checked);
    }
    Ok(Ok(Some(event)))
}

/// A ticket's landing (its completion, the record) a kill or a full disk interrupted, found
/// by the next `complete-ticket` while the ticket is finishing on `tip`: completed when the
/// record reached the remote, the chain moved to it and the ticket's branch (at `squash`)
/// deleted as the landing would have; given up otherwise, nothing having moved. `Some` is the
/// record once completed.
pub(crate) fn complete_interrupted_ticket(
    session: &Session,
    tip: ObjectId,
    main: &str,
    branch: &str,
    squash: &str,
) -> Result<Result<Option<ObjectId>, String>, EngineError> {
    let store = &session.store;
    let git = &session.git;
    let state = crate::workflow::State::new(Some(main.to_string()));
    let remote = crate::engine::remote::coordination_remote(session, &state)?;
    let (record, landing) = match interrupted_landed(session, tip, remote.as_deref(), main)? {
        Ok(Some(landed)) => landed,
        Ok(None) => return Ok(Ok(None)),
        Err(why) => return Ok(Err(why.to_string())),
    };
    if store.kind_at(record)? != crate::store::WorkflowKind::Ticket {
        store.forget_landing(store.workflow());
        return Ok(Ok(None));
    }
    adopt_landed(session, tip, record)?;
    if git.is_ancestor(squash, &branch_ref(main))? {
        // Best effort, as in the landing itself; HEAD leaves the branch first.
        if store.head_branch()?.as_deref() == Some(branch) {
            let _ = git.checkout_detached(&landing.merge);
        }
        let _ = git.delete_branch_at(branch, squash);
    }
    Ok(Ok(Some(record)))
}

/// `resume`'s landing of a human's merge that a kill interrupted after its push, found by
/// the next `resume` on the halted chain `snap`: when its record (the answer, a `merge`)
/// reached the remote, the chain moves to it and `true` is returned; otherwise the landing is
/// given up, nothing having moved, and `resume` lands the merge afresh.
pub(crate) fn complete_interrupted_resolution(
    session: &Session,
    snap: &Snapshot,
    remote: &str,
) -> Result<Result<bool, String>, EngineError> {
    let store = &session.store;
    let main = session.main_branch(Some(&snap.state))?;
    let (record, _) = match interrupted_landed(session, snap.tip, Some(remote), &main)? {
        Ok(Some(landed)) => landed,
        Ok(None) => return Ok(Ok(false)),
        Err(why) => return Ok(Err(why.to_string())),
    };
    let event = store
        .commit_record(record)?
        .event
        .and_then(|e| serde_json::from_str::<Event>(&e).ok());
    if !matches!(event, Some(Event::Merged { .. })) {
        store.forget_landing(store.workflow());
        return Ok(Ok(false));
    }
    adopt_landed(session, snap.tip, record)?;
    Ok(Ok(true))
}
