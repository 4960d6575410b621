//! `git orchestrate verify [RANGE]`: checkpoint commits without a passing note, and PRs'
//! squashed commits without a final note a workflow's history backs.

use clap::Args;

use super::render::exit_and_time;
use super::{Exit, Failure, Ui};
use crate::engine::Session;
use crate::engine::attest::seal::Attestation;
use crate::engine::notes::{self, SquashVerification, Verification, VerifyReport};
use crate::workflow::state::format_ms;

/// Check that every checkpoint commit in RANGE carries a passing verification note.
///
/// The notes are in refs/notes/orchestrator, as the commit-msg hook writes them. A checkpoint made with
/// --no-verify, or without the hooks installed, has none. A PR's squashed commit in RANGE (on main
/// after a merge) must carry its final note and be accepted by a workflow's history. Exit 1 if any
/// fails.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The commits to check, as `git log` takes them (default: <main branch>..HEAD; on the main
    /// branch, HEAD^..HEAD).
    #[arg(value_name = "RANGE", allow_hyphen_values = true)]
    pub range: Vec<String>,
}

pub fn run(session: &Session, args: &VerifyArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let default;
    let revs: Vec<&str> = if args.range.is_empty() {
        default = notes::default_range(session)?;
        vec![default.as_str()]
    } else {
        args.range.iter().map(String::as_str).collect()
    };
    let report = notes::verify_range(session, &revs)?;
    let failures = report.failures().count();
    let squash_failures = report.squash_failures().count();
    let code = Exit::VerificationFailed.when(report.failure_count() > 0);
    if ui.json_report(&report)? {
        return Ok(code);
    }
    ui.text(&report_text(&report, failures, squash_failures))?;
    Ok(code)
}

/// The report as people read it: a headline, then each commit with its verdict and why,
/// and what to do about the failures.
fn report_text(report: &VerifyReport, failures: usize, squash_failures: usize) -> String {
    let range = report.range.join(" ");
    let squashed = match report.squashed.len() {
        0 => String::new(),
        1 => " and 1 squashed PR commit".to_string(),
        n => format!(" and {n} squashed PR commits"),
    };
    let mut text = format!(
        "{} checkpoint commit{}{squashed} in {range} ({} commit{} looked at)\n",
        report.checkpoints.len(),
        if report.checkpoints.len() == 1 {
            ""
        } else {
            "s"
        },
        report.commits,
        if report.commits == 1 { "" } else { "s" },
    );
    for c in &report.checkpoints {
        let (label, why) = checkpoint_line(&c.verification);
        text.push_str(&commit_line(label, &c.commit, &c.subject, &why));
    }
    if failures > 0 {
        text.push_str(&format!(
            "{failures} checkpoint commit{} without a passing note. Recommit {} through the hook (with \
             the hooks installed: `git orchestrate hooks install`), or make a new checkpoint with \
             `git orchestrate checkpoint`.\n",
            if failures == 1 { "" } else { "s" },
            if failures == 1 { "it" } else { "them" },
        ));
    }
    for c in &report.squashed {
        let (label, why) = squash_line(&c.verification);
        text.push_str(&commit_line(label, &c.commit, &c.subject, &why));
        text.push_str(&squash_adequacy(&c.verification));
    }
    if squash_failures > 0 {
        text.push_str(&format!(
            "{squash_failures} squashed PR commit{} without a passing final note. If the PR was merged in \
             another clone, fetch its notes and workflows (`git orchestrate sync`) and verify \
             again; otherwise what is on this branch did not come \
             through a workflow's final check.\n",
            if squash_failures == 1 { "" } else { "s" },
        ));
    }
    for c in &report.attested {
        let (label, why) = attestation_line(&c.attestation);
        text.push_str(&commit_line(label, &c.commit, &c.subject, &why));
    }
    text
}

/// The label and the reason `verify` shows for a commit's attestation on main.
fn attestation_line(attestation: &Attestation) -> (&'static str, String) {
    match attestation {
        Attestation::Passed { verifier } => (
            "attested",
            format!("attest PASSED, signed by the verifier {verifier}"),
        ),
        Attestation::Failed { reasons } => {
            ("FAILED", format!("attest FAILED: {}", reasons.join("; ")))
        }
        Attestation::Unauthenticated { why } => (
            "unauth",
            format!(
                "an attestation nothing backs ({why}); run `git orchestrate attest` where the agent cannot write"
            ),
        ),
        Attestation::None => (
            "noattest",
            "no attestation: `git orchestrate attest` in CI or the server hook gives one".into(),
        ),
    }
}

/// One commit with its label, and why on the line under it.
fn commit_line(label: &str, commit: &str, subject: &str, why: &str) -> String {
    format!(
        "  {label:<8} {} {subject}\n           {why}\n",
        &commit[..12.min(commit.len())]
    )
}

/// The label and the reason `verify` shows for a checkpoint commit.
fn checkpoint_line(verification: &Verification) -> (&'static str, String) {
    match verification {
        Verification::Verified { cached, gates } => {
            let ran: Vec<String> = gates
                .iter()
                .map(|g| {
                    match g.exit_record() {
                        Some(exit) => format!(
                            "{} ({}{})",
                            g.name,
                            exit_and_time(&exit, g.ms),
                            if g.reused { ", reused from the test run" } else { "" }
                        ),
                        None => format!("{} (unknown exit, {})", g.name, format_ms(g.ms)),
                    }
                })
                .collect();
            let total: u64 = gates.iter().map(|g| g.ms).sum();
            (
                "ok",
                format!(
                    "preflight passed{}: {} in {}",
                    if *cached {
                        " on this tree before"
                    } else {
                        ""
                    },
                    ran.join(", "),
                    format_ms(total)
                ),
            )
        }
        Verification::NoGates => (
            "ok?",
            "noted, but no preflight gates were configured: nothing verified it".to_string(),
        ),
        Verification::GatesMissing => (
            "NO GATES",
            "noted as passing with no gates, but preflight gates are configured: they never ran on it"
                .to_string(),
        ),
        Verification::Failed => (
            "FAILED",
            "its note for this tree records no pass: a gate failed or did not run".to_string(),
        ),
        Verification::Missing => (
            "MISSING",
            "no note: committed without the commit-msg hook (--no-verify, or hooks not installed)"
                .to_string(),
        ),
        Verification::OtherTree => (
            "CHANGED",
            "its notes are for another tree: amended or rebased after it was verified".to_string(),
        ),
        Verification::Unauthenticated => (
            "UNAUTHENTICATED",
            "its note says it passed, but no workflow's history here records that tree as verified: \
             a note is anyone's word (fetch refs/orchestrator/* to check one made elsewhere)"
                .to_string(),
        ),
    }
}

/// What the final note of a PR's squashed commit says of adequacy by mutation, task by task
/// and file by file, in `attest`'s words: the per-file numbers are otherwise in the note's
/// JSON only. Nothing where the note measured none (or there is no note to read).
fn squash_adequacy(verification: &SquashVerification) -> String {
    let note = match verification {
        SquashVerification::Verified { note }
        | SquashVerification::NoGates { note }
        | SquashVerification::GatesMissing { note } => note,
        SquashVerification::Missing
        | SquashVerification::OtherTree
        | SquashVerification::Unauthenticated => return String::new(),
    };
    note.adequacy
        .iter()
        .map(|t| super::adequacy::task_text(t, "           "))
        .collect()
}

/// The label and the reason `verify` shows for a PR's squashed commit.
fn squash_line(verification: &SquashVerification) -> (&'static str, String) {
    let checked = |note: &crate::workflow::notes::FinalNote| {
        format!(
            "squashed PR \"{}\" (workflow {}): {}; {} checkpoint{} folded in",
            note.pr,
            note.workflow,
            note.verification,
            note.checkpoints.len(),
            if note.checkpoints.len() == 1 { "" } else { "s" }
        )
    };
    match verification {
        SquashVerification::Verified { note } => ("ok", checked(note)),
        SquashVerification::NoGates { note } => ("ok?", checked(note)),
        SquashVerification::GatesMissing { note } => (
            "NO GATES",
            format!(
                "{}; but preflight gates are configured now: they never ran on it",
                checked(note)
            ),
        ),
        SquashVerification::Missing => (
            "MISSING",
            "a workflow accepted it as a PR's squash, but it carries no final note (removed, or \
             the notes were not fetched)"
                .to_string(),
        ),
        SquashVerification::OtherTree => (
            "CHANGED",
            "its final notes are for another tree: amended after the squash was accepted".to_string(),
        ),
        SquashVerification::Unauthenticated => (
            "UNAUTHENTICATED",
            "its final note says it is a PR's squash, but no workflow's history here accepted it: a \
             note is anyone's word (fetch refs/orchestrator/* to check one made elsewhere)"
                .to_string(),
        ),
    }
}
