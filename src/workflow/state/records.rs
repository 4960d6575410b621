//! What ran and how it ended: a command's exit, the gates' runs, the last test run, and
//! the preflight a checkpoint of the same tree can reuse.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::workflow::plan::StepId;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ExitWire", try_from = "ExitWire")]
pub enum ExitRecord {
    Code(i32),
    Signal(i32),
    TimedOut { after_ms: u64 },
}

/// `{"code": 0}`, `{"signal": 9}` or `{"timeout_ms": 600000}`.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct ExitWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<u64>,
}

impl From<ExitRecord> for ExitWire {
    fn from(e: ExitRecord) -> ExitWire {
        let mut wire = ExitWire {
            code: None,
            signal: None,
            timeout_ms: None,
        };
        match e {
            ExitRecord::Code(code) => wire.code = Some(code),
            ExitRecord::Signal(signal) => wire.signal = Some(signal),
            ExitRecord::TimedOut { after_ms } => wire.timeout_ms = Some(after_ms),
        }
        wire
    }
}

impl TryFrom<ExitWire> for ExitRecord {
    type Error = &'static str;

    fn try_from(w: ExitWire) -> Result<ExitRecord, Self::Error> {
        match (w.code, w.signal, w.timeout_ms) {
            (Some(code), None, None) => Ok(ExitRecord::Code(code)),
            (None, Some(signal), None) => Ok(ExitRecord::Signal(signal)),
            (None, None, Some(after_ms)) => Ok(ExitRecord::TimedOut { after_ms }),
            _ => Err("an exit record holds exactly one of `code`, `signal` and `timeout_ms`"),
        }
    }
}

impl ExitRecord {
    pub fn code(code: i32) -> Self {
        ExitRecord::Code(code)
    }

    pub fn signal(signal: i32) -> Self {
        ExitRecord::Signal(signal)
    }

    pub fn timed_out(after_ms: u64) -> Self {
        ExitRecord::TimedOut { after_ms }
    }

    pub fn success(&self) -> bool {
        *self == ExitRecord::Code(0)
    }

    /// The exit code, when the command exited on its own.
    pub fn exit_code(&self) -> Option<i32> {
        match self {
            ExitRecord::Code(code) => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for ExitRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitRecord::Code(code) => write!(f, "exit {code}"),
            ExitRecord::Signal(signal) => write!(f, "killed by signal {signal}"),
            ExitRecord::TimedOut { after_ms } => {
                write!(f, "killed after the {} timeout", format_ms(*after_ms))
            }
        }
    }
}

/// `1500` → `1.5s`, `600000` → `10m`: durations as a person reads them.
pub fn format_ms(ms: u64) -> String {
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// One preflight gate's result, as recorded in state and notes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateRecord {
    pub name: String,
    pub exit: ExitRecord,
    pub ms: u64,
    /// The gate's command is the test command that had just passed on the same tree, in the
    /// same directory and environment, within the gate's timeout: that run is the gate's, and
    /// it was not run again (`exit` and `ms` are the test's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
}

/// The preflight run that followed a passing test: every gate that ran, in config order
/// (a run stops at the first failure, so it passed exactly when every recorded gate did).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "PreflightWire", from = "PreflightWire")]
pub struct PreflightRecord {
    /// Empty when no gates are configured: then the pass is vacuous and every report says so.
    pub gates: Vec<GateRecord>,
}

impl PreflightRecord {
    pub fn passed(&self) -> bool {
        self.gates.iter().all(|g| g.exit.success())
    }
}

/// `passed` is written for readers of `state.json`; it is recomputed, never trusted, on read.
#[derive(Clone, Serialize, Deserialize)]
struct PreflightWire {
    passed: bool,
    gates: Vec<GateRecord>,
}

impl From<PreflightRecord> for PreflightWire {
    fn from(r: PreflightRecord) -> PreflightWire {
        PreflightWire {
            passed: r.passed(),
            gates: r.gates,
        }
    }
}

impl From<PreflightWire> for PreflightRecord {
    fn from(w: PreflightWire) -> PreflightRecord {
        PreflightRecord { gates: w.gates }
    }
}

/// A passing preflight run, keyed by what it verified: the tree and the gate configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreflightCache {
    pub tree: String,
    /// [`crate::config::Config::preflight_key`] of the gates that ran.
    pub key: String,
    pub gates: Vec<GateRecord>,
}

impl PreflightCache {
    /// True when this run verified `tree` under the gates `key` identifies.
    pub fn covers(&self, tree: &str, key: &str) -> bool {
        self.tree == tree && self.key == key
    }
}

/// The verdict `submit-work` returns (the agent guide's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Success,
    Failure,
    NeedsAnalysis,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Success => "SUCCESS",
            Verdict::Failure => "FAILURE",
            Verdict::NeedsAnalysis => "NEEDS_ANALYSIS",
        }
    }
}

/// The last verification `submit-work` performed, for `status` and the briefings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    pub step: StepId,
    pub command: String,
    pub expectation: crate::workflow::Expectation,
    pub exit: ExitRecord,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<PreflightRecord>,
}
