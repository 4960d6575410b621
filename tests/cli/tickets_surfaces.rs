//! Ticket workflows (docs/tickets.md) on every surface that is not a ticket tool: `status`,
//! `log`, `board`, `audit`, `sync` between two clones, and the installed git hooks, with
//! the real binary and real repositories.

use serde_json::Value;

use crate::support::{REF, TestRepo};

/// A ticket with its first subtask assigned, on its branch `ticket/add-numbers`.
fn assigned(repo: &TestRepo) {
    repo.run(&["ticket", "new", "--title", "Add numbers"])
        .expect(0);
    repo.run(&[
        "assign",
        "--mode",
        "implementation",
        "--goal",
        "write add.sh",
        "--acceptance-criteria",
        "add.sh prints 5",
        "--file-to-modify",
        "add.sh",
    ])
    .expect(0);
}

/// The developer's commit and report on the checked-out ticket branch.
fn reported(repo: &TestRepo) {
    repo.write("add.sh", "echo 5\n");
    repo.commit_all("add");
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "add.sh added",
        "--file",
        "add.sh",
    ])
    .expect(0);
}

fn problems(repo: &TestRepo) -> Vec<String> {
    let out = repo.run(&["audit", "--all", "--json"]);
    out.json()["problems"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|p| p["problem"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn status_log_board_and_audit_show_an_honest_ticket_run() {
    let repo = TestRepo::new();
    assigned(&repo);
    let status = repo.run(&["status"]);
    status
        .expect(0)
        .says("state     DEVELOPER · the developer's turn")
        .says("ticket    Add numbers · 0 of 1 subtasks complete")
        .says("branch    ticket/add-numbers (checked out)")
        .says("subtask   S1 in-progress \"write add.sh\" · current")
        .says("next      The developer commits its work");
    reported(&repo);
    let json = repo.run(&["status", "--json"]).expect(0).json();
    assert_eq!(json["kind"], "ticket");
    assert_eq!(json["state"], "MANAGER");
    assert_eq!(json["turn"], "manager");
    assert_eq!(json["current"], "S1");
    assert_eq!(json["waiting"]["subtask"], "S1");
    assert_eq!(json["waiting"]["observed"], "pass");
    assert_eq!(json["contradictions"], 0);
    assert_eq!(json["subtasks"][0]["status"], "in-progress");
    // Read-only: status wrote nothing.
    let tip = repo.tip();
    repo.run(&["status"])
        .expect(0)
        .says("report    S1 reported complete (build pass)")
        .says("observed gates: pass · 0 contradiction(s)");
    assert_eq!(repo.tip(), tip);

    // The manager rejects once: the rejection shows.
    repo.run(&[
        "update-subtask",
        "--status",
        "rejected",
        "--notes",
        "print 5 and a newline",
    ])
    .expect(0);
    repo.run(&["status"])
        .expect(0)
        .says("subtask   S1 rejected \"write add.sh\" · 1 rejection(s)");

    let board = repo.run(&["board"]);
    board
        .expect(0)
        .says("MANAGER")
        .says("ticket \"Add numbers\" (ticket/add-numbers) 0/1");
    assert!(!board.stdout.contains("UNREADABLE"), "{}", board.stdout);
    let row = &repo.run(&["board", "--json"]).expect(0).json()["workflows"][0];
    assert_eq!(row["kind"], "ticket");
    assert_eq!(row["state"], "MANAGER");
    assert_eq!(row["pr_title"], "Add numbers");
    assert_eq!(row["branch"], "ticket/add-numbers");
    assert_eq!(row["progress"]["total"], 1);

    let log = repo.run(&["log", "--json"]).expect(0).json();
    let entries = log["entries"].as_array().expect("entries");
    let events: Vec<&str> = entries
        .iter()
        .map(|e| e["event"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        events,
        ["update-subtask", "subtask-complete", "assign", "ticket-new"]
    );
    assert!(entries.iter().all(|e| e["kind"] == "ticket"), "{log}");
    repo.run(&["log"])
        .expect(0)
        .says("update-subtask: MANAGER -> MANAGER")
        .says("S1 rejected: print 5 and a newline");

    // Reassigned, reported, accepted, completed and merged: the audit replays it all.
    repo.run(&[
        "assign",
        "--mode",
        "implementation",
        "--goal",
        "write add.sh",
        "--acceptance-criteria",
        "add.sh prints 5",
    ])
    .expect(0);
    repo.write("add.sh", "echo 5 # five\n");
    repo.commit_all("add, again");
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "again",
        "--file",
        "add.sh",
    ])
    .expect(0);
    repo.run(&["update-subtask", "--status", "complete", "--notes", "ok"])
        .expect(0);
    repo.run(&["complete-ticket", "--summary", "add.sh"])
        .expect(0);
    let audit = repo.run(&["audit", "--all"]);
    audit.expect(0).says("9 transitions replayed: clean");
    repo.run(&["status"])
        .expect(0)
        .says("state     TICKET_DONE")
        .says("ticket    Add numbers · 1 of 1 subtasks complete");
}

/// Writes a ticket commit by hand on the workflow ref: `edit` changes the tip's ticket.json.
fn forge(repo: &TestRepo, event: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut ticket: Value =
        serde_json::from_str(&repo.git(&["show", &format!("{REF}:ticket.json")]))
            .expect("ticket.json");
    edit(&mut ticket);
    let blob = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        serde_json::to_string_pretty(&ticket)
            .expect("json")
            .as_bytes(),
    );
    let tree = repo.git_with_stdin(
        &["mktree"],
        format!("100644 blob {}\tticket.json\n", blob.trim()).as_bytes(),
    );
    let parent = repo.tip().expect("tip");
    let message = format!(
        "{event}: MANAGER -> MANAGER\n\nOrchestrator-Event: {event}\nOrchestrator-From: \
         MANAGER\nOrchestrator-To: MANAGER\nOrchestrator-Kind: ticket\n"
    );
    let commit = repo.git(&["commit-tree", tree.trim(), "-p", &parent, "-m", &message]);
    repo.git(&["update-ref", REF, commit.trim(), &parent]);
    parent
}

#[test]
fn audit_flags_a_hand_forged_ticket_commit() {
    let repo = TestRepo::new();
    assigned(&repo);
    // The gates fail on the delivered commit, while the developer says pass.
    repo.write("fail", "");
    repo.write("add.sh", "echo 5\n");
    repo.commit_all("add, and a failing test");
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "done",
        "--file",
        "add.sh",
    ])
    .expect(0);
    repo.run(&["audit", "--all"]).expect(0).says("clean");

    // S1 flipped to complete, no update-subtask anywhere in its log.
    let honest = forge(&repo, "update-subtask", |t| {
        t["subtasks"][0]["status"] = "complete".into();
        t["subtasks"][0]["awaitingVerification"] = false.into();
    });
    repo.run(&["audit", "--all"]).expect(1);
    let found = problems(&repo);
    assert!(
        found
            .iter()
            .any(|p| p == "subtask S1 became complete with no `update-subtask`"),
        "{found:?}"
    );

    // The observed gate result rewritten to a pass, under a manager's event.
    repo.git(&["update-ref", REF, &honest]);
    forge(&repo, "update-subtask", |t| {
        t["subtasks"][0]["observed"]["gates"]["result"] = "pass".into();
        t["subtasks"][0]["contradictions"] = serde_json::json!([]);
    });
    repo.run(&["audit", "--all"]).expect(1);
    let found = problems(&repo);
    assert!(
        found.iter().any(|p| p
            == "subtask S1's report or observed result was rewritten by `update-subtask` (only \
                `subtask-complete` records them)"),
        "{found:?}"
    );

    // A ticket commit without its kind trailer is not one git-orchestrate wrote.
    repo.git(&["update-ref", REF, &honest]);
    repo.write_workflow_commit(&[(
        "ticket.json",
        repo.git(&["show", &format!("{REF}:ticket.json")])
            .as_bytes(),
    )]);
    let found = problems(&repo);
    assert!(
        found
            .iter()
            .any(|p| p.contains("no `Orchestrator-Kind: ticket` trailer")),
        "{found:?}"
    );
}

#[test]
fn sync_carries_a_ticket_and_its_branch_between_two_clones() {
    let a = TestRepo::new();
    let (_dir, bare) = a.share();
    assigned(&a);
    a.run(&["sync"]).expect(0).says("pushed");
    assert!(
        a.git(&["ls-remote", "origin"])
            .contains("refs/heads/ticket/add-numbers"),
        "the ticket's branch travels with it"
    );

    let b = TestRepo::clone_of(&bare);
    b.run(&["sync"]).expect(0).says("adopted");
    b.run(&["get-task", "--role", "developer"])
        .expect(0)
        .says("## Current Assignment")
        .says("write add.sh");
    b.git(&["switch", "--quiet", "ticket/add-numbers"]);
    reported(&b);
    b.run(&["sync"]).expect(0);

    a.run(&["sync"]).expect(0).says("fast-forwarded");
    a.run(&["get-task", "--role", "manager"])
        .expect(0)
        .says("add.sh added");
    let status = a.run(&["status", "--json"]).expect(0).json();
    assert_eq!(status["state"], "MANAGER");
    assert_eq!(status["waiting"]["subtask"], "S1");
    assert_eq!(
        a.git(&["rev-parse", "ticket/add-numbers"]),
        b.git(&["rev-parse", "ticket/add-numbers"]),
        "the developer's commit came with the branch"
    );
    a.run(&["audit", "--all"]).expect(0).says("clean");
}

#[test]
fn installed_hooks_let_a_developer_commit_and_push_on_the_ticket_branch() {
    let repo = TestRepo::new();
    let (_dir, _bare) = repo.share();
    repo.run(&["init"]).expect(0);
    assert!(repo.path.join(".git/hooks/pre-push").exists());
    assigned(&repo);
    repo.write("add.sh", "echo 5\n");
    repo.commit_all("an ordinary commit");
    // A checkpoint-shaped message runs the commit-msg hook's verification.
    repo.write("add.sh", "echo 5 # five\n");
    repo.git(&["add", "-A"]);
    let commit = repo.git_run(&[
        "commit",
        "--quiet",
        "-m",
        "tidy\n\nOrchestrator-Checkpoint: 1.1",
    ]);
    assert_eq!(commit.code, 0, "{}{}", commit.stdout, commit.stderr);
    let push = repo.git_run(&["push", "--quiet", "origin", "ticket/add-numbers"]);
    assert_eq!(push.code, 0, "{}{}", push.stdout, push.stderr);
    assert!(
        !push.stderr.contains("error"),
        "the pre-push hook does not choke on a ticket: {}",
        push.stderr
    );
    repo.run(&[
        "subtask-complete",
        "--status",
        "complete",
        "--build-status",
        "pass",
        "--message",
        "done",
        "--file",
        "add.sh",
    ])
    .expect(0);
    repo.run(&["status"]).expect(0).says("state     MANAGER");
}
