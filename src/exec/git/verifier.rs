//! What `attest` asks git of the repository it judges (its object directories, push
//! quarantine included, and its workflow refs) and of the verifier's own fresh repository
//! (made empty, then given refs).

use std::path::{Path, PathBuf};

use super::{Git, GitError};

impl Git {
    /// The directories this repository's objects are read from, absolute: in a pre-receive
    /// hook the push's quarantine (which git names in the environment) comes first, then the
    /// repository's own objects and its alternates.
    pub fn object_dirs(&self) -> Result<Vec<PathBuf>, GitError> {
        let mut dirs = Vec::new();
        let absolute = |p: &str| -> PathBuf {
            let path = PathBuf::from(p);
            if path.is_absolute() {
                path
            } else {
                self.workdir.join(path)
            }
        };
        if let Some(dir) = std::env::var_os("GIT_OBJECT_DIRECTORY") {
            dirs.push(absolute(&dir.to_string_lossy()));
        }
        if let Some(list) = std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES") {
            for dir in list.to_string_lossy().split(':').filter(|d| !d.is_empty()) {
                dirs.push(absolute(dir));
            }
        }
        let own = self.common_dir()?.join("objects");
        if let Ok(text) =
            crate::store::regular::read_to_string(&own.join("info").join("alternates"))
        {
            for line in text
                .lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
            {
                let alt = PathBuf::from(line);
                dirs.push(if alt.is_absolute() {
                    alt
                } else {
                    own.join(alt)
                });
            }
        }
        dirs.push(own);
        dirs.dedup();
        Ok(dirs)
    }

    /// Whether this is a bare repository.
    pub fn is_bare(&self) -> Result<bool, GitError> {
        Ok(self.run(["rev-parse", "--is-bare-repository"])?.trim() == "true")
    }

    /// The notes under the notes ref `notes_ref` (a full name), as (note blob, annotated
    /// object) pairs; none when it does not exist.
    pub fn notes_list(&self, notes_ref: &str) -> Result<Vec<(String, String)>, GitError> {
        Ok(self
            .run(["notes", "--ref", notes_ref, "list"])?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(blob, object)| (blob.to_string(), object.to_string()))
            .collect())
    }

    /// Every entry of a notes commit's tree, every level down, as (mode, kind, object, path)
    /// quadruples: what a guard of notes holds to (a note is a regular file named by the
    /// object it is on).
    pub fn notes_entries(
        &self,
        commit: &str,
    ) -> Result<Vec<(String, String, String, String)>, GitError> {
        let tree = format!("{commit}^{{tree}}");
        Ok(self
            .run(["ls-tree", "-r", "--full-tree", tree.as_str()])?
            .lines()
            .filter_map(|l| {
                let (meta, path) = l.split_once('\t')?;
                let mut fields = meta.split(' ');
                let (mode, kind, object) = (fields.next()?, fields.next()?, fields.next()?);
                Some((
                    mode.to_string(),
                    kind.to_string(),
                    object.to_string(),
                    path.to_string(),
                ))
            })
            .collect())
    }

    /// The entries of a notes commit's tree, as (path, kind, object) triples, every level
    /// listed (`ls-tree -r`): a note's path is its object's id, fanned out or not.
    pub fn notes_tree(&self, commit: &str) -> Result<Vec<(String, String, String)>, GitError> {
        Ok(self
            .notes_entries(commit)?
            .into_iter()
            .map(|(_, kind, object, path)| (path, kind, object))
            .collect())
    }

    /// The tree of each of `commits` this repository has, as (commit, tree) pairs: one
    /// `cat-file --batch-check` for them all (a missing one, or one that is no commit, is left
    /// out).
    pub fn trees_of(&self, commits: &[&str]) -> Result<Vec<(String, String)>, GitError> {
        if commits.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = commits
            .iter()
            .map(|id| format!("{id}^{{tree}} {id}\n"))
            .collect();
        let (cmd, shown) = self.command([
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(rest)",
        ]);
        let out = super::run_with_input(cmd, shown, input.as_bytes())?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| {
                let mut fields = line.split(' ');
                let (tree, kind, commit) = (fields.next()?, fields.next()?, fields.next()?);
                (kind == "tree").then(|| (commit.to_string(), tree.to_string()))
            })
            .collect())
    }

    /// The blob `id` when it is one of at most `cap` bytes; `None` for anything else.
    pub fn blob_within(&self, id: &str, cap: u64) -> Result<Option<Vec<u8>>, GitError> {
        self.object_within(id, "blob", cap)
    }

    /// Every ref under `prefixes` with the commit it points at.
    pub fn refs_under(&self, prefixes: &[&str]) -> Result<Vec<(String, String)>, GitError> {
        let mut args = vec!["for-each-ref", "--format=%(objectname) %(refname)"];
        args.extend(prefixes);
        Ok(self
            .run(args)?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(id, name)| (name.to_string(), id.to_string()))
            .collect())
    }

    /// The commits of `range` along first parents, newest first.
    pub fn first_parents(&self, range: &str) -> Result<Vec<String>, GitError> {
        Ok(self
            .run(["rev-list", "--first-parent", range, "--"])?
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// What a ref of this repository points at, if it exists.
    pub fn ref_target(&self, name: &str) -> Result<Option<String>, GitError> {
        match self.run(["rev-parse", "--verify", "--quiet", name]) {
            Ok(out) => Ok(Some(out.trim().to_string())),
            Err(e) if e.stderr.trim().is_empty() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The branch `HEAD` names (a bare repository's default branch), if it names one.
    pub fn head_branch_name(&self) -> Result<Option<String>, GitError> {
        match self.run(["symbolic-ref", "--quiet", "--short", "HEAD"]) {
            Ok(out) => Ok(Some(out.trim().to_string()).filter(|b| !b.is_empty())),
            Err(e) if e.stderr.trim().is_empty() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The ref a symbolic ref points at, if it is one.
    pub fn symbolic_target(&self, name: &str) -> Result<Option<String>, GitError> {
        match self.run(["symbolic-ref", "--quiet", name]) {
            Ok(out) => Ok(Some(out.trim().to_string()).filter(|t| !t.is_empty())),
            Err(e) if e.stderr.trim().is_empty() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A new, empty repository in `dir` whose objects are read from `objects` (as
    /// alternates): nothing of the judged repository's configuration, hooks or refs comes
    /// with them. Without templates, so no hook is installed by `git init` either.
    pub fn init_reading(&self, dir: &Path, objects: &[PathBuf]) -> Result<(), GitError> {
        let dir_text = dir.to_string_lossy().into_owned();
        self.run(["init", "--quiet", "--template=", &dir_text])?;
        let info = dir.join(".git").join("objects").join("info");
        let text: String = objects
            .iter()
            .map(|p| format!("{}\n", p.display()))
            .collect();
        std::fs::create_dir_all(&info)
            .and_then(|()| std::fs::write(info.join("alternates"), text))
            .map_err(|e| GitError {
                command: "write objects/info/alternates".into(),
                status: None,
                stderr: e.to_string(),
            })
    }

    /// Points `name` at `id` (created or moved), without a reflog message of its own.
    pub fn set_ref(&self, name: &str, id: &str) -> Result<(), GitError> {
        self.run(["update-ref", name, id])?;
        Ok(())
    }
}
