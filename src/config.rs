//! `.orchestrate.toml` (docs/config.md, "Which file is in force"): parsing with errors that name the key and line, the
//! defaults, and the file `init` writes.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::workflow::Thresholds;
use crate::workflow::review::Priority;

/// The config file's name, at the repository root.
pub const FILE_NAME: &str = crate::workflow::CONFIG_FILE;

const DEFAULT_MASTER_PLAN: &str = "docs/Plan_Doc/Active_Plan.md";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_OUTPUT_TAIL: usize = 200;

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
}

/// `[retry]` (docs/config.md, "[retry]"): how `git orchestrate run` retries an agent that
/// makes no progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    #[serde(default)]
    pub strategy: RetryStrategy,
    /// With `auto`: a fresh session after this many turns without progress on one step.
    #[serde(default = "default_fresh_after", deserialize_with = "positive_u32")]
    pub fresh_after_failures: u32,
    /// Turns without progress on one step before the run stops as stuck.
    #[serde(default = "default_max_iterations", deserialize_with = "positive_u32")]
    pub max_iterations: u32,
    /// The longest one turn may take: then the agent and every process it started are
    /// ended, and the turn counts as one without progress unless the workflow moved.
    #[serde(default = "default_turn_timeout", deserialize_with = "duration")]
    pub turn_timeout: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            strategy: RetryStrategy::default(),
            fresh_after_failures: default_fresh_after(),
            max_iterations: default_max_iterations(),
            turn_timeout: default_turn_timeout(),
        }
    }
}

/// Which agent session the next turn goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryStrategy {
    /// The same session, which keeps its context (the default).
    #[default]
    Same,
    /// A new session every turn.
    Fresh,
    /// The same session until `fresh_after_failures` turns made no progress on one step.
    Auto,
}

fn default_fresh_after() -> u32 {
    2
}

fn default_max_iterations() -> u32 {
    3
}

fn default_turn_timeout() -> Duration {
    Duration::from_secs(30 * 60)
}

/// `[agent]` (docs/config.md, "[agent]"): how the agent hooks behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The Stop hook lets the agent stop after this many consecutive blocked stops with no
    /// transition in between, so a misbehaving loop ends.
    #[serde(default = "default_max_stop_blocks", deserialize_with = "positive_u32")]
    pub max_stop_blocks: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_stop_blocks: default_max_stop_blocks(),
        }
    }
}

fn default_max_stop_blocks() -> u32 {
    3
}

/// `[finalize]` (docs/config.md, "[finalize]").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinalizeConfig {
    /// Run the gates once more on the squashed commit in a fresh linked worktree before the
    /// squash counts (docs/integrity.md).
    #[serde(default = "yes")]
    pub clean_check: bool,
}

impl Default for FinalizeConfig {
    fn default() -> Self {
        FinalizeConfig { clean_check: true }
    }
}

fn yes() -> bool {
    true
}

/// `[gates]` (docs/config.md, "[gates]").
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatesConfig {
    /// Paths (git pathspec globs) a PR must not change: a human changes them on main
    /// (docs/integrity.md). The config file and the scripts the gates and the review
    /// command run always are.
    #[serde(default)]
    pub protected: Vec<String>,
    /// What the final check does when the gates fail with the tests the PR changed put back
    /// as they were at the pin (docs/integrity.md, "Tests that existed at the pin").
    #[serde(default)]
    pub pinned_tests: PinnedTests,
    /// Which paths are tests (globs): a PR that changes or removes one that existed at the pin
    /// is named, and judged with it put back.
    #[serde(default = "default_test_paths")]
    pub test_paths: Vec<String>,
}

impl Default for GatesConfig {
    fn default() -> Self {
        GatesConfig {
            protected: Vec::new(),
            pinned_tests: PinnedTests::default(),
            test_paths: default_test_paths(),
        }
    }
}

/// `[gates] pinned_tests`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PinnedTests {
    /// Named in the review and the final note, with the gates' result beside the verdict.
    #[default]
    Report,
    /// And the squash does not count while the gates fail with them put back.
    Enforce,
}

/// Where tests live in the common layouts (pytest, unittest, Go, Rust, JavaScript, Java,
/// Ruby, shell), and the test runners' own configuration files.
pub const DEFAULT_TEST_PATHS: &[&str] = &[
    "test/**",
    "tests/**",
    "spec/**",
    "testdata/**",
    "**/__tests__/**",
    "**/test_*",
    "**/*_test.*",
    "**/*_spec.*",
    "**/*.test.*",
    "**/*.spec.*",
    "**/*Test.java",
    "**/*Tests.java",
    "**/*Test.kt",
    "**/conftest.py",
    // What decides which tests run and how: a harness file changed is a test changed.
    "**/pytest.ini",
    "**/pyproject.toml",
    "**/setup.cfg",
    "**/tox.ini",
    ".cargo/config.toml",
    ".cargo/config",
    "**/jest.config.*",
    "**/vitest.config.*",
    "**/.mocharc.*",
];

fn default_test_paths() -> Vec<String> {
    DEFAULT_TEST_PATHS.iter().map(|p| p.to_string()).collect()
}

/// `[hooks]` (docs/config.md, "[hooks]").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// What `pre-push` does with a pushed checkpoint commit that has no passing note.
    #[serde(default)]
    pub pre_push: PrePush,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrePush {
    /// Say so, and push anyway.
    #[default]
    Warn,
    /// Refuse the push.
    Enforce,
}

/// `[review]` as written: every key optional, so a preset can fill what is not said.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewConfig {
    pub preset: Option<Preset>,
    #[serde(default, deserialize_with = "optional_non_empty")]
    pub command: Option<String>,
    pub dimensions: Option<Vec<String>>,
    pub block_on: Option<Vec<Priority>>,
    pub max_rounds: Option<u32>,
    pub human: Option<bool>,
    #[serde(default, deserialize_with = "optional_duration")]
    pub timeout: Option<Duration>,
}

/// The review presets' gate formulas (docs/config.md, "[review]").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Every dimension, no human gate.
    CodeReview,
    /// Security, resilience and correctness, and a human must approve.
    SecurityAudit,
    /// Correctness and security only.
    QuickReview,
    /// No dimensions, no human gate.
    None,
}

/// The review policy in force: the preset's values with the explicit keys over them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewPolicy {
    /// No command: no automated review (a human gate may still apply).
    pub command: Option<String>,
    /// One review run per dimension, in parallel; none: one run without a dimension.
    pub dimensions: Vec<String>,
    pub block_on: Vec<Priority>,
    pub max_rounds: u32,
    pub human: bool,
    pub timeout: Duration,
}

/// The seven dimensions of the `code-review` preset.
pub const ALL_DIMENSIONS: [&str; 7] = [
    "correctness",
    "security",
    "resilience",
    "performance",
    "maintainability",
    "tests",
    "documentation",
];

impl ReviewConfig {
    pub fn policy(&self) -> ReviewPolicy {
        let (dimensions, human): (&[&str], bool) = match self.preset {
            Some(Preset::CodeReview) => (&ALL_DIMENSIONS, false),
            Some(Preset::SecurityAudit) => (&["security", "resilience", "correctness"], true),
            Some(Preset::QuickReview) => (&["correctness", "security"], false),
            Some(Preset::None) | None => (&[], false),
        };
        ReviewPolicy {
            command: self.command.clone(),
            dimensions: self
                .dimensions
                .clone()
                .unwrap_or_else(|| dimensions.iter().map(|d| d.to_string()).collect()),
            block_on: self
                .block_on
                .clone()
                .unwrap_or_else(|| vec![Priority::P0, Priority::P1]),
            max_rounds: self.max_rounds.unwrap_or(3),
            human: self.human.unwrap_or(human),
            timeout: self.timeout.unwrap_or(DEFAULT_TIMEOUT),
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.max_rounds == Some(0) {
            return Err("review.max_rounds: must be at least 1".into());
        }
        if let Some(dimensions) = &self.dimensions {
            if let Some(i) = dimensions.iter().position(|d| d.trim().is_empty()) {
                return Err(format!("review.dimensions[{i}]: must not be empty"));
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(d) = dimensions.iter().find(|d| !seen.insert(d.as_str())) {
                return Err(format!("review.dimensions: \"{d}\" is listed twice"));
            }
        }
        Ok(())
    }
}

/// `[debugging]`: when the guidance changes and the escape tools unlock (docs/config.md, "[debugging]").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Debugging {
    pub hypothesize_max_attempts: u32,
    pub instrumentation_max_attempts: u32,
    pub unlock_scope_reduction_at: u32,
    pub unlock_escalation_at: u32,
}

impl Default for Debugging {
    fn default() -> Self {
        let t = Thresholds::default();
        Debugging {
            hypothesize_max_attempts: t.hypothesize_max_attempts,
            instrumentation_max_attempts: t.instrumentation_max_attempts,
            unlock_scope_reduction_at: t.unlock_scope_reduction_at,
            unlock_escalation_at: t.unlock_escalation_at,
        }
    }
}

impl Debugging {
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            hypothesize_max_attempts: self.hypothesize_max_attempts,
            instrumentation_max_attempts: self.instrumentation_max_attempts,
            unlock_scope_reduction_at: self.unlock_scope_reduction_at,
            unlock_escalation_at: self.unlock_escalation_at,
        }
    }

    /// Each threshold at least 1, and none before the one it follows.
    fn validate(&self) -> Result<(), String> {
        let order = [
            ("hypothesize_max_attempts", self.hypothesize_max_attempts),
            (
                "instrumentation_max_attempts",
                self.instrumentation_max_attempts,
            ),
            ("unlock_scope_reduction_at", self.unlock_scope_reduction_at),
            ("unlock_escalation_at", self.unlock_escalation_at),
        ];
        if let Some((key, _)) = order.iter().find(|(_, v)| *v == 0) {
            return Err(format!("debugging.{key}: must be at least 1"));
        }
        for pair in order.windows(2) {
            let ((a, va), (b, vb)) = (pair[0], pair[1]);
            if vb < va {
                return Err(format!(
                    "debugging.{b} = {vb} comes before debugging.{a} = {va}; the thresholds must not \
                     decrease (hypothesize ≤ instrumentation ≤ scope reduction ≤ escalation)"
                ));
            }
        }
        Ok(())
    }
}

/// One `[[preflight]]` command gate.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    #[serde(deserialize_with = "non_empty")]
    pub name: String,
    #[serde(deserialize_with = "non_empty")]
    pub command: String,
    #[serde(default = "default_timeout", deserialize_with = "duration")]
    pub timeout: Duration,
    /// Consecutive gates with the same group run in parallel.
    #[serde(default)]
    pub group: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestConfig {
    /// For the agent's `--test-command`.
    #[serde(default = "default_timeout", deserialize_with = "duration")]
    pub timeout: Duration,
    /// Lines of output shown in briefings; the full text is in `output.log`.
    #[serde(default = "default_output_tail", deserialize_with = "positive")]
    pub output_tail: usize,
}

impl Default for TestConfig {
    fn default() -> Self {
        TestConfig {
            timeout: DEFAULT_TIMEOUT,
            output_tail: DEFAULT_OUTPUT_TAIL,
        }
    }
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
        }
    }
}

fn default_master_plan() -> String {
    DEFAULT_MASTER_PLAN.to_string()
}

fn default_timeout() -> Duration {
    DEFAULT_TIMEOUT
}

fn default_output_tail() -> usize {
    DEFAULT_OUTPUT_TAIL
}

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(s)
}

fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom("must be at least 1"));
    }
    Ok(n)
}

fn positive_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n == 0 {
        return Err(serde::de::Error::custom("must be at least 1"));
    }
    Ok(n)
}

fn optional_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    duration(d).map(Some)
}

fn optional_non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    non_empty(d).map(Some)
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s).map_err(serde::de::Error::custom)
}

/// Parses `"10m"`, `"30s"`, `"1h30m"`, `"500ms"`. A bare number is refused: its unit would
/// be a guess.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "invalid duration \"{text}\": use a number with a unit, like \"500ms\", \"30s\", \"10m\" or \"1h30m\""
        )
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            _ => return Err(bad()),
        };
        total = total.saturating_add(unit);
        rest = &rest[unit_len..];
    }
    if total.is_zero() {
        return Err(format!(
            "invalid duration \"{text}\": must be longer than zero"
        ));
    }
    Ok(total)
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
    /// The pathspecs of the protected paths: the config file, `judges` (the files the gates
    /// and the review command run), and `[gates] protected` (docs/integrity.md).
    pub fn protected_pathspecs(&self, judges: &[String]) -> Vec<String> {
        std::iter::once(format!(":(literal){FILE_NAME}"))
            .chain(judges.iter().map(|f| format!(":(literal){f}")))
            .chain(self.gates.protected.iter().map(|p| format!(":(glob){p}")))
            .collect()
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

/// The file `init` writes when there is none: every key documented, preflight from `--preflight`.
/// The gate `init` writes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstGate<'a> {
    /// `--preflight CMD`.
    Given(&'a str),
    /// The project's test runner, found by [`detect_test_runner`].
    Detected(&'a TestRunner),
    None,
}

/// A project's test command, as its files show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TestRunner {
    pub command: String,
    /// What showed it, for the comment above the gate.
    pub from: String,
}

/// The test command the project's own files name, in this order: `Cargo.toml`, pytest
/// (`pyproject.toml`, `pytest.ini`, `setup.cfg`, `tox.ini`, `conftest.py`), a `package.json`
/// `test` script other than npm's placeholder, `go.mod`, a Makefile's `test` target. `read`
/// gives a top-level file's text, or `None` when there is no such file.
pub fn detect_test_runner(read: &dyn Fn(&str) -> Option<String>) -> Option<TestRunner> {
    let found = |command: &str, from: &str| {
        Some(TestRunner {
            command: command.to_string(),
            from: from.to_string(),
        })
    };
    if read("Cargo.toml").is_some() {
        return found("cargo test", "Cargo.toml");
    }
    let pytest = [
        ("pyproject.toml", "pytest"),
        ("pytest.ini", ""),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
        ("conftest.py", ""),
    ];
    for (file, mark) in pytest {
        if read(file).is_some_and(|text| text.contains(mark)) {
            return found("python -m pytest", file);
        }
    }
    if let Some(text) = read("package.json")
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(script) = json["scripts"]["test"].as_str()
        && !script.contains("no test specified")
    {
        return found("npm test", "package.json's \"test\" script");
    }
    if read("go.mod").is_some() {
        return found("go test ./...", "go.mod");
    }
    for file in ["GNUmakefile", "makefile", "Makefile"] {
        if read(file).is_some_and(|text| {
            text.lines()
                .any(|l| l.starts_with("test:") || l.starts_with("test :"))
        }) {
            return found("make test", &format!("the {file}'s test target"));
        }
    }
    None
}

/// A regular file's text, at most 1 MiB of it, for reading what a project's own files say;
/// `None` when it is missing, not a regular file (a FIFO would block) or not text.
pub fn read_small_file(path: &std::path::Path) -> Option<String> {
    let bytes = crate::input::read_file(path, 1024 * 1024).ok()??;
    String::from_utf8(bytes).ok()
}

pub fn initial_file(main_branch: &str, first_gate: FirstGate) -> String {
    let gate = match first_gate {
        FirstGate::Given(command) => format!(
            "[[preflight]]\nname = \"preflight\"\ncommand = {}\ntimeout = \"10m\"\n",
            toml_string(command)
        ),
        FirstGate::Detected(runner) => format!(
            "# Detected from {}: the project's tests are the first gate. Change the command if\n\
             # they run otherwise; without any gate the final note says \"not verified: no gates\".\n\
             [[preflight]]\nname = \"tests\"\ncommand = {}\ntimeout = \"10m\"\n",
            runner.from,
            toml_string(&runner.command)
        ),
        FirstGate::None => "# No preflight gate yet: a PASS is then verified by the agent's test command alone.\n\
                 # Add the command that must pass before any step counts, for example:\n\
                 # [[preflight]]\n# name = \"tests\"\n# command = \"cargo test\"\n# timeout = \"10m\"\n"
            .to_string(),
    };
    format!(
        "# git-orchestrate configuration (every key: `man git-orchestrate`, or docs/config.md in its sources).
# Commit this file on {main_branch}: once a PR branch exists, the gates are read from
# {main_branch}:{FILE_NAME}, so an agent cannot weaken them on its branch.

main_branch = {main}
master_plan = \"{DEFAULT_MASTER_PLAN}\"
# remote = \"origin\"          # set to pull {main_branch} before each new PR branch

# Ordered gates, run after every passing PASS submit and on checkpoints.
# Consecutive gates with the same `group` run in parallel.
{gate}
# Code review, run by get-task once every step is DONE. Without a command there
# is no automated review. The command gets the review context as JSON on stdin and prints
# {{\"findings\": [{{\"priority\": \"P0\"..\"P3\", \"file\", \"line\", \"issue\", \"suggestion\"}}]}}.
# [review]
# preset = \"code-review\"        # code-review | security-audit | quick-review | none
# command = \"./tools/review.sh\"
# dimensions = [\"correctness\", \"security\"]   # one run per dimension, in parallel
# block_on = [\"P0\", \"P1\"]          # findings of these priorities send the work back
# max_rounds = 3                  # then the agent must escalate
# human = false                   # true: a human approves or rejects after the review
# timeout = \"10m\"

# Debugging: guidance tiers and when the escape tools unlock (these are the defaults).
[debugging]
hypothesize_max_attempts = 2        # attempts 1-2: hypothesize and fix
instrumentation_max_attempts = 5    # then: instrument and log
unlock_scope_reduction_at = 6       # request-scope-reduction unlocks
unlock_escalation_at = 10           # escalate unlocks

# Paths a PR must not change (globs); a human changes them on main, then runs
# `git orchestrate repin`. This file, and the scripts the gates and the review run
# (`sh run_tests.sh`: run_tests.sh), always are.
[gates]
protected = []               # e.g. [\"run_tests.sh\", \"ci/**\"]

# At finalization the gates run once more on the squashed commit, in a fresh worktree.
[finalize]
clean_check = true

# Agent hooks (`git orchestrate init --agent claude|codex|gemini`): the Stop hook lets the
# agent stop after this many blocked stops in a row with no progress.
[agent]
max_stop_blocks = 3

# `git orchestrate run`, the driver loop: which agent session a turn goes to, and when an
# agent that makes no progress on a step is stopped as stuck.
[retry]
strategy = \"same\"            # \"fresh\": a new session every turn; \"auto\": fresh after fresh_after_failures
fresh_after_failures = 2
max_iterations = 3
turn_timeout = \"30m\"         # one turn at most; then the agent and all it started are ended

# Git hooks (`git orchestrate hooks install`; init installs them).
[hooks]
pre_push = \"warn\"          # \"enforce\": refuse to push checkpoint commits without a passing note

[test]
timeout = \"10m\"            # for the agent's --test-command; the process group is killed after it
output_tail = 200           # lines of output shown in briefings; output.log keeps all of it
",
        main = toml_string(main_branch)
    )
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, &Origin::WorkingTree).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_when_empty() {
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(Config::default().preflight.is_empty());
    }

    #[test]
    fn a_full_file_parses() {
        let config = parse(
            r#"
main_branch = "trunk"
master_plan = "PLAN.md"
remote = "origin"
[[preflight]]
name = "fmt"
command = "cargo fmt --check"
timeout = "30s"
group = "fast"
[[preflight]]
name = "lint"
command = "cargo clippy"
group = "fast"
[test]
timeout = "1h30m"
output_tail = 50
"#,
        )
        .unwrap();
        assert_eq!(config.main_branch.as_deref(), Some("trunk"));
        assert_eq!(config.preflight[0].timeout, Duration::from_secs(30));
        assert_eq!(config.preflight[1].timeout, DEFAULT_TIMEOUT);
        assert_eq!(config.preflight[1].group.as_deref(), Some("fast"));
        assert_eq!(config.test.timeout, Duration::from_secs(5400));
        assert_eq!(config.test.output_tail, 50);
    }

    #[test]
    fn unknown_keys_name_the_key_and_line() {
        let err = parse("master_plan = \"x\"\n[test]\ntimeout = \"1s\"\ntail = 3\n").unwrap_err();
        assert!(
            err.starts_with("invalid .orchestrate.toml (working tree): TOML parse error at line 4"),
            "{err}"
        );
        assert!(err.contains("unknown field `tail`"), "{err}");
    }

    #[test]
    fn the_pre_push_mode_is_warn_or_enforce() {
        assert_eq!(parse("").unwrap().hooks.pre_push, PrePush::Warn);
        assert_eq!(
            parse("[hooks]\npre_push = \"enforce\"\n")
                .unwrap()
                .hooks
                .pre_push,
            PrePush::Enforce
        );
        let err = parse("[hooks]\npre_push = \"sometimes\"\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(
            err.contains("unknown variant `sometimes`, expected `warn` or `enforce`"),
            "{err}"
        );
        let err = parse("[hooks]\npre_commit = \"warn\"\n").unwrap_err();
        assert!(err.contains("unknown field `pre_commit`"), "{err}");
    }

    #[test]
    fn names_handed_to_git_are_checked() {
        let cases = [
            (
                "main_branch = \"-x\"",
                "main_branch: \"-x\" is not a valid branch name",
            ),
            (
                "main_branch = \"a..b\"",
                "main_branch: \"a..b\" is not a valid branch name",
            ),
            (
                "master_plan = \"/etc/passwd\"",
                "master_plan: \"/etc/passwd\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
            ),
            (
                "master_plan = \"docs/../x.md\"",
                "master_plan: \"docs/../x.md\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
            ),
            (
                "master_plan = \"./x.md\"",
                "master_plan: \"./x.md\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
            ),
            (
                "master_plan = \".orchestrate.toml\"",
                "master_plan: the master plan cannot be .orchestrate.toml itself",
            ),
            (
                "remote = \"--upload-pack=evil\"",
                "remote: \"--upload-pack=evil\" is not a remote name (like origin)",
            ),
            (
                "remote = \"\"",
                "remote: \"\" is not a remote name (like origin)",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(
                parse(text),
                Err(format!(
                    "invalid .orchestrate.toml (working tree): {message}"
                )),
                "{text}"
            );
        }
        assert!(parse("main_branch = \"release/2.x\"\nmaster_plan = \"docs/My Plan.md\"").is_ok());
    }

    #[test]
    fn bad_durations_name_the_line() {
        let err =
            parse("[[preflight]]\nname = \"t\"\ncommand = \"true\"\ntimeout = \"10 minutes\"\n")
                .unwrap_err();
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("invalid duration \"10 minutes\""), "{err}");
        let err = parse("[test]\ntimeout = 600\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn bad_types_and_values_are_errors() {
        assert!(parse("remote = 3\n").unwrap_err().contains("line 1"));
        for (text, says) in [
            ("[retry]\nstrategy = \"maybe\"\n", "unknown variant `maybe`"),
            ("[retry]\nmax_iterations = 0\n", "must be at least 1"),
            ("[retry]\nfresh_after_failures = -1\n", "invalid value"),
            ("[retry]\nfresh_after = 2\n", "unknown field `fresh_after`"),
            ("[agent]\nmax_stop_blocks = 0\n", "must be at least 1"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        let retry = parse("[retry]\nstrategy = \"auto\"\nmax_iterations = 5\n")
            .unwrap()
            .retry;
        assert_eq!(
            (
                retry.strategy,
                retry.fresh_after_failures,
                retry.max_iterations
            ),
            (RetryStrategy::Auto, 2, 5)
        );
        assert!(
            parse("[test]\noutput_tail = 0\n")
                .unwrap_err()
                .contains("must be at least 1")
        );
        assert!(
            parse("[[preflight]]\nname = \"t\"\ncommand = \" \"\n")
                .unwrap_err()
                .contains("must not be empty")
        );
        let dup = parse(
            "[[preflight]]\nname = \"t\"\ncommand = \"a\"\n[[preflight]]\nname = \"t\"\ncommand = \"b\"\n",
        );
        assert_eq!(
            dup.unwrap_err(),
            "invalid .orchestrate.toml (working tree): preflight[1].name: the gate name \"t\" is used twice; gate names must be unique"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("5d").is_err());
    }

    #[test]
    fn the_preflight_key_changes_with_the_gates() {
        let a = parse("[[preflight]]\nname = \"t\"\ncommand = \"a\"\n").unwrap();
        let b = parse("[[preflight]]\nname = \"t\"\ncommand = \"b\"\n").unwrap();
        assert_ne!(a.preflight_key(), b.preflight_key());
        assert_eq!(a.preflight_key(), a.clone().preflight_key());
        assert_eq!(a.preflight_key().len(), 40);
    }

    #[test]
    fn the_test_runner_is_detected_from_the_projects_own_files() {
        let project = |files: &[(&str, &str)]| {
            let files: Vec<(String, String)> = files
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect();
            detect_test_runner(&move |name: &str| {
                files
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, t)| t.clone())
            })
            .map(|r| (r.command, r.from))
        };
        let found = |command: &str, from: &str| Some((command.to_string(), from.to_string()));
        assert_eq!(
            project(&[("Cargo.toml", "[package]"), ("Makefile", "test:\n")]),
            found("cargo test", "Cargo.toml")
        );
        assert_eq!(
            project(&[("pyproject.toml", "[tool.pytest.ini_options]\n")]),
            found("python -m pytest", "pyproject.toml")
        );
        assert_eq!(
            project(&[("pyproject.toml", "[project]\nname = \"x\"\n")]),
            None
        );
        assert_eq!(
            project(&[("setup.cfg", "[tool:pytest]\n")]),
            found("python -m pytest", "setup.cfg")
        );
        assert_eq!(
            project(&[("conftest.py", "")]),
            found("python -m pytest", "conftest.py")
        );
        assert_eq!(
            project(&[("package.json", r#"{"scripts": {"test": "jest"}}"#)]),
            found("npm test", "package.json's \"test\" script")
        );
        assert_eq!(
            project(&[(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#
            )]),
            None
        );
        assert_eq!(
            project(&[("go.mod", "module x\n")]),
            found("go test ./...", "go.mod")
        );
        assert_eq!(
            project(&[("Makefile", "build:\n\tcc x.c\ntest: build\n\t./t\n")]),
            found("make test", "the Makefile's test target")
        );
        assert_eq!(project(&[("Makefile", "build:\n")]), None);
        assert_eq!(project(&[]), None);
    }

    #[test]
    fn the_initial_file_parses_to_what_it_says() {
        let text = initial_file("main", FirstGate::Given("sh -c 'make test'"));
        let config = parse(&text).unwrap();
        assert_eq!(config.main_branch.as_deref(), Some("main"));
        assert_eq!(config.preflight[0].command, "sh -c 'make test'");
        assert!(
            parse(&initial_file("trunk", FirstGate::None))
                .unwrap()
                .preflight
                .is_empty()
        );
        let runner = TestRunner {
            command: "python -m pytest".into(),
            from: "pyproject.toml".into(),
        };
        let detected = initial_file("main", FirstGate::Detected(&runner));
        assert!(
            detected.contains("# Detected from pyproject.toml"),
            "{detected}"
        );
        let config = parse(&detected).unwrap();
        assert_eq!(config.preflight[0].name, "tests");
        assert_eq!(config.preflight[0].command, "python -m pytest");
        // The commented [review] example is valid once uncommented.
        let uncommented: String = text
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let config = parse(&uncommented).unwrap();
        assert_eq!(
            config.review.policy().command.as_deref(),
            Some("./tools/review.sh")
        );
        assert_eq!(
            config.review.policy().dimensions,
            vec!["correctness", "security"]
        );
    }

    #[test]
    fn review_presets_and_the_keys_that_override_them() {
        let policy = |text: &str| parse(text).unwrap().review.policy();
        let none = policy("");
        assert_eq!(
            (
                none.command,
                none.dimensions.len(),
                none.human,
                none.max_rounds
            ),
            (None, 0, false, 3)
        );
        assert_eq!(none.block_on, vec![Priority::P0, Priority::P1]);
        assert_eq!(none.timeout, DEFAULT_TIMEOUT);
        let code = policy("[review]\npreset = \"code-review\"\n");
        assert_eq!(code.dimensions, ALL_DIMENSIONS.to_vec());
        assert!(!code.human);
        let audit = policy("[review]\npreset = \"security-audit\"\n");
        assert_eq!(
            audit.dimensions,
            vec!["security", "resilience", "correctness"]
        );
        assert!(audit.human);
        let quick = policy("[review]\npreset = \"quick-review\"\n");
        assert_eq!(quick.dimensions, vec!["correctness", "security"]);
        let overridden = policy(
            "[review]\npreset = \"security-audit\"\nhuman = false\ndimensions = [\"security\"]\n\
             block_on = [\"P0\"]\nmax_rounds = 5\ntimeout = \"2m\"\ncommand = \"review\"\n",
        );
        assert_eq!(overridden.dimensions, vec!["security"]);
        assert!(!overridden.human, "an explicit key beats the preset");
        assert_eq!(
            (overridden.block_on, overridden.max_rounds),
            (vec![Priority::P0], 5)
        );
        assert_eq!(overridden.timeout, Duration::from_secs(120));
        assert_eq!(overridden.command.as_deref(), Some("review"));
    }

    #[test]
    fn protected_paths_are_pathspecs_and_bad_ones_are_errors() {
        let config = Config::parse(
            "[gates]\nprotected = [\"run_tests.sh\", \"ci/**\"]\n[review]\ncommand = \"sh tools/review.sh\"\n",
            &Origin::WorkingTree,
        )
        .expect("valid");
        assert_eq!(
            config.protected_pathspecs(&["tools/review.sh".to_string()]),
            vec![
                ":(literal).orchestrate.toml",
                ":(literal)tools/review.sh",
                ":(glob)run_tests.sh",
                ":(glob)ci/**"
            ]
        );
        for bad in ["\"\"", "\"/etc/passwd\"", "\"../x\"", "\":(top)x\""] {
            let err = Config::parse(
                &format!("[gates]\nprotected = [{bad}]\n"),
                &Origin::WorkingTree,
            )
            .expect_err(bad);
            assert!(
                err.message.starts_with("gates.protected[0]: "),
                "{bad}: {}",
                err.message
            );
        }
        assert!(Config::parse("[gates]\nprotect = []\n", &Origin::WorkingTree).is_err());
    }

    #[test]
    fn bad_review_settings_are_errors() {
        let err = |text: &str| parse(text).unwrap_err();
        assert!(err("[review]\npreset = \"thorough\"\n").contains("unknown variant `thorough`"));
        assert!(err("[review]\nblock_on = [\"P9\"]\n").contains("unknown variant `P9`"));
        assert!(
            err("[review]\nmax_rounds = 0\n").ends_with("review.max_rounds: must be at least 1")
        );
        assert!(
            err("[review]\ndimensions = [\"a\", \"a\"]\n")
                .ends_with("review.dimensions: \"a\" is listed twice")
        );
        assert!(err("[review]\ncommand = \"\"\n").contains("must not be empty"));
        assert!(err("[review]\nreviewers = 2\n").contains("unknown field `reviewers`"));
    }
}
