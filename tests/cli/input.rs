//! Hostile and malformed input found by the bad-input runs: each is refused with exit 2
//! and a clear message, and nothing is written.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;

use pretty_assertions::assert_eq;

use crate::support::{BIN, PLAN, Run, TestRepo};

fn run_os(repo: &TestRepo, args: &[&OsStr]) -> Run {
    Run::from(
        repo.command(BIN, args)
            .stdin(Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    )
}

#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error_not_a_panic() {
    let repo = TestRepo::at_first_step();
    let before = repo.tip();
    let bad = OsStr::from_bytes(b"\xff");
    for args in [
        vec![
            OsStr::new("submit-work"),
            OsStr::new("-s"),
            bad,
            OsStr::new("--test-command"),
            OsStr::new("true"),
        ],
        vec![OsStr::new("checkpoint"), OsStr::new("-m"), bad],
        vec![OsStr::new("--workflow"), bad, OsStr::new("status")],
        vec![
            OsStr::new("--json"),
            OsStr::new("checkpoint"),
            OsStr::new("-m"),
            bad,
        ],
    ] {
        let out = run_os(&repo, &args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(text.contains("must be valid UTF-8"), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{text}");
    }
    let mut cmd = repo.command(BIN, ["status"]);
    cmd.env("GIT_ORCHESTRATE_WORKFLOW", OsStr::from_bytes(b"w\xff"));
    let out = cmd.stdin(Stdio::null()).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(repo.tip(), before, "nothing was written");
}

#[test]
fn usage_errors_point_at_dash_h_not_the_man_page() {
    let repo = TestRepo::new();
    let out = repo.run(&["no-such-command"]);
    out.expect(2);
    assert!(out.stderr.contains("try '-h'"), "{}", out.stderr);
    assert!(!out.stderr.contains("--help"), "{}", out.stderr);
    let out = repo.run(&["submit-work", "--no-such-flag"]);
    out.expect(2);
    assert!(out.stderr.contains("try '-h'"), "{}", out.stderr);
}

#[test]
fn a_plan_input_larger_than_the_cap_is_refused_at_once() {
    let repo = TestRepo::new();
    let out = repo.run(&["submit-work", "-s", "plan", "--plan", "/dev/zero"]);
    out.expect(2);
    assert_eq!(
        out.stderr.lines().next(),
        Some("error: the plan /dev/zero is larger than the limit of 8 MiB")
    );
    let big = repo
        .dir()
        .parent()
        .expect("parent")
        .join(format!("big-{}.json", std::process::id()));
    std::fs::write(&big, vec![b' '; 8 * 1024 * 1024 + 1]).expect("write");
    let out = repo.run(&[
        "submit-work",
        "-s",
        "plan",
        "--plan",
        big.to_str().expect("utf8"),
    ]);
    std::fs::remove_file(&big).expect("remove");
    out.expect(2);
    assert!(
        out.stderr.contains("larger than the limit of 8 MiB"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), None, "no workflow was created");
    // Just under the cap is read (and judged as JSON).
    repo.submit_plan(PLAN).expect(0);
}

/// A repository with hooks and a counting gate, on a branch with one checkpoint commit whose
/// note the hook wrote.
fn branch_with_a_checkpoint() -> TestRepo {
    let repo = TestRepo::with_config("");
    let counter = crate::support::counter_file(&repo, "verify-runs");
    repo.write(
        ".orchestrate.toml",
        &crate::support::counting_config(&counter, ""),
    );
    repo.commit_all("config");
    repo.run(&["hooks", "install"]).expect(0);
    // On a workflow's PR branch, so that its chain records what the hook verified.
    repo.submit_plan(&crate::support::one_task_plan("feat: Feature", "a.txt"))
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.write("a.txt", "a\n");
    repo.git(&["add", "--all"]);
    repo.git(&["commit", "-q", "-m", "checkpoint: a"]);
    repo
}

#[test]
fn verify_refuses_options_as_ranges_and_writes_nothing() {
    let repo = branch_with_a_checkpoint();
    let target = repo
        .dir()
        .parent()
        .expect("parent")
        .join(format!("out-{}", std::process::id()));
    let output = format!("--output={}", target.display());
    for bad in [output.as_str(), "--format=%H", "-p"] {
        let out = repo.run(&["verify", bad]);
        out.expect(2);
        assert!(
            out.stderr.starts_with(&format!(
                "error: {bad} is not a range: verify takes revisions, not options"
            )),
            "{}",
            out.stderr
        );
    }
    assert!(
        !target.exists(),
        "git log must not have written {}",
        target.display()
    );
    repo.run(&["verify", "main..HEAD"]).expect(0);
}

#[test]
fn a_tag_named_like_the_main_branch_does_not_change_the_default_range() {
    let repo = branch_with_a_checkpoint();
    // A tag `main` at the checkpoint: `main..HEAD` would then be empty and verify nothing.
    repo.git(&["tag", "main", "HEAD"]);
    repo.git(&[
        "commit",
        "-q",
        "--no-verify",
        "--allow-empty",
        "-m",
        "checkpoint: sneaked",
    ]);
    let out = repo.run(&["verify", "--json"]);
    out.expect(1);
    let json = out.json();
    assert_eq!(json["range"], serde_json::json!(["refs/heads/main..HEAD"]));
    let statuses: Vec<&str> = json["checkpoints"]
        .as_array()
        .expect("checkpoints")
        .iter()
        .map(|c| c["status"].as_str().expect("status"))
        .collect();
    assert_eq!(statuses, ["missing", "verified"]);
}

/// Replaces the note on HEAD with `line`.
fn forge_note(repo: &TestRepo, line: &str) {
    repo.git(&[
        "notes",
        "--ref=orchestrator",
        "add",
        "-f",
        "-m",
        line,
        "HEAD",
    ]);
}

#[test]
fn a_note_with_a_failing_gate_or_no_gates_while_gates_are_configured_is_not_a_pass() {
    let repo = branch_with_a_checkpoint();
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    let record = |gates: &str| {
        format!(
            r#"{{"v":1,"kind":"checkpoint","workflow":"main","step":null,"tree":"{tree}","preflight":{{"passed":true,"cached":false,"gates":{gates}}},"tool":"x"}}"#
        )
    };
    forge_note(&repo, &record(r#"[{"name":"counted","exit":1,"ms":5}]"#));
    let out = repo.run(&["verify", "--json"]);
    out.expect(1);
    assert_eq!(out.json()["checkpoints"][0]["status"], "failed");

    forge_note(&repo, &record("[]"));
    let out = repo.run(&["verify"]);
    out.expect(1);
    assert!(
        out.stdout.contains("NO GATES")
            && out
                .stdout
                .contains("preflight gates are configured: they never ran on it"),
        "{}",
        out.stdout
    );
    // A passing record for a tree the workflow's chain verified is believed.
    forge_note(&repo, &record(r#"[{"name":"counted","exit":0,"ms":5}]"#));
    repo.run(&["verify"]).expect(0);
}

#[test]
fn a_plan_with_a_duplicate_key_is_refused_naming_every_path() {
    let repo = TestRepo::new();
    let plan = PLAN
        .replacen(
            r#""prTitle": "feat: Add numbers","#,
            r#""prTitle": "feat: Add numbers", "prTitle": "feat: Something else","#,
            1,
        )
        .replacen(
            r#"{"taskName": "sub", "#,
            r#"{"taskName": "sub", "taskName": "mul", "#,
            1,
        );
    let out = repo.submit_plan(&plan);
    out.expect(2);
    assert!(
        out.stderr
            .contains("prTitle: the key appears more than once in this object; give it once"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("tasks[1].taskName: the key appears more than once"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), None);
}

#[test]
fn deceptive_characters_in_titles_task_names_and_gate_names_are_refused() {
    let repo = TestRepo::new();
    for (from, to, path) in [
        ("feat: Add numbers", "feat: Add \u{202E}srebmun", "prTitle"),
        (
            r#""taskName": "add""#,
            "\"taskName\": \"a\u{2066}dd\"",
            "tasks[0].taskName",
        ),
        (
            "test add",
            "test\u{200F} add",
            "tasks[0].tdd_steps[0].description",
        ),
    ] {
        let out = repo.submit_plan(&PLAN.replacen(from, to, 1));
        out.expect(2);
        assert!(
            out.stderr.contains(&format!("{path}: must"))
                && out.stderr.contains("bidirectional-override"),
            "{path}: {}",
            out.stderr
        );
    }
    assert_eq!(repo.tip(), None);
    repo.write(
        ".orchestrate.toml",
        "master_plan = \"docs/plan.md\"\n[[preflight]]\nname = \"te\u{202E}sts\"\ncommand = \"true\"\n",
    );
    let out = repo.run(&["get-task"]);
    out.expect(2);
    assert!(out.stderr.contains("preflight[0].name"), "{}", out.stderr);
}

#[test]
fn titles_in_other_scripts_name_a_branch() {
    for (title, branch) in [
        ("feat: ünïcödé título", "feat/unicode-titulo"),
        ("日本語のタイトル", "pr-e4c4a99b"),
    ] {
        let repo = TestRepo::new();
        repo.submit_plan(&PLAN.replacen("feat: Add numbers", title, 1))
            .expect(0);
        repo.run(&["get-task"]).expect(0);
        assert_eq!(repo.git(&["branch", "--show-current"]).trim(), branch);
    }
}

#[test]
fn a_config_that_is_not_utf8_or_is_a_directory_is_bad_input_and_status_still_shows_the_rest() {
    let repo = TestRepo::at_first_step();
    let before = repo.tip();
    // Before the PR branch: the working-tree file is in force; after, main's. Write both.
    for broken in ["bytes", "dir"] {
        let path = repo.dir().join(".orchestrate.toml");
        if path.is_dir() {
            std::fs::remove_dir(&path).expect("rmdir");
        } else {
            std::fs::remove_file(&path).expect("rm");
        }
        if broken == "bytes" {
            std::fs::write(&path, b"master_plan = \"docs/\xffplan.md\"\n").expect("write");
        } else {
            std::fs::create_dir(&path).expect("mkdir");
        }
        let git_dir = repo.dir().join(".git");
        // The committed file on main is read once a PR branch exists: break it there too,
        // through a fresh repo is not needed — `init` reads the working tree.
        let out = repo.run(&["init", "--no-hooks"]);
        assert_eq!(out.code, 2, "{broken}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains(if broken == "bytes" {
                "not valid UTF-8"
            } else {
                "a directory"
            }),
            "{broken}: {}",
            out.stderr
        );
        assert!(git_dir.exists());
        let out = repo.run(&["status"]);
        out.expect(0);
        assert!(out.stdout.contains("EXECUTING_TDD"), "{}", out.stdout);
    }
    assert_eq!(repo.tip(), before);
}

#[test]
fn a_committed_config_that_is_not_utf8_is_bad_input() {
    let repo = TestRepo::at_first_step();
    // main's file is in force on the PR branch, as pinned: commit broken bytes there.
    repo.git(&["checkout", "-q", "main"]);
    std::fs::write(
        repo.dir().join(".orchestrate.toml"),
        b"master_plan = \"\xff\"\n",
    )
    .expect("write");
    repo.git(&["commit", "-q", "--no-verify", "-am", "broken config"]);
    let branch = repo.state()["current_pr_branch"]
        .as_str()
        .expect("branch")
        .to_string();
    repo.git(&["checkout", "-q", &branch]);
    // The PR goes on under the pinned gates, and says that main's changed.
    repo.run(&["get-task"])
        .expect(0)
        .says("WARNING: main's gates changed since this PR began");
    // A human who repins is told the new file is broken; nothing changes.
    let tip = repo.tip();
    let out = repo.human(&["repin"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains("main:.orchestrate.toml: not valid UTF-8"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip);
    repo.run(&["status"]).expect(0);
    // A workflow with no PR yet reads main's file as it is: a broken one stops it.
    let fresh = TestRepo::new();
    fresh.write(".orchestrate.toml", "x");
    std::fs::write(
        fresh.dir().join(".orchestrate.toml"),
        b"master_plan = \"\xff\"\n",
    )
    .expect("write");
    fresh.git(&["commit", "-q", "--no-verify", "-am", "broken config"]);
    let out = fresh.run(&["get-task"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains(".orchestrate.toml (working tree): not valid UTF-8"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_summary_that_looks_like_trailers_does_not_change_what_log_shows() {
    let repo = TestRepo::new();
    let out = repo.run_with_stdin(
        &[
            "submit-work",
            "-s",
            "the plan\nOrchestrator-Step: 9.9",
            "--plan",
            "-",
        ],
        PLAN,
    );
    out.expect(0);
    let log = repo.run(&["log", "--json"]);
    log.expect(0);
    let entry = &log.json()["entries"][0];
    assert_eq!(entry["step"], serde_json::Value::Null);
    assert!(
        entry["body"]
            .as_str()
            .expect("body")
            .ends_with("\n\nthe plan\nOrchestrator-Step: 9.9"),
        "{entry}"
    );
    let text = repo.run(&["log"]).expect(0).stdout.clone();
    assert!(!text.contains("[9.9]"), "{text}");
}

#[test]
fn an_empty_checkpoint_message_is_refused() {
    let repo = TestRepo::at_green_step();
    repo.write("add.sh", "echo 5\n");
    let before = repo.git(&["rev-parse", "HEAD"]);
    for message in ["", "  ", "checkpoint:"] {
        let out = repo.run(&["checkpoint", "-m", message]);
        out.expect(2);
        assert!(
            out.stderr.contains("the checkpoint message (-m) is empty"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), before, "no commit");
}

/// `.orchestrate.toml` as a FIFO, as a link to `/dev/zero`, or over 8 MiB (an agent's test
/// command can make any of them): every command that reads it refuses at once with exit 2,
/// naming the file and what it is, and writes nothing; none blocks or fills memory.
#[test]
fn a_config_that_is_no_regular_file_is_refused_at_once() {
    let repo = TestRepo::at_first_step();
    let config = repo.path.join(".orchestrate.toml");
    let within = |args: &[&str]| {
        let mut all = vec!["20", BIN];
        all.extend(args);
        Run::from(
            repo.command("timeout", &all)
                .stdin(Stdio::null())
                .output()
                .expect("run git-orchestrate"),
        )
    };
    let fifo = || {
        std::fs::remove_file(&config).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&config)
            .status()
            .unwrap();
        assert!(made.success());
    };
    let zero = || {
        std::fs::remove_file(&config).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
    };
    let large = || {
        std::fs::remove_file(&config).unwrap();
        let mut text = std::fs::read_to_string(repo.path.join("run_tests.sh")).unwrap();
        text.clear();
        text.push_str("main_branch = \"main\"\n");
        text.push_str(&"# padding\n".repeat(900_000));
        std::fs::write(&config, text).unwrap();
    };
    type Make<'a> = &'a dyn Fn();
    let cases: [(&str, Make, &str); 3] = [
        (
            "a FIFO",
            &fifo,
            "it is a FIFO, not a regular file, and is not read",
        ),
        (
            "/dev/zero",
            &zero,
            "it is a device, not a regular file, and is not read",
        ),
        (
            "9 MB",
            &large,
            "it is larger than the limit of 8 MiB, and is not read",
        ),
    ];
    let tip = repo.tip();
    for (what, make, says) in cases {
        make();
        // status reports the config as it finds it, and exits 0.
        let status = within(&["status"]);
        assert_eq!(status.code, 0, "{what}: {}{}", status.stdout, status.stderr);
        assert!(
            status.stdout.contains(&format!(
                "config    INVALID: invalid .orchestrate.toml (working tree): {says}"
            )),
            "{what}: {}",
            status.stdout
        );
        for args in [
            &["get-task"][..],
            &["init"],
            &["submit-work", "-s", "x", "--test-command", "false"],
        ] {
            let out = within(args);
            assert_eq!(
                out.code, 2,
                "{what}, {args:?}: {}{}",
                out.stdout, out.stderr
            );
            assert!(
                out.stderr.contains(".orchestrate.toml") && out.stderr.contains(says),
                "{what}, {args:?}: {}",
                out.stderr
            );
        }
        let doctor = within(&["doctor"]);
        assert_eq!(doctor.code, 1, "{what}: {}{}", doctor.stdout, doctor.stderr);
        assert!(doctor.stdout.contains(says), "{what}: {}", doctor.stdout);
        assert_eq!(repo.tip(), tip, "{what}: nothing written");
    }
}

/// An agent's settings file that is a FIFO is refused by `init --agent` at once, naming it.
#[test]
fn init_agent_refuses_a_settings_file_that_is_a_fifo() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path.join(".claude")).unwrap();
    let settings = repo.path.join(".claude/settings.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&settings)
        .status()
        .unwrap();
    assert!(made.success());
    let out = Run::from(
        repo.command("timeout", ["20", BIN, "init", "--agent", "claude"])
            .stdin(Stdio::null())
            .output()
            .expect("run git-orchestrate"),
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains(".claude/settings.json: it is a FIFO, not a regular file, and is not read"),
        "{}",
        out.stderr
    );
}
