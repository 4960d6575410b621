//! The attestation verdicts on the board's timeline (docs/board.md, "A workflow's
//! timeline"), signed or not, with real `ssh-keygen` keys; the CI job's signed verdicts
//! (docs/ci.md, "A signed verdict from CI") written by the job's own script, pushed through
//! a real `git daemon` with the installed server hook, which takes them signed only, and
//! shown on another clone's board as "CI".

use std::path::Path;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::landing::Server;
use crate::oracle::{CALC_CONFIG, calc_with, finalized, main_tip, mark_done_and_merge};
use crate::signed::key;
use crate::support::*;

const CI_NOTES: &str = "refs/notes/orchestrator-attest-ci";

/// Main's allowed signers: `principal`'s key, a verifier for `git-orchestrate-attest`.
fn verifier_line(principal: &str, key: &Path) -> String {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    format!("{principal} namespaces=\"git-orchestrate-attest\" {public}")
}

/// The (by, source, status, signed) of each attestation on the timeline's `event` entry.
fn attestations(repo: &TestRepo, event: &str) -> Vec<Value> {
    let out = repo.run(&["board", "--timeline", "main", "--json"]);
    out.expect(0);
    let timeline = out.json();
    let entry = timeline["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["event"] == event)
        .unwrap_or_else(|| panic!("no {event} entry: {timeline}"))
        .clone();
    entry["attestations"]
        .as_array()
        .expect("attestations")
        .iter()
        .map(|a| {
            json!({"by": a["by"], "source": a["source"], "status": a["status"],
                   "signed": a["signed"], "verifier": a["verifier"]})
        })
        .collect()
}

/// A verdict signed by the verifier main lists shows as signed and PASSED; the same
/// statement with a word changed under its signature, an unsigned one and one signed by a key
/// main does not list each show as unsigned, never as a verdict. `board --timeline` says the
/// same in text.
#[test]
fn a_signed_verdict_shows_signed_and_a_forged_or_unsigned_one_never_counts() {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let mallory = key(keys.path(), "mallory");
    let repo = calc_with(
        CALC_CONFIG,
        &[(
            ".orchestrate/allowed_signers",
            &verifier_line("ci@example", &verifier),
        )],
    );
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let signing = verifier.display().to_string();
    repo.run(&["attest", "--signing-key", &signing, &merge])
        .expect(0);
    let signed_note = repo.git(&["notes", "--ref=orchestrator-attest", "show", &merge]);
    assert!(signed_note.contains("-----BEGIN SSH SIGNATURE-----"));

    // The signed statement with its verdict changed: the signature no longer holds.
    let forged = signed_note.replacen("\"PASSED\"", "\"PASSED\" ", 1);
    assert_ne!(forged, signed_note);
    repo.git(&[
        "notes",
        "--ref=remotes/origin/orchestrator-attest",
        "add",
        "-m",
        forged.trim_end(),
        &merge,
    ]);
    // Signed by a key main does not list, in the CI job's notes as fetched.
    let ci = TestRepo::clone_of(&repo.path);
    ci.git(&[
        "fetch",
        "--quiet",
        "origin",
        "+refs/orchestrator/*:refs/orchestrator/*",
    ]);
    let other = mallory.display().to_string();
    ci.run(&[
        "attest",
        "--ci-note",
        "--confine",
        "namespace",
        "--signing-key",
        &other,
        &merge,
    ])
    .expect(0);
    let by_mallory = ci.git(&["notes", "--ref=orchestrator-attest-ci", "show", &merge]);
    repo.git(&[
        "notes",
        "--ref=remotes/origin/orchestrator-attest-ci",
        "add",
        "-m",
        by_mallory.trim_end(),
        &merge,
    ]);
    // Unsigned, in this clone's CI notes.
    let unsigned = signed_note.lines().next().unwrap();
    repo.git(&[
        "notes",
        "--ref=orchestrator-attest-ci",
        "add",
        "-m",
        unsigned,
        &merge,
    ]);

    assert_eq!(
        attestations(&repo, "merge"),
        [
            json!({"by": "local", "source": "local", "status": "passed", "signed": true,
                   "verifier": "ci@example"}),
            json!({"by": "CI", "source": "local", "status": "unauthenticated", "signed": false,
                   "verifier": null}),
            json!({"by": "server", "source": "origin", "status": "unauthenticated",
                   "signed": false, "verifier": null}),
            json!({"by": "CI", "source": "origin", "status": "unauthenticated",
                   "signed": false, "verifier": null}),
        ]
    );
    let text = repo.run(&["board", "--timeline", "main"]);
    text.expect(0);
    let short = &merge[..12];
    let lines: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.contains("attestation ("))
        .collect();
    assert_eq!(
        lines,
        [
            format!("    attestation (local) on {short}: passed, signed"),
            format!("    attestation (CI, local) on {short}: unauthenticated, unsigned"),
            format!("    attestation (server, origin) on {short}: unauthenticated, unsigned"),
            format!("    attestation (CI, origin) on {short}: unauthenticated, unsigned"),
        ],
        "{}",
        text.stdout
    );
    // Why each does not count, as `verify` would say.
    let out = repo.run(&["board", "--timeline", "main", "--json"]);
    let whys: Vec<String> = out.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["attestations"].as_array().unwrap().clone())
        .filter_map(|a| a["why"].as_str().map(str::to_string))
        .collect();
    assert_eq!(whys.len(), 3, "{whys:?}");
    assert!(
        whys[0].starts_with("an unsigned PASSED verdict"),
        "{whys:?}"
    );
    assert!(
        whys[1].starts_with("its signature does not hold"),
        "{whys:?}"
    );
    assert_eq!(
        whys[2],
        "signed by a key main's allowed_signers does not list as a verifier"
    );
}

/// `script` run by bash -e in `repo` with `env`, as a CI runner runs a step.
fn run_step(repo: &TestRepo, script: &str, env: &[(&str, &str)]) -> Run {
    Run::from(
        repo.command("bash", ["-e", "-c", script])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("run bash"),
    )
}

/// The GitHub job `init --ci github` writes: the Attest step's script and the publish job's.
fn github_scripts() -> (String, String) {
    let scratch = TestRepo::new();
    scratch
        .run(&[
            "init",
            "--ci",
            "github",
            "--ci-install",
            "true",
            "--no-hooks",
        ])
        .expect(0);
    let workflow = crate::ci::yaml(&scratch.path.join(".github/workflows/git-orchestrate.yml"));
    let run_of = |job: &str, name: &str| {
        workflow["jobs"][job]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .find(|s| s["name"] == json!(name))
            .unwrap_or_else(|| panic!("no step {name} in {job}"))["run"]
            .as_str()
            .expect("a script")
            .to_string()
    };
    (
        run_of("attest", "Attest"),
        run_of("publish", "Push the signed verdicts"),
    )
}

/// The CI job, with the signing key as its secret, judges the merge a landing pushed, signs
/// the verdict under refs/notes/orchestrator-attest-ci, and its publish job pushes it: the
/// server hook takes it, and another clone's board shows it as CI, signed. Without the
/// secret the job says so and writes nothing. An unsigned note, one signed by a key main
/// does not list, and a deletion are refused, each naming why, and the server's notes stay.
#[test]
fn a_signed_ci_verdict_reaches_the_board_through_the_hook_and_an_unsigned_one_is_refused() {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let mallory = key(keys.path(), "mallory");
    let repo = calc_with(
        CALC_CONFIG,
        &[(
            ".orchestrate/allowed_signers",
            &verifier_line("ci@example", &verifier),
        )],
    );
    let server = Server::start(&repo);
    repo.git(&["remote", "add", "origin", &server.url()]);
    repo.git_run(&["push", "--quiet", "--no-verify", "origin", "main", REF])
        .expect(0);
    let before = main_tip(&repo);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    assert_eq!(server.rev(&repo, "refs/heads/main"), Some(merge.clone()));

    let (attest_script, publish_script) = github_scripts();
    let work = tempfile::tempdir().unwrap();
    let fetch = |clone: &TestRepo| {
        clone.git(&[
            "fetch",
            "--quiet",
            "--no-tags",
            "origin",
            "+refs/orchestrator/*:refs/orchestrator/*",
            "+refs/notes/orchestrator*:refs/notes/orchestrator*",
        ]);
    };
    let verdict = work.path().join("verdict.json");
    let bundle = work.path().join("ci-notes/git-orchestrate-ci-notes.bundle");
    std::fs::create_dir_all(bundle.parent().unwrap()).unwrap();
    let secret = std::fs::read_to_string(&verifier).unwrap();
    let push_env = [
        ("EVENT_IS_PR", "false"),
        ("BEFORE", before.as_str()),
        ("AFTER", merge.as_str()),
        ("VERDICT", verdict.to_str().unwrap()),
        ("CI_NOTES", bundle.to_str().unwrap()),
    ];

    // No secret: the job says so, attests, and hands nothing on; publish pushes nothing.
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    fetch(&ci);
    let out = run_step(&ci, &attest_script, &push_env);
    out.expect(0);
    assert!(
        out.stdout.contains(
            "git-orchestrate: no GIT_ORCHESTRATE_ATTEST_KEY secret: no signed verdict is written \
             or pushed"
        ),
        "{}",
        out.stdout
    );
    assert!(!bundle.exists());
    let publisher = TestRepo::clone_of(Path::new(&server.url()));
    let runner_temp = [("RUNNER_TEMP", work.path().to_str().unwrap())];
    let out = run_step(&publisher, &publish_script, &runner_temp);
    out.expect(0);
    assert!(
        out.stdout
            .contains("git-orchestrate: no signed verdict to push"),
        "{}",
        out.stdout
    );
    assert_eq!(server.rev(&repo, CI_NOTES), None);

    // With the secret: signed, handed on, pushed by the publish job, taken by the hook.
    let ci = TestRepo::clone_of(Path::new(&server.url()));
    fetch(&ci);
    let mut env = push_env.to_vec();
    env.push(("GIT_ORCHESTRATE_ATTEST_KEY", secret.trim_end()));
    let out = run_step(&ci, &attest_script, &env);
    out.expect(0);
    assert!(bundle.exists(), "{}\n{}", out.stdout, out.stderr);
    let out = run_step(&publisher, &publish_script, &runner_temp);
    out.expect(0);
    let pushed = ci.git(&["rev-parse", CI_NOTES]).trim().to_string();
    assert_eq!(server.rev(&repo, CI_NOTES), Some(pushed.clone()));

    // Another clone, level with the server by `sync`, shows it as the CI's, signed.
    let viewer = TestRepo::clone_of(Path::new(&server.url()));
    viewer.run(&["sync"]).expect(0);
    let shown = attestations(&viewer, "merge");
    assert!(
        shown.contains(&json!({"by": "CI", "source": "origin", "status": "passed",
                                "signed": true, "verifier": "ci@example"})),
        "{shown:?}"
    );

    // An unsigned note in its place, a note signed by a key main does not list, a deletion:
    // each refused, naming why; the server's CI notes stay where they were.
    let statement = ci.git(&["notes", "--ref=orchestrator-attest-ci", "show", &merge]);
    let unsigned = statement.lines().next().unwrap();
    ci.git(&[
        "notes",
        "--ref=orchestrator-attest-ci",
        "add",
        "-f",
        "-m",
        unsigned,
        &merge,
    ]);
    let out = ci.git_run(&["push", "--no-verify", "origin", CI_NOTES]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let short = &merge[..12];
    assert!(
        out.stderr.contains(&format!(
            "the CI verdict on {short} is not signed: only verdicts signed by a verifier main's \
             .orchestrate/allowed_signers lists for git-orchestrate-attest are taken"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, CI_NOTES), Some(pushed.clone()));

    let other = mallory.display().to_string();
    ci.run(&[
        "attest",
        "--ci-note",
        "--confine",
        "namespace",
        "--signing-key",
        &other,
        &merge,
    ])
    .expect(0);
    let out = ci.git_run(&["push", "--no-verify", "origin", CI_NOTES]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "the CI verdict on {short} is signed by a key main does not list"
        )),
        "{}",
        out.stderr
    );
    let out = ci.git_run(&["push", "--no-verify", "origin", &format!(":{CI_NOTES}")]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("deletes the CI job's verdicts: they are only ever added to"),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, CI_NOTES), Some(pushed));

    // A signed FAILED verdict is taken over the PASSED one; nothing signed goes back over it:
    // a commit that failed stays failed.
    let passed_line = statement.lines().next().unwrap();
    let failed_line = passed_line.replacen(
        "\"verificationResult\":\"PASSED\"",
        "\"verificationResult\":\"FAILED\"",
        1,
    );
    assert_ne!(failed_line, passed_line, "{passed_line}");
    let payload = work.path().join("failed-statement");
    std::fs::write(&payload, format!("{failed_line}\n")).unwrap();
    let signed = std::process::Command::new("ssh-keygen")
        .args(["-Y", "sign", "-q", "-n", "git-orchestrate-attest", "-f"])
        .arg(&verifier)
        .arg(&payload)
        .status()
        .unwrap();
    assert!(signed.success());
    let signature = std::fs::read_to_string(work.path().join("failed-statement.sig")).unwrap();
    ci.git(&[
        "notes",
        "--ref=orchestrator-attest-ci",
        "add",
        "-f",
        "-m",
        &format!("{failed_line}\n{signature}"),
        &merge,
    ]);
    ci.git_run(&["push", "--no-verify", "origin", CI_NOTES])
        .expect(0);
    let failed = ci.git(&["rev-parse", CI_NOTES]).trim().to_string();
    assert_eq!(server.rev(&repo, CI_NOTES), Some(failed.clone()));
    ci.git(&[
        "notes",
        "--ref=orchestrator-attest-ci",
        "add",
        "-f",
        "-m",
        statement.trim_end(),
        &merge,
    ]);
    let out = ci.git_run(&["push", "--no-verify", "origin", CI_NOTES]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "replaces the FAILED CI verdict on {short} with one that is not: a commit that \
             failed stays failed"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(server.rev(&repo, CI_NOTES), Some(failed));

    // The server's own verdict notes stay the server's: a client's push there is refused.
    let out = ci.git_run(&[
        "push",
        "--no-verify",
        "origin",
        &format!("+{CI_NOTES}:refs/notes/orchestrator-attest"),
    ]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("only the server writes attestations; no client pushes to them"),
        "{}",
        out.stderr
    );

    // --ci-note without a key is refused before anything runs.
    let out = ci.run(&["attest", "--ci-note", &merge]);
    out.expect(2);
    assert!(
        out.stderr.contains(
            "--ci-note writes under refs/notes/orchestrator-attest-ci, where only signed \
             verdicts are taken, and there is no signing key"
        ),
        "{}",
        out.stderr
    );
}

/// `--signing-key -` takes the key on stdin (the CI template pipes its secret in, so no file
/// of it exists while the PR's tests run): the note is signed by it, as with a key file.
/// Anything on stdin that is not an OpenSSH private key is refused before anything runs,
/// and no note is written.
#[test]
fn a_key_on_stdin_signs_the_verdict_and_anything_else_there_is_refused() {
    let keys = tempfile::tempdir().unwrap();
    let verifier = key(keys.path(), "verifier");
    let repo = calc_with(
        CALC_CONFIG,
        &[(
            ".orchestrate/allowed_signers",
            &verifier_line("ci@example", &verifier),
        )],
    );
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);

    let out = repo.run_with_stdin(
        &[
            "attest",
            "--ci-note",
            "--confine",
            "namespace",
            "--signing-key",
            "-",
            &merge,
        ],
        "not a key\n",
    );
    out.expect(2);
    assert!(
        out.stderr
            .contains("--signing-key -: the key given on stdin is not an OpenSSH private key"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.git_run(&["rev-parse", "--verify", "--quiet", CI_NOTES])
            .code,
        1,
        "nothing written"
    );

    let secret = std::fs::read_to_string(&verifier).unwrap();
    // Unconfined, the PR's tests could read the job's secret from its environment.
    let out = repo.run_with_stdin(
        &["attest", "--ci-note", "--signing-key", "-", &merge],
        &secret,
    );
    out.expect(2);
    assert!(
        out.stderr.contains(
            "--ci-note signs a verdict others trust, and the PR's tests would run unconfined"
        ),
        "{}",
        out.stderr
    );
    repo.run_with_stdin(
        &[
            "attest",
            "--ci-note",
            "--confine",
            "namespace",
            "--signing-key",
            "-",
            &merge,
        ],
        &secret,
    )
    .expect(0);
    let note = repo.git(&["notes", "--ref=orchestrator-attest-ci", "show", &merge]);
    assert!(note.contains("-----BEGIN SSH SIGNATURE-----"), "{note}");
    assert_eq!(
        attestations(&repo, "merge"),
        [
            json!({"by": "CI", "source": "local", "status": "passed", "signed": true,
                "verifier": "ci@example"})
        ]
    );
}
