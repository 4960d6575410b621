//! `git orchestrate worktree add|list|remove` (docs/worktrees.md): one workflow per
//! linked worktree, selected there by the worktree's own config for commands and hooks alike.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use pretty_assertions::assert_eq;

use crate::support::{Run, TestRepo};

/// Runs git in `dir` with the repository's environment, asserting success.
#[track_caller]
fn git_in(repo: &TestRepo, dir: &Path, args: &[&str]) -> String {
    let out = repo
        .command("git", args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn status_workflow(run: &Run) -> String {
    run.json()["workflow"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A repository set up with `init` (hooks installed), and a directory beside it for worktrees.
fn initialised() -> (TestRepo, tempfile::TempDir) {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    (repo, tempfile::tempdir().expect("temp dir"))
}

fn place(beside: &tempfile::TempDir, name: &str) -> PathBuf {
    beside.path().canonicalize().expect("canonical").join(name)
}

fn worktree_count(repo: &TestRepo) -> usize {
    repo.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

fn entry<'a>(list: &'a serde_json::Value, path: &Path) -> &'a serde_json::Value {
    list["worktrees"]
        .as_array()
        .expect("worktrees")
        .iter()
        .find(|w| w["path"] == path.display().to_string())
        .unwrap_or_else(|| panic!("{} not listed: {list}", path.display()))
}

#[test]
fn worktree_add_selects_its_workflow_for_commands_and_hooks_run_there() {
    let (repo, beside) = initialised();
    let wt = place(&beside, "wt1");
    let path = wt.display().to_string();
    let out = repo.run(&["worktree", "add", "w1", &path]);
    out.expect(0)
        .says(&format!("worktree  {path}\n"))
        .says("workflow  w1 (INITIALIZING), recorded in that worktree's own config")
        .says(&format!("next      cd {path} && git orchestrate get-task"));
    assert_eq!(
        git_in(
            &repo,
            &wt,
            &["config", "--worktree", "--get", "orchestrate.workflow"]
        ),
        "w1"
    );
    assert_eq!(
        repo.git(&["config", "--get", "extensions.worktreeConfig"])
            .trim(),
        "true"
    );
    assert_eq!(
        git_in(&repo, &wt, &["rev-parse", "HEAD"]),
        repo.git(&["rev-parse", "main"]).trim(),
        "detached at main's tip"
    );
    let status = repo.run_in(&wt, &["status", "--json"]);
    assert_eq!(status_workflow(status.expect(0)), "w1");
    assert_eq!(status.json()["state"], "INITIALIZING");
    assert_eq!(status.json()["exists"], true, "created by worktree add");
    assert_eq!(status_workflow(&repo.run(&["status", "--json"])), "main");

    // A git hook run there acts on w1: the checkpoint's note names it.
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    git_in(&repo, &wt, &["add", "a.txt"]);
    let commit = repo
        .command("git", ["commit", "-m", "checkpoint: add a"])
        .current_dir(&wt)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let commit = Run::from(commit);
    commit
        .expect(0)
        .warns("checkpoint verified: preflight passed");
    let note = git_in(&repo, &wt, &["notes", "--ref=orchestrator", "show", "HEAD"]);
    let note: serde_json::Value = serde_json::from_str(&note).expect("a JSON note");
    assert_eq!(note["workflow"], "w1", "{note}");

    let json = repo.run(&[
        "worktree",
        "add",
        "w2",
        &place(&beside, "wt2").display().to_string(),
        "--json",
    ]);
    let json = json.expect(0).json();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["workflow"], "w2");
    assert_eq!(json["state"], "INITIALIZING");
    assert_eq!(json["default_path"], false);
    assert_eq!(json["enabled_worktree_config"], false, "on already");
}

#[test]
fn workflow_precedence_is_flag_then_variable_then_worktree_config_then_main() {
    let (repo, beside) = initialised();
    let wt = place(&beside, "wt1");
    repo.run(&["worktree", "add", "w1", &wt.display().to_string()])
        .expect(0);
    let status = |dir: &Path, flag: Option<&str>, env: Option<&str>| {
        let mut args = vec!["status", "--json"];
        if let Some(flag) = flag {
            args.extend(["--workflow", flag]);
        }
        let mut cmd = repo.command(crate::support::BIN, &args);
        cmd.current_dir(dir).stdin(Stdio::null());
        if let Some(env) = env {
            cmd.env("GIT_ORCHESTRATE_WORKFLOW", env);
        }
        status_workflow(Run::from(cmd.output().unwrap()).expect(0))
    };
    assert_eq!(status(&wt, Some("flag"), Some("var")), "flag");
    assert_eq!(status(&wt, None, Some("var")), "var");
    assert_eq!(status(&wt, None, None), "w1");
    assert_eq!(status(&repo.path, None, None), "main");
    assert_eq!(
        status(&wt.join("docs"), None, None),
        "w1",
        "from a subdirectory too"
    );
}

#[test]
fn worktree_add_defaults_to_a_sibling_named_after_the_repository() {
    let (repo, _beside) = initialised();
    let expected = repo.path.parent().unwrap().join(format!(
        "{}-w1",
        repo.path.file_name().unwrap().to_string_lossy()
    ));
    /// Takes the sibling away whatever the test does.
    struct Sibling(PathBuf);
    impl Drop for Sibling {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _sibling = Sibling(expected.clone());
    repo.run(&["worktree", "add", "w1"])
        .expect(0)
        .says(&format!("worktree  {} (the default", expected.display()));
    assert!(expected.join(".orchestrate.toml").is_file());
    repo.run(&["worktree", "remove", "w1"]).expect(0);
    assert!(!expected.exists());
}

#[test]
fn worktree_list_shows_each_workflow_state_and_dirty_and_unpushed_work() {
    let (repo, beside) = initialised();
    let wt = place(&beside, "wt1");
    repo.run(&["worktree", "add", "w1", &wt.display().to_string()])
        .expect(0);
    let list = repo.run(&["worktree", "list"]);
    list.expect(0)
        .says(&format!("{} (primary, here)\n  branch    main\n  workflow  main (the default), INITIALIZING\n  changes   none\n  unpushed  nothing (no remote)\n", repo.path.display()))
        .says("  workflow  w1 (its own config), INITIALIZING\n");

    let (_remote_dir, _remote) = repo.share();
    git_in(&repo, &wt, &["checkout", "--quiet", "-b", "feat/x"]);
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    git_in(&repo, &wt, &["add", "b.txt"]);
    git_in(&repo, &wt, &["commit", "--quiet", "--no-verify", "-m", "b"]);
    std::fs::write(wt.join("u.txt"), "u\n").unwrap();
    let list = repo.run(&["worktree", "list", "--json"]);
    let json = list.expect(0).json();
    let w1 = entry(&json, &wt);
    assert_eq!(w1["workflow"], "w1");
    assert_eq!(w1["workflow_from"], "worktree");
    assert_eq!(w1["branch"], "feat/x");
    assert_eq!(w1["dirty"], true);
    assert_eq!(w1["uncommitted"], serde_json::json!(["u.txt"]));
    assert_eq!(w1["unpushed"], true);
    assert_eq!(
        w1["unpushed_commits"],
        serde_json::json!({"kind": "commits", "count": 1, "upstream": null})
    );
    let primary = entry(&json, &repo.path);
    assert_eq!(
        (primary["primary"].clone(), primary["current"].clone()),
        (true.into(), true.into())
    );
    assert_eq!(primary["unpushed"], false, "main is pushed");
    repo.run(&["worktree", "list"])
        .expect(0)
        .says("  changes   1 file uncommitted: u.txt\n  unpushed  1 commit, not on any remote-tracking branch\n");
}

#[test]
fn worktree_remove_refuses_what_would_be_lost_and_what_is_not_its_own() {
    let (repo, beside) = initialised();
    let (_remote_dir, _remote) = repo.share();
    let wt = place(&beside, "wt1");
    repo.run(&["worktree", "add", "w1", &wt.display().to_string()])
        .expect(0);

    repo.run(&["worktree", "remove", "nobody"])
        .expect(4)
        .warns("no worktree of this repository records workflow nobody; nothing was removed");
    repo.run(&["worktree", "remove", "main"])
        .expect(4)
        .warns("no worktree of this repository records workflow main");
    repo.run_in(&wt, &["worktree", "remove", "w1"])
        .expect(4)
        .warns("is the one this command runs in");

    std::fs::write(wt.join("u.txt"), "u\n").unwrap();
    std::fs::write(wt.join("run_tests.sh"), "changed\n").unwrap();
    repo.run(&["worktree", "remove", "w1"])
        .expect(4)
        .warns("has uncommitted changes (2 files): run_tests.sh, u.txt; nothing was removed");
    git_in(&repo, &wt, &["checkout", "--quiet", "-b", "feat/x"]);
    git_in(&repo, &wt, &["add", "--all"]);
    git_in(
        &repo,
        &wt,
        &["commit", "--quiet", "--no-verify", "-m", "work"],
    );
    git_in(
        &repo,
        &wt,
        &["push", "--quiet", "--no-verify", "-u", "origin", "feat/x"],
    );
    git_in(
        &repo,
        &wt,
        &[
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty",
            "-m",
            "more",
        ],
    );
    let refused = repo.run(&["worktree", "remove", "w1", "--json"]);
    let error = refused.expect(4).json();
    assert_eq!(error["error"]["kind"], "wrong_state", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("has 1 commit not pushed: on feat/x, not on its upstream origin/feat/x"),
        "{message}"
    );
    assert!(wt.is_dir(), "nothing was removed");

    git_in(&repo, &wt, &["push", "--quiet", "--no-verify"]);
    let removed = repo.run(&["worktree", "remove", "w1"]);
    removed
        .expect(0)
        .says(&format!(
            "removed   worktree {} (workflow w1)",
            wt.display()
        ))
        .says("kept      refs/orchestrator/workflows/w1");
    assert!(!wt.exists());
    assert_eq!(worktree_count(&repo), 1);
    repo.git(&["rev-parse", "--verify", "refs/orchestrator/workflows/w1"]);
}

#[test]
fn hostile_names_and_paths_create_nothing() {
    let (repo, beside) = initialised();
    let refs = || repo.git(&["for-each-ref", "refs/orchestrator/workflows/"]);
    let before = refs();
    let fresh = place(&beside, "fresh").display().to_string();
    for name in [
        "../x", "-f", "a b", "a\u{1}b", "x/y", ".hidden", "x.lock", "",
    ] {
        repo.run(&["worktree", "add", name, &fresh])
            .expect(2)
            .warns("cannot name a workflow; nothing was created");
        repo.run(&["worktree", "remove", name])
            .expect(2)
            .warns("cannot name a workflow");
    }
    let file = place(&beside, "file");
    std::fs::write(&file, "x").unwrap();
    let full = place(&beside, "full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), "x").unwrap();
    for (path, says) in [
        (file.display().to_string(), "exists and is not a directory"),
        (full.display().to_string(), "exists and is not empty"),
        ("docs/inside".to_string(), "is inside the worktree"),
        (
            format!("{}/a\nb", beside.path().display()),
            "has a control character",
        ),
    ] {
        repo.run(&["worktree", "add", "w1", &path])
            .expect(2)
            .warns(says)
            .warns("nothing was created");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert!(!repo.path.join("docs/inside").exists());
    repo.run(&["worktree", "add", "main", &fresh])
        .expect(4)
        .warns("workflow main exists already (state INITIALIZING); nothing was created");
    assert_eq!(refs(), before, "no workflow was created");
    assert_eq!(worktree_count(&repo), 1, "no worktree was created");
    assert!(!Path::new(&fresh).exists());

    repo.run(&["worktree", "add", "w1", &fresh]).expect(0);
    // Another worktree that records w2 by hand: the name is taken even without its ref.
    git_in(
        &repo,
        Path::new(&fresh),
        &["config", "--worktree", "orchestrate.workflow", "w2"],
    );
    repo.run(&[
        "worktree",
        "add",
        "w2",
        &place(&beside, "other").display().to_string(),
    ])
    .expect(4)
    .warns(&format!("the worktree {fresh} records workflow w2 already"));
}

/// The agent's side acts on the worktree's workflow too: `run` passes it to the agent, the
/// agent hooks read it from the worktree they are run for, and `init --agent` there wires
/// the client without naming it (the worktree's config selects it for every process started
/// there, and a name in the client's files would follow them into other worktrees).
#[test]
fn run_agent_hooks_and_init_agent_in_a_worktree_act_on_its_workflow() {
    let (repo, beside) = initialised();
    let wt = place(&beside, "wt1");
    repo.run(&["worktree", "add", "w1", &wt.display().to_string()])
        .expect(0);
    let seen = place(&beside, "seen");
    let script = format!(
        "echo \"$GIT_ORCHESTRATE_WORKFLOW\" > '{}'; git orchestrate status --json >> '{}'",
        seen.display(),
        seen.display()
    );
    repo.run_in(&wt, &["run", "--max-turns", "1", "--", "sh", "-c", &script])
        .expect(10)
        .says("turns kept in refs/orchestrator/runs/w1");
    let seen = std::fs::read_to_string(&seen).unwrap();
    let (variable, status) = seen.split_once('\n').unwrap();
    assert_eq!(variable, "w1");
    let status: serde_json::Value = serde_json::from_str(status).unwrap();
    assert_eq!(status["workflow"], "w1");

    let input = serde_json::json!({"session_id": "s", "cwd": wt.display().to_string()}).to_string();
    let start = repo.run_with_stdin(&["agent-hook", "claude", "session-start"], &input);
    start
        .expect(0)
        .says("git-orchestrate: workflow w1 is in state INITIALIZING");

    repo.run_in(&wt, &["init", "--agent", "claude"]).expect(0);
    let settings = std::fs::read_to_string(wt.join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("git-orchestrate agent-hook claude"),
        "{settings}"
    );
    assert!(!settings.contains("--workflow"), "{settings}");
    // Named outright, the workflow is still written into the client's files.
    repo.run_in(&wt, &["--workflow", "w1", "init", "--agent", "claude"])
        .expect(0);
    let settings = std::fs::read_to_string(wt.join(".claude/settings.json")).unwrap();
    assert!(settings.contains("--workflow w1 agent-hook"), "{settings}");
}
