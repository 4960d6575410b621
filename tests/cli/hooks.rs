//! The git hooks (docs/architecture.md, "Hooks and notes") with real `git commit` and `git push`: the installed
//! shims call the binary built for these tests, which is first on PATH.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use crate::support::{PLAN, RED, TestRepo, counter_file, counting_config, one_task_plan, runs};

/// A repository whose one gate counts its runs in a file outside the working tree and
/// fails while the file `fail` exists; hooks installed.
fn hooked_repo(extra_config: &str) -> (TestRepo, PathBuf) {
    let repo = TestRepo::with_config("");
    let counter = counter_file(&repo, "hook-runs");
    repo.write(
        ".orchestrate.toml",
        &counting_config(&counter, extra_config),
    );
    repo.commit_all("config");
    repo.run(&["hooks", "install"]).expect(0);
    // `doctor` asks the login shell where git-orchestrate is; a system profile may set PATH
    // whole, so the user's own puts this build's directory first, as an installed user's does.
    login_profile(&repo, &format!("PATH={}:\"$PATH\"", bin_dir().display()));
    (repo, counter)
}

fn bin_dir() -> PathBuf {
    Path::new(crate::support::BIN)
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `~/.profile` in the repository's HOME: what `sh -l` and `bash -l` read last.
fn login_profile(repo: &TestRepo, path_line: &str) {
    std::fs::write(
        repo.home().join(".profile"),
        format!("echo 'hello from .profile'\n{path_line}\nexport PATH\n"),
    )
    .unwrap();
}

fn head(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "HEAD"]).trim().to_string()
}

/// The orchestrator's note on `rev`, parsed, one value per line.
fn notes(repo: &TestRepo, rev: &str) -> Vec<serde_json::Value> {
    let (ok, out) = repo.git_try(&["notes", "--ref=orchestrator", "show", rev]);
    if !ok {
        return Vec::new();
    }
    out.lines()
        .map(|l| serde_json::from_str(l).expect("a note line is JSON"))
        .collect()
}

#[test]
fn a_human_checkpoint_commit_is_verified_refused_when_failing_and_noted_when_passing() {
    let (repo, counter) = hooked_repo("");
    repo.write("a.txt", "a\n");
    repo.write("fail", "");
    repo.git(&["add", "--all"]);
    let before = head(&repo);
    let out = repo.git_run(&["commit", "-m", "checkpoint: add a"]);
    assert_ne!(out.code, 0, "refused");
    assert!(
        out.stderr.contains(
            "fail exists\n----- END OUTPUT 49aeed80ca019506 -----\n\
             error: checkpoint commit refused: preflight gate `counted` failed (exit 1); nothing was committed."
        ),
        "{}",
        out.stderr
    );
    assert_eq!(head(&repo), before, "nothing was committed");
    assert_eq!(runs(&counter), 1);

    repo.git(&["rm", "--quiet", "--cached", "fail"]);
    std::fs::remove_file(repo.path.join("fail")).unwrap();
    let out = repo.git_run(&["commit", "-m", "checkpoint: add a"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("git-orchestrate: checkpoint verified: preflight passed (1 gate)"),
        "{}",
        out.stderr
    );
    assert_eq!(runs(&counter), 2);
    let note = notes(&repo, "HEAD");
    assert_eq!(note.len(), 1, "{note:?}");
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_string();
    assert_eq!(note[0]["v"], 1);
    assert_eq!(note[0]["kind"], "checkpoint");
    assert_eq!(note[0]["workflow"], "main");
    assert_eq!(note[0]["tree"], tree.as_str());
    assert_eq!(note[0]["preflight"]["passed"], true);
    assert_eq!(note[0]["preflight"]["cached"], false);
    assert_eq!(note[0]["preflight"]["gates"][0]["name"], "counted");
    assert_eq!(note[0]["preflight"]["gates"][0]["exit"], 0);
    assert!(
        !repo.path.join(".git/orchestrator/checkpoint-note").exists(),
        "the hand-over file is gone"
    );
}

#[test]
fn ordinary_commits_never_run_preflight_nor_get_a_note() {
    let (repo, counter) = hooked_repo("");
    let tip = repo.tip();
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    repo.git_run(&["commit", "-m", "feat: a"]).expect(0);
    repo.write("a.txt", "b\n");
    repo.git_run(&[
        "commit",
        "-a",
        "-m",
        "fix: a, mentioning a checkpoint in passing",
    ])
    .expect(0);
    repo.git_run(&["commit", "--allow-empty", "-m", "chore: nothing"])
        .expect(0);
    assert_eq!(runs(&counter), 0, "no preflight for ordinary commits");
    assert_eq!(notes(&repo, "HEAD"), Vec::<serde_json::Value>::new());
    assert!(
        !repo
            .git_try(&[
                "rev-parse",
                "--verify",
                "--quiet",
                "refs/notes/orchestrator"
            ])
            .0,
        "no note was written at all"
    );
    assert_eq!(repo.tip(), tip, "no state was written");
}

#[test]
fn changes_the_commit_leaves_out_refuse_a_checkpoint() {
    let (repo, counter) = hooked_repo("");
    repo.write("a.txt", "a\n");
    repo.commit_all("feat: a");
    repo.write("a.txt", "staged\n");
    repo.git(&["add", "a.txt"]);
    repo.write("a.txt", "staged, then changed again\n");
    repo.write("new.txt", "never added\n");
    let out = repo.git_run(&["commit", "-m", "checkpoint: half of it"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(
            "error: checkpoint commit refused: the working tree holds changes this commit does not \
             (a.txt, new.txt).\nA checkpoint is verified on exactly what it commits: stage them (git add -A) \
             or stash them (git stash -u), then commit again."
        ),
        "{}",
        out.stderr
    );
    assert_eq!(runs(&counter), 0, "nothing was verified");
    // `commit -a` stages the tracked change; the untracked file still stands in the way.
    let out = repo.git_run(&["commit", "-a", "-m", "checkpoint: with -a"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("(new.txt)"), "{}", out.stderr);
    std::fs::remove_file(repo.path.join("new.txt")).unwrap();
    repo.git_run(&["commit", "-a", "-m", "checkpoint: with -a"])
        .expect(0);
    assert_eq!(runs(&counter), 1);
    assert_eq!(notes(&repo, "HEAD").len(), 1);
}

#[test]
fn a_checkpoint_after_a_passing_submit_runs_no_second_preflight() {
    let (repo, counter) = hooked_repo("");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    assert_eq!(runs(&counter), 1, "the submit ran preflight");

    // By hand: the hook finds the submit's result for exactly this tree.
    repo.git(&["add", "--all"]);
    let out = repo.git_run(&["commit", "-m", "checkpoint: 1.2 add"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("preflight passed on exactly this tree before; not run again"),
        "{}",
        out.stderr
    );
    assert_eq!(runs(&counter), 1, "no second run");
    let note = notes(&repo, "HEAD");
    assert_eq!(note[0]["preflight"]["cached"], true);
    assert_eq!(note[0]["step"], "1.2");
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(brief.contains("recorded checkpoint"), "{brief}");

    // With the command, after a change: one run, by the command; the hook reuses it.
    repo.write("add.sh", "# add\necho 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    assert_eq!(runs(&counter), 2);
    repo.write("notes.txt", "changed after the submit\n");
    let out = repo.run(&["checkpoint"]).expect(0).stdout.clone();
    assert!(out.contains("preflight: counted ok"), "{out}");
    assert_eq!(
        runs(&counter),
        3,
        "the command ran it once, the hook not again"
    );
    let note = notes(&repo, "HEAD");
    assert_eq!(note.len(), 1, "one record, not one per writer: {note:?}");
    assert_eq!(
        note[0]["tree"],
        repo.git(&["rev-parse", "HEAD^{tree}"]).trim()
    );
}

#[test]
fn checkpoint_notes_itself_without_hooks() {
    let repo = TestRepo::at_green_step();
    repo.submit_test("true", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let note = notes(&repo, "HEAD");
    assert_eq!(note.len(), 1, "{note:?}");
    assert_eq!(note[0]["preflight"]["cached"], true);
    assert_eq!(note[0]["step"], "1.2");
    repo.run(&["verify"]).expect(0);
}

fn write_hook(dir: &Path, name: &str, text: &str, mode: u32) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn file_and_mode(path: &Path) -> (Vec<u8>, u32) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777,
    )
}

#[test]
fn the_users_hooks_keep_running_and_come_back_byte_for_byte() {
    let repo = TestRepo::new();
    let hooks = repo.path.join(".git/hooks");
    let ran = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("user-hooks-{:p}", &repo));
    // A shell hook gets our block; a hook in another language is chained.
    let shell = format!(
        "#!/bin/bash\n# the user's own\necho \"commit-msg ran\" >> '{}'\nexit 0\n",
        ran.display()
    );
    write_hook(&hooks, "commit-msg", &shell, 0o750);
    let awk = String::from_utf8(
        repo.command("sh", ["-c", "command -v awk"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let other = format!(
        "#!{} -f\nBEGIN {{ print \"post-commit ran\" >> \"{}\"; exit 0 }}\n",
        awk.trim(),
        ran.display()
    );
    write_hook(&hooks, "post-commit", &other, 0o755);
    let before = [
        file_and_mode(&hooks.join("commit-msg")),
        file_and_mode(&hooks.join("post-commit")),
    ];

    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert_eq!(
        out,
        format!(
            "hooks in {}\n  commit-msg   installed (a block in your hook)\n  \
             post-commit  installed (chained: your hook runs after it)\n  pre-push     installed (its own file)\n",
            hooks.display()
        )
    );
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    repo.git_run(&["commit", "-m", "checkpoint: a"]).expect(0);
    assert_eq!(
        std::fs::read_to_string(&ran).unwrap(),
        "commit-msg ran\npost-commit ran\n",
        "both of the user's hooks still run"
    );
    assert_eq!(notes(&repo, "HEAD").len(), 1, "and ours too");
    let again = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert!(again.contains("commit-msg   already installed"), "{again}");

    let out = repo.run(&["hooks", "uninstall"]).expect(0).stdout.clone();
    assert!(
        out.contains("commit-msg   removed (was a block in your hook)"),
        "{out}"
    );
    assert_eq!(
        [
            file_and_mode(&hooks.join("commit-msg")),
            file_and_mode(&hooks.join("post-commit")),
        ],
        before,
        "restored byte for byte, mode included"
    );
    assert!(!hooks.join("pre-push").exists(), "our own file is gone");
    assert!(!hooks.join("post-commit.git-orchestrate-original").exists());
}

#[test]
fn core_hooks_path_and_linked_worktrees_are_honoured() {
    let (repo, counter) = hooked_repo("");
    repo.run(&["hooks", "uninstall"]).expect(0);
    repo.git(&["config", "core.hooksPath", "shared-hooks"]);
    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    let dir = repo.path.join("shared-hooks");
    assert!(
        out.starts_with(&format!(
            "hooks in {} (core.hooksPath = shared-hooks)\n",
            dir.display()
        )),
        "{out}"
    );
    assert!(dir.join("commit-msg").exists());
    repo.write("fail", "");
    repo.write(".gitignore", "shared-hooks/\n");
    repo.git(&["add", "--all"]);
    assert_ne!(repo.git_run(&["commit", "-m", "checkpoint: x"]).code, 0);
    repo.git(&["rm", "--quiet", "--cached", "fail"]);
    std::fs::remove_file(repo.path.join("fail")).unwrap();
    repo.git_run(&["commit", "-m", "checkpoint: x"]).expect(0);
    assert_eq!(notes(&repo, "HEAD").len(), 1);

    // A linked worktree shares the repository's hooks directory (.git/hooks, here).
    repo.git(&["config", "--unset", "core.hooksPath"]);
    repo.run(&["hooks", "install"]).expect(0);
    let worktree = repo.dir().parent().unwrap().join(format!("wt-{:p}", &repo));
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "-b",
        "side",
        worktree.to_str().unwrap(),
    ]);
    let run_in = |args: &[&str]| {
        let out = repo
            .command("git", args)
            .current_dir(&worktree)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    std::fs::write(worktree.join("fail"), "").unwrap();
    run_in(&["add", "--all"]);
    let (code, stderr) = run_in(&["commit", "-m", "checkpoint: in a worktree"]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("preflight gate `counted` failed"),
        "{stderr}"
    );
    run_in(&["rm", "--quiet", "--cached", "fail"]);
    std::fs::remove_file(worktree.join("fail")).unwrap();
    std::fs::write(worktree.join("w.txt"), "w\n").unwrap();
    run_in(&["add", "--all"]);
    let (code, stderr) = run_in(&["commit", "-m", "checkpoint: in a worktree"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        notes(&repo, "side").len(),
        1,
        "noted, and visible from the main worktree"
    );
    assert!(runs(&counter) >= 4);
}

#[test]
fn verify_finds_a_checkpoint_made_without_the_hook() {
    let (repo, _) = hooked_repo("");
    repo.git(&["checkout", "--quiet", "-b", "work"]);
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    repo.git_run(&["commit", "-m", "checkpoint: verified"])
        .expect(0);
    repo.write("b.txt", "b\n");
    repo.git(&["add", "b.txt"]);
    repo.git_run(&["commit", "--no-verify", "-m", "checkpoint: sneaked past"])
        .expect(0);
    repo.git_run(&["commit", "--allow-empty", "-m", "docs: ordinary"])
        .expect(0);
    let sneaky = repo.git(&["rev-parse", "HEAD~1"]).trim().to_string();

    let out = repo.run(&["verify"]);
    out.expect(1);
    assert!(
        out.stdout
            .starts_with("2 checkpoint commits in refs/heads/main..HEAD (3 commits looked at)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "  MISSING  {} checkpoint: sneaked past\n           no note: committed without the commit-msg hook (--no-verify, or hooks not installed)\n",
            &sneaky[..12]
        )),
        "{}",
        out.stdout
    );
    // Made outside any workflow, its note is only the hook's word: no chain records the tree.
    assert!(out.stdout.contains("  UNAUTHENTICATED "), "{}", out.stdout);
    let json = repo
        .run(&["verify", "--json", "main..HEAD"])
        .expect(1)
        .json();
    assert_eq!(json["failures"], 2);
    assert_eq!(json["checkpoints"][0]["status"], "missing");
    assert_eq!(json["checkpoints"][1]["status"], "unauthenticated");
    repo.run(&["verify", "HEAD~1..HEAD"]).expect(0);
    let out = repo.run(&["verify", "no-such-branch..HEAD"]);
    out.expect(2);
    assert!(
        out.stderr
            .starts_with("error: git cannot list the commits of no-such-branch..HEAD"),
        "{}",
        out.stderr
    );
}

#[test]
fn pre_push_warns_or_refuses_unverified_checkpoints() {
    let (repo, _) = hooked_repo("[hooks]\npre_push = \"enforce\"");
    let remote = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("remote-{:p}.git", &repo));
    repo.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    let out = repo.git_run(&["push", "--quiet", "origin", "main"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // A checkpoint made by hand on a workflow's PR branch: the hook runs the gates and the
    // workflow's chain records the pass, which is what makes its note believed.
    repo.submit_plan(&one_task_plan("feat: Work", "a.txt"))
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    let branch = "feat/work";
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    repo.git_run(&["commit", "-m", "checkpoint: verified"])
        .expect(0);
    repo.git_run(&["push", "--quiet", "origin", branch])
        .expect(0);

    repo.write("b.txt", "b\n");
    repo.git(&["add", "b.txt"]);
    repo.git_run(&["commit", "--no-verify", "-m", "checkpoint: sneaked past"])
        .expect(0);
    let out = repo.git_run(&["push", "origin", branch]);
    assert_ne!(out.code, 0, "enforce refuses the push");
    assert!(
        out.stderr
            .contains("git-orchestrate: 1 checkpoint commit without a passing note"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("checkpoint: sneaked past"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("error: push refused ([hooks] pre_push = \"enforce\")"),
        "{}",
        out.stderr
    );
    let (_, remote_work) = repo.git_try(&["ls-remote", "origin", &format!("refs/heads/{branch}")]);
    assert!(
        !remote_work.starts_with(repo.git(&["rev-parse", "HEAD"]).trim()),
        "the remote did not get it"
    );

    // warn (the default) pushes, and says so. The PR is verified under main's gates as pinned:
    // a human changes them on main and repins.
    repo.git(&["stash", "--include-untracked", "--quiet"]);
    repo.git(&["checkout", "--quiet", "main"]);
    let config = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).unwrap();
    repo.write(".orchestrate.toml", &config.replace("enforce", "warn"));
    repo.commit_all("chore: warn only");
    repo.human(&["repin"]).expect(0);
    repo.git(&["checkout", "--quiet", branch]);
    let out = repo.git_run(&["push", "origin", branch]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("pushing anyway ([hooks] pre_push = \"warn\")"),
        "{}",
        out.stderr
    );
}

#[test]
fn hook_managers_are_detected_and_their_files_are_left_alone() {
    // husky, found by core.hooksPath: our lines go into its scripts, never into .husky/_.
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", ".husky/_"]);
    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert!(
        out.contains("found husky (core.hooksPath is .husky/_): git-orchestrate's commit-msg, post-commit and pre-push go into its configuration"),
        "{out}"
    );
    assert!(!repo.path.join(".husky/_/commit-msg").exists());
    assert!(
        std::fs::read_to_string(repo.path.join(".husky/commit-msg"))
            .unwrap()
            .contains("then \"$git_orchestrate\" hook commit-msg \"$1\"; else echo")
    );
    repo.run(&["hooks", "uninstall"]).expect(0);
    assert!(!repo.path.join(".husky/commit-msg").exists());

    // An entry of an older version, which ran a bare git-orchestrate, is written again as
    // it is now; the user's line stays, and a second install changes nothing.
    repo.write(
        ".husky/commit-msg",
        "npx commitlint --edit \"$1\"\n# >>> git-orchestrate >>>\nif grep -qi checkpoint \"$1\"; \
         then git-orchestrate hook commit-msg \"$1\"; fi\n# <<< git-orchestrate <<<\n",
    );
    repo.run(&["hooks", "install"]).expect(0);
    let upgraded = std::fs::read_to_string(repo.path.join(".husky/commit-msg")).unwrap();
    assert!(
        upgraded.starts_with("npx commitlint --edit \"$1\"\n# >>> git-orchestrate >>>\n")
            && upgraded.contains("then \"$git_orchestrate\" hook commit-msg \"$1\"; else echo")
            && upgraded.matches("# >>> git-orchestrate >>>").count() == 1,
        "{upgraded}"
    );
    repo.run(&["hooks", "install"]).expect(0);
    assert_eq!(
        std::fs::read_to_string(repo.path.join(".husky/commit-msg")).unwrap(),
        upgraded
    );
    repo.run(&["hooks", "uninstall"]).expect(0);
    assert_eq!(
        std::fs::read_to_string(repo.path.join(".husky/commit-msg")).unwrap(),
        "npx commitlint --edit \"$1\"\n"
    );

    // A pre-commit hook file without a pre-commit configuration: that hook is left alone.

    let repo = TestRepo::new();
    write_hook(
        &repo.path.join(".git/hooks"),
        "pre-push",
        "#!/usr/bin/env python3\n# File generated by pre-commit: https://pre-commit.com\n",
        0o755,
    );
    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert!(
        out.contains("commit-msg   installed (its own file)"),
        "{out}"
    );
    assert!(
        out.contains("pre-push     left alone: pre-commit manages it"),
        "{out}"
    );
    assert!(
        out.contains("note: `git orchestrate hooks install --manager pre-commit` adds our"),
        "{out}"
    );
    // A broken configuration is refused, and nothing changes.
    let repo = TestRepo::new();
    repo.write("lefthook.yml", "commit-msg: [oops]\n");
    let out = repo.run(&["hooks", "install"]);
    out.expect(2);
    assert!(
        out.stderr
            .contains("lefthook.yml: `commit-msg:` is written inline"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.path.join("lefthook.yml")).unwrap(),
        "commit-msg: [oops]\n"
    );
}

#[test]
fn doctor_proves_the_hooks_reach_the_binary() {
    let (repo, _) = hooked_repo("");
    let out = repo.run(&["doctor"]);
    out.expect(0);
    assert!(
        out.stdout
            .contains("ok       hook commit-msg      installed and firing"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("0 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );

    // Without git-orchestrate on the PATH the hooks run with, and where it was recorded,
    // they are installed but dead.
    std::fs::write(
        repo.path.join(".git/orchestrator/binary"),
        "/nonexistent/git-orchestrate",
    )
    .unwrap();
    // A reftable repository needs the git the tests run (the system's may predate it).
    let path = match crate::support::test_ref_format() {
        Some(_) => format!("{}:/usr/bin:/bin", git_dir_on_path()),
        None => "/usr/bin:/bin".to_string(),
    };
    let out = repo
        .command(crate::support::BIN, ["doctor"])
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "ERROR    hook commit-msg      installed, but running it does not reach git-orchestrate"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: put git-orchestrate on the PATH git runs hooks with"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "ERROR    hooks binary         the recorded /nonexistent/git-orchestrate is gone"
        ),
        "{stdout}"
    );

    repo.run(&["hooks", "uninstall"]).expect(0);
    let json = repo.run(&["doctor", "--json"]).expect(1).json();
    let hook = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "hook commit-msg")
        .unwrap()
        .clone();
    assert_eq!(hook["level"], "error");
    assert_eq!(hook["fix"], "git orchestrate hooks install");
}

#[test]
fn doctor_wants_remote_tracking_refspecs_and_flags_one_that_overwrites_local_state() {
    let (repo, _) = hooked_repo("");
    repo.git(&["remote", "add", "origin", "https://example.invalid/x.git"]);
    let check = |repo: &TestRepo| {
        let json = repo.run(&["doctor", "--json"]).json();
        json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "refspecs origin")
            .unwrap()
            .clone()
    };
    let c = check(&repo);
    assert_eq!(c["level"], "warning");
    assert_eq!(
        c["fix"],
        "git config --add remote.origin.fetch 'refs/orchestrator/workflows/*:refs/orchestrator/remotes/origin/workflows/*' && \
         git config --add remote.origin.fetch '+refs/orchestrator/claims/*:refs/orchestrator/remotes/origin/claims/*' && \
                  git config --add remote.origin.fetch 'refs/notes/orchestrator*:refs/notes/remotes/origin/orchestrator*'"
    );
    // Applying the fix makes it ok.
    let fix = c["fix"].as_str().unwrap().to_string();
    repo.command("sh", ["-c", &fix]).status().unwrap();
    assert_eq!(check(&repo)["level"], "ok");

    repo.git(&[
        "config",
        "--add",
        "remote.origin.fetch",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let c = check(&repo);
    assert_eq!(c["level"], "error", "{c}");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .starts_with("+refs/orchestrator/*:refs/orchestrator/* fetches straight onto this clone's workflow state"),
        "{c}"
    );
    let out = repo.run(&["doctor"]);
    out.expect(1);
}

#[test]
fn a_checkpoint_under_template_comments_is_still_verified() {
    let (repo, counter) = hooked_repo("");
    repo.write("a.txt", "a\n");
    repo.write("fail", "");
    repo.git(&["add", "--all"]);
    // As an editor leaves it after a commit.template: comments first, the subject below.
    let message = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("msg-{:p}", &repo));
    std::fs::write(
        &message,
        "# Write the subject below; lines starting with # are dropped.\n\ncheckpoint: sneaky\n",
    )
    .unwrap();
    let out = repo.git_run(&["commit", "--cleanup=strip", "-F", message.to_str().unwrap()]);
    assert_ne!(out.code, 0, "verified, and refused: the gate fails");
    assert!(
        out.stderr.contains("preflight gate `counted` failed"),
        "{}",
        out.stderr
    );
    assert_eq!(runs(&counter), 1);
}

#[test]
fn gates_run_by_a_hook_do_not_see_the_hooks_git_environment() {
    let repo = TestRepo::with_config("");
    // A test suite that makes its own repositories would act on the user's with these.
    repo.write(
        ".orchestrate.toml",
        "master_plan = \"docs/plan.md\"\n[[preflight]]\nname = \"clean-env\"\n\
         command = \"env | grep -E '^GIT_(DIR|INDEX_FILE|WORK_TREE|PREFIX)=' && exit 1; exit 0\"\n",
    );
    repo.commit_all("config");
    repo.run(&["hooks", "install"]).expect(0);
    let worktree = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("wt-env-{:p}", &repo));
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "-b",
        "side",
        worktree.to_str().unwrap(),
    ]);
    std::fs::write(worktree.join("run_tests.sh"), "echo changed\n").unwrap();
    let out = repo
        .command(
            "git",
            ["commit", "-a", "-m", "checkpoint: in a worktree, with -a"],
        )
        .current_dir(&worktree)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("checkpoint verified: preflight passed (1 gate)"),
        "{stderr}"
    );
}

#[test]
fn files_a_gate_writes_refuse_the_checkpoint_commit() {
    let repo = TestRepo::with_config("");
    repo.write(
        ".orchestrate.toml",
        "master_plan = \"docs/plan.md\"\n[[preflight]]\nname = \"writer\"\ncommand = \"date > stamp.txt\"\n",
    );
    repo.commit_all("config");
    repo.run(&["hooks", "install"]).expect(0);
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    let before = head(&repo);
    let out = repo.git_run(&["commit", "-m", "checkpoint: a"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(
            "error: checkpoint commit refused: files changed while preflight ran (stamp.txt), so it did not \
             verify exactly what would be committed."
        ),
        "{}",
        out.stderr
    );
    assert_eq!(head(&repo), before);
}

#[test]
fn the_checkpoint_command_tells_the_hook_its_workflow() {
    let (repo, counter) = hooked_repo("");
    let feat = |args: &[&str]| {
        let mut full = vec!["--workflow", "feat"];
        full.extend_from_slice(args);
        repo.run(&full)
    };
    repo.run_with_stdin(
        &[
            "--workflow",
            "feat",
            "submit-work",
            "-s",
            "plan",
            "--plan",
            "-",
        ],
        PLAN,
    )
    .expect(0);
    feat(&["get-task"]).expect(0);
    feat(&["submit-work", "-s", "red", "--test-command", RED]).expect(3);
    feat(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"]).expect(0);
    repo.write("add.sh", "echo 5\n");
    feat(&["submit-work", "-s", "green", "--test-command", "sh add.sh"]).expect(0);
    assert_eq!(runs(&counter), 1);
    feat(&["checkpoint"]).expect(0);
    assert_eq!(runs(&counter), 1, "the hook found the workflow's cache");
    let note = notes(&repo, "HEAD");
    assert_eq!(note.len(), 1, "{note:?}");
    assert_eq!(note[0]["workflow"], "feat");
    assert_eq!(note[0]["step"], "1.2");
}

#[test]
fn doctor_runs_none_of_the_users_hook_code() {
    let repo = TestRepo::new();
    let hooks = repo.path.join(".git/hooks");
    let ran = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("ran-{:p}", &repo));
    for name in ["commit-msg", "post-commit", "pre-push"] {
        write_hook(
            &hooks,
            name,
            &format!("#!/bin/sh\necho {name} >> '{}'\n", ran.display()),
            0o755,
        );
    }
    repo.run(&["hooks", "install"]).expect(0);
    repo.run(&["doctor"]).expect(0);
    // Neither on PATH nor where it was recorded.
    std::fs::write(
        repo.path.join(".git/orchestrator/binary"),
        "/nonexistent/git-orchestrate",
    )
    .unwrap();
    // A reftable repository needs the git the tests run (the system's may predate it).
    let path = match crate::support::test_ref_format() {
        Some(_) => format!("{}:/usr/bin:/bin", git_dir_on_path()),
        None => "/usr/bin:/bin".to_string(),
    };
    let out = repo
        .command(crate::support::BIN, ["doctor"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !ran.exists(),
        "the probe stopped before the user's code, with and without the binary"
    );
}

#[test]
fn a_symlinked_or_binary_hook_is_chained_and_comes_back() {
    let repo = TestRepo::new();
    let hooks = repo.path.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // A tracked hook script, linked into the hooks directory: its target must not be edited.
    repo.write("scripts/commit-msg", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(
        repo.path.join("scripts/commit-msg"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.commit_all("scripts");
    std::os::unix::fs::symlink(
        repo.path.join("scripts/commit-msg"),
        hooks.join("commit-msg"),
    )
    .unwrap();
    // A compiled hook: not text at all.
    let mut binary = b"\x7fELF\x02\x01\x01\x00".to_vec();
    binary.extend_from_slice(&[0xff, 0xfe, 0x00, 0x80]);
    std::fs::write(hooks.join("pre-push"), &binary).unwrap();
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert!(
        out.contains("commit-msg   installed (chained: your hook runs after it)"),
        "{out}"
    );
    assert!(
        out.contains("pre-push     installed (chained: your hook runs after it)"),
        "{out}"
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the tracked target is untouched"
    );
    repo.run(&["hooks", "uninstall"]).expect(0);
    assert!(
        std::fs::symlink_metadata(hooks.join("commit-msg"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(hooks.join("pre-push")).unwrap(), binary);
}

#[test]
fn a_hooks_directory_in_the_working_tree_is_pointed_out() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let out = repo.run(&["hooks", "install"]).expect(0).stdout.clone();
    assert!(
        out.contains("is in the working tree: commit the hook files (or list them in .gitignore)"),
        "{out}"
    );
    assert!(
        out.contains("core.hooksPath = .githooks is relative, so each linked worktree has its own hooks directory"),
        "{out}"
    );
}

/// A bare remote beside `repo`, added as `origin`, with main pushed.
fn add_remote(repo: &TestRepo) {
    let remote = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("remote-{:p}.git", repo));
    repo.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);
}

#[test]
fn pre_push_judges_by_the_remote_ref_and_never_takes_a_transition_for_a_checkpoint() {
    let (repo, _) = hooked_repo("[hooks]\npre_push = \"enforce\"");
    add_remote(&repo);
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("sh add.sh", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    let tip = repo.tip().unwrap();
    assert!(
        repo.git(&["log", "-1", "--format=%s", &tip])
            .starts_with("checkpoint: EXECUTING_TDD -> "),
        "the workflow's last transition reads like a checkpoint commit"
    );

    // Pushed by object id, as `sync` pushes: the local side is no ref name.
    let out = repo.git_run(&["push", "origin", &format!("{tip}:{}", crate::support::REF)]);
    out.expect(0);
    assert!(!out.stderr.contains("git-orchestrate"), "{}", out.stderr);
    // Even onto a branch, a transition is not a checkpoint commit.
    let out = repo.git_run(&["push", "origin", &format!("{tip}:refs/heads/state-copy")]);
    out.expect(0);
    assert!(!out.stderr.contains("git-orchestrate"), "{}", out.stderr);

    // A checkpoint commit without its note is still found when pushed by id.
    repo.write("b.txt", "b\n");
    repo.git(&["add", "b.txt"]);
    repo.git_run(&["commit", "--no-verify", "-m", "checkpoint: sneaked past"])
        .expect(0);
    let out = repo.git_run(&["push", "origin", &format!("{}:refs/heads/x", head(&repo))]);
    assert_ne!(out.code, 0, "enforce refuses the push");
    assert!(
        out.stderr
            .contains("git-orchestrate: 1 checkpoint commit without a passing note"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("checkpoint: sneaked past"),
        "{}",
        out.stderr
    );
}

/// `hooks install` and `init` give a hook file of theirs its run bit back, and say so.
#[test]
fn installing_again_makes_a_hook_that_lost_its_run_bit_executable() {
    let (repo, counter) = hooked_repo("");
    let hook = repo.path.join(".git/hooks/commit-msg");
    let chmod = |mode: u32| {
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    for args in [&["hooks", "install"][..], &["init"][..]] {
        chmod(0o644);
        let out = repo.run(args);
        out.expect(0);
        out.says("commit-msg   made executable again (its own file): git was skipping it");
        assert!(!out.stdout.contains("NOT executable"), "{}", out.stdout);
        assert_eq!(file_and_mode(&hook).1, 0o755, "{args:?}");
    }
    chmod(0o644);
    let json = repo.run(&["hooks", "install", "--json"]).expect(0).json();
    assert_eq!(json["hooks"][0]["action"], "repaired", "{json}");
    assert_eq!(json["hooks"][0]["executable"], true, "{json}");
    repo.run(&["hooks", "install"])
        .expect(0)
        .says("commit-msg   already installed");

    // The repaired hook runs: a checkpoint commit is verified.
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    repo.git_run(&["commit", "-m", "checkpoint: add a"])
        .expect(0)
        .warns("git-orchestrate: checkpoint verified: preflight passed (1 gate)");
    assert_eq!(runs(&counter), 1);
    assert_eq!(notes(&repo, "HEAD").len(), 1);
}

#[test]
fn doctor_checks_the_review_commands_program_and_the_git_version() {
    let (repo, _) = hooked_repo("[review]\ncommand = \"sh tools/review.sh --strict\"");
    let out = repo.run(&["doctor"]);
    out.expect(1);
    out.says(&format!(
        "ERROR    review               [review] command `sh tools/review.sh --strict`: {} does not exist, so every review would fail",
        repo.path.join("tools/review.sh").display()
    ));
    out.says("fix: create it, or correct `command` under [review] in .orchestrate.toml");
    out.says("1 error, 0 warnings");
    let version = repo.git(&["version"]);
    let version = version.trim().trim_start_matches("git version ");
    out.says(&format!(
        "ok       git                  {version} (2.39 or newer is needed)"
    ));

    repo.write("tools/review.sh", "echo '{\"findings\": []}'\n");
    repo.run(&["doctor"])
        .expect(0)
        .says("ok       review               `sh tools/review.sh --strict`");

    // A program on no PATH, named bare.
    let config = std::fs::read_to_string(repo.path.join(".orchestrate.toml")).unwrap();
    repo.write(
        ".orchestrate.toml",
        &config.replace("sh tools/review.sh --strict", "no-such-reviewer --x"),
    );
    let json = repo.run(&["doctor", "--json"]).expect(1).json();
    let review = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "review")
        .unwrap()
        .clone();
    assert_eq!(review["level"], "error", "{json}");
    assert!(
        review["message"]
            .as_str()
            .unwrap()
            .contains("`no-such-reviewer` is not on PATH"),
        "{json}"
    );
}

/// `git` with a PATH that lacks this build's binary, as an agent's login shell or a GUI may
/// run it.
fn git_without_binary(repo: &TestRepo, args: &[&str]) -> crate::support::Run {
    let bin = Path::new(crate::support::BIN)
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).filter(|p| *p != bin),
    )
    .unwrap();
    crate::support::Run::from(
        repo.command("git", args)
            .env("PATH", path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
    )
}

/// The hooks run the binary `hooks install` recorded when it is not on PATH; when it is not
/// there either, they refuse checkpoint commits and pushes of them, and let every other
/// commit and push through, saying so.
#[test]
fn the_hooks_find_the_binary_without_path_and_fail_closed_for_checkpoints_without_it() {
    let (repo, counter) = hooked_repo("");
    let record = repo.path.join(".git/orchestrator/binary");
    assert_eq!(
        std::fs::canonicalize(std::fs::read_to_string(&record).unwrap()).unwrap(),
        std::fs::canonicalize(crate::support::BIN).unwrap(),
        "hooks install recorded this binary"
    );
    let remote = repo
        .dir()
        .parent()
        .unwrap()
        .join(format!("remote-bin-{:p}.git", &repo));
    repo.git(&["init", "--quiet", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git_run(&["push", "--quiet", "origin", "main"])
        .expect(0);

    // Not on PATH: the recorded binary verifies and notes the checkpoint, and checks the push.
    repo.write("a.txt", "a\n");
    repo.git(&["add", "a.txt"]);
    let out = git_without_binary(&repo, &["commit", "-m", "checkpoint: add a"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("git-orchestrate: checkpoint verified: preflight passed (1 gate)"),
        "{}",
        out.stderr
    );
    assert_eq!(runs(&counter), 1);
    assert_eq!(notes(&repo, "HEAD").len(), 1, "noted by post-commit");
    git_without_binary(&repo, &["push", "--quiet", "origin", "main"]).expect(0);

    // The binary gone (uninstalled, moved): ordinary commits and pushes go through, saying so.
    std::fs::write(&record, "/nonexistent/git-orchestrate").unwrap();
    repo.write("b.txt", "b\n");
    repo.git(&["add", "b.txt"]);
    git_without_binary(&repo, &["commit", "-m", "feat: add b"]).expect(0);
    let out = git_without_binary(&repo, &["push", "origin", "main"]);
    out.expect(0);
    assert!(
        out.stderr
            .contains("this push has no checkpoint commit, so it goes through unchecked"),
        "{}",
        out.stderr
    );
    // A checkpoint commit is refused by commit-msg...
    repo.write("c.txt", "c\n");
    repo.git(&["add", "c.txt"]);
    let before = head(&repo);
    let out = git_without_binary(&repo, &["commit", "-m", "checkpoint: add c"]);
    assert_ne!(out.code, 0, "refused");
    assert!(
        out.stderr.contains(
            "git-orchestrate is not on PATH, nor where `git orchestrate hooks install` recorded it \
             (/nonexistent/git-orchestrate), so this checkpoint commit cannot be verified and is refused"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(head(&repo), before);
    // ...and one made past the hooks is not pushed, whether by its subject or its trailer.
    for message in ["checkpoint: add c", "tidy\n\nOrchestrator-Checkpoint: 1.3"] {
        git_without_binary(&repo, &["commit", "-q", "--no-verify", "-m", message]).expect(0);
        let out = git_without_binary(&repo, &["push", "origin", "main"]);
        assert_ne!(out.code, 0, "{message}: refused");
        assert!(
            out.stderr.contains(
                "so the checkpoint commits pushed to refs/heads/main cannot be checked: the push is refused"
            ),
            "{}",
            out.stderr
        );
        assert_eq!(
            repo.git(&["ls-remote", "origin", "refs/heads/main"])
                .split_whitespace()
                .next(),
            Some(before.as_str()),
            "the remote did not get it"
        );
        repo.git(&["reset", "-q", "--hard", &before]);
        repo.write("c.txt", "c\n");
        repo.git(&["add", "c.txt"]);
    }
    assert_eq!(runs(&counter), 1, "no gate ran without the binary");
}

/// Pushed refs in the many-refs push: more than any team pushes at once.
const MANY_REFS: usize = 10_000;

/// `MANY_REFS` branches `b/NNNNN`, each one commit on top of main, made with fast-import (no
/// hook runs); `b/05000` also carries a checkpoint commit without a note.
fn many_branches(repo: &TestRepo) {
    let main = head(repo);
    let mut stream = String::new();
    let mut commit = |branch: &str, from: Option<&str>, message: &str| {
        stream.push_str(&format!(
            "commit refs/heads/{branch}\ncommitter T <t@example.org> 1700000000 +0000\ndata {}\n{message}\n",
            message.len()
        ));
        if let Some(from) = from {
            stream.push_str(&format!("from {from}\n"));
        }
        stream.push('\n');
    };
    for i in 0..MANY_REFS {
        commit(&format!("b/{i:05}"), Some(&main), &format!("work {i}\n"));
    }
    commit("b/05000", None, "checkpoint: sneaked past\n");
    repo.git_with_stdin(&["fast-import", "--quiet"], stream.as_bytes());
}

/// `git push` of every `b/*` branch, under a generous process timeout (`timeout` exits 124).
fn push_many(repo: &TestRepo) -> crate::support::Run {
    crate::support::Run::from(
        repo.command(
            "timeout",
            [
                "120",
                "git",
                "push",
                "origin",
                "refs/heads/b/*:refs/heads/b/*",
            ],
        )
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run git push"),
    )
}

#[test]
fn pre_push_checks_ten_thousand_pushed_refs_in_one_walk() {
    let (repo, _) = hooked_repo("[hooks]\npre_push = \"enforce\"");
    add_remote(&repo);
    many_branches(&repo);

    // The one unverified checkpoint among 10,000 pushed refs is found, and the push refused.
    let out = push_many(&repo);
    assert_ne!(out.code, 124, "the push did not finish:\n{}", out.stderr);
    assert_ne!(out.code, 0, "enforce refuses the push");
    assert!(
        out.stderr
            .contains("git-orchestrate: 1 checkpoint commit without a passing note"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("checkpoint: sneaked past"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.git(&["ls-remote", "origin", "refs/heads/b/*"]), "");

    // Without it, every ref goes.
    repo.git(&["branch", "--force", "b/05000", "b/05000^"]);
    let out = push_many(&repo);
    out.expect(0);
    assert!(!out.stderr.contains("git-orchestrate"), "{}", out.stderr);
    assert_eq!(
        repo.git(&["ls-remote", "origin", "refs/heads/b/*"])
            .lines()
            .count(),
        MANY_REFS
    );
}

/// `doctor` asks the user's login shell (`$SHELL -l`, as Codex's shell tool starts one) where
/// git-orchestrate is: a profile that sets a PATH without it gets a warning naming the
/// recorded binary the hooks run and the line for the profile; with the line, it is found.
#[test]
fn doctor_says_when_the_login_shell_does_not_find_the_binary() {
    let (repo, _) = hooked_repo("");
    let doctor = |shell: &str| {
        crate::support::Run::from(
            repo.command(crate::support::BIN, ["doctor"])
                .env("SHELL", shell)
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap(),
        )
    };
    let recorded = std::fs::read_to_string(repo.path.join(".git/orchestrator/binary")).unwrap();
    let dir = Path::new(&recorded).parent().unwrap().display().to_string();
    login_profile(&repo, "PATH=/usr/bin:/bin");
    for shell in ["/bin/bash", "/bin/sh"] {
        let out = doctor(shell);
        out.expect(0);
        let lines: Vec<&str> = out
            .stdout
            .lines()
            .skip_while(|l| !l.contains("login shell"))
            .take(2)
            .collect();
        assert_eq!(
            lines,
            [
                format!(
                    "warning  login shell          `{shell} -l` does not find git-orchestrate (its \
                     profile sets a PATH without it): an agent whose shell starts as a login shell \
                     (Codex's does) cannot run `git orchestrate`; the git hooks run {recorded} \
                     (recorded in .git/orchestrator/binary)"
                ),
                format!(
                    "{:29} fix: add `export PATH={dir}:\"$PATH\"` to ~/.profile",
                    ""
                ),
            ],
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.ends_with("0 errors, 1 warning\n"),
            "{}",
            out.stdout
        );
    }
    // bash reads ~/.bash_profile instead when there is one: the fix names it.
    std::fs::write(repo.home().join(".bash_profile"), "PATH=/usr/bin:/bin\n").unwrap();
    doctor("/bin/bash").says(&format!(
        "fix: add `export PATH={dir}:\"$PATH\"` to ~/.bash_profile"
    ));
    std::fs::remove_file(repo.home().join(".bash_profile")).unwrap();

    // With the line in the profile the login shell finds it, whatever else the profile prints.
    login_profile(&repo, &format!("PATH={dir}:\"$PATH\""));
    let out = doctor("/bin/bash");
    out.expect(0);
    out.says(&format!(
        "ok       login shell          `/bin/bash -l` finds git-orchestrate at {dir}/git-orchestrate"
    ));
    assert!(
        out.stdout.ends_with("0 errors, 0 warnings\n"),
        "{}",
        out.stdout
    );
}

/// The directory of the first `git` on PATH.
fn git_dir_on_path() -> String {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .find(|dir| dir.join("git").is_file())
        .map(|dir| dir.display().to_string())
        .unwrap_or_default()
}
