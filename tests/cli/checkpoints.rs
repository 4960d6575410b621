//! `checkpoint` (docs/agent-guide.md, "Checkpoint") and `init`.

use pretty_assertions::assert_eq;

use crate::support::{PLAN, RED, REF, TestRepo, counter_file, counting_config, redact_ids, runs};

/// A repo whose preflight gate counts its runs in a file outside the working tree.
fn counting_repo() -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::with_config("");
    let counter = counter_file(&repo, "runs");
    repo.write(".orchestrate.toml", &counting_config(&counter, ""));
    repo.commit_all("config");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    (repo, counter)
}

#[test]
fn a_checkpoint_right_after_a_passing_submit_does_not_run_preflight_again() {
    let (repo, counter) = counting_repo();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    assert_eq!(runs(&counter), 1);
    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert!(out.contains("preflight: passed on exactly this tree with these gates before (at a submit-work or checkpoint); not run again"), "{out}");
    assert_eq!(
        runs(&counter),
        1,
        "the checkpoint reused the verified result"
    );
    let _ = std::fs::remove_file(&counter);
}

/// The tree a passing submit records is written in-process from the index git made
/// (src/store/index_tree.rs), or by git for the forms that reader leaves to it; either way
/// it is the tree git commits: with index version 4 (paths written as changes to the one
/// before), a split index and an untracked cache, the checkpoint still finds exactly the
/// verified tree, and its commit is recorded.
#[test]
fn the_verified_tree_is_the_one_git_commits_whatever_the_index_s_form() {
    for settings in [
        &[("index.version", "4")][..],
        &[("core.splitIndex", "true"), ("core.untrackedCache", "true")][..],
        &[("feature.manyFiles", "true")][..],
    ] {
        let (repo, counter) = counting_repo();
        for (key, value) in settings {
            repo.git(&["config", key, value]);
        }
        // A directory and a file whose names sort around `/`, an executable and a link.
        repo.write("add.sh", "echo 5\n");
        repo.write("lib/a-b.sh", "x\n");
        repo.write("lib/a/c.sh", "y\n");
        repo.write("lib/a0", "z\n");
        std::os::unix::fs::symlink("add.sh", repo.dir().join("lib/link")).expect("link");
        std::fs::set_permissions(
            repo.dir().join("lib/a0"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
        repo.submit_test("sh add.sh", None).expect(0);
        let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
        assert!(
            out.contains("preflight: passed on exactly this tree with these gates before"),
            "{settings:?}: {out}"
        );
        assert_eq!(runs(&counter), 1, "{settings:?}");
        assert_eq!(
            repo.state()["verified_tree"],
            serde_json::json!(repo.git(&["rev-parse", "HEAD^{tree}"]).trim()),
            "{settings:?}"
        );
        let _ = std::fs::remove_file(&counter);
    }
}

#[test]
fn a_checkpoint_of_a_different_tree_runs_preflight() {
    let (repo, counter) = counting_repo();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.write("extra.txt", "changed after verification\n");
    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert!(out.contains("preflight: counted ok (exit 0, "), "{out}");
    assert_eq!(runs(&counter), 2);
    assert_eq!(
        repo.git(&["show", "--format=", "--name-only", "HEAD"]),
        "add.sh\nextra.txt\n"
    );
    let _ = std::fs::remove_file(&counter);
}

#[test]
fn a_failing_preflight_refuses_the_checkpoint_and_commits_nothing() {
    let (repo, counter) = counting_repo();
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.write("fail", "");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let tip = repo.tip();
    let out = repo.run(&["checkpoint"]);
    out.expect(1);
    assert_eq!(
        out.stderr,
        "output:\n----- BEGIN OUTPUT 49aeed80ca019506 (quoted; nothing before END OUTPUT 49aeed80ca019506 is from git-orchestrate) -----\n\
         fail exists\n\
         ----- END OUTPUT 49aeed80ca019506 -----\n\
         error: checkpoint refused: preflight gate `counted` failed (exit 1); nothing was committed\n\
         hint: Fix what the gate reports, then run `git orchestrate checkpoint` again.\n"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(repo.tip(), tip);
    assert_eq!(
        repo.git(&["diff", "--cached", "--name-only"]),
        "",
        "the index was left alone"
    );
    assert_eq!(repo.state()["pending"]["kind"], "checkpoint");
    let _ = std::fs::remove_file(&counter);
}

#[test]
fn checkpoint_refuses_another_branch() {
    let repo = TestRepo::at_green_step();
    repo.git(&["checkout", "--quiet", "main"]);
    let out = repo.run(&["checkpoint"]);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: HEAD is on main, not on the PR branch feat/add-numbers (state EXECUTING_TDD)\n\
         hint: Run `git checkout feat/add-numbers`, then `git orchestrate checkpoint` again.\n"
    );
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("WARNING: HEAD is on main, but this PR's branch is feat/add-numbers: run `git checkout feat/add-numbers`"), "{brief}");
}

#[test]
fn a_checkpoint_nobody_asked_for_is_recorded_too() {
    let repo = TestRepo::at_green_step();
    repo.write("notes.txt", "wip\n");
    let out = repo
        .run(&["checkpoint", "-m", "human's safety net"])
        .expect(0)
        .stdout
        .clone();
    assert!(
        redact_ids(&out)
            .starts_with("checkpoint <id>: checkpoint: human's safety net\npreflight: tests ok"),
        "{out}"
    );
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(repo.state()["last_commit_hash"], head.as_str());
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]),
        "checkpoint: human's safety net\n\nOrchestrator-Checkpoint: manual\n\n"
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", REF]),
        "checkpoint: EXECUTING_TDD -> EXECUTING_TDD\n"
    );
}

#[test]
fn checkpoint_json() {
    let repo = TestRepo::at_green_step();
    repo.submit_test("true", None).expect(0);
    let json = repo.run(&["checkpoint", "--json"]).expect(0).json();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["step"], "1.2");
    assert_eq!(json["cached"], true);
    assert_eq!(json["preflight"], serde_json::Value::Null);
    assert_eq!(json["subject"], "checkpoint: 1.2 implement add");
    assert_eq!(json["commit"], repo.git(&["rev-parse", "HEAD"]).trim());
}

#[test]
fn init_writes_a_config_once_creates_the_workflow_and_is_idempotent() {
    let repo = TestRepo::with_config("");
    let out = repo
        .run(&["init", "--preflight", "make test"])
        .expect(0)
        .stdout
        .clone();
    let config_path = repo.path.join(".orchestrate.toml");
    assert_eq!(
        out,
        format!(
            "wrote {} (main branch: main)\n\
             created workflow main in INITIALIZING (refs/orchestrator/workflows/main)\n\
             hooks in {}\n  \
             commit-msg   installed (its own file)\n  \
             post-commit  installed (its own file)\n  \
             pre-push     installed (its own file)\n\
             installed the manual page: {} (`git orchestrate --help` opens it)\n\
             no master plan at docs/Plan_Doc/Active_Plan.md yet: write one (`## PR 1: <title>` per pull request), or have `git orchestrate init --plan-template` write a template there\n\
             next: commit .orchestrate.toml on main (git add .orchestrate.toml && git commit -m \"chore: configure git-orchestrate\"), then have your agent run `git orchestrate get-task`\n\
             WARNING: .orchestrate.toml is not committed on main: the gates are read from the working tree and are not protected (an agent could edit them); commit it on main\n",
            config_path.display(),
            repo.path.join(".git/hooks").display(),
            std::path::Path::new(crate::support::BIN)
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("share/man/man1/git-orchestrate.1")
                .display()
        )
    );
    let written = std::fs::read_to_string(&config_path).unwrap();
    assert!(written.contains("main_branch = \"main\""), "{written}");
    assert!(
        written.contains("[[preflight]]\nname = \"preflight\"\ncommand = \"make test\"\n"),
        "{written}"
    );
    let tip = repo.tip();
    assert_eq!(repo.status(), "INITIALIZING");

    // Again: nothing changes; flags that would change the file are reported as not applied.
    std::fs::write(&config_path, "# mine\nmain_branch = \"main\"\n").unwrap();
    let out = repo
        .run(&["init", "--preflight", "other"])
        .expect(0)
        .stdout
        .clone();
    assert!(out.starts_with(&format!(
        "kept {}\nnote: kept the existing .orchestrate.toml; --preflight not applied (edit the file instead)\nworkflow main exists",
        config_path.display()
    )), "{out}");
    assert_eq!(
        std::fs::read_to_string(&config_path).unwrap(),
        "# mine\nmain_branch = \"main\"\n"
    );
    assert_eq!(repo.tip(), tip);

    let json = repo.run(&["init", "--json", "--no-hooks"]).expect(0).json();
    assert_eq!(json["hooks"], serde_json::Value::Null);
    assert_eq!(json["created"], false);
    assert_eq!(json["config_written"], false);
    assert_eq!(json["state"], "INITIALIZING");
    assert_eq!(json["ref"], REF);
}

/// `init --plan-template` writes a master plan to edit where the configured one is missing,
/// keeps one that is there byte for byte, and never writes outside the tree or through a link.
#[test]
fn init_plan_template_writes_a_plan_to_edit_and_keeps_one_that_is_there() {
    let repo = TestRepo::with_config("");
    let out = repo.run(&["init", "--plan-template"]);
    out.expect(0);
    let plan_path = repo.path.join("docs/Plan_Doc/Active_Plan.md");
    let written = std::fs::read_to_string(&plan_path).unwrap();
    assert!(written.starts_with("# Master plan\n"), "{written}");
    let headings: Vec<&str> = written.lines().filter(|l| l.starts_with("## PR")).collect();
    assert_eq!(
        headings,
        [
            "## PR 1: feat: <the first thing to build>",
            "## PR 2: feat: <the next thing>"
        ]
    );
    assert!(
        out.stdout.contains(
            "wrote a master-plan template at docs/Plan_Doc/Active_Plan.md: replace its two PR headings with yours\n\
             next: edit docs/Plan_Doc/Active_Plan.md, commit it and .orchestrate.toml on main"
        ),
        "{}",
        out.stdout
    );
    // The template, committed, is the plan doctor and the agent read.
    repo.commit_all("chore: configure git-orchestrate");
    let doctor = repo.run(&["doctor", "--json"]).json();
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "master plan")
        .cloned()
        .unwrap();
    assert_eq!(check["level"], "ok", "{check}");

    // Edited, it is kept: init says nothing of a template and changes nothing.
    std::fs::write(&plan_path, "# mine\n## PR 1: feat: Mine\n").unwrap();
    let json = repo
        .run(&["init", "--plan-template", "--json"])
        .expect(0)
        .json();
    assert_eq!(
        json["master_plan"],
        serde_json::json!({"path": "docs/Plan_Doc/Active_Plan.md", "template_written": false, "present": true})
    );
    assert_eq!(
        std::fs::read_to_string(&plan_path).unwrap(),
        "# mine\n## PR 1: feat: Mine\n"
    );

    // A configured path outside the tree, or through a link, is refused and nothing is made.
    let outside = tempfile::tempdir().unwrap();
    for (plan, link, said, why) in [
        (
            "../escape.md",
            false,
            "error: invalid .orchestrate.toml (working tree): master_plan: \"../escape.md\" must be",
            "",
        ),
        (
            "linked/plan.md",
            true,
            "error: no master-plan template written to linked/plan.md: ",
            "linked is a symbolic link (never written through)",
        ),
    ] {
        let other = TestRepo::with_config(&format!(
            "main_branch = \"main\"\nmaster_plan = \"{plan}\"\n"
        ));
        if link {
            std::os::unix::fs::symlink(outside.path(), other.path.join("linked")).unwrap();
        }
        let out = other.run(&["init", "--plan-template"]);
        out.expect(2);
        assert!(out.stderr.starts_with(said), "{}", out.stderr);
        assert!(out.stderr.contains(why), "{}", out.stderr);
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn init_detects_master_and_records_it() {
    let repo = TestRepo::empty();
    repo.git(&["checkout", "--quiet", "-b", "master"]);
    repo.write("README", "x\n");
    repo.commit_all("first");
    repo.run(&["init"]).expect(0);
    assert_eq!(repo.state()["main_branch"], "master");
    assert!(
        std::fs::read_to_string(repo.path.join(".orchestrate.toml"))
            .unwrap()
            .contains("main_branch = \"master\"")
    );
    let out = repo.run(&["init", "--main-branch", "../bad"]);
    out.expect(2);
    assert!(
        out.stderr
            .starts_with("error: --main-branch \"../bad\" is not a valid branch name"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_test_that_changes_files_does_not_pass() {
    let (repo, counter) = counting_repo();
    repo.write("add.sh", "echo 5\n");
    // The command passes, and writes a file while it runs: what passed is no definite tree,
    // so the pass does not count (docs/integrity.md), and the gates are not asked.
    let out = repo.submit_test(
        "sh add.sh && echo written-during-the-test > during.txt",
        None,
    );
    out.expect(1);
    assert_eq!(
        out.stdout.lines().next().unwrap(),
        "FAILURE: `sh add.sh && echo written-during-the-test > during.txt` passed (exit 0), but files \
         changed while the test and preflight ran (during.txt): a pass counts only for the tree it ran \
         on; debugging attempt 1"
    );
    assert_eq!(runs(&counter), 0, "preflight did not run");
    assert_eq!(repo.status(), "DEBUGGING");
    assert!(repo.state().get("verified_tree").is_none());
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains("files changed while the test and preflight ran: during.txt"),
        "{brief}"
    );
    // Build output in .gitignore is no change: the same run passes.
    repo.write(".gitignore", "during.txt\n");
    repo.git(&["add", ".gitignore"]);
    repo.submit_test(
        "sh add.sh && echo written-during-the-test > during.txt",
        None,
    )
    .expect(0);
    assert_eq!(runs(&counter), 1);
    assert!(repo.state()["verified_tree"].is_string());
    let _ = std::fs::remove_file(&counter);
}

#[test]
fn a_gate_that_changes_files_refuses_the_checkpoint() {
    let repo = TestRepo::at_green_step();
    repo.write(
        ".orchestrate.toml",
        &format!(
            "{}\n[[preflight]]\nname = \"writer\"\ncommand = \"date > stamp.txt\"\n",
            crate::support::CONFIG
        ),
    );
    repo.git(&["stash", "--quiet"]);
    repo.git(&["checkout", "--quiet", "main"]);
    repo.git(&["stash", "pop", "--quiet"]);
    repo.commit_all("a gate that writes");
    repo.git(&["checkout", "--quiet", "feat/add-numbers"]);
    // main's new gates judge this PR once a human has repinned it.
    repo.human(&["repin"]).expect(0);
    repo.git(&["merge", "--quiet", "--no-edit", "main"]);
    let head = repo.git(&["rev-parse", "HEAD"]);
    repo.write("wip.txt", "work\n");
    let out = repo.run(&["checkpoint", "-m", "wip"]);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: checkpoint refused: files changed while preflight ran, so it did not verify what would be \
         committed (state EXECUTING_TDD); changed: stamp.txt\n\
         hint: Run `git orchestrate checkpoint` again once nothing else is writing to the working tree; it \
         verifies and commits the tree as it is then. Build output belongs in .gitignore.\n"
    );
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]),
        head,
        "nothing was committed"
    );
}

#[test]
fn a_commit_hook_that_rewrites_files_leaves_the_checkpoint_unrecorded() {
    let repo = TestRepo::at_green_step();
    repo.submit_test("true", None).expect(0);
    let hook = repo.path.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho formatted >> run_tests.sh\ngit add run_tests.sh\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let tip = repo.tip();
    let out = repo.run(&["checkpoint"]);
    out.expect(4);
    let short = repo.git(&["rev-parse", "--short=12", "HEAD"]);
    assert_eq!(
        out.stderr,
        format!(
            "error: checkpoint refused: commit {} holds a tree other than the one preflight verified (a commit \
             hook changed files?); it stays, but is not recorded as a checkpoint (state EXECUTING_TDD); \
             changed: run_tests.sh\n\
             hint: Run `git orchestrate checkpoint` again once nothing else is writing to the working tree; it \
             verifies and commits the tree as it is then. Build output belongs in .gitignore.\n",
            short.trim()
        )
    );
    assert_eq!(repo.tip(), tip, "the workflow did not record it");
    assert_eq!(repo.state()["pending"]["kind"], "checkpoint");
}

#[test]
fn tests_run_on_the_pr_branch_only() {
    let repo = TestRepo::at_green_step();
    repo.git(&["checkout", "--quiet", "main"]);
    let tip = repo.tip();
    let out = repo.submit_test("true", None);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: HEAD is on main, not on the PR branch feat/add-numbers (state EXECUTING_TDD); the test \
         verifies the work on the PR branch\n\
         hint: Run `git checkout feat/add-numbers`, then `git orchestrate submit-work` again.\n"
    );
    assert_eq!(repo.tip(), tip);
}

#[test]
fn old_checkpoint_commits_on_main_are_not_mistaken_for_this_prs() {
    let repo = TestRepo::new();
    repo.write("old.txt", "from an earlier life\n");
    repo.commit_all("checkpoint: something long ago");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    // main moves on after the branch left it.
    repo.git(&["checkout", "--quiet", "main"]);
    repo.write("later.txt", "x\n");
    repo.commit_all("later on main");
    repo.git(&["checkout", "--quiet", "feat/add-numbers"]);
    repo.submit_test(RED, Some("FAIL")).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("true", None).expect(0);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(!brief.contains("is marked as a checkpoint"), "{brief}");
    assert!(brief.contains("Make a safety checkpoint commit"), "{brief}");
}

#[test]
fn without_gates_no_tree_counts_as_verified_and_a_hand_made_checkpoint_is_recorded() {
    let repo = TestRepo::with_config("master_plan = \"docs/plan.md\"\n");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    let out = repo.submit_test("sh add.sh", None);
    out.expect(0);
    assert!(
        out.stdout.contains("preflight: none configured"),
        "{}",
        out.stdout
    );
    let state = repo.state();
    assert!(
        state.get("verified_tree").is_none(),
        "nothing verified a tree: {state}"
    );
    assert!(state["pending"].get("verified_tree").is_none());
    repo.commit_all("checkpoint: add");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(&format!(
            "recorded checkpoint {} (checkpoint: add).",
            &head[..12]
        )),
        "{brief}"
    );
    assert_eq!(repo.state()["last_commit_hash"], head.as_str());
}

/// The agent clients' settings `init --agent` wrote (new, or changed since main) are the
/// user's: a checkpoint leaves them out, says so, and the hooks and the verified tree do
/// too; at CREATING_BRANCH, a changed one is named with the command that commits it on main.
#[test]
fn a_checkpoint_leaves_the_agent_clients_settings_out() {
    let repo = TestRepo::at_green_step();
    for client in ["claude", "codex", "gemini"] {
        repo.run(&["init", "--agent", client]).expect(0);
    }
    repo.submit_test(RED, Some("PASS")).expect(0);
    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert!(
        out.contains(
            "left out: .claude/settings.json, .codex/config.toml, .codex/hooks.json, \
             .gemini/settings.json, .mcp.json (agent settings of `init --agent`: commit them on \
             the main branch, not in a PR)\n"
        ),
        "{out}"
    );
    let committed = repo.git(&["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(committed.trim(), "add.sh", "{committed}");
    // Left as they were: untracked, in the working tree.
    let untracked = repo.git(&["ls-files", "--others", "--exclude-standard"]);
    for file in [
        ".claude/settings.json",
        ".mcp.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
    ] {
        assert!(untracked.lines().any(|l| l == file), "{file}: {untracked}");
    }
    let json = repo.run(&["--json", "status"]).expect(0).json();
    assert_eq!(json["state"], "EXECUTING_TDD", "{json}");

    // A human's `git commit` of the same kind passes the commit-msg hook's check too.
    let repo = TestRepo::at_green_step();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.submit_test(RED, Some("PASS")).expect(0);
    repo.git(&["add", "add.sh"]);
    repo.git(&["commit", "--quiet", "-m", "checkpoint: add works"]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]).trim(),
        "checkpoint: add works"
    );
}

#[test]
fn a_changed_settings_file_at_creating_branch_is_named_with_the_command() {
    let repo = TestRepo::new();
    repo.run(&["init", "--agent", "claude"]).expect(0);
    repo.git(&["add", ".claude/settings.json", ".mcp.json"]);
    repo.git(&["commit", "--quiet", "-m", "wire claude"]);
    // The user changes a committed one (another workflow's wiring, say).
    repo.run(&["--workflow", "other", "init", "--agent", "claude"])
        .expect(0);
    repo.submit_plan(PLAN).expect(0);
    let out = repo.run(&["get-task"]).expect(4).stdout.clone();
    assert!(
        out.contains(
            "Among them are the agent settings of `git orchestrate init --agent` \
             (.claude/settings.json, .mcp.json): commit them on the main branch, e.g. `git add \
             .claude/settings.json .mcp.json && git commit -m \"Wire the agent clients to \
             git-orchestrate\"`."
        ),
        "{out}"
    );
}
