//! Reports are checked, not read (docs/tickets.md): the commit a developer's report
//! delivers must be its branch's tip; in fresh worktrees written from the objects the
//! pinned gates run on it, the test files the subtask added or changed run on its base
//! (where they must fail), and its diff is held against the assignment's `filesToModify`.

use crate::config::Config;
use crate::engine::proof;
use crate::engine::{EngineError, Session};
use crate::store::branch_ref;
use crate::workflow::proof as proof_plan;
use crate::workflow::ticket::{Observed, Subtask, Ticket};

fn refused(message: String, hint: &str) -> EngineError {
    EngineError::TicketRefused {
        message,
        hint: hint.to_string(),
        state: "DEVELOPER".into(),
    }
}

/// The commit `given` names, when it is what the report may deliver: the tip of the
/// ticket's branch, descended from the subtask's base, with no uncommitted change to
/// tracked files where the branch is checked out here.
pub fn delivered_commit(
    session: &Session,
    ticket: &Ticket,
    subtask: &Subtask,
    given: &str,
) -> Result<String, EngineError> {
    let git = &session.git;
    let commit =
        git.rev_parse(&format!("{given}^{{commit}}"))
            .map_err(|_| EngineError::BadInput {
                message: format!("`{given}` names no commit"),
                hint: "Give `commit` as a commit id or a ref name (default HEAD).".into(),
            })?;
    let tip = git.rev_parse(&branch_ref(&ticket.branch)).map_err(|_| {
        refused(
            format!("the ticket's branch {} does not exist", ticket.branch),
            "A human restores it (it is made at `ticket new`).",
        )
    })?;
    if commit != tip {
        return Err(refused(
            format!(
                "commit {} is not the tip of the ticket's branch {} (its tip is {}): a report \
                 delivers the branch's tip, where the work is",
                crate::short_id(&commit),
                ticket.branch,
                crate::short_id(&tip)
            ),
            "Commit your work on the ticket's branch, then report again (without `commit`, or \
             with the branch's tip).",
        ));
    }
    let base = subtask.base.as_deref().unwrap_or(&ticket.verified);
    if !git.is_ancestor(base, &commit)? {
        return Err(refused(
            format!(
                "the ticket's branch no longer holds the subtask's base {}: its history was \
                 rewritten",
                crate::short_id(base)
            ),
            "Build on the subtask's base: the branch must keep every accepted commit.",
        ));
    }
    if session.store.head_branch()?.as_deref() == Some(ticket.branch.as_str()) {
        let changes = git.tracked_changes()?;
        if !changes.trim().is_empty() {
            return Err(refused(
                format!(
                    "the working tree has changes that are not committed, so the report's \
                     commit does not hold them:\n{}",
                    changes.trim_end()
                ),
                "Commit them (or drop them), then report again.",
            ));
        }
    }
    Ok(commit)
}

/// The configuration the ticket is checked under: `.orchestrate.toml` as main had it at
/// the ticket's pin, which nothing on the branch can change.
pub fn ticket_config(session: &Session, ticket: &Ticket) -> Result<Config, EngineError> {
    proof::pinned_config(
        session,
        ticket.config.as_deref(),
        &ticket.main_branch,
        &ticket.pin,
    )
}

/// What the subtask's `commit` really does, observed in fresh worktrees.
pub fn observe(
    session: &Session,
    ticket: &Ticket,
    subtask: &Subtask,
    commit: &str,
) -> Result<Observed, EngineError> {
    let git = &session.git;
    let config = ticket_config(session, ticket)?;
    let base = subtask
        .base
        .clone()
        .unwrap_or_else(|| ticket.verified.clone());
    let changes = git.tree_changes(&base, commit)?;
    let files_changed: Vec<String> = changes.iter().map(|(_, p)| p.clone()).collect();
    let outside_scope = match subtask.assignment.as_ref() {
        Some(a) => files_changed
            .iter()
            .filter(|p| !a.allows(p))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    // The judges (the config, the scripts the gates run, `[gates] protected`) and the
    // prompt files: what the verdict and the instructions rest on.
    let mut specs = crate::engine::verify::protected_specs(git, &config, &[&base, commit])?;
    specs.push(format!(
        ":(glob){}/**",
        crate::workflow::ticket::PROMPTS_DIR
    ));
    let protected = git.changed_files_in(&base, commit, &specs)?;
    let removed_tests = changes
        .iter()
        .filter(|(how, path)| *how == "removed" && config.is_test_path(path))
        .map(|(_, p)| p.clone())
        .collect();
    let tree = git.tree_of(commit)?;
    let mut links_out = Vec::new();
    for (how, path) in &changes {
        if *how != "removed"
            && let Some(why) = crate::engine::proof::link_out(session, &tree, path)?
        {
            links_out.push(why);
        }
    }
    let plan =
        proof_plan::ticket_report(commit, &base, ticket.config.as_deref(), &changes, |path| {
            config.is_test_path(path)
        });
    let mut gates = None;
    let mut tests = Vec::new();
    let mut tests_on_base = None;
    for outcome in proof::execute(session, &config, &plan, None)? {
        match outcome {
            proof::Outcome::Gates { result, .. } => gates = Some(result),
            proof::Outcome::OnBase { paths, result, .. } => {
                tests = paths;
                tests_on_base = Some(result);
            }
            _ => {}
        }
    }
    let gates =
        gates.ok_or_else(|| EngineError::Internal("a report's proof plan ran no gates".into()))?;
    Ok(Observed {
        commit: commit.to_string(),
        base,
        gates,
        tests,
        tests_on_base,
        files_changed,
        outside_scope,
        protected,
        removed_tests,
        links_out,
    })
}
