//! `.orchestrate.toml` (docs/config.md, "Which file is in force"): parsing with errors that name the key and line, the
//! defaults, and the file `init` writes.

use std::fmt;

use serde::Deserialize;

mod ci_named;
mod initial;
mod sections;
mod values;

pub use ci_named::{Named, github_uses, gitlab_includes};
pub use initial::{FirstGate, TestRunner, detect_test_runner, initial_file, read_small_file};
use sections::default_master_plan;
pub use sections::{
    ALL_DIMENSIONS, Adequacy, AgentConfig, ArchiveConfig, AttestConfig, ClaimsConfig,
    DEFAULT_TEST_PATHS, Debugging, FinalizeConfig, Gate, GatesConfig, HooksConfig, HumanConfig,
    HumanProof, MutationTool, PinnedTests, PrePush, Preset, RecordedPlans, RetryConfig,
    RetryStrategy, ReviewConfig, ReviewPolicy, TestConfig, VerifyConfig,
};
pub use values::parse_duration;

/// The config file's name, at the repository root.
pub const FILE_NAME: &str = crate::workflow::CONFIG_FILE;

/// The keys whose SSH signatures a human's answer may carry (docs/integrity.md, "Signed
/// human answers"), read at the PR's pin; always protected, as the config file is.
pub const ALLOWED_SIGNERS: &str = ".orchestrate/allowed_signers";

/// The files `init --ci` writes (src/engine/init/ci.rs): they steer what CI judges, so a PR
/// that rewrote the job's `attest` call would judge itself; protected as the config file is.
pub const CI_FILES: [&str; 3] = [
    ".github/workflows/git-orchestrate.yml",
    ".gitlab/git-orchestrate.yml",
    ".gitlab-ci.yml",
];

/// The directories CI reads its jobs from, protected as a whole whatever the configuration
/// says: a file added beside the job `init --ci` writes (`.github/workflows/zz.yml` running
/// on the same events, with a job named as the required check that only exits 0) would
/// decide the PR's check as surely as a rewritten job. `.github/actions` holds the local
/// actions a workflow runs with `uses: ./.github/actions/…`. GitLab reads its pipeline from
/// `.gitlab-ci.yml` (a file of [`CI_FILES`]) and whatever it includes, which may be any file
/// under `.gitlab/` by a wildcard; but for [`CI_TEMPLATES`]. Paths elsewhere that a CI file
/// names are protected too ([`Config::protected_pathspecs_with`]).
pub const CI_DIRS: [&str; 3] = [".github/workflows", ".github/actions", ".gitlab"];

/// The files under `.gitlab/` that GitLab reads as issue and merge request templates and CI
/// never runs (an include is a `.yml` or `.yaml` file): Markdown at the top of these
/// directories, which a PR may change unless another protected path covers them.
pub const CI_TEMPLATES: [&str; 2] = [
    ".gitlab/issue_templates/*.md",
    ".gitlab/merge_request_templates/*.md",
];

/// The paths protected whatever the configuration says: the config file, the allowed
/// signers and the CI job's files (and everything under [`CI_DIRS`]:
/// [`always_protected_globs`]).
pub fn always_protected() -> impl Iterator<Item = &'static str> {
    [FILE_NAME, ALLOWED_SIGNERS].into_iter().chain(CI_FILES)
}

/// [`CI_DIRS`] as globs of everything under them, as `[gates] protected` patterns are.
pub fn always_protected_globs() -> impl Iterator<Item = String> {
    CI_DIRS.into_iter().map(|dir| format!("{dir}/**"))
}

/// `path` as a glob pathspec matches it and nothing else.
fn glob_escaped(path: &str) -> String {
    path.chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub main_branch: Option<String>,
    #[serde(default = "default_master_plan")]
    pub master_plan: String,
    /// No remote: local-only, no pull before branching.
    #[serde(default)]
    pub remote: Option<String>,
    #[serde(default)]
    pub preflight: Vec<Gate>,
    #[serde(default)]
    pub debugging: Debugging,
    #[serde(default)]
    pub review: ReviewConfig,
    #[serde(default)]
    pub test: TestConfig,
    #[serde(default)]
    pub hooks: HooksConfig,
    #[serde(default)]
    pub gates: GatesConfig,
    #[serde(default)]
    pub finalize: FinalizeConfig,
    #[serde(default)]
    pub agent: AgentConfig,
    #[serde(default)]
    pub retry: RetryConfig,
    #[serde(default)]
    pub attest: AttestConfig,
    #[serde(default)]
    pub human: HumanConfig,
    #[serde(default)]
    pub claims: ClaimsConfig,
    #[serde(default)]
    pub archive: ArchiveConfig,
    #[serde(default)]
    pub verify: VerifyConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            main_branch: None,
            master_plan: default_master_plan(),
            remote: None,
            preflight: Vec::new(),
            debugging: Debugging::default(),
            review: ReviewConfig::default(),
            test: TestConfig::default(),
            hooks: HooksConfig::default(),
            gates: GatesConfig::default(),
            finalize: FinalizeConfig::default(),
            agent: AgentConfig::default(),
            retry: RetryConfig::default(),
            attest: AttestConfig::default(),
            human: HumanConfig::default(),
            claims: ClaimsConfig::default(),
            archive: ArchiveConfig::default(),
            verify: VerifyConfig::default(),
        }
    }
}

/// Where a config was read from, for messages and warnings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `<main>:.orchestrate.toml`, read from the object database: protected from the PR branch.
    MainBranch(String),
    /// The working-tree file.
    WorkingTree,
    /// No file anywhere: defaults.
    Defaults,
    /// `<main>:.orchestrate.toml` as it was at `commit`, when the PR began or a human last
    /// repinned it (docs/integrity.md).
    Pinned { main: String, commit: String },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::MainBranch(main) => write!(f, "{main}:{FILE_NAME}"),
            Origin::WorkingTree => write!(f, "{FILE_NAME} (working tree)"),
            Origin::Defaults => f.write_str("built-in defaults (no .orchestrate.toml)"),
            Origin::Pinned { main, commit } => write!(
                f,
                "{main}:{FILE_NAME} as pinned for this PR (at {})",
                crate::short_id(commit)
            ),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("invalid {origin}: {message}")]
pub struct ConfigError {
    pub origin: String,
    pub message: String,
}

impl Config {
    /// Parses a config file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Origin) -> Result<Config, ConfigError> {
        let err = |message: String| ConfigError {
            origin: origin.to_string(),
            message,
        };
        let config: Config =
            toml::from_str(text).map_err(|e| err(e.to_string().trim_end().to_string()))?;
        config.validate_names().map_err(err)?;
        for (key, patterns) in [
            ("protected", &config.gates.protected),
            ("test_paths", &config.gates.test_paths),
        ] {
            for (i, pattern) in patterns.iter().enumerate() {
                if pattern.trim().is_empty()
                    || pattern.starts_with('/')
                    || pattern.starts_with(':')
                    || pattern.split('/').any(|part| part == "..")
                {
                    return Err(err(format!(
                        "gates.{key}[{i}]: \"{pattern}\" is not a path in the repository (a glob \
                         such as \"run_tests.sh\" or \"ci/**\", relative to its root)"
                    )));
                }
            }
        }
        config.debugging.validate().map_err(err)?;
        config.review.validate().map_err(err)?;
        config.attest.validate().map_err(err)?;
        let mut seen = std::collections::HashSet::new();
        for (i, gate) in config.preflight.iter().enumerate() {
            if gate
                .name
                .chars()
                .any(crate::workflow::plan::is_deceptive_char)
            {
                return Err(err(format!(
                    "preflight[{i}].name: {:?} contains control, bidirectional-override or invisible \
                     direction characters; a gate name is one plain line",
                    gate.name
                )));
            }
            if !seen.insert(gate.name.as_str()) {
                return Err(err(format!(
                    "preflight[{i}].name: the gate name \"{}\" is used twice; gate names must be unique",
                    gate.name
                )));
            }
        }
        Ok(config)
    }

    /// The names git is handed as arguments or paths: they must be what they claim, so that
    /// none is read as an option or escapes the repository.
    /// The pathspecs of the protected paths: those [`always_protected`] and under
    /// [`CI_DIRS`], `judges` (the files the gates and the review command run), and `[gates]
    /// protected` (docs/integrity.md).
    pub fn protected_pathspecs(&self, judges: &[String]) -> Vec<String> {
        self.protected_pathspecs_with(judges, &[])
    }

    /// [`Config::protected_pathspecs`] and the paths a CI file names (`named`: a named
    /// path as a file and as everything under it, since `uses: ./x` may name either). The
    /// GitLab templates ([`CI_TEMPLATES`]) are left out of `.gitlab/` only when no other
    /// pathspec could reach them: a pathspec excludes a path for all the others too, and a
    /// `[gates] protected` of `**/*.md` or a CI file naming `.gitlab/issue_templates` keeps
    /// them protected.
    pub fn protected_pathspecs_with(&self, judges: &[String], named: &[Named]) -> Vec<String> {
        let named = named.iter().flat_map(|named| match named {
            Named::Path(path) => vec![
                format!(":(literal){path}"),
                format!(":(glob){}/**", glob_escaped(path)),
            ],
            Named::Under(dir) if dir.is_empty() => {
                vec![":(glob)**/*.yml".into(), ":(glob)**/*.yaml".into()]
            }
            Named::Under(dir) => vec![format!(":(glob){}/**", glob_escaped(dir))],
        });
        let mut specs: Vec<String> = always_protected()
            .map(|f| format!(":(literal){f}"))
            .chain(judges.iter().map(|f| format!(":(literal){f}")))
            .chain(always_protected_globs().map(|p| format!(":(glob){p}")))
            .chain(named)
            .chain(self.gates.protected.iter().map(|p| format!(":(glob){p}")))
            .collect();
        let gitlab = ":(glob).gitlab/**";
        let reaches_templates = specs.iter().filter(|spec| *spec != gitlab).any(|spec| {
            let (literal, pattern) = match spec.strip_prefix(":(literal)") {
                Some(path) => (true, path),
                None => (false, spec.strip_prefix(":(glob)").unwrap_or(spec)),
            };
            let fixed = if literal {
                pattern
            } else {
                pattern
                    .find(['*', '?', '[', '\\'])
                    .map_or(pattern, |at| &pattern[..at])
            };
            CI_TEMPLATES.iter().any(|template| {
                let dir = template.trim_end_matches("*.md");
                fixed.starts_with(dir) || dir.starts_with(fixed)
            })
        });
        if !reaches_templates {
            specs.extend(CI_TEMPLATES.iter().map(|t| format!(":(exclude,glob){t}")));
        }
        specs
    }

    fn validate_names(&self) -> Result<(), String> {
        if let Some(main) = &self.main_branch
            && (main.starts_with('-') || !crate::store::is_valid_branch_name(main))
        {
            return Err(format!(
                "main_branch: \"{main}\" is not a valid branch name"
            ));
        }
        let path = &self.master_plan;
        let parts_ok = path.split('/').all(|part| !matches!(part, "" | "." | ".."));
        if !parts_ok
            || path.starts_with('-')
            || path.contains(|c: char| c.is_control() || c == '\\')
        {
            return Err(format!(
                "master_plan: \"{path}\" must be a file path relative to the repository root, like \
                 docs/PLAN.md (no leading /, no . or .. parts)"
            ));
        }
        if path == FILE_NAME {
            return Err(format!(
                "master_plan: the master plan cannot be {FILE_NAME} itself"
            ));
        }
        if let Some(remote) = &self.remote
            && (remote.is_empty()
                || remote.starts_with('-')
                || remote.contains(|c: char| c.is_whitespace() || c.is_control()))
        {
            return Err(format!(
                "remote: \"{remote}\" is not a remote name (like origin)"
            ));
        }
        Ok(())
    }

    /// True when `path` is a test by `[gates] test_paths`.
    pub fn is_test_path(&self, path: &str) -> bool {
        self.gates
            .test_paths
            .iter()
            .any(|pattern| crate::glob::glob_match(pattern, path))
    }

    pub fn gate_names(&self) -> Vec<String> {
        self.preflight.iter().map(|g| g.name.clone()).collect()
    }

    /// Identifies the preflight configuration: a passing result is only reused for the same
    /// gates (docs/config.md, "The preflight cache"). It is the blob id of a canonical rendering of the gates.
    pub fn preflight_key(&self) -> String {
        let mut canonical = String::new();
        for g in &self.preflight {
            canonical.push_str(&format!(
                "{}\0{}\0{}\0{}\n",
                g.name,
                g.command,
                g.timeout.as_millis(),
                g.group.as_deref().unwrap_or("")
            ));
        }
        gix::objs::compute_hash(
            gix::hash::Kind::Sha1,
            gix::objs::Kind::Blob,
            canonical.as_bytes(),
        )
        .map(|id| id.to_string())
        .unwrap_or(canonical)
    }
}

#[cfg(test)]
mod tests;
