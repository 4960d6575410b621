//! The sections of `.orchestrate.toml` (docs/config.md): one type a section, with its
//! defaults.

use std::time::Duration;

use serde::Deserialize;

use super::values::*;
use crate::workflow::Thresholds;
use crate::workflow::review::Priority;

pub(super) const DEFAULT_MASTER_PLAN: &str = "docs/Plan_Doc/Active_Plan.md";
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_OUTPUT_TAIL: usize = 200;

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

/// `[claims]` (docs/config.md, "[claims]"): how long a claim on a PR holds without a
/// `sync` renewing it before another workflow may take it over (docs/refs.md, "Claims").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimsConfig {
    #[serde(default = "default_claim_ttl", deserialize_with = "duration")]
    pub ttl: Duration,
}

impl Default for ClaimsConfig {
    fn default() -> Self {
        ClaimsConfig {
            ttl: default_claim_ttl(),
        }
    }
}

fn default_claim_ttl() -> Duration {
    Duration::from_secs(2 * 60 * 60)
}

/// `[archive]` (docs/config.md, "[archive]"): whether `sync` archives the finished workflows
/// by itself, and from how many on (docs/refs.md, "The archive").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveConfig {
    /// Off unless asked: archiving deletes live refs, which a team decides to do.
    #[serde(default)]
    pub auto: bool,
    /// With `auto`: `sync` archives once at least this many live workflows are finished.
    #[serde(default = "default_archive_after", deserialize_with = "positive_u32")]
    pub after: u32,
}

impl Default for ArchiveConfig {
    fn default() -> Self {
        ArchiveConfig {
            auto: false,
            after: default_archive_after(),
        }
    }
}

fn default_archive_after() -> u32 {
    100
}

/// `[agent]` (docs/config.md, "[agent]"): how the agent hooks behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The Stop hook lets the agent stop after this many consecutive blocked stops with no
    /// transition in between, so a misbehaving loop ends.
    #[serde(default = "default_max_stop_blocks", deserialize_with = "positive_u32")]
    pub max_stop_blocks: u32,
    /// The ticket role (docs/tickets.md) this checkout's agent plays when no `--role` or
    /// `GIT_ORCHESTRATE_ROLE` says: `manager` or `developer`.
    #[serde(default)]
    pub role: Option<crate::workflow::ticket::Role>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_stop_blocks: default_max_stop_blocks(),
            role: None,
        }
    }
}

fn default_max_stop_blocks() -> u32 {
    3
}

/// `[human]` (docs/config.md, "[human]"): what a human's answer (`approve`, `reject`,
/// `resume`, `repin`) must carry. Read from the PR's pinned file, which the agent cannot
/// change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanConfig {
    #[serde(default)]
    pub require: HumanProof,
}

/// What authorises a human's answer (docs/integrity.md, "Signed human answers").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HumanProof {
    /// A terminal on stdin, or `GIT_ORCHESTRATE_HUMAN=1`: recorded, not proven.
    #[default]
    Attribution,
    /// An SSH signature by a key of the pinned `.orchestrate/allowed_signers`.
    Signature,
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

/// `[attest]` (docs/config.md, "[attest]"): what the verifier off the agent's machine (CI,
/// the git server's hook) reads from main's configuration as the judged repository has it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttestConfig {
    /// Who may move main without a workflow: `key:SHA256:…` (the key of a signed push's
    /// certificate, good and with a fresh nonce) or `user:NAME` (the identity the server
    /// sets in `REMOTE_USER`).
    #[serde(default)]
    pub humans: Vec<String>,
    /// A private SSH key on the verifier's machine that signs each verdict
    /// (`ssh-keygen -Y sign`, namespace `git-orchestrate-attest`).
    #[serde(default)]
    pub signing_key: Option<String>,
}

impl AttestConfig {
    pub(super) fn validate(&self) -> Result<(), String> {
        for (i, human) in self.humans.iter().enumerate() {
            let named = match human.split_once(':') {
                Some(("key", key)) => key.starts_with("SHA256:") && key.len() > "SHA256:".len(),
                Some(("user", user)) => !user.is_empty(),
                _ => false,
            };
            if !named || human.chars().any(|c| c.is_control() || c.is_whitespace()) {
                return Err(format!(
                    "attest.humans[{i}]: {human:?} names nobody; write \"key:SHA256:…\" (a signed \
                     push's key, as `ssh-keygen -lf KEY` prints it) or \"user:NAME\" (the server's \
                     REMOTE_USER)"
                ));
            }
        }
        if self
            .signing_key
            .as_deref()
            .is_some_and(|k| k.trim().is_empty())
        {
            return Err(
                "attest.signing_key: empty; name a private key file or leave it out".into(),
            );
        }
        Ok(())
    }

    /// The entry that names this pusher, if one does.
    pub fn human<'a>(&'a self, key: Option<&str>, user: Option<&str>) -> Option<&'a str> {
        self.humans
            .iter()
            .map(String::as_str)
            .find(|h| match h.split_once(':') {
                Some(("key", k)) => key == Some(k),
                Some(("user", u)) => user == Some(u),
                _ => false,
            })
    }
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

    pub(super) fn validate(&self) -> Result<(), String> {
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
    pub(super) fn validate(&self) -> Result<(), String> {
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

pub(super) fn default_master_plan() -> String {
    DEFAULT_MASTER_PLAN.to_string()
}

fn default_timeout() -> Duration {
    DEFAULT_TIMEOUT
}

fn default_output_tail() -> usize {
    DEFAULT_OUTPUT_TAIL
}

/// `[verify]` (docs/config.md, "[verify]"): how hard the final check leans on each task's
/// pinned RED test (docs/integrity.md, "Adequacy by mutation", "Repeat").
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyConfig {
    /// Whether the final check measures each task's test against mutants of the code the
    /// task wrote, and whether a weak one refuses the squash.
    #[serde(default)]
    pub adequacy: Adequacy,
    /// The share of a task's mutants its test must kill under `enforce`, in thousandths
    /// (written as a fraction, `0.5`): kept whole so the config compares exactly.
    #[serde(default = "default_min_killed", deserialize_with = "fraction")]
    pub min_killed: u32,
    /// Mutants run per task at most.
    #[serde(default = "default_max_mutants", deserialize_with = "positive")]
    pub max_mutants: usize,
    /// Time the mutants of one task may take in all; those not run by then are not counted.
    #[serde(default = "default_mutation_timeout", deserialize_with = "duration")]
    pub mutation_timeout: Duration,
    /// Which tool makes the mutants: the project's own where it fits, or the built-in one.
    #[serde(default)]
    pub mutation_tool: MutationTool,
    /// How many times the final check runs each RED proof; the runs must agree.
    #[serde(default = "default_runs", deserialize_with = "positive_u32")]
    pub runs: u32,
    /// What `attest` and the server hook make of a PR's or a ticket's final check that
    /// recorded no proof plan (docs/integrity.md, layer 10, step 4).
    #[serde(default)]
    pub recorded_plans: RecordedPlans,
}

/// `[verify] recorded_plans`. Read from the pinned configuration, so the PR or ticket
/// judged cannot choose it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordedPlans {
    /// A merge whose final check recorded no plan FAILS: removing the plans from a chain
    /// gains an agent nothing. `init` writes it into new repositories.
    Require,
    /// It is a warning, and the plan the chain gives is run: chains made before plans were
    /// recorded still attest. What a configuration without the key means.
    #[default]
    Warn,
}

/// `[verify] adequacy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Adequacy {
    Off,
    /// The final note names the share killed and the surviving mutants.
    #[default]
    Report,
    /// And a task whose share is below `min_killed` refuses the squash.
    Enforce,
}

/// `[verify] mutation_tool`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MutationTool {
    /// For a task whose code is Python: mutmut when the commands' PATH has it, else
    /// cosmic-ray when it has that; for one whose code is JavaScript or TypeScript, Stryker
    /// when the PATH has it; for one whose code is Rust, cargo-mutants when the PATH has it
    /// (and cargo); else the built-in mutator.
    #[default]
    Auto,
    /// mutmut for a task whose code is Python; where it cannot be run, the built-in mutator,
    /// and the note says why.
    Mutmut,
    /// cosmic-ray, as mutmut is asked for.
    #[serde(rename = "cosmic-ray")]
    CosmicRay,
    /// Stryker, for JavaScript and TypeScript, as mutmut is asked for.
    Stryker,
    /// cargo-mutants, for Rust, as mutmut is asked for.
    #[serde(rename = "cargo-mutants")]
    CargoMutants,
    /// The built-in line mutator always.
    Builtin,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            adequacy: Adequacy::default(),
            min_killed: default_min_killed(),
            max_mutants: default_max_mutants(),
            mutation_timeout: default_mutation_timeout(),
            mutation_tool: MutationTool::default(),
            runs: default_runs(),
            recorded_plans: RecordedPlans::default(),
        }
    }
}

fn default_min_killed() -> u32 {
    500
}

fn default_max_mutants() -> usize {
    20
}

fn default_mutation_timeout() -> Duration {
    Duration::from_secs(60)
}

fn default_runs() -> u32 {
    2
}

/// A fraction from 0 to 1, in thousandths.
fn fraction<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let x = f64::deserialize(d)?;
    if !(0.0..=1.0).contains(&x) {
        return Err(serde::de::Error::custom(
            "must be a fraction from 0 to 1 (0.5: half the mutants killed)",
        ));
    }
    // In range: the product is 0..=1000.
    Ok((x * 1000.0).round() as u32)
}
