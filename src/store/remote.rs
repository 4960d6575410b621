//! The refs that carry state between clones (docs/refs.md, "Sharing through a remote"): the fetch refspecs, the
//! remote-tracking copies under `refs/orchestrator/remotes/<remote>/` and
//! `refs/notes/remotes/<remote>/orchestrator`, backups of tips that `sync --take` replaced,
//! how two workflow tips relate, and the line-union merge of two notes histories.

use std::collections::{BTreeMap, HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::note::plumbing as notes;
use gix::refs::FullName;

use super::names::{ARCHIVE, CLAIMS, REMOTES, WORKFLOWS};
use super::{NOTES_REF, Store, StoreError, WriteError, git_err};

const BACKUPS: &str = "refs/orchestrator/backups/";

/// The fetch refspecs `init` and `sync` add for `remote`: non-forced, into the
/// remote-tracking namespace, never onto local state (docs/refs.md, "Fetch refspecs").
///
/// The notes refspec is a pattern (`orchestrator*`), not the exact one docs/refs.md describes
/// `refs/notes/orchestrator`: git fails the whole `git fetch` with "couldn't find remote
/// ref" when an exact configured source is missing, which it is on every remote until the
/// first notes are pushed.
///
/// The claims refspec alone is forced: a claim is replaced, never extended (a renewal, a
/// takeover, a new claim after a release are each a commit of their own), so a non-forced
/// fetch would fail the whole `git fetch` on the first renewal. It writes only the
/// remote-tracking copies, which mirror the remote, as git's own `+refs/heads/*` does.
pub fn fetch_refspecs(remote: &str) -> Vec<String> {
    vec![
        format!("{WORKFLOWS}*:{REMOTES}{remote}/workflows/*"),
        format!("+{CLAIMS}*:{REMOTES}{remote}/claims/*"),
        format!("{NOTES_REF}*:{}*", tracking_notes_ref(remote)),
    ]
}

/// The non-forced claims refspec earlier releases added, which `sync` replaces: see
/// [`fetch_refspecs`].
pub fn unforced_claims_refspec(remote: &str) -> String {
    format!("{CLAIMS}*:{REMOTES}{remote}/claims/*")
}

/// The refspecs `sync` fetches with. Forced, unlike [`fetch_refspecs`]: they write only the
/// remote-tracking copies, which must show the remote as it is, even after another clone
/// replaced a tip with `sync --take local`.
pub fn sync_refspecs(remote: &str) -> Vec<String> {
    let mut specs: Vec<String> = fetch_refspecs(remote)
        .into_iter()
        .map(|spec| format!("+{}", spec.trim_start_matches('+')))
        .collect();
    specs.push(format!("+refs/heads/*:refs/remotes/{remote}/*"));
    // The run records (docs/board.md, "The ledger"): fetched by `sync` only, not by a plain
    // `git fetch`, whose refspecs `init` writes.
    specs.push(format!(
        "+refs/orchestrator/runs/*:{}*",
        super::runs::tracking_runs_prefix(remote)
    ));
    // A pattern: an exact source the remote lacks (no archive yet) fails the whole fetch.
    specs.push(format!(
        "+{}*:{}*",
        ARCHIVE.trim_end_matches('e'),
        tracking_archive_ref(remote).trim_end_matches('e')
    ));
    specs
}

/// The refs a fetch from `remote` that does not fetch the archive leaves out of its
/// connectivity check: the archive and the remote's copy of it, whose histories grow with
/// every finished workflow (docs/refs.md, "The archive"), as a boundary cost a walk over the
/// archive commit's parents each time. Not for `sync`'s fetch, which fetches the archive: its
/// tip, hidden, would be the start of the walk and take in every archived history.
pub fn fetch_hidden_refs(remote: &str) -> Vec<String> {
    vec![ARCHIVE.to_string(), tracking_archive_ref(remote)]
}

/// `refs/orchestrator/remotes/<remote>/archive`: the remote's archive, as last fetched.
pub fn tracking_archive_ref(remote: &str) -> String {
    format!("{REMOTES}{remote}/archive")
}

/// The exact notes refspec (docs/refs.md, "Fetch refspecs") spells out, which breaks `git fetch` while the remote
/// has no notes (see [`fetch_refspecs`]).
pub fn exact_notes_refspec(remote: &str) -> String {
    format!("{NOTES_REF}:{}", tracking_notes_ref(remote))
}

/// True when fetching with `spec` writes onto this clone's own workflow state or notes:
/// `+refs/*:refs/*` (what `clone --mirror` sets), `refs/notes/*:refs/notes/*`, and the like.
pub fn writes_local_state(spec: &str) -> bool {
    const LOCAL: [&str; 3] = [WORKFLOWS, CLAIMS, NOTES_REF];
    let Some((_, destination)) = spec.split_once(':') else {
        return false;
    };
    match destination.strip_suffix('*') {
        // `refs/*` covers all of it; `refs/orchestrator/workflows/a*` some of it.
        Some(prefix) => LOCAL
            .iter()
            .any(|local| local.starts_with(prefix) || prefix.starts_with(local)),
        None => LOCAL.iter().any(|local| {
            destination == local.trim_end_matches('/') || destination.starts_with(local)
        }),
    }
}

/// True when `text` names one of the refs that carry state (`refs/orchestrator/…`,
/// `refs/notes/…`).
pub fn is_state_ref(text: &str) -> bool {
    text.contains("refs/orchestrator/") || text.contains("refs/notes/")
}

/// True when `name` is a ref under `refs/orchestrator/` or `refs/notes/`: its commits are
/// workflow transitions or notes, never checkpoint commits.
pub fn is_state_ref_name(name: &str) -> bool {
    name.starts_with("refs/orchestrator/") || name.starts_with("refs/notes/")
}

/// `git log --glob` patterns for every ref that holds workflow transitions: the workflows,
/// their remote-tracking copies and the backups of their tips. A transition's subject
/// (`checkpoint: EXECUTING_TDD -> …`) reads like a checkpoint commit's; being reachable
/// from these is what tells it apart. The archive and the remotes' copies of it hold the
/// finished workflows' (a bracket, not a bare name: git takes a `--glob` without a wildcard
/// for a directory).
pub fn transition_history_globs() -> [String; 5] {
    [
        format!("{WORKFLOWS}*"),
        format!("{REMOTES}*/workflows/*"),
        format!("{BACKUPS}*/state-*"),
        format!("{}[e]", ARCHIVE.trim_end_matches('e')),
        format!("{REMOTES}*/archiv[e]"),
    ]
}

/// `refs/orchestrator/remotes/<remote>/workflows/<workflow>`.
pub fn tracking_ref(remote: &str, workflow: &str) -> String {
    format!("{REMOTES}{remote}/workflows/{workflow}")
}

/// `refs/notes/remotes/<remote>/orchestrator`.
pub fn tracking_notes_ref(remote: &str) -> String {
    format!("refs/notes/remotes/{remote}/orchestrator")
}

/// `refs/remotes/<remote>/<branch>`, where `sync` fetches a PR branch.
pub fn tracking_branch_ref(remote: &str, branch: &str) -> String {
    format!("refs/remotes/{remote}/{branch}")
}

/// A local ref `sync` moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalRef<'a> {
    Workflow(&'a str),
    Notes,
    Branch(&'a str),
}

impl LocalRef<'_> {
    pub fn name(&self) -> String {
        match self {
            LocalRef::Workflow(workflow) => format!("{WORKFLOWS}{workflow}"),
            LocalRef::Notes => NOTES_REF.to_string(),
            LocalRef::Branch(branch) => format!("refs/heads/{branch}"),
        }
    }
}

/// What a backup ref keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backup {
    State,
    Branch,
}

/// How a local workflow tip relates to another (a remote's), along their first-parent lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relation {
    /// Transitions the local tip has that the other has not.
    pub ahead: usize,
    /// Transitions the other tip has that the local one has not.
    pub behind: usize,
    /// The last transition both share; `None` when the histories are unrelated.
    pub base: Option<ObjectId>,
}

/// How a local ref stands against another (a remote's copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    Equal,
    /// The local one is an ancestor of the other.
    Behind,
    /// The other is an ancestor of the local one.
    Ahead,
    Diverged,
}

impl Standing {
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Equal => "equal",
            Standing::Behind => "behind",
            Standing::Ahead => "ahead",
            Standing::Diverged => "diverged",
        }
    }
}

impl Relation {
    /// Unrelated histories have diverged too.
    pub fn standing(&self) -> Standing {
        match (self.base, self.ahead, self.behind) {
            (Some(_), 0, 0) => Standing::Equal,
            (Some(_), 0, _) => Standing::Behind,
            (Some(_), _, 0) => Standing::Ahead,
            _ => Standing::Diverged,
        }
    }
}

/// True when `error`'s cause is a file that is no longer there.
fn vanished(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
        {
            return true;
        }
        cause = e.source();
    }
    false
}

/// How far [`Store::relation`] walks back on each side before calling two histories
/// unrelated.
const MAX_WALK: usize = 1_000_000;

impl Store {
    pub(super) fn refs_under(
        &self,
        prefix: &str,
    ) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        if let Some(git) = self.ref_commands()? {
            return Ok(self
                .listed_refs(git, prefix)?
                .into_iter()
                .filter_map(|(name, target)| match target {
                    super::refs::Listed::Object(id) => {
                        Some((name.strip_prefix(prefix)?.to_string(), id))
                    }
                    super::refs::Listed::Symbolic(_) => None,
                })
                .collect());
        }
        if let Some(found) = self.loose_refs_under(prefix) {
            return Ok(found);
        }
        let platform = self.repo()?.references().map_err(git_err)?;
        let mut out = BTreeMap::new();
        for reference in platform.prefixed(prefix).map_err(git_err)? {
            let reference = match reference {
                Ok(reference) => reference,
                // A loose ref listed and deleted before it was read (another process
                // releasing a claim, a sync pruning a copy): not there, as it now is not.
                Err(e) if vanished(&e) => continue,
                Err(e) => return Err(git_err(e)),
            };
            let name = reference.name().as_bstr().to_str_lossy().into_owned();
            if let (Some(rest), Some(id)) = (
                name.strip_prefix(prefix),
                reference.target().try_id().map(ToOwned::to_owned),
            ) {
                out.insert(rest.to_string(), id);
            }
        }
        Ok(out)
    }

    /// The commit a ref (a full name) points at, or `None` when it does not exist.
    pub fn ref_tip(&self, name: &str) -> Result<Option<ObjectId>, StoreError> {
        self.direct_ref(name)
    }

    /// Every workflow in this clone, by name, with its tip.
    pub fn local_workflows(&self) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(WORKFLOWS)
    }

    /// Every workflow `remote` had when it was last fetched, by name, with its tip.
    pub fn tracking_workflows(
        &self,
        remote: &str,
    ) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(&format!("{REMOTES}{remote}/workflows/"))
    }

    /// This workflow's tip on each remote it was fetched from, by remote name.
    pub fn tracking_tips(&self) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        let suffix = format!("/workflows/{}", self.workflow);
        Ok(self
            .refs_under(REMOTES)?
            .into_iter()
            .filter_map(|(rest, id)| Some((rest.strip_suffix(&suffix)?.to_string(), id)))
            .filter(|(remote, _)| !remote.is_empty())
            .collect())
    }

    /// The local tip of `reference`, or `None` when it does not exist.
    pub fn local_tip(&self, reference: LocalRef) -> Result<Option<ObjectId>, StoreError> {
        self.ref_tip(&reference.name())
    }

    /// The notes as `remote` had them when last fetched.
    pub fn tracking_notes(&self, remote: &str) -> Result<Option<ObjectId>, StoreError> {
        self.ref_tip(&tracking_notes_ref(remote))
    }

    /// `branch` as `remote` had it when last fetched.
    pub fn tracking_branch(
        &self,
        remote: &str,
        branch: &str,
    ) -> Result<Option<ObjectId>, StoreError> {
        self.ref_tip(&tracking_branch_ref(remote, branch))
    }

    /// How `local` relates to `other`, following first parents (workflow histories are
    /// straight lines). Both sides are walked in turn, so the cost is the distance to the
    /// fork, not the length of the history.
    pub fn relation(&self, local: ObjectId, other: ObjectId) -> Result<Relation, StoreError> {
        if local == other {
            return Ok(Relation {
                ahead: 0,
                behind: 0,
                base: Some(local),
            });
        }
        let parent = |id: ObjectId| -> Result<Option<ObjectId>, StoreError> {
            let bytes = self
                .object_of_kind(id, gix::objs::Kind::Commit)
                .map_err(StoreError::Git)?;
            Ok(
                gix::objs::CommitRefIter::from_bytes(&bytes, self.repo.object_hash())
                    .parent_ids()
                    .next(),
            )
        };
        // Each side: how far back every commit it passed lies.
        let mut seen: [HashMap<ObjectId, usize>; 2] = [HashMap::new(), HashMap::new()];
        let mut next = [Some(local), Some(other)];
        for depth in 0..MAX_WALK {
            if next.iter().all(Option::is_none) {
                break;
            }
            for side in 0..2 {
                let Some(id) = next[side] else { continue };
                if let Some(&there) = seen[1 - side].get(&id) {
                    let (ahead, behind) = if side == 0 {
                        (depth, there)
                    } else {
                        (there, depth)
                    };
                    return Ok(Relation {
                        ahead,
                        behind,
                        base: Some(id),
                    });
                }
                seen[side].insert(id, depth);
                next[side] = parent(id)?;
            }
        }
        Ok(Relation {
            ahead: seen[0].len(),
            behind: seen[1].len(),
            base: None,
        })
    }

    /// Moves a local ref from `expected` (`None`: it must not exist) to `new`: a
    /// compare-and-swap, logged with `message`.
    pub fn move_ref(
        &self,
        reference: LocalRef,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<(), WriteError> {
        let name = FullName::try_from(reference.name()).map_err(git_err)?;
        self.update_ref(
            &name,
            expected,
            new,
            format!("git-orchestrate: {message}"),
            &self.signature()?,
        )
    }

    /// Keeps `tip` under `refs/orchestrator/backups/<workflow>/<state|branch>-<id>` before
    /// `sync --take` moves away from it, and returns that ref's name. Keeping the same tip
    /// twice is not an error.
    pub fn backup(
        &self,
        workflow: &str,
        kind: Backup,
        tip: ObjectId,
        message: &str,
    ) -> Result<String, WriteError> {
        let what = match kind {
            Backup::State => "state",
            Backup::Branch => "branch",
        };
        let name = format!("{BACKUPS}{workflow}/{what}-{tip}");
        if self.ref_tip(&name)? == Some(tip) {
            return Ok(name);
        }
        let full = FullName::try_from(name.clone()).map_err(git_err)?;
        self.update_ref(
            &full,
            None,
            tip,
            format!("git-orchestrate: {message}"),
            &self.signature()?,
        )?;
        Ok(name)
    }

    /// Writes the union of two notes histories as a commit with both as parents, and returns
    /// it; the ref is not moved. A commit annotated on one side only keeps its note; a
    /// commit annotated on both gets the local lines, then the other side's lines that the
    /// local note lacks.
    pub fn merge_notes(&self, local: ObjectId, other: ObjectId) -> Result<ObjectId, StoreError> {
        let tree_of = |commit: ObjectId| -> Result<ObjectId, StoreError> {
            Ok(self
                .repo()?
                .find_commit(commit)
                .map_err(git_err)?
                .tree_id()
                .map_err(git_err)?
                .detach())
        };
        let mut merged = notes::State::new(tree_of(local)?, self.repo()?).map_err(git_err)?;
        for (annotated, theirs) in self.notes_in(tree_of(other)?)? {
            let ours = merged.get(&annotated, self.repo()?).map_err(git_err)?;
            let blob = match ours {
                Some(ours) if ours == theirs => continue,
                Some(ours) => {
                    let text = union_lines(&self.blob_text(ours)?, &self.blob_text(theirs)?);
                    self.repo()?
                        .write_blob(text.as_bytes())
                        .map_err(git_err)?
                        .detach()
                }
                None => theirs,
            };
            merged
                .edit(annotated, Some(blob), self.repo()?)
                .map_err(git_err)?;
        }
        let tree = merged.write(self.repo()?).map_err(git_err)?;
        let signature = self.signature()?;
        let commit = gix::objs::Commit {
            tree,
            parents: [local, other].into_iter().collect(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: "git-orchestrate: merge notes (union of lines)".into(),
            extra_headers: Vec::new(),
        };
        Ok(self
            .repo()?
            .write_object(&commit)
            .map_err(git_err)?
            .detach())
    }

    fn blob_text(&self, id: ObjectId) -> Result<String, StoreError> {
        Ok(self
            .repo()?
            .find_blob(id)
            .map_err(git_err)?
            .data
            .to_str_lossy()
            .into_owned())
    }

    /// Every note in a notes tree: the annotated object and its note blob. The tree may fan
    /// out (`ab/cdef…`) as git does once there are many notes.
    fn notes_in(&self, tree: ObjectId) -> Result<Vec<(ObjectId, ObjectId)>, StoreError> {
        let mut out = Vec::new();
        let mut pending = vec![(tree, String::new())];
        let hex_len = self.repo.object_hash().len_in_hex();
        while let Some((tree, prefix)) = pending.pop() {
            let tree = self.repo()?.find_tree(tree).map_err(git_err)?;
            for entry in tree.decode().map_err(git_err)?.entries {
                let path = format!("{prefix}{}", entry.filename.to_str_lossy());
                if entry.mode.is_tree() {
                    if path.len() < hex_len {
                        pending.push((entry.oid.to_owned(), path));
                    }
                } else if path.len() == hex_len
                    && let Ok(annotated) = ObjectId::from_hex(path.as_bytes())
                {
                    out.push((annotated, entry.oid.to_owned()));
                }
            }
        }
        Ok(out)
    }
}

/// `ours`, then each line of `theirs` that `ours` lacks, in order, each line once.
fn union_lines(ours: &str, theirs: &str) -> String {
    let mut seen = HashSet::new();
    let mut out = String::new();
    for line in ours.lines().chain(theirs.lines()) {
        if seen.insert(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;
    use crate::workflow::State;
    use pretty_assertions::assert_eq;

    #[test]
    fn refspecs_that_overwrite_local_state_are_recognised() {
        for bad in [
            "+refs/*:refs/*",
            "+refs/notes/*:refs/notes/*",
            "+refs/orchestrator/*:refs/orchestrator/*",
            "refs/notes/orchestrator:refs/notes/orchestrator",
            "+refs/orchestrator/workflows/*:refs/orchestrator/workflows/*",
            "x/*:refs/orchestrator/workflows/a*",
        ] {
            assert!(writes_local_state(bad), "{bad}");
        }
        for fine in fetch_refspecs("origin")
            .into_iter()
            .chain(sync_refspecs("origin"))
            .chain([
                "+refs/heads/*:refs/remotes/origin/*".to_string(),
                exact_notes_refspec("origin"),
                "refs/heads/main".to_string(),
            ])
        {
            assert!(!writes_local_state(&fine), "{fine}");
        }
    }

    #[test]
    fn lines_are_united_in_order_once() {
        assert_eq!(union_lines("a\nb\n", "b\nc\na\nd"), "a\nb\nc\nd\n");
        assert_eq!(union_lines("", "x\n"), "x\n");
    }

    /// Adds `n` transitions to workflow `name`, starting from `from` (or its tip).
    fn chain(dir: &std::path::Path, name: &str, from: Option<ObjectId>, n: usize) -> ObjectId {
        let store = Store::discover(dir, name).unwrap();
        if let Some(from) = from {
            git(dir, &["update-ref", &store.ref_name(), &from.to_string()]);
        }
        let state = State::new(Some("main".into()));
        for i in 0..n {
            // Distinct bodies: equal transitions made in the same second are one object.
            let summary = format!("{name} {i}");
            let snapshot = store.read().unwrap();
            store
                .write(
                    snapshot.as_ref(),
                    &super::super::TransitionWrite {
                        event: "test",
                        from: None,
                        state: &state,
                        plan: &crate::workflow::PlanChange::Keep,
                        output_log: super::super::FileChange::Keep,
                        escalation: super::super::FileChange::Keep,
                        review: super::super::FileChange::Keep,
                        step: None,
                        summary: &summary,
                        human: None,
                        signed: None,
                        input: None,
                        pinned_trees: super::super::FileChange::Keep,
                    },
                )
                .unwrap();
        }
        store.tip().unwrap().unwrap()
    }

    #[test]
    fn relations_count_transitions_to_the_fork() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet"]);
        let store = Store::discover(dir.path(), "main").unwrap();
        let base = chain(dir.path(), "a", None, 3);
        let ours = chain(dir.path(), "b", Some(base), 2);
        let theirs = chain(dir.path(), "c", Some(base), 4);
        let rel = |a, b| store.relation(a, b).unwrap();
        assert_eq!(
            rel(ours, theirs),
            Relation {
                ahead: 2,
                behind: 4,
                base: Some(base)
            }
        );
        assert_eq!(
            rel(base, theirs),
            Relation {
                ahead: 0,
                behind: 4,
                base: Some(base)
            }
        );
        assert_eq!(
            rel(theirs, base),
            Relation {
                ahead: 4,
                behind: 0,
                base: Some(base)
            }
        );
        assert_eq!(rel(ours, ours).standing(), Standing::Equal);
        assert_eq!(rel(base, theirs).standing(), Standing::Behind);
        assert_eq!(rel(theirs, base).standing(), Standing::Ahead);
        assert_eq!(rel(ours, theirs).standing(), Standing::Diverged);
        let unrelated = chain(dir.path(), "d", None, 2);
        assert_eq!(
            rel(ours, unrelated),
            Relation {
                ahead: 5,
                behind: 2,
                base: None
            }
        );
        assert_eq!(rel(ours, unrelated).standing(), Standing::Diverged);
    }

    #[test]
    fn notes_merge_by_union_and_git_reads_the_result() {
        let (dir, head) = crate::test_git::repo_with_a_commit();
        let store = Store::discover(dir.path(), "main").unwrap();
        git(
            dir.path(),
            &["commit", "--quiet", "--allow-empty", "-m", "second"],
        );
        let second = git(dir.path(), &["rev-parse", "HEAD"]).trim().to_string();
        store.add_note_line(&head, "{\"shared\":1}").unwrap();
        let fork = store.local_tip(LocalRef::Notes).unwrap().unwrap();
        store.add_note_line(&head, "{\"ours\":1}").unwrap();
        let ours = store.local_tip(LocalRef::Notes).unwrap().unwrap();
        store
            .move_ref(LocalRef::Notes, Some(ours), fork, "test")
            .unwrap();
        store.add_note_line(&head, "{\"theirs\":1}").unwrap();
        store.add_note_line(&second, "{\"theirs\":2}").unwrap();
        let theirs = store.local_tip(LocalRef::Notes).unwrap().unwrap();

        let merged = store.merge_notes(ours, theirs).unwrap();
        store
            .move_ref(LocalRef::Notes, Some(theirs), merged, "test")
            .unwrap();
        let show = |rev: &str| git(dir.path(), &["notes", "--ref=orchestrator", "show", rev]);
        assert_eq!(show(&head), "{\"shared\":1}\n{\"ours\":1}\n{\"theirs\":1}");
        assert_eq!(show(&second), "{\"theirs\":2}");
        let parents = git(
            dir.path(),
            &["rev-list", "--parents", "-n1", &merged.to_string()],
        );
        assert_eq!(
            parents.split_whitespace().skip(1).collect::<Vec<_>>(),
            vec![ours.to_string(), theirs.to_string()]
        );
    }
}
