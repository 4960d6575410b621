//! `repin`: a human moves a PR's gates to main's as they are now, and accounts for main as it
//! is now: what moved it outside the workflow is the human's from then on (docs/integrity.md).

use serde::Serialize;

use super::answers::{self, Answer, Signing};
use super::{EngineError, Session};
use crate::config::{Config, ConfigError, Origin};
use crate::workflow::{Event, Human, Rejection, RejectionKind, Status};

/// What `repin` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepinReport {
    pub state: Status,
    /// The main commit the gates were pinned at before; `None` for a PR begun before pins.
    pub from: Option<String>,
    pub to: String,
    /// False when the PR was pinned at this commit already: nothing was written.
    pub changed: bool,
    /// main's `.orchestrate.toml` differs from the one pinned before.
    pub config_changed: bool,
    /// A PR was active, and its gates were pinned; without one only main was accounted for.
    pub pr: bool,
    /// Who signed the answer, as the pinned allowed-signers file names them.
    pub signed_by: Option<String>,
}

/// A repin that changes something is a human's answer, signed as `signing` says
/// (docs/integrity.md, "Signed human answers").
pub fn repin(
    session: &Session,
    human: Human,
    signing: &Signing,
) -> Result<RepinReport, EngineError> {
    session.with_retries(|| {
        let snap = session.read_or_refuse("repin", |_| None)?;
        let state = &snap.state;
        let main = session.main_branch(Some(state))?;
        let Some(pin) = session.pin_now(&main)? else {
            return Err(EngineError::Rejected(Rejection {
                kind: RejectionKind::WrongState,
                state: state.status(),
                message: format!("the main branch {main} does not exist"),
                hint: "Create it, or fix main_branch in .orchestrate.toml.".into(),
            }));
        };
        // Broken gates are never pinned: every command after would refuse.
        if let Some(blob) = &pin.config {
            let origin = Origin::MainBranch(main.clone());
            let bytes = session
                .store
                .blob_within(blob, crate::input::CAP)?
                .map_err(|size| ConfigError {
                    origin: origin.to_string(),
                    message: format!(
                        "it is {size} bytes, over the limit of {} MiB, and is not read",
                        crate::input::CAP >> 20
                    ),
                })?;
            let text = super::session::config_text(bytes, &origin)?;
            Config::parse(&text, &origin)?;
        }
        let before = state.pr().and_then(|pr| pr.pin.as_ref()).cloned();
        let has_pr = state.pr().is_some();
        let config_changed = has_pr && before.as_ref().is_none_or(|b| b.config != pin.config);
        let report = |state, changed, signed_by| RepinReport {
            state,
            from: match &before {
                Some(b) => Some(b.commit.clone()),
                None => snap.state.main_tip.clone(),
            },
            to: pin.commit.clone(),
            changed,
            config_changed,
            pr: has_pr,
            signed_by,
        };
        let accounted = state.main_tip.as_deref() == Some(pin.commit.as_str());
        if accounted && (!has_pr || before.as_ref() == Some(&pin)) {
            return Ok(report(state.status(), false, None));
        }
        let signed = answers::authorise(session, &snap, Answer::Repin, &pin.commit, signing)?;
        let t = session.apply_answer(
            &snap,
            Event::Repinned { pin: pin.clone() },
            human,
            signed.as_ref(),
        )?;
        Ok(report(t.to(), true, signed.map(|s| s.principal)))
    })
}
