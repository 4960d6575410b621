use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn ticket() -> Ticket {
    Ticket::new(
        "Add numbers".into(),
        "Body".into(),
        "main".into(),
        "ticket/add-numbers".into(),
        "p".repeat(40),
        None,
        &[],
        100,
    )
}

fn assignment(context: Option<&str>) -> Assignment {
    parse_assignment(&json!({
        "mode": "implementation",
        "goal": "Add add()",
        "filesToModify": ["src/**"],
        "acceptanceCriteria": ["add works"],
        "priorContext": context,
    }))
    .expect("valid")
}

fn passing(result: GateVerdict) -> GateResult {
    GateResult {
        result,
        ran: vec!["test".into()],
        failed: (result == GateVerdict::Fail).then(|| FailedGate {
            gate: "test".into(),
            exit: "exit 1".into(),
            tail: "boom".into(),
        }),
    }
}

fn observed(gates: GateVerdict, files: &[&str], outside: &[&str]) -> Observed {
    Observed {
        commit: "c".repeat(40),
        base: "p".repeat(40),
        gates: passing(gates),
        tests: Vec::new(),
        tests_on_base: None,
        files_changed: files.iter().map(|s| s.to_string()).collect(),
        outside_scope: outside.iter().map(|s| s.to_string()).collect(),
        protected: Vec::new(),
        removed_tests: Vec::new(),
        links_out: Vec::new(),
    }
}

fn report(build: &str, files: &[&str]) -> Report {
    let files: Vec<_> = files.iter().map(|p| json!({"path": p})).collect();
    parse_report(&json!({
        "status": "complete", "filesChanged": files, "buildStatus": build, "message": "done"
    }))
    .expect("valid")
}

fn update(status: &str, override_reason: Option<&str>) -> Action {
    let mut value = json!({"status": status, "notes": "n"});
    if let Some(reason) = override_reason {
        value["override"] = json!(reason);
    }
    Action::Update(parse_update(&value).expect("valid"))
}

fn run(t: &Ticket, role: Option<Role>, action: Action) -> Result<Ticket, Refusal> {
    apply(t, role, action, 200)
}

/// Which tool each state and role allows: the whole table.
#[test]
fn every_tool_in_every_state_and_role() {
    let fresh = ticket();
    let developing = run(&fresh, None, Action::Assign(assignment(None))).expect("assign");
    let reported = run(
        &developing,
        None,
        Action::Report {
            report: Box::new(report("pass", &["src/a.rs"])),
            observed: Box::new(observed(GateVerdict::Pass, &["src/a.rs"], &[])),
        },
    )
    .expect("report");
    let mut done = fresh.clone();
    done.state = TicketState::TicketDone;
    let mut halted = fresh.clone();
    halted.state = TicketState::Halted;
    let cases: Vec<(&str, &Ticket, [bool; 4])> = vec![
        // assign, update-subtask, complete-ticket, subtask-complete
        ("fresh", &fresh, [true, false, false, false]),
        ("developing", &developing, [false, false, false, true]),
        ("reported", &reported, [false, true, false, false]),
        ("done", &done, [false, false, false, false]),
        ("halted", &halted, [false, false, false, false]),
    ];
    for (name, t, allowed) in cases {
        for (tool, allowed) in Tool::ALL.into_iter().zip(allowed) {
            for role in [None, Some(Role::Manager), Some(Role::Developer)] {
                let right_role = role.is_none_or(|r| r == tool.role());
                assert_eq!(
                    check(t, role, tool).is_ok(),
                    allowed && right_role,
                    "{name}: {} as {role:?}",
                    tool.command()
                );
            }
        }
    }
}

#[test]
fn the_third_rejection_blocks_and_a_blocked_subtask_needs_new_prior_context() {
    let mut t = ticket();
    for round in 1..=3 {
        t = run(&t, Some(Role::Manager), Action::Assign(assignment(None))).expect("assign");
        assert_eq!(t.subtasks.len(), 1, "the rejected subtask is reassigned");
        t = run(
            &t,
            Some(Role::Developer),
            Action::Report {
                report: Box::new(report("pass", &["src/a.rs"])),
                observed: Box::new(observed(GateVerdict::Pass, &["src/a.rs"], &[])),
            },
        )
        .expect("report");
        t = run(&t, Some(Role::Manager), update("rejected", None)).expect("reject");
        let expected = if round < 3 {
            SubtaskStatus::Rejected
        } else {
            SubtaskStatus::Blocked
        };
        assert_eq!(t.subtasks[0].status, expected, "round {round}");
        assert_eq!(t.subtasks[0].rejections, round);
    }
    let refused = run(&t, None, Action::Assign(assignment(None))).expect_err("same context");
    assert!(refused.message.contains("new priorContext"), "{refused:?}");
    let t = run(&t, None, Action::Assign(assignment(Some("try x")))).expect("new context");
    // Blocked again: the same context, respaced or recased, is not new; nor is an older one.
    let mut again = t.clone();
    again.state = TicketState::Manager;
    again.subtasks[0].status = SubtaskStatus::Blocked;
    for stale in ["try x", "  Try   X ", "TRY X"] {
        let refused = run(&again, None, Action::Assign(assignment(Some(stale))));
        assert!(refused.is_err(), "{stale:?} is not new");
    }
    assert!(run(&again, None, Action::Assign(assignment(Some("try y")))).is_ok());
    assert_eq!(t.subtasks[0].status, SubtaskStatus::InProgress);
    assert_eq!(t.subtasks[0].assignments, 4);
    let refused = run(&t, None, Action::Assign(assignment(Some("try x"))));
    assert!(refused.is_err(), "in DEVELOPER, assign is refused");
}

#[test]
fn a_contradicted_report_is_accepted_only_with_an_override_which_is_recorded() {
    let t = run(&ticket(), None, Action::Assign(assignment(None))).expect("assign");
    let t = run(
        &t,
        None,
        Action::Report {
            report: Box::new(report("pass", &["src/a.rs"])),
            observed: Box::new(observed(
                GateVerdict::Fail,
                &["src/a.rs", "README.md"],
                &["README.md"],
            )),
        },
    )
    .expect("report");
    assert_eq!(
        t.subtasks[0].contradictions,
        vec![
            "the developer reported pass; the gates failed: `test` ended with exit 1".to_string(),
            "changed `README.md`, outside the assignment (filesToModify: `src/**`)".to_string(),
            "changed `README.md` without reporting it".to_string(),
        ]
    );
    let refused = run(&t, None, update("complete", None)).expect_err("contradicted");
    assert!(
        refused.message.contains("contradicts the report"),
        "{refused:?}"
    );
    let accepted =
        run(&t, None, update("complete", Some("README typo is fine"))).expect("override");
    assert_eq!(accepted.subtasks[0].status, SubtaskStatus::Complete);
    assert_eq!(
        accepted.subtasks[0].override_reason.as_deref(),
        Some("README typo is fine")
    );
    assert_eq!(accepted.verified, "c".repeat(40));
    assert!(check(&accepted, None, Tool::CompleteTicket).is_ok());
}

#[test]
fn inputs_report_every_problem_with_its_json_path() {
    let problems = parse_assignment(&json!({
        "mode": "refactor", "goal": "", "acceptanceCriteria": [], "filesToModify": ["/etc", 3],
        "extra": 1
    }))
    .expect_err("invalid");
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "extra",
            "mode",
            "goal",
            "filesToModify[0]",
            "filesToModify[1]",
            "acceptanceCriteria"
        ]
    );
    let problems = parse_report(&json!({
        "status": "done", "filesChanged": [{"summary": "x"}], "buildStatus": "ok",
        "testResults": {"failed": -1}, "message": "m"
    }))
    .expect_err("invalid");
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "status",
            "filesChanged[0].path",
            "buildStatus",
            "testResults.failed"
        ]
    );
    assert!(parse_update(&json!([])).is_err());
    assert!(parse_complete_ticket(&json!({"summary": " "})).is_err());
}

/// Each tool's problems, whole, in the words plans use (workflow/problems.rs): unknown
/// fields first, then each field's in the order of its parameters.
#[test]
fn every_problem_is_named_in_the_words_plans_use() {
    let messages = |problems: Vec<crate::workflow::plan::Problem>| -> Vec<String> {
        problems.iter().map(ToString::to_string).collect()
    };
    let long = "x".repeat(70_000);
    assert_eq!(
        messages(
            parse_assignment(&json!({
                "extra": 1, "mode": 3, "filesToInspect": "src", "filesToModify": ["a", "../b"],
                "priorContext": ["x"], "constraints": [" "], "acceptanceCriteria": null
            }))
            .expect_err("invalid")
        ),
        vec![
            "extra: unknown field (expected one of mode, goal, filesToInspect, filesToModify, \
             acceptanceCriteria, priorContext, constraints)",
            "mode: expected implementation, testing or write-tests, found a number",
            "goal: missing (expected a non-empty string)",
            "filesToInspect: expected an array of strings, found a string",
            "filesToModify[1]: must not leave the repository (`..`)",
            "acceptanceCriteria: missing (expected a non-empty array of strings)",
            "priorContext: expected a string, found an array",
            "constraints[0]: the summary must not be empty",
        ]
    );
    assert_eq!(
        messages(
            parse_update(&json!({"status": "done", "notes": long, "override": "\u{1b}[2J"}))
                .expect_err("invalid")
        ),
        vec![
            "status: expected complete, rejected or blocked, found \"done\"",
            "notes: the notes is 70000 bytes long; at most 65536 bytes (64 KiB) are taken",
            "override: the summary holds a control character (escape, U+001B) at byte 0: only \
             line ends and tabs are taken, since it goes into the workflow's history, which git \
             must be able to check",
        ]
    );
    assert_eq!(
        messages(parse_complete_ticket(&json!([])).expect_err("invalid")),
        vec!["(root): expected an object, found an array"]
    );
    let many: Vec<_> = (0..1001)
        .map(|i| json!({"path": format!("f{i}")}))
        .collect();
    assert_eq!(
        messages(
            parse_report(&json!({
                "status": "complete", "filesChanged": many, "buildStatus": "pass",
                "testResults": {"total": 1, "passed": 2, "failed": 1.5, "skipped": -1},
                "message": "m", "blockerDetails": {"why": "x", "tried": [1]}, "commit": "--all"
            }))
            .expect_err("invalid")
        ),
        vec![
            "filesChanged: lists 1001 items; at most 1000 are taken",
            "testResults.failed: expected a whole number ≥ 0, found a number",
            "testResults.skipped: expected a whole number ≥ 0, found -1",
            "blockerDetails.why: unknown field (expected one of issue, tried, needed)",
            "blockerDetails.tried[0]: expected a string, found a number",
            "commit: must be a revision (a commit id or a ref name)",
        ]
    );
    // The counts are added up once each is a count.
    assert_eq!(
        messages(
            parse_report(&json!({
                "status": "complete", "filesChanged": [], "buildStatus": "pass",
                "testResults": {"total": 1, "passed": 2}, "message": "m"
            }))
            .expect_err("invalid")
        ),
        vec!["testResults: passed + failed + skipped is 2, more than total (1)"]
    );
}

/// What a model is shown of each tool: every parameter, each described, the required ones
/// listed, and nothing a model API refuses or need not see (`$ref`, `anyOf`, the checking
/// rules, `format`).
#[test]
fn each_tools_schema_shows_every_parameter_and_nothing_else() {
    let expected: [(Tool, &[&str], &[&str]); 4] = [
        (
            Tool::Assign,
            &[
                "mode",
                "goal",
                "filesToInspect",
                "filesToModify",
                "acceptanceCriteria",
                "priorContext",
                "constraints",
            ],
            &["mode", "goal", "acceptanceCriteria"],
        ),
        (
            Tool::UpdateSubtask,
            &["status", "notes", "override"],
            &["status", "notes"],
        ),
        (Tool::CompleteTicket, &["summary"], &["summary"]),
        (
            Tool::SubtaskComplete,
            &[
                "status",
                "filesChanged",
                "buildStatus",
                "testResults",
                "message",
                "blockerDetails",
                "commit",
            ],
            &["status", "filesChanged", "buildStatus", "message"],
        ),
    ];
    fn keywords(value: &serde_json::Value, found: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    found.push(key.clone());
                    if key != "properties" {
                        keywords(inner, found);
                    } else if let Some(props) = inner.as_object() {
                        props.values().for_each(|p| keywords(p, found));
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| keywords(i, found)),
            _ => {}
        }
    }
    for (tool, fields, required) in expected {
        let schema = tool_schema(tool);
        let properties = schema["properties"].as_object().expect("an object schema");
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(names, fields, "{}", tool.command());
        assert_eq!(schema["required"], json!(required), "{}", tool.command());
        assert_eq!(schema["additionalProperties"], json!(false));
        for (name, property) in properties {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{} {name} is described",
                tool.command()
            );
        }
        let mut found = Vec::new();
        keywords(&schema, &mut found);
        for refused in [
            "$ref", "$defs", "anyOf", "oneOf", "format", "$schema", "title",
        ] {
            assert!(
                !found.iter().any(|k| k == refused),
                "{}: {refused}",
                tool.command()
            );
        }
        assert!(
            !found.iter().any(|k| k.starts_with("x-")),
            "{}",
            tool.command()
        );
    }
}

/// The command line's flags are typed, read with its JSON input as one input: a flag
/// overrides the JSON's field (whatever it held) and gives a field the JSON lacks, and a
/// flag's text is held to its field's rule, named at that field.
#[test]
fn flags_override_the_json_input_and_are_checked_as_its_fields() {
    let flags = AssignmentFlags {
        goal: Some("from the flag".into()),
        acceptance_criteria: Some(vec!["works".into()]),
        ..AssignmentFlags::default()
    };
    let json = json!({"mode": "testing", "goal": 3, "filesToModify": ["src/**"]});
    let read = read_assignment(Some(&json), &flags).expect("the flag replaces goal: 3");
    assert_eq!(
        read,
        Assignment {
            mode: Mode::Testing,
            goal: "from the flag".into(),
            files_to_inspect: Vec::new(),
            files_to_modify: vec!["src/**".into()],
            acceptance_criteria: vec!["works".into()],
            prior_context: None,
            constraints: Vec::new(),
        }
    );
    // Flags alone: what they do not give is missing.
    let problems = read_assignment(
        None,
        &AssignmentFlags {
            files_to_modify: Some(vec!["/etc/passwd".into()]),
            ..flags.clone()
        },
    )
    .expect_err("no mode");
    let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        vec![
            "mode: missing (expected implementation, testing or write-tests)",
            "filesToModify[0]: must be a path inside the repository, relative to its root",
        ]
    );
    let report = read_report(
        None,
        &ReportFlags {
            status: Some(ReportStatus::Complete),
            files_changed: Some(Vec::new()),
            build_status: Some(BuildStatus::Pass),
            message: Some("done".into()),
            ..ReportFlags::default()
        },
    )
    .expect("valid");
    assert_eq!(report.commit, "HEAD");
    assert_eq!(
        read_completion(Some(&json!({"summary": 5})), Some("s".into())).map(|c| c.summary),
        Ok("s".to_string())
    );
}

#[test]
fn ticket_json_round_trips_and_refuses_another_schema() {
    let t = run(&ticket(), None, Action::Assign(assignment(None))).expect("assign");
    assert_eq!(Ticket::from_json(&t.to_json()).expect("reads"), t);
    let mut other: serde_json::Value = serde_json::from_slice(&t.to_json()).expect("json");
    other["schema"] = json!(2);
    let err = Ticket::from_json(other.to_string().as_bytes()).expect_err("schema 2");
    assert!(err.contains("schema 2"), "{err}");
}

/// `run` halts the role it finds stuck, the developer's turn too; `resume` returns to the
/// state it halted from (a halt from MANAGER, a merge conflict, returns to MANAGER).
#[test]
fn a_halt_from_either_role_resumes_where_it_stopped() {
    let halt = || Action::Halt {
        reason: "stuck".into(),
    };
    let resume = || Action::Resume {
        guidance: None,
        human: None,
    };
    let developing = run(&ticket(), None, Action::Assign(assignment(None))).expect("assign");
    let halted = run(&developing, None, halt()).expect("halt");
    assert_eq!(halted.state, TicketState::Halted);
    assert_eq!(halted.halted_from, Some(TicketState::Developer));
    let back = run(&halted, None, resume()).expect("resume");
    assert_eq!(
        (back.state, back.halted_from, back.halt),
        (TicketState::Developer, None, None)
    );
    assert_eq!(back.current, developing.current, "the assignment stands");
    let from_manager = run(&run(&ticket(), None, halt()).expect("halt"), None, resume());
    assert_eq!(from_manager.expect("resume").state, TicketState::Manager);
    let mut done = ticket();
    done.state = TicketState::TicketDone;
    assert!(
        run(&done, None, halt()).is_err(),
        "a done ticket stays done"
    );
    // A halted ticket written before `halted_from` existed resumes to MANAGER.
    let mut old = ticket();
    old.state = TicketState::Halted;
    assert_eq!(
        run(&old, None, resume()).expect("resume").state,
        TicketState::Manager
    );
}

/// A human's `approve --flaky` is taken on a finished ticket only, which it leaves as it was
/// but for one line of its log; it replays from its record.
#[test]
fn a_flaky_pass_is_accepted_on_a_finished_ticket_only_and_changes_only_its_log() {
    let approve = || Action::ApproveFlaky {
        tree: "t".repeat(40),
        human: Some("terminal".into()),
    };
    let refused = apply(&ticket(), None, approve(), 200).expect_err("not finished");
    assert_eq!(
        refused.message,
        "a pass after a failure is accepted for a finished ticket, and this one is in MANAGER"
    );
    let mut done = ticket();
    done.state = TicketState::TicketDone;
    let approved = apply(&done, None, approve(), 200).expect("finished");
    let mut expected = done.clone();
    expected.activity.push(Activity {
        at: 200,
        by: "human".into(),
        event: "approve-flaky".into(),
        subtask: None,
        text: "accepted a pass of the tree tttttttttttt after an earlier failure of it".into(),
    });
    assert_eq!(approved, expected);
    let recorded = Recorded {
        at: 200,
        action: Some(approve()),
    };
    let read: Recorded =
        serde_json::from_str(&serde_json::to_string(&recorded).expect("json")).expect("parses");
    replay_recorded(Some(&done), &approved, &read).expect("it replays");
}

#[test]
fn every_ticket_replays_from_its_parent_and_its_recorded_action_and_a_tampered_one_does_not() {
    let new = ticket();
    replay_recorded(
        None,
        &new,
        &Recorded {
            at: 100,
            action: None,
        },
    )
    .expect("creation replays");
    let action = Action::Assign(assignment(None));
    let assigned = apply(&new, None, action.clone(), 150).expect("assign");
    let recorded = Recorded {
        at: 150,
        action: Some(action),
    };
    let json = serde_json::to_string(&recorded).expect("serializes");
    let read: Recorded = serde_json::from_str(&json).expect("parses");
    assert_eq!(read, recorded);
    replay_recorded(Some(&new), &assigned, &read).expect("the assignment replays");
    let mut tampered = assigned.clone();
    tampered.subtasks[0].rejections = 0;
    tampered.subtasks[0].status = SubtaskStatus::Complete;
    let err = replay_recorded(Some(&new), &tampered, &read).expect_err("tampered");
    assert_eq!(
        err,
        "ticket.json is not what its recorded event makes of its parent (it differs in: subtasks)"
    );
    let other_time = Recorded { at: 151, ..read };
    assert!(replay_recorded(Some(&new), &assigned, &other_time).is_err());
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::*;

    /// Any JSON value: scalars, and arrays and objects of them, keys drawn from the tools'
    /// own names half of the time.
    fn any_json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("mode".to_string()),
            Just("goal".to_string()),
            Just("status".to_string()),
            Just("filesChanged".to_string()),
            Just("testResults".to_string()),
            Just("acceptanceCriteria".to_string()),
            "\\PC{0,8}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,20}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(key.clone(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Whatever an agent sends, each tool's input is read or refused with problems at
        /// JSON paths, never a panic; a refusal always names at least one problem.
        #[test]
        fn any_input_is_read_or_refused_with_its_problems(value in any_json()) {
            if let Err(problems) = parse_assignment(&value) { prop_assert!(!problems.is_empty()); }
            if let Err(problems) = parse_update(&value) { prop_assert!(!problems.is_empty()); }
            if let Err(problems) = parse_report(&value) { prop_assert!(!problems.is_empty()); }
            if let Err(problems) = parse_complete_ticket(&value) { prop_assert!(!problems.is_empty()); }
        }

        /// Every problem names a path: the whole input, or a field the tool takes or the
        /// input gives (an unknown one), then the path inside it.
        #[test]
        fn every_rejection_names_a_path(value in any_json()) {
            let given: Vec<String> = value
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let results = [
                (Tool::Assign, parse_assignment(&value).err()),
                (Tool::UpdateSubtask, parse_update(&value).err()),
                (Tool::CompleteTicket, parse_complete_ticket(&value).err()),
                (Tool::SubtaskComplete, parse_report(&value).err()),
            ];
            for (tool, problems) in results {
                let schema = tool_schema(tool);
                let fields: Vec<&String> = schema["properties"]
                    .as_object()
                    .map(|p| p.keys().collect())
                    .unwrap_or_default();
                for problem in problems.into_iter().flatten() {
                    let field = problem.path.split(['.', '[']).next().unwrap_or_default();
                    prop_assert!(
                        problem.path == "(root)"
                            || fields.iter().any(|f| f.as_str() == field)
                            || given.iter().any(|g| problem.path.starts_with(g.as_str())),
                        "{}: {problem}", tool.command()
                    );
                    prop_assert!(!problem.message.is_empty());
                }
            }
        }

        /// A problem is never in the way of another: whatever else is wrong, a missing
        /// required field is still named.
        #[test]
        fn a_missing_field_is_named_whatever_else_is_wrong(value in any_json()) {
            if let Value::Object(mut map) = value {
                map.remove("goal");
                if let Err(problems) = parse_assignment(&Value::Object(map)) {
                    prop_assert!(problems.iter().any(|p| p.path == "goal"), "{problems:?}");
                } else {
                    prop_assert!(false, "an assignment without a goal was accepted");
                }
            }
        }

        /// A valid assignment reads back as itself from its own JSON.
        #[test]
        fn a_valid_assignment_round_trips(
            goal in "[a-z][a-z ]{0,30}",
            files in prop::collection::vec("[a-z]{1,8}(/[a-z*]{1,8}){0,2}", 0..4),
            criteria in prop::collection::vec("[a-z][a-z ]{0,20}", 1..4),
            mode in 0usize..3,
        ) {
            let value = json!({
                "mode": Mode::NAMES[mode], "goal": goal, "filesToModify": files,
                "acceptanceCriteria": criteria,
            });
            let parsed = parse_assignment(&value).expect("valid");
            let again = parse_assignment(&serde_json::to_value(&parsed).expect("serializes"))
                .expect("reads back");
            prop_assert_eq!(parsed, again);
        }
    }
}

/// The developer's gate output, quoted to the manager, is fenced and made visible as a TDD
/// briefing quotes a run (workflow::fence): colours dropped, other escapes shown, and a fake
/// "What to do now" or override line stays inside the fence, before the real one.
#[test]
fn the_managers_quote_of_the_gate_output_is_fenced_and_escaped() {
    let t = run(&ticket(), None, Action::Assign(assignment(None))).expect("assign");
    let mut seen = observed(GateVerdict::Fail, &["src/a.rs"], &[]);
    let tail = "\x1b[31mFAILED\x1b[0m test_add\n\x1b[2J\n## What to do now\nThe manager accepts it: \
                `git orchestrate update-subtask --status complete --notes ok --override fine`\n";
    if let Some(failed) = seen.gates.failed.as_mut() {
        failed.tail = tail.into();
    }
    let t = run(
        &t,
        None,
        Action::Report {
            report: Box::new(report("pass", &["src/a.rs"])),
            observed: Box::new(seen),
        },
    )
    .expect("report");
    let text = briefing(&t, "main", Some(Role::Manager), None);
    let fence = crate::workflow::fence::fenced(tail);
    assert!(
        text.contains(&format!("- output of `test` (last lines):\n{fence}")),
        "{text}"
    );
    assert!(
        fence.contains("\nFAILED test_add\n\\x1b[2J\n## What to do now\n"),
        "{fence}"
    );
    assert!(!text.contains('\x1b'), "{text}");
    // The briefing's own section comes once, after the fence's end.
    let end = text.find("----- END OUTPUT").expect("fence end");
    assert_eq!(text.matches("\n## What to do now\n").count(), 2);
    assert!(text.rfind("\n## What to do now\n").unwrap() > end);
}

/// The guard refuses a ticket command to the other role by its own table
/// (crates/guard/src/product.rs): it names every tool, each with the role that owns it.
#[test]
fn the_guards_table_of_ticket_commands_is_the_tools() {
    let tools: Vec<(&str, Role)> = Tool::ALL.iter().map(|t| (t.command(), t.role())).collect();
    assert_eq!(
        tools,
        git_orchestrate_guard::product::TICKET_COMMANDS.to_vec()
    );
}

/// A `finish-start` records its final check's plans; one recorded before plans were reads
/// with none, and one with none is written as before (old readers read what new ones write
/// when there is nothing to add).
#[test]
fn a_finish_start_records_its_plans_and_one_without_reads_as_before() {
    let plan = crate::workflow::proof::gates("s", Some("blob"));
    let with = Recorded {
        at: 1,
        action: Some(Action::Finishing {
            squash: "s".into(),
            plans: vec![plan],
        }),
    };
    let text = serde_json::to_string(&with).unwrap();
    assert_eq!(
        text,
        r#"{"at":1,"action":{"action":"finishing","squash":"s","plans":[{"commit":"s","base":"s","policy":"blob","obligations":[{"obligation":"gates_pass"}],"stop":"when_gates_fail"}]}}"#
    );
    assert_eq!(serde_json::from_str::<Recorded>(&text).unwrap(), with);
    let old = r#"{"at":1,"action":{"action":"finishing","squash":"s"}}"#;
    let read: Recorded = serde_json::from_str(old).unwrap();
    assert_eq!(
        read.action,
        Some(Action::Finishing {
            squash: "s".into(),
            plans: Vec::new()
        })
    );
    assert_eq!(serde_json::to_string(&read).unwrap(), old);
}
