//! The adequacy obligation of a PR's proof (docs/integrity.md, "Adequacy by mutation"): when a
//! plan measures each task's pinned RED test against mutants of the code the task wrote, and
//! the policy it is judged by. Whether it is measured is decided here once, for the final
//! check on the agent's machine and for `attest` off it (and so the server hook).

pub use super::AdequacyPolicy as Policy;
use super::{Obligation, PinnedTest, ProofPlan, Stop};

/// `[verify] adequacy`, as the pinned configuration says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off,
    Report,
    Enforce,
}

/// Where the proof is run: what `report` costs is paid only where it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// The final check on the agent's machine: `report` names the survivors in the final
    /// note, `enforce` refuses the squash.
    FinalCheck,
    /// `attest` (CI, the server hook): measured under `enforce` only, the one mode whose
    /// verdict it changes, so that attest costs no more elsewhere (docs/integrity.md,
    /// "Adequacy by mutation").
    Attest,
}

/// Whether adequacy is measured at `at` under `mode`.
pub fn measured(mode: Mode, at: At) -> bool {
    match (mode, at) {
        (Mode::Off, _) => false,
        (Mode::Report, At::FinalCheck) => true,
        (Mode::Report, At::Attest) => false,
        (Mode::Enforce, _) => true,
    }
}

/// The plan that measures every pinned RED test (`reds`) against mutants of its task's code,
/// between the tree it began at and the tree the next task began at (the last task's: the
/// squash's `tree`; where the chain does not record where a task began, its RED tree and the
/// next task's: [`super::Obligation::Adequacy`]), judged
/// by `policy` (the pinned configuration blob) with `[verify]`'s `mode` and budgets; `None`
/// when nothing is measured at `at` ([`measured`]) or nothing is pinned.
pub fn plan(
    (squash, tree, base): (&str, &str, &str),
    policy: Option<&str>,
    reds: &[PinnedTest],
    (mode, at): (Mode, At),
    budget: Policy,
) -> Option<ProofPlan> {
    if !measured(mode, at) || reds.is_empty() {
        return None;
    }
    let obligation = Obligation::Adequacy {
        tree: tree.to_string(),
        tests: reds.to_vec(),
        policy: Policy {
            enforce: mode == Mode::Enforce,
            ..budget
        },
    };
    Some(ProofPlan::new(
        (squash, base),
        policy,
        vec![obligation],
        Stop::Never,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::StepId;

    fn red() -> PinnedTest {
        PinnedTest {
            step: StepId { task: 0, step: 0 },
            command: "sh tests/test_mul.sh".into(),
            tree: "t1".into(),
            start: Some("t0".into()),
            paths: vec!["tests/test_mul.sh".into()],
            shared: Vec::new(),
            hooks: Vec::new(),
        }
    }

    const BUDGET: Policy = Policy {
        enforce: false,
        min_killed: 500,
        max_mutants: 20,
        timeout_ms: 60_000,
    };

    #[test]
    fn attest_measures_under_enforce_only_and_the_final_check_under_report_too() {
        let table = [
            (Mode::Off, At::FinalCheck, false),
            (Mode::Off, At::Attest, false),
            (Mode::Report, At::FinalCheck, true),
            (Mode::Report, At::Attest, false),
            (Mode::Enforce, At::FinalCheck, true),
            (Mode::Enforce, At::Attest, true),
        ];
        for (mode, at, expected) in table {
            assert_eq!(measured(mode, at), expected, "{mode:?} at {at:?}");
            let plan = plan(("s", "t", "b"), Some("p"), &[red()], (mode, at), BUDGET);
            assert_eq!(plan.is_some(), expected, "{mode:?} at {at:?}");
        }
    }

    #[test]
    fn the_plan_carries_the_tests_the_final_tree_and_the_policy() {
        let plan = plan(
            ("s", "t", "b"),
            Some("p"),
            &[red()],
            (Mode::Enforce, At::Attest),
            BUDGET,
        );
        assert_eq!(
            plan,
            Some(ProofPlan {
                commit: "s".into(),
                base: "b".into(),
                policy: Some("p".into()),
                obligations: vec![Obligation::Adequacy {
                    tree: "t".into(),
                    tests: vec![red()],
                    policy: Policy {
                        enforce: true,
                        ..BUDGET
                    },
                }],
                stop: Stop::Never,
            })
        );
    }

    #[test]
    fn nothing_pinned_is_nothing_to_measure() {
        assert_eq!(
            plan(
                ("s", "t", "b"),
                None,
                &[],
                (Mode::Enforce, At::Attest),
                BUDGET
            ),
            None
        );
    }
}
