//! The main branch's first-parent line since a commit, and the main-branch commits the
//! workflows' merges made: what tells a move of main that no workflow made
//! (docs/integrity.md, "main moves only through a workflow or a human").

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::names::REMOTES;
use super::names::WORKFLOWS;
use super::snapshot::{STATE_FILE, TICKET_FILE};
use super::{Store, StoreError, git_err};

/// main's first-parent commits after a commit, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MainLine {
    /// main's tip.
    pub tip: String,
    /// `(commit, subject)` of each commit on the way, the tip first.
    pub commits: Vec<(String, String)>,
    /// False when the walk did not come to the commit: main's history no longer holds it
    /// (rewritten, reset), or it lies further back than the walk goes.
    pub reached: bool,
}

impl Store {
    /// The tips of every workflow here (the archived ones too) and of every remote's as last
    /// fetched.
    pub fn all_workflow_tips(&self) -> Result<Vec<(String, ObjectId)>, StoreError> {
        let mut tips: Vec<(String, ObjectId)> = self.refs_under(WORKFLOWS)?.into_iter().collect();
        tips.extend(
            self.refs_under(REMOTES)?
                .into_iter()
                .filter_map(|(name, id)| {
                    let (_, workflow) = name.split_once("/workflows/")?;
                    Some((workflow.to_string(), id))
                }),
        );
        // The finished ones too: what their chains vouch for stands after they are archived.
        let live: std::collections::HashSet<ObjectId> = tips.iter().map(|(_, t)| *t).collect();
        tips.extend(
            self.archived_workflows()?
                .into_iter()
                .filter(|(_, tip)| !live.contains(tip)),
        );
        Ok(tips)
    }

    /// The first-parent commits of `refs/heads/<branch>` after `since`, at most `limit` of them;
    /// `None` when the branch does not exist.
    pub fn first_parents_since(
        &self,
        branch: &str,
        since: &str,
        limit: usize,
    ) -> Result<Option<MainLine>, StoreError> {
        let Some(tip) = self.branch_tip(branch)? else {
            return Ok(None);
        };
        let since = ObjectId::from_hex(since.as_bytes()).ok();
        let mut line = MainLine {
            tip: tip.to_string(),
            commits: Vec::new(),
            reached: false,
        };
        let mut next = Some(tip);
        while let Some(id) = next {
            if Some(id) == since {
                line.reached = true;
                break;
            }
            if line.commits.len() >= limit {
                break;
            }
            let Ok(commit) = self.repo()?.find_commit(id) else {
                break;
            };
            let subject = commit
                .message_raw_sloppy()
                .lines()
                .next()
                .map(|l| l.to_str_lossy().into_owned())
                .unwrap_or_default();
            line.commits.push((id.to_string(), subject));
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(Some(line))
    }

    /// The commit time of `commit` (seconds since the epoch), when it can be read.
    pub fn commit_time(&self, commit: &str) -> Option<i64> {
        let id = ObjectId::from_hex(commit.as_bytes()).ok()?;
        let commit = self.repo().ok()?.find_commit(id).ok()?;
        commit.time().ok().map(|t| t.seconds)
    }

    /// The merges the workflows recorded (a `merge` transition's `main_tip`, a ticket's
    /// completion's `finished.merge`), and the main tips humans accounted for (a `repin`
    /// transition's), in every
    /// workflow here and every remote's as last fetched, walking each history back only to
    /// its first transition older than `not_before` (seconds since the epoch).
    pub fn merge_records(&self, not_before: i64) -> Result<Vec<MergeRecord>, StoreError> {
        let mut tips: Vec<(String, ObjectId)> = self.refs_under(WORKFLOWS)?.into_iter().collect();
        tips.extend(
            self.refs_under(REMOTES)?
                .into_iter()
                .filter(|(name, _)| name.contains("/workflows/")),
        );
        // A workflow archived since holds its merges in the archive (docs/refs.md, "The
        // archive"); one archived before the window made none in it.
        tips.extend(self.recently_archived(not_before)?);
        // A landing in flight (docs/integrity.md, "A landing in flight"): its record is a
        // transition on the chain's tip that the ref has not reached yet (the push went first,
        // or main moved here first); its merge is that workflow's while the chain still stands
        // where the landing began. The record replays clean or counts for nothing, as any.
        for (workflow, landing) in self.landings() {
            let (Ok(old), Ok(new)) = (
                ObjectId::from_hex(landing.old.as_bytes()),
                ObjectId::from_hex(landing.new.as_bytes()),
            ) else {
                continue;
            };
            let at_old = tips
                .iter()
                .any(|(name, tip)| *name == workflow && *tip == old);
            let on_old = self
                .repo()?
                .find_commit(new)
                .ok()
                .is_some_and(|c| c.parent_ids().next().map(|p| p.detach()) == Some(old));
            if at_old && on_old {
                tips.push((workflow, new));
            }
        }
        let mut out = Vec::new();
        for (name, tip) in tips {
            let mut next = Some(tip);
            while let Some(id) = next {
                let commit = self.repo()?.find_commit(id).map_err(git_err)?;
                next = commit.parent_ids().next().map(|p| p.detach());
                if commit.time().map_or(true, |t| t.seconds < not_before) {
                    break;
                }
                let message = commit.message_raw_sloppy();
                let repin = message.starts_with(b"repin: ");
                // A ticket's merge is recorded by its completion (docs/tickets.md): a merge a
                // workflow made, as a TDD workflow's `merge` is.
                let ticket = message.starts_with(b"complete-ticket: ");
                if !repin && !ticket && !message.starts_with(b"merge: ") {
                    continue;
                }
                let tree = commit.tree().map_err(git_err)?;
                let file = if ticket { TICKET_FILE } else { STATE_FILE };
                let Some(entry) = tree.find_entry(file) else {
                    continue;
                };
                let blob = self.repo()?.find_blob(entry.object_id()).map_err(git_err)?;
                #[derive(serde::Deserialize)]
                struct MainTip {
                    main_tip: Option<String>,
                }
                #[derive(serde::Deserialize)]
                struct Finished {
                    merge: Option<String>,
                }
                #[derive(serde::Deserialize)]
                struct Completed {
                    finished: Option<Finished>,
                }
                let main = if ticket {
                    serde_json::from_slice::<Completed>(&blob.data)
                        .ok()
                        .and_then(|c| c.finished)
                        .and_then(|f| f.merge)
                } else {
                    serde_json::from_slice::<MainTip>(&blob.data)
                        .ok()
                        .and_then(|t| t.main_tip)
                };
                if let Some(main) = main {
                    out.push(MergeRecord {
                        workflow: name.clone(),
                        tip,
                        transition: id,
                        main,
                        repin,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// A merge a workflow recorded (the main commit it made), or a main tip a human accounted for
/// with `repin`, and where its chain says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeRecord {
    /// The workflow's name (`<remote>/workflows/<name>` for a remote's copy).
    pub workflow: String,
    /// The chain's tip, and the `merge` transition in it.
    pub tip: ObjectId,
    pub transition: ObjectId,
    pub main: String,
    /// A human's `repin`, which accounts for `main` and every commit before it, rather than a
    /// merge, which accounts for the merge commit alone.
    pub repin: bool,
}
