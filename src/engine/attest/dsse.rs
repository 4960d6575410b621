//! The verdict's statement in a DSSE envelope (`attest --format dsse`, docs/integrity.md,
//! "attest"): the in-toto Statement as the payload (`application/vnd.in-toto+json`,
//! base64), signed, when a key is given, with a raw ed25519 signature over DSSE's PAE, so
//! that in-toto and SLSA tooling verifies it as it verifies any envelope. An SSH signature
//! (`ssh-keygen -Y sign`) is an SSHSIG blob over a hash of the data, which no DSSE verifier
//! reads; so the key file (`[attest] signing_key`, an OpenSSH ed25519 private key without a
//! passphrase) is read here and signs the PAE itself.

use std::path::Path;

use ed25519_dalek::Signer as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::engine::EngineError;

/// The payload type of an in-toto Statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// DSSE's pre-authentication encoding: what is signed.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64, padded unless `pad` is false (an SSH fingerprint is not).
pub fn base64(bytes: &[u8], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if pad {
            for _ in chunk.len()..3 {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 read back (whitespace skipped); `None` when it is not.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut n, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        if c == b'=' {
            break;
        }
        let v = ALPHABET.iter().position(|a| *a == c)?;
        n = (n << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits) as u8);
            n &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A reader of the SSH wire format: big-endian lengths before strings.
struct Wire<'a>(&'a [u8]);

impl<'a> Wire<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*head))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(head)
    }
}

/// An ed25519 key read from an OpenSSH private key file.
pub struct Ed25519 {
    key: ed25519_dalek::SigningKey,
}

impl Ed25519 {
    /// The key in the OpenSSH private key `text`, or why it cannot sign a DSSE envelope.
    pub fn parse(text: &str) -> Result<Ed25519, String> {
        let body = text
            .trim()
            .strip_prefix("-----BEGIN OPENSSH PRIVATE KEY-----")
            .and_then(|t| t.strip_suffix("-----END OPENSSH PRIVATE KEY-----"))
            .ok_or("it is not an OpenSSH private key (ssh-keygen -t ed25519 writes one)")?;
        let bytes = unbase64(body).ok_or("its body is not base64")?;
        let bad = || "it is not a well-formed OpenSSH private key".to_string();
        let mut wire = Wire(bytes.strip_prefix(b"openssh-key-v1\0").ok_or_else(bad)?);
        let cipher = wire.string().ok_or_else(bad)?;
        let _kdf = wire.string().ok_or_else(bad)?;
        let _kdf_options = wire.string().ok_or_else(bad)?;
        if cipher != b"none" {
            return Err(
                "it is protected by a passphrase, which git-orchestrate cannot ask for: a DSSE \
                 signature is made by the key itself"
                    .into(),
            );
        }
        if wire.u32() != Some(1) {
            return Err("it holds more than one key".into());
        }
        let _public = wire.string().ok_or_else(bad)?;
        let mut private = Wire(wire.string().ok_or_else(bad)?);
        let (Some(a), Some(b)) = (private.u32(), private.u32()) else {
            return Err(bad());
        };
        if a != b {
            return Err(bad());
        }
        let kind = private.string().ok_or_else(bad)?;
        if kind != b"ssh-ed25519" {
            return Err(format!(
                "it is a {} key; a DSSE signature here is ed25519 (ssh-keygen -t ed25519)",
                String::from_utf8_lossy(kind)
            ));
        }
        let public = private.string().ok_or_else(bad)?;
        let secret = private.string().ok_or_else(bad)?;
        let seed: [u8; 32] = secret
            .get(..32)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(bad)?;
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        if key.verifying_key().as_bytes().as_slice() != public {
            return Err("its public half is not its private key's".into());
        }
        Ok(Ed25519 { key })
    }

    /// The raw public key, 32 bytes.
    pub fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The key's SSH fingerprint (`ssh-keygen -l`): `SHA256:` and the unpadded base64 of
    /// the SHA-256 of its public key blob. It is the envelope's `keyid`.
    pub fn fingerprint(&self) -> String {
        let mut blob = Vec::new();
        for part in [b"ssh-ed25519".as_slice(), self.public().as_slice()] {
            blob.extend_from_slice(&u32::try_from(part.len()).unwrap_or(0).to_be_bytes());
            blob.extend_from_slice(part);
        }
        format!("SHA256:{}", base64(&sha2::Sha256::digest(&blob), false))
    }

    fn sign(&self, bytes: &[u8]) -> [u8; 64] {
        self.key.sign(bytes).to_bytes()
    }
}

/// Reads the signing key at `path` (bounded, a regular file only).
pub fn read_key(path: &Path) -> Result<Ed25519, EngineError> {
    let bad = |problem: String| EngineError::BadInput {
        message: format!("the signing key {}: {problem}", path.display()),
        hint: "DSSE envelopes are signed with an ed25519 OpenSSH key without a passphrase \
               (ssh-keygen -t ed25519 -N ''), kept where the agent cannot read it; or leave \
               the key out for an unsigned envelope."
            .into(),
    };
    let bytes = match crate::input::read_file(path, crate::input::KEY_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(bad("there is no such file".into())),
        Err(e) => return Err(bad(e.problem())),
    };
    let text = String::from_utf8(bytes).map_err(|_| bad("it is not text".into()))?;
    parse_key(&text, &path.display().to_string())
}

/// [`read_key`] of a key's text; `name` says where it came from.
pub fn parse_key(text: &str, name: &str) -> Result<Ed25519, EngineError> {
    Ed25519::parse(text).map_err(|problem| EngineError::BadInput {
        message: format!("the signing key {name}: {problem}"),
        hint: "DSSE envelopes are signed with an ed25519 OpenSSH key without a passphrase \
               (ssh-keygen -t ed25519 -N ''), kept where the agent cannot read it; or leave \
               the key out for an unsigned envelope."
            .into(),
    })
}

/// The DSSE envelope of `statement`: its compact JSON as the payload, and with `key` one
/// signature (`keyid` the key's SSH fingerprint, `sig` the base64 ed25519 signature over the
/// PAE).
pub fn envelope(statement: &Value, key: Option<&Ed25519>) -> Value {
    let payload = statement.to_string();
    let signatures: Vec<Value> = key
        .map(|key| {
            let sig = key.sign(&pae(PAYLOAD_TYPE, payload.as_bytes()));
            json!({"keyid": key.fingerprint(), "sig": base64(&sig, true)})
        })
        .into_iter()
        .collect();
    json!({
        "payloadType": PAYLOAD_TYPE,
        "payload": base64(payload.as_bytes(), true),
        "signatures": signatures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn pae_is_dsse_v1() {
        // The example of the DSSE specification's protocol document.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn base64_round_trips_and_pads() {
        assert_eq!(base64(b"", true), "");
        assert_eq!(base64(b"f", true), "Zg==");
        assert_eq!(base64(b"fo", true), "Zm8=");
        assert_eq!(base64(b"foo", true), "Zm9v");
        assert_eq!(base64(b"foob", false), "Zm9vYg");
        for len in 0..70 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
            assert_eq!(unbase64(&base64(&bytes, true)).unwrap(), bytes);
        }
        assert_eq!(unbase64("Zm9v!"), None);
    }

    #[test]
    fn a_key_that_is_not_an_unencrypted_ed25519_one_is_named() {
        assert!(
            Ed25519::parse("ssh-ed25519 AAAA")
                .err()
                .unwrap()
                .contains("not an OpenSSH private key")
        );
        assert!(
            Ed25519::parse(
                "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
            )
            .is_err()
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_read_or_refused(text in "\\PC{0,300}") {
            let _ = Ed25519::parse(&format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{text}\n-----END OPENSSH PRIVATE KEY-----"
            ));
        }
    }
}
