//! `refs/notes/orchestrator` (docs/refs.md, "refs/notes/orchestrator"): verification records attached to commits as git
//! notes, one JSON object per line so that notes from two clones merge by union. Reads go
//! through one notes tree per command; a write adds a line with the same discipline as a
//! transition: objects first, then a compare-and-swap of the notes ref.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::note::plumbing as notes;
use gix::refs::FullName;

use super::{Store, StoreError, WriteError, git_err};

/// Where the orchestrator's notes live.
pub const NOTES_REF: &str = "refs/notes/orchestrator";

/// Where `attest` keeps its verdicts (docs/integrity.md, "attest"): one in-toto Statement per
/// commit, written by a verifier, never by a client push.
pub const ATTEST_NOTES_REF: &str = "refs/notes/orchestrator-attest";

/// Where a CI job keeps its signed verdicts (docs/ci.md, "A signed verdict from CI"): the one
/// verdict notes ref a client may push, and only notes a verifier main lists signed (the
/// server hook, src/engine/attest/receive.rs, refuses any other).
pub const ATTEST_CI_NOTES_REF: &str = "refs/notes/orchestrator-attest-ci";

/// The notes as they are now, for looking up many commits at the cost of one.
pub struct NoteReader<'s> {
    store: &'s Store,
    tree: Option<notes::State>,
}

impl NoteReader<'_> {
    /// The note on `commit` (a full hex id), as text, or `None` when it has none.
    pub fn get(&mut self, commit: &str) -> Result<Option<String>, StoreError> {
        let commit = object_id(commit)?;
        let Some(tree) = &mut self.tree else {
            return Ok(None);
        };
        let Some(blob) = tree.get(&commit, self.store.repo()?).map_err(git_err)? else {
            return Ok(None);
        };
        let data = self.store.repo()?.find_blob(blob).map_err(git_err)?;
        Ok(Some(data.data.to_str_lossy().into_owned()))
    }
}

impl Store {
    /// The notes ref's commit and tree, or `None` while there are no notes.
    fn notes_tip(&self) -> Result<Option<(ObjectId, ObjectId)>, StoreError> {
        self.notes_tip_of(NOTES_REF)
    }

    fn notes_tip_of(&self, notes_ref: &str) -> Result<Option<(ObjectId, ObjectId)>, StoreError> {
        let commit = match self.ref_commands()? {
            Some(_) => {
                if !self.ref_exists(notes_ref)? {
                    return Ok(None);
                }
                self.direct_ref(notes_ref)?
            }
            None => {
                self.refuse_waiting_ref(notes_ref)?;
                let Some(reference) = self
                    .repo()?
                    .try_find_reference(notes_ref)
                    .map_err(git_err)?
                else {
                    return Ok(None);
                };
                reference.target().try_id().map(ToOwned::to_owned)
            }
        };
        let Some(commit) = commit else {
            return Err(StoreError::Git(format!(
                "{notes_ref} is a symbolic ref; it must point at a notes commit"
            )));
        };
        let tree = self
            .repo()?
            .find_commit(commit)
            .map_err(git_err)?
            .tree_id()
            .map_err(git_err)?
            .detach();
        Ok(Some((commit, tree)))
    }

    /// A reader of the notes as they are now.
    pub fn notes(&self) -> Result<NoteReader<'_>, StoreError> {
        let tree = match self.notes_tip()? {
            Some((_, tree)) => Some(notes::State::new(tree, self.repo()?).map_err(git_err)?),
            None => None,
        };
        Ok(NoteReader { store: self, tree })
    }

    /// Adds `line` to the note on `commit`, unless the note already has exactly that line.
    /// Returns whether anything was written. A lost race is [`WriteError::Conflict`]: read
    /// again and retry.
    pub fn add_note_line(&self, commit: &str, line: &str) -> Result<bool, WriteError> {
        self.edit_note(NOTES_REF, commit, |text| {
            let mut text = text.unwrap_or_default();
            if text.lines().any(|l| l == line) {
                return None;
            }
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(line);
            text.push('\n');
            Some(text)
        })
    }

    /// Makes `text` the attestation note on `commit` (replacing an older verdict). A lost
    /// race is [`WriteError::Conflict`].
    pub fn set_attest_note(&self, commit: &str, text: &str) -> Result<bool, WriteError> {
        self.set_attest_note_under(ATTEST_NOTES_REF, commit, text)
    }

    /// [`Store::set_attest_note`] under `notes_ref`: [`ATTEST_NOTES_REF`] or
    /// [`ATTEST_CI_NOTES_REF`].
    pub fn set_attest_note_under(
        &self,
        notes_ref: &str,
        commit: &str,
        text: &str,
    ) -> Result<bool, WriteError> {
        self.edit_note(notes_ref, commit, |old| {
            (old.as_deref() != Some(text)).then(|| text.to_string())
        })
    }

    /// The attestation notes on `commit`: this clone's, then each remote's as last fetched
    /// (`refs/notes/remotes/<remote>/orchestrator-attest`: the server writes the verdicts,
    /// and a clone gets them by `sync` or `git fetch`).
    pub fn attest_notes(&self, commit: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .attest_notes_by_ref(commit)?
            .into_iter()
            .map(|(_, text)| text)
            .collect())
    }

    /// The attestation notes on `commit`, each with the notes ref that holds it: this
    /// clone's `refs/notes/orchestrator-attest` and `…-ci` first, then each remote's as last
    /// fetched (the server's, then the CI job's).
    pub fn attest_notes_by_ref(&self, commit: &str) -> Result<Vec<(String, String)>, StoreError> {
        let commit = object_id(commit)?;
        let mut refs = vec![
            ATTEST_NOTES_REF.to_string(),
            ATTEST_CI_NOTES_REF.to_string(),
        ];
        let remotes = self.refs_under("refs/notes/remotes/")?;
        for suffix in ["/orchestrator-attest", "/orchestrator-attest-ci"] {
            refs.extend(
                remotes
                    .keys()
                    .filter(|rest| rest.ends_with(suffix))
                    .map(|rest| format!("refs/notes/remotes/{rest}")),
            );
        }
        let mut notes = Vec::new();
        for notes_ref in refs {
            let Some((_, root)) = self.notes_tip_of(&notes_ref)? else {
                continue;
            };
            let mut tree = notes::State::new(root, self.repo()?).map_err(git_err)?;
            if let Some(blob) = tree.get(&commit, self.repo()?).map_err(git_err)? {
                let data = self.repo()?.find_blob(blob).map_err(git_err)?;
                notes.push((notes_ref, data.data.to_str_lossy().into_owned()));
            }
        }
        Ok(notes)
    }

    /// Replaces the note on `commit` under `notes_ref` with what `edit` makes of it
    /// (`None`: leave it); objects first, then a compare-and-swap of the notes ref.
    fn edit_note(
        &self,
        notes_ref: &str,
        commit: &str,
        edit: impl FnOnce(Option<String>) -> Option<String>,
    ) -> Result<bool, WriteError> {
        let commit = object_id(commit)?;
        let tip = self.notes_tip_of(notes_ref)?;
        let root = tip.map_or_else(
            || ObjectId::empty_tree(self.repo.object_hash()),
            |(_, tree)| tree,
        );
        let mut tree = notes::State::new(root, self.repo()?).map_err(git_err)?;
        let old = match tree.get(&commit, self.repo()?).map_err(git_err)? {
            Some(blob) => Some(
                self.repo()?
                    .find_blob(blob)
                    .map_err(git_err)?
                    .data
                    .to_str_lossy()
                    .into_owned(),
            ),
            None => None,
        };
        let Some(text) = edit(old) else {
            return Ok(false);
        };
        let blob = self
            .repo()?
            .write_blob(text.as_bytes())
            .map_err(git_err)?
            .detach();
        let edit = tree.replace(commit, blob, self.repo()?).map_err(git_err)?;
        let signature = self.signature()?;
        let message = format!("git-orchestrate: note on {commit}");
        let notes_commit = gix::objs::Commit {
            tree: edit.tree,
            parents: tip.map(|(parent, _)| parent).into_iter().collect(),
            author: signature.clone(),
            committer: signature.clone(),
            encoding: None,
            message: message.clone().into(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo()?
            .write_object(&notes_commit)
            .map_err(git_err)?
            .detach();
        let name = FullName::try_from(notes_ref).map_err(git_err)?;
        self.update_ref(
            &name,
            tip.map(|(parent, _)| parent),
            id,
            message,
            &signature,
        )?;
        Ok(true)
    }
}

fn object_id(hex: &str) -> Result<ObjectId, StoreError> {
    ObjectId::from_hex(hex.as_bytes())
        .map_err(|e| StoreError::Git(format!("\"{hex}\" is not a full object id: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn repo() -> (tempfile::TempDir, Store, String) {
        let (dir, head) = crate::test_git::repo_with_a_commit();
        let store = Store::discover(dir.path(), "main").unwrap();
        (dir, store, head)
    }

    #[test]
    fn lines_are_added_once_and_git_reads_them() {
        let (dir, store, head) = repo();
        assert_eq!(store.notes().unwrap().get(&head).unwrap(), None);
        assert!(store.add_note_line(&head, r#"{"v":1,"kind":"a"}"#).unwrap());
        assert!(store.add_note_line(&head, r#"{"v":1,"kind":"b"}"#).unwrap());
        assert!(
            !store.add_note_line(&head, r#"{"v":1,"kind":"a"}"#).unwrap(),
            "a line already there is not repeated"
        );
        assert_eq!(
            store.notes().unwrap().get(&head).unwrap().as_deref(),
            Some("{\"v\":1,\"kind\":\"a\"}\n{\"v\":1,\"kind\":\"b\"}\n")
        );
        let shown = std::process::Command::new("git")
            .args(["notes", "--ref=orchestrator", "show", "HEAD"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&shown.stdout),
            "{\"v\":1,\"kind\":\"a\"}\n{\"v\":1,\"kind\":\"b\"}\n",
            "{}",
            String::from_utf8_lossy(&shown.stderr)
        );
    }
}
