//! What a verified working tree is, and how it is recorded: the passing run the workflow
//! recorded for exactly this tree under exactly these gates, the protected paths that void a
//! verification, and the checkpoint note built from the result. The gates themselves run in
//! the one executor (src/engine/proof/here.rs).

use super::{EngineError, Session};
use crate::config::Config;
use crate::gates::PreflightRun;
use crate::workflow::notes::{CheckpointNote, NoteGate, NotePreflight};
use crate::workflow::proof::{GateFailure, TreeFailure, tree_failure};
use crate::workflow::state::{GateRecord, PreflightCache};
use crate::workflow::{CHECKPOINT_STATES, Event, State};

/// Where a verification's gate results come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateSource {
    /// The gates ran just now.
    Ran,
    /// They passed on this tree under these gates before (the preflight cache), or there
    /// are none to run: nothing ran now.
    Recorded,
}

/// What the gates made of the agent's working tree: the outcome of a plan's
/// `WorkingTreeGates` obligation (src/engine/proof/here.rs).
#[derive(Clone, Debug)]
pub struct TreeVerification {
    /// The tree the gates were asked about, taken before anything ran; `None` when there
    /// was nothing to verify it with (no gates, at a submit).
    pub tree: Option<String>,
    /// [`Config::preflight_key`] of the gates in force.
    pub key: String,
    pub gates: Vec<GateRecord>,
    pub source: GateSource,
    /// Files that changed while the gates ran; then no tree was verified.
    pub changed_during: Vec<String>,
    /// Protected paths the tree changes ([`protected_changes`]); then the gates did not run
    /// and nothing was verified.
    pub protected: Vec<String>,
    pub failed: Option<GateFailure>,
    /// The run itself, with every gate's output, when the gates ran.
    pub run: Option<PreflightRun>,
}

impl TreeVerification {
    pub fn passed(&self) -> bool {
        self.failed.is_none() && self.protected.is_empty()
    }

    /// Why the gates did not verify the tree ([`tree_failure`]); `None` when they did.
    pub fn failure(&self) -> Option<TreeFailure> {
        tree_failure(&self.protected, self.failed.as_ref(), &self.changed_during)
    }

    /// The tree this verification vouches for: the gates passed on it and nothing changed.
    pub fn verified_tree(&self) -> Option<&str> {
        (self.passed() && self.changed_during.is_empty())
            .then_some(self.tree.as_deref())
            .flatten()
    }

    /// The preflight cache entry this verification makes, when gates ran and vouch for a tree.
    pub fn cache(&self) -> Option<PreflightCache> {
        let tree = self.verified_tree()?;
        (!self.gates.is_empty()).then(|| PreflightCache {
            tree: tree.to_string(),
            key: self.key.clone(),
            gates: self.gates.clone(),
        })
    }

    /// The note for a checkpoint commit of the verified tree, made in the one place notes are
    /// made. `None` when nothing was verified.
    pub fn note(&self, workflow: &str, step: Option<String>) -> Option<CheckpointNote> {
        let tree = self.verified_tree()?;
        Some(CheckpointNote::new(
            workflow,
            step,
            tree,
            NotePreflight {
                passed: true,
                cached: self.source == GateSource::Recorded,
                gates: self.gates.iter().map(NoteGate::from).collect(),
            },
            &self.key,
        ))
    }
}

/// The verification the workflow already holds for `tree`: the preflight cache when it
/// covers the tree under the gates in force, or, without gates, the empty one. `None` when
/// only running the gates could verify it.
pub fn recorded_verification(
    state: Option<&State>,
    config: &Config,
    tree: &str,
) -> Option<TreeVerification> {
    let key = config.preflight_key();
    let gates = match state
        .and_then(State::pr)
        .and_then(|pr| pr.preflight_cache.as_ref())
    {
        Some(cache) if cache.covers(tree, &key) => cache.gates.clone(),
        _ if config.preflight.is_empty() => Vec::new(),
        _ => return None,
    };
    Some(TreeVerification {
        tree: Some(tree.to_string()),
        key,
        gates,
        source: GateSource::Recorded,
        changed_during: Vec::new(),
        protected: Vec::new(),
        failed: None,
        run: None,
    })
}

/// Records in the workflow's chain a pass the gates just made (a `preflight` transition),
/// so that the chain, and nothing else, proves the tree verified (docs/integrity.md): the
/// `commit-msg` hook and `checkpoint` then find it. Nothing is recorded for a reused pass,
/// a failed one, or outside a state that takes checkpoints.
pub fn record_pass(session: &Session, verification: &TreeVerification) -> Result<(), EngineError> {
    let (GateSource::Ran, Some(cache)) = (verification.source, verification.cache()) else {
        return Ok(());
    };
    session.with_retries(|| {
        let Some(snap) = session.store.read_unless_ticket()? else {
            return Ok(());
        };
        if CHECKPOINT_STATES.contains(&snap.state.status()) {
            session.apply(
                &snap,
                Event::PreflightPassed {
                    cache: cache.clone(),
                },
            )?;
        }
        Ok(())
    })
}

/// The protected paths (docs/integrity.md) in which `tree` differs from main at the PR's
/// pin: the config file, `.orchestrate/allowed_signers`, the scripts the gates and the review
/// command run, and `[gates] protected`. A
/// verification of such a tree does not count: a human changes these on main.
pub fn protected_changes(
    session: &Session,
    state: Option<&State>,
    config: &Config,
    tree: &str,
) -> Result<Vec<String>, EngineError> {
    let Some(pin) = state.and_then(State::pr).and_then(|pr| pr.pin.as_ref()) else {
        return Ok(Vec::new());
    };
    let specs = protected_specs(&session.git, config, &[&pin.commit, tree])?;
    Ok(session.git.changed_files_in(&pin.commit, tree, &specs)?)
}

/// The pathspecs of the protected paths for a change between the trees (or commits) `revs`:
/// [`Config::protected_pathspecs_with`] of the judges and of every path a CI file of any of
/// `revs` names as code the CI runs ([`ci_named`]).
pub fn protected_specs(
    git: &crate::exec::git::Git,
    config: &Config,
    revs: &[&str],
) -> Result<Vec<String>, EngineError> {
    let mut named = Vec::new();
    for rev in revs {
        named.extend(ci_named(git, rev)?);
    }
    named.sort();
    named.dedup();
    Ok(config.protected_pathspecs_with(&judges(config), &named))
}

/// The paths the CI files of `rev` name as code the CI runs, followed through the files
/// they name: GitHub's workflows and actions (`uses: ./…`, whose action may use another),
/// and GitLab's `.gitlab-ci.yml` and every file under `.gitlab/` (where a project may point
/// its pipeline) with what they include, and what that includes. Both the base's and the
/// PR's trees are read by the callers: main's names what a PR may not change, and a PR that
/// added a name would change a protected file to do it.
pub fn ci_named(
    git: &crate::exec::git::Git,
    rev: &str,
) -> Result<Vec<crate::config::Named>, EngineError> {
    use crate::config::{Named, github_uses, gitlab_includes};
    use std::collections::BTreeSet;
    // A file is read once, and the walk stops after as many rounds as a human would nest.
    const ROUNDS: usize = 16;
    const CAP: u64 = 1024 * 1024;
    let mut github: BTreeSet<String> = [".github/workflows", ".github/actions"]
        .map(String::from)
        .into();
    let mut gitlab: BTreeSet<String> = [".gitlab-ci.yml", ".gitlab"].map(String::from).into();
    let mut asked: BTreeSet<String> = BTreeSet::new();
    let mut read: BTreeSet<String> = BTreeSet::new();
    let mut named: BTreeSet<Named> = BTreeSet::new();
    let covers = |asked: &BTreeSet<String>, path: &str| {
        asked.iter().any(|a| {
            a.is_empty()
                || path == a
                || path
                    .strip_prefix(a.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    for _ in 0..ROUNDS {
        let round: Vec<String> = github
            .union(&gitlab)
            .filter(|p| !asked.contains(*p))
            .cloned()
            .collect();
        if round.is_empty() {
            break;
        }
        asked.extend(round.iter().cloned());
        // `ls-tree` takes no empty path: the whole tree is `.`.
        let listed: Vec<String> = round
            .iter()
            .map(|p| {
                if p.is_empty() {
                    ".".to_string()
                } else {
                    p.clone()
                }
            })
            .collect();
        for (path, bytes) in git.files_within(rev, &listed, CAP)? {
            if !(path.ends_with(".yml") || path.ends_with(".yaml")) || !read.insert(path.clone()) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            if covers(&github, &path) {
                for found in github_uses(&text) {
                    if let Named::Path(p) = &found {
                        github.insert(p.clone());
                    }
                    named.insert(found);
                }
            }
            if covers(&gitlab, &path) {
                for found in gitlab_includes(&text) {
                    match &found {
                        Named::Path(p) | Named::Under(p) => gitlab.insert(p.clone()),
                    };
                    named.insert(found);
                }
            }
        }
    }
    Ok(named.into_iter().collect())
}

/// The protected paths the working tree changes from the pin, as [`protected_changes`] of
/// the working tree's tree finds them. When the protected paths are files named one by one
/// (no `[gates] protected` patterns) and each, and each file under the CI directories, is as
/// the pin has it, that is shown in-process, without taking the working tree's tree (three
/// git processes on every RED submit).
pub fn protected_worktree_changes(
    session: &Session,
    state: &State,
    config: &Config,
) -> Result<Vec<String>, EngineError> {
    let Some(pin) = state.pr().and_then(|pr| pr.pin.as_ref()) else {
        return Ok(Vec::new());
    };
    // A path a CI file names is no file of the fixed list: the whole check then runs. Where
    // the pin holds no CI file at all (read in-process), none is named.
    let pin_tree = session.store.tree_of(&pin.commit)?;
    let mut ci_files = false;
    for path in [".github", ".gitlab", ".gitlab-ci.yml"] {
        ci_files |= session.store.tree_entry(&pin_tree, path)?.is_some();
    }
    let named = ci_files && !ci_named(&session.git, &pin.commit)?.is_empty();
    if config.gates.protected.is_empty() && !named {
        let paths: Vec<String> = crate::config::always_protected()
            .map(str::to_string)
            .chain(judges(config))
            .collect();
        if session.store.worktree_matches(&pin.commit, &paths)?
            && session
                .store
                .worktree_dirs_match(&pin.commit, &crate::config::CI_DIRS)?
        {
            return Ok(Vec::new());
        }
    }
    let tree = session.worktree_tree()?;
    protected_changes(session, Some(state), config, &tree)
}

/// The judges themselves: the repository's scripts the gates and the reviewer run.
pub fn judges(config: &Config) -> Vec<String> {
    config
        .preflight
        .iter()
        .map(|g| g.command.as_str())
        .chain(config.review.command.as_deref())
        .flat_map(crate::workflow::command_files::repository_files)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::state::ExitRecord;
    use pretty_assertions::assert_eq;

    fn verification(source: GateSource, changed: &[&str]) -> TreeVerification {
        TreeVerification {
            tree: Some("t1".into()),
            key: "k1".into(),
            gates: vec![GateRecord {
                name: "tests".into(),
                exit: ExitRecord::code(0),
                ms: 812,
                reused: false,
            }],
            source,
            changed_during: changed.iter().map(|s| s.to_string()).collect(),
            protected: Vec::new(),
            failed: None,
            run: None,
        }
    }

    #[test]
    fn the_note_says_what_was_verified_and_how() {
        let note = verification(GateSource::Ran, &[])
            .note("main", Some("1.2".into()))
            .expect("verified");
        assert_eq!(
            note.to_line(),
            format!(
                r#"{{"v":1,"kind":"checkpoint","workflow":"main","step":"1.2","tree":"t1","preflight":{{"passed":true,"cached":false,"gates":[{{"name":"tests","exit":0,"ms":812}}]}},"preflight_key":"k1","tool":"git-orchestrate {}"}}"#,
                env!("CARGO_PKG_VERSION")
            )
        );
        let cached = verification(GateSource::Recorded, &[])
            .note("main", None)
            .expect("verified");
        assert!(cached.preflight.cached);
        assert_eq!(cached.step, None);
    }

    #[test]
    fn nothing_is_vouched_for_when_files_changed_or_a_gate_failed() {
        let changed = verification(GateSource::Ran, &["build.log"]);
        assert_eq!(changed.verified_tree(), None);
        assert!(changed.note("main", None).is_none());
        assert!(changed.cache().is_none());
        let mut failed = verification(GateSource::Ran, &[]);
        failed.failed = Some(GateFailure {
            name: "tests".into(),
            exit: "exit 1".into(),
            output: b"boom".to_vec(),
        });
        assert_eq!(failed.verified_tree(), None);
        assert!(failed.note("main", None).is_none());
    }

    fn config(gates: &str) -> Config {
        Config::parse(gates, &crate::config::Origin::WorkingTree).expect("valid config")
    }

    fn state_with_cache(cache: PreflightCache) -> State {
        State::new(None).edit(|w| {
            w.status = crate::workflow::Status::ExecutingTdd;
            w.preflight_cache = Some(cache);
        })
    }

    #[test]
    fn a_recorded_pass_stands_in_only_for_its_tree_under_the_same_gates() {
        let gates = config("[[preflight]]\nname = \"tests\"\ncommand = \"true\"\n");
        let cached = verification(GateSource::Ran, &[]).gates;
        let state = state_with_cache(PreflightCache {
            tree: "t1".into(),
            key: gates.preflight_key(),
            gates: cached.clone(),
        });
        let recorded = recorded_verification(Some(&state), &gates, "t1").expect("covered");
        assert_eq!(recorded.source, GateSource::Recorded);
        assert_eq!(recorded.gates, cached);
        assert_eq!(recorded.key, gates.preflight_key());
        assert!(recorded.run.is_none());
        assert!(
            recorded
                .note("main", None)
                .expect("verified")
                .preflight
                .cached
        );

        assert!(recorded_verification(Some(&state), &gates, "t2").is_none());
        let other = config("[[preflight]]\nname = \"tests\"\ncommand = \"make test\"\n");
        assert!(
            recorded_verification(Some(&state), &other, "t1").is_none(),
            "a pass under other gates proves nothing about these"
        );
        assert!(recorded_verification(None, &gates, "t1").is_none());
    }

    #[test]
    fn without_gates_every_tree_is_recorded_as_verified_by_none() {
        let none = recorded_verification(None, &config(""), "t1").expect("nothing to run");
        assert_eq!(none.verified_tree(), Some("t1"));
        assert!(none.gates.is_empty());
        let note = none.note("main", None).expect("verified");
        assert!(note.preflight.gates.is_empty());
    }

    #[test]
    fn a_pass_without_gates_vouches_for_the_tree_but_makes_no_cache() {
        let mut none = verification(GateSource::Recorded, &[]);
        none.gates.clear();
        assert_eq!(none.verified_tree(), Some("t1"));
        assert!(
            none.cache().is_none(),
            "an empty pass proves nothing to reuse"
        );
    }
}
