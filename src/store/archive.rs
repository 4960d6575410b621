//! The archive of finished workflows (docs/refs.md, "The archive"): one ref,
//! `refs/orchestrator/archive`, a chain of commits whose tree indexes each archived
//! workflow's name to its tip (a gitlink entry) and whose further parents hold the tips each
//! commit archived (directly, or through bundle commits of at most [`FANOUT`] parents each),
//! so that their histories stay reachable and travel with the ref. The live ref space keeps
//! only what is not finished: what every hot-path command lists stays small.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::archive_filter::{self, Filter};
use super::names::{ARCHIVE, WORKFLOWS};
use super::write::commit_object;
use super::{Store, StoreError, WriteError, git_err};

/// How an archive commit's message starts.
const ARCHIVE_SUBJECT: &str = "archive: ";

/// How a bundle commit's message starts: not [`ARCHIVE_SUBJECT`], so that a walk down the
/// archive's first parents never takes a bundle for an archive commit.
const BUNDLE_SUBJECT: &str = "archive bundle: ";

/// The most parents an archive or bundle commit gets besides the archive before it. git
/// parses every parent of a commit its walks meet: the connectivity check after each fetch
/// of `sync` meets the archive ref's commit, and one commit with 10,000 parents made that
/// check cost more than the rest of a sync (docs/refs.md, "The archive").
const FANOUT: usize = 64;

impl Store {
    /// The archive's commit; `None` while nothing was archived.
    pub fn archive_tip(&self) -> Result<Option<ObjectId>, StoreError> {
        self.direct_ref(ARCHIVE)
    }

    /// Every workflow archive commit `at` indexes, by name, with its tip.
    pub fn archived_at(&self, at: ObjectId) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        let commit = self.repo()?.find_commit(at).map_err(git_err)?;
        let tree = commit.tree().map_err(git_err)?;
        let decoded = tree.decode().map_err(git_err)?;
        Ok(decoded
            .entries
            .iter()
            .filter(|e| e.mode.is_commit())
            .map(|e| (e.filename.to_str_lossy().into_owned(), e.oid.to_owned()))
            .collect())
    }

    /// The workflows among `names` that archive commit `at` indexes, by name, with their tips:
    /// the names its filter rules out cost nothing, and one pass over its tree keeps only the
    /// rest, so that what a caller reads and holds grows with the names it asks about, not
    /// with the archive (`sync`, docs/refs.md "The archive").
    pub fn archived_among(
        &self,
        at: ObjectId,
        names: &std::collections::BTreeSet<&str>,
    ) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        let mut out = BTreeMap::new();
        if names.is_empty() {
            return Ok(out);
        }
        let commit = self.repo()?.find_commit(at).map_err(git_err)?;
        let asked = match self.filter_of(&commit) {
            Some(blob) => match Filter::decode(&blob) {
                Some(filter) => names
                    .iter()
                    .copied()
                    .filter(|n| filter.may_hold(n))
                    .collect(),
                None => names.clone(),
            },
            None => names.clone(),
        };
        if asked.is_empty() {
            return Ok(out);
        }
        let tree = commit.tree().map_err(git_err)?;
        for entry in tree.iter() {
            let entry = entry.map_err(git_err)?;
            if !entry.mode().is_commit() {
                continue;
            }
            let name = entry.filename().to_str_lossy();
            if asked.contains(name.as_ref()) {
                out.insert(name.into_owned(), entry.object_id());
            }
        }
        Ok(out)
    }

    /// The blob of archive commit `commit`'s filter, read by the id its header names (not
    /// through its tree, which is what the filter spares); `None` when it has none (written
    /// by an older release) or the blob cannot be read: then the index is read whole.
    fn filter_of(&self, commit: &gix::Commit<'_>) -> Option<Vec<u8>> {
        let decoded = commit.decode().ok()?;
        let id = decoded.extra_headers().find(archive_filter::HEADER)?;
        let id = ObjectId::from_hex(id.as_bytes()).ok()?;
        let object = self.repo().ok()?.find_object(id).ok()?;
        (object.kind == gix::object::Kind::Blob).then(|| object.detach().data)
    }

    /// Every archived workflow, by name, with its tip; empty while nothing was archived.
    pub fn archived_workflows(&self) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        match self.archive_tip()? {
            Some(at) => self.archived_at(at),
            None => Ok(BTreeMap::new()),
        }
    }

    /// The tip `workflow` was archived at, when it was: at most one tree read (none when the
    /// filter rules the name out), no listing.
    pub fn archived_tip(&self, workflow: &str) -> Result<Option<ObjectId>, StoreError> {
        let Some(at) = self.archive_tip()? else {
            return Ok(None);
        };
        let commit = self.repo()?.find_commit(at).map_err(git_err)?;
        if let Some(blob) = self.filter_of(&commit)
            && Filter::decode(&blob).is_some_and(|f| !f.may_hold(workflow))
        {
            return Ok(None);
        }
        let tree = commit.tree().map_err(git_err)?;
        Ok(tree
            .find_entry(workflow)
            .filter(|e| e.mode().is_commit())
            .map(|e| e.object_id()))
    }

    /// The tips archived by the archive commits made at or after `not_before` (seconds since
    /// the epoch), by name: an older archive commit archived only tips older than itself, so
    /// the walk stops at the first one, and what it costs grows with recent archiving only.
    pub fn recently_archived(
        &self,
        not_before: i64,
    ) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let mut out = Vec::new();
        let mut next = self.archive_tip()?;
        while let Some(at) = next {
            let commit = self.repo()?.find_commit(at).map_err(git_err)?;
            if commit.time().map_or(true, |t| t.seconds < not_before) {
                break;
            }
            // The first archive commit has no archive before it: all its parents are tips.
            next = commit
                .parent_ids()
                .next()
                .map(|p| p.detach())
                .filter(|p| self.is_archive_commit(*p));
            let before = match next {
                Some(first) => self.archived_at(first)?,
                None => BTreeMap::new(),
            };
            // What this commit added: its own batch, or what it took in from another archive.
            out.extend(
                self.archived_at(at)?
                    .into_iter()
                    .filter(|(name, tip)| before.get(name) != Some(tip)),
            );
        }
        Ok(out)
    }

    fn is_archive_commit(&self, id: ObjectId) -> bool {
        self.repo().is_ok_and(|repo| {
            repo.find_commit(id).is_ok_and(|c| {
                c.message_raw_sloppy()
                    .starts_with(ARCHIVE_SUBJECT.as_bytes())
            })
        })
    }

    /// Stores (no ref moves) the archive commit over `old` (`None`: the first) that indexes
    /// `batch` besides what `old` indexes, a name in both taking `batch`'s tip, with `old`
    /// as its first parent and each of `batch`'s tips as a further one.
    pub fn write_archive(
        &self,
        old: Option<ObjectId>,
        batch: &BTreeMap<String, ObjectId>,
    ) -> Result<ObjectId, StoreError> {
        let mut index = match old {
            Some(old) => self.archived_at(old)?,
            None => BTreeMap::new(),
        };
        index.extend(batch.iter().map(|(n, t)| (n.clone(), *t)));
        let names: Vec<&str> = batch.keys().map(String::as_str).collect();
        let message = format!(
            "{ARCHIVE_SUBJECT}{} workflow{}\n\n{}\n",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join("\n")
        );
        let mut seen = std::collections::HashSet::new();
        let tips: Vec<ObjectId> = batch
            .values()
            .copied()
            .filter(|t| seen.insert(*t))
            .collect();
        let parents = old.into_iter().chain(self.bundled(tips)?).collect();
        self.archive_commit(&index, parents, &message)
    }

    /// `tips` as at most [`FANOUT`] commits that hold them all: the tips themselves when they
    /// are that few, otherwise bundle commits (the empty tree, the tips or lower bundles as
    /// parents), level upon level. Each bundle is dated as the newest commit it holds, not
    /// now: git's walks take commits newest first and stop soon after what they look for is
    /// found, so a bundle as old as what it holds is left unopened by a walk after anything
    /// newer (the connectivity check after a fetch), where one dated now was opened first.
    fn bundled(&self, mut tips: Vec<ObjectId>) -> Result<Vec<ObjectId>, StoreError> {
        if tips.len() <= FANOUT {
            return Ok(tips);
        }
        // Written, not assumed: a push packs what the bundles name, and git's built-in empty
        // tree is not an object every packer finds.
        let empty = self
            .repo()?
            .write_object(gix::objs::Tree::empty())
            .map_err(git_err)?
            .detach();
        while tips.len() > FANOUT {
            let mut level = Vec::with_capacity(tips.len().div_ceil(FANOUT));
            for chunk in tips.chunks(FANOUT) {
                let message = format!("{BUNDLE_SUBJECT}{} commits\n", chunk.len());
                let mut signature = self.signature()?;
                signature.time = self.newest(chunk)?.unwrap_or(signature.time);
                let mut commit = commit_object(empty, None, &signature, &message, Vec::new());
                commit.parents = chunk.iter().copied().collect();
                level.push(
                    self.repo()?
                        .write_object(&commit)
                        .map_err(git_err)?
                        .detach(),
                );
            }
            tips = level;
        }
        Ok(tips)
    }

    /// The newest committer time among `commits`; `None` for none.
    fn newest(&self, commits: &[ObjectId]) -> Result<Option<gix::date::Time>, StoreError> {
        let mut newest: Option<gix::date::Time> = None;
        for id in commits {
            let time = self
                .repo()?
                .find_commit(*id)
                .map_err(git_err)?
                .committer()
                .map_err(git_err)?
                .time()
                .map_err(git_err)?;
            if newest.is_none_or(|n| time.seconds > n.seconds) {
                newest = Some(time);
            }
        }
        Ok(newest)
    }

    /// Stores the archive commit indexing `index`, with `parents`, and its filter: a blob in
    /// its tree beside the index, named by a header of the commit (src/store/archive_filter.rs).
    fn archive_commit(
        &self,
        index: &BTreeMap<String, ObjectId>,
        parents: Vec<ObjectId>,
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        let mut entries: Vec<gix::objs::tree::Entry> = index
            .iter()
            .map(|(name, tip)| gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Commit.into(),
                filename: name.as_str().into(),
                oid: *tip,
            })
            .collect();
        let mut headers = Vec::new();
        if let Some(blob) = archive_filter::encode(index.keys().map(String::as_str)) {
            let blob = self.repo()?.write_blob(blob).map_err(git_err)?.detach();
            entries.push(gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: archive_filter::ENTRY.into(),
                oid: blob,
            });
            headers.push((archive_filter::HEADER.into(), blob.to_string().into()));
        }
        // git's order of tree entries (by name, a gitlink as a file), which `Entry`'s is.
        entries.sort();
        let tree = gix::objs::Tree { entries };
        let tree = self.repo()?.write_object(&tree).map_err(git_err)?.detach();
        let mut commit = commit_object(tree, None, &self.signature()?, message, headers);
        commit.parents = parents.into();
        Ok(self
            .repo()?
            .write_object(&commit)
            .map_err(git_err)?
            .detach())
    }

    /// As [`Store::write_archive`] over `old`, with `other` (another archive commit, whose
    /// index `batch` takes in, and whose restores `restored` it carries out) as one more
    /// parent: two clones' archives made one.
    pub fn write_archive_over(
        &self,
        old: ObjectId,
        batch: &BTreeMap<String, ObjectId>,
        restored: &[String],
        other: ObjectId,
    ) -> Result<ObjectId, StoreError> {
        let mut index = self.archived_at(old)?;
        index.extend(batch.iter().map(|(n, t)| (n.clone(), *t)));
        for name in restored {
            index.remove(name);
        }
        let message = format!(
            "{ARCHIVE_SUBJECT}{} workflow{} from another archive\n\n{}\n",
            batch.len(),
            if batch.len() == 1 { "" } else { "s" },
            batch
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        );
        self.archive_commit(&index, vec![old, other], &message)
    }

    /// Stores (no ref moves) the archive commit over `old` that no longer indexes `workflow`:
    /// its live ref is back (`archive --restore`), and this commit records that the archive
    /// let it go. `old` is its only parent: the restored history stays reachable from it.
    pub fn write_restore(&self, old: ObjectId, workflow: &str) -> Result<ObjectId, StoreError> {
        let mut index = self.archived_at(old)?;
        index.remove(workflow);
        let message = format!("{ARCHIVE_SUBJECT}restore {workflow}\n\n{workflow}\n");
        self.archive_commit(&index, vec![old], &message)
    }

    /// Moves the archive ref from `old` (`None`: it must not exist) to `new`, by
    /// compare-and-swap: a lost race is [`WriteError::Conflict`].
    pub fn move_archive(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<(), WriteError> {
        self.move_claim_ref(ARCHIVE, old, Some(new), message)
    }

    /// Deletes `workflow`'s live ref, which the archive holds at `tip`, by compare-and-swap
    /// (a ref that moved on since is [`WriteError::Conflict`] and stays), and forgets the
    /// tip marker that would otherwise call the ref deleted by something else.
    pub fn drop_archived_ref(&self, workflow: &str, tip: ObjectId) -> Result<(), WriteError> {
        let name = format!("{WORKFLOWS}{workflow}");
        self.move_claim_ref(&name, Some(tip), None, "archive")?;
        let _ = std::fs::remove_file(self.tip_marker(workflow));
        Ok(())
    }

    /// Deletes every live ref of `batch` (name → the tip the archive holds) in one
    /// transaction, each by compare-and-swap: all or none. One transaction rewrites
    /// `packed-refs` once, where a deletion each rewrote it per workflow (10,000 archived
    /// workflows took minutes). [`WriteError::Conflict`] when any one moved on: then nothing
    /// was deleted, and [`Store::drop_archived_ref`] one by one tells which.
    pub fn drop_archived_refs(&self, batch: &BTreeMap<String, ObjectId>) -> Result<(), WriteError> {
        use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
        if batch.is_empty() {
            return Ok(());
        }
        if let Some(git) = self.ref_commands()? {
            let mut input = String::from("start\n");
            for (workflow, tip) in batch {
                input.push_str(&format!("delete {WORKFLOWS}{workflow} {tip}\n"));
            }
            input.push_str("prepare\ncommit\n");
            git.git(&["update-ref", "--stdin"], input.as_bytes(), &[])
                .map_err(|_| WriteError::Conflict)?;
        } else {
            let mut edits = Vec::with_capacity(batch.len());
            for (workflow, tip) in batch {
                let name = gix::refs::FullName::try_from(format!("{WORKFLOWS}{workflow}"))
                    .map_err(git_err)?;
                edits.push(RefEdit {
                    change: Change::Delete {
                        expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(*tip)),
                        log: RefLog::AndReference,
                    },
                    name,
                    deref: false,
                });
            }
            let signature = self.signature()?;
            let mut time_buf = gix::date::parse::TimeBuf::default();
            // Any failure (a ref that moved on, a lock held) leaves every ref as it was: the
            // caller then goes one by one, which names each.
            self.repo()?
                .edit_references_as(edits, Some(signature.to_ref(&mut time_buf)))
                .map_err(|_| WriteError::Conflict)?;
        }
        for workflow in batch.keys() {
            let _ = std::fs::remove_file(self.tip_marker(workflow));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;
    use pretty_assertions::assert_eq;

    /// `n` commits of their own (the empty tree, each its own message), as archived tips.
    fn tips(store: &Store, prefix: &str, n: usize) -> BTreeMap<String, ObjectId> {
        let empty = store
            .repo()
            .unwrap()
            .write_object(gix::objs::Tree::empty())
            .unwrap()
            .detach();
        (0..n)
            .map(|i| {
                let mut signature = store.signature().unwrap();
                signature.time.seconds = 1_000_000 + i64::try_from(i).unwrap();
                let commit = commit_object(
                    empty,
                    None,
                    &signature,
                    &format!("tip {prefix}{i}\n"),
                    Vec::new(),
                );
                let id = store
                    .repo()
                    .unwrap()
                    .write_object(&commit)
                    .unwrap()
                    .detach();
                (format!("{prefix}{i:04}"), id)
            })
            .collect()
    }

    /// Every commit an archive holds has at most [`FANOUT`] parents besides the archive before
    /// it, every archived tip stays reachable from it, and what reads the archive reads all.
    #[test]
    fn a_large_batch_is_held_through_bundles_of_bounded_fanout() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let small = tips(&store, "small-", 3);
        let first = store.write_archive(None, &small).unwrap();
        let parents = git(
            dir.path(),
            &["rev-list", "--parents", "-n", "1", &first.to_string()],
        );
        assert_eq!(
            parents
                .split(' ')
                .skip(1)
                .map(str::to_string)
                .collect::<Vec<_>>(),
            small.values().map(ToString::to_string).collect::<Vec<_>>(),
            "a batch of FANOUT tips or fewer: the tips themselves are the further parents"
        );

        let big = tips(&store, "big-", FANOUT * FANOUT + 5);
        let second = store.write_archive(Some(first), &big).unwrap();
        let second_hex = second.to_string();
        let wide = git(
            dir.path(),
            &[
                "rev-list",
                &format!("--min-parents={}", FANOUT + 2),
                &second_hex,
            ],
        );
        assert_eq!(wide, "", "no commit with more than FANOUT + 1 parents");
        let reachable: std::collections::HashSet<String> =
            git(dir.path(), &["rev-list", &second_hex])
                .lines()
                .map(str::to_string)
                .collect();
        for tip in small.values().chain(big.values()) {
            assert!(reachable.contains(&tip.to_string()), "{tip} is reachable");
        }
        let first_parent = git(dir.path(), &["rev-parse", &format!("{second_hex}^1")]);
        assert_eq!(
            first_parent,
            first.to_string(),
            "the archive before stays the first parent"
        );
        assert_eq!(
            store.archived_at(second).unwrap().len(),
            small.len() + big.len()
        );
        // Bundles are not archive commits: the walk down first parents reads two batches.
        assert!(
            !store.is_archive_commit(
                ObjectId::from_hex(
                    git(dir.path(), &["rev-parse", &format!("{second_hex}^2")]).as_bytes()
                )
                .unwrap()
            )
        );
        // A bundle is as old as the newest commit it holds, so that git's newest-first walks
        // reach it last: the first level-two bundle holds the first FANOUT level-one bundles,
        // which hold the first FANOUT * FANOUT tips, made one second apart.
        let dated = |rev: &str| git(dir.path(), &["log", "-1", "--format=%ct", rev]);
        assert_eq!(
            dated(&format!("{second_hex}^2")),
            (1_000_000 + FANOUT * FANOUT - 1).to_string()
        );
        assert_eq!(
            dated(&format!("{second_hex}^2^1")),
            (1_000_000 + FANOUT - 1).to_string()
        );
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/archive", &second_hex],
        );
        assert_eq!(
            store.recently_archived(0).unwrap().len(),
            small.len() + big.len()
        );
        // The objects are whole: git's own check finds nothing missing.
        git(
            dir.path(),
            &["fsck", "--no-dangling", "--connectivity-only"],
        );
    }

    /// The loose object file of `id` in `dir`'s repository.
    fn loose(dir: &std::path::Path, id: ObjectId) -> std::path::PathBuf {
        let hex = id.to_string();
        dir.join(".git/objects").join(&hex[..2]).join(&hex[2..])
    }

    /// The filter blob archive commit `at` names, through its header, as git reads the commit.
    fn filter_blob(dir: &std::path::Path, at: ObjectId) -> ObjectId {
        let raw = git(dir, &["cat-file", "commit", &at.to_string()]);
        let line = raw
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{} ", archive_filter::HEADER)))
            .expect("the header");
        ObjectId::from_hex(line.as_bytes()).unwrap()
    }

    /// Every archive write puts the filter beside the index (a blob entry, named by the
    /// commit's header, that git's strictest check accepts); names it rules out are answered
    /// without the index: with the tree's object gone, they still are.
    #[test]
    fn names_the_filter_rules_out_are_answered_without_reading_the_index() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let batch = tips(&store, "f", 3);
        let at = store.write_archive(None, &batch).unwrap();
        let hex = at.to_string();
        let blob = filter_blob(dir.path(), at);
        let listing = git(dir.path(), &["ls-tree", &hex]);
        let mut expected: Vec<String> = batch
            .iter()
            .map(|(name, tip)| format!("160000 commit {tip}\t{name}"))
            .collect();
        expected.insert(0, format!("100644 blob {blob}\t{}", archive_filter::ENTRY));
        assert_eq!(listing, expected.join("\n"));
        assert_eq!(
            std::fs::read(
                dir.path()
                    .join(".git/objects")
                    .join(&blob.to_string()[..2])
                    .join(&blob.to_string()[2..])
            )
            .is_ok(),
            true,
            "the filter is stored"
        );
        git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
        // What reads the index sees the workflows only.
        assert_eq!(store.archived_at(at).unwrap(), batch);

        let asked = ["f0001", "live-1", "live-2"].into_iter().collect();
        let held = store.archived_among(at, &asked).unwrap();
        assert_eq!(held, [("f0001".to_string(), batch["f0001"])].into());

        let tree = store
            .repo()
            .unwrap()
            .find_commit(at)
            .unwrap()
            .tree_id()
            .unwrap()
            .detach();
        std::fs::remove_file(loose(dir.path(), tree)).unwrap();
        // A store of its own: the one above holds the tree it read in its object cache.
        let store = Store::discover(dir.path(), "main").unwrap();
        let ruled_out = ["live-1", "live-2", "l000"].into_iter().collect();
        assert_eq!(
            store.archived_among(at, &ruled_out).unwrap(),
            BTreeMap::new()
        );
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/archive", &hex],
        );
        assert_eq!(store.archived_tip("live-1").unwrap(), None);
        let held_only: std::collections::BTreeSet<&str> = ["f0002"].into_iter().collect();
        assert!(
            store.archived_among(at, &held_only).is_err(),
            "a name the filter may hold is looked up in the index, which is gone"
        );
    }

    /// A name the filter passes that the index does not hold (a false positive: made here,
    /// where by chance it is one in 430,000 per name) is looked up in the index, which says no.
    #[test]
    fn a_name_the_filter_passes_wrongly_is_settled_by_the_index() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let batch = tips(&store, "f", 2);
        let honest = store.write_archive(None, &batch).unwrap();
        let filter = archive_filter::encode(["f0000", "f0001", "ghost"].into_iter()).unwrap();
        let filter = store.repo().unwrap().write_blob(filter).unwrap().detach();
        let mut commit = store
            .repo()
            .unwrap()
            .find_commit(honest)
            .unwrap()
            .decode()
            .unwrap()
            .to_owned()
            .unwrap();
        commit.extra_headers = vec![(archive_filter::HEADER.into(), filter.to_string().into())];
        let at = store
            .repo()
            .unwrap()
            .write_object(&commit)
            .unwrap()
            .detach();
        assert!(
            archive_filter::Filter::decode(
                &store
                    .filter_of(&store.repo().unwrap().find_commit(at).unwrap())
                    .unwrap()
            )
            .unwrap()
            .may_hold("ghost")
        );
        let asked = ["ghost", "f0000", "other"].into_iter().collect();
        assert_eq!(
            store.archived_among(at, &asked).unwrap(),
            [("f0000".to_string(), batch["f0000"])].into()
        );
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/archive", &at.to_string()],
        );
        assert_eq!(store.archived_tip("ghost").unwrap(), None);
        assert_eq!(store.archived_tip("f0001").unwrap(), Some(batch["f0001"]));
    }

    /// An archive written by an older release (a flat index of gitlinks, no filter, no header)
    /// reads as it always did; the next write over it adds the filter.
    #[test]
    fn an_archive_without_a_filter_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let batch = tips(&store, "f", 3);
        let tree = gix::objs::Tree {
            entries: batch
                .iter()
                .map(|(name, tip)| gix::objs::tree::Entry {
                    mode: gix::objs::tree::EntryKind::Commit.into(),
                    filename: name.as_str().into(),
                    oid: *tip,
                })
                .collect(),
        };
        let tree = store.repo().unwrap().write_object(&tree).unwrap().detach();
        let mut commit = commit_object(
            tree,
            None,
            &store.signature().unwrap(),
            "archive: 3 workflows\n",
            Vec::new(),
        );
        commit.parents = batch.values().copied().collect();
        let old = store
            .repo()
            .unwrap()
            .write_object(&commit)
            .unwrap()
            .detach();
        git(
            dir.path(),
            &["update-ref", "refs/orchestrator/archive", &old.to_string()],
        );
        let asked = ["f0000", "f0002", "live"].into_iter().collect();
        assert_eq!(
            store.archived_among(old, &asked).unwrap(),
            [
                ("f0000".to_string(), batch["f0000"]),
                ("f0002".to_string(), batch["f0002"])
            ]
            .into()
        );
        assert_eq!(store.archived_tip("f0001").unwrap(), Some(batch["f0001"]));
        assert_eq!(store.archived_tip("live").unwrap(), None);

        let more = tips(&store, "g", 1);
        let new = store.write_archive(Some(old), &more).unwrap();
        let blob = filter_blob(dir.path(), new);
        let listed = git(
            dir.path(),
            &["ls-tree", &new.to_string(), archive_filter::ENTRY],
        );
        assert_eq!(
            listed,
            format!("100644 blob {blob}\t{}", archive_filter::ENTRY)
        );
        let mut all = batch.clone();
        all.extend(more.clone());
        let filter = store
            .filter_of(&store.repo().unwrap().find_commit(new).unwrap())
            .unwrap();
        assert_eq!(
            filter,
            archive_filter::encode(all.keys().map(String::as_str)).unwrap()
        );
        assert_eq!(store.archived_at(new).unwrap(), all);
        // A restore's commit and one made of two archives carry it too, without the names
        // they let go.
        let restored = store.write_restore(new, "f0001").unwrap();
        all.remove("f0001");
        let filter = store
            .filter_of(&store.repo().unwrap().find_commit(restored).unwrap())
            .unwrap();
        assert_eq!(
            filter,
            archive_filter::encode(all.keys().map(String::as_str)).unwrap()
        );
        let other = store.write_archive(None, &tips(&store, "h", 1)).unwrap();
        let merged = store
            .write_archive_over(restored, &tips(&store, "h", 1), &[], other)
            .unwrap();
        all.extend(tips(&store, "h", 1));
        let filter = store
            .filter_of(&store.repo().unwrap().find_commit(merged).unwrap())
            .unwrap();
        assert_eq!(
            filter,
            archive_filter::encode(all.keys().map(String::as_str)).unwrap()
        );
    }
}
