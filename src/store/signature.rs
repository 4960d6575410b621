//! Who signs the store's commits, and when: the committer identity as git resolves it.

use gix::bstr::BString;

use super::{Store, StoreError};
use crate::{FALLBACK_EMAIL, FALLBACK_NAME};

impl Store {
    /// The committer identity as git resolves it: `GIT_COMMITTER_*`, then `committer.*`, then
    /// `user.*` (and `EMAIL` for the address). `None` when either part is missing.
    pub fn identity(&self) -> Option<(BString, BString)> {
        let config = |key: &str| self.repo.config_string(key);
        let env = |key: &str| std::env::var_os(key).map(|v| BString::from(v.as_encoded_bytes()));
        let name = env("GIT_COMMITTER_NAME")
            .or_else(|| config("committer.name"))
            .or_else(|| config("user.name"))?;
        let email = env("GIT_COMMITTER_EMAIL")
            .or_else(|| config("committer.email"))
            .or_else(|| config("user.email"))
            .or_else(|| env("EMAIL"))?;
        Some((name, email))
    }

    /// The user's identity, or the fixed fallback. The time is `GIT_COMMITTER_DATE` or now, in
    /// UTC: gix's local-time lookup reads the whole zoneinfo database, a third of a write's cost.
    pub(super) fn signature(&self) -> Result<gix::actor::Signature, StoreError> {
        let (name, email) = self
            .identity()
            .unwrap_or_else(|| (FALLBACK_NAME.into(), FALLBACK_EMAIL.into()));
        let time = match std::env::var("GIT_COMMITTER_DATE") {
            Ok(date) => gix::date::parse(&date, None).map_err(|e| {
                StoreError::Git(format!(
                    "GIT_COMMITTER_DATE=\"{date}\" is not a date git understands: {e}"
                ))
            })?,
            Err(_) => gix::date::Time::now_utc(),
        };
        Ok(gix::actor::Signature { name, email, time })
    }
}
