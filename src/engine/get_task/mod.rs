//! `get-task`: performs the orchestrator's own steps for the current state (drop a stale
//! plan, create the PR branch, record a checkpoint) and returns the briefing.

mod blocked;
mod land;
pub(crate) mod landing;
pub(crate) mod merge;

use self::blocked::{Blocked, dirty};
use self::merge::merge;
use super::branches::{check_branch_free, free_branch_name};
use super::verify::protected_changes;
use super::{EngineError, Facts, Session};
use crate::gates::review::{ReviewContext, run_review};
use crate::store::Snapshot;
use serde::Serialize;

use crate::workflow::briefing::{self, BranchOutcome, Briefing, DoneAction, Notice, StepView};
use crate::workflow::{self, Event, GetTaskStep, Pending, State, Status};

/// At most this many orchestrator steps per `get-task`; each state needs at most two.
const MAX_STEPS: usize = 8;

/// What `get-task` answers (docs/agent-guide.md, "`get-task --json`").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GetTaskReport {
    pub workflow: String,
    pub state: Status,
    pub branch: Option<String>,
    pub step: Option<StepView>,
    pub attempt: u32,
    pub pending: Option<&'static str>,
    /// Nothing is left to do (docs/agent-guide.md, "Nothing left to do"): an unattended
    /// agent stops here.
    pub idle: bool,
    pub briefing: String,
    /// The workflow waits for a human: `get-task` exits 10.
    #[serde(skip)]
    pub halted: bool,
    /// Why the PR branch could not be created (the briefing says it too): `get-task` exits 4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_blocked: Option<String>,
}

/// The briefing and the state it was made for.
pub(super) struct TaskReport {
    pub state: State,
    pub briefing: Briefing,
    pub halted: bool,
    pub idle: bool,
    pub branch_blocked: Option<String>,
}

impl TaskReport {
    pub(super) fn report(self, session: &Session) -> GetTaskReport {
        GetTaskReport {
            workflow: session.store.workflow().to_string(),
            state: self.state.status(),
            branch: self.state.branch().map(str::to_string),
            step: self.briefing.step,
            attempt: self.briefing.attempt,
            pending: self.state.pending().as_ref().map(Pending::kind),
            idle: self.idle,
            briefing: self.briefing.text,
            halted: self.halted,
            branch_blocked: self.branch_blocked,
        }
    }
}

/// `get-task` on a TDD workflow; a ticket workflow is refused.
pub fn get_task(session: &Session) -> Result<GetTaskReport, EngineError> {
    Ok(brief(session)?.report(session))
}

/// `get-task` where it would only brief: no plan push to adopt, the workflow exists and is
/// past INITIALIZING (no remote to read for main), and its state asks for no orchestrator
/// step (`GetTaskStep::Brief` or `Halted`). Then it reads and writes nothing but what
/// [`get_task`] reads, starts no process, and answers what [`get_task`] would answer.
/// `None` where [`get_task`] would act or refuse: the caller runs that instead.
///
/// For a caller that can answer a read at once but must hand anything that acts to a
/// thread that can be cancelled (the MCP server, src/cli/mcp.rs).
pub fn brief_only(session: &Session) -> Result<Option<GetTaskReport>, EngineError> {
    session.with_retries(|| {
        if session.store.plan_push().is_some() {
            return Ok(None);
        }
        let Some(snap) = session
            .store
            .read_workflow()?
            .and_then(|workflow| workflow.into_tdd())
        else {
            return Ok(None);
        };
        if snap.state.status() == Status::Initializing {
            return Ok(None);
        }
        match workflow::get_task_step(&snap.state, snap.summary.as_ref()) {
            GetTaskStep::Brief | GetTaskStep::Halted => {}
            _ => return Ok(None),
        }
        // As `attempt` does when its first step is to brief: nothing done, nothing noted.
        let facts = session.facts(Some(&snap.state))?;
        let report = report(session, &facts, snap, &[], Vec::new(), None)?;
        Ok(Some(report.report(session)))
    })
}

/// What `get-task` found in the selected workflow, told by its first read.
pub enum Task {
    Tdd(Box<GetTaskReport>),
    /// A ticket workflow: its briefing is the ticket's own, by role (engine/ticket).
    Ticket,
}

/// `get-task` on either kind of workflow: a TDD workflow acted on and briefed, or a ticket
/// left to its own briefing. The kind costs the hot path nothing: it is the first read's.
pub fn task(session: &Session) -> Result<Task, EngineError> {
    Ok(match session.with_retries(|| attempt(session))? {
        Some(task) => Task::Tdd(Box::new(task.report(session))),
        None => Task::Ticket,
    })
}

/// Acts as the state requires, then briefs; a ticket workflow is refused.
pub(super) fn brief(session: &Session) -> Result<TaskReport, EngineError> {
    session
        .with_retries(|| attempt(session))?
        .ok_or_else(|| session.ticket_refused())
}

/// One attempt at [`brief`]; `None` when the workflow holds a ticket.
fn attempt(session: &Session) -> Result<Option<TaskReport>, EngineError> {
    let mut progress = Progress::default();
    super::claims::adopt_pushed_plan(session)?;
    let Some(mut snap) = session.read_or_create_workflow()?.into_tdd() else {
        return Ok(None);
    };
    // The facts of each state the attempt reads, gathered once and handed down (as
    // src/engine/session.rs `facts` says; asked for piecemeal, one get-task read the main
    // branch's name nine times).
    let mut facts = session.facts(Some(&snap.state))?;
    if snap.state.status() == Status::Initializing {
        refresh_main(session, &facts, &snap.state)?;
    }
    for _ in 0..MAX_STEPS {
        let step = workflow::get_task_step(&snap.state, snap.summary.as_ref());
        let Some(event) = carry_out(session, &facts, &snap, step, &mut progress)? else {
            break;
        };
        if let Event::BranchBlocked { reason } = &event {
            progress.blocked = Some(reason.clone());
        }
        if workflow::already_recorded(&snap.state, &event) {
            break;
        }
        let stop = workflow::get_task_stops_after(&event);
        let merged = matches!(event, Event::Merged { .. });
        // The landing records its own merge before it pushes it (docs/integrity.md, "A
        // landing in flight"): written already, and on the remote with main.
        if !std::mem::take(&mut progress.recorded) {
            let t = session.transition(&snap, event)?;
            super::claims::commit_claiming(session, &facts, &snap, &t, None)?;
            if merged {
                progress.notes.extend(publish_merge(session, &snap.state)?);
            }
        }
        snap = session.store.read()?.ok_or(EngineError::Conflict)?;
        facts = session.facts(Some(&snap.state))?;
        if merged {
            // The PR is done: its claim goes (docs/refs.md, "Claims"), after the merge is recorded, so a
            // crash between the two leaves a claim that lapses, never a merge unrecorded.
            match super::claims::release_own(session, &snap.state) {
                Ok(prs) if prs.is_empty() => {}
                Ok(prs) => progress.done.push(DoneAction::ReleasedClaims { prs }),
                Err(e) => progress.notes.push(Notice::ClaimNotReleased {
                    error: e.to_string(),
                }),
            }
            // `[archive] auto` (docs/config.md): the landing archives the finished workflows
            // too once `[archive] after` are; what fails here leaves the landing as it is.
            match super::archive::auto_archive(session) {
                Ok(Some(done)) if !done.archived.is_empty() => {
                    progress.done.push(DoneAction::Archived {
                        archived: done.archived.len(),
                        total: done.total,
                    })
                }
                Ok(_) => {}
                Err(e) => progress.notes.push(Notice::ArchiveNotDone {
                    error: e.to_string(),
                }),
            }
        }
        if stop {
            break;
        }
    }
    let mut report = report(
        session,
        &facts,
        snap,
        &progress.done,
        progress.notes,
        progress.guidance.as_deref(),
    )?;
    report.branch_blocked = progress.blocked;
    Ok(Some(report))
}

/// Before the agent reads the master plan to pick the next PR: main brought up to the
/// workflows' remote's, when that is a fast-forward that is safe where main is checked out,
/// so the PRs other workflows merged show as [DONE]. Whatever stops it, the briefing's
/// notice says main is behind, and branch creation tries again.
///
/// While the workflow is idle (nothing left to do), the remote is read at most once per
/// [`IDLE_READ_EVERY`]: an agent polling `get-task` would otherwise make every poll a round
/// trip to the remote, to learn that nothing changed.
fn refresh_main(session: &Session, facts: &Facts, state: &State) -> Result<(), EngineError> {
    let Some(remote) = super::remote::remote_under(session, facts.config())? else {
        return Ok(());
    };
    let main = &facts.main;
    if !session.store.branch_exists(main)? {
        return Ok(());
    }
    let now = super::claims::now();
    if state.idle.is_some()
        && let Some((when, _)) = session.store.last_remote_read(&remote)
        && (0..IDLE_READ_EVERY).contains(&now.saturating_sub(when))
        && session.idle_holds_on(state, main, &facts.config().master_plan)?
    {
        return Ok(());
    }
    let at = land::main_at(session, main)?;
    let found = match land::up_to_remote(session, main, &at, &remote)? {
        Ok(Some(theirs)) => theirs,
        Ok(None) => "none".to_string(),
        Err(_) => "blocked".to_string(),
    };
    session.store.remember_remote_read(&remote, now, &found);
    Ok(())
}

/// How often, in seconds, an idle workflow's `get-task` reads the remote.
const IDLE_READ_EVERY: i64 = 60;

/// Pushes the record of the merge just made to the remote main went to, so that other clones
/// count the merge as this workflow's (docs/architecture.md, "Finalization and merge"); a
/// push refused is named, never forced.
fn publish_merge(session: &Session, state: &State) -> Result<Option<Notice>, EngineError> {
    let Some(remote) = super::remote::coordination_remote(session, state)? else {
        return Ok(None);
    };
    Ok(super::remote::publish_workflow(session, &remote)
        .err()
        .map(|e| Notice::MergeRecordNotPushed {
            remote,
            said: e.stderr,
        }))
}

/// What the orchestrator's steps did so far in one `get-task`, for its briefing.
#[derive(Default)]
struct Progress {
    done: Vec<DoneAction>,
    notes: Vec<Notice>,
    guidance: Option<String>,
    /// Why the PR branch could not be created.
    blocked: Option<String>,
    /// The event carried out was recorded by the step itself (a landed merge).
    recorded: bool,
}

/// Carries out one orchestrator step: the event to record, or `None` when there is nothing
/// to do now and the briefing follows.
fn carry_out(
    session: &Session,
    facts: &Facts,
    snap: &Snapshot,
    step: GetTaskStep,
    progress: &mut Progress,
) -> Result<Option<Event>, EngineError> {
    let done = &mut progress.done;
    Ok(Some(match step {
        GetTaskStep::Brief | GetTaskStep::Halted => return Ok(None),
        GetTaskStep::DeliverGuidance => {
            progress.guidance.clone_from(&snap.state.guidance);
            Event::GuidanceDelivered
        }
        GetTaskStep::DropStalePlan => {
            let title = snap.summary.as_ref().map(|s| s.title.clone());
            done.push(DoneAction::DroppedStalePlan {
                title: title.clone(),
            });
            Event::StalePlanDropped { title }
        }
        GetTaskStep::AdoptPlan => {
            let Some(plan) = session.store.plan(snap)? else {
                return Ok(None);
            };
            let branch = free_branch_name(session, &plan.pr_title)?;
            check_branch_free(session, &branch, snap.state.status())?;
            done.push(DoneAction::AdoptedPlan {
                title: plan.pr_title.clone(),
            });
            Event::PlanSubmitted {
                plan,
                branch,
                summary: "get-task took up a plan stored in INITIALIZING".to_string(),
            }
        }
        GetTaskStep::PrepareBranch { branch } => {
            check_branch_free(session, &branch, snap.state.status())?;
            match prepare_branch(session, facts, &branch)? {
                BranchOutcome::Blocked { reason } => Event::BranchBlocked { reason },
                ready => {
                    done.push(DoneAction::Branch(ready));
                    // Where the branch left main bounds the search for checkpoint commits.
                    Event::BranchReady {
                        base: session.git.merge_base(&facts.main, &branch).ok(),
                        pin: session.pin_now(&facts.main)?,
                    }
                }
            }
        }
        GetTaskStep::LookForCheckpoint { since } => {
            return look_for_checkpoint(session, &facts.main, snap, since.as_deref(), progress);
        }
        GetTaskStep::StartReview => Event::ReviewStarted {
            max_rounds: facts.config().review.policy().max_rounds,
        },
        GetTaskStep::RunReview { round } => {
            let event = review(session, facts, snap, round)?;
            done.push(match &event {
                Event::ReviewCompleted { record, .. } if !record.ran => DoneAction::NothingToReview,
                Event::ReviewCompleted { record, .. } => DoneAction::ReviewRan {
                    round,
                    findings: record.findings.len(),
                    blocking: record.blocking().len(),
                },
                _ => DoneAction::ReviewFailed { round },
            });
            event
        }
        GetTaskStep::StartMerge => Event::MergeStarted,
        GetTaskStep::Merge { branch } => {
            let mut out = merge::LandOutcome::default();
            let event = merge(session, facts, snap, &branch, &mut out)?;
            if let Event::Merged { .. } = &event {
                done.push(DoneAction::Merged {
                    branch,
                    main: facts.main.clone(),
                    raced: out.raced,
                });
            }
            progress.recorded = out.recorded;
            event
        }
    }))
}

/// A checkpoint commit on the PR branch since `since` that the workflow has not recorded
/// (one the hooks made): recorded when it counts, named in the briefing when it does not.
fn look_for_checkpoint(
    session: &Session,
    main: &str,
    snap: &Snapshot,
    since: Option<&str>,
    progress: &mut Progress,
) -> Result<Option<Event>, EngineError> {
    let Some(branch) = snap.state.branch().map(str::to_string) else {
        return Ok(None);
    };
    if session.store.head_branch()?.as_deref() != Some(branch.as_str()) {
        return Ok(None);
    }
    let stops = [since, snap.state.pr().and_then(|pr| pr.base.as_deref())];
    let Some(found) = session.store.find_checkpoint(&stops, main)? else {
        return Ok(None);
    };
    if let Some(notice) = super::unrecorded::unverified(session, &snap.state, &found)? {
        progress.notes.push(notice);
        return Ok(None);
    }
    // A checkpoint killed after its commit left it without a note: add it now.
    super::unrecorded::attach_missing_note(session, &snap.state, &found.commit, &found.tree)?;
    progress.done.push(DoneAction::RecordedCheckpoint {
        commit: found.commit.clone(),
        subject: found.subject.clone(),
    });
    // Its tree is the verified one when gates ran (that was just checked), and without
    // gates the last checkpoint's tree is what the squash is held to.
    Ok(Some(Event::CheckpointRecorded {
        commit: found.commit,
        subject: found.subject,
        tree: found.tree,
    }))
}

fn report(
    session: &Session,
    facts: &Facts,
    snap: Snapshot,
    done: &[DoneAction],
    notes: Vec<Notice>,
    guidance: Option<&str>,
) -> Result<TaskReport, EngineError> {
    let loaded = &facts.loaded;
    let mut notices = notes;
    notices.extend(loaded.warnings.iter().cloned());
    notices.extend(session.state_warnings_on(&snap.state, facts)?);
    let warnings: Vec<String> = notices.iter().map(ToString::to_string).collect();
    let halted = snap.state.waits_for_human();
    let gates = loaded.config.gate_names();
    let output_log_command = session.store.output_log_command();
    let escalation = match snap.state.halt() {
        Some(_) => session.store.escalation(&snap)?,
        None => None,
    };
    let escalation_command = session.store.escalation_command();
    let plan_show_command = session.store.plan_show_command();
    let review_show_command = session.store.review_show_command();
    let main_branch = &facts.main;
    let idle = session.idle_holds_on(&snap.state, main_branch, &loaded.config.master_plan)?;
    // At the human gate, the human weighs the review's findings: they are listed.
    let noted = super::status::noted_findings(session, &snap)?;
    // Only where a PR is picked: the claims are read for no other briefing.
    let taken = if snap.state.status() == Status::Initializing && !idle {
        super::claims::taken(session, facts)?
    } else {
        Vec::new()
    };
    let briefing = briefing::brief(&briefing::Context {
        idle,
        thresholds: loaded.config.debugging.thresholds(),
        guidance,
        escalation: escalation
            .as_deref()
            .map(|report| (escalation_command.as_str(), report)),
        plan_show_command: &plan_show_command,
        review_show_command: &review_show_command,
        noted_findings: &noted,
        main_branch,
        workflow: session.store.workflow(),
        state: &snap.state,
        plan: snap.summary.as_ref(),
        master_plan: &loaded.config.master_plan,
        output_log_command: &output_log_command,
        gates: &gates,
        done,
        warnings: &warnings,
        taken: &taken,
    });
    Ok(TaskReport {
        state: snap.state,
        briefing,
        halted,
        idle,
        branch_blocked: None,
    })
}

/// Brings main up to the remote's, when the workflow has a remote, and creates the PR branch
/// from it; an existing branch of that name (from an interrupted run) is checked out instead.
fn prepare_branch(
    session: &Session,
    facts: &Facts,
    branch: &str,
) -> Result<BranchOutcome, EngineError> {
    let blocked = |reason: Blocked| {
        Ok(BranchOutcome::Blocked {
            reason: reason.to_string(),
        })
    };
    if session.store.head_branch()?.as_deref() == Some(branch) {
        return Ok(BranchOutcome::CheckedOut {
            branch: branch.to_string(),
        });
    }
    if let Some(why) = dirty(session, true)? {
        return blocked(why);
    }
    let main = facts.main.clone();
    if !session.store.branch_exists(&main)? {
        return blocked(Blocked::NoMainBranch { main });
    }
    let git = &session.git;
    if session.store.branch_exists(branch)? {
        return match git.checkout(branch) {
            Ok(()) => Ok(BranchOutcome::Resumed {
                branch: branch.to_string(),
            }),
            Err(e) => blocked(Blocked::Git(e.to_string())),
        };
    }
    // From the remote's latest main, so no agent plans a PR another has merged; main is
    // moved where it is checked out (here, or in another worktree when it is clean) or, checked
    // out nowhere, by compare-and-swap, and the branch starts from its commit: git refuses to
    // check main out here while another worktree has it.
    let remote = super::remote::remote_under(session, facts.config())?;
    if let Some(remote) = &remote {
        let at = land::main_at(session, &main)?;
        if let Err(why) = land::up_to_remote(session, &main, &at, remote)? {
            return blocked(why);
        }
    }
    let start = git.rev_parse(&crate::store::branch_ref(&main))?;
    match git.checkout_new_branch(branch, &start) {
        Ok(()) => Ok(BranchOutcome::Created {
            branch: branch.to_string(),
            main,
            pulled_from: remote,
        }),
        Err(e) => blocked(Blocked::Git(e.to_string())),
    }
}

/// Runs code review round `round` on the PR branch: the diff from where it left main to its
/// tip, reviewed per dimension. A review that cannot run is an error event, never approval.
fn review(
    session: &Session,
    facts: &Facts,
    snap: &Snapshot,
    round: u32,
) -> Result<Event, EngineError> {
    let config = facts.config();
    // The reviewer runs from the working tree: an edited review script would review as the
    // agent likes (docs/integrity.md).
    let tree = session.worktree_tree()?;
    let protected = protected_changes(session, Some(&snap.state), config, &tree)?;
    if !protected.is_empty() {
        return Ok(Event::ReviewFailed {
            error: format!(
                "the working tree changes protected paths ({}), so the review was not run: a human \
                 changes these on main (then `git orchestrate repin`); put them back as they are on main",
                protected.join(", ")
            ),
        });
    }
    let policy = config.review.policy();
    let main = &facts.main;
    let Some(branch) = snap.state.branch().map(str::to_string) else {
        return Ok(Event::ReviewFailed {
            error: "the workflow has no PR branch to review".into(),
        });
    };
    let Some(plan) = session.store.plan(snap)? else {
        return Ok(Event::ReviewFailed {
            error: "the workflow has no PR plan to review against".into(),
        });
    };
    let found = match review_facts(session, snap, config, main, &branch)? {
        Ok(found) => found,
        Err(error) => return Ok(Event::ReviewFailed { error }),
    };
    let tasks_without_red = super::pr_record::tasks_without_red(&plan);
    let main_moved_outside =
        super::main_line::drift_on(session, &snap.state, main)?.map(|d| d.notice().to_string());
    let context = ReviewContext {
        plan: &plan,
        branch: &branch,
        main_branch: main,
        base: &found.base,
        head: &found.head,
        diff: &found.diff,
        round,
        config_changed: found.config_changed,
        empty_tasks: &found.empty_tasks,
        edited_red_tests: &found.edited_red_tests,
        repinned_red_tests: &found.repinned_red_tests,
        changed_after_red: &found.changed_after_red,
        reds_without_a_test: &found.reds_without_a_test,
        changed_tests: &found.changed_tests,
        unpinned_tests: &found.unpinned_tests,
        tasks_without_red: &tasks_without_red,
        main_moved_outside: main_moved_outside.as_deref(),
    };
    Ok(
        match run_review(
            &policy,
            &context,
            session.store.workdir(),
            session.command_env()?,
        ) {
            Ok(record) => Event::ReviewCompleted {
                record,
                human: policy.human,
            },
            Err(error) => Event::ReviewFailed { error },
        },
    )
}

/// What the reviewer is told about the PR besides its plan: its diff, and what its chain
/// records about its tests. `Err`: why it could not be gathered, and the review fails.
struct ReviewFacts {
    head: String,
    base: String,
    diff: String,
    config_changed: bool,
    empty_tasks: Vec<String>,
    edited_red_tests: Vec<(String, Vec<String>)>,
    changed_after_red: Vec<String>,
    repinned_red_tests: Vec<(String, Vec<String>)>,
    reds_without_a_test: Vec<String>,
    changed_tests: Vec<String>,
    unpinned_tests: Vec<String>,
}

fn review_facts(
    session: &Session,
    snap: &Snapshot,
    config: &crate::config::Config,
    main: &str,
    branch: &str,
) -> Result<Result<ReviewFacts, String>, EngineError> {
    let git = &session.git;
    let gathered = (|| -> Result<(String, String, String, bool), crate::exec::GitError> {
        let head = git.rev_parse(branch)?;
        let base = git.merge_base(main, &head)?;
        let diff = git.diff(&base, &head)?;
        let config_changed = git
            .changed_files(&base, &head)?
            .iter()
            .any(|f| f == crate::config::FILE_NAME);
        Ok((head, base, diff, config_changed))
    })();
    let (head, base, diff, config_changed) = match gathered {
        Ok(found) => found,
        Err(e) => {
            return Ok(Err(format!("could not gather the diff of {branch}: {e}")));
        }
    };
    let pr = session.store.history_back_to(snap.tip, "plan")?;
    let empty_tasks = super::audit::empty_tasks(session, snap, &pr)?;
    let record = super::pr_record::pr_record(session, &pr)?;
    let edited_red_tests: Vec<(String, Vec<String>)> = record
        .edited_red_tests
        .iter()
        .map(|e| (e.step.to_string(), e.paths.clone()))
        .collect();
    let changed_after_red = match record.changed_after_red(session, &head) {
        Ok(found) => found,
        Err(e) => {
            return Ok(Err(format!(
                "could not compare {branch}'s RED tests with their pins: {e}"
            )));
        }
    };
    let repinned_red_tests: Vec<(String, Vec<String>)> = record
        .repinned()
        .into_iter()
        .map(|(step, paths)| (step.to_string(), paths))
        .collect();
    let reds_without_a_test: Vec<String> = record
        .reds_without_a_test
        .iter()
        .map(ToString::to_string)
        .collect();
    // Tests present on the PR's base that the PR changes or removes.
    // A reviewer told nothing of the tests would be told they are untouched: no review.
    let changed_tests = match super::proof::changed_test_paths(session, config, &base, &head) {
        Ok(paths) => paths,
        Err(e) => {
            return Ok(Err(format!(
                "could not list the tests {branch} changes: {e}"
            )));
        }
    };
    let unpinned_tests = match record.unpinned_tests(session, config, &base, &head) {
        Ok(found) => found,
        Err(e) => {
            return Ok(Err(format!("could not list the tests {branch} adds: {e}")));
        }
    };
    Ok(Ok(ReviewFacts {
        head,
        base,
        diff,
        config_changed,
        empty_tasks,
        edited_red_tests,
        changed_after_red,
        repinned_red_tests,
        reds_without_a_test,
        changed_tests,
        unpinned_tests,
    }))
}
