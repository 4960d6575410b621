//! git settings as git resolves them from its files, with where each was set, and the
//! replace refs: what decides whether git stores and shows exactly what a gate saw
//! (docs/integrity.md, "Hermetic verification").

use gix::bstr::ByteSlice;

use super::{Store, StoreError};

/// One value of a setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// `section.subsection.key`, section and key in lowercase as git compares them.
    pub key: String,
    pub value: String,
    /// The file it comes from (or `environment`).
    pub origin: String,
    /// Set in a linked worktree's own `config.worktree`.
    pub worktree_only: bool,
}

impl Store {
    /// Every value set in a section named `section` (any subsection), in the files git reads
    /// for this repository.
    pub fn settings(&self, section: &str) -> Vec<Setting> {
        self.repo.with_config(|file| settings_in(file, section))
    }
}

/// [`Store::settings`] of `file`.
fn settings_in(file: &gix::config::File, section: &str) -> Vec<Setting> {
    {
        let Some(sections) = file.sections_by_name(section) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for found in sections {
            let header = found.header();
            let prefix = match header.subsection_name() {
                Some(sub) => format!("{}.{}", section.to_lowercase(), sub.to_str_lossy()),
                None => section.to_lowercase(),
            };
            let meta = found.meta();
            let origin = meta.path.as_ref().map_or_else(
                || format!("{:?} configuration", meta.source),
                |p| p.display().to_string(),
            );
            let mut names: Vec<String> = found.value_names().collect();
            names.sort();
            names.dedup();
            for name in names {
                for value in found.values(&name) {
                    out.push(Setting {
                        key: format!("{prefix}.{}", name.to_lowercase()),
                        value: value.to_str_lossy().into_owned(),
                        origin: origin.clone(),
                        worktree_only: meta.source == gix::config::Source::Worktree,
                    });
                }
            }
        }
        out
    }
}

impl Store {
    /// The objects `refs/replace/` replaces, by id.
    pub fn replace_refs(&self) -> Result<Vec<String>, StoreError> {
        Ok(self.refs_under(REPLACE)?.into_keys().collect())
    }
}

const REPLACE: &str = "refs/replace/";
