//! What the verification notes say (docs/refs.md, "refs/notes/orchestrator"): one JSON object per line, so that notes
//! written in two clones merge by union. A checkpoint note records the preflight run that
//! verified a checkpoint commit's tree; the final note sums up a squashed PR.

use serde::{Deserialize, Serialize};

use super::review::Finding;
use super::state::{ExitRecord, GateRecord};

/// The note format this version writes; lines with another `v` are kept but not read.
pub const NOTE_VERSION: u32 = 1;

/// The program and version that wrote a record.
pub fn tool() -> String {
    format!("git-orchestrate {}", env!("CARGO_PKG_VERSION"))
}

/// One gate's result as a note records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteGate {
    pub name: String,
    /// The exit code; `null` when the gate was killed (then `signal` or `timeout_ms` says how).
    pub exit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    pub ms: u64,
    /// The test command's passing run on this tree stood for the gate's (it is the same
    /// command): the gate was not run a second time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
}

impl NoteGate {
    /// How the gate ended; `None` for a note that records none of the three.
    pub fn exit_record(&self) -> Option<ExitRecord> {
        match (self.exit, self.signal, self.timeout_ms) {
            (Some(code), _, _) => Some(ExitRecord::Code(code)),
            (None, Some(signal), _) => Some(ExitRecord::Signal(signal)),
            (None, None, Some(after_ms)) => Some(ExitRecord::TimedOut { after_ms }),
            (None, None, None) => None,
        }
    }
}

impl From<&GateRecord> for NoteGate {
    fn from(g: &GateRecord) -> Self {
        let (mut exit, mut signal, mut timeout_ms) = (None, None, None);
        match g.exit {
            ExitRecord::Code(code) => exit = Some(code),
            ExitRecord::Signal(s) => signal = Some(s),
            ExitRecord::TimedOut { after_ms } => timeout_ms = Some(after_ms),
        }
        NoteGate {
            name: g.name.clone(),
            exit,
            signal,
            timeout_ms,
            ms: g.ms,
            reused: g.reused,
        }
    }
}

/// The preflight behind a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePreflight {
    pub passed: bool,
    /// True when the gates did not run for this commit because they had passed on exactly
    /// this tree with exactly these gates before; `gates` are that earlier run's.
    pub cached: bool,
    /// Empty when no gates are configured: a pass that proves nothing, and reported so.
    pub gates: Vec<NoteGate>,
}

/// `{"v":1,"kind":"checkpoint",…}`: a checkpoint commit whose tree passed preflight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointNote {
    pub v: u32,
    pub kind: String,
    pub workflow: String,
    /// The plan step the checkpoint completed, when the workflow was waiting for one.
    pub step: Option<String>,
    pub tree: String,
    pub preflight: NotePreflight,
    /// Identifies the gate configuration that passed (the same gates give the same key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight_key: Option<String>,
    pub tool: String,
}

impl CheckpointNote {
    pub fn new(
        workflow: &str,
        step: Option<String>,
        tree: &str,
        preflight: NotePreflight,
        preflight_key: &str,
    ) -> Self {
        CheckpointNote {
            v: NOTE_VERSION,
            kind: "checkpoint".into(),
            workflow: workflow.to_string(),
            step,
            tree: tree.to_string(),
            preflight,
            preflight_key: Some(preflight_key.to_string()),
            tool: tool(),
        }
    }

    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a note serializes: plain data")
    }

    /// True when this record says `tree` passed its gates: `passed`, and every gate it
    /// lists exited 0 (a record that says it passed with a failing gate is not believed).
    pub fn passes(&self, tree: &str) -> bool {
        self.preflight.passed
            && self.tree == tree
            && self.preflight.gates.iter().all(|g| g.exit == Some(0))
    }
}

/// A checkpoint folded into the final note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedCheckpoint {
    pub commit: String,
    pub subject: String,
    /// Its checkpoint note, or `null` when it has none (made with `--no-verify`, say).
    pub note: Option<CheckpointNote>,
}

/// The review as the final note records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalReview {
    pub rounds: u32,
    /// False when no review command is configured.
    pub ran: bool,
    /// The last round's findings: none of them blocked.
    pub findings: Vec<Finding>,
}

/// `{"v":1,"kind":"final",…}`: the squashed commit of a PR, with what verified it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalNote {
    pub v: u32,
    pub kind: String,
    pub workflow: String,
    pub pr: String,
    pub branch: String,
    pub tree: String,
    pub steps: usize,
    pub review: Option<FinalReview>,
    pub checkpoints: Vec<FoldedCheckpoint>,
    /// The PR changes `.orchestrate.toml`: its gates take effect once it is merged (docs/config.md, "Which file is in force").
    pub config_changed: bool,
    /// The humans' answers during the PR (`approve`, `reject`, `resume`), oldest first, with
    /// how each was authorised (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub human_answers: Vec<HumanAnswer>,
    /// Tasks whose checkpoints changed nothing (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_tasks: Vec<String>,
    /// Final checks refused before this one passed (docs/integrity.md): a RED test that
    /// passes only now and then, or an agent that squashed until one did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub final_checks_refused: usize,
    /// What the final check says the squashed commit's verification rests on:
    /// `not verified: no gates` when no gate is configured (docs/integrity.md).
    #[serde(default)]
    pub verification: String,
    /// Every task's pinned RED test, run on the PR's base and on the squashed commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_tests: Vec<RedProof>,
    /// Each task's pinned test against mutants of the code it wrote (docs/integrity.md,
    /// "Adequacy by mutation"): the share killed and the mutants that survived.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adequacy: Vec<TaskAdequacy>,
    /// GREEN steps that had changed their task's RED test: it was judged as the RED step
    /// left it (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edited_red_tests: Vec<PathsOfStep>,
    /// RED steps that changed no file: the test they ran was there before the task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reds_without_a_test: Vec<String>,
    /// Tests the PR adds that no RED step pinned (written at a GREEN or REFACTOR step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpinned_tests: Vec<String>,
    /// Tasks without a RED step: nothing proves their tests failed first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks_without_red: Vec<String>,
    /// Tests that existed at the pin and the PR changed or removed, and how the gates fared
    /// with them put back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_tests: Option<ChangedTests>,
    /// main moved outside the workflow when the PR was squashed: what every briefing said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_moved_outside: Option<String>,
    pub tool: String,
}

/// A task's pinned RED test at the final check: it failed on the PR's base and passed on the
/// squashed commit, back to back, in one environment (a squash that counts has both).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedProof {
    pub step: String,
    pub command: String,
    /// The pinned paths put in for both runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Code files that held the test's lines at RED: put in as the RED step left them on the
    /// base only; the squashed commit's own are run (the test's lines there are not pinned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// Pinned paths the squashed commit holds otherwise than their latest pin: what was
    /// proven is the pinned test, not the one that merges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_after_red: Vec<String>,
    /// Pinned paths a later task's RED step pinned again, with that step: the squashed
    /// commit's run has them as that step left them, so this test was proven as it rewrote
    /// them (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repinned: Vec<PathsOfStep>,
    pub base: ExitRecord,
    #[serde(rename = "final")]
    pub squashed: ExitRecord,
    /// What the verdict rests on: the runner's per-test report (`junit`, `libtest`, `tap`,
    /// …) or `exit code only` (docs/integrity.md, "Per-test evidence"). Absent in notes made
    /// before evidence was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The tests, by id, that failed on the base and passed on the squashed commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
}

/// A task's pinned RED test against mutants of the code the task wrote: how many ran, how
/// many it killed (failed on), and the survivors as `path:line what`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskAdequacy {
    pub task: usize,
    pub step: String,
    /// What made the mutants: `mutmut`, `cosmic-ray`, `stryker` or `cargo-mutants` (the
    /// project's own tool) or
    /// `builtin` (the line mutator of src/workflow/mutate.rs). Notes made before there was a
    /// choice: `builtin`.
    #[serde(default = "builtin")]
    pub tool: String,
    /// Why the project's own tool was not what made them, when it was asked for or found
    /// and could not be used (`mutmut failed (exit 1): …`): the built-in mutator did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_error: Option<String>,
    pub mutants: usize,
    pub killed: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub survived: Vec<String>,
    /// Mutants left unrun when the time or mutant budget ran out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_run: usize,
    /// Why nothing was measured (`the test fails on the task's own code`), when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
    /// The same, per code file with mutants (run or not run), one file too: the files
    /// measured, named; each is judged on its own, so that kills in one cannot hide
    /// survivors in another (docs/integrity.md). Notes made before named them only where
    /// there were several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileAdequacy>,
    /// The files the task changed that were not measured, and why (`the tests do not notice
    /// it`): text not code by its name, or not text, that the task's test does not fail
    /// without, so that a reviewer sees what adequacy did not look at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<NotMeasured>,
    /// The files outside the test paths the PR's pinned RED commands run (read as shell: `sh
    /// check.sh`, `sh < t/check.sh`, `npm test`'s script) that this task's measure took as
    /// test code, never mutated and put in as the squash has them (docs/integrity.md),
    /// sorted: what the measure counted as the test besides the test paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<String>,
    /// The `package.json` scripts the PR's pinned RED commands run (`npm test`'s `test`),
    /// named `<package.json's path>: <script>`, sorted: test code too, put into this task's
    /// `package.json` as the squash has them (docs/integrity.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<String>,
}

/// A file a task changed that its adequacy did not measure, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotMeasured {
    pub path: String,
    pub why: String,
}

/// One code file's share of a task's mutants: how many ran, how many the test killed, how
/// many were left unrun.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAdequacy {
    pub path: String,
    pub mutants: usize,
    pub killed: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_run: usize,
}

impl FileAdequacy {
    /// The share of the file's mutants run that the test killed, in thousandths (all of none).
    pub fn killed_share(&self) -> u32 {
        share(self.killed, self.mutants)
    }
}

/// `killed` of `mutants` in thousandths; all of none.
fn share(killed: usize, mutants: usize) -> u32 {
    if mutants == 0 {
        return 1000;
    }
    // At most 1000: killed ≤ mutants.
    (killed * 1000 / mutants) as u32
}

fn builtin() -> String {
    "builtin".to_string()
}

impl TaskAdequacy {
    /// The share of the mutants run that the test killed, in thousandths (all of none).
    pub fn killed_share(&self) -> u32 {
        share(self.killed, self.mutants)
    }
}

/// Paths a step changed, named for a reviewer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathsOfStep {
    pub step: String,
    pub paths: Vec<String>,
}

/// Tests present at the pin that the PR changed or removed (docs/integrity.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedTests {
    pub paths: Vec<String>,
    /// `report` or `enforce` (`[gates] pinned_tests`).
    pub mode: String,
    /// The gates' verdict with those tests as they were at the pin; `None` when there are no
    /// gates to run them.
    pub passed: Option<bool>,
    /// The first gate that failed so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_gate: Option<String>,
    /// The human answers in the PR's chain that approve, for this tree, changes to some of
    /// these tests by name and that stand (docs/integrity.md, "Approved by name").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<TestApproval>,
}

/// A human's approval of changed tests by name, as the final note and `attest` list it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestApproval {
    /// The transition that records the answer.
    pub commit: String,
    /// The tests it approves, of those changed.
    pub tests: Vec<String>,
    /// `signed by alice`, or `unsigned (GIT_ORCHESTRATE_HUMAN)` where no signature is required.
    pub by: String,
}

impl ChangedTests {
    /// What the policy makes of them (docs/integrity.md, "Tests that existed at the pin"):
    /// when the gates fail with them put back, `refused` under `enforce`, and under `report`
    /// `unapproved` unless a human approved every one of them by name for this tree, then
    /// `approved`; else `reported`.
    pub fn verdict(&self) -> &'static str {
        match (self.mode.as_str(), self.passed) {
            ("enforce", Some(false)) => "refused",
            (_, Some(false)) if self.unapproved().is_empty() => "approved",
            (_, Some(false)) => "unapproved",
            _ => "reported",
        }
    }

    /// True when the policy refuses them: the final check refuses the squash and `attest`
    /// FAILS.
    pub fn refused(&self) -> bool {
        matches!(self.verdict(), "refused" | "unapproved")
    }

    /// The changed tests no approval names.
    pub fn unapproved(&self) -> Vec<String> {
        self.paths
            .iter()
            .filter(|p| !self.approvals.iter().any(|a| a.tests.contains(p)))
            .cloned()
            .collect()
    }

    /// The warning `attest` gives for tests it reports and does not refuse: the paths, the
    /// gates' result with them put back, and the policy's verdict, or the human approvals it
    /// rests on; `None` when refused (the refusal names them).
    pub fn warning(&self) -> Option<String> {
        if self.refused() {
            return None;
        }
        let put_back = match (self.passed, &self.failed_gate) {
            (Some(true), _) => "the gates pass with them as they were there".to_string(),
            (Some(false), Some(gate)) => {
                format!("with them as they were there, the gate `{gate}` fails")
            }
            (Some(false), None) => "with them as they were there, the gates fail".to_string(),
            (None, _) => "the gates were not run with them as they were there".to_string(),
        };
        let verdict = if self.verdict() == "approved" {
            format!(
                "a human approved the change by name for this tree ({})",
                self.approvals
                    .iter()
                    .map(|a| format!("{}: {}", a.tests.join(", "), a.by))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        } else {
            format!(
                "[gates] pinned_tests = \"{}\" reports this and does not refuse it",
                self.mode
            )
        };
        Some(format!(
            "the PR changes or removes tests that existed on its base ({}); {put_back}; {verdict}",
            self.paths.join(", "),
        ))
    }
}

/// One human answer in the final note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanAnswer {
    pub event: String,
    pub commit: String,
    /// `terminal` or `GIT_ORCHESTRATE_HUMAN`.
    pub by: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl FinalNote {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a note serializes: plain data")
    }
}

/// The checkpoint records in a note's text; lines of other kinds or versions, and lines
/// that are not ours, are skipped.
pub fn checkpoint_records(note: &str) -> Vec<CheckpointNote> {
    note.lines()
        .filter_map(|line| serde_json::from_str::<CheckpointNote>(line).ok())
        .filter(|r| r.v == NOTE_VERSION && r.kind == "checkpoint")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn changed(mode: &str, passed: Option<bool>, gate: Option<&str>) -> ChangedTests {
        ChangedTests {
            paths: vec!["tests/test_add.sh".into()],
            mode: mode.into(),
            passed,
            failed_gate: gate.map(str::to_string),
            approvals: Vec::new(),
        }
    }

    #[test]
    fn changed_tests_that_fail_put_back_are_refused_unless_a_human_approved_each_under_report() {
        let mut gutted = changed("report", Some(false), Some("tests"));
        assert_eq!(gutted.verdict(), "unapproved");
        assert_eq!(gutted.warning(), None);
        let approval = |tests: &[&str]| TestApproval {
            commit: "c1".into(),
            tests: tests.iter().map(|t| t.to_string()).collect(),
            by: "signed by alice".into(),
        };
        gutted.approvals = vec![approval(&["tests/other.sh"])];
        assert_eq!(gutted.verdict(), "unapproved", "another path's approval");
        gutted.approvals.push(approval(&["tests/test_add.sh"]));
        assert_eq!(gutted.verdict(), "approved");
        assert_eq!(
            gutted.warning().as_deref(),
            Some(
                "the PR changes or removes tests that existed on its base (tests/test_add.sh); \
                 with them as they were there, the gate `tests` fails; a human approved the \
                 change by name for this tree (tests/other.sh: signed by alice; \
                 tests/test_add.sh: signed by alice)"
            )
        );
        let mut enforced = changed("enforce", Some(false), Some("tests"));
        enforced.approvals = vec![approval(&["tests/test_add.sh"])];
        assert_eq!(enforced.verdict(), "refused", "no approval lifts enforce");
        let not_run = changed("report", None, None);
        assert_eq!(not_run.verdict(), "reported");
        let improved = changed("enforce", Some(true), None);
        assert_eq!(improved.verdict(), "reported");
        assert_eq!(
            improved.warning().as_deref(),
            Some(
                "the PR changes or removes tests that existed on its base (tests/test_add.sh); \
                 the gates pass with them as they were there; [gates] pinned_tests = \
                 \"enforce\" reports this and does not refuse it"
            )
        );
        let enforced = changed("enforce", Some(false), Some("tests"));
        assert_eq!(enforced.verdict(), "refused");
        assert_eq!(enforced.warning(), None);
    }

    #[test]
    fn a_checkpoint_note_is_one_line_in_the_spec_shape() {
        let note = CheckpointNote::new(
            "main",
            Some("1.2".into()),
            "t1",
            NotePreflight {
                passed: true,
                cached: false,
                gates: vec![NoteGate::from(&GateRecord {
                    name: "tests".into(),
                    exit: ExitRecord::code(0),
                    ms: 812,
                    reused: false,
                })],
            },
            "k1",
        );
        assert_eq!(
            note.to_line(),
            format!(
                r#"{{"v":1,"kind":"checkpoint","workflow":"main","step":"1.2","tree":"t1","preflight":{{"passed":true,"cached":false,"gates":[{{"name":"tests","exit":0,"ms":812}}]}},"preflight_key":"k1","tool":"git-orchestrate {}"}}"#,
                env!("CARGO_PKG_VERSION")
            )
        );
        let text = format!(
            "not ours\n{}\n{{\"v\":2,\"kind\":\"checkpoint\"}}\n",
            note.to_line()
        );
        assert_eq!(checkpoint_records(&text), vec![note.clone()]);
        assert!(note.passes("t1"));
        assert!(!note.passes("t2"), "another tree is not verified by it");
    }

    #[test]
    fn killed_gates_have_no_exit_code() {
        let gate = NoteGate::from(&GateRecord {
            name: "slow".into(),
            exit: ExitRecord::timed_out(30_000),
            ms: 30_001,
            reused: false,
        });
        assert_eq!(
            serde_json::to_string(&gate).unwrap(),
            r#"{"name":"slow","exit":null,"timeout_ms":30000,"ms":30001}"#
        );
    }
}
