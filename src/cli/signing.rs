//! The options every human answer takes to carry an SSH signature (docs/integrity.md,
//! "Signed human answers"): `--sign-key`, `--signature` and `--print-payload`.

use std::path::PathBuf;

use clap::Args;

use super::input::read_input;
use super::{Exit, Failure, Ui};
use crate::engine::{self, Answer, Session, Signing};

/// How a human answer is signed.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// Sign the answer with this SSH key now (`ssh-keygen -Y sign -n git-orchestrate`); a
    /// passphrase or a security key's touch is asked for at the terminal.
    #[arg(long, value_name = "PATH", conflicts_with = "signature")]
    pub sign_key: Option<PathBuf>,
    /// An armored SSH signature of this answer's payload, made elsewhere (`-`: stdin).
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
    /// Print the exact bytes to sign for this answer on the workflow as it is now, and exit
    /// without recording anything.
    #[arg(long, conflicts_with_all = ["sign_key", "signature"])]
    pub print_payload: bool,
}

impl SignArgs {
    /// The signing the options ask for; a `--signature` file is read here, bounded.
    pub fn signing(&self) -> Result<Signing, Failure> {
        if let Some(key) = &self.sign_key {
            // Input first: a FIFO or a device as the key is refused before the workflow is
            // read (ssh-keygen would wait on it, or read it forever).
            crate::input::check_key_file(key).map_err(|e| {
                super::error::CommandError::invalid_input(
                    format!("the key to sign with {}: {}", key.display(), e.problem()),
                    "Name the private SSH key file (or its .pub beside a key in ssh-agent).",
                )
            })?;
            return Ok(Signing::Key(key.clone()));
        }
        let Some(path) = &self.signature else {
            return Ok(Signing::Unsigned);
        };
        let hint = "Pass the file `ssh-keygen -Y sign -n git-orchestrate` wrote (payload.sig), or `-` \
                    to read it from stdin.";
        let bytes = read_input(path, "the signature", hint)?;
        let text = String::from_utf8(bytes).map_err(|_| {
            super::error::CommandError::invalid_input(
                format!("the signature {} is not text", path.display()),
                hint,
            )
        })?;
        Ok(Signing::Signature(text))
    }
}

/// `--print-payload`: the bytes to sign, exactly, on stdout; nothing is recorded.
pub fn print_payload(
    session: &Session,
    ui: &mut Ui,
    answer: Answer,
    text: Option<&str>,
) -> Result<Exit, Failure> {
    let bytes = engine::answer_payload(session, answer, text)?;
    ui.text(&String::from_utf8_lossy(&bytes))?;
    Ok(Exit::Success)
}
