//! How one test ended, and the file it is in, as every report reader says it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The file (or files: two cargo test binaries with a test of one name) each test is in, by
/// test id, as its runner names it.
pub type Files = BTreeMap<String, BTreeSet<String>>;

/// How one test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Skipped,
    /// Expected to fail (pytest's xfail, TAP's `# TODO`): it proves nothing either way.
    Xfail,
    Failed,
    /// It could not run (a collection or set-up error).
    Error,
}

impl Outcome {
    pub(super) fn failed(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::Error)
    }

    /// Of two reports of one id (two test binaries with a test of one name), the one that
    /// says least for it.
    pub(super) fn worst(self, other: Outcome) -> Outcome {
        let rank = |o: Outcome| match o {
            Outcome::Passed => 0,
            Outcome::Skipped | Outcome::Xfail => 1,
            Outcome::Failed | Outcome::Error => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Passed => "passed",
            Outcome::Skipped => "skipped",
            Outcome::Xfail => "xfailed",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
        })
    }
}
