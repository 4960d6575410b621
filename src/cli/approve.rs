//! `git orchestrate approve`: a human's approval at the review's human gate, or of a tree by
//! name (`--test-change`, `--flaky`: docs/integrity.md, "Approved by name").

use clap::Args;

use super::error::require_human;
use super::signing::{SignArgs, print_payload};
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session, TreeApprovalAsked};

/// For humans: approve the PR at the review's human gate, or one tree by name.
///
/// Without options: the review's human gate (`[review] human = true`). With `--test-change`
/// or `--flaky`: one tree by name instead (docs/integrity.md, "Approved by name"). On a
/// finished ticket: `--flaky [--tree TREE]` only.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("approves_tree").args(["test_change", "flaky"]).multiple(true)))]
pub struct ApproveArgs {
    /// Approve the PR's change to this existing test (repeatable): under `[gates]
    /// pinned_tests = "report"` the final check and `attest` refuse a change to an existing
    /// test that fails the gates when put back, unless a human approved it by name.
    #[arg(long = "test-change", value_name = "PATH")]
    pub test_change: Vec<String>,
    /// Accept a pass of the tree after an earlier failure of it (a flaky verdict).
    #[arg(long)]
    pub flaky: bool,
    /// The tree (or a commit) the approval is for; default: the PR's verified tree, which its
    /// squash must have.
    #[arg(long, value_name = "TREE", requires = "approves_tree")]
    pub tree: Option<String>,
    #[command(flatten)]
    pub sign: SignArgs,
}

impl ApproveArgs {
    fn asked(&self) -> Option<TreeApprovalAsked> {
        (!self.test_change.is_empty() || self.flaky).then(|| TreeApprovalAsked {
            tree: self.tree.clone(),
            tests: self.test_change.clone(),
            flaky: self.flaky,
        })
    }
}

pub fn run(session: &Session, args: &ApproveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if engine::ticket::kind(session)? == Some(crate::store::WorkflowKind::Ticket) {
        return ticket(session, args, ui);
    }
    if let Some(asked) = args.asked() {
        if args.sign.print_payload {
            let bytes = engine::approve_tree_payload(session, &asked)?;
            ui.text(&String::from_utf8_lossy(&bytes))?;
            return Ok(Exit::Success);
        }
        let human = require_human("approve")?;
        let report = engine::approve_tree(session, &asked, human, &args.sign.signing()?)?;
        let mut what = Vec::new();
        if !report.approved.tests.is_empty() {
            what.push(format!(
                "the changes to {}",
                report.approved.tests.join(", ")
            ));
        }
        if report.approved.flaky {
            what.push("a pass after an earlier failure".to_string());
        }
        let text = format!(
            "approved for the tree {} only: {} ({}); state {}\n",
            report.approved.tree,
            what.join(" and "),
            report
                .signed_by
                .as_deref()
                .map_or("unsigned".to_string(), |p| format!("signed by {p}")),
            report.state
        );
        ui.report_or_text(&report, &text)?;
        return Ok(Exit::Success);
    }
    if args.sign.print_payload {
        return print_payload(session, ui, Answer::Approve, None);
    }
    let human = require_human("approve")?;
    let answer = engine::approve(session, human, &args.sign.signing()?)?;
    let text = format!(
        "approved: CODE_REVIEW -> {}; the agent's next `git orchestrate get-task` finalizes the PR\n",
        answer.state
    );
    ui.report_or_text(&answer, &text)?;
    Ok(Exit::Success)
}

/// `approve` on a ticket workflow: only `--flaky [--tree TREE]`, once the ticket is finished
/// (docs/tickets.md); a ticket has no review gate and no pinned tests to approve by name.
fn ticket(session: &Session, args: &ApproveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    if !args.flaky || !args.test_change.is_empty() {
        return Err(super::CommandError::invalid_input(
            "a ticket takes one approval: `approve --flaky`, a pass of its tree after an \
             earlier failure"
                .to_string(),
            "git orchestrate approve --flaky [--tree TREE]",
        )
        .into());
    }
    let tree = args.tree.as_deref();
    if args.sign.print_payload {
        let bytes = engine::ticket::approve_flaky_payload(session, tree)?;
        ui.text(&String::from_utf8_lossy(&bytes))?;
        return Ok(Exit::Success);
    }
    let human = require_human("approve")?;
    let (outcome, approved, signed_by) =
        engine::ticket::approve_flaky(session, tree, human, &args.sign.signing()?)?;
    let text = format!(
        "approved for the tree {} only: a pass after an earlier failure ({}); ticket {}\n",
        approved.tree,
        signed_by.map_or("unsigned".to_string(), |p| format!("signed by {p}")),
        outcome.state.as_str()
    );
    ui.report_or_text(&outcome, &text)?;
    Ok(Exit::Success)
}
