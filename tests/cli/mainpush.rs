//! Main reaches the remote (docs/architecture.md, "Finalization and merge"): the merge pushes
//! main with a lease, a lost race re-merges onto the newer main and checks it again, a PR
//! branch starts from the remote's latest main, an adopted branch finishes in a second
//! clone, and linked worktrees merge without checking main out.

use std::path::{Path, PathBuf};

use crate::support::{BIN, CONFIG, Run, TestRepo, counting_config, one_task_plan, runs};

/// A master plan of two PRs, far enough apart that marking each [DONE] never conflicts.
const TWO_PRS: &str =
    "# Plan\n\n## PR 1: feat: One\n\nThe first.\n\n## PR 2: feat: Two\n\nThe second.\n";

/// One agent: a working tree of `repo` (the repository itself or a linked worktree) and the
/// workflow it drives (`None`: the one the worktree's config names).
struct Agent<'a> {
    repo: &'a TestRepo,
    dir: PathBuf,
    workflow: Option<&'a str>,
}

impl<'a> Agent<'a> {
    fn of(repo: &'a TestRepo, workflow: &'a str) -> Agent<'a> {
        Agent {
            repo,
            dir: repo.dir().to_path_buf(),
            workflow: Some(workflow),
        }
    }

    fn full<'b>(&'b self, args: &[&'b str]) -> Vec<&'b str> {
        let mut full = Vec::new();
        if let Some(workflow) = self.workflow {
            full.extend(["--workflow", workflow]);
        }
        full.extend_from_slice(args);
        full
    }

    fn run(&self, args: &[&str]) -> Run {
        self.repo.run_in(&self.dir, &self.full(args))
    }

    fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut cmd = self.repo.command(BIN, self.full(args));
        cmd.current_dir(&self.dir);
        crate::support::feed(cmd, stdin)
    }

    fn git(&self, args: &[&str]) -> String {
        let dir = self.dir.display().to_string();
        let mut full = vec!["-C", dir.as_str()];
        full.extend_from_slice(args);
        self.repo.git(&full).trim().to_string()
    }

    fn write(&self, path: &str, content: &str) {
        std::fs::write(self.dir.join(path), content).expect("write file");
    }

    fn state(&self) -> String {
        self.run(&["status", "--json"]).expect(0).json()["state"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Plans the PR `title` (one task that creates `file` with `content`), does its steps,
    /// squashes it and marks it done: the next `get-task` merges it.
    fn up_to_the_merge(&self, title: &str, file: &str, content: &str) {
        self.run_with_stdin(
            &["submit-work", "--summary", "the plan", "--plan", "-"],
            &one_task_plan(title, file),
        )
        .expect(0);
        self.run(&["get-task"]).expect(0);
        let test = format!("test -e {file}");
        self.run(&["submit-work", "-s", "red", "--test-command", &test])
            .expect(3);
        self.run(&[
            "submit-work",
            "-s",
            "missing",
            "--analysis-decision",
            "SUCCESS",
        ])
        .expect(0);
        self.write(file, content);
        self.run(&["submit-work", "-s", "green", "--test-command", &test])
            .expect(0);
        self.run(&["checkpoint"]).expect(0);
        self.run(&["get-task"]).expect(0);
        assert_eq!(self.state(), "AWAITING_FINALIZATION");
        self.run(&["submit-work", "-s", "squashed", "--squash"])
            .expect(0);
        self.run(&["submit-work", "-s", "plan updated", "--mark-done"])
            .expect(0);
        assert_eq!(self.state(), "PLAN_UPDATED");
    }

    fn says_nothing_moved_outside(&self) {
        let out = self.run(&["status"]);
        out.expect(0);
        assert!(
            !out.stdout.contains("moved outside the workflow"),
            "{}",
            out.stdout
        );
    }
}

fn remote_git(bare: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(bare)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The subjects of main's first-parent line on the remote, newest first.
fn remote_main_line(bare: &Path) -> Vec<String> {
    remote_git(bare, &["log", "--first-parent", "--format=%s", "main"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// A project with the master plan [`TWO_PRS`] under `config`, shared through a bare remote,
/// and a second clone of it.
fn two_clones(config: &str) -> (TestRepo, TestRepo, tempfile::TempDir, PathBuf) {
    let a = TestRepo::with_config(config);
    a.write("docs/plan.md", TWO_PRS);
    a.commit_all("two PRs");
    let (dir, bare) = a.share();
    let b = TestRepo::clone_of(&bare);
    (a, b, dir, bare)
}

/// The story: clone A merges PR 1; clone B, after `sync` and `get-task`, is on the
/// remote's new main (PR 1 marked [DONE] there), starts PR 2 from it, and merges it on top.
#[test]
fn a_second_clone_plans_from_the_remotes_new_main_and_both_merges_reach_it() {
    let (a, b, _dir, bare) = two_clones(CONFIG);
    let agent_a = Agent::of(&a, "a");
    let agent_b = Agent::of(&b, "b");
    let old_main = agent_b.git(&["rev-parse", "main"]);

    agent_a.up_to_the_merge("feat: One", "one.txt", "one\n");
    agent_a.run(&["get-task"]).expect(0);
    assert_eq!(agent_a.state(), "INITIALIZING");
    assert_eq!(
        remote_git(&bare, &["rev-parse", "main"]),
        agent_a.git(&["rev-parse", "main"]),
        "the merge pushed main"
    );
    assert_eq!(
        remote_main_line(&bare)[0],
        "Merge branch 'feat/one'",
        "the remote's main is the merge"
    );
    assert_eq!(
        remote_git(&bare, &["rev-parse", "refs/orchestrator/workflows/a"]),
        agent_a.git(&["rev-parse", "refs/orchestrator/workflows/a"]),
        "the merge's record went with it"
    );

    // B knew nothing of it: sync, then get-task brings main up before the agent plans.
    agent_b.run(&["sync"]).expect(0);
    let brief = agent_b.run(&["get-task"]);
    brief.expect(0);
    assert!(
        brief.stdout.contains("GOAL: plan the next pull request."),
        "{}",
        brief.stdout
    );
    assert!(!brief.stdout.contains("behind"), "{}", brief.stdout);
    assert_eq!(
        agent_b.git(&["rev-parse", "main"]),
        remote_git(&bare, &["rev-parse", "main"])
    );
    assert_ne!(agent_b.git(&["rev-parse", "main"]), old_main);
    let plan = std::fs::read_to_string(b.dir().join("docs/plan.md")).unwrap();
    assert!(plan.contains("## PR 1: feat: One [DONE]"), "{plan}");
    assert!(!plan.contains("## PR 2: feat: Two [DONE]"), "{plan}");

    agent_b.up_to_the_merge("feat: Two", "two.txt", "two\n");
    assert_eq!(
        agent_b.git(&["merge-base", "main", "feat/two"]),
        remote_git(&bare, &["rev-parse", "main"]),
        "PR 2 started from the remote's main, A's merge in it"
    );
    agent_b.run(&["get-task"]).expect(0);
    assert_eq!(agent_b.state(), "INITIALIZING");
    assert_eq!(
        remote_main_line(&bare)[..2],
        ["Merge branch 'feat/two'", "Merge branch 'feat/one'"]
    );

    // Each clone counts the other's merge as a workflow's, once it has its record.
    agent_a.run(&["sync"]).expect(0);
    agent_a.run(&["get-task"]).expect(0);
    assert_eq!(
        agent_a.git(&["rev-parse", "main"]),
        remote_git(&bare, &["rev-parse", "main"])
    );
    agent_a.says_nothing_moved_outside();
    agent_b.says_nothing_moved_outside();
}

/// `status` says when main is behind the remote's main as last fetched (it said "up to
/// date"), without fetching.
#[test]
fn status_says_main_is_behind_the_remotes_main() {
    let (a, b, _dir, _bare) = two_clones(CONFIG);
    Agent::of(&a, "a").up_to_the_merge("feat: One", "one.txt", "one\n");
    Agent::of(&a, "a").run(&["get-task"]).expect(0);
    let agent_b = Agent::of(&b, "b");
    agent_b.run(&["status"]).expect(0);
    assert!(
        !agent_b
            .run(&["status"])
            .stdout
            .contains("behind origin/main")
    );
    agent_b.git(&["fetch", "--quiet", "origin"]);
    let out = agent_b.run(&["status"]);
    out.expect(0);
    out.says("WARNING: main is 1 commit behind origin/main (along its first parents: a merged PR counts one) as last fetched");
}

/// A PR branch adopted by `sync` in a second clone is finished there: the merge deletes it
/// although its upstream is behind (`git branch -d` refused, and get-task exited 5 forever).
#[test]
fn a_pr_branch_adopted_by_sync_is_merged_and_deleted_in_the_second_clone() {
    let (a, b, _dir, bare) = two_clones(CONFIG);
    let agent_a = Agent::of(&a, "main");
    agent_a
        .run_with_stdin(
            &["submit-work", "--summary", "the plan", "--plan", "-"],
            &one_task_plan("feat: One", "one.txt"),
        )
        .expect(0);
    agent_a.run(&["get-task"]).expect(0);
    agent_a
        .run(&[
            "submit-work",
            "-s",
            "red",
            "--test-command",
            "test -e one.txt",
        ])
        .expect(3);
    agent_a.run(&["sync"]).expect(0);

    // B takes over: its branch tracks origin's, which stays at A's last push.
    let agent_b = Agent::of(&b, "main");
    agent_b.run(&["sync"]).expect(0);
    agent_b.git(&["checkout", "--quiet", "feat/one"]);
    assert_eq!(
        agent_b.git(&["rev-parse", "--abbrev-ref", "feat/one@{upstream}"]),
        "origin/feat/one"
    );
    agent_b
        .run(&[
            "submit-work",
            "-s",
            "missing",
            "--analysis-decision",
            "SUCCESS",
        ])
        .expect(0);
    agent_b.write("one.txt", "one\n");
    agent_b
        .run(&[
            "submit-work",
            "-s",
            "green",
            "--test-command",
            "test -e one.txt",
        ])
        .expect(0);
    agent_b.run(&["checkpoint"]).expect(0);
    agent_b.run(&["get-task"]).expect(0);
    agent_b
        .run(&["submit-work", "-s", "squashed", "--squash"])
        .expect(0);
    agent_b
        .run(&["submit-work", "-s", "plan updated", "--mark-done"])
        .expect(0);
    let checked = agent_b.git(&["rev-parse", "feat/one"]);

    let out = agent_b.run(&["get-task"]);
    out.expect(0);
    assert_eq!(agent_b.state(), "INITIALIZING");
    assert!(
        !agent_b
            .repo
            .git_try(&["rev-parse", "--verify", "--quiet", "refs/heads/feat/one"])
            .0,
        "the branch is deleted"
    );
    assert!(
        !b.git_try(&["config", "--get-regexp", "^branch\\.feat/one\\."])
            .0,
        "its upstream configuration went with it"
    );
    assert_eq!(
        remote_git(&bare, &["rev-parse", "main^2"]),
        checked,
        "the remote's main is the merge of the checked commit"
    );
    agent_b.run(&["get-task"]).expect(0);
}

/// In clone B, a pre-push hook lets clone A merge and push first, exactly once: B's push
/// with its lease is refused, and B merges again onto A's merge, checks it again and pushes.
fn race_b_behind_a(a: &TestRepo, b: &TestRepo) {
    let hooks = b.dir().join(".git").join("race-hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let once = b.dir().join(".git").join("race-ran");
    let log = b.dir().join(".git").join("race.log");
    std::fs::write(
        hooks.join("pre-push"),
        format!(
            "#!/bin/sh\n[ -e '{once}' ] && exit 0\n: > '{once}'\n\
             cd '{a}' && env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE -u GIT_PREFIX \
             -u GIT_ORCHESTRATE_WORKFLOW '{bin}' --workflow a get-task </dev/null >'{log}' 2>&1\n\
             exit 0\n",
            once = once.display(),
            a = a.dir().display(),
            bin = BIN,
            log = log.display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        hooks.join("pre-push"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    b.git(&["config", "core.hooksPath", hooks.to_str().unwrap()]);
}

/// Two clones finish their PRs at once and A's push lands between B's fetch and B's push:
/// B re-merges onto A's merge, the gates run once on the new merge, the remote's main holds
/// both merges, and each clone counts both as workflow merges.
#[test]
fn a_merge_that_loses_the_race_is_made_again_on_the_newer_main_and_checked_again() {
    let counter_dir = tempfile::tempdir().unwrap();
    let counter = counter_dir.path().join("gate-runs");
    let config = counting_config(&counter, "main_branch = \"main\"");
    let (a, b, _dir, bare) = two_clones(&config);
    let agent_a = Agent::of(&a, "a");
    let agent_b = Agent::of(&b, "b");
    agent_a.up_to_the_merge("feat: One", "one.txt", "one\n");
    agent_b.up_to_the_merge("feat: Two", "two.txt", "two\n");
    let base_b = agent_b.git(&["rev-parse", "main"]);
    race_b_behind_a(&a, &b);

    let before = runs(&counter);
    let out = agent_b.run(&["get-task"]);
    out.expect(0);
    assert!(
        b.dir().join(".git/race-ran").exists(),
        "A merged in between"
    );
    assert_eq!(
        agent_a.state(),
        "INITIALIZING",
        "{}",
        std::fs::read_to_string(b.dir().join(".git/race.log")).unwrap_or_default()
    );
    assert_eq!(agent_b.state(), "INITIALIZING", "{}", out.stdout);
    assert_eq!(
        runs(&counter),
        before + 1,
        "the re-merge ran the gates once"
    );
    assert_eq!(
        remote_main_line(&bare)[..2],
        ["Merge branch 'feat/two'", "Merge branch 'feat/one'"]
    );
    let remote_main = remote_git(&bare, &["rev-parse", "main"]);
    assert_eq!(agent_b.git(&["rev-parse", "main"]), remote_main);
    assert_eq!(
        remote_git(&bare, &["rev-parse", "main^1"]),
        agent_a.git(&["rev-parse", "main"]),
        "B's merge sits on A's"
    );
    assert_eq!(remote_git(&bare, &["rev-parse", "main^1^1"]), base_b);
    let files = remote_git(&bare, &["ls-tree", "--name-only", "main"]);
    assert!(
        files.contains("one.txt") && files.contains("two.txt"),
        "{files}"
    );
    // B's record names its merge exactly.
    let state: serde_json::Value =
        serde_json::from_str(&agent_b.git(&["show", "refs/orchestrator/workflows/b:state.json"]))
            .unwrap();
    assert_eq!(state["main_tip"], remote_main.as_str());

    for agent in [&agent_a, &agent_b] {
        agent.run(&["sync"]).expect(0);
    }
    agent_a.run(&["get-task"]).expect(0);
    agent_a.says_nothing_moved_outside();
    agent_b.says_nothing_moved_outside();
}

/// The same race where both PRs write the same file: B's merge onto A's conflicts, B halts
/// with the conflict, and nothing is lost: the PR branch is as checked, main is A's.
#[test]
fn a_lost_race_whose_merge_conflicts_halts_with_the_branch_intact() {
    let (a, b, _dir, bare) = two_clones(CONFIG);
    let agent_a = Agent::of(&a, "a");
    let agent_b = Agent::of(&b, "b");
    agent_a.up_to_the_merge("feat: One", "same.txt", "from one\n");
    agent_b.up_to_the_merge("feat: Two", "same.txt", "from two\n");
    let checked = agent_b.git(&["rev-parse", "feat/two"]);
    race_b_behind_a(&a, &b);

    let out = agent_b.run(&["get-task"]);
    out.expect(10);
    assert!(
        out.stdout.contains("ERROR: Automated merge failed due to a conflict. Please resolve the conflict in branch 'feat/two'"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Conflicting files: same.txt."),
        "{}",
        out.stdout
    );
    assert_eq!(agent_b.state(), "HALTED");
    assert_eq!(agent_b.git(&["rev-parse", "feat/two"]), checked);
    let remote_main = remote_git(&bare, &["rev-parse", "main"]);
    assert_eq!(remote_main_line(&bare)[0], "Merge branch 'feat/one'");
    assert_eq!(agent_b.git(&["rev-parse", "main"]), remote_main);
    assert_eq!(
        agent_b.git(&["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
}

/// A linked worktree of `repo` at `path`, detached, whose config selects `workflow`.
fn linked_worktree<'a>(
    repo: &'a TestRepo,
    name: &str,
    workflow: &'a str,
) -> (Agent<'a>, tempfile::TempDir) {
    let parent = tempfile::tempdir().unwrap();
    let path = parent.path().canonicalize().unwrap().join(name);
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "--detach",
        path.to_str().unwrap(),
    ]);
    repo.git(&[
        "-C",
        path.to_str().unwrap(),
        "config",
        "--worktree",
        "orchestrate.workflow",
        workflow,
    ]);
    (
        Agent {
            repo,
            dir: path,
            workflow: None,
        },
        parent,
    )
}

/// Two agents in two linked worktrees of one clone (shared through a remote), main checked
/// out in the primary: each PR branch starts from main without checking it out, each merge
/// lands on main, the primary's clean checkout moves with it, and main reaches the remote; a
/// dirty primary blocks the merge, naming it.
#[test]
fn agents_in_linked_worktrees_merge_while_main_is_checked_out_in_the_primary() {
    let repo = TestRepo::with_config(CONFIG);
    repo.write("docs/plan.md", TWO_PRS);
    repo.commit_all("two PRs");
    let (_remote_dir, bare) = repo.share();
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    let (one, _one_dir) = linked_worktree(&repo, "one", "w1");
    let (two, _two_dir) = linked_worktree(&repo, "two", "w2");

    one.up_to_the_merge("feat: One", "one.txt", "one\n");
    two.up_to_the_merge("feat: Two", "two.txt", "two\n");
    let start = repo.git(&["rev-parse", "main"]).trim().to_string();

    one.run(&["get-task"]).expect(0);
    assert_eq!(one.state(), "INITIALIZING");
    let after_one = repo.git(&["rev-parse", "main"]).trim().to_string();
    assert_ne!(after_one, start);
    assert_eq!(
        one.git(&["rev-parse", "HEAD"]),
        after_one,
        "w1 is left detached at main"
    );
    assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "main");
    assert!(
        repo.dir().join("one.txt").exists(),
        "the primary's checkout moved with main"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "");

    // The primary has a change: main is not moved under it, and the merge says where.
    repo.write("run_tests.sh", "echo 'tests: ok (edited)'\n");
    let out = two.run(&["get-task"]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!(
            "main is checked out in the worktree {}, whose tracked files have uncommitted changes:",
            repo.dir().display()
        )),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("run_tests.sh"), "{}", out.stdout);
    assert_eq!(two.state(), "MERGING_BRANCH");
    assert_eq!(repo.git(&["rev-parse", "main"]).trim(), after_one);

    repo.git(&["checkout", "--quiet", "--", "run_tests.sh"]);
    two.run(&["get-task"]).expect(0);
    assert_eq!(two.state(), "INITIALIZING");
    let line = repo.git(&["log", "--first-parent", "--format=%s", "main"]);
    assert!(
        line.starts_with("Merge branch 'feat/two'\nMerge branch 'feat/one'\n"),
        "{line}"
    );
    assert!(repo.dir().join("two.txt").exists());
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "");
    assert_eq!(
        remote_git(&bare, &["rev-parse", "main"]),
        repo.git(&["rev-parse", "main"]).trim(),
        "each merge pushed main"
    );
    one.says_nothing_moved_outside();
    two.says_nothing_moved_outside();
}
