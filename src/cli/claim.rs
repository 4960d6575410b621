//! `git orchestrate claim list|release|steal`: the claims on PRs (docs/refs.md, "Claims"); releasing and
//! stealing are a human's.

use clap::{Args, Subcommand};

use super::error::require_human;
use super::{Exit, Failure, Ui};
use crate::engine::Session;
use crate::engine::claims::{self, ClaimView, format_epoch};

/// Show the claims on PRs, or (humans) release or steal one.
///
/// A PR of the master plan is claimed when a workflow's plan for it is accepted, keyed by the
/// slug of its heading (`## PR 2: feat: Multiply` → `pr-2-feat-multiply`), and pushed to the
/// remote; `sync` renews it, the merge releases it, and it lapses after `[claims] ttl`
/// (default 2h) plus a 5-minute margin for clocks. `list` reads this clone only (as last
/// fetched); `release` and `steal` talk to the remote, leased against the claim as read.
#[derive(Debug, Args)]
pub struct ClaimArgs {
    #[command(subcommand)]
    pub command: ClaimCommand,
}

#[derive(Debug, Subcommand)]
pub enum ClaimCommand {
    /// Every claim here and on the remotes as last fetched
    List,
    /// For humans: release the claim on PR (its key, or its heading's text)
    Release {
        pr: String,
        /// Push signed (`git push --signed`, your user.signingkey): required where main's
        /// `[human] require = "signature"`; the server hook checks the key.
        #[arg(long)]
        signed: bool,
    },
    /// For humans: take the claim on PR for this workflow, whoever holds it
    Steal {
        pr: String,
        /// Push signed (`git push --signed`, your user.signingkey): required where main's
        /// `[human] require = "signature"`; the server hook checks the key.
        #[arg(long)]
        signed: bool,
    },
}

pub fn run(session: &Session, args: &ClaimArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let (pr, steal, signed) = match &args.command {
        ClaimCommand::List => return list(session, ui),
        ClaimCommand::Release { pr, signed } => (pr, false, *signed),
        ClaimCommand::Steal { pr, signed } => (pr, true, *signed),
    };
    require_human(if steal {
        "claim steal"
    } else {
        "claim release"
    })?;
    let report = claims::human(session, pr, steal, signed)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let before = report
        .previous
        .as_ref()
        .map_or_else(|| "nobody".to_string(), crate::store::Claim::holder);
    let place = report
        .remote
        .as_deref()
        .map_or_else(|| " (local: no remote)".to_string(), |r| format!(" on {r}"));
    ui.line(match &report.now {
        Some(now) => format!(
            "claim on {} taken{place} for {} (held before by {before})",
            report.pr,
            now.holder()
        ),
        None => format!("claim on {} released{place} (held by {before})", report.pr),
    })?;
    Ok(Exit::Success)
}

fn list(session: &Session, ui: &mut Ui) -> Result<Exit, Failure> {
    #[derive(serde::Serialize)]
    struct Listing<'a> {
        claims: &'a [ClaimView],
    }
    let views = claims::list(session)?;
    if ui.json_report(&Listing { claims: &views })? {
        return Ok(Exit::Success);
    }
    if views.is_empty() {
        ui.line("no claims")?;
    }
    for view in &views {
        let what = match &view.claim {
            Some(c) => format!(
                "{} since {}, until {}{}",
                c.holder(),
                format_epoch(c.since),
                format_epoch(c.expires),
                if view.expired { " (expired)" } else { "" }
            ),
            None => format!("{} holds no claim of ours", crate::short_id(&view.commit)),
        };
        ui.line(format!("{:<8} {}: {what}", view.source, view.pr))?;
    }
    Ok(Exit::Success)
}
