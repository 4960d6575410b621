//! `attest` of a ticket's merge, or of its squashed commit (docs/tickets.md): the ticket's
//! history replayed, the merge, the squash and the pin held against what it records, the
//! plan its final check recorded held against the one its history gives, then the pinned
//! gates run again on the squash and every accepted subtask's tests run again on that
//! subtask's base, where they must fail.

use gix::ObjectId;

use super::verdict::Verdict;
use super::verifier::Chain;
use crate::engine::proof;
use crate::engine::ticket::finish;
use crate::engine::ticket::observe::ticket_config;
use crate::engine::{EngineError, Session};
use crate::store::{Store, TicketSnapshot, WorkflowKind};
use crate::workflow::notes::ChangedTests;
use crate::workflow::proof::{self as proof_plan, AcceptedSubtask, ProofPlan};
use crate::workflow::ticket::attest::{SquashFacts, squash_reasons};
use crate::workflow::ticket::{Action, Recorded, Ticket};

/// What the commit is to a ticket: its merge into main, or its squash.
pub struct Found {
    pub chain: Chain,
    pub transition: ObjectId,
    pub ticket: Ticket,
    pub merge: bool,
}

/// The first chain whose ticket records `commit` as its merge or its squash.
pub fn locate(store: &Store, chains: &[Chain], commit: &str) -> Result<Option<Found>, EngineError> {
    for chain in chains {
        let mut next = Some(chain.tip);
        while let Some(id) = next {
            let Ok(record) = store.commit_record(id) else {
                break;
            };
            next = record.parents.first().copied();
            if store.kind_at(id)? != WorkflowKind::Ticket {
                continue;
            }
            let Ok(Some(TicketSnapshot { ticket, .. })) = store.ticket_at(id, &chain.reference)
            else {
                continue;
            };
            let Some(finished) = &ticket.finished else {
                continue;
            };
            let merge = finished.merge.as_deref() == Some(commit);
            if merge || finished.squash == commit {
                return Ok(Some(Found {
                    chain: chain.clone(),
                    transition: id,
                    ticket,
                    merge,
                }));
            }
        }
    }
    Ok(None)
}

/// Every check of the ticket behind `commit`; reasons and re-runs go into `verdict`.
/// Returns the policy (the pin and its config blob). Nothing of the ticket runs while a
/// reason stands.
pub fn check(
    session: &Session,
    found: &Found,
    commit: &str,
    cannot_confine: Option<&str>,
    verdict: &mut Verdict,
) -> Result<Option<(String, String)>, EngineError> {
    let t = &found.ticket;
    let git = &session.git;
    let reasons = &mut verdict.reasons;
    let short = |id: &str| crate::short_id(id).to_string();
    let audit = crate::engine::chain::audit_chain(
        &session.store,
        &found.chain.workflow,
        found.transition,
        None,
    )?;
    if let Some(problem) = &audit.forged {
        reasons.push(format!("the ticket's history is forged: {problem}"));
    }
    let Some(finished) = &t.finished else {
        reasons.push("the ticket is not finished".into());
        return Ok(None);
    };
    let Some(blob) = t.config.clone() else {
        reasons.push(format!(
            "main had no {} at the ticket's pin {}: no gates verify it",
            crate::config::FILE_NAME,
            short(&t.pin)
        ));
        return Ok(None);
    };
    let policy = Some((t.pin.clone(), blob.clone()));
    // Every commit the ticket names must be here before any is read: one missing (the
    // ticket's branch was deleted at its merge and never pushed, so the subtasks' commits
    // reached no clone) is a reason named, not a failed git command.
    let missing = missing_commits(session, t, &finished.squash);
    if !missing.is_empty() {
        reasons.extend(missing.into_iter().map(|(what, id)| {
            format!(
                "the ticket's {what} {} is not in this repository: nothing here can check it \
                 (fetch the ticket's branch, or the ref that keeps its commits, from where it was made)",
                short(&id)
            )
        }));
        return Ok(policy);
    }
    let squash = &finished.squash;
    let config_at = |rev: &str| config_at(session, rev);
    // The facts first, then the pure decision (src/workflow/ticket/attest.rs).
    let between = between(session, t)?;
    let squash_tree = git.tree_of(squash)?;
    let (found_reasons, notes) = squash_reasons(&SquashFacts {
        ticket: t,
        squash,
        squash_tree: &squash_tree,
        verified_tree: &git.tree_of(&t.verified)?,
        squash_parents: &git.parents(squash)?,
        blob: &blob,
        config_at_pin: config_at(&t.pin)?.as_deref(),
        between: &between,
    });
    reasons.extend(found_reasons);
    verdict.reran.extend(notes);
    let config = match ticket_config(session, t) {
        Ok(config) => config,
        Err(e) => {
            reasons.push(format!("the pinned configuration cannot be read: {e}"));
            return Ok(policy);
        }
    };
    let specs = crate::engine::verify::protected_specs(git, &config, &[&t.pin, squash])?;
    let mut protected = git.changed_files_in(&t.pin, squash, &specs)?;
    if found.merge {
        protected.extend(merge_reasons(
            session,
            t,
            (commit, squash, &blob),
            &specs,
            reasons,
        )?);
    }
    protected.sort();
    protected.dedup();
    if !protected.is_empty() {
        reasons.push(format!(
            "the ticket changes protected paths (a human changes these on main): {}",
            protected.join(", ")
        ));
    }
    held_then_run(session, found, (squash, cannot_confine), &config, verdict)?;
    Ok(policy)
}

/// The plan the ticket's final check recorded, held against the one its history gives
/// before anything runs (a forged record does not get the ticket's code run); then, when no
/// reason stands and nothing keeps its commands from running here (`cannot_confine`), the
/// ticket's plan run.
fn held_then_run(
    session: &Session,
    found: &Found,
    (squash, cannot_confine): (&str, Option<&str>),
    config: &crate::config::Config,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let t = &found.ticket;
    // Tests that existed at the pin that the ticket changed or removed: named, and judged by
    // `[gates] pinned_tests` as a PR's are (docs/integrity.md, "Tests that existed at the pin").
    let changed = proof::changed_tests(session, config, &t.pin, squash)?;
    super::plans::hold(
        verdict,
        "the ticket's",
        recorded_plans(session, found.transition, squash)?,
        (&[finish::final_plan(t, squash, changed.as_ref())], true),
        config.verify.recorded_plans,
    );
    verdict
        .reasons
        .extend(run_reasons(session, config, cannot_confine)?);
    if verdict.reasons.is_empty() {
        rerun(session, t, (squash, changed), config, verdict)?;
    }
    Ok(())
}

/// The plans the ticket's final check recorded with its squash (the `finish-start` that
/// recorded `squash`, at or before `transition`), or why none can be read.
fn recorded_plans(
    session: &Session,
    transition: ObjectId,
    squash: &str,
) -> Result<Result<Vec<ProofPlan>, String>, EngineError> {
    let store = &session.store;
    let history = store.history_back_to(transition, "finish-start")?;
    let Some(entry) = history.iter().find(|e| e.event == "finish-start") else {
        return Ok(Err(
            "the ticket's history records no squash (`finish-start`)".into(),
        ));
    };
    let id = ObjectId::from_hex(entry.commit.as_bytes())
        .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
    let event = store.commit_record(id)?.event;
    Ok(
        match event.map(|json| serde_json::from_str::<Recorded>(&json)) {
            Some(Ok(Recorded {
                action: Some(Action::Finishing { squash: s, plans }),
                ..
            })) if s == squash => Ok(plans),
            _ => Err(format!(
                "the ticket's `finish-start` {} records no squash of {} that reads",
                crate::short_id(&entry.commit),
                crate::short_id(squash)
            )),
        },
    )
}

/// Each accepted subtask's id, and whether its accepted commit lies between its base and the
/// ticket's verified commit.
fn between(session: &Session, t: &Ticket) -> Result<Vec<(String, bool)>, EngineError> {
    let git = &session.git;
    let mut between = Vec::new();
    for s in &t.subtasks {
        if let (Some(base), Some(accepted)) = (&s.base, &s.accepted) {
            let lies =
                git.is_ancestor(base, accepted)? && git.is_ancestor(accepted, &t.verified)?;
            between.push((s.id.clone(), lies));
        }
    }
    Ok(between)
}

/// Why nothing of the ticket can run here: the verifier's environment, no gates pinned, or
/// commands that must be confined and cannot be (`cannot_confine`).
fn run_reasons(
    session: &Session,
    config: &crate::config::Config,
    cannot_confine: Option<&str>,
) -> Result<Vec<String>, EngineError> {
    let mut reasons: Vec<String> = crate::engine::hermetic::problems(session)?
        .into_iter()
        .map(|problem| format!("the verifier cannot verify here: {problem}"))
        .collect();
    if config.preflight.is_empty() {
        reasons.push("the pinned configuration has no gates: nothing can be run again".into());
    }
    if let Some(why) = cannot_confine {
        reasons.push(format!(
            "the verifier must confine the ticket's commands and cannot here ({why}), so nothing \
             was run"
        ));
    }
    Ok(reasons)
}

/// The config blob at `rev`, if it holds one.
fn config_at(session: &Session, rev: &str) -> Result<Option<String>, EngineError> {
    let tree = session.store.tree_of(rev)?;
    Ok(session
        .store
        .tree_entry(&tree, crate::config::FILE_NAME)?
        .map(|e| e.id.to_string()))
}

/// Why the merge `commit` is not the ticket's merge of its `squash` onto a main that kept
/// its pinned config `blob`, into `reasons`; returns the protected paths (by `specs`) the
/// merge changes.
fn merge_reasons(
    session: &Session,
    t: &Ticket,
    (commit, squash, blob): (&str, &str, &str),
    specs: &[String],
    reasons: &mut Vec<String>,
) -> Result<Vec<String>, EngineError> {
    let git = &session.git;
    let short = |id: &str| crate::short_id(id).to_string();
    let parents = git.parents(commit)?;
    let [first, second] = parents.as_slice() else {
        reasons.push("it is not a merge commit".into());
        return Ok(Vec::new());
    };
    if second != squash {
        reasons.push(format!(
            "the merge brings in {}, not the ticket's squashed commit {}",
            short(second),
            short(squash)
        ));
    }
    if !git.is_ancestor(&t.pin, first)? {
        reasons.push(format!(
            "the ticket was pinned at {}, which is not in main's history before the merge",
            short(&t.pin)
        ));
    }
    match git.merge_tree(first, squash)? {
        Some(tree) if tree == git.tree_of(commit)? => {}
        Some(_) => reasons.push(
            "the merge commit's tree is not what git makes of main and the squash: something \
             rode along"
                .into(),
        ),
        None => reasons.push("main and the squash conflict: the merge was made by hand".into()),
    }
    if config_at(session, first)?.as_deref() != Some(blob) {
        reasons.push(format!(
            "main's {} changed since the ticket was pinned",
            crate::config::FILE_NAME
        ));
    }
    Ok(git.changed_files_in(first, commit, specs)?)
}

/// The commits the ticket names that this repository does not hold, each with what it is.
fn missing_commits(session: &Session, t: &Ticket, squash: &str) -> Vec<(String, String)> {
    let mut named = vec![
        ("pin".to_string(), t.pin.clone()),
        ("squashed commit".to_string(), squash.to_string()),
        ("verified commit".to_string(), t.verified.clone()),
    ];
    for s in &t.subtasks {
        if let Some(base) = &s.base {
            named.push((format!("subtask {}'s base", s.id), base.clone()));
        }
        if let Some(accepted) = &s.accepted {
            named.push((
                format!("subtask {}'s accepted commit", s.id),
                accepted.clone(),
            ));
        }
    }
    named
        .into_iter()
        .filter(|(_, id)| session.git.rev_parse(id).is_err())
        .collect()
}

/// The ticket's proof plan on the squash (src/workflow/proof.rs, `ticket_squash`), run by
/// the executor: the gates on the squash, and each accepted subtask's tests on its base;
/// `changed`: the tests that existed at the pin that the squash changed or removed.
fn rerun(
    session: &Session,
    t: &Ticket,
    (squash, changed): (&str, Option<ChangedTests>),
    config: &crate::config::Config,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let git = &session.git;
    let mut subtasks = Vec::new();
    for s in &t.subtasks {
        if let (Some(base), Some(accepted)) = (&s.base, &s.accepted) {
            subtasks.push(AcceptedSubtask {
                id: &s.id,
                base,
                accepted,
                changes: git.tree_changes(base, accepted)?,
            });
        }
    }
    let existing = changed
        .as_ref()
        .map(|c| c.paths.clone())
        .unwrap_or_default();
    let plan = proof_plan::ticket_squash(
        squash,
        &t.pin,
        t.config.as_deref(),
        (&subtasks, &existing),
        |p| config.is_test_path(p),
    );
    let outcomes = proof::execute(session, config, &plan, None)?;
    if let Some(changed) = proof::judged_changed(changed, &outcomes) {
        verdict.changed_tests_verdict = Some(changed.verdict());
        verdict.warnings.extend(changed.warning());
        if changed.verdict() == "refused" {
            verdict
                .reasons
                .push(proof::ticket_changed_tests_refused(&changed));
        }
        verdict.changed_tests = Some(changed);
    }
    for outcome in outcomes {
        verdict.reran.extend(outcome.reran());
        match &outcome {
            proof::Outcome::Gates { .. } if !outcome.held() => verdict
                .reasons
                .push("the pinned gates do not pass on the squashed commit".into()),
            proof::Outcome::OnBase { subtask, .. } if !outcome.held() => {
                verdict.reasons.push(format!(
                    "subtask {}'s tests pass on its base too: nothing proves they test its change",
                    subtask.as_deref().unwrap_or("?")
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
