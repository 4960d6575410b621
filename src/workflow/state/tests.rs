//! `state.json` read and written: every phase through its wire form and back.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn new_state_serializes_minimally() {
    let state = State::new(Some("main".into()));
    assert_eq!(
        String::from_utf8(state.to_json()).unwrap(),
        "{\n  \"schema\": 1,\n  \"status\": \"INITIALIZING\",\n  \"main_branch\": \"main\"\n}\n"
    );
}

#[test]
fn unknown_status_is_an_error_naming_it() {
    let err = State::from_json(br#"{"schema":1,"status":"DANCING"}"#).unwrap_err();
    assert!(err.contains("unknown variant `DANCING`"), "{err}");
}

#[test]
fn unknown_schema_is_an_error() {
    let err = State::from_json(br#"{"schema":2,"status":"INITIALIZING"}"#).unwrap_err();
    assert!(err.starts_with("schema 2 is not understood"), "{err}");
}

#[test]
fn unknown_fields_survive_a_round_trip() {
    let state = State::from_json(
        br#"{"schema":1,"status":"HALTED","future_field":{"a":1},
             "halt":{"reason":"escalated","message":"m","resume_to":"INITIALIZING"}}"#,
    )
    .unwrap();
    let again = State::from_json(&state.to_json()).unwrap();
    assert_eq!(again.extra["future_field"], serde_json::json!({"a": 1}));
    assert_eq!(again.status(), Status::Halted);
}

#[test]
fn the_old_plan_summary_cache_is_read_and_dropped() {
    let state = State::from_json(
        br#"{"schema":1,"status":"INITIALIZING","plan_summary":{"title":"t"},"plan_blob":"abc"}"#,
    )
    .unwrap();
    assert!(state.extra.is_empty(), "{:?}", state.extra);
    assert_eq!(
        String::from_utf8(state.to_json()).unwrap(),
        "{\n  \"schema\": 1,\n  \"status\": \"INITIALIZING\"\n}\n"
    );
}

/// Every phase, as version 0.2 wrote it: read into a phase and written back byte for byte.
#[test]
fn schema_1_states_round_trip_through_their_phase() {
    let pr = r#""current_pr_branch":"feat/x","branch_base":"b0","last_commit_hash":"c1","verified_tree":"t1","review_round":2,"blocked_rounds":1"#;
    let cases = [
        r#"{"schema":1,"status":"INITIALIZING","main_branch":"main"}"#.to_string(),
        r#"{"schema":1,"status":"CREATING_BRANCH","current_pr_branch":"feat/x","last_error":"dirty"}"#.into(),
        format!(r#"{{"schema":1,"status":"EXECUTING_TDD",{pr},"pending":{{"kind":"checkpoint","step":"1.2","type":"GREEN","description":"d"}}}}"#),
        format!(r#"{{"schema":1,"status":"DEBUGGING","debug_attempt_counter":3,{pr},"last_error":"boom","identical_failures":1,"pending":{{"kind":"analysis","step":"1.1","command":"false","exit":{{"code":1}},"output_tail":"x"}}}}"#),
        format!(r#"{{"schema":1,"status":"REPLANNING","debug_attempt_counter":5,{pr},"last_error":"boom","replan_context":{{"original_task":"a","step":"1.2","error":"boom"}}}}"#),
        format!(r#"{{"schema":1,"status":"CODE_REVIEW",{pr},"pending":{{"kind":"approval","round":2}}}}"#),
        format!(r#"{{"schema":1,"status":"CODE_REVIEW",{pr},"last_error":"reviewer crashed"}}"#),
        format!(r#"{{"schema":1,"status":"AWAITING_FINALIZATION",{pr}}}"#),
        format!(r#"{{"schema":1,"status":"FINALIZE_COMPLETE","final_commit":"f",{pr}}}"#),
        format!(r#"{{"schema":1,"status":"MERGING_BRANCH","final_commit":"f","plan_commit":"p",{pr},"last_error":"dirty"}}"#),
        format!(r#"{{"schema":1,"status":"HALTED","debug_attempt_counter":4,{pr},"last_error":"boom","halt":{{"reason":"escalated","message":"help","resume_to":"DEBUGGING"}},"guidance":"g"}}"#),
    ];
    for json in cases {
        let state = State::from_json(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
        let written: serde_json::Value = serde_json::from_slice(&state.to_json()).unwrap();
        let read: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(written, read, "{json}");
    }
}

#[test]
fn a_halt_keeps_the_phase_it_resumes_to() {
    let state = State::from_json(
        br#"{"schema":1,"status":"HALTED","debug_attempt_counter":4,"current_pr_branch":"b","last_error":"boom",
             "halt":{"reason":"escalated","message":"help","resume_to":"DEBUGGING"}}"#,
    )
    .unwrap();
    let Phase::Halted { halt, resume } = &state.phase else {
        panic!("{:?}", state.phase)
    };
    assert_eq!(halt.message, "help");
    assert_eq!(resume.status(), Status::Debugging);
    assert_eq!(state.attempts(), 4);
    assert_eq!(state.branch(), Some("b"));
}

#[test]
fn states_that_cannot_be_are_errors_naming_the_field() {
    for (json, wanted) in [
        (
            r#"{"schema":1,"status":"EXECUTING_TDD"}"#,
            "state EXECUTING_TDD needs `current_pr_branch`",
        ),
        (
            r#"{"schema":1,"status":"HALTED"}"#,
            "state HALTED needs `halt`",
        ),
        (
            r#"{"schema":1,"status":"MERGING_BRANCH","current_pr_branch":"b","final_commit":"f"}"#,
            "state MERGING_BRANCH needs `plan_commit`",
        ),
        (
            r#"{"schema":1,"status":"EXECUTING_TDD","current_pr_branch":"b","pending":{"kind":"approval","round":1}}"#,
            "state EXECUTING_TDD cannot wait for approval",
        ),
        (
            r#"{"schema":1,"status":"DEBUGGING","current_pr_branch":"b","last_run":{"step":"1.1","command":"c","expectation":"PASS","exit":{"code":1,"signal":9},"verdict":"FAILURE"}}"#,
            "exactly one of `code`, `signal` and `timeout_ms`",
        ),
    ] {
        let err = State::from_json(json.as_bytes()).unwrap_err();
        assert!(err.contains(wanted), "{json}: {err}");
    }
}

#[test]
fn a_preflight_record_passes_exactly_when_every_gate_did() {
    let gate = |code| GateRecord {
        name: "g".into(),
        exit: ExitRecord::code(code),
        ms: 1,
        reused: false,
    };
    assert!(PreflightRecord { gates: vec![] }.passed());
    assert!(
        PreflightRecord {
            gates: vec![gate(0)]
        }
        .passed()
    );
    assert!(
        !PreflightRecord {
            gates: vec![gate(0), gate(1)]
        }
        .passed()
    );
    // A stored `passed` is never believed over the gates it summarises.
    let forged: PreflightRecord =
        serde_json::from_str(r#"{"passed":true,"gates":[{"name":"g","exit":{"code":1},"ms":1}]}"#)
            .unwrap();
    assert!(!forged.passed());
}

#[test]
fn every_status_is_listed_once() {
    let names: std::collections::BTreeSet<_> = Status::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(names.len(), Status::ALL.len());
    for status in Status::ALL {
        let json = serde_json::to_string(status).unwrap();
        assert_eq!(json, format!("\"{status}\""));
    }
}

#[test]
fn durations_read_naturally() {
    assert_eq!(format_ms(600_000), "10m");
    assert_eq!(format_ms(1_000), "1s");
    assert_eq!(format_ms(1_500), "1.5s");
    assert_eq!(format_ms(250), "250ms");
    assert_eq!(format_ms(7_200_000), "2h");
}

/// The one-pass road and the buffering road read every state alike: the same wire form and
/// the same record, or the same error; an array, an unknown field, an old cache or another
/// schema is never decided by the one-pass road.
#[test]
fn both_roads_read_a_state_alike() {
    type Record = serde_json::Value;
    let buffered = State::wire_with_record_buffered::<Record>;
    let pr = r#""current_pr_branch":"feat/x","branch_base":"b0","last_commit_hash":"c1","verified_tree":"t1","review_round":2,"blocked_rounds":1"#;
    let cases = [
        r#"{"schema":1,"status":"INITIALIZING","main_branch":"main"}"#.to_string(),
        r#"  {"schema":1,"status":"CREATING_BRANCH","current_pr_branch":"feat/x","last_error":"dirty"}"#.into(),
        format!(r#"{{"schema":1,"status":"EXECUTING_TDD",{pr},"pending":{{"kind":"checkpoint","step":"1.2","type":"GREEN","description":"d"}},"plan_progress":{{"plan":"p","done":["1.1"],"nested":[1,2.5,null,true]}}}}"#),
        format!(r#"{{"schema":1,"status":"DEBUGGING","debug_attempt_counter":3,{pr},"last_error":"boom","identical_failures":1,"pending":{{"kind":"analysis","step":"1.1","command":"false","exit":{{"code":1}},"output_tail":"x"}},"plan_progress":null}}"#),
        format!(r#"{{"schema":1,"status":"HALTED","debug_attempt_counter":4,{pr},"last_error":"boom","halt":{{"reason":"escalated","message":"help","resume_to":"DEBUGGING"}},"guidance":"g"}}"#),
        format!(r#"{{"schema":1,"status":"CODE_REVIEW",{pr},"pending":{{"kind":"approval","round":2}},"future_field":{{"a":1}}}}"#),
        r#"{"schema":1,"status":"INITIALIZING","plan_summary":{"old":1},"plan_blob":"b"}"#.into(),
        r#"{"schema":2,"status":"INITIALIZING"}"#.into(),
        r#"{"schema":"1","status":"INITIALIZING"}"#.into(),
        r#"{"schema":1.0,"status":"INITIALIZING"}"#.into(),
        r#"{"status":"INITIALIZING"}"#.into(),
        r#"{"schema":1,"status":"DANCING"}"#.into(),
        r#"{"schema":1,"status":"INITIALIZING","schema":1}"#.into(),
        r#"{"schema":1,"status":"INITIALIZING","review_round":-1}"#.into(),
        r#"[1,"INITIALIZING"]"#.into(),
        r#"{"schema":1,"status":"INITIALIZING"} x"#.into(),
        "not json".into(),
    ];
    for json in &cases {
        let bytes = json.as_bytes();
        assert_eq!(
            State::wire_with_record::<Record>(bytes),
            buffered(bytes),
            "{json}"
        );
    }
    let (wire, _) = State::wire_with_record::<Record>(cases[5].as_bytes()).unwrap();
    assert_eq!(wire.extra["future_field"], serde_json::json!({"a": 1}));
    assert!(State::wire_with_record::<Record>(cases[14].as_bytes()).is_err());
}
