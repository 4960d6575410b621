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
        let Some(blob) = tree.get(&commit, &self.store.repo).map_err(git_err)? else {
            return Ok(None);
        };
        let data = self.store.repo.find_blob(blob).map_err(git_err)?;
        Ok(Some(data.data.to_str_lossy().into_owned()))
    }
}

impl Store {
    /// The notes ref's commit and tree, or `None` while there are no notes.
    fn notes_tip(&self) -> Result<Option<(ObjectId, ObjectId)>, StoreError> {
        let Some(reference) = self.repo.try_find_reference(NOTES_REF).map_err(git_err)? else {
            return Ok(None);
        };
        let Some(commit) = reference.target().try_id().map(ToOwned::to_owned) else {
            return Err(StoreError::Git(format!(
                "{NOTES_REF} is a symbolic ref; it must point at a notes commit"
            )));
        };
        let tree = self
            .repo
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
            Some((_, tree)) => Some(notes::State::new(tree, &self.repo).map_err(git_err)?),
            None => None,
        };
        Ok(NoteReader { store: self, tree })
    }

    /// Adds `line` to the note on `commit`, unless the note already has exactly that line.
    /// Returns whether anything was written. A lost race is [`WriteError::Conflict`]: read
    /// again and retry.
    pub fn add_note_line(&self, commit: &str, line: &str) -> Result<bool, WriteError> {
        let commit = object_id(commit)?;
        let tip = self.notes_tip()?;
        let root = tip.map_or_else(
            || ObjectId::empty_tree(self.repo.object_hash()),
            |(_, tree)| tree,
        );
        let mut tree = notes::State::new(root, &self.repo).map_err(git_err)?;
        let mut text = match tree.get(&commit, &self.repo).map_err(git_err)? {
            Some(blob) => self
                .repo
                .find_blob(blob)
                .map_err(git_err)?
                .data
                .to_str_lossy()
                .into_owned(),
            None => String::new(),
        };
        if text.lines().any(|l| l == line) {
            return Ok(false);
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(line);
        text.push('\n');
        let blob = self
            .repo
            .write_blob(text.as_bytes())
            .map_err(git_err)?
            .detach();
        let edit = tree.replace(commit, blob, &self.repo).map_err(git_err)?;
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
            .repo
            .write_object(&notes_commit)
            .map_err(git_err)?
            .detach();
        let name = FullName::try_from(NOTES_REF).map_err(git_err)?;
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
