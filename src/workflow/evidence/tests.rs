use std::collections::{BTreeMap, BTreeSet};

use pretty_assertions::assert_eq;
use proptest::prelude::*;

use super::*;

fn evidence(kind: Kind, tests: &[(&str, Outcome)]) -> Evidence {
    Evidence::of(
        kind,
        tests.iter().map(|(id, o)| (id.to_string(), *o)).collect(),
    )
}

const PYTEST_JUNIT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="5" time="0.05" timestamp="2026-11-29T00:00:00" hostname="h"><testcase classname="tests.test_calc" name="test_add" time="0.001" /><testcase classname="tests.test_calc" name="test_mul[2-3]" time="0.001"><failure message="assert '' == '6'">def test_mul():
&gt;       assert mul(2, 3) == '6'</failure></testcase><testcase classname="tests.test_calc" name="test_later" time="0.000"><skipped type="pytest.skip" message="later">tests/test_calc.py:9: later</skipped></testcase><testcase classname="tests.test_calc" name="test_div" time="0.000"><skipped type="pytest.xfail" message="not yet" /></testcase><testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">ImportError</error></testcase></testsuite></testsuites>"#;

#[test]
fn pytests_junit_report_reads_per_test() {
    let tests = junit::parse(PYTEST_JUNIT.as_bytes()).expect("a report");
    assert_eq!(
        tests.into_iter().collect::<Vec<_>>(),
        vec![
            ("tests.test_broken".to_string(), Outcome::Error),
            ("tests.test_calc::test_add".to_string(), Outcome::Passed),
            ("tests.test_calc::test_div".to_string(), Outcome::Xfail),
            ("tests.test_calc::test_later".to_string(), Outcome::Skipped),
            (
                "tests.test_calc::test_mul[2-3]".to_string(),
                Outcome::Failed
            ),
        ]
    );
    assert!(junit::parse(b"<html>not a report</html>").is_err());
    assert!(junit::parse(b"<testsuite><testcase name=\"a\"").is_err());
}

#[test]
fn libtest_lines_of_every_binary_are_read() {
    let out = "   Compiling calc v0.1.0\n     Running unittests src/lib.rs\n\nrunning 2 tests\ntest tests::adds ... ok\ntest tests::muls ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n\n     Running tests/it.rs\n\nrunning 2 tests\ntest slow ... ignored, takes long\ntest tests::adds ... ok\n\ntest result: ok. 1 passed; 0 failed; 1 ignored\n";
    let (tests, cut) = libtest::parse(out).expect("libtest");
    assert!(cut.is_empty());
    assert_eq!(tests.len(), 3);
    assert_eq!(tests["tests::muls"], Outcome::Failed);
    assert_eq!(tests["slow"], Outcome::Skipped);
    assert_eq!(tests["tests::adds"], Outcome::Passed);
    // A binary that announced its test and was ended before its result is named.
    let (tests, cut) = libtest::parse(
        "running 1 test\ntest adds ... ok\ntest result: ok. 1 passed\nrunning 1 test\nrunning 0 tests\ntest result: ok. 0 passed\n",
    )
    .expect("libtest");
    assert_eq!(tests.len(), 1);
    assert_eq!(
        cut,
        vec!["a test binary's result (running 1 test)".to_string()]
    );
    let evidence = read(
        &request("cargo test"),
        &ReportFile::NotAsked,
        b"running 1 test\n",
    );
    assert_eq!(
        passes(&evidence, None, &[]).map_err(|s| s.to_string()),
        Err("a test binary's result (running 1 test) was announced and never reported: the run ended before it was".into())
    );
    // `cargo test -q` prints no names: nothing per test.
    assert_eq!(
        libtest::parse("running 2 tests\n..\ntest result: ok. 2 passed; 0 failed\n"),
        None
    );
    assert_eq!(libtest::parse("all tests pass\n"), None);
}

#[test]
fn tap_lines_plans_and_directives_are_read() {
    let (tests, unreported) =
        tap::parse("1..4\nok 1 - adds\nnot ok 2 - muls\nok 3 # SKIP no bc\n# a comment\n")
            .expect("tap");
    assert_eq!(tests["adds"], Outcome::Passed);
    assert_eq!(tests["muls"], Outcome::Failed);
    assert_eq!(tests["3"], Outcome::Skipped);
    assert_eq!(unreported, vec!["test 4 of the plan 1..4".to_string()]);
    let (todo, _) = tap::parse("not ok 1 - divides # TODO later\n").expect("tap");
    assert_eq!(todo["divides"], Outcome::Xfail);
    assert_eq!(tap::parse("ok\nall good\n"), None, "a bare ok is no TAP");
}

#[test]
fn go_test_json_events_are_read() {
    let out = r#"{"Action":"start","Package":"calc"}
{"Action":"run","Package":"calc","Test":"TestMul"}
{"Action":"output","Package":"calc","Test":"TestMul","Output":"--- FAIL: TestMul\n"}
{"Action":"fail","Package":"calc","Test":"TestMul","Elapsed":0}
{"Action":"skip","Package":"calc","Test":"TestDiv","Elapsed":0}
{"Action":"pass","Package":"calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"calc","Elapsed":0.01}
"#;
    let tests = gotest::parse(out).expect("go's").expect("events");
    assert_eq!(tests["calc::TestMul"], Outcome::Failed);
    assert_eq!(tests["calc::TestDiv"], Outcome::Skipped);
    assert_eq!(tests["calc::TestAdd"], Outcome::Passed);
    assert_eq!(tests.len(), 3);
    assert_eq!(gotest::parse("ok\n"), Ok(None));
}

/// What the test binary prints is an `output` event's text, never an event; a test run
/// twice is at its worst run; a package go could not build is one error by its name.
#[test]
fn go_test_json_is_read_as_go_wrote_it() {
    let wrapped = r#"{"Action":"output","Package":"calc","Output":"{\"Action\":\"pass\",\"Package\":\"calc\",\"Test\":\"TestMul\"}\n"}
{"Action":"output","Package":"calc","Output":"ok  \tcalc\t0.002s\n"}
{"Action":"pass","Package":"calc","Elapsed":0.002}
"#;
    assert_eq!(gotest::parse(wrapped), Ok(Some(BTreeMap::new())));
    let twice = r#"{"Action":"fail","Package":"calc","Test":"TestMul"}
{"Action":"pass","Package":"calc","Test":"TestMul"}
{"Action":"fail","Package":"calc"}
"#;
    let tests = gotest::parse(twice).expect("go's").expect("events");
    assert_eq!(tests["calc::TestMul"], Outcome::Failed);
    assert_eq!(tests.len(), 1, "the package's fail is its test's");
    let unbuilt = "FAIL\tcalc [build failed]\n";
    let tests = gotest::parse(unbuilt)
        .expect("go's")
        .expect("a failed build");
    assert_eq!(
        tests,
        BTreeMap::from([("calc".to_string(), Outcome::Error)])
    );
}

/// Events the command prints beside go's own (`go test ./...; cat events.json`) show where
/// they are: after go ended their package, or for a package go never ended.
#[test]
fn go_test_events_go_did_not_write_are_refused() {
    let after = r#"{"Action":"fail","Package":"calc","Test":"TestMul"}
{"Action":"fail","Package":"calc"}
{"Action":"pass","Package":"calc","Test":"TestMul"}
"#;
    assert_eq!(
        gotest::parse(after),
        Err(
            "an event of package `calc` comes after go ended that package: go did not write it"
                .to_string()
        )
    );
    let open = "{\"Action\":\"pass\",\"Package\":\"calc\",\"Test\":\"TestMul\"}\n";
    assert_eq!(
        gotest::parse(open),
        Err("package `calc` has test events and no end: go did not write them".to_string())
    );
    let evidence = read(
        &request("go test ./..."),
        &ReportFile::NotAsked,
        after.as_bytes(),
    );
    assert!(!evidence.per_test());
    assert_eq!(
        passes(&evidence, Some(&["calc::TestMul".to_string()]), &[]),
        Err(Shortfall::NoReport {
            why: "its gotest-json report cannot be read: an event of package `calc` comes after \
                  go ended that package: go did not write it"
                .to_string(),
            pinned: Some("calc::TestMul".to_string()),
        })
    );
}

/// jest names a test by its file's absolute path: made relative to the run's directory, the
/// base run and the final tree's, in two directories, name it alike.
#[test]
fn ids_are_relative_to_the_directory_the_run_was_in() {
    let jest = br#"{"testResults":[{"name":"/scratch/a/tests/mul.test.js","status":"failed","assertionResults":[{"fullName":"muls","status":"failed"}]}]}"#;
    let ask = request("jest");
    let evidence = read(&ask, &ReportFile::Written(jest.to_vec()), b"")
        .relative_to(&["/elsewhere".to_string(), "/scratch/a/".to_string()]);
    assert_eq!(
        evidence.tests,
        BTreeMap::from([("tests/mul.test.js::muls".to_string(), Outcome::Failed)])
    );
}

#[test]
fn jest_and_mocha_reports_are_read() {
    let jest = br#"{"numTotalTests":2,"testResults":[{"name":"/r/calc.test.js","status":"failed","assertionResults":[{"fullName":"calc muls","status":"failed"},{"fullName":"calc adds","status":"passed"},{"fullName":"calc divides","status":"todo"}]},{"name":"/r/broken.test.js","status":"failed","assertionResults":[]}]}"#;
    let (tests, files) = jsonreport::jest(jest).expect("jest");
    assert_eq!(
        files["/r/calc.test.js::calc muls"],
        ["/r/calc.test.js".to_string()].into()
    );
    assert_eq!(
        files["/r/broken.test.js"],
        ["/r/broken.test.js".to_string()].into()
    );
    assert_eq!(tests["/r/calc.test.js::calc muls"], Outcome::Failed);
    assert_eq!(tests["/r/calc.test.js::calc adds"], Outcome::Passed);
    assert_eq!(tests["/r/calc.test.js::calc divides"], Outcome::Xfail);
    assert_eq!(tests["/r/broken.test.js"], Outcome::Error);
    let mocha = br#"{"stats":{"tests":2},"passes":[{"fullTitle":"calc adds"}],"pending":[{"fullTitle":"calc divides"}],"failures":[{"fullTitle":"calc muls"}]}"#;
    let (tests, files) = jsonreport::mocha(mocha).expect("mocha");
    assert_eq!(tests["calc adds"], Outcome::Passed);
    assert_eq!(tests["calc divides"], Outcome::Skipped);
    assert_eq!(tests["calc muls"], Outcome::Failed);
    assert_eq!(
        files, None,
        "a report that names no file ties no test to one"
    );
    assert!(jsonreport::jest(b"[]").is_err());
}

#[test]
fn what_a_run_is_asked_for_depends_on_its_runner() {
    let pytest = request("python3 -m pytest -q tests/test_calc.py");
    assert_eq!(pytest.report, Some(ReportAsk::PytestJunit));
    assert_eq!(
        pytest.command, "python3 -m pytest -q tests/test_calc.py",
        "pytest's command is run as given"
    );
    assert_eq!(
        pytest.env("/tmp/r 1/report.xml"),
        vec![(
            "PYTEST_ADDOPTS".to_string(),
            "--junitxml='/tmp/r 1/report.xml' -o junit_family=xunit1".to_string()
        )]
    );
    assert_eq!(
        request("/venv/bin/pytest tests").report,
        Some(ReportAsk::PytestJunit)
    );
    assert_eq!(
        request("pytest --junitxml=out.xml tests").report,
        None,
        "a report of the command's own is in reach of the test: not read"
    );
    let go = request("go test ./...");
    assert_eq!(go.command, "go test ./...", "go's command is run as given");
    assert_eq!((go.report, go.go), (None, Some(GoAsk::Goflags)));
    let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        go.env(""),
        env(&[
            ("GOENV", "off"),
            ("GOTOOLCHAIN", "local"),
            ("GOFLAGS", "-json -count=1")
        ]),
        "no settings file of the user's, no toolchain fetched, no cached result replayed"
    );
    assert_eq!(request("cd x && go test").go, Some(GoAsk::Goflags));
    let vet = request("go vet ./... && go test ./...");
    assert_eq!(
        vet.command, "go vet ./... && go test -json -count=1 ./...",
        "GOFLAGS=-json would make a failing vet exit 0: the flag goes to go test alone"
    );
    let in_command = env(&[
        ("GOENV", "off"),
        ("GOTOOLCHAIN", "local"),
        ("GOFLAGS", "-count=1"),
    ]);
    assert_eq!(
        (vet.go, vet.env("")),
        (Some(GoAsk::InCommand), in_command.clone())
    );
    let own = request("go test -json ./...");
    assert_eq!(
        (own.command.as_str(), own.go),
        ("go test -json ./...", Some(GoAsk::InCommand))
    );
    assert_eq!(
        own.env(""),
        in_command,
        "a command's own -json still gets no cached result"
    );
    assert_eq!(request("cargo test").go, None);
    assert_eq!(request("echo go test-ish").go, None);
    // Any other command gets pytest's report request too: a pytest it runs reports.
    assert_eq!(request("cargo test").report, Some(ReportAsk::PytestIfRun));
    assert_eq!(request("cargo test").command_with("/tmp/r"), "cargo test");
    let jest = request("npx jest calc");
    assert_eq!(jest.report, Some(ReportAsk::Jest));
    assert_eq!(
        jest.command_with("/tmp/r.json"),
        "npx jest calc --json --outputFile='/tmp/r.json'"
    );
    assert_eq!(
        request("npx jest calc | tee log").report,
        Some(ReportAsk::PytestIfRun)
    );
    assert_eq!(
        request("npx mocha --reporter tap").report,
        None,
        "a reporter of the command's own is left alone"
    );
    assert_eq!(
        request("sh tests/test_mul.sh").report,
        Some(ReportAsk::PytestIfRun)
    );
    assert_eq!(request("sh t.sh --junitxml=r.xml").report, None);
}

/// pytest by any spelling is asked for its report (`python -mpytest` is one word), and a
/// pytest run by another command (a script, `make`) reports through the `PYTEST_ADDOPTS` it
/// inherits: its report is read when written, else the run's output is.
#[test]
fn pytest_by_any_spelling_or_through_a_script_reports() {
    for command in [
        "python -B -mpytest -q tests",
        "python3 -m pytest",
        "/venv/bin/pytest tests",
        "py.test",
    ] {
        assert_eq!(
            request(command).report,
            Some(ReportAsk::PytestJunit),
            "{command}"
        );
    }
    let script = request("sh run_tests.sh");
    assert_eq!(
        script.env("/tmp/r"),
        request("pytest").env("/tmp/r"),
        "the same variable"
    );
    let xml = br#"<testsuites><testsuite name="pytest"><testcase classname="tests.test_mul" name="test_mul" file="tests/test_mul.py" /></testsuite></testsuites>"#;
    let through = read(
        &script,
        &ReportFile::Written(xml.to_vec()),
        b"all tests pass\n",
    );
    assert_eq!(through.kind, Kind::Junit);
    assert_eq!(through.tests["tests.test_mul::test_mul"], Outcome::Passed);
    // No pytest ran: the output is read, as before.
    let tap = read(&script, &ReportFile::Absent, b"1..1\nok 1 - muls\n");
    assert_eq!(tap.kind, Kind::Tap);
    let silent = read(&script, &ReportFile::Absent, b"all tests pass\n");
    assert_eq!(silent.kind, Kind::ExitCodeOnly);
    assert!(silent.missing.is_none());
    // Asked directly, pytest that wrote none has no evidence.
    assert!(
        read(&request("pytest"), &ReportFile::Absent, b"")
            .missing
            .is_some()
    );
}

#[test]
fn a_report_asked_for_and_not_written_is_no_evidence() {
    let ask = request("pytest -q");
    let none = read(&ask, &ReportFile::Absent, b"1 passed in 0.01s\n");
    assert_eq!(none.kind, Kind::Junit);
    assert!(!none.per_test());
    assert!(matches!(
        passes(&none, None, &[]),
        Err(Shortfall::NoReport { .. })
    ));
    let garbage = read(&ask, &ReportFile::Written(b"ok".to_vec()), b"");
    assert!(garbage.missing.is_some());
    // What the output prints is not read when a report was asked for: the process prints
    // what it likes.
    let printed = read(
        &ask,
        &ReportFile::Absent,
        b"test tests::muls ... ok\nok 1 - muls\n",
    );
    assert!(printed.tests.is_empty());
    let shell = read(&request("sh t.sh"), &ReportFile::NotAsked, b"all good\n");
    assert_eq!(shell.kind, Kind::ExitCodeOnly);
    assert_eq!(
        passes(&shell, None, &[]),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
}

/// [`red_proven`] with no pinned file.
fn proven(
    on_base: (&Evidence, ExitRecord),
    on_final: (&Evidence, ExitRecord),
) -> Result<(Kind, Vec<String>), (Shortfall, Side)> {
    red_proven(on_base, on_final, &[])
}

#[test]
fn the_red_obligation_is_judged_by_the_pinned_ids() {
    use Outcome::*;
    let fail = ExitRecord::Code(1);
    let pass = ExitRecord::Code(0);
    let base = evidence(
        Kind::Junit,
        &[("t::test_add", Passed), ("t::test_mul", Failed)],
    );
    let honest = evidence(
        Kind::Junit,
        &[("t::test_add", Passed), ("t::test_mul", Passed)],
    );
    assert_eq!(
        proven((&base, fail), (&honest, pass)),
        Ok((Kind::Junit, vec!["t::test_mul".to_string()]))
    );
    for (outcome, named) in [(Skipped, "skipped"), (Xfail, "xfailed"), (Failed, "failed")] {
        let cheat = evidence(
            Kind::Junit,
            &[("t::test_add", Passed), ("t::test_mul", outcome)],
        );
        let refused = proven((&base, fail), (&cheat, pass)).expect_err("refused");
        assert_eq!(refused.1, Side::Final);
        assert_eq!(
            refused.0.to_string(),
            format!("the pinned test `t::test_mul` {named}, it did not pass")
        );
    }
    let missing = evidence(Kind::Junit, &[("t::test_add", Passed)]);
    assert_eq!(
        proven((&base, fail), (&missing, pass)).map_err(|e| e.0),
        Err(Shortfall::Pinned {
            id: "t::test_mul".into(),
            outcome: None
        })
    );
    // Nothing failed on the base, though the run did: a script that prints `ok` whatever.
    let claims = evidence(Kind::Tap, &[("muls", Passed)]);
    assert_eq!(
        proven((&claims, fail), (&claims, pass)),
        Err((
            Shortfall::NothingFailedOnBase { kind: Kind::Tap },
            Side::Base
        ))
    );
    // A module that did not import on the base stands for the tests in it.
    let uncollected = evidence(Kind::Junit, &[("t", Error)]);
    assert_eq!(
        proven((&uncollected, fail), (&honest, pass)),
        Ok((Kind::Junit, vec!["t".to_string()]))
    );
    let half = evidence(
        Kind::Junit,
        &[("t::test_add", Passed), ("t::test_mul", Xfail)],
    );
    assert!(proven((&uncollected, fail), (&half, pass)).is_err());
    assert!(
        proven(
            (&uncollected, fail),
            (&evidence(Kind::Junit, &[("tx::a", Passed)]), pass)
        )
        .is_err(),
        "`t` is not a prefix of `tx`"
    );
    // A base that reported nothing per test pins nothing by id; with no pinned file the
    // final tree's tests can be tied to, the evidence is the exit code, and says so; the
    // final tree still must show a pass and no failure.
    let silent = Evidence::exit_code_only();
    assert_eq!(
        proven((&silent, fail), (&honest, pass)),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
    let failing = evidence(Kind::Tap, &[("muls", Failed)]);
    assert_eq!(
        proven((&silent, fail), (&failing, pass)).map_err(|e| e.0.to_string()),
        Err("its report says the test `muls` failed, though the process exited 0".into())
    );
    assert_eq!(
        proven((&silent, fail), (&silent, pass)),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
    let planned = Evidence {
        unreported: vec!["test 2 of the plan 1..2".into()],
        ..evidence(Kind::Tap, &[("muls", Passed)])
    };
    assert!(passes(&planned, None, &[]).is_err());
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Passed),
        Just(Outcome::Failed),
        Just(Outcome::Skipped),
        Just(Outcome::Xfail),
        Just(Outcome::Error),
    ]
}

proptest! {
    /// A JUnit report as pytest writes it reads back as the tests it was written from,
    /// whatever their names hold.
    #[test]
    fn junit_reads_back_what_was_written(
        tests in proptest::collection::btree_map(("[a-z_.]{1,12}", "\\PC{1,20}"), outcome(), 0..8)
    ) {
        let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">");
        for ((class, name), outcome) in &tests {
            let open = format!("<testcase classname=\"{}\" name=\"{}\" time=\"0.1\"", junit::escape(class), junit::escape(name));
            xml.push_str(&match outcome {
                Outcome::Passed => format!("{open} />"),
                Outcome::Failed => format!("{open}><failure message=\"a > b\">&lt;x&gt;</failure></testcase>"),
                Outcome::Error => format!("{open}><error message=\"e\">boom</error></testcase>"),
                Outcome::Skipped => format!("{open}><skipped type=\"pytest.skip\" message=\"s\">s</skipped></testcase>"),
                Outcome::Xfail => format!("{open}><skipped type=\"pytest.xfail\" message=\"x\" /></testcase>"),
            });
        }
        xml.push_str("</testsuite></testsuites>");
        let read = junit::parse(xml.as_bytes()).expect("a report");
        let expected: BTreeMap<String, Outcome> = tests
            .iter()
            .map(|((class, name), o)| (format!("{class}::{name}"), *o))
            .fold(BTreeMap::new(), |mut m, (id, o)| {
                let merged = m.get(&id).map_or(o, |p: &Outcome| p.worst(o));
                m.insert(id, merged);
                m
            });
        prop_assert_eq!(read, expected);
    }

    /// libtest's and TAP's lines read back as the tests that printed them.
    #[test]
    fn printed_lines_read_back(
        tests in proptest::collection::btree_map("[a-z_]{1,8}(::[a-z_]{1,8}){0,2}", prop_oneof![Just(Outcome::Passed), Just(Outcome::Failed), Just(Outcome::Skipped)], 1..8)
    ) {
        let mut lib = format!("running {} tests\n", tests.len());
        let mut tap = format!("1..{}\n", tests.len());
        for (i, (name, outcome)) in tests.iter().enumerate() {
            lib.push_str(&format!("test {name} ... {}\n", match outcome {
                Outcome::Passed => "ok",
                Outcome::Failed => "FAILED",
                _ => "ignored",
            }));
            tap.push_str(&match outcome {
                Outcome::Passed => format!("ok {} - {name}\n", i + 1),
                Outcome::Failed => format!("not ok {} - {name}\n", i + 1),
                _ => format!("ok {} - {name} # SKIP not here\n", i + 1),
            });
        }
        lib.push_str("test result: ok\n");
        prop_assert_eq!(libtest::parse(&lib), Some((tests.clone(), Vec::new())));
        prop_assert_eq!(tap::parse(&tap), Some((tests, Vec::new())));
    }

    /// No output makes a parser panic, and a run that reports a failing test never passes.
    #[test]
    fn any_output_is_read_without_panic(text in "\\PC{0,400}") {
        let evidence = read(&request("sh t.sh"), &ReportFile::NotAsked, text.as_bytes());
        if evidence.tests.values().any(|o| matches!(o, Outcome::Failed | Outcome::Error)) {
            prop_assert!(passes(&evidence, None, &[]).is_err());
        }
        let _ = junit::parse(text.as_bytes());
        let _ = jsonreport::jest(text.as_bytes());
    }
}

/// `evidence` with the file of each test, as the runner names it.
fn with_files(kind: Kind, tests: &[(&str, Outcome, &str)]) -> Evidence {
    Evidence {
        files: Some(
            tests
                .iter()
                .map(|(id, _, file)| (id.to_string(), BTreeSet::from([file.to_string()])))
                .collect(),
        ),
        ..evidence(
            kind,
            &tests.iter().map(|(id, o, _)| (*id, *o)).collect::<Vec<_>>(),
        )
    }
}

/// A run that reports nothing per test reports no pinned test: a TAP test silenced at
/// GREEN (it prints its plan and nothing else), a cargo test whose target is no longer built.
#[test]
fn a_pinned_test_is_not_reported_by_an_exit_code() {
    let silenced = read(
        &request("sh tests/test_mul.sh"),
        &ReportFile::NotAsked,
        b"1..1\n",
    );
    assert_eq!(silenced.kind, Kind::ExitCodeOnly);
    let never_built = read(
        &request("cargo test"),
        &ReportFile::NotAsked,
        b"   Compiling calc v0.1.0\n    Finished `test` profile\n",
    );
    let pinned = ["muls".to_string()];
    for run in [&silenced, &never_built] {
        assert_eq!(
            passes(run, Some(&pinned), &["tests/mul.rs".to_string()]).map_err(|s| s.to_string()),
            Err(
                "the pinned test `muls` was not reported: the run reports nothing per test, and \
                 its exit code is no evidence of a test pinned by id"
                    .into()
            )
        );
        assert_eq!(passes(run, None, &[]), Ok((Kind::ExitCodeOnly, Vec::new())));
    }
    let base = evidence(Kind::Libtest, &[("muls", Outcome::Failed)]);
    assert_eq!(
        red_proven(
            (&base, ExitRecord::Code(101)),
            (&never_built, ExitRecord::Code(0)),
            &[]
        ),
        Err((Shortfall::NotReported { id: "muls".into() }, Side::Final))
    );
    // A report asked for and not written names the pinned test it was to show.
    let none = read(&request("pytest"), &ReportFile::Absent, b"");
    assert_eq!(
        passes(&none, Some(&["t::test_mul".to_string()]), &[]).map_err(|s| s.to_string()),
        Err(
            "no per-test evidence: the runner wrote no junit report: the process ended before \
             it reported, so the pinned test `t::test_mul` was not reported"
                .into()
        )
    );
}

/// With nothing pinned by id (the base's run left no per-test report: pytest ended at
/// import, cargo could not build the test), the pinned files' tests must be reported on the
/// final tree, one at least, each passed; where the runner's tests cannot be tied to the
/// pinned files, the evidence is the exit code, and says so.
#[test]
fn with_nothing_pinned_by_id_the_pinned_files_tests_must_pass() {
    use Outcome::*;
    let silent = Evidence::exit_code_only();
    let (fail, pass) = (ExitRecord::Code(1), ExitRecord::Code(0));
    let py = ["tests/test_mul.py".to_string()];
    let rs = [
        "tests/mul.rs".to_string(),
        "tests/common/mod.rs".to_string(),
    ];
    let judge = |final_: &Evidence, files: &[String]| {
        red_proven((&silent, fail), (final_, pass), files).map_err(|e| e.0.to_string())
    };
    let honest = with_files(
        Kind::Junit,
        &[
            ("tests.test_add::test_add", Passed, "tests/test_add.py"),
            ("tests.test_mul::test_mul", Passed, "tests/test_mul.py"),
        ],
    );
    assert_eq!(
        judge(&honest, &py),
        Ok((Kind::Junit, vec!["tests.test_mul::test_mul".to_string()]))
    );
    let skipped = with_files(
        Kind::Junit,
        &[
            ("tests.test_add::test_add", Passed, "tests/test_add.py"),
            ("tests.test_mul::test_mul", Skipped, "tests/test_mul.py"),
        ],
    );
    assert_eq!(
        judge(&skipped, &py),
        Err("the pinned test `tests.test_mul::test_mul` skipped, it did not pass".into())
    );
    let only_add = with_files(
        Kind::Junit,
        &[("tests.test_add::test_add", Passed, "tests/test_add.py")],
    );
    assert_eq!(
        judge(&only_add, &py),
        Err(
            "no test of the pinned files (tests/test_mul.py) was reported: nothing was pinned \
             by id (the run on the base left no per-test report), so the pinned files' tests \
             must be reported passing"
                .into()
        )
    );
    // cargo: the file of each binary's tests is the one its `Running` line names.
    let out = "     Running unittests src/lib.rs (target/debug/deps/calc-1)\n\nrunning 1 test\ntest tests::adds ... ok\n\ntest result: ok. 1 passed\n\n     Running tests/mul.rs (target/debug/deps/mul-2)\n\nrunning 1 test\ntest muls ... ok\n\ntest result: ok. 1 passed\n\n   Doc-tests calc\n\nrunning 1 test\ntest src/lib.rs - add (line 3) ... ok\n\ntest result: ok. 1 passed\n";
    let cargo = read(
        &request("cargo test"),
        &ReportFile::NotAsked,
        out.as_bytes(),
    );
    assert_eq!(
        cargo
            .files
            .as_ref()
            .map(|f| f.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["muls".to_string(), "tests::adds".to_string()])
    );
    assert_eq!(
        judge(&cargo, &rs),
        Ok((Kind::Libtest, vec!["muls".to_string()]))
    );
    let lib_only = out.split("     Running tests/").next().unwrap_or_default();
    let lib_only = read(
        &request("cargo test"),
        &ReportFile::NotAsked,
        lib_only.as_bytes(),
    );
    assert_eq!(
        judge(&lib_only, &rs),
        Err(
            "no test of the pinned files (tests/mul.rs) was reported: nothing was pinned by id \
             (the run on the base left no per-test report), so the pinned files' tests must be \
             reported passing"
                .into()
        )
    );
    // A test added to a file of the crate's own (its unit tests): not told from the lib's.
    assert_eq!(
        judge(&lib_only, &["src/mul.rs".to_string()]),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
    // Runners whose tests name no file (TAP), or a JUnit report without `file=`.
    let tap = evidence(Kind::Tap, &[("mul 2 3 is 6", Passed)]);
    assert_eq!(
        judge(&tap, &["tests/test_mul.sh".to_string()]),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
    assert_eq!(
        judge(
            &evidence(Kind::Junit, &[("tests.test_add::test_add", Passed)]),
            &py
        ),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
    // Still: a test that failed, or none passed, is no pass.
    let failing = with_files(
        Kind::Junit,
        &[
            ("tests.test_add::test_add", Failed, "tests/test_add.py"),
            ("tests.test_mul::test_mul", Passed, "tests/test_mul.py"),
        ],
    );
    assert!(judge(&failing, &py).is_err());
    // jest: the report's file, relative to the run's directory.
    let jest = with_files(
        Kind::JestJson,
        &[("tests/mul.test.js::muls", Passed, "tests/mul.test.js")],
    );
    assert_eq!(
        judge(&jest, &["tests/mul.test.js".to_string()]),
        Ok((Kind::JestJson, vec!["tests/mul.test.js::muls".to_string()]))
    );
    assert!(judge(&jest, &["tests/div.test.js".to_string()]).is_err());
}

/// A unit pinned on the base (a module pytest could not import, a jest file that did not
/// load) stands for its own tests only: tied by file where the report names files, not by a
/// name that begins like it (a package `tests/test_mul/`, a file `mul.test.js.more.test.js`).
#[test]
fn a_pinned_unit_stands_for_the_tests_of_its_own_file() {
    use Outcome::*;
    let (fail, pass) = (ExitRecord::Code(2), ExitRecord::Code(0));
    let module = with_files(
        Kind::Junit,
        &[("tests.test_mul", Error, "tests/test_mul.py")],
    );
    let package = with_files(
        Kind::Junit,
        &[
            ("tests.test_add::test_add", Passed, "tests/test_add.py"),
            (
                "tests.test_mul.test_fast::test_x",
                Passed,
                "tests/test_mul/test_fast.py",
            ),
        ],
    );
    assert_eq!(
        red_proven((&module, fail), (&package, pass), &[]).map_err(|e| e.0),
        Err(Shortfall::Pinned {
            id: "tests.test_mul".into(),
            outcome: None
        })
    );
    let honest = with_files(
        Kind::Junit,
        &[
            ("tests.test_mul::test_mul", Passed, "tests/test_mul.py"),
            (
                "tests.test_mul.TestMul::test_big",
                Passed,
                "tests/test_mul.py",
            ),
        ],
    );
    assert_eq!(
        red_proven((&module, fail), (&honest, pass), &[]),
        Ok((Kind::Junit, vec!["tests.test_mul".to_string()]))
    );
    // pytest's xunit1 report, as asked for: every testcase names its file.
    let xml = br#"<testsuites><testsuite name="pytest"><testcase classname="tests.test_mul.test_fast" name="test_x" file="tests/test_mul/test_fast.py" line="0" /><testcase classname="" name="tests.test_mul" file="tests/test_mul.py"><error message="collection failure">E</error></testcase></testsuite></testsuites>"#;
    let read_back = read(&request("pytest"), &ReportFile::Written(xml.to_vec()), b"");
    assert_eq!(
        read_back
            .files
            .as_ref()
            .and_then(|f| f.get("tests.test_mul")),
        Some(&BTreeSet::from(["tests/test_mul.py".to_string()]))
    );
    // jest: a file that did not load stands for its own tests, not for another file's.
    let jest_base = with_files(
        Kind::JestJson,
        &[("tests/mul.test.js", Error, "tests/mul.test.js")],
    );
    let other_file = with_files(
        Kind::JestJson,
        &[(
            "tests/mul.test.js.more.test.js::muls",
            Passed,
            "tests/mul.test.js.more.test.js",
        )],
    );
    assert!(red_proven((&jest_base, fail), (&other_file, pass), &[]).is_err());
    let own = with_files(
        Kind::JestJson,
        &[("tests/mul.test.js::muls", Passed, "tests/mul.test.js")],
    );
    assert!(red_proven((&jest_base, fail), (&own, pass), &[]).is_ok());
}

/// libtest names a test without its binary: a pinned `muls` reported on the final tree from
/// another file than the one it failed in on the base (a test target pointed at a new file
/// with an empty `muls`) is not the pinned test. Reported from its own file too, it is.
#[test]
fn a_pinned_test_reported_from_another_file_is_another_test() {
    use Outcome::*;
    let (fail, pass) = (ExitRecord::Code(101), ExitRecord::Code(0));
    let base = with_files(Kind::Libtest, &[("muls", Failed, "tests/mul.rs")]);
    let other = with_files(Kind::Libtest, &[("muls", Passed, "tests/mul_fast.rs")]);
    assert_eq!(
        red_proven((&base, fail), (&other, pass), &[]).map_err(|e| e.0.to_string()),
        Err(
            "the pinned test `muls` is reported from tests/mul_fast.rs, not from tests/mul.rs, \
             where it failed on the base: it is another test of the same name"
                .into()
        )
    );
    let both = Evidence {
        files: Some(Files::from([(
            "muls".to_string(),
            BTreeSet::from(["tests/mul.rs".to_string(), "tests/mul_fast.rs".to_string()]),
        )])),
        ..evidence(Kind::Libtest, &[("muls", Passed)])
    };
    assert_eq!(
        red_proven((&base, fail), (&both, pass), &[]),
        Ok((Kind::Libtest, vec!["muls".to_string()]))
    );
    // Old output with no `Running <file>` lines: the id alone.
    let unnamed = evidence(Kind::Libtest, &[("muls", Passed)]);
    assert!(red_proven((&base, fail), (&unnamed, pass), &[]).is_ok());
}

/// The GREEN step's run reports each pinned test from a file its RED run reported it from:
/// an empty `#[test] fn muls() {}` in another test target is reported as `muls` too, and is
/// another test; a pytest module that failed whole stands for its tests of its own file.
#[test]
fn a_pinned_test_reported_only_from_another_file_is_no_pass() {
    use Outcome::*;
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let cargo = |file: &str| {
        read(
            &request("cargo test"),
            &ReportFile::NotAsked,
            format!(
                "     Running {file} (target/debug/deps/x-1)\n\nrunning 1 test\ntest muls ... \
                 ok\n\ntest result: ok. 1 passed; 0 failed\n"
            )
            .as_bytes(),
        )
    };
    let at_red = read(
        &request("cargo test"),
        &ReportFile::NotAsked,
        b"     Running tests/calc.rs (target/debug/deps/calc-1)\n\nrunning 1 test\ntest muls ... \
          FAILED\n\ntest result: FAILED. 0 passed; 1 failed\n",
    );
    let recorded = files_of(&at_red, &strings(&["muls"]));
    assert_eq!(
        recorded,
        BTreeMap::from([("muls".to_string(), strings(&["tests/calc.rs"]))])
    );
    assert_eq!(from_pinned_files(&cargo("tests/calc.rs"), &recorded), None);
    assert_eq!(
        from_pinned_files(&cargo("tests/other.rs"), &recorded).map(|s| s.to_string()),
        Some(
            "the pinned test `muls` is reported from tests/other.rs, not from tests/calc.rs, \
             where the RED run reported it failing: a test of the same name in another file is \
             another test"
                .into()
        )
    );
    // From both targets: the one it was pinned from is among them (its verdict is the worst).
    let both = with_files(Kind::Libtest, &[("muls", Passed, "tests/calc.rs")]);
    let mut both = both;
    if let Some(files) = both.files.as_mut() {
        files
            .entry("muls".into())
            .or_default()
            .insert("tests/other.rs".into());
    }
    assert_eq!(from_pinned_files(&both, &recorded), None);
    // A run that names no file for it reports it from none.
    let unnamed = evidence(Kind::Libtest, &[("muls", Passed)]);
    assert_eq!(
        from_pinned_files(&unnamed, &recorded),
        Some(Shortfall::NotFromPinned {
            id: "muls".into(),
            was: "tests/calc.rs".into(),
            now: "no file its runner names".into()
        })
    );
    // Nothing recorded (an older chain, a runner that names no file): nothing to hold to.
    assert_eq!(from_pinned_files(&unnamed, &BTreeMap::new()), None);
    // A module that failed whole: its tests from its own file.
    let module = BTreeMap::from([(
        "tests.test_mul".to_string(),
        strings(&["tests/test_mul.py"]),
    )]);
    let own = with_files(
        Kind::Junit,
        &[("tests.test_mul::test_mul", Passed, "tests/test_mul.py")],
    );
    assert_eq!(from_pinned_files(&own, &module), None);
}

/// mocha's JSON report as mocha 11 writes it (`file` absolute), run in `/w/a`.
fn mocha_report(tests: &[(&str, &str, &str)]) -> Vec<u8> {
    let list = |kind: &str| {
        tests
            .iter()
            .filter(|(k, _, _)| *k == kind)
            .map(|(_, title, file)| {
                format!(r#"{{"title":"t","fullTitle":"{title}","file":"/w/a/{file}","err":{{}}}}"#)
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        r#"{{"stats":{{"tests":{}}},"tests":[],"passes":[{}],"pending":[{}],"failures":[{}]}}"#,
        tests.len(),
        list("passed"),
        list("pending"),
        list("failed")
    )
    .into_bytes()
}

fn mocha_run(tests: &[(&str, &str, &str)]) -> Evidence {
    read(
        &request("npx mocha"),
        &ReportFile::Written(mocha_report(tests)),
        b"",
    )
    .relative_to(&["/w/a".to_string()])
}

/// mocha names each test's file: a title is tied to it, relative to the run's directory;
/// the RED run records it for the pinned test, and a later run that reports that title
/// passing only from another file (the pinned file no longer loaded, the title reused
/// elsewhere) is no pass, at GREEN and at the end alike.
#[test]
fn a_mocha_test_is_held_to_the_file_it_failed_in() {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let at_red = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("failed", "calc muls", "test/mul.js"),
    ]);
    assert_eq!(at_red.kind, Kind::MochaJson);
    let pinned = pinned_on_base(&at_red).expect("pinned").expect("by id");
    assert_eq!(pinned, strings(&["calc muls"]));
    let recorded = files_of(&at_red, &pinned);
    assert_eq!(
        recorded,
        BTreeMap::from([("calc muls".to_string(), strings(&["test/mul.js"]))])
    );
    let honest = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("passed", "calc muls", "test/mul.js"),
    ]);
    assert_eq!(from_pinned_files(&honest, &recorded), None);
    let elsewhere = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("passed", "calc muls", "test/other.js"),
    ]);
    assert_eq!(
        passes(&elsewhere, Some(&pinned), &strings(&["test/mul.js"])),
        Ok((Kind::MochaJson, pinned.clone())),
        "by id alone it passes"
    );
    assert_eq!(
        from_pinned_files(&elsewhere, &recorded).map(|s| s.to_string()),
        Some(
            "the pinned test `calc muls` is reported from test/other.js, not from test/mul.js, \
             where the RED run reported it failing: a test of the same name in another file is \
             another test"
                .into()
        )
    );
    let ok = ExitRecord::Code(0);
    let failed = ExitRecord::Code(1);
    assert_eq!(
        red_proven((&at_red, failed), (&elsewhere, ok), &[]).map_err(|(s, _)| s.to_string()),
        Err(
            "the pinned test `calc muls` is reported from test/other.js, not from test/mul.js, \
             where it failed on the base: it is another test of the same name"
                .into()
        )
    );
    assert_eq!(
        red_proven((&at_red, failed), (&honest, ok), &[]),
        Ok((Kind::MochaJson, pinned))
    );
    // In both files: the pinned file's own run of it is among them, at the worse outcome.
    let both = mocha_run(&[
        ("passed", "calc muls", "test/other.js"),
        ("pending", "calc muls", "test/mul.js"),
    ]);
    assert_eq!(
        passes(&both, Some(&strings(&["calc muls"])), &[]).map_err(|s| s.to_string()),
        Err("the pinned test `calc muls` skipped, it did not pass".into())
    );
}

/// A mocha RED run that ended before mocha reported (a test file that does not load) pins
/// nothing by id: the tests of the pinned files must be reported passing on the final tree,
/// tied to them by the files mocha names.
#[test]
fn with_nothing_pinned_mochas_tests_are_tied_to_the_pinned_files() {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let no_report = read(&request("npx mocha"), &ReportFile::Absent, b"");
    assert_eq!(pinned_on_base(&no_report), Ok(None));
    let files = strings(&["mul.js", "test/mul.js"]);
    let honest = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("passed", "calc muls", "test/mul.js"),
    ]);
    assert_eq!(
        passes(&honest, None, &files),
        Ok((Kind::MochaJson, strings(&["calc muls"])))
    );
    let not_loaded = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("passed", "calc muls", "test/other.js"),
    ]);
    assert_eq!(
        passes(&not_loaded, None, &files).map_err(|s| s.to_string()),
        Err(
            "no test of the pinned files (test/mul.js) was reported: nothing was pinned by id \
             (the run on the base left no per-test report), so the pinned files' tests must be \
             reported passing"
                .into()
        )
    );
    let skipped = mocha_run(&[
        ("passed", "adds", "test/add.js"),
        ("pending", "calc muls", "test/mul.js"),
    ]);
    assert_eq!(
        passes(&skipped, None, &files).map_err(|s| s.to_string()),
        Err("the pinned test `calc muls` skipped, it did not pass".into())
    );
    // Where mocha finds tests: its default `test/`, and the usual spec names.
    for path in [
        "test/mul.js",
        "test/unit/mul.cjs",
        "spec/mul.mjs",
        "src/mul.spec.ts",
        "lib/mul.test.js",
    ] {
        assert!(holds_tests(Kind::MochaJson, path), "{path}");
    }
    for path in [
        "mul.js",
        "lib/test.js",
        "test/fixture.json",
        "src/testing/x.js",
    ] {
        assert!(!holds_tests(Kind::MochaJson, path), "{path}");
    }
    // A mocha that names no file: nothing to tie, the exit code is the evidence.
    let unnamed = read(
        &request("npx mocha"),
        &ReportFile::Written(
            br#"{"stats":{"tests":1},"passes":[{"fullTitle":"calc muls"}],"pending":[],"failures":[]}"#
                .to_vec(),
        ),
        b"",
    );
    assert_eq!(
        passes(&unnamed, None, &files),
        Ok((Kind::ExitCodeOnly, Vec::new()))
    );
}
