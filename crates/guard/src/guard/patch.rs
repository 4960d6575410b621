//! The files a patch writes: Codex's `apply_patch` format and unified diffs (`git apply`,
//! `patch`), and reading a patch file without blocking on something that is not one.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::policy::{Reason, Rule, Unknown};
use super::walk::Walk;
use super::words::{Arg, unknowable};

/// The paths an `apply_patch` patch adds, updates, deletes or moves to.
pub fn apply_patch_targets(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|line| {
            [
                "*** Add File: ",
                "*** Update File: ",
                "*** Delete File: ",
                "*** Move to: ",
            ]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
        })
        .map(|p| p.trim().to_string())
        .collect()
}

/// The paths a unified diff writes, as its headers name them (`a/`/`b/` prefixes kept;
/// the caller tries them with and without).
pub fn unified_targets(diff: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in diff.lines() {
        let path = if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/X b/Y`: both, split at the ` b/` that starts the second.
            if let Some((a, b)) = rest.split_once(" b/") {
                out.push(a.to_string());
                Some(format!("b/{b}"))
            } else {
                Some(rest.to_string())
            }
        } else {
            line.strip_prefix("+++ ")
                .or_else(|| line.strip_prefix("--- "))
                .or_else(|| line.strip_prefix("rename to "))
                .or_else(|| line.strip_prefix("copy to "))
                .or_else(|| line.strip_prefix("rename from "))
                .or_else(|| line.strip_prefix("*** "))
                // A timestamp may follow a tab.
                .map(|rest| rest.split('\t').next().unwrap_or(rest).trim().to_string())
        };
        if let Some(path) = path.filter(|p| p != "/dev/null" && !p.is_empty()) {
            out.push(path.trim_matches('"').to_string());
        }
    }
    out
}

/// A regular file's text, at most `cap` bytes; never blocks on a FIFO or device.
pub fn read_capped(path: &Path, cap: u64) -> std::io::Result<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other("too large"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl Walk<'_> {
    /// A patch's files (or its stdin): the paths it writes.
    pub(super) fn patch_files(
        &mut self,
        files: &[Arg],
        stdin: Option<&str>,
        what: &str,
        dir: Option<&str>,
    ) -> Result<(), Reason> {
        let mut texts = Vec::new();
        if files.is_empty() {
            match stdin {
                Some(text) => texts.push(text.to_string()),
                None => {
                    return Err(Reason::new(
                        Rule::Unknowable(Unknown::Target),
                        format!("{what} (its stdin)"),
                    ));
                }
            }
        }
        for file in files {
            let Some(path) = file.value() else {
                return Err(unknowable(file, Unknown::Target));
            };
            let mut read = None;
            for cwd in &self.cwds.known {
                if let Ok(text) = read_capped(&cwd.join(path), 8 << 20) {
                    read = Some(text);
                    break;
                }
            }
            match read {
                Some(text) => texts.push(text),
                None => {
                    return Err(Reason::new(
                        Rule::Unknowable(Unknown::Target),
                        format!("{what} {path} (not readable before it runs)"),
                    ));
                }
            }
        }
        for text in texts {
            for path in unified_targets(&text) {
                // Every `-pN` strips N leading parts: each suffix of the path may be the one written.
                let parts: Vec<&str> = path.split('/').collect();
                let suffixes: Vec<String> =
                    (0..parts.len()).map(|n| parts[n..].join("/")).collect();
                for candidate in suffixes {
                    if !candidate.is_empty() {
                        // `patch -d DIR` writes under DIR.
                        let candidate = match dir {
                            Some(d) => format!("{d}/{candidate}"),
                            None => candidate,
                        };
                        let cwds = self.cwds.clone();
                        self.paths.target(&Arg::known(candidate), &cwds, false)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unified_diffs_name_what_they_write() {
        let diff = "diff --git a/src/x.rs b/run_tests.sh\nsimilarity index 90%\nrename from src/x.rs\nrename to run_tests.sh\n--- a/src/x.rs\t2020-01-01\n+++ b/run_tests.sh\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(
            unified_targets(diff),
            [
                "a/src/x.rs",
                "b/run_tests.sh",
                "src/x.rs",
                "run_tests.sh",
                "a/src/x.rs",
                "b/run_tests.sh"
            ]
        );
    }

    #[test]
    fn apply_patches_name_what_they_write() {
        let patch = "*** Begin Patch\n*** Update File: a.rs\n*** Move to: .git/hooks/x\n*** Add File: b.rs\n*** End Patch";
        assert_eq!(apply_patch_targets(patch), ["a.rs", ".git/hooks/x", "b.rs"]);
    }
}
