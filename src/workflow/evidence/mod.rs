//! Per-test evidence (docs/integrity.md, "Per-test evidence"): which tests a run reports and
//! how each ended, read from the report a runner writes (pytest's JUnit XML, jest's or
//! mocha's JSON) or prints (libtest's lines, `go test -json`, TAP), and the RED obligation
//! judged by test id on it. Pure: the engine runs the command and hands over the bytes.

mod gotest;
mod jsonreport;
pub(crate) mod junit;
mod libtest;
mod outcome;
mod tap;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::state::ExitRecord;
pub use outcome::{Files, Outcome};

/// Where a run's per-test results came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A JUnit XML report pytest wrote where the orchestrator asked.
    #[serde(rename = "junit")]
    Junit,
    /// libtest's `test <name> ... ok` lines (cargo test), every binary.
    #[serde(rename = "libtest")]
    Libtest,
    /// `go test -json`'s events.
    #[serde(rename = "gotest-json")]
    GoTestJson,
    /// A JSON report jest or vitest wrote where the orchestrator asked.
    #[serde(rename = "jest-json")]
    JestJson,
    /// A JSON report mocha wrote where the orchestrator asked.
    #[serde(rename = "mocha-json")]
    MochaJson,
    /// TAP lines (`ok N - name`, `not ok N - name`).
    #[serde(rename = "tap")]
    Tap,
    /// The runner reports nothing per test: the exit code is all there is.
    #[serde(rename = "exit code only")]
    ExitCodeOnly,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Junit => "junit",
            Kind::Libtest => "libtest",
            Kind::GoTestJson => "gotest-json",
            Kind::JestJson => "jest-json",
            Kind::MochaJson => "mocha-json",
            Kind::Tap => "tap",
            Kind::ExitCodeOnly => "exit code only",
        })
    }
}

/// The report file a run is asked to write, outside the tree its test can change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportAsk {
    /// pytest: `--junitxml=<path>`, through `PYTEST_ADDOPTS` (the command is left as given),
    /// as `junit_family=xunit1`, whose testcases name their file (`file=`): a test is tied
    /// to its module's file, not to a name that merely begins like it.
    PytestJunit,
    /// Any other command: the same `PYTEST_ADDOPTS`, which a pytest it runs (through a
    /// script, `make`, `python -mpytest`) inherits and any other program ignores; its report
    /// is read when one was written, else what the run prints is.
    PytestIfRun,
    /// jest or vitest: `--json --outputFile=<path>` (vitest: `--reporter=json`) appended.
    Jest,
    Vitest,
    /// mocha: `--reporter json --reporter-option output=<path>` appended.
    Mocha,
}

/// How `go test`'s JSON events are had: `go test -json` prints them on its stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoAsk {
    /// `GOFLAGS=-json` in the run's environment; the command is run as given.
    Goflags,
    /// `-json` is in the command: the command's own, or put after its `go test` when the
    /// command also runs another go subcommand (see [`request`]).
    InCommand,
}

/// How to run a test command so that it reports per test: the command as it is run (the
/// command as given, or with `-json` or a reporter added), the report file to ask for, and
/// whether what it prints is `go test`'s JSON events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub command: String,
    pub report: Option<ReportAsk>,
    pub go: Option<GoAsk>,
}

/// The words of `command`, split on shell separators: enough to tell which runner it starts.
fn words(command: &str) -> Vec<&str> {
    command
        .split(|c: char| c.is_whitespace() || ";&|()`".contains(c))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// True when one of the command's words is the program `name` (a path to it too).
fn runs(command: &str, name: &str) -> bool {
    words(command)
        .iter()
        .any(|w| *w == name || w.rsplit('/').next() == Some(name))
}

/// What to ask of a run of `command` (the agent's, as recorded): a report file from pytest,
/// jest, vitest or mocha; `-json` for `go test` when it lacks it. Everything else is read
/// from what the command prints.
pub fn request(command: &str) -> Request {
    let plain = |report| Request {
        command: command.to_string(),
        report,
        go: None,
    };
    if runs(command, "pytest") || runs(command, "py.test") || words(command).contains(&"-mpytest") {
        // A report the command asks for itself overrides ours (the command's options come
        // after PYTEST_ADDOPTS'), and is written where the test can know it: none is read.
        let own = command.contains("--junitxml") || command.contains("--junit-xml");
        return plain((!own).then_some(ReportAsk::PytestJunit));
    }
    if let Some(go) = go_test(command) {
        return go;
    }
    // The reporters' options go last: only a command that ends with the runner's own
    // arguments can take them.
    let last = command
        .split(['\n', ';', '&', '|'])
        .next_back()
        .unwrap_or("");
    let ask = if runs(last, "jest") {
        Some(ReportAsk::Jest)
    } else if runs(last, "vitest") {
        Some(ReportAsk::Vitest)
    } else if runs(last, "mocha") {
        Some(ReportAsk::Mocha)
    } else {
        None
    };
    match ask {
        Some(ask) if !command.contains("--json") && !command.contains("--reporter") => {
            plain(Some(ask))
        }
        Some(_) => plain(None),
        // A command with its own report for pytest is read by its output.
        None if command.contains("--junitxml") || command.contains("--junit-xml") => plain(None),
        None => plain(Some(ReportAsk::PytestIfRun)),
    }
}

/// What `go test` is asked for: its events, never a cached result's replay ([`go_test`]).
const GO_FLAGS: &str = "-json -count=1";

/// What every run of go gets besides: no settings file (`go env -w` writes one in the
/// user's configuration, in the agent's reach: a `GOFLAGS=-exec=…` or a `CC` there would
/// swap the test binary, and an empty `GOFLAGS` does not override it), and no other
/// toolchain than the one installed (a `toolchain` line in the PR's go.mod would fetch one).
/// `-count=1` goes in `GOFLAGS` even when the command has `-json` of its own: only `go test`
/// knows the flag, and go applies a `GOFLAGS` flag only to the commands that know it.
const GO_ENV: &[(&str, &str)] = &[("GOENV", "off"), ("GOTOOLCHAIN", "local")];

/// The request for a command that runs `go test` (`None` when it does not): its events
/// through `GOFLAGS=-json`, the command left as given, when every go subcommand it runs is
/// `test`. go applies a `GOFLAGS` flag to each of its commands that knows the flag, and
/// `-json` means something else to the others: `go vet -json` prints its findings as JSON
/// and exits 0 (a failing vet would pass), `go list` and `go env` change what they print.
/// So beside another go subcommand, `-json` is put after `go test` in the command instead.
/// A command with `-json` of its own is run as given and read as go's events. `-count=1`
/// goes with our `-json`: go replays a cached test result's output (events and all) from
/// its build cache, which is the user's, in reach of the agent; a `-count` of the command's
/// own comes after ours and wins, and any `-count` turns the replay off.
fn go_test(command: &str) -> Option<Request> {
    let at = command.match_indices("go test").find(|(i, _)| {
        let before = command[..*i].chars().next_back();
        let after = command[i + "go test".len()..].chars().next();
        before.is_none_or(|c| c.is_whitespace() || ";&|(".contains(c))
            && after.is_none_or(char::is_whitespace)
    })?;
    let as_given = |go| Request {
        command: command.to_string(),
        report: None,
        go: Some(go),
    };
    if command.contains("-json") {
        return Some(as_given(GoAsk::InCommand));
    }
    let words = words(command);
    let only_test = words
        .iter()
        .enumerate()
        .filter(|(_, w)| **w == "go" || w.ends_with("/go"))
        .all(|(i, _)| words.get(i + 1) == Some(&"test"));
    if only_test {
        return Some(as_given(GoAsk::Goflags));
    }
    let end = at.0 + "go test".len();
    Some(Request {
        command: format!("{} {GO_FLAGS}{}", &command[..end], &command[end..]),
        report: None,
        go: Some(GoAsk::InCommand),
    })
}

impl Request {
    /// The command to run with the report written to `path` (a fresh path outside the tree).
    pub fn command_with(&self, path: &str) -> String {
        let quoted = shell_quote(path);
        match self.report {
            Some(ReportAsk::Jest) => format!("{} --json --outputFile={quoted}", self.command),
            Some(ReportAsk::Vitest) => {
                format!(
                    "{} --reporter=default --reporter=json --outputFile={quoted}",
                    self.command
                )
            }
            Some(ReportAsk::Mocha) => format!(
                "{} --reporter json --reporter-option output={quoted}",
                self.command
            ),
            Some(ReportAsk::PytestJunit | ReportAsk::PytestIfRun) | None => self.command.clone(),
        }
    }

    /// The variables the run gets: pytest's options, go's flags (the caller's own
    /// `PYTEST_ADDOPTS` and `GOFLAGS` never reach a command, see `exec/env.rs`).
    pub fn env(&self, path: &str) -> Vec<(String, String)> {
        match (self.report, self.go) {
            (Some(ReportAsk::PytestJunit | ReportAsk::PytestIfRun), _) => vec![(
                "PYTEST_ADDOPTS".to_string(),
                format!("--junitxml={} -o junit_family=xunit1", shell_quote(path)),
            )],
            (_, Some(go)) => {
                let flags = match go {
                    GoAsk::Goflags => GO_FLAGS,
                    GoAsk::InCommand => "-count=1",
                };
                GO_ENV
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .chain([("GOFLAGS".to_string(), flags.to_string())])
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The report file the run was asked for, as the engine found it after the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportFile {
    /// No report was asked for.
    NotAsked,
    /// Asked for, and not there after the run.
    Absent,
    /// Asked for, written during the run (it did not exist before), these bytes.
    Written(Vec<u8>),
}

/// What a run reports per test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub kind: Kind,
    pub tests: BTreeMap<String, Outcome>,
    /// The files its tests are in, where the runner names them (pytest's `xunit1` JUnit
    /// report, jest's and mocha's reports, cargo's `Running <file>` lines); `None` where it
    /// does not.
    pub files: Option<Files>,
    /// A report was asked for and none came, or it could not be read: why. Such a run has
    /// no evidence: it ended before its runner reported.
    pub missing: Option<String>,
    /// Tests a plan (TAP's `1..N`) announced that no line reported.
    pub unreported: Vec<String>,
}

impl Evidence {
    pub fn exit_code_only() -> Evidence {
        Evidence {
            kind: Kind::ExitCodeOnly,
            tests: BTreeMap::new(),
            files: None,
            missing: None,
            unreported: Vec::new(),
        }
    }

    fn of(kind: Kind, tests: BTreeMap<String, Outcome>) -> Evidence {
        Evidence {
            kind,
            tests,
            files: None,
            missing: None,
            unreported: Vec::new(),
        }
    }

    fn missing(kind: Kind, why: String) -> Evidence {
        Evidence {
            kind,
            tests: BTreeMap::new(),
            files: None,
            missing: Some(why),
            unreported: Vec::new(),
        }
    }

    /// True when the run said which tests ran: a per-test report, read.
    pub fn per_test(&self) -> bool {
        self.kind != Kind::ExitCodeOnly && self.missing.is_none()
    }

    /// The evidence with its test ids made relative to the directory the run was in (any of
    /// `roots`, its spellings): a runner that names a test by its file's absolute path names
    /// it alike on the base and on the final tree.
    pub fn relative_to(mut self, roots: &[String]) -> Evidence {
        let strip = |id: String| {
            roots
                .iter()
                .filter(|r| !r.is_empty())
                .find_map(|r| {
                    id.strip_prefix(r.trim_end_matches('/'))
                        .and_then(|rest| rest.strip_prefix('/'))
                })
                .map_or(id.clone(), str::to_string)
        };
        self.tests = std::mem::take(&mut self.tests)
            .into_iter()
            .map(|(id, outcome)| (strip(id), outcome))
            .collect();
        self.files = self.files.take().map(|files| {
            files
                .into_iter()
                .map(|(id, files)| (strip(id), files.into_iter().map(strip).collect()))
                .collect()
        });
        self.unreported = std::mem::take(&mut self.unreported)
            .into_iter()
            .map(strip)
            .collect();
        self
    }

    /// The tests that failed or could not run.
    pub fn failed(&self) -> Vec<String> {
        self.tests
            .iter()
            .filter(|(_, o)| o.failed())
            .map(|(id, _)| id.clone())
            .chain(self.unreported.iter().cloned())
            .collect()
    }
}

/// The per-test evidence of one run: the report file when one was asked for (a run that was
/// asked and wrote none has no evidence), else what the output says, first the runner the
/// request names; `exit code only` when nothing in it reports per test.
pub fn read(request: &Request, report: &ReportFile, output: &[u8]) -> Evidence {
    let asked = match (request.report, report) {
        // No pytest ran, or none reported: what the run prints is read.
        (Some(ReportAsk::PytestIfRun), ReportFile::Absent | ReportFile::NotAsked) => None,
        (ask, _) => ask,
    };
    if let Some(ask) = asked {
        let kind = match ask {
            ReportAsk::PytestJunit | ReportAsk::PytestIfRun => Kind::Junit,
            ReportAsk::Jest | ReportAsk::Vitest => Kind::JestJson,
            ReportAsk::Mocha => Kind::MochaJson,
        };
        let bytes = match report {
            ReportFile::Written(bytes) => bytes,
            ReportFile::Absent | ReportFile::NotAsked => {
                return Evidence::missing(
                    kind,
                    format!(
                        "the runner wrote no {kind} report: the process ended before it reported"
                    ),
                );
            }
        };
        let parsed = match ask {
            ReportAsk::PytestJunit | ReportAsk::PytestIfRun => junit::parse_with_files(bytes),
            ReportAsk::Jest | ReportAsk::Vitest => {
                jsonreport::jest(bytes).map(|(tests, files)| (tests, Some(files)))
            }
            ReportAsk::Mocha => jsonreport::mocha(bytes),
        };
        return match parsed {
            Ok((tests, files)) => Evidence {
                files,
                ..Evidence::of(kind, tests)
            },
            Err(why) => Evidence::missing(kind, format!("its {kind} report cannot be read: {why}")),
        };
    }
    let text = String::from_utf8_lossy(output);
    if request.go.is_some() {
        match gotest::parse(&text) {
            Ok(Some(tests)) => return Evidence::of(Kind::GoTestJson, tests),
            Ok(None) => {}
            Err(why) => {
                return Evidence::missing(
                    Kind::GoTestJson,
                    format!("its gotest-json report cannot be read: {why}"),
                );
            }
        }
    }
    if let Some((tests, cut)) = libtest::parse(&text) {
        let mut evidence = Evidence::of(Kind::Libtest, tests);
        evidence.unreported = cut;
        evidence.files = Some(libtest::files(&text));
        return evidence;
    }
    if let Some((tests, unreported)) = tap::parse(&text) {
        let mut evidence = Evidence::of(Kind::Tap, tests);
        evidence.unreported = unreported;
        return evidence;
    }
    Evidence::exit_code_only()
}

/// Why a run's evidence does not show what its obligation asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// A report was asked for and none came, or it could not be read; the pinned test it
    /// was to show, where one is known.
    NoReport {
        why: String,
        pinned: Option<String>,
    },
    /// On the base the report names no test that failed: nothing failed as a test fails.
    NothingFailedOnBase {
        kind: Kind,
    },
    /// A pinned test is missing from the report, or did not pass.
    Pinned {
        id: String,
        outcome: Option<Outcome>,
    },
    /// A test is pinned by id and the run reports nothing per test: its exit code is all
    /// there is, and that is no evidence of a pinned test.
    NotReported {
        id: String,
    },
    /// Nothing was pinned by id, and no test of the pinned files (these) was reported, though
    /// the runner names the file of every test it reports.
    FilesNotReported {
        paths: String,
    },
    /// The pinned test is reported from other files than the base's run had it in.
    Moved {
        id: String,
        was: String,
        now: String,
    },
    /// The GREEN step's run reports the pinned test from other files than the RED run did.
    NotFromPinned {
        id: String,
        was: String,
        now: String,
    },
    /// What the runner announced (a test of a TAP plan, a test binary's result) and never
    /// reported: the run ended first.
    Unreported {
        what: String,
    },
    /// No test passed, or one failed, though the run passed.
    NoPass {
        kind: Kind,
    },
    Failed {
        id: String,
        outcome: Outcome,
    },
}

impl fmt::Display for Shortfall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shortfall::NoReport { why, pinned: None } => write!(f, "no per-test evidence: {why}"),
            Shortfall::NoReport {
                why,
                pinned: Some(id),
            } => write!(
                f,
                "no per-test evidence: {why}, so the pinned test `{id}` was not reported"
            ),
            Shortfall::NothingFailedOnBase { kind } => write!(
                f,
                "its {kind} report names no test that failed on the base: the run failed, but \
                 not as a test fails"
            ),
            Shortfall::Pinned { id, outcome: None } => write!(
                f,
                "the pinned test `{id}` is missing from the report (a run that ends before it \
                 reports its tests proves nothing)"
            ),
            Shortfall::Pinned {
                id,
                outcome: Some(outcome),
            } => write!(f, "the pinned test `{id}` {outcome}, it did not pass"),
            Shortfall::NotReported { id } => write!(
                f,
                "the pinned test `{id}` was not reported: the run reports nothing per test, and \
                 its exit code is no evidence of a test pinned by id"
            ),
            Shortfall::FilesNotReported { paths } => write!(
                f,
                "no test of the pinned files ({paths}) was reported: nothing was pinned by id \
                 (the run on the base left no per-test report), so the pinned files' tests must \
                 be reported passing"
            ),
            Shortfall::Moved { id, was, now } => write!(
                f,
                "the pinned test `{id}` is reported from {now}, not from {was}, where it failed \
                 on the base: it is another test of the same name"
            ),
            Shortfall::NotFromPinned { id, was, now } => write!(
                f,
                "the pinned test `{id}` is reported from {now}, not from {was}, where the RED \
                 run reported it failing: a test of the same name in another file is another \
                 test"
            ),
            Shortfall::Unreported { what } => write!(
                f,
                "{what} was announced and never reported: the run ended before it was"
            ),
            Shortfall::NoPass { kind } => {
                write!(f, "its {kind} report names no test that passed")
            }
            Shortfall::Failed { id, outcome } => write!(
                f,
                "its report says the test `{id}` {outcome}, though the process exited 0"
            ),
        }
    }
}

/// True when `file`, as a runner names it (relative to the directory it ran in, to pytest's
/// rootdir or to a cargo package; or absolute), is the repository's `path`.
fn same_file(path: &str, file: &str) -> bool {
    path == file || path.ends_with(&format!("/{file}")) || file.ends_with(&format!("/{path}"))
}

/// The tests a pinned id stands for in a report: the id itself, or, for a unit that failed
/// as a whole on the base (a module pytest could not collect, a go package that did not
/// build, a jest file that did not load), the tests in it (`<unit>::…`; pytest's
/// `<module>.<Class>::…`). Where pytest's report names each test's file, a test is in the
/// module only when its file is the module's: `tests.test_mul.test_fast::…`, of a package
/// `tests/test_mul/`, is not in the module `tests/test_mul.py`.
fn group<'a>(evidence: &'a Evidence, id: &str) -> Vec<(&'a String, Outcome)> {
    let module = format!("{}.py", id.replace('.', "/"));
    let pytest_files = match (evidence.kind, &evidence.files) {
        (Kind::Junit, Some(files)) => Some(files),
        _ => None,
    };
    evidence
        .tests
        .iter()
        .filter(|(t, _)| {
            if t.as_str() == id {
                return true;
            }
            let Some(rest) = t.strip_prefix(id) else {
                return false;
            };
            let inside =
                rest.starts_with("::") || (evidence.kind == Kind::Junit && rest.starts_with('.'));
            inside
                && pytest_files
                    .is_none_or(|files| files.get(*t).is_some_and(|f| f.contains(&module)))
        })
        .map(|(t, o)| (t, *o))
        .collect()
}

/// The tests a RED run pins, by id, from its run on the base (a run that failed): the tests
/// its report says failed there. `Ok(None)` when it reports nothing per test (the exit code
/// is the evidence); `Err` when its report shows no test failing.
pub fn pinned_on_base(base: &Evidence) -> Result<Option<Vec<String>>, Shortfall> {
    if !base.per_test() {
        // A run on the base that ended before reporting pins nothing by id: its test's
        // verdict is had on the final tree, by its pinned files ([`passes`]).
        return Ok(None);
    }
    let failed = base.failed();
    if failed.is_empty() {
        return Err(Shortfall::NothingFailedOnBase { kind: base.kind });
    }
    Ok(Some(failed))
}

/// What a passing run of the RED test on the final tree shows, given the ids it pinned on
/// the base (`None` or none: not known) and the files its RED step pinned (`files`). A
/// report that was asked for and not written is no pass; a pinned test must be in the
/// report and pass (a run that reports nothing per test reports no pinned test); a test must
/// pass and none fail. Without pinned ids, the tests of the pinned files must be reported,
/// one at least, each passed, where the runner ties its tests to files ([`by_files`]).
/// `Ok` carries the evidence kind and the tests it rests on; [`Kind::ExitCodeOnly`] when
/// that is the exit code alone.
pub fn passes(
    evidence: &Evidence,
    pinned: Option<&[String]>,
    files: &[String],
) -> Result<(Kind, Vec<String>), Shortfall> {
    let pinned = pinned.unwrap_or_default();
    if let Some(why) = &evidence.missing {
        return Err(Shortfall::NoReport {
            why: why.clone(),
            pinned: pinned.first().cloned(),
        });
    }
    if evidence.kind == Kind::ExitCodeOnly {
        return match pinned.first() {
            Some(id) => Err(Shortfall::NotReported { id: id.clone() }),
            None => Ok((Kind::ExitCodeOnly, Vec::new())),
        };
    }
    for id in pinned {
        let tests = group(evidence, id);
        if tests.is_empty() {
            return Err(Shortfall::Pinned {
                id: id.clone(),
                outcome: None,
            });
        }
        if let Some((test, outcome)) = tests.iter().find(|(_, o)| *o != Outcome::Passed) {
            return Err(Shortfall::Pinned {
                id: (*test).clone(),
                outcome: Some(*outcome),
            });
        }
    }
    if let Some(what) = evidence.unreported.first() {
        return Err(Shortfall::Unreported { what: what.clone() });
    }
    if let Some((id, outcome)) = evidence.tests.iter().find(|(_, o)| o.failed()) {
        return Err(Shortfall::Failed {
            id: id.clone(),
            outcome: *outcome,
        });
    }
    if !evidence.tests.values().any(|o| *o == Outcome::Passed) {
        return Err(Shortfall::NoPass {
            kind: evidence.kind,
        });
    }
    if !pinned.is_empty() {
        return Ok((evidence.kind, pinned.to_vec()));
    }
    by_files(evidence, files)
}

/// With nothing pinned by id (the RED run on the base left no per-test report: pytest ended
/// at import, cargo could not build the test), the tests of the pinned `files`: where the
/// runner names each test's file and a pinned file is one its tests live in
/// ([`holds_tests`]), one at least must be reported, and each passed (not skipped, xfailed
/// or ignored). Where it cannot be told, the evidence is the exit code, and says so.
fn by_files(evidence: &Evidence, files: &[String]) -> Result<(Kind, Vec<String>), Shortfall> {
    let Some(of) = &evidence.files else {
        return Ok((Kind::ExitCodeOnly, Vec::new()));
    };
    let tied: Vec<(&String, Outcome)> = evidence
        .tests
        .iter()
        .filter(|(id, _)| {
            of.get(*id)
                .is_some_and(|fs| fs.iter().any(|f| files.iter().any(|p| same_file(p, f))))
        })
        .map(|(id, o)| (id, *o))
        .collect();
    if tied.is_empty() {
        let testable: Vec<&str> = files
            .iter()
            .filter(|p| holds_tests(evidence.kind, p))
            .map(String::as_str)
            .collect();
        if testable.is_empty() {
            return Ok((Kind::ExitCodeOnly, Vec::new()));
        }
        return Err(Shortfall::FilesNotReported {
            paths: testable.join(", "),
        });
    }
    if let Some((id, outcome)) = tied.iter().find(|(_, o)| *o != Outcome::Passed) {
        return Err(Shortfall::Pinned {
            id: (*id).clone(),
            outcome: Some(*outcome),
        });
    }
    Ok((
        evidence.kind,
        tied.into_iter().map(|(id, _)| id.clone()).collect(),
    ))
}

/// True when `path` is where the runner of `kind` finds tests by default: pytest's
/// `test_*.py` and `*_test.py`; jest's `*.test.*`, `*.spec.*` and `__tests__/`; mocha's
/// scripts under `test/` (its default), `tests/`, `spec/` or `__tests__/`, and its `*.test.*`
/// and `*.spec.*` scripts; cargo's integration tests (`tests/<name>.rs`, `tests/<name>/main.rs`). A pinned file that is none
/// of them (a helper, a fixture) may hold no test.
fn holds_tests(kind: Kind, path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts.last().copied().unwrap_or_default();
    let parent = |n: usize| parts.len().checked_sub(n + 1).and_then(|i| parts.get(i));
    match kind {
        Kind::Junit => {
            name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
        }
        Kind::JestJson => {
            name.contains(".test.") || name.contains(".spec.") || parts.contains(&"__tests__")
        }
        // mocha's default spec is `./test/*.{js,cjs,mjs}`; a configured one is most often a
        // `spec` directory or `*.spec.*`/`*.test.*` files.
        Kind::MochaJson => {
            let script = [".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx"]
                .iter()
                .any(|ext| name.ends_with(ext));
            let dirs = &parts[..parts.len().saturating_sub(1)];
            script
                && (name.contains(".test.")
                    || name.contains(".spec.")
                    || dirs
                        .iter()
                        .any(|d| matches!(*d, "test" | "tests" | "spec" | "__tests__")))
        }
        Kind::Libtest => {
            (name.ends_with(".rs") && parent(1) == Some(&"tests"))
                || (name == "main.rs" && parent(2) == Some(&"tests"))
        }
        _ => false,
    }
}

/// The RED obligation by test id: the run on the base failed with a test failing in its
/// report (those tests are the pinned ones), and the run on the final tree passed with every
/// pinned test passing in its report (with none pinned by id, the tests of the pinned
/// `files`: [`passes`]). `Ok` carries the evidence kind and the tests it rests on. Exit
/// codes are judged before (a base that passed, a final tree that failed).
pub fn red_proven(
    on_base: (&Evidence, ExitRecord),
    on_final: (&Evidence, ExitRecord),
    files: &[String],
) -> Result<(Kind, Vec<String>), (Shortfall, Side)> {
    let pinned = if on_base.1.success() {
        None
    } else {
        pinned_on_base(on_base.0).map_err(|s| (s, Side::Base))?
    };
    let proven = passes(on_final.0, pinned.as_deref(), files).map_err(|s| (s, Side::Final))?;
    for id in pinned.as_deref().unwrap_or_default() {
        if let Some(short) = moved(on_base.0, on_final.0, id) {
            return Err((short, Side::Final));
        }
    }
    Ok(proven)
}

/// Why the pinned test `id`, reported by that id on the final tree, is not the one that
/// failed on the base: the files its runner names it in on the two trees have none in
/// common (libtest names a test without its binary: a `muls` of another test target, built
/// from another file, would stand for the pinned one). `None` where either run names no file
/// for it.
fn moved(base: &Evidence, on_final: &Evidence, id: &str) -> Option<Shortfall> {
    let was = base.files.as_ref()?.get(id)?;
    let now = on_final.files.as_ref()?.get(id)?;
    if was.iter().any(|w| now.contains(w)) {
        return None;
    }
    let list = |files: &BTreeSet<String>| files.iter().cloned().collect::<Vec<_>>().join(", ");
    Some(Shortfall::Moved {
        id: id.to_string(),
        was: list(was),
        now: list(now),
    })
}

/// The file (or files) `base`'s report names for each of `ids` (the pinned tests), in the
/// runner's spelling: where a later run must report it from. An id it names no file for is
/// left out.
pub fn files_of(base: &Evidence, ids: &[String]) -> BTreeMap<String, Vec<String>> {
    let Some(files) = &base.files else {
        return BTreeMap::new();
    };
    ids.iter()
        .filter_map(|id| {
            let of = files.get(id).filter(|f| !f.is_empty())?;
            Some((id.clone(), of.iter().cloned().collect()))
        })
        .collect()
}

/// Why a run that reports the pinned tests passing ([`passes`]) does not report them from
/// the files the RED run named for them (`recorded`, [`files_of`]): a test of the same id in
/// another file (libtest names a test without its binary: an empty `#[test] fn muls() {}`
/// in another test target is reported as `muls`) is another test. Each test standing for a
/// pinned id must be reported from one of its recorded files; one the run names no file
/// for is reported from none. `None` when each is.
pub fn from_pinned_files(
    evidence: &Evidence,
    recorded: &BTreeMap<String, Vec<String>>,
) -> Option<Shortfall> {
    for (id, was) in recorded {
        for (test, _) in group(evidence, id) {
            let now = evidence.files.as_ref().and_then(|files| files.get(test));
            if now.is_some_and(|now| now.iter().any(|f| was.contains(f))) {
                continue;
            }
            return Some(Shortfall::NotFromPinned {
                id: test.clone(),
                was: was.join(", "),
                now: now.map_or("no file its runner names".to_string(), |now| {
                    now.iter().cloned().collect::<Vec<_>>().join(", ")
                }),
            });
        }
    }
    None
}

/// Which run an evidence shortfall is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Base,
    Final,
}

#[cfg(test)]
mod tests;
