//! What a command reads from a file or stdin (`--plan FILE`, `--report -`): bounded, with
//! errors that name the input and say how to pass it.

use super::Failure;
use super::error::CommandError;

/// The most input a command reads from a file or stdin: far above any real plan, analysis or
/// report, and low enough that `--plan /dev/zero` fails at once instead of filling memory.
pub const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// The bytes of an input given as `FILE` or `-` (stdin); `what` names it in the error, and
/// `hint` says how to pass it.
pub fn read_input(path: &std::path::Path, what: &str, hint: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read as _;
    let from_stdin = path.as_os_str() == "-";
    let source = || {
        if from_stdin {
            "from stdin".to_string()
        } else {
            path.display().to_string()
        }
    };
    let mut bytes = Vec::new();
    let result = if from_stdin {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
    };
    if let Err(e) = result {
        return Err(Failure::from(CommandError::invalid_input(
            format!("cannot read {what} {}: {e}", source()),
            hint,
        )));
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::from(CommandError::invalid_input(
            format!(
                "{what} {} is larger than the limit of {} MiB",
                source(),
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
            hint,
        )));
    }
    Ok(bytes)
}

/// The directory the command runs in: the repository it acts on is found from there.
pub fn current_dir() -> Result<std::path::PathBuf, Failure> {
    std::env::current_dir().map_err(|e| {
        Failure::from(CommandError::new(
            super::error::ErrorKind::Io,
            format!("cannot read the current directory: {e}"),
        ))
    })
}
