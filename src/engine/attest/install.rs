//! `attest --install-server-hook`: the pre-receive and post-receive hooks of a bare
//! repository, which run this program's `attest --pre-receive` / `--post-receive`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine::{EngineError, io_error};

/// The first line of the hooks `install_server_hook` writes: how a hook of ours is known.
const HOOK_MARK: &str = "# git-orchestrate server hook";

/// What `--install-server-hook` wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Installed {
    pub hooks: Vec<PathBuf>,
    /// Hooks that were ours already and are rewritten.
    pub replaced: Vec<PathBuf>,
}

/// Installs the pre-receive and post-receive hooks in the bare repository `dir`, each
/// running `program` (absolute). A hook there that is not ours is never overwritten.
pub fn install_server_hook(dir: &Path, program: &Path) -> Result<Installed, EngineError> {
    let git = crate::exec::Git::new(dir);
    let bare = git.is_bare().map_err(|e| EngineError::BadInput {
        message: format!(
            "{} is not a git repository: {}",
            dir.display(),
            e.stderr.trim()
        ),
        hint: "Name the server's bare repository, like /srv/git/project.git.".into(),
    })?;
    if !bare {
        return Err(EngineError::BadInput {
            message: format!("{} is not a bare repository", dir.display()),
            hint: "The server hook guards the repository clients push to: a bare one (git init --bare).".into(),
        });
    }
    let common = git.common_dir()?;
    let hooks = common.canonicalize().unwrap_or(common).join("hooks");
    let program = program.to_string_lossy();
    if program.contains('\'') || program.contains('\n') {
        return Err(EngineError::BadInput {
            message: format!("the program's path {program:?} cannot be quoted for a hook"),
            hint: "Install git-orchestrate under a path without quotes or line breaks.".into(),
        });
    }
    let mut installed = Installed {
        hooks: Vec::new(),
        replaced: Vec::new(),
    };
    let files: Vec<(PathBuf, String)> = ["pre-receive", "post-receive"]
        .iter()
        .map(|name| {
            (
                hooks.join(name),
                format!(
                    "#!/bin/sh\n{HOOK_MARK} judges every push: docs/integrity.md, \"attest and the server hook\"\nexec '{program}' attest --{name}\n"
                ),
            )
        })
        .collect();
    // Decide for both before writing either.
    for (path, _) in &files {
        match std::fs::read_to_string(path) {
            Ok(text)
                if text
                    .lines()
                    .nth(1)
                    .is_some_and(|l| l.starts_with(HOOK_MARK)) =>
            {
                installed.replaced.push(path.clone());
            }
            Ok(_) => {
                return Err(EngineError::BadInput {
                    message: format!("{} exists and is not git-orchestrate's", path.display()),
                    hint: "Move it aside (or call it from a hook of your own), then install again."
                        .into(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(format!("read {}", path.display()))(e)),
        }
    }
    std::fs::create_dir_all(&hooks).map_err(io_error(format!("create {}", hooks.display())))?;
    for (path, text) in files {
        write_executable(&path, &text)?;
        installed.hooks.push(path);
    }
    Ok(installed)
}

fn write_executable(path: &Path, text: &str) -> Result<(), EngineError> {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = path.with_extension("git-orchestrate-tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(io_error(format!("write {}", path.display())))
}
