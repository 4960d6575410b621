//! `.orchestrate.toml` parsed: defaults, every section, and the errors that name the key.

use std::time::Duration;

use super::sections::DEFAULT_TIMEOUT;
use super::*;
use crate::workflow::review::Priority;
use pretty_assertions::assert_eq;

fn parse(text: &str) -> Result<Config, String> {
    Config::parse(text, &Origin::WorkingTree).map_err(|e| e.to_string())
}

#[test]
fn defaults_when_empty() {
    assert_eq!(parse("").unwrap(), Config::default());
    assert!(Config::default().preflight.is_empty());
}

#[test]
fn a_full_file_parses() {
    let config = parse(
        r#"
main_branch = "trunk"
master_plan = "PLAN.md"
remote = "origin"
[[preflight]]
name = "fmt"
command = "cargo fmt --check"
timeout = "30s"
group = "fast"
[[preflight]]
name = "lint"
command = "cargo clippy"
group = "fast"
[test]
timeout = "1h30m"
output_tail = 50
"#,
    )
    .unwrap();
    assert_eq!(config.main_branch.as_deref(), Some("trunk"));
    assert_eq!(config.preflight[0].timeout, Duration::from_secs(30));
    assert_eq!(config.preflight[1].timeout, DEFAULT_TIMEOUT);
    assert_eq!(config.preflight[1].group.as_deref(), Some("fast"));
    assert_eq!(config.test.timeout, Duration::from_secs(5400));
    assert_eq!(config.test.output_tail, 50);
}

#[test]
fn unknown_keys_name_the_key_and_line() {
    let err = parse("master_plan = \"x\"\n[test]\ntimeout = \"1s\"\ntail = 3\n").unwrap_err();
    assert!(
        err.starts_with("invalid .orchestrate.toml (working tree): TOML parse error at line 4"),
        "{err}"
    );
    assert!(err.contains("unknown field `tail`"), "{err}");
}

#[test]
fn the_pre_push_mode_is_warn_or_enforce() {
    assert_eq!(parse("").unwrap().hooks.pre_push, PrePush::Warn);
    assert_eq!(
        parse("[hooks]\npre_push = \"enforce\"\n")
            .unwrap()
            .hooks
            .pre_push,
        PrePush::Enforce
    );
    let err = parse("[hooks]\npre_push = \"sometimes\"\n").unwrap_err();
    assert!(err.contains("line 2"), "{err}");
    assert!(
        err.contains("unknown variant `sometimes`, expected `warn` or `enforce`"),
        "{err}"
    );
    let err = parse("[hooks]\npre_commit = \"warn\"\n").unwrap_err();
    assert!(err.contains("unknown field `pre_commit`"), "{err}");
}

#[test]
fn names_handed_to_git_are_checked() {
    let cases = [
        (
            "main_branch = \"-x\"",
            "main_branch: \"-x\" is not a valid branch name",
        ),
        (
            "main_branch = \"a..b\"",
            "main_branch: \"a..b\" is not a valid branch name",
        ),
        (
            "master_plan = \"/etc/passwd\"",
            "master_plan: \"/etc/passwd\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
        ),
        (
            "master_plan = \"docs/../x.md\"",
            "master_plan: \"docs/../x.md\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
        ),
        (
            "master_plan = \"./x.md\"",
            "master_plan: \"./x.md\" must be a file path relative to the repository root, like docs/PLAN.md (no leading /, no . or .. parts)",
        ),
        (
            "master_plan = \".orchestrate.toml\"",
            "master_plan: the master plan cannot be .orchestrate.toml itself",
        ),
        (
            "remote = \"--upload-pack=evil\"",
            "remote: \"--upload-pack=evil\" is not a remote name (like origin)",
        ),
        (
            "remote = \"\"",
            "remote: \"\" is not a remote name (like origin)",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(
            parse(text),
            Err(format!(
                "invalid .orchestrate.toml (working tree): {message}"
            )),
            "{text}"
        );
    }
    assert!(parse("main_branch = \"release/2.x\"\nmaster_plan = \"docs/My Plan.md\"").is_ok());
}

#[test]
fn bad_durations_name_the_line() {
    let err = parse("[[preflight]]\nname = \"t\"\ncommand = \"true\"\ntimeout = \"10 minutes\"\n")
        .unwrap_err();
    assert!(err.contains("line 4"), "{err}");
    assert!(err.contains("invalid duration \"10 minutes\""), "{err}");
    let err = parse("[test]\ntimeout = 600\n").unwrap_err();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn archiving_by_itself_is_off_unless_asked() {
    let default = parse("").unwrap().archive;
    assert_eq!((default.auto, default.after), (false, 100));
    let set = parse("[archive]\nauto = true\nafter = 3\n")
        .unwrap()
        .archive;
    assert_eq!((set.auto, set.after), (true, 3));
}

#[test]
fn bad_types_and_values_are_errors() {
    assert!(parse("remote = 3\n").unwrap_err().contains("line 1"));
    for (text, says) in [
        ("[retry]\nstrategy = \"maybe\"\n", "unknown variant `maybe`"),
        ("[retry]\nmax_iterations = 0\n", "must be at least 1"),
        ("[retry]\nfresh_after_failures = -1\n", "invalid value"),
        ("[retry]\nfresh_after = 2\n", "unknown field `fresh_after`"),
        ("[agent]\nmax_stop_blocks = 0\n", "must be at least 1"),
        ("[archive]\nafter = 0\n", "must be at least 1"),
        ("[archive]\nauto = \"yes\"\n", "invalid type"),
        (
            "[verify]\nrecorded_plans = \"sometimes\"\n",
            "unknown variant `sometimes`, expected `require` or `warn`",
        ),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
    let retry = parse("[retry]\nstrategy = \"auto\"\nmax_iterations = 5\n")
        .unwrap()
        .retry;
    assert_eq!(
        (
            retry.strategy,
            retry.fresh_after_failures,
            retry.max_iterations
        ),
        (RetryStrategy::Auto, 2, 5)
    );
    assert!(
        parse("[test]\noutput_tail = 0\n")
            .unwrap_err()
            .contains("must be at least 1")
    );
    assert!(
        parse("[[preflight]]\nname = \"t\"\ncommand = \" \"\n")
            .unwrap_err()
            .contains("must not be empty")
    );
    let dup = parse(
        "[[preflight]]\nname = \"t\"\ncommand = \"a\"\n[[preflight]]\nname = \"t\"\ncommand = \"b\"\n",
    );
    assert_eq!(
        dup.unwrap_err(),
        "invalid .orchestrate.toml (working tree): preflight[1].name: the gate name \"t\" is used twice; gate names must be unique"
    );
}

#[test]
fn durations() {
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
    assert!(parse_duration("0s").is_err());
    assert!(parse_duration("10").is_err());
    assert!(parse_duration("m").is_err());
    assert!(parse_duration("5d").is_err());
}

#[test]
fn the_preflight_key_changes_with_the_gates() {
    let a = parse("[[preflight]]\nname = \"t\"\ncommand = \"a\"\n").unwrap();
    let b = parse("[[preflight]]\nname = \"t\"\ncommand = \"b\"\n").unwrap();
    assert_ne!(a.preflight_key(), b.preflight_key());
    assert_eq!(a.preflight_key(), a.clone().preflight_key());
    assert_eq!(a.preflight_key().len(), 40);
}

#[test]
fn the_test_runner_is_detected_from_the_projects_own_files() {
    let project = |files: &[(&str, &str)]| {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        detect_test_runner(&move |name: &str| {
            files
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.clone())
        })
        .map(|r| (r.command, r.from))
    };
    let found = |command: &str, from: &str| Some((command.to_string(), from.to_string()));
    assert_eq!(
        project(&[("Cargo.toml", "[package]"), ("Makefile", "test:\n")]),
        found("cargo test", "Cargo.toml")
    );
    assert_eq!(
        project(&[("pyproject.toml", "[tool.pytest.ini_options]\n")]),
        found("python -m pytest", "pyproject.toml")
    );
    assert_eq!(
        project(&[("pyproject.toml", "[project]\nname = \"x\"\n")]),
        None
    );
    assert_eq!(
        project(&[("setup.cfg", "[tool:pytest]\n")]),
        found("python -m pytest", "setup.cfg")
    );
    assert_eq!(
        project(&[("conftest.py", "")]),
        found("python -m pytest", "conftest.py")
    );
    assert_eq!(
        project(&[("package.json", r#"{"scripts": {"test": "jest"}}"#)]),
        found("npm test", "package.json's \"test\" script")
    );
    assert_eq!(
        project(&[(
            "package.json",
            r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#
        )]),
        None
    );
    assert_eq!(
        project(&[("go.mod", "module x\n")]),
        found("go test ./...", "go.mod")
    );
    assert_eq!(
        project(&[("Makefile", "build:\n\tcc x.c\ntest: build\n\t./t\n")]),
        found("make test", "the Makefile's test target")
    );
    assert_eq!(project(&[("Makefile", "build:\n")]), None);
    assert_eq!(project(&[]), None);
}

#[test]
fn the_initial_file_parses_to_what_it_says() {
    let text = initial_file("main", FirstGate::Given("sh -c 'make test'"));
    let config = parse(&text).unwrap();
    assert_eq!(config.main_branch.as_deref(), Some("main"));
    // New repositories require recorded plans; a file without the key only warns.
    assert_eq!(config.verify.recorded_plans, RecordedPlans::Require);
    assert_eq!(
        parse("").unwrap().verify.recorded_plans,
        RecordedPlans::Warn
    );
    assert_eq!(config.preflight[0].command, "sh -c 'make test'");
    assert!(
        parse(&initial_file("trunk", FirstGate::None))
            .unwrap()
            .preflight
            .is_empty()
    );
    let runner = TestRunner {
        command: "python -m pytest".into(),
        from: "pyproject.toml".into(),
    };
    let detected = initial_file("main", FirstGate::Detected(&runner));
    assert!(
        detected.contains("# Detected from pyproject.toml"),
        "{detected}"
    );
    let config = parse(&detected).unwrap();
    assert_eq!(config.preflight[0].name, "tests");
    assert_eq!(config.preflight[0].command, "python -m pytest");
    // The commented [review] example is valid once uncommented.
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let config = parse(&uncommented).unwrap();
    assert_eq!(
        config.review.policy().command.as_deref(),
        Some("./tools/review.sh")
    );
    assert_eq!(
        config.review.policy().dimensions,
        vec!["correctness", "security"]
    );
}

#[test]
fn review_presets_and_the_keys_that_override_them() {
    let policy = |text: &str| parse(text).unwrap().review.policy();
    let none = policy("");
    assert_eq!(
        (
            none.command,
            none.dimensions.len(),
            none.human,
            none.max_rounds
        ),
        (None, 0, false, 3)
    );
    assert_eq!(none.block_on, vec![Priority::P0, Priority::P1]);
    assert_eq!(none.timeout, DEFAULT_TIMEOUT);
    let code = policy("[review]\npreset = \"code-review\"\n");
    assert_eq!(code.dimensions, ALL_DIMENSIONS.to_vec());
    assert!(!code.human);
    let audit = policy("[review]\npreset = \"security-audit\"\n");
    assert_eq!(
        audit.dimensions,
        vec!["security", "resilience", "correctness"]
    );
    assert!(audit.human);
    let quick = policy("[review]\npreset = \"quick-review\"\n");
    assert_eq!(quick.dimensions, vec!["correctness", "security"]);
    let overridden = policy(
        "[review]\npreset = \"security-audit\"\nhuman = false\ndimensions = [\"security\"]\n\
         block_on = [\"P0\"]\nmax_rounds = 5\ntimeout = \"2m\"\ncommand = \"review\"\n",
    );
    assert_eq!(overridden.dimensions, vec!["security"]);
    assert!(!overridden.human, "an explicit key beats the preset");
    assert_eq!(
        (overridden.block_on, overridden.max_rounds),
        (vec![Priority::P0], 5)
    );
    assert_eq!(overridden.timeout, Duration::from_secs(120));
    assert_eq!(overridden.command.as_deref(), Some("review"));
}

#[test]
fn protected_paths_are_pathspecs_and_bad_ones_are_errors() {
    let config = Config::parse(
        "[gates]\nprotected = [\"run_tests.sh\", \"ci/**\"]\n[review]\ncommand = \"sh tools/review.sh\"\n",
        &Origin::WorkingTree,
    )
    .expect("valid");
    assert_eq!(
        config.protected_pathspecs(&["tools/review.sh".to_string()]),
        vec![
            ":(literal).orchestrate.toml",
            ":(literal).orchestrate/allowed_signers",
            ":(literal).github/workflows/git-orchestrate.yml",
            ":(literal).gitlab/git-orchestrate.yml",
            ":(literal).gitlab-ci.yml",
            ":(literal)tools/review.sh",
            ":(glob).github/workflows/**",
            ":(glob).github/actions/**",
            ":(glob).gitlab/**",
            ":(glob)run_tests.sh",
            ":(glob)ci/**",
            ":(exclude,glob).gitlab/issue_templates/*.md",
            ":(exclude,glob).gitlab/merge_request_templates/*.md"
        ]
    );
    // A path a CI file names: as a file and as a directory, escaped as a glob; a wildcard's
    // directory as a whole, the root's as every YAML file. A spec that may reach the
    // templates keeps them protected (no exclusion).
    let named = [
        Named::Path("tools/act[1]".into()),
        Named::Under("ci/jobs".into()),
        Named::Under(String::new()),
    ];
    let specs = config.protected_pathspecs_with(&[], &named);
    assert_eq!(
        specs[8..].to_vec(),
        vec![
            ":(literal)tools/act[1]",
            ":(glob)tools/act\\[1\\]/**",
            ":(glob)ci/jobs/**",
            ":(glob)**/*.yml",
            ":(glob)**/*.yaml",
            ":(glob)run_tests.sh",
            ":(glob)ci/**"
        ]
    );
    for (reaching, keeps) in [
        (Named::Path(".gitlab/issue_templates".into()), true),
        (Named::Path(".gitlab".into()), true),
        // A wildcard include under `.gitlab/` reads YAML only: `.gitlab/**` as ever.
        (Named::Under(".gitlab".into()), false),
        (Named::Path(".gitlab/ci.yml".into()), false),
        (Named::Path("docs/x.md".into()), false),
    ] {
        let specs = config.protected_pathspecs_with(&[], std::slice::from_ref(&reaching));
        assert_eq!(
            !specs.iter().any(|s| s.starts_with(":(exclude")),
            keeps,
            "{reaching:?}"
        );
    }
    for bad in ["\"\"", "\"/etc/passwd\"", "\"../x\"", "\":(top)x\""] {
        let err = Config::parse(
            &format!("[gates]\nprotected = [{bad}]\n"),
            &Origin::WorkingTree,
        )
        .expect_err(bad);
        assert!(
            err.message.starts_with("gates.protected[0]: "),
            "{bad}: {}",
            err.message
        );
    }
    assert!(Config::parse("[gates]\nprotect = []\n", &Origin::WorkingTree).is_err());
}

#[test]
fn bad_review_settings_are_errors() {
    let err = |text: &str| parse(text).unwrap_err();
    assert!(err("[review]\npreset = \"thorough\"\n").contains("unknown variant `thorough`"));
    assert!(err("[review]\nblock_on = [\"P9\"]\n").contains("unknown variant `P9`"));
    assert!(err("[review]\nmax_rounds = 0\n").ends_with("review.max_rounds: must be at least 1"));
    assert!(
        err("[review]\ndimensions = [\"a\", \"a\"]\n")
            .ends_with("review.dimensions: \"a\" is listed twice")
    );
    assert!(err("[review]\ncommand = \"\"\n").contains("must not be empty"));
    assert!(err("[review]\nreviewers = 2\n").contains("unknown field `reviewers`"));
}

#[test]
fn human_answers_are_attributed_unless_a_signature_is_required() {
    use super::HumanProof;
    assert_eq!(Config::default().human.require, HumanProof::Attribution);
    let config =
        Config::parse("[human]\nrequire = \"signature\"\n", &Origin::WorkingTree).expect("valid");
    assert_eq!(config.human.require, HumanProof::Signature);
    for bad in [
        "[human]\nrequire = \"gpg\"\n",
        "[human]\nrequire = \"signature\"\nkeys = []\n",
    ] {
        assert!(
            Config::parse(bad, &Origin::WorkingTree).is_err(),
            "{bad} must be refused"
        );
    }
}

#[test]
fn each_mutation_tool_is_named_as_the_docs_name_it() {
    for (name, tool) in [
        ("auto", MutationTool::Auto),
        ("mutmut", MutationTool::Mutmut),
        ("cosmic-ray", MutationTool::CosmicRay),
        ("stryker", MutationTool::Stryker),
        ("cargo-mutants", MutationTool::CargoMutants),
        ("builtin", MutationTool::Builtin),
    ] {
        let text = format!("[verify]\nmutation_tool = \"{name}\"\n");
        assert_eq!(parse(&text).unwrap().verify.mutation_tool, tool, "{name}");
    }
    assert!(parse("[verify]\nmutation_tool = \"cargo_mutants\"\n").is_err());
}
