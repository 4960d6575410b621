//! `git orchestrate audit [--all]`: is each transition what its recorded event makes?

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// Replay the workflow's history and check that nothing in it was forged.
///
/// Each transition commit records the event it applied; the audit computes every transition
/// again with the same pure function the commands use and compares the state and plan it
/// makes with the ones stored. It also checks that every move of the ref in its reflog was
/// made by git-orchestrate, and reports a deleted or rewound ref. Exit 0 when clean, 1 when
/// anything was forged, naming the first bad commit with the state expected and found.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Audit every workflow in this repository, not only the selected one.
    #[arg(long)]
    pub all: bool,
}

pub fn run(session: &Session, args: &AuditArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let report = engine::audit(session, args.all)?;
    let code = Exit::VerificationFailed.when(!report.clean());
    if ui.json_report(&report)? {
        return Ok(code);
    }
    let mut text = String::new();
    for p in &report.problems {
        // main moved outside the workflow is a human's to account for, not a forgery.
        if let Some(fix) = &p.fix {
            text.push_str(&format!("NOT ACCOUNTED FOR: {p}\n  fix: {fix}\n"));
            continue;
        }
        text.push_str(&format!("FORGED: {p}\n"));
        if let (Some(expected), Some(found)) = (&p.expected, &p.found) {
            text.push_str(&format!("  expected: {expected}\n  found:    {found}\n"));
        }
    }
    text.push_str(&format!(
        "audit of {}: {} transition{} replayed{}: {}\n",
        if report.workflows.len() == 1 {
            format!("workflow {}", report.workflows[0])
        } else {
            format!("{} workflows", report.workflows.len())
        },
        report.replayed,
        if report.replayed == 1 { "" } else { "s" },
        if report.unrecorded > 0 {
            format!(
                ", {} written before events were recorded (read, not replayed)",
                report.unrecorded
            )
        } else {
            String::new()
        },
        if report.clean() {
            "clean"
        } else if report.problems.iter().all(|p| p.fix.is_some()) {
            "main moved outside the workflow"
        } else {
            "FORGED"
        }
    ));
    ui.text(&text)?;
    Ok(code)
}
