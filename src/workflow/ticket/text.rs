//! What a ticket says to its two roles: the manager's briefing (the ticket, every subtask,
//! the last report beside what was observed, every contradiction) and the developer's
//! ("## Current Assignment"), and the contradictions themselves.

use std::fmt::Write as _;

use super::{
    Assignment, BuildStatus, GateResult, GateVerdict, Mode, Observed, Report, ReportStatus, Role,
    Subtask, SubtaskStatus, Ticket, TicketState,
};

/// Where the developer's claim and what git-orchestrate observed disagree, one sentence
/// each, for the manager (docs/tickets.md, "`subtask-complete`").
pub fn contradictions(
    assignment: &Assignment,
    report: &Report,
    observed: &Observed,
) -> Vec<String> {
    let mut found = Vec::new();
    let gates = gate_sentence(&observed.gates);
    match (report.build_status, observed.gates.result) {
        (BuildStatus::Pass, GateVerdict::Fail) => {
            found.push(format!("the developer reported pass; {gates}"));
        }
        (BuildStatus::Pass, GateVerdict::None) => found.push(
            "the developer reported pass; no gate is configured, so nothing checked it".into(),
        ),
        (BuildStatus::Fail, GateVerdict::Pass) => {
            found.push(format!("the developer reported fail; {gates}"));
        }
        _ => {}
    }
    if let Some(results) = &report.test_results {
        // All passed (passed = total) says no test failed, whether or not `failed` is given.
        let failed = results.failed.or(match (results.passed, results.total) {
            (Some(passed), Some(total)) if passed == total => Some(0),
            _ => None,
        });
        match (failed, observed.gates.result) {
            (Some(0), GateVerdict::Fail) => {
                found.push(format!("the developer reported no failing test; {gates}"))
            }
            (Some(n), GateVerdict::Pass) if n > 0 => found.push(format!(
                "the developer reported {n} failing test(s); {gates}"
            )),
            _ => {}
        }
    }
    if let Some(on_base) = &observed.tests_on_base
        && on_base.result == GateVerdict::Pass
    {
        found.push(format!(
            "the tests the subtask added or changed ({}) pass on its base too: they do not \
             test the change",
            code_list(&observed.tests)
        ));
    }
    if observed.tests.is_empty() && matches!(assignment.mode, Mode::Testing | Mode::WriteTests) {
        found.push(format!(
            "the assignment's mode is {}, and the commit adds or changes no test file",
            assignment.mode.as_str()
        ));
    }
    for path in &observed.protected {
        found.push(format!(
            "changed `{path}`, which the configuration protects: the gates and the prompts are \
             not a subtask's to change"
        ));
    }
    for why in &observed.links_out {
        found.push(format!(
            "a symbolic link points out of the repository: {why}"
        ));
    }
    for path in &observed.removed_tests {
        found.push(format!("removed the test file `{path}`"));
    }
    for path in &observed.outside_scope {
        found.push(format!(
            "changed `{path}`, outside the assignment (filesToModify: {})",
            code_list(&assignment.files_to_modify)
        ));
    }
    for claimed in &report.files_changed {
        if !observed.files_changed.contains(&claimed.path) {
            found.push(format!(
                "reported changing `{}`, which the commit does not change",
                claimed.path
            ));
        }
    }
    for path in &observed.files_changed {
        if !report.files_changed.iter().any(|c| &c.path == path) {
            found.push(format!("changed `{path}` without reporting it"));
        }
    }
    if report.status == ReportStatus::Complete && observed.files_changed.is_empty() {
        found.push(format!(
            "reported complete; commit {} changes nothing since the subtask began",
            crate::short_id(&observed.commit)
        ));
    }
    found
}

fn code_list(items: &[String]) -> String {
    if items.is_empty() {
        return "(none)".into();
    }
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn gate_sentence(gates: &GateResult) -> String {
    match (&gates.result, &gates.failed) {
        (GateVerdict::Fail, Some(failed)) => {
            format!(
                "the gates failed: `{}` ended with {}",
                failed.gate, failed.exit
            )
        }
        (GateVerdict::Fail, None) => "the gates failed".into(),
        (GateVerdict::Pass, _) => format!("the gates passed ({})", gates.ran.join(", ")),
        (GateVerdict::None, _) => "no gate is configured".into(),
    }
}

/// What was observed at a report's commit, one line each.
pub fn observed_lines(observed: &Observed) -> Vec<String> {
    let mut lines = vec![format!(
        "gates at {}: {}",
        crate::short_id(&observed.commit),
        gate_sentence(&observed.gates)
    )];
    if let Some(failed) = &observed.gates.failed
        && !failed.tail.trim().is_empty()
    {
        // Quoted as the TDD briefings quote a run (docs/integrity.md): a test's output can
        // neither pose as this briefing nor move the screen.
        lines.push(format!(
            "output of `{}` (last lines):\n{}",
            failed.gate,
            crate::workflow::fence::fenced(&failed.tail).trim_end()
        ));
    }
    match &observed.tests_on_base {
        None => lines.push("tests added or changed: none".into()),
        Some(on_base) => lines.push(format!(
            "tests added or changed: {}; on the subtask's base ({}) they {}",
            code_list(&observed.tests),
            crate::short_id(&observed.base),
            match on_base.result {
                GateVerdict::Fail => "fail, as they must",
                GateVerdict::Pass => "PASS: they do not test the change",
                GateVerdict::None => "ran nothing",
            }
        )),
    }
    lines.push(format!(
        "files changed since the base: {}",
        code_list(&observed.files_changed)
    ));
    if !observed.outside_scope.is_empty() {
        lines.push(format!(
            "outside filesToModify: {}",
            code_list(&observed.outside_scope)
        ));
    }
    lines
}

fn subtask_line(s: &Subtask, current: bool) -> String {
    let mut line = format!("- {} [{}] {}", s.id, s.status.as_str(), s.title);
    let mut notes = Vec::new();
    if s.rejections > 0 {
        notes.push(format!("{} rejection(s)", s.rejections));
    }
    if s.awaiting_verification {
        notes.push("report waiting for your verification".into());
    }
    if let Some(reason) = &s.override_reason {
        notes.push(format!("accepted over contradictions: {reason}"));
    }
    if current && !s.awaiting_verification && s.status == SubtaskStatus::InProgress {
        notes.push("with the developer".into());
    }
    if !notes.is_empty() {
        line.push_str(&format!(" ({})", notes.join("; ")));
    }
    line
}

fn assignment_section(out: &mut String, subtask: &Subtask, a: &Assignment) {
    let list = |out: &mut String, name: &str, items: &[String]| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(out, "{name}:");
        for item in items {
            let _ = writeln!(out, "- {item}");
        }
    };
    let _ = writeln!(
        out,
        "Subtask: {} (assignment {})",
        subtask.id, subtask.assignments
    );
    let _ = writeln!(out, "Mode: {}", a.mode.as_str());
    let _ = writeln!(out, "Goal: {}", a.goal);
    list(out, "Files to inspect", &a.files_to_inspect);
    list(out, "Files to modify", &a.files_to_modify);
    list(out, "Acceptance criteria", &a.acceptance_criteria);
    if let Some(context) = &a.prior_context {
        let _ = writeln!(out, "Prior context: {context}");
    }
    list(out, "Constraints", &a.constraints);
}

/// The briefing for `role` (`None`: whoever's turn it is); `prompt` is the repository's
/// prompt file for it, shown first.
pub fn briefing(
    ticket: &Ticket,
    workflow: &str,
    role: Option<Role>,
    prompt: Option<&str>,
) -> String {
    let role = role.or(ticket.state.role()).unwrap_or(Role::Manager);
    let mut out = String::new();
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        out.push_str(prompt.trim_end());
        out.push_str("\n\n");
    }
    let _ = writeln!(
        out,
        "# Ticket: {}\nWorkflow {workflow} · state {} · you are the {} · branch {} (from {} at {})\n",
        ticket.title,
        ticket.state.as_str(),
        role.as_str(),
        ticket.branch,
        ticket.main_branch,
        crate::short_id(&ticket.pin)
    );
    match role {
        Role::Manager => manager(&mut out, ticket),
        Role::Developer => developer(&mut out, ticket),
    }
    let _ = writeln!(out, "## What to do now\n{}", legal_next(ticket, Some(role)));
    out
}

fn manager(out: &mut String, ticket: &Ticket) {
    if !ticket.body.trim().is_empty() {
        let _ = writeln!(out, "{}\n", ticket.body.trim_end());
    }
    if let Some(halt) = &ticket.halt {
        let _ = writeln!(out, "HALTED: {halt}\n");
    }
    let _ = writeln!(out, "## Subtasks");
    if ticket.subtasks.is_empty() {
        let _ = writeln!(
            out,
            "(none yet: break the ticket into subtasks and assign the first)"
        );
    }
    for s in &ticket.subtasks {
        let _ = writeln!(
            out,
            "{}",
            subtask_line(s, ticket.current.as_deref() == Some(&s.id))
        );
    }
    let _ = writeln!(out);
    for s in ticket
        .subtasks
        .iter()
        .filter(|s| s.status == SubtaskStatus::Blocked)
    {
        let _ = writeln!(out, "## Blocked: {}", s.id);
        let _ = writeln!(
            out,
            "Rejected {} time(s), assigned {} time(s). Last notes: {}",
            s.rejections,
            s.assignments,
            s.notes.as_deref().unwrap_or("(none)")
        );
        if let Some(details) = s.report.as_ref().and_then(|r| r.blocker_details.as_ref()) {
            let _ = writeln!(
                out,
                "The developer's blocker: {}; tried: {}; needed: {}",
                details.issue.as_deref().unwrap_or("(not said)"),
                if details.tried.is_empty() {
                    "(not said)".to_string()
                } else {
                    details.tried.join("; ")
                },
                details.needed.as_deref().unwrap_or("(not said)")
            );
        }
        let history: Vec<String> = ticket
            .activity
            .iter()
            .filter(|a| a.subtask.as_deref() == Some(&s.id))
            .map(|a| format!("- {} {}: {}", a.by, a.event, a.text))
            .collect();
        if !history.is_empty() {
            let _ = writeln!(out, "History:\n{}", history.join("\n"));
        }
        let _ = writeln!(
            out,
            "Reassign it only with new priorContext (what to do differently).\n"
        );
    }
    if let Some(s) = ticket.current().filter(|s| s.awaiting_verification)
        && let (Some(report), Some(observed)) = (&s.report, &s.observed)
    {
        let _ = writeln!(
            out,
            "## Report of {} (commit {})",
            s.id,
            crate::short_id(&observed.commit)
        );
        let _ = writeln!(
            out,
            "Claimed by the developer: status {}, buildStatus {}{}",
            report.status.as_str(),
            report.build_status.as_str(),
            report
                .test_results
                .map(|t| format!(
                    ", tests {} total / {} passed / {} failed / {} skipped",
                    opt(t.total),
                    opt(t.passed),
                    opt(t.failed),
                    opt(t.skipped)
                ))
                .unwrap_or_default()
        );
        let files: Vec<String> = report
            .files_changed
            .iter()
            .map(|f| match &f.summary {
                Some(summary) => format!("`{}` ({summary})", f.path),
                None => format!("`{}`", f.path),
            })
            .collect();
        let _ = writeln!(
            out,
            "Files it says it changed: {}",
            if files.is_empty() {
                "(none)".into()
            } else {
                files.join(", ")
            }
        );
        // The developer's words, terminal escapes shown rather than run on a human's screen.
        let _ = writeln!(
            out,
            "Message: {}",
            crate::workflow::fence::visible(&report.message)
        );
        if let Some(details) = &report.blocker_details {
            let _ = writeln!(
                out,
                "Blocker: {} (needed: {})",
                details.issue.as_deref().unwrap_or("(not said)"),
                details.needed.as_deref().unwrap_or("(not said)")
            );
        }
        let _ = writeln!(
            out,
            "Observed by git-orchestrate in a fresh worktree (the real result):"
        );
        for line in observed_lines(observed) {
            let _ = writeln!(out, "- {line}");
        }
        if s.contradictions.is_empty() {
            let _ = writeln!(out, "Contradictions: none.\n");
        } else {
            let _ = writeln!(out, "CONTRADICTIONS (the report is not what was observed):");
            for c in &s.contradictions {
                let _ = writeln!(out, "- {c}");
            }
            let _ = writeln!(
                out,
                "`update-subtask --status complete` is refused while these stand, unless you \
                 give `--override REASON`.\n"
            );
        }
        if let Some(a) = &s.assignment {
            let _ = writeln!(out, "The assignment it answers:");
            assignment_section(out, s, a);
            let _ = writeln!(out);
        }
    }
    if let Some(finished) = &ticket.finished {
        let _ = writeln!(
            out,
            "Done: squashed as {}{}. {}\n",
            crate::short_id(&finished.squash),
            finished
                .merge
                .as_deref()
                .map(|m| format!(", merged as {}", crate::short_id(m)))
                .unwrap_or_default(),
            finished.summary
        );
    }
    if ticket.state == TicketState::Manager {
        let _ = writeln!(
            out,
            "Tools: assign (mode implementation|testing|write-tests, goal, filesToInspect, \
             filesToModify, acceptanceCriteria, priorContext, constraints); update-subtask \
             (status complete|rejected|blocked, notes[, override]); complete-ticket (summary). \
             A third rejection blocks a subtask.\n"
        );
    }
}

fn opt(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_string(), |n| n.to_string())
}

fn developer(out: &mut String, ticket: &Ticket) {
    let Some(s) = ticket
        .current()
        .filter(|_| ticket.state == TicketState::Developer)
    else {
        let _ = writeln!(out, "No subtask is assigned to you now.\n");
        return;
    };
    let _ = writeln!(out, "## Current Assignment");
    if let Some(a) = &s.assignment {
        assignment_section(out, s, a);
    }
    if s.assignments > 1
        && let Some(notes) = &s.notes
    {
        let _ = writeln!(out, "The manager's notes on your last attempt: {notes}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Work on branch {} and commit your work there. Then report the commit: git-orchestrate \
         runs the gates again at it in a fresh worktree, runs the tests you added on the \
         subtask's base (they must fail there) and at your commit (they must pass), and checks \
         that you changed only files matching filesToModify. What you report is shown to the \
         manager beside what it observed.\n",
        ticket.branch
    );
    // The honest way to stop, as the TDD debugging briefings name it (docs/integrity.md, "A
    // way to stop honestly").
    out.push_str(
        "If the assignment and its acceptance criteria or tests cannot both hold, do not bend the \
         tests or special-case the code: report the subtask blocked (status blocked) with a message \
         that starts \"contradiction:\" and says what the assignment asks, what the tests hold and \
         why both cannot be true. The manager decides.\n\n",
    );
}

/// The next legal action for `role` (or whoever's turn it is), as a briefing says it.
pub fn legal_next(ticket: &Ticket, role: Option<Role>) -> String {
    let turn = ticket.state.role();
    let manager = || -> String {
        if ticket.current().is_some_and(|s| s.awaiting_verification) {
            return "the manager verifies the developer's report: `git orchestrate update-subtask \
                    --status complete|rejected|blocked --notes TEXT`"
                .into();
        }
        if ticket.all_complete() {
            return "the manager completes the ticket: `git orchestrate complete-ticket --summary \
                    TEXT` (or assigns another subtask with `git orchestrate assign`)"
                .into();
        }
        "the manager assigns a subtask: `git orchestrate assign --mode MODE --goal TEXT \
         --acceptance-criteria TEXT …`"
            .into()
    };
    let next = match ticket.state {
        TicketState::Manager if ticket.finishing.is_some() => {
            "the manager finishes the ticket's completion: `git orchestrate complete-ticket \
             --summary TEXT` (its squash is recorded and is being merged)"
                .into()
        }
        TicketState::Manager => manager(),
        TicketState::Developer => "the developer commits its work on the ticket's branch and \
                                   reports it: `git orchestrate subtask-complete --status \
                                   complete|blocked --file PATH --build-status pass|fail \
                                   --message TEXT …`"
            .into(),
        TicketState::TicketDone => "nothing: the ticket is done and merged".into(),
        TicketState::Halted => "a human answers the halt: `git orchestrate resume`".into(),
    };
    match (role, turn) {
        (Some(asked), Some(turn)) if asked != turn => format!(
            "it is the {}'s turn, not the {}'s: {next}",
            turn.as_str(),
            asked.as_str()
        ),
        _ => capitalized(&next),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
