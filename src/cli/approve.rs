//! `git orchestrate approve`: a human's approval at the review's human gate.

use clap::Args;
use serde_json::json;

use super::error::require_human;
use super::{Exit, Failure, Ui};
use crate::engine::{self, Session};

/// For humans: approve the PR at the review's human gate (`[review] human = true`).
#[derive(Debug, Args)]
pub struct ApproveArgs {}

pub fn run(session: &Session, _args: &ApproveArgs, ui: &mut Ui) -> Result<Exit, Failure> {
    require_human("approve")?;
    let state = engine::approve(session)?;
    if ui.json {
        ui.json_object(json!({ "state": state.status() }))?;
    } else {
        ui.text(&format!(
            "approved: CODE_REVIEW -> {}; the agent's next `git orchestrate get-task` finalizes the PR\n",
            state.status()
        ))?;
    }
    Ok(Exit::Success)
}
