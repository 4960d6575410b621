//! The gates work must pass: preflight (docs/config.md, "Preflight"), here, and the code review (docs/config.md, "[review]"), in
//! [`review`]. Preflight runs the ordered `[[preflight]]` gates; consecutive gates sharing a
//! `group` run in parallel, and the first failing gate (after its group finishes) stops the run.

pub mod review;

use std::path::Path;
use std::thread;

use crate::config::Gate;
use crate::exec::{self, CommandEnv, RunOutput};
use crate::workflow::state::{GateRecord, PreflightRecord};

/// One gate's run, with its full output.
#[derive(Clone, Debug)]
pub struct GateRun {
    pub name: String,
    pub command: String,
    pub run: RunOutput,
    /// `run` is the test command's, which this gate's command is ([`Reusable`]).
    pub reused: bool,
}

/// A test command's run that a gate with exactly that command may take as its own: it ran on
/// the tree the gates verify (the caller checks that nothing changed it), in the directory
/// and environment the gates run in. Taken only when it passed within the gate's timeout.
#[derive(Clone, Copy, Debug)]
pub struct Reusable<'a> {
    pub command: &'a str,
    pub run: &'a RunOutput,
}

/// The result of running preflight: every gate that ran, in config order.
#[derive(Clone, Debug)]
pub struct PreflightRun {
    pub gates: Vec<GateRun>,
}

impl PreflightRun {
    /// The first gate that failed, in config order.
    pub fn failed(&self) -> Option<&GateRun> {
        self.gates.iter().find(|g| !g.run.exit.success())
    }

    pub fn passed(&self) -> bool {
        self.failed().is_none()
    }

    /// True when there was nothing to run: such a pass proves nothing and is reported so.
    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }

    pub fn record(&self) -> PreflightRecord {
        PreflightRecord {
            gates: self
                .gates
                .iter()
                .map(|g| GateRecord {
                    name: g.name.clone(),
                    exit: g.run.exit,
                    ms: u64::try_from(g.run.elapsed.as_millis()).unwrap_or(u64::MAX),
                    reused: g.reused,
                })
                .collect(),
        }
    }
}

/// Runs `gates` in `dir`, in the environment `env`.
pub fn run_preflight(
    gates: &[Gate],
    dir: &Path,
    env: &CommandEnv,
) -> std::io::Result<PreflightRun> {
    run_preflight_reusing(gates, dir, env, None)
}

/// [`run_preflight`], where a gate whose command is `reusable`'s takes its run instead of
/// running again.
pub fn run_preflight_reusing(
    gates: &[Gate],
    dir: &Path,
    env: &CommandEnv,
    reusable: Option<Reusable<'_>>,
) -> std::io::Result<PreflightRun> {
    let mut done = Vec::new();
    for batch in batches(gates) {
        let runs: Vec<std::io::Result<GateRun>> = if batch.len() == 1 {
            vec![run_gate(&batch[0], dir, env, reusable)]
        } else {
            thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|gate| scope.spawn(move || run_gate(gate, dir, env, reusable)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(std::io::Error::other("a gate runner panicked"))
                        })
                    })
                    .collect()
            })
        };
        for run in runs {
            done.push(run?);
        }
        if done.iter().any(|g| !g.run.exit.success()) {
            break;
        }
    }
    Ok(PreflightRun { gates: done })
}

fn run_gate(
    gate: &Gate,
    dir: &Path,
    env: &CommandEnv,
    reusable: Option<Reusable<'_>>,
) -> std::io::Result<GateRun> {
    if let Some(r) = reusable
        && r.command == gate.command
        && r.run.exit.success()
        && r.run.elapsed <= gate.timeout
    {
        return Ok(GateRun {
            name: gate.name.clone(),
            command: gate.command.clone(),
            run: r.run.clone(),
            reused: true,
        });
    }
    Ok(GateRun {
        name: gate.name.clone(),
        command: gate.command.clone(),
        run: exec::run_shell(&gate.command, dir, gate.timeout, env)?,
        reused: false,
    })
}

/// Splits gates into runs of consecutive gates sharing a group; ungrouped gates run alone.
fn batches(gates: &[Gate]) -> Vec<&[Gate]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=gates.len() {
        let same =
            i < gates.len() && gates[i].group.is_some() && gates[i].group == gates[i - 1].group;
        if !same {
            out.push(&gates[start..i]);
            start = i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::Duration;

    fn gate(name: &str, command: &str, group: Option<&str>) -> Gate {
        Gate {
            name: name.into(),
            command: command.into(),
            timeout: Duration::from_secs(30),
            group: group.map(str::to_string),
        }
    }

    #[test]
    fn groups_are_consecutive_runs() {
        let gates = [
            gate("a", "true", None),
            gate("b", "true", Some("g")),
            gate("c", "true", Some("g")),
            gate("d", "true", None),
            gate("e", "true", Some("g")),
        ];
        let names: Vec<Vec<&str>> = batches(&gates)
            .iter()
            .map(|b| b.iter().map(|g| g.name.as_str()).collect())
            .collect();
        assert_eq!(names, vec![vec!["a"], vec!["b", "c"], vec!["d"], vec!["e"]]);
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn the_first_failure_stops_after_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let gates = [
            gate("one", "true", None),
            gate("two", "echo broken; exit 4", Some("g")),
            gate("three", "true", Some("g")),
            gate("never", "true", None),
        ];
        let run = run_preflight(&gates, dir.path(), exec::env::unconfined()).unwrap();
        let ran: Vec<_> = run.gates.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(ran, vec!["one", "two", "three"]);
        let failed = run.failed().unwrap();
        assert_eq!(failed.name, "two");
        assert_eq!(failed.run.output, b"broken\n");
        assert!(!run.record().passed());
    }

    #[test]
    fn a_group_runs_in_parallel() {
        // Each gate waits for the other's marker file: only concurrent runs can both pass.
        let dir = tempfile::tempdir().unwrap();
        let wait_for = |me: &str, other: &str| {
            format!(
                "touch {me}; for i in $(seq 1 100); do [ -e {other} ] && exit 0; sleep 0.05; done; exit 1"
            )
        };
        let gates = [
            gate("left", &wait_for("left", "right"), Some("g")),
            gate("right", &wait_for("right", "left"), Some("g")),
        ];
        let run = run_preflight(&gates, dir.path(), exec::env::unconfined()).unwrap();
        assert!(run.passed(), "{:?}", run.record());
    }

    /// Only a gate with exactly the test's command takes its run, and only a pass that fits
    /// in the gate's timeout; every other gate runs.
    #[test]
    fn a_gate_takes_the_test_run_only_when_it_is_that_very_run() {
        let dir = tempfile::tempdir().unwrap();
        let test_run = |code: i32, secs: u64| RunOutput {
            exit: crate::workflow::state::ExitRecord::code(code),
            output: b"from the test\n".to_vec(),
            stderr: Vec::new(),
            elapsed: Duration::from_secs(secs),
        };
        let cases = [
            ("echo ran", test_run(0, 1), "echo ran", true),
            ("echo ran", test_run(0, 1), "echo ran ", false),
            ("echo ran", test_run(1, 1), "echo ran", false),
            ("echo ran", test_run(0, 31), "echo ran", false),
        ];
        for (gate_command, run, test_command, reused) in cases {
            let gates = [gate("tests", gate_command, None)];
            let reusable = Reusable {
                command: test_command,
                run: &run,
            };
            let done =
                run_preflight_reusing(&gates, dir.path(), exec::env::unconfined(), Some(reusable))
                    .unwrap();
            let what = format!("{gate_command:?} after {test_command:?}, {:?}", run.exit);
            assert_eq!(done.gates[0].reused, reused, "{what}");
            assert_eq!(done.record().gates[0].reused, reused, "{what}");
            let expected: &[u8] = if reused { b"from the test\n" } else { b"ran\n" };
            assert_eq!(done.gates[0].run.output, expected, "{what}");
        }
    }

    #[test]
    fn no_gates_is_an_empty_pass() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_preflight(&[], dir.path(), exec::env::unconfined()).unwrap();
        assert!(run.passed() && run.is_empty());
        assert_eq!(run.record().gates, vec![]);
    }
}
