//! Reports are checked, not read (docs/tickets.md): the commit a developer's report
//! delivers must be its branch's tip; in fresh worktrees written from the objects the
//! pinned gates run on it, the test files the subtask added or changed run on its base
//! (where they must fail), and its diff is held against the assignment's `filesToModify`.

use crate::config::Config;
use crate::engine::scratch::Scratch;
use crate::engine::{EngineError, Session, io_error};
use crate::exec;
use crate::gates;
use crate::store::branch_ref;
use crate::workflow::ticket::{FailedGate, GateResult, GateVerdict, Observed, Subtask, Ticket};

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
pub fn pinned_config(session: &Session, ticket: &Ticket) -> Result<Config, EngineError> {
    let origin = crate::config::Origin::Pinned {
        main: ticket.main_branch.clone(),
        commit: ticket.pin.clone(),
    };
    let Some(blob) = &ticket.config else {
        return Ok(Config::default());
    };
    let bytes = session
        .store
        .blob_within(blob, crate::input::CAP)?
        .map_err(|size| EngineError::BadInput {
            message: format!("the pinned .orchestrate.toml is {size} bytes, over the limit"),
            hint: "A human fixes main's configuration.".into(),
        })?;
    let text = String::from_utf8(bytes).map_err(|_| EngineError::BadInput {
        message: "the pinned .orchestrate.toml is not UTF-8".into(),
        hint: "A human fixes main's configuration.".into(),
    })?;
    Ok(Config::parse(&text, &origin)?)
}

/// The pinned gates in `scratch`: their verdict; gates that changed the files fail.
pub fn gates_in(
    session: &Session,
    config: &Config,
    scratch: &Scratch,
) -> Result<GateResult, EngineError> {
    if config.preflight.is_empty() {
        return Ok(GateResult {
            result: GateVerdict::None,
            ran: Vec::new(),
            failed: None,
        });
    }
    let env = session.command_env()?;
    scratch.baseline()?;
    let run = gates::run_preflight(&config.preflight, scratch.path(), env)
        .map_err(io_error("run the gates in a fresh worktree"))?;
    let ran = run.gates.iter().map(|g| g.name.clone()).collect();
    if let Some(gate) = run.failed() {
        return Ok(GateResult {
            result: GateVerdict::Fail,
            ran,
            failed: Some(FailedGate {
                gate: gate.name.clone(),
                exit: gate.run.exit.to_string(),
                tail: exec::tail_lines(&gate.run.output, config.test.output_tail),
            }),
        });
    }
    let changed = scratch.changed()?;
    if !changed.is_empty() {
        return Ok(GateResult {
            result: GateVerdict::Fail,
            ran,
            failed: Some(FailedGate {
                gate: "(the gates changed files)".into(),
                exit: "n/a".into(),
                tail: changed.join("\n"),
            }),
        });
    }
    Ok(GateResult {
        result: GateVerdict::Pass,
        ran,
        failed: None,
    })
}

/// What the subtask's `commit` really does, observed in fresh worktrees.
pub fn observe(
    session: &Session,
    ticket: &Ticket,
    subtask: &Subtask,
    commit: &str,
) -> Result<Observed, EngineError> {
    let git = &session.git;
    let config = pinned_config(session, ticket)?;
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
    let mut specs = config.protected_pathspecs(&crate::engine::verify::judges(&config));
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
    let tests: Vec<String> = changes
        .iter()
        .filter(|(how, path)| *how != "removed" && config.is_test_path(path))
        .map(|(_, p)| p.clone())
        .collect();
    let tree = git.tree_of(commit)?;
    let mut links_out = Vec::new();
    for (how, path) in &changes {
        if *how != "removed"
            && let Some(why) = crate::engine::red::link_out(session, &tree, path)?
        {
            links_out.push(why);
        }
    }
    let gates = {
        let scratch = Scratch::new(session, commit, &tree)?;
        gates_in(session, &config, &scratch)?
    };
    let tests_on_base = if tests.is_empty() {
        None
    } else {
        // The base's files with only the subtask's test files put in, at the commit's history
        // and index, as the run on the commit had them: the two runs differ in the code
        // alone, and the tests must fail here, or they do not test the change (a test that
        // tells the runs apart by HEAD or the index passes both).
        let base_tree = git.tree_of(&base)?;
        let scratch = Scratch::with_index(session, commit, &base_tree, &tree)?;
        scratch.put(&tree, &tests)?;
        Some(gates_in(session, &config, &scratch)?)
    };
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
