//! The checks behind one verdict (docs/integrity.md, "attest"): what the chain says of the
//! PR against what git holds, then, when nothing is wrong with the record, the pinned gates
//! and RED tests run again. Each step adds its reasons to the verdict.

use super::find::Target;
use super::verdict::{Adequacy, Verdict};
use super::verifier::Chain;
use crate::config::{self, Config};
use crate::engine::answers::AnswerVerdict;
use crate::engine::chain::audit_chain;
use crate::engine::finalize::final_check;
use crate::engine::{EngineError, Session};
use crate::store::Snapshot;
use crate::workflow::Event;
use crate::workflow::proof::ProofPlan;
use crate::workflow::proof::adequacy::At;
use crate::workflow::state::Pin;

/// The policy a verdict names: the pin's main commit and its config blob.
pub(super) type Policy = (String, String);

/// Every check of the PR behind `commit`; reasons and re-runs go into `verdict`. Returns
/// the policy when the PR has one. Nothing of the PR runs while a reason stands, nor when
/// the commands must be confined and `cannot_confine` says why they cannot.
pub(super) fn check(
    session: &Session,
    chain: &Chain,
    target: &Target,
    commit: &str,
    cannot_confine: Option<&str>,
    verdict: &mut Verdict,
) -> Result<Option<Policy>, EngineError> {
    let Some(snap) = finalized_pr(session, chain, target, &mut verdict.reasons)? else {
        return Ok(None);
    };
    chain_reasons(session, chain, target, verdict)?;
    let Some((pin, blob, mut config)) = pinned(session, &snap, &mut verdict.reasons) else {
        return Ok(None);
    };
    let policy = Some((pin.commit.clone(), blob.clone()));
    let Some(config_ref) = config.as_ref() else {
        return Ok(policy);
    };
    let remade = record_reasons(
        session,
        &snap,
        target,
        commit,
        (&pin, &blob, config_ref),
        verdict,
    )?;
    let reasons = &mut verdict.reasons;
    if let Some(why) = cannot_confine {
        reasons.push(format!(
            "the verifier must confine the PR's commands and cannot here ({why}), so nothing was run; \
             a human sets `git config orchestrate.attestConfine none` where running them unconfined is safe"
        ));
    }
    // Nothing the PR wrote runs while the record already fails: a forged chain does not get
    // its code run by the verifier.
    let Some(config) = config.as_mut().filter(|_| reasons.is_empty()) else {
        return Ok(policy);
    };
    rerun(session, &snap, config, verdict)?;
    // A merge re-made on a main that moved after the PR's check (a lost race), or a human's
    // resolution of a conflict, holds a tree the check never verified: the pinned gates run
    // on it, as the merging clone ran them.
    if remade && verdict.reasons.is_empty() {
        match crate::engine::finalize::gates_on(session, config, commit)? {
            Some(why) => verdict.reasons.push(format!(
                "the merge's tree, which the PR's check did not verify (made onto a main that moved, or a human's resolution of a conflict), fails the pinned gates: {why}"
            )),
            None => verdict.reran.push(format!(
                "the gates passed on the merge {}, whose tree the PR's check did not verify",
                crate::short_id(commit)
            )),
        }
    }
    Ok(policy)
}

/// The PR as finalization left it, at the transition the verdict reads.
fn finalized_pr(
    session: &Session,
    chain: &Chain,
    target: &Target,
    reasons: &mut Vec<String>,
) -> Result<Option<Snapshot>, EngineError> {
    let snap = match session.store.read_at(target.pr_state(), &chain.reference) {
        Ok(snap) => snap,
        Err(e) => {
            reasons.push(format!("the PR's state cannot be read: {e}"));
            return Ok(None);
        }
    };
    if snap.state.pr().is_none() || snap.state.final_commit().is_none() {
        reasons.push(format!(
            "the transition before it ({}) holds no finalized PR",
            crate::short_id(&target.pr_state().to_string())
        ));
        return Ok(None);
    }
    Ok(Some(snap))
}

/// The chain's segment, from the plan's acceptance to the transition read, replayed, and its
/// human answers judged.
fn chain_reasons(
    session: &Session,
    chain: &Chain,
    target: &Target,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let store = &session.store;
    let stop = crate::engine::chain::pr_stop(store, target.pr_state())?;
    let audit = audit_chain(store, &chain.workflow, target.transition(), stop)?;
    if let Some(problem) = &audit.forged {
        verdict
            .reasons
            .push(format!("the workflow's chain is forged: {problem}"));
    }
    verdict.answers =
        crate::engine::answers::judge_answers(session, &chain.workflow, target.transition(), stop)?;
    for answer in verdict.answers.iter().filter(|a| a.fails()) {
        verdict.reasons.push(format!(
            "the human answer `{}` in {} does not hold: {}",
            answer.answer,
            crate::short_id(&answer.commit),
            match &answer.verdict {
                AnswerVerdict::Bad { why } => why.clone(),
                _ => "it is unsigned, and the pinned configuration requires a signature ([human] require = \"signature\")".into(),
            }
        ));
    }
    Ok(())
}

/// The PR's pin, its config blob, and the configuration it holds (`None`, with the reason
/// given, when it cannot be read). `None` altogether when the PR pinned nothing to judge by.
fn pinned(
    session: &Session,
    snap: &Snapshot,
    reasons: &mut Vec<String>,
) -> Option<(Pin, String, Option<Config>)> {
    let state = &snap.state;
    let Some(pin) = state.pr().and_then(|pr| pr.pin.clone()) else {
        reasons.push("the PR pinned no configuration: nothing says which gates verify it".into());
        return None;
    };
    let Some(blob) = pin.config.clone() else {
        reasons.push(format!(
            "main had no {} at the pin ({}): no gates verify the PR",
            config::FILE_NAME,
            crate::short_id(&pin.commit)
        ));
        return None;
    };
    let main = state.main_branch.clone().unwrap_or_else(|| "main".into());
    let config = match crate::engine::proof::pinned_config(session, Some(&blob), &main, &pin.commit)
    {
        Ok(config) => Some(config),
        Err(e) => {
            reasons.push(format!("the pinned configuration cannot be read: {e}"));
            None
        }
    };
    Some((pin, blob, config))
}

/// What the record says against git: the merge, the pin, the master plan, the protected
/// paths, the approval the configuration asks for, the verifier's own repository, and that
/// every task has a RED test to run again. True when the merge was made onto a main that
/// moved since the PR's base, so its tree is to be gated too.
fn record_reasons(
    session: &Session,
    snap: &Snapshot,
    target: &Target,
    commit: &str,
    (pin, blob, config): (&Pin, &str, &Config),
    verdict: &mut Verdict,
) -> Result<bool, EngineError> {
    let state = &snap.state;
    let final_commit = state.final_commit().unwrap_or_default().to_string();
    let facts = Facts::gather(session, snap, commit, &final_commit)?;
    let verified_tree = state.pr().and_then(|pr| pr.verified_tree.as_deref());
    // A conflict a human resolved and landed through the workflow: the merge is their
    // `resume`, an answer that stands (signed where the pinned configuration requires it).
    let resolved = matches!(target, Target::Merge { .. })
        && verdict.answers.iter().any(|a| {
            a.answer == "resume"
                && gix::ObjectId::from_hex(a.commit.as_bytes()).ok() == Some(target.transition())
                && !a.fails()
        });
    let reasons = &mut verdict.reasons;
    reasons.extend(facts.judge(
        target,
        &Pinned {
            commit: &pin.commit,
            config: blob,
            master_plan: &config.master_plan,
        },
        verified_tree,
        resolved,
    ));
    let mut protected =
        crate::engine::verify::protected_changes(session, Some(state), config, &facts.final_tree)?;
    // From main before the merge too: a pin is a commit in main's history, and a PR pinned
    // long ago must not take main's protected files back to how they were then.
    if let Some(base) = &facts.base {
        let specs = crate::engine::verify::protected_specs(
            &session.git,
            config,
            &[base, &facts.merged_tree],
        )?;
        protected.extend(
            session
                .git
                .changed_files_in(base, &facts.merged_tree, &specs)?,
        );
    }
    protected.sort();
    protected.dedup();
    if !protected.is_empty() {
        reasons.push(format!(
            "the PR changes protected paths (a human changes these on main): {}",
            protected.join(", ")
        ));
    }
    let approved = verdict
        .answers
        .iter()
        .any(|a| a.answer == "approve" && !a.fails());
    if config.review.policy().human && !approved {
        reasons.push(
            "the pinned configuration requires a human's approval ([review] human) and the PR's chain holds none that stands".into(),
        );
    }
    for problem in crate::engine::hermetic::problems(session)? {
        reasons.push(format!("the verifier cannot verify here: {problem}"));
    }
    if config.preflight.is_empty() {
        reasons.push("the pinned configuration has no gates: nothing can be run again".into());
    }
    reasons.extend(red_reasons(session, snap)?);
    Ok(facts.onto_moved.is_some() || (resolved && facts.commit_tree != facts.merged_tree))
}

/// RED steps the chain did not pin, and plan tasks without a RED step: nothing would prove
/// their tests failed first.
fn red_reasons(session: &Session, snap: &Snapshot) -> Result<Vec<String>, EngineError> {
    let mut reasons = Vec::new();
    let record = crate::engine::pr_record::of_snapshot(session, snap)?;
    let unpinned: Vec<String> = record
        .reds
        .iter()
        .filter(|r| r.tree.is_none())
        .map(|r| r.step.to_string())
        .collect();
    if !unpinned.is_empty() {
        reasons.push(format!(
            "RED steps whose test the chain does not pin, so nothing can run it again: {}",
            unpinned.join(", ")
        ));
    }
    if let Some(mut plan) = session.store.plan(snap)? {
        // The review's and a human's feedback tasks are GREEN steps by design.
        plan.tasks
            .retain(|t| !crate::workflow::review::is_feedback_task(t));
        let without = crate::engine::pr_record::tasks_without_red(&plan);
        if !without.is_empty() {
            reasons.push(format!(
                "tasks without a RED step, so nothing proves their tests failed first: {}",
                without.join(", ")
            ));
        }
    }
    Ok(reasons)
}

/// The final check again, always with the clean check on, whatever the PR's own was set to.
fn rerun(
    session: &Session,
    snap: &Snapshot,
    config: &mut Config,
    verdict: &mut Verdict,
) -> Result<(), EngineError> {
    let local_clean = config.finalize.clean_check;
    config.finalize.clean_check = true;
    let final_commit = snap.state.final_commit().unwrap_or_default().to_string();
    // Adequacy under the pinned `enforce` only: `report` changes no verdict, and attest's
    // cost stays the gates' and RED tests' own (docs/integrity.md, "Adequacy by mutation").
    let rerun = final_check(session, snap, config, &final_commit, At::Attest)?;
    // A check refused part way made only the plans up to its refusal: those are held. With
    // the clean check off the PR's own final check ran nothing, and recorded no plan.
    let complete = rerun.refused.is_none();
    let expected = if local_clean { &rerun.plans[..] } else { &[] };
    super::plans::hold(
        verdict,
        "the PR's",
        recorded_plans(session, snap)?,
        (expected, complete),
        config.verify.recorded_plans,
    );
    verdict.reran.push(rerun.verification.clone());
    for red in &rerun.red_tests {
        verdict.reran.push(format!(
            "RED test of step {} `{}`: {} on the base, {} on the final tree; evidence: {}{}",
            red.step,
            red.command,
            red.base,
            red.squashed,
            red.evidence.as_deref().unwrap_or("exit code only"),
            if red.tests.is_empty() {
                String::new()
            } else {
                format!(" ({})", red.tests.join(", "))
            }
        ));
    }
    verdict.red_tests = rerun.red_tests.clone();
    verdict.adequacy = if rerun.adequacy_measured {
        Adequacy::Measured(rerun.adequacy.clone())
    } else {
        Adequacy::NotMeasured {
            report: config.verify.adequacy == config::Adequacy::Report,
        }
    };
    // Named whatever the policy makes of them, with the human approvals by name they rest on;
    // refused (under `enforce`, or under `report` without those approvals) by the final
    // check's own refusal, below.
    if let Some(changed) = &rerun.changed_tests {
        verdict.changed_tests_verdict = Some(changed.verdict());
        verdict.warnings.extend(changed.warning());
    }
    verdict.changed_tests = rerun.changed_tests.clone();
    // The chain's own memory of the final check (src/engine/finalize/remembered.rs): listed
    // with the verdict notes' refusals, and the human answer that accepted a pass after them.
    verdict
        .earlier_refusals
        .extend(rerun.earlier_refusals.iter().cloned());
    if let Some(answer) = &rerun.flaky_accepted_by {
        verdict.warnings.push(super::memory::accepted_warning(
            &snap
                .state
                .pr()
                .and_then(|pr| pr.verified_tree.clone())
                .unwrap_or_default(),
            answer,
        ));
    }
    if let Some(refused) = &rerun.refused {
        verdict.reasons.push(refused.to_string());
    }
    // The squashed commit sits on the PR's base, as the local final note's merge base with
    // main found it before main moved on.
    if let Some(base) = session.store.parents_of(&final_commit)?.into_iter().next() {
        verdict.final_note = Some(crate::engine::notes::final_note(
            session,
            snap,
            &final_commit,
            &base,
            &rerun,
        )?);
    }
    Ok(())
}

/// The plans the PR's final check recorded with its squash (the newest `squash` transition of
/// the PR), or why none can be read.
fn recorded_plans(
    session: &Session,
    snap: &Snapshot,
) -> Result<Result<Vec<ProofPlan>, String>, EngineError> {
    let pr = session.store.history_back_to(snap.tip, "plan")?;
    let Some(entry) = pr.iter().find(|e| e.event == "squash") else {
        return Ok(Err("the chain records no squash".into()));
    };
    let id = gix::ObjectId::from_hex(entry.commit.as_bytes())
        .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
    let event = session.store.commit_record(id)?.event;
    Ok(
        match event.map(|json| serde_json::from_str::<Event>(&json)) {
            Some(Ok(Event::Squashed { plans, .. })) => Ok(plans),
            _ => Err("the squash's transition records no squash event that reads".into()),
        },
    )
}

/// What the PR pinned: main's commit, its config blob, and the master plan that config names.
struct Pinned<'a> {
    commit: &'a str,
    config: &'a str,
    master_plan: &'a str,
}

/// What git says of the commits the verdict judges.
struct Facts {
    commit_parents: Vec<String>,
    commit_tree: String,
    final_commit: String,
    /// The tree of what the merge merges: the master-plan commit's, else the squash's.
    merged_tree: String,
    /// The squashed commit's parent: the PR's base.
    base: Option<String>,
    final_tree: String,
    /// The master-plan commit, its parents and what it changes from the squash.
    plan_commit: Option<(String, Vec<String>, Vec<String>)>,
    master_plan: Option<String>,
    pin_on_base: bool,
    /// The config blob at the pin and on main before the merge (the squash's base).
    config_at_pin: Option<String>,
    config_at_main: Option<String>,
    /// `.orchestrate/allowed_signers` at the pin and on main before the merge.
    signers_at_pin: Option<String>,
    signers_at_main: Option<String>,
    /// A merge whose first parent is not the PR's base: made again after another clone's
    /// merge moved main (docs/integrity.md, "A landing in flight").
    onto_moved: Option<OntoMoved>,
}

/// What git says of a merge made onto a main that moved since the PR's base.
struct OntoMoved {
    first: String,
    /// The first parent descends from the PR's base: main moved forward, not elsewhere.
    descends: bool,
    /// git's own merge of the checked commit onto the first parent (`None`: it conflicts).
    merged_by_git: Option<String>,
    /// The config blob and `.orchestrate/allowed_signers` on the first parent.
    config: Option<String>,
    signers: Option<String>,
}

impl Facts {
    fn gather(
        session: &Session,
        snap: &Snapshot,
        commit: &str,
        final_commit: &str,
    ) -> Result<Facts, EngineError> {
        let git = &session.git;
        let store = &session.store;
        let state = &snap.state;
        let base = store.parents_of(final_commit)?.into_iter().next();
        let pin = state.pr().and_then(|pr| pr.pin.as_ref());
        let blob_at = |rev: &str, path: &str| -> Result<Option<String>, EngineError> {
            let tree = store.tree_of(rev)?;
            Ok(store.tree_entry(&tree, path)?.map(|e| e.id.to_string()))
        };
        let at = |rev: Option<&String>, path: &str| -> Result<Option<String>, EngineError> {
            match rev {
                Some(rev) => blob_at(rev, path),
                None => Ok(None),
            }
        };
        let pin_commit = pin.map(|p| p.commit.clone());
        let commit_parents = store.parents_of(commit)?;
        let plan_commit = match state.plan_commit() {
            Some(plan) => Some((
                plan.to_string(),
                store.parents_of(plan)?,
                git.tree_changes(final_commit, plan)?
                    .into_iter()
                    .map(|(_, p)| p)
                    .collect(),
            )),
            None => None,
        };
        let merged_tree = match state.plan_commit() {
            Some(plan) => store.tree_of(plan)?,
            None => store.tree_of(final_commit)?,
        };
        let onto_moved = match commit_parents.as_slice() {
            [first, second] if Some(first) != base.as_ref() => Some(OntoMoved {
                first: first.clone(),
                descends: match &base {
                    Some(base) => git.is_ancestor(base, first)?,
                    None => false,
                },
                merged_by_git: git.merge_tree(first, second)?,
                config: blob_at(first, config::FILE_NAME)?,
                signers: blob_at(first, config::ALLOWED_SIGNERS)?,
            }),
            _ => None,
        };
        Ok(Facts {
            onto_moved,
            commit_tree: store.tree_of(commit)?,
            final_commit: final_commit.to_string(),
            merged_tree,
            final_tree: store.tree_of(final_commit)?,
            pin_on_base: match (pin, &base) {
                (Some(pin), Some(base)) => git.is_ancestor(&pin.commit, base)?,
                _ => false,
            },
            config_at_pin: at(pin_commit.as_ref(), config::FILE_NAME)?,
            config_at_main: at(base.as_ref(), config::FILE_NAME)?,
            signers_at_pin: at(pin_commit.as_ref(), config::ALLOWED_SIGNERS)?,
            signers_at_main: at(base.as_ref(), config::ALLOWED_SIGNERS)?,
            master_plan: store.plan(snap)?.map(|p| p.master_plan_path),
            commit_parents,
            base,
            plan_commit,
        })
    }

    /// The reasons the facts give to refuse the verdict (pure).
    /// `resolved`: the merge is a human's resolution of a conflict, landed by their `resume`;
    /// its tree is theirs, and is gated again instead.
    fn judge(
        &self,
        target: &Target,
        pinned: &Pinned,
        verified_tree: Option<&str>,
        resolved: bool,
    ) -> Vec<String> {
        let (pin, pinned_blob) = (pinned.commit, pinned.config);
        let mut reasons = Vec::new();
        let short = |id: &str| crate::short_id(id).to_string();
        if verified_tree != Some(self.final_tree.as_str()) {
            reasons.push(format!(
                "the squashed commit's tree {} is not the tree the chain verified ({})",
                short(&self.final_tree),
                verified_tree.map_or("none".to_string(), short)
            ));
        }
        if !self.pin_on_base {
            reasons.push(format!(
                "the PR was pinned at {}, which is not in its base's history on main",
                short(pin)
            ));
        }
        if self.config_at_pin.as_deref() != Some(pinned_blob) {
            reasons.push(format!(
                "the pinned configuration ({}) is not main's {} at the pin {}",
                short(pinned_blob),
                config::FILE_NAME,
                short(pin)
            ));
        }
        let merged = match &self.plan_commit {
            Some((plan, parents, changed)) => {
                if parents.as_slice() != [self.final_commit.clone()] {
                    reasons.push(format!(
                        "the master-plan commit {} is not the one commit on the squashed commit",
                        short(plan)
                    ));
                }
                if self.master_plan.as_deref() != Some(pinned.master_plan) {
                    reasons.push(format!(
                        "the PR's plan names {} as its master plan, not the pinned configuration's {}",
                        self.master_plan.as_deref().unwrap_or("nothing"),
                        pinned.master_plan
                    ));
                }
                if changed.iter().any(|p| p != pinned.master_plan) {
                    reasons.push(format!(
                        "the master-plan commit {} changes more than the master plan: {}",
                        short(plan),
                        changed.join(", ")
                    ));
                }
                plan.clone()
            }
            None => self.final_commit.clone(),
        };
        if self.config_at_main.as_deref() != Some(pinned_blob) {
            reasons.push(format!(
                "main's {} changed since the PR was pinned: a human runs `git orchestrate repin`",
                config::FILE_NAME
            ));
        }
        if self.signers_at_main != self.signers_at_pin {
            reasons.push(format!(
                "main's {} changed since the PR was pinned: its answers were judged by the keys of then",
                config::ALLOWED_SIGNERS
            ));
        }
        if let Target::Merge { .. } = target {
            match self.commit_parents.as_slice() {
                [_, second] => {
                    if *second != merged {
                        reasons.push(format!(
                            "the merge brings in {}, not the PR's checked commit {}",
                            short(second),
                            short(&merged)
                        ));
                    }
                    match &self.onto_moved {
                        None if self.commit_tree != self.merged_tree && !resolved => {
                            reasons.push(format!(
                                "the merge commit's tree {} is not the tree of the commit it merges ({}): something rode along",
                                short(&self.commit_tree),
                                short(&self.merged_tree)
                            ));
                        }
                        None => {}
                        Some(moved) => {
                            reasons.extend(moved.judge(self, pinned_blob, resolved, &short))
                        }
                    }
                }
                _ => reasons.push("it is not a merge commit".into()),
            }
        }
        reasons
    }
}

impl OntoMoved {
    /// Why a merge made onto a main that moved since the PR's base is refused (pure): main
    /// moved elsewhere than forward, the merge holds more than git's merge of the checked
    /// commit, or main's configuration or signers changed under the PR.
    fn judge(
        &self,
        facts: &Facts,
        pinned_blob: &str,
        resolved: bool,
        short: &dyn Fn(&str) -> String,
    ) -> Vec<String> {
        let mut reasons = Vec::new();
        let first = self.first.as_str();
        if !self.descends {
            reasons.push(format!(
                "the merge's first parent {} does not descend from the PR's base {}: the merged tree was never verified",
                short(first),
                facts.base.as_deref().map_or("none".to_string(), short)
            ));
        }
        if !resolved && self.merged_by_git.as_deref() != Some(facts.commit_tree.as_str()) {
            reasons.push(format!(
                "the merge commit's tree {} is not git's merge of the checked commit onto {} ({}): something rode along",
                short(&facts.commit_tree),
                short(first),
                self.merged_by_git.as_deref().map_or("it conflicts".to_string(), short)
            ));
        }
        if self.config.as_deref() != Some(pinned_blob) {
            reasons.push(format!(
                "main's {} changed since the PR was pinned: a human runs `git orchestrate repin`",
                config::FILE_NAME
            ));
        }
        if self.signers != facts.signers_at_pin {
            reasons.push(format!(
                "main's {} changed since the PR was pinned: its answers were judged by the keys of then",
                config::ALLOWED_SIGNERS
            ));
        }
        reasons
    }
}
