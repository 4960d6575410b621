//! Why a command is not accepted now: [`Rejection`], which every refusal of the core and the
//! engine carries, naming the state and the next legal action.

use super::status::Status;

/// Why a command is not accepted now. Carries the state so every message can name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub kind: RejectionKind,
    pub state: Status,
    pub message: String,
    /// The next legal action.
    pub hint: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectionKind {
    /// Wrong state for this command (exit 4).
    WrongState,
    /// The request contradicts the plan, e.g. the wrong expectation for the step (exit 2).
    InvalidInput,
}

impl Rejection {
    pub(crate) fn wrong_state(
        state: Status,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Rejection {
            kind: RejectionKind::WrongState,
            state,
            message: message.into(),
            hint: hint.into(),
        }
    }
}
