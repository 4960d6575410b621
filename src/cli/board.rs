//! `git orchestrate board [--remote R]`: every workflow, here and on a remote as last
//! fetched, in one table; and the master plan's PRs nobody has taken. Read-only, offline.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::{self, BoardReport, BoardRow, Session};

/// Show every workflow here and on the remote, and the PRs nobody has taken.
///
/// One row per workflow, this clone's and the remote's as last fetched (`sync` refreshes
/// them; the board never touches the network): its PR, state, step and attempt, the claim on
/// its PR and its age, its last activity, how far its branch is behind main, and the
/// worktree that holds it with its uncommitted files and unpushed commits. Then the master
/// plan's PRs that are neither done, nor claimed, nor planned by a workflow. Changes nothing.
/// `--json` adds each workflow's ledger: wall time per step and per PR from its transitions'
/// times, debugging attempts, and the turns of `run` with the tokens and cost their client
/// reported (null when nobody reported them).
///
/// With `--serve`, the same board as a live web page on a loopback address (see
/// docs/board.md): lanes by phase, one card per workflow, the halts waiting for a human;
/// it follows the refs as they move, and reads nothing while no page is open.
#[derive(Debug, Args)]
pub struct BoardArgs {
    /// The remote whose workflows and claims (as last fetched) are shown. Default: `remote`
    /// in .orchestrate.toml, else origin, else the only one.
    #[arg(long, value_name = "REMOTE")]
    pub remote: Option<String>,

    /// List the finished workflows the archive holds too (docs/refs.md, "The archive").
    #[arg(long, conflicts_with = "serve")]
    pub all: bool,

    /// Serve the board as a read-only web page until ended, and print its URL.
    #[arg(long)]
    pub serve: bool,

    /// The port for --serve; 0 (the default) picks a free one.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "serve")]
    pub port: u16,

    /// The address for --serve: a loopback address only. Default: 127.0.0.1.
    #[arg(long, value_name = "ADDR", requires = "serve")]
    pub bind: Option<String>,

    /// Show one workflow's timeline instead: every transition with its time, each test
    /// run's verdict and evidence, debugging attempts and their tiers, review findings, the
    /// final check and the attestation verdicts (the newest 1000 transitions).
    #[arg(long, value_name = "WORKFLOW", conflicts_with = "serve")]
    pub timeline: Option<String>,
}

pub fn run(
    open: &dyn Fn() -> Result<Session, Failure>,
    args: &BoardArgs,
    ui: &mut Ui,
) -> Result<Exit, Failure> {
    if args.serve {
        let address = (args.bind.as_deref(), args.port);
        return super::board_serve::serve(open, args.remote.as_deref(), address, ui);
    }
    if let Some(workflow) = &args.timeline {
        let report = engine::timeline(&open()?, workflow, args.remote.as_deref())?;
        if !ui.json_report(&report)? {
            ui.lines(timeline_lines(&report))?;
        }
        return Ok(Exit::Success);
    }
    // The table shows no ledger: only `--json` has one read.
    let report = engine::board_with(&open()?, args.remote.as_deref(), args.all, ui.json)?;
    if ui.json_report(&report)? {
        return Ok(Exit::Success);
    }
    let mut text = lines(&report);
    if !ui.quiet {
        text.extend(report.warnings.iter().map(|w| warning(w)));
    }
    ui.lines(text)?;
    Ok(Exit::Success)
}

const HEADER: [&str; 8] = [
    "WORKFLOW", "STATE", "PR", "STEP", "CLAIM", "ACTIVE", "BEHIND", "WORKTREE",
];

/// The report as people read it: a heading, the table, notes under it, the free PRs.
fn lines(report: &BoardReport) -> Vec<String> {
    let source = match &report.remote {
        Some(remote) => format!("here and on {} as last fetched", one_line(remote)),
        None => "here (no remote)".to_string(),
    };
    let mut lines = vec![format!(
        "board: {} workflow(s) {source}; main branch {}",
        report.workflows.len(),
        one_line(&report.main_branch)
    )];
    if report.workflows.is_empty() {
        lines.push("  no workflows".to_string());
    } else {
        let rows: Vec<[String; 8]> = report.workflows.iter().map(|r| cells(report, r)).collect();
        let mut widths = HEADER.map(str::len);
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        lines.push(table_line(&HEADER.map(str::to_string), &widths));
        for row in &rows {
            lines.push(table_line(row, &widths));
        }
        for row in &report.workflows {
            notes(report, row, &mut lines);
        }
    }
    if report.unclaimed.is_empty() {
        lines.push("unclaimed: none".to_string());
    } else {
        lines.push("unclaimed:".to_string());
        for pr in &report.unclaimed {
            lines.push(format!("  {}  {}", one_line(&pr.pr), one_line(&pr.heading)));
        }
    }
    lines
}

fn table_line(cells: &[String; 8], widths: &[usize; 8]) -> String {
    let mut line = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push_str("  ");
        }
        line.push_str(cell);
        if i + 1 < cells.len() {
            line.push_str(&" ".repeat(width.saturating_sub(cell.chars().count())));
        }
    }
    line.trim_end().to_string()
}

/// One row's cells, every text from the repository made one visible line.
fn cells(report: &BoardReport, row: &BoardRow) -> [String; 8] {
    let dash = || "-".to_string();
    let workflow = match (&row.local_tip, &row.remote_tip) {
        _ if row.archived => format!("{} (archived)", one_line(&row.workflow)),
        (None, Some(_)) => format!("{} (remote)", one_line(&row.workflow)),
        (Some(a), Some(b)) if a != b => format!("{} (≠ remote)", one_line(&row.workflow)),
        _ => one_line(&row.workflow),
    };
    let state = match (row.state, &row.error) {
        (Some(state), _) if row.debugging_attempt > 0 => {
            format!("{state} #{}", row.debugging_attempt)
        }
        (Some(state), _) => state.to_string(),
        (None, _) => "UNREADABLE".to_string(),
    };
    let ticket = row.kind == Some("ticket");
    let pr = match (&row.pr, &row.progress) {
        (Some(pr), Some(p)) => format!("{} {}/{}", one_line(pr), p.done, p.total),
        (Some(pr), None) => one_line(pr),
        // A ticket has no master-plan PR: its title and branch say what it is.
        (None, Some(p)) if ticket => format!(
            "ticket \"{}\" ({}) {}/{}",
            one_line(row.pr_title.as_deref().unwrap_or_default()),
            one_line(row.branch.as_deref().unwrap_or_default()),
            p.done,
            p.total
        ),
        _ => dash(),
    };
    let step = match (&row.step, &row.subtask) {
        (Some(s), _) => format!("{} {}", one_line(&s.id), s.kind.as_str()),
        (None, Some(subtask)) => one_line(subtask),
        (None, None) => dash(),
    };
    let claim = row.claim.as_ref().map_or_else(dash, |c| {
        let holder = if c.claim.workflow == row.workflow {
            String::new()
        } else {
            format!("by {} ", one_line(&c.claim.workflow))
        };
        format!(
            "{holder}{}@{} {}{}",
            one_line(&c.claim.user),
            one_line(&c.claim.host),
            age(c.age_s),
            if c.expired { " EXPIRED" } else { "" }
        )
    });
    let active = row.last_activity.map_or_else(dash, |t| {
        format!("{} ago", age(report.now.saturating_sub(t)))
    });
    let behind = row.behind_main.map_or_else(dash, |n| n.to_string());
    let worktree = row.worktree.as_ref().map_or_else(dash, |w| {
        let mut text = one_line(&w.path.display().to_string());
        match w.uncommitted {
            Some(0) => {}
            Some(n) => text.push_str(&format!(" DIRTY {n}")),
            None => text.push_str(" ?"),
        }
        if let Some(n) = w.unpushed.filter(|n| *n > 0) {
            text.push_str(&format!(" UNPUSHED {n}"));
        }
        text
    });
    [workflow, state, pr, step, claim, active, behind, worktree]
}

/// What does not fit a cell: a copy that cannot be read, tips that differ, the answer a
/// halt waits for.
fn notes(report: &BoardReport, row: &BoardRow, lines: &mut Vec<String>) {
    let name = one_line(&row.workflow);
    if let Some(gate) = &row.gate {
        lines.push(format!(
            "  {name}: waits for a human: {}",
            one_line(&gate.command)
        ));
        if let Some(signed) = &gate.sign_command {
            lines.push(format!(
                "  {name}: signed (KEY: your SSH key): {}",
                one_line(signed)
            ));
        }
    }
    if let Some(error) = &row.error {
        lines.push(format!(
            "  {name}: the {} copy cannot be read: {}",
            row.shown,
            one_line(error)
        ));
    }
    if let (Some(here), Some(there), Some(remote)) =
        (&row.local_tip, &row.remote_tip, &report.remote)
        && here != there
    {
        lines.push(format!(
            "  {name}: here {}, {} {} (`git orchestrate sync {}` brings them level)",
            crate::short_id(here),
            one_line(remote),
            crate::short_id(there),
            one_line(remote)
        ));
    }
}

/// A timeline as people read it: a line per transition, what it recorded indented under it.
fn timeline_lines(report: &engine::TimelineReport) -> Vec<String> {
    let mut lines = vec![format!(
        "timeline of workflow {} ({} copy): {} transition(s){}",
        one_line(&report.workflow),
        report.shown,
        report.total,
        if report.truncated {
            format!(", the newest {} shown", report.entries.len())
        } else {
            String::new()
        }
    )];
    for e in &report.entries {
        let t = &e.entry;
        let step = t
            .step
            .as_deref()
            .map(|s| format!(" [{}]", one_line(s)))
            .unwrap_or_default();
        lines.push(format!(
            "{}  {}  {}: {} -> {}{step}",
            crate::short_id(&t.commit),
            engine::claims::format_epoch(t.time),
            one_line(&t.event),
            one_line(t.from.as_deref().unwrap_or("-")),
            one_line(t.to.as_deref().unwrap_or("-")),
        ));
        if !t.summary.is_empty() {
            lines.push(format!("    {}", one_line(&t.summary)));
        }
        if let Some(test) = &t.test {
            lines.push(format!(
                "    {} run, expected {}: `{}` {} ({})",
                test.kind,
                test.expectation,
                one_line(&test.command),
                test.exit,
                if test.met {
                    "as expected"
                } else {
                    "not as expected"
                }
            ));
            if !test.tests.is_empty() {
                let ids: Vec<String> = test.tests.iter().map(|t| one_line(t)).collect();
                lines.push(format!("    tests: {}", ids.join(", ")));
            }
        }
        if let Some(d) = &t.debugging {
            lines.push(format!(
                "    debugging attempt {}, tier {}",
                d.attempt, d.tier
            ));
        }
        if let Some(review) = &t.review {
            for f in &review.findings {
                lines.push(format!(
                    "    finding {}{}: {}",
                    f.priority,
                    if f.blocking { " (blocking)" } else { "" },
                    one_line(&f.issue)
                ));
            }
        }
        if let Some(f) = &e.final_check {
            lines.push(format!(
                "    final check on {}: {}",
                crate::short_id(&f.commit),
                one_line(&f.verification)
            ));
        }
        for a in &e.attestations {
            let verdict = serde_json::to_value(&a.verdict)
                .ok()
                .and_then(|v| v["status"].as_str().map(str::to_string))
                .unwrap_or_default();
            let label = match a.by {
                "local" => "local".to_string(),
                by => format!("{by}, {}", one_line(&a.source)),
            };
            lines.push(format!(
                "    attestation ({label}) on {}: {verdict}, {}",
                crate::short_id(&a.commit),
                if a.signed { "signed" } else { "unsigned" }
            ));
        }
        for link in &t.links {
            lines.push(format!(
                "    {} {}",
                link.rel,
                crate::short_id(&link.commit)
            ));
        }
    }
    lines
}

/// A duration in seconds as `45s`, `12m`, `3h`, `2d`.
fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// A warning as lines: git's own answer inside it keeps its line breaks (shown escaped, a
/// `\n` in the middle of a line reads as a typo), each further line indented under the first.
fn warning(text: &str) -> String {
    let lines: Vec<String> = text.trim_end().lines().map(one_line).collect();
    format!("WARNING: {}", lines.join("\n  "))
}

/// `text` as one visible line: control characters and the invisible ones that reorder or
/// hide text shown escaped (a remote's names and titles are anyone's).
fn one_line(text: &str) -> String {
    // Nearly every cell is printable ASCII, which both steps leave as it is: each cell of a
    // hundred rows was copied four times over.
    if text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return text.to_string();
    }
    escaped(text)
}

/// [`one_line`] of any text.
fn escaped(text: &str) -> String {
    crate::workflow::fence::visible(text)
        .replace('\r', "\\r")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    proptest::proptest! {
        /// Printable ASCII is left as it is without being looked at twice; anything else is
        /// escaped as before.
        #[test]
        fn a_plain_cell_is_one_line_as_it_was(text in "(?s)[ -~\\x00-\\x1f\\x7f\u{80}-\u{9f}\u{202e}\u{e9}]{0,24}") {
            proptest::prop_assert_eq!(one_line(&text), escaped(&text));
        }
    }

    #[test]
    fn texts_from_a_remote_are_one_visible_line() {
        assert_eq!(
            one_line("a\x1b[31mb\nc\td\u{202e}e\r\n"),
            "a\\x1b[31mb\\nc\\td\\u{202e}e\\r\\n"
        );
    }

    #[test]
    fn a_warnings_lines_stay_lines_each_one_visible() {
        assert_eq!(
            warning("the worktree /w cannot be looked at: error: bad\nfatal: \x1b[31mcorrupt\n"),
            "WARNING: the worktree /w cannot be looked at: error: bad\n  fatal: \\x1b[31mcorrupt"
        );
    }

    #[test]
    fn ages_are_short() {
        let shown: Vec<String> = [-5, 0, 59, 60, 3599, 3600, 86_399, 86_400, 900_000]
            .into_iter()
            .map(age)
            .collect();
        assert_eq!(
            shown,
            ["0s", "0s", "59s", "1m", "59m", "1h", "23h", "1d", "10d"]
        );
    }
}
