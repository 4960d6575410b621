//! The text of one task's adequacy by mutation (docs/integrity.md, "Adequacy by mutation"):
//! its share killed, then each file measured, each surviving mutant, each file not
//! measured and each witness (a file the RED command runs, taken as test code), in the same
//! words wherever it is shown (`attest`, and `verify` from the final note).

use crate::workflow::notes::TaskAdequacy;

/// Task `t`'s adequacy: its line at `indent`, each detail on a line of its own two spaces
/// further in; ends with a newline.
pub(super) fn task_text(t: &TaskAdequacy, indent: &str) -> String {
    let measured = match &t.unmeasured {
        Some(why) => format!("not measured: {why}"),
        None => format!(
            "killed {} of {} mutants ({}%, made by {}){}",
            t.killed,
            t.mutants,
            t.killed_share() / 10,
            if t.tool == "builtin" {
                "the built-in mutator"
            } else {
                t.tool.as_str()
            },
            if t.not_run > 0 {
                format!(", {} not run", t.not_run)
            } else {
                String::new()
            }
        ),
    };
    let error = t
        .tool_error
        .as_ref()
        .map(|e| format!("; {e}"))
        .unwrap_or_default();
    let mut out = format!(
        "{indent}adequacy of task {} (step {}): {measured}{error}\n",
        t.task, t.step
    );
    for f in &t.files {
        let not_run = match f.not_run {
            0 => String::new(),
            n => format!(", {n} not run"),
        };
        out.push_str(&format!(
            "{indent}  file {}: killed {} of {} mutants ({}%){not_run}\n",
            f.path,
            f.killed,
            f.mutants,
            f.killed_share() / 10
        ));
    }
    for m in &t.survived {
        out.push_str(&format!("{indent}  survived: {m}\n"));
    }
    for n in &t.not_measured {
        out.push_str(&format!("{indent}  not measured: {} ({})\n", n.path, n.why));
    }
    for w in &t.witnesses {
        out.push_str(&format!(
            "{indent}  witness: {w} (the RED command runs it: test code, not mutated)\n"
        ));
    }
    for script in &t.scripts {
        out.push_str(&format!(
            "{indent}  witness: {script} (a script the RED command runs: test code, as the \
             squash has it)\n"
        ));
    }
    out
}
