//! Signed human answers (docs/integrity.md, "Signed human answers"): the bytes an answer's
//! signature covers, whether the PR's pinned configuration requires one, checking it when a
//! human answers, and judging the answers a chain records (for `audit` and `attest`); a
//! finished ticket's `approve --flaky` too, against the allowed signers at its pin.
//! What to conclude is decided by pure functions ([`payload`], [`recorded_answer`],
//! [`judge`]); the rest gathers what they need and runs `ssh-keygen`.

use std::path::PathBuf;

use gix::ObjectId;
use serde::Serialize;

use super::{EngineError, Session};
use crate::config::{ALLOWED_SIGNERS, Config, HumanProof, Origin};
use crate::exec::ssh::{self, SshError, Verified};
use crate::store::{EntryType, Snapshot, TicketSnapshot, workflow_ref};
use crate::workflow::state::HaltReason;
use crate::workflow::ticket::{Action as TicketAction, Recorded, Ticket};
use crate::workflow::{Event, State, Status};

/// The human answers that can be signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Approve,
    Reject,
    Resume,
    Repin,
    /// `approve --test-change PATH` / `approve --flaky`: a tree approved by name.
    ApproveTree,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Approve => "approve",
            Answer::Reject => "reject",
            Answer::Resume => "resume",
            Answer::Repin => "repin",
            Answer::ApproveTree => "approve-tree",
        }
    }
}

/// How the command was given its signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Signing {
    /// None: the answer is attributed only.
    #[default]
    Unsigned,
    /// Sign with this key now (`--sign-key`).
    Key(PathBuf),
    /// An armored signature made elsewhere (`--signature`).
    Signature(String),
}

/// A signed answer's signature, checked: the session records it with the answer's transition.
pub use super::session::AnswerSignature;

/// One recorded human answer, judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AnswerCheck {
    /// The transition commit that records the answer.
    pub commit: String,
    /// `approve`, `reject`, `resume` or `repin`.
    pub answer: String,
    /// The configuration pinned when it was given requires a signature.
    pub required: bool,
    pub verdict: AnswerVerdict,
    /// A repin's signature covers the main commit it accounts for (as its text); false for
    /// one signed before repins carried it, whose signature any repin on the same tip could
    /// reuse. Always true for the other answers.
    #[serde(skip)]
    pub bound: bool,
    /// For `approve-tree`: the tree approved, the changed existing tests and whether a pass
    /// after an earlier failure is accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approves: Option<TreeApproval>,
}

/// What an `approve-tree` answer approves, for one tree only (docs/integrity.md, "Approved
/// by name").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TreeApproval {
    pub tree: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
}

impl TreeApproval {
    /// The answer's text its signature covers: this, as one line of JSON in a fixed order.
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl AnswerCheck {
    /// Who gave it, as the verdicts name it: `signed by alice`, `unsigned (terminal)`, or
    /// why its signature does not hold.
    pub fn given_by(&self) -> String {
        match &self.verdict {
            AnswerVerdict::Signed { principal } => format!("signed by {principal}"),
            AnswerVerdict::Unsigned { how } if how.is_empty() => "unsigned".to_string(),
            AnswerVerdict::Unsigned { how } => format!("unsigned ({how})"),
            AnswerVerdict::Bad { why } => format!("a signature that does not hold: {why}"),
        }
    }

    /// The tree approval it holds, when it is one that stands (signed where the pinned
    /// configuration requires it; unsigned ones stand where it does not, as every other
    /// unsigned answer does, attributed and reported as unsigned).
    pub fn approval(&self) -> Option<&TreeApproval> {
        self.approves.as_ref().filter(|_| !self.fails())
    }

    /// Whether it is an approval that stands and accepts a pass of `tree` after an earlier
    /// failure (`approve --flaky`): what the final check, `attest` and the server hook hold
    /// a flaky pass to.
    pub fn accepts_flaky(&self, tree: &str) -> bool {
        self.approval().is_some_and(|a| a.flaky && a.tree == tree)
    }
}

/// What a recorded answer's signature proves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum AnswerVerdict {
    /// Signed by `principal`'s key, listed in the pinned allowed-signers file, over this
    /// answer on this tip.
    Signed { principal: String },
    /// No signature; `how` is how the answer says it was authorised (`terminal`,
    /// `GIT_ORCHESTRATE_HUMAN`), empty when it says nothing.
    Unsigned { how: String },
    /// A signature that does not hold, or one the pinned configuration requires and that
    /// cannot be checked.
    Bad { why: String },
}

impl AnswerCheck {
    /// True when the answer is not what the pinned configuration demands: forged, or
    /// unsigned under `require = "signature"`.
    pub fn fails(&self) -> bool {
        match &self.verdict {
            AnswerVerdict::Signed { .. } => false,
            AnswerVerdict::Unsigned { .. } => self.required,
            AnswerVerdict::Bad { .. } => true,
        }
    }
}

/// The exact bytes a signature of `answer` covers: one line of JSON and a newline
/// (docs/refs.md, "Signed answers"). `tip` is the workflow tip the answer is given on: the
/// answer's transition's parent, so a signature cannot be replayed on a later tip.
pub fn payload(workflow: &str, tip: &ObjectId, answer: Answer, text: &str) -> Vec<u8> {
    #[derive(Serialize)]
    struct Payload<'a> {
        v: u32,
        workflow: &'a str,
        tip: String,
        answer: &'a str,
        text: &'a str,
    }
    let mut bytes = serde_json::to_vec(&Payload {
        v: 1,
        workflow,
        tip: tip.to_string(),
        answer: answer.as_str(),
        text,
    })
    .unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// The answer a transition applying `event` to a state in `from` records, and its text:
/// `None` when the transition is no human's answer. The answer's text is what the event
/// keeps of it, so that the signed bytes can be computed again from the record.
pub fn recorded_answer(event: &Event, from: Status) -> Option<(Answer, String)> {
    Some(match event {
        Event::Approved => (Answer::Approve, String::new()),
        Event::Rejected { comment, .. } => (Answer::Reject, comment.clone()),
        Event::Resumed { guidance } => (Answer::Resume, guidance.clone().unwrap_or_default()),
        // After a merge conflict, `resume` records the human's merge; a merge from any other
        // state is the workflow's own.
        Event::Merged { .. } if from == Status::Halted => (Answer::Resume, String::new()),
        // The main commit it accounts for: signed, so that the signature cannot be moved
        // onto a repin of another commit on the same tip.
        Event::Repinned { pin } => (Answer::Repin, pin.commit.clone()),
        Event::TreeApproved { tree, tests, flaky } => (
            Answer::ApproveTree,
            TreeApproval {
                tree: tree.clone(),
                tests: tests.clone(),
                flaky: *flaky,
            }
            .text(),
        ),
        _ => None?,
    })
}

/// The text of `resume`'s answer in `state`: the guidance as the event will keep it, and
/// nothing after a merge conflict, whose event keeps none.
pub fn resume_text(state: &State, guidance: Option<&str>) -> String {
    if state
        .halt()
        .as_ref()
        .is_some_and(|h| h.reason == HaltReason::MergeConflict)
    {
        return String::new();
    }
    guidance.map(str::trim).unwrap_or_default().to_string()
}

/// The verdict on an answer from `how` it says it was authorised (its `Orchestrator-Human`
/// trailer) and what checking its signature found (`None`: it has none). A trailer naming
/// another signer than the key's is a forgery too. Whether an unsigned answer is allowed is
/// [`AnswerCheck::fails`]'s to say.
pub fn judge(how: Option<&str>, checked: Option<Result<Verified, String>>) -> AnswerVerdict {
    let claimed = how.and_then(|h| h.strip_prefix("signed "));
    match checked {
        None if claimed.is_some() => AnswerVerdict::Bad {
            why: format!(
                "it says it was signed by {}, and carries no signature",
                claimed.unwrap_or_default()
            ),
        },
        None => AnswerVerdict::Unsigned {
            how: how.unwrap_or_default().to_string(),
        },
        Some(Err(why)) => AnswerVerdict::Bad { why },
        Some(Ok(Verified::Good { principal })) => match claimed {
            Some(name) if name != principal => AnswerVerdict::Bad {
                why: format!("it says it was signed by {name}, and {principal}'s key signed it"),
            },
            _ => AnswerVerdict::Signed { principal },
        },
        Some(Ok(Verified::NotAllowed { message })) => AnswerVerdict::Bad {
            why: format!("its key is not in the pinned {ALLOWED_SIGNERS} ({message})"),
        },
        Some(Ok(Verified::Bad { message })) => AnswerVerdict::Bad {
            why: format!(
                "its signature is not over this answer on this tip (ssh-keygen: {message})"
            ),
        },
    }
}

/// What the configuration pinned for an answer given in `state` demands, and the keys it
/// allows.
struct Requirement {
    required: bool,
    /// The commit both are read at; `None` when the state pins none.
    pin: Option<String>,
    allowed_signers: Option<Vec<u8>>,
}

/// The main-branch commit whose `.orchestrate.toml` and allowed-signers file govern an
/// answer given in `state`: the PR's pin, else the main commit the workflow last accounted
/// for (`main_tip`). Both are in the state, which the agent cannot write: the answer is
/// judged the same way when given and in every later audit.
pub(crate) fn answer_pin(state: &State) -> Option<(String, Option<String>)> {
    match state.pr().and_then(|pr| pr.pin.as_ref()) {
        Some(pin) => Some((pin.commit.clone(), pin.config.clone())),
        None => state.main_tip.clone().map(|commit| (commit, None)),
    }
}

/// Reads the configuration and the allowed signers pinned for `state`, from the object
/// database only (no working tree).
fn requirement(session: &Session, state: &State) -> Result<Requirement, EngineError> {
    Ok(pinned(session, state)?.1)
}

/// The configuration pinned for an answer given on `state` (the defaults when nothing is
/// pinned), read from the object database only: whose `[attest] humans` a `repin` given there
/// is held to (src/engine/attest/human.rs).
pub fn answer_config(session: &Session, state: &State) -> Result<Config, EngineError> {
    Ok(pinned(session, state)?.0)
}

fn pinned(session: &Session, state: &State) -> Result<(Config, Requirement), EngineError> {
    let Some((commit, pinned_config)) = answer_pin(state) else {
        return Ok((
            Config::default(),
            Requirement {
                required: false,
                pin: None,
                allowed_signers: None,
            },
        ));
    };
    let store = &session.store;
    let tree = store.tree_of(&commit)?;
    let file = |path: &str| -> Result<Option<String>, EngineError> {
        Ok(store
            .tree_entry(&tree, path)?
            .filter(|e| matches!(e.kind, EntryType::File | EntryType::Executable))
            .map(|e| e.id.to_string()))
    };
    let config_blob = policy_of(
        store,
        &tree,
        state
            .pr()
            .and_then(|pr| pr.pin.as_ref())
            .map(|_| pinned_config),
    )?;
    let main = state.main_branch.clone().unwrap_or_else(|| "main".into());
    let origin = Origin::Pinned {
        main: main.clone(),
        commit: commit.clone(),
    };
    let read = |blob: &str| -> Result<Vec<u8>, EngineError> {
        store.blob_within(blob, crate::input::CAP)?.map_err(|size| {
            EngineError::Config(crate::config::ConfigError {
                origin: origin.to_string(),
                message: format!("{blob} is {size} bytes, over the limit, and is not read"),
            })
        })
    };
    let config = super::proof::pinned_config(session, config_blob.as_deref(), &main, &commit)?;
    let allowed_signers = file(ALLOWED_SIGNERS)?.map(|b| read(&b)).transpose()?;
    let requirement = Requirement {
        required: config.human.require == HumanProof::Signature,
        pin: Some(commit),
        allowed_signers,
    };
    Ok((config, requirement))
}

/// The policy an answer given on `state` was given under: the config blob pinned for it
/// (main's `.orchestrate.toml` at the pin; `None` when there is none), as a verdict names its
/// policy (src/engine/attest/memory.rs holds a human's `approve --flaky` to it).
pub fn answer_policy(session: &Session, state: &State) -> Result<Option<String>, EngineError> {
    let Some((commit, pinned_config)) = answer_pin(state) else {
        return Ok(None);
    };
    let tree = session.store.tree_of(&commit)?;
    let pinned = state
        .pr()
        .and_then(|pr| pr.pin.as_ref())
        .map(|_| pinned_config);
    policy_of(&session.store, &tree, pinned)
}

/// The config blob of a pin: the PR's own record of it (`pinned`), else main's
/// `.orchestrate.toml` in the pinned commit's `tree`.
fn policy_of(
    store: &crate::store::Store,
    tree: &str,
    pinned: Option<Option<String>>,
) -> Result<Option<String>, EngineError> {
    if let Some(pinned) = pinned {
        return Ok(pinned);
    }
    Ok(store
        .tree_entry(tree, crate::config::FILE_NAME)?
        .filter(|e| matches!(e.kind, EntryType::File | EntryType::Executable))
        .map(|e| e.id.to_string()))
}

/// The `ssh-keygen` to run, never one of the repository's.
pub(super) fn ssh_keygen(session: &Session) -> Result<PathBuf, EngineError> {
    let store = &session.store;
    let inside: Vec<PathBuf> = [store.workdir(), store.git_dir(), store.common_dir()]
        .iter()
        .map(|p| p.to_path_buf())
        .collect();
    ssh::ssh_keygen(&inside).map_err(ssh_error)
}

fn ssh_error(e: SshError) -> EngineError {
    match e {
        SshError::Io(source) => EngineError::Io {
            what: "run ssh-keygen".into(),
            source,
        },
        other => EngineError::Io {
            what: "check the answer's signature".into(),
            source: std::io::Error::other(other.to_string()),
        },
    }
}

/// Checks `signature` over `bytes` against `allowed`: the verdict's input for [`judge`].
fn check(
    program: &std::path::Path,
    allowed: Option<&[u8]>,
    pin: Option<&str>,
    signature: &str,
    bytes: &[u8],
) -> Result<Result<Verified, String>, EngineError> {
    let Some(allowed) = allowed else {
        return Ok(Err(match pin {
            Some(pin) => format!(
                "there is no {ALLOWED_SIGNERS} at the pinned main commit {}",
                crate::short_id(pin)
            ),
            None => format!(
                "the workflow pins no main commit, so no {ALLOWED_SIGNERS} to check it against"
            ),
        }));
    };
    ssh::verify(program, allowed, signature, bytes)
        .map(Ok)
        .map_err(ssh_error)
}

/// The bytes to sign for `answer` on the workflow as it is now (`--print-payload`). Reads
/// only; `text` is the reject comment or the resume guidance as given.
pub fn answer_payload(
    session: &Session,
    answer: Answer,
    text: Option<&str>,
) -> Result<Vec<u8>, EngineError> {
    let snap = session.read_or_refuse(answer.as_str(), |_| None)?;
    let text = match answer {
        Answer::Reject => text.map(str::trim).unwrap_or_default().to_string(),
        Answer::Resume => resume_text(&snap.state, text),
        Answer::Approve => String::new(),
        // Computed by the caller from the approval asked for (src/engine/human.rs).
        Answer::ApproveTree => text.unwrap_or_default().to_string(),
        // main's tip now, which the repin will account for.
        Answer::Repin => {
            let main = session.main_branch(Some(&snap.state))?;
            session
                .pin_now(&main)?
                .map(|pin| pin.commit)
                .unwrap_or_default()
        }
    };
    Ok(payload(session.store.workflow(), &snap.tip, answer, &text))
}

/// Checks the signature of `answer` (with `text`) given on `snap`, signing first when
/// `signing` names a key. `None`: unsigned, and the pinned configuration allows it. Refuses
/// (exit 4, nothing written) an answer the pinned configuration requires a signature of
/// and that has none that holds, and any signature that does not hold.
pub(crate) fn authorise(
    session: &Session,
    snap: &Snapshot,
    answer: Answer,
    text: &str,
    signing: &Signing,
) -> Result<Option<AnswerSignature>, EngineError> {
    let requirement = requirement(session, &snap.state)?;
    let bytes = payload(session.store.workflow(), &snap.tip, answer, text);
    let signature = match signing {
        Signing::Unsigned => None,
        Signing::Key(key) => {
            super::error::require_key_file(key, "key to sign with")?;
            let program = ssh_keygen(session)?;
            Some(ssh::sign(&program, key, &bytes).map_err(|e| match e {
                SshError::SignFailed { .. } => super::error::wrong_state(
                    snap.state.status(),
                    format!("{} was not recorded: {e}", answer.as_str()),
                    "Check the key path and its passphrase, or sign elsewhere: \
                     `--print-payload`, then `--signature FILE`.",
                ),
                other => ssh_error(other),
            })?)
        }
        Signing::Signature(text) => Some(text.clone()),
    };
    let checked = match &signature {
        Some(signature) => {
            let program = ssh_keygen(session)?;
            let found = check(
                &program,
                requirement.allowed_signers.as_deref(),
                requirement.pin.as_deref(),
                signature,
                &bytes,
            )?;
            Some(match found {
                // Named apart: the commonest way to hold a good signature over other bytes.
                Ok(Verified::Bad { message }) => match replayed(
                    session,
                    snap,
                    answer,
                    text,
                    &program,
                    requirement.allowed_signers.as_deref().unwrap_or_default(),
                    signature,
                )? {
                    Some(older) => Err(format!(
                        "it is a replay: it was made over the older tip {}, and the workflow is at {} now",
                        crate::short_id(&older),
                        crate::short_id(&snap.tip.to_string())
                    )),
                    None => Ok(Verified::Bad { message }),
                },
                other => other,
            })
        }
        None => None,
    };
    match judge(None, checked) {
        AnswerVerdict::Signed { principal } => Ok(Some(AnswerSignature {
            principal,
            signature: signature.unwrap_or_default(),
        })),
        AnswerVerdict::Unsigned { .. } if !requirement.required => Ok(None),
        AnswerVerdict::Unsigned { .. } => Err(super::error::wrong_state(
            snap.state.status(),
            format!(
                "{} needs a signature: the pinned configuration says [human] require = \"signature\"; \
                 nothing was recorded",
                answer.as_str()
            ),
            format!(
                "Sign with a key listed in the pinned {ALLOWED_SIGNERS}: `git orchestrate {} \
                 --sign-key ~/.ssh/id_ed25519_sk`, or `--print-payload` and sign elsewhere \
                 (`ssh-keygen -Y sign -n {} -f KEY`), then pass `--signature FILE`.",
                answer.as_str(),
                ssh::NAMESPACE
            ),
        )),
        AnswerVerdict::Bad { why } => Err(super::error::wrong_state(
            snap.state.status(),
            format!(
                "the signature of {} does not hold: {why}; nothing was recorded",
                answer.as_str()
            ),
            format!(
                "Sign the payload of this answer on this tip (`git orchestrate {} --print-payload`) \
                 with a key listed in the pinned {ALLOWED_SIGNERS}, in namespace {}.",
                answer.as_str(),
                ssh::NAMESPACE
            ),
        )),
    }
}

/// How far back a failed signature is tried against older tips, to name a replay.
const REPLAY_DEPTH: usize = 16;

/// The older tip of the workflow whose payload `signature` holds for, when it holds for
/// one: the signature is a replay of an answer given there.
fn replayed(
    session: &Session,
    snap: &Snapshot,
    answer: Answer,
    text: &str,
    program: &std::path::Path,
    allowed: &[u8],
    signature: &str,
) -> Result<Option<String>, EngineError> {
    let store = &session.store;
    let mut next = store.commit_record(snap.tip)?.parents.first().copied();
    for _ in 0..REPLAY_DEPTH {
        let Some(id) = next else { break };
        let bytes = payload(store.workflow(), &id, answer, text);
        if let Verified::Good { .. } =
            ssh::verify(program, allowed, signature, &bytes).map_err(ssh_error)?
        {
            return Ok(Some(id.to_string()));
        }
        next = store.commit_record(id)?.parents.first().copied();
    }
    Ok(None)
}

/// The human answers recorded from `tip` back to `stop` (exclusive; `None`: to the root),
/// newest first, each judged against the configuration and allowed signers pinned when it
/// was given, over its parent tip. Reads the object database only, so it works in a bare
/// repository or one whose objects come through alternates. Transitions whose event cannot
/// be read are left to the chain's replay (`audit`), which names them.
pub fn judge_answers(
    session: &Session,
    workflow: &str,
    tip: ObjectId,
    stop: Option<ObjectId>,
) -> Result<Vec<AnswerCheck>, EngineError> {
    let store = &session.store;
    let reference = workflow_ref(workflow);
    let mut program = None;
    let mut checks = Vec::new();
    for step in super::chain::segment(store, tip, stop) {
        let (id, record) = step?;
        let Some(parent) = record.parents.first().copied() else {
            continue;
        };
        let Some(event) = record
            .event
            .as_deref()
            .and_then(|json| serde_json::from_str::<Event>(json).ok())
        else {
            continue;
        };
        // An event no state makes an answer needs no state read: most of a chain's are
        // steps, and `attest` judges every PR's chain (a merge is an answer only from a
        // halt, the most any state allows).
        if recorded_answer(&event, Status::Halted).is_none() {
            continue;
        }
        let Ok(before) = store.read_at(parent, &reference) else {
            continue;
        };
        let Some((answer, text)) = recorded_answer(&event, before.state.status()) else {
            continue;
        };
        let how = record.history.human.as_deref();
        let mut bound = true;
        let unpinned =
            matches!(event, Event::TreeApproved { .. }) && answer_pin(&before.state).is_none();
        let (required, verdict) = match requirement(session, &before.state) {
            // Judged under the defaults, which require no signature: an agent's to give.
            _ if unpinned => (
                true,
                AnswerVerdict::Bad {
                    why: "an approval by name given where no configuration was pinned counts \
                          for nothing"
                        .into(),
                },
            ),
            Err(e) => (
                true,
                AnswerVerdict::Bad {
                    why: format!("the configuration pinned for it cannot be read: {e}"),
                },
            ),
            Ok(requirement) => {
                let checked = match &record.signature {
                    None => None,
                    Some(signature) => {
                        let program = match &program {
                            Some(p) => p,
                            None => program.insert(ssh_keygen(session)?),
                        };
                        let verify = |text: &str| {
                            check(
                                program,
                                requirement.allowed_signers.as_deref(),
                                requirement.pin.as_deref(),
                                signature,
                                &payload(workflow, &parent, answer, text),
                            )
                        };
                        let first = verify(&text)?;
                        let good = matches!(first, Ok(Verified::Good { .. }));
                        // A repin signed before its text carried the main commit: its
                        // signature holds over the empty text, and is not bound to the commit.
                        if !good && matches!(answer, Answer::Repin) {
                            match verify("")? {
                                legacy @ Ok(Verified::Good { .. }) => {
                                    bound = false;
                                    Some(legacy)
                                }
                                _ => Some(first),
                            }
                        } else {
                            Some(first)
                        }
                    }
                };
                (requirement.required, judge(how, checked))
            }
        };
        let approves = match event {
            Event::TreeApproved { tree, tests, flaky } => Some(TreeApproval { tree, tests, flaky }),
            _ => None,
        };
        checks.push(AnswerCheck {
            commit: id.to_string(),
            answer: answer.as_str().to_string(),
            required,
            verdict,
            bound,
            approves,
        });
    }
    Ok(checks)
}

/// What the configuration pinned for a ticket demands of a human's answer, and the keys it
/// lists: read at the ticket's pin (main's tip when it began), as a TDD workflow's are at its
/// PR's pin.
fn ticket_requirement(session: &Session, ticket: &Ticket) -> Result<Requirement, EngineError> {
    let store = &session.store;
    let config = super::ticket::observe::ticket_config(session, ticket)?;
    let tree = store.tree_of(&ticket.pin)?;
    let allowed_signers = match store
        .tree_entry(&tree, ALLOWED_SIGNERS)?
        .filter(|e| matches!(e.kind, EntryType::File | EntryType::Executable))
    {
        Some(entry) => Some(
            store
                .blob_within(&entry.id.to_string(), crate::input::CAP)?
                .map_err(|size| {
                    EngineError::Config(crate::config::ConfigError {
                        origin: format!("{ALLOWED_SIGNERS} at the ticket's pin {}", ticket.pin),
                        message: format!("it is {size} bytes, over the limit, and is not read"),
                    })
                })?,
        ),
        None => None,
    };
    Ok(Requirement {
        required: config.human.require == HumanProof::Signature,
        pin: Some(ticket.pin.clone()),
        allowed_signers,
    })
}

/// Checks a human's `answer` (with `text`) given on the ticket `snap`, signing first when
/// `signing` names a key, as [`authorise`] does a TDD workflow's: `None` when unsigned and
/// the ticket's pinned configuration allows it; refused, nothing written, when it requires
/// a signature and none holds, or when a signature does not hold.
pub(crate) fn authorise_ticket(
    session: &Session,
    snap: &TicketSnapshot,
    answer: Answer,
    text: &str,
    signing: &Signing,
) -> Result<Option<AnswerSignature>, EngineError> {
    let requirement = ticket_requirement(session, &snap.ticket)?;
    let bytes = payload(session.store.workflow(), &snap.tip, answer, text);
    let refused = |message: String| EngineError::TicketRefused {
        message,
        hint: format!(
            "Sign the payload of this answer on this tip (`git orchestrate approve --flaky \
             --print-payload`) with a key listed in the pinned {ALLOWED_SIGNERS}, in namespace \
             {}: `--sign-key KEY`, or `--signature FILE`.",
            ssh::NAMESPACE
        ),
        state: snap.ticket.state.as_str().into(),
    };
    let signature = match signing {
        Signing::Unsigned => None,
        Signing::Key(key) => {
            super::error::require_key_file(key, "key to sign with")?;
            let program = ssh_keygen(session)?;
            Some(ssh::sign(&program, key, &bytes).map_err(|e| match e {
                SshError::SignFailed { .. } => {
                    refused(format!("{} was not recorded: {e}", answer.as_str()))
                }
                other => ssh_error(other),
            })?)
        }
        Signing::Signature(text) => Some(text.clone()),
    };
    let checked = match &signature {
        Some(signature) => Some(check(
            &ssh_keygen(session)?,
            requirement.allowed_signers.as_deref(),
            requirement.pin.as_deref(),
            signature,
            &bytes,
        )?),
        None => None,
    };
    match judge(None, checked) {
        AnswerVerdict::Signed { principal } => Ok(Some(AnswerSignature {
            principal,
            signature: signature.unwrap_or_default(),
        })),
        AnswerVerdict::Unsigned { .. } if !requirement.required => Ok(None),
        AnswerVerdict::Unsigned { .. } => Err(refused(format!(
            "{} needs a signature: the ticket's pinned configuration says [human] require = \
             \"signature\"; nothing was recorded",
            answer.as_str()
        ))),
        AnswerVerdict::Bad { why } => Err(refused(format!(
            "the signature of {} does not hold: {why}; nothing was recorded",
            answer.as_str()
        ))),
    }
}

/// The human answers a ticket's chain records from `tip` back to its root (`approve
/// --flaky`), newest first, each judged against the allowed signers at the pin of the ticket
/// it was given on, over its parent tip; with that ticket (what it was given for, and under
/// which policy: the ticket's config blob).
pub fn judge_ticket_answers(
    session: &Session,
    workflow: &str,
    tip: ObjectId,
) -> Result<Vec<(AnswerCheck, Ticket)>, EngineError> {
    let store = &session.store;
    let reference = workflow_ref(workflow);
    let mut found = Vec::new();
    for step in super::chain::segment(store, tip, None) {
        let (id, record) = step?;
        let Some(parent) = record.parents.first().copied() else {
            continue;
        };
        let Some(TicketAction::ApproveFlaky { tree, .. }) = record
            .event
            .as_deref()
            .and_then(|json| serde_json::from_str::<Recorded>(json).ok())
            .and_then(|r| r.action)
        else {
            continue;
        };
        let Ok(Some(before)) = store.ticket_at(parent, &reference) else {
            continue;
        };
        let approval = TreeApproval {
            tree,
            tests: Vec::new(),
            flaky: true,
        };
        let how = record.history.human.as_deref();
        let (required, verdict) = match ticket_requirement(session, &before.ticket) {
            Err(e) => (
                true,
                AnswerVerdict::Bad {
                    why: format!("the configuration pinned for it cannot be read: {e}"),
                },
            ),
            Ok(requirement) => {
                let checked = match &record.signature {
                    None => None,
                    Some(signature) => Some(check(
                        &ssh_keygen(session)?,
                        requirement.allowed_signers.as_deref(),
                        requirement.pin.as_deref(),
                        signature,
                        &payload(workflow, &parent, Answer::ApproveTree, &approval.text()),
                    )?),
                };
                (requirement.required, judge(how, checked))
            }
        };
        found.push((
            AnswerCheck {
                commit: id.to_string(),
                answer: Answer::ApproveTree.as_str().to_string(),
                required,
                verdict,
                bound: true,
                approves: Some(approval),
            },
            before.ticket,
        ));
    }
    Ok(found)
}

/// The human approvals by name of changes to `paths` for `tree` recorded in the PR's chain up
/// to `snap` and that stand, oldest first, each with the paths it names: what the final check
/// and `attest` (which runs the same check) let a changed test through on under `[gates]
/// pinned_tests = "report"` (docs/integrity.md, "Approved by name").
pub fn test_approvals(
    session: &Session,
    snap: &Snapshot,
    tree: &str,
    paths: &[String],
) -> Result<Vec<crate::workflow::notes::TestApproval>, EngineError> {
    let stop = super::chain::pr_stop(&session.store, snap.tip)?;
    let checks = judge_answers(session, session.store.workflow(), snap.tip, stop)?;
    Ok(checks
        .iter()
        .rev()
        .filter_map(|check| {
            let approval = check.approval().filter(|a| a.tree == tree)?;
            let tests: Vec<String> = approval
                .tests
                .iter()
                .filter(|t| paths.contains(t))
                .cloned()
                .collect();
            (!tests.is_empty()).then(|| crate::workflow::notes::TestApproval {
                commit: check.commit.clone(),
                tests,
                by: check.given_by(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_payload_is_one_line_of_json_in_a_fixed_order() {
        let tip = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        let bytes = payload("main", &tip, Answer::Reject, "say \"why\"\nplease");
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "{\"v\":1,\"workflow\":\"main\",\"tip\":\"0123456789abcdef0123456789abcdef01234567\",\
             \"answer\":\"reject\",\"text\":\"say \\\"why\\\"\\nplease\"}\n"
        );
    }

    #[test]
    fn the_answers_a_transition_records() {
        let merged = Event::Merged {
            branch: "b".into(),
            main: None,
        };
        type Row = (Event, Status, Option<(Answer, &'static str)>);
        let table: Vec<Row> = vec![
            (
                Event::Approved,
                Status::CodeReview,
                Some((Answer::Approve, "")),
            ),
            (
                Event::Rejected {
                    comment: "more tests".into(),
                    by: None,
                },
                Status::CodeReview,
                Some((Answer::Reject, "more tests")),
            ),
            (
                Event::Resumed {
                    guidance: Some("try x".into()),
                },
                Status::Halted,
                Some((Answer::Resume, "try x")),
            ),
            (
                Event::Resumed { guidance: None },
                Status::Halted,
                Some((Answer::Resume, "")),
            ),
            (merged.clone(), Status::Halted, Some((Answer::Resume, ""))),
            (merged, Status::MergingBranch, None),
        ];
        for (event, from, expected) in table {
            let found = recorded_answer(&event, from);
            assert_eq!(
                found.as_ref().map(|(a, t)| (*a, t.as_str())),
                expected,
                "{event:?} from {from}"
            );
        }
    }

    #[test]
    fn verdicts() {
        let good = |p: &str| {
            Some(Ok(Verified::Good {
                principal: p.into(),
            }))
        };
        let bad = |v: &AnswerVerdict| matches!(v, AnswerVerdict::Bad { .. });
        // (trailer, checked) -> signed / unsigned / bad
        assert_eq!(
            judge(Some("signed alice"), good("alice")),
            AnswerVerdict::Signed {
                principal: "alice".into()
            }
        );
        assert_eq!(
            judge(Some("terminal"), None),
            AnswerVerdict::Unsigned {
                how: "terminal".into()
            }
        );
        assert_eq!(
            judge(None, None),
            AnswerVerdict::Unsigned { how: String::new() }
        );
        assert!(bad(&judge(Some("signed alice"), None)));
        assert!(bad(&judge(Some("signed mallory"), good("alice"))));
        assert!(bad(&judge(
            None,
            Some(Ok(Verified::NotAllowed {
                message: "no".into()
            }))
        )));
        assert!(bad(&judge(
            None,
            Some(Ok(Verified::Bad {
                message: "no".into()
            }))
        )));
        assert!(bad(&judge(None, Some(Err("no file".into())))));
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod unit_tests;
