//! Archiving finished workflows (docs/refs.md, "The archive"): `archive` moves each finished
//! workflow's history into the one archive ref and drops its live ref; `log`, `audit --all`
//! and `board --all` still read it, and its name stays taken.

use crate::support::*;
use pretty_assertions::assert_eq;

/// `repo` with the master plan's only PR marked done on main, and workflows `names` each
/// idle: the agent said no PR is left.
fn idle_workflows(repo: &TestRepo, names: &[&str]) {
    let done = "# Plan\n## PR 1: feat: Add numbers [DONE]\n";
    if repo.git(&["show", "main:docs/plan.md"]) != done {
        repo.write("docs/plan.md", done);
        repo.commit_all("plan: PR 1 done");
    }
    for name in names {
        repo.run(&["--workflow", name, "get-task"]).expect(0);
        repo.run(&[
            "--workflow",
            name,
            "submit-work",
            "-s",
            &format!("{name}: all PRs are [DONE]"),
            "--no-pr-left",
        ])
        .expect(0);
    }
}

fn git(repo: &TestRepo, args: &[&str]) -> String {
    repo.git(args).trim_end().to_string()
}

/// The archive's index (docs/refs.md, "The archive"): its gitlinks, as `git ls-tree` lists
/// them, without the filter beside them.
fn archive_index(repo: &TestRepo) -> String {
    git(repo, &["ls-tree", "refs/orchestrator/archive"])
        .lines()
        .filter(|l| l.starts_with("160000 "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names the archive's index holds, in git's order.
fn index_names(repo: &TestRepo) -> String {
    archive_index(repo)
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(_, name)| name))
        .collect::<Vec<_>>()
        .join("\n")
}

fn live_workflows(repo: &TestRepo) -> Vec<String> {
    git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/orchestrator/workflows/",
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

fn tip_of(repo: &TestRepo, workflow: &str) -> String {
    git(
        repo,
        &[
            "rev-parse",
            &format!("refs/orchestrator/workflows/{workflow}"),
        ],
    )
}

#[test]
fn finished_workflows_leave_the_live_refs_for_the_archive_and_stay_readable() {
    let repo = TestRepo::new();
    idle_workflows(&repo, &["done-a", "done-b"]);
    // Started, not finished: it stays live.
    repo.run(&["--workflow", "working", "get-task"]).expect(0);
    let (a, b) = (tip_of(&repo, "done-a"), tip_of(&repo, "done-b"));
    let working = tip_of(&repo, "working");
    let log_a = repo
        .run(&["--workflow", "done-a", "log"])
        .expect(0)
        .stdout
        .clone();
    let audit_before = repo.run(&["audit", "--all"]).expect(0).stdout.clone();
    assert_eq!(
        audit_before.lines().last(),
        Some("audit of 4 workflows: 2 transitions replayed: clean")
    );

    let dry = repo.run(&["archive", "--dry-run"]).expect(0).stdout.clone();
    assert_eq!(
        dry,
        "would archive 2 finished workflows: done-a, done-b\nthe archive holds 2 workflows\n"
    );
    assert_eq!(live_workflows(&repo).len(), 3, "a dry run changes nothing");
    assert!(
        !repo
            .git_try(&["rev-parse", "--verify", "refs/orchestrator/archive"])
            .0
    );

    let out = repo.run(&["archive"]).expect(0).stdout.clone();
    assert_eq!(
        out,
        "archived 2 finished workflows: done-a, done-b\nthe archive holds 2 workflows\n"
    );
    assert_eq!(
        live_workflows(&repo),
        ["refs/orchestrator/workflows/working"]
    );
    assert_eq!(tip_of(&repo, "working"), working);
    // One tree indexes name → tip, beside the filter of its names (a blob, which the
    // commit's header names); the commit's further parents keep the histories reachable.
    let filter = git(
        &repo,
        &["rev-parse", "refs/orchestrator/archive:.archive-filter"],
    );
    assert_eq!(
        git(&repo, &["ls-tree", "refs/orchestrator/archive"]),
        format!(
            "100644 blob {filter}\t.archive-filter\n160000 commit {a}\tdone-a\n160000 commit {b}\tdone-b"
        )
    );
    assert!(
        git(&repo, &["cat-file", "commit", "refs/orchestrator/archive"])
            .contains(&format!("\norchestrate-archive-filter {filter}\n")),
        "the commit names its filter"
    );
    let parents = git(
        &repo,
        &[
            "rev-list",
            "--parents",
            "-n",
            "1",
            "refs/orchestrator/archive",
        ],
    );
    assert_eq!(parents.split(' ').skip(1).collect::<Vec<_>>(), [&a, &b]);
    let reachable = git(&repo, &["rev-list", "refs/orchestrator/archive"]);
    assert!(reachable.lines().any(|c| c == a) && reachable.lines().any(|c| c == b));

    // Still read: the log, the audit, the board with --all.
    assert_eq!(
        repo.run(&["--workflow", "done-a", "log"]).expect(0).stdout,
        log_a
    );
    assert_eq!(repo.run(&["audit", "--all"]).expect(0).stdout, audit_before);
    let board = repo.run(&["board", "--json"]).expect(0).json();
    let names = |board: &serde_json::Value| -> Vec<(String, bool)> {
        board["workflows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["workflow"].as_str().unwrap().to_string(),
                    w["archived"].as_bool().unwrap_or(false),
                )
            })
            .collect()
    };
    assert_eq!(names(&board), [("working".to_string(), false)]);
    let all = repo.run(&["board", "--all", "--json"]).expect(0).json();
    assert_eq!(
        names(&all),
        [
            ("done-a".to_string(), true),
            ("done-b".to_string(), true),
            ("working".to_string(), false)
        ]
    );
    assert_eq!(all["workflows"][0]["state"], "INITIALIZING");
    assert_eq!(all["workflows"][0]["local_tip"], a.as_str());
    repo.run(&["board", "--all"])
        .expect(0)
        .says("done-a (archived)");

    // The name stays taken: nothing is created under it.
    let again = repo.run(&["--workflow", "done-a", "get-task"]);
    again.expect(2).warns(&format!(
        "workflow \"done-a\" is finished and archived in refs/orchestrator/archive (its last tip is {a}): its name stays taken"
    ));
    assert_eq!(
        live_workflows(&repo),
        ["refs/orchestrator/workflows/working"]
    );

    // Nothing left to archive; the archive keeps what it holds.
    let archive = git(&repo, &["rev-parse", "refs/orchestrator/archive"]);
    assert_eq!(
        repo.run(&["archive"]).expect(0).stdout,
        "no finished workflow to archive\nthe archive holds 2 workflows\n"
    );
    assert_eq!(
        git(&repo, &["rev-parse", "refs/orchestrator/archive"]),
        archive
    );

    // A later archive chains on the first: the first parent is the archive before it.
    idle_workflows(&repo, &["done-c"]);
    let c = tip_of(&repo, "done-c");
    repo.run(&["archive"])
        .expect(0)
        .says("archived 1 finished workflow: done-c");
    let parents = git(
        &repo,
        &[
            "rev-list",
            "--parents",
            "-n",
            "1",
            "refs/orchestrator/archive",
        ],
    );
    assert_eq!(
        parents.split(' ').skip(1).collect::<Vec<_>>(),
        [&archive, &c]
    );
    assert_eq!(index_names(&repo), "done-a\ndone-b\ndone-c");
    assert_eq!(git(&repo, &["fsck", "--no-dangling", "--no-progress"]), "");
}

fn remote_refs(bare: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["--git-dir", &bare.display().to_string()])
        .args(["for-each-ref", "--format=%(refname)", "refs/orchestrator/"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `sync` carries the archive: the archiving clone pushes it with the deletion of the live
/// refs it holds, in one atomic push; another clone takes it in and drops its own copies; two
/// clones that archived apart end with one archive holding both.
#[test]
fn the_archive_travels_with_sync_and_two_archives_become_one() {
    let a = TestRepo::new();
    let (_remote, bare) = a.share();
    idle_workflows(&a, &["done-a"]);
    a.run(&["--workflow", "working", "get-task"]).expect(0);
    a.run(&["sync"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    b.run(&["sync"]).expect(0);
    assert_eq!(
        live_workflows(&b),
        [
            "refs/orchestrator/workflows/done-a",
            "refs/orchestrator/workflows/working"
        ]
    );
    let done_a = tip_of(&a, "done-a");

    a.run(&["archive"]).expect(0);
    a.run(&["sync"]).expect(0);
    assert_eq!(
        remote_refs(&bare),
        [
            "refs/orchestrator/archive",
            "refs/orchestrator/workflows/working"
        ],
        "the archive and the deletion landed together"
    );
    b.run(&["sync"]).expect(0);
    assert_eq!(live_workflows(&b), ["refs/orchestrator/workflows/working"]);
    assert_eq!(archive_index(&b), format!("160000 commit {done_a}\tdone-a"));
    b.run(&["--workflow", "done-a", "log"])
        .expect(0)
        .says("no-pr-left");
    // Another sync changes nothing.
    let before = git(&b, &["rev-parse", "refs/orchestrator/archive"]);
    b.run(&["sync"]).expect(0);
    assert_eq!(git(&b, &["rev-parse", "refs/orchestrator/archive"]), before);

    // Archived apart: B's archive is made one with A's, over the remote's.
    idle_workflows(&a, &["done-c"]);
    a.run(&["archive"]).expect(0);
    a.run(&["sync"]).expect(0);
    idle_workflows(&b, &["done-b"]);
    b.run(&["archive"]).expect(0);
    b.run(&["sync"]).expect(0);
    a.run(&["sync"]).expect(0);
    for clone in [&a, &b] {
        assert_eq!(index_names(clone), "done-a\ndone-b\ndone-c");
        assert_eq!(
            live_workflows(clone),
            ["refs/orchestrator/workflows/working"]
        );
    }
    assert_eq!(
        remote_refs(&bare),
        [
            "refs/orchestrator/archive",
            "refs/orchestrator/workflows/working"
        ]
    );
    assert_eq!(
        git(&a, &["rev-parse", "refs/orchestrator/archive"]),
        git(&b, &["rev-parse", "refs/orchestrator/archive"])
    );
}

/// The server hook (`attest --install-server-hook`), over a real `git daemon`: an archiving
/// push (the archive, and the deletion of the live refs it holds at their tips, atomic) is
/// accepted; an archive that drops, rewrites or indexes what its history does not hold is
/// refused, and so is the deletion of a live workflow the archive does not hold.
#[test]
fn the_server_accepts_an_archiving_push_and_refuses_an_archive_that_loses_anything() {
    let repo = TestRepo::new();
    let server = crate::landing::Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main"])
        .expect(0);
    idle_workflows(&repo, &["done-a", "done-b"]);
    repo.run(&["--workflow", "working", "get-task"]).expect(0);
    repo.run(&["sync"]).expect(0);
    let working = tip_of(&repo, "working");
    let done_a = tip_of(&repo, "done-a");

    // A deletion of a live workflow, alone or beside an archive that does not hold it.
    let push = |args: &[&str]| {
        let mut all = vec!["push", "--porcelain", "--atomic", "--no-verify", "origin"];
        all.extend(args);
        let out = repo.git_run(&all);
        (out.code == 0, format!("{}{}", out.stdout, out.stderr))
    };
    let (ok, said) = push(&[":refs/orchestrator/workflows/working"]);
    assert!(!ok, "{said}");
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/workflows/working"),
        Some(working.clone())
    );

    repo.run(&["archive"]).expect(0).says("done-a, done-b");
    let archive = git(&repo, &["rev-parse", "refs/orchestrator/archive"]);
    let (ok, said) = push(&[
        &format!("{archive}:refs/orchestrator/archive"),
        ":refs/orchestrator/workflows/working",
    ]);
    assert!(!ok, "{said}");
    assert!(said.contains("deletes workflow working's chain"), "{said}");
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        None,
        "atomic: nothing landed"
    );

    // The archiving push, as sync makes it.
    repo.run(&["sync"]).expect(0);
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        Some(archive.clone())
    );
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/workflows/done-a"),
        None
    );
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/workflows/working"),
        Some(working)
    );

    // An archive commit over the server's that drops done-b.
    let tree = repo.git_with_stdin(
        &["mktree"],
        format!("160000 commit {done_a}\tdone-a\n").as_bytes(),
    );
    let tree = tree.trim();
    let drops = git(
        &repo,
        &[
            "commit-tree",
            tree,
            "-p",
            &archive,
            "-m",
            "archive: 0 workflows",
        ],
    );
    let (ok, said) = push(&[&format!("{drops}:refs/orchestrator/archive")]);
    assert!(!ok, "{said}");
    assert!(said.contains("drops archived workflow done-b"), "{said}");

    // One that indexes a commit its history does not hold (main's tip).
    let main = git(&repo, &["rev-parse", "main"]);
    let listing = archive_index(&repo);
    let tree = repo.git_with_stdin(
        &["mktree"],
        format!("{listing}\n160000 commit {main}\tstray\n").as_bytes(),
    );
    let stray = git(
        &repo,
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            &archive,
            "-m",
            "archive: 1 workflow",
        ],
    );
    let (ok, said) = push(&[&format!("{stray}:refs/orchestrator/archive")]);
    assert!(!ok, "{said}");
    assert!(said.contains("indexes workflow stray at"), "{said}");

    // One that holds the same index under a name filter that rules every name out (which
    // would hide done-a and done-b from every clone's sync).
    let raw = git(&repo, &["cat-file", "commit", &archive]);
    let (headers, message) = raw.split_once("\n\n").expect("a commit");
    let empty = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        b"git-orchestrate archive filter 1: sha1 prefixes of 4 bytes\n",
    );
    let mut forged = Vec::new();
    for line in headers.lines() {
        if line.starts_with("parent ") {
            continue;
        }
        if line.starts_with("orchestrate-archive-filter ") {
            forged.push(format!("orchestrate-archive-filter {}", empty.trim()));
            continue;
        }
        forged.push(line.to_string());
        if line.starts_with("tree ") {
            forged.push(format!("parent {archive}"));
        }
    }
    assert!(
        forged
            .iter()
            .any(|l| l.starts_with("orchestrate-archive-filter ")),
        "the archive commit names its filter: {headers}"
    );
    let hiding = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        format!("{}\n\n{message}", forged.join("\n")).as_bytes(),
    );
    let (ok, said) = push(&[&format!("{}:refs/orchestrator/archive", hiding.trim())]);
    assert!(!ok, "{said}");
    assert!(
        said.contains("its name filter (orchestrate-archive-filter ")
            && said.contains(
                "is not the one its index makes: readers rule archived workflows out by it"
            ),
        "{said}"
    );

    // Deleting the archive.
    let (ok, said) = push(&[":refs/orchestrator/archive"]);
    assert!(!ok, "{said}");
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        Some(archive)
    );
}

/// A workflow that moves while `archive` runs (after the archive ref moved, before the live
/// refs go) keeps its live ref and is named; the others are archived all the same.
#[test]
fn a_workflow_that_moves_during_the_archive_keeps_its_live_ref_and_is_named() {
    let repo = TestRepo::new();
    idle_workflows(&repo, &["done-a", "done-b"]);
    let a = tip_of(&repo, "done-a");
    let pause = repo.temp_dir().join("pause-archive");
    let _ = std::fs::remove_file(&pause);
    let child = repo
        .command(BIN, ["archive"])
        .env("GIT_ORCHESTRATE_PAUSE_AT", "archive-written")
        .env("GIT_ORCHESTRATE_PAUSE_FILE", &pause)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start archive");
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&pause).is_ok_and(|pid| !pid.is_empty()) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "archive never reached its pause point"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // done-a moves on (by hand, to its first transition) while the archive holds its old tip.
    let moved = git(&repo, &["rev-parse", &format!("{a}^")]);
    repo.git(&[
        "update-ref",
        "refs/orchestrator/workflows/done-a",
        &moved,
        &a,
    ]);
    std::fs::remove_file(&pause).expect("let archive go on");
    let out = Run::from(child.wait_with_output().expect("archive"));
    out.expect(0);
    assert_eq!(
        out.stdout,
        "archived 1 finished workflow: done-b\n\
         workflow done-a moved on while it was archived: its ref stays, and the next `archive` looks again\n\
         the archive holds 2 workflows\n"
    );
    assert_eq!(
        live_workflows(&repo),
        vec!["refs/orchestrator/workflows/done-a".to_string()]
    );
    assert_eq!(tip_of(&repo, "done-a"), moved);
}

fn local_claims(repo: &TestRepo) -> Vec<String> {
    git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname:lstrip=3)",
            "refs/orchestrator/claims/",
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

/// `archive` at the clock `now` (seconds since the epoch; a debug build reads it).
fn archive_at(repo: &TestRepo, now: i64, args: &[&str]) -> Run {
    let mut cmd = repo.command(BIN, args);
    cmd.env("GIT_ORCHESTRATE_NOW", now.to_string());
    feed(cmd, "")
}

/// The claims no live workflow holds leave with the archive: an archived workflow's at once,
/// another's once it lapsed with no live workflow behind it; a live workflow's stays, lapsed
/// or not, and so does a claim in force whose workflow this clone has not seen.
#[test]
fn archive_removes_the_claims_of_archived_workflows_and_lapsed_ones_nobody_holds() {
    let repo = TestRepo::new();
    idle_workflows(&repo, &["done-a"]);
    repo.run(&["--workflow", "working", "get-task"]).expect(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // Claims taken by a human for each workflow (no remote: the local refs are the claims).
    for (workflow, pr) in [
        ("done-a", "pr-done"),
        ("working", "pr-working"),
        ("gone", "pr-gone"),
    ] {
        let mut cmd = repo.command(BIN, ["--workflow", workflow, "claim", "steal", pr]);
        cmd.env("GIT_ORCHESTRATE_HUMAN", "1")
            .env("GIT_ORCHESTRATE_NOW", now.to_string());
        feed(cmd, "").expect(0);
    }

    let dry = archive_at(&repo, now, &["archive", "--dry-run"]);
    assert_eq!(
        dry.expect(0).stdout,
        "would archive 1 finished workflow: done-a\n\
         would remove 1 claim no live workflow holds (archived or lapsed): pr-done\n\
         the archive holds 1 workflow\n"
    );
    assert_eq!(local_claims(&repo), ["pr-done", "pr-gone", "pr-working"]);

    assert_eq!(
        archive_at(&repo, now, &["archive"]).expect(0).stdout,
        "archived 1 finished workflow: done-a\n\
         removed 1 claim no live workflow holds (archived or lapsed): pr-done\n\
         the archive holds 1 workflow\n"
    );
    assert_eq!(local_claims(&repo), ["pr-gone", "pr-working"]);
    assert_eq!(
        index_names(&repo),
        "done-a",
        "a claim is not archived: it is a lease with no history"
    );

    // Three hours on, both lapsed: gone's has no live workflow, working's has one.
    let later = now + 3 * 3600;
    let json = archive_at(&repo, later, &["archive", "--dry-run", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["claims"], serde_json::json!(["pr-gone"]));
    assert_eq!(json["archived"], serde_json::json!([]));
    assert_eq!(
        archive_at(&repo, later, &["archive"]).expect(0).stdout,
        "no finished workflow to archive\n\
         removed 1 claim no live workflow holds (archived or lapsed): pr-gone\n\
         the archive holds 1 workflow\n"
    );
    assert_eq!(local_claims(&repo), ["pr-working"]);
    assert_eq!(
        archive_at(&repo, later, &["archive"]).expect(0).stdout,
        "no finished workflow to archive\nthe archive holds 1 workflow\n"
    );
}

/// A claim the merge did not release (its local ref and record lost) stays on the remote
/// after its workflow finished; `sync` deletes it there with the archive that holds its
/// workflow, in the same atomic push, and the server hook (over a real `git daemon`)
/// accepts that push: the holder's workflow works on no PR.
#[test]
fn sync_deletes_an_archived_workflows_claim_on_the_server_and_the_hook_accepts_it() {
    const CLAIM: &str = "refs/orchestrator/claims/pr-1-feat-add-numbers";
    let repo = TestRepo::new();
    let server = crate::landing::Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main"])
        .expect(0);
    crate::landing::up_to_the_merge(&repo, "w", "feat: Add numbers", "add.txt", "made\n");
    let held = server
        .rev(&repo, CLAIM)
        .expect("the plan's claim is on the server");
    // The merge releases what this clone knows it holds: it knows nothing now.
    repo.git(&["update-ref", "-d", CLAIM]);
    let _ = std::fs::remove_dir_all(repo.dir().join(".git/orchestrator/claims-written"));
    repo.run(&["--workflow", "w", "get-task"]).expect(0);
    repo.run(&[
        "--workflow",
        "w",
        "submit-work",
        "-s",
        "all PRs are [DONE]",
        "--no-pr-left",
    ])
    .expect(0);
    repo.run(&["sync"]).expect(0);
    assert_eq!(server.rev(&repo, CLAIM), Some(held), "left behind");

    repo.run(&["archive"])
        .expect(0)
        .says("archived 1 finished workflow: w");
    let out = repo.run(&["sync"]);
    out.expect(0).says("claims archived: pr-1-feat-add-numbers");
    assert_eq!(server.rev(&repo, CLAIM), None);
    assert_eq!(server.rev(&repo, "refs/orchestrator/workflows/w"), None);
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        Some(git(&repo, &["rev-parse", "refs/orchestrator/archive"]))
    );
    // Nothing left to delete: the next sync pushes nothing.
    let again = repo.run(&["sync", "--json"]).expect(0).json();
    assert_eq!(again["claims"]["archived"], serde_json::json!([]));
    assert_eq!(again["pushed"], serde_json::json!([]));
}

/// `archive --restore NAME` brings an archived workflow's live ref back at its archived tip,
/// and an archive commit records that it left; the workflow goes on from there. `sync`
/// carries the restore to the remote and to another clone, also when that clone archived
/// something else meanwhile.
#[test]
fn a_restored_workflow_goes_on_and_sync_carries_the_restore() {
    let a = TestRepo::new();
    let (_remote, bare) = a.share();
    idle_workflows(&a, &["done-a", "done-b"]);
    let tip = tip_of(&a, "done-a");
    a.run(&["archive"]).expect(0);
    a.run(&["sync"]).expect(0);
    let b = TestRepo::clone_of(&bare);
    b.run(&["sync"]).expect(0);
    assert_eq!(live_workflows(&b), Vec::<String>::new());
    let archive = git(&a, &["rev-parse", "refs/orchestrator/archive"]);

    assert_eq!(
        a.run(&["archive", "--restore", "done-a", "--dry-run"])
            .expect(0)
            .stdout,
        format!("would restore workflow done-a at {tip} from the archive\n")
    );
    assert_eq!(
        live_workflows(&a),
        Vec::<String>::new(),
        "a dry run changes nothing"
    );
    assert_eq!(
        a.run(&["archive", "--restore", "done-a"]).expect(0).stdout,
        format!(
            "restored workflow done-a at {tip}: its live ref is back, and the archive no longer holds it\n"
        )
    );
    assert_eq!(live_workflows(&a), ["refs/orchestrator/workflows/done-a"]);
    assert_eq!(tip_of(&a, "done-a"), tip);
    assert_eq!(index_names(&a), "done-b");
    assert_eq!(
        git(
            &a,
            &["log", "-1", "--format=%P %s", "refs/orchestrator/archive"]
        ),
        format!("{archive} archive: restore done-a")
    );

    // Refused, changing nothing: a live ref of that name, a name the archive does not hold.
    let after = git(&a, &["rev-parse", "refs/orchestrator/archive"]);
    a.run(&["archive", "--restore", "done-a"])
        .expect(2)
        .warns(&format!(
            "workflow done-a has a live ref (at {tip}): nothing is restored over it"
        ));
    a.run(&["archive", "--restore", "nope"])
        .expect(2)
        .warns("workflow nope is not in the archive: nothing to restore");
    assert_eq!(git(&a, &["rev-parse", "refs/orchestrator/archive"]), after);

    // The workflow goes on from its archived tip: a new PR in the master plan, planned.
    a.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n## PR 2: feat: More\n",
    );
    a.commit_all("plan: PR 2");
    a.run(&["--workflow", "done-a", "get-task"])
        .expect(0)
        .says("GOAL: plan the next pull request.");
    let mut plan = a.command(
        BIN,
        [
            "--workflow",
            "done-a",
            "submit-work",
            "--summary",
            "the plan",
            "--plan",
            "-",
        ],
    );
    plan.current_dir(a.dir());
    feed(plan, &one_task_plan("feat: More", "more.sh")).expect(0);
    let now = tip_of(&a, "done-a");
    assert!(
        a.git_try(&["merge-base", "--is-ancestor", &tip, &now]).0,
        "the chain grows from the archived tip"
    );
    a.run(&["--workflow", "done-a", "audit"]).expect(0);

    // Meanwhile B archives another workflow: the two archives become one, done-a restored.
    idle_workflows(&b, &["done-c"]);
    b.run(&["archive"]).expect(0);
    b.run(&["sync"]).expect(0);
    a.run(&["sync"]).expect(0);
    b.run(&["sync"]).expect(0);
    for clone in [&a, &b] {
        assert_eq!(index_names(clone), "done-b\ndone-c");
        assert_eq!(
            live_workflows(clone),
            ["refs/orchestrator/workflows/done-a"]
        );
        assert_eq!(tip_of(clone, "done-a"), now);
    }
    assert_eq!(
        remote_refs(&bare)
            .into_iter()
            .filter(|r| !r.contains("/claims/"))
            .collect::<Vec<_>>(),
        [
            "refs/orchestrator/archive",
            "refs/orchestrator/workflows/done-a"
        ]
    );
}

/// The server hook accepts a restoring push (the archive without the workflow, and its live
/// ref at the very tip archived) and still refuses an archive that drops a workflow without
/// bringing it back.
#[test]
fn the_server_accepts_a_restore_pushed_with_its_live_ref() {
    let repo = TestRepo::new();
    let server = crate::landing::Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main"])
        .expect(0);
    idle_workflows(&repo, &["done-a", "done-b"]);
    let tip = tip_of(&repo, "done-a");
    repo.run(&["sync"]).expect(0);
    repo.run(&["archive"]).expect(0);
    repo.run(&["sync"]).expect(0);
    repo.run(&["archive", "--restore", "done-a"]).expect(0);
    let restored = git(&repo, &["rev-parse", "refs/orchestrator/archive"]);

    // The archive alone, without the live ref: it drops an archived workflow.
    let out = repo.git_run(&[
        "push",
        "--porcelain",
        "--no-verify",
        "origin",
        &format!("{restored}:refs/orchestrator/archive"),
    ]);
    assert_ne!(out.code, 0);
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("drops archived workflow done-a"),
        "{}",
        out.stderr
    );

    repo.run(&["sync"]).expect(0);
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        Some(restored)
    );
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/workflows/done-a"),
        Some(tip)
    );
}

/// A workflow restored and gone on before the clone syncs: its live ref arrives at a chain
/// grown from the archived tip, and the server hook takes the restore with it.
#[test]
fn the_server_accepts_a_restored_workflow_that_went_on_before_it_synced() {
    let repo = TestRepo::new();
    let server = crate::landing::Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main"])
        .expect(0);
    idle_workflows(&repo, &["done-a", "done-b"]);
    let tip = tip_of(&repo, "done-a");
    repo.run(&["sync"]).expect(0);
    repo.run(&["archive"]).expect(0);
    repo.run(&["sync"]).expect(0);
    repo.run(&["archive", "--restore", "done-a"]).expect(0);
    repo.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers [DONE]\n## PR 2: feat: More\n",
    );
    repo.commit_all("plan: PR 2");
    let mut plan = repo.command(
        BIN,
        [
            "--workflow",
            "done-a",
            "submit-work",
            "--summary",
            "the plan",
            "--plan",
            "-",
        ],
    );
    plan.current_dir(repo.dir());
    feed(plan, &one_task_plan("feat: More", "more.sh")).expect(0);
    let now = tip_of(&repo, "done-a");
    assert_ne!(now, tip);
    repo.run(&["sync"]).expect(0);
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/workflows/done-a"),
        Some(now)
    );
    assert_eq!(index_names(&repo), "done-b");
    assert_eq!(
        server.rev(&repo, "refs/orchestrator/archive"),
        Some(git(&repo, &["rev-parse", "refs/orchestrator/archive"]))
    );
}

/// `[archive] auto` (off by default): `sync` archives the finished workflows once at least
/// `after` are, and pushes the archive in the same sync; below the threshold, or off, it
/// archives nothing.
#[test]
fn sync_archives_by_itself_past_the_configured_threshold_only() {
    // Off by default: two finished workflows stay live.
    let plain = TestRepo::new();
    let (_plain_remote, _) = plain.share();
    idle_workflows(&plain, &["done-a", "done-b"]);
    let json = plain.run(&["sync", "--json"]).expect(0).json();
    assert_eq!(json.get("archived"), None);
    assert_eq!(live_workflows(&plain).len(), 2);

    let repo = TestRepo::with_config(&format!("{CONFIG}\n[archive]\nauto = true\nafter = 2\n"));
    let (_remote, bare) = repo.share();
    idle_workflows(&repo, &["done-a"]);
    repo.run(&["--workflow", "working", "get-task"]).expect(0);
    let out = repo.run(&["sync"]).expect(0).stdout.clone();
    assert!(!out.contains("[archive] auto"), "{out}");
    assert_eq!(
        live_workflows(&repo).len(),
        2,
        "1 finished: below the threshold"
    );

    idle_workflows(&repo, &["done-b"]);
    repo.run(&["sync"])
        .expect(0)
        .says("  [archive] auto: archived 2 finished workflows (the archive holds 2)\n");
    assert_eq!(
        live_workflows(&repo),
        ["refs/orchestrator/workflows/working"]
    );
    assert_eq!(
        remote_refs(&bare),
        [
            "refs/orchestrator/archive",
            "refs/orchestrator/workflows/working"
        ],
        "the same sync pushed the archive"
    );
    let json = repo.run(&["sync", "--json"]).expect(0).json();
    assert_eq!(json.get("archived"), None, "nothing more to archive");
}

/// One ticket of workflow `name` run up to its landing (as `tickets::finished_ticket`): all
/// that is left is `complete-ticket`.
fn ticket_to_land(repo: &TestRepo, name: &str) {
    let run = |args: &[&str]| {
        let mut all = vec!["--workflow", name];
        all.extend_from_slice(args);
        repo.run(&all)
    };
    run(&["ticket", "new", "--title", name]).expect(0);
    run(&[
        "assign",
        "--role",
        "manager",
        "--mode",
        "implementation",
        "--goal",
        name,
        "--acceptance-criteria",
        "its test passes",
        "--file-to-modify",
        "src/**",
        "--file-to-modify",
        "tests/**",
    ])
    .expect(0);
    crate::tickets::honest_work(repo, name);
    let (code, test) = (format!("src/{name}.sh"), format!("tests/{name}.sh"));
    run(&[
        "subtask-complete",
        "--role",
        "developer",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "done",
        "--file",
        &code,
        "--file",
        &test,
    ])
    .expect(0);
    run(&[
        "update-subtask",
        "--role",
        "manager",
        "--status",
        "complete",
        "--notes",
        "checked",
    ])
    .expect(0);
}

/// One ticket of workflow `name` run to its landing: what `complete-ticket` said.
fn ticket_landed(repo: &TestRepo, name: &str) -> String {
    ticket_to_land(repo, name);
    repo.run(&["--workflow", name, "complete-ticket", "--summary", name])
        .expect(0)
        .stdout
        .clone()
}

/// `[archive] auto` at a landing: once a ticket's merge is recorded, the finished workflows
/// are archived when at least `after` are, the one that just landed among them; below the
/// threshold nothing is.
#[test]
fn a_landing_archives_the_finished_workflows_past_the_threshold_itself_included() {
    let repo = crate::tickets::repo();
    let config = std::fs::read_to_string(repo.dir().join(".orchestrate.toml")).expect("config");
    repo.write(
        ".orchestrate.toml",
        &format!("{config}\n[archive]\nauto = true\nafter = 2\n"),
    );
    repo.commit_all("archive by itself");

    let first = ticket_landed(&repo, "one");
    assert!(
        !first.contains("[archive]"),
        "1 finished: below the threshold\n{first}"
    );
    assert_eq!(live_workflows(&repo), ["refs/orchestrator/workflows/one"]);
    let one = tip_of(&repo, "one");

    let second = ticket_landed(&repo, "two");
    assert!(
        second.contains("; [archive] auto: archived 2 finished workflows (the archive holds 2)"),
        "{second}"
    );
    assert_eq!(live_workflows(&repo), Vec::<String>::new());
    // Objects first, the ref last: the archive holds each at its tip, and reads them.
    let index = archive_index(&repo);
    assert!(
        index.contains(&format!("160000 commit {one}\tone")),
        "{index}"
    );
    assert!(index.contains("\ttwo"), "{index}");
    repo.run(&["audit", "--all"]).expect(0);
    repo.run(&["--workflow", "two", "log"]).expect(0);
}

/// A kill inside the landing's archive, once the archive commit is the archive ref's and
/// before the live refs go, leaves both naming the workflows: nothing is lost, `audit` finds
/// nothing wrong, and the next `archive` completes it.
#[test]
fn a_kill_inside_the_landings_archive_leaves_both_and_the_next_archive_completes_it() {
    let repo = crate::tickets::repo();
    let config = std::fs::read_to_string(repo.dir().join(".orchestrate.toml")).expect("config");
    repo.write(
        ".orchestrate.toml",
        &format!("{config}\n[archive]\nauto = true\nafter = 1\n"),
    );
    repo.commit_all("archive by itself");
    ticket_to_land(&repo, "one");
    let pause = repo.temp_dir().join("pause-landing-archive");
    let _ = std::fs::remove_file(&pause);
    let mut child = repo
        .command(
            BIN,
            ["--workflow", "one", "complete-ticket", "--summary", "one"],
        )
        .env("GIT_ORCHESTRATE_PAUSE_AT", "archive-written")
        .env("GIT_ORCHESTRATE_PAUSE_FILE", &pause)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start complete-ticket");
    while !std::fs::read_to_string(&pause).is_ok_and(|pid| !pid.is_empty()) {
        let ended = child.try_wait().expect("complete-ticket");
        assert!(
            ended.is_none(),
            "ended ({ended:?}) before the archive was written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let tip = tip_of(&repo, "one");
    let index = archive_index(&repo);
    assert_eq!(index, format!("160000 commit {tip}\tone"));
    assert_eq!(live_workflows(&repo), ["refs/orchestrator/workflows/one"]);
    repo.run(&["audit", "--all"]).expect(0);

    repo.run(&["archive"])
        .expect(0)
        .says("archived 1 finished workflow: one\nthe archive holds 1 workflow\n");
    assert_eq!(live_workflows(&repo), Vec::<String>::new());
    assert_eq!(archive_index(&repo), index);
}

/// `[archive] auto` at `get-task`'s landing of a PR: the finished workflows (two done
/// tickets here) are archived once at least `after` are, and `get-task` says so; the lander,
/// between PRs, is not finished and stays.
#[test]
fn get_tasks_landing_archives_the_finished_workflows_past_the_threshold() {
    let archive = |after: u32| format!("{CONFIG}\n[archive]\nauto = true\nafter = {after}\n");
    let repo = TestRepo::with_config(&archive(3));
    // The tickets' tests run too: a ticket's subtask is judged by them.
    repo.write("run_tests.sh", crate::tickets::RUNNER);
    repo.commit_all("run every test");
    ticket_landed(&repo, "t1");
    ticket_landed(&repo, "t2");
    assert_eq!(live_workflows(&repo).len(), 2, "2 finished: below 3");
    repo.write(".orchestrate.toml", &archive(2));
    repo.commit_all("archive past 2");
    let run = |args: &[&str]| {
        let mut all = vec!["--workflow", "lander"];
        all.extend_from_slice(args);
        repo.run(&all)
    };
    run(&["get-task"]).expect(0);
    let mut cmd = repo.command(
        BIN,
        [
            "--workflow",
            "lander",
            "submit-work",
            "-s",
            "the plan",
            "--plan",
            "-",
        ],
    );
    cmd.current_dir(repo.dir());
    feed(cmd, &one_task_plan("feat: Add numbers", "sum.txt")).expect(0);
    run(&["get-task"]).expect(0);
    run(&[
        "submit-work",
        "-s",
        "red",
        "--test-command",
        "test -e sum.txt",
    ])
    .expect(3);
    run(&[
        "submit-work",
        "-s",
        "missing",
        "--analysis-decision",
        "SUCCESS",
    ])
    .expect(0);
    repo.write("sum.txt", "sum\n");
    run(&[
        "submit-work",
        "-s",
        "green",
        "--test-command",
        "test -e sum.txt",
    ])
    .expect(0);
    run(&["checkpoint"]).expect(0);
    run(&["get-task"]).expect(0);
    run(&["submit-work", "-s", "squashed", "--squash"]).expect(0);
    run(&["submit-work", "-s", "plan updated", "--mark-done"]).expect(0);
    let out = run(&["get-task"]).expect(0).stdout.clone();
    assert!(
        out.contains("[archive] auto: archived 2 finished workflows (the archive holds 2)."),
        "{out}"
    );
    assert_eq!(
        live_workflows(&repo),
        ["refs/orchestrator/workflows/lander"]
    );
}
