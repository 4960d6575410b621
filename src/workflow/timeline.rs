//! A workflow's timeline (docs/board.md, "A workflow's timeline"): every transition with its
//! time, and what it recorded: each test run's verdict and evidence, the debugging attempt
//! and its tier, review findings, the squash the final check passed and the merge, with
//! links from each entry to the ones it answers. Pure: the recorded event is read as data (a
//! remote's chain may hold anything), and what cannot be read is left out, never guessed.

use serde::Serialize;

use super::Expectation;
use super::debugging::{Thresholds, Tier};
use super::ledger::Transition;
use super::state::{ExitRecord, RedOutcome};
use super::transition::Event;

/// The most characters of a test's output tail the timeline carries.
pub const OUTPUT_CHARS: usize = 2000;

/// One transition as the chain holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub transition: Transition,
    /// How a human's answer was authorised (`Orchestrator-Human`).
    pub human: Option<String>,
    /// The first line of the commit's body: the verdict in words.
    pub summary: String,
    /// The `orchestrator-event` header: the event as JSON.
    pub event: Option<String>,
}

/// One entry of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub commit: String,
    /// Seconds since the epoch (the commit time).
    pub time: i64,
    pub event: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub step: Option<String>,
    pub human: Option<String>,
    pub summary: String,
    /// Set on a transition that leaves the workflow in DEBUGGING.
    pub debugging: Option<Debugging>,
    pub test: Option<TestView>,
    pub review: Option<ReviewView>,
    /// The squashed commit a `squash` made: the final check passed on it.
    pub squashed: Option<String>,
    /// Main's tip after a `merge`.
    pub merged: Option<String>,
    /// A human's guidance (`resume`), or an agent's escalation report.
    pub text: Option<String>,
    /// The entries this one follows from, by commit.
    pub links: Vec<Link>,
}

/// The debugging attempt a transition leaves the workflow in, and the guidance it gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Debugging {
    pub attempt: u32,
    /// `hypothesize`, `instrument`, `reduce-scope` or `escalate` (docs/agent-guide.md).
    pub tier: &'static str,
}

/// A test run, as its transition recorded it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestView {
    /// `RED`, `GREEN` or `REFACTOR`.
    pub kind: String,
    pub command: String,
    /// `FAIL` or `PASS`: what the step expected.
    pub expectation: String,
    /// `exit 0`, `signal 9`, `timed out after 600000 ms`.
    pub exit: String,
    /// Whether the run met the expectation (and a pass its gates).
    pub met: bool,
    /// The tests, by id, the runner's per-test report named (a RED test's failing ones).
    pub tests: Vec<String>,
    /// Why a failing RED run is no test that failed.
    pub not_a_test: Option<String>,
    /// The preflight gates after a pass: whether they passed.
    pub gates_passed: Option<bool>,
    /// The last lines of its output, at most [`OUTPUT_CHARS`] characters.
    pub output_tail: String,
}

/// A review round's findings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReviewView {
    pub round: u32,
    pub ran: bool,
    pub findings: Vec<FindingView>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingView {
    pub priority: &'static str,
    pub blocking: bool,
    pub file: Option<String>,
    pub line: Option<u64>,
    pub issue: String,
    pub suggestion: Option<String>,
}

/// A link from one entry to an earlier one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    /// `debugging-since` (the failure this debugging began with), `answers` (the halt a
    /// `resume` answers), `review-of` (the review's start), `merges` (the squash merged).
    pub rel: &'static str,
    pub commit: String,
}

fn tier_name(tier: Tier) -> &'static str {
    match tier {
        Tier::Hypothesize => "hypothesize",
        Tier::Instrument => "instrument",
        Tier::ReduceScope => "reduce-scope",
        Tier::Escalate => "escalate",
    }
}

fn exit_text(exit: &ExitRecord) -> String {
    match exit {
        ExitRecord::Code(code) => format!("exit {code}"),
        ExitRecord::Signal(signal) => format!("signal {signal}"),
        ExitRecord::TimedOut { after_ms } => format!("timed out after {after_ms} ms"),
    }
}

/// The last `max` characters of `text`.
fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(max)).collect()
}

/// The timeline of `records` (oldest first), the debugging tiers judged by `thresholds`.
pub fn timeline(records: &[Recorded], thresholds: &Thresholds) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::with_capacity(records.len());
    for r in records {
        let t = &r.transition;
        let mut entry = Entry {
            commit: t.commit.clone(),
            time: t.time,
            event: t.event.clone(),
            from: t.from.clone(),
            to: t.to.clone(),
            step: t.step.clone(),
            human: r.human.clone(),
            summary: r.summary.clone(),
            debugging: (t.to.as_deref() == Some("DEBUGGING")).then(|| Debugging {
                attempt: t.attempt,
                tier: tier_name(thresholds.tier(t.attempt)),
            }),
            test: None,
            review: None,
            squashed: None,
            merged: None,
            text: None,
            links: Vec::new(),
        };
        // An event this version cannot read (older, newer, a ticket's, or hostile) leaves
        // the entry as the commit's message has it.
        let event = r
            .event
            .as_deref()
            .and_then(|json| serde_json::from_str::<Event>(json).ok());
        match event {
            Some(Event::TestRan(run)) => {
                let (tests, not_a_test) = match &run.red {
                    Some(RedOutcome::Pinned(pin)) => (pin.tests.clone(), None),
                    Some(RedOutcome::NotATest(why)) => (Vec::new(), Some(why.clone())),
                    None => (Vec::new(), None),
                };
                let passed = matches!(run.exit, ExitRecord::Code(0));
                let gates_passed = run.preflight.as_ref().map(|p| p.record.passed());
                let expectation = run.expectation.as_str().to_string();
                let met = if run.expectation == Expectation::Pass {
                    passed && gates_passed != Some(false)
                } else {
                    !passed
                };
                entry.test = Some(TestView {
                    kind: run.kind.to_string(),
                    command: run.command.clone(),
                    expectation,
                    exit: exit_text(&run.exit),
                    met,
                    tests,
                    not_a_test,
                    gates_passed,
                    output_tail: tail(&run.output_tail, OUTPUT_CHARS),
                });
            }
            Some(Event::ReviewCompleted { record, .. }) => {
                let blocking = record.blocking();
                entry.review = Some(ReviewView {
                    round: record.round,
                    ran: record.ran,
                    findings: record
                        .findings
                        .iter()
                        .map(|f| FindingView {
                            priority: f.priority.as_str(),
                            blocking: blocking.contains(f),
                            file: f.file.clone(),
                            line: f.line,
                            issue: f.issue.clone(),
                            suggestion: f.suggestion.clone(),
                        })
                        .collect(),
                });
            }
            Some(Event::Squashed { commit, .. }) => entry.squashed = Some(commit),
            Some(Event::Merged { main, .. }) => entry.merged = main,
            Some(Event::Resumed { guidance }) => entry.text = guidance,
            Some(Event::Escalated { report }) => entry.text = Some(report),
            _ => {}
        }
        entry.links = links(&out, &entry);
        out.push(entry);
    }
    out
}

/// What `entry` follows from among the `earlier` entries (oldest first).
fn links(earlier: &[Entry], entry: &Entry) -> Vec<Link> {
    let last = |rel: &'static str, want: &dyn Fn(&Entry) -> bool| {
        earlier.iter().rev().find(|e| want(e)).map(|e| Link {
            rel,
            commit: e.commit.clone(),
        })
    };
    let mut links = Vec::new();
    if entry.from.as_deref() == Some("DEBUGGING") && entry.event != "resume" {
        // The failure that began this debugging: the last entry into DEBUGGING from
        // elsewhere (a resume returns to the same debugging).
        links.extend(last("debugging-since", &|e| {
            e.to.as_deref() == Some("DEBUGGING")
                && !matches!(e.from.as_deref(), Some("DEBUGGING") | Some("HALTED"))
        }));
    }
    if entry.from.as_deref() == Some("HALTED") {
        links.extend(last("answers", &|e| e.to.as_deref() == Some("HALTED")));
    }
    if entry.review.is_some() || entry.event == "review" {
        links.extend(last("review-of", &|e| e.event == "review-start"));
    }
    if entry.event == "merge" {
        links.extend(last("merges", &|e| e.squashed.is_some()));
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rec(commit: &str, event: &str, from: &str, to: &str, attempt: u32, json: &str) -> Recorded {
        Recorded {
            transition: Transition {
                commit: commit.into(),
                time: 100,
                event: event.into(),
                from: Some(from.into()),
                to: Some(to.into()),
                step: Some("1.2".into()),
                attempt,
            },
            human: None,
            summary: String::new(),
            event: (!json.is_empty()).then(|| json.to_string()),
        }
    }

    const FAILED: &str = r#"{"event":"test-ran","step":"1.2","kind":"GREEN","description":"d","command":"sh t.sh","expectation":"PASS","exit":{"code":1},"output_tail":"FAIL: x\n","preflight":null,"red_rerun":null,"summary":"s"}"#;

    #[test]
    fn a_failed_run_starts_debugging_and_later_entries_link_to_it() {
        let t = Thresholds::default();
        let records = [
            rec("a", "test", "EXECUTING_TDD", "DEBUGGING", 1, FAILED),
            rec("b", "test", "DEBUGGING", "DEBUGGING", 3, "not json"),
            rec("c", "escalate", "DEBUGGING", "HALTED", 0, ""),
            rec(
                "d",
                "resume",
                "HALTED",
                "DEBUGGING",
                0,
                r#"{"event":"resumed","guidance":"<b>x</b>"}"#,
            ),
        ];
        let tl = timeline(&records, &t);
        let test = tl[0].test.as_ref().expect("a test view");
        assert_eq!(
            (test.exit.as_str(), test.met, test.expectation.as_str()),
            ("exit 1", false, "PASS")
        );
        assert_eq!(
            tl[0].debugging,
            Some(Debugging {
                attempt: 1,
                tier: "hypothesize"
            })
        );
        assert_eq!(tl[1].debugging.as_ref().map(|d| d.tier), Some("instrument"));
        assert!(tl[1].test.is_none(), "an unreadable event is no test view");
        assert_eq!(
            tl[1].links,
            [Link {
                rel: "debugging-since",
                commit: "a".into()
            }]
        );
        assert_eq!(tl[3].text.as_deref(), Some("<b>x</b>"));
        assert_eq!(
            tl[3].links,
            [Link {
                rel: "answers",
                commit: "c".into()
            }]
        );
    }

    #[test]
    fn the_output_tail_is_bounded() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
        assert_eq!(tail("ééé", 2), "éé");
    }
}
