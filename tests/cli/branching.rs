//! CREATING_BRANCH (docs/agent-guide.md) and the protected configuration (docs/config.md, "Which file is in force"): branch names,
//! dirty trees, pulling only with a remote, gates read from main, identity, worktrees.

use pretty_assertions::assert_eq;

use crate::support::{CONFIG, PLAN, RED, REF, TestRepo};

#[test]
fn a_dirty_tree_blocks_the_branch_and_says_why_until_it_is_clean() {
    let repo = TestRepo::new();
    repo.submit_plan(PLAN).expect(0);
    repo.write("run_tests.sh", "echo edited\n");
    let out = repo.run(&["get-task"]).expect(4).stdout.clone();
    assert_eq!(
        out,
        "git-orchestrate · workflow main · CREATING_BRANCH
PR: feat: Add numbers · branch feat/add-numbers (not created yet) · 0 of 5 steps done

The PR branch feat/add-numbers could not be created:
  the working tree has uncommitted changes to tracked files, and switching branches could carry them into the PR or lose them:
   M run_tests.sh
  Commit them, or put them aside with `git stash`.

Resolve that (for example commit or stash the changes), then run `git orchestrate get-task`
again; it retries.

Rules: make one attempt, then report it through `git orchestrate submit-work`; never run the
tests to judge your work yourself, the orchestrator does. Do not edit refs/orchestrator/* or
the orchestrator's state. Whenever you are unsure what to do, run `git orchestrate get-task`.
"
    );
    assert_eq!(repo.status(), "CREATING_BRANCH");
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
    // Asking again records nothing new: the reason is the same.
    let len = repo.history_len();
    let again = repo.run(&["--json", "get-task"]).expect(4).json();
    assert_eq!(repo.history_len(), len);
    assert!(
        again["branch_blocked"]
            .as_str()
            .unwrap()
            .starts_with("the working tree has uncommitted changes to tracked files"),
        "{again}"
    );

    repo.git(&["stash", "--quiet"]);
    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains(
            "Done for you: checked out main, and created branch feat/add-numbers from it."
        ),
        "{out}"
    );
    assert_eq!(
        repo.git(&["branch", "--show-current"]).trim(),
        "feat/add-numbers"
    );
    assert!(repo.state().get("last_error").is_none());
}

#[test]
fn untracked_files_do_not_block_the_branch() {
    let repo = TestRepo::new();
    repo.write("plan.json", PLAN);
    repo.run(&["submit-work", "-s", "plan", "--plan", "plan.json"])
        .expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "EXECUTING_TDD");
}

#[test]
fn the_branch_starts_from_main_even_when_another_branch_is_checked_out() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "--quiet", "-b", "elsewhere"]);
    repo.write("elsewhere.txt", "not for the PR\n");
    repo.commit_all("elsewhere");
    repo.submit_plan(PLAN).expect(0);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]),
        repo.git(&["rev-parse", "main"])
    );
    assert!(!repo.path.join("elsewhere.txt").exists());
}

/// A bare remote holding `repo`'s main, and a second clone that pushes a newer main to it.
fn remote_with_newer_main(repo: &TestRepo) -> tempfile::TempDir {
    let remote = tempfile::tempdir().unwrap();
    let remote_path = remote.path().to_str().unwrap().to_string();
    repo.git(&[
        "init",
        "--quiet",
        "--bare",
        "--initial-branch=main",
        &remote_path,
    ]);
    repo.git(&["remote", "add", "origin", &remote_path]);
    repo.git(&["push", "--quiet", "origin", "main"]);
    let other = tempfile::tempdir().unwrap();
    let other_path = other.path().to_str().unwrap().to_string();
    repo.git(&["clone", "--quiet", &remote_path, &other_path]);
    std::fs::write(other.path().join("upstream.txt"), "from upstream\n").unwrap();
    for args in [
        vec!["add", "upstream.txt"],
        vec![
            "-c",
            "user.name=Other",
            "-c",
            "user.email=o@example.invalid",
            "commit",
            "--quiet",
            "-m",
            "upstream",
        ],
        vec!["push", "--quiet", "origin", "main"],
    ] {
        let mut full = vec!["-C", other_path.as_str()];
        full.extend(args);
        repo.git(&full);
    }
    remote
}

/// `origin` is the workflows' remote without `remote` in the config: main is brought up to
/// origin's before the branch is made (so no agent plans a PR another has merged).
#[test]
fn without_a_configured_remote_main_is_updated_from_origin() {
    let repo = TestRepo::new();
    let _remote = remote_with_newer_main(&repo);
    repo.submit_plan(PLAN).expect(0);
    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains("updated it from origin, and created branch feat/add-numbers from it."),
        "{out}"
    );
    assert!(repo.path.join("upstream.txt").exists());
}

/// Several remotes, none called origin, and none configured: nothing is fetched.
#[test]
fn with_several_remotes_and_none_chosen_main_is_not_pulled() {
    let repo = TestRepo::new();
    let remote = remote_with_newer_main(&repo);
    repo.git(&["remote", "rename", "origin", "upstream"]);
    repo.git(&["remote", "add", "fork", remote.path().to_str().unwrap()]);
    repo.submit_plan(PLAN).expect(0);
    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains(
            "Done for you: checked out main, and created branch feat/add-numbers from it."
        ),
        "{out}"
    );
    assert!(!repo.path.join("upstream.txt").exists());
}

#[test]
fn with_a_configured_remote_main_is_pulled_before_branching() {
    let repo = TestRepo::with_config(&format!("remote = \"origin\"\n{CONFIG}"));
    let _remote = remote_with_newer_main(&repo);
    repo.submit_plan(PLAN).expect(0);
    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains("Done for you: checked out main, updated it from origin, and created branch feat/add-numbers from it."),
        "{out}"
    );
    assert!(
        repo.path.join("upstream.txt").exists(),
        "main was pulled before branching"
    );
}

#[test]
fn a_remote_that_is_missing_or_unreachable_refuses_the_plan_with_gits_own_words() {
    // A remote that is not there: the plan's claim cannot be taken, and nothing is accepted.
    let repo = TestRepo::with_config(&format!("remote = \"nowhere\"\n{CONFIG}"));
    let out = repo.submit_plan(PLAN);
    out.expect(2);
    out.warns("`remote = \"nowhere\"` in .orchestrate.toml names no remote of this repository");
    assert_eq!(repo.status(), "INITIALIZING");
    // A remote that is there and cannot be reached: git's own words, nothing accepted.
    let repo = TestRepo::with_config(&format!("remote = \"origin\"\n{CONFIG}"));
    repo.git(&["remote", "add", "origin", "/nonexistent/remote.git"]);
    let out = repo.submit_plan(PLAN);
    out.expect(5);
    out.warns("could not read the claims on origin");
    out.warns("does not appear to be a git repository");
    assert_eq!(repo.status(), "INITIALIZING");
}

#[test]
fn a_taken_branch_name_gets_a_number_and_hostile_titles_are_tamed() {
    let repo = TestRepo::new();
    repo.git(&["branch", "feat/add-numbers"]);
    repo.submit_plan(PLAN).expect(0);
    assert_eq!(repo.state()["current_pr_branch"], "feat/add-numbers-2");

    let repo = TestRepo::new();
    let hostile = PLAN.replace(
        "feat: Add numbers",
        "-fix: ../../HEAD.lock; rm -rf $HOME `x` @{u}",
    );
    repo.submit_plan(&hostile).expect(0);
    let branch = repo.state()["current_pr_branch"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(branch, "fix-head-lock-rm-rf-home-x-u");
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), branch);

    // A branch named like the prefix directory forces a flat name.
    let repo = TestRepo::new();
    repo.git(&["branch", "feat"]);
    repo.submit_plan(PLAN).expect(0);
    assert_eq!(repo.state()["current_pr_branch"], "feat-add-numbers");
}

#[test]
fn an_interrupted_branch_creation_is_resumed_not_duplicated() {
    let repo = TestRepo::new();
    repo.submit_plan(PLAN).expect(0);
    // As if get-task was killed after `git checkout -b` and before its state write.
    repo.git(&["checkout", "--quiet", "-b", "feat/add-numbers"]);
    repo.git(&["checkout", "--quiet", "main"]);
    let out = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains(
            "checked out branch feat/add-numbers, created by an earlier interrupted get-task."
        ),
        "{out}"
    );
    assert_eq!(
        repo.git(&["branch", "--list", "feat/*"]),
        "* feat/add-numbers\n"
    );
}

#[test]
fn on_the_pr_branch_the_gates_come_from_main_not_from_the_agents_edits() {
    let repo = TestRepo::at_green_step();
    // The agent weakens its preflight on its branch, and makes the real gate fail.
    repo.write(
        ".orchestrate.toml",
        &CONFIG.replace("sh run_tests.sh", "true"),
    );
    repo.write("fail", "");
    let out = repo.submit_test("true", None);
    out.expect(1);
    // The config file is protected: a tree that changes it verifies nothing.
    assert!(
        out.stdout.starts_with(
            "FAILURE: `true` passed (exit 0), but the working tree changes protected paths \
             (.orchestrate.toml): a human changes these on main; debugging attempt 1"
        ),
        "{}",
        out.stdout
    );
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "WARNING: .orchestrate.toml in the working tree differs from main:.orchestrate.toml; the gates of main stay in force for branch feat/add-numbers (changes take effect once merged into main)"
        ),
        "{brief}"
    );
    // Committing the edit on the branch does not help either.
    repo.git(&["add", ".orchestrate.toml"]);
    repo.git(&["commit", "--quiet", "-m", "weaken"]);
    repo.submit_test("true", None).expect(1);
    assert_eq!(repo.state()["debug_attempt_counter"], 2);
    let status = repo.run(&["status", "--json"]).expect(0).json();
    let pin = repo.state()["pin"]["commit"].as_str().unwrap().to_string();
    assert_eq!(pin, repo.git(&["rev-parse", "main"]).trim());
    assert_eq!(
        status["config"]["origin"],
        format!(
            "main:.orchestrate.toml as pinned for this PR (at {})",
            &pin[..12]
        )
    );
    // Without the protected file, the gates of main still judge, and the failing one fails.
    repo.git(&["checkout", "main", "--", ".orchestrate.toml"]);
    repo.git(&["commit", "--quiet", "-m", "put it back"]);
    repo.submit_test("true", None)
        .expect(1)
        .says("preflight gate `tests` failed");
}

#[test]
fn an_uncommitted_config_is_used_but_flagged_as_unprotected() {
    let repo = TestRepo::with_config("");
    repo.write(".orchestrate.toml", CONFIG);
    let brief = repo.run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        brief.contains(
            "WARNING: .orchestrate.toml is not committed on main: the gates are read from the working tree and are not protected (an agent could edit them); commit it on main"
        ),
        "{brief}"
    );
    let status = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        status.contains("WARNING: .orchestrate.toml is not committed on main"),
        "{status}"
    );
    assert!(
        status.contains("config    .orchestrate.toml (working tree) · preflight: tests"),
        "{status}"
    );
}

#[test]
fn without_a_git_identity_transitions_use_the_fixed_one() {
    let repo = TestRepo::new();
    repo.git(&["config", "--unset", "user.name"]);
    repo.git(&["config", "--unset", "user.email"]);
    repo.run(&["get-task"]).expect(0);
    repo.submit_plan(PLAN).expect(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>", REF]),
        "git-orchestrate <git-orchestrate@localhost> / git-orchestrate <git-orchestrate@localhost>\n"
    );
    // And a checkpoint commit does not fail for lack of it either.
    repo.run(&["get-task"]).expect(0);
    repo.submit_test(RED, None).expect(3);
    repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
        .expect(0);
    repo.write("add.sh", "echo 5\n");
    repo.submit_test("true", None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an"]),
        "git-orchestrate\n"
    );
}

#[test]
fn the_users_identity_is_used_when_configured() {
    let repo = TestRepo::new();
    repo.run(&["get-task"]).expect(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae>", REF]),
        "Test User <test@example.invalid>\n"
    );
}

#[test]
fn linked_worktrees_see_the_same_workflow() {
    let repo = TestRepo::at_green_step();
    let wt = tempfile::tempdir().unwrap();
    let wt_path = wt.path().join("wt");
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "--detach",
        wt_path.to_str().unwrap(),
        "main",
    ]);
    let json = repo
        .run_in(&wt_path, &["status", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["state"], "EXECUTING_TDD");
    assert_eq!(json["tip"], repo.tip().unwrap().as_str());
    // Running from a subdirectory finds the repository too.
    let sub = repo.path.join("docs");
    assert_eq!(
        repo.run_in(&sub, &["status", "--json"]).expect(0).json()["state"],
        "EXECUTING_TDD"
    );
}

#[test]
fn workflows_are_independent_and_selected_by_flag_or_environment() {
    let repo = TestRepo::new();
    repo.run(&["--workflow", "second", "get-task"]).expect(0);
    repo.submit_plan(PLAN).expect(0);
    let refs = repo.git(&["for-each-ref", "--format=%(refname)", "refs/orchestrator"]);
    assert_eq!(
        refs,
        "refs/orchestrator/claims/pr-1-feat-add-numbers\nrefs/orchestrator/workflows/main\nrefs/orchestrator/workflows/second\n"
    );
    let second = repo
        .run(&["--workflow", "second", "status", "--json"])
        .expect(0)
        .json();
    assert_eq!(second["state"], "INITIALIZING");
    let mut cmd = repo.command(crate::support::BIN, ["status", "--json"]);
    let out = cmd
        .env("GIT_ORCHESTRATE_WORKFLOW", "second")
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["workflow"], "second");
    assert_eq!(json["state"], "INITIALIZING");
    assert_eq!(repo.status(), "CREATING_BRANCH");
}

#[test]
fn changing_main_branch_in_the_config_later_is_flagged_not_silently_ignored() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    repo.write(
        ".orchestrate.toml",
        &CONFIG.replace("main_branch = \"main\"", "main_branch = \"trunk\""),
    );
    let status = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        status.contains(
            "WARNING: .orchestrate.toml (working tree) says main_branch = \"trunk\", but workflow main was created with main as its main branch, which stays in force (start a new workflow with --workflow to use another)"
        ),
        "{status}"
    );
}

#[test]
fn a_broken_config_stops_every_submit() {
    let repo = TestRepo::new();
    repo.run(&["init"]).expect(0);
    repo.write(".orchestrate.toml", "bogus = 1\n");
    let tip = repo.tip();
    let out = repo.submit_plan(PLAN);
    out.expect(2);
    assert!(
        out.stderr.contains("unknown field `bogus`"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.tip(), tip);
}

/// The PR branch checked out in a linked worktree: `status` in the main worktree says where,
/// and nothing suggests a `git checkout` git would refuse.
#[test]
fn status_names_the_worktree_that_has_the_pr_branch() {
    let repo = TestRepo::at_green_step();
    repo.git(&["checkout", "--quiet", "main"]);
    let linked = repo.dir().parent().unwrap().join(format!(
        "linked-{}",
        repo.dir().file_name().unwrap().to_string_lossy()
    ));
    let linked_str = linked.to_str().unwrap();
    repo.git(&["worktree", "add", "--quiet", linked_str, "feat/add-numbers"]);
    let listed = repo.run(&["status", "--json"]).expect(0).json()["branch_worktree"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        std::fs::canonicalize(&listed).unwrap(),
        std::fs::canonicalize(&linked).unwrap()
    );

    let out = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        out.contains(&format!(
            "branch    feat/add-numbers (checked out in {listed})\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "WARNING: HEAD is on main, but this PR's branch is feat/add-numbers, checked out in the worktree {listed}: work there\n"
        )),
        "{out}"
    );
    assert!(!out.contains("git checkout"), "{out}");

    let tip = repo.tip();
    repo.submit_test("true", None).expect(4).warns(&format!(
        "hint: feat/add-numbers is checked out in the worktree {listed}: run `git orchestrate submit-work` there.\n"
    ));
    assert_eq!(repo.tip(), tip);

    // Without a worktree holding it, the branch is simply not checked out.
    repo.git(&["worktree", "remove", linked_str]);
    let out = repo.run(&["status"]).expect(0).stdout.clone();
    assert!(
        out.contains("branch    feat/add-numbers (not checked out)\n"),
        "{out}"
    );
    assert!(out.contains("run `git checkout feat/add-numbers`"), "{out}");
    assert_eq!(
        repo.run(&["status", "--json"]).expect(0).json()["branch_worktree"],
        serde_json::Value::Null
    );
}

/// Two workflows with the same prTitle would drive one PR branch: the second plan is
/// refused, naming the workflow that has the branch, and nothing is written.
#[test]
fn a_second_workflow_cannot_take_the_branch_of_another() {
    let repo = TestRepo::new();
    repo.submit_plan(PLAN).expect(0);
    let other_ref = "refs/orchestrator/workflows/other";
    let submit_other = || {
        repo.run_with_stdin(
            &[
                "--workflow",
                "other",
                "submit-work",
                "-s",
                "same PR",
                "--plan",
                "-",
            ],
            PLAN,
        )
    };
    let out = submit_other();
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: the PR branch feat/add-numbers is already the branch of workflow \"main\" (state CREATING_BRANCH); \
         two workflows cannot drive one branch (state INITIALIZING)\n\
         hint: Plan another PR of the master plan (a prTitle that names another branch), or continue this PR in \
         its workflow: `git orchestrate --workflow main get-task`.\n"
    );
    assert!(
        !repo
            .git_try(&["rev-parse", "--verify", "--quiet", other_ref])
            .0,
        "no workflow was created"
    );
    // The same from a workflow that already exists, in INITIALIZING.
    repo.run(&["--workflow", "other", "get-task"]).expect(0);
    let tip = repo.git(&["rev-parse", other_ref]);
    submit_other()
        .expect(4)
        .warns("already the branch of workflow \"main\" (state CREATING_BRANCH)");
    assert_eq!(repo.git(&["rev-parse", other_ref]), tip, "nothing changed");
}

/// Two workflows that were both given one branch name (in a race, or by an older version):
/// the first to create the branch keeps it, the other refuses in CREATING_BRANCH.
#[test]
fn in_creating_branch_the_workflow_that_created_the_branch_keeps_it() {
    let repo = TestRepo::new();
    repo.submit_plan(PLAN).expect(0);
    // The other workflow's state as an unchecked submit would have left it: same branch.
    let main_tip = repo.git(&["rev-parse", REF]);
    repo.git(&[
        "update-ref",
        "refs/orchestrator/workflows/other",
        main_tip.trim(),
    ]);
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "EXECUTING_TDD");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let tip = repo.git(&["rev-parse", "refs/orchestrator/workflows/other"]);

    let out = repo.run(&["--workflow", "other", "get-task"]);
    out.expect(4);
    assert_eq!(
        out.stderr,
        "error: the PR branch feat/add-numbers is already the branch of workflow \"main\" (state EXECUTING_TDD); \
         two workflows cannot drive one branch (state CREATING_BRANCH)\n\
         hint: Workflow \"main\" drives this PR; this one can go on once that one is merged. To hand the question \
         to a human now: `git orchestrate escalate --report FILE`.\n"
    );
    assert_eq!(
        repo.git(&["rev-parse", "refs/orchestrator/workflows/other"]),
        tip,
        "nothing changed"
    );
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
}
