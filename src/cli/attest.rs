//! `git orchestrate attest [COMMIT|A..B ...]`: the verdict on a workflow's merge (or a PR's
//! head) reached off the agent's machine, printed and written as a note.

use clap::Args;

use super::{Exit, Failure, Ui};
use crate::engine::EngineError;
use crate::engine::answers::AnswerVerdict;
use crate::engine::attest::receive::{self, Pusher};
use crate::engine::attest::{self, Adequacy, AttestReport};

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

    /// `dsse`: print each verdict's in-toto statement in a DSSE envelope, one JSON line each
    /// (payloadType application/vnd.in-toto+json), signed with the signing key (an ed25519
    /// OpenSSH key without a passphrase) when there is one; the note is written as ever.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,

    /// Sign each verdict with this private SSH key (`ssh-keygen -Y sign`, namespace
    /// git-orchestrate-attest); default: main's `[attest] signing_key`. `-` reads the key
    /// from stdin before anything runs and keeps it out of the PR's tests' reach (no file of
    /// it exists until they have ended): what a CI job should do.
    #[arg(long, value_name = "KEY", conflicts_with = "no_note")]
    pub signing_key: Option<std::path::PathBuf>,

    /// Write each verdict under refs/notes/orchestrator-attest-ci, the CI job's notes ref
    /// (push it there: the server hook takes a note only signed by a verifier main's
    /// .orchestrate/allowed_signers lists), instead of refs/notes/orchestrator-attest, which
    /// only the server writes. Requires a signing key.
    #[arg(long, conflicts_with = "no_note")]
    pub ci_note: bool,

    /// Run the PR's gates and tests confined (`namespace`: in their own user and mount
    /// namespaces, the repositories and this program read-only to them) or not (`none`).
    /// Default: `git config orchestrate.attestConfine`, else `none` (the server hook's
    /// default is `namespace`).
    #[arg(long, value_enum)]
    pub confine: Option<ConfineArg>,

    /// Run as a bare repository's pre-receive hook: judge the ref updates on stdin (what
    /// --install-server-hook installs).
    #[arg(long, conflicts_with_all = ["commits", "post_receive", "install_server_hook"])]
    pub pre_receive: bool,

    /// Run as a bare repository's post-receive hook: write the accepted verdicts as notes.
    #[arg(long, conflicts_with_all = ["commits", "install_server_hook"])]
    pub post_receive: bool,

    /// In a bare repository with the server hook: write the verdicts a killed post-receive
    /// hook left unwritten for commits on main (what the next push's hook also does).
    #[arg(long, conflicts_with_all = ["commits", "pre_receive", "post_receive", "install_server_hook", "no_note", "signing_key", "ci_note"])]
    pub repair: bool,

    /// Install the pre-receive and post-receive hooks into the bare repository DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "commits")]
    pub install_server_hook: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FormatArg {
    Dsse,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ConfineArg {
    Namespace,
    None,
}

pub fn run(args: &AttestArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    let dir = super::input::current_dir()?;
    if args.pre_receive {
        return pre_receive(&dir, ui);
    }
    if args.post_receive {
        let input = super::input::read_input(
            std::path::Path::new("-"),
            "the post-receive hook's input",
            "git feeds the ref updates on stdin.",
        )?;
        // Checked, though the hook writes every kept verdict now on main, this push's or not.
        receive::parse_updates(&String::from_utf8_lossy(&input)).map_err(
            |message| EngineError::BadInput {
                message: format!("the post-receive input is not what git writes: {message}"),
                hint: "git orchestrate attest --post-receive runs as a post-receive hook; git feeds it.".into(),
            },
        )?;
        let completed = receive::post_receive(&dir)?;
        let written = completed.written;
        if !written.is_empty() {
            ui.text(&format!(
                "git-orchestrate: {} verdict{} written under {}",
                written.len(),
                if written.len() == 1 { "" } else { "s" },
                crate::store::ATTEST_NOTES_REF
            ))?;
        }
        return Ok(Exit::Success);
    }
    if let Some(target) = &args.install_server_hook {
        return install(target, ui);
    }
    if args.repair {
        return repair(&dir, ui);
    }
    let dsse = matches!(args.format, Some(FormatArg::Dsse));
    let held;
    let signing_key = match args.signing_key.as_deref() {
        Some(path) if path == std::path::Path::new("-") => {
            held = read_stdin_key()?;
            Some(attest::SigningKey::Held(held))
        }
        Some(path) => Some(attest::SigningKey::File(path)),
        None => None,
    };
    let report = attest::attest(
        &dir,
        &args.commits,
        !args.no_note,
        dsse,
        signing_key,
        args.confine.map(|c| match c {
            ConfineArg::Namespace => attest::Confine::Namespace,
            ConfineArg::None => attest::Confine::None,
        }),
        args.ci_note,
    )?;
    let code = Exit::VerificationFailed.when(!report.passed());
    if dsse {
        let lines: String = report
            .envelopes
            .iter()
            .map(|envelope| format!("{envelope}\n"))
            .collect();
        ui.text(&lines)?;
        return Ok(code);
    }
    if ui.json_report(&report)? {
        return Ok(code);
    }
    ui.text(&text(&report))?;
    Ok(code)
}

/// What `attest` says of adequacy by mutation (docs/integrity.md, "Adequacy by mutation"):
/// each task measured, or that the pinned `report` is not measured here; nothing when the
/// policy is `off` or nothing was run.
fn adequacy_text(adequacy: &Adequacy) -> String {
    match adequacy {
        Adequacy::NotMeasured { report: true } => "  adequacy: not measured ([verify] adequacy = \"report\"; attest measures it under \"enforce\" only)\n".to_string(),
        Adequacy::NotMeasured { report: false } => String::new(),
        Adequacy::Measured(tasks) => tasks
            .iter()
            .map(|t| super::adequacy::task_text(t, "  "))
            .collect(),
    }
}

fn text(report: &AttestReport) -> String {
    let mut out = String::new();
    for v in &report.verdicts {
        let what = match (v.kind, &v.workflow) {
            (Some("merge"), Some(w)) => format!("the merge of workflow {w}"),
            (Some("ticket-merge"), Some(w)) => format!("the merge of workflow {w}'s ticket"),
            (Some("ticket-squash"), Some(w)) => {
                format!("the squashed commit of workflow {w}'s ticket")
            }
            (Some("human"), Some(w)) => {
                format!("a human's commit, accounted for by a repin of workflow {w}")
            }
            (Some(_), Some(w)) => format!("the head of workflow {w}'s PR"),
            _ => "no workflow records it".to_string(),
        };
        out.push_str(&format!(
            "{} {} ({what})\n",
            if v.passed { "PASSED" } else { "FAILED" },
            crate::short_id(&v.commit)
        ));
        for ran in &v.reran {
            out.push_str(&format!("  re-ran: {ran}\n"));
        }
        out.push_str(&adequacy_text(&v.adequacy));
        for answer in &v.answers {
            let how = match &answer.verdict {
                AnswerVerdict::Signed { principal } => format!("signed by {principal}"),
                AnswerVerdict::Unsigned { how } if how.is_empty() => "unsigned".to_string(),
                AnswerVerdict::Unsigned { how } => format!("unsigned, given through {how}"),
                AnswerVerdict::Bad { why } => format!("BAD: {why}"),
            };
            let approves = match &answer.approves {
                Some(a) => format!(
                    " of the tree {}{}{}",
                    crate::short_id(&a.tree),
                    if a.tests.is_empty() {
                        String::new()
                    } else {
                        format!(", the changes to {}", a.tests.join(", "))
                    },
                    if a.flaky {
                        ", a pass after a failure"
                    } else {
                        ""
                    }
                ),
                None => String::new(),
            };
            out.push_str(&format!(
                "  human answer: {}{approves} in {} ({how})\n",
                answer.answer,
                crate::short_id(&answer.commit)
            ));
        }
        if let (Some(changed), Some(judged)) = (&v.changed_tests, v.changed_tests_verdict) {
            out.push_str(&format!(
                "  changed tests: {} ([gates] pinned_tests = \"{}\"; with them put back: {}): {judged}{}\n",
                changed.paths.join(", "),
                changed.mode,
                match (changed.passed, &changed.failed_gate) {
                    (Some(true), _) => "the gates pass".to_string(),
                    (Some(false), Some(gate)) => format!("the gate `{gate}` fails"),
                    (Some(false), None) => "the gates fail".to_string(),
                    (None, _) => "not run".to_string(),
                },
                changed
                    .approvals
                    .iter()
                    .map(|a| format!(
                        "; approved by name: {} ({}, in {})",
                        a.tests.join(", "),
                        a.by,
                        crate::short_id(&a.commit)
                    ))
                    .collect::<String>()
            ));
        }
        for earlier in &v.earlier_refusals {
            out.push_str(&format!(
                "  earlier refusal of this tree under this policy: {} at {}: {}\n",
                crate::short_id(&earlier.commit),
                earlier.time,
                earlier.reasons.join("; ")
            ));
        }
        for warning in &v.warnings {
            out.push_str(&format!("  warning: {warning}\n"));
        }
        for reason in &v.reasons {
            out.push_str(&format!("  - {reason}\n"));
        }
    }
    match &report.notes_skipped {
        Some(why) => out.push_str(&format!("no note written: {why}\n")),
        None => out.push_str(&format!(
            "verdicts written as notes under {}\n",
            report.notes_ref
        )),
    }
    out
}

/// The pre-receive hook: the updates on stdin, who pushed from the environment git and the
/// server set; one line per refusal, exit 1 when anything is refused (git then refuses the
/// whole push).
fn pre_receive(dir: &std::path::Path, ui: &mut Ui) -> Result<Exit, Failure> {
    let input = super::input::read_input(
        std::path::Path::new("-"),
        "the pre-receive hook's input",
        "git feeds the ref updates on stdin.",
    )?;
    let updates = receive::parse_updates(&String::from_utf8_lossy(&input)).map_err(|message| {
        EngineError::BadInput {
            message: format!("the pre-receive input is not what git writes: {message}"),
            hint: "git orchestrate attest --pre-receive runs as a pre-receive hook; git feeds it."
                .into(),
        }
    })?;
    let report = receive::pre_receive(dir, &updates, &pusher())?;
    let code = Exit::VerificationFailed.when(!report.refusals.is_empty());
    if ui.json_report(&report)? {
        return Ok(code);
    }
    let mut text = String::new();
    if let Some(human) = &report.human {
        text.push_str(&format!(
            "git-orchestrate: pushed by {human}, a listed human\n"
        ));
    }
    for v in report.verdicts.iter().filter(|v| v.passed) {
        text.push_str(&format!(
            "git-orchestrate: {} attests PASSED (workflow {})\n",
            crate::short_id(&v.commit),
            v.workflow.as_deref().unwrap_or("")
        ));
        // What the pass rests on beyond the runs: a human's answer by name, above all.
        for warning in &v.warnings {
            text.push_str(&format!(
                "git-orchestrate: {}: {}\n",
                crate::short_id(&v.commit),
                one_line(warning)
            ));
        }
    }
    for r in &report.refusals {
        text.push_str(&format!(
            "git-orchestrate: refused {}{}: {}\n",
            one_line(&r.reference),
            r.commit
                .as_deref()
                .map(|c| format!(" {}", crate::short_id(c)))
                .unwrap_or_default(),
            one_line(&r.reason)
        ));
    }
    ui.text(&text)?;
    Ok(code)
}

/// A refusal as the one line the pusher reads: its first line (a test's output, which the
/// agent wrote, stays in the verdict `attest` prints), control characters shown escaped.
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    let mut line: String = first
        .chars()
        .flat_map(|c| {
            let shown: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect();
    if text.trim_end().contains('\n') {
        line.push_str(" [more: `git orchestrate attest COMMIT` shows all of it]");
    }
    line
}

/// Who pushed: a signed push's key only when git found its signature good and its nonce
/// fresh; the server's `REMOTE_USER` as it is.
fn pusher() -> Pusher {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let certified = var("GIT_PUSH_CERT_STATUS").as_deref() == Some("G")
        && var("GIT_PUSH_CERT_NONCE_STATUS").as_deref() == Some("OK");
    Pusher {
        key: var("GIT_PUSH_CERT_KEY").filter(|_| certified),
        user: var("REMOTE_USER"),
    }
}

/// `attest --repair`: the record completed, and what was written, or found written already.
fn repair(dir: &std::path::Path, ui: &mut Ui) -> Result<Exit, Failure> {
    let completed = receive::complete_record(dir)?;
    if ui.json_report(&completed)? {
        return Ok(Exit::Success);
    }
    let ids = |commits: &[String]| {
        commits
            .iter()
            .map(|c| crate::short_id(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut text = String::new();
    match completed.written.len() {
        0 if completed.already_written.is_empty() => {
            text.push_str("nothing to repair: every kept verdict on main is written\n")
        }
        0 => {}
        n => text.push_str(&format!(
            "{n} verdict{} written under {}: {}\n",
            plural(n),
            crate::store::ATTEST_NOTES_REF,
            ids(&completed.written)
        )),
    }
    if let n @ 1.. = completed.already_written.len() {
        // A hook killed between the note and letting its kept verdict go: the record is
        // completed, and nothing was written to do it.
        text.push_str(&format!(
            "{n} kept verdict{} already written under {}, now let go: {}\n",
            plural(n),
            crate::store::ATTEST_NOTES_REF,
            ids(&completed.already_written)
        ));
    }
    ui.text(&text)?;
    Ok(Exit::Success)
}

fn install(target: &std::path::Path, ui: &mut Ui) -> Result<Exit, Failure> {
    let program = std::env::current_exe().map_err(|e| EngineError::Io {
        what: "find this program's path".into(),
        source: e,
    })?;
    let installed = attest::install_server_hook(target, &program)?;
    if ui.json_report(&installed)? {
        return Ok(Exit::Success);
    }
    let mut text = String::new();
    for hook in &installed.hooks {
        text.push_str(&format!("installed {}\n", hook.display()));
    }
    text.push_str(
        "Every push is judged now: workflow chains may only grow by audited transitions, \
         main moves only to workflow merges that attest PASSED (or by a human listed in \
         main's [attest] humans), and refs/notes/orchestrator-attest is the server's.\n\
         For signed pushes by humans: git config receive.certNonceSeed <secret> and \
         git config gpg.ssh.allowedSignersFile <file> in that repository.\n",
    );
    ui.text(&text)?;
    Ok(Exit::Success)
}

/// `--signing-key -`: the key's text from stdin, at most one byte over the cap (the engine
/// refuses a longer one by its length).
fn read_stdin_key() -> Result<Vec<u8>, crate::engine::EngineError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(crate::input::KEY_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| crate::engine::EngineError::Io {
            what: "read the signing key from stdin".into(),
            source,
        })?;
    Ok(bytes)
}
