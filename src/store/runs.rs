//! `git orchestrate run`'s records: one commit per turn under `refs/orchestrator/runs/`, and
//! its files under the git directory (the turn at hand, its briefing, the agent's proof).

use std::collections::BTreeMap;
use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::FullName;

use super::files::safe_file_name;
use super::write::{blob_tree, commit_object};
use super::{Store, StoreError, WriteError, git_err, loose};

/// `git orchestrate run`'s record of its turns, one ref per workflow.
const RUNS: &str = "refs/orchestrator/runs/";

/// `refs/orchestrator/runs/<workflow>`: one commit per recorded turn.
pub fn runs_ref(workflow: &str) -> String {
    format!("{RUNS}{workflow}")
}

/// Where `sync` keeps a remote's run records: `refs/orchestrator/remotes/<remote>/runs/`.
pub fn tracking_runs_prefix(remote: &str) -> String {
    format!("{}{remote}/runs/", super::names::REMOTES)
}

impl Store {
    /// Where an agent's session-start hook says it fired in a turn of `git orchestrate run`
    /// (`token` is the turn's, a name made safe for a file).
    pub fn run_proof_file(&self, token: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run/started")
            .join(safe_file_name(token))
    }

    /// Where `run` writes the briefing of the turn at hand, for `GIT_ORCHESTRATE_BRIEFING_FILE`:
    /// in the git directory, never in the working tree.
    pub fn run_briefing_file(&self) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.briefing.txt", self.workflow))
    }

    /// The turn a `git orchestrate run` of this workflow has started and not yet recorded.
    pub fn run_turn_file(&self) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run")
            .join(format!("{}.turn.json", safe_file_name(&self.workflow)))
    }

    /// How far the Stop hook has read an agent session's transcript, for a session run by
    /// hand (`session` is the client's, made safe for a file).
    pub fn transcript_mark_file(&self, session: &str) -> PathBuf {
        self.repo
            .common_dir()
            .join("orchestrator/run/transcripts")
            .join(safe_file_name(session))
    }

    /// `refs/orchestrator/runs/<workflow>`: one commit per turn of `git orchestrate run`.
    pub fn run_ref_name(&self) -> String {
        format!("{RUNS}{}", self.workflow)
    }

    /// Every run record of this clone, by workflow, with its tip.
    pub fn local_runs(&self) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(RUNS)
    }

    /// Every run record `remote` had when `sync` last fetched it, by workflow.
    pub fn tracking_runs(&self, remote: &str) -> Result<BTreeMap<String, ObjectId>, StoreError> {
        self.refs_under(&tracking_runs_prefix(remote))
    }

    /// Moves workflow `workflow`'s run record from `expected` (`None`: absent) to `new`: a
    /// compare-and-swap, logged with `message`.
    pub fn move_runs(
        &self,
        workflow: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<(), WriteError> {
        let name = FullName::try_from(runs_ref(workflow))
            .map_err(|_| StoreError::BadWorkflowName(workflow.to_string()))?;
        self.update_ref(
            &name,
            expected,
            new,
            format!("git-orchestrate: {message}"),
            &self.signature()?,
        )
    }

    /// The last turn `run` recorded: its commit and subject.
    pub fn last_run_record(&self) -> Result<Option<(String, String)>, StoreError> {
        let Some(tip) = self.peeled_ref(&self.run_ref_name())? else {
            return Ok(None);
        };
        let commit = self.repo()?.find_commit(tip).map_err(git_err)?;
        let subject = commit
            .message_raw_sloppy()
            .to_str_lossy()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        Ok(Some((commit.id.to_string(), subject)))
    }

    /// Each `turn.json` of the run record at `tip` (a tip [`Store::local_runs`] listed),
    /// oldest first; at most `limit` turns, the newest. The caller lists the records once:
    /// a lookup by name of a workflow with none tries every ref prefix git has, and the board
    /// asks for each workflow's.
    pub fn run_turn_records(
        &self,
        tip: ObjectId,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        let mut next = Some(tip);
        let mut out = Vec::new();
        while let Some(id) = next {
            if out.len() >= limit {
                break;
            }
            let commit = self.repo()?.find_commit(id).map_err(git_err)?;
            next = commit.parent_ids().next().map(|p| p.detach());
            let tree = commit.tree().map_err(git_err)?;
            let decoded = tree.decode().map_err(git_err)?;
            // A record without a turn (a stuck report) is no turn.
            if let Some(entry) = decoded.entries.iter().find(|e| e.filename == "turn.json") {
                let blob = self.repo()?.find_blob(entry.oid).map_err(git_err)?;
                out.push(blob.data.clone());
            }
        }
        out.reverse();
        Ok(out)
    }

    /// Appends a turn of `run` to the run ref: a commit whose tree holds `files`, on top of
    /// the last one (compare-and-swap, retried when another run appended meanwhile).
    pub fn append_run_record(
        &self,
        files: &[(&str, &[u8])],
        message: &str,
    ) -> Result<ObjectId, StoreError> {
        let name = FullName::try_from(self.run_ref_name())
            .map_err(|_| StoreError::BadWorkflowName(self.workflow.clone()))?;
        let mut names: Vec<&(&str, &[u8])> = files.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        let signature = self.signature()?;
        for _ in 0..20 {
            let parent = self.peeled_ref(&self.run_ref_name())?;
            let mut objects =
                loose::LooseWriter::at(self.repo.objects_dir(), self.repo.object_hash());
            let mut entries = Vec::new();
            for (file, bytes) in &names {
                entries.push((*file, objects.write(gix::objs::Kind::Blob, bytes)?));
            }
            let tree = objects.write_object(&blob_tree(entries.into_iter()))?;
            let commit = objects.write_object(&commit_object(
                tree,
                parent,
                &signature,
                message,
                Vec::new(),
            ))?;
            match self.update_ref(&name, parent, commit, message.to_string(), &signature) {
                Ok(()) => return Ok(commit),
                Err(WriteError::Conflict) => continue,
                Err(WriteError::Store(e)) => return Err(e),
            }
        }
        Err(StoreError::Internal(format!(
            "{} kept changing while a run turn was recorded",
            self.run_ref_name()
        )))
    }
}
