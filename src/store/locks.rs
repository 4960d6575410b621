//! The lock files git leaves on a ref while it moves it (its own, and the packed refs'): one
//! left by a crash is reported with the file to remove, and `doctor` watches whether one is held by anyone at work.

use std::path::PathBuf;

use gix::ObjectId;
use gix::refs::FullName;

use super::{CLAIMS, NOTES_REF, Store, StoreError};

/// A ref lock older than this is not another command at work (they hold it for
/// milliseconds) but the remains of a crash.
pub(super) const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(30);

/// A ref's lock file at one moment; two sightings are equal when the same file, unchanged,
/// locks a ref that has not moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSighting {
    pub reference: String,
    pub path: PathBuf,
    identity: (u64, u64, std::time::SystemTime),
    value: Option<ObjectId>,
    pub age: std::time::Duration,
}

impl LockSighting {
    pub fn same_lock(&self, other: &LockSighting) -> bool {
        (&self.reference, &self.path, &self.identity, &self.value)
            == (&other.reference, &other.path, &other.identity, &other.value)
    }

    pub fn into_error(self) -> StoreError {
        StoreError::Locked {
            reference: self.reference,
            path: self.path,
            age: self.age,
        }
    }
}

impl Store {
    /// A lock file on the workflow ref or the notes ref, as a [`StoreError::Locked`], when it
    /// has been there longer than any command holds it: the remains of a crash, not a process
    /// at work.
    pub fn stale_lock(&self) -> Option<StoreError> {
        let notes = FullName::try_from(NOTES_REF).ok()?;
        self.stale_lock_of(&self.ref_name)
            .or_else(|| self.stale_lock_of(&notes))
    }

    /// [`Self::stale_lock`], or a lock on a claim ref, of any age. Asked only once a command
    /// has lost every attempt: a plan's acceptance writes its claim beside the workflow, and
    /// a lock a kill left there makes each attempt lose; while retrying, a lock on another
    /// PR's claim (which blocks no write of this workflow's) must not end a race merely lost.
    pub fn lock_at_give_up(&self) -> Option<StoreError> {
        self.stale_lock().or_else(|| {
            self.claim_locks()
                .into_iter()
                .find_map(|(name, path)| locked(&name, path, std::time::Duration::ZERO))
        })
    }

    /// The lock files on claim refs, this clone's and the remotes' copies (`<claim>.lock`
    /// beside them): a plan's acceptance writes them with the workflow ref, so a crash between
    /// a claim's lock and its rename makes every later acceptance lose as if to a racing
    /// writer. In reftable the one lock is the workflow ref's already.
    fn claim_locks(&self) -> Vec<(FullName, PathBuf)> {
        if self.refs_in_reftable() {
            return Vec::new();
        }
        let common = self.repo.common_dir();
        let mut dirs = vec![CLAIMS.to_string()];
        if let Ok(remotes) = std::fs::read_dir(common.join(super::names::REMOTES)) {
            dirs.extend(remotes.flatten().filter_map(|remote| {
                let remote = remote.file_name();
                Some(format!(
                    "{}{}/claims/",
                    super::names::REMOTES,
                    remote.to_str()?
                ))
            }));
        }
        let mut locks: Vec<(FullName, PathBuf)> = dirs
            .iter()
            .filter_map(|dir| Some((dir, std::fs::read_dir(common.join(dir)).ok()?)))
            .flat_map(|(dir, entries)| {
                entries.flatten().filter_map(move |entry| {
                    let file = entry.file_name();
                    let slug = file.to_str()?.strip_suffix(".lock")?;
                    let name = FullName::try_from(format!("{dir}{slug}")).ok()?;
                    Some((name, entry.path()))
                })
            })
            .collect();
        locks.sort();
        locks
    }

    /// A lock file on `reference` now, of any age, as a [`StoreError::Locked`]: what a write
    /// that kept losing to a writer found in its way, when it is a lock still there.
    pub fn lock_on(&self, reference: &str) -> Option<StoreError> {
        let name = FullName::try_from(reference).ok()?;
        self.lock_paths(&name)
            .into_iter()
            .find_map(|path| locked(&name, path, std::time::Duration::ZERO))
    }

    /// The lock files on the workflow ref, the notes ref and the claim refs (and on the packed
    /// refs) as they are now, each with what identifies it and the ref's value: a lock seen again unchanged
    /// while its ref stands still is held by nobody at work.
    pub fn lock_sightings(&self) -> Vec<LockSighting> {
        let mut sightings = self.workflow_lock_sightings();
        // A claim's own lock only: the packed refs' is the workflow ref's sighting already.
        sightings.extend(
            self.claim_locks()
                .into_iter()
                .filter_map(|(name, path)| self.sighting(&name, path)),
        );
        sightings
    }

    /// [`Self::lock_sightings`] without the claim refs': what a lost race of this workflow's
    /// can have lost to (a lock on another PR's claim blocks none of its writes).
    pub fn workflow_lock_sightings(&self) -> Vec<LockSighting> {
        let notes = FullName::try_from(NOTES_REF).ok();
        [Some(self.ref_name.clone()), notes]
            .into_iter()
            .flatten()
            .flat_map(|name| {
                self.lock_paths(&name)
                    .into_iter()
                    .filter_map(move |path| self.sighting(&name, path))
            })
            .collect()
    }

    fn sighting(&self, name: &FullName, path: PathBuf) -> Option<LockSighting> {
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let modified = meta.modified().ok()?;
        let value = match self.ref_commands() {
            Ok(None) => self
                .repo()
                .ok()?
                .try_find_reference(name.as_ref())
                .ok()
                .flatten()
                .and_then(|r| r.target().try_id().map(ToOwned::to_owned)),
            _ => self.direct_ref(&name.to_string()).ok().flatten(),
        };
        Some(LockSighting {
            reference: name.to_string(),
            path,
            identity: (
                std::os::unix::fs::MetadataExt::ino(&meta),
                meta.len(),
                modified,
            ),
            value,
            age: modified.elapsed().unwrap_or_default(),
        })
    }

    /// The files whose presence stops a move of ref `name`: its own lock, and the packed
    /// refs' lock, which a ref held in `packed-refs` needs too. A `git pack-refs` or `gc`
    /// killed midway leaves the latter, and every write then loses as if to a racing writer.
    /// In reftable, one lock guards every ref: `reftable/tables.list.lock`.
    fn lock_paths(&self, name: &FullName) -> Vec<PathBuf> {
        if self.refs_in_reftable() {
            return vec![self.reftable_lock_path()];
        }
        vec![
            self.ref_lock_path(name),
            self.repo.common_dir().join("packed-refs.lock"),
        ]
    }

    fn reftable_lock_path(&self) -> PathBuf {
        self.repo.common_dir().join("reftable/tables.list.lock")
    }

    /// The reftable lock, when a crash left it: every ref write fails while it stays.
    pub(super) fn stale_reftable_lock(&self, name: &str) -> Option<StoreError> {
        let name = FullName::try_from(name).ok()?;
        self.refs_in_reftable()
            .then(|| self.stale_lock_of(&name))
            .flatten()
    }

    /// The file git holds while it moves ref `name`: `<name>.lock` in the common directory.
    pub(super) fn ref_lock_path(&self, name: &FullName) -> PathBuf {
        self.repo
            .common_dir()
            .join(format!("{}.lock", name.as_bstr()))
    }

    pub(super) fn stale_lock_of(&self, name: &FullName) -> Option<StoreError> {
        self.lock_paths(name)
            .into_iter()
            .find_map(|path| locked(name, path, STALE_LOCK))
    }
}

/// The lock file `path` on `name`, as a [`StoreError::Locked`], when it is there and at least
/// `min_age` old (its own age, not a link's target's: a lock git leaves is a plain file).
fn locked(name: &FullName, path: PathBuf, min_age: std::time::Duration) -> Option<StoreError> {
    let age = std::fs::symlink_metadata(&path)
        .ok()?
        .modified()
        .ok()?
        .elapsed()
        .unwrap_or_default();
    (age >= min_age).then(|| StoreError::Locked {
        reference: name.to_string(),
        age,
        path,
    })
}
