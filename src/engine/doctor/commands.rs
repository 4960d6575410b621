//! What a configured command needs from the repository and PATH: the program it runs and
//! the script an interpreter reads, found plainly in its words, and whether they are there.

use std::path::Path;

use super::check::{Check, Level, check};
use crate::workflow::command_files::{Needed, files_named};

/// The `[review] command`'s program and script are there: a missing one fails every review
/// round, which the agent cannot fix. Only what the command names plainly is checked.
pub(super) fn review_command(command: Option<&str>, root: &Path) -> Check {
    let Some(command) = command else {
        return check(
            "review",
            Level::Ok,
            "no [review] command: no automated review",
            None,
        );
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let problems: Vec<String> = files_named(command)
        .iter()
        .filter_map(|needed| missing(needed, root, &path))
        .collect();
    if problems.is_empty() {
        return check("review", Level::Ok, format!("`{command}`"), None);
    }
    check(
        "review",
        Level::Error,
        format!(
            "[review] command `{command}`: {}, so every review would fail",
            problems.join("; ")
        ),
        Some("create it, or correct `command` under [review] in .orchestrate.toml".into()),
    )
}

/// Why `needed` is not there, or `None` when it is.
fn missing(needed: &Needed, root: &Path, path: &std::ffi::OsStr) -> Option<String> {
    let on_path = |name: &str| {
        std::env::split_paths(path)
            .any(|dir| !dir.as_os_str().is_empty() && is_executable(&dir.join(name)))
    };
    match needed {
        Needed::Program(name) if !name.contains('/') => {
            (!on_path(name)).then(|| format!("`{name}` is not on PATH"))
        }
        Needed::Program(name) => {
            let file = root.join(name);
            if !file.is_file() {
                Some(format!("{} does not exist", file.display()))
            } else if !is_executable(&file) {
                Some(format!(
                    "{} is not executable (chmod +x it, or run it with its interpreter)",
                    file.display()
                ))
            } else {
                None
            }
        }
        Needed::Script(name) => {
            let file = root.join(name);
            let found = file.is_file()
                || (!name.contains('/')
                    && std::env::split_paths(path).any(|dir| dir.join(name).is_file()));
            (!found).then(|| format!("{} does not exist", file.display()))
        }
    }
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn program(name: &str) -> Needed {
        Needed::Program(name.to_string())
    }

    fn script(name: &str) -> Needed {
        Needed::Script(name.to_string())
    }

    #[test]
    fn a_missing_or_unrunnable_review_program_is_an_error_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        std::fs::create_dir(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/review.sh"), "#!/bin/sh\n").unwrap();
        let bin = tempfile::tempdir().unwrap();
        let reviewer = bin.path().join("reviewer");
        std::fs::write(&reviewer, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&reviewer, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = bin.path().as_os_str();

        assert_eq!(missing(&script("tools/review.sh"), root, path), None);
        assert_eq!(missing(&program("reviewer"), root, path), None);
        assert_eq!(
            missing(&program("no-such-reviewer"), root, path),
            Some("`no-such-reviewer` is not on PATH".to_string())
        );
        assert_eq!(
            missing(&script("tools/gone.sh"), root, path),
            Some(format!(
                "{} does not exist",
                root.join("tools/gone.sh").display()
            ))
        );
        let not_executable = missing(&program("./tools/review.sh"), root, path).unwrap();
        assert!(
            not_executable.contains("is not executable"),
            "{not_executable}"
        );
    }
}
