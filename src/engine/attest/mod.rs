//! `git orchestrate attest` (docs/integrity.md, "attest"): the verdict on a workflow's merge
//! into main, or on a finalized PR's head, reached off the agent's machine (in CI or on the
//! git server) on content the agent cannot choose after the fact: the chain is replayed, the
//! pinned gates and every task's pinned RED test run again in a fresh repository that reads
//! only the judged repository's objects, and the merge, the pin and the protected paths are
//! checked against what the chain says was verified.

mod find;
pub mod receive;
pub mod seal;
mod statement;
mod verifier;

use serde::Serialize;
use serde_json::Value;

pub use find::Target;
pub use statement::{PREDICATE_TYPE, STATEMENT_TYPE, VERIFIER_ID};
pub use verifier::{Chain, Confine, Judged, Verifier, workflow_of};

use super::answers::{AnswerCheck, AnswerVerdict};
use super::chain::audit_chain;
use super::finalize::final_check;
use super::{EngineError, Session};
use crate::config::{self, Config, Origin};
use crate::store::Snapshot;

/// The verdict on one commit.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub commit: String,
    /// `merge` or `pr-head`; `None` when no workflow records the commit.
    pub kind: Option<&'static str>,
    pub workflow: Option<String>,
    /// The transition the verdict read.
    pub transition: Option<String>,
    pub passed: bool,
    /// Why it failed: every reason found.
    pub reasons: Vec<String>,
    /// What ran again, and how it ended.
    pub reran: Vec<String>,
    /// The human answers in the PR's chain, each judged: signed by whom, or how it was
    /// given without a signature.
    pub answers: Vec<AnswerCheck>,
    /// The in-toto Statement (what the note holds).
    pub statement: Value,
}

/// The commits `revs` name in the repository `judged` (a revision each, or `A..B`: the
/// first-parent commits of the range, oldest first).
pub fn commits_of(judged: &Judged, revs: &[String]) -> Result<Vec<String>, EngineError> {
    let mut commits = Vec::new();
    for rev in revs {
        if rev.starts_with('-') {
            return Err(EngineError::BadInput {
                message: format!("\"{rev}\" is not a revision: attest takes commits and ranges"),
                hint: "Name a commit (HEAD, main, an id) or a range A..B.".into(),
            });
        }
        if rev.contains("..") {
            let mut range = judged
                .git
                .first_parents(rev)
                .map_err(|e| EngineError::BadInput {
                    message: format!("cannot list the range {rev}: {}", e.stderr.trim()),
                    hint: "Name a range of commits this repository has, like main~3..main.".into(),
                })?;
            range.reverse();
            commits.extend(range);
        } else {
            let id = judged
                .git
                .rev_parse(rev)
                .map_err(|_| EngineError::BadInput {
                    message: format!("\"{rev}\" names no commit in this repository"),
                    hint: "Fetch it first, or name a commit this repository has.".into(),
                })?;
            commits.push(id);
        }
    }
    Ok(commits)
}

/// The verdict on `commit`, judged in `verifier` from the chains given (pushed updates
/// first, then the repository's refs).
pub fn judge(verifier: &Verifier, chains: &[Chain], commit: &str) -> Result<Verdict, EngineError> {
    let time = gix::date::Time::now_utc().format_or_unix(gix::date::time::format::ISO8601_STRICT);
    let mut verdict = Verdict {
        commit: commit.to_string(),
        kind: None,
        workflow: None,
        transition: None,
        passed: false,
        reasons: Vec::new(),
        reran: Vec::new(),
        answers: Vec::new(),
        statement: Value::Null,
    };
    let found = match chains.first() {
        Some(first) => {
            let probe = verifier.session(first)?;
            find::locate(&probe.store, chains, commit)?
        }
        None => None,
    };
    let mut policy = None;
    match found {
        None => verdict.reasons.push(format!(
            "no workflow's chain records {commit} as its merge into main or as a finalized PR's head"
        )),
        Some((chain, target)) => {
            verdict.kind = Some(target.kind());
            verdict.workflow = Some(chain.workflow.clone());
            verdict.transition = Some(target.transition().to_string());
            let session = verifier.session(&chain)?;
            policy = check(
                &session,
                &chain,
                &target,
                commit,
                verifier.cannot_confine(),
                &mut verdict,
            )?;
        }
    }
    verdict.passed = verdict.reasons.is_empty();
    let reference = verdict
        .workflow
        .as_deref()
        .map(crate::store::workflow_ref)
        .unwrap_or_default();
    verdict.statement = statement::statement(&statement::Facts {
        commit,
        kind: verdict.kind,
        workflow: verdict.workflow.as_deref(),
        chain: verdict
            .transition
            .as_deref()
            .map(|t| (t, reference.as_str())),
        policy: policy
            .as_ref()
            .map(|(p, b): &(String, String)| (p.as_str(), b.as_str())),
        passed: verdict.passed,
        time: &time,
        reasons: &verdict.reasons,
        reran: &verdict.reran,
        answers: &verdict
            .answers
            .iter()
            .filter_map(|a| serde_json::to_value(a).ok())
            .collect::<Vec<_>>(),
    });
    Ok(verdict)
}

/// Every check of the PR behind `commit`; reasons and re-runs go into `verdict`. Returns
/// the policy (the pin's commit and config blob) when the PR has one.
fn check(
    session: &Session,
    chain: &Chain,
    target: &Target,
    commit: &str,
    cannot_confine: Option<&str>,
    verdict: &mut Verdict,
) -> Result<Option<(String, String)>, EngineError> {
    let store = &session.store;
    let reasons = &mut verdict.reasons;
    let snap = match store.read_at(target.pr_state(), &chain.reference) {
        Ok(snap) => snap,
        Err(e) => {
            reasons.push(format!("the PR's state cannot be read: {e}"));
            return Ok(None);
        }
    };
    let state = &snap.state;
    let (Some(pr), Some(final_commit)) = (state.pr(), state.final_commit()) else {
        reasons.push(format!(
            "the transition before it ({}) holds no finalized PR",
            crate::short_id(&target.pr_state().to_string())
        ));
        return Ok(None);
    };
    let final_commit = final_commit.to_string();
    // The chain, from the plan's acceptance to the transition read.
    let pr_history = store.history_back_to(target.pr_state(), "plan")?;
    let stop = match pr_history.last() {
        Some(plan) if plan.event == "plan" => {
            let id = gix::ObjectId::from_hex(plan.commit.as_bytes())
                .map_err(|e| EngineError::Internal(format!("a commit id did not parse: {e}")))?;
            store.commit_record(id)?.parents.first().copied()
        }
        _ => None,
    };
    let audit = audit_chain(store, &chain.workflow, target.transition(), stop)?;
    if let Some(problem) = &audit.forged {
        reasons.push(format!("the workflow's chain is forged: {problem}"));
    }
    verdict.answers =
        super::answers::judge_answers(session, &chain.workflow, target.transition(), stop)?;
    for answer in verdict.answers.iter().filter(|a| a.fails()) {
        reasons.push(format!(
            "the human answer `{}` in {} does not hold: {}",
            answer.answer,
            crate::short_id(&answer.commit),
            match &answer.verdict {
                AnswerVerdict::Bad { why } => why.clone(),
                _ => "it is unsigned, and the pinned configuration requires a signature ([human] require = \"signature\")".into(),
            }
        ));
    }
    let Some(pin) = pr.pin.clone() else {
        reasons.push("the PR pinned no configuration: nothing says which gates verify it".into());
        return Ok(None);
    };
    let Some(blob) = pin.config.clone() else {
        reasons.push(format!(
            "main had no {} at the pin ({}): no gates verify the PR",
            config::FILE_NAME,
            crate::short_id(&pin.commit)
        ));
        return Ok(None);
    };
    let policy = Some((pin.commit.clone(), blob.clone()));
    let main = state.main_branch.clone().unwrap_or_else(|| "main".into());
    let mut config = match pinned_config(session, &blob, &main, &pin.commit) {
        Ok(config) => config,
        Err(why) => {
            reasons.push(why);
            return Ok(policy);
        }
    };
    let facts = Facts::gather(session, &snap, commit, &final_commit)?;
    reasons.extend(facts.judge(
        target,
        &Pinned {
            commit: &pin.commit,
            config: &blob,
            master_plan: &config.master_plan,
        },
        pr.verified_tree.as_deref(),
    ));
    let specs = config.protected_pathspecs(&super::verify::judges(&config));
    let mut protected =
        super::verify::protected_changes(session, Some(state), &config, &facts.final_tree)?;
    // From main before the merge too: a pin is a commit in main's history, and a PR pinned
    // long ago must not take main's protected files back to how they were then.
    if let Some(base) = &facts.base {
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
    if config.review.policy().human
        && !verdict
            .answers
            .iter()
            .any(|a| a.answer == "approve" && !a.fails())
    {
        reasons.push(
            "the pinned configuration requires a human's approval ([review] human) and the PR's chain holds none that stands".into(),
        );
    }
    for problem in super::hermetic::problems(session)? {
        reasons.push(format!("the verifier cannot verify here: {problem}"));
    }
    if config.preflight.is_empty() {
        reasons.push("the pinned configuration has no gates: nothing can be run again".into());
        return Ok(policy);
    }
    let record = super::pr_record::of_snapshot(session, &snap)?;
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
    if let Some(plan) = session.store.plan(&snap)? {
        // The review's and a human's feedback tasks are GREEN steps by design.
        let mut plan = plan;
        plan.tasks
            .retain(|t| !crate::workflow::review::is_feedback_task(t));
        let without = super::pr_record::tasks_without_red(&plan);
        if !without.is_empty() {
            reasons.push(format!(
                "tasks without a RED step, so nothing proves their tests failed first: {}",
                without.join(", ")
            ));
        }
    }
    if let Some(why) = cannot_confine {
        reasons.push(format!(
            "the verifier must confine the PR's commands and cannot here ({why}), so nothing was run; \
             a human sets `git config orchestrate.attestConfine none` where running them unconfined is safe"
        ));
    }
    // Nothing the PR wrote runs while the record already fails: a forged chain does not get
    // its code run by the verifier.
    if !reasons.is_empty() {
        return Ok(policy);
    }
    // attest always re-runs, whatever the PR's own final check was set to do.
    config.finalize.clean_check = true;
    let rerun = final_check(session, &snap, &config, &final_commit)?;
    verdict.reran.push(rerun.verification.clone());
    for red in &rerun.red_tests {
        verdict.reran.push(format!(
            "RED test of step {} `{}`: {} on the base, {} on the final tree",
            red.step, red.command, red.base, red.squashed
        ));
    }
    if let Some(refused) = &rerun.refused {
        verdict.reasons.push(refused.to_string());
    }
    Ok(policy)
}

/// What the PR pinned: main's commit, its config blob, and the master plan that config names.
struct Pinned<'a> {
    commit: &'a str,
    config: &'a str,
    master_plan: &'a str,
}

/// The configuration the PR pinned, or why it cannot be read.
fn pinned_config(session: &Session, blob: &str, main: &str, pin: &str) -> Result<Config, String> {
    let text = match session.store.blob_within(blob, crate::input::CAP) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => {
            return Err(format!(
                "the pinned configuration is {size} bytes: too big to read"
            ));
        }
        Err(e) => return Err(format!("the pinned configuration cannot be read: {e}")),
    };
    let text = String::from_utf8(text)
        .map_err(|_| "the pinned configuration is not UTF-8 text".to_string())?;
    Config::parse(
        &text,
        &Origin::Pinned {
            main: main.to_string(),
            commit: pin.to_string(),
        },
    )
    .map_err(|e| format!("the pinned configuration does not parse: {e}"))
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
        let base = git.parents(final_commit)?.into_iter().next();
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
        let commit_parents = git.parents(commit)?;
        let plan_commit = match state.plan_commit() {
            Some(plan) => Some((
                plan.to_string(),
                git.parents(plan)?,
                git.tree_changes(final_commit, plan)?
                    .into_iter()
                    .map(|(_, p)| p)
                    .collect(),
            )),
            None => None,
        };
        let merged_tree = match state.plan_commit() {
            Some(plan) => git.tree_of(plan)?,
            None => git.tree_of(final_commit)?,
        };
        Ok(Facts {
            commit_tree: git.tree_of(commit)?,
            final_commit: final_commit.to_string(),
            merged_tree,
            final_tree: git.tree_of(final_commit)?,
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
    fn judge(&self, target: &Target, pinned: &Pinned, verified_tree: Option<&str>) -> Vec<String> {
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
                [first, second] => {
                    if *second != merged {
                        reasons.push(format!(
                            "the merge brings in {}, not the PR's checked commit {}",
                            short(second),
                            short(&merged)
                        ));
                    }
                    if self.commit_tree != self.merged_tree {
                        reasons.push(format!(
                            "the merge commit's tree {} is not the tree of the commit it merges ({}): something rode along",
                            short(&self.commit_tree),
                            short(&self.merged_tree)
                        ));
                    }
                    if Some(first) != self.base.as_ref() {
                        reasons.push(format!(
                            "main moved between the PR's finalization and its merge (first parent {}, the PR's base {}): the merged tree was never verified",
                            short(first),
                            self.base.as_deref().map_or("none".to_string(), short)
                        ));
                    }
                }
                _ => reasons.push("it is not a merge commit".into()),
            }
        }
        reasons
    }
}

/// What `attest` did: a verdict per commit, and where the verdicts were written.
#[derive(Clone, Debug, Serialize)]
pub struct AttestReport {
    pub verdicts: Vec<Verdict>,
    /// Commits whose verdict was written as a note under `refs/notes/orchestrator-attest`.
    pub notes_written: Vec<String>,
    /// Why no note was written, when none was asked for or none could be.
    pub notes_skipped: Option<String>,
}

impl AttestReport {
    pub fn passed(&self) -> bool {
        !self.verdicts.is_empty() && self.verdicts.iter().all(|v| v.passed)
    }
}

/// What a verdict's note holds: the statement on one line, then, with `key`, its SSH
/// signature (namespace `git-orchestrate-attest`) over that line.
pub fn note_text(verdict: &Verdict, key: Option<&std::path::Path>) -> Result<String, EngineError> {
    let line = format!("{}\n", verdict.statement);
    let Some(key) = key else {
        return Ok(line);
    };
    let failed = |e: crate::exec::ssh::SshError| EngineError::Io {
        what: format!("sign the verdict with {}", key.display()),
        source: std::io::Error::other(e.to_string()),
    };
    let program = crate::exec::ssh::ssh_keygen(&[]).map_err(failed)?;
    let signature = crate::exec::ssh::sign_in(
        &program,
        key,
        crate::exec::ssh::ATTEST_NAMESPACE,
        line.as_bytes(),
    )
    .map_err(failed)?;
    Ok(format!("{line}{signature}"))
}

/// `attest REV...` in the repository `dir` is in: every commit judged in one fresh
/// verifier repository; with `note`, each verdict written as a note on its commit, signed
/// with `signing_key` (else main's `[attest] signing_key`) when there is one.
pub fn attest(
    dir: &std::path::Path,
    revs: &[String],
    note: bool,
    signing_key: Option<&std::path::Path>,
    confine: Option<Confine>,
) -> Result<AttestReport, EngineError> {
    let judged = Judged::open(dir)?;
    let revs = if revs.is_empty() {
        vec!["HEAD".to_string()]
    } else {
        revs.to_vec()
    };
    let commits = commits_of(&judged, &revs)?;
    let chains = judged.chains()?;
    let confine = match confine {
        Some(confine) => confine,
        None => judged.confine(Confine::None)?,
    };
    let verifier = Verifier::new(&judged, confine)?;
    let mut verdicts = Vec::new();
    for commit in &commits {
        verdicts.push(judge(&verifier, &chains, commit)?);
    }
    let mut report = AttestReport {
        verdicts,
        notes_written: Vec::new(),
        notes_skipped: (!note).then(|| "--no-note".to_string()),
    };
    if note {
        let configured = judged.main_config()?.1.attest.signing_key;
        let key = signing_key.or(configured.as_deref().map(std::path::Path::new));
        write_notes(dir, &mut report, key)?;
    }
    Ok(report)
}

/// Each verdict as the note on its commit, in the judged repository.
fn write_notes(
    dir: &std::path::Path,
    report: &mut AttestReport,
    key: Option<&std::path::Path>,
) -> Result<(), EngineError> {
    let store = match crate::store::Store::discover_selected(dir, None) {
        Ok(store) => store,
        Err(crate::store::StoreError::Bare) => {
            report.notes_skipped = Some(
                "a bare repository: the server hook writes the verdicts of the pushes it accepts"
                    .into(),
            );
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    for verdict in &report.verdicts {
        let text = note_text(verdict, key)?;
        let mut tries = 0;
        loop {
            match store.set_attest_note(&verdict.commit, &text) {
                Ok(_) => break,
                Err(crate::store::WriteError::Conflict) if tries < 20 => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
        report.notes_written.push(verdict.commit.clone());
    }
    Ok(())
}
