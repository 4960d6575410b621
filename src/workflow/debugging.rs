//! Nudge and Unlock (docs/agent-guide.md, "The escape tools and their locks"): which guidance tier an attempt gets, when the
//! escape tools unlock, and whether two failures are the same failure.

use serde::{Deserialize, Serialize};

/// The `[debugging]` thresholds, as the pure core sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thresholds {
    pub hypothesize_max_attempts: u32,
    pub instrumentation_max_attempts: u32,
    pub unlock_scope_reduction_at: u32,
    pub unlock_escalation_at: u32,
}

impl Default for Thresholds {
    /// The defaults: 2 / 5 / 6 / 10 (docs/config.md, "[debugging]").
    fn default() -> Self {
        Thresholds {
            hypothesize_max_attempts: 2,
            instrumentation_max_attempts: 5,
            unlock_scope_reduction_at: 6,
            unlock_escalation_at: 10,
        }
    }
}

/// The guidance a debugging attempt gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Form one hypothesis, make one focused fix.
    Hypothesize,
    /// Stop guessing: add logging or assertions to see what happens.
    Instrument,
    /// The task is too large: request a scope reduction.
    ReduceScope,
    /// Write a report and escalate to a human.
    Escalate,
}

impl Thresholds {
    /// The tier for failed attempt number `attempt` (1-based; 0 after a human's `resume`).
    pub fn tier(&self, attempt: u32) -> Tier {
        if attempt >= self.unlock_escalation_at {
            Tier::Escalate
        } else if attempt >= self.unlock_scope_reduction_at {
            Tier::ReduceScope
        } else if attempt <= self.hypothesize_max_attempts {
            Tier::Hypothesize
        } else {
            Tier::Instrument
        }
    }
}

/// True when two failure outputs are the same failure: equal once what changes from run to run
/// without meaning anything (durations, timestamps, addresses) is masked.
pub fn same_failure(a: &str, b: &str) -> bool {
    let (a, b) = (normalize(a), normalize(b));
    !a.is_empty() && a == b
}

/// Masks durations (`0.52s`, `12ms`), ISO timestamps, `0x` addresses and trailing space, so
/// that reruns of the same failure compare equal.
pub fn normalize(text: &str) -> String {
    text.lines()
        .map(|line| mask_line(line.trim_end()))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn mask_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let word_start = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if c == '0' && chars.get(i + 1) == Some(&'x') && word_start {
            let end = run_end(&chars, i + 2, |c| c.is_ascii_hexdigit());
            if end > i + 2 {
                out.push_str("<addr>");
                i = end;
                continue;
            }
        }
        if c.is_ascii_digit() && word_start {
            // A timestamp like 2026-11-22T02:41:14(.123)(Z)
            let end = run_end(&chars, i, |c| c.is_ascii_digit() || "-:.TZ".contains(c));
            let token: String = chars[i..end].iter().collect();
            if token.len() >= 16 && token.contains('-') && token.contains(':') {
                out.push_str("<time>");
                i = end;
                continue;
            }
            // A duration like 0.52s, 12ms, 3µs, 1.5 seconds
            let num_end = run_end(&chars, i, |c| c.is_ascii_digit() || c == '.');
            let after_space = if chars.get(num_end) == Some(&' ') {
                num_end + 1
            } else {
                num_end
            };
            let unit_end = run_end(&chars, after_space, |c| c.is_alphabetic());
            let unit: String = chars[after_space..unit_end].iter().collect();
            if [
                "s", "ms", "us", "µs", "ns", "sec", "secs", "seconds", "m", "min",
            ]
            .contains(&unit.as_str())
            {
                out.push_str("<duration>");
                i = unit_end;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn run_end(chars: &[char], start: usize, keep: impl Fn(char) -> bool) -> usize {
    let mut end = start;
    while end < chars.len() && keep(chars[end]) {
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tier_boundaries_with_the_defaults() {
        let t = Thresholds::default();
        let tiers: Vec<(u32, Tier)> = [0, 1, 2, 3, 5, 6, 9, 10, 11]
            .iter()
            .map(|a| (*a, t.tier(*a)))
            .collect();
        assert_eq!(
            tiers,
            vec![
                (0, Tier::Hypothesize),
                (1, Tier::Hypothesize),
                (2, Tier::Hypothesize),
                (3, Tier::Instrument),
                (5, Tier::Instrument),
                (6, Tier::ReduceScope),
                (9, Tier::ReduceScope),
                (10, Tier::Escalate),
                (11, Tier::Escalate),
            ]
        );
    }

    #[test]
    fn tier_boundaries_with_custom_thresholds() {
        let t = Thresholds {
            hypothesize_max_attempts: 1,
            instrumentation_max_attempts: 2,
            unlock_scope_reduction_at: 4,
            unlock_escalation_at: 5,
        };
        let tiers: Vec<Tier> = (1..=6).map(|a| t.tier(a)).collect();
        assert_eq!(
            tiers,
            vec![
                Tier::Hypothesize,
                Tier::Instrument,
                // Between the instrumentation limit and the unlock, instrumentation goes on.
                Tier::Instrument,
                Tier::ReduceScope,
                Tier::Escalate,
                Tier::Escalate,
            ]
        );
        let same = Thresholds {
            hypothesize_max_attempts: 3,
            instrumentation_max_attempts: 3,
            unlock_scope_reduction_at: 3,
            unlock_escalation_at: 3,
        };
        assert_eq!(
            [2, 3].map(|a| same.tier(a)),
            [Tier::Hypothesize, Tier::Escalate]
        );
    }

    #[test]
    fn reruns_of_one_failure_compare_equal() {
        let a = "test add ... FAILED\nassertion failed at src/lib.rs:12\ntest result: FAILED. finished in 0.52s\n";
        let b = "test add ... FAILED\nassertion failed at src/lib.rs:12\ntest result: FAILED. finished in 1.07s  \n";
        assert!(same_failure(a, b));
        let other_line = a.replace(":12", ":13");
        assert!(!same_failure(a, &other_line));
        assert!(same_failure(
            "panicked at 2026-11-22T02:41:14.123Z, object at 0x7ffe12ab",
            "panicked at 2026-11-22T02:49:01.999Z, object at 0x55aa0001"
        ));
        assert!(same_failure("took 12ms", "took 3 ms"));
        assert!(!same_failure("", ""));
        assert_eq!(normalize("a 10 tests\n\n  \nb"), "a 10 tests\nb");
    }
}
