//! The gates in the agent's own working tree, the executor's `WorkingTreeGates` obligation
//! (src/workflow/proof.rs): a checkpoint's, a checkpoint commit's and a passing step's
//! preflight. The recorded pass stands in when the plan allows; else the gates run where the
//! agent works, and the tree is checked again to be the one they saw.

use crate::config::Config;
use crate::engine::verify::{
    GateSource, TreeVerification, protected_changes, recorded_verification,
};
use crate::engine::{EngineError, Session, io_error};
use crate::gates::{self, Reusable};
use crate::workflow::State;
use crate::workflow::proof::{GateFailure, Recheck, Reuse};

/// Verifies `tree` (the working tree's or the index's, taken before anything ran) with the
/// gates of `config`: the recorded pass when `reuse` allows, else preflight in the working
/// tree (a gate whose command is `test_run`'s takes that run under [`Reuse::TestRun`]), then
/// `recheck` that the gates saw `tree`. A failing gate or a changed file is the result, not an
/// error.
pub(super) fn gates_here(
    session: &Session,
    (state, config): (Option<&State>, &Config),
    (tree, reuse, recheck): (Option<&str>, Reuse, Recheck),
    test_run: Option<Reusable<'_>>,
) -> Result<TreeVerification, EngineError> {
    crate::engine::hermetic::require(session)?;
    if reuse == Reuse::Cache
        && let Some(tree) = tree
        && let Some(recorded) = recorded_verification(state, config, tree)
        // Without gates there is nothing to reuse: the empty run is the honest record.
        && !recorded.gates.is_empty()
    {
        return Ok(recorded);
    }
    if let Some(tree) = tree {
        let protected = protected_changes(session, state, config, tree)?;
        if !protected.is_empty() {
            return Ok(TreeVerification {
                tree: Some(tree.to_string()),
                key: config.preflight_key(),
                gates: Vec::new(),
                source: GateSource::Ran,
                changed_during: Vec::new(),
                protected,
                failed: None,
                run: None,
            });
        }
    }
    let reusable = match reuse {
        Reuse::TestRun => test_run,
        Reuse::Cache => None,
    };
    let run = gates::run_preflight_reusing(
        &config.preflight,
        session.store.workdir(),
        session.command_env()?,
        reusable,
    )
    .map_err(io_error("run preflight"))?;
    let failed = run.failed().map(|g| GateFailure {
        name: g.name.clone(),
        exit: g.run.exit.to_string(),
        output: g.run.output.clone(),
    });
    let changed_during = match tree {
        Some(tree) if failed.is_none() && !config.preflight.is_empty() => match recheck {
            Recheck::WorktreeTree => {
                let after = session.worktree_tree()?;
                if after == tree {
                    Vec::new()
                } else {
                    session.git.changed_files(tree, &after)?
                }
            }
            Recheck::Unstaged => {
                session.refuse_waiting_reads(None)?;
                session.git.unstaged_files()?
            }
        },
        _ => Vec::new(),
    };
    Ok(TreeVerification {
        tree: tree.map(str::to_string),
        key: config.preflight_key(),
        gates: run.record().gates,
        source: GateSource::Ran,
        changed_during,
        protected: Vec::new(),
        failed,
        run: Some(run),
    })
}
