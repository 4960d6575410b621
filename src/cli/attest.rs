//! `git orchestrate attest [COMMIT|A..B ...]`: the verdict on a workflow's merge (or a PR's
//! head) reached off the agent's machine, printed and written as a note.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::attest::{self, AttestReport};

/// Judge a workflow's merge into main, or a finalized PR's head, off the agent's machine.
///
/// For each commit: replays the workflow's chain from the PR's plan to its merge, re-runs the
/// pinned gates on the final tree and every task's pinned RED test on the PR's base (it must
/// fail) and on the final tree (it must pass), in a fresh temporary repository that reads only
/// this repository's objects, and checks that the merge brings in exactly the verified tree,
/// that the pin is main's configuration and that no protected path changed. The verdict is an
/// in-toto Statement (SLSA verification_summary/v1), written as a note under
/// refs/notes/orchestrator-attest unless --no-note. Exit 0 when every commit PASSED, 1 when any
/// FAILED (each reason named). Run it in CI or on the git server, never on the agent's machine.
#[derive(Debug, Args)]
pub struct AttestArgs {
    /// Commits to judge: merges made by a workflow, PR heads, or ranges A..B (each
    /// first-parent commit in them). Default: HEAD.
    #[arg(value_name = "COMMIT")]
    pub commits: Vec<String>,

    /// Print the verdicts only; write no note.
    #[arg(long)]
    pub no_note: bool,
}

pub fn run(args: &AttestArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let dir = super::current_dir()?;
    let report = attest::attest(&dir, &args.commits, !args.no_note)?;
    let code = Exit::VerificationFailed.when(!report.passed());
    if ui.json_report(&report)? {
        return Ok(code);
    }
    ui.text(&text(&report))?;
    Ok(code)
}

fn text(report: &AttestReport) -> String {
    let mut out = String::new();
    for v in &report.verdicts {
        let what = match (v.kind, &v.workflow) {
            (Some("merge"), Some(w)) => format!("the merge of workflow {w}"),
            (Some(_), Some(w)) => format!("the head of workflow {w}'s PR"),
            _ => "no workflow's".to_string(),
        };
        out.push_str(&format!(
            "{} {} ({what})\n",
            if v.passed { "PASSED" } else { "FAILED" },
            crate::short_id(&v.commit)
        ));
        for ran in &v.reran {
            out.push_str(&format!("  re-ran: {ran}\n"));
        }
        for answer in &v.answers {
            out.push_str(&format!(
                "  human answer: {} {} ({})\n",
                answer["answer"].as_str().unwrap_or(""),
                crate::short_id(answer["commit"].as_str().unwrap_or("")),
                answer["given"].as_str().unwrap_or("")
            ));
        }
        for reason in &v.reasons {
            out.push_str(&format!("  - {reason}\n"));
        }
    }
    match &report.notes_skipped {
        Some(why) => out.push_str(&format!("no note written: {why}\n")),
        None => out.push_str(&format!(
            "verdicts written as notes under {}\n",
            crate::store::ATTEST_NOTES_REF
        )),
    }
    out
}
