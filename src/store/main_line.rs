//! The main branch's first-parent line since a commit, and the main-branch commits the
//! workflows' merges made: what tells a move of main that no workflow made
//! (docs/integrity.md, "main moves only through a workflow or a human").

use std::collections::HashSet;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::remote::REMOTES;
use super::{STATE_FILE, Store, StoreError, WORKFLOWS, git_err};

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
    /// The tips of every workflow here and of every remote's as last fetched.
    pub fn all_workflow_tips(&self) -> Result<Vec<ObjectId>, StoreError> {
        let mut tips: Vec<ObjectId> = self.refs_under(WORKFLOWS)?.into_values().collect();
        tips.extend(
            self.refs_under(REMOTES)?
                .into_iter()
                .filter(|(name, _)| name.contains("/workflows/"))
                .map(|(_, id)| id),
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
        let Some(mut reference) = self
            .repo
            .try_find_reference(format!("refs/heads/{branch}").as_str())
            .map_err(git_err)?
        else {
            return Ok(None);
        };
        let tip = reference.peel_to_commit().map_err(git_err)?.id;
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
            let Ok(commit) = self.repo.find_commit(id) else {
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

    /// The main-branch commits that workflows' merges made (`main_tip` after each `merge`
    /// transition), of every workflow here and every remote's as last fetched.
    pub fn workflow_merges(&self) -> Result<HashSet<String>, StoreError> {
        let tips = self.all_workflow_tips()?;
        let mut seen = HashSet::new();
        let mut merges = HashSet::new();
        for tip in tips {
            let mut next = Some(tip);
            while let Some(id) = next {
                if !seen.insert(id) {
                    break;
                }
                let commit = self.repo.find_commit(id).map_err(git_err)?;
                next = commit.parent_ids().next().map(|p| p.detach());
                let is_merge = commit.message_raw_sloppy().starts_with(b"merge: ");
                if !is_merge {
                    continue;
                }
                let tree = commit.tree().map_err(git_err)?;
                let Some(entry) = tree.find_entry(STATE_FILE) else {
                    continue;
                };
                let blob = self.repo.find_blob(entry.object_id()).map_err(git_err)?;
                #[derive(serde::Deserialize)]
                struct MainTip {
                    main_tip: Option<String>,
                }
                if let Ok(MainTip {
                    main_tip: Some(main),
                }) = serde_json::from_slice(&blob.data)
                {
                    merges.insert(main);
                }
            }
        }
        Ok(merges)
    }
}
