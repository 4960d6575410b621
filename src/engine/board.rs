//! `board`: every workflow of the repository, here and on a remote as last fetched, with its
//! PR, state, step, claim, last activity, how far its branch is behind main and the
//! worktree it is checked out in; and the master plan's PRs nobody has taken
//! (docs/worktrees.md, "The board"). Read-only and offline: it reads refs, objects and
//! config files in-process, and runs git only for `git status` in the worktrees that hold a
//! listed workflow, in parallel with the rest.
//!
//! Whatever a remote sent is data to show, not to trust: a workflow that cannot be read is a
//! row that says so, a claim ref that holds no claim of ours is left out with a warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use gix::ObjectId;
use serde::Serialize;

use super::claims::{self, master_plan_text};
use super::status::Progress;
use super::{EngineError, Session};
use crate::exec::{GitError, StartedStatus};
use crate::store::{
    Checkout, Claim, Snapshot, Store, StoreError, TicketSnapshot, branch_ref, tracking_ref,
    workflow_ref,
};
use crate::workflow::briefing::StepView;
use crate::workflow::claims as rules;
use crate::workflow::ledger::{self, Ledger};
use crate::workflow::ticket::TicketState;
use crate::workflow::{State, Status};

/// What `board` reports (docs/worktrees.md, "The board").
#[derive(Clone, Debug, Serialize)]
pub struct BoardReport {
    /// The remote whose copies (as last fetched) are shown; `None`: no remote.
    pub remote: Option<String>,
    pub main_branch: String,
    /// The clock claim ages and expiries are judged by, seconds since the epoch.
    pub now: i64,
    pub workflows: Vec<BoardRow>,
    /// The master plan's PR headings that are not `[DONE]`, not claimed (in force) and not
    /// the active plan of a listed workflow.
    pub unclaimed: Vec<UnclaimedPr>,
    pub warnings: Vec<String>,
}

/// One workflow, here or on the remote or both.
#[derive(Clone, Debug, Serialize)]
pub struct BoardRow {
    pub workflow: String,
    /// This clone's tip; `None` when only the remote has the workflow.
    pub local_tip: Option<String>,
    /// The remote's tip as last fetched; `None` when it has none (or there is no remote).
    pub remote_tip: Option<String>,
    /// Which copy the rest of the row describes: `local`, else `remote`.
    pub shown: &'static str,
    /// Why that copy cannot be read (a remote may hold anything); the rest is then empty.
    pub error: Option<String>,
    /// `tdd`, or `ticket` for a ticket workflow (docs/tickets.md); `None` when unreadable.
    pub kind: Option<&'static str>,
    /// A TDD workflow's state, or a ticket's (`MANAGER`, `DEVELOPER`, …).
    pub state: Option<WorkflowState>,
    /// The PR's key: the slug of its master-plan heading (what it is claimed by).
    pub pr: Option<String>,
    pub pr_title: Option<String>,
    pub branch: Option<String>,
    /// The same step shape as `get-task --json`.
    pub step: Option<StepView>,
    /// A ticket's current subtask (assigned, or waiting for the manager).
    pub subtask: Option<String>,
    /// The current step's debugging attempt now (0: not debugging), as `get-task --json`
    /// reports it as `attempt`; a ticket has none. Not the ledger's `failed_attempts`.
    pub debugging_attempt: u32,
    pub progress: Option<Progress>,
    pub claim: Option<ClaimSeen>,
    /// The tip commit's time, seconds since the epoch.
    pub last_activity: Option<i64>,
    /// Commits on the main branch since the PR branch left it (first parents); `None` when
    /// there is no local PR branch.
    pub behind_main: Option<usize>,
    /// The worktree whose config selects this workflow, when there is one.
    pub worktree: Option<BoardWorktree>,
    /// Time, attempts, turns and tokens (docs/board.md, "The ledger"); `None` when the copy
    /// cannot be read.
    pub ledger: Option<Ledger>,
    /// The human's answer a `HALTED` workflow waits for, with the command that gives it.
    pub gate: Option<HumanGate>,
    /// Finished and archived (docs/refs.md, "The archive"): listed by `board --all` only,
    /// `local_tip` being the tip the archive holds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
}

/// A human gate that waits: the answer, and the exact commands that give it
/// (docs/humans.md; signed answers: docs/integrity.md, "Signed human answers").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HumanGate {
    /// `resume`.
    pub answer: &'static str,
    pub command: String,
    /// Whether the PR's pinned configuration says `[human] require = "signature"`; `None`
    /// when it cannot be read (then the signing commands are given too).
    pub signature_required: Option<bool>,
    /// The answer signed here: `KEY` is the path of your SSH key.
    pub sign_command: Option<String>,
    /// The answer signed elsewhere: print the payload, sign it, hand the signature in.
    pub sign_elsewhere: Vec<String>,
}

impl HumanGate {
    /// `answer` on `workflow`; `required` as the pinned configuration says it.
    fn new(workflow: &str, answer: &'static str, required: Option<bool>) -> HumanGate {
        let base = format!(
            "git orchestrate --workflow {} {answer}",
            crate::workflow::briefing::shell_quote(workflow)
        );
        let signed = required != Some(false);
        HumanGate {
            answer,
            command: base.clone(),
            signature_required: required,
            sign_command: signed.then(|| format!("{base} --sign-key KEY")),
            sign_elsewhere: if signed {
                vec![
                    format!("{base} --print-payload > answer"),
                    "ssh-keygen -Y sign -n git-orchestrate -f KEY answer".to_string(),
                    format!("{base} --signature answer.sig"),
                ]
            } else {
                Vec::new()
            },
        }
    }
}

/// A workflow's state as the board and `sync` show it: a TDD workflow's or a ticket's,
/// either as its name in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum WorkflowState {
    Tdd(Status),
    Ticket(TicketState),
}

impl std::fmt::Display for WorkflowState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkflowState::Tdd(status) => status.fmt(f),
            WorkflowState::Ticket(state) => f.write_str(state.as_str()),
        }
    }
}

/// A copy of a workflow as read: either kind.
enum Read {
    Tdd(Box<Snapshot>),
    Ticket(Box<TicketSnapshot>),
}

/// Reads workflow commit `tip` as whichever kind it holds.
fn read_any(store: &Store, tip: ObjectId, reference: &str) -> Result<Read, StoreError> {
    Ok(match store.workflow_at(tip, reference)? {
        crate::store::Workflow::Ticket(snap) => Read::Ticket(snap),
        crate::store::Workflow::Tdd(snap) => Read::Tdd(snap),
    })
}

/// A claim as the board shows it, beside a workflow.
#[derive(Clone, Debug, Serialize)]
pub struct ClaimSeen {
    #[serde(flatten)]
    pub claim: Claim,
    /// `local`, or the remote whose copy (as last fetched) it is.
    pub source: String,
    /// Seconds since it was taken.
    pub age_s: i64,
    pub expired: bool,
}

/// A worktree that holds a workflow.
#[derive(Clone, Debug, Serialize)]
pub struct BoardWorktree {
    pub path: PathBuf,
    pub primary: bool,
    pub branch: Option<String>,
    /// The entries `git status` lists (an untracked directory counts once); `None` when it
    /// could not say.
    pub uncommitted: Option<usize>,
    /// Commits checked out there that the remote does not have (its copy of the branch, else
    /// of main, as last fetched); `None` without a remote.
    pub unpushed: Option<usize>,
}

/// A PR of the master plan that is free to plan.
#[derive(Clone, Debug, Serialize)]
pub struct UnclaimedPr {
    pub pr: String,
    pub heading: String,
}

/// A fingerprint of the refs the board is made of (`board --serve`'s `/tips`): it changes
/// when a workflow, claim, remote copy or branch moves. What it leaves out (a worktree's
/// uncommitted files) shows at the next fetch of the whole board.
pub fn board_fingerprint(session: &Session) -> Result<String, EngineError> {
    Ok(session.store.board_fingerprint()?)
}

/// Gathers the board: `remote` is `--remote`, else the one claims go through.
pub fn board(session: &Session, remote: Option<&str>) -> Result<BoardReport, EngineError> {
    board_with(session, remote, false, true)
}

/// As [`board`]; with `all`, the archived workflows too (`board --all`), which the live
/// board never reads: its cost is the live workflows' (docs/refs.md, "The archive"). Without
/// `ledgers`, each row's `ledger` is left `None` and no workflow's history is read: the
/// table people read shows none (docs/board.md, "The ledger").
pub fn board_with(
    session: &Session,
    remote: Option<&str>,
    all: bool,
    ledgers: bool,
) -> Result<BoardReport, EngineError> {
    let store = &session.store;
    let mut warnings = Vec::new();
    let mut local = store.local_workflows()?;
    let mut archived = BTreeSet::new();
    if all {
        for (name, tip) in store.archived_workflows()? {
            if !local.contains_key(&name) {
                local.insert(name.clone(), tip);
                archived.insert(name);
            }
        }
    }
    // `git status` in each worktree that holds a workflow of this clone, started first: it
    // runs while the rest is read (`start_uncommitted_entries` says why a process, not a
    // thread).
    let checkouts: Vec<Checkout> = store
        .checkouts()
        .into_iter()
        .filter(|c| local.contains_key(&c.workflow))
        .collect();
    let git = &session.git;
    let start = |c: &Checkout| -> Result<StartedStatus, GitError> {
        // git would wait for ever there: the board says so for that worktree.
        match session.refuse_waiting_reads(Some(&c.path)) {
            Err(e) => Err(GitError {
                command: "git status".into(),
                status: None,
                stderr: e.to_string(),
            }),
            Ok(()) => Ok(git.at(&c.path).start_uncommitted_entries()),
        }
    };
    // At most this many run at once, each holding two pipes open here: the rest start as
    // the first are read.
    const AHEAD: usize = 16;
    let mut statuses: Vec<Option<Result<StartedStatus, GitError>>> = checkouts
        .iter()
        .enumerate()
        .map(|(i, c)| (i < AHEAD).then(|| start(c)))
        .collect();
    let remote = board_remote(session, remote, &mut warnings)?;
    let main_branch = session.main_branch(None)?;
    let tracking = match &remote {
        Some(remote) => store.tracking_workflows(remote)?,
        None => BTreeMap::new(),
    };
    let names: BTreeSet<&String> = local.keys().chain(tracking.keys()).collect();
    let mut report = gather(
        session,
        (remote, main_branch),
        &names,
        (&local, &tracking),
        ledgers,
        &mut warnings,
    )?;
    for row in &mut report.workflows {
        row.archived = archived.contains(&row.workflow);
    }
    let mut counted = Vec::with_capacity(checkouts.len());
    for i in 0..checkouts.len() {
        if let Some(c) = checkouts.get(i + AHEAD) {
            statuses[i + AHEAD] = Some(start(c));
        }
        let started = statuses[i].take().unwrap_or_else(|| start(&checkouts[i]));
        counted.push(started.and_then(StartedStatus::finish));
    }
    let statuses = counted;
    attach_worktrees(session, &mut report, &checkouts, statuses, &mut warnings)?;
    report.warnings = warnings;
    Ok(report)
}

/// The remote shown: `asked` (which must exist), else the configured `remote`, else
/// `origin`, else the only one: the choice `claims::claim_remote` makes, without a process.
fn board_remote(
    session: &Session,
    asked: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, EngineError> {
    let remotes = session.store.remote_names();
    if let Some(name) = asked {
        return if remotes.iter().any(|r| r == name) {
            Ok(Some(name.to_string()))
        } else {
            Err(EngineError::BadInput {
                message: format!("there is no remote \"{name}\""),
                hint: format!(
                    "`git remote` lists the remotes ({}); the board reads what was last fetched from one.",
                    if remotes.is_empty() {
                        "there are none".to_string()
                    } else {
                        remotes.join(", ")
                    }
                ),
            })
        };
    }
    match session.load_config(None) {
        Ok(loaded) => {
            if let Some(name) = loaded.config.remote.clone() {
                if remotes.contains(&name) {
                    return Ok(Some(name));
                }
                warnings.push(format!(
                    "the configured remote \"{name}\" does not exist: add it with `git remote add {name} <url>`"
                ));
            }
        }
        Err(EngineError::Config(e)) => warnings.push(format!("the configuration is invalid: {e}")),
        Err(e) => return Err(e),
    }
    if remotes.iter().any(|r| r == "origin") {
        return Ok(Some("origin".to_string()));
    }
    Ok(match remotes.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    })
}

/// The rows and the unclaimed PRs, without the worktrees.
fn gather(
    session: &Session,
    (remote, main_branch): (Option<String>, String),
    names: &BTreeSet<&String>,
    (local, tracking): (&BTreeMap<String, ObjectId>, &BTreeMap<String, ObjectId>),
    ledgers: bool,
    warnings: &mut Vec<String>,
) -> Result<BoardReport, EngineError> {
    // A hundred state blobs are deltas of one another once packed: decompressed once each.
    let cached = session.store.with_pack_cache();
    let store = &cached;
    let now = claims::now();
    let master = match master_plan(session, remote.as_deref(), &main_branch) {
        Ok(text) => text,
        Err(e) => {
            warnings.push(format!("the master plan cannot be read: {e}"));
            None
        }
    };
    let claims = seen_claims(session, remote.as_deref(), now, warnings)?;
    let main_tip = store.ref_tip(&branch_ref(&main_branch))?;
    // The ledgers' run records, listed once.
    let runs = if ledgers {
        store.local_runs()?
    } else {
        BTreeMap::new()
    };
    let keys = PrKeys::new(master.as_deref());
    let mut rows = Vec::new();
    for name in names {
        let local_tip = local.get(*name).copied();
        let remote_tip = tracking.get(*name).copied();
        let tracking_name = |remote: &str| tracking_ref(remote, name);
        // This clone's copy first; the remote's when that is all there is, or all that reads.
        let theirs = || {
            let remote = remote.as_deref()?;
            remote_tip.map(|tip| ("remote", read_any(store, tip, &tracking_name(remote))))
        };
        let local_read = local_tip.map(|tip| read_any(store, tip, &workflow_ref(name)));
        let copy = copy_to_show(local_read.as_ref().map(Result::is_ok), remote_tip.is_some());
        let read = match (copy, local_read) {
            (ShownCopy::Local, Some(read)) => Some(("local", read)),
            (ShownCopy::RemoteOverBroken, Some(Err(e))) => {
                warnings.push(format!(
                    "this clone's copy of workflow {name} cannot be read ({e}): the remote's is shown"
                ));
                theirs()
            }
            _ => theirs(),
        };
        let Some((shown, read)) = read else { continue };
        let mut row = blank_row(name, local_tip, remote_tip, shown);
        let shown_tip = if shown == "local" {
            local_tip
        } else {
            remote_tip
        };
        match read {
            Ok(Read::Tdd(snapshot)) => describe(session, &mut row, &snapshot, &keys, main_tip),
            Ok(Read::Ticket(snap)) => describe_ticket(session, &mut row, &snap, main_tip),
            Err(e) => row.error = Some(e.to_string()),
        }
        if ledgers
            && row.error.is_none()
            && let Some(tip) = shown_tip
        {
            match workflow_ledger(store, &runs, name, tip) {
                Ok(l) => row.ledger = Some(l),
                Err(e) => {
                    warnings.push(format!("the ledger of workflow {name} cannot be read: {e}"))
                }
            }
        }
        row.claim = claim_of(&row, &claims);
        rows.push(row);
    }
    let unclaimed = unclaimed(master.as_deref(), &rows, &claims);
    Ok(BoardReport {
        remote,
        main_branch,
        now,
        workflows: rows,
        unclaimed,
        warnings: Vec::new(),
    })
}

/// Which copy of a workflow the board shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShownCopy {
    Local,
    Remote,
    /// The remote's, because this clone's cannot be read: said in a warning.
    RemoteOverBroken,
}

/// This clone's copy first; the remote's when that is all there is, or all that reads.
/// `local`: whether this clone's copy reads (`None`: there is none); `remote`: the remote has
/// one. A broken copy with none on the remote is shown, with its error.
fn copy_to_show(local: Option<bool>, remote: bool) -> ShownCopy {
    match local {
        Some(false) if remote => ShownCopy::RemoteOverBroken,
        Some(_) => ShownCopy::Local,
        None => ShownCopy::Remote,
    }
}

/// A row of workflow `name` with nothing described yet.
fn blank_row(
    name: &str,
    local_tip: Option<ObjectId>,
    remote_tip: Option<ObjectId>,
    shown: &'static str,
) -> BoardRow {
    BoardRow {
        workflow: name.to_string(),
        local_tip: local_tip.map(|t| t.to_string()),
        remote_tip: remote_tip.map(|t| t.to_string()),
        shown,
        error: None,
        kind: None,
        state: None,
        pr: None,
        pr_title: None,
        branch: None,
        step: None,
        subtask: None,
        debugging_attempt: 0,
        progress: None,
        claim: None,
        last_activity: None,
        behind_main: None,
        worktree: None,
        ledger: None,
        gate: None,
        archived: false,
    }
}

/// The most turns of one workflow's run record the ledger reads.
const LEDGER_TURNS: usize = 100_000;

/// The ledger of the chain at `tip`, with this clone's record of `run`'s turns of the
/// workflow (docs/board.md, "The ledger").
fn workflow_ledger(
    store: &Store,
    runs: &BTreeMap<String, ObjectId>,
    name: &str,
    tip: ObjectId,
) -> Result<Ledger, StoreError> {
    let transitions =
        store.transitions_with_attempts(tip, &workflow_ref(name), ledger::reads_attempt)?;
    let turns = match runs.get(name) {
        Some(tip) => Some(store.run_turn_records(*tip, LEDGER_TURNS)?),
        None => None,
    }
    .map(|records| {
        records
            .iter()
            .map(|bytes| {
                // A record `run` wrote; anything else in it is no figure.
                let v: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
                let usage = &v["usage"];
                ledger::Turn {
                    tip_after: v["tip_after"].as_str().map(str::to_string),
                    input_tokens: usage["input_tokens"].as_u64(),
                    output_tokens: usage["output_tokens"].as_u64(),
                    cost_usd: usage["cost_usd"]
                        .as_f64()
                        .filter(|c| c.is_finite() && *c >= 0.0),
                }
            })
            .collect::<Vec<_>>()
    });
    Ok(ledger::ledger(&transitions, turns.as_deref()))
}

/// The master plan as the newest main this clone knows has it: the remote's (as last
/// fetched) when it is ahead of this clone's main, which a clone whose agents merge through
/// the remote leaves behind (a PR another clone merged is `[DONE]` only there); else this
/// clone's.
fn master_plan(
    session: &Session,
    remote: Option<&str>,
    main_branch: &str,
) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let theirs = match remote {
        Some(remote) => store.tracking_branch(remote, main_branch)?,
        None => None,
    };
    if let Some(theirs) = theirs {
        let ahead = match store.ref_tip(&branch_ref(main_branch))? {
            None => true,
            Some(ours) => store
                .relation(ours, theirs)
                .is_ok_and(|r| r.ahead == 0 && r.behind > 0),
        };
        if ahead {
            let config = session.load_config(None)?.config;
            return session.master_plan_at(&theirs.to_string(), &config.master_plan);
        }
    }
    master_plan_text(session, &State::new(None))
}

/// The key of each PR title: [`rules::pr_slug`] with the master plan read once, not once per
/// workflow (a hundred workflows would parse it a hundred times).
struct PrKeys {
    /// The open headings' slugs by their title in lower case; the first heading wins.
    by_title: std::collections::HashMap<String, String>,
}

impl PrKeys {
    fn new(master: Option<&str>) -> PrKeys {
        let mut by_title = std::collections::HashMap::new();
        for heading in master
            .map(crate::workflow::master_plan::open_prs)
            .unwrap_or_default()
        {
            let title = crate::workflow::master_plan::heading_title(&heading).to_ascii_lowercase();
            if !title.is_empty() {
                by_title
                    .entry(title)
                    .or_insert_with(|| rules::slug(&heading));
            }
        }
        PrKeys { by_title }
    }

    fn key(&self, title: &str) -> String {
        self.by_title
            .get(&title.trim().to_ascii_lowercase())
            .cloned()
            .unwrap_or_else(|| rules::slug(title))
    }
}

/// Fills in what the workflow's snapshot says.
fn describe(
    session: &Session,
    row: &mut BoardRow,
    snapshot: &Snapshot,
    keys: &PrKeys,
    main_tip: Option<ObjectId>,
) {
    let state = &snapshot.state;
    let plan = snapshot.summary.as_ref();
    row.kind = Some("tdd");
    row.state = Some(WorkflowState::Tdd(state.status()));
    row.pr_title = plan.map(|p| p.title.clone());
    row.pr = plan.map(|p| keys.key(&p.title));
    row.branch = state.branch().map(str::to_string);
    row.step = plan.and_then(|p| p.current.as_ref()).map(StepView::from);
    row.debugging_attempt = state.attempts();
    if state.status() == Status::Halted {
        // The answer is judged under the PR's pinned configuration, as `resume` judges it.
        let required = super::answers::answer_config(session, state)
            .ok()
            .map(|c| c.human.require == crate::config::HumanProof::Signature);
        row.gate = Some(HumanGate::new(&row.workflow, "resume", required));
    }
    row.progress = plan.map(|p| Progress {
        done: p.done,
        total: p.total,
    });
    row.last_activity = Some(snapshot.time);
    let branch_tip = row
        .branch
        .as_deref()
        .filter(|_| state.status() != Status::CreatingBranch)
        .and_then(|b| session.store.ref_tip(&branch_ref(b)).ok().flatten());
    if let (Some(branch), Some(main)) = (branch_tip, main_tip) {
        row.behind_main = session.store.relation(branch, main).ok().map(|r| r.behind);
    }
}

/// Fills in what a ticket says (docs/tickets.md): its state, title and branch, its current
/// subtask, complete subtasks of all. A ticket has no master-plan PR, so no claim.
fn describe_ticket(
    session: &Session,
    row: &mut BoardRow,
    snap: &TicketSnapshot,
    main_tip: Option<ObjectId>,
) {
    let t = &snap.ticket;
    row.kind = Some("ticket");
    row.state = Some(WorkflowState::Ticket(t.state));
    row.pr_title = Some(t.title.clone());
    row.branch = Some(t.branch.clone());
    row.subtask = t.current.clone();
    if t.state == TicketState::Halted {
        // A ticket's `resume` takes no signature in this version (src/cli/resume.rs).
        row.gate = Some(HumanGate::new(&row.workflow, "resume", Some(false)));
    }
    row.progress = Some(super::ticket::progress(t));
    row.last_activity = Some(snap.time);
    let branch_tip = session.store.ref_tip(&branch_ref(&t.branch)).ok().flatten();
    if let (Some(branch), Some(main)) = (branch_tip, main_tip) {
        row.behind_main = session.store.relation(branch, main).ok().map(|r| r.behind);
    }
}

/// Every claim this clone knows, by PR key, as the remote was last seen (else as this clone
/// holds it), expired ones included: the board shows them.
fn seen_claims(
    session: &Session,
    remote: Option<&str>,
    now: i64,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, ClaimSeen>, EngineError> {
    let store = &session.store;
    let mut refs: BTreeMap<String, (String, ObjectId)> = BTreeMap::new();
    if let Some(remote) = remote {
        for (pr, id) in store.tracking_claims(remote)? {
            refs.insert(pr, (remote.to_string(), id));
        }
    }
    for (pr, id) in store.local_claims()? {
        refs.entry(pr).or_insert(("local".to_string(), id));
    }
    let mut out = BTreeMap::new();
    for (pr, (source, id)) in refs {
        match store.read_claim(id).ok().flatten() {
            Some((claim, _)) => {
                let seen = ClaimSeen {
                    age_s: now.saturating_sub(claim.since),
                    expired: rules::expired(claim.expires, now),
                    claim,
                    source,
                };
                out.insert(pr, seen);
            }
            None => warnings.push(format!(
                "the claim ref for PR {pr} ({source}, {}) holds no claim of ours: it holds nothing",
                crate::short_id(&id.to_string())
            )),
        }
    }
    Ok(out)
}

/// The claim on the row's PR, whoever holds it (a holder other than the row's workflow is
/// worth seeing). Not matched by the holder's name: two clones may each have a `main`.
fn claim_of(row: &BoardRow, claims: &BTreeMap<String, ClaimSeen>) -> Option<ClaimSeen> {
    row.pr.as_ref().and_then(|pr| claims.get(pr)).cloned()
}

/// The master plan's open PRs that no claim in force and no listed workflow's plan takes.
fn unclaimed(
    master: Option<&str>,
    rows: &[BoardRow],
    claims: &BTreeMap<String, ClaimSeen>,
) -> Vec<UnclaimedPr> {
    let Some(text) = master else {
        return Vec::new();
    };
    let active: BTreeSet<&str> = rows.iter().filter_map(|r| r.pr.as_deref()).collect();
    crate::workflow::master_plan::open_prs(text)
        .into_iter()
        .filter_map(|heading| {
            let pr = rules::slug(&heading);
            let taken = active.contains(pr.as_str()) || claims.get(&pr).is_some_and(|c| !c.expired);
            (!taken).then_some(UnclaimedPr { pr, heading })
        })
        .collect()
}

/// Puts each worktree beside the workflow its config selects, with what `git status` found
/// and what it has not pushed.
fn attach_worktrees(
    session: &Session,
    report: &mut BoardReport,
    checkouts: &[Checkout],
    statuses: Vec<Result<usize, GitError>>,
    warnings: &mut Vec<String>,
) -> Result<(), EngineError> {
    let store = &session.store;
    let remote_main = match &report.remote {
        Some(remote) => store.tracking_branch(remote, &report.main_branch)?,
        None => None,
    };
    for (checkout, status) in checkouts.iter().zip(statuses) {
        let Some(row) = report
            .workflows
            .iter_mut()
            .find(|r| r.workflow == checkout.workflow && r.worktree.is_none())
        else {
            continue;
        };
        let uncommitted = match status {
            Ok(entries) => Some(entries),
            Err(e) => {
                warnings.push(format!(
                    "the worktree {} cannot be looked at: {e}",
                    checkout.path.display()
                ));
                None
            }
        };
        let unpushed = match (&report.remote, checkout.head) {
            (Some(remote), Some(head)) => {
                let upstream = match &checkout.branch {
                    Some(branch) => store.tracking_branch(remote, branch)?,
                    None => None,
                }
                .or(remote_main);
                upstream.and_then(|upstream| store.relation(head, upstream).ok().map(|r| r.ahead))
            }
            _ => None,
        };
        row.worktree = Some(BoardWorktree {
            path: checkout.path.clone(),
            primary: checkout.primary,
            branch: checkout.branch.clone(),
            uncommitted,
            unpushed,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn seen(slug: &str, expired: bool) -> ClaimSeen {
        ClaimSeen {
            claim: Claim {
                slug: slug.into(),
                workflow: "a".into(),
                host: "h".into(),
                user: "u".into(),
                since: 0,
                expires: 0,
                nonce: "n".into(),
            },
            source: "origin".into(),
            age_s: 0,
            expired,
        }
    }

    /// Free: open, not claimed in force, not planned by a listed workflow.
    #[test]
    fn a_pr_is_free_unless_done_claimed_in_force_or_planned() {
        let plan = "# Plan\n## PR 1: Done [DONE] abc\n## PR 2: Claimed\n## PR 3: Lapsed\n\
                    ## PR 4: Planned\n## PR 5: Free\n";
        let claims = BTreeMap::from([
            ("pr-2-claimed".to_string(), seen("pr-2-claimed", false)),
            ("pr-3-lapsed".to_string(), seen("pr-3-lapsed", true)),
        ]);
        let planned = BoardRow {
            workflow: "b".into(),
            local_tip: None,
            remote_tip: None,
            shown: "local",
            error: None,
            kind: None,
            state: None,
            pr: Some("pr-4-planned".into()),
            pr_title: None,
            branch: None,
            step: None,
            subtask: None,
            debugging_attempt: 0,
            progress: None,
            claim: None,
            last_activity: None,
            behind_main: None,
            worktree: None,
            ledger: None,
            gate: None,
            archived: false,
        };
        let free: Vec<String> = unclaimed(Some(plan), &[planned], &claims)
            .into_iter()
            .map(|p| p.pr)
            .collect();
        assert_eq!(free, ["pr-3-lapsed", "pr-5-free"]);
        assert!(unclaimed(None, &[], &claims).is_empty());
    }

    /// The board's keys are the ones claims are taken by.
    #[test]
    fn keys_are_the_claims_keys() {
        let plan = "# Plan\n## PR 1: feat: Add [DONE] abc\n## PR 2: feat: Multiply\n\
                    ### PR-3 Divide ###\n```\n## PR 4: fenced\n```\n## PR 5: feat: multiply\n";
        for master in [Some(plan), None] {
            let keys = PrKeys::new(master);
            for title in [
                "feat: Multiply",
                " FEAT: MULTIPLY ",
                "feat: Add",
                "Divide",
                "fenced",
                "",
                "Ωmega",
            ] {
                assert_eq!(keys.key(title), rules::pr_slug(master, title), "{title:?}");
            }
        }
    }

    #[test]
    fn the_board_shows_this_clones_copy_unless_only_the_remotes_reads() {
        // Each row: this clone's copy (None: none; Some(reads)), the remote has one, shown.
        let table = [
            ("only here", Some(true), false, ShownCopy::Local),
            ("both, this one reads", Some(true), true, ShownCopy::Local),
            (
                "this one broken, the remote's shown",
                Some(false),
                true,
                ShownCopy::RemoteOverBroken,
            ),
            (
                "broken with nothing else: its error shown",
                Some(false),
                false,
                ShownCopy::Local,
            ),
            ("only on the remote", None, true, ShownCopy::Remote),
        ];
        for (case, local, remote, expected) in table {
            assert_eq!(copy_to_show(local, remote), expected, "{case}");
        }
    }
}
