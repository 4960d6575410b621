//! Ticket mode (docs/tickets.md): `ticket.json`, the pure state machine of a manager and a
//! developer, the checks of their tools' input, what a developer's report contradicts, and
//! both roles' briefings. Nothing here touches git or processes; the engine observes a
//! report's commit and feeds the observation in.

pub mod attest;
mod input;
mod machine;
mod replay;
pub mod start;
#[cfg(test)]
mod tests;
mod text;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use input::{
    AssignmentFlags, Completion, ReportFlags, Tool, UpdateFlags, parse_assignment,
    parse_complete_ticket, parse_report, parse_update, read_assignment, read_completion,
    read_report, read_update, tool_schema,
};
pub use machine::{Action, Recorded, Refusal, apply, check, replay as replay_recorded};
pub use replay::{Before, Forgery, replay};
pub use text::{briefing, contradictions, legal_next, observed_lines};

/// Where a repository's prompt files live (read as main has them at the ticket's pin).
pub const PROMPTS_DIR: &str = ".orchestrate/prompts";

/// The only `ticket.json` schema this version reads and writes.
pub const TICKET_SCHEMA: u32 = 1;

/// The roles and the variable naming a session's role are the guard's, which enforces them.
pub use git_orchestrate_guard::product::{ROLE_ENV, Role};

/// The most items a list of a tool's input holds: far above an honest assignment or report,
/// and low enough that comparing them stays cheap.
pub const MAX_ITEMS: usize = 1000;

/// How often a subtask may be rejected before it is blocked (docs/tickets.md: the third rejection).
pub const MAX_REJECTIONS: u32 = 3;

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TicketState {
    /// The manager decides: assign, verify a report, or complete the ticket.
    #[serde(rename = "MANAGER")]
    Manager,
    /// A subtask is assigned: the developer works and reports.
    #[serde(rename = "DEVELOPER")]
    Developer,
    #[serde(rename = "TICKET_DONE")]
    TicketDone,
    /// Only a human moves it on (`resume`): a merge that conflicted, or a role `run` found
    /// stuck.
    #[serde(rename = "HALTED")]
    Halted,
}

impl TicketState {
    pub fn as_str(self) -> &'static str {
        match self {
            TicketState::Manager => "MANAGER",
            TicketState::Developer => "DEVELOPER",
            TicketState::TicketDone => "TICKET_DONE",
            TicketState::Halted => "HALTED",
        }
    }

    /// The role whose turn it is, if anyone's.
    pub fn role(self) -> Option<Role> {
        match self {
            TicketState::Manager => Some(Role::Manager),
            TicketState::Developer => Some(Role::Developer),
            TicketState::TicketDone | TicketState::Halted => None,
        }
    }
}

/// The developer mode an assignment activates (docs/tickets.md).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Implementation,
    Testing,
    WriteTests,
}

impl Mode {
    pub const NAMES: [&'static str; 3] = ["implementation", "testing", "write-tests"];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Implementation => "implementation",
            Mode::Testing => "testing",
            Mode::WriteTests => "write-tests",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "implementation" => Some(Mode::Implementation),
            "testing" => Some(Mode::Testing),
            "write-tests" => Some(Mode::WriteTests),
            _ => None,
        }
    }
}

/// `assign` (`assign_to_developer`, docs/tickets.md), as validated: its derived schema is
/// the tool's parameters, and the rules its fields carry are what `input` checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Assignment {
    #[schemars(description = "The developer mode to activate")]
    pub mode: Mode,
    #[schemars(
        description = "Clear description of what the developer should accomplish",
        extend("x-text" = "summary")
    )]
    pub goal: String,
    #[serde(default)]
    #[schemars(
        description = "File paths the developer should read before making changes",
        length(max = MAX_ITEMS),
        extend("x-text" = "summary", "x-repo-path" = true)
    )]
    pub files_to_inspect: Vec<String>,
    #[serde(default)]
    #[schemars(
        description = "File paths (globs) the developer is expected to create or modify; a \
                       change outside them is reported to you",
        length(max = MAX_ITEMS),
        extend("x-text" = "summary", "x-repo-path" = true)
    )]
    pub files_to_modify: Vec<String>,
    #[schemars(
        description = "List of criteria that must be met for the subtask to be complete",
        length(min = 1, max = MAX_ITEMS),
        extend("x-text" = "summary")
    )]
    pub acceptance_criteria: Vec<String>,
    #[serde(default)]
    #[schemars(
        description = "Context from previous attempts or dependent subtasks (required, and \
                       new, to reassign a blocked subtask)",
        extend("x-text" = "report")
    )]
    pub prior_context: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Rules or patterns the developer must follow",
        length(max = MAX_ITEMS),
        extend("x-text" = "summary")
    )]
    pub constraints: Vec<String>,
}

impl Assignment {
    /// True when `path` is inside the assignment's scope: it matches a `filesToModify`
    /// glob. An assignment that names no file to modify sets no scope.
    pub fn allows(&self, path: &str) -> bool {
        self.files_to_modify.is_empty()
            || self
                .files_to_modify
                .iter()
                .any(|pattern| pattern == path || crate::glob::glob_match(pattern, path))
    }
}

/// `update-subtask` (`update_subtask`, docs/tickets.md), as validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    #[schemars(description = "The new status for the subtask")]
    pub status: UpdateStatus,
    #[schemars(
        description = "Reason for the status change, feedback, or blocker details",
        extend("x-text" = "notes")
    )]
    pub notes: String,
    /// Accepts a report whose observation contradicts it, for this reason (recorded).
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Accept a report whose observed result contradicts it, for this reason \
                       (recorded)",
        extend("x-text" = "summary")
    )]
    pub override_reason: Option<String>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum UpdateStatus {
    Complete,
    Rejected,
    Blocked,
}

impl UpdateStatus {
    pub const NAMES: [&'static str; 3] = ["complete", "rejected", "blocked"];

    pub fn as_str(self) -> &'static str {
        match self {
            UpdateStatus::Complete => "complete",
            UpdateStatus::Rejected => "rejected",
            UpdateStatus::Blocked => "blocked",
        }
    }
}

/// `subtask-complete` (`subtask_complete`, docs/tickets.md), as validated; `commit` is the commit
/// the report delivers, resolved by the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Report {
    #[schemars(description = "Whether the work was completed successfully or is blocked")]
    pub status: ReportStatus,
    #[schemars(
        description = "List of files that were created or modified",
        length(max = MAX_ITEMS)
    )]
    pub files_changed: Vec<FileChanged>,
    #[schemars(description = "Whether the solution builds successfully")]
    pub build_status: BuildStatus,
    #[serde(default)]
    #[schemars(description = "Test results if tests were run (testing/write-tests modes)")]
    pub test_results: Option<TestResults>,
    #[schemars(description = "Summary of what was done", extend("x-text" = "message"))]
    pub message: String,
    #[serde(default)]
    #[schemars(description = "Details about what is blocking progress (if status is 'blocked')")]
    pub blocker_details: Option<BlockerDetails>,
    /// As given (a revision); the engine resolves it before the report is stored.
    #[serde(default = "head")]
    #[schemars(
        description = "The commit this report delivers: the tip of the ticket's branch \
                       (default HEAD)",
        extend("x-text" = "summary", "x-revision" = true)
    )]
    pub commit: String,
}

/// The revision a report delivers when it names none.
fn head() -> String {
    "HEAD".to_string()
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ReportStatus {
    Complete,
    Blocked,
}

impl ReportStatus {
    pub const NAMES: [&'static str; 2] = ["complete", "blocked"];

    pub fn as_str(self) -> &'static str {
        match self {
            ReportStatus::Complete => "complete",
            ReportStatus::Blocked => "blocked",
        }
    }
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum BuildStatus {
    Pass,
    Fail,
}

impl BuildStatus {
    pub const NAMES: [&'static str; 2] = ["pass", "fail"];

    pub fn as_str(self) -> &'static str {
        match self {
            BuildStatus::Pass => "pass",
            BuildStatus::Fail => "fail",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileChanged {
    #[schemars(extend("x-text" = "summary", "x-repo-path" = true))]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-text" = "summary"))]
    pub summary: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestResults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockerDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-text" = "report"))]
    pub issue: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ITEMS), extend("x-text" = "summary"))]
    pub tried: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-text" = "report"))]
    pub needed: Option<String>,
}

/// What a report claims of the results (docs/tickets.md): kept beside what was observed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claimed {
    pub commit: String,
    pub build_status: BuildStatus,
    #[serde(default)]
    pub test_results: Option<TestResults>,
    pub files_changed: Vec<String>,
}

impl Claimed {
    pub fn of(report: &Report) -> Claimed {
        Claimed {
            commit: report.commit.clone(),
            build_status: report.build_status,
            test_results: report.test_results,
            files_changed: report
                .files_changed
                .iter()
                .map(|f| f.path.clone())
                .collect(),
        }
    }
}

/// What git-orchestrate saw when it ran a report's commit itself, in fresh worktrees
/// (docs/tickets.md, "`subtask-complete`").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    /// The commit the report delivers (the branch's tip when it was reported).
    pub commit: String,
    /// The subtask's base: the branch's tip when it was first assigned.
    pub base: String,
    /// The pinned gates on the commit.
    pub gates: GateResult,
    /// The test files the subtask added or changed (`[gates] test_paths`).
    pub tests: Vec<String>,
    /// The gates on the base with only those test files put in: they must fail, or the tests
    /// do not test the change. `None` when the subtask touched no test file.
    #[serde(default)]
    pub tests_on_base: Option<GateResult>,
    /// Every path the commit changes since the base.
    pub files_changed: Vec<String>,
    /// The changed paths that no `filesToModify` glob matches.
    pub outside_scope: Vec<String>,
    /// Changed paths the pinned configuration protects (`[gates] protected`, the
    /// configuration itself, the prompt files): never a subtask's to change.
    #[serde(default)]
    pub protected: Vec<String>,
    /// Test files the subtask removed.
    #[serde(default)]
    pub removed_tests: Vec<String>,
    /// Symbolic links the subtask adds or changes that point out of the repository, each
    /// with why: what the commit holds would depend on a file it does not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links_out: Vec<String>,
}

/// The gates' verdict on one tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateResult {
    /// `pass`, `fail`, or `none` when no gate is configured (which never counts as a pass).
    pub result: GateVerdict,
    /// The gates that ran, in order.
    pub ran: Vec<String>,
    /// The first gate that failed, its exit, and the tail of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedGate>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateVerdict {
    Pass,
    Fail,
    None,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedGate {
    pub gate: String,
    pub exit: String,
    pub tail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubtaskStatus {
    Todo,
    InProgress,
    Complete,
    Rejected,
    Blocked,
}

impl SubtaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SubtaskStatus::Todo => "todo",
            SubtaskStatus::InProgress => "in-progress",
            SubtaskStatus::Complete => "complete",
            SubtaskStatus::Rejected => "rejected",
            SubtaskStatus::Blocked => "blocked",
        }
    }
}

/// One subtask of a ticket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subtask {
    /// `S1`, `S2`, …: the orchestrator numbers them, so agents need not track ids.
    pub id: String,
    /// A title given at `ticket new --subtask`, else the first assignment's goal.
    pub title: String,
    pub status: SubtaskStatus,
    pub rejections: u32,
    /// How often it was assigned.
    pub assignments: u32,
    /// The branch's tip when it was first assigned: what its diff and its tests are judged
    /// against.
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub assignment: Option<Assignment>,
    /// Every `priorContext` it was assigned with: a blocked subtask is reassigned only with
    /// one unlike all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prior_contexts: Vec<String>,
    /// The developer's last report: what was **claimed**.
    #[serde(default)]
    pub report: Option<Report>,
    /// What the developer's report claims of the results, beside [`Subtask::observed`].
    #[serde(default)]
    pub claimed: Option<Claimed>,
    /// What the orchestrator saw at the report's commit.
    #[serde(default)]
    pub observed: Option<Observed>,
    /// Where the claim and the observation disagree, as the manager's briefing says it.
    #[serde(default)]
    pub contradictions: Vec<String>,
    /// True from a report until the manager's `update-subtask`.
    #[serde(default)]
    pub awaiting_verification: bool,
    /// The manager's last notes.
    #[serde(default)]
    pub notes: Option<String>,
    /// Why the manager accepted a contradicted report, when it did.
    #[serde(default)]
    pub override_reason: Option<String>,
    /// The commit accepted as complete.
    #[serde(default)]
    pub accepted: Option<String>,
}

impl Subtask {
    fn new(id: String, title: String) -> Subtask {
        Subtask {
            id,
            title,
            status: SubtaskStatus::Todo,
            rejections: 0,
            assignments: 0,
            base: None,
            assignment: None,
            prior_contexts: Vec::new(),
            report: None,
            claimed: None,
            observed: None,
            contradictions: Vec::new(),
            awaiting_verification: false,
            notes: None,
            override_reason: None,
            accepted: None,
        }
    }
}

/// One line of the ticket's activity log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Seconds since the epoch.
    pub at: i64,
    /// `manager`, `developer`, `human` or `orchestrator`.
    pub by: String,
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtask: Option<String>,
    pub text: String,
}

/// A finished ticket: the squashed commit and the merge that put it on main.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finished {
    pub squash: String,
    #[serde(default)]
    pub merge: Option<String>,
    pub summary: String,
}

/// `ticket.json`: a ticket workflow's whole state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ticket {
    pub schema: u32,
    pub title: String,
    pub body: String,
    pub state: TicketState,
    pub main_branch: String,
    pub branch: String,
    /// main's tip when the ticket began: the branch's base, the squash's parent.
    pub pin: String,
    /// The blob of `.orchestrate.toml` at the pin: the gates every report is checked under.
    #[serde(default)]
    pub config: Option<String>,
    /// The branch's tip as verified: the pin, then each accepted subtask's commit. A new
    /// subtask starts here, and the ticket completes only from here.
    pub verified: String,
    /// The subtask assigned or waiting for the manager, if one is.
    #[serde(default)]
    pub current: Option<String>,
    pub subtasks: Vec<Subtask>,
    pub activity: Vec<Activity>,
    #[serde(default)]
    pub finished: Option<Finished>,
    /// Why it halted, while it is halted.
    #[serde(default)]
    pub halt: Option<String>,
    /// The squashed commit `complete-ticket` made and checked, recorded before it lands:
    /// only `complete-ticket` may act until it is merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finishing: Option<String>,
    /// The state it halted from, while it is halted: `resume` returns there (a developer
    /// `run` found stuck goes back to its assignment, not to the manager).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted_from: Option<TicketState>,
}

impl Ticket {
    /// A new ticket on `branch`, from main's `pin`; `subtasks` are titles planned ahead
    /// (`todo`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        title: String,
        body: String,
        main_branch: String,
        branch: String,
        pin: String,
        config: Option<String>,
        subtasks: &[String],
        now: i64,
    ) -> Ticket {
        let subtasks = subtasks
            .iter()
            .enumerate()
            .map(|(i, t)| Subtask::new(format!("S{}", i + 1), t.clone()))
            .collect();
        Ticket {
            schema: TICKET_SCHEMA,
            activity: vec![Activity {
                at: now,
                by: "human".into(),
                event: "ticket-new".into(),
                subtask: None,
                text: format!("ticket created on branch {branch} from {main_branch}"),
            }],
            title,
            body,
            state: TicketState::Manager,
            main_branch,
            branch,
            verified: pin.clone(),
            pin,
            config,
            current: None,
            subtasks,
            finished: None,
            halt: None,
            finishing: None,
            halted_from: None,
        }
    }

    pub fn subtask(&self, id: &str) -> Option<&Subtask> {
        self.subtasks.iter().find(|s| s.id == id)
    }

    pub fn current(&self) -> Option<&Subtask> {
        self.current.as_deref().and_then(|id| self.subtask(id))
    }

    fn current_mut(&mut self) -> Option<&mut Subtask> {
        let id = self.current.clone()?;
        self.subtasks.iter_mut().find(|s| s.id == id)
    }

    /// Parses `ticket.json`; an unknown schema is an error, never a guess.
    pub fn from_json(bytes: &[u8]) -> Result<Ticket, String> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
        match value.get("schema").and_then(serde_json::Value::as_u64) {
            Some(n) if n == u64::from(TICKET_SCHEMA) => {}
            Some(n) => {
                return Err(format!(
                    "schema {n} is not understood by this git-orchestrate (it reads schema \
                     {TICKET_SCHEMA}); upgrade git-orchestrate"
                ));
            }
            None => return Err("the `schema` field is missing".into()),
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// True when every subtask is complete and there is at least one.
    pub fn all_complete(&self) -> bool {
        !self.subtasks.is_empty()
            && self
                .subtasks
                .iter()
                .all(|s| s.status == SubtaskStatus::Complete)
    }
}
