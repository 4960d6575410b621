//! The ledger of a workflow (docs/board.md, "The ledger"): wall time per step and in all from
//! its transitions' commit times, debugging attempts, and the turns of `git orchestrate run`
//! with the tokens and cost their clients reported; per PR where a `plan` transition starts
//! one. Pure; a figure nobody reported is `None`, never 0.

use serde::Serialize;

/// One transition of a workflow's chain, as the ledger reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub commit: String,
    /// The commit time, seconds since the epoch.
    pub time: i64,
    pub event: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub step: Option<String>,
    /// The debugging attempt the state holds after it (0: not debugging).
    pub attempt: u32,
}

/// One turn of `run`, as its record (`turn.json`) says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    /// The workflow's tip after the turn: the PR it worked on (absent in older records).
    pub tip_after: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// Time spent on one step (its id), or in one state between steps (its name).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepTime {
    pub name: String,
    pub seconds: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

/// The figures of a workflow, or of one PR of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// From the first transition to the last (the clock stops at the last transition).
    pub wall_seconds_total: i64,
    /// Each transition's time since the one before, by the step it was on (its id), else by
    /// the state it left; in order of first appearance.
    pub steps: Vec<StepTime>,
    /// Failed attempts, summed over every step: the transitions into `DEBUGGING` that raised
    /// the state's attempt (a failure that starts debugging is attempt 1; a `resume` back to
    /// it is none). Not the attempt a card shows, which is the current step's, now.
    pub failed_attempts: u32,
    /// The turns `run` recorded; `None` when no run drove it.
    pub turns: Option<u32>,
    /// Of `turns`, those whose client reported tokens.
    pub turns_reporting: Option<u32>,
    /// The tokens those turns reported, summed; `None` when none did.
    pub tokens: Option<Tokens>,
    /// The cost those turns reported, summed; `None` when none did.
    pub cost_usd: Option<f64>,
}

/// One PR of the workflow: from its `plan` transition to the next one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrLedger {
    /// The `plan` transition's commit.
    pub plan_commit: String,
    /// Its time, seconds since the epoch.
    pub started: i64,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A workflow's ledger.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ledger {
    #[serde(flatten)]
    pub figures: Figures,
    pub prs: Vec<PrLedger>,
}

/// The ledger of a chain (`transitions` oldest first) and the turns `run` recorded for it
/// (`None`: no run record).
pub fn ledger(transitions: &[Transition], turns: Option<&[Turn]>) -> Ledger {
    let whole = figures(transitions, None, turns);
    let starts: Vec<usize> = transitions
        .iter()
        .enumerate()
        .filter(|(_, t)| t.event == "plan")
        .map(|(i, _)| i)
        .collect();
    let mut prs = Vec::new();
    for (n, start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(transitions.len());
        let own = &transitions[*start..end];
        // Each PR's turns: those whose tip after the turn is one of its transitions.
        let theirs: Option<Vec<Turn>> = turns.map(|turns| {
            turns
                .iter()
                .filter(|t| {
                    t.tip_after
                        .as_deref()
                        .is_some_and(|tip| own.iter().any(|x| x.commit == tip))
                })
                .cloned()
                .collect()
        });
        let before = start.checked_sub(1).map(|i| transitions[i].time);
        prs.push(PrLedger {
            plan_commit: own[0].commit.clone(),
            started: own[0].time,
            figures: figures(own, before, theirs.as_deref()),
        });
    }
    Ledger {
        figures: whole,
        prs,
    }
}

/// Whether the ledger counts `t` as a debugging attempt begun, should its attempt be above
/// the one before it. Only into DEBUGGING: a re-plan's own count (`REPLANNING`) is no
/// debugging attempt, and a `resume` from HALTED (whose state holds no attempt) returns to
/// one already counted.
fn debugging(t: &Transition) -> bool {
    t.to.as_deref() == Some("DEBUGGING") && t.from.as_deref() != Some("HALTED")
}

/// Whether [`ledger`] reads the attempt of `t`, `later` being the transition after it: only
/// those of a transition into debugging and of the one before it are compared. A reader of
/// many chains (the board) reads the state of those alone; every other attempt may be 0.
pub fn reads_attempt(t: &Transition, later: Option<&Transition>) -> bool {
    debugging(t) || later.is_some_and(debugging)
}

/// The figures of `transitions`; `before` is the time of the transition before the first
/// (its interval counts), `None` at the chain's root.
fn figures(transitions: &[Transition], before: Option<i64>, turns: Option<&[Turn]>) -> Figures {
    let mut steps: Vec<StepTime> = Vec::new();
    let mut last = before;
    let mut total: i64 = 0;
    for t in transitions {
        if let Some(last) = last {
            // A clock that went back counts as no time, not as negative time.
            let seconds = t.time.saturating_sub(last).max(0);
            total = total.saturating_add(seconds);
            let name = t
                .step
                .clone()
                .or_else(|| t.from.clone())
                .unwrap_or_else(|| t.event.clone());
            match steps.iter_mut().find(|s| s.name == name) {
                Some(s) => s.seconds = s.seconds.saturating_add(seconds),
                None => steps.push(StepTime { name, seconds }),
            }
        }
        last = Some(t.time);
    }
    let attempts = transitions
        .windows(2)
        .filter(|pair| pair[1].attempt > pair[0].attempt && debugging(&pair[1]))
        .count()
        + usize::from(
            before.is_none()
                && transitions
                    .first()
                    .is_some_and(|t| t.attempt > 0 && debugging(t)),
        );
    let (mut reporting, mut tokens, mut cost) = (0u32, None::<Tokens>, None::<f64>);
    for turn in turns.unwrap_or_default() {
        if let (Some(input), Some(output)) = (turn.input_tokens, turn.output_tokens) {
            reporting += 1;
            let sum = tokens.unwrap_or(Tokens {
                input: 0,
                output: 0,
            });
            tokens = Some(Tokens {
                input: sum.input.saturating_add(input),
                output: sum.output.saturating_add(output),
            });
        }
        if let Some(c) = turn.cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
    }
    Figures {
        wall_seconds_total: total,
        steps,
        failed_attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        turns: turns.map(|t| u32::try_from(t.len()).unwrap_or(u32::MAX)),
        turns_reporting: turns.map(|_| reporting),
        tokens,
        cost_usd: cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn t(
        commit: &str,
        time: i64,
        event: &str,
        from: &str,
        to: &str,
        step: Option<&str>,
    ) -> Transition {
        let attempt = match commit {
            "c3" => 1,
            "c4" => 2,
            _ => 0,
        };
        Transition {
            attempt,
            commit: commit.into(),
            time,
            event: event.into(),
            from: Some(from.into()),
            to: Some(to.into()),
            step: step.map(str::to_string),
        }
    }

    fn chain() -> Vec<Transition> {
        vec![
            Transition {
                commit: "c0".into(),
                time: 1000,
                event: "create".into(),
                from: None,
                to: Some("INITIALIZING".into()),
                step: None,
                attempt: 0,
            },
            t("c1", 1060, "plan", "INITIALIZING", "CREATING_BRANCH", None),
            t(
                "c2",
                1065,
                "branch",
                "CREATING_BRANCH",
                "EXECUTING_TDD",
                None,
            ),
            t(
                "c3",
                1100,
                "test",
                "EXECUTING_TDD",
                "DEBUGGING",
                Some("1.1"),
            ),
            t("c4", 1200, "test", "DEBUGGING", "DEBUGGING", Some("1.1")),
            t(
                "c5",
                1250,
                "test",
                "DEBUGGING",
                "EXECUTING_TDD",
                Some("1.1"),
            ),
            t(
                "c6",
                1300,
                "test",
                "EXECUTING_TDD",
                "EXECUTING_TDD",
                Some("1.2"),
            ),
            t("c7", 1290, "merge", "MERGING_BRANCH", "INITIALIZING", None),
            t("c8", 1400, "plan", "INITIALIZING", "CREATING_BRANCH", None),
        ]
    }

    #[test]
    fn wall_time_is_the_time_between_transitions_by_step() {
        let ledger = ledger(&chain(), None);
        let steps: Vec<(&str, i64)> = ledger
            .figures
            .steps
            .iter()
            .map(|s| (s.name.as_str(), s.seconds))
            .collect();
        assert_eq!(
            steps,
            [
                ("INITIALIZING", 60 + 110),
                ("CREATING_BRANCH", 5),
                ("1.1", 35 + 100 + 50),
                ("1.2", 50),
                // The clock went back: no time, not negative time.
                ("MERGING_BRANCH", 0),
            ]
        );
        assert_eq!(ledger.figures.wall_seconds_total, 60 + 5 + 185 + 50 + 110);
        assert_eq!(ledger.figures.failed_attempts, 2);
        // Nobody ran it: no turns, no tokens, no cost; none of them 0.
        assert_eq!(
            (
                ledger.figures.turns,
                ledger.figures.turns_reporting,
                ledger.figures.tokens,
                ledger.figures.cost_usd
            ),
            (None, None, None, None)
        );
        let prs: Vec<(&str, i64, i64)> = ledger
            .prs
            .iter()
            .map(|p| {
                (
                    p.plan_commit.as_str(),
                    p.started,
                    p.figures.wall_seconds_total,
                )
            })
            .collect();
        assert_eq!(prs, [("c1", 1060, 60 + 5 + 185 + 50), ("c8", 1400, 110)]);
    }

    #[test]
    fn turns_are_summed_as_reported_and_go_to_the_pr_they_left() {
        let turn = |tip: &str, tokens: Option<(u64, u64)>, cost: Option<f64>| Turn {
            tip_after: Some(tip.into()),
            input_tokens: tokens.map(|t| t.0),
            output_tokens: tokens.map(|t| t.1),
            cost_usd: cost,
        };
        let turns = [
            turn("c2", Some((100, 10)), Some(0.25)),
            turn("c5", None, None),
            turn("c8", Some((7, 3)), None),
            Turn::default(),
        ];
        let ledger = ledger(&chain(), Some(&turns));
        let f = &ledger.figures;
        assert_eq!(
            (f.turns, f.turns_reporting, f.tokens, f.cost_usd),
            (
                Some(4),
                Some(2),
                Some(Tokens {
                    input: 107,
                    output: 13
                }),
                Some(0.25)
            )
        );
        let first = &ledger.prs[0].figures;
        assert_eq!(
            (
                first.turns,
                first.turns_reporting,
                first.tokens,
                first.cost_usd
            ),
            (
                Some(2),
                Some(1),
                Some(Tokens {
                    input: 100,
                    output: 10
                }),
                Some(0.25)
            )
        );
        let second = &ledger.prs[1].figures;
        assert_eq!((second.turns, second.cost_usd), (Some(1), None));
    }

    /// A halt and its `resume` back to DEBUGGING are no new attempt, nor is a re-plan's
    /// own count; debugging again after success is.
    #[test]
    fn attempts_are_the_debugging_attempts_begun() {
        let at = |commit: &str, from: &str, to: &str, attempt: u32| Transition {
            attempt,
            ..t(commit, 0, "test", from, to, None)
        };
        let chain = [
            at("a", "INITIALIZING", "EXECUTING_TDD", 0),
            at("b", "EXECUTING_TDD", "DEBUGGING", 1),
            at("c", "DEBUGGING", "HALTED", 0),
            at("d", "HALTED", "DEBUGGING", 1),
            at("e", "DEBUGGING", "DEBUGGING", 2),
            at("f", "DEBUGGING", "REPLANNING", 3),
            at("g", "REPLANNING", "EXECUTING_TDD", 0),
            at("h", "EXECUTING_TDD", "DEBUGGING", 1),
        ];
        assert_eq!(ledger(&chain, None).figures.failed_attempts, 3);
        // Read only where `reads_attempt` says, the ledger is the same, per PR too.
        let mut with_plans = chain.to_vec();
        with_plans[3].event = "plan".into();
        with_plans[6].event = "plan".into();
        for chain in [chain.to_vec(), with_plans] {
            let sparse: Vec<Transition> = (0..chain.len())
                .map(|i| Transition {
                    attempt: if reads_attempt(&chain[i], chain.get(i + 1)) {
                        chain[i].attempt
                    } else {
                        0
                    },
                    ..chain[i].clone()
                })
                .collect();
            assert_ne!(sparse, chain, "some attempt is left unread");
            assert_eq!(ledger(&sparse, None), ledger(&chain, None));
        }
    }

    #[test]
    fn an_empty_chain_has_no_time() {
        let ledger = ledger(&[], Some(&[]));
        assert_eq!(ledger.figures.wall_seconds_total, 0);
        assert_eq!(ledger.figures.turns, Some(0));
        assert_eq!(ledger.figures.tokens, None);
        assert!(ledger.prs.is_empty());
    }
}
