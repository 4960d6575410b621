//! Verification notes (docs/refs.md, "refs/notes/orchestrator"): the checkpoint record a checkpoint commit carries, the
//! final record on a PR's squashed commit, and `verify`, which finds checkpoint commits that
//! carry no passing record.

use std::collections::{HashMap, HashSet};

use super::{EngineError, Session};
use crate::config;
use crate::exec::GitError;
use crate::store::{Snapshot, is_checkpoint_message};
use crate::workflow::Event;
use crate::workflow::notes::{
    CheckpointNote, FinalNote, FinalReview, FoldedCheckpoint, HumanAnswer, NOTE_VERSION, NoteGate,
    PathsOfStep, checkpoint_records, tool,
};
use crate::workflow::review::ReviewRecord;

/// Attaches `note` to `commit`, unless the commit already carries a passing record for the
/// same tree (the post-commit hook may have written one a moment ago).
pub fn record_checkpoint(
    session: &Session,
    commit: &str,
    note: &CheckpointNote,
) -> Result<(), EngineError> {
    let line = note.to_line();
    session.with_retries(|| {
        let existing = session.store.notes()?.get(commit)?.unwrap_or_default();
        if checkpoint_records(&existing)
            .iter()
            .any(|r| r.passes(&note.tree))
        {
            return Ok(());
        }
        session.store.add_note_line(commit, &line)?;
        Ok(())
    })
}

/// Writes the final record on the squashed commit `squashed` of the PR in `snap`: the plan,
/// the review, the checkpoints with their notes, and whether the PR changes the config.
pub fn record_final(
    session: &Session,
    snap: &Snapshot,
    squashed: &str,
    check: &super::finalize::FinalCheck,
) -> Result<(), EngineError> {
    let main = session.main_branch(Some(&snap.state))?;
    let base = session.git.merge_base(&main, squashed)?;
    let note = final_note(session, snap, squashed, &base, check)?;
    let line = note.to_line();
    session.with_retries(|| {
        session.store.add_note_line(squashed, &line)?;
        Ok(())
    })
}

/// The final record of the squashed commit `squashed` of the PR in `snap`, made on `base`,
/// after the final check `check`: what `record_final` writes, and what `attest` shows beside
/// its verdict from its own run of the check.
pub fn final_note(
    session: &Session,
    snap: &Snapshot,
    squashed: &str,
    base: &str,
    check: &super::finalize::FinalCheck,
) -> Result<FinalNote, EngineError> {
    let state = &snap.state;
    let main = session.main_branch(Some(state))?;
    let git = &session.git;
    let base = base.to_string();
    let config_changed = git
        .changed_files(&base, squashed)?
        .iter()
        .any(|f| f == config::FILE_NAME);
    let review = match session.store.review(snap)? {
        Some(bytes) => serde_json::from_slice::<ReviewRecord>(&bytes)
            .ok()
            .map(|r| FinalReview {
                rounds: r.round,
                ran: r.ran,
                findings: r.findings,
            }),
        None => None,
    };
    let checkpoints = folded_checkpoints(session, state, &main, &base)?;
    let pr = session.store.history_back_to(snap.tip, "plan")?;
    let human_answers = human_answers(&pr);
    Ok(FinalNote {
        v: NOTE_VERSION,
        kind: "final".into(),
        workflow: session.store.workflow().to_string(),
        pr: snap
            .summary
            .as_ref()
            .map(|p| p.title.clone())
            .unwrap_or_default(),
        branch: state.branch().map(str::to_string).unwrap_or_default(),
        tree: session.store.tree_of(squashed)?,
        steps: snap.summary.as_ref().map_or(0, |p| p.total),
        review,
        checkpoints,
        config_changed,
        human_answers,
        empty_tasks: super::audit::empty_tasks(session, snap, &pr)?,
        final_checks_refused: pr
            .iter()
            .filter(|e| e.event == "final-check-refused")
            .count(),
        verification: check.verification.clone(),
        red_tests: check.red_tests.clone(),
        adequacy: check.adequacy.clone(),
        edited_red_tests: check
            .record
            .edited_red_tests
            .iter()
            .map(|e| PathsOfStep {
                step: e.step.to_string(),
                paths: e.paths.clone(),
            })
            .collect(),
        reds_without_a_test: check
            .record
            .reds_without_a_test
            .iter()
            .map(ToString::to_string)
            .collect(),
        unpinned_tests: check.unpinned_tests.clone(),
        tasks_without_red: check.tasks_without_red.clone(),
        changed_tests: check.changed_tests.clone(),
        main_moved_outside: super::main_line::drift(session, state)?
            .map(|d| d.notice().to_string()),
        tool: tool(),
    })
}

/// The PR's checkpoints, oldest first as they were made, each with the note that vouches
/// for its tree (else its first note).
fn folded_checkpoints(
    session: &Session,
    state: &crate::workflow::State,
    main: &str,
    base: &str,
) -> Result<Vec<FoldedCheckpoint>, EngineError> {
    let mut checkpoints = Vec::new();
    // Off the machine that made them (`attest`), the checkpoints may not be there: none is
    // listed then.
    if let Some(last) = state
        .pr()
        .and_then(|pr| pr.last_checkpoint.as_deref())
        .filter(|last| session.store.holds_commit(last))
    {
        let stops = [state.pr().and_then(|pr| pr.base.as_deref()), Some(base)];
        let mut reader = session.store.notes()?;
        for found in session.store.checkpoints_from(last, &stops, main)? {
            let note = reader
                .get(&found.commit)?
                .map(|text| checkpoint_records(&text))
                .and_then(|records| {
                    records
                        .iter()
                        .find(|r| r.passes(&found.tree))
                        .or(records.first())
                        .cloned()
                });
            checkpoints.push(FoldedCheckpoint {
                commit: found.commit,
                subject: found.subject,
                note,
            });
        }
        // Oldest first, as they were made.
        checkpoints.reverse();
    }
    Ok(checkpoints)
}

/// The humans' answers in the PR's history, oldest first.
fn human_answers(pr: &[crate::store::HistoryEntry]) -> Vec<HumanAnswer> {
    pr.iter()
        .rev()
        .filter_map(|e| {
            Some(HumanAnswer {
                by: e.human.clone()?,
                event: e.event.clone(),
                commit: e.commit.clone(),
            })
        })
        .collect()
}

/// The PR's commits that carry no verification note: the squashed commit without its final
/// record, and each checkpoint the chain recorded without a passing record for its tree. A
/// merge waits for them (docs/integrity.md): the notes are what CI and people check.
pub fn unnoted(session: &Session, snap: &Snapshot) -> Result<Vec<String>, EngineError> {
    let store = &session.store;
    let mut reader = store.notes()?;
    let mut missing = Vec::new();
    if let Some(squashed) = snap.state.final_commit() {
        let tree = session.store.tree_of(squashed)?;
        let noted = reader.get(squashed)?.is_some_and(|text| {
            text.lines().any(|line| {
                serde_json::from_str::<FinalNote>(line)
                    .is_ok_and(|n| n.v == NOTE_VERSION && n.kind == "final" && n.tree == tree)
            })
        });
        if !noted {
            missing.push(format!("{squashed} (the squashed commit)"));
        }
    }
    for entry in store.history_back_to(snap.tip, "plan")? {
        if entry.event != "checkpoint" {
            continue;
        }
        let id = gix::ObjectId::from_hex(entry.commit.as_bytes())
            .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
        let Some(Ok(Event::CheckpointRecorded { commit, tree, .. })) = store
            .commit_record(id)?
            .event
            .map(|json| serde_json::from_str::<Event>(&json))
        else {
            continue;
        };
        let noted = reader
            .get(&commit)?
            .is_some_and(|text| checkpoint_records(&text).iter().any(|r| r.passes(&tree)));
        if !noted {
            missing.push(format!("{commit} (a checkpoint)"));
        }
    }
    Ok(missing)
}

/// How one checkpoint commit fares under `verify`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verification {
    /// A passing record for its tree; `gates` ran (or had run on this tree, `cached`).
    Verified { cached: bool, gates: Vec<NoteGate> },
    /// A passing record, but no gates were configured: nothing was verified.
    NoGates,
    /// A passing record that ran no gates, while gates are configured now: it proves
    /// nothing about them.
    GatesMissing,
    /// No record at all: committed without the hook (`--no-verify`, or hooks not installed).
    Missing,
    /// Records for this commit's tree, but none that passes (a gate failed).
    Failed,
    /// Records, but none for this commit's tree (amended or rebased after it was verified).
    OtherTree,
    /// A passing record for its tree that no workflow's chain backs: no transition here
    /// records that tree as verified, so the note is anyone's word (docs/integrity.md).
    Unauthenticated,
}

impl Verification {
    /// Whether `verify` and `pre-push` accept the commit.
    pub fn passes(&self) -> bool {
        matches!(self, Verification::Verified { .. } | Verification::NoGates)
    }
}

/// A checkpoint commit `verify` looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedCommit {
    pub commit: String,
    pub subject: String,
    pub verification: Verification,
}

/// How a PR's squashed commit fares under `verify` (on main after a merge, say, where the
/// checkpoints are squashed away and the squashed commit is what stands for them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SquashVerification {
    /// A workflow whose chain replays clean accepted this commit as a PR's squash, and its
    /// final note is for its tree.
    Verified { note: Box<FinalNote> },
    /// As `Verified`, but no gates were configured at the squash: nothing verified it.
    NoGates { note: Box<FinalNote> },
    /// Its final note says no gates ran, while gates are configured now.
    GatesMissing { note: Box<FinalNote> },
    /// A workflow's chain accepted it as a PR's squash, but it carries no final note (the
    /// note was removed, or the notes were not fetched).
    Missing,
    /// Final notes, but none for this commit's tree (amended after the squash).
    OtherTree,
    /// A final note, but no workflow's chain here accepted this commit as a squash: the note
    /// is anyone's word (docs/integrity.md).
    Unauthenticated,
}

impl SquashVerification {
    pub fn passes(&self) -> bool {
        matches!(
            self,
            SquashVerification::Verified { .. } | SquashVerification::NoGates { .. }
        )
    }
}

/// A PR's squashed commit `verify` looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedSquash {
    pub commit: String,
    pub subject: String,
    pub verification: SquashVerification,
}

/// Whether `verify` looks for PRs' squashed commits in the range too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Squashes {
    /// `verify`: a range on main holds squashed commits, not checkpoints.
    Check,
    /// The `pre-push` hook: it judges checkpoint commits only (docs/config.md, `pre_push`).
    Skip,
}

/// What `verify` found in a range (docs/agent-guide.md, "Other commands").
pub struct VerifyReport {
    pub range: Vec<String>,
    pub commits: usize,
    pub checkpoints: Vec<CheckedCommit>,
    pub squashed: Vec<CheckedSquash>,
    /// Merges on main and commits with an attestation note, and what their note is worth.
    pub attested: Vec<CheckedAttestation>,
}

/// A commit `verify` looked for an attestation on (docs/integrity.md, "attest").
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CheckedAttestation {
    pub commit: String,
    pub subject: String,
    pub attestation: super::attest::seal::Attestation,
}

impl serde::Serialize for VerifyReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Checkpoint<'a> {
            commit: &'a str,
            subject: &'a str,
            status: &'static str,
            cached: Option<bool>,
            gates: Option<&'a [NoteGate]>,
        }
        #[derive(serde::Serialize)]
        struct Squash<'a> {
            commit: &'a str,
            subject: &'a str,
            status: &'static str,
            pr: Option<&'a str>,
            workflow: Option<&'a str>,
            verification: Option<&'a str>,
            checkpoints: Option<usize>,
        }
        #[derive(serde::Serialize)]
        struct View<'a> {
            range: &'a [String],
            commits: usize,
            checkpoints: Vec<Checkpoint<'a>>,
            squashed: Vec<Squash<'a>>,
            attested: &'a [CheckedAttestation],
            failures: usize,
        }
        View {
            range: &self.range,
            commits: self.commits,
            checkpoints: self
                .checkpoints
                .iter()
                .map(|c| {
                    let (status, cached, gates) = match &c.verification {
                        Verification::Verified { cached, gates } => {
                            ("verified", Some(*cached), Some(gates.as_slice()))
                        }
                        Verification::NoGates => ("no_gates", None, None),
                        Verification::GatesMissing => ("gates_missing", None, None),
                        Verification::Failed => ("failed", None, None),
                        Verification::Missing => ("missing", None, None),
                        Verification::OtherTree => ("other_tree", None, None),
                        Verification::Unauthenticated => ("unauthenticated", None, None),
                    };
                    Checkpoint {
                        commit: &c.commit,
                        subject: &c.subject,
                        status,
                        cached,
                        gates,
                    }
                })
                .collect(),
            squashed: self
                .squashed
                .iter()
                .map(|c| {
                    let (status, note) = match &c.verification {
                        SquashVerification::Verified { note } => ("verified", Some(note)),
                        SquashVerification::NoGates { note } => ("no_gates", Some(note)),
                        SquashVerification::GatesMissing { note } => ("gates_missing", Some(note)),
                        SquashVerification::Missing => ("missing", None),
                        SquashVerification::OtherTree => ("other_tree", None),
                        SquashVerification::Unauthenticated => ("unauthenticated", None),
                    };
                    Squash {
                        commit: &c.commit,
                        subject: &c.subject,
                        status,
                        pr: note.map(|n| n.pr.as_str()),
                        workflow: note.map(|n| n.workflow.as_str()),
                        verification: note.map(|n| n.verification.as_str()),
                        checkpoints: note.map(|n| n.checkpoints.len()),
                    }
                })
                .collect(),
            attested: &self.attested,
            failures: self.failure_count(),
        }
        .serialize(serializer)
    }
}

impl VerifyReport {
    /// The checkpoint commits that fail.
    pub fn failures(&self) -> impl Iterator<Item = &CheckedCommit> {
        self.checkpoints.iter().filter(|c| !c.verification.passes())
    }

    /// The squashed commits that fail.
    pub fn squash_failures(&self) -> impl Iterator<Item = &CheckedSquash> {
        self.squashed.iter().filter(|c| !c.verification.passes())
    }

    /// The commits whose attestation says FAILED.
    pub fn attest_failures(&self) -> impl Iterator<Item = &CheckedAttestation> {
        self.attested.iter().filter(|c| c.attestation.fails())
    }

    /// Every commit that fails: checkpoint, squashed, or attested FAILED.
    pub fn failure_count(&self) -> usize {
        self.failures().count() + self.squash_failures().count() + self.attest_failures().count()
    }
}

/// The range `verify` checks without one: what the current branch adds to the main branch.
/// The branch is named in full, so a tag named like it does not change the range. On the
/// main branch itself that is nothing, so there it is the last commit and, when that is a
/// merge, what it merged (a PR's squashed commit and its master-plan commit).
pub fn default_range(session: &Session) -> Result<String, EngineError> {
    let state = session.store.read_unless_ticket()?.map(|s| s.state);
    let main = session.main_branch(state.as_ref())?;
    if session.store.head_branch()?.as_deref() == Some(main.as_str()) {
        return Ok(if session.git.rev_parse("HEAD^").is_ok() {
            "HEAD^..HEAD".to_string()
        } else {
            "HEAD".to_string()
        });
    }
    Ok(format!("{}..HEAD", crate::store::branch_ref(&main)))
}

/// Checks every checkpoint commit in a range a person gave (`verify RANGE…`): revisions
/// only, never options, since `git log` would act on an option (`--output=FILE` writes a
/// file) and then verify nothing.
pub fn verify_range(session: &Session, revs: &[&str]) -> Result<VerifyReport, EngineError> {
    if let Some(option) = revs.iter().find(|r| r.starts_with('-')) {
        return Err(EngineError::BadInput {
            message: format!("{option} is not a range: verify takes revisions, not options"),
            hint: "Give a range git understands, like main..HEAD or HEAD~10..HEAD.".into(),
        });
    }
    let commits = session
        .git
        .commits_of_revisions(revs)
        .map_err(|e| bad_range(revs, e))?;
    check_commits(session, revs, &commits, Squashes::Check)
}

/// Checks every checkpoint commit that `revs` select (as `git log` takes them, options such
/// as `--not` included: the callers are our own code).
pub fn verify(session: &Session, revs: &[&str]) -> Result<VerifyReport, EngineError> {
    let commits = session.git.commits(revs).map_err(|e| bad_range(revs, e))?;
    check_commits(session, revs, &commits, Squashes::Skip)
}

/// Checks every checkpoint commit of one walk from `tips`, reaching neither `bases` nor
/// what `not` selects (`pre-push`: every pushed ref at once, see [`Git::commits_of_walk`]).
///
/// [`Git::commits_of_walk`]: crate::exec::Git::commits_of_walk
pub fn verify_walk(
    session: &Session,
    tips: &[&str],
    bases: &[&str],
    not: &[&str],
) -> Result<VerifyReport, EngineError> {
    let commits = session
        .git
        .commits_of_walk(tips, bases, not)
        .map_err(|e| bad_range(not, e))?;
    let shown = format!("{} pushed tips", tips.len());
    check_commits(session, &[shown.as_str()], &commits, Squashes::Skip)
}

fn check_commits(
    session: &Session,
    revs: &[&str],
    commits: &[crate::exec::git::LoggedCommit],
    squashes: Squashes,
) -> Result<VerifyReport, EngineError> {
    // A record that ran no gates passes only while none are configured. A configuration
    // that cannot be read counts as configured: strict is the safe side.
    let state = session.store.read_unless_ticket()?.map(|s| s.state);
    let gates_configured = session
        .load_config(state.as_ref())
        .map_or(true, |loaded| !loaded.config.preflight.is_empty());
    let mut reader = session.store.notes()?;
    let mut checkpoints = Vec::new();
    // Read only when a note says a tree passed: every chain is walked for it.
    let mut backed: Option<ChainTrees> = None;
    let mut squashed = Vec::new();
    let mut attested = Vec::new();
    let main = session.main_branch(state.as_ref())?;
    for logged in commits {
        if !is_checkpoint_message(&logged.message) {
            if squashes == Squashes::Check {
                let attestation =
                    match super::attest::seal::judge_note(session, &main, &logged.commit)? {
                        Some(found) => Some(found),
                        None if session.git.parents(&logged.commit)?.len() > 1 => {
                            Some(super::attest::seal::Attestation::None)
                        }
                        None => None,
                    };
                if let Some(attestation) = attestation {
                    attested.push(CheckedAttestation {
                        commit: logged.commit.clone(),
                        subject: subject_of(&logged.message),
                        attestation,
                    });
                }
                let trees = match &mut backed {
                    Some(trees) => trees,
                    None => backed.insert(chain_verified_trees(session)?),
                };
                if let Some(verification) =
                    check_squash(session, &mut reader, trees, logged, gates_configured)?
                {
                    squashed.push(CheckedSquash {
                        commit: logged.commit.clone(),
                        subject: subject_of(&logged.message),
                        verification,
                    });
                }
            }
            continue;
        }
        let records = reader
            .get(&logged.commit)?
            .map(|text| checkpoint_records(&text))
            .unwrap_or_default();
        let passing = records.iter().find(|r| r.passes(&logged.tree));
        if passing.is_some() && backed.is_none() {
            backed = Some(chain_verified_trees(session)?);
        }
        let is_backed = match (&mut backed, passing) {
            (Some(trees), Some(_)) => trees.vouches_for(session, &logged.tree)?,
            _ => false,
        };
        let verification = match passing {
            Some(r) if r.preflight.gates.is_empty() && gates_configured => {
                Verification::GatesMissing
            }
            Some(_) if !is_backed => Verification::Unauthenticated,
            Some(r) if r.preflight.gates.is_empty() => Verification::NoGates,
            Some(r) => Verification::Verified {
                cached: r.preflight.cached,
                gates: r.preflight.gates.clone(),
            },
            None if records.is_empty() => Verification::Missing,
            None if records.iter().any(|r| r.tree == logged.tree) => Verification::Failed,
            None => Verification::OtherTree,
        };
        checkpoints.push(CheckedCommit {
            commit: logged.commit.clone(),
            subject: subject_of(&logged.message),
            verification,
        });
    }
    Ok(VerifyReport {
        range: revs.iter().map(ToString::to_string).collect(),
        commits: commits.len(),
        checkpoints,
        squashed,
        attested,
    })
}

fn subject_of(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}

/// Whether `logged` is a PR's squashed commit and how it fares; `None` when it is not one:
/// no final note names it and no workflow's chain accepted it as a squash. The verdict rests
/// on the chain, which accepts a squash only after its final check passed; the note is what
/// the verdict is shown with, so it must be there and be for this tree.
fn check_squash(
    session: &Session,
    reader: &mut crate::store::NoteReader,
    trees: &mut ChainTrees,
    logged: &crate::exec::git::LoggedCommit,
    gates_configured: bool,
) -> Result<Option<SquashVerification>, EngineError> {
    let finals: Vec<FinalNote> = reader
        .get(&logged.commit)?
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<FinalNote>(line).ok())
                .filter(|n| n.v == NOTE_VERSION && n.kind == "final")
                .collect()
        })
        .unwrap_or_default();
    let accepted = trees.accepted_squash(session, &logged.commit)?;
    if finals.is_empty() && accepted.is_none() {
        return Ok(None);
    }
    let Some(workflow) = accepted else {
        return Ok(Some(SquashVerification::Unauthenticated));
    };
    // The accepting workflow's note for this tree, and no other's.
    let mine: Vec<&FinalNote> = finals
        .iter()
        .filter(|n| n.tree == logged.tree && n.workflow == workflow)
        .collect();
    let Some(note) = mine.first().map(|n| Box::new((*n).clone())) else {
        return Ok(Some(if finals.is_empty() {
            SquashVerification::Missing
        } else {
            SquashVerification::OtherTree
        }));
    };
    // Every line for this tree must say gates ran: one more line cannot turn a squash made
    // without gates into a verified one.
    let no_gates = mine
        .iter()
        .any(|n| n.verification.starts_with("not verified: no gates"));
    Ok(Some(match (no_gates, gates_configured) {
        (true, true) => SquashVerification::GatesMissing { note },
        (true, false) => SquashVerification::NoGates { note },
        (false, _) => SquashVerification::Verified { note },
    }))
}

/// The trees the workflows' chains record as verified (a checkpoint recorded, a preflight
/// pass, a passing run's verified tree), in every workflow here and every remote's as last
/// fetched, with where each is recorded. What a note says is believed only for these, and
/// only where the whole chain replays clean, from a new workflow to its tip, every
/// transition recorded: a chain begun from a state made up on the way vouches for nothing.
struct ChainTrees {
    /// tree → (chain tip, the transition that records it).
    sources: HashMap<String, Vec<(gix::ObjectId, gix::ObjectId)>>,
    /// squashed commit → (chain tip, the `Squashed` transition, the workflow's name).
    squashes: HashMap<String, Vec<(gix::ObjectId, gix::ObjectId, String)>>,
    /// Whole chains audited so far, by tip.
    whole: HashMap<gix::ObjectId, bool>,
}

impl ChainTrees {
    fn vouches_for(&mut self, session: &Session, tree: &str) -> Result<bool, EngineError> {
        let sources = self.sources.get(tree).cloned().unwrap_or_default();
        for (tip, _) in sources {
            if self.replays_whole(session, tip)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The workflow whose chain accepted `commit` as a PR's squash, replaying clean from
    /// its first commit (a new workflow) with every transition recorded: a chain begun from a
    /// state made up on the way does not vouch for a squash on main.
    fn accepted_squash(
        &mut self,
        session: &Session,
        commit: &str,
    ) -> Result<Option<String>, EngineError> {
        let sources = self.squashes.get(commit).cloned().unwrap_or_default();
        for (tip, _, workflow) in sources {
            if self.replays_whole(session, tip)? {
                return Ok(Some(workflow));
            }
        }
        Ok(None)
    }

    /// Whether the chain ending at `tip` replays clean from its root, every transition
    /// recorded.
    fn replays_whole(
        &mut self,
        session: &Session,
        tip: gix::ObjectId,
    ) -> Result<bool, EngineError> {
        if let Some(clean) = self.whole.get(&tip) {
            return Ok(*clean);
        }
        let chain = super::chain::audit_chain(&session.store, "(a chain)", tip, None)?;
        let clean = chain.forged.is_none() && chain.unrecorded == 0;
        self.whole.insert(tip, clean);
        Ok(clean)
    }
}

fn chain_verified_trees(session: &Session) -> Result<ChainTrees, EngineError> {
    let store = &session.store;
    let mut sources: HashMap<String, Vec<(gix::ObjectId, gix::ObjectId)>> = HashMap::new();
    let mut squashes: HashMap<String, Vec<(gix::ObjectId, gix::ObjectId, String)>> = HashMap::new();
    let mut seen = HashSet::new();
    for (workflow, tip) in store.all_workflow_tips()? {
        let mut next = Some(tip);
        while let Some(id) = next {
            if !seen.insert(id) {
                break;
            }
            let record = store.commit_record(id)?;
            next = record.parents.first().copied();
            let Some(Ok(event)) = record
                .event
                .map(|json| serde_json::from_str::<Event>(&json))
            else {
                continue;
            };
            let tree = match event {
                Event::CheckpointRecorded { tree, .. } => Some(tree),
                Event::PreflightPassed { cache } => Some(cache.tree),
                Event::TestRan(run) => run.preflight.and_then(|p| p.verified_tree),
                Event::Squashed { commit, .. } => {
                    squashes
                        .entry(commit)
                        .or_default()
                        .push((tip, id, workflow.clone()));
                    None
                }
                _ => None,
            };
            if let Some(tree) = tree {
                sources.entry(tree).or_default().push((tip, id));
            }
        }
    }
    Ok(ChainTrees {
        sources,
        squashes,
        whole: HashMap::new(),
    })
}

fn bad_range(revs: &[&str], e: GitError) -> EngineError {
    EngineError::BadInput {
        message: format!(
            "git cannot list the commits of {}: {}",
            revs.join(" "),
            e.stderr.trim()
        ),
        hint: "Give a range git understands, like main..HEAD or HEAD~10..HEAD.".into(),
    }
}

#[cfg(test)]
#[path = "notes_tests.rs"]
mod unit_tests;
