//! What the server and `verify` hold to beyond the judging of a merge (docs/integrity.md,
//! "The server hook"): a real `git daemon` on 127.0.0.1 serving a bare repository with the
//! server hook installed. A verdict note under any notes ref named for the verdicts is the
//! server's alone, and `verify` believes no unsigned verdict, FAILED or PASSED; the CI job's
//! files are protected paths.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use crate::oracle::{CALC_CONFIG, calc_with, finalized, main_tip, mark_done_and_merge};
use crate::support::*;

/// A `git daemon` on 127.0.0.1 serving `remote.git`, a bare repository with the server hook
/// installed (as tests/cli/attest.rs's); killed and waited for when dropped.
struct Server {
    daemon: GitDaemon,
    bare: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(repo: &TestRepo) -> Server {
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
        repo.run(&["attest", "--install-server-hook", bare.to_str().unwrap()])
            .expect(0);
        Server {
            daemon: GitDaemon::start(repo, &base),
            bare,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        self.daemon.url("remote.git")
    }

    /// The server's `reference`, if it has it.
    fn rev(&self, repo: &TestRepo, reference: &str) -> Option<String> {
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

    /// The server's refs, as `<ref> <id>` lines.
    fn refs(&self, repo: &TestRepo) -> String {
        self.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"])
    }
}

/// The verification notes.
const NOTES: &str = "refs/notes/orchestrator";

/// Pushes `refspecs` to the server, as given; how it ended.
fn push(repo: &TestRepo, server: &Server, extra: &[&str], refspecs: &[&str]) -> Run {
    let url = server.url();
    let mut args = vec!["push"];
    args.extend_from_slice(extra);
    args.push(&url);
    args.extend_from_slice(refspecs);
    repo.git_run(&args)
}

/// The lines the server's hooks printed, ids redacted.
fn remote(out: &Run) -> Vec<String> {
    out.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote: "))
        .map(|l| redact_ids(l.trim_end()))
        .filter(|l| !l.is_empty())
        .collect()
}

/// Asserts the push was refused by the hook with exactly `lines` (ids redacted), and that
/// the server's refs are still `before`.
#[track_caller]
fn refused(repo: &TestRepo, server: &Server, before: &str, out: &Run, lines: &[&str]) {
    assert_ne!(out.code, 0, "the push was accepted:\n{}", out.stderr);
    assert!(
        out.stderr.contains("(pre-receive hook declined)"),
        "not the hook's refusal:\n{}",
        out.stderr
    );
    assert_eq!(remote(out), lines, "{}", out.stderr);
    assert_eq!(server.refs(repo), before, "the server's refs moved");
}

/// The calculator on a server: main and the chain pushed, then the PR done honestly, merged
/// and pushed (accepted and attested) with its notes in the same push, as the landing pushes
/// them; the merge.
fn merged_on_server(repo: &TestRepo, server: &Server) -> String {
    push(repo, server, &[], &["main", REF]).expect(0);
    finalized(repo);
    mark_done_and_merge(repo).expect(0);
    let merge = main_tip(repo);
    push(repo, server, &[], &["main", REF, NOTES]).expect(0);
    assert_eq!(server.rev(repo, "main"), Some(merge.clone()));
    merge
}

/// A verdict note forged by a client, pushed under any notes ref named for the verdicts (the
/// one CI's `refs/notes/*` fetch would bring in beside the server's included): refused. A
/// FAILED verdict nobody signed, found in a clone, makes `verify` say `unauth`, not FAILED.
#[test]
fn a_forged_verdict_under_any_notes_ref_is_refused_and_an_unsigned_failure_is_unauth() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    let merge = merged_on_server(&repo, &server);
    let honest = server.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let failed = honest
        .lines()
        .next()
        .unwrap()
        .replace("\"PASSED\"", "\"FAILED\"");
    assert_ne!(failed, honest.lines().next().unwrap());

    let before = server.refs(&repo);
    for target in [
        "refs/notes/remotes/origin/orchestrator-attest",
        "refs/notes/ci/orchestrator-attest",
        "refs/notes/orchestrator-attest",
    ] {
        repo.git(&["notes", "--ref", target, "add", "-f", "-m", &failed, &merge]);
        let out = push(
            &repo,
            &server,
            &["--no-verify"],
            &[&format!("+{target}:{target}")],
        );
        let expected = format!(
            "git-orchestrate: refused {target} <id>: only the server writes attestations; no \
             client pushes to them"
        );
        refused(&repo, &server, &before, &out, &[&expected]);
    }
    assert!(
        !server
            .refs(&repo)
            .contains("remotes/origin/orchestrator-attest")
    );

    // A clone that has the forged note anyway (fetched before the server refused them):
    // nothing signed it, so it is no one's word.
    push(&repo, &server, &[], &["refs/notes/orchestrator"]).expect(0);
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
        "+refs/notes/orchestrator:refs/notes/orchestrator",
    ]);
    ci.git(&[
        "notes",
        "--ref",
        "refs/notes/remotes/origin/orchestrator-attest",
        "add",
        "-f",
        "-m",
        &failed,
        &merge,
    ]);
    let range = format!("{merge}^..{merge}");
    let json = ci.run(&["verify", "--json", &range]).expect(0).json();
    assert_eq!(
        json["attested"][0]["attestation"],
        serde_json::json!({
            "status": "unauthenticated",
            "why": "an unsigned FAILED verdict: whoever can write this clone's notes could have \
                    written it"
        })
    );
    let out = ci.run(&["verify", &range]);
    out.expect(0).says("unauth");
    assert!(
        !out.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("FAILED")),
        "{}",
        out.stdout
    );
}

/// The verification notes on the server are only added to: deleting them, pushing another
/// history over them, removing the note a commit on main carries, taking a line out of it,
/// adding one or writing it again otherwise are refused (a clone would then read an honest
/// merge as unverified, or read a record its merge never had), and so is a first note on a
/// commit that was on main before the push (a forged record for a human's commit or an old
/// merge); a note on a commit not on main is taken.
#[test]
fn the_verification_notes_of_main_are_only_added_to() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    let merge = merged_on_server(&repo, &server);
    push(&repo, &server, &[], &["refs/notes/orchestrator"]).expect(0);
    let on_main = repo
        .git(&["notes", "--ref", "orchestrator", "list"])
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, object)| object.to_string()))
        .find(|object| {
            repo.git_try(&["merge-base", "--is-ancestor", object, "main"])
                .0
        })
        .expect("a commit on main carries a note");
    let before = server.refs(&repo);
    let notes = "refs/notes/orchestrator";

    let out = push(&repo, &server, &[], &[&format!(":{notes}")]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/notes/orchestrator: deletes the verification notes \
           (refs/notes/orchestrator): the record of what was verified is only added to",
        ],
    );

    repo.git(&["notes", "--ref", "forged", "add", "-m", "{}", &merge]);
    let out = push(
        &repo,
        &server,
        &[],
        &[&format!("+refs/notes/forged:{notes}")],
    );
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/notes/orchestrator <id>: rewrites the verification \
           notes: a push may only add notes on top of them (sync merges two clones' notes by \
           the union of their lines)",
        ],
    );

    let kept = repo.git(&["rev-parse", notes]).trim().to_string();
    repo.git(&["notes", "--ref", "orchestrator", "remove", &on_main]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/notes/orchestrator <id>: removes the note on <id>, a \
           commit on main: a merged commit's record is kept",
        ],
    );

    repo.git(&["update-ref", notes, &kept]);
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-f",
        "-m",
        "{}",
        &on_main,
    ]);
    let out = push(&repo, &server, &[], &[notes]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let lines = remote(&out);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with(
            "git-orchestrate: refused refs/notes/orchestrator <id>: takes a line \
             out of the note on <id>, a commit on main ("
        ) && lines[0].ends_with("): a merged commit's record keeps every line it had"),
        "{}",
        lines[0]
    );
    assert_eq!(server.refs(&repo), before);

    // The note kept as a link to its blob (git reads notes from regular files only), and a
    // second note for the same commit at the fan-out path beside it: refused.
    let listing = repo.git(&["ls-tree", &format!("{kept}^{{tree}}")]);
    let entry = listing
        .lines()
        .find(|l| l.ends_with(&format!("\t{on_main}")))
        .expect("the note is a flat entry");
    let blob = entry.split(['\t', ' ']).nth(2).unwrap().to_string();
    let hand_made = |tree: &str| {
        repo.git(&["commit-tree", tree, "-p", &kept, "-m", "notes by hand"])
            .trim()
            .to_string()
    };
    let linked = repo.git_with_stdin(
        &["mktree"],
        listing
            .replace(entry, &entry.replacen("100644", "120000", 1))
            .as_bytes(),
    );
    repo.git(&["update-ref", notes, &hand_made(linked.trim())]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/notes/orchestrator <id>: holds \"{on_main}\" (120000 \
             blob), which is no note: a note is a regular file named by the object it is on"
        )
        .replace(&on_main, "<id>")],
    );
    let sub = repo.git_with_stdin(
        &["mktree"],
        format!("100644 blob {blob}\t{}\n", &on_main[2..]).as_bytes(),
    );
    let doubled = repo.git_with_stdin(
        &["mktree"],
        format!("{listing}040000 tree {}\t{}\n", sub.trim(), &on_main[..2]).as_bytes(),
    );
    repo.git(&["update-ref", notes, &hand_made(doubled.trim())]);
    let out = push(&repo, &server, &[], &[notes]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        remote(&out)
            .iter()
            .any(|l| l.contains(": holds two notes for <id> (")),
        "{}",
        out.stderr
    );
    assert_eq!(server.refs(&repo), before);

    // The note moved where git does not read it (a four-digit directory): refused as well.
    let deep = repo.git_with_stdin(
        &["mktree"],
        format!("100644 blob {blob}\t{}\n", &on_main[4..]).as_bytes(),
    );
    let moved = repo.git_with_stdin(
        &["mktree"],
        format!(
            "{}\n040000 tree {}\t{}\n",
            listing
                .lines()
                .filter(|l| *l != entry)
                .collect::<Vec<_>>()
                .join("\n"),
            deep.trim(),
            &on_main[..4]
        )
        .as_bytes(),
    );
    repo.git(&["update-ref", notes, &hand_made(moved.trim())]);
    let out = push(&repo, &server, &[], &[notes]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        remote(&out)
            .iter()
            .any(|l| l.contains("which is no note: a note is a regular file named by the object")),
        "{}",
        out.stderr
    );
    assert_eq!(server.refs(&repo), before);

    // A line appended to the note of a commit on main, or its lines written again in another
    // shape (each twice): refused, naming the commit; a merged commit's record stays as it
    // was merged.
    repo.git(&["update-ref", notes, &kept]);
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "append",
        "-m",
        "{\"added\":1}",
        &on_main,
    ]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&redact_ids(&format!(
            "git-orchestrate: refused {notes} <id>: adds a line to the note on {}, a commit on \
             main (\"{{\\\"added\\\":1}}\"): a merged commit's record stays as it was merged",
            &on_main[..12]
        ))],
    );
    repo.git(&["update-ref", notes, &kept]);
    let text = repo.git(&["notes", "--ref", "orchestrator", "show", &on_main]);
    let doubled = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        format!("{text}{text}").as_bytes(),
    );
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-f",
        "-C",
        doubled.trim(),
        &on_main,
    ]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&redact_ids(&format!(
            "git-orchestrate: refused {notes} <id>: rewrites the note on {}, a commit on main \
             (its lines in another order or spelling): a merged commit's record stays as it was \
             merged",
            &on_main[..12]
        ))],
    );

    // Two clones' notes merged by git (the union of their lines), one with a line of its
    // own on that commit: refused as well.
    repo.git(&["update-ref", notes, &kept]);
    repo.git(&[
        "notes",
        "--ref",
        "other",
        "add",
        "-m",
        "{\"theirs\":1}",
        &on_main,
    ]);
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "merge",
        "--quiet",
        "-s",
        "union",
        "refs/notes/other",
    ]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&redact_ids(&format!(
            "git-orchestrate: refused {notes} <id>: adds a line to the note on {}, a commit on \
             main (\"{{\\\"theirs\\\":1}}\"): a merged commit's record stays as it was merged",
            &on_main[..12]
        ))],
    );

    // What the product writes is still taken: a note on a commit not on main (a PR's
    // checkpoint, noted as it is made) added, then changed. A first note on a commit that was
    // on main before the push (main's first commit, a human's, which none had) is refused,
    // naming it: no flow writes a merged commit's record after its merge's push.
    repo.git(&["update-ref", notes, &kept]);
    let first = repo
        .git(&["rev-list", "--max-parents=0", "main"])
        .trim()
        .to_string();
    assert!(
        !repo
            .git(&["notes", "--ref", "orchestrator", "list"])
            .contains(&first),
        "main's first commit carries no note"
    );
    repo.git(&["checkout", "-q", "-b", "side", &first]);
    repo.write("side.txt", "side\n");
    repo.commit_all("side: not on main");
    let side = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-m",
        "{\"side\":1}",
        &side,
    ]);
    push(&repo, &server, &[], &["side", notes]).expect(0);
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "append",
        "-m",
        "{\"side\":2}",
        &side,
    ]);
    let appended = repo.git(&["rev-parse", notes]).trim().to_string();
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-m",
        "{\"first\":1}",
        &first,
    ]);
    let before = server.refs(&repo);
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
    assert!(
        out.stderr
            .contains(&format!("adds a first note on {}, ", &first[..12])),
        "{}",
        out.stderr
    );
    repo.git(&["update-ref", notes, &appended]);
    push(&repo, &server, &[], &[notes]).expect(0);
    assert_eq!(server.rev(&repo, notes), Some(appended));
}

/// A server that holds no notes yet takes none on a commit already on its main: the first
/// notes push after a merge reached the server without them (a plain `git push` of main) is
/// refused, naming a commit, while the same notes pushed with main in one push are taken.
#[test]
fn the_first_notes_pushed_after_main_are_refused_with_main_they_are_taken() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let noted = repo
        .git(&["notes", "--ref", "orchestrator", "list"])
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, object)| object.to_string()))
        .filter(|object| {
            repo.git_try(&["merge-base", "--is-ancestor", object, "main"])
                .0
        })
        .collect::<Vec<_>>();
    assert!(!noted.is_empty(), "main's commits carry notes here");
    let before = server.refs(&repo);
    let out = push(&repo, &server, &[], &[NOTES]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        remote(&out),
        [format!(
            "git-orchestrate: refused {NOTES} <id>: adds a first note on <id>, a commit on main \
             before this push that had none: a commit's record is written before it is merged \
             and pushed with the merge at the latest"
        )]
    );
    assert!(
        noted.iter().any(|object| out
            .stderr
            .contains(&format!("adds a first note on {}, ", &object[..12]))),
        "names none of {noted:?}: {}",
        out.stderr
    );
    assert_eq!(server.refs(&repo), before);

    // The same notes with main, on a server that has neither yet.
    let fresh = Server::start(&repo);
    push(&repo, &fresh, &[], &["main", REF, NOTES]).expect(0);
    assert_eq!(
        fresh.rev(&repo, NOTES),
        Some(repo.git(&["rev-parse", NOTES]).trim().to_string())
    );
}

/// An entry the server's notes already held before the guard existed (written there by hand,
/// not pushed) does not block the notes pushed on top of it, while a push bringing another is
/// still refused; and the notes ref spelled in another case (one file with it where the file
/// system folds case) is refused.
#[test]
fn notes_kept_from_before_the_guard_do_not_block_later_notes() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    merged_on_server(&repo, &server);
    let notes = "refs/notes/orchestrator";
    push(&repo, &server, &[], &[notes]).expect(0);
    let on_main = repo
        .git(&["notes", "--ref", "orchestrator", "list"])
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, object)| object.to_string()))
        .find(|object| {
            repo.git_try(&["merge-base", "--is-ancestor", object, "main"])
                .0
        })
        .expect("a commit on main carries a note");

    // A stray file in the server's notes tree, put there behind the hook's back.
    let kept = repo.git(&["rev-parse", notes]).trim().to_string();
    let with = |name: &str, base: &str| {
        let blob = repo.git_with_stdin(&["hash-object", "-w", "--stdin"], b"not a note\n");
        let listing = repo.git(&["ls-tree", &format!("{base}^{{tree}}")]);
        let tree = repo.git_with_stdin(
            &["mktree"],
            format!("{listing}100644 blob {}\t{name}\n", blob.trim()).as_bytes(),
        );
        repo.git(&["commit-tree", tree.trim(), "-p", base, "-m", "by hand"])
            .trim()
            .to_string()
    };
    let stray = with("README", &kept);
    push(
        &repo,
        &server,
        &[],
        &[&format!("{stray}:refs/heads/carrier")],
    )
    .expect(0);
    server.git(&repo, &["update-ref", notes, &stray]);
    server.git(&repo, &["update-ref", "-d", "refs/heads/carrier"]);
    repo.git(&["update-ref", notes, &stray]);

    // A note on a commit not on main (as a PR's checkpoint is noted), on top of the stray.
    let side = repo
        .git(&["commit-tree", &format!("{on_main}^{{tree}}"), "-m", "side"])
        .trim()
        .to_string();
    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-m",
        "{\"added\":1}",
        &side,
    ]);
    push(&repo, &server, &[], &[notes]).expect(0);
    let now = repo.git(&["rev-parse", notes]).trim().to_string();
    assert_eq!(server.rev(&repo, notes), Some(now.clone()));

    let before = server.refs(&repo);
    repo.git(&["update-ref", notes, &with("LICENSE", &now)]);
    let out = push(&repo, &server, &[], &[notes]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/notes/orchestrator <id>: holds \"LICENSE\" (100644 \
           blob), which is no note: a note is a regular file named by the object it is on",
        ],
    );

    let out = push(
        &repo,
        &server,
        &[],
        &[&format!("{now}:refs/notes/ORCHESTRATOR")],
    );
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/notes/ORCHESTRATOR <id>: differs only in case from \
           refs/notes/orchestrator (the server's, or made by this push): where the file system \
           folds case it is that ref's own file",
        ],
    );

    // A workflow named as the server's own but in another case would be judged as another
    // workflow, and be that workflow's file where the file system folds case; a guarded
    // namespace spelled in another case (no ref of that name yet) is refused as well.
    let chain = repo.git(&["rev-parse", REF]).trim().to_string();
    for (spelled, why) in [
        (
            "refs/orchestrator/workflows/MAIN",
            "differs only in case from refs/orchestrator/workflows/main (the server's, or made \
             by this push): where the file system folds case it is that ref's own file",
        ),
        (
            "refs/Orchestrator/workflows/other",
            "differs from a ref the server guards only in case: where the file system folds \
             case it is that ref's own file; push it under its own name",
        ),
    ] {
        let out = push(&repo, &server, &[], &[&format!("{chain}:{spelled}")]);
        refused(
            &repo,
            &server,
            &before,
            &out,
            &[&format!("git-orchestrate: refused {spelled} <id>: {why}")],
        );
    }

    // Two refs the push makes that fold together: the second is refused. A branch renamed
    // in its case in one push (the old name deleted) is taken.
    let tip = repo.git(&["rev-parse", "main"]).trim().to_string();
    let out = push(
        &repo,
        &server,
        &[],
        &[
            &format!("{tip}:refs/heads/Twin"),
            &format!("{tip}:refs/heads/twin"),
        ],
    );
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        remote(&out).contains(
            &"git-orchestrate: refused refs/heads/twin <id>: differs only in case from \
              refs/heads/Twin (the server's, or made by this push): where the file system \
              folds case it is that ref's own file"
                .to_string()
        ),
        "{}",
        out.stderr
    );
    assert_eq!(server.refs(&repo), before);
    push(&repo, &server, &[], &[&format!("{tip}:refs/heads/Feature")]).expect(0);
    push(
        &repo,
        &server,
        &[],
        &[":refs/heads/Feature", &format!("{tip}:refs/heads/feature")],
    )
    .expect(0);
    assert_eq!(server.rev(&repo, "refs/heads/feature"), Some(tip));
}

/// A push that merges a PR moves main and the notes together: the commits it brings onto main
/// are merged commits once it lands, so taking a line out of the note of one (the squash's
/// final note, pushed before while it was a PR's commit) in that push is refused; the honest
/// push of the same merge is taken.
#[test]
fn notes_of_commits_a_merge_brings_onto_main_are_kept_in_its_push() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    let notes = "refs/notes/orchestrator";
    push(&repo, &server, &[], &["main", REF]).expect(0);
    let squashed = finalized(&repo);
    push(&repo, &server, &[], &[notes]).expect(0);
    let kept = repo.git(&["notes", "--ref", "orchestrator", "show", &squashed]);
    mark_done_and_merge(&repo).expect(0);
    let honest = repo.git(&["rev-parse", notes]).trim().to_string();
    assert!(
        repo.git_try(&["merge-base", "--is-ancestor", &squashed, "main"])
            .0,
        "the merge brings the squash onto main"
    );

    repo.git(&[
        "notes",
        "--ref",
        "orchestrator",
        "add",
        "-f",
        "-m",
        "{\"rewritten\":1}",
        &squashed,
    ]);
    let before = server.refs(&repo);
    let out = push(&repo, &server, &[], &["main", REF, notes]);
    let first: String = kept
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(80)
        .collect();
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: <id> attests PASSED (workflow main)",
            &redact_ids(&format!(
                "git-orchestrate: refused {notes} <id>: takes a line out of the note on {}, a \
                 commit on main ({first:?}): a merged commit's record keeps every line it had",
                &squashed[..12]
            )),
        ],
    );

    repo.git(&["update-ref", notes, &honest]);
    push(&repo, &server, &[], &["main", REF, notes]).expect(0);
    assert_eq!(server.rev(&repo, notes), Some(honest));
}

/// `straße` and `strasse` are two names where the file system folds case (HFS+ and NTFS map
/// one code point to one, and `ß` has no one-letter upper case): the server takes both, in
/// one push; a name that differs from them only in case is still refused.
#[test]
fn names_that_only_full_case_mapping_joins_are_not_twins() {
    let repo = TestRepo::new();
    let server = Server::start(&repo);
    let tip = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    push(&repo, &server, &[], &["main"]).expect(0);
    push(
        &repo,
        &server,
        &[],
        &[
            &format!("{tip}:refs/heads/straße"),
            &format!("{tip}:refs/heads/strasse"),
        ],
    )
    .expect(0);
    assert_eq!(server.rev(&repo, "refs/heads/straße"), Some(tip.clone()));
    assert_eq!(server.rev(&repo, "refs/heads/strasse"), Some(tip.clone()));

    let before = server.refs(&repo);
    for (spelled, twin) in [
        ("refs/heads/STRASSE", "refs/heads/strasse"),
        ("refs/heads/STRA\u{1e9e}E", "refs/heads/straße"),
    ] {
        let out = push(&repo, &server, &[], &[&format!("{tip}:{spelled}")]);
        refused(
            &repo,
            &server,
            &before,
            &out,
            &[&format!(
                "git-orchestrate: refused {spelled} <id>: differs only in case from {twin} (the \
                 server's, or made by this push): where the file system folds case it is that \
                 ref's own file"
            )],
        );
    }
}

/// `café` spelled as `e` + U+0301 (decomposed, as macOS writes names) beside `café` spelled
/// U+00E9: one name on APFS and HFS+, so the second is refused as the first's twin, pushed
/// after it or in the same push. `STRA\u{1e9e}E` and `STRASSE` are two names: the capital
/// sharp s folds to `ß` (simple case folding), and only full case folding takes that to `ss`.
#[test]
fn names_that_differ_only_in_unicode_normalization_are_twins() {
    let repo = TestRepo::new();
    let server = Server::start(&repo);
    let tip = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    push(&repo, &server, &[], &["main"]).expect(0);
    let composed = "refs/heads/caf\u{e9}";
    let decomposed = "refs/heads/cafe\u{301}";
    push(&repo, &server, &[], &[&format!("{tip}:{composed}")]).expect(0);
    let before = server.refs(&repo);
    let twin = |spelled: &str, of: &str| {
        format!(
            "git-orchestrate: refused {spelled} <id>: differs only in case from {of} (the \
             server's, or made by this push): where the file system folds case it is that \
             ref's own file"
        )
    };
    let out = push(&repo, &server, &[], &[&format!("{tip}:{decomposed}")]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[&twin(decomposed, composed)],
    );
    let out = push(
        &repo,
        &server,
        &[],
        &[
            &format!("{tip}:refs/heads/na\u{ef}ve"),
            &format!("{tip}:refs/heads/NAI\u{308}VE"),
        ],
    );
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        remote(&out).contains(&twin("refs/heads/NAI\u{308}VE", "refs/heads/na\u{ef}ve")),
        "{}",
        out.stderr
    );
    assert_eq!(server.refs(&repo), before);

    push(&repo, &server, &[], &[&format!("{tip}:refs/heads/STRASSE")]).expect(0);
    push(
        &repo,
        &server,
        &[],
        &[&format!("{tip}:refs/heads/STRA\u{1e9e}E")],
    )
    .expect(0);
    assert_eq!(server.rev(&repo, "refs/heads/STRA\u{1e9e}E"), Some(tip));
}

/// A file added beside the CI job `init --ci` writes, under the directories CI reads its
/// jobs from (`.github/workflows/zz.yml`, running on the same events with a job named as
/// the required check that only exits 0; `.gitlab/other.yml`): the PR changes protected
/// paths, and its verification does not count.
#[test]
fn a_pr_that_adds_a_ci_file_beside_the_job_does_not_verify() {
    for added in [".github/workflows/zz.yml", ".gitlab/other.yml"] {
        let repo = TestRepo::new();
        repo.write(
            ".github/workflows/git-orchestrate.yml",
            "jobs:\n  attest:\n    steps:\n      - run: git orchestrate attest \"$SHA\"\n",
        );
        repo.commit_all("ci: attest every PR");
        repo.submit_plan(PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.submit_test(RED, Some("FAIL")).expect(3);
        repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
            .expect(0);
        repo.write("add.sh", "echo 5\n");
        repo.write(added, "jobs:\n  attest:\n    steps:\n      - run: exit 0\n");
        let out = repo.submit_test("sh add.sh", None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap(),
            format!(
                "FAILURE: `sh add.sh` passed (exit 0), but the working tree changes protected \
                 paths ({added}): a human changes these on main; debugging attempt 1"
            )
        );
    }
}

/// A PR that adds a workflow beside the CI job: the agent cannot commit it through the
/// workflow (above), so it forges the PR's last commit to carry it, and rewrites the merge
/// and the chain to match, as an agent that writes anything in its clone can. `attest`
/// FAILS the merge and the server's hook refuses it, each naming the protected path.
#[test]
fn a_pr_that_adds_a_ci_workflow_is_failed_and_refused() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    forge_merged_pr(
        &repo,
        &server,
        &[(
            ".github/workflows/zz.yml",
            "on: pull_request\njobs:\n  attest:\n    steps:\n      - run: exit 0\n",
        )],
    );
    failed_and_refused(
        &repo,
        &server,
        ".github/workflows/zz.yml, docs/plan.md",
        ".github/workflows/zz.yml",
    );
}

/// The calculator on `server` (main and the chain pushed), its PR done and merged here, then
/// the PR's last commit forged to carry `files` too (written into its tree), the merge and
/// the chain made again to match, and main and the chain moved here to them, not pushed: as
/// an agent that writes anything in its clone can.
fn forge_merged_pr(repo: &TestRepo, server: &Server, files: &[(&str, &str)]) {
    forge_merged_pr_removing(repo, server, files, &[]);
}

/// [`forge_merged_pr`], the PR's last commit forged to remove the files `removed` too.
fn forge_merged_pr_removing(
    repo: &TestRepo,
    server: &Server,
    files: &[(&str, &str)],
    removed: &[&str],
) {
    use crate::attest::{rewrite_tree, swap_chain_tip, write_commit};
    push(repo, server, &[], &["main", REF]).expect(0);
    finalized(repo);
    mark_done_and_merge(repo).expect(0);
    let merge = main_tip(repo);
    let chain = repo.tip().unwrap();
    let pr_head = repo.git(&["rev-parse", "main^2"]).trim().to_string();

    // The PR's last commit, and the merge, with `files` written into their tree.
    let tree = repo.git(&["rev-parse", "main^{tree}"]).trim().to_string();
    assert_eq!(
        repo.git(&["rev-parse", &format!("{pr_head}^{{tree}}")])
            .trim(),
        tree
    );
    let index = tempfile::tempdir().expect("temp dir");
    let index = index.path().join("index");
    let git = |args: &[&str]| {
        let out = repo
            .command("git", args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["read-tree", &tree]);
    for (path, text) in files {
        let blob = repo
            .git_with_stdin(&["hash-object", "-w", "--stdin"], text.as_bytes())
            .trim()
            .to_string();
        git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{path}"),
        ]);
    }
    for path in removed {
        git(&["update-index", "--force-remove", path]);
    }
    let forged_tree = git(&["write-tree"]);
    let retree = |commit: &str| {
        repo.git(&["cat-file", "commit", commit]).replacen(
            &format!("tree {tree}\n"),
            &format!("tree {forged_tree}\n"),
            1,
        )
    };
    let forged_head = write_commit(repo, &retree(&pr_head));
    let forged_merge = write_commit(repo, &retree(&merge).replace(&pr_head, &forged_head));

    // The chain from the first transition that names the PR's last commit, made again with
    // both forged commits named instead.
    let swaps = [(&pr_head, &forged_head), (&merge, &forged_merge)];
    let transitions: Vec<String> = repo
        .git(&["rev-list", "--first-parent", "--reverse", REF])
        .lines()
        .map(str::to_string)
        .collect();
    let names = |commit: &str| {
        repo.git(&["show", &format!("{commit}:state.json")])
            .contains(pr_head.as_str())
            || repo.git(&["cat-file", "commit", commit]).contains(&pr_head)
    };
    let first = transitions
        .iter()
        .position(|c| names(c))
        .expect("the chain names the PR's last commit");
    let mut moved: Option<(String, String)> = None;
    for commit in &transitions[first..] {
        let old_tree = repo
            .git(&["rev-parse", &format!("{commit}^{{tree}}")])
            .trim()
            .to_string();
        let mut new_tree = old_tree.clone();
        let mut text = repo.git(&["cat-file", "commit", commit]);
        for (from, to) in swaps {
            new_tree = rewrite_tree(repo, &new_tree, from, to);
            text = text.replace(from.as_str(), to);
        }
        text = text.replacen(
            &format!("tree {old_tree}\n"),
            &format!("tree {new_tree}\n"),
            1,
        );
        if let Some((old, new)) = &moved {
            text = text.replacen(&format!("parent {old}\n"), &format!("parent {new}\n"), 1);
        }
        moved = Some((commit.clone(), write_commit(repo, &text)));
    }
    let (_, forged_chain) = moved.expect("a transition rewritten");
    repo.git(&["update-ref", "refs/heads/main", &forged_merge, &merge]);
    swap_chain_tip(repo, &chain, &forged_chain);
}

/// Asserts `attest` FAILS main's forged merge and the server's hook refuses it, each naming
/// `changed` (the files the forged PR changes besides the plan, as the reasons list them)
/// as protected paths.
#[track_caller]
fn failed_and_refused(repo: &TestRepo, server: &Server, changed: &str, protected: &str) {
    let reasons = [
        format!("the master-plan commit <id> changes more than the master plan: {changed}"),
        format!("the PR changes protected paths (a human changes these on main): {protected}"),
    ];
    let out = repo.run(&["attest", "--no-note", "main"]);
    assert_eq!(
        redact_ids(&out.stdout),
        format!(
            "FAILED <id> (the merge of workflow main)\n  - {}\n  - {}\nno note written: \
             --no-note\n",
            reasons[0], reasons[1]
        )
    );
    out.expect(1);
    let before = server.refs(repo);
    let out = push(repo, server, &["--no-verify"], &["main", REF]);
    refused(
        repo,
        server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
             workflow merge that attests PASSED: {}",
            reasons.join("; ")
        )],
    );
}

/// The CI job's files as `init --ci` writes them, on main: a forged PR that swaps the job's
/// `attest` call for `echo '{}'`, deletes the job or renames it is FAILED by `attest` and
/// refused by the server's hook, each naming the job's files as protected paths.
#[test]
fn a_pr_that_neuters_deletes_or_renames_the_ci_job_is_failed_and_refused() {
    const INSTALL: &str = "cargo install --locked --git https://example.invalid/g.git --rev \
        0123456789012345678901234567890123456789";
    let written = TestRepo::new();
    for ci in ["github", "gitlab"] {
        written
            .run(&["init", "--ci", ci, "--ci-install", INSTALL])
            .expect(0);
    }
    let github = ".github/workflows/git-orchestrate.yml";
    let gitlab = ".gitlab/git-orchestrate.yml";
    let pipeline = ".gitlab-ci.yml";
    let read = |path: &str| std::fs::read_to_string(written.dir().join(path)).unwrap();
    let jobs = [
        (github, read(github)),
        (gitlab, read(gitlab)),
        (pipeline, read(pipeline)),
    ];
    let on_main: Vec<(&str, &str)> = jobs.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let neutered = |text: &str| {
        assert!(text.contains("git orchestrate attest"), "{text}");
        text.replace("git orchestrate attest", "echo '{}' #")
    };
    let (github_neutered, gitlab_neutered) = (neutered(&jobs[0].1), neutered(&jobs[1].1));
    // Each: the files the forged PR writes and removes, what the reasons name.
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, &'a str)>,
        Vec<&'a str>,
        &'a str,
        &'a str,
    );
    let cases: [Case; 5] = [
        (
            "the GitHub job's attest call swapped for echo '{}'",
            vec![(github, &github_neutered)],
            vec![],
            ".github/workflows/git-orchestrate.yml, docs/plan.md",
            ".github/workflows/git-orchestrate.yml",
        ),
        (
            "the GitHub job deleted",
            vec![],
            vec![github],
            ".github/workflows/git-orchestrate.yml, docs/plan.md",
            ".github/workflows/git-orchestrate.yml",
        ),
        (
            "the GitHub job renamed",
            vec![(".github/workflows/renamed.yml", &jobs[0].1)],
            vec![github],
            ".github/workflows/git-orchestrate.yml, .github/workflows/renamed.yml, docs/plan.md",
            ".github/workflows/git-orchestrate.yml, .github/workflows/renamed.yml",
        ),
        (
            "the GitLab job's attest call swapped for echo '{}'",
            vec![(gitlab, &gitlab_neutered)],
            vec![],
            ".gitlab/git-orchestrate.yml, docs/plan.md",
            ".gitlab/git-orchestrate.yml",
        ),
        (
            "the GitLab pipeline deleted",
            vec![],
            vec![pipeline],
            ".gitlab-ci.yml, docs/plan.md",
            ".gitlab-ci.yml",
        ),
    ];
    for (case, forged, removed, changed, protected) in cases {
        eprintln!("case: {case}");
        let repo = calc_with(CALC_CONFIG, &on_main);
        let server = Server::start(&repo);
        forge_merged_pr_removing(&repo, &server, &forged, &removed);
        failed_and_refused(&repo, &server, changed, protected);
    }
}

/// The code a CI file on main names, wherever it is, is protected as the CI file is: a local
/// action a workflow runs (`uses: ./tools/act`), one under `.github/actions/`, a file
/// `.gitlab-ci.yml` includes (in each form: a string, `local:`, a list, a wildcard) and one
/// that included file includes in turn. A forged PR that changes one is FAILED by `attest`
/// and refused by the server's hook, naming it; so is a PR that adds an include to
/// `.gitlab-ci.yml` and the file it names.
#[test]
fn code_a_ci_file_names_is_protected_through_the_hook() {
    let act = "name: act\nruns:\n  using: composite\n  steps:\n    - run: ./tools/act/run.sh\n      shell: sh\n";
    // Each: the files on main, the files the forged PR writes, what the reasons name.
    type Files<'a> = Vec<(&'a str, &'a str)>;
    let cases: [(&str, Files, Files, &str, &str); 6] = [
        (
            "a local action a workflow uses",
            vec![
                (
                    ".github/workflows/ci.yml",
                    "jobs:\n  t:\n    steps:\n      - uses: actions/checkout@v4\n      - uses: ./tools/act\n",
                ),
                ("tools/act/action.yml", act),
                ("tools/act/run.sh", "exit 1\n"),
            ],
            vec![("tools/act/run.sh", "exit 0\n")],
            "docs/plan.md, tools/act/run.sh",
            "tools/act/run.sh",
        ),
        (
            "an action under .github/actions",
            vec![(".github/actions/setup/action.yml", act)],
            vec![(
                ".github/actions/setup/action.yml",
                "runs:\n  using: composite\n  steps: []\n",
            )],
            ".github/actions/setup/action.yml, docs/plan.md",
            ".github/actions/setup/action.yml",
        ),
        (
            "a file .gitlab-ci.yml includes, and one that includes",
            vec![
                (".gitlab-ci.yml", "include:\n  - local: /ci/jobs.yml\n"),
                ("ci/jobs.yml", "include: 'ci/deep/test.yml'\n"),
                ("ci/deep/test.yml", "test:\n  script: [./run_tests.sh]\n"),
            ],
            vec![("ci/deep/test.yml", "test:\n  script: [exit 0]\n")],
            "ci/deep/test.yml, docs/plan.md",
            "ci/deep/test.yml",
        ),
        (
            "a file a flow list includes",
            vec![
                (
                    ".gitlab-ci.yml",
                    "include: [ci/a.yml, 'https://example.com/b.yml']\n",
                ),
                ("ci/a.yml", "a: 1\n"),
            ],
            vec![("ci/a.yml", "a: 2\n")],
            "ci/a.yml, docs/plan.md",
            "ci/a.yml",
        ),
        (
            "a file added where a wildcard includes",
            vec![(".gitlab-ci.yml", "include:\n  local: 'ci/jobs/*.yml'\n")],
            vec![("ci/jobs/zz.yml", "attest:\n  script: [exit 0]\n")],
            "ci/jobs/zz.yml, docs/plan.md",
            "ci/jobs/zz.yml",
        ),
        (
            "an include added with the file it names",
            vec![(".gitlab-ci.yml", "test:\n  script: [./run_tests.sh]\n")],
            vec![
                (
                    ".gitlab-ci.yml",
                    "include: ci/new.yml\ntest:\n  script: [./run_tests.sh]\n",
                ),
                ("ci/new.yml", "attest:\n  script: [exit 0]\n"),
            ],
            ".gitlab-ci.yml, ci/new.yml, docs/plan.md",
            ".gitlab-ci.yml, ci/new.yml",
        ),
    ];
    for (case, on_main, forged, changed, protected) in cases {
        eprintln!("case: {case}");
        let repo = calc_with(CALC_CONFIG, &on_main);
        let server = Server::start(&repo);
        forge_merged_pr(&repo, &server, &forged);
        failed_and_refused(&repo, &server, changed, protected);
    }
}

/// GitLab's issue and merge request templates are not CI: a PR that changes one verifies,
/// while a YAML file beside them under `.gitlab/` is still protected, and a template that
/// `[gates] protected` reaches stays protected.
#[test]
fn a_pr_that_changes_a_gitlab_template_verifies() {
    for (config, file, refused) in [
        ("", ".gitlab/issue_templates/bug.md", false),
        ("", ".gitlab/merge_request_templates/default.md", false),
        ("", ".gitlab/issue_templates/job.yml", true),
        ("", ".gitlab/issue_templates/deeper/bug.md", true),
        (
            "[gates]\nprotected = [\"**/*.md\"]\n",
            ".gitlab/issue_templates/bug.md",
            true,
        ),
    ] {
        let repo = TestRepo::with_config(&format!("{CONFIG}{config}"));
        repo.write(file, "# Bug\n");
        repo.commit_all("a template");
        repo.submit_plan(PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.submit_test(RED, Some("FAIL")).expect(3);
        repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
            .expect(0);
        repo.write("add.sh", "echo 5\n");
        repo.write(file, "# Bug\n\nSteps to reproduce.\n");
        let out = repo.submit_test("sh add.sh", None);
        let first = out.stdout.lines().next().unwrap_or_default().to_string();
        if refused {
            out.expect(1);
            assert_eq!(
                first,
                format!(
                    "FAILURE: `sh add.sh` passed (exit 0), but the working tree changes protected \
                     paths ({file}): a human changes these on main; debugging attempt 1"
                ),
                "{file} {config}"
            );
        } else {
            out.expect(0);
            assert!(first.starts_with("SUCCESS"), "{file}: {}", out.stdout);
        }
    }
}

/// A workflow file a human put on main (as the docs say a protected path is changed) blocks
/// nothing: the PR made on top of it merges, and the server's hook takes the merge.
#[test]
fn a_ci_file_a_human_put_on_main_does_not_block_a_pr() {
    let repo = calc_with(
        CALC_CONFIG,
        &[(
            ".github/workflows/zz.yml",
            "jobs:\n  lint:\n    steps:\n      - run: true\n",
        )],
    );
    let server = Server::start(&repo);
    let merge = merged_on_server(&repo, &server);
    assert_eq!(
        repo.git(&["show", &format!("{merge}:.github/workflows/zz.yml")]),
        "jobs:\n  lint:\n    steps:\n      - run: true\n"
    );
}

/// The CI job `init --ci` writes, on main; a PR whose tree swaps its `attest` call for
/// `echo '{}'` changes a protected path: its verification does not count.
#[test]
fn a_pr_that_neuters_the_ci_job_does_not_verify() {
    for ci_file in [".github/workflows/git-orchestrate.yml", ".gitlab-ci.yml"] {
        let repo = TestRepo::new();
        repo.write(
            ci_file,
            "steps:\n  - run: git orchestrate attest \"$SHA\"\n",
        );
        repo.commit_all("ci: attest every PR");
        repo.submit_plan(PLAN).expect(0);
        repo.run(&["get-task"]).expect(0);
        repo.submit_test(RED, Some("FAIL")).expect(3);
        repo.run(&["submit-work", "-s", "ok", "--analysis-decision", "SUCCESS"])
            .expect(0);
        repo.write("add.sh", "echo 5\n");
        repo.write(ci_file, "steps:\n  - run: echo '{}'\n");
        let out = repo.submit_test("sh add.sh", None);
        out.expect(1);
        assert_eq!(
            out.stdout.lines().next().unwrap(),
            format!(
                "FAILURE: `sh add.sh` passed (exit 0), but the working tree changes protected \
                 paths ({ci_file}): a human changes these on main; debugging attempt 1"
            )
        );
    }
}

/// The verdicts the server wrote, as `<note id> <commit>` lines.
fn server_notes(repo: &TestRepo, server: &Server) -> String {
    server.git(repo, &["notes", "--ref", "orchestrator-attest", "list"])
}

/// A post-receive hook killed (SIGKILL) before it wrote its verdict: main moved, no note. The
/// next push's post-receive writes it (one server), and `attest --repair` does (another),
/// and running it again changes nothing.
#[test]
fn a_killed_post_receive_is_completed_by_the_next_push_or_by_repair() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let next = Server::start(&repo);
    let repaired = Server::start(&repo);
    for server in [&next, &repaired] {
        push(&repo, server, &[], &["main", REF]).expect(0);
    }
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    for server in [&next, &repaired] {
        let hook = server.bare.join("hooks/post-receive");
        let installed = std::fs::read_to_string(&hook).unwrap();
        std::fs::write(&hook, "#!/bin/sh\nkill -9 $$\n").unwrap();
        let out = push(&repo, server, &[], &["main", REF]);
        out.expect(0);
        assert!(
            !out.stderr.contains("verdict written"),
            "the hook was killed before it wrote:\n{}",
            out.stderr
        );
        std::fs::write(&hook, installed).unwrap();
        assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
        assert_eq!(server_notes(&repo, server), "", "no verdict was written");
        assert!(
            server
                .bare
                .join("orchestrator/attested")
                .join(&merge)
                .is_file(),
            "the kept verdict is left behind"
        );
    }

    // The next push, of anything, completes the record.
    let out = push(&repo, &next, &[], &["main:refs/heads/side"]);
    out.expect(0);
    assert_eq!(
        remote(&out),
        ["git-orchestrate: 1 verdict written under refs/notes/orchestrator-attest"],
        "{}",
        out.stderr
    );
    let note = next.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    assert_eq!(
        statement["subject"][0]["digest"]["gitCommit"],
        merge.as_str()
    );
    assert!(
        !next
            .bare
            .join("orchestrator/attested")
            .join(&merge)
            .exists()
    );

    // `attest --repair` in the bare repository does the same, once.
    let out = repo.run_in(&repaired.bare, &["attest", "--repair"]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        "1 verdict written under refs/notes/orchestrator-attest: <id>\n"
    );
    let written = server_notes(&repo, &repaired);
    assert!(written.trim_end().ends_with(&merge), "{written}");
    let repaired_note = repaired.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value =
        serde_json::from_str(repaired_note.lines().next().unwrap()).unwrap();
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    assert_eq!(
        statement["subject"][0]["digest"]["gitCommit"],
        merge.as_str()
    );
    assert!(
        !repaired
            .bare
            .join("orchestrator/attested")
            .join(&merge)
            .exists()
    );
    let notes_ref = repaired.rev(&repo, "refs/notes/orchestrator-attest");
    repo.run_in(&repaired.bare, &["attest", "--repair"])
        .expect(0)
        .says("nothing to repair");
    assert_eq!(
        repaired.rev(&repo, "refs/notes/orchestrator-attest"),
        notes_ref
    );

    // Killed after the note, before it let the kept verdict go: the file is back, its note
    // written. A repair lets it go and says so, writing nothing (it said "1 verdict written").
    let blob = repaired.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "list", &merge],
    );
    let kept = repaired.bare.join("orchestrator/attested").join(&merge);
    std::fs::write(
        &kept,
        repaired.git(&repo, &["cat-file", "blob", blob.trim()]),
    )
    .unwrap();
    let out = repo.run_in(&repaired.bare, &["attest", "--repair"]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        "1 kept verdict already written under refs/notes/orchestrator-attest, now let go: <id>\n"
    );
    assert!(!kept.exists(), "the kept verdict is let go");
    assert_eq!(
        repaired.rev(&repo, "refs/notes/orchestrator-attest"),
        notes_ref
    );
    std::fs::write(
        &kept,
        repaired.git(&repo, &["cat-file", "blob", blob.trim()]),
    )
    .unwrap();
    let out = repo.run_in(&repaired.bare, &["attest", "--repair", "--json"]);
    out.expect(0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"schema": 1, "written": [], "already_written": [merge.as_str()]})
    );
}

/// Every push's post-receive completes the record, so two of them (or a post-receive and
/// `attest --repair`) can take the same kept verdict at once: one that finds the file gone
/// (the other wrote the note, then removed it) goes on to the rest, which may be its own
/// push's verdict. Six repairs released together over one kept verdict, several rounds: each
/// exits 0, exactly one reports the verdict written, and the note is written once.
#[test]
fn racing_post_receives_over_one_kept_verdict_all_complete_and_write_it_once() {
    use std::io::Write as _;
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let hook = server.bare.join("hooks/post-receive");
    let installed = std::fs::read_to_string(&hook).unwrap();
    std::fs::write(&hook, "#!/bin/sh\nkill -9 $$\n").unwrap();
    push(&repo, &server, &[], &["main", REF]).expect(0);
    std::fs::write(&hook, installed).unwrap();
    let kept = server.bare.join("orchestrator/attested").join(&merge);
    let verdict = std::fs::read(&kept).expect("the kept verdict");
    const RACERS: usize = 6;
    for round in 0..5 {
        // Kept again as the killed hook left it: the note, once written, is rewritten as it
        // is (no change), so each round races over the same file.
        std::fs::write(&kept, &verdict).unwrap();
        // Each repair blocked on its stdin until all are started, then released together.
        let mut racers: Vec<std::process::Child> = (0..RACERS)
            .map(|_| {
                let mut cmd =
                    repo.command("sh", ["-c", "read go && exec \"$0\" attest --repair", BIN]);
                cmd.current_dir(&server.bare)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                cmd.spawn().expect("start a repair")
            })
            .collect();
        for racer in &mut racers {
            racer
                .stdin
                .take()
                .expect("its stdin")
                .write_all(b"go\n")
                .expect("release it");
        }
        let mut outputs: Vec<String> = racers
            .into_iter()
            .map(|racer| {
                let out = Run::from(racer.wait_with_output().expect("a repair"));
                format!(
                    "exit {}: {}{}",
                    out.code,
                    redact_ids(&out.stdout),
                    out.stderr
                )
            })
            .collect();
        outputs.sort();
        // The run that lets the kept file go reports it: as written where its own write made
        // the note (the first round may go either way), else as found written already.
        let written = "exit 0: 1 verdict written under refs/notes/orchestrator-attest: <id>\n";
        let already = "exit 0: 1 kept verdict already written under \
             refs/notes/orchestrator-attest, now let go: <id>\n";
        let reported = if round == 0 && outputs.iter().any(|o| o == written) {
            written
        } else {
            already
        };
        let mut expected = vec![reported.to_string()];
        expected.extend(std::iter::repeat_n(
            "exit 0: nothing to repair: every kept verdict on main is written\n".to_string(),
            RACERS - 1,
        ));
        expected.sort();
        assert_eq!(outputs, expected, "round {round}");
        assert!(!kept.exists(), "round {round}: the kept verdict is written");
    }
    // One note, on the merge, PASSED: written once, then rewritten as it is.
    assert_eq!(server_notes(&repo, &server).lines().count(), 1);
    let note = server.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    let history = server.git(
        &repo,
        &["rev-list", "--count", "refs/notes/orchestrator-attest"],
    );
    assert_eq!(history.trim(), "1", "the verdict's note written once");
}

/// A post-receive hook killed while it moved the verdicts' ref leaves git's lock on it. Once
/// the lock is older than a command holds one, the next push and `attest --repair` name it and
/// say how to finish on a server (delete it, then `attest --repair`): the verdict is kept
/// meanwhile, then written once; repairing again changes nothing.
#[test]
fn a_lock_left_by_a_killed_post_receive_is_named_and_the_verdict_waits_for_repair() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let hook = server.bare.join("hooks/post-receive");
    let installed = std::fs::read_to_string(&hook).unwrap();
    // Killed at the lock's rename, as git's lock protocol leaves it: the lock holds the new
    // value, the ref is not there yet.
    let lock = server.bare.join("refs/notes/orchestrator-attest.lock");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nmkdir -p '{}'\necho {merge} > '{}'\nkill -9 $$\n",
            lock.parent().unwrap().display(),
            lock.display()
        ),
    )
    .unwrap();
    push(&repo, &server, &[], &["main", REF]).expect(0);
    std::fs::write(&hook, installed).unwrap();
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    assert_eq!(server_notes(&repo, &server), "", "no verdict was written");
    // A repair names the lock, and exits 5.
    let repair_names_the_lock = || {
        let out = repo.run_in(&server.bare, &["attest", "--repair"]);
        out.expect(5);
        assert!(
            out.stderr.starts_with(&format!(
                "error: the notes ref refs/notes/orchestrator-attest is locked by {} (left ",
                lock.display()
            )),
            "{}",
            out.stderr
        );
        out
    };
    // Just left, the lock is no crash's yet by its age: a repair at once names it too (it
    // said "the workflow changed while this command ran", on a server that has none).
    repair_names_the_lock();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();

    let hint = format!(
        "hint: Only the verdict's note was not written; a server keeps the verdict until it is. \
         If no git or git-orchestrate process is still running, delete the lock (rm {}), then \
         run `git orchestrate attest --repair` in the server's bare repository (its next push \
         does it too), or `git orchestrate attest` again in a clone.",
        lock.display()
    );
    let out = push(&repo, &server, &[], &["main:refs/heads/side"]);
    out.expect(0);
    assert!(
        out.stderr.contains(&format!("remote: {hint}")),
        "{}",
        out.stderr
    );
    let out = repair_names_the_lock();
    assert_eq!(
        out.stderr.lines().last(),
        Some(hint.as_str()),
        "{}",
        out.stderr
    );
    assert_eq!(server_notes(&repo, &server), "");
    assert!(
        server
            .bare
            .join("orchestrator/attested")
            .join(&merge)
            .is_file(),
        "the verdict is kept"
    );

    // The lock deleted, as the hint says: written once, and then nothing to repair.
    std::fs::remove_file(&lock).unwrap();
    let out = repo.run_in(&server.bare, &["attest", "--repair"]);
    out.expect(0);
    assert_eq!(
        redact_ids(&out.stdout),
        "1 verdict written under refs/notes/orchestrator-attest: <id>\n"
    );
    let note = server.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    let notes_ref = server.rev(&repo, "refs/notes/orchestrator-attest");
    repo.run_in(&server.bare, &["attest", "--repair"])
        .expect(0)
        .says("nothing to repair");
    assert_eq!(
        server.rev(&repo, "refs/notes/orchestrator-attest"),
        notes_ref
    );
}

/// main's `[attest] signing_key` naming a device or a FIFO, the key the server signs its
/// verdicts with (`ssh-keygen -Y sign` would read the one forever and wait on the other): the
/// push that moves main fails closed at once, naming the key, and nothing moves.
#[test]
fn a_server_signing_key_that_is_a_device_or_a_fifo_fails_the_push_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("key");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    for (key, kind) in [("/dev/zero", "a device"), (fifo, "a FIFO")] {
        let repo = calc_with(
            &format!("{CALC_CONFIG}\n[attest]\nsigning_key = \"{key}\"\n"),
            &[],
        );
        let server = Server::start(&repo);
        push(&repo, &server, &[], &["main", REF]).expect(0);
        finalized(&repo);
        mark_done_and_merge(&repo).expect(0);
        let before = server.refs(&repo);
        let out = push(&repo, &server, &[], &["main", REF]);
        assert_ne!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            remote(&out),
            [format!(
                "error: could not sign the verdict with {key}: ssh-keygen could not sign with \
                 {key}: it is {kind}, not a regular file, and is not read"
            )],
            "{}",
            out.stderr
        );
        assert_eq!(server.refs(&repo), before, "the server's refs moved");
    }
}

/// The calculator whose one gate adds a line to `counter` on each run, and fails while
/// `flag` exists.
fn counted_calc(counter: &Path, flag: &Path) -> TestRepo {
    counted_calc_with(counter, flag, "", &[])
}

/// [`counted_calc`] with `more` appended to main's configuration and `extra` files beside it.
fn counted_calc_with(counter: &Path, flag: &Path, more: &str, extra: &[(&str, &str)]) -> TestRepo {
    let config = CALC_CONFIG.replace(
        "command = \"sh run_tests.sh\"",
        &format!(
            "command = \"echo run >> '{}'; [ ! -e '{}' ] || {{ echo flagged; exit 1; }}; sh run_tests.sh\"",
            counter.display(),
            flag.display()
        ),
    );
    calc_with(&format!("{config}{more}"), extra)
}

/// The server remembers a verdict by tree and policy: a push of a merge it judged PASSED
/// (refused for another ref) is accepted again without running anything; a merge whose gates
/// failed on the server stays failed when pushed again, though they would pass now, and
/// nothing runs.
#[test]
fn a_judged_tree_is_not_judged_again() {
    let outside = tempfile::tempdir().unwrap();
    let counter = outside.path().join("runs");
    let flag = outside.path().join("flag");
    let repo = counted_calc(&counter, &flag);
    let retried = Server::start(&repo);
    let failing = Server::start(&repo);
    for server in [&retried, &failing] {
        push(&repo, server, &[], &["main", REF]).expect(0);
    }
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);

    // Judged PASSED, refused for the replace ref beside it; pushed again: nothing runs.
    let ran = runs(&counter);
    let before = retried.refs(&repo);
    let out = push(
        &repo,
        &retried,
        &["--atomic", "--no-verify"],
        &["main", REF, &format!("{merge}:refs/replace/{merge}")],
    );
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(retried.refs(&repo), before);
    assert!(
        remote(&out).contains(&"git-orchestrate: <id> attests PASSED (workflow main)".to_string()),
        "{}",
        out.stderr
    );
    let judged = runs(&counter);
    assert!(judged > ran, "the server ran the gates");
    let out = push(&repo, &retried, &["--no-verify"], &["main", REF]);
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
    assert_eq!(runs(&counter), judged, "nothing ran again");
    assert_eq!(retried.rev(&repo, "main"), Some(merge.clone()));

    // The gates fail on the server (the flag is set): refused. Without the flag, the same
    // merge stays refused, and nothing runs.
    std::fs::write(&flag, "").unwrap();
    let before = failing.refs(&repo);
    let out = push(&repo, &failing, &["--no-verify"], &["main", REF]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(failing.refs(&repo), before);
    std::fs::remove_file(&flag).unwrap();
    let failed = runs(&counter);
    assert!(failed > judged, "the server ran the gates");
    let out = push(&repo, &failing, &["--no-verify"], &["main", REF]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(failing.refs(&repo), before);
    let lines = remote(&out);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with(
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
             workflow merge that attests PASSED: its tree failed under this policy before (a \
             later pass would be luck; a human who accepts it answers by name: git orchestrate \
             approve --flaky --tree <id>, pushed with the chain): "
        ),
        "{}",
        lines[0]
    );
    assert_eq!(runs(&counter), failed, "nothing ran again");
}

/// The workflow's tip `answer` written again with its signature replaced by `signature`
/// (none: unsigned, its trailer saying so), as an agent would forge it by hand; the chain's
/// ref moved to the copy, which is returned.
fn forged_answer(repo: &TestRepo, answer: &str, signature: Option<&str>) -> String {
    let raw = repo.git(&["cat-file", "commit", answer]);
    let (head, message) = raw.split_once("\n\n").unwrap();
    let mut text: Vec<String> = head
        .lines()
        .filter(|l| !l.starts_with("orchestrator-signature ") && !l.starts_with(' '))
        .map(str::to_string)
        .collect();
    let message = match signature {
        Some(signature) => {
            text.push(format!(
                "orchestrator-signature {}",
                signature.trim_end().replace('\n', "\n ")
            ));
            message.to_string()
        }
        None => message.replace(
            "Orchestrator-Human: signed alice",
            "Orchestrator-Human: GIT_ORCHESTRATE_HUMAN",
        ),
    };
    let id = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        format!("{}\n\n{message}", text.join("\n")).as_bytes(),
    );
    let current = repo.tip().unwrap();
    repo.git(&["update-ref", REF, id.trim(), &current]);
    id.trim().to_string()
}

/// The server's memory of a failed tree (docs/integrity.md) is lifted by a human's answer by name, as
/// `attest`'s is: a merge whose gates failed on the server stays refused when its gates pass;
/// under `[human] require = "signature"`, an `approve --flaky` of another tree, and the
/// right one forged (signed by a key main does not list, or unsigned), pushed with the chain,
/// leave it refused; alice's signed `approve --flaky --tree MERGE` lets it through, and the
/// hook names her answer.
#[test]
fn a_remembered_failure_is_lifted_only_by_a_signed_approval_of_that_tree() {
    let outside = tempfile::tempdir().unwrap();
    let counter = outside.path().join("runs");
    let flag = outside.path().join("flag");
    let keys = tempfile::tempdir().unwrap();
    let alice = crate::signed::key(keys.path(), "alice");
    let mallory = crate::signed::key(keys.path(), "mallory");
    let repo = counted_calc_with(
        &counter,
        &flag,
        "\n[human]\nrequire = \"signature\"\n",
        &[(
            ".orchestrate/allowed_signers",
            &crate::signed::allowed("alice", &alice),
        )],
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let tree = repo.git(&["rev-parse", &format!("{merge}^{{tree}}")]);
    let tree = tree.trim();

    std::fs::write(&flag, "").unwrap();
    let before = server.refs(&repo);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(&flag).unwrap();
    let flaky = format!(
        "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
         workflow merge that attests PASSED: its tree failed under this policy before (a later \
         pass would be luck; a human who accepts it answers by name: git orchestrate approve \
         --flaky --tree {}, pushed with the chain): the clean final check failed: preflight gate \
         `tests` failed (exit 1)",
        redact_ids(tree)
    );
    let still_flaky = |out: &Run| {
        assert_ne!(out.code, 0, "{}", out.stderr);
        assert_eq!(server.refs(&repo), before, "the server's refs moved");
        let lines = remote(out);
        assert_eq!(lines.len(), 1, "{}", out.stderr);
        assert!(lines[0].starts_with(&flaky), "{}", lines[0]);
    };
    still_flaky(&push(&repo, &server, &["--no-verify"], &["main", REF]));

    // Another tree approved, signed by alice: nothing of this one.
    let sign = ["--sign-key", alice.to_str().unwrap()];
    let mut other = vec!["approve", "--flaky", "--tree", "main~1"];
    other.extend_from_slice(&sign);
    repo.human(&other).expect(0);
    still_flaky(&push(&repo, &server, &["--no-verify"], &["main", REF]));

    // This tree, by alice; then forged: signed by mallory instead, or not at all.
    let mut this = vec!["approve", "--flaky", "--tree", &merge];
    this.extend_from_slice(&sign);
    repo.human(&this).expect(0);
    let genuine = repo.tip().unwrap();
    let parent = repo.git(&["rev-parse", &format!("{genuine}^")]);
    let payload = format!(
        "{{\"v\":1,\"workflow\":\"main\",\"tip\":\"{}\",\"answer\":\"approve-tree\",\
         \"text\":{}}}\n",
        parent.trim(),
        serde_json::to_string(&format!("{{\"tree\":\"{tree}\",\"flaky\":true}}")).unwrap()
    );
    let by_mallory = std::fs::read_to_string(crate::signed::sign_elsewhere(
        keys.path(),
        &mallory,
        payload.as_bytes(),
        "forged",
    ))
    .unwrap();
    forged_answer(&repo, &genuine, Some(&by_mallory));
    still_flaky(&push(&repo, &server, &["--no-verify"], &["main", REF]));
    repo.git(&["update-ref", REF, &genuine]);
    forged_answer(&repo, &genuine, None);
    still_flaky(&push(&repo, &server, &["--no-verify"], &["main", REF]));

    repo.git(&["update-ref", REF, &genuine]);
    let ran = runs(&counter);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    out.expect(0);
    assert_eq!(
        remote(&out),
        [
            "git-orchestrate: <id> attests PASSED (workflow main)".to_string(),
            "git-orchestrate: <id>: its tree <id> was refused before and passes now; a human \
             accepted this pass by name in <id> (signed by alice)"
                .to_string(),
            "git-orchestrate: 1 verdict written under refs/notes/orchestrator-attest".to_string(),
        ],
        "{}",
        out.stderr
    );
    assert!(runs(&counter) > ran, "judged afresh");
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    let note = server.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    let ours = &statement["predicate"]["gitOrchestrate"];
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    assert_eq!(ours["earlierRefusals"][0]["commit"], merge.as_str());
    assert!(
        ours["answers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["commit"] == genuine.as_str()),
        "{ours}"
    );
}

/// Under the default `[human] require = "attribution"` an answer need not be signed, and the
/// agent can write one (`GIT_ORCHESTRATE_HUMAN=1`): the server's memory of a failed tree is
/// lifted by a signed answer only, from a key main lists.
#[test]
fn an_unsigned_approval_does_not_lift_the_servers_memory_even_where_attribution_suffices() {
    let outside = tempfile::tempdir().unwrap();
    let counter = outside.path().join("runs");
    let flag = outside.path().join("flag");
    let keys = tempfile::tempdir().unwrap();
    let alice = crate::signed::key(keys.path(), "alice");
    let repo = counted_calc_with(
        &counter,
        &flag,
        "",
        &[(
            ".orchestrate/allowed_signers",
            &crate::signed::allowed("alice", &alice),
        )],
    );
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    std::fs::write(&flag, "").unwrap();
    let before = server.refs(&repo);
    assert_ne!(
        push(&repo, &server, &["--no-verify"], &["main", REF]).code,
        0
    );
    std::fs::remove_file(&flag).unwrap();

    repo.human(&["approve", "--flaky", "--tree", &merge])
        .expect(0);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.refs(&repo), before, "the server's refs moved");
    let lines = remote(&out);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("its tree failed under this policy before"),
        "{}",
        lines[0]
    );

    repo.human(&[
        "approve",
        "--flaky",
        "--tree",
        &merge,
        "--sign-key",
        alice.to_str().unwrap(),
    ])
    .expect(0);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    out.expect(0);
    assert!(
        remote(&out)
            .iter()
            .any(|l| l.ends_with("a human accepted this pass by name in <id> (signed by alice)")),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, "main"), Some(merge));
}

/// The claim on the one PR of [`TestRepo::new`]'s master plan.
const CLAIM: &str = "refs/orchestrator/claims/pr-1-feat-add-numbers";

/// `first`'s main pushed to `server` (its `origin`), then PR 1's plan accepted, which pushes
/// its claim with the chain: the claim as the server holds it.
fn planned_with_its_claim(first: &TestRepo, server: &Server) -> String {
    first.git(&["remote", "add", "origin", &server.url()]);
    first.git(&["push", "--quiet", "origin", "main"]);
    first
        .run_with_stdin(
            &["submit-work", "--summary", "the plan", "--plan", "-"],
            &one_task_plan("feat: Add numbers", "add.sh"),
        )
        .expect(0);
    server.rev(first, CLAIM).expect("the claim was taken")
}

/// Claims on the server: taken by the plan acceptance pushed with it; junk under the claims
/// refs, another clone's plain deletion of the claim and its theft by
/// `GIT_ORCHESTRATE_HUMAN=1 claim steal` are refused, and the claim stays its holder's.
#[test]
fn the_server_guards_claims() {
    let first = TestRepo::new();
    let server = Server::start(&first);
    let held = planned_with_its_claim(&first, &server);
    assert_eq!(
        server.rev(&first, REF),
        first.tip(),
        "pushed with its chain"
    );

    // Another clone: junk under the claims refs, and the claim deleted by a plain push.
    let other = TestRepo::clone_of(Path::new(&server.url()));
    let junk = other.git(&["rev-parse", "HEAD"]).trim().to_string();
    let before = server.refs(&other);
    let out = push(
        &other,
        &server,
        &[],
        &[&format!("{junk}:refs/orchestrator/claims/junk")],
    );
    refused(
        &other,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/orchestrator/claims/junk <id>: not a claim \
           git-orchestrate writes: refs/orchestrator/claims/ holds claims only",
        ],
    );
    let out = push(&other, &server, &[], &[&format!(":{CLAIM}")]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let lines = remote(&out);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].starts_with(&format!(
            "git-orchestrate: refused {CLAIM}: deletes the claim workflow main ("
        )) && lines[0].ends_with(
            "holds while that workflow works on it: its holder's workflow releases it when \
             done, or a listed human does"
        ),
        "{}",
        lines[0]
    );
    assert_eq!(server.refs(&other), before);

    // The other clone's agent posing as a human to steal it.
    let out = other
        .command(BIN, ["claim", "steal", "pr-1-feat-add-numbers"])
        .env("GIT_ORCHESTRATE_HUMAN", "1")
        .env("GIT_ORCHESTRATE_WORKFLOW", "thief")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = Run::from(out);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("only its holder renews it, and only a listed human takes it"),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&first, CLAIM), Some(held.clone()));

    // The holder's claim copied with its end put in the past (a forged lapse, after which
    // anyone could delete it): refused while its workflow works on it.
    let message = other
        .git(&["log", "-1", "--format=%B", &held])
        .lines()
        .map(|l| match l.split_once("Expires: ") {
            Some((key, _)) => format!("{key}Expires: 1700000000"),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(message.contains("Expires: 1700000000"), "{message}");
    let tree = other.git(&["rev-parse", &format!("{held}^{{tree}}")]);
    let forged = other
        .git(&["commit-tree", tree.trim(), "-p", &held, "-m", &message])
        .trim()
        .to_string();
    let out = push(&other, &server, &[], &[&format!("{forged}:{CLAIM}")]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let lines = remote(&out);
    assert!(
        lines.len() == 1
            && lines[0].contains(", before its term (until ")
            && lines[0].starts_with(&format!(
                "git-orchestrate: refused {CLAIM} <id>: would end the claim workflow main ("
            ))
            && lines[0].ends_with(
                "): a renewal runs a full term from now, and its holder's workflow still works \
                 on it"
            ),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&first, CLAIM), Some(held.clone()));

    // Its holder renews it: accepted, the holder's still.
    first.run(&["sync"]).expect(0);
    let renewed = server.rev(&first, CLAIM).expect("still claimed");
    assert_ne!(renewed, held, "a new claim commit");
    let holder = server.git(&first, &["log", "-1", "--format=%B", &renewed]);
    assert!(
        holder.contains("Orchestrator-Claim-Workflow: main\n"),
        "{holder}"
    );
}

/// A claim is taken by the acceptance of a plan for that very PR: a workflow that works on
/// The workflow's tip written again with the plan's summary in its `state.json` retitled
/// `title` (its event, parent and message kept), as the tip: (the tip, the forgery).
fn retitled_tip(repo: &TestRepo, title: &str) -> (String, String) {
    let tip = repo.tip().expect("tip");
    let mut state: serde_json::Value =
        serde_json::from_str(&repo.git(&["show", &format!("{tip}:state.json")])).unwrap();
    state["plan_progress"]["summary"]["title"] = title.into();
    let blob = repo.git_with_stdin(
        &["hash-object", "-w", "--stdin"],
        serde_json::to_string_pretty(&state).unwrap().as_bytes(),
    );
    let entries: String = repo
        .git(&["ls-tree", &tip])
        .lines()
        .map(|line| match line.split_once('\t') {
            Some((_, "state.json")) => format!("100644 blob {}\tstate.json\n", blob.trim()),
            _ => format!("{line}\n"),
        })
        .collect();
    let tree = repo.git_with_stdin(&["mktree"], entries.as_bytes());
    let raw = repo.git(&["cat-file", "commit", &tip]);
    let (_, rest) = raw
        .split_once('\n')
        .expect("a commit's first line is its tree");
    let forged = repo.git_with_stdin(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        format!("tree {}\n{rest}", tree.trim()).as_bytes(),
    );
    let forged = forged.trim().to_string();
    repo.git(&["update-ref", REF, &forged, &tip]);
    (tip, forged)
}

/// A plan accepted for PR 1 whose `state.json` summary (a cache of `pr.json`'s, which the
/// replay of the chain does not hold) is retitled as PR 2, pushed with a claim on PR 2: the
/// claim is keyed from `pr.json`, and refused.
#[test]
fn a_claim_keyed_from_a_retitled_summary_is_refused() {
    let first = TestRepo::new();
    first.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers\n## PR 2: feat: Subtract\n",
    );
    first.commit_all("two PRs");
    // Accepted with no remote yet: no claim pushed with it.
    first
        .run_with_stdin(
            &["submit-work", "--summary", "the plan", "--plan", "-"],
            &one_task_plan("feat: Add numbers", "add.sh"),
        )
        .expect(0);
    retitled_tip(&first, "feat: Subtract");
    let server = Server::start(&first);
    first.git(&["remote", "add", "origin", &server.url()]);
    first.git(&["push", "--quiet", "origin", "main"]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let message = format!(
        "claim pr-2-feat-subtract\n\nOrchestrator-Claim: pr-2-feat-subtract\n\
         Orchestrator-Claim-Workflow: main\nOrchestrator-Claim-Host: h\n\
         Orchestrator-Claim-User: u\nOrchestrator-Claim-Since: {now}\n\
         Orchestrator-Claim-Expires: {}\nOrchestrator-Claim-Nonce: n\n",
        now + 60
    );
    let empty = first.git(&["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let claim = first
        .git(&["commit-tree", empty.trim(), "-m", &message])
        .trim()
        .to_string();
    let other = "refs/orchestrator/claims/pr-2-feat-subtract";
    let before = server.refs(&first);
    let out = push(&first, &server, &[], &[REF, &format!("{claim}:{other}")]);
    refused(
        &first,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused {other} <id>: a claim is taken with its workflow's plan \
             acceptance in the same push, and workflow main accepts no plan for \
             pr-2-feat-subtract in this one (its plan is for pr-1-feat-add-numbers, as the \
             server keys PRs)"
        )],
    );
}

/// PR 1 cannot take PR 2's claim by pushing it beside a step of its own chain (its claim
/// would then hold PR 2 against every other agent, and be renewed as its holder's), nor
/// beside a chain that accepted its plan before this push.
#[test]
fn a_claim_on_another_pr_than_the_pushed_plans_is_refused() {
    let first = TestRepo::new();
    first.write(
        "docs/plan.md",
        "# Plan\n## PR 1: feat: Add numbers\n## PR 2: feat: Subtract\n",
    );
    first.commit_all("two PRs");
    let server = Server::start(&first);
    let held = planned_with_its_claim(&first, &server);
    // The workflow takes a step of PR 1, not pushed yet: its chain moves in the next push.
    first.run(&["get-task"]).expect(0);
    assert_ne!(server.rev(&first, REF), first.tip());

    // A claim on PR 2 in the holder's own name, as its clone writes one.
    let other = "refs/orchestrator/claims/pr-2-feat-subtract";
    let message = first
        .git(&["log", "-1", "--format=%B", &held])
        .replace("pr-1-feat-add-numbers", "pr-2-feat-subtract");
    let empty = first.git(&["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let claim = first
        .git(&["commit-tree", empty.trim(), "-m", message.trim_end()])
        .trim()
        .to_string();
    let before = server.refs(&first);
    let why = "a claim is taken with its workflow's plan acceptance in the same push, and \
        workflow main accepts no plan for pr-2-feat-subtract in this one";
    // Where the chain moves, the refusal names the PR its plan is for, as the server keys it.
    let why_moved =
        format!("{why} (its plan is for pr-1-feat-add-numbers, as the server keys PRs)");
    let out = push(&first, &server, &[], &[REF, &format!("{claim}:{other}")]);
    refused(
        &first,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused {other} <id>: {why_moved}"
        )],
    );
    // The step's commit with the plan's summary in state.json (which only caches what
    // pr.json says, and which the replay does not hold) retitled as PR 2: the same.
    let (tip, forged) = retitled_tip(&first, "feat: Subtract");
    let before = server.refs(&first);
    let out = push(&first, &server, &[], &[REF, &format!("{claim}:{other}")]);
    refused(
        &first,
        &server,
        &before,
        &out,
        &[&format!(
            "git-orchestrate: refused {other} <id>: {why_moved}"
        )],
    );
    first.git(&["update-ref", REF, &tip, &forged]);

    // Beside the chain that accepted PR 1's plan (pushed before) and no step of it: the same.
    first.git(&["push", "--quiet", &server.url(), REF]);
    let before = server.refs(&first);
    let out = push(&first, &server, &[], &[&format!("{claim}:{other}")]);
    refused(
        &first,
        &server,
        &before,
        &out,
        &[&format!("git-orchestrate: refused {other} <id>: {why}")],
    );
    assert_eq!(server.rev(&first, CLAIM), Some(held));
}

/// Where main's configuration requires signed human answers, `claim steal` and `claim
/// release` by `GIT_ORCHESTRATE_HUMAN=1` are refused: a human pushes them signed.
#[test]
fn claim_steal_and_release_honour_signed_answers() {
    let repo = TestRepo::with_config(&format!("{CONFIG}\n[human]\nrequire = \"signature\"\n"));
    let (_dir, _bare) = repo.share();
    repo.submit_plan(PLAN).expect(0);
    let claim = repo.git(&["rev-parse", CLAIM]);
    for verb in ["steal", "release"] {
        repo.human(&["claim", verb, "pr-1-feat-add-numbers"])
            .expect(4)
            .warns("requires [human] require = \"signature\", and GIT_ORCHESTRATE_HUMAN proves no human")
            .warns(&format!(
                "git orchestrate claim {verb} pr-1-feat-add-numbers --signed"
            ));
    }
    assert_eq!(repo.git(&["rev-parse", CLAIM]), claim);
}

/// Where main requires signed human answers and lists a human's key in `[attest] humans`,
/// that human steals a claim by `claim steal --signed`: a signed push the server checks.
#[test]
fn a_listed_human_steals_a_claim_by_a_signed_push() {
    let keys = tempfile::tempdir().unwrap();
    let alice = crate::signed::key(keys.path(), "alice");
    let listed = TestRepo::empty()
        .command("ssh-keygen", ["-lf"])
        .arg(alice.with_extension("pub"))
        .output()
        .unwrap();
    let fingerprint = String::from_utf8_lossy(&listed.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let first = TestRepo::with_config(&format!(
        "{CONFIG}\n[attest]\nhumans = [\"key:{fingerprint}\"]\n[human]\nrequire = \"signature\"\n"
    ));
    let server = Server::start(&first);
    let signers = keys.path().join("allowed_signers");
    let public = std::fs::read_to_string(alice.with_extension("pub")).unwrap();
    std::fs::write(&signers, format!("alice {public}")).unwrap();
    server.git(
        &first,
        &["config", "receive.certNonceSeed", "a server secret"],
    );
    server.git(
        &first,
        &[
            "config",
            "gpg.ssh.allowedSignersFile",
            signers.to_str().unwrap(),
        ],
    );
    let held = planned_with_its_claim(&first, &server);

    let human = TestRepo::clone_of(Path::new(&server.url()));
    human.git(&["config", "gpg.format", "ssh"]);
    human.git(&["config", "user.signingkey", alice.to_str().unwrap()]);
    let steal = |extra: &[&str]| {
        let mut args = vec!["claim", "steal", "pr-1-feat-add-numbers"];
        args.extend_from_slice(extra);
        Run::from(
            human
                .command(BIN, &args)
                .env("GIT_ORCHESTRATE_HUMAN", "1")
                .env("GIT_ORCHESTRATE_WORKFLOW", "boss")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap(),
        )
    };
    steal(&[]).expect(4);
    assert_eq!(server.rev(&first, CLAIM), Some(held.clone()));
    steal(&["--signed"])
        .expect(0)
        .says("claim on pr-1-feat-add-numbers taken on origin for workflow boss");
    let now = server.rev(&first, CLAIM).expect("claimed");
    assert_ne!(now, held);
    assert!(
        server
            .git(&first, &["log", "-1", "--format=%B", &now])
            .contains("Orchestrator-Claim-Workflow: boss\n")
    );
}

/// Under `[verify] recorded_plans = "require"` on main, a merge whose PR's squash had its
/// proof plans removed from the chain is refused by the server hook, naming why: the hook
/// decides from `attest`'s verdict.
#[test]
fn a_merge_whose_plans_were_removed_is_refused_under_require() {
    use crate::recorded_plans::{REQUIRE, chain_commit, strip_plans};
    let repo = calc_with(&format!("{CALC_CONFIG}{REQUIRE}"), &[]);
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main", REF]).expect(0);
    finalized(&repo);
    strip_plans(&repo, &chain_commit(&repo, "squash"));
    mark_done_and_merge(&repo).expect(0);
    let before = server.refs(&repo);
    let out = push(&repo, &server, &["--no-verify"], &["main", REF]);
    refused(
        &repo,
        &server,
        &before,
        &out,
        &[
            "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
           workflow merge that attests PASSED: the PR's final check recorded no proof plan, and \
           the pinned configuration requires one ([verify] recorded_plans = \"require\"): \
           nothing shows what that check ran",
        ],
    );
}

/// A ticket's merge the server refused once stays refused (docs/integrity.md), as a PR's: its answer
/// is on the ticket's chain. Under the default `[human] require = "attribution"`, with alice
/// listed in main's allowed signers: a merge whose gates failed on the server stays refused
/// when they pass; alice's signed `approve --flaky` of another tree, and an unsigned one of
/// this tree, pushed with the chain, leave it refused; her signed approval of this tree lets
/// it through, and the hook names her answer.
#[test]
fn a_tickets_remembered_failure_is_lifted_only_by_a_signed_approval_on_its_chain() {
    let outside = tempfile::tempdir().unwrap();
    let flag = outside.path().join("flag");
    let keys = tempfile::tempdir().unwrap();
    let alice = crate::signed::key(keys.path(), "alice");
    let repo = TestRepo::empty();
    repo.write("run_tests.sh", crate::tickets::RUNNER);
    repo.write(
        ".orchestrate.toml",
        &format!(
            "[[preflight]]\nname = \"tests\"\ncommand = \"[ ! -e '{}' ] || {{ echo flagged; exit \
             1; }}; sh run_tests.sh\"\ntimeout = \"30s\"\n",
            flag.display()
        ),
    );
    repo.write(
        ".orchestrate/allowed_signers",
        &crate::signed::allowed("alice", &alice),
    );
    repo.write("src/base.sh", "echo base\n");
    repo.commit_all("initial");
    let server = Server::start(&repo);
    push(&repo, &server, &[], &["main"]).expect(0);
    crate::tickets::finished_ticket(&repo);
    let merge = main_tip(&repo);
    let tree = repo.git(&["rev-parse", &format!("{merge}^{{tree}}")]);
    let tree = tree.trim();
    // The ticket's branch went at the merge: what keeps its subtasks' commits goes with it.
    let verified = repo.run(&["--json", "ticket", "show"]).json()["ticket"]["verified"]
        .as_str()
        .unwrap()
        .to_string();
    let kept = format!("{verified}:refs/orchestrator/kept/main");
    let refs = ["main", REF, kept.as_str()];

    std::fs::write(&flag, "").unwrap();
    let before = server.refs(&repo);
    let out = push(&repo, &server, &["--no-verify"], &refs);
    assert_ne!(out.code, 0, "{}", out.stderr);
    std::fs::remove_file(&flag).unwrap();
    let refusal = format!(
        "git-orchestrate: refused refs/heads/main <id>: moves main to a commit that is not a \
         workflow merge that attests PASSED: its tree failed under this policy before (a later \
         pass would be luck; a human who accepts it answers by name: git orchestrate approve \
         --flaky --tree {}, pushed with the chain): the pinned gates do not pass on the \
         squashed commit",
        redact_ids(tree)
    );
    let still_refused = |out: &Run| {
        assert_ne!(out.code, 0, "{}", out.stderr);
        assert_eq!(server.refs(&repo), before, "the server's refs moved");
        assert_eq!(
            remote(out),
            std::slice::from_ref(&refusal),
            "{}",
            out.stderr
        );
    };
    still_refused(&push(&repo, &server, &["--no-verify"], &refs));

    // Another tree approved, signed by alice; then this tree, unsigned.
    let sign = ["--sign-key", alice.to_str().unwrap()];
    let mut other = vec!["approve", "--flaky", "--tree", "main~1"];
    other.extend_from_slice(&sign);
    repo.human(&other).expect(0);
    still_refused(&push(&repo, &server, &["--no-verify"], &refs));
    let out = repo.human(&["approve", "--flaky"]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!(
            "approved for the tree {tree} only: a pass after an earlier failure (unsigned); \
             ticket TICKET_DONE\n"
        )
    );
    still_refused(&push(&repo, &server, &["--no-verify"], &refs));

    let mut this = vec!["approve", "--flaky"];
    this.extend_from_slice(&sign);
    repo.human(&this).expect(0).says("(signed by alice)");
    let genuine = repo.tip().unwrap();
    let out = push(&repo, &server, &["--no-verify"], &refs);
    out.expect(0);
    assert_eq!(
        remote(&out),
        [
            "git-orchestrate: <id> attests PASSED (workflow main)".to_string(),
            "git-orchestrate: <id>: its tree <id> was refused before and passes now; a human \
             accepted this pass by name in <id> (signed by alice)"
                .to_string(),
            "git-orchestrate: 1 verdict written under refs/notes/orchestrator-attest".to_string(),
        ],
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, "main"), Some(merge.clone()));
    let note = server.git(
        &repo,
        &["notes", "--ref", "orchestrator-attest", "show", &merge],
    );
    let statement: serde_json::Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    let ours = &statement["predicate"]["gitOrchestrate"];
    assert_eq!(statement["predicate"]["verificationResult"], "PASSED");
    assert_eq!(ours["earlierRefusals"][0]["commit"], merge.as_str());
    let answers = ours["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 1, "{ours}");
    assert_eq!(answers[0]["commit"], genuine.as_str());
    assert_eq!(
        answers[0]["verdict"],
        serde_json::json!({"verdict": "signed", "principal": "alice"})
    );
}

/// Two landings at once: the second's client saw main before the first's merge landed, so
/// its move of main starts where main no longer is, and git's compare-and-swap refuses it
/// whatever the hook says. The hook says it as git does ("… but expected …"), which the
/// landing reads as a lost race and tries again, rather than judging the push against the
/// other merge (its notes would read as notes added after it). The hook is run as
/// receive-pack runs it, with the stale line such a push gives it.
#[test]
fn a_push_overtaken_by_another_is_refused_as_a_lost_race() {
    let repo = calc_with(CALC_CONFIG, &[]);
    let server = Server::start(&repo);
    let merge = merged_on_server(&repo, &server);
    let seen = repo.git(&["rev-parse", "main^1"]).trim().to_string();
    let mut hook = repo
        .command(BIN, ["attest", "--pre-receive"])
        .current_dir(&server.bare)
        .env("GIT_DIR", &server.bare)
        .env("GIT_ORCHESTRATE_ALLOW_ROOT", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the hook starts");
    use std::io::Write as _;
    hook.stdin
        .take()
        .expect("stdin")
        .write_all(format!("{seen} {merge} refs/heads/main\n").as_bytes())
        .expect("the hook reads");
    let out = Run::from(hook.wait_with_output().expect("the hook ends"));
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        redact_ids(&out.stdout),
        "git-orchestrate: refused refs/heads/main <id>: main is at <id> but expected <id>: \
         another push moved it while this one was under way; fetch and push again\n"
    );
    let said = format!("is at {} but expected {}", &merge[..12], &seen[..12]);
    assert!(out.stdout.contains(&said), "{}", out.stdout);
}
