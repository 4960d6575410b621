//! Maps every library error to its exit code (docs/agent-guide.md) and to a message that
//! says what happened, in which state, and what to do next: one `Exit`, one `ErrorKind`, one
//! mapping.

use crate::engine::EngineError;
use crate::store::StoreError;
use crate::workflow::plan::Problem;
use crate::workflow::{Human, Rejection, RejectionKind, Status};

/// Set to 1 to run a human's command (`resume`, `approve`, `reject`) without a terminal.
pub const HUMAN_ENV: &str = "GIT_ORCHESTRATE_HUMAN";

/// `resume`, `approve` and `reject` answer for a human. Agents run commands without a
/// terminal; refusing them there stops an agent from waving its own work through (a speed
/// bump, not a wall: the environment variable is for scripts acting for a person).
/// Returns how the answer is authorised, which the transition records (docs/integrity.md).
pub fn require_human(command: &str) -> Result<Human, Failure> {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        Ok(Human::Terminal)
    } else if std::env::var(HUMAN_ENV).is_ok_and(|v| v == "1") {
        Ok(Human::Env)
    } else {
        Err(Failure::from(CommandError::human_only(command)))
    }
}

/// How a command ends, as its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    VerificationFailed = 1,
    Usage = 2,
    NeedsAnalysis = 3,
    NotAllowed = 4,
    Store = 5,
    Halted = 10,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }

    /// This exit when `failed`, else success.
    pub fn when(self, failed: bool) -> Exit {
        if failed { self } else { Exit::Success }
    }
}

/// Why a command did not complete, as `--json` names it (`error.kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Usage,
    InvalidInput,
    InvalidPlan,
    InvalidConfig,
    WrongState,
    HumanOnly,
    VerificationFailed,
    Store,
    Locked,
    WorkflowVanished,
    RetriesExhausted,
    Io,
    Git,
    Remote,
    /// A setting makes the repository unfit to verify in.
    NotHermetic,
    /// `run`'s agent could not start, or ran without our hooks.
    Agent,
    /// `run` would overrule the user's "untrusted" for an agent client.
    Untrusted,
    Internal,
}

impl ErrorKind {
    /// The one place an error's kind decides the exit code.
    pub fn exit(self) -> Exit {
        match self {
            ErrorKind::VerificationFailed => Exit::VerificationFailed,
            ErrorKind::Usage
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidPlan
            | ErrorKind::InvalidConfig => Exit::Usage,
            ErrorKind::WrongState | ErrorKind::HumanOnly | ErrorKind::Untrusted => Exit::NotAllowed,
            ErrorKind::Store
            | ErrorKind::Locked
            | ErrorKind::WorkflowVanished
            | ErrorKind::RetriesExhausted
            | ErrorKind::Io
            | ErrorKind::Git
            | ErrorKind::Remote
            | ErrorKind::NotHermetic
            | ErrorKind::Agent
            | ErrorKind::Internal => Exit::Store,
        }
    }
}

/// Why a command did not complete.
#[derive(Debug)]
pub enum Failure {
    /// Writing to stdout failed (a closed pipe is not an error worth a message).
    Output(std::io::Error),
    /// The command failed; rendered as an error, exits with its code.
    Command(Box<CommandError>),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Output(e)
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        Failure::Command(Box::new(e.into()))
    }
}

impl From<CommandError> for Failure {
    fn from(e: CommandError) -> Self {
        Failure::Command(Box::new(e))
    }
}

/// An error as the user sees it.
#[derive(Debug, Clone)]
pub struct CommandError {
    pub kind: ErrorKind,
    pub message: String,
    pub state: Option<Status>,
    pub hint: Option<String>,
    pub problems: Vec<Problem>,
    /// Output of a failed verification, shown with the error.
    pub output: Option<Vec<u8>>,
    /// What the error came from, outermost first, each not already said by the message:
    /// printed as "Caused by:".
    pub causes: Vec<String>,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CommandError {
            kind,
            message: message.into(),
            state: None,
            hint: None,
            problems: Vec::new(),
            output: None,
            causes: Vec::new(),
        }
    }

    pub fn exit(&self) -> Exit {
        self.kind.exit()
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }

    pub fn invalid_input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message).hint(hint)
    }

    /// A human's command run where no human is: exit 4, like every "not allowed now".
    pub fn human_only(command: &str) -> Self {
        Self::new(
            ErrorKind::HumanOnly,
            format!(
                "{command} is a human's answer, and stdin is not a terminal: an agent must not answer \
                 its own halt or review"
            ),
        )
        // The variable that lifts this is documented for people, not offered to the agent
        // that was just refused.
        .hint(format!(
            "Ask a human to run `git orchestrate {command}` in a terminal."
        ))
    }

    pub fn store(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Store, message)
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds the sources of `error` under this message, each once.
    pub fn caused_by(mut self, error: &dyn std::error::Error) -> Self {
        let mut source = error.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            let said =
                self.message.contains(&text) || self.causes.iter().any(|c| c.contains(&text));
            if !said && !text.trim().is_empty() {
                self.causes.push(text);
            }
            source = cause.source();
        }
        self
    }
}

impl From<EngineError> for CommandError {
    fn from(e: EngineError) -> Self {
        let causes = CommandError::store(e.to_string()).caused_by(&e).causes;
        let mut err = classify(e);
        err.causes = causes;
        err
    }
}

/// The kind, exit code and hint of each engine error.
fn classify(e: EngineError) -> CommandError {
    let message = e.to_string();
    match e {
        EngineError::AfterCommit { commit, source } => after_commit(&commit, *source, message),
        EngineError::Rejected(r) => rejected(r),
        EngineError::InvalidPlan { state, problems } => invalid_plan(state, problems),
        EngineError::Config(_) => CommandError::new(ErrorKind::InvalidConfig, message).hint(
            "Fix .orchestrate.toml (every key is described in `git orchestrate init`'s file and docs/config.md).",
        ),
        EngineError::Store(e) => store(e, message),
        EngineError::RetriesExhausted { .. } => CommandError::new(ErrorKind::RetriesExhausted, message)
            .hint("Nothing was written. Run the command again once the other processes are done."),
        EngineError::NotesBusy { .. } => CommandError::new(ErrorKind::RetriesExhausted, message).hint(
            "A server keeps the verdict until its note is written: its next push or `git orchestrate attest \
             --repair` in its bare repository writes it; in a clone, run `git orchestrate attest` again.",
        ),
        EngineError::Io { .. } | EngineError::Conflict => CommandError::new(ErrorKind::Io, message),
        EngineError::Hooks { .. } => CommandError::new(ErrorKind::Store, message)
            .hint("Fix what is named, then run `git orchestrate hooks install`."),
        EngineError::Git(_) => CommandError::new(ErrorKind::Git, message),
        EngineError::NotHermetic(problem) => CommandError::new(ErrorKind::NotHermetic, message).hint(format!(
            "Nothing was run or recorded. {}; `git orchestrate doctor` lists every such setting.",
            capitalized(&problem.fix)
        )),
        EngineError::Forged { .. } => CommandError::new(ErrorKind::VerificationFailed, message).hint(
            "No workflow ref here was moved or created. `git orchestrate audit --all` lists what is wrong \
             here; the remote's history is under refs/orchestrator/remotes/ to inspect, and a human \
             decides what to keep.",
        ),
        EngineError::Internal(_) => CommandError::new(ErrorKind::Internal, message),
        EngineError::Remote { hint, .. } => CommandError::new(ErrorKind::Remote, message).hint(hint),
        EngineError::BadInput { hint, .. } => CommandError::invalid_input(message, hint),
        EngineError::ToolInput { tool, problems } => {
            let mut err = CommandError::new(
                ErrorKind::InvalidInput,
                format!(
                    "the {tool} input was not accepted ({} problem{}); nothing was written",
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" }
                ),
            )
            .hint(format!(
                "Fix every problem listed and call {tool} again; `git orchestrate schema --role \
                 manager|developer` shows its parameters."
            ));
            err.problems = problems;
            err
        }
        EngineError::TicketRefused { hint, .. } => {
            CommandError::new(ErrorKind::WrongState, message).hint(hint)
        }
        EngineError::TicketGatesFailed { .. } => CommandError::new(ErrorKind::VerificationFailed, message)
            .hint("Nothing was merged or recorded. Assign a subtask that fixes it, then complete the ticket again."),
        EngineError::Agent { hint, .. } => CommandError::new(ErrorKind::Agent, message).hint(hint),
        EngineError::AgentUntrusted { hint, .. } => {
            CommandError::new(ErrorKind::Untrusted, message).hint(hint)
        }
        EngineError::CheckpointRefused { output, .. } => {
            let mut err = CommandError::new(
                ErrorKind::VerificationFailed,
                format!("{message}; nothing was committed"),
            )
            .hint("Fix what the gate reports, then run `git orchestrate checkpoint` again.");
            err.output = Some(output);
            err
        }
        EngineError::CommitRefused(_) => CommandError::new(ErrorKind::VerificationFailed, message).hint(
            "Nothing was recorded. Fix what git reported, then run `git orchestrate checkpoint` again.",
        ),
    }
}

/// A checkpoint commit was made and recording it failed: the cause decides the exit code;
/// the message and hint say the commit exists.
fn after_commit(commit: &str, source: EngineError, message: String) -> CommandError {
    let mut err = CommandError::from(source);
    err.message = message;
    let finish = format!(
        "Commit {} stays; `git orchestrate get-task` (or `checkpoint`) finishes recording it without \
         a second commit.",
        crate::short_id(commit)
    );
    err.hint = Some(match err.hint.take() {
        Some(hint) => format!("{hint} {finish}"),
        None => finish,
    });
    err
}

/// The workflow refused the event: a wrong state or bad input, with its hint.
fn rejected(r: Rejection) -> CommandError {
    let kind = match r.kind {
        RejectionKind::WrongState => ErrorKind::WrongState,
        RejectionKind::InvalidInput => ErrorKind::InvalidInput,
    };
    let mut err = CommandError::new(kind, r.message).hint(r.hint);
    err.state = Some(r.state);
    err
}

/// A plan or re-plan that was not accepted, with every problem.
fn invalid_plan(state: Status, problems: Vec<Problem>) -> CommandError {
    let mut err = CommandError::new(
        ErrorKind::InvalidPlan,
        format!(
            "the plan was not accepted ({} problem{}); nothing was written",
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
        ),
    )
    .hint(if state == Status::Replanning {
        "Fix every problem listed and submit the re-plan again; `git orchestrate get-task` repeats the rules."
    } else {
        "Fix every problem listed and submit the plan again; `git orchestrate get-task` shows the schema."
    });
    err.problems = problems;
    err.state = Some(state);
    err
}

/// The repository could not be read or written: a lock, a vanished workflow, no repository.
fn store(e: StoreError, message: String) -> CommandError {
    match e {
        StoreError::BadWorkflowName(_) => CommandError::new(ErrorKind::InvalidInput, message),
        StoreError::Locked { path, reference, .. } => {
            let rm = crate::workflow::briefing::shell_quote(&path.display().to_string());
            CommandError::new(ErrorKind::Locked, message).hint(if reference == crate::store::ATTEST_NOTES_REF {
                // On a server the verdict waits in the bare repository (the hooks keep it
                // until its note is written): `get-task` has no workflow there to attach it.
                format!(
                    "Only the verdict's note was not written; a server keeps the verdict until it is. If no \
                     git or git-orchestrate process is still running, delete the lock (rm {rm}), then run \
                     `git orchestrate attest --repair` in the server's bare repository (its next push does \
                     it too), or `git orchestrate attest` again in a clone."
                )
            } else if crate::store::is_notes_ref(&reference) {
                format!(
                    "Only the verification note was not written: a commit this command made is kept. If no \
                     git or git-orchestrate process is still running, delete the lock (rm {rm}), then run \
                     `git orchestrate get-task`: it attaches the missing note."
                )
            } else {
                format!(
                    "The workflow state was not changed. If no git or git-orchestrate process is still \
                     running, delete the lock: rm {rm}"
                )
            })
        }
        StoreError::Vanished {
            reference,
            tip,
            restorable,
        } => CommandError::new(ErrorKind::WorkflowVanished, message).hint(if restorable {
            format!(
                "Restore it: git update-ref {reference} {tip} (then `git orchestrate status`). To start over \
                 instead, deliberately: git orchestrate init --new"
            )
        } else {
            format!(
                "Its commit {tip} is gone from the object store too; another clone may still have the \
                 workflow (`git orchestrate sync`). To start over: git orchestrate init --new"
            )
        }),
        StoreError::TicketWorkflow { .. } => CommandError::new(ErrorKind::WrongState, message).hint(
            "Drive it with the ticket tools: `git orchestrate get-task --role manager|developer`, `assign`, \
             `update-subtask`, `subtask-complete`, `complete-ticket` (docs/tickets.md); or name another \
             workflow with --workflow.",
        ),
        StoreError::UnsupportedRefStorage { .. } => CommandError::new(ErrorKind::Store, message).hint(
            "Move the refs to git's files backend, in place with `git refs migrate --ref-format=files` (git \
             2.46 or later), or in a new clone made with `git clone --ref-format=files`; then run the command \
             again (docs/refs.md, \"Ref storage\").",
        ),
        StoreError::NotARepository(_) | StoreError::Bare => CommandError::new(ErrorKind::Store, message)
            .hint("Run git orchestrate inside a git repository with a working tree."),
        _ => CommandError::new(ErrorKind::Store, message).hint(
            "git-orchestrate could not read or write the repository (the cause is above: a full disk, a \
             read-only file system, a damaged object); fix that, then run the command again.",
        ),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// An error with a source, as gix nests the OS's answer under its own.
    #[derive(Debug)]
    struct Wrapped(&'static str, std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.1)
        }
    }

    #[test]
    fn a_store_failure_prints_what_caused_it() {
        let os = std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device");
        let e = EngineError::Store(StoreError::Objects {
            message: "could not write loose object".into(),
            source: Box::new(Wrapped("could not write loose object", os)),
        });
        let err = CommandError::from(e);
        assert_eq!(err.exit(), Exit::Store);
        assert_eq!(err.causes, vec!["No space left on device".to_string()]);
        assert_eq!(
            crate::cli::render::error_text(&err, true),
            "error: git object store: could not write loose object\nCaused by:\n  1: No space left on device\n"
        );
    }

    #[test]
    fn every_kind_has_its_exit_code() {
        for (kind, exit, name) in [
            (ErrorKind::Usage, Exit::Usage, "usage"),
            (ErrorKind::InvalidPlan, Exit::Usage, "invalid_plan"),
            (ErrorKind::WrongState, Exit::NotAllowed, "wrong_state"),
            (ErrorKind::HumanOnly, Exit::NotAllowed, "human_only"),
            (ErrorKind::Untrusted, Exit::NotAllowed, "untrusted"),
            (
                ErrorKind::VerificationFailed,
                Exit::VerificationFailed,
                "verification_failed",
            ),
            (ErrorKind::Locked, Exit::Store, "locked"),
            (
                ErrorKind::WorkflowVanished,
                Exit::Store,
                "workflow_vanished",
            ),
            (
                ErrorKind::RetriesExhausted,
                Exit::Store,
                "retries_exhausted",
            ),
        ] {
            assert_eq!(kind.exit(), exit, "{name}");
            assert_eq!(serde_json::to_value(kind).unwrap(), name);
        }
        assert_eq!(
            [
                Exit::Success,
                Exit::VerificationFailed,
                Exit::Usage,
                Exit::NeedsAnalysis,
                Exit::NotAllowed,
                Exit::Store,
                Exit::Halted
            ]
            .map(Exit::code),
            [0, 1, 2, 3, 4, 5, 10]
        );
    }
}
