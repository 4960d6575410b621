//! Checkpoint commits: what marks one, and finding them on a branch's first-parent line.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Store, StoreError, git_err};

impl Store {
    /// The newest checkpoint commit on HEAD's first-parent line, walking back no further
    /// than the first of `stops` (the last recorded checkpoint, where the branch left main)
    /// or `main`'s tip.
    pub fn find_checkpoint(
        &self,
        stops: &[Option<&str>],
        main: &str,
    ) -> Result<Option<FoundCheckpoint>, StoreError> {
        let Some(head) = self.head_commit_id()? else {
            return Ok(None);
        };
        Ok(self
            .walk_checkpoints(head, stops, main, 1)?
            .into_iter()
            .next())
    }

    /// Every checkpoint commit on the first-parent line back from `from`, newest first,
    /// with the same stops as [`Self::find_checkpoint`].
    pub fn checkpoints_from(
        &self,
        from: &str,
        stops: &[Option<&str>],
        main: &str,
    ) -> Result<Vec<FoundCheckpoint>, StoreError> {
        let from = ObjectId::from_hex(from.as_bytes()).map_err(git_err)?;
        self.walk_checkpoints(from, stops, main, usize::MAX)
    }

    /// Whether the repository holds the commit `id`: a PR's checkpoints are never pushed, so
    /// a clone that did not make them may not have them.
    pub fn holds_commit(&self, id: &str) -> bool {
        ObjectId::from_hex(id.as_bytes())
            .is_ok_and(|id| self.repo().is_ok_and(|repo| repo.has_object(id)))
    }

    fn walk_checkpoints(
        &self,
        from: ObjectId,
        stops: &[Option<&str>],
        main: &str,
        most: usize,
    ) -> Result<Vec<FoundCheckpoint>, StoreError> {
        const MAX_WALK: usize = 500;
        let main_tip = self.direct_ref(&super::branch_ref(main))?;
        let mut found = Vec::new();
        let mut next = Some(from);
        for _ in 0..MAX_WALK {
            let Some(id) = next else { break };
            let hex = id.to_string();
            if found.len() >= most || stops.contains(&Some(hex.as_str())) || Some(id) == main_tip {
                break;
            }
            let commit = self.repo()?.find_commit(id).map_err(git_err)?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            if is_checkpoint_message(&message) {
                found.push(FoundCheckpoint {
                    commit: hex,
                    subject: message.lines().next().unwrap_or_default().to_string(),
                    tree: commit.tree_id().map_err(git_err)?.to_string(),
                });
            }
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(found)
    }
}

/// A checkpoint commit found on the PR branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCheckpoint {
    pub commit: String,
    pub subject: String,
    pub tree: String,
}

/// A checkpoint commit's message starts with `checkpoint:` or carries the
/// `Orchestrator-Checkpoint:` trailer (docs/refs.md).
pub fn is_checkpoint_message(message: &str) -> bool {
    message.trim_start().starts_with("checkpoint:")
        || message
            .lines()
            .any(|l| l.starts_with("Orchestrator-Checkpoint:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_messages() {
        assert!(is_checkpoint_message("checkpoint: 1.2 add"));
        assert!(is_checkpoint_message(
            "tidy\n\nOrchestrator-Checkpoint: 1.3\n"
        ));
        assert!(!is_checkpoint_message("fix: checkpoint: not at start"));
    }
}
