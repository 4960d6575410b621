//! Writing a transition: its blobs, tree and commit first, then one compare-and-swap of the
//! workflow ref.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::progress::{Progress, state_json};
use super::snapshot::{ESCALATION_FILE, OUTPUT_FILE, PLAN_FILE, REVIEW_FILE, STATE_FILE};
use super::{
    EVENT_HEADER, REFLOG_PREFIX, SIGNATURE_HEADER, Snapshot, Store, StoreError, WriteError,
    git_err, loose,
};
use crate::workflow::plan::Plan;
use crate::workflow::state::{State, Status};
use crate::workflow::{Human, PlanChange};

/// A change to one file of the workflow tree.
#[derive(Debug)]
pub enum FileChange<'a, T: ?Sized> {
    Keep,
    Set(&'a T),
    Remove,
}

// By hand: the derives would demand `T: Copy`, which `[u8]` is not.
impl<T: ?Sized> Clone for FileChange<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for FileChange<'_, T> {}

/// A human's answer signed with an SSH key (docs/refs.md, "Signed answers"): who signed it,
/// as the allowed-signers file names them, and the armored signature.
#[derive(Clone, Copy, Debug)]
pub struct SignedAnswer<'a> {
    pub principal: &'a str,
    pub signature: &'a str,
}

/// One transition to store.
pub struct TransitionWrite<'a> {
    pub event: &'a str,
    pub from: Option<Status>,
    pub state: &'a State,
    pub plan: &'a PlanChange,
    pub output_log: FileChange<'a, [u8]>,
    pub escalation: FileChange<'a, [u8]>,
    pub review: FileChange<'a, [u8]>,
    pub step: Option<String>,
    pub summary: &'a str,
    /// How a human's answer was authorised, when the transition is one.
    pub human: Option<Human>,
    /// The signature of a human's answer, when it was signed: the `orchestrator-signature`
    /// header, and `Orchestrator-Human: signed <principal>` in place of how it was authorised.
    pub signed: Option<SignedAnswer<'a>>,
    /// The event the transition applied, as JSON: the commit's `orchestrator-event` header,
    /// from which `audit` computes the transition again (docs/integrity.md).
    pub input: Option<String>,
    /// Trees the chain names that no commit it reaches holds (a RED step's pinned tree and the
    /// tree its task began at), added to the `pinned-trees` subtree so that a push or fetch of
    /// the chain carries them; `Remove` drops the subtree (the merge: the trees stay reachable
    /// from the history).
    pub pinned_trees: FileChange<'a, [ObjectId]>,
}

/// The subtree of a workflow commit that keeps the trees its state names reachable: an
/// entry per tree, named by its id (docs/refs.md, "Tree of a workflow commit").
pub(super) const PINNED_TREES: &str = "pinned-trees";

impl Store {
    /// Stores a transition: objects first, then one compare-and-swap of the ref against
    /// `expected` (the tip the command read; `None` = the ref must not exist yet). A crash at
    /// any point leaves either the old state or the new one.
    pub fn write(
        &self,
        expected: Option<&Snapshot>,
        write: &TransitionWrite,
    ) -> Result<ObjectId, WriteError> {
        self.write_before(expected, write, |_| Ok(()))
    }

    /// [`Self::write`], with `before` given the new commit once its objects are stored and
    /// before the ref moves: an error from it leaves the ref where it was (a claim pushed
    /// with the transition, docs/refs.md "Claims").
    pub fn write_before<E: From<WriteError>>(
        &self,
        expected: Option<&Snapshot>,
        write: &TransitionWrite,
        before: impl FnOnce(ObjectId) -> Result<(), E>,
    ) -> Result<ObjectId, E> {
        let (commit_id, message, signature) = self.build(expected, write)?;
        before(commit_id)?;
        self.update_ref(
            &self.ref_name,
            expected.map(|s| s.tip),
            commit_id,
            format!(
                "{REFLOG_PREFIX}{}",
                message.lines().next().unwrap_or_default()
            ),
            &signature,
        )?;
        Ok(commit_id)
    }

    /// The transition's objects, stored: its commit, message and signature.
    fn build(
        &self,
        expected: Option<&Snapshot>,
        write: &TransitionWrite,
    ) -> Result<(ObjectId, String, gix::actor::Signature), WriteError> {
        let mut objects = loose::LooseWriter::at(self.repo.objects_dir(), self.repo.object_hash());
        let mut entries = expected.map(|s| s.entries.clone()).unwrap_or_default();
        let progress = match self.plan_record(expected, write.plan, &mut entries)? {
            PlanRecord::Progress(progress) => progress,
            PlanRecord::Store(plan) => {
                let id = self.blob_once(&mut objects, &plan.to_json())?;
                entries.insert(PLAN_FILE.into(), id);
                Some(Progress::of(&plan, id.to_string(), Vec::new()))
            }
        };
        // state.json is new with every transition; probing for it first would only make gix
        // rescan the pack directory on the miss.
        let state_id = objects.write(
            gix::objs::Kind::Blob,
            &state_json(write.state, progress.as_ref())?,
        )?;
        entries.insert(STATE_FILE.into(), state_id);
        for (name, change) in [
            (OUTPUT_FILE, write.output_log),
            (ESCALATION_FILE, write.escalation),
            (REVIEW_FILE, write.review),
        ] {
            match change {
                FileChange::Keep => {}
                FileChange::Set(bytes) => {
                    entries.insert(name.into(), self.blob_once(&mut objects, bytes)?);
                }
                FileChange::Remove => {
                    entries.remove(name);
                }
            }
        }
        match write.pinned_trees {
            FileChange::Keep => {}
            FileChange::Set(trees) => {
                let pinned = self.pinned_with(entries.get(PINNED_TREES).copied(), trees)?;
                entries.insert(PINNED_TREES.into(), objects.write_object(&pinned)?);
            }
            FileChange::Remove => {
                entries.remove(PINNED_TREES);
            }
        }
        let tree_id = objects.write_object(&blob_tree(
            entries.iter().map(|(name, id)| (name.as_str(), *id)),
        ))?;
        let signature = self.signature()?;
        let message = commit_message(write);
        let headers = write
            .input
            .iter()
            .map(|json| (EVENT_HEADER.into(), json.as_str().into()))
            .chain(write.signed.map(|signed| {
                // gix continues a value's lines with a space, as git does `gpgsig`'s; the
                // reader takes the space off again.
                (SIGNATURE_HEADER.into(), signed.signature.trim_end().into())
            }))
            .collect();
        let commit = commit_object(
            tree_id,
            expected.map(|s| s.tip),
            &signature,
            &message,
            headers,
        );
        let commit_id = objects.write_object(&commit)?;
        Ok((commit_id, message, signature))
    }

    /// Blob `bytes`, written only when not stored already: content that repeats (an empty
    /// output.log, an unchanged plan) often is, and hashing is far cheaper than creating
    /// another object file.
    fn blob_once(
        &self,
        objects: &mut loose::LooseWriter,
        bytes: &[u8],
    ) -> Result<ObjectId, StoreError> {
        let id = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .map_err(git_err)?;
        if self.holds(id)? {
            return Ok(id);
        }
        objects.write(gix::objs::Kind::Blob, bytes)
    }

    /// What `change` makes of the plan's record, `pr.json` taken out of `entries` when the
    /// plan is dropped. A completed step rewrites only the small progress record: the plan
    /// stays as stored, until its last step is done and the PR is read as a whole.
    fn plan_record(
        &self,
        expected: Option<&Snapshot>,
        change: &PlanChange,
        entries: &mut BTreeMap<String, ObjectId>,
    ) -> Result<PlanRecord, StoreError> {
        let current_plan = || -> Result<Plan, StoreError> {
            expected
                .map(|s| self.plan(s))
                .transpose()?
                .flatten()
                .ok_or_else(|| {
                    StoreError::Internal("the transition changes a plan, and none is active".into())
                })
        };
        Ok(match change {
            PlanChange::Keep => PlanRecord::Progress(expected.and_then(kept_progress)),
            // The next step is in the same task: known without reading the plan.
            PlanChange::CompleteStep(step)
                if let Some(next) = expected
                    .and_then(|s| s.progress.as_ref())
                    .and_then(|p| p.completed(*step)) =>
            {
                PlanRecord::Progress(Some(next))
            }
            PlanChange::Drop => {
                entries.remove(PLAN_FILE);
                PlanRecord::Progress(None)
            }
            PlanChange::CompleteStep(step) => {
                let mut plan = current_plan()?;
                plan.complete_step(*step);
                if plan.all_done() {
                    return Ok(PlanRecord::Store(plan));
                }
                let mut done = expected.map(|s| s.done.clone()).unwrap_or_default();
                if !done.contains(step) {
                    done.push(*step);
                }
                let id = entries
                    .get(PLAN_FILE)
                    .map(ToString::to_string)
                    .unwrap_or_default();
                PlanRecord::Progress(Some(Progress::of(&plan, id, done)))
            }
            PlanChange::Materialize => PlanRecord::Store(current_plan()?),
            PlanChange::Replace(plan) => PlanRecord::Store(plan.clone()),
        })
    }
}

/// What a transition does with the plan: keep (or drop) the progress record beside the
/// stored `pr.json`, or store a `pr.json` anew.
enum PlanRecord {
    Progress(Option<Progress>),
    Store(Plan),
}

/// The record of the snapshot's plan as it stands, for a transition that leaves it alone.
fn kept_progress(snapshot: &Snapshot) -> Option<Progress> {
    let plan = snapshot.entries.get(PLAN_FILE)?.to_string();
    Some(Progress {
        plan,
        done: snapshot.done.clone(),
        summary: snapshot.summary.clone()?,
        ahead: snapshot
            .progress
            .as_ref()
            .map(|p| p.ahead.clone())
            .unwrap_or_default(),
    })
}

/// A tree of plain files, `entries` sorted by name as git requires.
pub(super) fn blob_tree<'a>(entries: impl Iterator<Item = (&'a str, ObjectId)>) -> gix::objs::Tree {
    gix::objs::Tree {
        entries: entries
            .map(|(name, oid)| gix::objs::tree::Entry {
                mode: if name == PINNED_TREES {
                    gix::objs::tree::EntryKind::Tree.into()
                } else {
                    gix::objs::tree::EntryKind::Blob.into()
                },
                filename: name.into(),
                oid,
            })
            .collect(),
    }
}

impl Store {
    /// The `pinned-trees` subtree `old` (none yet: empty) with `trees` in it.
    fn pinned_with(
        &self,
        old: Option<ObjectId>,
        trees: &[ObjectId],
    ) -> Result<gix::objs::Tree, StoreError> {
        // Read through the store's own object reader: opening gix for it cost a fifth of a
        // GREEN step that pins its trees.
        let mut entries: Vec<gix::objs::tree::Entry> = match old {
            Some(id) => {
                let data = self
                    .object_of_kind(id, gix::objs::Kind::Tree)
                    .map_err(StoreError::Git)?;
                gix::objs::TreeRef::from_bytes(&data, self.repo.object_hash())
                    .map_err(git_err)?
                    .entries
                    .iter()
                    .map(|e| gix::objs::tree::Entry {
                        mode: e.mode,
                        filename: e.filename.into(),
                        oid: e.oid.to_owned(),
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        for tree in trees {
            let name = tree.to_string();
            if !entries.iter().any(|e| e.filename == name.as_str()) {
                entries.push(gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Tree.into(),
                    filename: name.into(),
                    oid: *tree,
                });
            }
        }
        entries.sort_by(|a, b| a.filename.cmp(&b.filename));
        Ok(gix::objs::Tree { entries })
    }
}

/// A commit of the store's, authored and committed by `signature`.
pub(super) fn commit_object(
    tree: ObjectId,
    parent: Option<ObjectId>,
    signature: &gix::actor::Signature,
    message: &str,
    extra_headers: Vec<(gix::bstr::BString, gix::bstr::BString)>,
) -> gix::objs::Commit {
    gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author: signature.clone(),
        committer: signature.clone(),
        encoding: None,
        message: message.into(),
        extra_headers,
    }
}

fn commit_message(write: &TransitionWrite) -> String {
    let from = write.from.map_or("(none)", Status::as_str);
    let to = write.state.status().as_str();
    let mut message = format!("{}: {from} -> {to}\n", write.event);
    let body = write.summary.trim();
    if !body.is_empty() {
        message.push('\n');
        message.push_str(body);
        message.push('\n');
    }
    message.push_str(&format!(
        "\nOrchestrator-Event: {}\nOrchestrator-From: {from}\nOrchestrator-To: {to}\n",
        write.event
    ));
    if let Some(step) = &write.step {
        message.push_str(&format!("Orchestrator-Step: {step}\n"));
    }
    match (write.signed, write.human) {
        (Some(signed), _) => {
            message.push_str(&format!(
                "Orchestrator-Human: signed {}\n",
                signed.principal
            ));
        }
        (None, Some(human)) => {
            message.push_str(&format!("Orchestrator-Human: {}\n", human.as_str()));
        }
        (None, None) => {}
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    use super::super::history::parse_history_entry;
    use super::super::locks::STALE_LOCK;

    #[test]
    fn commit_messages_carry_the_trailers() {
        let mut state = State::new(None);
        state = state.edit(|w| {
            w.status = Status::Debugging;
        });
        let msg = commit_message(&TransitionWrite {
            event: "test",
            from: Some(Status::ExecutingTdd),
            state: &state,
            plan: &PlanChange::Keep,
            output_log: FileChange::Keep,
            escalation: FileChange::Keep,
            review: FileChange::Keep,
            step: Some("1.2".into()),
            summary: "FAILURE: `make` (exit 2)\n\nI tried",
            human: None,
            signed: None,
            input: None,
            pinned_trees: FileChange::Keep,
        });
        assert_eq!(
            msg,
            "test: EXECUTING_TDD -> DEBUGGING\n\nFAILURE: `make` (exit 2)\n\nI tried\n\n\
             Orchestrator-Event: test\nOrchestrator-From: EXECUTING_TDD\nOrchestrator-To: DEBUGGING\nOrchestrator-Step: 1.2\n"
        );
        let entry = parse_history_entry("c".into(), "t".into(), &msg);
        assert_eq!(entry.event, "test");
        assert_eq!(entry.from.as_deref(), Some("EXECUTING_TDD"));
        assert_eq!(entry.to.as_deref(), Some("DEBUGGING"));
        assert_eq!(entry.step.as_deref(), Some("1.2"));
        assert_eq!(entry.body, "FAILURE: `make` (exit 2)\n\nI tried");
    }

    /// A summary whose lines read like our trailers stays text: only the last paragraph is
    /// trailers, and a plan transition (no step) does not take a step from the summary.
    #[test]
    fn a_summary_that_looks_like_trailers_is_not_read_as_them() {
        let mut state = State::new(None);
        state = state.edit(|w| {
            w.status = Status::CreatingBranch;
        });
        let summary = "plan\nOrchestrator-Step: 9.9\nOrchestrator-To: MERGING_BRANCH\n\nOrchestrator-Step: 9.8";
        let msg = commit_message(&TransitionWrite {
            event: "plan",
            from: Some(Status::Initializing),
            summary,
            ..transition(&state)
        });
        let entry = parse_history_entry("c".into(), "t".into(), &msg);
        assert_eq!(entry.step, None);
        assert_eq!(entry.to.as_deref(), Some("CREATING_BRANCH"));
        assert_eq!(entry.body, summary);
        // A message of a subject alone has no trailers and no body.
        let entry = parse_history_entry("c".into(), "t".into(), "create: (none) -> INITIALIZING\n");
        assert_eq!((entry.event.as_str(), entry.body.as_str()), ("create", ""));
    }

    fn transition(state: &State) -> TransitionWrite<'_> {
        TransitionWrite {
            event: "test",
            from: Some(state.status()),
            state,
            plan: &PlanChange::Keep,
            output_log: FileChange::Keep,
            escalation: FileChange::Keep,
            review: FileChange::Keep,
            step: None,
            summary: "",
            human: None,
            signed: None,
            input: None,
            pinned_trees: FileChange::Keep,
        }
    }

    /// A signed answer's armored signature is a multi-line header and comes back byte for
    /// byte; the trailer names the signer, and git itself reads the commit as sound.
    #[test]
    fn a_signed_answer_round_trips_through_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        crate::test_git::git(dir.path(), &["init", "--quiet"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let state = State::new(Some("main".into()));
        store.write(None, &transition(&state)).unwrap();
        let snapshot = store.read().unwrap().unwrap();
        let armored = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ\nAAAAMwAAAAtzc2gtZWQ\n-----END SSH SIGNATURE-----\n";
        let id = store
            .write(
                Some(&snapshot),
                &TransitionWrite {
                    human: Some(Human::Env),
                    signed: Some(SignedAnswer {
                        principal: "alice@example.com",
                        signature: armored,
                    }),
                    input: Some("{\"event\":\"approve\"}".into()),
                    ..transition(&state)
                },
            )
            .unwrap();
        let record = store.commit_record(id).unwrap();
        assert_eq!(record.signature.as_deref(), Some(armored));
        assert_eq!(record.event.as_deref(), Some("{\"event\":\"approve\"}"));
        assert_eq!(
            record.history.human.as_deref(),
            Some("signed alice@example.com")
        );
        let fsck = std::process::Command::new("git")
            .args(["fsck", "--strict", "--no-dangling"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(fsck.status.success(), "{fsck:?}");
        // Without a signature nothing changes: no header, the attribution as before.
        let plain = store.commit_record(snapshot.tip).unwrap();
        assert_eq!(plain.signature, None);
    }

    #[test]
    fn a_lock_left_behind_is_reported_at_once_and_a_fresh_one_is_a_lost_race() {
        let dir = tempfile::tempdir().unwrap();
        crate::test_git::git(dir.path(), &["init", "--quiet"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let state = State::new(Some("main".into()));
        store.write(None, &transition(&state)).unwrap();
        let snapshot = store.read().unwrap().unwrap();
        let lock = dir
            .path()
            .join(".git/refs/orchestrator/workflows/main.lock");

        let file = std::fs::File::create(&lock).unwrap();
        assert!(
            matches!(
                store.write(Some(&snapshot), &transition(&state)),
                Err(WriteError::Conflict)
            ),
            "a fresh lock is another process at work: retry"
        );
        file.set_modified(std::time::SystemTime::now() - 2 * STALE_LOCK)
            .unwrap();
        match store.write(Some(&snapshot), &transition(&state)) {
            Err(WriteError::Store(StoreError::Locked { path, age, .. })) => {
                assert_eq!(path, lock);
                assert!(age >= STALE_LOCK);
            }
            other => panic!("a stale lock is named, not retried: {other:?}"),
        }
        drop(file);
        std::fs::remove_file(&lock).unwrap();
        store.write(Some(&snapshot), &transition(&state)).unwrap();
    }
}
