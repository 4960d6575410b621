//! What humans answer: `approve` and `reject` at the review's human gate (docs/config.md, "[review]"), and
//! `resume` after a halt (docs/agent-guide.md, "HALTED").

use serde::Serialize;

use super::answers::{self, Answer, Signing};
use super::{EngineError, Session};
use crate::workflow::state::HaltReason;
use crate::workflow::{self, Event, Human, Rejection, RejectionKind, State, Status};

/// What `resume` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResumeReport {
    pub state: Status,
    /// Why the workflow had halted.
    pub halt_message: String,
    pub guidance: Option<String>,
    /// After a merge conflict: the branch the human merged and that was cleaned up.
    pub merged: Option<String>,
    /// Who signed the answer, as the pinned allowed-signers file names them.
    pub signed_by: Option<String>,
    /// After a merge conflict landed: why the PR's claim could not be released (it lapses at
    /// its expiry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_not_released: Option<String>,
}

/// What `approve` or `reject` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerReport {
    pub state: Status,
    /// Who signed the answer, as the pinned allowed-signers file names them.
    pub signed_by: Option<String>,
}

/// A human's merge, recorded and pushed with main to `remote` in one push (docs/integrity.md,
/// "A landing in flight"): a landing a kill interrupted after its push is completed rather
/// than pushed again. The state it leaves.
fn land_resolved(
    session: &Session,
    snap: &crate::store::Snapshot,
    event: Event,
    human: Human,
    signed: Option<&super::AnswerSignature>,
    remote: &str,
) -> Result<Status, EngineError> {
    match super::get_task::landing::complete_interrupted_resolution(session, snap, remote)? {
        Ok(true) => Ok(session
            .store
            .read()?
            .ok_or(EngineError::Conflict)?
            .state
            .status()),
        Ok(false) => Ok(super::get_task::landing::land_resolution(
            session, snap, event, human, signed, remote,
        )?
        .to()),
        Err(why) => Err(EngineError::Remote {
            remote: remote.to_string(),
            what: "complete the landing a kill interrupted".into(),
            answer: why,
            hint: "Fix what is named, then run `git orchestrate resume` again.".into(),
        }),
    }
}

/// `resume [--guidance]`: back to where the workflow stopped. After a merge conflict it first
/// checks that the human merged the branch, then cleans up and moves on to the next PR.
/// The answer is signed as `signing` says, and refused unsigned when the pinned
/// configuration requires a signature (docs/integrity.md, "Signed human answers").
pub fn resume(
    session: &Session,
    guidance: Option<&str>,
    human: Human,
    signing: &Signing,
) -> Result<ResumeReport, EngineError> {
    let guidance = guidance
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_string);
    session.with_retries(|| {
        let snap = session.read_or_refuse("resume", |s| workflow::check_resume(s).err())?;
        workflow::check_resume(&snap.state).map_err(EngineError::Rejected)?;
        let halt = snap.state.halt().clone();
        let from = halt.as_ref().map(|h| h.message.clone()).unwrap_or_default();
        // Checked before anything is done: a refused answer leaves the branch as it was.
        let text = answers::resume_text(&snap.state, guidance.as_deref());
        let signed = answers::authorise(session, &snap, Answer::Resume, &text, signing)?;
        let (event, merged) = match halt.map(|h| h.reason) {
            Some(HaltReason::MergeConflict) => {
                let branch = merged_branch(session, &snap.state)?;
                // The human merged by hand: main as it is now is theirs.
                let main = session.main_branch(Some(&snap.state))?;
                (
                    Event::Merged {
                        branch: branch.clone(),
                        main: session.git.rev_parse(&main).ok(),
                    },
                    Some(branch),
                )
            }
            _ => (
                Event::Resumed {
                    guidance: guidance.clone(),
                },
                None,
            ),
        };
        // A human's merge lands through the workflow: recorded, and pushed with main in one
        // push, as the workflow's own merge is (docs/integrity.md, "A landing in flight").
        let remote = match &merged {
            Some(_) => super::remote::coordination_remote(session, &snap.state)?,
            None => None,
        };
        let state = match remote {
            Some(remote) => land_resolved(session, &snap, event, human, signed.as_ref(), &remote)?,
            None => session
                .apply_answer(&snap, event, human, signed.as_ref())?
                .to(),
        };
        // The PR is done: its claim goes, after the merge is recorded, as after the
        // workflow's own merge (src/engine/get_task/mod.rs).
        let claim_not_released = match &merged {
            Some(_) => {
                let state = session.store.read()?.ok_or(EngineError::Conflict)?.state;
                super::claims::release_own(session, &state)
                    .err()
                    .map(|e| e.to_string())
            }
            None => None,
        };
        Ok(ResumeReport {
            halt_message: from,
            state,
            guidance: if merged.is_some() {
                None
            } else {
                guidance.clone()
            },
            merged,
            signed_by: signed.map(|s| s.principal),
            claim_not_released,
        })
    })
}

/// After a merge conflict: the branch must be merged into main now. Deletes it and returns
/// its name; refuses (exit 4) while it is not merged.
fn merged_branch(session: &Session, state: &State) -> Result<String, EngineError> {
    let main = session.main_branch(Some(state))?;
    let branch = state.branch().map(str::to_string).unwrap_or_default();
    let git = &session.git;
    let exists = !branch.is_empty() && session.store.branch_exists(&branch)?;
    // The work finalization checked must be in main; the human may have added a
    // conflict resolution on top of it.
    let checked = match (state.plan_commit(), state.final_commit(), exists) {
        (Some(commit), _, _) | (None, Some(commit), false) => Some(commit.to_string()),
        (None, _, true) => Some(git.rev_parse(&branch)?),
        (None, None, false) => None,
    };
    let merged = match &checked {
        Some(commit) => git.is_ancestor(commit, &main)?,
        None => false,
    };
    if !merged {
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::WrongState,
            state: state.status(),
            message: format!(
                "{branch} is not merged into {main} yet (state {})",
                state.status()
            ),
            hint: format!(
                "Merge it yourself: `git checkout {main} && git merge --no-ff {branch}`, resolve the \
                 conflicts and commit; then run `git orchestrate resume` again."
            ),
        }));
    }
    if exists {
        if session.store.head_branch()?.as_deref() == Some(branch.as_str()) {
            // main checked out in another worktree cannot be checked out here too.
            match session.branch_worktree(&main)? {
                Some(_) => git.checkout_detached(&git.rev_parse(&main)?)?,
                None => git.checkout(&main)?,
            }
        }
        // A branch wholly in main goes whatever its upstream says (`git branch -d` refuses
        // one `sync` adopted whose upstream is behind); one with more on it is git's to refuse.
        let tip = git.rev_parse(&branch)?;
        if git.is_ancestor(&tip, &main)? {
            git.delete_branch_at(&branch, &tip)?;
        } else {
            git.delete_branch(&branch)?;
        }
    }
    Ok(branch)
}

/// `approve`: the human gate after a clean review.
pub fn approve(
    session: &Session,
    human: Human,
    signing: &Signing,
) -> Result<AnswerReport, EngineError> {
    answer(session, human, signing, Answer::Approve, "", || {
        Event::Approved
    })
}

/// What `approve --test-change` / `approve --flaky` asks for: the tree (a tree or a commit;
/// `None`: the PR's verified tree, which its squash must have), the changed existing tests
/// by path, and whether a pass after an earlier failure is accepted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeApprovalAsked {
    pub tree: Option<String>,
    pub tests: Vec<String>,
    pub flaky: bool,
}

/// What `approve --test-change` / `approve --flaky` recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TreeApprovalReport {
    pub state: Status,
    #[serde(flatten)]
    pub approved: answers::TreeApproval,
    /// Who signed the answer, as the pinned allowed-signers file names them.
    pub signed_by: Option<String>,
}

/// The approval `asked` names, on the workflow in `state`: the tree resolved, each test path
/// a test path of the configuration pinned for the answer; bad input is refused, naming why.
fn tree_approval(
    session: &Session,
    state: &State,
    asked: &TreeApprovalAsked,
) -> Result<answers::TreeApproval, EngineError> {
    let bad = |message: String, hint: &str| EngineError::BadInput {
        message,
        hint: hint.to_string(),
    };
    if asked.tests.is_empty() && !asked.flaky {
        return Err(bad(
            "approve a tree by name: name the changed tests (--test-change PATH) or accept a pass              after a failure (--flaky)"
                .into(),
            "git orchestrate approve --test-change tests/test_add.sh",
        ));
    }
    let tree = match &asked.tree {
        Some(rev) => session.git.tree_of(rev).map_err(|_| {
            bad(
                format!("\"{rev}\" names no tree or commit in this repository"),
                "Name the tree the final check or attest named (--tree TREE), or a commit.",
            )
        })?,
        None => state
            .pr()
            .and_then(|pr| pr.verified_tree.clone())
            .ok_or_else(|| {
                bad(
                    "the workflow has no verified tree to approve: name one with --tree".into(),
                    "Pass the tree the refusal named: --tree TREE.",
                )
            })?,
    };
    let config = answers::answer_config(session, state)?;
    let mut tests: Vec<String> = Vec::new();
    for path in &asked.tests {
        let path = path.trim().trim_start_matches("./").to_string();
        if path.is_empty() || path.chars().any(char::is_control) || !config.is_test_path(&path) {
            return Err(bad(
                format!(
                    "\"{path}\" is not a test path of the pinned configuration ([gates] test_paths)"
                ),
                "Name the changed test as the refusal names it, relative to the repository's root.",
            ));
        }
        if !tests.contains(&path) {
            tests.push(path);
        }
    }
    tests.sort();
    Ok(answers::TreeApproval {
        tree,
        tests,
        flaky: asked.flaky,
    })
}

/// `approve --test-change PATH... [--flaky] [--tree TREE]`: a human approves, for one tree
/// only, the changes to existing tests by path and/or a pass after an earlier failure
/// (docs/integrity.md, "Approved by name"); recorded in any state, signed as `signing` says.
pub fn approve_tree(
    session: &Session,
    asked: &TreeApprovalAsked,
    human: Human,
    signing: &Signing,
) -> Result<TreeApprovalReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_refuse("approve-tree", |_| None)?;
        // Where no configuration is pinned (a new workflow before its PR began), an answer is
        // judged under the defaults, where no signature is required: an agent could approve
        // by name there. After a landing, main's tip as it landed is the pin.
        if answers::answer_pin(&snap.state).is_none() {
            return Err(crate::engine::error::wrong_state(
                snap.state.status(),
                "approve --test-change/--flaky is not accepted before the PR has begun: no \
                 configuration is pinned yet, so the answer could not be held to it",
                "Approve once the PR branch exists (`git orchestrate status` shows it).",
            ));
        }
        let approved = tree_approval(session, &snap.state, asked)?;
        let event = Event::TreeApproved {
            tree: approved.tree.clone(),
            tests: approved.tests.clone(),
            flaky: approved.flaky,
        };
        let signed = answers::authorise(
            session,
            &snap,
            Answer::ApproveTree,
            &approved.text(),
            signing,
        )?;
        Ok(TreeApprovalReport {
            state: session
                .apply_answer(&snap, event, human, signed.as_ref())?
                .to(),
            approved,
            signed_by: signed.map(|s| s.principal),
        })
    })
}

/// The bytes to sign for `approve --test-change`/`--flaky` as asked, on the workflow as it
/// is now (`--print-payload`).
pub fn approve_tree_payload(
    session: &Session,
    asked: &TreeApprovalAsked,
) -> Result<Vec<u8>, EngineError> {
    let snap = session.read_or_refuse("approve-tree", |_| None)?;
    let approved = tree_approval(session, &snap.state, asked)?;
    answers::answer_payload(session, Answer::ApproveTree, Some(&approved.text()))
}

/// `reject --comment`: the comment becomes a blocking finding and a new task.
pub fn reject(
    session: &Session,
    comment: &str,
    human: Human,
    signing: &Signing,
) -> Result<AnswerReport, EngineError> {
    if !comment.trim().is_empty() {
        super::check_field(crate::workflow::fields::Field::Comment, comment)?;
    }
    if comment.trim().is_empty() {
        return Err(EngineError::Rejected(Rejection {
            kind: RejectionKind::InvalidInput,
            state: session
                .store
                .read()?
                .map_or(Status::Initializing, |s| s.state.status()),
            message: "the rejection needs a comment: it becomes the agent's next task".into(),
            hint: "Say what must change: git orchestrate reject --comment \"...\"".into(),
        }));
    }
    let comment = comment.trim();
    answer(session, human, signing, Answer::Reject, comment, || {
        Event::Rejected {
            comment: comment.to_string(),
            by: Some(human),
        }
    })
}

/// `approve` or `reject`: `text` is what the answer's signature covers besides the answer.
fn answer(
    session: &Session,
    human: Human,
    signing: &Signing,
    kind: Answer,
    text: &str,
    event: impl Fn() -> Event,
) -> Result<AnswerReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_refuse(event().name(), |s| {
            workflow::transition(s, None, event()).err()
        })?;
        let signed = answers::authorise(session, &snap, kind, text, signing)?;
        Ok(AnswerReport {
            state: session
                .apply_answer(&snap, event(), human, signed.as_ref())?
                .to(),
            signed_by: signed.map(|s| s.principal),
        })
    })
}
