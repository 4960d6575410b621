//! A cheap fingerprint of the refs the board shows: what `board --serve` hands a page that
//! polls, so the page fetches the whole board again only when a ref it is made of moved.

use gix::refs::TargetRef;
use sha2::{Digest, Sha256};

use super::error::git_err;
use super::names::BRANCHES;
use super::refs::Listed;
use super::{Store, StoreError};

/// Every ref of ours (workflows, claims, the remotes' copies as last fetched, notes) and the
/// branches (main, and the PR branches whose distance from main the board shows).
const FINGERPRINTED: [&str; 2] = ["refs/orchestrator/", BRANCHES];

impl Store {
    /// A hash of the name and target of every ref under refs/orchestrator/ and refs/heads/,
    /// read in-process: equal while none of them moved, appeared or went. Symbolic refs
    /// count by the name they point at.
    pub fn board_fingerprint(&self) -> Result<String, StoreError> {
        let mut hash = Sha256::new();
        if let Some(git) = self.ref_commands()? {
            for prefix in FINGERPRINTED {
                for (name, target) in self.listed_refs(git, prefix)? {
                    hash.update(match target {
                        Listed::Object(id) => format!("{name} {id}\n"),
                        Listed::Symbolic(to) => format!("{name} ref: {to}\n"),
                    });
                }
            }
            return Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect());
        }
        let platform = self.repo()?.references().map_err(git_err)?;
        for prefix in FINGERPRINTED {
            for reference in platform.prefixed(prefix).map_err(git_err)? {
                // A loose ref deleted between the listing and its read changes the hash as
                // its absence will: hash the failure's text, and the next poll settles it.
                let line = match reference {
                    Ok(r) => match r.target() {
                        TargetRef::Object(id) => format!("{} {id}\n", r.name().as_bstr()),
                        TargetRef::Symbolic(to) => {
                            format!("{} ref: {}\n", r.name().as_bstr(), to.as_bstr())
                        }
                    },
                    Err(e) => format!("? {e}\n"),
                };
                hash.update(line.as_bytes());
            }
        }
        Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }
}
