//! `attest --format dsse` (docs/integrity.md, "attest"): the verdict's in-toto statement in a
//! DSSE envelope, checked by an independent implementation: PyPI's securesystemslib (pinned,
//! in a virtualenv under the test cache; a failed install fails the test) verifies its
//! ed25519 signature over DSSE's PAE with the key's public half, and reads the payload.

use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;

use crate::oracle::{CALC_CONFIG, calc_with, finalized, main_tip, mark_done_and_merge, outside};
use crate::support::*;

/// Verifies the envelope on stdin with the ed25519 key of `public_key_file` (an OpenSSH
/// `.pub`) known as `keyid`, and prints the statement's commit.
const VERIFY: &str = r#"
import base64, json, sys
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey
keyid, pub_file = sys.argv[1], sys.argv[2]
blob = base64.b64decode(open(pub_file).read().split()[1])
key = SSlibKey(keyid, "ed25519", "ed25519", {"public": blob[-32:].hex()})
envelope = Envelope.from_dict(json.loads(sys.stdin.read()))
assert envelope.payload_type == "application/vnd.in-toto+json", envelope.payload_type
envelope.verify([key], 1)
statement = json.loads(envelope.payload)
assert statement["_type"] == "https://in-toto.io/Statement/v1"
assert statement["predicateType"] == "https://slsa.dev/verification_summary/v1"
print("verified", statement["subject"][0]["digest"]["gitCommit"],
      statement["predicate"]["verificationResult"])
"#;

/// Runs [`VERIFY`] in securesystemslib's virtualenv on `envelope`.
fn verify(python: &Path, keyid: &str, public: &Path, envelope: &str) -> Run {
    let mut cmd = Command::new(python);
    cmd.arg("-c")
        .arg(VERIFY)
        .arg(keyid)
        .arg(public)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    feed(cmd, envelope)
}

#[test]
fn a_dsse_envelope_is_verified_by_securesystemslib() {
    let Some(bin) = crate::managers::tool("securesystemslib") else {
        return;
    };
    let python = bin.join("python3");
    let repo = calc_with(CALC_CONFIG, &[]);
    finalized(&repo);
    mark_done_and_merge(&repo).expect(0);
    let merge = main_tip(&repo);
    let keys = outside(&repo, "dsse-keys");
    std::fs::create_dir_all(&keys).unwrap();
    let key = keys.join("verifier");
    let made = repo
        .command(
            "ssh-keygen",
            ["-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f"],
        )
        .arg(&key)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let public = key.with_extension("pub");
    let listed = repo
        .command("ssh-keygen", ["-lf"])
        .arg(&public)
        .output()
        .unwrap();
    let fingerprint = String::from_utf8_lossy(&listed.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();

    // Signed: one envelope line, verified by securesystemslib; the note is written as ever.
    let out = repo.run(&[
        "attest",
        "--format",
        "dsse",
        "--signing-key",
        key.to_str().unwrap(),
        &merge,
    ]);
    out.expect(0);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let envelope: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");
    assert_eq!(envelope["signatures"][0]["keyid"], fingerprint.as_str());
    let checked = verify(&python, &fingerprint, &public, &out.stdout);
    checked.expect(0);
    assert_eq!(checked.stdout, format!("verified {merge} PASSED\n"));
    let note = repo.git(&["notes", "--ref", "orchestrator-attest", "show", &merge]);
    assert!(note.contains("-----BEGIN SSH SIGNATURE-----"), "{note}");
    assert_eq!(
        note.lines().next().unwrap().as_bytes(),
        payload(&envelope).as_slice(),
        "the envelope carries the note's statement"
    );

    // Tampered with, it does not verify: the payload says FAILED, the signature is PASSED's.
    let mut forged = envelope.clone();
    let statement = String::from_utf8(payload(&envelope))
        .unwrap()
        .replace("\"PASSED\"", "\"FAILED\"");
    forged["payload"] = serde_json::Value::String(b64(statement.as_bytes()));
    let checked = verify(&python, &fingerprint, &public, &forged.to_string());
    assert_ne!(checked.code, 0, "{}", checked.stdout);
    assert!(
        checked.stderr.contains("VerificationError"),
        "{}",
        checked.stderr
    );

    // Without a key: unsigned, and securesystemslib says so.
    let out = repo.run(&["attest", "--format", "dsse", "--no-note", &merge]);
    out.expect(0);
    let unsigned: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(unsigned["signatures"], serde_json::json!([]));
    let statement: serde_json::Value = serde_json::from_slice(&payload(&unsigned)).unwrap();
    assert_eq!(
        statement["subject"][0]["digest"]["gitCommit"],
        merge.as_str()
    );
    let checked = verify(&python, &fingerprint, &public, &out.stdout);
    assert_ne!(checked.code, 0);
}

/// The envelope's payload, decoded by `base64 -d`.
fn payload(envelope: &serde_json::Value) -> Vec<u8> {
    base64_tool(&["-d"], envelope["payload"].as_str().unwrap().as_bytes())
}

/// Standard base64, for the forged payload.
fn b64(bytes: &[u8]) -> String {
    String::from_utf8(base64_tool(&["-w0"], bytes)).unwrap()
}

/// Runs coreutils' `base64 ARGS` on `input`.
fn base64_tool(args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = std::process::Command::new("base64")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(input)?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    out.stdout
}
