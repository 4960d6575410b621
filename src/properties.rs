//! Property tests of the parsers that agents, remotes and clients feed (plans, configs, hook
//! input, notes, events, free-text fields, durations, branch names): generated input, the
//! rule each must keep. Failures found here are minimised into the modules' own tests.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::config::{self, Config, Origin};
use crate::workflow::branch_name;
use crate::workflow::fields::{self, Field, FieldProblem};
use crate::workflow::notes::{CheckpointNote, NotePreflight, checkpoint_records};
use crate::workflow::plan::{self, Plan};

/// `n` cases, from one fixed sequence unless `PROPTEST_RNG_SEED` names another (`random`: a
/// new one each run), so that a failure in CI is a finding, not luck.
fn cases(n: u32) -> ProptestConfig {
    use proptest::test_runner::RngSeed;
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        rng_seed: match std::env::var("PROPTEST_RNG_SEED").ok().as_deref() {
            Some("random") => RngSeed::Random,
            Some(n) => RngSeed::Fixed(n.parse().unwrap_or(24)),
            None => RngSeed::Fixed(24),
        },
        ..ProptestConfig::default()
    }
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(("[a-zA-Z_]{1,12}", inner), 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A valid plan: 1–3 tasks, names and texts of letters, digits, punctuation and non-ASCII
/// letters.
fn valid_plan() -> impl Strategy<Value = Value> {
    let text = "[a-zA-Z0-9äé✓][a-zA-Z0-9 äé✓:,.()-]{0,29}";
    // A task is RED then GREEN, or GREEN alone, and may end with a REFACTOR.
    let task = (text, any::<bool>(), any::<bool>(), text, text, text).prop_map(
        |(name, red, refactor, red_text, green_text, refactor_text)| {
            let mut steps = Vec::new();
            if red {
                steps.push(json!({"type": "RED", "description": red_text, "status": "TODO"}));
            }
            steps.push(json!({"type": "GREEN", "description": green_text, "status": "TODO"}));
            if refactor {
                steps.push(
                    json!({"type": "REFACTOR", "description": refactor_text, "status": "TODO"}),
                );
            }
            json!({"taskName": name, "status": "TODO", "tdd_steps": steps})
        },
    );
    (
        "[a-z]{1,8}(: [a-zA-Z][a-zA-Z ]{0,19})?",
        text,
        proptest::collection::vec(task, 1..4),
    )
        .prop_map(|(title, summary, tasks)| {
            json!({
                "masterPlanPath": "docs/plan.md",
                "prTitle": title,
                "summary": summary,
                "verificationPlan": "run the tests",
                "tasks": tasks,
            })
        })
}

/// `plan` with the value at one of its object paths replaced by `value`.
fn mutate(plan: &mut Value, choice: usize, value: Value) -> String {
    let mut paths: Vec<Vec<String>> = Vec::new();
    fn walk(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if let Value::Object(map) = v {
            for (k, child) in map {
                at.push(k.clone());
                out.push(at.clone());
                walk(child, at, out);
                at.pop();
            }
        }
        if let Value::Array(items) = v {
            for (i, child) in items.iter().enumerate() {
                at.push(i.to_string());
                walk(child, at, out);
                at.pop();
            }
        }
    }
    walk(plan, &mut Vec::new(), &mut paths);
    let path = paths[choice % paths.len()].clone();
    let mut target = &mut *plan;
    for part in &path {
        target = match target {
            Value::Object(map) => map.get_mut(part).expect("a path walked"),
            Value::Array(items) => &mut items[part.parse::<usize>().expect("an index")],
            _ => unreachable!("a path walked"),
        };
    }
    *target = value;
    path.join(".")
}

proptest! {
    #![proptest_config(cases(256))]

    /// Every valid plan is accepted and reads back as itself.
    #[test]
    fn a_valid_plan_is_accepted_and_round_trips(plan in valid_plan()) {
        let bytes = serde_json::to_vec(&plan).unwrap();
        let parsed: Plan = plan::parse_plan(&bytes).map_err(|p| {
            TestCaseError::fail(format!("{p:?}"))
        })?;
        let again = plan::parse_plan(&serde_json::to_vec(&parsed).unwrap()).unwrap();
        prop_assert_eq!(again, parsed);
    }

    /// A plan with any value put anywhere is either accepted or refused with every problem
    /// at a path, never a panic.
    #[test]
    fn a_mutated_plan_is_accepted_or_refused_with_paths(
        plan in valid_plan(),
        choice in any::<usize>(),
        value in json_value(),
    ) {
        let mut plan = plan;
        mutate(&mut plan, choice, value);
        match plan::parse_plan(&serde_json::to_vec(&plan).unwrap()) {
            Ok(parsed) => {
                let again = plan::parse_plan(&serde_json::to_vec(&parsed).unwrap());
                prop_assert_eq!(again.ok(), Some(parsed));
            }
            Err(problems) => {
                prop_assert!(!problems.is_empty());
                for p in &problems {
                    prop_assert!(!p.path.is_empty() && !p.message.is_empty(), "{:?}", p);
                }
            }
        }
    }

    /// Bytes that are not a plan at all are refused at the root, never a panic.
    #[test]
    fn any_bytes_are_a_plan_or_a_refusal(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Err(problems) = plan::parse_plan(&bytes) {
            prop_assert!(!problems.is_empty());
        }
    }

    /// Any text as `.orchestrate.toml`: a config or an error that says what is wrong.
    #[test]
    fn any_config_text_is_a_config_or_an_error(text in "(\\[[a-z]{1,8}\\]\n)?([a-z_]{1,12} = (\"[^\"\n]{0,10}\"|[0-9]{1,4}|true)\n){0,4}") {
        if let Err(e) = Config::parse(&text, &Origin::WorkingTree) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    /// Generated valid gates parse to exactly what they say.
    #[test]
    fn generated_gates_parse_to_what_they_say(
        gates in proptest::collection::vec(("[a-z]{1,8}", "[a-z ./-]{1,20}", 1u64..3600), 1..4),
    ) {
        let mut text = String::new();
        for (name, command, secs) in &gates {
            text.push_str(&format!(
                "[[preflight]]\nname = {name:?}\ncommand = {:?}\ntimeout = \"{secs}s\"\n",
                format!("x{command}")
            ));
        }
        let names: Vec<&String> = gates.iter().map(|g| &g.0).collect();
        let unique = names.iter().collect::<std::collections::HashSet<_>>().len() == names.len();
        match Config::parse(&text, &Origin::WorkingTree) {
            Ok(parsed) => {
                prop_assert!(unique);
                prop_assert_eq!(parsed.preflight.len(), gates.len());
                for (gate, (name, command, secs)) in parsed.preflight.iter().zip(&gates) {
                    prop_assert_eq!(&gate.name, name);
                    prop_assert_eq!(&gate.command, &format!("x{command}"));
                    prop_assert_eq!(gate.timeout, std::time::Duration::from_secs(*secs));
                }
            }
            Err(e) => prop_assert!(!unique, "{}", e),
        }
    }

    /// Any text as a duration: a duration or a message, and `Ns`/`Nm`/`Nh` read exactly.
    #[test]
    fn durations_read_exactly_or_are_refused(n in 1u64..100_000, unit in "[smh]", junk in ".{0,8}") {
        let secs = match unit.as_str() { "s" => n, "m" => n * 60, _ => n * 3600 };
        prop_assert_eq!(
            config::parse_duration(&format!("{n}{unit}")),
            Ok(std::time::Duration::from_secs(secs))
        );
        let _ = config::parse_duration(&junk);
    }

    /// Any hook input: a parsed input or an error the hook turns into its answer.
    #[test]
    fn any_hook_input_is_parsed_or_refused(value in json_value(), raw in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = crate::agent::hook::parse_input(&raw);
        let bytes = serde_json::to_vec(&value).unwrap();
        match crate::agent::hook::parse_input(&bytes) {
            Ok(_) => prop_assert!(value.is_object()),
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }

    /// A checkpoint note reads back as written, among any other lines.
    #[test]
    fn a_checkpoint_note_round_trips_among_other_lines(
        tree in "[0-9a-f]{40}",
        step in proptest::option::of("[0-9]{1,2}\\.[0-9]{1,2}"),
        passed in any::<bool>(),
        noise in proptest::collection::vec(".{0,40}", 0..3),
    ) {
        let note = CheckpointNote::new(
            "main",
            step,
            &tree,
            NotePreflight { passed, cached: false, gates: Vec::new() },
            "key",
        );
        let mut text = noise.join("\n");
        text.push('\n');
        text.push_str(&note.to_line());
        let found = checkpoint_records(&text);
        prop_assert_eq!(found.last(), Some(&note));
        prop_assert_eq!(found.last().unwrap().passes(&tree), passed);
    }

    /// Events read back as recorded: a transition's event header is the history's proof.
    #[test]
    fn events_round_trip(
        commit in "[0-9a-f]{40}",
        text in "\\PC{0,40}",
    ) {
        use crate::workflow::Event;
        for event in [
            Event::Squashed {
                commit: commit.clone(),
                plans: Vec::new(),
            },
            Event::CheckpointRecorded { commit: commit.clone(), subject: text.clone(), tree: commit.clone() },
            Event::FinalCheckRefused { commit: commit.clone(), reason: text.clone() },
            Event::Escalated { report: text.clone() },
        ] {
            let line = serde_json::to_string(&event).unwrap();
            prop_assert!(!line.contains('\n') && !line.contains('\0'));
            prop_assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event);
        }
    }

    /// A field is taken exactly when it is not blank, within its cap, and holds no control
    /// character but line ends and tabs; a refusal points at the offending character.
    #[test]
    fn free_text_fields_are_judged_by_one_rule(text in "\\PC{0,30}|[\\x00-\\x1f\\x7f a-z]{0,30}") {
        for field in [Field::Summary, Field::TestCommand, Field::Report, Field::Comment, Field::Message, Field::Notes] {
            match fields::check(field, &text) {
                Ok(()) => {
                    prop_assert!(!text.trim().is_empty() && text.len() <= field.cap());
                    let bytes = text.as_bytes();
                    for (i, c) in text.char_indices() {
                        let crlf = c == '\r' && bytes.get(i + 1) == Some(&b'\n');
                        prop_assert!(!c.is_control() || c == '\n' || c == '\t' || crlf);
                    }
                }
                Err(FieldProblem::Empty) => prop_assert!(text.trim().is_empty()),
                Err(FieldProblem::TooLong { .. }) => prop_assert!(text.len() > field.cap()),
                Err(FieldProblem::Control { offset, char }) => {
                    prop_assert_eq!(text[offset..].chars().next(), Some(char));
                    let format_char = ('\u{61C}'..='\u{FEFF}').contains(&char);
                    prop_assert!(char.is_control() || format_char, "{:?}", char);
                }
            }
        }
    }

    /// Any commit message is a checkpoint's or not, never a panic; one whose subject starts
    /// `checkpoint:` is, and so is one with an `Orchestrator-Checkpoint:` trailer line.
    #[test]
    fn checkpoint_messages_are_told_by_their_subject_or_trailer(body in "\\PC{0,60}", lead in "[ \t]{0,3}") {
        let _ = crate::store::is_checkpoint_message(&body);
        let subject = format!("{lead}checkpoint: {body}");
        prop_assert!(crate::store::is_checkpoint_message(&subject));
        let trailer = format!("work\n\n{}\nOrchestrator-Checkpoint: 1.2\n", body.replace('\n', " "));
        prop_assert!(crate::store::is_checkpoint_message(&trailer));
    }

    /// Whatever a PR title says, its branch name is a valid git branch name made of
    /// `[a-z0-9._/-]` only.
    #[test]
    fn any_title_gives_a_valid_branch_name_or_none(title in "\\PC{0,80}|[a-zA-Z0-9 :./_()!-]{0,80}") {
        if let Some(name) = branch_name::sanitize(&title) {
            prop_assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._/-".contains(&b)),
                "{}", name
            );
            let full = format!("refs/heads/{name}");
            prop_assert!(
                gix::validate::reference::name(full.as_str().into()).is_ok(),
                "{} is no valid ref name", full
            );
            prop_assert!(crate::store::is_valid_branch_name(&name), "{}", name);
        }
    }
}
