//! The verifier's own repository (docs/integrity.md, "attest"): a fresh temporary repository
//! that reads the judged repository's objects and nothing else of it (no config, hooks,
//! refs, replace objects, attributes or filters), in which every check and re-run happens.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::config::{self, Config, Origin};
use crate::engine::{EngineError, Session, io_error};
use crate::exec::Git;
use crate::store::workflow_ref;

/// A workflow chain the judged repository holds: its own, or a remote's as last fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub workflow: String,
    /// The ref it was read from in the judged repository (or the pushed update).
    pub reference: String,
    pub tip: ObjectId,
}

/// The judged repository, as the verifier reads it.
pub struct Judged {
    pub git: Git,
    pub objects: Vec<PathBuf>,
}

impl Judged {
    /// The repository `dir` is in (bare or not; in a pre-receive hook, with the push's
    /// quarantine).
    pub fn open(dir: &Path) -> Result<Judged, EngineError> {
        let git = Git::new(dir);
        let objects = git.object_dirs()?;
        Ok(Judged { git, objects })
    }

    /// Every workflow chain the repository holds: `refs/orchestrator/workflows/*` and the
    /// remotes' copies a fetch brought (`refs/orchestrator/remotes/<remote>/workflows/*`).
    pub fn chains(&self) -> Result<Vec<Chain>, EngineError> {
        let mut chains = Vec::new();
        for (reference, id) in self.git.refs_under(&crate::store::WORKFLOW_REF_PREFIXES)? {
            let Some(workflow) = crate::store::workflow_of_ref(&reference) else {
                continue;
            };
            let Ok(tip) = ObjectId::from_hex(id.as_bytes()) else {
                continue;
            };
            chains.push(Chain {
                workflow: workflow.to_string(),
                reference,
                tip,
            });
        }
        Ok(chains)
    }
}

impl Judged {
    /// Whether the PR's commands run confined: `git config orchestrate.attestConfine`
    /// (`namespace` or `none`) of this repository, else `default`.
    pub fn confine(&self, default: Confine) -> Result<Confine, EngineError> {
        match self
            .git
            .config_all("orchestrate.attestConfine")?
            .last()
            .map(String::as_str)
        {
            None => Ok(default),
            Some("namespace") => Ok(Confine::Namespace),
            Some("none") => Ok(Confine::None),
            Some(other) => Err(EngineError::BadInput {
                message: format!(
                    "orchestrate.attestConfine is {other:?}; it is \"namespace\" or \"none\""
                ),
                hint: "git config orchestrate.attestConfine namespace".into(),
            }),
        }
    }

    /// The main branch and main's configuration as this repository has it (a server's: its
    /// `HEAD` branch; a CI checkout, detached: the branch `origin/HEAD` names). A push
    /// cannot grant itself anything: a server reads this before the push moves main.
    pub fn main_config(&self) -> Result<(String, Config), EngineError> {
        let Some((rev, head)) = self.main_rev()? else {
            return Ok(("main".into(), Config::default()));
        };
        let text = self.git.show(&rev, config::FILE_NAME)?;
        let config = match text {
            Some(bytes) => {
                let text = String::from_utf8(bytes).map_err(|_| EngineError::BadInput {
                    message: format!("{head}:{} is not UTF-8 text", config::FILE_NAME),
                    hint: "A human fixes main's configuration.".into(),
                })?;
                Config::parse(&text, &Origin::MainBranch(head.clone()))?
            }
            None => Config::default(),
        };
        let main = config.main_branch.clone().unwrap_or(head);
        Ok((main, config))
    }

    /// The ref main is read from, and the branch's name: a server's `HEAD` branch, a CI
    /// checkout's (detached) the branch `origin/HEAD` names; `None` when neither is known.
    pub fn main_rev(&self) -> Result<Option<(String, String)>, EngineError> {
        Ok(match self.git.head_branch_name()? {
            Some(branch) => Some((format!("refs/heads/{branch}"), branch)),
            None => self
                .git
                .symbolic_target("refs/remotes/origin/HEAD")?
                .and_then(|target| {
                    let name = target.strip_prefix("refs/remotes/origin/")?.to_string();
                    Some((target, name))
                }),
        })
    }
}

/// The user's own git configuration files: a command that could write them could point
/// every later git of this user, the server hook's included, elsewhere (`core.hooksPath`).
/// Made when missing (an empty file, an empty directory: git reads them as no settings),
/// since only what exists can be bound read-only, and a command that created one would
/// configure this user's next git.
fn user_git_config() -> Result<Vec<PathBuf>, EngineError> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        files.push(home.join(".gitconfig"));
        dirs.push(home.join(".config").join("git"));
    }
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME") {
        dirs.push(PathBuf::from(xdg).join("git"));
    }
    for dir in &dirs {
        std::fs::create_dir_all(dir).map_err(io_error(format!("create {}", dir.display())))?;
    }
    for file in &files {
        if !file.exists() {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .map_err(io_error(format!("create {}", file.display())))?;
        }
    }
    files.extend(dirs);
    Ok(files)
}

/// What git runs from besides its program: its exec path (the `git-*` programs a server's
/// daemon and hooks run) and the templates a new repository is made from.
pub fn git_installation(git: &Git) -> Vec<PathBuf> {
    let mut paths = vec![git.program().to_path_buf()];
    if let Ok(exec_path) = git.run(["--exec-path"]) {
        let exec_path = PathBuf::from(exec_path.trim());
        if let Some(prefix) = exec_path.parent().and_then(Path::parent) {
            paths.push(prefix.join("share").join("git-core").join("templates"));
            paths.push(prefix.join("etc").join("gitconfig"));
        }
        paths.push(exec_path);
    }
    paths.push(PathBuf::from("/etc/gitconfig"));
    paths
}

/// This user's home and configuration directories: dotfiles there steer every program of
/// this user's, the server's git and hooks included.
pub fn home() -> Vec<PathBuf> {
    ["HOME", "XDG_CONFIG_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p != Path::new("/"))
        .collect()
}

/// Whether the verifier confines the PR's commands (docs/integrity.md, "What the verifier
/// runs").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confine {
    /// Each command in its own namespaces, the judged repository, the verifier's own and
    /// this program read-only to it; a machine that cannot do that runs nothing.
    Namespace,
    /// As the verifier's user, unconfined (a CI runner thrown away after the job).
    None,
}

/// The fresh repository, removed when dropped (after the sessions opened on it).
pub struct Verifier {
    repo: PathBuf,
    git: Git,
    /// The confinement of the PR's commands, or why this machine cannot confine them.
    confinement: Option<Result<crate::exec::confine::Confinement, String>>,
    /// [`Verifier::cannot_confine`]'s answer, once asked.
    probed: std::cell::OnceCell<Option<String>>,
    _dir: tempfile::TempDir,
}

impl Verifier {
    /// A new repository reading `judged`'s objects.
    pub fn new(judged: &Judged, confine: Confine) -> Result<Verifier, EngineError> {
        let dir = tempfile::Builder::new()
            .prefix("git-orchestrate-attest-")
            .tempdir()
            .map_err(io_error("make the verifier's temporary directory"))?;
        let repo = dir.path().join("repo");
        let git = Git::new(dir.path()).isolated();
        git.init_reading(&repo, &judged.objects)?;
        let confinement = match confine {
            Confine::None => None,
            Confine::Namespace => {
                let git_dir = repo.join(".git");
                let mut read_only = judged.objects.clone();
                let common = judged.git.common_dir()?;
                // Its parent too: a repository renamed away could be replaced by one without
                // the hooks, and a sibling repository's hooks are the server's as well.
                read_only.extend(
                    common
                        .canonicalize()
                        .ok()
                        .and_then(|c| c.parent().map(Path::to_path_buf)),
                );
                read_only.push(common);
                read_only.push(git_dir.clone());
                read_only.extend(std::env::current_exe().ok());
                read_only.extend(git_installation(&judged.git));
                // The directories of the hook's PATH (the daemon's), where git finds its
                // own commands: one a test could write could hold a `git` that receives
                // the next push without the hooks. One that does not exist cannot be
                // bound: the hook refuses to judge while a test could make it
                // (`harden::dependencies`).
                read_only.extend(
                    std::env::var_os("PATH")
                        .iter()
                        .flat_map(std::env::split_paths)
                        .filter(|dir| dir.is_absolute()),
                );
                read_only.extend(user_git_config()?);
                read_only.extend(home());
                // The scratch worktrees' records (HEAD, index, commondir) too: our git reads
                // them after each command.
                // Everything else is read-only but the temporary directories (and the
                // scratch worktrees in them, `Session::open_isolated`).
                // Prepared only: a push that runs nothing of the PR's (one that leaves main
                // alone) starts no namespace ([`Verifier::cannot_confine`] probes).
                Some(crate::exec::confine::Confinement::prepare(
                    &read_only,
                    &crate::exec::env::temp_dirs(),
                ))
            }
        };
        Ok(Verifier {
            git: git.at(&repo),
            repo,
            confinement,
            probed: std::cell::OnceCell::new(),
            _dir: dir,
        })
    }

    /// Why the PR's commands cannot run here, when they must be confined and cannot be (the
    /// confinement tried once, on the first call).
    pub fn cannot_confine(&self) -> Option<&str> {
        self.probed
            .get_or_init(|| match &self.confinement {
                Some(Ok(confinement)) => confinement.probe().err(),
                Some(Err(why)) => Some(why.clone()),
                None => None,
            })
            .as_deref()
    }

    /// Where a confined command could change one of `dependencies`
    /// ([`crate::exec::confine::Confinement::reachable`]); `None` when commands are not
    /// confined.
    pub fn reachable(&self, dependencies: &[PathBuf]) -> Option<Result<Vec<PathBuf>, String>> {
        if let Some(why) = self.cannot_confine() {
            return Some(Err(why.to_string()));
        }
        match &self.confinement {
            Some(Ok(confinement)) => Some(confinement.reachable(dependencies)),
            Some(Err(why)) => Some(Err(why.clone())),
            None => None,
        }
    }

    /// A session on the verifier's repository with `chain` as its workflow.
    pub fn session(&self, chain: &Chain) -> Result<Session, EngineError> {
        self.git
            .set_ref(&workflow_ref(&chain.workflow), &chain.tip.to_string())?;
        // Without a confinement it must have, the session runs nothing of the PR's: `judge`
        // refuses first ([`Verifier::cannot_confine`]).
        let confinement = match &self.confinement {
            Some(Ok(confinement)) => Some(confinement.clone()),
            Some(Err(_)) | None => None,
        };
        Session::open_isolated(&self.repo, &chain.workflow, confinement)
    }

    /// Points `branch` of the verifier's repository at `commit` (main, for what reads it).
    pub fn set_branch(&self, branch: &str, commit: &str) -> Result<(), EngineError> {
        Ok(self.git.set_ref(&format!("refs/heads/{branch}"), commit)?)
    }
}
