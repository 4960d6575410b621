//! A workflow's history: its transition commits walked along first parents, each read back
//! into a [`HistoryEntry`] from its message's trailers.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{EVENT_HEADER, SIGNATURE_HEADER, Store, StoreError, format_time, git_err};
use crate::workflow::ledger::Transition;

/// What `audit` reads of a transition commit besides its state.
#[derive(Clone, Debug)]
pub struct CommitRecord {
    pub parents: Vec<ObjectId>,
    /// The `orchestrator-event` header: the event the transition applied, as JSON.
    pub event: Option<String>,
    /// The `orchestrator-signature` header: a signed human answer's armored SSH signature,
    /// ending in a newline as `ssh-keygen` writes it.
    pub signature: Option<String>,
    pub history: HistoryEntry,
}

/// One entry of `git orchestrate log`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HistoryEntry {
    pub commit: String,
    pub time: String,
    pub event: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub step: Option<String>,
    /// How a human's answer was authorised (`terminal`, `GIT_ORCHESTRATE_HUMAN`, or
    /// `signed <principal>`).
    pub human: Option<String>,
    /// `ticket` on a ticket workflow's commits (docs/tickets.md); absent on a TDD workflow's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub subject: String,
    pub body: String,
    /// A step's proof plan and what each obligation came to, from its `test` event: filled in
    /// by `log` only (src/engine/history.rs), and absent where none is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<crate::workflow::proof::step_record::StepProof>,
}

/// The newest transitions, and how many the history holds in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    pub total: usize,
}

impl HistoryPage {
    /// True when older transitions exist than the ones listed.
    pub fn truncated(&self) -> bool {
        self.entries.len() < self.total
    }
}

impl Store {
    /// The transitions, newest first, following first parents from the tip.
    pub fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, StoreError> {
        match self.tip()? {
            Some(tip) => self.history_from(tip, None, limit),
            None => Ok(Vec::new()),
        }
    }

    /// The newest `limit` transitions (all with `None`), and how many there are in all. Only
    /// a truncated listing walks on to count the rest, and then reads nothing of each older
    /// commit but its first parent.
    pub fn history_page(&self, limit: Option<usize>) -> Result<HistoryPage, StoreError> {
        self.history_page_at(self.tip()?, limit)
    }

    /// As [`Store::history_page`], of the chain at `tip` (an archived workflow's).
    pub fn history_page_at(
        &self,
        tip: Option<ObjectId>,
        limit: Option<usize>,
    ) -> Result<HistoryPage, StoreError> {
        let Some(tip) = tip else {
            return Ok(HistoryPage {
                entries: Vec::new(),
                total: 0,
            });
        };
        let limit = limit.unwrap_or(usize::MAX);
        let entries = self.history_from(tip, None, limit)?;
        let mut total = entries.len();
        let mut next = match entries.last() {
            Some(last) if total == limit => {
                let id = ObjectId::from_hex(last.commit.as_bytes()).map_err(git_err)?;
                self.first_parent(id)?
            }
            // `-n 0`: nothing listed, everything counted.
            None if limit == 0 => Some(tip),
            _ => None,
        };
        while let Some(id) = next {
            total += 1;
            next = self.first_parent(id)?;
        }
        Ok(HistoryPage { entries, total })
    }

    /// Transition commit `id` read as an entry of the history, and its first parent.
    fn entry_and_parent(
        &self,
        id: ObjectId,
    ) -> Result<(HistoryEntry, Option<ObjectId>), StoreError> {
        let commit = self.repo()?.find_commit(id).map_err(git_err)?;
        let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
        let time = commit.time().map(format_time).unwrap_or_default();
        let parent = commit.parent_ids().next().map(|p| p.detach());
        Ok((parse_history_entry(id.to_string(), time, &message), parent))
    }

    fn first_parent(&self, id: ObjectId) -> Result<Option<ObjectId>, StoreError> {
        let commit = self.repo()?.find_commit(id).map_err(git_err)?;
        Ok(commit.parent_ids().next().map(|p| p.detach()))
    }

    /// The transitions from `tip` back to (not including) `stop`, newest first, at most
    /// `limit`.
    pub fn history_from(
        &self,
        tip: ObjectId,
        stop: Option<ObjectId>,
        limit: usize,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            if out.len() >= limit || Some(id) == stop {
                break;
            }
            let (entry, parent) = self.entry_and_parent(id)?;
            next = parent;
            out.push(entry);
        }
        Ok(out)
    }

    /// The transitions from `tip` back to the newest one of `event`, inclusive: a PR's own
    /// history, back to its `plan`.
    pub fn history_back_to(
        &self,
        tip: ObjectId,
        event: &str,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let mut out = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            let (entry, parent) = self.entry_and_parent(id)?;
            next = parent;
            let reached = entry.event == event;
            out.push(entry);
            if reached {
                break;
            }
        }
        Ok(out)
    }

    /// How many transitions lead from `from` (none: the workflow's start) to `to`, counted
    /// along first parents; at most `limit`.
    pub fn transitions_between(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
        limit: u32,
    ) -> Result<u32, StoreError> {
        let mut count = 0;
        let mut next = Some(to);
        while let Some(id) = next.filter(|id| Some(*id) != from && count < limit) {
            count += 1;
            let commit = self.repo()?.find_commit(id).map_err(git_err)?;
            next = commit.parent_ids().next().map(|p| p.detach());
        }
        Ok(count)
    }

    /// The chain from `tip` back to its root along first parents, oldest first, each with
    /// its commit time in seconds and the debugging attempt its state holds: what the ledger
    /// is made of. `reference` names the chain in errors.
    pub fn timed_transitions(
        &self,
        tip: ObjectId,
        reference: &str,
    ) -> Result<Vec<Transition>, StoreError> {
        self.transitions_with_attempts(tip, reference, |_, _| true)
    }

    /// [`Self::timed_transitions`], with the attempt of each transition read only where
    /// `wanted(transition, the one after it)` says (0 elsewhere): reading it takes the
    /// transition's tree and state, and the board's ledgers read a hundred chains
    /// ([`crate::workflow::ledger::reads_attempt`]).
    pub fn transitions_with_attempts(
        &self,
        tip: ObjectId,
        reference: &str,
        wanted: impl Fn(&Transition, Option<&Transition>) -> bool,
    ) -> Result<Vec<Transition>, StoreError> {
        let mut out: Vec<Transition> = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            // Through the store's reader: the board reads a hundred chains, and a tip twice.
            let bytes = self
                .object_of_kind(id, gix::objs::Kind::Commit)
                .map_err(StoreError::Git)?;
            let commit = gix::objs::CommitRef::from_bytes(&bytes, self.repo.object_hash())
                .map_err(git_err)?;
            let message = commit.message.to_str_lossy().into_owned();
            let time = commit.time().map(|t| t.seconds).unwrap_or_default();
            next = commit.parents().next();
            let entry = parse_history_entry(id.to_string(), String::new(), &message);
            let mut transition = Transition {
                attempt: 0,
                commit: entry.commit,
                time,
                event: entry.event,
                from: entry.from,
                to: entry.to,
                step: entry.step,
            };
            // A ticket's commit holds no TDD state, and so no debugging attempt.
            if wanted(&transition, out.last())
                && let super::Workflow::Tdd(snapshot) = self.workflow_at(id, reference)?
            {
                transition.attempt = snapshot.state.attempts();
            }
            out.push(transition);
        }
        out.reverse();
        Ok(out)
    }

    /// The newest `max` transitions of the chain at `tip` (oldest first) with what each
    /// recorded, for a workflow's timeline; and how many the chain holds in all.
    pub fn recorded_transitions(
        &self,
        tip: ObjectId,
        reference: &str,
        max: usize,
    ) -> Result<(Vec<crate::workflow::timeline::Recorded>, usize), StoreError> {
        let all = self.timed_transitions(tip, reference)?;
        let total = all.len();
        let mut out = Vec::with_capacity(total.min(max));
        for transition in all.into_iter().skip(total.saturating_sub(max)) {
            let id = ObjectId::from_hex(transition.commit.as_bytes()).map_err(git_err)?;
            let commit = self.repo()?.find_commit(id).map_err(git_err)?;
            let decoded = commit.decode().map_err(git_err)?;
            let event = decoded
                .extra_headers()
                .find(EVENT_HEADER)
                .map(|v| v.to_str_lossy().into_owned());
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            let entry = parse_history_entry(String::new(), String::new(), &message);
            out.push(crate::workflow::timeline::Recorded {
                transition,
                human: entry.human,
                summary: entry.body.lines().next().unwrap_or_default().to_string(),
                event,
            });
        }
        Ok((out, total))
    }

    /// The parents of commit `id`, first parent first.
    pub fn commit_parents(&self, id: ObjectId) -> Result<Vec<ObjectId>, StoreError> {
        let commit = self.repo()?.find_commit(id).map_err(git_err)?;
        Ok(commit.parent_ids().map(|p| p.detach()).collect())
    }

    /// The parents, the recorded event and the message of transition commit `id`.
    pub fn commit_record(&self, id: ObjectId) -> Result<CommitRecord, StoreError> {
        let commit = self.repo()?.find_commit(id).map_err(git_err)?;
        let decoded = commit.decode().map_err(git_err)?;
        let event = decoded
            .extra_headers()
            .find(EVENT_HEADER)
            .map(|v| v.to_str_lossy().into_owned());
        let signature = decoded
            .extra_headers()
            .find(SIGNATURE_HEADER)
            .map(|v| format!("{}\n", v.to_str_lossy().trim_end()));
        let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
        let time = commit.time().map(format_time).unwrap_or_default();
        Ok(CommitRecord {
            parents: commit.parent_ids().map(|p| p.detach()).collect(),
            event,
            signature,
            history: parse_history_entry(id.to_string(), time, &message),
        })
    }
}

pub(super) fn parse_history_entry(commit: String, time: String, message: &str) -> HistoryEntry {
    let lines: Vec<&str> = message.trim_end().lines().collect();
    // The trailers are the last paragraph, as git reads them: a summary the agent wrote
    // (`--summary "Orchestrator-Step: 9.9"`) stays in the body, whatever its lines look like.
    let block = lines
        .iter()
        .rposition(|l| l.trim().is_empty())
        .map_or(lines.len(), |blank| blank + 1);
    let (text, trailers) = if lines[block.min(lines.len())..]
        .iter()
        .all(|l| l.starts_with("Orchestrator-"))
        && block > 0
    {
        (&lines[..block], &lines[block..])
    } else {
        (&lines[..], &lines[lines.len()..])
    };
    let trailer = |key: &str| {
        trailers
            .iter()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
    };
    let subject = lines.first().copied().unwrap_or_default().to_string();
    let body: Vec<&str> = text.iter().skip(1).copied().collect();
    HistoryEntry {
        commit,
        time,
        event: trailer("Orchestrator-Event:")
            .unwrap_or_else(|| subject.split(':').next().unwrap_or_default().to_string()),
        from: trailer("Orchestrator-From:"),
        to: trailer("Orchestrator-To:"),
        step: trailer("Orchestrator-Step:"),
        human: trailer("Orchestrator-Human:"),
        kind: trailer("Orchestrator-Kind:"),
        subject,
        body: body.join("\n").trim().to_string(),
        proof: None,
    }
}
