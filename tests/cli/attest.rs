//! `git orchestrate attest` off the agent's machine (SPEC §15): a real `git daemon` on
//! 127.0.0.1 serving a bare repository with the server hook installed, the agent's clone
//! pushing to it over `git://`. An honest PR is accepted and attested; a consistent forged
//! chain, a RED test that leans on a file outside the repository, main moved or rewritten
//! by hand, a rewound chain, a push to the attestation notes and a self-given human answer
//! are refused, each naming its reason, and the server's refs stay where they were. A human
//! listed in main's `[attest] humans` moves main by a signed push.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use crate::oracle::{
    CALC_CONFIG, MUL, RED_MUL, TEST_MUL, calc_with, finalized, green, main_tip,
    mark_done_and_merge, outside, red, squash,
};
use crate::signed::{allowed, key};
use crate::support::*;

const ATTEST_NOTES: &str = "refs/notes/orchestrator-attest";

/// What `attest` says of adequacy under the pinned `[verify] adequacy = "report"` (the
/// default): it measures only under `enforce` (docs/integrity.md, "Adequacy by mutation").
pub(crate) const NOT_MEASURED: &str = "  adequacy: not measured ([verify] adequacy = \"report\"; \
    attest measures it under \"enforce\" only)\n";

/// The hook's line for a move of main to a commit no workflow merged.
const NOT_A_MERGE: &str = "git-orchestrate: refused refs/heads/main <id>: moves main to a \
    commit that is not a workflow merge that attests PASSED: no workflow's chain records <id> \
    as its merge into main or as a finalized PR's head (fetch \
    +refs/orchestrator/*:refs/orchestrator/* if a workflow elsewhere made it)";

/// A `git daemon` on 127.0.0.1 serving `remote.git`, a bare repository with the server hook
/// installed; killed and waited for when dropped.
pub(crate) struct Server {
    daemon: GitDaemon,
    bare: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// An empty bare repository on branch main, the hook installed by `repo`'s binary, served
    /// with `repo`'s hermetic environment.
    pub(crate) fn start(repo: &TestRepo) -> Server {
        Self::start_with(repo, BIN)
    }

    /// [`Self::start`], the hook installed by (and so running) `program`.
    fn start_with(repo: &TestRepo, program: &str) -> Server {
        Self::start_with_path_first(repo, program, None)
    }

    /// [`Self::start_with`], the daemon's PATH beginning with `first` (if any).
    fn start_with_path_first(repo: &TestRepo, program: &str, first: Option<&Path>) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path().canonicalize().expect("canonical");
        let bare = base.join("remote.git");
        repo.git(&[
            "init",
            "--quiet",
            "--bare",
            "--initial-branch=main",
            bare.to_str().unwrap(),
        ]);
        let installed = Run::from(
            repo.command(
                program,
                ["attest", "--install-server-hook", bare.to_str().unwrap()],
            )
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git-orchestrate"),
        );
        installed.expect(0);
        let (hooks, rest) = installed.stdout.split_at(
            installed
                .stdout
                .find("Every push")
                .expect("the hook's description"),
        );
        let hooks: Vec<PathBuf> = hooks
            .lines()
            .map(|l| {
                Path::new(l.strip_prefix("installed ").expect("installed HOOK"))
                    .canonicalize()
                    .expect("the hook exists")
            })
            .collect();
        assert_eq!(
            hooks,
            [
                bare.join("hooks/pre-receive"),
                bare.join("hooks/post-receive")
            ]
        );
        assert_eq!(
            rest,
            "Every push is judged now: workflow chains may only grow by audited transitions, main \
             moves only to workflow merges that attest PASSED (or by a human listed in main's \
             [attest] humans), and refs/notes/orchestrator-attest is the server's.\n\
             For signed pushes by humans: git config receive.certNonceSeed <secret> and git config \
             gpg.ssh.allowedSignersFile <file> in that repository.\n"
        );
        Server {
            daemon: GitDaemon::start_with_path_first(repo, &base, first),
            bare,
            _dir: dir,
        }
    }

    pub(crate) fn url(&self) -> String {
        self.daemon.url("remote.git")
    }

    /// The server's `reference`, if it has it.
    pub(crate) fn rev(&self, repo: &TestRepo, reference: &str) -> Option<String> {
        let (ok, out) = repo.git_try(&[
            "--git-dir",
            self.bare.to_str().unwrap(),
            "rev-parse",
            "--verify",
            "--quiet",
            reference,
        ]);
        ok.then(|| out.trim().to_string())
    }

    /// Runs git in the server's repository, asserting success.
    fn git(&self, repo: &TestRepo, args: &[&str]) -> String {
        let mut all = vec!["--git-dir", self.bare.to_str().unwrap()];
        all.extend_from_slice(args);
        repo.git(&all)
    }
}

/// `text` with the nonce of each quoted-output fence (`BEGIN OUTPUT <nonce>`) as `<nonce>`,
/// then commit ids redacted.
pub(crate) fn redact(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("OUTPUT ") {
        let (head, tail) = rest.split_at(at + "OUTPUT ".len());
        out.push_str(head);
        let end = tail
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tail.len());
        out.push_str("<nonce>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    redact_ids(&out)
}

/// The lines the server's hooks printed (git shows them to the pusher as `remote: ...`),
/// commit ids redacted.
pub(crate) fn remote(out: &Run) -> Vec<String> {
    out.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote: "))
        .map(|l| redact(l.trim_end()))
        .filter(|l| !l.is_empty())
        .collect()
}

/// Pushes `refspecs` to the server, as given; how it ended.
pub(crate) fn push(repo: &TestRepo, server: &Server, extra: &[&str], refspecs: &[&str]) -> Run {
    let url = server.url();
    let mut args = vec!["push"];
    args.extend_from_slice(extra);
    args.push(&url);
    args.extend_from_slice(refspecs);
    repo.git_run(&args)
}

/// Asserts the push was refused by the hook with exactly `lines` (ids redacted), and that
/// the server's refs are still `before`.
#[track_caller]
pub(crate) fn refused(repo: &TestRepo, server: &Server, before: &str, out: &Run, lines: &[&str]) {
    assert_ne!(out.code, 0, "the push was accepted:\n{}", out.stderr);
    assert!(
        out.stderr.contains("(pre-receive hook declined)"),
        "not the hook's refusal:\n{}",
        out.stderr
    );
    assert_eq!(remote(out), lines, "{}", out.stderr);
    assert_eq!(server_refs(repo, server), before, "the server's refs moved");
}

/// The server's refs under refs/, as `<ref> <id>` lines.
pub(crate) fn server_refs(repo: &TestRepo, server: &Server) -> String {
    server.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"])
}

/// The statement a note holds: its first line, parsed.
fn statement(note: &str) -> serde_json::Value {
    let line = note.lines().next().expect("a note has a line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// Writes `text` as a commit object; its id.
pub(crate) fn write_commit(repo: &TestRepo, text: &str) -> String {
    repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        text.as_bytes(),
    )
    .trim()
    .to_string()
}

/// `tree` with every blob (at any depth) that mentions `from` rewritten to say `to`.
pub(crate) fn rewrite_tree(repo: &TestRepo, tree: &str, from: &str, to: &str) -> String {
    let mut spec = String::new();
    for line in repo.git(&["ls-tree", tree]).lines() {
        let (meta, name) = line.split_once('\t').expect("ls-tree line");
        let mut fields = meta.split(' ');
        let (mode, kind, id) = (
            fields.next().unwrap(),
            fields.next().unwrap(),
            fields.next().unwrap(),
        );
        let id = match kind {
            "tree" => rewrite_tree(repo, id, from, to),
            "blob" => {
                let content = repo.git(&["cat-file", "blob", id]);
                if content.contains(from) {
                    repo.git_with_stdin(
                        &["hash-object", "-w", "--stdin"],
                        content.replace(from, to).as_bytes(),
                    )
                    .trim()
                    .to_string()
                } else {
                    id.to_string()
                }
            }
            _ => id.to_string(),
        };
        spec.push_str(&format!("{mode} {kind} {id}\t{name}\n"));
    }
    repo.git_with_stdin(&["mktree"], spec.as_bytes())
        .trim()
        .to_string()
}

/// Moves the chain from `from` to `to` and covers the tracks as an agent that can write
/// anything in `.git` would: the reflog and git-orchestrate's tip marker say `to` was what
/// git-orchestrate wrote.
pub(crate) fn swap_chain_tip(repo: &TestRepo, from: &str, to: &str) {
    repo.git(&["update-ref", REF, to, from]);
    let git = repo.path.join(".git");
    let reflog = git.join("logs").join(REF);
    let text = std::fs::read_to_string(&reflog).expect("the chain's reflog");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    let rewritten: String = lines
        .iter()
        .map(|l| format!("{}\n", l.replace(from, to)))
        .collect();
    std::fs::write(&reflog, rewritten).unwrap();
    let marker = git.join("orchestrator/tips/main");
    let text = std::fs::read_to_string(&marker).expect("the tip marker");
    assert_eq!(text.trim(), from);
    std::fs::write(&marker, text.replace(from, to)).unwrap();
}

/// The PR of [`finalized`] merged by the workflow, its test `tests/test_mul.sh` led by
/// `prefix`: what an armed test does before the honest check.
fn merged_with_test_led_by(repo: &TestRepo, prefix: &str) {
    repo.write("tests/test_mul.sh", &format!("{prefix}{TEST_MUL}"));
    red(repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(repo, RED_MUL);
    squash(repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(repo).expect(0);
}

/// The calculator's PR done honestly and merged by the workflow, on `repo`: main is the
/// merge, the chain's tip its `merge` transition.
fn honest_merge(repo: &TestRepo) -> String {
    finalized(repo);
    mark_done_and_merge(repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    main_tip(repo)
}

/// An honest PR is accepted with its chain and attested by the server; the same PR with a
/// file riding along in a consistently forged merge (main and the chain rewritten together,
/// so that `audit` replays it cleanly) is refused first, and nothing moves.
#[test]
fn an_honest_pr_is_accepted_and_attested_and_its_consistent_forgery_is_refused() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    // The first push creates main on the empty server, with the chain so far.
    let first = push(&repo, &server, &[], &["main", REF]);
    first.expect(0);
    assert_eq!(remote(&first), Vec::<String>::new(), "{}", first.stderr);
    let initial = main_tip(&repo);
    assert_eq!(server.rev(&repo, "main"), Some(initial.clone()));
    assert_eq!(server.rev(&repo, REF), repo.tip());
    let pushed_chain = repo.tip().unwrap();

    let merge = honest_merge(&repo);
    let chain = repo.tip().unwrap();
    let pr_head = repo.git(&["rev-parse", "main^2"]).trim().to_string();

    // The forgery: the same merge with one more file, and the chain's last transition
    // rewritten to name it everywhere (state and event), same parent, same message.
    let merge_text = repo.git(&["cat-file", "commit", &merge]);
    let tree = repo.git(&["rev-parse", "main^{tree}"]).trim().to_string();
    let mut spec = repo.git(&["ls-tree", &tree]);
    let rider = repo
        .git_with_stdin(&["hash-object", "-w", "--stdin"], b"echo pwned\n")
        .trim()
        .to_string();
    spec.push_str(&format!("100644 blob {rider}\trider.sh\n"));
    let forged_tree = repo
        .git_with_stdin(&["mktree"], spec.as_bytes())
        .trim()
        .to_string();
    let forged_merge = write_commit(
        &repo,
        &merge_text.replacen(
            &format!("tree {tree}\n"),
            &format!("tree {forged_tree}\n"),
            1,
        ),
    );
    let chain_text = repo.git(&["cat-file", "commit", &chain]);
    assert!(chain_text.contains(&merge), "{chain_text}");
    let chain_tree = repo.git(&["rev-parse", &format!("{chain}^{{tree}}")]);
    let forged_chain_tree = rewrite_tree(&repo, chain_tree.trim(), &merge, &forged_merge);
    assert_ne!(
        forged_chain_tree,
        chain_tree.trim(),
        "state.json names the merge"
    );
    let forged_chain = write_commit(
        &repo,
        &chain_text
            .replacen(
                &format!("tree {}\n", chain_tree.trim()),
                &format!("tree {forged_chain_tree}\n"),
                1,
            )
            .replace(&merge, &forged_merge),
    );
    repo.git(&["update-ref", "refs/heads/main", &forged_merge, &merge]);
    swap_chain_tip(&repo, &chain, &forged_chain);
    assert!(
        repo.git(&["show", &format!("{REF}:state.json")])
            .contains(&forged_merge)
    );
    // Consistent: the agent's own audit replays it cleanly.
    repo.run(&["audit"]).expect(0);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
             workflow merge that attests PASSED: the merge commit's tree <id> is not the tree of \
             the commit it merges (<id>): something rode along",
        ],
    );
    assert_eq!(server.rev(&repo, "main"), Some(initial.clone()));
    assert_eq!(server.rev(&repo, REF), Some(pushed_chain.clone()));
    assert_eq!(server.rev(&repo, ATTEST_NOTES), None);

    // The honest merge and chain, put back, are accepted and attested.
    repo.git(&["update-ref", "refs/heads/main", &merge, &forged_merge]);
    swap_chain_tip(&repo, &forged_chain, &chain);
    repo.run(&["audit"]).expect(0);
    let out = push(&repo, &server, &[], &["main", REF]);
    out.expect(0);
    assert_eq!(
        remote(&out),
        [
            "git-orchestrate: <id> attests PASSED (workflow main)",
            "git-orchestrate: 1 verdict written under refs/notes/orchestrator-attest",
        ],
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    assert_eq!(server.rev(&repo, REF), Some(chain.clone()));
    let note = server.git(&repo, &["notes", "--ref", ATTEST_NOTES, "show", &merge]);
    assert_eq!(
        note.lines().count(),
        1,
        "unsigned: the statement only\n{note}"
    );
    let s = statement(&note);
    assert_eq!(s["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(
        s["predicateType"],
        "https://slsa.dev/verification_summary/v1"
    );
    assert_eq!(s["predicate"]["verificationResult"], "PASSED");
    assert_eq!(
        s["subject"],
        serde_json::json!([
            {"name": "commit", "digest": {"gitCommit": merge}},
            {"name": REF, "digest": {"gitCommit": chain}},
        ])
    );
    assert_eq!(s["predicate"]["resourceUri"], format!("git+commit:{merge}"));
    assert_eq!(s["predicate"]["gitOrchestrate"]["kind"], "merge");
    assert_eq!(
        s["predicate"]["gitOrchestrate"]["reasons"],
        serde_json::json!([])
    );
    assert_eq!(
        s["predicate"]["policy"]["digest"]["gitBlob"],
        repo.git(&["rev-parse", &format!("{initial}:.orchestrate.toml")])
            .trim()
    );
    assert_eq!(
        s["predicate"]["gitOrchestrate"]["reran"],
        serde_json::json!([
            "the gates passed on the squashed commit in a clean worktree (tests)",
            format!(
                "RED test of step 1.1 `{RED_MUL}`: exit 1 on the base, exit 0 on the final tree; evidence: exit code only"
            ),
        ])
    );
    // Only the merge is noted: the forged merge's verdict was never kept.
    assert_eq!(
        server
            .git(&repo, &["notes", "--ref", ATTEST_NOTES, "list"])
            .lines()
            .count(),
        1
    );

    // CI: a fresh clone that fetched the chains, as the job does, attests the merge and the
    // PR's head.
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", &merge, &pr_head]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        format!(
            "PASSED <id> (the merge of workflow main)\n{reran}\
             PASSED <id> (the head of workflow main's PR)\n{reran}\
             no note written: --no-note\n",
            reran = format!(
                "  re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
                 re-ran: RED test of step 1.1 `{RED_MUL}`: exit 1 on the base, exit 0 on the final tree; evidence: exit code only\n{NOT_MEASURED}"
            )
        )
    );
}

/// `ssh-keygen -lf KEY.pub`'s fingerprint: `SHA256:…`.
fn fingerprint(repo: &TestRepo, key: &Path) -> String {
    let out = repo
        .command("ssh-keygen", ["-lf"])
        .arg(key.with_extension("pub"))
        .output()
        .expect("run ssh-keygen");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .expect("a fingerprint")
        .to_string()
}

/// A signed push (`git push --signed`, an SSH push certificate) by `key`.
fn signed_push(repo: &TestRepo, server: &Server, key: &Path, refspecs: &[&str]) -> Run {
    let signing = format!("user.signingkey={}", key.display());
    let mut args = vec![
        "-c",
        "gpg.format=ssh",
        "-c",
        &signing,
        "push",
        "--signed",
        "--no-verify",
    ];
    let url = server.url();
    args.push(&url);
    args.extend_from_slice(refspecs);
    repo.git_run(&args)
}

/// main moved by a plain commit, main rewritten, the chain rewound, the attestation notes
/// written by a client: each refused with its reason, nothing moves. A human listed in main's
/// `[attest] humans` moves main by a signed push; another key, known to the server but not
/// listed, does not, and nobody writes the notes.
#[test]
fn main_moved_by_hand_a_rewound_chain_and_pushed_notes_are_refused_unless_a_listed_human_moves_main()
 {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let mallory = key(keys.path(), "mallory");
    let scratch = TestRepo::empty();
    let alice_fp = fingerprint(&scratch, &alice);
    let repo = calc_with(
        &format!("{CALC_CONFIG}\n[attest]\nhumans = [\"key:{alice_fp}\"]\n"),
        &[],
    );
    let server = Server::start(&repo);
    let signers = keys.path().join("allowed_signers");
    let mut lines = String::new();
    for (name, key) in [("alice", &alice), ("mallory", &mallory)] {
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        lines.push_str(&format!("{name} {public}"));
    }
    std::fs::write(&signers, lines).unwrap();
    server.git(
        &repo,
        &["config", "receive.certNonceSeed", "a server secret"],
    );
    server.git(
        &repo,
        &[
            "config",
            "gpg.ssh.allowedSignersFile",
            signers.to_str().unwrap(),
        ],
    );
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let chain = repo.tip().unwrap();
    assert_eq!(server.rev(&repo, REF), Some(chain.clone()));
    let initial = main_tip(&repo);

    // A commit on main by hand, pushed by the agent.
    let tree = repo.git(&["rev-parse", "main^{tree}"]).trim().to_string();
    let by_hand = repo
        .git(&["commit-tree", &tree, "-p", &initial, "-m", "docs: by hand"])
        .trim()
        .to_string();
    let before = server_refs(&repo, &server);
    let out = push(
        &repo,
        &server,
        &["--no-verify"],
        &[&format!("{by_hand}:refs/heads/main")],
    );
    refused(&repo, &server, &before, &out, &[NOT_A_MERGE]);
    assert!(
        out.stderr
            .contains(&format!("refused refs/heads/main {}:", &by_hand[..12])),
        "{}",
        out.stderr
    );

    // The same commit, pushed signed by a key the server knows but main does not list.
    let out = signed_push(
        &repo,
        &server,
        &mallory,
        &[&format!("{by_hand}:refs/heads/main")],
    );
    refused(&repo, &server, &before, &out, &[NOT_A_MERGE]);

    // By the listed human's key: accepted, and no verdict is written for it.
    let out = signed_push(
        &repo,
        &server,
        &alice,
        &[&format!("{by_hand}:refs/heads/main")],
    );
    out.expect(0);
    assert_eq!(
        remote(&out),
        [redact_ids(&format!(
            "git-orchestrate: pushed by key:{alice_fp}, a listed human"
        ))],
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, "main"), Some(by_hand.clone()));
    assert_eq!(server.rev(&repo, ATTEST_NOTES), None);

    // A first note on a commit main held before the push (the human's): refused from the
    // agent, taken from the listed human, who may move main as they like.
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-m",
        "{\"by\":\"hand\"}",
        &by_hand,
    ]);
    let notes = "refs/notes/orchestrator";
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused {notes} <id>: adds a first note on <id>, a commit on main \
             before this push that had none: a commit's record is written before it is merged \
             and pushed with the merge at the latest"
        )],
    );
    signed_push(&repo, &server, &alice, &[notes]).expect(0);
    assert_eq!(
        server.rev(&repo, notes),
        Some(repo.git(&["rev-parse", notes]).trim().to_string())
    );

    // main rewritten: the commit replaced by another on the same parent, force-pushed.
    let rewritten = repo
        .git(&[
            "commit-tree",
            &tree,
            "-p",
            &initial,
            "-m",
            "docs: rewritten",
        ])
        .trim()
        .to_string();
    let before = server_refs(&repo, &server);
    let out = push(
        &repo,
        &server,
        &["--no-verify", "--force"],
        &[&format!("{rewritten}:refs/heads/main")],
    );
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/heads/main <id>: rewrites main (a rebase or a force \
           push): it does not descend from <id>",
        ],
    );

    // The chain rewound to an older transition, and forked from one.
    let older = repo
        .git(&["rev-parse", &format!("{REF}~1")])
        .trim()
        .to_string();
    let out = push(
        &repo,
        &server,
        &["--no-verify", "--force"],
        &[&format!("{older}:{REF}")],
    );
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/orchestrator/workflows/main <id>: rewinds or forks \
           workflow main's chain: it does not descend from <id>",
        ],
    );
    assert_eq!(server.rev(&repo, REF), Some(chain.clone()));

    // The attestation notes, written by a client: by the agent, and by the listed human.
    repo.git(&[
        "notes",
        "--ref",
        ATTEST_NOTES,
        "add",
        "-m",
        "{\"predicate\": {\"verificationResult\": \"PASSED\"}}",
        &by_hand,
    ]);
    let notes = repo.git(&["rev-parse", ATTEST_NOTES]).trim().to_string();
    let expected = format!(
        "git-orchestrate: refused refs/notes/orchestrator-attest {}: only the server writes \
         attestations; no client pushes to them",
        &notes[..12]
    );
    let out = push(&repo, &server, &["--no-verify"], &[ATTEST_NOTES]);
    refused(&repo, &server, &before, &out, &[&redact_ids(&expected)]);
    let out = signed_push(&repo, &server, &alice, &[ATTEST_NOTES]);
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            &redact_ids(&format!(
                "git-orchestrate: pushed by key:{alice_fp}, a listed human"
            )),
            &redact_ids(&expected),
        ],
    );
    assert_eq!(server.rev(&repo, ATTEST_NOTES), None);
}

/// The RED test of the flag: a file outside the gate's `tests/`.
const FLAG_RED: &str = "sh checks/mul.sh";

/// A RED test that reads a flag file outside the repository, on a main whose configuration
/// skips the final check (`[finalize] clean_check = false`): the agent sets the flag before
/// GREEN and merges. The server re-runs the RED test on the PR's base, where the flag makes
/// it pass: refused. Without the flag, CI's attest finds it failing on the final tree.
#[test]
fn a_red_test_that_leans_on_a_file_outside_the_repository_is_refused_by_the_server() {
    let repo = calc_with(
        &format!("{CALC_CONFIG}\n[finalize]\nclean_check = false\n"),
        &[],
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let flag = outside(&repo, "flag");
    // Outside tests/, so the gate does not run it: only the RED proofs do.
    repo.write("checks/mul.sh", &format!("test -e '{}'\n", flag.display()));
    red(&repo, FLAG_RED);
    std::fs::write(&flag, "").unwrap();
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(&repo, FLAG_RED);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let merge = {
        mark_done_and_merge(&repo).expect(0);
        assert_eq!(repo.status(), "INITIALIZING");
        main_tip(&repo)
    };
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    assert_ne!(out.code, 0, "the push was accepted:\n{}", out.stderr);
    assert!(
        out.stderr.contains("(pre-receive hook declined)"),
        "{}",
        out.stderr
    );
    let lines = remote(&out);
    assert!(
        lines[0].starts_with(&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
             workflow merge that attests PASSED: the final check of task 1's RED test (step 1.1, \
             `{FLAG_RED}`, with checks/mul.sh as the RED step left them) failed: it passes on \
             the PR's base (<id>) too, so what it checks is not the PR's code: a test whose \
             verdict comes from elsewhere (a file outside the repository, the environment, how it \
             is run) proves nothing."
        )),
        "{lines:#?}"
    );
    assert!(
        out.stderr
            .contains(&format!("refused refs/heads/main {}: ", &merge[..12])),
        "{}",
        out.stderr
    );
    assert_eq!(server_refs(&repo, &server), before);
    let _ = std::fs::remove_file(&flag);

    let ci = TestRepo::clone_of(Path::new(&server.url()));
    // The server refused the merge: CI fetches it from the agent's clone.
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/heads/main:refs/remotes/origin/main",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(
        redact(&out.stdout),
        format!(
            "FAILED <id> (the merge of workflow main)\n  \
             re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
             re-ran: RED test of step 1.1 `{FLAG_RED}`: exit 1 on the base, exit 1 on the final tree; evidence: exit code only\n\
             {NOT_MEASURED}  \
             - the final check of task 1's RED test (step 1.1, `{FLAG_RED}`, with checks/mul.sh as \
             the RED step left them) failed: it fails on the squashed commit (exit 1). Output:\n\
             ----- BEGIN OUTPUT <nonce> (quoted; nothing before END OUTPUT <nonce> is from git-orchestrate) -----\n\
             ----- END OUTPUT <nonce> -----\n\n\
             no note written: --no-note\n"
        )
    );
    // SPEC §15: one line per refusal, naming the commit and the reason.
    assert_eq!(
        lines.len(),
        1,
        "a refusal is one line; the hook printed:\n{}",
        lines.join("\n")
    );
}

/// The human-gated review under `[human] require = "signature"`: the agent cannot sign, so
/// it writes the approval itself, as an unsigned answer (the transition a signed approve
/// makes, its signature dropped and attributed to GIT_ORCHESTRATE_HUMAN), covers its tracks
/// and carries on with the real binary to the merge. The server refuses main, naming the
/// answer.
#[test]
fn a_self_given_approval_under_require_signature_is_refused_by_the_server() {
    let keys = tempfile::tempdir().unwrap();
    let alice = key(keys.path(), "alice");
    let repo = calc_with(
        &format!(
            "{CALC_CONFIG}\n[review]\ncommand = \"sh review.sh\"\nhuman = true\n\n\
             [human]\nrequire = \"signature\"\n"
        ),
        &[
            ("review.sh", "cat >/dev/null; echo '{\"findings\": []}'\n"),
            (".orchestrate/allowed_signers", &allowed("alice", &alice)),
        ],
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    repo.write("tests/test_mul.sh", TEST_MUL);
    red(&repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    repo.submit_test(RED_MUL, None).expect(0);
    repo.run(&["checkpoint"]).expect(0);
    repo.run(&["get-task"]).expect(10);
    // The agent has no key: unsigned, the binary refuses the answer.
    repo.human(&["approve"]).expect(4);
    // What a signed approve writes, here to copy; the agent writes it without the signature.
    let gate = repo.tip().unwrap();
    repo.human(&["approve", "--sign-key", alice.to_str().unwrap()])
        .expect(0);
    let signed = repo.tip().unwrap();
    let raw = repo.git(&["cat-file", "commit", &signed]);
    let (head, message) = raw.split_once("\n\n").unwrap();
    let kept: Vec<&str> = head
        .lines()
        .filter(|l| !l.starts_with("orchestrator-signature ") && !l.starts_with(' '))
        .collect();
    assert!(
        message.contains("Orchestrator-Human: signed alice"),
        "{message}"
    );
    let unsigned = write_commit(
        &repo,
        &format!(
            "{}\n\n{}",
            kept.join("\n"),
            message.replace(
                "Orchestrator-Human: signed alice",
                "Orchestrator-Human: GIT_ORCHESTRATE_HUMAN"
            )
        ),
    );
    assert_eq!(
        repo.git(&["rev-parse", &format!("{unsigned}^")]).trim(),
        gate
    );
    swap_chain_tip(&repo, &signed, &unsigned);
    // On with the real binary: get-task, squash, the master plan, the merge.
    repo.run(&["get-task"]).expect(0);
    assert_eq!(repo.status(), "AWAITING_FINALIZATION");
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    assert_eq!(repo.status(), "INITIALIZING");
    let merge = main_tip(&repo);
    // The agent's own audit names it; nothing on the agent's machine stopped the merge.
    repo.run(&["audit"]).expect(1).says(
        "an unsigned human answer: its `approve` carries no signature (GIT_ORCHESTRATE_HUMAN), \
         and the configuration pinned for it says [human] require = \"signature\"",
    );
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
           workflow merge that attests PASSED: the human answer `approve` in <id> does not hold: \
           it is unsigned, and the pinned configuration requires a signature ([human] require = \
           \"signature\"); the pinned configuration requires a human's approval ([review] human) \
           and the PR's chain holds none that stands",
        ],
    );
    assert!(
        out.stderr
            .contains(&format!("refused refs/heads/main {}: ", &merge[..12]))
            && out
                .stderr
                .contains(&format!("`approve` in {} ", &unsigned[..12])),
        "{}",
        out.stderr
    );
}

/// The demo's repository: its PR's merge on main and the PR's head attest PASSED.
#[test]
fn attest_passes_the_demos_merge_and_its_pr_head() {
    let scratch = TestRepo::empty();
    let dir = scratch.dir().join("demo");
    scratch
        .run(&["demo", "--dir", dir.to_str().unwrap()])
        .expect(0);
    let merge = scratch.git(&["-C", dir.to_str().unwrap(), "rev-parse", "main"]);
    let head = scratch.git(&["-C", dir.to_str().unwrap(), "rev-parse", "main^2"]);
    let (merge, head) = (merge.trim(), head.trim());
    let out = scratch.run_in(&dir, &["attest", "--json", "main", "main^2"]);
    out.expect(0);
    let j = out.json();
    assert_eq!(j["notes_written"], serde_json::json!([merge, head]));
    assert_eq!(j["notes_skipped"], serde_json::Value::Null);
    let verdicts = j["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    for (v, (commit, kind)) in verdicts.iter().zip([(merge, "merge"), (head, "pr-head")]) {
        assert_eq!(v["commit"], commit, "{v}");
        assert_eq!(v["kind"], kind, "{v}");
        assert_eq!(v["workflow"], "main", "{v}");
        assert_eq!(v["passed"], true, "{v}");
        assert_eq!(v["reasons"], serde_json::json!([]), "{v}");
        assert!(
            v["transition"].as_str().is_some_and(|t| t.len() == 40),
            "{v}"
        );
        let reran: Vec<&str> = v["reran"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(
            reran
                .first()
                .is_some_and(|r| r.starts_with("the gates passed on the squashed commit")),
            "{reran:?}"
        );
        assert!(
            reran[1..].iter().all(|r| r.starts_with("RED test of step ")
                && r.contains(" on the base, exit 0 on the final tree; evidence: ")
                && !r.contains("exit 0 on the base")),
            "{reran:?}"
        );
        assert!(reran.len() > 1, "the demo's RED tests re-ran: {reran:?}");
        let s = &v["statement"];
        assert_eq!(s["_type"], "https://in-toto.io/Statement/v1");
        assert_eq!(s["predicate"]["verificationResult"], "PASSED");
        assert_eq!(s["subject"][0]["digest"]["gitCommit"], commit);
        assert_eq!(s["subject"][1]["name"], REF);
        assert_eq!(s["subject"][1]["digest"]["gitCommit"], v["transition"]);
        assert_eq!(s["predicate"]["gitOrchestrate"]["kind"], kind);
        // The note on the commit is the statement.
        let note = scratch.git(&[
            "-C",
            dir.to_str().unwrap(),
            "notes",
            "--ref",
            ATTEST_NOTES,
            "show",
            commit,
        ]);
        assert_eq!(&statement(&note), s);
    }
}

/// A revision that reads as an option, or names nothing: exit 2. The server hook is
/// installed only in a bare repository, and never over a hook of someone else's.
#[test]
fn attest_refuses_bad_revisions_and_the_hook_goes_only_where_it_belongs() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let out = repo.run(&["attest", "--", "--output=x"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: \"--output=x\" is not a revision: attest takes commits and ranges\n\
         hint: Name a commit (HEAD, main, an id) or a range A..B.\n"
    );
    let out = repo.run(&["attest", "no-such-rev"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: \"no-such-rev\" names no commit in this repository\n\
         hint: Fetch it first, or name a commit this repository has.\n"
    );
    let out = repo.run(&["attest", "main^{tree}"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: \"main^{tree}\" names no commit in this repository\n\
         hint: Fetch it first, or name a commit this repository has.\n"
    );
    let out = repo.run(&["attest", "main..nowhere"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        "error: cannot list the range main..nowhere: fatal: bad revision 'main..nowhere'\n\
         hint: Name a range of commits this repository has, like main~3..main.\n"
    );
    assert_eq!(out.stdout, "");
    // A commit no workflow made, named by itself: bad input, the reason named; exit 2.
    let out = repo.run(&["attest", "main"]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        format!(
            "error: {} is not a workflow's merge into main nor a finalized PR's head: no \
             workflow's chain records {} as its merge into main or as a finalized PR's head \
             (fetch +refs/orchestrator/*:refs/orchestrator/* if a workflow elsewhere made it)\n\
             hint: attest judges what a workflow made: its merge on main (main's first-parent \
             commits, or a range A..B of them) or its PR's squashed head.\n",
            &main_tip(&repo)[..12],
            main_tip(&repo)
        )
    );
    assert_eq!(out.stdout, "");
    assert_eq!(
        repo.git_try(&["rev-parse", "--verify", "--quiet", ATTEST_NOTES])
            .0,
        false
    );

    // A working repository, not a bare one: nothing written.
    let hooks = repo.path.join(".git/hooks");
    let listed = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let before = listed(&hooks);
    let out = repo.run(&[
        "attest",
        "--install-server-hook",
        repo.path.to_str().unwrap(),
    ]);
    out.expect(2);
    assert_eq!(
        out.stderr,
        format!(
            "error: {} is not a bare repository\n\
             hint: The server hook guards the repository clients push to: a bare one (git init \
             --bare).\n",
            repo.path.display()
        )
    );
    assert_eq!(listed(&hooks), before);

    // A bare repository whose pre-receive is someone else's: refused, both hooks untouched.
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("remote.git");
    repo.git(&["init", "--quiet", "--bare", bare.to_str().unwrap()]);
    let theirs = "#!/bin/sh\n# the team's own checks\nexit 0\n";
    std::fs::write(bare.join("hooks/pre-receive"), theirs).unwrap();
    let out = repo.run(&["attest", "--install-server-hook", bare.to_str().unwrap()]);
    out.expect(2);
    assert_eq!(
        out.stderr.replace("/./", "/"),
        format!(
            "error: {} exists and is not git-orchestrate's\n\
             hint: Move it aside (or call it from a hook of your own), then install again.\n",
            bare.join("hooks/pre-receive").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(bare.join("hooks/pre-receive")).unwrap(),
        theirs
    );
    assert!(!bare.join("hooks/post-receive").exists());
}

/// The chain a main move rests on is one the hook guards: a chain pushed under
/// `refs/orchestrator/remotes/<remote>/workflows/` (which the hook lets any client write,
/// rewind or replace) does not carry main while the guarded chain never recorded the merge.
#[test]
fn main_does_not_move_on_a_chain_pushed_outside_the_guarded_refs() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let merge = honest_merge(&repo);
    let unguarded = "refs/orchestrator/remotes/elsewhere/workflows/main";
    // Whether the hook takes this push or not, it must not count for main.
    let _ = push(
        &repo,
        &server,
        &["--no-verify"],
        &[&format!("{REF}:{unguarded}")],
    );
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &["--no-verify"], &["main"]);
    refused(&repo, &server, &before, &out, &[NOT_A_MERGE]);
    assert_ne!(server.rev(&repo, "main"), Some(merge));
}

/// The server runs the PR's tests, code the agent wrote, as the server's user: a test that
/// tries to replace the server's hook, move its main, or write git-orchestrate itself finds
/// them read-only (`orchestrate.attestConfine`, `namespace` by default in the hook); the
/// honest PR around it is accepted, and the next push is judged by the same hook.
#[test]
fn the_prs_tests_cannot_write_the_server_they_run_on() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let hook = server.bare.join("hooks/pre-receive");
    let hook_before = std::fs::read_to_string(&hook).unwrap();
    // Armed only once the agent is done, so that its own runs leave the server alone.
    let armed = outside(&repo, "armed");
    let wrote = outside(&repo, "wrote");
    let evil = format!(
        "if [ -e '{armed}' ]; then\n  echo 'exit 0' > '{bare}/hooks/pre-receive' 2>/dev/null \
         && echo hook >> '{wrote}'\n  echo x > '{bare}/refs/heads/evil' 2>/dev/null && echo ref >> '{wrote}'\n  \
         echo x >> '{bin}' 2>/dev/null && echo bin >> '{wrote}'\n  echo ran >> '{wrote}'\nfi\n",
        armed = armed.display(),
        bare = server.bare.display(),
        wrote = wrote.display(),
        bin = BIN,
    );
    merged_with_test_led_by(&repo, &evil);
    std::fs::write(&armed, "").unwrap();
    let out = push(&repo, &server, &[], &["main", REF]);
    out.expect(0);
    assert_eq!(server.rev(&repo, "main"), Some(main_tip(&repo)));
    let wrote = std::fs::read_to_string(&wrote).unwrap_or_default();
    assert!(
        wrote.contains("ran"),
        "the test ran on the server: {wrote:?}"
    );
    assert!(
        !wrote.contains("hook") && !wrote.contains("ref") && !wrote.contains("bin"),
        "{wrote}"
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), hook_before);
    assert_eq!(server.rev(&repo, "refs/heads/evil"), None);

    // The next cheat meets the same hook: a plain commit on main is refused.
    repo.write("notes.txt", "x\n");
    repo.commit_all("not a workflow merge");
    let refused = push(&repo, &server, &["--no-verify"], &["main"]);
    assert_ne!(refused.code, 0, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("no workflow's chain records"),
        "{}",
        refused.stderr
    );

    // A server that cannot say how to confine is refused, not run unconfined.
    server.git(&repo, &["config", "orchestrate.attestConfine", "maybe"]);
    let out = push(&repo, &server, &["--no-verify"], &["main"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("orchestrate.attestConfine is \"maybe\""),
        "{}",
        out.stderr
    );
}

/// A RED test that writes the code into the worktree it runs in would hand the next task's
/// test what the commit lacks: the final check (here, CI's attest) refuses a run that leaves
/// its worktree otherwise than it found it. And a server whose HEAD names a branch that does
/// not exist, beside others, guards nothing: every push is refused until a human fixes it.
#[test]
fn a_test_that_changes_its_worktree_and_a_server_without_its_main_are_refused() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let armed = outside(&repo, "armed");
    // Outside tests/, so the gate does not run it: only the RED proofs do.
    repo.write(
        "checks/mul.sh",
        &format!(
            "[ -e '{}' ] && echo '# written by a test' >> calc.sh\n{TEST_MUL}",
            armed.display()
        ),
    );
    red(&repo, FLAG_RED);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(&repo, FLAG_RED);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    let merge = {
        mark_done_and_merge(&repo).expect(0);
        main_tip(&repo)
    };
    repo.run(&["attest", "--no-note", &merge]).expect(0);
    std::fs::write(&armed, "").unwrap();
    let out = repo.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "  - the RED test of step 1.1 (`sh checks/mul.sh`) changed files of the commit in the \
             worktree the checks run in (calc.sh): "
        ),
        "{}",
        out.stdout
    );

    // HEAD names master, which does not exist; main does.
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("server.git");
    let bare_arg = bare.to_str().unwrap();
    repo.git(&[
        "init",
        "--quiet",
        "--bare",
        "--initial-branch=master",
        bare_arg,
    ]);
    repo.git(&[
        "push",
        "--quiet",
        "--no-verify",
        bare_arg,
        "main~1:refs/heads/main",
    ]);
    repo.run(&["attest", "--install-server-hook", bare_arg])
        .expect(0);
    let out = repo.git_run(&["push", "--no-verify", bare_arg, "main"]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the server's main branch master (its HEAD, or main_branch in main's config) does not \
             exist while other branches do"
        ),
        "{}",
        out.stderr
    );
}

/// A RED test that points its worktree's `.git` file at a repository of its own, whose
/// config runs a command from any git that reads it (`core.fsmonitor`), does not get the
/// verifier's git to run it: that git names the worktree's repository itself. An empty
/// range and a replace ref pushed to the server are refused too.
#[test]
fn a_test_cannot_send_the_verifiers_git_to_a_repository_of_its_own() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let armed = outside(&repo, "armed");
    let evil = outside(&repo, "evil");
    let pwned = outside(&repo, "pwned");
    repo.git(&["init", "--quiet", evil.to_str().unwrap()]);
    repo.git(&[
        "-C",
        evil.to_str().unwrap(),
        "config",
        "core.fsmonitor",
        &format!("touch '{}'; false", pwned.display()),
    ]);
    repo.write(
        "checks/mul.sh",
        &format!(
            "[ -e '{}' ] && printf 'gitdir: %s\\n' '{}/.git' > .git\n{TEST_MUL}",
            armed.display(),
            evil.display()
        ),
    );
    red(&repo, FLAG_RED);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(&repo, FLAG_RED);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    std::fs::write(&armed, "").unwrap();
    let out = repo.run(&["attest", "--no-note", &merge]);
    out.expect(0);
    assert!(
        !pwned.exists(),
        "the verifier's git ran the test's fsmonitor"
    );

    let empty = format!("{merge}..{merge}");
    repo.run(&["attest", "--no-note", &empty])
        .expect(2)
        .warns(&format!("the range {empty} names no commit"));

    // The server runs the armed test too, confined, and attests the merge.
    push(&repo, &server, &[], &["main", REF]).expect(0);
    assert!(!pwned.exists(), "the server's git ran the test's fsmonitor");
    // The server's verdict reaches a clone as the remote's notes, and verify reads it there
    // (unsigned: no verifier key is configured, so it is named, not counted).
    let clone = TestRepo::clone_of(Path::new(&server.url()));
    clone.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/notes/*:refs/notes/remotes/origin/*",
    ]);
    let range = format!("{merge}^..{merge}");
    let json = clone.run(&["verify", "--json", &range]).expect(0).json();
    assert_eq!(json["attested"][0]["commit"], merge.as_str());
    assert_eq!(
        json["attested"][0]["attestation"]["status"],
        "unauthenticated"
    );
    let out = push(
        &repo,
        &server,
        &["--no-verify"],
        &[&format!("main:refs/replace/{}", &merge)],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("a replace ref makes git show other objects"),
        "{}",
        out.stderr
    );
}

/// Whether this test runs as root (`id -u`).
fn as_root() -> bool {
    let out = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("run id");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// An honest PR whose test, once armed, goes after everything the server hook's run
/// depends on, as the server's own user: it renames the directory holding the hook's
/// git-orchestrate and puts an `exit 0` stub in its place, overwrites and renames the hooks,
/// moves the repository away from its parent and puts an empty one there, configures git
/// in `$HOME`, writes a sibling repository's hook, and reaches the git daemon over the
/// network; git, its exec path and the system configuration are only probed (`test -w`).
/// None of it lands: the PR is accepted, and the next, fake push is refused by the same
/// hook.
#[test]
fn the_hooks_chain_of_execution_is_out_of_the_prs_tests_reach() {
    let repo = calc_with(CALC_CONFIG, &[]);
    // The hook runs a copy of the program in a directory of its own, which the test goes
    // after (never the build's own binary, which every test runs).
    let installed = tempfile::tempdir().unwrap();
    let bin = installed.path().canonicalize().unwrap().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("git-orchestrate");
    std::fs::copy(BIN, &program).unwrap();
    let server = Server::start_with(&repo, program.to_str().unwrap());
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let base = server.bare.parent().unwrap().to_path_buf();
    let sibling = base.join("other.git");
    repo.git(&["init", "--quiet", "--bare", sibling.to_str().unwrap()]);
    std::fs::write(sibling.join("hooks/pre-receive"), "#!/bin/sh\n# other\n").unwrap();
    let hook = server.bare.join("hooks/pre-receive");
    let hook_before = std::fs::read_to_string(&hook).unwrap();
    let home = repo.temp_dir().parent().unwrap().to_path_buf();
    let git = repo.git(&["--exec-path"]);
    let armed = outside(&repo, "armed");
    let wrote = outside(&repo, "wrote");
    let evil = format!(
        r##"if [ -e '{armed}' ]; then
  try() {{ what=$1; shift; "$@" >/dev/null 2>&1 && echo "$what" >> '{wrote}'; }}
  try program sh -c 'mv "$1" "$1.gone" && mkdir "$1" && printf "#!/bin/sh\nexit 0\n" > "$1/git-orchestrate" && chmod +x "$1/git-orchestrate"' sh '{bin}'
  try program-above mv '{above}' '{above}.gone'
  try hook sh -c 'echo "exit 0" > "$1/hooks/pre-receive"' sh '{bare}'
  try hooks mv '{bare}/hooks' '{bare}/hooks.gone'
  try repository sh -c 'mv "$1" "$1.gone" && git init --quiet --bare "$1"' sh '{bare}'
  try home sh -c 'printf "[core]\n\thooksPath = /dev/null\n" >> "$1/.gitconfig"' sh '{home}'
  try sibling sh -c 'echo "exit 0" > "$1/hooks/pre-receive"' sh '{sibling}'
  try network git ls-remote '{url}'
  for p in "$(command -v git)" '{exec_path}' /etc/gitconfig /usr/bin /usr/local/bin; do
    [ -w "$p" ] && echo "writable $p" >> '{wrote}'
  done
  echo ran >> '{wrote}'
fi
"##,
        armed = armed.display(),
        wrote = wrote.display(),
        bin = bin.display(),
        above = installed.path().canonicalize().unwrap().display(),
        bare = server.bare.display(),
        home = home.display(),
        sibling = sibling.display(),
        url = server.url(),
        exec_path = git.trim(),
    );
    merged_with_test_led_by(&repo, &evil);
    std::fs::write(&armed, "").unwrap();
    // The honest PR is accepted, its test run on the server, where it reached nothing.
    push(&repo, &server, &[], &["main", REF]).expect(0);
    assert_eq!(server.rev(&repo, "main"), Some(main_tip(&repo)));
    // Each run of the test (the gate's, the RED runs') got as far as its end, and no
    // further than that.
    let wrote = std::fs::read_to_string(&wrote).unwrap_or_default();
    assert!(wrote.contains("ran"), "the test did not run on the server");
    assert!(wrote.lines().all(|l| l == "ran"), "{wrote}");
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), hook_before);
    assert_eq!(
        std::fs::metadata(&program).unwrap().len(),
        std::fs::metadata(BIN).unwrap().len()
    );
    assert_eq!(
        std::fs::read_to_string(sibling.join("hooks/pre-receive")).unwrap(),
        "#!/bin/sh\n# other\n"
    );
    assert!(
        !std::fs::read_to_string(home.join(".gitconfig"))
            .unwrap_or_default()
            .contains("hooksPath")
    );

    // The next cheat meets the same hook: a plain commit on main is refused.
    repo.write("notes.txt", "x\n");
    repo.commit_all("not a workflow merge");
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &["--no-verify"], &["main"]);
    refused(&repo, &server, &before, &out, &[NOT_A_MERGE]);
}

/// A directory on the daemon's PATH (where git finds its own commands) in a temporary
/// directory the PR's confined tests can write, holding no git yet: an honest PR whose test,
/// armed, puts a `git` there that receives every push without the hooks
/// (`core.hooksPath=/dev/null`) would have the daemon run it for the next push, and a plain
/// fake commit reach main. Existing, the directory is bound read-only for the tests: the
/// merge is accepted and the test wrote nothing there. Not existing yet, it cannot be bound:
/// the hook refuses the push that would run the test, naming where the test could make it,
/// and runs nothing of it. Either way the next cheat is refused.
#[test]
fn a_path_directory_the_prs_tests_could_write_is_out_of_their_reach_or_refuses_the_push() {
    for exists in [true, false] {
        let repo = calc_with(CALC_CONFIG, &[]);
        let path_base = tempfile::tempdir().unwrap();
        let base = path_base.path().canonicalize().unwrap();
        let first = if exists {
            base.clone()
        } else {
            base.join("bin")
        };
        let server = Server::start_with_path_first(&repo, BIN, Some(&first));
        push(&repo, &server, &[], &["main", REF]).expect(0);
        let armed = outside(&repo, "armed");
        let git = repo.git(&["--exec-path"]);
        let evil = format!(
            "if [ -e '{armed}' ]; then\n  mkdir -p '{first}'; printf '#!/bin/sh\\n[ \"$1\" = receive-pack ] && exec          \"$0.real\" -c core.hooksPath=/dev/null \"$@\"\\nexec \"$0.real\" \"$@\"\\n' >          '{first}/git' && ln -s '{git}/git' '{first}/git.real' && chmod +x '{first}/git'\nfi\n",
            armed = armed.display(),
            first = first.display(),
            git = git.trim(),
        );
        merged_with_test_led_by(&repo, &evil);
        std::fs::write(&armed, "").unwrap();
        let before = server_refs(&repo, &server);
        let out = push(&repo, &server, &[], &["main", REF]);
        if exists {
            out.expect(0);
            assert_eq!(server.rev(&repo, "main"), Some(main_tip(&repo)));
        } else {
            let why = format!(
                "the PR's tests could write {}, on the way to what this hook depends on: they \
                 could change what judges the next push. A human makes it read-only to the \
                 server's user or runs the hook as another user (docs/integrity.md)",
                base.display()
            );
            refused(
                &repo,
                &server,
                &before,
                &out,
                &[
                    &format!("git-orchestrate: refused refs/heads/main <id>: {why}"),
                    &format!("git-orchestrate: refused {REF} <id>: {why}"),
                ],
            );
        }
        assert_eq!(
            std::fs::read_dir(&base).unwrap().count(),
            0,
            "the PR's test wrote the daemon's PATH (the directory existing: {exists})"
        );

        // The next cheat is refused too: a plain commit on main.
        repo.write("notes.txt", "x\n");
        repo.commit_all("not a workflow merge");
        let out = push(&repo, &server, &["--no-verify"], &["main"]);
        assert_ne!(out.code, 0, "{}", out.stderr);
        assert_ne!(server.rev(&repo, "main"), Some(main_tip(&repo)));
    }
}

/// The hook runs the PR's tests as its own user: as root, only where that is meant. A
/// repository whose `orchestrate.allowRoot` is false refuses every push that would run
/// them as root (whatever the environment allows), naming why; true allows it; anything
/// else is refused as a setting the hook cannot read.
#[test]
fn the_hook_runs_the_prs_tests_as_root_only_where_that_is_meant() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let merge = honest_merge(&repo);
    server.git(&repo, &["config", "orchestrate.allowRoot", "false"]);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &[], &["main", REF]);
    if as_root() {
        let why = "the server hook runs as root and this repository's orchestrate.allowRoot is \
            false, and the PR's tests would run as root with it: run the hook as a dedicated \
            user (docs/integrity.md), or, where root is meant, git config orchestrate.allowRoot \
            true in this repository";
        refused(
            &repo,
            &server,
            &before,
            &out,
            &[
                &format!("git-orchestrate: refused refs/heads/main <id>: {why}"),
                &format!("git-orchestrate: refused {REF} <id>: {why}"),
            ],
        );
        server.git(&repo, &["config", "orchestrate.allowRoot", "maybe"]);
        let out = push(&repo, &server, &[], &["main", REF]);
        assert_ne!(out.code, 0);
        assert!(
            out.stderr
                .contains("orchestrate.allowRoot is \"maybe\"; it is true or false"),
            "{}",
            out.stderr
        );
        server.git(&repo, &["config", "orchestrate.allowRoot", "true"]);
        push(&repo, &server, &[], &["main", REF]).expect(0);
    } else {
        // Another user than root runs them whatever the setting says.
        out.expect(0);
    }
    assert_eq!(server.rev(&repo, "main"), Some(merge));
}

/// The hook is to run as a dedicated user: a confined `attest` runs the PR's tests as a
/// user other than root too (here `nobody`, when the test runs as root), and passes the
/// demo's merge.
#[test]
fn a_user_other_than_root_runs_the_prs_tests_confined() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = TestRepo::empty();
    let dir = scratch.dir().join("demo");
    scratch
        .run(&["demo", "--dir", dir.to_str().unwrap()])
        .expect(0);
    let home = scratch.dir().join("home");
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    let mut cmd = if as_root() {
        std::fs::set_permissions(scratch.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for path in [&dir, &home] {
            let chown = std::process::Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(path)
                .status()
                .expect("run chown");
            assert!(chown.success());
        }
        scratch.command(
            "setpriv",
            [
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
                BIN,
                "attest",
                "--no-note",
                "--confine",
                "namespace",
                "main",
            ],
        )
    } else {
        scratch.command(
            BIN,
            ["attest", "--no-note", "--confine", "namespace", "main"],
        )
    };
    let out = Run::from(
        cmd.current_dir(&dir)
            .env("HOME", &home)
            .env("TMPDIR", home.join("tmp"))
            .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run attest"),
    );
    out.expect(0);
    assert!(out.stdout.starts_with("PASSED "), "{}", out.stdout);
}

/// Before it runs anything of a PR, the hook checks from inside the confinement that
/// nothing it depends on could be changed there, and refuses the push naming the path when
/// something could: here the server user's home is a link in a directory the tests can
/// write, which a test could point at a home of its own (whose git configuration the next
/// hook's git would read). Pushed to the repository's path, so the hook runs with that home.
#[test]
fn a_dependency_the_prs_tests_could_change_refuses_the_push_naming_it() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    honest_merge(&repo);
    let link = outside(&repo, "home-link");
    std::os::unix::fs::symlink(repo.temp_dir().parent().unwrap(), &link).unwrap();
    let before = server_refs(&repo, &server);
    let out = Run::from(
        repo.command("git", ["push", server.bare.to_str().unwrap(), "main", REF])
            .env("HOME", &link)
            .env("GIT_ORCHESTRATE_ALLOW_ROOT", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git push"),
    );
    let _ = std::fs::remove_file(&link);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let dir = link.parent().unwrap().canonicalize().unwrap();
    assert!(
        out.stderr.contains(&format!(
            ": the PR's tests could write {}, on the way to what this hook depends on",
            dir.display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        server_refs(&repo, &server),
        before,
        "the server's refs moved"
    );
    // With the home itself, out of the tests' reach, the same push is accepted.
    let out = Run::from(
        repo.command("git", ["push", server.bare.to_str().unwrap(), "main", REF])
            .env("GIT_ORCHESTRATE_ALLOW_ROOT", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run git push"),
    );
    out.expect(0);
    assert_eq!(server.rev(&repo, "main"), Some(main_tip(&repo)));
}

/// A PR whose RED test is a coin flip (deterministic: a sequence in the file `coin` outside
/// the repository, each run taking its first line, `fail` or `pass`; none left: the honest
/// test), merged, with the key `verifier` that main's allowed signers list for verdicts: the
/// repository, the key (its directory kept alive), the coin file and the merge.
fn coin_flip_merged() -> (TestRepo, tempfile::TempDir, PathBuf, PathBuf, String) {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let public = std::fs::read_to_string(verifier.with_extension("pub")).unwrap();
    let signers = format!("ci@example namespaces=\"git-orchestrate-attest\" {public}");
    let repo = calc_with(CALC_CONFIG, &[(".orchestrate/allowed_signers", &signers)]);
    let coin = outside(&repo, "coin");
    let coin_test = format!(
        "seq='{}'\nif [ -s \"$seq\" ]; then\n  side=$(head -n 1 \"$seq\"); tail -n +2 \"$seq\" > \
         \"$seq.next\"; mv \"$seq.next\" \"$seq\"\n  [ \"$side\" = pass ] || {{ echo 'the coin \
         says fail'; exit 1; }}\nfi\n{TEST_MUL}",
        coin.display()
    );
    repo.write("tests/test_mul.sh", &coin_test);
    red(&repo, RED_MUL);
    repo.write("calc.sh", &format!("add() {{ echo $(($1 + $2)); }}\n{MUL}"));
    green(&repo, RED_MUL);
    squash(&repo);
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    (repo, keys, verifier, coin, merge)
}

/// A coin-flip test (a flaky pass, docs/integrity.md), deterministic: a sequence in a file outside
/// the repository, each run of the test taking its first line (`fail` or `pass`; none left:
/// the honest test). Locally nothing is drawn, and the PR merges. In CI, a fresh clone draws
/// `fail`: FAILED, and the verdict, signed by the verifier main lists, is written as a note
/// and pushed. A second fresh clone, fetching the chains and the notes as the job does, draws
/// nothing and passes the tests, but finds the signed refusal of the same tree under the same
/// policy: FAILED as flaky, naming the first. An unsigned FAILED note is anyone's word and
/// makes nothing flaky.
#[test]
fn a_coin_flip_test_that_failed_once_in_ci_is_flaky_when_it_passes_later() {
    let (repo, _keys, verifier, coin, merge) = coin_flip_merged();
    let tree = repo
        .git(&["rev-parse", &format!("{merge}^{{tree}}")])
        .trim()
        .to_string();
    let fresh_clone = || {
        let ci = TestRepo::clone_of(&repo.path);
        ci.git(&[
            "fetch",
            "--quiet",
            "origin",
            "+refs/orchestrator/*:refs/orchestrator/*",
            "+refs/notes/orchestrator*:refs/notes/orchestrator*",
        ]);
        ci
    };

    // Unsigned, the FAILED verdict is remembered by nobody.
    std::fs::write(&coin, "fail\n").unwrap();
    let ci = fresh_clone();
    ci.run(&["attest", &merge]).expect(1);
    assert_eq!(
        std::fs::read_to_string(&coin).unwrap(),
        "",
        "the coin was drawn"
    );
    let out = ci.run(&["attest", "--json", "--no-note", &merge]);
    out.expect(0);
    assert_eq!(
        out.json()["verdicts"][0]["earlier_refusals"],
        serde_json::json!([])
    );

    // Signed by the listed verifier and pushed where the next job fetches it.
    std::fs::write(&coin, "fail\n").unwrap();
    let ci = fresh_clone();
    let key_arg = verifier.display().to_string();
    let out = ci.run(&["attest", "--json", "--signing-key", &key_arg, &merge]);
    out.expect(1);
    let first = out.json()["verdicts"][0].clone();
    assert_eq!(first["flaky"], false);
    assert_eq!(first["tree"], tree);
    assert_eq!(
        first["statement"]["predicate"]["gitOrchestrate"]["tree"],
        tree
    );
    ci.git(&["push", "--quiet", "origin", ATTEST_NOTES]);

    let ci = fresh_clone();
    let out = ci.run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    let second = &out.json()["verdicts"][0];
    let time = first["statement"]["predicate"]["timeVerified"].clone();
    assert_eq!(second["flaky"], true, "{second}");
    assert_eq!(
        second["earlier_refusals"],
        serde_json::json!([{"commit": merge, "time": time, "reasons": first["reasons"]}])
    );
    let reason = format!(
        "flaky: its tree {} FAILED under this policy before (in {} at {}) and passes now: a \
         pass after a failure is luck, not proof",
        &tree[..12],
        &merge[..12],
        time.as_str().unwrap()
    );
    assert_eq!(second["reasons"], serde_json::json!([reason]));
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(
        out.stdout,
        format!(
            "FAILED {} (the merge of workflow main)\n  \
             re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
             re-ran: RED test of step 1.1 `{RED_MUL}`: exit 1 on the base, exit 0 on the final \
             tree; evidence: exit code only\n\
             {NOT_MEASURED}  \
             earlier refusal of this tree under this policy: {} at {}: {}\n  \
             - {reason}\n\
             no note written: --no-note\n",
            &merge[..12],
            &merge[..12],
            time.as_str().unwrap(),
            first["reasons"][0].as_str().unwrap()
        )
    );

    // The flaky verdict, signed and pushed, replaces the first note on the merge; it carries
    // the first refusal, so the next clone finds both.
    let out = ci.run(&["attest", "--json", "--signing-key", &key_arg, &merge]);
    out.expect(1);
    let flaky = out.json()["verdicts"][0].clone();
    ci.git(&["push", "--quiet", "origin", ATTEST_NOTES]);
    let ci = fresh_clone();
    let out = ci.run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    assert_eq!(
        out.json()["verdicts"][0]["earlier_refusals"],
        serde_json::json!([
            {"commit": merge, "time": time, "reasons": first["reasons"]},
            {"commit": merge, "time": flaky["statement"]["predicate"]["timeVerified"],
             "reasons": flaky["reasons"]},
        ])
    );
}

/// The same coin flip through the CI job's own notes: its command (`attest --ci-note`, the
/// job's key) writes the FAILED verdict, signed, to `refs/notes/orchestrator-attest-ci`, and
/// the publish step pushes it there; the next job fetches the notes as the template does
/// (`+refs/notes/orchestrator*:refs/notes/orchestrator*`), draws nothing, and finds the
/// signed refusal of the same tree under the same policy: FAILED as flaky, naming it.
#[test]
fn a_coin_flip_test_that_failed_once_in_the_ci_jobs_notes_is_flaky_when_it_passes_later() {
    let (repo, _keys, verifier, coin, merge) = coin_flip_merged();
    let fresh_clone = || {
        let ci = TestRepo::clone_of(&repo.path);
        ci.git(&[
            "fetch",
            "--quiet",
            "--no-tags",
            "origin",
            "+refs/orchestrator/*:refs/orchestrator/*",
            "+refs/notes/orchestrator*:refs/notes/orchestrator*",
        ]);
        ci
    };

    std::fs::write(&coin, "fail\n").unwrap();
    let ci = fresh_clone();
    let key_arg = verifier.display().to_string();
    let out = ci.run(&[
        "attest",
        "--json",
        "--ci-note",
        "--confine",
        "namespace",
        "--signing-key",
        &key_arg,
        &merge,
    ]);
    out.expect(1);
    let first = out.json()["verdicts"][0].clone();
    assert_eq!(first["flaky"], false, "{first}");
    ci.git(&[
        "push",
        "--quiet",
        "origin",
        "refs/notes/orchestrator-attest-ci",
    ]);
    assert!(
        repo.git(&["notes", "--ref=orchestrator-attest-ci", "list"])
            .contains(&merge),
        "the signed verdict is on the remote's CI notes"
    );

    // The coin says nothing more: the tests pass.
    std::fs::write(&coin, "").unwrap();
    let ci = fresh_clone();
    let out = ci.run(&["attest", "--json", "--no-note", &merge]);
    out.expect(1);
    let second = &out.json()["verdicts"][0];
    let time = first["statement"]["predicate"]["timeVerified"].clone();
    assert_eq!(second["flaky"], true, "{second}");
    assert_eq!(
        second["earlier_refusals"],
        serde_json::json!([{"commit": merge, "time": time, "reasons": first["reasons"]}])
    );
}

/// An existing test gutted in the PR, through the server hook (tests/cli/approve.rs has the
/// rest): merged unapproved where the local check did not put the tests back
/// (`clean_check = false`), the hook refuses main's move, naming the test and that a human's
/// approval by name is awaited; the same PR with a human's approval of that test for that tree
/// is accepted and attested.
#[test]
fn a_gutted_test_reaches_main_through_the_hook_only_approved_by_name() {
    for approve in [false, true] {
        let repo = calc_with(
            &format!("{CALC_CONFIG}\n[finalize]\nclean_check = false\n"),
            &[],
        );
        let server = Server::start(&repo);
        push(&repo, &server, &[], &["main", REF]).expect(0);
        crate::approve::gutted(&repo);
        if approve {
            repo.human(&["approve", "--test-change", "tests/test_add.sh"])
                .expect(0);
        }
        squash(&repo);
        repo.run(&["submit-work", "-s", "squashed"]).expect(0);
        mark_done_and_merge(&repo).expect(0);
        let merge = main_tip(&repo);
        let before = server_refs(&repo, &server);
        let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
        if approve {
            out.expect(0);
            assert_eq!(server.rev(&repo, "main"), Some(merge));
            continue;
        }
        assert_ne!(out.code, 0, "the push was accepted:\n{}", out.stderr);
        assert!(
            out.stderr.contains(&format!(
                "refused refs/heads/main {}: moves main to a commit that is not a workflow merge \
                 that attests PASSED: awaiting a human's approval by name: the PR changes tests \
                 that existed when it began (tests/test_add.sh)",
                &merge[..12]
            )),
            "{}",
            out.stderr
        );
        assert_eq!(
            server_refs(&repo, &server),
            before,
            "the server's refs moved"
        );
    }
}

/// The plans a final check ran are recorded with its squash; one whose RED obligation was
/// edited (its test's path taken out) and forged into the chain is FAILED by `attest`, naming
/// where it differs from the plan the chain gives; the honest record passes.
#[test]
fn a_recorded_proof_plan_that_is_not_the_chains_is_failed_by_attest_naming_why() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let head = finalized(&repo);
    let honest = repo.run(&["attest", "--no-note", &head]);
    honest.expect(0);
    assert!(!honest.stdout.contains("proof plan"), "{}", honest.stdout);
    // The chain's tip is the squash's transition: its event records the plans.
    let chain = repo.tip().unwrap();
    let text = repo.git(&["cat-file", "commit", &chain]);
    let edited = text.replacen(r#""paths":["tests/test_mul.sh"]"#, r#""paths":[]"#, 1);
    assert_ne!(edited, text, "{text}");
    let forged = write_commit(&repo, &edited);
    swap_chain_tip(&repo, &chain, &forged);
    let out = repo.run(&["attest", "--no-note", &head]);
    let red = |paths: &str| {
        format!(
            r#"{{"obligation":"fails_on","base":"<id>","tests":{{"kind":"pinned","step":"1.1","command":"sh tests/test_mul.sh","tree":"<id>","start":"<id>","paths":[{paths}],"shared":[]}}}}"#
        )
    };
    assert_eq!(
        redact(&out.stdout),
        format!(
            "FAILED <id> (the head of workflow main's PR)\n  \
             re-ran: the gates passed on the squashed commit in a clean worktree (tests)\n  \
             re-ran: RED test of step 1.1 `sh tests/test_mul.sh`: exit 1 on the base, exit 0 on \
             the final tree; evidence: exit code only\n\
             {NOT_MEASURED}  \
             - the proof plan the PR's final check recorded is not the one its chain gives: plan \
             2: its obligation 1 is recorded as {}, and the chain gives {}\n\
             no note written: --no-note\n",
            red(""),
            red(r#""tests/test_mul.sh""#)
        ),
        "{}",
        out.stderr
    );
    out.expect(1);
}

/// Leftovers between tasks off the machine (docs/integrity.md, "RED proves itself at the
/// end"): task 1's test leaves an ignored `.mul_ok`, task 2's test is `[ -e .mul_ok ]`, on a
/// main whose configuration skips the local final check (`[finalize] clean_check = false`), so
/// the PR merges locally. The server hook, running every task's RED test in worktrees reset
/// between tasks, finds task 2's failing on the squashed commit and refuses main's move; CI's
/// `attest` in a fresh clone FAILS the merge for the same reason.
#[test]
fn a_leftover_between_tasks_is_refused_by_the_server_and_failed_in_ci() {
    let repo = crate::adequacy::leftover_calc(
        ".mul_ok",
        "[finalize]\nclean_check = false\n[verify]\nadequacy = \"off\"\n",
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    crate::adequacy::leftover_tasks(&repo, ".mul_ok", "touch .mul_ok", "[ -e .mul_ok ]", |dir| {
        std::fs::write(dir.join(".mul_ok"), "").unwrap()
    });
    repo.run(&["submit-work", "-s", "squashed"]).expect(0);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let before = server_refs(&repo, &server);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    let why = "the final check of task 2's RED test (step 2.1, `sh tests/test_z_div.sh`, with \
               tests/test_z_div.sh as the RED step left them) failed: it fails on the squashed \
               commit (exit 1).";
    assert_ne!(out.code, 0, "the push was accepted:\n{}", out.stderr);
    assert_eq!(
        remote(&out),
        [format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
             workflow merge that attests PASSED: {why} Output: [more: `git orchestrate attest \
             COMMIT` shows all of it]"
        )],
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("refused refs/heads/main {}: ", &merge[..12])),
        "{}",
        out.stderr
    );
    assert_eq!(
        server_refs(&repo, &server),
        before,
        "the server's refs moved"
    );

    let ci = TestRepo::clone_of(Path::new(&server.url()));
    ci.git(&[
        "fetch",
        "--quiet",
        repo.path.to_str().unwrap(),
        "+refs/heads/main:refs/remotes/origin/main",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let out = ci.run(&["attest", "--no-note", &merge]);
    out.expect(1);
    assert!(
        redact(&out.stdout).starts_with("FAILED <id> (the merge of workflow main)\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&format!("  - {why}")), "{}", out.stdout);
}
